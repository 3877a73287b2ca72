/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/queues_quota_test.c - the queueing model on its own: quota
 * arithmetic with lending and borrowing limits, heap order, requeue
 * backoff, configuration validation, cohort cycles and the invariant
 * checker catching corrupted usage.
 */
#include <criterion/criterion.h>
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

TestSuite(queues, .init = setup, .fini = teardown);

static const char *const cpu[] = {"cpu"};

static int cq(const char *name, const char *cohort, int64_t nominal,
    bool has_ll, int64_t ll, cu_error *err)
{
	struct que_resource_quota rq = {"cpu", nominal, false, 0, has_ll, ll};
	struct que_flavor_quotas fq = {"default", &rq, 1};
	struct que_resource_group g = {cpu, 1, &fq, 1};
	struct que_cq_spec s = {
	    .name = name, .cohort = cohort, .groups = &g, .n_groups = 1};

	return que_cq_set(st, &s, err);
}

static uint32_t fr_default_cpu(void)
{
	const struct que_flavor *f = que_flavor_get(st, "default");

	cr_assert_not_null(f);
	return que_fr_find(st, f->id, 0);
}

Test(queues, lending_limit_keeps_local_quota_out_of_the_cohort)
{
	struct que_flavor_spec f = {.name = "default"};
	uint32_t fr;

	cr_assert_eq(que_flavor_set(st, &f, NULL), CU_OK);
	cr_assert_eq(cq("lend-a", "co", 3000, true, 2000, NULL), CU_OK);
	cr_assert_eq(cq("lend-b", "co", 2000, true, 2000, NULL), CU_OK);
	cr_assert_eq(que_rebuild(st, NULL), CU_OK);
	fr = fr_default_cpu();
	cr_assert_eq(
	    que_node_subtree(&que_cohort_get(st, "co")->node, fr), 4000);
	cr_assert_eq(
	    que_node_local_quota(&que_cq_get(st, "lend-a")->node, fr), 1000);
	cr_assert_eq(
	    que_node_potential_available(&que_cq_get(st, "lend-b")->node, fr),
	    4000);
	cr_assert_eq(
	    que_node_potential_available(&que_cq_get(st, "lend-a")->node, fr),
	    5000);
	/* Usage within localQuota stays invisible to the cohort. */
	que_node_add_usage(&que_cq_get(st, "lend-a")->node, fr, 1500);
	cr_assert_eq(que_node_usage(&que_cohort_get(st, "co")->node, fr), 500);
	cr_assert_eq(
	    que_node_available(&que_cq_get(st, "lend-b")->node, fr), 3500);
	que_node_remove_usage(&que_cq_get(st, "lend-a")->node, fr, 1500);
	cr_assert_eq(que_node_usage(&que_cohort_get(st, "co")->node, fr), 0);
}

Test(queues, invalid_specs_are_rejected_with_a_message)
{
	cu_error err;
	struct que_resource_quota rq = {"memory", 1, false, 0, false, 0};
	struct que_flavor_quotas fq = {"default", &rq, 1};
	struct que_resource_group g = {cpu, 1, &fq, 1};
	struct que_cq_spec s = {.name = "x", .groups = &g, .n_groups = 1};

	cr_assert_eq(cq("a", NULL, 1000, true, 0, &err), CU_EINVAL);
	cr_assert(strstr(err.msg, "must be nil when cohort is empty"));
	cr_assert_eq(que_cq_set(st, &s, &err), CU_EINVAL);
	cr_assert(strstr(err.msg, "not in coveredResources"), "%s", err.msg);
	cr_assert_eq(cq("", NULL, 1000, false, 0, &err), CU_EINVAL);
	cr_assert_eq(cq("neg", NULL, -1, false, 0, &err), CU_EINVAL);
	cr_assert_eq(que_cq_delete(st, "nope", &err), CU_ENOTFOUND);
	cr_assert_eq(que_workload_remove(st, "nope", &err), CU_ENOTFOUND);
}

static void add_wl(const char *uid, int32_t prio, int64_t ts)
{
	struct que_request r = {"cpu", 1000};
	struct que_podset_spec ps = {
	    .count = 1, .requests = &r, .n_requests = 1};
	struct que_workload_spec w = {.uid = uid,
	    .ns = "ns",
	    .name = uid,
	    .queue_name = "q",
	    .priority = prio,
	    .created_ns = ts,
	    .namespace_eligible = true,
	    .podsets = &ps,
	    .n_podsets = 1};
	cu_error err;

	cr_assert_eq(que_workload_add(st, &w, &err), CU_OK, "%s", err.msg);
}

static const char *pop_one(int64_t now)
{
	struct que_wl **heads;
	size_t n;
	const char *uid;

	cr_assert_eq(que_pop_heads(st, now, &heads, &n, NULL), CU_OK);
	if (n == 0)
		return NULL;
	cr_assert_eq(n, 1);
	uid = heads[0]->uid;
	/* Park it so the next pop shows the next one. */
	que_requeue(st, heads[0], QUE_RQ_NO_FIT);
	return uid;
}

Test(queues, heap_orders_by_priority_then_timestamp_then_uid)
{
	struct que_lq_spec lq = {"ns", "q", "a", QUE_STOP_NONE};
	struct que_flavor_spec f = {.name = "default"};
	const char *want[] = {"hi", "old", "b-same", "c-same", "low"};
	size_t i;

	cr_assert_eq(que_flavor_set(st, &f, NULL), CU_OK);
	cr_assert_eq(cq("a", NULL, 1000, false, 0, NULL), CU_OK);
	cr_assert_eq(que_lq_set(st, &lq, NULL), CU_OK);
	add_wl("low", -5, 1);
	add_wl("c-same", 0, 50);
	add_wl("b-same", 0, 50);
	add_wl("old", 0, 10);
	add_wl("hi", 9, 100);
	for (i = 0; i < 5; i++)
		cr_assert_str_eq(pop_one(0), want[i]);
	cr_assert_null(pop_one(0), "inadmissible workloads came back");
	cr_assert_eq(que_check_invariants(st, NULL), CU_OK);
}

Test(queues, backoff_holds_a_workload_until_its_time)
{
	struct que_lq_spec lq = {"ns", "q", "a", QUE_STOP_NONE};
	struct que_flavor_spec f = {.name = "default"};

	cr_assert_eq(que_flavor_set(st, &f, NULL), CU_OK);
	cr_assert_eq(cq("a", NULL, 1000, false, 0, NULL), CU_OK);
	cr_assert_eq(que_lq_set(st, &lq, NULL), CU_OK);
	add_wl("w", 0, 1);
	cr_assert_eq(que_rebuild(st, NULL), CU_OK);
	cr_assert_eq(que_workload_backoff(st, "w", 500, NULL), CU_OK);
	cr_assert_null(pop_one(499));
	cr_assert_str_eq(pop_one(500), "w");
	cr_assert_eq(que_check_invariants(st, NULL), CU_OK);
}

Test(queues, cohort_cycle_deactivates_its_queues)
{
	struct que_cohort_spec x = {"x", "y", NULL, 0};
	struct que_cohort_spec y = {"y", "x", NULL, 0};
	struct que_flavor_spec f = {.name = "default"};

	cr_assert_eq(que_flavor_set(st, &f, NULL), CU_OK);
	cr_assert_eq(que_cohort_set(st, &x, NULL), CU_OK);
	cr_assert_eq(que_cohort_set(st, &y, NULL), CU_OK);
	cr_assert_eq(cq("a", "x", 1000, false, 0, NULL), CU_OK);
	cr_assert_eq(cq("b", "free", 1000, false, 0, NULL), CU_OK);
	cr_assert_eq(que_rebuild(st, NULL), CU_OK);
	cr_assert(!que_cq_get(st, "a")->active);
	cr_assert(que_cq_get(st, "b")->active);
	cr_assert_eq(que_flavor_delete(st, "default", NULL), CU_OK);
	cr_assert_eq(que_rebuild(st, NULL), CU_OK);
	cr_assert(!que_cq_get(st, "b")->active);
	cr_assert_str_eq(
	    que_cq_get(st, "b")->inactive_reason, "FlavorNotFound");
}

/* A refused spec leaves the ClusterQueue known, inactive with the
 * reason and the message (a new one, or one that keeps its old spec);
 * an accepted spec makes it active again. */
Test(queues, refused_cluster_queue_is_inactive_with_the_reason)
{
	struct que_flavor_spec f = {.name = "default"};
	struct que_cq *q;
	cu_error err;

	cr_assert_eq(que_flavor_set(st, &f, NULL), CU_OK);
	cr_assert_eq(que_cq_refuse(st, "new", "bad groups", &err), CU_OK);
	cr_assert_eq(cq("old", NULL, 1000, false, 0, NULL), CU_OK);
	cr_assert_eq(que_rebuild(st, NULL), CU_OK);
	cr_assert(que_cq_get(st, "old")->active);
	cr_assert_eq(que_cq_refuse(st, "old", "bad quota", &err), CU_OK);
	cr_assert_eq(que_rebuild(st, NULL), CU_OK);
	q = que_cq_get(st, "new");
	cr_assert_not_null(q, "a refused ClusterQueue is not missing");
	cr_assert(!q->active);
	cr_assert_str_eq(q->inactive_reason, "InvalidSpec");
	cr_assert_str_eq(q->refused, "bad groups");
	q = que_cq_get(st, "old");
	cr_assert(!q->active);
	cr_assert_str_eq(q->refused, "bad quota");
	cr_assert_eq(q->n_groups, 1, "the spec it had is kept");
	cr_assert_eq(cq("old", NULL, 2000, false, 0, NULL), CU_OK);
	cr_assert_eq(que_rebuild(st, NULL), CU_OK);
	cr_assert(que_cq_get(st, "old")->active);
	cr_assert_null(que_cq_get(st, "old")->refused);
	cr_assert_eq(que_check_invariants(st, &err), CU_OK, "%s", err.msg);
}

Test(queues, invariant_checker_catches_corrupted_usage)
{
	struct que_flavor_spec f = {.name = "default"};
	cu_error err;
	uint32_t fr;

	cr_assert_eq(que_flavor_set(st, &f, NULL), CU_OK);
	cr_assert_eq(cq("a", "co", 1000, false, 0, NULL), CU_OK);
	cr_assert_eq(que_check_invariants(st, &err), CU_OK, "%s", err.msg);
	fr = fr_default_cpu();
	/* Usage no admitted workload accounts for. */
	que_cq_get(st, "a")->node.cells[fr].usage = 7;
	cr_assert_neq(que_check_invariants(st, &err), CU_OK);
	cr_assert(strstr(err.msg, "clusterQueue a"), "%s", err.msg);
	que_cq_get(st, "a")->node.cells[fr].usage = 0;
	que_cohort_get(st, "co")->node.cells[fr].usage = 5000;
	cr_assert_neq(que_check_invariants(st, &err), CU_OK);
	cr_assert(strstr(err.msg, "cohort co"), "%s", err.msg);
	que_cohort_get(st, "co")->node.cells[fr].usage = 0;
}

/* ClusterQueue a (1 cpu of flavor default) behind LocalQueue ns/q: the
 * flavor-resource of default/cpu. */
static uint32_t one_cq_a(void)
{
	struct que_lq_spec lq = {"ns", "q", "a", QUE_STOP_NONE};
	struct que_flavor_spec f = {.name = "default"};

	cr_assert_eq(que_flavor_set(st, &f, NULL), CU_OK);
	cr_assert_eq(cq("a", NULL, 1000, false, 0, NULL), CU_OK);
	cr_assert_eq(que_lq_set(st, &lq, NULL), CU_OK);
	return fr_default_cpu();
}

/* What the controller checks after every turn (que_check_structure):
 * invariants 1, 2 and 4. A quota lowered under existing usage breaks 3 on
 * purpose and passes; usage no Workload accounts for does not. */
Test(queues, structure_check_allows_a_lowered_quota_not_corruption)
{
	struct que_wl **heads;
	size_t n;
	uint32_t fr = one_cq_a();
	cu_error err;

	add_wl("w", 0, 1);
	cr_assert_eq(que_pop_heads(st, 0, &heads, &n, NULL), CU_OK);
	cr_assert_eq(n, 1);
	que_admit(st, heads[0], &fr, 0);
	cr_assert_eq(que_check_structure(st, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(cq("a", NULL, 500, false, 0, NULL), CU_OK);
	cr_assert_eq(que_rebuild(st, NULL), CU_OK);
	cr_assert_eq(que_check_invariants(st, &err), CU_ERANGE);
	cr_assert(strstr(err.msg, "exceeds") != NULL, "%s", err.msg);
	cr_assert_eq(que_check_structure(st, &err), CU_OK, "%s", err.msg);
	fr = fr_default_cpu();
	que_cq_get(st, "a")->node.cells[fr].usage += 7;
	cr_assert_eq(que_check_structure(st, &err), CU_EINVAL);
	cr_assert(strstr(err.msg, "clusterQueue a") != NULL, "%s", err.msg);
	que_cq_get(st, "a")->node.cells[fr].usage -= 7;
	cr_assert_eq(que_check_structure(st, &err), CU_OK, "%s", err.msg);
}

/* A failed eviction write: the victim holds its quota as ADMITTED again
 * (a later cycle may choose it anew) and parked workloads get a look. */
Test(queues, unevict_returns_a_victim_to_admitted_and_wakes_the_queue)
{
	struct que_wl **heads;
	size_t n;
	uint32_t fr = one_cq_a();
	cu_error err;

	add_wl("v", 0, 1);
	add_wl("p", 0, 2);
	cr_assert_eq(que_pop_heads(st, 0, &heads, &n, NULL), CU_OK);
	cr_assert_eq(n, 1);
	cr_assert_str_eq(heads[0]->uid, "v");
	que_admit(st, heads[0], &fr, 0);
	cr_assert_str_eq(pop_one(0), "p"); /* parked: no room */
	cr_assert_eq(que_workload_unevict(st, "v", &err), CU_EINVAL);
	cr_assert(strstr(err.msg, "not being evicted") != NULL, "%s", err.msg);
	que_mark_evicting(st, que_workload_get(st, "v"));
	cr_assert_null(pop_one(0), "p came back without a capacity change");
	cr_assert_eq(que_workload_unevict(st, "v", &err), CU_OK, "%s", err.msg);
	cr_assert_eq(que_workload_get(st, "v")->where, QUE_WL_ADMITTED);
	cr_assert_eq(que_check_invariants(st, NULL), CU_OK);
	/* Still holding its quota, yet the parked one is looked at again. */
	cr_assert_str_eq(pop_one(0), "p");
	cr_assert_eq(que_workload_unevict(st, "nope", &err), CU_ENOTFOUND);
	cr_assert_eq(que_workload_release(st, "v", 5, &err), CU_OK);
	cr_assert_eq(que_check_invariants(st, NULL), CU_OK);
}
