/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/httpd.c - libmicrohttpd in external-loop epoll mode on the
 * controller's libev loop (one loop, one thread: MHD runs no threads of
 * its own and is driven like any other watcher): MHD's epoll fd
 * is one ev_io, MHD_get_timeout() re-arms one ev_timer after every
 * MHD_run(), and a periodic sweep enforces the per-request deadline.
 *
 * Design notes.
 *  1. MHD calls the access handler first with the headers only (route,
 *     method and Content-Length are decided there, early replies included),
 *     then once per body chunk (appended to a capped cu_buf), then a final
 *     time (the route handler runs and the reply is queued).
 *  2. Every connection has a tracker (MHD socket context) holding its fd
 *     and a deadline: armed when the connection opens and again when a
 *     request completes (keep-alive), disarmed when a reply is queued. The
 *     sweep timer shuts down the socket of an overdue connection; MHD then
 *     sees EOF and closes it. MHD's own idle timeout alone would let a
 *     client that sends one byte per few seconds hold a slot forever.
 *  3. Nothing here blocks: MHD sockets are non-blocking and handlers must
 *     not block either.
 *  4. At the connection limit MHD removes its listen socket from its epoll
 *     set and re-adds it at the start of the next MHD_run() after a
 *     connection closed. run_mhd() therefore runs MHD again whenever a run
 *     closed a connection; otherwise an idle server that once hit the
 *     limit would never accept again.
 *  5. Bounds per server: conn_limit connections, HTTPD_CONN_MEMORY bytes
 *     of MHD memory each, max_body bytes of body each (413), the idle
 *     timeout and the request deadline (note 2).
 *  6. Every decision about a request is made in ctl_httpd__admit() (route,
 * method, Content-Length) and ctl_httpd__respond() (body overflow, handler),
 * which the MHD callbacks and ctl_httpd_dispatch share. Dispatch redoes only
 *     what MHD does before calling us: %-decoding the path and splitting
 *     the query (split_query), and header lookup (struct ctl_http_local).
 *  7. Above conn_limit - headroom live connections, each new one cuts
 *     (as note 2) the connection that has waited longest for a request:
 *     with a static flood the newest clients are served at once, and the
 *     flood is trimmed instead of the service. Connections being answered
 *     are never cut, nor those whose request waits for the gate (its
 *     authentication review): a flood of new connections must not drop
 *     the callers already read in full. The per-IP limit is MHD's: more
 *     connections from one address are closed as soon as accepted.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include <ev.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>

#include "controller/httpd_int.h"

/* ---- addresses ---------------------------------------------------------- */

/* Split "host:port", "[v6]:port" or ":port" into *host [owned] and *port. */
static int parse_listen(
    const char *listen, char **host, uint16_t *port, cu_error *err)
{
	const char *colon, *hs = listen, *he;
	char *end;
	unsigned long p;

	*host = NULL;
	if (listen == NULL || listen[0] == '\0')
		return cu_error_set(err, CU_EINVAL, "listen address is empty");
	if (listen[0] == '[') {
		he = strchr(listen, ']');
		if (he == NULL || he[1] != ':')
			return cu_error_set(err, CU_EINVAL,
			    "listen address \"%s\": want [ipv6]:port", listen);
		hs = listen + 1;
		colon = he + 1;
	} else {
		colon = strrchr(listen, ':');
		if (colon == NULL)
			return cu_error_set(err, CU_EINVAL,
			    "listen address \"%s\": want host:port", listen);
		he = colon;
	}
	if (colon[1] == '\0')
		return cu_error_set(
		    err, CU_EINVAL, "listen address \"%s\": no port", listen);
	p = strtoul(colon + 1, &end, 10);
	if (*end != '\0' || p > 65535 || colon[1] == '-' || colon[1] == '+')
		return cu_error_set(
		    err, CU_EINVAL, "listen address \"%s\": bad port", listen);
	*host = cu_strndup(hs, (size_t)(he - hs));
	if (*host == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	*port = (uint16_t)p;
	return CU_OK;
}

/* Resolve h->host into addr (numeric first, then a name lookup). */
static int resolve(const struct ctl_httpd *h, struct sockaddr_storage *addr,
    socklen_t *len, cu_error *err)
{
	struct addrinfo hints, *res = NULL;
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST;
	rc = getaddrinfo(h->host, NULL, &hints, &res);
	if (rc == EAI_NONAME) {
		hints.ai_flags = AI_PASSIVE;
		rc = getaddrinfo(h->host, NULL, &hints, &res);
	}
	if (rc != 0 || res == NULL || res->ai_addrlen > sizeof(*addr)) {
		if (res != NULL)
			freeaddrinfo(res);
		return cu_error_set(err, CU_EINVAL,
		    "%s: cannot resolve listen host \"%s\": %s", h->name,
		    h->host, rc != 0 ? gai_strerror(rc) : "no address");
	}
	memcpy(addr, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	if (addr->ss_family == AF_INET)
		((struct sockaddr_in *)addr)->sin_port = htons(h->port);
	else if (addr->ss_family == AF_INET6)
		((struct sockaddr_in6 *)addr)->sin6_port = htons(h->port);
	else
		return cu_error_set(err, CU_EINVAL,
		    "%s: listen host \"%s\" is not IPv4 or IPv6", h->name,
		    h->host);
	return CU_OK;
}

/* ---- loop integration -----------------------------------------------------
 */

static void rearm(struct ctl_httpd *h)
{
	MHD_UNSIGNED_LONG_LONG ms;

	ev_timer_stop(h->loop, &h->timer);
	if (MHD_get_timeout(h->mhd, &ms) == MHD_YES) {
		ev_timer_set(&h->timer, (double)ms / CU_MS_PER_S, 0.);
		ev_timer_start(h->loop, &h->timer);
	}
}

static void run_mhd(struct ctl_httpd *h)
{
	int i;

	/* MHD takes its listen socket out of epoll at the connection limit
	 * and puts it back only at the start of a later MHD_run(); with no
	 * connection left there may be no later event to cause one, so run
	 * again while runs close connections (design note 4). */
	for (i = 0; i < 4; i++) {
		h->closed = false;
		MHD_run(h->mhd);
		if (!h->closed)
			break;
	}
	rearm(h);
}

static void on_io(struct ev_loop *loop, ev_io *w, int revents)
{
	(void)loop;
	(void)revents;
	run_mhd(w->data);
}

static void on_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	run_mhd(w->data);
}

static void on_sweep(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct ctl_httpd *h = w->data;
	int64_t now = cu_time_mono_ns();
	struct conn_track *t;
	bool cut = false;

	(void)loop;
	(void)revents;
	for (t = h->conns; t != NULL; t = t->next) {
		if (!t->armed || t->cut || now < t->deadline_ns)
			continue;
		/* Shut down, not close: MHD owns the fd and closes it when it
		 * sees the EOF this causes (design note 2). */
		shutdown(t->fd, SHUT_RDWR);
		t->cut = true;
		cut = true;
		cu_debug("%s: request not received within %u ms: connection "
			 "closed",
		    h->name, h->request_timeout_ms);
	}
	if (cut)
		run_mhd(h);
}

/* ---- connections ----------------------------------------------------------
 */

static void arm(struct conn_track *t)
{
	t->deadline_ns =
	    cu_time_mono_ns() + CU_MS_TO_NS(t->h->request_timeout_ms);
	t->armed = true;
}

/* Near the connection limit, the newcomer `fresh` displaces the
 * connection that has waited longest for a request (the earliest
 * deadline among those waiting; one being answered is never cut): MHD
 * stops accepting at the limit itself, and a flood of idle or trickling
 * connections would otherwise hold every slot until the deadline, with
 * probes and webhook calls waiting behind it (design note 7). */
static void evict(struct ctl_httpd *h, const struct conn_track *fresh)
{
	unsigned headroom = h->conn_limit / 4 < 8 ? h->conn_limit / 4 : 8;
	struct conn_track *t, *oldest = NULL;
	unsigned live = 0;

	for (t = h->conns; t != NULL; t = t->next) {
		if (t->cut)
			continue;
		live++;
		/* A request waiting for its review (the gate) has been
		 * read whole: cutting it would let a flood of new
		 * connections starve every authenticated caller. */
		if (t != fresh && t->armed && !t->gated &&
		    (oldest == NULL || t->deadline_ns < oldest->deadline_ns))
			oldest = t;
	}
	if (live <= h->conn_limit - headroom || oldest == NULL)
		return;
	shutdown(oldest->fd, SHUT_RDWR);
	oldest->cut = true;
	cu_debug("%s: %u connections: the one idle longest closed for a new "
		 "one",
	    h->name, live);
}

static void on_connection(void *cls, struct MHD_Connection *conn,
    void **socket_context, enum MHD_ConnectionNotificationCode toe)
{
	struct ctl_httpd *h = cls;
	struct conn_track *t = *socket_context;
	const union MHD_ConnectionInfo *ci;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		ci = MHD_get_connection_info(
		    conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		t = cu_calloc(1, sizeof(*t));
		if (t == NULL || ci == NULL) {
			/* Untracked: only MHD's idle timeout applies. */
			cu_free(t);
			return;
		}
		t->h = h;
		t->fd = ci->connect_fd;
		arm(t);
		t->next = h->conns;
		if (h->conns != NULL)
			h->conns->prev = t;
		h->conns = t;
		*socket_context = t;
		h->nconns++;
		evict(h, t);
		return;
	}
	h->closed = true;
	if (t == NULL)
		return;
	h->nconns--;
	if (t->prev != NULL)
		t->prev->next = t->next;
	else
		h->conns = t->next;
	if (t->next != NULL)
		t->next->prev = t->prev;
	cu_free(t);
	*socket_context = NULL;
}

static struct conn_track *track_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci != NULL ? ci->socket_context : NULL;
}

/* ---- replies ------------------------------------------------------------- */

/* Send resp on conn; its body goes to MHD (resp->body is left empty). */
static enum MHD_Result queue(
    struct MHD_Connection *conn, struct ctl_http_response *resp)
{
	struct MHD_Response *r;
	struct conn_track *t;
	enum MHD_Result ret;
	size_t len = 0;
	char *text = cu_buf_detach(&resp->body, &len);

	if (text == NULL)
		return MHD_NO;
	r = MHD_create_response_from_buffer_with_free_callback(
	    len, text, cu_free);
	if (r == NULL) {
		cu_free(text);
		return MHD_NO;
	}
	MHD_add_response_header(
	    r, MHD_HTTP_HEADER_CONTENT_TYPE, resp->content_type);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (resp->allow[0] != '\0')
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, resp->allow);
	/* As kube-apiserver's max-in-flight filter: come back in a second. */
	if (resp->status == 429)
		MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "1");
	ret = MHD_queue_response(conn, (unsigned)resp->status, r);
	MHD_destroy_response(r);
	if ((t = track_of(conn)) != NULL)
		t->armed = false;
	return ret;
}

/* ---- the access handler ------------------------------------------------- */

static enum MHD_Result first_call(struct ctl_httpd *h,
    struct MHD_Connection *conn, const char *url, const char *method,
    void **con_cls)
{
	struct req_ctx *rq = cu_calloc(1, sizeof(*rq));
	struct ctl_http_response resp;
	enum MHD_Result ret;

	if (rq == NULL)
		return MHD_NO;
	*con_cls = rq;
	cu_buf_init(&rq->body, h->max_body);
	ctl_httpd__response_init(&resp);
	if (ctl_httpd__admit(h, url, method,
		MHD_lookup_connection_value(
		    conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH),
		&rq->route, &resp)) {
		cu_buf_dispose(&resp.body);
		return MHD_YES;
	}
	/* Early: the body is never read (MHD closes the connection after
	 * the reply). */
	rq->replied = true;
	ret = queue(conn, &resp);
	cu_buf_dispose(&resp.body);
	return ret;
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *conn,
    const char *url, const char *method, const char *version,
    const char *upload, size_t *upload_size, void **con_cls)
{
	struct ctl_httpd *h = cls;
	struct req_ctx *rq = *con_cls;
	struct ctl_http_request req;
	struct ctl_http_response resp;
	enum MHD_Result ret;

	(void)version;
	if (rq == NULL)
		return first_call(h, conn, url, method, con_cls);
	if (*upload_size > 0) {
		if (!rq->replied && !rq->too_big &&
		    cu_buf_add(&rq->body, upload, *upload_size) != CU_OK)
			rq->too_big = true; /* buffer freed; keep draining */
		*upload_size = 0;
		return MHD_YES;
	}
	if (rq->replied || rq->gate == GATE_WAIT)
		return MHD_YES;
	memset(&req, 0, sizeof(req));
	req.method = method;
	req.path = url;
	req.body = rq->body.ptr != NULL ? rq->body.ptr : "";
	req.body_len = rq->body.len;
	req.conn = conn;
	if (h->gate != NULL && rq->gate == GATE_NONE && !rq->too_big) {
		/* Ask the gate; unless it answered inside the call, wait
		 * suspended until ctl_http_gate_done resumes us. */
		rq->gate = GATE_WAIT;
		rq->h = h;
		rq->conn = conn;
		h->gate(rq, &req, h->gate_payload);
		if (rq->gate == GATE_WAIT) {
			struct conn_track *t = track_of(conn);

			if (t != NULL)
				t->gated = true;
			rq->suspended = true;
			rq->gnext = h->waiting;
			if (h->waiting != NULL)
				h->waiting->gprev = rq;
			h->waiting = rq;
			MHD_suspend_connection(conn);
			return MHD_YES;
		}
	}
	rq->replied = true;
	ctl_httpd__response_init(&resp);
	if (rq->gate == GATE_DONE && rq->gate_status != 0 &&
	    rq->gate_body != NULL) {
		resp.status = rq->gate_status;
		resp.content_type = rq->gate_ctype;
		if (cu_buf_add(&resp.body, rq->gate_body,
			strlen(rq->gate_body)) != CU_OK)
			resp.status = 500;
		cu_debug("%s: %s %s -> %d (gate)", h->name, method, url,
		    resp.status);
	} else if (rq->gate == GATE_DONE && rq->gate_status != 0) {
		(void)ctl_http_reply(&resp, rq->gate_status, rq->gate_text);
		cu_debug("%s: %s %s -> %d (gate)", h->name, method, url,
		    resp.status);
	} else
		ctl_httpd__respond(h, rq->route, &req, rq->too_big, &resp);
	ret = queue(conn, &resp);
	cu_buf_dispose(&resp.body);
	return ret;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
    enum MHD_RequestTerminationCode toe)
{
	struct req_ctx *rq = *con_cls;
	struct conn_track *t;

	(void)cls;
	(void)toe;
	if (rq != NULL) {
		cu_buf_dispose(&rq->body);
		cu_free(rq->gate_body);
		cu_free(rq);
		*con_cls = NULL;
	}
	/* The next request on a kept-alive connection gets a fresh deadline
	 * (design note 2). */
	if ((t = track_of(conn)) != NULL)
		arm(t);
}

/* MHD's messages end in a newline; cu_log wants one line. */
__attribute__((format(printf, 2, 0))) static void on_mhd_log(
    void *cls, const char *fmt, va_list ap)
{
	struct ctl_httpd *h = cls;
	char line[512];
	size_t n;

	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		line[--n] = '\0';
	/* Per connection (a reset, a failed handshake): a flood must not
	 * flood the log. */
	cu_log_limited(
	    &h->mhd_log, CU_LOG_WARN, "%s: microhttpd: %s", h->name, line);
}

/* ---- the gate ------------------------------------------------------------ */

void ctl_http_gate_done(ctl_http_gate_call *call, int status, const char *text)
{
	struct req_ctx *rq = call;
	struct ctl_httpd *h = rq->h;
	struct conn_track *t;

	CU_ASSERT(rq->gate == GATE_WAIT);
	rq->gate = GATE_DONE;
	rq->gate_status = status;
	snprintf(rq->gate_text, sizeof(rq->gate_text), "%s",
	    text != NULL ? text : "");
	if (!rq->suspended)
		return; /* answered inside the gate call */
	rq->suspended = false;
	if (rq->gprev != NULL)
		rq->gprev->gnext = rq->gnext;
	else
		h->waiting = rq->gnext;
	if (rq->gnext != NULL)
		rq->gnext->gprev = rq->gprev;
	rq->gprev = rq->gnext = NULL;
	if ((t = track_of(rq->conn)) != NULL)
		t->gated = false;
	MHD_resume_connection(rq->conn);
	/* MHD serves it on its next run: make that now. */
	ev_timer_stop(h->loop, &h->timer);
	ev_timer_set(&h->timer, 0., 0.);
	ev_timer_start(h->loop, &h->timer);
}

void ctl_http_gate_done_body(ctl_http_gate_call *call, int status,
    const char *content_type, const char *body)
{
	struct req_ctx *rq = call;

	cu_free(rq->gate_body);
	rq->gate_body = NULL;
	if (status != 0 && body != NULL) {
		rq->gate_body = cu_strdup(body);
		rq->gate_ctype =
		    content_type != NULL ? content_type : CTL_HTTP_TEXT;
	}
	ctl_http_gate_done(call, status,
	    rq->gate_body == NULL && status != 0 && body != NULL
		? "out of memory\n"
		: NULL);
}

size_t ctl_http_peer_chain(
    const struct ctl_http_request *req, struct ctl_http_der *out, size_t max)
{
	const union MHD_ConnectionInfo *ci;
	const gnutls_datum_t *d;
	unsigned int n = 0, i;

	if (req->conn == NULL)
		return 0;
	ci = MHD_get_connection_info(
	    req->conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	if (ci == NULL || ci->tls_session == NULL)
		return 0;
	d = gnutls_certificate_get_peers((gnutls_session_t)ci->tls_session, &n);
	if (d == NULL)
		return 0;
	for (i = 0; i < n && i < max; i++) {
		out[i].data = d[i].data;
		out[i].len = d[i].size;
	}
	return i;
}

const char *ctl_http_peer_ip(
    const struct ctl_http_request *req, char *out, size_t cap)
{
	const union MHD_ConnectionInfo *ci;
	const struct sockaddr *sa;
	socklen_t len;

	if (cap == 0)
		return "";
	out[0] = '\0';
	if (req->conn == NULL)
		return out;
	ci = MHD_get_connection_info(
	    req->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (ci == NULL || (sa = ci->client_addr) == NULL)
		return out;
	len = sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
					: sizeof(struct sockaddr_in);
	if (getnameinfo(
		sa, len, out, (socklen_t)cap, NULL, 0, NI_NUMERICHOST) != 0)
		out[0] = '\0';
	return out;
}

int ctl_httpd_set_gate(
    ctl_httpd *h, ctl_http_gate_fn fn, void *payload, cu_error *err)
{
	if (h->mhd != NULL)
		return cu_error_set(err, CU_EINVAL,
		    "%s: the gate must be set before the server starts",
		    h->name);
	h->gate = fn;
	h->gate_payload = payload;
	return CU_OK;
}

/* ---- public ------------------------------------------------------------- */

int ctl_httpd_new(ctl_httpd **out, struct ev_loop *loop,
    const struct ctl_httpd_opts *opts, cu_error *err)
{
	ctl_httpd *h;
	int rc;

	*out = NULL;
	if ((opts->cert_pem == NULL) != (opts->key_pem == NULL))
		return cu_error_set(err, CU_EINVAL,
		    "%s: TLS needs both a certificate and a key",
		    opts->name != NULL ? opts->name : "http");
	h = cu_calloc(1, sizeof(*h));
	if (h == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	h->magic = HTTPD_MAGIC;
	h->loop = loop;
	h->name = cu_strdup(opts->name != NULL ? opts->name : "http");
	h->mhd_log = (struct cu_log_limit)CU_LOG_LIMIT(h->name, 60, 5);
	if (h->name == NULL) {
		rc = cu_error_set(err, CU_ENOMEM, "out of memory");
		goto out_free;
	}
	if ((rc = parse_listen(opts->listen, &h->host, &h->port, err)) != CU_OK)
		goto out_free;
	if (opts->cert_pem != NULL) {
		h->cert_pem = cu_strdup(opts->cert_pem);
		h->key_pem = cu_strdup(opts->key_pem);
		if (h->cert_pem == NULL || h->key_pem == NULL) {
			rc = cu_error_set(err, CU_ENOMEM, "out of memory");
			goto out_free;
		}
	}
	if (opts->cert_pem != NULL && opts->client_ca_pem != NULL &&
	    (h->client_ca_pem = cu_strdup(opts->client_ca_pem)) == NULL) {
		ctl_httpd_free(h);
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	}
	if (opts->tls_priorities != NULL &&
	    (h->tls_priorities = cu_strdup(opts->tls_priorities)) == NULL) {
		rc = cu_error_set(err, CU_ENOMEM, "out of memory");
		goto out_free;
	}
	h->max_body =
	    opts->max_body > 0 ? opts->max_body : CTL_HTTPD_DEFAULT_MAX_BODY;
	h->conn_timeout_s = opts->conn_timeout_s > 0
				? opts->conn_timeout_s
				: CTL_HTTPD_DEFAULT_CONN_TIMEOUT_S;
	h->request_timeout_ms = opts->request_timeout_ms > 0
				    ? opts->request_timeout_ms
				    : h->conn_timeout_s * 1000u;
	h->conn_limit = opts->conn_limit > 0 ? opts->conn_limit
					     : CTL_HTTPD_DEFAULT_CONN_LIMIT;
	h->per_ip_limit = opts->per_ip_limit;
	*out = h;
	return CU_OK;
out_free:
	ctl_httpd_free(h);
	return rc;
}

static struct MHD_Daemon *start_daemon(
    ctl_httpd *h, unsigned flags, const struct sockaddr *addr)
{
	bool tls = h->cert_pem != NULL;

	if (tls)
		flags |= MHD_USE_TLS;
	if (h->gate != NULL)
		flags |= MHD_ALLOW_SUSPEND_RESUME;
	/* MHD_OPTION_SOCK_ADDR with NULL keeps the default (any address on
	 * h->port); the TLS options come last so that a plain server ends
	 * the list early. No MHD_OPTION_LISTENING_ADDRESS_REUSE: it means
	 * SO_REUSEPORT, and a second process on the same port must fail
	 * rather than share it (MHD sets SO_REUSEADDR by itself). */
	return MHD_start_daemon(flags | MHD_USE_EPOLL | MHD_USE_ERROR_LOG,
	    h->port, NULL, NULL, on_access, h, MHD_OPTION_EXTERNAL_LOGGER,
	    on_mhd_log, h, MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
	    MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
	    MHD_OPTION_CONNECTION_LIMIT, h->conn_limit,
	    MHD_OPTION_PER_IP_CONNECTION_LIMIT, h->per_ip_limit,
	    MHD_OPTION_CONNECTION_TIMEOUT, h->conn_timeout_s,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTPD_CONN_MEMORY,
	    MHD_OPTION_SOCK_ADDR, addr,
	    tls ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, h->key_pem,
	    MHD_OPTION_HTTPS_MEM_CERT, h->cert_pem, MHD_OPTION_HTTPS_PRIORITIES,
	    h->tls_priorities != NULL ? h->tls_priorities
				      : CTL_HTTPD_TLS_PRIORITIES,
	    h->client_ca_pem != NULL ? MHD_OPTION_HTTPS_MEM_TRUST
				     : MHD_OPTION_END,
	    h->client_ca_pem, MHD_OPTION_END);
}

int ctl_httpd_start(ctl_httpd *h, cu_error *err)
{
	const union MHD_DaemonInfo *info;
	struct sockaddr_storage addr;
	socklen_t alen = 0;
	double period;
	int rc;

	CU_ASSERT(h != NULL && h->magic == HTTPD_MAGIC);
	if (h->mhd != NULL)
		return cu_error_set(
		    err, CU_EINVAL, "%s: already started", h->name);
	if (h->host[0] == '\0') {
		/* All interfaces: IPv6 dual stack, or IPv4 without IPv6. */
		h->mhd = start_daemon(h, MHD_USE_DUAL_STACK, NULL);
		if (h->mhd == NULL)
			h->mhd = start_daemon(h, 0, NULL);
	} else {
		if ((rc = resolve(h, &addr, &alen, err)) != CU_OK)
			return rc;
		h->mhd = start_daemon(h,
		    addr.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0,
		    (const struct sockaddr *)&addr);
	}
	if (h->mhd == NULL)
		return cu_error_set(err, CU_EIO,
		    "%s: cannot listen on %s%s%s:%u (address in use or "
		    "unavailable%s)",
		    h->name, strchr(h->host, ':') ? "[" : "", h->host,
		    strchr(h->host, ':') ? "]" : "", (unsigned)h->port,
		    h->cert_pem != NULL ? ", or certificate/key rejected" : "");
	info = MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_BIND_PORT);
	if (info != NULL && info->port != 0)
		h->port = info->port;
	info = MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_EPOLL_FD);
	if (info == NULL) {
		MHD_stop_daemon(h->mhd);
		h->mhd = NULL;
		return cu_error_set(
		    err, CU_EIO, "%s: microhttpd gave no epoll fd", h->name);
	}
	ev_io_init(&h->io, on_io, info->epoll_fd, EV_READ);
	h->io.data = h;
	ev_io_start(h->loop, &h->io);
	ev_init(&h->timer, on_timer);
	h->timer.data = h;
	/* Check deadlines at a quarter of the request timeout, between 50 ms
	 * and 1 s. */
	period = (double)h->request_timeout_ms / 4000.0;
	period = period < 0.05 ? 0.05 : period > 1.0 ? 1.0 : period;
	ev_timer_init(&h->sweep, on_sweep, period, period);
	h->sweep.data = h;
	ev_timer_start(h->loop, &h->sweep);
	rearm(h);
	cu_info("%s: listening on %s%s%s:%u (%s)", h->name,
	    strchr(h->host, ':') ? "[" : "", h->host,
	    strchr(h->host, ':') ? "]" : "", (unsigned)h->port,
	    h->cert_pem != NULL ? "https" : "http");
	return CU_OK;
}

uint16_t ctl_httpd_port(const ctl_httpd *h)
{
	return h->mhd != NULL ? h->port : 0;
}

static void wipe_free(char *s)
{
	if (s == NULL)
		return;
	/* Private key material does not linger in freed memory. */
	explicit_bzero(s, strlen(s));
	cu_free(s);
}

void ctl_httpd_free(ctl_httpd *h)
{
	struct route *r, *next;

	if (h == NULL)
		return;
	CU_ASSERT(h->magic == HTTPD_MAGIC);
	/* The gate's owner answers its calls before the server goes; any
	 * left are refused so that MHD can close them. */
	while (h->waiting != NULL)
		ctl_http_gate_done(
		    h->waiting, 503, "503 service unavailable\n");
	if (h->mhd != NULL) {
		if (h->gate != NULL)
			MHD_run(h->mhd);
		ev_io_stop(h->loop, &h->io);
		ev_timer_stop(h->loop, &h->timer);
		ev_timer_stop(h->loop, &h->sweep);
		/* Closes every connection; the notify callbacks free the
		 * request contexts and trackers. */
		MHD_stop_daemon(h->mhd);
		h->mhd = NULL;
	}
	CU_ASSERT(h->conns == NULL);
	for (r = h->routes; r != NULL; r = next) {
		next = r->next;
		cu_free(r->path);
		cu_free(r->methods);
		cu_free(r);
	}
	cu_log_limit_unlink(&h->mhd_log);
	cu_free(h->name);
	cu_free(h->host);
	cu_free(h->cert_pem);
	wipe_free(h->key_pem);
	cu_free(h->tls_priorities);
	cu_free(h->client_ca_pem);
	h->magic = 0;
	cu_free(h);
}
