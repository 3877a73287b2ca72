/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/controller_httpd_evict_test.c - controller/httpd's evictor
 * near the connection limit spares a request that waits for the gate (its
 * authentication review): with a small connection limit, a request is
 * held by the gate while more idle connections arrive than the limit
 * holds; the idle ones are trimmed, and the held request gets its answer
 * once the gate allows it. A client thread (libcurl) sends the held
 * request; assertions run on the test thread.
 */
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <curl/curl.h>
#include <ev.h>

#include "controller/httpd.h"

#define LIMIT 8u
#define IDLE 16

static uint16_t port;
static atomic_int client_done;
static long status;
static ctl_http_gate_call *held;

static size_t discard(char *p, size_t size, size_t n, void *userdata)
{
	(void)p;
	(void)userdata;
	return size * n;
}

static void *client_main(void *arg)
{
	CURL *e = curl_easy_init();
	char url[128];

	(void)arg;
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/thing", port);
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, 20000L);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, discard);
	(void)curl_easy_perform(e);
	curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(e);
	atomic_store(&client_done, 1);
	return NULL;
}

static void gate(
    ctl_http_gate_call *call, const struct ctl_http_request *req, void *payload)
{
	(void)req;
	(void)payload;
	held = call;
}

static void handler(const struct ctl_http_request *req,
    struct ctl_http_response *resp, void *payload)
{
	(void)req;
	(void)payload;
	(void)ctl_http_reply(resp, 200, "ok\n");
}

static void run_for(struct ev_loop *loop, double s)
{
	ev_tstamp end = ev_time() + s;

	while (ev_time() < end) {
		ev_now_update(loop);
		ev_run(loop, EVRUN_NOWAIT);
		usleep(5000);
	}
}

Test(ctl_httpd_evict, a_request_waiting_for_the_gate_is_never_evicted,
    .timeout = 60)
{
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	struct ctl_httpd_opts o = {.name = "metrics",
	    .listen = "127.0.0.1:0",
	    .conn_limit = LIMIT,
	    .request_timeout_ms = 30000,
	    .conn_timeout_s = 30};
	struct sockaddr_in sa;
	ctl_httpd *h = NULL;
	cu_error err;
	pthread_t th;
	int idle[IDLE], i, closed = 0;
	ev_tstamp end;

	cr_assert_eq(curl_global_init(CURL_GLOBAL_DEFAULT), CURLE_OK);
	cr_assert_eq(ctl_httpd_new(&h, loop, &o, &err), CU_OK);
	cr_assert_eq(
	    ctl_httpd_route(h, "GET", "/thing", handler, NULL, &err), CU_OK);
	cr_assert_eq(ctl_httpd_set_gate(h, gate, NULL, &err), CU_OK);
	cr_assert_eq(ctl_httpd_start(h, &err), CU_OK, "%s", err.msg);
	port = ctl_httpd_port(h);
	cr_assert_eq(pthread_create(&th, NULL, client_main, NULL), 0);
	end = ev_time() + 10;
	while (held == NULL && ev_time() < end)
		run_for(loop, 0.01);
	cr_assert_not_null(held, "the request reached the gate");
	/* Twice the limit of idle connections: the evictor trims them. */
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (i = 0; i < IDLE; i++) {
		idle[i] = socket(AF_INET, SOCK_STREAM, 0);
		cr_assert_geq(idle[i], 0);
		cr_assert_eq(
		    connect(idle[i], (struct sockaddr *)&sa, sizeof(sa)), 0);
		run_for(loop, 0.02);
	}
	run_for(loop, 0.5);
	for (i = 0; i < IDLE; i++) {
		char c;
		struct timeval tv = {0, 1000};

		setsockopt(idle[i], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (recv(idle[i], &c, 1, 0) == 0)
			closed++;
	}
	cr_expect_gt(closed, 0, "the idle flood was trimmed");
	cr_expect_eq(atomic_load(&client_done), 0, "the held request waits");
	ctl_http_gate_done(held, 0, NULL);
	end = ev_time() + 10;
	while (!atomic_load(&client_done) && ev_time() < end)
		run_for(loop, 0.01);
	pthread_join(th, NULL);
	cr_expect_eq(status, 200, "the held request answered: %ld", status);
	for (i = 0; i < IDLE; i++)
		close(idle[i]);
	ctl_httpd_free(h);
	ev_loop_destroy(loop);
	curl_global_cleanup();
}
