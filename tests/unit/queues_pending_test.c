/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/queues_pending_test.c - que_pending_cq and que_pending_lq,
 * the listing behind Kueue's visibility API: positions in the
 * ClusterQueue and the LocalQueue, offset and limit (with Kueue's
 * bounds), parked and backing-off Workloads merged into the heap's order,
 * priority changes and deletions, unknown queues; the order of a
 * large random queue against a full sort; que_pending_visit; and the
 * Workload record found by name, with its generation.
 *
 * Configuration: ResourceFlavor default; ClusterQueue cq (cpu 10);
 * LocalQueues ns/a and ns/b onto it, ns/orphan onto a missing one.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queues/queues.h"
#include "tests/unit/fixtures.h"

static que_state *st;

static void setup(void)
{
	static const struct que_lq_spec lqs[] = {
	    {"ns", "a", "cq", QUE_STOP_NONE},
	    {"ns", "b", "cq", QUE_STOP_NONE},
	    {"ns", "orphan", "nope", QUE_STOP_NONE},
	};

	st = fx_one_cq(10000, QUE_BEST_EFFORT_FIFO, lqs, 3);
}

static void teardown(void)
{
	que_state_free(st);
}

TestSuite(queues_pending, .init = setup, .fini = teardown);

/* A pending Workload uid named name in ns/queue asking for cpu. */
static void wl_named(const char *uid, const char *name, const char *queue,
    int32_t prio, int64_t created, int64_t cpu)
{
	struct que_request r = {"cpu", cpu};
	struct que_podset_spec ps = {
	    .name = "main", .count = 1, .requests = &r, .n_requests = 1};
	struct que_workload_spec w = {.uid = uid,
	    .ns = "ns",
	    .name = name,
	    .queue_name = queue,
	    .priority = prio,
	    .created_ns = created,
	    .namespace_eligible = true,
	    .podsets = &ps,
	    .n_podsets = 1};
	cu_error err;

	cr_assert_eq(que_workload_add(st, &w, &err), CU_OK, "%s", err.msg);
}

/* A pending Workload uid (also its name) in ns/queue asking for cpu. */
static void wl(const char *uid, const char *queue, int32_t prio,
    int64_t created, int64_t cpu)
{
	wl_named(uid, uid, queue, prio, created, cpu);
}

/* w2 (prio 5, b), w4 (prio 5, a), w1 (a), w3 (a): the queue order. */
static void four(void)
{
	wl("w1", "a", 0, 1, 1000);
	wl("w2", "b", 5, 2, 1000);
	wl("w3", "a", 0, 3, 1000);
	wl("w4", "a", 5, 4, 1000);
}

struct want {
	const char *name;
	int32_t cq, lq;
};

static void check(const struct que_pending_item *it, size_t n,
    const struct want *w, size_t nw)
{
	size_t i;

	cr_assert_eq(n, nw, "%zu items, want %zu", n, nw);
	for (i = 0; i < n; i++) {
		cr_expect_str_eq(it[i].wl->name, w[i].name, "item %zu", i);
		cr_expect_eq(it[i].pos_cq, w[i].cq, "%s: positionInCQ %d",
		    w[i].name, it[i].pos_cq);
		cr_expect_eq(it[i].pos_lq, w[i].lq, "%s: positionInLQ %d",
		    w[i].name, it[i].pos_lq);
	}
}

static void list_cq(int64_t off, int64_t lim, const struct want *w, size_t nw)
{
	struct que_pending_item *it;
	size_t n;
	cu_error err;

	cr_assert_eq(que_pending_cq(st, "cq", off, lim, &it, &n, &err), CU_OK,
	    "%s", err.msg);
	check(it, n, w, nw);
	cu_free(it);
}

static void list_lq(
    const char *lq, int64_t off, int64_t lim, const struct want *w, size_t nw)
{
	struct que_pending_item *it;
	size_t n;
	cu_error err;

	cr_assert_eq(que_pending_lq(st, "ns", lq, off, lim, &it, &n, &err),
	    CU_OK, "%s", err.msg);
	check(it, n, w, nw);
	cu_free(it);
}

Test(queues_pending, cluster_queue_order_and_positions)
{
	const struct want w[] = {
	    {"w2", 0, 0}, {"w4", 1, 0}, {"w1", 2, 1}, {"w3", 3, 2}};

	four();
	list_cq(0, 1000, w, 4);
}

Test(queues_pending, cluster_queue_page_counts_positions_before_it)
{
	const struct want w[] = {{"w4", 1, 0}, {"w1", 2, 1}};

	four();
	list_cq(1, 2, w, 2);
	list_cq(4, 10, NULL, 0);
}

Test(queues_pending, local_queue_page)
{
	const struct want all[] = {{"w4", 1, 0}, {"w1", 2, 1}, {"w3", 3, 2}};
	const struct want page[] = {{"w1", 2, 1}};
	const struct want b[] = {{"w2", 0, 0}};

	four();
	list_lq("a", 0, 1000, all, 3);
	list_lq("a", 1, 1, page, 1);
	list_lq("b", 0, 1000, b, 1);
	list_lq("b", 1, 1000, NULL, 0);
}

Test(queues_pending, kueue_bounds)
{
	const struct want w[] = {
	    {"w2", 0, 0}, {"w4", 1, 0}, {"w1", 2, 1}, {"w3", 3, 2}};

	four();
	list_cq(0, -1, NULL, 0);
	list_cq(-5, 1000, w, 4);
	list_cq(0, INT64_MAX, w, 4);
	list_cq(INT64_MAX, INT64_MAX, NULL, 0);
	list_lq("a", INT64_MAX, 10, NULL, 0);
}

Test(queues_pending, parked_and_backoff_merge_in_order)
{
	struct que_wl **heads;
	size_t n;
	const struct want w[] = {
	    {"w2", 0, 0}, {"w4", 1, 0}, {"w1", 2, 1}, {"w3", 3, 2}};
	cu_error err;

	four();
	/* The head (w2) is parked as inadmissible, w3 backs off. */
	cr_assert_eq(que_pop_heads(st, 10, &heads, &n, &err), CU_OK);
	cr_assert_eq(n, 1);
	cr_assert_str_eq(heads[0]->name, "w2");
	que_requeue(st, heads[0], QUE_RQ_NO_FIT);
	cr_assert_eq(que_workload_get(st, "w2")->where, QUE_WL_INADMISSIBLE);
	cr_assert_eq(que_workload_backoff(st, "w3", 1000000, &err), CU_OK);
	cr_assert_eq(que_workload_get(st, "w3")->where, QUE_WL_BACKOFF);
	list_cq(0, 1000, w, 4);
	cr_assert_eq(que_check_invariants(st, &err), CU_OK, "%s", err.msg);
}

/* que_pending_visit: every pending Workload once, heap ones flagged. */
struct seen {
	char names[8][4];
	bool heap[8];
	size_t n;
};

static void saw(const struct que_wl *w, bool heap, void *payload)
{
	struct seen *s = payload;

	cr_assert_lt(s->n, 8);
	snprintf(s->names[s->n], sizeof(s->names[0]), "%s", w->name);
	s->heap[s->n++] = heap;
}

Test(queues_pending, visit_counts_heap_parked_and_backoff)
{
	struct que_wl **heads;
	struct seen s = {.n = 0};
	size_t n, i, inheap = 0;
	cu_error err;

	four();
	cr_assert_eq(que_pop_heads(st, 10, &heads, &n, &err), CU_OK);
	que_requeue(st, heads[0], QUE_RQ_NO_FIT);
	cr_assert_eq(que_workload_backoff(st, "w3", 1000000, &err), CU_OK);
	que_pending_visit(st, que_cq_get(st, "cq"), saw, &s);
	cr_assert_eq(s.n, 4);
	for (i = 0; i < s.n; i++) {
		bool parked = strcmp(s.names[i], "w2") == 0 ||
			      strcmp(s.names[i], "w3") == 0;

		cr_expect_eq(s.heap[i], !parked, "%s", s.names[i]);
		inheap += s.heap[i];
	}
	cr_expect_eq(inheap, 2);
}

Test(queues_pending, admitted_and_deleted_leave_priority_reorders)
{
	struct que_wl **heads;
	size_t n;
	uint32_t fr = 0;
	const struct want after[] = {{"w1", 0, 0}, {"w3", 1, 1}};
	const struct want reprio[] = {{"w3", 0, 0}, {"w1", 1, 1}};
	cu_error err;

	four();
	/* w2 admitted, w4 deleted. */
	cr_assert_eq(que_pop_heads(st, 10, &heads, &n, &err), CU_OK);
	cr_assert_eq(n, 1);
	que_admit(st, heads[0], &fr, 10);
	cr_assert_eq(que_workload_remove(st, "w4", &err), CU_OK);
	list_cq(0, 1000, after, 2);
	/* w3's priority rises: a changed Workload is re-added. */
	cr_assert_eq(que_workload_remove(st, "w3", &err), CU_OK);
	wl("w3", "a", 9, 3, 1000);
	list_cq(0, 1000, reprio, 2);
	list_lq("a", 0, 1000, reprio, 2);
}

Test(queues_pending, unknown_queues)
{
	struct que_pending_item *it = NULL;
	size_t n = 7;
	cu_error err;

	cr_assert_eq(
	    que_pending_cq(st, "nope", 0, 10, &it, &n, &err), CU_ENOTFOUND);
	cr_assert_str_eq(err.msg, "clusterqueue \"nope\" not found");
	cr_assert_eq(n, 0);
	cr_assert_eq(que_pending_lq(st, "ns", "nope", 0, 10, &it, &n, &err),
	    CU_ENOTFOUND);
	cr_assert_str_eq(err.msg, "localqueue \"nope\" not found");
	cr_assert_eq(que_pending_lq(st, "other", "a", 0, 10, &it, &n, &err),
	    CU_ENOTFOUND);
	/* A LocalQueue onto a missing ClusterQueue lists nothing. */
	cr_assert_eq(
	    que_pending_lq(st, "ns", "orphan", 0, 10, &it, &n, &err), CU_OK);
	cr_assert_eq(n, 0);
	cr_assert_null(it);
}

Test(queues_pending, admission_fair_sharing_order)
{
	static const char *const cpu[] = {"cpu"};
	struct que_resource_quota rq = {"cpu", 10000, false, 0, false, 0};
	struct que_flavor_quotas fq = {"default", &rq, 1};
	struct que_resource_group g = {cpu, 1, &fq, 1};
	struct que_cq_spec s = {
	    .name = "cq", .groups = &g, .n_groups = 1, .admission_fair = true};
	const struct want usage_b_lower[] = {
	    {"w2", 0, 0}, {"w4", 1, 0}, {"w1", 2, 1}, {"w3", 3, 2}};
	const struct want usage_a_lower[] = {
	    {"w4", 0, 0}, {"w1", 1, 1}, {"w3", 2, 2}, {"w2", 3, 0}};
	cu_error err;

	cr_assert_eq(que_cq_set(st, &s, &err), CU_OK, "%s", err.msg);
	que_admission_fair_sharing_set(st, true);
	four();
	cr_assert_eq(que_lq_set_afs(st, "ns", "a", 5.0, &err), CU_OK);
	/* The heap's order is stale until its next pop: the listing sorts. */
	list_cq(0, 1000, usage_b_lower, 4);
	cr_assert_eq(que_lq_set_afs(st, "ns", "b", 9.0, &err), CU_OK);
	list_cq(0, 1000, usage_a_lower, 4);
	list_lq("b", 0, 1000, (const struct want[]){{"w2", 3, 0}}, 1);
	/* Once popped and given back, the heap is ordered again and walked
	 * in place: the same order. */
	{
		struct que_wl **heads;
		size_t n;

		cr_assert_eq(que_pop_heads(st, 10, &heads, &n, &err), CU_OK);
		cr_assert_eq(n, 1);
		cr_assert_str_eq(heads[0]->name, "w4");
		que_requeue(st, heads[0], QUE_RQ_NO_FIT);
	}
	list_cq(0, 1000, usage_a_lower, 4);
}

static int by_order(const void *a, const void *b)
{
	const struct que_wl *x = *(const struct que_wl *const *)a;
	const struct que_wl *y = *(const struct que_wl *const *)b;

	return que_wl_before(x, y) ? -1 : que_wl_before(y, x) ? 1 : 0;
}

Test(queues_pending, random_queue_matches_a_full_sort)
{
	enum { N = 300 };
	const struct que_wl *sorted[N];
	struct que_pending_item *it;
	struct que_wl **heads;
	size_t n, i, np;
	char uid[16];
	cu_error err;

	srand(7);
	for (i = 0; i < N; i++) {
		snprintf(uid, sizeof(uid), "u%03zu", i);
		wl(uid, i % 3 ? "a" : "b", rand() % 5, rand() % 50, 1000);
	}
	/* Park a few heads, back a few off. */
	for (i = 0; i < 5; i++) {
		cr_assert_eq(que_pop_heads(st, 10, &heads, &np, &err), CU_OK);
		cr_assert_eq(np, 1);
		que_requeue(st, heads[0], QUE_RQ_NO_FIT);
	}
	for (i = 0; i < N; i += 37) {
		snprintf(uid, sizeof(uid), "u%03zu", i);
		if (que_workload_get(st, uid)->where == QUE_WL_PENDING)
			cr_assert_eq(
			    que_workload_backoff(st, uid, 1000000, &err),
			    CU_OK);
	}
	for (i = 0; i < N; i++) {
		snprintf(uid, sizeof(uid), "u%03zu", i);
		sorted[i] = que_workload_get(st, uid);
	}
	qsort(sorted, N, sizeof(sorted[0]), by_order);
	cr_assert_eq(que_pending_cq(st, "cq", 0, 1000, &it, &n, &err), CU_OK);
	cr_assert_eq(n, N);
	{
		int32_t na = 0, nb = 0;

		for (i = 0; i < N; i++) {
			bool a = strcmp(sorted[i]->queue_name, "a") == 0;

			cr_assert_eq(it[i].wl, sorted[i], "item %zu", i);
			cr_assert_eq(it[i].pos_cq, (int32_t)i);
			cr_assert_eq(it[i].pos_lq, a ? na++ : nb++);
		}
	}
	cu_free(it);
}

/* The per-Workload record is the one a pending Workload costs: it is
 * found by its name as by its uid (the controller kept a map of its own
 * for that), and keeps the generation it was added at. A Workload
 * recreated under its name may be added before the old one goes: the
 * name finds the newer, and the older going does not lose it. */
Test(queues_pending, record_found_by_name_keeps_its_generation)
{
	struct que_wl *w;
	cu_error err;

	wl_named("uid-1", "job-a", "a", 0, 1, 1000);
	w = que_workload_by_name(st, "ns", "job-a");
	cr_assert_not_null(w);
	cr_assert_str_eq(w->uid, "uid-1");
	cr_assert_eq(w->generation, 0);
	cr_assert_eq(que_workload_set_generation(st, "uid-1", 3, &err), CU_OK);
	cr_assert_eq(que_workload_by_name(st, "ns", "job-a")->generation, 3);
	cr_assert_eq(
	    que_workload_set_generation(st, "nope", 3, &err), CU_ENOTFOUND);
	cr_assert_null(que_workload_by_name(st, "ns", "job-b"));
	cr_assert_null(que_workload_by_name(st, "other", "job-a"));
	/* Recreated: the newer one is found, the older going keeps it. */
	wl_named("uid-2", "job-a", "a", 0, 2, 1000);
	cr_assert_str_eq(que_workload_by_name(st, "ns", "job-a")->uid, "uid-2");
	cr_assert_eq(que_workload_remove(st, "uid-1", &err), CU_OK);
	cr_assert_str_eq(que_workload_by_name(st, "ns", "job-a")->uid, "uid-2");
	cr_assert_eq(que_workload_remove(st, "uid-2", &err), CU_OK);
	cr_assert_null(que_workload_by_name(st, "ns", "job-a"));
}

/* The caller's tag on a record (the controller's unadmitted-metric
 * labels): handed to the forget hook when the record goes, so a
 * Workload re-added after a spec change is not counted twice; a record
 * without a tag, or a state without a hook, hands nothing; freeing the
 * state calls nothing. */
static uint32_t forgot[4];
static size_t n_forgot;

static void forget(uint32_t tag, void *payload)
{
	cr_assert_eq(payload, &n_forgot);
	if (n_forgot < 4)
		forgot[n_forgot] = tag;
	n_forgot++;
}

Test(queues_pending, removed_record_hands_its_tag_to_the_forget_hook)
{
	struct que_wl *w;
	cu_error err;

	n_forgot = 0;
	wl_named("uid-1", "job-a", "a", 0, 1, 1000);
	wl_named("uid-2", "job-b", "a", 0, 2, 1000);
	wl_named("uid-3", "job-c", "a", 0, 3, 1000);
	w = que_workload_by_name(st, "ns", "job-a");
	cr_assert_eq(w->tag, 0, "a new record carries no tag");
	w->tag = 7;
	que_workload_by_name(st, "ns", "job-c")->tag = 9;
	/* No hook yet: nothing to call. */
	cr_assert_eq(que_workload_remove(st, "uid-3", &err), CU_OK);
	que_set_forget_hook(st, forget, &n_forgot);
	cr_assert_eq(que_workload_remove(st, "uid-2", &err), CU_OK);
	cr_assert_eq(n_forgot, 0, "no tag, no call");
	/* Re-added (a spec change): the old record's tag is handed back,
	 * the new record starts without one. */
	cr_assert_eq(que_workload_remove(st, "uid-1", &err), CU_OK);
	cr_assert_eq(n_forgot, 1);
	cr_assert_eq(forgot[0], 7);
	wl_named("uid-1", "job-a", "a", 0, 1, 1000);
	cr_assert_eq(que_workload_by_name(st, "ns", "job-a")->tag, 0);
	que_workload_by_name(st, "ns", "job-a")->tag = 8;
	que_set_forget_hook(st, NULL, NULL);
	cr_assert_eq(que_workload_remove(st, "uid-1", &err), CU_OK);
	cr_assert_eq(n_forgot, 1, "the hook was taken away");
	wl_named("uid-4", "job-d", "a", 0, 4, 1000);
	que_workload_by_name(st, "ns", "job-d")->tag = 3;
	que_set_forget_hook(st, forget, &n_forgot);
	/* teardown frees the state with uid-4 tagged: never a call. */
}
