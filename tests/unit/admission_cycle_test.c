/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/admission_cycle_test.c - scheduling-cycle scenarios of the
 * admission engine: borrowing and lending, hierarchical cohorts, flavor
 * fallback and fungibility, taints and node affinity, ExceedsMaxQuota,
 * StrictFIFO vs BestEffortFIFO, preemption policies, reclamation,
 * borrowWithinCohort thresholds, root-cause-first pending reasons and
 * several admissions per cycle without over-admission. Every scenario
 * ends with que_check_invariants().
 */
#include <criterion/criterion.h>
#include <string.h>

#include "admission/admission.h"
#include "queues/queues.h"

#define NOLIM (-1)
#define CPU(x) ((int64_t)(x)*1000)

static que_state *st;
static struct adm_result res;
static int64_t clock_ns = 1000;

static void setup(void)
{
	cr_assert_eq(que_state_new(&st, NULL), CU_OK);
	adm_result_init(&res);
}

static void teardown(void)
{
	adm_result_dispose(&res);
	que_state_free(st);
}

static void flavor(const char *name)
{
	struct que_flavor_spec f = {.name = name};

	cr_assert_eq(que_flavor_set(st, &f, NULL), CU_OK);
}

struct fq {
	const char *flavor;
	int64_t nominal, borrowing_limit, lending_limit; /* NOLIM = unset */
};

struct cq_opts {
	const char *cohort;
	enum que_queueing queueing;
	struct que_preemption preemption;
	enum que_fungibility when_can_borrow, when_can_preempt;
	enum que_stop stop;
	struct fq fl[3];
};

/* A CQ covering "cpu" with the given flavors, and LocalQueue ns/<name>. */
static void cq(const char *name, const struct cq_opts *o)
{
	static const char *const covered[] = {"cpu"};
	struct que_resource_quota rq[3];
	struct que_flavor_quotas fqs[3];
	struct que_resource_group g = {covered, 1, fqs, 0};
	struct que_cq_spec s = {0};
	struct que_lq_spec lq = {"ns", name, name, QUE_STOP_NONE};
	cu_error err;
	int i;

	for (i = 0; i < 3 && o->fl[i].flavor; i++) {
		rq[i] = (struct que_resource_quota){"cpu", o->fl[i].nominal,
		    o->fl[i].borrowing_limit != NOLIM, o->fl[i].borrowing_limit,
		    o->fl[i].lending_limit != NOLIM, o->fl[i].lending_limit};
		fqs[i] = (struct que_flavor_quotas){o->fl[i].flavor, &rq[i], 1};
		g.n_flavors++;
	}
	s.name = name;
	s.cohort = o->cohort;
	s.groups = &g;
	s.n_groups = 1;
	s.queueing = o->queueing;
	s.preemption = o->preemption;
	s.when_can_borrow = o->when_can_borrow;
	s.when_can_preempt = o->when_can_preempt;
	s.stop = o->stop;
	cr_assert_eq(que_cq_set(st, &s, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(que_lq_set(st, &lq, &err), CU_OK, "%s", err.msg);
}

static void cq_simple(const char *name, const char *cohort, int64_t nominal,
    int64_t bl, int64_t ll)
{
	struct cq_opts o = {.cohort = cohort};

	o.fl[0] = (struct fq){"default", nominal, bl, ll};
	cq(name, &o);
}

static void wl_full(const char *uid, const char *queue, int32_t prio,
    int64_t milli, const struct que_podset_spec *tmpl)
{
	struct que_request r = {"cpu", milli};
	struct que_podset_spec ps = {0};
	struct que_workload_spec w = {0};
	cu_error err;

	if (tmpl)
		ps = *tmpl;
	ps.name = "main";
	ps.count = 1;
	ps.requests = &r;
	ps.n_requests = 1;
	w.uid = uid;
	w.ns = "ns";
	w.name = uid;
	w.queue_name = queue;
	w.priority = prio;
	w.created_ns = clock_ns++;
	w.namespace_eligible = true;
	w.podsets = &ps;
	w.n_podsets = 1;
	cr_assert_eq(que_workload_add(st, &w, &err), CU_OK, "%s", err.msg);
}

static void wl(const char *uid, const char *queue, int32_t prio, int64_t milli)
{
	wl_full(uid, queue, prio, milli, NULL);
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

static void expect_admitted(const char *uid, const char *flv)
{
	const struct adm_decision *d = find(uid);

	cr_assert_not_null(d, "no decision for %s", uid);
	cr_assert_eq(d->kind, ADM_ADMIT, "%s: kind %d msg %s", uid, d->kind,
	    d->message ? d->message : "");
	cr_assert_str_eq(d->podsets[0].uses[0].flavor, flv);
}

static void expect_pending(const char *uid, enum adm_reason r, const char *msg)
{
	const struct adm_decision *d = find(uid);

	cr_assert_not_null(d, "no decision for %s", uid);
	cr_assert_eq(d->kind, ADM_PENDING, "%s: kind %d", uid, d->kind);
	cr_assert_str_eq(adm_reason_string(d->reason), adm_reason_string(r),
	    "%s: %s", uid, d->message);
	if (msg)
		cr_assert_str_eq(d->message, msg);
}

static void finish(const char *uid)
{
	cr_assert_eq(que_workload_remove(st, uid, NULL), CU_OK);
}

TestSuite(admission_cycle, .init = setup, .fini = teardown);

Test(admission_cycle, admits_what_fits_and_keeps_the_rest_waiting)
{
	flavor("default");
	cq_simple("a", NULL, CPU(4), NOLIM, NOLIM);
	wl("w1", "a", 0, CPU(3));
	wl("w2", "a", 0, CPU(2));
	cycle();
	expect_admitted("w1", "default");
	cr_assert_eq(res.admitted, 1);
	cycle();
	expect_pending("w2", ADM_REASON_WAITING_FOR_QUOTA,
	    "couldn't assign flavors to pod set main: insufficient unused "
	    "quota for cpu in flavor default, 1 more needed");
	finish("w1");
	cycle();
	expect_admitted("w2", "default");
}

Test(admission_cycle, borrows_unused_quota_of_the_cohort)
{
	flavor("default");
	cq_simple("a", "co", CPU(4), NOLIM, NOLIM);
	cq_simple("b", "co", CPU(4), NOLIM, NOLIM);
	wl("w1", "a", 0, CPU(6));
	cycle();
	expect_admitted("w1", "default");
	wl("w2", "b", 0, 3500);
	cycle();
	expect_pending("w2", ADM_REASON_WAITING_FOR_QUOTA,
	    "couldn't assign flavors to pod set main: insufficient unused "
	    "quota for cpu in flavor default, 1500m more needed");
}

Test(admission_cycle, lending_limit_caps_what_others_may_borrow)
{
	flavor("default");
	/* Kueue's example: cohort SubtreeQuota 4, lend-b can use 2 + 2. */
	cq_simple("lend-a", "co", CPU(3), NOLIM, CPU(2));
	cq_simple("lend-b", "co", CPU(2), NOLIM, CPU(2));
	wl("w1", "lend-b", 0, CPU(5));
	cycle();
	expect_pending("w1", ADM_REASON_EXCEEDS_MAX_QUOTA,
	    "couldn't assign flavors to pod set main: insufficient quota for "
	    "cpu in flavor default, previously considered podsets requests "
	    "(0) + current podset request (5) > maximum capacity (4)");
	wl("w2", "lend-b", 0, CPU(4));
	cycle();
	expect_admitted("w2", "default");
	/* lend-a keeps 1 CPU it never lends, and can still use it. */
	wl("w3", "lend-a", 0, CPU(1));
	cycle();
	expect_admitted("w3", "default");
}

Test(admission_cycle, borrowing_limit_caps_what_a_queue_may_borrow)
{
	flavor("default");
	cq_simple("a", "co", CPU(2), CPU(1), NOLIM);
	cq_simple("b", "co", CPU(10), NOLIM, NOLIM);
	wl("w1", "a", 0, CPU(4));
	cycle();
	expect_pending("w1", ADM_REASON_EXCEEDS_MAX_QUOTA, NULL);
	cr_assert(strstr(find("w1")->message, "maximum capacity (3)"));
	wl("w2", "a", 0, CPU(3));
	cycle();
	expect_admitted("w2", "default");
}

Test(admission_cycle, hierarchical_cohort_quota_is_shared_down_the_tree)
{
	static const char *const covered[] = {"cpu"};
	struct que_resource_quota rq = {"cpu", CPU(10), false, 0, false, 0};
	struct que_flavor_quotas fq = {"default", &rq, 1};
	struct que_resource_group g = {covered, 1, &fq, 1};
	struct que_cohort_spec root = {"root", NULL, &g, 1};
	struct que_cohort_spec team = {"team", "root", NULL, 0};
	cu_error err;

	flavor("default");
	cr_assert_eq(que_cohort_set(st, &root, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(que_cohort_set(st, &team, &err), CU_OK, "%s", err.msg);
	cq_simple("a", "team", 0, NOLIM, NOLIM);
	cq_simple("b", "root", CPU(2), NOLIM, NOLIM);
	/* Subtree quota of root: 10 own + 2 of b = 12, all lendable. */
	wl("w1", "a", 0, CPU(7));
	cycle();
	expect_admitted("w1", "default");
	wl("w3", "b", 0, CPU(5));
	cycle();
	expect_admitted("w3", "default");
	wl("w2", "a", 0, CPU(1));
	cycle();
	expect_pending("w2", ADM_REASON_WAITING_FOR_QUOTA, NULL);
	wl("w4", "b", 0, CPU(13));
	cycle();
	expect_pending("w4", ADM_REASON_EXCEEDS_MAX_QUOTA, NULL);
	cr_assert(strstr(find("w4")->message, "maximum capacity (12)"));
}

Test(admission_cycle, falls_back_to_the_next_flavor)
{
	struct cq_opts o = {0};

	flavor("on-demand");
	flavor("spot");
	o.fl[0] = (struct fq){"on-demand", CPU(2), NOLIM, NOLIM};
	o.fl[1] = (struct fq){"spot", CPU(10), NOLIM, NOLIM};
	cq("a", &o);
	wl("w1", "a", 0, CPU(1));
	wl("w2", "b-missing", 0, CPU(1));
	cycle();
	expect_admitted("w1", "on-demand");
	wl("w3", "a", 0, CPU(5));
	cycle();
	expect_admitted("w3", "spot");
}

Test(admission_cycle, when_can_borrow_try_next_flavor_prefers_no_borrowing)
{
	struct cq_opts o = {.cohort = "co"};

	flavor("f1");
	flavor("f2");
	o.fl[0] = (struct fq){"f1", CPU(1), NOLIM, NOLIM};
	o.fl[1] = (struct fq){"f2", CPU(4), NOLIM, NOLIM};
	cq("a", &o);
	o.fl[0] = (struct fq){"f1", CPU(8), NOLIM, NOLIM};
	o.fl[1] = (struct fq){"f2", 0, NOLIM, NOLIM};
	cq("lender", &o);
	/* MayStopSearch (default): f1 fits by borrowing, search stops. */
	wl("w1", "a", 0, CPU(2));
	cycle();
	expect_admitted("w1", "f1");
	finish("w1");
	o.cohort = "co";
	o.when_can_borrow = QUE_TRY_NEXT_FLAVOR;
	o.fl[0] = (struct fq){"f1", CPU(1), NOLIM, NOLIM};
	o.fl[1] = (struct fq){"f2", CPU(4), NOLIM, NOLIM};
	cq("a", &o);
	wl("w2", "a", 0, CPU(2));
	cycle();
	expect_admitted("w2", "f2");
}

Test(admission_cycle, untolerated_taint_skips_the_flavor)
{
	struct que_taint taint = {"gpu", "true", QUE_EFFECT_NO_SCHEDULE};
	struct que_flavor_spec tainted = {
	    .name = "gpu", .taints = &taint, .n_taints = 1};
	struct que_toleration tol = {"gpu", NULL, QUE_TOLERATE_EXISTS, true, 0};
	struct que_podset_spec tolerant = {
	    .tolerations = &tol, .n_tolerations = 1};
	struct cq_opts o = {0};

	cr_assert_eq(que_flavor_set(st, &tainted, NULL), CU_OK);
	flavor("plain");
	o.fl[0] = (struct fq){"gpu", CPU(8), NOLIM, NOLIM};
	o.fl[1] = (struct fq){"plain", CPU(8), NOLIM, NOLIM};
	cq("a", &o);
	o.fl[1] = (struct fq){0};
	cq("only-gpu", &o);
	wl("w1", "a", 0, CPU(1));
	wl_full("w2", "a", 0, CPU(1), &tolerant);
	wl("w3", "only-gpu", 0, CPU(1));
	cycle();
	expect_admitted("w1", "plain");
	expect_pending("w3", ADM_REASON_NO_MATCHING_FLAVOR,
	    "couldn't assign flavors to pod set main: untolerated taint "
	    "{gpu true NoSchedule <nil>} in flavor gpu");
	cycle();
	expect_admitted("w2", "gpu");
}

Test(admission_cycle, node_selector_must_match_flavor_labels)
{
	struct que_kv zone_a = {"zone", "a"}, zone_b = {"zone", "b"};
	struct que_flavor_spec fa = {
	    .name = "fa", .node_labels = &zone_a, .n_node_labels = 1};
	struct que_flavor_spec fb = {
	    .name = "fb", .node_labels = &zone_b, .n_node_labels = 1};
	struct que_kv want_b = {"zone", "b"}, other = {"disk", "ssd"};
	struct que_podset_spec sel_b = {
	    .node_selector = &want_b, .n_node_selector = 1};
	struct que_podset_spec sel_other = {
	    .node_selector = &other, .n_node_selector = 1};
	struct cq_opts o = {0};

	cr_assert_eq(que_flavor_set(st, &fa, NULL), CU_OK);
	cr_assert_eq(que_flavor_set(st, &fb, NULL), CU_OK);
	o.fl[0] = (struct fq){"fa", CPU(8), NOLIM, NOLIM};
	o.fl[1] = (struct fq){"fb", CPU(8), NOLIM, NOLIM};
	cq("a", &o);
	o.fl[1] = (struct fq){0};
	cq("only-a", &o);
	wl_full("w1", "a", 0, CPU(1), &sel_b);
	wl_full("w2", "only-a", 0, CPU(1), &sel_b);
	/* Keys the flavor does not label are not its business. */
	wl_full("w3", "only-a", -1, CPU(1), &sel_other);
	cycle();
	expect_admitted("w1", "fb");
	expect_pending("w2", ADM_REASON_NO_MATCHING_FLAVOR,
	    "couldn't assign flavors to pod set main: flavor fa doesn't "
	    "match node affinity");
	cycle();
	expect_admitted("w3", "fa");
}

Test(admission_cycle, strict_fifo_head_blocks_best_effort_skips)
{
	static const enum que_queueing modes[] = {
	    QUE_STRICT_FIFO, QUE_BEST_EFFORT_FIFO};
	int m;

	for (m = 0; m < 2; m++) {
		struct cq_opts o = {.queueing = modes[m]};
		int i;

		teardown();
		setup();
		flavor("default");
		o.fl[0] = (struct fq){"default", CPU(4), NOLIM, NOLIM};
		cq("a", &o);
		wl("running", "a", 0, CPU(3));
		cycle();
		expect_admitted("running", "default");
		wl("big", "a", 0, CPU(2));
		wl("small", "a", 0, CPU(1));
		for (i = 0; i < 3; i++)
			cycle();
		if (modes[m] == QUE_STRICT_FIFO)
			cr_assert_eq(que_workload_get(st, "small")->where,
			    QUE_WL_PENDING, "StrictFIFO admitted behind head");
		else
			cr_assert_eq(que_workload_get(st, "small")->where,
			    QUE_WL_ADMITTED, "BestEffortFIFO did not skip");
		cr_assert_neq(
		    que_workload_get(st, "big")->where, QUE_WL_ADMITTED);
	}
}

Test(admission_cycle, unchanged_pending_status_is_reported_once)
{
	struct cq_opts o = {.queueing = QUE_STRICT_FIFO};

	flavor("default");
	o.fl[0] = (struct fq){"default", CPU(1), NOLIM, NOLIM};
	cq("a", &o);
	wl("run", "a", 0, CPU(1));
	cycle();
	wl("w", "a", 0, CPU(1));
	cycle();
	cr_assert_not_null(find("w"));
	cycle();
	cr_assert_null(find("w"), "same status written twice");
}

static struct que_preemption within(enum que_preempt_policy p)
{
	struct que_preemption x = {0};

	x.within_cluster_queue = p;
	return x;
}

struct within_case {
	enum que_preempt_policy policy;
	int32_t victim_prio, preemptor_prio;
	bool victim_newer;
	bool preempts;
};

Test(admission_cycle, preemption_within_cluster_queue_follows_policy)
{
	static const struct within_case cases[] = {
	    {QUE_PREEMPT_NEVER, 0, 10, false, false},
	    {QUE_PREEMPT_LOWER_PRIORITY, 0, 10, false, true},
	    {QUE_PREEMPT_LOWER_PRIORITY, 5, 5, true, false},
	    {QUE_PREEMPT_LOWER_PRIORITY, 10, 0, false, false},
	    {QUE_PREEMPT_LOWER_OR_NEWER_EQUAL_PRIORITY, 5, 5, true, true},
	    {QUE_PREEMPT_LOWER_OR_NEWER_EQUAL_PRIORITY, 5, 5, false, false},
	    {QUE_PREEMPT_LOWER_OR_NEWER_EQUAL_PRIORITY, 1, 5, false, true},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct within_case *c = &cases[i];
		struct cq_opts o = {.preemption = within(c->policy)};
		const struct adm_decision *d;

		teardown();
		setup();
		flavor("default");
		o.fl[0] = (struct fq){"default", CPU(4), NOLIM, NOLIM};
		cq("a", &o);
		if (c->victim_newer) {
			wl("pre", "a", c->preemptor_prio, CPU(2));
			cr_assert_eq(
			    que_workload_backoff(st, "pre", INT64_MAX, NULL),
			    CU_OK);
		}
		wl("victim", "a", c->victim_prio, CPU(4));
		cycle();
		expect_admitted("victim", "default");
		if (c->victim_newer)
			cr_assert_eq(
			    que_workload_get(st, "pre")->where, QUE_WL_BACKOFF);
		else
			wl("pre", "a", c->preemptor_prio, CPU(2));
		cr_assert_eq(que_workload_backoff(st, "pre", 0, NULL), CU_OK);
		cycle();
		d = find("pre");
		cr_assert_not_null(d, "case %zu", i);
		if (!c->preempts) {
			cr_assert_eq(d->kind, ADM_PENDING, "case %zu", i);
			cr_assert_eq(d->reason, ADM_REASON_WAITING_FOR_QUOTA,
			    "case %zu", i);
			continue;
		}
		cr_assert_eq(d->kind, ADM_PREEMPT, "case %zu", i);
		cr_assert_eq(d->n_victims, 1);
		cr_assert_str_eq(d->victims[0].uid, "victim");
		cr_assert_str_eq(
		    adm_preempt_reason_string(d->victims[0].reason),
		    "InClusterQueue");
		cr_assert_str_eq(adm_reason_string(d->reason),
		    "WaitingForPreemptedWorkloads");
		cr_assert_str_eq(d->message,
		    "couldn't assign flavors to pod set main: insufficient "
		    "unused quota for cpu in flavor default, 2 more needed. "
		    "Pending the preemption of 1 workload(s)");
		/* The victim is never chosen twice; the preemptor waits. */
		cycle();
		d = find("pre");
		cr_assert(d == NULL || d->kind != ADM_PREEMPT);
		cr_assert_eq(
		    que_workload_get(st, "victim")->where, QUE_WL_EVICTING);
		cr_assert_eq(
		    que_workload_release(st, "victim", clock_ns, NULL), CU_OK);
		cycle();
		expect_admitted("pre", "default");
	}
}

Test(admission_cycle, preemption_picks_a_minimal_victim_set)
{
	struct cq_opts o = {.preemption = within(QUE_PREEMPT_LOWER_PRIORITY)};
	const struct adm_decision *d;

	flavor("default");
	o.fl[0] = (struct fq){"default", CPU(4), NOLIM, NOLIM};
	cq("a", &o);
	wl("v1", "a", 0, CPU(1));
	cycle();
	wl("v2", "a", 0, CPU(2));
	cycle();
	wl("v3", "a", 0, CPU(1));
	cycle();
	cr_assert_eq(que_workload_get(st, "v3")->where, QUE_WL_ADMITTED);
	/* Order: most recently admitted first: v3 (1) is not enough, v2
	 * makes it fit, and v3 is then given back. */
	wl("pre", "a", 10, CPU(2));
	cycle();
	d = find("pre");
	cr_assert_not_null(d);
	cr_assert_eq(d->kind, ADM_PREEMPT);
	cr_assert_eq(d->n_victims, 1);
	cr_assert_str_eq(d->victims[0].uid, "v2");
}

Test(admission_cycle, reclaims_quota_lent_to_a_borrowing_queue)
{
	struct cq_opts o = {.cohort = "co"};
	const struct adm_decision *d;

	flavor("default");
	o.preemption.reclaim_within_cohort = QUE_PREEMPT_ANY;
	o.fl[0] = (struct fq){"default", CPU(4), NOLIM, NOLIM};
	cq("a", &o);
	cq("b", &o);
	wl("b1", "b", 100, CPU(4));
	wl("b2", "b", 100, CPU(4));
	cycle();
	cycle();
	cr_assert_eq(que_workload_get(st, "b2")->where, QUE_WL_ADMITTED);
	wl("a1", "a", 0, CPU(3));
	cycle();
	d = find("a1");
	cr_assert_not_null(d);
	cr_assert_eq(d->kind, ADM_PREEMPT, "%s", d->message);
	cr_assert_eq(d->n_victims, 1);
	cr_assert_str_eq(adm_preempt_reason_string(d->victims[0].reason),
	    "InCohortReclamation");
}

Test(admission_cycle, borrow_within_cohort_respects_max_priority_threshold)
{
	static const int32_t victim_prio[] = {3, 7};
	int i;

	for (i = 0; i < 2; i++) {
		struct cq_opts oa = {.cohort = "co"}, ob = {.cohort = "co"};
		const struct adm_decision *d;

		teardown();
		setup();
		flavor("default");
		oa.preemption.reclaim_within_cohort =
		    QUE_PREEMPT_LOWER_PRIORITY;
		oa.preemption.borrow_within_cohort = QUE_PREEMPT_LOWER_PRIORITY;
		oa.preemption.has_max_priority_threshold = true;
		oa.preemption.max_priority_threshold = 5;
		oa.fl[0] = (struct fq){"default", CPU(4), NOLIM, NOLIM};
		ob.fl[0] = oa.fl[0];
		cq("a", &oa);
		cq("b", &ob);
		wl("a-run", "a", 10, CPU(2));
		wl("b-run", "b", victim_prio[i], CPU(6));
		cycle();
		cycle();
		cr_assert_eq(
		    que_workload_get(st, "b-run")->where, QUE_WL_ADMITTED);
		wl("pre", "a", 10, CPU(4));
		cycle();
		d = find("pre");
		cr_assert_not_null(d);
		if (victim_prio[i] <= 5) {
			cr_assert_eq(d->kind, ADM_PREEMPT, "%s", d->message);
			cr_assert_str_eq(
			    adm_preempt_reason_string(d->victims[0].reason),
			    "InCohortReclaimWhileBorrowing");
		} else {
			cr_assert_eq(d->kind, ADM_PENDING);
			cr_assert_eq(d->reason, ADM_REASON_WAITING_FOR_QUOTA);
		}
	}
}

struct reason_case {
	const char *what;
	bool lq, cq_exists, cq_stopped, eligible;
	enum adm_reason reason;
	const char *msg;
};

Test(admission_cycle, pending_reason_names_the_root_cause_first)
{
	static const struct reason_case cases[] = {
	    {"no LocalQueue", false, false, false, false,
		ADM_REASON_MISCONFIGURED, "LocalQueue q doesn't exist"},
	    {"no ClusterQueue", true, false, false, false,
		ADM_REASON_MISCONFIGURED, "ClusterQueue cq doesn't exist"},
	    {"stopped ClusterQueue", true, true, true, false,
		ADM_REASON_SUSPENDED, "ClusterQueue cq is inactive"},
	    {"namespace", true, true, false, false, ADM_REASON_MISCONFIGURED,
		"workload namespace doesn't match ClusterQueue selector"},
	    {"quota", true, true, false, true, ADM_REASON_EXCEEDS_MAX_QUOTA,
		NULL},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct reason_case *c = &cases[i];
		struct que_lq_spec lq = {"ns", "q", "cq", QUE_STOP_NONE};
		struct cq_opts o = {0};

		teardown();
		setup();
		flavor("default");
		if (c->lq)
			cr_assert_eq(que_lq_set(st, &lq, NULL), CU_OK);
		if (c->cq_exists) {
			o.stop = c->cq_stopped ? QUE_STOP_HOLD : QUE_STOP_NONE;
			o.fl[0] = (struct fq){"default", CPU(1), NOLIM, NOLIM};
			cq("cq", &o);
		}
		/* Every case also lacks quota: the upstream cause wins. */
		wl("w", "q", 0, CPU(100));
		cr_assert_eq(que_workload_set_namespace_eligible(
				 st, "w", c->eligible, NULL),
		    CU_OK);
		cycle();
		expect_pending("w", c->reason, c->msg);
	}
}

Test(admission_cycle, several_admissions_per_cycle_never_over_admit)
{
	flavor("default");
	cq_simple("a", "co", CPU(2), NOLIM, NOLIM);
	cq_simple("b", "co", CPU(2), NOLIM, NOLIM);
	cq_simple("c", "co", CPU(2), NOLIM, NOLIM);
	/* Total 6: a and c fit without borrowing and both go first; b
	 * (older, but borrowing) no longer fits once they are in. */
	wl("b1", "b", 0, CPU(3));
	wl("a1", "a", 0, CPU(2));
	wl("c1", "c", 0, CPU(2));
	cycle();
	expect_admitted("a1", "default");
	expect_admitted("c1", "default");
	expect_pending("b1", ADM_REASON_WAITING_FOR_QUOTA,
	    "Workload no longer fits after processing another workload");
	cr_assert_eq(res.admitted, 2);
	finish("a1");
	cycle();
	expect_admitted("b1", "default");
}

/* A Workload of two pod sets (a driver and 4 workers) as one gang. */
static void wl_gang(const char *uid, const char *queue, int32_t workers)
{
	struct que_request r = {"cpu", CPU(1)};
	struct que_podset_spec ps[2] = {
	    {.name = "driver", .count = 1, .requests = &r, .n_requests = 1},
	    {.name = "workers",
		.count = workers,
		.requests = &r,
		.n_requests = 1},
	};
	struct que_workload_spec w = {0};
	cu_error err;

	w.uid = uid;
	w.ns = "ns";
	w.name = uid;
	w.queue_name = queue;
	w.created_ns = clock_ns++;
	w.namespace_eligible = true;
	w.podsets = ps;
	w.n_podsets = 2;
	cr_assert_eq(que_workload_add(st, &w, &err), CU_OK, "%s", err.msg);
}

Test(admission_cycle, gang_is_admitted_whole_or_not_at_all)
{
	const struct adm_decision *d;
	struct que_cq *a;
	size_t i;

	flavor("default");
	cq_simple("a", NULL, CPU(4), NOLIM, NOLIM);
	/* 1 + 4 cpu in a 4-cpu queue: the driver alone would fit, but no
	 * part of the gang is admitted and no quota is held for it. */
	wl_gang("g", "a", 4);
	cycle();
	d = find("g");
	cr_assert_not_null(d);
	cr_assert_eq(d->kind, ADM_PENDING, "%s", d->message);
	cr_assert_eq(res.admitted, 0);
	a = que_cq_get(st, "a");
	for (i = 0; i < a->node.ncells; i++)
		cr_assert_eq(a->node.cells[i].usage, 0);
	/* The quota it did not take is there for others. */
	wl("small", "a", 0, CPU(4));
	cycle();
	expect_admitted("small", "default");
	finish("small");
	/* A gang that fits is admitted with every pod set, counts whole
	 * (one head per ClusterQueue and cycle: "g", older, goes first
	 * and is parked again). */
	wl_gang("g3", "a", 3);
	for (i = 0, d = NULL; i < 3 && d == NULL; i++) {
		cycle();
		d = find("g3");
	}
	cr_assert_not_null(d);
	cr_assert_eq(d->kind, ADM_ADMIT);
	cr_assert_eq(d->n_podsets, 2);
	cr_assert_eq(d->podsets[0].count, 1);
	cr_assert_eq(d->podsets[1].count, 3);
	cr_assert_eq(d->podsets[1].uses[0].usage, CPU(3));
}

/* A workload slice (Kueue's ElasticJobsViaWorkloadSlices) named nm in
 * ns "ns", replacing the slice named `replaces`, asking milli cpu. */
static void wl_slice(const char *uid, const char *replaces, int64_t milli)
{
	struct que_request r = {"cpu", milli};
	struct que_podset_spec ps = {0};
	struct que_workload_spec w = {0};
	cu_error err;

	ps.name = "main";
	ps.count = 1;
	ps.requests = &r;
	ps.n_requests = 1;
	w.uid = uid;
	w.ns = "ns";
	w.name = uid;
	w.queue_name = "a";
	w.created_ns = clock_ns++;
	w.namespace_eligible = true;
	w.podsets = &ps;
	w.n_podsets = 1;
	w.replaces = replaces;
	cr_assert_eq(que_workload_add(st, &w, &err), CU_OK, "%s", err.msg);
}

static int64_t cq_usage(const char *name)
{
	struct que_cq *c = que_cq_get(st, name);
	int64_t u = 0;
	size_t i;

	for (i = 0; i < c->node.ncells; i++)
		u += c->node.cells[i].usage;
	return u;
}

Test(admission_cycle, slice_admitted_with_the_old_slice_usage_replaced)
{
	const struct adm_decision *d;

	flavor("default");
	cq_simple("a", NULL, CPU(5), NOLIM, NOLIM);
	wl("old", "a", 0, CPU(3));
	cycle();
	expect_admitted("old", "default");
	/* 5 cpu on top of 3 held would need 8: replacing the old slice
	 * it needs 5, which fits; the old slice's usage is released. */
	wl_slice("new", "old", CPU(5));
	cycle();
	expect_admitted("new", "default");
	d = find("new");
	cr_assert_str_eq(d->replaced_uid, "old");
	cr_assert_eq(cq_usage("a"), CPU(5));
	cr_assert(que_workload_get(st, "old")->replaced);
	/* The old slice finished: nothing released twice. */
	finish("old");
	cr_assert_eq(cq_usage("a"), CPU(5));
	finish("new");
	cr_assert_eq(cq_usage("a"), 0);
}

Test(admission_cycle, slice_waits_when_the_replaced_usage_is_not_enough)
{
	const struct adm_decision *d;

	flavor("default");
	cq_simple("a", NULL, CPU(4), NOLIM, NOLIM);
	wl("old", "a", 0, CPU(3));
	cycle();
	expect_admitted("old", "default");
	wl_slice("new", "old", CPU(5));
	cycle();
	d = find("new");
	cr_assert_not_null(d);
	cr_assert_eq(d->kind, ADM_PENDING);
	/* The old slice keeps its quota and is nobody's victim. */
	cr_assert_eq(cq_usage("a"), CPU(3));
	cr_assert_not(que_workload_get(st, "old")->replaced);
	/* A slice naming no admitted slice is an ordinary workload. */
	finish("new");
	wl_slice("other", "nope", CPU(2));
	cycle();
	cr_assert_eq(find("other")->kind, ADM_PENDING);
}
