#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# scripts/compat-table.sh - rewrite the table of README.md's "Kueue
# compatibility" section from `cueue-controller --compat-table` (the
# table in controller/compat.c). tests/integration/t_compat_table.py
# fails when the two differ; run this after changing the code's table.
#
#   scripts/compat-table.sh [PATH/TO/cueue-controller]
set -eu
cd "$(dirname "$0")/.."
ctl=${1:-build/debug/bin/cueue-controller}
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
"$ctl" --compat-table | grep '^|' >"$tmp"
awk -v tbl="$tmp" '
	/^## Kueue compatibility$/ { insec = 1 }
	insec && /^## / && !/^## Kueue compatibility$/ { insec = 0 }
	insec && /^\|/ {
		if (!done) { while ((getline l < tbl) > 0) print l; done = 1 }
		next
	}
	{ print }
' README.md >README.md.new
mv README.md.new README.md
