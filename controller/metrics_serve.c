/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/metrics_serve.c - GET /metrics: the registry's exposition and
 * the process_* families in one answer within its cap, or a 500 that says
 * why - never an exposition cut short.
 */
#include <stdio.h>
#include <string.h>

#include "controller/metrics.h"
#include "lib/cu.h"

/* A scrape that cannot be answered whole: a 500 saying why, never part
 * of the exposition (a scraper would take a cut answer for a complete
 * one, its missing series as gone). */
static void serve_failed(
    struct ctl_http_response *resp, const ctl_metrics *m, int rc)
{
	static struct cu_log_limit lim = CU_LOG_LIMIT("metrics: scrape", 60, 1);
	char text[256];

	if (rc == CU_ETOOBIG)
		snprintf(text, sizeof(text),
		    "metrics: the exposition is over its cap of %zu bytes; "
		    "nothing was sent (fewer series would fit: "
		    "metrics.localQueueMetrics, "
		    "metrics.enableClusterQueueResources)\n",
		    ctl_metrics_max_response(m));
	else
		snprintf(text, sizeof(text), "metrics: %s\n", cu_err_desc(rc));
	cu_log_limited(&lim, CU_LOG_ERROR, "%.*s", (int)strlen(text) - 1, text);
	resp->body.max = CTL_HTTPD_MAX_RESPONSE; /* room for the reason */
	(void)ctl_http_reply(resp, 500, text);
}

static void serve_metrics(const struct ctl_http_request *req,
    struct ctl_http_response *resp, void *payload)
{
	ctl_metrics *m = payload;
	cu_error err;
	int rc;

	(void)req;
	if (resp->body.max > ctl_metrics_max_response(m))
		resp->body.max = ctl_metrics_max_response(m);
	if ((rc = ctl_metrics_render(m, &resp->body, &err)) != CU_OK ||
	    /* process_* sort after every registry family (cueue_, kueue_). */
	    (rc = ctl_proc_render(&resp->body)) != CU_OK) {
		serve_failed(resp, m, rc);
		return;
	}
	resp->content_type = CTL_METRICS_CONTENT_TYPE;
}

int ctl_metrics_mount(ctl_metrics *m, ctl_httpd *srv, cu_error *err)
{
	return ctl_httpd_route(srv, "GET", "/metrics", serve_metrics, m, err);
}
