/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/model.h - the typed object model cueue reads and writes: Kueue
 * kueue.x-k8s.io/v1beta2 kinds (ClusterQueue, LocalQueue, ResourceFlavor,
 * Workload, WorkloadPriorityClass, Cohort), the parts of batch/v1 Job,
 * jobset.x-k8s.io/v1alpha2 JobSet, v1 Namespace, scheduling.k8s.io/v1
 * PriorityClass, coordination.k8s.io/v1 Lease and v1 Event that cueue
 * needs, their JSON codecs (jansson), pod-set extraction as Kueue does it,
 * Workload names and priority resolution.
 *
 * Round-trip contract. Every object keeps the JSON document it was decoded
 * from (`raw`). Encoding starts from a deep copy of it and overwrites only
 * the modelled fields, so fields cueue does not model (and fields added by
 * newer API versions) survive a read-modify-write. Arrays of objects are
 * matched by position, so unknown fields inside list elements survive too.
 * Whether an empty list/map is written as `[]`/`{}` or left out follows the
 * source document. Quantities, timestamps and label selectors whose value
 * did not change keep their original spelling.
 *
 * Optional scalars carry a `has_` flag; optional strings are NULL when
 * absent; enums have an UNSET (0) value meaning "absent", and the
 * api_*_effective helpers return the value Kueue defaults to.
 *
 * Strings, arrays and maps inside these structs are owned by the struct and
 * freed by its dispose function; they are allocated with cu_malloc and may
 * be replaced by callers with cu_strdup'ed values (the dispose function
 * cu_free's them). json_t members are owned references (json_decref).
 *
 * Prefix: api_ (functions), API_ (enum values and macros).
 */
#ifndef CU_API_MODEL_H
#define CU_API_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "api/labelselector.h"
#include "api/quantity.h"
#include "lib/cu.h"

/* ---- common building blocks ------------------------------------------ */

struct api_kv {
	char *key;   /* [owned] */
	char *value; /* [owned] */
};

/* map[string]string (labels, annotations, nodeSelector, flavors). Keys
 * are unique; order is the source order (JSON object order is not
 * significant). */
struct api_strmap {
	struct api_kv *items; /* [owned] */
	size_t n;
};

/* Value of key [borrowed, valid until the map changes] or NULL. */
const char *api_strmap_get(const struct api_strmap *m, const char *key);
/* Insert or replace; key/value [borrowed, copied]. CU_ENOMEM. */
CU_MUST_CHECK int api_strmap_set(
    struct api_strmap *m, const char *key, const char *value, cu_error *err);
void api_strmap_dispose(struct api_strmap *m);

struct api_strlist {
	char **items; /* [owned] */
	size_t n;
};

void api_strlist_dispose(struct api_strlist *l);

/* corev1.ResourceList: resource name -> quantity. */
struct api_qentry {
	char *name; /* [owned] */
	struct api_quantity q;
};

struct api_qmap {
	struct api_qentry *items; /* [owned] */
	size_t n;
};

/* Quantity of resource `name` [borrowed, valid until the map changes] or
 * NULL. */
const struct api_quantity *api_qmap_get(
    const struct api_qmap *m, const char *name);
void api_qmap_dispose(struct api_qmap *m);

/* metav1.Condition (Kueue and JobSet) and batch/v1 JobCondition. */
enum api_cond_status {
	API_COND_UNSET = 0,
	API_COND_TRUE,
	API_COND_FALSE,
	API_COND_UNKNOWN,
};

struct api_condition {
	char *type; /* [owned] required */
	enum api_cond_status status;
	char *reason;  /* [owned] */
	char *message; /* [owned] */
	bool has_last_transition;
	int64_t last_transition_ns;
	bool has_observed_generation;
	int64_t observed_generation;
	bool has_last_probe; /* batch/v1 JobCondition only */
	int64_t last_probe_ns;
};

struct api_conditions {
	struct api_condition *items; /* [owned] */
	size_t n;
};

/* The condition of that type [borrowed, valid until cs changes] or NULL. */
const struct api_condition *api_conditions_find(
    const struct api_conditions *cs, const char *type);
/* True when the condition exists with status True. */
bool api_conditions_true(const struct api_conditions *cs, const char *type);
/*
 * The status.conditions of any object obj [borrowed] decoded into out
 * [api_conditions_dispose it], for a reader that needs nothing else of
 * the object (kubectl-cueue's listings). Only type and status are
 * required of each condition. CU_OK (no conditions: out empty),
 * CU_EINVAL naming the bad field, CU_ENOMEM; out is empty on failure.
 */
CU_MUST_CHECK int api_conditions_decode(
    const json_t *obj, struct api_conditions *out, cu_error *err);
/* As api_conditions_decode, from the status object status [borrowed; may
 * be NULL: no conditions] itself (a status being written or compared). */
CU_MUST_CHECK int api_conditions_decode_status(
    const json_t *status, struct api_conditions *out, cu_error *err);
/* Free what cs holds and leave it empty. */
void api_conditions_dispose(struct api_conditions *cs);
/* cs [borrowed] written as status [borrowed, changed]'s "conditions"
 * (metav1.Condition, or with job_style a Job's or Pod's with
 * lastProbeTime; none: not written, an existing array emptied), e.g.
 * to start a status patch from the decoded list. CU_ENOMEM. */
CU_MUST_CHECK int api_conditions_encode_status(json_t *status,
    const struct api_conditions *cs, bool job_style, cu_error *err);

/* Kueue's limit of a condition message (metav1.Condition's 32 KiB). */
#define API_CONDITION_MESSAGE_MAX (32 * 1024)

/* A condition to set on an object's wire form. */
struct api_condition_set {
	const char *type; /* [borrowed] */
	enum api_cond_status status;
	const char *reason;  /* [borrowed] NULL: "" */
	const char *message; /* [borrowed] NULL: "" */
	bool has_observed_generation;
	int64_t observed_generation;
};

/*
 * apimeta.SetStatusCondition on the wire form, the one writer of a
 * condition: in status [borrowed, modified], the "conditions" array
 * (created when missing) gets c [borrowed]. A new condition is appended
 * with the key order Kueue writes (type, status, observedGeneration,
 * lastTransitionTime = now [borrowed, RFC 3339], reason, message); an
 * existing one of its type changes lastTransitionTime only when its
 * status changes, and takes c's reason, message and observedGeneration
 * (removed when c has none). A message longer than
 * API_CONDITION_MESSAGE_MAX is cut as Kueue's TruncateConditionMessage
 * cuts it (limit - 4 bytes on a UTF-8 boundary, then " ..."). CU_ENOMEM
 * (status may then be partly changed), CU_EINVAL (no type or status).
 */
CU_MUST_CHECK int api_conditions_set_json(json_t *status,
    const struct api_condition_set *c, const char *now, cu_error *err);

struct api_owner_ref {
	char *api_version; /* [owned] */
	char *kind;	   /* [owned] */
	char *name;	   /* [owned] */
	char *uid;	   /* [owned] */
	bool has_controller;
	bool controller;
	bool has_block_owner_deletion;
	bool block_owner_deletion;
};

/* metav1.ObjectMeta: the fields cueue reads or writes. */
struct api_meta {
	char *name;		/* [owned] */
	char *generate_name;	/* [owned] */
	char *namespace_;	/* [owned] */
	char *uid;		/* [owned] */
	char *resource_version; /* [owned] */
	bool has_generation;
	int64_t generation;
	struct api_strmap labels;
	struct api_strmap annotations;
	struct api_owner_ref *owner_refs; /* [owned] */
	size_t n_owner_refs;
	struct api_strlist finalizers;
	bool has_creation;
	int64_t creation_ns;
	bool has_deletion;
	int64_t deletion_ns;
};

/* The controller owner reference [borrowed] or NULL. */
const struct api_owner_ref *api_meta_controller(const struct api_meta *m);

enum api_taint_effect {
	API_EFFECT_UNSET = 0, /* "" or absent: every effect */
	API_EFFECT_NO_SCHEDULE,
	API_EFFECT_PREFER_NO_SCHEDULE,
	API_EFFECT_NO_EXECUTE,
};

enum api_toleration_op {
	API_TOL_OP_UNSET = 0, /* Equal */
	API_TOL_OP_EQUAL,
	API_TOL_OP_EXISTS,
};

struct api_toleration {
	char *key; /* [owned] */
	enum api_toleration_op op;
	char *value; /* [owned] */
	enum api_taint_effect effect;
	bool has_toleration_seconds;
	int64_t toleration_seconds;
};

struct api_taint {
	char *key;		      /* [owned] required */
	char *value;		      /* [owned] */
	enum api_taint_effect effect; /* required */
	bool has_time_added;
	int64_t time_added_ns;
};

/* ---- Kueue: quotas shared by ClusterQueue and Cohort ----------------- */

struct api_resource_quota {
	char *name;			   /* [owned] required */
	struct api_quantity nominal_quota; /* required */
	bool has_borrowing_limit;
	struct api_quantity borrowing_limit;
	bool has_lending_limit;
	struct api_quantity lending_limit;
};

struct api_flavor_quotas {
	char *name;			      /* [owned] required */
	struct api_resource_quota *resources; /* [owned] */
	size_t n_resources;
};

struct api_resource_group {
	struct api_strlist covered_resources;
	struct api_flavor_quotas *flavors; /* [owned] */
	size_t n_flavors;
};

struct api_resource_groups {
	struct api_resource_group *items; /* [owned] */
	size_t n;
};

/* status.flavorsReservation / flavorsUsage entries. */
struct api_resource_usage {
	char *name; /* [owned] */
	bool has_total;
	struct api_quantity total;
	bool has_borrowed;
	struct api_quantity borrowed;
};

struct api_flavor_usage {
	char *name;			      /* [owned] */
	struct api_resource_usage *resources; /* [owned] */
	size_t n_resources;
};

struct api_flavor_usages {
	struct api_flavor_usage *items; /* [owned] */
	size_t n;
};

enum api_stop_policy {
	API_STOP_UNSET = 0, /* None */
	API_STOP_NONE,
	API_STOP_HOLD,
	API_STOP_HOLD_AND_DRAIN,
};

/* ---- AdmissionCheck (api/model_acheck.c) ------------------------------ */

struct api_admission_check {
	json_t *raw; /* [owned: json_decref] source document or NULL */
	struct api_meta meta;
	struct {
		char *controller_name; /* [owned] required */
		bool has_parameters;
		struct {
			char *api_group; /* [owned] required */
			char *kind;	 /* [owned] required */
			char *name;	 /* [owned] required */
		} parameters;
	} spec;
	struct {
		struct api_conditions conditions; /* Active */
	} status;
};

/* ---- ResourceFlavor -------------------------------------------------- */

struct api_resource_flavor {
	json_t *raw; /* [owned: json_decref] source document or NULL */
	struct api_meta meta;
	struct {
		struct api_strmap node_labels;
		struct api_taint *node_taints; /* [owned] */
		size_t n_node_taints;
		struct api_toleration *tolerations; /* [owned] */
		size_t n_tolerations;
		char *topology_name; /* [owned] */
	} spec;
};

/* ---- ClusterQueue ---------------------------------------------------- */

enum api_queueing_strategy {
	API_QS_UNSET = 0, /* BestEffortFIFO */
	API_QS_STRICT_FIFO,
	API_QS_BEST_EFFORT_FIFO,
};

enum api_fungibility {
	API_FUNG_UNSET = 0,
	API_FUNG_MAY_STOP_SEARCH,
	API_FUNG_TRY_NEXT_FLAVOR,
};

enum api_fung_preference {
	API_FUNG_PREF_UNSET = 0, /* BorrowingOverPreemption */
	API_FUNG_PREF_BORROWING_OVER_PREEMPTION,
	API_FUNG_PREF_PREEMPTION_OVER_BORROWING,
};

/* One enum for the three preemption policy fields; each field accepts
 * only the subset Kueue's CRD allows (checked when decoding). */
enum api_preempt_policy {
	API_PREEMPT_UNSET = 0, /* Never */
	API_PREEMPT_NEVER,
	API_PREEMPT_LOWER_PRIORITY,
	API_PREEMPT_LOWER_OR_NEWER_EQUAL_PRIORITY,
	API_PREEMPT_ANY,
};

struct api_admission_check_rule {
	char *name; /* [owned] required */
	struct api_strlist on_flavors;
};

struct api_cluster_queue_spec {
	struct api_resource_groups resource_groups;
	char *cohort_name; /* [owned] */
	enum api_queueing_strategy queueing_strategy;
	/* Absent and JSON null both mean "no namespace"; {} means all. */
	bool has_namespace_selector;
	api_selector namespace_selector;
	bool has_flavor_fungibility;
	struct {
		enum api_fungibility
		    when_can_borrow; /* default MayStopSearch */
		enum api_fungibility
		    when_can_preempt; /* default TryNextFlavor */
		enum api_fung_preference preference;
	} flavor_fungibility;
	bool has_preemption;
	struct {
		enum api_preempt_policy reclaim_within_cohort;
		enum api_preempt_policy within_cluster_queue;
		bool has_borrow_within_cohort;
		struct {
			enum api_preempt_policy policy;
			bool has_max_priority_threshold;
			int32_t max_priority_threshold;
		} borrow_within_cohort;
	} preemption;
	bool has_admission_checks_strategy;
	struct api_admission_check_rule *admission_checks; /* [owned] */
	size_t n_admission_checks;
	enum api_stop_policy stop_policy;
	bool has_fair_sharing;
	bool has_fair_sharing_weight;
	struct api_quantity fair_sharing_weight;
	/* spec.admissionScope.admissionMode */
	bool has_admission_scope;
	enum api_admission_mode {
		API_NO_ADMISSION_FAIR_SHARING = 0,
		API_USAGE_BASED_ADMISSION_FAIR_SHARING,
	} admission_mode;
};

struct api_cluster_queue {
	json_t *raw; /* [owned: json_decref] source document or NULL */
	struct api_meta meta;
	struct api_cluster_queue_spec spec;
	struct {
		struct api_conditions conditions;
		struct api_flavor_usages flavors_reservation;
		struct api_flavor_usages flavors_usage;
		bool has_pending_workloads;
		int32_t pending_workloads;
		bool has_reserving_workloads;
		int32_t reserving_workloads;
		bool has_admitted_workloads;
		int32_t admitted_workloads;
		bool has_fair_sharing;
		bool has_weighted_share;
		int64_t weighted_share;
	} status;
};

enum api_queueing_strategy api_cq_queueing_strategy(
    const struct api_cluster_queue *cq);

/* ---- Cohort ---------------------------------------------------------- */

struct api_cohort {
	json_t *raw; /* [owned: json_decref] source document or NULL */
	struct api_meta meta;
	struct {
		char *parent_name; /* [owned] */
		struct api_resource_groups resource_groups;
		bool has_fair_sharing;
		bool has_fair_sharing_weight;
		struct api_quantity fair_sharing_weight;
	} spec;
	struct {
		bool has_fair_sharing;
		bool has_weighted_share;
		int64_t weighted_share;
	} status;
};

/* ---- LocalQueue ------------------------------------------------------ */

struct api_local_queue {
	json_t *raw; /* [owned: json_decref] source document or NULL */
	struct api_meta meta;
	struct {
		char *cluster_queue; /* [owned] */
		enum api_stop_policy stop_policy;
		bool has_fair_sharing;
		bool has_fair_sharing_weight;
		struct api_quantity fair_sharing_weight;
	} spec;
	struct {
		struct api_conditions conditions;
		bool has_pending_workloads;
		int32_t pending_workloads;
		bool has_reserving_workloads;
		int32_t reserving_workloads;
		bool has_admitted_workloads;
		int32_t admitted_workloads;
		struct api_flavor_usages flavors_reservation;
		struct api_flavor_usages flavors_usage;
	} status;
};

/* ---- WorkloadPriorityClass ------------------------------------------- */

struct api_workload_priority_class {
	json_t *raw; /* [owned: json_decref] source document or NULL */
	struct api_meta meta;
	int32_t value;	   /* required */
	char *description; /* [owned] */
};

/* ---- Workload -------------------------------------------------------- */

/* Workload.spec.podSets[].topologyRequest (Kueue PodSetTopologyRequest),
 * the modelled subset; other keys pass through in raw. */
struct api_topology_request {
	char *required;	 /* [owned] level (node label) or NULL */
	char *preferred; /* [owned] level or NULL */
	bool has_unconstrained;
	bool unconstrained;
	char *slice_required; /* [owned] podSetSliceRequiredTopology */
	bool has_slice_size;
	int32_t slice_size; /* podSetSliceSize */
	char *group_name;   /* [owned] podSetGroupName or NULL */
	/* The labels indexing a pod set's pods and its groups (replicated
	 * Jobs), as Kueue's job frameworks set them [owned] or NULL. */
	/* podsetSliceRequiredTopologyConstraints (TASMultiLayerTopology):
	 * slice layers, outermost first, 1 to 3 [owned] */
	struct api_slice_layer {
		char *topology; /* [owned] level */
		int32_t size;
	} * layers;
	size_t n_layers;
	char *pod_index_label;	    /* podIndexLabel */
	char *subgroup_index_label; /* subGroupIndexLabel */
	bool has_subgroup_count;
	int32_t subgroup_count; /* subGroupCount */
};

void api_topology_request_dispose(struct api_topology_request *t);

/* The label keys Kueue's frameworks index pods by (podIndexLabel) and
 * JobSet indexes its replicated Jobs by (subGroupIndexLabel). */
#define API_LABEL_JOB_COMPLETION_INDEX                                         \
	"batch.kubernetes.io/job-completion-index"
#define API_LABEL_JOBSET_JOB_INDEX "jobset.sigs.k8s.io/job-index"
#define API_LABEL_KUBEFLOW_REPLICA_INDEX "training.kubeflow.org/replica-index"
#define API_LABEL_POD_GROUP_INDEX "kueue.x-k8s.io/pod-group-pod-index"
#define API_LABEL_STATEFULSET_POD_INDEX "apps.kubernetes.io/pod-index"
#define API_LABEL_LWS_WORKER_INDEX "leaderworkerset.sigs.k8s.io/worker-index"

struct api_podset {
	char *name;	  /* [owned] (CRD default "main") */
	json_t *template; /* [owned: json_decref] PodTemplateSpec, required */
	bool has_count;
	int32_t count; /* CRD default 1 */
	bool has_min_count;
	int32_t min_count;
	bool has_topology_request;
	struct api_topology_request topology_request;
};

struct api_priority_class_ref {
	char *group; /* [owned] kueue.x-k8s.io | scheduling.k8s.io */
	char *kind;  /* [owned] WorkloadPriorityClass | PriorityClass */
	char *name;  /* [owned] */
};

struct api_podset_assignment {
	char *name;		   /* [owned] required */
	struct api_strmap flavors; /* resource -> flavor name */
	struct api_qmap resource_usage;
	bool has_count;
	int32_t count;
	/* topologyAssignment in Kueue v1beta2 wire form (levels + slices)
	 * [owned: json_decref] or NULL; see api_topology_assignment_*. */
	json_t *topology_assignment;
};

enum api_check_state {
	API_CHECK_UNSET = 0,
	API_CHECK_PENDING,
	API_CHECK_READY,
	API_CHECK_RETRY,
	API_CHECK_REJECTED,
};

/* A pod set modification an admission check asks for (Kueue's
 * PodSetUpdate): applied to the pod set's template when the job starts. */
struct api_podset_update {
	char *name; /* [owned] required: the pod set */
	struct api_strmap labels;
	struct api_strmap annotations;
	struct api_strmap node_selector;
	struct api_toleration *tolerations; /* [owned] at most 8 */
	size_t n_tolerations;
};

struct api_admission_check_state {
	char *name;		    /* [owned] required */
	enum api_check_state state; /* required */
	bool has_last_transition;
	int64_t last_transition_ns; /* required */
	char *message;		    /* [owned] */
	bool has_retry_count;
	int32_t retry_count;
	bool has_requeue_after_seconds;
	int32_t requeue_after_seconds;
	struct api_podset_update *pod_set_updates; /* [owned] at most 18 */
	size_t n_pod_set_updates;
};

/* Free what u / c own and zero it; NULL does nothing
 * (api/model_workload.c). */
void api_podset_update_dispose(struct api_podset_update *u);
void api_admission_check_state_dispose(struct api_admission_check_state *c);
/* Kueue's name of state s ("Pending", "Ready", "Retry", "Rejected";
 * "" for API_CHECK_UNSET) [static]. */
const char *api_check_state_name(enum api_check_state s);

struct api_reclaimable_pod {
	char *name; /* [owned] required */
	int32_t count;
};

struct api_podset_request {
	char *name; /* [owned] */
	struct api_qmap resources;
};

struct api_workload {
	json_t *raw; /* [owned: json_decref] source document or NULL */
	struct api_meta meta;
	struct {
		struct api_podset *pod_sets; /* [owned] 1..18 */
		size_t n_pod_sets;
		char *queue_name; /* [owned] */
		bool has_priority_class_ref;
		struct api_priority_class_ref priority_class_ref;
		bool has_priority;
		int32_t priority;
		bool has_active;
		bool active; /* default true */
		bool has_maximum_execution_time_seconds;
		int32_t maximum_execution_time_seconds;
	} spec;
	struct {
		struct api_conditions conditions;
		bool has_admission;
		struct {
			char *cluster_queue; /* [owned] required */
			struct api_podset_assignment *pod_set_assignments;
			size_t n_pod_set_assignments; /* [owned] */
		} admission;
		bool has_requeue_state;
		struct {
			bool has_count;
			int32_t count;
			bool has_requeue_at;
			int64_t requeue_at_ns;
		} requeue_state;
		struct api_reclaimable_pod *reclaimable_pods; /* [owned] */
		size_t n_reclaimable_pods;
		struct api_admission_check_state
		    *admission_checks; /* [owned] */
		size_t n_admission_checks;
		struct api_podset_request *resource_requests; /* [owned] */
		size_t n_resource_requests;
		bool has_accumulated_past_execution_time_seconds;
		int32_t accumulated_past_execution_time_seconds;
		char *cluster_name; /* [owned] */
		struct api_strlist nominated_cluster_names;
		/* status.unhealthyNodes[].name: nodes of its topology
		 * assignment that failed (TAS node failures) */
		struct api_strlist unhealthy_nodes;
	} status;
};

/* ---- batch/v1 Job ---------------------------------------------------- */

struct api_job {
	json_t *raw; /* [owned: json_decref] source document or NULL */
	struct api_meta meta;
	struct {
		bool has_parallelism;
		int32_t parallelism; /* Kubernetes default 1 */
		bool has_completions;
		int32_t completions;
		bool has_suspend;
		bool suspend;
		char *managed_by;      /* [owned] */
		char *completion_mode; /* [owned] NonIndexed | Indexed */
		json_t *template; /* [owned: json_decref] PodTemplateSpec */
	} spec;
	struct {
		struct api_conditions conditions;
		bool has_active;
		int32_t active;
		bool has_succeeded;
		int32_t succeeded;
		bool has_failed;
		int32_t failed;
		bool has_ready;
		int32_t ready;
		bool has_start_time;
		int64_t start_time_ns;
		bool has_completion_time;
		int64_t completion_time_ns;
	} status;
};

/* ---- jobset.x-k8s.io/v1alpha2 JobSet --------------------------------- */

struct api_replicated_job {
	char *name;	  /* [owned] required */
	char *group_name; /* [owned] */
	bool has_replicas;
	int32_t replicas; /* CRD default 1 */
	/* template (JobTemplateSpec) minus the three fields below, which
	 * are modelled and written back over it on encode. */
	json_t *template; /* [owned: json_decref] required */
	bool has_parallelism;
	int32_t parallelism; /* template.spec.parallelism */
	bool has_completions;
	int32_t completions;  /* template.spec.completions */
	json_t *pod_template; /* [owned: json_decref] template.spec.template */
};

struct api_replicated_job_status {
	char *name; /* [owned] */
	int32_t ready, succeeded, failed, active, suspended;
};

struct api_jobset {
	json_t *raw; /* [owned: json_decref] source document or NULL */
	struct api_meta meta;
	struct {
		struct api_replicated_job *replicated_jobs; /* [owned] */
		size_t n_replicated_jobs;
		bool has_suspend;
		bool suspend;
		char *managed_by; /* [owned] */
	} spec;
	struct {
		struct api_conditions conditions;
		bool has_restarts;
		int32_t restarts;
		bool has_restarts_count_towards_max;
		int32_t restarts_count_towards_max;
		char *terminal_state; /* [owned] */
		struct api_replicated_job_status *replicated_jobs_status;
		size_t n_replicated_jobs_status; /* [owned] */
	} status;
};

/* ---- v1 Namespace, scheduling.k8s.io/v1 PriorityClass ---------------- */

struct api_namespace {
	json_t *raw; /* [owned: json_decref] source document or NULL */
	struct api_meta meta;
	char *phase; /* [owned] status.phase: Active | Terminating */
};

struct api_priority_class {
	json_t *raw; /* [owned: json_decref] source document or NULL */
	struct api_meta meta;
	int32_t value; /* required */
	bool has_global_default;
	bool global_default;
	char *description;	 /* [owned] */
	char *preemption_policy; /* [owned] */
};

/* ---- coordination.k8s.io/v1 Lease ------------------------------------ */

struct api_lease {
	json_t *raw; /* [owned: json_decref] source document or NULL */
	struct api_meta meta;
	struct {
		char *holder_identity; /* [owned] */
		bool has_lease_duration_seconds;
		int32_t lease_duration_seconds;
		bool has_acquire_time; /* MicroTime */
		int64_t acquire_time_ns;
		bool has_renew_time; /* MicroTime */
		int64_t renew_time_ns;
		bool has_lease_transitions;
		int32_t lease_transitions;
	} spec;
};

/* ---- v1 Event -------------------------------------------------------- */

struct api_object_ref {
	char *kind;		/* [owned] */
	char *namespace_;	/* [owned] */
	char *name;		/* [owned] */
	char *uid;		/* [owned] */
	char *api_version;	/* [owned] */
	char *resource_version; /* [owned] */
	char *field_path;	/* [owned] */
};

struct api_event {
	json_t *raw; /* [owned: json_decref] source document or NULL */
	struct api_meta meta;
	struct api_object_ref involved_object; /* required */
	char *reason;			       /* [owned] */
	char *message;			       /* [owned] */
	char *source_component;		       /* [owned] source.component */
	char *source_host;		       /* [owned] source.host */
	bool has_first_timestamp;
	int64_t first_timestamp_ns;
	bool has_last_timestamp;
	int64_t last_timestamp_ns;
	bool has_count;
	int32_t count;
	char *type;	     /* [owned] Normal | Warning */
	bool has_event_time; /* MicroTime */
	int64_t event_time_ns;
	char *reporting_component; /* [owned] */
	char *reporting_instance;  /* [owned] */
	char *action;		   /* [owned] */
};

/* ---- kueue.x-k8s.io/v1beta2 Topology ---------------------------------- */

struct api_topology {
	json_t *raw; /* [owned: json_decref] source document or NULL */
	struct api_meta meta;
	struct {
		/* spec.levels[].nodeLabel, highest level first (1..16) */
		struct api_strlist levels;
	} spec;
};

/* One domain of a topology assignment: its value at every level of
 * the assignment (highest first) and its pod count. */
struct api_topology_domain {
	char **values; /* [owned] n_levels strings, each [owned] */
	int32_t count;
};

struct api_topology_assignment {
	struct api_strlist levels;
	struct api_topology_domain *domains; /* [owned] */
	size_t n_domains;
};

void api_topology_assignment_dispose(struct api_topology_assignment *a);
/* Kueue v1beta2 wire form (levels + slices; universal values and counts
 * where every domain shares them) -> *out [owned: json_decref]. */
CU_MUST_CHECK int api_topology_assignment_encode(
    json_t **out, const struct api_topology_assignment *a, cu_error *err);
/* Wire form j [borrowed] -> *out (initialised here; empty on failure):
 * every slice flattened, prefix/suffix applied. CU_EINVAL on a shape
 * Kueue's CRD rejects (lengths disagreeing with domainCount/levels). */
CU_MUST_CHECK int api_topology_assignment_decode(
    struct api_topology_assignment *out, const json_t *j, cu_error *err);

/* Topology request of a pod template [borrowed] from its annotations
 * kueue.x-k8s.io/podset-{required,preferred,unconstrained}-topology,
 * podset-slice-{required-topology,size}, the multi-layer
 * podset-slice-required-topology-constraints (a JSON list of 1 to 3
 * {topology, size}, taking the place of the two slice annotations;
 * CU_EINVAL when malformed) and podset-group-name (kept
 * with required or preferred only, as Kueue); false when none is set. *out
 * is initialised here. CU_ENOMEM (out left empty). */
CU_MUST_CHECK int api_topology_request_from_template(const json_t *tpl,
    struct api_topology_request *out, bool *found, cu_error *err);
/* Does t [borrowed] ask for a placement (required, preferred,
 * unconstrained, a slice or slice layers), not only carry index
 * labels? */
bool api_topology_request_places(const struct api_topology_request *t);
/* Wire form of t [borrowed] -> *out [owned: json_decref]. CU_ENOMEM. */
CU_MUST_CHECK int api_topology_request_encode(
    json_t **out, const struct api_topology_request *t, cu_error *err);

/* ---- core/v1 Pod and Node: what the controller reads of them ----------- */

/* A v1 Pod, decoded once: the fields topology-aware scheduling and the
 * node-failure checks read (metadata with its labels and annotations). */
struct api_pod {
	json_t *raw; /* [owned: json_decref] source document */
	struct api_meta meta;
	struct {
		char *node_name; /* [owned] spec.nodeName or NULL */
		struct api_strmap node_selector;
		/* spec.schedulingGates[].name, in order */
		struct api_strlist scheduling_gates;
		/* per-pod requests as the scheduler counts them (sidecars,
		 * init containers, overhead), sorted by name */
		struct api_request *requests; /* [owned] */
		size_t n_requests;
	} spec;
	struct {
		char *phase;		   /* [owned] or NULL */
		char *nominated_node_name; /* [owned] or NULL */
		struct api_conditions conditions;
	} status;
};

/* A v1 Node, decoded once: labels (in meta), taints, allocatable,
 * schedulability and conditions. */
struct api_node {
	json_t *raw; /* [owned: json_decref] source document */
	struct api_meta meta;
	struct {
		bool unschedulable;
		struct api_taint *taints; /* [owned] */
		size_t n_taints;
	} spec;
	struct {
		struct api_qmap allocatable;
		struct api_conditions conditions;
	} status;
};

/*
 * Decode a v1 Pod or Node j [borrowed; a reference is kept in out->raw]
 * into *out, initialised here and left empty on failure (nothing to
 * dispose). A present kind/apiVersion must be v1 Pod / Node. Conditions
 * need only type and status (PodCondition, NodeCondition). CU_EPARSE,
 * CU_EINVAL naming the field, CU_ENOMEM. The _dispose functions free
 * what x holds and zero it (NULL and zeroed: no-ops).
 */
CU_MUST_CHECK int api_pod_decode(
    struct api_pod *out, const json_t *j, cu_error *err);
void api_pod_dispose(struct api_pod *x);
CU_MUST_CHECK int api_node_decode(
    struct api_node *out, const json_t *j, cu_error *err);
void api_node_dispose(struct api_node *x);

/* Tolerations t [borrowed] (n of them) in the wire form: *out a JSON
 * array [owned: json_decref; empty when n is 0]. CU_ENOMEM. */
CU_MUST_CHECK int api_tolerations_encode(
    const struct api_toleration *t, size_t n, json_t **out, cu_error *err);

/* What decides which nodes a pod template's pods may use: its
 * tolerations, nodeSelector and required node affinity. */
struct api_pod_sched {
	struct api_toleration *tolerations; /* [owned] */
	size_t n_tolerations;
	struct api_strmap node_selector;
	/* spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuring-
	 * Execution as it came (a NodeSelector, not modelled further)
	 * [owned: json_decref] or NULL */
	json_t *required_node_affinity;
};

/* Decode those fields of the PodTemplateSpec tpl [borrowed] (a Workload
 * podSet's template) into *out, initialised here, empty on failure.
 * CU_EPARSE/CU_EINVAL naming the field ("spec.tolerations[0].operator:
 * ..."), CU_ENOMEM. */
CU_MUST_CHECK int api_pod_sched_decode(
    struct api_pod_sched *out, const json_t *tpl, cu_error *err);
/* Does s [borrowed] constrain the nodes at all? */
bool api_pod_sched_any(const struct api_pod_sched *s);
void api_pod_sched_dispose(struct api_pod_sched *s);

/* Has the pod Succeeded or Failed? */
bool api_pod_finished(const struct api_pod *p);
/* Does the pod carry the scheduling gate `gate` [borrowed]? */
bool api_pod_gated(const struct api_pod *p, const char *gate);
/* Is the node Ready: a Ready condition True, or none at all (simulated
 * Nodes carry no conditions)? */
bool api_node_ready(const struct api_node *n);

/* ---- codecs ---------------------------------------------------------- */

/*
 * For every kind K in cluster_queue, local_queue, resource_flavor,
 * workload, workload_priority_class, cohort, job, jobset, namespace,
 * priority_class, lease, event, topology, admission_check:
 *
 *   int api_K_decode(struct api_K *out, const json_t *j, cu_error *err);
 *     *out is initialised here; on failure it is left empty (nothing to
 *     dispose). j [borrowed; a reference is kept in out->raw, so do not
 *     mutate j afterwards]. A present `kind`/`apiVersion` must match.
 *     Errors: CU_EPARSE (wrong JSON type, bad quantity/time), CU_EINVAL
 *     (missing required field, invalid enum value), CU_ENOMEM; the message
 *     names the field path ("spec.podSets[0].template: Required value").
 *
 *   int api_K_encode(json_t **out, const struct api_K *in, cu_error *err);
 *     *out [owned: json_decref]; a deep copy of in->raw (or a new object)
 *     with the modelled fields, apiVersion and kind written. CU_ENOMEM.
 *
 *   void api_K_dispose(struct api_K *x);
 *     Frees everything x owns and zeroes it; NULL and zeroed are no-ops.
 */
#define API_MODEL_DECLARE_CODEC(K)                                             \
	CU_MUST_CHECK int api_##K##_decode(                                    \
	    struct api_##K *out, const json_t *j, cu_error *err);              \
	CU_MUST_CHECK int api_##K##_encode(                                    \
	    json_t **out, const struct api_##K *in, cu_error *err);            \
	void api_##K##_dispose(struct api_##K *x)

API_MODEL_DECLARE_CODEC(cluster_queue);
API_MODEL_DECLARE_CODEC(local_queue);
API_MODEL_DECLARE_CODEC(resource_flavor);
API_MODEL_DECLARE_CODEC(workload);
API_MODEL_DECLARE_CODEC(workload_priority_class);
API_MODEL_DECLARE_CODEC(cohort);
API_MODEL_DECLARE_CODEC(job);
API_MODEL_DECLARE_CODEC(jobset);
API_MODEL_DECLARE_CODEC(namespace);
API_MODEL_DECLARE_CODEC(priority_class);
API_MODEL_DECLARE_CODEC(lease);
API_MODEL_DECLARE_CODEC(event);
API_MODEL_DECLARE_CODEC(topology);
API_MODEL_DECLARE_CODEC(admission_check);

/* Decode/encode ObjectMeta alone (j is the `metadata` object [borrowed];
 * *out initialised here, left empty on failure). encode writes into dst
 * [borrowed], keeping its unmodelled keys. */
CU_MUST_CHECK int api_meta_decode(
    struct api_meta *out, const json_t *j, cu_error *err);
CU_MUST_CHECK int api_meta_encode(
    json_t *dst, const struct api_meta *m, cu_error *err);
/* The metadata of any object obj [borrowed] (none: *out empty), for a
 * reader that needs nothing else of it; *out as api_meta_decode. */
CU_MUST_CHECK int api_object_meta_decode(
    struct api_meta *out, const json_t *obj, cu_error *err);
void api_meta_dispose(struct api_meta *m);

/* ---- pod sets ---------------------------------------------------------- */

/* Per-pod request of one resource, in milli-units. */
struct api_request {
	char *name; /* [owned] */
	int64_t milli;
};

/* What Kueue puts into Workload.spec.podSets[i], plus the per-pod
 * requests and scheduling constraints the scheduler needs. */
struct api_podset_info {
	char *name; /* [owned] */
	int32_t count;
	bool has_min_count;
	int32_t min_count;
	/* max(sum of containers (incl. sidecars), largest init container)
	 * + spec.overhead, sorted by name. */
	struct api_request *requests; /* [owned] */
	size_t n_requests;
	struct api_strmap node_selector;
	struct api_toleration *tolerations; /* [owned] */
	size_t n_tolerations;
	/* affinity.nodeAffinity.requiredDuringScheduling...nodeSelectorTerms
	 * [owned: json_decref] copy, or NULL when there is none. */
	json_t *required_node_affinity;
	/* The pod template [owned: json_decref], a deep copy as Kueue stores
	 * it in the Workload (Job: batch-controller labels removed). */
	json_t *template;
	char *priority_class_name; /* [owned] template spec, or NULL */
	/* From the template's podset-*-topology annotations. */
	bool has_topology_request;
	struct api_topology_request topology_request;
};

struct api_podsets {
	struct api_podset_info *items; /* [owned] */
	size_t n;
};

void api_podsets_dispose(struct api_podsets *ps);

/* Per-pod requests of a pod template (PodTemplateSpec or bare PodSpec
 * under "spec") [borrowed]: sidecar-aware Kubernetes PodRequests; a
 * container with limits but no request of a resource requests its limit.
 * *out and *n [owned: cu_free each name and the array]. Errors name
 * the path below `path` [borrowed]. */
CU_MUST_CHECK int api_pod_requests(const json_t *pod_template, const char *path,
    struct api_request **out, size_t *n, cu_error *err);

/* Labels the batch Job controller puts on (and owns in) a Job's pod
 * template (job_controller.go ManagedLabels), NULL-terminated: Kueue drops
 * them from the Workload's copy and RestorePodSetsInfo keeps them. */
extern const char *const api_job_managed_labels[];

/* batch/v1 Job: one pod set "main"; count = parallelism (default 1),
 * lowered to completions when that is smaller; minCount from the
 * kueue.x-k8s.io/job-min-parallelism annotation. *out initialised here. */
CU_MUST_CHECK int api_job_podsets(
    const struct api_job *job, struct api_podsets *out, cu_error *err);

/* JobSet: one pod set per replicatedJob (lower-cased name), count =
 * replicas x min(parallelism, completions). *out initialised here. */
CU_MUST_CHECK int api_jobset_podsets(
    const struct api_jobset *js, struct api_podsets *out, cu_error *err);

/* Pod set i of any framework: name and count [name borrowed] with the
 * pod template tpl [borrowed] found at `path` [borrowed] of the object
 * (errors name it). *p [zeroed by the caller] filled as the Job's pod set
 * is (requests, node selector, tolerations, affinity, topology request,
 * a deep copy of the template); it belongs to the api_podsets it is an
 * item of (api_podsets_dispose). CU_EINVAL, CU_ENOMEM. */
CU_MUST_CHECK int api_podset_from_template(const json_t *tpl, const char *name,
    int32_t count, const char *path, struct api_podset_info *p, cu_error *err);

/*
 * Kueue's topology request builder with the framework's index labels:
 * p's request [borrowed p] gets podIndexLabel pod_label and, when
 * sub_label is not NULL, subGroupIndexLabel sub_label and subGroupCount
 * sub_count (labels [borrowed; copied]). A pod set without topology
 * annotations gets a request holding only these, as in Kueue. CU_ENOMEM.
 */
CU_MUST_CHECK int api_podset_index_labels(struct api_podset_info *p,
    const char *pod_label, const char *sub_label, int32_t sub_count,
    cu_error *err);

/* ---- names ------------------------------------------------------------ */

#define API_WORKLOAD_NAME_MAX 253
#define API_WORKLOAD_NAME_SHORT_MAX 63 /* ShortWorkloadNames gate */

/*
 * Kueue's Workload name for an owner: lower(kind) + "-" + name, cut to
 * max-6 bytes, + "-" + first 5 hex digits of
 * sha1(kind "\n" group "\n" name "\n" uid [ "\n" generation ]).
 * generation < 0 leaves it out (the usual case). max is
 * API_WORKLOAD_NAME_MAX or API_WORKLOAD_NAME_SHORT_MAX. All strings
 * [borrowed]; *out [owned: cu_free]. CU_EINVAL for max < 7, CU_EIO if
 * OpenSSL fails, CU_ENOMEM.
 */
CU_MUST_CHECK int api_workload_name(const char *kind, const char *group,
    const char *name, const char *uid, int64_t generation, size_t max,
    char **out, cu_error *err);

/* The SHA-1 of s [borrowed] in lower-case hex into hex (NUL-terminated):
 * Kueue's hashed name suffixes. CU_EIO if OpenSSL fails. */
#define API_SHA1_HEX_LEN 41
CU_MUST_CHECK int api_sha1_hex(
    const char *s, char hex[API_SHA1_HEX_LEN], cu_error *err);

/* ---- priority ----------------------------------------------------------- */

#define API_LABEL_PRIORITY_CLASS "kueue.x-k8s.io/priority-class"
#define API_DEFAULT_WPC_NAME "default"

/*
 * Lookups supplied by the caller (informer caches). Each returns CU_OK
 * with *value set, CU_ENOTFOUND when the object does not exist, or another
 * error (then err is set by the callback). Strings [borrowed].
 */
struct api_priority_lookup {
	int (*wpc)(
	    const char *name, int32_t *value, void *payload, cu_error *err);
	int (*pc)(
	    const char *name, int32_t *value, void *payload, cu_error *err);
	/* The globalDefault PriorityClass with the lowest value: CU_OK with
	 * *name [borrowed, valid until the next call] and *value, or
	 * CU_ENOTFOUND. May be NULL (treated as none). */
	int (*pc_global_default)(
	    const char **name, int32_t *value, void *payload, cu_error *err);
	/* WorkloadPriorityClassDefaulting: when the job has no
	 * priority-class label and a WorkloadPriorityClass "default" exists,
	 * Kueue's webhook labels the job with it. */
	bool default_wpc;
	void *payload;
};

enum api_priority_source {
	API_PRIO_NONE = 0, /* no class: priority 0 */
	API_PRIO_WORKLOAD_PRIORITY_CLASS,
	API_PRIO_PRIORITY_CLASS,
};

struct api_priority {
	enum api_priority_source source;
	char *class_name; /* [owned: cu_free] NULL for API_PRIO_NONE */
	int32_t value;
};

/*
 * Kueue's order: the job's kueue.x-k8s.io/priority-class label -> that
 * WorkloadPriorityClass (missing: CU_ENOTFOUND); else (default_wpc) the
 * "default" WorkloadPriorityClass if it exists; else the first pod set
 * with a priorityClassName -> that PriorityClass (missing: CU_ENOTFOUND);
 * else the global-default PriorityClass; else 0. job_labels, ps
 * [borrowed]; *out initialised here (free class_name with cu_free).
 */
CU_MUST_CHECK int api_resolve_priority(const struct api_strmap *job_labels,
    const struct api_podsets *ps, const struct api_priority_lookup *lk,
    struct api_priority *out, cu_error *err);

/* Fill spec.priorityClassRef and spec.priority of wl from p [borrowed]. */
CU_MUST_CHECK int api_workload_set_priority(
    struct api_workload *wl, const struct api_priority *p, cu_error *err);

#endif /* CU_API_MODEL_H */
