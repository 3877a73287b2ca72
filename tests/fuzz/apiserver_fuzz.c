/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/apiserver_fuzz.c - fuzz target over cueue-apiserver's request
 * handling: request bodies (objects, JSON patches, merge and strategic
 * merge patches, server-side apply, DeleteOptions), selectors and query
 * parameters, against a server populated with a ConfigMap, a Job, a Lease
 * and a custom resource.
 *
 * Input layout: byte 0 picks the method/content type (merge patch with
 * bit 0x80: server-side apply, forced with 0x10), byte 1 the path,
 * the rest is the body (for GET: a label selector, a field selector and a
 * resourceVersion separated by NUL bytes).
 */
#include <stdint.h>
#include <string.h>

#include "tests/apiserver/apiserver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const paths[] = {
    "/api/v1/namespaces/default/configmaps",
    "/api/v1/namespaces/default/configmaps/cm1",
    "/apis/batch/v1/namespaces/default/jobs",
    "/apis/batch/v1/namespaces/default/jobs/j1",
    "/apis/batch/v1/namespaces/default/jobs/j1/status",
    "/apis/example.com/v1/namespaces/default/widgets",
    "/apis/example.com/v1/namespaces/default/widgets/w1",
    "/apis/example.com/v1/namespaces/default/widgets/w1/status",
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
    "widgets.example.com",
    "/apis/coordination.k8s.io/v1/namespaces/default/leases/l1",
    "/api/v1/namespaces",
    "/api/v1/namespaces/default",
    "/api/v1/namespaces/default/events",
    "/apis",
    "/api/v1/watch/namespaces/default/configmaps",
};

static const char *const crd =
    "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":"
    "\"CustomResourceDefinition\",\"metadata\":{\"name\":"
    "\"widgets.example.com\"},\"spec\":{\"group\":\"example.com\","
    "\"scope\":\"Namespaced\",\"names\":{\"plural\":\"widgets\",\"kind\":"
    "\"Widget\"},\"versions\":[{\"name\":\"v1\",\"served\":true,"
    "\"storage\":true,\"subresources\":{\"status\":{}},\"schema\":{"
    "\"openAPIV3Schema\":{\"type\":\"object\",\"properties\":{\"spec\":{"
    "\"type\":\"object\",\"properties\":{\"size\":{\"type\":\"integer\","
    "\"default\":1},\"tags\":{\"type\":\"array\",\"items\":{\"type\":"
    "\"string\"}}}},\"status\":{\"type\":\"object\","
    "\"x-kubernetes-preserve-unknown-fields\":true}}}}}]}}";

static void seed(struct as_server *srv)
{
	struct as_kind *k;
	json_t *o;
	cu_error err;

	k = as_kind_find(srv, "", "v1", "namespaces");
	as_internal_create(srv, k,
	    json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind",
		"Namespace", "metadata", "name", "default"),
	    "fuzz");
	k = as_kind_find(srv, "", "v1", "configmaps");
	as_internal_create(srv, k,
	    json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}, s:{s:s}}",
		"apiVersion", "v1", "kind", "ConfigMap", "metadata", "name",
		"cm1", "namespace", "default", "labels", "env", "a", "data",
		"k", "v"),
	    "fuzz");
	k = as_kind_find(srv, "batch", "v1", "jobs");
	as_internal_create(srv, k,
	    json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:b, s:{s:{s:[{s:s}]}}}}",
		"apiVersion", "batch/v1", "kind", "Job", "metadata", "name",
		"j1", "namespace", "default", "spec", "suspend", 1, "template",
		"spec", "containers", "name", "c"),
	    "fuzz");
	k = as_kind_find(srv, "coordination.k8s.io", "v1", "leases");
	as_internal_create(srv, k,
	    json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:i}}", "apiVersion",
		"coordination.k8s.io/v1", "kind", "Lease", "metadata", "name",
		"l1", "namespace", "default", "spec", "holderIdentity", "x",
		"leaseDurationSeconds", 15),
	    "fuzz");
	o = json_loads(crd, 0, NULL);
	k = as_kind_find(
	    srv, "apiextensions.k8s.io", "v1", "customresourcedefinitions");
	if (o != NULL && as_crd_prepare(o, &err) == CU_OK &&
	    as_crd_register(srv, o, &err) == CU_OK)
		as_internal_create(srv, k, json_incref(o), "fuzz");
	json_decref(o);
	k = as_kind_find(srv, "example.com", "v1", "widgets");
	if (k != NULL)
		as_internal_create(srv, k,
		    json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:i}}", "apiVersion",
			"example.com/v1", "kind", "Widget", "metadata", "name",
			"w1", "namespace", "default", "spec", "size", 2),
		    "fuzz");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const methods[] = {
	    "POST", "PUT", "PATCH", "PATCH", "PATCH", "DELETE", "GET", "GET"};
	static const char *const ctypes[] = {"application/json",
	    "application/json", "application/merge-patch+json",
	    "application/json-patch+json",
	    "application/strategic-merge-patch+json", "application/json", NULL,
	    NULL};
	struct as_server srv;
	struct as_request rq;
	struct as_resp resp;
	json_t *params, *headers;
	char *body;
	size_t blen;
	int m;

	if (size < 2)
		return 0;
	memset(&srv, 0, sizeof(srv));
	srv.history = 16;
	srv.bookmark_ms = 60000;
	srv.rand_state = 42;
	srv.listen_host = (char *)"127.0.0.1"; /* never freed here */
	srv.loop = ev_default_loop(0);
	srv.access_log = json_array();
	srv.writes_by_user = json_object();
	if (as_kinds_init(&srv, NULL) != CU_OK)
		goto out;
	seed(&srv);
	m = data[0] % 8;
	blen = size - 2;
	body = cu_malloc(blen + 1);
	if (body == NULL)
		goto out;
	memcpy(body, data + 2, blen);
	body[blen] = '\0';
	params = json_object();
	headers = json_object();
	if (ctypes[m] != NULL)
		json_object_set_new(
		    headers, "Content-Type", json_string(ctypes[m]));
	if (data[0] & 0x10)
		json_object_set_new(
		    params, "fieldValidation", json_string("Strict"));
	if (data[0] & 0x20)
		json_object_set_new(params, "dryRun", json_string("All"));
	if (m == 2 && (data[0] & 0x80)) {
		/* Server-side apply instead of the merge patch. */
		json_object_set_new(headers, "Content-Type",
		    json_string("application/apply-patch+yaml"));
		json_object_set_new(params, "fieldManager", json_string("fz"));
		if (data[0] & 0x10)
			json_object_set_new(
			    params, "force", json_string("true"));
	}
	if (data[0] & 0x40)
		json_object_set_new(headers, "Accept",
		    json_string("application/json;as=Table;v=v1;"
				"g=meta.k8s.io"));
	if (strcmp(methods[m], "GET") == 0) {
		/* body = labelSelector \0 fieldSelector \0 resourceVersion */
		const char *ls = body, *fs = NULL, *rv = NULL;
		size_t l1 = strlen(body);

		if (l1 < blen)
			fs = body + l1 + 1;
		if (fs != NULL && l1 + 1 + strlen(fs) < blen)
			rv = fs + strlen(fs) + 1;
		json_object_set_new(params, "labelSelector", json_string(ls));
		if (fs != NULL)
			json_object_set_new(
			    params, "fieldSelector", json_string(fs));
		if (rv != NULL)
			json_object_set_new(
			    params, "resourceVersion", json_string(rv));
		if (m == 7) {
			json_object_set_new(params, "watch", json_string("1"));
			json_object_set_new(params, "limit", json_string("2"));
		}
	}
	memset(&rq, 0, sizeof(rq));
	rq.srv = &srv;
	rq.method = methods[m];
	rq.path = paths[data[1] % (sizeof(paths) / sizeof(paths[0]))];
	rq.body = body;
	rq.body_len = strcmp(methods[m], "GET") == 0 ? 0 : blen;
	rq.user = "fuzz";
	rq.attempt = 5;
	rq.params = params;
	rq.headers = headers;
	memset(&resp, 0, sizeof(resp));
	resp.retry_after = -1;
	as_handle(&rq, &resp);
	/* Every answer is a well-formed status code with a body. */
	if (resp.code < 200 || resp.code > 599)
		__builtin_trap();
	if (resp.watch == NULL && !resp.delay && resp.body == NULL &&
	    resp.raw == NULL)
		__builtin_trap();
	json_decref(resp.body);
	cu_free(resp.raw);
	cu_free(resp.warning);
	if (resp.watch != NULL)
		as_watch_free(resp.watch);
	json_decref(params);
	json_decref(headers);
	cu_free(body);
out:
	as_kinds_free(&srv);
	json_decref(srv.access_log);
	json_decref(srv.writes_by_user);
	return 0;
}
