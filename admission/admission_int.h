/* SPDX-License-Identifier: Apache-2.0 */
/*
 * admission/admission_int.h - internals shared by the files of the
 * admission engine (flavor assignment, preemption planning, the cycle).
 * Never included from another folder.
 */
#ifndef CU_ADMISSION_ADMISSION_INT_H
#define CU_ADMISSION_ADMISSION_INT_H

#include "admission/admission.h"

/* How a flavor (or a workload) could be assigned, worst first; the order
 * is the one Kueue ranks them in. */
enum adm_mode {
	ADM_MODE_NOFIT = 0,
	ADM_MODE_NO_CANDIDATES,
	ADM_MODE_PREEMPT,
	ADM_MODE_RECLAIM,
	ADM_MODE_FIT,
};

/* podSets per Workload (the API's and que_workload_add's limit). */
#define ADM_MAX_PODSETS 18

struct adm_fr_amount {
	uint32_t fr;
	int64_t v;
};

struct adm_target {
	struct que_wl *wl; /* [borrowed] */
	enum adm_preempt_reason reason;
};

struct adm_targets {
	struct adm_target *v; /* owned */
	size_t n, cap;
};

struct adm_assignment {
	enum adm_mode mode; /* worst over podsets */
	int borrow;	    /* highest borrowing level over podsets */
	uint32_t *frs;	    /* owned; per request, UINT32_MAX = none */
	int32_t counts[ADM_MAX_PODSETS]; /* pods per podset assigned */
	uint8_t *req_mode;		 /* owned; per request, an adm_mode */
	struct adm_fr_amount *usage;	 /* owned; summed per fr */
	size_t n_usage;
	enum adm_reason reason; /* when mode is NOFIT */
	cu_buf msg;		/* Kueue's assignment message */
};

/* Assign flavors to every podset of wl in cq, for counts[i] pods in
 * podset i (NULL = the full counts; partial admission probes fewer).
 * CU_ENOMEM. */
CU_MUST_CHECK int adm_assign_flavors(que_state *st, struct que_cq *cq,
    struct que_wl *wl, const int32_t *counts, struct adm_assignment *a,
    cu_error *err);
void adm_assignment_dispose(struct adm_assignment *a);

/* ---- topology-aware scheduling in the preemption search (tas.c) ------ */

/*
 * The TAS podSets of a preemptor, for Kueue's workloadFits: with the
 * candidates removed so far, every podSet must also be placed in its
 * flavor's topology (the hook's check_without). Built from an
 * assignment; without a hook (or without check_without) it checks
 * nothing, so the classical path pays one NULL test per fits.
 */
struct adm_tas_fit {
	const struct que_tas_hook *h; /* [borrowed] NULL: no topology check */
	const struct que_wl *wl;      /* [borrowed] the preemptor */
	const struct que_flavor *flv[ADM_MAX_PODSETS]; /* [borrowed] or NULL */
	int32_t counts[ADM_MAX_PODSETS];
	size_t n;
	const struct que_wl **gone; /* [owned] scratch */
	size_t cap_gone;
};

/* Fill f for wl [borrowed] admitted as a [borrowed] (each podSet with
 * the flavor of its first assigned request and a->counts). */
void adm_tas_fit_init(que_state *st, const struct que_wl *wl,
    const struct adm_assignment *a, struct adm_tas_fit *f);
void adm_tas_fit_dispose(struct adm_tas_fit *f);
/* Does every podSet of f fit its topology with the usage of t->v[i].wl
 * released, for every i < t->n but `skip` (SIZE_MAX: none)? true when f
 * (or f->h) is NULL. An allocation failure answers false. */
bool adm_tas_fits(
    struct adm_tas_fit *f, const struct adm_targets *t, size_t skip);

/*
 * Kueue's classical preemption: the minimal set of workloads to evict so
 * that `req` fits in cq, considering only workloads that use one of the
 * frs in `need`; with tas [borrowed, may be NULL] the preemptor must also
 * fit its topology without them. out is reset first; empty when
 * impossible. CU_ENOMEM.
 */
CU_MUST_CHECK int adm_find_targets(que_state *st, struct que_cq *cq,
    struct que_wl *wl, const struct adm_fr_amount *req, size_t n_req,
    const uint32_t *need, size_t n_need, struct adm_tas_fit *tas,
    struct adm_targets *out, cu_error *err);
void adm_targets_dispose(struct adm_targets *t);

/* Lowest cohort height at which usage val of fr fits (0 = no
 * borrowing); *may_reclaim when that subtree is not the whole tree. */
int adm_borrow_level(
    const struct que_cq *cq, uint32_t fr, int64_t val, bool *may_reclaim);

/* Does preemption policy p let pre [borrowed] preempt cand [borrowed]
 * (priority, then newer queue time for the equal-priority policy)? */
bool adm_policy_allows(enum que_preempt_policy p, const struct que_wl *pre,
    const struct que_wl *cand);

/* Does wl [borrowed] request any of the frs need[0..n)? */
bool adm_uses_any(const struct que_wl *wl, const uint32_t *need, size_t n);

/* Grow an array of elem-sized items to hold at least need. CU_ENOMEM. */

/* Hash of a pending status, never 0 (0 means "nothing reported"). */
uint32_t adm_status_hash(enum adm_reason reason, const char *msg);

/* ---- fair sharing (fairshare.c) ---------------------------------------- */

/* The DRS of n with usage req [n_req entries, borrowed] added. */
void adm_drs_with(const que_state *st, const struct que_node *n,
    const struct adm_fr_amount *req, size_t n_req, struct adm_drs *out);

/* A candidate of the fair-sharing iterator: the head of cq with the
 * usage its assignment would add. All [borrowed]. */
struct adm_fs_cand {
	struct que_cq *cq;
	const struct adm_fr_amount *usage;
	size_t n_usage;
	int32_t priority;
	int64_t queue_ts;
};

/*
 * Kueue's fair-sharing iterator: which of the remaining candidates c[0..n)
 * (in the classical order) to process next. c[0] without a cohort goes
 * first; otherwise a tournament over c[0]'s cohort tree picks, at every
 * cohort, the child whose share is lowest with its candidate admitted
 * (not borrowing on the requested flavors first, then share, priority,
 * queue timestamp, position). Simulated usage is undone before it
 * returns. *out: an index into c. CU_ENOMEM.
 */
CU_MUST_CHECK int adm_fair_next(que_state *st, const struct adm_fs_cand *c,
    size_t n, size_t *out, cu_error *err);

/* The same for a whole cycle: adm_fs_iter_new over the candidates c
 * [borrowed until adm_fs_iter_free] (marks their ClusterQueues), then
 * adm_fs_iter_next for the index to process next (SIZE_MAX when every
 * one is taken) and adm_fs_iter_done once it is processed (its usage may
 * have changed the shares on its path). CU_ENOMEM. */
struct adm_fs_iter;
CU_MUST_CHECK int adm_fs_iter_new(que_state *st, const struct adm_fs_cand *c,
    size_t n, struct adm_fs_iter **out, cu_error *err);
CU_MUST_CHECK int adm_fs_iter_next(
    struct adm_fs_iter *it, size_t *out, cu_error *err);
void adm_fs_iter_done(struct adm_fs_iter *it, size_t k);
/* Clears the marks and frees it [owned]; NULL is a no-op. */
void adm_fs_iter_free(struct adm_fs_iter *it);

/*
 * Kueue's fair-sharing preemption (adm_find_targets' contract): candidates
 * in cq (withinClusterQueue) and in the ClusterQueues of its cohort tree
 * that borrow on need (reclaimWithinCohort), ordered as Kueue orders them;
 * target ClusterQueues taken down the tree by highest share, victims
 * admitted by the configured strategies (LessThanOrEqualToFinalShare:
 * the preemptor's share with its workload at most the target's after the
 * removal; LessThanInitialShare: below the target's before), shares taken
 * at the children of the least common ancestor; a preemptor within its
 * nominal quota reclaims without the strategies; fill back at the end.
 * Reason InCohortFairSharing (InClusterQueue, InCohortReclamation as
 * Kueue). CU_ENOMEM.
 */
CU_MUST_CHECK int adm_fair_find_targets(que_state *st, struct que_cq *cq,
    struct que_wl *wl, const struct adm_fr_amount *req, size_t n_req,
    const uint32_t *need, size_t n_need, struct adm_tas_fit *tas,
    struct adm_targets *out, cu_error *err);

#endif /* CU_ADMISSION_ADMISSION_INT_H */
