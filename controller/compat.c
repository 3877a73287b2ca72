/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/compat.c - the one list of Kueue fields cueue knows, with how
 * far cueue acts on each (supported, partial, not yet): the Configuration,
 * the ClusterQueue and Cohort specs, and the LocalQueue and Workload fields
 * known to differ. Also the feature gates Kueue accepts, and the ClusterQueue
 * spec fields set on an object that cueue does not act on (ctl_cq_unsupported),
 * and Kueue's metric families cueue does not export (kind "Metric").
 * The configuration loader warns from this table, `cueue-controller
 * --compat-table` prints it, and a test checks README's "Kueue
 * compatibility" table against that output. See controller/config.h.
 */
#include <stdio.h>
#include <string.h>

#include "api/model.h"
#include "controller/config.h"

#define S CTL_COMPAT_SUPPORTED
#define P CTL_COMPAT_PARTIAL
#define N CTL_COMPAT_NOT_YET

/* Configuration paths are relative to the file's root; ClusterQueue ones
 * to the object. Warn modes say when the loader warns about an entry. */
const struct ctl_compat ctl_compat_table[] = {
    {"Configuration", "namespace", S, CTL_COMPAT_WARN_NEVER, ""},
    {"Configuration", "manageJobsWithoutQueueName", S, CTL_COMPAT_WARN_NEVER,
	""},
    {"Configuration", "managedJobsNamespaceSelector", S, CTL_COMPAT_WARN_NEVER,
	""},
    {"Configuration", "webhook", S, CTL_COMPAT_WARN_NEVER, ""},
    {"Configuration", "leaderElection", P, CTL_COMPAT_WARN_NEVER,
	"resourceLock: only leases (others are refused at load)"},
    {"Configuration", "metrics.bindAddress", S, CTL_COMPAT_WARN_NEVER, ""},
    {"Configuration", "metrics.enableClusterQueueResources", S,
	CTL_COMPAT_WARN_NEVER, ""},
    {"Configuration", "metrics.localQueueMetrics.enable", S,
	CTL_COMPAT_WARN_NEVER, ""},
    {"Configuration", "metrics.localQueueMetrics.localQueueSelector", S,
	CTL_COMPAT_WARN_NEVER, ""},
    {"Configuration", "metrics.customLabels", P, CTL_COMPAT_WARN_NEVER,
	"with CustomMetricLabels (alpha, off by default as in Kueue): "
	"ClusterQueue, Cohort and LocalQueue labels on Kueue's metrics as in "
	"Kueue; Workload-sourced labels on the families Kueue gives them "
	"(kueue_admitted_active_workloads, kueue_pending_workloads, "
	"kueue_local_queue_admitted_active_workloads, "
	"kueue_local_queue_admitted_workloads_total, "
	"kueue_local_queue_admission_wait_time_seconds); label keys are "
	"copied from the job onto the Workload, an annotation missing on the "
	"Workload is read from its job"},
    {"Configuration", "health.healthProbeBindAddress", S, CTL_COMPAT_WARN_NEVER,
	""},
    {"Configuration", "health.readinessEndpointName", S, CTL_COMPAT_WARN_NEVER,
	""},
    {"Configuration", "health.livenessEndpointName", S, CTL_COMPAT_WARN_NEVER,
	""},
    {"Configuration", "pprofBindAddress", P, CTL_COMPAT_WARN_IF_NONEMPTY,
	"accepted, meaningless here: Go's pprof profiles have no equivalent "
	"in a C program, so nothing is served; profile with perf(1), read the "
	"cueue_* metrics (docs/performance.md)"},
    {"Configuration", "controller.groupKindConcurrency", S,
	CTL_COMPAT_WARN_NEVER,
	"a bound on parallel reconciles per kind: cueue reconciles one object "
	"at a time, within any bound"},
    {"Configuration", "controller.cacheSyncTimeout", S, CTL_COMPAT_WARN_NEVER,
	""},
    {"Configuration", "tls.minVersion", S, CTL_COMPAT_WARN_NEVER, ""},
    {"Configuration", "tls.cipherSuites", S, CTL_COMPAT_WARN_NEVER, ""},
    {"Configuration", "tls.curvePreferences", P, CTL_COMPAT_WARN_NEVER,
	"Go's curve IDs 23, 24, 25, 29 (P-256, P-384, P-521, X25519) become "
	"the GnuTLS groups offered, in order, by the webhook, metrics and "
	"visibility servers; the post-quantum hybrids (4587-4589) are refused: "
	"GnuTLS 3.7 lacks them"},
    {"Configuration", "internalCertManagement", S, CTL_COMPAT_WARN_NEVER, ""},
    {"Configuration", "waitForPodsReady", S, CTL_COMPAT_WARN_NEVER, ""},
    {"Configuration", "waitForPodsReady.requeuingStrategy", S,
	CTL_COMPAT_WARN_NEVER, ""},
    {"Configuration", "clientConnection", S, CTL_COMPAT_WARN_NEVER, ""},
    {"Configuration", "integrations.frameworks", P, CTL_COMPAT_WARN_NEVER,
	"batch/job, jobset.x-k8s.io/jobset, kubeflow.org/{pytorchjob,"
	"tfjob,xgboostjob,paddlejob,jaxjob,mpijob}, "
	"ray.io/{rayjob,raycluster,rayservice}, "
	"workload.codeflare.dev/appwrapper, "
	"sparkoperator.k8s.io/sparkapplication, "
	"trainer.kubeflow.org/trainjob, "
	"pod (plain Pods and pod groups, with Kueue's pod finalizer; "
	"replacement Pods own the group's Workload), deployment (its Pods "
	"one by "
	"one), statefulset (its Pods one pod group; scaled only to and from "
	"zero, its pod spec shape immutable, as Kueue; the group's "
	"Workload is Kueue's, "
	"statefulset-<name>-<hash of name and uid>, owned by the "
	"StatefulSet, kept across preemption and on hold at zero replicas) "
	"and leaderworkerset.x-k8s.io/leaderworkerset (a Workload per "
	"group index as Kueue's, leaderworkerset-<name>-<index>-<hash>, "
	"pod sets leader and worker, owned by the LeaderWorkerSet, kept "
	"across preemption, added and deleted as it scales; template "
	"shapes and size immutable); others are refused at load; "
	"docs/frameworks.md"},
    {"Configuration", "integrations.externalFrameworks", S,
	CTL_COMPAT_WARN_NEVER,
	"Kind.version.group each; Workloads owned by those kinds are queued "
	"and admitted, and their children are never managed alone "
	"(docs/frameworks.md)"},
    {"Configuration", "integrations.podOptions", N, CTL_COMPAT_WARN_IF_SET,
	"deprecated; ignored"},
    {"Configuration", "integrations.labelKeysToCopy", S, CTL_COMPAT_WARN_NEVER,
	""},
    {"Configuration", "queueVisibility", S, CTL_COMPAT_WARN_NEVER,
	"v1beta1 only; accepted and dropped as Kueue does at HEAD (its "
	"ClusterQueue status.pendingWorkloadsStatus is never written; the "
	"visibility API serves pending Workloads)"},
    {"Configuration", "multiKueue", P, CTL_COMPAT_WARN_NEVER,
	"origin, gcInterval, workerLostTimeout, dispatcherName (AllAtOnce, "
	"Incremental with incrementalDispatcherConfig.stepSize; external "
	"dispatchers dispatch as AllAtOnce); batch/Job, JobSet, the "
	"Kubeflow jobs, MPIJob, RayJob, RayCluster, RayService, AppWrapper "
	"and TrainJob are dispatched through Kueue's adapters "
	"(docs/multikueue.md); Pods, pod groups (StatefulSet, "
	"LeaderWorkerSet) and SparkApplication are not (their check is "
	"Rejected: no adapter), nor RayCluster elastic replica sync and "
	"RayService serveConfigV2 forwarding; externalFrameworks and "
	"clusterProfile are not acted on"},
    {"Configuration", "fairSharing", S, CTL_COMPAT_WARN_NEVER, ""},
    {"Configuration", "admissionFairSharing", S, CTL_COMPAT_WARN_NEVER, ""},
    {"Configuration", "resources.excludeResourcePrefixes", S,
	CTL_COMPAT_WARN_NEVER, ""},
    {"Configuration", "resources.transformations", S, CTL_COMPAT_WARN_NEVER,
	""},
    {"Configuration", "resources.deviceClassMappings", P, CTL_COMPAT_WARN_NEVER,
	"devices of ResourceClaimTemplates (Exactly, count) and "
	"DRA-backed extended resources are charged to the mapping as in "
	"Kueue (KueueDRAIntegration, ...ExtendedResource); counter "
	"sources (...PartitionableDevices) charge, as Kueue, the "
	"largest value of the counter among the ResourceSlice devices "
	"the CEL selectors match, times the request's count (cueue's "
	"CEL subset, docs/kueue-gates.md: a selector outside it leaves "
	"the Workload Misconfigured naming the construct); capacity "
	"sources (alpha ...ConsumableCapacity) are not counted: "
	"Workloads using them are Misconfigured; every request's CEL "
	"selectors are checked against the ResourceSlice devices as "
	"Kueue (fewer matching devices than requested: Misconfigured "
	"with Kueue's message)"},
    {"Configuration", "resources.quotaCheckStrategy", S, CTL_COMPAT_WARN_NEVER,
	""},
    {"Configuration", "featureGates", P, CTL_COMPAT_WARN_NEVER,
	"DisableWaitForPodsReady, AdmissionFairSharing, VisibilityOnDemand, "
	"the metric gates MetricsForCohorts, MetricForWorkloadCreationLatency, "
	"UnadmittedWorkloadsObservability (its reasons, "
	"TopologyPlacementFailed "
	"included), CustomMetricLabels, QuotaCheckStrategy, the job gates "
	"WorkloadPriorityClassDefaulting and FinishOrphanedWorkloads, the DRA "
	"gates "
	"KueueDRAIntegration, KueueDRAIntegrationExtendedResource, "
	"KueueDRARejectWorkloadsWhenDRADisabled (with Kueue's dependency "
	"check), TASProfileMixed, and the TAS node failure gates "
	"TASFailedNodeReplacement, TASReplaceNodeOnPodTermination, "
	"TASReplaceNodeOnNodeTaints, TASReplaceNodeDueToNotReadyOverFixedTime, "
	"SkipReassignmentForPodOwnedWorkloads; "
	"what cueue does with each of Kueue's default-on gates is in "
	"docs/kueue-gates.md; other known gates set in the file warn, unknown "
	"ones are refused"},
    {"Configuration", "objectRetentionPolicies", S, CTL_COMPAT_WARN_NEVER, ""},
    {"Configuration", "visibilityServer", S, CTL_COMPAT_WARN_NEVER, ""},
    {"ClusterQueue", "spec.resourceGroups", S, CTL_COMPAT_WARN_NEVER, ""},
    {"ClusterQueue", "spec.resourceGroups[].coveredResources: pods", S,
	CTL_COMPAT_WARN_NEVER, ""},
    {"ClusterQueue", "spec.cohortName", S, CTL_COMPAT_WARN_NEVER, ""},
    {"ClusterQueue", "spec.queueingStrategy", S, CTL_COMPAT_WARN_NEVER, ""},
    {"ClusterQueue", "spec.namespaceSelector", S, CTL_COMPAT_WARN_NEVER, ""},
    {"ClusterQueue", "spec.preemption", S, CTL_COMPAT_WARN_NEVER, ""},
    {"ClusterQueue", "spec.flavorFungibility.whenCanBorrow", S,
	CTL_COMPAT_WARN_NEVER, ""},
    {"ClusterQueue", "spec.flavorFungibility.whenCanPreempt", S,
	CTL_COMPAT_WARN_NEVER, ""},
    {"ClusterQueue", "spec.flavorFungibility.preference", S,
	CTL_COMPAT_WARN_NEVER, ""},
    {"ClusterQueue", "spec.stopPolicy", S, CTL_COMPAT_WARN_NEVER, ""},
    {"ClusterQueue", "spec.admissionChecksStrategy", P, CTL_COMPAT_WARN_NEVER,
	"checks (per flavor) gate Admitted, their podSetUpdates are applied; "
	"the ProvisioningRequest and MultiKueue controllers are built in "
	"(MultiKueue: every framework with a Kueue adapter but Pods, "
	"StatefulSet and LeaderWorkerSet; docs/multikueue.md)"},
    {"ClusterQueue", "spec.fairSharing", S, CTL_COMPAT_WARN_NEVER, ""},
    {"ClusterQueue", "spec.admissionScope", S, CTL_COMPAT_WARN_NEVER, ""},
    {"Cohort", "spec.fairSharing", S, CTL_COMPAT_WARN_NEVER, ""},
    {"LocalQueue", "spec.clusterQueue", S, CTL_COMPAT_WARN_NEVER, ""},
    {"LocalQueue", "spec.stopPolicy", S, CTL_COMPAT_WARN_NEVER, ""},
    {"LocalQueue", "spec.fairSharing", S, CTL_COMPAT_WARN_NEVER, ""},
    {"ResourceFlavor", "spec.topologyName", P, CTL_COMPAT_WARN_NEVER,
	"topology-aware placement (required, preferred, unconstrained, "
	"implied, slices, podSet groups), tolerations, nodeSelector and "
	"required node affinity, gating and ungating, failed node replacement "
	"or eviction, the Mixed profile (TASProfileMixed); no balanced "
	"placement, no LeastFreeCapacity profile (docs/tas.md)"},
    {"Workload", "spec.podSets[].minCount", S, CTL_COMPAT_WARN_NEVER, ""},
    {"Workload", "spec.podSets[].topologyRequest", S,
	CTL_COMPAT_WARN_TABLE_ONLY,
	"built from the podset-*-topology and podset-group-name annotations "
	"with the index labels Kueue's frameworks set (podIndexLabel; "
	"subGroupIndexLabel and subGroupCount for JobSets), pod groups and "
	"AppWrapper components (its tas-* pod set annotations) included; "
	"multi-layer slice constraints (TASMultiLayerTopology, beta and on in "
	"Kueue) are written from their annotation and placed, one to three "
	"layers (docs/tas.md)"},
    {"Workload", "spec.maximumExecutionTimeSeconds", S, CTL_COMPAT_WARN_NEVER,
	""},
    {"Workload", "spec.active", S, CTL_COMPAT_WARN_NEVER, ""},
    {"Workload", "status.requeueState", S, CTL_COMPAT_WARN_NEVER, ""},
    {"Workload", "status.reclaimablePods", S, CTL_COMPAT_WARN_NEVER, ""},
    /* Kueue's job contract (jobframework): what a job may do. */
    {"Job", "pod sets changed after admission", S, CTL_COMPAT_WARN_NEVER, ""},
    {"Job", "kueue.x-k8s.io/prebuilt-workload-name", S, CTL_COMPAT_WARN_NEVER,
	""},
    {"Job", "kueue.x-k8s.io/admission-gated-by", S, CTL_COMPAT_WARN_NEVER, ""},
    {"Job", "kueue.x-k8s.io/elastic-job", S, CTL_COMPAT_WARN_NEVER,
	"slices, and the elastic-job scheduling gate on the Job's pods"},
};

const size_t ctl_compat_count =
    sizeof(ctl_compat_table) / sizeof(ctl_compat_table[0]);

const char *ctl_compat_level_name(enum ctl_compat_level l)
{
	switch (l) {
	case CTL_COMPAT_SUPPORTED:
		return "supported";
	case CTL_COMPAT_PARTIAL:
		return "partial";
	case CTL_COMPAT_NOT_YET:
		return "not yet";
	}
	return "?";
}

const struct ctl_compat *ctl_compat_find(const char *kind, const char *field)
{
	size_t i;

	for (i = 0; i < ctl_compat_count; i++)
		if (strcmp(ctl_compat_table[i].kind, kind) == 0 &&
		    strcmp(ctl_compat_table[i].field, field) == 0)
			return &ctl_compat_table[i];
	return NULL;
}

/* Kueue's feature gates (pkg/features; names only), plus component-base's
 * AllAlpha/AllBeta and logging gates that Kueue's gate set also accepts.
 * Sorted for bsearch. */
static const char *const kueue_gates[] = {
    "AdmissionFairSharing",
    "AdmissionGatedBy",
    "AllAlpha",
    "AllBeta",
    "AssignQueueLabelsForPods",
    "CleanupProvisioningRequestsOnEviction",
    "ConcurrentAdmission",
    "ConfigurableResourceTransformations",
    "ContextualLogging",
    "CustomMetricLabels",
    "DeferRayServiceFinalizationForRedisCleanup",
    "DisableWaitForPodsReady",
    "DynamicQuotaOrchestration",
    "DynamicResourceAllocation",
    "ElasticJobsViaWorkloadSlices",
    "ElasticJobsViaWorkloadSlicesWithPartialReplicaScaleUp",
    "ElasticJobsViaWorkloadSlicesWithTAS",
    "FailureRecoveryPolicy",
    "FairSharingPreemptWithinNominal",
    "FairSharingPrioritizeNonBorrowing",
    "FairSharingReevaluatePreemptionCandidates",
    "FastQuotaReleaseInPodIntegration",
    "FinishOrphanedWorkloads",
    "FlavorFungibility",
    "FlavorFungibilityImplicitPreferenceDefault",
    "FlavorFungibilityPreserveScanProgress",
    "HierarchicalCohorts",
    "KueueDRAIntegration",
    "KueueDRAIntegrationConsumableCapacity",
    "KueueDRAIntegrationExtendedResource",
    "KueueDRAIntegrationPartitionableDevices",
    "KueueDRARejectWorkloadsWhenDRADisabled",
    "LWSImmutableGroupSize",
    "LendingLimit",
    "LocalQueueDefaulting",
    "LocalQueueMetrics",
    "LoggingAlphaOptions",
    "LoggingBetaOptions",
    "ManagedJobsNamespaceSelectorAlwaysRespected",
    "MetricForWorkloadCreationLatency",
    "MetricsForCohorts",
    "MultiKueue",
    "MultiKueueAdaptersForCustomJobs",
    "MultiKueueAllowInsecureKubeconfigs",
    "MultiKueueBatchJobClearingTTLSecondsAfterFinishedOnWorkerCluster",
    "MultiKueueBatchJobWithManagedBy",
    "MultiKueueClusterProfile",
    "MultiKueueIncrementalDispatcherConfig",
    "MultiKueueIncrementalDispatcherRespectConfigOrder",
    "MultiKueueKubeConfigPathValidation",
    "MultiKueueManagerQuotaAutomation",
    "MultiKueueOrchestratedPreemption",
    "MultiKueueRemoteSpecSync",
    "ObjectRetentionPolicies",
    "PartialAdmission",
    "PodIntegrationValidateGroupOwner",
    "PrioritizePreemptorWorkloads",
    "PriorityBoost",
    "PrioritySortingWithinCohort",
    "PropagateBatchJobLabelsToWorkload",
    "QuotaCheckStrategy",
    "ReclaimablePods",
    "RecomputeAssignmentUponPreemptionTargetsOverlap",
    "RejectUpdatesToCQWithInvalidOnFlavors",
    "RemoveFinalizersWithStrictPatch",
    "ReservedResourceNameValidation",
    "SanitizePodSets",
    "SchedulerLibraryIntegration",
    "SchedulingEquivalenceHashing",
    "SchedulingEquivalenceHashingIgnorePodSetName",
    "ShortWorkloadNames",
    "SkipAncestorCheckForDeletedWorkloads",
    "SkipReassignmentForPodOwnedWorkloads",
    "SparkApplicationIntegration",
    "TASAssignmentsEncodingByHostnamePrefix",
    "TASBalancedPlacement",
    "TASCacheNodeMatchResults",
    "TASCacheTopologyTree",
    "TASCachingRemainingResources",
    "TASFailedNodeReplacement",
    "TASFailedNodeReplacementFailFast",
    "TASHandleOverlappingFlavors",
    "TASMultiLayerTopology",
    "TASProfileLeastFreeCapacity",
    "TASProfileMixed",
    "TASRecomputeAssignmentWithinSchedulingCycle",
    "TASReplaceNodeDueToNotReadyOverFixedTime",
    "TASReplaceNodeOnNodeTaints",
    "TASReplaceNodeOnPodTermination",
    "TASRespectNodeAffinityPreferred",
    "TASValidateWorkloadSliceSize",
    "TLSOptions",
    "TopologyAwareScheduling",
    "UnadmittedWorkloadsExplicitStatus",
    "UnadmittedWorkloadsObservability",
    "ValidateRayAndSparkJobUpdates",
    "VectorizedResourceRequests",
    "VisibilityOnDemand",
    "WorkloadIdentifierAnnotations",
    "WorkloadPriorityClassDefaulting",
    "WorkloadRequestUseMergePatch",
    "WorkloadValidateResourcesAreNonNegative",
    "WorkloadValidationForPodSetMetadata",
};

bool ctl_compat_gate_known(const char *name)
{
	size_t lo = 0, hi = sizeof(kueue_gates) / sizeof(kueue_gates[0]);

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(name, kueue_gates[mid]);

		if (c == 0)
			return true;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return false;
}

bool ctl_compat_gate_honoured(const char *name)
{
	static const char *const honoured[] = {
	    "AdmissionFairSharing",
	    "AdmissionGatedBy",
	    "CustomMetricLabels",
	    "DisableWaitForPodsReady",
	    "ElasticJobsViaWorkloadSlices",
	    "FinishOrphanedWorkloads",
	    "KueueDRAIntegration",
	    "KueueDRAIntegrationExtendedResource",
	    "KueueDRARejectWorkloadsWhenDRADisabled",
	    "MetricForWorkloadCreationLatency",
	    "MetricsForCohorts",
	    "QuotaCheckStrategy",
	    "RecomputeAssignmentUponPreemptionTargetsOverlap",
	    "SchedulingEquivalenceHashing",
	    "SkipReassignmentForPodOwnedWorkloads",
	    "TASFailedNodeReplacement",
	    "TASProfileMixed",
	    "TASReplaceNodeDueToNotReadyOverFixedTime",
	    "TASReplaceNodeOnNodeTaints",
	    "TASReplaceNodeOnPodTermination",
	    "UnadmittedWorkloadsObservability",
	    "VisibilityOnDemand",
	    "WorkloadPriorityClassDefaulting",
	};
	size_t i;

	for (i = 0; i < sizeof(honoured) / sizeof(honoured[0]); i++)
		if (strcmp(name, honoured[i]) == 0)
			return true;
	return false;
}

int ctl_compat_markdown(cu_buf *out, cu_error *err)
{
	size_t i;
	int rc;

	rc = cu_buf_addf(out, "| Kind | Field | Support | Notes |\n"
			      "|---|---|---|---|\n");
	for (i = 0; rc == CU_OK && i < ctl_compat_count; i++) {
		const struct ctl_compat *e = &ctl_compat_table[i];

		rc = cu_buf_addf(out, "| %s | `%s` | %s | %s |\n", e->kind,
		    e->field, ctl_compat_level_name(e->level),
		    e->note[0] != '\0' ? e->note : "-");
	}
	if (rc != CU_OK)
		return cu_error_set(err, rc, "compatibility table: %s",
		    rc == CU_ENOMEM ? "out of memory" : "too big");
	return CU_OK;
}

/* Every ClusterQueue spec field cueue accepts is acted on now (fair
 * sharing, admission checks and flavorFungibility.preference were the
 * last ones); a field added to the table as not acted on gets its line
 * here: "field: note", "; "-separated, from ctl_compat_find. */
int ctl_cq_unsupported(
    const struct api_cluster_queue *cq, char *buf, size_t size)
{
	(void)cq;
	if (size > 0)
		buf[0] = '\0';
	return 0;
}

/* The same for ResourceFlavors: spec.topologyName is acted on now
 * (topology-aware scheduling, controller/tas.c). */
int ctl_rf_unsupported(
    const struct api_resource_flavor *rf, char *buf, size_t size)
{
	(void)rf;
	if (size > 0)
		buf[0] = '\0';
	return 0;
}
