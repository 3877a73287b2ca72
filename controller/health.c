/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/health.c - the readiness check registry and the /healthz,
 * /livez and /readyz handlers of controller/health.h.
 */
#include <string.h>

#include "controller/health.h"

#define HEALTH_MAGIC 0x48454c54u /* "HELT" */
#define HEALTH_NAME_MAX 63

struct check {
	char *name; /* owned */
	ctl_health_check_fn fn;
	void *payload; /* borrowed */
};

struct ctl_health {
	uint32_t magic;
	struct check *checks; /* owned array, registration order */
	size_t n, cap;
};

int ctl_health_new(ctl_health **out, cu_error *err)
{
	ctl_health *h = cu_calloc(1, sizeof(*h));

	*out = NULL;
	if (h == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	h->magic = HEALTH_MAGIC;
	*out = h;
	return CU_OK;
}

void ctl_health_free(ctl_health *h)
{
	size_t i;

	if (h == NULL)
		return;
	CU_ASSERT(h->magic == HEALTH_MAGIC);
	for (i = 0; i < h->n; i++)
		cu_free(h->checks[i].name);
	cu_free(h->checks);
	h->magic = 0;
	cu_free(h);
}

static bool valid_name(const char *s)
{
	size_t i;

	for (i = 0; s[i] != '\0'; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
			(s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return false;
	return i > 0 && i <= HEALTH_NAME_MAX;
}

int ctl_health_add_check(ctl_health *h, const char *name,
    ctl_health_check_fn fn, void *payload, cu_error *err)
{
	struct check *c;
	size_t i;

	CU_ASSERT(h != NULL && h->magic == HEALTH_MAGIC);
	if (name == NULL || fn == NULL || !valid_name(name))
		return cu_error_set(err, CU_EINVAL,
		    "health check name \"%s\": want 1-%d of [a-z0-9-]",
		    name != NULL ? name : "(null)", HEALTH_NAME_MAX);
	for (i = 0; i < h->n; i++)
		if (strcmp(h->checks[i].name, name) == 0)
			return cu_error_set(err, CU_EEXIST,
			    "health check \"%s\" registered twice", name);
	if (cu_grow((void **)&h->checks, &h->cap, h->n + 1,
		sizeof(*h->checks)) != CU_OK)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	c = &h->checks[h->n];
	c->name = cu_strdup(name);
	if (c->name == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	c->fn = fn;
	c->payload = payload;
	h->n++;
	return CU_OK;
}

/* The checks' verdict into out (see ctl_health_ready); reasons shown
 * with details, else withheld (and logged). */
static bool ready(ctl_health *h, cu_buf *out, bool verbose, bool details)
{
	static struct cu_log_limit why =
	    CU_LOG_LIMIT("readyz: failed checks", 60, 3);
	cu_buf lines;
	bool ok = true;
	size_t i;
	int rc = CU_OK;

	CU_ASSERT(h != NULL && h->magic == HEALTH_MAGIC);
	cu_buf_init(&lines, 1024 * 1024);
	for (i = 0; i < h->n; i++) {
		const struct check *c = &h->checks[i];
		cu_error err;
		int crc;

		cu_error_clear(&err);
		crc = c->fn(&err, c->payload);
		if (crc == CU_OK) {
			if (rc == CU_OK)
				rc = cu_buf_addf(&lines, "[+]%s ok\n", c->name);
			continue;
		}
		ok = false;
		if (err.msg[0] == '\0')
			cu_error_set(&err, crc, "%s", cu_err_desc(crc));
		if (rc == CU_OK)
			rc = cu_buf_addf(&lines, "[-]%s failed: %s\n", c->name,
			    verbose && details ? err.msg : "reason withheld");
		/* The reason is withheld from a reply without details (as
		 * kube-apiserver does) but never lost. */
		if (!details)
			cu_log_limited(&why, CU_LOG_INFO,
			    "readyz: %s failed: %s", c->name, err.msg);
	}
	if (out != NULL) {
		if (ok && !verbose)
			rc = cu_buf_adds(out, "ok");
		else if (rc == CU_OK && (rc = cu_buf_add(out,
					     lines.ptr != NULL ? lines.ptr : "",
					     lines.len)) == CU_OK)
			rc = cu_buf_addf(
			    out, "readyz check %s\n", ok ? "passed" : "failed");
	}
	cu_buf_dispose(&lines);
	(void)rc; /* out is left freed on failure; the verdict stands */
	return ok;
}

bool ctl_health_ready(ctl_health *h, cu_buf *out, bool verbose)
{
	return ready(h, out, verbose, verbose);
}

static void serve_healthz(const struct ctl_http_request *req,
    struct ctl_http_response *resp, void *payload)
{
	(void)req;
	(void)payload;
	ctl_http_reply(resp, 200, "ok");
}

static void serve_readyz(const struct ctl_http_request *req,
    struct ctl_http_response *resp, void *payload)
{
	bool verbose = ctl_http_query(req, "verbose") != NULL;
	bool ok = ready(payload, &resp->body, verbose, false);

	resp->status = ok ? 200 : 500;
}

/* /readyz behind a gate that authenticated the caller: reasons given. */
static void serve_readyz_detailed(const struct ctl_http_request *req,
    struct ctl_http_response *resp, void *payload)
{
	bool verbose = ctl_http_query(req, "verbose") != NULL;
	bool ok = ready(payload, &resp->body, verbose, true);

	resp->status = ok ? 200 : 500;
}

int ctl_health_mount_detailed(ctl_health *h, ctl_httpd *srv, cu_error *err)
{
	return ctl_httpd_route(
	    srv, "GET", "/readyz", serve_readyz_detailed, h, err);
}

/* "/" + name, a leading '/' of name kept once. [owned] or NULL. */
static char *endpoint_path(const char *name)
{
	return cu_asprintf("/%s", name[0] == '/' ? name + 1 : name);
}

int ctl_health_mount_at(ctl_health *h, ctl_httpd *srv, const char *readiness,
    const char *liveness, cu_error *err)
{
	char *ready = NULL, *live = NULL;
	int rc;

	if (readiness == NULL || readiness[0] == '\0')
		readiness = "readyz";
	if (liveness == NULL || liveness[0] == '\0')
		liveness = "healthz";
	ready = endpoint_path(readiness);
	live = endpoint_path(liveness);
	if (ready == NULL || live == NULL) {
		rc = cu_error_set(err, CU_ENOMEM, "out of memory");
		goto out;
	}
	if (strcmp(ready, live) == 0) {
		rc = cu_error_set(err, CU_EINVAL,
		    "health: readinessEndpointName and livenessEndpointName "
		    "are both \"%s\"",
		    ready);
		goto out;
	}
	rc = ctl_httpd_route(srv, "GET", live, serve_healthz, h, err);
	/* /livez too (the kube-apiserver name), unless taken. */
	if (rc == CU_OK && strcmp(live, "/livez") != 0 &&
	    strcmp(ready, "/livez") != 0)
		rc = ctl_httpd_route(
		    srv, "GET", "/livez", serve_healthz, h, err);
	if (rc == CU_OK)
		rc = ctl_httpd_route(srv, "GET", ready, serve_readyz, h, err);
out:
	cu_free(ready);
	cu_free(live);
	return rc;
}

int ctl_health_mount(ctl_health *h, ctl_httpd *srv, cu_error *err)
{
	return ctl_health_mount_at(h, srv, "readyz", "healthz", err);
}
