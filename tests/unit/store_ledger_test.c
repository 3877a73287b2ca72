/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/store_ledger_test.c - store/: schema creation and migration,
 * decisions and their state machine, derived usage against a model,
 * transactions, error classification (corrupt, read-only, newer schema),
 * restart reconciliation, and allocation failures inside SQLite.
 *
 * Every test works on a real file in its own mkdtemp directory. The test
 * includes sqlite3.h only to build old or damaged ledgers by hand and to
 * look underneath the API; the code under test keeps SQL inside store/.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cu.h"
#include "store/store.h"
#include "tests/unit/fixtures.h"

TestSuite(store, .init = fx_tdir_setup, .fini = fx_tdir_teardown);

/* ---- helpers ----------------------------------------------------------- */

static const store_resource res_a[] = {
    {.resource = "memory", .flavor = "default", .milli = 4096000},
    {.resource = "cpu", .flavor = "default", .milli = 2000},
};
static const store_resource res_b[] = {
    {.resource = "nvidia.com/gpu", .flavor = "a100", .milli = 8000},
    {.resource = "cpu", .flavor = "spot", .milli = 16000},
};
static const store_podset podsets_ab[] = {
    {.name = "launcher", .count = 1, .n_resources = 2, .resources = res_a},
    {.name = "workers", .count = 4, .n_resources = 2, .resources = res_b},
};

static store_decision dec(
    const char *uid, const char *cq, enum store_state st, int64_t t)
{
	store_decision d = {
	    .uid = uid,
	    .ns = "team-a",
	    .name = uid,
	    .cluster_queue = cq,
	    .state = st,
	    .decided_ns = t,
	    .n_podsets = 2,
	    .podsets = podsets_ab,
	};
	return d;
}

static int64_t usage(store *s, const char *cq, const char *fl, const char *res)
{
	cu_error err = {0};
	int64_t v = -1;

	cr_assert_eq(
	    store_usage_get(s, cq, fl, res, &v, &err), CU_OK, "%s", err.msg);
	return v;
}

static void put_ok(store *s, const store_decision *d, int64_t *seq)
{
	cu_error err = {0};

	cr_assert_eq(store_decision_put(s, d, seq, &err), CU_OK, "put %s: %s",
	    d->uid, err.msg);
}

static void begin_ok(store *s)
{
	cu_error err = {0};

	cr_assert_eq(store_begin(s, &err), CU_OK, "%s", err.msg);
}

static void commit_ok(store *s)
{
	cu_error err = {0};

	cr_assert_eq(store_commit(s, &err), CU_OK, "%s", err.msg);
}

static void consistent(store *s)
{
	cu_error err = {0};

	cr_assert_eq(store_check_consistency(s, &err), CU_OK, "%s", err.msg);
}

/* ---- schema ------------------------------------------------------------ */

Test(store, new_ledger_is_private_wal_and_survives_reopen)
{
	store_decision d = dec("uid-1", "cq-a", STORE_RESERVED, 1000);
	store_decision *got = NULL;
	cu_error err = {0};
	struct stat stb;
	int64_t seq = 0, last = 0;
	store *s = fx_open_ok(fx_tpath);

	cr_assert_eq(stat(fx_tpath, &stb), 0);
	cr_assert_eq(stb.st_mode & 0777, 0600, "mode %o", stb.st_mode & 0777);
	cr_assert_eq(store_last_seq(s, &last, &err), CU_OK);
	cr_assert_eq(last, 0);
	begin_ok(s);
	put_ok(s, &d, &seq);
	commit_ok(s);
	cr_assert_eq(seq, 1);
	/* SQLite gives the WAL the main file's permissions. */
	{
		char wal[320];

		snprintf(wal, sizeof(wal), "%s-wal", fx_tpath);
		cr_assert_eq(stat(wal, &stb), 0, "WAL file exists while open");
		cr_assert_eq(stb.st_mode & 0777, 0600);
	}
	store_close(s);

	cr_assert_eq(
	    fx_raw_int(fx_tpath, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	cr_assert_eq(fx_raw_int(fx_tpath, "SELECT count(*) FROM sqlite_schema"
					  " WHERE sql LIKE '%STRICT%'"),
	    6);
	s = fx_open_ok(fx_tpath);
	cr_assert_eq(
	    store_decision_get(s, "uid-1", &got, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(got->seq, 1);
	cr_assert_str_eq(got->cluster_queue, "cq-a");
	cr_assert_eq(store_last_seq(s, &last, &err), CU_OK);
	cr_assert_eq(last, 1);
	cr_assert_eq(usage(s, "cq-a", "default", "cpu"), 2000);
	store_decision_free(got);
	store_close(s);
	/* WAL is persistent in the file header: check it from outside. */
	{
		sqlite3 *db = NULL;
		sqlite3_stmt *st = NULL;

		cr_assert_eq(sqlite3_open(fx_tpath, &db), SQLITE_OK);
		cr_assert_eq(sqlite3_prepare_v2(
				 db, "PRAGMA journal_mode", -1, &st, NULL),
		    SQLITE_OK);
		cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
		cr_assert_str_eq(
		    (const char *)sqlite3_column_text(st, 0), "wal");
		sqlite3_finalize(st);
		sqlite3_close(db);
	}
}

Test(store, hand_made_v0_database_is_migrated)
{
	store_decision d = dec("uid-1", "cq-a", STORE_ADMITTED, 5);
	int64_t seq = 0;
	store *s;

	/* An SQLite file that was initialised but never given a schema. */
	fx_raw_exec(fx_tpath, "PRAGMA page_size = 4096; CREATE TABLE t(x);"
			      "DROP TABLE t;");
	cr_assert_eq(fx_raw_int(fx_tpath, "PRAGMA user_version"), 0);
	s = fx_open_ok(fx_tpath);
	begin_ok(s);
	put_ok(s, &d, &seq);
	commit_ok(s);
	store_close(s);
	cr_assert_eq(seq, 1);
	cr_assert_eq(
	    fx_raw_int(fx_tpath, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	cr_assert_eq(fx_raw_int(fx_tpath, "PRAGMA application_id"), 0x63754c47);
}

/* The v1 schema exactly as v1 binaries wrote it (frozen). */
static const char v1_schema[] =
    "CREATE TABLE meta(key TEXT PRIMARY KEY NOT NULL, value INTEGER NOT "
    "NULL) STRICT;"
    "CREATE TABLE decision(uid TEXT PRIMARY KEY NOT NULL CHECK (uid != ''),"
    " namespace TEXT NOT NULL, name TEXT NOT NULL, cluster_queue TEXT NOT "
    "NULL, state INTEGER NOT NULL CHECK (state BETWEEN 0 AND 3),"
    " decided_ns INTEGER NOT NULL, seq INTEGER NOT NULL UNIQUE) STRICT;"
    "CREATE TABLE podset(uid TEXT NOT NULL REFERENCES decision(uid) ON "
    "DELETE CASCADE, idx INTEGER NOT NULL, name TEXT NOT NULL,"
    " count INTEGER NOT NULL CHECK (count >= 0), PRIMARY KEY (uid, idx),"
    " UNIQUE (uid, name)) STRICT, WITHOUT ROWID;"
    "CREATE TABLE podset_resource(uid TEXT NOT NULL, idx INTEGER NOT NULL,"
    " resource TEXT NOT NULL, flavor TEXT NOT NULL, milli INTEGER NOT NULL"
    " CHECK (milli >= 0), PRIMARY KEY (uid, idx, resource), FOREIGN KEY "
    "(uid, idx) REFERENCES podset(uid, idx) ON DELETE CASCADE) STRICT, "
    "WITHOUT ROWID;"
    "PRAGMA application_id = 1668631623;"
    "PRAGMA user_version = 1;";

static const char v1_rows[] =
    "INSERT INTO meta VALUES ('last_seq', 7);"
    "INSERT INTO decision VALUES ('u-live', 'ns', 'w1', 'cq-a', 1, 111, 3);"
    "INSERT INTO decision VALUES ('u-gone', 'ns', 'w2', 'cq-a', 3, 222, 7);"
    "INSERT INTO decision VALUES ('u-evict', 'ns', 'w3', 'cq-b', 2, 333, "
    "5);"
    "INSERT INTO podset VALUES ('u-live', 0, 'main', 2);"
    "INSERT INTO podset VALUES ('u-live', 1, 'aux', 1);"
    "INSERT INTO podset VALUES ('u-gone', 0, 'main', 1);"
    "INSERT INTO podset VALUES ('u-evict', 0, 'main', 3);"
    "INSERT INTO podset_resource VALUES ('u-live', 0, 'cpu', 'f1', 1500);"
    "INSERT INTO podset_resource VALUES ('u-live', 1, 'cpu', 'f1', 500);"
    "INSERT INTO podset_resource VALUES ('u-gone', 0, 'cpu', 'f1', 9000);"
    "INSERT INTO podset_resource VALUES ('u-evict', 0, 'gpu', 'f2', 3000);";

Test(store, v1_ledger_migrates_keeping_decisions_and_deriving_usage)
{
	store_decision d = dec("u-new", "cq-a", STORE_RESERVED, 999);
	store_decision *got = NULL;
	cu_error err = {0};
	int64_t seq = 0;
	store *s;

	fx_raw_exec(fx_tpath, v1_schema);
	fx_raw_exec(fx_tpath, v1_rows);
	s = fx_open_ok(fx_tpath);
	cr_assert_eq(
	    fx_raw_int(fx_tpath, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	/* Usage derived from live decisions only (u-gone is released). */
	cr_assert_eq(usage(s, "cq-a", "f1", "cpu"), 2000);
	cr_assert_eq(usage(s, "cq-b", "f2", "gpu"), 3000);
	consistent(s);
	cr_assert_eq(
	    store_decision_get(s, "u-live", &got, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(got->state, STORE_ADMITTED);
	cr_assert_eq(got->decided_ns, 111);
	cr_assert_eq(got->state_ns, 111, "state_ns back-filled");
	cr_assert_eq(got->n_podsets, 2);
	cr_assert_str_eq(got->podsets[1].name, "aux");
	store_decision_free(got);
	/* The sequence continues from the migrated counter. */
	begin_ok(s);
	put_ok(s, &d, &seq);
	commit_ok(s);
	cr_assert_eq(seq, 8);
	store_close(s);
}

Test(store, newer_schema_version_is_refused_untouched)
{
	cu_error err = {0};
	store *s = fx_open_ok(fx_tpath);

	store_close(s);
	fx_raw_exec(fx_tpath, "PRAGMA user_version = 99");
	s = (store *)&err; /* must be reset to NULL on failure */
	cr_assert_eq(store_open(&s, fx_tpath, &err), CU_EUNSUPPORTED);
	cr_assert_null(s);
	cr_assert(strstr(err.msg, "newer") != NULL, "%s", err.msg);
	cr_assert(strstr(err.msg, "99") != NULL, "%s", err.msg);
	cr_assert_eq(fx_raw_int(fx_tpath, "PRAGMA user_version"), 99);
}

Test(store, foreign_sqlite_files_are_refused)
{
	cu_error err = {0};
	store *s = NULL;

	fx_raw_exec(fx_tpath, "CREATE TABLE jobs(id INTEGER)");
	cr_assert_eq(store_open(&s, fx_tpath, &err), CU_EUNSUPPORTED);
	cr_assert(strstr(err.msg, "not a cueue ledger") != NULL, "%s", err.msg);
	cr_assert_null(s);

	unlink(fx_tpath);
	fx_raw_exec(
	    fx_tpath, "PRAGMA application_id = 42; PRAGMA user_version = 1");
	cr_assert_eq(store_open(&s, fx_tpath, &err), CU_EUNSUPPORTED);
	cr_assert(strstr(err.msg, "application_id") != NULL, "%s", err.msg);
}

Test(store, in_memory_ledger_is_usable_for_other_modules_tests)
{
	store_decision d = dec("uid-1", "cq-a", STORE_RESERVED, 1);
	store *s = fx_open_ok(":memory:");

	begin_ok(s);
	put_ok(s, &d, NULL);
	commit_ok(s);
	cr_assert_eq(usage(s, "cq-a", "spot", "cpu"), 16000);
	consistent(s);
	store_close(s);
}

/* ---- decisions ----------------------------------------------------------
 */

Test(store, put_get_replace_set_state_delete)
{
	store_decision d = dec("uid-1", "cq-a", STORE_RESERVED, 1000);
	store_decision *got = NULL;
	cu_error err = {0};
	int64_t seq = 0;
	store *s = fx_open_ok(fx_tpath);

	begin_ok(s);
	put_ok(s, &d, &seq);
	cr_assert_eq(seq, 1);
	cr_assert_eq(store_decision_get(s, "uid-1", &got, &err), CU_OK);
	cr_assert_str_eq(got->uid, "uid-1");
	cr_assert_str_eq(got->ns, "team-a");
	cr_assert_str_eq(got->name, "uid-1");
	cr_assert_eq(got->state, STORE_RESERVED);
	cr_assert_eq(got->decided_ns, 1000);
	cr_assert_eq(got->state_ns, 1000);
	cr_assert_eq(got->n_podsets, 2);
	cr_assert_str_eq(got->podsets[0].name, "launcher");
	cr_assert_eq(got->podsets[0].count, 1);
	cr_assert_str_eq(got->podsets[1].name, "workers");
	cr_assert_eq(got->podsets[1].count, 4);
	/* Resources come back ordered by name. */
	cr_assert_eq(got->podsets[0].n_resources, 2);
	cr_assert_str_eq(got->podsets[0].resources[0].resource, "cpu");
	cr_assert_eq(got->podsets[0].resources[0].milli, 2000);
	cr_assert_str_eq(got->podsets[0].resources[1].resource, "memory");
	cr_assert_str_eq(
	    got->podsets[1].resources[1].resource, "nvidia.com/gpu");
	cr_assert_str_eq(got->podsets[1].resources[1].flavor, "a100");
	store_decision_free(got);
	cr_assert_eq(usage(s, "cq-a", "default", "cpu"), 2000);
	cr_assert_eq(usage(s, "cq-a", "spot", "cpu"), 16000);
	cr_assert_eq(usage(s, "cq-a", "a100", "nvidia.com/gpu"), 8000);

	/* Replace: new seq, usage moves to the new ClusterQueue. */
	d.cluster_queue = "cq-b";
	put_ok(s, &d, &seq);
	cr_assert_eq(seq, 2);
	cr_assert_eq(usage(s, "cq-a", "default", "cpu"), 0);
	cr_assert_eq(usage(s, "cq-b", "default", "cpu"), 2000);

	cr_assert_eq(
	    store_decision_set_state(s, "uid-1", STORE_ADMITTED, 2000, &err),
	    CU_OK, "%s", err.msg);
	cr_assert_eq(store_decision_get(s, "uid-1", &got, &err), CU_OK);
	cr_assert_eq(got->state, STORE_ADMITTED);
	cr_assert_eq(got->state_ns, 2000);
	cr_assert_eq(got->decided_ns, 1000);
	cr_assert_eq(got->seq, 2, "state changes keep the decision's seq");
	store_decision_free(got);
	cr_assert_eq(usage(s, "cq-b", "default", "cpu"), 2000);
	cr_assert_eq(
	    store_decision_set_state(s, "uid-1", STORE_EVICTING, 3000, &err),
	    CU_OK);
	cr_assert_eq(usage(s, "cq-b", "default", "cpu"), 2000,
	    "evicting still holds quota");
	cr_assert_eq(
	    store_decision_set_state(s, "uid-1", STORE_RELEASED, 4000, &err),
	    CU_OK);
	cr_assert_eq(usage(s, "cq-b", "default", "cpu"), 0);
	cr_assert_eq(
	    store_decision_set_state(s, "uid-1", STORE_ADMITTED, 5000, &err),
	    CU_ECONFLICT);
	cr_assert(
	    strstr(err.msg, "released -> admitted") != NULL, "%s", err.msg);
	/* Same state again: accepted, nothing written. */
	cr_assert_eq(
	    store_decision_set_state(s, "uid-1", STORE_RELEASED, 6000, &err),
	    CU_OK);
	cr_assert_eq(store_decision_get(s, "uid-1", &got, &err), CU_OK);
	cr_assert_eq(got->state_ns, 4000);
	store_decision_free(got);

	cr_assert_eq(
	    store_decision_delete(s, "uid-1", &err), CU_OK, "%s", err.msg);
	cr_assert_eq(store_decision_get(s, "uid-1", &got, &err), CU_ENOTFOUND);
	cr_assert_null(got);
	cr_assert_eq(store_decision_delete(s, "uid-1", &err), CU_ENOTFOUND);
	cr_assert_eq(
	    store_decision_set_state(s, "nope", STORE_ADMITTED, 1, &err),
	    CU_ENOTFOUND);
	cr_assert(strstr(err.msg, "nope") != NULL, "%s", err.msg);
	commit_ok(s);
	consistent(s);
	store_close(s);
}

Test(store, deleting_a_live_decision_returns_its_quota)
{
	store_decision a = dec("a", "cq-a", STORE_ADMITTED, 1);
	store_decision b = dec("b", "cq-a", STORE_RESERVED, 2);
	cu_error err = {0};
	store *s = fx_open_ok(fx_tpath);

	begin_ok(s);
	put_ok(s, &a, NULL);
	put_ok(s, &b, NULL);
	cr_assert_eq(usage(s, "cq-a", "default", "cpu"), 4000);
	cr_assert_eq(store_decision_delete(s, "a", &err), CU_OK);
	cr_assert_eq(usage(s, "cq-a", "default", "cpu"), 2000);
	commit_ok(s);
	consistent(s);
	store_close(s);
}

Test(store, writes_need_a_transaction)
{
	store_decision d = dec("uid-1", "cq-a", STORE_RESERVED, 1);
	cu_error err = {0};
	int64_t last = -1;
	store *s = fx_open_ok(fx_tpath);

	cr_assert_eq(store_decision_put(s, &d, NULL, &err), CU_EINVAL);
	cr_assert(strstr(err.msg, "no transaction") != NULL, "%s", err.msg);
	cr_assert_eq(
	    store_decision_set_state(s, "uid-1", STORE_ADMITTED, 1, &err),
	    CU_EINVAL);
	cr_assert_eq(store_decision_delete(s, "uid-1", &err), CU_EINVAL);
	cr_assert_eq(store_commit(s, &err), CU_EINVAL);
	cr_assert(!store_in_txn(s));
	begin_ok(s);
	cr_assert(store_in_txn(s));
	cr_assert_eq(store_begin(s, &err), CU_EINVAL);
	store_rollback(s);
	cr_assert(!store_in_txn(s));
	store_rollback(s); /* harmless without a transaction */
	cr_assert_eq(store_last_seq(s, &last, &err), CU_OK);
	cr_assert_eq(last, 0);
	store_close(s);
}

Test(store, rejected_puts_leave_the_batch_untouched)
{
	store_decision good = dec("good", "cq-a", STORE_RESERVED, 1);
	store_decision bad = dec("bad", "cq-a", STORE_RESERVED, 2);
	store_resource neg[] = {{"cpu", "default", -1}};
	store_resource dup[] = {{"cpu", "default", 1}, {"cpu", "spot", 2}};
	store_podset ps_neg[] = {{"main", 1, 1, neg, NULL}};
	store_podset ps_dup_res[] = {{"main", 1, 2, dup, NULL}};
	store_podset ps_dup_name[] = {
	    {"main", 1, 1, dup, NULL}, {"main", 1, 1, dup, NULL}};
	store_decision *got = NULL;
	cu_error err = {0};
	int64_t last = 0;
	store *s = fx_open_ok(fx_tpath);

	begin_ok(s);
	put_ok(s, &good, NULL);

	bad.podsets = ps_neg;
	bad.n_podsets = 1;
	cr_assert_eq(store_decision_put(s, &bad, NULL, &err), CU_EINVAL);
	bad.podsets = ps_dup_res;
	cr_assert_eq(store_decision_put(s, &bad, NULL, &err), CU_EINVAL);
	cr_assert(strncmp(err.msg, "ledger rejected:", 16) == 0, "%s", err.msg);
	bad.podsets = ps_dup_name;
	bad.n_podsets = 2;
	cr_assert_eq(store_decision_put(s, &bad, NULL, &err), CU_EINVAL);
	bad.n_podsets = 0;
	cr_assert_eq(store_decision_put(s, &bad, NULL, &err), CU_EINVAL);
	bad = dec("", "cq-a", STORE_RESERVED, 2);
	cr_assert_eq(store_decision_put(s, &bad, NULL, &err), CU_EINVAL);
	bad = dec("bad", "cq-a", (enum store_state)7, 2);
	cr_assert_eq(store_decision_put(s, &bad, NULL, &err), CU_EINVAL);
	cr_assert_eq(store_decision_put(s, NULL, NULL, &err), CU_EINVAL);

	/* Replacing "good" with a bad row must not lose the old one. */
	bad = dec("good", "cq-b", STORE_RESERVED, 3);
	bad.podsets = ps_dup_res;
	bad.n_podsets = 1;
	cr_assert_eq(store_decision_put(s, &bad, NULL, &err), CU_EINVAL);

	cr_assert(store_in_txn(s), "a rejected put keeps the transaction");
	commit_ok(s);
	cr_assert_eq(store_decision_get(s, "bad", &got, &err), CU_ENOTFOUND);
	cr_assert_eq(store_decision_get(s, "good", &got, &err), CU_OK);
	cr_assert_str_eq(got->cluster_queue, "cq-a");
	store_decision_free(got);
	cr_assert_eq(usage(s, "cq-a", "default", "cpu"), 2000);
	cr_assert_eq(usage(s, "cq-b", "default", "cpu"), 0);
	cr_assert_eq(store_last_seq(s, &last, &err), CU_OK);
	cr_assert_eq(last, 1, "rejected puts give their seq back");
	consistent(s);
	store_close(s);
}

Test(store, rollback_leaves_nothing)
{
	store_decision a = dec("a", "cq-a", STORE_ADMITTED, 1);
	store_decision b = dec("b", "cq-a", STORE_RESERVED, 2);
	store_decision *got = NULL;
	cu_error err = {0};
	int64_t last = 0;
	store *s = fx_open_ok(fx_tpath);

	begin_ok(s);
	put_ok(s, &a, NULL);
	commit_ok(s);

	begin_ok(s);
	put_ok(s, &b, NULL);
	cr_assert_eq(
	    store_decision_set_state(s, "a", STORE_RELEASED, 9, &err), CU_OK);
	a.cluster_queue = "cq-z";
	put_ok(s, &a, NULL);
	cr_assert_eq(store_decision_delete(s, "a", &err), CU_OK);
	store_rollback(s);

	cr_assert_eq(store_decision_get(s, "b", &got, &err), CU_ENOTFOUND);
	cr_assert_eq(store_decision_get(s, "a", &got, &err), CU_OK);
	cr_assert_eq(got->state, STORE_ADMITTED);
	cr_assert_str_eq(got->cluster_queue, "cq-a");
	cr_assert_eq(got->seq, 1);
	store_decision_free(got);
	cr_assert_eq(usage(s, "cq-a", "default", "cpu"), 2000);
	cr_assert_eq(usage(s, "cq-z", "default", "cpu"), 0);
	cr_assert_eq(store_last_seq(s, &last, &err), CU_OK);
	cr_assert_eq(last, 1);
	consistent(s);

	/* Closing with an open transaction rolls it back too. */
	begin_ok(s);
	put_ok(s, &b, NULL);
	store_close(s);
	s = fx_open_ok(fx_tpath);
	cr_assert_eq(store_decision_get(s, "b", &got, &err), CU_ENOTFOUND);
	store_close(s);
}

/* ---- iteration --------------------------------------------------------- */

struct collect {
	store *s;
	char uids[16][16];
	int n;
	int stop_at; /* return 77 on this call (1-based); 0 never */
	int nested_rc;
};

static int collect_decision(const store_decision *d, void *payload)
{
	struct collect *c = payload;
	cu_error err = {0};
	store_decision *again = NULL;

	snprintf(c->uids[c->n], sizeof(c->uids[0]), "%s", d->uid);
	c->n++;
	/* Reads are allowed in a callback; writes and nesting are not. */
	if (store_decision_get(c->s, d->uid, &again, &err) == CU_OK)
		store_decision_free(again);
	else
		c->nested_rc = -1000;
	if (store_begin(c->s, &err) != CU_EINVAL)
		c->nested_rc = -2000;
	if (store_decision_foreach_live(c->s, collect_decision, c, &err) !=
	    CU_EINVAL)
		c->nested_rc = -3000;
	return c->n == c->stop_at ? 77 : 0;
}

Test(store, foreach_live_is_ordered_and_guarded)
{
	struct collect c = {0};
	cu_error err = {0};
	store *s = fx_open_ok(fx_tpath);
	store_decision d;

	c.s = s;
	begin_ok(s);
	d = dec("w3", "cq-a", STORE_RESERVED, 1);
	put_ok(s, &d, NULL);
	d = dec("w1", "cq-a", STORE_RELEASED, 2);
	put_ok(s, &d, NULL);
	d = dec("w2", "cq-b", STORE_EVICTING, 3);
	put_ok(s, &d, NULL);
	commit_ok(s);

	cr_assert_eq(store_decision_foreach_live(s, collect_decision, &c, &err),
	    CU_OK, "%s", err.msg);
	cr_assert_eq(c.nested_rc, 0);
	cr_assert_eq(c.n, 2);
	cr_assert_str_eq(c.uids[0], "w3");
	cr_assert_str_eq(c.uids[1], "w2");

	c.n = 0;
	c.stop_at = 1;
	cr_assert_eq(
	    store_decision_foreach_live(s, collect_decision, &c, &err), 77);
	cr_assert_eq(c.n, 1);
	/* The guard is lifted after the iteration. */
	begin_ok(s);
	store_rollback(s);
	store_close(s);
}

struct usage_rows {
	char rows[16][64];
	int n;
};

static int collect_usage(const char *cq, const char *fl, const char *res,
    int64_t milli, void *payload)
{
	struct usage_rows *u = payload;

	snprintf(u->rows[u->n++], sizeof(u->rows[0]), "%s/%s/%s=%lld", cq, fl,
	    res, (long long)milli);
	return 0;
}

static const store_resource zero_res[] = {{"cpu", "default", 0}};
static const store_podset zero_ps[] = {{"idle", 3, 1, zero_res, NULL}};

Test(store, usage_foreach_lists_held_quota_in_order)
{
	struct usage_rows u = {0};
	cu_error err = {0};
	store *s = fx_open_ok(fx_tpath);
	store_decision d;

	begin_ok(s);
	d = dec("x", "cq-b", STORE_ADMITTED, 1);
	put_ok(s, &d, NULL);
	d = dec("y", "cq-a", STORE_RESERVED, 1);
	put_ok(s, &d, NULL);
	cr_assert_eq(
	    store_decision_set_state(s, "y", STORE_RELEASED, 2, &err), CU_OK);
	/* A live decision that uses nothing holds nothing. */
	d = dec("z", "cq-c", STORE_ADMITTED, 3);
	d.podsets = zero_ps;
	d.n_podsets = 1;
	put_ok(s, &d, NULL);
	commit_ok(s);
	cr_assert_eq(store_usage_foreach(s, collect_usage, &u, &err), CU_OK);
	cr_assert_eq(u.n, 4, "only cq-b is held; got %d rows", u.n);
	cr_assert_str_eq(u.rows[0], "cq-b/a100/nvidia.com/gpu=8000");
	cr_assert_str_eq(u.rows[1], "cq-b/default/cpu=2000");
	cr_assert_str_eq(u.rows[2], "cq-b/default/memory=4096000");
	cr_assert_str_eq(u.rows[3], "cq-b/spot/cpu=16000");
	consistent(s);
	store_close(s);
	cr_assert_eq(fx_raw_int(fx_tpath, "SELECT count(*) FROM usage"), 4,
	    "no zero rows stored");
}

/* ---- usage against a model --------------------------------------------- */

#define M_UIDS 40
#define M_CQS 3
#define M_FLS 3
#define M_RES 3

static const char *const m_res_names[M_RES] = {"cpu", "memory", "gpu"};

struct m_ps {
	int count;
	int nres;
	int res[M_RES];
	int fl[M_RES];
	int64_t milli[M_RES];
};

struct m_dec {
	bool present;
	int cq;
	enum store_state state;
	int nps;
	struct m_ps ps[2];
};

static uint64_t rng_state;

static uint64_t rng(void)
{
	/* xorshift64*: deterministic from the seed, no libc state. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

static int rnd(int n)
{
	return (int)(rng() % (uint64_t)n);
}

static void m_random(struct m_dec *m)
{
	static const enum store_state states[] = {STORE_RESERVED,
	    STORE_RESERVED, STORE_ADMITTED, STORE_EVICTING, STORE_RELEASED};

	m->present = true;
	m->cq = rnd(M_CQS);
	m->state = states[rnd(5)];
	m->nps = 1 + rnd(2);
	for (int i = 0; i < m->nps; i++) {
		struct m_ps *p = &m->ps[i];

		p->count = rnd(5);
		p->nres = 0;
		for (int r = 0; r < M_RES; r++) {
			if (rnd(3) == 0)
				continue;
			p->res[p->nres] = r;
			p->fl[p->nres] = rnd(M_FLS);
			p->milli[p->nres] = rnd(4) == 0 ? 0 : 1 + rnd(100000);
			p->nres++;
		}
	}
}

/* Turn a model decision into the API struct; strings live in bufs. */
struct m_bufs {
	char uid[16], cq[16], fl[2][M_RES][16];
	store_resource res[2][M_RES];
	store_podset ps[2];
};

static store_decision m_to_dec(
    int idx, const struct m_dec *m, struct m_bufs *b, int64_t t)
{
	static const char *const psn[2] = {"main", "extra"};
	store_decision d = {0};

	snprintf(b->uid, sizeof(b->uid), "uid-%d", idx);
	snprintf(b->cq, sizeof(b->cq), "cq-%d", m->cq);
	for (int i = 0; i < m->nps; i++) {
		for (int r = 0; r < m->ps[i].nres; r++) {
			snprintf(b->fl[i][r], sizeof(b->fl[i][r]), "fl-%d",
			    m->ps[i].fl[r]);
			b->res[i][r].resource = m_res_names[m->ps[i].res[r]];
			b->res[i][r].flavor = b->fl[i][r];
			b->res[i][r].milli = m->ps[i].milli[r];
		}
		b->ps[i].name = psn[i];
		b->ps[i].count = m->ps[i].count;
		b->ps[i].n_resources = (size_t)m->ps[i].nres;
		b->ps[i].resources = b->res[i];
	}
	d.uid = b->uid;
	d.ns = "ns";
	d.name = b->uid;
	d.cluster_queue = b->cq;
	d.state = m->state;
	d.decided_ns = t;
	d.n_podsets = (size_t)m->nps;
	d.podsets = b->ps;
	return d;
}

static int64_t m_usage(const struct m_dec *model, int cq, int fl, int res)
{
	int64_t sum = 0;

	for (int u = 0; u < M_UIDS; u++) {
		const struct m_dec *m = &model[u];

		if (!m->present || m->cq != cq || m->state == STORE_RELEASED)
			continue;
		for (int i = 0; i < m->nps; i++)
			for (int r = 0; r < m->ps[i].nres; r++)
				if (m->ps[i].fl[r] == fl &&
				    m->ps[i].res[r] == res)
					sum += m->ps[i].milli[r];
	}
	return sum;
}

static void m_verify(store *s, const struct m_dec *model)
{
	char cq[16], fl[16];

	for (int c = 0; c < M_CQS; c++)
		for (int f = 0; f < M_FLS; f++)
			for (int r = 0; r < M_RES; r++) {
				snprintf(cq, sizeof(cq), "cq-%d", c);
				snprintf(fl, sizeof(fl), "fl-%d", f);
				cr_assert_eq(usage(s, cq, fl, m_res_names[r]),
				    m_usage(model, c, f, r), "%s/%s/%s", cq, fl,
				    m_res_names[r]);
			}
	consistent(s);
}

static bool m_transition_ok(enum store_state from, enum store_state to)
{
	/* Written from the state diagram in store.h, independently of
	 * ledger.c's table. */
	static const bool ok[4][4] = {
	    /* to:      RES    ADM    EVI    REL */
	    /* RES */ {false, true, true, true},
	    /* ADM */ {false, false, true, true},
	    /* EVI */ {false, false, false, true},
	    /* REL */ {false, false, false, false},
	};
	return ok[from][to];
}

Test(store, usage_matches_model_after_random_operations, .timeout = 60)
{
	static struct m_dec model[M_UIDS], saved[M_UIDS];
	struct m_bufs b;
	cu_error err = {0};
	char uid[16];
	int commits = 0, rollbacks = 0, conflicts = 0;
	store *s = fx_open_ok(fx_tpath);

	rng_state = 0x5eed5eed12345678ULL;
	memcpy(saved, model, sizeof(model));
	begin_ok(s);
	for (int op = 0; op < 4000; op++) {
		int u = rnd(M_UIDS);
		int kind = rnd(100);
		struct m_dec *m = &model[u];

		snprintf(uid, sizeof(uid), "uid-%d", u);
		if (kind < 40) {
			struct m_dec nd;
			store_decision d;

			m_random(&nd);
			d = m_to_dec(u, &nd, &b, op);
			put_ok(s, &d, NULL);
			*m = nd;
		} else if (kind < 70) {
			enum store_state to = (enum store_state)rnd(4);
			int want = !m->present	    ? CU_ENOTFOUND
				   : m->state == to ? CU_OK
				   : m_transition_ok(m->state, to)
				       ? CU_OK
				       : CU_ECONFLICT;

			cr_assert_eq(
			    store_decision_set_state(s, uid, to, op, &err),
			    want, "op %d %s -> %d: %s", op, uid, to, err.msg);
			if (want == CU_OK)
				m->state = to;
			conflicts += want == CU_ECONFLICT;
		} else if (kind < 82) {
			cr_assert_eq(store_decision_delete(s, uid, &err),
			    m->present ? CU_OK : CU_ENOTFOUND);
			m->present = false;
		} else if (kind < 90) {
			store_decision *got = NULL;
			int rc = store_decision_get(s, uid, &got, &err);

			cr_assert_eq(rc, m->present ? CU_OK : CU_ENOTFOUND);
			if (rc == CU_OK) {
				cr_assert_eq(got->state, m->state);
				cr_assert_eq(got->n_podsets, (size_t)m->nps);
				store_decision_free(got);
			}
		} else if (kind < 97) {
			commit_ok(s);
			commits++;
			memcpy(saved, model, sizeof(model));
			m_verify(s, model);
			begin_ok(s);
		} else {
			store_rollback(s);
			rollbacks++;
			memcpy(model, saved, sizeof(model));
			m_verify(s, model);
			begin_ok(s);
		}
	}
	commit_ok(s);
	m_verify(s, model);
	store_close(s);
	/* And the same after a reopen. */
	s = fx_open_ok(fx_tpath);
	m_verify(s, model);
	store_close(s);
	/* Zero-usage rows are neither inserted nor left behind. */
	cr_assert_eq(
	    fx_raw_int(fx_tpath, "SELECT count(*) FROM usage WHERE milli = 0"),
	    0);
	cr_assert_gt(fx_raw_int(fx_tpath, "SELECT count(*) FROM usage"), 0);
	cr_assert_gt(commits, 50);
	cr_assert_gt(rollbacks, 10);
	cr_assert_gt(conflicts, 10);
}

Test(store, consistency_check_names_the_first_mismatch)
{
	store_decision d = dec("uid-1", "cq-a", STORE_ADMITTED, 1);
	cu_error err = {0};
	store *s = fx_open_ok(fx_tpath);

	begin_ok(s);
	put_ok(s, &d, NULL);
	commit_ok(s);
	consistent(s);
	store_close(s);
	fx_raw_exec(fx_tpath, "UPDATE usage SET milli = milli + 5 WHERE "
			      "cluster_queue = 'cq-a' AND flavor = 'spot'");
	s = fx_open_ok(fx_tpath);
	cr_assert_eq(store_check_consistency(s, &err), CU_EIO);
	cr_assert(
	    strstr(err.msg, "ledger inconsistent") != NULL, "%s", err.msg);
	cr_assert(
	    strstr(err.msg, "cq-a/spot/cpu is 16005") != NULL, "%s", err.msg);
	cr_assert(strstr(err.msg, "16000") != NULL, "%s", err.msg);
	store_close(s);

	/* A usage row for a queue that has no decision at all. */
	fx_raw_exec(fx_tpath,
	    "UPDATE usage SET milli = milli - 5 WHERE flavor = "
	    "'spot'; INSERT INTO usage VALUES ('ghost', 'f', 'cpu', 1)");
	s = fx_open_ok(fx_tpath);
	cr_assert_eq(store_check_consistency(s, &err), CU_EIO);
	cr_assert(strstr(err.msg, "ghost/f/cpu is 1") != NULL, "%s", err.msg);
	store_close(s);
}

/* ---- damaged and read-only files --------------------------------------- */

Test(store, garbage_file_is_reported_corrupt)
{
	char junk[8192];
	cu_error err = {0};
	store *s = NULL;
	int fd;

	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (char)(i * 131 + 7);
	fd = open(fx_tpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, junk, sizeof(junk)), (ssize_t)sizeof(junk));
	close(fd);
	cr_assert_eq(store_open(&s, fx_tpath, &err), CU_EPARSE);
	cr_assert_null(s);
	cr_assert(strncmp(err.msg, "ledger corrupt:", 15) == 0, "%s", err.msg);
	cr_assert(strstr(err.msg, fx_tpath) != NULL, "%s", err.msg);
}

Test(store, damaged_pages_are_reported_corrupt)
{
	cu_error err = {0};
	store *s = fx_open_ok(fx_tpath);
	char junk[4096];
	int rc, fd;
	struct stat stb;

	begin_ok(s);
	for (int i = 0; i < 200; i++) {
		char uid[16];
		store_decision d;

		snprintf(uid, sizeof(uid), "u%03d", i);
		d = dec(uid, "cq-a", STORE_ADMITTED, i);
		put_ok(s, &d, NULL);
	}
	commit_ok(s);
	store_close(s); /* checkpoints the WAL into the main file */
	cr_assert_eq(stat(fx_tpath, &stb), 0);
	cr_assert_gt(stb.st_size, 8 * 4096);
	/* Overwrite every page after the first with garbage. */
	memset(junk, 0xa5, sizeof(junk));
	fd = open(fx_tpath, O_WRONLY);
	cr_assert_geq(fd, 0);
	for (off_t off = 4096; off < stb.st_size; off += 4096)
		cr_assert_eq(
		    pwrite(fd, junk, sizeof(junk), off), (ssize_t)sizeof(junk));
	close(fd);
	rc = store_open(&s, fx_tpath, &err);
	if (rc == CU_OK) {
		/* The schema may be readable from page 1 alone; the damage
		 * then shows on the first access to the data pages. */
		rc = store_check_consistency(s, &err);
		store_close(s);
	}
	cr_assert_eq(rc, CU_EPARSE, "%s", err.msg);
	cr_assert(strncmp(err.msg, "ledger corrupt:", 15) == 0, "%s", err.msg);
}

/*
 * Tests run as root, where chmod 0400 does not stop writes. A read-only
 * open through a "file:...?mode=ro" URI is what an unwritable file looks
 * like to SQLite, so it stands in for one; as non-root the chmod case is
 * checked too.
 */
Test(store, read_only_ledger_is_refused)
{
	cu_error err = {0};
	char uri[400];
	store *s = fx_open_ok(fx_tpath);

	store_close(s);
	snprintf(uri, sizeof(uri), "file:%s?mode=ro", fx_tpath);
	s = NULL;
	cr_assert_eq(store_open(&s, uri, &err), CU_EDENIED);
	cr_assert_null(s);
	cr_assert(
	    strncmp(err.msg, "ledger read-only:", 17) == 0, "%s", err.msg);
	if (geteuid() != 0) {
		cr_assert_eq(chmod(fx_tpath, 0400), 0);
		cr_assert_eq(store_open(&s, fx_tpath, &err), CU_EDENIED);
		cr_assert(strncmp(err.msg, "ledger read-only:", 17) == 0, "%s",
		    err.msg);
	}
}

Test(store, unwritable_location_is_reported)
{
	cu_error err = {0};
	char bad[400];
	store *s = NULL;

	/* A path below a regular file cannot be created by anyone. */
	snprintf(bad, sizeof(bad), "%s/ledger.db/sub.db", fx_tdir);
	cr_assert_eq(store_open(&s, fx_tpath, &err), CU_OK);
	store_close(s);
	cr_assert_eq(store_open(&s, bad, &err), CU_EIO);
	cr_assert_null(s);
	cr_assert(strstr(err.msg, "cannot open") != NULL, "%s", err.msg);
	cr_assert_eq(store_open(&s, "", &err), CU_EINVAL);
}

/*
 * A full disk cannot be made on demand here; the size cap fails page
 * allocation with SQLITE_FULL exactly as a full disk does.
 */
Test(store, disk_full_is_reported_and_recoverable)
{
	cu_error err = {0};
	char uid[32];
	int rc = CU_OK, committed = 0;
	store *s = fx_open_ok(fx_tpath);

	cr_assert_eq(store_limit_size(s, -1, &err), CU_EINVAL);
	cr_assert_eq(
	    store_limit_size(s, 64 * 1024, &err), CU_OK, "%s", err.msg);
	for (int i = 0; i < 10000 && rc == CU_OK; i++) {
		rc = store_begin(s, &err);
		for (int j = 0; rc == CU_OK && j < 10; j++) {
			store_decision d;

			snprintf(uid, sizeof(uid), "u-%d-%d", i, j);
			d = dec(uid, "cq-a", STORE_ADMITTED, i);
			rc = store_decision_put(s, &d, NULL, &err);
		}
		if (rc == CU_OK)
			rc = store_commit(s, &err);
		if (rc == CU_OK)
			committed++;
	}
	cr_assert_eq(rc, CU_EQUOTA, "%s: %s", cu_err_name(rc), err.msg);
	cr_assert(
	    strncmp(err.msg, "ledger disk full:", 17) == 0, "%s", err.msg);
	cr_assert_gt(committed, 2);
	store_rollback(s);
	consistent(s);
	cr_assert_eq(usage(s, "cq-a", "default", "cpu"),
	    2000 * (int64_t)(committed * 10));
	/* With room again the same connection carries on. */
	cr_assert_eq(store_limit_size(s, 0, &err), CU_OK, "%s", err.msg);
	begin_ok(s);
	{
		store_decision d = dec("after", "cq-a", STORE_ADMITTED, 1);

		put_ok(s, &d, NULL);
	}
	commit_ok(s);
	consistent(s);
	cr_assert_eq(usage(s, "cq-a", "default", "cpu"),
	    2000 * (int64_t)(committed * 10 + 1));
	store_close(s);
}

/* ---- reconciliation ---------------------------------------------------- */

struct recon_log {
	char uid[16][16];
	enum store_recon what[16];
	int n;
};

static int log_recon(const char *uid, enum store_recon what, void *payload)
{
	struct recon_log *l = payload;

	snprintf(l->uid[l->n], sizeof(l->uid[0]), "%s", uid);
	l->what[l->n++] = what;
	return 0;
}

Test(store, reconcile_classifies_both_sides)
{
	static const struct {
		const char *uid;
		enum store_state st;
	} ledger[] = {
	    {"res-shown", STORE_RESERVED},
	    {"res-hidden", STORE_RESERVED},
	    {"adm-shown", STORE_ADMITTED},
	    {"adm-hidden", STORE_ADMITTED},
	    {"evi-orphan", STORE_EVICTING},
	    {"rel-shown", STORE_RELEASED},
	    {"res-orphan", STORE_RESERVED},
	};
	const store_api_view views[] = {
	    {"res-shown", true},
	    {"res-hidden", false},
	    {"adm-shown", true},
	    {"adm-hidden", false},
	    {"rel-shown", true},
	    {"new-shown", true},
	    {"new-hidden", false},
	};
	static const enum store_recon want[] = {
	    STORE_RECON_RESUME, STORE_RECON_UNANNOUNCED, STORE_RECON_RESUME,
	    STORE_RECON_STALE, STORE_RECON_ADOPT, STORE_RECON_ADOPT,
	    STORE_RECON_NONE, STORE_RECON_STALE, /* evi-orphan, in seq order */
	    STORE_RECON_UNANNOUNCED,		 /* res-orphan */
	};
	struct recon_log l = {0};
	enum store_recon one;
	cu_error err = {0};
	store *s = fx_open_ok(fx_tpath);

	begin_ok(s);
	for (size_t i = 0; i < sizeof(ledger) / sizeof(ledger[0]); i++) {
		store_decision d = dec(ledger[i].uid, "cq", ledger[i].st, 1);

		put_ok(s, &d, NULL);
	}
	commit_ok(s);

	cr_assert_eq(store_reconcile(s, views, 7, log_recon, &l, &err), CU_OK,
	    "%s", err.msg);
	cr_assert_eq(l.n, 9);
	for (int i = 0; i < 9; i++)
		cr_assert_eq(l.what[i], want[i], "%d %s: %s", i, l.uid[i],
		    store_recon_name(l.what[i]));
	cr_assert_str_eq(l.uid[7], "evi-orphan");
	cr_assert_str_eq(l.uid[8], "res-orphan");

	cr_assert_eq(
	    store_reconcile_one(s, "res-hidden", false, &one, &err), CU_OK);
	cr_assert_eq(one, STORE_RECON_UNANNOUNCED);
	cr_assert_eq(
	    store_reconcile_one(s, "nobody", false, &one, &err), CU_OK);
	cr_assert_eq(one, STORE_RECON_NONE);
	cr_assert_eq(store_reconcile_one(s, "", true, &one, &err), CU_EINVAL);

	/* An empty API view: every live decision is an orphan. */
	l.n = 0;
	cr_assert_eq(store_reconcile(s, NULL, 0, log_recon, &l, &err), CU_OK);
	cr_assert_eq(l.n, 6);
	cr_assert_str_eq(store_recon_name(STORE_RECON_ADOPT), "adopt");
	cr_assert_str_eq(store_state_name(STORE_EVICTING), "evicting");
	store_close(s);
}

/* ---- allocation failures inside SQLite --------------------------------- */

/* One loop turn: begin, put, commit, read back. */
static int turn(store *s, const char *uid, cu_error *err)
{
	store_decision d = dec(uid, "cq-a", STORE_RESERVED, 1);
	store_decision *got = NULL;
	int rc;

	rc = store_begin(s, err);
	if (rc == CU_OK)
		rc = store_decision_put(s, &d, NULL, err);
	if (rc == CU_OK)
		rc = store_commit(s, err);
	if (rc == CU_OK)
		rc = store_decision_get(s, uid, &got, err);
	store_decision_free(got);
	return rc;
}

/*
 * Fail each allocation of a loop turn in turn (curl's torture test, and
 * SQLite's own malloc tests): every outcome must be CU_OK or a clean
 * CU_ENOMEM, the ledger must stay consistent and usable, and nothing may
 * leak (LeakSanitizer).
 */
Test(store, allocation_failures_in_a_turn_end_in_clean_errors, .timeout = 60)
{
	cu_error err = {0};
	uint64_t before, calls;
	int failures = 0;
	char uid[32];
	store *s = fx_open_ok(fx_tpath);

	before = cu_mem_calls();
	cr_assert_eq(turn(s, "warmup", &err), CU_OK, "%s", err.msg);
	calls = cu_mem_calls() - before;
	cr_assert_gt(calls, 0);
	for (uint64_t n = 1; n <= calls + 2; n++) {
		int rc;

		snprintf(uid, sizeof(uid), "uid-%llu", (unsigned long long)n);
		cu_mem_fail_after(n, false);
		rc = turn(s, uid, &err);
		cu_mem_fail_after(0, false);
		cr_assert(rc == CU_OK || rc == CU_ENOMEM, "n=%llu rc=%s: %s",
		    (unsigned long long)n, cu_err_name(rc), err.msg);
		failures += rc == CU_ENOMEM;
		store_rollback(s);
		consistent(s);
		snprintf(uid, sizeof(uid), "after-%llu", (unsigned long long)n);
		cr_assert_eq(turn(s, uid, &err), CU_OK, "n=%llu: %s",
		    (unsigned long long)n, err.msg);
	}
	cr_assert_gt(failures, 0);
	store_close(s);
}

/* Opening allocates thousands of times inside SQLite (schema parse,
 * statement preparation), so sample the range instead of walking it. */
Test(store, allocation_failures_in_open_end_in_clean_errors, .timeout = 60)
{
	cu_error err = {0};
	uint64_t before, calls;
	int failures = 0;
	store *s = fx_open_ok(fx_tpath);

	store_close(s);
	before = cu_mem_calls();
	s = fx_open_ok(fx_tpath);
	store_close(s);
	calls = cu_mem_calls() - before;
	/* SQLite's allocations go through cu_malloc, not only ours. */
	cr_assert_gt(calls, 100, "SQLite allocations not routed: %llu",
	    (unsigned long long)calls);
	for (uint64_t i = 0; i < 120; i++) {
		uint64_t n = i < 40 ? i + 1 : 1 + (i - 40) * calls / 80;
		int rc;

		s = NULL;
		cu_mem_fail_after(n, false);
		rc = store_open(&s, fx_tpath, &err);
		cu_mem_fail_after(0, false);
		cr_assert(rc == CU_OK || rc == CU_ENOMEM, "n=%llu rc=%s: %s",
		    (unsigned long long)n, cu_err_name(rc), err.msg);
		cr_assert(rc == CU_OK ? s != NULL : s == NULL);
		failures += rc == CU_ENOMEM;
		store_close(s);
	}
	cr_assert_gt(failures, 10);
	s = fx_open_ok(fx_tpath);
	consistent(s);
	store_close(s);
}
