/* SPDX-License-Identifier: Apache-2.0 */
/*
 * admission/preempt.c - classical preemption planning (Kueue's
 * preemption.go and classical/): collect candidates (same CQ per
 * withinClusterQueue; other CQs of the cohort tree that exceed their
 * nominal quota per reclaimWithinCohort, with a hierarchical advantage
 * when the preemptor fits in a subtree they borrow from, and
 * borrowWithinCohort with maxPriorityThreshold), order them, remove them
 * greedily until the preemptor fits, then add back every victim that is
 * not needed, in reverse order. With topology-aware scheduling the
 * preemptor fits only when its TAS podSets are also placed with the
 * removed candidates' topology usage released (Kueue's workloadFits).
 * The search works on the live usage and restores it before returning.
 */
#include <stdlib.h>
#include <string.h>

#include "admission/admission_int.h"

enum variant {
	V_WITHIN_CQ = 0,
	V_HIERARCHICAL,	       /* preemptor has a claim on the subtree */
	V_RECLAIM_NO_BORROW,   /* only if the preemptor won't borrow */
	V_RECLAIM_WHILE_BORROW /* borrowWithinCohort allows it */
};

struct cand {
	struct que_wl *wl;
	const struct que_cohort *lca; /* subtree root it was found from */
	enum variant v;
	bool other; /* in another CQ than the preemptor's */
};

struct cands {
	struct cand *v;
	size_t n, cap;
};

struct ctx {
	struct que_cq *cq;
	struct que_wl *wl;
	const struct adm_fr_amount *req;
	size_t n_req;
	const uint32_t *need;
	size_t n_need;
	struct adm_tas_fit *tas; /* NULL: no topology check */
};

bool adm_uses_any(const struct que_wl *wl, const uint32_t *need, size_t n)
{
	uint32_t i, j;
	size_t k;

	if (wl->replaced)
		return false; /* a replaced slice holds nothing to preempt */
	for (i = 0; i < wl->n_podsets; i++)
		for (j = 0; j < wl->podsets[i].n_req; j++)
			for (k = 0; k < n; k++)
				if (wl->podsets[i].fr[j] == need[k])
					return true;
	return false;
}

static bool within_nominal(const struct ctx *c, const struct que_node *n)
{
	size_t k;

	for (k = 0; k < c->n_need; k++)
		if (que_node_subtree(n, c->need[k]) <
		    que_node_usage(n, c->need[k]))
			return false;
	return true;
}

bool adm_policy_allows(enum que_preempt_policy p, const struct que_wl *pre,
    const struct que_wl *cand)
{
	switch (p) {
	case QUE_PREEMPT_NEVER:
		return false;
	case QUE_PREEMPT_LOWER_PRIORITY:
		return cand->priority < pre->priority;
	case QUE_PREEMPT_LOWER_OR_NEWER_EQUAL_PRIORITY:
		return cand->priority < pre->priority ||
		       (cand->priority == pre->priority &&
			   cand->queue_ts > pre->queue_ts);
	case QUE_PREEMPT_ANY:
		return true;
	}
	return false;
}

static bool classify(const struct ctx *c, const struct que_wl *cand,
    bool advantage, enum variant *out)
{
	const struct que_preemption *p = &c->cq->preemption;
	bool same = cand->cq == c->cq;

	if (!adm_uses_any(cand, c->need, c->n_need))
		return false;
	if (!adm_policy_allows(
		same ? p->within_cluster_queue : p->reclaim_within_cohort,
		c->wl, cand))
		return false;
	if (same)
		*out = V_WITHIN_CQ;
	else if (advantage)
		*out = V_HIERARCHICAL;
	else if (p->borrow_within_cohort == QUE_PREEMPT_NEVER)
		*out = V_RECLAIM_NO_BORROW;
	else if (cand->priority >= c->wl->priority ||
		 (p->has_max_priority_threshold &&
		     cand->priority > p->max_priority_threshold))
		/* Above the threshold a candidate may only be reclaimed
		 * when the preemptor ends up not borrowing. */
		*out = V_RECLAIM_NO_BORROW;
	else
		*out = V_RECLAIM_WHILE_BORROW;
	return true;
}

static int cands_from_cq(const struct ctx *c, struct que_cq *cq,
    const struct que_cohort *lca, bool advantage, struct cands *out)
{
	struct que_wl *wl = cq->admitted.head;
	size_t i;

	for (i = 0; i < cq->admitted.n; i++, wl = wl->next) {
		enum variant v;

		if (!classify(c, wl, advantage, &v))
			continue;
		if (cu_grow((void **)&out->v, &out->cap, out->n + 1,
			sizeof(*out->v)))
			return CU_ENOMEM;
		out->v[out->n].wl = wl;
		out->v[out->n].lca = lca;
		out->v[out->n].v = v;
		out->v[out->n].other = cq != c->cq;
		out->n++;
	}
	return CU_OK;
}

static int collect_subtree(const struct ctx *c, const struct que_cohort *cur,
    const struct que_cohort *root, const struct que_cohort *skip,
    bool advantage, struct cands *out)
{
	size_t i;

	for (i = 0; i < cur->n_kids; i++) {
		if (cur->kids[i] == skip ||
		    within_nominal(c, &cur->kids[i]->node))
			continue;
		if (collect_subtree(
			c, cur->kids[i], root, skip, advantage, out))
			return CU_ENOMEM;
	}
	for (i = 0; i < cur->n_cqs; i++) {
		if (cur->cqs[i] == c->cq ||
		    within_nominal(c, &cur->cqs[i]->node))
			continue;
		if (cands_from_cq(c, cur->cqs[i], root, advantage, out))
			return CU_ENOMEM;
	}
	return CU_OK;
}

/* Does `need` (amounts per fr) fit in the node's own subtree quota; what
 * remains to be found above it. */
static bool fit_in_quota(
    const struct que_node *n, int64_t *remaining, const struct ctx *c)
{
	bool fits = true;
	size_t i;

	for (i = 0; i < c->n_req; i++) {
		uint32_t fr = c->req[i].fr;
		int64_t la = que_node_local_available(n, fr);

		if (que_node_subtree(n, fr) <
		    que_node_usage(n, fr) + remaining[i])
			fits = false;
		remaining[i] = remaining[i] > la ? remaining[i] - la : 0;
	}
	return fits;
}

/* Kueue's CandidatesOrdering: evicted first, other CQs first, (admission
 * fair sharing, same ClusterQueue, different LocalQueues) higher
 * LocalQueue usage first, lower priority first, most recently admitted
 * first, then UID. */
static int cand_cmp(const void *pa, const void *pb)
{
	const struct cand *ca = pa, *cb = pb;
	const struct que_wl *a = ca->wl, *b = cb->wl;
	bool ae = a->where == QUE_WL_EVICTING, be = b->where == QUE_WL_EVICTING;
	bool ao = ca->other, bo = cb->other;

	if (ae != be)
		return ae ? -1 : 1;
	if (ao != bo)
		return ao ? -1 : 1;
	if (a->cq == b->cq && a->cq != NULL && a->cq->admission_fair &&
	    a->lq != NULL && b->lq != NULL && a->lq != b->lq &&
	    a->lq->afs_usage != b->lq->afs_usage)
		return a->lq->afs_usage > b->lq->afs_usage ? -1 : 1;
	if (a->priority != b->priority)
		return a->priority < b->priority ? -1 : 1;
	if (a->admitted_ns != b->admitted_ns)
		return a->admitted_ns > b->admitted_ns ? -1 : 1;
	return strcmp(a->uid, b->uid);
}

static size_t evicted_prefix(const struct cands *c)
{
	size_t i = 0;

	while (i < c->n && c->v[i].wl->where == QUE_WL_EVICTING)
		i++;
	return i;
}

static bool valid(const struct ctx *c, const struct cand *k, bool borrow)
{
	const struct que_cohort *n;

	if (k->wl->cq == c->cq)
		return true;
	if (borrow && k->v == V_RECLAIM_NO_BORROW)
		return false;
	/* Earlier removals may have brought its CQ (or a cohort up to the
	 * common ancestor) back within nominal quota. */
	if (within_nominal(c, &k->wl->cq->node))
		return false;
	for (n = k->wl->cq->node.parent; n && n != k->lca; n = n->node.parent)
		if (within_nominal(c, &n->node))
			return false;
	return true;
}

/* Does the preemptor fit with the usage of t's victims (but t->v[skip])
 * removed: quota, then topology. */
static bool fits(
    const struct ctx *c, bool borrow, const struct adm_targets *t, size_t skip)
{
	size_t i;

	for (i = 0; i < c->n_req; i++) {
		uint32_t fr = c->req[i].fr;
		int64_t v = c->req[i].v;

		if (!borrow && que_node_borrowing_with(&c->cq->node, fr, v))
			return false;
		if (v > que_node_available(&c->cq->node, fr))
			return false;
	}
	return adm_tas_fits(c->tas, t, skip);
}

static int push_target(struct adm_targets *t, const struct cand *k)
{
	static const enum adm_preempt_reason reason[] = {
	    [V_WITHIN_CQ] = ADM_IN_CLUSTER_QUEUE,
	    [V_HIERARCHICAL] = ADM_IN_COHORT_RECLAMATION,
	    [V_RECLAIM_NO_BORROW] = ADM_IN_COHORT_RECLAMATION,
	    [V_RECLAIM_WHILE_BORROW] = ADM_IN_COHORT_RECLAIM_WHILE_BORROWING,
	};

	if (cu_grow((void **)&t->v, &t->cap, t->n + 1, sizeof(*t->v)))
		return CU_ENOMEM;
	t->v[t->n].wl = k->wl;
	t->v[t->n].reason = reason[k->v];
	t->n++;
	return CU_OK;
}

/* One greedy pass; leaves usage as it found it. true when it found a
 * set (in t). */
static int attempt(const struct ctx *c, const struct cand *all, size_t n,
    bool borrow, struct adm_targets *t, bool *found)
{
	size_t i;
	int rc = CU_OK;

	*found = false;
	t->n = 0;
	for (i = 0; i < n && !*found; i++) {
		if (!valid(c, &all[i], borrow))
			continue;
		if (push_target(t, &all[i])) {
			rc = CU_ENOMEM;
			break;
		}
		que_wl_remove_usage(all[i].wl);
		*found = fits(c, borrow, t, SIZE_MAX);
	}
	if (*found && t->n >= 2) {
		size_t k = t->n - 1;

		/* Fill back: keep the last victim (the one that made it
		 * fit), re-add the others newest-removed first. */
		while (k-- > 0) {
			que_wl_add_usage(t->v[k].wl);
			if (fits(c, borrow, t, k)) {
				t->v[k] = t->v[t->n - 1];
				t->n--;
			} else {
				que_wl_remove_usage(t->v[k].wl);
			}
		}
	}
	for (i = 0; i < t->n; i++)
		que_wl_add_usage(t->v[i].wl);
	if (!*found)
		t->n = 0;
	return rc;
}

void adm_targets_dispose(struct adm_targets *t)
{
	cu_free(t->v);
	memset(t, 0, sizeof(*t));
}

int adm_find_targets(que_state *st, struct que_cq *cq, struct que_wl *wl,
    const struct adm_fr_amount *req, size_t n_req, const uint32_t *need,
    size_t n_need, struct adm_tas_fit *tas, struct adm_targets *out,
    cu_error *err)
{
	struct ctx c = {cq, wl, req, n_req, need, n_need, tas};
	struct cands same = {0}, hier = {0}, prio = {0};
	struct cand *all = NULL;
	int64_t *remaining = NULL;
	size_t n_all = 0, es, eh, ep, i;
	bool forbidden, under_nominal = true, found = false;
	bool opts[2];
	size_t n_opts;
	int rc = CU_OK;

	(void)st;
	out->n = 0;
	if (cq->preemption.within_cluster_queue != QUE_PREEMPT_NEVER &&
	    cands_from_cq(&c, cq, NULL, false, &same))
		goto out_nomem;
	if (cq->node.parent &&
	    cq->preemption.reclaim_within_cohort != QUE_PREEMPT_NEVER) {
		const struct que_cohort *node, *prev = NULL;
		bool adv;

		remaining = cu_malloc((n_req ? n_req : 1) * sizeof(*remaining));
		if (!remaining)
			goto out_nomem;
		for (i = 0; i < n_req; i++)
			remaining[i] = req[i].v;
		adv = fit_in_quota(&cq->node, remaining, &c);
		for (node = cq->node.parent; node; node = node->node.parent) {
			if (collect_subtree(
				&c, node, node, prev, adv, adv ? &hier : &prio))
				goto out_nomem;
			/* Once a subtree fits the request, the preemptor has
			 * a claim on everything borrowed from it. */
			adv = fit_in_quota(&node->node, remaining, &c) || adv;
			prev = node;
		}
	}
	if (same.n > 1)
		qsort(same.v, same.n, sizeof(*same.v), cand_cmp);
	if (hier.n > 1)
		qsort(hier.v, hier.n, sizeof(*hier.v), cand_cmp);
	if (prio.n > 1)
		qsort(prio.v, prio.n, sizeof(*prio.v), cand_cmp);
	all = cu_malloc((same.n + hier.n + prio.n + 1) * sizeof(*all));
	if (!all)
		goto out_nomem;
	eh = evicted_prefix(&hier);
	ep = evicted_prefix(&prio);
	es = evicted_prefix(&same);
#define APPEND(src, from, to)                                                  \
	do {                                                                   \
		memcpy(all + n_all, (src).v + (from),                          \
		    ((to) - (from)) * sizeof(*all));                           \
		n_all += (to) - (from);                                        \
	} while (0)
	if (eh)
		APPEND(hier, 0, eh);
	if (ep)
		APPEND(prio, 0, ep);
	if (es)
		APPEND(same, 0, es);
	if (hier.n > eh)
		APPEND(hier, eh, hier.n);
	if (prio.n > ep)
		APPEND(prio, ep, prio.n);
	if (same.n > es)
		APPEND(same, es, same.n);
#undef APPEND
	forbidden = cq->preemption.borrow_within_cohort == QUE_PREEMPT_NEVER;
	for (i = 0; i < n_need; i++)
		if (que_node_quota(&cq->node, need[i])->nominal <=
		    que_node_usage(&cq->node, need[i]))
			under_nominal = false;
	if (hier.n + prio.n == 0 || (forbidden && !under_nominal)) {
		opts[0] = true;
		n_opts = 1;
	} else if (forbidden && hier.n == 0) {
		opts[0] = false;
		opts[1] = true;
		n_opts = 2;
	} else {
		opts[0] = true;
		opts[1] = false;
		n_opts = 2;
	}
	for (i = 0; i < n_opts && !found; i++) {
		rc = attempt(&c, all, n_all, opts[i], out, &found);
		if (rc)
			goto out_nomem;
	}
	goto out;
out_nomem:
	out->n = 0;
	rc = cu_error_set(err, CU_ENOMEM, "preemption: out of memory");
out:
	cu_free(same.v);
	cu_free(hier.v);
	cu_free(prio.v);
	cu_free(all);
	cu_free(remaining);
	return rc;
}
