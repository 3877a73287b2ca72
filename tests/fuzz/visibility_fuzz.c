/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/visibility_fuzz.c - fuzz the visibility API's query handler
 * (controller/visibility.h) in-process: a ctl_httpd with ctl_vis_mount
 * over a small engine (one ClusterQueue, two LocalQueues, four pending
 * Workloads, one of them with cached metadata) serves each input as the
 * target of a GET through ctl_httpd_dispatch (path, %-decoding, the
 * query's limit and offset).
 *
 * Input: the request target ("/apis/...?limit=2&offset=1"); a method
 * other than GET when it starts with "POST " (405).
 *
 * Checked contracts (abort() on a breach): the status is 200, 400, 404
 * or 405; every JSON answer parses and has a kind (a Status for errors,
 * with the status's code); a pendingworkloads list has at most as many
 * items as pend and positions that count up.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>
#include <jansson.h>

#include "controller/httpd.h"
#include "controller/visibility.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static que_state *st;
static ctl_httpd *srv;
static struct ev_loop *loop;
static struct ctl_vis vis;

static json_t *cached(const char *ns, const char *name, void *payload)
{
	static json_t *w4;

	(void)payload;
	if (strcmp(ns, "ns") != 0 || strcmp(name, "w4") != 0)
		return NULL;
	if (w4 == NULL)
		w4 = json_pack("{s:{s:s, s:s, s:s}}", "metadata", "name", "w4",
		    "namespace", "ns", "creationTimestamp",
		    "2026-01-02T03:04:05Z");
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

	if (que_workload_add(st, &w, NULL) != CU_OK)
		abort();
}

static void setup(void)
{
	static const char *const cpu[] = {"cpu"};
	struct que_flavor_spec f = {.name = "default"};
	struct que_resource_quota rq = {"cpu", 1000, false, 0, false, 0};
	struct que_flavor_quotas fq = {"default", &rq, 1};
	struct que_resource_group g = {cpu, 1, &fq, 1};
	struct que_cq_spec s = {.name = "cq", .groups = &g, .n_groups = 1};
	struct que_lq_spec a = {"ns", "a", "cq", QUE_STOP_NONE};
	struct que_lq_spec b = {"ns", "b", "cq", QUE_STOP_NONE};
	struct ctl_httpd_opts o = {.name = "fuzz", .listen = "127.0.0.1:0"};

	if (que_state_new(&st, NULL) != CU_OK ||
	    que_flavor_set(st, &f, NULL) != CU_OK ||
	    que_cq_set(st, &s, NULL) != CU_OK ||
	    que_lq_set(st, &a, NULL) != CU_OK ||
	    que_lq_set(st, &b, NULL) != CU_OK)
		abort();
	wl("w1", "a", 0, 1000000000);
	wl("w2", "b", 5, 2000000000);
	wl("w3", "a", 0, 3000000000);
	wl("w4", "a", 5, 4000000000);
	loop = ev_loop_new(EVFLAG_AUTO);
	if (loop == NULL || ctl_httpd_new(&srv, loop, &o, NULL) != CU_OK)
		abort();
	vis.st = st;
	vis.workload = cached;
	if (ctl_vis_mount(&vis, srv, NULL) != CU_OK)
		abort();
}

static void check(const struct ctl_http_response *r, const char *target)
{
	json_t *doc, *items, *it;
	const char *kind;
	size_t i;
	json_int_t last = -1;

	if (r->status != 200 && r->status != 400 && r->status != 404 &&
	    r->status != 405)
		abort();
	if (strcmp(r->content_type, "application/json") != 0)
		return;
	doc = json_loadb(r->body.ptr ? r->body.ptr : "", r->body.len, 0, NULL);
	kind = json_string_value(json_object_get(doc, "kind"));
	if (doc == NULL || kind == NULL)
		abort();
	if (r->status != 200 &&
	    (strcmp(kind, "Status") != 0 ||
		json_integer_value(json_object_get(doc, "code")) != r->status))
		abort();
	items = json_object_get(doc, "items");
	if (r->status == 200 && strstr(target, "pendingworkloads") != NULL) {
		if (json_array_size(items) > 4)
			abort();
		json_array_foreach(items, i, it)
		{
			json_int_t pos = json_integer_value(
			    json_object_get(it, "positionInClusterQueue"));

			if (pos <= last)
				abort();
			last = pos;
		}
	}
	json_decref(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctl_http_response r;
	const char *method = "GET";
	char *target;

	if (srv == NULL)
		setup();
	target = cu_strndup((const char *)data, size);
	if (target == NULL)
		return 0;
	if (strncmp(target, "POST ", 5) == 0)
		method = "POST";
	if (ctl_httpd_dispatch(srv, method, target + (method[0] == 'P' ? 5 : 0),
		NULL, NULL, 0, &r, NULL) == CU_OK)
		check(&r, target);
	cu_buf_dispose(&r.body);
	cu_free(target);
	return 0;
}
