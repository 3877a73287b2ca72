/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/httpd_fuzz.c - fuzz the controller's own HTTP endpoints
 * in-process: a ctl_httpd (controller/httpd.h) with the real handlers
 * mounted - /healthz, /livez and /readyz (controller/health.h), /metrics
 * (controller/metrics.h) and every admission-webhook path
 * (controller/whsrv.h, over a world where nothing is managed) - serves
 * each input through ctl_httpd_dispatch, the route/method/body-cap path
 * that requests from microhttpd take. The wire parsing is microhttpd's and
 * not fuzzed here.
 *
 * Input: one flags byte, then an HTTP-like request:
 *
 *   <flags><METHOD> <target>\n      method: up to the line's last space
 *   <Name>: <value>\n ...           headers, up to an empty line
 *   \n
 *   <body>                          the rest, NULs and all
 *
 * flags: bit 0 readiness checks pass, bit 1 webhook caches synced, bit 2
 * a 256-byte body cap (else the webhook server's), bit 3 a NaN gauge,
 * bit 4 replica_role leader. The body's first line (at most 64 bytes)
 * is also a label value of a few metric series, so label escaping meets
 * arbitrary bytes.
 *
 * Checked contracts (abort() on a breach): status in {200, 400, 404, 405,
 * 413, 500}; an unknown path is 404; a known path with a method it does
 * not take is 405 with the right Allow; a Content-Length over the cap or a
 * body over it is 413; /healthz and /livez say 200 "ok"; /readyz is 200
 * exactly when its checks pass, with a body that says so; /metrics is 200
 * with the exposition content type and a body in the Prometheus text
 * format 0.0.4 (one HELP and TYPE per family, before its samples, families
 * in order, valid names, escaped label values and HELP text, a float
 * value, a final newline); a webhook path answers 500 until the caches are
 * synced, then an AdmissionReview (JSON) with a string uid and a boolean
 * allowed.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>
#include <microhttpd.h>

#include "webhook/webhook.h"
#include "controller/health.h"
#include "controller/httpd.h"
#include "controller/metrics.h"
#include "controller/whsrv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define F_READY 0x01u
#define F_WH_SYNCED 0x02u
#define F_SMALL_CAP 0x04u
#define F_NAN 0x08u
#define F_LEADER 0x10u
#define SMALL_CAP 256u
#define MAX_HEADERS 32
#define MAX_LABEL 64

struct world {
	unsigned flags;
};

/* ---- the server ------------------------------------------------------- */

static int check_ok(cu_error *err, void *payload)
{
	(void)err;
	(void)payload;
	return CU_OK;
}

static int check_synced(cu_error *err, void *payload)
{
	const struct world *w = payload;

	if (w->flags & F_READY)
		return CU_OK;
	return cu_error_set(err, CU_EAGAIN, "waiting for the informers");
}

static bool wh_synced(void *payload)
{
	const struct world *w = payload;

	return (w->flags & F_WH_SYNCED) != 0;
}

/* A few series of each type, label from the input. */
static void fill_metrics(ctl_metrics *m, const char *label, unsigned flags)
{
	ctl_metrics_set_role(
	    m, (flags & F_LEADER) ? CTL_ROLE_LEADER : CTL_ROLE_STANDALONE);
	(void)ctl_metric_set(m, CTL_M_PENDING_WORKLOADS,
	    CTL_LV(label, "active"), (flags & F_NAN) ? NAN : 3);
	(void)ctl_metric_observe(
	    m, CTL_M_ADMISSION_ATTEMPT_DURATION_SECONDS, CTL_LV(label), 0.25);
	(void)ctl_metric_inc(m, CTL_M_EVICTED_WORKLOADS_TOTAL,
	    CTL_LV(label, "Preempted", "", label));
	(void)ctl_metric_observe(
	    m, CTL_M_CUEUE_LOOP_LAG_SECONDS, CTL_LV0, 1e-5);
}

/* ---- the oracle ------------------------------------------------------- */

/* What each served path takes; the 405's Allow header. */
struct expect_route {
	const char *path;
	const char *allow;
};

static const struct expect_route GET_ROUTES[] = {
    {"/healthz", "GET, HEAD"},
    {"/livez", "GET, HEAD"},
    {"/readyz", "GET, HEAD"},
    {"/metrics", "GET, HEAD"},
};

/* The Allow of path, or NULL when nothing is served there. */
static const char *allow_of(const char *path)
{
	size_t i;

	for (i = 0; i < sizeof(GET_ROUTES) / sizeof(GET_ROUTES[0]); i++)
		if (strcmp(GET_ROUTES[i].path, path) == 0)
			return GET_ROUTES[i].allow;
	for (i = 0; wh_routes[i].path != NULL; i++)
		if (strcmp(wh_routes[i].path, path) == 0)
			return "POST";
	return NULL;
}

static bool method_in(const char *method, const char *allow)
{
	return strcmp(allow, "POST") == 0
		   ? strcmp(method, "POST") == 0
		   : strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
}

static bool ends_with(const cu_buf *b, const char *tail)
{
	size_t n = strlen(tail);

	return b->len >= n && memcmp(b->ptr + b->len - n, tail, n) == 0;
}

static bool body_is(const cu_buf *b, const char *text)
{
	return b->len == strlen(text) && memcmp(b->ptr, text, b->len) == 0;
}

static bool name_char(char c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	       c == ':' || (!first && c >= '0' && c <= '9');
}

/* Length of the metric or label name at s (0: none). */
static size_t name_len(const char *s, const char *end)
{
	size_t n = 0;

	while (s + n < end && name_char(s[n], n == 0))
		n++;
	return n;
}

/* A sample value: a Go-style float, +Inf, -Inf or NaN, to end of line. */
static void check_value(const char *s, const char *end)
{
	char buf[CTL_PROM_FLOAT_LEN + 8], *stop;
	size_t n = (size_t)(end - s);

	if (n == 0 || n >= sizeof(buf))
		abort();
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (strcmp(buf, "+Inf") == 0 || strcmp(buf, "-Inf") == 0 ||
	    strcmp(buf, "NaN") == 0)
		return;
	(void)strtod(buf, &stop);
	if (*stop != '\0' || strchr(buf, ' ') != NULL ||
	    strncasecmp(buf, "inf", 3) == 0 || strncasecmp(buf, "nan", 3) == 0)
		abort();
}

/* {name="value",...}: escapes \\ \" \n only; returns past the '}'. */
static const char *check_labels(const char *s, const char *end, bool *le)
{
	size_t n;

	*le = false;
	s++; /* '{' */
	while (s < end && *s != '}') {
		n = name_len(s, end);
		if (n == 0 || s + n + 1 >= end || s[n] != '=' ||
		    s[n + 1] != '"')
			abort();
		*le = *le || (n == 2 && memcmp(s, "le", 2) == 0);
		for (s += n + 2; s < end && *s != '"'; s++)
			if (*s == '\\' &&
			    (++s >= end ||
				(*s != '\\' && *s != '"' && *s != 'n')))
				abort();
		if (s >= end)
			abort();
		s++; /* closing quote */
		if (s < end && *s == ',')
			s++;
		else if (s >= end || *s != '}')
			abort();
	}
	if (s >= end)
		abort();
	return s + 1;
}

struct family {
	char name[128];
	char type[16];
	bool typed;
};

/* A sample line of family f [borrowed]. */
static void check_sample(const struct family *f, const char *s, const char *end)
{
	size_t n = name_len(s, end), fl = strlen(f->name);
	const char *suffix;
	bool le = false, bucket;

	if (n == 0 || !f->typed || n < fl || memcmp(s, f->name, fl) != 0)
		abort();
	suffix = s + fl;
	if (strcmp(f->type, "histogram") == 0) {
		bucket = n == fl + 7 && memcmp(suffix, "_bucket", 7) == 0;
		if (!bucket &&
		    !(n == fl + 4 && memcmp(suffix, "_sum", 4) == 0) &&
		    !(n == fl + 6 && memcmp(suffix, "_count", 6) == 0))
			abort();
	} else {
		bucket = false;
		if (n != fl)
			abort();
	}
	s += n;
	if (s < end && *s == '{')
		s = check_labels(s, end, &le);
	if (bucket != le)
		abort();
	if (s >= end || *s != ' ')
		abort();
	check_value(s + 1, end);
}

/* The whole /metrics body: text format 0.0.4 as ctl_metrics_render
 * promises it (metrics.h). */
static void check_exposition(const cu_buf *b)
{
	const char *s = b->ptr, *end = b->ptr + b->len, *eol;
	struct family f;
	char prev[128] = "";

	memset(&f, 0, sizeof(f));
	if (b->len == 0)
		return;
	if (end[-1] != '\n' || memchr(s, '\0', b->len) != NULL)
		abort();
	for (; s < end; s = eol + 1) {
		size_t n;

		eol = memchr(s, '\n', (size_t)(end - s));
		if (eol == s)
			abort(); /* no empty lines */
		if ((size_t)(eol - s) > 7 && memcmp(s, "# HELP ", 7) == 0) {
			const char *p;

			s += 7;
			n = name_len(s, eol);
			if (n == 0 || n >= sizeof(f.name) || s[n] != ' ')
				abort();
			memset(&f, 0, sizeof(f));
			memcpy(f.name, s, n);
			/* sorted by name: one HELP per family */
			if (strcmp(prev, f.name) >= 0)
				abort();
			memcpy(prev, f.name, n + 1);
			for (p = s + n + 1; p < eol; p++)
				if (*p == '\\' &&
				    (++p >= eol || (*p != '\\' && *p != 'n')))
					abort();
			continue;
		}
		if ((size_t)(eol - s) > 7 && memcmp(s, "# TYPE ", 7) == 0) {
			s += 7;
			n = strlen(f.name);
			if (f.name[0] == '\0' || f.typed ||
			    (size_t)(eol - s) <= n + 1 ||
			    memcmp(s, f.name, n) != 0 || s[n] != ' ' ||
			    (size_t)(eol - s - n - 1) >= sizeof(f.type))
				abort();
			memcpy(f.type, s + n + 1, (size_t)(eol - s - n - 1));
			if (strcmp(f.type, "counter") != 0 &&
			    strcmp(f.type, "gauge") != 0 &&
			    strcmp(f.type, "histogram") != 0)
				abort();
			f.typed = true;
			continue;
		}
		if (*s == '#')
			abort();
		check_sample(&f, s, eol);
	}
}

/* An AdmissionReview answer: JSON with response.uid and .allowed. */
static void check_review(const struct ctl_http_response *resp)
{
	json_t *doc, *r;

	if (strcmp(resp->content_type, "application/json") != 0 ||
	    resp->body.len == 0)
		abort();
	doc = json_loadb(resp->body.ptr, resp->body.len, 0, NULL);
	r = json_object_get(doc, "response");
	if (!json_is_object(r) || !json_is_string(json_object_get(r, "uid")) ||
	    !json_is_boolean(json_object_get(r, "allowed")))
		abort();
	json_decref(doc);
}

/* The reply of a request that reached its handler. */
static void check_handled(
    const char *path, unsigned flags, const struct ctl_http_response *resp)
{
	const cu_buf *b = &resp->body;

	if (resp->allow[0] != '\0')
		abort();
	if (strcmp(path, "/healthz") == 0 || strcmp(path, "/livez") == 0) {
		if (resp->status != 200 || !body_is(b, "ok"))
			abort();
	} else if (strcmp(path, "/readyz") == 0) {
		if ((resp->status == 200) != ((flags & F_READY) != 0))
			abort();
		if (resp->status == 200
			? !body_is(b, "ok") &&
			      (!ends_with(b, "readyz check passed\n") ||
				  strstr(b->ptr, "[+]informers-synced ok\n") ==
				      NULL)
			: resp->status != 500 ||
			      !ends_with(b, "readyz check failed\n") ||
			      strstr(b->ptr, "[-]informers-synced failed: ") ==
				  NULL)
			abort();
	} else if (strcmp(path, "/metrics") == 0) {
		if (resp->status != 200 ||
		    strcmp(resp->content_type, CTL_METRICS_CONTENT_TYPE) != 0)
			abort();
		check_exposition(b);
	} else if (!(flags & F_WH_SYNCED)) {
		if (resp->status != 500 || !body_is(b, "caches not synced yet"))
			abort();
	} else if (resp->status == 500) {
		if (b->len != 0) /* only when wh_serve ran out of memory */
			abort();
	} else {
		if (resp->status != 200 && resp->status != 400 &&
		    resp->status != 413)
			abort();
		check_review(resp);
	}
}

/* ---- the input -------------------------------------------------------- */

struct request {
	char *method, *target; /* owned */
	const char *headers[2 * MAX_HEADERS + 1];
	char *lines; /* owned: the header block, split in place */
	const uint8_t *body;
	size_t body_len;
};

static char *dup_line(const uint8_t *s, size_t n)
{
	if (n > 0 && s[n - 1] == '\r')
		n--;
	return cu_strndup((const char *)s, n);
}

/* Split data into rq; false on allocation failure. */
static bool parse(const uint8_t *data, size_t size, struct request *rq)
{
	const uint8_t *nl = memchr(data, '\n', size), *sp = NULL;
	size_t line = nl != NULL ? (size_t)(nl - data) : size, i, nh = 0;
	char *p, *next;

	memset(rq, 0, sizeof(*rq));
	for (i = 0; i < line; i++)
		if (data[i] == ' ')
			sp = data + i;
	rq->method = dup_line(data, sp != NULL ? (size_t)(sp - data) : line);
	rq->target = sp != NULL
			 ? dup_line(sp + 1, line - (size_t)(sp + 1 - data))
			 : cu_strdup("");
	data += line + (nl != NULL);
	size -= line + (nl != NULL);
	/* headers end at an empty line (or "\r\n") */
	for (i = 0; i < size; i++)
		if (data[i] == '\n' &&
		    (i == 0 || data[i - 1] == '\n' ||
			(data[i - 1] == '\r' &&
			    (i == 1 || data[i - 2] == '\n'))))
			break;
	rq->lines = cu_strndup((const char *)data, i);
	if (rq->method == NULL || rq->target == NULL || rq->lines == NULL)
		return false;
	rq->body = data + (i < size ? i + 1 : size);
	rq->body_len = i < size ? size - i - 1 : 0;
	for (p = rq->lines; p != NULL && *p != '\0' && nh < MAX_HEADERS;
	     p = next) {
		char *colon, *v, *e;

		next = strchr(p, '\n');
		if (next != NULL)
			*next++ = '\0';
		e = p + strlen(p);
		if (e > p && e[-1] == '\r')
			*--e = '\0';
		colon = strchr(p, ':');
		if (colon == NULL)
			continue;
		*colon = '\0';
		for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
			;
		rq->headers[2 * nh] = p;
		rq->headers[2 * nh + 1] = v;
		nh++;
	}
	rq->headers[2 * nh] = NULL;
	return true;
}

static void request_dispose(struct request *rq)
{
	cu_free(rq->method);
	cu_free(rq->target);
	cu_free(rq->lines);
}

/* Content-Length as the server reads it: the first one, decimal. */
static bool length_over(const struct request *rq, size_t cap)
{
	const char *const *h;
	char *end;
	unsigned long long n;

	for (h = rq->headers; h[0] != NULL; h += 2)
		if (strcasecmp(h[0], "Content-Length") == 0) {
			n = strtoull(h[1], &end, 10);
			return end != h[1] && n > cap;
		}
	return false;
}

/* The decoded path of target [owned: cu_free], as microhttpd has it. */
static char *decoded_path(const char *target)
{
	char *p = cu_strndup(target, strcspn(target, "?"));

	if (p != NULL)
		MHD_http_unescape(p);
	return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char TEXT_404[] = "404 page not found\n";
	static const char TEXT_405[] = "405 method not allowed\n";
	static const char TEXT_413[] = "413 request body too large\n";
	struct world world;
	struct ctl_httpd_opts ho;
	struct ns_gate_config gate;
	struct wh_options wh;
	struct ctl_whsrv_opts wo;
	struct ctl_http_response resp;
	struct request rq;
	ctl_httpd *h = NULL;
	ctl_health *health = NULL;
	ctl_metrics *metrics = NULL;
	ctl_whsrv *whsrv = NULL;
	char label[MAX_LABEL + 1], *path = NULL;
	const char *allow;
	size_t cap, n;
	int rc;

	if (size == 0)
		return 0;
	cu_log_set_level(CU_LOG_ERROR);
	world.flags = data[0];
	cap = (world.flags & F_SMALL_CAP) ? SMALL_CAP : CTL_WHSRV_MAX_BODY;
	if (!parse(data + 1, size - 1, &rq))
		goto out;
	n = 0;
	while (n < rq.body_len && n < MAX_LABEL && rq.body[n] != '\n' &&
	       rq.body[n] != '\0')
		n++;
	memcpy(label, rq.body, n);
	label[n] = '\0';

	memset(&ho, 0, sizeof(ho));
	ho.name = "fuzz";
	ho.listen = "127.0.0.1:0";
	ho.max_body = cap;
	memset(&gate, 0, sizeof(gate));
	gate.job_enabled = true;
	gate.jobset_enabled = true;
	memset(&wh, 0, sizeof(wh));
	wh.gate = &gate;
	wh.payload = &world;
	memset(&wo, 0, sizeof(wo));
	wo.listen = "127.0.0.1:0";
	wo.cert_dir = "/nonexistent";
	wo.wh = &wh;
	wo.ready = wh_synced;
	if (ctl_httpd_new(&h, NULL, &ho, NULL) != CU_OK ||
	    ctl_health_new(&health, NULL) != CU_OK ||
	    ctl_health_add_check(health, "ledger-open", check_ok, NULL, NULL) !=
		CU_OK ||
	    ctl_health_add_check(health, "informers-synced", check_synced,
		&world, NULL) != CU_OK ||
	    ctl_health_mount(health, h, NULL) != CU_OK ||
	    ctl_metrics_new(&metrics, NULL, NULL) != CU_OK ||
	    ctl_metrics_mount(metrics, h, NULL) != CU_OK ||
	    ctl_whsrv_new(&whsrv, NULL, &wo, NULL) != CU_OK ||
	    ctl_whsrv_mount(whsrv, h, NULL) != CU_OK)
		abort(); /* the setup is fixed: it cannot fail but for memory */
	fill_metrics(metrics, label, world.flags);

	rc = ctl_httpd_dispatch(h, rq.method, rq.target, rq.headers, rq.body,
	    rq.body_len, &resp, NULL);
	if (rc != CU_OK) {
		if (rc != CU_ENOMEM || resp.status != 500)
			abort();
		goto out_resp;
	}
	if (resp.body.len > 0 &&
	    (resp.body.ptr == NULL || resp.body.ptr[resp.body.len] != '\0'))
		abort();
	if (resp.content_type == NULL)
		abort();
	switch (resp.status) {
	case 200:
	case 400:
	case 404:
	case 405:
	case 413:
	case 500:
		break;
	default:
		abort();
	}
	if ((path = decoded_path(rq.target)) == NULL)
		goto out_resp;
	allow = allow_of(path);
	if (allow == NULL) {
		if (resp.status != 404 || !body_is(&resp.body, TEXT_404))
			abort();
	} else if (!method_in(rq.method, allow)) {
		if (resp.status != 405 || !body_is(&resp.body, TEXT_405) ||
		    strcmp(resp.allow, allow) != 0)
			abort();
	} else if (length_over(&rq, cap) || rq.body_len > cap) {
		if (resp.status != 413 || !body_is(&resp.body, TEXT_413))
			abort();
	} else {
		check_handled(path, world.flags, &resp);
	}
out_resp:
	cu_buf_dispose(&resp.body);
out:
	cu_free(path);
	request_dispose(&rq);
	ctl_whsrv_free(whsrv);
	ctl_metrics_free(metrics);
	ctl_health_free(health);
	ctl_httpd_free(h);
	return 0;
}
