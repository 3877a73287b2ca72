/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/model_pod.c - v1 Pods and Nodes in the model, decoded once for the
 * controller's topology-aware scheduling: a Pod's metadata, node name,
 * nodeSelector, scheduling gates, per-pod requests, phase and conditions;
 * a Node's labels, taints, allocatable, unschedulable flag and conditions
 * (see api/model.h). Decode only: cueue writes Pods and Nodes as patches.
 */
#include <string.h>

#include "api/model_internal.h"

/* ---- Pod ---------------------------------------------------------------- */

static void pod_decode_body(
    struct api_dec *d, const json_t *j, struct api_pod *p)
{
	const json_t *sec;
	size_t mark;

	apid_meta(d, j, &p->meta);
	sec = apid_section(d, j, "spec", false, &mark);
	apid_str(d, sec, "nodeName", false, &p->spec.node_name);
	apid_strmap(d, sec, "nodeSelector", &p->spec.node_selector);
	apid_name_list(d, sec, "schedulingGates", &p->spec.scheduling_gates);
	if (sec != NULL)
		apid_pod_requests(
		    d, sec, &p->spec.requests, &p->spec.n_requests);
	apid_pop(d, mark);
	sec = apid_section(d, j, "status", false, &mark);
	apid_str(d, sec, "phase", false, &p->status.phase);
	apid_str(
	    d, sec, "nominatedNodeName", false, &p->status.nominated_node_name);
	apid_conditions(d, sec, "conditions", true, &p->status.conditions);
	apid_pop(d, mark);
}

void api_pod_dispose(struct api_pod *x)
{
	size_t i;

	if (x == NULL)
		return;
	cu_free(x->spec.node_name);
	api_strmap_dispose(&x->spec.node_selector);
	api_strlist_dispose(&x->spec.scheduling_gates);
	for (i = 0; i < x->spec.n_requests; i++)
		cu_free(x->spec.requests[i].name);
	cu_free(x->spec.requests);
	cu_free(x->status.phase);
	cu_free(x->status.nominated_node_name);
	api_conditions_dispose(&x->status.conditions);
	api_meta_dispose(&x->meta);
	json_decref(x->raw);
	memset(x, 0, sizeof(*x));
}

bool api_pod_finished(const struct api_pod *p)
{
	const char *ph = p->status.phase;

	return ph != NULL &&
	       (strcmp(ph, "Succeeded") == 0 || strcmp(ph, "Failed") == 0);
}

bool api_pod_gated(const struct api_pod *p, const char *gate)
{
	size_t i;

	for (i = 0; i < p->spec.scheduling_gates.n; i++)
		if (strcmp(p->spec.scheduling_gates.items[i], gate) == 0)
			return true;
	return false;
}

/* ---- Node --------------------------------------------------------------- */

static void node_decode_body(
    struct api_dec *d, const json_t *j, struct api_node *n)
{
	const json_t *sec;
	bool has = false;
	size_t mark;

	apid_meta(d, j, &n->meta);
	sec = apid_section(d, j, "spec", false, &mark);
	apid_bool(d, sec, "unschedulable", &has, &n->spec.unschedulable);
	n->spec.taints = apid_each(d, sec, "taints", false,
	    sizeof(*n->spec.taints), &n->spec.n_taints, apid_taint, NULL);
	apid_pop(d, mark);
	sec = apid_section(d, j, "status", false, &mark);
	apid_qmap(d, sec, "allocatable", &n->status.allocatable);
	apid_conditions(d, sec, "conditions", true, &n->status.conditions);
	apid_pop(d, mark);
}

void api_node_dispose(struct api_node *x)
{
	size_t i;

	if (x == NULL)
		return;
	for (i = 0; i < x->spec.n_taints; i++) {
		cu_free(x->spec.taints[i].key);
		cu_free(x->spec.taints[i].value);
	}
	cu_free(x->spec.taints);
	api_qmap_dispose(&x->status.allocatable);
	api_conditions_dispose(&x->status.conditions);
	api_meta_dispose(&x->meta);
	json_decref(x->raw);
	memset(x, 0, sizeof(*x));
}

bool api_node_ready(const struct api_node *n)
{
	const struct api_condition *r =
	    api_conditions_find(&n->status.conditions, "Ready");

	return r == NULL || r->status == API_COND_TRUE;
}

int api_tolerations_encode(
    const struct api_toleration *t, size_t n, json_t **out, cu_error *err)
{
	struct api_enc e = {CU_OK, err};
	json_t *dst = json_object();

	*out = NULL;
	if (dst == NULL)
		return cu_error_set(
		    err, CU_ENOMEM, "tolerations: out of memory");
	apie_tolerations(&e, dst, "tolerations", t, n);
	if (e.rc == CU_OK) {
		*out = json_object_get(dst, "tolerations");
		*out = *out != NULL ? json_incref(*out) : json_array();
		if (*out == NULL)
			e.rc = cu_error_set(
			    err, CU_ENOMEM, "tolerations: out of memory");
	}
	json_decref(dst);
	return e.rc;
}

/* ---- a pod template's scheduling constraints ---------------------------- */

int api_pod_sched_decode(
    struct api_pod_sched *out, const json_t *tpl, cu_error *err)
{
	struct api_dec d;
	const json_t *spec, *aff, *na;
	size_t m1, m2, m3;

	apid_init(&d, err);
	memset(out, 0, sizeof(*out));
	if (!json_is_object(tpl))
		return apid_fail(&d, CU_EPARSE,
		    "Invalid type: a pod template must be a JSON object");
	spec = apid_section(&d, tpl, "spec", false, &m1);
	apid_tolerations(
	    &d, spec, "tolerations", &out->tolerations, &out->n_tolerations);
	apid_strmap(&d, spec, "nodeSelector", &out->node_selector);
	aff = apid_section(&d, spec, "affinity", false, &m2);
	na = apid_section(&d, aff, "nodeAffinity", false, &m3);
	out->required_node_affinity =
	    apid_json(&d, na, "requiredDuringSchedulingIgnoredDuringExecution",
		JSON_OBJECT, false);
	apid_pop(&d, m3);
	apid_pop(&d, m2);
	apid_pop(&d, m1);
	if (d.rc != CU_OK)
		api_pod_sched_dispose(out);
	return d.rc;
}

bool api_pod_sched_any(const struct api_pod_sched *s)
{
	return s->n_tolerations > 0 || s->node_selector.n > 0 ||
	       s->required_node_affinity != NULL;
}

void api_pod_sched_dispose(struct api_pod_sched *s)
{
	if (s == NULL)
		return;
	api_tolerations_dispose(s->tolerations, s->n_tolerations);
	api_strmap_dispose(&s->node_selector);
	json_decref(s->required_node_affinity);
	memset(s, 0, sizeof(*s));
}

/* ---- the decoders ------------------------------------------------------- */

API_MODEL_DEFINE_DECODE(pod, "v1", "Pod", "Pod")
API_MODEL_DEFINE_DECODE(node, "v1", "Node", "Node")
