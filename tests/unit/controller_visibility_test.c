/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/controller_visibility_test.c - the visibility API's routes
 * (controller/visibility.c) through ctl_httpd_dispatch: discovery
 * documents, PendingWorkloadsSummary of a ClusterQueue and a LocalQueue
 * in v1beta2 and v1beta1 (items, positions, metadata from the cached
 * Workload), limit and offset with Kueue's defaults, Status errors (404
 * for an unknown queue or path, 400 for a malformed limit).
 *
 * Configuration: ClusterQueue cq (cpu 10), LocalQueues ns/a and ns/b.
 */
#include <criterion/criterion.h>
#include <ev.h>
#include <string.h>

#include "controller/httpd.h"
#include "controller/visibility.h"

static que_state *st;
static struct ev_loop *loop;
static ctl_httpd *srv;
static struct ctl_vis vis;

/* The "cache": w4 has an owner and a creation time. */
static json_t *cached(const char *ns, const char *name, void *payload)
{
	static json_t *w4;

	(void)payload;
	if (strcmp(ns, "ns") != 0 || strcmp(name, "w4") != 0)
		return NULL;
	if (w4 == NULL)
		w4 = json_pack("{s:{s:s, s:s, s:s, s:[{s:s, s:s, s:s, s:s, "
			       "s:b}]}}",
		    "metadata", "name", "w4", "namespace", "ns",
		    "creationTimestamp", "2026-01-02T03:04:05Z",
		    "ownerReferences", "apiVersion", "batch/v1", "kind", "Job",
		    "name", "job-4", "uid", "u-4", "controller", 1);
	return w4;
}

static void wl(const char *uid, const char *queue, int32_t prio, int64_t ts)
{
	struct que_request r = {"cpu", 1000};
	struct que_podset_spec ps = {
	    .name = "main", .count = 1, .requests = &r, .n_requests = 1};
	struct que_workload_spec w = {.uid = uid,
	    .ns = "ns",
	    .name = uid,
	    .queue_name = queue,
	    .priority = prio,
	    .created_ns = ts,
	    .namespace_eligible = true,
	    .podsets = &ps,
	    .n_podsets = 1};

	cr_assert_eq(que_workload_add(st, &w, NULL), CU_OK);
}

static void setup(void)
{
	static const char *const cpu[] = {"cpu"};
	struct que_flavor_spec f = {.name = "default"};
	struct que_resource_quota rq = {"cpu", 10000, false, 0, false, 0};
	struct que_flavor_quotas fq = {"default", &rq, 1};
	struct que_resource_group g = {cpu, 1, &fq, 1};
	struct que_cq_spec s = {.name = "cq", .groups = &g, .n_groups = 1};
	struct que_lq_spec a = {"ns", "a", "cq", QUE_STOP_NONE};
	struct que_lq_spec b = {"ns", "b", "cq", QUE_STOP_NONE};
	struct ctl_httpd_opts o = {.name = "test", .listen = "127.0.0.1:0"};
	cu_error err;

	cr_assert_eq(que_state_new(&st, NULL), CU_OK);
	cr_assert_eq(que_flavor_set(st, &f, NULL), CU_OK);
	cr_assert_eq(que_cq_set(st, &s, NULL), CU_OK);
	cr_assert_eq(que_lq_set(st, &a, NULL), CU_OK);
	cr_assert_eq(que_lq_set(st, &b, NULL), CU_OK);
	/* Queue order: w2 (b), w4 (a), w1 (a), w3 (a). */
	wl("w1", "a", 0, 1000000000);
	wl("w2", "b", 5, 2000000000);
	wl("w3", "a", 0, 3000000000);
	wl("w4", "a", 5, 4000000000);
	loop = ev_loop_new(EVFLAG_AUTO);
	cr_assert_eq(ctl_httpd_new(&srv, loop, &o, &err), CU_OK, "%s", err.msg);
	vis.st = st;
	vis.workload = cached;
	cr_assert_eq(ctl_vis_mount(&vis, srv, &err), CU_OK, "%s", err.msg);
}

static void teardown(void)
{
	ctl_httpd_free(srv);
	ev_loop_destroy(loop);
	que_state_free(st);
}

TestSuite(controller_visibility, .init = setup, .fini = teardown);

#define GRP "/apis/visibility.kueue.x-k8s.io"

/* GET target; the reply's JSON [owned: json_decref]. */
static json_t *get(const char *target, int want)
{
	struct ctl_http_response r;
	json_t *doc;
	json_error_t je;

	cr_assert_eq(
	    ctl_httpd_dispatch(srv, "GET", target, NULL, NULL, 0, &r, NULL),
	    CU_OK);
	cr_assert_eq(r.status, want, "%s: %d: %.*s", target, r.status,
	    (int)r.body.len, r.body.ptr ? r.body.ptr : "");
	cr_assert_str_eq(r.content_type, "application/json");
	doc = json_loadb(r.body.ptr, r.body.len, 0, &je);
	cu_buf_dispose(&r.body);
	cr_assert_not_null(doc, "%s: %s", target, je.text);
	return doc;
}

static const char *jstr(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static json_int_t jint(json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

/* items' names and positions as "name:cq:lq name:cq:lq ...". */
static void expect_items(json_t *doc, const char *want)
{
	char got[512] = "";
	size_t i, n = 0;
	json_t *it;

	json_array_foreach(json_object_get(doc, "items"), i, it)
	{
		n += (size_t)snprintf(got + n, sizeof(got) - n, "%s%s:%d:%d",
		    i ? " " : "", jstr(json_object_get(it, "metadata"), "name"),
		    (int)jint(it, "positionInClusterQueue"),
		    (int)jint(it, "positionInLocalQueue"));
	}
	cr_expect_str_eq(got, want);
}

Test(controller_visibility, cluster_queue_summary_v1beta2)
{
	json_t *doc =
	    get(GRP "/v1beta2/clusterqueues/cq/pendingworkloads", 200);
	json_t *items = json_object_get(doc, "items");
	json_t *w4 = json_array_get(items, 1), *md, *ref;

	cr_assert_str_eq(jstr(doc, "kind"), "PendingWorkloadsSummary");
	cr_assert_str_eq(
	    jstr(doc, "apiVersion"), "visibility.kueue.x-k8s.io/v1beta2");
	expect_items(doc, "w2:0:0 w4:1:0 w1:2:1 w3:3:2");
	cr_assert_eq(jint(w4, "priority"), 5);
	cr_assert_str_eq(jstr(w4, "localQueueName"), "a");
	md = json_object_get(w4, "metadata");
	cr_assert_str_eq(jstr(md, "namespace"), "ns");
	cr_assert_str_eq(jstr(md, "creationTimestamp"), "2026-01-02T03:04:05Z");
	ref = json_array_get(json_object_get(md, "ownerReferences"), 0);
	cr_assert_str_eq(jstr(ref, "kind"), "Job");
	cr_assert_str_eq(jstr(ref, "uid"), "u-4");
	/* Kueue keeps apiVersion, kind, name and uid only. */
	cr_assert_null(json_object_get(ref, "controller"));
	/* Not cached: the engine's creation time. */
	cr_assert_str_eq(
	    jstr(json_object_get(json_array_get(items, 2), "metadata"),
		"creationTimestamp"),
	    "1970-01-01T00:00:01Z");
	json_decref(doc);
}

Test(controller_visibility, local_queue_summary_v1beta1_and_pages)
{
	json_t *doc = get(GRP "/v1beta1/namespaces/ns/localqueues/a/"
			      "pendingworkloads",
	    200);

	cr_assert_str_eq(
	    jstr(doc, "apiVersion"), "visibility.kueue.x-k8s.io/v1beta1");
	expect_items(doc, "w4:1:0 w1:2:1 w3:3:2");
	json_decref(doc);
	doc = get(GRP "/v1beta2/namespaces/ns/localqueues/a/"
		      "pendingworkloads?limit=1&offset=1",
	    200);
	expect_items(doc, "w1:2:1");
	json_decref(doc);
	doc = get(GRP "/v1beta2/clusterqueues/cq/pendingworkloads?offset=1&"
		      "limit=2",
	    200);
	expect_items(doc, "w4:1:0 w1:2:1");
	json_decref(doc);
	/* limit=0 is Kueue's default (1000); a negative limit lists none. */
	doc =
	    get(GRP "/v1beta2/clusterqueues/cq/pendingworkloads?limit=0", 200);
	expect_items(doc, "w2:0:0 w4:1:0 w1:2:1 w3:3:2");
	json_decref(doc);
	doc =
	    get(GRP "/v1beta2/clusterqueues/cq/pendingworkloads?limit=-1", 200);
	cr_assert_eq(json_array_size(json_object_get(doc, "items")), 0);
	cr_assert(json_is_array(json_object_get(doc, "items")));
	json_decref(doc);
}

Test(controller_visibility, errors)
{
	json_t *doc =
	    get(GRP "/v1beta2/clusterqueues/nope/pendingworkloads", 404);

	cr_assert_str_eq(jstr(doc, "kind"), "Status");
	cr_assert_str_eq(jstr(doc, "reason"), "NotFound");
	cr_assert_str_eq(jstr(doc, "message"),
	    "clusterqueue.visibility.kueue.x-k8s.io \"nope\" not found");
	json_decref(doc);
	doc = get(
	    GRP "/v1beta2/namespaces/ns/localqueues/zz/pendingworkloads", 404);
	cr_assert_str_eq(jstr(doc, "message"),
	    "localqueue.visibility.kueue.x-k8s.io \"zz\" not found");
	json_decref(doc);
	doc =
	    get(GRP "/v1beta2/clusterqueues/cq/pendingworkloads?limit=x", 400);
	cr_assert_str_eq(jstr(doc, "reason"), "BadRequest");
	json_decref(doc);
	json_decref(get(GRP "/v1/clusterqueues/cq/pendingworkloads", 404));
	json_decref(get(GRP "/v1beta2/clusterqueues/cq", 404));
	json_decref(
	    get(GRP "/v1beta2/clusterqueues/cq/pendingworkloads/", 404));
}

Test(controller_visibility, discovery)
{
	json_t *doc = get("/apis", 200), *g, *res;

	g = json_array_get(json_object_get(doc, "groups"), 0);
	cr_assert_str_eq(jstr(g, "name"), "visibility.kueue.x-k8s.io");
	json_decref(doc);
	doc = get(GRP, 200);
	cr_assert_str_eq(jstr(doc, "kind"), "APIGroup");
	cr_assert_str_eq(
	    jstr(json_object_get(doc, "preferredVersion"), "version"),
	    "v1beta2");
	cr_assert_eq(json_array_size(json_object_get(doc, "versions")), 2);
	json_decref(doc);
	doc = get(GRP "/v1beta1", 200);
	cr_assert_str_eq(jstr(doc, "kind"), "APIResourceList");
	cr_assert_str_eq(
	    jstr(doc, "groupVersion"), "visibility.kueue.x-k8s.io/v1beta1");
	res = json_object_get(doc, "resources");
	cr_assert_eq(json_array_size(res), 4);
	cr_assert_str_eq(jstr(json_array_get(res, 1), "name"),
	    "clusterqueues/pendingworkloads");
	cr_assert_str_eq(jstr(json_array_get(res, 3), "name"),
	    "localqueues/pendingworkloads");
	cr_assert(json_is_true(
	    json_object_get(json_array_get(res, 3), "namespaced")));
	json_decref(doc);
}
