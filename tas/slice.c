/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tas/slice.c - placement with slices (podset-slice-required-topology,
 * podset-slice-size) and of podSet groups (podset-group-name: a leader
 * podSet of one pod placed with the workers), Kueue's general form of
 * the TAS algorithm with its default (best fit) profile:
 *
 *   1. counts per domain: pods of the workers that fit (fit), whether
 *      the leader fits (leader, 0/1), the workers that fit beside it
 *      (fit_wl), slices (fit / slice size at the slice level, summed
 *      above it, none below) with and without the leader;
 *   2. the fitting level: domains sorted by leader, slices beside the
 *      leader (desc), pods beside it (asc), value path; the best fit
 *      (fewest slices that still hold them all) at the requested level,
 *      else required fails with Kueue's message (in slices when the
 *      slice size is not 1), preferred moves up, and at the top (or for
 *      unconstrained) the leader's domain is taken first, then the
 *      workers' domains greedily;
 *   3. descent: down to the slice level the children of all chosen
 *      domains are taken together, in whole slices; below it each
 *      domain's pods (and leader) go to its own children, pod by pod,
 *      or in slices of an inner layer (TASMultiLayerTopology: below the
 *      outermost slice level a child counts towards its parent only in
 *      whole slices of its level's inner size, Kueue's
 *      sliceSizeAtLevel).
 *
 * Every domain of the chosen ones gets `take` (workers' pods) and
 * `take_leader`; the leaves give the two assignments.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tas/tas_int.h"

#define NCOLS (TAS_MAX_RESOURCES * 4)
/* Levels a request with inner slice layers may have (a Topology has at
 * most 16). */
#define MAX_LEVELS 16

struct gen {
	struct tas_tree *t;
	const struct tas_request *w, *l; /* l: NULL without a leader */
	int cw[NCOLS], cl[NCOLS];	 /* columns of the requests */
	int64_t count, size, lc;	 /* workers, slice size, leaders */
	size_t rl, sl;			 /* requested and slice levels */
	bool required, unconstrained;
	/* inner slice layers (r->inner): the slice size that each level
	 * below the outermost slice level is filled in, down to the
	 * innermost layer's level (0: none, pods one by one), as Kueue's
	 * sliceSizeAtLevel */
	int64_t at_size[MAX_LEVELS];
	size_t search; /* the level find_level looks at (messages) */
	/* replacement: only leaves under `within` (when set), never
	 * `skip` (the failed node's) */
	const struct tas_domain *within, *skip;
	char *msg;
	size_t len;
};

struct dl {
	struct tas_domain **v; /* [owned array, borrowed items] */
	size_t n, cap;
};

static int dl_push(struct dl *d, struct tas_domain *x)
{
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 8;
		struct tas_domain **v = cu_realloc(d->v, cap * sizeof(*v));

		if (v == NULL)
			return CU_ENOMEM;
		d->v = v;
		d->cap = cap;
	}
	d->v[d->n++] = x;
	return CU_OK;
}

static int level_of(const struct tas_tree *t, const char *label, size_t *at)
{
	size_t l;

	for (l = 0; label != NULL && l < t->n_levels; l++)
		if (strcmp(t->levels[l], label) == 0) {
			*at = l;
			return 1;
		}
	return 0;
}

/* ---- 1. counts -------------------------------------------------------- */

static void leaf_counts(struct gen *g, struct tas_domain *d)
{
	int64_t tmp[TAS_MAX_RESOURCES], wbuf[TAS_MAX_RESOURCES],
	    lbuf[TAS_MAX_RESOURCES];
	const int64_t *wfree, *lfree;
	size_t i, nw, nl;

	d->fit = d->fit_wl = d->leader = 0;
	if (d->n_nodes + d->n_tainted == 0 || d == g->skip)
		return;
	/* the nodes each podSet may use (tas/filter.c) */
	wfree = tas__leaf_free(g->t, d, g->w->filter, wbuf, &nw);
	if (nw == 0)
		return;
	if (g->within != NULL) {
		const struct tas_domain *up = d;

		while (up != NULL && up != g->within)
			up = up->parent;
		if (up == NULL)
			return;
	}
	d->fit = d->fit_wl = tas__fit_in(wfree, nw, g->cw, g->w);
	if (g->l == NULL)
		return;
	lfree = tas__leaf_free(g->t, d, g->l->filter, lbuf, &nl);
	if (nl == 0 || tas__fit_in(lfree, nl, g->cl, g->l) < 1)
		return;
	d->leader = 1;
	memcpy(tmp, wfree, sizeof(tmp));
	tmp[TAS_PODS] -= 1;
	for (i = 0; i < g->l->n_per_pod; i++)
		if (g->cl[i] > TAS_PODS && g->l->per_pod[i].value > 0)
			tmp[g->cl[i]] -= g->l->per_pod[i].value;
	d->fit_wl = tas__fit_in(tmp, nw, g->cw, g->w);
}

/* What a child of a domain of level l gives it of its `pods`: with an
 * inner slice layer at the child's level, whole inner slices only. */
static int64_t inner_round(const struct gen *g, size_t l, int64_t pods)
{
	int64_t s = l + 1 < MAX_LEVELS ? g->at_size[l + 1] : 0;

	return s > 1 ? pods / s * s : pods;
}

/* Bottom-up, as Kueue's fillInCounts: a parent's capacity beside the
 * leader loses the least any leader-capable child loses; with inner
 * slice layers a child counts in whole slices of its level's size. */
static void fill(struct gen *g)
{
	struct tas_tree *t = g->t;
	size_t l = t->n_levels, i, c;

	while (l-- > 0) {
		struct tas_level *lv = &t->per_level[l];

		for (i = 0; i < lv->n; i++) {
			struct tas_domain *d = lv->items[i];
			int64_t dpod = INT64_MAX, dsl = INT64_MAX;
			bool contrib = false;

			d->take = d->take_leader = 0;
			d->slices = d->slices_wl = 0;
			if (l == t->n_levels - 1) {
				leaf_counts(g, d);
			} else {
				d->fit = d->leader = 0;
				for (c = 0; c < d->n_children; c++) {
					struct tas_domain *k = d->children[c];
					int64_t kf = inner_round(g, l, k->fit),
						kw = inner_round(
						    g, l, k->fit_wl);

					d->fit += kf;
					d->slices += k->slices;
					if (g->lc == 0 || k->leader > 0) {
						contrib = true;
						if (kf - kw < dpod)
							dpod = kf - kw;
						if (k->slices - k->slices_wl <
						    dsl)
							dsl = k->slices -
							      k->slices_wl;
					}
					if (k->leader > d->leader)
						d->leader = k->leader;
				}
				d->fit_wl = contrib ? d->fit - dpod : 0;
				d->slices_wl = contrib ? d->slices - dsl : 0;
			}
			if (l == g->sl) {
				d->slices = d->fit / g->size;
				d->slices_wl = d->fit_wl / g->size;
			}
		}
	}
}

/* ---- ordering and best fit -------------------------------------------- */

static int cmp_i64(int64_t a, int64_t b)
{
	return a < b ? -1 : a > b;
}

/* Kueue's sortedDomainsWithLeader (best fit profile). */
static int cmp_with_leader(const void *pa, const void *pb)
{
	const struct tas_domain *a = *(const struct tas_domain *const *)pa;
	const struct tas_domain *b = *(const struct tas_domain *const *)pb;
	int c;

	if ((c = cmp_i64(b->leader, a->leader)) != 0)
		return c;
	if ((c = cmp_i64(b->slices_wl, a->slices_wl)) != 0)
		return c;
	if ((c = cmp_i64(a->fit_wl, b->fit_wl)) != 0)
		return c;
	return strcmp(a->key, b->key);
}

/* Kueue's sortedDomains: slices desc, pods asc, value path. */
static int cmp_plain(const void *pa, const void *pb)
{
	const struct tas_domain *a = *(const struct tas_domain *const *)pa;
	const struct tas_domain *b = *(const struct tas_domain *const *)pb;
	int c;

	if ((c = cmp_i64(b->slices, a->slices)) != 0)
		return c;
	if ((c = cmp_i64(a->fit, b->fit)) != 0)
		return c;
	return strcmp(a->key, b->key);
}

/* The first domain with the fewest units (slices or pods; beside the
 * leader when leaders are needed) >= need among those holding `lc`
 * leaders; ds[0] when none does. */
static struct tas_domain *best(struct tas_domain *const *ds, size_t n,
    int64_t need, int64_t lc, bool slices)
{
	struct tas_domain *b = ds[0];
	int64_t bc = INT64_MAX;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct tas_domain *d = ds[i];
		int64_t have = slices ? (lc > 0 ? d->slices_wl : d->slices)
				      : (lc > 0 ? d->fit_wl : d->fit);

		if (d->leader < lc)
			continue;
		if (have >= need && have < bc) {
			b = ds[i];
			bc = have;
		}
	}
	return b;
}

/* Kueue's prioritizeLeaderDomain: the first leader-capable domain whose
 * loss beside the leader the others make up for goes first. */
static void prioritize(struct gen *g, struct tas_domain **ds, size_t n,
    int64_t count, int64_t lc, int64_t size, bool slices)
{
	int64_t need = slices ? count / size : count, have = 0;
	size_t i;

	if (lc == 0 || n < 2)
		return;
	(void)g;
	for (i = 0; i < n; i++)
		have += slices ? ds[i]->slices : ds[i]->fit;
	for (i = 0; i < n; i++) {
		struct tas_domain *d = ds[i];
		int64_t loss =
		    slices ? d->slices - d->slices_wl : d->fit - d->fit_wl;

		if (d->leader < lc || have - loss < need)
			continue;
		if (i > 0) {
			memmove(ds + 1, ds, i * sizeof(*ds));
			ds[0] = d;
		}
		return;
	}
}

/* ---- 2. the fitting level --------------------------------------------- */

/* The slices of `size` that domain d of level l holds at level target
 * (its descendants there, each by its own pods). */
static int64_t slices_below(
    const struct tas_domain *d, size_t l, size_t target, int64_t size)
{
	int64_t n = 0;
	size_t c;

	if (l >= target)
		return d->fit / size;
	for (c = 0; c < d->n_children; c++)
		n += slices_below(d->children[c], l + 1, target, size);
	return n;
}

/* Kueue's message for slice layers: per layer, the slices that fit in
 * the domain of the searched level that holds the most outer slices
 * (the first by value path among equals). */
static int no_fit_layers(struct gen *g)
{
	const struct tas_level *lv = &g->t->per_level[g->search];
	const struct tas_domain *b = NULL;
	size_t i, at, k;
	int n;

	n = snprintf(
	    g->msg, g->len, "topology \"%s\" doesn't allow to fit", g->t->name);
	for (i = 0; i < lv->n; i++) {
		const struct tas_domain *d = lv->items[i];

		if (b == NULL || d->slices > b->slices ||
		    (d->slices == b->slices && strcmp(d->key, b->key) < 0))
			b = d;
	}
	for (k = 0; b != NULL && k <= g->w->n_inner; k++) {
		const char *lvl =
		    k == 0 ? g->w->slice_level : g->w->inner[k - 1].level;
		int64_t size =
		    k == 0 ? g->w->slice_size : g->w->inner[k - 1].size;

		if (n < 0 || (size_t)n >= g->len || !level_of(g->t, lvl, &at))
			break;
		n += snprintf(g->msg + n, g->len - (size_t)n,
		    "; %lld/%lld slice(s) fit on level %s",
		    (long long)slices_below(b, g->search, at, size),
		    (long long)(g->count / size), lvl);
	}
	return TAS_NOFIT;
}

static int no_fit(struct gen *g, int64_t fit, int64_t need)
{
	const char *unit = g->size == 1 ? "pod" : "slice";

	if (g->w->n_inner > 0)
		return no_fit_layers(g);
	if (fit <= 0)
		snprintf(g->msg, g->len,
		    "topology \"%s\" doesn't allow to fit any of %lld %s(s)",
		    g->t->name, (long long)need, unit);
	else
		snprintf(g->msg, g->len,
		    "topology \"%s\" allows to fit only %lld out of %lld "
		    "%s(s)",
		    g->t->name, (long long)fit, (long long)need, unit);
	return TAS_NOFIT;
}

static int sorted(struct tas_domain *const *src, size_t n,
    int (*cmp)(const void *, const void *), struct dl *out)
{
	out->n = 0;
	out->v = cu_malloc((n ? n : 1) * sizeof(*out->v));
	if (out->v == NULL)
		return CU_ENOMEM;
	out->cap = n ? n : 1;
	memcpy(out->v, src, n * sizeof(*out->v));
	out->n = n;
	qsort(out->v, n, sizeof(*out->v), cmp);
	return CU_OK;
}

static int find_level(struct gen *g, size_t level, size_t *at, struct dl *res)
{
	struct tas_level *lv = &g->t->per_level[level];
	int64_t need = g->count / g->size, rem_s, rem_l;
	struct tas_domain *top;
	struct dl s = {NULL, 0, 0}, rest = {NULL, 0, 0};
	size_t i;
	int rc = CU_OK;

	g->search = level;
	if (lv->n == 0) {
		snprintf(g->msg, g->len, "no topology domains at level: %s",
		    g->t->levels[level]);
		return TAS_NOFIT;
	}
	if (sorted(lv->items, lv->n, cmp_with_leader, &s) != CU_OK)
		return CU_ENOMEM;
	top = s.v[0];
	if (top->slices_wl >= need && top->leader >= g->lc)
		top = best(s.v, s.n, need, g->lc, true);
	if (top->slices_wl >= need && top->leader >= g->lc) {
		*at = level;
		rc = dl_push(res, top);
		goto out;
	}
	if (g->required) {
		rc = no_fit(g, top->slices, need);
		goto out;
	}
	if (level > 0 && !g->unconstrained) {
		cu_free(s.v);
		return find_level(g, level - 1, at, res);
	}
	/* spread: the leader's domain first, then the workers' */
	prioritize(g, s.v, s.n, g->count, g->lc, g->size, true);
	rem_s = need;
	rem_l = g->lc;
	for (i = 0; rem_l > 0 && i < s.n && s.v[i]->leader > 0; i++) {
		struct tas_domain *d = s.v[i];

		if (d->slices_wl >= rem_s)
			d = best(s.v + i, s.n - i, rem_s, rem_l, true);
		if (dl_push(res, d) != CU_OK) {
			rc = CU_ENOMEM;
			goto out;
		}
		rem_l -= d->leader;
		rem_s -= d->slices_wl;
	}
	if (rem_l > 0) {
		rc = no_fit(g, g->lc - rem_l, need);
		goto out;
	}
	if (sorted(s.v + i, s.n - i, cmp_plain, &rest) != CU_OK) {
		rc = CU_ENOMEM;
		goto out;
	}
	for (i = 0; rem_s > 0 && i < rest.n; i++) {
		struct tas_domain *d = rest.v[i];

		if (d->slices >= rem_s)
			d = best(rest.v + i, rest.n - i, rem_s, 0, true);
		if (dl_push(res, d) != CU_OK) {
			rc = CU_ENOMEM;
			goto out;
		}
		rem_s -= d->slices;
	}
	if (rem_s > 0) {
		rc = no_fit(g, need - rem_s, need);
		goto out;
	}
	*at = level;
out:
	cu_free(s.v);
	cu_free(rest.v);
	return rc;
}

/* ---- 3. descent ------------------------------------------------------- */

/* Kueue's updateCountsToMinimum: take `count` pods (in slices of `size`
 * when `slices`) and `lc` leaders from ds [edited: reordered] in order,
 * best fit for the last domain; the domains used are appended to out.
 * TAS_NOFIT when they do not hold them (not expected: the counts said
 * they do). */
static int take(struct gen *g, struct tas_domain **ds, size_t n, int64_t count,
    int64_t lc, int64_t size, bool slices, struct dl *out)
{
	int64_t rem = slices ? count / size : count, rem_l = lc;
	size_t i;

	if (rem <= 0 && rem_l <= 0)
		return CU_OK; /* nothing to place below (Kueue: count 0) */
	prioritize(g, ds, n, count, lc, size, slices);
	for (i = 0; i < n; i++) {
		struct tas_domain *d = ds[i];

		if (rem_l > 0) {
			int64_t wl = slices ? d->slices_wl : d->fit_wl;

			if (wl >= rem && d->leader >= rem_l) {
				d = best(ds + i, n - i, rem, rem_l, slices);
				wl = slices ? d->slices_wl : d->fit_wl;
			}
			if (dl_push(out, d) != CU_OK)
				return CU_ENOMEM;
			if (wl >= rem && d->leader >= rem_l) {
				d->take = rem * (slices ? size : 1);
				d->take_leader = rem_l;
				return CU_OK;
			}
			if (wl > rem)
				wl = rem;
			d->take_leader = d->leader < rem_l ? d->leader : rem_l;
			d->take = wl * (slices ? size : 1);
			rem_l -= d->take_leader;
			rem -= wl;
			continue;
		} else {
			int64_t have = slices ? d->slices : d->fit;

			if (have >= rem) {
				d = best(ds + i, n - i, rem, 0, slices);
				have = slices ? d->slices : d->fit;
			}
			d->take_leader = 0;
			if (dl_push(out, d) != CU_OK)
				return CU_ENOMEM;
			if (have >= rem) {
				d->take = rem * (slices ? size : 1);
				return CU_OK;
			}
			d->take = have * (slices ? size : 1);
			rem -= have;
		}
	}
	snprintf(g->msg, g->len,
	    "topology \"%s\": %lld pod(s) left over in the descent", g->t->name,
	    (long long)rem);
	return TAS_NOFIT;
}

/* Children of cur's domains, sorted, taken together (above the slice
 * level) into *cur. */
static int descend_all(struct gen *g, struct dl *cur)
{
	struct dl kids = {NULL, 0, 0}, s = {NULL, 0, 0}, next = {NULL, 0, 0};
	size_t i, c;
	int rc = CU_OK;

	for (i = 0; i < cur->n && rc == CU_OK; i++)
		for (c = 0; c < cur->v[i]->n_children && rc == CU_OK; c++)
			rc = dl_push(&kids, cur->v[i]->children[c]);
	if (rc == CU_OK)
		rc = sorted(kids.v, kids.n, cmp_plain, &s);
	if (rc == CU_OK)
		rc = take(g, s.v, s.n, g->count, g->lc, g->size, true, &next);
	cu_free(kids.v);
	cu_free(s.v);
	cu_free(cur->v);
	*cur = next;
	return rc;
}

/* Each of cur's domains (of level `at`) gives its pods and leader to
 * its own children (at and below the slice level): pod by pod, or in
 * whole slices of an inner layer's size, as Kueue: the children sorted
 * first (their slice counts are those of the outermost layer: none
 * below it), then counted in the inner slices. */
static int descend_each(struct gen *g, struct dl *cur, size_t at)
{
	struct dl s = {NULL, 0, 0}, next = {NULL, 0, 0};
	int64_t size = at + 1 < MAX_LEVELS ? g->at_size[at + 1] : 0;
	size_t i, k;
	int rc = CU_OK;

	if (size < 1)
		size = 1;
	for (i = 0; i < cur->n && rc == CU_OK; i++) {
		struct tas_domain *d = cur->v[i];

		rc = sorted(d->children, d->n_children, cmp_plain, &s);
		for (k = 0; rc == CU_OK && size > 1 && k < s.n; k++) {
			s.v[k]->slices = s.v[k]->fit / size;
			s.v[k]->slices_wl = s.v[k]->fit_wl / size;
		}
		if (rc == CU_OK)
			rc = take(g, s.v, s.n, d->take, d->take_leader, size,
			    size > 1, &next);
		cu_free(s.v);
		s.v = NULL;
	}
	cu_free(cur->v);
	*cur = next;
	return rc;
}

/* Kueue's buildSliceSizeAtLevel: each inner layer strictly below the
 * one before, its size dividing the one before; the levels from below
 * the one before down to its own are filled in its size. */
static int inner_layers(struct gen *g, const struct tas_request *r)
{
	struct tas_tree *t = g->t;
	int64_t prev = g->size;
	size_t prev_l = g->sl, i, at, l;

	for (i = 0; i < r->n_inner; i++) {
		const struct tas_slice_layer *y = &r->inner[i];

		if (!level_of(t, y->level, &at)) {
			snprintf(g->msg, g->len,
			    "no requested topology level for additional slice "
			    "layer: %s",
			    y->level ? y->level : "");
			return TAS_NOFIT;
		}
		if (at <= prev_l) {
			snprintf(g->msg, g->len,
			    "additional slice layer topology %s must be at a "
			    "lower level than %s",
			    y->level, t->levels[prev_l]);
			return TAS_NOFIT;
		}
		if (y->size < 1 || prev % y->size != 0) {
			snprintf(g->msg, g->len,
			    "additional slice layer size %d must evenly "
			    "divide parent layer size %lld",
			    y->size, (long long)prev);
			return TAS_NOFIT;
		}
		if (at >= MAX_LEVELS) {
			snprintf(g->msg, g->len,
			    "slice layers in a topology of more than %d "
			    "levels",
			    MAX_LEVELS);
			return TAS_NOFIT;
		}
		for (l = prev_l + 1; l <= at; l++)
			g->at_size[l] = y->size;
		prev = y->size;
		prev_l = at;
	}
	return CU_OK;
}

static int setup(struct gen *g, const struct tas_request *r)
{
	struct tas_tree *t = g->t;
	size_t i;
	int rc;

	g->size = 1;
	g->sl = t->n_levels - 1;
	if (r->slice_level != NULL) {
		if (r->slice_size <= 0) {
			snprintf(g->msg, g->len,
			    "slice topology requested, but slice size not "
			    "provided");
			return TAS_NOFIT;
		}
		g->size = r->slice_size;
	}
	g->required = r->mode == TAS_REQUIRED;
	g->unconstrained = r->mode == TAS_UNCONSTRAINED;
	if (g->unconstrained) {
		/* Kueue: a slice request without required/preferred is
		 * unconstrained from the highest level */
		g->rl = r->slice_level != NULL ? 0 : t->n_levels - 1;
	} else if (!level_of(t, r->level, &g->rl)) {
		snprintf(g->msg, g->len, "no requested topology level: %s",
		    r->level ? r->level : "");
		return TAS_NOFIT;
	}
	if (r->slice_level != NULL && !level_of(t, r->slice_level, &g->sl)) {
		snprintf(g->msg, g->len,
		    "no requested topology level for slices: %s",
		    r->slice_level);
		return TAS_NOFIT;
	}
	if (g->rl > g->sl) {
		snprintf(g->msg, g->len,
		    "podset slice topology %s is above the podset topology %s",
		    t->levels[g->sl], t->levels[g->rl]);
		return TAS_NOFIT;
	}
	if ((rc = inner_layers(g, r)) != CU_OK)
		return rc;
	if (g->count % g->size != 0) {
		snprintf(g->msg, g->len,
		    "podset slice size %lld does not divide the pod count "
		    "%lld",
		    (long long)g->size, (long long)g->count);
		return TAS_NOFIT;
	}
	for (i = 0; i < r->n_per_pod; i++)
		g->cw[i] = tas__column(t, r->per_pod[i].name, false);
	for (i = 0; g->l != NULL && i < g->l->n_per_pod; i++)
		g->cl[i] = tas__column(t, g->l->per_pod[i].name, false);
	return CU_OK;
}

static int place_in(struct tas_tree *t, const struct tas_request *r,
    const struct tas_request *leader, const struct tas_domain *within,
    const struct tas_domain *skip, struct api_topology_assignment *out,
    struct api_topology_assignment *leader_out, char *msg, size_t msg_len,
    cu_error *err);

int tas__place_general(struct tas_tree *t, const struct tas_request *r,
    const struct tas_request *leader, struct api_topology_assignment *out,
    struct api_topology_assignment *leader_out, char *msg, size_t msg_len,
    cu_error *err)
{
	return place_in(
	    t, r, leader, NULL, NULL, out, leader_out, msg, msg_len, err);
}

static int place_in(struct tas_tree *t, const struct tas_request *r,
    const struct tas_request *leader, const struct tas_domain *within,
    const struct tas_domain *skip, struct api_topology_assignment *out,
    struct api_topology_assignment *leader_out, char *msg, size_t msg_len,
    cu_error *err)
{
	struct gen g;
	struct dl cur = {NULL, 0, 0}, lead = {NULL, 0, 0};
	size_t at = 0, i;
	int rc;

	memset(out, 0, sizeof(*out));
	if (leader_out != NULL)
		memset(leader_out, 0, sizeof(*leader_out));
	if (msg_len > 0)
		msg[0] = '\0';
	if (r->count < 1 || r->n_per_pod > NCOLS ||
	    (r->n_inner > 0 && (r->slice_level == NULL || r->inner == NULL)) ||
	    (leader != NULL &&
		(leader->count != 1 || leader->n_per_pod > NCOLS ||
		    r->slice_level != NULL || leader_out == NULL)))
		return cu_error_set(err, CU_EINVAL, "topology: bad request");
	memset(&g, 0, sizeof(g));
	g.t = t;
	g.w = r;
	g.l = leader;
	g.lc = leader != NULL ? 1 : 0;
	g.count = r->count;
	g.within = within;
	g.skip = skip;
	g.msg = msg;
	g.len = msg_len;
	if ((rc = setup(&g, r)) != CU_OK)
		return rc;
	fill(&g);
	rc = find_level(&g, g.rl, &at, &cur);
	if (rc == CU_OK) {
		struct dl chosen = cur;

		cur.v = NULL;
		cur.n = cur.cap = 0;
		rc = take(
		    &g, chosen.v, chosen.n, g.count, g.lc, g.size, true, &cur);
		cu_free(chosen.v);
	}
	for (; rc == CU_OK && at < g.sl && at + 1 < t->n_levels; at++)
		rc = descend_all(&g, &cur);
	for (; rc == CU_OK && at + 1 < t->n_levels; at++)
		rc = descend_each(&g, &cur, at);
	if (rc == CU_ENOMEM)
		rc = cu_error_set(err, CU_ENOMEM, "topology: out of memory");
	for (i = 0; rc == CU_OK && leader != NULL && i < cur.n; i++)
		if (cur.v[i]->take_leader > 0 &&
		    dl_push(&lead, cur.v[i]) != CU_OK)
			rc = cu_error_set(
			    err, CU_ENOMEM, "topology: out of memory");
	if (rc == CU_OK)
		rc = tas__build(t, cur.v, cur.n, out, err);
	if (rc == CU_OK && leader != NULL) {
		for (i = 0; i < lead.n; i++)
			lead.v[i]->take = lead.v[i]->take_leader;
		rc = tas__build(t, lead.v, lead.n, leader_out, err);
		if (rc != CU_OK)
			api_topology_assignment_dispose(out);
	}
	cu_free(cur.v);
	cu_free(lead.v);
	return rc;
}

int tas_place_group(struct tas_tree *t, const struct tas_request *workers,
    const struct tas_request *leader,
    struct api_topology_assignment *workers_out,
    struct api_topology_assignment *leader_out, char *msg, size_t msg_len,
    cu_error *err)
{
	return tas__place_general(
	    t, workers, leader, workers_out, leader_out, msg, msg_len, err);
}

/* ---- replacement of a failed node with slices ----------------------- */

static struct tas_domain *up_to(struct tas_domain *d, size_t level)
{
	while (d != NULL && d->level > level)
		d = d->parent;
	return d;
}

/* Kueue's findReplacementAssignment for a sliced podSet: the failed
 * node's `need` pods are placed again, the node excluded. When they are
 * not whole slices, the domain of the slice level whose pods they
 * complete (the remaining pods there plus `need` a multiple of the slice
 * size) takes them, pod by pod; otherwise they are placed in slices,
 * within the required domain of the rest of the assignment (anywhere the
 * request allows when preferred or unconstrained). */
int tas__replace_sliced(struct tas_tree *t,
    const struct api_topology_assignment *a, size_t f,
    const struct tas_request *r, struct api_topology_assignment *add, char *msg,
    size_t msg_len, cu_error *err)
{
	struct tas_request q = *r;
	struct tas_domain *within = NULL, *failed = tas__assigned_leaf(t, a, f);
	int32_t need = a->domains[f].count;
	size_t sl, rl = 0, i, j, k;
	int rc;

	memset(add, 0, sizeof(*add));
	if (msg_len > 0)
		msg[0] = '\0';
	if (!level_of(t, r->slice_level, &sl) || r->slice_size < 1)
		return place_in(t, &q, NULL, NULL, failed, add, NULL, msg,
		    msg_len, err); /* setup says why */
	q.count = need;
	if (need % r->slice_size != 0) {
		/* the incomplete slice's domain: of the innermost layer
		 * whose slices the pods break, as Kueue */
		struct tas_slice_layer broken = {r->slice_level, r->slice_size};

		q.slice_level = NULL;
		q.slice_size = 0;
		q.inner = NULL;
		q.n_inner = 0;
		for (k = r->n_inner; k-- > 0;)
			if (r->inner[k].size > 0 &&
			    need % r->inner[k].size != 0) {
				broken = r->inner[k];
				break;
			}
		/* placed in slices of the innermost layer they make whole */
		for (k = r->n_inner; k-- > 0 && q.slice_level == NULL;)
			if (r->inner[k].size > 0 &&
			    need % r->inner[k].size == 0) {
				q.slice_level = r->inner[k].level;
				q.slice_size = r->inner[k].size;
			}
		if (!level_of(t, broken.level, &sl) || broken.size < 1)
			sl = t->n_levels - 1;
		for (i = 0; i < a->n_domains && within == NULL; i++) {
			struct tas_domain *d =
			    i == f ? NULL
				   : up_to(tas__assigned_leaf(t, a, i), sl);
			int64_t used = 0;

			if (d == NULL)
				continue;
			for (j = 0; j < a->n_domains; j++)
				if (j != f &&
				    up_to(tas__assigned_leaf(t, a, j), sl) == d)
					used += a->domains[j].count;
			if ((used + need) % broken.size == 0)
				within = d;
		}
	} else if (r->mode == TAS_REQUIRED && level_of(t, r->level, &rl)) {
		for (i = 0; i < a->n_domains && within == NULL; i++)
			if (i != f)
				within = up_to(tas__assigned_leaf(t, a, i), rl);
	}
	rc =
	    place_in(t, &q, NULL, within, failed, add, NULL, msg, msg_len, err);
	if (rc == TAS_NOFIT)
		snprintf(msg, msg_len,
		    "no replacement for unhealthy node %s: %d pod(s) do not "
		    "fit in the assigned domain",
		    a->domains[f].values[a->levels.n - 1], need);
	return rc;
}
