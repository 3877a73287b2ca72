/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/store_restart_test.c - what a restarted controller needs from
 * the ledger to re-check a recorded decision: the Workload generation the
 * decision was made for (schema v3, and its migration from v2), withdrawing
 * a decision that was never announced (and never one that was), and an
 * emptied (0-byte) ledger file being said aloud rather than silently
 * replaced by a new one.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cu.h"
#include "store/store.h"
#include "tests/unit/fixtures.h"

TestSuite(store_restart, .init = fx_tdir_setup, .fini = fx_tdir_teardown);

/* ---- helpers ----------------------------------------------------------- */

static store *open_ok(void)
{
	return fx_open_ok(fx_tpath);
}

static const store_resource cpu6[] = {
    {.resource = "cpu", .flavor = "default", .milli = 6000},
};
static const store_podset main6[] = {
    {.name = "main", .count = 1, .n_resources = 1, .resources = cpu6},
};

static void put(store *s, const char *uid, enum store_state st, int64_t gen)
{
	store_decision d = {.uid = uid,
	    .ns = "ns",
	    .name = uid,
	    .cluster_queue = "cq",
	    .state = st,
	    .decided_ns = 10,
	    .generation = gen,
	    .n_podsets = 1,
	    .podsets = main6};
	cu_error err = {0};

	cr_assert_eq(store_begin(s, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(
	    store_decision_put(s, &d, NULL, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(store_commit(s, &err), CU_OK, "%s", err.msg);
}

static int64_t cq_cpu(store *s)
{
	int64_t v = -1;
	cu_error err = {0};

	cr_assert_eq(store_usage_get(s, "cq", "default", "cpu", &v, &err),
	    CU_OK, "%s", err.msg);
	return v;
}

/* Run fn with stderr (where cu_log writes) captured into buf. */
static void capture_stderr(char *buf, size_t len, void (*fn)(void *), void *arg)
{
	char path[320];
	int saved = dup(2), fd;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/stderr.txt", fx_tdir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	cr_assert_geq(fd, 0);
	fflush(stderr);
	dup2(fd, 2);
	fn(arg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, buf, len - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	close(fd);
	unlink(path);
}

struct open_run {
	store *s;
	cu_error err;
	int rc;
};

static void run_open(void *arg)
{
	struct open_run *r = arg;

	r->rc = store_open_or_rebuild(&r->s, fx_tpath, NULL, &r->err);
}

/* ---- generation -------------------------------------------------------- */

Test(store_restart, generation_is_kept_with_the_decision)
{
	store_decision *got = NULL;
	cu_error err = {0};
	store *s = open_ok();

	put(s, "u1", STORE_RESERVED, 7);
	put(s, "u2", STORE_RESERVED, 0);
	store_close(s);
	s = open_ok();
	cr_assert_eq(store_decision_get(s, "u1", &got, &err), CU_OK);
	cr_assert_eq(got->generation, 7);
	store_decision_free(got);
	cr_assert_eq(store_decision_get(s, "u2", &got, &err), CU_OK);
	cr_assert_eq(got->generation, 0, "0 = not recorded");
	store_decision_free(got);
	store_close(s);
}

Test(store_restart, negative_generation_is_rejected)
{
	store_decision d = {.uid = "u",
	    .ns = "ns",
	    .name = "w",
	    .cluster_queue = "cq",
	    .generation = -1,
	    .n_podsets = 1,
	    .podsets = main6};
	cu_error err = {0};
	store *s = open_ok();

	cr_assert_eq(store_begin(s, &err), CU_OK);
	cr_assert_eq(store_decision_put(s, &d, NULL, &err), CU_EINVAL);
	cr_assert(strstr(err.msg, "generation") != NULL, "%s", err.msg);
	store_rollback(s);
	store_close(s);
}

/* The v2 schema exactly as v2 binaries wrote it (frozen), with rows. */
static const char v2_ledger[] =
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
    "ALTER TABLE decision ADD COLUMN state_ns INTEGER NOT NULL DEFAULT 0;"
    "CREATE TABLE usage(cluster_queue TEXT NOT NULL, flavor TEXT NOT NULL,"
    " resource TEXT NOT NULL, milli INTEGER NOT NULL,"
    " PRIMARY KEY (cluster_queue, flavor, resource)) STRICT, WITHOUT ROWID;"
    "INSERT INTO meta VALUES ('last_seq', 4);"
    "INSERT INTO decision VALUES ('u-res', 'ns', 'w1', 'cq', 0, 111, 4, "
    "111);"
    "INSERT INTO podset VALUES ('u-res', 0, 'main', 1);"
    "INSERT INTO podset_resource VALUES ('u-res', 0, 'cpu', 'default', "
    "6000);"
    "INSERT INTO usage VALUES ('cq', 'default', 'cpu', 6000);"
    "PRAGMA application_id = 1668631623;"
    "PRAGMA user_version = 2;";

Test(store_restart, v2_ledger_migrates_with_generation_unknown)
{
	store_decision *got = NULL;
	cu_error err = {0};
	store *s;

	fx_raw_exec(fx_tpath, v2_ledger);
	s = open_ok();
	cr_assert_eq(
	    fx_raw_int(fx_tpath, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	cr_assert_eq(STORE_SCHEMA_VERSION, 5);
	cr_assert_eq(
	    store_decision_get(s, "u-res", &got, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(got->state, STORE_RESERVED);
	cr_assert_null(got->podsets[0].topology, "no topology before v4");
	cr_assert_eq(got->generation, 0, "not recorded before v3");
	cr_assert_eq(got->state_ns, 111);
	store_decision_free(got);
	cr_assert_eq(cq_cpu(s), 6000);
	cr_assert_eq(store_check_consistency(s, &err), CU_OK, "%s", err.msg);
	/* New decisions carry their generation. */
	put(s, "u-new", STORE_RESERVED, 3);
	cr_assert_eq(store_decision_get(s, "u-new", &got, &err), CU_OK);
	cr_assert_eq(got->generation, 3);
	cr_assert_eq(got->seq, 5);
	store_decision_free(got);
	store_close(s);
}

/* A podSet placed by topology keeps its topologyAssignment (v4). */
Test(store_restart, topology_assignment_round_trips)
{
	static const char topo[] =
	    "{\"levels\":[\"kubernetes.io/hostname\"],\"slices\":[]}";
	store_podset ps[2];
	store_decision d = {.uid = "u-tas",
	    .ns = "ns",
	    .name = "w",
	    .cluster_queue = "cq",
	    .state = STORE_RESERVED,
	    .decided_ns = 10,
	    .n_podsets = 2,
	    .podsets = ps};
	store_decision *got = NULL;
	cu_error err = {0};
	store *s = open_ok();

	ps[0] = main6[0];
	ps[0].topology = topo;
	ps[1] = main6[0];
	ps[1].name = "workers";
	cr_assert_eq(store_begin(s, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(
	    store_decision_put(s, &d, NULL, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(store_commit(s, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(
	    store_decision_get(s, "u-tas", &got, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(got->n_podsets, 2);
	cr_assert_str_eq(got->podsets[0].topology, topo);
	cr_assert_null(got->podsets[1].topology);
	store_decision_free(got);
	store_close(s);
}

/* ---- withdraw ---------------------------------------------------------- */

Test(store_restart, withdraw_removes_an_unannounced_decision_and_its_usage)
{
	cu_error err = {0};
	store_decision *got = NULL;
	store *s = open_ok();

	put(s, "res", STORE_RESERVED, 1);
	put(s, "adm", STORE_ADMITTED, 1);
	cr_assert_eq(cq_cpu(s), 12000);
	cr_assert_eq(store_begin(s, &err), CU_OK);
	cr_assert_eq(
	    store_decision_withdraw(s, "res", &err), CU_OK, "%s", err.msg);
	cr_assert_eq(store_commit(s, &err), CU_OK);
	cr_assert_eq(cq_cpu(s), 6000);
	cr_assert_eq(store_decision_get(s, "res", &got, &err), CU_ENOTFOUND);
	cr_assert_eq(store_check_consistency(s, &err), CU_OK, "%s", err.msg);
	store_close(s);
}

Test(store_restart, withdraw_never_touches_an_announced_decision)
{
	cu_error err = {0};
	store_decision *got = NULL;
	store *s = open_ok();

	put(s, "adm", STORE_ADMITTED, 1);
	put(s, "evi", STORE_EVICTING, 1);
	cr_assert_eq(store_begin(s, &err), CU_OK);
	cr_assert_eq(store_decision_withdraw(s, "adm", &err), CU_ECONFLICT);
	cr_assert(strstr(err.msg, "admitted") != NULL, "%s", err.msg);
	cr_assert_eq(store_decision_withdraw(s, "evi", &err), CU_ECONFLICT);
	cr_assert_eq(store_decision_withdraw(s, "none", &err), CU_ENOTFOUND);
	cr_assert_eq(store_commit(s, &err), CU_OK);
	cr_assert_eq(cq_cpu(s), 12000);
	cr_assert_eq(store_decision_get(s, "adm", &got, &err), CU_OK);
	cr_assert_eq(got->state, STORE_ADMITTED);
	store_decision_free(got);
	store_close(s);
}

Test(store_restart, withdraw_needs_a_transaction)
{
	cu_error err = {0};
	store *s = open_ok();

	put(s, "res", STORE_RESERVED, 1);
	cr_assert_eq(store_decision_withdraw(s, "res", &err), CU_EINVAL);
	cr_assert_eq(cq_cpu(s), 6000);
	store_close(s);
}

/* ---- an emptied file --------------------------------------------------- */

/* A ledger truncated to 0 bytes opens as a new one (SQLite sees an empty
 * database), and says so in one warning naming the file and the cause. */
Test(store_restart, truncated_ledger_is_rebuilt_with_a_warning)
{
	struct open_run r = {0};
	char log[4096];
	int64_t seq = -1;
	store *s = open_ok();

	put(s, "lost", STORE_ADMITTED, 1);
	store_close(s);
	cr_assert_eq(truncate(fx_tpath, 0), 0);
	capture_stderr(log, sizeof(log), run_open, &r);
	cr_assert_eq(r.rc, CU_OK, "%s", r.err.msg);
	cr_assert(strstr(log, "was empty (0 bytes") != NULL, "log: %s", log);
	cr_assert(strstr(log, fx_tpath) != NULL, "log: %s", log);
	cr_assert(
	    strstr(log, "rebuilt from the API server") != NULL, "%s", log);
	cr_assert_eq(
	    strchr(log, '\n'), strrchr(log, '\n'), "one line: %s", log);
	cr_assert_eq(store_last_seq(r.s, &seq, &r.err), CU_OK);
	cr_assert_eq(seq, 0, "a new ledger");
	store_close(r.s);
}

/* A new file, and a healthy ledger, open without a word. */
Test(store_restart, new_and_healthy_ledgers_open_quietly)
{
	struct open_run r = {0};
	char log[4096];

	capture_stderr(log, sizeof(log), run_open, &r);
	cr_assert_eq(r.rc, CU_OK, "%s", r.err.msg);
	cr_assert_str_eq(log, "", "new file: %s", log);
	put(r.s, "kept", STORE_ADMITTED, 1);
	store_close(r.s);
	memset(&r, 0, sizeof(r));
	capture_stderr(log, sizeof(log), run_open, &r);
	cr_assert_eq(r.rc, CU_OK, "%s", r.err.msg);
	cr_assert_str_eq(log, "", "healthy ledger: %s", log);
	cr_assert_eq(cq_cpu(r.s), 6000);
	store_close(r.s);
}
