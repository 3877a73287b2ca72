#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# scripts/check-refs.sh - part of `make lint`: fail when a file of the
# repository points at documents that do not exist in a clone: the team's
# desk beside the repository (a parent-relative "shared" folder), a
# DESIGN.md, or the research notes (notes/<name>.md, or a note named bare
# such as "kubernetes-api.md"). The design and the facts the code relies
# on live in docs/ (docs/architecture.md, docs/apiserver.md,
# docs/jobset.md); point there instead.
#
# The files checked are the tracked ones (git ls-files), or every file
# under the current directory outside .git and build/ when this is not a
# git checkout.
set -eu

self=scripts/check-refs.sh
# The parent-relative desk and seeds, DESIGN.md, notes/<x>.md, "notes <x>",
# and the notes by their bare names; a name after a path
# ("docs/jobset.md", "./jobset.md") is a file of ours.
pattern='\.\./shared|DESIGN\.md|(^|[^A-Za-z0-9_./-])notes/[A-Za-z0-9_-]+(\.md)?|\.\./seeds/|(?<![A-Za-z0-9_./-])(kubernetes-api|kubectl-here|c-style-and-stack|kueue|jobset)\.md\b|\bnotes (kubernetes-api|kubectl-here|c-style|kueue|jobset)'

list_files() {
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git ls-files -z
	else
		find . -path ./.git -prune -o -path ./build -prune -o \
			-type f -print0 | sed -z 's|^\./||'
	fi
}

# One grep over every file: "path:line:text" for each hit.
hits=$(list_files | grep -zv "^$self\$" |
	xargs -0 grep -nIP -- "$pattern" 2>/dev/null || true)
if [ -n "$hits" ]; then
	printf '%s\n' "$hits"
	echo "references to files outside the repository (the desk beside" \
		"it, DESIGN.md, notes/): point at docs/ instead" >&2
	exit 1
fi
echo "  refs: no references outside the repository"
