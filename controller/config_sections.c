/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/config_sections.c - a schema-checked Configuration's values,
 * section by section, with Kueue's defaults (v1beta2, and v1beta1's as
 * Kueue converts them) and the validation Kueue makes on the fields cueue
 * acts on: integrations, waitForPodsReady, leaderElection, the webhook,
 * metrics and probe endpoints, internal certificates, the client
 * connection, tls, the namespace and the managed-jobs selector.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include <jansson.h>

#include "api/labelselector.h"
#include "controller/config_int.h"
#include "controller/httpd.h"
#include "reconcile/reconcile.h"

/* ---- sections -------------------------------------------------------- */

/* "a", "b", ... : every framework name cueue takes, for an error. */
static char *supported_frameworks(void)
{
	cu_buf b;
	size_t i;
	const struct rec_fw *fw;
	int rc;

	cu_buf_init(&b, 4096);
	rc = cu_buf_adds(&b, "\"" CTL_FRAMEWORK_DEPLOYMENT "\"");
	for (i = 0; rc == CU_OK && (fw = rec_fw_at(i)) != NULL; i++)
		rc = cu_buf_addf(&b, ", \"%s\"", fw->name);
	return rc == CU_OK ? cu_buf_detach(&b, NULL) : NULL;
}

/* integrations.externalFrameworks: "Kind.version.group" each (Kueue's
 * schema.ParseKindArg), none the kind of an enabled framework nor
 * listed twice. */
static int load_external(const struct ctl_config_dec *d, const json_t *ext)
{
	struct ctl_config *c = d->c;
	struct ctl_config_path p, base = {0};
	size_t i, k;
	json_t *v;
	int rc;

	ctl_config_path_set(&base, "integrations.externalFrameworks");
	json_array_foreach(ext, i, v)
	{
		const char *name = json_string_value(v);
		const char *dot = name ? strchr(name, '.') : NULL;
		const char *dot2 = dot ? strchr(dot + 1, '.') : NULL;
		char kind[128];
		const struct rec_fw *fw;

		ctl_config_path_index(&p, &base, i);
		if (dot == NULL || dot == name || dot2 == NULL ||
		    dot2 == dot + 1 || dot2[1] == '\0' ||
		    (size_t)(dot - name) >= sizeof(kind))
			return ctl_config_fail(d, CU_EINVAL, p.look,
			    "%s: Invalid value: \"%s\": must be format, "
			    "'Kind.version.group.com'",
			    p.disp, name ? name : "");
		snprintf(kind, sizeof(kind), "%.*s", (int)(dot - name), name);
		fw = rec_fw_by_kind(dot2 + 1, kind);
		if (fw != NULL &&
		    (strlen(fw->version) != (size_t)(dot2 - dot - 1) ||
			strncmp(fw->version, dot + 1,
			    (size_t)(dot2 - dot - 1)) != 0))
			fw = NULL;
		for (k = 0; fw != NULL && k < c->integrations.nframeworks; k++)
			if (strcmp(c->integrations.frameworks[k], fw->name) ==
			    0)
				return ctl_config_fail(d, CU_EINVAL, p.look,
				    "%s: Duplicate value: \"%s\"", p.disp,
				    name);
		for (k = 0; k < c->integrations.nexternal; k++)
			if (strcmp(c->integrations.external[k], name) == 0)
				return ctl_config_fail(d, CU_EINVAL, p.look,
				    "%s: Duplicate value: \"%s\"", p.disp,
				    name);
		rc = ctl_config_push_str(d, &c->integrations.external,
		    &c->integrations.nexternal, name);
		if (rc != CU_OK)
			return rc;
	}
	return CU_OK;
}

static int load_integrations(const struct ctl_config_dec *d, const json_t *root)
{
	struct ctl_config *c = d->c;
	const json_t *in = ctl_config_jget(root, "integrations");
	json_t *fw = ctl_config_jget(in, "frameworks");
	json_t *ext = ctl_config_jget(in, "externalFrameworks");
	json_t *keys = ctl_config_jget(in, "labelKeysToCopy");
	struct ctl_config_path p, base = {0};
	size_t i, k;
	json_t *v;
	int rc;

	ctl_config_path_set(&base, "integrations.frameworks");
	if (fw == NULL || json_array_size(fw) == 0) {
		/* Kueue: an empty list takes the default too. */
		c->integrations.job = true;
		rc = ctl_config_push_str(d, &c->integrations.frameworks,
		    &c->integrations.nframeworks, CTL_FRAMEWORK_JOB);
		if (rc != CU_OK)
			return rc;
	}
	json_array_foreach(fw, i, v)
	{
		const char *name = json_string_value(v);

		ctl_config_path_index(&p, &base, i);
		for (k = 0; k < c->integrations.nframeworks; k++)
			if (strcmp(c->integrations.frameworks[k], name) == 0)
				return ctl_config_fail(d, CU_EINVAL, p.look,
				    "%s: Duplicate value: \"%s\"", p.disp,
				    name);
		if (strcmp(name, CTL_FRAMEWORK_JOB) == 0) {
			c->integrations.job = true;
		} else if (strcmp(name, CTL_FRAMEWORK_JOBSET) == 0) {
			c->integrations.jobset = true;
		} else if (rec_fw_by_name(name) != NULL) {
			/* a framework descriptor (docs/frameworks.md); the
			 * serving ones' Pods are pod groups (requires pod) */
			c->integrations.statefulset |=
			    strcmp(name, "statefulset") == 0;
			c->integrations.leaderworkerset |=
			    strcmp(name,
				"leaderworkerset.x-k8s.io/leaderworkerset") ==
			    0;
		} else if (strcmp(name, CTL_FRAMEWORK_DEPLOYMENT) == 0) {
			/* its Pods, through "pod"; its webhook labels the
			 * pod template (webhook/pods.c) */
			c->integrations.deployment = true;
		} else {
			/* Kueue's frameworks all have a descriptor: anything
			 * else is unknown. */
			char *all = supported_frameworks();

			rc = ctl_config_fail(d, CU_EINVAL, p.look,
			    "%s: Unsupported value: \"%s\": supported values: "
			    "%s",
			    p.disp, name, all ? all : "(out of memory)");
			cu_free(all);
			return rc;
		}
		rc = ctl_config_push_str(d, &c->integrations.frameworks,
		    &c->integrations.nframeworks, name);
		if (rc != CU_OK)
			return rc;
	}
	if (c->integrations.deployment || c->integrations.statefulset ||
	    c->integrations.leaderworkerset) {
		bool pod = false;

		for (k = 0; k < c->integrations.nframeworks; k++)
			pod |=
			    strcmp(c->integrations.frameworks[k], "pod") == 0;
		if (!pod)
			return ctl_config_fail(d, CU_EINVAL,
			    "integrations.frameworks",
			    "integrations.frameworks: Invalid value: \"%s\": "
			    "requires the \"pod\" framework",
			    c->integrations.deployment
				? CTL_FRAMEWORK_DEPLOYMENT
			    : c->integrations.statefulset
				? "statefulset"
				: "leaderworkerset.x-k8s.io/leaderworkerset");
	}
	if ((rc = load_external(d, ext)) != CU_OK)
		return rc;
	ctl_config_path_set(&base, "integrations.labelKeysToCopy");
	json_array_foreach(keys, i, v)
	{
		cu_error e;

		ctl_config_path_index(&p, &base, i);
		if (api_validate_label_key(json_string_value(v), p.disp, &e) !=
		    CU_OK)
			return ctl_config_fail(
			    d, CU_EINVAL, p.look, "%s", e.msg);
		rc = ctl_config_push_str(d, &c->integrations.label_keys_to_copy,
		    &c->integrations.nlabel_keys_to_copy, json_string_value(v));
		if (rc != CU_OK)
			return rc;
	}
	return CU_OK;
}

static int load_pods_ready(const struct ctl_config_dec *d, const json_t *root)
{
	struct ctl_config *c = d->c;
	const json_t *w = ctl_config_jget(root, "waitForPodsReady");
	const json_t *rq = ctl_config_jget(w, "requeuingStrategy");
	json_t *v;
	int64_t def_timeout;
	int first = CU_OK;

	if (d->version == CTL_CONFIG_VER_1) {
		/* v1beta1: only `enable: true` keeps the section through
		 * conversion; its timeout default is 5m and an unset
		 * blockAdmission converts to true. */
		c->wait_for_pods_ready.enable =
		    ctl_config_get_bool(w, "enable", false);
		def_timeout = 5 * NS_PER_M;
		c->wait_for_pods_ready.block_admission =
		    ctl_config_get_bool(w, "blockAdmission", true);
	} else {
		/* v1beta2 defaults the section to non-nil, so it is always
		 * on unless Kueue's DisableWaitForPodsReady gate is set. */
		c->wait_for_pods_ready.enable =
		    !ctl_config_get_bool(ctl_config_jget(root, "featureGates"),
			"DisableWaitForPodsReady", false);
		def_timeout = 30 * NS_PER_M;
		c->wait_for_pods_ready.block_admission =
		    ctl_config_get_bool(w, "blockAdmission", false);
	}
	if (!c->wait_for_pods_ready.enable)
		c->wait_for_pods_ready.block_admission = false;
	c->wait_for_pods_ready.timeout_ns =
	    ctl_config_get_dur(w, "timeout", def_timeout);
	c->wait_for_pods_ready.recovery_timeout_ns = ctl_config_get_dur(
	    w, "recoveryTimeout", c->wait_for_pods_ready.timeout_ns);
	v = ctl_config_jget(rq, "timestamp");
	c->wait_for_pods_ready.timestamp = CTL_REQUEUE_EVICTION;
	if (v != NULL) {
		const char *ts = json_string_value(v);

		if (strcmp(ts, "Creation") == 0)
			c->wait_for_pods_ready.timestamp = CTL_REQUEUE_CREATION;
		else if (strcmp(ts, "Eviction") != 0 && ts[0] != '\0')
			return ctl_config_fail(d, CU_EINVAL,
			    "waitForPodsReady.requeuingStrategy.timestamp",
			    "waitForPodsReady.requeuingStrategy.timestamp: "
			    "Unsupported value: \"%s\": supported values: "
			    "\"Creation\", \"Eviction\"",
			    ts);
	}
	v = ctl_config_jget(rq, "backoffLimitCount");
	c->wait_for_pods_ready.has_backoff_limit_count = v != NULL;
	c->wait_for_pods_ready.backoff_limit_count =
	    v != NULL ? (int32_t)json_integer_value(v) : 0;
	v = ctl_config_jget(rq, "backoffBaseSeconds");
	c->wait_for_pods_ready.backoff_base_seconds =
	    v != NULL && json_integer_value(v) != 0
		? (int32_t)json_integer_value(v)
		: 60;
	v = ctl_config_jget(rq, "backoffMaxSeconds");
	c->wait_for_pods_ready.backoff_max_seconds =
	    v != NULL && json_integer_value(v) != 0
		? (int32_t)json_integer_value(v)
		: 3600;
	if (!c->wait_for_pods_ready.enable)
		return CU_OK;
	if (c->wait_for_pods_ready.timeout_ns < 0)
		first = ctl_config_keep(first,
		    ctl_config_fail(d, CU_EINVAL, "waitForPodsReady.timeout",
			"waitForPodsReady.timeout: Invalid value: must be "
			"greater "
			"than or equal to 0"));
	if (c->wait_for_pods_ready.recovery_timeout_ns < 0)
		first = ctl_config_keep(
		    first, ctl_config_fail(d, CU_EINVAL,
			       "waitForPodsReady.recoveryTimeout",
			       "waitForPodsReady.recoveryTimeout: Invalid "
			       "value: must be "
			       "greater than or equal to 0"));
	if (c->wait_for_pods_ready.backoff_limit_count < 0)
		first = ctl_config_keep(first,
		    ctl_config_fail(d, CU_EINVAL,
			"waitForPodsReady.requeuingStrategy.backoffLimitCount",
			"waitForPodsReady.requeuingStrategy.backoffLimitCount: "
			"Invalid value: must be greater than or equal to 0"));
	if (c->wait_for_pods_ready.backoff_base_seconds < 0)
		first = ctl_config_keep(first,
		    ctl_config_fail(d, CU_EINVAL,
			"waitForPodsReady.requeuingStrategy.backoffBaseSeconds",
			"waitForPodsReady.requeuingStrategy.backoffBaseSeconds:"
			" "
			"Invalid value: must be greater than or equal to 0"));
	if (c->wait_for_pods_ready.backoff_max_seconds < 0)
		first = ctl_config_keep(first,
		    ctl_config_fail(d, CU_EINVAL,
			"waitForPodsReady.requeuingStrategy.backoffMaxSeconds",
			"waitForPodsReady.requeuingStrategy.backoffMaxSeconds: "
			"Invalid value: must be greater than or equal to 0"));
	return first;
}

static int load_leader_election(
    const struct ctl_config_dec *d, const json_t *root)
{
	struct ctl_config *c = d->c;
	const json_t *le = ctl_config_jget(root, "leaderElection");
	int rc;

	c->leader_election.leader_elect =
	    ctl_config_get_bool(le, "leaderElect", true);
	c->leader_election.lease_duration_ns =
	    ctl_config_get_dur(le, "leaseDuration", 15 * NS_PER_S);
	c->leader_election.renew_deadline_ns =
	    ctl_config_get_dur(le, "renewDeadline", 10 * NS_PER_S);
	c->leader_election.retry_period_ns =
	    ctl_config_get_dur(le, "retryPeriod", 2 * NS_PER_S);
	rc = ctl_config_dup_str(
	    d, &c->leader_election.resource_lock, le, "resourceLock", "leases");
	if (rc == CU_OK)
		rc = ctl_config_dup_str(d, &c->leader_election.resource_name,
		    le, "resourceName", "c1f6bfd2.kueue.x-k8s.io");
	/* Kueue leaves this empty and controller-runtime then uses the
	 * pod's namespace, which is Kueue's `namespace` default as well;
	 * spelling it out makes --check-config show where the Lease is. */
	if (rc == CU_OK)
		rc = ctl_config_dup_str(d,
		    &c->leader_election.resource_namespace, le,
		    "resourceNamespace", c->namespace);
	if (rc != CU_OK)
		return rc;
	if (strcmp(c->leader_election.resource_lock, "leases") != 0)
		return ctl_config_fail(d, CU_EUNSUPPORTED,
		    "leaderElection.resourceLock",
		    "leaderElection.resourceLock: \"%s\" is not supported by "
		    "cueue (supported: leases)",
		    c->leader_election.resource_lock);
	if (!ctl_config_is_dns1123_subdomain(c->leader_election.resource_name))
		return ctl_config_fail(d, CU_EINVAL,
		    "leaderElection.resourceName",
		    "leaderElection.resourceName: Invalid value: \"%s\": must "
		    "be a lowercase RFC 1123 subdomain",
		    c->leader_election.resource_name);
	if (!ctl_config_is_dns1123_label(c->leader_election.resource_namespace))
		return ctl_config_fail(d, CU_EINVAL,
		    "leaderElection.resourceNamespace",
		    "leaderElection.resourceNamespace: Invalid value: \"%s\": "
		    "must be a lowercase RFC 1123 label",
		    c->leader_election.resource_namespace);
	if (!c->leader_election.leader_elect)
		return CU_OK;
	/* client-go refuses these at start-up; say so now, with a line. */
	if (c->leader_election.lease_duration_ns <=
	    c->leader_election.renew_deadline_ns)
		return ctl_config_fail(d, CU_EINVAL,
		    "leaderElection.leaseDuration",
		    "leaderElection.leaseDuration: Invalid value: must be "
		    "greater than renewDeadline");
	if (c->leader_election.renew_deadline_ns <= 0 ||
	    c->leader_election.retry_period_ns <= 0 ||
	    (double)c->leader_election.renew_deadline_ns <=
		1.2 * (double)c->leader_election.retry_period_ns)
		return ctl_config_fail(d, CU_EINVAL,
		    "leaderElection.renewDeadline",
		    "leaderElection.renewDeadline: Invalid value: must be "
		    "greater than 1.2 x retryPeriod (and both positive)");
	return CU_OK;
}

static int load_endpoints(const struct ctl_config_dec *d, const json_t *root)
{
	struct ctl_config *c = d->c;
	const json_t *wh = ctl_config_jget(root, "webhook");
	const json_t *m = ctl_config_jget(root, "metrics");
	const json_t *h = ctl_config_jget(root, "health");
	const json_t *lqm = ctl_config_jget(m, "localQueueMetrics");
	json_t *v;
	int rc, first = CU_OK, web = CU_OK;

	v = ctl_config_jget(wh, "port");
	c->webhook.port = v != NULL ? (int)json_integer_value(v) : 9443;
	if (v != NULL &&
	    (json_integer_value(v) < 1 || json_integer_value(v) > 65535))
		web = ctl_config_fail(d, CU_EINVAL, "webhook.port",
		    "webhook.port: Invalid value: %" JSON_INTEGER_FORMAT
		    ": must be between 1 and 65535, inclusive",
		    json_integer_value(v));
	rc = ctl_config_dup_str(d, &c->webhook.host, wh, "host", "");
	if (rc == CU_OK)
		rc = ctl_config_dup_str(d, &c->webhook.cert_dir, wh, "certDir",
		    "/tmp/k8s-webhook-server/serving-certs");
	if (rc == CU_OK)
		rc = ctl_config_dup_str(
		    d, &c->metrics.bind_address, m, "bindAddress", ":8443");
	if (rc == CU_OK)
		rc = ctl_config_dup_str(d, &c->health.probe_bind_address, h,
		    "healthProbeBindAddress", ":8081");
	/* controller-runtime's defaults for the probe paths. */
	if (rc == CU_OK)
		rc = ctl_config_dup_str(d, &c->health.readiness_endpoint, h,
		    "readinessEndpointName", "readyz");
	if (rc == CU_OK)
		rc = ctl_config_dup_str(d, &c->health.liveness_endpoint, h,
		    "livenessEndpointName", "healthz");
	if (rc != CU_OK)
		return rc;
	if (!ctl_config_valid_bind_address(c->metrics.bind_address))
		first = ctl_config_fail(d, CU_EINVAL, "metrics.bindAddress",
		    "metrics.bindAddress: Invalid value: \"%s\": must be "
		    "[host]:port with a port in 0-65535, or \"0\" to disable",
		    c->metrics.bind_address);
	if (!ctl_config_valid_bind_address(c->health.probe_bind_address))
		first = ctl_config_keep(first,
		    ctl_config_fail(d, CU_EINVAL,
			"health.healthProbeBindAddress",
			"health.healthProbeBindAddress: Invalid value: \"%s\": "
			"must be [host]:port with a port in 0-65535, or \"0\" "
			"to "
			"disable",
			c->health.probe_bind_address));
	c->metrics.enable_cluster_queue_resources =
	    ctl_config_get_bool(m, "enableClusterQueueResources", false);
	v = ctl_config_jget(root, "featureGates");
	c->metrics.cohorts = ctl_config_get_bool(v, "MetricsForCohorts", true);
	c->metrics.creation_latency =
	    ctl_config_get_bool(v, "MetricForWorkloadCreationLatency", true);
	c->metrics.unadmitted =
	    ctl_config_get_bool(v, "UnadmittedWorkloadsObservability", true);
	c->metrics.scheduling_hashes =
	    ctl_config_get_bool(v, "SchedulingEquivalenceHashing", true);
	c->metrics.recompute_overlap = ctl_config_get_bool(
	    v, "RecomputeAssignmentUponPreemptionTargetsOverlap", true);
	c->metrics.local_queue_metrics =
	    lqm != NULL ? ctl_config_get_bool(lqm, "enable", false) : true;
	v = ctl_config_jget(lqm, "localQueueSelector");
	if (v != NULL) {
		rc = ctl_config_decode_selector(d,
		    &c->metrics.local_queue_selector, v,
		    "metrics.localQueueMetrics.localQueueSelector");
		if (rc != CU_OK)
			return rc;
		c->metrics.has_local_queue_selector = true;
	}
	return web != CU_OK ? web : first;
}

static int load_cert_and_client(
    const struct ctl_config_dec *d, const json_t *root)
{
	struct ctl_config *c = d->c;
	const json_t *ic = ctl_config_jget(root, "internalCertManagement");
	const json_t *cc = ctl_config_jget(root, "clientConnection");
	json_t *v;
	int rc;

	c->internal_cert.enable = ctl_config_get_bool(ic, "enable", true);
	rc = ctl_config_dup_str(d, &c->internal_cert.webhook_service_name, ic,
	    "webhookServiceName",
	    c->internal_cert.enable ? "kueue-webhook-service" : NULL);
	if (rc == CU_OK)
		rc =
		    ctl_config_dup_str(d, &c->internal_cert.webhook_secret_name,
			ic, "webhookSecretName",
			c->internal_cert.enable ? "kueue-webhook-server-cert"
						: NULL);
	if (rc != CU_OK)
		return rc;
	if (c->internal_cert.enable &&
	    !ctl_config_is_dns1035_label(c->internal_cert.webhook_service_name))
		return ctl_config_fail(d, CU_EINVAL,
		    "internalCertManagement.webhookServiceName",
		    "internalCertManagement.webhookServiceName: Invalid value: "
		    "\"%s\": must be a lowercase RFC 1035 label",
		    c->internal_cert.webhook_service_name);
	if (c->internal_cert.enable &&
	    !ctl_config_is_dns1123_subdomain(
		c->internal_cert.webhook_secret_name))
		return ctl_config_fail(d, CU_EINVAL,
		    "internalCertManagement.webhookSecretName",
		    "internalCertManagement.webhookSecretName: Invalid value: "
		    "\"%s\": must be a lowercase RFC 1123 subdomain",
		    c->internal_cert.webhook_secret_name);

	v = ctl_config_jget(
	    ctl_config_jget(root, "controller"), "cacheSyncTimeout");
	c->controller.cache_sync_timeout_ns =
	    v != NULL && json_integer_value(v) != 0 ? json_integer_value(v)
						    : 120 * CU_NS_PER_S;
	v = ctl_config_jget(cc, "qps");
	c->client_connection.qps = v != NULL ? json_number_value(v) : 300.0;
	v = ctl_config_jget(cc, "burst");
	c->client_connection.burst =
	    v != NULL ? (int32_t)json_integer_value(v) : 500;
	if (!(c->client_connection.qps > 0) ||
	    !isfinite(c->client_connection.qps))
		return ctl_config_fail(d, CU_EINVAL, "clientConnection.qps",
		    "clientConnection.qps: Invalid value: %g: must be greater "
		    "than 0",
		    c->client_connection.qps);
	if ((double)c->client_connection.burst < c->client_connection.qps)
		return ctl_config_fail(d, CU_EINVAL, "clientConnection.burst",
		    "clientConnection.burst: Invalid value: %" PRId32
		    ": must be greater than or equal to qps (%g)",
		    c->client_connection.burst, c->client_connection.qps);
	return CU_OK;
}

/* tls.curvePreferences: Go's tls.CurveID numbers, in preference order,
 * as GnuTLS groups appended to the priorities (the webhook, metrics and
 * visibility servers offer only those, server order first). An ID Go
 * does not know is refused as Kueue refuses it; the hybrid post-quantum
 * ones Go knows but this GnuTLS lacks are refused too, naming why. */
static int load_curves(const struct ctl_config_dec *d, const json_t *curves)
{
	static const struct {
		json_int_t id;
		const char *group; /* NULL: Go knows it, GnuTLS does not */
	} known[] = {
	    {23, "SECP256R1"}, {24, "SECP384R1"}, {25, "SECP521R1"},
	    {29, "X25519"}, {4587, NULL}, /* SecP256r1MLKEM768 */
	    {4588, NULL},		  /* X25519MLKEM768 */
	    {4589, NULL},		  /* SecP384r1MLKEM1024 */
	};
	struct ctl_config_path p, base = {0};
	char *prio;
	cu_buf groups;
	size_t i, k;
	json_t *v;
	int first = CU_OK;

	if (json_array_size(curves) == 0)
		return CU_OK;
	ctl_config_path_set(&base, "tls.curvePreferences");
	cu_buf_init(&groups, 4096);
	if (cu_buf_adds(&groups, ":-GROUP-ALL") != CU_OK)
		goto nomem;
	json_array_foreach(curves, i, v)
	{
		json_int_t id = json_integer_value(v);

		ctl_config_path_index(&p, &base, i);
		for (k = 0; k < sizeof(known) / sizeof(known[0]); k++)
			if (known[k].id == id)
				break;
		if (k == sizeof(known) / sizeof(known[0]) ||
		    known[k].group == NULL) {
			first = ctl_config_keep(first,
			    ctl_config_fail(d, CU_EINVAL, p.look,
				"%s: Invalid value: %" JSON_INTEGER_FORMAT
				": %s",
				p.disp, id,
				k == sizeof(known) / sizeof(known[0])
				    ? "unsupported curve ID (Go's "
				      "tls.CurveID: 23 P-256, 24 P-384, 25 "
				      "P-521, 29 X25519)"
				    : "a post-quantum hybrid group this "
				      "build's TLS library (GnuTLS) does not "
				      "offer"));
			continue;
		}
		if (cu_buf_addf(&groups, ":+GROUP-%s", known[k].group) != CU_OK)
			goto nomem;
	}
	if (first != CU_OK) {
		cu_buf_dispose(&groups);
		return first;
	}
	prio = cu_asprintf("%s%s",
	    d->c->tls.priorities != NULL ? d->c->tls.priorities
					 : CTL_HTTPD_TLS_PRIORITIES,
	    groups.ptr);
	cu_buf_dispose(&groups);
	if (prio == NULL)
		return cu_error_set(d->err, CU_ENOMEM, "out of memory");
	cu_free(d->c->tls.priorities);
	d->c->tls.priorities = prio;
	return CU_OK;
nomem:
	cu_buf_dispose(&groups);
	return cu_error_set(d->err, CU_ENOMEM, "out of memory");
}

/* tls: minVersion and cipherSuites become the webhook server's GnuTLS
 * priorities; an unknown or insecure value is refused, naming the field;
 * curvePreferences restricts and orders the key-exchange groups. */
static int load_tls(const struct ctl_config_dec *d, const json_t *root)
{
	const json_t *tls = ctl_config_jget(root, "tls");
	const json_t *suites = ctl_config_jget(tls, "cipherSuites");
	const char **names = NULL;
	size_t i, n = json_array_size(suites);
	cu_error e;
	int rc;

	if (tls == NULL)
		return CU_OK;
	if (n > 0 && (names = cu_calloc(n, sizeof(*names))) == NULL)
		return cu_error_set(d->err, CU_ENOMEM, "out of memory");
	for (i = 0; i < n; i++)
		names[i] = json_string_value(json_array_get(suites, i));
	rc = ctl_httpd_tls_priorities(
	    json_string_value(ctl_config_jget(tls, "minVersion")), names, n,
	    &d->c->tls.priorities, &e);
	cu_free(names);
	if (rc == CU_EINVAL)
		return ctl_config_fail(d, rc,
		    strncmp(e.msg, "tls.minVersion", 14) == 0
			? "tls.minVersion"
			: "tls.cipherSuites",
		    "%s", e.msg);
	if (rc != CU_OK)
		return cu_error_set(d->err, rc, "%s", e.msg);
	return load_curves(d, ctl_config_jget(tls, "curvePreferences"));
}

/* visibilityServer and the VisibilityOnDemand gate, validated as Kueue
 * validates them. */
static int load_visibility(const struct ctl_config_dec *d, const json_t *root)
{
	struct ctl_config *c = d->c;
	const json_t *vs = ctl_config_jget(root, "visibilityServer");
	json_t *v = ctl_config_jget(vs, "bindPort");
	unsigned char ip[16];
	int rc;

	c->visibility.enable = ctl_config_get_bool(
	    ctl_config_jget(root, "featureGates"), "VisibilityOnDemand", true);
	c->visibility.bind_port =
	    v != NULL ? (int)json_integer_value(v) : CTL_CONFIG_VISIBILITY_PORT;
	if (v != NULL &&
	    (json_integer_value(v) < 1 || json_integer_value(v) > 65535))
		return ctl_config_fail(d, CU_EINVAL,
		    "visibilityServer.bindPort",
		    "visibilityServer.bindPort: Invalid value: "
		    "%" JSON_INTEGER_FORMAT
		    ": must be a valid port number (1-65535)",
		    json_integer_value(v));
	rc = ctl_config_dup_str(
	    d, &c->visibility.bind_address, vs, "bindAddress", NULL);
	if (rc != CU_OK)
		return rc;
	if (c->visibility.bind_address != NULL &&
	    inet_pton(AF_INET, c->visibility.bind_address, ip) != 1 &&
	    inet_pton(AF_INET6, c->visibility.bind_address, ip) != 1)
		return ctl_config_fail(d, CU_EINVAL,
		    "visibilityServer.bindAddress",
		    "visibilityServer.bindAddress: Invalid value: \"%s\": "
		    "must be a valid IP address",
		    c->visibility.bind_address);
	return CU_OK;
}

/* Keep the first error of the sections in *first; every section runs
 * (one run reports all errors) unless memory runs out. */
#define STEP(call)                                                             \
	do {                                                                   \
		int r_ = (call);                                               \
		if (r_ == CU_ENOMEM)                                           \
			return r_;                                             \
		if (r_ != CU_OK && first == CU_OK)                             \
			first = r_;                                            \
	} while (0)

int ctl_config_load_root(const struct ctl_config_dec *d, const json_t *root)
{
	struct ctl_config *c = d->c;
	json_t *v;
	int rc, first = CU_OK;

	rc = ctl_config_dup_str(d, &c->namespace, root, "namespace", NULL);
	if (rc != CU_OK)
		return rc;
	if (c->namespace == NULL || c->namespace[0] == '\0') {
		cu_free(c->namespace);
		c->namespace = ctl_config_operator_namespace(NULL);
		if (c->namespace == NULL)
			return cu_error_set(d->err, CU_ENOMEM, "out of memory");
	}
	if (!ctl_config_is_dns1123_label(c->namespace))
		STEP(ctl_config_fail(d, CU_EINVAL, "namespace",
		    "namespace: Invalid value: \"%s\": must be a lowercase RFC "
		    "1123 label",
		    c->namespace));
	STEP(load_endpoints(d, root));
	STEP(load_leader_election(d, root));

	c->manage_jobs_without_queue_name =
	    ctl_config_get_bool(root, "manageJobsWithoutQueueName", false);
	v = ctl_config_jget(root, "featureGates");
	c->tas_gates.profile_mixed =
	    ctl_config_get_bool(v, "TASProfileMixed", true);
	c->tas_gates.node_replacement =
	    ctl_config_get_bool(v, "TASFailedNodeReplacement", true);
	c->tas_gates.on_pod_termination =
	    ctl_config_get_bool(v, "TASReplaceNodeOnPodTermination", true);
	c->tas_gates.on_node_taints =
	    ctl_config_get_bool(v, "TASReplaceNodeOnNodeTaints", true);
	c->tas_gates.not_ready_fixed_time = ctl_config_get_bool(
	    v, "TASReplaceNodeDueToNotReadyOverFixedTime", false);
	c->tas_gates.skip_pod_owned = ctl_config_get_bool(
	    v, "SkipReassignmentForPodOwnedWorkloads", true);
	c->job_gates.admission_gated_by =
	    ctl_config_get_bool(v, "AdmissionGatedBy", true);
	c->job_gates.elastic_jobs =
	    ctl_config_get_bool(v, "ElasticJobsViaWorkloadSlices", true);
	c->job_gates.wpc_defaulting =
	    ctl_config_get_bool(v, "WorkloadPriorityClassDefaulting", true);
	c->job_gates.finish_orphaned =
	    ctl_config_get_bool(v, "FinishOrphanedWorkloads", true);
	v = ctl_config_jget(root, "managedJobsNamespaceSelector");
	if (v != NULL) {
		STEP(ctl_config_decode_selector(d, &c->managed_jobs_ns_selector,
		    v, "managedJobsNamespaceSelector"));
	} else {
		/* Kueue's default: every namespace but kube-system and
		 * its own. */
		const char *vals[2] = {"kube-system", c->namespace};

		api_selector_init(&c->managed_jobs_ns_selector);
		rc = api_selector_add(&c->managed_jobs_ns_selector,
		    "kubernetes.io/metadata.name", API_SEL_OP_NOT_IN, vals, 2,
		    "managedJobsNamespaceSelector", d->err);
		if (rc != CU_OK)
			return rc; /* memory: the default cannot be wrong */
	}
	STEP(load_cert_and_client(d, root));
	STEP(load_pods_ready(d, root));
	STEP(load_integrations(d, root));
	STEP(load_tls(d, root));
	STEP(load_visibility(d, root));
	STEP(ctl_config_load_dra(d, root));
	STEP(ctl_config_load_labels(d, root));
	STEP(ctl_config_load_resources(d, root));
	STEP(ctl_config_load_retention(d, root));
	STEP(ctl_config_load_mk(d, root));
	STEP(ctl_config_warn_ignored(d, root));
	return first;
}
