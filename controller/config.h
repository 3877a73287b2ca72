/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/config.h - Kueue's `Configuration` file (config.kueue.x-k8s.io
 * v1beta2, and v1beta1 converted the way Kueue converts it) as cueue's
 * effective settings: strict decoding (unknown fields and wrong types are
 * errors naming the field path and YAML line), Kueue's defaults, the
 * validation cueue needs, and printing the effective configuration back as
 * v1beta2 YAML for `cueue-controller --check-config`.
 *
 * Why strict: Kueue decodes its configuration strictly, so a misspelled key
 * that Kueue would refuse must not be silently ignored here either (a
 * misspelled managedJobsNamespaceSelector would widen the namespace gate).
 * Prefix: ctl_config_.
 */
#ifndef CU_CONTROLLER_CONFIG_H
#define CU_CONTROLLER_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "lib/cu.h"
#include "namespaces/selector.h"

#define CTL_CONFIG_GROUP "config.kueue.x-k8s.io"
#define CTL_CONFIG_V1BETA2 CTL_CONFIG_GROUP "/v1beta2"
#define CTL_CONFIG_V1BETA1 CTL_CONFIG_GROUP "/v1beta1"

/* Kueue's defaults (apis/config/v1beta2/defaults.go). */
#define CTL_CONFIG_DEFAULT_NAMESPACE "kueue-system"
/* Kueue's visibilityServer.bindPort default. */
#define CTL_CONFIG_VISIBILITY_PORT 8082
#define CTL_CONFIG_SA_NAMESPACE_FILE                                           \
	"/var/run/secrets/kubernetes.io/serviceaccount/namespace"

/* Job frameworks cueue can manage (integrations.frameworks). */
#define CTL_FRAMEWORK_JOB "batch/job"
#define CTL_FRAMEWORK_JOBSET "jobset.x-k8s.io/jobset"
#define CTL_FRAMEWORK_DEPLOYMENT "deployment"

/* One resources.transformations entry (strategy defaulted to Retain). */
struct ctl_config_transform {
	char *input;	       /* [owned] */
	bool replace;	       /* Replace; false: Retain */
	char *multiply_by;     /* [owned] NULL: unset */
	char **outputs;	       /* [owned] names, file order */
	int64_t *output_milli; /* [owned] per unit of input */
	size_t noutputs;
};

/* metrics.customLabels[].sourceKind */
enum ctl_custom_kind {
	CTL_CUSTOM_CLUSTER_QUEUE = 0, /* the default */
	CTL_CUSTOM_COHORT,
	CTL_CUSTOM_LOCAL_QUEUE,
	CTL_CUSTOM_WORKLOAD,
};

/* One metrics.customLabels entry. */
struct ctl_config_custom_label {
	char *name; /* [owned] the label is custom_<name> */
	enum ctl_custom_kind kind;
	char *key;	 /* [owned] label (or annotation) key; default name */
	bool annotation; /* key is sourceAnnotationKey */
	char **tracked;	 /* [owned] trackedValues */
	size_t ntracked;
};

/* One resources.deviceClassMappings entry. */
struct ctl_config_dcm {
	char *name;	/* [owned] the quota resource */
	char **classes; /* [owned] DeviceClass names */
	size_t nclasses;
	bool counter_sources;  /* sources[].counter set */
	bool capacity_sources; /* sources[].capacity set */
	json_t *sources;       /* [owned] as written, NULL: none */
};

/* fairSharing.preemptionStrategies entries. */
enum ctl_fair_strategy {
	CTL_FAIR_LE_FINAL_SHARE = 0, /* "LessThanOrEqualToFinalShare" */
	CTL_FAIR_LT_INITIAL_SHARE,   /* "LessThanInitialShare" */
};

/* waitForPodsReady.requeuingStrategy.timestamp */
enum ctl_requeue_timestamp {
	CTL_REQUEUE_EVICTION = 0, /* "Eviction" (default) */
	CTL_REQUEUE_CREATION,	  /* "Creation" */
};

/*
 * The effective configuration: every field holds the value cueue uses,
 * defaults filled. Durations are nanoseconds (Go's time.Duration). All
 * char * members are [owned by the struct; freed by ctl_config_dispose];
 * optional ones are NULL when unset and have no default.
 */
struct ctl_config {
	char *api_version; /* the file's apiVersion (v1beta1 or v1beta2) */
	char *namespace;   /* where cueue's own objects live */
	bool manage_jobs_without_queue_name;
	/* The namespace gate (docs/architecture.md lesson 1), compiled. */
	api_selector managed_jobs_ns_selector;

	struct {
		int port;
		char *host; /* "" = all interfaces */
		char *cert_dir;
	} webhook;

	struct {
		bool leader_elect;
		int64_t lease_duration_ns;
		int64_t renew_deadline_ns;
		int64_t retry_period_ns;
		char *resource_lock;
		char *resource_name;
		char *resource_namespace; /* "" = the pod's namespace */
	} leader_election;

	struct {
		char *bind_address; /* "host:port"; "0" disables */
		bool enable_cluster_queue_resources;
		bool local_queue_metrics;
		bool has_local_queue_selector;
		api_selector local_queue_selector; /* valid if has_... */
		/* Kueue's metric feature gates (featureGates; all on unless
		 * set false): MetricsForCohorts, MetricForWorkloadCreation-
		 * Latency, UnadmittedWorkloadsObservability. */
		bool cohorts;
		bool creation_latency;
		bool unadmitted;
		/* SchedulingEquivalenceHashing (Beta, on):
		 * kueue_pending_scheduling_hashes is exported. */
		bool scheduling_hashes;
		/* RecomputeAssignmentUponPreemptionTargetsOverlap (Beta,
		 * on): que_recompute_overlap_set. */
		bool recompute_overlap;
		/* metrics.customLabels [owned] (controller/config_labels.c),
		 * applied when the CustomMetricLabels gate (alpha, off by
		 * default) is on: custom_enable. */
		bool custom_enable;
		struct ctl_config_custom_label *custom;
		size_t ncustom;
	} metrics;

	/* The visibility API's own HTTPS server (controller/vauth.h):
	 * started when the VisibilityOnDemand feature gate is on (Kueue's
	 * default); visibilityServer.bindPort (1-65535, default 8082) and
	 * bindAddress (an IP address; NULL: every interface). */
	struct {
		bool enable;
		int bind_port;
		char *bind_address; /* owned */
	} visibility;

	struct {
		char *probe_bind_address;
		char *readiness_endpoint; /* path without '/' ("readyz") */
		char *liveness_endpoint;  /* "healthz" */
	} health;

	struct {
		bool enable;
		char *webhook_service_name; /* NULL when !enable and unset */
		char *webhook_secret_name;  /* NULL when !enable and unset */
	} internal_cert;

	struct {
		bool enable; /* v1beta2: always; v1beta1: the `enable` flag */
		int64_t timeout_ns;
		bool block_admission;
		int64_t recovery_timeout_ns;
		enum ctl_requeue_timestamp timestamp;
		bool has_backoff_limit_count; /* unset = retry forever */
		int32_t backoff_limit_count;
		int32_t backoff_base_seconds;
		int32_t backoff_max_seconds;
	} wait_for_pods_ready;

	struct {
		double qps;
		int32_t burst;
	} client_connection;

	/* controller: cacheSyncTimeout (Kueue's 2 minutes when unset or 0):
	 * informers not synced that long after the controller starts
	 * reconciling (started, or leading with leader election) stop it
	 * with an error, as controller-runtime's WaitForCacheSync.
	 * groupKindConcurrency is only a bound on parallel reconciles, which
	 * one object at a time always keeps: nothing to store. */
	struct {
		int64_t cache_sync_timeout_ns;
	} controller;

	/* fairSharing: v1beta2, present; v1beta1, `enable: true`. The
	 * strategies are one of the lists Kueue accepts (v1beta1 defaults
	 * an empty list to both). */
	struct {
		bool enable;
		size_t nstrategies; /* 1 or 2 when enabled */
		enum ctl_fair_strategy strategies[2];
	} fair_sharing;

	/* admissionFairSharing: enable when the section is present (and the
	 * AdmissionFairSharing feature gate is not false). half_life_ns 0
	 * keeps no history; sampling_ns defaults to 5m. resourceWeights in
	 * file order: names [owned], weights (>= 0; unlisted resources
	 * weigh 1). */
	struct {
		bool enable;
		int64_t half_life_ns;
		int64_t sampling_ns;
		char **resources; /* [owned] */
		double *weights;  /* [owned] nweights long */
		size_t nweights;
	} admission_fair_sharing;

	/* The webhook server's TLS (Kueue's `tls`: minVersion,
	 * cipherSuites) as GnuTLS priorities (ctl_httpd_tls_priorities);
	 * NULL without a `tls` section: CTL_HTTPD_TLS_PRIORITIES. Unknown
	 * or insecure values are refused at load. [owned] */
	struct {
		char *priorities;
	} tls;

	struct {
		char **
		    frameworks; /* [owned] in file order (duplicates refused) */
		size_t nframeworks;
		bool job;	 /* batch/job enabled */
		bool jobset;	 /* jobset.x-k8s.io/jobset enabled */
		bool deployment; /* deployment enabled (its Pods via pod) */
		/* statefulset, leaderworkerset.x-k8s.io/leaderworkerset
		 * enabled (their Pods via pod, as pod groups) */
		bool statefulset, leaderworkerset;
		char **label_keys_to_copy; /* [owned] */
		size_t nlabel_keys_to_copy;
		/* externalFrameworks, "Kind.version.group" each [owned]: the
		 * kinds whose own controllers manage their Workloads; their
		 * children are never managed alone. */
		char **external;
		size_t nexternal;
	} integrations;

	/* Kueue's TAS node failure gates (featureGates), at Kueue's
	 * defaults unless set: TASFailedNodeReplacement (on: failed nodes
	 * are handled at all), TASReplaceNodeOnPodTermination (on: a
	 * NotReady or tainted node fails once the Workload's pods there
	 * ended), TASReplaceNodeOnNodeTaints (on: untolerated taints fail a
	 * node), TASReplaceNodeDueToNotReadyOverFixedTime (off: NotReady for
	 * NodeFailureDelay fails a node whatever its pods); and
	 * TASProfileMixed (on: unconstrained podSets are spread over the
	 * domains with the least free capacity first);
	 * SkipReassignmentForPodOwnedWorkloads (on: a Workload owned by a
	 * single Pod keeps its assignment when a node fails and is not
	 * requeued after an eviction). */
	struct {
		bool profile_mixed;
		bool node_replacement;
		bool on_pod_termination;
		bool on_node_taints;
		bool not_ready_fixed_time;
		bool skip_pod_owned;
	} tas_gates;

	/* Kueue's job-level gates (featureGates), on unless set:
	 * AdmissionGatedBy (the kueue.x-k8s.io/admission-gated-by
	 * annotation holds admission), ElasticJobsViaWorkloadSlices
	 * (kueue.x-k8s.io/elastic-job: scaled through Workload slices),
	 * WorkloadPriorityClassDefaulting (a job without the priority-class
	 * label gets the WorkloadPriorityClass "default" when it exists) and
	 * FinishOrphanedWorkloads (the Workload of a job that is gone is
	 * marked Finished and kept, not deleted). */
	struct {
		bool admission_gated_by;
		bool elastic_jobs;
		bool wpc_defaulting;
		bool finish_orphaned;
	} job_gates;

	/* resources: what the quota model counts of each request
	 * (controller/config_resources.c, queues/resources.c). All arrays
	 * [owned]. ignore_undeclared: quotaCheckStrategy IgnoreUndeclared
	 * (with the QuotaCheckStrategy gate on; default BlockUndeclared). */
	struct {
		char **exclude_prefixes;
		size_t nexclude;
		struct ctl_config_transform *transforms;
		size_t ntransforms;
		bool ignore_undeclared;
	} resources;

	/* Dynamic resource allocation (controller/config_dra.c,
	 * controller/dra.c): Kueue's DRA gates at their defaults unless set
	 * (KueueDRAIntegration, ...ExtendedResource, ...PartitionableDevices,
	 * KueueDRARejectWorkloadsWhenDRADisabled on; ...ConsumableCapacity
	 * off) and resources.deviceClassMappings [owned]. */
	struct {
		bool enabled;
		bool extended;
		bool partitionable;
		bool consumable;
		bool reject_disabled;
		struct ctl_config_dcm *mappings;
		size_t nmappings;
	} dra;

	/* objectRetentionPolicies.workloads (controller/retention.c): an
	 * unset duration never deletes, 0 deletes at once. */
	struct {
		bool has_after_finished;
		int64_t after_finished_ns;
		bool has_after_deactivated; /* afterDeactivatedByKueue */
		int64_t after_deactivated_ns;
	} retention;

	/* multiKueue (controller/mk*.c, controller/config_mk.c), with
	 * Kueue's defaults: origin "multikueue", gcInterval 1m,
	 * workerLostTimeout 15m, the AllAtOnce dispatcher. */
	struct {
		char *origin;		/* [owned] the origin label's value */
		int64_t gc_interval_ns; /* 0: no garbage collection */
		int64_t worker_lost_ns; /* workerLostTimeout */
		bool incremental;	/* dispatcherName Incremental */
		int step_size; /* incrementalDispatcherConfig.stepSize (3) */
	} mk;

	/* Fields Kueue accepts that cueue reads but does not act on, one
	 * message each ("line 12: multiKueue: accepted but ignored by
	 * cueue"). [owned] */
	char **warnings;
	size_t nwarnings;
};

/*
 * Load the Configuration file at path [borrowed]. On success *out is filled
 * (release with ctl_config_dispose); on failure *out is left disposed
 * (safe to dispose again) and err holds one line starting with the path,
 * e.g. "cfg.yaml: line 4: unknown field \"manageJobsWithoutQueueNme\"".
 * Errors: CU_ENOTFOUND/CU_EIO (file), CU_EPARSE (YAML, types, unknown
 * fields, apiVersion/kind), CU_EINVAL (validation), CU_EUNSUPPORTED
 * (a Kueue feature cueue does not implement, e.g. another framework),
 * CU_ETOOBIG, CU_ENOMEM.
 */
CU_MUST_CHECK int ctl_config_load(
    struct ctl_config *out, const char *path, cu_error *err);

/*
 * As ctl_config_load, and every error of the file, not only the first:
 * *errors [owned: ctl_config_errors_free] holds *nerrors lines in the
 * order found, each "path: line N: field: what" (NULL and 0 on success).
 * The schema's errors (unknown fields, wrong types) are all reported; when
 * there are none, every section's validation errors are. err holds the
 * first, followed by "; and N more errors".
 */
CU_MUST_CHECK int ctl_config_load_all(struct ctl_config *out, const char *path,
    char ***errors, size_t *nerrors, cu_error *err);
CU_MUST_CHECK int ctl_config_load_buffer_all(struct ctl_config *out,
    const char *buf, size_t len, const char *name, char ***errors,
    size_t *nerrors, cu_error *err);
void ctl_config_errors_free(char **errors, size_t n);

/*
 * As ctl_config_load for buf[0..len) [borrowed; need not be NUL-terminated].
 * name [borrowed; may be NULL] prefixes error messages ("name: line 3: ...").
 */
CU_MUST_CHECK int ctl_config_load_buffer(struct ctl_config *out,
    const char *buf, size_t len, const char *name, cu_error *err);

/*
 * As Kueue's manager loads it (cmd/kueue): the file at path [borrowed], or
 * with path NULL Kueue's defaults (an empty v1beta2 Configuration), and
 * gates [borrowed; may be NULL], the --feature-gates flag as an object of
 * booleans, taking the place of featureGates; a file that also sets
 * featureGates is refused (CU_EINVAL), as Kueue refuses it. errors and
 * nerrors as ctl_config_load_all (may be NULL).
 */
CU_MUST_CHECK int ctl_config_load_flags(struct ctl_config *out,
    const char *path, const json_t *gates, char ***errors, size_t *nerrors,
    cu_error *err);

struct que_state;

/* Hand c's resources section [borrowed] to the quota model st (before
 * any Workload is added). CU_ENOMEM. */
CU_MUST_CHECK int ctl_config_resources_apply(
    const struct ctl_config *c, struct que_state *st, cu_error *err);

/* Free everything c owns and zero it; a zeroed struct is a no-op. */
void ctl_config_dispose(struct ctl_config *c);

/*
 * Append the effective configuration to out as one YAML document of kind
 * Configuration in Kueue's v1beta2 shape (loadable again with
 * ctl_config_load_buffer, giving the same configuration). c [borrowed].
 * Errors: CU_ENOMEM, CU_ETOOBIG (out's maximum), CU_EINVAL (a selector with
 * no LabelSelector form).
 */
CU_MUST_CHECK int ctl_config_to_yaml(
    const struct ctl_config *c, cu_buf *out, cu_error *err);

/*
 * `cueue-controller --convert-config`: c as the shortest v1beta2 file that
 * loads to the same configuration (fields at v1beta2's defaults for c's
 * namespace left out; apiVersion, kind and namespace always written),
 * appended to out. Loading the result gives c again (checked: if it would
 * not, the whole effective configuration is written, as by
 * ctl_config_to_yaml). c [borrowed]. Errors as ctl_config_to_yaml.
 */
CU_MUST_CHECK int ctl_config_to_yaml_minimal(
    const struct ctl_config *c, cu_buf *out, cu_error *err);

/*
 * Kueue's default `namespace`: the trimmed contents of sa_namespace_file
 * [borrowed; NULL = CTL_CONFIG_SA_NAMESPACE_FILE] when it is readable and
 * non-empty, else "kueue-system". [owned: cu_free]; NULL on ENOMEM.
 */
char *ctl_config_operator_namespace(const char *sa_namespace_file);

/* Go-style duration text ("15s", "30m0s", "1h0m0s", "1.5s", "0s") into
 * out[size]. Exposed for tests and log messages. */
void ctl_config_format_duration(int64_t ns, char *out, size_t size);

/* Parse a Go duration ("1h30m", "2s", "-5m", "1.5h", "0") into ns.
 * CU_EPARSE / CU_ERANGE with a message naming the input. s [borrowed]. */
CU_MUST_CHECK int ctl_config_parse_duration(
    const char *s, int64_t *out, cu_error *err);

/* ---- controller/compat.c: what cueue does with each Kueue field -------- */

enum ctl_compat_level {
	CTL_COMPAT_SUPPORTED = 0, /* acts as in Kueue */
	CTL_COMPAT_PARTIAL,	  /* acts, with the difference in `note` */
	CTL_COMPAT_NOT_YET,	  /* accepted, not acted on; `note` says
				     what happens instead */
};

/* When the configuration loader (or the ClusterQueue handler) warns. */
enum ctl_compat_warn {
	CTL_COMPAT_WARN_NEVER = 0,    /* acted on, or refused at load */
	CTL_COMPAT_WARN_IF_SET,	      /* the field is present */
	CTL_COMPAT_WARN_IF_NONEMPTY,  /* present and not "" / [] / {} */
	CTL_COMPAT_WARN_IF_TRUE,      /* a bool set to true */
	CTL_COMPAT_WARN_PODS_READY,   /* waitForPodsReady is in effect
					 (v1beta2: on by default) */
	CTL_COMPAT_WARN_FAIR_SHARING, /* v1beta2: present; v1beta1: enable */
	CTL_COMPAT_WARN_EVENT,	      /* ClusterQueue, ResourceFlavor: an
					 UnsupportedField event
					 (ctl_cq/rf_unsupported) */
	CTL_COMPAT_WARN_TABLE_ONLY,   /* listed for README; nothing is
					 emitted (fields of LocalQueues and
					 Workloads) */
};

/* One row of the compatibility table. All strings static. */
struct ctl_compat {
	const char *kind;  /* "Configuration", "ClusterQueue" */
	const char *field; /* dotted path, e.g. "waitForPodsReady" */
	enum ctl_compat_level level;
	enum ctl_compat_warn warn;
	const char *note; /* "" when supported, unless how needs a word */
};

/* The table, in README order; ctl_compat_count rows. */
extern const struct ctl_compat ctl_compat_table[];
extern const size_t ctl_compat_count;

/* "supported", "partial" or "not yet". */
const char *ctl_compat_level_name(enum ctl_compat_level l);

/* The row for kind and field [borrowed], or NULL. */
const struct ctl_compat *ctl_compat_find(const char *kind, const char *field);

/* Is name [borrowed] a feature gate Kueue accepts? Does cueue act on it? */
bool ctl_compat_gate_known(const char *name);
bool ctl_compat_gate_honoured(const char *name);

/* Append the table to out as the Markdown of README's "Kueue
 * compatibility" section (header row, then one row per entry).
 * CU_ENOMEM / CU_ETOOBIG. */
CU_MUST_CHECK int ctl_compat_markdown(cu_buf *out, cu_error *err);

struct api_cluster_queue;

/*
 * The ClusterQueue spec fields set on cq [borrowed] that cueue does not act
 * on, as "field: what happens instead" joined by "; " into buf[size]
 * (truncated, always NUL-terminated when size > 0). Returns how many.
 * Pure; for the UnsupportedField Warning event.
 */
int ctl_cq_unsupported(
    const struct api_cluster_queue *cq, char *buf, size_t size);

struct api_resource_flavor;

/* The same for a ResourceFlavor's spec fields (spec.topologyName). */
int ctl_rf_unsupported(
    const struct api_resource_flavor *rf, char *buf, size_t size);

#endif /* CU_CONTROLLER_CONFIG_H */
