/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconcile/fw_pod.c - the pod shape of the framework descriptors
 * (docs/frameworks.md section 2): a plain Pod as a job of one pod set,
 * `main`, of count 1. It is held back by the kueue.x-k8s.io/admission
 * scheduling gate (added by the pod webhook) rather than a suspend
 * field; start removes the gate after the admission's node selector,
 * tolerations and labels are merged into the pod itself; stop deletes a
 * pod that got past its gate (a pod cannot be suspended). Finished is
 * the pod's terminal phase. Contracts in reconcile/rec_int.h.
 */
#include <string.h>

#include "reconcile/rec_int.h"

static const char *phase(const json_t *doc)
{
	return api_json_str(json_object_get(doc, "status"), "phase");
}

static bool phase_is(const json_t *doc, const char *want)
{
	const char *p = phase(doc);

	return p != NULL && strcmp(p, want) == 0;
}

/* Index of the admission gate in spec.schedulingGates, or -1. */
static long gate_index(const json_t *doc)
{
	json_t *gates = json_object_get(
		   json_object_get(doc, "spec"), "schedulingGates"),
	       *g;
	size_t i;

	json_array_foreach(gates, i, g)
	{
		const char *n = api_json_str(g, "name");

		if (n != NULL && strcmp(n, REC_POD_ADMISSION_GATE) == 0)
			return (long)i;
	}
	return -1;
}

bool rec__pod_gated(const json_t *doc)
{
	return gate_index(doc) >= 0;
}

int rec__pod_set_gate(json_t *doc, bool gated, cu_error *err)
{
	json_t *spec = api_json_obj_child(doc, "spec"), *gates;
	long at = gate_index(doc);

	if (spec == NULL)
		return rec__nomem(err, "pod spec");
	gates = json_object_get(spec, "schedulingGates");
	if (!gated) {
		if (at < 0)
			return CU_OK;
		json_array_remove(gates, (size_t)at);
		if (json_array_size(gates) == 0)
			json_object_del(spec, "schedulingGates");
		return CU_OK;
	}
	if (at >= 0)
		return CU_OK;
	if (!json_is_array(gates)) {
		gates = json_array();
		if (gates == NULL ||
		    json_object_set_new(spec, "schedulingGates", gates) != 0)
			return rec__nomem(err, "pod spec.schedulingGates");
	}
	if (json_array_append_new(
		gates, json_pack("{s:s}", "name", REC_POD_ADMISSION_GATE)) != 0)
		return rec__nomem(err, "pod spec.schedulingGates");
	return CU_OK;
}

bool rec__pod_finished(const json_t *doc, bool *success, const char **message)
{
	bool ok = phase_is(doc, "Succeeded");
	const char *m;

	if (!ok && !phase_is(doc, "Failed"))
		return false;
	m = api_json_str(json_object_get(doc, "status"), "message");
	if (success != NULL)
		*success = ok;
	if (message != NULL)
		*message = m != NULL ? m : ok ? "Pod succeeded" : "Pod failed";
	return true;
}

bool rec__pod_active(const json_t *doc)
{
	const char *p = phase(doc);

	if (p != NULL &&
	    (strcmp(p, "Succeeded") == 0 || strcmp(p, "Failed") == 0))
		return false;
	return !rec__pod_gated(doc);
}

bool rec__pod_stop_deletes(const json_t *doc)
{
	json_t *md = json_object_get(doc, "metadata");

	if (json_object_get(md, "deletionTimestamp") != NULL)
		return false;
	return rec__pod_active(doc);
}

int rec__pod_podsets(const json_t *doc, struct api_podsets *out, cu_error *err)
{
	json_t *tpl = json_pack("{s:O?, s:O?}", "metadata",
	    json_object_get(doc, "metadata"), "spec",
	    json_object_get(doc, "spec"));
	json_t *md;
	static const char *const volatile_meta[] = {"name", "namespace", "uid",
	    "resourceVersion", "generation", "creationTimestamp",
	    "managedFields", "ownerReferences", "finalizers",
	    "deletionTimestamp", "deletionGracePeriodSeconds", "generateName",
	    NULL};
	size_t i;
	int rc;

	memset(out, 0, sizeof(*out));
	if (tpl == NULL)
		return rec__nomem(err, "pod template");
	/* A copy: the gate and the object's identity are not the pod set's
	 * template (Kueue keeps the pod's labels, annotations and spec). */
	md = json_object_get(tpl, "metadata");
	if (json_is_object(md)) {
		md = json_deep_copy(md);
		if (md == NULL ||
		    json_object_set_new(tpl, "metadata", md) != 0) {
			json_decref(tpl);
			return rec__nomem(err, "pod template");
		}
		for (i = 0; volatile_meta[i] != NULL; i++)
			json_object_del(md, volatile_meta[i]);
	}
	if (json_is_object(json_object_get(tpl, "spec"))) {
		json_t *spec = json_deep_copy(json_object_get(tpl, "spec"));

		if (spec == NULL ||
		    json_object_set_new(tpl, "spec", spec) != 0) {
			json_decref(tpl);
			return rec__nomem(err, "pod template");
		}
		if ((rc = rec__pod_set_gate(tpl, false, err)) != CU_OK) {
			json_decref(tpl);
			return rc;
		}
		json_object_del(spec, "nodeName");
	}
	out->items = cu_calloc(1, sizeof(*out->items));
	if (out->items == NULL) {
		json_decref(tpl);
		return rec__nomem(err, "podsets");
	}
	out->n = 1;
	rc = api_podset_from_template(
	    tpl, REC_POD_PODSET, 1, "pod", &out->items[0], err);
	if (rc == CU_OK) /* Kueue: the pod group index label */
		rc = api_podset_index_labels(
		    &out->items[0], API_LABEL_POD_GROUP_INDEX, NULL, 0, err);
	json_decref(tpl);
	if (rc != CU_OK)
		api_podsets_dispose(out);
	return rc;
}
