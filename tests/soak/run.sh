#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# tests/soak/run.sh - `make soak`: crash, leader-failover and API-fault
# soaks (tests/soak/soak.py; the work is in tests/pylib/cuetest/
# crashsoak.py), bounded to 20 minutes, ten rounds of t_ledger_recheck's
# leadership alternations (SOAK_ONLY=recheck runs only those) and
# t_auth_flood with 300 connections per port (SOAK_ONLY=authflood) and
# t_config_churn with 10,000 flavors (SOAK_ONLY=churn) against programs
# in $CUEUE_BIN, then a scan of every log
# for sanitizer reports.
#
# Environment: CUEUE_BIN (programs), CUEUE_LOGS (log directory),
# SAN_PATTERN (regex of sanitizer reports); SOAK_* as in soak.py.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${CUEUE_BIN:?}" "${CUEUE_LOGS:?}"
mkdir -p "$CUEUE_LOGS"
rm -f "$CUEUE_LOGS"/soak.*.stderr
export CUEUE_BIN CUEUE_LOGS CUEUE_TEST_NAME=soak
# The harness, cuetest, is the package in tests/pylib/.
export PYTHONPATH="$here/../pylib${PYTHONPATH:+:$PYTHONPATH}"
timeout 1200 /usr/bin/python3 "$here/soak.py"
rc=$?
[ $rc -eq 124 ] && echo "soak: over the 20 minute bound"
# The long form of make test's ledger re-check property case: ten
# leadership alternations under write failures instead of four.
if [ -z "${SOAK_ONLY:-}" ] || case ",$SOAK_ONLY," in *,recheck,*) true ;; *) false ;; esac; then
	CUEUE_TEST_NAME=soak RECHECK_ROUNDS=${SOAK_RECHECK_ROUNDS:-10} \
	    CASE=leadership-alternations-under-write-failures timeout 600 \
	    /usr/bin/python3 "$here/../integration/t_ledger_recheck.py" || rc=1
fi
# The long form of make test's authentication flood: 300 connections on
# each of the metrics and visibility ports.
if [ -z "${SOAK_ONLY:-}" ] || case ",$SOAK_ONLY," in *,authflood,*) true ;; *) false ;; esac; then
	CUEUE_TEST_NAME=soak AUTH_FLOOD_PER_PORT=300 timeout 600 \
	    /usr/bin/python3 "$here/../integration/t_auth_flood.py" || rc=1
fi
# The long form of make test's configuration churn: 10,000 flavors.
if [ -z "${SOAK_ONLY:-}" ] || case ",$SOAK_ONLY," in *,churn,*) true ;; *) false ;; esac; then
	CUEUE_TEST_NAME=soak CHURN_FLAVORS=10000 timeout 900 \
	    /usr/bin/python3 "$here/../integration/t_config_churn.py" || rc=1
fi
if [ -n "${SAN_PATTERN:-}" ] && grep -lE "$SAN_PATTERN" \
    "$CUEUE_LOGS"/soak.*.stderr 2>/dev/null; then
	echo "soak: sanitizer report in the files above"
	rc=1
fi
[ $rc -eq 0 ] && echo "soak: passed" || echo "soak: FAILED"
exit $rc
