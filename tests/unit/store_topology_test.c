/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/store_topology_test.c - store_podset_set_topology: a failed
 * node's replacement rewrites one podSet's topologyAssignment of a live
 * decision (durable across a reopen), and leaves its state, sequence
 * number and usage alone; missing decisions, podSets and released
 * decisions are refused. On a real SQLite file.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "lib/cu.h"
#include "store/store.h"
#include "tests/unit/fixtures.h"

TestSuite(store_topology, .init = fx_tdir_setup, .fini = fx_tdir_teardown);

static const char topo_a[] = "{\"levels\":[\"kubernetes.io/hostname\"],"
			     "\"slices\":[{\"domainCount\":1}],\"v\":\"a\"}";
static const char topo_b[] = "{\"levels\":[\"kubernetes.io/hostname\"],"
			     "\"slices\":[{\"domainCount\":1}],\"v\":\"b\"}";

static const store_resource cpu4[] = {
    {.resource = "cpu", .flavor = "tas", .milli = 4000},
};

static void put(store *s, const char *uid, enum store_state st)
{
	store_podset ps[2] = {
	    {.name = "main",
		.count = 4,
		.n_resources = 1,
		.resources = cpu4,
		.topology = topo_a},
	    {.name = "side", .count = 1, .n_resources = 1, .resources = cpu4},
	};
	store_decision d = {.uid = uid,
	    .ns = "ns",
	    .name = uid,
	    .cluster_queue = "cq",
	    .state = st,
	    .decided_ns = 10,
	    .n_podsets = 2,
	    .podsets = ps};
	cu_error err = {0};

	cr_assert_eq(store_begin(s, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(
	    store_decision_put(s, &d, NULL, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(store_commit(s, &err), CU_OK, "%s", err.msg);
}

static int set_topo(store *s, const char *uid, size_t idx, const char *t)
{
	cu_error err = {0};
	int rc;

	cr_assert_eq(store_begin(s, &err), CU_OK, "%s", err.msg);
	rc = store_podset_set_topology(s, uid, idx, t, &err);
	if (rc == CU_OK)
		cr_assert_eq(store_commit(s, &err), CU_OK, "%s", err.msg);
	else {
		cr_assert(err.msg[0] != '\0', "a message with the error");
		store_rollback(s);
	}
	return rc;
}

Test(store_topology, replacement_is_recorded_and_survives_a_reopen)
{
	store *s = fx_open_ok(fx_tpath);
	store_decision *got = NULL;
	cu_error err = {0};
	int64_t seq_before, milli = -1;

	put(s, "u1", STORE_ADMITTED);
	cr_assert_eq(
	    store_decision_get(s, "u1", &got, &err), CU_OK, "%s", err.msg);
	seq_before = got->seq;
	store_decision_free(got);

	cr_assert_eq(set_topo(s, "u1", 0, topo_b), CU_OK);
	store_close(s);

	s = fx_open_ok(fx_tpath);
	cr_assert_eq(
	    store_decision_get(s, "u1", &got, &err), CU_OK, "%s", err.msg);
	cr_assert_str_eq(got->podsets[0].topology, topo_b);
	cr_assert_null(got->podsets[1].topology, "the other podSet untouched");
	cr_assert_eq(got->state, STORE_ADMITTED);
	cr_assert_eq(got->seq, seq_before, "no new sequence number");
	store_decision_free(got);
	cr_assert_eq(store_usage_get(s, "cq", "tas", "cpu", &milli, &err),
	    CU_OK, "%s", err.msg);
	cr_assert_eq(milli, 8000, "usage unchanged");
	cr_assert_eq(store_check_consistency(s, &err), CU_OK, "%s", err.msg);
	store_close(s);
}

Test(store_topology, evicting_decision_can_be_rewritten_and_cleared)
{
	store *s = fx_open_ok(fx_tpath);
	store_decision *got = NULL;
	cu_error err = {0};

	put(s, "u1", STORE_EVICTING);
	cr_assert_eq(set_topo(s, "u1", 1, topo_b), CU_OK);
	cr_assert_eq(set_topo(s, "u1", 0, NULL), CU_OK);
	cr_assert_eq(
	    store_decision_get(s, "u1", &got, &err), CU_OK, "%s", err.msg);
	cr_assert_null(got->podsets[0].topology);
	cr_assert_str_eq(got->podsets[1].topology, topo_b);
	store_decision_free(got);
	store_close(s);
}

Test(store_topology, refused_without_a_live_decision_or_podset)
{
	store *s = fx_open_ok(fx_tpath);
	store_decision *got = NULL;
	cu_error err = {0};

	cr_assert_eq(set_topo(s, "nobody", 0, topo_b), CU_ENOTFOUND);
	put(s, "u1", STORE_ADMITTED);
	cr_assert_eq(set_topo(s, "u1", 2, topo_b), CU_ENOTFOUND);
	put(s, "u2", STORE_RELEASED);
	cr_assert_eq(set_topo(s, "u2", 0, topo_b), CU_ECONFLICT);
	cr_assert_eq(
	    store_decision_get(s, "u2", &got, &err), CU_OK, "%s", err.msg);
	cr_assert_str_eq(got->podsets[0].topology, topo_a, "history kept");
	store_decision_free(got);
	/* a write needs a transaction */
	cr_assert_eq(
	    store_podset_set_topology(s, "u1", 0, topo_b, &err), CU_EINVAL);
	store_close(s);
}
