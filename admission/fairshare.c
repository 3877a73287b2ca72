/* SPDX-License-Identifier: Apache-2.0 */
/*
 * admission/fairshare.c - Kueue's fair sharing (KEP-1714): the weighted
 * dominant resource share (DRS) of a ClusterQueue or Cohort, and the
 * fair-sharing order of a cycle's candidates (a tournament up the cohort
 * tree in which the child whose admission leaves the lowest share wins).
 *
 * DRS of a node with a parent: per resource, the amount used beyond the
 * node's subtree quota (summed over flavors), over what the node could
 * lend from its parent (the parent's potential availability, summed over
 * flavors), in per mille; the largest of these is the unweighted ratio
 * and its resource the dominant one. The share divides it by the node's
 * weight; a weight of 0 that borrows is +Inf (it gets only what nobody
 * else wants). A root, or a node that borrows nothing, has share 0.
 *
 * Also Kueue's fair-sharing preemption (preemption/fairsharing): target
 * ClusterQueues down the tree by highest share, the two strategies
 * compared at the children of the least common ancestor. Everything here
 * works on the live usage and leaves it as it found it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "admission/admission_int.h"

/* Extra usage of fr in req [n_req entries]. */
static int64_t req_of(
    const struct adm_fr_amount *req, size_t n_req, uint32_t fr)
{
	int64_t v = 0;
	size_t i;

	for (i = 0; i < n_req; i++)
		if (req[i].fr == fr)
			v += req[i].v;
	return v;
}

static int64_t borrowed(const struct que_node *n, uint32_t fr,
    const struct adm_fr_amount *req, size_t n_req)
{
	int64_t b;

	if (__builtin_add_overflow(
		que_node_usage(n, fr), req_of(req, n_req, fr), &b))
		b = INT64_MAX;
	return b - que_node_subtree(n, fr);
}

void adm_drs_with(const que_state *st, const struct que_node *n,
    const struct adm_fr_amount *req, size_t n_req, struct adm_drs *out)
{
	uint32_t fr, f2, nfr = que_fr_count(st);

	memset(out, 0, sizeof(*out));
	out->weight = n->fair_weight;
	out->dominant = UINT32_MAX;
	if (n->parent == NULL)
		return;
	if (nfr > n->ncells)
		nfr = n->ncells;
	for (fr = 0; fr < nfr; fr++) {
		uint32_t res = que_fr_resource(st, fr);
		int64_t b = 0, lend = 0, x;
		bool seen = false;
		double ratio;

		if (borrowed(n, fr, req, n_req) <= 0)
			continue;
		out->borrowing = true;
		/* Each resource once: at its first borrowed flavor. */
		for (f2 = 0; f2 < fr && !seen; f2++)
			seen = que_fr_resource(st, f2) == res &&
			       borrowed(n, f2, req, n_req) > 0;
		if (seen)
			continue;
		for (f2 = fr; f2 < nfr; f2++) {
			if (que_fr_resource(st, f2) != res)
				continue;
			x = borrowed(n, f2, req, n_req);
			if (x > 0 && __builtin_add_overflow(b, x, &b))
				b = INT64_MAX;
		}
		for (f2 = 0; f2 < nfr && f2 < n->parent->node.ncells; f2++) {
			if (que_fr_resource(st, f2) != res)
				continue;
			x = que_node_potential_available(&n->parent->node, f2);
			if (__builtin_add_overflow(lend, x, &lend))
				lend = INT64_MAX;
		}
		if (lend <= 0)
			continue;
		ratio = (double)b * 1000.0 / (double)lend;
		/* Ties go to the alphabetically first resource name. */
		if (ratio > out->ratio ||
		    (ratio == out->ratio && out->dominant != UINT32_MAX &&
			strcmp(que_resource_name(st, res),
			    que_resource_name(st, out->dominant)) < 0) ||
		    (ratio == out->ratio && out->dominant == UINT32_MAX)) {
			out->ratio = ratio;
			out->dominant = res;
		}
	}
}

void adm_drs_of(
    const que_state *st, const struct que_node *n, struct adm_drs *out)
{
	adm_drs_with(st, n, NULL, 0, out);
}

double adm_drs_share(const struct adm_drs *d)
{
	if (d->ratio == 0)
		return 0.0;
	if (d->weight == 0)
		return INFINITY;
	return d->ratio / ((double)d->weight / 1000.0);
}

int64_t adm_drs_rounded(const struct adm_drs *d)
{
	double s = adm_drs_share(d);

	if (isinf(s) || s >= 9.2e18)
		return INT64_MAX;
	return (int64_t)ceil(s);
}

static bool zero_weight_borrows(const struct adm_drs *d)
{
	return d->weight == 0 && d->ratio != 0;
}

static int cmp_double(double a, double b)
{
	return a < b ? -1 : a > b ? 1 : 0;
}

int adm_drs_cmp(const struct adm_drs *a, const struct adm_drs *b)
{
	bool za = zero_weight_borrows(a), zb = zero_weight_borrows(b);

	if (za && zb)
		return cmp_double(a->ratio, b->ratio);
	if (za)
		return 1;
	if (zb)
		return -1;
	return cmp_double(adm_drs_share(a), adm_drs_share(b));
}

/* ---- the fair-sharing iterator ------------------------------------------ */

/*
 * Kueue recomputes every candidate's shares for every pop. The winner of
 * a cohort's round only depends on the usage in its subtree and on the
 * candidates there, so each cohort keeps its winner and processing a
 * candidate only replays the rounds on its ClusterQueue's path: a pop
 * costs the children of the cohorts on one path, not the whole tree.
 * Cohorts and ClusterQueues of the cycle are marked in their scratch
 * fields (cohort: slot + 1; ClusterQueue: candidate + 1).
 */
struct rep;

struct adm_fs_iter {
	que_state *st;
	const struct adm_fs_cand *c; /* [borrowed] n long */
	size_t n, first;	     /* first: lowest index not yet taken */
	bool *gone;		     /* owned; per candidate */
	struct rep *cval;	     /* owned; per candidate: at its CQ */
	bool *cval_ok;		     /* owned; per candidate */
	struct que_cohort **co;	     /* owned; per slot */
	size_t *winner;		     /* owned; per slot, SIZE_MAX = none */
	struct rep *up;		     /* owned; per slot: winner at the cohort */
	size_t n_co, cap_co, cap_w, cap_up;
};

/* The node borrows (usage beyond its subtree quota) on one of the frs the
 * candidate requests. */
static bool borrowing_on(
    const struct que_node *n, const struct adm_fr_amount *req, size_t n_req)
{
	size_t i;

	for (i = 0; i < n_req; i++)
		if (req[i].v > 0 && que_node_usage(n, req[i].fr) >
					que_node_subtree(n, req[i].fr))
			return true;
	return false;
}

/* A child's entry in its parent's round: its candidate, and the child
 * node's share (and borrowing on the candidate's flavors) with that
 * candidate admitted (Kueue's computeDRS). */
struct rep {
	size_t k;
	struct adm_drs drs;
	bool borrowing_on;
};

static void eval(
    struct adm_fs_iter *it, const struct que_node *n, size_t k, struct rep *out)
{
	const struct adm_fs_cand *c = &it->c[k];
	size_t i;

	for (i = 0; i < c->n_usage; i++)
		que_node_add_usage(&c->cq->node, c->usage[i].fr, c->usage[i].v);
	out->k = k;
	adm_drs_of(it->st, n, &out->drs);
	out->borrowing_on = borrowing_on(n, c->usage, c->n_usage);
	for (i = 0; i < c->n_usage; i++)
		que_node_remove_usage(
		    &c->cq->node, c->usage[i].fr, c->usage[i].v);
}

/* Kueue's entryComparer.less: not borrowing on its requested flavors
 * first (FairSharingPrioritizeNonBorrowing), then lower share, higher
 * priority, older queue timestamp, and the caller's order. */
static bool rep_less(
    const struct adm_fs_iter *it, const struct rep *a, const struct rep *b)
{
	const struct adm_fs_cand *ca = &it->c[a->k], *cb = &it->c[b->k];
	int c;

	if (a->borrowing_on != b->borrowing_on)
		return !a->borrowing_on;
	c = adm_drs_cmp(&a->drs, &b->drs);
	if (c != 0)
		return c < 0;
	if (ca->priority != cb->priority)
		return ca->priority > cb->priority;
	if (ca->queue_ts != cb->queue_ts)
		return ca->queue_ts < cb->queue_ts;
	return a->k < b->k;
}

/* Replay the round of co from its children's entries, then evaluate its
 * winner at co for co's parent's round. An entry only changes when its
 * child's subtree usage or candidates do: a child cohort's is kept in
 * up[], a ClusterQueue candidate's in cval[] (its queue leaves the
 * round once processed). */
static void round_of(struct adm_fs_iter *it, const struct que_cohort *co)
{
	const struct rep *best = NULL;
	size_t i, slot = co->scratch - 1;

	for (i = 0; i < co->n_kids; i++) {
		const struct que_cohort *k = co->kids[i];

		if (k->scratch == 0 || it->winner[k->scratch - 1] == SIZE_MAX)
			continue;
		if (!best || rep_less(it, &it->up[k->scratch - 1], best))
			best = &it->up[k->scratch - 1];
	}
	for (i = 0; i < co->n_cqs; i++) {
		const struct que_cq *q = co->cqs[i];
		size_t k;

		if (q->scratch == 0)
			continue;
		k = q->scratch - 1;
		if (!it->cval_ok[k]) {
			eval(it, &q->node, k, &it->cval[k]);
			it->cval_ok[k] = true;
		}
		if (!best || rep_less(it, &it->cval[k], best))
			best = &it->cval[k];
	}
	it->winner[slot] = best ? best->k : SIZE_MAX;
	if (best && co->node.parent)
		eval(it, &co->node, it->winner[slot], &it->up[slot]);
}

/* Give every cohort of co's subtree a slot, then play their rounds
 * bottom up. */
static int init_tree(struct adm_fs_iter *it, struct que_cohort *co)
{
	size_t i;

	if (cu_grow(
		(void **)&it->co, &it->cap_co, it->n_co + 1, sizeof(*it->co)) ||
	    cu_grow((void **)&it->winner, &it->cap_w, it->n_co + 1,
		sizeof(*it->winner)) ||
	    cu_grow(
		(void **)&it->up, &it->cap_up, it->n_co + 1, sizeof(*it->up)))
		return CU_ENOMEM;
	it->co[it->n_co] = co;
	it->winner[it->n_co] = SIZE_MAX;
	co->scratch = (uint32_t)++it->n_co;
	for (i = 0; i < co->n_kids; i++)
		if (init_tree(it, co->kids[i]))
			return CU_ENOMEM;
	round_of(it, co);
	return CU_OK;
}

void adm_fs_iter_free(struct adm_fs_iter *it)
{
	size_t i;

	if (it == NULL)
		return;
	for (i = 0; i < it->n_co; i++)
		it->co[i]->scratch = 0;
	for (i = 0; i < it->n; i++)
		it->c[i].cq->scratch = 0;
	cu_free(it->co);
	cu_free(it->winner);
	cu_free(it->up);
	cu_free(it->gone);
	cu_free(it->cval);
	cu_free(it->cval_ok);
	cu_free(it);
}

int adm_fs_iter_new(que_state *st, const struct adm_fs_cand *c, size_t n,
    struct adm_fs_iter **out, cu_error *err)
{
	struct adm_fs_iter *it = cu_calloc(1, sizeof(*it));
	size_t i;

	*out = NULL;
	if (it == NULL || (it->gone = cu_calloc(n ? n : 1, 1)) == NULL ||
	    (it->cval_ok = cu_calloc(n ? n : 1, 1)) == NULL ||
	    (it->cval = cu_calloc(n ? n : 1, sizeof(*it->cval))) == NULL) {
		if (it) {
			cu_free(it->gone);
			cu_free(it->cval_ok);
		}
		cu_free(it);
		return cu_error_set(
		    err, CU_ENOMEM, "fair sharing: out of memory");
	}
	it->st = st;
	it->c = c;
	it->n = n;
	for (i = 0; i < n; i++)
		c[i].cq->scratch = (uint32_t)(i + 1);
	*out = it;
	return CU_OK;
}

int adm_fs_iter_next(struct adm_fs_iter *it, size_t *out, cu_error *err)
{
	struct que_cohort *root;

	while (it->first < it->n && it->gone[it->first])
		it->first++;
	*out = SIZE_MAX;
	if (it->first == it->n)
		return CU_OK;
	root = it->c[it->first].cq->node.parent;
	if (root == NULL) {
		*out = it->first;
		return CU_OK;
	}
	while (root->node.parent)
		root = root->node.parent;
	if (root->scratch == 0 && init_tree(it, root))
		return cu_error_set(
		    err, CU_ENOMEM, "fair sharing: out of memory");
	*out = it->winner[root->scratch - 1];
	if (*out == SIZE_MAX) /* cannot happen: first is in this tree */
		*out = it->first;
	return CU_OK;
}

void adm_fs_iter_done(struct adm_fs_iter *it, size_t k)
{
	const struct que_cohort *co;

	if (k >= it->n || it->gone[k])
		return;
	it->gone[k] = true;
	it->c[k].cq->scratch = 0;
	for (co = it->c[k].cq->node.parent; co && co->scratch;
	     co = co->node.parent)
		round_of(it, co);
}

int adm_fair_next(que_state *st, const struct adm_fs_cand *c, size_t n,
    size_t *out, cu_error *err)
{
	struct adm_fs_iter *it;
	int rc;

	*out = 0;
	if (n == 0)
		return CU_OK;
	rc = adm_fs_iter_new(st, c, n, &it, err);
	if (rc == CU_OK)
		rc = adm_fs_iter_next(it, out, err);
	adm_fs_iter_free(it);
	return rc;
}

/* ---- fair-sharing preemption (Kueue's preemption/fairsharing) ----------- */

struct fcand {
	struct que_wl *wl;
	const struct que_cq *preemptor_cq; /* for the ordering */
	bool used;  /* popped from its ClusterQueue's list */
	bool retry; /* kept for the second strategy */
};

struct fctx {
	que_state *st;
	struct que_cq *cq; /* the preemptor's */
	struct que_wl *wl;
	const struct adm_fr_amount *req;
	size_t n_req;
	struct fcand *c; /* sorted as Kueue's CandidatesOrdering */
	size_t n;
	bool second;		 /* iterating the retry candidates */
	struct adm_tas_fit *tas; /* NULL: no topology check */
	/* pruned nodes of the current ordering */
	const void **pruned;
	size_t n_pruned, cap_pruned;
	bool oom;
};

/* Kueue's CandidatesOrdering: evicted first, other ClusterQueues first,
 * lower priority, most recently admitted, then UID. */
static int cand_order(
    const struct que_wl *a, const struct que_wl *b, const struct que_cq *cq)
{
	bool ae = a->where == QUE_WL_EVICTING, be = b->where == QUE_WL_EVICTING;
	bool ao = a->cq != cq, bo = b->cq != cq;

	if (ae != be)
		return ae ? -1 : 1;
	if (ao != bo)
		return ao ? -1 : 1;
	if (a->priority != b->priority)
		return a->priority < b->priority ? -1 : 1;
	if (a->admitted_ns != b->admitted_ns)
		return a->admitted_ns > b->admitted_ns ? -1 : 1;
	return strcmp(a->uid, b->uid);
}

static int fcand_cmp(const void *pa, const void *pb)
{
	const struct fcand *a = pa, *b = pb;

	return cand_order(a->wl, b->wl, a->preemptor_cq);
}

static bool is_pruned(const struct fctx *f, const void *node)
{
	size_t i;

	for (i = 0; i < f->n_pruned; i++)
		if (f->pruned[i] == node)
			return true;
	return false;
}

static void prune(struct fctx *f, const void *node)
{
	if (cu_grow((void **)&f->pruned, &f->cap_pruned, f->n_pruned + 1,
		sizeof(*f->pruned))) {
		f->oom = true;
		return;
	}
	f->pruned[f->n_pruned++] = node;
}

/* The first candidate of cq in the current list, or NULL. */
static struct fcand *head_of(const struct fctx *f, const struct que_cq *cq)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (!f->c[i].used && f->c[i].retry == f->second &&
		    f->c[i].wl->cq == cq)
			return &f->c[i];
	return NULL;
}

static bool on_preemptor_path(const struct fctx *f, const struct que_cohort *co)
{
	const struct que_cohort *p;

	for (p = f->cq->node.parent; p; p = p->node.parent)
		if (p == co)
			return true;
	return false;
}

static const struct adm_drs negative_drs = {1000, -1, UINT32_MAX, false};

/* Kueue's TargetClusterQueueOrdering.nextTarget: down from co, the child
 * with the highest share; NULL when this call only pruned. */
static struct que_cq *next_target(struct fctx *f, const struct que_cohort *co)
{
	struct que_cq *best_cq = NULL;
	const struct que_cohort *best_co = NULL;
	struct adm_drs best_cq_drs = negative_drs, best_co_drs = negative_drs;
	size_t i;

	for (i = 0; i < co->n_cqs; i++) {
		struct que_cq *cq = co->cqs[i];
		struct adm_drs d;
		struct fcand *h;
		int c;

		if (is_pruned(f, cq))
			continue;
		adm_drs_of(f->st, &cq->node, &d);
		h = head_of(f, cq);
		if ((!d.borrowing && cq != f->cq) || h == NULL) {
			prune(f, cq);
			continue;
		}
		c = adm_drs_cmp(&d, &best_cq_drs);
		if (c == 0 && best_cq != NULL) {
			if (cand_order(h->wl, head_of(f, best_cq)->wl, f->cq) <
			    0)
				best_cq = cq;
		} else if (c > 0) {
			best_cq_drs = d;
			best_cq = cq;
		}
	}
	for (i = 0; i < co->n_kids; i++) {
		const struct que_cohort *k = co->kids[i];
		struct adm_drs d;

		if (is_pruned(f, k))
			continue;
		adm_drs_of(f->st, &k->node, &d);
		if (!d.borrowing && !on_preemptor_path(f, k))
			prune(f, k);
		else if (adm_drs_cmp(&d, &best_co_drs) >= 0) {
			best_co_drs = d;
			best_co = k;
		}
	}
	if (best_co == NULL && best_cq == NULL) {
		prune(f, co);
		return NULL;
	}
	if (best_co != NULL && adm_drs_cmp(&best_co_drs, &best_cq_drs) >= 0)
		return next_target(f, best_co);
	return best_cq;
}

/* The next target ClusterQueue, or NULL when there is none left. */
static struct que_cq *iter_next(struct fctx *f)
{
	const struct que_cohort *root;

	if (f->cq->node.parent == NULL)
		return !is_pruned(f, f->cq) && head_of(f, f->cq) ? f->cq : NULL;
	root = f->cq->node.parent;
	while (root->node.parent)
		root = root->node.parent;
	while (!is_pruned(f, root) && !f->oom) {
		struct que_cq *t = next_target(f, root);

		if (t)
			return t;
	}
	return NULL;
}

/* The node on x's path whose parent is the least common ancestor of the
 * preemptor's and the target's ClusterQueues (Kueue's almostLCA). */
static const struct que_node *almost_lca(
    const struct fctx *f, const struct que_cq *x, const struct que_cq *target)
{
	const struct que_cohort *lca = target->node.parent;
	const struct que_node *n = &x->node;

	while (lca && !on_preemptor_path(f, lca))
		lca = lca->node.parent;
	while (n->parent && n->parent != lca)
		n = &n->parent->node;
	return n;
}

static void shares(const struct fctx *f, const struct que_cq *target,
    struct adm_drs *pre_new, struct adm_drs *tgt_old)
{
	adm_drs_of(f->st, almost_lca(f, f->cq, target), pre_new);
	adm_drs_of(f->st, almost_lca(f, target, target), tgt_old);
}

/* The preemptor fits (borrowing allowed) with its simulated usage taken
 * out, and (topology-aware scheduling) its TAS podSets are placed with
 * the usage of t's victims (but t->v[skip]) released. */
static bool fits_fair(const struct fctx *f, bool simulated,
    const struct adm_targets *t, size_t skip)
{
	size_t i;
	bool ok = true;

	if (simulated)
		for (i = 0; i < f->n_req; i++)
			que_node_remove_usage(
			    &f->cq->node, f->req[i].fr, f->req[i].v);
	for (i = 0; i < f->n_req && ok; i++)
		ok = f->req[i].v <=
		     que_node_available(&f->cq->node, f->req[i].fr);
	if (simulated)
		for (i = 0; i < f->n_req; i++)
			que_node_add_usage(
			    &f->cq->node, f->req[i].fr, f->req[i].v);
	return ok && adm_tas_fits(f->tas, t, skip);
}

static bool strategy_passes(enum que_fair_strategy s,
    const struct adm_drs *pre_new, const struct adm_drs *tgt_old,
    const struct adm_drs *tgt_new)
{
	if (s == QUE_FAIR_LE_FINAL_SHARE)
		return adm_drs_cmp(pre_new, tgt_new) <= 0;
	return adm_drs_cmp(pre_new, tgt_old) < 0;
}

static int take(struct fctx *f, struct adm_targets *t, struct fcand *k,
    enum adm_preempt_reason why)
{
	if (cu_grow((void **)&t->v, &t->cap, t->n + 1, sizeof(*t->v)))
		return CU_ENOMEM;
	t->v[t->n].wl = k->wl;
	t->v[t->n].reason = why;
	t->n++;
	k->used = true;
	que_wl_remove_usage(k->wl);
	(void)f;
	return CU_OK;
}

/* Kueue's FairSharingPreemptWithinNominal: the preemptor's ClusterQueue
 * (with the preemptor) does not borrow on the resources needing
 * preemption. */
static bool within_nominal_need(
    const struct fctx *f, const uint32_t *need, size_t n_need)
{
	size_t i;

	for (i = 0; i < n_need; i++)
		if (que_node_usage(&f->cq->node, need[i]) >
		    que_node_subtree(&f->cq->node, need[i]))
			return false;
	return true;
}

static int first_strategy(struct fctx *f, enum que_fair_strategy s,
    bool within_nominal, struct adm_targets *t, bool *fit)
{
	struct que_cq *tq;

	while ((tq = iter_next(f)) != NULL) {
		struct adm_drs pre_new, tgt_old, tgt_new;
		struct fcand *k;

		if (tq == f->cq || within_nominal) {
			k = head_of(f, tq);
			if (take(f, t, k,
				tq == f->cq ? ADM_IN_CLUSTER_QUEUE
					    : ADM_IN_COHORT_RECLAMATION))
				return CU_ENOMEM;
			if ((*fit = fits_fair(f, true, t, SIZE_MAX)))
				return CU_OK;
			continue;
		}
		shares(f, tq, &pre_new, &tgt_old);
		if (isinf(adm_drs_share(&pre_new)) &&
		    !isinf(adm_drs_share(&tgt_old))) {
			/* no candidate there can pass either strategy */
			while ((k = head_of(f, tq)) != NULL)
				k->retry = true;
			continue;
		}
		while ((k = head_of(f, tq)) != NULL) {
			que_wl_remove_usage(k->wl);
			adm_drs_of(f->st, almost_lca(f, tq, tq), &tgt_new);
			que_wl_add_usage(k->wl);
			if (!strategy_passes(s, &pre_new, &tgt_old, &tgt_new)) {
				k->retry = true;
				continue;
			}
			if (take(f, t, k, ADM_IN_COHORT_FAIR_SHARING))
				return CU_ENOMEM;
			if ((*fit = fits_fair(f, true, t, SIZE_MAX)))
				return CU_OK;
			break; /* the shares changed: choose again */
		}
	}
	return f->oom ? CU_ENOMEM : CU_OK;
}

/* Rule S2-b on the candidates the first strategy turned down: at most
 * one per ClusterQueue. */
static int second_strategy(struct fctx *f, struct adm_targets *t, bool *fit)
{
	struct que_cq *tq;

	f->second = true;
	f->n_pruned = 0;
	while ((tq = iter_next(f)) != NULL) {
		struct adm_drs pre_new, tgt_old;
		struct fcand *k;

		shares(f, tq, &pre_new, &tgt_old);
		k = head_of(f, tq);
		if (adm_drs_cmp(&pre_new, &tgt_old) < 0) {
			if (take(f, t, k, ADM_IN_COHORT_FAIR_SHARING))
				return CU_ENOMEM;
			if ((*fit = fits_fair(f, true, t, SIZE_MAX)))
				return CU_OK;
		} else {
			k->used = true;
		}
		prune(f, tq);
	}
	return f->oom ? CU_ENOMEM : CU_OK;
}

static int add_cands(struct fctx *f, struct que_cq *cq,
    enum que_preempt_policy p, const uint32_t *need, size_t n_need, size_t *cap)
{
	struct que_wl *wl = cq->admitted.head;
	size_t i;

	for (i = 0; i < cq->admitted.n; i++, wl = wl->next) {
		if (!adm_policy_allows(p, f->wl, wl) ||
		    !adm_uses_any(wl, need, n_need))
			continue;
		if (cu_grow((void **)&f->c, cap, f->n + 1, sizeof(*f->c)))
			return CU_ENOMEM;
		f->c[f->n++] = (struct fcand){wl, f->cq, false, false};
	}
	return CU_OK;
}

/* Every ClusterQueue under co but the preemptor's that borrows on one of
 * need. */
static int add_tree(struct fctx *f, const struct que_cohort *co,
    const uint32_t *need, size_t n_need, size_t *cap)
{
	size_t i, k;

	for (i = 0; i < co->n_kids; i++)
		if (add_tree(f, co->kids[i], need, n_need, cap))
			return CU_ENOMEM;
	for (i = 0; i < co->n_cqs; i++) {
		struct que_cq *cq = co->cqs[i];
		bool borrowing = false;

		if (cq == f->cq)
			continue;
		for (k = 0; k < n_need && !borrowing; k++)
			borrowing = que_node_usage(&cq->node, need[k]) >
				    que_node_subtree(&cq->node, need[k]);
		if (borrowing &&
		    add_cands(f, cq, f->cq->preemption.reclaim_within_cohort,
			need, n_need, cap))
			return CU_ENOMEM;
	}
	return CU_OK;
}

int adm_fair_find_targets(que_state *st, struct que_cq *cq, struct que_wl *wl,
    const struct adm_fr_amount *req, size_t n_req, const uint32_t *need,
    size_t n_need, struct adm_tas_fit *tas, struct adm_targets *out,
    cu_error *err)
{
	const struct que_fair_config *cfg = que_fair_sharing(st);
	struct fctx f;
	size_t cap = 0, i;
	bool fit = false, within;
	int rc = CU_OK;

	memset(&f, 0, sizeof(f));
	f.st = st;
	f.cq = cq;
	f.wl = wl;
	f.req = req;
	f.n_req = n_req;
	f.tas = tas;
	out->n = 0;
	if (cq->preemption.within_cluster_queue != QUE_PREEMPT_NEVER)
		rc = add_cands(&f, cq, cq->preemption.within_cluster_queue,
		    need, n_need, &cap);
	if (rc == CU_OK && cq->node.parent &&
	    cq->preemption.reclaim_within_cohort != QUE_PREEMPT_NEVER) {
		const struct que_cohort *root = cq->node.parent;

		while (root->node.parent)
			root = root->node.parent;
		rc = add_tree(&f, root, need, n_need, &cap);
	}
	if (rc != CU_OK || f.n == 0)
		goto out;
	qsort(f.c, f.n, sizeof(*f.c), fcand_cmp);
	/* The shares include the preemptor's usage. */
	for (i = 0; i < n_req; i++)
		que_node_add_usage(&cq->node, req[i].fr, req[i].v);
	within = within_nominal_need(&f, need, n_need);
	rc = first_strategy(&f,
	    cfg->n_strategies > 0 ? cfg->strategies[0]
				  : QUE_FAIR_LE_FINAL_SHARE,
	    within, out, &fit);
	if (rc == CU_OK && !fit &&
	    (cfg->n_strategies == 0 || cfg->n_strategies > 1))
		rc = second_strategy(&f, out, &fit);
	for (i = 0; i < n_req; i++)
		que_node_remove_usage(&cq->node, req[i].fr, req[i].v);
	if (rc == CU_OK && fit && out->n >= 2) {
		size_t k = out->n - 1;

		/* Fill back, newest removed first. */
		while (k-- > 0) {
			que_wl_add_usage(out->v[k].wl);
			if (fits_fair(&f, false, out, k)) {
				out->v[k] = out->v[out->n - 1];
				out->n--;
			} else {
				que_wl_remove_usage(out->v[k].wl);
			}
		}
	}
	for (i = 0; i < out->n; i++)
		que_wl_add_usage(out->v[i].wl);
	if (rc != CU_OK || !fit)
		out->n = 0;
out:
	cu_free(f.c);
	cu_free(f.pruned);
	if (rc != CU_OK)
		return cu_error_set(
		    err, CU_ENOMEM, "preemption: out of memory");
	return CU_OK;
}
