/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store/selfwatch.c - the ledger watches itself: whether the file at its
 * path is still the one it writes (store_file_check), a new file with the
 * live decisions of the old one when it was deleted or replaced while
 * running (store_relink), and the WAL folded back and truncated after
 * failed commits (store_checkpoint). See store.h and docs/ledger.md.
 *
 * Design notes
 * ------------
 *  1. Identity: a read-only descriptor of the file opened, kept beside
 *     SQLite's (whose descriptors the public API does not give out). Its
 *     link count drops to 0 when the file is deleted; the inode at the
 *     path changes when it is replaced. It is closed only after the
 *     connection (closing any descriptor of a file drops every POSIX lock
 *     the process holds on it, SQLite's included).
 *  2. Relink order: the new ledger is written whole under a temporary
 *     name first; then the old connection is closed, and the -wal and
 *     -shm at the path are removed - SQLite cannot checkpoint a file that
 *     was deleted or moved and leaves its WAL, and a new connection at
 *     the path would take it for its own and replay old frames into the
 *     new file - and only then is the new file renamed into place and
 *     opened. A replacement is moved aside without them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/store_int.h"

/* A plain file path (not ":memory:", not a "file:" URI). */
static bool plain_path(const char *path)
{
	return path != NULL && strcmp(path, ":memory:") != 0 &&
	       strncmp(path, "file:", 5) != 0;
}

void store_watch_arm(store *s)
{
	struct stat st;
	int fd;

	if (!plain_path(s->path))
		return;
	fd = open(s->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &st) != 0) {
		close(fd);
		return;
	}
	s->watch_fd = fd;
	s->dev = st.st_dev;
	s->ino = st.st_ino;
}

int store_file_check(store *s, enum store_file_state *out, cu_error *err)
{
	struct stat open_st, path_st;

	*out = STORE_FILE_OK;
	if (s->watch_fd < 0)
		return CU_OK;
	if (fstat(s->watch_fd, &open_st) != 0)
		return cu_error_set(err, CU_EIO,
		    "ledger i/o error: cannot examine the open file %s: %s",
		    s->path, strerror(errno));
	/* Another file at the path first: a rename over the file unlinks
	 * it too. */
	if (stat(s->path, &path_st) != 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			return cu_error_set(err, CU_EIO,
			    "ledger i/o error: cannot examine %s: %s", s->path,
			    strerror(errno));
		*out = STORE_FILE_DELETED;
	} else if (path_st.st_ino != s->ino || path_st.st_dev != s->dev)
		*out = STORE_FILE_REPLACED;
	else if (open_st.st_nlink == 0)
		*out = STORE_FILE_DELETED;
	return CU_OK;
}

/* ---- relink ------------------------------------------------------------- */

struct copy {
	store *to;
	size_t n;
	cu_error *err;
};

static int copy_one(const store_decision *d, void *payload)
{
	struct copy *c = payload;
	int rc = store_decision_put(c->to, d, NULL, c->err);

	if (rc == CU_OK)
		c->n++;
	return rc;
}

static int copy_dispatch(const char *uid, const char *ns, const char *name,
    const char *cluster, int64_t decided_ns, void *payload)
{
	struct copy *c = payload;

	return store_dispatch_put(
	    c->to, uid, ns, name, cluster, decided_ns, c->err);
}

/* Remove path+suffix; a missing file is not an error. */
static void unlink_suffix(const char *path, const char *suffix)
{
	char *p = cu_asprintf("%s%s", path, suffix);

	if (p != NULL)
		(void)unlink(p);
	cu_free(p);
}

/* Write the live decisions and dispatch choices of s into a new ledger
 * at tmp. */
static int write_copy(store *s, const char *tmp, size_t *copied, cu_error *err)
{
	struct copy c = {NULL, 0, err};
	store *n = NULL;
	int rc;

	unlink_suffix(tmp, "-wal");
	unlink_suffix(tmp, "-shm");
	unlink_suffix(tmp, "");
	rc = store_open(&n, tmp, err);
	if (rc != CU_OK)
		return rc;
	c.to = n;
	rc = store_begin(n, err);
	if (rc == CU_OK)
		rc = store_decision_foreach_live(s, copy_one, &c, err);
	if (rc == CU_OK)
		rc = store_dispatch_foreach(s, copy_dispatch, &c, err);
	if (rc == CU_OK)
		rc = store_commit(n, err);
	store_close(n); /* checkpoints: the file is whole, its WAL gone */
	if (rc != CU_OK) {
		unlink_suffix(tmp, "");
		return rc;
	}
	*copied = c.n;
	return CU_OK;
}

int store_relink(store *s, size_t *copied, cu_error *err)
{
	enum store_file_state state;
	char *tmp = NULL, *aside = NULL;
	store *n = NULL;
	store shell;
	size_t count = 0;
	int rc;

	if (copied != NULL)
		*copied = 0;
	if (s->in_foreach || store_in_txn(s) || !plain_path(s->path))
		return cu_error_set(err, CU_EINVAL,
		    "store_relink: inside a transaction or not a file");
	rc = store_file_check(s, &state, err);
	if (rc != CU_OK)
		return rc;
	tmp = cu_asprintf("%s.relink-%ld", s->path, (long)getpid());
	aside = cu_asprintf("%s.replaced-%lld", s->path,
	    (long long)(cu_time_now_ns() / 1000000000));
	if (tmp == NULL || aside == NULL) {
		rc =
		    cu_error_set(err, CU_ENOMEM, "store_relink: out of memory");
		goto out;
	}
	rc = write_copy(s, tmp, &count, err);
	if (rc != CU_OK)
		goto out;
	/* Design note 2: the old connection first. */
	store_shut(s);
	if (state == STORE_FILE_REPLACED && rename(s->path, aside) != 0 &&
	    errno != ENOENT) {
		rc = cu_error_set(err, CU_EIO,
		    "ledger i/o error: cannot move the replacement %s aside "
		    "to %s: %s",
		    s->path, aside, strerror(errno));
		goto out;
	}
	/* A -wal or -shm left at the path is stale whoever wrote it (the
	 * old connection cannot checkpoint a file that moved, and leaves
	 * its WAL): a new file must not replay it. */
	unlink_suffix(s->path, "-wal");
	unlink_suffix(s->path, "-shm");
	if (rename(tmp, s->path) != 0) {
		rc = cu_error_set(err, CU_EIO,
		    "ledger i/o error: cannot rename %s to %s: %s", tmp,
		    s->path, strerror(errno));
		goto out;
	}
	rc = store_open(&n, s->path, err);
	if (rc != CU_OK) {
		/* Not retryable here: the old file is gone from use. */
		rc = CU_EIO;
		if (err != NULL)
			err->code = CU_EIO;
		goto out;
	}
	/* s takes the new connection; the shell its (closed) old state. */
	shell = *s;
	*s = *n;
	*n = shell;
	store_close(n);
	if (copied != NULL)
		*copied = count;
out:
	cu_free(tmp);
	cu_free(aside);
	return rc;
}

/* ---- checkpoint --------------------------------------------------------- */

int store_checkpoint(store *s, cu_error *err)
{
	int rc;

	if (s->db == NULL || store_in_txn(s) || s->in_foreach)
		return cu_error_set(
		    err, CU_EINVAL, "store_checkpoint: inside a transaction");
	rc = sqlite3_wal_checkpoint_v2(
	    s->db, "main", SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
	if (rc != SQLITE_OK)
		return store_sql_err(s, rc, "checkpoint", err);
	return CU_OK;
}

bool store_is_open(const store *s)
{
	return s != NULL && s->db != NULL;
}
