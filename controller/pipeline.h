/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/pipeline.h - the controller's write pipeline: every write
 * the controller sends to the API goes through one ctl_pipe.
 *
 *  - the queue: writes queued during a turn, sent by ctl_pipe_flush;
 *  - the ledger transaction of the turn, committed by ctl_pipe_flush
 *    before any write that announces a decision leaves the process
 *    (docs/architecture.md lesson 3);
 *  - writes in flight and their answers (ctl_pipe_hooks.settle);
 *  - write expectations: until the informer shows the resourceVersion our
 *    own write produced, the cached object is older than the server's and
 *    is not acted on (ctl_pipe_stale);
 *  - retries of rejected writes after a pause (ctl_pipe_retry_due);
 *  - the token buckets of status reports (ctl_pipe_budget_take).
 *
 * Keys of objects (expectations, owners, retries) are object keys of
 * controller/keys.h: {kind, namespace ("" when cluster-scoped), name},
 * arrays of three strings.
 *
 * Event-loop thread only. Prefix ctl_pipe_ (the controller's family).
 */
#ifndef CU_CONTROLLER_PIPELINE_H
#define CU_CONTROLLER_PIPELINE_H

#include <jansson.h>
#include <stdbool.h>

#include "api/client.h"
#include "api/informer.h"
#include "controller/keys.h"
#include "controller/metrics.h"
#include "lib/cu.h"
#include "queues/queues.h"
#include "store/store.h"

typedef struct ctl_pipe ctl_pipe;

/* What a write is. The kind selects the request (status subresource or
 * not, POST, DELETE), the client (Events have their own) and whether the
 * write announces something the ledger must hold first. */
enum ctl_pipe_kind {
	CTL_PIPE_ADMIT,		  /* Workload status: quota reserved and
				   * admitted (announces a decision) */
	CTL_PIPE_WL_STATUS,	  /* other Workload status (pending reason,
				   * finished, quota released) */
	CTL_PIPE_EVICT,		  /* Workload status: a preemption victim's
				   * eviction (uid set) */
	CTL_PIPE_QUEUE_STATUS,	  /* ClusterQueue or LocalQueue status */
	CTL_PIPE_WL_PATCH,	  /* Workload metadata or spec (its
				   * finalizer, queue, priority); also a
				   * ClusterQueue's or ResourceFlavor's
				   * finalizer */
	CTL_PIPE_WL_CREATE,	  /* a new Workload (POST) */
	CTL_PIPE_WL_DELETE,	  /* DELETE a Workload */
	CTL_PIPE_JOB_START,	  /* job spec: unsuspend, admitted flavors */
	CTL_PIPE_JOB_SUSPEND,	  /* job spec: suspend (stop step) */
	CTL_PIPE_JOB_RESET_START, /* job status: startTime cleared (stop
				   * step) */
	CTL_PIPE_JOB_RESTORE,	  /* job spec: templates restored (stop
				   * step) */
	CTL_PIPE_EVENT_CREATE,	  /* a new Event (the Events client) */
	CTL_PIPE_EVENT_PATCH,	  /* an Event's count bump (the Events
				   * client) */
};

/* A write queued during a turn, sent after the ledger commit. Fields are
 * set by ctl_pipe_queue and the setters below. */
struct ctl_pipe_write {
	enum ctl_pipe_kind kind;
	const struct api_resource *res; /* [static] */
	char *ns, *name;		/* owned; ns NULL: cluster-scoped */
	char *uid;			/* owned; the Workload's, or NULL */
	json_t *patch; /* owned; the body; NULL once withdrawn */
	/* owned; the object key whose resourceVersion to expect, all NULL
	 * when none */
	char *expect[3];
	/* owned; the job's object key ({"Job" or "JobSet", ns, name}) whose
	 * reconciler waits on this Workload write, all NULL when none:
	 * marked again when the answer comes. */
	char *owner[3];
	/* An event sent once the write succeeds (not per attempt): reason
	 * [static] and message [owned]; ADMIT: QuotaReserved + Admitted
	 * (ev_reason NULL) or QuotaReserved alone (ev_reason
	 * "QuotaReserved": admission checks pending). */
	const char *ev_reason;
	char *note;
	/* ADMIT: the Workload's creation time and ClusterQueue [owned], for
	 * the admission metrics on success. */
	int64_t created_ns;
	char *cq;
	/* The status-report budget (enum ctl_pipe_budget) the write counts
	 * against until it is answered or dropped (ctl_pipe_set_budget);
	 * -1: none. */
	int budget;
};

/* Why settle is called. */
enum ctl_pipe_outcome {
	CTL_PIPE_ANSWERED,    /* the API answered (resp) */
	CTL_PIPE_UNCOMMITTED, /* not sent: the ledger commit failed */
	CTL_PIPE_SEND_FAILED, /* not sent: the client refused it */
};

struct ctl_pipe_hooks {
	/* The outcome of write w [borrowed] beyond the pipeline's own
	 * bookkeeping (expectations and retries are done): decisions are
	 * confirmed or withdrawn, events sent. resp [borrowed] is NULL
	 * unless outcome is CTL_PIPE_ANSWERED. Not called for answers
	 * cancelled by shutdown. */
	void (*settle)(const struct ctl_pipe_write *w,
	    enum ctl_pipe_outcome outcome, const struct api_response *resp,
	    void *payload);
	/* The object of key [borrowed] (an expectation or owner key) is to
	 * be reconciled again. */
	void (*mark)(const char *const *key, void *payload);
	/* The informer whose cache expectation key [borrowed] is about. */
	api_informer *(*informer)(const char *const *key, void *payload);
	/* While stopping: the last write in flight was answered. */
	void (*drained)(void *payload);
	void *payload;
};

struct ctl_pipe_opts {
	api_client *client;    /* [borrowed] every write but Events */
	api_client *ev_client; /* [borrowed] Events */
	store *ledger;	       /* [borrowed] */
	ctl_metrics *metrics;  /* [borrowed; may be NULL] */
	double qps;	       /* the client's qps: sizes the report budgets */
	struct ctl_pipe_hooks hooks;
};

/* *out [owned: ctl_pipe_free]. CU_ENOMEM. */
CU_MUST_CHECK int ctl_pipe_new(
    ctl_pipe **out, const struct ctl_pipe_opts *opts, cu_error *err);

/* The clients are about to be freed: answers cancelled from now on are
 * dropped without hooks. */
void ctl_pipe_closing(ctl_pipe *p);

/* Free the queue and the expectations; an open ledger transaction is
 * rolled back. After the clients were freed. NULL is a no-op. */
void ctl_pipe_free(ctl_pipe *p);

/*
 * Queue a write of kind to res ns/name with body patch [consumed]; uid
 * [borrowed; copied; may be NULL] is the Workload's. Returns the entry
 * [borrowed; valid until the next ctl_pipe_queue or ctl_pipe_flush] for
 * the setters below, or NULL when it could not be queued (out of memory:
 * logged, patch dropped).
 */
struct ctl_pipe_write *ctl_pipe_queue(ctl_pipe *p, enum ctl_pipe_kind kind,
    const struct api_resource *res, const char *ns, const char *name,
    const char *uid, json_t *patch);

/* On success, expect the resourceVersion w produces for key [borrowed;
 * copied]. busy: key counts as stale while w is in flight (not for
 * admissions: their Workload is held by the decision in flight). */
void ctl_pipe_expect(
    ctl_pipe *p, struct ctl_pipe_write *w, const char *const *key, bool busy);

/* owner [borrowed; copied; may be NULL]: see struct ctl_pipe_write. */
void ctl_pipe_set_owner(struct ctl_pipe_write *w, const char *const *owner);

/* The event sent when w succeeds: reason [static; NULL for ADMIT], note
 * [consumed; may be NULL: no event]. */
void ctl_pipe_set_event(
    struct ctl_pipe_write *w, const char *reason, char *note);

/* ADMIT: metrics context, cq [borrowed; copied; may be NULL]. */
void ctl_pipe_set_admission(
    struct ctl_pipe_write *w, int64_t created_ns, const char *cq);

/* Open the turn's ledger transaction unless open. Errors are logged;
 * returns the store's code. */
int ctl_pipe_begin(ctl_pipe *p);

/*
 * End of the turn: commit the ledger when something announcing is queued
 * (or the last commit is older than CTL_LEDGER_LAZY_MS, or stopping),
 * then send every queued write. A failed commit withdraws the turn's
 * admissions (settle with CTL_PIPE_UNCOMMITTED).
 */
void ctl_pipe_flush(ctl_pipe *p);

/* Stop: from now on every flush commits; returns true when no write is
 * in flight (else the drained hook will be called). */
bool ctl_pipe_stop(ctl_pipe *p);

/* Writes in flight. */
size_t ctl_pipe_in_flight(const ctl_pipe *p);

/* Writes queued since the last flush. */
size_t ctl_pipe_queued(const ctl_pipe *p);

/* The last ledger commit's error, "" when it worked. */
const char *ctl_pipe_ledger_error(const ctl_pipe *p);

/*
 * The ledger and the engine st [borrowed] agree: every live decision is
 * a Workload the engine holds with its quota (ADMITTED or EVICTING) in
 * the decision's ClusterQueue. Call between turns, once the ledger's
 * decisions were resumed and only where this replica writes. CU_OK also
 * once a commit failed (the rolled-back turn may have held releases the
 * engine made: agreement is no longer promised); else CU_EINVAL naming
 * the first disagreement, or the ledger's own error. The other way does
 * not hold: the engine adopts quota reserved before the ledger (a
 * rebuilt ledger, another writer) without a decision.
 */
CU_MUST_CHECK int ctl_pipe_check_ledger(
    ctl_pipe *p, que_state *st, cu_error *err);
/* Is a ctl_pipe_check_ledger due? It reads every live decision, so after
 * one the next waits at least 100 ms and 20 times what it took. */
bool ctl_pipe_check_ledger_due(const ctl_pipe *p);

/* ---- expectations --------------------------------------------------- */

/*
 * Is the cached obj [borrowed] older than what our own last write to key
 * left on the server, or is a write to key in flight? Not once the
 * object shows that version, or its informer has seen that version
 * anywhere, or the expectation expired (CTL_EXPECT_TTL_MS).
 */
bool ctl_pipe_stale(ctl_pipe *p, const char *const *key, json_t *obj);

/* key's expectation is dropped once inf [borrowed] has seen its version
 * or a later one (an object missing from it was deleted after our
 * write), or once it expired. */
void ctl_pipe_gone_past_expect(
    ctl_pipe *p, api_informer *inf, const char *const *key);

/* A write to key is in flight or its result not yet in the cache. */
bool ctl_pipe_awaits(const ctl_pipe *p, const char *const *key);
/*
 * The object {kind, key's namespace, name} [all borrowed; copied] was
 * not reconciled because a write to key is in flight (ctl_pipe_stale or
 * ctl_pipe_awaits said so): that write's answer, or its failure to be
 * sent, marks it again (hooks.mark), as it marks the write's own key and
 * owner. Its watch event may have come, and been skipped, before the
 * answer: without this nothing would look at the object again. One such
 * object per key (the last); nothing when no write to key is in flight.
 */
void ctl_pipe_await_answer(
    ctl_pipe *p, const char *const *key, const char *kind, const char *name);
/* How many writes to key [borrowed] were refused in a row (the back-off's
 * count; 0 after a success or never). */
unsigned ctl_pipe_refusals(const ctl_pipe *p, const char *const *key);

/* ---- retries -------------------------------------------------------- */

/* A failed write to key waits for its retry. */
bool ctl_pipe_retrying(const ctl_pipe *p, const char *const *key);

/* Retries due at now_ms (wall clock): mark hook, then forgotten. */
void ctl_pipe_retry_due(ctl_pipe *p, int64_t now_ms);

/* ---- status-report budgets ------------------------------------------ */

enum ctl_pipe_budget {
	CTL_PIPE_BUDGET_QUEUE_STATUS, /* ClusterQueue/LocalQueue status */
	CTL_PIPE_BUDGET_PENDING,      /* Workload pending reasons */
	CTL_PIPE_BUDGET_FINALIZERS,   /* ResourceFlavor/ClusterQueue
					 finalizers (feed.c) */
	CTL_PIPE_BUDGET__COUNT
};

/* The writes of one budget that may be queued or in flight at once. */
#define CTL_PIPE_BUDGET_OUTSTANDING 16

/* Take one token from budget b at now_ms (wall clock); false when empty,
 * or when the budget has no room (ctl_pipe_budget_room). Refills slower
 * while the main client is backlogged. */
bool ctl_pipe_budget_take(ctl_pipe *p, enum ctl_pipe_budget b, int64_t now_ms);

/* Does budget b have room for another write: fewer than
 * CTL_PIPE_BUDGET_OUTSTANDING of its writes queued or in flight? Reports
 * share the main client's one queue with admissions, so however many
 * ClusterQueues want a status written at once (an urgent Active change
 * of ten thousand of them at start), at most that many such writes are
 * ever ahead of an admission. */
bool ctl_pipe_budget_room(const ctl_pipe *p, enum ctl_pipe_budget b);

/* Write w [borrowed; may be NULL] counts against budget b until it is
 * answered, fails to be sent or is dropped unsent. */
void ctl_pipe_set_budget(
    ctl_pipe *p, struct ctl_pipe_write *w, enum ctl_pipe_budget b);

/* Writes of budget b queued or in flight. */
size_t ctl_pipe_budget_outstanding(const ctl_pipe *p, enum ctl_pipe_budget b);

#endif /* CU_CONTROLLER_PIPELINE_H */
