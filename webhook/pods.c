/* SPDX-License-Identifier: Apache-2.0 */
/*
 * webhook/pods.c - the Pod webhook's own step (framework "pod",
 * docs/frameworks.md section 5): a Pod the management gate calls ours
 * (webhook/jobs.c decides, the namespace first) is created with the
 * kueue.x-k8s.io/admission scheduling gate, which holds it Pending until
 * its Workload is admitted; cueue removes the gate then. It is labelled
 * kueue.x-k8s.io/managed and, unless a managed parent suspends it, given
 * the finalizer of that name, as Kueue's are. A Pod is never
 * given a spec.suspend. Anything the gate does not call ours, including
 * the Pods of a managed Job, JobSet or other parent, passes untouched.
 * The Deployment webhook copies a managed Deployment's queue-name (and
 * priority-class) label to its pod template, so that its Pods are gated
 * and queued one by one, as Kueue's deployment integration does.
 */
#include <stdio.h>
#include <string.h>

#include "webhook/webhook_int.h"
#include "api/patch.h"

#define ADMISSION_GATE "kueue.x-k8s.io/admission"
#define MANAGED "kueue.x-k8s.io/managed"

bool wh__is_pod(const struct wh_request *req)
{
	return req->kind.group[0] == '\0' && strcmp(req->kind.kind, "Pod") == 0;
}

int wh__add_gate(struct wh_ctx *c, const json_t *spec, const char *field,
    const char *gate, cu_error *err)
{
	const json_t *gates, *g;
	char base[48], path[72];
	size_t i;

	if (!json_is_object(spec))
		return cu_error_set(err, CU_EPARSE,
		    "%s: Invalid type: expected object, got %s", field,
		    api_json_type_name(spec, false));
	/* the JSON pointer of field: "spec.template.spec" is
	 * /spec/template/spec */
	for (i = 0; field[i] != '\0' && i + 2 < sizeof(base); i++)
		base[i + 1] = field[i] == '.' ? '/' : field[i];
	base[0] = '/';
	base[i + 1] = '\0';
	gates = json_object_get(spec, "schedulingGates");
	snprintf(path, sizeof(path), "%s/schedulingGates%s", base,
	    gates == NULL || json_is_null(gates) ? "" : "/-");
	if (gates == NULL || json_is_null(gates))
		return wh__patch_add(c->out, "add", path,
		    json_pack("[{s:s}]", "name", gate), err);
	if (!json_is_array(gates))
		return cu_error_set(err, CU_EPARSE,
		    "%s.schedulingGates: Invalid type: expected array, got "
		    "%s",
		    field, api_json_type_name(gates, false));
	json_array_foreach(gates, i, g)
	{
		const char *n = api_json_str(g, "name");

		if (n != NULL && strcmp(n, gate) == 0)
			return CU_OK;
	}
	return wh__patch_add(
	    c->out, "add", path, json_pack("{s:s}", "name", gate), err);
}

/* obj as the patch so far makes it: *cur [owned: json_decref]. */
static int patched(
    const struct wh_ctx *c, const json_t *obj, json_t **cur, cu_error *err)
{
	if (c->out->patch != NULL)
		return api_json_patch_apply(cur, obj, c->out->patch, err);
	*cur = json_incref((json_t *)obj);
	return CU_OK;
}

/* The metadata member `key` of obj as the patch so far leaves it. */
static int patched_member(const struct wh_ctx *c, const json_t *obj,
    const char *key, json_t **out, bool *has_meta, cu_error *err)
{
	json_t *cur = NULL;
	int rc = patched(c, obj, &cur, err);

	if (rc != CU_OK)
		return rc;
	*has_meta = json_is_object(json_object_get(cur, "metadata"));
	*out =
	    json_incref(json_object_get(json_object_get(cur, "metadata"), key));
	json_decref(cur);
	return CU_OK;
}

/* Kueue's mark of a managed Pod: the label kueue.x-k8s.io/managed:
 * "true" and, unless a managed parent suspends it (its
 * kueue.x-k8s.io/pod-suspending-parent annotation), the finalizer of the
 * same name, which keeps the Pod until its result is accounted. */
int wh__pod_managed(struct wh_ctx *c, const json_t *obj, cu_error *err)
{
	const char *parent = api_json_str(
	    json_object_get(json_object_get(obj, "metadata"), "annotations"),
	    "kueue.x-k8s.io/pod-suspending-parent");
	json_t *labels = NULL, *fin = NULL, *f;
	bool has_meta, found = false;
	size_t i;
	int rc;

	if (parent != NULL)
		return CU_OK;
	if ((rc = patched_member(c, obj, "labels", &labels, &has_meta, err)) !=
	    CU_OK)
		return rc;
	if (!has_meta)
		rc = wh__patch_add(c->out, "add", "/metadata",
		    json_pack("{s:{s:s}}", "labels", MANAGED, "true"), err);
	else if (!json_is_object(labels))
		rc = wh__patch_add(c->out, "add", "/metadata/labels",
		    json_pack("{s:s}", MANAGED, "true"), err);
	else if (api_json_str(labels, MANAGED) == NULL ||
		 strcmp(api_json_str(labels, MANAGED), "true") != 0)
		rc = wh__patch_add(c->out,
		    json_object_get(labels, MANAGED) ? "replace" : "add",
		    "/metadata/labels/kueue.x-k8s.io~1managed",
		    json_string("true"), err);
	json_decref(labels);
	if (rc == CU_OK)
		rc = patched_member(c, obj, "finalizers", &fin, &has_meta, err);
	if (rc != CU_OK)
		return rc;
	json_array_foreach(fin, i, f) found =
	    found ||
	    (json_is_string(f) && strcmp(json_string_value(f), MANAGED) == 0);
	if (!found)
		rc = wh__patch_add(c->out, "add",
		    json_is_array(fin) ? "/metadata/finalizers/-"
				       : "/metadata/finalizers",
		    json_is_array(fin) ? json_string(MANAGED)
				       : json_pack("[s]", MANAGED),
		    err);
	json_decref(fin);
	return rc;
}

int wh__pod_gate(struct wh_ctx *c, const json_t *obj, cu_error *err)
{
	return wh__add_gate(
	    c, json_object_get(obj, "spec"), "spec", ADMISSION_GATE, err);
}

/* metadata.<member>[key] = value (member: labels or annotations) in the
 * pod template of obj, creating what is missing (a patch of c->out). */
static int template_meta_of(struct wh_ctx *c, const json_t *obj,
    const char *member, const char *key, const char *value, cu_error *err)
{
	const json_t *tpl = json_object_get(
			 json_object_get(obj, "spec"), "template"),
		     *md = json_object_get(tpl, "metadata"),
		     *labels = json_object_get(md, member);
	char *k, *path;
	int rc;

	if (!json_is_object(tpl))
		return cu_error_set(err, CU_EPARSE,
		    "spec.template: Invalid type: expected object");
	if (!json_is_object(md))
		return wh__patch_add(c->out, "add", "/spec/template/metadata",
		    json_pack("{s:{s:s}}", member, key, value), err);
	if (!json_is_object(labels)) {
		path = cu_asprintf("/spec/template/metadata/%s", member);
		if (path == NULL)
			return cu_error_set(
			    err, CU_ENOMEM, "webhook patch: %s", member);
		rc = wh__patch_add(
		    c->out, "add", path, json_pack("{s:s}", key, value), err);
		cu_free(path);
		return rc;
	}
	if (api_json_str(labels, key) != NULL &&
	    strcmp(api_json_str(labels, key), value) == 0)
		return CU_OK;
	k = api_json_pointer_escape(key);
	path = k != NULL
		   ? cu_asprintf("/spec/template/metadata/%s/%s", member, k)
		   : NULL;
	cu_free(k);
	if (path == NULL)
		return cu_error_set(err, CU_ENOMEM, "webhook patch: label");
	rc = wh__patch_add(c->out,
	    json_object_get(labels, key) != NULL ? "replace" : "add", path,
	    json_string(value), err);
	cu_free(path);
	return rc;
}

static int template_meta(struct wh_ctx *c, const json_t *obj,
    const char *member, const char *key, const char *value, cu_error *err)
{
	json_t *cur = NULL;
	/* read against what the patch so far makes of obj */
	int rc = patched(c, obj, &cur, err);

	if (rc != CU_OK)
		return rc;
	rc = template_meta_of(c, cur, member, key, value, err);
	json_decref(cur);
	return rc;
}

static int template_label(struct wh_ctx *c, const json_t *obj, const char *key,
    const char *value, cu_error *err)
{
	return template_meta(c, obj, "labels", key, value, err);
}

int wh__deployment(struct wh_ctx *c, cu_error *err)
{
	const json_t *obj = c->req->object;
	struct ns_gate_object gobj;
	struct ns_gate_decision d;
	const char *prio;
	int rc;

	if (c->mode != WH_MUTATE || c->req->operation != WH_OP_CREATE ||
	    !c->opt->deployment)
		return CU_OK;
	if ((rc = wh__gate_as(c, obj, NS_GATE_KIND_POD, &gobj, &d, err)) !=
	    CU_OK)
		return rc;
	if (d.managed != NS_GATE_YES || gobj.queue_name == NULL ||
	    gobj.queue_name[0] == '\0')
		return CU_OK;
	/* Kueue's: its Pods are suspended by their parent (gated, with no
	 * finalizer) and marked managed. */
	rc = template_meta(c, obj, "annotations",
	    "kueue.x-k8s.io/pod-suspending-parent", "deployment", err);
	if (rc == CU_OK)
		rc = template_label(c, obj, MANAGED, "true", err);
	if (rc == CU_OK)
		rc = template_label(
		    c, obj, NS_GATE_LABEL_QUEUE_NAME, gobj.queue_name, err);
	prio = api_json_str(
	    json_object_get(json_object_get(obj, "metadata"), "labels"),
	    API_LABEL_PRIORITY_CLASS);
	if (rc == CU_OK && prio != NULL)
		rc =
		    template_label(c, obj, API_LABEL_PRIORITY_CLASS, prio, err);
	return rc;
}
