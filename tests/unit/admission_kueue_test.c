/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/admission_kueue_test.c - scheduling outcomes compared with
 * Kueue's scheduler: two preemptors of one cohort in one cycle,
 * flavorFungibility.preference, the ClusterQueue path of preemption
 * messages, and parked Workloads that are looked at again without a cause
 * (their status must not change). Every scenario ends with
 * que_check_invariants().
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
	int64_t nominal;
};

struct cq_opts {
	const char *cohort;
	struct que_preemption preemption;
	enum que_fungibility when_can_borrow, when_can_preempt;
	enum que_fungibility_preference preference;
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
		rq[i] = (struct que_resource_quota){
		    "cpu", o->fl[i].nominal, false, 0, false, 0};
		fqs[i] = (struct que_flavor_quotas){o->fl[i].flavor, &rq[i], 1};
		g.n_flavors++;
	}
	s.name = name;
	s.cohort = o->cohort;
	s.groups = &g;
	s.n_groups = 1;
	s.preemption = o->preemption;
	s.when_can_borrow = o->when_can_borrow;
	s.when_can_preempt = o->when_can_preempt;
	s.preference = o->preference;
	cr_assert_eq(que_cq_set(st, &s, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(que_lq_set(st, &lq, &err), CU_OK, "%s", err.msg);
}

static void wl(const char *uid, const char *queue, int32_t prio, int64_t milli)
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
	w.queue_name = queue;
	w.priority = prio;
	w.created_ns = clock_ns++;
	w.namespace_eligible = true;
	w.podsets = &ps;
	w.n_podsets = 1;
	cr_assert_eq(que_workload_add(st, &w, &err), CU_OK, "%s", err.msg);
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

static const struct adm_decision *expect_kind(
    const char *uid, enum adm_kind kind)
{
	const struct adm_decision *d = find(uid);

	cr_assert_not_null(d, "no decision for %s", uid);
	cr_assert_eq(d->kind, kind, "%s: kind %d (want %d) msg %s", uid,
	    d->kind, kind, d->message ? d->message : "");
	return d;
}

static void finish(const char *uid)
{
	cr_assert_eq(que_workload_remove(st, uid, NULL), CU_OK);
}

TestSuite(admission_kueue, .init = setup, .fini = teardown);

static struct que_preemption within_lower(void)
{
	struct que_preemption p = {0};

	p.within_cluster_queue = QUE_PREEMPT_LOWER_PRIORITY;
	return p;
}

/*
 * Kueue's scheduler admits or preempts for every head whose targets do
 * not overlap: cq-a and cq-b (2 cpu each) share cohort co, full with
 * a-low and b-low (2 cpu each). a-high and b-high (2 cpu each) each need
 * to preempt their own queue's low one. Before, b-high was checked
 * against a-low's usage as well as a-high's reservation and left pending
 * ("no longer fits"), its victim untouched.
 */
Test(admission_kueue, two_preemptors_of_one_cohort_preempt_in_one_cycle)
{
	struct cq_opts o = {.cohort = "co", .preemption = within_lower()};
	const struct adm_decision *da, *db;

	flavor("default");
	o.fl[0] = (struct fq){"default", CPU(2)};
	cq("cq-a", &o);
	cq("cq-b", &o);
	wl("a-low", "cq-a", 0, CPU(2));
	wl("b-low", "cq-b", 0, CPU(2));
	cycle();
	expect_kind("a-low", ADM_ADMIT);
	expect_kind("b-low", ADM_ADMIT);
	wl("a-high", "cq-a", 10, CPU(2));
	wl("b-high", "cq-b", 10, CPU(2));
	cycle();
	da = expect_kind("a-high", ADM_PREEMPT);
	db = expect_kind("b-high", ADM_PREEMPT);
	cr_assert_eq(da->n_victims, 1);
	cr_assert_str_eq(da->victims[0].uid, "a-low");
	cr_assert_eq(db->n_victims, 1);
	cr_assert_str_eq(db->victims[0].uid, "b-low");
	cr_assert(strstr(db->message, ". Pending the preemption of 1 "
				      "workload(s)") != NULL,
	    "%s", db->message);
	/* Both victims gone: both preemptors are admitted together. */
	cr_assert_eq(que_workload_release(st, "a-low", clock_ns, NULL), CU_OK);
	cr_assert_eq(que_workload_release(st, "b-low", clock_ns, NULL), CU_OK);
	cycle();
	expect_kind("a-high", ADM_ADMIT);
	expect_kind("b-high", ADM_ADMIT);
}

/*
 * Two heads of one cycle reclaim the same borrowed quota: cq-c (no quota
 * of its own) holds the whole cohort with c-big; a-new and b-new each need
 * c-big gone. With RecomputeAssignmentUponPreemptionTargetsOverlap off,
 * the first preempts it, the second is skipped (overlapping targets) and
 * counted in res.skipped under its ClusterQueue, once.
 */
Test(admission_kueue, overlapping_preemptors_are_counted_as_skipped)
{
	struct cq_opts o = {.cohort = "co"};
	const struct adm_decision *da, *db;

	que_recompute_overlap_set(st, false);
	o.preemption.reclaim_within_cohort = QUE_PREEMPT_ANY;
	flavor("default");
	o.fl[0] = (struct fq){"default", CPU(2)};
	cq("cq-a", &o);
	cq("cq-b", &o);
	o.fl[0] = (struct fq){"default", CPU(0)};
	cq("cq-c", &o);
	wl("c-big", "cq-c", 0, CPU(4));
	cycle();
	expect_kind("c-big", ADM_ADMIT);
	cr_assert_eq(res.n_skipped, 0);
	wl("a-new", "cq-a", 0, CPU(2));
	wl("b-new", "cq-b", 0, CPU(2));
	cycle();
	da = find("a-new");
	db = find("b-new");
	cr_assert(da != NULL && db != NULL);
	/* one preempts c-big, the other waits */
	cr_assert((da->kind == ADM_PREEMPT) != (db->kind == ADM_PREEMPT));
	cr_assert_eq(res.n_skipped, 1);
	cr_assert_str_eq(
	    res.skipped[0], da->kind == ADM_PREEMPT ? "cq-b" : "cq-a");
}

/*
 * The same with the gate on (Kueue's default): the second head is
 * assigned again as if c-big were gone, fits, and waits for that
 * preemption (DeferredFit: WaitingForPreemptedWorkloads, Kueue's message,
 * its quota reserved, no skip counted; recomputed as deferred_fit). Once
 * c-big is gone both are admitted in one cycle.
 */
Test(admission_kueue, overlapping_preemptor_recomputed_defers)
{
	struct cq_opts o = {.cohort = "co"};
	const struct adm_decision *da, *db, *dp, *dw;

	o.preemption.reclaim_within_cohort = QUE_PREEMPT_ANY;
	flavor("default");
	o.fl[0] = (struct fq){"default", CPU(2)};
	cq("cq-a", &o);
	cq("cq-b", &o);
	o.fl[0] = (struct fq){"default", CPU(0)};
	cq("cq-c", &o);
	wl("c-big", "cq-c", 0, CPU(4));
	cycle();
	expect_kind("c-big", ADM_ADMIT);
	wl("a-new", "cq-a", 0, CPU(2));
	wl("b-new", "cq-b", 0, CPU(2));
	cycle();
	da = find("a-new");
	db = find("b-new");
	cr_assert(da != NULL && db != NULL);
	cr_assert((da->kind == ADM_PREEMPT) != (db->kind == ADM_PREEMPT));
	dp = da->kind == ADM_PREEMPT ? da : db;
	dw = dp == da ? db : da;
	cr_assert_eq(dw->kind, ADM_PENDING);
	cr_assert_eq(dw->reason, ADM_REASON_WAITING_FOR_PREEMPTED_WORKLOADS);
	cr_assert_str_eq(dw->message,
	    "Workload has overlapping preemption targets with another "
	    "workload, but will fit after these preemptions complete");
	cr_assert_eq(res.n_skipped, 0);
	cr_assert_eq(res.n_recomputed, 1);
	cr_assert_str_eq(res.recomputed[0].result, "deferred_fit");
	cr_assert_str_eq(
	    res.recomputed[0].cluster_queue, dw == db ? "cq-b" : "cq-a");
	cr_assert_eq(que_workload_release(st, "c-big", clock_ns, NULL), CU_OK);
	cycle();
	expect_kind("a-new", ADM_ADMIT);
	expect_kind("b-new", ADM_ADMIT);
}

/* A plain admission later in the cycle still counts the victims of an
 * earlier preemption as present: nothing is admitted on top of them. */
Test(admission_kueue, admission_never_uses_what_victims_still_hold)
{
	struct cq_opts o = {.cohort = "co", .preemption = within_lower()};

	flavor("default");
	o.fl[0] = (struct fq){"default", CPU(2)};
	cq("cq-a", &o);
	o.preemption = (struct que_preemption){0};
	cq("cq-b", &o);
	wl("a-low", "cq-a", 0, CPU(4));
	cycle();
	expect_kind("a-low", ADM_ADMIT);
	wl("a-high", "cq-a", 10, CPU(2));
	wl("b-new", "cq-b", 0, CPU(2));
	cycle();
	expect_kind("a-high", ADM_PREEMPT);
	cr_assert(find("b-new") == NULL || find("b-new")->kind != ADM_ADMIT,
	    "b-new admitted on top of a-low's quota");
}

struct pref_case {
	enum que_fungibility_preference pref;
	enum adm_kind kind; /* of "high" */
	const char *flavor; /* when admitted */
};

/*
 * flavorFungibility.preference (both policies TryNextFlavor): for "high"
 * (2 cpu, priority 10) f1 fits by borrowing from the lender and f2 fits
 * within cq-a's quota by preempting "low". BorrowingOverPreemption (and
 * the default) take f1; PreemptionOverBorrowing preempts on f2.
 */
Test(admission_kueue, fungibility_preference_ranks_flavors_as_kueue)
{
	static const struct pref_case cases[] = {
	    {QUE_BORROWING_OVER_PREEMPTION, ADM_ADMIT, "f1"},
	    {QUE_PREEMPTION_OVER_BORROWING, ADM_PREEMPT, NULL},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cq_opts o = {.cohort = "co",
		    .preemption = within_lower(),
		    .when_can_borrow = QUE_TRY_NEXT_FLAVOR,
		    .when_can_preempt = QUE_TRY_NEXT_FLAVOR,
		    .preference = cases[i].pref};
		const struct adm_decision *d;

		teardown();
		setup();
		flavor("f1");
		flavor("f2");
		o.fl[0] = (struct fq){"f1", CPU(1)};
		o.fl[1] = (struct fq){"f2", CPU(2)};
		cq("cq-a", &o);
		o.fl[0] = (struct fq){"f1", CPU(8)};
		o.fl[1] = (struct fq){"f2", 0};
		o.preemption = (struct que_preemption){0};
		cq("lender", &o);
		wl("low", "cq-a", 0, CPU(2));
		cycle();
		d = expect_kind("low", ADM_ADMIT);
		cr_assert_str_eq(d->podsets[0].uses[0].flavor, "f2");
		wl("high", "cq-a", 10, CPU(2));
		cycle();
		d = expect_kind("high", cases[i].kind);
		if (cases[i].flavor)
			cr_assert_str_eq(d->podsets[0].uses[0].flavor,
			    cases[i].flavor, "case %zu", i);
		else
			cr_assert_str_eq(d->victims[0].uid, "low");
	}
}

struct path_case {
	const char *cq;
	const char *want;
};

/* Kueue's preemptor and preemptee paths: leading slash, the cohort chain
 * from the root down. */
Test(admission_kueue, cluster_queue_path_names_the_cohort_chain)
{
	static const struct path_case cases[] = {
	    {"alone", "/alone"},
	    {"flat", "/co/flat"},
	    {"deep", "/root/mid/deep"},
	};
	struct que_cohort_spec mid = {.name = "mid", .parent = "root"};
	struct cq_opts o = {0};
	char buf[128];
	size_t i;

	flavor("default");
	o.fl[0] = (struct fq){"default", CPU(1)};
	cq("alone", &o);
	o.cohort = "co";
	cq("flat", &o);
	o.cohort = "mid";
	cq("deep", &o);
	cr_assert_eq(que_cohort_set(st, &mid, NULL), CU_OK);
	cycle();
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct que_cq *q = que_cq_get(st, cases[i].cq);

		cr_assert_not_null(q);
		cr_assert_eq(
		    adm_cq_path(q, buf, sizeof(buf)), strlen(cases[i].want));
		cr_assert_str_eq(buf, cases[i].want);
	}
	/* Truncated, terminated, full length returned. */
	cr_assert_eq(adm_cq_path(que_cq_get(st, "deep"), buf, 6), 14);
	cr_assert_str_eq(buf, "/root");
}

/*
 * The safety net (que_recheck_parked) looks at parked workloads without a
 * cause: "w" keeps "500m more needed" although another admission in its
 * cohort (not a cause in Kueue) would now make it "1500m more needed".
 * Capacity freed in the cohort is a cause: the new message is reported.
 */
Test(admission_kueue, safety_net_recheck_changes_no_reported_status)
{
	struct cq_opts o = {.cohort = "co"};
	const struct adm_decision *d;

	flavor("default");
	o.fl[0] = (struct fq){"default", CPU(2)};
	cq("cq-a", &o);
	cq("cq-b", &o);
	wl("a-run", "cq-a", 0, CPU(2));
	wl("b-run", "cq-b", 0, 500);
	cycle();
	wl("w", "cq-a", 0, CPU(2));
	cycle();
	d = expect_kind("w", ADM_PENDING);
	cr_assert(
	    strstr(d->message, ", 500m more needed") != NULL, "%s", d->message);
	wl("b-more", "cq-b", 0, CPU(1));
	cycle();
	expect_kind("b-more", ADM_ADMIT);
	cr_assert_null(find("w"));
	cr_assert(que_recheck_parked(st));
	cycle();
	cr_assert_null(find("w"), "w's status changed without a cause: %s",
	    find("w") ? find("w")->message : "");
	cr_assert_eq(que_workload_get(st, "w")->where, QUE_WL_INADMISSIBLE);
	/* A cause: b-run ends. */
	finish("b-run");
	cycle();
	d = expect_kind("w", ADM_PENDING);
	cr_assert(
	    strstr(d->message, ", 1 more needed") != NULL, "%s", d->message);
	/* And then it fits. */
	finish("b-more");
	cycle();
	expect_kind("w", ADM_ADMIT);
}

/* A cause that comes while quietly rechecked workloads still wait in the
 * heap makes them report again: w2 was moved by the recheck but not yet
 * looked at when b-run ended. */
Test(admission_kueue, cause_after_a_recheck_reaches_the_heap_too)
{
	struct cq_opts o = {.cohort = "co"};
	const struct adm_decision *d;

	flavor("default");
	o.fl[0] = (struct fq){"default", CPU(2)};
	cq("cq-a", &o);
	cq("cq-b", &o);
	wl("a-run", "cq-a", 0, CPU(2));
	wl("b-run", "cq-b", 0, 500);
	cycle();
	wl("w1", "cq-a", 0, CPU(2));
	wl("w2", "cq-a", 0, CPU(2));
	cycle();
	expect_kind("w1", ADM_PENDING);
	cycle();
	expect_kind("w2", ADM_PENDING);
	wl("b-more", "cq-b", 0, CPU(1));
	cycle();
	expect_kind("b-more", ADM_ADMIT);
	cr_assert(que_recheck_parked(st));
	cycle();
	cr_assert_null(find("w1"));
	finish("b-run");
	cycle();
	d = expect_kind("w1", ADM_PENDING);
	cr_assert(
	    strstr(d->message, ", 1 more needed") != NULL, "%s", d->message);
	cycle();
	d = expect_kind("w2", ADM_PENDING);
	cr_assert(
	    strstr(d->message, ", 1 more needed") != NULL, "%s", d->message);
}

/* Kueue's scheduler test shape: an untolerated taint is printed as Go
 * prints the Taint struct, and the reasons are sorted as strings. */
Test(admission_kueue, untolerated_taint_in_kueue_form_and_order)
{
	struct que_taint taint = {"key", "val", QUE_EFFECT_NO_SCHEDULE};
	struct que_taint bare = {"dedicated", NULL, QUE_EFFECT_NO_EXECUTE};
	struct que_flavor_spec tainted = {
	    .name = "spot-tainted", .taints = &taint, .n_taints = 1};
	struct que_flavor_spec other = {
	    .name = "a-tainted", .taints = &bare, .n_taints = 1};
	struct cq_opts o = {0};
	const struct adm_decision *d;

	flavor("on-demand");
	cr_assert_eq(que_flavor_set(st, &tainted, NULL), CU_OK);
	cr_assert_eq(que_flavor_set(st, &other, NULL), CU_OK);
	o.fl[0] = (struct fq){"on-demand", CPU(5)};
	o.fl[1] = (struct fq){"spot-tainted", CPU(5)};
	o.fl[2] = (struct fq){"a-tainted", CPU(5)};
	cq("cq", &o);
	wl("w", "cq", 0, CPU(10));
	cycle();
	d = expect_kind("w", ADM_PENDING);
	cr_assert_str_eq(d->message,
	    "couldn't assign flavors to pod set main: insufficient quota for "
	    "cpu in flavor on-demand, previously considered podsets requests "
	    "(0) + current podset request (10) > maximum capacity (5), "
	    "untolerated taint {dedicated  NoExecute <nil>} in flavor "
	    "a-tainted, untolerated taint {key val NoSchedule <nil>} in flavor "
	    "spot-tainted");
}

/* The controller sets every queue and flavor again on each configuration
 * pass (one of its own status writes is enough): an unchanged spec is no
 * cause, so "w" keeps what it reported. A changed quota is one. */
Test(admission_kueue, unchanged_configuration_is_no_cause)
{
	struct cq_opts o = {.cohort = "co"};
	const struct adm_decision *d;

	flavor("default");
	o.fl[0] = (struct fq){"default", CPU(2)};
	cq("cq-a", &o);
	cq("cq-b", &o);
	wl("a-run", "cq-a", 0, CPU(2));
	wl("b-run", "cq-b", 0, 500);
	cycle();
	wl("w", "cq-a", 0, CPU(2));
	cycle();
	d = expect_kind("w", ADM_PENDING);
	cr_assert(
	    strstr(d->message, ", 500m more needed") != NULL, "%s", d->message);
	wl("b-more", "cq-b", 0, CPU(1));
	cycle();
	expect_kind("b-more", ADM_ADMIT);
	/* The same specs again. */
	flavor("default");
	cq("cq-a", &o);
	cq("cq-b", &o);
	cycle();
	cr_assert_null(find("w"), "w's status changed without a cause: %s",
	    find("w") ? find("w")->message : "");
	/* cq-b's quota grows by 500m: the cohort has room for 1 cpu less
	 * than w needs. */
	o.fl[0] = (struct fq){"default", 2500};
	cq("cq-b", &o);
	cycle();
	d = expect_kind("w", ADM_PENDING);
	cr_assert(
	    strstr(d->message, ", 1 more needed") != NULL, "%s", d->message);
}

/* A Workload in requeue backoff is pending and inadmissible for Kueue's
 * counts: its ClusterQueue keeps the number (status and metrics read
 * it) until the backoff expires. */
Test(admission_kueue, backoff_is_counted_by_its_cluster_queue)
{
	struct cq_opts o = {0};
	struct que_cq *q;

	flavor("default");
	o.fl[0] = (struct fq){"default", CPU(1)};
	cq("cq", &o);
	wl("w", "cq", 0, CPU(1));
	cycle();
	expect_kind("w", ADM_ADMIT);
	wl("b", "cq", 0, CPU(1));
	cr_assert_eq(
	    que_workload_backoff(st, "b", clock_ns + 100, NULL), CU_OK);
	q = que_cq_get(st, "cq");
	cr_assert_eq(q->n_backoff, 1);
	cr_assert_eq(q->n_heap + q->inadmissible.n, 0);
	clock_ns += 200;
	cycle();
	cr_assert_eq(q->n_backoff, 0);
	expect_kind("b", ADM_PENDING);
}
