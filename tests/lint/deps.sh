#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# tests/lint/deps.sh - the module dependency rule, checked on the
# #include lines of every module/*.c and module/*.h (run by make lint).
#
# A module may include its own headers, the modules listed for it below
# and, of third-party libraries, only the headers listed for it (libc and
# POSIX headers are always allowed). Fails, naming file:line, on any
# other include. Run from the top of the tree.

set -uf # -f: "*" in the tables is a word, not a glob

# module: project modules it may include
deps() {
	case $1 in
	lib) echo "" ;;
	api) echo "lib" ;;
	cel) echo "api lib" ;;
	namespaces) echo "api lib" ;;
	queues) echo "lib" ;;
	tas) echo "api lib" ;;
	admission) echo "queues namespaces lib" ;;
	webhook) echo "namespaces api lib" ;;
	store) echo "lib" ;;
	reconcile) echo "admission queues namespaces cel api lib" ;;
	controller) echo "*" ;;
	cli) echo "api lib" ;;
	*) return 1 ;;
	esac
}

# module: third-party headers it may include (a prefix of the path in <>)
libs() {
	case $1 in
	lib) echo "" ;;
	# OpenSSL in api/ only for the SHA-1 of Kueue's Workload names.
	# zlib in api/ only for the packed texts of informer caches.
	api) echo "jansson.h yaml.h curl/ ev.h openssl/evp.h zlib.h" ;;
	namespaces | queues | tas | admission) echo "jansson.h" ;;
	cel | webhook | reconcile) echo "jansson.h" ;;
	store) echo "sqlite3.h" ;;
	controller) echo "*" ;;
	# the kubectl plugin: the api/ client on its own libev loop
	cli) echo "jansson.h ev.h" ;;
	esac
}

# Third-party headers: anything in <> that is not libc or POSIX.
THIRD='^(jansson|yaml|curl/|ev\.h|openssl/|sqlite3|microhttpd|criterion|zlib)'

MODULES=${MODULES:-"lib api cel namespaces queues tas admission webhook store reconcile controller cli"}
fail=0
for m in $MODULES; do
	allowed=$(deps "$m") || {
		echo "deps.sh: module $m has no rule" >&2
		fail=1
		continue
	}
	ok_libs=$(libs "$m")
	for f in $(find "$m" -maxdepth 1 -name "*.[ch]" | sort); do
		[ -e "$f" ] || continue
		grep -n '^[[:space:]]*#[[:space:]]*include' "$f" |
			while IFS= read -r line; do
				n=${line%%:*}
				inc=$(printf '%s\n' "${line#*:}" |
					sed -n 's/.*include[[:space:]]*["<]\([^">]*\)[">].*/\1/p')
				case ${line#*:} in
				*'"'*)
					dir=${inc%%/*}
					[ "$dir" = "$inc" ] && dir=$m
					[ "$dir" = "$m" ] && continue
					case " $allowed " in
					*" * "* | *" $dir "*) continue ;;
					esac
					echo "$f:$n: $m/ may not include $inc (allowed: ${allowed:-none})"
					;;
				*)
					printf '%s\n' "$inc" | grep -Eq "$THIRD" || continue
					for l in $ok_libs; do
						[ "$l" = "*" ] && continue 2
						case $inc in "$l"*) continue 2 ;; esac
					done
					echo "$f:$n: $m/ may not include <$inc> (allowed: ${ok_libs:-libc only})"
					;;
				esac
			done
	done
done | {
	bad=0
	while IFS= read -r msg; do
		echo "$msg"
		bad=1
	done
	exit $bad
} || fail=1

if [ $fail -ne 0 ]; then
	echo "deps: forbidden include (tests/lint/deps.sh has the table)"
	exit 1
fi
echo "  deps: clean"
