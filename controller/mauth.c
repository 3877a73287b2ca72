/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/mauth.c - the secure metrics endpoint's gate: bearer token ->
 * TokenReview -> SubjectAccessReview for the request's non-resource URL,
 * with controller-runtime's cache lifetimes (see mauth.h).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <openssl/evp.h>

#include "api/json.h"
#include "controller/mauth.h"

#define TOKENREVIEWS "/apis/authentication.k8s.io/v1/tokenreviews"
#define ACCESSREVIEWS "/apis/authorization.k8s.io/v1/subjectaccessreviews"
#define KEY_LEN 65 /* SHA-256 in hex, NUL */

/* One cached review: a token's (value: the TokenReview's status.user, or
 * NULL when not authenticated) or an access decision's (allowed). */
struct entry {
	char key[KEY_LEN];
	cu_ns_t expires, added;
	json_t *user; /* owned; authentication cache only */
	bool yes;     /* authenticated / allowed */
};

struct cache {
	struct entry *e; /* owned array of n */
	size_t n;
};

/* A request waiting for a review. */
struct waiter {
	ctl_mauth *m;
	ctl_http_gate_call *call; /* borrowed until answered */
	api_req *req;		  /* in flight, or NULL */
	char tkey[KEY_LEN];
	char *path, *verb; /* owned */
	json_t *user;	   /* owned: the reviewed user */
	struct waiter *prev, *next;
};

struct ctl_mauth {
	api_client *client; /* borrowed */
	struct cache authn, authz;
	struct waiter *waiters; /* with a review in flight */
	struct ctl_mauth_stats stats;
};

/* ---- cache ----------------------------------------------------------- */

static void digest_hex(const void *data, size_t len, char out[KEY_LEN])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0, i;

	out[0] = '\0';
	if (EVP_Digest(data, len, md, &n, EVP_sha256(), NULL) != 1)
		return;
	for (i = 0; i < n && i * 2 + 2 < KEY_LEN; i++)
		snprintf(out + i * 2, 3, "%02x", md[i]);
}

static struct entry *cache_find(struct cache *c, const char *key, cu_ns_t now)
{
	size_t i;

	if (key[0] == '\0')
		return NULL;
	for (i = 0; i < c->n; i++)
		if (strcmp(c->e[i].key, key) == 0)
			return c->e[i].expires > now ? &c->e[i] : NULL;
	return NULL;
}

static void cache_drop(struct cache *c, size_t i)
{
	json_decref(c->e[i].user);
	c->e[i] = c->e[--c->n];
}

/* Put (key, yes, user [borrowed; referenced]) for ttl. Best effort: a
 * failed allocation only means no caching. */
static void cache_put(struct cache *c, const char *key, bool yes, json_t *user,
    cu_ns_t ttl, cu_ns_t now)
{
	size_t i, oldest = 0;
	struct entry *e = NULL;

	if (key[0] == '\0')
		return;
	for (i = 0; i < c->n;) {
		if (strcmp(c->e[i].key, key) == 0 || c->e[i].expires <= now)
			cache_drop(c, i);
		else
			i++;
	}
	if (c->n >= CTL_MAUTH_CACHE_MAX) {
		for (i = 1; i < c->n; i++)
			if (c->e[i].added < c->e[oldest].added)
				oldest = i;
		cache_drop(c, oldest);
	}
	if (c->e == NULL &&
	    (c->e = cu_calloc(CTL_MAUTH_CACHE_MAX, sizeof(*c->e))) == NULL)
		return;
	e = &c->e[c->n++];
	memset(e, 0, sizeof(*e));
	snprintf(e->key, sizeof(e->key), "%s", key);
	e->added = now;
	e->expires = now + ttl;
	e->yes = yes;
	e->user = user != NULL ? json_incref(user) : NULL;
}

static void cache_free(struct cache *c)
{
	while (c->n > 0)
		cache_drop(c, c->n - 1);
	cu_free(c->e);
	c->e = NULL;
}

/* ---- waiters ----------------------------------------------------------- */

static void waiter_free(struct waiter *w)
{
	cu_free(w->path);
	cu_free(w->verb);
	json_decref(w->user);
	cu_free(w);
}

static void link_waiter(struct waiter *w)
{
	w->prev = NULL;
	w->next = w->m->waiters;
	if (w->m->waiters != NULL)
		w->m->waiters->prev = w;
	w->m->waiters = w;
}

static void unlink_waiter(struct waiter *w)
{
	if (w->prev != NULL)
		w->prev->next = w->next;
	else if (w->m->waiters == w)
		w->m->waiters = w->next;
	if (w->next != NULL)
		w->next->prev = w->prev;
	w->prev = w->next = NULL;
}

/* Answer the request and free w. */
static void finish(struct waiter *w, int status, const char *text)
{
	unlink_waiter(w);
	ctl_http_gate_done(w->call, status, text);
	waiter_free(w);
}

static const char *user_name(const struct waiter *w)
{
	const char *n = api_json_str(w->user, "username");

	return n != NULL ? n : "";
}

/* controller-runtime's refusals naming the user: 403 "Authorization
 * denied for user <name>", 500 "Authorization for user <name> failed". */
static void deny(struct waiter *w, int status)
{
	char text[160];

	if (status == 403)
		snprintf(text, sizeof(text),
		    "Authorization denied for user %s\n", user_name(w));
	else
		snprintf(text, sizeof(text),
		    "Authorization for user %s failed\n", user_name(w));
	finish(w, status, text);
}

/* ---- SubjectAccessReview ------------------------------------------------ */

static void decided(struct waiter *w, bool allowed)
{
	if (allowed)
		finish(w, 0, NULL);
	else
		deny(w, 403);
}

static void on_access_review(const struct api_response *resp, void *payload)
{
	struct waiter *w = payload;
	json_t *st = json_object_get(resp->body, "status");
	char key[KEY_LEN];
	bool allowed;

	w->req = NULL;
	if (resp->canceled) {
		finish(w, 503, "503 service unavailable\n");
		return;
	}
	if (resp->err != CU_OK || !json_is_object(st)) {
		cu_warn("metrics: SubjectAccessReview for user %s failed: %d "
			"%s",
		    user_name(w), resp->code, resp->message);
		deny(w, 500);
		return;
	}
	allowed = json_is_true(json_object_get(st, "allowed"));
	snprintf(key, sizeof(key), "%s", w->tkey);
	cache_put(&w->m->authz, key, allowed, NULL,
	    allowed ? CTL_MAUTH_ALLOW_TTL_NS : CTL_MAUTH_DENY_TTL_NS,
	    cu_time_mono_ns());
	if (!allowed)
		cu_debug("metrics: access denied for user %s: %s", user_name(w),
		    api_json_str(st, "reason") ? api_json_str(st, "reason")
					       : "");
	decided(w, allowed);
}

/* The review's spec for w's user and request [owned], or NULL. */
static json_t *access_spec(const struct waiter *w)
{
	json_t *spec = json_pack("{sss{ssss}}", "user", user_name(w),
	    "nonResourceAttributes", "path", w->path, "verb", w->verb);
	const char *keys[] = {"groups", "uid", "extra"};
	size_t i;

	for (i = 0; spec != NULL && i < sizeof(keys) / sizeof(keys[0]); i++) {
		json_t *v = json_object_get(w->user, keys[i]);

		if (v != NULL && !json_is_null(v))
			json_object_set(spec, keys[i], v);
	}
	return spec;
}

static void authorize(struct waiter *w)
{
	ctl_mauth *m = w->m;
	json_t *spec = access_spec(w), *body;
	struct entry *e;
	char *text = NULL;
	cu_error err;

	if (spec == NULL || api_json_dumps(spec, JSON_COMPACT | JSON_SORT_KEYS,
				0, &text, NULL) != CU_OK) {
		json_decref(spec);
		deny(w, 500);
		return;
	}
	/* w->tkey now keys the decision: the digest of the review's spec. */
	digest_hex(text, strlen(text), w->tkey);
	cu_free(text);
	if ((e = cache_find(&m->authz, w->tkey, cu_time_mono_ns())) != NULL) {
		m->stats.cache_hits++;
		json_decref(spec);
		decided(w, e->yes);
		return;
	}
	body = json_pack("{sssssO}", "apiVersion", "authorization.k8s.io/v1",
	    "kind", "SubjectAccessReview", "spec", spec);
	json_decref(spec);
	cu_error_clear(&err);
	if (body == NULL ||
	    api_request(&w->req, m->client, "POST", ACCESSREVIEWS, NULL, body,
		on_access_review, w, &err) != CU_OK) {
		json_decref(body);
		deny(w, 500);
		return;
	}
	json_decref(body);
	m->stats.access_reviews++;
	link_waiter(w);
}

/* ---- TokenReview ----------------------------------------------------------
 */

static void authenticated(struct waiter *w, bool yes, json_t *user)
{
	if (!yes || !json_is_object(user)) {
		finish(w, 401, "Unauthorized\n");
		return;
	}
	w->user = json_incref(user);
	authorize(w);
}

static void on_token_review(const struct api_response *resp, void *payload)
{
	struct waiter *w = payload;
	json_t *st = json_object_get(resp->body, "status");
	bool yes;

	w->req = NULL;
	unlink_waiter(w);
	if (resp->canceled) {
		finish(w, 503, "503 service unavailable\n");
		return;
	}
	if (resp->err != CU_OK || !json_is_object(st)) {
		cu_warn("metrics: TokenReview failed: %d %s", resp->code,
		    resp->message);
		finish(w, 500, "Authentication failed\n");
		return;
	}
	yes = json_is_true(json_object_get(st, "authenticated"));
	cache_put(&w->m->authn, w->tkey, yes, json_object_get(st, "user"),
	    CTL_MAUTH_AUTHN_TTL_NS, cu_time_mono_ns());
	authenticated(w, yes, json_object_get(st, "user"));
}

/* The token of an "Authorization: Bearer <token>" header [borrowed from
 * h], or NULL. */
static const char *bearer(const char *h)
{
	if (h == NULL || strncasecmp(h, "bearer ", 7) != 0)
		return NULL;
	h += 7;
	while (*h == ' ')
		h++;
	return *h != '\0' ? h : NULL;
}

static void gate(
    ctl_http_gate_call *call, const struct ctl_http_request *req, void *payload)
{
	ctl_mauth *m = payload;
	const char *token = bearer(ctl_http_header(req, "Authorization"));
	struct waiter *w;
	struct entry *e;
	json_t *body;
	cu_error err;
	size_t i;

	if (token == NULL) {
		ctl_http_gate_done(call, 401, "Unauthorized\n");
		return;
	}
	w = cu_calloc(1, sizeof(*w));
	if (w == NULL) {
		ctl_http_gate_done(call, 500, "Authentication failed\n");
		return;
	}
	w->m = m;
	w->call = call;
	w->path = cu_strdup(req->path);
	w->verb = cu_strdup(req->method);
	if (w->path == NULL || w->verb == NULL) {
		finish(w, 500, "Authentication failed\n");
		return;
	}
	for (i = 0; w->verb[i] != '\0'; i++)
		w->verb[i] = (char)tolower((unsigned char)w->verb[i]);
	digest_hex(token, strlen(token), w->tkey);
	if ((e = cache_find(&m->authn, w->tkey, cu_time_mono_ns())) != NULL) {
		m->stats.cache_hits++;
		authenticated(w, e->yes, e->user);
		return;
	}
	body =
	    json_pack("{sssss{ss}}", "apiVersion", "authentication.k8s.io/v1",
		"kind", "TokenReview", "spec", "token", token);
	cu_error_clear(&err);
	if (body == NULL ||
	    api_request(&w->req, m->client, "POST", TOKENREVIEWS, NULL, body,
		on_token_review, w, &err) != CU_OK) {
		json_decref(body);
		finish(w, 500, "Authentication failed\n");
		return;
	}
	json_decref(body);
	m->stats.token_reviews++;
	link_waiter(w);
}

/* ---- public -------------------------------------------------------------- */

int ctl_mauth_new(ctl_mauth **out, api_client *client, cu_error *err)
{
	ctl_mauth *m = cu_calloc(1, sizeof(*m));

	*out = NULL;
	if (m == NULL)
		return cu_error_set(err, CU_ENOMEM, "metrics: out of memory");
	m->client = client;
	*out = m;
	return CU_OK;
}

int ctl_mauth_mount(ctl_mauth *m, ctl_httpd *srv, cu_error *err)
{
	return ctl_httpd_set_gate(srv, gate, m, err);
}

void ctl_mauth_stats(const ctl_mauth *m, struct ctl_mauth_stats *out)
{
	*out = m->stats;
}

void ctl_mauth_free(ctl_mauth *m)
{
	if (m == NULL)
		return;
	/* Each cancel runs the callback, which answers 503 and unlinks. */
	while (m->waiters != NULL) {
		struct waiter *w = m->waiters;

		if (w->req != NULL)
			api_request_cancel(w->req);
		else
			finish(w, 503, "503 service unavailable\n");
	}
	cache_free(&m->authn);
	cache_free(&m->authz);
	cu_free(m);
}
