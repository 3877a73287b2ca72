#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# tests/integration/run.sh - run every integration test (t_*.sh with sh,
# t_*.py with Debian's /usr/bin/python3, which has python3-kubernetes),
# each against programs it starts itself on 127.0.0.1, then scan the logs
# of every program they started for sanitizer reports.
#
# Environment: CUEUE_BIN (programs), CUEUE_LOGS (log directory),
# SAN_PATTERN (regex of sanitizer reports), ONLY (substring filter).
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${CUEUE_BIN:?}" "${CUEUE_LOGS:?}"
mkdir -p "$CUEUE_LOGS"
# The harness, cuetest, is the package in tests/pylib/.
export CUEUE_BIN CUEUE_LOGS PYTHONPATH="$here/../pylib${PYTHONPATH:+:$PYTHONPATH}"
pass=0
fail=0
failed=""
for t in "$here"/t_*.sh "$here"/t_*.py; do
	[ -e "$t" ] || continue
	name=$(basename "$t")
	case "$name" in *"${ONLY:-}"*) ;; *) continue ;; esac
	log="$CUEUE_LOGS/int-$name.log"
	export CUEUE_TEST_NAME="${name%.*}"
	start=$(date +%s)
	case "$t" in
	*.py) timeout 600 /usr/bin/python3 "$t" >"$log" 2>&1 ;;
	*) timeout 600 sh "$t" >"$log" 2>&1 ;;
	esac
	rc=$?
	secs=$(($(date +%s) - start))
	san=""
	if [ -n "${SAN_PATTERN:-}" ] && grep -qE "$SAN_PATTERN" \
	    "$CUEUE_LOGS/$CUEUE_TEST_NAME".*.stderr 2>/dev/null; then
		san=" (sanitizer report in $CUEUE_LOGS/$CUEUE_TEST_NAME.*.stderr)"
		rc=1
	fi
	# Cases a test could not run here (say, a kubectl build this
	# machine lacks) are reported, never counted as passed.
	skip=$(sed -n 's/^[0-9]* passed, [0-9]* failed, \([0-9]*\) skipped$/\1/p' "$log" | tail -n 1)
	if [ $rc -eq 0 ]; then
		pass=$((pass + 1))
		echo "  ok   $name (${secs}s${skip:+, $skip skipped})"
	else
		fail=$((fail + 1))
		failed="$failed $name"
		echo "  FAIL $name (exit $rc, ${secs}s)$san"
		tail -n 60 "$log" | sed 's/^/    | /'
	fi
done
echo "integration: $pass passed, $fail failed"
[ $fail -eq 0 ]
