/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/authz.c - the review APIs a delegating server calls
 * (controller-runtime's metrics filter, kube-rbac-proxy): TokenReview
 * (authentication.k8s.io/v1) answered from the server's bearer tokens,
 * SubjectAccessReview (authorization.k8s.io/v1) answered by evaluating the
 * RBAC objects in the store as kube's RBAC authorizer does, for the subset
 * docs/apiserver.md lists ("TokenReview and SubjectAccessReview").
 */
#include <stdio.h>
#include <string.h>

#include "tests/apiserver/apiserver.h"

#define SA_PREFIX "system:serviceaccount:"

/* ---- TokenReview ------------------------------------------------------ */

/* The groups of a token's user [owned], as kube reports them: the token's
 * own (comma separated), service accounts' system:serviceaccounts and
 * system:serviceaccounts:<ns>, and system:authenticated. */
static json_t *token_groups(const struct as_token *t)
{
	json_t *g = json_array();
	const char *p = t->groups;

	while (g != NULL && p != NULL && *p != '\0') {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		if (n > 0)
			json_array_append_new(g, json_stringn(p, n));
		p = e ? e + 1 : NULL;
	}
	if (g != NULL && strncmp(t->user, SA_PREFIX, strlen(SA_PREFIX)) == 0) {
		const char *ns = t->user + strlen(SA_PREFIX);
		const char *colon = strchr(ns, ':');

		json_array_append_new(g, json_string("system:serviceaccounts"));
		if (colon != NULL) {
			char *s = cu_asprintf("system:serviceaccounts:%.*s",
			    (int)(colon - ns), ns);

			if (s != NULL)
				json_array_append_new(g, json_string(s));
			cu_free(s);
		}
	}
	if (g != NULL)
		json_array_append_new(g, json_string("system:authenticated"));
	return g;
}

static const struct as_token *find_token(
    const struct as_server *srv, const char *tok)
{
	size_t i;

	for (i = 0; tok != NULL && tok[0] != '\0' && i < srv->ntokens; i++)
		if (srv->tokens[i].token != NULL &&
		    strcmp(srv->tokens[i].token, tok) == 0)
			return &srv->tokens[i];
	return NULL;
}

/* The review as decoded from the body [owned], or NULL with resp set. */
static json_t *decode_review(const struct as_request *rq, const char *av,
    const char *kind, struct as_resp *resp)
{
	json_error_t jerr;
	json_t *doc =
	    json_loadb(rq->body ? rq->body : "", rq->body_len, 0, &jerr);
	const char *a = as_jstr(doc, "apiVersion"), *k = as_jstr(doc, "kind");

	if (!json_is_object(doc)) {
		json_decref(doc);
		as_resp_error(resp, 400, "BadRequest",
		    "the body of the request could not be decoded as a %s",
		    kind);
		return NULL;
	}
	if ((a != NULL && strcmp(a, av) != 0) ||
	    (k != NULL && strcmp(k, kind) != 0)) {
		as_resp_error(resp, 400, "BadRequest",
		    "the API version in the data (%s) does not match the "
		    "expected API version (%s) or kind (%s)",
		    a ? a : "", av, kind);
		json_decref(doc);
		return NULL;
	}
	if (!json_is_object(json_object_get(doc, "spec")))
		json_object_set_new(doc, "spec", json_object());
	json_object_set_new(doc, "apiVersion", json_string(av));
	json_object_set_new(doc, "kind", json_string(kind));
	if (!json_is_object(json_object_get(doc, "metadata")))
		json_object_set_new(doc, "metadata", json_object());
	return doc;
}

static void token_review(const struct as_request *rq, struct as_resp *resp)
{
	json_t *doc =
	    decode_review(rq, "authentication.k8s.io/v1", "TokenReview", resp);
	const struct as_token *t;
	json_t *st;

	if (doc == NULL)
		return;
	t = find_token(rq->srv, as_jstr(doc, "spec.token"));
	if (t == NULL)
		st = json_pack("{sbs{}}", "authenticated", 0, "user");
	else
		st = json_pack("{sbs{ssso}}", "authenticated", 1, "user",
		    "username", t->user, "groups", token_groups(t));
	/* A token has every audience here: echo the requested ones. */
	if (st != NULL && t != NULL &&
	    json_is_array(
		json_object_get(json_object_get(doc, "spec"), "audiences")))
		json_object_set(st, "audiences",
		    json_object_get(json_object_get(doc, "spec"), "audiences"));
	json_object_set_new(doc, "status", st);
	resp->code = 201;
	json_decref(resp->body);
	resp->body = doc;
}

/* ---- SubjectAccessReview ---------------------------------------------- */

struct attrs {
	const char *user, *verb;
	json_t *groups;	  /* borrowed */
	const char *path; /* non-resource request, else NULL */
	const char *ns, *group, *resource, *sub, *name;
};

static bool has(json_t *list, const char *v)
{
	json_t *x;
	size_t i;

	json_array_foreach(list, i, x)
	{
		if (json_is_string(x) && strcmp(json_string_value(x), v) == 0)
			return true;
	}
	return false;
}

static bool has_or_star(json_t *list, const char *v)
{
	return has(list, "*") || has(list, v != NULL ? v : "");
}

/* kube's NonResourceURLMatches: exact, "*", or a prefix ending in '*'. */
static bool url_matches(json_t *urls, const char *path)
{
	json_t *x;
	size_t i;

	json_array_foreach(urls, i, x)
	{
		const char *u = json_string_value(x);
		size_t n = u ? strlen(u) : 0;

		if (u == NULL)
			continue;
		if (strcmp(u, "*") == 0 || strcmp(u, path) == 0)
			return true;
		if (n > 0 && u[n - 1] == '*' && strncmp(u, path, n - 1) == 0)
			return true;
	}
	return false;
}

static bool rule_allows(json_t *rule, const struct attrs *a)
{
	json_t *verbs = json_object_get(rule, "verbs");

	if (!has_or_star(verbs, a->verb))
		return false;
	if (a->path != NULL)
		return url_matches(
		    json_object_get(rule, "nonResourceURLs"), a->path);
	if (!has_or_star(json_object_get(rule, "apiGroups"), a->group))
		return false;
	{
		json_t *res = json_object_get(rule, "resources");
		json_t *names = json_object_get(rule, "resourceNames");
		bool ok;

		if (a->sub != NULL && a->sub[0] != '\0') {
			char *rs = cu_asprintf("%s/%s", a->resource, a->sub);
			char *star = cu_asprintf("*/%s", a->sub);

			ok = rs != NULL && star != NULL &&
			     (has(res, "*") || has(res, rs) || has(res, star));
			cu_free(rs);
			cu_free(star);
		} else
			ok = has_or_star(res, a->resource);
		if (!ok)
			return false;
		return json_array_size(names) == 0 ||
		       (a->name != NULL && has(names, a->name));
	}
}

static bool subject_matches(
    json_t *subj, const char *binding_ns, const struct attrs *a)
{
	const char *kind = as_jstr(subj, "kind");
	const char *name = as_jstr(subj, "name");

	if (kind == NULL || name == NULL)
		return false;
	if (strcmp(kind, "User") == 0)
		return strcmp(name, a->user) == 0;
	if (strcmp(kind, "Group") == 0)
		return has(a->groups, name);
	if (strcmp(kind, "ServiceAccount") == 0) {
		const char *ns = as_jstr(subj, "namespace");
		char *u;
		bool ok;

		if (ns == NULL || ns[0] == '\0')
			ns = binding_ns != NULL ? binding_ns : "";
		u = cu_asprintf(SA_PREFIX "%s:%s", ns, name);
		ok = u != NULL && strcmp(u, a->user) == 0;
		cu_free(u);
		return ok;
	}
	return false;
}

static struct as_kind *rbac_kind(struct as_server *srv, const char *plural)
{
	return as_kind_find(srv, "rbac.authorization.k8s.io", "v1", plural);
}

/* Does binding (a ClusterRoleBinding when ns is NULL) grant a? On yes,
 * *why names it as kube's RBAC authorizer does [owned]. */
static bool binding_allows(struct as_server *srv, json_t *b, const char *ns,
    const struct attrs *a, char **why)
{
	json_t *subj, *role, *rule;
	const char *rk = as_jstr(b, "roleRef.kind");
	const char *rn = as_jstr(b, "roleRef.name");
	json_t *who = NULL;
	size_t i;

	json_array_foreach(json_object_get(b, "subjects"), i, subj)
	{
		if (subject_matches(subj, ns, a)) {
			who = subj;
			break;
		}
	}
	if (who == NULL || rk == NULL || rn == NULL)
		return false;
	if (strcmp(rk, "ClusterRole") == 0)
		role = as_store_get(rbac_kind(srv, "clusterroles"), NULL, rn);
	else if (strcmp(rk, "Role") == 0 && ns != NULL)
		role = as_store_get(rbac_kind(srv, "roles"), ns, rn);
	else
		return false;
	json_array_foreach(json_object_get(role, "rules"), i, rule)
	{
		if (rule_allows(rule, a)) {
			*why = cu_asprintf("RBAC: allowed by %s \"%s\"%s%s of "
					   "%s \"%s\" to %s \"%s\"",
			    ns ? "RoleBinding" : "ClusterRoleBinding",
			    as_jstr(b, "metadata.name"), ns ? " in " : "",
			    ns ? ns : "", rk, rn, as_jstr(who, "kind"),
			    as_jstr(who, "name"));
			return true;
		}
	}
	return false;
}

static bool authorize(struct as_server *srv, const struct attrs *a, char **why)
{
	struct as_kind *crb = rbac_kind(srv, "clusterrolebindings");
	struct as_kind *rb = rbac_kind(srv, "rolebindings");
	size_t i;

	*why = NULL;
	if (has(a->groups, "system:masters"))
		return true;
	for (i = 0; crb != NULL && i < crb->nitems; i++)
		if (binding_allows(srv, crb->items[i].obj, NULL, a, why))
			return true;
	/* RoleBindings grant resources in their namespace only. */
	for (i = 0; rb != NULL && a->path == NULL && a->ns != NULL &&
		    a->ns[0] != '\0' && i < rb->nitems;
	     i++)
		if (strcmp(rb->items[i].ns, a->ns) == 0 &&
		    binding_allows(
			srv, rb->items[i].obj, rb->items[i].ns, a, why))
			return true;
	return false;
}

static void access_review(const struct as_request *rq, struct as_resp *resp)
{
	json_t *doc = decode_review(
	    rq, "authorization.k8s.io/v1", "SubjectAccessReview", resp);
	json_t *spec, *nra, *ra, *st;
	struct attrs a;
	char *why = NULL;
	bool ok;

	if (doc == NULL)
		return;
	spec = json_object_get(doc, "spec");
	nra = json_object_get(spec, "nonResourceAttributes");
	ra = json_object_get(spec, "resourceAttributes");
	memset(&a, 0, sizeof(a));
	a.user = as_jstr(spec, "user");
	a.groups = json_object_get(spec, "groups");
	if ((a.user == NULL || a.user[0] == '\0') &&
	    json_array_size(a.groups) == 0) {
		as_resp_error(resp, 422, "Invalid",
		    "SubjectAccessReview.authorization.k8s.io \"\" is "
		    "invalid: spec.user: Invalid value: \"\": at least one of "
		    "user or group must be specified");
		json_decref(doc);
		return;
	}
	if ((nra != NULL) == (ra != NULL)) {
		as_resp_error(resp, 422, "Invalid",
		    "SubjectAccessReview.authorization.k8s.io \"\" is "
		    "invalid: spec.resourceAttributes: Invalid value: "
		    "\"null\": exactly one of nonResourceAttributes or "
		    "resourceAttributes must be specified");
		json_decref(doc);
		return;
	}
	if (a.user == NULL)
		a.user = "";
	if (nra != NULL) {
		a.path = as_jstr(nra, "path") ? as_jstr(nra, "path") : "";
		a.verb = as_jstr(nra, "verb");
	} else {
		a.verb = as_jstr(ra, "verb");
		a.ns = as_jstr(ra, "namespace");
		a.group = as_jstr(ra, "group") ? as_jstr(ra, "group") : "";
		a.resource =
		    as_jstr(ra, "resource") ? as_jstr(ra, "resource") : "";
		a.sub = as_jstr(ra, "subresource");
		a.name = as_jstr(ra, "name");
	}
	if (a.verb == NULL)
		a.verb = "";
	ok = authorize(rq->srv, &a, &why);
	st = json_pack("{sb}", "allowed", ok);
	if (st != NULL && why != NULL)
		json_object_set_new(st, "reason", json_string(why));
	cu_free(why);
	json_object_set_new(doc, "status", st);
	resp->code = 201;
	json_decref(resp->body);
	resp->body = doc;
}

/* ---- routing ------------------------------------------------------------ */

bool as_authz_route(
    const struct as_request *rq, char seg[][256], int n, struct as_resp *resp)
{
	bool tr, sar;

	if (n != 4 || strcmp(seg[0], "apis") != 0 || strcmp(seg[2], "v1") != 0)
		return false;
	tr = strcmp(seg[1], "authentication.k8s.io") == 0 &&
	     strcmp(seg[3], "tokenreviews") == 0;
	sar = strcmp(seg[1], "authorization.k8s.io") == 0 &&
	      strcmp(seg[3], "subjectaccessreviews") == 0;
	if (!tr && !sar)
		return false;
	if (strcmp(rq->method, "POST") != 0) {
		as_resp_error(resp, 405, "MethodNotAllowed",
		    "the server does not allow this method on the requested "
		    "resource");
		return true;
	}
	if (tr)
		token_review(rq, resp);
	else
		access_review(rq, resp);
	return true;
}
