/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store/migrate.c - the ledger schema and its numbered migrations. The
 * version lives in PRAGMA user_version and the file is stamped with
 * PRAGMA application_id so that a foreign SQLite file is never "migrated".
 *
 * Design notes
 * ------------
 * Invariants:
 *  1. store_migrations[v] turns a version-v database into version v+1 and
 *     is never edited once released: a ledger written by any older binary
 *     must replay the same steps. New schema = new entry + bump
 *     STORE_SCHEMA_VERSION.
 *  2. All pending steps and the user_version bump run in one IMMEDIATE
 *     transaction: a crash mid-migration leaves the old version intact,
 *     never a half-migrated file labelled with either version.
 *  3. A version above STORE_SCHEMA_VERSION is refused (CU_EUNSUPPORTED),
 *     never downgraded: an older binary cannot know what the newer schema
 *     means, and the ledger can always be rebuilt from the API instead.
 *  4. Version 0 means "new file": it must contain no tables. A version-0
 *     file with tables, or a foreign application_id, is not ours.
 *
 * Versions:
 *   v1  the decisions themselves: decision, podset, podset_resource, and
 *       meta (the sequence counter). Facts only.
 *   v2  derived data: the usage table (filled from the live decisions, so
 *       this step is also the recipe for rebuilding usage) and the
 *       decision.state_ns column (back-filled with decided_ns).
 *   v3  decision.generation: the Workload's metadata.generation the
 *       decision was made for, so that a restart can tell a Workload
 *       changed since (0 = not recorded: decisions from before v3).
 *   v4  podset.topology: the podSet's topologyAssignment (Kueue's v1beta2
 *       wire form, JSON text) when it was placed by topology-aware
 *       scheduling, NULL otherwise; a restart announces and adopts it
 *       without placing again.
 *   v5  mk_dispatch: the MultiKueue manager's choice of a worker for a
 *       Workload (its UID, the MultiKueueCluster's name), recorded before
 *       the Workload's status announces it (store_dispatch_put).
 *
 * Migration state diagram:
 *
 *   open --> read application_id, user_version
 *     foreign id / v0 with tables ----------------> CU_EUNSUPPORTED
 *     v > STORE_SCHEMA_VERSION -------------------> CU_EUNSUPPORTED
 *     v == STORE_SCHEMA_VERSION ------------------> ready
 *     v < STORE_SCHEMA_VERSION --> BEGIN IMMEDIATE
 *        --> step v, v+1, ... --> user_version = N --> COMMIT --> ready
 *        any failure --> ROLLBACK (file unchanged) --> error
 */
#include <stdio.h>

#include "store/store_int.h"

/* "cuLG" - stamped by v1 so foreign SQLite files are recognised. */
#define STORE_APP_ID 0x63754c47

static const char *const store_migrations[STORE_SCHEMA_VERSION] = {
    /* v0 -> v1 */
    "CREATE TABLE meta("
    " key TEXT PRIMARY KEY NOT NULL,"
    " value INTEGER NOT NULL"
    ") STRICT;"
    "INSERT INTO meta(key, value) VALUES ('last_seq', 0);"
    "CREATE TABLE decision("
    " uid TEXT PRIMARY KEY NOT NULL CHECK (uid != ''),"
    " namespace TEXT NOT NULL,"
    " name TEXT NOT NULL,"
    " cluster_queue TEXT NOT NULL,"
    " state INTEGER NOT NULL CHECK (state BETWEEN 0 AND 3),"
    " decided_ns INTEGER NOT NULL,"
    " seq INTEGER NOT NULL UNIQUE"
    ") STRICT;"
    "CREATE TABLE podset("
    " uid TEXT NOT NULL REFERENCES decision(uid) ON DELETE CASCADE,"
    " idx INTEGER NOT NULL,"
    " name TEXT NOT NULL,"
    " count INTEGER NOT NULL CHECK (count >= 0),"
    " PRIMARY KEY (uid, idx),"
    " UNIQUE (uid, name)"
    ") STRICT, WITHOUT ROWID;"
    "CREATE TABLE podset_resource("
    " uid TEXT NOT NULL,"
    " idx INTEGER NOT NULL,"
    " resource TEXT NOT NULL,"
    " flavor TEXT NOT NULL,"
    " milli INTEGER NOT NULL CHECK (milli >= 0),"
    " PRIMARY KEY (uid, idx, resource),"
    " FOREIGN KEY (uid, idx) REFERENCES podset(uid, idx)"
    "  ON DELETE CASCADE"
    ") STRICT, WITHOUT ROWID;"
    "PRAGMA application_id = 1668631623;",

    /* v1 -> v2 */
    "ALTER TABLE decision ADD COLUMN state_ns INTEGER NOT NULL DEFAULT 0;"
    "UPDATE decision SET state_ns = decided_ns;"
    "CREATE TABLE usage("
    " cluster_queue TEXT NOT NULL,"
    " flavor TEXT NOT NULL,"
    " resource TEXT NOT NULL,"
    " milli INTEGER NOT NULL,"
    " PRIMARY KEY (cluster_queue, flavor, resource)"
    ") STRICT, WITHOUT ROWID;"
    "INSERT INTO usage(cluster_queue, flavor, resource, milli)"
    " SELECT d.cluster_queue, r.flavor, r.resource, SUM(r.milli)"
    " FROM decision d JOIN podset_resource r ON r.uid = d.uid"
    " WHERE d.state != 3"
    " GROUP BY d.cluster_queue, r.flavor, r.resource"
    " HAVING SUM(r.milli) != 0;",

    /* v2 -> v3 */
    "ALTER TABLE decision ADD COLUMN generation INTEGER NOT NULL DEFAULT 0"
    " CHECK (generation >= 0);",

    /* v3 -> v4 */
    "ALTER TABLE podset ADD COLUMN topology TEXT;",

    /* v4 -> v5 */
    "CREATE TABLE mk_dispatch("
    " uid TEXT PRIMARY KEY NOT NULL CHECK (uid != ''),"
    " namespace TEXT NOT NULL,"
    " name TEXT NOT NULL,"
    " cluster TEXT NOT NULL CHECK (cluster != ''),"
    " decided_ns INTEGER NOT NULL"
    ") STRICT;",
};

_Static_assert(STORE_APP_ID == 1668631623, "application_id literal in v1");

static int store_query_int(
    store *s, const char *sql, int64_t *out, cu_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);

	*out = 0;
	if (rc == SQLITE_OK) {
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			*out = sqlite3_column_int64(st, 0);
			rc = SQLITE_OK;
		} else if (rc == SQLITE_DONE) {
			rc = SQLITE_OK;
		}
	}
	if (rc != SQLITE_OK) {
		int code = store_sql_err(s, rc, "read schema version", err);

		sqlite3_finalize(st);
		return code;
	}
	sqlite3_finalize(st);
	return CU_OK;
}

static int store_exec(
    store *s, const char *sql, const char *what, cu_error *err)
{
	int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? CU_OK : store_sql_err(s, rc, what, err);
}

int store_migrate(store *s, cu_error *err)
{
	int64_t app_id, version, tables;
	char what[64];
	char bump[64];
	int rc;

	rc = store_query_int(s, "PRAGMA application_id", &app_id, err);
	if (rc == CU_OK)
		rc = store_query_int(s, "PRAGMA user_version", &version, err);
	if (rc != CU_OK)
		return rc;
	s->opened_version = version;
	if (app_id != 0 && app_id != STORE_APP_ID)
		return cu_error_set(err, CU_EUNSUPPORTED,
		    "not a cueue ledger: application_id 0x%08llx (%s)",
		    (unsigned long long)app_id, s->path);
	if (version > STORE_SCHEMA_VERSION)
		return cu_error_set(err, CU_EUNSUPPORTED,
		    "ledger schema version %lld is newer than this binary "
		    "supports (%d); upgrade cueue or delete the ledger to "
		    "rebuild it from the API (%s)",
		    (long long)version, STORE_SCHEMA_VERSION, s->path);
	if (version == STORE_SCHEMA_VERSION)
		return CU_OK;
	if (version < 0 || (version > 0 && app_id != STORE_APP_ID))
		return cu_error_set(err, CU_EUNSUPPORTED,
		    "not a cueue ledger: user_version %lld without the cueue "
		    "application_id (%s)",
		    (long long)version, s->path);
	if (version == 0) {
		rc = store_query_int(
		    s, "SELECT count(*) FROM sqlite_schema", &tables, err);
		if (rc != CU_OK)
			return rc;
		if (tables > 0)
			return cu_error_set(err, CU_EUNSUPPORTED,
			    "not a cueue ledger: unversioned database with "
			    "%lld schema objects (%s)",
			    (long long)tables, s->path);
	}

	rc = store_exec(s, "BEGIN IMMEDIATE", "migrate: begin", err);
	if (rc != CU_OK)
		return rc;
	for (int64_t v = version; v < STORE_SCHEMA_VERSION; v++) {
		snprintf(what, sizeof(what), "migrate v%lld->v%lld",
		    (long long)v, (long long)v + 1);
		rc = store_exec(s, store_migrations[v], what, err);
		if (rc != CU_OK)
			goto undo;
	}
	snprintf(bump, sizeof(bump), "PRAGMA user_version = %d",
	    STORE_SCHEMA_VERSION);
	rc = store_exec(s, bump, "migrate: set user_version", err);
	if (rc == CU_OK)
		rc = store_exec(s, "COMMIT", "migrate: commit", err);
	if (rc != CU_OK)
		goto undo;
	if (version > 0)
		cu_info("ledger migrated from schema v%lld to v%d (%s)",
		    (long long)version, STORE_SCHEMA_VERSION, s->path);
	return CU_OK;
undo:
	if (!sqlite3_get_autocommit(s->db))
		(void)sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}
