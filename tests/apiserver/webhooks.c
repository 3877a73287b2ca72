/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/webhooks.c - admission webhooks as kube-apiserver calls
 * them (docs/apiserver.md §9): which MutatingWebhookConfiguration /
 * ValidatingWebhookConfiguration webhooks match a write (rules, scope,
 * matchPolicy Equivalent across a kind's served versions, namespaceSelector,
 * objectSelector), the AdmissionReview sent to them over HTTPS, the checks
 * applied to their answers, JSONPatch mutation, failurePolicy, and the
 * Status a client gets for a denial or a failed call. Also the defaulting
 * and validation of the two configuration kinds themselves.
 *
 * Calls never block the server. They run on a libcurl multi handle driven
 * by the server's libev loop. A handler that needs a webhook's answer
 * returns "delay" (its connection is suspended) and is re-run from the top
 * once the answer is in; answers are cached per request by (webhook,
 * exact review content minus uid), so a re-run replays every earlier
 * answer and only asks what it has not asked yet. Handlers therefore keep
 * admission before any side effect, and values that would differ between
 * runs (uid, generated name, clock) are pinned per request (as_admit_memo,
 * as_admit_begin). A webhook server that itself calls this API server
 * while answering cannot deadlock it.
 *
 * Service references (clientConfig.service) are dialled on 127.0.0.1 at
 * service.port (default 443): every test runs on loopback. The URL, the
 * TLS server name and the certificate check still use the in-cluster name
 * <name>.<namespace>.svc, so the serving certificate needs that SAN, as on
 * a real cluster. Not emulated: reinvocationPolicy IfNeeded (webhooks run
 * once), matchConditions, CONNECT, audit annotations, and requests to
 * view kinds (events.k8s.io Event) are reviewed in their storage kind.
 */
#include <curl/curl.h>
#include <stdio.h>
#include <string.h>

#include "api/json.h"
#include "api/labelselector.h"
#include "api/patch.h"
#include "tests/apiserver/apiserver.h"

#define ADM_GROUP "admissionregistration.k8s.io"
#define MAX_RESPONSE (3u * 1024u * 1024u)

/* ---- state ---------------------------------------------------------- */

/* One webhook call of one request: in flight, then its cached answer. */
struct as_call {
	struct as_call *next;	       /* the request's calls */
	struct as_call *cnext, *cprev; /* the client's calls in flight */
	struct as_admit *owner;
	char *key; /* webhook identity + review content */
	bool done;
	char *error;	  /* call error (reason text), NULL when answered */
	json_t *response; /* the verified `response` object */
	bool v1;
	bool mutating;
	int timeout_s;
	char uid[40];
	/* in flight only */
	CURL *easy;
	struct curl_slist *hdrs, *resolve;
	char *url;  /* as shown in errors: with ?timeout= */
	char *addr; /* host:port dialled, for connection errors */
	char *body;
	char *ca;
	size_t ca_len;
	cu_buf in;
	char errbuf[CURL_ERROR_SIZE];
};

/* Per-request admission state, kept across re-runs of the handler. */
struct as_admit {
	struct as_server *srv;
	struct MHD_Connection *conn;
	struct as_call *calls;
	size_t inflight;
	int64_t now_ns; /* the request's pinned clock */
	json_t *memo;	/* slot -> pinned string */
};

/* The HTTPS client: one multi handle on the server's loop. */
struct as_whclient {
	struct as_server *srv;
	struct as_curlev cl;
	struct as_call *inflight;
};

/* ---- small helpers --------------------------------------------------- */

static const char *jstr(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static bool str_in(json_t *arr, const char *s)
{
	size_t i;
	json_t *v;

	json_array_foreach(arr, i, v)
	{
		if (json_is_string(v) && strcmp(json_string_value(v), s) == 0)
			return true;
	}
	return false;
}

/* Standard padded base64 as Go's encoding/json reads []byte. *out
 * [owned: cu_free], NUL-terminated. On a bad input returns the offset of
 * the offending byte (>= 0); -1 on success, -2 out of memory. */
static long b64_decode(const char *s, char **out, size_t *len)
{
	size_t bad = 0;
	int rc = api_base64_decode(s, out, len, &bad);

	if (rc == CU_OK)
		return -1;
	return rc == CU_ENOMEM ? -2 : (long)bad;
}

/* ---- the HTTPS client ------------------------------------------------ */

static void call_finish(struct as_call *c, CURLcode rc);

/* A finished transfer: its call. */
static void transfer_done(CURL *e, CURLcode rc, void *ctx)
{
	struct as_call *call = NULL;

	(void)ctx;
	curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&call);
	if (call != NULL)
		call_finish(call, rc);
}

static struct as_whclient *client_get(struct as_server *srv)
{
	struct as_whclient *c = srv->whc;

	if (c != NULL || srv->wh_stopped)
		return c;
	c = cu_calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		cu_free(c);
		return NULL;
	}
	c->srv = srv;
	if (as_curlev_init(&c->cl, srv->loop, transfer_done, c) != CU_OK) {
		curl_global_cleanup();
		cu_free(c);
		return NULL;
	}
	srv->whc = c;
	return c;
}

/* Release what only an in-flight call holds. */
static void call_release(struct as_call *call)
{
	struct as_whclient *c = call->owner->srv->whc;

	if (call->easy != NULL) {
		if (c != NULL)
			curl_multi_remove_handle(c->cl.multi, call->easy);
		curl_easy_cleanup(call->easy);
		call->easy = NULL;
		if (c != NULL) {
			if (call->cprev)
				call->cprev->cnext = call->cnext;
			else
				c->inflight = call->cnext;
			if (call->cnext)
				call->cnext->cprev = call->cprev;
		}
		call->cnext = call->cprev = NULL;
		call->owner->inflight--;
	}
	curl_slist_free_all(call->hdrs);
	curl_slist_free_all(call->resolve);
	call->hdrs = call->resolve = NULL;
	cu_free(call->body);
	cu_free(call->ca);
	call->body = call->ca = NULL;
	cu_buf_dispose(&call->in);
}

static void call_fail(struct as_call *call, const char *fmt, ...)
    CU_PRINTF(2, 3);

static void call_fail(struct as_call *call, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cu_free(call->error);
	call->error = cu_strdup(msg);
	call->done = true;
}

void as_webhooks_stop(struct as_server *srv)
{
	struct as_whclient *c = srv->whc;

	srv->wh_stopped = true;
	if (c == NULL)
		return;
	while (c->inflight != NULL) {
		struct as_call *call = c->inflight;

		call_release(call);
		call_fail(call,
		    "failed to call webhook: the API server is shutting down");
	}
	as_curlev_dispose(&c->cl);
	curl_global_cleanup();
	cu_free(c);
	srv->whc = NULL;
}

static size_t on_write(char *ptr, size_t size, size_t n, void *userdata)
{
	struct as_call *call = userdata;

	if (cu_buf_add(&call->in, ptr, size * n) != CU_OK)
		return 0;
	return size * n;
}

/* ---- per-request state ----------------------------------------------- */

static struct as_admit *ctx_of(const struct as_request *rq)
{
	struct as_admit *a;

	if (rq->admit == NULL || rq->conn == NULL)
		return NULL;
	if (*rq->admit != NULL)
		return *rq->admit;
	a = cu_calloc(1, sizeof(*a));
	if (a == NULL)
		return NULL;
	a->memo = json_object();
	if (a->memo == NULL) {
		cu_free(a);
		return NULL;
	}
	a->srv = rq->srv;
	a->conn = rq->conn;
	a->now_ns = cu_time_now_ns();
	*rq->admit = a;
	return a;
}

void as_admit_free(struct as_admit *a)
{
	if (a == NULL)
		return;
	while (a->calls != NULL) {
		struct as_call *call = a->calls;

		a->calls = call->next;
		call_release(call);
		cu_free(call->key);
		cu_free(call->error);
		cu_free(call->url);
		cu_free(call->addr);
		json_decref(call->response);
		cu_free(call);
	}
	json_decref(a->memo);
	cu_free(a);
}

void as_admit_begin(const struct as_request *rq)
{
	struct as_admit *a = ctx_of(rq);

	if (a != NULL)
		as_clock_pin(a->now_ns);
}

void as_admit_end(void)
{
	as_clock_pin(0);
}

const char *as_admit_memo(
    const struct as_request *rq, const char *slot, const char *fresh)
{
	struct as_admit *a = ctx_of(rq);
	const char *v;

	if (a == NULL || fresh == NULL)
		return fresh;
	v = jstr(a->memo, slot);
	if (v != NULL)
		return v;
	json_object_set_new(a->memo, slot, json_string(fresh));
	v = jstr(a->memo, slot);
	return v ? v : fresh;
}

/* ---- finishing a call ------------------------------------------------ */

/* Go's http client error text for a failed POST. */
static void transport_error(struct as_call *call, CURLcode rc)
{
	const char *why =
	    call->errbuf[0] ? call->errbuf : curl_easy_strerror(rc);

	switch (rc) {
	case CURLE_COULDNT_CONNECT:
		call_fail(call,
		    "failed to call webhook: Post \"%s\": dial tcp %s: "
		    "connect: connection refused",
		    call->url, call->addr);
		break;
	case CURLE_OPERATION_TIMEDOUT:
		call_fail(call,
		    "failed to call webhook: Post \"%s\": context deadline "
		    "exceeded",
		    call->url);
		break;
	case CURLE_COULDNT_RESOLVE_HOST:
		call_fail(call,
		    "failed to call webhook: Post \"%s\": dial tcp: lookup "
		    "%s: no such host",
		    call->url, call->addr);
		break;
	case CURLE_PEER_FAILED_VERIFICATION: {
		/* Go's x509 wording for the two usual causes. */
		char host[256];
		const char *h = strstr(call->url, "://");

		snprintf(host, sizeof(host), "%.*s",
		    h ? (int)strcspn(h + 3, ":/") : 0, h ? h + 3 : "");
		if (strstr(why, "local issuer") != NULL ||
		    strstr(why, "self-signed") != NULL ||
		    strstr(why, "self signed") != NULL)
			call_fail(call,
			    "failed to call webhook: Post \"%s\": tls: failed "
			    "to verify certificate: x509: certificate signed "
			    "by unknown authority",
			    call->url);
		else if (strstr(why, "subject name") != NULL)
			call_fail(call,
			    "failed to call webhook: Post \"%s\": tls: failed "
			    "to verify certificate: x509: certificate is not "
			    "valid for %s",
			    call->url, host);
		else
			call_fail(call,
			    "failed to call webhook: Post \"%s\": tls: failed "
			    "to verify certificate: x509: %s",
			    call->url, why);
		break;
	}
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CACERT_BADFILE:
		call_fail(call, "failed to call webhook: Post \"%s\": tls: %s",
		    call->url, why);
		break;
	default:
		call_fail(call, "failed to call webhook: Post \"%s\": %s",
		    call->url, why);
	}
}

/* request/admissionreview.go VerifyAdmissionResponse. */
static void verify_answer(struct as_call *call, long status)
{
	json_error_t jerr;
	json_t *doc, *r, *patch, *ptype;
	const char *av, *kind;

	if (status < 200 || status > 206) {
		json_t *st = json_loadb(
		    call->in.ptr ? call->in.ptr : "", call->in.len, 0, &jerr);
		const char *msg = jstr(st, "message");

		if (msg != NULL &&
		    strcmp(jstr(st, "kind") ? jstr(st, "kind") : "",
			"Status") == 0)
			call_fail(call, "failed to call webhook: %s", msg);
		else if (status >= 500 && call->in.len > 0)
			call_fail(call,
			    "failed to call webhook: an error on the server "
			    "(\"%.200s\") has prevented the request from "
			    "succeeding",
			    call->in.ptr);
		else
			call_fail(call,
			    "failed to call webhook: the server responded "
			    "with the status code %ld but did not return more "
			    "information",
			    status);
		json_decref(st);
		return;
	}
	doc = json_loadb(
	    call->in.ptr ? call->in.ptr : "", call->in.len, 0, &jerr);
	if (!json_is_object(doc)) {
		call_fail(call,
		    "failed to call webhook: couldn't get version/kind; json "
		    "parse error: %s",
		    doc ? "expected an object" : jerr.text);
		json_decref(doc);
		return;
	}
	r = json_object_get(doc, "response");
	av = jstr(doc, "apiVersion");
	kind = jstr(doc, "kind");
	if (!json_is_object(r)) {
		call_fail(call, "received invalid webhook response: webhook "
				"response was absent");
		json_decref(doc);
		return;
	}
	patch = json_object_get(r, "patch");
	ptype = json_object_get(r, "patchType");
	if (patch != NULL && json_is_null(patch))
		patch = NULL;
	if (ptype != NULL && json_is_null(ptype))
		ptype = NULL;
	if ((patch != NULL && !json_is_string(patch)) ||
	    (ptype != NULL && !json_is_string(ptype)) ||
	    (json_object_get(r, "allowed") != NULL &&
		!json_is_boolean(json_object_get(r, "allowed")))) {
		call_fail(call,
		    "failed to call webhook: json: cannot unmarshal the "
		    "response into Go struct field AdmissionReview.response "
		    "of type v1.AdmissionResponse");
		json_decref(doc);
		return;
	}
	if (patch != NULL) {
		char *raw;
		size_t len;
		long bad = b64_decode(json_string_value(patch), &raw, &len);

		if (bad >= 0) {
			call_fail(call,
			    "failed to call webhook: illegal base64 data at "
			    "input byte %ld",
			    bad);
			json_decref(doc);
			return;
		}
		cu_free(raw);
		if (len == 0)
			patch = NULL;
	}
	if (call->v1) {
		const char *uid = jstr(r, "uid");

		if (uid == NULL || strcmp(uid, call->uid) != 0) {
			call_fail(call,
			    "received invalid webhook response: expected "
			    "response.uid=\"%s\", got \"%s\"",
			    call->uid, uid ? uid : "");
		} else if (av == NULL || kind == NULL ||
			   strcmp(av, "admission.k8s.io/v1") != 0 ||
			   strcmp(kind, "AdmissionReview") != 0) {
			call_fail(call,
			    "received invalid webhook response: expected "
			    "webhook response of admission.k8s.io/v1, "
			    "Kind=AdmissionReview, got %s, Kind=%s",
			    av ? av : "", kind ? kind : "");
		} else if (call->mutating && patch != NULL && ptype == NULL) {
			call_fail(call,
			    "received invalid webhook response: webhook "
			    "returned response.patch but not "
			    "response.patchType");
		} else if (call->mutating && patch == NULL && ptype != NULL) {
			call_fail(call,
			    "received invalid webhook response: webhook "
			    "returned response.patchType but not "
			    "response.patch");
		} else if (call->mutating && ptype != NULL &&
			   json_string_value(ptype)[0] == '\0') {
			call_fail(call,
			    "received invalid webhook response: webhook "
			    "returned invalid response.patchType of \"\"");
		} else if (!call->mutating && patch != NULL) {
			call_fail(call,
			    "received invalid webhook response: validating "
			    "webhook may not return response.patch");
		} else if (!call->mutating && ptype != NULL) {
			call_fail(call,
			    "received invalid webhook response: validating "
			    "webhook may not return response.patchType");
		}
		if (call->error != NULL) {
			json_decref(doc);
			return;
		}
	} else if (call->mutating && patch != NULL) {
		/* v1beta1 never checked patchType: pinned to JSONPatch. */
		json_object_set_new(r, "patchType", json_string("JSONPatch"));
	}
	if (!call->mutating) {
		json_object_del(r, "patch");
		json_object_del(r, "patchType");
	}
	call->response = json_incref(r);
	call->done = true;
	json_decref(doc);
}

static void call_finish(struct as_call *call, CURLcode rc)
{
	struct as_admit *owner = call->owner;
	long status = 0;

	if (rc == CURLE_OK)
		curl_easy_getinfo(call->easy, CURLINFO_RESPONSE_CODE, &status);
	if (rc != CURLE_OK)
		transport_error(call, rc);
	else
		verify_answer(call, status);
	call_release(call);
	if (owner->inflight == 0 && owner->conn != NULL)
		as_http_resume(owner->srv, owner->conn);
}

/* ---- starting a call ------------------------------------------------- */

/* URL (shown in errors), host:port dialled and, for a service reference,
 * the CURLOPT_RESOLVE entry pinning its name to 127.0.0.1. */
static bool endpoint(struct as_call *call, json_t *cc, int timeout)
{
	const char *url = jstr(cc, "url");
	json_t *svc = json_object_get(cc, "service");

	if (url != NULL) {
		const char *host = strstr(url, "://");
		size_t hl;

		host = host ? host + 3 : url;
		hl = strcspn(host, "/?#");
		call->url = cu_asprintf("%s%stimeout=%ds", url,
		    strchr(url, '?') ? "&" : "?", timeout);
		if (memchr(host, ':', hl) != NULL &&
		    !(host[0] == '[' && host[hl - 1] == ']'))
			call->addr = cu_strndup(host, hl);
		else
			call->addr = cu_asprintf("%.*s:443", (int)hl, host);
		return call->url != NULL && call->addr != NULL;
	}
	if (json_is_object(svc)) {
		const char *path = jstr(svc, "path");
		char query[32];

		snprintf(query, sizeof(query), "?timeout=%ds", timeout);
		return as_service_target(svc, path && path[0] ? path : "/",
		    query, &call->url, &call->addr, &call->resolve);
	}
	return false;
}

bool as_service_target(json_t *svc, const char *path, const char *query,
    char **url, char **addr, struct curl_slist **resolve)
{
	const char *name = jstr(svc, "name"), *ns = jstr(svc, "namespace");
	json_int_t port = json_integer_value(json_object_get(svc, "port"));
	char *host, *entry;

	if (port <= 0)
		port = 443;
	host = cu_asprintf("%s.%s.svc", name ? name : "", ns ? ns : "");
	if (host == NULL)
		return false;
	*url = cu_asprintf(
	    "https://%s:%lld%s%s", host, (long long)port, path, query);
	*addr = cu_asprintf("127.0.0.1:%lld", (long long)port);
	entry = cu_asprintf("%s:%lld:127.0.0.1", host, (long long)port);
	cu_free(host);
	if (entry != NULL) {
		*resolve = curl_slist_append(NULL, entry);
		cu_free(entry);
	}
	return *url != NULL && *addr != NULL && *resolve != NULL;
}

static int hook_timeout(json_t *hook)
{
	json_t *t = json_object_get(hook, "timeoutSeconds");

	if (json_is_integer(t) && json_integer_value(t) > 0 &&
	    json_integer_value(t) <= 30)
		return (int)json_integer_value(t);
	return 10;
}

/* Start the HTTPS POST of `call` (body already set). Failures to start
 * become the call's error at once. */
static void call_start(struct as_call *call, json_t *hook)
{
	struct as_whclient *c = client_get(call->owner->srv);
	json_t *cc = json_object_get(hook, "clientConfig");
	const char *ca = jstr(cc, "caBundle");
	CURL *e;
	CURLcode rc = CURLE_OK;

	if (c == NULL) {
		call_fail(call, "failed to call webhook: %s",
		    call->owner->srv->wh_stopped
			? "the API server is shutting down"
			: "out of memory");
		return;
	}
	if (!endpoint(call, cc, call->timeout_s)) {
		call_fail(call, "could not get REST client: exactly one of "
				"url or service is required");
		return;
	}
	if (ca != NULL && ca[0] != '\0') {
		long bad = b64_decode(ca, &call->ca, &call->ca_len);

		if (bad != -1 || strstr(call->ca, "-----BEGIN") == NULL) {
			call_fail(call,
			    "could not get REST client: unable to load root "
			    "certificates: unable to parse bytes as PEM block");
			return;
		}
	}
	cu_buf_init(&call->in, MAX_RESPONSE);
	e = curl_easy_init();
	if (e == NULL) {
		call_fail(call, "failed to call webhook: out of memory");
		return;
	}
	{
		static const char *const hdrs[] = {
		    "Content-Type: application/json",
		    "Accept: application/json", "Expect:", NULL};
		size_t i;

		for (i = 0; hdrs[i] != NULL; i++) {
			struct curl_slist *l =
			    curl_slist_append(call->hdrs, hdrs[i]);

			if (l == NULL) {
				curl_slist_free_all(call->hdrs);
				call->hdrs = NULL;
				break;
			}
			call->hdrs = l;
		}
	}
	rc |= curl_easy_setopt(e, CURLOPT_URL, call->url);
	rc |= curl_easy_setopt(e, CURLOPT_PRIVATE, call);
	rc |= curl_easy_setopt(e, CURLOPT_ERRORBUFFER, call->errbuf);
	rc |= curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	rc |= curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "https");
	rc |= curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
	rc |= curl_easy_setopt(e, CURLOPT_WRITEDATA, call);
	rc |=
	    curl_easy_setopt(e, CURLOPT_USERAGENT, "kube-apiserver-admission");
	rc |= curl_easy_setopt(
	    e, CURLOPT_TIMEOUT_MS, (long)call->timeout_s * 1000L);
	rc |= curl_easy_setopt(e, CURLOPT_POSTFIELDS, call->body);
	rc |= curl_easy_setopt(
	    e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(call->body));
	rc |= curl_easy_setopt(e, CURLOPT_HTTPHEADER, call->hdrs);
	rc |= curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
	rc |= curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
	if (call->resolve != NULL)
		rc |= curl_easy_setopt(e, CURLOPT_RESOLVE, call->resolve);
	if (call->ca != NULL) {
		struct curl_blob b = {call->ca, call->ca_len, CURL_BLOB_COPY};

		rc |= curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &b);
	}
	if (rc != CURLE_OK || call->hdrs == NULL) {
		curl_easy_cleanup(e);
		call_fail(call, "failed to call webhook: cannot set up the "
				"HTTPS client");
		return;
	}
	if (curl_multi_add_handle(c->cl.multi, e) != CURLM_OK) {
		curl_easy_cleanup(e);
		call_fail(
		    call, "failed to call webhook: cannot start the call");
		return;
	}
	call->easy = e;
	call->cnext = c->inflight;
	if (c->inflight)
		c->inflight->cprev = call;
	c->inflight = call;
	call->owner->inflight++;
}

/* ---- matching (generic/webhook.go ShouldCallHook) -------------------- */

static bool is_namespaces(const struct as_kind *k)
{
	return k->group[0] == '\0' && strcmp(k->plural, "namespaces") == 0;
}

/* rules/rules.go Matcher for one rule and one version of the kind. */
static bool rule_matches(
    json_t *rule, const struct as_admit_attrs *at, const char *version)
{
	const struct as_kind *k = at->kind;
	json_t *ops = json_object_get(rule, "operations");
	json_t *groups = json_object_get(rule, "apiGroups");
	json_t *versions = json_object_get(rule, "apiVersions");
	json_t *res = json_object_get(rule, "resources"), *r;
	const char *scope = jstr(rule, "scope");
	bool ok = false;
	size_t i;

	if (!str_in(ops, "*") && !str_in(ops, at->operation))
		return false;
	if (!str_in(groups, "*") && !str_in(groups, k->group))
		return false;
	if (!str_in(versions, "*") && !str_in(versions, version))
		return false;
	json_array_foreach(res, i, r)
	{
		const char *s = json_string_value(r), *slash;
		size_t rl;

		if (s == NULL)
			continue;
		slash = strchr(s, '/');
		rl = slash ? (size_t)(slash - s) : strlen(s);
		if (!((rl == 1 && s[0] == '*') ||
			(strlen(k->plural) == rl &&
			    strncmp(s, k->plural, rl) == 0)))
			continue;
		if (slash == NULL
			? at->subresource[0] == '\0'
			: (strcmp(slash + 1, "*") == 0 ||
			      strcmp(slash + 1, at->subresource) == 0)) {
			ok = true;
			break;
		}
	}
	if (!ok)
		return false;
	if (scope == NULL || strcmp(scope, "*") == 0)
		return true;
	if (strcmp(scope, "Namespaced") == 0)
		return !is_namespaces(k) && at->ns[0] != '\0';
	if (strcmp(scope, "Cluster") == 0)
		return is_namespaces(k) || at->ns[0] == '\0';
	return false;
}

static const char *label_of(const char *key, void *payload)
{
	return jstr(
	    json_object_get(json_object_get(payload, "metadata"), "labels"),
	    key);
}

static bool object_labels_match(const api_selector *sel, json_t *obj)
{
	return obj != NULL && ns_selector_matches(sel, label_of, obj);
}

/* A configured selector; absent or null means everything (the v1
 * default {}). */
static int selector_of(
    json_t *hook, const char *field, api_selector *sel, struct as_resp *resp)
{
	json_t *j = json_object_get(hook, field);
	cu_error err;

	if (j == NULL || json_is_null(j)) {
		api_selector_init(sel);
		return CU_OK;
	}
	if (api_label_selector_decode(sel, j, field, &err) != CU_OK) {
		as_resp_error(resp, 500, "InternalError",
		    "Internal error occurred: %s", err.msg);
		return CU_EINVAL;
	}
	return CU_OK;
}

/* 1: call it (with *version), 0: skip, -1: error in resp. */
static int should_call(struct as_server *srv, json_t *hook,
    const struct as_admit_attrs *at, const char **version, struct as_resp *resp)
{
	json_t *rules = json_object_get(hook, "rules"), *rule, *v;
	const char *mp = jstr(hook, "matchPolicy");
	size_t i, j;
	api_selector sel;
	bool match = false;

	*version = NULL;
	json_array_foreach(rules, i, rule)
	{
		if (rule_matches(rule, at, at->version)) {
			*version = at->version;
			break;
		}
	}
	if (*version == NULL && (mp == NULL || strcmp(mp, "Exact") != 0)) {
		/* Equivalent: the same resource in another served version,
		 * earlier rules first. */
		json_array_foreach(rules, i, rule)
		{
			json_array_foreach(at->kind->versions, j, v)
			{
				const char *ver = json_string_value(v);

				if (ver == NULL ||
				    strcmp(ver, at->version) == 0)
					continue;
				if (rule_matches(rule, at, ver)) {
					*version = ver;
					break;
				}
			}
			if (*version != NULL)
				break;
		}
	}
	if (*version == NULL)
		return 0;
	/* namespace/matcher.go */
	if (at->ns[0] != '\0' || is_namespaces(at->kind)) {
		if (selector_of(hook, "namespaceSelector", &sel, resp) != CU_OK)
			return -1;
		if (sel.nreqs == 0 && !sel.match_nothing) {
			match = true;
		} else if (is_namespaces(at->kind)) {
			match = object_labels_match(
			    &sel, at->object ? at->object : at->old);
		} else {
			struct as_kind *nk =
			    as_kind_find(srv, "", "v1", "namespaces");
			json_t *ns = nk ? as_store_get(nk, "", at->ns) : NULL;

			if (ns == NULL) {
				api_selector_dispose(&sel);
				as_resp_not_found(resp, nk, at->ns);
				return -1;
			}
			match = object_labels_match(&sel, ns);
		}
		api_selector_dispose(&sel);
		if (!match)
			return 0;
	}
	/* object/matcher.go */
	if (selector_of(hook, "objectSelector", &sel, resp) != CU_OK)
		return -1;
	match = (sel.nreqs == 0 && !sel.match_nothing) ||
		object_labels_match(&sel, at->object) ||
		object_labels_match(&sel, at->old);
	api_selector_dispose(&sel);
	return match ? 1 : 0;
}

/* Webhook configurations are never subject to webhooks
 * (rules.IsWebhookConfigurationResource), so that a broken webhook can
 * always be removed. */
static bool exempt(const struct as_admit_attrs *at)
{
	return strcmp(at->kind->group, ADM_GROUP) == 0 &&
	       (strcmp(at->kind->plural, "mutatingwebhookconfigurations") ==
		       0 ||
		   strcmp(at->kind->plural,
		       "validatingwebhookconfigurations") == 0);
}

/* ---- the review ------------------------------------------------------ */

static json_t *user_info(struct as_server *srv, const char *user)
{
	json_t *groups = json_array();
	size_t i;

	for (i = 0; i < srv->ntokens; i++) {
		const char *g = srv->tokens[i].groups;

		if (srv->tokens[i].user == NULL ||
		    strcmp(srv->tokens[i].user, user) != 0 || g == NULL)
			continue;
		while (*g != '\0') {
			size_t n = strcspn(g, ",");

			if (n > 0)
				json_array_append_new(
				    groups, json_stringn(g, n));
			g += n + (g[n] == ',');
		}
		break;
	}
	json_array_append_new(
	    groups, json_string(strcmp(user, "system:anonymous") == 0
				    ? "system:unauthenticated"
				    : "system:authenticated"));
	return json_pack("{s:s, s:o}", "username", user, "groups", groups);
}

/* obj in `version` of the kind [owned], or JSON null. */
static json_t *versioned(
    const struct as_kind *k, json_t *obj, const char *version)
{
	json_t *o;
	char *av;

	if (obj == NULL)
		return json_null();
	av = as_kind_api_version(k, version);
	if (av == NULL)
		return NULL;
	if (strcmp(av,
		jstr(obj, "apiVersion") ? jstr(obj, "apiVersion") : "") == 0) {
		cu_free(av);
		return json_incref(obj);
	}
	o = json_copy(obj);
	if (o != NULL)
		json_object_set_new(o, "apiVersion", json_string(av));
	cu_free(av);
	return o;
}

/* The AdmissionReview request, without its uid [owned]. */
static json_t *review_request(struct as_server *srv, const char *user,
    const struct as_admit_attrs *at, const char *version, json_t *obj)
{
	const struct as_kind *k = at->kind;
	json_t *r = json_pack("{s:{s:s, s:s, s:s}, s:{s:s, s:s, s:s}, "
			      "s:{s:s, s:s, s:s}, s:{s:s, s:s, s:s}, s:s, "
			      "s:o, s:o, s:o, s:b, s:O}",
	    "kind", "group", k->group, "version", version, "kind", k->kind,
	    "resource", "group", k->group, "version", version, "resource",
	    k->plural, "requestKind", "group", k->group, "version", at->version,
	    "kind", k->kind, "requestResource", "group", k->group, "version",
	    at->version, "resource", k->plural, "operation", at->operation,
	    "userInfo", user_info(srv, user), "object",
	    versioned(k, obj, version), "oldObject",
	    versioned(k, at->old, version), "dryRun", at->dry_run, "options",
	    at->options ? at->options : json_null());

	if (r == NULL)
		return NULL;
	if (at->subresource[0] != '\0') {
		json_object_set_new(
		    r, "subResource", json_string(at->subresource));
		json_object_set_new(
		    r, "requestSubResource", json_string(at->subresource));
	}
	if (at->name[0] != '\0')
		json_object_set_new(r, "name", json_string(at->name));
	if (at->ns[0] != '\0')
		json_object_set_new(r, "namespace", json_string(at->ns));
	return r;
}

/* The first AdmissionReview version both sides know: 1 = v1, 0 =
 * v1beta1, -1 none. */
static int review_version(json_t *hook)
{
	json_t *v;
	size_t i;

	json_array_foreach(
	    json_object_get(hook, "admissionReviewVersions"), i, v)
	{
		const char *s = json_string_value(v);

		if (s != NULL && strcmp(s, "v1") == 0)
			return 1;
		if (s != NULL && strcmp(s, "v1beta1") == 0)
			return 0;
	}
	return -1;
}

/* The cached or new call of `hook` for this review. NULL: no memory
 * (resp set). */
static struct as_call *call_for(const struct as_request *rq, struct as_admit *a,
    const char *config, json_t *hook, bool mutating,
    const struct as_admit_attrs *at, const char *version, json_t *obj,
    struct as_resp *resp)
{
	const char *hname = jstr(hook, "name");
	int v = review_version(hook);
	json_t *req = review_request(rq->srv, rq->user, at, version, obj);
	char *dump =
	    req ? json_dumps(req, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	char *key =
	    dump ? cu_asprintf("%c\n%s\n%s\n%d\n%s", mutating ? 'M' : 'V',
		       config, hname ? hname : "", v, dump)
		 : NULL;
	struct as_call *call = NULL;
	char *uid;

	cu_free(dump);
	if (key == NULL)
		goto oom;
	for (call = a->calls; call != NULL; call = call->next)
		if (strcmp(call->key, key) == 0) {
			cu_free(key);
			json_decref(req);
			return call;
		}
	call = cu_calloc(1, sizeof(*call));
	if (call == NULL)
		goto oom;
	call->key = key;
	key = NULL;
	call->owner = a;
	call->mutating = mutating;
	call->v1 = v == 1;
	call->timeout_s = hook_timeout(hook);
	call->next = a->calls;
	a->calls = call;
	if (v < 0) {
		call_fail(call, "could not create admission objects: webhook "
				"does not accept known AdmissionReview "
				"versions (v1, v1beta1)");
		json_decref(req);
		return call;
	}
	uid = as_uuid(rq->srv);
	snprintf(call->uid, sizeof(call->uid), "%s", uid ? uid : "");
	cu_free(uid);
	json_object_set_new(req, "uid", json_string(call->uid));
	{
		json_t *review = json_pack("{s:s, s:s, s:O}", "kind",
		    "AdmissionReview", "apiVersion",
		    v == 1 ? "admission.k8s.io/v1" : "admission.k8s.io/v1beta1",
		    "request", req);

		call->body = review ? as_json_dump(review, NULL) : NULL;
		json_decref(review);
	}
	json_decref(req);
	if (call->body == NULL) {
		call_fail(call, "failed to call webhook: out of memory");
		return call;
	}
	call_start(call, hook);
	return call;
oom:
	cu_free(key);
	json_decref(req);
	as_resp_error(resp, 500, "InternalError", "out of memory");
	return NULL;
}

/* ---- outcomes -------------------------------------------------------- */

static bool ignores_failures(json_t *hook)
{
	const char *fp = jstr(hook, "failurePolicy");

	return fp != NULL && strcmp(fp, "Ignore") == 0;
}

/* errors/statuserror.go ToStatusErr. */
static void deny(struct as_resp *resp, const char *hname, json_t *result)
{
	json_t *st = json_object(), *v;
	const char *msg = jstr(result, "message");
	const char *reason = jstr(result, "reason");
	const char *status = jstr(result, "status");
	json_int_t code = json_integer_value(json_object_get(result, "code"));
	char *text;

	if (code < 400)
		code = 400;
	if (msg != NULL && msg[0] != '\0')
		text = cu_asprintf("admission webhook \"%s\" denied the "
				   "request: %s",
		    hname, msg);
	else if (reason != NULL && reason[0] != '\0')
		text = cu_asprintf("admission webhook \"%s\" denied the "
				   "request: %s",
		    hname, reason);
	else
		text = cu_asprintf("admission webhook \"%s\" denied the "
				   "request without explanation",
		    hname);
	json_object_set_new(st, "kind", json_string("Status"));
	json_object_set_new(st, "apiVersion", json_string("v1"));
	v = json_object_get(result, "metadata");
	if (json_is_object(v))
		json_object_set(st, "metadata", v);
	else
		json_object_set_new(st, "metadata", json_object());
	json_object_set_new(st, "status",
	    json_string(status == NULL || status[0] == '\0' ||
				strcmp(status, "Success") == 0
			    ? "Failure"
			    : status));
	json_object_set_new(st, "message", json_string(text ? text : ""));
	if (reason != NULL && reason[0] != '\0')
		json_object_set_new(st, "reason", json_string(reason));
	v = json_object_get(result, "details");
	if (json_is_object(v))
		json_object_set(st, "details", v);
	json_object_set_new(st, "code", json_integer(code));
	cu_free(text);
	as_resp_status(resp, (int)code, st);
}

/* A failed call: fail open (true) or closed with a 500 in resp. */
static bool call_failed(struct as_resp *resp, json_t *hook, const char *error)
{
	const char *hname = jstr(hook, "name");
	json_t *st;
	char *msg;

	if (ignores_failures(hook)) {
		cu_warn("Failed calling webhook, failing open %s: failed "
			"calling webhook \"%s\": %s",
		    hname, hname, error);
		return true;
	}
	cu_warn("Failed calling webhook, failing closed %s: failed calling "
		"webhook \"%s\": %s",
	    hname, hname, error);
	msg = cu_asprintf("failed calling webhook \"%s\": %s", hname, error);
	as_resp_error(resp, 500, "InternalError", "Internal error occurred: %s",
	    msg ? msg : "out of memory");
	st = resp->body;
	json_object_set_new(st, "details",
	    json_pack("{s:[{s:s}]}", "causes", "message", msg ? msg : ""));
	cu_free(msg);
	return false;
}

static void add_warnings(struct as_resp *resp, json_t *r)
{
	json_t *w;
	size_t i;

	json_array_foreach(json_object_get(r, "warnings"), i, w)
	{
		if (json_is_string(w))
			as_resp_warn(resp, json_string_value(w));
	}
}

/* Suspend the request until its calls are answered. */
static bool pending(const struct as_admit *a, struct as_resp *resp)
{
	const struct as_call *c;
	int longest = 1;

	for (c = a->calls; c != NULL; c = c->next)
		if (!c->done && c->timeout_s > longest)
			longest = c->timeout_s;
	resp->delay = true;
	/* Resumed when the answers are in; the timer is only a backstop. */
	resp->delay_ms = (longest + 2) * 1000;
	return false;
}

static bool dry_run_ok(
    json_t *hook, const struct as_admit_attrs *at, struct as_resp *resp)
{
	const char *se = jstr(hook, "sideEffects");

	if (!at->dry_run ||
	    (se != NULL &&
		(strcmp(se, "None") == 0 || strcmp(se, "NoneOnDryRun") == 0)))
		return true;
	as_resp_error(resp, 400, "BadRequest",
	    "admission webhook \"%s\" does not support dry run",
	    jstr(hook, "name") ? jstr(hook, "name") : "");
	return false;
}

/* Apply the answer's patch to *obj. false: resp holds the error. */
static bool apply_patch(const struct as_call *call, json_t *hook,
    const struct as_admit_attrs *at, const char *version, json_t **obj,
    struct as_resp *resp)
{
	const char *hname = jstr(hook, "name");
	const char *p64 = jstr(call->response, "patch");
	const char *ptype = jstr(call->response, "patchType");
	json_t *patch, *doc, *out = NULL;
	json_error_t jerr;
	cu_error err;
	char *raw;
	size_t len;
	int rc;

	if (p64 == NULL || b64_decode(p64, &raw, &len) != -1 || len == 0)
		return true;
	patch = json_loadb(raw, len, JSON_DECODE_ANY, &jerr);
	cu_free(raw);
	if (!json_is_array(patch)) {
		char *why = cu_asprintf("received undecodable patch in webhook "
					"response: %s",
		    patch ? "json: cannot unmarshal into Go value of type "
			    "jsonpatch.Patch"
			  : jerr.text);

		json_decref(patch);
		rc = call_failed(resp, hook, why ? why : "out of memory");
		cu_free(why);
		return rc;
	}
	if (json_array_size(patch) == 0) {
		json_decref(patch);
		return true;
	}
	if (*obj == NULL) {
		json_decref(patch);
		as_resp_error(resp, 500, "InternalError",
		    "Internal error occurred: admission webhook \"%s\" "
		    "attempted to modify the object, which is not supported "
		    "for this operation",
		    hname);
		return false;
	}
	if (ptype == NULL || strcmp(ptype, "JSONPatch") != 0) {
		char *why = cu_asprintf(
		    "unsupported patch type \"%s\"", ptype ? ptype : "");

		json_decref(patch);
		rc = call_failed(resp, hook, why ? why : "out of memory");
		cu_free(why);
		return rc;
	}
	doc = versioned(at->kind, *obj, version);
	rc = doc ? api_json_patch_apply(&out, doc, patch, &err) : CU_ENOMEM;
	json_decref(doc);
	json_decref(patch);
	if (rc != CU_OK || !json_is_object(out)) {
		json_decref(out);
		as_resp_error(resp, 500, "InternalError",
		    "Internal error occurred: %s",
		    rc == CU_OK ? "the patched object is not an object"
				: err.msg);
		return false;
	}
	/* Back to the version the request is in. */
	if (strcmp(version, at->version) != 0) {
		char *av = as_kind_api_version(at->kind, at->version);

		json_object_set_new(
		    out, "apiVersion", json_string(av ? av : ""));
		cu_free(av);
	}
	json_decref(*obj);
	*obj = out;
	return true;
}

/* ---- the two phases -------------------------------------------------- */

static struct as_kind *configs(struct as_server *srv, bool mutating)
{
	return as_kind_find(srv, ADM_GROUP, "v1",
	    mutating ? "mutatingwebhookconfigurations"
		     : "validatingwebhookconfigurations");
}

bool as_admit_mutating_matches(
    const struct as_request *rq, const struct as_admit_attrs *at)
{
	struct as_kind *k = configs(rq->srv, true);
	struct as_resp scratch;
	size_t i, j;
	json_t *hook;
	bool any = false;

	if (k == NULL || k->nitems == 0 || ctx_of(rq) == NULL || exempt(at))
		return false;
	memset(&scratch, 0, sizeof(scratch));
	for (i = 0; i < k->nitems && !any; i++) {
		json_array_foreach(
		    json_object_get(k->items[i].obj, "webhooks"), j, hook)
		{
			const char *v;

			if (should_call(rq->srv, hook, at, &v, &scratch) != 0) {
				any = true;
				break;
			}
		}
	}
	json_decref(scratch.body);
	return any;
}

bool as_admit_mutate(const struct as_request *rq,
    const struct as_admit_attrs *at, json_t **obj, struct as_resp *resp)
{
	struct as_admit *a;
	struct as_kind *k = configs(rq->srv, true);
	struct as_admit_attrs cur = *at;
	size_t i, j;
	json_t *hook;

	if (k == NULL || k->nitems == 0 || exempt(at) ||
	    (a = ctx_of(rq)) == NULL)
		return true;
	/* Configurations in name order (the store's key order), webhooks in
	 * list order, each seeing the previous one's result. */
	for (i = 0; i < k->nitems; i++) {
		const char *config = k->items[i].name;

		json_array_foreach(
		    json_object_get(k->items[i].obj, "webhooks"), j, hook)
		{
			const char *version;
			struct as_call *call;
			int m;

			cur.object = *obj;
			m = should_call(rq->srv, hook, &cur, &version, resp);
			if (m < 0)
				return false;
			if (m == 0)
				continue;
			if (!dry_run_ok(hook, &cur, resp))
				return false;
			call = call_for(rq, a, config, hook, true, &cur,
			    version, *obj, resp);
			if (call == NULL)
				return false;
			if (!call->done)
				return pending(a, resp);
			if (call->error != NULL) {
				if (!call_failed(resp, hook, call->error))
					return false;
				continue;
			}
			add_warnings(resp, call->response);
			if (!json_is_true(
				json_object_get(call->response, "allowed"))) {
				deny(resp, jstr(hook, "name"),
				    json_object_get(call->response, "status"));
				return false;
			}
			if (!apply_patch(call, hook, &cur, version, obj, resp))
				return false;
		}
	}
	return true;
}

bool as_admit_validate(const struct as_request *rq,
    const struct as_admit_attrs *at, struct as_resp *resp)
{
	struct as_admit *a;
	struct as_kind *k = configs(rq->srv, false);
	struct call_ref {
		json_t *hook;
		struct as_call *call;
	} *refs = NULL;
	size_t n = 0, cap = 0, i, j;
	json_t *hook;
	bool waiting = false, ok = true;

	if (k == NULL || k->nitems == 0 || exempt(at) ||
	    (a = ctx_of(rq)) == NULL)
		return true;
	/* Every matching webhook is asked at once (they run in parallel);
	 * the first failure in configuration order is reported. */
	for (i = 0; i < k->nitems && ok; i++) {
		const char *config = k->items[i].name;

		json_array_foreach(
		    json_object_get(k->items[i].obj, "webhooks"), j, hook)
		{
			const char *version;
			struct as_call *call;
			int m = should_call(rq->srv, hook, at, &version, resp);

			if (m < 0 || (m > 0 && !dry_run_ok(hook, at, resp))) {
				ok = false;
				break;
			}
			if (m == 0)
				continue;
			call = call_for(rq, a, config, hook, false, at, version,
			    at->object ? at->object : NULL, resp);
			if (call == NULL || cu_grow((void **)&refs, &cap, n + 1,
						sizeof(*refs)) != CU_OK) {
				if (call != NULL)
					as_resp_error(resp, 500,
					    "InternalError", "out of memory");
				ok = false;
				break;
			}
			refs[n].hook = hook;
			refs[n].call = call;
			n++;
			if (!call->done)
				waiting = true;
		}
	}
	if (ok && waiting)
		ok = pending(a, resp);
	for (i = 0; ok && i < n; i++) {
		struct as_call *call = refs[i].call;

		if (call->error != NULL) {
			if (!call_failed(resp, refs[i].hook, call->error))
				ok = false;
			continue;
		}
		add_warnings(resp, call->response);
		if (!json_is_true(json_object_get(call->response, "allowed"))) {
			deny(resp, jstr(refs[i].hook, "name"),
			    json_object_get(call->response, "status"));
			ok = false;
		}
	}
	cu_free(refs);
	return ok;
}

/* ---- the configuration kinds ----------------------------------------- */

struct verrs {
	const struct as_kind *k;
	const char *name;
	struct as_resp *resp;
	int n;
};

static void verr(struct verrs *v, const char *field, const char *fmt, ...)
    CU_PRINTF(3, 4);

static void verr(struct verrs *v, const char *field, const char *fmt, ...)
{
	char detail[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	if (v->n++ == 0)
		as_resp_invalid(v->resp, v->k, v->name, field, "%s", detail);
	else
		as_resp_invalid_add(v->resp, field, "%s", detail);
}

static void check_enum(struct verrs *v, json_t *hook, const char *key,
    const char *prefix, const char *const *allowed, const char *dflt)
{
	json_t *j = json_object_get(hook, key);
	char field[160], list[160] = "";
	size_t i;

	if (j == NULL || json_is_null(j)) {
		if (dflt != NULL)
			json_object_set_new(hook, key, json_string(dflt));
		return;
	}
	for (i = 0; allowed[i] != NULL; i++) {
		if (json_is_string(j) &&
		    strcmp(json_string_value(j), allowed[i]) == 0)
			return;
		snprintf(list + strlen(list), sizeof(list) - strlen(list),
		    "%s\"%s\"", i ? ", " : "", allowed[i]);
	}
	snprintf(field, sizeof(field), "%s.%s", prefix, key);
	verr(v, field, "Unsupported value: \"%s\": supported values: %s",
	    json_is_string(j) ? json_string_value(j) : "", list);
}

static void check_client_config(struct verrs *v, json_t *cc, const char *p)
{
	json_t *svc = json_object_get(cc, "service");
	const char *url = jstr(cc, "url");
	char field[200];

	if (svc != NULL && json_is_null(svc))
		svc = NULL;
	snprintf(field, sizeof(field), "%s.clientConfig", p);
	if ((url == NULL) == (svc == NULL)) {
		verr(v, field,
		    "Required value: exactly one of url or service "
		    "is required");
		return;
	}
	if (url != NULL) {
		snprintf(field, sizeof(field), "%s.clientConfig.url", p);
		if (strncmp(url, "https://", 8) != 0)
			verr(v, field,
			    "Invalid value: \"%s\": 'https' is the only "
			    "allowed URL scheme",
			    url);
		else if (url[8] == '\0' || url[8] == '/')
			verr(v, field,
			    "Invalid value: \"%s\": host must be "
			    "specified",
			    url);
		else if (strpbrk(url, "?#") != NULL)
			verr(v, field,
			    "Invalid value: \"%s\": query parameters and "
			    "fragments are not allowed",
			    url);
		else if (strchr(url + 8, '@') != NULL &&
			 strchr(url + 8, '@') < url + 8 + strcspn(url + 8, "/"))
			verr(v, field,
			    "Invalid value: \"%s\": user "
			    "information is not permitted",
			    url);
		return;
	}
	{
		const char *name = jstr(svc, "name"),
			   *ns = jstr(svc, "namespace");
		const char *path = jstr(svc, "path");
		json_t *port = json_object_get(svc, "port");

		if (name == NULL || name[0] == '\0') {
			snprintf(field, sizeof(field),
			    "%s.clientConfig.service.name", p);
			verr(v, field,
			    "Required value: service name is "
			    "required");
		}
		if (ns == NULL || ns[0] == '\0') {
			snprintf(field, sizeof(field),
			    "%s.clientConfig.service.namespace", p);
			verr(v, field,
			    "Required value: service namespace is "
			    "required");
		}
		if (path != NULL && path[0] != '/') {
			snprintf(field, sizeof(field),
			    "%s.clientConfig.service.path", p);
			verr(v, field,
			    "Invalid value: \"%s\": must start with a '/'",
			    path);
		}
		if (port == NULL || json_is_null(port)) {
			json_object_set_new(svc, "port", json_integer(443));
		} else if (!json_is_integer(port) ||
			   json_integer_value(port) < 1 ||
			   json_integer_value(port) > 65535) {
			snprintf(field, sizeof(field),
			    "%s.clientConfig.service.port", p);
			verr(v, field,
			    "Invalid value: %lld: port is not valid: must be "
			    "between 1 and 65535, inclusive",
			    (long long)json_integer_value(port));
		}
	}
}

static void check_rules(struct verrs *v, json_t *rules, const char *p)
{
	static const char *const ops[] = {
	    "*", "CONNECT", "CREATE", "DELETE", "UPDATE", NULL};
	static const char *const scopes[] = {
	    "*", "Cluster", "Namespaced", NULL};
	static const char *const lists[] = {
	    "operations", "apiGroups", "apiVersions", "resources", NULL};
	json_t *rule, *op;
	size_t i, j, l;
	char field[200];

	json_array_foreach(rules, i, rule)
	{
		for (l = 0; lists[l] != NULL; l++) {
			if (json_array_size(json_object_get(rule, lists[l])) ==
			    0) {
				snprintf(field, sizeof(field),
				    "%s.rules[%zu].%s", p, i, lists[l]);
				verr(v, field, "Required value");
			}
		}
		json_array_foreach(json_object_get(rule, "operations"), j, op)
		{
			size_t o;
			bool found = false;

			for (o = 0; ops[o] != NULL; o++)
				if (json_is_string(op) &&
				    strcmp(json_string_value(op), ops[o]) == 0)
					found = true;
			if (!found) {
				snprintf(field, sizeof(field),
				    "%s.rules[%zu].operations[%zu]", p, i, j);
				verr(v, field,
				    "Unsupported value: \"%s\": supported "
				    "values: \"*\", \"CONNECT\", \"CREATE\", "
				    "\"DELETE\", \"UPDATE\"",
				    json_is_string(op) ? json_string_value(op)
						       : "");
			}
		}
		snprintf(field, sizeof(field), "%s.rules[%zu]", p, i);
		check_enum(v, rule, "scope", field, scopes, "*");
	}
}

static bool fully_qualified(const char *s)
{
	const char *p;
	int dots = 0;

	if (!as_valid_dns_subdomain(s))
		return false;
	for (p = s; *p != '\0'; p++)
		if (*p == '.')
			dots++;
	return dots >= 2;
}

bool as_webhook_config_prepare(
    const struct as_kind *k, json_t *obj, struct as_resp *resp)
{
	static const char *const fp[] = {"Fail", "Ignore", NULL};
	static const char *const mp[] = {"Equivalent", "Exact", NULL};
	static const char *const rp[] = {"Never", "IfNeeded", NULL};
	static const char *const se[] = {"None", "NoneOnDryRun", NULL};
	bool mutating = strcmp(k->plural, "mutatingwebhookconfigurations") == 0;
	struct verrs v = {k,
	    json_string_value(
		json_object_get(json_object_get(obj, "metadata"), "name")),
	    resp, 0};
	json_t *hooks = json_object_get(obj, "webhooks"), *hook, *names;
	size_t i, j;

	if (hooks == NULL || json_is_null(hooks))
		return true;
	if (!json_is_array(hooks)) {
		verr(&v, "webhooks", "Invalid value: must be a list");
		return false;
	}
	names = json_object();
	json_array_foreach(hooks, i, hook)
	{
		char p[64], field[160];
		const char *name = jstr(hook, "name");
		json_t *t, *arv, *x;
		bool known = false;
		api_selector sel;
		cu_error err;
		static const char *const sels[] = {
		    "namespaceSelector", "objectSelector", NULL};

		snprintf(p, sizeof(p), "webhooks[%zu]", i);
		if (!json_is_object(hook)) {
			verr(&v, p, "Invalid value: must be an object");
			continue;
		}
		snprintf(field, sizeof(field), "%s.name", p);
		if (name == NULL || name[0] == '\0') {
			verr(&v, field, "Required value");
		} else if (!fully_qualified(name)) {
			verr(&v, field,
			    "Invalid value: \"%s\": should be a domain with "
			    "at least three segments separated by dots",
			    name);
		} else if (json_object_get(names, name) != NULL) {
			verr(&v, field, "Duplicate value: \"%s\"", name);
		} else {
			json_object_set_new(names, name, json_true());
		}
		check_client_config(
		    &v, json_object_get(hook, "clientConfig"), p);
		check_rules(&v, json_object_get(hook, "rules"), p);
		check_enum(&v, hook, "failurePolicy", p, fp, "Fail");
		check_enum(&v, hook, "matchPolicy", p, mp, "Equivalent");
		if (mutating)
			check_enum(
			    &v, hook, "reinvocationPolicy", p, rp, "Never");
		snprintf(field, sizeof(field), "%s.sideEffects", p);
		if (json_object_get(hook, "sideEffects") == NULL ||
		    json_is_null(json_object_get(hook, "sideEffects")))
			verr(&v, field,
			    "Unsupported value: \"\": supported values: "
			    "\"None\", \"NoneOnDryRun\"");
		else
			check_enum(&v, hook, "sideEffects", p, se, NULL);
		snprintf(field, sizeof(field), "%s.admissionReviewVersions", p);
		arv = json_object_get(hook, "admissionReviewVersions");
		json_array_foreach(arv, j, x)
		{
			if (json_is_string(x) &&
			    (strcmp(json_string_value(x), "v1") == 0 ||
				strcmp(json_string_value(x), "v1beta1") == 0))
				known = true;
		}
		if (json_array_size(arv) == 0)
			verr(&v, field,
			    "Required value: must specify one of "
			    "v1, v1beta1");
		else if (!known)
			verr(&v, field,
			    "Invalid value: must include at least one of v1, "
			    "v1beta1");
		snprintf(field, sizeof(field), "%s.timeoutSeconds", p);
		t = json_object_get(hook, "timeoutSeconds");
		if (t == NULL || json_is_null(t))
			json_object_set_new(
			    hook, "timeoutSeconds", json_integer(10));
		else if (!json_is_integer(t) || json_integer_value(t) < 1 ||
			 json_integer_value(t) > 30)
			verr(&v, field,
			    "Invalid value: %lld: the timeout value must be "
			    "between 1 and 30 seconds",
			    (long long)json_integer_value(t));
		for (j = 0; sels[j] != NULL; j++) {
			x = json_object_get(hook, sels[j]);
			snprintf(field, sizeof(field), "%s.%s", p, sels[j]);
			if (x == NULL || json_is_null(x)) {
				json_object_set_new(
				    hook, sels[j], json_object());
				continue;
			}
			if (api_label_selector_decode(&sel, x, field, &err) !=
			    CU_OK) {
				const char *colon = strstr(err.msg, ": ");
				char f2[256];

				snprintf(f2, sizeof(f2), "%.*s",
				    colon ? (int)(colon - err.msg) : 0,
				    err.msg);
				verr(&v, colon ? f2 : field, "%s",
				    colon ? colon + 2 : err.msg);
			}
			api_selector_dispose(&sel);
		}
	}
	json_decref(names);
	return v.n == 0;
}
