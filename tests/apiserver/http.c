/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/http.c - libmicrohttpd driven by the libev loop
 * (external-loop epoll mode: MHD's epoll fd is one ev_io, its timeout one
 * ev_timer), request accumulation with the 3 MiB body cap, bearer-token
 * authentication, fault injection and added latency, the streaming of
 * watch responses through suspended connections, and the suspension of
 * writes that wait for admission webhooks (resumed by webhooks.c).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "tests/apiserver/apiserver.h"

struct as_req {
	struct as_server *srv;
	struct MHD_Connection *conn;
	char *method; /* owned */
	char *url;    /* owned */
	cu_buf body;
	bool too_big;
	int attempt;
	int64_t first_ns;
	bool delayed_once; /* latency already added */
	bool suspended;
	ev_timer delay;
	struct as_admit *admit; /* owned; admission state (webhooks.c) */
	/* owned: an answer held back after the request was carried out
	 * (a fault's answerDelayMs): sent when the delay ends */
	struct as_resp *held;
	struct as_req *next, *prev; /* list of suspended requests */
};

static struct as_req *suspended_reqs;

void as_http_wake(struct as_server *srv)
{
	srv->need_run = true;
}

/* ---- request context accessors ------------------------------------ */

const char *as_query(const struct as_request *rq, const char *name)
{
	if (rq->conn == NULL)
		return json_string_value(json_object_get(rq->params, name));
	return MHD_lookup_connection_value(
	    rq->conn, MHD_GET_ARGUMENT_KIND, name);
}

bool as_query_bool(const struct as_request *rq, const char *name)
{
	const char *v = as_query(rq, name);

	/* Absent: false; "0"/"false": false; anything else, "" and
	 * python's "True" included: true (apimachinery conversion.go). */
	if (v == NULL)
		return false;
	return !(strcmp(v, "0") == 0 || strcasecmp(v, "false") == 0);
}

const char *as_header(const struct as_request *rq, const char *name)
{
	if (rq->proto_json && strcasecmp(name, "Content-Type") == 0)
		return "application/json";
	if (rq->conn == NULL)
		return json_string_value(json_object_get(rq->headers, name));
	return MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, name);
}

/* ---- loop integration --------------------------------------------- */

static void rearm(struct as_server *srv)
{
	MHD_UNSIGNED_LONG_LONG t;

	ev_timer_stop(srv->loop, &srv->mhd_timer);
	if (MHD_get_timeout(srv->mhd, &t) == MHD_YES) {
		ev_timer_set(&srv->mhd_timer, (double)t / 1000.0, 0.);
		ev_timer_start(srv->loop, &srv->mhd_timer);
	}
}

static void run_mhd(struct as_server *srv)
{
	int i;

	for (i = 0; i < 8; i++) {
		srv->need_run = false;
		MHD_run(srv->mhd);
		if (!srv->need_run)
			break;
	}
	rearm(srv);
}

static void on_mhd_io(struct ev_loop *loop, ev_io *w, int revents)
{
	(void)loop;
	(void)revents;
	run_mhd(w->data);
}

static void on_mhd_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	run_mhd(w->data);
}

static void on_prepare(struct ev_loop *loop, ev_prepare *w, int revents)
{
	struct as_server *srv = w->data;

	(void)loop;
	(void)revents;
	if (srv->need_run)
		run_mhd(srv);
}

/* ---- responses ---------------------------------------------------- */

static void add_common_headers(struct MHD_Response *r)
{
	MHD_add_response_header(r, "Cache-Control", "no-cache, private");
}

static ssize_t watch_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct as_watch *w = cls;
	size_t avail = w->out.len - w->out_pos;

	(void)pos;
	if (avail > 0) {
		size_t n = avail < max ? avail : max;

		memcpy(buf, w->out.ptr + w->out_pos, n);
		w->out_pos += n;
		if (w->out_pos == w->out.len) {
			cu_buf_reset(&w->out);
			w->out_pos = 0;
		}
		return (ssize_t)n;
	}
	if (w->done)
		return MHD_CONTENT_READER_END_OF_STREAM;
	w->suspended = true;
	MHD_suspend_connection(w->conn);
	return 0;
}

static void watch_free_cb(void *cls)
{
	as_watch_free(cls);
}

static enum MHD_Result send_resp(
    struct as_req *rq, struct as_resp *resp, int *code_out)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	char *text = NULL;
	size_t len = 0;

	*code_out = resp->code;
	if (resp->watch != NULL) {
		struct as_watch *w = resp->watch;

		w->conn = rq->conn;
		r = MHD_create_response_from_callback(
		    MHD_SIZE_UNKNOWN, 64 * 1024, watch_read, w, watch_free_cb);
		if (r == NULL) {
			as_watch_free(w);
			return MHD_NO;
		}
		resp->watch = NULL;
		MHD_add_response_header(r, "Content-Type", "application/json");
		add_common_headers(r);
		ret = MHD_queue_response(rq->conn, 200, r);
		MHD_destroy_response(r);
		return ret;
	}
	if (resp->raw != NULL) {
		text = resp->raw;
		len = resp->raw_len;
		resp->raw = NULL;
	} else {
		if (resp->body == NULL)
			resp->body = as_status(resp->code ? resp->code : 500,
			    "InternalError", "no response");
		text = as_json_dump(resp->body, &len);
		if (text == NULL)
			return MHD_NO;
		/* Go's json.Encoder ends documents with a newline. */
		{
			char *t = cu_realloc(text, len + 2);

			if (t != NULL) {
				text = t;
				text[len++] = '\n';
				text[len] = '\0';
			}
		}
	}
	r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	if (r == NULL) {
		cu_free(text);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type",
	    resp->content_type ? resp->content_type : "application/json");
	add_common_headers(r);
	if (resp->retry_after >= 0) {
		char ra[16];

		snprintf(ra, sizeof(ra), "%d", resp->retry_after);
		MHD_add_response_header(r, "Retry-After", ra);
	}
	if (resp->warning != NULL)
		MHD_add_response_header(r, "Warning", resp->warning);
	if (resp->etag[0] != '\0')
		MHD_add_response_header(r, "ETag", resp->etag);
	ret = MHD_queue_response(rq->conn, (unsigned)resp->code, r);
	MHD_destroy_response(r);
	return ret;
}

/* ---- delays (latency injection, waiting lists) ---------------------- */

static void on_delay(struct ev_loop *loop, ev_timer *t, int revents)
{
	struct as_req *rq = t->data;

	(void)loop;
	(void)revents;
	if (!rq->suspended)
		return;
	rq->suspended = false;
	if (rq->prev)
		rq->prev->next = rq->next;
	else
		suspended_reqs = rq->next;
	if (rq->next)
		rq->next->prev = rq->prev;
	MHD_resume_connection(rq->conn);
	as_http_wake(rq->srv);
}

void as_http_resume(struct as_server *srv, struct MHD_Connection *conn)
{
	struct as_req *rq;

	for (rq = suspended_reqs; rq != NULL; rq = rq->next)
		if (rq->conn == conn) {
			ev_timer_stop(srv->loop, &rq->delay);
			on_delay(srv->loop, &rq->delay, 0);
			return;
		}
}

static void suspend_for(struct as_req *rq, int ms)
{
	rq->suspended = true;
	rq->next = suspended_reqs;
	rq->prev = NULL;
	if (suspended_reqs)
		suspended_reqs->prev = rq;
	suspended_reqs = rq;
	ev_timer_init(&rq->delay, on_delay, (double)ms / 1000.0, 0.);
	rq->delay.data = rq;
	ev_timer_start(rq->srv->loop, &rq->delay);
	MHD_suspend_connection(rq->conn);
}

/* ---- auth ---------------------------------------------------------- */

static const char *authenticate(
    struct as_server *srv, struct MHD_Connection *conn)
{
	const char *h =
	    MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
	const char *tok;
	size_t i;

	if (h == NULL || strncasecmp(h, "bearer ", 7) != 0)
		return NULL;
	tok = h + 7;
	while (*tok == ' ')
		tok++;
	for (i = 0; i < srv->ntokens; i++)
		if (srv->tokens[i].token != NULL &&
		    strcmp(srv->tokens[i].token, tok) == 0)
			return srv->tokens[i].user;
	return NULL;
}

static bool anonymous_ok(const char *url)
{
	return strcmp(url, "/healthz") == 0 || strcmp(url, "/livez") == 0 ||
	       strcmp(url, "/readyz") == 0 || strcmp(url, "/version") == 0 ||
	       strncmp(url, "/__test/", 8) == 0;
}

static enum MHD_Result collect_arg(
    void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	cu_buf *b = cls;

	(void)kind;
	if (cu_buf_addf(b, "%s%s=%s", b->len ? "&" : "", key,
		value ? value : "") != CU_OK)
		return MHD_NO;
	return MHD_YES;
}

static bool is_write(const char *m)
{
	return strcmp(m, "POST") == 0 || strcmp(m, "PUT") == 0 ||
	       strcmp(m, "PATCH") == 0 || strcmp(m, "DELETE") == 0;
}

/* ---- the access handler ------------------------------------------- */

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn,
    const char *url, const char *method, const char *version,
    const char *upload, size_t *upload_size, void **con_cls)
{
	struct as_server *srv = cls;
	struct as_req *rq = *con_cls;
	struct as_request req;
	struct as_resp resp;
	const struct as_fault *fault;
	const char *user;
	enum MHD_Result ret;
	int code = 0;
	cu_buf q;

	(void)version;
	if (rq == NULL) {
		rq = cu_calloc(1, sizeof(*rq));
		if (rq == NULL)
			return MHD_NO;
		rq->srv = srv;
		rq->conn = conn;
		rq->method = cu_strdup(method);
		rq->url = cu_strdup(url);
		rq->first_ns = cu_time_mono_ns();
		cu_buf_init(&rq->body, AS_MAX_BODY);
		*con_cls = rq;
		return (rq->method && rq->url) ? MHD_YES : MHD_NO;
	}
	if (*upload_size > 0) {
		if (!rq->too_big &&
		    cu_buf_add(&rq->body, upload, *upload_size) != CU_OK)
			rq->too_big = true; /* buffer freed; keep draining */
		*upload_size = 0;
		return MHD_YES;
	}
	memset(&resp, 0, sizeof(resp));
	resp.retry_after = -1;
	memset(&req, 0, sizeof(req));
	req.srv = srv;
	req.method = rq->method;
	req.path = rq->url;
	req.conn = conn;
	req.body = rq->body.ptr ? rq->body.ptr : "";
	req.body_len = rq->body.len;
	req.attempt = ++rq->attempt;
	req.first_ns = rq->first_ns;
	req.admit = &rq->admit;

	user = authenticate(srv, conn);
	req.user = user ? user : "system:anonymous";
	if (rq->held != NULL) {
		resp = *rq->held;
		cu_free(rq->held);
		rq->held = NULL;
		goto send;
	}
	fault = strncmp(rq->url, "/__test/", 8) == 0
		    ? NULL
		    : as_fault_match(srv, rq->method, rq->url);
	if (!rq->delayed_once) {
		int ms = 0;

		if (fault != NULL && fault->latency_ms > 0)
			ms = fault->latency_ms;
		if (srv->write_latency_ms > 0 && is_write(rq->method) &&
		    strncmp(rq->url, "/__test/", 8) != 0)
			ms += srv->write_latency_ms;
		if (ms > 0) {
			rq->delayed_once = true;
			suspend_for(rq, ms);
			return MHD_YES;
		}
	}
	if (user == NULL && !anonymous_ok(rq->url)) {
		json_t *st = as_status(401, "Unauthorized", "Unauthorized");

		as_resp_status(&resp, 401, st);
	} else if (rq->too_big) {
		as_resp_error(&resp, 413, "RequestEntityTooLarge",
		    "Request entity too large: limit is %u", AS_MAX_BODY);
	} else if (fault != NULL && fault->code > 0) {
		if (fault->plain) {
			resp.code = fault->code;
			resp.raw = cu_strdup(
			    "Too many requests, please try again later.\n");
			resp.raw_len = resp.raw ? strlen(resp.raw) : 0;
			resp.content_type = "text/plain; charset=utf-8";
		} else {
			const char *reason =
			    fault->code == 429	 ? "TooManyRequests"
			    : fault->code == 503 ? "ServiceUnavailable"
						 : "InternalError";
			json_t *st = as_status(fault->code, reason,
			    fault->code == 429
				? "Too many requests, please try again later."
				: "Internal error occurred: injected fault");

			if (fault->retry_after >= 0)
				json_object_set_new(st, "details",
				    json_pack("{s:i}", "retryAfterSeconds",
					fault->retry_after));
			as_resp_status(&resp, fault->code, st);
		}
		resp.retry_after = fault->retry_after;
	} else {
		as_handle(&req, &resp);
		if (resp.delay) {
			json_decref(resp.body);
			cu_free(resp.raw);
			cu_free(resp.warning);
			suspend_for(rq, resp.delay_ms > 0 ? resp.delay_ms : 50);
			return MHD_YES;
		}
		/* Carried out (its watch events go now), answered later. */
		if (fault != NULL && fault->answer_delay_ms > 0 &&
		    resp.watch == NULL &&
		    (rq->held = cu_malloc(sizeof(*rq->held))) != NULL) {
			*rq->held = resp;
			suspend_for(rq, fault->answer_delay_ms);
			return MHD_YES;
		}
	}
send:
	ret = send_resp(rq, &resp, &code);
	if (code >= 200 && code < 300 && is_write(rq->method) &&
	    strncmp(rq->url, "/__test/", 8) != 0)
		as_count_write(srv, req.user);
	cu_buf_init(&q, 64 * 1024);
	MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, collect_arg, &q);
	as_access_log(srv, &req, q.ptr ? q.ptr : "", code);
	cu_buf_dispose(&q);
	json_decref(resp.body);
	cu_free(resp.raw);
	cu_free(resp.warning);
	if (resp.watch != NULL)
		as_watch_free(resp.watch);
	return ret;
}

/* Counts open connections (a client's connection cap is tested
 * against it; /__test/state reports it). */
static void on_connection(void *cls, struct MHD_Connection *conn,
    void **socket_context, enum MHD_ConnectionNotificationCode toe)
{
	struct as_server *srv = cls;

	(void)conn;
	(void)socket_context;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		if (++srv->conns > srv->peak_conns)
			srv->peak_conns = srv->conns;
	} else if (srv->conns > 0) {
		srv->conns--;
	}
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
    enum MHD_RequestTerminationCode toe)
{
	struct as_req *rq = *con_cls;

	(void)cls;
	(void)conn;
	(void)toe;
	if (rq == NULL)
		return;
	if (rq->suspended) {
		ev_timer_stop(rq->srv->loop, &rq->delay);
		if (rq->prev)
			rq->prev->next = rq->next;
		else
			suspended_reqs = rq->next;
		if (rq->next)
			rq->next->prev = rq->prev;
	}
	if (rq->held != NULL) {
		json_decref(rq->held->body);
		cu_free(rq->held->raw);
		cu_free(rq->held->warning);
		cu_free(rq->held);
	}
	as_admit_free(rq->admit);
	cu_free(rq->method);
	cu_free(rq->url);
	cu_buf_dispose(&rq->body);
	cu_free(rq);
	*con_cls = NULL;
}

/* '+' is a space in query strings (Go's url.Values and Python's urlencode
 * both send it), then %XX escapes. In place; returns the new length. */
static size_t unescape(void *cls, struct MHD_Connection *c, char *s)
{
	char *r = s, *w = s;

	(void)cls;
	(void)c;
	while (*r != '\0') {
		if (*r == '+') {
			*w++ = ' ';
			r++;
		} else if (*r == '%' && isxdigit((unsigned char)r[1]) &&
			   isxdigit((unsigned char)r[2])) {
			char hex[3] = {r[1], r[2], '\0'};

			*w++ = (char)strtol(hex, NULL, 16);
			r += 3;
		} else {
			*w++ = *r++;
		}
	}
	*w = '\0';
	return (size_t)(w - s);
}

int as_http_start(struct as_server *srv, cu_error *err)
{
	struct sockaddr_in addr;
	const union MHD_DaemonInfo *info;
	unsigned flags =
	    MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;

	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_port = htons(srv->port);
	if (inet_pton(AF_INET, srv->listen_host, &addr.sin_addr) != 1)
		return cu_error_set(err, CU_EINVAL,
		    "--listen: \"%s\" is not an IPv4 address",
		    srv->listen_host);
	if (srv->tls)
		flags |= MHD_USE_TLS;
	srv->mhd = MHD_start_daemon(flags, srv->port, NULL, NULL, on_request,
	    srv, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
	    MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
	    MHD_OPTION_NOTIFY_CONNECTION, on_connection, srv,
	    MHD_OPTION_UNESCAPE_CALLBACK, unescape, srv,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned)2000,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)600,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024),
	    MHD_OPTION_LISTENING_ADDRESS_REUSE, (unsigned)1,
	    srv->tls ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, srv->key_pem,
	    MHD_OPTION_HTTPS_MEM_CERT, srv->cert_pem, MHD_OPTION_END);
	if (srv->mhd == NULL)
		return cu_error_set(err, CU_EIO,
		    "cannot listen on %s:%u (in use, or TLS set-up failed)",
		    srv->listen_host, (unsigned)srv->port);
	info = MHD_get_daemon_info(srv->mhd, MHD_DAEMON_INFO_BIND_PORT);
	if (info != NULL)
		srv->port = info->port;
	info = MHD_get_daemon_info(srv->mhd, MHD_DAEMON_INFO_EPOLL_FD);
	if (info == NULL)
		return cu_error_set(err, CU_EIO, "no epoll fd from MHD");
	ev_io_init(&srv->mhd_io, on_mhd_io, info->epoll_fd, EV_READ);
	srv->mhd_io.data = srv;
	ev_io_start(srv->loop, &srv->mhd_io);
	ev_init(&srv->mhd_timer, on_mhd_timer);
	srv->mhd_timer.data = srv;
	ev_prepare_init(&srv->mhd_prepare, on_prepare);
	srv->mhd_prepare.data = srv;
	ev_prepare_start(srv->loop, &srv->mhd_prepare);
	rearm(srv);
	return CU_OK;
}

void as_http_stop(struct as_server *srv)
{
	struct as_kind *k;
	struct as_watch *w;

	if (srv->mhd == NULL)
		return;
	/* Calls in flight end now; handlers re-run below see them failed
	 * and start no new ones. */
	as_webhooks_stop(srv);
	as_aggregator_stop(srv);
	/* MHD must not be stopped with suspended connections. */
	for (k = srv->kinds; k != NULL; k = k->next)
		for (w = k->watchers; w != NULL; w = w->next) {
			w->done = true;
			if (w->suspended) {
				w->suspended = false;
				MHD_resume_connection(w->conn);
			}
		}
	while (suspended_reqs != NULL) {
		struct as_req *rq = suspended_reqs;

		suspended_reqs = rq->next;
		rq->suspended = false;
		ev_timer_stop(srv->loop, &rq->delay);
		MHD_resume_connection(rq->conn);
	}
	MHD_run(srv->mhd);
	ev_io_stop(srv->loop, &srv->mhd_io);
	ev_timer_stop(srv->loop, &srv->mhd_timer);
	ev_prepare_stop(srv->loop, &srv->mhd_prepare);
	MHD_stop_daemon(srv->mhd);
	srv->mhd = NULL;
}
