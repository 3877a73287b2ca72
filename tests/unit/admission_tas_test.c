/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/admission_tas_test.c - the scheduling cycle with the
 * topology-aware scheduling hook (queues.h que_tas_hook), here a fake
 * topology of N free pods on flavor "tas": a podSet that does not fit
 * stays pending with the hook's message; two podSets that each fit but
 * not together are not both admitted in one cycle (assume charges the
 * first); a full TAS flavor falls through to the next flavor; without
 * the hook nothing changes.
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
	struct que_tas_hook h = {&t, fake_check, fake_assume};
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
	struct que_tas_hook h = {&t, fake_check, fake_assume};
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
	struct que_tas_hook h = {&t, fake_check, fake_assume};
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
