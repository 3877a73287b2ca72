/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/admission_afs_test.c - admission fair sharing in the
 * admission engine: the head a cycle admits comes from the LocalQueue
 * with the lower usage, and within-ClusterQueue preemption names victims
 * of the LocalQueue with the higher usage first (Kueue's
 * CandidatesOrdering), both only in a ClusterQueue that opts in.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "admission/admission.h"

static que_state *st;
static int64_t clock_ns = 1;

static void setup(void)
{
	cr_assert_eq(que_state_new(&st, NULL), CU_OK);
	que_admission_fair_sharing_set(st, true);
}

static void teardown(void)
{
	que_state_free(st);
}

TestSuite(admission_afs, .init = setup, .fini = teardown);

static const char *const cpu[] = {"cpu"};

static void mk(bool fair, int64_t quota)
{
	struct que_flavor_spec f = {.name = "default"};
	struct que_resource_quota rq = {"cpu", quota, false, 0, false, 0};
	struct que_flavor_quotas fq = {"default", &rq, 1};
	struct que_resource_group g = {cpu, 1, &fq, 1};
	struct que_cq_spec s = {
	    .name = "cq", .groups = &g, .n_groups = 1, .admission_fair = fair};
	struct que_lq_spec a = {.ns = "ns", .name = "a", .cluster_queue = "cq"};
	struct que_lq_spec b = {.ns = "ns", .name = "b", .cluster_queue = "cq"};

	s.preemption.within_cluster_queue = QUE_PREEMPT_LOWER_PRIORITY;
	cr_assert_eq(que_flavor_set(st, &f, NULL), CU_OK);
	cr_assert_eq(que_cq_set(st, &s, NULL), CU_OK);
	cr_assert_eq(que_lq_set(st, &a, NULL), CU_OK);
	cr_assert_eq(que_lq_set(st, &b, NULL), CU_OK);
}

static void add(const char *uid, const char *lq, int32_t prio)
{
	struct que_request r = {"cpu", 1000};
	struct que_podset_spec ps = {
	    .count = 1, .requests = &r, .n_requests = 1};
	struct que_workload_spec w = {.uid = uid,
	    .ns = "ns",
	    .name = uid,
	    .queue_name = lq,
	    .priority = prio,
	    .created_ns = clock_ns++,
	    .namespace_eligible = true,
	    .podsets = &ps,
	    .n_podsets = 1};
	cu_error err;

	cr_assert_eq(que_workload_add(st, &w, &err), CU_OK, "%s", err.msg);
}

/* One cycle; the uid it admits or, when it preempts, its first victim
 * (as "victim:<uid>"), or "" . */
static void cycle(char *out, size_t len)
{
	struct adm_result res;
	cu_error err;
	size_t i;

	out[0] = '\0';
	adm_result_init(&res);
	cr_assert_eq(
	    adm_cycle(st, clock_ns++, &res, &err), CU_OK, "%s", err.msg);
	for (i = 0; i < res.n; i++) {
		if (res.v[i].kind == ADM_ADMIT)
			snprintf(out, len, "%s", res.v[i].uid);
		else if (res.v[i].kind == ADM_PREEMPT && res.v[i].n_victims)
			snprintf(
			    out, len, "victim:%s", res.v[i].victims[0].uid);
	}
	adm_result_dispose(&res);
	cr_assert_eq(que_check_invariants(st, &err), CU_OK, "%s", err.msg);
}

Test(admission_afs, head_and_victim_table)
{
	static const struct {
		bool fair;
		const char *first, *victim;
	} t[] = {
	    /* a's usage 10, b's 1: b's newer workload goes first, and a's
	     * (older admission) is preempted before b's */
	    {true, "b1", "victim:a1"},
	    /* classical: the older first, the most recent admission is
	     * the victim */
	    {false, "a1", "victim:b1"},
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char got[64];

		que_state_free(st);
		cr_assert_eq(que_state_new(&st, NULL), CU_OK);
		que_admission_fair_sharing_set(st, true);
		mk(t[i].fair, 1000);
		add("a1", "a", 0);
		add("b1", "b", 0);
		cr_assert_eq(que_rebuild(st, NULL), CU_OK);
		cr_assert_eq(que_lq_set_afs(st, "ns", "a", 10.0, NULL), CU_OK);
		cr_assert_eq(que_lq_set_afs(st, "ns", "b", 1.0, NULL), CU_OK);
		cycle(got, sizeof(got));
		cr_expect_str_eq(got, t[i].first, "case %zu: first", i);
	}
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char got[64];

		que_state_free(st);
		cr_assert_eq(que_state_new(&st, NULL), CU_OK);
		que_admission_fair_sharing_set(st, true);
		mk(t[i].fair, 2000);
		/* a1 admitted first, b1 later: both hold quota */
		add("a1", "a", 0);
		cycle(got, sizeof(got));
		cr_assert_str_eq(got, "a1");
		add("b1", "b", 0);
		cycle(got, sizeof(got));
		cr_assert_str_eq(got, "b1");
		cr_assert_eq(que_lq_set_afs(st, "ns", "a", 10.0, NULL), CU_OK);
		cr_assert_eq(que_lq_set_afs(st, "ns", "b", 1.0, NULL), CU_OK);
		add("hi", "b", 100);
		cycle(got, sizeof(got));
		cr_expect_str_eq(got, t[i].victim, "case %zu: victim", i);
	}
}
