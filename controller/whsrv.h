/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/whsrv.h - the admission-webhook HTTPS server: every path of
 * wh_routes (webhook/webhook.h), and the CRD conversion webhook at
 * WH_CONVERT_PATH (wh_convert_serve; no readiness guard), served over TLS on
 * the controller's loop (controller/httpd.h), with the serving certificate and
 * key read from files (the mounted Secret: <cert_dir>/tls.crt and tls.key) and
 * reloaded when either file changes. A reload rebinds the same port; a
 * reload that fails keeps the server running on the old certificate.
 * Files missing at start (a Secret not mounted yet) are waited for: the
 * server starts serving when they appear.
 *
 * The decisions themselves are wh_serve's, over the caller's caches
 * (struct wh_options). Until `ready` says the caches are synced, every
 * review is answered 500 so the API server applies the webhook's
 * failurePolicy: a job is never let through unsuspended because a cache
 * was still empty.
 *
 * Event-loop thread only. Prefix: ctl_whsrv_.
 */
#ifndef CU_CONTROLLER_WHSRV_H
#define CU_CONTROLLER_WHSRV_H

#include <stdbool.h>
#include <stdint.h>

#include "webhook/webhook.h"
#include "lib/cu.h"

struct ev_loop;
struct ctl_httpd;

typedef struct ctl_whsrv ctl_whsrv;

#define CTL_WHSRV_CERT_FILE "tls.crt"
#define CTL_WHSRV_KEY_FILE "tls.key"
/* How often the certificate files are checked for a change. */
#define CTL_WHSRV_RELOAD_PERIOD_S 10.0
/* Connections from one client address: half of the server's 256, so that
 * no single pod can hold them all, while an API server replica keeps room
 * for 128 concurrent admission calls. */
#define CTL_WHSRV_PER_IP_LIMIT 128u
/* The request-body cap of the webhook server: a review at its limit plus
 * room for the envelope. */
#define CTL_WHSRV_MAX_BODY (WH_MAX_BODY + 1024)

struct ctl_whsrv_opts {
	const char *listen;   /* "host:port" [borrowed; copied] */
	const char *cert_dir; /* [borrowed; copied] */
	/* The handlers' view of the cluster [borrowed; must outlive the
	 * server]. */
	const struct wh_options *wh;
	/* true once the caches behind wh are synced; payload is wh->payload.
	 * NULL: always ready. */
	bool (*ready)(void *payload);
	/* GnuTLS priorities (ctl_config's tls.priorities) [borrowed;
	 * copied]; NULL: CTL_HTTPD_TLS_PRIORITIES. */
	const char *tls_priorities;
	/* More routes on every server built (at start and after each
	 * certificate reload); NULL: none. */
	int (*mount)(struct ctl_httpd *srv, void *payload, cu_error *err);
	void *mount_payload; /* [borrowed; must outlive the server] */
};

/*
 * Create the server (nothing loaded or bound yet). *out [owned:
 * ctl_whsrv_free]; loop [borrowed; must outlive the server]. CU_EINVAL
 * for missing options, CU_ENOMEM.
 */
CU_MUST_CHECK int ctl_whsrv_new(ctl_whsrv **out, struct ev_loop *loop,
    const struct ctl_whsrv_opts *opts, cu_error *err);

/* Load the certificate, listen, and watch the files. Missing files are
 * not an error (served once they appear; logged). CU_EIO when the port
 * cannot be bound, a file cannot be read or the TLS material is rejected;
 * CU_EINVAL for a bad listen address. */
CU_MUST_CHECK int ctl_whsrv_start(ctl_whsrv *w, cu_error *err);

/*
 * Route every path of wh_routes (POST) on srv [borrowed] to w's review
 * handler, with w's readiness guard: what ctl_whsrv_start serves, mounted
 * on another server (tests/fuzz/httpd_fuzz.c; needs no certificate). w
 * must outlive srv's serving. Errors of ctl_httpd_route.
 */
CU_MUST_CHECK int ctl_whsrv_mount(
    ctl_whsrv *w, struct ctl_httpd *srv, cu_error *err);

/* The bound port; 0 before ctl_whsrv_start. */
uint16_t ctl_whsrv_port(const ctl_whsrv *w);

/* Certificate reloads done so far (for tests and metrics). */
unsigned ctl_whsrv_reloads(const ctl_whsrv *w);

/* Stop serving and free. NULL is a no-op. */
void ctl_whsrv_free(ctl_whsrv *w);

#endif /* CU_CONTROLLER_WHSRV_H */
