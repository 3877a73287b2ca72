/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/queues_hashes_test.c - scheduling equivalence hashes
 * (que_wl_shape_hash, que_cq_scheduling_hashes): Workloads asking for the
 * same thing share a shape whatever their names and queues; a different
 * request, count or priority is another shape; the ClusterQueue's count
 * of distinct shapes splits into active (the heap) and inadmissible
 * (parked after a NoFit), all inadmissible while it is stopped.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "queues/queues.h"

static que_state *st;
static int64_t clock_ns = 1;

static void setup(void)
{
	static const char *const cpu[] = {"cpu"};
	struct que_flavor_spec f = {.name = "default"};
	struct que_resource_quota rq = {"cpu", 1000, false, 0, false, 0};
	struct que_flavor_quotas fq = {"default", &rq, 1};
	struct que_resource_group g = {cpu, 1, &fq, 1};
	struct que_cq_spec cq = {.name = "cq", .groups = &g, .n_groups = 1};
	struct que_lq_spec a = {"ns", "a", "cq", QUE_STOP_NONE};
	struct que_lq_spec b = {"other", "b", "cq", QUE_STOP_NONE};
	cu_error err;

	cr_assert_eq(que_state_new(&st, NULL), CU_OK);
	cr_assert_eq(que_flavor_set(st, &f, &err), CU_OK);
	cr_assert_eq(que_cq_set(st, &cq, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(que_lq_set(st, &a, &err), CU_OK);
	cr_assert_eq(que_lq_set(st, &b, &err), CU_OK);
}

static void teardown(void)
{
	que_state_free(st);
}

TestSuite(queues_hashes, .init = setup, .fini = teardown);

static void add(const char *uid, const char *ns, const char *lq,
    int64_t cpu_milli, int32_t count, int32_t prio)
{
	struct que_request r = {"cpu", cpu_milli};
	struct que_podset_spec ps = {0};
	struct que_workload_spec w = {0};
	cu_error err;

	ps.name = "main";
	ps.count = count;
	ps.requests = &r;
	ps.n_requests = 1;
	w.uid = uid;
	w.ns = ns;
	w.name = uid;
	w.queue_name = lq;
	w.priority = prio;
	w.created_ns = clock_ns++;
	w.namespace_eligible = true;
	w.podsets = &ps;
	w.n_podsets = 1;
	cr_assert_eq(que_workload_add(st, &w, &err), CU_OK, "%s", err.msg);
}

static void counts(size_t want_active, size_t want_inadmissible)
{
	size_t act, in;
	cu_error err;

	cr_assert_eq(
	    que_cq_scheduling_hashes(st, que_cq_get(st, "cq"), &act, &in, &err),
	    CU_OK);
	cr_assert_eq(act, want_active, "active %zu", act);
	cr_assert_eq(in, want_inadmissible, "inadmissible %zu", in);
}

Test(queues_hashes, same_shape_whatever_the_names)
{
	add("w1", "ns", "a", 500, 2, 0);
	add("w2", "other", "b", 500, 2, 0);
	cr_assert_eq(que_wl_shape_hash(st, que_workload_get(st, "w1")),
	    que_wl_shape_hash(st, que_workload_get(st, "w2")));
	add("w3", "ns", "a", 600, 2, 0);  /* another request */
	add("w4", "ns", "a", 500, 3, 0);  /* another count */
	add("w5", "ns", "a", 500, 2, 10); /* another priority */
	counts(4, 0);
}

Test(queues_hashes, parked_ones_are_inadmissible)
{
	struct que_wl **heads;
	size_t n;
	cu_error err;

	add("big1", "ns", "a", 5000, 1, 0);
	add("small", "ns", "a", 100, 1, 0);
	add("big2", "other", "b", 5000, 1, 0);
	cr_assert_eq(que_pop_heads(st, clock_ns++, &heads, &n, &err), CU_OK);
	cr_assert_eq(n, 1);
	cr_assert_str_eq(heads[0]->uid, "big1");
	que_requeue(st, heads[0], QUE_RQ_NO_FIT);
	counts(2, 1); /* heap: small, big2; parked: big1 */
}

/* Two Workloads counted alike whose pods ask for different things (the
 * Configuration's resources made them equal for quota) are placed
 * differently by topology: two shapes. */
Test(queues_hashes, pods_own_requests_are_part_of_the_shape)
{
	struct que_request counted = {"cpu", 500};
	struct que_request own[] = {{"cpu", 500}, {"memory", 1000}};
	struct que_podset_spec ps = {0};
	struct que_workload_spec w = {0};
	cu_error err;

	add("plain", "ns", "a", 500, 1, 0);
	ps.name = "main";
	ps.count = 1;
	ps.requests = &counted;
	ps.n_requests = 1;
	ps.pod_requests = own;
	ps.n_pod_requests = 2;
	w.uid = w.name = "excluded-memory";
	w.ns = "ns";
	w.queue_name = "a";
	w.created_ns = clock_ns++;
	w.namespace_eligible = true;
	w.podsets = &ps;
	w.n_podsets = 1;
	cr_assert_eq(que_workload_add(st, &w, &err), CU_OK, "%s", err.msg);
	cr_assert_neq(que_wl_shape_hash(st, que_workload_get(st, "plain")),
	    que_wl_shape_hash(st, que_workload_get(st, "excluded-memory")));
	counts(2, 0);
}
