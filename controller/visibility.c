/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/visibility.c - Kueue's visibility API on the controller's
 * HTTPS server: discovery documents, the pendingworkloads of a
 * ClusterQueue or LocalQueue from the engine's listing, Status errors
 * (see visibility.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/json.h"
#include "controller/httpd.h"
#include "controller/visibility.h"

#define VIS_PREFIX "/apis/" CTL_VIS_GROUP
#define VIS_MAX_SEGS 8
#define VIS_SEG_MAX 254 /* a DNS subdomain is at most 253 */

static const char *const versions[] = {"v1beta2", "v1beta1", NULL};

/* ---- replies ----------------------------------------------------------- */

static void reply_json(struct ctl_http_response *resp, int status, json_t *doc)
{
	char *out = NULL;
	size_t len = 0;

	resp->content_type = "application/json";
	if (doc == NULL ||
	    api_json_dumps(doc, JSON_COMPACT, 0, &out, &len) != CU_OK) {
		json_decref(doc);
		(void)ctl_http_reply(resp, 500, "out of memory");
		return;
	}
	json_decref(doc);
	resp->status = status;
	if (cu_buf_add(&resp->body, out, len) != CU_OK)
		resp->status = 500;
	cu_free(out);
}

/* A metav1 Status failure; details [consumed; may be NULL]. */
static void reply_status(struct ctl_http_response *resp, int code,
    const char *reason, const char *message, json_t *details)
{
	json_t *st = json_pack("{s:s, s:s, s:{}, s:s, s:s, s:s, s:i}", "kind",
	    "Status", "apiVersion", "v1", "metadata", "status", "Failure",
	    "message", message, "reason", reason, "code", code);

	if (st != NULL && details != NULL)
		json_object_set(st, "details", details);
	json_decref(details);
	reply_json(resp, code, st);
}

static void not_found_path(struct ctl_http_response *resp)
{
	reply_status(resp, 404, "NotFound",
	    "the server could not find the requested resource", NULL);
}

/* Kueue's errors.NewNotFound(visibility.Resource(kind), name). */
static void not_found(
    struct ctl_http_response *resp, const char *kind, const char *name)
{
	char *msg =
	    cu_asprintf("%s.%s \"%s\" not found", kind, CTL_VIS_GROUP, name);

	reply_status(resp, 404, "NotFound", msg ? msg : "not found",
	    json_pack("{s:s, s:s, s:s}", "name", name, "group", CTL_VIS_GROUP,
		"kind", kind));
	cu_free(msg);
}

/* ---- discovery ----------------------------------------------------------- */

static json_t *group_doc(void)
{
	json_t *vs = json_array();
	size_t i;

	for (i = 0; vs != NULL && versions[i] != NULL; i++)
		json_array_append_new(vs,
		    json_pack("{s:s+, s:s}", "groupVersion", CTL_VIS_GROUP "/",
			versions[i], "version", versions[i]));
	return json_pack("{s:s, s:s, s:s, s:o, s:{s:s, s:s}}", "kind",
	    "APIGroup", "apiVersion", "v1", "name", CTL_VIS_GROUP, "versions",
	    vs, "preferredVersion", "groupVersion", CTL_VIS_GROUP "/v1beta2",
	    "version", "v1beta2");
}

static json_t *resource(
    const char *name, const char *singular, bool ns, bool get)
{
	return json_pack("{s:s, s:s, s:b, s:s, s:o}", "name", name,
	    "singularName", singular, "namespaced", ns, "kind",
	    "PendingWorkloadsSummary", "verbs",
	    get ? json_pack("[s]", "get") : json_array());
}

static json_t *resource_list(const char *version)
{
	return json_pack("{s:s, s:s, s:s+, s:[o,o,o,o]}", "kind",
	    "APIResourceList", "apiVersion", "v1", "groupVersion",
	    CTL_VIS_GROUP "/", version, "resources",
	    resource("clusterqueues", "clusterqueue", false, false),
	    resource("clusterqueues/pendingworkloads", "", false, true),
	    resource("localqueues", "localqueue", true, false),
	    resource("localqueues/pendingworkloads", "", true, true));
}

static void on_apis(const struct ctl_http_request *req,
    struct ctl_http_response *resp, void *payload)
{
	json_t *g = group_doc();

	(void)req;
	(void)payload;
	if (g != NULL) {
		json_object_del(g, "kind");
		json_object_del(g, "apiVersion");
	}
	reply_json(resp, 200,
	    json_pack("{s:s, s:s, s:[o]}", "kind", "APIGroupList", "apiVersion",
		"v1", "groups", g));
}

static void on_group(const struct ctl_http_request *req,
    struct ctl_http_response *resp, void *payload)
{
	(void)req;
	(void)payload;
	reply_json(resp, 200, group_doc());
}

/* ---- pendingworkloads ---------------------------------------------------- */

/* Query parameter name as an int64 into *v (unchanged when absent or
 * empty). false with a 400 reply when malformed. */
static bool query_int(const struct ctl_http_request *req,
    struct ctl_http_response *resp, const char *name, int64_t *v)
{
	const char *s = ctl_http_query(req, name);
	char *end = NULL;
	long long n;
	char *msg;

	if (s == NULL || s[0] == '\0')
		return true;
	errno = 0;
	n = strtoll(s, &end, 10);
	if (errno == 0 && end != s && *end == '\0') {
		*v = (int64_t)n;
		return true;
	}
	msg = cu_asprintf(
	    "%s: Invalid value: \"%.64s\": must be an integer", name, s);
	reply_status(resp, 400, "BadRequest", msg ? msg : "bad request", NULL);
	cu_free(msg);
	return false;
}

/* metadata of a listed Workload: from the cache when it has it. */
static json_t *item_meta(const struct ctl_vis *v, const struct que_wl *wl)
{
	json_t *cached =
	    v->workload ? v->workload(wl->ns, wl->name, v->payload) : NULL;
	json_t *md = json_object_get(cached, "metadata");
	json_t *out =
	    json_pack("{s:s, s:s}", "name", wl->name, "namespace", wl->ns);
	json_t *ts = json_object_get(md, "creationTimestamp");
	json_t *refs = json_object_get(md, "ownerReferences");
	size_t i;
	json_t *r;

	if (out == NULL)
		return NULL;
	if (json_is_string(ts))
		json_object_set(out, "creationTimestamp", ts);
	else {
		char buf[CU_TIME_RFC3339_LEN];

		cu_time_format_rfc3339(wl->created_ns, buf);
		json_object_set_new(out, "creationTimestamp", json_string(buf));
	}
	if (json_array_size(refs) > 0) {
		json_t *a = json_array();

		json_array_foreach(refs, i, r)
		{
			json_t *o = json_object();
			static const char *const keep[] = {
			    "apiVersion", "kind", "name", "uid", NULL};
			size_t k;

			for (k = 0; o != NULL && keep[k] != NULL; k++)
				if (json_is_string(json_object_get(r, keep[k])))
					json_object_set(o, keep[k],
					    json_object_get(r, keep[k]));
			json_array_append_new(a, o);
		}
		json_object_set_new(out, "ownerReferences", a);
	}
	return out;
}

static void reply_summary(const struct ctl_vis *v,
    struct ctl_http_response *resp, const char *version,
    const struct que_pending_item *it, size_t n)
{
	json_t *items = json_array();
	json_t *doc;
	size_t i;

	for (i = 0; items != NULL && i < n; i++) {
		const struct que_wl *wl = it[i].wl;

		json_array_append_new(items,
		    json_pack("{s:o, s:i, s:s, s:i, s:i}", "metadata",
			item_meta(v, wl), "priority", (json_int_t)wl->priority,
			"localQueueName", wl->queue_name ? wl->queue_name : "",
			"positionInClusterQueue", (json_int_t)it[i].pos_cq,
			"positionInLocalQueue", (json_int_t)it[i].pos_lq));
	}
	doc = json_pack("{s:s, s:s+, s:{s:n}, s:o}", "kind",
	    "PendingWorkloadsSummary", "apiVersion", CTL_VIS_GROUP "/", version,
	    "metadata", "creationTimestamp", "items", items);
	reply_json(resp, 200, doc);
}

/* Split the path after VIS_PREFIX "/" into seg; the count, or -1. */
static int split(const char *p, char seg[][VIS_SEG_MAX + 1])
{
	int n = 0;

	while (*p != '\0') {
		size_t len = strcspn(p, "/");

		if (len == 0 || len > VIS_SEG_MAX || n == VIS_MAX_SEGS)
			return -1;
		memcpy(seg[n], p, len);
		seg[n][len] = '\0';
		n++;
		p += len;
		if (*p == '/' && *++p == '\0')
			return -1; /* a trailing slash */
	}
	return n;
}

static bool known_version(const char *v)
{
	size_t i;

	for (i = 0; versions[i] != NULL; i++)
		if (strcmp(versions[i], v) == 0)
			return true;
	return false;
}

static void on_path(const struct ctl_http_request *req,
    struct ctl_http_response *resp, void *payload)
{
	const struct ctl_vis *v = payload;
	char seg[VIS_MAX_SEGS][VIS_SEG_MAX + 1];
	const char *rest = req->path + strlen(VIS_PREFIX);
	int n = *rest == '/' ? split(rest + 1, seg) : -1;
	int64_t limit = 0, offset = 0;
	struct que_pending_item *it = NULL;
	size_t nit = 0;
	bool cq;
	int rc;
	cu_error err;

	if (n < 1 || !known_version(seg[0])) {
		not_found_path(resp);
		return;
	}
	if (n == 1) {
		reply_json(resp, 200, resource_list(seg[0]));
		return;
	}
	cq = n == 4 && strcmp(seg[1], "clusterqueues") == 0 &&
	     strcmp(seg[3], "pendingworkloads") == 0;
	if (!cq && !(n == 6 && strcmp(seg[1], "namespaces") == 0 &&
		       strcmp(seg[3], "localqueues") == 0 &&
		       strcmp(seg[5], "pendingworkloads") == 0)) {
		not_found_path(resp);
		return;
	}
	if (!query_int(req, resp, "limit", &limit) ||
	    !query_int(req, resp, "offset", &offset))
		return;
	if (limit == 0)
		limit = QUE_PENDING_DEFAULT_LIMIT;
	cu_error_clear(&err);
	rc = cq ? que_pending_cq(v->st, seg[2], offset, limit, &it, &nit, &err)
		: que_pending_lq(
		      v->st, seg[2], seg[4], offset, limit, &it, &nit, &err);
	if (rc == CU_ENOTFOUND)
		not_found(resp, cq ? "clusterqueue" : "localqueue",
		    cq ? seg[2] : seg[4]);
	else if (rc != CU_OK)
		reply_status(resp, 500, "InternalError", err.msg, NULL);
	else
		reply_summary(v, resp, seg[0], it, nit);
	cu_free(it);
}

int ctl_vis_mount(const struct ctl_vis *v, struct ctl_httpd *srv, cu_error *err)
{
	void *p = (void *)(uintptr_t)v;
	int rc = ctl_httpd_route(srv, "GET", "/apis", on_apis, p, err);

	if (rc == CU_OK)
		rc = ctl_httpd_route(srv, "GET", VIS_PREFIX, on_group, p, err);
	if (rc == CU_OK)
		rc = ctl_httpd_route(
		    srv, "GET", VIS_PREFIX "/*", on_path, p, err);
	return rc;
}
