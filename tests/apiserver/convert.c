/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/convert.c - CRD conversion webhooks as kube-apiserver
 * calls them (apiextensions-apiserver's webhook converter): when a client
 * reads, writes, lists or watches a custom resource in a version other
 * than the stored one and the CRD's spec.conversion.strategy is Webhook,
 * each object goes through a ConversionReview v1 POSTed to the CRD's
 * spec.conversion.webhook.clientConfig (url, or a service reference
 * dialled on 127.0.0.1 at service.port as webhooks.c does, with the
 * in-cluster name for TLS; caBundle as the trusted roots; 30 s timeout,
 * "?timeout=30s" in the URL as the real server sends it). The answer is
 * checked as the real server checks it (uid, result.status, one object
 * per object sent, the desired apiVersion, the kind kept; only labels and
 * annotations of metadata are taken from the webhook). Any failure is a
 * 500 Status without a reason whose message is kube's: "conversion
 * webhook for <group>/<version>, Kind=<kind> failed: <why>" (the version
 * being the one converted from), or "... returned failure: <message>".
 *
 * Calls are synchronous (curl easy): a conversion webhook does not call
 * back into the API server, and tests' webhooks answer on loopback. The
 * handlers run at the storage version; this file converts the request
 * body in and the reply (object, list items; a Table's rows are checked
 * to convert) out, and watch events on
 * their way to a watcher (an ERROR event with the Status ends the stream
 * when one fails).
 */
#include <curl/curl.h>
#include <stdio.h>
#include <string.h>

#include "api/json.h"
#include "tests/apiserver/apiserver.h"

#define CONV_TIMEOUT_S 30
#define CONV_MAX_RESPONSE (3u * 1024u * 1024u)

/* The stored CRD of k [borrowed], or NULL. */
static json_t *crd_of(struct as_server *srv, const struct as_kind *k)
{
	struct as_kind *crds = as_kind_find(
	    srv, "apiextensions.k8s.io", "v1", "customresourcedefinitions");
	char name[300];

	if (crds == NULL || !(k->flags & AS_CUSTOM))
		return NULL;
	snprintf(name, sizeof(name), "%s.%s", k->plural, k->group);
	return as_store_get(crds, "", name);
}

/* The webhook clientConfig of k's CRD [borrowed], or NULL when the
 * strategy is not Webhook. */
static json_t *client_config(struct as_server *srv, const struct as_kind *k)
{
	json_t *conv = as_jget(crd_of(srv, k), "spec.conversion");
	const char *strategy = as_jstr(conv, "strategy");

	if (strategy == NULL || strcmp(strategy, "Webhook") != 0)
		return NULL;
	return as_jget(conv, "webhook.clientConfig");
}

bool as_convert_needed(
    struct as_server *srv, const struct as_kind *k, const char *version)
{
	return k != NULL && version != NULL && version[0] != '\0' &&
	       k->storage == NULL && (k->flags & AS_CUSTOM) &&
	       strcmp(version, k->version) != 0 &&
	       client_config(srv, k) != NULL;
}

/* ---- one call ---------------------------------------------------------- */

struct call {
	char *url;  /* owned: as shown in errors */
	char *addr; /* owned: host:port dialled */
	struct curl_slist *resolve, *hdrs;
	char *ca; /* owned PEM */
	size_t ca_len;
	cu_buf in;
	char errbuf[CURL_ERROR_SIZE];
};

static size_t on_write(char *ptr, size_t size, size_t n, void *userdata)
{
	struct call *c = userdata;

	return cu_buf_add(&c->in, ptr, size * n) == CU_OK ? size * n : 0;
}

static bool endpoint(struct call *c, json_t *cc)
{
	const char *url = as_jstr(cc, "url");
	json_t *svc = json_object_get(cc, "service");

	if (url != NULL) {
		const char *host = strstr(url, "://");
		size_t hl;

		host = host ? host + 3 : url;
		hl = strcspn(host, "/?#");
		c->url = cu_asprintf("%s%stimeout=%ds", url,
		    strchr(url, '?') ? "&" : "?", CONV_TIMEOUT_S);
		c->addr = memchr(host, ':', hl) != NULL
			      ? cu_strndup(host, hl)
			      : cu_asprintf("%.*s:443", (int)hl, host);
		return c->url != NULL && c->addr != NULL;
	}
	if (json_is_object(svc)) {
		const char *path = as_jstr(svc, "path");
		json_int_t port =
		    json_integer_value(json_object_get(svc, "port"));
		char *host, *entry;

		if (port <= 0)
			port = 443;
		host = cu_asprintf("%s.%s.svc",
		    as_jstr(svc, "name") ? as_jstr(svc, "name") : "",
		    as_jstr(svc, "namespace") ? as_jstr(svc, "namespace") : "");
		if (host == NULL)
			return false;
		c->url = cu_asprintf("https://%s:%lld%s?timeout=%ds", host,
		    (long long)port, path && path[0] ? path : "/",
		    CONV_TIMEOUT_S);
		c->addr = cu_asprintf("127.0.0.1:%lld", (long long)port);
		entry = cu_asprintf("%s:%lld:127.0.0.1", host, (long long)port);
		cu_free(host);
		if (entry != NULL)
			c->resolve = curl_slist_append(NULL, entry);
		cu_free(entry);
		return c->url != NULL && c->addr != NULL && c->resolve != NULL;
	}
	return false;
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

/* Go's http client wording for a failed POST (as webhooks.c words it). */
static char *transport_error(const struct call *c, CURLcode rc)
{
	const char *why = c->errbuf[0] ? c->errbuf : curl_easy_strerror(rc);

	switch (rc) {
	case CURLE_COULDNT_CONNECT:
		return cu_asprintf("Post \"%s\": dial tcp %s: connect: "
				   "connection refused",
		    c->url, c->addr);
	case CURLE_OPERATION_TIMEDOUT:
		return cu_asprintf(
		    "Post \"%s\": context deadline exceeded", c->url);
	case CURLE_PEER_FAILED_VERIFICATION:
		return cu_asprintf("Post \"%s\": tls: failed to verify "
				   "certificate: x509: %s",
		    c->url,
		    strstr(why, "issuer") || strstr(why, "self")
			? "certificate signed by unknown authority"
			: why);
	default:
		return cu_asprintf("Post \"%s\": %s", c->url, why);
	}
}

/* POST body to cc; *answer [owned] the parsed reply. NULL, or the
 * reason of the failure [owned: cu_free]. */
static char *post(json_t *cc, const char *body, json_t **answer)
{
	struct call c;
	const char *ca = as_jstr(cc, "caBundle");
	CURL *e;
	CURLcode rc = CURLE_OK;
	long status = 0;
	char *why = NULL;

	*answer = NULL;
	memset(&c, 0, sizeof(c));
	cu_buf_init(&c.in, CONV_MAX_RESPONSE);
	if (!endpoint(&c, cc)) {
		call_dispose(&c);
		return cu_strdup("could not get REST client: exactly one of "
				 "url or service is required");
	}
	if (ca != NULL && ca[0] != '\0' &&
	    (api_base64_decode(ca, &c.ca, &c.ca_len, NULL) != CU_OK ||
		strstr(c.ca, "-----BEGIN") == NULL)) {
		call_dispose(&c);
		return cu_strdup("could not get REST client: unable to load "
				 "root certificates: unable to parse bytes as "
				 "PEM block");
	}
	c.hdrs = curl_slist_append(NULL, "Content-Type: application/json");
	if (c.hdrs != NULL)
		c.hdrs = curl_slist_append(c.hdrs, "Accept: application/json");
	e = curl_easy_init();
	if (e == NULL || c.hdrs == NULL) {
		if (e != NULL)
			curl_easy_cleanup(e);
		call_dispose(&c);
		return cu_strdup("out of memory");
	}
	rc |= curl_easy_setopt(e, CURLOPT_URL, c.url);
	rc |= curl_easy_setopt(e, CURLOPT_ERRORBUFFER, c.errbuf);
	rc |= curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	rc |= curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "https");
	rc |= curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
	rc |= curl_easy_setopt(e, CURLOPT_WRITEDATA, &c);
	rc |= curl_easy_setopt(e, CURLOPT_USERAGENT, "kube-apiserver");
	rc |= curl_easy_setopt(
	    e, CURLOPT_TIMEOUT_MS, (long)CONV_TIMEOUT_S * 1000L);
	rc |= curl_easy_setopt(e, CURLOPT_POSTFIELDS, body);
	rc |= curl_easy_setopt(
	    e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
	rc |= curl_easy_setopt(e, CURLOPT_HTTPHEADER, c.hdrs);
	rc |= curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
	rc |= curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
	if (c.resolve != NULL)
		rc |= curl_easy_setopt(e, CURLOPT_RESOLVE, c.resolve);
	if (c.ca != NULL) {
		struct curl_blob b = {c.ca, c.ca_len, CURL_BLOB_COPY};

		rc |= curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &b);
	}
	if (rc != CURLE_OK)
		why = cu_strdup("cannot set up the HTTPS client");
	else if ((rc = curl_easy_perform(e)) != CURLE_OK)
		why = transport_error(&c, rc);
	else {
		curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
		*answer =
		    json_loadb(c.in.ptr ? c.in.ptr : "", c.in.len, 0, NULL);
		if (status != 200)
			why = cu_asprintf("the server rejected our request "
					  "(post %s): %.*s",
			    c.url, (int)(c.in.len > 200 ? 200 : c.in.len),
			    c.in.ptr ? c.in.ptr : "");
		else if (!json_is_object(*answer))
			why = cu_strdup("unable to decode the response: not "
					"a ConversionReview");
		if (why != NULL) {
			json_decref(*answer);
			*answer = NULL;
		}
	}
	curl_easy_cleanup(e);
	call_dispose(&c);
	return why;
}

/* ---- the review ---------------------------------------------------------- */

/* metadata of orig with labels and annotations of conv (the real server
 * keeps everything else of metadata as it was). */
static void restore_meta(json_t *conv, json_t *orig)
{
	json_t *md = json_deep_copy(json_object_get(orig, "metadata"));
	json_t *cmd = json_object_get(conv, "metadata");
	static const char *const keep[] = {"labels", "annotations"};
	size_t i;

	if (md == NULL)
		return;
	for (i = 0; i < 2; i++) {
		json_t *v = json_object_get(cmd, keep[i]);

		if (v != NULL)
			json_object_set(md, keep[i], v);
		else
			json_object_del(md, keep[i]);
	}
	json_object_set_new(conv, "metadata", md);
}

/* obj converted to version, or NULL and *msg [owned] kube's message. */
static json_t *convert(struct as_server *srv, const struct as_kind *k,
    json_t *obj, const char *version, char **msg)
{
	json_t *cc = client_config(srv, k), *review, *answer = NULL, *resp,
	       *objs, *out;
	const char *from =
	    json_string_value(json_object_get(obj, "apiVersion"));
	char *desired = as_kind_api_version(k, version), *body, *why = NULL;
	char uid[40];
	const char *st;

	*msg = NULL;
	snprintf(uid, sizeof(uid), "%08x-%04x-4%03x-8%03x-%012llx",
	    (unsigned)as_rand(srv), (unsigned)(as_rand(srv) & 0xffff),
	    (unsigned)(as_rand(srv) & 0xfff), (unsigned)(as_rand(srv) & 0xfff),
	    (unsigned long long)(as_rand(srv) & 0xffffffffffffULL));
	review = json_pack("{s:s, s:s, s:{s:s, s:s, s:[O]}}", "apiVersion",
	    "apiextensions.k8s.io/v1", "kind", "ConversionReview", "request",
	    "uid", uid, "desiredAPIVersion", desired ? desired : "", "objects",
	    obj);
	body = review ? as_json_dump(review, NULL) : NULL;
	json_decref(review);
	if (body == NULL || desired == NULL)
		why = cu_strdup("out of memory");
	else if (cc == NULL)
		why = cu_strdup("the CRD has no conversion webhook");
	else
		why = post(cc, body, &answer);
	cu_free(body);
	resp = json_object_get(answer, "response");
	st = as_jstr(resp, "result.status");
	objs = json_object_get(resp, "convertedObjects");
	out = json_array_get(objs, 0);
	if (why == NULL && !json_is_object(resp))
		why = cu_strdup("no response provided");
	else if (why == NULL && (as_jstr(resp, "uid") == NULL ||
				    strcmp(as_jstr(resp, "uid"), uid) != 0))
		why = cu_asprintf("expected response uid \"%s\", got \"%s\"",
		    uid, as_jstr(resp, "uid") ? as_jstr(resp, "uid") : "");
	if (why == NULL && (st == NULL || strcmp(st, "Success") != 0)) {
		*msg = cu_asprintf("conversion webhook for %s, Kind=%s "
				   "returned failure: %s",
		    from ? from : "", k->kind,
		    as_jstr(resp, "result.message")
			? as_jstr(resp, "result.message")
			: "");
		goto fail;
	}
	if (why == NULL && json_array_size(objs) != 1)
		why = cu_asprintf("expected 1 converted objects, got %zu",
		    json_array_size(objs));
	else if (why == NULL &&
		 (!json_is_object(out) || as_jstr(out, "apiVersion") == NULL ||
		     strcmp(as_jstr(out, "apiVersion"), desired) != 0))
		why = cu_asprintf("invalid converted object: expected "
				  "apiVersion \"%s\"",
		    desired);
	else if (why == NULL && (as_jstr(out, "kind") == NULL ||
				    strcmp(as_jstr(out, "kind"), k->kind) != 0))
		why = cu_asprintf("invalid converted object: expected kind "
				  "\"%s\"",
		    k->kind);
	if (why != NULL) {
		*msg = cu_asprintf("conversion webhook for %s, Kind=%s failed: "
				   "%s",
		    from ? from : "", k->kind, why);
		goto fail;
	}
	out = json_incref(out);
	restore_meta(out, obj);
	json_decref(answer);
	cu_free(desired);
	return out;
fail:
	cu_free(why);
	json_decref(answer);
	cu_free(desired);
	return NULL;
}

/* kube's Status for an error that is not an API error: code 500, no
 * reason. */
static json_t *failure_status(const char *msg)
{
	return json_pack("{s:s, s:s, s:{}, s:s, s:s, s:i}", "kind", "Status",
	    "apiVersion", "v1", "metadata", "status", "Failure", "message",
	    msg ? msg : "conversion failed", "code", 500);
}

json_t *as_convert(struct as_server *srv, const struct as_kind *k, json_t *obj,
    const char *version, struct as_resp *resp)
{
	char *msg = NULL;
	json_t *out = convert(srv, k, obj, version, &msg);

	if (out == NULL)
		as_resp_status(resp, 500, failure_status(msg));
	cu_free(msg);
	return out;
}

/* The real server validates a body against its own version's schema
 * (after defaulting) before converting it: a wrong type is the 422 of
 * that version, not a conversion failure. The check runs on a defaulted
 * copy; the body converted is the one sent (pruning and unknown-field
 * reporting happen at the storage version, in the handlers). */
static bool valid_in_version(struct as_server *srv, const struct as_kind *k,
    const char *version, json_t *obj, struct as_resp *resp)
{
	json_t *versions = as_jget(crd_of(srv, k), "spec.versions"), *v,
	       *schema = NULL, *copy, *unknown;
	struct as_kind tmp;
	bool ok;
	size_t i;

	json_array_foreach(versions, i, v)
	{
		if (as_jstr(v, "name") != NULL &&
		    strcmp(as_jstr(v, "name"), version) == 0)
			schema = as_jget(v, "schema.openAPIV3Schema");
	}
	if (schema == NULL)
		return true;
	tmp = *k;
	tmp.schema = schema;
	copy = json_deep_copy(obj);
	unknown = json_array();
	if (copy == NULL || unknown == NULL) {
		json_decref(copy);
		json_decref(unknown);
		return true; /* the storage version's checks still run */
	}
	as_schema_apply(&tmp, copy, unknown);
	ok = as_schema_validate(&tmp, copy, NULL, resp);
	json_decref(copy);
	json_decref(unknown);
	return ok;
}

bool as_convert_in(struct as_server *srv, const struct as_kind *k,
    const char *version, json_t **obj, struct as_resp *resp)
{
	json_t *out;

	if (!as_convert_needed(srv, k, version))
		return true;
	if (!valid_in_version(srv, k, version, *obj, resp))
		return false;
	out = as_convert(srv, k, *obj, k->version, resp);
	if (out == NULL)
		return false;
	json_decref(*obj);
	*obj = out;
	return true;
}

void as_convert_reply(struct as_server *srv, const struct as_kind *k,
    const char *version, struct as_resp *resp)
{
	json_t *body = resp->body, *items, *o;
	const char *kind = as_jstr(body, "kind");
	char *av;
	size_t i;

	if (resp->code < 200 || resp->code >= 300 || kind == NULL ||
	    !as_convert_needed(srv, k, version))
		return;
	if (strcmp(kind, k->kind) == 0) {
		o = as_convert(srv, k, body, version, resp);
		if (o != NULL) {
			json_decref(resp->body);
			resp->body = o;
		}
		return;
	}
	if (strcmp(kind, "Table") == 0) {
		/* The cells come from the stored objects (cueue's CRDs print
		 * the same values in every version), but the real server
		 * converts each row's object first: so does this, for the
		 * failure. */
		json_t *rows = json_object_get(body, "rows"), *row;

		json_array_foreach(rows, i, row)
		{
			json_t *md = as_jget(row, "object.metadata");
			json_t *st = as_store_get(k,
			    as_jstr(md, "namespace") ? as_jstr(md, "namespace")
						     : "",
			    as_jstr(md, "name") ? as_jstr(md, "name") : "");

			if (st == NULL)
				continue;
			o = as_convert(srv, k, st, version, resp);
			if (o == NULL)
				return;
			json_decref(o);
		}
		return;
	}
	if (strcmp(kind, k->list_kind) != 0)
		return; /* a Status: nothing in the kind's shape */
	items = json_object_get(body, "items");
	for (i = 0; i < json_array_size(items); i++) {
		o = as_convert(srv, k, json_array_get(items, i), version, resp);
		if (o == NULL)
			return;
		json_array_set_new(items, i, o);
	}
	av = as_kind_api_version(k, version);
	if (av != NULL)
		json_object_set_new(body, "apiVersion", json_string(av));
	cu_free(av);
}

char *as_convert_event(
    struct as_watch *w, json_t *obj, uint64_t rv_override, size_t *len)
{
	char *msg = NULL, *text;
	json_t *o;
	char buf[32];

	o = convert(w->srv, w->kind, obj, w->convert_to, &msg);
	if (o == NULL) {
		json_t *st = failure_status(msg);

		cu_free(msg);
		as_watch_error(w, st);
		json_decref(st);
		return NULL;
	}
	if (rv_override != 0) {
		snprintf(
		    buf, sizeof(buf), "%llu", (unsigned long long)rv_override);
		as_jset(o, "metadata.resourceVersion", json_string(buf));
	}
	text = as_json_dump(o, len);
	json_decref(o);
	return text;
}
