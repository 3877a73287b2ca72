/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/admission_pods_test.c - two things a podset asks of quota
 * beyond its containers' requests, scenario by scenario: the `pods`
 * resource (one unit per pod when the ClusterQueue covers `pods`: quota,
 * borrowing, preemption, adoption after a restart) and partial admission
 * (podSet minCount: the largest counts that fit, found as Kueue's
 * PodSetReducer does). Every cycle ends with que_check_invariants().
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "admission/admission.h"
#include "queues/queues.h"

#define NONE (-1)
#define U(x) ((int64_t)(x)*1000)

static que_state *st;
static struct adm_result res;
static int64_t clock_ns = 1000;

static void setup(void)
{
	struct que_flavor_spec f = {.name = "default"};

	cr_assert_eq(que_state_new(&st, NULL), CU_OK);
	cr_assert_eq(que_flavor_set(st, &f, NULL), CU_OK);
	adm_result_init(&res);
}

static void teardown(void)
{
	adm_result_dispose(&res);
	que_state_free(st);
}

TestSuite(admission_pods, .init = setup, .fini = teardown);

/* A CQ with one resource group (flavor "default") covering cpu, and pods
 * too when pods >= 0; LocalQueue ns/<name>. */
static void cq_full(const char *name, const char *cohort, int64_t cpu,
    int64_t pods, struct que_preemption pre)
{
	static const char *const covered[] = {"cpu", "pods"};
	struct que_resource_quota rq[2] = {
	    {"cpu", cpu, false, 0, false, 0},
	    {"pods", pods, false, 0, false, 0},
	};
	struct que_flavor_quotas fq = {"default", rq, pods >= 0 ? 2 : 1};
	struct que_resource_group g = {covered, pods >= 0 ? 2 : 1, &fq, 1};
	struct que_cq_spec s = {0};
	struct que_lq_spec lq = {"ns", name, name, QUE_STOP_NONE};
	cu_error err;

	s.name = name;
	s.cohort = cohort;
	s.groups = &g;
	s.n_groups = 1;
	s.preemption = pre;
	cr_assert_eq(que_cq_set(st, &s, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(que_lq_set(st, &lq, &err), CU_OK, "%s", err.msg);
}

static void cq(const char *name, const char *cohort, int64_t cpu, int64_t pods)
{
	struct que_preemption none = {0};

	cq_full(name, cohort, cpu, pods, none);
}

struct ps {
	int32_t count, min_count; /* min_count NONE = not set */
	int64_t cpu;		  /* per pod, milli */
};

static void wl_sets(const char *uid, const char *queue, int32_t prio,
    const struct ps *sets, size_t n)
{
	static const char *const names[] = {"main", "second", "third"};
	struct que_request r[3];
	struct que_podset_spec p[3];
	struct que_workload_spec w = {0};
	cu_error err;
	size_t i;

	cr_assert(n <= 3);
	memset(p, 0, sizeof(p));
	for (i = 0; i < n; i++) {
		r[i] = (struct que_request){"cpu", sets[i].cpu};
		p[i].name = names[i];
		p[i].count = sets[i].count;
		p[i].has_min_count = sets[i].min_count != NONE;
		p[i].min_count = sets[i].min_count;
		p[i].requests = &r[i];
		p[i].n_requests = 1;
	}
	w.uid = uid;
	w.ns = "ns";
	w.name = uid;
	w.queue_name = queue;
	w.priority = prio;
	w.created_ns = clock_ns++;
	w.namespace_eligible = true;
	w.podsets = p;
	w.n_podsets = n;
	cr_assert_eq(que_workload_add(st, &w, &err), CU_OK, "%s", err.msg);
}

static void wl(const char *uid, const char *queue, int32_t prio, int32_t count,
    int32_t min_count, int64_t cpu)
{
	struct ps s = {count, min_count, cpu};

	wl_sets(uid, queue, prio, &s, 1);
}

static void cycle(void)
{
	cu_error err;

	adm_result_dispose(&res);
	adm_result_init(&res);
	cr_assert_eq(
	    adm_cycle(st, clock_ns++, &res, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(que_check_invariants(st, &err), CU_OK, "%s", err.msg);
}

static const struct adm_decision *find(const char *uid)
{
	size_t i;

	for (i = 0; i < res.n; i++)
		if (strcmp(res.v[i].uid, uid) == 0)
			return &res.v[i];
	return NULL;
}

/* The usage the admission decision reports for resource in podset i;
 * NONE when the decision names no such resource. */
static int64_t use(const struct adm_decision *d, size_t i, const char *r)
{
	size_t k;

	for (k = 0; k < d->podsets[i].n_uses; k++)
		if (strcmp(d->podsets[i].uses[k].resource, r) == 0)
			return d->podsets[i].uses[k].usage;
	return NONE;
}

static const struct adm_decision *expect_admitted(const char *uid)
{
	const struct adm_decision *d = find(uid);

	cr_assert_not_null(d, "no decision for %s", uid);
	cr_assert_eq(d->kind, ADM_ADMIT, "%s: kind %d msg %s", uid, d->kind,
	    d->message ? d->message : "");
	return d;
}

static void expect_pending(const char *uid, const char *msg)
{
	const struct adm_decision *d = find(uid);

	cr_assert_not_null(d, "no decision for %s", uid);
	cr_assert_eq(d->kind, ADM_PENDING, "%s: kind %d", uid, d->kind);
	cr_assert_str_eq(d->message, msg);
}

/* Usage of (default, resource) in ClusterQueue name. */
static int64_t cq_usage(const char *name, const char *resource)
{
	struct que_cq *c = que_cq_get(st, name);
	uint32_t fr;

	cr_assert_not_null(c);
	for (fr = 0; fr < que_fr_count(st); fr++)
		if (strcmp(que_resource_name(st, que_fr_resource(st, fr)),
			resource) == 0 &&
		    strcmp(que_flavor_by_id(st, que_fr_flavor(st, fr))->name,
			"default") == 0)
			return que_node_usage(&c->node, fr);
	return 0;
}

/* ---- pods ------------------------------------------------------------ */

struct pods_case {
	const char *name;
	int64_t pods_quota; /* NONE: the CQ does not cover pods */
	int32_t counts[3];
	bool admitted[3];
	int64_t usage; /* pods usage at the end */
};

static const struct pods_case pods_cases[] = {
    {"quota 5: 3 and 2 admitted, 3 waits", U(5), {3, 3, 2}, {true, false, true},
	U(5)},
    {"quota 8: all fit", U(8), {3, 3, 2}, {true, true, true}, U(8)},
    {"quota 2: only the 2", U(2), {3, 3, 2}, {false, false, true}, U(2)},
    {"pods not covered: no pods quota, all fit", NONE, {3, 3, 2},
	{true, true, true}, 0},
};

Test(admission_pods, pods_quota_counts_one_unit_per_pod)
{
	size_t c, i, k;

	for (c = 0; c < sizeof(pods_cases) / sizeof(*pods_cases); c++) {
		const struct pods_case *pc = &pods_cases[c];
		static const char *const uids[] = {"w1", "w2", "w3"};
		bool seen[3] = {false, false, false};

		teardown();
		setup();
		cq("a", NULL, U(100), pc->pods_quota);
		for (i = 0; i < 3; i++)
			wl(uids[i], "a", 0, pc->counts[i], NONE, 100);
		for (k = 0; k < 4; k++) {
			cycle();
			for (i = 0; i < 3; i++) {
				const struct adm_decision *d = find(uids[i]);

				if (!d || d->kind != ADM_ADMIT)
					continue;
				seen[i] = true;
				cr_assert_eq(use(d, 0, "pods"),
				    pc->pods_quota == NONE ? NONE
							   : U(pc->counts[i]),
				    "%s: %s", pc->name, uids[i]);
			}
		}
		for (i = 0; i < 3; i++)
			cr_assert_eq(seen[i], pc->admitted[i], "%s: %s",
			    pc->name, uids[i]);
		cr_assert_eq(cq_usage("a", "pods"), pc->usage, "%s", pc->name);
	}
}

Test(admission_pods, pods_pending_message_names_pods)
{
	cq("a", NULL, U(100), U(5));
	wl("w1", "a", 0, 3, NONE, 100);
	wl("w2", "a", 0, 3, NONE, 100);
	cycle();
	expect_admitted("w1");
	cycle();
	expect_pending("w2",
	    "couldn't assign flavors to pod set main: insufficient unused "
	    "quota for pods in flavor default, 1 more needed");
	wl("w3", "a", 0, 6, NONE, 100);
	cycle();
	expect_pending("w3",
	    "couldn't assign flavors to pod set main: insufficient quota for "
	    "pods in flavor default, previously considered podsets requests "
	    "(0) + current podset request (6) > maximum capacity (5)");
}

Test(admission_pods, pods_are_borrowed_within_the_cohort)
{
	cq("a", "co", U(100), U(2));
	cq("b", "co", U(100), U(4));
	wl("w1", "a", 0, 5, NONE, 100);
	cycle();
	expect_admitted("w1");
	cr_assert_eq(cq_usage("a", "pods"), U(5));
	wl("w2", "b", 0, 2, NONE, 100);
	cycle();
	expect_pending("w2",
	    "couldn't assign flavors to pod set main: insufficient unused "
	    "quota for pods in flavor default, 1 more needed");
	wl("w3", "b", 0, 1, NONE, 100);
	cycle();
	expect_admitted("w3");
	cr_assert_eq(cq_usage("a", "pods") + cq_usage("b", "pods"), U(6));
}

Test(admission_pods, preemption_frees_the_victims_pods)
{
	struct que_preemption pre = {0};
	const struct adm_decision *d;
	cu_error err;

	pre.within_cluster_queue = QUE_PREEMPT_LOWER_PRIORITY;
	cq_full("a", NULL, U(100), U(4), pre);
	wl("low", "a", 0, 3, NONE, 100);
	cycle();
	expect_admitted("low");
	wl("high", "a", 10, 3, NONE, 100);
	cycle();
	d = find("high");
	cr_assert_not_null(d);
	cr_assert_eq(d->kind, ADM_PREEMPT, "kind %d: %s", d->kind,
	    d->message ? d->message : "");
	cr_assert_eq(d->n_victims, 1);
	cr_assert_str_eq(d->victims[0].uid, "low");
	cr_assert_eq(que_workload_release(st, "low", clock_ns, &err), CU_OK,
	    "%s", err.msg);
	cycle();
	expect_admitted("high");
	cr_assert_eq(cq_usage("a", "pods"), U(3));
}

Test(admission_pods, adopted_admission_keeps_its_pods_usage)
{
	struct que_wl *w;
	uint32_t frs[2];
	int32_t counts[1] = {3};
	cu_error err;

	cq("a", NULL, U(100), U(5));
	wl("w1", "a", 0, 4, 2, 100);
	w = que_workload_get(st, "w1");
	cr_assert_eq(w->podsets[0].n_req, 2, "pods slot active");
	frs[0] = que_fr_find(
	    st, que_flavor_get(st, "default")->id, w->podsets[0].req[0].res);
	frs[1] = que_fr_find(
	    st, que_flavor_get(st, "default")->id, w->podsets[0].req[1].res);
	cr_assert_eq(que_workload_adopt_counts(
			 st, "w1", "a", frs, counts, clock_ns, &err),
	    CU_OK, "%s", err.msg);
	cr_assert_eq(cq_usage("a", "pods"), U(3));
	cr_assert_eq(cq_usage("a", "cpu"), 300);
	cr_assert_eq(que_check_invariants(st, &err), CU_OK, "%s", err.msg);
	wl("w2", "a", 0, 3, NONE, 100);
	cycle();
	expect_pending("w2",
	    "couldn't assign flavors to pod set main: insufficient unused "
	    "quota for pods in flavor default, 1 more needed");
}

Test(admission_pods, adopted_admission_without_pods_flavor)
{
	struct que_wl *w;
	uint32_t frs[2];
	cu_error err;

	cq("a", NULL, U(100), U(5));
	wl("w1", "a", 0, 4, NONE, 100);
	w = que_workload_get(st, "w1");
	frs[0] = que_fr_find(
	    st, que_flavor_get(st, "default")->id, w->podsets[0].req[0].res);
	frs[1] = UINT32_MAX; /* admitted before the CQ covered pods */
	cr_assert_eq(
	    que_workload_adopt_counts(st, "w1", "a", frs, NULL, clock_ns, &err),
	    CU_OK, "%s", err.msg);
	cr_assert_eq(cq_usage("a", "pods"), 0);
	cr_assert_eq(cq_usage("a", "cpu"), 400);
	cr_assert_eq(que_check_invariants(st, &err), CU_OK, "%s", err.msg);
}

/* ---- partial admission ------------------------------------------------ */

struct partial_case {
	const char *name;
	int64_t cpu_quota, pods_quota; /* pods NONE: not covered */
	struct ps sets[2];
	size_t n_sets;
	int32_t want[2]; /* admitted counts; NONE = stays pending */
	const char *msg; /* pending message when NONE */
};

static const struct partial_case partial_cases[] = {
    {"full count fits", U(10), NONE, {{4, 2, 1000}}, 1, {4}, NULL},
    {"9 of 20 fit, minCount 5", U(9), NONE, {{20, 5, 1000}}, 1, {9}, NULL},
    {"fewer than minCount fit", U(9), NONE, {{20, 10, 1000}}, 1, {NONE},
	"couldn't assign flavors to pod set main: insufficient quota for "
	"cpu in flavor default, previously considered podsets requests (0) "
	"+ current podset request (20) > maximum capacity (9)"},
    {"no minCount: pending", U(9), NONE, {{20, NONE, 1000}}, 1, {NONE},
	"couldn't assign flavors to pod set main: insufficient quota for "
	"cpu in flavor default, previously considered podsets requests (0) "
	"+ current podset request (20) > maximum capacity (9)"},
    {"minCount above count is ignored", U(3), NONE, {{4, 9, 1000}}, 1, {NONE},
	"couldn't assign flavors to pod set main: insufficient quota for "
	"cpu in flavor default, previously considered podsets requests (0) "
	"+ current podset request (4) > maximum capacity (3)"},
    {"pods quota bounds the count", U(100), U(9), {{20, 5, 1000}}, 1, {9},
	NULL},
    {"two podsets reduced together", U(12), NONE,
	{{10, 2, 1000}, {10, 6, 1000}}, 2, {4, 7}, NULL},
    {"only one podset may shrink", U(12), NONE,
	{{10, 2, 1000}, {4, NONE, 1000}}, 2, {8, 4}, NULL},
};

Test(admission_pods, partial_admission_finds_the_largest_count)
{
	size_t c, i;

	for (c = 0; c < sizeof(partial_cases) / sizeof(*partial_cases); c++) {
		const struct partial_case *pc = &partial_cases[c];
		const struct adm_decision *d;

		teardown();
		setup();
		cq("a", NULL, pc->cpu_quota, pc->pods_quota);
		wl_sets("w", "a", 0, pc->sets, pc->n_sets);
		cycle();
		d = find("w");
		cr_assert_not_null(d, "%s", pc->name);
		if (pc->want[0] == NONE) {
			cr_assert_eq(d->kind, ADM_PENDING, "%s", pc->name);
			cr_assert_str_eq(d->message, pc->msg, "%s", pc->name);
			cr_assert_eq(cq_usage("a", "cpu"), 0, "%s", pc->name);
			continue;
		}
		cr_assert_eq(d->kind, ADM_ADMIT, "%s: %s", pc->name,
		    d->message ? d->message : "");
		cr_assert_eq(d->n_podsets, pc->n_sets);
		for (i = 0; i < pc->n_sets; i++) {
			cr_assert_eq(d->podsets[i].count, pc->want[i],
			    "%s: podset %zu count %d", pc->name, i,
			    d->podsets[i].count);
			cr_assert_eq(use(d, i, "cpu"),
			    pc->want[i] * pc->sets[i].cpu, "%s", pc->name);
			if (pc->pods_quota != NONE)
				cr_assert_eq(use(d, i, "pods"), U(pc->want[i]),
				    "%s", pc->name);
		}
		cr_assert_eq(cq_usage("a", "cpu"),
		    pc->want[0] * pc->sets[0].cpu +
			(pc->n_sets > 1 ? pc->want[1] * pc->sets[1].cpu : 0),
		    "%s", pc->name);
	}
}

Test(admission_pods, partial_admission_is_undone_on_release)
{
	struct que_wl *w;
	cu_error err;

	cq("a", NULL, U(9), NONE);
	wl("w", "a", 0, 20, 5, 1000);
	cycle();
	cr_assert_eq(expect_admitted("w")->podsets[0].count, 9);
	w = que_workload_get(st, "w");
	cr_assert_eq(w->podsets[0].count, 9);
	cr_assert_eq(w->podsets[0].req[0].total, U(9));
	cr_assert_eq(que_workload_release(st, "w", clock_ns, &err), CU_OK, "%s",
	    err.msg);
	cr_assert_eq(w->podsets[0].count, 20, "full count back");
	cr_assert_eq(w->podsets[0].req[0].total, U(20));
	cr_assert_eq(cq_usage("a", "cpu"), 0);
	/* Something else took 4 cpu: the next admission is smaller. */
	wl("other", "a", 10, 1, NONE, U(4));
	cycle();
	expect_admitted("other");
	cycle();
	cr_assert_eq(expect_admitted("w")->podsets[0].count, 5);
	cr_assert_eq(cq_usage("a", "cpu"), U(9));
}

Test(admission_pods, partial_admission_may_preempt)
{
	struct que_preemption pre = {0};
	const struct adm_decision *d;
	cu_error err;

	pre.within_cluster_queue = QUE_PREEMPT_LOWER_PRIORITY;
	cq_full("a", NULL, U(10), NONE, pre);
	wl("low", "a", 0, 1, NONE, U(4));
	cycle();
	expect_admitted("low");
	wl("mid", "a", 5, 1, NONE, U(4));
	cycle();
	expect_admitted("mid");
	/* 2 cpu free and 12 pods exceed the nominal 10 even after any
	 * preemption: the reducer finds the largest count that can preempt
	 * (10, both lower-priority workloads), as Kueue does. */
	wl("high", "a", 10, 12, 4, 1000);
	cycle();
	d = find("high");
	cr_assert_not_null(d);
	cr_assert_eq(d->kind, ADM_PREEMPT, "kind %d: %s", d->kind,
	    d->message ? d->message : "");
	cr_assert_eq(d->n_victims, 2);
	cr_assert_eq(que_workload_release(st, "low", clock_ns, &err), CU_OK,
	    "%s", err.msg);
	cr_assert_eq(que_workload_release(st, "mid", clock_ns, &err), CU_OK,
	    "%s", err.msg);
	cycle();
	cr_assert_eq(expect_admitted("high")->podsets[0].count, 10);
}

/* ---- randomized: pods and partial admission never over-admit ---------- */

static uint64_t rng;

static int64_t rnd(int64_t lo, int64_t hi)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return lo + (int64_t)((rng * 2685821657736338717ull) %
			      (uint64_t)(hi - lo + 1));
}

static int64_t potential(const char *cqname, const char *resource)
{
	struct que_cq *c = que_cq_get(st, cqname);
	uint32_t fr;

	for (fr = 0; fr < que_fr_count(st); fr++)
		if (strcmp(que_resource_name(st, que_fr_resource(st, fr)),
			resource) == 0)
			return que_node_potential_available(&c->node, fr);
	return 0;
}

static size_t n_partial, n_full; /* admissions seen */

/* Every admission names counts within [minCount, count] and usage equal
 * to per-pod requests times those counts (pods included). */
static void check_decisions(int seed)
{
	size_t i;

	for (i = 0; i < res.n; i++) {
		const struct adm_decision *d = &res.v[i];
		struct que_wl *w;

		if (d->kind != ADM_ADMIT)
			continue;
		w = que_workload_get(st, d->uid);
		cr_assert_not_null(w);
		cr_assert_eq(d->podsets[0].count, w->podsets[0].count);
		cr_assert(d->podsets[0].count >= w->podsets[0].min_count &&
			      d->podsets[0].count <= w->podsets[0].full_count,
		    "seed %d: %s count %d", seed, d->uid, d->podsets[0].count);
		if (d->podsets[0].count < w->podsets[0].full_count)
			n_partial++;
		else
			n_full++;
		cr_assert_eq(
		    use(d, 0, "pods"), U(d->podsets[0].count), "seed %d", seed);
		cr_assert_eq(use(d, 0, "cpu"),
		    w->podsets[0].req[0].per_pod * d->podsets[0].count,
		    "seed %d", seed);
	}
}

Test(admission_pods, random_streams_never_exceed_pods_or_cpu)
{
	static const char *const names[] = {"q0", "q1", "q2"};
	int seed;

	for (seed = 1; seed <= 400; seed++) {
		int n_cq = (int)rnd(1, 3), step, round, n_wl = 0, i;
		bool cohort = rnd(0, 1);
		char uid[16];

		teardown();
		setup();
		rng = 0x9e3779b97f4a7c15ull * (uint64_t)seed;
		for (i = 0; i < n_cq; i++) {
			struct que_preemption pre = {0};

			pre.within_cluster_queue =
			    (enum que_preempt_policy)rnd(0, 1);
			pre.reclaim_within_cohort =
			    (enum que_preempt_policy)rnd(0, 1);
			cq_full(names[i], cohort ? "co" : NULL, U(rnd(0, 6)),
			    U(rnd(0, 6)), pre);
		}
		for (step = 0; step < 60; step++) {
			if (rnd(0, 1) && n_wl < 60) {
				int q = (int)rnd(0, n_cq - 1);
				int32_t count = (int32_t)rnd(1, 6);
				int32_t min =
				    rnd(0, 1) ? (int32_t)rnd(0, count) : NONE;
				int64_t cpu = rnd(1, 3) * 500;
				int32_t least = min == NONE ? count : min;

				if (least * cpu <= potential(names[q], "cpu") &&
				    U(least) <= potential(names[q], "pods")) {
					snprintf(
					    uid, sizeof(uid), "w%d", n_wl++);
					wl(uid, names[q], (int32_t)rnd(0, 3),
					    count, min, cpu);
				}
			}
			cycle();
			check_decisions(seed);
			for (i = 0; i < n_wl; i++) {
				struct que_wl *w;

				snprintf(uid, sizeof(uid), "w%d", i);
				w = que_workload_get(st, uid);
				if (!w || rnd(0, 3))
					continue;
				if (w->where == QUE_WL_ADMITTED)
					cr_assert_eq(
					    que_workload_remove(st, uid, NULL),
					    CU_OK);
				else if (w->where == QUE_WL_EVICTING)
					cr_assert_eq(que_workload_release(st,
							 uid, clock_ns, NULL),
					    CU_OK);
			}
		}
		/* Drain: each fits alone at its minimum, so all get in. */
		for (round = 0; round < 400 && que_workload_count(st) > 0;
		     round++) {
			cycle();
			check_decisions(seed);
			for (i = 0; i < n_wl; i++) {
				struct que_wl *w;

				snprintf(uid, sizeof(uid), "w%d", i);
				w = que_workload_get(st, uid);
				if (w && w->where == QUE_WL_ADMITTED)
					cr_assert_eq(
					    que_workload_remove(st, uid, NULL),
					    CU_OK);
				else if (w && w->where == QUE_WL_EVICTING)
					cr_assert_eq(que_workload_release(st,
							 uid, clock_ns, NULL),
					    CU_OK);
			}
		}
		cr_assert_eq(que_workload_count(st), 0,
		    "seed %d: %zu never admitted", seed,
		    que_workload_count(st));
	}
	cr_assert(n_partial > 100 && n_full > 100, "partial %zu, full %zu",
	    n_partial, n_full);
}

Test(admission_pods, pods_coverage_follows_the_cluster_queue)
{
	struct que_wl *w;
	cu_error err;

	/* Pending while the CQ does not cover pods: no pods request. */
	cq("a", NULL, U(1), NONE);
	wl("w1", "a", 0, 4, NONE, 1000);
	cycle();
	w = que_workload_get(st, "w1");
	cr_assert_eq(w->podsets[0].n_req, 1);
	/* The CQ now covers pods (and more cpu): w1 asks for its pods. */
	cq("a", NULL, U(10), U(3));
	cycle();
	cr_assert_eq(w->podsets[0].n_req, 2);
	expect_pending("w1",
	    "couldn't assign flavors to pod set main: insufficient quota for "
	    "pods in flavor default, previously considered podsets requests "
	    "(0) + current podset request (4) > maximum capacity (3)");
	cq("a", NULL, U(10), U(4));
	cycle();
	cr_assert_eq(use(expect_admitted("w1"), 0, "pods"), U(4));
	/* Pods dropped from the CQ while w1 runs: w1 keeps what it was
	 * admitted with until it ends (the checker would report the quota
	 * lowered under its usage, as for any resource), nothing is left
	 * behind, and a new workload asks for no pods. */
	cq("a", NULL, U(10), NONE);
	wl("w2", "a", 0, 4, NONE, 1000);
	cr_assert_eq(que_rebuild(st, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(w->podsets[0].n_req, 2);
	cr_assert_eq(cq_usage("a", "pods"), U(4));
	cr_assert_eq(que_workload_remove(st, "w1", &err), CU_OK);
	cr_assert_eq(cq_usage("a", "pods"), 0);
	cycle();
	cr_assert_eq(use(expect_admitted("w2"), 0, "pods"), NONE);
	cr_assert_eq(que_workload_get(st, "w2")->podsets[0].n_req, 1);
}

Test(admission_pods, admitted_counts_can_be_set_after_adoption)
{
	struct que_wl *w;
	uint32_t frs[2];
	int32_t counts[1] = {2}, bad[1] = {5};
	cu_error err;

	cq("a", NULL, U(100), U(5));
	wl("w1", "a", 0, 4, 2, 1000);
	w = que_workload_get(st, "w1");
	frs[0] = que_fr_find(
	    st, que_flavor_get(st, "default")->id, w->podsets[0].req[0].res);
	frs[1] = que_fr_find(
	    st, que_flavor_get(st, "default")->id, w->podsets[0].req[1].res);
	cr_assert_eq(que_workload_set_counts(st, "w1", counts, &err), CU_EINVAL,
	    "not holding quota yet");
	cr_assert_eq(que_workload_adopt(st, "w1", "a", frs, clock_ns, &err),
	    CU_OK, "%s", err.msg);
	cr_assert_eq(cq_usage("a", "pods"), U(4), "the ledger's adoption");
	cr_assert_eq(que_workload_set_counts(st, "w1", bad, &err), CU_EINVAL);
	cr_assert_eq(que_workload_set_counts(st, "w1", counts, &err), CU_OK,
	    "%s", err.msg);
	cr_assert_eq(cq_usage("a", "pods"), U(2));
	cr_assert_eq(cq_usage("a", "cpu"), U(2));
	cr_assert_eq(que_check_invariants(st, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(que_workload_release(st, "w1", clock_ns, &err), CU_OK);
	cr_assert_eq(cq_usage("a", "pods"), 0);
	cr_assert_eq(w->podsets[0].count, 4);
}
