/* SPDX-License-Identifier: Apache-2.0 */
/*
 * webhook/jobs.c - the Job (batch/v1) and JobSet
 * (jobset.x-k8s.io/v1alpha2) webhooks. Mutating CREATE: a job the
 * management gate calls ours is created suspended, after the default
 * LocalQueue label when the namespace has one (Kueue's Default():
 * ApplyDefaultLocalQueue, then ApplyDefaultForSuspend). Validating
 * CREATE/UPDATE of a job that is ours (before or after the update): the
 * queue-name label is a DNS-1123 subdomain, admission-gated-by is valid
 * (webhook/gatedby.c, with AdmissionGatedBy), cannot change while the
 * Workload holds quota, and spec.suspend cannot go true -> false while
 * the Workload is not admitted (a SparkApplication's own checks:
 * webhook/spark.c). Anything the gate does not call ours passes
 * untouched: no patch, no denial.
 */
#include <stdio.h>
#include <string.h>

#include "webhook/webhook_int.h"
#include "api/patch.h"

#define QUEUE_LABEL_PATH "metadata.labels[" NS_GATE_LABEL_QUEUE_NAME "]"

static enum ns_gate_kind request_kind(const struct wh_request *req)
{
	char gv[256];

	if (req->kind.group[0] != '\0')
		snprintf(gv, sizeof(gv), "%s/%s", req->kind.group,
		    req->kind.version);
	else
		snprintf(gv, sizeof(gv), "%s", req->kind.version);
	return ns_gate_kind_of(gv, req->kind.kind);
}

/* The object under spec holding the request kind's suspend boolean
 * (spec.runPolicy, spec.rayClusterConfig), or NULL: spec itself. */
static const char *suspend_under(const struct wh_request *req)
{
	return ns_gate_kind_suspend_under(request_kind(req));
}

/* The object's namespace: the request's, else metadata.namespace. */
static const char *namespace_of(const struct wh_request *req, const json_t *obj)
{
	const json_t *ns;

	if (req->namespace_[0] != '\0')
		return req->namespace_;
	ns = json_object_get(json_object_get(obj, "metadata"), "namespace");
	return json_is_string(ns) ? json_string_value(ns) : "";
}

/* The namespace as the caller's cache has it. */
static int namespace_view(struct wh_ctx *c, const char *name,
    struct ns_gate_namespace *out, cu_error *err)
{
	int rc;

	memset(out, 0, sizeof(*out));
	out->name = name;
	if (c->opt->namespace_get == NULL)
		return CU_OK;
	rc = c->opt->namespace_get(name, out, c->opt->payload, err);
	if (rc == CU_ENOTFOUND) {
		memset(out, 0, sizeof(*out));
		cu_error_clear(err);
		rc = CU_OK;
	}
	if (rc != CU_OK)
		return wh__cb_error(rc, "namespace lookup", err);
	out->name = name;
	return CU_OK;
}

/* ns_gate_decide under the caller's configuration and owner lookup. */
static int gate(struct wh_ctx *c, const struct ns_gate_object *gobj,
    const struct ns_gate_namespace *ns, struct ns_gate_decision *d,
    cu_error *err)
{
	int rc;

	if (c->opt->gate == NULL)
		return cu_error_set(
		    err, CU_EIO, "webhook: no management gate configuration");
	rc = ns_gate_decide(c->opt->gate, gobj, ns, c->opt->owner_lookup,
	    c->opt->payload, d, err);
	if (rc != CU_OK)
		return wh__cb_error(rc, "owner lookup", err);
	return CU_OK;
}

/* The gate on obj [borrowed]; *gobj borrows from obj. */
static int decide(struct wh_ctx *c, const json_t *obj,
    const struct ns_gate_namespace *ns, struct ns_gate_object *gobj,
    struct ns_gate_decision *d, cu_error *err)
{
	int rc;

	rc = ns_gate_object_from_json(gobj, obj, err);
	if (rc != CU_OK)
		return rc == CU_ENOMEM ? rc : CU_EPARSE;
	gobj->kind = request_kind(c->req);
	return gate(c, gobj, ns, d, err);
}

int wh__gate_as(struct wh_ctx *c, const json_t *obj, enum ns_gate_kind kind,
    struct ns_gate_object *gobj, struct ns_gate_decision *d, cu_error *err)
{
	struct ns_gate_namespace ns;
	int rc;

	if ((rc = namespace_view(c, namespace_of(c->req, obj), &ns, err)) !=
	    CU_OK)
		return rc;
	rc = ns_gate_object_from_json(gobj, obj, err);
	if (rc != CU_OK)
		return rc == CU_ENOMEM ? rc : CU_EPARSE;
	gobj->kind = kind;
	return gate(c, gobj, &ns, d, err);
}

/* The spec.suspend member (spec.runPolicy.suspend when rp): *present,
 * *value; CU_EPARSE when spec, runPolicy or suspend has the wrong type. */
static int suspend_of(const json_t *obj, const char *field, const char *under,
    bool *present, bool *value, cu_error *err)
{
	const json_t *spec = json_object_get(obj, "spec"), *s;

	*present = false;
	*value = false;
	if (spec == NULL || json_is_null(spec))
		return CU_OK;
	if (!json_is_object(spec))
		return cu_error_set(err, CU_EPARSE,
		    "%sspec: Invalid type: expected object, got %s", field,
		    api_json_type_name(spec, false));
	if (under != NULL) {
		spec = json_object_get(spec, under);
		if (spec == NULL || json_is_null(spec))
			return CU_OK;
		if (!json_is_object(spec))
			return cu_error_set(err, CU_EPARSE,
			    "%sspec.%s: Invalid type: expected object, got %s",
			    field, under, api_json_type_name(spec, false));
	}
	s = json_object_get(spec, "suspend");
	if (s == NULL || json_is_null(s))
		return CU_OK;
	if (!json_is_boolean(s))
		return cu_error_set(err, CU_EPARSE,
		    "%sspec.suspend: Invalid type: expected boolean, got %s",
		    field, api_json_type_name(s, false));
	*present = true;
	*value = json_is_true(s);
	return CU_OK;
}

/* ---- mutating CREATE ------------------------------------------------- */

#define WPC_LABEL "kueue.x-k8s.io/priority-class"

/* The labels keys[0..n) = "default" (Kueue's default LocalQueue and
 * WorkloadPriorityClass), creating what is missing. */
static int patch_default_labels(struct wh_ctx *c, const json_t *obj,
    const char *const *keys, size_t n, cu_error *err)
{
	const json_t *meta = json_object_get(obj, "metadata"), *labels;
	json_t *all = json_object();
	size_t i;
	int rc = CU_OK;

	for (i = 0; all != NULL && i < n; i++)
		if (json_object_set_new(all, keys[i], json_string("default"))) {
			json_decref(all);
			all = NULL;
		}
	if (all == NULL)
		return cu_error_set(err, CU_ENOMEM, "webhook patch: label");
	if (!json_is_object(meta))
		return wh__patch_add(c->out, "add", "/metadata",
		    json_pack("{s:o}", "labels", all), err);
	labels = json_object_get(meta, "labels");
	if (!json_is_object(labels))
		return wh__patch_add(
		    c->out, "add", "/metadata/labels", all, err);
	json_decref(all);
	for (i = 0; rc == CU_OK && i < n; i++) {
		char *key = api_json_pointer_escape(keys[i]);
		char *path = key != NULL
				 ? cu_asprintf("/metadata/labels/%s", key)
				 : NULL;

		cu_free(key);
		if (path == NULL)
			return cu_error_set(
			    err, CU_ENOMEM, "webhook patch: label");
		rc = wh__patch_add(
		    c->out, "add", path, json_string("default"), err);
		cu_free(path);
	}
	return rc;
}

/* A job without a priority-class label while the WorkloadPriorityClass
 * "default" exists. */
static bool wants_default_wpc(const struct wh_ctx *c, const json_t *obj)
{
	const char *l = json_string_value(json_object_get(
	    json_object_get(json_object_get(obj, "metadata"), "labels"),
	    WPC_LABEL));

	return (l == NULL || *l == '\0') && c->opt->default_wpc_exists &&
	       c->opt->default_wpc_exists(c->opt->payload);
}

/* spec.suspend = true, with "add" when absent and "replace" when false. */
static int patch_suspend(struct wh_ctx *c, const json_t *obj, bool present,
    bool value, cu_error *err)
{
	const json_t *spec = json_object_get(obj, "spec");
	const char *under = suspend_under(c->req);

	if (value)
		return CU_OK;
	if (under != NULL) {
		const json_t *rp = json_object_get(spec, under);
		char path[64];

		if (!json_is_object(spec))
			return wh__patch_add(c->out, "add", "/spec",
			    json_pack("{s:{s:b}}", under, "suspend", 1), err);
		snprintf(path, sizeof(path), "/spec/%s", under);
		if (!json_is_object(rp))
			return wh__patch_add(c->out,
			    rp != NULL ? "replace" : "add", path,
			    json_pack("{s:b}", "suspend", 1), err);
		snprintf(path, sizeof(path), "/spec/%s/suspend", under);
		return wh__patch_add(c->out,
		    json_object_get(rp, "suspend") != NULL ? "replace" : "add",
		    path, json_true(), err);
	}
	if (!json_is_object(spec))
		return wh__patch_add(c->out, "add", "/spec",
		    json_pack("{s:b}", "suspend", 1), err);
	return wh__patch_add(c->out,
	    present || json_object_get(spec, "suspend") != NULL ? "replace"
								: "add",
	    "/spec/suspend", json_true(), err);
}

static int mutate_create(struct wh_ctx *c, cu_error *err)
{
	const json_t *obj = c->req->object;
	const char *nsname = namespace_of(c->req, obj);
	struct ns_gate_namespace ns;
	struct ns_gate_object gobj;
	struct ns_gate_decision d;
	bool present, value, inject = false;
	int rc;

	if ((rc = namespace_view(c, nsname, &ns, err)) != CU_OK ||
	    (rc = decide(c, obj, &ns, &gobj, &d, err)) != CU_OK)
		return rc;
	/* A standalone job without a queue name in a namespace the gate
	 * lets through gets the namespace's default LocalQueue, if any
	 * (Kueue #13375: never in a namespace outside the selector). */
	if ((d.reason == NS_GATE_R_NO_QUEUE_NAME ||
		d.reason == NS_GATE_R_WITHOUT_QUEUE_NAME) &&
	    c->opt->local_queue_exists != NULL) {
		bool exists = false;

		rc = c->opt->local_queue_exists(nsname, WH_DEFAULT_LOCAL_QUEUE,
		    &exists, c->opt->payload, err);
		if (rc == CU_ENOTFOUND) {
			exists = false;
			cu_error_clear(err);
			rc = CU_OK;
		}
		if (rc != CU_OK)
			return wh__cb_error(rc, "LocalQueue lookup", err);
		if (exists) {
			gobj.queue_name = WH_DEFAULT_LOCAL_QUEUE;
			if ((rc = gate(c, &gobj, &ns, &d, err)) != CU_OK)
				return rc;
			inject = d.managed == NS_GATE_YES;
		}
	}
	/* Not ours: untouched, even when malformed. */
	if (d.managed != NS_GATE_YES)
		return CU_OK;
	if (wh__is_pod(c->req)) {
		const char *qkey[1] = {NS_GATE_LABEL_QUEUE_NAME};

		if (inject &&
		    (rc = patch_default_labels(c, obj, qkey, 1, err)) != CU_OK)
			return rc;
		if ((rc = wh__pod_serving(c, obj, err)) != CU_OK ||
		    (rc = wh__pod_managed(c, obj, err)) != CU_OK)
			return rc;
		return wh__pod_gate(c, obj, err);
	}
	if ((rc = suspend_of(obj, "", suspend_under(c->req), &present, &value,
		 err)) != CU_OK)
		return rc;
	{
		const char *keys[2];
		size_t n = 0;

		if (inject)
			keys[n++] = NS_GATE_LABEL_QUEUE_NAME;
		if (wants_default_wpc(c, obj))
			keys[n++] = WPC_LABEL;
		if (n > 0 &&
		    (rc = patch_default_labels(c, obj, keys, n, err)) != CU_OK)
			return rc;
	}
	/* An elastic Job's pods wait for the elastic ungater (Kueue's
	 * workload-slice scheduling gate). */
	if (gobj.kind == NS_GATE_KIND_JOB && !c->opt->no_elastic_jobs &&
	    wh__elastic_job(obj) &&
	    (rc = wh__add_gate(c,
		 json_object_get(
		     json_object_get(json_object_get(obj, "spec"), "template"),
		     "spec"),
		 "spec.template.spec", WH_ELASTIC_JOB, err)) != CU_OK)
		return rc;
	return patch_suspend(c, obj, present, value, err);
}

/* ---- validating CREATE / UPDATE -------------------------------------- */

static int check_queue_name(const char *q, cu_error *err)
{
	if (q == NULL || q[0] == '\0')
		return CU_OK;
	return wh__check_dns1123_subdomain(q, QUEUE_LABEL_PATH, err);
}

/* The job's Workload, asked once per review. */
struct wl_query {
	bool asked;
	struct wh_workload_state st;
};

static int workload_state(struct wh_ctx *c, const struct ns_gate_object *gobj,
    const char *nsname, struct wl_query *q, cu_error *err)
{
	struct wh_job_ref ref;
	int rc;

	if (q->asked)
		return CU_OK;
	q->asked = true;
	memset(&q->st, 0, sizeof(q->st));
	if (c->opt->workload_state == NULL)
		return CU_OK;
	ref.kind = gobj->kind;
	ref.namespace_ = nsname;
	ref.name = c->req->name[0] != '\0' ? c->req->name
		   : gobj->name != NULL	   ? gobj->name
					   : "";
	ref.uid = gobj->uid != NULL ? gobj->uid : "";
	rc = c->opt->workload_state(&ref, &q->st, c->opt->payload, err);
	if (rc == CU_ENOTFOUND) {
		memset(&q->st, 0, sizeof(q->st));
		cu_error_clear(err);
		rc = CU_OK;
	}
	if (rc != CU_OK)
		return wh__cb_error(rc, "Workload lookup", err);
	return CU_OK;
}

static bool same_str(const char *a, const char *b)
{
	return strcmp(a != NULL ? a : "", b != NULL ? b : "") == 0;
}

static int validate(struct wh_ctx *c, cu_error *err)
{
	const struct wh_request *req = c->req;
	const json_t *obj = req->object, *old = req->old_object;
	const char *nsname = namespace_of(req, obj);
	const char *own = c->opt->own_username;
	struct ns_gate_namespace ns;
	struct ns_gate_object gnew, gold;
	struct ns_gate_decision dnew, dold;
	struct wl_query wq = {false, {false, false, false}};
	bool np, nv, op = false, ov = false,
		     is_update = old != NULL && req->operation == WH_OP_UPDATE;
	char q[WH_QUOTE_MAX];
	int rc;

	if ((rc = namespace_view(c, nsname, &ns, err)) != CU_OK ||
	    (rc = decide(c, obj, &ns, &gnew, &dnew, err)) != CU_OK)
		return rc;
	memset(&dold, 0, sizeof(dold));
	memset(&gold, 0, sizeof(gold));
	if (is_update && (rc = decide(c, old, &ns, &gold, &dold, err)) != CU_OK)
		return rc;
	/* 3. ours before or after the update, else hands off */
	if (dnew.managed != NS_GATE_YES && dold.managed != NS_GATE_YES)
		return CU_OK;
	if ((rc = suspend_of(obj, "", suspend_under(req), &np, &nv, err)) !=
		CU_OK ||
	    (is_update && (rc = suspend_of(old, "oldObject.",
			       suspend_under(req), &op, &ov, err)) != CU_OK))
		return rc;
	/* 4. the label names a LocalQueue; admission-gated-by and a Job's
	 * job-min-parallelism are valid */
	if ((rc = check_queue_name(gnew.queue_name, err)) != CU_OK ||
	    (!c->opt->no_admission_gated_by &&
		(rc = wh_admission_gated_by(
		     is_update ? old : NULL, obj, err)) != CU_OK) ||
	    (gnew.kind == NS_GATE_KIND_JOB &&
		(rc = wh_job_partial_admission(is_update ? old : NULL, obj,
		     !c->opt->no_elastic_jobs, err)) != CU_OK) ||
	    (gnew.kind == NS_GATE_KIND_SPARKAPP &&
		dnew.managed == NS_GATE_YES &&
		(rc = wh__spark_validate(obj, !c->opt->no_elastic_jobs, err)) !=
		    CU_OK) ||
	    !is_update)
		return rc;
	/* 5. the queue cannot change under a quota reservation */
	if (!same_str(gnew.queue_name, gold.queue_name)) {
		if ((rc = workload_state(c, &gold, nsname, &wq, err)) != CU_OK)
			return rc;
		if (wq.st.quota_reserved)
			return cu_error_set(err, CU_EDENIED,
			    QUEUE_LABEL_PATH
			    ": Invalid value: %s: field is immutable",
			    wh__quote(q, gnew.queue_name));
	}
	/* 6. only admission resumes a job cueue keeps suspended */
	if (op && ov && !nv &&
	    !(own != NULL && own[0] != '\0' &&
		strcmp(own, req->username) == 0)) {
		if ((rc = workload_state(c, &gold, nsname, &wq, err)) != CU_OK)
			return rc;
		if (!wq.st.admitted)
			return cu_error_set(err, CU_EDENIED,
			    "spec.suspend: Forbidden: cannot be set to false "
			    "while the job's Workload is not admitted; cueue "
			    "resumes the job when its Workload is admitted");
	}
	return CU_OK;
}

int wh__jobs(struct wh_ctx *c, cu_error *err)
{
	if (c->mode == WH_MUTATE)
		return c->req->operation == WH_OP_CREATE ? mutate_create(c, err)
							 : CU_OK;
	return validate(c, err);
}
