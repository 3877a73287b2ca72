/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/httpd.h - a small HTTP(S) server on libmicrohttpd, driven by
 * the controller's libev loop: MHD runs in external-loop epoll mode, its
 * epoll fd is one ev_io and its next timeout one ev_timer, so requests are
 * served on the loop thread between other work and never block it. Serves
 * /healthz, /readyz (plain HTTP), /metrics (HTTPS behind a gate that
 * authenticates and authorizes, or plain HTTP) and the admission webhooks
 * (TLS from PEM cert/key).
 *
 * What it enforces for every route: a request-body cap (413, early when
 * Content-Length says so), an idle timeout per connection, an absolute
 * deadline for receiving one request's headers and body (so a client that
 * trickles bytes - slowloris - is cut off without delaying anyone else), a
 * connection limit (near it, a new connection displaces the one that has
 * waited longest for a request), an optional per-client-address limit,
 * 404 for unknown paths and 405 for wrong methods.
 *
 * Lifecycle: ctl_httpd_new -> ctl_httpd_route... -> ctl_httpd_start ->
 * (loop runs) -> ctl_httpd_free. Routes may be added after start.
 * ctl_httpd_dispatch serves one request in-process through the same
 * route, method, body-cap and handler path, without a socket (tests,
 * fuzzing: tests/fuzz/httpd_fuzz.c).
 * Event-loop thread only. Prefix: ctl_httpd_, ctl_http_.
 */
#ifndef CU_CONTROLLER_HTTPD_H
#define CU_CONTROLLER_HTTPD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/cu.h"

struct ev_loop;
struct MHD_Connection;
struct ctl_http_local;

typedef struct ctl_httpd ctl_httpd;

#define CTL_HTTPD_DEFAULT_MAX_BODY (1024u * 1024u)
#define CTL_HTTPD_DEFAULT_CONN_TIMEOUT_S 10u
#define CTL_HTTPD_DEFAULT_CONN_LIMIT 256u
/* Connections from one client address on the ports that authenticate
 * every request (metrics, visibility): a scraper or the API server needs
 * a few; one address cannot take the whole server. */
#define CTL_HTTPD_AUTH_PER_IP_LIMIT 64u
#define CTL_HTTP_TEXT "text/plain; charset=utf-8"
/* GnuTLS priorities of TLS servers by default, the secure defaults of
 * Kubernetes components: TLS 1.2 and 1.3 only; TLS 1.2 only with
 * ephemeral elliptic-curve key exchange (forward secrecy) and AEAD ciphers
 * (no RSA key exchange, no CBC, no SHA-1 MACs); TLS 1.3 with its AEAD
 * suites (TLS_AES_256_GCM_SHA384, TLS_CHACHA20_POLY1305_SHA256,
 * TLS_AES_128_GCM_SHA256, as OpenSSL enables by default). */
#define CTL_HTTPD_TLS_KX "-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA"
#define CTL_HTTPD_TLS_CIPHERS                                                  \
	"-CIPHER-ALL:+AES-256-GCM:+CHACHA20-POLY1305:+AES-128-GCM"
#define CTL_HTTPD_TLS_PRIORITIES                                               \
	"NORMAL:%SERVER_PRECEDENCE:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1."         \
	"2:" CTL_HTTPD_TLS_KX ":" CTL_HTTPD_TLS_CIPHERS ":-MAC-ALL:+AEAD"

/* Settings of one server. Every pointer [borrowed; copied by
 * ctl_httpd_new]. Zero fields take the defaults named. */
struct ctl_httpd_opts {
	const char *name;     /* for log lines ("metrics", "webhook"); "http" */
	const char *listen;   /* "host:port": ":8080" (all interfaces, IPv6
				 dual stack when available), "0.0.0.0:8081",
				 "127.0.0.1:0" (any free port), "[::1]:9443",
				 "localhost:8080" (resolved once, here) */
	const char *cert_pem; /* NULL: plain HTTP; else TLS with this chain */
	const char *key_pem;  /* required with cert_pem (PEM, unencrypted) */
	size_t max_body;      /* request body cap; CTL_HTTPD_DEFAULT_MAX_BODY */
	unsigned conn_timeout_s;     /* idle timeout; default 10 s */
	unsigned request_timeout_ms; /* deadline for one request's headers and
					body; default conn_timeout_s */
	unsigned conn_limit;	     /* concurrent connections; default 256.
					Near it (above conn_limit - min(8,
					conn_limit / 4)) a new connection
					closes the one that has waited
					longest for a request, so that idle
					or trickling clients cannot lock
					the server up */
	unsigned per_ip_limit;	     /* concurrent connections from one
					client address; 0: no limit
					(more are closed at once) */
	const char *tls_priorities;  /* GnuTLS priorities with cert_pem
					(ctl_httpd_tls_priorities);
					NULL: CTL_HTTPD_TLS_PRIORITIES */
	const char *client_ca_pem;   /* with cert_pem: ask clients for a
					certificate (optional; the CAs named
					in the request are these). Nothing
					is verified here: the handler or
					gate checks ctl_http_peer_chain.
					NULL: none asked */
};

/*
 * The GnuTLS priorities of a Go-style TLS configuration (Kueue's
 * Configuration `tls`): min_version NULL or "" (TLS 1.2), "VersionTLS12"
 * or "VersionTLS13"; suites[n] Go cipher-suite names (n 0: the defaults
 * of CTL_HTTPD_TLS_PRIORITIES). Only ECDHE key exchange with an AEAD
 * cipher is accepted for TLS 1.2 (TLS_ECDHE_{RSA,ECDSA}_WITH_AES_128_GCM_
 * SHA256, ..._AES_256_GCM_SHA384, ..._CHACHA20_POLY1305[_SHA256]); the
 * TLS 1.3 names (TLS_AES_128_GCM_SHA256, ...) are accepted too. GnuTLS
 * enables the key exchanges and ciphers named, in every combination, and
 * TLS 1.3 uses the same ciphers. *out [owned: cu_free]. CU_EINVAL for an
 * unknown or insecure value, the message naming the field
 * ("tls.cipherSuites[1]: Unsupported value: ..."); CU_ENOMEM.
 */
CU_MUST_CHECK int ctl_httpd_tls_priorities(const char *min_version,
    const char *const *suites, size_t n, char **out, cu_error *err);

/* One request as a handler sees it. All pointers [borrowed; valid only
 * during the handler call]. */
struct ctl_http_request {
	const char *method;	     /* "GET", "POST", ... */
	const char *path;	     /* URL path without the query string */
	const char *body;	     /* NUL-terminated; "" when none */
	size_t body_len;	     /* may contain NULs before body_len */
	struct MHD_Connection *conn; /* for ctl_http_query/_header only;
					NULL for ctl_httpd_dispatch */
	const struct ctl_http_local *local; /* ctl_httpd_dispatch's query
					       and headers, else NULL */
};

/*
 * The reply a handler fills. The server initialises it (status 200,
 * content_type CTL_HTTP_TEXT, body empty with cap CTL_HTTPD_MAX_RESPONSE,
 * allow "") and sends and disposes it after the handler returns. A
 * handler whose cu_buf append failed should set status 500 (the buffer is
 * then empty). allow is the server's: the Allow header of a 405.
 */
#define CTL_HTTPD_MAX_RESPONSE (64u * 1024u * 1024u)
#define CTL_HTTPD_ALLOW_MAX 128
struct ctl_http_response {
	int status;
	const char *content_type; /* [borrowed; must be a static string] */
	cu_buf body;		  /* owned by the server */
	char allow[CTL_HTTPD_ALLOW_MAX]; /* "GET, HEAD" on a 405, else "" */
};

/* A route handler. payload [borrowed] is the pointer given to
 * ctl_httpd_route. Never blocks; runs on the loop thread. */
typedef void (*ctl_http_handler)(const struct ctl_http_request *req,
    struct ctl_http_response *resp, void *payload);

/*
 * The gate: a check every request to the server passes before its route's
 * handler runs (the metrics server's authentication and authorization,
 * controller/mauth.h). fn gets the request once its body is in (req
 * [borrowed; valid only during the call: copy what is kept]) and a call
 * handle [borrowed; valid until ctl_http_gate_done], and must answer with
 * ctl_http_gate_done exactly once, inside the call or later from the
 * loop; meanwhile the connection is suspended (MHD suspend/resume) and
 * the loop keeps serving everything else. status 0 lets the request
 * through; another status is the reply, with text [borrowed; copied, cut
 * at 159 bytes] as its body. The gate's owner answers every open call
 * before ctl_httpd_free (calls still open then are refused with 503).
 * ctl_httpd_dispatch does not run the gate.
 */
typedef struct req_ctx ctl_http_gate_call;
typedef void (*ctl_http_gate_fn)(ctl_http_gate_call *call,
    const struct ctl_http_request *req, void *payload);

/* ctl_http_gate_done with a refusal body of any length: body [borrowed;
 * copied] sent with content_type [borrowed; must be a static string;
 * NULL: CTL_HTTP_TEXT] (a Status object as JSON). status 0 ignores
 * both. */
void ctl_http_gate_done_body(ctl_http_gate_call *call, int status,
    const char *content_type, const char *body);

/* Install fn (payload [borrowed; must outlive the server]) before
 * ctl_httpd_start; CU_EINVAL after. */
CU_MUST_CHECK int ctl_httpd_set_gate(
    ctl_httpd *h, ctl_http_gate_fn fn, void *payload, cu_error *err);
void ctl_http_gate_done(ctl_http_gate_call *call, int status, const char *text);

/*
 * Create a server (nothing is bound yet). *out [owned: ctl_httpd_free].
 * loop [borrowed; must outlive the server]. CU_EINVAL for a malformed
 * listen address or a cert without a key; CU_ENOMEM.
 */
CU_MUST_CHECK int ctl_httpd_new(ctl_httpd **out, struct ev_loop *loop,
    const struct ctl_httpd_opts *opts, cu_error *err);

/*
 * Serve `path` (exact match, no query) with fn; a path ending in '*'
 * ("/apis/g/" then "*") serves every path starting with what precedes the '*'
 * that has no exact route (the longest such prefix wins). methods is a
 * space-separated list ("GET", "POST", "GET POST"); GET implies HEAD.
 * path and methods [borrowed; copied]; payload [borrowed; must outlive the
 * server]. CU_EEXIST if path already has a route; CU_EINVAL; CU_ENOMEM.
 */
CU_MUST_CHECK int ctl_httpd_route(ctl_httpd *h, const char *methods,
    const char *path, ctl_http_handler fn, void *payload, cu_error *err);

/*
 * Bind, listen and attach to the loop. CU_EIO when the address cannot be
 * bound or the TLS material is rejected (message names the address).
 * CU_EINVAL if already started.
 */
CU_MUST_CHECK int ctl_httpd_start(ctl_httpd *h, cu_error *err);

/*
 * Serve one request in-process, as if microhttpd had received it: the
 * same route lookup (404), method check (405, out->allow set), body cap
 * (413: early when a Content-Length header says more than the cap, else
 * when the body holds more) and handler call as a request on a
 * connection, for tests and fuzzing. Needs no ctl_httpd_start.
 *
 * target is the request-target: a path and an optional "?query". As
 * microhttpd does by default, the path is %-decoded (MHD_http_unescape;
 * a decoded NUL ends it) and the query split at '&' into name[=value]
 * arguments, each side %-decoded, for ctl_http_query. headers is NULL or
 * name, value pairs ending with a NULL name, for ctl_http_header
 * (case-insensitive names, first match wins). body holds body_len bytes
 * (may contain NULs; may be NULL when body_len is 0), handed over as
 * given: there is no wire framing to check. Everything [borrowed].
 *
 * out is initialised here on every return; out->body [owned by the
 * caller: cu_buf_dispose], also for HEAD (microhttpd would not send it).
 * Returns CU_OK with the reply in out; CU_EINVAL for a NULL method or
 * target, CU_ENOMEM (out->status 500 when either happens). Not from
 * inside a handler of h.
 */
CU_MUST_CHECK int ctl_httpd_dispatch(ctl_httpd *h, const char *method,
    const char *target, const char *const *headers, const void *body,
    size_t body_len, struct ctl_http_response *out, cu_error *err);

/* The bound port (the real one after listening on port 0); 0 before
 * ctl_httpd_start. */
uint16_t ctl_httpd_port(const ctl_httpd *h);

/* Stop serving (closing every connection), detach from the loop and free.
 * NULL is a no-op. Never call it from inside a handler. */
void ctl_httpd_free(ctl_httpd *h);

/* Query parameter `name` of the request: its value [borrowed; valid during
 * the handler], "" when present without a value ("?verbose"), NULL when
 * absent. */
const char *ctl_http_query(
    const struct ctl_http_request *req, const char *name);

/* Request header `name` (case-insensitive) [borrowed; valid during the
 * handler], or NULL. */
const char *ctl_http_header(
    const struct ctl_http_request *req, const char *name);

/* Every request header in arrival order (a name sent twice comes twice):
 * fn(name, value, payload) [both borrowed; valid during the call] until it
 * returns false. */
void ctl_http_headers_each(const struct ctl_http_request *req,
    bool (*fn)(const char *name, const char *value, void *payload),
    void *payload);

/* One certificate of a TLS peer, DER [borrowed; valid during the handler
 * or gate call]. */
struct ctl_http_der {
	const unsigned char *data;
	size_t len;
};

/* The client's address as numeric text ("10.0.0.7", "::1") in out[cap],
 * which is returned; "" for ctl_httpd_dispatch or when unknown. */
const char *ctl_http_peer_ip(
    const struct ctl_http_request *req, char *out, size_t cap);

/* The client's certificate chain (leaf first) as it sent it in the TLS
 * handshake (servers with client_ca_pem), into out[0..max): the count;
 * 0 when it sent none, over plain HTTP and for ctl_httpd_dispatch.
 * Unverified. */
size_t ctl_http_peer_chain(
    const struct ctl_http_request *req, struct ctl_http_der *out, size_t max);

/* Convenience: set status and replace the body with text [borrowed;
 * copied]. Returns CU_OK or CU_ENOMEM (then status is 500, body empty). */
int ctl_http_reply(
    struct ctl_http_response *resp, int status, const char *text);

#endif /* CU_CONTROLLER_HTTPD_H */
