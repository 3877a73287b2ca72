/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/controller_config_test.c - controller/config: Kueue's
 * Configuration file, its defaults, strict decoding with path and line,
 * v1beta1 conversion, validation errors, and the effective-configuration
 * printer behind --check-config.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "controller/config.h"

#define DATA "tests/data/config/"
#define HDR                                                                    \
	"apiVersion: config.kueue.x-k8s.io/v1beta2\n"                          \
	"kind: Configuration\n"

static int load_str(struct ctl_config *c, const char *yaml, cu_error *err)
{
	return ctl_config_load_buffer(c, yaml, strlen(yaml), "t.yaml", err);
}

static bool ns_matches(const struct ctl_config *c, const char *ns)
{
	const char *kv[] = {"kubernetes.io/metadata.name", ns};

	return ns_selector_matches_pairs(&c->managed_jobs_ns_selector, kv, 1);
}

Test(ctl_config, type_only_file_gets_every_kueue_default)
{
	struct ctl_config c;
	cu_error err;
	char *ns = ctl_config_operator_namespace(NULL);

	cr_assert_eq(ctl_config_load(&c, DATA "defaults.yaml", &err), CU_OK,
	    "%s", err.msg);
	cr_assert_str_eq(c.api_version, CTL_CONFIG_V1BETA2);
	cr_assert_str_eq(c.namespace, ns);
	cr_assert_not(c.manage_jobs_without_queue_name);
	cr_assert_eq(c.webhook.port, 9443);
	cr_assert_str_eq(c.webhook.host, "");
	cr_assert_str_eq(
	    c.webhook.cert_dir, "/tmp/k8s-webhook-server/serving-certs");
	cr_assert_str_eq(c.metrics.bind_address, ":8443");
	cr_assert_not(c.metrics.enable_cluster_queue_resources);
	cr_assert(c.metrics.local_queue_metrics);
	cr_assert_not(c.metrics.has_local_queue_selector);
	cr_assert_str_eq(c.health.probe_bind_address, ":8081");
	cr_assert_str_eq(c.health.readiness_endpoint, "readyz");
	cr_assert_str_eq(c.health.liveness_endpoint, "healthz");
	cr_assert(c.leader_election.leader_elect);
	cr_assert_eq(c.leader_election.lease_duration_ns, 15000000000LL);
	cr_assert_eq(c.leader_election.renew_deadline_ns, 10000000000LL);
	cr_assert_eq(c.leader_election.retry_period_ns, 2000000000LL);
	cr_assert_str_eq(c.leader_election.resource_lock, "leases");
	cr_assert_str_eq(
	    c.leader_election.resource_name, "c1f6bfd2.kueue.x-k8s.io");
	cr_assert_str_eq(c.leader_election.resource_namespace, ns);
	cr_assert(c.internal_cert.enable);
	cr_assert_str_eq(
	    c.internal_cert.webhook_service_name, "kueue-webhook-service");
	cr_assert_str_eq(
	    c.internal_cert.webhook_secret_name, "kueue-webhook-server-cert");
	/* v1beta2 always defaults waitForPodsReady to non-nil (enabled). */
	cr_assert(c.wait_for_pods_ready.enable);
	cr_assert_eq(c.wait_for_pods_ready.timeout_ns, 30LL * 60 * 1000000000);
	cr_assert_eq(c.wait_for_pods_ready.recovery_timeout_ns,
	    c.wait_for_pods_ready.timeout_ns);
	cr_assert_not(c.wait_for_pods_ready.block_admission);
	cr_assert_eq(c.wait_for_pods_ready.timestamp, CTL_REQUEUE_EVICTION);
	cr_assert_not(c.wait_for_pods_ready.has_backoff_limit_count);
	cr_assert_eq(c.wait_for_pods_ready.backoff_base_seconds, 60);
	cr_assert_eq(c.wait_for_pods_ready.backoff_max_seconds, 3600);
	cr_assert_float_eq(c.client_connection.qps, 300.0, 1e-9);
	cr_assert_eq(c.client_connection.burst, 500);
	cr_assert_eq(c.integrations.nframeworks, 1);
	cr_assert_str_eq(c.integrations.frameworks[0], "batch/job");
	cr_assert(c.integrations.job);
	cr_assert_not(c.integrations.jobset);
	/* waitForPodsReady is on by default and acted on: nothing said. */
	cr_assert_eq(c.nwarnings, 0, "%s", c.nwarnings ? c.warnings[0] : "");
	/* Default gate: NotIn [kube-system, <namespace>]. */
	cr_assert_not(ns_matches(&c, "kube-system"));
	cr_assert_not(ns_matches(&c, ns));
	cr_assert(ns_matches(&c, "default"));
	cr_assert(ns_matches(&c, "team-a"));
	ctl_config_dispose(&c);
	cu_free(ns);
}

Test(ctl_config, seed_001_selector_manages_default_but_not_test)
{
	struct ctl_config c;
	cu_error err;
	const char *dflt[] = {"kubernetes.io/metadata.name", "default"};
	const char *test[] = {"kubernetes.io/metadata.name", "test"};
	const char *kueue[] = {"kubernetes.io/metadata.name", "kueue-system"};

	cr_assert_eq(ctl_config_load(&c, DATA "seed-001.yaml", &err), CU_OK,
	    "%s", err.msg);
	cr_assert(c.manage_jobs_without_queue_name);
	cr_assert(
	    ns_selector_matches_pairs(&c.managed_jobs_ns_selector, dflt, 1));
	cr_assert_not(
	    ns_selector_matches_pairs(&c.managed_jobs_ns_selector, test, 1));
	cr_assert_not(
	    ns_selector_matches_pairs(&c.managed_jobs_ns_selector, kueue, 1));
	cr_assert(c.integrations.job);
	cr_assert(c.integrations.jobset);
	ctl_config_dispose(&c);
}

Test(ctl_config, misspelled_top_level_field_fails_with_line)
{
	struct ctl_config c;
	cu_error err;

	cr_assert_eq(
	    ctl_config_load(&c, DATA "misspelled.yaml", &err), CU_EPARSE);
	cr_assert(
	    strstr(err.msg,
		"line 4: unknown field \"manageJobsWithoutQueueNme\"") != NULL,
	    "%s", err.msg);
	cr_assert(strstr(err.msg, "misspelled.yaml") != NULL, "%s", err.msg);
	/* The struct is left disposed and may be disposed again. */
	cr_assert_null(c.namespace);
	ctl_config_dispose(&c);
}

Test(ctl_config, misspelled_nested_field_names_full_path)
{
	struct ctl_config c;
	cu_error err;

	cr_assert_eq(ctl_config_load(&c, DATA "misspelled-nested.yaml", &err),
	    CU_EPARSE);
	cr_assert(
	    strstr(err.msg,
		"line 5: unknown field \"integrations.framewrks\"") != NULL,
	    "%s", err.msg);
}

Test(ctl_config, field_names_are_case_sensitive)
{
	struct ctl_config c;
	cu_error err;

	cr_assert_eq(
	    load_str(&c, HDR "ManageJobsWithoutQueueName: true\n", &err),
	    CU_EPARSE);
	cr_assert(strstr(err.msg, "line 3: unknown field "
				  "\"ManageJobsWithoutQueueName\"") != NULL,
	    "%s", err.msg);
}

Test(ctl_config, v1beta1_file_maps_to_v1beta2_semantics)
{
	struct ctl_config c;
	cu_error err;
	size_t i;
	bool qv = false, po = false;

	cr_assert_eq(ctl_config_load(&c, DATA "v1beta1.yaml", &err), CU_OK,
	    "%s", err.msg);
	cr_assert_str_eq(c.api_version, CTL_CONFIG_V1BETA1);
	cr_assert_str_eq(c.namespace, "team-system");
	cr_assert(c.wait_for_pods_ready.enable);
	/* v1beta1: 5m timeout; unset blockAdmission converts to true. */
	cr_assert_eq(c.wait_for_pods_ready.timeout_ns, 5LL * 60 * 1000000000);
	cr_assert(c.wait_for_pods_ready.block_admission);
	cr_assert_eq(c.wait_for_pods_ready.timestamp, CTL_REQUEUE_CREATION);
	cr_assert(c.wait_for_pods_ready.has_backoff_limit_count);
	cr_assert_eq(c.wait_for_pods_ready.backoff_limit_count, 5);
	cr_assert_float_eq(c.client_connection.qps, 50.0, 1e-9);
	cr_assert_eq(c.client_connection.burst, 100);
	/* The default gate follows the configured namespace. */
	cr_assert_not(ns_matches(&c, "team-system"));
	cr_assert(ns_matches(&c, "kueue-system"));
	for (i = 0; i < c.nwarnings; i++) {
		qv |= strstr(c.warnings[i], "queueVisibility") != NULL;
		po |= strstr(c.warnings[i], "integrations.podOptions") != NULL;
	}
	/* queueVisibility is dropped silently, as Kueue at HEAD drops it. */
	cr_assert(!qv && po, "warnings: %zu", c.nwarnings);
	ctl_config_dispose(&c);
}

Test(ctl_config, v1beta1_without_enable_disables_wait_for_pods_ready)
{
	struct ctl_config c;
	cu_error err;

	cr_assert_eq(load_str(&c,
			 "apiVersion: config.kueue.x-k8s.io/v1beta1\n"
			 "kind: Configuration\n"
			 "waitForPodsReady:\n"
			 "  timeout: 7m\n",
			 &err),
	    CU_OK, "%s", err.msg);
	cr_assert_not(c.wait_for_pods_ready.enable);
	cr_assert_not(c.wait_for_pods_ready.block_admission);
	ctl_config_dispose(&c);
}

Test(ctl_config, fields_of_the_other_version_are_unknown)
{
	struct ctl_config c;
	cu_error err;

	cr_assert_eq(load_str(&c,
			 HDR "waitForPodsReady:\n"
			     "  enable: true\n",
			 &err),
	    CU_EPARSE);
	cr_assert(
	    strstr(err.msg,
		"line 4: unknown field \"waitForPodsReady.enable\"") != NULL,
	    "%s", err.msg);
	cr_assert_eq(load_str(&c,
			 "apiVersion: config.kueue.x-k8s.io/v1beta1\n"
			 "kind: Configuration\n"
			 "visibilityServer:\n"
			 "  bindPort: 8082\n",
			 &err),
	    CU_EPARSE);
	cr_assert(strstr(err.msg,
		      "line 3: unknown field \"visibilityServer\"") != NULL,
	    "%s", err.msg);
}

Test(ctl_config, wrong_types_fail_with_path_and_line)
{
	static const struct {
		const char *body;
		const char *want;
	} cases[] = {
	    {"manageJobsWithoutQueueName: \"true\"\n",
		"line 3: manageJobsWithoutQueueName: invalid type: expected a "
		"boolean, got a string"},
	    {"clientConnection:\n  qps: fast\n",
		"line 4: clientConnection.qps: invalid type: expected a "
		"number, got a string"},
	    {"webhook:\n  port: 94.43\n",
		"line 4: webhook.port: invalid type: expected an integer"},
	    {"integrations:\n  frameworks: batch/job\n",
		"line 4: integrations.frameworks: invalid type: expected a "
		"sequence, got a string"},
	    {"integrations:\n  frameworks: [batch/job, 3]\n",
		"integrations.frameworks[1]: invalid type: expected a string, "
		"got an integer"},
	    {"leaderElection:\n  leaseDuration: 10 minutes\n",
		"line 4: leaderElection.leaseDuration: unknown unit"},
	    {"leaderElection:\n  leaseDuration: 15\n",
		"line 4: leaderElection.leaseDuration: invalid type: expected "
		"a duration string"},
	    {"featureGates:\n  Foo.Bar: 1\n",
		"line 4: featureGates[Foo.Bar]: invalid type: expected a "
		"boolean"},
	    {"waitForPodsReady:\n  requeuingStrategy:\n"
	     "    backoffLimitCount: 3000000000\n",
		"line 5: waitForPodsReady.requeuingStrategy.backoffLimitCount: "
		"value 3000000000 out of range for int32"},
	    {"integrations:\n  frameworks: [batch/job, null]\n",
		"line 4: integrations.frameworks[1]: invalid type: expected a "
		"value, got null"},
	    {"webhook: 9443\n",
		"line 3: webhook: invalid type: expected a mapping"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ctl_config c;
		cu_error err;
		char *doc = cu_asprintf("%s%s", HDR, cases[i].body);

		cr_assert_not_null(doc);
		cr_assert_eq(load_str(&c, doc, &err), CU_EPARSE, "case %zu: %s",
		    i, err.msg);
		cr_assert(strstr(err.msg, cases[i].want) != NULL,
		    "case %zu: got \"%s\", want \"%s\"", i, err.msg,
		    cases[i].want);
		cu_free(doc);
	}
}

Test(ctl_config, wrong_api_version_or_kind_is_refused)
{
	struct ctl_config c;
	cu_error err;

	cr_assert_eq(load_str(&c,
			 "apiVersion: config.kueue.x-k8s.io/v1alpha1\n"
			 "kind: Configuration\n",
			 &err),
	    CU_EPARSE);
	cr_assert(strstr(err.msg, "line 1: apiVersion "
				  "\"config.kueue.x-k8s.io/v1alpha1\" is not "
				  "supported") != NULL,
	    "%s", err.msg);
	cr_assert_eq(load_str(&c,
			 "apiVersion: config.kueue.x-k8s.io/v1beta2\n"
			 "kind: ConfigMap\n",
			 &err),
	    CU_EPARSE);
	cr_assert(strstr(err.msg, "line 2: kind \"ConfigMap\" is not "
				  "supported") != NULL,
	    "%s", err.msg);
	cr_assert_eq(load_str(&c, "kind: Configuration\n", &err), CU_EPARSE);
	cr_assert(strstr(err.msg, "apiVersion and kind must be set") != NULL,
	    "%s", err.msg);
	cr_assert_eq(load_str(&c, "- a\n- b\n", &err), CU_EPARSE);
	cr_assert(strstr(err.msg, "expected a Configuration mapping") != NULL,
	    "%s", err.msg);
	cr_assert_eq(load_str(&c, "", &err), CU_EPARSE);
	cr_assert_eq(load_str(&c, HDR "a: [\n", &err), CU_EPARSE);
	cr_assert(strstr(err.msg, "t.yaml: line") == err.msg, "%s", err.msg);
}

Test(ctl_config, validation_errors_name_field_and_line)
{
	static const struct {
		const char *body;
		int code;
		const char *want;
	} cases[] = {
	    {"clientConnection:\n  qps: 0\n", CU_EINVAL,
		"line 4: clientConnection.qps: Invalid value: 0: must be "
		"greater than 0"},
	    {"clientConnection:\n  qps: -1\n  burst: 10\n", CU_EINVAL,
		"clientConnection.qps: Invalid value: -1"},
	    {"clientConnection:\n  qps: 100\n  burst: 50\n", CU_EINVAL,
		"line 5: clientConnection.burst: Invalid value: 50: must be "
		"greater than or equal to qps (100)"},
	    {"managedJobsNamespaceSelector:\n  matchExpressions:\n"
	     "  - key: kubernetes.io/metadata.name\n    operator: Nope\n"
	     "    values: [a]\n",
		CU_EINVAL, "managedJobsNamespaceSelector.matchExpressions[0]"},
	    {"managedJobsNamespaceSelector:\n  matchExpressions:\n"
	     "  - key: kubernetes.io/metadata.name\n    operator: In\n",
		CU_EINVAL,
		"line 3: managedJobsNamespaceSelector.matchExpressions[0]."
		"values"},
	    {"managedJobsNamespaceSelector:\n  matchLabels:\n"
	     "    \"bad key!\": x\n",
		CU_EINVAL, "managedJobsNamespaceSelector.matchLabels"},
	    {"integrations:\n  frameworks: [batch/job, statefulset]\n",
		CU_EINVAL,
		"integrations.frameworks: Invalid value: \"statefulset\": "
		"requires the \"pod\" framework"},
	    {"integrations:\n  frameworks: [leaderworkerset.x-k8s.io/"
	     "leaderworkerset]\n",
		CU_EINVAL,
		"integrations.frameworks: Invalid value: "
		"\"leaderworkerset.x-k8s"
		".io/leaderworkerset\": requires the \"pod\" framework"},
	    {"integrations:\n  frameworks: [batch/job, deployment]\n",
		CU_EINVAL,
		"integrations.frameworks: Invalid value: \"deployment\": "
		"requires the \"pod\" framework"},
	    {"integrations:\n  frameworks: [example.com/thing]\n", CU_EINVAL,
		"integrations.frameworks[0]: Unsupported value: "
		"\"example.com/thing\""},
	    {"integrations:\n  frameworks: [batch/job, batch/job]\n", CU_EINVAL,
		"integrations.frameworks[1]: Duplicate value: \"batch/job\""},
	    {"integrations:\n  externalFrameworks: [Foo.v1]\n", CU_EINVAL,
		"integrations.externalFrameworks[0]: Invalid value: "
		"\"Foo.v1\": must be format, 'Kind.version.group.com'"},
	    {"integrations:\n  externalFrameworks: [.v1.example.com]\n",
		CU_EINVAL, "integrations.externalFrameworks[0]: Invalid value"},
	    {"integrations:\n  externalFrameworks: [Job.v1.batch]\n", CU_EINVAL,
		"integrations.externalFrameworks[0]: Duplicate value: "
		"\"Job.v1.batch\""},
	    {"integrations:\n  externalFrameworks: [A.v1.x.io, A.v1.x.io]\n",
		CU_EINVAL,
		"integrations.externalFrameworks[1]: Duplicate value: "
		"\"A.v1.x.io\""},
	    {"integrations:\n  labelKeysToCopy: [\"-bad\"]\n", CU_EINVAL,
		"integrations.labelKeysToCopy[0]"},
	    {"webhook:\n  port: 70000\n", CU_EINVAL,
		"line 4: webhook.port: Invalid value: 70000: must be between 1 "
		"and 65535"},
	    {"webhook:\n  port: 0\n", CU_EINVAL, "webhook.port"},
	    {"metrics:\n  bindAddress: \"8080\"\n", CU_EINVAL,
		"line 4: metrics.bindAddress: Invalid value: \"8080\""},
	    {"health:\n  healthProbeBindAddress: \":99999\"\n", CU_EINVAL,
		"line 4: health.healthProbeBindAddress: Invalid value"},
	    {"leaderElection:\n  leaseDuration: 10s\n  renewDeadline: 10s\n",
		CU_EINVAL,
		"line 4: leaderElection.leaseDuration: Invalid value: must be "
		"greater than renewDeadline"},
	    {"leaderElection:\n  retryPeriod: 9s\n", CU_EINVAL,
		"leaderElection.renewDeadline: Invalid value"},
	    {"leaderElection:\n  resourceLock: configmapsleases\n",
		CU_EUNSUPPORTED,
		"line 4: leaderElection.resourceLock: \"configmapsleases\" is "
		"not supported by cueue"},
	    {"waitForPodsReady:\n  timeout: -1m\n", CU_EINVAL,
		"line 4: waitForPodsReady.timeout: Invalid value"},
	    {"waitForPodsReady:\n  requeuingStrategy:\n    timestamp: Later\n",
		CU_EINVAL,
		"line 5: waitForPodsReady.requeuingStrategy.timestamp: "
		"Unsupported value: \"Later\""},
	    {"waitForPodsReady:\n  requeuingStrategy:\n"
	     "    backoffBaseSeconds: -3\n",
		CU_EINVAL, "waitForPodsReady.requeuingStrategy.backoffBase"},
	    {"namespace: Bad_NS\n", CU_EINVAL,
		"line 3: namespace: Invalid value: \"Bad_NS\""},
	    {"internalCertManagement:\n  webhookServiceName: 9svc\n", CU_EINVAL,
		"line 4: internalCertManagement.webhookServiceName: Invalid "
		"value: \"9svc\""},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ctl_config c;
		cu_error err;
		char *doc = cu_asprintf("%s%s", HDR, cases[i].body);

		cr_assert_not_null(doc);
		cr_assert_eq(load_str(&c, doc, &err), cases[i].code,
		    "case %zu: %s", i, err.msg);
		cr_assert(strstr(err.msg, cases[i].want) != NULL,
		    "case %zu: got \"%s\", want \"%s\"", i, err.msg,
		    cases[i].want);
		cr_assert(strncmp(err.msg, "t.yaml: ", 8) == 0, "%s", err.msg);
		cu_free(doc);
	}
}

Test(ctl_config, valid_edge_values_are_accepted)
{
	struct ctl_config c;
	cu_error err;

	/* burst == qps, "0" disables metrics, IPv6 bind, fractional qps,
	 * internal cert management off leaves the names unset. */
	cr_assert_eq(
	    load_str(&c,
		HDR "clientConnection: {qps: 2.5, burst: 3}\n"
		    "metrics: {bindAddress: \"0\"}\n"
		    "health: {healthProbeBindAddress: \"[::1]:8081\"}\n"
		    "internalCertManagement: {enable: false}\n"
		    "managedJobsNamespaceSelector: {}\n"
		    "integrations: {frameworks: []}\n",
		&err),
	    CU_OK, "%s", err.msg);
	cr_assert_float_eq(c.client_connection.qps, 2.5, 1e-9);
	cr_assert_str_eq(c.metrics.bind_address, "0");
	cr_assert_not(c.internal_cert.enable);
	cr_assert_null(c.internal_cert.webhook_service_name);
	cr_assert_null(c.internal_cert.webhook_secret_name);
	/* {} selects every namespace, kube-system included. */
	cr_assert(ns_matches(&c, "kube-system"));
	/* An empty list takes the default, as in Kueue. */
	cr_assert_eq(c.integrations.nframeworks, 1);
	ctl_config_dispose(&c);
}

/* externalFrameworks: accepted as Kind.version.group, a built-in kind
 * whose framework is not enabled included (as Kueue). */
Test(ctl_config, external_frameworks_are_accepted)
{
	struct ctl_config c;
	cu_error err;

	cr_assert_eq(load_str(&c,
			 HDR "integrations:\n  frameworks: [batch/job]\n"
			     "  externalFrameworks: [Foo.v1.example.com, "
			     "RayJob.v1.ray.io]\n",
			 &err),
	    CU_OK, "%s", err.msg);
	cr_assert_eq(c.integrations.nexternal, 2);
	cr_assert_str_eq(c.integrations.external[0], "Foo.v1.example.com");
	cr_assert_str_eq(c.integrations.external[1], "RayJob.v1.ray.io");
	ctl_config_dispose(&c);
}

/* Kueue's controller section (groupKindConcurrency) loads without a
 * warning: cueue keeps its bound; a known gate cueue does not act on
 * warns. */
Test(ctl_config, kueue_only_sections_load_with_warnings)
{
	struct ctl_config c;
	cu_error err;
	size_t i;
	bool ctrl = false, fg = false;

	cr_assert_eq(ctl_config_load(&c, DATA "full-v1beta2.yaml", &err), CU_OK,
	    "%s", err.msg);
	for (i = 0; i < c.nwarnings; i++) {
		ctrl |= strstr(c.warnings[i], "controller") != NULL;
		fg |= strstr(c.warnings[i], "featureGates") != NULL;
	}
	cr_assert(!ctrl && fg, "%zu warnings, first: %s", c.nwarnings,
	    c.nwarnings ? c.warnings[0] : "");
	cr_assert_eq(c.controller.cache_sync_timeout_ns, 120 * CU_NS_PER_S);
	cr_assert_eq(c.leader_election.lease_duration_ns, 30000000000LL);
	cr_assert_str_eq(c.leader_election.resource_namespace, "cueue-system");
	cr_assert(c.wait_for_pods_ready.block_admission);
	cr_assert_eq(
	    c.wait_for_pods_ready.recovery_timeout_ns, 3LL * 60 * 1000000000);
	cr_assert(c.metrics.has_local_queue_selector);
	cr_assert_eq(c.integrations.nlabel_keys_to_copy, 1);
	ctl_config_dispose(&c);
}

static char *print(const struct ctl_config *c)
{
	cu_buf b;
	cu_error err;
	char *s;

	cu_buf_init(&b, 1 << 20);
	cr_assert_eq(ctl_config_to_yaml(c, &b, &err), CU_OK, "%s", err.msg);
	s = cu_buf_detach(&b, NULL);
	cr_assert_not_null(s);
	return s;
}

Test(ctl_config, printed_configuration_reloads_identically)
{
	static const char *const files[] = {"defaults.yaml", "seed-001.yaml",
	    "v1beta1.yaml", "full-v1beta2.yaml"};
	size_t i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct ctl_config c, again;
		cu_error err;
		char *path = cu_asprintf(DATA "%s", files[i]);
		char *y1, *y2;

		cr_assert_eq(
		    ctl_config_load(&c, path, &err), CU_OK, "%s", err.msg);
		y1 = print(&c);
		cr_assert_eq(load_str(&again, y1, &err), CU_OK, "%s: %s\n%s",
		    files[i], err.msg, y1);
		y2 = print(&again);
		cr_assert_str_eq(y1, y2, "%s", files[i]);
		cr_assert_str_eq(again.api_version, CTL_CONFIG_V1BETA2);
		ctl_config_dispose(&c);
		ctl_config_dispose(&again);
		cu_free(y1);
		cu_free(y2);
		cu_free(path);
	}
}

Test(ctl_config, printed_defaults_use_kueue_v1beta2_shape)
{
	struct ctl_config c;
	cu_error err;
	char *y;

	cr_assert_eq(ctl_config_load(&c, DATA "seed-001.yaml", &err), CU_OK);
	y = print(&c);
	cr_assert(strncmp(y,
		      "apiVersion: config.kueue.x-k8s.io/v1beta2\n"
		      "kind: Configuration\n",
		      strlen(HDR)) == 0,
	    "%s", y);
	cr_assert(strstr(y, "  leaseDuration: 15s\n") != NULL, "%s", y);
	cr_assert(strstr(y, "  timeout: 30m0s\n") != NULL, "%s", y);
	cr_assert(
	    strstr(y, "manageJobsWithoutQueueName: true\n") != NULL, "%s", y);
	cr_assert(strstr(y, "  bindAddress: :8443\n") != NULL, "%s", y);
	cr_assert(strstr(y, "  qps: 300\n  burst: 500\n") != NULL, "%s", y);
	cr_assert(strstr(y, "- jobset.x-k8s.io/jobset\n") != NULL, "%s", y);
	cr_assert(strstr(y, "operator: NotIn") != NULL, "%s", y);
	cr_assert(strstr(y, "- test\n") != NULL, "%s", y);
	cr_assert(strstr(y, "  host: ''\n") != NULL, "%s", y);
	cu_free(y);
	ctl_config_dispose(&c);
}

Test(ctl_config, durations_parse_and_print_like_go)
{
	static const struct {
		const char *in;
		int64_t ns;
		const char *out;
	} ok[] = {
	    {"15s", 15000000000LL, "15s"},
	    {"30m", 1800000000000LL, "30m0s"},
	    {"1h", 3600000000000LL, "1h0m0s"},
	    {"1h30m", 5400000000000LL, "1h30m0s"},
	    {"1.5s", 1500000000LL, "1.5s"},
	    {"90s", 90000000000LL, "1m30s"},
	    {"500ms", 500000000LL, "500ms"},
	    {"2us", 2000LL, "2\xc2\xb5s"},
	    {"7ns", 7LL, "7ns"},
	    {"0", 0, "0s"},
	    {"-5m", -300000000000LL, "-5m0s"},
	    {"+2s", 2000000000LL, "2s"},
	};
	static const char *const bad[] = {"", "5", "1x", "s", "1.s.", "-",
	    "99999999999999999999h", "3000000h"};
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		int64_t ns = -1;
		char buf[64];
		cu_error err;

		cr_assert_eq(ctl_config_parse_duration(ok[i].in, &ns, &err),
		    CU_OK, "%s: %s", ok[i].in, err.msg);
		cr_assert_eq(ns, ok[i].ns, "%s", ok[i].in);
		ctl_config_format_duration(ns, buf, sizeof(buf));
		cr_assert_str_eq(buf, ok[i].out);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int64_t ns;
		cu_error err;

		cr_assert_neq(ctl_config_parse_duration(bad[i], &ns, &err),
		    CU_OK, "\"%s\" accepted", bad[i]);
		cr_assert(strstr(err.msg, "duration") != NULL, "%s", err.msg);
	}
}

Test(ctl_config, operator_namespace_comes_from_service_account_file)
{
	char path[] = "/tmp/cueue-config-test-XXXXXX";
	int fd = mkstemp(path);
	char *ns;

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "  cueue-system\n", 15), 15);
	close(fd);
	ns = ctl_config_operator_namespace(path);
	cr_assert_str_eq(ns, "cueue-system");
	cu_free(ns);
	cr_assert_eq(truncate(path, 0), 0);
	ns = ctl_config_operator_namespace(path);
	cr_assert_str_eq(ns, "kueue-system");
	cu_free(ns);
	unlink(path);
	ns = ctl_config_operator_namespace(path);
	cr_assert_str_eq(ns, "kueue-system");
	cu_free(ns);
}

Test(ctl_config, missing_file_error_names_the_path)
{
	struct ctl_config c;
	cu_error err;
	int rc = ctl_config_load(&c, DATA "no-such-file.yaml", &err);

	cr_assert(rc == CU_ENOTFOUND || rc == CU_EIO, "rc %d", rc);
	cr_assert(strstr(err.msg, "no-such-file.yaml") != NULL, "%s", err.msg);
	ctl_config_dispose(&c);
}

Test(ctl_config, allocation_failures_are_reported_not_leaked)
{
	uint64_t n;
	bool succeeded = false;

	for (n = 1; n < 5000 && !succeeded; n++) {
		struct ctl_config c;
		cu_error err;
		int rc;

		cu_mem_fail_after(n, false);
		rc = ctl_config_load(&c, DATA "full-v1beta2.yaml", &err);
		cu_mem_fail_after(0, false);
		if (rc == CU_OK) {
			char *y = print(&c);

			cu_free(y);
			ctl_config_dispose(&c);
			succeeded = true;
		} else {
			cr_assert_eq(
			    rc, CU_ENOMEM, "n=%" PRIu64 ": %s", n, err.msg);
		}
	}
	cr_assert(succeeded);
}

Test(ctl_config, disable_wait_for_pods_ready_gate_turns_it_off)
{
	struct ctl_config c, again;
	cu_error err;
	char *y;

	cr_assert_eq(
	    load_str(&c, HDR "featureGates:\n  DisableWaitForPodsReady: true\n",
		&err),
	    CU_OK, "%s", err.msg);
	cr_assert_not(c.wait_for_pods_ready.enable);
	/* The gate is honoured, so it is not reported as ignored. */
	cr_assert_eq(c.nwarnings, 0);
	ctl_config_dispose(&c);

	/* A v1beta1 file without enable prints as the v1beta2 gate. */
	cr_assert_eq(ctl_config_load(&c, DATA "seed-001.yaml", &err), CU_OK);
	ctl_config_dispose(&c);
	cr_assert_eq(load_str(&c,
			 "apiVersion: config.kueue.x-k8s.io/v1beta1\n"
			 "kind: Configuration\n",
			 &err),
	    CU_OK, "%s", err.msg);
	y = print(&c);
	cr_assert(strstr(y, "featureGates:\n  DisableWaitForPodsReady: "
			    "true\n") != NULL,
	    "%s", y);
	cr_assert(strstr(y, "waitForPodsReady") == NULL, "%s", y);
	cr_assert_eq(load_str(&again, y, &err), CU_OK, "%s", err.msg);
	cr_assert_not(again.wait_for_pods_ready.enable);
	cu_free(y);
	ctl_config_dispose(&c);
	ctl_config_dispose(&again);
}

/* Kueue's metric gates are on by default and honoured when turned off:
 * no "not acted on" warning, and printed back so that a converted file
 * keeps them. */
Test(ctl_config, metric_feature_gates)
{
	struct ctl_config c, again;
	cu_error err;
	char *y;

	cr_assert_eq(load_str(&c, HDR, &err), CU_OK, "%s", err.msg);
	cr_assert(c.metrics.cohorts && c.metrics.creation_latency &&
		  c.metrics.unadmitted);
	y = print(&c);
	cr_assert(strstr(y, "MetricsForCohorts") == NULL, "%s", y);
	cu_free(y);
	ctl_config_dispose(&c);
	cr_assert_eq(load_str(&c,
			 HDR "featureGates:\n  MetricsForCohorts: false\n"
			     "  MetricForWorkloadCreationLatency: false\n"
			     "  UnadmittedWorkloadsObservability: false\n",
			 &err),
	    CU_OK, "%s", err.msg);
	cr_assert_eq(c.nwarnings, 0, "%s", c.nwarnings ? c.warnings[0] : "");
	cr_assert_not(c.metrics.cohorts);
	cr_assert_not(c.metrics.creation_latency);
	cr_assert_not(c.metrics.unadmitted);
	y = print(&c);
	cr_assert_eq(load_str(&again, y, &err), CU_OK, "%s", err.msg);
	cr_assert_not(again.metrics.cohorts);
	cr_assert_not(again.metrics.creation_latency);
	cr_assert_not(again.metrics.unadmitted);
	cu_free(y);
	ctl_config_dispose(&c);
	ctl_config_dispose(&again);
}

/* visibilityServer and VisibilityOnDemand are acted on (Kueue's defaults:
 * on, port 8082, every interface) and validated as Kueue validates them. */
Test(ctl_config, visibility_server)
{
	struct ctl_config c;
	cu_error err;

	cr_assert_eq(load_str(&c, HDR, &err), CU_OK, "%s", err.msg);
	cr_assert(c.visibility.enable);
	cr_assert_eq(c.visibility.bind_port, 8082);
	cr_assert_null(c.visibility.bind_address);
	cr_assert_eq(c.nwarnings, 0);
	ctl_config_dispose(&c);
	cr_assert_eq(load_str(&c,
			 HDR "visibilityServer:\n  bindPort: 9090\n"
			     "  bindAddress: \"::1\"\n"
			     "featureGates:\n  VisibilityOnDemand: false\n",
			 &err),
	    CU_OK, "%s", err.msg);
	cr_assert_not(c.visibility.enable);
	cr_assert_eq(c.visibility.bind_port, 9090);
	cr_assert_str_eq(c.visibility.bind_address, "::1");
	cr_assert_eq(c.nwarnings, 0, "%s", c.warnings[0]);
	ctl_config_dispose(&c);
	cr_assert_eq(
	    load_str(&c, HDR "visibilityServer:\n  bindPort: 0\n", &err),
	    CU_EINVAL);
	cr_assert(strstr(err.msg, "visibilityServer.bindPort: Invalid value: "
				  "0: must be a valid port number "
				  "(1-65535)") != NULL,
	    "%s", err.msg);
	cr_assert_eq(
	    load_str(
		&c, HDR "visibilityServer:\n  bindAddress: localhost\n", &err),
	    CU_EINVAL);
	cr_assert(strstr(err.msg, "visibilityServer.bindAddress: Invalid "
				  "value: \"localhost\": must be a valid IP "
				  "address") != NULL,
	    "%s", err.msg);
}
