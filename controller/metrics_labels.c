/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/metrics_labels.c - the controller's side of Kueue's custom
 * metric labels (metrics.customLabels with the CustomMetricLabels gate):
 * hands the configured labels to the metrics registry and answers its
 * questions ("the label or annotation K of ClusterQueue X") from the
 * informer caches, so every update of a ClusterQueue, Cohort or
 * LocalQueue metric carries the object's current value; and splits the
 * families Kueue gives Workload-sourced labels by their values:
 * kueue_admitted_active_workloads and kueue_pending_workloads (a
 * ClusterQueue's admitted and pending Workloads counted per value),
 * kueue_local_queue_admitted_active_workloads (a LocalQueue's), and the
 * values of one Workload for the LocalQueue admission counter and wait
 * time (controller/wlmetrics.c).
 */
#include <string.h>

#include "controller/ctl_int.h"

static const char *resolve(void *payload, enum ctl_metric_object kind,
    const char *ns, const char *name, const char *key, bool annotation)
{
	ctl *c = payload;
	enum inf_id id = kind == CTL_MOBJ_CLUSTER_QUEUE ? INF_CQ
			 : kind == CTL_MOBJ_COHORT	? INF_COHORT
							: INF_LQ;
	json_t *obj;

	if (c->inf[id] == NULL ||
	    (obj = api_informer_get(c->inf[id],
		 kind == CTL_MOBJ_LOCAL_QUEUE ? ns : NULL, name)) == NULL)
		return NULL;
	return json_string_value(
	    json_object_get(json_object_get(json_object_get(obj, "metadata"),
				annotation ? "annotations" : "labels"),
		key));
}

/* c->copy_keys: labelKeysToCopy and the label keys of the Workload-sourced
 * labels (an annotation source is read from the job instead). */
static int copy_keys_setup(ctl *c, cu_error *err)
{
	const struct ctl_config *cfg = c->cfg;
	size_t i, n = cfg->integrations.nlabel_keys_to_copy;

	c->copy_keys = cu_calloc(n + cfg->metrics.ncustom + 1, sizeof(char *));
	if (c->copy_keys == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	for (i = 0; i < n; i++)
		c->copy_keys[i] = cfg->integrations.label_keys_to_copy[i];
	for (i = 0; i < cfg->metrics.ncustom; i++)
		if (cfg->metrics.custom[i].kind == CTL_CUSTOM_WORKLOAD &&
		    !cfg->metrics.custom[i].annotation)
			c->copy_keys[n++] = cfg->metrics.custom[i].key;
	c->ncopy_keys = n;
	return CU_OK;
}

int ctl_metrics_labels_setup(ctl *c, cu_error *err)
{
	const struct ctl_config *cfg = c->cfg;
	struct ctl_metric_custom *mc;
	size_t i, n = 0;
	int rc;

	if (!cfg->metrics.custom_enable || cfg->metrics.ncustom == 0)
		return CU_OK;
	mc = cu_calloc(cfg->metrics.ncustom, sizeof(*mc));
	if (mc == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	for (i = 0; i < cfg->metrics.ncustom; i++) {
		const struct ctl_config_custom_label *l =
		    &cfg->metrics.custom[i];

		mc[n].name = l->name;
		mc[n].kind =
		    l->kind == CTL_CUSTOM_COHORT	? CTL_MOBJ_COHORT
		    : l->kind == CTL_CUSTOM_LOCAL_QUEUE ? CTL_MOBJ_LOCAL_QUEUE
		    : l->kind == CTL_CUSTOM_WORKLOAD	? CTL_MOBJ_WORKLOAD
						     : CTL_MOBJ_CLUSTER_QUEUE;
		mc[n].key = l->key;
		mc[n].annotation = l->annotation;
		mc[n].tracked = (const char *const *)l->tracked;
		mc[n].ntracked = l->ntracked;
		n++;
	}
	rc = ctl_metrics_set_custom(c->metrics, mc, n, resolve, c, err);
	cu_free(mc);
	return rc == CU_OK ? copy_keys_setup(c, err) : rc;
}

/* ---- Workload-sourced labels ------------------------------------------ */

#define WL_MAX 2		     /* Workload-sourced labels (Kueue's cap) */
#define TUPLES ((12 + 1) * (12 + 1)) /* tracked values + untracked, squared */
#define UNTRACKED "kueue.x-k8s.io/_UNTRACKED_VALUE_"

struct tuple {
	const char *v[WL_MAX];
	double n;
};

static const char *meta_value(
    json_t *obj, const struct ctl_config_custom_label *l)
{
	return json_string_value(
	    json_object_get(json_object_get(json_object_get(obj, "metadata"),
				l->annotation ? "annotations" : "labels"),
		l->key));
}

/* Label or annotation l of Workload wl [borrowed]: the Workload's own,
 * else its job's (Kueue copies these keys from the job onto the Workload
 * it creates; cueue reads them from the job). Tracked values applied. */
static const char *wl_value(
    ctl *c, json_t *wl, const struct ctl_config_custom_label *l)
{
	const char *v = meta_value(wl, l);
	json_t *refs =
	    json_object_get(json_object_get(wl, "metadata"), "ownerReferences");
	json_t *r;
	size_t i, k;

	json_array_foreach(refs, i, r)
	{
		const char *kind =
		    json_string_value(json_object_get(r, "kind"));
		const char *name =
		    json_string_value(json_object_get(r, "name"));
		enum inf_id id = kind != NULL ? ctl_fw_inf(kind) : INF__COUNT;
		json_t *job;

		if (v != NULL || id == INF__COUNT || name == NULL ||
		    !json_is_true(json_object_get(r, "controller")) ||
		    c->inf[id] == NULL)
			continue;
		job = api_informer_get(
		    c->inf[id], ctl_jmeta(wl, "namespace"), name);
		if (job != NULL)
			v = meta_value(job, l);
	}
	if (v == NULL)
		v = "";
	for (k = 0; k < l->ntracked; k++)
		if (strcmp(l->tracked[k], v) == 0)
			return l->tracked[k];
	return UNTRACKED;
}

/* The Workload-sourced labels, in configuration order (at most WL_MAX). */
static size_t wl_labels(ctl *c, const struct ctl_config_custom_label **ls)
{
	size_t i, nl = 0;

	for (i = 0; i < c->cfg->metrics.ncustom && nl < WL_MAX; i++)
		if (c->cfg->metrics.custom[i].kind == CTL_CUSTOM_WORKLOAD)
			ls[nl++] = &c->cfg->metrics.custom[i];
	return nl;
}

/* Counts per value tuple of a set of Workloads. */
struct tally {
	ctl *c;
	const struct ctl_config_custom_label *ls[WL_MAX];
	size_t nl, nt;
	struct tuple t[TUPLES];
};

static void tally_init(struct tally *ty, ctl *c)
{
	ty->c = c;
	ty->nt = 0;
	ty->nl = wl_labels(c, ty->ls);
}

static void tally_add(struct tally *ty, const struct que_wl *wl)
{
	json_t *obj = api_informer_get(ty->c->inf[INF_WL], wl->ns, wl->name);
	const char *v[WL_MAX] = {UNTRACKED, UNTRACKED};
	size_t k, j;

	for (k = 0; obj != NULL && k < ty->nl; k++)
		v[k] = wl_value(ty->c, obj, ty->ls[k]);
	/* Values are the configured strings or UNTRACKED: compared by
	 * address. */
	for (j = 0; j < ty->nt; j++)
		if (ty->t[j].v[0] == v[0] && ty->t[j].v[1] == v[1])
			break;
	if (j == ty->nt && ty->nt < TUPLES) {
		ty->t[j].v[0] = v[0];
		ty->t[j].v[1] = v[1];
		ty->t[ty->nt++].n = 0;
	}
	if (j < ty->nt)
		ty->t[j].n++;
}

bool ctl_metrics_labels_wl_values(ctl *c, json_t *wl, const char **out)
{
	const struct ctl_config_custom_label *ls[WL_MAX];
	size_t k, nl;

	out[0] = out[1] = UNTRACKED;
	if (c->metrics == NULL || c->inf[INF_WL] == NULL ||
	    ctl_metrics_workload_labels(
		c->metrics, CTL_M_LOCAL_QUEUE_ADMITTED_WORKLOADS_TOTAL) == 0)
		return false;
	nl = wl_labels(c, ls);
	for (k = 0; wl != NULL && k < nl; k++)
		out[k] = wl_value(c, wl, ls[k]);
	return true;
}

bool ctl_metrics_labels_admitted(ctl *c, const struct que_cq *cq)
{
	struct tally ty;
	const struct que_wl *wl;
	size_t i, j;

	if (c->metrics == NULL || ctl_metrics_workload_labels(c->metrics,
				      CTL_M_ADMITTED_ACTIVE_WORKLOADS) == 0)
		return false;
	tally_init(&ty, c);
	wl = cq->admitted.head;
	for (i = 0; i < cq->admitted.n; i++, wl = wl->next)
		tally_add(&ty, wl);
	/* The ClusterQueue's series are exactly the values counted now. */
	(void)ctl_metrics_remove_match(c->metrics,
	    CTL_M_ADMITTED_ACTIVE_WORKLOADS, CTL_LV("cluster_queue"),
	    CTL_LV(cq->name));
	for (j = 0; j < ty.nt; j++)
		ctl_metric_set_wl(c->metrics, CTL_M_ADMITTED_ACTIVE_WORKLOADS,
		    CTL_LV(cq->name), (const char *const *)ty.t[j].v,
		    ty.t[j].n);
	return true;
}

struct pending_pass {
	struct tally active, inadmissible;
	bool cq_active;
};

static void pending_visit(const struct que_wl *wl, bool heap, void *payload)
{
	struct pending_pass *p = payload;

	tally_add(heap && p->cq_active ? &p->active : &p->inadmissible, wl);
}

bool ctl_metrics_labels_pending(ctl *c, const struct que_cq *cq)
{
	struct pending_pass *p;
	size_t j;

	if (c->metrics == NULL || ctl_metrics_workload_labels(
				      c->metrics, CTL_M_PENDING_WORKLOADS) == 0)
		return false;
	/* Two tallies of a few KiB each: off the stack. */
	if ((p = cu_malloc(sizeof(*p))) == NULL)
		return true;
	tally_init(&p->active, c);
	tally_init(&p->inadmissible, c);
	p->cq_active = cq->active;
	que_pending_visit(c->st, cq, pending_visit, p);
	/* Kueue reports the value tuples with Workloads and clears the
	 * others: the ClusterQueue's series are those counted now. */
	(void)ctl_metrics_remove_match(c->metrics, CTL_M_PENDING_WORKLOADS,
	    CTL_LV("cluster_queue"), CTL_LV(cq->name));
	for (j = 0; j < p->active.nt; j++)
		ctl_metric_set_wl(c->metrics, CTL_M_PENDING_WORKLOADS,
		    CTL_LV(cq->name, "active"),
		    (const char *const *)p->active.t[j].v, p->active.t[j].n);
	for (j = 0; j < p->inadmissible.nt; j++)
		ctl_metric_set_wl(c->metrics, CTL_M_PENDING_WORKLOADS,
		    CTL_LV(cq->name, "inadmissible"),
		    (const char *const *)p->inadmissible.t[j].v,
		    p->inadmissible.t[j].n);
	cu_free(p);
	return true;
}

bool ctl_metrics_labels_lq_admitted(ctl *c, const char *ns, const char *name)
{
	struct que_lq *lq;
	struct que_cq *cq;
	struct tally *ty;
	const struct que_wl *wl;
	size_t i, j;

	if (c->metrics == NULL ||
	    ctl_metrics_workload_labels(
		c->metrics, CTL_M_LOCAL_QUEUE_ADMITTED_ACTIVE_WORKLOADS) == 0)
		return false;
	if ((ty = cu_malloc(sizeof(*ty))) == NULL)
		return true;
	tally_init(ty, c);
	lq = que_lq_get(c->st, ns, name);
	cq = lq != NULL && lq->cq_name != NULL ? que_cq_get(c->st, lq->cq_name)
					       : NULL;
	wl = cq != NULL ? cq->admitted.head : NULL;
	for (i = 0; cq != NULL && i < cq->admitted.n; i++, wl = wl->next)
		if (wl->lq == lq)
			tally_add(ty, wl);
	(void)ctl_metrics_remove_match(c->metrics,
	    CTL_M_LOCAL_QUEUE_ADMITTED_ACTIVE_WORKLOADS,
	    CTL_LV("name", "namespace"), CTL_LV(name, ns));
	for (j = 0; j < ty->nt; j++)
		ctl_metric_set_wl(c->metrics,
		    CTL_M_LOCAL_QUEUE_ADMITTED_ACTIVE_WORKLOADS,
		    CTL_LV(name, ns), (const char *const *)ty->t[j].v,
		    ty->t[j].n);
	cu_free(ty);
	return true;
}
