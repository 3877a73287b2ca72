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
 */
#include <math.h>
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

/* Per candidate: its path from its ClusterQueue up to the root, and at
 * every step the DRS of that node with the candidate admitted (what the
 * candidate is compared by in the parent's round). */
struct path {
	const struct que_node *node[ADM_FS_MAX_DEPTH];
	struct adm_drs drs[ADM_FS_MAX_DEPTH];
	bool borrowing_on[ADM_FS_MAX_DEPTH];
	uint32_t depth; /* node[depth] is the root */
};

struct tourney {
	const struct adm_fs_cand *c;
	struct path *p;
	size_t *tmp; /* scratch, n long */
	uint8_t *done_mark;
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

/* Kueue's entryComparer.less in the round of the cohort at distance lvl
 * from the candidates' ClusterQueues (the child compared is one below):
 * not borrowing on its requested flavors first, then lower share, higher
 * priority, older queue timestamp, and the caller's order. */
static bool less(
    const struct tourney *t, size_t a, uint32_t la, size_t b, uint32_t lb)
{
	const struct adm_fs_cand *ca = &t->c[a], *cb = &t->c[b];
	int c;

	if (t->p[a].borrowing_on[la] != t->p[b].borrowing_on[lb])
		return !t->p[a].borrowing_on[la];
	c = adm_drs_cmp(&t->p[a].drs[la], &t->p[b].drs[lb]);
	if (c != 0)
		return c < 0;
	if (ca->priority != cb->priority)
		return ca->priority > cb->priority;
	if (ca->queue_ts != cb->queue_ts)
		return ca->queue_ts < cb->queue_ts;
	return a < b;
}

/* Winner of the round at the cohort dc levels below the root among the
 * candidates idx[0..m) (all under it). */
static size_t round_at(
    struct tourney *t, const size_t *idx, size_t m, uint32_t dc)
{
	size_t best = SIZE_MAX, i, j, g, *grp;
	uint32_t best_l = 0;

	grp = t->tmp;
	for (i = 0; i < m; i++)
		t->done_mark[idx[i]] = 0;
	for (i = 0; i < m; i++) {
		size_t x = idx[i], win;
		uint32_t lx, l;
		const struct que_node *child;

		if (t->done_mark[x])
			continue;
		lx =
		    t->p[x].depth - dc - 1; /* index of the child on x's path */
		child = t->p[x].node[lx];
		if (lx == 0) {
			t->done_mark[x] = 1;
			win = x;
			l = 0;
		} else {
			size_t *sub;

			/* the group under child: copied above the scratch
			 * used by the recursion */
			g = 0;
			for (j = i; j < m; j++) {
				size_t y = idx[j];
				uint32_t ly = t->p[y].depth - dc - 1;

				if (!t->done_mark[y] &&
				    t->p[y].node[ly] == child) {
					t->done_mark[y] = 1;
					grp[g++] = y;
				}
			}
			sub = grp;
			t->tmp = grp + g;
			win = round_at(t, sub, g, dc + 1);
			t->tmp = grp;
			l = t->p[win].depth - dc - 1;
			for (j = 0; j < g; j++)
				t->done_mark[sub[j]] = 1;
		}
		if (best == SIZE_MAX || less(t, win, l, best, best_l)) {
			best = win;
			best_l = l;
		}
	}
	return best;
}

int adm_fair_next(que_state *st, const struct adm_fs_cand *c, size_t n,
    size_t *out, cu_error *err)
{
	const struct que_cohort *root;
	struct tourney t;
	size_t i, m = 0, *idx;
	int rc = CU_OK;

	*out = 0;
	if (n == 0 || c[0].cq->node.parent == NULL)
		return CU_OK;
	root = c[0].cq->node.parent;
	while (root->node.parent != NULL)
		root = root->node.parent;
	memset(&t, 0, sizeof(t));
	t.c = c;
	t.p = cu_calloc(n, sizeof(*t.p));
	idx = cu_calloc(n * (ADM_FS_MAX_DEPTH + 2) + 1, sizeof(*idx));
	t.done_mark = cu_calloc(n, 1);
	if (!t.p || !idx || !t.done_mark) {
		rc =
		    cu_error_set(err, CU_ENOMEM, "fair sharing: out of memory");
		goto out;
	}
	t.tmp = idx + n;
	for (i = 0; i < n; i++) {
		struct path *p = &t.p[i];
		const struct que_node *nd = &c[i].cq->node;
		struct que_node *cqn = &c[i].cq->node;
		size_t k;

		if (nd->parent == NULL)
			continue;
		p->depth = 0;
		p->node[0] = nd;
		while (nd->parent != NULL && p->depth + 1 < ADM_FS_MAX_DEPTH) {
			nd = &nd->parent->node;
			p->node[++p->depth] = nd;
		}
		if (nd != &root->node)
			continue; /* another tree */
		/* The shares with the candidate admitted, from its
		 * ClusterQueue up (Kueue's computeDRS). */
		for (k = 0; k < c[i].n_usage; k++)
			que_node_add_usage(
			    cqn, c[i].usage[k].fr, c[i].usage[k].v);
		for (k = 0; k < p->depth; k++) {
			adm_drs_of(st, p->node[k], &p->drs[k]);
			p->borrowing_on[k] =
			    borrowing_on(p->node[k], c[i].usage, c[i].n_usage);
		}
		for (k = 0; k < c[i].n_usage; k++)
			que_node_remove_usage(
			    cqn, c[i].usage[k].fr, c[i].usage[k].v);
		idx[m++] = i;
	}
	if (m > 0)
		*out = round_at(&t, idx, m, 0);
out:
	cu_free(t.p);
	cu_free(idx);
	cu_free(t.done_mark);
	return rc;
}
