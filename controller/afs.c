/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/afs.c - admission fair sharing (Kueue KEP 4136) around the
 * engine: per LocalQueue, the consumed resources of its admitted
 * Workloads sampled every usageSamplingInterval and decayed with the
 * half-life, the entry penalty of each admission, the usage that orders
 * pending Workloads (handed to the engine with que_lq_set_afs), the
 * LocalQueue status fairSharing.admissionFairSharingStatus and the
 * kueue_local_queue_admission_fair_sharing_usage metric.
 *
 * Design notes
 * ------------
 * - Time: an entry's clock (last_ns) starts when the LocalQueue is first
 *   seen and moves at each of its samples, one interval apart, as Kueue's
 *   LocalQueue reconciler requeues itself. The engine's order changes
 *   only at a sample or an admission's penalty (one heapify per changed
 *   ClusterQueue before its next pop), never per comparison.
 * - Restart: the consumed resources are recovered from the LocalQueue's
 *   status (consumedResources), as Kueue does; the status is written at
 *   every sample, so at most one interval of history and the penalties
 *   not yet sampled are lost. See docs/fair-sharing.md.
 * - Units: consumed amounts and penalties are kept in milli-units
 *   (doubles, no rounding between samples); usage is reported in the
 *   resource's base unit as Kueue's AsApproximateFloat64 does.
 */
#include <math.h>
#include <string.h>

#include "admission/admission.h"
#include "api/quantity.h"
#include "controller/ctl_int.h"

struct afs_lq {
	char *ns, *name;    /* owned */
	const char *ids[2]; /* {ns, name}: the map key */
	double *consumed;   /* owned; milli per resource id */
	double *penalty;    /* owned; milli per resource id */
	double *live;	    /* owned; scratch of a sample */
	unsigned char *has; /* owned; resource listed in consumedResources */
	uint32_t nres;
	char *series_cq; /* owned; cluster_queue label of its metric series,
			  * NULL when it has none */
	int64_t last_ns; /* the last sample (or when first seen) */
	double usage;	 /* the last usage handed to the engine */
	bool seen;	 /* in the current pass */
	bool due;	 /* sampled in the current pass */
};

static void lq_free(struct afs_lq *e)
{
	if (e == NULL)
		return;
	cu_free(e->ns);
	cu_free(e->name);
	cu_free(e->consumed);
	cu_free(e->penalty);
	cu_free(e->live);
	cu_free(e->has);
	cu_free(e->series_cq);
	cu_free(e);
}

/* Drop the entry's metric series, if any. */
static void series_drop(ctl *c, struct afs_lq *e)
{
	if (e->series_cq != NULL && c->metrics != NULL)
		(void)ctl_metric_remove(c->metrics,
		    CTL_M_LOCAL_QUEUE_ADMISSION_FAIR_SHARING_USAGE,
		    CTL_LV(e->name, e->ns, e->series_cq));
	cu_free(e->series_cq);
	e->series_cq = NULL;
}

int ctl_afs_init(struct ctl_afs *a)
{
	memset(a, 0, sizeof(*a));
	cu_map_init_parts(&a->map, 2);
	return CU_OK;
}

void ctl_afs_dispose(struct ctl_afs *a)
{
	cu_map_iter it = CU_MAP_ITER_INIT;
	void *v;

	while (cu_map_next(&a->map, &it, NULL, &v))
		lq_free(v);
	cu_map_dispose(&a->map);
	memset(a, 0, sizeof(*a));
}

/* Make room for every interned resource. CU_ENOMEM. */
static int lq_reserve(struct afs_lq *e, uint32_t nres)
{
	double *c, *p, *l;
	unsigned char *h;

	if (nres <= e->nres)
		return CU_OK;
	c = cu_realloc(e->consumed, nres * sizeof(double));
	if (c != NULL)
		e->consumed = c;
	p = c ? cu_realloc(e->penalty, nres * sizeof(double)) : NULL;
	if (p != NULL)
		e->penalty = p;
	l = p ? cu_realloc(e->live, nres * sizeof(double)) : NULL;
	if (l != NULL)
		e->live = l;
	h = l ? cu_realloc(e->has, nres) : NULL;
	if (h == NULL)
		return CU_ENOMEM;
	e->has = h;
	memset(e->consumed + e->nres, 0, (nres - e->nres) * sizeof(double));
	memset(e->penalty + e->nres, 0, (nres - e->nres) * sizeof(double));
	memset(e->live + e->nres, 0, (nres - e->nres) * sizeof(double));
	memset(e->has + e->nres, 0, nres - e->nres);
	e->nres = nres;
	return CU_OK;
}

/* The consumedResources of a LocalQueue's status [borrowed], as Kueue's
 * initializeAfsIfNeeded seeds its cache after a restart. */
static void seed(ctl *c, struct afs_lq *e, json_t *cached)
{
	json_t *cr = json_object_get(
	    json_object_get(json_object_get(json_object_get(cached, "status"),
				"fairSharing"),
		"admissionFairSharingStatus"),
	    "consumedResources");
	const char *res;
	json_t *v;

	json_object_foreach(cr, res, v)
	{
		struct api_quantity q;
		uint32_t id = UINT32_MAX, i;

		if (!json_is_string(v) ||
		    api_quantity_parse(&q, json_string_value(v), NULL) !=
			CU_OK ||
		    q.milli < 0)
			continue;
		for (i = 0; i < que_resource_count(c->st); i++)
			if (strcmp(que_resource_name(c->st, i), res) == 0)
				id = i;
		if (id == UINT32_MAX || lq_reserve(e, id + 1) != CU_OK)
			continue;
		e->consumed[id] = (double)q.milli;
		e->has[id] = 1;
	}
}

/* The entry of LocalQueue ns/name, created (seeded from cached
 * [borrowed; may be NULL], its clock started at now_ns) when new. NULL:
 * out of memory. */
static struct afs_lq *lq_get(
    ctl *c, const char *ns, const char *name, json_t *cached, int64_t now_ns)
{
	const char *key[2] = {ns, name};
	struct afs_lq *e = cu_map_get(&c->afs.map, key);

	if (e != NULL)
		return e;
	e = cu_calloc(1, sizeof(*e));
	if (e == NULL || (e->ns = cu_strdup(ns)) == NULL ||
	    (e->name = cu_strdup(name)) == NULL)
		goto nomem;
	e->ids[0] = e->ns;
	e->ids[1] = e->name;
	e->last_ns = now_ns;
	if (lq_reserve(e, que_resource_count(c->st)) != CU_OK)
		goto nomem;
	seed(c, e, cached);
	if (cu_map_put(&c->afs.map, e->ids, e, NULL) != CU_OK)
		goto nomem;
	return e;
nomem:
	lq_free(e);
	cu_warn("admission fair sharing: out of memory");
	return NULL;
}

/* resourceWeights of the Configuration for resource id res (1 when not
 * listed). */
static double res_weight(const ctl *c, uint32_t res)
{
	const char *name = que_resource_name(c->st, res);
	size_t i;

	for (i = 0; i < c->cfg->admission_fair_sharing.nweights; i++)
		if (strcmp(c->cfg->admission_fair_sharing.resources[i], name) ==
		    0)
			return c->cfg->admission_fair_sharing.weights[i];
	return 1.0;
}

/* Hand the entry's usage to the engine and the metric. */
static void publish(ctl *c, struct afs_lq *e)
{
	struct que_lq *lq = que_lq_get(c->st, e->ns, e->name);
	double *w = e->nres ? cu_calloc(e->nres, sizeof(double)) : NULL;
	uint32_t i;

	if (lq == NULL || (e->nres > 0 && w == NULL)) {
		cu_free(w);
		return;
	}
	for (i = 0; i < e->nres; i++)
		w[i] = res_weight(c, i);
	/* Amounts and the weight are both in milli-units: the quotient is
	 * the usage in base units over a weight in units. */
	e->usage = que_afs_usage(
	    e->consumed, e->penalty, w, e->nres, (double)lq->fair_weight);
	cu_free(w);
	if (que_lq_set_afs(c->st, e->ns, e->name, e->usage, NULL) != CU_OK ||
	    c->metrics == NULL)
		return;
	/* Reported as Kueue does: only for LocalQueues whose metrics are
	 * exposed (metrics.localQueueMetrics), one series per LocalQueue
	 * under its current ClusterQueue. */
	if (!ctl_lq_reported(
		c, api_informer_get(c->inf[INF_LQ], e->ns, e->name)) ||
	    lq->cq_name == NULL) {
		series_drop(c, e);
		return;
	}
	if (e->series_cq != NULL && strcmp(e->series_cq, lq->cq_name) != 0)
		series_drop(c, e);
	if (e->series_cq == NULL &&
	    (e->series_cq = cu_strdup(lq->cq_name)) == NULL)
		return;
	ctl_metric_set(c->metrics,
	    CTL_M_LOCAL_QUEUE_ADMISSION_FAIR_SHARING_USAGE,
	    CTL_LV(e->name, e->ns, e->series_cq), e->usage);
}

struct pass {
	ctl *c;
	int64_t now_ns;
	bool any_due;
};

static void visit(json_t *cached, void *payload)
{
	struct pass *p = payload;
	const char *ns = ctl_jmeta(cached, "namespace");
	const char *name = ctl_jmeta(cached, "name");
	struct afs_lq *e;

	if (ns == NULL || name == NULL)
		return;
	e = lq_get(p->c, ns, name, cached, p->now_ns);
	if (e == NULL)
		return;
	e->seen = true;
	e->due = p->now_ns - e->last_ns >=
		 p->c->cfg->admission_fair_sharing.sampling_ns;
	p->any_due |= e->due;
}

/* The live usage of every due entry: the requests of the admitted
 * Workloads of its LocalQueue, over flavors (Kueue's GetAdmittedUsage). */
static void live_usage(ctl *c)
{
	size_t i, k, n = que_cq_count(c->st);
	uint32_t nres = que_resource_count(c->st);
	cu_map_iter it = CU_MAP_ITER_INIT;
	void *v;

	while (cu_map_next(&c->afs.map, &it, NULL, &v)) {
		struct afs_lq *e = v;

		if (e->due && lq_reserve(e, nres) == CU_OK)
			memset(e->live, 0, e->nres * sizeof(double));
	}
	for (i = 0; i < n; i++) {
		struct que_cq *cq = que_cq_at(c->st, i);
		struct que_wl *wl;

		if (cq == NULL)
			continue;
		wl = cq->admitted.head;
		for (k = 0; k < cq->admitted.n; k++, wl = wl->next) {
			struct afs_lq *e =
			    wl->lq ? cu_map_get(&c->afs.map, wl->lq->ids)
				   : NULL;
			uint32_t ps, r;

			if (e == NULL || !e->due)
				continue;
			for (ps = 0; ps < wl->n_podsets; ps++)
				for (r = 0; r < wl->podsets[ps].n_req; r++) {
					uint32_t id =
					    wl->podsets[ps].req[r].res;

					if (id >= e->nres)
						continue;
					e->live[id] += (double)wl->podsets[ps]
							   .req[r]
							   .total;
					e->has[id] = 1;
				}
		}
	}
}

void ctl_afs_pass(ctl *c, int64_t now_ns)
{
	struct pass p = {c, now_ns, false};
	double half = (double)c->cfg->admission_fair_sharing.half_life_ns / 1e9;
	cu_map_iter it = CU_MAP_ITER_INIT;
	void *v;

	if (!c->cfg->admission_fair_sharing.enable || c->inf[INF_LQ] == NULL)
		return;
	api_informer_foreach(c->inf[INF_LQ], visit, &p);
	if (p.any_due)
		live_usage(c);
	while (cu_map_next(&c->afs.map, &it, NULL, &v)) {
		struct afs_lq *e = v;
		uint32_t i;

		if (!e->seen) {
			/* The LocalQueue is gone: so are its history and
			 * its series (Kueue deletes both). */
			cu_map_del(&c->afs.map, e->ids);
			series_drop(c, e);
			lq_free(e);
			continue;
		}
		e->seen = false;
		if (e->due) {
			double dt = (double)(now_ns - e->last_ns) / 1e9;

			if (half <= 0.0)
				memset(
				    e->consumed, 0, e->nres * sizeof(double));
			else
				que_afs_decay(
				    e->consumed, e->live, e->nres, dt, half);
			for (i = 0; i < e->nres; i++) {
				e->consumed[i] += e->penalty[i];
				e->has[i] |= e->penalty[i] > 0.0;
				e->penalty[i] = 0.0;
			}
			e->last_ns = now_ns;
			e->due = false;
		}
		publish(c, e);
	}
	c->afs.primed = true;
}

void ctl_afs_admitted(ctl *c, const struct que_wl *wl, int64_t now_ns)
{
	const struct ctl_config *cfg = c->cfg;
	double alpha;
	struct afs_lq *e;
	uint32_t ps, r;

	if (!cfg->admission_fair_sharing.enable || wl->lq == NULL ||
	    wl->cq == NULL || !wl->cq->admission_fair)
		return;
	e = lq_get(c, wl->lq->ns, wl->lq->name,
	    api_informer_get(c->inf[INF_LQ], wl->lq->ns, wl->lq->name), now_ns);
	if (e == NULL || lq_reserve(e, que_resource_count(c->st)) != CU_OK)
		return;
	/* Kueue's CalculateEntryPenalty: what the next sample will add for
	 * this Workload, charged at once so that a flood admitted before
	 * that sample already counts. */
	alpha = que_afs_alpha((double)cfg->admission_fair_sharing.sampling_ns,
	    (double)cfg->admission_fair_sharing.half_life_ns);
	for (ps = 0; ps < wl->n_podsets; ps++)
		for (r = 0; r < wl->podsets[ps].n_req; r++) {
			uint32_t id = wl->podsets[ps].req[r].res;

			if (id < e->nres)
				e->penalty[id] +=
				    alpha *
				    (double)wl->podsets[ps].req[r].total;
		}
	publish(c, e);
}

json_t *ctl_afs_status(ctl *c, const char *ns, const char *name)
{
	const char *key[2] = {ns, name};
	struct afs_lq *e;
	json_t *cr, *out;
	char ts[CU_TIME_RFC3339_LEN];
	uint32_t i;

	if (!c->cfg->admission_fair_sharing.enable || ns == NULL ||
	    name == NULL || (e = cu_map_get(&c->afs.map, key)) == NULL)
		return NULL;
	cr = json_object();
	for (i = 0; cr != NULL && i < e->nres; i++) {
		const char *rs = que_resource_name(c->st, i);
		char q[64];

		if (!e->has[i])
			continue;
		adm_format_quantity(rs, llround(e->consumed[i]), q, sizeof(q));
		json_object_set_new(cr, rs, json_string(q));
	}
	cu_time_format_rfc3339(e->last_ns, ts);
	out = json_pack("{s:I, s:{s:o, s:s}}", "weightedShare", (json_int_t)0,
	    "admissionFairSharingStatus", "consumedResources", cr, "lastUpdate",
	    ts);
	return out;
}
