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

/* ---- the pod finalizer (Kueue's kueue.x-k8s.io/managed) -------------- */

static const json_t *pod_meta(const json_t *pod)
{
	return json_object_get(pod, "metadata");
}

bool rec__pod_deleting(const json_t *pod)
{
	return json_object_get(pod_meta(pod), "deletionTimestamp") != NULL;
}

bool rec__pod_has_finalizer(const json_t *pod)
{
	const json_t *fin = json_object_get(pod_meta(pod), "finalizers"), *f;
	size_t i;

	json_array_foreach(fin, i, f)
	{
		if (json_is_string(f) &&
		    strcmp(json_string_value(f), REC_POD_FINALIZER) == 0)
			return true;
	}
	return false;
}

int rec__pod_unfinalize(
    const json_t *pod, const char *ns, struct rec_plan *p, cu_error *err)
{
	const json_t *md = pod_meta(pod), *f;
	const char *name = api_json_str(md, "name");
	const char *rv = api_json_str(md, "resourceVersion");
	json_t *keep, *body;
	struct rec_item *it;
	size_t i;

	if (!rec__pod_has_finalizer(pod) || name == NULL || rv == NULL)
		return CU_OK;
	keep = json_array();
	if (keep == NULL)
		return rec__nomem(err, "pod finalizer");
	json_array_foreach(json_object_get(md, "finalizers"), i, f)
	{
		if ((!json_is_string(f) ||
			strcmp(json_string_value(f), REC_POD_FINALIZER) != 0) &&
		    json_array_append(keep, (json_t *)f) != 0) {
			json_decref(keep);
			return rec__nomem(err, "pod finalizer");
		}
	}
	/* Kueue's strict patch: guarded by the resourceVersion read. */
	body = json_pack("{s:{s:o, s:s}}", "metadata", "finalizers", keep,
	    "resourceVersion", rv);
	if (body == NULL)
		return rec__nomem(err, "pod finalizer");
	if (rec_plan_push(p, &it, err) != CU_OK) {
		json_decref(body);
		return err->code;
	}
	it->kind = REC_ITEM_WRITE;
	it->target = REC_TARGET_JOB;
	it->op = REC_WRITE_PATCH;
	it->job = REC_JOB_START;
	it->body = body;
	it->expect = REC_EXPECT_NONE;
	it->ns = cu_strdup(ns);
	it->name = cu_strdup(name);
	if (it->ns == NULL || it->name == NULL)
		return rec__nomem(err, "pod finalizer");
	return CU_OK;
}

int rec_pod_finalize(const json_t *pod, const char *ns,
    const struct api_workload *wl, int64_t now_ns, bool before,
    struct rec_plan *out, bool *done, cu_error *err)
{
	bool wl_finished =
	    wl != NULL &&
	    api_conditions_true(&wl->status.conditions, REC_COND_FINISHED);
	int rc;

	if (done != NULL)
		*done = false;
	if (pod == NULL || ns == NULL || out == NULL || done == NULL)
		return cu_error_set(
		    err, CU_EINVAL, "pod finalizer: missing input");
	if (before) {
		struct rec_job_in in;

		if (!rec__pod_deleting(pod))
			return CU_OK;
		/* Kueue's Load: a Pod being deleted is finalized, nothing
		 * else: its Workload finished as orphaned (or let go), then
		 * the Pod loses its finalizer, once that is seen. */
		*done = true;
		if (wl != NULL) {
			memset(&in, 0, sizeof(in));
			in.ns = ns;
			in.owned = &wl;
			in.n_owned = 1;
			if ((rc = rec_job_gone_finish(&in, now_ns, out, err)) !=
			    CU_OK)
				return rc;
			if (!wl_finished && !wl->meta.has_deletion)
				return CU_OK;
		}
		return rec__pod_unfinalize(pod, ns, out, err);
	}
	/* Kueue's finalizeJob: once the Workload says Finished (its
	 * result accounted), or the Pod ended without one. */
	if (wl_finished || (wl == NULL && rec__pod_finished(pod, NULL, NULL)))
		return rec__pod_unfinalize(pod, ns, out, err);
	return CU_OK;
}
