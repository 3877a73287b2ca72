/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/bench/tas_cycle_bench.c - `cueue-bench tas cycle`: scheduling
 * cycles of the admission engine with topology-aware placement, the
 * shape of the TAS acceptance: 1,000 Nodes in 3 levels (10 blocks x 10
 * racks x 10 hosts, 8 cpu each), 10,000 pending Workloads in 100
 * ClusterQueues (quota never binds: the topology does), podSets of 1..16
 * one-cpu pods, required rack / preferred rack / unconstrained in turn.
 * The topology hook places through tas/ as the controller's does (check
 * places, assume places and charges); the 500 oldest admissions are
 * held, older ones finish, so the tree stays partly full. Reports
 * decisions/s and the p50/p99 latency of one cycle.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admission/admission.h"
#include "lib/cu.h"
#include "tests/bench/bench.h"
#include "queues/queues.h"
#include "tas/tas.h"

int bench_tas_cycle(void);

#define N_CQS 100
#define PER_CQ 100
#define N_WL (N_CQS * PER_CQ)
#define HELD 500
#define MAX_CYCLES 20000

static const struct tas_amount one_cpu[] = {{"cpu", 1000}};

struct bctx {
	struct tas_tree *t;
	struct api_topology_assignment a[N_WL]; /* charged while held */
	bool charged[N_WL];
};

static int index_of(const struct que_wl *wl)
{
	return (int)strtol(wl->name + 2, NULL, 10);
}

static struct tas_request request_of(const struct que_wl *wl, int32_t count)
{
	struct tas_request r = {(enum tas_mode)(1 + index_of(wl) % 3), "rack",
	    count, one_cpu, 1, NULL, 0, NULL, NULL, 0};

	return r;
}

static int hook_check(void *ctx, const struct que_wl *wl, size_t podset,
    const struct que_flavor *f, int32_t count, char *msg, size_t len)
{
	struct bctx *b = ctx;
	struct tas_request r = request_of(wl, count);
	struct api_topology_assignment a;
	cu_error err;
	int rc;

	(void)podset;
	(void)f;
	rc = tas_place(b->t, &r, &a, msg, len, &err);
	if (rc == CU_OK)
		api_topology_assignment_dispose(&a);
	return rc == CU_OK ? 0 : 1;
}

static int hook_assume(void *ctx, const struct que_wl *wl,
    const char *const *flavors, const int32_t *counts, char *msg, size_t len)
{
	struct bctx *b = ctx;
	struct tas_request r = request_of(wl, counts[0]);
	int i = index_of(wl);
	cu_error err;

	(void)flavors;
	if (tas_place(b->t, &r, &b->a[i], msg, len, &err) != CU_OK)
		return 1;
	if (tas_tree_assignment_usage(b->t, &b->a[i], one_cpu, 1, 1, &err)) {
		api_topology_assignment_dispose(&b->a[i]);
		return 1;
	}
	b->charged[i] = true;
	return 0;
}

static void die(const char *what, const cu_error *err)
{
	fprintf(stderr, "cueue-bench tas cycle: %s: %s\n", what, err->msg);
	exit(1);
}

/* Finish held Workload i: its quota and its topology charge go. */
static void finish(que_state *st, struct bctx *b, int i)
{
	char name[32];
	cu_error err;

	snprintf(name, sizeof(name), "w-%06d", i);
	if (que_workload_remove(st, name, &err))
		die("finish", &err);
	if (b->charged[i] && tas_tree_assignment_usage(
				 b->t, &b->a[i], one_cpu, 1, -1, &err) != CU_OK)
		die("release", &err);
	api_topology_assignment_dispose(&b->a[i]);
	b->charged[i] = false;
	que_tas_capacity_changed(st);
}

int bench_tas_cycle(void)
{
	static const char *const covered[] = {"cpu"};
	static int64_t lat[MAX_CYCLES];
	static int held[HELD];
	static struct bctx b;
	const char *levels[] = {"block", "rack", TAS_HOSTNAME_LABEL};
	struct tas_amount alloc[] = {{"cpu", 8000}, {"pods", 110}};
	struct que_flavor_spec fs = {.name = "tas"};
	struct que_tas_hook hook = {&b, hook_check, hook_assume, NULL};
	size_t n_held = 0, oldest = 0, ncycles = 0, decisions = 0, admitted = 0;
	int64_t total = 0, now = 1;
	que_state *st;
	cu_error err;
	char name[32];
	int i, j, k, r, h;

	if (tas_tree_new("bench", levels, 3, &b.t, &err) != CU_OK)
		die("tree", &err);
	tas_tree_set_mixed_profile(b.t, true);
	for (i = 0; i < 10; i++)
		for (r = 0; r < 10; r++)
			for (h = 0; h < 10; h++) {
				struct api_strmap l = {NULL, 0};
				char bv[16], rv[32], hv[48];

				snprintf(bv, sizeof(bv), "b%d", i);
				snprintf(rv, sizeof(rv), "b%d-r%d", i, r);
				snprintf(
				    hv, sizeof(hv), "b%d-r%d-h%d", i, r, h);
				if (api_strmap_set(&l, "block", bv, &err) ||
				    api_strmap_set(&l, "rack", rv, &err) ||
				    api_strmap_set(
					&l, TAS_HOSTNAME_LABEL, hv, &err) ||
				    tas_tree_node_set(
					b.t, hv, &l, alloc, 2, true, &err))
					die("node", &err);
				api_strmap_dispose(&l);
			}
	if (que_state_new(&st, &err) || que_flavor_set(st, &fs, &err))
		die("setup", &err);
	que_set_tas_hook(st, &hook);
	for (i = 0; i < N_CQS; i++) {
		struct que_resource_quota rq = {
		    "cpu", 100000000, false, 0, false, 0};
		struct que_flavor_quotas fq = {"tas", &rq, 1};
		struct que_resource_group g = {covered, 1, &fq, 1};
		struct que_cq_spec s = {0};
		struct que_lq_spec lq = {.ns = "ns", .stop = QUE_STOP_NONE};

		snprintf(name, sizeof(name), "cq-%d", i);
		s.name = name;
		s.groups = &g;
		s.n_groups = 1;
		lq.name = name;
		lq.cluster_queue = name;
		if (que_cq_set(st, &s, &err) || que_lq_set(st, &lq, &err))
			die("cq", &err);
	}
	if (que_rebuild(st, &err))
		die("rebuild", &err);
	srand(42);
	for (i = 0; i < N_CQS; i++)
		for (j = 0; j < PER_CQ; j++) {
			struct que_request rq = {"cpu", 1000};
			struct que_podset_spec ps = {.count = 1 + rand() % 16,
			    .requests = &rq,
			    .n_requests = 1};
			struct que_workload_spec w = {0};
			char wname[32], q[32];

			snprintf(
			    wname, sizeof(wname), "w-%06d", i * PER_CQ + j);
			snprintf(q, sizeof(q), "cq-%d", i);
			w.uid = wname;
			w.ns = "ns";
			w.name = wname;
			w.queue_name = q;
			w.priority = 0;
			w.created_ns = now++;
			w.namespace_eligible = true;
			w.podsets = &ps;
			w.n_podsets = 1;
			if (que_workload_add(st, &w, &err))
				die("workload", &err);
		}
	while (que_workload_count(st) > n_held && ncycles < MAX_CYCLES) {
		struct adm_result res;
		int64_t t0;
		size_t n;

		adm_result_init(&res);
		t0 = cu_time_mono_ns();
		if (adm_cycle(st, now++, &res, &err))
			die("cycle", &err);
		lat[ncycles] = cu_time_mono_ns() - t0;
		total += lat[ncycles++];
		decisions += res.n;
		admitted += res.admitted;
		for (n = 0; n < res.n; n++) {
			if (res.v[n].kind != ADM_ADMIT)
				continue;
			k = (int)strtol(res.v[n].uid + 2, NULL, 10);
			if (n_held == HELD) {
				finish(st, &b, held[oldest]);
				held[oldest] = k;
				oldest = (oldest + 1) % HELD;
			} else {
				held[n_held++] = k;
			}
		}
		if (res.admitted == 0 && n_held > 0) {
			/* nothing fits: the oldest admission finishes */
			finish(st, &b, held[oldest]);
			held[oldest] = held[--n_held];
			if (oldest >= n_held)
				oldest = 0;
		}
		adm_result_dispose(&res);
	}
	qsort(lat, ncycles, sizeof(lat[0]), bench_cmp_i64);
	printf("tas cycle: %d Workloads in %d ClusterQueues on 1000 nodes "
	       "(3 levels): %zu cycles, %zu decisions, %zu admitted: %.0f "
	       "decisions/s, cycle p50 %.3f ms, p99 %.3f ms\n",
	    N_WL, N_CQS, ncycles, decisions, admitted,
	    total ? (double)decisions * 1e9 / (double)total : 0.0,
	    ncycles ? (double)lat[ncycles / 2] / 1e6 : 0.0,
	    ncycles ? (double)lat[ncycles * 99 / 100] / 1e6 : 0.0);
	for (i = 0; i < N_WL; i++)
		if (b.charged[i])
			api_topology_assignment_dispose(&b.a[i]);
	que_state_free(st);
	tas_tree_free(b.t);
	return 0;
}
