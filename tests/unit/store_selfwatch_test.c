/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/store_selfwatch_test.c - the ledger watches itself
 * (store/selfwatch.c): a file deleted, moved away or replaced while open
 * is noticed; store_relink writes a new file at the path with the live
 * decisions (states kept, released ones left out, usage equal), moves a
 * replacement aside, and the store goes on in the new file (a restart
 * reads it); with the WAL at a file-size limit that stays, commits fail
 * until store_checkpoint truncates the WAL, then they succeed under the
 * same limit.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cu.h"
#include "store/store.h"
#include "tests/unit/fixtures.h"

TestSuite(store_selfwatch, .init = fx_tdir_setup, .fini = fx_tdir_teardown);

static const store_resource res[] = {
    {.resource = "cpu", .flavor = "default", .milli = 1000},
};
static const store_podset podsets[] = {
    {.name = "main", .count = 1, .n_resources = 1, .resources = res},
};

static void put(store *s, const char *uid, enum store_state st)
{
	store_decision d = {.uid = uid,
	    .ns = "team",
	    .name = uid,
	    .cluster_queue = "cq",
	    .state = st,
	    .decided_ns = 1,
	    .n_podsets = 1,
	    .podsets = podsets};
	cu_error err = {0};

	cr_assert_eq(store_begin(s, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(
	    store_decision_put(s, &d, NULL, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(store_commit(s, &err), CU_OK, "%s", err.msg);
}

static enum store_state state_of(store *s, const char *uid)
{
	store_decision *d = NULL;
	cu_error err = {0};
	enum store_state st;

	cr_assert_eq(store_decision_get(s, uid, &d, &err), CU_OK, "%s: %s", uid,
	    err.msg);
	st = d->state;
	store_decision_free(d);
	return st;
}

static bool absent(store *s, const char *uid)
{
	store_decision *d = NULL;
	cu_error err = {0};
	int rc = store_decision_get(s, uid, &d, &err);

	store_decision_free(d);
	cr_log_info("absent(%s): %s %s", uid, cu_err_name(rc), err.msg);
	return rc == CU_ENOTFOUND;
}

static int64_t cpu(store *s)
{
	int64_t v = -1;

	cr_assert_eq(
	    store_usage_get(s, "cq", "default", "cpu", &v, NULL), CU_OK);
	return v;
}

static enum store_file_state check(store *s)
{
	enum store_file_state st = STORE_FILE_OK;
	cu_error err = {0};

	cr_assert_eq(store_file_check(s, &st, &err), CU_OK, "%s", err.msg);
	return st;
}

/* How many entries of fx_tdir start with prefix. */
static int count_files(const char *prefix)
{
	DIR *d = opendir(fx_tdir);
	struct dirent *e;
	int n = 0;

	cr_assert_not_null(d);
	while ((e = readdir(d)) != NULL)
		n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
	closedir(d);
	return n;
}

Test(store_selfwatch, deleted_while_open_is_relinked_with_the_live_decisions)
{
	store *s = fx_open_ok(fx_tpath);
	char wal[320], shm[320];
	cu_error err = {0};
	size_t n = 0;

	put(s, "a", STORE_ADMITTED);
	put(s, "b", STORE_RESERVED);
	put(s, "c", STORE_RELEASED);
	cr_assert_eq(check(s), STORE_FILE_OK);
	snprintf(wal, sizeof(wal), "%s-wal", fx_tpath);
	snprintf(shm, sizeof(shm), "%s-shm", fx_tpath);
	/* Only the file: its -wal and -shm stay (and must not be replayed
	 * into the new one). */
	cr_assert_eq(unlink(fx_tpath), 0);
	cr_assert_eq(access(wal, F_OK), 0);
	cr_assert_eq(check(s), STORE_FILE_DELETED);
	/* Decisions go on (to the unlinked file) until the relink. */
	put(s, "d", STORE_ADMITTED);
	cr_assert_eq(store_relink(s, &n, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(n, 3, "a, b, d carried over; c was released");
	cr_assert_eq(check(s), STORE_FILE_OK);
	cr_assert_eq(access(fx_tpath, F_OK), 0, "a file at the path again");
	cr_assert_eq(state_of(s, "a"), STORE_ADMITTED);
	cr_assert_eq(state_of(s, "b"), STORE_RESERVED);
	cr_assert_eq(state_of(s, "d"), STORE_ADMITTED);
	cr_assert(absent(s, "c"));
	cr_assert_eq(cpu(s), 3000, "usage of the three live decisions");
	cr_assert_eq(store_check_consistency(s, &err), CU_OK, "%s", err.msg);
	/* It goes on in the new file, and a restart reads it. */
	put(s, "e", STORE_ADMITTED);
	store_close(s);
	s = fx_open_ok(fx_tpath);
	cr_assert_eq(state_of(s, "d"), STORE_ADMITTED);
	cr_assert_eq(state_of(s, "e"), STORE_ADMITTED);
	cr_assert_eq(cpu(s), 4000);
	cr_assert_eq(count_files("ledger.db.relink"), 0, "no temporary left");
	(void)shm;
	store_close(s);
}

Test(store_selfwatch, moved_away_counts_as_deleted)
{
	store *s = fx_open_ok(fx_tpath);
	char away[320];

	put(s, "a", STORE_ADMITTED);
	snprintf(away, sizeof(away), "%s.old", fx_tpath);
	cr_assert_eq(rename(fx_tpath, away), 0);
	cr_assert_eq(check(s), STORE_FILE_DELETED);
	store_close(s);
}

Test(store_selfwatch, replaced_file_is_moved_aside_and_the_open_one_wins)
{
	store *s = fx_open_ok(fx_tpath), *other;
	char tmp[320];
	cu_error err = {0};
	size_t n = 0;

	put(s, "mine", STORE_ADMITTED);
	/* Another ledger copied over the path (an old backup). */
	snprintf(tmp, sizeof(tmp), "%s/other.db", fx_tdir);
	other = fx_open_ok(tmp);
	put(other, "theirs", STORE_ADMITTED);
	store_close(other);
	cr_assert_eq(rename(tmp, fx_tpath), 0);
	cr_assert_eq(check(s), STORE_FILE_REPLACED);
	cr_assert_eq(store_relink(s, &n, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(n, 1);
	cr_assert_eq(check(s), STORE_FILE_OK);
	cr_assert_eq(state_of(s, "mine"), STORE_ADMITTED);
	cr_assert(absent(s, "theirs"), "the replacement is not mixed in");
	cr_assert_eq(count_files("ledger.db.replaced-"), 1, "moved aside");
	store_close(s);
}

Test(store_selfwatch, memory_ledgers_are_not_watched)
{
	store *s = fx_open_ok(":memory:");

	cr_assert_eq(check(s), STORE_FILE_OK);
	cr_assert_eq(store_relink(s, NULL, NULL), CU_EINVAL);
	store_close(s);
}

/* One transaction of n decisions "<prefix>-i"; its result. */
static int put_many(store *s, const char *prefix, int n, cu_error *err)
{
	int rc = store_begin(s, err);
	char uid[64];

	for (int i = 0; rc == CU_OK && i < n; i++) {
		store_decision d = {.uid = uid,
		    .ns = "team",
		    .name = uid,
		    .cluster_queue = "cq",
		    .state = STORE_ADMITTED,
		    .decided_ns = 1,
		    .n_podsets = 1,
		    .podsets = podsets};

		snprintf(uid, sizeof(uid), "%s-%d", prefix, i);
		rc = store_decision_put(s, &d, NULL, err);
	}
	if (rc == CU_OK)
		rc = store_commit(s, err);
	if (rc != CU_OK)
		store_rollback(s);
	return rc;
}

/* The WAL reached a file-size limit that stays: commits fail for good
 * (SQLite checkpoints only after a commit that succeeds) until a
 * checkpoint folds the WAL back and truncates it. */
Test(store_selfwatch, a_checkpoint_makes_room_in_a_wal_at_its_limit)
{
	store *s = fx_open_ok(fx_tpath);
	char wal[320];
	cu_error err = {0};
	int64_t limit;
	int i, rc;

	snprintf(wal, sizeof(wal), "%s-wal", fx_tpath);
	for (i = 0; i < 8; i++) {
		char p[16];

		snprintf(p, sizeof(p), "w%d", i);
		cr_assert_eq(put_many(s, p, 10, &err), CU_OK, "%s", err.msg);
	}
	limit = fx_file_size(wal);
	if (fx_file_size(fx_tpath) > limit)
		limit = fx_file_size(fx_tpath);
	cr_assert_gt(limit, 0);
	fx_fsize_limit((rlim_t)limit + 8192);
	for (i = 0; i < 5; i++) {
		rc = put_many(s, "late", 40, &err);
		cr_assert_eq(rc, CU_EQUOTA, "turn %d: %s: %s", i,
		    cu_err_name(rc), err.msg);
	}
	cr_assert_eq(store_checkpoint(s, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(fx_file_size(wal), 0, "the WAL truncated");
	rc = put_many(s, "late", 40, &err);
	cr_assert_eq(rc, CU_OK, "under the same limit: %s: %s", cu_err_name(rc),
	    err.msg);
	fx_fsize_limit(RLIM_INFINITY);
	cr_assert_eq(store_check_consistency(s, &err), CU_OK, "%s", err.msg);
	store_close(s);
}
