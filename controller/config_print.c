/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/config_print.c - the effective configuration printed back
 * as Kueue's v1beta2 Configuration YAML, in the field order of Kueue's Go
 * type, for `cueue-controller --check-config`: a JSON tree built from
 * struct ctl_config, emitted with libyaml (strings that would load back
 * as something else quoted). For `--convert-config`, the same tree less
 * what equals v1beta2's defaults, kept only where loading it back gives
 * the same configuration.
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <yaml.h>

#include "api/labelselector.h"
#include "controller/config_int.h"

/* ---- printing -------------------------------------------------------- */

struct emit {
	yaml_emitter_t em;
	cu_buf *out;
	int rc; /* first output failure */
};

static int emit_write(void *data, unsigned char *buffer, size_t size)
{
	struct emit *e = data;
	int rc = cu_buf_add(e->out, buffer, size);

	if (rc != CU_OK) {
		e->rc = rc;
		return 0;
	}
	return 1;
}

/* True when a plain scalar s would load back as something other than
 * the string s (YAML 1.1 booleans, nulls, numbers), so it must be
 * quoted. */
static bool needs_quotes(const char *s)
{
	static const char *const words[] = {
	    "y", "yes", "n", "no", "true", "false", "on", "off", "null", "~"};
	char low[8];
	size_t i, n = strlen(s);
	char *end;

	if (n == 0)
		return true;
	if (n < sizeof(low)) {
		for (i = 0; i <= n; i++)
			low[i] = (char)tolower((unsigned char)s[i]);
		for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
			if (strcmp(low, words[i]) == 0)
				return true;
	}
	if (isdigit((unsigned char)s[0]) || s[0] == '-' || s[0] == '+' ||
	    s[0] == '.') {
		errno = 0;
		(void)strtod(s, &end);
		if (*end == '\0')
			return true;
		/* 0x.., 0o.., 1_000, sexagesimal: err on the quoted side. */
		return strpbrk(s, "xXoO_:") != NULL &&
		       isdigit((unsigned char)s[s[0] == '-' || s[0] == '+']);
	}
	return false;
}

static int ev_scalar(struct emit *e, const char *s, bool is_string)
{
	yaml_event_t ev;
	yaml_scalar_style_t style = YAML_ANY_SCALAR_STYLE;

	if (is_string && needs_quotes(s))
		style = YAML_SINGLE_QUOTED_SCALAR_STYLE;
	if (!yaml_scalar_event_initialize(&ev, NULL, NULL,
		(yaml_char_t *)(uintptr_t)s, (int)strlen(s), 1, 1, style) ||
	    !yaml_emitter_emit(&e->em, &ev))
		return e->rc != CU_OK ? e->rc : CU_ENOMEM;
	return CU_OK;
}

static int ev_simple(struct emit *e, yaml_event_type_t type, bool flow)
{
	yaml_event_t ev;
	int ok = 0;

	switch (type) {
	case YAML_MAPPING_START_EVENT:
		ok = yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
		    flow ? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE);
		break;
	case YAML_MAPPING_END_EVENT:
		ok = yaml_mapping_end_event_initialize(&ev);
		break;
	case YAML_SEQUENCE_START_EVENT:
		ok = yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
		    flow ? YAML_FLOW_SEQUENCE_STYLE
			 : YAML_BLOCK_SEQUENCE_STYLE);
		break;
	case YAML_SEQUENCE_END_EVENT:
		ok = yaml_sequence_end_event_initialize(&ev);
		break;
	case YAML_STREAM_START_EVENT:
		ok =
		    yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
		break;
	case YAML_STREAM_END_EVENT:
		ok = yaml_stream_end_event_initialize(&ev);
		break;
	case YAML_DOCUMENT_START_EVENT:
		ok = yaml_document_start_event_initialize(
		    &ev, NULL, NULL, NULL, 1);
		break;
	case YAML_DOCUMENT_END_EVENT:
		ok = yaml_document_end_event_initialize(&ev, 1);
		break;
	default:
		break;
	}
	if (!ok || !yaml_emitter_emit(&e->em, &ev))
		return e->rc != CU_OK ? e->rc : CU_ENOMEM;
	return CU_OK;
}

/* Emit any JSON value as YAML; objects keep jansson's insertion order. */
static int emit_json(struct emit *e, const json_t *j)
{
	char num[64];
	int rc;

	switch (json_typeof(j)) {
	case JSON_OBJECT: {
		const char *key;
		json_t *v;

		rc = ev_simple(
		    e, YAML_MAPPING_START_EVENT, json_object_size(j) == 0);
		json_object_foreach((json_t *)j, key, v)
		{
			if (rc == CU_OK)
				rc = ev_scalar(e, key, true);
			if (rc == CU_OK)
				rc = emit_json(e, v);
		}
		return rc == CU_OK ? ev_simple(e, YAML_MAPPING_END_EVENT, false)
				   : rc;
	}
	case JSON_ARRAY: {
		size_t i;
		json_t *v;

		rc = ev_simple(
		    e, YAML_SEQUENCE_START_EVENT, json_array_size(j) == 0);
		json_array_foreach(j, i, v)
		{
			if (rc == CU_OK)
				rc = emit_json(e, v);
		}
		return rc == CU_OK
			   ? ev_simple(e, YAML_SEQUENCE_END_EVENT, false)
			   : rc;
	}
	case JSON_STRING:
		return ev_scalar(e, json_string_value(j), true);
	case JSON_INTEGER:
		snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
		    json_integer_value(j));
		return ev_scalar(e, num, false);
	case JSON_REAL:
		snprintf(num, sizeof(num), "%.9g", json_real_value(j));
		return ev_scalar(e, num, false);
	case JSON_TRUE:
		return ev_scalar(e, "true", false);
	case JSON_FALSE:
		return ev_scalar(e, "false", false);
	case JSON_NULL:
	default:
		return ev_scalar(e, "null", false);
	}
}

static json_t *jdur(int64_t ns)
{
	char s[64];

	ctl_config_format_duration(ns, s, sizeof(s));
	return json_string(s);
}

static json_t *jstrv(char *const *v, size_t n)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a != NULL && i < n; i++)
		if (json_array_append_new(a, json_string(v[i])) != 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/* metrics.localQueueMetrics into *out (NULL when out of memory); an
 * error only from encoding the selector. */
static int lq_metrics_json(
    const struct ctl_config *c, json_t **out, cu_error *err)
{
	json_t *lqsel = NULL, *lqm;
	int rc;

	*out = NULL;
	if (c->metrics.has_local_queue_selector) {
		rc = api_label_selector_encode(
		    &lqsel, &c->metrics.local_queue_selector, err);
		if (rc != CU_OK)
			return rc;
	}
	lqm = json_pack("{s:b}", "enable", c->metrics.local_queue_metrics);
	if (lqm != NULL && lqsel != NULL &&
	    json_object_set(lqm, "localQueueSelector", lqsel) != 0) {
		json_decref(lqm);
		lqm = NULL;
	}
	json_decref(lqsel);
	*out = lqm;
	return CU_OK;
}

/* waitForPodsReady.requeuingStrategy, or NULL when out of memory. */
static json_t *requeuing_json(const struct ctl_config *c)
{
	json_t *rq = json_pack("{s:s, s:i, s:i}", "timestamp",
	    c->wait_for_pods_ready.timestamp == CTL_REQUEUE_CREATION
		? "Creation"
		: "Eviction",
	    "backoffBaseSeconds",
	    (int)c->wait_for_pods_ready.backoff_base_seconds,
	    "backoffMaxSeconds",
	    (int)c->wait_for_pods_ready.backoff_max_seconds);

	if (rq != NULL && c->wait_for_pods_ready.has_backoff_limit_count &&
	    json_object_set_new(rq, "backoffLimitCount",
		json_integer(c->wait_for_pods_ready.backoff_limit_count)) !=
		0) {
		json_decref(rq);
		rq = NULL;
	}
	return rq;
}

/* internalCertManagement, or NULL when out of memory. */
static json_t *cert_json(const struct ctl_config *c)
{
	json_t *ic = json_pack("{s:b}", "enable", c->internal_cert.enable);

	if (ic != NULL && c->internal_cert.webhook_service_name != NULL &&
	    json_object_set_new(ic, "webhookServiceName",
		json_string(c->internal_cert.webhook_service_name)) != 0) {
		json_decref(ic);
		ic = NULL;
	}
	if (ic != NULL && c->internal_cert.webhook_secret_name != NULL &&
	    json_object_set_new(ic, "webhookSecretName",
		json_string(c->internal_cert.webhook_secret_name)) != 0) {
		json_decref(ic);
		ic = NULL;
	}
	return ic;
}

/* The fields up to internalCertManagement; sel, lqm and ic borrowed.
 * NULL when out of memory. */
static json_t *head_json(
    const struct ctl_config *c, json_t *sel, json_t *lqm, json_t *ic)
{
	return json_pack("{s:s, s:s, s:s,"
			 " s:{s:i, s:s, s:s},"
			 " s:{s:b, s:o, s:o, s:o, s:s, s:s, s:s},"
			 " s:{s:s, s:b, s:O},"
			 " s:{s:s, s:s, s:s},"
			 " s:b, s:O, s:O}",
	    "apiVersion", CTL_CONFIG_V1BETA2, "kind", "Configuration",
	    "namespace", c->namespace, "webhook", "port", c->webhook.port,
	    "host", c->webhook.host, "certDir", c->webhook.cert_dir,
	    "leaderElection", "leaderElect", c->leader_election.leader_elect,
	    "leaseDuration", jdur(c->leader_election.lease_duration_ns),
	    "renewDeadline", jdur(c->leader_election.renew_deadline_ns),
	    "retryPeriod", jdur(c->leader_election.retry_period_ns),
	    "resourceLock", c->leader_election.resource_lock, "resourceName",
	    c->leader_election.resource_name, "resourceNamespace",
	    c->leader_election.resource_namespace, "metrics", "bindAddress",
	    c->metrics.bind_address, "enableClusterQueueResources",
	    c->metrics.enable_cluster_queue_resources, "localQueueMetrics", lqm,
	    "health", "healthProbeBindAddress", c->health.probe_bind_address,
	    "readinessEndpointName", c->health.readiness_endpoint,
	    "livenessEndpointName", c->health.liveness_endpoint,
	    "manageJobsWithoutQueueName", c->manage_jobs_without_queue_name,
	    "managedJobsNamespaceSelector", sel, "internalCertManagement", ic);
}

/* waitForPodsReady (rq borrowed), or the gate that turns it off. */
static int pods_ready_json(json_t *root, const struct ctl_config *c, json_t *rq)
{
	if (c->wait_for_pods_ready.enable) {
		json_t *w = json_pack("{s:o, s:b, s:O, s:o}", "timeout",
		    jdur(c->wait_for_pods_ready.timeout_ns), "blockAdmission",
		    c->wait_for_pods_ready.block_admission, "requeuingStrategy",
		    rq, "recoveryTimeout",
		    jdur(c->wait_for_pods_ready.recovery_timeout_ns));

		if (w == NULL ||
		    json_object_set_new(root, "waitForPodsReady", w))
			return -1;
	} else if (json_object_set_new(root, "featureGates",
		       json_pack("{s:b}", "DisableWaitForPodsReady", 1)) != 0) {
		/* The only v1beta2 spelling of "off" (a v1beta1 file without
		 * waitForPodsReady.enable). */
		return -1;
	}
	return 0;
}

/* The gates cueue acts on, when not at Kueue's default. */
static int gates_json(json_t *root, const struct ctl_config *c)
{
	const struct {
		const char *name;
		bool on, def;
	} gates[] = {
	    {"MetricsForCohorts", c->metrics.cohorts, true},
	    {"MetricForWorkloadCreationLatency", c->metrics.creation_latency,
		true},
	    {"UnadmittedWorkloadsObservability", c->metrics.unadmitted, true},
	    {"TASProfileMixed", c->tas_gates.profile_mixed, true},
	    {"TASFailedNodeReplacement", c->tas_gates.node_replacement, true},
	    {"TASReplaceNodeOnPodTermination", c->tas_gates.on_pod_termination,
		true},
	    {"TASReplaceNodeOnNodeTaints", c->tas_gates.on_node_taints, true},
	    {"TASReplaceNodeDueToNotReadyOverFixedTime",
		c->tas_gates.not_ready_fixed_time, false},
	    {"SkipReassignmentForPodOwnedWorkloads",
		c->tas_gates.skip_pod_owned, true},
	    {"VisibilityOnDemand", c->visibility.enable, true},
	    {"AdmissionGatedBy", c->job_gates.admission_gated_by, true},
	    {"ElasticJobsViaWorkloadSlices", c->job_gates.elastic_jobs, true},
	    {"WorkloadPriorityClassDefaulting", c->job_gates.wpc_defaulting,
		true},
	    {"FinishOrphanedWorkloads", c->job_gates.finish_orphaned, true},
	    {"CustomMetricLabels", c->metrics.custom_enable, false},
	    {"SchedulingEquivalenceHashing", c->metrics.scheduling_hashes,
		true},
	    {"RecomputeAssignmentUponPreemptionTargetsOverlap",
		c->metrics.recompute_overlap, true},
	    {"KueueDRAIntegration", c->dra.enabled, true},
	    {"KueueDRAIntegrationExtendedResource", c->dra.extended, true},
	    {"KueueDRAIntegrationPartitionableDevices", c->dra.partitionable,
		true},
	    {"KueueDRAIntegrationConsumableCapacity", c->dra.consumable, false},
	    {"KueueDRARejectWorkloadsWhenDRADisabled", c->dra.reject_disabled,
		true},
	};
	json_t *fg = json_object_get(root, "featureGates");
	size_t i;

	for (i = 0; i < sizeof(gates) / sizeof(gates[0]); i++) {
		if (gates[i].on == gates[i].def)
			continue;
		if (fg == NULL) {
			fg = json_object();
			if (fg == NULL ||
			    json_object_set_new(root, "featureGates", fg))
				return -1;
		}
		if (json_object_set_new(
			fg, gates[i].name, json_boolean(gates[i].on)) != 0)
			return -1;
	}
	return 0;
}

/* visibilityServer, clientConnection and integrations. */
static int servers_json(json_t *root, const struct ctl_config *c)
{
	json_t *in;

	{
		json_t *vs = json_pack(
		    "{s:i}", "bindPort", (json_int_t)c->visibility.bind_port);

		if (vs != NULL && c->visibility.bind_address != NULL)
			json_object_set_new(vs, "bindAddress",
			    json_string(c->visibility.bind_address));
		if (vs == NULL ||
		    json_object_set_new(root, "visibilityServer", vs) != 0)
			return -1;
	}
	if (json_object_set_new(root, "clientConnection",
		json_pack("{s:f, s:i}", "qps", c->client_connection.qps,
		    "burst", (int)c->client_connection.burst)) != 0)
		return -1;
	in = json_pack("{s:o}", "frameworks",
	    jstrv(c->integrations.frameworks, c->integrations.nframeworks));
	if (in != NULL && c->integrations.nexternal > 0 &&
	    json_object_set_new(in, "externalFrameworks",
		jstrv(c->integrations.external, c->integrations.nexternal)) !=
		0) {
		json_decref(in);
		in = NULL;
	}
	if (in != NULL && c->integrations.nlabel_keys_to_copy > 0 &&
	    json_object_set_new(in, "labelKeysToCopy",
		jstrv(c->integrations.label_keys_to_copy,
		    c->integrations.nlabel_keys_to_copy)) != 0) {
		json_decref(in);
		in = NULL;
	}
	if (json_object_set_new(root, "integrations", in) != 0)
		return -1;
	return 0;
}

/* fairSharing, then resources and objectRetentionPolicies. */
static int sharing_resources_json(json_t *root, const struct ctl_config *c)
{
	if (c->fair_sharing.enable) {
		static const char *const names[] = {
		    "LessThanOrEqualToFinalShare", "LessThanInitialShare"};
		json_t *ps = json_array();
		size_t i;

		for (i = 0; ps != NULL && i < c->fair_sharing.nstrategies; i++)
			if (json_array_append_new(ps,
				json_string(
				    names[c->fair_sharing.strategies[i]])) != 0)
				return -1;
		if (json_object_set_new(root, "fairSharing",
			json_pack("{s:o}", "preemptionStrategies", ps)) != 0)
			return -1;
	}
	json_t *res = ctl_config_resources_json(c);
	json_t *ret = ctl_config_retention_json(c);

	if (res == NULL || ret == NULL) {
		json_decref(res);
		json_decref(ret);
		return -1;
	}
	if (json_is_null(res))
		json_decref(res);
	else if (json_object_set_new(root, "resources", res) != 0) {
		json_decref(ret);
		return -1;
	}
	if (json_is_null(ret))
		json_decref(ret);
	else if (json_object_set_new(root, "objectRetentionPolicies", ret) != 0)
		return -1;
	return 0;
}

/* admissionFairSharing, when enabled. */
static int afs_json(json_t *root, const struct ctl_config *c)
{
	if (c->admission_fair_sharing.enable) {
		json_t *rw = json_object();
		size_t i;

		for (i = 0;
		     rw != NULL && i < c->admission_fair_sharing.nweights; i++)
			if (json_object_set_new(rw,
				c->admission_fair_sharing.resources[i],
				json_real(
				    c->admission_fair_sharing.weights[i])) != 0)
				return -1;
		if (json_object_set_new(root, "admissionFairSharing",
			json_pack("{s:o, s:o, s:o}", "usageHalfLifeTime",
			    jdur(c->admission_fair_sharing.half_life_ns),
			    "usageSamplingInterval",
			    jdur(c->admission_fair_sharing.sampling_ns),
			    "resourceWeights", rw)) != 0)
			return -1;
	}
	return 0;
}

/* waitForPodsReady (rq borrowed), or the gate that turns it off, then the
 * gates, servers, clientConnection, integrations, fairSharing, resources,
 * retention and admissionFairSharing, in Kueue's field order. Nonzero
 * when out of memory.
 */
static int tail_json(json_t *root, const struct ctl_config *c, json_t *rq)
{
	if (pods_ready_json(root, c, rq) || gates_json(root, c) ||
	    servers_json(root, c) || sharing_resources_json(root, c) ||
	    afs_json(root, c))
		return -1;
	return 0;
}

/* The effective configuration as the JSON form of Kueue's v1beta2
 * Configuration, in the field order of Kueue's Go type. */
static int build_json(const struct ctl_config *c, json_t **out, cu_error *err)
{
	json_t *root, *sel = NULL, *lqm, *rq, *ic;
	int rc;

	*out = NULL;
	rc = api_label_selector_encode(&sel, &c->managed_jobs_ns_selector, err);
	if (rc != CU_OK)
		return rc;
	rc = lq_metrics_json(c, &lqm, err);
	if (rc != CU_OK) {
		json_decref(sel);
		return rc;
	}
	rq = requeuing_json(c);
	ic = cert_json(c);
	if (lqm == NULL || rq == NULL || ic == NULL) {
		json_decref(sel);
		json_decref(lqm);
		json_decref(rq);
		json_decref(ic);
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	}
	root = head_json(c, sel, lqm, ic);
	json_decref(sel);
	json_decref(lqm);
	json_decref(ic);
	if (root != NULL && c->metrics.ncustom > 0) {
		json_t *cl = ctl_config_labels_json(c);

		if (cl == NULL ||
		    json_object_set_new(json_object_get(root, "metrics"),
			"customLabels", cl) != 0) {
			json_decref(root);
			root = NULL;
		}
	}
	if (root != NULL && tail_json(root, c, rq) != 0) {
		json_decref(root);
		root = NULL;
	}
	json_decref(rq);
	if (root == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	*out = root;
	return CU_OK;
}

/* root [borrowed] as one YAML document appended to out. */
static int emit_root(const json_t *root, cu_buf *out, cu_error *err)
{
	struct emit e;
	int rc;

	memset(&e, 0, sizeof(e));
	e.out = out;
	if (!yaml_emitter_initialize(&e.em))
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	yaml_emitter_set_output(&e.em, emit_write, &e);
	yaml_emitter_set_unicode(&e.em, 1);
	yaml_emitter_set_width(&e.em, -1);
	rc = ev_simple(&e, YAML_STREAM_START_EVENT, false);
	if (rc == CU_OK)
		rc = ev_simple(&e, YAML_DOCUMENT_START_EVENT, false);
	if (rc == CU_OK)
		rc = emit_json(&e, root);
	if (rc == CU_OK)
		rc = ev_simple(&e, YAML_DOCUMENT_END_EVENT, false);
	if (rc == CU_OK)
		rc = ev_simple(&e, YAML_STREAM_END_EVENT, false);
	if (rc == CU_OK && !yaml_emitter_flush(&e.em))
		rc = e.rc != CU_OK ? e.rc : CU_ENOMEM;
	yaml_emitter_delete(&e.em);
	if (rc != CU_OK)
		return cu_error_set(err, rc,
		    "cannot print the configuration: %s", cu_err_desc(rc));
	return CU_OK;
}

int ctl_config_to_yaml(const struct ctl_config *c, cu_buf *out, cu_error *err)
{
	json_t *root;
	int rc;

	rc = build_json(c, &root, err);
	if (rc != CU_OK)
		return rc;
	rc = emit_root(root, out, err);
	json_decref(root);
	return rc;
}

/* ---- --convert-config ------------------------------------------------- */

/* Remove from o every member equal to base's. Used inside a section and,
 * with top set, on the document (apiVersion, kind and namespace kept). */
static void prune_equal(json_t *o, const json_t *base, bool top)
{
	const char *k;
	json_t *v;
	void *tmp;

	json_object_foreach_safe(o, tmp, k, v)
	{
		const json_t *b = json_object_get(base, k);

		if (top &&
		    (strcmp(k, "apiVersion") == 0 || strcmp(k, "kind") == 0 ||
			strcmp(k, "namespace") == 0))
			continue;
		if (b != NULL && json_equal(v, b))
			json_object_del(o, k);
		else if (b != NULL && json_is_object(v) && json_is_object(b))
			prune_equal(v, b, false);
	}
}

/* The configuration cueue gets from buf[0..len), as JSON. */
static int reload_json(const char *buf, size_t len, json_t **out, cu_error *err)
{
	struct ctl_config c;
	int rc = ctl_config_load_buffer(&c, buf, len, "converted", err);

	*out = NULL;
	if (rc == CU_OK)
		rc = build_json(&c, out, err);
	ctl_config_dispose(&c);
	return rc;
}

/* Whether doc, printed and loaded again, is the configuration want. The
 * text is left in buf. Only CU_ENOMEM-like failures are errors. */
static int same_config(const json_t *doc, const json_t *want, cu_buf *buf,
    bool *same, cu_error *err)
{
	json_t *trip = NULL;
	int rc;

	buf->len = 0;
	rc = emit_root(doc, buf, err);
	if (rc != CU_OK)
		return rc;
	*same = reload_json(buf->ptr, buf->len, &trip, NULL) == CU_OK &&
		json_equal(trip, want);
	json_decref(trip);
	return CU_OK;
}

/* v1beta2's defaults for c's namespace (other defaults follow it: the
 * Lease's namespace, the managed-namespace selector) as JSON. */
static int defaults_json(
    const struct ctl_config *c, json_t **out, cu_error *err)
{
	json_t *ns = json_string(c->namespace);
	/* A JSON string is a YAML scalar; json_dumps allocates with
	 * cu_malloc (main.c sets jansson's allocator). */
	char *q = ns != NULL ? json_dumps(ns, JSON_ENCODE_ANY) : NULL;
	cu_buf hdr;
	int rc;

	*out = NULL;
	json_decref(ns);
	cu_buf_init(&hdr, (size_t)1 << 16);
	rc = q == NULL ? CU_ENOMEM
		       : cu_buf_addf(&hdr,
			     "apiVersion: " CTL_CONFIG_V1BETA2
			     "\nkind: Configuration\nnamespace: %s\n",
			     q);
	cu_free(q);
	if (rc != CU_OK)
		rc = cu_error_set(err, rc, "out of memory");
	else
		rc = reload_json(hdr.ptr, hdr.len, out, err);
	cu_buf_dispose(&hdr);
	return rc;
}

int ctl_config_to_yaml_minimal(
    const struct ctl_config *c, cu_buf *out, cu_error *err)
{
	json_t *full = NULL, *base = NULL, *doc = NULL;
	const char *k;
	json_t *v;
	cu_buf buf;
	bool same = false;
	int rc;

	cu_buf_init(&buf, (size_t)1 << 20);
	rc = build_json(c, &full, err);
	if (rc == CU_OK)
		rc = defaults_json(c, &base, err);
	if (rc == CU_OK && (doc = json_deep_copy(full)) == NULL)
		rc = cu_error_set(err, CU_ENOMEM, "out of memory");
	/* Sections equal to the defaults go; what is left must load to c
	 * (a section that is written out is not merged with its defaults:
	 * else the whole configuration is printed). */
	if (rc == CU_OK) {
		prune_equal(doc, base, true);
		json_object_foreach(doc, k, v)
		{
			/* full's own section (shared, never changed here). */
			if (json_is_object(v))
				json_object_set(
				    doc, k, json_object_get(full, k));
		}
		rc = same_config(doc, full, &buf, &same, err);
	}
	if (rc == CU_OK && !same) {
		/* A copy: the sections below are replaced in doc, and full
		 * is what they are checked against. */
		json_decref(doc);
		if ((doc = json_deep_copy(full)) == NULL)
			rc = cu_error_set(err, CU_ENOMEM, "out of memory");
	}
	/* Then each section on its own: its fields at their defaults go
	 * when the result still loads to c. */
	json_object_foreach(rc == CU_OK ? doc : NULL, k, v)
	{
		json_t *b = json_object_get(base, k), *keep, *cand;

		if (!json_is_object(v) || !json_is_object(b))
			continue;
		if ((cand = json_deep_copy(v)) == NULL) {
			rc = cu_error_set(err, CU_ENOMEM, "out of memory");
			break;
		}
		prune_equal(cand, b, false);
		keep = json_incref(v);
		if (json_object_set_new(doc, k, cand) != 0 ||
		    (rc = same_config(doc, full, &buf, &same, err)) != CU_OK) {
			json_decref(keep);
			rc = rc != CU_OK ? rc
					 : cu_error_set(
					       err, CU_ENOMEM, "out of memory");
			break;
		}
		if (!same && json_object_set(doc, k, keep) != 0)
			rc = cu_error_set(err, CU_ENOMEM, "out of memory");
		json_decref(keep);
		if (rc != CU_OK)
			break;
	}
	if (rc == CU_OK)
		rc = same_config(doc, full, &buf, &same, err);
	if (rc == CU_OK && (rc = cu_buf_add(out, buf.ptr, buf.len)) != CU_OK)
		rc = cu_error_set(err, rc, "cannot print the configuration: %s",
		    cu_err_desc(rc));
	json_decref(doc);
	json_decref(full);
	json_decref(base);
	cu_buf_dispose(&buf);
	return rc;
}
