/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/queues_afs_test.c - admission fair sharing in the queueing
 * model: Kueue's decay of consumed resources and the usage formula
 * (table-driven), and the order of pending workloads in a ClusterQueue
 * that opts in (lower LocalQueue usage first, re-keyed when a usage is
 * set, classical order when it does not opt in or the switch is off).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "queues/queues.h"

static que_state *st;

static void setup(void)
{
	cr_assert_eq(que_state_new(&st, NULL), CU_OK);
}

static void teardown(void)
{
	que_state_free(st);
}

TestSuite(queues_afs, .init = setup, .fini = teardown);

#define NEAR(a, b) (fabs((a) - (b)) < 1e-9 * (1.0 + fabs(b)))

/* ---- arithmetic ----------------------------------------------------- */

Test(queues_afs, alpha_table)
{
	static const struct {
		double elapsed, half, want;
	} t[] = {
	    {60, 60, 0.5},			    /* one half-life */
	    {120, 60, 0.75},			    /* two */
	    {30, 60, 1.0 - 0.70710678118654752440}, /* half of one */
	    {0, 60, 0.0},			    /* nothing elapsed */
	    {60, 0, 0.0}, /* half-life 0: Kueue keeps no history */
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		cr_expect(
		    NEAR(que_afs_alpha(t[i].elapsed, t[i].half), t[i].want),
		    "case %zu: %g", i, que_afs_alpha(t[i].elapsed, t[i].half));
}

Test(queues_afs, decay_table)
{
	static const struct {
		double old, live, elapsed, half, want;
	} t[] = {
	    /* old*(1-a) + live*a */
	    {8, 0, 60, 60, 4},	 /* idle queue halves per half-life */
	    {8, 0, 120, 60, 2},	 /* and quarters after two */
	    {0, 4, 60, 60, 2},	 /* a busy queue climbs toward live */
	    {10, 2, 120, 60, 4}, /* 10*0.25 + 2*0.75 */
	    {5, 100, 0, 60, 5},	 /* no time: unchanged */
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		double c = t[i].old;

		que_afs_decay(&c, &t[i].live, 1, t[i].elapsed, t[i].half);
		cr_expect(NEAR(c, t[i].want), "case %zu: got %g want %g", i, c,
		    t[i].want);
	}
}

Test(queues_afs, usage_table)
{
	static const double consumed[] = {2, 1024};
	static const double penalty[] = {1, 0};
	static const double w21[] = {2, 1};
	static const double w01[] = {0, 1};
	static const struct {
		const double *pen, *w;
		double lqw, want;
	} t[] = {
	    {NULL, NULL, 1, 1026},    /* unlisted resources weigh 1 */
	    {penalty, NULL, 1, 1027}, /* penalties count */
	    {penalty, w21, 1, 1030},  /* 2*(2+1) + 1024 */
	    {NULL, w01, 2, 512},      /* resource weight 0; LQ weight 2 */
	    {NULL, NULL, 0.5, 2052},  /* a lighter queue looks busier */
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		cr_expect(
		    NEAR(que_afs_usage(consumed, t[i].pen, t[i].w, 2, t[i].lqw),
			t[i].want),
		    "case %zu", i);
	/* Weight 0: last, never NaN. */
	cr_expect(isinf(que_afs_usage(consumed, NULL, NULL, 2, 0)));
	cr_expect(isinf(que_afs_usage(consumed, NULL, NULL, 0, 0)));
}

/* ---- ordering --------------------------------------------------------- */

static const char *const cpu[] = {"cpu"};

static void mk_cq(const char *name, bool fair)
{
	struct que_flavor_spec f = {.name = "default"};
	struct que_resource_quota rq = {"cpu", 1000000, false, 0, false, 0};
	struct que_flavor_quotas fq = {"default", &rq, 1};
	struct que_resource_group g = {cpu, 1, &fq, 1};
	struct que_cq_spec s = {
	    .name = name, .groups = &g, .n_groups = 1, .admission_fair = fair};

	cr_assert_eq(que_flavor_set(st, &f, NULL), CU_OK);
	cr_assert_eq(que_cq_set(st, &s, NULL), CU_OK);
}

static void mk_lq(const char *name, const char *cq)
{
	struct que_lq_spec lq = {.ns = "ns", .name = name, .cluster_queue = cq};

	cr_assert_eq(que_lq_set(st, &lq, NULL), CU_OK);
}

static void add_wl(const char *uid, const char *lq, int32_t prio, int64_t ts)
{
	struct que_request r = {"cpu", 1000};
	struct que_podset_spec ps = {
	    .count = 1, .requests = &r, .n_requests = 1};
	struct que_workload_spec w = {.uid = uid,
	    .ns = "ns",
	    .name = uid,
	    .queue_name = lq,
	    .priority = prio,
	    .created_ns = ts,
	    .namespace_eligible = true,
	    .podsets = &ps,
	    .n_podsets = 1};
	cu_error err;

	cr_assert_eq(que_workload_add(st, &w, &err), CU_OK, "%s", err.msg);
}

/* Pop every head in turn (each given back as admitted-and-forgotten by
 * removing it) and write their uids, comma-separated, to out. */
static void drain(char *out, size_t len)
{
	struct que_wl **heads;
	size_t n;
	cu_error err;

	out[0] = '\0';
	for (;;) {
		char uid[32];

		cr_assert_eq(que_pop_heads(st, 0, &heads, &n, NULL), CU_OK);
		if (n == 0)
			break;
		cr_assert_eq(n, 1);
		snprintf(uid, sizeof(uid), "%s", heads[0]->uid);
		que_requeue(st, heads[0], QUE_RQ_FAILED_AFTER_NOMINATION);
		cr_assert_eq(
		    que_check_invariants(st, &err), CU_OK, "%s", err.msg);
		cr_assert_eq(que_workload_remove(st, uid, NULL), CU_OK);
		snprintf(out + strlen(out), len - strlen(out), "%s%s",
		    out[0] != '\0' ? "," : "", uid);
	}
}

/* Two LocalQueues a and b in one ClusterQueue, three workloads each,
 * a's older; then b's usage below a's. */
static void two_queues(bool fair, bool on)
{
	que_admission_fair_sharing_set(st, on);
	mk_cq("cq", fair);
	mk_lq("a", "cq");
	mk_lq("b", "cq");
	add_wl("a1", "a", 0, 1);
	add_wl("a2", "a", 0, 2);
	add_wl("a3", "a", 0, 3);
	add_wl("b1", "b", 0, 4);
	add_wl("b2", "b", 0, 5);
	add_wl("b3", "b", 0, 6);
	cr_assert_eq(que_rebuild(st, NULL), CU_OK);
	cr_assert_eq(que_lq_set_afs(st, "ns", "a", 10.0, NULL), CU_OK);
	cr_assert_eq(que_lq_set_afs(st, "ns", "b", 1.0, NULL), CU_OK);
}

Test(queues_afs, order_table)
{
	static const struct {
		bool fair, on;
		const char *want;
	} t[] = {
	    /* opts in: the lower usage first, FIFO inside a queue */
	    {true, true, "b1,b2,b3,a1,a2,a3"},
	    /* does not opt in: classical */
	    {false, true, "a1,a2,a3,b1,b2,b3"},
	    /* the Configuration has no admissionFairSharing */
	    {true, false, "a1,a2,a3,b1,b2,b3"},
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char got[128];

		que_state_free(st);
		cr_assert_eq(que_state_new(&st, NULL), CU_OK);
		two_queues(t[i].fair, t[i].on);
		drain(got, sizeof(got));
		cr_expect_str_eq(got, t[i].want, "case %zu", i);
	}
}

/* Usage comes before priority, as in Kueue's queueOrderingFunc. */
Test(queues_afs, usage_before_priority)
{
	char got[128];

	two_queues(true, true);
	add_wl("a-high", "a", 100, 7);
	drain(got, sizeof(got));
	cr_expect_str_eq(got, "b1,b2,b3,a-high,a1,a2,a3");
}

/* A sample that changes the usages re-keys the heap: the next pop sees
 * the new order although nothing was pushed. */
Test(queues_afs, new_sample_rekeys_the_heap)
{
	struct que_wl **heads;
	size_t n;
	char got[128];

	two_queues(true, true);
	cr_assert_eq(que_pop_heads(st, 0, &heads, &n, NULL), CU_OK);
	cr_assert_eq(n, 1);
	cr_expect_str_eq(heads[0]->uid, "b1");
	que_requeue(st, heads[0], QUE_RQ_FAILED_AFTER_NOMINATION);
	cr_assert_eq(que_lq_set_afs(st, "ns", "b", 20.0, NULL), CU_OK);
	drain(got, sizeof(got));
	cr_expect_str_eq(got, "a1,a2,a3,b1,b2,b3");
}

/* Turning the switch on re-orders workloads already queued. */
Test(queues_afs, switch_on_reorders)
{
	char got[128];

	two_queues(true, false);
	que_admission_fair_sharing_set(st, true);
	drain(got, sizeof(got));
	cr_expect_str_eq(got, "b1,b2,b3,a1,a2,a3");
}

Test(queues_afs, unknown_queue)
{
	cu_error err;

	cr_expect_eq(que_lq_set_afs(st, "ns", "nope", 1.0, &err), CU_ENOTFOUND);
}
