/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store/store_int.h - PRIVATE to store/: the store struct, the table of
 * prepared statements and the helpers shared by store.c (lifecycle,
 * transactions, error mapping), migrate.c (schema), ledger.c
 * (decisions, usage, reconciliation) and dispatch.c (MultiKueue choices).
 * Nothing outside store/ includes it; the public interface is store/store.h.
 */
#ifndef CU_STORE_STORE_INT_H
#define CU_STORE_STORE_INT_H

#include <sys/types.h>

#include <sqlite3.h>

#include "store/store.h"

/*
 * Every statement the ledger runs after open, prepared once with
 * SQLITE_PREPARE_PERSISTENT (X-macro: id, SQL). Parameters are numbered so
 * the binding code reads against the SQL. Migrations are one-shot and live
 * in migrate.c instead.
 */
#define STORE_STMT_TABLE(X)                                                    \
	X(BEGIN, "BEGIN IMMEDIATE")                                            \
	X(COMMIT, "COMMIT")                                                    \
	X(ROLLBACK, "ROLLBACK")                                                \
	X(SP_OPEN, "SAVEPOINT store_op")                                       \
	X(SP_RELEASE, "RELEASE store_op")                                      \
	X(SP_UNDO, "ROLLBACK TO store_op")                                     \
	X(NEXT_SEQ, "UPDATE meta SET value = value + 1"                        \
		    " WHERE key = 'last_seq' RETURNING value")                 \
	X(LAST_SEQ, "SELECT value FROM meta WHERE key = 'last_seq'")           \
	X(DEC_GET, "SELECT namespace, name, cluster_queue, state,"             \
		   " decided_ns, state_ns, seq, generation FROM decision"      \
		   " WHERE uid = ?1")                                          \
	X(DEC_INSERT, "INSERT INTO decision(uid, namespace, name,"             \
		      " cluster_queue, state, decided_ns, state_ns, seq,"      \
		      " generation)"                                           \
		      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)")          \
	X(DEC_DELETE, "DELETE FROM decision WHERE uid = ?1")                   \
	X(DEC_SET_STATE, "UPDATE decision SET state = ?2, state_ns = ?3"       \
			 " WHERE uid = ?1")                                    \
	X(DEC_LIVE, "SELECT uid, state FROM decision WHERE state != 3"         \
		    " ORDER BY seq")                                           \
	X(PS_INSERT, "INSERT INTO podset(uid, idx, name, count, topology)"     \
		     " VALUES (?1, ?2, ?3, ?4, ?5)")                           \
	X(PS_LIST, "SELECT idx, name, count, topology FROM podset"             \
		   " WHERE uid = ?1 ORDER BY idx")                             \
	X(PS_SET_TOPOLOGY, "UPDATE podset SET topology = ?3"                   \
			   " WHERE uid = ?1 AND idx = ?2")                     \
	X(PR_INSERT, "INSERT INTO podset_resource(uid, idx, resource,"         \
		     " flavor, milli) VALUES (?1, ?2, ?3, ?4, ?5)")            \
	X(PR_LIST, "SELECT idx, resource, flavor, milli FROM podset_resource"  \
		   " WHERE uid = ?1 ORDER BY idx, resource")                   \
	X(USAGE_APPLY,                                                         \
	    "INSERT INTO usage(cluster_queue, flavor, resource, milli)"        \
	    " SELECT d.cluster_queue, r.flavor, r.resource, ?2 * SUM(r.milli)" \
	    " FROM decision d JOIN podset_resource r ON r.uid = d.uid"         \
	    " WHERE d.uid = ?1 GROUP BY r.flavor, r.resource"                  \
	    " HAVING SUM(r.milli) != 0"                                        \
	    " ON CONFLICT (cluster_queue, flavor, resource)"                   \
	    " DO UPDATE SET milli = milli + excluded.milli")                   \
	X(USAGE_PRUNE, "DELETE FROM usage WHERE cluster_queue = ?1"            \
		       " AND milli = 0")                                       \
	X(USAGE_GET, "SELECT milli FROM usage WHERE cluster_queue = ?1"        \
		     " AND flavor = ?2 AND resource = ?3")                     \
	X(USAGE_LIST, "SELECT cluster_queue, flavor, resource, milli"          \
		      " FROM usage WHERE milli != 0"                           \
		      " ORDER BY cluster_queue, flavor, resource")             \
	X(CHECK, "SELECT cq, flavor, resource, SUM(want), SUM(have) FROM ("    \
		 " SELECT d.cluster_queue AS cq, r.flavor AS flavor,"          \
		 " r.resource AS resource, r.milli AS want, 0 AS have"         \
		 " FROM decision d JOIN podset_resource r ON r.uid = d.uid"    \
		 " WHERE d.state != 3"                                         \
		 " UNION ALL SELECT cluster_queue, flavor, resource, 0, milli" \
		 " FROM usage)"                                                \
		 " GROUP BY cq, flavor, resource"                              \
		 " HAVING SUM(want) != SUM(have)"                              \
		 " ORDER BY cq, flavor, resource LIMIT 1")                     \
	X(MK_PUT, "INSERT OR REPLACE INTO mk_dispatch(uid, namespace, name,"   \
		  " cluster, decided_ns) VALUES (?1, ?2, ?3, ?4, ?5)")         \
	X(MK_GET, "SELECT cluster FROM mk_dispatch WHERE uid = ?1")            \
	X(MK_DELETE, "DELETE FROM mk_dispatch WHERE uid = ?1")                 \
	X(MK_LIST, "SELECT uid, namespace, name, cluster, decided_ns"          \
		   " FROM mk_dispatch ORDER BY uid")

enum store_stmt_id {
#define STORE_X_ID(id, sql) STORE_STMT_##id,
	STORE_STMT_TABLE(STORE_X_ID)
#undef STORE_X_ID
	    STORE_STMT_COUNT
};

struct store {
	sqlite3 *db;	   /* [owned: sqlite3_close] */
	char *path;	   /* [owned: cu_free] for messages */
	bool in_foreach;   /* a foreach callback is running: see store.h */
	int64_t max_pages; /* SQLite's own max_page_count, for "no limit" */
	bool found_empty;  /* the file existed with 0 bytes before open */
	int64_t opened_version; /* user_version found at open (migrate.c) */
	/* The self-watch (selfwatch.c): a descriptor of the file opened
	 * (-1: none, for ":memory:" and "file:" URIs) and its identity.
	 * Closed only after the connection: closing any descriptor of a
	 * file drops the process's POSIX locks on it. */
	int watch_fd;
	dev_t dev;
	ino_t ino;
	sqlite3_stmt *stmt[STORE_STMT_COUNT]; /* [owned: sqlite3_finalize] */
};

/*
 * Turn a failed SQLite call into the documented cu_err code and set err
 * once: "<class>: <what>: <sqlite3_errmsg> (<path>)". rc is the result of
 * the failed call; what [borrowed] names the operation. Returns the code.
 */
int store_sql_err(const store *s, int rc, const char *what, cu_error *err);

/* Map a SQLite result code to a cu_err code (without a message). */
int store_sql_code(int rc, int sys_errno);

/* The statement, reset and with bindings cleared, ready to bind. */
sqlite3_stmt *store_stmt(store *s, enum store_stmt_id id);

/* Step a statement that returns no rows (or whose rows are ignored) to
 * completion, then reset it. */
CU_MUST_CHECK int store_exec_stmt(
    store *s, enum store_stmt_id id, const char *what, cu_error *err);

/* Start watching the file at s->path (selfwatch.c); best effort. */
void store_watch_arm(store *s);

/* Finalize the statements and close the connection and the watch
 * descriptor; s keeps its path (selfwatch.c, store_close). */
void store_shut(store *s);

/* Bring the open connection's schema to STORE_SCHEMA_VERSION (migrate.c).
 * CU_EUNSUPPORTED for newer or foreign databases. */
CU_MUST_CHECK int store_migrate(store *s, cu_error *err);

#endif /* CU_STORE_STORE_INT_H */
