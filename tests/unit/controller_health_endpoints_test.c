/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/controller_health_endpoints_test.c - the probes are served at
 * the Configuration's health.readinessEndpointName / livenessEndpointName
 * (controller/health.h ctl_health_mount_at), through ctl_httpd_dispatch.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "controller/health.h"
#include "controller/httpd.h"

static int check_fail(cu_error *err, void *payload)
{
	(void)payload;
	return cu_error_set(err, CU_EAGAIN, "not yet");
}

static int status_of(ctl_httpd *h, const char *target)
{
	struct ctl_http_response r;
	int st;

	cr_assert_eq(
	    ctl_httpd_dispatch(h, "GET", target, NULL, NULL, 0, &r, NULL),
	    CU_OK);
	st = r.status;
	cu_buf_dispose(&r.body);
	return st;
}

static void setup(ctl_httpd **h, ctl_health **hl)
{
	struct ctl_httpd_opts o;

	memset(&o, 0, sizeof(o));
	o.name = "health";
	o.listen = "127.0.0.1:0";
	cr_assert_eq(ctl_httpd_new(h, NULL, &o, NULL), CU_OK);
	cr_assert_eq(ctl_health_new(hl, NULL), CU_OK);
	cr_assert_eq(ctl_health_add_check(
			 *hl, "informers-synced", check_fail, NULL, NULL),
	    CU_OK);
}

Test(ctl_health, configured_endpoint_names_are_served)
{
	ctl_httpd *h;
	ctl_health *hl;
	cu_error err;

	setup(&h, &hl);
	cr_assert_eq(ctl_health_mount_at(hl, h, "ready", "/alive", &err), CU_OK,
	    "%s", err.msg);
	cr_assert_eq(status_of(h, "/alive"), 200);
	cr_assert_eq(status_of(h, "/livez"), 200);
	cr_assert_eq(status_of(h, "/ready"), 500); /* the check fails */
	cr_assert_eq(status_of(h, "/ready?verbose"), 500);
	/* The defaults are not served any more: the names replaced them. */
	cr_assert_eq(status_of(h, "/readyz"), 404);
	cr_assert_eq(status_of(h, "/healthz"), 404);
	ctl_httpd_free(h);
	ctl_health_free(hl);
}

Test(ctl_health, defaults_and_clashes)
{
	ctl_httpd *h;
	ctl_health *hl;
	cu_error err;

	setup(&h, &hl);
	cr_assert_eq(ctl_health_mount_at(hl, h, NULL, "", &err), CU_OK);
	cr_assert_eq(status_of(h, "/healthz"), 200);
	cr_assert_eq(status_of(h, "/livez"), 200);
	cr_assert_eq(status_of(h, "/readyz"), 500);
	ctl_httpd_free(h);
	ctl_health_free(hl);

	setup(&h, &hl);
	cr_assert_eq(
	    ctl_health_mount_at(hl, h, "probe", "/probe", &err), CU_EINVAL);
	cr_assert(strstr(err.msg, "\"/probe\"") != NULL, "%s", err.msg);
	ctl_httpd_free(h);
	ctl_health_free(hl);
}
