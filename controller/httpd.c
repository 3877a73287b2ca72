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
 *  6. Every decision about a request is made in admit() (route, method,
 *     Content-Length) and respond() (body overflow, handler), which the
 *     MHD callbacks and ctl_httpd_dispatch share. Dispatch redoes only
 *     what MHD does before calling us: %-decoding the path and splitting
 *     the query (split_query), and header lookup (struct ctl_http_local).
 *  7. Above conn_limit - headroom live connections, each new one cuts
 *     (as note 2) the connection that has waited longest for a request:
 *     with a static flood the newest clients are served at once, and the
 *     flood is trimmed instead of the service. Connections being answered
 *     are never cut. The per-IP limit is MHD's: more connections from one
 *     address are closed as soon as accepted.
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

#include "controller/httpd.h"

#define HTTPD_MAGIC 0x48545450u /* "HTTP" */
/* MHD's memory per connection (request line, headers, read/write
 * buffers; the body goes to the capped cu_buf). Headers beyond it are
 * answered 431 and the connection closed. Stated rather than left to
 * MHD's default (32 KiB), so the bound is ours: 256 connections x 64 KiB
 * = 16 MiB at most. Kubernetes' own header limit is far below this. */
#define HTTPD_CONN_MEMORY (64u * 1024u)

struct route {
	char *path;    /* owned */
	char *methods; /* owned; " GET HEAD " style, spaces around each */
	ctl_http_handler fn;
	void *payload; /* borrowed */
	struct route *next;
};

/* Per TCP connection (MHD socket context). */
struct conn_track {
	struct ctl_httpd *h;
	int fd;
	int64_t deadline_ns; /* mono; valid while armed */
	bool armed;
	bool cut; /* socket shut down by the sweep */
	struct conn_track *prev, *next;
};

enum gate_state { GATE_NONE, GATE_WAIT, GATE_DONE };

/* Per HTTP request (MHD con_cls); also the gate's call handle. */
struct req_ctx {
	const struct route *route;
	cu_buf body;
	bool too_big;
	bool replied; /* a reply was queued early: drain and ignore */
	/* The gate (ctl_httpd_set_gate): state, answer, and while the
	 * connection is suspended its place in the server's list. */
	enum gate_state gate;
	int gate_status;	/* 0: allowed */
	char gate_text[160];	/* the refusal's body */
	char *gate_body;	/* owned: a refusal's body when set (JSON) */
	const char *gate_ctype; /* gate_body's Content-Type [static] */
	bool suspended;
	struct ctl_httpd *h;	     /* borrowed */
	struct MHD_Connection *conn; /* borrowed */
	struct req_ctx *gprev, *gnext;
};

struct ctl_httpd {
	uint32_t magic;
	struct ev_loop *loop; /* borrowed */
	char *name;	      /* owned */
	char *host;	      /* owned; "" = all interfaces */
	uint16_t port;	      /* requested, then bound */
	char *cert_pem;	      /* owned; NULL for plain HTTP */
	char *key_pem;	      /* owned */
	size_t max_body;
	unsigned conn_timeout_s;
	unsigned request_timeout_ms;
	unsigned conn_limit;
	unsigned per_ip_limit; /* 0: none */
	unsigned nconns;       /* tracked connections */
	char *tls_priorities;  /* owned; NULL: CTL_HTTPD_TLS_PRIORITIES */
	char *client_ca_pem;   /* owned; NULL: no client certificate asked */
	struct route *routes;  /* owned list */
	struct MHD_Daemon *mhd;
	ev_io io;
	ev_timer timer; /* MHD's next timeout */
	ev_timer sweep; /* request deadlines */
	struct conn_track *conns;
	bool closed;		 /* a connection closed during this MHD_run() */
	ctl_http_gate_fn gate;	 /* NULL: none */
	void *gate_payload;	 /* borrowed */
	struct req_ctx *waiting; /* suspended on the gate */
};

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
		if (t != fresh && t->armed &&
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

static void response_init(struct ctl_http_response *resp)
{
	resp->status = 200;
	resp->content_type = CTL_HTTP_TEXT;
	cu_buf_init(&resp->body, CTL_HTTPD_MAX_RESPONSE);
	resp->allow[0] = '\0';
}

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
	ret = MHD_queue_response(conn, (unsigned)resp->status, r);
	MHD_destroy_response(r);
	if ((t = track_of(conn)) != NULL)
		t->armed = false;
	return ret;
}

int ctl_http_reply(struct ctl_http_response *resp, int status, const char *text)
{
	cu_buf_reset(&resp->body);
	resp->status = status;
	if (cu_buf_adds(&resp->body, text) != CU_OK) {
		resp->status = 500;
		return CU_ENOMEM;
	}
	return CU_OK;
}

/* ---- routing ------------------------------------------------------------- */

static const struct route *find_route(
    const struct ctl_httpd *h, const char *path)
{
	const struct route *r, *best = NULL;
	size_t best_len = 0;

	for (r = h->routes; r != NULL; r = r->next)
		if (strcmp(r->path, path) == 0)
			return r;
	/* A route ending in '*' serves every path under its prefix; the
	 * longest prefix wins. */
	for (r = h->routes; r != NULL; r = r->next) {
		size_t n = strlen(r->path);

		if (n > 0 && r->path[n - 1] == '*' &&
		    strncmp(r->path, path, n - 1) == 0 && n - 1 >= best_len) {
			best = r;
			best_len = n - 1;
		}
	}
	return best;
}

static bool method_allowed(const struct route *r, const char *method)
{
	char word[24];
	int n;

	/* One word: "GET HEAD" must not match " GET HEAD " (a method from
	 * the wire has no space; one given to ctl_httpd_dispatch may). */
	if (method[0] == '\0' || strchr(method, ' ') != NULL)
		return false;
	n = snprintf(word, sizeof(word), " %s ", method);
	return n > 0 && (size_t)n < sizeof(word) &&
	       strstr(r->methods, word) != NULL;
}

/* "GET, HEAD" from " GET HEAD " into out. */
static void allow_header(const struct route *r, char *out, size_t cap)
{
	const char *p = r->methods;
	size_t n = 0;

	out[0] = '\0';
	while (*p != '\0') {
		size_t len;

		p += strspn(p, " ");
		len = strcspn(p, " ");
		if (len == 0)
			break;
		if (n + len + 3 >= cap)
			break;
		if (n > 0) {
			memcpy(out + n, ", ", 2);
			n += 2;
		}
		memcpy(out + n, p, len);
		n += len;
		out[n] = '\0';
		p += len;
	}
}

/*
 * What the request line and headers alone decide, for a request from MHD
 * (first_call) and from ctl_httpd_dispatch alike: the route, or an early
 * reply in resp - 404 for an unknown path, 405 (with allow) for a method
 * the route does not take, 413 when content_length [borrowed; NULL when
 * absent] says more than the cap. Returns true when the body is to be
 * read and the route's handler run (*route set).
 */
static bool admit(const struct ctl_httpd *h, const char *path,
    const char *method, const char *content_length, const struct route **route,
    struct ctl_http_response *resp)
{
	const struct route *r = find_route(h, path);

	*route = r;
	if (r == NULL) {
		(void)ctl_http_reply(resp, 404, "404 page not found\n");
		return false;
	}
	if (!method_allowed(r, method)) {
		allow_header(r, resp->allow, sizeof(resp->allow));
		(void)ctl_http_reply(resp, 405, "405 method not allowed\n");
		return false;
	}
	if (content_length != NULL) {
		char *end;
		unsigned long long n = strtoull(content_length, &end, 10);

		if (end != content_length && n > h->max_body) {
			(void)ctl_http_reply(
			    resp, 413, "413 request body too large\n");
			return false;
		}
	}
	return true;
}

/* The body is in: 413 when it overflowed the cap (too_big), else the
 * route's handler fills resp. Both paths end here. */
static void respond(const struct ctl_httpd *h, const struct route *r,
    const struct ctl_http_request *req, bool too_big,
    struct ctl_http_response *resp)
{
	if (too_big)
		(void)ctl_http_reply(resp, 413, "413 request body too large\n");
	else
		r->fn(req, resp, r->payload);
	cu_debug(
	    "%s: %s %s -> %d", h->name, req->method, req->path, resp->status);
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
	response_init(&resp);
	if (admit(h, url, method,
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
	response_init(&resp);
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
		respond(h, rq->route, &req, rq->too_big, &resp);
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
	cu_warn("%s: microhttpd: %s", h->name, line);
}

/* ---- the gate ------------------------------------------------------------ */

void ctl_http_gate_done(ctl_http_gate_call *call, int status, const char *text)
{
	struct req_ctx *rq = call;
	struct ctl_httpd *h = rq->h;

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

/* An in-process request's query arguments and headers (dispatch). */
struct ctl_http_local {
	char **args;		    /* name, value|NULL, ..., NULL; owned */
	const char *const *headers; /* name, value, ..., NULL; borrowed */
};

const char *ctl_http_header(
    const struct ctl_http_request *req, const char *name)
{
	const char *const *hv;

	if (req->local == NULL)
		return MHD_lookup_connection_value(
		    req->conn, MHD_HEADER_KIND, name);
	for (hv = req->local->headers; hv != NULL && hv[0] != NULL; hv += 2)
		if (strcasecmp(hv[0], name) == 0)
			return hv[1];
	return NULL;
}

struct headers_each {
	bool (*fn)(const char *name, const char *value, void *payload);
	void *payload;
	bool stop;
};

static enum MHD_Result header_iter(
    void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	struct headers_each *e = cls;

	(void)kind;
	if (e->stop || key == NULL)
		return MHD_NO;
	e->stop = !e->fn(key, value != NULL ? value : "", e->payload);
	return e->stop ? MHD_NO : MHD_YES;
}

void ctl_http_headers_each(const struct ctl_http_request *req,
    bool (*fn)(const char *name, const char *value, void *payload),
    void *payload)
{
	struct headers_each e = {fn, payload, false};
	const char *const *hv;

	if (req->local == NULL) {
		if (req->conn != NULL)
			MHD_get_connection_values(
			    req->conn, MHD_HEADER_KIND, header_iter, &e);
		return;
	}
	for (hv = req->local->headers; hv != NULL && hv[0] != NULL && !e.stop;
	     hv += 2)
		e.stop = !fn(hv[0], hv[1] != NULL ? hv[1] : "", payload);
}

struct query_find {
	const char *name;
	const char *value;
};

static enum MHD_Result query_iter(
    void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	struct query_find *q = cls;

	(void)kind;
	if (strcmp(key, q->name) != 0)
		return MHD_YES;
	q->value = value != NULL ? value : "";
	return MHD_NO;
}

const char *ctl_http_query(const struct ctl_http_request *req, const char *name)
{
	struct query_find q = {name, NULL};
	char *const *a;

	if (req->local == NULL) {
		MHD_get_connection_values(
		    req->conn, MHD_GET_ARGUMENT_KIND, query_iter, &q);
		return q.value;
	}
	for (a = req->local->args; a != NULL && a[0] != NULL; a += 2)
		if (query_iter(&q, MHD_GET_ARGUMENT_KIND, a[0], a[1]) == MHD_NO)
			break;
	return q.value;
}

/* '+' is a space in a query, then %XX (MHD_parse_arguments_). */
static void unescape_arg(char *s)
{
	char *p;

	for (p = s; *p != '\0'; p++)
		if (*p == '+')
			*p = ' ';
	MHD_http_unescape(s);
}

/* Split query [owned; decoded in place] into *args [owned: cu_free;
 * pointers into query] as MHD_parse_arguments_ does for a request line:
 * at '&', each "name" or "name=value"; an empty last one is dropped. */
static int split_query(char *query, char ***args)
{
	size_t n = 1, i = 0;
	char *p, *amp, *eq;

	for (p = query; *p != '\0'; p++)
		n += *p == '&';
	*args = cu_calloc(2 * n + 1, sizeof(**args));
	if (*args == NULL)
		return CU_ENOMEM;
	for (p = query; p != NULL && *p != '\0'; p = amp) {
		amp = strchr(p, '&');
		if (amp != NULL)
			*amp++ = '\0';
		eq = strchr(p, '=');
		if (eq != NULL)
			*eq++ = '\0';
		unescape_arg(p);
		if (eq != NULL)
			unescape_arg(eq);
		(*args)[i++] = p;
		(*args)[i++] = eq;
	}
	(*args)[i] = NULL;
	return CU_OK;
}

int ctl_httpd_dispatch(ctl_httpd *h, const char *method, const char *target,
    const char *const *headers, const void *body, size_t body_len,
    struct ctl_http_response *out, cu_error *err)
{
	struct ctl_http_local local = {NULL, headers};
	struct ctl_http_request req;
	const struct route *r;
	const char *q;
	char *path = NULL, *query = NULL;
	cu_buf b;
	bool too_big;
	int rc = CU_OK;

	CU_ASSERT(h != NULL && h->magic == HTTPD_MAGIC);
	response_init(out);
	if (method == NULL || target == NULL) {
		out->status = 500;
		return cu_error_set(err, CU_EINVAL,
		    "%s: dispatch needs a method and a target", h->name);
	}
	q = strchr(target, '?');
	path = cu_strndup(
	    target, q != NULL ? (size_t)(q - target) : strlen(target));
	if (path == NULL || (q != NULL && (query = cu_strdup(q + 1)) == NULL) ||
	    (query != NULL && split_query(query, &local.args) != CU_OK)) {
		rc = cu_error_set(err, CU_ENOMEM, "out of memory");
		out->status = 500;
		goto out;
	}
	MHD_http_unescape(path);
	memset(&req, 0, sizeof(req));
	req.method = method;
	req.path = path;
	req.local = &local;
	if (admit(h, path, method,
		ctl_http_header(&req, MHD_HTTP_HEADER_CONTENT_LENGTH), &r,
		out)) {
		cu_buf_init(&b, h->max_body);
		too_big =
		    body_len > 0 && cu_buf_add(&b, body, body_len) != CU_OK;
		req.body = b.ptr != NULL ? b.ptr : "";
		req.body_len = b.len;
		respond(h, r, &req, too_big, out);
		cu_buf_dispose(&b);
	}
out:
	cu_free(local.args);
	cu_free(query);
	cu_free(path);
	return rc;
}

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

int ctl_httpd_route(ctl_httpd *h, const char *methods, const char *path,
    ctl_http_handler fn, void *payload, cu_error *err)
{
	struct route *r;
	const char *p;
	size_t n = 0;
	bool get = false;

	CU_ASSERT(h != NULL && h->magic == HTTPD_MAGIC);
	if (path == NULL || path[0] != '/' || fn == NULL || methods == NULL ||
	    methods[0] == '\0')
		return cu_error_set(err, CU_EINVAL,
		    "%s: a route needs a path starting with '/', methods and "
		    "a handler",
		    h->name);
	for (r = h->routes; r != NULL && strcmp(r->path, path) != 0;
	     r = r->next)
		;
	if (r != NULL)
		return cu_error_set(
		    err, CU_EEXIST, "%s: %s is routed already", h->name, path);
	r = cu_calloc(1, sizeof(*r));
	if (r == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	r->path = cu_strdup(path);
	/* " M1 M2 " plus " HEAD" when GET is listed. */
	r->methods = cu_malloc(strlen(methods) + 9);
	if (r->path == NULL || r->methods == NULL) {
		cu_free(r->path);
		cu_free(r->methods);
		cu_free(r);
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	}
	r->methods[n++] = ' ';
	for (p = methods; *p != '\0';) {
		size_t len;

		p += strspn(p, " ");
		len = strcspn(p, " ");
		if (len == 0)
			break;
		memcpy(r->methods + n, p, len);
		n += len;
		r->methods[n++] = ' ';
		get = get || (len == 3 && strncmp(p, "GET", 3) == 0);
		p += len;
	}
	r->methods[n] = '\0';
	if (get && strstr(r->methods, " HEAD ") == NULL) {
		memcpy(r->methods + n, "HEAD ", 6);
		n += 5;
	}
	r->fn = fn;
	r->payload = payload;
	r->next = h->routes;
	h->routes = r;
	return CU_OK;
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
	cu_free(h->name);
	cu_free(h->host);
	cu_free(h->cert_pem);
	wipe_free(h->key_pem);
	cu_free(h->tls_priorities);
	cu_free(h->client_ca_pem);
	h->magic = 0;
	cu_free(h);
}

/* ---- TLS configuration --------------------------------------------------- */

/* Go's TLS 1.2 suites with ECDHE and an AEAD cipher, and the TLS 1.3 ones
 * (kx NULL), with their GnuTLS key exchange and cipher. */
static const struct tls_suite {
	const char *go, *kx, *cipher;
} TLS_SUITES[] = {
    {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA", "AES-128-GCM"},
    {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA", "AES-128-GCM"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA", "AES-256-GCM"},
    {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA", "AES-256-GCM"},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA",
	"CHACHA20-POLY1305"},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA",
	"CHACHA20-POLY1305"},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305", "ECDHE-ECDSA",
	"CHACHA20-POLY1305"},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305", "ECDHE-RSA", "CHACHA20-POLY1305"},
    {"TLS_AES_128_GCM_SHA256", NULL, "AES-128-GCM"},
    {"TLS_AES_256_GCM_SHA384", NULL, "AES-256-GCM"},
    {"TLS_CHACHA20_POLY1305_SHA256", NULL, "CHACHA20-POLY1305"},
};

/* Go's suites that are refused: RSA key exchange (no forward secrecy),
 * CBC mode, RC4, 3DES. */
static const char *const TLS_INSECURE[] = {
    "TLS_RSA_WITH_RC4_128_SHA",
    "TLS_RSA_WITH_3DES_EDE_CBC_SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA",
    "TLS_RSA_WITH_AES_256_CBC_SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA256",
    "TLS_RSA_WITH_AES_128_GCM_SHA256",
    "TLS_RSA_WITH_AES_256_GCM_SHA384",
    "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
    "TLS_ECDHE_RSA_WITH_RC4_128_SHA",
    "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
};

#define TLS_NSUITES (sizeof(TLS_SUITES) / sizeof(TLS_SUITES[0]))

static bool tls_insecure(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(TLS_INSECURE) / sizeof(TLS_INSECURE[0]); i++)
		if (strcmp(name, TLS_INSECURE[i]) == 0)
			return true;
	return false;
}

/* Append ":+item" to b unless an earlier suite added it already. */
static int tls_add(cu_buf *b, const char *item)
{
	char probe[64];

	snprintf(probe, sizeof(probe), ":+%s:", item);
	if (b->ptr != NULL && strstr(b->ptr, probe) != NULL)
		return CU_OK;
	return cu_buf_addf(b, "+%s:", item);
}

int ctl_httpd_tls_priorities(const char *min_version, const char *const *suites,
    size_t n, char **out, cu_error *err)
{
	const char *vers;
	bool tls12 = true;
	cu_buf kx, ciphers;
	size_t i, j;
	int rc = CU_OK;

	*out = NULL;
	if (min_version == NULL || min_version[0] == '\0' ||
	    strcmp(min_version, "VersionTLS12") == 0)
		vers = "-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2";
	else if (strcmp(min_version, "VersionTLS13") == 0) {
		vers = "-VERS-ALL:+VERS-TLS1.3";
		tls12 = false;
	} else
		return cu_error_set(err, CU_EINVAL,
		    "tls.minVersion: Unsupported value: \"%.64s\": %s; "
		    "supported values: \"VersionTLS12\", \"VersionTLS13\"",
		    min_version,
		    strcmp(min_version, "VersionTLS10") == 0 ||
			    strcmp(min_version, "VersionTLS11") == 0
			? "insecure"
			: "unknown");
	if (n == 0) {
		*out = cu_asprintf(
		    "NORMAL:%%SERVER_PRECEDENCE:%s:" CTL_HTTPD_TLS_KX
		    ":" CTL_HTTPD_TLS_CIPHERS ":-MAC-ALL:+AEAD",
		    vers);
		return *out != NULL
			   ? CU_OK
			   : cu_error_set(err, CU_ENOMEM, "out of memory");
	}
	/* ":" first so that tls_add finds ":+item:" for the first item. */
	cu_buf_init(&kx, 1024);
	cu_buf_init(&ciphers, 1024);
	if (cu_buf_add(&kx, ":", 1) != CU_OK ||
	    cu_buf_add(&ciphers, ":", 1) != CU_OK)
		rc = cu_error_set(err, CU_ENOMEM, "out of memory");
	for (i = 0; rc == CU_OK && i < n; i++) {
		const char *s = suites[i] != NULL ? suites[i] : "";

		for (j = 0; j < TLS_NSUITES; j++)
			if (strcmp(s, TLS_SUITES[j].go) == 0)
				break;
		if (j == TLS_NSUITES) {
			rc = cu_error_set(err, CU_EINVAL,
			    "tls.cipherSuites[%zu]: Unsupported value: "
			    "\"%.64s\": %s; TLS 1.2 suites must use ECDHE key "
			    "exchange and an AEAD cipher (e.g. "
			    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)",
			    i, s, tls_insecure(s) ? "insecure" : "unknown");
			break;
		}
		if (TLS_SUITES[j].kx != NULL)
			rc = tls_add(&kx, TLS_SUITES[j].kx);
		if (rc == CU_OK)
			rc = tls_add(&ciphers, TLS_SUITES[j].cipher);
		if (rc != CU_OK)
			rc = cu_error_set(err, CU_ENOMEM, "out of memory");
	}
	/* Only TLS 1.3 names: TLS 1.3 needs an ECDHE key exchange enabled
	 * in GnuTLS, and TLS 1.2 would have no suite. */
	if (rc == CU_OK && kx.len == 1) {
		if (tls12)
			rc = cu_error_set(err, CU_EINVAL,
			    "tls.cipherSuites: Invalid value: no TLS 1.2 suite "
			    "while minVersion allows TLS 1.2; add one (e.g. "
			    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256) or set "
			    "tls.minVersion: VersionTLS13");
		else if (cu_buf_addf(&kx, "+ECDHE-ECDSA:+ECDHE-RSA:") != CU_OK)
			rc = cu_error_set(err, CU_ENOMEM, "out of memory");
	}
	if (rc == CU_OK) {
		kx.ptr[kx.len - 1] = '\0';
		ciphers.ptr[ciphers.len - 1] = '\0';
		*out = cu_asprintf("NORMAL:%%SERVER_PRECEDENCE:%s:-KX-ALL%s:"
				   "-CIPHER-ALL%s:-MAC-ALL:+AEAD",
		    vers, kx.ptr, ciphers.ptr);
		if (*out == NULL)
			rc = cu_error_set(err, CU_ENOMEM, "out of memory");
	}
	cu_buf_dispose(&kx);
	cu_buf_dispose(&ciphers);
	return rc;
}
