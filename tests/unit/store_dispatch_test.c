/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/store_dispatch_test.c - the MultiKueue manager's dispatch
 * choices in the ledger (store/dispatch.c, schema v5): recorded only
 * inside a transaction, read back after a reopen (a restarted manager),
 * gone after a rollback, replaced, deleted, listed, and carried over by
 * store_relink.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/cu.h"
#include "store/store.h"
#include "tests/unit/fixtures.h"

TestSuite(store_dispatch, .init = fx_tdir_setup, .fini = fx_tdir_teardown);

static void put(store *s, const char *uid, const char *cluster)
{
	cu_error err = {0};

	cr_assert_eq(store_begin(s, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(store_dispatch_put(s, uid, "ns", uid, cluster, 7, &err),
	    CU_OK, "%s", err.msg);
	cr_assert_eq(store_commit(s, &err), CU_OK, "%s", err.msg);
}

/* The recorded cluster of uid, or NULL [owned: cu_free]. */
static char *get(store *s, const char *uid)
{
	char *cl = NULL;
	cu_error err = {0};
	int rc = store_dispatch_get(s, uid, &cl, &err);

	cr_assert(rc == CU_OK || rc == CU_ENOTFOUND, "%s", err.msg);
	cr_assert_eq(rc == CU_OK, cl != NULL);
	return cl;
}

static void expect_cluster(store *s, const char *uid, const char *want)
{
	char *cl = get(s, uid);

	if (want == NULL)
		cr_expect_null(cl, "%s: no choice", uid);
	else
		cr_expect_str_eq(cl, want, "%s", uid);
	cu_free(cl);
}

Test(store_dispatch, survives_a_reopen)
{
	store *s = fx_open_ok(fx_tpath);

	put(s, "u1", "worker1");
	store_close(s);
	s = fx_open_ok(fx_tpath);
	expect_cluster(s, "u1", "worker1");
	expect_cluster(s, "u2", NULL);
	store_close(s);
}

Test(store_dispatch, needs_a_transaction_and_a_cluster)
{
	store *s = fx_open_ok(fx_tpath);
	cu_error err = {0};

	cr_expect_eq(
	    store_dispatch_put(s, "u1", "ns", "n", "w", 1, &err), CU_EINVAL);
	cr_assert_eq(store_begin(s, &err), CU_OK, "%s", err.msg);
	cr_expect_eq(
	    store_dispatch_put(s, "u1", "ns", "n", "", 1, &err), CU_EINVAL);
	cr_expect_eq(
	    store_dispatch_put(s, "", "ns", "n", "w", 1, &err), CU_EINVAL);
	store_rollback(s);
	store_close(s);
}

Test(store_dispatch, a_rollback_forgets_it)
{
	store *s = fx_open_ok(fx_tpath);
	cu_error err = {0};

	cr_assert_eq(store_begin(s, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(store_dispatch_put(s, "u1", "ns", "n", "w1", 1, &err),
	    CU_OK, "%s", err.msg);
	expect_cluster(s, "u1", "w1");
	store_rollback(s);
	expect_cluster(s, "u1", NULL);
	store_close(s);
}

static int count_cb(const char *uid, const char *ns, const char *name,
    const char *cluster, int64_t decided_ns, void *payload)
{
	size_t *n = payload;

	cr_expect_str_eq(ns, "ns");
	cr_expect_str_eq(name, uid);
	cr_expect_eq(decided_ns, 7);
	cr_expect(cluster[0] != '\0');
	(*n)++;
	return 0;
}

Test(store_dispatch, replaced_deleted_listed)
{
	store *s = fx_open_ok(fx_tpath);
	cu_error err = {0};
	size_t n = 0;

	put(s, "u1", "w1");
	put(s, "u1", "w2");
	put(s, "u2", "w1");
	expect_cluster(s, "u1", "w2");
	cr_assert_eq(store_dispatch_foreach(s, count_cb, &n, &err), CU_OK, "%s",
	    err.msg);
	cr_expect_eq(n, 2);
	cr_assert_eq(store_begin(s, &err), CU_OK, "%s", err.msg);
	cr_expect_eq(
	    store_dispatch_delete(s, "u1", &err), CU_OK, "%s", err.msg);
	cr_expect_eq(store_dispatch_delete(s, "u1", &err), CU_ENOTFOUND);
	cr_assert_eq(store_commit(s, &err), CU_OK, "%s", err.msg);
	expect_cluster(s, "u1", NULL);
	expect_cluster(s, "u2", "w1");
	store_close(s);
}

Test(store_dispatch, carried_over_by_relink)
{
	store *s = fx_open_ok(fx_tpath);
	cu_error err = {0};

	put(s, "u1", "w1");
	cr_assert_eq(unlink(fx_tpath), 0);
	cr_assert_eq(store_relink(s, NULL, &err), CU_OK, "%s", err.msg);
	expect_cluster(s, "u1", "w1");
	store_close(s);
}
