/* SPDX-License-Identifier: Apache-2.0 */
/*
 * webhook/webhook.c - the AdmissionReview v1 codec (request decode with
 * field-naming errors and a size cap, response encode with a base64 JSON
 * patch), the served paths, the dispatch of a review to the Job/JobSet
 * and Kueue-kind handlers, and the helpers those share (webhook_int.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "webhook/webhook_int.h"
#include "api/json.h"
#include "api/patch.h"

const struct wh_route wh_routes[] = {
    {"/mutate-batch-v1-job", WH_MUTATE},
    {"/validate-batch-v1-job", WH_VALIDATE},
    {"/mutate-jobset-x-k8s-io-v1alpha2-jobset", WH_MUTATE},
    {"/validate-jobset-x-k8s-io-v1alpha2-jobset", WH_VALIDATE},
    {"/mutate-kubeflow-org-v1-pytorchjob", WH_MUTATE},
    {"/validate-kubeflow-org-v1-pytorchjob", WH_VALIDATE},
    {"/mutate-kubeflow-org-v1-tfjob", WH_MUTATE},
    {"/validate-kubeflow-org-v1-tfjob", WH_VALIDATE},
    {"/mutate-kubeflow-org-v1-xgboostjob", WH_MUTATE},
    {"/validate-kubeflow-org-v1-xgboostjob", WH_VALIDATE},
    {"/mutate-kubeflow-org-v1-paddlejob", WH_MUTATE},
    {"/validate-kubeflow-org-v1-paddlejob", WH_VALIDATE},
    {"/mutate-kubeflow-org-v1-jaxjob", WH_MUTATE},
    {"/validate-kubeflow-org-v1-jaxjob", WH_VALIDATE},
    {"/mutate-kubeflow-org-v2beta1-mpijob", WH_MUTATE},
    {"/validate-kubeflow-org-v2beta1-mpijob", WH_VALIDATE},
    {"/mutate-ray-io-v1-rayjob", WH_MUTATE},
    {"/validate-ray-io-v1-rayjob", WH_VALIDATE},
    {"/mutate-ray-io-v1-raycluster", WH_MUTATE},
    {"/validate-ray-io-v1-raycluster", WH_VALIDATE},
    {"/mutate-workload-codeflare-dev-v1beta2-appwrapper", WH_MUTATE},
    {"/validate-workload-codeflare-dev-v1beta2-appwrapper", WH_VALIDATE},
    {"/mutate--v1-pod", WH_MUTATE},
    {"/mutate-apps-v1-deployment", WH_MUTATE},
    {"/validate--v1-pod", WH_VALIDATE},
    {"/mutate-ray-io-v1-rayservice", WH_MUTATE},
    {"/validate-ray-io-v1-rayservice", WH_VALIDATE},
    {"/mutate-sparkoperator-k8s-io-v1beta2-sparkapplication", WH_MUTATE},
    {"/validate-sparkoperator-k8s-io-v1beta2-sparkapplication", WH_VALIDATE},
    {"/mutate-trainer-kubeflow-org-v1alpha1-trainjob", WH_MUTATE},
    {"/validate-trainer-kubeflow-org-v1alpha1-trainjob", WH_VALIDATE},
    {"/mutate-kueue-x-k8s-io-v1beta2-clusterqueue", WH_MUTATE},
    {"/validate-kueue-x-k8s-io-v1beta2-clusterqueue", WH_VALIDATE},
    {"/validate-kueue-x-k8s-io-v1beta2-localqueue", WH_VALIDATE},
    {"/mutate-kueue-x-k8s-io-v1beta2-resourceflavor", WH_MUTATE},
    {"/validate-kueue-x-k8s-io-v1beta2-resourceflavor", WH_VALIDATE},
    {"/mutate-kueue-x-k8s-io-v1beta2-workload", WH_MUTATE},
    {"/validate-kueue-x-k8s-io-v1beta2-workload", WH_VALIDATE},
    {"/validate-kueue-x-k8s-io-v1beta2-workloadpriorityclass", WH_VALIDATE},
    {"/validate-kueue-x-k8s-io-v1beta2-cohort", WH_VALIDATE},
    {"/mutate-apps-v1-statefulset", WH_MUTATE},
    {"/validate-apps-v1-statefulset", WH_VALIDATE},
    {"/mutate-leaderworkerset-x-k8s-io-v1-leaderworkerset", WH_MUTATE},
    {"/validate-leaderworkerset-x-k8s-io-v1-leaderworkerset", WH_VALIDATE},
    {NULL, WH_MUTATE},
};

int wh_mode_for_path(const char *path, enum wh_mode *out)
{
	size_t i;

	for (i = 0; path != NULL && wh_routes[i].path != NULL; i++) {
		if (strcmp(wh_routes[i].path, path) == 0) {
			if (out != NULL)
				*out = wh_routes[i].mode;
			return CU_OK;
		}
	}
	return CU_ENOTFOUND;
}

const char *wh_op_name(enum wh_op op)
{
	switch (op) {
	case WH_OP_CREATE:
		return "CREATE";
	case WH_OP_UPDATE:
		return "UPDATE";
	case WH_OP_DELETE:
		return "DELETE";
	case WH_OP_CONNECT:
		return "CONNECT";
	case WH_OP_UNSET:
		break;
	}
	return "";
}

/* ---- shared helpers (webhook_int.h) ---------------------------------- */

char *wh__quote(char buf[WH_QUOTE_MAX], const char *s)
{
	/* Room for the worst escape (\u00XX, 6 bytes), "...", quote, NUL. */
	const size_t limit = WH_QUOTE_MAX - 12;
	size_t o = 0, i;

	if (s == NULL)
		s = "";
	buf[o++] = '"';
	for (i = 0; s[i] != '\0'; i++) {
		unsigned char ch = (unsigned char)s[i];

		/* Stop before a character that starts past the limit; a
		 * UTF-8 continuation byte is never split off its lead. */
		if ((o >= limit && (ch & 0xC0) != 0x80) ||
		    o >= WH_QUOTE_MAX - 8) {
			memcpy(buf + o, "...", 3);
			o += 3;
			break;
		}
		if (ch == '"' || ch == '\\') {
			buf[o++] = '\\';
			buf[o++] = (char)ch;
		} else if (ch == '\n') {
			buf[o++] = '\\';
			buf[o++] = 'n';
		} else if (ch < 0x20 || ch == 0x7F) {
			o += (size_t)snprintf(
			    buf + o, WH_QUOTE_MAX - o, "\\u%04x", ch);
		} else {
			buf[o++] = (char)ch;
		}
	}
	buf[o++] = '"';
	buf[o] = '\0';
	return buf;
}

static bool dns_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

bool wh__is_dns1123_subdomain(const char *s)
{
	size_t n = strlen(s), i, start = 0;

	if (n == 0 || n > 253)
		return false;
	/* dot-separated labels of [a-z0-9-], alphanumeric at both ends */
	for (i = 0; i <= n; i++) {
		if (i == n || s[i] == '.') {
			if (i == start || !dns_alnum(s[start]) ||
			    !dns_alnum(s[i - 1]))
				return false;
			start = i + 1;
		} else if (!dns_alnum(s[i]) && s[i] != '-') {
			return false;
		}
	}
	return true;
}

int wh__check_dns1123_subdomain(const char *s, const char *field, cu_error *err)
{
	char q[WH_QUOTE_MAX];

	if (wh__is_dns1123_subdomain(s))
		return CU_OK;
	if (strlen(s) > 253)
		return cu_error_set(err, CU_EDENIED,
		    "%s: Invalid value: %s: must be no more than 253 "
		    "characters",
		    field, wh__quote(q, s));
	return cu_error_set(err, CU_EDENIED,
	    "%s: Invalid value: %s: a lowercase RFC 1123 subdomain must "
	    "consist of lower case alphanumeric characters, '-' or '.', and "
	    "must start and end with an alphanumeric character (e.g. "
	    "'example.com', regex used for validation is "
	    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)"
	    "*')",
	    field, wh__quote(q, s));
}

int wh__cb_error(int rc, const char *what, cu_error *err)
{
	if (rc == CU_EPARSE || rc == CU_EINVAL || rc == CU_EDENIED ||
	    rc == CU_OK) {
		if (err == NULL || err->msg[0] == '\0')
			return cu_error_set(err, CU_EIO, "%s: failed", what);
		err->code = CU_EIO;
		return CU_EIO;
	}
	if (err != NULL && err->msg[0] == '\0')
		cu_error_set(err, rc, "%s: %s", what, cu_err_desc(rc));
	else if (err != NULL)
		err->code = rc;
	return rc;
}

int wh__patch_add(struct wh_response *out, const char *op, const char *path,
    json_t *value, cu_error *err)
{
	json_t *o;

	if (value == NULL)
		return cu_error_set(
		    err, CU_ENOMEM, "webhook patch: %s %s", op, path);
	if (out->patch == NULL && (out->patch = json_array()) == NULL) {
		json_decref(value);
		return cu_error_set(
		    err, CU_ENOMEM, "webhook patch: %s %s", op, path);
	}
	o = json_pack(
	    "{s:s, s:s, s:o}", "op", op, "path", path, "value", value);
	if (o == NULL || json_array_append_new(out->patch, o) != 0)
		return cu_error_set(
		    err, CU_ENOMEM, "webhook patch: %s %s", op, path);
	return CU_OK;
}

/* ---- request decode -------------------------------------------------- */

/* The string at o[key] into *out ("" when absent or null). */
static int dec_str(const json_t *o, const char *key, const char *path,
    bool required, const char **out, cu_error *err)
{
	int rc = api_json_get_str(o, key, path, "", out, err);

	if (rc == CU_OK && required && (*out)[0] == '\0')
		return cu_error_set(err, CU_EINVAL, "%s: Required value", path);
	return rc;
}

/* The object at o[key] [borrowed], NULL when absent or null. */
static int dec_obj(const json_t *o, const char *key, const char *path,
    bool required, const json_t **out, cu_error *err)
{
	const json_t *v = json_object_get(o, key);

	*out = NULL;
	if (v == NULL || json_is_null(v)) {
		if (required)
			return cu_error_set(
			    err, CU_EINVAL, "%s: Required value", path);
		return CU_OK;
	}
	if (!json_is_object(v))
		return cu_error_set(err, CU_EPARSE,
		    "%s: Invalid type: expected object, got %s", path,
		    api_json_type_name(v, false));
	*out = v;
	return CU_OK;
}

static int dec_fixed(
    const json_t *o, const char *key, const char *want, cu_error *err)
{
	const char *v;
	char q[WH_QUOTE_MAX];
	int rc = dec_str(o, key, key, true, &v, err);

	if (rc != CU_OK)
		return rc;
	if (strcmp(v, want) != 0)
		return cu_error_set(err, CU_EINVAL,
		    "%s: Unsupported value: %s: supported values: \"%s\"", key,
		    wh__quote(q, v), want);
	return CU_OK;
}

static const char *const op_names[] = {
    "", "CREATE", "UPDATE", "DELETE", "CONNECT"};

static int dec_request(struct wh_request *r, const json_t *q, cu_error *err)
{
	const json_t *k, *res, *ui, *dr;
	const char *op;
	char qb[WH_QUOTE_MAX];
	size_t i;
	int rc;

	if ((rc = dec_str(q, "uid", "request.uid", true, &r->uid, err)) !=
		CU_OK ||
	    (rc = dec_obj(q, "kind", "request.kind", true, &k, err)) != CU_OK ||
	    (rc = dec_str(k, "group", "request.kind.group", false,
		 &r->kind.group, err)) != CU_OK ||
	    (rc = dec_str(k, "version", "request.kind.version", true,
		 &r->kind.version, err)) != CU_OK ||
	    (rc = dec_str(k, "kind", "request.kind.kind", true, &r->kind.kind,
		 err)) != CU_OK ||
	    (rc = dec_obj(q, "resource", "request.resource", true, &res,
		 err)) != CU_OK ||
	    (rc = dec_str(res, "group", "request.resource.group", false,
		 &r->resource.group, err)) != CU_OK ||
	    (rc = dec_str(res, "version", "request.resource.version", true,
		 &r->resource.version, err)) != CU_OK ||
	    (rc = dec_str(res, "resource", "request.resource.resource", true,
		 &r->resource.resource, err)) != CU_OK ||
	    (rc = dec_str(q, "subResource", "request.subResource", false,
		 &r->sub_resource, err)) != CU_OK ||
	    (rc = dec_str(q, "name", "request.name", false, &r->name, err)) !=
		CU_OK ||
	    (rc = dec_str(q, "namespace", "request.namespace", false,
		 &r->namespace_, err)) != CU_OK ||
	    (rc = dec_str(
		 q, "operation", "request.operation", true, &op, err)) != CU_OK)
		return rc;
	for (i = 1; i < sizeof(op_names) / sizeof(op_names[0]); i++)
		if (strcmp(op, op_names[i]) == 0)
			r->operation = (enum wh_op)i;
	if (r->operation == WH_OP_UNSET)
		return cu_error_set(err, CU_EINVAL,
		    "request.operation: Unsupported value: %s: supported "
		    "values: \"CREATE\", \"UPDATE\", \"DELETE\", \"CONNECT\"",
		    wh__quote(qb, op));
	if ((rc = dec_obj(q, "object", "request.object",
		 r->operation == WH_OP_CREATE || r->operation == WH_OP_UPDATE,
		 &r->object, err)) != CU_OK ||
	    (rc = dec_obj(q, "oldObject", "request.oldObject",
		 r->operation == WH_OP_UPDATE, &r->old_object, err)) != CU_OK)
		return rc;
	dr = json_object_get(q, "dryRun");
	if (dr != NULL && !json_is_null(dr) && !json_is_boolean(dr))
		return cu_error_set(err, CU_EPARSE,
		    "request.dryRun: Invalid type: expected boolean, got %s",
		    api_json_type_name(dr, false));
	r->dry_run = json_is_true(dr);
	if ((rc = dec_obj(
		 q, "userInfo", "request.userInfo", false, &ui, err)) != CU_OK)
		return rc;
	r->username = "";
	if (ui != NULL)
		return dec_str(ui, "username", "request.userInfo.username",
		    false, &r->username, err);
	return CU_OK;
}

int wh_request_decode(
    struct wh_request *out, const void *body, size_t len, cu_error *err)
{
	json_error_t jerr;
	json_t *doc;
	const json_t *q;
	int rc;

	if (out == NULL)
		return cu_error_set(err, CU_EINVAL, "request: no output");
	memset(out, 0, sizeof(*out));
	if (body == NULL && len > 0)
		return cu_error_set(err, CU_EINVAL, "request body: NULL");
	if (len > WH_MAX_BODY)
		return cu_error_set(err, CU_ETOOBIG,
		    "request body: Too long: %zu bytes: must have at most %zu "
		    "bytes",
		    len, WH_MAX_BODY);
	rc = api_json_loadb(&doc, body, len, JSON_REJECT_DUPLICATES, &jerr);
	if (rc != CU_OK) {
		if (rc == CU_ENOMEM)
			return cu_error_set(
			    err, CU_ENOMEM, "request body: out of memory");
		return cu_error_set(err, CU_EPARSE,
		    "request body: invalid JSON: %s (line %d, column %d)",
		    jerr.text, jerr.line, jerr.column);
	}
	if (!json_is_object(doc)) {
		rc = cu_error_set(err, CU_EPARSE,
		    "request body: Invalid type: expected object, got %s",
		    api_json_type_name(doc, false));
		goto fail;
	}
	if ((rc = dec_fixed(doc, "apiVersion", WH_API_VERSION, err)) != CU_OK ||
	    (rc = dec_fixed(doc, "kind", WH_KIND, err)) != CU_OK ||
	    (rc = dec_obj(doc, "request", "request", true, &q, err)) != CU_OK ||
	    (rc = dec_request(out, q, err)) != CU_OK)
		goto fail;
	out->doc = doc;
	return CU_OK;
fail:
	json_decref(doc);
	memset(out, 0, sizeof(*out));
	return rc;
}

void wh_request_dispose(struct wh_request *r)
{
	if (r == NULL)
		return;
	json_decref(r->doc);
	memset(r, 0, sizeof(*r));
}

/* ---- response encode ------------------------------------------------- */

void wh_response_dispose(struct wh_response *r)
{
	if (r == NULL)
		return;
	cu_free(r->message);
	json_decref(r->patch);
	json_decref(r->warnings);
	memset(r, 0, sizeof(*r));
}

/* Compact JSON text of v [owned: cu_free] in *out, length *len. */
static int dump(const json_t *v, char **out, size_t *len, cu_error *err)
{
	if (api_json_dumps(v, JSON_COMPACT, (size_t)64 << 20, out, len) !=
	    CU_OK)
		return cu_error_set(err, CU_ENOMEM, "webhook response: encode");
	return CU_OK;
}

/* Copy of s made valid UTF-8 (invalid bytes become '?'), cut at one line
 * [owned: cu_free]. */
static char *utf8_line(const char *s)
{
	size_t n = strlen(s), i = 0;
	char *c = cu_strdup(s);

	if (c == NULL)
		return NULL;
	while (i < n) {
		unsigned char b = (unsigned char)c[i];
		size_t len = b < 0x80		  ? 1
			     : (b & 0xE0) == 0xC0 ? 2
			     : (b & 0xF0) == 0xE0 ? 3
			     : (b & 0xF8) == 0xF0 ? 4
						  : 0;
		size_t k;
		bool ok = len > 0 && i + len <= n;

		for (k = 1; ok && k < len; k++)
			ok = ((unsigned char)c[i + k] & 0xC0) == 0x80;
		if (ok && len == 2 && b < 0xC2)
			ok = false; /* overlong */
		if (ok && len == 3) {
			unsigned char b1 = (unsigned char)c[i + 1];
			ok = !(b == 0xE0 && b1 < 0xA0) &&
			     !(b == 0xED && b1 >= 0xA0); /* surrogates */
		}
		if (ok && len == 4) {
			unsigned char b1 = (unsigned char)c[i + 1];
			ok = b <= 0xF4 && !(b == 0xF0 && b1 < 0x90) &&
			     !(b == 0xF4 && b1 >= 0x90);
		}
		if (!ok) {
			c[i++] = '?';
			continue;
		}
		if (b == '\n' || b == '\r')
			c[i] = ' ';
		i += len;
	}
	return c;
}

static const char *status_reason(int code)
{
	switch (code) {
	case 400:
		return "BadRequest";
	case 403:
		return "Forbidden";
	case 413:
		return "RequestEntityTooLarge";
	case 500:
		return "InternalError";
	default:
		return NULL;
	}
}

static int enc_status(json_t *resp, const struct wh_response *r, cu_error *err)
{
	json_t *st = json_object();
	const char *reason = status_reason(r->code);
	char *msg = utf8_line(r->message != NULL ? r->message : "");
	int rc = CU_OK;

	if (st == NULL || msg == NULL ||
	    json_object_set_new(st, "code", json_integer(r->code)) != 0 ||
	    json_object_set_new(st, "message", json_string(msg)) != 0 ||
	    (reason != NULL &&
		json_object_set_new(st, "reason", json_string(reason)) != 0)) {
		json_decref(st);
		rc = cu_error_set(err, CU_ENOMEM, "webhook response: status");
	} else if (json_object_set_new(resp, "status", st) != 0) {
		/* set_new consumed st, on failure too */
		rc = cu_error_set(err, CU_ENOMEM, "webhook response: status");
	}
	cu_free(msg);
	return rc;
}

static int enc_patch(json_t *resp, const json_t *patch, cu_error *err)
{
	char *text = NULL, *b64 = NULL;
	size_t len = 0;
	int rc;

	if ((rc = dump(patch, &text, &len, err)) != CU_OK)
		return rc;
	b64 = api_base64_encode(text, len);
	cu_free(text);
	if (b64 == NULL)
		return cu_error_set(err, CU_ENOMEM, "webhook response: patch");
	if (json_object_set_new(resp, "patchType", json_string("JSONPatch")) !=
		0 ||
	    json_object_set_new(resp, "patch", json_string(b64)) != 0)
		rc = cu_error_set(err, CU_ENOMEM, "webhook response: patch");
	cu_free(b64);
	return rc;
}

int wh_response_encode(const char *uid, const struct wh_response *r, char **out,
    size_t *out_len, cu_error *err)
{
	json_t *doc = NULL, *resp;
	int rc = CU_OK;

	if (out == NULL || r == NULL)
		return cu_error_set(err, CU_EINVAL, "webhook response: NULL");
	*out = NULL;
	if (!r->allowed && r->code < 400)
		return cu_error_set(err, CU_EINVAL,
		    "webhook response: denial with status code %d", r->code);
	if (r->patch != NULL && !json_is_array(r->patch))
		return cu_error_set(
		    err, CU_EINVAL, "webhook response: patch must be an array");
	resp = json_object();
	doc = json_pack("{s:s, s:s, s:o}", "apiVersion", WH_API_VERSION, "kind",
	    WH_KIND, "response", resp);
	if (resp == NULL || doc == NULL ||
	    json_object_set_new(
		resp, "uid", json_string(uid != NULL ? uid : "")) != 0 ||
	    json_object_set_new(resp, "allowed", json_boolean(r->allowed)) !=
		0) {
		rc = cu_error_set(err, CU_ENOMEM, "webhook response: encode");
		goto out;
	}
	if (!r->allowed)
		rc = enc_status(resp, r, err);
	if (rc == CU_OK && r->warnings != NULL &&
	    json_array_size(r->warnings) > 0 &&
	    json_object_set(resp, "warnings", r->warnings) != 0)
		rc = cu_error_set(err, CU_ENOMEM, "webhook response: warnings");
	if (rc == CU_OK && r->allowed && r->patch != NULL &&
	    json_array_size(r->patch) > 0)
		rc = enc_patch(resp, r->patch, err);
	if (rc == CU_OK)
		rc = dump(doc, out, out_len, err);
out:
	json_decref(doc);
	return rc;
}

int wh_http_status(int rc)
{
	switch (rc) {
	case CU_OK:
		return 200;
	case CU_ETOOBIG:
		return 413;
	case CU_ENOMEM:
		return 500;
	default:
		return 400;
	}
}

/* ---- dispatch -------------------------------------------------------- */

static bool is(const char *a, const char *b)
{
	return strcmp(a, b) == 0;
}

/* Step 2: the object must be an object of the request's kind. */
static int check_object(const json_t *o, const char *field,
    const struct wh_request *req, cu_error *err)
{
	const json_t *av, *k;
	char want[256], q[WH_QUOTE_MAX];

	if (o == NULL)
		return CU_OK;
	av = json_object_get(o, "apiVersion");
	k = json_object_get(o, "kind");
	if (req->kind.group[0] != '\0')
		snprintf(want, sizeof(want), "%s/%s", req->kind.group,
		    req->kind.version);
	else
		snprintf(want, sizeof(want), "%s", req->kind.version);
	if (av != NULL && !json_is_null(av)) {
		if (!json_is_string(av))
			return cu_error_set(err, CU_EPARSE,
			    "%s.apiVersion: Invalid type: expected string, got "
			    "%s",
			    field, api_json_type_name(av, false));
		if (!is(json_string_value(av), want))
			return cu_error_set(err, CU_EPARSE,
			    "%s.apiVersion: Invalid value: %s: must be "
			    "\"%.128s\" "
			    "(request.kind)",
			    field, wh__quote(q, json_string_value(av)), want);
	}
	if (k != NULL && !json_is_null(k)) {
		if (!json_is_string(k))
			return cu_error_set(err, CU_EPARSE,
			    "%s.kind: Invalid type: expected string, got %s",
			    field, api_json_type_name(k, false));
		if (!is(json_string_value(k), req->kind.kind))
			return cu_error_set(err, CU_EPARSE,
			    "%s.kind: Invalid value: %s: must be \"%.128s\" "
			    "(request.kind)",
			    field, wh__quote(q, json_string_value(k)),
			    req->kind.kind);
	}
	return CU_OK;
}

static int dispatch(struct wh_ctx *c, cu_error *err)
{
	const struct wh_request *req = c->req;
	char gv[256];
	bool job;

	if (req->kind.group[0] != '\0')
		snprintf(gv, sizeof(gv), "%s/%s", req->kind.group,
		    req->kind.version);
	else
		snprintf(gv, sizeof(gv), "%s", req->kind.version);
	job = ns_gate_kind_of(gv, req->kind.kind) != NS_GATE_KIND_OTHER;
	bool kueue = is(req->kind.group, "kueue.x-k8s.io");
	bool deploy =
	    is(req->kind.group, "apps") && is(req->kind.kind, "Deployment");
	bool serving = wh__is_serving(req);
	char q[WH_QUOTE_MAX];
	int rc;

	/* 1. nothing to decide */
	if (req->operation != WH_OP_CREATE && req->operation != WH_OP_UPDATE)
		return CU_OK;
	/* Of the subresources, Kueue validates workloads/status (the whole
	 * object, as an update of the main resource). */
	if ((req->sub_resource[0] != '\0' &&
		!(kueue && is(req->kind.kind, "Workload") &&
		    is(req->sub_resource, "status"))) ||
	    (!job && !kueue && !deploy && !serving))
		return CU_OK;
	if (req->dry_run && c->mode == WH_MUTATE)
		return CU_OK;
	if (kueue && !is(req->kind.version, "v1beta2"))
		return cu_error_set(err, CU_EPARSE,
		    "request.kind.version: Unsupported value: %s: supported "
		    "values: \"v1beta2\"",
		    wh__quote(q, req->kind.version));
	/* 2. the objects */
	if ((rc = check_object(req->object, "object", req, err)) != CU_OK ||
	    (rc = check_object(req->old_object, "oldObject", req, err)) !=
		CU_OK)
		return rc;
	if (job)
		return wh__jobs(c, err);
	if (deploy)
		return wh__deployment(c, err);
	if (serving)
		return wh__serving(c, err);
	return wh__kueue(c, req->kind.kind, err);
}

int wh_handle(const struct wh_options *opt, enum wh_mode mode,
    const struct wh_request *req, struct wh_response *out, cu_error *err)
{
	struct wh_ctx c;
	cu_error local;
	int rc;

	if (out == NULL)
		return cu_error_set(err, CU_EINVAL, "webhook: NULL response");
	memset(out, 0, sizeof(*out));
	out->allowed = true;
	if (opt == NULL || req == NULL || req->uid == NULL) {
		out->allowed = false;
		out->code = 500;
		out->message = cu_strdup("webhook: no options or request");
		return cu_error_set(err, CU_EINVAL, "webhook: NULL argument");
	}
	c.opt = opt;
	c.req = req;
	c.mode = mode;
	c.out = out;
	cu_error_clear(&local);
	rc = dispatch(&c, &local);
	if (rc == CU_OK) {
		if (mode == WH_VALIDATE || !out->allowed) {
			json_decref(out->patch);
			out->patch = NULL;
		}
		return CU_OK;
	}
	json_decref(out->patch);
	out->patch = NULL;
	out->allowed = false;
	out->message = cu_strdup(local.msg[0] ? local.msg : cu_err_desc(rc));
	if (rc == CU_EPARSE)
		out->code = 400;
	else if (rc == CU_EDENIED || rc == CU_EINVAL)
		out->code = 403;
	else
		out->code = 500;
	if (out->code != 500)
		return CU_OK;
	if (err != NULL)
		*err = local;
	return rc;
}

/* Best effort: request.uid of a body that did not decode, or "". */
static char *salvage_uid(const void *body, size_t len)
{
	json_t *doc;
	const json_t *uid;
	char *s;

	if (body == NULL || len > WH_MAX_BODY)
		return cu_strdup("");
	if (api_json_loadb(&doc, body, len, 0, NULL) != CU_OK)
		return cu_strdup("");
	uid = json_object_get(json_object_get(doc, "request"), "uid");
	s = cu_strdup(json_is_string(uid) ? json_string_value(uid) : "");
	json_decref(doc);
	return s;
}

int wh_serve(const struct wh_options *opt, enum wh_mode mode, const void *body,
    size_t len, int *http_status, char **out, size_t *out_len, cu_error *err)
{
	struct wh_request req;
	struct wh_response resp;
	cu_error local;
	char *uid = NULL;
	int rc, status;

	*out = NULL;
	cu_error_clear(&local);
	memset(&resp, 0, sizeof(resp));
	rc = wh_request_decode(&req, body, len, &local);
	if (rc != CU_OK) {
		status = wh_http_status(rc);
		uid = salvage_uid(body, len);
		resp.code = status;
		resp.message = cu_strdup(local.msg);
		if (uid == NULL || resp.message == NULL) {
			rc = cu_error_set(
			    err, CU_ENOMEM, "webhook: %s", local.msg);
			goto out;
		}
		if (err != NULL)
			*err = local;
	} else {
		status = 200;
		rc = wh_handle(opt, mode, &req, &resp, &local);
		if (rc != CU_OK && err != NULL)
			*err = local;
		if (resp.message == NULL && !resp.allowed) {
			rc = cu_error_set(
			    err, CU_ENOMEM, "webhook: %s", local.msg);
			goto out;
		}
	}
	rc = wh_response_encode(
	    uid != NULL ? uid : req.uid, &resp, out, out_len, &local);
	if (rc != CU_OK) {
		cu_error_set(err, rc, "%s", local.msg);
		goto out;
	}
	*http_status = status;
out:
	if (rc != CU_OK)
		*http_status = 500;
	cu_free(uid);
	wh_response_dispose(&resp);
	wh_request_dispose(&req);
	return rc == CU_OK ? CU_OK : CU_ENOMEM;
}
