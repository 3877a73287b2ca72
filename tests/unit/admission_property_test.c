/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/admission_property_test.c - randomized property test of the
 * admission engine with a fixed-seed PRNG: thousands of random cohort
 * trees, ClusterQueues (quotas, limits, policies, queueing strategies)
 * and workload streams. Properties: the invariant checker never fires;
 * no victim is named twice; and every workload that fits alone in its
 * empty ClusterQueue is admitted once the others finish.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "admission/admission.h"
#include "queues/queues.h"

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64*: deterministic across platforms. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

static int64_t rint_(int64_t lo, int64_t hi)
{
	return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

#define MAX_CQ 6
#define MAX_WL 40

struct world {
	que_state *st;
	int n_cq;
	char cq_names[MAX_CQ][16];
	int64_t potential[MAX_CQ]; /* per CQ, flavor f0, with zero usage */
	int n_wl;
	char uids[MAX_WL][16];
	int wl_cq[MAX_WL];
};

static void build(struct world *w)
{
	static const char *const covered[] = {"cpu"};
	static const char *const cohorts[] = {"c0", "c1", "c2"};
	struct que_flavor_spec f0 = {.name = "f0"}, f1 = {.name = "f1"};
	cu_error err;
	int i, n_cohorts = (int)rint_(0, 3);
	bool hier = n_cohorts >= 2 && rint_(0, 1);

	cr_assert_eq(que_state_new(&w->st, NULL), CU_OK);
	cr_assert_eq(que_flavor_set(w->st, &f0, NULL), CU_OK);
	cr_assert_eq(que_flavor_set(w->st, &f1, NULL), CU_OK);
	if (hier) {
		struct que_resource_quota rq = {
		    "cpu", rint_(0, 4) * 1000, false, 0, false, 0};
		struct que_flavor_quotas fq = {"f0", &rq, 1};
		struct que_resource_group g = {covered, 1, &fq, 1};
		struct que_cohort_spec c0 = {"c0", NULL, &g, 1};
		struct que_cohort_spec c1 = {"c1", "c0", NULL, 0};

		cr_assert_eq(
		    que_cohort_set(w->st, &c0, &err), CU_OK, "%s", err.msg);
		cr_assert_eq(
		    que_cohort_set(w->st, &c1, &err), CU_OK, "%s", err.msg);
	}
	w->n_cq = (int)rint_(1, MAX_CQ);
	for (i = 0; i < w->n_cq; i++) {
		const char *cohort =
		    n_cohorts ? cohorts[rint_(0, n_cohorts - 1)] : NULL;
		struct que_resource_quota rq[2];
		struct que_flavor_quotas fq[2];
		struct que_resource_group g = {covered, 1, fq, 2};
		struct que_cq_spec s = {0};
		struct que_lq_spec lq = {"ns", NULL, NULL, QUE_STOP_NONE};
		int k;

		snprintf(w->cq_names[i], sizeof(w->cq_names[i]), "q%d", i);
		for (k = 0; k < 2; k++) {
			rq[k] = (struct que_resource_quota){
			    "cpu", rint_(0, 6) * 1000, false, 0, false, 0};
			if (cohort && rint_(0, 2) == 0) {
				rq[k].has_borrowing_limit = true;
				rq[k].borrowing_limit = rint_(0, 4) * 500;
			}
			if (cohort && rint_(0, 2) == 0) {
				rq[k].has_lending_limit = true;
				rq[k].lending_limit = rint_(0, 4) * 500;
			}
			fq[k] = (struct que_flavor_quotas){
			    k ? "f1" : "f0", &rq[k], 1};
		}
		s.name = w->cq_names[i];
		s.cohort = cohort;
		s.groups = &g;
		s.n_groups = 1;
		s.queueing =
		    rint_(0, 1) ? QUE_STRICT_FIFO : QUE_BEST_EFFORT_FIFO;
		s.preemption.within_cluster_queue =
		    (enum que_preempt_policy)rint_(0, 2);
		s.preemption.reclaim_within_cohort =
		    rint_(0, 1) ? QUE_PREEMPT_ANY
				: (enum que_preempt_policy)rint_(0, 1);
		if (s.preemption.reclaim_within_cohort != QUE_PREEMPT_NEVER &&
		    rint_(0, 1)) {
			s.preemption.borrow_within_cohort =
			    QUE_PREEMPT_LOWER_PRIORITY;
			s.preemption.has_max_priority_threshold = rint_(0, 1);
			s.preemption.max_priority_threshold =
			    (int32_t)rint_(0, 3);
		}
		s.when_can_borrow = (enum que_fungibility)rint_(0, 2);
		s.when_can_preempt = (enum que_fungibility)rint_(0, 2);
		cr_assert_eq(que_cq_set(w->st, &s, &err), CU_OK, "%s", err.msg);
		lq.name = w->cq_names[i];
		lq.cluster_queue = w->cq_names[i];
		cr_assert_eq(
		    que_lq_set(w->st, &lq, &err), CU_OK, "%s", err.msg);
	}
	cr_assert_eq(que_rebuild(w->st, &err), CU_OK, "%s", err.msg);
}

/* The most this workload could get in its CQ with nothing else running:
 * the larger of the two flavors' potential availability. */
static int64_t alone_capacity(struct world *w, int cq)
{
	struct que_cq *q = que_cq_get(w->st, w->cq_names[cq]);
	int64_t best = 0;
	int k;

	for (k = 0; k < 2; k++) {
		const struct que_flavor *f =
		    que_flavor_get(w->st, k ? "f1" : "f0");
		uint32_t fr = que_fr_find(w->st, f->id, 0);
		int64_t p = que_node_potential_available(&q->node, fr);

		if (p > best)
			best = p;
	}
	return best;
}

static void add_workload(struct world *w, int64_t now)
{
	int cq = (int)rint_(0, w->n_cq - 1);
	int64_t cap = alone_capacity(w, cq);
	struct que_request r = {"cpu", 0};
	struct que_podset_spec ps = {
	    .count = 1, .requests = &r, .n_requests = 1};
	struct que_workload_spec s = {0};
	int i = w->n_wl;
	cu_error err;

	if (i >= MAX_WL || cap <= 0)
		return;
	r.per_pod = rint_(1, cap / 500) * 500;
	snprintf(w->uids[i], sizeof(w->uids[i]), "w%d", i);
	s.uid = w->uids[i];
	s.ns = "ns";
	s.name = w->uids[i];
	s.queue_name = w->cq_names[cq];
	s.priority = (int32_t)rint_(0, 4);
	s.created_ns = now;
	s.namespace_eligible = true;
	s.podsets = &ps;
	s.n_podsets = 1;
	cr_assert_eq(que_workload_add(w->st, &s, &err), CU_OK, "%s", err.msg);
	w->wl_cq[i] = cq;
	w->n_wl++;
}

static void run_cycle(struct world *w, int64_t now, int seed)
{
	struct adm_result res;
	cu_error err;
	size_t i, j;

	adm_result_init(&res);
	cr_assert_eq(adm_cycle(w->st, now, &res, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(que_check_invariants(w->st, &err), CU_OK, "seed %d: %s",
	    seed, err.msg);
	for (i = 0; i < res.n; i++) {
		const struct adm_decision *d = &res.v[i];

		for (j = 0; j < d->n_victims; j++) {
			struct que_wl *v =
			    que_workload_get(w->st, d->victims[j].uid);

			cr_assert_not_null(v);
			cr_assert_eq(v->where, QUE_WL_EVICTING,
			    "seed %d: victim %s not evicting", seed,
			    d->victims[j].uid);
		}
	}
	adm_result_dispose(&res);
}

/* Finish or release each quota holder with probability 1/p. */
static void churn(struct world *w, int64_t now, int p)
{
	int i;

	for (i = 0; i < w->n_wl; i++) {
		struct que_wl *x = que_workload_get(w->st, w->uids[i]);

		if (!x || rint_(1, p) != 1)
			continue;
		if (x->where == QUE_WL_ADMITTED)
			cr_assert_eq(
			    que_workload_remove(w->st, w->uids[i], NULL),
			    CU_OK);
		else if (x->where == QUE_WL_EVICTING)
			cr_assert_eq(
			    que_workload_release(w->st, w->uids[i], now, NULL),
			    CU_OK);
	}
}

Test(admission_property, random_streams_keep_invariants_and_drain)
{
	int seed;

	for (seed = 1; seed <= 2000; seed++) {
		struct world w;
		int64_t now = 1;
		int step, round;

		memset(&w, 0, sizeof(w));
		rng_state = 0x9e3779b97f4a7c15ull * (uint64_t)seed;
		build(&w);
		for (step = 0; step < 30; step++, now++) {
			int k, adds = (int)rint_(0, 3);

			for (k = 0; k < adds; k++)
				add_workload(&w, now);
			run_cycle(&w, now, seed);
			churn(&w, now, 3);
		}
		/* Drain: everything fits alone, so once the others finish
		 * every workload must get in. */
		for (round = 0;
		     round < 4 * MAX_WL + 20 && que_workload_count(w.st) > 0;
		     round++, now++) {
			run_cycle(&w, now, seed);
			churn(&w, now, 1);
		}
		cr_assert_eq(que_workload_count(w.st), 0,
		    "seed %d: %zu workloads never admitted", seed,
		    que_workload_count(w.st));
		que_state_free(w.st);
	}
}
