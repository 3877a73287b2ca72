/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/client_life.c - the API client's lifecycle (options checked and
 * copied, libcurl's multi handle set up, everything freed), its bearer
 * token (read, trimmed, reloaded on a timer) and its request counters by
 * verb and code. The request engine is api/client.c; see api/client.h.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "api/client.h"
#include "api/client_int.h"

const char *const api__verb_names[] = {
    "GET", "POST", "PUT", "PATCH", "DELETE", "OTHER"};

int api__verb_index(const char *m)
{
	int i;

	for (i = 0; i < VERB_OTHER; i++)
		if (strcmp(m, api__verb_names[i]) == 0)
			return i;
	return VERB_OTHER;
}

void api__count_attempt(api_client *c, int verb, int code)
{
	size_t i;

	for (i = 0; i < c->nstats; i++)
		if (c->stats[i].verb == verb && c->stats[i].code == code) {
			c->stats[i].count++;
			return;
		}
	if (cu_grow((void **)&c->stats, &c->capstats, c->nstats + 1,
		sizeof(*c->stats)) != CU_OK)
		return; /* a lost sample is not worth failing a request */
	c->stats[c->nstats].verb = verb;
	c->stats[c->nstats].code = code;
	c->stats[c->nstats].count = 1;
	c->nstats++;
}

static char *dup_opt(const char *s, bool *fail)
{
	char *d;

	if (s == NULL || s[0] == '\0')
		return NULL;
	d = cu_strdup(s);
	if (d == NULL)
		*fail = true;
	return d;
}

/* Read a whole file [owned: cu_free] of at most max bytes. */
static int read_file(
    const char *path, size_t max, char **out, size_t *len, cu_error *err)
{
	FILE *f = fopen(path, "rb");
	cu_buf b;
	char chunk[4096];
	size_t n;

	*out = NULL;
	if (f == NULL)
		return cu_error_set(err,
		    errno == ENOENT ? CU_ENOTFOUND : CU_EIO, "%s: %s", path,
		    strerror(errno));
	cu_buf_init(&b, max);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		int rc = cu_buf_add(&b, chunk, n);

		if (rc != CU_OK) {
			fclose(f);
			return cu_error_set(err, rc, "%s: %s", path,
			    rc == CU_ETOOBIG ? "file too large"
					     : "out of memory");
		}
	}
	if (ferror(f)) {
		fclose(f);
		cu_buf_dispose(&b);
		return cu_error_set(err, CU_EIO, "%s: read error", path);
	}
	fclose(f);
	*out = cu_buf_detach(&b, len);
	if (*out == NULL)
		return cu_error_set(err, CU_ENOMEM, "%s: out of memory", path);
	return CU_OK;
}

/* Read and trim a token file; an empty token is an error. */
static int read_token(const char *path, char **out, cu_error *err)
{
	char *t, *s, *e;
	size_t len;
	int rc = read_file(path, MAX_TOKEN, &t, &len, err);

	if (rc != CU_OK)
		return rc;
	s = t;
	while (*s != '\0' && isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		e--;
	if (e == s) {
		cu_free(t);
		return cu_error_set(
		    err, CU_EINVAL, "%s: token file is empty", path);
	}
	*out = cu_strndup(s, (size_t)(e - s));
	cu_free(t);
	if (*out == NULL)
		return cu_error_set(err, CU_ENOMEM, "%s: out of memory", path);
	return CU_OK;
}

/* Replace c->token from the token file; *changed tells whether it did. */
int api__token_reload(api_client *c, bool *changed, cu_error *err)
{
	char *t;
	int rc;

	*changed = false;
	if (c->token_file == NULL)
		return CU_OK;
	rc = read_token(c->token_file, &t, err);
	if (rc != CU_OK)
		return rc; /* keep the old token: it may still be valid */
	if (c->token != NULL && strcmp(c->token, t) == 0) {
		cu_free(t);
		return CU_OK;
	}
	cu_free(c->token);
	c->token = t;
	c->totals.token_reloads++;
	*changed = true;
	return CU_OK;
}

int api_client_reload_token(api_client *c, cu_error *err)
{
	bool changed;

	CU_ASSERT(c != NULL && c->magic == CLIENT_MAGIC);
	return api__token_reload(c, &changed, err);
}

static void on_token_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	api_client *c = w->data;
	bool changed;
	cu_error err;

	(void)loop;
	(void)revents;
	if (api__token_reload(c, &changed, &err) != CU_OK)
		cu_warn("api client: token reload: %s", err.msg);
}

/* ---- libcurl <-> libev glue ----------------------------------------- */

/* ---- public: client ------------------------------------------------- */

static bool curl_ready;

/* true when the http:// URL's host is a loopback address literal
 * (127.0.0.0/8, ::1): a token sent there never leaves the machine. Names
 * ("localhost") do not count: they resolve through files an attacker may
 * control. */
static bool loopback_url(const char *url)
{
	const char *h = url + strlen("http://");
	char host[64];
	size_t n;
	unsigned char a[16];

	if (*h == '[') {
		n = strcspn(h + 1, "]");
		if (n >= sizeof(host) || h[1 + n] != ']')
			return false;
		memcpy(host, h + 1, n);
		host[n] = '\0';
		return inet_pton(AF_INET6, host, a) == 1 &&
		       memcmp(a, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\1", 16) == 0;
	}
	n = strcspn(h, ":/?#");
	if (n >= sizeof(host))
		return false;
	memcpy(host, h, n);
	host[n] = '\0';
	return inet_pton(AF_INET, host, a) == 1 && a[0] == 127;
}

/* What kubectl refuses too: a bearer token over plain http (except to a
 * loopback address), a CA together with skipping verification. */
static int check_security(const struct api_client_opts *opts, cu_error *err)
{
	bool token = (opts->token != NULL && opts->token[0] != '\0') ||
		     opts->token_file != NULL;

	if (token && strncmp(opts->server, "http://", 7) == 0 &&
	    !loopback_url(opts->server))
		return cu_error_set(err, CU_EINVAL,
		    "api client: server \"%.200s\": a bearer token (user token "
		    "or tokenFile) is never sent over plain http; use an "
		    "https:// server",
		    opts->server);
	if (opts->insecure && (opts->ca_file != NULL || opts->ca_pem != NULL))
		return cu_error_set(err, CU_EINVAL,
		    "api client: certificate-authority with "
		    "insecure-skip-tls-verify: specifying a root certificates "
		    "file with the insecure flag is not allowed");
	return CU_OK;
}

/* Copy opts into c: the strings (an allocation failure sets *fail) and the
 * numbers, defaults in place of the zeros. */
static void copy_opts(
    api_client *c, const struct api_client_opts *opts, bool *fail)
{
	size_t n;

	c->server = dup_opt(opts->server, fail);
	if (c->server != NULL) {
		n = strlen(c->server);
		while (n > 0 && c->server[n - 1] == '/')
			c->server[--n] = '\0';
	}
	c->ca_file = dup_opt(opts->ca_file, fail);
	c->ca_pem = dup_opt(opts->ca_pem, fail);
	c->cert_file = dup_opt(opts->client_cert_file, fail);
	c->key_file = dup_opt(opts->client_key_file, fail);
	c->cert_pem = dup_opt(opts->client_cert_pem, fail);
	c->key_pem = dup_opt(opts->client_key_pem, fail);
	c->insecure = opts->insecure;
	c->lean = opts->lean_bodies;
	c->token = dup_opt(opts->token, fail);
	c->token_file = dup_opt(opts->token_file, fail);
	if (opts->user_agent != NULL && opts->user_agent[0] != '\0')
		c->user_agent = cu_strdup(opts->user_agent);
	else
		c->user_agent = cu_strdup("cueue-controller/" CUEUE_VERSION);
	if (c->user_agent == NULL)
		*fail = true;
	c->qps = opts->qps > 0 ? opts->qps : 0;
	c->burst =
	    opts->burst > 0 ? opts->burst : (c->qps >= 1 ? (int)c->qps : 1);
	c->tokens = c->burst;
	c->last_refill = ev_time();
	c->request_timeout_ms =
	    opts->request_timeout_ms > 0 ? opts->request_timeout_ms : 30000;
	c->connect_timeout_ms =
	    opts->connect_timeout_ms > 0 ? opts->connect_timeout_ms : 10000;
	c->max_attempts = opts->max_attempts > 0 ? opts->max_attempts : 5;
	c->max_active = opts->max_connections > 0
			    ? (size_t)opts->max_connections
			    : API_DEFAULT_MAX_CONNECTIONS;
	c->retry_base_ms = opts->retry_base_ms > 0 ? opts->retry_base_ms : 200;
	c->retry_max_ms = opts->retry_max_ms > 0 ? opts->retry_max_ms : 10000;
	c->retry_after_max_ms =
	    opts->retry_after_max_ms > 0 ? opts->retry_after_max_ms : 30000;
	c->token_reload_ms =
	    opts->token_reload_ms > 0 ? opts->token_reload_ms : 60000;
	c->rand = (uint64_t)cu_time_now_ns() | 1;
}

/* Set up c's libcurl multi handle and start its token reload timer. */
static int client_start(api_client *c, cu_error *err)
{
	c->multi = curl_multi_init();
	if (c->multi == NULL) {
		return cu_error_set(err, CU_ENOMEM, "curl_multi_init failed");
	}
	curl_multi_setopt(c->multi, CURLMOPT_SOCKETFUNCTION, api__socket_cb);
	curl_multi_setopt(c->multi, CURLMOPT_SOCKETDATA, c);
	curl_multi_setopt(c->multi, CURLMOPT_TIMERFUNCTION, api__timer_cb);
	curl_multi_setopt(c->multi, CURLMOPT_TIMERDATA, c);
	/* Streams (watches) hold a connection each beyond the requests'. */
	curl_multi_setopt(
	    c->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)c->max_active + 32);
	/* Keep as many connections as may be open: libcurl's default cache
	 * (4 per transfer in progress) closes the connections of a burst
	 * once it is over, and the next burst pays a TLS handshake per
	 * connection again (about 4,000 allocations each with OpenSSL 3). */
	curl_multi_setopt(
	    c->multi, CURLMOPT_MAXCONNECTS, (long)c->max_active + 32);
	if (c->token_file != NULL) {
		double p = (double)c->token_reload_ms / 1000.0;

		ev_timer_set(&c->token_timer, p, p);
		ev_timer_start(c->loop, &c->token_timer);
		ev_unref(c->loop); /* invariant 6 */
	}
	return CU_OK;
}

int api_client_new(api_client **out, struct ev_loop *loop,
    const struct api_client_opts *opts, cu_error *err)
{
	api_client *c;
	bool fail = false;
	size_t n;
	int rc;

	*out = NULL;
	if (loop == NULL || opts == NULL || opts->server == NULL ||
	    (strncmp(opts->server, "http://", 7) != 0 &&
		strncmp(opts->server, "https://", 8) != 0))
		return cu_error_set(err, CU_EINVAL,
		    "api client: server must be an http(s):// URL");
	if ((rc = check_security(opts, err)) != CU_OK)
		return rc;
	if (!curl_ready) {
		if (curl_global_init_mem(CURL_GLOBAL_DEFAULT, cu_malloc,
			cu_free, cu_realloc, cu_strdup, cu_calloc) != CURLE_OK)
			return cu_error_set(
			    err, CU_EIO, "api client: curl_global_init failed");
		curl_ready = true;
	}
	c = cu_calloc(1, sizeof(*c));
	if (c == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	c->magic = CLIENT_MAGIC;
	c->loop = loop;
	copy_opts(c, opts, &fail);
	ev_init(&c->timer, api__on_curl_timer);
	c->timer.data = c;
	ev_init(&c->limit_timer, api__on_limit_timer);
	c->limit_timer.data = c;
	ev_init(&c->token_timer, on_token_timer);
	c->token_timer.data = c;
	if (fail) {
		rc = cu_error_set(err, CU_ENOMEM, "out of memory");
		goto out_free;
	}
	if (c->token_file != NULL) {
		bool changed;

		rc = api__token_reload(c, &changed, err);
		if (rc != CU_OK)
			goto out_free;
		c->totals.token_reloads = 0; /* the first read is no reload */
	}
	if (c->ca_file != NULL) {
		char *pem;

		/* fail now, not on the first request */
		rc = read_file(c->ca_file, MAX_PEM, &pem, &n, err);
		if (rc != CU_OK)
			goto out_free;
		cu_free(pem);
	}
	if ((rc = client_start(c, err)) != CU_OK)
		goto out_free;
	*out = c;
	return CU_OK;
out_free:
	c->closing = true;
	api_client_free(c);
	return rc;
}

void api_client_free(api_client *c)
{
	if (c == NULL)
		return;
	CU_ASSERT(c->magic == CLIENT_MAGIC);
	c->closing = true;
	while (c->all != NULL)
		api__cancel_now(c->all);
	if (ev_is_active(&c->token_timer)) {
		ev_ref(c->loop);
		ev_timer_stop(c->loop, &c->token_timer);
	}
	ev_timer_stop(c->loop, &c->limit_timer);
	if (c->multi != NULL)
		curl_multi_cleanup(c->multi); /* may call api__socket_cb */
	while (c->socks != NULL)
		api__sock_free(c, c->socks);
	ev_timer_stop(c->loop, &c->timer);
	cu_free(c->server);
	cu_free(c->ca_file);
	cu_free(c->ca_pem);
	cu_free(c->cert_file);
	cu_free(c->key_file);
	cu_free(c->cert_pem);
	cu_free(c->key_pem);
	cu_free(c->token);
	cu_free(c->token_file);
	cu_free(c->user_agent);
	cu_free(c->stats);
	c->magic = DEAD_MAGIC;
	cu_free(c);
}

void api_client_set_write_gate(
    api_client *c, api_write_gate_fn fn, void *payload)
{
	CU_ASSERT(c != NULL && c->magic == CLIENT_MAGIC);
	c->may_write = fn;
	c->gate_payload = fn != NULL ? payload : NULL;
}

struct ev_loop *api_client_loop(const api_client *c)
{
	CU_ASSERT(c != NULL && c->magic == CLIENT_MAGIC);
	return c->loop;
}

/* ---- public: metrics ------------------------------------------------ */

void api_client_stats(const api_client *c, struct api_client_stats *out)
{
	CU_ASSERT(c != NULL && c->magic == CLIENT_MAGIC);
	*out = c->totals;
}

uint64_t api_client_stats_count(const api_client *c, const char *verb, int code)
{
	int v = api__verb_index(verb);
	size_t i;

	for (i = 0; i < c->nstats; i++)
		if (c->stats[i].verb == v && c->stats[i].code == code)
			return c->stats[i].count;
	return 0;
}

void api_client_stats_foreach(const api_client *c,
    void (*fn)(const char *verb, int code, uint64_t count, void *payload),
    void *payload)
{
	size_t i;

	for (i = 0; i < c->nstats; i++)
		fn(api__verb_names[c->stats[i].verb], c->stats[i].code,
		    c->stats[i].count, payload);
}
