#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# tests/lint/size.sh - the size rule of docs/conventions.md, run by make
# lint: no product source file over 1,200 lines, no function over 120 lines
# (from the line of its opening brace, in column 0, to its closing one),
# and no internal name (prefix__name) used outside its own folder.
# tests/lint/size-allow.txt lists what is still over a limit, one per line
# ("file PATH" or "func PATH NAME"): those are reported, not failed, and an
# entry that is no longer needed fails, so the list only shrinks.
set -u

MAX_FILE=1200
MAX_FUNC=120
allow=tests/lint/size-allow.txt
MODULES="lib api cel namespaces queues admission tas webhook store reconcile controller cli"
fail=0
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT

for m in $MODULES; do
	for f in "$m"/*.c; do
		[ -e "$f" ] || continue
		n=$(wc -l <"$f")
		[ "$n" -gt $MAX_FILE ] && echo "file $f $n"
		awk -v F="$f" -v MAX=$MAX_FUNC '
			/^[A-Za-z_].*\(/ { sig = $0; sigline = NR }
			/^\{/ { start = NR; name = sig
				sub(/\(.*/, "", name); n = split(name, w, /[ *]+/)
				name = w[n] }
			/^\}/ && start { len = NR - start + 1
				if (len > MAX) print "func " F " " name " " len
				start = 0 }' "$f"
	done
done >"$tmp"

while read -r kind path rest; do
	case $kind in
	file) key="file $path" ;;
	func) key="func $path ${rest% *}" ;;
	esac
	if grep -qxF "$key" "$allow" 2>/dev/null; then
		echo "  size: $key (${rest##* } lines) still over the limit (allowed for now)"
	else
		echo "$path: $kind ${rest} lines: over the limit (docs/conventions.md, Size)"
		fail=1
	fi
done <"$tmp"

while read -r line; do
	case $line in "" | "#"*) continue ;; esac
	set -- $line
	case $1 in
	file) grep -q "^file $2 " "$tmp" ;;
	func) grep -q "^func $2 $3 " "$tmp" ;;
	*) false ;;
	esac || {
		echo "$allow: '$line' is within the limit now: remove it"
		fail=1
	}
done <"$allow"

# Internal names: prefix__name is private to the folder that declares it
# (a function or variable at the start of a line, or a macro).
files=$(for m in $MODULES; do ls "$m"/*.[ch] 2>/dev/null; done)
# shellcheck disable=SC2086
awk 'FNR == 1 { dir = FILENAME; sub(/\/.*/, "", dir) }
	/^[a-z].*[a-z]+(_[a-z]+)?__[a-z0-9_]+[ (\[;]/ || /^#define [a-z]+(_[a-z]+)?__/ {
		if (match($0, /[a-z]+(_[a-z]+)?__[a-z0-9_]+/))
			print substr($0, RSTART, RLENGTH), dir }' $files |
	sort -u >"$tmp.defs"
# shellcheck disable=SC2086
grep -noE '\<[a-z]+(_[a-z]+)?__[a-z0-9_]+' $files |
	awk -F: 'NR == FNR { home[$1 " " $2] = 1; owner[$1] = owner[$1] " " $2; next }
		{ dir = $1; sub(/\/.*/, "", dir); sym = $3
		  if (sym in owner && !((sym " " dir) in home))
			print $1 ":" $2 ": " sym " is internal to" owner[sym] "/ (docs/conventions.md)" }' \
		FS=' ' "$tmp.defs" FS=: - >"$tmp"
rm -f "$tmp.defs"
if [ -s "$tmp" ]; then
	cat "$tmp"
	fail=1
fi
[ $fail -eq 0 ] && echo "  size: files <= $MAX_FILE lines, functions <= $MAX_FUNC, internal names kept inside"
exit $fail
