/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconcile/sync.c - Kueue objects (api/model.h) into the queue model
 * (queues/queues.h). The engine copies every spec it is given, so the
 * temporary arrays built here live only for the duration of a call.
 */
#include <string.h>

#include "reconcile/rec_int.h"

/* ---- small conversions ----------------------------------------------- */

static enum que_taint_effect taint_effect(enum api_taint_effect e)
{
	switch (e) {
	case API_EFFECT_PREFER_NO_SCHEDULE:
		return QUE_EFFECT_PREFER_NO_SCHEDULE;
	case API_EFFECT_NO_EXECUTE:
		return QUE_EFFECT_NO_EXECUTE;
	case API_EFFECT_UNSET:
	case API_EFFECT_NO_SCHEDULE:
		break;
	}
	return QUE_EFFECT_NO_SCHEDULE;
}

static void toleration(
    struct que_toleration *out, const struct api_toleration *t)
{
	out->key = t->key;
	out->value = t->value;
	out->op = t->op == API_TOL_OP_EXISTS ? QUE_TOLERATE_EXISTS
					     : QUE_TOLERATE_EQUAL;
	out->any_effect = t->effect == API_EFFECT_UNSET;
	out->effect = taint_effect(t->effect);
}

static enum que_preempt_policy preempt(enum api_preempt_policy p)
{
	switch (p) {
	case API_PREEMPT_LOWER_PRIORITY:
		return QUE_PREEMPT_LOWER_PRIORITY;
	case API_PREEMPT_LOWER_OR_NEWER_EQUAL_PRIORITY:
		return QUE_PREEMPT_LOWER_OR_NEWER_EQUAL_PRIORITY;
	case API_PREEMPT_ANY:
		return QUE_PREEMPT_ANY;
	case API_PREEMPT_UNSET:
	case API_PREEMPT_NEVER:
		break;
	}
	return QUE_PREEMPT_NEVER;
}

static enum que_fungibility fungibility(enum api_fungibility f)
{
	switch (f) {
	case API_FUNG_MAY_STOP_SEARCH:
		return QUE_MAY_STOP_SEARCH;
	case API_FUNG_TRY_NEXT_FLAVOR:
		return QUE_TRY_NEXT_FLAVOR;
	case API_FUNG_UNSET:
		break;
	}
	return QUE_FUNGIBILITY_DEFAULT;
}

static enum que_stop stop(enum api_stop_policy s)
{
	switch (s) {
	case API_STOP_HOLD:
		return QUE_STOP_HOLD;
	case API_STOP_HOLD_AND_DRAIN:
		return QUE_STOP_HOLD_AND_DRAIN;
	case API_STOP_UNSET:
	case API_STOP_NONE:
		break;
	}
	return QUE_STOP_NONE;
}

/* ---- ResourceFlavor -------------------------------------------------- */

int rec_sync_flavor(
    que_state *st, const struct api_resource_flavor *rf, cu_error *err)
{
	struct que_flavor_spec spec;
	struct que_kv *labels = NULL;
	struct que_taint *taints = NULL;
	struct que_toleration *tols = NULL;
	size_t i;
	int rc = CU_ENOMEM;

	memset(&spec, 0, sizeof(spec));
	spec.name = rf->meta.name;
	labels = cu_calloc(rf->spec.node_labels.n + 1, sizeof(*labels));
	taints = cu_calloc(rf->spec.n_node_taints + 1, sizeof(*taints));
	tols = cu_calloc(rf->spec.n_tolerations + 1, sizeof(*tols));
	if (!labels || !taints || !tols) {
		cu_error_set(
		    err, CU_ENOMEM, "flavor %s: out of memory", rf->meta.name);
		goto out;
	}
	for (i = 0; i < rf->spec.node_labels.n; i++) {
		labels[i].key = rf->spec.node_labels.items[i].key;
		labels[i].value = rf->spec.node_labels.items[i].value;
	}
	for (i = 0; i < rf->spec.n_node_taints; i++) {
		taints[i].key = rf->spec.node_taints[i].key;
		taints[i].value = rf->spec.node_taints[i].value;
		taints[i].effect = taint_effect(rf->spec.node_taints[i].effect);
	}
	for (i = 0; i < rf->spec.n_tolerations; i++)
		toleration(&tols[i], &rf->spec.tolerations[i]);
	spec.node_labels = labels;
	spec.n_node_labels = rf->spec.node_labels.n;
	spec.taints = taints;
	spec.n_taints = rf->spec.n_node_taints;
	spec.tolerations = tols;
	spec.n_tolerations = rf->spec.n_tolerations;
	rc = que_flavor_set(st, &spec, err);
out:
	cu_free(labels);
	cu_free(taints);
	cu_free(tols);
	return rc;
}

/* ---- resource groups (ClusterQueue and Cohort) ----------------------- */

struct groups {
	struct que_resource_group *groups;
	struct que_flavor_quotas *flavors;
	struct que_resource_quota *resources;
};

static void groups_dispose(struct groups *g)
{
	cu_free(g->groups);
	cu_free(g->flavors);
	cu_free(g->resources);
}

static int groups_build(struct groups *g, const struct api_resource_groups *in,
    const char *owner, cu_error *err)
{
	size_t i, j, k, nf = 0, nr = 0, fi = 0, ri = 0;

	memset(g, 0, sizeof(*g));
	for (i = 0; i < in->n; i++) {
		nf += in->items[i].n_flavors;
		for (j = 0; j < in->items[i].n_flavors; j++)
			nr += in->items[i].flavors[j].n_resources;
	}
	g->groups = cu_calloc(in->n + 1, sizeof(*g->groups));
	g->flavors = cu_calloc(nf + 1, sizeof(*g->flavors));
	g->resources = cu_calloc(nr + 1, sizeof(*g->resources));
	if (!g->groups || !g->flavors || !g->resources) {
		groups_dispose(g);
		return cu_error_set(err, CU_ENOMEM, "%s: out of memory", owner);
	}
	for (i = 0; i < in->n; i++) {
		const struct api_resource_group *ag = &in->items[i];

		g->groups[i].covered =
		    (const char *const *)ag->covered_resources.items;
		g->groups[i].n_covered = ag->covered_resources.n;
		g->groups[i].flavors = &g->flavors[fi];
		g->groups[i].n_flavors = ag->n_flavors;
		for (j = 0; j < ag->n_flavors; j++, fi++) {
			const struct api_flavor_quotas *af = &ag->flavors[j];

			g->flavors[fi].flavor = af->name;
			g->flavors[fi].resources = &g->resources[ri];
			g->flavors[fi].n_resources = af->n_resources;
			for (k = 0; k < af->n_resources; k++, ri++) {
				const struct api_resource_quota *q =
				    &af->resources[k];
				struct que_resource_quota *o =
				    &g->resources[ri];

				o->resource = q->name;
				o->nominal = q->nominal_quota.milli;
				o->has_borrowing_limit = q->has_borrowing_limit;
				o->borrowing_limit = q->borrowing_limit.milli;
				o->has_lending_limit = q->has_lending_limit;
				o->lending_limit = q->lending_limit.milli;
			}
		}
	}
	return CU_OK;
}

int rec_sync_cluster_queue(
    que_state *st, const struct api_cluster_queue *cq, cu_error *err)
{
	struct que_cq_spec spec;
	struct groups g;
	int rc;

	rc = groups_build(&g, &cq->spec.resource_groups, cq->meta.name, err);
	if (rc)
		return rc;
	memset(&spec, 0, sizeof(spec));
	spec.name = cq->meta.name;
	spec.cohort = cq->spec.cohort_name;
	spec.groups = g.groups;
	spec.n_groups = cq->spec.resource_groups.n;
	spec.queueing = api_cq_queueing_strategy(cq) == API_QS_STRICT_FIFO
			    ? QUE_STRICT_FIFO
			    : QUE_BEST_EFFORT_FIFO;
	spec.stop = stop(cq->spec.stop_policy);
	spec.preemption.within_cluster_queue =
	    preempt(cq->spec.preemption.within_cluster_queue);
	spec.preemption.reclaim_within_cohort =
	    preempt(cq->spec.preemption.reclaim_within_cohort);
	spec.preemption.borrow_within_cohort =
	    preempt(cq->spec.preemption.borrow_within_cohort.policy);
	spec.preemption.has_max_priority_threshold =
	    cq->spec.preemption.borrow_within_cohort.has_max_priority_threshold;
	spec.preemption.max_priority_threshold =
	    cq->spec.preemption.borrow_within_cohort.max_priority_threshold;
	spec.when_can_borrow =
	    fungibility(cq->spec.flavor_fungibility.when_can_borrow);
	spec.when_can_preempt =
	    fungibility(cq->spec.flavor_fungibility.when_can_preempt);
	spec.has_fair_weight = cq->spec.has_fair_sharing_weight;
	spec.fair_weight = cq->spec.fair_sharing_weight.milli;
	spec.preference = cq->spec.flavor_fungibility.preference ==
				  API_FUNG_PREF_PREEMPTION_OVER_BORROWING
			      ? QUE_PREEMPTION_OVER_BORROWING
			      : QUE_BORROWING_OVER_PREEMPTION;
	spec.admission_fair =
	    cq->spec.has_admission_scope &&
	    cq->spec.admission_mode == API_USAGE_BASED_ADMISSION_FAIR_SHARING;
	rc = que_cq_set(st, &spec, err);
	groups_dispose(&g);
	return rc;
}

int rec_sync_cohort(que_state *st, const struct api_cohort *co, cu_error *err)
{
	struct que_cohort_spec spec;
	struct groups g;
	int rc;

	rc = groups_build(&g, &co->spec.resource_groups, co->meta.name, err);
	if (rc)
		return rc;
	memset(&spec, 0, sizeof(spec));
	spec.name = co->meta.name;
	spec.parent = co->spec.parent_name;
	spec.groups = g.groups;
	spec.n_groups = co->spec.resource_groups.n;
	rc = que_cohort_set(st, &spec, err);
	groups_dispose(&g);
	if (rc == CU_OK)
		rc = que_cohort_set_fair_weight(st, co->meta.name,
		    co->spec.has_fair_sharing_weight,
		    co->spec.fair_sharing_weight.milli, err);
	return rc;
}

int rec_sync_local_queue(
    que_state *st, const struct api_local_queue *lq, cu_error *err)
{
	struct que_lq_spec spec;
	int rc;

	memset(&spec, 0, sizeof(spec));
	spec.ns = lq->meta.namespace_;
	spec.name = lq->meta.name;
	spec.cluster_queue = lq->spec.cluster_queue;
	spec.stop = stop(lq->spec.stop_policy);
	rc = que_lq_set(st, &spec, err);
	if (rc == CU_OK)
		rc = que_lq_set_fair_weight(st, lq->meta.namespace_,
		    lq->meta.name, lq->spec.has_fair_sharing_weight,
		    lq->spec.fair_sharing_weight.milli, err);
	return rc;
}

/* ---- Workloads ------------------------------------------------------- */

bool rec_workload_holds_quota(const struct api_workload *wl)
{
	return wl->status.has_admission &&
	       api_conditions_true(&wl->status.conditions, "QuotaReserved");
}

bool rec_workload_inactive(const struct api_workload *wl)
{
	return api_conditions_true(&wl->status.conditions, "Finished") ||
	       (wl->spec.has_active && !wl->spec.active);
}

/* Everything one pod set needs, owned here, freed by podset_dispose. */
struct podset {
	struct api_request *reqs;
	size_t n_reqs;
	struct que_request *qreqs; /* as quota counts them (resources) */
	size_t n_qreqs;
	struct que_request *raw; /* the pod's own requests, n_reqs */
	struct que_kv *selector;
	size_t n_selector;
	struct que_toleration *tols;
	size_t n_tols;
	struct que_affinity_term *terms;
	size_t n_terms;
	struct que_node_requirement *node_reqs;
	const char **values;
};

static void podset_dispose(struct podset *p)
{
	size_t i;

	for (i = 0; i < p->n_reqs; i++)
		cu_free(p->reqs[i].name);
	cu_free(p->reqs);
	cu_free(p->qreqs);
	cu_free(p->raw);
	cu_free(p->selector);
	cu_free(p->tols);
	cu_free(p->terms);
	cu_free(p->node_reqs);
	cu_free(p->values);
}

static enum que_taint_effect effect_of(const char *s, bool *any)
{
	*any = s == NULL || s[0] == '\0';
	if (s != NULL && strcmp(s, "PreferNoSchedule") == 0)
		return QUE_EFFECT_PREFER_NO_SCHEDULE;
	if (s != NULL && strcmp(s, "NoExecute") == 0)
		return QUE_EFFECT_NO_EXECUTE;
	return QUE_EFFECT_NO_SCHEDULE;
}

/* The arrays of p for a pod template with these node selector,
 * tolerations and required node affinity terms (p->reqs already
 * decoded). False when out of memory. */
static bool podset_alloc(
    struct podset *p, json_t *sel, json_t *tols, json_t *terms)
{
	size_t i, j, nvals = 0, nreqs = 0;
	json_t *t, *e;

	json_array_foreach(terms, i, t)
	{
		json_t *exprs = json_object_get(t, "matchExpressions");

		nreqs += json_array_size(exprs);
		json_array_foreach(exprs, j, e) nvals +=
		    json_array_size(json_object_get(e, "values"));
	}
	p->qreqs = cu_calloc(p->n_reqs + 1, sizeof(*p->qreqs));
	p->selector =
	    cu_calloc(json_object_size(sel) + 1, sizeof(*p->selector));
	p->tols = cu_calloc(json_array_size(tols) + 1, sizeof(*p->tols));
	p->terms = cu_calloc(json_array_size(terms) + 1, sizeof(*p->terms));
	p->node_reqs = cu_calloc(nreqs + 1, sizeof(*p->node_reqs));
	p->values = cu_calloc(nvals + 1, sizeof(*p->values));
	return p->qreqs && p->selector && p->tols && p->terms && p->node_reqs &&
	       p->values;
}

static void podset_tolerations(struct podset *p, json_t *tols)
{
	size_t i;
	json_t *t;

	json_array_foreach(tols, i, t)
	{
		struct que_toleration *o = &p->tols[p->n_tols++];
		const char *op =
		    json_string_value(json_object_get(t, "operator"));

		o->key = json_string_value(json_object_get(t, "key"));
		o->value = json_string_value(json_object_get(t, "value"));
		o->op = op != NULL && strcmp(op, "Exists") == 0
			    ? QUE_TOLERATE_EXISTS
			    : QUE_TOLERATE_EQUAL;
		o->effect =
		    effect_of(json_string_value(json_object_get(t, "effect")),
			&o->any_effect);
	}
}

/* The required node affinity terms into p->terms, their requirements
 * into p->node_reqs and the values into p->values. */
static void podset_affinity(struct podset *p, json_t *terms)
{
	size_t i, j, vi = 0, ri = 0;
	json_t *t, *e, *v;

	json_array_foreach(terms, i, t)
	{
		json_t *exprs = json_object_get(t, "matchExpressions");
		struct que_affinity_term *term = &p->terms[p->n_terms++];

		term->reqs = &p->node_reqs[ri];
		json_array_foreach(exprs, j, e)
		{
			struct que_node_requirement *r = &p->node_reqs[ri];
			const char *op =
			    json_string_value(json_object_get(e, "operator"));
			json_t *vals = json_object_get(e, "values");
			size_t k;

			/* Gt/Lt compare node label values as integers; the
			 * engine matches flavors by labels only, so such a
			 * requirement cannot be decided here: skip it, as
			 * Kueue's flavor assigner does for unknown keys. */
			if (op == NULL || (strcmp(op, "In") != 0 &&
					      strcmp(op, "NotIn") != 0 &&
					      strcmp(op, "Exists") != 0 &&
					      strcmp(op, "DoesNotExist") != 0))
				continue;
			r->key = json_string_value(json_object_get(e, "key"));
			if (r->key == NULL)
				continue; /* the API requires it; skip, as Kueue
					   */
			r->op = strcmp(op, "In") == 0	   ? QUE_SEL_IN
				: strcmp(op, "NotIn") == 0 ? QUE_SEL_NOT_IN
				: strcmp(op, "Exists") == 0
				    ? QUE_SEL_EXISTS
				    : QUE_SEL_DOES_NOT_EXIST;
			r->values = &p->values[vi];
			r->n_values = 0;
			json_array_foreach(vals, k, v)
			{
				if (json_is_string(v)) {
					p->values[vi++] = json_string_value(v);
					r->n_values++;
				}
			}
			ri++;
			term->n_reqs++;
		}
	}
}

/* Scheduling constraints of a pod template (json, borrowed: the strings
 * handed to the engine point into it). */
static int podset_build(struct podset *p, const struct api_podset *ps,
    size_t idx, que_state *st, struct que_podset_spec *out, cu_error *err)
{
	char path[64];
	json_t *spec = json_object_get(ps->template, "spec");
	json_t *sel = json_object_get(spec, "nodeSelector");
	json_t *tols = json_object_get(spec, "tolerations");
	json_t *terms = json_object_get(
	    json_object_get(json_object_get(json_object_get(spec, "affinity"),
				"nodeAffinity"),
		"requiredDuringSchedulingIgnoredDuring"
		"Execution"),
	    "nodeSelectorTerms");
	size_t i;
	const char *key;
	json_t *v;
	int rc;

	memset(p, 0, sizeof(*p));
	snprintf(path, sizeof(path), "spec.podSets[%zu].template", idx);
	rc = api_pod_requests(ps->template, path, &p->reqs, &p->n_reqs, err);
	if (rc)
		return rc;
	if (!podset_alloc(p, sel, tols, terms))
		return cu_error_set(err, CU_ENOMEM, "%s: out of memory", path);
	for (i = 0; i < p->n_reqs; i++) {
		p->qreqs[i].resource = p->reqs[i].name;
		p->qreqs[i].per_pod = p->reqs[i].milli;
	}
	{
		/* The Configuration's resources (excluded prefixes,
		 * transformations) decide what quota counts. */
		p->raw = p->qreqs;
		p->qreqs = NULL;
		rc = que_resources_apply(
		    st, p->raw, p->n_reqs, &p->qreqs, &p->n_qreqs, err);
		if (rc)
			return rc;
	}
	json_object_foreach(sel, key, v)
	{
		if (!json_is_string(v))
			continue;
		p->selector[p->n_selector].key = key;
		p->selector[p->n_selector++].value = json_string_value(v);
	}
	podset_tolerations(p, tols);
	podset_affinity(p, terms);
	out->name = ps->name;
	out->count = ps->has_count ? ps->count : 1;
	out->has_min_count = ps->has_min_count;
	out->min_count = ps->min_count;
	out->requests = p->qreqs;
	out->n_requests = p->n_qreqs;
	out->pod_requests = p->raw; /* topology placement reads these */
	out->n_pod_requests = p->n_reqs;
	out->tolerations = p->tols;
	out->n_tolerations = p->n_tols;
	out->node_selector = p->selector;
	out->n_node_selector = p->n_selector;
	out->affinity = p->terms;
	out->n_affinity = p->n_terms;
	return CU_OK;
}

/* fr ids, podset by podset and request by request (then the pods slot,
 * UINT32_MAX when the admission has no flavor for pods), and the admitted
 * counts, from the admission (que_workload_adopt_counts's layout). */
static int admission_frs(que_state *st, const struct api_workload *wl,
    const struct que_wl *qw, uint32_t **out, int32_t **counts_out,
    cu_error *err)
{
	size_t n = 0, k = 0;
	uint32_t i, j, *frs;
	int32_t *counts;

	for (i = 0; i < qw->n_podsets; i++)
		n += qw->podsets[i].n_spec_req + qw->podsets[i].pods_slot;
	frs = cu_calloc(n + 1, sizeof(*frs));
	counts = cu_calloc(qw->n_podsets + 1, sizeof(*counts));
	if (!frs || !counts) {
		cu_free(frs);
		cu_free(counts);
		return cu_error_set(err, CU_ENOMEM,
		    "workload %s: out of memory", wl->meta.name);
	}
	for (i = 0; i < qw->n_podsets; i++) {
		const struct api_podset_assignment *a = NULL;
		size_t m;

		for (m = 0; m < wl->status.admission.n_pod_set_assignments;
		     m++) {
			const struct api_podset_assignment *c =
			    &wl->status.admission.pod_set_assignments[m];

			if (strcmp(c->name, qw->podsets[i].name) == 0)
				a = c;
		}
		counts[i] =
		    a && a->has_count ? a->count : qw->podsets[i].full_count;
		if (counts[i] < 0 || counts[i] > qw->podsets[i].full_count)
			counts[i] = qw->podsets[i].full_count;
		for (j = 0;
		     j < qw->podsets[i].n_spec_req + qw->podsets[i].pods_slot;
		     j++, k++) {
			const char *res =
			    que_resource_name(st, qw->podsets[i].req[j].res);
			const char *fname =
			    a ? api_strmap_get(&a->flavors, res) : NULL;
			struct que_flavor *f =
			    fname ? que_flavor_get(st, fname) : NULL;

			if (fname == NULL &&
			    (j == qw->podsets[i].n_spec_req ||
				que_resources_ignore_undeclared(st))) {
				/* pods, or a resource quotaCheckStrategy
				 * IgnoreUndeclared leaves uncharged */
				frs[k] = UINT32_MAX;
				continue;
			}
			if (f == NULL ||
			    (frs[k] = que_fr_find(st, f->id,
				 qw->podsets[i].req[j].res)) == UINT32_MAX) {
				cu_free(frs);
				cu_free(counts);
				return cu_error_set(err, CU_ENOTFOUND,
				    "workload %s/%s: status.admission: no "
				    "known flavor for %s in pod set %s",
				    wl->meta.namespace_, wl->meta.name, res,
				    qw->podsets[i].name);
			}
		}
	}
	*out = frs;
	*counts_out = counts;
	return CU_OK;
}

int32_t rec__spec_count(const struct api_workload *wl, const char *name)
{
	size_t i;

	for (i = 0; i < wl->spec.n_pod_sets; i++) {
		const struct api_podset *ps = &wl->spec.pod_sets[i];

		if (strcmp(ps->name ? ps->name : "main", name) == 0)
			return ps->has_count ? ps->count : 1;
	}
	return -1;
}

int32_t rec__count_after_reclaim(const struct api_workload *wl,
    const char *podset, int32_t admitted, int32_t full)
{
	size_t i;

	for (i = 0; i < wl->status.n_reclaimable_pods; i++) {
		const struct api_reclaimable_pod *r =
		    &wl->status.reclaimable_pods[i];
		int32_t rc;

		if (r->name == NULL || strcmp(r->name, podset) != 0)
			continue;
		rc = r->count < 0 ? 0 : r->count > full ? full : r->count;
		return admitted < full - rc ? admitted : full - rc;
	}
	return admitted;
}

/* Podset i's requests with the DRA result applied: drops taken out,
 * additions summed in (after the transformations, as Kueue). */
static int dra_apply(struct podset *p, const struct rec_dra_podset *d,
    struct que_podset_spec *out, cu_error *err)
{
	struct que_request *q;
	size_t i, k, n = 0;

	if (d->n_add == 0 && d->n_drop == 0)
		return CU_OK;
	q = cu_calloc(p->n_qreqs + d->n_add + 1, sizeof(*q));
	if (q == NULL)
		return cu_error_set(err, CU_ENOMEM, "DRA: out of memory");
	for (i = 0; i < p->n_qreqs; i++) {
		for (k = 0; k < d->n_drop; k++)
			if (strcmp(d->drop[k], p->qreqs[i].resource) == 0)
				break;
		if (k == d->n_drop)
			q[n++] = p->qreqs[i];
	}
	for (k = 0; k < d->n_add; k++) {
		for (i = 0; i < n; i++)
			if (strcmp(q[i].resource, d->add[k].resource) == 0)
				break;
		if (i == n)
			q[n++] = d->add[k];
		else if (__builtin_add_overflow(
			     q[i].per_pod, d->add[k].per_pod, &q[i].per_pod))
			q[i].per_pod = INT64_MAX;
	}
	cu_free(p->qreqs);
	p->qreqs = q;
	p->n_qreqs = n;
	out->requests = q;
	out->n_requests = n;
	return CU_OK;
}

int rec_sync_workload(que_state *st, const struct api_workload *wl,
    bool ns_eligible, cu_error *err)
{
	return rec_sync_workload_dra(
	    st, wl, ns_eligible, NULL, NULL, NULL, NULL, err);
}

/* DRA's refusal or additions for the built podsets own[0..n). */
static int sync_dra(const struct rec_dra_config *cfg,
    const struct rec_dra_lookup *lk, const struct api_workload *wl,
    struct podset *own, struct que_podset_spec *ps, size_t n, char **refused,
    bool *retry, cu_error *err)
{
	const struct que_request **raw = cu_calloc(n + 1, sizeof(*raw));
	size_t *nraw = cu_calloc(n + 1, sizeof(*nraw)), i;
	struct rec_dra_result r;
	int rc;

	if (raw == NULL || nraw == NULL) {
		cu_free(raw);
		cu_free(nraw);
		return cu_error_set(err, CU_ENOMEM, "DRA: out of memory");
	}
	for (i = 0; i < n; i++) {
		raw[i] = own[i].raw;
		nraw[i] = own[i].n_reqs;
	}
	rc = rec_dra_evaluate(cfg, lk, wl, raw, nraw, &r, err);
	cu_free(raw);
	cu_free(nraw);
	if (rc == CU_OK && r.refused != NULL) {
		rc = cu_error_set(err, CU_EINVAL, "%s", r.refused);
		if (retry != NULL)
			*retry = r.retry;
		if (refused != NULL) {
			*refused = r.refused;
			r.refused = NULL;
		}
	}
	for (i = 0; rc == CU_OK && i < r.n && i < n; i++)
		rc = dra_apply(&own[i], &r.podsets[i], &ps[i], err);
	rec_dra_result_dispose(&r);
	return rc;
}

int rec_sync_workload_dra(que_state *st, const struct api_workload *wl,
    bool ns_eligible, const struct rec_dra_config *cfg,
    const struct rec_dra_lookup *lk, char **refused, bool *retry, cu_error *err)
{
	struct que_workload_spec spec;
	struct que_podset_spec *ps;
	struct podset *own;
	size_t i, n = wl->spec.n_pod_sets;
	int rc = CU_OK;

	ps = cu_calloc(n + 1, sizeof(*ps));
	own = cu_calloc(n + 1, sizeof(*own));
	if (!ps || !own) {
		cu_free(ps);
		cu_free(own);
		return cu_error_set(err, CU_ENOMEM,
		    "workload %s: out of memory", wl->meta.name);
	}
	if (refused != NULL)
		*refused = NULL;
	for (i = 0; i < n && rc == CU_OK; i++)
		rc = podset_build(
		    &own[i], &wl->spec.pod_sets[i], i, st, &ps[i], err);
	if (rc == CU_OK && cfg != NULL)
		rc = sync_dra(cfg, lk, wl, own, ps, n, refused, retry, err);
	/* Pods status.reclaimablePods gives back are neither requested nor
	 * held (Kueue's podSetsCountsAfterReclaim): the engine's count of
	 * a pod set is what is left; an admission's larger count is capped
	 * to it when adopted. */
	for (i = 0; i < n && rc == CU_OK; i++)
		if (ps[i].name != NULL)
			ps[i].count = rec__count_after_reclaim(
			    wl, ps[i].name, ps[i].count, ps[i].count);
	if (rc == CU_OK) {
		memset(&spec, 0, sizeof(spec));
		spec.uid = wl->meta.uid;
		spec.ns = wl->meta.namespace_;
		spec.name = wl->meta.name;
		spec.queue_name =
		    wl->spec.queue_name ? wl->spec.queue_name : "";
		spec.priority = wl->spec.has_priority ? wl->spec.priority : 0;
		spec.created_ns = wl->meta.creation_ns;
		spec.namespace_eligible = ns_eligible;
		spec.podsets = ps;
		spec.n_podsets = n;
		spec.replaces = rec_slice_replaces(wl);
		rc = que_workload_add(st, &spec, err);
	}
	for (i = 0; i < n; i++)
		podset_dispose(&own[i]);
	cu_free(own);
	cu_free(ps);
	if (rc == CU_OK && rec_workload_holds_quota(wl)) {
		struct que_wl *qw = que_workload_get(st, wl->meta.uid);
		uint32_t *frs = NULL;
		int32_t *counts = NULL;
		const struct api_condition *c = api_conditions_find(
		    &wl->status.conditions, "QuotaReserved");

		rc = admission_frs(st, wl, qw, &frs, &counts, err);
		if (rc == CU_OK)
			rc = que_workload_adopt_counts(st, wl->meta.uid,
			    wl->status.admission.cluster_queue, frs, counts,
			    c && c->has_last_transition ? c->last_transition_ns
							: wl->meta.creation_ns,
			    err);
		cu_free(frs);
		cu_free(counts);
	}
	return rc;
}
