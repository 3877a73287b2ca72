/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store/ledger.c - the ledger's contents: admission decisions keyed by
 * workload UID, their state machine, the derived usage per ClusterQueue x
 * flavor x resource, the consistency check, and the restart
 * reconciliation that tells a restarted controller what to do with each
 * workload.
 *
 * Design notes
 * ------------
 * Invariants:
 *  1. usage(cq, flavor, resource) == SUM(podset_resource.milli) over the
 *     live (state != RELEASED) decisions of cq, at every commit. Every
 *     write that changes a decision's liveness or contents adjusts usage
 *     in the same savepoint, by the decision's own rows (USAGE_APPLY with
 *     sign -1 before it changes, +1 after), so the update costs O(rows of
 *     that decision), never a rescan. store_check_consistency recomputes
 *     the sum from scratch to prove it.
 *  2. No usage row holds zero: zero sums are never inserted (HAVING in
 *     USAGE_APPLY) and rows withdrawn to zero are pruned, so usage_foreach
 *     reports only quota actually held and the table stays as small as
 *     the live set.
 *  3. Sequence numbers come from meta.last_seq, incremented in the same
 *     transaction as the decision: a rolled-back put gives its number
 *     back, a committed one is never reused (not even after a delete,
 *     unlike MAX(seq)+1), so "seq N committed" is a durable fact.
 *  4. Every write runs inside a savepoint (store.c invariant 2): a
 *     rejected write (bad row, invalid transition) leaves the caller's
 *     batch exactly as before the call.
 *  5. Strings read from SQLite are copied before the statement is stepped
 *     or reset again; decisions handed to callers own all their memory.
 *  6. store_decision_withdraw removes only RESERVED (or RELEASED)
 *     decisions: an announced decision is the API's, and only the API's
 *     view (the Workload's status) may end it.
 *
 * Decision state diagram (store_decision_set_state; anything else is
 * CU_ECONFLICT, the same state again is a no-op):
 *
 *            put                 announce ok
 *   (absent) ---> RESERVED ---------------------> ADMITTED
 *                  |    \                          |    \
 *                  |     \ preempt before announce |     \ finished
 *                  |      v                        v      v
 *                  |     EVICTING <---------------+   RELEASED
 *                  |         \ job stopped              ^
 *                  |          +-------------------------+
 *                  +---- no longer fits after restart --+
 *   RESERVED --withdraw--> (absent)  (never announced; invariant 6)
 *   any --delete--> (absent)       any --put--> replaced (new seq)
 */
#include <stdlib.h>
#include <string.h>

#include "store/store_int.h"

/* Binds with SQLITE_STATIC and in-range indexes cannot fail; a failure
 * is a programming error in this file. */
#define STORE_BIND(call) CU_ASSERT((call) == SQLITE_OK)

static bool store_live(enum store_state st)
{
	return st != STORE_RELEASED;
}

static bool store_state_valid(int st)
{
	return st >= STORE_RESERVED && st <= STORE_RELEASED;
}

static bool store_transition_ok(enum store_state from, enum store_state to)
{
	switch (from) {
	case STORE_RESERVED:
		return to == STORE_ADMITTED || to == STORE_EVICTING ||
		       to == STORE_RELEASED;
	case STORE_ADMITTED:
		return to == STORE_EVICTING || to == STORE_RELEASED;
	case STORE_EVICTING:
		return to == STORE_RELEASED;
	case STORE_RELEASED:
		return false;
	}
	return false;
}

static bool store_str_ok(const char *s)
{
	return s != NULL && s[0] != '\0';
}

/* Writes need an open transaction and must not run under a callback. */
static int store_write_guard(const store *s, const char *fn, cu_error *err)
{
	if (s->in_foreach)
		return cu_error_set(
		    err, CU_EINVAL, "%s: called from a foreach callback", fn);
	if (!store_in_txn(s))
		return cu_error_set(err, CU_EINVAL,
		    "%s: no transaction open (call store_begin)", fn);
	return CU_OK;
}

static char *store_col_dup(sqlite3_stmt *st, int col)
{
	const unsigned char *t = sqlite3_column_text(st, col);

	return t != NULL ? cu_strdup((const char *)t) : NULL;
}

/* ---- savepoints ------------------------------------------------------- */

static int store_sp_open(store *s, cu_error *err)
{
	(void)store_stmt(s, STORE_STMT_SP_OPEN);
	return store_exec_stmt(s, STORE_STMT_SP_OPEN, "savepoint", err);
}

/* Release the savepoint on success, undo it on failure; returns the first
 * error (rc, or the release's). */
static int store_sp_close(store *s, int rc, cu_error *err)
{
	cu_error scratch;

	if (rc == CU_OK) {
		(void)store_stmt(s, STORE_STMT_SP_RELEASE);
		rc = store_exec_stmt(s, STORE_STMT_SP_RELEASE, "release", err);
		if (rc == CU_OK)
			return CU_OK;
	}
	/* After SQLITE_FULL/IOERR/NOMEM SQLite may have rolled back the
	 * whole transaction, savepoint included: nothing left to undo. */
	if (store_in_txn(s)) {
		(void)store_stmt(s, STORE_STMT_SP_UNDO);
		if (store_exec_stmt(s, STORE_STMT_SP_UNDO, "undo", &scratch) !=
		    CU_OK)
			cu_warn("%s", scratch.msg);
		(void)store_stmt(s, STORE_STMT_SP_RELEASE);
		if (store_exec_stmt(
			s, STORE_STMT_SP_RELEASE, "release", &scratch) != CU_OK)
			cu_warn("%s", scratch.msg);
	}
	return rc;
}

/* ---- helpers ---------------------------------------------------------- */

/* Current state (and, if cq_out, a copy of the ClusterQueue [owned:
 * cu_free]) of uid; *found false when absent. */
static int store_lookup(store *s, const char *uid, bool *found,
    enum store_state *state, char **cq_out, cu_error *err)
{
	sqlite3_stmt *st = store_stmt(s, STORE_STMT_DEC_GET);
	int rc;

	*found = false;
	if (cq_out != NULL)
		*cq_out = NULL;
	STORE_BIND(sqlite3_bind_text(st, 1, uid, -1, SQLITE_STATIC));
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE) {
		sqlite3_reset(st);
		return CU_OK;
	}
	if (rc != SQLITE_ROW) {
		rc = store_sql_err(s, rc, "lookup", err);
		sqlite3_reset(st);
		return rc;
	}
	*found = true;
	*state = (enum store_state)sqlite3_column_int(st, 3);
	if (cq_out != NULL) {
		*cq_out = store_col_dup(st, 2);
		if (*cq_out == NULL) {
			sqlite3_reset(st);
			return cu_error_set(err, CU_ENOMEM,
			    "ledger out of memory: lookup %s", uid);
		}
	}
	sqlite3_reset(st);
	return CU_OK;
}

/* Add (sign +1) or withdraw (-1) the usage of uid's rows to cq. */
static int store_usage_apply(
    store *s, const char *uid, const char *cq, int sign, cu_error *err)
{
	sqlite3_stmt *st = store_stmt(s, STORE_STMT_USAGE_APPLY);
	int rc;

	STORE_BIND(sqlite3_bind_text(st, 1, uid, -1, SQLITE_STATIC));
	STORE_BIND(sqlite3_bind_int64(st, 2, sign));
	rc = store_exec_stmt(s, STORE_STMT_USAGE_APPLY, "usage update", err);
	if (rc != CU_OK || sign > 0)
		return rc;
	st = store_stmt(s, STORE_STMT_USAGE_PRUNE);
	STORE_BIND(sqlite3_bind_text(st, 1, cq, -1, SQLITE_STATIC));
	return store_exec_stmt(s, STORE_STMT_USAGE_PRUNE, "usage prune", err);
}

static int store_validate(const store_decision *d, cu_error *err)
{
	if (d == NULL)
		return cu_error_set(
		    err, CU_EINVAL, "store_decision_put: NULL decision");
	if (!store_str_ok(d->uid) || !store_str_ok(d->ns) ||
	    !store_str_ok(d->name) || !store_str_ok(d->cluster_queue))
		return cu_error_set(err, CU_EINVAL,
		    "store_decision_put: uid, namespace, name and "
		    "ClusterQueue must be non-empty");
	if (!store_state_valid((int)d->state))
		return cu_error_set(err, CU_EINVAL,
		    "store_decision_put: invalid state %d for %s",
		    (int)d->state, d->uid);
	if (d->generation < 0)
		return cu_error_set(err, CU_EINVAL,
		    "store_decision_put: negative generation for %s", d->uid);
	if (d->n_podsets == 0 || d->podsets == NULL)
		return cu_error_set(err, CU_EINVAL,
		    "store_decision_put: %s has no podSets", d->uid);
	for (size_t i = 0; i < d->n_podsets; i++) {
		const store_podset *ps = &d->podsets[i];

		if (!store_str_ok(ps->name) || ps->count < 0 ||
		    (ps->n_resources > 0 && ps->resources == NULL))
			return cu_error_set(err, CU_EINVAL,
			    "store_decision_put: %s podSet %zu needs a name, "
			    "count >= 0 and its resources",
			    d->uid, i);
		for (size_t j = 0; j < ps->n_resources; j++) {
			const store_resource *r = &ps->resources[j];

			if (!store_str_ok(r->resource) ||
			    !store_str_ok(r->flavor) || r->milli < 0)
				return cu_error_set(err, CU_EINVAL,
				    "store_decision_put: %s podSet %s "
				    "resource %zu needs a name, a flavor and "
				    "usage >= 0",
				    d->uid, ps->name, j);
		}
	}
	return CU_OK;
}

/* ---- writes ----------------------------------------------------------- */

static int store_put_rows(
    store *s, const store_decision *d, int64_t seq, cu_error *err)
{
	sqlite3_stmt *st = store_stmt(s, STORE_STMT_DEC_INSERT);
	int rc;

	STORE_BIND(sqlite3_bind_text(st, 1, d->uid, -1, SQLITE_STATIC));
	STORE_BIND(sqlite3_bind_text(st, 2, d->ns, -1, SQLITE_STATIC));
	STORE_BIND(sqlite3_bind_text(st, 3, d->name, -1, SQLITE_STATIC));
	STORE_BIND(
	    sqlite3_bind_text(st, 4, d->cluster_queue, -1, SQLITE_STATIC));
	STORE_BIND(sqlite3_bind_int(st, 5, (int)d->state));
	STORE_BIND(sqlite3_bind_int64(st, 6, d->decided_ns));
	STORE_BIND(sqlite3_bind_int64(
	    st, 7, d->state_ns != 0 ? d->state_ns : d->decided_ns));
	STORE_BIND(sqlite3_bind_int64(st, 8, seq));
	STORE_BIND(sqlite3_bind_int64(st, 9, d->generation));
	rc = store_exec_stmt(s, STORE_STMT_DEC_INSERT, "put decision", err);
	for (size_t i = 0; rc == CU_OK && i < d->n_podsets; i++) {
		const store_podset *ps = &d->podsets[i];

		st = store_stmt(s, STORE_STMT_PS_INSERT);
		STORE_BIND(sqlite3_bind_text(st, 1, d->uid, -1, SQLITE_STATIC));
		STORE_BIND(sqlite3_bind_int64(st, 2, (int64_t)i));
		STORE_BIND(
		    sqlite3_bind_text(st, 3, ps->name, -1, SQLITE_STATIC));
		STORE_BIND(sqlite3_bind_int(st, 4, ps->count));
		STORE_BIND(ps->topology != NULL
			       ? sqlite3_bind_text(
				     st, 5, ps->topology, -1, SQLITE_STATIC)
			       : sqlite3_bind_null(st, 5));
		rc =
		    store_exec_stmt(s, STORE_STMT_PS_INSERT, "put podset", err);
		for (size_t j = 0; rc == CU_OK && j < ps->n_resources; j++) {
			const store_resource *r = &ps->resources[j];

			st = store_stmt(s, STORE_STMT_PR_INSERT);
			STORE_BIND(sqlite3_bind_text(
			    st, 1, d->uid, -1, SQLITE_STATIC));
			STORE_BIND(sqlite3_bind_int64(st, 2, (int64_t)i));
			STORE_BIND(sqlite3_bind_text(
			    st, 3, r->resource, -1, SQLITE_STATIC));
			STORE_BIND(sqlite3_bind_text(
			    st, 4, r->flavor, -1, SQLITE_STATIC));
			STORE_BIND(sqlite3_bind_int64(st, 5, r->milli));
			rc = store_exec_stmt(s, STORE_STMT_PR_INSERT,
			    "put podset resource", err);
		}
	}
	return rc;
}

static int store_next_seq(store *s, int64_t *seq, cu_error *err)
{
	sqlite3_stmt *st = store_stmt(s, STORE_STMT_NEXT_SEQ);
	int rc = sqlite3_step(st);

	if (rc != SQLITE_ROW) {
		/* DONE would mean the meta row vanished: the file was edited
		 * by hand, which is what "corrupt" is for. */
		rc = rc == SQLITE_DONE
			 ? cu_error_set(err, CU_EPARSE,
			       "ledger corrupt: meta.last_seq missing (%s)",
			       s->path)
			 : store_sql_err(s, rc, "next seq", err);
		sqlite3_reset(st);
		return rc;
	}
	*seq = sqlite3_column_int64(st, 0);
	/* All changes of a DML statement happen in its first step, so the
	 * RETURNING row can be read and the statement reset right away. */
	sqlite3_reset(st);
	return CU_OK;
}

static int store_put_body(
    store *s, const store_decision *d, int64_t *seq, cu_error *err)
{
	enum store_state old_state = STORE_RELEASED;
	char *old_cq = NULL;
	bool found;
	int rc;

	rc = store_lookup(s, d->uid, &found, &old_state, &old_cq, err);
	if (rc == CU_OK && found && store_live(old_state))
		rc = store_usage_apply(s, d->uid, old_cq, -1, err);
	cu_free(old_cq);
	if (rc == CU_OK && found) {
		sqlite3_stmt *st = store_stmt(s, STORE_STMT_DEC_DELETE);

		STORE_BIND(sqlite3_bind_text(st, 1, d->uid, -1, SQLITE_STATIC));
		rc = store_exec_stmt(
		    s, STORE_STMT_DEC_DELETE, "replace decision", err);
	}
	if (rc == CU_OK)
		rc = store_next_seq(s, seq, err);
	if (rc == CU_OK)
		rc = store_put_rows(s, d, *seq, err);
	if (rc == CU_OK && store_live(d->state))
		rc = store_usage_apply(s, d->uid, d->cluster_queue, +1, err);
	return rc;
}

int store_decision_put(
    store *s, const store_decision *d, int64_t *seq_out, cu_error *err)
{
	int64_t seq = 0;
	int rc;

	rc = store_write_guard(s, "store_decision_put", err);
	if (rc == CU_OK)
		rc = store_validate(d, err);
	if (rc == CU_OK)
		rc = store_sp_open(s, err);
	if (rc != CU_OK)
		return rc;
	rc = store_put_body(s, d, &seq, err);
	rc = store_sp_close(s, rc, err);
	if (rc == CU_OK && seq_out != NULL)
		*seq_out = seq;
	return rc;
}

static int store_set_state_body(store *s, const char *uid,
    enum store_state from, enum store_state to, int64_t now_ns, cu_error *err)
{
	sqlite3_stmt *st = store_stmt(s, STORE_STMT_DEC_SET_STATE);
	char *cq = NULL;
	bool found;
	int rc;

	STORE_BIND(sqlite3_bind_text(st, 1, uid, -1, SQLITE_STATIC));
	STORE_BIND(sqlite3_bind_int(st, 2, (int)to));
	STORE_BIND(sqlite3_bind_int64(st, 3, now_ns));
	rc = store_exec_stmt(s, STORE_STMT_DEC_SET_STATE, "set state", err);
	if (rc != CU_OK || store_live(to) || !store_live(from))
		return rc;
	rc = store_lookup(s, uid, &found, &from, &cq, err);
	if (rc == CU_OK)
		rc = store_usage_apply(s, uid, cq, -1, err);
	cu_free(cq);
	return rc;
}

int store_decision_set_state(store *s, const char *uid, enum store_state state,
    int64_t now_ns, cu_error *err)
{
	enum store_state cur = STORE_RELEASED;
	bool found;
	int rc;

	rc = store_write_guard(s, "store_decision_set_state", err);
	if (rc != CU_OK)
		return rc;
	if (!store_str_ok(uid) || !store_state_valid((int)state))
		return cu_error_set(err, CU_EINVAL,
		    "store_decision_set_state: empty uid or invalid state");
	rc = store_lookup(s, uid, &found, &cur, NULL, err);
	if (rc != CU_OK)
		return rc;
	if (!found)
		return cu_error_set(err, CU_ENOTFOUND,
		    "store_decision_set_state: no decision for uid %s", uid);
	if (cur == state)
		return CU_OK;
	if (!store_transition_ok(cur, state))
		return cu_error_set(err, CU_ECONFLICT,
		    "store_decision_set_state: %s -> %s is not a valid "
		    "transition (uid %s)",
		    store_state_name(cur), store_state_name(state), uid);
	rc = store_sp_open(s, err);
	if (rc != CU_OK)
		return rc;
	rc = store_set_state_body(s, uid, cur, state, now_ns, err);
	return store_sp_close(s, rc, err);
}

int store_decision_delete(store *s, const char *uid, cu_error *err)
{
	enum store_state cur = STORE_RELEASED;
	char *cq = NULL;
	bool found;
	int rc;

	rc = store_write_guard(s, "store_decision_delete", err);
	if (rc != CU_OK)
		return rc;
	if (!store_str_ok(uid))
		return cu_error_set(
		    err, CU_EINVAL, "store_decision_delete: empty uid");
	rc = store_sp_open(s, err);
	if (rc != CU_OK)
		return rc;
	rc = store_lookup(s, uid, &found, &cur, &cq, err);
	if (rc == CU_OK && !found)
		rc = cu_error_set(err, CU_ENOTFOUND,
		    "store_decision_delete: no decision for uid %s", uid);
	if (rc == CU_OK && store_live(cur))
		rc = store_usage_apply(s, uid, cq, -1, err);
	if (rc == CU_OK) {
		sqlite3_stmt *st = store_stmt(s, STORE_STMT_DEC_DELETE);

		STORE_BIND(sqlite3_bind_text(st, 1, uid, -1, SQLITE_STATIC));
		rc = store_exec_stmt(
		    s, STORE_STMT_DEC_DELETE, "delete decision", err);
	}
	cu_free(cq);
	return store_sp_close(s, rc, err);
}

int store_decision_withdraw(store *s, const char *uid, cu_error *err)
{
	enum store_state cur = STORE_RELEASED;
	bool found;
	int rc;

	rc = store_write_guard(s, "store_decision_withdraw", err);
	if (rc != CU_OK)
		return rc;
	if (!store_str_ok(uid))
		return cu_error_set(
		    err, CU_EINVAL, "store_decision_withdraw: empty uid");
	rc = store_lookup(s, uid, &found, &cur, NULL, err);
	if (rc != CU_OK)
		return rc;
	if (!found)
		return cu_error_set(err, CU_ENOTFOUND,
		    "store_decision_withdraw: no decision for uid %s", uid);
	/* Invariant 6: only a decision nobody was told about is undone. */
	if (cur == STORE_ADMITTED || cur == STORE_EVICTING)
		return cu_error_set(err, CU_ECONFLICT,
		    "store_decision_withdraw: the decision for uid %s is %s, "
		    "it may have been announced",
		    uid, store_state_name(cur));
	return store_decision_delete(s, uid, err);
}

int store_podset_set_topology(
    store *s, const char *uid, size_t idx, const char *topology, cu_error *err)
{
	enum store_state cur = STORE_RELEASED;
	sqlite3_stmt *st;
	bool found;
	int rc;

	rc = store_write_guard(s, "store_podset_set_topology", err);
	if (rc != CU_OK)
		return rc;
	if (!store_str_ok(uid))
		return cu_error_set(
		    err, CU_EINVAL, "store_podset_set_topology: empty uid");
	rc = store_lookup(s, uid, &found, &cur, NULL, err);
	if (rc != CU_OK)
		return rc;
	if (!found)
		return cu_error_set(err, CU_ENOTFOUND,
		    "store_podset_set_topology: no decision for uid %s", uid);
	if (!store_live(cur))
		return cu_error_set(err, CU_ECONFLICT,
		    "store_podset_set_topology: the decision for uid %s is "
		    "released",
		    uid);
	st = store_stmt(s, STORE_STMT_PS_SET_TOPOLOGY);
	STORE_BIND(sqlite3_bind_text(st, 1, uid, -1, SQLITE_STATIC));
	STORE_BIND(sqlite3_bind_int64(st, 2, (int64_t)idx));
	STORE_BIND(topology != NULL
		       ? sqlite3_bind_text(st, 3, topology, -1, SQLITE_STATIC)
		       : sqlite3_bind_null(st, 3));
	rc = store_exec_stmt(
	    s, STORE_STMT_PS_SET_TOPOLOGY, "set podset topology", err);
	if (rc == CU_OK && sqlite3_changes(s->db) == 0)
		rc = cu_error_set(err, CU_ENOTFOUND,
		    "store_podset_set_topology: decision %s has no podSet %zu",
		    uid, idx);
	return rc;
}

/* ---- reads ------------------------------------------------------------ */

void store_decision_free(store_decision *d)
{
	if (d == NULL)
		return;
	/* The decision owns everything it points to; the members are const
	 * only so that callers can pass literals to store_decision_put. */
	for (size_t i = 0; i < d->n_podsets; i++) {
		const store_podset *ps = &d->podsets[i];

		for (size_t j = 0; j < ps->n_resources; j++) {
			cu_free((void *)ps->resources[j].resource);
			cu_free((void *)ps->resources[j].flavor);
		}
		cu_free((void *)ps->resources);
		cu_free((void *)ps->name);
		cu_free((void *)ps->topology);
	}
	cu_free((void *)d->podsets);
	cu_free((void *)d->uid);
	cu_free((void *)d->ns);
	cu_free((void *)d->name);
	cu_free((void *)d->cluster_queue);
	cu_free(d);
}

static int store_load_head(
    store *s, const char *uid, store_decision *d, cu_error *err)
{
	sqlite3_stmt *st = store_stmt(s, STORE_STMT_DEC_GET);
	int rc;

	STORE_BIND(sqlite3_bind_text(st, 1, uid, -1, SQLITE_STATIC));
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE) {
		sqlite3_reset(st);
		return cu_error_set(err, CU_ENOTFOUND,
		    "store_decision_get: no decision for uid %s", uid);
	}
	if (rc != SQLITE_ROW) {
		rc = store_sql_err(s, rc, "get decision", err);
		sqlite3_reset(st);
		return rc;
	}
	d->uid = cu_strdup(uid);
	d->ns = store_col_dup(st, 0);
	d->name = store_col_dup(st, 1);
	d->cluster_queue = store_col_dup(st, 2);
	d->state = (enum store_state)sqlite3_column_int(st, 3);
	d->decided_ns = sqlite3_column_int64(st, 4);
	d->state_ns = sqlite3_column_int64(st, 5);
	d->seq = sqlite3_column_int64(st, 6);
	d->generation = sqlite3_column_int64(st, 7);
	sqlite3_reset(st);
	if (d->uid == NULL || d->ns == NULL || d->name == NULL ||
	    d->cluster_queue == NULL)
		return cu_error_set(
		    err, CU_ENOMEM, "ledger out of memory: get %s", uid);
	return CU_OK;
}

static int store_load_podsets(store *s, store_decision *d, cu_error *err)
{
	sqlite3_stmt *st = store_stmt(s, STORE_STMT_PS_LIST);
	int rc;

	STORE_BIND(sqlite3_bind_text(st, 1, d->uid, -1, SQLITE_STATIC));
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		store_podset *ps = cu_realloc(
		    (void *)d->podsets, (d->n_podsets + 1) * sizeof(*ps));

		if (ps == NULL)
			break;
		d->podsets = ps;
		ps = &ps[d->n_podsets];
		memset(ps, 0, sizeof(*ps));
		/* idx was written as the position (store_put_rows), and rows
		 * come back ORDER BY idx; a gap means a hand-edited file. */
		if (sqlite3_column_int64(st, 0) != (int64_t)d->n_podsets) {
			sqlite3_reset(st);
			return cu_error_set(err, CU_EPARSE,
			    "ledger corrupt: podSet index gap in %s (%s)",
			    d->uid, s->path);
		}
		ps->count = sqlite3_column_int(st, 2);
		ps->name = store_col_dup(st, 1);
		if (ps->name == NULL)
			break;
		d->n_podsets++;
		if (sqlite3_column_type(st, 3) != SQLITE_NULL &&
		    (ps->topology = store_col_dup(st, 3)) == NULL)
			break;
	}
	if (rc == SQLITE_ROW) {
		sqlite3_reset(st);
		return cu_error_set(
		    err, CU_ENOMEM, "ledger out of memory: get %s", d->uid);
	}
	if (rc != SQLITE_DONE) {
		rc = store_sql_err(s, rc, "get podsets", err);
		sqlite3_reset(st);
		return rc;
	}
	sqlite3_reset(st);
	return CU_OK;
}

/* Append one resource row to its podSet; false on allocation failure
 * (the podSet stays consistent for store_decision_free). */
static bool store_add_resource(store_podset *ps, sqlite3_stmt *st)
{
	store_resource *res = cu_realloc(
	    (void *)ps->resources, (ps->n_resources + 1) * sizeof(*res));
	store_resource *r;

	if (res == NULL)
		return false;
	ps->resources = res;
	r = &res[ps->n_resources];
	r->resource = store_col_dup(st, 1);
	r->flavor = store_col_dup(st, 2);
	r->milli = sqlite3_column_int64(st, 3);
	if (r->resource == NULL || r->flavor == NULL) {
		cu_free((void *)r->resource);
		cu_free((void *)r->flavor);
		return false;
	}
	ps->n_resources++;
	return true;
}

static int store_load_resources(store *s, store_decision *d, cu_error *err)
{
	sqlite3_stmt *st = store_stmt(s, STORE_STMT_PR_LIST);
	int rc;

	STORE_BIND(sqlite3_bind_text(st, 1, d->uid, -1, SQLITE_STATIC));
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t idx = sqlite3_column_int64(st, 0);

		if (idx < 0 || (uint64_t)idx >= d->n_podsets) {
			sqlite3_reset(st);
			return cu_error_set(err, CU_EPARSE,
			    "ledger corrupt: resource of unknown podSet %lld "
			    "in %s (%s)",
			    (long long)idx, d->uid, s->path);
		}
		if (!store_add_resource((store_podset *)&d->podsets[idx], st))
			break;
	}
	if (rc == SQLITE_ROW) {
		sqlite3_reset(st);
		return cu_error_set(
		    err, CU_ENOMEM, "ledger out of memory: get %s", d->uid);
	}
	if (rc != SQLITE_DONE) {
		rc = store_sql_err(s, rc, "get resources", err);
		sqlite3_reset(st);
		return rc;
	}
	sqlite3_reset(st);
	return CU_OK;
}

int store_decision_get(
    store *s, const char *uid, store_decision **out, cu_error *err)
{
	store_decision *d;
	int rc;

	*out = NULL;
	if (!store_str_ok(uid))
		return cu_error_set(
		    err, CU_EINVAL, "store_decision_get: empty uid");
	d = cu_calloc(1, sizeof(*d));
	if (d == NULL)
		return cu_error_set(
		    err, CU_ENOMEM, "ledger out of memory: get %s", uid);
	rc = store_load_head(s, uid, d, err);
	if (rc == CU_OK)
		rc = store_load_podsets(s, d, err);
	if (rc == CU_OK)
		rc = store_load_resources(s, d, err);
	if (rc != CU_OK) {
		store_decision_free(d);
		return rc;
	}
	*out = d;
	return CU_OK;
}

static int store_foreach_guard(const store *s, const char *fn, cu_error *err)
{
	if (s->in_foreach)
		return cu_error_set(
		    err, CU_EINVAL, "%s: called from a foreach callback", fn);
	return CU_OK;
}

int store_decision_foreach_live(
    store *s, store_decision_cb cb, void *payload, cu_error *err)
{
	sqlite3_stmt *st;
	int rc;

	rc = store_foreach_guard(s, "store_decision_foreach_live", err);
	if (rc != CU_OK)
		return rc;
	st = store_stmt(s, STORE_STMT_DEC_LIVE);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		store_decision *d = NULL;
		char *uid = store_col_dup(st, 0);
		int r;

		if (uid == NULL) {
			sqlite3_reset(st);
			return cu_error_set(
			    err, CU_ENOMEM, "ledger out of memory: foreach");
		}
		r = store_decision_get(s, uid, &d, err);
		cu_free(uid);
		if (r != CU_OK) {
			sqlite3_reset(st);
			return r;
		}
		s->in_foreach = true;
		r = cb(d, payload);
		s->in_foreach = false;
		store_decision_free(d);
		if (r != 0) {
			sqlite3_reset(st);
			return r;
		}
	}
	if (rc != SQLITE_DONE) {
		rc = store_sql_err(s, rc, "foreach decisions", err);
		sqlite3_reset(st);
		return rc;
	}
	sqlite3_reset(st);
	return CU_OK;
}

int store_last_seq(store *s, int64_t *out, cu_error *err)
{
	sqlite3_stmt *st = store_stmt(s, STORE_STMT_LAST_SEQ);
	int rc = sqlite3_step(st);

	*out = 0;
	if (rc == SQLITE_ROW) {
		*out = sqlite3_column_int64(st, 0);
		rc = CU_OK;
	} else if (rc == SQLITE_DONE) {
		rc = cu_error_set(err, CU_EPARSE,
		    "ledger corrupt: meta.last_seq missing (%s)", s->path);
	} else {
		rc = store_sql_err(s, rc, "last seq", err);
	}
	sqlite3_reset(st);
	return rc;
}

/* ---- usage ------------------------------------------------------------ */

int store_usage_get(store *s, const char *cq, const char *flavor,
    const char *resource, int64_t *milli, cu_error *err)
{
	sqlite3_stmt *st;
	int rc;

	*milli = 0;
	if (cq == NULL || flavor == NULL || resource == NULL)
		return cu_error_set(
		    err, CU_EINVAL, "store_usage_get: NULL name");
	st = store_stmt(s, STORE_STMT_USAGE_GET);
	STORE_BIND(sqlite3_bind_text(st, 1, cq, -1, SQLITE_STATIC));
	STORE_BIND(sqlite3_bind_text(st, 2, flavor, -1, SQLITE_STATIC));
	STORE_BIND(sqlite3_bind_text(st, 3, resource, -1, SQLITE_STATIC));
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*milli = sqlite3_column_int64(st, 0);
		rc = CU_OK;
	} else if (rc == SQLITE_DONE) {
		rc = CU_OK;
	} else {
		rc = store_sql_err(s, rc, "usage get", err);
	}
	sqlite3_reset(st);
	return rc;
}

int store_usage_foreach(
    store *s, store_usage_cb cb, void *payload, cu_error *err)
{
	sqlite3_stmt *st;
	int rc;

	rc = store_foreach_guard(s, "store_usage_foreach", err);
	if (rc != CU_OK)
		return rc;
	st = store_stmt(s, STORE_STMT_USAGE_LIST);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const unsigned char *cq = sqlite3_column_text(st, 0);
		const unsigned char *fl = sqlite3_column_text(st, 1);
		const unsigned char *res = sqlite3_column_text(st, 2);
		int r;

		if (cq == NULL || fl == NULL || res == NULL) {
			sqlite3_reset(st);
			return cu_error_set(err, CU_ENOMEM,
			    "ledger out of memory: usage foreach");
		}
		s->in_foreach = true;
		r = cb((const char *)cq, (const char *)fl, (const char *)res,
		    sqlite3_column_int64(st, 3), payload);
		s->in_foreach = false;
		if (r != 0) {
			sqlite3_reset(st);
			return r;
		}
	}
	if (rc != SQLITE_DONE) {
		rc = store_sql_err(s, rc, "usage foreach", err);
		sqlite3_reset(st);
		return rc;
	}
	sqlite3_reset(st);
	return CU_OK;
}

int store_check_consistency(store *s, cu_error *err)
{
	sqlite3_stmt *st = store_stmt(s, STORE_STMT_CHECK);
	int rc = sqlite3_step(st);

	if (rc == SQLITE_ROW) {
		const unsigned char *cq = sqlite3_column_text(st, 0);
		const unsigned char *fl = sqlite3_column_text(st, 1);
		const unsigned char *res = sqlite3_column_text(st, 2);

		rc = cu_error_set(err, CU_EIO,
		    "ledger inconsistent: usage of %s/%s/%s is %lld but the "
		    "live decisions sum to %lld (%s)",
		    cq != NULL ? (const char *)cq : "?",
		    fl != NULL ? (const char *)fl : "?",
		    res != NULL ? (const char *)res : "?",
		    (long long)sqlite3_column_int64(st, 4),
		    (long long)sqlite3_column_int64(st, 3), s->path);
	} else if (rc == SQLITE_DONE) {
		rc = CU_OK;
	} else {
		rc = store_sql_err(s, rc, "consistency check", err);
	}
	sqlite3_reset(st);
	return rc;
}

/* ---- reconciliation --------------------------------------------------- */

static enum store_recon store_classify(
    bool found, enum store_state st, bool api_admitted)
{
	if (!found || !store_live(st))
		return api_admitted ? STORE_RECON_ADOPT : STORE_RECON_NONE;
	if (api_admitted)
		return STORE_RECON_RESUME;
	return st == STORE_RESERVED ? STORE_RECON_UNANNOUNCED
				    : STORE_RECON_STALE;
}

int store_reconcile_one(store *s, const char *uid, bool api_admitted,
    enum store_recon *out, cu_error *err)
{
	enum store_state st = STORE_RELEASED;
	bool found;
	int rc;

	*out = STORE_RECON_NONE;
	if (!store_str_ok(uid))
		return cu_error_set(
		    err, CU_EINVAL, "store_reconcile_one: empty uid");
	rc = store_lookup(s, uid, &found, &st, NULL, err);
	if (rc == CU_OK)
		*out = store_classify(found, st, api_admitted);
	return rc;
}

static int store_cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Second half of store_reconcile: live decisions no view mentions. */
static int store_reconcile_orphans(store *s, const char **sorted, size_t n,
    store_recon_cb cb, void *payload, cu_error *err)
{
	sqlite3_stmt *st = store_stmt(s, STORE_STMT_DEC_LIVE);
	int rc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const unsigned char *t = sqlite3_column_text(st, 0);
		const char *uid = (const char *)t;
		enum store_state state = sqlite3_column_int(st, 1);
		int r;

		if (uid == NULL) {
			sqlite3_reset(st);
			return cu_error_set(
			    err, CU_ENOMEM, "ledger out of memory: reconcile");
		}
		if (n > 0 && bsearch(&uid, sorted, n, sizeof(*sorted),
				 store_cmp_str) != NULL)
			continue;
		s->in_foreach = true;
		r = cb(uid, store_classify(true, state, false), payload);
		s->in_foreach = false;
		if (r != 0) {
			sqlite3_reset(st);
			return r;
		}
	}
	if (rc != SQLITE_DONE) {
		rc = store_sql_err(s, rc, "reconcile", err);
		sqlite3_reset(st);
		return rc;
	}
	sqlite3_reset(st);
	return CU_OK;
}

int store_reconcile(store *s, const store_api_view *views, size_t n,
    store_recon_cb cb, void *payload, cu_error *err)
{
	const char **sorted = NULL;
	int rc;

	rc = store_foreach_guard(s, "store_reconcile", err);
	if (rc != CU_OK)
		return rc;
	if (n > 0 && views == NULL)
		return cu_error_set(
		    err, CU_EINVAL, "store_reconcile: NULL views");
	for (size_t i = 0; i < n; i++) {
		enum store_recon what;
		int r;

		rc = store_reconcile_one(
		    s, views[i].uid, views[i].admitted, &what, err);
		if (rc != CU_OK)
			return rc;
		s->in_foreach = true;
		r = cb(views[i].uid, what, payload);
		s->in_foreach = false;
		if (r != 0)
			return r;
	}
	if (n > 0) {
		sorted = cu_calloc(n, sizeof(*sorted));
		if (sorted == NULL)
			return cu_error_set(err, CU_ENOMEM,
			    "ledger out of memory: reconcile %zu views", n);
		for (size_t i = 0; i < n; i++)
			sorted[i] = views[i].uid;
		qsort(sorted, n, sizeof(*sorted), store_cmp_str);
	}
	rc = store_reconcile_orphans(s, sorted, n, cb, payload, err);
	cu_free(sorted);
	return rc;
}
