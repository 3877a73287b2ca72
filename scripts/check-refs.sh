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
# It also checks the map of the house: section 2.3 of docs/architecture.md
# ("Every file, once") names every source file of every module folder
# exactly once, and nothing else, so a new, renamed or deleted file is
# (un)listed there in the same change.
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

# ---- the map of the house: docs/architecture.md section 2.3 -------------
map=docs/architecture.md
modules="lib api cel namespaces queues admission tas webhook store reconcile controller cli"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for m in $modules; do
	list_files | tr '\0' '\n' | grep -E "^$m/[^/]+\.(c|h|def)$" || true
done | sort >"$tmp/tree"
awk '/^### 2\.3 /{on=1; next} on && /^##/{exit}
	on && /^\| `[^`]+` \|/{ split($0, a, "`"); print a[2] }' "$map" |
	sort >"$tmp/listed"
bad=0
for f in $(uniq -d "$tmp/listed"); do
	echo "$map 2.3: $f is listed more than once"
	bad=1
done
for f in $(comm -23 "$tmp/tree" "$tmp/listed"); do
	echo "$map 2.3: $f is not listed (add a row saying what it holds)"
	bad=1
done
for f in $(sort -u "$tmp/listed" | comm -13 "$tmp/tree" -); do
	echo "$map 2.3: $f is listed but is not a file of a module"
	bad=1
done
[ $bad -eq 0 ] || exit 1
echo "  map: $(wc -l <"$tmp/tree") module files, each listed once in $map 2.3"
