/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/api_client_test.c - api/client.c against the project's real
 * API server (tests/apiserver), run in-process on the same libev loop over
 * loopback HTTP: CRUD and error classification, token-file rotation after
 * 401, retries of 429 (Retry-After) and 500 (backoff), the rate limiter,
 * timeouts, cancellation, streaming, the write gate (writes withheld
 * before libcurl sees them: at once, behind the rate limiter, in a retry
 * backoff; reads never), the kubeconfig and in-cluster loaders and TLS
 * with a kubeconfig written by the server.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/client.h"
#include "tests/apiserver/apiserver.h"
#include "tests/apiserver/tls.h"
#include "tests/unit/fixtures.h"

static const struct api_resource CM = {"", "v1", "configmaps", true};
static const struct api_resource JOBS = {"batch", "v1", "jobs", true};

static void on_line(const char *line, size_t len, void *payload)
{
	struct fx_result *r = payload;
	size_t old = r->lines ? strlen(r->lines) : 0;
	char *n = cu_realloc(r->lines, old + len + 2);

	cr_assert_not_null(n);
	memcpy(n + old, line, len);
	n[old + len] = '|';
	n[old + len + 1] = '\0';
	r->lines = n;
	r->nlines++;
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	fclose(f);
}

static void set_faults(const char *rules_json)
{
	struct fx_result r;
	json_t *body = json_loads(rules_json, 0, NULL);

	cr_assert_not_null(body, "bad rules JSON");
	fx_call(&r, "POST", "/__test/faults", NULL, body);
	cr_assert_eq(r.code, 200, "faults: %d %s", r.code, r.msg);
	fx_result_dispose(&r);
}

static void wait_done(struct fx_result *r)
{
	cr_assert(fx_run_until(&r->done, 20.0), "no answer");
}

/* ---- CRUD and classification --------------------------------------- */

Test(api_client, crud_round_trip_and_error_classes, .init = fx_setup,
    .fini = fx_teardown)
{
	struct fx_result r;
	json_t *cm = fx_configmap("cm1", "v1"), *stale, *patch;
	cu_error err;

	cr_assert_eq(
	    api_create(NULL, fx_cl, &CM, "default", cm, fx_on_resp, &r, &err),
	    CU_OK);
	memset(&r, 0, sizeof(r));
	wait_done(&r);
	cr_assert_eq(r.code, 201, "%d %s", r.code, r.msg);
	cr_assert_eq(r.err, CU_OK);
	stale = json_deep_copy(r.body);
	fx_result_dispose(&r);

	/* AlreadyExists */
	cr_assert_eq(
	    api_create(NULL, fx_cl, &CM, "default", cm, fx_on_resp, &r, &err),
	    CU_OK);
	wait_done(&r);
	cr_assert_eq(r.code, 409);
	cr_assert_eq(r.err, CU_EEXIST, "%s", cu_err_name(r.err));
	cr_assert_str_eq(r.reason, "AlreadyExists");
	fx_result_dispose(&r);

	/* merge patch */
	patch = json_pack("{s:{s:s}}", "data", "k", "v2");
	cr_assert_eq(api_merge_patch(NULL, fx_cl, &CM, "default", "cm1", patch,
			 false, fx_on_resp, &r, &err),
	    CU_OK);
	json_decref(patch);
	wait_done(&r);
	cr_assert_eq(r.code, 200, "%d %s", r.code, r.msg);
	cr_assert_str_eq(json_string_value(json_object_get(
			     json_object_get(r.body, "data"), "k")),
	    "v2");
	fx_result_dispose(&r);

	/* JSON patch */
	patch = json_pack(
	    "[{s:s, s:s, s:s}]", "op", "add", "path", "/data/j", "value", "x");
	cr_assert_eq(api_json_patch(NULL, fx_cl, &CM, "default", "cm1", patch,
			 false, fx_on_resp, &r, &err),
	    CU_OK);
	json_decref(patch);
	wait_done(&r);
	cr_assert_eq(r.code, 200, "%d %s", r.code, r.msg);
	fx_result_dispose(&r);

	/* PUT with a stale resourceVersion: Conflict */
	json_object_set_new(
	    json_object_get(stale, "data"), "k", json_string("stale"));
	cr_assert_eq(
	    api_update(NULL, fx_cl, &CM, stale, false, fx_on_resp, &r, &err),
	    CU_OK);
	wait_done(&r);
	cr_assert_eq(r.code, 409);
	cr_assert_eq(r.err, CU_ECONFLICT, "%s", cu_err_name(r.err));
	cr_assert_eq(r.attempts, 1, "4xx must not be retried");
	fx_result_dispose(&r);
	json_decref(stale);

	/* GET then PUT with the current version */
	cr_assert_eq(
	    api_get(NULL, fx_cl, &CM, "default", "cm1", fx_on_resp, &r, &err),
	    CU_OK);
	wait_done(&r);
	cr_assert_eq(r.code, 200);
	stale = json_incref(r.body);
	fx_result_dispose(&r);
	json_object_set_new(
	    json_object_get(stale, "data"), "k", json_string("v3"));
	cr_assert_eq(
	    api_update(NULL, fx_cl, &CM, stale, false, fx_on_resp, &r, &err),
	    CU_OK);
	json_decref(stale);
	wait_done(&r);
	cr_assert_eq(r.code, 200, "%d %s", r.code, r.msg);
	fx_result_dispose(&r);

	/* 422 Invalid */
	json_decref(cm);
	cm = fx_configmap("Not_A_Valid_Name", "v");
	cr_assert_eq(
	    api_create(NULL, fx_cl, &CM, "default", cm, fx_on_resp, &r, &err),
	    CU_OK);
	wait_done(&r);
	cr_assert_eq(r.code, 422, "%d %s", r.code, r.msg);
	cr_assert_eq(r.err, CU_EINVAL);
	cr_assert_str_eq(r.reason, "Invalid");
	fx_result_dispose(&r);
	json_decref(cm);

	/* DELETE, then 404 */
	cr_assert_eq(api_delete(NULL, fx_cl, &CM, "default", "cm1", NULL,
			 fx_on_resp, &r, &err),
	    CU_OK);
	wait_done(&r);
	cr_assert_eq(r.code, 200, "%d %s", r.code, r.msg);
	fx_result_dispose(&r);
	cr_assert_eq(
	    api_get(NULL, fx_cl, &CM, "default", "cm1", fx_on_resp, &r, &err),
	    CU_OK);
	wait_done(&r);
	cr_assert_eq(r.code, 404);
	cr_assert_eq(r.err, CU_ENOTFOUND);
	cr_assert_str_eq(r.reason, "NotFound");
	cr_assert_eq(r.attempts, 1);
	fx_result_dispose(&r);

	cr_assert_eq(api_client_stats_count(fx_cl, "POST", 201), 1);
	cr_assert_eq(api_client_stats_count(fx_cl, "POST", 409), 1);
	cr_assert_eq(api_client_stats_count(fx_cl, "PATCH", 200), 2);
	cr_assert_eq(api_client_stats_count(fx_cl, "GET", 404), 1);
}

Test(api_client, status_subresource, .init = fx_setup, .fini = fx_teardown)
{
	struct fx_result r;
	json_t *job, *patch;
	cu_error err;

	job = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:b, s:{s:{s:s, "
			"s:[{s:s, s:s}]}}}}",
	    "apiVersion", "batch/v1", "kind", "Job", "metadata", "name", "j1",
	    "namespace", "default", "spec", "suspend", 1, "template", "spec",
	    "restartPolicy", "Never", "containers", "name", "c", "image",
	    "busybox");
	cr_assert_eq(api_create(NULL, fx_cl, &JOBS, "default", job, fx_on_resp,
			 &r, &err),
	    CU_OK);
	memset(&r, 0, sizeof(r));
	wait_done(&r);
	json_decref(job);
	cr_assert_eq(r.code, 201, "%d %s", r.code, r.msg);
	fx_result_dispose(&r);
	patch = json_pack("{s:{s:i}}", "status", "active", 0);
	json_object_set_new(
	    json_object_get(patch, "status"), "failed", json_integer(1));
	cr_assert_eq(api_merge_patch(NULL, fx_cl, &JOBS, "default", "j1", patch,
			 true, fx_on_resp, &r, &err),
	    CU_OK);
	json_decref(patch);
	wait_done(&r);
	cr_assert_eq(r.code, 200, "%d %s", r.code, r.msg);
	cr_assert_eq(json_integer_value(json_object_get(
			 json_object_get(r.body, "status"), "failed")),
	    1);
	job = json_incref(r.body);
	fx_result_dispose(&r);
	json_object_set_new(
	    json_object_get(job, "status"), "failed", json_integer(2));
	cr_assert_eq(
	    api_update(NULL, fx_cl, &JOBS, job, true, fx_on_resp, &r, &err),
	    CU_OK);
	json_decref(job);
	wait_done(&r);
	cr_assert_eq(r.code, 200, "%d %s", r.code, r.msg);
	fx_result_dispose(&r);
}

Test(api_client, unauthorized_then_token_file_rotation,
    .init = fx_setup_server_only, .fini = fx_teardown)
{
	struct api_client_opts o;
	struct api_client_stats st;
	struct fx_result r;
	char path[128];

	snprintf(path, sizeof(path), "%s/token", fx_tmpdir);
	write_text(path, "wrong-token\n");
	memset(&o, 0, sizeof(o));
	o.token_file = path;
	fx_client_start(&o);
	fx_call(&r, "GET", "/api/v1/namespaces/default", NULL, NULL);
	cr_assert_eq(r.code, 401);
	cr_assert_eq(r.err, CU_EDENIED);
	cr_assert_eq(r.attempts, 1);
	fx_result_dispose(&r);
	/* the kubelet rotates the projected token */
	write_text(path, FX_TOKEN "\n\n");
	fx_call(&r, "GET", "/api/v1/namespaces/default", NULL, NULL);
	cr_assert_eq(r.code, 200, "%d %s", r.code, r.msg);
	cr_assert_eq(r.attempts, 2, "one 401, then the new token");
	fx_result_dispose(&r);
	api_client_stats(fx_cl, &st);
	cr_assert_eq(st.token_reloads, 1);
	cr_assert_eq(api_client_stats_count(fx_cl, "GET", 401), 2);
}

Test(api_client, token_file_reread_periodically, .init = fx_setup_server_only,
    .fini = fx_teardown)
{
	struct api_client_opts o;
	struct api_client_stats st;
	char path[128];

	snprintf(path, sizeof(path), "%s/token", fx_tmpdir);
	write_text(path, "first");
	memset(&o, 0, sizeof(o));
	o.token_file = path;
	o.token_reload_ms = 100;
	fx_client_start(&o);
	write_text(path, "second ");
	fx_run_for(0.5);
	api_client_stats(fx_cl, &st);
	cr_assert_eq(st.token_reloads, 1);
}

Test(api_client, missing_token_file_fails_creation,
    .init = fx_setup_server_only, .fini = fx_teardown)
{
	struct api_client_opts o;
	cu_error err;

	memset(&o, 0, sizeof(o));
	o.server = fx_url;
	o.token_file = "/nonexistent/token";
	cr_assert_eq(api_client_new(&fx_cl, fx_loop, &o, &err), CU_ENOTFOUND);
	cr_assert_null(fx_cl);
	o.token_file = NULL;
	o.server = "ftp://x";
	cr_assert_eq(api_client_new(&fx_cl, fx_loop, &o, &err), CU_EINVAL);
}

/* ---- retries --------------------------------------------------------- */

Test(api_client, retry_429_honours_retry_after, .init = fx_setup,
    .fini = fx_teardown)
{
	struct fx_result r;
	double t0;

	set_faults("{\"rules\":[{\"pathPrefix\":\"/api/v1/namespaces/"
		   "default/configmaps\",\"code\":429,\"retryAfter\":1,"
		   "\"count\":1}]}");
	t0 = ev_time();
	fx_call(&r, "GET", "/api/v1/namespaces/default/configmaps", NULL, NULL);
	cr_assert_eq(r.code, 200, "%d %s", r.code, r.msg);
	cr_assert_eq(r.attempts, 2);
	cr_assert_geq(ev_time() - t0, 0.9, "Retry-After: 1 not honoured");
	cr_assert_eq(api_client_stats_count(fx_cl, "GET", 429), 1);
	fx_result_dispose(&r);
}

Test(api_client, retry_500_with_backoff, .init = fx_setup, .fini = fx_teardown)
{
	struct api_client_stats st;
	struct fx_result r;

	set_faults("{\"rules\":[{\"pathPrefix\":\"/api/v1/namespaces/"
		   "default/configmaps\",\"code\":500,\"count\":2}]}");
	fx_call(&r, "POST", "/api/v1/namespaces/default/configmaps", NULL,
	    fx_configmap("r5", "x"));
	cr_assert_eq(r.code, 201, "%d %s", r.code, r.msg);
	cr_assert_eq(r.attempts, 3);
	fx_result_dispose(&r);
	api_client_stats(fx_cl, &st);
	cr_assert_eq(st.retries, 2);
	cr_assert_eq(api_client_stats_count(fx_cl, "POST", 500), 2);
}

Test(api_client, retries_are_bounded, .init = fx_setup_server_only,
    .fini = fx_teardown)
{
	struct api_client_opts o;
	struct fx_result r;

	memset(&o, 0, sizeof(o));
	o.max_attempts = 3;
	o.retry_base_ms = 10;
	fx_client_start(&o);
	set_faults("{\"rules\":[{\"pathPrefix\":\"/api/v1/namespaces\","
		   "\"code\":503}]}");
	fx_call(&r, "GET", "/api/v1/namespaces/default", NULL, NULL);
	cr_assert_eq(r.code, 503);
	cr_assert_eq(r.err, CU_EIO);
	cr_assert_eq(r.attempts, 3);
	cr_assert_str_eq(r.reason, "ServiceUnavailable");
	fx_result_dispose(&r);
}

Test(api_client, get_transport_failure_retried, .init = fx_setup_server_only,
    .fini = fx_teardown)
{
	struct api_client_opts o;
	struct fx_result r;

	memset(&o, 0, sizeof(o));
	o.server = "http://127.0.0.1:1"; /* nothing listens on port 1 */
	o.max_attempts = 3;
	o.retry_base_ms = 10;
	fx_client_start(&o);
	fx_call(&r, "GET", "/api/v1/namespaces", NULL, NULL);
	cr_assert_eq(r.code, 0);
	cr_assert_eq(r.err, CU_EIO, "%s", cu_err_name(r.err));
	cr_assert_eq(r.attempts, 3);
	cr_assert_neq(r.msg[0], '\0');
	fx_result_dispose(&r);
	cr_assert_eq(api_client_stats_count(fx_cl, "GET", 0), 3);
	/* The cause in words, for logs and /readyz. */
	cr_assert_not_null(api_client_unreachable(fx_cl));
	cr_assert(strstr(api_client_unreachable(fx_cl), "onnect") != NULL, "%s",
	    api_client_unreachable(fx_cl));
}

Test(api_client, answering_server_is_not_unreachable,
    .init = fx_setup_server_only, .fini = fx_teardown)
{
	struct api_client_opts o;
	struct fx_result r;

	memset(&o, 0, sizeof(o));
	fx_client_start(&o);
	cr_assert_null(api_client_unreachable(fx_cl));
	fx_call(&r, "GET", "/api/v1/namespaces/nope", NULL, NULL);
	cr_assert_eq(r.code, 404); /* an answer, even an error, is contact */
	fx_result_dispose(&r);
	cr_assert_null(api_client_unreachable(fx_cl));
}

/* ---- rate limiting, timeouts, cancellation ---------------------------- */

Test(api_client, rate_limiter_spaces_requests, .init = fx_setup_server_only,
    .fini = fx_teardown)
{
	struct api_client_opts o;
	struct api_client_stats st;
	struct fx_result r[12];
	double t0, dt;
	bool all;
	int i;

	memset(&o, 0, sizeof(o));
	o.qps = 20;
	o.burst = 2;
	fx_client_start(&o);
	memset(r, 0, sizeof(r));
	t0 = ev_time();
	for (i = 0; i < 12; i++)
		cr_assert_eq(
		    api_request(NULL, fx_cl, "GET", "/api/v1/namespaces", NULL,
			NULL, fx_on_resp, &r[i], NULL),
		    CU_OK);
	do {
		all = true;
		for (i = 0; i < 12; i++)
			all = all && r[i].done;
		if (!all)
			ev_run(fx_loop, EVRUN_ONCE);
	} while (!all && ev_time() - t0 < 20);
	dt = ev_time() - t0;
	cr_assert(all);
	/* (12 - 2) / 20 = 0.5 s at least; generous bounds */
	cr_assert_geq(dt, 0.45, "12 requests at 20 qps took %.3f s", dt);
	cr_assert_lt(dt, 10.0);
	for (i = 0; i < 12; i++) {
		cr_assert_eq(r[i].code, 200);
		fx_result_dispose(&r[i]);
	}
	api_client_stats(fx_cl, &st);
	cr_assert_geq(st.throttled, 9);
}

/* The most connections a burst of 30 GETs (each answer held 100 ms by
 * the server) opened with this cap (0: the default). Each attempt may
 * take 400 ms, less than the whole burst through 3 slots (1 s): waiting
 * for a slot is not part of a request's timeout. */
static size_t burst_peak(int max_connections)
{
	struct api_client_opts o;
	struct fx_result r[30];
	double t0 = ev_time();
	bool all;
	int i;

	memset(&o, 0, sizeof(o));
	o.max_connections = max_connections;
	o.request_timeout_ms = 400;
	fx_client_start(&o);
	set_faults("{\"rules\":[{\"method\":\"GET\",\"pathPrefix\":"
		   "\"/api/v1/namespaces\",\"code\":0,\"latencyMs\":100}]}");
	fx_srv.peak_conns = fx_srv.conns;
	memset(r, 0, sizeof(r));
	for (i = 0; i < 30; i++)
		cr_assert_eq(
		    api_request(NULL, fx_cl, "GET", "/api/v1/namespaces", NULL,
			NULL, fx_on_resp, &r[i], NULL),
		    CU_OK);
	do {
		all = true;
		for (i = 0; i < 30; i++)
			all = all && r[i].done;
		if (!all)
			ev_run(fx_loop, EVRUN_ONCE);
	} while (!all && ev_time() - t0 < 20);
	cr_assert(all, "the burst did not complete");
	for (i = 0; i < 30; i++) {
		cr_assert_eq(r[i].code, 200, "%d %s", r[i].code, r[i].msg);
		fx_result_dispose(&r[i]);
	}
	api_client_free(fx_cl);
	fx_cl = NULL;
	return fx_srv.peak_conns;
}

Test(api_client, connections_are_capped, .init = fx_setup_server_only,
    .fini = fx_teardown)
{
	size_t capped = burst_peak(3), open = burst_peak(0);

	cr_assert_leq(capped, 3, "%zu connections with a cap of 3", capped);
	cr_assert_geq(capped, 1);
	cr_assert_gt(open, 3, "the uncapped burst used %zu connections", open);
}

Test(api_client, request_timeout, .init = fx_setup_server_only,
    .fini = fx_teardown)
{
	struct api_client_opts o;
	struct fx_result r;
	double t0;

	memset(&o, 0, sizeof(o));
	o.request_timeout_ms = 300;
	fx_client_start(&o);
	set_faults("{\"rules\":[{\"pathPrefix\":\"/api/v1/namespaces/"
		   "default/configmaps\",\"latencyMs\":2000,\"count\":5}]}");
	t0 = ev_time();
	fx_call(&r, "GET", "/api/v1/namespaces/default/configmaps", NULL, NULL);
	cr_assert_eq(r.err, CU_ETIMEOUT, "%s %s", cu_err_name(r.err), r.msg);
	cr_assert_eq(r.attempts, 1, "a timed-out attempt is not retried");
	cr_assert_lt(ev_time() - t0, 1.5);
	fx_result_dispose(&r);
	set_faults("{\"rules\":[]}");
}

Test(api_client, cancel_runs_callback_once, .init = fx_setup,
    .fini = fx_teardown)
{
	struct fx_result a, b, q;
	api_req *ra, *rb;
	cu_error err;

	set_faults("{\"rules\":[{\"pathPrefix\":\"/api/v1/namespaces/"
		   "default/configmaps\",\"latencyMs\":1000}]}");
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	cr_assert_eq(api_request(&ra, fx_cl, "GET",
			 "/api/v1/namespaces/default/configmaps", NULL, NULL,
			 fx_on_resp, &a, &err),
	    CU_OK);
	cr_assert_eq(api_request(&rb, fx_cl, "GET",
			 "/api/v1/namespaces/default/configmaps", NULL, NULL,
			 fx_on_resp, &b, &err),
	    CU_OK);
	cr_assert(!a.done, "callback ran inside api_request");
	fx_run_for(0.1);
	api_request_cancel(ra);
	cr_assert(a.done);
	cr_assert(a.canceled);
	cr_assert_eq(a.err, CU_EAGAIN);
	/* the other one is still in flight; another to a fast path works */
	fx_call(&q, "GET", "/api/v1/namespaces", NULL, NULL);
	cr_assert_eq(q.code, 200);
	cr_assert(!b.done);
	fx_result_dispose(&q);
	/* client destruction cancels the rest */
	api_client_free(fx_cl);
	fx_cl = NULL;
	cr_assert(b.done);
	cr_assert(b.canceled);
	fx_result_dispose(&a);
	fx_result_dispose(&b);
}

/* ---- streaming -------------------------------------------------------- */

struct stream_ctx {
	struct fx_result r;
	api_req *req;
	int cancel_after;
};

static void on_line_cancel(const char *line, size_t len, void *payload)
{
	struct stream_ctx *s = payload;

	on_line(line, len, &s->r);
	if (s->r.nlines == s->cancel_after)
		api_request_cancel(s->req);
}

static void on_stream_done(const struct api_response *resp, void *payload)
{
	fx_on_resp(resp, &((struct stream_ctx *)payload)->r);
}

Test(api_client, stream_lines_and_cancel_inside_line_callback, .init = fx_setup,
    .fini = fx_teardown)
{
	struct stream_ctx s;
	struct fx_result r;
	cu_error err;
	int i;

	for (i = 0; i < 3; i++) {
		char name[16];

		snprintf(name, sizeof(name), "s%d", i);
		fx_call(&r, "POST", "/api/v1/namespaces/default/configmaps",
		    NULL, fx_configmap(name, "v"));
		cr_assert_eq(r.code, 201);
		fx_result_dispose(&r);
	}
	/* watch from the start: three synthetic ADDED, then cancel */
	memset(&s, 0, sizeof(s));
	s.cancel_after = 2;
	cr_assert_eq(api_stream(&s.req, fx_cl,
			 "/api/v1/namespaces/default/configmaps?watch=1&"
			 "timeoutSeconds=30",
			 0, on_line_cancel, on_stream_done, &s, &err),
	    CU_OK);
	cr_assert(fx_run_until(&s.r.done, 10));
	cr_assert(s.r.canceled);
	cr_assert_eq(s.r.nlines, 2);
	cr_assert_not_null(strstr(s.r.lines, "\"ADDED\""));
	fx_result_dispose(&s.r);

	/* a watch that ends by its timeoutSeconds completes with 200 */
	memset(&s, 0, sizeof(s));
	s.cancel_after = -1;
	cr_assert_eq(api_stream(&s.req, fx_cl,
			 "/api/v1/namespaces/default/configmaps?watch=1&"
			 "timeoutSeconds=1",
			 0, on_line_cancel, on_stream_done, &s, &err),
	    CU_OK);
	cr_assert(fx_run_until(&s.r.done, 10));
	cr_assert_eq(s.r.code, 200);
	cr_assert_eq(s.r.err, CU_OK);
	cr_assert_eq(s.r.nlines, 3);
	fx_result_dispose(&s.r);

	/* an error status is not streamed */
	memset(&s, 0, sizeof(s));
	cr_assert_eq(api_stream(&s.req, fx_cl,
			 "/api/v1/namespaces/default/configmaps?watch=1&"
			 "resourceVersion=1&timeoutSeconds=1",
			 0, on_line_cancel, on_stream_done, &s, &err),
	    CU_OK);
	cr_assert(fx_run_until(&s.r.done, 10));
	fx_result_dispose(&s.r);
}

/* ---- the write gate --------------------------------------------------- */

/* A gate as the controller would set one: closed unless leading, with the
 * test server's /__test/ endpoints let through (as the controller lets its
 * Lease through). Records what it was asked. */
struct gate {
	bool open;
	int asked;
	char method[16];
	char path[256];
};

static bool gate_fn(const char *method, const char *path, void *payload)
{
	struct gate *g = payload;

	g->asked++;
	snprintf(g->method, sizeof(g->method), "%s", method);
	snprintf(g->path, sizeof(g->path), "%s", path);
	return g->open || strncmp(path, "/__test/", 8) == 0;
}

/* Requests the server received with a verb other than GET (its access
 * log leaves out /__test/). */
static int server_writes(void)
{
	size_t i;
	json_t *e;
	int n = 0;

	json_array_foreach(fx_srv.access_log, i, e)
	{
		const char *verb =
		    json_string_value(json_object_get(e, "verb"));

		n += verb != NULL && strcmp(verb, "GET") != 0;
	}
	return n;
}

static void expect_withheld(const struct fx_result *r, int attempts)
{
	cr_assert(r->done);
	cr_expect_eq(
	    r->err, CU_ECANCELED, "%s: %s", cu_err_name(r->err), r->msg);
	cr_expect(!cu_err_retryable(r->err));
	cr_expect_eq(r->code, 0);
	cr_expect(!r->canceled);
	cr_expect_eq(r->attempts, attempts);
	cr_expect_str_eq(r->msg, "write withheld: not the leader");
}

Test(api_client, write_gate_withholds_writes_never_reads, .init = fx_setup,
    .fini = fx_teardown)
{
	static const char *const verbs[] = {"POST", "PUT", "PATCH", "DELETE"};
	static const char *const paths[] = {
	    "/api/v1/namespaces/default/configmaps",
	    "/api/v1/namespaces/default/configmaps/g1",
	    "/api/v1/namespaces/default/configmaps/g1",
	    "/api/v1/namespaces/default/configmaps/g1"};
	struct api_client_stats st;
	struct gate g = {false, 0, "", ""};
	struct fx_result r;
	size_t i;
	uint64_t seq;

	api_client_set_write_gate(fx_cl, gate_fn, &g);
	seq = fx_srv.log_seq;
	for (i = 0; i < 4; i++) {
		fx_send_nowait(&r, verbs[i], paths[i], NULL,
		    i < 3 ? fx_configmap("g1", "v") : NULL);
		wait_done(&r);
		expect_withheld(&r, 0);
		cr_expect_str_eq(g.method, verbs[i]);
		cr_expect_str_eq(g.path, paths[i]);
		fx_result_dispose(&r);
	}
	cr_assert_eq(g.asked, 4);
	cr_assert_eq(
	    fx_srv.log_seq, seq, "a withheld write reached the server");

	/* Reads are never gated, nor asked about: GET, LIST, WATCH. */
	fx_call(&r, "GET", "/api/v1/namespaces/default", NULL, NULL);
	cr_assert_eq(r.code, 200, "%d %s", r.code, r.msg);
	fx_result_dispose(&r);
	fx_call(&r, "GET", "/api/v1/namespaces/default/configmaps", NULL, NULL);
	cr_assert_eq(r.code, 200, "%d %s", r.code, r.msg);
	fx_result_dispose(&r);
	fx_call(&r, "GET",
	    "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1",
	    NULL, NULL);
	cr_assert_eq(r.code, 200, "%d %s", r.code, r.msg);
	fx_result_dispose(&r);
	cr_assert_eq(g.asked, 4);
	cr_assert_eq(server_writes(), 0);
	api_client_stats(fx_cl, &st);
	cr_assert_eq(st.withheld, 4);
	cr_assert_eq(st.requests, 3);

	/* Open again: new writes go out. */
	g.open = true;
	fx_call(&r, "POST", "/api/v1/namespaces/default/configmaps", NULL,
	    fx_configmap("g1", "v"));
	cr_assert_eq(r.code, 201, "%d %s", r.code, r.msg);
	fx_result_dispose(&r);
	fx_call(&r, "DELETE", "/api/v1/namespaces/default/configmaps/g1", NULL,
	    NULL);
	cr_assert_eq(r.code, 200, "%d %s", r.code, r.msg);
	fx_result_dispose(&r);
	cr_assert_eq(server_writes(), 2);

	/* Removed: nothing is asked any more. */
	g.open = false;
	api_client_set_write_gate(fx_cl, NULL, NULL);
	fx_call(&r, "POST", "/api/v1/namespaces/default/configmaps", NULL,
	    fx_configmap("g2", "v"));
	cr_assert_eq(r.code, 201, "%d %s", r.code, r.msg);
	fx_result_dispose(&r);
	cr_assert_eq(g.asked, 6);
	cr_assert_eq(server_writes(), 3);
}

Test(api_client, write_gate_catches_writes_queued_behind_the_limiter,
    .init = fx_setup_server_only, .fini = fx_teardown)
{
	struct api_client_opts o;
	struct api_client_stats st;
	struct gate g = {true, 0, "", ""};
	struct fx_result w[3], rd, late;
	bool all;
	int i;

	memset(&o, 0, sizeof(o));
	o.qps = 4;
	o.burst = 1;
	fx_client_start(&o);
	api_client_set_write_gate(fx_cl, gate_fn, &g);
	/* The first takes the only token and is handed to libcurl at once;
	 * the rest wait for the limiter (a token every 250 ms). */
	for (i = 0; i < 3; i++) {
		char name[16];

		snprintf(name, sizeof(name), "q%d", i);
		fx_send_nowait(&w[i], "POST",
		    "/api/v1/namespaces/default/configmaps", NULL,
		    fx_configmap(name, "v"));
	}
	fx_send_nowait(
	    &rd, "GET", "/api/v1/namespaces/default/configmaps", NULL, NULL);
	api_client_stats(fx_cl, &st);
	cr_assert_eq(st.requests, 1, "only the first write left the queue");
	cr_assert_geq(st.throttled, 3);
	/* Leadership lost while they wait. */
	g.open = false;
	do {
		all = w[0].done && w[1].done && w[2].done && rd.done;
		if (!all)
			ev_run(fx_loop, EVRUN_ONCE);
	} while (!all);
	/* Already with libcurl when the gate closed: not recalled. */
	cr_assert_eq(w[0].code, 201, "%d %s", w[0].code, w[0].msg);
	expect_withheld(&w[1], 0);
	expect_withheld(&w[2], 0);
	cr_assert_eq(rd.code, 200, "%d %s", rd.code, rd.msg);
	cr_assert_eq(server_writes(), 1, "a queued write reached the server");
	for (i = 0; i < 3; i++)
		fx_result_dispose(&w[i]);
	fx_result_dispose(&rd);

	/* Leader again: the next write goes out. */
	g.open = true;
	fx_call(&late, "POST", "/api/v1/namespaces/default/configmaps", NULL,
	    fx_configmap("q9", "v"));
	cr_assert_eq(late.code, 201, "%d %s", late.code, late.msg);
	fx_result_dispose(&late);
	cr_assert_eq(server_writes(), 2);
	api_client_stats(fx_cl, &st);
	cr_assert_eq(st.withheld, 2);
}

Test(api_client, write_gate_catches_a_retry_in_backoff,
    .init = fx_setup_server_only, .fini = fx_teardown)
{
	struct api_client_opts o;
	struct gate g = {true, 0, "", ""};
	struct fx_result r;
	bool expired = false;
	ev_timer t;

	memset(&o, 0, sizeof(o));
	o.retry_base_ms = 1000; /* the first backoff: 0.5 to 1 s */
	fx_client_start(&o);
	api_client_set_write_gate(fx_cl, gate_fn, &g);
	set_faults("{\"rules\":[{\"method\":\"POST\",\"pathPrefix\":"
		   "\"/api/v1/namespaces/default/configmaps\",\"code\":503,"
		   "\"count\":1}]}");
	fx_send_nowait(&r, "POST", "/api/v1/namespaces/default/configmaps",
	    NULL, fx_configmap("b1", "v"));
	ev_timer_init(&t, fx_on_deadline, 20.0, 0.0);
	t.data = &expired;
	ev_timer_start(fx_loop, &t);
	while (api_client_stats_count(fx_cl, "POST", 503) == 0 && !expired)
		ev_run(fx_loop, EVRUN_ONCE);
	ev_timer_stop(fx_loop, &t);
	cr_assert_eq(api_client_stats_count(fx_cl, "POST", 503), 1);
	cr_assert(!r.done, "the 503 was not retried");
	/* Leadership lost during the backoff. */
	g.open = false;
	wait_done(&r);
	expect_withheld(&r, 1);
	cr_assert_eq(server_writes(), 1, "the retry reached the server");
	fx_result_dispose(&r);
}

/* ---- user agent, paths ------------------------------------------------ */

Test(api_client, default_user_agent_and_paths, .init = fx_setup,
    .fini = fx_teardown)
{
	struct fx_result r;
	json_t *items;
	char *p;
	static const struct api_resource NS = {"", "v1", "namespaces", false};

	fx_call(&r, "GET", "/api/v1/namespaces", NULL, NULL);
	fx_result_dispose(&r);
	fx_call(&r, "GET", "/__test/log", NULL, NULL);
	items = json_object_get(r.body, "items");
	cr_assert_geq(json_array_size(items), 1);
	cr_assert_str_eq(json_string_value(json_object_get(
			     json_array_get(items, 0), "userAgent")),
	    "cueue-controller/" CUEUE_VERSION);
	fx_result_dispose(&r);

	p = api_resource_path(&JOBS, "ns a", "j1", "status");
	cr_assert_str_eq(p, "/apis/batch/v1/namespaces/ns%20a/jobs/j1/status");
	cu_free(p);
	p = api_resource_path(&NS, "ignored", "default", NULL);
	cr_assert_str_eq(p, "/api/v1/namespaces/default");
	cu_free(p);
	p = api_resource_path(&CM, NULL, NULL, NULL);
	cr_assert_str_eq(p, "/api/v1/configmaps");
	cu_free(p);
	p = api_escape("a=b,c in (x)");
	cr_assert_str_eq(p, "a%3Db%2Cc%20in%20%28x%29");
	cu_free(p);
}

/* ---- configuration loaders -------------------------------------------- */

Test(api_client, kubeconfig_loader, .init = fx_setup_server_only,
    .fini = fx_teardown)
{
	struct api_client_opts o;
	char path[128];
	cu_error err;

	snprintf(path, sizeof(path), "%s/kubeconfig", fx_tmpdir);
	write_text(path,
	    "apiVersion: v1\n"
	    "kind: Config\n"
	    "clusters:\n"
	    "- name: other\n"
	    "  cluster: {server: 'https://10.0.0.1'}\n"
	    "- name: c1\n"
	    "  cluster:\n"
	    "    server: https://127.0.0.1:6443\n"
	    "    certificate-authority-data: LS0tLS1CRUdJTiBYLS0tLS0K\n"
	    "users:\n"
	    "- name: u1\n"
	    "  user:\n"
	    "    tokenFile: tok\n"
	    "    client-certificate: certs/c.pem\n"
	    "    client-key-data: a2V5\n"
	    "contexts:\n"
	    "- name: ctx\n"
	    "  context: {cluster: c1, user: u1, namespace: team-a}\n"
	    "current-context: ctx\n");
	cr_assert_eq(api_client_opts_from_kubeconfig(&o, path, &err), CU_OK,
	    "%s", err.msg);
	cr_assert_str_eq(o.server, "https://127.0.0.1:6443");
	cr_assert_str_eq(o.ca_pem, "-----BEGIN X-----\n");
	cr_assert_not(o.insecure);
	cr_assert_null(o.token);
	cr_assert_not_null(o.token_file);
	cr_assert_not_null(strstr(o.token_file, "/tok"));
	cr_assert_eq(strncmp(o.token_file, fx_tmpdir, strlen(fx_tmpdir)), 0);
	cr_assert_not_null(strstr(o.client_cert_file, "/certs/c.pem"));
	cr_assert_str_eq(o.client_key_pem, "key");
	cr_assert_str_eq(o.namespace_name, "team-a");
	api_client_opts_dispose(&o);

	/* *-data: unpadded and URL-safe text is still read; a bad byte is
	 * refused with the field and its offset. */
	write_text(path,
	    "clusters:\n"
	    "- name: c\n"
	    "  cluster: {server: 'https://h', certificate-authority-data: "
	    "'P-8_'}\n"
	    "users:\n"
	    "- name: u\n"
	    "  user: {client-key-data: a2V5}\n"
	    "contexts:\n"
	    "- name: x\n"
	    "  context: {cluster: c, user: u}\n"
	    "current-context: x\n");
	cr_assert_eq(api_client_opts_from_kubeconfig(&o, path, &err), CU_OK,
	    "%s", err.msg);
	cr_assert_str_eq(o.ca_pem, "?\xef?");
	api_client_opts_dispose(&o);
	write_text(path,
	    "clusters:\n"
	    "- name: c\n"
	    "  cluster: {server: 'https://h', certificate-authority-data: "
	    "'a2V5*'}\n"
	    "contexts:\n"
	    "- name: x\n"
	    "  context: {cluster: c}\n"
	    "current-context: x\n");
	cr_assert_eq(
	    api_client_opts_from_kubeconfig(&o, path, &err), CU_EPARSE);
	cr_assert_str_eq(
	    err.msg, "certificate-authority-data: invalid base64 at offset 4");

	write_text(path, "current-context: nope\ncontexts: []\n");
	cr_assert_eq(
	    api_client_opts_from_kubeconfig(&o, path, &err), CU_EINVAL);
	cr_assert_null(o.server);
	write_text(path, "clusters: [\n");
	cr_assert_eq(
	    api_client_opts_from_kubeconfig(&o, path, &err), CU_EPARSE);
	cr_assert_neq(
	    api_client_opts_from_kubeconfig(&o, "/nonexistent/kc", &err),
	    CU_OK);
}

Test(api_client, in_cluster_loader, .init = fx_setup_server_only,
    .fini = fx_teardown)
{
	struct api_client_opts o;
	char path[128];
	cu_error err;

	unsetenv("POD_NAMESPACE");
	setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	cr_assert_eq(api_client_opts_in_cluster(&o, fx_tmpdir, &err),
	    CU_ENOTFOUND, "no token file yet");
	snprintf(path, sizeof(path), "%s/token", fx_tmpdir);
	write_text(path, "tok\n");
	snprintf(path, sizeof(path), "%s/ca.crt", fx_tmpdir);
	write_text(path, "pem");
	snprintf(path, sizeof(path), "%s/namespace", fx_tmpdir);
	write_text(path, "kueue-system\n");
	cr_assert_eq(api_client_opts_in_cluster(&o, fx_tmpdir, &err), CU_OK,
	    "%s", err.msg);
	cr_assert_str_eq(o.server, "https://[fd00::1]:443");
	cr_assert_not_null(strstr(o.token_file, "/token"));
	cr_assert_not_null(strstr(o.ca_file, "/ca.crt"));
	cr_assert_str_eq(o.namespace_name, "kueue-system");
	api_client_opts_dispose(&o);
	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("POD_NAMESPACE", "from-env", 1);
	cr_assert_eq(api_client_opts_in_cluster(&o, fx_tmpdir, &err), CU_OK);
	cr_assert_str_eq(o.server, "https://10.96.0.1:443");
	cr_assert_str_eq(o.namespace_name, "from-env");
	api_client_opts_dispose(&o);
	unsetenv("KUBERNETES_SERVICE_HOST");
	cr_assert_eq(
	    api_client_opts_in_cluster(&o, fx_tmpdir, &err), CU_EINVAL);
}

Test(api_client, tls_with_server_written_kubeconfig)
{
	struct api_client_opts o;
	struct fx_result r;
	char path[128];
	cu_error err;

	fx_server_start(true);
	snprintf(path, sizeof(path), "%s/kubeconfig", fx_tmpdir);
	cr_assert_eq(
	    as_kubeconfig_write(path, fx_url, fx_srv.ca_pem, FX_TOKEN, &err),
	    CU_OK, "%s", err.msg);
	cr_assert_eq(api_client_opts_from_kubeconfig(&o, path, &err), CU_OK,
	    "%s", err.msg);
	cr_assert_not_null(o.ca_pem);
	cr_assert_eq(
	    api_client_new(&fx_cl, fx_loop, &o, &err), CU_OK, "%s", err.msg);
	api_client_opts_dispose(&o);
	fx_call(&r, "GET", "/api/v1/namespaces/default", NULL, NULL);
	cr_assert_eq(r.code, 200, "%d %s", r.code, r.msg);
	fx_result_dispose(&r);
	fx_teardown();
}

/* lean_bodies: 2xx bodies come parsed without metadata.managedFields
 * (lists and single objects alike); error bodies as sent. */
Test(api_client, lean_bodies_drop_managed_fields, .init = fx_setup_server_only,
    .fini = fx_teardown)
{
	struct api_client_opts o;
	struct fx_result r;
	json_t *items;

	memset(&o, 0, sizeof(o));
	o.lean_bodies = true;
	fx_client_start(&o);
	fx_call(&r, "POST", "/api/v1/namespaces/default/configmaps", NULL,
	    fx_configmap("lean", "1"));
	cr_assert_eq(r.code, 201);
	cr_assert_not_null(
	    json_object_get(json_object_get(r.body, "metadata"), "uid"));
	cr_assert_null(json_object_get(
	    json_object_get(r.body, "metadata"), "managedFields"));
	fx_result_dispose(&r);
	fx_call(&r, "GET", "/api/v1/namespaces/default/configmaps", NULL, NULL);
	cr_assert_eq(r.code, 200);
	items = json_object_get(r.body, "items");
	cr_assert_eq(json_array_size(items), 1);
	cr_assert_null(json_object_get(
	    json_object_get(json_array_get(items, 0), "metadata"),
	    "managedFields"));
	fx_result_dispose(&r);
	fx_call(&r, "GET", "/api/v1/namespaces/default/configmaps/nope", NULL,
	    NULL);
	cr_assert_eq(r.code, 404);
	cr_assert_str_eq(r.reason, "NotFound");
	fx_result_dispose(&r);
	/* the same server sends them: a client without the option sees them */
	api_client_free(fx_cl);
	fx_cl = NULL;
	memset(&o, 0, sizeof(o));
	fx_client_start(&o);
	fx_call(&r, "GET", "/api/v1/namespaces/default/configmaps/lean", NULL,
	    NULL);
	cr_assert_eq(r.code, 200);
	cr_assert_not_null(json_object_get(
	    json_object_get(r.body, "metadata"), "managedFields"));
	fx_result_dispose(&r);
}
