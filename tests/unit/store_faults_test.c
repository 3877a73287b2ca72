/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/store_faults_test.c - store/ under real faults: a file size
 * limit hit in the middle of operation and during a migration (the "disk
 * full" path through EFBIG, not the max_page_count cap), a ledger that an
 * unprivileged user cannot write (root drops to uid 65534 first, because
 * chmod does not stop root), a corrupt ledger moved aside and rebuilt, and
 * the modes of the ledger and its journals under umask 0.
 *
 * Each outcome is checked together with "nothing committed was lost": the
 * decisions committed before the fault are read back afterwards.
 * Criterion runs every test in its own process, so the rlimit, umask and
 * uid changes stay inside the test that makes them.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cu.h"
#include "store/store.h"
#include "tests/unit/fixtures.h"

/* The unprivileged user root drops to (Debian's "nobody"). */
#define NOBODY 65534

TestSuite(store_faults, .init = fx_tdir_setup, .fini = fx_tdir_teardown);

/* ---- helpers ----------------------------------------------------------- */

static const store_resource res[] = {
    {.resource = "cpu", .flavor = "default", .milli = 1000},
    {.resource = "memory", .flavor = "default", .milli = 2048000},
};
static const store_podset podsets[] = {
    {.name = "main", .count = 2, .n_resources = 2, .resources = res},
};

static store_decision dec(const char *uid, int64_t t)
{
	store_decision d = {
	    .uid = uid,
	    .ns = "team",
	    .name = uid,
	    .cluster_queue = "cq",
	    .state = STORE_ADMITTED,
	    .decided_ns = t,
	    .n_podsets = 1,
	    .podsets = podsets,
	};
	return d;
}

/* One committed transaction putting uids "<prefix>-<from>" up to
 * "<prefix>-<to - 1>" (ADMITTED); returns the first failure. */
static int put_range(
    store *s, const char *prefix, int from, int to, cu_error *err)
{
	char uid[64];
	int rc = store_begin(s, err);

	for (int i = from; rc == CU_OK && i < to; i++) {
		store_decision d;

		snprintf(uid, sizeof(uid), "%s-%d", prefix, i);
		d = dec(uid, i);
		rc = store_decision_put(s, &d, NULL, err);
	}
	if (rc == CU_OK)
		rc = store_commit(s, err);
	if (rc != CU_OK)
		store_rollback(s);
	return rc;
}

static void put_range_ok(store *s, const char *prefix, int from, int to)
{
	cu_error err = {0};

	cr_assert_eq(put_range(s, prefix, from, to, &err), CU_OK, "%s: %s",
	    prefix, err.msg);
}

/* Assert that uid is (or is not) a recorded ADMITTED decision. */
static void has(store *s, const char *uid, bool want)
{
	store_decision *d = NULL;
	cu_error err = {0};
	int rc = store_decision_get(s, uid, &d, &err);

	if (!want) {
		cr_assert_eq(
		    rc, CU_ENOTFOUND, "%s should be absent: %s", uid, err.msg);
		return;
	}
	cr_assert_eq(rc, CU_OK, "%s: %s", uid, err.msg);
	cr_assert_eq(d->state, STORE_ADMITTED, "%s state", uid);
	cr_assert_eq(d->n_podsets, 1);
	cr_assert_eq(d->podsets[0].n_resources, 2);
	store_decision_free(d);
}

static int64_t cpu_usage(store *s)
{
	cu_error err = {0};
	int64_t v = -1;

	cr_assert_eq(store_usage_get(s, "cq", "default", "cpu", &v, &err),
	    CU_OK, "%s", err.msg);
	return v;
}

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* ---- a full disk --------------------------------------------------------- */

/*
 * The WAL cannot grow any more: the next commit fails as "ledger disk
 * full", nothing of the failed batch is recorded, everything committed
 * before is intact, and once there is room the same connection goes on.
 */
Test(store_faults, file_size_limit_mid_operation_is_disk_full)
{
	char wal[320];
	cu_error err = {0};
	int rc;
	store *s = fx_open_ok(fx_tpath);

	snprintf(wal, sizeof(wal), "%s-wal", fx_tpath);
	put_range_ok(s, "before", 0, 5);
	cr_assert_gt(fx_file_size(wal), 0, "the WAL holds the commits");
	fx_fsize_limit((rlim_t)fx_file_size(wal));
	rc = put_range(s, "during", 0, 20, &err);
	cr_assert_eq(rc, CU_EQUOTA, "%s: %s", cu_err_name(rc), err.msg);
	cr_assert(starts_with(err.msg, "ledger disk full:"), "%s", err.msg);
	cr_assert(strstr(err.msg, fx_tpath) != NULL, "%s", err.msg);
	cr_assert(!store_in_txn(s));
	/* Still full: the next turn fails the same way, not worse. */
	rc = put_range(s, "during", 0, 1, &err);
	cr_assert_eq(rc, CU_EQUOTA, "%s: %s", cu_err_name(rc), err.msg);
	for (int i = 0; i < 5; i++) {
		char uid[32];

		snprintf(uid, sizeof(uid), "before-%d", i);
		has(s, uid, true);
	}
	has(s, "during-0", false);
	cr_assert_eq(cpu_usage(s), 5 * 1000);
	cr_assert_eq(store_check_consistency(s, &err), CU_OK, "%s", err.msg);
	/* Room again: the same connection commits. */
	fx_fsize_limit(RLIM_INFINITY);
	put_range_ok(s, "after", 0, 3);
	store_close(s);
	/* And a restart sees exactly the committed decisions. */
	s = fx_open_ok(fx_tpath);
	has(s, "before-4", true);
	has(s, "after-2", true);
	has(s, "during-0", false);
	cr_assert_eq(cpu_usage(s), 8 * 1000);
	cr_assert_eq(store_check_consistency(s, &err), CU_OK, "%s", err.msg);
	store_close(s);
}

/* An old (v1) ledger with enough decisions that the v1->v2 migration
 * writes well past 32 KiB of WAL. Built by writing a current ledger and
 * taking v3 and v2 apart again, which is what v1 looked like. */
static void make_v1_ledger(int n)
{
	store *s = fx_open_ok(fx_tpath);

	put_range_ok(s, "old", 0, n);
	store_close(s);
	fx_raw_exec(fx_tpath, "ALTER TABLE podset DROP COLUMN topology;"
			      "ALTER TABLE decision DROP COLUMN generation;"
			      "ALTER TABLE decision DROP COLUMN state_ns;"
			      "DROP TABLE usage; DROP TABLE mk_dispatch;"
			      "PRAGMA user_version = 1;");
	cr_assert_eq(fx_raw_int(fx_tpath, "PRAGMA user_version"), 1);
}

/*
 * The disk fills while an old ledger is migrated at start-up: the open
 * fails as "ledger disk full" and the file is still a complete v1 ledger
 * (migrate.c invariant 2), which migrates once there is room.
 */
Test(store_faults, disk_full_during_migration_keeps_the_old_schema)
{
	cu_error err = {0};
	store *s = NULL;
	int rc;

	make_v1_ledger(3000);
	/* Room for the -shm index (32 KiB) but not for the migration. */
	fx_fsize_limit(32768);
	rc = store_open(&s, fx_tpath, &err);
	cr_assert_eq(rc, CU_EQUOTA, "%s: %s", cu_err_name(rc), err.msg);
	cr_assert_null(s);
	cr_assert(starts_with(err.msg, "ledger disk full:"), "%s", err.msg);
	fx_fsize_limit(RLIM_INFINITY);
	cr_assert_eq(fx_raw_int(fx_tpath, "PRAGMA user_version"), 1);
	cr_assert_eq(
	    fx_raw_int(fx_tpath, "SELECT count(*) FROM decision"), 3000);
	s = fx_open_ok(fx_tpath);
	cr_assert_eq(
	    fx_raw_int(fx_tpath, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	has(s, "old-0", true);
	has(s, "old-2999", true);
	cr_assert_eq(cpu_usage(s), 3000 * 1000);
	cr_assert_eq(store_check_consistency(s, &err), CU_OK, "%s", err.msg);
	store_close(s);
}

/* ---- a read-only ledger -------------------------------------------------- */

/*
 * Give tdir and its files to NOBODY and become NOBODY (this test process
 * only). As non-root, nothing to do: the modes below bind the owner.
 */
static void become_unprivileged(void)
{
	DIR *d;
	struct dirent *e;
	char p[600];

	if (geteuid() != 0)
		return;
	cr_assert_eq(chown(fx_tdir, NOBODY, NOBODY), 0);
	d = opendir(fx_tdir);
	cr_assert_not_null(d);
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", fx_tdir, e->d_name);
		cr_assert_eq(chown(p, NOBODY, NOBODY), 0, "chown %s", p);
	}
	closedir(d);
	cr_assert_eq(setgroups(0, NULL), 0);
	cr_assert_eq(setgid(NOBODY), 0);
	cr_assert_eq(setuid(NOBODY), 0);
	cr_assert_neq(geteuid(), 0);
	/* LeakSanitizer needs a dumpable process to inspect itself. */
	(void)prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
}

/*
 * A ledger file its user cannot write is refused at open with "ledger
 * read-only" (the controller then stops with that line: a new file would
 * not be writable either), and the file is left exactly as it was.
 */
Test(store_faults, unwritable_ledger_file_is_refused_untouched)
{
	cu_error err = {0};
	store *s = fx_open_ok(fx_tpath);
	int64_t size;
	int rc;

	put_range_ok(s, "kept", 0, 3);
	store_close(s);
	size = fx_file_size(fx_tpath);
	become_unprivileged();
	cr_assert_eq(chmod(fx_tpath, 0400), 0);
	s = NULL;
	rc = store_open(&s, fx_tpath, &err);
	cr_assert_eq(rc, CU_EDENIED, "%s: %s", cu_err_name(rc), err.msg);
	cr_assert_null(s);
	cr_assert(starts_with(err.msg, "ledger read-only:"), "%s", err.msg);
	/* Not "repaired" by a rebuild either. */
	rc = store_open_or_rebuild(&s, fx_tpath, NULL, &err);
	cr_assert_eq(rc, CU_EDENIED, "%s: %s", cu_err_name(rc), err.msg);
	cr_assert_eq(fx_file_size(fx_tpath), size);
	cr_assert_eq(chmod(fx_tpath, 0600), 0);
	s = fx_open_ok(fx_tpath);
	has(s, "kept-2", true);
	store_close(s);
}

/*
 * A writable file in a directory the user cannot write: WAL mode needs to
 * create ledger.db-wal and -shm next to it, so this is a read-only ledger
 * too, found at open rather than at the first commit.
 */
Test(store_faults, unwritable_ledger_directory_is_refused)
{
	cu_error err = {0};
	store *s = fx_open_ok(fx_tpath);
	int rc;

	put_range_ok(s, "kept", 0, 3);
	store_close(s);
	become_unprivileged();
	cr_assert_eq(chmod(fx_tdir, 0500), 0);
	s = NULL;
	rc = store_open(&s, fx_tpath, &err);
	cr_assert_eq(rc, CU_EDENIED, "%s: %s", cu_err_name(rc), err.msg);
	cr_assert_null(s);
	cr_assert(starts_with(err.msg, "ledger read-only:"), "%s", err.msg);
	cr_assert_eq(chmod(fx_tdir, 0700), 0);
	s = fx_open_ok(fx_tpath);
	has(s, "kept-0", true);
	store_close(s);
}

/* ---- a corrupt ledger ---------------------------------------------------- */

/* Overwrite every page after the first with a pattern. */
static void damage_pages(const char *path)
{
	char junk[4096];
	int64_t size = fx_file_size(path);
	int fd = open(path, O_WRONLY);

	cr_assert_geq(fd, 0);
	memset(junk, 0x5a, sizeof(junk));
	for (off_t off = 4096; off < size; off += 4096)
		cr_assert_eq(
		    pwrite(fd, junk, sizeof(junk), off), (ssize_t)sizeof(junk));
	close(fd);
}

/* Damage below a readable first page is found by the open itself, before
 * any decision could be made on top of it. */
Test(store_faults, damaged_pages_are_found_at_open)
{
	cu_error err = {0};
	store *s = fx_open_ok(fx_tpath);
	int rc;

	put_range_ok(s, "gone", 0, 300);
	store_close(s);
	damage_pages(fx_tpath);
	s = NULL;
	rc = store_open(&s, fx_tpath, &err);
	cr_assert_eq(rc, CU_EPARSE, "%s: %s", cu_err_name(rc), err.msg);
	cr_assert_null(s);
	cr_assert(starts_with(err.msg, "ledger corrupt:"), "%s", err.msg);
}

/* Read everything written to fd 2 while fn runs. */
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

struct rebuild_run {
	store *s;
	char *moved_to;
	cu_error err;
	int rc;
};

static void run_rebuild(void *arg)
{
	struct rebuild_run *r = arg;

	r->rc = store_open_or_rebuild(&r->s, fx_tpath, &r->moved_to, &r->err);
}

/*
 * A corrupt ledger (and its WAL, if any) is moved aside, byte for byte, under a
 * name the warning gives, and a new private ledger takes its place: the
 * controller rebuilds it from the API server. The warning is one line.
 */
Test(store_faults, corrupt_ledger_is_moved_aside_and_rebuilt)
{
	struct rebuild_run r = {0};
	char log[4096], moved_wal[400];
	struct stat st;
	int64_t size, seq = -1;
	store *s = fx_open_ok(fx_tpath);

	put_range_ok(s, "gone", 0, 300);
	store_close(s);
	damage_pages(fx_tpath);
	size = fx_file_size(fx_tpath);
	capture_stderr(log, sizeof(log), run_rebuild, &r);
	cr_assert_eq(r.rc, CU_OK, "%s: %s", cu_err_name(r.rc), r.err.msg);
	cr_assert_not_null(r.s);
	cr_assert_not_null(r.moved_to);
	cr_assert(starts_with(r.moved_to, fx_tpath), "%s", r.moved_to);
	cr_assert(strstr(r.moved_to, ".corrupt-") != NULL, "%s", r.moved_to);
	cr_assert_eq(fx_file_size(r.moved_to), size, "moved, not rewritten");
	snprintf(moved_wal, sizeof(moved_wal), "%s-wal", r.moved_to);
	cr_assert(strstr(log, "ledger corrupt:") != NULL, "log: %s", log);
	cr_assert(strstr(log, r.moved_to) != NULL, "log: %s", log);
	cr_assert(
	    strstr(log, "rebuilt from the API server") != NULL, "%s", log);
	cr_assert_eq(
	    strchr(log, '\n'), strrchr(log, '\n'), "one line: %s", log);
	/* The new ledger is empty, private and writable. */
	cr_assert_eq(store_last_seq(r.s, &seq, &r.err), CU_OK);
	cr_assert_eq(seq, 0);
	cr_assert_eq(stat(fx_tpath, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0600, "mode %o", st.st_mode & 0777);
	put_range_ok(r.s, "new", 0, 2);
	has(r.s, "new-1", true);
	has(r.s, "gone-0", false);
	store_close(r.s);
	unlink(moved_wal);
	cu_free(r.moved_to);
}

/* A healthy ledger, an old one and a newer one are never moved. */
Test(store_faults, rebuild_moves_only_corrupt_ledgers)
{
	cu_error err = {0};
	char *moved = (char *)"sentinel";
	store *s = NULL;
	int rc;

	make_v1_ledger(2);
	rc = store_open_or_rebuild(&s, fx_tpath, &moved, &err);
	cr_assert_eq(rc, CU_OK, "%s", err.msg);
	cr_assert_null(moved);
	has(s, "old-1", true); /* migrated, kept */
	store_close(s);
	fx_raw_exec(fx_tpath, "PRAGMA user_version = 99");
	moved = (char *)"sentinel";
	rc = store_open_or_rebuild(&s, fx_tpath, &moved, &err);
	cr_assert_eq(rc, CU_EUNSUPPORTED, "%s: %s", cu_err_name(rc), err.msg);
	cr_assert_null(moved);
	cr_assert_null(s);
	cr_assert_eq(fx_raw_int(fx_tpath, "SELECT count(*) FROM decision"), 2);
}

/* ---- file modes ---------------------------------------------------------- */

/* The ledger names every workload of the cluster: the file and the WAL
 * and index SQLite creates next to it are 0600 even under umask 0. */
Test(store_faults, ledger_and_journals_are_private_under_umask_0)
{
	const char *suffix[] = {"", "-wal", "-shm"};
	char p[320];
	struct stat st;
	store *s;

	umask(0);
	s = fx_open_ok(fx_tpath);
	put_range_ok(s, "x", 0, 3);
	for (size_t i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
		snprintf(p, sizeof(p), "%s%s", fx_tpath, suffix[i]);
		cr_assert_eq(stat(p, &st), 0, "%s exists", p);
		cr_assert_eq(
		    st.st_mode & 0777, 0600, "%s: %o", p, st.st_mode & 0777);
	}
	store_close(s);
}
