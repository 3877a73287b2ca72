/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/client.c - the Kubernetes API client: libcurl multi driven by the
 * process's libev loop, auth, rate limiting, retries, cancellation,
 * streaming (watch) bodies: the request engine. The client's lifecycle,
 * token and counters are in client_life.c, paths and per-verb wrappers in
 * client_paths.c, what they share in client_int.h. See api/client.h.
 *
 * Design notes
 * ------------
 * A request (struct api_req) lives from api_request() until its callback
 * has returned. Its states and the functions that move it:
 *
 *     api_request/api_stream
 *            |
 *            v          limiter_pump()               check_done()
 *       [QUEUED] ---------------------> [ACTIVE] ------------------> done
 *            ^                             |      (2xx, final error)   |
 *            |  on_backoff()               | attempt_done(): 429/5xx,  |
 *            +------------ [BACKOFF] <-----+ GET transport failure,    |
 *                                            401 with a new token      v
 *   api_request_cancel / api_client_free: any state -----> finish(): cb, free
 *
 * Invariants:
 *   1. Every request is on c->all from creation until finish(); finish()
 *      is the only place that calls the user's completion callback, and it
 *      frees the request right after, so each callback runs exactly once.
 *   2. libcurl is never called from inside its own callbacks: on_write only
 *      buffers bytes and marks stream requests dirty; on_socket/on_timer
 *      only (re)arm libev watchers. Lines and completions are delivered by
 *      after_action() once curl_multi_socket_action() has returned.
 *   3. A request is in exactly one of: the limiter queue (QUEUED), the
 *      multi handle (ACTIVE), its own backoff timer (BACKOFF). detach()
 *      takes it out of whichever it is in, and out of the dirty list.
 *   4. Timers are set with (double)ms / 1000.0 (never integer division) and
 *      every ev_*_set happens on a stopped watcher.
 *   5. While a line callback of request r runs (r->busy), r is not freed:
 *      a cancel from inside it is recorded (cancel_pending) and carried out
 *      when the callback returns.
 *   6. The client's own periodic timer (token reload) is ev_unref'd so it
 *      never keeps ev_run() alive on its own.
 *   7. Every attempt - the first and each retry - leaves QUEUED through
 *      limiter_pump(), and only there becomes ACTIVE; so the write gate,
 *      asked there, sees every attempt of every write before libcurl
 *      does. A withheld write goes from QUEUED to BACKOFF with a
 *      fail_code and completes on the next loop iteration.
 *   8. At most max_active non-stream attempts are with libcurl (ACTIVE);
 *      the rest wait QUEUED, in order, where no timeout runs, so a burst
 *      of thousands of requests neither opens thousands of connections
 *      nor times out waiting in libcurl's own queue. A freed slot pumps
 *      the queue on the next loop iteration (slot_free).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "api/client.h"
#include "api/client_int.h"
#include "api/json.h"

static void after_action(api_client *c);
static void limiter_pump(api_client *c);
static void slot_free(api_client *c, const struct api_req *r);

/* ---- small helpers -------------------------------------------------- */

static uint64_t next_rand(api_client *c)
{
	/* xorshift64*: jitter only, not security */
	c->rand ^= c->rand >> 12;
	c->rand ^= c->rand << 25;
	c->rand ^= c->rand >> 27;
	return c->rand * 2685821657736338717ULL;
}

static void on_io(struct ev_loop *loop, ev_io *w, int revents)
{
	api_client *c = ((struct api_sock *)w)->c;
	int action = ((revents & EV_READ) ? CURL_CSELECT_IN : 0) |
		     ((revents & EV_WRITE) ? CURL_CSELECT_OUT : 0);

	(void)loop;
	/* w may be freed inside (CURL_POLL_REMOVE): not touched after */
	curl_multi_socket_action(c->multi, w->fd, action, &c->running);
	after_action(c);
}

void api__on_curl_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	api_client *c = w->data;

	(void)loop;
	(void)revents;
	curl_multi_socket_action(c->multi, CURL_SOCKET_TIMEOUT, 0, &c->running);
	after_action(c);
}

int api__timer_cb(CURLM *multi, long timeout_ms, void *userp)
{
	api_client *c = userp;

	(void)multi;
	ev_timer_stop(c->loop, &c->timer);
	if (timeout_ms >= 0) {
		/* 0 ms fires on the next loop iteration: no re-entry */
		ev_timer_set(&c->timer, (double)timeout_ms / 1000.0, 0.0);
		ev_timer_start(c->loop, &c->timer);
	}
	return 0;
}

void api__sock_free(api_client *c, struct api_sock *as)
{
	ev_io_stop(c->loop, &as->io);
	if (as->prev != NULL)
		as->prev->next = as->next;
	else
		c->socks = as->next;
	if (as->next != NULL)
		as->next->prev = as->prev;
	cu_free(as);
}

int api__socket_cb(
    CURL *easy, curl_socket_t s, int what, void *userp, void *socketp)
{
	api_client *c = userp;
	struct api_sock *as = socketp;
	int events;

	(void)easy;
	if (what == CURL_POLL_REMOVE) {
		if (as != NULL)
			api__sock_free(
			    c, as); /* libcurl drops the assignment */
		return 0;
	}
	events = ((what & CURL_POLL_IN) ? EV_READ : 0) |
		 ((what & CURL_POLL_OUT) ? EV_WRITE : 0);
	if (as == NULL) {
		as = cu_calloc(1, sizeof(*as));
		if (as == NULL)
			return -1; /* libcurl fails the transfers */
		as->c = c;
		ev_io_init(&as->io, on_io, s, events);
		if (curl_multi_assign(c->multi, s, as) != CURLM_OK) {
			cu_free(as);
			return -1;
		}
		as->next = c->socks;
		if (c->socks != NULL)
			c->socks->prev = as;
		c->socks = as;
	} else {
		ev_io_stop(c->loop, &as->io); /* ev_io_set needs it stopped */
		ev_io_set(&as->io, s, events);
	}
	ev_io_start(c->loop, &as->io);
	return 0;
}

/* ---- request lifecycle ---------------------------------------------- */

static void dirty_unlink(api_client *c, struct api_req *r)
{
	struct api_req **pp;

	if (!r->dirty)
		return;
	for (pp = &c->dirty; *pp != NULL; pp = &(*pp)->dnext)
		if (*pp == r) {
			*pp = r->dnext;
			break;
		}
	r->dirty = false;
	r->dnext = NULL;
}

/* Invariant 3: take r out of the queue, the multi handle or its timer. */
static void detach(struct api_req *r)
{
	api_client *c = r->c;
	struct api_req **pp, *prev = NULL;

	switch (r->state) {
	case REQ_QUEUED:
		for (pp = &c->qhead; *pp != NULL; pp = &(*pp)->qnext) {
			if (*pp == r) {
				*pp = r->qnext;
				if (c->qtail == r)
					c->qtail = prev;
				break;
			}
			prev = *pp;
		}
		r->qnext = NULL;
		break;
	case REQ_ACTIVE:
		curl_multi_remove_handle(c->multi, r->easy);
		slot_free(c, r);
		break;
	case REQ_BACKOFF:
		ev_timer_stop(c->loop, &r->backoff);
		break;
	case REQ_NEW:
		break;
	}
	r->state = REQ_NEW;
	dirty_unlink(c, r);
}

static void req_free(struct api_req *r)
{
	if (r->easy != NULL)
		curl_easy_cleanup(r->easy);
	curl_slist_free_all(r->hdrs);
	cu_buf_dispose(&r->resp);
	cu_free(r->method);
	cu_free(r->path);
	cu_free(r->content_type);
	cu_free(r->body);
	r->magic = DEAD_MAGIC;
	cu_free(r);
}

/* Invariant 1: the one place that runs the completion callback. */
static void finish(struct api_req *r, struct api_response *resp)
{
	api_client *c = r->c;

	detach(r);
	if (r->prev != NULL)
		r->prev->next = r->next;
	else
		c->all = r->next;
	if (r->next != NULL)
		r->next->prev = r->prev;
	c->totals.in_flight--;
	r->cb(resp, r->payload);
	req_free(r);
}

static void response_init(struct api_req *r, struct api_response *resp)
{
	memset(resp, 0, sizeof(*resp));
	resp->raw = r->resp.ptr != NULL ? r->resp.ptr : "";
	resp->raw_len = r->resp.len;
	resp->reason = "";
	resp->message = "";
	resp->method = r->method;
	resp->path = r->path;
	resp->attempts = r->attempts;
}

/* Complete without an HTTP answer (cancel, transport, local failure). */
static void finish_err(
    struct api_req *r, int code, bool canceled, const char *msg)
{
	struct api_response resp;

	response_init(r, &resp);
	resp.err = code;
	resp.canceled = canceled;
	resp.message = msg;
	finish(r, &resp);
}

static int classify(long code, const char *reason)
{
	if (code >= 200 && code < 300)
		return CU_OK;
	switch (code) {
	case 401:
	case 403:
		return CU_EDENIED;
	case 404:
		return CU_ENOTFOUND;
	case 409:
		return strcmp(reason, "AlreadyExists") == 0 ? CU_EEXIST
							    : CU_ECONFLICT;
	case 410:
		return CU_EGONE;
	case 413:
		return CU_ETOOBIG;
	case 405:
	case 406:
	case 415:
		return CU_EUNSUPPORTED;
	default:
		break;
	}
	if (code == 429 || code >= 500)
		return CU_EIO;
	return CU_EINVAL;
}

/* Complete with the HTTP answer of the last attempt. */
static void finish_http(struct api_req *r, long code)
{
	struct api_response resp;
	json_t *body = NULL;
	char *ctype = NULL;
	bool ok = code >= 200 && code < 300;
	int jrc = CU_OK;

	response_init(r, &resp);
	resp.code = (int)code;
	curl_easy_getinfo(r->easy, CURLINFO_CONTENT_TYPE, &ctype);
	if (r->resp.len > 0 && !(r->stream && ok))
		jrc = ok && r->c->lean ? api_json_loadb_lean(&body, r->resp.ptr,
					     r->resp.len, 0, NULL)
				       : api_json_loadb(&body, r->resp.ptr,
					     r->resp.len, 0, NULL);
	if (!ok && json_is_object(body)) {
		json_t *v = json_object_get(body, "reason");

		if (json_is_string(v))
			resp.reason = json_string_value(v);
		v = json_object_get(body, "message");
		if (json_is_string(v))
			resp.message = json_string_value(v);
	} else if (!ok && body == NULL) {
		resp.message = resp.raw;
	}
	resp.body = body;
	resp.err = classify(code, resp.reason);
	if (ok && body == NULL && r->resp.len > 0 && !r->stream &&
	    ctype != NULL && strstr(ctype, "json") != NULL) {
		resp.err = CU_EPARSE;
		resp.message = "response body is not valid JSON";
	}
	if (ok && jrc == CU_ENOMEM) {
		resp.err = CU_ENOMEM;
		resp.message = "response body: out of memory";
	}
	finish(r, &resp);
	json_decref(body);
}

static size_t on_write(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct api_req *r = userdata;
	size_t n = size * nmemb;

	if (r->stream && !r->streamed) {
		long code = 0;

		curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &code);
		if (code >= 200 && code < 300) {
			r->streamed = true;
			/* the error-body cap does not apply to streams */
			r->resp.max = MAX_LINE;
		}
	}
	if (cu_buf_add(&r->resp, ptr, n) != CU_OK) {
		r->too_big = true;
		return 0; /* libcurl ends the transfer: CURLE_WRITE_ERROR */
	}
	if (r->streamed && !r->dirty) {
		/* invariant 2: lines are delivered after the action returns */
		r->dirty = true;
		r->dnext = r->c->dirty;
		r->c->dirty = r;
	}
	return n;
}

static int build_headers(struct api_req *r)
{
	api_client *c = r->c;
	struct curl_slist *h = NULL, *t;
	char *line;

	curl_slist_free_all(r->hdrs);
	r->hdrs = NULL;
	h = curl_slist_append(NULL, "Accept: application/json");
	if (h == NULL)
		return CU_ENOMEM;
	if ((t = curl_slist_append(h, "Expect:")) == NULL)
		goto fail;
	if (r->content_type != NULL) {
		line = cu_asprintf("Content-Type: %s", r->content_type);
		t = line ? curl_slist_append(h, line) : NULL;
		cu_free(line);
		if (t == NULL)
			goto fail;
	}
	if (c->token != NULL) {
		line = cu_asprintf("Authorization: Bearer %s", c->token);
		t = line ? curl_slist_append(h, line) : NULL;
		cu_free(line);
		if (t == NULL)
			goto fail;
	}
	r->hdrs = h;
	return CU_OK;
fail:
	curl_slist_free_all(h);
	return CU_ENOMEM;
}

/* Options that do not change between attempts. */
static int setup_easy(struct api_req *r)
{
	api_client *c = r->c;
	CURL *e;
	char *url;
	CURLcode rc = CURLE_OK;
	int timeout = r->timeout_ms > 0 ? r->timeout_ms : c->request_timeout_ms;

	e = curl_easy_init();
	if (e == NULL)
		return CU_ENOMEM;
	url = cu_asprintf("%s%s", c->server, r->path);
	if (url == NULL) {
		curl_easy_cleanup(e);
		return CU_ENOMEM;
	}
	r->easy = e;
	/* CURLOPT_URL copies the string */
	rc |= curl_easy_setopt(e, CURLOPT_URL, url);
	cu_free(url);
	rc |= curl_easy_setopt(e, CURLOPT_PRIVATE, r);
	rc |= curl_easy_setopt(e, CURLOPT_ERRORBUFFER, r->errbuf);
	rc |= curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	rc |= curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
	rc |= curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
	rc |= curl_easy_setopt(e, CURLOPT_USERAGENT, c->user_agent);
	rc |= curl_easy_setopt(
	    e, CURLOPT_CONNECTTIMEOUT_MS, (long)c->connect_timeout_ms);
	rc |= curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)timeout);
	rc |= curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
	rc |= curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	if (r->body != NULL) {
		rc |= curl_easy_setopt(
		    e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->body_len);
		rc |= curl_easy_setopt(e, CURLOPT_POSTFIELDS, r->body);
	}
	if (strcmp(r->method, "GET") == 0)
		rc |= curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
	else if (strcmp(r->method, "POST") != 0 || r->body == NULL)
		rc |= curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, r->method);
	if (c->insecure) {
		rc |= curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
		rc |= curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (c->ca_file != NULL)
		rc |= curl_easy_setopt(e, CURLOPT_CAINFO, c->ca_file);
	if (c->ca_pem != NULL) {
		struct curl_blob b = {
		    c->ca_pem, strlen(c->ca_pem), CURL_BLOB_COPY};

		rc |= curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &b);
	}
	if (c->cert_file != NULL)
		rc |= curl_easy_setopt(e, CURLOPT_SSLCERT, c->cert_file);
	if (c->key_file != NULL)
		rc |= curl_easy_setopt(e, CURLOPT_SSLKEY, c->key_file);
	if (c->cert_pem != NULL) {
		struct curl_blob b = {
		    c->cert_pem, strlen(c->cert_pem), CURL_BLOB_COPY};

		rc |= curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
		rc |= curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &b);
	}
	if (c->key_pem != NULL) {
		struct curl_blob b = {
		    c->key_pem, strlen(c->key_pem), CURL_BLOB_COPY};

		rc |= curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
		rc |= curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &b);
	}
	/* CURLE_OK is 0: any failed setopt leaves a bit set */
	return rc == CURLE_OK ? CU_OK : CU_ENOMEM;
}

static void on_backoff(struct ev_loop *loop, ev_timer *w, int revents);

/* Complete r with code and msg [static] from the event loop, not from the
 * caller's stack (api_request never runs the callback itself). */
static void fail_later(struct api_req *r, int code, const char *msg)
{
	r->fail_code = code;
	r->fail_msg = msg;
	r->state = REQ_BACKOFF;
	ev_timer_set(&r->backoff, 0.0, 0.0);
	ev_timer_start(r->c->loop, &r->backoff);
}

/* Start one attempt of a QUEUED request that has left the queue. */
static void attempt_start(struct api_req *r)
{
	api_client *c = r->c;
	int rc = CU_OK;

	r->state = REQ_NEW;
	if (r->easy == NULL)
		rc = setup_easy(r);
	if (rc == CU_OK)
		rc = build_headers(r);
	if (rc == CU_OK &&
	    curl_easy_setopt(r->easy, CURLOPT_HTTPHEADER, r->hdrs) != CURLE_OK)
		rc = CU_ENOMEM;
	if (rc != CU_OK) {
		fail_later(r, rc,
		    rc == CU_ENOMEM ? "out of memory" : "request failed");
		return;
	}
	cu_buf_reset(&r->resp);
	r->resp.max = MAX_BODY;
	r->errbuf[0] = '\0';
	r->too_big = false;
	if (r->attempts > 0)
		c->totals.retries++;
	r->attempts++;
	c->totals.requests++;
	if (curl_multi_add_handle(c->multi, r->easy) != CURLM_OK) {
		fail_later(r, CU_ENOMEM, "out of memory");
		return;
	}
	r->state = REQ_ACTIVE;
	if (!r->stream)
		c->active++;
}

/* A non-stream attempt left libcurl: its slot is free. */
static void slot_free(api_client *c, const struct api_req *r)
{
	if (r->stream || c->active == 0)
		return;
	c->active--;
	/* Requests waiting for a slot go on the next loop iteration. */
	if (c->qhead != NULL && !ev_is_active(&c->limit_timer)) {
		ev_timer_set(&c->limit_timer, 0.0, 0.0);
		ev_timer_start(c->loop, &c->limit_timer);
	}
}

static void enqueue(struct api_req *r)
{
	api_client *c = r->c;

	if (c->qps > 0) {
		double now = ev_time();

		c->tokens += (now - c->last_refill) * c->qps;
		if (c->tokens > c->burst)
			c->tokens = c->burst;
		c->last_refill = now;
		if (c->qhead != NULL || c->tokens < 1.0)
			c->totals.throttled++;
	}
	r->state = REQ_QUEUED;
	r->qnext = NULL;
	if (c->qtail != NULL)
		c->qtail->qnext = r;
	else
		c->qhead = r;
	c->qtail = r;
	limiter_pump(c);
}

/* True when r is a write (not GET or HEAD) the write gate refuses now. */
static bool write_withheld(api_client *c, const struct api_req *r)
{
	if (c->may_write == NULL || r->verb == VERB_GET ||
	    strcmp(r->method, "HEAD") == 0)
		return false;
	return !c->may_write(r->method, r->path, c->gate_payload);
}

static void limiter_pump(api_client *c)
{
	struct api_req *r;

	if (c->qps > 0) {
		double now = ev_time();

		c->tokens += (now - c->last_refill) * c->qps;
		if (c->tokens > c->burst)
			c->tokens = c->burst;
		c->last_refill = now;
	}
	while ((r = c->qhead) != NULL) {
		/* The gate is asked as the attempt leaves the queue: every
		 * attempt passes here, retries included (invariant 7). */
		bool withhold = write_withheld(c, r);

		if (!withhold && !r->stream && c->active >= c->max_active)
			return; /* slot_free pumps again */
		if (c->qps > 0 && !withhold) {
			if (c->tokens < 1.0)
				break;
			c->tokens -= 1.0;
		}
		c->qhead = r->qnext;
		if (c->qhead == NULL)
			c->qtail = NULL;
		r->qnext = NULL;
		if (withhold) {
			c->totals.withheld++;
			fail_later(r, CU_ECANCELED, API_WRITE_WITHHELD_MSG);
		} else {
			attempt_start(r);
		}
	}
	if (c->qhead != NULL && !ev_is_active(&c->limit_timer)) {
		double wait = (1.0 - c->tokens) / c->qps;

		ev_timer_set(&c->limit_timer, wait > 0.001 ? wait : 0.001, 0.0);
		ev_timer_start(c->loop, &c->limit_timer);
	}
}

void api__on_limit_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	limiter_pump(w->data);
}

static void on_backoff(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct api_req *r = w->data;

	(void)loop;
	(void)revents;
	r->state = REQ_NEW;
	if (r->fail_code != 0) {
		finish_err(r, r->fail_code, false, r->fail_msg);
		return;
	}
	enqueue(r);
}

static void retry_in(struct api_req *r, double seconds)
{
	r->state = REQ_BACKOFF;
	ev_timer_set(&r->backoff, seconds, 0.0);
	ev_timer_start(r->c->loop, &r->backoff);
}

/* Exponential backoff with "equal jitter": [d/2, d). */
static double backoff_seconds(api_client *c, int attempt)
{
	double d = (double)c->retry_base_ms;
	int i;

	for (i = 1; i < attempt && d < c->retry_max_ms; i++)
		d *= 2;
	if (d > c->retry_max_ms)
		d = c->retry_max_ms;
	d = d / 2 + (double)(next_rand(c) % 1000) / 1000.0 * (d / 2);
	return d / 1000.0;
}

/* Retry-After in seconds (numeric form only), or -1. */
static long retry_after(struct api_req *r)
{
	struct curl_header *h = NULL;
	char *end;
	long v;

	if (curl_easy_header(r->easy, "Retry-After", 0, CURLH_HEADER, -1, &h) !=
		CURLHE_OK ||
	    h == NULL || h->value == NULL)
		return -1;
	errno = 0;
	v = strtol(h->value, &end, 10);
	if (end == h->value || errno != 0 || v < 0)
		return -1;
	return v;
}

static void deliver_lines(struct api_req *r, bool final);
void api__cancel_now(struct api_req *r);

/* A transport failure: remember the cause; log it when the client's
 * report back-off allows (1 s doubling to 60 s). */
static void note_unreachable(api_client *c, const char *cause)
{
	double now = ev_now(c->loop);

	snprintf(c->unreach, sizeof(c->unreach), "%s", cause);
	if (c->unreach_step <= 0)
		c->unreach_step = 1.0;
	if (now < c->unreach_next)
		return;
	cu_warn("API server %s unreachable: %s; retrying (reported again in "
		"%.0f s if it persists)",
	    c->server, cause, c->unreach_step);
	c->unreach_next = now + c->unreach_step;
	c->unreach_step =
	    c->unreach_step * 2 > 60.0 ? 60.0 : c->unreach_step * 2;
}

/* An HTTP answer: the server is reachable (again). */
static void note_reachable(api_client *c)
{
	if (c->unreach[0] != '\0')
		cu_info("API server %s reachable again", c->server);
	c->unreach[0] = '\0';
	c->unreach_next = 0;
	c->unreach_step = 1.0;
}

const char *api_client_unreachable(const api_client *c)
{
	return c != NULL && c->unreach[0] != '\0' ? c->unreach : NULL;
}

/* One attempt of r has ended with res; decide: retry or complete. */
static void attempt_done(struct api_req *r, CURLcode res)
{
	api_client *c = r->c;
	long code = 0;
	bool more = r->attempts < c->max_attempts && !r->streamed;

	r->state = REQ_NEW; /* removed from the multi handle by the caller */
	curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &code);
	if (res != CURLE_OK) {
		char msg[CURL_ERROR_SIZE + 64];

		api__count_attempt(c, r->verb, 0);
		if (r->stream && r->streamed) {
			deliver_lines(r, false);
			if (r->cancel_pending) {
				api__cancel_now(r);
				return;
			}
			if (res == CURLE_OPERATION_TIMEDOUT && !r->too_big) {
				/* a stream reaching its deadline is an end */
				finish_http(r, code);
				return;
			}
		}
		if (r->too_big) {
			finish_err(r, CU_ETOOBIG, false,
			    "response exceeds the size limit");
			return;
		}
		if (code == 0 && !(r->stream && r->streamed))
			note_unreachable(c,
			    r->errbuf[0] ? r->errbuf : curl_easy_strerror(res));
		if (more && res != CURLE_OPERATION_TIMEDOUT &&
		    (r->verb == VERB_GET || res == CURLE_COULDNT_CONNECT)) {
			retry_in(r, backoff_seconds(c, r->attempts));
			return;
		}
		snprintf(msg, sizeof(msg), "%s %s: %s", r->method, r->path,
		    r->errbuf[0] ? r->errbuf : curl_easy_strerror(res));
		finish_err(r,
		    res == CURLE_OPERATION_TIMEDOUT ? CU_ETIMEOUT : CU_EIO,
		    false, msg);
		return;
	}
	api__count_attempt(c, r->verb, (int)code);
	if (code != 0)
		note_reachable(c);
	if (code == 401 && c->token_file != NULL && !r->auth_retried) {
		bool changed = false;
		cu_error err;

		if (api__token_reload(c, &changed, &err) != CU_OK)
			cu_warn("api client: token reload: %s", err.msg);
		if (changed) {
			r->auth_retried = true;
			enqueue(r);
			return;
		}
	}
	if ((code == 429 || code >= 500) && more) {
		long ra = retry_after(r);
		double s;

		if (ra >= 0) {
			s = (double)ra;
			if (s * 1000.0 > c->retry_after_max_ms)
				s = c->retry_after_max_ms / 1000.0;
		} else {
			s = backoff_seconds(c, r->attempts);
		}
		retry_in(r, s);
		return;
	}
	if (r->stream && code >= 200 && code < 300) {
		deliver_lines(r, true);
		if (r->cancel_pending) {
			api__cancel_now(r);
			return;
		}
	}
	finish_http(r, code);
}

/* Hand complete lines of a stream to its line callback (invariant 5).
 * With final, a trailing unterminated line is delivered too. */
static void deliver_lines(struct api_req *r, bool final)
{
	size_t off = 0;

	if (r->line_cb == NULL || r->resp.ptr == NULL)
		return;
	r->busy++;
	while (off < r->resp.len && !r->cancel_pending) {
		char *nl = memchr(r->resp.ptr + off, '\n', r->resp.len - off);
		size_t len;

		if (nl == NULL) {
			if (!final)
				break;
			len = r->resp.len - off;
		} else {
			len = (size_t)(nl - (r->resp.ptr + off));
		}
		if (len > 0 && !(len == 1 && r->resp.ptr[off] == '\r'))
			r->line_cb(r->resp.ptr + off, len, r->payload);
		off += len + (nl != NULL ? 1 : 0);
	}
	r->busy--;
	if (r->resp.ptr != NULL && off > 0) {
		memmove(r->resp.ptr, r->resp.ptr + off, r->resp.len - off);
		r->resp.len -= off;
		r->resp.ptr[r->resp.len] = '\0';
	}
}

void api__cancel_now(struct api_req *r)
{
	finish_err(r, CU_EAGAIN, true, "canceled");
}

/* Deliver stream lines, then completions (invariant 2). */
static void after_action(api_client *c)
{
	struct api_req *r;
	CURLMsg *msg;
	int left;

	while ((r = c->dirty) != NULL) {
		c->dirty = r->dnext;
		r->dnext = NULL;
		r->dirty = false;
		deliver_lines(r, false);
		if (r->cancel_pending)
			api__cancel_now(r);
	}
	while ((msg = curl_multi_info_read(c->multi, &left)) != NULL) {
		CURL *e = msg->easy_handle;
		CURLcode res = msg->data.result;
		char *priv = NULL;

		if (msg->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(e, CURLINFO_PRIVATE, &priv);
		r = (struct api_req *)(void *)priv;
		curl_multi_remove_handle(c->multi, e);
		r->state = REQ_NEW;
		slot_free(c, r);
		attempt_done(r, res);
		/* a line callback inside attempt_done may have canceled r */
	}
}

/* ---- public: requests ----------------------------------------------- */

static int request_new(api_req **out, api_client *c, const char *method,
    const char *path, const char *content_type, json_t *body,
    api_response_cb cb, void *payload, cu_error *err)
{
	struct api_req *r;

	if (out != NULL)
		*out = NULL;
	CU_ASSERT(c != NULL && c->magic == CLIENT_MAGIC);
	if (c->closing)
		return cu_error_set(err, CU_EINVAL, "client is shutting down");
	if (method == NULL || path == NULL || path[0] != '/' || cb == NULL)
		return cu_error_set(err, CU_EINVAL,
		    "request needs a method, a path and a "
		    "callback");
	r = cu_calloc(1, sizeof(*r));
	if (r == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	r->magic = REQ_MAGIC;
	r->c = c;
	r->cb = cb;
	r->payload = payload;
	r->verb = api__verb_index(method);
	cu_buf_init(&r->resp, MAX_BODY);
	ev_init(&r->backoff, on_backoff);
	r->backoff.data = r;
	r->method = cu_strdup(method);
	r->path = cu_strdup(path);
	if (body != NULL) {
		if (api_json_dumps(
			body, JSON_COMPACT, 0, &r->body, &r->body_len) != CU_OK)
			r->body = NULL;
		if (content_type == NULL)
			content_type = "application/json";
	}
	if (content_type != NULL)
		r->content_type = cu_strdup(content_type);
	if (r->method == NULL || r->path == NULL ||
	    (body != NULL && r->body == NULL) ||
	    (content_type != NULL && r->content_type == NULL)) {
		req_free(r);
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	}
	r->next = c->all;
	if (c->all != NULL)
		c->all->prev = r;
	c->all = r;
	c->totals.in_flight++;
	if (out != NULL)
		*out = r;
	return CU_OK;
}

int api_request(api_req **out, api_client *c, const char *method,
    const char *path_and_query, const char *content_type, json_t *body,
    api_response_cb cb, void *payload, cu_error *err)
{
	api_req *r;
	int rc = request_new(&r, c, method, path_and_query, content_type, body,
	    cb, payload, err);

	if (rc != CU_OK)
		return rc;
	enqueue(r);
	if (out != NULL)
		*out = r;
	return CU_OK;
}

int api_stream(api_req **out, api_client *c, const char *path_and_query,
    int timeout_ms, api_line_cb line_cb, api_response_cb done_cb, void *payload,
    cu_error *err)
{
	api_req *r;
	int rc = request_new(
	    &r, c, "GET", path_and_query, NULL, NULL, done_cb, payload, err);

	if (rc != CU_OK)
		return rc;
	r->stream = true;
	r->line_cb = line_cb;
	r->timeout_ms = timeout_ms;
	enqueue(r);
	if (out != NULL)
		*out = r;
	return CU_OK;
}

void api_request_cancel(api_req *r)
{
	if (r == NULL)
		return;
	CU_ASSERT(r->magic == REQ_MAGIC);
	if (r->busy > 0) {
		r->cancel_pending = true;
		return;
	}
	api__cancel_now(r);
}
