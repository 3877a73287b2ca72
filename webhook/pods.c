/* SPDX-License-Identifier: Apache-2.0 */
/*
 * webhook/pods.c - the Pod webhook's own step (framework "pod",
 * docs/frameworks.md section 5): a Pod the management gate calls ours
 * (webhook/jobs.c decides, the namespace first) is created with the
 * kueue.x-k8s.io/admission scheduling gate, which holds it Pending until
 * its Workload is admitted; cueue removes the gate then. A Pod is never
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

int wh__pod_gate(struct wh_ctx *c, const json_t *obj, cu_error *err)
{
	return wh__add_gate(
	    c, json_object_get(obj, "spec"), "spec", ADMISSION_GATE, err);
}

/* labels[key] = value in the pod template of obj, creating what is
 * missing (a patch of c->out). */
static int template_label(struct wh_ctx *c, const json_t *obj, const char *key,
    const char *value, cu_error *err)
{
	const json_t *tpl = json_object_get(
			 json_object_get(obj, "spec"), "template"),
		     *md = json_object_get(tpl, "metadata"),
		     *labels = json_object_get(md, "labels");
	char *k, *path;
	int rc;

	if (!json_is_object(tpl))
		return cu_error_set(err, CU_EPARSE,
		    "spec.template: Invalid type: expected object");
	if (!json_is_object(md))
		return wh__patch_add(c->out, "add", "/spec/template/metadata",
		    json_pack("{s:{s:s}}", "labels", key, value), err);
	if (!json_is_object(labels))
		return wh__patch_add(c->out, "add",
		    "/spec/template/metadata/labels",
		    json_pack("{s:s}", key, value), err);
	if (api_json_str(labels, key) != NULL &&
	    strcmp(api_json_str(labels, key), value) == 0)
		return CU_OK;
	k = api_json_pointer_escape(key);
	path = k != NULL ? cu_asprintf("/spec/template/metadata/labels/%s", k)
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
