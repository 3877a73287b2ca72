#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# tests/bench/run.sh - `make bench`: every benchmark, one after another,
# each program started here and stopped here. Results go to
# build/bench/ and a summary to stdout. Never part of `make test`.
set -eu
: "${CUEUE_BIN:?}"
out=${BENCH_OUT:-build/bench}
mkdir -p "$out"
tmp=$(mktemp -d)
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

echo "== codec: Workload JSON -> typed model -> JSON"
"$CUEUE_BIN/cueue-bench" codec tests/data/golden/workload.json \
	| tee "$out/codec.txt"

echo "== admission engine: 1,000 ClusterQueues, 50,000 pending Workloads"
"$CUEUE_BIN/cueue-bench" engine | tee "$out/engine.txt"
echo "   targets: >= 50,000 decisions/s, <= 1 KiB per pending Workload,"
echo "            a full cycle over all heads <= 10 ms"

echo "== store: ledger commits per second (synchronous=FULL, this disk)"
mkdir -p "$out/store-tmp"
"$CUEUE_BIN/cueue-bench" store "$out/store-tmp" 2 | tee "$out/store.txt"
rmdir "$out/store-tmp" 2>/dev/null || true

echo "== apiserver: creates+patches with 10 watchers (server on CPU 0)"
taskset -c 0 "$CUEUE_BIN/cueue-apiserver" --listen 127.0.0.1:0 \
	--kubeconfig-out "$tmp/kc" --token benchtoken \
	--watch-history 1000 >"$out/apiserver.log" 2>&1 &
pids="$pids $!"
i=0
while [ ! -s "$tmp/kc" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
url=$(sed -n 's/.*server: "\(.*\)"/\1/p' "$tmp/kc")
echo "-- throughput (as fast as the server answers, 16 writes in flight)"
CUEUE_BENCH_TOKEN=benchtoken taskset -c 1 "$CUEUE_BIN/cueue-bench" \
	apiserver --url "$url" --writes 30000 --creates 10000 --watchers 10 \
	| tee "$out/apiserver-throughput.txt"
echo "-- delivery latency at a steady 2500 writes/s (half the target rate)"
CUEUE_BENCH_TOKEN=benchtoken taskset -c 1 "$CUEUE_BIN/cueue-bench" \
	apiserver --url "$url" --writes 20000 --creates 10000 --watchers 10 \
	--rate 2500 --prefix paced | tee "$out/apiserver-latency.txt"
echo "   targets: >= 5000 writes/s; p99 watch delivery <= 10 ms"

echo "== controller: 1,000 Jobs through cueue-controller (simulated Jobs)"
# Starts its own cueue-apiserver (TLS, --simulate jobs) and controller;
# results in controller.txt, controller.json, controller-access-log.json.
BENCH_OUT="$out" CUEUE_BIN="$CUEUE_BIN" timeout 300 \
	/usr/bin/python3 tests/bench/controller_bench.py
echo "   targets: 3 API writes per admitted Job (Workload create + one"
echo "            status write + one Job patch), events reported apart"
