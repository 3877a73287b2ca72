/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/controller_mauth_limits_test.c - controller/mauth.h's limits
 * against the in-process cueue-apiserver: a flood of scrapes with made-up
 * tokens while TokenReviews are slow never has more reviews in flight
 * than the per-address limit, the rest are answered 429 with Retry-After,
 * and a token reviewed before the flood is still served during it; an
 * address whose tokens keep failing gets no new TokenReview once its
 * budget is spent (429), a refused token is answered from the refused
 * cache, and a good token is unaffected. A client thread (libcurl multi)
 * talks to a plain-HTTP server gated by mauth on the fixture's loop.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>
#include <ev.h>

#include "controller/httpd.h"
#include "controller/mauth.h"
#include "tests/unit/fixtures.h"

#define FLOOD 40

struct result {
	long status;
	char body[256];
	size_t len;
	bool retry_after;
};

static uint16_t port;
static atomic_int client_done;

static size_t on_data(char *p, size_t size, size_t n, void *userdata)
{
	struct result *r = userdata;
	size_t len = size * n, room = sizeof(r->body) - 1 - r->len;

	memcpy(r->body + r->len, p, len < room ? len : room);
	r->len += len < room ? len : room;
	r->body[r->len] = '\0';
	return len;
}

static size_t on_header(char *p, size_t size, size_t n, void *userdata)
{
	struct result *r = userdata;

	if (size * n >= 13 && strncasecmp(p, "Retry-After: ", 13) == 0)
		r->retry_after = true;
	return size * n;
}

static CURL *easy(struct result *r, const char *token, struct curl_slist **h)
{
	CURL *e = curl_easy_init();
	char url[128], auth[160];

	memset(r, 0, sizeof(*r));
	cr_assert_not_null(e);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/metrics", port);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
	*h = curl_slist_append(NULL, auth);
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, 20000L);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, r);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, *h);
	return e;
}

/* n scrapes at once, tokens[i] each, results in out[i]. */
struct batch {
	const char *const *tokens;
	struct result *out;
	int n;
};

static void *batch_main(void *arg)
{
	struct batch *b = arg;
	CURLM *mh = curl_multi_init();
	CURL *e[FLOOD + 1];
	struct curl_slist *h[FLOOD + 1];
	int i, running = 1;

	for (i = 0; i < b->n; i++) {
		e[i] = easy(&b->out[i], b->tokens[i], &h[i]);
		curl_multi_add_handle(mh, e[i]);
	}
	while (running > 0) {
		curl_multi_perform(mh, &running);
		if (running > 0)
			curl_multi_poll(mh, NULL, 0, 100, NULL);
	}
	for (i = 0; i < b->n; i++) {
		curl_easy_getinfo(
		    e[i], CURLINFO_RESPONSE_CODE, &b->out[i].status);
		curl_multi_remove_handle(mh, e[i]);
		curl_easy_cleanup(e[i]);
		curl_slist_free_all(h[i]);
	}
	curl_multi_cleanup(mh);
	atomic_store(&client_done, 1);
	return NULL;
}

static void scrape_all(const char *const *tokens, struct result *out, int n)
{
	struct batch b = {tokens, out, n};
	pthread_t th;

	atomic_store(&client_done, 0);
	cr_assert_eq(pthread_create(&th, NULL, batch_main, &b), 0);
	while (!atomic_load(&client_done))
		ev_run(fx_loop, EVRUN_ONCE);
	pthread_join(th, NULL);
}

static void scrape(const char *token, struct result *out)
{
	const char *t[1] = {token};

	scrape_all(t, out, 1);
}

static void serve(const struct ctl_http_request *req,
    struct ctl_http_response *resp, void *payload)
{
	(void)req;
	(void)payload;
	(void)ctl_http_reply(resp, 200, "# metrics\n");
}

static ctl_httpd *gated_server(ctl_mauth **m)
{
	struct ctl_httpd_opts o = {.name = "metrics", .listen = "127.0.0.1:0"};
	ctl_httpd *h = NULL;
	cu_error err;

	cr_assert_eq(curl_global_init(CURL_GLOBAL_DEFAULT), CURLE_OK);
	cr_assert_eq(ctl_httpd_new(&h, fx_loop, &o, &err), CU_OK);
	cr_assert_eq(
	    ctl_httpd_route(h, "GET", "/metrics", serve, NULL, &err), CU_OK);
	cr_assert_eq(ctl_mauth_new(m, fx_cl, &err), CU_OK);
	cr_assert_eq(ctl_mauth_mount(*m, h, &err), CU_OK);
	cr_assert_eq(ctl_httpd_start(h, &err), CU_OK, "%s", err.msg);
	port = ctl_httpd_port(h);
	return h;
}

Test(ctl_mauth_limits, a_flood_of_made_up_tokens_is_capped_and_answered_429,
    .init = fx_setup, .fini = fx_teardown, .timeout = 120)
{
	ctl_mauth *m = NULL;
	ctl_httpd *h = gated_server(&m);
	struct ctl_mauth_stats st;
	static struct result out[FLOOD + 1];
	static char names[FLOOD][32];
	const char *tokens[FLOOD + 1];
	int i, n429 = 0, n401 = 0, retry = 0;

	/* The good token is reviewed (and cached) before the flood. */
	scrape(FX_TOKEN, &out[0]);
	cr_assert_eq(out[0].status, 200, "%s", out[0].body);
	/* Every review now takes a second: they pile up. */
	fx_faults("{\"rules\":[{\"pathPrefix\":\"/apis/authentication.k8s.io"
		  "/\",\"latencyMs\":1000}]}");
	for (i = 0; i < FLOOD; i++) {
		snprintf(names[i], sizeof(names[i]), "made-up-%d", i);
		tokens[i] = names[i];
	}
	tokens[FLOOD] = FX_TOKEN; /* the scraper, during the flood */
	scrape_all(tokens, out, FLOOD + 1);
	for (i = 0; i < FLOOD; i++) {
		n429 += out[i].status == 429;
		n401 += out[i].status == 401;
		if (out[i].status == 429) {
			retry += out[i].retry_after;
			cr_expect_str_eq(out[i].body, CTL_MAUTH_TOO_MANY);
		}
	}
	ctl_mauth_stats(m, &st);
	cr_expect_eq(out[FLOOD].status, 200,
	    "the scraper during the flood: "
	    "%ld %s",
	    out[FLOOD].status, out[FLOOD].body);
	cr_expect_leq(st.inflight_peak, CTL_MAUTH_PER_IP_INFLIGHT,
	    "reviews in flight at once: %lu", st.inflight_peak);
	cr_expect_eq(
	    n401 + n429, FLOOD, "%d refused, %d throttled", n401, n429);
	cr_expect_leq(n401, CTL_MAUTH_PER_IP_INFLIGHT);
	cr_expect_geq(n429, FLOOD - (int)CTL_MAUTH_PER_IP_INFLIGHT);
	cr_expect_eq(retry, n429, "Retry-After on every 429");
	cr_expect_eq(st.throttled, (unsigned long)n429);
	cr_expect_eq(st.token_reviews, 1 + (unsigned long)n401,
	    "one review per answered made-up token, none for a 429");
	ctl_mauth_free(m);
	ctl_httpd_free(h);
	curl_global_cleanup();
}

Test(ctl_mauth_limits, failing_tokens_spend_the_address_budget,
    .init = fx_setup, .fini = fx_teardown, .timeout = 120)
{
	ctl_mauth *m = NULL;
	ctl_httpd *h = gated_server(&m);
	struct ctl_mauth_stats st;
	struct result r;
	char tok[32];
	unsigned i;
	int n401 = 0, n429 = 0;

	scrape(FX_TOKEN, &r);
	cr_assert_eq(r.status, 200);
	for (i = 0; i < CTL_MAUTH_FAIL_BURST + 5; i++) {
		snprintf(tok, sizeof(tok), "bad-%u", i);
		scrape(tok, &r);
		n401 += r.status == 401;
		n429 += r.status == 429;
	}
	ctl_mauth_stats(m, &st);
	/* The budget refills at one a second: a slow machine may earn one
	 * or two more reviews during the loop. */
	cr_expect_geq(n401, (int)CTL_MAUTH_FAIL_BURST);
	cr_expect_leq(n401, (int)CTL_MAUTH_FAIL_BURST + 3);
	cr_expect_eq(n401 + n429, (int)CTL_MAUTH_FAIL_BURST + 5);
	cr_expect_eq(st.token_reviews, 1 + (unsigned long)n401);
	/* A refused token again: the refused cache answers, no review. */
	scrape("bad-0", &r);
	cr_expect_eq(r.status, 401);
	/* The good token is cached and unaffected. */
	scrape(FX_TOKEN, &r);
	cr_expect_eq(r.status, 200);
	ctl_mauth_stats(m, &st);
	cr_expect_eq(st.token_reviews, 1 + (unsigned long)n401);
	ctl_mauth_free(m);
	ctl_httpd_free(h);
	curl_global_cleanup();
}
