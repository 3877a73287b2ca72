/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tas/tree.c - the capacity tree of a Topology: domains created from the
 * level labels of Nodes, and the incremental updates of leaf capacity
 * from Node changes, usage charged to nodes (bound and nominated pods)
 * and admitted TAS assignments. Each node keeps its labels and
 * scheduling taints, and each leaf the list of its nodes, for the
 * placements that filter nodes (tas/filter.c, tas/place.c).
 */
#include <stdlib.h>
#include <string.h>

#include "tas/tas_int.h"

int tas__column(struct tas_tree *t, const char *name, bool add)
{
	size_t i;

	for (i = 0; i < t->n_res; i++)
		if (strcmp(t->res[i], name) == 0)
			return (int)i;
	if (!add)
		return -1;
	if (t->n_res == TAS_MAX_RESOURCES)
		return -2;
	t->res[t->n_res] = cu_strdup(name);
	if (t->res[t->n_res] == NULL)
		return -3;
	return (int)t->n_res++;
}

static int column_or_fail(
    struct tas_tree *t, const char *name, int *col, cu_error *err)
{
	*col = tas__column(t, name, true);
	if (*col == -2)
		return cu_error_set(err, CU_ERANGE,
		    "topology %s: more than %d resources", t->name,
		    TAS_MAX_RESOURCES);
	if (*col < 0)
		return cu_error_set(err, CU_ENOMEM, "topology: out of memory");
	return CU_OK;
}

int tas_tree_new(const char *name, const char *const *levels, size_t n_levels,
    struct tas_tree **out, cu_error *err)
{
	struct tas_tree *t;
	size_t i;

	*out = NULL;
	if (n_levels == 0)
		return cu_error_set(
		    err, CU_EINVAL, "topology %s: no levels", name);
	t = cu_calloc(1, sizeof(*t));
	if (t == NULL)
		return cu_error_set(err, CU_ENOMEM, "topology: out of memory");
	cu_map_init_str(&t->nodes);
	cu_map_init_str(&t->domains);
	cu_map_init_str(&t->leaf_by_value);
	t->name = cu_strdup(name);
	t->levels = cu_calloc(n_levels, sizeof(char *));
	t->per_level = cu_calloc(n_levels, sizeof(*t->per_level));
	if (t->name == NULL || t->levels == NULL || t->per_level == NULL)
		goto nomem;
	t->n_levels = n_levels;
	for (i = 0; i < n_levels; i++) {
		t->levels[i] = cu_strdup(levels[i]);
		if (t->levels[i] == NULL)
			goto nomem;
	}
	t->host_lowest = strcmp(levels[n_levels - 1], TAS_HOSTNAME_LABEL) == 0;
	if (tas__column(t, "pods", true) != TAS_PODS)
		goto nomem;
	*out = t;
	return CU_OK;
nomem:
	tas_tree_free(t);
	return cu_error_set(err, CU_ENOMEM, "topology: out of memory");
}

static void taints_free(struct tas_taint *ts, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		cu_free((char *)ts[i].key);
		cu_free((char *)ts[i].value);
		cu_free((char *)ts[i].effect);
	}
	cu_free(ts);
}

static void node_free(struct tas_node *n)
{
	api_strmap_dispose(&n->labels);
	taints_free(n->taints, n->n_taints);
	cu_free(n->name);
	cu_free(n);
}

void tas_tree_set_mixed_profile(struct tas_tree *t, bool on)
{
	t->mixed = on;
}

void tas_tree_free(struct tas_tree *t)
{
	cu_map_iter it = CU_MAP_ITER_INIT;
	void *v;
	size_t i, k;

	if (t == NULL)
		return;
	while (cu_map_next(&t->nodes, &it, NULL, &v))
		node_free(v);
	for (i = 0; t->per_level && i < t->n_levels; i++) {
		for (k = 0; k < t->per_level[i].n; k++) {
			cu_free(t->per_level[i].items[k]->key);
			cu_free(t->per_level[i].items[k]->children);
			cu_free(t->per_level[i].items[k]->nodes);
			cu_free(t->per_level[i].items[k]);
		}
		cu_free(t->per_level[i].items);
	}
	cu_free(t->per_level);
	for (i = 0; t->levels && i < t->n_levels; i++)
		cu_free(t->levels[i]);
	cu_free(t->levels);
	for (i = 0; i < t->n_res; i++)
		cu_free(t->res[i]);
	cu_map_dispose(&t->nodes);
	cu_map_dispose(&t->domains);
	cu_map_dispose(&t->leaf_by_value);
	cu_free(t->name);
	cu_free(t);
}

static int append_ptr(void ***arr, size_t *n, size_t *cap, void *p)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 4;
		void **a = cu_realloc(*arr, nc * sizeof(void *));

		if (a == NULL)
			return CU_ENOMEM;
		*arr = a;
		*cap = nc;
	}
	(*arr)[(*n)++] = p;
	return CU_OK;
}

/* The domain of values[0..level], created (with its ancestors) when
 * missing; NULL on allocation failure. */
static struct tas_domain *domain_at(
    struct tas_tree *t, const char *const *values, size_t level)
{
	struct tas_domain *parent = NULL, *d;
	size_t len = 0, i, at = 0;
	char *key;
	int rc;

	for (i = 0; i <= level; i++)
		len += strlen(values[i]) + 1;
	key = cu_malloc(len);
	if (key == NULL)
		return NULL;
	for (i = 0; i <= level; i++) {
		size_t l = strlen(values[i]);

		memcpy(key + at, values[i], l);
		at += l;
		key[at++] = i == level ? '\0' : '\x1f';
	}
	d = cu_map_get(&t->domains, key);
	if (d != NULL) {
		cu_free(key);
		return d;
	}
	if (level > 0 && (parent = domain_at(t, values, level - 1)) == NULL)
		goto fail;
	d = cu_calloc(1, sizeof(*d));
	if (d == NULL)
		goto fail;
	d->key = key;
	d->value = key + (at - strlen(values[level]) - 1);
	d->level = level;
	d->parent = parent;
	if (cu_map_reserve(&t->domains, 1) != CU_OK ||
	    (level == t->n_levels - 1 && t->host_lowest &&
		cu_map_reserve(&t->leaf_by_value, 1) != CU_OK) ||
	    append_ptr((void ***)&t->per_level[level].items,
		&t->per_level[level].n, &t->per_level[level].cap, d) != CU_OK) {
		cu_free(d);
		goto fail;
	}
	if (parent != NULL &&
	    append_ptr((void ***)&parent->children, &parent->n_children,
		&parent->cap_children, d) != CU_OK) {
		t->per_level[level].n--;
		cu_free(d);
		goto fail;
	}
	t->ord_stale = true;
	/* Both cannot fail: room was reserved above. */
	rc = cu_map_put(&t->domains, d->key, d, NULL);
	if (rc == CU_OK && level == t->n_levels - 1 && t->host_lowest)
		rc = cu_map_put(&t->leaf_by_value, d->value, d, NULL);
	(void)rc;
	return d;
fail:
	cu_free(key);
	return NULL;
}

/* Add (sign 1) or take away (-1) a node's contribution to its leaf. */
static void contribute(struct tas_tree *t, struct tas_node *n, int sign)
{
	size_t r;

	if (!n->present || !n->schedulable || n->leaf == NULL)
		return;
	if (n->tainted) { /* counted by the filters that tolerate it */
		if (sign > 0)
			n->leaf->n_tainted++;
		else
			n->leaf->n_tainted--;
		return;
	}
	for (r = 0; r < t->n_res; r++)
		n->leaf->free[r] += sign * (n->alloc[r] - n->used[r]);
	if (sign > 0)
		n->leaf->n_nodes++;
	else
		n->leaf->n_nodes--;
}

static struct tas_node *node_get(
    struct tas_tree *t, const char *name, cu_error *err)
{
	struct tas_node *n = cu_map_get(&t->nodes, name);

	if (n != NULL)
		return n;
	n = cu_calloc(1, sizeof(*n));
	if (n == NULL || (n->name = cu_strdup(name)) == NULL ||
	    cu_map_put(&t->nodes, n->name, n, NULL) != CU_OK) {
		if (n != NULL)
			cu_free(n->name);
		cu_free(n);
		cu_error_set(err, CU_ENOMEM, "topology: out of memory");
		return NULL;
	}
	return n;
}

int tas_tree_node_set(struct tas_tree *t, const char *node,
    const struct api_strmap *labels, const struct tas_amount *alloc,
    size_t n_alloc, bool schedulable, cu_error *err)
{
	return tas_tree_node_put(
	    t, node, labels, alloc, n_alloc, NULL, 0, schedulable, err);
}

static int cmp_label(const void *a, const void *b)
{
	return strcmp(
	    ((const struct api_kv *)a)->key, ((const struct api_kv *)b)->key);
}

/* Take n out of its leaf's node list. */
static void leaf_unlist(struct tas_node *n)
{
	struct tas_domain *d = n->leaf;
	size_t i;

	if (d == NULL)
		return;
	for (i = 0; i < d->n_all; i++)
		if (d->nodes[i] == n) {
			d->nodes[i] = d->nodes[--d->n_all];
			return;
		}
}

/* Copies of the scheduling taints of ts into *out; false when out of
 * memory. */
static bool taints_copy(
    const struct tas_taint *ts, size_t n, struct tas_taint **out, size_t *n_out)
{
	size_t i;

	*out = NULL;
	*n_out = 0;
	for (i = 0; i < n; i++) {
		struct tas_taint *o;

		if (!tas__scheduling_taint(ts[i].effect))
			continue;
		if (*out == NULL &&
		    (*out = cu_calloc(n, sizeof(**out))) == NULL)
			return false;
		o = &(*out)[(*n_out)++];
		o->key = cu_strdup(ts[i].key ? ts[i].key : "");
		o->value = ts[i].value ? cu_strdup(ts[i].value) : NULL;
		o->effect = cu_strdup(ts[i].effect);
		if (o->key == NULL || o->effect == NULL ||
		    (ts[i].value != NULL && o->value == NULL))
			return false;
	}
	return true;
}

int tas_tree_node_put(struct tas_tree *t, const char *node,
    const struct api_strmap *labels, const struct tas_amount *alloc,
    size_t n_alloc, const struct tas_taint *taints, size_t n_taints,
    bool schedulable, cu_error *err)
{
	struct api_strmap lcopy = {NULL, 0};
	struct tas_taint *tcopy = NULL;
	size_t n_tcopy = 0;
	const char *values[16];
	struct tas_domain *leaf = NULL;
	struct tas_node *n;
	int cols[TAS_MAX_RESOURCES * 4];
	size_t i;
	int rc;

	if (n_alloc > sizeof(cols) / sizeof(cols[0]))
		return cu_error_set(err, CU_ERANGE,
		    "node %s: too many "
		    "resources",
		    node);
	for (i = 0; i < n_alloc; i++)
		if ((rc = column_or_fail(t, alloc[i].name, &cols[i], err)) !=
		    CU_OK)
			return rc;
	for (i = 0; i < t->n_levels && i < 16; i++)
		if ((values[i] = api_strmap_get(labels, t->levels[i])) == NULL)
			break;
	if (i == t->n_levels) {
		leaf = domain_at(t, values, t->n_levels - 1);
		if (leaf == NULL)
			return cu_error_set(
			    err, CU_ENOMEM, "topology: out of memory");
	}
	for (i = 0; labels != NULL && i < labels->n; i++)
		if (api_strmap_set(&lcopy, labels->items[i].key,
			labels->items[i].value, err) != CU_OK)
			goto nomem;
	if (lcopy.n > 1)
		qsort(lcopy.items, lcopy.n, sizeof(*lcopy.items), cmp_label);
	if (!taints_copy(taints, n_taints, &tcopy, &n_tcopy))
		goto nomem;
	if ((n = node_get(t, node, err)) == NULL)
		goto nomem;
	if (leaf != NULL && leaf != n->leaf &&
	    append_ptr((void ***)&leaf->nodes, &leaf->n_all, &leaf->cap_all,
		n) != CU_OK)
		goto nomem; /* a new node stays absent: contributes nothing */
	contribute(t, n, -1);
	if (leaf != n->leaf)
		leaf_unlist(n);
	memset(n->alloc, 0, sizeof(n->alloc));
	n->alloc[TAS_PODS] = TAS_PODS_UNLIMITED;
	for (i = 0; i < n_alloc; i++)
		n->alloc[cols[i]] = alloc[i].value;
	n->leaf = leaf;
	n->present = true;
	n->schedulable = schedulable;
	api_strmap_dispose(&n->labels);
	n->labels = lcopy;
	taints_free(n->taints, n->n_taints);
	n->taints = tcopy;
	n->n_taints = n_tcopy;
	n->tainted = n_tcopy > 0;
	contribute(t, n, 1);
	return CU_OK;
nomem:
	api_strmap_dispose(&lcopy);
	taints_free(tcopy, n_tcopy);
	return cu_error_set(err, CU_ENOMEM, "topology: out of memory");
}

void tas_tree_node_remove(struct tas_tree *t, const char *node)
{
	struct tas_node *n = cu_map_get(&t->nodes, node);

	if (n == NULL)
		return;
	contribute(t, n, -1);
	leaf_unlist(n);
	cu_map_del(&t->nodes, node);
	node_free(n);
}

int tas_tree_node_usage(struct tas_tree *t, const char *node,
    const struct tas_amount *req, size_t n_req, int sign, cu_error *err)
{
	struct tas_node *n;
	size_t i;
	int col, rc;

	for (i = 0; i < n_req; i++)
		if ((rc = column_or_fail(t, req[i].name, &col, err)) != CU_OK)
			return rc;
	if ((n = node_get(t, node, err)) == NULL)
		return CU_ENOMEM;
	contribute(t, n, -1);
	for (i = 0; i < n_req; i++) {
		col = tas__column(t, req[i].name, false);
		if (col != TAS_PODS)
			n->used[col] += sign * req[i].value;
	}
	n->used[TAS_PODS] += sign;
	contribute(t, n, 1);
	return CU_OK;
}

/* The leaf an assignment domain names, or NULL. */
struct tas_domain *tas__assigned_leaf(
    struct tas_tree *t, const struct api_topology_assignment *a, size_t i)
{
	const struct api_topology_domain *d = &a->domains[i];
	const char *values[16];
	size_t k, len = 0, at = 0;
	struct tas_domain *leaf;
	char *key;

	if (a->levels.n == 1 && t->host_lowest &&
	    strcmp(a->levels.items[0], TAS_HOSTNAME_LABEL) == 0)
		return cu_map_get(&t->leaf_by_value, d->values[0]);
	if (a->levels.n != t->n_levels || a->levels.n > 16)
		return NULL;
	for (k = 0; k < a->levels.n; k++) {
		values[k] = d->values[k];
		len += strlen(values[k]) + 1;
	}
	key = cu_malloc(len);
	if (key == NULL)
		return NULL;
	for (k = 0; k < a->levels.n; k++) {
		size_t l = strlen(values[k]);

		memcpy(key + at, values[k], l);
		at += l;
		key[at++] = k + 1 == a->levels.n ? '\0' : '\x1f';
	}
	leaf = cu_map_get(&t->domains, key);
	cu_free(key);
	return leaf != NULL && leaf->level == t->n_levels - 1 ? leaf : NULL;
}

int tas_tree_assignment_usage(struct tas_tree *t,
    const struct api_topology_assignment *a, const struct tas_amount *req,
    size_t n_req, int sign, cu_error *err)
{
	int cols[TAS_MAX_RESOURCES * 4];
	size_t i, r;
	int rc;

	if (n_req > sizeof(cols) / sizeof(cols[0]))
		return cu_error_set(err, CU_ERANGE, "too many resources");
	for (r = 0; r < n_req; r++)
		if ((rc = column_or_fail(t, req[r].name, &cols[r], err)) !=
		    CU_OK)
			return rc;
	for (i = 0; i < a->n_domains; i++) {
		struct tas_domain *leaf = tas__assigned_leaf(t, a, i);

		if (leaf == NULL)
			continue;
		for (r = 0; r < n_req; r++)
			if (cols[r] != TAS_PODS) {
				int64_t u = sign *
					    (int64_t)a->domains[i].count *
					    req[r].value;

				leaf->free[cols[r]] -= u;
				leaf->tas[cols[r]] += u;
			}
		leaf->free[TAS_PODS] -= sign * (int64_t)a->domains[i].count;
		leaf->tas[TAS_PODS] += sign * (int64_t)a->domains[i].count;
	}
	return CU_OK;
}

int64_t tas_tree_leaf_free(
    const struct tas_tree *t, const char *value, const char *res)
{
	const struct tas_level *l = &t->per_level[t->n_levels - 1];
	int col = tas__column((struct tas_tree *)t, res, false);
	size_t i;

	if (col < 0)
		return -1;
	for (i = 0; i < l->n; i++)
		if (strcmp(l->items[i]->value, value) == 0)
			return l->items[i]->free[col];
	return -1;
}
