/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store/store.h - the admission ledger: a SQLite file that records every
 * admission decision before the controller announces it to the API server,
 * so that a restarted controller resumes recorded decisions instead of
 * deciding again (docs/architecture.md lesson 3).
 *
 * The ledger holds, per workload UID, the decision (ClusterQueue, per-podSet
 * flavor and usage per resource, state, decision time, sequence number) and
 * a derived table of usage per ClusterQueue x flavor x resource that is
 * updated in the same transaction as the decisions it sums.
 *
 * The API server remains the source of truth: the ledger is a durable
 * journal that can always be deleted and rebuilt from LIST+WATCH (see the
 * error codes below for when the controller should do that).
 *
 * Only store/ includes sqlite3.h; no SQL leaves this folder.
 * Prefix: store_ (functions), STORE_ (macros and enum values).
 *
 * Ownership: unless stated otherwise, a `store *s` argument is [borrowed]
 * and `cu_error *err` is [borrowed; may be NULL]; out-parameters are
 * written only by the call.
 *
 * Process-wide effect: the first store_open routes SQLite's allocations
 * through cu_malloc (SQLITE_CONFIG_MALLOC), so cu_mem_fail_after() reaches
 * inside SQLite. If SQLite was already initialized by then, it keeps its
 * own allocator. Single-threaded use only, like the rest of cueue.
 *
 * Errors (cu_error codes returned by every fallible function):
 *   CU_EPARSE       "ledger corrupt: ..."   SQLITE_CORRUPT / SQLITE_NOTADB:
 *                   the file is damaged or not a database. Not retryable;
 *                   the controller should move the file away and rebuild
 *                   the ledger from the API.
 *   CU_EDENIED      "ledger read-only: ..." the file or its directory
 *                   cannot be written (SQLITE_READONLY, SQLITE_PERM, EACCES,
 *                   EROFS, or a read-only open). Rebuilding does not help;
 *                   the operator must fix the volume.
 *   CU_EQUOTA       "ledger disk full: ..." SQLITE_FULL (ENOSPC, or the
 *                   store_limit_size cap), or an I/O error with EFBIG
 *                   (RLIMIT_FSIZE) or EDQUOT. Retry after space is freed;
 *                   the failed transaction was not committed.
 *   CU_EAGAIN       "ledger busy: ..."      SQLITE_BUSY / SQLITE_LOCKED
 *                   after busy_timeout: another process holds the file.
 *   CU_EUNSUPPORTED the file is a ledger of a newer schema version than
 *                   this binary knows, or not a cueue ledger at all.
 *   CU_EIO          "ledger i/o error: ..." any other SQLite failure, and
 *                   "ledger inconsistent: ..." from store_check_consistency.
 *   CU_ENOMEM       allocation failure (SQLite's included).
 *   CU_EINVAL       bad arguments, a write outside a transaction, a call
 *                   from inside a foreach callback, or a rejected row.
 *   CU_ENOTFOUND    no decision with that UID.
 *   CU_ECONFLICT    a state transition the state machine forbids.
 * After any failure inside a transaction other than CU_EINVAL, CU_ENOTFOUND
 * and CU_ECONFLICT, SQLite may already have rolled the whole transaction
 * back: call store_rollback() (always safe) and redo the loop turn.
 */
#ifndef CU_STORE_STORE_H
#define CU_STORE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/cu.h"

/* Schema version this binary writes (PRAGMA user_version). */
#define STORE_SCHEMA_VERSION 5

typedef struct store store; /* opaque */

/*
 * Decision states. Allowed transitions (anything else is CU_ECONFLICT;
 * setting the current state again is a no-op):
 *
 *            put
 *   (absent) ----> RESERVED ---> ADMITTED ---> EVICTING ---> RELEASED
 *                    |  |           |             ^            ^  ^
 *                    |  +-----------|-------------+            |  |
 *                    |              +--------------------------+  |
 *                    +--------------------------------------------+
 *
 *   RESERVED -> ADMITTED | EVICTING | RELEASED
 *   ADMITTED -> EVICTING | RELEASED
 *   EVICTING -> RELEASED
 *   RELEASED -> (terminal; a new admission is a new put)
 *
 * RESERVED: decided and recorded, not yet (known to be) announced.
 * ADMITTED: the API write announcing it succeeded.
 * EVICTING: eviction decided; quota is still held until the job stops.
 * RELEASED: quota given back; kept as history until deleted.
 * Every state but RELEASED is "live" and counts towards usage.
 */
enum store_state {
	STORE_RESERVED = 0,
	STORE_ADMITTED = 1,
	STORE_EVICTING = 2,
	STORE_RELEASED = 3,
};

/* One resource of one podSet: the flavor it was assigned and the usage of
 * the whole podSet (all `count` pods) in milli-units, as in Kueue's
 * PodSetAssignment.resourceUsage. */
typedef struct store_resource {
	const char *resource; /* e.g. "cpu", "nvidia.com/gpu" */
	const char *flavor;   /* ResourceFlavor name */
	int64_t milli;	      /* >= 0 */
} store_resource;

typedef struct store_podset {
	const char *name; /* unique within the decision */
	int32_t count;	  /* >= 0 pods */
	size_t n_resources;
	const store_resource *resources; /* names unique within the podSet */
	/* topologyAssignment as JSON text (Kueue v1beta2 wire form), or NULL
	 * when the podSet was not placed by topology (schema v4). */
	const char *topology;
} store_podset;

/*
 * One admission decision. As an argument to store_decision_put every
 * pointer in it, its podSets and their resources is [borrowed] and copied. As
 * returned by store_decision_get every pointer is owned by the decision
 * ([owned: free with store_decision_free]). In a foreach callback it is [valid
 * until the callback returns].
 */
typedef struct store_decision {
	const char *uid;	   /* workload metadata.uid; the key */
	const char *ns;		   /* workload namespace */
	const char *name;	   /* workload name */
	const char *cluster_queue; /* ClusterQueue name */
	enum store_state state;
	int64_t decided_ns; /* decision time, ns since epoch (passed in) */
	int64_t state_ns;   /* time of the last state change; 0 on put
			     * means decided_ns */
	int64_t seq;	    /* assigned by put; ignored as input */
	/* The Workload's metadata.generation the decision was made for
	 * (>= 0); 0 = not recorded (a decision from before schema v3). */
	int64_t generation;
	size_t n_podsets; /* >= 1 */
	const store_podset *podsets;
} store_decision;

/* ---- lifecycle and transactions ------------------------------------ */

/*
 * Open (creating with mode 0600 if absent) the ledger at path, migrate it
 * to STORE_SCHEMA_VERSION and prepare every statement. path [borrowed] is a
 * file name or a SQLite "file:" URI (tools and tests use "file:...?mode=ro";
 * a read-only ledger is refused with CU_EDENIED because the controller
 * cannot work without writing). On success *out [owned: free with
 * store_close]; on failure *out is NULL.
 */
CU_MUST_CHECK int store_open(store **out, const char *path, cu_error *err);

/*
 * store_open, and when the file is corrupt (CU_EPARSE, which includes
 * damaged pages found by the integrity check at open): move the file and
 * its -wal/-shm/-journal files aside to "<path>.corrupt-<unix seconds>"
 * (kept for inspection, never deleted), log one warning naming both, and
 * open a new empty ledger at path for the controller to rebuild from the
 * API server. Every other failure is returned as store_open returns it: a
 * new file does not help a read-only volume or a full disk, and a newer or
 * foreign database is not ours to move. "file:" URIs and ":memory:" are
 * never moved. path [borrowed]; *moved_to (if moved_to is non-NULL) is the
 * new name [owned: cu_free] when the file was moved, else NULL.
 */
CU_MUST_CHECK int store_open_or_rebuild(
    store **out, const char *path, char **moved_to, cu_error *err);

/* Roll back any open transaction, finalize and close. s [consumed]; NULL
 * is a no-op. */
void store_close(store *s);

/*
 * One write transaction per event-loop turn (BEGIN IMMEDIATE). Every write
 * below requires one. A commit is durable (fsync'd) when it returns CU_OK:
 * only then may the controller announce the decisions it contains.
 * store_begin with a transaction already open is CU_EINVAL.
 */
CU_MUST_CHECK int store_begin(store *s, cu_error *err);
CU_MUST_CHECK int store_commit(store *s, cu_error *err);
/* Undo everything since store_begin. Safe without an open transaction and
 * after SQLite rolled back on its own. */
void store_rollback(store *s);
bool store_in_txn(const store *s);

/*
 * Cap the ledger at about max_bytes (whole pages, never below its current
 * size); 0 removes the cap. Writes beyond it fail like a full disk
 * (CU_EQUOTA "ledger disk full: ..."), so a ledger sharing a volume can be
 * stopped before it fills it, and tests can produce a full disk.
 * Per connection: set it again after every store_open.
 */
CU_MUST_CHECK int store_limit_size(store *s, int64_t max_bytes, cu_error *err);

/* ---- decisions ------------------------------------------------------ */

/*
 * Insert d, or replace the decision with the same UID (its usage is
 * withdrawn and d's added if d is live). Assigns the next sequence number,
 * returned in *seq_out if non-NULL. d [borrowed]; d->seq is ignored. A
 * failed put leaves the transaction as it was before the call.
 */
CU_MUST_CHECK int store_decision_put(
    store *s, const store_decision *d, int64_t *seq_out, cu_error *err);

/* Move the decision to state (see the transitions above) at now_ns.
 * uid [borrowed]. CU_ENOTFOUND, CU_ECONFLICT. */
CU_MUST_CHECK int store_decision_set_state(store *s, const char *uid,
    enum store_state state, int64_t now_ns, cu_error *err);

/* Remove the decision (withdrawing its usage if live). uid [borrowed].
 * CU_ENOTFOUND. */
CU_MUST_CHECK int store_decision_delete(
    store *s, const char *uid, cu_error *err);

/*
 * Withdraw a decision that was recorded but never announced: remove it
 * (withdrawing its usage) when its state is RESERVED or RELEASED. A
 * decision the API may have seen (ADMITTED, EVICTING) is never withdrawn:
 * CU_ECONFLICT, nothing changed. uid [borrowed]. CU_ENOTFOUND.
 */
CU_MUST_CHECK int store_decision_withdraw(
    store *s, const char *uid, cu_error *err);

/*
 * Replace the topologyAssignment of podSet idx (put order) of uid's live
 * decision with topology [borrowed] (JSON text; NULL clears it): a failed
 * node's pods moved within their domain (controller/tas.c). The state,
 * sequence number and usage stay. CU_ENOTFOUND (no decision, or no such
 * podSet), CU_ECONFLICT (the decision is RELEASED).
 */
CU_MUST_CHECK int store_podset_set_topology(
    store *s, const char *uid, size_t idx, const char *topology, cu_error *err);

/* Load one decision; podSets come back in put order, the resources of a
 * podSet ordered by resource name. uid [borrowed]. *out [owned: free with
 * store_decision_free]; NULL on failure. CU_ENOTFOUND if absent. */
CU_MUST_CHECK int store_decision_get(
    store *s, const char *uid, store_decision **out, cu_error *err);

/* Free a decision from store_decision_get. d [consumed]; NULL is a
 * no-op. */
void store_decision_free(store_decision *d);

/*
 * Callback for iterations: return 0 to continue; any other value stops the
 * iteration and is returned by the foreach function unchanged (err is left
 * alone: the callback reports its own failure). Callbacks may call
 * store_decision_get and store_usage_get, but not writes, transactions or
 * another foreach (CU_EINVAL).
 */
typedef int (*store_decision_cb)(const store_decision *d, void *payload);

/* Call cb for every live (non-RELEASED) decision in sequence order.
 * d [valid until cb returns]; cb, payload [borrowed]. */
CU_MUST_CHECK int store_decision_foreach_live(
    store *s, store_decision_cb cb, void *payload, cu_error *err);

/* Highest sequence number ever assigned (0 for a new ledger). Sequence
 * numbers are never reused, even after deletes. */
CU_MUST_CHECK int store_last_seq(store *s, int64_t *out, cu_error *err);

/* ---- derived usage -------------------------------------------------- */

/* Usage of cq x flavor x resource summed over live decisions; 0 when none.
 * Strings [borrowed]. */
CU_MUST_CHECK int store_usage_get(store *s, const char *cq, const char *flavor,
    const char *resource, int64_t *milli, cu_error *err);

typedef int (*store_usage_cb)(const char *cq, const char *flavor,
    const char *resource, int64_t milli, void *payload);

/* Call cb for every non-zero usage row, ordered by (cq, flavor, resource).
 * Strings [valid until cb returns]. */
CU_MUST_CHECK int store_usage_foreach(
    store *s, store_usage_cb cb, void *payload, cu_error *err);

/* Recompute usage from the live decisions and compare with the derived
 * table. CU_EIO "ledger inconsistent: ..." naming the first mismatching
 * (cq, flavor, resource) with both values. */
CU_MUST_CHECK int store_check_consistency(store *s, cu_error *err);

/* ---- restart reconciliation ---------------------------------------- */

/*
 * What a restarted controller should do with one workload, given what the
 * ledger recorded and what the API shows (QuotaReserved or Admitted).
 */
enum store_recon {
	/* Neither side holds quota for it: nothing to do. */
	STORE_RECON_NONE = 0,
	/* Ledger live and API shows it: resume the recorded decision. */
	STORE_RECON_RESUME = 1,
	/* Ledger RESERVED, API does not show it: the crash came between the
	 * commit and the announcement. Re-check fit, then announce (and set
	 * ADMITTED) or release. */
	STORE_RECON_UNANNOUNCED = 2,
	/* Ledger ADMITTED or EVICTING, API no longer shows it: the admission
	 * ended while we were down. Release it. */
	STORE_RECON_STALE = 3,
	/* API shows it, ledger has no live decision (lost commit, deleted or
	 * rebuilt ledger): record a decision from the API's view. */
	STORE_RECON_ADOPT = 4,
};

/* The API's view of one workload. */
typedef struct store_api_view {
	const char *uid; /* [borrowed] */
	bool admitted;	 /* API shows QuotaReserved or Admitted */
} store_api_view;

/* Classify one workload. uid [borrowed]. */
CU_MUST_CHECK int store_reconcile_one(store *s, const char *uid,
    bool api_admitted, enum store_recon *out, cu_error *err);

typedef int (*store_recon_cb)(
    const char *uid, enum store_recon what, void *payload);

/*
 * Full restart pass: cb for every view (in the given order; NONE included),
 * then for every live ledger decision whose UID is in no view
 * (UNANNOUNCED or STALE, in sequence order). views [borrowed], n may be 0;
 * uid in cb [valid until cb returns]. Callback rules as for foreach.
 */
CU_MUST_CHECK int store_reconcile(store *s, const store_api_view *views,
    size_t n, store_recon_cb cb, void *payload, cu_error *err);

/* ---- MultiKueue dispatch choices (dispatch.c) ------------------------ */

/*
 * The MultiKueue manager's choice of a worker cluster for a Workload,
 * recorded (and committed) before the Workload's status announces it, so
 * that a restarted manager resumes the choice instead of making another
 * (docs/multikueue.md). One per Workload UID; put replaces. Writes need a
 * transaction, as the decisions'. Strings [borrowed].
 */
CU_MUST_CHECK int store_dispatch_put(store *s, const char *uid, const char *ns,
    const char *name, const char *cluster, int64_t now_ns, cu_error *err);

/* The recorded cluster of uid: *cluster [owned: cu_free]; NULL and
 * CU_ENOTFOUND when none. */
CU_MUST_CHECK int store_dispatch_get(
    store *s, const char *uid, char **cluster, cu_error *err);

/* Forget the choice of uid (a Workload finished, requeued or gone).
 * CU_ENOTFOUND when none. */
CU_MUST_CHECK int store_dispatch_delete(
    store *s, const char *uid, cu_error *err);

typedef int (*store_dispatch_cb)(const char *uid, const char *ns,
    const char *name, const char *cluster, int64_t decided_ns, void *payload);

/* cb for every recorded choice, by UID. Strings [valid until cb
 * returns]. Callback rules as for store_decision_foreach_live. */
CU_MUST_CHECK int store_dispatch_foreach(
    store *s, store_dispatch_cb cb, void *payload, cu_error *err);

/* ---- the ledger watches itself (selfwatch.c) ------------------------ */

/* What store_file_check found at the ledger's path. */
enum store_file_state {
	STORE_FILE_OK = 0,	 /* the file open is the one at the path */
	STORE_FILE_DELETED = 1,	 /* unlinked, or moved away: no file */
	STORE_FILE_REPLACED = 2, /* another file is at the path */
};

/*
 * Is the file this store writes still the one at its path? The open
 * file's link count (0: deleted) and the inode at the path (another:
 * replaced; none: deleted or moved away). Two system calls, no SQL.
 * Always STORE_FILE_OK for ":memory:" and "file:" URIs. CU_EIO when the
 * open file cannot be examined.
 */
CU_MUST_CHECK int store_file_check(
    store *s, enum store_file_state *out, cu_error *err);

/*
 * Continue on a new file at the ledger's path, holding the live
 * decisions (and the dispatch choices) of the file open now (read from it: an
 * unlinked file stays readable while open) with their states and times, in
 * sequence order: after the file was deleted or replaced while running
 * (docs/ledger.md). A replacement is moved aside to "<path>.replaced-<unix
 * seconds>" (kept, never deleted). Outside a transaction (CU_EINVAL). *copied
 * (may be NULL) is how many decisions were carried over. On failure before the
 * switch the store goes on with the file it had; a failure after it (the
 * new file cannot be opened) leaves the store unusable: CU_EIO, the
 * controller stops.
 */
CU_MUST_CHECK int store_relink(store *s, size_t *copied, cu_error *err);

/*
 * Fold the WAL into the database file and truncate it to zero bytes
 * (SQLite's TRUNCATE checkpoint), outside a transaction (CU_EINVAL).
 * After failed commits (a full disk, a file-size limit at the WAL): the
 * WAL of a connection whose commits keep failing is never checkpointed
 * (SQLite does it after a commit that succeeds), so without this a WAL at
 * its limit stays full for good. Errors as store_commit's.
 */
CU_MUST_CHECK int store_checkpoint(store *s, cu_error *err);

/* False once a store_relink failed after closing the old file. */
bool store_is_open(const store *s);

/* ---- names ---------------------------------------------------------- */

/* Static lower-case names ("reserved", "unannounced"); "unknown" if out
 * of range. */
const char *store_state_name(enum store_state state);
const char *store_recon_name(enum store_recon what);

#endif /* CU_STORE_STORE_H */
