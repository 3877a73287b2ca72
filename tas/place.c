/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tas/place.c - placement of one podSet in a capacity tree, as Kueue's
 * TAS does it for required, preferred and unconstrained requests with
 * its default (best fit) profile: fit counts per domain, the fitting
 * level, then a greedy descent that keeps the number of domains minimal
 * at every level; with a filter, a leaf counts only the nodes the
 * podSet may use. See tas/tas.h for the rules.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tas/tas_int.h"

struct dlist {
	struct tas_domain **items; /* [owned array, borrowed items] */
	size_t n;
};

static int cmp_fit_desc(const void *pa, const void *pb)
{
	const struct tas_domain *a = *(const struct tas_domain *const *)pa;
	const struct tas_domain *b = *(const struct tas_domain *const *)pb;

	if (a->fit != b->fit)
		return a->fit > b->fit ? -1 : 1;
	/* the lexicographic order of the value paths (tas__order) */
	return a->ord < b->ord ? -1 : a->ord > b->ord;
}

static int cmp_fit_asc(const void *pa, const void *pb)
{
	const struct tas_domain *a = *(const struct tas_domain *const *)pa;
	const struct tas_domain *b = *(const struct tas_domain *const *)pb;

	if (a->fit != b->fit)
		return a->fit < b->fit ? -1 : 1;
	return a->ord < b->ord ? -1 : a->ord > b->ord;
}

static int cmp_key(const void *pa, const void *pb)
{
	const struct tas_domain *a = *(const struct tas_domain *const *)pa;
	const struct tas_domain *b = *(const struct tas_domain *const *)pb;

	/* '\x1f' sorts below every label character: strcmp on the key is
	 * the lexicographic order of the value paths. */
	return strcmp(a->key, b->key);
}

int tas__order(struct tas_tree *t, cu_error *err)
{
	struct tas_domain **tmp = NULL;
	size_t l, i, cap = 0;

	if (!t->ord_stale)
		return CU_OK;
	for (l = 0; l < t->n_levels; l++)
		cap = t->per_level[l].n > cap ? t->per_level[l].n : cap;
	if ((tmp = cu_malloc((cap ? cap : 1) * sizeof(*tmp))) == NULL)
		return cu_error_set(err, CU_ENOMEM, "topology: out of memory");
	for (l = 0; l < t->n_levels; l++) {
		const struct tas_level *lv = &t->per_level[l];

		memcpy(tmp, lv->items, lv->n * sizeof(*tmp));
		qsort(tmp, lv->n, sizeof(*tmp), cmp_key);
		for (i = 0; i < lv->n; i++)
			tmp[i]->ord = i;
	}
	cu_free(tmp);
	t->ord_stale = false;
	return CU_OK;
}

const int64_t *tas__leaf_free(const struct tas_tree *t,
    const struct tas_domain *leaf, const struct tas_filter *f, int64_t *buf,
    size_t *n_nodes)
{
	bool selects = tas_filter_selects(f);
	size_t i, c, n = 0;

	if (!selects && (leaf->n_tainted == 0 || f == NULL ||
			    f->n_tolerations + f->n_flavor_tolerations == 0)) {
		*n_nodes = leaf->n_nodes;
		return leaf->free;
	}
	if (!selects) {
		memcpy(buf, leaf->free, sizeof(leaf->free));
		n = leaf->n_nodes;
	} else {
		for (c = 0; c < t->n_res; c++)
			buf[c] = -leaf->tas[c];
	}
	for (i = 0; i < leaf->n_all; i++) {
		const struct tas_node *nd = leaf->nodes[i];

		if (!nd->present || !nd->schedulable)
			continue;
		if (!selects) {
			if (!nd->tainted ||
			    !tas_filter_tolerates(f, nd->taints, nd->n_taints))
				continue;
		} else if (!tas__node_matches(f, nd)) {
			continue;
		}
		for (c = 0; c < t->n_res; c++)
			buf[c] += nd->alloc[c] - nd->used[c];
		n++;
	}
	*n_nodes = n;
	return buf;
}

/* Pods of a filtered request that fit in a leaf (tas__leaf_free). */
static int64_t leaf_fit_filtered(const struct tas_tree *t,
    const struct tas_domain *leaf, const int *cols, const struct tas_request *r)
{
	int64_t buf[TAS_MAX_RESOURCES];
	size_t n;
	const int64_t *free = tas__leaf_free(t, leaf, r->filter, buf, &n);

	return tas__fit_in(free, n, cols, r);
}

static void fill_counts(
    struct tas_tree *t, const int *cols, const struct tas_request *r)
{
	size_t l = t->n_levels, i;
	bool filtered =
	    r->filter != NULL && (r->filter->n_tolerations > 0 ||
				     r->filter->n_flavor_tolerations > 0 ||
				     tas_filter_selects(r->filter));
	struct tas_level *leaves = &t->per_level[l - 1];

	/* the leaves: the unfiltered loop is the common case */
	if (!filtered)
		for (i = 0; i < leaves->n; i++) {
			struct tas_domain *d = leaves->items[i];

			d->take = 0;
			d->fit = tas__fit_in(d->free, d->n_nodes, cols, r);
		}
	else
		for (i = 0; i < leaves->n; i++) {
			struct tas_domain *d = leaves->items[i];

			d->take = 0;
			d->fit = leaf_fit_filtered(t, d, cols, r);
		}
	l--;
	while (l-- > 0) {
		struct tas_level *lv = &t->per_level[l];

		for (i = 0; i < lv->n; i++) {
			struct tas_domain *d = lv->items[i];
			size_t c;

			d->take = 0;
			d->fit = 0;
			for (c = 0; c < d->n_children; c++)
				d->fit += d->children[c]->fit;
		}
	}
}

/* First domain with the smallest fit >= need, else the first. */
static struct tas_domain *best_fit(
    struct tas_domain *const *ds, size_t n, int64_t need)
{
	struct tas_domain *best = NULL;
	size_t i;

	for (i = 0; i < n; i++)
		if (ds[i]->fit >= need &&
		    (best == NULL || ds[i]->fit < best->fit))
			best = ds[i];
	return best != NULL ? best : ds[0];
}

/* Take pods greedily from sorted ds (best fit for the last domain);
 * out gets the domains used. */
static void take_greedy(
    struct tas_domain *const *ds, size_t n, int64_t count, struct dlist *out)
{
	int64_t rem = count;
	size_t i;

	out->n = 0;
	for (i = 0; i < n && rem > 0; i++) {
		struct tas_domain *d = ds[i];

		if (d->fit <= 0)
			break;
		if (d->fit >= rem) {
			d = best_fit(ds + i, n - i, rem);
			d->take = rem;
			out->items[out->n++] = d;
			return;
		}
		d->take = d->fit;
		rem -= d->fit;
		out->items[out->n++] = d;
	}
}

/* Kueue's least-free-capacity spread: domains in ascending fit, each
 * taken whole (none that holds no pod), the last for the rest; out gets
 * the domains used. */
static void take_least_free(
    struct tas_domain **ds, size_t n, int64_t count, struct dlist *out)
{
	int64_t rem = count;
	size_t i;

	qsort(ds, n, sizeof(*ds), cmp_fit_asc);
	out->n = 0;
	for (i = 0; i < n && rem > 0; i++) {
		struct tas_domain *d = ds[i];

		if (d->fit <= 0)
			continue;
		d->take = d->fit < rem ? d->fit : rem;
		rem -= d->take;
		out->items[out->n++] = d;
	}
}

static int sorted_copy(
    struct tas_domain *const *src, size_t n, struct dlist *out, cu_error *err)
{
	out->items = cu_malloc((n ? n : 1) * sizeof(*out->items));
	if (out->items == NULL)
		return cu_error_set(err, CU_ENOMEM, "topology: out of memory");
	memcpy(out->items, src, n * sizeof(*out->items));
	out->n = n;
	qsort(out->items, n, sizeof(*out->items), cmp_fit_desc);
	return CU_OK;
}

static int no_fit(
    const struct tas_tree *t, int64_t fit, int32_t count, char *msg, size_t len)
{
	if (fit <= 0)
		snprintf(msg, len,
		    "topology \"%s\" doesn't allow to fit any of %d pod(s)",
		    t->name, count);
	else
		snprintf(msg, len,
		    "topology \"%s\" allows to fit only %lld out of %d pod(s)",
		    t->name, (long long)fit, count);
	return TAS_NOFIT;
}

/* The fitting level at or above `l` and its chosen domains (*chosen,
 * takes set). */
static int find_level(struct tas_tree *t, const struct tas_request *r, size_t l,
    size_t *at, struct dlist *chosen, char *msg, size_t len, cu_error *err)
{
	struct tas_level *lv = &t->per_level[l];
	struct tas_domain *top = NULL, *best = NULL;
	struct dlist s;
	int64_t got = 0;
	size_t i;
	int rc;

	if (lv->n == 0) {
		snprintf(
		    msg, len, "no topology domains at level: %s", t->levels[l]);
		return TAS_NOFIT;
	}
	/* One pass finds the largest fit and the best fit (the smallest fit
	 * that holds them all; ties by value path, as the first of the
	 * sorted order): sorting is only needed to spread. */
	for (i = 0; i < lv->n; i++) {
		struct tas_domain *d = lv->items[i];

		if (top == NULL || d->fit > top->fit ||
		    (d->fit == top->fit && d->ord < top->ord))
			top = d;
		if (d->fit >= r->count &&
		    (best == NULL || d->fit < best->fit ||
			(d->fit == best->fit && d->ord < best->ord)))
			best = d;
	}
	if (best != NULL) {
		best->take = r->count;
		chosen->items[0] = best;
		chosen->n = 1;
		*at = l;
		return CU_OK;
	}
	if (r->mode == TAS_REQUIRED)
		return no_fit(t, top->fit, r->count, msg, len);
	if (l > 0 && r->mode == TAS_PREFERRED)
		return find_level(t, r, l - 1, at, chosen, msg, len, err);
	if ((rc = sorted_copy(lv->items, lv->n, &s, err)) != CU_OK)
		return rc;
	/* No domain holds them all (the one domain chosen above is the same
	 * under both of Kueue's profiles). */
	if (r->mode == TAS_UNCONSTRAINED && t->mixed)
		take_least_free(s.items, s.n, r->count, chosen);
	else
		take_greedy(s.items, s.n, r->count, chosen);
	for (i = 0; i < chosen->n; i++)
		got += chosen->items[i]->take;
	cu_free(s.items);
	*at = l;
	if (got < r->count)
		return no_fit(t, got, r->count, msg, len);
	return CU_OK;
}

static int build(struct tas_tree *t, const struct dlist *leaves,
    struct api_topology_assignment *out, cu_error *err)
{
	size_t first = t->host_lowest ? t->n_levels - 1 : 0;
	size_t nl = t->n_levels - first, i, k;

	qsort(leaves->items, leaves->n, sizeof(*leaves->items), cmp_key);
	out->levels.items = cu_calloc(nl, sizeof(char *));
	out->domains =
	    cu_calloc(leaves->n ? leaves->n : 1, sizeof(*out->domains));
	if (out->levels.items == NULL || out->domains == NULL)
		goto nomem;
	out->levels.n = nl;
	for (k = 0; k < nl; k++)
		if ((out->levels.items[k] = cu_strdup(t->levels[first + k])) ==
		    NULL)
			goto nomem;
	for (i = 0; i < leaves->n; i++) {
		const struct tas_domain *d = leaves->items[i];
		struct api_topology_domain *o = &out->domains[out->n_domains];

		if (d->take <= 0)
			continue;
		out->n_domains++;
		o->count = (int32_t)d->take;
		o->values = cu_calloc(nl, sizeof(char *));
		if (o->values == NULL)
			goto nomem;
		for (k = nl; k-- > 0; d = d->parent)
			if ((o->values[k] = cu_strdup(d->value)) == NULL)
				goto nomem;
	}
	return CU_OK;
nomem:
	api_topology_assignment_dispose(out);
	return cu_error_set(err, CU_ENOMEM, "topology: out of memory");
}

int tas__build(struct tas_tree *t, struct tas_domain **leaves, size_t n,
    struct api_topology_assignment *out, cu_error *err)
{
	struct dlist l = {leaves, n};

	memset(out, 0, sizeof(*out));
	return build(t, &l, out, err);
}

int tas_place(struct tas_tree *t, const struct tas_request *r,
    struct api_topology_assignment *out, char *msg, size_t msg_len,
    cu_error *err)
{
	int cols[TAS_MAX_RESOURCES * 4];
	struct dlist chosen = {NULL, 0}, kids = {NULL, 0}, s = {NULL, 0};
	size_t l = t->n_levels - 1, at = 0, i, c, n_all;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = tas__order(t, err)) != CU_OK)
		return rc;
	if (r->slice_level != NULL) /* slices: Kueue's general form */
		return tas__place_general(
		    t, r, NULL, out, NULL, msg, msg_len, err);
	if (msg_len > 0)
		msg[0] = '\0';
	if (r->count < 1 || r->n_per_pod > sizeof(cols) / sizeof(cols[0]))
		return cu_error_set(err, CU_EINVAL, "topology: bad request");
	if (r->mode != TAS_UNCONSTRAINED) {
		for (l = 0; l < t->n_levels; l++)
			if (r->level != NULL &&
			    strcmp(t->levels[l], r->level) == 0)
				break;
		if (l == t->n_levels) {
			snprintf(msg, msg_len,
			    "no requested topology level: %s",
			    r->level ? r->level : "");
			return TAS_NOFIT;
		}
	}
	for (i = 0; i < r->n_per_pod; i++)
		cols[i] = tas__column(t, r->per_pod[i].name, false);
	fill_counts(t, cols, r);
	n_all = 0;
	for (i = 0; i < t->n_levels; i++)
		n_all = t->per_level[i].n > n_all ? t->per_level[i].n : n_all;
	chosen.items = cu_malloc((n_all ? n_all : 1) * sizeof(*chosen.items));
	if (chosen.items == NULL)
		return cu_error_set(err, CU_ENOMEM, "topology: out of memory");
	rc = find_level(t, r, l, &at, &chosen, msg, msg_len, err);
	/* descend: children of the chosen domains, greedily, level by level */
	for (; rc == CU_OK && at + 1 < t->n_levels; at++) {
		kids.n = 0;
		kids.items = cu_malloc(
		    (t->per_level[at + 1].n ? t->per_level[at + 1].n : 1) *
		    sizeof(*kids.items));
		if (kids.items == NULL) {
			rc = cu_error_set(
			    err, CU_ENOMEM, "topology: out of memory");
			break;
		}
		for (i = 0; i < chosen.n; i++)
			for (c = 0; c < chosen.items[i]->n_children; c++)
				kids.items[kids.n++] =
				    chosen.items[i]->children[c];
		rc = sorted_copy(kids.items, kids.n, &s, err);
		cu_free(kids.items);
		if (rc != CU_OK)
			break;
		take_greedy(s.items, s.n, r->count, &chosen);
		cu_free(s.items);
	}
	if (rc == CU_OK)
		rc = build(t, &chosen, out, err);
	cu_free(chosen.items);
	return rc;
}

/* ---- replacement of a failed node ------------------------------------- */

static int cmp_values(const void *pa, const void *pb, size_t nl)
{
	const struct api_topology_domain *a = pa, *b = pb;
	size_t k;
	int c;

	for (k = 0; k < nl; k++)
		if ((c = strcmp(a->values[k], b->values[k])) != 0)
			return c;
	return 0;
}

/* Sort n domains of nl levels by their values. An insertion sort, with
 * the level count passed in rather than left in file-static state for a
 * qsort comparator: the input is the sorted assignment with one domain
 * replaced, so nearly in order already. */
static void sort_domains(struct api_topology_domain *d, size_t n, size_t nl)
{
	size_t i, j;

	for (i = 1; i < n; i++) {
		struct api_topology_domain x = d[i];

		for (j = i; j > 0 && cmp_values(&d[j - 1], &x, nl) > 0; j--)
			d[j] = d[j - 1];
		d[j] = x;
	}
}

/* out = a without domain `skip`, plus add's domains (merged). */
static int merge(const struct api_topology_assignment *a, size_t skip,
    const struct api_topology_assignment *add,
    struct api_topology_assignment *out, cu_error *err)
{
	size_t nl = a->levels.n, i, j, k;

	memset(out, 0, sizeof(*out));
	out->levels.items = cu_calloc(nl ? nl : 1, sizeof(char *));
	out->domains =
	    cu_calloc(a->n_domains + add->n_domains + 1, sizeof(*out->domains));
	if (out->levels.items == NULL || out->domains == NULL)
		goto nomem;
	out->levels.n = nl;
	for (k = 0; k < nl; k++)
		if ((out->levels.items[k] = cu_strdup(a->levels.items[k])) ==
		    NULL)
			goto nomem;
	for (i = 0; i < a->n_domains + add->n_domains; i++) {
		const struct api_topology_domain *d =
		    i < a->n_domains ? &a->domains[i]
				     : &add->domains[i - a->n_domains];
		struct api_topology_domain *o;

		if (i == skip)
			continue;
		for (j = 0; j < out->n_domains; j++)
			if (cmp_values(&out->domains[j], d, nl) == 0)
				break;
		if (j < out->n_domains) {
			out->domains[j].count += d->count;
			continue;
		}
		o = &out->domains[out->n_domains++];
		o->count = d->count;
		if ((o->values = cu_calloc(nl ? nl : 1, sizeof(char *))) ==
		    NULL)
			goto nomem;
		for (k = 0; k < nl; k++)
			if ((o->values[k] = cu_strdup(d->values[k])) == NULL)
				goto nomem;
	}
	sort_domains(out->domains, out->n_domains, nl);
	return CU_OK;
nomem:
	api_topology_assignment_dispose(out);
	return cu_error_set(err, CU_ENOMEM, "topology: out of memory");
}

int tas_replace(struct tas_tree *t, const struct api_topology_assignment *a,
    const char *node, const struct tas_request *r,
    struct api_topology_assignment *out, char *msg, size_t msg_len,
    cu_error *err)
{
	int cols[TAS_MAX_RESOURCES * 4];
	struct dlist chosen = {NULL, 0}, kids = {NULL, 0}, s = {NULL, 0};
	struct api_topology_assignment add = {{NULL, 0}, NULL, 0};
	struct tas_domain *failed = NULL, *anchor = NULL, *d;
	size_t nl = a->levels.n, f, l = 0, i, c, n_all = 0;
	int64_t need;
	int rc = CU_OK;

	memset(out, 0, sizeof(*out));
	if (msg_len > 0)
		msg[0] = '\0';
	if ((rc = tas__order(t, err)) != CU_OK)
		return rc;
	if (r->n_per_pod > sizeof(cols) / sizeof(cols[0]) || nl == 0)
		return cu_error_set(err, CU_EINVAL, "topology: bad request");
	for (f = 0; f < a->n_domains; f++)
		if (strcmp(a->domains[f].values[nl - 1], node) == 0)
			break;
	if (f == a->n_domains)
		return cu_error_set(
		    err, CU_EINVAL, "topology: node %s not assigned", node);
	need = a->domains[f].count;
	if (r->slice_level != NULL) { /* slices: tas/slice.c */
		rc = tas__replace_sliced(t, a, f, r, &add, msg, msg_len, err);
		if (rc == CU_OK)
			rc = merge(a, f, &add, out, err);
		api_topology_assignment_dispose(&add);
		return rc;
	}
	if (r->mode != TAS_UNCONSTRAINED && r->level != NULL)
		for (l = 0; l < t->n_levels; l++)
			if (strcmp(t->levels[l], r->level) == 0)
				break;
	if (l == t->n_levels)
		l = 0;
	for (i = 0; i < r->n_per_pod; i++)
		cols[i] = tas__column(t, r->per_pod[i].name, false);
	fill_counts(t, cols, r);
	failed = tas__assigned_leaf(t, a, f);
	if (failed != NULL) {
		int64_t lost = failed->fit;

		for (d = failed; d != NULL; d = d->parent)
			d->fit -= lost;
	}
	for (i = 0; i < a->n_domains && anchor == NULL; i++)
		if (i != f)
			anchor = tas__assigned_leaf(t, a, i);
	if (anchor == NULL)
		anchor = failed;
	while (anchor != NULL && anchor->level > l)
		anchor = anchor->parent;
	for (i = 0; i < t->n_levels; i++)
		n_all = t->per_level[i].n > n_all ? t->per_level[i].n : n_all;
	chosen.items = cu_malloc((n_all ? n_all : 1) * sizeof(*chosen.items));
	if (chosen.items == NULL)
		return cu_error_set(err, CU_ENOMEM, "topology: out of memory");
	if (anchor != NULL) {
		if (anchor->fit >= need) {
			anchor->take = need;
			chosen.items[chosen.n++] = anchor;
		}
	} else {
		for (i = 0; i < t->per_level[l].n; i++) {
			d = t->per_level[l].items[i];
			if (d->fit >= need &&
			    (chosen.n == 0 || d->fit < chosen.items[0]->fit))
				chosen.items[0] = d, chosen.n = 1;
		}
	}
	if (chosen.n == 0) {
		snprintf(msg, msg_len,
		    "no replacement for unhealthy node %s: %lld pod(s) do not "
		    "fit in the assigned domain",
		    node, (long long)need);
		cu_free(chosen.items);
		return TAS_NOFIT;
	}
	for (l = chosen.items[0]->level; rc == CU_OK && l + 1 < t->n_levels;
	     l++) {
		kids.n = 0;
		kids.items = cu_malloc(
		    (t->per_level[l + 1].n ? t->per_level[l + 1].n : 1) *
		    sizeof(*kids.items));
		if (kids.items == NULL) {
			rc = cu_error_set(
			    err, CU_ENOMEM, "topology: out of memory");
			break;
		}
		for (i = 0; i < chosen.n; i++)
			for (c = 0; c < chosen.items[i]->n_children; c++)
				kids.items[kids.n++] =
				    chosen.items[i]->children[c];
		rc = sorted_copy(kids.items, kids.n, &s, err);
		cu_free(kids.items);
		if (rc != CU_OK)
			break;
		take_greedy(s.items, s.n, need, &chosen);
		cu_free(s.items);
	}
	if (rc == CU_OK)
		rc = build(t, &chosen, &add, err);
	cu_free(chosen.items);
	if (rc == CU_OK)
		rc = merge(a, f, &add, out, err);
	api_topology_assignment_dispose(&add);
	return rc;
}
