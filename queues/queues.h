/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queues/queues.h - the queueing model of cueue: ResourceFlavors,
 * ClusterQueues, Cohort trees, LocalQueues, pending Workloads and the quota
 * each ClusterQueue and Cohort holds and uses, with Kueue's semantics
 * (borrowing, lending limits, hierarchical cohorts, StrictFIFO and
 * BestEffortFIFO queueing, requeue on capacity change, requeue backoff).
 *
 * Pure logic: libc and lib/cu.h only, no I/O, no clock reads (time is
 * passed in as int64 nanoseconds). Quantities are int64 milli-units.
 * The admission engine (admission/) reads the structs below and changes
 * them only through the functions of this header. Event-loop thread only.
 * Prefix: que_ / QUE_.
 *
 * Design notes
 * ------------
 * Workload lifecycle inside the model (que_wl.where):
 *
 *   que_workload_add ──> BLOCKED (LocalQueue missing/stopped, CQ missing)
 *          │                 ^   │ que_*_set makes it routable (rebuild)
 *          v                 │   v
 *       PENDING (CQ heap) <──────┘ <──────────────────────┐
 *          │ que_pop_heads                                 │
 *          v                                               │
 *        HEAD ── que_requeue ──> PENDING | INADMISSIBLE ───┤ capacity change
 *          │                               BACKOFF ────────┤ time passes
 *          │ que_admit                                     │
 *          v                                               │
 *       ADMITTED ── que_mark_evicting ──> EVICTING ──┐     │
 *          ^ <──────── que_workload_unevict ─────────┤     │
 *          │                                          │     │
 *          └──── que_workload_release / _unadmit ─────┴─────┘
 *   que_workload_remove: from any state, releasing quota if held.
 *
 * Invariants (checked by que_check_invariants):
 *  1. A CQ's usage in (flavor, resource) equals the sum of the usage of its
 *     ADMITTED and EVICTING workloads there.
 *  2. A cohort's usage equals the sum over its children of
 *     max(0, child usage - child localQuota) (usage beyond what a child keeps
 *     for itself is stored in the parent).
 *  3. Nothing uses more than its quotas allow: a root's usage is at most its
 *     subtree quota; a node with a borrowingLimit uses at most subtree quota +
 *     borrowingLimit; a CQ without a cohort uses at most its nominal quota.
 *     (A quota lowered under existing usage violates this on purpose: the
 *     checker reports what the caller did.)
 *  4. Every workload is in exactly the container its `where` names, and a
 *     pending heap is a heap under que_wl_before().
 *  5. Objects (flavors, CQs, cohorts, LQs) are never freed before the state:
 *     deleting one marks it absent, so pointers held by workloads stay valid
 *     and a re-created object with the same name reuses the struct.
 */
#ifndef CU_QUEUES_QUEUES_H
#define CU_QUEUES_QUEUES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/cu.h"

typedef struct que_state que_state;

/* ---- specs (caller-built, borrowed for the duration of the call) ---- */

enum que_taint_effect {
	QUE_EFFECT_NO_SCHEDULE = 0,
	QUE_EFFECT_PREFER_NO_SCHEDULE,
	QUE_EFFECT_NO_EXECUTE,
};

struct que_kv {
	const char *key;   /* [borrowed] */
	const char *value; /* [borrowed] */
};

struct que_taint {
	const char *key;   /* [borrowed] */
	const char *value; /* [borrowed]; NULL or "" for none */
	enum que_taint_effect effect;
};

enum que_toleration_op {
	QUE_TOLERATE_EQUAL = 0,
	QUE_TOLERATE_EXISTS,
};

struct que_toleration {
	const char *key;   /* [borrowed]; NULL/"" with EXISTS = every key */
	const char *value; /* [borrowed]; NULL = "" */
	enum que_toleration_op op;
	bool any_effect; /* an empty effect in the API tolerates every effect */
	enum que_taint_effect effect;
};

enum que_selector_op {
	QUE_SEL_IN = 0,
	QUE_SEL_NOT_IN,
	QUE_SEL_EXISTS,
	QUE_SEL_DOES_NOT_EXIST,
};

/* One matchExpression of a required node-affinity term. */
struct que_node_requirement {
	const char *key; /* [borrowed] */
	enum que_selector_op op;
	const char *const *values; /* [borrowed] */
	size_t n_values;
};

/* Terms are ORed, requirements inside a term are ANDed. */
struct que_affinity_term {
	const struct que_node_requirement *reqs; /* [borrowed] */
	size_t n_reqs;
};

struct que_flavor_spec {
	const char *name;		  /* [borrowed] */
	const struct que_kv *node_labels; /* [borrowed] */
	size_t n_node_labels;
	const struct que_taint *taints; /* [borrowed] */
	size_t n_taints;
	/* Tolerations the flavor injects into admitted pods; they also count
	 * when matching the flavor's own taints (Kueue does the same). */
	const struct que_toleration *tolerations; /* [borrowed] */
	size_t n_tolerations;
};

struct que_resource_quota {
	const char *resource; /* [borrowed] */
	int64_t nominal;      /* milli-units, >= 0 */
	bool has_borrowing_limit;
	int64_t borrowing_limit;
	bool has_lending_limit;
	int64_t lending_limit;
};

struct que_flavor_quotas {
	const char *flavor;			    /* [borrowed] */
	const struct que_resource_quota *resources; /* [borrowed] */
	size_t n_resources;
};

struct que_resource_group {
	const char *const *covered; /* [borrowed] resource names */
	size_t n_covered;
	const struct que_flavor_quotas *flavors; /* [borrowed] in order */
	size_t n_flavors;
};

enum que_queueing {
	QUE_BEST_EFFORT_FIFO = 0, /* Kueue's default */
	QUE_STRICT_FIFO,
};

enum que_stop {
	QUE_STOP_NONE = 0,
	QUE_STOP_HOLD,
	QUE_STOP_HOLD_AND_DRAIN,
};

enum que_preempt_policy {
	QUE_PREEMPT_NEVER = 0,
	QUE_PREEMPT_LOWER_PRIORITY,
	QUE_PREEMPT_LOWER_OR_NEWER_EQUAL_PRIORITY, /* withinClusterQueue only */
	QUE_PREEMPT_ANY, /* reclaimWithinCohort only */
};

struct que_preemption {
	enum que_preempt_policy within_cluster_queue;
	enum que_preempt_policy reclaim_within_cohort;
	/* borrowWithinCohort.policy: NEVER or LOWER_PRIORITY. */
	enum que_preempt_policy borrow_within_cohort;
	bool has_max_priority_threshold;
	int32_t max_priority_threshold;
};

enum que_fungibility {
	QUE_FUNGIBILITY_DEFAULT = 0, /* whenCanBorrow: MayStopSearch,
				      * whenCanPreempt: TryNextFlavor */
	QUE_MAY_STOP_SEARCH,
	QUE_TRY_NEXT_FLAVOR,
};

/* flavorFungibility.preference: how flavors that each need preemption,
 * borrowing or both are ranked (Kueue's isPreferred). */
enum que_fungibility_preference {
	QUE_BORROWING_OVER_PREEMPTION = 0, /* Kueue's default */
	QUE_PREEMPTION_OVER_BORROWING,
};

struct que_cq_spec {
	const char *name;   /* [borrowed] */
	const char *cohort; /* [borrowed]; NULL/"" = none */
	const struct que_resource_group *groups; /* [borrowed] */
	size_t n_groups;
	enum que_queueing queueing;
	enum que_stop stop;
	struct que_preemption preemption;
	enum que_fungibility when_can_borrow;
	enum que_fungibility when_can_preempt;
	/* spec.fairSharing.weight in milli-units (>= 0); unset = 1. */
	bool has_fair_weight;
	int64_t fair_weight;
	enum que_fungibility_preference preference;
	/* spec.admissionScope.admissionMode is UsageBasedAdmissionFairSharing:
	 * while que_admission_fair_sharing_set(st, true) (the Configuration
	 * has admissionFairSharing), pending workloads are ordered by their
	 * LocalQueue's usage first (que_lq_set_afs). */
	bool admission_fair;
};

struct que_cohort_spec {
	const char *name;   /* [borrowed] */
	const char *parent; /* [borrowed]; NULL/"" = root */
	const struct que_resource_group *groups; /* [borrowed] */
	size_t n_groups;
};

struct que_lq_spec {
	const char *ns;		   /* [borrowed] */
	const char *name;	   /* [borrowed] */
	const char *cluster_queue; /* [borrowed] */
	enum que_stop stop;
};

/* Kueue's fairSharing.preemptionStrategies. */
enum que_fair_strategy {
	QUE_FAIR_LE_FINAL_SHARE = 0, /* LessThanOrEqualToFinalShare */
	QUE_FAIR_LT_INITIAL_SHARE,   /* LessThanInitialShare */
};

/* The Configuration's fairSharing: when enable is false (the default)
 * the engine schedules and preempts classically. */
struct que_fair_config {
	bool enable;
	size_t n_strategies; /* 1 or 2 */
	enum que_fair_strategy strategies[2];
};

struct que_request {
	const char *resource; /* [borrowed] */
	int64_t per_pod;      /* milli-units per pod */
};

struct que_podset_spec {
	const char *name; /* [borrowed]; NULL = "main" */
	int32_t count;	  /* pods, >= 0 */
	/* Partial admission (podSet minCount): the podset may be admitted
	 * with as few as min_count pods; outside [0, count] it is ignored. */
	bool has_min_count;
	int32_t min_count;
	const struct que_request *requests; /* [borrowed] */
	size_t n_requests;
	/* The pods' own requests when the Configuration's resources
	 * (exclusions, transformations) made requests differ from them:
	 * topology placement reads these, as Kueue's does. NULL: requests. */
	const struct que_request *pod_requests; /* [borrowed] */
	size_t n_pod_requests;
	const struct que_toleration *tolerations; /* [borrowed] */
	size_t n_tolerations;
	const struct que_kv *node_selector; /* [borrowed] */
	size_t n_node_selector;
	const struct que_affinity_term
	    *affinity; /* [borrowed] required terms */
	size_t n_affinity;
};

struct que_workload_spec {
	const char *uid;	/* [borrowed]; unique key */
	const char *ns;		/* [borrowed] */
	const char *name;	/* [borrowed] */
	const char *queue_name; /* [borrowed] LocalQueue name in ns */
	int32_t priority;
	int64_t created_ns; /* creationTimestamp */
	/* The caller evaluated the CQ's namespaceSelector against ns. */
	bool namespace_eligible;
	const struct que_podset_spec *podsets; /* [borrowed] 1..18 */
	size_t n_podsets;
	/* [borrowed] Kueue's workload slice (ElasticJobsViaWorkloadSlices):
	 * the name, in ns, of the slice this one replaces; NULL or "" when
	 * none. Its usage counts as freed when this one is admitted. */
	const char *replaces;
};

/* ---- model (read-only outside queues/) ------------------------------- */

/* A (flavor, resource) pair is interned to a dense "fr" id. */
struct que_quota {
	int64_t nominal;
	int64_t borrowing_limit; /* valid if has_borrowing_limit */
	int64_t lending_limit;	 /* valid if has_lending_limit */
	bool has_borrowing_limit;
	bool has_lending_limit;
	bool defined; /* the node declares this fr */
};

struct que_cell {
	struct que_quota q;
	int64_t subtree; /* own nominal + what children store here */
	int64_t usage;	 /* own, or aggregated from children */
};

struct que_cohort;

/* What CQs and cohorts share: the quota tree node. */
struct que_node {
	struct que_cell *cells; /* owned; indexed by fr, ncells long */
	uint32_t ncells;
	struct que_cohort *parent; /* [borrowed] NULL at a root */
	/* spec.fairSharing.weight, milli-units: 1000 (Kueue's default of
	 * 1) unless the object sets it. */
	int64_t fair_weight;
};

struct que_flavor {
	char *name; /* owned */
	uint32_t id;
	bool exists;
	struct que_kv *labels; /* owned (strings in the same block) */
	size_t n_labels;
	struct que_taint *taints; /* owned */
	size_t n_taints;
	struct que_toleration *tolerations; /* owned */
	size_t n_tolerations;
	void *block; /* owned; backs the arrays above */
};

struct que_group {
	uint32_t *res; /* owned; covered resource ids */
	size_t n_res;
	uint32_t *flv; /* owned; flavor ids in order */
	size_t n_flv;
};

struct que_wl;

struct que_wlist {
	struct que_wl *head;
	size_t n;
};

struct que_cq {
	struct que_node node; /* first: a que_cq is a que_node */
	char *name;	      /* owned */
	char *cohort_name;    /* owned; NULL = none */
	bool exists;
	bool active;		     /* computed on rebuild */
	const char *inactive_reason; /* static Kueue Active reason */
	/* owned; why its last spec was refused (que_cq_refuse), NULL when
	 * it was accepted: the CQ is then inactive (reason InvalidSpec) and
	 * keeps the spec it had before, if any. */
	char *refused;
	/* admission checks (que_cq_set_checks): Kueue's Active reason
	 * (AdmissionCheckNotFound, AdmissionCheckInactive) [static] and
	 * the cause for its message [owned] while a check it names is missing
	 * or not Active; NULL: none. */
	const char *checks_reason;
	char *checks_message;
	struct que_group *groups; /* owned */
	size_t n_groups;
	enum que_queueing queueing;
	enum que_stop stop;
	struct que_preemption preemption;
	enum que_fungibility when_can_borrow;  /* resolved, never DEFAULT */
	enum que_fungibility when_can_preempt; /* resolved, never DEFAULT */
	enum que_fungibility_preference preference;
	/* Admission fair sharing (next to the heap they order, in what was
	 * padding): spec_admission_fair is the spec's mode; admission_fair
	 * (it and the state's switch) orders the heap by que_wl_before_afs;
	 * afs_dirty: a LocalQueue's usage changed since the heap was last
	 * ordered, it is re-heapified (O(n)) before its next pop. */
	bool spec_admission_fair;
	bool admission_fair;
	bool afs_dirty;
	/* pending heap, ordered by que_wl_before() (que_wl_before_afs with
	 * admission_fair) */
	struct que_wl **heap; /* owned array; entries borrowed */
	size_t n_heap, cap_heap;
	struct que_wlist inadmissible;
	struct que_wlist admitted; /* ADMITTED and EVICTING */
	/* Goes up whenever the workloads the ClusterQueue holds may have
	 * changed: one routed to it or away, a backoff begun or ended, a
	 * workload's usage taken or given back (admission, release,
	 * eviction), its counts changed; and on every rebuild (quota,
	 * cohorts, Active). Moves between the heap and the parked list
	 * alone leave it: they show in n_heap, inadmissible.n and
	 * parked_mix, a sum of a hash of each parked workload (the same
	 * ones parked again, the same sum). With all four equal, a status
	 * or gauge derived from this ClusterQueue alone is what it was. */
	uint64_t version;
	uint64_t parked_mix;
	bool requeue_needed;
	/* que_recheck_parked: its parked workloads get another look that
	 * changes nothing they report unless they can go ahead. */
	bool recheck_needed;
	bool has_quiet; /* its heap may hold quiet workloads */
	/* What its parked workloads were last looked at for (rebuild):
	 * activity, spec, flavors, and the quotas of it and its cohorts. */
	uint64_t config_sig;
	size_t n_members; /* workloads whose cq is this one (heap reserve) */
	uint32_t scratch; /* per-cycle marks of admission/, 0 between */
	size_t
	    n_backoff; /* of them, BACKOFF (Kueue counts them inadmissible) */
};

struct que_cohort {
	struct que_node node;	  /* first */
	char *name;		  /* owned */
	char *parent_name;	  /* owned; NULL = root */
	bool is_explicit;	  /* a Cohort object exists (else implied) */
	bool in_cycle;		  /* its parent chain loops: tree disabled */
	struct que_group *groups; /* owned */
	size_t n_groups;
	uint32_t refs; /* CQs and cohorts naming it, on rebuild */
	/* children, rebuilt from scratch on every rebuild */
	struct que_cohort **kids; /* owned array, borrowed entries */
	size_t n_kids, cap_kids;
	struct que_cq **cqs; /* owned array, borrowed entries */
	size_t n_cqs, cap_cqs;
	struct que_cohort *root; /* [borrowed] root of its tree */
	int height;		 /* 1 + deepest child cohort */
	bool requeue_needed;	 /* root only */
	uint32_t scratch;	 /* per-cycle marks of admission/, 0 between */
};

struct que_lq {
	char *key;	    /* owned; "ns/name" (lq_map is keyed by ids) */
	char *ns, *name;    /* owned */
	const char *ids[2]; /* {ns, name}: the lq_map key */
	char *cq_name;	    /* owned */
	bool exists;
	enum que_stop stop;
	int64_t fair_weight; /* milli-units, 1000 unless set */
	/* Admission fair sharing: the LocalQueue's usage (resource-weighted
	 * consumed resources plus entry penalties, over its weight; see
	 * que_afs_usage), the first key of its workloads in a ClusterQueue
	 * with admission_fair. 0 until que_lq_set_afs. */
	double afs_usage;
};

enum que_where {
	QUE_WL_BLOCKED = 0,
	QUE_WL_PENDING,
	QUE_WL_INADMISSIBLE,
	QUE_WL_BACKOFF,
	QUE_WL_HEAD,
	QUE_WL_ADMITTED,
	QUE_WL_EVICTING,
};

struct que_sel_req {
	const char *key;
	enum que_selector_op op;
	const char *const *values;
	uint32_t n_values;
};

struct que_term {
	struct que_sel_req *reqs;
	uint32_t n_reqs;
};

struct que_req {
	uint32_t res;	 /* resource id */
	int64_t per_pod; /* milli */
	int64_t total;	 /* per_pod * count, saturated to INT64_MAX */
};

/*
 * The `pods` resource: when the ClusterQueue a workload is routed to (or
 * admitted in) has a resource group covering `pods`, every podset also
 * requests one `pods` unit (1000 milli) per pod, as Kueue's flavor
 * assigner adds it. That request is the extra slot req[n_spec_req],
 * counted in n_req only while it is active; the model keeps it in step
 * with the ClusterQueue while the workload does not hold quota, and
 * freezes it while it does (usage is what was admitted).
 */
struct que_podset {
	const char *name;
	int32_t count;	    /* pods admitted (while holding quota) or wanted */
	int32_t full_count; /* the spec's count */
	int32_t min_count;  /* == full_count when not partially admissible */
	uint32_t n_req;	    /* n_spec_req, + 1 while the pods slot is active */
	uint32_t n_spec_req;
	bool pods_slot;	     /* req[n_spec_req] is the implicit pods request */
	struct que_req *req; /* totals are per_pod * count */
	uint32_t *fr;	     /* per req: assigned fr while ADMITTED/EVICTING */
	/* The pods' own requests (que_podset_spec.pod_requests), names in
	 * the Workload's block; NULL when they are req's. */
	struct que_request *pod_req;
	uint32_t n_pod_req;
	struct que_toleration *tolerations;
	uint32_t n_tolerations;
	struct que_kv *selector;
	uint32_t n_selector;
	struct que_term *terms;
	uint32_t n_terms;
};

/* A Workload. One allocation holds the struct, its strings and arrays. */
struct que_wl {
	const char *uid, *ns, *name, *queue_name; /* in the same block */
	/* {ns, name}: the key of the name index (que_workload_by_name) */
	const char *name_key[2];
	/* metadata.generation the Workload was added at, as the caller
	 * said (que_workload_set_generation; 0 until then): the model
	 * does not read it, the controller's reconciler and ledger do. */
	int64_t generation;
	int32_t priority;
	int64_t created_ns;
	int64_t queue_ts;    /* creation, or eviction time after a requeue */
	int64_t admitted_ns; /* quota reservation time */
	int64_t requeue_at;  /* BACKOFF until then */
	enum que_where where;
	bool namespace_eligible;
	bool sticky; /* preemptor waiting for its victims */
	/* Back from que_recheck_parked without a cause: the cycle admits or
	 * preempts for it, but reports no new pending status. */
	bool quiet;
	/* A workload slice replaced by another's admission
	 * (que_workload_replaced): it holds no usage any more, though it
	 * stays ADMITTED until it is removed. */
	bool replaced;
	uint32_t pending_hash; /* last reported pending status, 0 = none */
	uint32_t scratch;      /* per-cycle marks of admission/, 0 between */
	size_t heap_idx;       /* in the CQ heap or the backoff heap */
	struct que_wl *prev, *next; /* in a que_wlist */
	struct que_lq *lq;	    /* [borrowed] NULL when missing */
	struct que_cq *cq;	    /* [borrowed] NULL when not routable */
	uint32_t n_podsets;
	/* The caller's number for this record (0 until it sets one): the
	 * model never reads it; que_workload_remove hands a non-zero tag to
	 * the state's forget hook (que_set_forget_hook). It lives in what
	 * was padding. */
	uint32_t tag;
	struct que_podset *podsets;
	const char *replaces; /* que_workload_spec.replaces, "" when none */
};

/* ---- lifecycle ------------------------------------------------------ */

/* New empty state. *out [owned: que_state_free]. CU_ENOMEM. */
CU_MUST_CHECK int que_state_new(que_state **out, cu_error *err);
/* Frees everything, including every workload. NULL is a no-op. */
void que_state_free(que_state *st);

/* ---- configuration -------------------------------------------------- */

/*
 * Create or replace an object from its spec (borrowed; copied). A change
 * is applied lazily on the next que_rebuild(), which every reader below
 * calls for you. CU_EINVAL on a malformed spec (message names the field),
 * CU_ENOMEM.
 */
CU_MUST_CHECK int que_flavor_set(
    que_state *st, const struct que_flavor_spec *spec, cu_error *err);
CU_MUST_CHECK int que_cq_set(
    que_state *st, const struct que_cq_spec *spec, cu_error *err);
CU_MUST_CHECK int que_cohort_set(
    que_state *st, const struct que_cohort_spec *spec, cu_error *err);
CU_MUST_CHECK int que_lq_set(
    que_state *st, const struct que_lq_spec *spec, cu_error *err);

/* Mark an object absent. CU_ENOTFOUND if it does not exist. Admitted
 * workloads of a deleted CQ keep their quota until released (Kueue keeps
 * the CQ terminating until then). */
CU_MUST_CHECK int que_flavor_delete(
    que_state *st, const char *name, cu_error *err);
CU_MUST_CHECK int que_cq_delete(que_state *st, const char *name, cu_error *err);
/* The ClusterQueue name [borrowed] exists but its spec was refused, why
 * [borrowed; copied] (que_cq_set's message): it is inactive with reason
 * InvalidSpec until an accepted spec arrives, keeps the spec it had (its
 * admitted workloads keep their quota) or has none, and its pending
 * workloads say why. CU_ENOMEM. */
CU_MUST_CHECK int que_cq_refuse(
    que_state *st, const char *name, const char *why, cu_error *err);
/* The ClusterQueue name [borrowed] names admission checks that are
 * missing or not Active: it is inactive with reason [static] and cause
 * [borrowed; copied] (the part of Kueue's message about its checks,
 * "references missing AdmissionCheck(s): a,b", que_cq_active_message
 * adds it to the others); reason NULL: its checks are fine.
 * Unchanged values are a no-op; a ClusterQueue not known yet is not
 * created (CU_ENOTFOUND). CU_ENOMEM. */
CU_MUST_CHECK int que_cq_set_checks(que_state *st, const char *name,
    const char *reason, const char *message, cu_error *err);
/* Kueue's message for the Active condition of cq [borrowed] as of the
 * last rebuild: "Can admit new workloads", terminating, or "Can't admit
 * new workloads: " and every cause in Kueue's order (is stopped, missing
 * flavors, the checks' cause), joined by ", ", ending in ".". Returns a
 * new string [owned: cu_free], NULL when out of memory. */
char *que_cq_active_message(const que_state *st, const struct que_cq *cq);
CU_MUST_CHECK int que_cohort_delete(
    que_state *st, const char *name, cu_error *err);
CU_MUST_CHECK int que_lq_delete(
    que_state *st, const char *ns, const char *name, cu_error *err);

/* spec.fairSharing.weight of an existing Cohort or LocalQueue (set after
 * que_cohort_set / que_lq_set; those keep the weight): has = false is
 * Kueue's default of 1. CU_ENOTFOUND, CU_EINVAL (negative). */
CU_MUST_CHECK int que_cohort_set_fair_weight(
    que_state *st, const char *name, bool has, int64_t milli, cu_error *err);
CU_MUST_CHECK int que_lq_set_fair_weight(que_state *st, const char *ns,
    const char *name, bool has, int64_t milli, cu_error *err);

/* Admission fair sharing: the usage of LocalQueue ns/name (an input:
 * the caller samples and decays it, que_afs_*). A change re-orders the
 * pending heap of its ClusterQueue before that heap's next pop (one
 * O(n) heapify however many LocalQueues changed). CU_ENOTFOUND. */
CU_MUST_CHECK int que_lq_set_afs(que_state *st, const char *ns,
    const char *name, double usage, cu_error *err);

/* Admission fair sharing on (the Configuration has admissionFairSharing)
 * or off (the default): ClusterQueues whose spec opts in order their
 * heaps by LocalQueue usage only while it is on. */
void que_admission_fair_sharing_set(que_state *st, bool on);
bool que_admission_fair_sharing(const que_state *st);

/* Kueue's RecomputeAssignmentUponPreemptionTargetsOverlap (Beta, on by
 * default, and so in a new state): a head whose preemption targets
 * overlap an earlier head's in the same cycle is assigned again as if
 * those victims were gone (admission/cycle.c). */
void que_recompute_overlap_set(que_state *st, bool on);
bool que_recompute_overlap(const que_state *st);

/* Set the fair-sharing configuration cfg [borrowed; copied]. */
void que_fair_sharing_set(que_state *st, const struct que_fair_config *cfg);
/* [borrowed; valid until the next que_fair_sharing_set] */
const struct que_fair_config *que_fair_sharing(const que_state *st);

/* Apply pending configuration changes: link the cohort trees, detect
 * cycles, recompute subtree quotas, activity, routing of workloads. The
 * parked workloads of a ClusterQueue get another look only if its
 * activity, spec, flavors or the quotas of it and its cohorts changed
 * (setting an object to the spec it had is no cause).
 * CU_ENOMEM (the state stays consistent but the change is retried). */
CU_MUST_CHECK int que_rebuild(que_state *st, cu_error *err);

/* Lookups [borrowed; valid until que_state_free]; NULL if never seen or
 * currently absent. */
struct que_cq *que_cq_get(que_state *st, const char *name);
struct que_cohort *que_cohort_get(que_state *st, const char *name);
struct que_flavor *que_flavor_get(que_state *st, const char *name);
struct que_lq *que_lq_get(que_state *st, const char *ns, const char *name);
/* Whether ClusterQueue name [borrowed] is deleted but still holds quota
 * (its resource-in-use finalizer keeps it: Kueue's terminating). */
bool que_cq_terminating(que_state *st, const char *name);
/* Every CQ slot (including absent ones), for iteration. */
size_t que_cq_count(const que_state *st);
struct que_cq *que_cq_at(que_state *st, size_t i);

/* Interned names [borrowed; valid until que_state_free]. */
const char *que_resource_name(const que_state *st, uint32_t res);
/* Number of interned resource names (ids are 0 .. count-1). */
uint32_t que_resource_count(const que_state *st);
const struct que_flavor *que_flavor_by_id(const que_state *st, uint32_t id);
/* fr id of (flavor id, resource id), or UINT32_MAX if never interned. */
uint32_t que_fr_find(const que_state *st, uint32_t flavor, uint32_t res);
uint32_t que_fr_flavor(const que_state *st, uint32_t fr);
uint32_t que_fr_resource(const que_state *st, uint32_t fr);
uint32_t que_fr_count(const que_state *st);

/* ---- workloads ------------------------------------------------------ */

/* Queue a new pending workload. CU_EEXIST (uid known), CU_EINVAL,
 * CU_ENOMEM. queue_ts starts at created_ns. */
CU_MUST_CHECK int que_workload_add(
    que_state *st, const struct que_workload_spec *spec, cu_error *err);
/* Forget a workload in any state, releasing its quota (finished or
 * deleted). CU_ENOTFOUND. */
CU_MUST_CHECK int que_workload_remove(
    que_state *st, const char *uid, cu_error *err);
/* An ADMITTED/EVICTING workload's pods are gone after an eviction: release
 * its quota and requeue it with queue timestamp now_ns. CU_ENOTFOUND,
 * CU_EINVAL (not holding quota). */
CU_MUST_CHECK int que_workload_release(
    que_state *st, const char *uid, int64_t now_ns, cu_error *err);
/* Undo an admission whose API write failed: release the quota and put it
 * back in its heap with its old timestamp. CU_ENOTFOUND, CU_EINVAL. */
CU_MUST_CHECK int que_workload_unadmit(
    que_state *st, const char *uid, cu_error *err);
/* An eviction that did not reach the API (its write failed): the
 * EVICTING workload is ADMITTED again, so a later cycle may choose it as
 * a victim anew; its ClusterQueue's inadmissible workloads get another
 * look. CU_ENOTFOUND, CU_EINVAL (not EVICTING). */
CU_MUST_CHECK int que_workload_unevict(
    que_state *st, const char *uid, cu_error *err);
/* Restore a workload the API (or the ledger) shows as holding quota,
 * e.g. after a restart: move it from wherever it waits to ADMITTED in
 * ClusterQueue cq_name with frs (podset by podset, one fr id per request,
 * as for que_admit) [borrowed]. Quota limits are not checked: the
 * decision was made before. CU_ENOTFOUND (workload or CQ), CU_EINVAL
 * (already holding quota, bad fr). */
CU_MUST_CHECK int que_workload_adopt(que_state *st, const char *uid,
    const char *cq_name, const uint32_t *frs, int64_t admitted_ns,
    cu_error *err);
/* que_workload_adopt from a recorded admission: frs [borrowed] lists,
 * podset by podset, one fr per spec request and then, for a podset with
 * a pods slot, the fr of `pods` or UINT32_MAX when the admission has none
 * (the ClusterQueue did not cover pods then); counts [borrowed; NULL =
 * full] the admitted pods per podset. Same errors, and CU_EINVAL for a
 * count outside [0, full count]. */
CU_MUST_CHECK int que_workload_adopt_counts(que_state *st, const char *uid,
    const char *cq_name, const uint32_t *frs, const int32_t *counts,
    int64_t admitted_ns, cu_error *err);
/* An ADMITTED/EVICTING workload holds counts[i] pods of podset i
 * [borrowed] (e.g. adopted with que_workload_adopt from a recorded
 * partial admission): its usage follows. CU_ENOTFOUND, CU_EINVAL (not
 * holding quota, a count outside [0, full count]). */
CU_MUST_CHECK int que_workload_set_counts(
    que_state *st, const char *uid, const int32_t *counts, cu_error *err);
/* Keep a pending workload out of scheduling until requeue_at_ns
 * (requeueState.requeueAt). CU_ENOTFOUND, CU_EINVAL (holds quota). */
CU_MUST_CHECK int que_workload_backoff(
    que_state *st, const char *uid, int64_t requeue_at_ns, cu_error *err);
/* The caller re-evaluated the CQ namespaceSelector. CU_ENOTFOUND. */
CU_MUST_CHECK int que_workload_set_namespace_eligible(
    que_state *st, const char *uid, bool eligible, cu_error *err);
/* [borrowed; valid until the workload is removed]; NULL if unknown. */
struct que_wl *que_workload_get(que_state *st, const char *uid);
/* The workload added last under ns/name [borrowed, both] (a Workload
 * recreated under its name may be added before the old one is removed);
 * [borrowed; valid until it is removed]; NULL if none. */
struct que_wl *que_workload_by_name(
    que_state *st, const char *ns, const char *name);
/* Record the metadata.generation uid was added at (see struct que_wl).
 * CU_ENOTFOUND. */
CU_MUST_CHECK int que_workload_set_generation(
    que_state *st, const char *uid, int64_t generation, cu_error *err);
/* Called by que_workload_remove with the tag [a copy] of a record that
 * carries one (struct que_wl tag), before the record is freed, and
 * payload [borrowed]; never by que_state_free. */
typedef void (*que_forget_fn)(uint32_t tag, void *payload);
/* Install fn (NULL: none) with payload [borrowed; must outlive st or
 * the next call]. */
void que_set_forget_hook(que_state *st, que_forget_fn fn, void *payload);
/* The slice wl replaces (wl->replaces): ADMITTED in wl's ClusterQueue,
 * in wl's namespace and not replaced already; NULL when there is none. */
struct que_wl *que_replaced_slice(que_state *st, const struct que_wl *wl);
/* old's quota is taken over by the slice that replaces it (Kueue's
 * workload slice replacement): its usage is released at once and never
 * counted again; it stays ADMITTED until que_workload_remove. */
void que_workload_replaced(que_state *st, struct que_wl *old);
size_t que_workload_count(const que_state *st);
/* BLOCKED workloads: a circular list through ->next [borrowed; valid
 * until the next state change]; NULL when none. */
struct que_wl *que_blocked_head(que_state *st);

/* ---- used by the admission engine ----------------------------------- */

/* Heap order: sticky preemptor first (BestEffortFIFO), higher priority,
 * older queue timestamp, smaller UID. */
bool que_wl_before(const struct que_wl *a, const struct que_wl *b);
/* Heap order of a ClusterQueue with admission fair sharing (Kueue's
 * queueOrderingFunc): lower LocalQueue usage first, then que_wl_before. */
bool que_wl_before_afs(const struct que_wl *a, const struct que_wl *b);

/* ---- admission fair sharing arithmetic (queues/afs.c) ----------------- */

/* Kueue's decay rate over elapsed seconds with a half-life of half_life
 * seconds: 1 - 0.5^(elapsed/half_life); 0 when half_life is 0. */
double que_afs_alpha(double elapsed_s, double half_life_s);
/* One sample: consumed[i] = consumed[i] * (1 - alpha) + live[i] * alpha
 * for the n resources (Kueue's CalculateDecayedConsumed). Both [borrowed]. */
void que_afs_decay(double *consumed, const double *live, size_t n,
    double elapsed_s, double half_life_s);
/* Kueue's CalculateUsage: sum over the n resources of weight[i] *
 * (consumed[i] + penalty[i]) (weight NULL or penalty NULL: 1 and 0),
 * divided by the LocalQueue's weight; +Inf for a weight <= 0. Amounts in
 * the resource's base unit (cores, bytes). All [borrowed]. */
double que_afs_usage(const double *consumed, const double *penalty,
    const double *weight, size_t n, double lq_weight);

/*
 * Start a cycle at now_ns: expired backoffs and (after a capacity change)
 * inadmissible workloads go back to their heaps, then the best pending
 * workload of every active CQ is popped (state HEAD). *heads [borrowed;
 * valid until the next call]. Every head must be given back with
 * que_requeue or que_admit before the next call. CU_ENOMEM.
 */
CU_MUST_CHECK int que_pop_heads(que_state *st, int64_t now_ns,
    struct que_wl ***heads, size_t *n, cu_error *err);

enum que_requeue_reason {
	QUE_RQ_NO_FIT = 0,		/* assignment NoFit or inactive CQ */
	QUE_RQ_NAMESPACE_MISMATCH,	/* always parked as inadmissible */
	QUE_RQ_FAILED_AFTER_NOMINATION, /* no longer fits this cycle */
	QUE_RQ_PENDING_PREEMPTION,	/* waiting for its victims */
	QUE_RQ_NO_CANDIDATES,		/* preemption found no victims */
};

/*
 * The safety net: parked (inadmissible) workloads of every ClusterQueue
 * get another look in the next que_pop_heads, as if capacity had been
 * freed, but quietly: nothing caused it, so a workload that still cannot
 * go ahead keeps the pending status it reported (Kueue re-evaluates
 * parked workloads only on changes to their cohort, queues, flavors or
 * freed quota). A real cause before it is evaluated makes it loud again.
 * Returns true when some ClusterQueue has parked workloads.
 */
bool que_recheck_parked(que_state *st);

/* Give a HEAD back: StrictFIFO puts it back in the heap (it keeps
 * blocking) except on a namespace mismatch; BestEffortFIFO parks it as
 * inadmissible unless the reason asks for an immediate retry. */
void que_requeue(que_state *st, struct que_wl *wl, enum que_requeue_reason why);

/* Admit a HEAD: frs holds, podset by podset, one fr id per request (the
 * flavor chosen for that resource) [borrowed]. Adds its usage. */
void que_admit(
    que_state *st, struct que_wl *wl, const uint32_t *frs, int64_t now_ns);

/* que_admit with counts[i] pods admitted in podset i (partial admission;
 * min_count <= counts[i] <= full_count; NULL = full counts): totals and
 * usage follow the counts until the quota is released. */
void que_admit_counts(que_state *st, struct que_wl *wl, const uint32_t *frs,
    const int32_t *counts, int64_t now_ns);

/* An ADMITTED workload was chosen as a preemption victim: it keeps its
 * quota until que_workload_release, and is never chosen twice. */
void que_mark_evicting(que_state *st, struct que_wl *wl);

/* Quota arithmetic on one node for one fr (Kueue's resource_node.go). */
int64_t que_node_local_quota(const struct que_node *n, uint32_t fr);
int64_t que_node_local_available(const struct que_node *n, uint32_t fr);
int64_t que_node_available(const struct que_node *n, uint32_t fr);
int64_t que_node_potential_available(const struct que_node *n, uint32_t fr);
int64_t que_node_usage(const struct que_node *n, uint32_t fr);
int64_t que_node_subtree(const struct que_node *n, uint32_t fr);
const struct que_quota *que_node_quota(const struct que_node *n, uint32_t fr);
/* usage + v would exceed the subtree quota. */
bool que_node_borrowing_with(const struct que_node *n, uint32_t fr, int64_t v);
/* Height of a node: 0 for a CQ, 1 + deepest child cohort for a cohort. */
int que_cohort_height(const struct que_cohort *c);
/* Temporary usage changes for simulations; every add must be matched by
 * a remove of the same amount before the cycle ends. */
void que_node_add_usage(struct que_node *n, uint32_t fr, int64_t v);
void que_node_remove_usage(struct que_node *n, uint32_t fr, int64_t v);
/* Add or remove a workload's whole assigned usage (simulation). */
void que_wl_add_usage(struct que_wl *wl);
void que_wl_remove_usage(struct que_wl *wl);

/* ---- recorded decisions after a restart (refit.c) -------------------- */

/* What becomes of an admission the ledger recorded but the API never
 * showed, checked against the state the API shows now. */
enum que_refit {
	QUE_REFIT_FITS = 0, /* still valid and fits: que_workload_adopt it */
	QUE_REFIT_GONE,	    /* no Workload with that UID (deleted, or
			     * re-created under a new UID) */
	QUE_REFIT_INACTIVE, /* spec.active is false */
	QUE_REFIT_CHANGED,  /* generation or requests differ from the
			     * recorded ones */
	QUE_REFIT_HOLDS,    /* it already holds quota (the API shows it
			     * admitted): nothing to announce */
	QUE_REFIT_QUEUE,    /* its ClusterQueue is missing or inactive, or
			     * it is no longer routed there */
	QUE_REFIT_FLAVORS,  /* a recorded flavor is missing or no longer
			     * offered by the ClusterQueue for its resource */
	QUE_REFIT_QUOTA,    /* the ClusterQueue and its cohort cannot hold
			     * the usage on top of what is held already */
};

/* The recorded decision, as the caller resolved it against the model. */
struct que_recorded {
	const char *uid;	   /* [borrowed] */
	const char *cluster_queue; /* [borrowed] as recorded */
	int64_t generation; /* recorded metadata.generation; 0 = unknown */
	/* Per request of the Workload, podset by podset (as for
	 * que_workload_adopt): the recorded flavor's fr id (UINT32_MAX when
	 * the flavor is unknown) and the recorded usage of the podset for
	 * that resource, in milli-units. [borrowed], n entries each. */
	const uint32_t *frs;
	const int64_t *usage;
	size_t n;
};

/* The API's view of the Workload now. */
struct que_observed {
	int64_t generation; /* metadata.generation; 0 = unknown */
	bool active;	    /* spec.active is not false */
};

/*
 * Would the recorded admission rec [borrowed] still be made, given the
 * Workload now [borrowed] and every usage the model holds (the Workloads
 * the API shows admitted must have been adopted first)? Checks, in order:
 * the Workload exists and holds no quota, is active, has the recorded
 * generation (when both are known) and requests, is routed to an active
 * ClusterQueue of that name, every flavor exists and is offered by it for
 * its resource, and its usage per flavor and resource is at most what the
 * ClusterQueue may still use (que_node_available: nominal quota, cohort,
 * borrowing and lending limits). Pure: nothing changes but a pending
 * rebuild. *out gets the verdict; why [may be NULL] gets a one-line
 * reason ("" when it fits), truncated to why_len. CU_ENOMEM (rebuild).
 */
CU_MUST_CHECK int que_workload_fits_recorded(que_state *st,
    const struct que_recorded *rec, const struct que_observed *now,
    enum que_refit *out, char *why, size_t why_len, cu_error *err);

/* Static lower-case name of a verdict ("fits", "quota"); "unknown" if out
 * of range. */
const char *que_refit_name(enum que_refit r);

/* ---- pending Workloads in queue order (queues/pending.c) ------------ */

/*
 * Kueue's visibility API (visibility.kueue.x-k8s.io pendingworkloads):
 * the pending Workloads of a ClusterQueue - its heap, its parked
 * (inadmissible) Workloads and those backing off - in the order its
 * scheduler would take them (its heap's order: que_wl_before, or
 * que_wl_before_afs with admission fair sharing), each with its position
 * in the ClusterQueue and in its LocalQueue (from 0). The heap is walked in
 * place: O(k log k) for the k Workloads up to the page's end, plus
 * O(parked + backing-off) for the unordered ones.
 */
struct que_pending_item {
	const struct que_wl *wl; /* [borrowed; valid until the next state
				    change] */
	int32_t pos_cq;		 /* positionInClusterQueue */
	int32_t pos_lq;		 /* positionInLocalQueue */
};

/* Kueue's bounds: limit is clamped to [0, this], offset to >= 0. */
#define QUE_PENDING_MAX_LIMIT 100000
/* Kueue's default limit (the caller applies it to an absent or 0 one). */
#define QUE_PENDING_DEFAULT_LIMIT 1000

/*
 * Items offset .. offset+limit-1 of ClusterQueue cq_name [borrowed]
 * (positions in LocalQueues count every Workload before the page) into
 * *out [owned: cu_free; NULL when *n is 0]. CU_ENOTFOUND when the
 * ClusterQueue does not exist; CU_ENOMEM.
 */
CU_MUST_CHECK int que_pending_cq(que_state *st, const char *cq_name,
    int64_t offset, int64_t limit, struct que_pending_item **out, size_t *n,
    cu_error *err);

/*
 * The same for LocalQueue ns/name [borrowed]: its own Workloads in its
 * ClusterQueue's order, skipping the first offset of them; pos_cq is the
 * position among all of the ClusterQueue's, pos_lq offset + the index in
 * the page. CU_ENOTFOUND when the LocalQueue does not exist; none when
 * its ClusterQueue does not. CU_ENOMEM.
 */
CU_MUST_CHECK int que_pending_lq(que_state *st, const char *ns,
    const char *name, int64_t offset, int64_t limit,
    struct que_pending_item **out, size_t *n, cu_error *err);

/*
 * Every pending Workload of cq [borrowed], in no order: fn(wl, heap,
 * payload) with heap true for one in its heap (PENDING), false for one
 * parked (INADMISSIBLE) or backing off (BACKOFF). O(heap + parked +
 * state-wide backoffs). fn must not change the state.
 */
void que_pending_visit(const que_state *st, const struct que_cq *cq,
    void (*fn)(const struct que_wl *wl, bool heap, void *payload),
    void *payload);

/* ---- scheduling equivalence hashes (queues/hashes.c) ------------------ */

/* wl's shape [borrowed]: equal for Workloads asking for the same thing
 * (podSets' names, counts, minCount, per-pod requests, node selectors,
 * tolerations, required affinity; priority). */
uint64_t que_wl_shape_hash(const que_state *st, const struct que_wl *wl);

/* Distinct shapes among cq's [borrowed] pending Workloads: *active in its
 * heap (none while cq is inactive), *inadmissible parked, backing off,
 * and the heap of an inactive cq (Kueue's kueue_pending_scheduling_hashes).
 * CU_ENOMEM. */
CU_MUST_CHECK int que_cq_scheduling_hashes(que_state *st,
    const struct que_cq *cq, size_t *active, size_t *inadmissible,
    cu_error *err);

/* ---- the Configuration's `resources` (queues/resources.c) ------------- */

/* resources.quotaCheckStrategy: BlockUndeclared (Kueue's default) makes a
 * requested resource no resource group of the ClusterQueue covers a
 * NoMatchingFlavor; IgnoreUndeclared skips it (never charged). */
enum que_quota_check {
	QUE_BLOCK_UNDECLARED = 0,
	QUE_IGNORE_UNDECLARED,
};

/* One resources.transformations entry. */
struct que_transform {
	const char *input;	 /* [borrowed] */
	bool replace;		 /* strategy Replace; false: Retain */
	const char *multiply_by; /* [borrowed] NULL: none */
	/* [borrowed] per output: milli-units of it per unit of input
	 * (may be negative: an allowance) */
	const struct que_request *outputs;
	size_t n_outputs;
};

struct que_resources_spec {
	const char *const *exclude_prefixes; /* [borrowed] */
	size_t n_exclude;
	const struct que_transform *transforms; /* [borrowed] inputs unique */
	size_t n_transforms;
	enum que_quota_check quota_check;
};

/* Set spec [borrowed; copied] for the workloads added from now on (Kueue
 * reads it once at start-up). CU_EINVAL (an empty input), CU_ENOMEM. */
CU_MUST_CHECK int que_resources_set(
    que_state *st, const struct que_resources_spec *spec, cu_error *err);

/*
 * The per-pod requests in[0..n) [borrowed] of one podSet as quota counts
 * them: excluded prefixes dropped, then transformations applied (outputs
 * summed per name, a negative sum counted as 0). *out [owned: cu_free]
 * holds *n_out requests whose names are borrowed from in or from st (valid
 * until the next que_resources_set). Without resources set, a copy of in.
 * CU_ENOMEM.
 */
CU_MUST_CHECK int que_resources_apply(const que_state *st,
    const struct que_request *in, size_t n, struct que_request **out,
    size_t *n_out, cu_error *err);

/* quotaCheckStrategy is IgnoreUndeclared. */
bool que_resources_ignore_undeclared(const que_state *st);

/* ---- topology-aware scheduling hook (queues/tas_hook.c) -------------- */

/*
 * Set by the caller while a TAS flavor exists; without one (the default)
 * the cycle pays one NULL test per flavor. The engine stays pure: the
 * hook answers from state the caller keeps (tas/), not from I/O.
 *   check: while flavors are assigned, may podSet `podset` of wl run
 *     `count` pods in flavor f? 0 yes (or not a TAS podSet/flavor), 1 no
 *     for lack of topology capacity, 2 no because the flavor cannot serve
 *     the request at all (not a TAS flavor, no such level: Kueue's
 *     NoMatchingFlavor), each
 *     with msg (NUL-terminated, truncated to len) saying why.
 *   assume: when wl is admitted with flavors[i] (the flavor name of
 *     podSet i, NULL if it has none) and counts[i] pods: place and
 *     charge every TAS podSet; 0 done, 1 refused (nothing charged; msg
 *     set): wl stays pending. The caller releases the charge when the
 *     admission is undone (que_workload_unadmit), evicted or finished.
 *   check_without (optional; NULL: topology capacity is never freed by
 *     preemption): as check, with the topology usage of the admitted
 *     Workloads gone[0..n_gone) [borrowed] taken away first (and given
 *     back before it returns), or with `empty` the usage of every
 *     admitted Workload (Kueue's simulateEmpty: only capacity that
 *     preemption could free counts). The flavor assigner asks it with
 *     `empty` when check said no, to decide between Preempt and NoFit;
 *     the preemption search asks it with the candidates it removed.
 */
struct que_tas_hook {
	void *ctx; /* [borrowed] passed back to all */
	int (*check)(void *ctx, const struct que_wl *wl, size_t podset,
	    const struct que_flavor *f, int32_t count, char *msg, size_t len);
	int (*assume)(void *ctx, const struct que_wl *wl,
	    const char *const *flavors, const int32_t *counts, char *msg,
	    size_t len);
	int (*check_without)(void *ctx, const struct que_wl *wl, size_t podset,
	    const struct que_flavor *f, int32_t count,
	    const struct que_wl *const *gone, size_t n_gone, bool empty,
	    char *msg, size_t len);
};

/* h [borrowed; must stay valid until replaced or st is freed], or NULL
 * to remove it. */
void que_set_tas_hook(que_state *st, const struct que_tas_hook *h);
/* The hook [borrowed] or NULL. */
const struct que_tas_hook *que_tas_hook(const que_state *st);
/* Topology capacity was freed (a Node added or made schedulable, a pod
 * gone, an assignment released): inadmissible workloads of every
 * ClusterQueue get another look at the next cycle. */
void que_tas_capacity_changed(que_state *st);

/* ---- checking ------------------------------------------------------- */

/* Verify invariants 1-4 above. CU_OK, or CU_ERANGE / CU_EINVAL with a
 * message naming the first violation. Call between cycles. */
CU_MUST_CHECK int que_check_invariants(que_state *st, cu_error *err);

/* Invariants 1, 2 and 4 only: what must hold whatever the configuration
 * did (invariant 3 breaks on purpose when a quota is lowered under existing
 * usage). The controller checks it after every loop turn in debug, ASan and
 * coverage builds (CUEUE_CHECK_INVARIANTS). */
CU_MUST_CHECK int que_check_structure(que_state *st, cu_error *err);

#endif /* CU_QUEUES_QUEUES_H */
