#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# tests/bench/run.sh - `make bench`: every benchmark, one after another,
# each program started here and stopped here. Results go to
# build/bench/ and a summary to stdout. Never part of `make test`.
#
#   1. micro-benchmarks: codec, watch-event decoding, admission engine,
#      topology placement, ledger, apiserver;
#   2. Kueue's scheduler-perf baseline through cueue-controller at
#      clientConnection QPS 50 / burst 100 (Kueue's setting), then
#      unthrottled (cueue-bench sched; Kueue's inputs are kept in
#      tests/bench/configs/<shape>/, or KUEUE_PERF_DIR names a
#      directory of the same layout, such as Kueue's own
#      test/performance/scheduler/configs);
#   3. 1,000 Jobs through the controller with simulated Jobs.
#
# BENCH_ONLY=large runs Kueue's large-scale config instead
# (`make bench-large`).
set -eu
: "${CUEUE_BIN:?}"
# The Python harness, cuetest, is the package in tests/pylib/.
export PYTHONPATH="$(cd "$(dirname "$0")/../pylib" && pwd)${PYTHONPATH:+:$PYTHONPATH}"
out=${BENCH_OUT:-build/bench}
perf=${KUEUE_PERF_DIR:-tests/bench/configs}
if [ ! -f "$perf/baseline/generator.yaml" ]; then
	echo "bench: Kueue's scheduler-perf inputs not found in $perf" >&2
	echo "       (KUEUE_PERF_DIR must hold baseline/ and large-scale/" >&2
	echo "       with generator.yaml and rangespec.yaml)" >&2
	exit 2
fi

# sched LABEL CONFIG TARGETS [cueue-bench sched options]
sched() {
	label=$1 cfg=$2 tgt=$3
	shift 3
	"$CUEUE_BIN/cueue-bench" sched --label "$label" \
		--generator "$perf/$cfg/generator.yaml" \
		--rangespec "$perf/$cfg/rangespec.yaml" \
		--targets "tests/bench/targets/$tgt.yaml" \
		--bin "$CUEUE_BIN" --out "$out/sched-$label" "$@" \
		| tee "$out/sched-$label.txt"
}

if [ "${BENCH_ONLY:-}" = large ]; then
	mkdir -p "$out"
	echo "== Kueue scheduler-perf large-scale, unthrottled"
	sched large-scale-unthrottled large-scale large-scale-unthrottled \
		--qps 0 --timeout 1800
	exit 0
fi
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

echo "== typed vs raw: reads through api/ types beside JSON walks"
"$CUEUE_BIN/cueue-bench" typed | tee "$out/typed.txt"

echo "== watch events: decoded whole vs. lean (managedFields dropped first)"
"$CUEUE_BIN/cueue-bench" watch | tee "$out/watch.txt"

echo "== admission engine: 1,000 ClusterQueues, 50,000 pending Workloads"
"$CUEUE_BIN/cueue-bench" engine | tee "$out/engine.txt"
echo "   targets: >= 50,000 decisions/s, <= 1 KiB per pending Workload,"
echo "            a full cycle over all heads <= 10 ms"

echo "== admission engine with fair sharing: 1,000 ClusterQueues in a"
echo "   3-level cohort tree, 50,000 pending Workloads"
"$CUEUE_BIN/cueue-bench" engine fair | tee "$out/engine-fair.txt"
echo "   target: within 2x of the classical case"

echo "== topology-aware placement: 1,000 Nodes in 3 levels, 10,000 podSets"
"$CUEUE_BIN/cueue-bench" tas | tee "$out/tas.txt"
echo "   target: >= 5,000 decisions/s"

echo "== admission cycles with topology-aware placement: 1,000 Nodes in"
echo "   3 levels, 10,000 pending Workloads in 100 ClusterQueues"
"$CUEUE_BIN/cueue-bench" tas cycle | tee "$out/tas-cycle.txt"
echo "   target: >= 5,000 decisions/s, cycle p99 <= 20 ms"

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

echo "== Kueue scheduler-perf baseline, clientConnection QPS 50 / burst 100"
sched baseline-qps50 baseline baseline-qps50 --qps 50 --burst 100 \
	--timeout 900
echo "== Kueue scheduler-perf baseline, unthrottled"
sched baseline-unthrottled baseline baseline-unthrottled --qps 0 \
	--timeout 600

echo "== controller: 1,000 Jobs through cueue-controller (simulated Jobs)"
# Starts its own cueue-apiserver (TLS, --simulate jobs) and controller;
# results in controller.txt, controller.json, controller-access-log.json.
BENCH_OUT="$out" CUEUE_BIN="$CUEUE_BIN" timeout 900 \
	/usr/bin/python3 tests/bench/controller_bench.py
echo "   targets: 3 API writes per admitted Job (Workload create + one"
echo "            status write + one Job patch), events reported apart"

echo
echo "== summary: Kueue's scheduler-perf shapes (details above; summary.json,"
echo "   summary.yaml, CSVs and PNGs in $out/sched-*/)"
for l in baseline-qps50 baseline-unthrottled; do
	echo "-- $l"
	sed -n 's/^   \(wall\|controller:\|writes per\)/   \1/p' "$out/sched-$l.txt"
	grep -E '^  (ok|FAIL) ' "$out/sched-$l.txt" || true
done
