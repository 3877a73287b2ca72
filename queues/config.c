/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queues/config.c - the configuration half of the queueing model: the
 * state's lifecycle, interning of resource and flavor names to small ids,
 * and create/replace/delete of ResourceFlavors, ClusterQueues, Cohorts and
 * LocalQueues. A change only marks the state dirty; que_rebuild() (see
 * quota.c) relinks the trees, so a batch of changes costs one rebuild.
 */
#include <stdio.h>
#include <string.h>

#include "queues/queues_int.h"

static bool empty(const char *s)
{
	return !s || !*s;
}

int que_state_new(que_state **out, cu_error *err)
{
	que_state *st = cu_calloc(1, sizeof(*st));

	*out = NULL;
	if (!st)
		return cu_error_set(
		    err, CU_ENOMEM, "queue state: out of memory");
	cu_map_init_str(&st->res_map);
	que_flavor_map_init_str(&st->flavor_map);
	que_cq_map_init_str(&st->cq_map);
	que_cohort_map_init_str(&st->cohort_map);
	que_lq_map_init_parts(&st->lq_map, 2);
	que_wl_map_init_str(&st->wl_index);
	que_wl_name_map_init_parts(&st->wl_by_name, 2);
	*out = st;
	return CU_OK;
}

static void groups_free(struct que_group *g, size_t n)
{
	size_t i;

	for (i = 0; g && i < n; i++) {
		cu_free(g[i].res);
		cu_free(g[i].flv);
	}
	cu_free(g);
}

void que_state_free(que_state *st)
{
	cu_map_iter it = CU_MAP_ITER_INIT;
	struct que_wl *wl;
	size_t i;

	if (!st)
		return;
	while (que_wl_map_next(&st->wl_index, &it, &wl))
		cu_free(wl);
	que_wl_map_dispose(&st->wl_index);
	que_wl_name_map_dispose(&st->wl_by_name);
	que_resources_free(st);
	for (i = 0; i < st->n_res; i++)
		cu_free(st->res_names[i]);
	cu_free(st->res_names);
	for (i = 0; i < st->n_flavors; i++) {
		cu_free(st->flavors[i]->name);
		cu_free(st->flavors[i]->block);
		cu_free(st->flavors[i]);
	}
	cu_free(st->flavors);
	for (i = 0; i < st->n_cqs; i++) {
		struct que_cq *cq = st->cqs[i];

		cu_free(cq->node.cells);
		cu_free(cq->name);
		cu_free(cq->cohort_name);
		cu_free(cq->refused);
		cu_free(cq->checks_message);
		groups_free(cq->groups, cq->n_groups);
		cu_free(cq->heap);
		cu_free(cq);
	}
	cu_free(st->cqs);
	for (i = 0; i < st->n_cohorts; i++) {
		struct que_cohort *co = st->cohorts[i];

		cu_free(co->node.cells);
		cu_free(co->name);
		cu_free(co->parent_name);
		groups_free(co->groups, co->n_groups);
		cu_free(co->kids);
		cu_free(co->cqs);
		cu_free(co);
	}
	cu_free(st->cohorts);
	for (i = 0; i < st->n_lqs; i++) {
		cu_free(st->lqs[i]->key);
		cu_free(st->lqs[i]->ns);
		cu_free(st->lqs[i]->name);
		cu_free(st->lqs[i]->cq_name);
		cu_free(st->lqs[i]);
	}
	cu_free(st->lqs);
	cu_free(st->fr_table);
	cu_free(st->fr_flavor);
	cu_free(st->fr_res);
	cu_free(st->backoff);
	cu_free(st->heads);
	cu_map_dispose(&st->res_map);
	que_flavor_map_dispose(&st->flavor_map);
	que_cq_map_dispose(&st->cq_map);
	que_cohort_map_dispose(&st->cohort_map);
	que_lq_map_dispose(&st->lq_map);
	cu_free(st);
}

/* ---- interning ------------------------------------------------------- */

static int intern_res(que_state *st, const char *name, uint32_t *out)
{
	void *v = cu_map_get(&st->res_map, name);
	size_t cap = st->cap_res;
	char *copy;

	if (v) {
		*out = (uint32_t)((uintptr_t)v - 1);
		return CU_OK;
	}
	if (cu_grow(
		(void **)&st->res_names, &cap, st->n_res + 1, sizeof(char *)))
		return CU_ENOMEM;
	st->cap_res = (uint32_t)cap;
	copy = cu_strdup(name);
	if (!copy)
		return CU_ENOMEM;
	if (cu_map_put(
		&st->res_map, copy, (void *)(uintptr_t)(st->n_res + 1), NULL)) {
		cu_free(copy);
		return CU_ENOMEM;
	}
	st->res_names[st->n_res] = copy;
	*out = st->n_res++;
	return CU_OK;
}

static int intern_flavor(
    que_state *st, const char *name, struct que_flavor **out)
{
	struct que_flavor *f = que_flavor_map_get(&st->flavor_map, name);
	size_t cap = st->cap_flavors;

	if (f) {
		*out = f;
		return CU_OK;
	}
	if (cu_grow((void **)&st->flavors, &cap, st->n_flavors + 1,
		sizeof(*st->flavors)))
		return CU_ENOMEM;
	st->cap_flavors = (uint32_t)cap;
	f = cu_calloc(1, sizeof(*f));
	if (!f)
		return CU_ENOMEM;
	f->name = cu_strdup(name);
	if (!f->name || que_flavor_map_put(&st->flavor_map, f->name, f)) {
		cu_free(f->name);
		cu_free(f);
		return CU_ENOMEM;
	}
	f->id = st->n_flavors;
	st->flavors[st->n_flavors++] = f;
	*out = f;
	return CU_OK;
}

static int intern_fr(que_state *st, uint32_t flv, uint32_t res, uint32_t *out)
{
	size_t cap;

	if (flv >= st->fr_rows || res >= st->fr_cols) {
		uint32_t rows = st->fr_rows, cols = st->fr_cols, r, c;
		uint32_t *t;

		while (rows <= flv)
			rows = rows ? rows * 2 : 8;
		while (cols <= res)
			cols = cols ? cols * 2 : 8;
		t = cu_malloc((size_t)rows * cols * sizeof(*t));
		if (!t)
			return CU_ENOMEM;
		memset(t, 0xff, (size_t)rows * cols * sizeof(*t));
		for (r = 0; r < st->fr_rows; r++)
			for (c = 0; c < st->fr_cols; c++)
				t[r * cols + c] =
				    st->fr_table[r * st->fr_cols + c];
		cu_free(st->fr_table);
		st->fr_table = t;
		st->fr_rows = rows;
		st->fr_cols = cols;
	}
	if (st->fr_table[flv * st->fr_cols + res] != UINT32_MAX) {
		*out = st->fr_table[flv * st->fr_cols + res];
		return CU_OK;
	}
	cap = st->cap_fr;
	if (cu_grow(
		(void **)&st->fr_flavor, &cap, st->n_fr + 1, sizeof(uint32_t)))
		return CU_ENOMEM;
	cap = st->cap_fr;
	if (cu_grow((void **)&st->fr_res, &cap, st->n_fr + 1, sizeof(uint32_t)))
		return CU_ENOMEM;
	st->cap_fr = (uint32_t)cap;
	st->fr_flavor[st->n_fr] = flv;
	st->fr_res[st->n_fr] = res;
	st->fr_table[flv * st->fr_cols + res] = st->n_fr;
	*out = st->n_fr++;
	return CU_OK;
}

uint32_t que_fr_find(const que_state *st, uint32_t flavor, uint32_t res)
{
	if (flavor >= st->fr_rows || res >= st->fr_cols)
		return UINT32_MAX;
	return st->fr_table[flavor * st->fr_cols + res];
}

uint32_t que_fr_flavor(const que_state *st, uint32_t fr)
{
	return st->fr_flavor[fr];
}

uint32_t que_fr_resource(const que_state *st, uint32_t fr)
{
	return st->fr_res[fr];
}

uint32_t que_fr_count(const que_state *st)
{
	return st->n_fr;
}

const char *que_resource_name(const que_state *st, uint32_t res)
{
	return res < st->n_res ? st->res_names[res] : "?";
}

uint32_t que_resource_count(const que_state *st)
{
	return st->n_res;
}

const struct que_flavor *que_flavor_by_id(const que_state *st, uint32_t id)
{
	return id < st->n_flavors ? st->flavors[id] : NULL;
}

int que_intern_resource(que_state *st, const char *name, uint32_t *out)
{
	return intern_res(st, name, out);
}

/* ---- flavors --------------------------------------------------------- */

int que_flavor_set(
    que_state *st, const struct que_flavor_spec *spec, cu_error *err)
{
	struct que_flavor *f;
	size_t sz, i;
	char *p;
	void *block;

	if (empty(spec->name))
		return cu_error_set(
		    err, CU_EINVAL, "resourceFlavor: empty name");
	if (spec->n_node_labels > 8 || spec->n_taints > 8 ||
	    spec->n_tolerations > 8)
		return cu_error_set(err, CU_EINVAL,
		    "resourceFlavor %s: at most 8 nodeLabels, nodeTaints and "
		    "tolerations",
		    spec->name);
	/* One block for the arrays and their strings: a flavor is replaced
	 * as a whole, never edited. */
	sz = spec->n_node_labels * sizeof(struct que_kv) +
	     spec->n_taints * sizeof(struct que_taint) +
	     spec->n_tolerations * sizeof(struct que_toleration);
	for (i = 0; i < spec->n_node_labels; i++)
		sz += strlen(spec->node_labels[i].key) +
		      strlen(spec->node_labels[i].value
				 ? spec->node_labels[i].value
				 : "") +
		      2;
	for (i = 0; i < spec->n_taints; i++)
		sz +=
		    strlen(spec->taints[i].key) +
		    strlen(spec->taints[i].value ? spec->taints[i].value : "") +
		    2;
	for (i = 0; i < spec->n_tolerations; i++)
		sz += strlen(spec->tolerations[i].key ? spec->tolerations[i].key
						      : "") +
		      strlen(spec->tolerations[i].value
				 ? spec->tolerations[i].value
				 : "") +
		      2;
	if (intern_flavor(st, spec->name, &f))
		return cu_error_set(err, CU_ENOMEM,
		    "resourceFlavor %s: out of "
		    "memory",
		    spec->name);
	block = cu_malloc(sz ? sz : 1);
	if (!block)
		return cu_error_set(err, CU_ENOMEM,
		    "resourceFlavor %s: out of "
		    "memory",
		    spec->name);
	cu_free(f->block);
	f->block = block;
	f->labels = block;
	f->taints = (struct que_taint *)(f->labels + spec->n_node_labels);
	f->tolerations = (struct que_toleration *)(f->taints + spec->n_taints);
	p = (char *)(f->tolerations + spec->n_tolerations);
#define COPY_STR(dst, src)                                                     \
	do {                                                                   \
		const char *s_ = (src) ? (src) : "";                           \
		size_t l_ = strlen(s_) + 1;                                    \
		memcpy(p, s_, l_);                                             \
		(dst) = p;                                                     \
		p += l_;                                                       \
	} while (0)
	for (i = 0; i < spec->n_node_labels; i++) {
		COPY_STR(f->labels[i].key, spec->node_labels[i].key);
		COPY_STR(f->labels[i].value, spec->node_labels[i].value);
	}
	for (i = 0; i < spec->n_taints; i++) {
		f->taints[i] = spec->taints[i];
		COPY_STR(f->taints[i].key, spec->taints[i].key);
		COPY_STR(f->taints[i].value, spec->taints[i].value);
	}
	for (i = 0; i < spec->n_tolerations; i++) {
		f->tolerations[i] = spec->tolerations[i];
		COPY_STR(f->tolerations[i].key, spec->tolerations[i].key);
		COPY_STR(f->tolerations[i].value, spec->tolerations[i].value);
	}
#undef COPY_STR
	f->n_labels = spec->n_node_labels;
	f->n_taints = spec->n_taints;
	f->n_tolerations = spec->n_tolerations;
	f->exists = true;
	st->dirty = true;
	return CU_OK;
}

int que_flavor_delete(que_state *st, const char *name, cu_error *err)
{
	struct que_flavor *f = que_flavor_map_get(&st->flavor_map, name);

	if (!f || !f->exists)
		return cu_error_set(
		    err, CU_ENOTFOUND, "resourceFlavor %s not found", name);
	f->exists = false;
	st->dirty = true;
	return CU_OK;
}

struct que_flavor *que_flavor_get(que_state *st, const char *name)
{
	struct que_flavor *f = que_flavor_map_get(&st->flavor_map, name);

	return f && f->exists ? f : NULL;
}

/* ---- resource groups (CQs and cohorts) -------------------------------- */

struct quota_item {
	uint32_t fr;
	struct que_quota q;
};

/*
 * Validate and intern resource groups into `out` and a flat list of
 * quotas. `limits` says whether borrowing/lending limits may be set
 * (Kueue: only with a cohort / only for a cohort with a parent).
 */
/* One resource quota rq of flavor fid (fq) in group qg, appended to
 * it[*ni] after Kueue's checks: named, covered by the group, not
 * negative, limits only in a cohort, not twice. */
static int add_quota_item(que_state *st, const char *what, const char *name,
    const struct que_group *qg, uint32_t fid,
    const struct que_flavor_quotas *fq, const struct que_resource_quota *rq,
    bool limits, struct quota_item *it, size_t *ni, cu_error *err)
{
	uint32_t res, fr;
	size_t m;

	if (empty(rq->resource))
		return cu_error_set(err, CU_EINVAL,
		    "%s %s: flavor %s: empty resource name", what, name,
		    fq->flavor);
	if (intern_res(st, rq->resource, &res))
		return cu_error_set(
		    err, CU_ENOMEM, "%s %s: out of memory", what, name);
	for (m = 0; m < qg->n_res && qg->res[m] != res; m++)
		;
	if (m == qg->n_res)
		return cu_error_set(err, CU_EINVAL,
		    "%s %s: flavor %s: resource %s is not in coveredResources",
		    what, name, fq->flavor, rq->resource);
	if (rq->nominal < 0 ||
	    (rq->has_borrowing_limit && rq->borrowing_limit < 0) ||
	    (rq->has_lending_limit && rq->lending_limit < 0))
		return cu_error_set(err, CU_EINVAL,
		    "%s %s: flavor %s: resource %s: negative quota", what, name,
		    fq->flavor, rq->resource);
	if (!limits && (rq->has_borrowing_limit || rq->has_lending_limit))
		return cu_error_set(err, CU_EINVAL,
		    "%s %s: flavor %s: resource %s: borrowingLimit and "
		    "lendingLimit must be nil when cohort is empty",
		    what, name, fq->flavor, rq->resource);
	if (intern_fr(st, fid, res, &fr))
		return cu_error_set(
		    err, CU_ENOMEM, "%s %s: out of memory", what, name);
	for (m = 0; m < *ni && it[m].fr != fr; m++)
		;
	if (m < *ni)
		return cu_error_set(err, CU_EINVAL,
		    "%s %s: flavor %s: resource %s appears twice", what, name,
		    fq->flavor, rq->resource);
	it[*ni].fr = fr;
	it[*ni].q.nominal = rq->nominal;
	it[*ni].q.has_borrowing_limit = rq->has_borrowing_limit;
	it[*ni].q.borrowing_limit = rq->borrowing_limit;
	it[*ni].q.has_lending_limit = rq->has_lending_limit;
	it[*ni].q.lending_limit = rq->lending_limit;
	it[*ni].q.defined = true;
	(*ni)++;
	return CU_OK;
}

/* A resource may be covered by one group only, so that the flavor search
 * for it is unambiguous. */
static int check_covered_once(const que_state *st, const char *what,
    const char *name, const struct que_group *groups, size_t n, cu_error *err)
{
	size_t i, j, a, b;

	for (i = 0; i < n; i++)
		for (j = 0; j < groups[i].n_res; j++)
			for (a = i; a < n; a++)
				for (b = (a == i ? j + 1 : 0);
				     b < groups[a].n_res; b++)
					if (groups[a].res[b] ==
					    groups[i].res[j])
						return cu_error_set(err,
						    CU_EINVAL,
						    "%s %s: resource %s is "
						    "covered twice",
						    what, name,
						    st->res_names[groups[i]
								      .res[j]]);
	return CU_OK;
}

static int build_groups(que_state *st, const char *what, const char *name,
    const struct que_resource_group *g, size_t n, bool limits,
    struct que_group **out, struct quota_item **items, size_t *nitems,
    cu_error *err)
{
	struct que_group *groups = NULL;
	struct quota_item *it = NULL;
	size_t i, j, k, ni = 0, total = 0, nflv = 0;
	int rc;

	*out = NULL;
	*items = NULL;
	*nitems = 0;
	if (n > 16)
		return cu_error_set(err, CU_EINVAL,
		    "%s %s: at most 16 resourceGroups", what, name);
	for (i = 0; i < n; i++) {
		total += g[i].n_covered * g[i].n_flavors;
		nflv += g[i].n_flavors;
	}
	if (nflv > 256)
		return cu_error_set(err, CU_EINVAL,
		    "%s %s: at most 256 flavors in total", what, name);
	groups = cu_calloc(n ? n : 1, sizeof(*groups));
	it = cu_calloc(total ? total : 1, sizeof(*it));
	if (!groups || !it)
		goto out_nomem;
	for (i = 0; i < n; i++) {
		const struct que_resource_group *rg = &g[i];
		struct que_group *qg = &groups[i];

		if (rg->n_covered == 0 || rg->n_covered > 64 ||
		    rg->n_flavors == 0 || rg->n_flavors > 64) {
			rc = cu_error_set(err, CU_EINVAL,
			    "%s %s: resourceGroups[%zu]: 1..64 "
			    "coveredResources "
			    "and flavors required",
			    what, name, i);
			goto out_fail;
		}
		qg->res = cu_calloc(rg->n_covered, sizeof(uint32_t));
		qg->flv = cu_calloc(rg->n_flavors, sizeof(uint32_t));
		if (!qg->res || !qg->flv)
			goto out_nomem;
		qg->n_res = rg->n_covered;
		qg->n_flv = rg->n_flavors;
		for (j = 0; j < rg->n_covered; j++) {
			if (empty(rg->covered[j])) {
				rc = cu_error_set(err, CU_EINVAL,
				    "%s %s: resourceGroups[%zu]: empty "
				    "resource "
				    "name",
				    what, name, i);
				goto out_fail;
			}
			if (intern_res(st, rg->covered[j], &qg->res[j]))
				goto out_nomem;
		}
		for (j = 0; j < rg->n_flavors; j++) {
			const struct que_flavor_quotas *fq = &rg->flavors[j];
			struct que_flavor *f;

			if (empty(fq->flavor)) {
				rc = cu_error_set(err, CU_EINVAL,
				    "%s %s: resourceGroups[%zu].flavors[%zu]: "
				    "empty name",
				    what, name, i, j);
				goto out_fail;
			}
			if (fq->n_resources != rg->n_covered) {
				rc = cu_error_set(err, CU_EINVAL,
				    "%s %s: flavor %s: flavors must have the "
				    "same number of resources as the "
				    "coveredResources",
				    what, name, fq->flavor);
				goto out_fail;
			}
			if (intern_flavor(st, fq->flavor, &f))
				goto out_nomem;
			qg->flv[j] = f->id;
			for (k = 0; k < fq->n_resources; k++)
				if ((rc = add_quota_item(st, what, name, qg,
					 f->id, fq, &fq->resources[k], limits,
					 it, &ni, err)) != CU_OK)
					goto out_fail;
		}
	}
	if ((rc = check_covered_once(st, what, name, groups, n, err)) != CU_OK)
		goto out_fail;
	*out = groups;
	*items = it;
	*nitems = ni;
	return CU_OK;
out_nomem:
	rc = cu_error_set(err, CU_ENOMEM, "%s %s: out of memory", what, name);
out_fail:
	groups_free(groups, n);
	cu_free(it);
	return rc;
}

int que_node_reserve(struct que_node *n, uint32_t nfr)
{
	struct que_cell *c;

	if (n->ncells >= nfr)
		return CU_OK;
	c = cu_realloc(n->cells, (size_t)nfr * sizeof(*c));
	if (!c)
		return CU_ENOMEM;
	memset(c + n->ncells, 0, (size_t)(nfr - n->ncells) * sizeof(*c));
	n->cells = c;
	n->ncells = nfr;
	return CU_OK;
}

/* Replace a node's declared quotas, keeping its usage. */
static void node_set_quotas(
    struct que_node *n, const struct quota_item *it, size_t ni)
{
	uint32_t i;

	for (i = 0; i < n->ncells; i++)
		memset(&n->cells[i].q, 0, sizeof(n->cells[i].q));
	for (i = 0; i < ni; i++)
		n->cells[it[i].fr].q = it[i].q;
}

/* ---- cluster queues --------------------------------------------------- */

/* The ClusterQueue name [borrowed], created (empty, absent) if never
 * seen, with room for every flavor-resource cell. CU_ENOMEM. */
static int intern_cq(que_state *st, const char *name, struct que_cq **out)
{
	struct que_cq *cq = que_cq_map_get(&st->cq_map, name);

	if (!cq) {
		if (cu_grow((void **)&st->cqs, &st->cap_cqs, st->n_cqs + 1,
			sizeof(*st->cqs)))
			return CU_ENOMEM;
		cq = cu_calloc(1, sizeof(*cq));
		if (!cq)
			return CU_ENOMEM;
		cq->name = cu_strdup(name);
		if (!cq->name || que_cq_map_put(&st->cq_map, cq->name, cq)) {
			cu_free(cq->name);
			cu_free(cq);
			return CU_ENOMEM;
		}
		cq->when_can_borrow = QUE_MAY_STOP_SEARCH;
		cq->when_can_preempt = QUE_TRY_NEXT_FLAVOR;
		cq->node.fair_weight = 1000;
		st->cqs[st->n_cqs++] = cq;
	}
	*out = cq;
	return que_node_reserve(&cq->node, st->n_fr) ? CU_ENOMEM : CU_OK;
}

int que_cq_set(que_state *st, const struct que_cq_spec *spec, cu_error *err)
{
	struct que_cq *cq;
	struct que_group *groups;
	struct quota_item *items;
	size_t nitems;
	char *cohort = NULL;
	int rc;

	if (empty(spec->name))
		return cu_error_set(err, CU_EINVAL, "clusterQueue: empty name");
	if (spec->has_fair_weight && spec->fair_weight < 0)
		return cu_error_set(err, CU_EINVAL,
		    "clusterQueue %s: spec.fairSharing.weight: must be >= 0",
		    spec->name);
	if (spec->preemption.within_cluster_queue == QUE_PREEMPT_ANY ||
	    spec->preemption.reclaim_within_cohort ==
		QUE_PREEMPT_LOWER_OR_NEWER_EQUAL_PRIORITY ||
	    (spec->preemption.borrow_within_cohort != QUE_PREEMPT_NEVER &&
		spec->preemption.borrow_within_cohort !=
		    QUE_PREEMPT_LOWER_PRIORITY))
		return cu_error_set(err, CU_EINVAL,
		    "clusterQueue %s: unsupported preemption policy value",
		    spec->name);
	if (spec->preemption.reclaim_within_cohort == QUE_PREEMPT_NEVER &&
	    spec->preemption.borrow_within_cohort != QUE_PREEMPT_NEVER)
		return cu_error_set(err, CU_EINVAL,
		    "clusterQueue %s: reclaimWithinCohort=Never and "
		    "borrowWithinCohort.Policy!=Never",
		    spec->name);
	rc = build_groups(st, "clusterQueue", spec->name, spec->groups,
	    spec->n_groups, !empty(spec->cohort), &groups, &items, &nitems,
	    err);
	if (rc)
		return rc;
	if (!empty(spec->cohort) && !(cohort = cu_strdup(spec->cohort)))
		goto out_nomem;
	if (intern_cq(st, spec->name, &cq))
		goto out_nomem;
	node_set_quotas(&cq->node, items, nitems);
	cu_free(items);
	groups_free(cq->groups, cq->n_groups);
	cq->groups = groups;
	cq->n_groups = spec->n_groups;
	cu_free(cq->cohort_name);
	cq->cohort_name = cohort;
	cq->queueing = spec->queueing;
	cq->stop = spec->stop;
	cq->preemption = spec->preemption;
	cq->when_can_borrow = spec->when_can_borrow == QUE_FUNGIBILITY_DEFAULT
				  ? QUE_MAY_STOP_SEARCH
				  : spec->when_can_borrow;
	cq->when_can_preempt = spec->when_can_preempt == QUE_FUNGIBILITY_DEFAULT
				   ? QUE_TRY_NEXT_FLAVOR
				   : spec->when_can_preempt;
	cq->node.fair_weight = spec->has_fair_weight ? spec->fair_weight : 1000;
	cq->preference = spec->preference;
	cq->spec_admission_fair = spec->admission_fair;
	if (cq->admission_fair != (spec->admission_fair && st->afs_on)) {
		cq->admission_fair = spec->admission_fair && st->afs_on;
		cq->afs_dirty = true;
	}
	cq->exists = true;
	cu_free(cq->refused);
	cq->refused = NULL;
	st->dirty = true;
	return CU_OK;
out_nomem:
	cu_free(cohort);
	groups_free(groups, spec->n_groups);
	cu_free(items);
	return cu_error_set(
	    err, CU_ENOMEM, "clusterQueue %s: out of memory", spec->name);
}

int que_cq_refuse(
    que_state *st, const char *name, const char *why, cu_error *err)
{
	struct que_cq *cq = que_cq_map_get(&st->cq_map, name);
	char *w;

	if (empty(name))
		return cu_error_set(err, CU_EINVAL, "clusterQueue: empty name");
	if (cq != NULL && cq->exists && cq->refused != NULL &&
	    strcmp(cq->refused, why) == 0)
		return CU_OK;
	if ((w = cu_strdup(why)) == NULL || intern_cq(st, name, &cq))
		goto out_nomem;
	cu_free(cq->refused);
	cq->refused = w;
	cq->exists = true;
	st->dirty = true;
	return CU_OK;
out_nomem:
	cu_free(w);
	return cu_error_set(
	    err, CU_ENOMEM, "clusterQueue %s: out of memory", name);
}

int que_cq_set_checks(que_state *st, const char *name, const char *reason,
    const char *message, cu_error *err)
{
	struct que_cq *cq = que_cq_map_get(&st->cq_map, name);
	char *m = NULL;

	if (cq == NULL || !cq->exists)
		return cu_error_set(
		    err, CU_ENOTFOUND, "clusterQueue %s not found", name);
	if (reason == NULL) {
		if (cq->checks_reason == NULL)
			return CU_OK;
	} else if (cq->checks_reason != NULL &&
		   strcmp(cq->checks_reason, reason) == 0 &&
		   strcmp(cq->checks_message ? cq->checks_message : "",
		       message ? message : "") == 0) {
		return CU_OK;
	}
	if (reason != NULL && (m = cu_strdup(message ? message : "")) == NULL)
		return cu_error_set(
		    err, CU_ENOMEM, "clusterQueue %s: out of memory", name);
	cu_free(cq->checks_message);
	cq->checks_message = m;
	cq->checks_reason = reason;
	st->dirty = true;
	return CU_OK;
}

int que_cq_delete(que_state *st, const char *name, cu_error *err)
{
	struct que_cq *cq = que_cq_map_get(&st->cq_map, name);

	if (!cq || !cq->exists)
		return cu_error_set(
		    err, CU_ENOTFOUND, "clusterQueue %s not found", name);
	cq->exists = false;
	st->dirty = true;
	return CU_OK;
}

struct que_cq *que_cq_get(que_state *st, const char *name)
{
	struct que_cq *cq = que_cq_map_get(&st->cq_map, name);

	return cq && cq->exists ? cq : NULL;
}

bool que_cq_terminating(que_state *st, const char *name)
{
	struct que_cq *cq = que_cq_map_get(&st->cq_map, name);

	return cq != NULL && !cq->exists && cq->admitted.n > 0;
}

size_t que_cq_count(const que_state *st)
{
	return st->n_cqs;
}

struct que_cq *que_cq_at(que_state *st, size_t i)
{
	return i < st->n_cqs ? st->cqs[i] : NULL;
}

/* ---- cohorts ------------------------------------------------------------ */

int que_cohort_intern(que_state *st, const char *name, struct que_cohort **out)
{
	struct que_cohort *co = que_cohort_map_get(&st->cohort_map, name);

	if (co) {
		*out = co;
		return CU_OK;
	}
	if (cu_grow((void **)&st->cohorts, &st->cap_cohorts, st->n_cohorts + 1,
		sizeof(*st->cohorts)))
		return CU_ENOMEM;
	co = cu_calloc(1, sizeof(*co));
	if (!co)
		return CU_ENOMEM;
	co->node.fair_weight = 1000;
	co->name = cu_strdup(name);
	if (!co->name || que_node_reserve(&co->node, st->n_fr) ||
	    que_cohort_map_put(&st->cohort_map, co->name, co)) {
		cu_free(co->node.cells);
		cu_free(co->name);
		cu_free(co);
		return CU_ENOMEM;
	}
	st->cohorts[st->n_cohorts++] = co;
	*out = co;
	return CU_OK;
}

int que_cohort_set(
    que_state *st, const struct que_cohort_spec *spec, cu_error *err)
{
	struct que_cohort *co;
	struct que_group *groups;
	struct quota_item *items;
	size_t nitems;
	char *parent = NULL;
	int rc;

	if (empty(spec->name))
		return cu_error_set(err, CU_EINVAL, "cohort: empty name");

	rc =
	    build_groups(st, "cohort", spec->name, spec->groups, spec->n_groups,
		!empty(spec->parent), &groups, &items, &nitems, err);
	if (rc)
		return rc;
	if (!empty(spec->parent) && !(parent = cu_strdup(spec->parent)))
		goto out_nomem;
	if (que_cohort_intern(st, spec->name, &co) ||
	    que_node_reserve(&co->node, st->n_fr))
		goto out_nomem;
	node_set_quotas(&co->node, items, nitems);
	cu_free(items);
	groups_free(co->groups, co->n_groups);
	co->groups = groups;
	co->n_groups = spec->n_groups;
	cu_free(co->parent_name);
	co->parent_name = parent;
	co->is_explicit = true;
	st->dirty = true;
	return CU_OK;
out_nomem:
	cu_free(parent);
	groups_free(groups, spec->n_groups);
	cu_free(items);
	return cu_error_set(
	    err, CU_ENOMEM, "cohort %s: out of memory", spec->name);
}

int que_cohort_delete(que_state *st, const char *name, cu_error *err)
{
	struct que_cohort *co = que_cohort_map_get(&st->cohort_map, name);

	if (!co || !co->is_explicit)
		return cu_error_set(
		    err, CU_ENOTFOUND, "cohort %s not found", name);
	/* The cohort may still be implied by CQs naming it: it keeps its
	 * place in the tree but loses its own quota and parent. */
	co->is_explicit = false;
	node_set_quotas(&co->node, NULL, 0);
	groups_free(co->groups, co->n_groups);
	co->groups = NULL;
	co->n_groups = 0;
	cu_free(co->parent_name);
	co->parent_name = NULL;
	co->node.fair_weight = 1000;
	st->dirty = true;
	return CU_OK;
}

struct que_cohort *que_cohort_get(que_state *st, const char *name)
{
	struct que_cohort *co = que_cohort_map_get(&st->cohort_map, name);

	return co && (co->is_explicit || co->refs) ? co : NULL;
}

/* ---- local queues ----------------------------------------------------- */

int que_lq_set(que_state *st, const struct que_lq_spec *spec, cu_error *err)
{
	struct que_lq *lq;
	const char *key[2];
	char *cqn;

	if (empty(spec->ns) || empty(spec->name) || empty(spec->cluster_queue))
		return cu_error_set(err, CU_EINVAL,
		    "localQueue: namespace, name and clusterQueue are "
		    "required");
	key[0] = spec->ns;
	key[1] = spec->name;
	lq = que_lq_map_get(&st->lq_map, key);
	if (!lq) {
		if (cu_grow((void **)&st->lqs, &st->cap_lqs, st->n_lqs + 1,
			sizeof(*st->lqs)))
			goto out_nomem;
		lq = cu_calloc(1, sizeof(*lq));
		if (!lq)
			goto out_nomem;
		lq->key = cu_asprintf("%s/%s", spec->ns, spec->name);
		lq->ns = cu_strdup(spec->ns);
		lq->name = cu_strdup(spec->name);
		lq->ids[0] = lq->ns;
		lq->ids[1] = lq->name;
		if (!lq->key || !lq->ns || !lq->name ||
		    que_lq_map_put(&st->lq_map, lq->ids, lq)) {
			cu_free(lq->key);
			cu_free(lq->ns);
			cu_free(lq->name);
			cu_free(lq);
			goto out_nomem;
		}
		lq->fair_weight = 1000;
		st->lqs[st->n_lqs++] = lq;
	}
	cqn = cu_strdup(spec->cluster_queue);
	if (!cqn)
		goto out_nomem;
	cu_free(lq->cq_name);
	lq->cq_name = cqn;
	lq->stop = spec->stop;
	lq->exists = true;
	st->dirty = true;
	return CU_OK;
out_nomem:
	return cu_error_set(err, CU_ENOMEM, "localQueue %s/%s: out of memory",
	    spec->ns, spec->name);
}

int que_lq_delete(
    que_state *st, const char *ns, const char *name, cu_error *err)
{
	struct que_lq *lq = que_lq_get(st, ns, name);

	if (!lq)
		return cu_error_set(
		    err, CU_ENOTFOUND, "localQueue %s/%s not found", ns, name);
	lq->exists = false;
	st->dirty = true;
	return CU_OK;
}

struct que_lq *que_lq_get(que_state *st, const char *ns, const char *name)
{
	const char *key[2] = {ns, name};
	struct que_lq *lq = que_lq_map_get(&st->lq_map, key);

	return lq && lq->exists ? lq : NULL;
}

/* ---- fair sharing ------------------------------------------------------ */

int que_cohort_set_fair_weight(
    que_state *st, const char *name, bool has, int64_t milli, cu_error *err)
{
	struct que_cohort *co = que_cohort_map_get(&st->cohort_map, name);

	if (!co || !co->is_explicit)
		return cu_error_set(
		    err, CU_ENOTFOUND, "cohort %s not found", name);
	if (has && milli < 0)
		return cu_error_set(err, CU_EINVAL,
		    "cohort %s: spec.fairSharing.weight: must be >= 0", name);
	co->node.fair_weight = has ? milli : 1000;
	return CU_OK;
}

int que_lq_set_fair_weight(que_state *st, const char *ns, const char *name,
    bool has, int64_t milli, cu_error *err)
{
	struct que_lq *lq = que_lq_get(st, ns, name);

	if (!lq)
		return cu_error_set(
		    err, CU_ENOTFOUND, "localQueue %s/%s not found", ns, name);
	if (has && milli < 0)
		return cu_error_set(err, CU_EINVAL,
		    "localQueue %s/%s: spec.fairSharing.weight: must be >= 0",
		    ns, name);
	lq->fair_weight = has ? milli : 1000;
	return CU_OK;
}

int que_lq_set_afs(que_state *st, const char *ns, const char *name,
    double usage, cu_error *err)
{
	struct que_lq *lq = que_lq_get(st, ns, name);
	struct que_cq *cq;

	if (!lq)
		return cu_error_set(
		    err, CU_ENOTFOUND, "localQueue %s/%s not found", ns, name);
	if (lq->afs_usage == usage)
		return CU_OK;
	lq->afs_usage = usage;
	cq = lq->cq_name ? que_cq_get(st, lq->cq_name) : NULL;
	if (cq && cq->admission_fair)
		cq->afs_dirty = true;
	return CU_OK;
}

void que_admission_fair_sharing_set(que_state *st, bool on)
{
	size_t i;

	st->afs_on = on;
	for (i = 0; i < st->n_cqs; i++) {
		struct que_cq *cq = st->cqs[i];

		if (cq->admission_fair != (cq->spec_admission_fair && on)) {
			cq->admission_fair = cq->spec_admission_fair && on;
			cq->afs_dirty = true;
		}
	}
}

bool que_admission_fair_sharing(const que_state *st)
{
	return st->afs_on;
}

void que_fair_sharing_set(que_state *st, const struct que_fair_config *cfg)
{
	st->fair = *cfg;
	if (st->fair.n_strategies > 2)
		st->fair.n_strategies = 2;
}

const struct que_fair_config *que_fair_sharing(const que_state *st)
{
	return &st->fair;
}
