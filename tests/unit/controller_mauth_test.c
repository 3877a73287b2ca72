/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/controller_mauth_test.c - controller/mauth.h against the
 * in-process cueue-apiserver: a failing TokenReview is a 500
 * "Authentication failed" and is not cached; a failing
 * SubjectAccessReview is a 500 naming the user; a scrape waiting on a
 * review when the gate is freed is answered 503; reviews are cached. In
 * k8s.io/apiserver's mode (the visibility server): no credentials is
 * system:anonymous, a bad or unreviewable token a 401 Status,
 * system:masters needs no review, a refusal is kube's Forbidden Status
 * for the request's resource attributes. A
 * client thread (libcurl) talks to a plain-HTTP server gated by mauth on
 * the fixture's loop; assertions run after the loop stops.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>
#include <ev.h>

#include "controller/httpd.h"
#include "controller/mauth.h"
#include "tests/unit/fixtures.h"

struct result {
	long status;
	char body[1024];
	size_t len;
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

static const char *req_path = "/metrics";

static void scrape(struct result *r, const char *token)
{
	CURL *e = curl_easy_init();
	struct curl_slist *hdrs = NULL;
	char url[128], auth[128];

	memset(r, 0, sizeof(*r));
	if (e == NULL)
		return;
	snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", port, req_path);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
	if (token != NULL)
		hdrs = curl_slist_append(hdrs, auth);
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, 20000L);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, hdrs);
	(void)curl_easy_perform(e);
	curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &r->status);
	curl_slist_free_all(hdrs);
	curl_easy_cleanup(e);
}

static void serve(const struct ctl_http_request *req,
    struct ctl_http_response *resp, void *payload)
{
	(void)req;
	(void)payload;
	(void)ctl_http_reply(resp, 200, "# metrics\n");
}

/* Faults as cueue-apiserver's /__test/faults takes them. */
static void set_faults(const char *rules_json)
{
	struct fx_result r;
	json_t *body = json_loads(rules_json, 0, NULL);

	cr_assert_not_null(body, "bad rules JSON");
	fx_call(&r, "POST", "/__test/faults", NULL, body);
	cr_assert_eq(r.code, 200, "faults: %d %s", r.code, r.msg);
	fx_result_dispose(&r);
}

struct job {
	const char *token;
	struct result *out;
};

static void *client_main(void *arg)
{
	struct job *j = arg;

	scrape(j->out, j->token);
	atomic_store(&client_done, 1);
	return NULL;
}

/* Scrape with token from a thread while the loop runs. */
static void scrape_in_loop(const char *token, struct result *out)
{
	struct job j = {token, out};
	pthread_t th;

	atomic_store(&client_done, 0);
	cr_assert_eq(pthread_create(&th, NULL, client_main, &j), 0);
	while (!atomic_load(&client_done))
		ev_run(fx_loop, EVRUN_ONCE);
	pthread_join(th, NULL);
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

Test(ctl_mauth, failed_reviews_are_500s_and_not_cached, .init = fx_setup,
    .fini = fx_teardown, .timeout = 60)
{
	ctl_mauth *m = NULL;
	ctl_httpd *h = gated_server(&m);
	struct ctl_mauth_stats st;
	struct result r;

	set_faults("{\"rules\":[{\"pathPrefix\":\"/apis/authentication.k8s.io"
		   "/\",\"code\":500}]}");
	scrape_in_loop(FX_TOKEN, &r);
	cr_expect_eq(r.status, 500);
	cr_expect_str_eq(r.body, "Authentication failed\n");
	set_faults("{\"rules\":[{\"pathPrefix\":\"/apis/authorization.k8s.io/"
		   "\",\"code\":500}]}");
	/* Not cached: a new TokenReview, then the failing access review. */
	scrape_in_loop(FX_TOKEN, &r);
	cr_expect_eq(r.status, 500);
	cr_expect_str_eq(r.body, "Authorization for user admin failed\n");
	set_faults("{\"rules\":[]}");
	scrape_in_loop(FX_TOKEN, &r);
	cr_expect_eq(r.status, 200, "the fixture's admin: %s", r.body);
	cr_expect_str_eq(r.body, "# metrics\n");
	ctl_mauth_stats(m, &st);
	cr_expect_eq(st.token_reviews, 2, "the 500 was not cached");
	cr_expect_eq(st.access_reviews, 2);
	scrape_in_loop(FX_TOKEN, &r);
	cr_expect_eq(r.status, 200);
	ctl_mauth_stats(m, &st);
	cr_expect_eq(st.token_reviews, 2, "cached now");
	cr_expect_eq(st.access_reviews, 2, "cached now");
	cr_expect_eq(
	    st.cache_hits, 3, "one TokenReview hit, two decision hits");
	scrape_in_loop("unknown", &r);
	cr_expect_eq(r.status, 401);
	cr_expect_str_eq(r.body, "Unauthorized\n");
	ctl_mauth_free(m);
	ctl_httpd_free(h);
	curl_global_cleanup();
}

static ctl_mauth *to_free;

static void free_gate(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)w;
	(void)revents;
	ctl_mauth_free(to_free);
	to_free = NULL;
}

Test(ctl_mauth, a_scrape_waiting_when_the_gate_goes_is_a_503, .init = fx_setup,
    .fini = fx_teardown, .timeout = 60)
{
	ctl_mauth *m = NULL;
	ctl_httpd *h = gated_server(&m);
	struct result r;
	ev_timer t;

	/* The TokenReview takes 5 s; the gate goes after 0.3 s. */
	set_faults("{\"rules\":[{\"pathPrefix\":\"/apis/authentication.k8s.io"
		   "/\",\"latencyMs\":5000}]}");
	to_free = m;
	ev_timer_init(&t, free_gate, 0.3, 0.);
	ev_timer_start(fx_loop, &t);
	scrape_in_loop(FX_TOKEN, &r);
	cr_expect_eq(r.status, 503);
	cr_expect_null(to_free, "freed while the scrape waited");
	ev_timer_stop(fx_loop, &t);
	ctl_httpd_free(h);
	curl_global_cleanup();
}

/* ---- k8s.io/apiserver's mode ------------------------------------------- */

#define CQ_PATH                                                                \
	"/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/cq/"            \
	"pendingworkloads"

static json_t *cq_attrs(const struct ctl_http_request *req, void *payload)
{
	(void)payload;
	return json_pack("{s{ss ss ss ss ss ss ss}}", "resourceAttributes",
	    "namespace", "", "verb", "get", "group",
	    "visibility.kueue.x-k8s.io", "version", "v1beta2", "resource",
	    "clusterqueues", "subresource", "pendingworkloads", "name",
	    req->path[0] == '/' ? "cq" : "?");
}

static void add_token(const char *token, const char *user)
{
	struct fx_result r;

	fx_call(&r, "POST", "/__test/tokens", NULL,
	    json_pack("{s:[{s:s, s:s}]}", "add", "token", token, "user", user));
	cr_assert_eq(r.code, 200, "tokens: %d %s", r.code, r.msg);
	fx_result_dispose(&r);
}

Test(ctl_mauth, apiserver_mode_as_k8s_apiserver_answers, .init = fx_setup,
    .fini = fx_teardown, .timeout = 60)
{
	struct ctl_httpd_opts o = {.name = "vis", .listen = "127.0.0.1:0"};
	struct ctl_mauth_opts mo;
	struct ctl_mauth_stats st;
	ctl_httpd *h = NULL;
	ctl_mauth *m = NULL;
	struct result r;
	cu_error err;

	memset(&mo, 0, sizeof(mo));
	mo.name = "visibility";
	mo.apiserver = true;
	mo.attributes = cq_attrs;
	cr_assert_eq(curl_global_init(CURL_GLOBAL_DEFAULT), CURLE_OK);
	cr_assert_eq(ctl_httpd_new(&h, fx_loop, &o, &err), CU_OK);
	cr_assert_eq(
	    ctl_httpd_route(h, "GET", "/apis/*", serve, NULL, &err), CU_OK);
	cr_assert_eq(ctl_mauth_new_opts(&m, fx_cl, &mo, &err), CU_OK);
	cr_assert_eq(ctl_mauth_mount(m, h, &err), CU_OK);
	cr_assert_eq(ctl_httpd_start(h, &err), CU_OK, "%s", err.msg);
	port = ctl_httpd_port(h);
	req_path = CQ_PATH;
	add_token("bob-token", "bob");
	/* The fixture's admin is in system:masters: no access review. */
	scrape_in_loop(FX_TOKEN, &r);
	cr_expect_eq(r.status, 200, "%s", r.body);
	ctl_mauth_stats(m, &st);
	cr_expect_eq(st.access_reviews, 0);
	/* No credentials: system:anonymous, refused by RBAC. */
	scrape_in_loop(NULL, &r);
	cr_expect_eq(r.status, 403);
	cr_expect(
	    strstr(r.body,
		"\"message\":\"clusterqueues.visibility.kueue.x-k8s.io "
		"\\\"cq\\\" is forbidden: User \\\"system:anonymous\\\" "
		"cannot get resource \\\"clusterqueues/pendingworkloads\\\" "
		"in API group \\\"visibility.kueue.x-k8s.io\\\" at the "
		"cluster scope\"") != NULL,
	    "%s", r.body);
	cr_expect(
	    strstr(r.body, "\"reason\":\"Forbidden\"") != NULL, "%s", r.body);
	/* A user without RBAC. */
	scrape_in_loop("bob-token", &r);
	cr_expect_eq(r.status, 403);
	cr_expect(strstr(r.body, "User \\\"bob\\\" cannot get") != NULL, "%s",
	    r.body);
	ctl_mauth_stats(m, &st);
	cr_expect_eq(st.access_reviews, 2);
	/* Cached: the same refusal without a review. */
	scrape_in_loop("bob-token", &r);
	cr_expect_eq(r.status, 403);
	ctl_mauth_stats(m, &st);
	cr_expect_eq(st.access_reviews, 2);
	/* A token the API server does not know, and a failing review. */
	scrape_in_loop("unknown", &r);
	cr_expect_eq(r.status, 401);
	cr_expect(strstr(r.body, "\"reason\":\"Unauthorized\"") != NULL, "%s",
	    r.body);
	set_faults("{\"rules\":[{\"pathPrefix\":\"/apis/authentication.k8s.io"
		   "/\",\"code\":500}]}");
	scrape_in_loop("another", &r);
	cr_expect_eq(r.status, 401, "%s", r.body);
	set_faults("{\"rules\":[]}");
	req_path = "/metrics";
	ctl_mauth_free(m);
	ctl_httpd_free(h);
	curl_global_cleanup();
}
