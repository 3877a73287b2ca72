/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/model_kueue.c - JSON codecs of the kueue.x-k8s.io/v1beta2 queueing
 * kinds: ResourceFlavor, ClusterQueue, Cohort, LocalQueue and
 * WorkloadPriorityClass (the Workload is in api/model_workload.c). Required
 * fields and enum values follow Kueue's CRDs so that cueue rejects what the API
 * server would have rejected, with the same field path.
 */
#include <string.h>

#include "api/labelselector.h"
#include "api/model_internal.h"

#define KUEUE_V1B2 "kueue.x-k8s.io/v1beta2"

/* ---- quota structures shared by ClusterQueue and Cohort ---------------- */

void api_resource_groups_dispose(struct api_resource_groups *rg)
{
	size_t i, j, k;

	for (i = 0; i < rg->n; i++) {
		struct api_resource_group *g = &rg->items[i];

		api_strlist_dispose(&g->covered_resources);
		for (j = 0; j < g->n_flavors; j++) {
			for (k = 0; k < g->flavors[j].n_resources; k++)
				cu_free(g->flavors[j].resources[k].name);
			cu_free(g->flavors[j].resources);
			cu_free(g->flavors[j].name);
		}
		cu_free(g->flavors);
	}
	cu_free(rg->items);
	rg->items = NULL;
	rg->n = 0;
}

static void dec_resource_quota(
    struct api_dec *d, const json_t *r, void *item, void *ctx)
{
	struct api_resource_quota *q = item;

	(void)ctx;
	apid_str(d, r, "name", true, &q->name);
	apid_qty(d, r, "nominalQuota", true, NULL, &q->nominal_quota);
	apid_qty(d, r, "borrowingLimit", false, &q->has_borrowing_limit,
	    &q->borrowing_limit);
	apid_qty(d, r, "lendingLimit", false, &q->has_lending_limit,
	    &q->lending_limit);
}

/* ctx: the group's number of covered resources (size_t). */
static void dec_flavor_quotas(
    struct api_dec *d, const json_t *e, void *item, void *ctx)
{
	struct api_flavor_quotas *fq = item;
	size_t ncovered = *(const size_t *)ctx, mark;

	apid_str(d, e, "name", true, &fq->name);
	fq->resources = apid_each(d, e, "resources", true,
	    sizeof(*fq->resources), &fq->n_resources, dec_resource_quota, NULL);
	if (d->rc != CU_OK)
		return;
	if (fq->resources == NULL) {
		mark = apid_push(d, "resources");
		apid_fail(d, CU_EINVAL, "Required value");
		apid_pop(d, mark);
		return;
	}
	/* CEL rule of the CRD: one quota per covered resource. */
	if (fq->n_resources != ncovered)
		apid_fail(d, CU_EINVAL,
		    "Invalid value: flavors must have the same number of "
		    "resources as the coveredResources (%zu != %zu)",
		    fq->n_resources, ncovered);
}

static void dec_resource_group(
    struct api_dec *d, const json_t *e, void *item, void *ctx)
{
	struct api_resource_group *g = item;

	(void)ctx;
	apid_strlist(d, e, "coveredResources", true, &g->covered_resources);
	g->flavors = apid_each(d, e, "flavors", true, sizeof(*g->flavors),
	    &g->n_flavors, dec_flavor_quotas, &g->covered_resources.n);
}

void apid_resource_groups(struct api_dec *d, const json_t *o, const char *key,
    struct api_resource_groups *out)
{
	out->items = apid_each(d, o, key, false, sizeof(*out->items), &out->n,
	    dec_resource_group, NULL);
}

void apie_resource_groups(struct api_enc *e, json_t *dst, const char *key,
    const struct api_resource_groups *rg)
{
	json_t *a = apie_arr(e, dst, key, rg->n);
	size_t i, j, k;

	for (i = 0; a && i < rg->n; i++) {
		const struct api_resource_group *g = &rg->items[i];
		json_t *go = json_array_get(a, i);
		json_t *fa;

		apie_strlist(e, go, "coveredResources", &g->covered_resources);
		fa = apie_arr(e, go, "flavors", g->n_flavors);
		for (j = 0; fa && j < g->n_flavors; j++) {
			const struct api_flavor_quotas *fq = &g->flavors[j];
			json_t *fo = json_array_get(fa, j);
			json_t *ra;

			apie_str(e, fo, "name", fq->name);
			ra = apie_arr(e, fo, "resources", fq->n_resources);
			for (k = 0; ra && k < fq->n_resources; k++) {
				const struct api_resource_quota *q =
				    &fq->resources[k];
				json_t *ro = json_array_get(ra, k);

				apie_str(e, ro, "name", q->name);
				apie_qty(e, ro, "nominalQuota", true,
				    &q->nominal_quota);
				apie_qty(e, ro, "borrowingLimit",
				    q->has_borrowing_limit,
				    &q->borrowing_limit);
				apie_qty(e, ro, "lendingLimit",
				    q->has_lending_limit, &q->lending_limit);
			}
		}
	}
}

void api_flavor_usages_dispose(struct api_flavor_usages *fu)
{
	size_t i, j;

	for (i = 0; i < fu->n; i++) {
		for (j = 0; j < fu->items[i].n_resources; j++)
			cu_free(fu->items[i].resources[j].name);
		cu_free(fu->items[i].resources);
		cu_free(fu->items[i].name);
	}
	cu_free(fu->items);
	fu->items = NULL;
	fu->n = 0;
}

static void dec_resource_usage(
    struct api_dec *d, const json_t *re, void *item, void *ctx)
{
	struct api_resource_usage *u = item;

	(void)ctx;
	apid_str(d, re, "name", true, &u->name);
	apid_qty(d, re, "total", false, &u->has_total, &u->total);
	apid_qty(d, re, "borrowed", false, &u->has_borrowed, &u->borrowed);
}

static void dec_flavor_usage(
    struct api_dec *d, const json_t *e, void *item, void *ctx)
{
	struct api_flavor_usage *f = item;

	(void)ctx;
	apid_str(d, e, "name", true, &f->name);
	f->resources = apid_each(d, e, "resources", true, sizeof(*f->resources),
	    &f->n_resources, dec_resource_usage, NULL);
}

void apid_flavor_usages(struct api_dec *d, const json_t *o, const char *key,
    struct api_flavor_usages *out)
{
	out->items = apid_each(d, o, key, false, sizeof(*out->items), &out->n,
	    dec_flavor_usage, NULL);
}

void apie_flavor_usages(struct api_enc *e, json_t *dst, const char *key,
    const struct api_flavor_usages *fu)
{
	json_t *a = apie_arr(e, dst, key, fu->n);
	size_t i, j;

	for (i = 0; a && i < fu->n; i++) {
		const struct api_flavor_usage *f = &fu->items[i];
		json_t *fo = json_array_get(a, i);
		json_t *ra;

		apie_str(e, fo, "name", f->name);
		ra = apie_arr(e, fo, "resources", f->n_resources);
		for (j = 0; ra && j < f->n_resources; j++) {
			const struct api_resource_usage *u = &f->resources[j];
			json_t *ro = json_array_get(ra, j);

			apie_str(e, ro, "name", u->name);
			apie_qty(e, ro, "total", u->has_total, &u->total);
			apie_qty(
			    e, ro, "borrowed", u->has_borrowed, &u->borrowed);
		}
	}
}

/* fairSharing{weight} of ClusterQueue, Cohort and LocalQueue specs. */
static void dec_fair_weight(struct api_dec *d, const json_t *spec, bool *has,
    bool *has_weight, struct api_quantity *w)
{
	const json_t *fs =
	    apid_field(d, spec, "fairSharing", JSON_OBJECT, false);
	size_t mark;

	if (fs == NULL)
		return;
	*has = true;
	mark = apid_push(d, "fairSharing");
	apid_qty(d, fs, "weight", false, has_weight, w);
	apid_pop(d, mark);
}

/* ---- ResourceFlavor ----------------------------------------------------- */

void apid_taint(struct api_dec *d, const json_t *e, void *item, void *ctx)
{
	struct api_taint *t = item;
	int eff = 0;

	(void)ctx;
	apid_str(d, e, "key", true, &t->key);
	apid_str(d, e, "value", false, &t->value);
	apid_enum(d, e, "effect", true, apid_effect_names, &eff);
	t->effect = (enum api_taint_effect)eff;
	apid_time(
	    d, e, "timeAdded", false, &t->has_time_added, &t->time_added_ns);
}

static void resource_flavor_decode_body(
    struct api_dec *d, const json_t *j, struct api_resource_flavor *rf)
{
	const json_t *spec;
	size_t mark;

	apid_meta(d, j, &rf->meta);
	spec = apid_section(d, j, "spec", false, &mark);
	apid_strmap(d, spec, "nodeLabels", &rf->spec.node_labels);
	rf->spec.node_taints = apid_each(d, spec, "nodeTaints", false,
	    sizeof(*rf->spec.node_taints), &rf->spec.n_node_taints, apid_taint,
	    NULL);
	apid_tolerations(d, spec, "tolerations", &rf->spec.tolerations,
	    &rf->spec.n_tolerations);
	apid_str(d, spec, "topologyName", false, &rf->spec.topology_name);
	apid_pop(d, mark);
}

static void resource_flavor_encode_body(
    struct api_enc *e, json_t *dst, const struct api_resource_flavor *rf)
{
	json_t *spec, *a;
	size_t i;

	apie_meta(e, dst, &rf->meta);
	spec = apie_obj(e, dst, "spec", true);
	apie_strmap(e, spec, "nodeLabels", &rf->spec.node_labels);
	a = apie_arr(e, spec, "nodeTaints", rf->spec.n_node_taints);
	for (i = 0; a && i < rf->spec.n_node_taints; i++) {
		const struct api_taint *t = &rf->spec.node_taints[i];
		json_t *o = json_array_get(a, i);

		apie_str(e, o, "key", t->key);
		apie_str(e, o, "value", t->value);
		apie_enum(e, o, "effect", apid_effect_names, (int)t->effect);
		apie_time(e, o, "timeAdded", t->has_time_added,
		    t->time_added_ns, false);
	}
	apie_tolerations(e, spec, "tolerations", rf->spec.tolerations,
	    rf->spec.n_tolerations);
	apie_str(e, spec, "topologyName", rf->spec.topology_name);
}

static void resource_flavor_dispose_body(struct api_resource_flavor *rf)
{
	size_t i;

	api_strmap_dispose(&rf->spec.node_labels);
	for (i = 0; i < rf->spec.n_node_taints; i++) {
		cu_free(rf->spec.node_taints[i].key);
		cu_free(rf->spec.node_taints[i].value);
	}
	cu_free(rf->spec.node_taints);
	api_tolerations_dispose(rf->spec.tolerations, rf->spec.n_tolerations);
	cu_free(rf->spec.topology_name);
}

API_MODEL_DEFINE_CODEC(resource_flavor, KUEUE_V1B2, "ResourceFlavor")

/* ---- ClusterQueue ------------------------------------------------------- */

static const struct api_enum_name qs_names[] = {
    {"StrictFIFO", API_QS_STRICT_FIFO},
    {"BestEffortFIFO", API_QS_BEST_EFFORT_FIFO},
    {NULL, 0},
};

static const struct api_enum_name fung_names[] = {
    {"MayStopSearch", API_FUNG_MAY_STOP_SEARCH},
    {"TryNextFlavor", API_FUNG_TRY_NEXT_FLAVOR},
    {NULL, 0},
};

static const struct api_enum_name fung_pref_names[] = {
    {"BorrowingOverPreemption", API_FUNG_PREF_BORROWING_OVER_PREEMPTION},
    {"PreemptionOverBorrowing", API_FUNG_PREF_PREEMPTION_OVER_BORROWING},
    {NULL, 0},
};

static const struct api_enum_name admission_mode_names[] = {
    {"NoAdmissionFairSharing", API_NO_ADMISSION_FAIR_SHARING},
    {"UsageBasedAdmissionFairSharing", API_USAGE_BASED_ADMISSION_FAIR_SHARING},
    {NULL, 0},
};

static const struct api_enum_name reclaim_names[] = {
    {"Never", API_PREEMPT_NEVER},
    {"LowerPriority", API_PREEMPT_LOWER_PRIORITY},
    {"Any", API_PREEMPT_ANY},
    {NULL, 0},
};

static const struct api_enum_name within_cq_names[] = {
    {"Never", API_PREEMPT_NEVER},
    {"LowerPriority", API_PREEMPT_LOWER_PRIORITY},
    {"LowerOrNewerEqualPriority", API_PREEMPT_LOWER_OR_NEWER_EQUAL_PRIORITY},
    {NULL, 0},
};

static const struct api_enum_name borrow_names[] = {
    {"Never", API_PREEMPT_NEVER},
    {"LowerPriority", API_PREEMPT_LOWER_PRIORITY},
    {NULL, 0},
};

enum api_queueing_strategy api_cq_queueing_strategy(
    const struct api_cluster_queue *cq)
{
	return cq->spec.queueing_strategy == API_QS_UNSET
		   ? API_QS_BEST_EFFORT_FIFO
		   : cq->spec.queueing_strategy;
}

static void dec_cq_admission_check(
    struct api_dec *d, const json_t *e, void *item, void *ctx)
{
	struct api_admission_check_rule *r = item;

	(void)ctx;
	apid_str(d, e, "name", true, &r->name);
	apid_strlist(d, e, "onFlavors", false, &r->on_flavors);
}

static void dec_cq_spec(
    struct api_dec *d, const json_t *spec, struct api_cluster_queue_spec *s)
{
	const json_t *o;
	size_t mark, m2;
	int v;

	apid_resource_groups(d, spec, "resourceGroups", &s->resource_groups);
	apid_str(d, spec, "cohortName", false, &s->cohort_name);
	v = 0;
	apid_enum(d, spec, "queueingStrategy", false, qs_names, &v);
	s->queueing_strategy = (enum api_queueing_strategy)v;

	o = spec ? json_object_get(spec, "namespaceSelector") : NULL;
	if (o != NULL && d->rc == CU_OK) {
		cu_error local;
		int rc;

		mark = apid_push(d, "namespaceSelector");
		cu_error_clear(&local);
		rc = api_label_selector_decode(
		    &s->namespace_selector, o, d->path, &local);
		if (rc != CU_OK) {
			/* the selector codec already names the full path */
			d->rc = rc;
			cu_error_set(d->err, rc, "%s", local.msg);
		} else {
			s->has_namespace_selector = true;
		}
		apid_pop(d, mark);
	}

	o = apid_field(d, spec, "flavorFungibility", JSON_OBJECT, false);
	if (o != NULL) {
		s->has_flavor_fungibility = true;
		mark = apid_push(d, "flavorFungibility");
		v = 0;
		apid_enum(d, o, "whenCanBorrow", false, fung_names, &v);
		s->flavor_fungibility.when_can_borrow = (enum api_fungibility)v;
		v = 0;
		apid_enum(d, o, "whenCanPreempt", false, fung_names, &v);
		s->flavor_fungibility.when_can_preempt =
		    (enum api_fungibility)v;
		v = 0;
		apid_enum(d, o, "preference", false, fung_pref_names, &v);
		s->flavor_fungibility.preference = (enum api_fung_preference)v;
		apid_pop(d, mark);
	}

	o = apid_field(d, spec, "preemption", JSON_OBJECT, false);
	if (o != NULL) {
		const json_t *b;

		s->has_preemption = true;
		mark = apid_push(d, "preemption");
		v = 0;
		apid_enum(
		    d, o, "reclaimWithinCohort", false, reclaim_names, &v);
		s->preemption.reclaim_within_cohort =
		    (enum api_preempt_policy)v;
		v = 0;
		apid_enum(
		    d, o, "withinClusterQueue", false, within_cq_names, &v);
		s->preemption.within_cluster_queue = (enum api_preempt_policy)v;
		b = apid_field(d, o, "borrowWithinCohort", JSON_OBJECT, false);
		if (b != NULL) {
			s->preemption.has_borrow_within_cohort = true;
			m2 = apid_push(d, "borrowWithinCohort");
			v = 0;
			apid_enum(d, b, "policy", false, borrow_names, &v);
			s->preemption.borrow_within_cohort.policy =
			    (enum api_preempt_policy)v;
			apid_i32(d, b, "maxPriorityThreshold", false,
			    &s->preemption.borrow_within_cohort
				 .has_max_priority_threshold,
			    &s->preemption.borrow_within_cohort
				 .max_priority_threshold);
			apid_pop(d, m2);
		}
		apid_pop(d, mark);
	}

	o = apid_field(d, spec, "admissionChecksStrategy", JSON_OBJECT, false);
	if (o != NULL) {
		s->has_admission_checks_strategy = true;
		mark = apid_push(d, "admissionChecksStrategy");
		s->admission_checks = apid_each(d, o, "admissionChecks", false,
		    sizeof(*s->admission_checks), &s->n_admission_checks,
		    dec_cq_admission_check, NULL);
		apid_pop(d, mark);
	}
	v = 0;
	apid_enum(d, spec, "stopPolicy", false, api_stop_policy_names, &v);
	s->stop_policy = (enum api_stop_policy)v;
	dec_fair_weight(d, spec, &s->has_fair_sharing,
	    &s->has_fair_sharing_weight, &s->fair_sharing_weight);
	o = apid_field(d, spec, "admissionScope", JSON_OBJECT, false);
	if (o != NULL) {
		s->has_admission_scope = true;
		mark = apid_push(d, "admissionScope");
		v = 0;
		apid_enum(
		    d, o, "admissionMode", false, admission_mode_names, &v);
		s->admission_mode = (enum api_admission_mode)v;
		apid_pop(d, mark);
	}
}

static void dec_queue_counts(struct api_dec *d, const json_t *st, bool *hp,
    int32_t *p, bool *hr, int32_t *r, bool *ha, int32_t *a)
{
	apid_i32(d, st, "pendingWorkloads", false, hp, p);
	apid_i32(d, st, "reservingWorkloads", false, hr, r);
	apid_i32(d, st, "admittedWorkloads", false, ha, a);
}

static void dec_weighted_share(struct api_dec *d, const json_t *st, bool *has,
    bool *has_share, int64_t *share)
{
	const json_t *fs = apid_field(d, st, "fairSharing", JSON_OBJECT, false);
	size_t mark;

	if (fs == NULL)
		return;
	*has = true;
	mark = apid_push(d, "fairSharing");
	apid_i64(d, fs, "weightedShare", false, has_share, share);
	apid_pop(d, mark);
}

static void cluster_queue_decode_body(
    struct api_dec *d, const json_t *j, struct api_cluster_queue *cq)
{
	const json_t *sec;
	size_t mark;

	apid_meta(d, j, &cq->meta);
	sec = apid_section(d, j, "spec", false, &mark);
	dec_cq_spec(d, sec, &cq->spec);
	apid_pop(d, mark);
	sec = apid_section(d, j, "status", false, &mark);
	apid_conditions(d, sec, "conditions", false, &cq->status.conditions);
	apid_flavor_usages(
	    d, sec, "flavorsReservation", &cq->status.flavors_reservation);
	apid_flavor_usages(d, sec, "flavorsUsage", &cq->status.flavors_usage);
	dec_queue_counts(d, sec, &cq->status.has_pending_workloads,
	    &cq->status.pending_workloads, &cq->status.has_reserving_workloads,
	    &cq->status.reserving_workloads, &cq->status.has_admitted_workloads,
	    &cq->status.admitted_workloads);
	dec_weighted_share(d, sec, &cq->status.has_fair_sharing,
	    &cq->status.has_weighted_share, &cq->status.weighted_share);
	apid_pop(d, mark);
}

static void enc_fair_weight(struct api_enc *e, json_t *spec, bool has,
    bool has_weight, const struct api_quantity *w)
{
	json_t *fs = apie_obj(e, spec, "fairSharing", has);

	apie_qty(e, fs, "weight", has_weight, w);
}

static void enc_selector(
    struct api_enc *e, json_t *spec, bool has, const api_selector *sel)
{
	json_t *old, *v = NULL;
	api_selector prev;
	char *a, *b;
	bool same = false;

	if (e->rc != CU_OK || spec == NULL)
		return;
	if (!has) {
		json_object_del(spec, "namespaceSelector");
		return;
	}
	/* Keep the source form when it means the same selector: the
	 * selector codec may spell it differently (matchLabels vs In). */
	old = json_object_get(spec, "namespaceSelector");
	if (old != NULL &&
	    api_label_selector_decode(&prev, old, NULL, NULL) == CU_OK) {
		a = api_selector_string(&prev);
		b = api_selector_string(sel);
		same = a && b && strcmp(a, b) == 0 &&
		       prev.match_nothing == sel->match_nothing;
		cu_free(a);
		cu_free(b);
		api_selector_dispose(&prev);
	}
	if (same)
		return;
	e->rc = api_label_selector_encode(&v, sel, e->err);
	if (e->rc == CU_OK &&
	    json_object_set_new(spec, "namespaceSelector", v) != 0)
		apie_nomem(e);
}

static void enc_cq_spec(
    struct api_enc *e, json_t *spec, const struct api_cluster_queue_spec *s)
{
	json_t *o, *b, *a;
	size_t i;

	apie_resource_groups(e, spec, "resourceGroups", &s->resource_groups);
	apie_str(e, spec, "cohortName", s->cohort_name);
	apie_enum(
	    e, spec, "queueingStrategy", qs_names, (int)s->queueing_strategy);
	enc_selector(
	    e, spec, s->has_namespace_selector, &s->namespace_selector);
	o = apie_obj(e, spec, "flavorFungibility", s->has_flavor_fungibility);
	apie_enum(e, o, "whenCanBorrow", fung_names,
	    (int)s->flavor_fungibility.when_can_borrow);
	apie_enum(e, o, "whenCanPreempt", fung_names,
	    (int)s->flavor_fungibility.when_can_preempt);
	apie_enum(e, o, "preference", fung_pref_names,
	    (int)s->flavor_fungibility.preference);
	o = apie_obj(e, spec, "preemption", s->has_preemption);
	apie_enum(e, o, "reclaimWithinCohort", reclaim_names,
	    (int)s->preemption.reclaim_within_cohort);
	apie_enum(e, o, "withinClusterQueue", within_cq_names,
	    (int)s->preemption.within_cluster_queue);
	b = apie_obj(
	    e, o, "borrowWithinCohort", s->preemption.has_borrow_within_cohort);
	apie_enum(e, b, "policy", borrow_names,
	    (int)s->preemption.borrow_within_cohort.policy);
	apie_i64(e, b, "maxPriorityThreshold",
	    s->preemption.borrow_within_cohort.has_max_priority_threshold,
	    s->preemption.borrow_within_cohort.max_priority_threshold);
	o = apie_obj(e, spec, "admissionChecksStrategy",
	    s->has_admission_checks_strategy);
	a = apie_arr(e, o, "admissionChecks", s->n_admission_checks);
	for (i = 0; a && i < s->n_admission_checks; i++) {
		json_t *r = json_array_get(a, i);

		apie_str(e, r, "name", s->admission_checks[i].name);
		apie_strlist(
		    e, r, "onFlavors", &s->admission_checks[i].on_flavors);
	}
	apie_enum(
	    e, spec, "stopPolicy", api_stop_policy_names, (int)s->stop_policy);
	enc_fair_weight(e, spec, s->has_fair_sharing,
	    s->has_fair_sharing_weight, &s->fair_sharing_weight);
	o = apie_obj(e, spec, "admissionScope", s->has_admission_scope);
	apie_enum(e, o, "admissionMode", admission_mode_names,
	    (int)s->admission_mode);
}

json_t *apie_status(struct api_enc *e, json_t *dst, bool any)
{
	return apie_obj(e, dst, "status",
	    any || json_is_object(json_object_get(dst, "status")));
}

static void cluster_queue_encode_body(
    struct api_enc *e, json_t *dst, const struct api_cluster_queue *cq)
{
	json_t *st, *fs;

	apie_meta(e, dst, &cq->meta);
	enc_cq_spec(e, apie_obj(e, dst, "spec", true), &cq->spec);
	st = apie_status(e, dst,
	    cq->status.conditions.n || cq->status.flavors_usage.n ||
		cq->status.flavors_reservation.n ||
		cq->status.has_pending_workloads ||
		cq->status.has_reserving_workloads ||
		cq->status.has_admitted_workloads ||
		cq->status.has_fair_sharing);
	apie_conditions(e, st, "conditions", &cq->status.conditions, false);
	apie_flavor_usages(
	    e, st, "flavorsReservation", &cq->status.flavors_reservation);
	apie_flavor_usages(e, st, "flavorsUsage", &cq->status.flavors_usage);
	apie_i64(e, st, "pendingWorkloads", cq->status.has_pending_workloads,
	    cq->status.pending_workloads);
	apie_i64(e, st, "reservingWorkloads",
	    cq->status.has_reserving_workloads, cq->status.reserving_workloads);
	apie_i64(e, st, "admittedWorkloads", cq->status.has_admitted_workloads,
	    cq->status.admitted_workloads);
	fs = apie_obj(e, st, "fairSharing", cq->status.has_fair_sharing);
	apie_i64(e, fs, "weightedShare", cq->status.has_weighted_share,
	    cq->status.weighted_share);
}

static void cluster_queue_dispose_body(struct api_cluster_queue *cq)
{
	size_t i;

	api_resource_groups_dispose(&cq->spec.resource_groups);
	cu_free(cq->spec.cohort_name);
	api_selector_dispose(&cq->spec.namespace_selector);
	for (i = 0; i < cq->spec.n_admission_checks; i++) {
		cu_free(cq->spec.admission_checks[i].name);
		api_strlist_dispose(&cq->spec.admission_checks[i].on_flavors);
	}
	cu_free(cq->spec.admission_checks);
	api_conditions_dispose(&cq->status.conditions);
	api_flavor_usages_dispose(&cq->status.flavors_reservation);
	api_flavor_usages_dispose(&cq->status.flavors_usage);
}

API_MODEL_DEFINE_CODEC(cluster_queue, KUEUE_V1B2, "ClusterQueue")

/* ---- Cohort ------------------------------------------------------------- */

static void cohort_decode_body(
    struct api_dec *d, const json_t *j, struct api_cohort *co)
{
	const json_t *sec;
	size_t mark;

	apid_meta(d, j, &co->meta);
	sec = apid_section(d, j, "spec", false, &mark);
	apid_str(d, sec, "parentName", false, &co->spec.parent_name);
	apid_resource_groups(
	    d, sec, "resourceGroups", &co->spec.resource_groups);
	dec_fair_weight(d, sec, &co->spec.has_fair_sharing,
	    &co->spec.has_fair_sharing_weight, &co->spec.fair_sharing_weight);
	apid_pop(d, mark);
	sec = apid_section(d, j, "status", false, &mark);
	dec_weighted_share(d, sec, &co->status.has_fair_sharing,
	    &co->status.has_weighted_share, &co->status.weighted_share);
	apid_pop(d, mark);
}

static void cohort_encode_body(
    struct api_enc *e, json_t *dst, const struct api_cohort *co)
{
	json_t *spec, *st, *fs;

	apie_meta(e, dst, &co->meta);
	spec = apie_obj(e, dst, "spec", true);
	apie_str(e, spec, "parentName", co->spec.parent_name);
	apie_resource_groups(
	    e, spec, "resourceGroups", &co->spec.resource_groups);
	enc_fair_weight(e, spec, co->spec.has_fair_sharing,
	    co->spec.has_fair_sharing_weight, &co->spec.fair_sharing_weight);
	st = apie_status(e, dst, co->status.has_fair_sharing);
	fs = apie_obj(e, st, "fairSharing", co->status.has_fair_sharing);
	apie_i64(e, fs, "weightedShare", co->status.has_weighted_share,
	    co->status.weighted_share);
}

static void cohort_dispose_body(struct api_cohort *co)
{
	cu_free(co->spec.parent_name);
	api_resource_groups_dispose(&co->spec.resource_groups);
}

API_MODEL_DEFINE_CODEC(cohort, KUEUE_V1B2, "Cohort")

/* ---- LocalQueue --------------------------------------------------------- */

static void local_queue_decode_body(
    struct api_dec *d, const json_t *j, struct api_local_queue *lq)
{
	const json_t *sec;
	size_t mark;
	int v = 0;

	apid_meta(d, j, &lq->meta);
	sec = apid_section(d, j, "spec", false, &mark);
	apid_str(d, sec, "clusterQueue", false, &lq->spec.cluster_queue);
	apid_enum(d, sec, "stopPolicy", false, api_stop_policy_names, &v);
	lq->spec.stop_policy = (enum api_stop_policy)v;
	dec_fair_weight(d, sec, &lq->spec.has_fair_sharing,
	    &lq->spec.has_fair_sharing_weight, &lq->spec.fair_sharing_weight);
	apid_pop(d, mark);
	sec = apid_section(d, j, "status", false, &mark);
	apid_conditions(d, sec, "conditions", false, &lq->status.conditions);
	dec_queue_counts(d, sec, &lq->status.has_pending_workloads,
	    &lq->status.pending_workloads, &lq->status.has_reserving_workloads,
	    &lq->status.reserving_workloads, &lq->status.has_admitted_workloads,
	    &lq->status.admitted_workloads);
	apid_flavor_usages(
	    d, sec, "flavorsReservation", &lq->status.flavors_reservation);
	apid_flavor_usages(d, sec, "flavorsUsage", &lq->status.flavors_usage);
	apid_pop(d, mark);
}

static void local_queue_encode_body(
    struct api_enc *e, json_t *dst, const struct api_local_queue *lq)
{
	json_t *spec, *st;

	apie_meta(e, dst, &lq->meta);
	spec = apie_obj(e, dst, "spec", true);
	apie_str(e, spec, "clusterQueue", lq->spec.cluster_queue);
	apie_enum(e, spec, "stopPolicy", api_stop_policy_names,
	    (int)lq->spec.stop_policy);
	enc_fair_weight(e, spec, lq->spec.has_fair_sharing,
	    lq->spec.has_fair_sharing_weight, &lq->spec.fair_sharing_weight);
	st = apie_status(e, dst,
	    lq->status.conditions.n || lq->status.has_pending_workloads ||
		lq->status.has_reserving_workloads ||
		lq->status.has_admitted_workloads ||
		lq->status.flavors_reservation.n || lq->status.flavors_usage.n);
	apie_conditions(e, st, "conditions", &lq->status.conditions, false);
	apie_i64(e, st, "pendingWorkloads", lq->status.has_pending_workloads,
	    lq->status.pending_workloads);
	apie_i64(e, st, "reservingWorkloads",
	    lq->status.has_reserving_workloads, lq->status.reserving_workloads);
	apie_i64(e, st, "admittedWorkloads", lq->status.has_admitted_workloads,
	    lq->status.admitted_workloads);
	apie_flavor_usages(
	    e, st, "flavorsReservation", &lq->status.flavors_reservation);
	apie_flavor_usages(e, st, "flavorsUsage", &lq->status.flavors_usage);
}

static void local_queue_dispose_body(struct api_local_queue *lq)
{
	cu_free(lq->spec.cluster_queue);
	api_conditions_dispose(&lq->status.conditions);
	api_flavor_usages_dispose(&lq->status.flavors_reservation);
	api_flavor_usages_dispose(&lq->status.flavors_usage);
}

API_MODEL_DEFINE_CODEC(local_queue, KUEUE_V1B2, "LocalQueue")

/* ---- WorkloadPriorityClass --------------------------------------------- */

static void workload_priority_class_decode_body(
    struct api_dec *d, const json_t *j, struct api_workload_priority_class *w)
{
	apid_meta(d, j, &w->meta);
	apid_i32(d, j, "value", true, NULL, &w->value);
	apid_str(d, j, "description", false, &w->description);
}

static void workload_priority_class_encode_body(
    struct api_enc *e, json_t *dst, const struct api_workload_priority_class *w)
{
	apie_meta(e, dst, &w->meta);
	apie_i64(e, dst, "value", true, w->value);
	apie_str(e, dst, "description", w->description);
}

static void workload_priority_class_dispose_body(
    struct api_workload_priority_class *w)
{
	cu_free(w->description);
}

API_MODEL_DEFINE_CODEC(
    workload_priority_class, KUEUE_V1B2, "WorkloadPriorityClass")
