/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/aggregator.c - the aggregation layer as kube-apiserver's
 * kube-aggregator runs it: an APIService (apiregistration.k8s.io/v1) named
 * <version>.<group> with a spec.service makes every request under
 * /apis/<group>/<version> a proxied one. The request goes, method, path,
 * query and body unchanged, to https://<service>.<namespace>.svc:<port>
 * (port 443 by default), dialled on 127.0.0.1 at that port as the
 * conversion and admission webhooks are (convert.c, webhooks.c); the
 * server certificate is checked against spec.caBundle for that name, or
 * not at all with spec.insecureSkipTLSVerify. The user the request was
 * authenticated as goes along in X-Remote-User and X-Remote-Group (the
 * front-proxy headers, the groups: the token's and system:authenticated),
 * on a connection authenticated with the front-proxy client certificate
 * (CN front-proxy-client, made at start-up by its own CA), so that the
 * backend trusts them: the CA, the allowed name and the header names are
 * published in ConfigMap kube-system/extension-apiserver-authentication as
 * kube-apiserver publishes them. Headers the client sent are not
 * forwarded (only Accept and Content-Type). The backend's status,
 * Content-Type and body come back as they are.
 *
 * A backend that cannot be reached is a 503 with kube's plain-text body
 * ("error trying to reach service: dial tcp ...: connect: connection
 * refused"), which clients report as "the server is currently unable to
 * handle the request". Discovery lists the aggregated groups in /apis
 * and answers /apis/<group> from the APIServices (versions by
 * versionPriority, highest first); /apis/<group>/<version> is the
 * backend's own, proxied. There is no availability controller polling
 * the backends: every request dials, and what it saw is recorded in the
 * Available condition (Passed, or FailedDiscoveryCheck with the reason)
 * when that changes.
 *
 * Calls do not block the server (30 s, 5 s for the version's discovery
 * document as kube-aggregator allows): they run on a libcurl multi handle
 * on the server's loop while the request's connection is suspended, so a
 * backend may call back into this server while answering (the visibility
 * server's TokenReview and SubjectAccessReview). Requests without a
 * connection (in-process) are proxied synchronously.
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/json.h"
#include "tests/apiserver/apiserver.h"

#define AGG_TIMEOUT_S 30
/* kube-aggregator's deadline for a discovery request
 * (/apis/<group>/<version> itself). */
#define AGG_DISCOVERY_TIMEOUT_S 5
#define AGG_MAX_RESPONSE (64u * 1024u * 1024u)

static struct as_kind *apiservices(struct as_server *srv)
{
	return as_kind_find(srv, "apiregistration.k8s.io", "v1", "apiservices");
}

/* A proxied APIService's spec.service, or NULL (absent, or local). */
static json_t *service_of(json_t *apisvc)
{
	json_t *svc = as_jget(apisvc, "spec.service");

	return json_is_object(svc) ? svc : NULL;
}

json_t *as_aggregated(
    struct as_server *srv, const char *group, const char *version)
{
	struct as_kind *k = apiservices(srv);
	char name[600];
	json_t *o;

	if (k == NULL || group == NULL || version == NULL)
		return NULL;
	snprintf(name, sizeof(name), "%s.%s", version, group);
	o = as_store_get(k, "", name);
	return service_of(o) != NULL ? o : NULL;
}

/* Kubernetes' version order (CompareKubeAwareVersionStrings): v<N> is
 * newer than v<N>beta<M>, newer than v<N>alpha<M>; higher numbers are
 * newer; names of another form come after, alphabetically. *rank is 0
 * for those. */
static void kube_version(const char *v, int *rank, long *major, long *minor)
{
	char *end;

	*rank = 0;
	*major = *minor = 0;
	if (v[0] != 'v' || v[1] < '1' || v[1] > '9')
		return;
	*major = strtol(v + 1, &end, 10);
	if (*end == '\0') {
		*rank = 3;
		return;
	}
	if (strncmp(end, "beta", 4) == 0 || strncmp(end, "alpha", 5) == 0) {
		const char *m = end + (end[0] == 'b' ? 4 : 5);
		char *mend;

		if (*m < '1' || *m > '9')
			return;
		*minor = strtol(m, &mend, 10);
		if (*mend == '\0')
			*rank = end[0] == 'b' ? 2 : 1;
	}
}

/* a sorts before b in discovery: higher versionPriority, then the newer
 * Kubernetes version. */
static bool version_before(json_t *a, json_t *b)
{
	json_int_t pa = json_integer_value(as_jget(a, "spec.versionPriority"));
	json_int_t pb = json_integer_value(as_jget(b, "spec.versionPriority"));
	const char *va = as_jstr(a, "spec.version");
	const char *vb = as_jstr(b, "spec.version");
	int ra, rb;
	long maa, mia, mab, mib;

	if (pa != pb)
		return pa > pb;
	va = va ? va : "";
	vb = vb ? vb : "";
	kube_version(va, &ra, &maa, &mia);
	kube_version(vb, &rb, &mab, &mib);
	if ((ra == 0) != (rb == 0))
		return rb == 0;
	if (ra == 0)
		return strcmp(va, vb) < 0;
	if (maa != mab)
		return maa > mab;
	if (ra != rb)
		return ra > rb;
	return mia > mib;
}

/* The APIServices of group [borrowed] in discovery order, into a new
 * array [owned]. */
static json_t *group_services(struct as_server *srv, const char *group)
{
	struct as_kind *k = apiservices(srv);
	json_t *out = json_array();
	size_t i;

	for (i = 0; k != NULL && out != NULL && i < k->nitems; i++) {
		json_t *o = k->items[i].obj;
		const char *g = as_jstr(o, "spec.group");
		size_t j;

		if (service_of(o) == NULL || g == NULL || strcmp(g, group) != 0)
			continue;
		for (j = 0; j < json_array_size(out); j++)
			if (version_before(o, json_array_get(out, j)))
				break;
		json_array_insert(out, j, o);
	}
	return out;
}

json_t *as_aggregated_group(struct as_server *srv, const char *group)
{
	json_t *svcs = group_services(srv, group);
	json_t *versions = json_array(), *o, *g = NULL;
	size_t i;

	json_array_foreach(svcs, i, o)
	{
		char *gv =
		    cu_asprintf("%s/%s", group, as_jstr(o, "spec.version"));

		json_array_append_new(versions,
		    json_pack("{s:s, s:s}", "groupVersion", gv ? gv : "",
			"version", as_jstr(o, "spec.version")));
		cu_free(gv);
	}
	if (json_array_size(versions) > 0)
		g = json_pack("{s:s, s:s, s:s, s:O, s:O}", "kind", "APIGroup",
		    "apiVersion", "v1", "name", group, "versions", versions,
		    "preferredVersion", json_array_get(versions, 0));
	json_decref(versions);
	json_decref(svcs);
	return g;
}

void as_aggregated_groups(struct as_server *srv, json_t *groups)
{
	struct as_kind *k = apiservices(srv);
	size_t i, j;

	for (i = 0; k != NULL && i < k->nitems; i++) {
		const char *g = as_jstr(k->items[i].obj, "spec.group");
		json_t *doc, *have;
		bool dup = false;

		if (service_of(k->items[i].obj) == NULL || g == NULL)
			continue;
		json_array_foreach(groups, j, have)
		{
			if (strcmp(as_jstr(have, "name"), g) == 0)
				dup = true;
		}
		if (dup || (doc = as_aggregated_group(srv, g)) == NULL)
			continue;
		json_object_del(doc, "kind");
		json_object_del(doc, "apiVersion");
		json_array_append_new(groups, doc);
	}
}

/* ---- validation ---------------------------------------------------------- */

/* One more cause: the first through as_resp_invalid, then added. */
static void invalid(struct as_resp *resp, const struct as_kind *k,
    const char *name, int *n, const char *field, const char *msg)
{
	if ((*n)++ == 0)
		as_resp_invalid(resp, k, name, field, "%s", msg);
	else
		as_resp_invalid_add(resp, field, "%s", msg);
}

bool as_apiservice_prepare(
    const struct as_kind *k, json_t *obj, struct as_resp *resp)
{
	const char *name = as_jstr(obj, "metadata.name");
	const char *group = as_jstr(obj, "spec.group");
	const char *version = as_jstr(obj, "spec.version");
	json_t *spec = json_object_get(obj, "spec");
	json_t *svc = json_object_get(spec, "service");
	json_int_t gpm =
	    json_integer_value(json_object_get(spec, "groupPriorityMinimum"));
	json_int_t vp =
	    json_integer_value(json_object_get(spec, "versionPriority"));
	bool insecure =
	    json_is_true(json_object_get(spec, "insecureSkipTLSVerify"));
	const char *ca = as_jstr(obj, "spec.caBundle");
	char want[600], msg[700];
	int n = 0;

	name = name ? name : "";
	/* Defaults: a service's port is 443. */
	if (json_is_object(svc) && json_object_get(svc, "port") == NULL)
		json_object_set_new(svc, "port", json_integer(443));
	snprintf(want, sizeof(want), "%s.%s", version ? version : "",
	    group ? group : "");
	if (version == NULL || version[0] == '\0')
		invalid(resp, k, name, &n, "spec.version", "Required value");
	if (strcmp(name, want) != 0) {
		snprintf(msg, sizeof(msg),
		    "Invalid value: \"%s\": must be `spec.version+\".\"+"
		    "spec.group`",
		    name);
		invalid(resp, k, name, &n, "metadata.name", msg);
	}
	if (gpm <= 0 || gpm > 20000) {
		snprintf(msg, sizeof(msg),
		    "Invalid value: %lld: must be positive and less than "
		    "20000",
		    (long long)gpm);
		invalid(resp, k, name, &n, "spec.groupPriorityMinimum", msg);
	}
	if (vp <= 0 || vp > 1000) {
		snprintf(msg, sizeof(msg),
		    "Invalid value: %lld: must be positive and less than 1000",
		    (long long)vp);
		invalid(resp, k, name, &n, "spec.versionPriority", msg);
	}
	if (!json_is_object(svc) && insecure)
		invalid(resp, k, name, &n, "spec.insecureSkipTLSVerify",
		    "Invalid value: true: local APIServices may not have "
		    "insecureSkipTLSVerify");
	if (insecure && ca != NULL && ca[0] != '\0')
		invalid(resp, k, name, &n, "spec.insecureSkipTLSVerify",
		    "Invalid value: true: may not be true if caBundle is "
		    "present");
	return n == 0;
}

/* ---- the proxy ----------------------------------------------------------- */

struct call {
	char *url;  /* owned */
	char *addr; /* owned: 127.0.0.1:port, as dialled */
	struct curl_slist *resolve, *hdrs;
	char *ca; /* owned PEM */
	size_t ca_len;
	cu_buf in;
	char ctype[128]; /* the backend's Content-Type */
	char errbuf[CURL_ERROR_SIZE];
};

static size_t on_write(char *ptr, size_t size, size_t n, void *userdata)
{
	struct call *c = userdata;

	return cu_buf_add(&c->in, ptr, size * n) == CU_OK ? size * n : 0;
}

static size_t on_header(char *ptr, size_t size, size_t n, void *userdata)
{
	struct call *c = userdata;
	size_t len = size * n;
	static const char name[] = "content-type:";

	if (len > sizeof(name) - 1 &&
	    strncasecmp(ptr, name, sizeof(name) - 1) == 0) {
		const char *v = ptr + sizeof(name) - 1;
		size_t vl = len - (sizeof(name) - 1);

		while (vl > 0 && (*v == ' ' || *v == '\t')) {
			v++;
			vl--;
		}
		while (vl > 0 && (v[vl - 1] == '\r' || v[vl - 1] == '\n'))
			vl--;
		snprintf(c->ctype, sizeof(c->ctype), "%.*s", (int)vl, v);
	}
	return len;
}

/* The query string of rq, re-encoded ("" when none) [owned]. */
struct qb {
	cu_buf b;
	CURL *e;
	bool failed;
};

static enum MHD_Result add_arg(
    void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	struct qb *q = cls;
	char *k = curl_easy_escape(q->e, key, 0);
	char *v = value ? curl_easy_escape(q->e, value, 0) : NULL;

	(void)kind;
	if (k != NULL && !q->failed)
		q->failed =
		    cu_buf_add(&q->b, q->b.len ? "&" : "?", 1) != CU_OK ||
		    cu_buf_add(&q->b, k, strlen(k)) != CU_OK ||
		    (v != NULL &&
			(cu_buf_add(&q->b, "=", 1) != CU_OK ||
			    cu_buf_add(&q->b, v, strlen(v)) != CU_OK));
	curl_free(k);
	curl_free(v);
	return MHD_YES;
}

static char *query_of(const struct as_request *rq, CURL *e)
{
	struct qb q;
	char *out;

	cu_buf_init(&q.b, 64 * 1024);
	q.e = e;
	q.failed = false;
	if (rq->conn != NULL)
		MHD_get_connection_values(
		    rq->conn, MHD_GET_ARGUMENT_KIND, add_arg, &q);
	else if (json_is_object(rq->params)) {
		const char *key;
		json_t *v;

		json_object_foreach(rq->params, key, v)
		{
			add_arg(&q, MHD_GET_ARGUMENT_KIND, key,
			    json_string_value(v));
		}
	}
	out = q.failed	? NULL
	      : q.b.len ? cu_buf_detach(&q.b, NULL)
			: cu_strdup("");
	cu_buf_dispose(&q.b);
	return out;
}

static bool endpoint(
    struct call *c, json_t *svc, const char *path, const char *query)
{
	return as_service_target(
	    svc, path, query, &c->url, &c->addr, &c->resolve);
}

static void call_dispose(struct call *c)
{
	cu_free(c->url);
	cu_free(c->addr);
	cu_free(c->ca);
	curl_slist_free_all(c->resolve);
	curl_slist_free_all(c->hdrs);
	cu_buf_dispose(&c->in);
}

/* kube's 503 for a backend it could not get an answer from: the Go
 * error text, plain (http.Error). */
static void unavailable(struct as_resp *resp, const char *why)
{
	char *text = cu_asprintf("error trying to reach service: %s\n", why);

	resp->code = 503;
	resp->content_type = "text/plain; charset=utf-8";
	resp->raw = text ? text : cu_strdup("service unavailable\n");
	resp->raw_len = resp->raw ? strlen(resp->raw) : 0;
}

static char *transport_error(const struct call *c, CURLcode rc)
{
	const char *why = c->errbuf[0] ? c->errbuf : curl_easy_strerror(rc);

	switch (rc) {
	case CURLE_COULDNT_CONNECT:
		return cu_asprintf(
		    "dial tcp %s: connect: connection refused", c->addr);
	case CURLE_OPERATION_TIMEDOUT:
		return cu_strdup("context deadline exceeded");
	case CURLE_PEER_FAILED_VERIFICATION:
		return cu_asprintf(
		    "tls: failed to verify certificate: x509: %s",
		    strstr(why, "issuer") || strstr(why, "self")
			? "certificate signed by unknown authority"
			: why);
	default:
		return cu_strdup(why);
	}
}

/* A static Content-Type for what the backend sent. */
static const char *static_ctype(const char *ct)
{
	if (strncmp(ct, "application/json", 16) == 0)
		return "application/json";
	if (strncmp(ct, "application/yaml", 16) == 0)
		return "application/yaml";
	if (strncmp(ct, "application/vnd.kubernetes.protobuf", 35) == 0)
		return "application/vnd.kubernetes.protobuf";
	if (strncmp(ct, "text/plain", 10) == 0)
		return "text/plain; charset=utf-8";
	return ct[0] ? "application/octet-stream" : "text/plain; charset=utf-8";
}

/* The user's groups as X-Remote-Group headers (from the token table). */
static struct curl_slist *remote_groups(
    struct as_server *srv, const char *user, struct curl_slist *h)
{
	size_t i;

	for (i = 0; h != NULL && user != NULL && i < srv->ntokens; i++) {
		const char *p = srv->tokens[i].groups;

		if (strcmp(srv->tokens[i].user, user) != 0 || p == NULL)
			continue;
		while (h != NULL && *p != '\0') {
			size_t n = strcspn(p, ",");
			char *line =
			    cu_asprintf("X-Remote-Group: %.*s", (int)n, p);

			if (n > 0 && line != NULL)
				h = curl_slist_append(h, line);
			cu_free(line);
			p += n;
			if (*p == ',')
				p++;
		}
		break;
	}
	if (h != NULL && user != NULL)
		h = curl_slist_append(
		    h, "X-Remote-Group: system:authenticated");
	return h;
}

static struct curl_slist *forward_headers(const struct as_request *rq)
{
	static const char *const pass[] = {"Accept", "Content-Type", NULL};
	struct curl_slist *h = curl_slist_append(NULL, "Expect:");
	size_t i;

	for (i = 0; h != NULL && pass[i] != NULL; i++) {
		const char *v = as_header(rq, pass[i]);
		char *line = v ? cu_asprintf("%s: %s", pass[i], v) : NULL;

		if (line != NULL)
			h = curl_slist_append(h, line);
		cu_free(line);
	}
	if (h != NULL && rq->user != NULL) {
		char *line = cu_asprintf("X-Remote-User: %s", rq->user);

		if (line != NULL)
			h = curl_slist_append(h, line);
		cu_free(line);
		h = remote_groups(rq->srv, rq->user, h);
	}
	return h;
}

/* Is path /apis/<group>/<version> (a discovery request)? */
static bool discovery(const char *path)
{
	int slashes = 0;
	size_t n = strlen(path);

	while (n > 1 && path[n - 1] == '/')
		n--;
	for (; n > 0; n--)
		slashes += path[n - 1] == '/';
	return slashes == 3;
}

/* The availability controller's condition, from what the last proxied
 * request saw: Available True (Passed) or False (FailedDiscoveryCheck,
 * why [borrowed]), written (status) only when it changes. apisvc
 * [borrowed] may be freed by the write. */
static void record_available(
    struct as_server *srv, json_t *apisvc, const char *why)
{
	struct as_kind *k = apiservices(srv);
	json_t *conds = as_jget(apisvc, "status.conditions"), *c, *upd;
	const char *want = why == NULL ? "True" : "False";
	char now[CU_TIME_RFC3339_LEN];
	size_t i;

	json_array_foreach(conds, i, c)
	{
		if (strcmp(as_jstr(c, "type") ? as_jstr(c, "type") : "",
			"Available") == 0 &&
		    strcmp(as_jstr(c, "status") ? as_jstr(c, "status") : "",
			want) == 0)
			return;
	}
	if (k == NULL || (upd = json_deep_copy(apisvc)) == NULL)
		return;
	cu_time_format_rfc3339(cu_time_now_ns(), now);
	json_object_set_new(upd, "status",
	    json_pack("{s:[{s:s, s:s, s:s, s:s, s:s}]}", "conditions", "type",
		"Available", "status", want, "lastTransitionTime", now,
		"reason", why == NULL ? "Passed" : "FailedDiscoveryCheck",
		"message", why == NULL ? "all checks passed" : why));
	(void)as_internal_update(srv, k, upd, true, "system:apiserver");
}

/* The easy handle's options for the call c [borrowed; must outlive e]. */
static CURLcode setup_easy(
    const struct as_request *rq, CURL *e, struct call *c, bool insecure)
{
	CURLcode rc = CURLE_OK;

	rc |= curl_easy_setopt(e, CURLOPT_URL, c->url);
	rc |= curl_easy_setopt(e, CURLOPT_ERRORBUFFER, c->errbuf);
	rc |= curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	rc |= curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "https");
	rc |= curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
	rc |= curl_easy_setopt(e, CURLOPT_WRITEDATA, c);
	rc |= curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
	rc |= curl_easy_setopt(e, CURLOPT_HEADERDATA, c);
	rc |= curl_easy_setopt(e, CURLOPT_USERAGENT, "kube-apiserver");
	rc |= curl_easy_setopt(e, CURLOPT_TIMEOUT_MS,
	    (long)(discovery(rq->path) ? AGG_DISCOVERY_TIMEOUT_S
				       : AGG_TIMEOUT_S) *
		1000L);
	rc |= curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, rq->method);
	if (strcmp(rq->method, "GET") != 0 && strcmp(rq->method, "HEAD") != 0 &&
	    strcmp(rq->method, "DELETE") != 0) {
		/* A copy: the call may outlive this run of the handler. */
		rc |= curl_easy_setopt(
		    e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)rq->body_len);
		rc |= curl_easy_setopt(
		    e, CURLOPT_COPYPOSTFIELDS, rq->body ? rq->body : "");
	}
	if (strcmp(rq->method, "HEAD") == 0)
		rc |= curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
	rc |= curl_easy_setopt(e, CURLOPT_HTTPHEADER, c->hdrs);
	rc |= curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, insecure ? 0L : 1L);
	rc |= curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, insecure ? 0L : 2L);
	rc |= curl_easy_setopt(e, CURLOPT_RESOLVE, c->resolve);
	if (c->ca != NULL) {
		struct curl_blob b = {c->ca, c->ca_len, CURL_BLOB_COPY};

		rc |= curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &b);
	}
	if (rq->srv->proxy.cert_pem != NULL) {
		struct curl_blob cb = {rq->srv->proxy.cert_pem,
		    strlen(rq->srv->proxy.cert_pem), CURL_BLOB_COPY};
		struct curl_blob kb = {rq->srv->proxy.key_pem,
		    strlen(rq->srv->proxy.key_pem), CURL_BLOB_COPY};

		rc |= curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &cb);
		rc |= curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
		rc |= curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &kb);
		rc |= curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
	}
	return rc;
}

/* ---- the asynchronous client -------------------------------------------
 *
 * A backend may call this server while it answers (the visibility server's
 * TokenReview and SubjectAccessReview): calls run on a libcurl multi handle
 * driven by the server's loop, the request's connection suspended (the
 * handler answers "delay") until the call is done, then the handler runs
 * again and takes the answer.
 */

struct job {
	struct job *next, *prev;
	struct as_server *srv;
	struct MHD_Connection *conn; /* the suspended request's */
	struct call c;
	CURL *e;
	bool done;
	CURLcode rc;
};

struct agg_client {
	struct as_server *srv;
	struct as_curlev cl;
	struct job *jobs;
};

static struct agg_client *aggc; /* one server per process */
static bool agg_stopped;	/* shutting down: no new calls */

/* A finished transfer: its request is resumed to answer. */
static void transfer_done(CURL *e, CURLcode rc, void *ctx)
{
	struct agg_client *c = ctx;
	struct job *j = NULL;

	curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&j);
	if (j == NULL)
		return;
	j->rc = rc;
	j->done = true;
	curl_multi_remove_handle(c->cl.multi, j->e);
	as_http_resume(j->srv, j->conn);
}

static struct agg_client *client_get(struct as_server *srv)
{
	struct agg_client *c = aggc;

	if (c != NULL)
		return c;
	if ((c = cu_calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->srv = srv;
	if (as_curlev_init(&c->cl, srv->loop, transfer_done, c) != CU_OK) {
		cu_free(c);
		return NULL;
	}
	aggc = c;
	return c;
}

static void job_free(struct job *j)
{
	if (aggc != NULL) {
		if (!j->done)
			curl_multi_remove_handle(aggc->cl.multi, j->e);
		if (j->prev != NULL)
			j->prev->next = j->next;
		else if (aggc->jobs == j)
			aggc->jobs = j->next;
		if (j->next != NULL)
			j->next->prev = j->prev;
	}
	curl_easy_cleanup(j->e);
	call_dispose(&j->c);
	cu_free(j);
}

void as_aggregator_stop(struct as_server *srv)
{
	struct agg_client *c = aggc;

	(void)srv;
	agg_stopped = true;
	if (c == NULL)
		return;
	while (c->jobs != NULL)
		job_free(c->jobs);
	as_curlev_dispose(&c->cl);
	cu_free(c);
	aggc = NULL;
}

static struct job *job_of(const struct as_request *rq)
{
	struct job *j;

	for (j = aggc != NULL ? aggc->jobs : NULL; j != NULL; j = j->next)
		if (j->conn == rq->conn)
			return j;
	return NULL;
}

/* The answer of a finished call into resp; the Available condition. */
static void answered(const struct as_request *rq, json_t *apisvc,
    struct call *c, CURL *e, CURLcode rc, struct as_resp *resp)
{
	long status = 0;
	char *why, *msg;

	if (rc != CURLE_OK) {
		why = transport_error(c, rc);
		unavailable(resp, why ? why : "unknown error");
		msg = cu_asprintf("failing or missing response from %s: %s",
		    c->url, why ? why : "unknown error");
		cu_free(why);
		if (msg != NULL)
			record_available(rq->srv, apisvc, msg);
		cu_free(msg);
		return;
	}
	curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
	resp->code = (int)status;
	resp->content_type = static_ctype(c->ctype);
	resp->raw_len = c->in.len;
	resp->raw = c->in.len ? cu_buf_detach(&c->in, NULL) : cu_strdup("");
	if (resp->raw == NULL)
		as_resp_error(resp, 500, "InternalError", "out of memory");
	record_available(rq->srv, apisvc, NULL);
}

void as_aggregator_proxy(
    const struct as_request *rq, json_t *apisvc, struct as_resp *resp)
{
	json_t *svc = service_of(apisvc);
	const char *ca = as_jstr(apisvc, "spec.caBundle");
	bool insecure =
	    json_is_true(as_jget(apisvc, "spec.insecureSkipTLSVerify"));
	struct job *j = rq->conn != NULL ? job_of(rq) : NULL;
	struct agg_client *ac;
	struct call c;
	CURL *e;
	CURLcode rc = CURLE_OK;
	char *query;

	if (j == NULL && rq->conn != NULL && agg_stopped) {
		unavailable(resp, "the API server is shutting down");
		return;
	}
	if (j != NULL) {
		if (!j->done) {
			/* Woken before the answer: wait on. */
			resp->delay = true;
			resp->delay_ms = (AGG_TIMEOUT_S + 5) * 1000;
			return;
		}
		answered(rq, apisvc, &j->c, j->e, j->rc, resp);
		job_free(j);
		return;
	}
	e = curl_easy_init();
	memset(&c, 0, sizeof(c));
	cu_buf_init(&c.in, AGG_MAX_RESPONSE);
	if (e == NULL || svc == NULL) {
		if (e != NULL)
			curl_easy_cleanup(e);
		as_resp_error(resp, 500, "InternalError", "out of memory");
		return;
	}
	query = query_of(rq, e);
	if (query == NULL || !endpoint(&c, svc, rq->path, query)) {
		cu_free(query);
		curl_easy_cleanup(e);
		call_dispose(&c);
		as_resp_error(resp, 500, "InternalError", "out of memory");
		return;
	}
	cu_free(query);
	if (!insecure && ca != NULL && ca[0] != '\0' &&
	    (api_base64_decode(ca, &c.ca, &c.ca_len, NULL) != CU_OK ||
		strstr(c.ca, "-----BEGIN") == NULL)) {
		curl_easy_cleanup(e);
		call_dispose(&c);
		unavailable(resp, "unable to load root certificates: unable "
				  "to parse bytes as PEM block");
		return;
	}
	c.hdrs = forward_headers(rq);
	if (rq->conn != NULL) {
		/* The call's state moves into the job before curl is told
		 * where it lives. */
		j = cu_calloc(1, sizeof(*j));
		ac = client_get(rq->srv);
		if (j == NULL || ac == NULL) {
			cu_free(j);
			curl_easy_cleanup(e);
			call_dispose(&c);
			as_resp_error(
			    resp, 500, "InternalError", "out of memory");
			return;
		}
		j->srv = rq->srv;
		j->conn = rq->conn;
		j->e = e;
		j->c = c;
		rc = setup_easy(rq, e, &j->c, insecure);
		rc |= curl_easy_setopt(e, CURLOPT_PRIVATE, j);
		if (j->c.hdrs == NULL || rc != CURLE_OK ||
		    curl_multi_add_handle(ac->cl.multi, e) != CURLM_OK) {
			j->done = true; /* not in the multi handle */
			job_free(j);
			as_resp_error(resp, 500, "InternalError",
			    "cannot set up the HTTPS client");
			return;
		}
		j->next = ac->jobs;
		if (ac->jobs != NULL)
			ac->jobs->prev = j;
		ac->jobs = j;
		resp->delay = true;
		resp->delay_ms = (AGG_TIMEOUT_S + 5) * 1000;
		return;
	}
	/* In-process requests (no connection to suspend): synchronous. */
	rc = setup_easy(rq, e, &c, insecure);
	if (c.hdrs == NULL || rc != CURLE_OK) {
		curl_easy_cleanup(e);
		call_dispose(&c);
		as_resp_error(resp, 500, "InternalError",
		    "cannot set up the HTTPS client");
		return;
	}
	rc = curl_easy_perform(e);
	answered(rq, apisvc, &c, e, rc, resp);
	curl_easy_cleanup(e);
	call_dispose(&c);
}
