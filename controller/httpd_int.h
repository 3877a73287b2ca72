/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/httpd_int.h - what the files of the HTTP server share:
 * httpd.c (the loop, connections, the access handler, the gate),
 * httpd_route.c (routes, request accessors, in-process dispatch) and
 * httpd_tls.c (TLS priorities). Private to controller/httpd*.c; the
 * design notes are in httpd.c.
 */
#ifndef CU_CONTROLLER_HTTPD_INT_H
#define CU_CONTROLLER_HTTPD_INT_H

#include <ev.h>
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
	bool cut;   /* socket shut down by the sweep */
	bool gated; /* its request waits for the gate: never evicted */
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
	struct cu_log_limit mhd_log; /* microhttpd's lines: per connection */
};

/* An in-process request's query arguments and headers (dispatch). */
struct ctl_http_local {
	char **args;		    /* name, value|NULL, ..., NULL; owned */
	const char *const *headers; /* name, value, ..., NULL; borrowed */
};

/* resp initialised: status 200, text, empty body (httpd_route.c). */
void ctl_httpd__response_init(struct ctl_http_response *resp);

/*
 * What the request line and headers alone decide, for a request from MHD
 * and from ctl_httpd_dispatch alike: the route, or an early reply in
 * resp - 404 for an unknown path, 405 (with allow) for a method the route
 * does not take, 413 when content_length [borrowed; NULL when absent]
 * says more than the cap. Returns true when the body is to be read and
 * the route's handler run (*route set).
 */
bool ctl_httpd__admit(const struct ctl_httpd *h, const char *path,
    const char *method, const char *content_length, const struct route **route,
    struct ctl_http_response *resp);

/* The body is in: 413 when it overflowed the cap (too_big), else the
 * route's handler fills resp. */
void ctl_httpd__respond(const struct ctl_httpd *h, const struct route *r,
    const struct ctl_http_request *req, bool too_big,
    struct ctl_http_response *resp);

#endif
