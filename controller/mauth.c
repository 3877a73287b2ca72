/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/mauth.c - the secure metrics endpoint's gate: bearer token ->
 * TokenReview -> SubjectAccessReview for the request's non-resource URL,
 * with controller-runtime's cache lifetimes; and the visibility server's,
 * as k8s.io/apiserver's delegated filters: the connection's certificate
 * or the token or system:anonymous, the request's resource attributes,
 * Status refusals (see mauth.h).
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

/* One cached review: a token's (value: the TokenReview's status.user,
 * none when not authenticated) or an access decision's (allowed, and the
 * reason of the answer). */
struct entry {
	char key[KEY_LEN];
	cu_ns_t expires, added;
	struct api_user_info user; /* authentication cache only */
	char *reason;		   /* [owned] authorization cache only */
	bool yes;		   /* authenticated / allowed */
};

struct cache {
	struct entry *e; /* owned array of n */
	size_t n;
};

/* A client address: its reviews in flight and its budget of failed
 * authentications (a token bucket). A slot is reused, oldest first, only
 * when nothing of its is in flight, so a waiter's pointer stays valid. */
struct peer {
	char ip[48];
	unsigned inflight;
	double fails;	  /* refused tokens it may still cost */
	cu_ns_t refilled; /* when fails was last topped up */
	cu_ns_t used;	  /* last request */
};

/* A request waiting for a review. */
struct waiter {
	ctl_mauth *m;
	ctl_http_gate_call *call; /* borrowed until answered */
	api_req *req;		  /* in flight, or NULL */
	char tkey[KEY_LEN];
	json_t *attrs;		   /* owned: the review's request attributes */
	struct api_user_info user; /* the reviewed user; has_user */
	bool has_user;
	bool id_failed;	   /* the connection's identity did not verify */
	struct peer *peer; /* borrowed; NULL: no slot for the address */
	bool reviewing;	   /* counted in flight */
	struct waiter *prev, *next;
};

struct ctl_mauth {
	api_client *client; /* borrowed */
	struct ctl_mauth_opts o;
	struct cache authn, authz;
	struct cache refused;	/* tokens the API server did not accept */
	struct peer *peers;	/* owned array of CTL_MAUTH_PEERS_MAX */
	unsigned inflight;	/* reviews in flight */
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
	api_user_info_dispose(&c->e[i].user);
	cu_free(c->e[i].reason);
	c->e[i] = c->e[--c->n];
}

/* Put (key, yes, user [borrowed; copied; may be NULL], reason [borrowed;
 * copied; may be NULL]) for ttl. Best effort: a failed allocation only
 * means no caching. */
static void cache_put(struct cache *c, const char *key, bool yes,
    const struct api_user_info *user, const char *reason, cu_ns_t ttl,
    cu_ns_t now)
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
	if ((user != NULL &&
		api_user_info_copy(&e->user, user, NULL) != CU_OK) ||
	    (reason != NULL && (e->reason = cu_strdup(reason)) == NULL))
		cache_drop(c, c->n - 1);
}

static void cache_free(struct cache *c)
{
	while (c->n > 0)
		cache_drop(c, c->n - 1);
	cu_free(c->e);
	c->e = NULL;
}

/* ---- identities and refusals --------------------------------------------- */

/* A Status failure as k8s.io/apiserver writes it [owned], or NULL. */
static json_t *status_doc(int code, const char *reason, const char *message)
{
	return json_pack("{s:s, s:s, s:{}, s:s, s:s, s:s, s:i}", "kind",
	    "Status", "apiVersion", "v1", "metadata", "status", "Failure",
	    "message", message, "reason", reason, "code", code);
}

static bool in_groups(const struct api_user_info *u, const char *v)
{
	size_t i;

	for (i = 0; i < u->groups.n; i++)
		if (strcmp(u->groups.items[i], v) == 0)
			return true;
	return false;
}

/* k8s.io/apiserver's AuthenticatedGroupAdder: an authenticated user is in
 * system:authenticated (u [changed]). */
static void add_authenticated(struct api_user_info *u)
{
	struct api_strlist *g = &u->groups;
	char **items, *s;

	if (u->username != NULL &&
	    strcmp(u->username, CTL_MAUTH_ANONYMOUS) == 0)
		return;
	u->has_groups = true;
	if (in_groups(u, "system:authenticated") ||
	    in_groups(u, "system:unauthenticated"))
		return;
	s = cu_strdup("system:authenticated");
	items = s != NULL ? cu_realloc(g->items, (g->n + 1) * sizeof(*items))
			  : NULL;
	if (items == NULL) {
		cu_free(s);
		return;
	}
	g->items = items;
	g->items[g->n++] = s;
}

/* ctl_mauth_forbidden's Status for the decoded attributes a. */
static json_t *forbidden_status(
    const struct api_access_attributes *a, const char *user, const char *reason)
{
	const bool ra = a->resource;
	const char *verb = ra ? a->verb : a->nr_verb;
	const char *group = a->group;
	const char *res = a->resource_name;
	const char *sub = a->subresource;
	const char *ns = a->namespace_;
	const char *name = a->name;
	char *what = NULL, *msg = NULL;
	json_t *st;

	verb = verb ? verb : "";
	group = group ? group : "";
	res = res ? res : "";
	name = name ? name : "";
	if (!ra)
		what = cu_asprintf("User \"%s\" cannot %s path \"%s\"", user,
		    verb, a->path ? a->path : "");
	else
		what = cu_asprintf("User \"%s\" cannot %s resource "
				   "\"%s%s%s\" in API group \"%s\" %s%s%s",
		    user, verb, res, sub && sub[0] ? "/" : "",
		    sub && sub[0] ? sub : "", group,
		    ns && ns[0] ? "in the namespace \""
				: "at the cluster scope",
		    ns && ns[0] ? ns : "", ns && ns[0] ? "\"" : "");
	if (what == NULL)
		return NULL;
	/* apierrors.NewForbidden(group resource, name, err). */
	if (!ra || res[0] == '\0')
		msg = cu_asprintf("forbidden: %s%s%s", what,
		    reason && reason[0] ? ": " : "", reason ? reason : "");
	else
		msg = cu_asprintf("%s%s%s%s%s%sis forbidden: %s%s%s", res,
		    group[0] ? "." : "", group, name[0] ? " \"" : "", name,
		    name[0] ? "\" " : " ", what,
		    reason && reason[0] ? ": " : "", reason ? reason : "");
	cu_free(what);
	if (msg == NULL)
		return NULL;
	st = status_doc(403, "Forbidden", msg);
	cu_free(msg);
	if (st != NULL) {
		json_t *d = json_object();

		if (d != NULL && name[0])
			json_object_set_new(d, "name", json_string(name));
		if (d != NULL && group[0])
			json_object_set_new(d, "group", json_string(group));
		if (d != NULL && res[0])
			json_object_set_new(d, "kind", json_string(res));
		json_object_set_new(st, "details", d);
	}
	return st;
}

json_t *ctl_mauth_forbidden(
    const json_t *attrs, const char *user, const char *reason)
{
	struct api_access_attributes a;
	json_t *st;

	/* Attributes that do not decode name no resource. */
	if (api_access_attributes_decode(&a, attrs, NULL) != CU_OK)
		memset(&a, 0, sizeof(a));
	st = forbidden_status(&a, user, reason);
	api_access_attributes_dispose(&a);
	return st;
}

/* k8s.io/apiserver's AlwaysAllowPaths: /healthz, /readyz, /livez. */
static bool always_allowed(const json_t *attrs)
{
	static const char *const paths[] = {"/healthz", "/readyz", "/livez"};
	struct api_access_attributes a;
	const char *p;
	size_t i;
	bool yes = false;

	if (api_access_attributes_decode(&a, attrs, NULL) != CU_OK)
		return false;
	p = a.path;
	for (i = 0; p != NULL && i < sizeof(paths) / sizeof(paths[0]); i++)
		if (strcmp(p, paths[i]) == 0)
			yes = true;
	api_access_attributes_dispose(&a);
	return yes;
}

/* ---- limits ------------------------------------------------------------ */

static struct cu_log_limit throttle_log = CU_LOG_LIMIT(
    "authentication: requests refused 429 (reviews limited)", 60, 1);
static struct cu_log_limit failed_log =
    CU_LOG_LIMIT("authentication: reviews failed", 60, 3);

/* The slot of address ip [borrowed] at now, or NULL when every slot has
 * reviews in flight. */
static struct peer *peer_get(ctl_mauth *m, const char *ip, cu_ns_t now)
{
	struct peer *p, *free_slot = NULL;
	size_t i;

	if (m->peers == NULL && (m->peers = cu_calloc(CTL_MAUTH_PEERS_MAX,
				     sizeof(*m->peers))) == NULL)
		return NULL;
	for (i = 0; i < CTL_MAUTH_PEERS_MAX; i++) {
		p = &m->peers[i];
		if (p->used != 0 && strcmp(p->ip, ip) == 0) {
			p->used = now;
			return p;
		}
		if (p->inflight == 0 &&
		    (free_slot == NULL || p->used < free_slot->used))
			free_slot = p;
	}
	if (free_slot == NULL)
		return NULL;
	memset(free_slot, 0, sizeof(*free_slot));
	snprintf(free_slot->ip, sizeof(free_slot->ip), "%s", ip);
	free_slot->fails = m->o.fail_burst;
	free_slot->refilled = free_slot->used = now;
	return free_slot;
}

static void refill(const ctl_mauth *m, struct peer *p, cu_ns_t now)
{
	p->fails += cu_ns_to_secs(now - p->refilled) * m->o.fail_per_s;
	if (p->fails > m->o.fail_burst)
		p->fails = m->o.fail_burst;
	p->refilled = now;
}

/* May w send a review now (a TokenReview with `token`)? */
static bool may_review(struct waiter *w, bool token)
{
	ctl_mauth *m = w->m;
	struct peer *p = w->peer;

	if (p == NULL || p->inflight >= m->o.per_ip_inflight)
		return false;
	/* An address with nothing in flight gets its review even when
	 * others fill the cap (up to twice the cap): a flood from a few
	 * addresses does not lock out everyone else. */
	if (m->inflight >= 2 * m->o.max_inflight ||
	    (m->inflight >= m->o.max_inflight && p->inflight > 0))
		return false;
	if (token) {
		refill(m, p, cu_time_mono_ns());
		if (p->fails < 1.0)
			return false;
	}
	return true;
}

static void review_begin(struct waiter *w)
{
	w->reviewing = true;
	w->m->inflight++;
	w->peer->inflight++;
	if (w->m->inflight > w->m->stats.inflight_peak)
		w->m->stats.inflight_peak = w->m->inflight;
}

static void review_end(struct waiter *w)
{
	if (!w->reviewing)
		return;
	w->reviewing = false;
	w->m->inflight--;
	w->peer->inflight--;
}

/* A failed authentication from w's address costs one of its budget. */
static void failed_once(struct waiter *w)
{
	if (w->peer == NULL)
		return;
	refill(w->m, w->peer, cu_time_mono_ns());
	if (w->peer->fails >= 1.0)
		w->peer->fails -= 1.0;
	else
		w->peer->fails = 0;
}

/* ---- waiters ----------------------------------------------------------- */

static void waiter_free(struct waiter *w)
{
	json_decref(w->attrs);
	api_user_info_dispose(&w->user);
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
	const char *n = w->has_user ? w->user.username : NULL;

	return n != NULL ? n : "";
}

/* Answer with st [consumed] as JSON, or text when it is NULL. */
static void finish_status(struct waiter *w, int code, json_t *st)
{
	char *out = NULL;

	if (st == NULL ||
	    api_json_dumps(st, JSON_COMPACT, 0, &out, NULL) != CU_OK) {
		json_decref(st);
		finish(w, code, "out of memory\n");
		return;
	}
	json_decref(st);
	unlink_waiter(w);
	ctl_http_gate_done_body(w->call, code, "application/json", out);
	cu_free(out);
	waiter_free(w);
}

static void unauthorized(struct waiter *w)
{
	if (w->m->o.apiserver)
		finish_status(
		    w, 401, status_doc(401, "Unauthorized", "Unauthorized"));
	else
		finish(w, 401, "Unauthorized\n");
}

/* Beyond the review limits: kube-apiserver's max-in-flight answer. */
static void too_many(struct waiter *w)
{
	ctl_mauth *m = w->m;

	m->stats.throttled++;
	cu_log_limited(&throttle_log, CU_LOG_WARN,
	    "%s: %s from %s refused 429: %u reviews in flight (at most %u, "
	    "%u per address)",
	    m->o.name, w->id_failed ? "a request" : "an unreviewed request",
	    w->peer != NULL && w->peer->ip[0] ? w->peer->ip : "?", m->inflight,
	    m->o.max_inflight, m->o.per_ip_inflight);
	finish(w, 429, CTL_MAUTH_TOO_MANY);
}

/* The refusals naming the user: controller-runtime's 403 "Authorization
 * denied for user <name>" and 500 "Authorization for user <name>
 * failed", or k8s.io/apiserver's Forbidden and InternalError Status. */
static void deny(struct waiter *w, int status, const char *reason)
{
	char text[160];

	if (w->m->o.apiserver) {
		json_t *st;

		if (status == 403)
			st =
			    ctl_mauth_forbidden(w->attrs, user_name(w), reason);
		else {
			char *msg =
			    cu_asprintf("Internal error occurred: "
					"authorization of user %s failed",
				user_name(w));

			st = status_doc(500, "InternalError",
			    msg != NULL ? msg : "Internal error occurred");
			cu_free(msg);
		}
		finish_status(w, status, st);
		return;
	}
	if (status == 403)
		snprintf(text, sizeof(text),
		    "Authorization denied for user %s\n", user_name(w));
	else
		snprintf(text, sizeof(text),
		    "Authorization for user %s failed\n", user_name(w));
	finish(w, status, text);
}

/* ---- SubjectAccessReview ------------------------------------------------ */

static void decided(struct waiter *w, bool allowed, const char *reason)
{
	if (allowed)
		finish(w, 0, NULL);
	else
		deny(w, 403, reason);
}

int ctl_mauth_access_answer(const json_t *body, bool *allowed, char **reason)
{
	struct api_subject_access_review sar;

	*allowed = false;
	*reason = NULL;
	if (api_subject_access_review_decode(&sar, body, NULL) != CU_OK)
		return CU_EINVAL;
	if (!sar.has_status) {
		api_subject_access_review_dispose(&sar);
		return CU_EINVAL;
	}
	*allowed = sar.status.allowed;
	if (sar.status.reason != NULL && sar.status.reason[0] != '\0') {
		*reason = sar.status.reason;
		sar.status.reason = NULL;
	}
	api_subject_access_review_dispose(&sar);
	return CU_OK;
}

static void on_access_review(const struct api_response *resp, void *payload)
{
	struct waiter *w = payload;
	char key[KEY_LEN];
	char *reason;
	bool allowed;

	w->req = NULL;
	review_end(w);
	if (resp->canceled) {
		finish(w, 503, "503 service unavailable\n");
		return;
	}
	if (resp->err != CU_OK ||
	    ctl_mauth_access_answer(resp->body, &allowed, &reason) != CU_OK) {
		cu_log_limited(&failed_log, CU_LOG_WARN,
		    "%s: SubjectAccessReview for user %s failed: %d %s",
		    w->m->o.name, user_name(w), resp->code, resp->message);
		deny(w, 500, NULL);
		return;
	}
	snprintf(key, sizeof(key), "%s", w->tkey);
	/* The reason goes along (k8s.io/apiserver's Forbidden message ends
	 * with it). */
	cache_put(&w->m->authz, key, allowed, NULL, reason,
	    allowed ? w->m->o.allow_ttl_ns : w->m->o.deny_ttl_ns,
	    cu_time_mono_ns());
	if (!allowed)
		cu_debug("%s: access denied for user %s: %s", w->m->o.name,
		    user_name(w), reason ? reason : "");
	decided(w, allowed, reason);
	cu_free(reason);
}

/* The review's spec for w's user and request [owned], or NULL. */
static json_t *access_spec(const struct waiter *w)
{
	json_t *spec = json_pack("{ss}", "user", user_name(w));

	if (spec != NULL &&
	    (json_object_update(spec, w->attrs) != 0 ||
		api_user_info_encode_spec(spec, &w->user, NULL) != CU_OK)) {
		json_decref(spec);
		return NULL;
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

	if (m->o.apiserver && (in_groups(&w->user, "system:masters") ||
				  always_allowed(w->attrs))) {
		/* k8s.io/apiserver's delegated authorizer: the super-user
		 * group and the health paths are always allowed, without a
		 * review. */
		json_decref(spec);
		decided(w, true, NULL);
		return;
	}
	if (spec == NULL || api_json_dumps(spec, JSON_COMPACT | JSON_SORT_KEYS,
				0, &text, NULL) != CU_OK) {
		json_decref(spec);
		deny(w, 500, NULL);
		return;
	}
	/* w->tkey now keys the decision: the digest of the review's spec. */
	digest_hex(text, strlen(text), w->tkey);
	cu_free(text);
	if ((e = cache_find(&m->authz, w->tkey, cu_time_mono_ns())) != NULL) {
		m->stats.cache_hits++;
		json_decref(spec);
		decided(w, e->yes, e->reason);
		return;
	}
	if (!may_review(w, false)) {
		json_decref(spec);
		too_many(w);
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
		deny(w, 500, NULL);
		return;
	}
	json_decref(body);
	m->stats.access_reviews++;
	review_begin(w);
	link_waiter(w);
}

/* ---- TokenReview ----------------------------------------------------------
 */

/* user [borrowed; copied; NULL: not authenticated]. */
static void authenticated(struct waiter *w, const struct api_user_info *user)
{
	if (user == NULL) {
		unauthorized(w);
		return;
	}
	if (api_user_info_copy(&w->user, user, NULL) != CU_OK) {
		deny(w, 500, NULL);
		return;
	}
	w->has_user = true;
	if (w->m->o.apiserver)
		add_authenticated(&w->user);
	authorize(w);
}

int ctl_mauth_token_answer(
    const json_t *body, bool *authenticated, struct api_user_info *user)
{
	struct api_token_review tr;

	*authenticated = false;
	memset(user, 0, sizeof(*user));
	if (api_token_review_decode(&tr, body, NULL) != CU_OK)
		return CU_EINVAL;
	if (!tr.has_status) {
		api_token_review_dispose(&tr);
		return CU_EINVAL;
	}
	if (tr.status.authenticated && tr.status.has_user &&
	    tr.status.user.username != NULL &&
	    tr.status.user.username[0] != '\0') {
		*authenticated = true;
		*user = tr.status.user;
		memset(&tr.status.user, 0, sizeof(tr.status.user));
	}
	api_token_review_dispose(&tr);
	return CU_OK;
}

static void on_token_review(const struct api_response *resp, void *payload)
{
	struct waiter *w = payload;
	struct api_user_info user;
	bool yes;

	w->req = NULL;
	review_end(w);
	unlink_waiter(w);
	if (resp->canceled) {
		finish(w, 503, "503 service unavailable\n");
		return;
	}
	if (resp->err != CU_OK ||
	    ctl_mauth_token_answer(resp->body, &yes, &user) != CU_OK) {
		failed_once(w);
		cu_log_limited(&failed_log, CU_LOG_WARN,
		    "%s: TokenReview failed: %d %s", w->m->o.name, resp->code,
		    resp->message);
		/* k8s.io/apiserver: an authenticator's error is a 401. */
		if (w->m->o.apiserver)
			unauthorized(w);
		else
			finish(w, 500, "Authentication failed\n");
		return;
	}
	if (yes)
		cache_put(&w->m->authn, w->tkey, true, &user, NULL,
		    w->m->o.authn_ttl_ns, cu_time_mono_ns());
	else {
		failed_once(w);
		cache_put(&w->m->refused, w->tkey, false, NULL, NULL,
		    w->m->o.refused_ttl_ns, cu_time_mono_ns());
	}
	authenticated(w, yes ? &user : NULL);
	api_user_info_dispose(&user);
}

/* system:anonymous in system:unauthenticated into *u [zeroed]. */
static int anonymous(struct api_user_info *u)
{
	u->username = cu_strdup(CTL_MAUTH_ANONYMOUS);
	u->groups.items = cu_calloc(1, sizeof(*u->groups.items));
	if (u->groups.items != NULL &&
	    (u->groups.items[0] = cu_strdup("system:unauthenticated")) != NULL)
		u->groups.n = 1;
	u->has_groups = true;
	if (u->username != NULL && u->groups.n == 1)
		return CU_OK;
	api_user_info_dispose(u);
	return CU_ENOMEM;
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

/* The SAR attributes of a request by default: its path as a non-resource
 * URL, the method in lower case as the verb [owned], or NULL. */
static json_t *default_attrs(const struct ctl_http_request *req)
{
	char verb[16];
	size_t i;

	for (i = 0; req->method[i] != '\0' && i + 1 < sizeof(verb); i++)
		verb[i] = (char)tolower((unsigned char)req->method[i]);
	verb[i] = '\0';
	return json_pack("{s{ssss}}", "nonResourceAttributes", "path",
	    req->path, "verb", verb);
}

static void send_token_review(struct waiter *w, const char *token)
{
	ctl_mauth *m = w->m;
	json_t *body;
	cu_error err;

	body =
	    json_pack("{sssss{ss}}", "apiVersion", "authentication.k8s.io/v1",
		"kind", "TokenReview", "spec", "token", token);
	if (!may_review(w, true)) {
		json_decref(body);
		too_many(w);
		return;
	}
	cu_error_clear(&err);
	if (body == NULL ||
	    api_request(&w->req, m->client, "POST", TOKENREVIEWS, NULL, body,
		on_token_review, w, &err) != CU_OK) {
		json_decref(body);
		if (m->o.apiserver)
			unauthorized(w);
		else
			finish(w, 500, "Authentication failed\n");
		return;
	}
	json_decref(body);
	m->stats.token_reviews++;
	review_begin(w);
	link_waiter(w);
}

static void gate(
    ctl_http_gate_call *call, const struct ctl_http_request *req, void *payload)
{
	ctl_mauth *m = payload;
	const char *token = bearer(ctl_http_header(req, "Authorization"));
	struct waiter *w;
	struct entry *e;
	json_t *user = NULL;
	char ip[48];
	cu_ns_t now = cu_time_mono_ns();

	if (token == NULL && m->o.identify == NULL && !m->o.apiserver) {
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
	w->peer = peer_get(m, ctl_http_peer_ip(req, ip, sizeof(ip)), now);
	w->attrs = m->o.attributes != NULL ? m->o.attributes(req, m->o.payload)
					   : default_attrs(req);
	if (w->attrs == NULL) {
		finish(w, 500, "Authentication failed\n");
		return;
	}
	/* k8s.io/apiserver's order: the connection's certificate (front
	 * proxy, then client CA), then the bearer token, then anonymous -
	 * unless an authenticator failed. */
	switch (m->o.identify != NULL ? m->o.identify(req, &user, m->o.payload)
				      : CTL_MAUTH_WHO_NONE) {
	case CTL_MAUTH_WHO_USER: {
		struct api_user_info u;
		bool ok = api_user_info_decode(&u, user, NULL) == CU_OK;

		json_decref(user);
		authenticated(w, ok ? &u : NULL);
		api_user_info_dispose(&u);
		return;
	}
	case CTL_MAUTH_WHO_ERROR:
		w->id_failed = true;
		break;
	case CTL_MAUTH_WHO_NONE:
		break;
	}
	if (token == NULL) {
		if (!m->o.apiserver || w->id_failed) {
			unauthorized(w);
			return;
		}
		if (anonymous(&w->user) != CU_OK) {
			deny(w, 500, NULL);
			return;
		}
		w->has_user = true;
		authorize(w);
		return;
	}
	digest_hex(token, strlen(token), w->tkey);
	if ((e = cache_find(&m->authn, w->tkey, now)) != NULL ||
	    (e = cache_find(&m->refused, w->tkey, now)) != NULL) {
		m->stats.cache_hits++;
		authenticated(w, e->yes ? &e->user : NULL);
		return;
	}
	send_token_review(w, token);
}

/* ---- public -------------------------------------------------------------- */

int ctl_mauth_new(ctl_mauth **out, api_client *client, cu_error *err)
{
	return ctl_mauth_new_opts(out, client, NULL, err);
}

int ctl_mauth_new_opts(ctl_mauth **out, api_client *client,
    const struct ctl_mauth_opts *o, cu_error *err)
{
	ctl_mauth *m = cu_calloc(1, sizeof(*m));

	*out = NULL;
	if (m == NULL)
		return cu_error_set(err, CU_ENOMEM, "metrics: out of memory");
	m->client = client;
	if (o != NULL)
		m->o = *o;
	if (m->o.name == NULL)
		m->o.name = "metrics";
	if (m->o.authn_ttl_ns <= 0)
		m->o.authn_ttl_ns = CTL_MAUTH_AUTHN_TTL_NS;
	if (m->o.allow_ttl_ns <= 0)
		m->o.allow_ttl_ns = CTL_MAUTH_ALLOW_TTL_NS;
	if (m->o.deny_ttl_ns <= 0)
		m->o.deny_ttl_ns = CTL_MAUTH_DENY_TTL_NS;
	if (m->o.refused_ttl_ns <= 0)
		m->o.refused_ttl_ns = CTL_MAUTH_REFUSED_TTL_NS;
	if (m->o.max_inflight == 0)
		m->o.max_inflight = CTL_MAUTH_MAX_INFLIGHT;
	if (m->o.per_ip_inflight == 0)
		m->o.per_ip_inflight = CTL_MAUTH_PER_IP_INFLIGHT;
	if (m->o.fail_burst == 0)
		m->o.fail_burst = CTL_MAUTH_FAIL_BURST;
	if (m->o.fail_per_s <= 0)
		m->o.fail_per_s = CTL_MAUTH_FAIL_PER_S;
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
	cache_free(&m->refused);
	cu_free(m->peers);
	cu_free(m);
}
