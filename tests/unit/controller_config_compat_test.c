/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/controller_config_compat_test.c - the compatibility table
 * (controller/compat.c) as the configuration loader uses it: one warning
 * per set-but-ignored field naming it and what happens instead, unknown
 * feature gates refused, fairSharing/resources validated as Kueue does,
 * and ctl_cq_unsupported for ClusterQueue spec fields.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "api/model.h"
#include "controller/config.h"

#define HDR                                                                    \
	"apiVersion: config.kueue.x-k8s.io/v1beta2\n"                          \
	"kind: Configuration\n"                                                \
	"featureGates:\n"                                                      \
	"  DisableWaitForPodsReady: true\n"

static int load_str(struct ctl_config *c, const char *yaml, cu_error *err)
{
	return ctl_config_load_buffer(c, yaml, strlen(yaml), "t.yaml", err);
}

/* How many warnings contain want. */
static size_t count(const struct ctl_config *c, const char *want)
{
	size_t i, n = 0;

	for (i = 0; i < c->nwarnings; i++)
		n += strstr(c->warnings[i], want) != NULL;
	return n;
}

Test(ctl_compat, each_ignored_field_warns_once_naming_it)
{
	static const struct {
		const char *body, *want;
	} cases[] = {
	    {"pprofBindAddress: :8082\n",
		"pprofBindAddress: partly supported by cueue: accepted, "
		"meaningless here"},
	    {"multiKueue:\n  dispatcherName: example.com/mine\n",
		"multiKueue.dispatcherName: an external dispatcher"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ctl_config c;
		cu_error err;
		char *doc = cu_asprintf("%s%s", HDR, cases[i].body);

		cr_assert_not_null(doc);
		cr_assert_eq(
		    load_str(&c, doc, &err), CU_OK, "case %zu: %s", i, err.msg);
		cr_assert_eq(c.nwarnings, 1, "case %zu: %zu warnings, first %s",
		    i, c.nwarnings, c.nwarnings ? c.warnings[0] : "");
		cr_assert_eq(count(&c, cases[i].want), 1,
		    "case %zu: got \"%s\", want \"%s\"", i, c.warnings[0],
		    cases[i].want);
		ctl_config_dispose(&c);
		cu_free(doc);
	}
}

Test(ctl_compat, fields_cueue_acts_on_do_not_warn)
{
	struct ctl_config c;
	cu_error err;

	cr_assert_eq(
	    load_str(&c,
		HDR "metrics:\n  enableClusterQueueResources: true\n"
		    "  localQueueMetrics: {enable: false}\n"
		    "health:\n  readinessEndpointName: ready\n"
		    "  livenessEndpointName: alive\n"
		    "integrations:\n  labelKeysToCopy: [team]\n"
		    "resources:\n"
		    "  excludeResourcePrefixes: [example.com/]\n"
		    "  transformations:\n  - input: nvidia.com/mig\n"
		    "    strategy: Replace\n"
		    "  quotaCheckStrategy: BlockUndeclared\n"
		    "objectRetentionPolicies:\n  workloads:\n"
		    "    afterFinished: 0s\n"
		    "pprofBindAddress: \"\"\n"
		    "multiKueue:\n  gcInterval: 30s\n  origin: mgr\n"
		    "  dispatcherName: kueue.x-k8s.io/"
		    "multikueue-dispatcher-incremental\n"
		    "controller:\n  groupKindConcurrency: {Job.batch: 5}\n"
		    "  cacheSyncTimeout: 30000000000\n",
		&err),
	    CU_OK, "%s", err.msg);
	cr_assert_eq(c.nwarnings, 0, "%s", c.nwarnings ? c.warnings[0] : "");
	cr_assert_eq(c.controller.cache_sync_timeout_ns, 30 * CU_NS_PER_S);
	cr_assert(c.retention.has_after_finished, "afterFinished 0s is set");
	cr_assert_eq(c.retention.after_finished_ns, 0);
	cr_assert_not(c.retention.has_after_deactivated);
	cr_assert_str_eq(c.health.readiness_endpoint, "ready");
	cr_assert_str_eq(c.health.liveness_endpoint, "alive");
	cr_assert_eq(c.mk.gc_interval_ns, 30 * CU_NS_PER_S);
	cr_assert_eq(c.mk.worker_lost_ns, 15 * 60 * CU_NS_PER_S, "default");
	cr_assert_str_eq(c.mk.origin, "mgr");
	cr_assert(c.mk.incremental);
	ctl_config_dispose(&c);
}

Test(ctl_compat, admission_fair_sharing_is_loaded)
{
	static const struct {
		const char *body;
		bool enable;
		int64_t half, sampling;
		size_t nweights;
	} cases[] = {
	    /* absent: off */
	    {"", false, 0, 0, 0},
	    /* present: on; the interval defaults to 5m, the half-life to 0 */
	    {"admissionFairSharing: {}\n", true, 0, INT64_C(300000000000), 0},
	    {"admissionFairSharing:\n  usageHalfLifeTime: 10s\n"
	     "  usageSamplingInterval: 1s\n  resourceWeights:\n"
	     "    cpu: 2\n    memory: 0\n",
		true, INT64_C(10000000000), INT64_C(1000000000), 2},
	    /* the feature gate turns it off */
	    {"admissionFairSharing:\n  usageHalfLifeTime: 10s\n"
	     "featureGates:\n  AdmissionFairSharing: false\n",
		false, 0, 0, 0},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ctl_config c;
		cu_error err;
		const char *hdr = strstr(cases[i].body, "featureGates") != NULL
				      ? "apiVersion: "
					"config.kueue.x-k8s.io/v1beta2\n"
					"kind: Configuration\n"
				      : HDR;
		char *doc = cu_asprintf("%s%s", hdr, cases[i].body);

		cr_assert_not_null(doc);
		cr_assert_eq(
		    load_str(&c, doc, &err), CU_OK, "case %zu: %s", i, err.msg);
		cr_expect_eq(c.nwarnings, 0, "case %zu: %s", i,
		    c.nwarnings ? c.warnings[0] : "");
		cr_expect_eq(c.admission_fair_sharing.enable, cases[i].enable,
		    "case %zu", i);
		if (cases[i].enable) {
			cr_expect_eq(c.admission_fair_sharing.half_life_ns,
			    cases[i].half, "case %zu", i);
			cr_expect_eq(c.admission_fair_sharing.sampling_ns,
			    cases[i].sampling, "case %zu", i);
			cr_expect_eq(c.admission_fair_sharing.nweights,
			    cases[i].nweights, "case %zu", i);
		}
		if (cases[i].nweights == 2) {
			cr_expect_str_eq(
			    c.admission_fair_sharing.resources[0], "cpu");
			cr_expect_eq(c.admission_fair_sharing.weights[0], 2.0);
			cr_expect_eq(c.admission_fair_sharing.weights[1], 0.0);
		}
		ctl_config_dispose(&c);
		cu_free(doc);
	}
}

Test(ctl_compat, wait_for_pods_ready_is_acted_on)
{
	struct ctl_config c;
	cu_error err;

	/* Set explicitly, with a requeuing strategy: both acted on, no
	 * warning. */
	cr_assert_eq(load_str(&c,
			 "apiVersion: config.kueue.x-k8s.io/v1beta2\n"
			 "kind: Configuration\n"
			 "waitForPodsReady:\n"
			 "  timeout: 5m\n"
			 "  requeuingStrategy: {backoffLimitCount: 3}\n",
			 &err),
	    CU_OK, "%s", err.msg);
	cr_assert_eq(c.nwarnings, 0, "%s", c.nwarnings ? c.warnings[0] : "");
	cr_assert(c.wait_for_pods_ready.enable);
	cr_assert(c.wait_for_pods_ready.has_backoff_limit_count);
	cr_assert_eq(c.wait_for_pods_ready.backoff_limit_count, 3);
	ctl_config_dispose(&c);

	/* v1beta1 without enable: not in effect, nothing to say. */
	cr_assert_eq(load_str(&c,
			 "apiVersion: config.kueue.x-k8s.io/v1beta1\n"
			 "kind: Configuration\n",
			 &err),
	    CU_OK, "%s", err.msg);
	cr_assert_eq(c.nwarnings, 0, "%s", c.nwarnings ? c.warnings[0] : "");
	cr_assert_not(c.wait_for_pods_ready.enable);
	ctl_config_dispose(&c);
}

Test(ctl_compat, feature_gates_unknown_refused_known_warned)
{
	struct ctl_config c;
	cu_error err;

	cr_assert_eq(load_str(&c, HDR "  NoSuchGate: true\n", &err), CU_EINVAL);
	cr_assert(
	    strstr(err.msg, "line 5: featureGates[NoSuchGate]: "
			    "unrecognized feature gate: NoSuchGate") != NULL,
	    "%s", err.msg);

	cr_assert_eq(load_str(&c, HDR "  PartialAdmission: false\n", &err),
	    CU_OK, "%s", err.msg);
	cr_assert_eq(c.nwarnings, 1);
	cr_assert(strstr(c.warnings[0],
		      "line 5: featureGates[PartialAdmission]: not acted on "
		      "by cueue") != NULL,
	    "%s", c.warnings[0]);
	ctl_config_dispose(&c);
}

Test(ctl_compat, fair_sharing_and_resources_validated_as_kueue)
{
	static const struct {
		const char *body, *want;
	} cases[] = {
	    {"fairSharing:\n  preemptionStrategies: [Fastest]\n",
		"line 6: fairSharing.preemptionStrategies: Unsupported "
		"value: []v1beta2.PreemptionStrategy{\"Fastest\"}: supported "
		"values: \"LessThanOrEqualToFinalShare\", "
		"\"LessThanInitialShare\", "
		"\"LessThanOrEqualToFinalShare,LessThanInitialShare\""},
	    {"fairSharing:\n  preemptionStrategies: [LessThanInitialShare, "
	     "LessThanInitialShare]\n",
		"fairSharing.preemptionStrategies: Unsupported value: "
		"[]v1beta2.PreemptionStrategy{\"LessThanInitialShare\", "
		"\"LessThanInitialShare\"}"},
	    /* Kueue accepts the pair in one order only. */
	    {"fairSharing:\n  preemptionStrategies: [LessThanInitialShare, "
	     "LessThanOrEqualToFinalShare]\n",
		"fairSharing.preemptionStrategies: Unsupported value"},
	    {"fairSharing:\n  preemptionStrategies: [LessThanInitialShare, "
	     "LessThanOrEqualToFinalShare, LessThanInitialShare]\n",
		"fairSharing.preemptionStrategies: Unsupported value"},
	    {"admissionFairSharing:\n  usageHalfLifeTime: -1m\n",
		"line 6: admissionFairSharing.usageHalfLifeTime: Invalid "
		"value: must be greater than or equal to 0"},
	    {"admissionFairSharing:\n  usageHalfLifeTime: 1m\n"
	     "  usageSamplingInterval: -5s\n",
		"line 7: admissionFairSharing.usageSamplingInterval: Invalid "
		"value: must be greater than 0"},
	    {"admissionFairSharing:\n  usageHalfLifeTime: 1m\n"
	     "  resourceWeights:\n    cpu: 1\n    memory: -0.5\n",
		"admissionFairSharing.resourceWeights[memory]: Invalid value: "
		"must be greater than or equal to 0"},
	    {"fairSharing:\n  preemptionStrategies: []\n",
		"fairSharing.preemptionStrategies: Required value: must be "
		"specified"},
	    {"resources:\n  transformations:\n  - input: a.com/x\n"
	     "    strategy: Drop\n",
		"resources.transformations[0].strategy: Unsupported value: "
		"\"Drop\""},
	    {"resources:\n  transformations:\n  - strategy: Retain\n",
		"resources.transformations[0].input: Required value"},
	    {"resources:\n  transformations:\n  - input: a.com/x\n"
	     "  - input: a.com/x\n",
		"resources.transformations[1].input: Duplicate value"},
	    {"resources:\n  excludeResourcePrefixes: [\"\"]\n",
		"resources.excludeResourcePrefixes[0]: Invalid value"},
	    {"objectRetentionPolicies:\n  workloads:\n"
	     "    afterDeactivatedByKueue: -1m\n",
		"line 7: objectRetentionPolicies.workloads."
		"afterDeactivatedByKueue: Invalid value: \"-1m\": must be "
		"greater than or equal to 0"},
	    {"resources:\n  deviceClassMappings:\n"
	     "  - {name: example.com/gpu, deviceClassNames: [a.example.com]}\n"
	     "  - {name: example.com/gpu, deviceClassNames: [b.example.com]}\n",
		"resources.deviceClassMappings[1].name: Duplicate value: "
		"\"example.com/gpu\""},
	    {"resources:\n  deviceClassMappings:\n"
	     "  - {name: example.com/gpu, deviceClassNames: [a.example.com]}\n"
	     "  - {name: example.com/x, deviceClassNames: [a.example.com]}\n",
		"resources.deviceClassMappings[1].deviceClassNames[0]: Invalid "
		"value: \"a.example.com\": device class already mapped to "
		"resource example.com/gpu"},
	    {"resources:\n  deviceClassMappings:\n"
	     "  - {name: example.com/gpu, deviceClassNames: []}\n",
		"resources.deviceClassMappings[0].deviceClassNames: Invalid "
		"value: 0: must have between 1 and 8 items"},
	    {"resources:\n  deviceClassMappings:\n"
	     "  - name: gpu.memory\n    deviceClassNames: [a.example.com]\n"
	     "    sources: [{capacity: {name: memory, driver: d}}]\n",
		"capacity sources require "
		"KueueDRAIntegrationConsumableCapacity "
		"to be enabled"},
	    {"  KueueDRAIntegration: false\n",
		"featureGates: Invalid value: "
		"KueueDRAIntegrationExtendedResource "
		"is enabled, but depends on features that are disabled: "
		"[KueueDRAIntegration]"},
	    {"metrics:\n  customLabels:\n  - name: 9team\n",
		"line 7: metrics.customLabels[0].name: Invalid value: "
		"\"9team\": "
		"must match ^[a-zA-Z][a-zA-Z0-9_]*$"},
	    {"metrics:\n  customLabels:\n  - name: team\n"
	     "    sourceLabelKey: a\n    sourceAnnotationKey: b\n",
		"metrics.customLabels[0]: Invalid value: sourceLabelKey and "
		"sourceAnnotationKey are mutually exclusive"},
	    {"metrics:\n  customLabels:\n  - name: team\n"
	     "    sourceKind: Workload\n",
		"metrics.customLabels[0].trackedValues: Required value"},
	    {"metrics:\n  customLabels:\n  - name: team\n"
	     "    sourceKind: Queue\n",
		"metrics.customLabels[0].sourceKind: Unsupported value: "
		"\"Queue\""},
	    {"metrics:\n  customLabels:\n  - {name: a}\n  - {name: a}\n",
		"metrics.customLabels[1].name: Duplicate value: \"a\""},
	    {"metrics:\n  customLabels:\n  - {name: a1}\n  - {name: a2}\n"
	     "  - {name: a3}\n  - {name: a4}\n  - {name: a5}\n"
	     "  - {name: a6}\n  - {name: a7}\n",
		"metrics.customLabels: Too many: must have at most 6 items of "
		"sourceKind ClusterQueue"},
	    {"resources:\n  quotaCheckStrategy: Whatever\n",
		"line 6: resources.quotaCheckStrategy: Unsupported value: "
		"\"Whatever\""},
	    {"resources:\n  quotaCheckStrategy: IgnoreUndeclared\n"
	     "  excludeResourcePrefixes: [a.com/]\n",
		"resources.excludeResourcePrefixes: Invalid value: "
		"excludeResourcePrefixes is not allowed when "
		"quotaCheckStrategy is IgnoreUndeclared"},
	    {"resources:\n  transformations:\n  - input: a.com/x\n"
	     "    outputs: {credits: 1x}\n",
		"line 8: resources.transformations[0].outputs[credits]: "
		"Invalid value: \"1x\""},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ctl_config c;
		cu_error err;
		char *doc = cu_asprintf("%s%s", HDR, cases[i].body);

		cr_assert_not_null(doc);
		cr_assert_eq(load_str(&c, doc, &err), CU_EINVAL, "case %zu: %s",
		    i, err.msg);
		cr_assert(strstr(err.msg, cases[i].want) != NULL,
		    "case %zu: got \"%s\", want \"%s\"", i, err.msg,
		    cases[i].want);
		cu_free(doc);
	}
}

Test(ctl_compat, v1beta1_fair_sharing_checked_only_when_enabled)
{
	struct ctl_config c;
	cu_error err;

	cr_assert_eq(load_str(&c,
			 "apiVersion: config.kueue.x-k8s.io/v1beta1\n"
			 "kind: Configuration\n"
			 "fairSharing:\n"
			 "  preemptionStrategies: [Fastest]\n",
			 &err),
	    CU_OK, "%s", err.msg);
	cr_assert_eq(c.nwarnings, 0, "%s", c.nwarnings ? c.warnings[0] : "");
	ctl_config_dispose(&c);
	cr_assert_eq(load_str(&c,
			 "apiVersion: config.kueue.x-k8s.io/v1beta1\n"
			 "kind: Configuration\n"
			 "fairSharing:\n"
			 "  enable: true\n"
			 "  preemptionStrategies: [Fastest]\n",
			 &err),
	    CU_EINVAL);
	cr_assert(
	    strstr(err.msg,
		"line 5: fairSharing.preemptionStrategies: Unsupported") !=
		NULL,
	    "%s", err.msg);
	/* v1beta1 defaults an empty list to both strategies. */
	cr_assert_eq(load_str(&c,
			 "apiVersion: config.kueue.x-k8s.io/v1beta1\n"
			 "kind: Configuration\n"
			 "fairSharing:\n"
			 "  enable: true\n",
			 &err),
	    CU_OK, "%s", err.msg);
	cr_assert(c.fair_sharing.enable);
	cr_assert_eq(c.fair_sharing.nstrategies, 2);
	cr_assert_eq(c.fair_sharing.strategies[0], CTL_FAIR_LE_FINAL_SHARE);
	cr_assert_eq(c.fair_sharing.strategies[1], CTL_FAIR_LT_INITIAL_SHARE);
	ctl_config_dispose(&c);
}

/* The three lists Kueue accepts load in order, and print back. */
Test(ctl_compat, fair_sharing_accepted_lists)
{
	static const struct {
		const char *list;
		size_t n;
		enum ctl_fair_strategy s0, s1;
	} cases[] = {
	    {"[LessThanOrEqualToFinalShare]", 1, CTL_FAIR_LE_FINAL_SHARE, 0},
	    {"[LessThanInitialShare]", 1, CTL_FAIR_LT_INITIAL_SHARE, 0},
	    {"[LessThanOrEqualToFinalShare, LessThanInitialShare]", 2,
		CTL_FAIR_LE_FINAL_SHARE, CTL_FAIR_LT_INITIAL_SHARE},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ctl_config c, again;
		cu_error err;
		cu_buf out;
		char *doc =
		    cu_asprintf("%sfairSharing:\n  preemptionStrategies: %s\n",
			HDR, cases[i].list);

		cr_assert_not_null(doc);
		cr_assert_eq(
		    load_str(&c, doc, &err), CU_OK, "case %zu: %s", i, err.msg);
		cr_assert(c.fair_sharing.enable);
		cr_assert_eq(c.fair_sharing.nstrategies, cases[i].n);
		cr_assert_eq(c.fair_sharing.strategies[0], cases[i].s0);
		if (cases[i].n == 2)
			cr_assert_eq(c.fair_sharing.strategies[1], cases[i].s1);
		cu_buf_init(&out, 1 << 20);
		cr_assert_eq(ctl_config_to_yaml(&c, &out, &err), CU_OK);
		cr_assert_eq(ctl_config_load_buffer(
				 &again, out.ptr, out.len, "printed", &err),
		    CU_OK, "%s", err.msg);
		cr_assert_eq(again.fair_sharing.nstrategies, cases[i].n);
		cr_assert_eq(again.fair_sharing.strategies[0], cases[i].s0);
		ctl_config_dispose(&again);
		cu_buf_dispose(&out);
		ctl_config_dispose(&c);
		cu_free(doc);
	}
}

Test(ctl_compat, table_is_well_formed_and_printed_whole)
{
	cu_buf out;
	cu_error err;
	size_t i, rows = 0;
	const char *p;

	for (i = 0; i < ctl_compat_count; i++) {
		const struct ctl_compat *e = &ctl_compat_table[i];

		cr_assert(
		    e->level == CTL_COMPAT_SUPPORTED || e->note[0] != '\0',
		    "%s %s: a gap needs a note", e->kind, e->field);
		cr_assert(strchr(e->note, '|') == NULL);
		cr_assert_eq(ctl_compat_find(e->kind, e->field), e,
		    "duplicate %s", e->field);
	}
	cu_buf_init(&out, 1 << 20);
	cr_assert_eq(ctl_compat_markdown(&out, &err), CU_OK);
	for (p = out.ptr; p < out.ptr + out.len; p++)
		rows += *p == '\n';
	cr_assert_eq(rows, ctl_compat_count + 2);
	cu_buf_dispose(&out);
	cr_assert(ctl_compat_gate_known("DisableWaitForPodsReady"));
	cr_assert(ctl_compat_gate_known("AllAlpha"));
	cr_assert(ctl_compat_gate_known("WorkloadValidationForPodSetMetadata"));
	cr_assert_not(ctl_compat_gate_known("disablewaitforpodsready"));
}

Test(ctl_compat, cq_unsupported_names_each_field_set)
{
	struct api_cluster_queue cq;
	struct api_admission_check_rule rule;
	struct api_resource_flavor rf;
	char buf[512], topology[] = "default";

	memset(&cq, 0, sizeof(cq));
	cr_assert_eq(ctl_cq_unsupported(&cq, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "");

	/* Every ClusterQueue spec field is acted on: both preferences,
	 * HoldAndDrain (it drains), admission checks (they gate Admitted),
	 * fair sharing. */
	memset(&rule, 0, sizeof(rule));
	cq.spec.has_flavor_fungibility = true;
	cq.spec.flavor_fungibility.preference =
	    API_FUNG_PREF_PREEMPTION_OVER_BORROWING;
	cq.spec.stop_policy = API_STOP_HOLD_AND_DRAIN;
	cq.spec.has_admission_checks_strategy = true;
	cq.spec.admission_checks = &rule;
	cq.spec.n_admission_checks = 1;
	cq.spec.has_fair_sharing = true;
	cr_assert_eq(ctl_cq_unsupported(&cq, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "");

	/* A ResourceFlavor's topologyName is acted on (topology-aware
	 * scheduling): no warning. */
	memset(&rf, 0, sizeof(rf));
	cr_assert_eq(ctl_rf_unsupported(&rf, buf, sizeof(buf)), 0);
	rf.spec.topology_name = topology;
	cr_assert_eq(ctl_rf_unsupported(&rf, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "");
}

Test(ctl_compat, resources_loaded_and_printed_back)
{
	struct ctl_config c, again;
	cu_buf out;
	cu_error err;

	cr_assert_eq(
	    load_str(&c,
		HDR "resources:\n"
		    "  excludeResourcePrefixes: [example.com/]\n"
		    "  transformations:\n"
		    "  - input: cpu\n"
		    "    outputs: {cpu_credits: 1, mem_credits: 500m}\n"
		    "  - input: nvidia.com/gpumem\n"
		    "    strategy: Replace\n"
		    "    multiplyBy: nvidia.com/gpu\n"
		    "    outputs: {total-gpumem: 1}\n",
		&err),
	    CU_OK, "%s", err.msg);
	cr_assert_eq(c.resources.nexclude, 1);
	cr_assert_str_eq(c.resources.exclude_prefixes[0], "example.com/");
	cr_assert_eq(c.resources.ntransforms, 2);
	cr_assert_not(c.resources.transforms[0].replace, "Retain by default");
	cr_assert_eq(c.resources.transforms[0].noutputs, 2);
	cr_assert_eq(c.resources.transforms[0].output_milli[1], 500);
	cr_assert(c.resources.transforms[1].replace);
	cr_assert_str_eq(
	    c.resources.transforms[1].multiply_by, "nvidia.com/gpu");
	cr_assert_not(c.resources.ignore_undeclared);
	cu_buf_init(&out, 1 << 20);
	cr_assert_eq(ctl_config_to_yaml(&c, &out, &err), CU_OK, "%s", err.msg);
	cr_assert(strstr(out.ptr, "multiplyBy: nvidia.com/gpu") != NULL, "%s",
	    out.ptr);
	cr_assert_eq(
	    ctl_config_load_buffer(&again, out.ptr, out.len, "again", &err),
	    CU_OK, "%s", err.msg);
	cr_assert_eq(again.resources.ntransforms, 2);
	cr_assert_eq(again.resources.transforms[0].output_milli[1], 500);
	cr_assert(again.resources.transforms[1].replace);
	ctl_config_dispose(&again);
	cu_buf_dispose(&out);
	ctl_config_dispose(&c);
}

Test(ctl_compat, dra_mappings_and_gates_loaded)
{
	struct ctl_config c;
	cu_error err;

	cr_assert_eq(
	    load_str(&c,
		"apiVersion: config.kueue.x-k8s.io/v1beta2\n"
		"kind: Configuration\n"
		"featureGates:\n"
		"  KueueDRAIntegration: false\n"
		"  KueueDRAIntegrationExtendedResource: false\n"
		"  KueueDRAIntegrationPartitionableDevices: false\n"
		"resources:\n  deviceClassMappings:\n"
		"  - name: example.com/gpu\n"
		"    deviceClassNames: [gpu.example.com, b.example.com]\n",
		&err),
	    CU_OK, "%s", err.msg);
	cr_assert_not(c.dra.enabled);
	cr_assert(c.dra.reject_disabled, "rejection stays on by default");
	cr_assert_eq(c.dra.nmappings, 1);
	cr_assert_eq(c.dra.mappings[0].nclasses, 2);
	cr_assert_str_eq(c.dra.mappings[0].classes[1], "b.example.com");
	ctl_config_dispose(&c);
	cr_assert_eq(load_str(&c, HDR, &err), CU_OK, "%s", err.msg);
	cr_assert(c.dra.enabled && c.dra.extended && c.dra.partitionable);
	cr_assert_not(c.dra.consumable);
	ctl_config_dispose(&c);
}

/* controller.cacheSyncTimeout: Kueue's (controller-runtime's) 2 minutes
 * when unset or 0. */
Test(ctl_compat, cache_sync_timeout_defaults_to_two_minutes)
{
	struct ctl_config c;
	cu_error err;

	cr_assert_eq(load_str(&c, HDR, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(c.controller.cache_sync_timeout_ns, 120 * CU_NS_PER_S);
	ctl_config_dispose(&c);
	cr_assert_eq(
	    load_str(&c, HDR "controller:\n  cacheSyncTimeout: 0\n", &err),
	    CU_OK, "%s", err.msg);
	cr_assert_eq(c.controller.cache_sync_timeout_ns, 120 * CU_NS_PER_S);
	ctl_config_dispose(&c);
}
