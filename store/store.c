/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store/store.c - opening and closing the ledger, the connection settings
 * that make a commit durable, transactions, SQLite's allocator routed
 * through cu_malloc, and the mapping of SQLite failures to cu_err codes.
 *
 * Design notes
 * ------------
 * The ledger exists for one promise (docs/architecture.md lesson 3): a decision
 * is on disk before the controller tells the API server about it. Everything in
 * this file serves that promise or makes its failures actionable.
 *
 * Invariants:
 *  1. synchronous=FULL in WAL mode: COMMIT returns only after the WAL is
 *     fsync'd. NORMAL would survive a process crash but could lose the last
 *     commits on power loss *after* the controller announced them; the
 *     restart would then see "API admitted, ledger empty" (ADOPT) instead
 *     of resuming, which is recoverable but exactly what the ledger exists
 *     to avoid. One fsync per loop turn is affordable because the caller
 *     batches a whole turn into one transaction (see tests/storebench).
 *  2. Writes happen only inside store_begin/store_commit (BEGIN IMMEDIATE,
 *     so the write lock is taken up front and COMMIT cannot fail with a
 *     lock upgrade deadlock). Each write function wraps itself in a
 *     savepoint so that a rejected write leaves the batch as it was.
 *  3. Every statement is prepared once, after migration, and reset after
 *     each use, so no statement holds a read transaction open between
 *     calls (which would block checkpoints and ROLLBACK).
 *  4. A ledger that cannot be written is refused at open (CU_EDENIED):
 *     finding out at the first commit would be after a decision was made.
 *  5. SQLite failures are classified once, in store_sql_err, into the
 *     codes documented in store.h; "corrupt" is CU_EPARSE precisely so the
 *     controller can tell "rebuild from the API" from "retry"
 *     (store_open_or_rebuild). "No room" is CU_EQUOTA whether it is
 *     ENOSPC, a quota or a file size limit.
 *  6. A damaged file is refused at open (store_verify).
 *  7. An existing file of 0 bytes (truncated by hand or by a broken
 *     volume) opens as a new, empty ledger, as SQLite would have it; the
 *     loss is never silent: store_open logs one warning naming the file.
 *
 * Connection state diagram (per store):
 *
 *   store_open --> IDLE --store_begin--> IN_TXN --store_commit--> IDLE
 *                   ^                     |  ^ put/set_state/delete
 *                   |                     |  | (savepoint each)
 *                   +----store_rollback---+--+
 *                   +---- SQLite auto-rollback (FULL, IOERR, NOMEM) ---+
 *   IDLE/IN_TXN --store_close--> (rolled back, closed)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "store/store_int.h"

/* How long a statement waits for another process's lock. Only one
 * controller (the leader) writes the file, so waiting means a stray tool
 * holds it; keep it short because the event loop is blocked meanwhile. */
#define STORE_BUSY_TIMEOUT_MS 2000

/* ---- SQLite allocations through cu_malloc ----------------------------- */

/*
 * SQLite needs xSize, which cu_malloc cannot answer, so every block
 * carries its size in a 16-byte header (16 keeps malloc's alignment).
 * Routing through cu_malloc lets allocation-failure tests reach inside
 * SQLite; SQLite turns those failures into SQLITE_NOMEM.
 */
#define STORE_MEM_HDR 16

static void *store_mem_malloc(int n)
{
	char *p;
	int64_t size = n;

	if (n < 0)
		return NULL;
	p = cu_malloc((size_t)n + STORE_MEM_HDR);
	if (p == NULL)
		return NULL;
	memcpy(p, &size, sizeof(size));
	return p + STORE_MEM_HDR;
}

static void store_mem_free(void *p)
{
	if (p != NULL)
		cu_free((char *)p - STORE_MEM_HDR);
}

static void *store_mem_realloc(void *p, int n)
{
	char *np;
	int64_t size = n;

	if (p == NULL)
		return store_mem_malloc(n);
	if (n < 0)
		return NULL;
	np = cu_realloc((char *)p - STORE_MEM_HDR, (size_t)n + STORE_MEM_HDR);
	if (np == NULL)
		return NULL;
	memcpy(np, &size, sizeof(size));
	return np + STORE_MEM_HDR;
}

static int store_mem_size(void *p)
{
	int64_t size;

	if (p == NULL)
		return 0;
	memcpy(&size, (char *)p - STORE_MEM_HDR, sizeof(size));
	return (int)size;
}

static int store_mem_roundup(int n)
{
	return (n + 7) & ~7;
}

static int store_mem_init(void *unused)
{
	(void)unused;
	return SQLITE_OK;
}

static void store_mem_shutdown(void *unused)
{
	(void)unused;
}

/*
 * Install the allocator once per process, before SQLite initializes.
 * sqlite3_config is only legal before sqlite3_initialize: if something
 * else in the process already used SQLite it returns SQLITE_MISUSE and
 * SQLite keeps its default allocator, which is harmless (only the fault
 * injection reach is lost). The controller is single-threaded, so a plain
 * flag suffices.
 */
static void store_mem_install(void)
{
	static bool done;
	static const sqlite3_mem_methods methods = {
	    .xMalloc = store_mem_malloc,
	    .xFree = store_mem_free,
	    .xRealloc = store_mem_realloc,
	    .xSize = store_mem_size,
	    .xRoundup = store_mem_roundup,
	    .xInit = store_mem_init,
	    .xShutdown = store_mem_shutdown,
	    .pAppData = NULL,
	};

	if (done)
		return;
	done = true;
	(void)sqlite3_config(SQLITE_CONFIG_MALLOC, &methods);
}

/* ---- errors ----------------------------------------------------------- */

/* errno values that mean "no room to write", whatever the cause. */
static bool store_errno_full(int e)
{
	return e == ENOSPC || e == EFBIG || e == EDQUOT;
}

int store_sql_code(int rc, int sys_errno)
{
	bool denied =
	    sys_errno == EACCES || sys_errno == EPERM || sys_errno == EROFS;

	switch (rc & 0xff) {
	case SQLITE_OK:
		return CU_OK;
	case SQLITE_NOMEM:
		return CU_ENOMEM;
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		return CU_EPARSE;
	case SQLITE_READONLY:
	case SQLITE_PERM:
	case SQLITE_AUTH:
		return CU_EDENIED;
	case SQLITE_FULL:
		return CU_EQUOTA;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return CU_EAGAIN;
	case SQLITE_CONSTRAINT:
	case SQLITE_MISMATCH:
	case SQLITE_RANGE:
		return CU_EINVAL;
	case SQLITE_TOOBIG:
		return CU_ETOOBIG;
	case SQLITE_CANTOPEN:
	case SQLITE_IOERR:
		if (denied)
			return CU_EDENIED;
		/* SQLite reports most ENOSPC as SQLITE_FULL itself; this
		 * catches the paths (fsync, truncate) that surface as IOERR,
		 * and the other "no room" errnos SQLite does not know: a file
		 * size limit (EFBIG, RLIMIT_FSIZE) and a disk quota. */
		if (store_errno_full(sys_errno))
			return CU_EQUOTA;
		return CU_EIO;
	default:
		return CU_EIO;
	}
}

static const char *store_err_class(int code)
{
	switch (code) {
	case CU_EPARSE:
		return "ledger corrupt";
	case CU_EDENIED:
		return "ledger read-only";
	case CU_EQUOTA:
		return "ledger disk full";
	case CU_EAGAIN:
		return "ledger busy";
	case CU_ENOMEM:
		return "ledger out of memory";
	case CU_EINVAL:
		return "ledger rejected";
	case CU_ETOOBIG:
		return "ledger row too big";
	default:
		return "ledger i/o error";
	}
}

/*
 * Is there no room left for the ledger to grow? Asked after an I/O error
 * that SQLite did not itself call SQLITE_FULL: SQLite turns a failed
 * write() into SQLITE_FULL only for ENOSPC, and by the time the error
 * reaches us sqlite3_system_errno() has usually been overwritten by the
 * rollback's own calls (seen: EFBIG reported as 0). So look at the two
 * limits directly: the free space of the ledger's filesystem and the
 * process's file size limit (RLIMIT_FSIZE), each against the ledger or
 * its WAL plus a margin of a few pages.
 */
#define STORE_ROOM_MARGIN (64 * 1024)

static bool store_no_room(const store *s)
{
	struct statvfs vfs;
	struct rlimit rl;
	struct stat st;
	char *dir, *slash, *wal;
	bool full = false;

	if (s == NULL || s->path == NULL || strncmp(s->path, "file:", 5) == 0 ||
	    strcmp(s->path, ":memory:") == 0)
		return false;
	dir = cu_strdup(s->path);
	wal = cu_asprintf("%s-wal", s->path);
	if (dir != NULL && wal != NULL) {
		slash = strrchr(dir, '/');
		if (slash == NULL) {
			cu_free(dir);
			dir = cu_strdup(".");
		} else
			slash[slash == dir ? 1 : 0] = '\0';
		if (statvfs(dir, &vfs) == 0 &&
		    (uint64_t)vfs.f_bavail * vfs.f_frsize < STORE_ROOM_MARGIN)
			full = true;
		if (!full && getrlimit(RLIMIT_FSIZE, &rl) == 0 &&
		    rl.rlim_cur != RLIM_INFINITY) {
			if (stat(s->path, &st) == 0 &&
			    (uint64_t)st.st_size + STORE_ROOM_MARGIN >
				rl.rlim_cur)
				full = true;
			if (stat(wal, &st) == 0 &&
			    (uint64_t)st.st_size + STORE_ROOM_MARGIN >
				rl.rlim_cur)
				full = true;
		}
	}
	cu_free(dir);
	cu_free(wal);
	return full;
}

int store_sql_err(const store *s, int rc, const char *what, cu_error *err)
{
	sqlite3 *db = s != NULL ? s->db : NULL;
	int code =
	    store_sql_code(rc, db != NULL ? sqlite3_system_errno(db) : 0);
	/* sqlite3_errmsg is only as fresh as the last call on db; for a NULL
	 * db (open failed for lack of memory) use the generic string. */
	const char *msg = db != NULL ? sqlite3_errmsg(db) : sqlite3_errstr(rc);

	if (code == CU_EIO && (rc & 0xff) == SQLITE_IOERR && store_no_room(s))
		code = CU_EQUOTA;

	return cu_error_set(err, code, "%s: %s: %s (%s)", store_err_class(code),
	    what, msg, s != NULL && s->path != NULL ? s->path : "?");
}

/* ---- statements ------------------------------------------------------- */

static const char *const store_stmt_sql[STORE_STMT_COUNT] = {
#define STORE_X_SQL(id, sql) [STORE_STMT_##id] = sql,
    STORE_STMT_TABLE(STORE_X_SQL)
#undef STORE_X_SQL
};

sqlite3_stmt *store_stmt(store *s, enum store_stmt_id id)
{
	sqlite3_stmt *st = s->stmt[id];

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return st;
}

int store_exec_stmt(
    store *s, enum store_stmt_id id, const char *what, cu_error *err)
{
	sqlite3_stmt *st = s->stmt[id];
	int rc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		;
	if (rc != SQLITE_DONE) {
		int code = store_sql_err(s, rc, what, err);

		sqlite3_reset(st);
		return code;
	}
	sqlite3_reset(st);
	return CU_OK;
}

static int store_prepare_all(store *s, cu_error *err)
{
	for (int i = 0; i < STORE_STMT_COUNT; i++) {
		int rc = sqlite3_prepare_v3(s->db, store_stmt_sql[i], -1,
		    SQLITE_PREPARE_PERSISTENT, &s->stmt[i], NULL);

		if (rc != SQLITE_OK)
			return store_sql_err(s, rc, "prepare", err);
	}
	return CU_OK;
}

/* ---- open / close ----------------------------------------------------- */

/*
 * Create the file ourselves so that it is 0600 from the first byte:
 * SQLite would create it with 0644 (minus umask), and a ledger names
 * every workload of the cluster. URIs and ":memory:" are left to SQLite.
 */
static int store_precreate(store *s, const char *path, cu_error *err)
{
	struct stat st;
	int fd;

	if (strncmp(path, "file:", 5) == 0 || strcmp(path, ":memory:") == 0)
		return CU_OK;
	/* An existing empty file opens as a new database: say so once it is
	 * known that nothing (no WAL) brought the old contents back. */
	s->found_empty =
	    stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		int e = errno;
		int code = (e == EACCES || e == EPERM || e == EROFS)
			       ? CU_EDENIED
			       : (store_errno_full(e) ? CU_EQUOTA : CU_EIO);

		return cu_error_set(err, code, "%s: cannot open %s: %s",
		    store_err_class(code), s->path, strerror(e));
	}
	close(fd);
	return CU_OK;
}

/* Run a one-row PRAGMA and copy its text result into out (may be NULL). */
static int store_pragma(
    store *s, const char *sql, char *out, size_t outlen, cu_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);

	if (rc == SQLITE_OK) {
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			const unsigned char *t = sqlite3_column_text(st, 0);

			if (out != NULL && t != NULL)
				snprintf(out, outlen, "%s", (const char *)t);
		}
		if (rc == SQLITE_DONE)
			rc = SQLITE_OK;
	}
	if (rc != SQLITE_OK) {
		int code = store_sql_err(s, rc, "configure connection", err);

		sqlite3_finalize(st);
		return code;
	}
	sqlite3_finalize(st);
	return CU_OK;
}

static int store_configure(store *s, cu_error *err)
{
	char mode[32] = "";
	int rc;

	/* Before any write: a read-only ledger is useless (invariant 4). */
	if (sqlite3_db_readonly(s->db, "main") == 1)
		return cu_error_set(err, CU_EDENIED,
		    "ledger read-only: opened without write access (%s)",
		    s->path);
	rc =
	    store_pragma(s, "PRAGMA journal_mode=WAL", mode, sizeof(mode), err);
	if (rc != CU_OK)
		return rc;
	/* "memory" is what an in-memory database (tests of other modules)
	 * reports; anything else means the WAL could not be set up and the
	 * durability argument of invariant 1 would not hold. */
	if (strcmp(mode, "wal") != 0 && strcmp(mode, "memory") != 0)
		return cu_error_set(err, CU_EIO,
		    "ledger i/o error: journal_mode is \"%s\", not wal (%s)",
		    mode, s->path);
	rc = store_pragma(s, "PRAGMA synchronous=FULL", NULL, 0, err);
	if (rc == CU_OK)
		rc = store_pragma(s, "PRAGMA foreign_keys=ON", NULL, 0, err);
	if (rc == CU_OK)
		rc = store_pragma(
		    s, "PRAGMA max_page_count", mode, sizeof(mode), err);
	if (rc == CU_OK)
		s->max_pages = strtoll(mode, NULL, 10);
	return rc;
}

int store_limit_size(store *s, int64_t max_bytes, cu_error *err)
{
	char val[32], sql[64];
	int64_t page_size, pages;
	int rc;

	if (max_bytes < 0)
		return cu_error_set(err, CU_EINVAL,
		    "store_limit_size: negative size %lld",
		    (long long)max_bytes);
	rc = store_pragma(s, "PRAGMA page_size", val, sizeof(val), err);
	if (rc != CU_OK)
		return rc;
	page_size = strtoll(val, NULL, 10);
	if (page_size <= 0)
		return cu_error_set(err, CU_EIO,
		    "ledger i/o error: page_size \"%s\" (%s)", val, s->path);
	pages = max_bytes == 0 ? s->max_pages : max_bytes / page_size;
	if (pages < 1)
		pages = 1; /* SQLite keeps at least the current size */
	if (pages > s->max_pages)
		pages = s->max_pages;
	snprintf(
	    sql, sizeof(sql), "PRAGMA max_page_count = %lld", (long long)pages);
	return store_pragma(s, sql, NULL, 0, err);
}

/*
 * Invariant 6: a damaged file is found at open, not at the first commit
 * or the first restart read (which may come after decisions were made on
 * top of it). PRAGMA quick_check reads every page but skips index
 * cross-checks; the ledger holds only live decisions, so this is a few
 * pages. Its first row is "ok" or the first problem found.
 */
static int store_verify(store *s, cu_error *err)
{
	char first[160] = "";
	int rc =
	    store_pragma(s, "PRAGMA quick_check(1)", first, sizeof(first), err);

	if (rc != CU_OK)
		return rc;
	for (char *p = first; *p != '\0'; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' '; /* messages are one line */
	if (strcmp(first, "ok") != 0)
		return cu_error_set(err, CU_EPARSE,
		    "ledger corrupt: quick_check: %s (%s)", first, s->path);
	return CU_OK;
}

int store_open(store **out, const char *path, cu_error *err)
{
	store *s;
	int rc;

	*out = NULL;
	if (path == NULL || path[0] == '\0')
		return cu_error_set(err, CU_EINVAL, "store_open: empty path");
	s = cu_calloc(1, sizeof(*s));
	if (s == NULL)
		return cu_error_set(
		    err, CU_ENOMEM, "store_open: out of memory");
	s->watch_fd = -1;
	s->path = cu_strdup(path);
	if (s->path == NULL) {
		cu_free(s);
		return cu_error_set(
		    err, CU_ENOMEM, "store_open: out of memory");
	}
	rc = store_precreate(s, path, err);
	if (rc != CU_OK)
		goto fail;
	store_mem_install();
	rc = sqlite3_open_v2(path, &s->db,
	    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI |
		SQLITE_OPEN_NOMUTEX,
	    NULL);
	if (rc != SQLITE_OK) {
		rc = store_sql_err(s, rc, "open", err);
		goto fail;
	}
	sqlite3_extended_result_codes(s->db, 1);
	sqlite3_busy_timeout(s->db, STORE_BUSY_TIMEOUT_MS);
	rc = store_configure(s, err);
	if (rc == CU_OK)
		rc = store_verify(s, err);
	if (rc == CU_OK)
		rc = store_migrate(s, err);
	if (rc == CU_OK)
		rc = store_prepare_all(s, err);
	if (rc != CU_OK)
		goto fail;
	if (s->found_empty && s->opened_version == 0)
		cu_warn("ledger %s was empty (0 bytes: truncated, or created "
			"but never written): started a new ledger; decisions "
			"it held, if any, are rebuilt from the API server",
		    s->path);
	store_watch_arm(s);
	*out = s;
	return CU_OK;
fail:
	store_close(s);
	return rc;
}

/* Rename from+suffix to to+suffix; a missing source is not an error.
 * Returns 0 or an errno value. */
static int store_move(const char *from, const char *to, const char *suffix)
{
	char *a = cu_asprintf("%s%s", from, suffix);
	char *b = cu_asprintf("%s%s", to, suffix);
	int e = 0;

	if (a == NULL || b == NULL)
		e = ENOMEM;
	else if (rename(a, b) != 0 && errno != ENOENT)
		e = errno;
	cu_free(a);
	cu_free(b);
	return e;
}

int store_open_or_rebuild(
    store **out, const char *path, char **moved_to, cu_error *err)
{
	cu_error first;
	char *aside;
	int rc, e;

	*out = NULL;
	if (moved_to != NULL)
		*moved_to = NULL;
	rc = store_open(out, path, &first);
	if (rc != CU_EPARSE || strncmp(path, "file:", 5) == 0 ||
	    strcmp(path, ":memory:") == 0) {
		if (rc != CU_OK && err != NULL)
			*err = first;
		return rc;
	}
	aside = cu_asprintf("%s.corrupt-%lld", path,
	    (long long)(cu_time_now_ns() / 1000000000));
	if (aside == NULL)
		return cu_error_set(
		    err, CU_ENOMEM, "store_open: out of memory");
	/* The journals first: a -wal left next to a new file would be
	 * replayed into it if its header happened to match. */
	e = store_move(path, aside, "-wal");
	if (e == 0)
		e = store_move(path, aside, "-shm");
	if (e == 0)
		e = store_move(path, aside, "-journal");
	if (e == 0)
		e = store_move(path, aside, "");
	if (e != 0) {
		rc = cu_error_set(err, CU_EIO,
		    "%s; cannot move it aside to %s: %s", first.msg, aside,
		    strerror(e));
		cu_free(aside);
		return rc;
	}
	cu_warn("%s; moved to %s, a new ledger is rebuilt from the API "
		"server",
	    first.msg, aside);
	rc = store_open(out, path, err);
	if (rc == CU_OK && moved_to != NULL)
		*moved_to = aside;
	else
		cu_free(aside);
	return rc;
}

void store_shut(store *s)
{
	if (s->db != NULL && !sqlite3_get_autocommit(s->db))
		(void)sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	for (int i = 0; i < STORE_STMT_COUNT; i++) {
		sqlite3_finalize(s->stmt[i]);
		s->stmt[i] = NULL;
	}
	/* All statements are finalized, so close cannot report SQLITE_BUSY;
	 * an I/O error on the final checkpoint loses nothing committed. */
	if (s->db != NULL)
		(void)sqlite3_close(s->db);
	s->db = NULL;
	if (s->watch_fd >= 0)
		close(s->watch_fd);
	s->watch_fd = -1;
}

void store_close(store *s)
{
	if (s == NULL)
		return;
	store_shut(s);
	cu_free(s->path);
	cu_free(s);
}

/* ---- transactions ----------------------------------------------------- */

bool store_in_txn(const store *s)
{
	return s != NULL && s->db != NULL && !sqlite3_get_autocommit(s->db);
}

int store_begin(store *s, cu_error *err)
{
	if (s->in_foreach)
		return cu_error_set(err, CU_EINVAL,
		    "store_begin: called from a foreach callback");
	if (store_in_txn(s))
		return cu_error_set(err, CU_EINVAL,
		    "store_begin: a transaction is already open");
	(void)store_stmt(s, STORE_STMT_BEGIN);
	return store_exec_stmt(s, STORE_STMT_BEGIN, "begin", err);
}

int store_commit(store *s, cu_error *err)
{
	if (s->in_foreach)
		return cu_error_set(err, CU_EINVAL,
		    "store_commit: called from a foreach callback");
	if (!store_in_txn(s))
		return cu_error_set(
		    err, CU_EINVAL, "store_commit: no transaction open");
	(void)store_stmt(s, STORE_STMT_COMMIT);
	return store_exec_stmt(s, STORE_STMT_COMMIT, "commit", err);
}

void store_rollback(store *s)
{
	cu_error err;

	if (!store_in_txn(s))
		return;
	(void)store_stmt(s, STORE_STMT_ROLLBACK);
	/* ROLLBACK only fails while a statement is mid-step, which invariant
	 * 3 rules out; if it happens anyway, SQLite rolls back on close or on
	 * the next open, so logging is all that is left to do. */
	if (store_exec_stmt(s, STORE_STMT_ROLLBACK, "rollback", &err) != CU_OK)
		cu_warn("%s", err.msg);
}

/* ---- names ------------------------------------------------------------ */

const char *store_state_name(enum store_state state)
{
	switch (state) {
	case STORE_RESERVED:
		return "reserved";
	case STORE_ADMITTED:
		return "admitted";
	case STORE_EVICTING:
		return "evicting";
	case STORE_RELEASED:
		return "released";
	}
	return "unknown";
}

const char *store_recon_name(enum store_recon what)
{
	switch (what) {
	case STORE_RECON_NONE:
		return "none";
	case STORE_RECON_RESUME:
		return "resume";
	case STORE_RECON_UNANNOUNCED:
		return "unannounced";
	case STORE_RECON_STALE:
		return "stale";
	case STORE_RECON_ADOPT:
		return "adopt";
	}
	return "unknown";
}
