/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/fixtures_store.c - the store tests' fixtures (see
 * fixtures.h): a private directory per test for the ledger, opening it,
 * and raw SQL on the file underneath the store API.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cu.h"
#include "tests/unit/fixtures.h"

char fx_tdir[256];
char fx_tpath[300];

void fx_tdir_setup(void)
{
	const char *base = getenv("TMPDIR");

	snprintf(fx_tdir, sizeof(fx_tdir), "%s/cueue-store-XXXXXX",
	    base != NULL && base[0] != '\0' ? base : "/tmp");
	cr_assert_not_null(mkdtemp(fx_tdir), "mkdtemp");
	snprintf(fx_tpath, sizeof(fx_tpath), "%s/ledger.db", fx_tdir);
}

void fx_tdir_teardown(void)
{
	DIR *d;
	struct dirent *e;
	char p[600];

	chmod(fx_tdir, 0700); /* a test may have taken write access away */
	d = opendir(fx_tdir);
	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s", fx_tdir, e->d_name);
		unlink(p);
	}
	closedir(d);
	rmdir(fx_tdir);
}

store *fx_open_ok(const char *path)
{
	cu_error err = {0};
	store *s = NULL;
	int rc = store_open(&s, path, &err);

	cr_assert_eq(rc, CU_OK, "store_open(%s): %s", path, err.msg);
	cr_assert_not_null(s);
	return s;
}

void fx_raw_exec(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	char *msg = NULL;

	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, &msg), SQLITE_OK,
	    "%s: %s", sql, msg != NULL ? msg : "?");
	sqlite3_close(db);
}

int64_t fx_raw_int(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int64_t v;

	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK,
	    "%s: %s", sql, sqlite3_errmsg(db));
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "%s", sql);
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

int64_t fx_file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (int64_t)st.st_size : -1;
}

void fx_fsize_limit(rlim_t soft)
{
	struct rlimit rl;

	signal(SIGXFSZ, SIG_IGN);
	cr_assert_eq(getrlimit(RLIMIT_FSIZE, &rl), 0);
	rl.rlim_cur = soft;
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
}
