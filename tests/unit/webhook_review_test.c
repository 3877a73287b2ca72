/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/webhook_review_test.c - webhook/webhook.h: the
 * AdmissionReview v1 codec (decode errors naming the field, the size cap,
 * the response with a base64 patch that decodes back), the Job/JobSet
 * mutating webhook (suspend patch that applies cleanly, default LocalQueue
 * label, nothing for unmanaged namespaces or children of managed parents,
 * DELETE and dryRun), the Job/JobSet validating rules, one table row per
 * Kueue-kind rule (each fails without its rule), and root-cause-first
 * ordering where two rules fail at once.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "api/json.h"
#include "webhook/webhook.h"
#include "api/patch.h"

/* ---- the world the callbacks see ----------------------------------- */

struct world {
	bool reserved, admitted; /* the job's Workload */
	bool fail_ns;		 /* namespace_get fails */
	int wl_calls;
};

static struct world W;
static api_selector SEL;
static struct ns_gate_config CFG;
static struct wh_options OPT;

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
	if (W.fail_ns)
		return cu_error_set(err, CU_EIO, "namespace cache not synced");
	if (strcmp(name, "gone") == 0)
		return cu_error_set(err, CU_ENOTFOUND, "namespace gone");
	out->name = name;
	out->found = strcmp(name, "team-a") == 0 || strcmp(name, "test") == 0;
	if (strcmp(name, "team-a") == 0) {
		out->get = kv_get;
		out->payload = (void *)(uintptr_t)TEAM_A;
	}
	return CU_OK;
}

/* JobSet "js" is queued (managed), "js-free" is not. */
static int owner_lookup(const struct ns_gate_owner *ref, const char *ns,
    struct ns_gate_object *out, void *payload, cu_error *err)
{
	(void)ns;
	(void)payload;
	(void)err;
	if (strcmp(ref->name, "js") != 0 && strcmp(ref->name, "js-free") != 0)
		return CU_ENOTFOUND;
	memset(out, 0, sizeof(*out));
	out->kind = NS_GATE_KIND_JOBSET;
	out->name = ref->name;
	out->uid = ref->uid;
	out->queue_name = strcmp(ref->name, "js") == 0 ? "main" : NULL;
	return CU_OK;
}

/* Both team-a and test have a LocalQueue "default". */
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
	(void)payload;
	(void)err;
	cr_assert_str_eq(job->namespace_, "team-a");
	W.wl_calls++;
	out->quota_reserved = W.reserved;
	out->admitted = W.admitted;
	return CU_OK;
}

static void setup(void)
{
	cu_error err;

	memset(&W, 0, sizeof(W));
	cr_assert_eq(ns_selector_parse(&SEL, "managed=true", &err), CU_OK);
	memset(&CFG, 0, sizeof(CFG));
	CFG.job_enabled = true;
	CFG.jobset_enabled = true;
	CFG.ns_selector = &SEL;
	CFG.own_namespace = "cueue-system";
	memset(&OPT, 0, sizeof(OPT));
	OPT.gate = &CFG;
	OPT.namespace_get = ns_get;
	OPT.owner_lookup = owner_lookup;
	OPT.local_queue_exists = lq_exists;
	OPT.workload_state = wl_state;
	OPT.own_username = "system:serviceaccount:cueue-system:cueue";
}

static void teardown(void)
{
	api_selector_dispose(&SEL);
}

TestSuite(webhook, .init = setup, .fini = teardown);

/* ---- helpers -------------------------------------------------------- */

/* JSON written with single quotes, for readable literals [owned:
 * cu_free]. */
static char *dq(const char *s)
{
	char *c = cu_strdup(s), *p;

	cr_assert_not_null(c);
	for (p = c; *p; p++)
		if (*p == '\'')
			*p = '"';
	return c;
}

static json_t *parse(const char *single_quoted)
{
	char *t = dq(single_quoted);
	json_error_t jerr;
	json_t *v = json_loads(t, JSON_DECODE_ANY, &jerr);

	cr_assert_not_null(v, "bad test JSON %s: %s", t, jerr.text);
	cu_free(t);
	return v;
}

struct rv {
	const char *op;
	const char *gvk; /* "batch/v1/Job", "v1/Namespace" */
	const char *ns;
	const char *obj; /* single-quoted JSON or NULL */
	const char *old;
	bool dry;
	const char *user;
	const char *sub; /* subResource, NULL = main resource */
};

/* An AdmissionReview body [owned: cu_free]. */
static char *review(const struct rv *r)
{
	char group[64] = "", version[64], kind[64];
	char *obj = dq(r->obj ? r->obj : "null");
	char *old = dq(r->old ? r->old : "null");
	char *body;
	const char *s1 = strchr(r->gvk, '/'), *s2 = strrchr(r->gvk, '/');

	if (s1 != s2)
		snprintf(
		    group, sizeof(group), "%.*s", (int)(s1 - r->gvk), r->gvk);
	snprintf(version, sizeof(version), "%.*s",
	    (int)(s2 - (s1 != s2 ? s1 + 1 : r->gvk)),
	    s1 != s2 ? s1 + 1 : r->gvk);
	snprintf(kind, sizeof(kind), "%s", s2 + 1);
	body = cu_asprintf(
	    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":"
	    "\"AdmissionReview\",\"request\":{\"uid\":\"uid-42\","
	    "\"kind\":{\"group\":\"%s\",\"version\":\"%s\",\"kind\":\"%s\"},"
	    "\"resource\":{\"group\":\"%s\",\"version\":\"%s\","
	    "\"resource\":\"things\"},\"subResource\":\"%s\","
	    "\"namespace\":\"%s\","
	    "\"operation\":\"%s\",\"userInfo\":{\"username\":\"%s\"},"
	    "\"dryRun\":%s,\"object\":%s,\"oldObject\":%s}}",
	    group, version, kind, group, version, r->sub ? r->sub : "",
	    r->ns ? r->ns : "", r->op, r->user ? r->user : "alice",
	    r->dry ? "true" : "false", obj, old);
	cu_free(obj);
	cu_free(old);
	cr_assert_not_null(body);
	return body;
}

/* Decode and handle; returns the handler's code. */
static int run(enum wh_mode mode, const struct rv *r, struct wh_response *resp)
{
	struct wh_request req;
	char *body = review(r);
	cu_error err;
	int rc;

	rc = wh_request_decode(&req, body, strlen(body), &err);
	cr_assert_eq(rc, CU_OK, "decode: %s", err.msg);
	rc = wh_handle(&OPT, mode, &req, resp, &err);
	wh_request_dispose(&req);
	cu_free(body);
	return rc;
}

static void expect_allowed_nopatch(enum wh_mode mode, const struct rv *r)
{
	struct wh_response resp;

	cr_assert_eq(run(mode, r, &resp), CU_OK);
	cr_assert(resp.allowed, "denied: %s", resp.message);
	cr_assert(resp.patch == NULL || json_array_size(resp.patch) == 0,
	    "unexpected patch");
	wh_response_dispose(&resp);
}

/* Denied with code; message equal to want (or containing it when
 * substring). */
static void expect_denied(enum wh_mode mode, const struct rv *r, int code,
    const char *want, bool substring)
{
	struct wh_response resp;

	cr_assert_eq(run(mode, r, &resp), CU_OK);
	cr_assert(!resp.allowed, "allowed, wanted: %s", want);
	cr_assert_eq(resp.code, code, "code %d, want %d (%s)", resp.code, code,
	    resp.message);
	cr_assert_null(resp.patch);
	cr_assert_not_null(resp.message);
	if (substring)
		cr_assert(strstr(resp.message, want) != NULL,
		    "message %s\n want %s", resp.message, want);
	else
		cr_assert_str_eq(resp.message, want);
	wh_response_dispose(&resp);
}

/* The mutated object: r->obj with the answer's patch applied
 * [owned: json_decref]; asserts an allowed answer with a patch. */
static json_t *mutated(const struct rv *r, json_t **patch_out)
{
	struct wh_response resp;
	json_t *doc = parse(r->obj), *out = NULL;
	cu_error err;

	cr_assert_eq(run(WH_MUTATE, r, &resp), CU_OK);
	cr_assert(resp.allowed, "denied: %s", resp.message);
	cr_assert_not_null(resp.patch, "no patch");
	cr_assert_eq(api_json_patch_apply(&out, doc, resp.patch, &err), CU_OK,
	    "patch does not apply: %s", err.msg);
	if (patch_out != NULL)
		*patch_out = json_incref(resp.patch);
	json_decref(doc);
	wh_response_dispose(&resp);
	return out;
}

static const json_t *at(const json_t *doc, const char *a, const char *b)
{
	return json_object_get(json_object_get(doc, a), b);
}

#define JOB_META(extra)                                                        \
	"'apiVersion':'batch/v1','kind':'Job','metadata':{'name':'j',"         \
	"'namespace':'team-a','uid':'uid-j'" extra "}"
#define QLABEL(q) ",'labels':{'kueue.x-k8s.io/queue-name':'" q "'}"
#define OWNED_BY(n)                                                            \
	",'ownerReferences':[{'apiVersion':'jobset.x-k8s.io/v1alpha2',"        \
	"'kind':'JobSet','name':'" n "','uid':'uid-" n "','controller':true}]"

/* ---- AdmissionReview decode ----------------------------------------- */

Test(webhook, decode_all_fields)
{
	const char *body =
	    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":"
	    "\"AdmissionReview\",\"request\":{\"uid\":\"705ab4f5\","
	    "\"kind\":{\"group\":\"batch\",\"version\":\"v1\",\"kind\":"
	    "\"Job\"},\"resource\":{\"group\":\"batch\",\"version\":\"v1\","
	    "\"resource\":\"jobs\"},\"subResource\":\"status\",\"name\":"
	    "\"j\",\"namespace\":\"ns\",\"operation\":\"UPDATE\","
	    "\"userInfo\":{\"username\":\"bob\",\"groups\":[\"g\"]},"
	    "\"object\":{\"a\":1},\"oldObject\":{\"a\":2},\"dryRun\":true,"
	    "\"options\":{}}}";
	struct wh_request r;
	cu_error err;

	cr_assert_eq(wh_request_decode(&r, body, strlen(body), &err), CU_OK,
	    "%s", err.msg);
	cr_assert_str_eq(r.uid, "705ab4f5");
	cr_assert_str_eq(r.kind.group, "batch");
	cr_assert_str_eq(r.kind.version, "v1");
	cr_assert_str_eq(r.kind.kind, "Job");
	cr_assert_str_eq(r.resource.resource, "jobs");
	cr_assert_str_eq(r.sub_resource, "status");
	cr_assert_str_eq(r.name, "j");
	cr_assert_str_eq(r.namespace_, "ns");
	cr_assert_eq(r.operation, WH_OP_UPDATE);
	cr_assert_str_eq(wh_op_name(r.operation), "UPDATE");
	cr_assert_eq(json_integer_value(json_object_get(r.object, "a")), 1);
	cr_assert_eq(json_integer_value(json_object_get(r.old_object, "a")), 2);
	cr_assert(r.dry_run);
	cr_assert_str_eq(r.username, "bob");
	wh_request_dispose(&r);
	wh_request_dispose(&r); /* idempotent */
}

Test(webhook, decode_delete_with_null_object)
{
	const char *body =
	    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":"
	    "\"AdmissionReview\",\"request\":{\"uid\":\"u\",\"kind\":{"
	    "\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},\"resource\":"
	    "{\"version\":\"v1\",\"resource\":\"pods\"},\"operation\":"
	    "\"DELETE\",\"object\":null,\"oldObject\":{}}}";
	struct wh_request r;
	cu_error err;

	cr_assert_eq(wh_request_decode(&r, body, strlen(body), &err), CU_OK,
	    "%s", err.msg);
	cr_assert_null(r.object);
	cr_assert_not_null(r.old_object);
	cr_assert_str_eq(r.kind.group, "");
	cr_assert_str_eq(r.sub_resource, "");
	cr_assert_str_eq(r.username, "");
	cr_assert(!r.dry_run);
	wh_request_dispose(&r);
}

struct decode_case {
	const char *body; /* single-quoted JSON or raw bytes */
	int code;
	const char *msg; /* exact message, or a prefix ending in '*' */
};

#define REQ(x)                                                                 \
	"{'apiVersion':'admission.k8s.io/v1','kind':'AdmissionReview',"        \
	"'request':" x "}"
#define GOOD_HEAD                                                              \
	"'kind':{'group':'batch','version':'v1','kind':'Job'},"                \
	"'resource':{'group':'batch','version':'v1','resource':'jobs'}"

static const struct decode_case decode_cases[] = {
    {REQ("{" GOOD_HEAD ",'operation':'DELETE'}"), CU_EINVAL,
	"request.uid: Required value"},
    {REQ("{'uid':''," GOOD_HEAD ",'operation':'DELETE'}"), CU_EINVAL,
	"request.uid: Required value"},
    {REQ("{'uid':7," GOOD_HEAD ",'operation':'DELETE'}"), CU_EPARSE,
	"request.uid: Invalid type: expected string, got number"},
    {"{'apiVersion':'admission.k8s.io/v1beta1','kind':'AdmissionReview',"
     "'request':{}}",
	CU_EINVAL,
	"apiVersion: Unsupported value: \"admission.k8s.io/v1beta1\": "
	"supported values: \"admission.k8s.io/v1\""},
    {"{'kind':'AdmissionReview','request':{}}", CU_EINVAL,
	"apiVersion: Required value"},
    {"{'apiVersion':'admission.k8s.io/v1','kind':'Review','request':{}}",
	CU_EINVAL,
	"kind: Unsupported value: \"Review\": supported values: "
	"\"AdmissionReview\""},
    {REQ("'just a string'"), CU_EPARSE,
	"request: Invalid type: expected object, got string"},
    {REQ("null"), CU_EINVAL, "request: Required value"},
    {"{'apiVersion':'admission.k8s.io/v1','kind':'AdmissionReview'}", CU_EINVAL,
	"request: Required value"},
    {"[1,2]", CU_EPARSE,
	"request body: Invalid type: expected object, got array"},
    {"\x01\x02garbage\xff", CU_EPARSE, "request body: invalid JSON: *"},
    {"", CU_EPARSE, "request body: invalid JSON: *"},
    {"{'a':1,'a':2}", CU_EPARSE, "request body: invalid JSON: *"},
    {REQ("{'uid':'u','resource':{'version':'v1','resource':'jobs'},"
	 "'operation':'DELETE'}"),
	CU_EINVAL, "request.kind: Required value"},
    {REQ("{'uid':'u','kind':{'group':'batch','version':'v1'},"
	 "'resource':{'version':'v1','resource':'jobs'},"
	 "'operation':'DELETE'}"),
	CU_EINVAL, "request.kind.kind: Required value"},
    {REQ("{'uid':'u','kind':{'version':'v1','kind':'Job'},"
	 "'resource':{'version':'v1'},'operation':'DELETE'}"),
	CU_EINVAL, "request.resource.resource: Required value"},
    {REQ("{'uid':'u'," GOOD_HEAD "}"), CU_EINVAL,
	"request.operation: Required value"},
    {REQ("{'uid':'u'," GOOD_HEAD ",'operation':'PATCH'}"), CU_EINVAL,
	"request.operation: Unsupported value: \"PATCH\": supported values: "
	"\"CREATE\", \"UPDATE\", \"DELETE\", \"CONNECT\""},
    {REQ("{'uid':'u'," GOOD_HEAD ",'operation':'CREATE'}"), CU_EINVAL,
	"request.object: Required value"},
    {REQ("{'uid':'u'," GOOD_HEAD ",'operation':'CREATE','object':[]}"),
	CU_EPARSE, "request.object: Invalid type: expected object, got array"},
    {REQ("{'uid':'u'," GOOD_HEAD ",'operation':'UPDATE','object':{}}"),
	CU_EINVAL, "request.oldObject: Required value"},
    {REQ("{'uid':'u'," GOOD_HEAD ",'operation':'DELETE','dryRun':'yes'}"),
	CU_EPARSE,
	"request.dryRun: Invalid type: expected boolean, got string"},
    {REQ("{'uid':'u'," GOOD_HEAD ",'operation':'DELETE','userInfo':"
	 "{'username':1}}"),
	CU_EPARSE,
	"request.userInfo.username: Invalid type: expected string, got "
	"number"},
};

Test(webhook, decode_errors_name_the_field)
{
	size_t i;

	for (i = 0; i < sizeof(decode_cases) / sizeof(decode_cases[0]); i++) {
		const struct decode_case *c = &decode_cases[i];
		char *body = dq(c->body);
		struct wh_request r;
		cu_error err;
		int rc;
		size_t n;

		memset(&r, 0x5a, sizeof(r));
		rc = wh_request_decode(&r, body, strlen(body), &err);
		cr_assert_eq(
		    rc, c->code, "case %zu: rc %d (%s)", i, rc, err.msg);
		cr_assert_eq(err.code, c->code, "case %zu", i);
		n = strlen(c->msg);
		if (n > 0 && c->msg[n - 1] == '*')
			cr_assert(strncmp(err.msg, c->msg, n - 1) == 0,
			    "case %zu: %s", i, err.msg);
		else
			cr_assert_str_eq(err.msg, c->msg, "case %zu", i);
		cr_assert_null(r.doc, "case %zu: left a document", i);
		cr_assert_eq(wh_http_status(rc), 400, "case %zu", i);
		wh_request_dispose(&r);
		cu_free(body);
	}
}

Test(webhook, decode_oversize_is_distinct)
{
	size_t n = WH_MAX_BODY + 1;
	char *big = cu_malloc(n);
	struct wh_request r;
	cu_error err;
	int rc;

	cr_assert_not_null(big);
	memset(big, ' ', n);
	rc = wh_request_decode(&r, big, n, &err);
	cr_assert_eq(rc, CU_ETOOBIG);
	cr_assert(strncmp(err.msg, "request body: Too long:", 23) == 0, "%s",
	    err.msg);
	cr_assert_eq(wh_http_status(rc), 413);
	/* exactly at the cap is parsed (and is only whitespace) */
	rc = wh_request_decode(&r, big, n - 1, &err);
	cr_assert_eq(rc, CU_EPARSE);
	cr_assert_eq(wh_http_status(rc), 400);
	cr_assert_eq(wh_http_status(CU_OK), 200);
	cr_assert_eq(wh_http_status(CU_ENOMEM), 500);
	cu_free(big);
}

/* ---- response encode ------------------------------------------------ */

/* Decode standard base64 [owned: cu_free], *n bytes. */
static char *unbase64(const char *s, size_t *n)
{
	char *out = NULL;

	cr_assert_eq(
	    api_base64_decode(s, &out, n, NULL), CU_OK, "bad base64 %s", s);
	return out;
}

Test(webhook, encode_allowed_patch_decodes_back)
{
	struct wh_response r = {.allowed = true};
	json_t *doc, *resp, *back;
	const char *p64;
	char *text, *raw;
	size_t len, n;
	cu_error err;

	r.patch = parse("[{'op':'add','path':'/spec/suspend','value':true},"
			"{'op':'add','path':'/metadata/labels/"
			"kueue.x-k8s.io~1queue-name','value':'default'}]");
	r.warnings = parse("['deprecated thing']");
	cr_assert_eq(wh_response_encode("uid-1", &r, &text, &len, &err), CU_OK,
	    "%s", err.msg);
	cr_assert_eq(strlen(text), len);
	doc = json_loads(text, 0, NULL);
	cr_assert_not_null(doc);
	cr_assert_str_eq(json_string_value(json_object_get(doc, "apiVersion")),
	    "admission.k8s.io/v1");
	cr_assert_str_eq(
	    json_string_value(json_object_get(doc, "kind")), "AdmissionReview");
	resp = json_object_get(doc, "response");
	cr_assert_str_eq(
	    json_string_value(json_object_get(resp, "uid")), "uid-1");
	cr_assert(json_is_true(json_object_get(resp, "allowed")));
	cr_assert_null(json_object_get(resp, "status"));
	cr_assert_str_eq(
	    json_string_value(json_object_get(resp, "patchType")), "JSONPatch");
	cr_assert_str_eq(json_string_value(json_array_get(
			     json_object_get(resp, "warnings"), 0)),
	    "deprecated thing");
	p64 = json_string_value(json_object_get(resp, "patch"));
	cr_assert_not_null(p64);
	raw = unbase64(p64, &n);
	back = json_loadb(raw, n, 0, NULL);
	cr_assert_not_null(back, "patch is not JSON: %s", raw);
	cr_assert(json_equal(back, r.patch));
	json_decref(back);
	cu_free(raw);
	json_decref(doc);
	cu_free(text);
	wh_response_dispose(&r);
}

Test(webhook, encode_denied_and_plain_allowed)
{
	struct wh_response r = {.allowed = false, .code = 403};
	json_t *doc, *resp, *st;
	char *text;
	cu_error err;

	r.message = cu_strdup("spec.x: Invalid value: \"a\nb\": bad");
	/* a patch on a denial is never sent */
	r.patch = parse("[{'op':'add','path':'/a','value':1}]");
	cr_assert_eq(wh_response_encode("u", &r, &text, NULL, &err), CU_OK);
	doc = json_loads(text, 0, NULL);
	resp = json_object_get(doc, "response");
	cr_assert(json_is_false(json_object_get(resp, "allowed")));
	cr_assert_null(json_object_get(resp, "patch"));
	cr_assert_null(json_object_get(resp, "patchType"));
	cr_assert_null(json_object_get(resp, "warnings"));
	st = json_object_get(resp, "status");
	cr_assert_eq(json_integer_value(json_object_get(st, "code")), 403);
	cr_assert_str_eq(
	    json_string_value(json_object_get(st, "reason")), "Forbidden");
	cr_assert_str_eq(json_string_value(json_object_get(st, "message")),
	    "spec.x: Invalid value: \"a b\": bad");
	json_decref(doc);
	cu_free(text);

	/* allowed with an empty patch: no patch fields at all */
	json_decref(r.patch);
	r.patch = json_array();
	r.allowed = true;
	cr_assert_eq(wh_response_encode(NULL, &r, &text, NULL, &err), CU_OK);
	doc = json_loads(text, 0, NULL);
	resp = json_object_get(doc, "response");
	cr_assert_str_eq(json_string_value(json_object_get(resp, "uid")), "");
	cr_assert_null(json_object_get(resp, "patchType"));
	cr_assert_null(json_object_get(resp, "patch"));
	cr_assert_null(json_object_get(resp, "status"));
	json_decref(doc);
	cu_free(text);

	/* a denial needs a failure code; a patch must be an array */
	r.allowed = false;
	r.code = 200;
	cr_assert_eq(wh_response_encode("u", &r, &text, NULL, &err), CU_EINVAL);
	r.allowed = true;
	json_decref(r.patch);
	r.patch = json_object();
	cr_assert_eq(wh_response_encode("u", &r, &text, NULL, &err), CU_EINVAL);
	wh_response_dispose(&r);
}

Test(webhook, serve_statuses_and_uid_echo)
{
	struct rv rv = {"CREATE", "batch/v1/Job", "team-a",
	    "{" JOB_META(QLABEL("main")) ",'spec':{}}", NULL, false, NULL,
	    NULL};
	char *body = review(&rv), *out;
	const char *garbage = "{nope";
	const char *nouid =
	    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":"
	    "\"AdmissionReview\",\"request\":{\"uid\":\"u-9\"}}";
	json_t *doc;
	size_t len;
	int status;
	cu_error err;

	cr_assert_eq(wh_serve(&OPT, WH_MUTATE, body, strlen(body), &status,
			 &out, &len, &err),
	    CU_OK);
	cr_assert_eq(status, 200);
	doc = json_loads(out, 0, NULL);
	cr_assert_str_eq(json_string_value(json_object_get(
			     json_object_get(doc, "response"), "uid")),
	    "uid-42");
	cr_assert_str_eq(json_string_value(json_object_get(
			     json_object_get(doc, "response"), "patchType")),
	    "JSONPatch");
	json_decref(doc);
	cu_free(out);

	/* the same review on the validating path: no patch fields */
	cr_assert_eq(wh_serve(&OPT, WH_VALIDATE, body, strlen(body), &status,
			 &out, NULL, &err),
	    CU_OK);
	cr_assert_eq(status, 200);
	cr_assert_null(strstr(out, "patch"), "%s", out);
	cu_free(out);
	cu_free(body);

	cr_assert_eq(wh_serve(&OPT, WH_MUTATE, garbage, strlen(garbage),
			 &status, &out, NULL, &err),
	    CU_OK);
	cr_assert_eq(status, 400);
	doc = json_loads(out, 0, NULL);
	cr_assert_eq(
	    json_integer_value(json_object_get(
		json_object_get(json_object_get(doc, "response"), "status"),
		"code")),
	    400);
	json_decref(doc);
	cu_free(out);

	/* undecodable but with a readable uid: echoed */
	cr_assert_eq(wh_serve(&OPT, WH_MUTATE, nouid, strlen(nouid), &status,
			 &out, NULL, &err),
	    CU_OK);
	cr_assert_eq(status, 400);
	cr_assert_not_null(strstr(out, "\"uid\":\"u-9\""), "%s", out);
	cr_assert_not_null(strstr(out, "request.kind: Required value"));
	cu_free(out);

	body = cu_malloc(WH_MAX_BODY + 10);
	memset(body, '{', WH_MAX_BODY + 10);
	cr_assert_eq(wh_serve(&OPT, WH_MUTATE, body, WH_MAX_BODY + 10, &status,
			 &out, NULL, &err),
	    CU_OK);
	cr_assert_eq(status, 413);
	cr_assert_not_null(strstr(out, "\"code\":413"), "%s", out);
	cu_free(out);
	cu_free(body);
}

Test(webhook, routes)
{
	enum wh_mode m;
	size_t i;

	cr_assert_eq(wh_mode_for_path("/mutate-batch-v1-job", &m), CU_OK);
	cr_assert_eq(m, WH_MUTATE);
	cr_assert_eq(wh_mode_for_path(
			 "/validate-kueue-x-k8s-io-v1beta2-clusterqueue", &m),
	    CU_OK);
	cr_assert_eq(m, WH_VALIDATE);
	cr_assert_eq(wh_mode_for_path("/nope", &m), CU_ENOTFOUND);
	for (i = 0; wh_routes[i].path != NULL; i++)
		cr_assert_eq(wh_routes[i].mode,
		    strncmp(wh_routes[i].path, "/mutate-", 8) == 0
			? WH_MUTATE
			: WH_VALIDATE);
}

/* ---- mutating Job / JobSet ------------------------------------------ */

Test(webhook, managed_job_gets_suspend_patch_that_applies)
{
	static const char *const specs[] = {
	    "{" JOB_META(QLABEL("main")) ",'spec':{'parallelism':2}}",
	    "{" JOB_META(QLABEL("main")) ",'spec':{'suspend':false}}",
	    "{" JOB_META(QLABEL("main")) "}",
	};
	static const char *const ops[] = {"add", "replace", "add"};
	size_t i;

	for (i = 0; i < 3; i++) {
		struct rv rv = {"CREATE", "batch/v1/Job", "team-a", specs[i],
		    NULL, false, NULL, NULL};
		json_t *patch = NULL, *out = mutated(&rv, &patch);

		cr_assert(
		    json_is_true(at(out, "spec", "suspend")), "case %zu", i);
		cr_assert_eq(json_array_size(patch), 1, "case %zu", i);
		cr_assert_str_eq(json_string_value(json_object_get(
				     json_array_get(patch, 0), "op")),
		    ops[i], "case %zu", i);
		/* the label is untouched */
		cr_assert_str_eq(json_string_value(json_object_get(
				     at(out, "metadata", "labels"),
				     "kueue.x-k8s.io/queue-name")),
		    "main");
		json_decref(patch);
		json_decref(out);
	}
}

Test(webhook, already_suspended_job_needs_no_patch)
{
	struct rv rv = {"CREATE", "batch/v1/Job", "team-a",
	    "{" JOB_META(QLABEL("main")) ",'spec':{'suspend':true}}", NULL,
	    false, NULL, NULL};

	expect_allowed_nopatch(WH_MUTATE, &rv);
}

Test(webhook, managed_jobset_gets_suspend_patch)
{
	struct rv rv = {"CREATE", "jobset.x-k8s.io/v1alpha2/JobSet", "team-a",
	    "{'apiVersion':'jobset.x-k8s.io/v1alpha2','kind':'JobSet',"
	    "'metadata':{'name':'js2'" QLABEL(
		"main") "},"
			"'spec':{'replicatedJobs':[]}}",
	    NULL, false, NULL, NULL};
	json_t *out = mutated(&rv, NULL);

	cr_assert(json_is_true(at(out, "spec", "suspend")));
	cr_assert_eq(json_array_size(at(out, "spec", "replicatedJobs")), 0);
	json_decref(out);
}

/* The Kubeflow kinds suspend through spec.runPolicy.suspend: added
 * where absent (with the objects above it), replaced where false; a
 * disabled framework or an excluded namespace gets nothing. */
Test(webhook, kubeflow_jobs_suspended_through_run_policy)
{
	static const char *const specs[] = {
	    "{'pytorchReplicaSpecs':{}}",
	    "{'runPolicy':{'cleanPodPolicy':'None'}}",
	    "{'runPolicy':{'suspend':false}}",
	};
	static const char *const ops[] = {"add", "add", "replace"};
	char obj[512];
	size_t i;

	CFG.enabled[NS_GATE_KIND_PYTORCHJOB] = true;
	for (i = 0; i < 3; i++) {
		struct rv rv = {"CREATE", "kubeflow.org/v1/PyTorchJob",
		    "team-a", obj, NULL, false, NULL, NULL};
		json_t *patch = NULL, *out;

		snprintf(obj, sizeof(obj),
		    "{'apiVersion':'kubeflow.org/v1','kind':'PyTorchJob',"
		    "'metadata':{'name':'pt'" QLABEL("main") "},'spec':%s}",
		    specs[i]);
		out = mutated(&rv, &patch);
		cr_assert(json_is_true(json_object_get(
			      at(out, "spec", "runPolicy"), "suspend")),
		    "case %zu", i);
		cr_assert_null(at(out, "spec", "suspend"), "case %zu", i);
		cr_assert_str_eq(json_string_value(json_object_get(
				     json_array_get(patch, 0), "op")),
		    ops[i], "case %zu", i);
		json_decref(patch);
		json_decref(out);
	}
	{
		struct rv rv = {"CREATE", "kubeflow.org/v2beta1/MPIJob",
		    "team-a",
		    "{'apiVersion':'kubeflow.org/v2beta1','kind':'MPIJob',"
		    "'metadata':{'name':'m'" QLABEL(
			"main") "},'spec':{'runPolicy':{'suspend':false}}}",
		    NULL, false, NULL, NULL};

		/* mpijob not enabled: untouched */
		expect_allowed_nopatch(WH_MUTATE, &rv);
		CFG.enabled[NS_GATE_KIND_MPIJOB] = true;
		json_decref(mutated(&rv, NULL));
		/* only admission resumes it */
		rv.op = "UPDATE";
		rv.old = "{'apiVersion':'kubeflow.org/v2beta1','kind':"
			 "'MPIJob','metadata':{'name':'m'" QLABEL(
			     "main") "},'spec':{'runPolicy':{'suspend':true}}}";
		expect_denied(WH_VALIDATE, &rv, 403, "spec.suspend", true);
		/* an excluded namespace: nothing */
		rv.op = "CREATE";
		rv.old = NULL;
		rv.ns = "test";
		expect_allowed_nopatch(WH_MUTATE, &rv);
	}
}

/* A managed Pod is created with the kueue.x-k8s.io/admission scheduling
 * gate (added to the gates it has, once), never a spec.suspend, and
 * with Kueue's managed label and pod finalizer (none when a managed
 * parent suspends it); a
 * disabled framework or an excluded namespace gets nothing. */
Test(webhook, managed_pod_gets_admission_gate)
{
	static const char *const specs[] = {
	    "{'containers':[]}",
	    "{'schedulingGates':[{'name':'x.io/g'}],'containers':[]}",
	};
	static const size_t want[] = {1, 2};
	char obj[512];
	size_t i;
	struct rv rv = {
	    "CREATE", "v1/Pod", "team-a", obj, NULL, false, NULL, NULL};

	snprintf(obj, sizeof(obj),
	    "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'" QLABEL(
		"main") "},'spec':%s}",
	    specs[0]);
	expect_allowed_nopatch(WH_MUTATE, &rv); /* pod not enabled */
	CFG.enabled[NS_GATE_KIND_POD] = true;
	for (i = 0; i < 2; i++) {
		json_t *out;
		const json_t *gates;

		snprintf(obj, sizeof(obj),
		    "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'"
		    "p'" QLABEL("main") "},'spec':%s}",
		    specs[i]);
		out = mutated(&rv, NULL);
		gates = at(out, "spec", "schedulingGates");
		cr_assert_eq(json_array_size(gates), want[i], "case %zu", i);
		cr_assert_str_eq(
		    json_string_value(json_object_get(
			json_array_get(gates, want[i] - 1), "name")),
		    "kueue.x-k8s.io/admission", "case %zu", i);
		cr_assert_null(at(out, "spec", "suspend"), "case %zu", i);
		/* Kueue's mark of a managed Pod: label and finalizer */
		cr_assert_str_eq(api_json_str(at(out, "metadata", "labels"),
				     "kueue.x-k8s.io/managed"),
		    "true", "case %zu", i);
		cr_assert_str_eq(api_json_str(at(out, "metadata", "labels"),
				     "kueue.x-k8s.io/queue-name"),
		    "main", "case %zu", i);
		cr_assert_eq(
		    json_array_size(at(out, "metadata", "finalizers")), 1);
		cr_assert_str_eq(json_string_value(json_array_get(
				     at(out, "metadata", "finalizers"), 0)),
		    "kueue.x-k8s.io/managed", "case %zu", i);
		json_decref(out);
	}
	/* already gated, labelled and finalized: nothing to add */
	snprintf(obj, sizeof(obj),
	    "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p',"
	    "'finalizers':['x.io/f','kueue.x-k8s.io/managed'],'labels':{"
	    "'kueue.x-k8s.io/queue-name':'main','kueue.x-k8s.io/managed':"
	    "'true'}},'spec':{'schedulingGates':[{'name':"
	    "'kueue.x-k8s.io/admission'}],'containers':[]}}");
	expect_allowed_nopatch(WH_MUTATE, &rv);
	/* another finalizer kept, ours added after it; a wrong managed
	 * value replaced */
	snprintf(obj, sizeof(obj),
	    "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p',"
	    "'finalizers':['x.io/f'],'labels':{"
	    "'kueue.x-k8s.io/queue-name':'main','kueue.x-k8s.io/managed':"
	    "'no'}},'spec':{'containers':[]}}");
	{
		json_t *out = mutated(&rv, NULL);
		const json_t *f = at(out, "metadata", "finalizers");

		cr_assert_eq(json_array_size(f), 2);
		cr_assert_str_eq(json_string_value(json_array_get(f, 1)),
		    "kueue.x-k8s.io/managed");
		cr_assert_str_eq(api_json_str(at(out, "metadata", "labels"),
				     "kueue.x-k8s.io/managed"),
		    "true");
		json_decref(out);
	}
	/* suspended by a managed parent: gated and no finalizer (Kueue) */
	snprintf(obj, sizeof(obj),
	    "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p',"
	    "'annotations':{'kueue.x-k8s.io/pod-suspending-parent':"
	    "'deployment'}" QLABEL("main") "},'spec':{'containers':[]}}");
	{
		json_t *out = mutated(&rv, NULL);

		cr_assert_null(at(out, "metadata", "finalizers"));
		cr_assert_eq(
		    json_array_size(at(out, "spec", "schedulingGates")), 1);
		json_decref(out);
	}
	/* an excluded namespace: nothing */
	rv.ns = "test";
	expect_allowed_nopatch(WH_MUTATE, &rv);
}

/* An elastic Job gets Kueue's elastic-job scheduling gate on its pod
 * template (next to other gates, once); without the annotation, or with
 * ElasticJobsViaWorkloadSlices off, none. */
Test(webhook, elastic_job_template_gets_elastic_gate)
{
	static const struct {
		const char *ann, *tpl_spec;
		bool gate_off;
		size_t want;
	} rows[] = {
	    {"'true'", "{'containers':[]}", false, 1},
	    {"'true'", "{'schedulingGates':[{'name':'x.io/g'}]}", false, 2},
	    {"'true'",
		"{'schedulingGates':[{'name':'kueue.x-k8s.io/elastic-job'}]}",
		false, 1},
	    {"'false'", "{'containers':[]}", false, 0},
	    {"'true'", "{'containers':[]}", true, 0},
	};
	char obj[640];
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct rv rv = {"CREATE", "batch/v1/Job", "team-a", obj, NULL,
		    false, NULL, NULL};
		json_t *out;
		const json_t *gates;

		snprintf(obj, sizeof(obj),
		    "{" JOB_META(
			QLABEL("main") ",'annotations':{'kueue.x-k8s."
				       "io/elastic-job':%s}") ",'spec':"
							      "{'template':{'"
							      "spec':%s}}}",
		    rows[i].ann, rows[i].tpl_spec);
		OPT.no_elastic_jobs = rows[i].gate_off;
		out = mutated(&rv, NULL);
		OPT.no_elastic_jobs = false;
		gates =
		    at(at(out, "spec", "template"), "spec", "schedulingGates");
		cr_assert_eq(
		    json_array_size(gates), rows[i].want, "row %zu", i);
		if (rows[i].want > 0)
			cr_assert_str_eq(
			    json_string_value(json_object_get(
				json_array_get(gates, rows[i].want - 1),
				"name")),
			    "kueue.x-k8s.io/elastic-job", "row %zu", i);
		cr_assert(json_is_true(at(out, "spec", "suspend")));
		json_decref(out);
	}
}

/* A Deployment whose Pods cueue manages gets its queue-name (and
 * priority-class) label, the managed label and Kueue's
 * pod-suspending-parent annotation on its pod template; without the deployment
 * framework, or in an excluded namespace, nothing. */
Test(webhook, deployment_queue_label_to_template)
{
	struct rv rv = {"CREATE", "apps/v1/Deployment", "team-a",
	    "{'apiVersion':'apps/v1','kind':'Deployment','metadata':{'name':"
	    "'web','labels':{'kueue.x-k8s.io/queue-name':'main',"
	    "'kueue.x-k8s.io/priority-class':'high'}},'spec':{'template':{"
	    "'metadata':{'labels':{'app':'web'}},'spec':{}}}}",
	    NULL, false, NULL, NULL};
	const json_t *labels;
	json_t *out;

	expect_allowed_nopatch(WH_MUTATE, &rv); /* not enabled */
	OPT.deployment = true;
	expect_allowed_nopatch(WH_MUTATE, &rv); /* pod not enabled */
	CFG.enabled[NS_GATE_KIND_POD] = true;
	out = mutated(&rv, NULL);
	labels = at(at(out, "spec", "template"), "metadata", "labels");
	cr_assert_str_eq(
	    api_json_str(labels, "kueue.x-k8s.io/queue-name"), "main");
	cr_assert_str_eq(
	    api_json_str(labels, "kueue.x-k8s.io/priority-class"), "high");
	cr_assert_str_eq(api_json_str(labels, "app"), "web");
	/* as Kueue's: its Pods are suspended by their parent (no pod
	 * finalizer) and marked managed */
	cr_assert_str_eq(
	    api_json_str(labels, "kueue.x-k8s.io/managed"), "true");
	cr_assert_str_eq(api_json_str(at(at(out, "spec", "template"),
					  "metadata", "annotations"),
			     "kueue.x-k8s.io/pod-suspending-parent"),
	    "deployment");
	json_decref(out);
	rv.ns = "test";
	expect_allowed_nopatch(WH_MUTATE, &rv);
	OPT.deployment = false;
}

Test(webhook, unmanaged_namespace_gets_nothing)
{
	struct rv rv = {"CREATE", "batch/v1/Job", "test",
	    "{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':'j',"
	    "'namespace':'test'" QLABEL("main") "},'spec':{}}",
	    NULL, false, NULL, NULL};

	expect_allowed_nopatch(WH_MUTATE, &rv);
	/* also with manageJobsWithoutQueueName, also without a label even
	 * though "test" has a LocalQueue "default" (Kueue #13374) */
	CFG.manage_jobs_without_queue_name = true;
	expect_allowed_nopatch(WH_MUTATE, &rv);
	rv.obj = "{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':"
		 "'j','namespace':'test'},'spec':{}}";
	expect_allowed_nopatch(WH_MUTATE, &rv);
	/* not ours, so not denied even when malformed */
	rv.obj = "{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':"
		 "'j','namespace':'test'},'spec':{'suspend':'no'}}";
	expect_allowed_nopatch(WH_MUTATE, &rv);
	expect_allowed_nopatch(WH_VALIDATE, &rv);
	/* a namespace the cache does not know */
	rv.ns = "nowhere";
	expect_allowed_nopatch(WH_MUTATE, &rv);
	rv.ns = "gone"; /* the callback's CU_ENOTFOUND: the same */
	expect_allowed_nopatch(WH_MUTATE, &rv);
}

Test(webhook, child_of_managed_parent_gets_nothing)
{
	struct rv rv = {"CREATE", "batch/v1/Job", "team-a",
	    "{" JOB_META(OWNED_BY("js")) ",'spec':{'suspend':false}}", NULL,
	    false, NULL, NULL};

	expect_allowed_nopatch(WH_MUTATE, &rv);
	/* nor the default LocalQueue, with manageJobsWithoutQueueName */
	CFG.manage_jobs_without_queue_name = true;
	expect_allowed_nopatch(WH_MUTATE, &rv);
	/* nor a child that carries a queue name itself */
	rv.obj = "{" JOB_META(QLABEL("main") OWNED_BY("js")) ",'spec':{}}";
	expect_allowed_nopatch(WH_MUTATE, &rv);
	/* nor a child of an unmanaged JobSet (gate: hands off) */
	CFG.manage_jobs_without_queue_name = false;
	rv.obj = "{" JOB_META(QLABEL("main") OWNED_BY("js-free")) ",'spec':{}}";
	expect_allowed_nopatch(WH_MUTATE, &rv);
}

Test(webhook, default_local_queue_injected_when_it_exists)
{
	struct rv rv = {"CREATE", "batch/v1/Job", "team-a",
	    "{" JOB_META("") ",'spec':{}}", NULL, false, NULL, NULL};
	json_t *patch = NULL, *out = mutated(&rv, &patch);

	cr_assert_str_eq(
	    json_string_value(json_object_get(
		at(out, "metadata", "labels"), "kueue.x-k8s.io/queue-name")),
	    "default");
	cr_assert(json_is_true(at(out, "spec", "suspend")));
	cr_assert_str_eq(json_string_value(
			     json_object_get(json_array_get(patch, 0), "path")),
	    "/metadata/labels");
	json_decref(patch);
	json_decref(out);

	/* existing labels: one key added through an escaped pointer */
	rv.obj = "{" JOB_META(",'labels':{'app':'x'}") ",'spec':{}}";
	out = mutated(&rv, &patch);
	cr_assert_str_eq(json_string_value(
			     json_object_get(json_array_get(patch, 0), "path")),
	    "/metadata/labels/kueue.x-k8s.io~1queue-name");
	cr_assert_str_eq(json_string_value(json_object_get(
			     at(out, "metadata", "labels"), "app")),
	    "x");
	cr_assert_str_eq(
	    json_string_value(json_object_get(
		at(out, "metadata", "labels"), "kueue.x-k8s.io/queue-name")),
	    "default");
	json_decref(patch);
	json_decref(out);
}

Test(webhook, no_default_local_queue_no_injection)
{
	struct rv rv = {"CREATE", "batch/v1/Job", "team-a",
	    "{" JOB_META("") ",'spec':{}}", NULL, false, NULL, NULL};
	json_t *patch = NULL, *out;

	OPT.local_queue_exists = NULL;
	expect_allowed_nopatch(WH_MUTATE, &rv);
	/* with manageJobsWithoutQueueName: suspended, but no label */
	CFG.manage_jobs_without_queue_name = true;
	out = mutated(&rv, &patch);
	cr_assert_eq(json_array_size(patch), 1);
	cr_assert_null(at(out, "metadata", "labels"));
	cr_assert(json_is_true(at(out, "spec", "suspend")));
	json_decref(patch);
	json_decref(out);
}

Test(webhook, delete_dryrun_and_update_get_nothing)
{
	struct rv rv = {"DELETE", "batch/v1/Job", "team-a", NULL,
	    "{" JOB_META(QLABEL("main")) ",'spec':{}}", false, NULL, NULL};

	expect_allowed_nopatch(WH_MUTATE, &rv);
	expect_allowed_nopatch(WH_VALIDATE, &rv);
	rv.op = "CREATE";
	rv.obj = rv.old;
	rv.old = NULL;
	rv.dry = true;
	expect_allowed_nopatch(WH_MUTATE, &rv);
	rv.dry = false;
	rv.op = "UPDATE";
	rv.old = rv.obj;
	expect_allowed_nopatch(WH_MUTATE, &rv);
	cr_assert_eq(W.wl_calls, 0);
}

Test(webhook, unknown_kinds_and_subresources_pass)
{
	struct rv rv = {"CREATE", "v1/Pod", "team-a",
	    "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'}}", NULL,
	    false, NULL, NULL};

	expect_allowed_nopatch(WH_MUTATE, &rv);
	expect_allowed_nopatch(WH_VALIDATE, &rv);
	/* a status write of a managed job is not validated */
	rv.op = "UPDATE";
	rv.gvk = "batch/v1/Job";
	rv.obj = "{" JOB_META(QLABEL("a")) ",'spec':{'suspend':false}}";
	rv.old = "{" JOB_META(QLABEL("a")) ",'spec':{'suspend':true}}";
	rv.sub = "status";
	expect_allowed_nopatch(WH_VALIDATE, &rv);
	rv.sub = NULL;
	expect_denied(WH_VALIDATE, &rv, 403, "spec.suspend", true);
}

Test(webhook, callback_failure_is_an_internal_error)
{
	struct rv rv = {"CREATE", "batch/v1/Job", "team-a",
	    "{" JOB_META(QLABEL("main")) ",'spec':{}}", NULL, false, NULL,
	    NULL};
	struct wh_response resp;

	W.fail_ns = true;
	cr_assert_eq(run(WH_MUTATE, &rv, &resp), CU_EIO);
	cr_assert(!resp.allowed);
	cr_assert_eq(resp.code, 500);
	cr_assert_str_eq(resp.message, "namespace cache not synced");
	cr_assert_null(resp.patch);
	wh_response_dispose(&resp);
}

Test(webhook, malformed_job_is_a_bad_request)
{
	struct rv rv = {"CREATE", "batch/v1/Job", "team-a",
	    "{" JOB_META(QLABEL("main")) ",'spec':{'suspend':'no'}}", NULL,
	    false, NULL, NULL};

	expect_denied(WH_MUTATE, &rv, 400,
	    "spec.suspend: Invalid type: expected boolean, got string", false);
	rv.obj = "{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':"
		 "'j','labels':[]}}";
	expect_denied(WH_MUTATE, &rv, 400, "metadata.labels", true);
	rv.obj = "{'apiVersion':'batch/v2','kind':'Job','metadata':{}}";
	expect_denied(WH_MUTATE, &rv, 400,
	    "object.apiVersion: Invalid value: \"batch/v2\": must be "
	    "\"batch/v1\" (request.kind)",
	    false);
}

/* ---- validating Job / JobSet ---------------------------------------- */

#define JOB_Q_SUSP(q, s) "{" JOB_META(QLABEL(q)) ",'spec':{'suspend':" s "}}"

Test(webhook, queue_name_immutable_while_quota_reserved)
{
	struct rv rv = {"UPDATE", "batch/v1/Job", "team-a",
	    JOB_Q_SUSP("b", "true"), JOB_Q_SUSP("a", "true"), false, NULL,
	    NULL};

	W.reserved = true;
	expect_denied(WH_VALIDATE, &rv, 403,
	    "metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: \"b\": "
	    "field is immutable",
	    false);
	/* removing the label is a change too */
	rv.obj = "{" JOB_META("") ",'spec':{'suspend':true}}";
	expect_denied(WH_VALIDATE, &rv, 403,
	    "metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: \"\": "
	    "field is immutable",
	    false);
	/* without a reservation it may change */
	W.reserved = false;
	rv.obj = JOB_Q_SUSP("b", "true");
	expect_allowed_nopatch(WH_VALIDATE, &rv);
	/* an unchanged label never asks */
	W.wl_calls = 0;
	rv.obj = JOB_Q_SUSP("a", "true");
	expect_allowed_nopatch(WH_VALIDATE, &rv);
	cr_assert_eq(W.wl_calls, 0);
}

Test(webhook, unsuspend_forbidden_until_admitted)
{
	struct rv rv = {"UPDATE", "batch/v1/Job", "team-a",
	    JOB_Q_SUSP("a", "false"), JOB_Q_SUSP("a", "true"), false, NULL,
	    NULL};
	const char *msg =
	    "spec.suspend: Forbidden: cannot be set to false while the job's "
	    "Workload is not admitted; cueue resumes the job when its "
	    "Workload is admitted";

	expect_denied(WH_VALIDATE, &rv, 403, msg, false);
	/* suspend removed = false */
	rv.obj = "{" JOB_META(QLABEL("a")) ",'spec':{}}";
	expect_denied(WH_VALIDATE, &rv, 403, msg, false);
	/* JobSet alike */
	rv.gvk = "jobset.x-k8s.io/v1alpha2/JobSet";
	rv.obj = "{'metadata':{'name':'s'" QLABEL("a") "},'spec':{}}";
	rv.old =
	    "{'metadata':{'name':'s'" QLABEL("a") "},'spec':{'suspend':true}}";
	expect_denied(WH_VALIDATE, &rv, 403, msg, false);
	/* cueue itself may (its cache may lag its own admission) */
	rv.user = "system:serviceaccount:cueue-system:cueue";
	expect_allowed_nopatch(WH_VALIDATE, &rv);
	rv.user = NULL;
	/* once admitted, anyone may */
	W.admitted = true;
	expect_allowed_nopatch(WH_VALIDATE, &rv);
}

Test(webhook, unmanaged_jobs_are_never_denied)
{
	struct rv rv = {"UPDATE", "batch/v1/Job", "test",
	    "{'metadata':{'name':'j'" QLABEL("b") "},'spec':{'suspend':false}}",
	    "{'metadata':{'name':'j'" QLABEL("a") "},'spec':{'suspend':true}}",
	    false, NULL, NULL};

	W.reserved = true;
	expect_allowed_nopatch(WH_VALIDATE, &rv);
	/* a child of a managed JobSet: its controller unsuspends it */
	rv.ns = "team-a";
	rv.obj = "{" JOB_META(OWNED_BY("js")) ",'spec':{'suspend':false}}";
	rv.old = "{" JOB_META(OWNED_BY("js")) ",'spec':{'suspend':true}}";
	expect_allowed_nopatch(WH_VALIDATE, &rv);
	/* no queue name and no manageJobsWithoutQueueName: not ours */
	rv.obj = "{" JOB_META("") ",'spec':{'suspend':false}}";
	rv.old = "{" JOB_META("") ",'spec':{'suspend':true}}";
	expect_allowed_nopatch(WH_VALIDATE, &rv);
	cr_assert_eq(W.wl_calls, 0);
}

Test(webhook, relabel_and_unsuspend_at_once_is_still_checked)
{
	/* the old object was ours: dropping the label while unsuspending
	 * does not escape the queue */
	struct rv rv = {"UPDATE", "batch/v1/Job", "team-a",
	    "{" JOB_META("") ",'spec':{'suspend':false}}",
	    JOB_Q_SUSP("a", "true"), false, NULL, NULL};

	expect_denied(WH_VALIDATE, &rv, 403, "spec.suspend: Forbidden", true);
}

Test(webhook, job_rules_root_cause_first)
{
	/* queue changed under a reservation AND unsuspended while not
	 * admitted: the queue is reported */
	struct rv rv = {"UPDATE", "batch/v1/Job", "team-a",
	    JOB_Q_SUSP("b", "false"), JOB_Q_SUSP("a", "true"), false, NULL,
	    NULL};

	W.reserved = true;
	W.admitted = false;
	expect_denied(WH_VALIDATE, &rv, 403,
	    "metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: \"b\": "
	    "field is immutable",
	    false);
	cr_assert_eq(W.wl_calls, 1);
	/* a bad label value comes before both */
	rv.obj = JOB_Q_SUSP("B_ad", "false");
	expect_denied(WH_VALIDATE, &rv, 403,
	    "metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: "
	    "\"B_ad\": a lowercase RFC 1123 subdomain",
	    true);
}

Test(webhook, queue_name_format_on_create)
{
	struct rv rv = {"CREATE", "batch/v1/Job", "team-a",
	    JOB_Q_SUSP("Not_A_Name", "true"), NULL, false, NULL, NULL};

	expect_denied(WH_VALIDATE, &rv, 403,
	    "metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: "
	    "\"Not_A_Name\": a lowercase RFC 1123 subdomain must consist of",
	    true);
	rv.obj = JOB_Q_SUSP("team.a-1", "true");
	expect_allowed_nopatch(WH_VALIDATE, &rv);
}

/* ---- Kueue kinds ---------------------------------------------------- */

#define CQ(spec)                                                               \
	"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ClusterQueue',"        \
	"'metadata':{'name':'cq'},'spec':" spec "}"
#define RG(cov, fl) "{'coveredResources':" cov ",'flavors':" fl "}"
#define FL(name, res) "{'name':'" name "','resources':" res "}"
#define R(name, q) "{'name':'" name "','nominalQuota':'" q "'}"
#define RL(name, q, extra)                                                     \
	"{'name':'" name "','nominalQuota':'" q "'," extra "}"
#define GOOD_RG                                                                \
	RG("['cpu','memory']",                                                 \
	    "[" FL("on-demand",                                                \
		"[" R("cpu", "10") "," R("memory", "10Gi") "]") "," FL("spot", \
		"[" R("cpu", "5") "," R("memory", "5Gi") "]") "]")

struct kcase {
	const char *name;
	const char *gvk_kind; /* "ClusterQueue" */
	const char *op;
	const char *obj;
	const char *old;
	int code;	  /* 0 = allowed */
	const char *want; /* substring of the message */
};

#define CREATE_CQ(n, spec, code, want)                                         \
	{                                                                      \
		n, "ClusterQueue", "CREATE", CQ(spec), NULL, code, want        \
	}

static void run_kcase(const struct kcase *k)
{
	char gvk[128];
	struct rv rv = {k->op, gvk, "", k->obj, k->old, false, NULL, NULL};
	struct wh_response resp;

	snprintf(gvk, sizeof(gvk), "kueue.x-k8s.io/v1beta2/%s", k->gvk_kind);
	cr_assert_eq(run(WH_VALIDATE, &rv, &resp), CU_OK, "%s", k->name);
	if (k->code == 0) {
		cr_assert(
		    resp.allowed, "%s: denied: %s", k->name, resp.message);
	} else {
		cr_assert(!resp.allowed, "%s: allowed", k->name);
		cr_assert_eq(resp.code, k->code, "%s: code %d (%s)", k->name,
		    resp.code, resp.message);
		cr_assert(strstr(resp.message, k->want) != NULL,
		    "%s:\n got  %s\n want %s", k->name, resp.message, k->want);
	}
	cr_assert_null(resp.patch);
	wh_response_dispose(&resp);
}

static const struct kcase cq_cases[] = {
    CREATE_CQ("valid", "{'resourceGroups':[" GOOD_RG "]}", 0, NULL),
    CREATE_CQ("valid with cohort and limits",
	"{'cohortName':'team','resourceGroups':[" RG(
	    "['cpu']", "[" FL("f", "[" RL("cpu", "10",
				       "'borrowingLimit':'2',"
				       "'lendingLimit':'3'") "]") "]") "]}",
	0, NULL),
    CREATE_CQ("empty spec", "{}", 0, NULL),
    CREATE_CQ("spec not an object", "[]", 400,
	"spec: Invalid type: expected object, got array"),
    CREATE_CQ("resourceGroups not an array", "{'resourceGroups':{}}", 400,
	"spec.resourceGroups: Invalid type: expected array, got object"),
    CREATE_CQ("group not an object", "{'resourceGroups':['x']}", 400,
	"spec.resourceGroups[0]: Invalid type: expected object, got string"),
    CREATE_CQ("coveredResources missing", "{'resourceGroups':[{'flavors':[]}]}",
	403, "spec.resourceGroups[0].coveredResources: Required value"),
    CREATE_CQ("coveredResources empty",
	"{'resourceGroups':[" RG("[]", "[]") "]}", 403,
	"spec.resourceGroups[0].coveredResources: Invalid value: 0: must have "
	"at least 1 items"),
    CREATE_CQ("coveredResources invalid name",
	"{'resourceGroups':[" RG("['cpu','bad name']",
	    "[" FL("f", "[" R("cpu", "1") "," R("bad name", "1") "]") "]") "]}",
	403,
	"spec.resourceGroups[0].coveredResources[1]: Invalid value: "
	"\"bad name\""),
    CREATE_CQ("coveredResources duplicate across groups",
	"{'resourceGroups':[" RG("['cpu']",
	    "[" FL("a", "[" R("cpu", "1") "]") "]") "," RG("['memory','cpu']",
	    "[" FL("b", "[" R("memory", "1") "," R("cpu", "1") "]") "]") "]}",
	403,
	"spec.resourceGroups[1].coveredResources[1]: Duplicate value: "
	"\"cpu\""),
    CREATE_CQ("flavors missing",
	"{'resourceGroups':[{'coveredResources':['cpu']}]}", 403,
	"spec.resourceGroups[0].flavors: Required value"),
    CREATE_CQ("flavor resource count (CRD rule)",
	"{'resourceGroups':[" RG(
	    "['cpu','memory']", "[" FL("f", "[" R("cpu", "1") "]") "]") "]}",
	403,
	"flavors must have the same number of resources as the "
	"coveredResources"),
    CREATE_CQ("flavor name duplicate across groups",
	"{'resourceGroups':[" RG("['cpu']",
	    "[" FL("spot", "[" R("cpu", "1") "]") "]") "," RG("['memory']",
	    "[" FL("on-demand", "[" R("memory", "1") "]") "," FL(
		"spot", "[" R("memory", "1") "]") "]") "]}",
	403,
	"spec.resourceGroups[1].flavors[1].name: Duplicate value: \"spot\""),
    CREATE_CQ("flavor name not a DNS subdomain",
	"{'resourceGroups':[" RG(
	    "['cpu']", "[" FL("Spot", "[" R("cpu", "1") "]") "]") "]}",
	403, "spec.resourceGroups[0].flavors[0].name: Invalid value: \"Spot\""),
    CREATE_CQ("resource order differs from coveredResources",
	"{'resourceGroups':[" RG("['cpu','memory']",
	    "[" FL("f", "[" R("memory", "1") "," R("cpu", "1") "]") "]") "]}",
	403,
	"spec.resourceGroups[0].flavors[0].resources[0].name: Invalid value: "
	"\"memory\": must match the name in coveredResources"),
    CREATE_CQ("negative nominalQuota",
	"{'resourceGroups':[" RG(
	    "['cpu']", "[" FL("f", "[" R("cpu", "-1") "]") "]") "]}",
	403,
	"spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: Invalid "
	"value: \"-1\": must be greater than or equal to 0"),
    CREATE_CQ("borrowingLimit without cohort",
	"{'resourceGroups':[" RG("['cpu']",
	    "[" FL(
		"f", "[" RL("cpu", "1", "'borrowingLimit':'10'") "]") "]") "]}",
	403,
	"spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit: "
	"Invalid value: \"10\": must be nil when cohort is empty"),
    CREATE_CQ("lendingLimit without cohort",
	"{'resourceGroups':[" RG("['cpu']",
	    "[" FL("f", "[" RL("cpu", "1", "'lendingLimit':'1'") "]") "]") "]}",
	403,
	"spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: Invalid "
	"value: \"1\": must be nil when cohort is empty"),
    CREATE_CQ("negative borrowingLimit",
	"{'cohortName':'c','resourceGroups':[" RG("['cpu']",
	    "[" FL("f",
		"[" RL("cpu", "1", "'borrowingLimit':'-500m'") "]") "]") "]}",
	403,
	"borrowingLimit: Invalid value: \"-500m\": must be greater than "
	"or equal to 0"),
    CREATE_CQ("negative lendingLimit",
	"{'cohortName':'c','resourceGroups':[" RG("['cpu']",
	    "[" FL(
		"f", "[" RL("cpu", "1", "'lendingLimit':'-1'") "]") "]") "]}",
	403,
	"lendingLimit: Invalid value: \"-1\": must be greater than "
	"or equal to 0"),
    CREATE_CQ("lendingLimit above nominalQuota",
	"{'cohortName':'c','resourceGroups':[" RG("['cpu']",
	    "[" FL("f", "[" RL("cpu", "1", "'lendingLimit':'2'") "]") "]") "]}",
	403,
	"lendingLimit: Invalid value: \"2\": must be less than or equal "
	"to the nominalQuota"),
    CREATE_CQ("bad cohortName", "{'cohortName':'Team_A'}", 403,
	"spec.cohortName: Invalid value: \"Team_A\": a lowercase RFC 1123"),
    CREATE_CQ("nominalQuota wrong type",
	"{'resourceGroups':[" RG("['cpu']",
	    "[" FL("f", "[{'name':'cpu','nominalQuota':{}}]") "]") "]}",
	400, "nominalQuota"),
    CREATE_CQ("queueingStrategy enum (decode)", "{'queueingStrategy':'Random'}",
	403, "spec.queueingStrategy: Unsupported value: \"Random\""),
    CREATE_CQ("preemption rule",
	"{'preemption':{'reclaimWithinCohort':'Never','borrowWithinCohort':"
	"{'policy':'LowerPriority'}}}",
	403,
	"spec.preemption: Invalid value: \"object\": reclaimWithinCohort=Never "
	"and borrowWithinCohort.Policy!=Never"),
    CREATE_CQ("preemption rule with defaults",
	"{'preemption':{'borrowWithinCohort':{'policy':'LowerPriority'}}}", 403,
	"reclaimWithinCohort=Never"),
    CREATE_CQ("preemption ok",
	"{'preemption':{'reclaimWithinCohort':'Any','borrowWithinCohort':"
	"{'policy':'LowerPriority'}}}",
	0, NULL),
    CREATE_CQ("fungibility preference rule",
	"{'flavorFungibility':{'whenCanBorrow':'MayStopSearch',"
	"'preference':'PreemptionOverBorrowing'}}",
	403,
	"spec.flavorFungibility.preference: Invalid value: "
	"\"PreemptionOverBorrowing\": preference \"PreemptionOverBorrowing\" "
	"requires both whenCanBorrow and whenCanPreempt to be TryNextFlavor"),
    CREATE_CQ("fungibility preference ok",
	"{'flavorFungibility':{'whenCanBorrow':'TryNextFlavor',"
	"'whenCanPreempt':'TryNextFlavor','preference':"
	"'BorrowingOverPreemption'}}",
	0, NULL),
    CREATE_CQ("negative fair sharing weight", "{'fairSharing':{'weight':'-1'}}",
	403,
	"spec.fairSharing: Invalid value: \"-1\": must be greater than or "
	"equal to 0"),
    CREATE_CQ("onFlavors names an unknown flavor",
	"{'resourceGroups':[" GOOD_RG "],'admissionChecksStrategy':{"
	"'admissionChecks':[{'name':'ac','onFlavors':['spot','gpu']}]}}",
	403,
	"spec.admissionChecksStrategy.admissionChecks[0].onFlavors[1]: "
	"Unsupported value: \"gpu\": supported values: \"on-demand\", "
	"\"spot\""),
    /* root cause first: a group's coveredResources before the flavor
     * count rule and the flavor names that derive from them */
    CREATE_CQ("root cause: covered duplicate before flavor rules",
	"{'resourceGroups':[" RG("['cpu']",
	    "[" FL("spot", "[" R("cpu", "1") "]") "]") "," RG("['cpu']",
	    "[" FL("spot", "[" R("cpu", "1") "," R("cpu", "1") "]") "]") "]}",
	403,
	"spec.resourceGroups[1].coveredResources[0]: Duplicate value: "
	"\"cpu\""),
    CREATE_CQ("root cause: malformed before field rules",
	"{'cohortName':5,'resourceGroups':[" RG("['cpu']",
	    "[" FL(
		"f", "[" RL("cpu", "-1", "'lendingLimit':'9'") "]") "]") "]}",
	400, "spec.cohortName: Invalid type: expected string, got number"),
    CREATE_CQ("root cause: flavor name before its resources",
	"{'resourceGroups':[" RG(
	    "['cpu']", "[" FL("f", "[" R("cpu", "1") "]") "," FL(
			   "f", "[" R("cpu", "-1") "]") "]") "]}",
	403, "spec.resourceGroups[0].flavors[1].name: Duplicate value: \"f\""),
};

Test(webhook, cluster_queue_rules)
{
	size_t i;

	for (i = 0; i < sizeof(cq_cases) / sizeof(cq_cases[0]); i++)
		run_kcase(&cq_cases[i]);
}

Test(webhook, cluster_queue_size_limits)
{
	static const struct {
		const char *what;
		size_t groups, covered, flavors;
		const char *want;
	} t[] = {
	    {"groups", 17, 1, 1,
		"spec.resourceGroups: Too many: 17: must have at most 16 "
		"items"},
	    {"covered", 1, 65, 1,
		"spec.resourceGroups[0].coveredResources: Too many: 65: must "
		"have at most 64 items"},
	    {"flavors", 1, 1, 65,
		"spec.resourceGroups[0].flavors: Too many: 65: must have at "
		"most 64 items"},
	    {"pairs", 1, 64, 9,
		"spec.resourceGroups[0]: Invalid value: 576: number of "
		"flavor-resource combinations in a resourceGroup must be ≤ "
		"512, got 576"},
	    {"total flavors", 5, 1, 64,
		"spec.resourceGroups: Invalid value: 320: total number of "
		"flavors across all resourceGroups must be ≤ 256, got 320"},
	    {"total covered", 5, 64, 1,
		"spec.resourceGroups: Invalid value: 320: total number of "
		"covered resources across all resourceGroups must be ≤ 256, "
		"got 320"},
	    {"at the limits", 4, 64, 8, NULL},
	};
	size_t i, g, f, r;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		cu_buf b;
		char *obj;
		struct kcase k = {t[i].what, "ClusterQueue", "CREATE", NULL,
		    NULL, t[i].want ? 403 : 0, t[i].want};

		cu_buf_init(&b, 1 << 26);
		cr_assert_eq(
		    cu_buf_adds(&b, "{'metadata':{'name':'cq'},'spec':{"
				    "'resourceGroups':["),
		    CU_OK);
		for (g = 0; g < t[i].groups; g++) {
			cr_assert_eq(cu_buf_addf(&b, "%s{'coveredResources':[",
					 g ? "," : ""),
			    CU_OK);
			for (r = 0; r < t[i].covered; r++)
				cr_assert_eq(cu_buf_addf(&b, "%s'g%zu-r%zu'",
						 r ? "," : "", g, r),
				    CU_OK);
			cr_assert_eq(cu_buf_adds(&b, "],'flavors':["), CU_OK);
			for (f = 0; f < t[i].flavors; f++) {
				cr_assert_eq(cu_buf_addf(&b,
						 "%s{'name':'g%zu-f%zu',"
						 "'resources':[",
						 f ? "," : "", g, f),
				    CU_OK);
				for (r = 0; r < t[i].covered; r++)
					cr_assert_eq(
					    cu_buf_addf(&b,
						"%s{'name':'g%zu-r%zu',"
						"'nominalQuota':'1'}",
						r ? "," : "", g, r),
					    CU_OK);
				cr_assert_eq(cu_buf_adds(&b, "]}"), CU_OK);
			}
			cr_assert_eq(cu_buf_adds(&b, "]}"), CU_OK);
		}
		cr_assert_eq(cu_buf_adds(&b, "]}}"), CU_OK);
		obj = cu_buf_detach(&b, NULL);
		k.obj = obj;
		run_kcase(&k);
		cu_free(obj);
	}
}

#define COHORT(name, spec)                                                     \
	"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'Cohort','metadata':"   \
	"{'name':'" name "'},'spec':" spec "}"

static const struct kcase cohort_cases[] = {
    {"valid", "Cohort", "CREATE", COHORT("c", "{'parentName':'root'}"), NULL, 0,
	NULL},
    {"own parent", "Cohort", "CREATE", COHORT("c", "{'parentName':'c'}"), NULL,
	403,
	"spec.parentName: Invalid value: \"c\": must not be the Cohort's own "
	"name"},
    {"bad parent name", "Cohort", "CREATE", COHORT("c", "{'parentName':'-x'}"),
	NULL, 403, "spec.parentName: Invalid value: \"-x\""},
    {"limits need a parent", "Cohort", "CREATE",
	COHORT("c", "{'resourceGroups':[" RG("['cpu']",
			"[" FL("f", "[" RL("cpu", "1",
					"'borrowingLimit':'1'") "]") "]") "]}"),
	NULL, 403,
	"spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit: "
	"Invalid value: \"1\": must be nil when parent is empty"},
    {"lending above nominal is fine for a cohort", "Cohort", "UPDATE",
	COHORT("c", "{'parentName':'p','resourceGroups':[" RG("['cpu']",
			"[" FL("f", "[" RL("cpu", "1",
					"'lendingLimit':'5'") "]") "]") "]}"),
	COHORT("c", "{}"), 0, NULL},
    {"negative weight", "Cohort", "CREATE",
	COHORT("c", "{'fairSharing':{'weight':'-2'}}"), NULL, 403,
	"spec.fairSharing: Invalid value: \"-2\""},
    {"root cause: self parent before limits", "Cohort", "CREATE",
	COHORT("c", "{'parentName':'c','resourceGroups':[" RG("['cpu']",
			"[" FL("f", "[" RL("cpu", "-1",
					"'lendingLimit':'1'") "]") "]") "]}"),
	NULL, 403, "spec.parentName"},
};

Test(webhook, cohort_rules)
{
	size_t i;

	for (i = 0; i < sizeof(cohort_cases) / sizeof(cohort_cases[0]); i++)
		run_kcase(&cohort_cases[i]);
}

#define LQ(cq)                                                                 \
	"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'LocalQueue',"          \
	"'metadata':{'name':'main','namespace':'team-a'},'spec':{"             \
	"'clusterQueue':'" cq "'}}"

static const struct kcase lq_cases[] = {
    {"valid", "LocalQueue", "CREATE", LQ("cq"), NULL, 0, NULL},
    {"clusterQueue immutable", "LocalQueue", "UPDATE", LQ("other"), LQ("cq"),
	403, "spec.clusterQueue: Invalid value: \"other\": field is immutable"},
    {"same clusterQueue", "LocalQueue", "UPDATE",
	"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'LocalQueue',"
	"'metadata':{'name':'main','labels':{'x':'y'}},'spec':{"
	"'clusterQueue':'cq','stopPolicy':'Hold'}}",
	LQ("cq"), 0, NULL},
    {"clusterQueue set for the first time", "LocalQueue", "UPDATE", LQ("cq"),
	"{'metadata':{'name':'main'},'spec':{}}", 0, NULL},
    {"bad clusterQueue name", "LocalQueue", "CREATE", LQ("CQ!"), NULL, 403,
	"spec.clusterQueue: Invalid value: \"CQ!\""},
    {"stopPolicy enum", "LocalQueue", "CREATE",
	"{'metadata':{'name':'m'},'spec':{'stopPolicy':'Pause'}}", NULL, 403,
	"spec.stopPolicy: Unsupported value"},
    {"root cause: name before immutability", "LocalQueue", "UPDATE", LQ("CQ!"),
	LQ("cq"), 403,
	"spec.clusterQueue: Invalid value: \"CQ!\": a "
	"lowercase"},
};

Test(webhook, local_queue_rules)
{
	size_t i;

	for (i = 0; i < sizeof(lq_cases) / sizeof(lq_cases[0]); i++)
		run_kcase(&lq_cases[i]);
}

#define RF(spec)                                                               \
	"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ResourceFlavor',"      \
	"'metadata':{'name':'spot'},'spec':" spec "}"
#define NINE_LABELS                                                            \
	"{'a':'1','b':'1','c':'1','d':'1','e':'1','f':'1','g':'1','h':'1',"    \
	"'i':'1'}"
#define TAINT(k, e) "{'key':'" k "','value':'v','effect':'" e "'}"

static const struct kcase rf_cases[] = {
    {"valid", "ResourceFlavor", "CREATE",
	RF("{'nodeLabels':{'cloud.example.com/"
	   "pool':'spot'},'nodeTaints':[" TAINT("spot", "NoSchedule") "," TAINT(
	       "spot", "NoExecute") "],"
				    "'tolerations':[{'key':'spot','operator':'"
				    "Exists','effect':"
				    "'NoSchedule'},{'operator':'Exists'}]}"),
	NULL, 0, NULL},
    {"too many labels", "ResourceFlavor", "CREATE",
	RF("{'nodeLabels':" NINE_LABELS "}"), NULL, 403,
	"spec.nodeLabels: Too many: 9: must have at most 8 items"},
    {"too many taints", "ResourceFlavor", "CREATE",
	RF("{'nodeTaints':[" TAINT("a", "NoSchedule") "," TAINT(
	    "b", "NoSchedule") "," TAINT("c", "NoSchedule") "," TAINT("d",
	    "NoSchedule") "," TAINT("e", "NoSchedule") "," TAINT("f",
	    "NoSchedule") "," TAINT("g", "NoSchedule") "," TAINT("h",
	    "NoSchedule") "," TAINT("i", "NoSchedule") "]}"),
	NULL, 403, "spec.nodeTaints: Too many: 9: must have at most 8 items"},
    {"too many tolerations", "ResourceFlavor", "CREATE",
	RF("{'tolerations':[{'operator':'Exists'},{'operator':'Exists'},"
	   "{'operator':'Exists'},{'operator':'Exists'},{'operator':'Exists'},"
	   "{'operator':'Exists'},{'operator':'Exists'},{'operator':'Exists'},"
	   "{'operator':'Exists'}]}"),
	NULL, 403, "spec.tolerations: Too many: 9: must have at most 8 items"},
    {"taint effect", "ResourceFlavor", "CREATE",
	RF("{'nodeTaints':[" TAINT("a", "Sometimes") "]}"), NULL, 403,
	"spec.nodeTaints[0].effect: Unsupported value: \"Sometimes\""},
    {"taint effect required", "ResourceFlavor", "CREATE",
	RF("{'nodeTaints':[{'key':'a'}]}"), NULL, 403,
	"spec.nodeTaints[0].effect: Required value"},
    {"taint duplicate", "ResourceFlavor", "CREATE",
	RF("{'nodeTaints':[" TAINT("a", "NoSchedule") "," TAINT(
	    "a", "NoSchedule") "]}"),
	NULL, 403,
	"spec.nodeTaints[1]: Duplicate value: \"a:NoSchedule\": taints must "
	"be unique by key and effect pair"},
    {"taint key", "ResourceFlavor", "CREATE",
	RF("{'nodeTaints':[" TAINT("bad key", "NoSchedule") "]}"), NULL, 403,
	"spec.nodeTaints[0].key: Invalid value: \"bad key\""},
    {"label key", "ResourceFlavor", "CREATE",
	RF("{'nodeLabels':{'bad key':'x'}}"), NULL, 403,
	"spec.nodeLabels: Invalid value: \"bad key\""},
    {"label value", "ResourceFlavor", "CREATE",
	RF("{'nodeLabels':{'k':'bad value'}}"), NULL, 403,
	"spec.nodeLabels: Invalid value: \"bad value\""},
    {"toleration without key needs Exists", "ResourceFlavor", "CREATE",
	RF("{'tolerations':[{'value':'x'}]}"), NULL, 403,
	"spec.tolerations[0].operator: Invalid value: \"Equal\": operator "
	"must be Exists when 'key' is empty"},
    {"tolerationSeconds needs NoExecute", "ResourceFlavor", "CREATE",
	RF("{'tolerations':[{'key':'k','effect':'NoSchedule',"
	   "'tolerationSeconds':5}]}"),
	NULL, 403,
	"spec.tolerations[0].effect: Invalid value: \"NoSchedule\": effect "
	"must be 'NoExecute' when 'tolerationSeconds' is set"},
    {"Exists takes no value", "ResourceFlavor", "CREATE",
	RF("{'tolerations':[{'key':'k','operator':'Exists','value':'v'}]}"),
	NULL, 403,
	"spec.tolerations[0].value: Invalid value: \"v\": a value must be "
	"empty when 'operator' is 'Exists'"},
    {"toleration operator enum", "ResourceFlavor", "CREATE",
	RF("{'tolerations':[{'key':'k','operator':'Maybe'}]}"), NULL, 403,
	"spec.tolerations[0].operator: Unsupported value: \"Maybe\""},
    {"topology needs a label", "ResourceFlavor", "CREATE",
	RF("{'topologyName':'t'}"), NULL, 403,
	"spec.nodeLabels: Required value: at least one nodeLabel is required "
	"when topology is set"},
    {"topologyName immutable", "ResourceFlavor", "UPDATE",
	RF("{'nodeLabels':{'a':'b'},'topologyName':'t2'}"),
	RF("{'nodeLabels':{'a':'b'},'topologyName':'t1'}"), 403,
	"spec.topologyName: Invalid value: \"t2\": topologyName is immutable "
	"when topologyName is set"},
    {"topologyName may be set later", "ResourceFlavor", "UPDATE",
	RF("{'nodeLabels':{'a':'b'},'topologyName':'t2'}"),
	RF("{'nodeLabels':{'a':'b'}}"), 0, NULL},
    {"root cause: sizes before items", "ResourceFlavor", "CREATE",
	RF("{'nodeLabels':" NINE_LABELS ",'nodeTaints':[" TAINT(
	    "a", "NoSchedule") "," TAINT("a", "NoSchedule") "]}"),
	NULL, 403, "spec.nodeLabels: Too many"},
};

Test(webhook, resource_flavor_rules)
{
	size_t i;

	for (i = 0; i < sizeof(rf_cases) / sizeof(rf_cases[0]); i++)
		run_kcase(&rf_cases[i]);
}

#define PS(name) "{'name':'" name "','count':1,'template':{'spec':{}}}"
#define WL(q, podsets, status)                                                 \
	"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'Workload','metadata':" \
	"{'name':'w','namespace':'team-a'},'spec':{'queueName':'" q "',"       \
	"'podSets':[" podsets "]}" status "}"
#define RESERVED                                                               \
	",'status':{'conditions':[{'type':'QuotaReserved','status':'True',"    \
	"'reason':'QuotaReserved','message':'m','lastTransitionTime':"         \
	"'2026-01-01T00:00:00Z'}]}"

static const struct kcase wl_cases[] = {
    {"valid", "Workload", "CREATE", WL("q", PS("main") "," PS("w"), ""), NULL,
	0, NULL},
    {"no podSets", "Workload", "CREATE", WL("q", "", ""), NULL, 403,
	"spec.podSets: Invalid value: 0: must have at least 1 items"},
    {"19 podSets", "Workload", "CREATE",
	WL("q",
	    PS("a") "," PS("b") "," PS("c") "," PS("d") "," PS("e") "," PS("f") "," PS("g") "," PS("h") "," PS("i") "," PS(
		"j") "," PS("k") "," PS("l") "," PS("m") "," PS("n") "," PS("o") "," PS("p") "," PS("q") "," PS("r") "," PS("s"),
	    ""),
	NULL, 403, "spec.podSets: Too many: 19: must have at most 18 items"},
    {"duplicate podSet names", "Workload", "CREATE",
	WL("q", PS("a") "," PS("b") "," PS("a"), ""), NULL, 403,
	"spec.podSets[2].name: Duplicate value: \"a\""},
    {"duplicate default podSet name", "Workload", "CREATE",
	WL("q", "{'template':{}}," PS("main"), ""), NULL, 403,
	"spec.podSets[1].name: Duplicate value: \"main\""},
    {"podSet name format", "Workload", "CREATE", WL("q", PS("Main"), ""), NULL,
	403, "spec.podSets[0].name: Invalid value: \"Main\""},
    {"negative count", "Workload", "CREATE",
	WL("q", "{'name':'a','count':-1,'template':{}}", ""), NULL, 403,
	"spec.podSets[0].count: Invalid value: -1: must be greater than or "
	"equal to 0"},
    {"negative request (WorkloadValidateResourcesAreNonNegative)", "Workload",
	"CREATE",
	WL("q",
	    "{'name':'a','template':{'spec':{'containers':[{'name':'c',"
	    "'resources':{'requests':{'cpu':'-3'}}}]}}}",
	    ""),
	NULL, 403,
	"spec.podSets[0].template.spec.containers[0].resources.requests[cpu]: "
	"Invalid value: \"-3\": must be greater than or equal to 0"},
    {"negative init container limit", "Workload", "CREATE",
	WL("q",
	    "{'name':'a','template':{'spec':{'initContainers':[{'name':'i',"
	    "'resources':{'limits':{'memory':'-1Gi'}}}],'containers':[]}}}",
	    ""),
	NULL, 403,
	"spec.podSets[0].template.spec.initContainers[0].resources.limits["
	"memory]: Invalid value: \"-1Gi\""},
    {"the pods key is reserved", "Workload", "CREATE",
	WL("q",
	    "{'name':'a','template':{'spec':{'containers':[{'name':'c',"
	    "'resources':{'requests':{'pods':'1'}}}]}}}",
	    ""),
	NULL, 403,
	"resources.requests[pods]: Invalid value: \"pods\": the key is "
	"reserved for internal kueue use"},
    {"podSet template label (WorkloadValidationForPodSetMetadata)", "Workload",
	"CREATE",
	WL("q",
	    "{'name':'a','template':{'metadata':{'labels':{'bad key':'x'}},"
	    "'spec':{}}}",
	    ""),
	NULL, 403, "spec.podSets[0].template.metadata.labels"},
    {"podSet template annotation key", "Workload", "CREATE",
	WL("q",
	    "{'name':'a','template':{'metadata':{'annotations':{'a/b/c':'x'}},"
	    "'spec':{}}}",
	    ""),
	NULL, 403, "spec.podSets[0].template.metadata.annotations"},
    {"valid requests and metadata", "Workload", "CREATE",
	WL("q",
	    "{'name':'a','template':{'metadata':{'labels':{'app':'x'},"
	    "'annotations':{'Example.com/Note':'free text'}},'spec':{"
	    "'containers':[{'name':'c','resources':{'requests':{'cpu':'1'},"
	    "'limits':{'cpu':'2'}}}]}}}",
	    ""),
	NULL, 0, NULL},
    {"two minCounts", "Workload", "CREATE",
	WL("q",
	    "{'name':'a','count':2,'minCount':1,'template':{}},"
	    "{'name':'b','count':2,'minCount':1,'template':{}}",
	    ""),
	NULL, 403,
	"spec.podSets: Invalid value: 2: at most one podSet can use "
	"minCount"},
    {"queueName immutable while reserved", "Workload", "UPDATE",
	WL("b", PS("main"), RESERVED), WL("a", PS("main"), RESERVED), 403,
	"spec.queueName: Invalid value: \"b\": queueName is immutable while "
	"workload quota reserved"},
    {"queueName may change without reservation", "Workload", "UPDATE",
	WL("b", PS("main"), ""), WL("a", PS("main"), ""), 0, NULL},
    {"podSets immutable while reserved", "Workload", "UPDATE",
	WL("a", "{'name':'main','count':3,'template':{'spec':{}}}", RESERVED),
	WL("a", PS("main"), RESERVED), 403,
	"spec.podSets[0]: Invalid value: \"object\": field is immutable"},
    {"podSets count immutable while reserved", "Workload", "UPDATE",
	WL("a", PS("main") "," PS("x"), RESERVED),
	WL("a", PS("main"), RESERVED), 403,
	"spec.podSets: Invalid value: \"array\": field is immutable"},
    {"podSets may change without reservation", "Workload", "UPDATE",
	WL("a", PS("main") "," PS("x"), ""), WL("a", PS("main"), ""), 0, NULL},
    {"root cause: queueName before podSets", "Workload", "UPDATE",
	WL("b", PS("main") "," PS("x"), RESERVED),
	WL("a", PS("main"), RESERVED), 403, "spec.queueName"},
    {"template required (decode)", "Workload", "CREATE",
	WL("q", "{'name':'a'}", ""), NULL, 403,
	"spec.podSets[0].template: Required value"},
};

Test(webhook, workload_rules)
{
	size_t i;

	for (i = 0; i < sizeof(wl_cases) / sizeof(wl_cases[0]); i++)
		run_kcase(&wl_cases[i]);
}

/* workloads/status: Kueue validates the status subresource with the
 * same rules as the whole Workload (the manifest routes it here). */
#define RES(extra)                                                             \
	",'status':{'conditions':[{'type':'QuotaReserved','status':'True',"    \
	"'reason':'QuotaReserved','message':'m','lastTransitionTime':"         \
	"'2026-01-01T00:00:00Z'}]" extra "}"
#define ADM(cq, psas)                                                          \
	",'admission':{'clusterQueue':'" cq "','podSetAssignments':[" psas "]" \
	"}"
#define PSA(name)                                                              \
	"{'name':'" name                                                       \
	"','flavors':{'cpu':'f'},'resourceUsage':{'cpu':'1'},"                 \
	"'count':1}"
#define RP0(name, n) "'reclaimablePods':[{'name':'" name "','count':" n "}]"
#define RP(name, n) "," RP0(name, n)
#define PS3(name) "{'name':'" name "','count':3,'template':{'spec':{}}}"

static const struct kcase wl_status_cases[] = {
    {"admission set with the reservation", "Workload", "UPDATE",
	WL("q", PS("main"), RES(ADM("cq", PSA("main")))),
	WL("q", PS("main"), ""), 0, NULL},
    {"admission changed while reserved", "Workload", "UPDATE",
	WL("q", PS("main"), RES(ADM("cq2", PSA("main")))),
	WL("q", PS("main"), RES(ADM("cq", PSA("main")))), 403,
	"status.admission: Invalid value: \"object\": field is immutable"},
    {"admission cleared while reserved", "Workload", "UPDATE",
	WL("q", PS("main"), RES("")),
	WL("q", PS("main"), RES(ADM("cq", PSA("main")))), 0, NULL},
    {"eviction clears reservation and admission", "Workload", "UPDATE",
	WL("q", PS("main"), ""),
	WL("q", PS("main"), RES(ADM("cq", PSA("main")))), 0, NULL},
    {"admission must assign every podSet", "Workload", "UPDATE",
	WL("q", PS("main") "," PS("w"), RES(ADM("cq", PSA("main")))),
	WL("q", PS("main") "," PS("w"), ""), 403,
	"status.admission.podSetAssignments: Invalid value: 2: must have the "
	"same number of podSets as the spec"},
    {"assignment of an unknown podSet", "Workload", "UPDATE",
	WL("q", PS("main"), RES(ADM("cq", PSA("x")))), WL("q", PS("main"), ""),
	403, "status.admission.podSetAssignments[0].name: Not found: \"x\""},
    {"reclaimablePods of an unknown podSet", "Workload", "UPDATE",
	WL("q", PS("main"), ",'status':{" RP0("x", "1") "}"),
	WL("q", PS("main"), ""), 403,
	"status.reclaimablePods[x].name: Unsupported value: \"x\": supported "
	"values: \"main\""},
    {"reclaimablePods above the podSet count", "Workload", "UPDATE",
	WL("q", PS("main"), RES(RP("main", "2"))), WL("q", PS("main"), ""), 403,
	"status.reclaimablePods[main].count: Invalid value: 2: should be less "
	"or equal to 1"},
    {"reclaimablePods lowered while reserved", "Workload", "UPDATE",
	WL("q", PS3("main"), RES(RP("main", "1") ADM("cq", PSA("main")))),
	WL("q", PS3("main"), RES(RP("main", "2") ADM("cq", PSA("main")))), 403,
	"status.reclaimablePods[main].count: Invalid value: 1: cannot be less "
	"then 2"},
    {"reclaimablePods removed while reserved", "Workload", "UPDATE",
	WL("q", PS3("main"), RES(ADM("cq", PSA("main")))),
	WL("q", PS3("main"), RES(RP("main", "2") ADM("cq", PSA("main")))), 403,
	"status.reclaimablePods[main]: Required value: cannot be removed"},
    {"reclaimablePods raised while reserved", "Workload", "UPDATE",
	WL("q", PS3("main"), RES(RP("main", "3") ADM("cq", PSA("main")))),
	WL("q", PS3("main"), RES(RP("main", "2") ADM("cq", PSA("main")))), 0,
	NULL},
    {"reclaimablePods lowered after the reservation ended", "Workload",
	"UPDATE", WL("q", PS3("main"), ",'status':{" RP0("main", "1") "}"),
	WL("q", PS3("main"), RES(RP("main", "2") ADM("cq", PSA("main")))), 0,
	NULL},
};

Test(webhook, workload_status_rules)
{
	size_t i;

	for (i = 0; i < sizeof(wl_status_cases) / sizeof(wl_status_cases[0]);
	     i++) {
		const struct kcase *k = &wl_status_cases[i];
		struct rv rv = {k->op, "kueue.x-k8s.io/v1beta2/Workload", "",
		    k->obj, k->old, false, NULL, "status"};
		struct wh_response resp;

		cr_assert_eq(
		    run(WH_VALIDATE, &rv, &resp), CU_OK, "%s", k->name);
		if (k->code == 0)
			cr_assert(resp.allowed, "%s: denied: %s", k->name,
			    resp.message);
		else {
			cr_assert(!resp.allowed, "%s: allowed", k->name);
			cr_assert_eq(resp.code, k->code, "%s: %s", k->name,
			    resp.message);
			cr_assert(strstr(resp.message, k->want) != NULL,
			    "%s:\n got  %s\n want %s", k->name, resp.message,
			    k->want);
		}
		wh_response_dispose(&resp);
		/* The main resource gets the same answer. */
		rv.sub = NULL;
		cr_assert_eq(
		    run(WH_VALIDATE, &rv, &resp), CU_OK, "%s", k->name);
		cr_assert_eq(
		    resp.allowed, k->code == 0, "%s (main resource)", k->name);
		wh_response_dispose(&resp);
	}
}

Test(webhook, workload_priority_class_rules)
{
	char *longdesc = cu_malloc(2100), *obj;
	struct kcase k = {"long description", "WorkloadPriorityClass", "CREATE",
	    NULL, NULL, 403,
	    "description: Too long: must have at most 2048 characters"};
	struct kcase ok = {"value may change", "WorkloadPriorityClass",
	    "UPDATE",
	    "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':"
	    "'WorkloadPriorityClass','metadata':{'name':'p'},'value':20}",
	    "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':"
	    "'WorkloadPriorityClass','metadata':{'name':'p'},'value':10}",
	    0, NULL};
	struct kcase novalue = {"value required", "WorkloadPriorityClass",
	    "CREATE", "{'metadata':{'name':'p'}}", NULL, 403,
	    "value: Required value"};

	memset(longdesc, 'x', 2049);
	longdesc[2049] = '\0';
	obj = cu_asprintf("{'metadata':{'name':'p'},'value':1,"
			  "'description':'%s'}",
	    longdesc);
	k.obj = obj;
	run_kcase(&k);
	run_kcase(&ok);
	run_kcase(&novalue);
	cu_free(obj);
	cu_free(longdesc);
}

Test(webhook, kueue_kind_wrong_version_or_kind)
{
	struct rv rv = {"CREATE", "kueue.x-k8s.io/v1beta1/ClusterQueue", "",
	    "{'metadata':{'name':'cq'},'spec':{}}", NULL, false, NULL, NULL};

	expect_denied(WH_VALIDATE, &rv, 400,
	    "request.kind.version: Unsupported value: \"v1beta1\": supported "
	    "values: \"v1beta2\"",
	    false);
	rv.gvk = "kueue.x-k8s.io/v1beta2/ClusterQueue";
	rv.obj = "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'LocalQueue',"
		 "'metadata':{'name':'cq'}}";
	expect_denied(WH_VALIDATE, &rv, 400,
	    "object.kind: Invalid value: \"LocalQueue\": must be "
	    "\"ClusterQueue\" (request.kind)",
	    false);
	/* a kind cueue does not validate */
	rv.gvk = "kueue.x-k8s.io/v1beta2/AdmissionCheck";
	rv.obj = "{'metadata':{'name':'ac'}}";
	expect_allowed_nopatch(WH_VALIDATE, &rv);
}

Test(webhook, resource_in_use_finalizer_defaulting)
{
	struct rv rv = {"CREATE", "kueue.x-k8s.io/v1beta2/ClusterQueue", "",
	    CQ("{}"), NULL, false, NULL, NULL};
	json_t *out;

	/* off by default: the controller must remove it again */
	expect_allowed_nopatch(WH_MUTATE, &rv);
	OPT.add_resource_in_use_finalizer = true;
	out = mutated(&rv, NULL);
	cr_assert_str_eq(json_string_value(json_array_get(
			     at(out, "metadata", "finalizers"), 0)),
	    "kueue.x-k8s.io/resource-in-use");
	json_decref(out);
	rv.gvk = "kueue.x-k8s.io/v1beta2/ResourceFlavor";
	rv.obj = "{'metadata':{'name':'rf','finalizers':['other']}}";
	out = mutated(&rv, NULL);
	cr_assert_eq(json_array_size(at(out, "metadata", "finalizers")), 2);
	cr_assert_str_eq(json_string_value(json_array_get(
			     at(out, "metadata", "finalizers"), 1)),
	    "kueue.x-k8s.io/resource-in-use");
	json_decref(out);
	rv.obj = "{'metadata':{'name':'rf','finalizers':["
		 "'kueue.x-k8s.io/resource-in-use']}}";
	expect_allowed_nopatch(WH_MUTATE, &rv);
	/* never for other kinds, never on UPDATE */
	rv.gvk = "kueue.x-k8s.io/v1beta2/LocalQueue";
	rv.obj = "{'metadata':{'name':'lq'}}";
	expect_allowed_nopatch(WH_MUTATE, &rv);
	rv.gvk = "kueue.x-k8s.io/v1beta2/ClusterQueue";
	rv.op = "UPDATE";
	rv.obj = CQ("{}");
	rv.old = CQ("{}");
	expect_allowed_nopatch(WH_MUTATE, &rv);
}

Test(webhook, quote_escapes_and_shortens)
{
	struct rv rv = {"CREATE", "kueue.x-k8s.io/v1beta2/LocalQueue", "",
	    LQ("a\\\"b\\u0001xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	       "xxx"
	       "xxxxxxxxxxxxxxxxxxxxxxxxx"),
	    NULL, false, NULL, NULL};

	expect_denied(WH_VALIDATE, &rv, 403,
	    "spec.clusterQueue: Invalid value: \"a\\\"b\\u0001xxx", true);
	expect_denied(WH_VALIDATE, &rv, 403, "xxx...\": a lowercase", true);
}

/* The Ray kinds suspend through spec.suspend (not runPolicy); a
 * RayCluster a managed RayJob controls passes untouched. */
Test(webhook, ray_kinds_suspended_through_spec_suspend)
{
	struct rv rv = {"CREATE", "ray.io/v1/RayJob", "team-a",
	    "{'apiVersion':'ray.io/v1','kind':'RayJob','metadata':{'name':"
	    "'rj'" QLABEL("main") "},'spec':{'entrypoint':'x'}}",
	    NULL, false, NULL, NULL};
	json_t *patch = NULL, *out;

	/* the framework is off: untouched */
	expect_allowed_nopatch(WH_MUTATE, &rv);
	CFG.enabled[NS_GATE_KIND_RAYJOB] = true;
	CFG.enabled[NS_GATE_KIND_RAYCLUSTER] = true;
	out = mutated(&rv, &patch);
	cr_assert(json_is_true(at(out, "spec", "suspend")));
	cr_assert_null(at(out, "spec", "runPolicy"));
	json_decref(patch);
	json_decref(out);
	/* only admission resumes it */
	rv.op = "UPDATE";
	rv.obj = "{'apiVersion':'ray.io/v1','kind':'RayJob','metadata':{"
		 "'name':'rj'" QLABEL("main") "},'spec':{'suspend':false}}";
	rv.old = "{'apiVersion':'ray.io/v1','kind':'RayJob','metadata':{"
		 "'name':'rj'" QLABEL("main") "},'spec':{'suspend':true}}";
	expect_denied(WH_VALIDATE, &rv, 403, "spec.suspend", true);
	/* a standalone RayCluster is suspended on create too */
	rv.op = "CREATE";
	rv.old = NULL;
	rv.gvk = "ray.io/v1/RayCluster";
	rv.obj = "{'apiVersion':'ray.io/v1','kind':'RayCluster','metadata':{"
		 "'name':'rc'" QLABEL("main") "},'spec':{'suspend':false}}";
	out = mutated(&rv, NULL);
	cr_assert(json_is_true(at(out, "spec", "suspend")));
	json_decref(out);
}

static bool wpc_default_yes(void *payload)
{
	(void)payload;
	return true;
}

/* Kueue's WorkloadPriorityClassDefaulting: a job without a priority-class
 * label gets kueue.x-k8s.io/priority-class=default while the
 * WorkloadPriorityClass "default" exists; a label already there stays. */
Test(webhook, default_workload_priority_class_labels_the_job)
{
	struct rv rv = {"CREATE", "batch/v1/Job", "team-a",
	    "{" JOB_META("") ",'spec':{}}", NULL, false, NULL, NULL};
	json_t *patch = NULL, *out;

	OPT.default_wpc_exists = wpc_default_yes;
	out = mutated(&rv, &patch);
	cr_assert_str_eq(
	    json_string_value(json_object_get(at(out, "metadata", "labels"),
		"kueue.x-k8s.io/priority-class")),
	    "default");
	cr_assert_str_eq(
	    json_string_value(json_object_get(
		at(out, "metadata", "labels"), "kueue.x-k8s.io/queue-name")),
	    "default");
	json_decref(patch);
	json_decref(out);
	/* existing labels */
	rv.obj = "{" JOB_META(",'labels':{'app':'x'}") ",'spec':{}}";
	out = mutated(&rv, &patch);
	cr_assert_str_eq(
	    json_string_value(json_object_get(at(out, "metadata", "labels"),
		"kueue.x-k8s.io/priority-class")),
	    "default");
	cr_assert_str_eq(json_string_value(json_object_get(
			     at(out, "metadata", "labels"), "app")),
	    "x");
	json_decref(patch);
	json_decref(out);
	/* its own class kept */
	rv.obj = "{" JOB_META(
	    ",'labels':{'kueue.x-k8s.io/priority-class':'high'}") ",'spec':{}}";
	out = mutated(&rv, &patch);
	cr_assert_str_eq(
	    json_string_value(json_object_get(at(out, "metadata", "labels"),
		"kueue.x-k8s.io/priority-class")),
	    "high");
	json_decref(patch);
	json_decref(out);
}

/* ---- serving: StatefulSet, LeaderWorkerSet (webhook/serving.c) ---------- */

#define STS_OBJ(prio, replicas)                                                \
	"{'apiVersion':'apps/v1','kind':'StatefulSet','metadata':{'name':"     \
	"'web','labels':{'kueue.x-k8s.io/queue-name':'main'" prio "}},"        \
	"'spec':{'replicas':" replicas ",'template':{'metadata':{'labels':{"   \
	"'app':'web'}},'spec':{}}}}"

/* A managed StatefulSet's pod template becomes one pod group's: queue
 * name, total count, fast admission, role main (no group name); without a
 * priority-class label none is written (not even null); disabled, or in
 * an excluded namespace: nothing. */
Test(webhook, statefulset_template_is_a_pod_group)
{
	struct rv rv = {"CREATE", "apps/v1/StatefulSet", "team-a",
	    STS_OBJ("", "3"), NULL, false, NULL, NULL};
	const json_t *md, *labels, *ann;
	json_t *out;

	expect_allowed_nopatch(WH_MUTATE, &rv); /* not enabled */
	OPT.statefulset = true;
	expect_allowed_nopatch(WH_MUTATE, &rv); /* pod not enabled */
	CFG.enabled[NS_GATE_KIND_POD] = true;
	out = mutated(&rv, NULL);
	md = json_object_get(at(out, "spec", "template"), "metadata");
	labels = json_object_get(md, "labels");
	ann = json_object_get(md, "annotations");
	cr_assert_str_eq(
	    api_json_str(labels, "kueue.x-k8s.io/queue-name"), "main");
	cr_assert_null(
	    json_object_get(labels, "kueue.x-k8s.io/priority-class"));
	/* The group's name needs the uid: the pod webhook writes it. */
	cr_assert_null(
	    json_object_get(labels, "kueue.x-k8s.io/pod-group-name"));
	cr_assert_str_eq(api_json_str(labels, "app"), "web");
	cr_assert_str_eq(
	    api_json_str(ann, "kueue.x-k8s.io/pod-group-total-count"), "3");
	cr_assert_str_eq(
	    api_json_str(ann, "kueue.x-k8s.io/pod-group-fast-admission"),
	    "true");
	cr_assert_str_eq(api_json_str(ann, "kueue.x-k8s.io/role-hash"), "main");
	json_decref(out);
	rv.obj = STS_OBJ(",'kueue.x-k8s.io/priority-class':'high'", "2");
	out = mutated(&rv, NULL);
	cr_assert_str_eq(
	    api_json_str(at(at(out, "spec", "template"), "metadata", "labels"),
		"kueue.x-k8s.io/priority-class"),
	    "high");
	json_decref(out);
	rv.ns = "test";
	expect_allowed_nopatch(WH_MUTATE, &rv);
}

/* As Kueue: a managed StatefulSet scales only to and from zero, and not
 * up from zero while Pods remain; its queue name is fixed. */
Test(webhook, statefulset_scales_to_and_from_zero_only)
{
	struct rv rv = {"UPDATE", "apps/v1/StatefulSet", "team-a",
	    STS_OBJ("", "3"), STS_OBJ("", "2"), false, NULL, NULL};

	OPT.statefulset = true;
	CFG.enabled[NS_GATE_KIND_POD] = true;
	expect_denied(WH_VALIDATE, &rv, 403,
	    "spec.replicas: Invalid value: 3: field is immutable", false);
	rv.obj = STS_OBJ("", "0");
	expect_allowed_nopatch(WH_VALIDATE, &rv);
	rv.old = STS_OBJ("", "0");
	rv.obj = STS_OBJ("", "2");
	expect_allowed_nopatch(WH_VALIDATE, &rv);
	rv.obj = "{'apiVersion':'apps/v1','kind':'StatefulSet','metadata':{"
		 "'name':'web','labels':{'kueue.x-k8s.io/queue-name':'main'}},"
		 "'spec':{'replicas':2,'template':{}},'status':{'replicas':1}}";
	expect_denied(WH_VALIDATE, &rv, 403, "scaling down is still", true);
	rv.obj = "{'apiVersion':'apps/v1','kind':'StatefulSet','metadata':{"
		 "'name':'web','labels':{'kueue.x-k8s.io/queue-name':'other'}},"
		 "'spec':{'replicas':0,'template':{}}}";
	expect_denied(WH_VALIDATE, &rv, 403, "field is immutable", true);
	rv.ns = "test"; /* not ours: anything goes */
	expect_allowed_nopatch(WH_VALIDATE, &rv);
}

/* The StatefulSet's Workload as the caches have it: none, on hold, or
 * still there without the hold. */
static int STS_WL; /* 0 none, 1 on hold, 2 not on hold */
static char STS_WL_NAME[128];

static int sts_wl(const char *ns, const char *name,
    struct wh_workload_state *out, void *payload, cu_error *err)
{
	(void)payload;
	(void)err;
	cr_assert_str_eq(ns, "team-a");
	snprintf(STS_WL_NAME, sizeof(STS_WL_NAME), "%s", name);
	memset(out, 0, sizeof(*out));
	out->on_hold = STS_WL == 1;
	return STS_WL == 0 ? CU_ENOTFOUND : CU_OK;
}

/* As Kueue: scaled up from zero while the Workload of the scale-down is
 * still there without its hold (being deleted): refused; gone or on
 * hold: allowed. The Workload is looked up under Kueue's name for the
 * StatefulSet and its uid. */
Test(webhook, statefulset_scale_up_waits_for_previous_workload)
{
	struct rv rv = {"UPDATE", "apps/v1/StatefulSet", "team-a",
	    STS_OBJ("", "2"),
	    "{'apiVersion':'apps/v1','kind':'StatefulSet','metadata':{"
	    "'name':'web','uid':'u-7','labels':{"
	    "'kueue.x-k8s.io/queue-name':'main'}},'spec':{'replicas':0,"
	    "'template':{}}}",
	    false, NULL, NULL};

	OPT.statefulset = true;
	OPT.workload_named = sts_wl;
	CFG.enabled[NS_GATE_KIND_POD] = true;
	STS_WL = 0;
	expect_allowed_nopatch(WH_VALIDATE, &rv);
	cr_assert_eq(
	    strncmp(STS_WL_NAME, "statefulset-web-", 16), 0, "%s", STS_WL_NAME);
	STS_WL = 1;
	expect_allowed_nopatch(WH_VALIDATE, &rv);
	STS_WL = 2;
	expect_denied(WH_VALIDATE, &rv, 403,
	    "spec.replicas: Forbidden: workload from previous scale-down is "
	    "still being deleted",
	    false);
}

#define LWS_OBJ(leader, policy)                                                \
	"{'apiVersion':'leaderworkerset.x-k8s.io/v1','kind':"                  \
	"'LeaderWorkerSet','metadata':{'name':'nginx','labels':{"              \
	"'kueue.x-k8s.io/queue-name':'main'}},'spec':{'replicas':2," policy    \
	"'leaderWorkerTemplate':{'size':3," leader "'workerTemplate':{"        \
	"'spec':{}}}}}"

/* A managed LeaderWorkerSet's templates carry the queue name, the
 * group's size and each one's role (leader, worker; main without a
 * leader template); LeaderReady is refused, as in Kueue. */
Test(webhook, leaderworkerset_templates_and_startup_policy)
{
	struct rv rv = {"CREATE", "leaderworkerset.x-k8s.io/v1/LeaderWorkerSet",
	    "team-a", LWS_OBJ("'leaderTemplate':{'spec':{}},", ""), NULL, false,
	    NULL, NULL};
	const json_t *lwt;
	json_t *out;

	expect_allowed_nopatch(WH_MUTATE, &rv);
	OPT.leaderworkerset = true;
	CFG.enabled[NS_GATE_KIND_POD] = true;
	out = mutated(&rv, NULL);
	lwt = at(out, "spec", "leaderWorkerTemplate");
	cr_assert_str_eq(api_json_str(at(json_object_get(lwt, "leaderTemplate"),
					  "metadata", "annotations"),
			     "kueue.x-k8s.io/role-hash"),
	    "leader");
	cr_assert_str_eq(api_json_str(at(json_object_get(lwt, "workerTemplate"),
					  "metadata", "annotations"),
			     "kueue.x-k8s.io/role-hash"),
	    "worker");
	cr_assert_str_eq(api_json_str(at(json_object_get(lwt, "workerTemplate"),
					  "metadata", "annotations"),
			     "kueue.x-k8s.io/pod-group-total-count"),
	    "3");
	/* Kueue's value: the framework's name. */
	cr_assert_str_eq(api_json_str(at(json_object_get(lwt, "workerTemplate"),
					  "metadata", "annotations"),
			     "kueue.x-k8s.io/pod-suspending-parent"),
	    "leaderworkerset.x-k8s.io/leaderworkerset");
	cr_assert_str_eq(api_json_str(at(json_object_get(lwt, "workerTemplate"),
					  "metadata", "labels"),
			     "kueue.x-k8s.io/queue-name"),
	    "main");
	json_decref(out);
	rv.obj = LWS_OBJ("", "");
	out = mutated(&rv, NULL);
	lwt = at(out, "spec", "leaderWorkerTemplate");
	cr_assert_str_eq(api_json_str(at(json_object_get(lwt, "workerTemplate"),
					  "metadata", "annotations"),
			     "kueue.x-k8s.io/role-hash"),
	    "main");
	json_decref(out);
	rv.obj = LWS_OBJ("", "'startupPolicy':'LeaderReady',");
	expect_denied(WH_VALIDATE, &rv, 403, "spec.startupPolicy", true);
	rv.obj = LWS_OBJ("", "'startupPolicy':'LeaderCreated',");
	expect_allowed_nopatch(WH_VALIDATE, &rv);
}

static const char *cached_lws_uid(
    const char *ns, const char *name, void *payload)
{
	(void)payload;
	return strcmp(ns, "team-a") == 0 && strcmp(name, "nginx") == 0
		   ? "u-cached"
		   : NULL;
}

/* rv's Pod is put in the group Kueue names "nginx-1" with uid ("" when
 * NULL). */
static void expect_lws_group(struct rv *rv, const char *uid)
{
	char *want = NULL;
	json_t *out;
	cu_error err;

	cr_assert_eq(
	    api_workload_name("LeaderWorkerSet", "leaderworkerset.x-k8s.io",
		"nginx-1", uid != NULL ? uid : "", -1, API_WORKLOAD_NAME_MAX,
		&want, &err),
	    CU_OK);
	out = mutated(rv, NULL);
	cr_assert_str_eq(api_json_str(at(out, "metadata", "labels"),
			     "kueue.x-k8s.io/pod-group-name"),
	    want);
	json_decref(out);
	cu_free(want);
}

/* A Pod of a managed LeaderWorkerSet is gated and put in its group's pod
 * group, one per group index. */
Test(webhook, leaderworkerset_pod_joins_its_group)
{
	struct rv rv = {"CREATE", "v1/Pod", "team-a",
	    "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'nginx-1-2',"
	    "'labels':{'kueue.x-k8s.io/queue-name':'main',"
	    "'leaderworkerset.sigs.k8s.io/name':'nginx',"
	    "'leaderworkerset.sigs.k8s.io/group-index':'1'},'annotations':{"
	    "'kueue.x-k8s.io/pod-suspending-parent':'leaderworkerset'}},"
	    "'spec':{'containers':[]}}",
	    NULL, false, NULL, NULL};
	json_t *out;
	const char *g;

	OPT.leaderworkerset = true;
	CFG.enabled[NS_GATE_KIND_POD] = true;
	out = mutated(&rv, NULL);
	g = api_json_str(
	    at(out, "metadata", "labels"), "kueue.x-k8s.io/pod-group-name");
	cr_assert_not_null(g);
	cr_assert_eq(strncmp(g, "leaderworkerset-nginx-1-", 24), 0, "%s", g);
	cr_assert_str_eq(
	    api_json_str(
		json_array_get(at(out, "spec", "schedulingGates"), 0), "name"),
	    "kueue.x-k8s.io/admission");
	json_decref(out);
	/* Kueue's Workload name of the group: "nginx-1" hashed with the
	 * set's uid, from the Pod's controller reference or the cache. */
	expect_lws_group(&rv, NULL);
	rv.obj = "{'apiVersion':'v1','kind':'Pod','metadata':{'name':"
		 "'nginx-1-2','labels':{'kueue.x-k8s.io/queue-name':'main',"
		 "'leaderworkerset.sigs.k8s.io/name':'nginx',"
		 "'leaderworkerset.sigs.k8s.io/group-index':'1'},"
		 "'annotations':{'kueue.x-k8s.io/pod-suspending-parent':"
		 "'leaderworkerset.x-k8s.io/leaderworkerset'},"
		 "'ownerReferences':[{'apiVersion':'leaderworkerset.x-k8s.io/"
		 "v1','kind':'LeaderWorkerSet','name':'nginx','uid':'u-1',"
		 "'controller':true}]},'spec':{'containers':[]}}";
	expect_lws_group(&rv, "u-1");
	OPT.lws_uid = cached_lws_uid;
	expect_lws_group(&rv, "u-1"); /* its own reference first */
	/* A Pod of one of the set's StatefulSets: the cached set's uid. */
	rv.obj = "{'apiVersion':'v1','kind':'Pod','metadata':{'name':"
		 "'nginx-1-2','labels':{'kueue.x-k8s.io/queue-name':'main',"
		 "'leaderworkerset.sigs.k8s.io/name':'nginx',"
		 "'leaderworkerset.sigs.k8s.io/group-index':'1'},"
		 "'annotations':{'kueue.x-k8s.io/pod-suspending-parent':"
		 "'leaderworkerset.x-k8s.io/leaderworkerset'}},"
		 "'spec':{'containers':[]}}";
	expect_lws_group(&rv, "u-cached");
	OPT.lws_uid = NULL;
	OPT.leaderworkerset = false;
	out = mutated(&rv, NULL); /* gated, in no group */
	cr_assert_null(json_object_get(
	    at(out, "metadata", "labels"), "kueue.x-k8s.io/pod-group-name"));
	json_decref(out);
}

/* A StatefulSet's Pod joins Kueue's group for it: the Workload name of
 * the StatefulSet and its uid (from the Pod's controller reference), so
 * a StatefulSet made anew under the same name is another group. */
Test(webhook, statefulset_pod_group_named_with_owner_uid)
{
#define STS_POD(uid)                                                           \
	"{'apiVersion':'v1','kind':'Pod','metadata':{'name':'web-0',"          \
	"'labels':{'kueue.x-k8s.io/queue-name':'main'},'annotations':{"        \
	"'kueue.x-k8s.io/pod-suspending-parent':'statefulset'},"               \
	"'ownerReferences':[{'apiVersion':'apps/v1','kind':'StatefulSet',"     \
	"'name':'web','uid':'" uid "','controller':true}]},"                   \
	"'spec':{'containers':[]}}"
	struct rv rv = {"CREATE", "v1/Pod", "team-a", STS_POD("u-1"), NULL,
	    false, NULL, NULL};
	json_t *out, *out2;
	const char *g, *g2;

	OPT.statefulset = true;
	CFG.enabled[NS_GATE_KIND_POD] = true;
	out = mutated(&rv, NULL);
	g = api_json_str(
	    at(out, "metadata", "labels"), "kueue.x-k8s.io/pod-group-name");
	cr_assert_not_null(g);
	cr_assert_eq(strncmp(g, "statefulset-web-", 16), 0, "%s", g);
	cr_assert_eq(strlen(g), 21, "%s: the name, a 5-character hash", g);
	rv.obj = STS_POD("u-2");
	out2 = mutated(&rv, NULL);
	g2 = api_json_str(
	    at(out2, "metadata", "labels"), "kueue.x-k8s.io/pod-group-name");
	cr_assert_not_null(g2);
	cr_assert_str_neq(g, g2, "another uid, another group");
	json_decref(out);
	json_decref(out2);
	OPT.statefulset = false;
	out = mutated(&rv, NULL); /* gated, in no group */
	cr_assert_null(json_object_get(
	    at(out, "metadata", "labels"), "kueue.x-k8s.io/pod-group-name"));
	json_decref(out);
#undef STS_POD
}

/* A queued SparkApplication runs in cluster mode, without dynamic
 * allocation (webhook/spark.c); one cueue does not queue is not
 * checked. */
Test(webhook, spark_cluster_mode_without_dynamic_allocation)
{
#define SPARK(labels, spec)                                                    \
	"{'apiVersion':'sparkoperator.k8s.io/v1beta2','kind':"                 \
	"'SparkApplication','metadata':{'name':'sp'" labels "},'spec':" spec   \
	"}"
	struct rv rv = {"CREATE",
	    "sparkoperator.k8s.io/v1beta2/SparkApplication", "team-a",
	    SPARK(QLABEL("main"), "{'mode':'cluster'}"), NULL, false, NULL,
	    NULL};

	CFG.enabled[NS_GATE_KIND_SPARKAPP] = true;
	expect_allowed_nopatch(WH_VALIDATE, &rv);
	rv.obj = SPARK(QLABEL("main"), "{'mode':'client'}");
	expect_denied(WH_VALIDATE, &rv, 403,
	    "spec.mode: Invalid value: \"client\"", true);
	rv.obj = SPARK(QLABEL("main"), "{}");
	expect_denied(WH_VALIDATE, &rv, 403, "spec.mode", true);
	rv.obj = SPARK(QLABEL("main"),
	    "{'mode':'cluster','dynamicAllocation':{'enabled':true}}");
	expect_denied(WH_VALIDATE, &rv, 403,
	    "spec.dynamicAllocation.enabled: Invalid value: true", true);
	rv.obj = SPARK(QLABEL("main"),
	    "{'mode':'cluster','dynamicAllocation':{'enabled':false}}");
	expect_allowed_nopatch(WH_VALIDATE, &rv);
	/* no elastic SparkApplication (ElasticJobsViaWorkloadSlices on),
	 * with dynamic allocation or without */
	rv.obj = "{'apiVersion':'sparkoperator.k8s.io/v1beta2','kind':"
		 "'SparkApplication','metadata':{'name':'sp','annotations':{"
		 "'kueue.x-k8s.io/elastic-job':'true'}" QLABEL(
		     "main") "},"
			     "'spec':{'mode':'cluster'}}";
	expect_denied(WH_VALIDATE, &rv, 403,
	    "metadata.annotations[kueue.x-k8s.io/elastic-job]: Forbidden",
	    true);
	OPT.no_elastic_jobs = true;
	expect_allowed_nopatch(WH_VALIDATE, &rv);
	OPT.no_elastic_jobs = false;
	/* the same checks on UPDATE */
	rv.op = "UPDATE";
	rv.old = SPARK(QLABEL("main"), "{'mode':'cluster'}");
	rv.obj = SPARK(QLABEL("main"), "{'mode':'in-cluster-client'}");
	expect_denied(WH_VALIDATE, &rv, 403, "spec.mode", true);
	/* not queued: not cueue's to check */
	rv.op = "CREATE";
	rv.old = NULL;
	rv.obj = SPARK("", "{'mode':'client','dynamicAllocation':{"
			   "'enabled':true}}");
	expect_allowed_nopatch(WH_VALIDATE, &rv);
	/* the framework off: untouched */
	CFG.enabled[NS_GATE_KIND_SPARKAPP] = false;
	rv.obj = SPARK(QLABEL("main"), "{'mode':'client'}");
	expect_allowed_nopatch(WH_VALIDATE, &rv);
#undef SPARK
}

#define STS_SPEC(spec)                                                         \
	"{'apiVersion':'apps/v1','kind':'StatefulSet','metadata':{'name':"     \
	"'web','labels':{'kueue.x-k8s.io/queue-name':'main'}},'spec':{"        \
	"'replicas':2,'template':{'spec':" spec "}}}"

/* As Kueue's ValidateImmutablePodGroupPodSpec: while managed, the pod
 * spec's shape (container requests and ports, node selector, affinity,
 * tolerations, ...) may not change; the image may; nil equals empty. */
Test(webhook, statefulset_pod_spec_shape_is_immutable)
{
	struct rv rv = {"UPDATE", "apps/v1/StatefulSet", "team-a",
	    STS_SPEC("{'containers':[{'name':'c','image':'b','resources':{"
		     "'requests':{'cpu':'1'}}}]}"),
	    STS_SPEC("{'containers':[{'name':'c','image':'a','resources':{"
		     "'requests':{'cpu':'1'}}}],'tolerations':[]}"),
	    false, NULL, NULL};

	OPT.statefulset = true;
	CFG.enabled[NS_GATE_KIND_POD] = true;
	expect_allowed_nopatch(WH_VALIDATE, &rv);
	rv.obj = STS_SPEC("{'containers':[{'name':'c','image':'a','resources':{"
			  "'requests':{'cpu':'2'}}}]}");
	expect_denied(WH_VALIDATE, &rv, 403,
	    "spec.template.spec.containers[0].resources.requests: Invalid "
	    "value: {\"cpu\":\"2\"}: field is immutable",
	    false);
	rv.obj = STS_SPEC("{'containers':[{'name':'c','image':'a','resources':{"
			  "'requests':{'cpu':'1'}}},{'name':'d'}],"
			  "'nodeSelector':{'a':'b'}}");
	expect_denied(WH_VALIDATE, &rv, 403,
	    "[spec.template.spec.containers: Invalid value: ", true);
	expect_denied(WH_VALIDATE, &rv, 403,
	    ", spec.template.spec.nodeSelector: Invalid value: {\"a\":\"b\"}: "
	    "field is immutable]",
	    true);
	OPT.statefulset = false; /* not managed: anything goes */
	expect_allowed_nopatch(WH_VALIDATE, &rv);
}

/* As Kueue: while managed, a LeaderWorkerSet's templates keep their pod
 * spec shape and its size may not change. */
Test(webhook, leaderworkerset_shape_and_size_immutable)
{
	struct rv rv = {"UPDATE", "leaderworkerset.x-k8s.io/v1/LeaderWorkerSet",
	    "team-a", LWS_OBJ("'leaderTemplate':{'spec':{}},", ""),
	    LWS_OBJ("'leaderTemplate':{'spec':{}},", ""), false, NULL, NULL};

	OPT.leaderworkerset = true;
	CFG.enabled[NS_GATE_KIND_POD] = true;
	expect_allowed_nopatch(WH_VALIDATE, &rv);
	rv.obj = LWS_OBJ("", "");
	expect_denied(WH_VALIDATE, &rv, 403,
	    "spec.leaderWorkerTemplate.leaderTemplate: Invalid value: null: "
	    "field is immutable",
	    false);
	rv.obj =
	    "{'apiVersion':'leaderworkerset.x-k8s.io/v1','kind':"
	    "'LeaderWorkerSet','metadata':{'name':'nginx','labels':{"
	    "'kueue.x-k8s.io/queue-name':'main'}},'spec':{'replicas':2,"
	    "'leaderWorkerTemplate':{'size':4,'leaderTemplate':{'spec':{}},"
	    "'workerTemplate':{'spec':{'nodeSelector':{'a':'b'}}}}}}";
	expect_denied(WH_VALIDATE, &rv, 403,
	    "[spec.leaderWorkerTemplate.workerTemplate.spec.nodeSelector: "
	    "Invalid value: {\"a\":\"b\"}: field is immutable, "
	    "spec.leaderWorkerTemplate.size: Invalid value: 4: field is "
	    "immutable]",
	    false);
	OPT.leaderworkerset = false;
	expect_allowed_nopatch(WH_VALIDATE, &rv);
}
