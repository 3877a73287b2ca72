/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/controller_httpd_gate_test.c - controller/httpd's gate
 * (ctl_httpd_set_gate): a refusal answered inside the gate call, an
 * allowance and a refusal answered later from the loop (the connection
 * suspended meanwhile, another request served while one waits), the gate
 * seeing the request's headers, and a gate set after start refused. A
 * client thread (libcurl) records results; assertions run on the test
 * thread after the loop stops.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>
#include <ev.h>

#include "controller/httpd.h"

struct result {
	long status;
	char body[256];
	size_t len;
};

enum { R_NOW_DENY, R_LATER_ALLOW, R_LATER_DENY, R_NO_HEADER, R__COUNT };

struct fixture {
	struct ev_loop *loop;
	ev_async done;
	ev_timer later;
	ctl_http_gate_call *pending; /* the call answered by `later` */
	int pending_status;
	int gate_calls, handler_calls;
	uint16_t port;
	struct result r[R__COUNT];
	struct result during; /* served while a call waits */
	atomic_int during_done;
	int during_ok; /* how many of those were 200 */
};

static struct fixture fx;

static size_t on_data(char *p, size_t size, size_t n, void *userdata)
{
	struct result *r = userdata;
	size_t len = size * n, room = sizeof(r->body) - 1 - r->len;

	memcpy(r->body + r->len, p, len < room ? len : room);
	r->len += len < room ? len : room;
	r->body[r->len] = '\0';
	return len;
}

static void fetch(struct result *r, const char *gate_header)
{
	CURL *e = curl_easy_init();
	struct curl_slist *hdrs = NULL;
	char url[128];

	memset(r, 0, sizeof(*r));
	if (e == NULL)
		return;
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/thing", fx.port);
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, 10000L);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
	if (gate_header != NULL) {
		hdrs = curl_slist_append(hdrs, gate_header);
		curl_easy_setopt(e, CURLOPT_HTTPHEADER, hdrs);
	}
	(void)curl_easy_perform(e);
	curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &r->status);
	curl_slist_free_all(hdrs);
	curl_easy_cleanup(e);
}

/* The deferred answer; before it, a request that passes at once is
 * served (the waiting connection blocks nothing). */
static void *during_main(void *arg)
{
	(void)arg;
	fetch(&fx.during, "X-Gate: now-allow");
	atomic_store(&fx.during_done, 1);
	return NULL;
}

static void on_later(struct ev_loop *loop, ev_timer *w, int revents)
{
	pthread_t th;

	(void)loop;
	(void)w;
	(void)revents;
	/* A second client is served while the first waits. The loop must
	 * keep running for it: run it in a thread and spin the loop. */
	atomic_store(&fx.during_done, 0);
	cr_assert_eq(pthread_create(&th, NULL, during_main, NULL), 0);
	while (!atomic_load(&fx.during_done))
		ev_run(fx.loop, EVRUN_ONCE);
	pthread_join(th, NULL);
	if (fx.during.status == 200)
		fx.during_ok++;
	ctl_http_gate_done(fx.pending, fx.pending_status,
	    fx.pending_status ? "later no\n" : NULL);
	fx.pending = NULL;
}

static void gate(
    ctl_http_gate_call *call, const struct ctl_http_request *req, void *payload)
{
	const char *g = ctl_http_header(req, "X-Gate");

	(void)payload;
	fx.gate_calls++;
	if (g == NULL)
		ctl_http_gate_done(call, 401, "who are you\n");
	else if (strcmp(g, "now-deny") == 0)
		ctl_http_gate_done(call, 401, "now no\n");
	else if (strcmp(g, "now-allow") == 0)
		ctl_http_gate_done(call, 0, NULL);
	else {
		fx.pending = call;
		fx.pending_status = strcmp(g, "later-deny") == 0 ? 403 : 0;
		ev_timer_set(&fx.later, 0.2, 0.);
		ev_timer_start(fx.loop, &fx.later);
	}
}

static void handler(const struct ctl_http_request *req,
    struct ctl_http_response *resp, void *payload)
{
	(void)req;
	(void)payload;
	fx.handler_calls++;
	(void)ctl_http_reply(resp, 200, "the thing\n");
}

static void *client_main(void *arg)
{
	(void)arg;
	fetch(&fx.r[R_NOW_DENY], "X-Gate: now-deny");
	fetch(&fx.r[R_LATER_ALLOW], "X-Gate: later-allow");
	fetch(&fx.r[R_LATER_DENY], "X-Gate: later-deny");
	fetch(&fx.r[R_NO_HEADER], NULL);
	ev_async_send(fx.loop, &fx.done);
	return NULL;
}

static void on_done(struct ev_loop *loop, ev_async *w, int revents)
{
	(void)w;
	(void)revents;
	ev_break(loop, EVBREAK_ALL);
}

Test(ctl_httpd_gate,
    answers_now_or_later_and_the_handler_runs_only_when_allowed, .timeout = 30)
{
	struct ctl_httpd_opts o = {.listen = "127.0.0.1:0"};
	ctl_httpd *h = NULL;
	cu_error err;
	pthread_t th;

	memset(&fx, 0, sizeof(fx));
	fx.loop = ev_loop_new(EVFLAG_AUTO);
	cr_assert_eq(curl_global_init(CURL_GLOBAL_DEFAULT), CURLE_OK);
	cr_assert_eq(
	    ctl_httpd_new(&h, fx.loop, &o, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(
	    ctl_httpd_route(h, "GET", "/thing", handler, NULL, &err), CU_OK);
	cr_assert_eq(ctl_httpd_set_gate(h, gate, NULL, &err), CU_OK);
	cr_assert_eq(ctl_httpd_start(h, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(ctl_httpd_set_gate(h, gate, NULL, &err), CU_EINVAL,
	    "a gate after start");
	fx.port = ctl_httpd_port(h);
	ev_init(&fx.later, on_later);
	ev_async_init(&fx.done, on_done);
	ev_async_start(fx.loop, &fx.done);
	cr_assert_eq(pthread_create(&th, NULL, client_main, NULL), 0);
	ev_run(fx.loop, 0);
	pthread_join(th, NULL);

	cr_expect_eq(fx.r[R_NOW_DENY].status, 401);
	cr_expect_str_eq(fx.r[R_NOW_DENY].body, "now no\n");
	cr_expect_eq(fx.r[R_LATER_ALLOW].status, 200);
	cr_expect_str_eq(fx.r[R_LATER_ALLOW].body, "the thing\n");
	cr_expect_eq(fx.r[R_LATER_DENY].status, 403);
	cr_expect_str_eq(fx.r[R_LATER_DENY].body, "later no\n");
	cr_expect_eq(fx.r[R_NO_HEADER].status, 401);
	cr_expect_str_eq(fx.r[R_NO_HEADER].body, "who are you\n");
	/* Served while the two deferred calls waited. */
	cr_expect_eq(fx.during_ok, 2);
	cr_expect_eq(fx.gate_calls, 6);
	/* later-allow, and the request served during each wait. */
	cr_expect_eq(fx.handler_calls, 3);
	ctl_httpd_free(h);
	ev_loop_destroy(fx.loop);
	curl_global_cleanup();
}
