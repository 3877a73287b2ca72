/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/httpd_route.c - the HTTP server's routes (exact paths and
 * '*' prefixes, methods, 404/405/413 decided from the request line and
 * headers), the request accessors handlers use (headers, query
 * arguments) and ctl_httpd_dispatch, which serves one request
 * in-process through the same path (see httpd.h, httpd.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "controller/httpd_int.h"

void ctl_httpd__response_init(struct ctl_http_response *resp)
{
	resp->status = 200;
	resp->content_type = CTL_HTTP_TEXT;
	cu_buf_init(&resp->body, CTL_HTTPD_MAX_RESPONSE);
	resp->allow[0] = '\0';
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
bool ctl_httpd__admit(const struct ctl_httpd *h, const char *path,
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
void ctl_httpd__respond(const struct ctl_httpd *h, const struct route *r,
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
	ctl_httpd__response_init(out);
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
	if (ctl_httpd__admit(h, path, method,
		ctl_http_header(&req, MHD_HTTP_HEADER_CONTENT_LENGTH), &r,
		out)) {
		cu_buf_init(&b, h->max_body);
		too_big =
		    body_len > 0 && cu_buf_add(&b, body, body_len) != CU_OK;
		req.body = b.ptr != NULL ? b.ptr : "";
		req.body_len = b.len;
		ctl_httpd__respond(h, r, &req, too_big, out);
		cu_buf_dispose(&b);
	}
out:
	cu_free(local.args);
	cu_free(query);
	cu_free(path);
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
