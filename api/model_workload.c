/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/model_workload.c - the JSON codec of the kueue.x-k8s.io/v1beta2
 * Workload: its spec (pod sets, queue, priority, active), and its status
 * (conditions, admission, requeue state, reclaimable pods, admission check
 * states with their podSetUpdates, resource requests, MultiKueue
 * placement, unhealthy nodes). Required fields, enum values and list
 * limits follow Kueue's CRD so that cueue rejects what the API server
 * would have rejected, with the same field path.
 */
#include <string.h>

#include "api/model_internal.h"

#define KUEUE_V1B2 "kueue.x-k8s.io/v1beta2"

static const struct api_enum_name pcref_group_names[] = {
    {"kueue.x-k8s.io", 1},
    {"scheduling.k8s.io", 2},
    {NULL, 0},
};

static const struct api_enum_name pcref_kind_names[] = {
    {"WorkloadPriorityClass", 1},
    {"PriorityClass", 2},
    {NULL, 0},
};

static const struct api_enum_name check_state_names[] = {
    {"Pending", API_CHECK_PENDING},
    {"Ready", API_CHECK_READY},
    {"Retry", API_CHECK_RETRY},
    {"Rejected", API_CHECK_REJECTED},
    {NULL, 0},
};

const char *api_check_state_name(enum api_check_state s)
{
	size_t i;

	for (i = 0; check_state_names[i].name != NULL; i++)
		if (check_state_names[i].value == (int)s)
			return check_state_names[i].name;
	return "";
}

#define API_MAX_PODSETS 18
#define API_MAX_TOLERATIONS 8

/* A list's item count is checked before any item, as the API server's
 * MaxItems is. */
static void dec_max_items(
    struct api_dec *d, const json_t *o, const char *key, size_t max)
{
	const json_t *arr = json_object_get(o, key);
	size_t mark;

	if (d->rc != CU_OK || !json_is_array(arr) ||
	    json_array_size(arr) <= max)
		return;
	mark = apid_push(d, key);
	apid_fail(d, CU_EINVAL, "Too many: %zu: must have at most %zu items",
	    json_array_size(arr), max);
	apid_pop(d, mark);
}

static void dec_wl_podset(
    struct api_dec *d, const json_t *e, void *item, void *ctx)
{
	struct api_podset *ps = item;

	(void)ctx;
	apid_str(d, e, "name", false, &ps->name);
	ps->template = apid_json(d, e, "template", JSON_OBJECT, true);
	apid_i32(d, e, "count", false, &ps->has_count, &ps->count);
	apid_i32(d, e, "minCount", false, &ps->has_min_count, &ps->min_count);
	apid_topology_request(
	    d, e, &ps->has_topology_request, &ps->topology_request);
}

static void dec_wl_spec(
    struct api_dec *d, const json_t *spec, struct api_workload *wl)
{
	const json_t *o;
	size_t mark;
	int v = 0;

	dec_max_items(d, spec, "podSets", API_MAX_PODSETS);
	wl->spec.pod_sets =
	    apid_each(d, spec, "podSets", true, sizeof(*wl->spec.pod_sets),
		&wl->spec.n_pod_sets, dec_wl_podset, NULL);
	if (d->rc == CU_OK && wl->spec.pod_sets == NULL) {
		mark = apid_push(d, "podSets");
		apid_fail(d, CU_EINVAL,
		    "Invalid value: 0: must have at least 1 items");
		apid_pop(d, mark);
	}
	apid_str(d, spec, "queueName", false, &wl->spec.queue_name);
	o = apid_field(d, spec, "priorityClassRef", JSON_OBJECT, false);
	if (o != NULL) {
		struct api_priority_class_ref *r = &wl->spec.priority_class_ref;

		wl->spec.has_priority_class_ref = true;
		mark = apid_push(d, "priorityClassRef");
		apid_enum(d, o, "group", true, pcref_group_names, &v);
		apid_enum(d, o, "kind", true, pcref_kind_names, &v);
		apid_str(d, o, "group", true, &r->group);
		apid_str(d, o, "kind", true, &r->kind);
		apid_str(d, o, "name", true, &r->name);
		apid_pop(d, mark);
	}
	apid_i32(d, spec, "priority", false, &wl->spec.has_priority,
	    &wl->spec.priority);
	if (d->rc == CU_OK && wl->spec.has_priority_class_ref &&
	    !wl->spec.has_priority) {
		mark = apid_push(d, "priority");
		apid_fail(d, CU_EINVAL,
		    "Required value: priority should not be nil when "
		    "priorityClassRef is set");
		apid_pop(d, mark);
	}
	apid_bool(d, spec, "active", &wl->spec.has_active, &wl->spec.active);
	apid_i32(d, spec, "maximumExecutionTimeSeconds", false,
	    &wl->spec.has_maximum_execution_time_seconds,
	    &wl->spec.maximum_execution_time_seconds);
}

static void dec_podset_assignment(
    struct api_dec *d, const json_t *e, void *item, void *ctx)
{
	struct api_podset_assignment *p = item;

	(void)ctx;
	apid_str(d, e, "name", true, &p->name);
	apid_strmap(d, e, "flavors", &p->flavors);
	apid_qmap(d, e, "resourceUsage", &p->resource_usage);
	apid_i32(d, e, "count", false, &p->has_count, &p->count);
	p->topology_assignment =
	    apid_json(d, e, "topologyAssignment", JSON_OBJECT, false);
}

static void dec_wl_admission(
    struct api_dec *d, const json_t *a, struct api_workload *wl)
{
	wl->status.has_admission = true;
	apid_str(
	    d, a, "clusterQueue", true, &wl->status.admission.cluster_queue);
	apid_field(d, a, "podSetAssignments", JSON_ARRAY, true);
	wl->status.admission.pod_set_assignments =
	    apid_each(d, a, "podSetAssignments", true,
		sizeof(*wl->status.admission.pod_set_assignments),
		&wl->status.admission.n_pod_set_assignments,
		dec_podset_assignment, NULL);
}

static void dec_reclaimable_pod(
    struct api_dec *d, const json_t *e, void *item, void *ctx)
{
	struct api_reclaimable_pod *r = item;

	(void)ctx;
	apid_str(d, e, "name", true, &r->name);
	apid_i32(d, e, "count", true, NULL, &r->count);
}

static void dec_podset_update(
    struct api_dec *d, const json_t *e, void *item, void *ctx)
{
	struct api_podset_update *u = item;

	(void)ctx;
	apid_str(d, e, "name", true, &u->name);
	apid_strmap(d, e, "labels", &u->labels);
	apid_strmap(d, e, "annotations", &u->annotations);
	apid_strmap(d, e, "nodeSelector", &u->node_selector);
	dec_max_items(d, e, "tolerations", API_MAX_TOLERATIONS);
	apid_tolerations(
	    d, e, "tolerations", &u->tolerations, &u->n_tolerations);
}

static void dec_check_state(
    struct api_dec *d, const json_t *e, void *item, void *ctx)
{
	struct api_admission_check_state *c = item;
	int v = 0;

	(void)ctx;
	apid_str(d, e, "name", true, &c->name);
	apid_enum(d, e, "state", true, check_state_names, &v);
	c->state = (enum api_check_state)v;
	apid_time(d, e, "lastTransitionTime", true, &c->has_last_transition,
	    &c->last_transition_ns);
	apid_str(d, e, "message", false, &c->message);
	apid_i32(
	    d, e, "retryCount", false, &c->has_retry_count, &c->retry_count);
	apid_i32(d, e, "requeueAfterSeconds", false,
	    &c->has_requeue_after_seconds, &c->requeue_after_seconds);
	dec_max_items(d, e, "podSetUpdates", API_MAX_PODSETS);
	c->pod_set_updates =
	    apid_each(d, e, "podSetUpdates", false, sizeof(*c->pod_set_updates),
		&c->n_pod_set_updates, dec_podset_update, NULL);
}

static void dec_resource_request(
    struct api_dec *d, const json_t *e, void *item, void *ctx)
{
	struct api_podset_request *r = item;

	(void)ctx;
	apid_str(d, e, "name", false, &r->name);
	apid_qmap(d, e, "resources", &r->resources);
}

static void dec_wl_status(
    struct api_dec *d, const json_t *st, struct api_workload *wl)
{
	const json_t *o;
	size_t mark;

	apid_conditions(d, st, "conditions", false, &wl->status.conditions);
	o = apid_field(d, st, "admission", JSON_OBJECT, false);
	if (o != NULL) {
		mark = apid_push(d, "admission");
		dec_wl_admission(d, o, wl);
		apid_pop(d, mark);
	}
	o = apid_field(d, st, "requeueState", JSON_OBJECT, false);
	if (o != NULL) {
		wl->status.has_requeue_state = true;
		mark = apid_push(d, "requeueState");
		apid_i32(d, o, "count", false,
		    &wl->status.requeue_state.has_count,
		    &wl->status.requeue_state.count);
		apid_time(d, o, "requeueAt", false,
		    &wl->status.requeue_state.has_requeue_at,
		    &wl->status.requeue_state.requeue_at_ns);
		apid_pop(d, mark);
	}
	wl->status.reclaimable_pods = apid_each(d, st, "reclaimablePods", false,
	    sizeof(*wl->status.reclaimable_pods),
	    &wl->status.n_reclaimable_pods, dec_reclaimable_pod, NULL);
	wl->status.admission_checks = apid_each(d, st, "admissionChecks", false,
	    sizeof(*wl->status.admission_checks),
	    &wl->status.n_admission_checks, dec_check_state, NULL);
	wl->status.resource_requests = apid_each(d, st, "resourceRequests",
	    false, sizeof(*wl->status.resource_requests),
	    &wl->status.n_resource_requests, dec_resource_request, NULL);
	apid_i32(d, st, "accumulatedPastExecutionTimeSeconds", false,
	    &wl->status.has_accumulated_past_execution_time_seconds,
	    &wl->status.accumulated_past_execution_time_seconds);
	apid_str(d, st, "clusterName", false, &wl->status.cluster_name);
	apid_strlist(d, st, "nominatedClusterNames", false,
	    &wl->status.nominated_cluster_names);
	apid_name_list(d, st, "unhealthyNodes", &wl->status.unhealthy_nodes);
}

static void workload_decode_body(
    struct api_dec *d, const json_t *j, struct api_workload *wl)
{
	const json_t *sec;
	size_t mark;

	apid_meta(d, j, &wl->meta);
	sec = apid_section(d, j, "spec", true, &mark);
	if (sec != NULL)
		dec_wl_spec(d, sec, wl);
	apid_pop(d, mark);
	sec = apid_section(d, j, "status", false, &mark);
	dec_wl_status(d, sec, wl);
	apid_pop(d, mark);
}

static void enc_wl_spec(
    struct api_enc *e, json_t *spec, const struct api_workload *wl)
{
	json_t *a, *o;
	size_t i;

	a = apie_arr(e, spec, "podSets", wl->spec.n_pod_sets);
	for (i = 0; a && i < wl->spec.n_pod_sets; i++) {
		const struct api_podset *ps = &wl->spec.pod_sets[i];
		json_t *po = json_array_get(a, i);

		apie_str(e, po, "name", ps->name);
		apie_json(e, po, "template", ps->template);
		apie_i64(e, po, "count", ps->has_count, ps->count);
		apie_i64(e, po, "minCount", ps->has_min_count, ps->min_count);
		apie_topology_request(
		    e, po, ps->has_topology_request, &ps->topology_request);
	}
	apie_str(e, spec, "queueName", wl->spec.queue_name);
	o = apie_obj(
	    e, spec, "priorityClassRef", wl->spec.has_priority_class_ref);
	apie_str(e, o, "group", wl->spec.priority_class_ref.group);
	apie_str(e, o, "kind", wl->spec.priority_class_ref.kind);
	apie_str(e, o, "name", wl->spec.priority_class_ref.name);
	apie_i64(e, spec, "priority", wl->spec.has_priority, wl->spec.priority);
	apie_bool(e, spec, "active", wl->spec.has_active, wl->spec.active);
	apie_i64(e, spec, "maximumExecutionTimeSeconds",
	    wl->spec.has_maximum_execution_time_seconds,
	    wl->spec.maximum_execution_time_seconds);
}

/* podSetUpdates is omitempty: a list the model emptied is dropped (an
 * empty one of the source is kept, as apie_arr keeps any). */
static void enc_podset_updates(
    struct api_enc *e, json_t *co, const struct api_admission_check_state *c)
{
	json_t *a;
	size_t i;

	if (c->n_pod_set_updates == 0 &&
	    json_array_size(json_object_get(co, "podSetUpdates")) > 0)
		json_object_del(co, "podSetUpdates");
	a = apie_arr(e, co, "podSetUpdates", c->n_pod_set_updates);
	for (i = 0; a && i < c->n_pod_set_updates; i++) {
		const struct api_podset_update *u = &c->pod_set_updates[i];
		json_t *uo = json_array_get(a, i);

		apie_str(e, uo, "name", u->name);
		apie_strmap(e, uo, "labels", &u->labels);
		apie_strmap(e, uo, "annotations", &u->annotations);
		apie_strmap(e, uo, "nodeSelector", &u->node_selector);
		apie_tolerations(
		    e, uo, "tolerations", u->tolerations, u->n_tolerations);
	}
}

static void enc_wl_status(
    struct api_enc *e, json_t *st, const struct api_workload *wl)
{
	json_t *o, *a;
	size_t i;

	apie_conditions(e, st, "conditions", &wl->status.conditions, false);
	o = apie_obj(e, st, "admission", wl->status.has_admission);
	apie_str(e, o, "clusterQueue", wl->status.admission.cluster_queue);
	a = apie_arr(e, o, "podSetAssignments",
	    wl->status.admission.n_pod_set_assignments);
	/* podSetAssignments is a required list: never drop it */
	if (o != NULL && a == NULL && e->rc == CU_OK &&
	    !json_is_array(json_object_get(o, "podSetAssignments")) &&
	    json_object_set_new(o, "podSetAssignments", json_array()) != 0)
		apie_nomem(e);
	for (i = 0; a && i < wl->status.admission.n_pod_set_assignments; i++) {
		const struct api_podset_assignment *p =
		    &wl->status.admission.pod_set_assignments[i];
		json_t *po = json_array_get(a, i);

		apie_str(e, po, "name", p->name);
		apie_strmap(e, po, "flavors", &p->flavors);
		apie_qmap(e, po, "resourceUsage", &p->resource_usage);
		apie_i64(e, po, "count", p->has_count, p->count);
		apie_json(e, po, "topologyAssignment", p->topology_assignment);
	}
	o = apie_obj(e, st, "requeueState", wl->status.has_requeue_state);
	apie_i64(e, o, "count", wl->status.requeue_state.has_count,
	    wl->status.requeue_state.count);
	apie_time(e, o, "requeueAt", wl->status.requeue_state.has_requeue_at,
	    wl->status.requeue_state.requeue_at_ns, false);
	a = apie_arr(e, st, "reclaimablePods", wl->status.n_reclaimable_pods);
	for (i = 0; a && i < wl->status.n_reclaimable_pods; i++) {
		json_t *po = json_array_get(a, i);

		apie_str(e, po, "name", wl->status.reclaimable_pods[i].name);
		apie_i64(
		    e, po, "count", true, wl->status.reclaimable_pods[i].count);
	}
	a = apie_arr(e, st, "admissionChecks", wl->status.n_admission_checks);
	for (i = 0; a && i < wl->status.n_admission_checks; i++) {
		const struct api_admission_check_state *c =
		    &wl->status.admission_checks[i];
		json_t *co = json_array_get(a, i);

		apie_str(e, co, "name", c->name);
		apie_enum(e, co, "state", check_state_names, (int)c->state);
		apie_time(e, co, "lastTransitionTime", c->has_last_transition,
		    c->last_transition_ns, false);
		apie_str(e, co, "message", c->message);
		apie_i64(
		    e, co, "retryCount", c->has_retry_count, c->retry_count);
		apie_i64(e, co, "requeueAfterSeconds",
		    c->has_requeue_after_seconds, c->requeue_after_seconds);
		enc_podset_updates(e, co, c);
	}
	a = apie_arr(e, st, "resourceRequests", wl->status.n_resource_requests);
	for (i = 0; a && i < wl->status.n_resource_requests; i++) {
		json_t *ro = json_array_get(a, i);

		apie_str(e, ro, "name", wl->status.resource_requests[i].name);
		apie_qmap(e, ro, "resources",
		    &wl->status.resource_requests[i].resources);
	}
	apie_i64(e, st, "accumulatedPastExecutionTimeSeconds",
	    wl->status.has_accumulated_past_execution_time_seconds,
	    wl->status.accumulated_past_execution_time_seconds);
	apie_str(e, st, "clusterName", wl->status.cluster_name);
	apie_strlist(e, st, "nominatedClusterNames",
	    &wl->status.nominated_cluster_names);
	apie_name_list(e, st, "unhealthyNodes", &wl->status.unhealthy_nodes);
}

static void workload_encode_body(
    struct api_enc *e, json_t *dst, const struct api_workload *wl)
{
	apie_meta(e, dst, &wl->meta);
	enc_wl_spec(e, apie_obj(e, dst, "spec", true), wl);
	enc_wl_status(e,
	    apie_status(e, dst,
		wl->status.conditions.n || wl->status.has_admission ||
		    wl->status.has_requeue_state ||
		    wl->status.n_reclaimable_pods ||
		    wl->status.n_admission_checks ||
		    wl->status.n_resource_requests ||
		    wl->status.has_accumulated_past_execution_time_seconds ||
		    wl->status.cluster_name ||
		    wl->status.nominated_cluster_names.n ||
		    wl->status.unhealthy_nodes.n),
	    wl);
}

void api_podset_update_dispose(struct api_podset_update *u)
{
	if (u == NULL)
		return;
	cu_free(u->name);
	api_strmap_dispose(&u->labels);
	api_strmap_dispose(&u->annotations);
	api_strmap_dispose(&u->node_selector);
	api_tolerations_dispose(u->tolerations, u->n_tolerations);
	memset(u, 0, sizeof(*u));
}

void api_admission_check_state_dispose(struct api_admission_check_state *c)
{
	size_t i;

	if (c == NULL)
		return;
	cu_free(c->name);
	cu_free(c->message);
	for (i = 0; i < c->n_pod_set_updates; i++)
		api_podset_update_dispose(&c->pod_set_updates[i]);
	cu_free(c->pod_set_updates);
	memset(c, 0, sizeof(*c));
}

static void workload_dispose_body(struct api_workload *wl)
{
	size_t i;

	for (i = 0; i < wl->spec.n_pod_sets; i++) {
		cu_free(wl->spec.pod_sets[i].name);
		json_decref(wl->spec.pod_sets[i].template);
		api_topology_request_dispose(
		    &wl->spec.pod_sets[i].topology_request);
	}
	cu_free(wl->spec.pod_sets);
	cu_free(wl->spec.queue_name);
	cu_free(wl->spec.priority_class_ref.group);
	cu_free(wl->spec.priority_class_ref.kind);
	cu_free(wl->spec.priority_class_ref.name);
	api_conditions_dispose(&wl->status.conditions);
	cu_free(wl->status.admission.cluster_queue);
	for (i = 0; i < wl->status.admission.n_pod_set_assignments; i++) {
		struct api_podset_assignment *p =
		    &wl->status.admission.pod_set_assignments[i];

		cu_free(p->name);
		api_strmap_dispose(&p->flavors);
		api_qmap_dispose(&p->resource_usage);
		json_decref(p->topology_assignment);
	}
	cu_free(wl->status.admission.pod_set_assignments);
	for (i = 0; i < wl->status.n_reclaimable_pods; i++)
		cu_free(wl->status.reclaimable_pods[i].name);
	cu_free(wl->status.reclaimable_pods);
	for (i = 0; i < wl->status.n_admission_checks; i++)
		api_admission_check_state_dispose(
		    &wl->status.admission_checks[i]);
	cu_free(wl->status.admission_checks);
	for (i = 0; i < wl->status.n_resource_requests; i++) {
		cu_free(wl->status.resource_requests[i].name);
		api_qmap_dispose(&wl->status.resource_requests[i].resources);
	}
	cu_free(wl->status.resource_requests);
	cu_free(wl->status.cluster_name);
	api_strlist_dispose(&wl->status.nominated_cluster_names);
	api_strlist_dispose(&wl->status.unhealthy_nodes);
}

API_MODEL_DEFINE_CODEC(workload, KUEUE_V1B2, "Workload")
