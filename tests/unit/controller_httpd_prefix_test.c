/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/controller_httpd_prefix_test.c - prefix routes of
 * controller/httpd.c (a route path ending in '*'): an exact route wins
 * over a prefix, the longest prefix wins, the prefix's own path without
 * the '*' is not under it, and a path can be routed exactly beside a
 * prefix that covers it.
 */
#include <criterion/criterion.h>
#include <ev.h>
#include <stdio.h>
#include <string.h>

#include "controller/httpd.h"

static void answer(const struct ctl_http_request *req,
    struct ctl_http_response *resp, void *payload)
{
	(void)req;
	(void)ctl_http_reply(resp, 200, payload);
}

static const char *serve(ctl_httpd *h, const char *target, int *status)
{
	static char text[64];
	struct ctl_http_response r;

	cr_assert_eq(
	    ctl_httpd_dispatch(h, "GET", target, NULL, NULL, 0, &r, NULL),
	    CU_OK);
	*status = r.status;
	snprintf(text, sizeof(text), "%.*s", (int)r.body.len,
	    r.body.ptr ? r.body.ptr : "");
	cu_buf_dispose(&r.body);
	return text;
}

static char A[] = "a", AB[] = "ab", X[] = "x";

Test(controller_httpd_prefix, routing)
{
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	struct ctl_httpd_opts o = {.name = "t", .listen = "127.0.0.1:0"};
	ctl_httpd *h;
	cu_error err;
	int st;

	cr_assert_eq(ctl_httpd_new(&h, loop, &o, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(ctl_httpd_route(h, "GET", "/a/*", answer, A, &err), CU_OK);
	cr_assert_eq(
	    ctl_httpd_route(h, "GET", "/a/b/*", answer, AB, &err), CU_OK);
	cr_assert_eq(ctl_httpd_route(h, "GET", "/a/x", answer, X, &err), CU_OK,
	    "an exact route beside a covering prefix");
	cr_assert_eq(
	    ctl_httpd_route(h, "GET", "/a/*", answer, A, &err), CU_EEXIST);
	cr_assert_str_eq(serve(h, "/a/q/r", &st), "a");
	cr_assert_eq(st, 200);
	cr_assert_str_eq(serve(h, "/a/b/c", &st), "ab");
	cr_assert_str_eq(serve(h, "/a/x", &st), "x");
	cr_assert_str_eq(serve(h, "/a/x/y", &st), "a");
	(void)serve(h, "/a", &st);
	cr_assert_eq(st, 404);
	(void)serve(h, "/ab", &st);
	cr_assert_eq(st, 404);
	ctl_httpd_free(h);
	ev_loop_destroy(loop);
}
