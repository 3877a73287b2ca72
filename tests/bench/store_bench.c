/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/bench/store_bench.c - how many ledger commits per second the
 * controller can afford, for loop turns that record 1, 10 and 100
 * admission decisions. Every commit is synchronous=FULL (an fsync of the
 * WAL), so the numbers are dominated by the disk and say how much batching
 * a turn buys.
 *
 * `cueue-bench store [DIR [SECONDS]]` (part of `make bench`).
 *
 * DIR (default $TMPDIR or /tmp) must be on the disk the ledger will live
 * on: tmpfs makes fsync free and the numbers meaningless. SECONDS (default
 * 2) is the run time per batch size. Each batch size gets a fresh ledger
 * in a private directory that is removed afterwards.
 *
 * Output, one line per batch size (this line: the development VM, ext4
 * on virtio, -O2):
 *   batch=100 commits=56 commits/s=55.1 decisions/s=5505 mean_ms=18.16
 *   max_ms=31.58
 * There, batch=1 gave ~150 commits/s (fsync-bound, ~6.6 ms each) and each
 * extra decision in a turn costs ~0.1 ms, so batching a turn is what makes
 * FULL affordable.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/cu.h"
#include "store/store.h"
#include "tests/bench/bench.h"

static const store_resource bench_res[] = {
    {.resource = "cpu", .flavor = "on-demand", .milli = 4000},
    {.resource = "memory", .flavor = "on-demand", .milli = 8589934592000},
    {.resource = "nvidia.com/gpu", .flavor = "a100", .milli = 1000},
};
static const store_podset bench_ps[] = {
    {.name = "driver", .count = 1, .n_resources = 2, .resources = bench_res},
    {.name = "workers", .count = 8, .n_resources = 3, .resources = bench_res},
};

/* One loop turn: begin, `batch` decisions, commit. */
static int bench_turn(store *s, int batch, int64_t turn, cu_error *err)
{
	char uid[64];
	int rc = store_begin(s, err);

	for (int i = 0; rc == CU_OK && i < batch; i++) {
		store_decision d = {
		    .uid = uid,
		    .ns = "bench",
		    .name = uid,
		    .cluster_queue = (i & 1) ? "cq-a" : "cq-b",
		    .state = STORE_RESERVED,
		    .decided_ns = turn,
		    .n_podsets = 2,
		    .podsets = bench_ps,
		};

		snprintf(uid, sizeof(uid), "w-%lld-%d", (long long)turn, i);
		rc = store_decision_put(s, &d, NULL, err);
	}
	if (rc == CU_OK)
		return store_commit(s, err);
	store_rollback(s);
	return rc;
}

static int bench_one(const char *base, int batch, double seconds)
{
	char dir[512], path[600];
	int64_t start, end, worst = 0, turns = 0;
	cu_error err = {0};
	store *s = NULL;
	int rc;

	snprintf(dir, sizeof(dir), "%s/cueue-bench-XXXXXX", base);
	if (mkdtemp(dir) == NULL) {
		perror(dir);
		return 1;
	}
	snprintf(path, sizeof(path), "%s/ledger.db", dir);
	rc = store_open(&s, path, &err);
	if (rc != CU_OK) {
		fprintf(stderr, "%s\n", err.msg);
		bench_rm_tree(dir);
		return 1;
	}
	start = cu_time_mono_ns();
	end = start + (int64_t)(seconds * 1e9);
	for (int64_t now = start; now < end; turns++) {
		int64_t t0 = now;

		rc = bench_turn(s, batch, turns, &err);
		if (rc != CU_OK)
			break;
		now = cu_time_mono_ns();
		if (now - t0 > worst)
			worst = now - t0;
	}
	if (rc == CU_OK) {
		double el = (double)(cu_time_mono_ns() - start) / 1e9;

		printf("batch=%d commits=%lld commits/s=%.1f decisions/s=%.0f "
		       "mean_ms=%.2f max_ms=%.2f\n",
		    batch, (long long)turns, (double)turns / el,
		    (double)turns * batch / el, el * 1e3 / (double)turns,
		    (double)worst / 1e6);
	} else {
		fprintf(stderr, "batch=%d: %s\n", batch, err.msg);
	}
	store_close(s);
	bench_rm_tree(dir);
	return rc == CU_OK ? 0 : 1;
}

int bench_store_main(int argc, char **argv);

int bench_store_main(int argc, char **argv)
{
	static const int batches[] = {1, 10, 100};
	const char *env = getenv("TMPDIR");
	const char *base = argc > 1			   ? argv[1]
			   : env != NULL && env[0] != '\0' ? env
							   : "/tmp";
	double seconds = argc > 2 ? strtod(argv[2], NULL) : 2.0;
	int fail = 0;

	if (argc > 3 || seconds <= 0) {
		fprintf(stderr, "usage: %s [DIR [SECONDS]]\n", argv[0]);
		return 2;
	}
	for (size_t i = 0; i < sizeof(batches) / sizeof(batches[0]); i++)
		fail |= bench_one(base, batches[i], seconds);
	return fail;
}
