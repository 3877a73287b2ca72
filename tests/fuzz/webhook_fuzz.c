/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/webhook_fuzz.c - fuzz the admission webhooks
 * (webhook/webhook.h) with arbitrary request bodies. The input is the
 * HTTP body of an AdmissionReview; it goes through wh_serve in both
 * modes, with and without manageJobsWithoutQueueName, against a fixed
 * world (namespace team-a managed, test not, LocalQueue "default" in
 * both, JobSet "js" queued, every Workload reserved and not admitted).
 *
 * Checked contracts (abort() on a breach): the answer is an
 * AdmissionReview with a string uid and a boolean allowed; HTTP 200/400/
 * 413 only; a denial carries code >= 400 and a message; a patch comes
 * only with an allowed mutating answer on CREATE, is base64 of a JSON
 * array, applies cleanly to request.object, and for a Job/JobSet leaves
 * spec.suspend true and happens only in the managed namespace.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/json.h"
#include "webhook/webhook.h"
#include "api/patch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const TEAM_A[] = {"managed", "true", NULL};

static const char *kv_get(const char *key, void *payload)
{
	const char *const *kv = payload;
	size_t i;

	for (i = 0; kv[i] != NULL; i += 2)
		if (strcmp(kv[i], key) == 0)
			return kv[i + 1];
	return NULL;
}

static int ns_get(const char *name, struct ns_gate_namespace *out,
    void *payload, cu_error *err)
{
	(void)payload;
	(void)err;
	out->found = strcmp(name, "team-a") == 0 || strcmp(name, "test") == 0;
	if (strcmp(name, "team-a") == 0) {
		out->get = kv_get;
		out->payload = (void *)(uintptr_t)TEAM_A;
	}
	return CU_OK;
}

static int owner_lookup(const struct ns_gate_owner *ref, const char *ns,
    struct ns_gate_object *out, void *payload, cu_error *err)
{
	(void)ns;
	(void)payload;
	(void)err;
	if (ref->name == NULL || strcmp(ref->name, "js") != 0)
		return CU_ENOTFOUND;
	memset(out, 0, sizeof(*out));
	out->kind = NS_GATE_KIND_JOBSET;
	out->name = "js";
	out->uid = ref->uid;
	out->queue_name = "main";
	return CU_OK;
}

static int lq_exists(const char *ns, const char *name, bool *exists,
    void *payload, cu_error *err)
{
	(void)payload;
	(void)err;
	*exists = strcmp(name, "default") == 0 &&
		  (strcmp(ns, "team-a") == 0 || strcmp(ns, "test") == 0);
	return CU_OK;
}

static int wl_state(const struct wh_job_ref *job, struct wh_workload_state *out,
    void *payload, cu_error *err)
{
	(void)job;
	(void)payload;
	(void)err;
	out->quota_reserved = true;
	out->admitted = false;
	return CU_OK;
}

/* Base64 text -> bytes [owned: cu_free]; NULL when not base64. */
static char *unbase64(const char *s, size_t *n)
{
	char *out = NULL;

	return api_base64_decode(s, &out, n, NULL) == CU_OK ? out : NULL;
}

static bool is_job_kind(const struct wh_request *r)
{
	return (strcmp(r->kind.group, "batch") == 0 &&
		   strcmp(r->kind.kind, "Job") == 0) ||
	       (strcmp(r->kind.group, "jobset.x-k8s.io") == 0 &&
		   strcmp(r->kind.kind, "JobSet") == 0);
}

/* The patch in resp [borrowed] must apply to the request's object. */
static void check_patch(const struct wh_request *req, bool have_req,
    enum wh_mode mode, const json_t *resp)
{
	const json_t *p64 = json_object_get(resp, "patch");
	const json_t *pt = json_object_get(resp, "patchType");
	json_t *patch, *out = NULL;
	char *raw;
	size_t n = 0;

	if (p64 == NULL && pt == NULL)
		return;
	if (!json_is_string(p64) || !json_is_string(pt) ||
	    strcmp(json_string_value(pt), "JSONPatch") != 0)
		abort();
	if (mode != WH_MUTATE || !have_req ||
	    !json_is_true(json_object_get(resp, "allowed")) ||
	    req->operation != WH_OP_CREATE || req->dry_run ||
	    req->object == NULL)
		abort();
	raw = unbase64(json_string_value(p64), &n);
	if (raw == NULL)
		abort();
	patch = json_loadb(raw, n, 0, NULL);
	cu_free(raw);
	if (!json_is_array(patch) || json_array_size(patch) == 0)
		abort();
	if (api_json_patch_apply(&out, req->object, patch, NULL) != CU_OK)
		abort();
	if (is_job_kind(req)) {
		const json_t *ns = json_object_get(
		    json_object_get(req->object, "metadata"), "namespace");
		const char *nsname =
		    req->namespace_[0] != '\0' ? req->namespace_
		    : json_is_string(ns)       ? json_string_value(ns)
					       : "";

		if (!json_is_true(json_object_get(
			json_object_get(out, "spec"), "suspend")))
			abort();
		if (strcmp(nsname, "team-a") != 0)
			abort();
	}
	json_decref(out);
	json_decref(patch);
}

static void one(const struct wh_options *opt, enum wh_mode mode,
    const uint8_t *data, size_t size, const struct wh_request *req,
    bool have_req)
{
	char *out = NULL;
	size_t len = 0;
	int status = 0, rc;
	json_t *doc, *resp, *st;
	cu_error err;

	rc = wh_serve(opt, mode, data, size, &status, &out, &len, &err);
	if (rc != CU_OK) {
		if (rc != CU_ENOMEM || out != NULL || status != 500)
			abort();
		return;
	}
	if (out == NULL || strlen(out) != len)
		abort();
	if (status != 200 && status != 400 && status != 413)
		abort();
	if ((status == 200) != have_req)
		abort();
	doc = json_loads(out, 0, NULL);
	resp = json_object_get(doc, "response");
	if (!json_is_object(resp) ||
	    !json_is_string(json_object_get(resp, "uid")) ||
	    !json_is_boolean(json_object_get(resp, "allowed")))
		abort();
	if (have_req && strcmp(json_string_value(json_object_get(resp, "uid")),
			    req->uid) != 0)
		abort();
	if (json_is_false(json_object_get(resp, "allowed"))) {
		st = json_object_get(resp, "status");
		if (json_integer_value(json_object_get(st, "code")) < 400 ||
		    !json_is_string(json_object_get(st, "message")) ||
		    json_object_get(resp, "patch") != NULL)
			abort();
	}
	check_patch(req, have_req, mode, resp);
	json_decref(doc);
	cu_free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ns_gate_config cfg;
	struct wh_options opt;
	struct wh_request req;
	api_selector sel;
	bool have_req;
	int m;

	if (ns_selector_parse(&sel, "managed=true", NULL) != CU_OK)
		abort();
	memset(&cfg, 0, sizeof(cfg));
	cfg.job_enabled = true;
	cfg.jobset_enabled = true;
	cfg.ns_selector = &sel;
	cfg.own_namespace = "cueue-system";
	memset(&opt, 0, sizeof(opt));
	opt.gate = &cfg;
	opt.namespace_get = ns_get;
	opt.owner_lookup = owner_lookup;
	opt.local_queue_exists = lq_exists;
	opt.workload_state = wl_state;
	opt.own_username = "system:serviceaccount:cueue-system:cueue";
	opt.add_resource_in_use_finalizer = true;

	have_req = wh_request_decode(&req, data, size, NULL) == CU_OK;
	for (m = 0; m < 4; m++) {
		cfg.manage_jobs_without_queue_name = m >= 2;
		one(&opt, m % 2 ? WH_VALIDATE : WH_MUTATE, data, size, &req,
		    have_req);
	}
	wh_request_dispose(&req);
	api_selector_dispose(&sel);
	return 0;
}
