/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/whsrv.c - the admission-webhook HTTPS server: routes, the
 * readiness guard, certificate loading and reload (see whsrv.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <ev.h>

#include "controller/httpd.h"
#include "controller/whsrv.h"

#define PEM_MAX (1024u * 1024u)

struct ctl_whsrv {
	struct ev_loop *loop;
	char *listen;	      /* owned; after start: the bound port pinned */
	char *cert_dir;	      /* owned */
	char *tls_priorities; /* owned; NULL: the server's default */
	const struct wh_options *wh;
	bool (*ready)(void *payload);
	int (*mount)(struct ctl_httpd *srv, void *payload, cu_error *err);
	void *mount_payload;
	ctl_httpd *http;  /* owned */
	char *cert, *key; /* owned PEM */
	struct timespec cert_mtime, key_mtime;
	ev_timer reload_w;
	unsigned reloads;
	struct route {
		ctl_whsrv *w;
		enum wh_mode mode;
	} * routes; /* owned; one per wh_routes entry */
};

static char *join(const char *dir, const char *file)
{
	return cu_asprintf("%s/%s", dir, file);
}

/* Whole file at path into *out [owned: cu_free]; *mtime its mtime. */
static int read_pem(
    const char *path, char **out, struct timespec *mtime, cu_error *err)
{
	FILE *f;
	struct stat st;
	cu_buf b;
	char chunk[4096];
	size_t n;
	int rc = CU_OK;

	*out = NULL;
	f = fopen(path, "rb");
	if (f == NULL)
		return cu_error_set(err,
		    errno == ENOENT ? CU_ENOTFOUND : CU_EIO,
		    "webhook certificate %s: %s", path, strerror(errno));
	if (fstat(fileno(f), &st) == 0)
		*mtime = st.st_mtim;
	cu_buf_init(&b, PEM_MAX);
	while (rc == CU_OK && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		if (cu_buf_add(&b, chunk, n) != CU_OK)
			rc = cu_error_set(err, CU_EIO,
			    "webhook certificate %s: larger than %u bytes",
			    path, PEM_MAX);
	if (rc == CU_OK && ferror(f))
		rc = cu_error_set(
		    err, CU_EIO, "webhook certificate %s: read error", path);
	fclose(f);
	if (rc == CU_OK && b.len == 0)
		rc = cu_error_set(
		    err, CU_EINVAL, "webhook certificate %s: empty", path);
	if (rc == CU_OK && (*out = cu_buf_detach(&b, NULL)) == NULL)
		rc = cu_error_set(err, CU_ENOMEM,
		    "webhook certificate: out of "
		    "memory");
	cu_buf_dispose(&b);
	return rc;
}

static int load_pair(ctl_whsrv *w, char **cert, char **key, struct timespec *cm,
    struct timespec *km, cu_error *err)
{
	char *cp = join(w->cert_dir, CTL_WHSRV_CERT_FILE);
	char *kp = join(w->cert_dir, CTL_WHSRV_KEY_FILE);
	int rc;

	*cert = *key = NULL;
	if (cp == NULL || kp == NULL)
		rc = cu_error_set(err, CU_ENOMEM, "webhook: out of memory");
	else
		rc = read_pem(cp, cert, cm, err);
	if (rc == CU_OK)
		rc = read_pem(kp, key, km, err);
	if (rc != CU_OK) {
		cu_free(*cert);
		*cert = NULL;
	}
	cu_free(cp);
	cu_free(kp);
	return rc;
}

static void on_review(const struct ctl_http_request *req,
    struct ctl_http_response *resp, void *payload)
{
	struct route *r = payload;
	ctl_whsrv *w = r->w;
	int status = 500;
	char *out = NULL;
	size_t len = 0;
	cu_error err;

	if (w->ready != NULL && !w->ready(w->wh->payload)) {
		/* A 500 makes the API server apply failurePolicy (the reply
		 * is 500 with or without its text). */
		(void)ctl_http_reply(resp, 500, "caches not synced yet");
		return;
	}
	resp->content_type = "application/json";
	if (wh_serve(w->wh, r->mode, req->body, req->body_len, &status, &out,
		&len, &err) != CU_OK ||
	    out == NULL) {
		resp->status = 500;
		return;
	}
	if (status != 200)
		cu_warn("webhook %s: %d: %s", req->path, status, err.msg);
	resp->status = status;
	if (cu_buf_add(&resp->body, out, len) != CU_OK)
		resp->status = 500;
	cu_free(out);
}

/* The CRD conversion webhook: pure, needs no cache, so no readiness
 * guard (the API server cannot read a v1beta1 object without it). */
static void on_convert(const struct ctl_http_request *req,
    struct ctl_http_response *resp, void *payload)
{
	int status = 500;
	char *out = NULL;
	size_t len = 0;
	cu_error err;

	(void)payload;
	cu_error_clear(&err);
	resp->content_type = "application/json";
	if (wh_convert_serve(
		req->body, req->body_len, &status, &out, &len, &err) != CU_OK ||
	    out == NULL) {
		resp->status = 500;
		return;
	}
	if (err.code != CU_OK)
		cu_warn("webhook %s: %d: %s", req->path, status, err.msg);
	resp->status = status;
	if (cu_buf_add(&resp->body, out, len) != CU_OK)
		resp->status = 500;
	cu_free(out);
}

int ctl_whsrv_mount(ctl_whsrv *w, ctl_httpd *srv, cu_error *err)
{
	size_t i;
	int rc = CU_OK;

	for (i = 0; rc == CU_OK && wh_routes[i].path != NULL; i++)
		rc = ctl_httpd_route(srv, "POST", wh_routes[i].path, on_review,
		    &w->routes[i], err);
	if (rc == CU_OK)
		rc = ctl_httpd_route(
		    srv, "POST", WH_CONVERT_PATH, on_convert, w, err);
	return rc;
}

static int make_http(ctl_whsrv *w, const char *cert, const char *key,
    ctl_httpd **out, cu_error *err)
{
	struct ctl_httpd_opts o;
	int rc;

	memset(&o, 0, sizeof(o));
	o.name = "webhook";
	o.listen = w->listen;
	o.cert_pem = cert;
	o.key_pem = key;
	o.max_body = CTL_WHSRV_MAX_BODY;
	o.tls_priorities = w->tls_priorities;
	o.per_ip_limit = CTL_WHSRV_PER_IP_LIMIT;
	rc = ctl_httpd_new(out, w->loop, &o, err);
	if (rc == CU_OK)
		rc = ctl_whsrv_mount(w, *out, err);
	if (rc == CU_OK && w->mount != NULL)
		rc = w->mount(*out, w->mount_payload, err);
	if (rc != CU_OK) {
		ctl_httpd_free(*out);
		*out = NULL;
	}
	return rc;
}

static bool same_time(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

static bool changed(const ctl_whsrv *w)
{
	char *cp = join(w->cert_dir, CTL_WHSRV_CERT_FILE);
	char *kp = join(w->cert_dir, CTL_WHSRV_KEY_FILE);
	struct stat cs, ks;
	bool ch = false;

	if (cp != NULL && kp != NULL && stat(cp, &cs) == 0 &&
	    stat(kp, &ks) == 0)
		ch = !same_time(&cs.st_mtim, &w->cert_mtime) ||
		     !same_time(&ks.st_mtim, &w->key_mtime);
	cu_free(cp);
	cu_free(kp);
	return ch;
}

/* A reload must come back on the port clients were given. */
static void pin_port(ctl_whsrv *w)
{
	const char *colon = strrchr(w->listen, ':');
	char *pinned =
	    cu_asprintf("%.*s:%u", colon ? (int)(colon - w->listen) : 0,
		w->listen, (unsigned)ctl_httpd_port(w->http));

	if (pinned != NULL) {
		cu_free(w->listen);
		w->listen = pinned;
	}
}

/* Load the certificate and start serving (the first time). */
static int serve_first(ctl_whsrv *w, cu_error *err)
{
	int rc =
	    load_pair(w, &w->cert, &w->key, &w->cert_mtime, &w->key_mtime, err);

	if (rc == CU_OK)
		rc = make_http(w, w->cert, w->key, &w->http, err);
	if (rc == CU_OK && (rc = ctl_httpd_start(w->http, err)) != CU_OK) {
		ctl_httpd_free(w->http);
		w->http = NULL;
	}
	if (rc != CU_OK) {
		cu_free(w->cert);
		cu_free(w->key);
		w->cert = w->key = NULL;
		return rc;
	}
	pin_port(w);
	cu_info("webhook: serving with the certificate in %s on port %u",
	    w->cert_dir, (unsigned)ctl_httpd_port(w->http));
	return CU_OK;
}

/* New files: a new server on the same port, then the old one goes. The
 * old one must release the port first, so it is freed before the new one
 * binds; a failed start rebinds the old material. */
static void on_reload(struct ev_loop *loop, ev_timer *t, int revents)
{
	ctl_whsrv *w = t->data;
	char *cert, *key;
	struct timespec cm, km;
	ctl_httpd *h = NULL;
	cu_error err;

	(void)loop;
	(void)revents;
	if (w->http == NULL) {
		/* Waiting for the Secret to be mounted. */
		if (serve_first(w, &err) != CU_OK && err.code != CU_ENOTFOUND)
			cu_warn("webhook: %s", err.msg);
		return;
	}
	if (!changed(w))
		return;
	if (load_pair(w, &cert, &key, &cm, &km, &err) != CU_OK) {
		cu_warn(
		    "webhook: keeping the current certificate: %s", err.msg);
		return;
	}
	if (strcmp(cert, w->cert) == 0 && strcmp(key, w->key) == 0) {
		w->cert_mtime = cm;
		w->key_mtime = km;
		cu_free(cert);
		cu_free(key);
		return;
	}
	ctl_httpd_free(w->http);
	w->http = NULL;
	if (make_http(w, cert, key, &h, &err) == CU_OK &&
	    ctl_httpd_start(h, &err) == CU_OK) {
		cu_free(w->cert);
		cu_free(w->key);
		w->cert = cert;
		w->key = key;
		w->http = h;
		w->reloads++;
		cu_info("webhook: certificate reloaded from %s", w->cert_dir);
	} else {
		cu_warn("webhook: new certificate rejected, keeping the "
			"current one: %s",
		    err.msg);
		ctl_httpd_free(h);
		cu_free(cert);
		cu_free(key);
		if (make_http(w, w->cert, w->key, &w->http, &err) != CU_OK ||
		    ctl_httpd_start(w->http, &err) != CU_OK)
			cu_errorf("webhook: cannot serve again: %s", err.msg);
	}
	w->cert_mtime = cm;
	w->key_mtime = km;
}

int ctl_whsrv_new(ctl_whsrv **out, struct ev_loop *loop,
    const struct ctl_whsrv_opts *opts, cu_error *err)
{
	ctl_whsrv *w;
	size_t i, n = 0;

	*out = NULL;
	if (opts == NULL || opts->listen == NULL || opts->cert_dir == NULL ||
	    opts->wh == NULL)
		return cu_error_set(err, CU_EINVAL, "webhook: missing options");
	while (wh_routes[n].path != NULL)
		n++;
	w = cu_calloc(1, sizeof(*w));
	if (w == NULL)
		return cu_error_set(err, CU_ENOMEM, "webhook: out of memory");
	w->loop = loop;
	w->wh = opts->wh;
	w->ready = opts->ready;
	w->mount = opts->mount;
	w->mount_payload = opts->mount_payload;
	w->listen = cu_strdup(opts->listen);
	w->cert_dir = cu_strdup(opts->cert_dir);
	w->routes = cu_calloc(n ? n : 1, sizeof(*w->routes));
	if (opts->tls_priorities != NULL &&
	    (w->tls_priorities = cu_strdup(opts->tls_priorities)) == NULL) {
		ctl_whsrv_free(w);
		return cu_error_set(err, CU_ENOMEM, "webhook: out of memory");
	}
	if (w->listen == NULL || w->cert_dir == NULL || w->routes == NULL) {
		ctl_whsrv_free(w);
		return cu_error_set(err, CU_ENOMEM, "webhook: out of memory");
	}
	for (i = 0; i < n; i++) {
		w->routes[i].w = w;
		w->routes[i].mode = wh_routes[i].mode;
	}
	ev_timer_init(&w->reload_w, on_reload, CTL_WHSRV_RELOAD_PERIOD_S,
	    CTL_WHSRV_RELOAD_PERIOD_S);
	w->reload_w.data = w;
	*out = w;
	return CU_OK;
}

int ctl_whsrv_start(ctl_whsrv *w, cu_error *err)
{
	int rc = serve_first(w, err);

	if (rc == CU_ENOTFOUND) {
		cu_warn("webhook: not serving until the certificate appears: "
			"%s",
		    err->msg);
		rc = CU_OK;
	}
	if (rc != CU_OK)
		return rc;
	ev_timer_start(w->loop, &w->reload_w);
	return CU_OK;
}

uint16_t ctl_whsrv_port(const ctl_whsrv *w)
{
	return w && w->http ? ctl_httpd_port(w->http) : 0;
}

unsigned ctl_whsrv_reloads(const ctl_whsrv *w)
{
	return w ? w->reloads : 0;
}

void ctl_whsrv_free(ctl_whsrv *w)
{
	if (w == NULL)
		return;
	if (w->loop != NULL)
		ev_timer_stop(w->loop, &w->reload_w);
	ctl_httpd_free(w->http);
	cu_free(w->listen);
	cu_free(w->cert_dir);
	cu_free(w->tls_priorities);
	cu_free(w->cert);
	cu_free(w->key);
	cu_free(w->routes);
	cu_free(w);
}
