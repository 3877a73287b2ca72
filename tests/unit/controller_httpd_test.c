/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/controller_httpd_test.c - controller/httpd, health and the
 * /metrics route, served from a libev loop in this process while a client
 * thread (libcurl easy, raw sockets) talks to it: /healthz, /readyz failing
 * then passing as a check flips, /readyz?verbose, /metrics with its content
 * type, 404 and 405, request bodies (echo, 413 early by Content-Length and
 * late when chunked), a slowloris client cut off by the request deadline
 * while others are served, the connection limit, and TLS from PEM. Then
 * ctl_httpd_dispatch: the same requests over a socket and in-process get
 * the same answers, and its routing, method and body-cap decisions. The
 * client thread only records results; the assertions run on the test
 * thread after the loop stops.
 */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <ev.h>

#include "controller/health.h"
#include "controller/httpd.h"
#include "controller/metrics.h"
#include "tests/apiserver/tls.h"

#define MAX_BODY_CAP (64 * 1024)
#define BIG (200 * 1024)
#define REQUEST_TIMEOUT_MS 1000

struct result {
	long status;
	char ctype[128];
	char allow[64];
	char body[8192];
	size_t len;
	double secs;
	int curl_rc;
};

enum step {
	S_HEALTHZ,
	S_LIVEZ,
	S_READYZ_FAIL,
	S_READYZ_FAIL_VERBOSE,
	S_READYZ_PASS,
	S_READYZ_PASS_VERBOSE,
	S_METRICS,
	S_NOT_FOUND,
	S_WRONG_METHOD,
	S_HEAD,
	S_ECHO,
	S_TOO_BIG_LENGTH,
	S_TOO_BIG_CHUNKED,
	S_DURING_SLOWLORIS,
	S_TLS_HEALTHZ,
	S_AFTER_ALL,
	S__COUNT
};

struct client {
	uint16_t health_port, metrics_port, tls_port;
	const char *ca_pem; /* borrowed */
	atomic_int informers_synced;
	struct result r[S__COUNT];
	bool slow_closed;
	double slow_closed_after; /* since the slow client connected */
	double probe_done_after;  /* the probe's reply, same origin */
	struct ev_loop *loop;
	ev_async done;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- client side (thread) ------------------------------------------- */

static size_t on_data(char *p, size_t size, size_t n, void *userdata)
{
	struct result *r = userdata;
	size_t len = size * n, room = sizeof(r->body) - 1 - r->len;

	memcpy(r->body + r->len, p, len < room ? len : room);
	r->len += len < room ? len : room;
	r->body[r->len] = '\0';
	return len;
}

/* Keeps the Allow header's value. */
static size_t on_header(char *p, size_t size, size_t n, void *userdata)
{
	struct result *r = userdata;
	size_t len = size * n;

	if (len > 6 && strncasecmp(p, "Allow:", 6) == 0) {
		int v = 6, e = (int)len;

		while (v < e && p[v] == ' ')
			v++;
		while (e > v && (p[e - 1] == '\r' || p[e - 1] == '\n'))
			e--;
		snprintf(r->allow, sizeof(r->allow), "%.*s", e - v, p + v);
	}
	return len;
}

struct chunk_src {
	size_t left;
};

static size_t on_read(char *buf, size_t size, size_t n, void *userdata)
{
	struct chunk_src *src = userdata;
	size_t len = size * n;

	if (len > src->left)
		len = src->left;
	if (len > 4096)
		len = 4096;
	memset(buf, 'c', len);
	src->left -= len;
	return len;
}

static void fetch_with(struct result *r, const char *url, const char *method,
    const char *header, const char *body, size_t body_len, bool chunked,
    const char *ca_pem)
{
	CURL *e = curl_easy_init();
	struct curl_slist *hdrs = NULL;
	struct chunk_src src = {BIG};
	char *ct = NULL;
	double t0 = now_s();

	memset(r, 0, sizeof(*r));
	if (e == NULL) {
		r->curl_rc = -1;
		return;
	}
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, 10000L);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, r);
	if (header != NULL)
		hdrs = curl_slist_append(hdrs, header);
	if (method != NULL && strcmp(method, "HEAD") == 0)
		curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
	else if (method != NULL)
		curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method);
	if (body != NULL) {
		curl_easy_setopt(e, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(
		    e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
	}
	if (chunked) {
		curl_easy_setopt(e, CURLOPT_POST, 1L);
		curl_easy_setopt(e, CURLOPT_READFUNCTION, on_read);
		curl_easy_setopt(e, CURLOPT_READDATA, &src);
		hdrs = curl_slist_append(hdrs, "Transfer-Encoding: chunked");
	}
	if (hdrs != NULL)
		curl_easy_setopt(e, CURLOPT_HTTPHEADER, hdrs);
	if (ca_pem != NULL) {
		struct curl_blob blob = {
		    (void *)ca_pem, strlen(ca_pem), CURL_BLOB_COPY};

		curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &blob);
	}
	r->curl_rc = (int)curl_easy_perform(e);
	curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &r->status);
	if (curl_easy_getinfo(e, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK &&
	    ct != NULL)
		snprintf(r->ctype, sizeof(r->ctype), "%s", ct);
	r->secs = now_s() - t0;
	curl_slist_free_all(hdrs);
	curl_easy_cleanup(e);
}

static void fetch(struct result *r, const char *url, const char *method,
    const char *body, size_t body_len, bool chunked, const char *ca_pem)
{
	fetch_with(r, url, method, NULL, body, body_len, chunked, ca_pem);
}

static void get(struct result *r, uint16_t port, const char *path)
{
	char url[256];

	snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", port, path);
	fetch(r, url, NULL, NULL, 0, false, NULL);
}

/* A raw connection that sends an incomplete request, one header byte every
 * 100 ms (so MHD's idle timeout never fires), and reports when the server
 * closes it. While it is open, a normal client must be served at once. */
static void slowloris(struct client *c)
{
	static const char head[] =
	    "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ";
	struct sockaddr_in sa;
	double t0;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	bool probed = false;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(c->health_port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    send(fd, head, sizeof(head) - 1, MSG_NOSIGNAL) < 0) {
		if (fd >= 0)
			close(fd);
		return;
	}
	t0 = now_s();
	while (now_s() - t0 < 5.0) {
		struct pollfd p = {fd, POLLIN, 0};
		char ch;

		if (!probed && now_s() - t0 > 0.2) {
			get(&c->r[S_DURING_SLOWLORIS], c->health_port,
			    "/healthz");
			c->probe_done_after = now_s() - t0;
			probed = true;
		}
		if (poll(&p, 1, 100) > 0) {
			ssize_t n = recv(fd, &ch, 1, 0);

			if (n <= 0) {
				c->slow_closed = true;
				break;
			}
		}
		if (send(fd, "a", 1, MSG_NOSIGNAL) < 0) {
			c->slow_closed = true;
			break;
		}
	}
	c->slow_closed_after = now_s() - t0;
	close(fd);
}

static void *client_main(void *arg)
{
	struct client *c = arg;
	static char big[BIG];
	char url[256];

	get(&c->r[S_HEALTHZ], c->health_port, "/healthz");
	get(&c->r[S_LIVEZ], c->health_port, "/livez");
	get(&c->r[S_READYZ_FAIL], c->health_port, "/readyz");
	get(&c->r[S_READYZ_FAIL_VERBOSE], c->health_port, "/readyz?verbose");
	atomic_store(&c->informers_synced, 1);
	get(&c->r[S_READYZ_PASS], c->health_port, "/readyz");
	get(&c->r[S_READYZ_PASS_VERBOSE], c->health_port, "/readyz?verbose");
	get(&c->r[S_METRICS], c->metrics_port, "/metrics");
	get(&c->r[S_NOT_FOUND], c->health_port, "/nope");
	snprintf(
	    url, sizeof(url), "http://127.0.0.1:%u/healthz", c->health_port);
	fetch(&c->r[S_WRONG_METHOD], url, "DELETE", NULL, 0, false, NULL);
	fetch(&c->r[S_HEAD], url, "HEAD", NULL, 0, false, NULL);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/echo", c->health_port);
	fetch(&c->r[S_ECHO], url, NULL, "hello\0world", 11, false, NULL);
	memset(big, 'b', sizeof(big));
	fetch(
	    &c->r[S_TOO_BIG_LENGTH], url, NULL, big, sizeof(big), false, NULL);
	fetch(&c->r[S_TOO_BIG_CHUNKED], url, NULL, NULL, 0, true, NULL);
	slowloris(c);
	snprintf(url, sizeof(url), "https://127.0.0.1:%u/healthz", c->tls_port);
	fetch(&c->r[S_TLS_HEALTHZ], url, NULL, NULL, 0, false, c->ca_pem);
	get(&c->r[S_AFTER_ALL], c->health_port, "/healthz");
	ev_async_send(c->loop, &c->done);
	return NULL;
}

/* ---- server side (loop thread) --------------------------------------- */

static int check_synced(cu_error *err, void *payload)
{
	struct client *c = payload;

	if (atomic_load(&c->informers_synced))
		return CU_OK;
	return cu_error_set(err, CU_EAGAIN, "waiting for 3 informers");
}

static int check_ledger(cu_error *err, void *payload)
{
	(void)err;
	(void)payload;
	return CU_OK;
}

static void serve_echo(const struct ctl_http_request *req,
    struct ctl_http_response *resp, void *payload)
{
	(void)payload;
	if (cu_buf_addf(&resp->body, "%s %s %zu ", req->method, req->path,
		req->body_len) != CU_OK ||
	    cu_buf_add(&resp->body, req->body, req->body_len) != CU_OK)
		resp->status = 500;
}

static void on_done(struct ev_loop *loop, ev_async *w, int revents)
{
	(void)w;
	(void)revents;
	ev_break(loop, EVBREAK_ALL);
}

static void on_watchdog(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)w;
	(void)revents;
	ev_break(loop, EVBREAK_ALL);
}

/* Run the loop until the client thread fn(arg) sends done (or the
 * watchdog fires, so that a hung client fails the test instead of
 * hanging), then join the thread. */
static void run_client(struct ev_loop *loop, ev_async *done, double watchdog_s,
    void *(*fn)(void *), void *arg)
{
	ev_timer watchdog;
	pthread_t th;

	ev_async_init(done, on_done);
	ev_async_start(loop, done);
	ev_timer_init(&watchdog, on_watchdog, watchdog_s, 0.);
	ev_timer_start(loop, &watchdog);
	cr_assert_eq(pthread_create(&th, NULL, fn, arg), 0);
	ev_run(loop, 0);
	pthread_join(th, NULL);
	ev_timer_stop(loop, &watchdog);
	ev_async_stop(loop, done);
}

static ctl_httpd *start_server(struct ev_loop *loop, const char *name,
    const char *cert, const char *key, unsigned request_timeout_ms)
{
	struct ctl_httpd_opts o = {
	    .name = name,
	    .listen = "127.0.0.1:0",
	    .cert_pem = cert,
	    .key_pem = key,
	    .max_body = MAX_BODY_CAP,
	    .request_timeout_ms = request_timeout_ms,
	};
	ctl_httpd *h = NULL;
	cu_error err;

	cr_assert_eq(ctl_httpd_new(&h, loop, &o, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(ctl_httpd_start(h, &err), CU_OK, "%s", err.msg);
	cr_assert_neq(ctl_httpd_port(h), 0);
	return h;
}

Test(ctl_httpd, serves_health_readiness_metrics_and_limits_in_the_loop,
    .timeout = 60)
{
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	static struct client c; /* large: keep it off the stack */
	struct as_tls_material tls;
	ctl_httpd *health_srv, *metrics_srv, *tls_srv;
	ctl_health *health = NULL;
	ctl_metrics *metrics = NULL;
	cu_error err;

	cr_assert_eq(curl_global_init(CURL_GLOBAL_DEFAULT), CURLE_OK);
	cr_assert_eq(
	    as_tls_generate(&tls, NULL, false, &err), CU_OK, "%s", err.msg);
	memset(&c, 0, sizeof(c));
	c.loop = loop;
	c.ca_pem = tls.ca_cert_pem;
	atomic_init(&c.informers_synced, 0);

	cr_assert_eq(ctl_health_new(&health, &err), CU_OK);
	cr_assert_eq(ctl_health_add_check(
			 health, "ledger-open", check_ledger, NULL, &err),
	    CU_OK);
	cr_assert_eq(ctl_health_add_check(
			 health, "informers-synced", check_synced, &c, &err),
	    CU_OK);
	cr_assert_eq(ctl_metrics_new(&metrics, NULL, &err), CU_OK);
	cr_assert_eq(ctl_metric_set(metrics, CTL_M_PENDING_WORKLOADS,
			 CTL_LV("cq", "active"), 3),
	    CU_OK);

	health_srv =
	    start_server(loop, "health", NULL, NULL, REQUEST_TIMEOUT_MS);
	cr_assert_eq(
	    ctl_health_mount(health, health_srv, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(ctl_httpd_route(health_srv, "POST PUT", "/echo",
			 serve_echo, NULL, &err),
	    CU_OK, "%s", err.msg);
	cr_expect_eq(
	    ctl_httpd_route(health_srv, "GET", "/echo", serve_echo, NULL, &err),
	    CU_EEXIST);
	metrics_srv = start_server(loop, "metrics", NULL, NULL, 0);
	cr_assert_eq(ctl_metrics_mount(metrics, metrics_srv, &err), CU_OK);
	/* The default deadline: a TLS handshake under valgrind can take more
	 * than the short one of the health server. */
	tls_srv = start_server(loop, "webhook", tls.cert_pem, tls.key_pem, 0);
	cr_assert_eq(ctl_health_mount(health, tls_srv, &err), CU_OK);

	c.health_port = ctl_httpd_port(health_srv);
	c.metrics_port = ctl_httpd_port(metrics_srv);
	c.tls_port = ctl_httpd_port(tls_srv);
	run_client(loop, &c.done, 45., client_main, &c);

	/* Liveness. */
	cr_expect_eq(c.r[S_HEALTHZ].status, 200);
	cr_expect_str_eq(c.r[S_HEALTHZ].body, "ok");
	cr_expect_str_eq(c.r[S_HEALTHZ].ctype, "text/plain; charset=utf-8");
	cr_expect_eq(c.r[S_LIVEZ].status, 200);
	/* Readiness, failing then passing. */
	cr_expect_eq(c.r[S_READYZ_FAIL].status, 500);
	cr_expect_str_eq(c.r[S_READYZ_FAIL].body,
	    "[+]ledger-open ok\n"
	    "[-]informers-synced failed: reason withheld\n"
	    "readyz check failed\n");
	cr_expect_eq(c.r[S_READYZ_FAIL_VERBOSE].status, 500);
	/* The probe port authenticates nobody: the reason is withheld
	 * (logged) even when verbose. */
	cr_expect_str_eq(c.r[S_READYZ_FAIL_VERBOSE].body,
	    "[+]ledger-open ok\n"
	    "[-]informers-synced failed: reason withheld\n"
	    "readyz check failed\n");
	cr_expect_eq(c.r[S_READYZ_PASS].status, 200);
	cr_expect_str_eq(c.r[S_READYZ_PASS].body, "ok");
	cr_expect_eq(c.r[S_READYZ_PASS_VERBOSE].status, 200);
	cr_expect_str_eq(c.r[S_READYZ_PASS_VERBOSE].body,
	    "[+]ledger-open ok\n"
	    "[+]informers-synced ok\n"
	    "readyz check passed\n");
	/* Metrics. */
	cr_expect_eq(c.r[S_METRICS].status, 200);
	cr_expect_str_eq(c.r[S_METRICS].ctype, CTL_METRICS_CONTENT_TYPE);
	cr_expect_not_null(strstr(c.r[S_METRICS].body,
	    "kueue_pending_workloads{cluster_queue=\"cq\",status=\"active\","
	    "replica_role=\"standalone\"} 3\n"));
	/* Routing. */
	cr_expect_eq(c.r[S_NOT_FOUND].status, 404);
	cr_expect_str_eq(c.r[S_NOT_FOUND].body, "404 page not found\n");
	cr_expect_eq(c.r[S_WRONG_METHOD].status, 405);
	cr_expect_str_eq(c.r[S_WRONG_METHOD].allow, "GET, HEAD");
	cr_expect_eq(c.r[S_HEAD].status, 200);
	cr_expect_eq(c.r[S_HEAD].len, 0);
	/* Bodies. */
	cr_expect_eq(c.r[S_ECHO].status, 200);
	cr_expect_eq(c.r[S_ECHO].len, strlen("POST /echo 11 ") + 11);
	cr_expect_eq(memcmp(c.r[S_ECHO].body, "POST /echo 11 hello\0world",
			 c.r[S_ECHO].len),
	    0);
	cr_expect_eq(c.r[S_TOO_BIG_LENGTH].status, 413, "curl %d",
	    c.r[S_TOO_BIG_LENGTH].curl_rc);
	cr_expect_eq(c.r[S_TOO_BIG_CHUNKED].status, 413, "curl %d",
	    c.r[S_TOO_BIG_CHUNKED].curl_rc);
	/* Slowloris: others are served meanwhile; it is cut at the deadline
	 * although it keeps sending. */
	cr_expect_eq(c.r[S_DURING_SLOWLORIS].status, 200);
	cr_expect(c.slow_closed, "slow client never cut off");
	cr_expect_lt(c.probe_done_after, c.slow_closed_after,
	    "the probe waited for the slow client (%.2f s >= %.2f s)",
	    c.probe_done_after, c.slow_closed_after);
	cr_expect_gt(c.slow_closed_after, 0.5);
	cr_expect_lt(
	    c.slow_closed_after, 3.0, "cut after %.2f s", c.slow_closed_after);
	/* TLS. */
	cr_expect_eq(c.r[S_TLS_HEALTHZ].curl_rc, 0, "curl %d",
	    c.r[S_TLS_HEALTHZ].curl_rc);
	cr_expect_eq(c.r[S_TLS_HEALTHZ].status, 200);
	cr_expect_str_eq(c.r[S_TLS_HEALTHZ].body, "ok");
	cr_expect_eq(c.r[S_AFTER_ALL].status, 200);

	ctl_httpd_free(tls_srv);
	ctl_httpd_free(metrics_srv);
	ctl_httpd_free(health_srv);
	ctl_metrics_free(metrics);
	ctl_health_free(health);
	as_tls_material_dispose(&tls);
	ev_loop_destroy(loop);
	curl_global_cleanup();
}

/* ---- in-process dispatch ---------------------------------------------- */

static const char *or_null(const char *s)
{
	return s != NULL ? s : "(null)";
}

/* Echoes what a handler can see of a request. */
static void serve_echo_all(const struct ctl_http_request *req,
    struct ctl_http_response *resp, void *payload)
{
	(void)payload;
	if (cu_buf_addf(&resp->body,
		"%s %s verbose=%s a=%s b=%s x-test=%s %zu:", req->method,
		req->path, or_null(ctl_http_query(req, "verbose")),
		or_null(ctl_http_query(req, "a")),
		or_null(ctl_http_query(req, "b")),
		or_null(ctl_http_header(req, "X-Test")),
		req->body_len) != CU_OK ||
	    cu_buf_add(&resp->body, req->body, req->body_len) != CU_OK)
		resp->status = 500;
}

static char big_body[BIG];

struct wire_case {
	const char *method;
	const char *target;
	const char *header; /* "Name: value" or NULL */
	const char *body;   /* NULL: none */
	size_t body_len;
};

static const struct wire_case WIRE[] = {
    {"GET", "/healthz", NULL, NULL, 0},
    {"GET", "/healt%68z", NULL, NULL, 0},
    {"GET", "/nope", NULL, NULL, 0},
    {"DELETE", "/healthz", NULL, NULL, 0},
    {"PUT", "/echo", NULL, "x", 1},
    {"GET", "/readyz?verbose", NULL, NULL, 0},
    {"GET", "/readyz?verbose=0&x", NULL, NULL, 0},
    {"GET", "/ech%6F?a=x%20y+z&verbose&b=", "X-Test: hello", NULL, 0},
    {"GET", "/echo?a=1&a=2&%62=%2F", "x-test: lower", NULL, 0},
    {"GET", "/echo?&&a&", NULL, NULL, 0},
    {"POST", "/echo", "X-Test: body", "hello\0world", 11},
    {"POST", "/echo", NULL, big_body, BIG},
};
#define N_WIRE (sizeof(WIRE) / sizeof(WIRE[0]))

struct wire_client {
	uint16_t port;
	struct result r[N_WIRE];
	struct ev_loop *loop;
	ev_async done;
};

static void *wire_main(void *arg)
{
	struct wire_client *c = arg;
	char url[256];
	size_t i;

	for (i = 0; i < N_WIRE; i++) {
		snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", c->port,
		    WIRE[i].target);
		fetch_with(&c->r[i], url, WIRE[i].method, WIRE[i].header,
		    WIRE[i].body, WIRE[i].body_len, false, NULL);
	}
	ev_async_send(c->loop, &c->done);
	return NULL;
}

/* The case's request in-process; out [owned: cu_buf_dispose]. */
static void dispatch_case(
    ctl_httpd *h, const struct wire_case *w, struct ctl_http_response *out)
{
	const char *headers[5] = {NULL};
	char name[32] = "", len[32];
	size_t n = 0;
	cu_error err;

	if (w->header != NULL) {
		size_t k = strcspn(w->header, ":");

		snprintf(name, sizeof(name), "%.*s", (int)k, w->header);
		headers[n++] = name;
		headers[n++] = w->header + k + 2;
	}
	if (w->body != NULL) { /* as curl sends it */
		snprintf(len, sizeof(len), "%zu", w->body_len);
		headers[n++] = "Content-Length";
		headers[n++] = len;
	}
	cr_assert_eq(ctl_httpd_dispatch(h, w->method, w->target, headers,
			 w->body, w->body_len, out, &err),
	    CU_OK, "%s", err.msg);
}

static ctl_httpd *echo_server(struct ev_loop *loop, ctl_health *health)
{
	struct ctl_httpd_opts o = {
	    .name = "dispatch",
	    .listen = "127.0.0.1:0",
	    .max_body = MAX_BODY_CAP,
	};
	ctl_httpd *h = NULL;
	cu_error err;

	cr_assert_eq(ctl_httpd_new(&h, loop, &o, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(ctl_health_mount(health, h, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(
	    ctl_httpd_route(h, "GET POST", "/echo", serve_echo_all, NULL, &err),
	    CU_OK, "%s", err.msg);
	return h;
}

/* The same requests over a socket and through ctl_httpd_dispatch get the
 * same status, body and Allow: routing, %-decoding of the path, the
 * query arguments and headers the handler reads, and the body cap. */
Test(ctl_httpd, dispatch_answers_as_the_wire_does, .timeout = 60)
{
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	static struct wire_client c;
	struct ctl_http_response out;
	ctl_health *health = NULL;
	ctl_httpd *h;
	cu_error err;
	size_t i;

	cr_assert_eq(curl_global_init(CURL_GLOBAL_DEFAULT), CURLE_OK);
	memset(big_body, 'b', sizeof(big_body));
	cr_assert_eq(ctl_health_new(&health, &err), CU_OK);
	cr_assert_eq(ctl_health_add_check(
			 health, "ledger-open", check_ledger, NULL, &err),
	    CU_OK);
	h = echo_server(loop, health);
	cr_assert_eq(ctl_httpd_start(h, &err), CU_OK, "%s", err.msg);
	memset(&c, 0, sizeof(c));
	c.port = ctl_httpd_port(h);
	c.loop = loop;
	run_client(loop, &c.done, 45., wire_main, &c);

	for (i = 0; i < N_WIRE; i++) {
		const struct result *r = &c.r[i];

		cr_assert_eq(r->curl_rc, 0, "%s %s: curl %d", WIRE[i].method,
		    WIRE[i].target, r->curl_rc);
		dispatch_case(h, &WIRE[i], &out);
		cr_expect_eq(out.status, r->status, "%s %s: %d in-process, %ld",
		    WIRE[i].method, WIRE[i].target, out.status, r->status);
		cr_expect(out.body.len == r->len &&
			      (r->len == 0 ||
				  memcmp(out.body.ptr, r->body, r->len) == 0),
		    "%s %s: \"%s\" in-process, \"%s\"", WIRE[i].method,
		    WIRE[i].target, out.body.ptr ? out.body.ptr : "", r->body);
		cr_expect_str_eq(out.allow, r->allow, "%s %s", WIRE[i].method,
		    WIRE[i].target);
		cu_buf_dispose(&out.body);
	}
	/* And what both got is what the handlers promise. */
	cr_expect_eq(c.r[1].status, 200);
	cr_expect_str_eq(c.r[1].body, "ok");
	cr_expect_eq(c.r[2].status, 404);
	cr_expect_eq(c.r[3].status, 405);
	cr_expect_str_eq(c.r[3].allow, "GET, HEAD");
	cr_expect_eq(c.r[4].status, 405);
	cr_expect_str_eq(c.r[4].allow, "GET, POST, HEAD");
	cr_expect_str_eq(
	    c.r[5].body, "[+]ledger-open ok\nreadyz check passed\n");
	cr_expect_str_eq(
	    c.r[6].body, "[+]ledger-open ok\nreadyz check passed\n");
	cr_expect_str_eq(
	    c.r[7].body, "GET /echo verbose= a=x y z b= x-test=hello 0:");
	cr_expect_str_eq(
	    c.r[8].body, "GET /echo verbose=(null) a=1 b=/ x-test=lower 0:");
	cr_expect_str_eq(c.r[9].body,
	    "GET /echo verbose=(null) a= b=(null) x-test=(null) 0:");
	cr_expect_eq(c.r[10].len, strlen("POST /echo verbose=(null) a=(null) "
					 "b=(null) x-test=body 11:") +
				      11);
	cr_expect_eq(c.r[11].status, 413);

	ctl_httpd_free(h);
	ctl_health_free(health);
	ev_loop_destroy(loop);
	curl_global_cleanup();
}

static int check_flag(cu_error *err, void *payload)
{
	if (*(const bool *)payload)
		return CU_OK;
	return cu_error_set(err, CU_EAGAIN, "not yet");
}

/* One in-process request that must be served; returns its status.
 * out->body [owned: cu_buf_dispose]. */
static int serve(ctl_httpd *h, const char *method, const char *target,
    const char *const *headers, const char *body, size_t len,
    struct ctl_http_response *out)
{
	cu_error err;

	cr_assert_eq(ctl_httpd_dispatch(
			 h, method, target, headers, body, len, out, &err),
	    CU_OK, "%s %s: %s", method, target, err.msg);
	return out->status;
}

/* Without a socket or a start: the decisions a server makes before and
 * after reading a body, and the handlers' replies. */
Test(ctl_httpd, dispatch_routes_checks_methods_and_caps_the_body)
{
	static char body[MAX_BODY_CAP + 1];
	const char *const len_over[] = {"content-length", "65537", NULL};
	const char *const len_bad[] = {"Content-Length", "abc", NULL};
	struct ctl_http_response out;
	ctl_health *health = NULL;
	ctl_metrics *metrics = NULL;
	ctl_httpd *h;
	bool ready = false;
	cu_error err;

	memset(body, 'x', sizeof(body));
	cr_assert_eq(ctl_health_new(&health, &err), CU_OK);
	cr_assert_eq(
	    ctl_health_add_check(health, "synced", check_flag, &ready, &err),
	    CU_OK);
	cr_assert_eq(ctl_metrics_new(&metrics, NULL, &err), CU_OK);
	h = echo_server(NULL, health);
	cr_assert_eq(ctl_metrics_mount(metrics, h, &err), CU_OK);

	cr_expect_eq(
	    ctl_httpd_dispatch(h, NULL, "/healthz", NULL, NULL, 0, &out, &err),
	    CU_EINVAL);
	cr_expect_eq(out.status, 500);
	cu_buf_dispose(&out.body);

	/* Methods: one word, as listed (GET brings HEAD). */
	cr_expect_eq(serve(h, "HEAD", "/healthz", NULL, NULL, 0, &out), 200);
	cr_expect_str_eq(out.body.ptr, "ok");
	cu_buf_dispose(&out.body);
	cr_expect_eq(serve(h, "GET HEAD", "/healthz", NULL, NULL, 0, &out), 405,
	    "a two-word method matched");
	cr_expect_str_eq(out.allow, "GET, HEAD");
	cr_expect_str_eq(out.body.ptr, "405 method not allowed\n");
	cu_buf_dispose(&out.body);
	cr_expect_eq(serve(h, "", "/healthz", NULL, NULL, 0, &out), 405);
	cu_buf_dispose(&out.body);
	cr_expect_eq(serve(h, "GET", "/healthz/", NULL, NULL, 0, &out), 404);
	cr_expect_str_eq(out.allow, "");
	cu_buf_dispose(&out.body);

	/* Readiness follows its check; the query reaches the handler. */
	cr_expect_eq(
	    serve(h, "GET", "/readyz?verbose", NULL, NULL, 0, &out), 500);
	cr_expect_str_eq(out.body.ptr,
	    "[-]synced failed: reason withheld\nreadyz check failed\n");
	cu_buf_dispose(&out.body);
	ready = true;
	cr_expect_eq(serve(h, "GET", "/readyz", NULL, NULL, 0, &out), 200);
	cr_expect_str_eq(out.body.ptr, "ok");
	cu_buf_dispose(&out.body);

	/* /metrics with its content type. */
	cr_expect_eq(serve(h, "GET", "/metrics", NULL, NULL, 0, &out), 200);
	cr_expect_str_eq(out.content_type, CTL_METRICS_CONTENT_TYPE);
	cr_expect_not_null(
	    strstr(out.body.ptr, "# TYPE cueue_build_info gauge"));
	cu_buf_dispose(&out.body);

	/* The body cap: early by Content-Length (any case), late by size;
	 * a Content-Length that is no number decides nothing. */
	cr_expect_eq(serve(h, "POST", "/echo", len_over, "x", 1, &out), 413);
	cr_expect_str_eq(out.body.ptr, "413 request body too large\n");
	cu_buf_dispose(&out.body);
	cr_expect_eq(
	    serve(h, "POST", "/echo", NULL, body, MAX_BODY_CAP + 1, &out), 413);
	cu_buf_dispose(&out.body);
	cr_expect_eq(
	    serve(h, "POST", "/echo", len_bad, body, MAX_BODY_CAP, &out), 200);
	cr_expect_eq(
	    out.body.len, strlen("POST /echo verbose=(null) a=(null) b=(null) "
				 "x-test=(null) 65536:") +
			      MAX_BODY_CAP);
	cu_buf_dispose(&out.body);

	ctl_httpd_free(h);
	ctl_metrics_free(metrics);
	ctl_health_free(health);
}

/* ---- connection limit ------------------------------------------------ */

struct limit_client {
	uint16_t port;
	struct result while_full, after_cut;
	struct ev_loop *loop;
	ev_async done;
};

static int open_partial(uint16_t port)
{
	static const char head[] = "GET /healthz HTTP/1.1\r\nHost: x\r\n";
	struct sockaddr_in sa;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 &&
	    (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
		send(fd, head, sizeof(head) - 1, MSG_NOSIGNAL) < 0)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static void *limit_main(void *arg)
{
	struct limit_client *c = arg;
	int a = open_partial(c->port), b = open_partial(c->port);
	struct timespec pause = {0, 200 * 1000 * 1000};

	nanosleep(&pause, NULL); /* let the loop accept both */
	get(&c->while_full, c->port, "/healthz");
	pause.tv_sec = 2; /* past the 1 s deadline of both hogs */
	pause.tv_nsec = 0;
	nanosleep(&pause, NULL);
	get(&c->after_cut, c->port, "/healthz");
	if (a >= 0)
		close(a);
	if (b >= 0)
		close(b);
	ev_async_send(c->loop, &c->done);
	return NULL;
}

Test(ctl_httpd, connection_limit_queues_clients_until_the_deadline_frees_a_slot,
    .timeout = 30)
{
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	struct ctl_httpd_opts o = {.listen = "127.0.0.1:0",
	    .conn_limit = 2,
	    .request_timeout_ms = REQUEST_TIMEOUT_MS};
	static struct limit_client c;
	ctl_health *health = NULL;
	ctl_httpd *h = NULL;
	cu_error err;

	cr_assert_eq(curl_global_init(CURL_GLOBAL_DEFAULT), CURLE_OK);
	cr_assert_eq(ctl_health_new(&health, &err), CU_OK);
	cr_assert_eq(ctl_httpd_new(&h, loop, &o, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(ctl_health_mount(health, h, &err), CU_OK);
	cr_assert_eq(ctl_httpd_start(h, &err), CU_OK, "%s", err.msg);
	memset(&c, 0, sizeof(c));
	c.port = ctl_httpd_port(h);
	c.loop = loop;
	run_client(loop, &c.done, 25., limit_main, &c);

	/* The third client waits in the listen backlog (MHD accepts no more
	 * than the limit) until the deadline cuts a hog, then is served. */
	cr_expect_eq(c.while_full.status, 200, "curl %d", c.while_full.curl_rc);
	cr_expect_gt(c.while_full.secs, 0.5,
	    "served after %.2f s: the limit did not hold", c.while_full.secs);
	cr_expect_eq(c.after_cut.status, 200, "curl %d", c.after_cut.curl_rc);
	cr_expect_str_eq(c.after_cut.body, "ok");
	ctl_httpd_free(h);
	ctl_health_free(health);
	ev_loop_destroy(loop);
	curl_global_cleanup();
}

/* ---- set-up errors --------------------------------------------------- */

Test(ctl_httpd, bad_listen_addresses_are_rejected)
{
	static const char *const bad[] = {"", "8080", "host:", ":http",
	    ":70000", "[::1]8080", "[::1", ":-1", NULL};
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	ctl_httpd *h = NULL;
	cu_error err;
	size_t i;

	for (i = 0; bad[i] != NULL; i++) {
		struct ctl_httpd_opts o = {.listen = bad[i]};

		cr_expect_eq(
		    ctl_httpd_new(&h, loop, &o, &err), CU_EINVAL, "%s", bad[i]);
		cr_expect_null(h);
	}
	{
		struct ctl_httpd_opts o = {
		    .listen = "127.0.0.1:0", .cert_pem = "x"};

		cr_expect_eq(ctl_httpd_new(&h, loop, &o, &err), CU_EINVAL);
	}
	ctl_httpd_free(NULL);
	ev_loop_destroy(loop);
}

Test(ctl_httpd, busy_port_and_bad_certificate_fail_to_start)
{
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	struct ctl_httpd_opts o = {.name = "a", .listen = "127.0.0.1:0"};
	ctl_httpd *a = NULL, *b = NULL, *t = NULL;
	char addr[32];
	cu_error err;

	cr_assert_eq(ctl_httpd_new(&a, loop, &o, &err), CU_OK);
	cr_assert_eq(ctl_httpd_start(a, &err), CU_OK, "%s", err.msg);
	cr_expect_eq(ctl_httpd_start(a, &err), CU_EINVAL);
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", ctl_httpd_port(a));
	o.listen = addr;
	o.name = "b";
	cr_assert_eq(ctl_httpd_new(&b, loop, &o, &err), CU_OK);
	cr_expect_eq(ctl_httpd_start(b, &err), CU_EIO);
	cr_expect_not_null(strstr(err.msg, addr), "%s", err.msg);
	cr_expect_eq(ctl_httpd_port(b), 0);

	o.listen = "127.0.0.1:0";
	o.cert_pem = "not a certificate";
	o.key_pem = "not a key";
	cr_assert_eq(ctl_httpd_new(&t, loop, &o, &err), CU_OK);
	cr_expect_eq(ctl_httpd_start(t, &err), CU_EIO);
	ctl_httpd_free(t);
	ctl_httpd_free(b);
	ctl_httpd_free(a);
	ev_loop_destroy(loop);
}

Test(ctl_httpd, all_interfaces_and_localhost_listen)
{
	static const char *const addrs[] = {
	    ":0", "localhost:0", "[::1]:0", "0.0.0.0:0"};
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	size_t i;

	for (i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
		struct ctl_httpd_opts o = {.listen = addrs[i]};
		ctl_httpd *h = NULL;
		cu_error err;
		int rc;

		cr_assert_eq(
		    ctl_httpd_new(&h, loop, &o, &err), CU_OK, "%s", addrs[i]);
		rc = ctl_httpd_start(h, &err);
		/* [::1] may be missing where IPv6 is off. */
		if (strcmp(addrs[i], "[::1]:0") != 0 || rc == CU_OK)
			cr_expect_eq(rc, CU_OK, "%s: %s", addrs[i], err.msg);
		if (rc == CU_OK)
			cr_expect_neq(ctl_httpd_port(h), 0);
		ctl_httpd_free(h);
	}
	ev_loop_destroy(loop);
}

/* ---- health registry ------------------------------------------------- */

static int check_fails_silently(cu_error *err, void *payload)
{
	(void)err;
	(void)payload;
	return CU_EIO;
}

Test(ctl_health, check_names_are_validated_and_unique)
{
	ctl_health *h = NULL;
	cu_error err;
	cu_buf b;

	cr_assert_eq(ctl_health_new(&h, &err), CU_OK);
	cr_expect(ctl_health_ready(h, NULL, false), "no checks: ready");
	cr_expect_eq(
	    ctl_health_add_check(h, "Bad Name", check_ledger, NULL, &err),
	    CU_EINVAL);
	cr_expect_eq(
	    ctl_health_add_check(h, "", check_ledger, NULL, &err), CU_EINVAL);
	cr_expect_eq(
	    ctl_health_add_check(h, "store", check_fails_silently, NULL, &err),
	    CU_OK);
	cr_expect_eq(ctl_health_add_check(h, "store", check_ledger, NULL, &err),
	    CU_EEXIST);
	cu_buf_init(&b, 4096);
	cr_expect_not(ctl_health_ready(h, &b, true));
	cr_expect_str_eq(b.ptr,
	    "[-]store failed: i/o error\nreadyz check failed\n",
	    "a check without a message gets its code's description");
	cu_buf_dispose(&b);
	ctl_health_free(h);
	ctl_health_free(NULL);
}
