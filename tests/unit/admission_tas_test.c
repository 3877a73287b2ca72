/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/admission_tas_test.c - the scheduling cycle with the
 * topology-aware scheduling hook (queues.h que_tas_hook), here a fake
 * topology of N free pods on flavor "tas": a podSet that does not fit
 * stays pending with the hook's message; two podSets that each fit but
 * not together are not both admitted in one cycle (assume charges the
 * first); a full TAS flavor falls through to the next flavor; without
 * the hook nothing changes. TAS preemption (a fake of racks, each
 * Workload in one rack): a podSet that fits the quota but no rack
 * preempts the minimal set of lower-priority Workloads whose release
 * makes a rack fit, in Kueue's candidate order, and is admitted there
 * once they are gone; NoFit when even an empty topology is too small,
 * the ClusterQueue never preempts, or the hook cannot answer.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "admission/admission.h"
#include "queues/queues.h"

static que_state *st;
static struct adm_result res;
static int64_t clock_ns = 1000;

struct fake_topology {
	int32_t free; /* pods that still fit on flavor "tas" */
	int checks, assumes;
};

static int fake_check(void *ctx, const struct que_wl *wl, size_t podset,
    const struct que_flavor *f, int32_t count, char *msg, size_t len)
{
	struct fake_topology *t = ctx;

	(void)wl;
	(void)podset;
	t->checks++;
	if (strcmp(f->name, "tas") != 0 || count <= t->free)
		return 0;
	snprintf(msg, len,
	    "topology \"default\" allows to fit only %d out of %d pod(s)",
	    t->free, count);
	return 1;
}

static int fake_assume(void *ctx, const struct que_wl *wl,
    const char *const *flavors, const int32_t *counts, char *msg, size_t len)
{
	struct fake_topology *t = ctx;

	(void)wl;
	t->assumes++;
	if (flavors[0] == NULL || strcmp(flavors[0], "tas") != 0)
		return 0;
	if (counts[0] > t->free) {
		snprintf(msg, len,
		    "topology \"default\" allows to fit only %d out of %d "
		    "pod(s)",
		    t->free, counts[0]);
		return 1;
	}
	t->free -= counts[0];
	return 0;
}

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

TestSuite(admission_tas, .init = setup, .fini = teardown);

/* ClusterQueue `cq` with flavors "tas" then "default" (when two), 100
 * cpu each, and LocalQueue ns/<lq>. */
static void queues_named(const char *cqn, const char *lqn, bool two)
{
	static const char *const covered[] = {"cpu"};
	struct que_flavor_spec ft = {.name = "tas"}, fd = {.name = "default"};
	struct que_resource_quota rq[2] = {{"cpu", 100000, false, 0, false, 0},
	    {"cpu", 100000, false, 0, false, 0}};
	struct que_flavor_quotas fqs[2] = {
	    {"tas", &rq[0], 1}, {"default", &rq[1], 1}};
	struct que_resource_group g = {covered, 1, fqs, two ? 2 : 1};
	struct que_cq_spec s = {0};
	struct que_lq_spec lq = {"ns", lqn, cqn, QUE_STOP_NONE};
	cu_error err;

	cr_assert_eq(que_flavor_set(st, &ft, &err), CU_OK);
	cr_assert_eq(que_flavor_set(st, &fd, &err), CU_OK);
	s.name = cqn;
	s.groups = &g;
	s.n_groups = 1;
	cr_assert_eq(que_cq_set(st, &s, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(que_lq_set(st, &lq, &err), CU_OK, "%s", err.msg);
}

static void queues(bool two)
{
	queues_named("cq", "q", two);
}

static void job_in(const char *uid, const char *queue, int32_t pods)
{
	struct que_request r = {"cpu", 1000};
	struct que_podset_spec ps = {0};
	struct que_workload_spec w = {0};
	cu_error err;

	ps.name = "main";
	ps.count = pods;
	ps.requests = &r;
	ps.n_requests = 1;
	w.uid = uid;
	w.ns = "ns";
	w.name = uid;
	w.queue_name = queue;
	w.created_ns = clock_ns++;
	w.namespace_eligible = true;
	w.podsets = &ps;
	w.n_podsets = 1;
	cr_assert_eq(que_workload_add(st, &w, &err), CU_OK, "%s", err.msg);
}

static void job(const char *uid, int32_t pods)
{
	job_in(uid, "q", pods);
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

Test(admission_tas, without_the_hook_quota_alone_decides)
{
	queues(false);
	job("big", 5);
	cycle();
	cr_assert_not_null(find("big"));
	cr_assert_eq(find("big")->kind, ADM_ADMIT);
}

Test(admission_tas, too_big_for_the_topology_stays_pending)
{
	struct fake_topology t = {4, 0, 0};
	struct que_tas_hook h = {&t, fake_check, fake_assume, NULL};
	const struct adm_decision *d;

	queues(false);
	que_set_tas_hook(st, &h);
	job("big", 5);
	cycle();
	d = find("big");
	cr_assert_not_null(d);
	cr_assert_eq(d->kind, ADM_PENDING);
	cr_assert(strstr(d->message, "topology \"default\" allows to fit only "
				     "4 out of 5 pod(s)") != NULL,
	    "%s", d->message);
	cr_assert_eq(t.free, 4);
	/* capacity freed: the next cycle admits it */
	t.free = 5;
	que_tas_capacity_changed(st);
	cycle();
	d = find("big");
	cr_assert_not_null(d);
	cr_assert_eq(d->kind, ADM_ADMIT);
	cr_assert_eq(t.free, 0);
}

Test(admission_tas, one_cycle_never_places_twice_on_the_same_capacity)
{
	struct fake_topology t = {4, 0, 0};
	struct que_tas_hook h = {&t, fake_check, fake_assume, NULL};
	size_t i, admitted = 0, pending = 0;

	/* two ClusterQueues, two heads in one cycle, both fit alone */
	queues_named("cq", "q", false);
	queues_named("cq2", "q2", false);
	que_set_tas_hook(st, &h);
	job_in("a", "q", 3);
	job_in("b", "q2", 3);
	cycle();
	for (i = 0; i < res.n; i++) {
		admitted += res.v[i].kind == ADM_ADMIT;
		pending += res.v[i].kind == ADM_PENDING;
	}
	cr_assert_eq(admitted, 1);
	cr_assert_eq(pending, 1);
	cr_assert_eq(t.free, 1);
	cr_assert_eq(t.assumes, 2);
}

Test(admission_tas, full_tas_flavor_falls_through_to_the_next)
{
	struct fake_topology t = {2, 0, 0};
	struct que_tas_hook h = {&t, fake_check, fake_assume, NULL};
	const struct adm_decision *d;

	queues(true);
	que_set_tas_hook(st, &h);
	job("big", 3);
	cycle();
	d = find("big");
	cr_assert_not_null(d);
	cr_assert_eq(d->kind, ADM_ADMIT, "%s", d->message ? d->message : "");
	cr_assert_str_eq(d->podsets[0].uses[0].flavor, "default");
	cr_assert_eq(t.free, 2);
}

/* ---- TAS preemption --------------------------------------------------- */

#define RACKS 3
#define MAX_PLACED 16

/* Racks of `cap` pods; every Workload takes `count` pods of one rack
 * (first fit), as a required-rack podSet would. */
struct fake_racks {
	int32_t cap[RACKS];
	size_t n_racks;
	struct {
		char uid[16];
		size_t rack;
		int32_t n;
	} placed[MAX_PLACED];
	size_t n_placed;
	int withouts; /* check_without calls */
};

static bool is_gone(
    const char *uid, const struct que_wl *const *gone, size_t n_gone)
{
	size_t i;

	for (i = 0; i < n_gone; i++)
		if (strcmp(gone[i]->uid, uid) == 0)
			return true;
	return false;
}

static int32_t rack_free(const struct fake_racks *t, size_t r,
    const struct que_wl *const *gone, size_t n_gone, bool empty)
{
	int32_t f = t->cap[r];
	size_t i;

	for (i = 0; i < t->n_placed && !empty; i++)
		if (t->placed[i].rack == r &&
		    !is_gone(t->placed[i].uid, gone, n_gone))
			f -= t->placed[i].n;
	return f;
}

static int racks_fit(const struct fake_racks *t, int32_t count,
    const struct que_wl *const *gone, size_t n_gone, bool empty, char *msg,
    size_t len, size_t *rack)
{
	int32_t best = 0;
	size_t r;

	for (r = 0; r < t->n_racks; r++) {
		int32_t f = rack_free(t, r, gone, n_gone, empty);

		if (f >= count) {
			if (rack)
				*rack = r;
			return 0;
		}
		if (f > best)
			best = f;
	}
	snprintf(msg, len,
	    "topology \"default\" allows to fit only %d out of %d pod(s)", best,
	    count);
	return 1;
}

static int racks_check(void *ctx, const struct que_wl *wl, size_t podset,
    const struct que_flavor *f, int32_t count, char *msg, size_t len)
{
	(void)wl;
	(void)podset;
	(void)f;
	return racks_fit(ctx, count, NULL, 0, false, msg, len, NULL);
}

static int racks_without(void *ctx, const struct que_wl *wl, size_t podset,
    const struct que_flavor *f, int32_t count, const struct que_wl *const *gone,
    size_t n_gone, bool empty, char *msg, size_t len)
{
	struct fake_racks *t = ctx;

	(void)wl;
	(void)podset;
	(void)f;
	t->withouts++;
	return racks_fit(t, count, gone, n_gone, empty, msg, len, NULL);
}

static int racks_assume(void *ctx, const struct que_wl *wl,
    const char *const *flavors, const int32_t *counts, char *msg, size_t len)
{
	struct fake_racks *t = ctx;
	size_t r;

	(void)flavors;
	if (racks_fit(t, counts[0], NULL, 0, false, msg, len, &r) != 0)
		return 1;
	cr_assert_lt(t->n_placed, MAX_PLACED);
	snprintf(t->placed[t->n_placed].uid, sizeof(t->placed[0].uid), "%s",
	    wl->uid);
	t->placed[t->n_placed].rack = r;
	t->placed[t->n_placed].n = counts[0];
	t->n_placed++;
	return 0;
}

/* The Workload is gone: its rack is free again. */
static void racks_release(struct fake_racks *t, const char *uid)
{
	size_t i;

	for (i = 0; i < t->n_placed; i++)
		if (strcmp(t->placed[i].uid, uid) == 0) {
			t->placed[i] = t->placed[--t->n_placed];
			return;
		}
}

static ssize_t rack_of(const struct fake_racks *t, const char *uid)
{
	size_t i;

	for (i = 0; i < t->n_placed; i++)
		if (strcmp(t->placed[i].uid, uid) == 0)
			return (ssize_t)t->placed[i].rack;
	return -1;
}

/* ClusterQueue "cq" (flavor "tas" only, 100 cpu) with preemption p and
 * LocalQueue ns/q. */
static void queues_preempting(const struct que_preemption *p)
{
	static const char *const covered[] = {"cpu"};
	struct que_flavor_spec ft = {.name = "tas"};
	struct que_resource_quota rq = {"cpu", 100000, false, 0, false, 0};
	struct que_flavor_quotas fq = {"tas", &rq, 1};
	struct que_resource_group g = {covered, 1, &fq, 1};
	struct que_cq_spec s = {0};
	struct que_lq_spec lq = {"ns", "q", "cq", QUE_STOP_NONE};
	cu_error err;

	cr_assert_eq(que_flavor_set(st, &ft, &err), CU_OK);
	s.name = "cq";
	s.groups = &g;
	s.n_groups = 1;
	s.preemption = *p;
	cr_assert_eq(que_cq_set(st, &s, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(que_lq_set(st, &lq, &err), CU_OK, "%s", err.msg);
}

static void job_prio(const char *uid, int32_t pods, int32_t prio)
{
	struct que_request r = {"cpu", 1000};
	struct que_podset_spec ps = {0};
	struct que_workload_spec w = {0};
	cu_error err;

	ps.name = "main";
	ps.count = pods;
	ps.requests = &r;
	ps.n_requests = 1;
	w.uid = uid;
	w.ns = "ns";
	w.name = uid;
	w.queue_name = "q";
	w.priority = prio;
	w.created_ns = clock_ns++;
	w.namespace_eligible = true;
	w.podsets = &ps;
	w.n_podsets = 1;
	cr_assert_eq(que_workload_add(st, &w, &err), CU_OK, "%s", err.msg);
}

struct running {
	const char *uid;
	int32_t pods, prio;
};

struct tas_preempt_case {
	const char *name;
	int32_t cap[RACKS];
	size_t n_racks;
	struct running run[6]; /* admitted in this order (first fit) */
	int32_t pods, prio;    /* the preemptor */
	enum que_preempt_policy within;
	bool no_without;     /* the hook has no check_without */
	const char *victims; /* sorted, comma-separated; NULL: pending */
	const char *message; /* a part of the preemptor's message */
};

static void victims_of(const struct adm_decision *d, char *out, size_t len)
{
	const char *v[8];
	size_t i, j, at = 0;

	cr_assert_leq(d->n_victims, 8);
	for (i = 0; i < d->n_victims; i++)
		v[i] = d->victims[i].uid;
	for (i = 1; i < d->n_victims; i++)
		for (j = i; j > 0 && strcmp(v[j - 1], v[j]) > 0; j--) {
			const char *x = v[j];

			v[j] = v[j - 1];
			v[j - 1] = x;
		}
	out[0] = '\0';
	for (i = 0; i < d->n_victims; i++)
		at += (size_t)snprintf(
		    out + at, len - at, "%s%s", i ? "," : "", v[i]);
}

Test(admission_tas, preemption_frees_topology_capacity)
{
	static const struct tas_preempt_case cases[] = {
	    {"the rack with the newest victims; the full rack kept", {4, 4}, 2,
		{{"a", 4, 0}, {"b", 2, 0}, {"c", 2, 0}}, 4, 10,
		QUE_PREEMPT_LOWER_PRIORITY, false, "b,c",
		"couldn't assign flavors to pod set main: topology "
		"\"default\" allows to fit only 0 out of 4 pod(s). Pending "
		"the preemption of 2 workload(s)"},
	    {"higher priorities shield their rack", {4, 4}, 2,
		{{"a", 4, 0}, {"b", 4, 20}}, 4, 10, QUE_PREEMPT_LOWER_PRIORITY,
		false, "a", NULL},
	    {"fill back: a removed victim not needed is kept", {4, 4}, 2,
		{{"a", 2, 0}, {"b", 2, 0}, {"c", 2, 0}, {"d", 2, 1}}, 4, 10,
		QUE_PREEMPT_LOWER_PRIORITY, false, "a,b", NULL},
	    {"one victim is enough", {4, 4, 4}, 3,
		{{"a", 4, 5}, {"b", 3, 0}, {"c", 4, 5}}, 2, 10,
		QUE_PREEMPT_LOWER_PRIORITY, false, "b", NULL},
	    {"equal priorities: no candidates", {4, 4}, 2,
		{{"a", 4, 10}, {"b", 4, 10}}, 4, 10, QUE_PREEMPT_LOWER_PRIORITY,
		false, NULL, "allows to fit only 0 out of 4 pod(s)"},
	    {"too big for an empty topology: NoFit", {4, 4}, 2, {{"a", 4, 0}},
		5, 10, QUE_PREEMPT_LOWER_PRIORITY, false, NULL,
		"allows to fit only 4 out of 5 pod(s)"},
	    {"the ClusterQueue never preempts", {4, 4}, 2,
		{{"a", 4, 0}, {"b", 4, 0}}, 4, 10, QUE_PREEMPT_NEVER, false,
		NULL, "allows to fit only 0 out of 4 pod(s)"},
	    {"a hook without check_without", {4, 4}, 2,
		{{"a", 4, 0}, {"b", 4, 0}}, 4, 10, QUE_PREEMPT_LOWER_PRIORITY,
		true, NULL, "allows to fit only 0 out of 4 pod(s)"},
	};
	const size_t n = sizeof(cases) / sizeof(cases[0]);
	size_t i, j;

	/* Every case with the classical search, then with fair sharing's. */
	for (i = 0; i < 2 * n; i++) {
		const struct tas_preempt_case *c = &cases[i % n];
		bool fair = i >= n;
		struct fake_racks t = {{0}, 0, {{{0}, 0, 0}}, 0, 0};
		struct que_tas_hook h = {
		    &t, racks_check, racks_assume, racks_without};
		struct que_preemption p = {0};
		const struct adm_decision *d;
		char got[128];
		ssize_t rack;

		teardown();
		setup();
		memcpy(t.cap, c->cap, sizeof(t.cap));
		t.n_racks = c->n_racks;
		if (c->no_without)
			h.check_without = NULL;
		p.within_cluster_queue = c->within;
		if (fair) {
			struct que_fair_config fc = {true, 2,
			    {QUE_FAIR_LE_FINAL_SHARE,
				QUE_FAIR_LT_INITIAL_SHARE}};

			que_fair_sharing_set(st, &fc);
		}
		queues_preempting(&p);
		que_set_tas_hook(st, &h);
		for (j = 0; j < 6 && c->run[j].uid; j++) {
			job_prio(c->run[j].uid, c->run[j].pods, c->run[j].prio);
			cycle();
			d = find(c->run[j].uid);
			cr_assert(d && d->kind == ADM_ADMIT, "%s: %s admitted",
			    c->name, c->run[j].uid);
		}
		job_prio("pre", c->pods, c->prio);
		cycle();
		d = find("pre");
		cr_assert_not_null(d, "%s", c->name);
		if (c->message)
			cr_assert(strstr(d->message, c->message) != NULL,
			    "%s: %s", c->name, d->message);
		if (c->victims == NULL) {
			cr_assert_eq(d->kind, ADM_PENDING, "%s", c->name);
			cr_assert_eq(
			    t.n_placed, j, "%s: nothing placed", c->name);
			continue;
		}
		cr_assert_eq(
		    d->kind, ADM_PREEMPT, "%s: %s", c->name, d->message);
		cr_assert_str_eq(adm_reason_string(d->reason),
		    "WaitingForPreemptedWorkloads");
		victims_of(d, got, sizeof(got));
		cr_assert_str_eq(got, c->victims, "%s%s", c->name,
		    fair ? " (fair sharing)" : "");
		for (j = 0; j < d->n_victims; j++)
			cr_assert_str_eq(
			    adm_preempt_reason_string(d->victims[j].reason),
			    "InClusterQueue");
		/* The victims stop: released from the engine and the
		 * topology; the preemptor is admitted in their rack. */
		rack = rack_of(&t, d->victims[0].uid);
		for (j = 0; j < d->n_victims; j++) {
			const char *v = find("pre")->victims[j].uid;

			racks_release(&t, v);
			cr_assert_eq(
			    que_workload_release(st, v, clock_ns, NULL), CU_OK);
		}
		que_tas_capacity_changed(st);
		cycle();
		d = find("pre");
		cr_assert(
		    d && d->kind == ADM_ADMIT, "%s: pre admitted", c->name);
		cr_assert_eq(rack_of(&t, "pre"), rack, "%s", c->name);
	}
}

/* ClusterQueue "cq" with 10 cpu of flavor "tas", preempting lower
 * priorities within it. */
static void small_queues(void)
{
	static const char *const covered[] = {"cpu"};
	struct que_flavor_spec ft = {.name = "tas"};
	struct que_resource_quota rq = {"cpu", 10000, false, 0, false, 0};
	struct que_flavor_quotas fq = {"tas", &rq, 1};
	struct que_resource_group g = {covered, 1, &fq, 1};
	struct que_cq_spec s = {0};
	struct que_lq_spec lq = {"ns", "q", "cq", QUE_STOP_NONE};
	cu_error err;

	cr_assert_eq(que_flavor_set(st, &ft, &err), CU_OK);
	s.name = "cq";
	s.groups = &g;
	s.n_groups = 1;
	s.preemption.within_cluster_queue = QUE_PREEMPT_LOWER_PRIORITY;
	cr_assert_eq(que_cq_set(st, &s, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(que_lq_set(st, &lq, &err), CU_OK, "%s", err.msg);
}

Test(admission_tas, quota_preemption_also_needs_the_topology)
{
	/* Quota for 10 pods, 8 taken in two full racks of 4 (a, c in
	 * rack 0; b, d in rack 1): the preemptor (4 pods) needs 2 more.
	 * Quota alone takes the newest, d then c (the second round, the hook
	 * removed); with the topology there is still no rack of 4, so
	 * the search goes on to b, and fill back gives c back: b and d. */
	static const struct running run[] = {
	    {"a", 3, 0}, {"b", 3, 0}, {"c", 1, 0}, {"d", 1, 0}};
	static const char *const want[] = {"b,d", "c,d"};
	size_t round, i;

	for (round = 0; round < 2; round++) {
		struct fake_racks t = {{4, 4}, 2, {{{0}, 0, 0}}, 0, 0};
		struct que_tas_hook h = {
		    &t, racks_check, racks_assume, racks_without};
		const struct adm_decision *d;
		char got[64];

		teardown();
		setup();
		small_queues();
		que_set_tas_hook(st, &h);
		for (i = 0; i < 4; i++) {
			job_prio(run[i].uid, run[i].pods, run[i].prio);
			cycle();
		}
		cr_assert_eq(rack_of(&t, "c"), 0);
		cr_assert_eq(rack_of(&t, "d"), 1);
		if (round == 1)
			que_set_tas_hook(st, NULL);
		job_prio("pre", 4, 10);
		cycle();
		d = find("pre");
		cr_assert(
		    d && d->kind == ADM_PREEMPT, "%s", d ? d->message : "");
		cr_assert_str_eq(d->message,
		    "couldn't assign flavors to pod set main: insufficient "
		    "unused quota for cpu in flavor tas, 2 more needed. "
		    "Pending the preemption of 2 workload(s)");
		victims_of(d, got, sizeof(got));
		cr_assert_str_eq(got, want[round], "round %zu", round);
	}
}

/* A hook answering every check with `code` (1: no room, 2: the flavor
 * cannot serve the request) and every empty-topology check with
 * `empty_code`. */
struct fixed_answers {
	int code, empty_code;
};

static int fixed_check(void *ctx, const struct que_wl *wl, size_t podset,
    const struct que_flavor *f, int32_t count, char *msg, size_t len)
{
	const struct fixed_answers *a = ctx;

	(void)wl;
	(void)podset;
	(void)count;
	snprintf(msg, len,
	    a->code == 2 ? "Flavor \"%s\" does not contain the requested level"
			 : "topology in flavor %s is full",
	    f->name);
	return a->code;
}

static int fixed_without(void *ctx, const struct que_wl *wl, size_t podset,
    const struct que_flavor *f, int32_t count, const struct que_wl *const *gone,
    size_t n_gone, bool empty, char *msg, size_t len)
{
	const struct fixed_answers *a = ctx;

	(void)wl;
	(void)podset;
	(void)count;
	(void)gone;
	(void)n_gone;
	(void)empty;
	snprintf(msg, len, "still full in %s", f->name);
	return a->empty_code;
}

/* Kueue's UnadmittedWorkloadsObservability reasons for topology NoFits:
 * NoMatchingFlavor when the flavor cannot serve the request (no such
 * level), TopologyPlacementFailed when even an empty topology has no
 * room, WaitingForQuota when room would come only from preemptions the
 * ClusterQueue may not make (or cannot be simulated). */
Test(admission_tas, nofit_reasons_as_kueue)
{
	static const struct {
		int code, empty_code;
		bool with_without;
		const char *reason;
	} cases[] = {
	    {2, 0, true, "NoMatchingFlavor"},
	    {1, 1, true, "TopologyPlacementFailed"},
	    {1, 0, true, "WaitingForQuota"},
	    {1, 1, false, "WaitingForQuota"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fixed_answers a = {cases[i].code, cases[i].empty_code};
		struct que_tas_hook h = {&a, fixed_check, fake_assume,
		    cases[i].with_without ? fixed_without : NULL};
		const struct adm_decision *d;

		teardown();
		setup();
		queues(false);
		que_set_tas_hook(st, &h);
		job("w", 2);
		cycle();
		d = find("w");
		cr_assert(d != NULL && d->kind == ADM_PENDING, "case %zu", i);
		cr_assert_str_eq(adm_reason_string(d->reason), cases[i].reason,
		    "case %zu: %s", i, d->message);
	}
}
