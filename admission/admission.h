/* SPDX-License-Identifier: Apache-2.0 */
/*
 * admission/admission.h - the admission engine: one scheduling cycle as
 * Kueue runs it (heads of every active ClusterQueue, flavor assignment
 * with fungibility, quota fit with borrowing and lending, classical
 * preemption with a minimal victim set, several admissions per cycle
 * without over-admission) and the pending reasons and messages Kueue
 * writes to the QuotaReserved condition.
 *
 * Pure logic over queues/: no I/O, no clock reads. The cycle applies its
 * own decisions to the queue state (admissions are assumed, victims are
 * marked evicting) so the next cycle sees them; the caller persists and
 * announces the decisions, and calls que_workload_unadmit() if an
 * admission write fails. Event-loop thread only. Prefix: adm_ / ADM_.
 *
 * Design notes
 * ------------
 * One cycle (adm_cycle):
 *   pop heads ──> report blocked workloads (root cause first)
 *            ──> nominate: namespace gate, flavor assignment, targets;
		when neither fits, partial admission (podSet minCount):
		the largest counts that fit or can preempt
 *            ──> order: no borrowing first, priority, queue timestamp
 *            ──> process: NoFit | no candidates | overlap | no longer
 *                fits | preempt | admit
 *            ──> undo the cycle's reservations
 * Invariants:
 *  1. A cycle never leaves a head un-returned and never leaves simulated
 *     usage behind: after adm_cycle the state's usage is exactly that of
 *     its ADMITTED and EVICTING workloads.
 *  2. An admission happens only if the workload fits after every earlier
 *     decision of the same cycle (no over-admission).
 *  3. A workload is named as a victim at most once (it becomes EVICTING,
 *     and only ADMITTED workloads are named).
 *  4. A pending decision is emitted only when a workload's (reason,
 *     message) changes, so unchanged status is never rewritten.
 */
#ifndef CU_ADMISSION_ADMISSION_H
#define CU_ADMISSION_ADMISSION_H

#include <stddef.h>
#include <stdint.h>

#include "lib/cu.h"
#include "queues/queues.h"

enum adm_kind {
	ADM_ADMIT = 0, /* QuotaReserved=True */
	ADM_PREEMPT,   /* evict victims; the preemptor stays pending */
	ADM_PENDING,   /* QuotaReserved=False with reason and message */
};

/* QuotaReserved=False reasons (UnadmittedWorkloadsObservability). */
enum adm_reason {
	ADM_REASON_NONE = 0,
	ADM_REASON_WAITING_FOR_QUOTA,
	ADM_REASON_NO_MATCHING_FLAVOR,
	ADM_REASON_EXCEEDS_MAX_QUOTA,
	ADM_REASON_MISCONFIGURED,
	ADM_REASON_SUSPENDED,
	ADM_REASON_WAITING_FOR_PREEMPTED_WORKLOADS,
	/* the topology has no room even with every Workload gone */
	ADM_REASON_TOPOLOGY_PLACEMENT_FAILED,
};

/* Preempted condition reasons. */
enum adm_preempt_reason {
	ADM_IN_CLUSTER_QUEUE = 0,
	ADM_IN_COHORT_RECLAMATION,
	ADM_IN_COHORT_RECLAIM_WHILE_BORROWING,
	ADM_IN_COHORT_FAIR_SHARING,
};

/* Kueue's spelling: "WaitingForQuota", "InCohortReclamation", ...
 * [static]. */
const char *adm_reason_string(enum adm_reason r);
const char *adm_preempt_reason_string(enum adm_preempt_reason r);

/*
 * Print a milli-unit quantity the way Kubernetes prints a canonical
 * Quantity, as Kueue's resource formatter: "500m", "1", "1500m", "2k";
 * memory-like resources ("memory", "ephemeral-storage", "hugepages-*")
 * and those of adm_binary_resources_set in binary suffixes ("1Gi") when
 * the value is a whole multiple of 1024. snprintf contract; returns the
 * length needed. resource [borrowed].
 */
size_t adm_format_quantity(
    const char *resource, int64_t milli, char *buf, size_t n);

/*
 * The resources adm_format_quantity prints in binary suffixes besides the
 * memory-like ones, as Kueue's resource formatter registers them: the
 * quota resources of DRA mappings with counter or capacity sources. names
 * [borrowed: valid until the next call]; NULL, 0: none. Set once at start,
 * before any formatting.
 */
void adm_binary_resources_set(const char *const *names, size_t n);

/*
 * Kueue's path of a ClusterQueue in preemption messages: "/<root
 * cohort>/.../<parent cohort>/<cq>", "/<cq>" without a cohort. snprintf
 * contract (truncated, terminated); returns the length needed. cq
 * [borrowed].
 */
size_t adm_cq_path(const struct que_cq *cq, char *buf, size_t n);

struct adm_flavor_use {
	const char *resource; /* [borrowed; valid until que_state_free] */
	const char *flavor;   /* [borrowed; valid until que_state_free] */
	int64_t usage;	      /* milli-units for the whole podset */
};

struct adm_podset_assignment {
	const char *name; /* [borrowed; valid until the workload is removed] */
	int32_t count;
	struct adm_flavor_use *uses; /* owned by the result */
	size_t n_uses;
	/* topologyAssignment (Kueue v1beta2 wire form) [borrowed; set by the
	 * controller after the cycle] or NULL: written with the admission. */
	const struct json_t *topology;
};

struct adm_victim {
	const char *uid;	   /* [borrowed; valid until removed] */
	const char *cluster_queue; /* [borrowed; valid until que_state_free] */
	enum adm_preempt_reason reason;
};

struct adm_decision {
	enum adm_kind kind;
	const char *uid; /* [borrowed; valid until the workload is removed] */
	const char *cluster_queue; /* [borrowed]; NULL when unrouted */
	/* ADM_ADMIT */
	struct adm_podset_assignment *podsets; /* owned by the result */
	size_t n_podsets;
	/* ADM_ADMIT of a workload slice: the uid [borrowed] of the slice it
	 * replaces (que_replaced_slice), whose usage was counted as freed
	 * for this admission and released (que_workload_replaced); NULL when
	 * none. */
	const char *replaced_uid;
	/* ADM_PREEMPT: the victims newly chosen in this cycle */
	struct adm_victim *victims; /* owned by the result */
	size_t n_victims;
	/* ADM_PENDING, and ADM_PREEMPT (the preemptor's own status) */
	enum adm_reason reason;
	char *message; /* owned by the result; NULL for ADM_ADMIT */
};

struct adm_result {
	struct adm_decision *v; /* owned */
	size_t n, cap;
	size_t heads;	 /* heads considered this cycle */
	size_t admitted; /* ADM_ADMIT decisions */
	/* The ClusterQueue [borrowed; valid until que_state_free] of each
	 * head that had preemption targets but was skipped: its targets
	 * overlap an earlier head's, or it no longer fits (Kueue's
	 * kueue_admission_cycle_preemption_skips). Owned array. */
	const char **skipped;
	size_t n_skipped, cap_skipped;
	/* Kueue's RecomputeAssignmentUponPreemptionTargetsOverlap: each
	 * head whose targets overlapped an earlier head's was assigned again
	 * as if those victims were gone (que_recompute_overlap_set); its
	 * ClusterQueue [borrowed] and the outcome, "deferred_fit",
	 * "new_targets" or "skipped" [static]
	 * (kueue_preemption_target_recomputations_total). Owned array. */
	struct adm_recompute {
		const char *cluster_queue;
		const char *result;
	} * recomputed;
	size_t n_recomputed, cap_recomputed;
};

void adm_result_init(struct adm_result *r);
/* Frees the decisions; r is reusable after adm_result_init. */
void adm_result_dispose(struct adm_result *r);

/* ---- fair sharing (admission/fairshare.c) ---------------------------- */

/* Kueue's dominant resource share of a ClusterQueue or Cohort node. */
struct adm_drs {
	int64_t weight;	   /* fairSharing.weight, milli-units */
	double ratio;	   /* unweighted: per mille of what it may borrow */
	uint32_t dominant; /* resource id of the ratio; UINT32_MAX = none */
	bool borrowing;	   /* uses more than its subtree quota somewhere */
};

/* The DRS of node n [borrowed] with its current usage. */
void adm_drs_of(
    const que_state *st, const struct que_node *n, struct adm_drs *out);
/* The weighted share: 0 when not borrowing, +Inf for a borrowing node of
 * weight 0, else ratio / weight (Kueue's PreciseWeightedShare; the
 * kueue_*_weighted_share metrics report it, +Inf as NaN). */
double adm_drs_share(const struct adm_drs *d);
/* status.fairSharing.weightedShare: the share rounded up, INT64_MAX for
 * +Inf. */
int64_t adm_drs_rounded(const struct adm_drs *d);
/* Kueue's CompareDRS: < 0 when a should be scheduled before b (and b
 * preempted from before a). Borrowing nodes of weight 0 come last. */
int adm_drs_cmp(const struct adm_drs *a, const struct adm_drs *b);

/*
 * Run one scheduling cycle at now_ns and append its decisions to out
 * (caller-initialized). The queue state is updated as described above.
 * CU_ENOMEM: the cycle is abandoned with every head returned and no
 * simulated usage left (invariant 1); decisions already appended stand.
 */
CU_MUST_CHECK int adm_cycle(
    que_state *st, int64_t now_ns, struct adm_result *out, cu_error *err);

#endif /* CU_ADMISSION_ADMISSION_H */
