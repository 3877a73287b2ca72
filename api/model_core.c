/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/model_core.c - JSON codecs of the Kubernetes kinds cueue reads or
 * writes around the queueing itself: v1 Namespace (the management gate),
 * scheduling.k8s.io/v1 PriorityClass (workload priority),
 * coordination.k8s.io/v1 Lease (leader election) and v1 Event.
 */
#include <string.h>

#include "api/model_internal.h"

/* ---- Namespace ---------------------------------------------------------- */

static void namespace_decode_body(
    struct api_dec *d, const json_t *j, struct api_namespace *ns)
{
	const json_t *st;
	size_t mark;

	apid_meta(d, j, &ns->meta);
	st = apid_section(d, j, "status", false, &mark);
	apid_str(d, st, "phase", false, &ns->phase);
	apid_pop(d, mark);
}

static void namespace_encode_body(
    struct api_enc *e, json_t *dst, const struct api_namespace *ns)
{
	json_t *st;

	apie_meta(e, dst, &ns->meta);
	st = apie_obj(e, dst, "status",
	    ns->phase != NULL ||
		json_is_object(json_object_get(dst, "status")));
	apie_str(e, st, "phase", ns->phase);
}

static void namespace_dispose_body(struct api_namespace *ns)
{
	cu_free(ns->phase);
}

API_MODEL_DEFINE_CODEC(namespace, "v1", "Namespace")

/* ---- PriorityClass ------------------------------------------------------ */

static void priority_class_decode_body(
    struct api_dec *d, const json_t *j, struct api_priority_class *pc)
{
	apid_meta(d, j, &pc->meta);
	apid_i32(d, j, "value", true, NULL, &pc->value);
	apid_bool(d, j, "globalDefault", &pc->has_global_default,
	    &pc->global_default);
	apid_str(d, j, "description", false, &pc->description);
	apid_str(d, j, "preemptionPolicy", false, &pc->preemption_policy);
}

static void priority_class_encode_body(
    struct api_enc *e, json_t *dst, const struct api_priority_class *pc)
{
	apie_meta(e, dst, &pc->meta);
	apie_i64(e, dst, "value", true, pc->value);
	apie_bool(e, dst, "globalDefault", pc->has_global_default,
	    pc->global_default);
	apie_str(e, dst, "description", pc->description);
	apie_str(e, dst, "preemptionPolicy", pc->preemption_policy);
}

static void priority_class_dispose_body(struct api_priority_class *pc)
{
	cu_free(pc->description);
	cu_free(pc->preemption_policy);
}

API_MODEL_DEFINE_CODEC(priority_class, "scheduling.k8s.io/v1", "PriorityClass")

/* ---- Lease -------------------------------------------------------------- */

static void lease_decode_body(
    struct api_dec *d, const json_t *j, struct api_lease *l)
{
	const json_t *sp;
	size_t mark;

	apid_meta(d, j, &l->meta);
	sp = apid_section(d, j, "spec", false, &mark);
	apid_str(d, sp, "holderIdentity", false, &l->spec.holder_identity);
	apid_i32(d, sp, "leaseDurationSeconds", false,
	    &l->spec.has_lease_duration_seconds,
	    &l->spec.lease_duration_seconds);
	apid_time(d, sp, "acquireTime", false, &l->spec.has_acquire_time,
	    &l->spec.acquire_time_ns);
	apid_time(d, sp, "renewTime", false, &l->spec.has_renew_time,
	    &l->spec.renew_time_ns);
	apid_i32(d, sp, "leaseTransitions", false,
	    &l->spec.has_lease_transitions, &l->spec.lease_transitions);
	apid_pop(d, mark);
}

static void lease_encode_body(
    struct api_enc *e, json_t *dst, const struct api_lease *l)
{
	json_t *sp;

	apie_meta(e, dst, &l->meta);
	sp = apie_obj(e, dst, "spec", true);
	apie_str(e, sp, "holderIdentity", l->spec.holder_identity);
	apie_i64(e, sp, "leaseDurationSeconds",
	    l->spec.has_lease_duration_seconds, l->spec.lease_duration_seconds);
	apie_time(e, sp, "acquireTime", l->spec.has_acquire_time,
	    l->spec.acquire_time_ns, true);
	apie_time(e, sp, "renewTime", l->spec.has_renew_time,
	    l->spec.renew_time_ns, true);
	apie_i64(e, sp, "leaseTransitions", l->spec.has_lease_transitions,
	    l->spec.lease_transitions);
}

static void lease_dispose_body(struct api_lease *l)
{
	cu_free(l->spec.holder_identity);
}

API_MODEL_DEFINE_CODEC(lease, "coordination.k8s.io/v1", "Lease")

/* ---- Event -------------------------------------------------------------- */

static void event_decode_body(
    struct api_dec *d, const json_t *j, struct api_event *ev)
{
	const json_t *o;
	size_t mark;

	apid_meta(d, j, &ev->meta);
	o = apid_section(d, j, "involvedObject", true, &mark);
	apid_str(d, o, "kind", false, &ev->involved_object.kind);
	apid_str(d, o, "namespace", false, &ev->involved_object.namespace_);
	apid_str(d, o, "name", false, &ev->involved_object.name);
	apid_str(d, o, "uid", false, &ev->involved_object.uid);
	apid_str(d, o, "apiVersion", false, &ev->involved_object.api_version);
	apid_str(d, o, "resourceVersion", false,
	    &ev->involved_object.resource_version);
	apid_str(d, o, "fieldPath", false, &ev->involved_object.field_path);
	apid_pop(d, mark);
	apid_str(d, j, "reason", false, &ev->reason);
	apid_str(d, j, "message", false, &ev->message);
	o = apid_section(d, j, "source", false, &mark);
	apid_str(d, o, "component", false, &ev->source_component);
	apid_str(d, o, "host", false, &ev->source_host);
	apid_pop(d, mark);
	apid_time(d, j, "firstTimestamp", false, &ev->has_first_timestamp,
	    &ev->first_timestamp_ns);
	apid_time(d, j, "lastTimestamp", false, &ev->has_last_timestamp,
	    &ev->last_timestamp_ns);
	apid_i32(d, j, "count", false, &ev->has_count, &ev->count);
	apid_str(d, j, "type", false, &ev->type);
	apid_time(
	    d, j, "eventTime", false, &ev->has_event_time, &ev->event_time_ns);
	apid_str(d, j, "reportingComponent", false, &ev->reporting_component);
	apid_str(d, j, "reportingInstance", false, &ev->reporting_instance);
	apid_str(d, j, "action", false, &ev->action);
}

static void event_encode_body(
    struct api_enc *e, json_t *dst, const struct api_event *ev)
{
	json_t *o;

	apie_meta(e, dst, &ev->meta);
	o = apie_obj(e, dst, "involvedObject", true);
	apie_str(e, o, "kind", ev->involved_object.kind);
	apie_str(e, o, "namespace", ev->involved_object.namespace_);
	apie_str(e, o, "name", ev->involved_object.name);
	apie_str(e, o, "uid", ev->involved_object.uid);
	apie_str(e, o, "apiVersion", ev->involved_object.api_version);
	apie_str(e, o, "resourceVersion", ev->involved_object.resource_version);
	apie_str(e, o, "fieldPath", ev->involved_object.field_path);
	apie_str(e, dst, "reason", ev->reason);
	apie_str(e, dst, "message", ev->message);
	o = apie_obj(e, dst, "source",
	    ev->source_component || ev->source_host ||
		json_is_object(json_object_get(dst, "source")));
	apie_str(e, o, "component", ev->source_component);
	apie_str(e, o, "host", ev->source_host);
	apie_time(e, dst, "firstTimestamp", ev->has_first_timestamp,
	    ev->first_timestamp_ns, false);
	apie_time(e, dst, "lastTimestamp", ev->has_last_timestamp,
	    ev->last_timestamp_ns, false);
	apie_i64(e, dst, "count", ev->has_count, ev->count);
	apie_str(e, dst, "type", ev->type);
	apie_time(
	    e, dst, "eventTime", ev->has_event_time, ev->event_time_ns, true);
	apie_str(e, dst, "reportingComponent", ev->reporting_component);
	apie_str(e, dst, "reportingInstance", ev->reporting_instance);
	apie_str(e, dst, "action", ev->action);
}

static void event_dispose_body(struct api_event *ev)
{
	cu_free(ev->involved_object.kind);
	cu_free(ev->involved_object.namespace_);
	cu_free(ev->involved_object.name);
	cu_free(ev->involved_object.uid);
	cu_free(ev->involved_object.api_version);
	cu_free(ev->involved_object.resource_version);
	cu_free(ev->involved_object.field_path);
	cu_free(ev->reason);
	cu_free(ev->message);
	cu_free(ev->source_component);
	cu_free(ev->source_host);
	cu_free(ev->type);
	cu_free(ev->reporting_component);
	cu_free(ev->reporting_instance);
	cu_free(ev->action);
}

API_MODEL_DEFINE_CODEC(event, "v1", "Event")
