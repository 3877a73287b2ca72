/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store/dispatch.c - the MultiKueue manager's dispatch choices in the
 * ledger (table mk_dispatch, schema v5): which worker cluster a Workload
 * was given, recorded and committed before the Workload's status names it
 * (status.clusterName, the check Ready), as an admission is recorded
 * before its status write. A restarted manager reads the choice back and
 * keeps it, whatever the workers' caches show first. See store.h.
 */
#include "store/store_int.h"

static int guard(const store *s, bool write, const char *fn, cu_error *err)
{
	if (s->in_foreach)
		return cu_error_set(
		    err, CU_EINVAL, "%s: called from a foreach callback", fn);
	if (write && !store_in_txn(s))
		return cu_error_set(err, CU_EINVAL,
		    "%s: no transaction open (call store_begin)", fn);
	return CU_OK;
}

int store_dispatch_put(store *s, const char *uid, const char *ns,
    const char *name, const char *cluster, int64_t now_ns, cu_error *err)
{
	sqlite3_stmt *st;
	int rc = guard(s, true, "store_dispatch_put", err);

	if (rc != CU_OK)
		return rc;
	if (uid == NULL || uid[0] == '\0' || ns == NULL || name == NULL ||
	    cluster == NULL || cluster[0] == '\0')
		return cu_error_set(err, CU_EINVAL,
		    "store_dispatch_put: uid and cluster must be set");
	st = store_stmt(s, STORE_STMT_MK_PUT);
	sqlite3_bind_text(st, 1, uid, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, ns, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, cluster, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 5, now_ns);
	return store_exec_stmt(s, STORE_STMT_MK_PUT, "dispatch put", err);
}

int store_dispatch_get(store *s, const char *uid, char **cluster, cu_error *err)
{
	sqlite3_stmt *st;
	int rc = guard(s, false, "store_dispatch_get", err);

	*cluster = NULL;
	if (rc != CU_OK)
		return rc;
	st = store_stmt(s, STORE_STMT_MK_GET);
	sqlite3_bind_text(st, 1, uid, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const unsigned char *t = sqlite3_column_text(st, 0);

		*cluster = t != NULL ? cu_strdup((const char *)t) : NULL;
		sqlite3_reset(st);
		return *cluster != NULL
			   ? CU_OK
			   : cu_error_set(err, CU_ENOMEM,
				 "ledger out of memory: dispatch get");
	}
	if (rc != SQLITE_DONE) {
		rc = store_sql_err(s, rc, "dispatch get", err);
		sqlite3_reset(st);
		return rc;
	}
	sqlite3_reset(st);
	return cu_error_set(
	    err, CU_ENOTFOUND, "no dispatch choice for workload %s", uid);
}

int store_dispatch_delete(store *s, const char *uid, cu_error *err)
{
	int rc = guard(s, true, "store_dispatch_delete", err);

	if (rc != CU_OK)
		return rc;
	sqlite3_bind_text(
	    store_stmt(s, STORE_STMT_MK_DELETE), 1, uid, -1, SQLITE_STATIC);
	rc = store_exec_stmt(s, STORE_STMT_MK_DELETE, "dispatch delete", err);
	if (rc == CU_OK && sqlite3_changes(s->db) == 0)
		return cu_error_set(err, CU_ENOTFOUND,
		    "no dispatch choice for workload %s", uid);
	return rc;
}

int store_dispatch_foreach(
    store *s, store_dispatch_cb cb, void *payload, cu_error *err)
{
	sqlite3_stmt *st;
	int rc = guard(s, false, "store_dispatch_foreach", err);

	if (rc != CU_OK)
		return rc;
	st = store_stmt(s, STORE_STMT_MK_LIST);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int r;

		s->in_foreach = true;
		r = cb((const char *)sqlite3_column_text(st, 0),
		    (const char *)sqlite3_column_text(st, 1),
		    (const char *)sqlite3_column_text(st, 2),
		    (const char *)sqlite3_column_text(st, 3),
		    sqlite3_column_int64(st, 4), payload);
		s->in_foreach = false;
		if (r != 0) {
			sqlite3_reset(st);
			return r;
		}
	}
	if (rc != SQLITE_DONE) {
		rc = store_sql_err(s, rc, "dispatch list", err);
		sqlite3_reset(st);
		return rc;
	}
	sqlite3_reset(st);
	return CU_OK;
}
