#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# tests/integration/run.sh - run every integration test: the work is in
# run.py beside this file (INT_JOBS tests at a time, longest first, then a
# scan of every started program's log for sanitizer reports).
#
# Environment: CUEUE_BIN (programs), CUEUE_LOGS (log directory),
# SAN_PATTERN (regex of sanitizer reports), ONLY (substring filter),
# INT_JOBS (tests at a time, default 2).
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${CUEUE_BIN:?}" "${CUEUE_LOGS:?}"
exec /usr/bin/python3 "$here/run.py"
