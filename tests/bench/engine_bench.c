/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/bench/engine_bench.c - throughput and latency of the
 * admission engine at Kueue's large-scale shape: 1,000 ClusterQueues in
 * 10 cohorts (nominal 20 CPU, borrowingLimit 100, reclaimWithinCohort
 * Any, withinClusterQueue LowerPriority) and 50,000 pending Workloads
 * (per CQ: 35 x 1 CPU prio 50, 11 x 5 CPU prio 100, 4 x 20 CPU prio 200).
 * Every cycle, the workloads admitted by the previous cycle finish and
 * preempted victims release their quota. Reports decisions/s, cycle
 * latency p50/p99 and heap bytes per pending workload.
 *
 * `cueue-bench engine fair` runs the same workloads with fair sharing on
 * (both preemption strategies) in a 3-level cohort tree: one root, 10
 * cohorts under it, 10 under each of those, 10 ClusterQueues in each leaf
 * cohort, weights alternating 1 and 2.
 *
 * Run it with `cueue-bench engine` (part of `make bench`).
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admission/admission.h"
#include "lib/cu.h"
#include "tests/bench/bench.h"
#include "queues/queues.h"

#define N_COHORTS 10
#define N_CQS 1000
#define PER_CQ 50
#define MAX_CYCLES 100000

static void die(const char *what, const cu_error *err)
{
	fprintf(stderr, "engine_bench: %s: %s\n", what, err->msg);
	exit(1);
}

int bench_engine_main(int argc, char **argv);

int bench_engine_main(int argc, char **argv)
{
	bool fair = argc > 1 && strcmp(argv[1], "fair") == 0;
	static const char *const covered[] = {"cpu"};
	static int64_t lat[MAX_CYCLES];
	struct que_flavor_spec f = {.name = "default"};
	que_state *st;
	cu_error err;
	char name[64], uid[64];
	size_t before, after, decisions = 0, admitted = 0, ncycles = 0;
	char **prev = NULL;
	size_t n_prev = 0;
	int64_t total_ns = 0, now = 1;
	int i, j;

	if (que_state_new(&st, &err) || que_flavor_set(st, &f, &err))
		die("setup", &err);
	if (fair) {
		struct que_fair_config fc = {true, 2,
		    {QUE_FAIR_LE_FINAL_SHARE, QUE_FAIR_LT_INITIAL_SHARE}};

		que_fair_sharing_set(st, &fc);
		for (i = 0; i < 110; i++) {
			char cname[32], parent[32];
			struct que_cohort_spec cs = {cname, NULL, NULL, 0};

			snprintf(cname, sizeof(cname), "cohort-%d", i);
			snprintf(
			    parent, sizeof(parent), "%s", i < 10 ? "root" : "");
			if (i >= 10)
				snprintf(parent, sizeof(parent), "cohort-%d",
				    (i - 10) / 10);
			cs.parent = parent;
			if (que_cohort_set(st, &cs, &err))
				die("cohort", &err);
		}
	}
	for (i = 0; i < N_CQS; i++) {
		struct que_resource_quota rq = {
		    "cpu", 20000, true, 100000, false, 0};
		struct que_flavor_quotas fq = {"default", &rq, 1};
		struct que_resource_group g = {covered, 1, &fq, 1};
		struct que_cq_spec s = {0};
		struct que_lq_spec lq = {.ns = "ns", .stop = QUE_STOP_NONE};
		char cohort[32];

		snprintf(name, sizeof(name), "cq-%d", i);
		snprintf(cohort, sizeof(cohort), "cohort-%d",
		    fair ? 10 + i / 10 : i % N_COHORTS);
		if (fair) {
			s.has_fair_weight = true;
			s.fair_weight = i % 2 ? 2000 : 1000;
		}
		s.name = name;
		s.cohort = cohort;
		s.groups = &g;
		s.n_groups = 1;
		s.preemption.reclaim_within_cohort = QUE_PREEMPT_ANY;
		s.preemption.within_cluster_queue = QUE_PREEMPT_LOWER_PRIORITY;
		lq.name = name;
		lq.cluster_queue = name;
		if (que_cq_set(st, &s, &err) || que_lq_set(st, &lq, &err))
			die("cq", &err);
	}
	if (que_rebuild(st, &err))
		die("rebuild", &err);
	before = mallinfo2().uordblks;
	for (i = 0; i < N_CQS; i++) {
		for (j = 0; j < PER_CQ; j++) {
			struct que_request r = {"cpu", 1000};
			struct que_podset_spec ps = {
			    .count = 1, .requests = &r, .n_requests = 1};
			struct que_workload_spec w = {0};
			int32_t prio = 50;

			if (j >= 35 && j < 46) {
				r.per_pod = 5000;
				prio = 100;
			} else if (j >= 46) {
				r.per_pod = 20000;
				prio = 200;
			}
			snprintf(name, sizeof(name), "cq-%d", i);
			snprintf(uid, sizeof(uid),
			    "0f8fad5b-d9cb-469f-a165-%012d", i * PER_CQ + j);
			w.uid = uid;
			w.ns = "ns";
			w.name = uid;
			w.queue_name = name;
			w.priority = prio;
			w.created_ns = now++;
			w.namespace_eligible = true;
			w.podsets = &ps;
			w.n_podsets = 1;
			if (que_workload_add(st, &w, &err))
				die("workload", &err);
		}
	}
	after = mallinfo2().uordblks;
	while (que_workload_count(st) > 0 && ncycles < MAX_CYCLES) {
		struct adm_result res;
		int64_t t0, t1;
		size_t k;

		/* Last cycle's admissions finish now. */
		for (k = 0; k < n_prev; k++) {
			if (que_workload_remove(st, prev[k], &err))
				die("finish", &err);
			cu_free(prev[k]);
		}
		n_prev = 0;
		adm_result_init(&res);
		t0 = cu_time_mono_ns();
		if (adm_cycle(st, now++, &res, &err))
			die("cycle", &err);
		t1 = cu_time_mono_ns();
		lat[ncycles++] = t1 - t0;
		total_ns += t1 - t0;
		decisions += res.n;
		admitted += res.admitted;
		prev = cu_realloc(prev, (res.n + 1) * sizeof(*prev));
		for (k = 0; k < res.n; k++) {
			size_t v;

			if (res.v[k].kind == ADM_ADMIT)
				prev[n_prev++] = cu_strdup(res.v[k].uid);
			for (v = 0; v < res.v[k].n_victims; v++)
				if (que_workload_release(
					st, res.v[k].victims[v].uid, now, &err))
					die("release", &err);
		}
		adm_result_dispose(&res);
		if (res.n == 0 && n_prev == 0 && ncycles > 10 &&
		    que_workload_count(st) > 0) {
			/* Nothing moves: report rather than spin. */
			break;
		}
	}
	qsort(lat, ncycles, sizeof(lat[0]), bench_cmp_i64);
	printf("%s\n", fair ? "fair sharing, 3-level cohort tree"
			    : "classical, 10 cohorts");
	printf("cycles: %zu, decisions: %zu, admitted: %zu, left: %zu\n",
	    ncycles, decisions, admitted, que_workload_count(st));
	printf("decisions/s: %.0f\n",
	    total_ns ? decisions * 1e9 / (double)total_ns : 0.0);
	printf("admissions/s: %.0f\n",
	    total_ns ? admitted * 1e9 / (double)total_ns : 0.0);
	printf("cycle latency p50: %.3f ms, p99: %.3f ms, max: %.3f ms\n",
	    ncycles ? lat[ncycles / 2] / 1e6 : 0.0,
	    ncycles ? lat[ncycles * 99 / 100] / 1e6 : 0.0,
	    ncycles ? lat[ncycles - 1] / 1e6 : 0.0);
	printf("bytes per pending workload: %.0f\n",
	    (double)(after - before) / (N_CQS * PER_CQ));
	for (size_t k = 0; k < n_prev; k++)
		cu_free(prev[k]);
	cu_free(prev);
	que_state_free(st);
	return 0;
}
