/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconcile/reconcile.h - the pure reconcile layer of cueue: everything the
 * controller decides about one object that needs no I/O and no clock read.
 * Five parts, each described below in its own section:
 *
 *   1. Workloads and jobs (rec_wl_*, rec_job_*): the Workload a job gets,
 *      the status writes of each decision, the job writes that start and
 *      stop it;
 *   2. events (rec_events_*, rec_event_*): the Event recorder's decisions
 *      (create, fold into an earlier Event, drop) and the transition guard;
 *   3. sync (rec_sync_*): Kueue objects from the informers into the queue
 *      model of the admission engine;
 *   4. the reconcilers (rec_job_reconcile, rec_workload_reconcile): the
 *      decision tree of one job or one Workload, returned as a plan of
 *      writes, events and engine actions for the controller to carry out;
 *   5. the scheduling cycle (rec_cycle_*): what is done with each admission
 *      and preemption decision and with the answers to the writes that
 *      announce them.
 *
 * Pure: no I/O, no clock reads (time is passed in as now_ns), no access to
 * the controller's state. Module prefix rec_ (constants REC_).
 */
#ifndef CU_RECONCILE_RECONCILE_H
#define CU_RECONCILE_RECONCILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "admission/admission.h"
#include "api/model.h"
#include "lib/cu.h"
#include "queues/queues.h"

/* ==== 1. Workloads and jobs ============================================
 * The pure transformation layer between the
 * Kubernetes objects cueue manages (batch/v1 Job, jobset.x-k8s.io/v1alpha2
 * JobSet, kueue.x-k8s.io/v1beta2 Workload) and cueue's decisions, as
 * Kueue's job reconciler (pkg/controller/jobframework/reconciler.go),
 * pkg/workload, pkg/podset and the Job/JobSet integrations do it:
 *
 *   - the Workload a job gets (rec_wl_build) and whether an existing one
 *     still matches its job (rec_wl_equivalent);
 *   - the Workload status writes for an admission, a pending decision, an
 *     eviction (and the release of its quota once the job stopped) and a
 *     finished job (rec_wl_status_*);
 *   - the job writes that start an admitted job and stop an evicted one
 *     (rec_job_start_patch, rec_job_stop_patch);
 *   - job state readers (suspended, active, finished).
 *
 * Pure: no I/O, no clock reads (now_ns is passed in), event-loop thread or
 * any thread. Inputs are [borrowed] and never modified.
 *
 * Writes. Every write is returned as a JSON merge patch (RFC 7386, an
 * object) for PATCH with application/merge-patch+json (api_merge_patch of
 * api/client.h), computed with api_merge_patch_diff between the object as
 * read and the object as it must become. When nothing would change the
 * patch is NULL and nothing must be sent (docs/architecture.md lesson 4); so
 * applying a decision twice writes once. A non-NULL patch always carries
 * metadata.resourceVersion (when the object has one), as Kueue's strict
 * clientutil.Patch does: a merge patch replaces lists wholesale
 * (status.conditions, spec.replicatedJobs, a template's tolerations), which
 * is only safe against the exact version it was computed from; a stale read
 * fails with 409 Conflict instead of dropping someone else's change. Merge
 * patches are used for the JobSet too: JobSet is a CRD, so the API server
 * answers 415 to a strategic merge patch, and Kueue itself sends a merge
 * patch (controller-runtime MergeFrom) carrying the whole replicatedJobs
 * list. Status patches go to the /status subresource.
 *
 * Kueue-compatible details worth knowing:
 *   - The Workload carries the label kueue.x-k8s.io/job-uid and the job's
 *     labels named by labelKeysToCopy; Kueue puts no queue-name label on
 *     it (the LocalQueue is spec.queueName) and no job-owner-gvk/-name
 *     annotations for Jobs or JobSets (only for LeaderWorkerSets). Job
 *     annotations prefixed provreq.kueue.x-k8s.io/ are copied.
 *   - Starting a job injects, per pod set, the assigned flavors'
 *     nodeLabels (nodeSelector) and tolerations, and the labels
 *     kueue.x-k8s.io/podset, kueue.x-k8s.io/local-queue-name and
 *     kueue.x-k8s.io/cluster-queue-name (AssignQueueLabelsForPods, on by
 *     default). A key already set to another value is a permanent error
 *     (CU_EINVAL, Kueue's "invalid admission check PodSetUpdate: conflict
 *     for nodeSelector: ..."): the caller finishes the Workload with
 *     reason FailedToStart and that message.
 *   - Stopping restores each pod template's annotations, labels,
 *     nodeSelector, tolerations and schedulingGates from the Workload's
 *     spec.podSets[].template (the originals saved at creation). A JobSet
 *     stops in one patch (its webhook accepts pod-template changes that
 *     come with suspend=true). A batch Job cannot: the API server accepts
 *     template changes only on a Job that is already suspended and has no
 *     status.startTime, so a Job stops in Kueue's three idempotent steps
 *     (suspend + kueue.x-k8s.io/stopping annotation; clear
 *     status.startTime; restore + drop the annotation). Each call returns
 *     the one next write; calling again after it landed continues, and an
 *     interrupted stop resumes.
 *   - Eviction is two writes, as in Kueue: rec_wl_status_evict marks the
 *     Workload Evicted (and Preempted) but keeps status.admission, so the
 *     quota stays held while the job's pods run; once the job is stopped
 *     and no longer active, rec_wl_status_release clears the admission,
 *     sets QuotaReserved=False (PendingEvaluation), Admitted=False and the
 *     Requeued condition.
 *
 * Not modelled: admission-check podSetUpdates, topology-aware scheduling,
 * elastic jobs (workload slices), MultiKueue, status.resourceRequests of
 * pending Workloads, the CustomMetricLabels annotation copy.
 *
 * Prefix: rec_wl_ (Workload), rec_job_ (jobs), CTL_.
 */

/* ---- names Kueue uses ------------------------------------------------ */

#define REC_LABEL_QUEUE_NAME "kueue.x-k8s.io/queue-name"
#define REC_LABEL_JOB_UID "kueue.x-k8s.io/job-uid"
#define REC_LABEL_MAX_EXEC_TIME "kueue.x-k8s.io/max-exec-time-seconds"
#define REC_LABEL_PODSET "kueue.x-k8s.io/podset"
/* Topology-aware scheduling: the scheduling gate a started job's pods
 * carry when their podSet has a topologyAssignment, and the annotation
 * naming their Workload (for the ungater). */
#define REC_TAS_GATE "kueue.x-k8s.io/topology"
#define REC_ANNOTATION_TAS_WORKLOAD "kueue.x-k8s.io/workload"
#define REC_LABEL_LOCAL_QUEUE "kueue.x-k8s.io/local-queue-name"
#define REC_LABEL_CLUSTER_QUEUE "kueue.x-k8s.io/cluster-queue-name"
#define REC_ANNOTATION_STOPPING "kueue.x-k8s.io/stopping"
/* The scheduling gate that holds a managed Pod back until admission, and
 * the one pod set of a plain Pod (reconcile/fw_pod.c). */
#define REC_POD_ADMISSION_GATE "kueue.x-k8s.io/admission"
#define REC_POD_PODSET "main"
/* The finalizer the pod webhook puts on a managed Pod (not on one a
 * managed parent suspends), so that it stays until its result is
 * accounted in its Workload (reconcile/fw_pod.c, fw_podgroup.c). */
#define REC_POD_FINALIZER "kueue.x-k8s.io/managed"
#define REC_ANNOTATION_COMPLETIONS_EQ_PARALLELISM                              \
	"kueue.x-k8s.io/job-completions-equal-parallelism"
#define REC_ANNOTATION_PROVREQ_PREFIX "provreq.kueue.x-k8s.io/"
#define REC_FINALIZER_RESOURCE_IN_USE "kueue.x-k8s.io/resource-in-use"
/* A job's prebuilt Workload: its name, as annotation (first) or label. */
#define REC_PREBUILT_WORKLOAD "kueue.x-k8s.io/prebuilt-workload-name"
/* A job's (and its Workload's) admission gates, comma-separated. */
#define REC_ADMISSION_GATED_BY "kueue.x-k8s.io/admission-gated-by"
/* Kueue's elastic jobs (ElasticJobsViaWorkloadSlices): the job's (and
 * its Workloads') opt-in, "true"; a slice's origin Workload name and the
 * ns/name of the slice it replaces. */
#define REC_ELASTIC_JOB "kueue.x-k8s.io/elastic-job"
#define REC_WORKLOAD_SLICE_NAME "kueue.x-k8s.io/workload-slice-name"
#define REC_WORKLOAD_SLICE_REPLACEMENT_FOR                                     \
	"kueue.x-k8s.io/workload-slice-replacement-for"
/* QuotaReserved=False reason of a Workload held by its gates. */
#define REC_REASON_ADMISSION_GATED "AdmissionGated"

/* Workload condition types. */
#define REC_COND_QUOTA_RESERVED "QuotaReserved"
#define REC_COND_ADMITTED "Admitted"
#define REC_COND_EVICTED "Evicted"
#define REC_COND_PREEMPTED "Preempted"
#define REC_COND_REQUEUED "Requeued"
#define REC_COND_FINISHED "Finished"
#define REC_COND_DEACTIVATION_TARGET "DeactivationTarget"

/* Evicted reasons (Kueue's WorkloadEvictedBy* constants). */
#define REC_EVICTED_PREEMPTED "Preempted"
#define REC_EVICTED_PODS_READY_TIMEOUT "PodsReadyTimeout"
#define REC_EVICTED_ADMISSION_CHECK "AdmissionCheck"
#define REC_EVICTED_CLUSTER_QUEUE_STOPPED "ClusterQueueStopped"
#define REC_EVICTED_LOCAL_QUEUE_STOPPED "LocalQueueStopped"
#define REC_EVICTED_DEACTIVATED "Deactivated"
#define REC_EVICTED_NODE_FAILURES "NodeFailures"

/* Kueue's messages of the evictions the Workload reconciler decides. */
#define REC_MSG_DEACTIVATED "The workload is deactivated"
#define REC_MSG_CLUSTER_QUEUE_STOPPED "The ClusterQueue is stopped"
#define REC_MSG_LOCAL_QUEUE_STOPPED "The LocalQueue is stopped"

/* DeactivationTarget reason (and the Evicted underlyingCause, and the
 * Warning event's reason) once spec.maximumExecutionTimeSeconds is
 * exceeded, with Kueue's message. */
#define REC_MAX_EXEC_EXCEEDED "MaximumExecutionTimeExceeded"
#define REC_MSG_MAX_EXEC_EXCEEDED "exceeding the maximum execution time"

/* waitForPodsReady (Kueue's "Sequential admission with ready pods"): the
 * PodsReady condition, its reasons and Kueue's messages. */
#define REC_COND_PODS_READY "PodsReady"
#define REC_PODS_READY_STARTED "Started"
#define REC_PODS_READY_RECOVERED "Recovered"
#define REC_PODS_READY_WAIT_FOR_START "WaitForStart"
#define REC_PODS_READY_WAIT_FOR_RECOVERY "WaitForRecovery"
#define REC_MSG_PODS_NOT_READY "Not all pods are ready or succeeded"
#define REC_MSG_PODS_WAIT_RECOVERY                                             \
	"At least one pod has failed, waiting for recovery"
#define REC_MSG_PODS_READY                                                     \
	"All pods reached readiness and the workload is running"
/* The DeactivationTarget reason (and Evicted underlyingCause) once
 * backoffLimitCount is exceeded, with Kueue's message. */
#define REC_REQUEUING_LIMIT_EXCEEDED "RequeuingLimitExceeded"
#define REC_MSG_REQUEUING_LIMIT_EXCEEDED                                       \
	"exceeding the maximum number of re-queuing retries"
/* Requeued=True once the requeueState.requeueAt of a PodsReadyTimeout
 * eviction has passed. */
#define REC_REQUEUED_BACKOFF_FINISHED "BackoffFinished"
#define REC_MSG_BACKOFF_FINISHED "The workload backoff was finished"
/* QuotaReserved=False while blockAdmission holds admissions back. */
#define REC_REASON_WAITING_FOR_PODS_READY "WaitingForPodsReady"
#define REC_MSG_WAITING_FOR_PODS_READY                                         \
	"waiting for all admitted workloads to be in PodsReady condition"

/* Requeued=True reasons once the cause of a non-requeueing eviction is
 * gone (Kueue's WorkloadReactivated, ...Restarted). */
#define REC_REQUEUED_REACTIVATED "Reactivated"
#define REC_REQUEUED_CQ_RESTARTED "ClusterQueueRestarted"
#define REC_REQUEUED_LQ_RESTARTED "LocalQueueRestarted"

/* Finished reasons. */
#define REC_FINISHED_SUCCEEDED "Succeeded"
#define REC_FINISHED_FAILED "Failed"
#define REC_FINISHED_FAILED_TO_START "FailedToStart"
#define REC_FINISHED_OUT_OF_SYNC "OutOfSync"
#define REC_FINISHED_OWNER_NOT_FOUND "OwnerNotFound"
#define REC_MSG_OWNER_NOT_FOUND "The workload's owner no longer exists"

/* QuotaReserved=False reason once an evicted Workload released quota. */
#define REC_REASON_PENDING_EVALUATION "PendingEvaluation"
#define REC_REASON_ON_HOLD "OnHold"
/* Kueue's event on a deleted excess Pod of a pod group. */
#define REC_REASON_EXCESS_POD_DELETED "ExcessPodDeleted"

/* Kueue cuts condition messages to 32 KiB ("... " suffix). */
#define REC_CONDITION_MESSAGE_MAX API_CONDITION_MESSAGE_MAX

/* ---- the managed job ------------------------------------------------- */

enum rec_job_kind {
	REC_JOB_BATCH = 1, /* batch/v1 Job */
	REC_JOB_JOBSET,	   /* jobset.x-k8s.io/v1alpha2 JobSet */
	REC_JOB_DOC,	   /* any other descriptor: the object as JSON */
};

/* ---- framework descriptors (reconcile/framework.c, docs/frameworks.md) */

/* How a kind lays out its pod sets, suspension and state. */
enum rec_fw_shape {
	REC_FW_SHAPE_BATCH = 1,	  /* batch/v1 Job */
	REC_FW_SHAPE_JOBSET,	  /* spec.replicatedJobs[] */
	REC_FW_SHAPE_REPLICA_MAP, /* spec.<x>ReplicaSpecs.<Type> (Kubeflow) */
	REC_FW_SHAPE_OPS,	  /* read by rec_fw.ops (reconcile/fw_*.c) */
	REC_FW_SHAPE_POD,	  /* a plain Pod, held by a scheduling gate */
};

/* The readers of a REC_FW_SHAPE_OPS descriptor (reconcile/rec_int.h). */
struct rec_fw_ops;

/* One framework Kueue integrates, as data. Every string [static]. */
struct rec_fw {
	const char *name; /* integrations.frameworks, e.g. batch/job */
	const char *group, *version, *kind, *plural;
	enum rec_fw_shape shape;
	/* JSON path of the suspend boolean, NULL-terminated. */
	const char *const *suspend;
	/* REC_FW_SHAPE_REPLICA_MAP: the map under spec and its keys in
	 * Kueue's order (NULL-terminated); absent keys are skipped. */
	const char *replicas_field;
	const char *const *replica_order;
	/* Condition types (status True): finished with success, finished
	 * with failure, all pods running (NULL: not a condition). */
	const char *cond_success, *cond_failed, *cond_ready;
	/* JSON path of managedBy (NULL-terminated) and the owning
	 * controller's own name (managedBy absent or equal: not someone
	 * else's object). */
	const char *const *managed_by;
	const char *own_controller;
	const char *pod_index_label; /* TAS pod index label */
	/* REC_FW_SHAPE_OPS: the shape's readers [static]; else NULL. */
	const struct rec_fw_ops *ops;
};

/* The descriptor of integrations.frameworks name `name` [borrowed], or
 * NULL when cueue has none. */
const struct rec_fw *rec_fw_by_name(const char *name);

/* The descriptor of objects of group (API group, "" for core) and kind
 * [both borrowed], or NULL. */
const struct rec_fw *rec_fw_by_kind(const char *group, const char *kind);

/* The table, for iteration: descriptor i, NULL past the end. */
const struct rec_fw *rec_fw_at(size_t i);

/* A descriptor [borrowed] of a kind cueue never writes to nor watches
 * (StatefulSet, LeaderWorkerSet: reconcile/fw_serving.c): its Pods are
 * queued as pod groups, labelled by the serving webhooks. */
bool rec_fw_pods_only(const struct rec_fw *fw);

/* A lookup of the cached object group/plural ns/name (ns NULL for a
 * cluster-scoped one) [borrowed from the cache, valid during the
 * reconcile], or NULL. */
typedef const json_t *(*rec_fw_lookup_fn)(const char *group, const char *plural,
    const char *ns, const char *name, void *payload);

/* The lookup the descriptors whose pod sets live in another object use
 * (a TrainJob's training runtime; reconcile/fw_trainjob.c). Set once by
 * the controller; NULL (the default): none is found. */
void rec_fw_set_lookup(rec_fw_lookup_fn fn, void *payload);

/* Does the TrainJob doc [borrowed] reference the training runtime name
 * [borrowed]: the ClusterTrainingRuntime name when cluster, else the
 * TrainingRuntime name of namespace ns [borrowed] (its own namespace)?
 * The controller looks its TrainJobs at again when such a runtime
 * appears, changes or goes away (reconcile/fw_trainjob.c). */
bool rec_trainjob_uses_runtime(
    const json_t *doc, bool cluster, const char *ns, const char *name);

/* A borrowed view of one managed job: the members named by kind are
 * set (REC_JOB_DOC: fw, doc and meta). */
struct rec_job {
	enum rec_job_kind kind;
	const struct api_job *job;	 /* [borrowed] REC_JOB_BATCH */
	const struct api_jobset *jobset; /* [borrowed] REC_JOB_JOBSET */
	const struct rec_fw *fw;	 /* [static] REC_JOB_DOC */
	const json_t *doc;		 /* [borrowed] REC_JOB_DOC */
	const struct api_meta *meta;	 /* [borrowed] REC_JOB_DOC: doc's */
};

/* The descriptor of j's kind [static]; never NULL. */
const struct rec_fw *rec_job_fw(const struct rec_job *j);

/* The job's metadata [borrowed from j]. */
const struct api_meta *rec_job_meta(const struct rec_job *j);

/* Kueue's pod sets of the job (api_job_podsets / api_jobset_podsets).
 * *out initialised here; api_podsets_dispose it. */
CU_MUST_CHECK int rec_job_podsets(
    const struct rec_job *j, struct api_podsets *out, cu_error *err);

/* ---- 1. the Workload for a job --------------------------------------- */

struct rec_wl_build_opts {
	/* API_WORKLOAD_NAME_MAX, or API_WORKLOAD_NAME_SHORT_MAX under the
	 * ShortWorkloadNames gate; 0 means API_WORKLOAD_NAME_MAX. */
	size_t name_max;
	/* Job label keys copied to the Workload (Configuration
	 * labelKeysToCopy) [borrowed]; NULL for none. */
	const struct api_strlist *label_keys_to_copy;
	/* The resolved priority [borrowed]; when NULL it is resolved here
	 * with `lookup` (api_resolve_priority), and with neither the
	 * Workload gets priority 0 and no priorityClassRef. */
	const struct api_priority *priority;
	const struct api_priority_lookup *lookup; /* [borrowed] or NULL */
};

/*
 * The Workload Kueue creates for job j (ConstructWorkload +
 * prepareWorkload): apiVersion/kind; metadata name (api_workload_name of
 * the job's kind, group, name and uid), namespace, labels (copied keys +
 * kueue.x-k8s.io/job-uid), annotations (provreq.kueue.x-k8s.io/ keys, left out
 * when none), finalizers [kueue.x-k8s.io/resource-in-use], one
 * ownerReference to the job with controller and blockOwnerDeletion true;
 * spec queueName (the job's queue-name label; left out when empty),
 * podSets [{name, template, count, minCount?}] from rec_job_podsets (the
 * templates are the originals a stop restores), maximumExecutionTimeSeconds
 * (from the max-exec-time-seconds label when a positive int32), priority
 * (always) and priorityClassRef (when a class applies), active true.
 * opts [borrowed; NULL = defaults]. *out [owned: json_decref].
 * Errors: CU_EINVAL (job without name/uid, or a pod set Kueue cannot
 * build; message names the field), CU_ENOTFOUND (the priority class the
 * job names does not exist; from the lookup), CU_EIO, CU_ENOMEM.
 */
CU_MUST_CHECK int rec_wl_build(const struct rec_job *j,
    const struct rec_wl_build_opts *opts, json_t **out, cu_error *err);

/*
 * Kueue's Workload validation of requests and limits
 * (WorkloadValidateResourcesAreNonNegative, on by default) on a built
 * Workload wl [borrowed] (reconcile/badreq.c): CU_EINVAL naming the first
 * negative one ("spec.podSets[0].template.spec.containers[0].resources.
 * requests[cpu]: Invalid value: \"-3\": must be greater than or equal to
 * 0"), else CU_OK.
 */
CU_MUST_CHECK int rec_wl_requests_valid(const json_t *wl, cu_error *err);

/* The reason of the Warning event on a job whose Workload cannot be built
 * (Kueue's jobframework ReasonErrWorkloadCompose). */
#define REC_ERR_WORKLOAD_COMPOSE "ErrWorkloadCompose"

/* ---- 1a. admission gates (reconcile/gates.c) ------------------------ */

/* The non-empty admission-gated-by annotation of m [borrowed], or NULL
 * (absent or "": not gated, as Kueue's HasAdmissionGate). */
const char *rec_gate_value(const struct api_meta *m);

/* Copy the job's (job [borrowed]) gate onto the Workload object wl being
 * built (metadata.annotations). CU_ENOMEM. */
CU_MUST_CHECK int rec_gate_copy(
    const struct api_meta *job, json_t *wl, cu_error *err);

/*
 * Kueue's UpdateAdmissionGatedBy: when the job's gate differs from its
 * Workload's, *patch [owned] sets (or removes) the Workload's annotation
 * under its resourceVersion and *event [owned: cu_free] is the job's
 * UpdatedWorkload message ("Updated workload AdmissionGatedBy to
 * \"<value>\""); both NULL when they agree. CU_ENOMEM.
 */
CU_MUST_CHECK int rec_gate_follow_patch(const struct api_meta *job,
    const struct api_workload *wl, json_t **patch, char **event, cu_error *err);

/* "Updated workload AdmissionGatedBy to <Go %q of v>" [owned: cu_free];
 * NULL when out of memory. */
char *rec_gate_quote_event(const char *v);

struct rec_wl_view;
struct rec_plan;

/*
 * The gate in the Workload reconciler (Kueue's IsAdmissible and
 * mayUpdateConditionForAdmissionGatedBy), for a Workload that holds no
 * quota: gated, it leaves the engine (FORGET when queued) and gets
 * QuotaReserved=False AdmissionGated "Admission is gated by: <gates>"
 * (event AdmissionGated on the Workload the first time); no longer gated
 * while the condition says so, the status write "AdmissionGatedBy
 * cleared, waiting for quota reservation" (event AdmissionGateCleared)
 * comes first and the next pass queues it. *done: the plan is complete.
 * A Workload holding quota, or the gate switched off: nothing, *done
 * false.
 */
CU_MUST_CHECK int rec_gate_workload(const struct rec_wl_view *view,
    const struct api_workload *wl, struct rec_plan *out, bool *done,
    cu_error *err);

/* ---- 1c. queue order (reconcile/order.c) ---------------------------- */

struct rec_pods_ready_cfg;

/*
 * Kueue's GetQueueOrderTimestamp for wl [borrowed] queued again after
 * its quota was released: its creation time; the eviction's time (its
 * condition's lastTransitionTime, else now_ns) after a PodsReady timeout
 * with requeuingStrategy timestamp Eviction (pods_ready [borrowed; NULL:
 * off]) or after an admission check's eviction.
 */
int64_t rec_queue_order_ns(const struct rec_pods_ready_cfg *pods_ready,
    const struct api_workload *wl, int64_t now_ns);

/* ---- 1b'. elastic jobs (reconcile/elastic.c) ------------------------ */

/* kueue.x-k8s.io/elastic-job is "true" on m [borrowed]. */
bool rec_elastic_job(const struct api_meta *m);

/* One pod set's name [borrowed] and count. */
struct rec_elastic_count {
	const char *name;
	int32_t count;
};

enum rec_elastic_change {
	REC_ELASTIC_SAME,	  /* every count equal */
	REC_ELASTIC_DOWN,	  /* some fewer, none more (ScaledDown) */
	REC_ELASTIC_UP,		  /* some more, none fewer */
	REC_ELASTIC_MIXED,	  /* some fewer and some more */
	REC_ELASTIC_INCOMPATIBLE, /* not the same pod set names */
};

/* The job's counts job[0..nj) against its Workload's wl[0..nw), pod sets
 * matched by name (Kueue's PodSetsCounts comparisons). */
enum rec_elastic_change rec_elastic_compare(const struct rec_elastic_count *job,
    size_t nj, const struct rec_elastic_count *wl, size_t nw);

/*
 * An elastic job scaled down (rec_elastic_compare says DOWN): *patch
 * [owned] sets wl's spec.podSets counts to the job's, under wl's
 * resourceVersion (Kueue's EnsureWorkloadSlices updates the slice in
 * place; its admission stays, and its quota shrinks to the new counts
 * at once). NULL when the job did not scale down. CU_ENOMEM, or the
 * job's pod sets error.
 */
CU_MUST_CHECK int rec_elastic_scale_down_patch(const struct rec_job *j,
    const struct api_workload *wl, json_t **patch, cu_error *err);
/* rec_elastic_scale_down_patch for any count change unless down_only (a
 * pending slice follows the job both ways). */
CU_MUST_CHECK int rec_elastic_counts_patch(const struct rec_job *j,
    const struct api_workload *wl, bool down_only, json_t **patch,
    cu_error *err);
/* How the job's pod-set counts compare with wl's into *out. CU_ENOMEM,
 * or the job's pod sets error. */
CU_MUST_CHECK int rec_elastic_change_of(const struct rec_job *j,
    const struct api_workload *wl, enum rec_elastic_change *out, cu_error *err);

/*
 * The annotations of a Workload slice (Kueue's prepareWorkloadSlice) set
 * on the Workload object wl being built, named name [borrowed]:
 * elastic-job "true"; workload-slice-name the origin's name (name itself
 * for the first slice, old == NULL); with old [borrowed] the slice it
 * replaces, workload-slice-replacement-for "<ns>/<old name>" and old's
 * origin name. metadata.name becomes name (a slice is named with the
 * job's generation). CU_ENOMEM.
 */
CU_MUST_CHECK int rec_elastic_slice_annotations(const struct api_workload *old,
    const char *name, json_t *wl, cu_error *err);

/* Kueue's scheduling gate on an elastic Job's pods: its webhook adds it
 * to the pod template, the elastic ungater removes it within the active
 * slice's granted count. */
#define REC_ELASTIC_GATE "kueue.x-k8s.io/elastic-job"

/* One pod of an elastic job's pod set, as the elastic ungater sees it. */
struct rec_egate_pod {
	bool gated;	 /* carries REC_ELASTIC_GATE */
	bool terminated; /* succeeded, failed or being deleted */
};

/*
 * Kueue's ElasticJobUngater for one pod set: ungate[i] (n entries, set
 * by the call) is true for the gated live pods to ungate, taken in the
 * order given, so that the live ungated pods never exceed granted (the
 * active slice's admitted count; 0 when no slice is admitted).
 * Terminated pods count for nothing and are never ungated. Returns how
 * many pods to ungate.
 */
size_t rec_elastic_ungate(
    const struct rec_egate_pod *pods, size_t n, int32_t granted, bool *ungate);

/* ---- 1b''. workload slices of elastic jobs (reconcile/slices.c) ------ */

/* Kueue's finish reason of a slice replaced by a larger one. */
#define REC_FINISHED_SLICE_REPLACED "WorkloadSliceReplaced"

/* The name [borrowed from wl] of the slice wl replaces: its
 * workload-slice-replacement-for annotation "<ns>/<name>" when ns is
 * wl's own; NULL otherwise. */
const char *rec_slice_replaces(const struct api_workload *wl);

/* The slices of one job that its reconciler looks at, chosen among the
 * Workloads it controls. */
struct rec_slices {
	/* The job's Workload for rec_job_in.wl [borrowed]: a finished slice
	 * still holding cueue's finalizer (to lose it) if any, else the
	 * newest unfinished slice; NULL when there is none. */
	const struct api_workload *wl;
	/* The unfinished slice before wl [borrowed] (two slices: wl
	 * replaces it); NULL otherwise. */
	const struct api_workload *old;
};

/* Kueue's FindNotFinishedWorkloads order (creation time, then the
 * replaced slice first) over wls[0..n) [borrowed] into *out. */
void rec_slices_pick(
    const struct api_workload *const *wls, size_t n, struct rec_slices *out);

/* old's status patch [owned] finishing it as replaced by by (reason
 * WorkloadSliceReplaced, Kueue's message naming by's UID and job UID);
 * NULL when old is finished already. CU_ENOMEM. */
CU_MUST_CHECK int rec_slice_replaced_patch(const struct api_workload *old,
    const struct api_workload *by, int64_t now_ns, json_t **patch,
    cu_error *err);

/* ---- 1b. a job's ownership of its Workload (reconcile/prebuilt.c) ----- */

/*
 * Kueue's PrebuiltWorkloadNameFor (WorkloadIdentifierAnnotations on, its
 * default): the job's kueue.x-k8s.io/prebuilt-workload-name annotation
 * when not empty, else that label; NULL when neither [borrowed from m].
 * Any job kind: it reads metadata only.
 */
const char *rec_prebuilt_workload_name(const struct api_meta *m);

/*
 * Is wl's controller owner the object m describes (same uid)? *other:
 * wl has a controller owner that is another object (a Workload Kueue
 * ignores for this job).
 */
bool rec_wl_controlled_by(
    const struct api_workload *wl, const struct api_meta *m, bool *other);

/*
 * EnsurePrebuiltWorkloadOwnership: the merge patch making job j the
 * controller owner of wl (its reference replaces any other to the same
 * uid; the other references stay) and setting label
 * kueue.x-k8s.io/job-uid (when the uid is a label value), guarded by
 * wl's resourceVersion. *patch [owned: json_decref]; NULL when wl has no
 * resourceVersion. CU_ENOMEM.
 */
CU_MUST_CHECK int rec_wl_adopt_patch(const struct rec_job *j,
    const struct api_workload *wl, json_t **patch, cu_error *err);

/* ---- 2. does the Workload still match its job? ------------------------ */

/*
 * Kueue's EquivalentToWorkload: false when the Workload's controller owner
 * is not this job (name and uid; FinishOrphanedWorkloads), when
 * maximumExecutionTimeSeconds differs from the job's label, or when the
 * pod sets differ in number, count, minCount, containers, initContainers
 * or (unless the Workload is Admitted) tolerations. Containers compare
 * semantically: quantities by value ("1000m" == "1"), an absent field
 * equals an empty one. While the Workload holds quota, counts compare
 * against the admitted counts (partial admission); if that fails and the
 * job is suspended, against spec.podSets. *out: true = keep the
 * Workload, false = replace it. Errors from pod-set extraction
 * (CU_EINVAL naming the field, CU_ENOMEM).
 */
CU_MUST_CHECK int rec_wl_equivalent(const struct rec_job *j,
    const struct api_workload *wl, bool *out, cu_error *err);

/* ---- 3. Workload status ------------------------------------------------ */

/*
 * Common contract: wl [borrowed] is the Workload as read; *patch is NULL
 * when the status already says this (send nothing), else a merge patch
 * {"metadata":{"resourceVersion"}, "status":{...}} [owned: json_decref]
 * for PATCH .../workloads/NAME/status. Conditions follow
 * apimeta.SetStatusCondition: reason, message and observedGeneration
 * (metadata.generation) are updated, lastTransitionTime (now_ns, RFC 3339
 * seconds) only changes with the status. Messages longer than
 * REC_CONDITION_MESSAGE_MAX are cut as Kueue cuts them. Errors: CU_EINVAL
 * (missing input, message names it), CU_ENOMEM.
 */

/*
 * Admission (ADM_ADMIT decision d [borrowed], whose uses name flavors
 * per resource with usage in milli-units for the whole pod set):
 * status.admission {clusterQueue, podSetAssignments[{name, flavors,
 * resourceUsage (canonical quantities, adm_format_quantity), count}]},
 * QuotaReserved=True (QuotaReserved, "Quota reserved in ClusterQueue
 * <cq>"), Evicted/Preempted reset to False ("Previously: <msg>") when
 * True, Admitted=True (Admitted, "The workload is admitted"),
 * status.resourceRequests dropped (the assignment supersedes it).
 */
CU_MUST_CHECK int rec_wl_status_admit(const struct api_workload *wl,
    const struct adm_decision *d, int64_t now_ns, json_t **patch,
    cu_error *err);

/* Admitted=False while quota is reserved and a check is not Ready
 * (UnadmittedWorkloadsObservability's reason and Kueue's message). */
#define REC_ADMITTED_UNSATISFIED_CHECKS "UnsatisfiedAdmissionChecks"
#define REC_MSG_UNSATISFIED_CHECKS "The workload has not all checks ready"

/*
 * rec_wl_status_admit; with pods_ready (waitForPodsReady enabled) the same
 * write also sets PodsReady=False (WaitForStart, "Not all pods are ready or
 * succeeded"), the condition Kueue's job reconciler would write in a write
 * of its own: folded here, the admission path keeps its write count.
 */
CU_MUST_CHECK int rec_wl_status_admit_wait(const struct api_workload *wl,
    const struct adm_decision *d, bool pods_ready, int64_t now_ns,
    json_t **patch, cu_error *err);

/* Does admissionChecksStrategy rule r [borrowed] apply to the Workload
 * whose status object [borrowed] is given (no onFlavors, or one of them
 * assigned in status.admission)? */
bool rec_acheck_applies(
    const struct api_admission_check_rule *r, const json_t *status);

/* The Admitted condition a Workload status patch [borrowed; may be NULL]
 * carries: 1 True, 0 another status (an admission write of a
 * ClusterQueue with checks reserves quota only), -1 none. */
int rec_acheck_patch_admitted(const json_t *patch);

enum rec_acheck_verdict {
	REC_ACHECK_NONE = 0, /* nothing to do (or already evicted) */
	REC_ACHECK_RETRY,    /* evict: reason AdmissionCheck */
	REC_ACHECK_REJECTED, /* deactivate: DeactivationTarget AdmissionCheck */
	REC_ACHECK_NOMEM,
};

/*
 * What the Workload's check states ask for (Kueue's
 * reconcileCheckBasedEviction): a Rejected check deactivates, else a
 * Retry check evicts; an evicted Workload is left alone. *message
 * [owned: cu_free] is Kueue's text: `AdmissionCheck in Rejected state:
 * "name" (message)` (several: "AdmissionChecks", by name, "; "), for
 * Retry prefixed "Evicted due to ".
 */
enum rec_acheck_verdict rec_acheck_verdict(
    const struct api_workload *wl, char **message);

/*
 * rec_wl_status_admit_wait for a ClusterQueue with admission checks: cq
 * [borrowed; NULL: the checks are left as they are] is the spec of
 * d->cluster_queue. status.admissionChecks becomes the checks of
 * cq's admissionChecksStrategy that apply to the assigned flavors (a rule
 * without onFlavors always applies), existing states kept, new ones
 * Pending (message "", lastTransitionTime now), the others dropped, sorted
 * by name; Admitted is True only when every listed check is Ready, else
 * False (REC_ADMITTED_UNSATISFIED_CHECKS) and the job stays suspended.
 */
CU_MUST_CHECK int rec_wl_status_admit_checks(const struct api_workload *wl,
    const struct adm_decision *d, bool pods_ready,
    const struct api_cluster_queue_spec *cq, int64_t now_ns, json_t **patch,
    cu_error *err);

/*
 * A Workload holding quota: its admission checks synced with cq [borrowed;
 * NULL: left as they are] as rec_wl_status_admit_checks does, and Admitted
 * synced with QuotaReserved and the checks (Kueue's
 * reconcileSyncAdmissionChecks + SyncAdmittedCondition). *patch NULL when
 * nothing changes (a Workload without checks that is Admitted).
 */
CU_MUST_CHECK int rec_wl_status_sync_checks(const struct api_workload *wl,
    const struct api_cluster_queue_spec *cq, int64_t now_ns, json_t **patch,
    cu_error *err);

/*
 * Not admitted: QuotaReserved=False with reason [borrowed] (e.g.
 * adm_reason_string(d->reason)) and message [borrowed], status.admission
 * cleared, Admitted=False (NoReservation, "The workload has no
 * reservation"; the time it was admitted is added to
 * accumulatedPastExecutionTimeSeconds). Kueue's
 * UnsetQuotaReservationWithCondition + SyncAdmittedCondition.
 */
CU_MUST_CHECK int rec_wl_status_pending(const struct api_workload *wl,
    const char *reason, const char *message, int64_t now_ns, json_t **patch,
    cu_error *err);

/*
 * rec_wl_status_pending, and status.resourceRequests set to requests
 * [borrowed; NULL = left as it is]: Kueue's PropagateResourceRequests,
 * the podSets' total requests ([{name, resources: {resource:
 * quantity}}], podset order) written with the pending status.
 */
CU_MUST_CHECK int rec_wl_status_pending_requests(const struct api_workload *wl,
    const char *reason, const char *message, const json_t *requests,
    int64_t now_ns, json_t **patch, cu_error *err);

struct rec_eviction {
	const char *reason;  /* [borrowed] Evicted reason: REC_EVICTED_* */
	const char *message; /* [borrowed] */
	/* [borrowed] Preempted reason for preemptions
	 * (adm_preempt_reason_string: InClusterQueue, InCohortReclamation,
	 * ...); NULL for other evictions. */
	const char *preempted_reason;
	/* [borrowed] schedulingStats.evictions[].underlyingCause (a
	 * deactivation's DeactivationTarget reason); NULL: none (""). */
	const char *underlying_cause;
	/* status.requeueState written with the eviction (a PodsReadyTimeout:
	 * Kueue's UpdateRequeueState): count and requeueAt. */
	bool set_requeue;
	int32_t requeue_count;
	int64_t requeue_at_ns;
};

/*
 * Eviction (Kueue's evict.Evict): Evicted=True (reason, message; a
 * Deactivated eviction with an underlying cause has the reason
 * "DeactivatedDueTo<cause>", as Kueue writes it),
 * Preempted=True (preempted_reason, message) for preemptions,
 * status.clusterName and nominatedClusterNames cleared, admission checks
 * reset to Pending, BlockedOnPreemptionGates closed,
 * schedulingStats.evictions[reason, underlying_cause].count + 1; a
 * Deactivated eviction with an underlying cause is written with Kueue's
 * condition reason "DeactivatedDueTo<cause>" (schedulingStats and
 * metrics keep "Deactivated" and the cause); it also removes the
 * DeactivationTarget condition (it is consumed) and status.requeueState (as
 * Kueue: a reactivated Workload starts its backoff anew); set_requeue writes
 * status.requeueState. status.admission is kept (the quota is held until the
 * job's pods are gone). NULL when the Workload is already Evicted (an eviction
 * is written once).
 */
CU_MUST_CHECK int rec_wl_status_evict(const struct api_workload *wl,
    const struct rec_eviction *ev, int64_t now_ns, json_t **patch,
    cu_error *err);

/*
 * After an eviction, once the job is stopped and no longer active
 * (rec_job_is_active false): Requeued (True for Preempted and
 * NodeFailures evictions, else False; reason and message of the Evicted
 * condition), QuotaReserved=False (PendingEvaluation, the eviction
 * message), admission cleared, Admitted=False. NULL when the Workload is
 * not Evicted or holds no quota. A Workload with a PodsReady condition
 * (waitForPodsReady) gets PodsReady=False (WaitForStart) in the same
 * write, as Kueue's job reconciler sets it for a Workload no longer
 * admitted.
 */
CU_MUST_CHECK int rec_wl_status_release(const struct api_workload *wl,
    int64_t now_ns, json_t **patch, cu_error *err);

/* rec_wl_status_release, with Requeued=False whatever the eviction's
 * reason when park is set (Kueue's SkipReassignmentForPodOwnedWorkloads
 * for a Workload owned by a single Pod: it ends with its Pod, whose
 * owner makes a new one; the Workload reconciler then keeps it out of
 * scheduling). */
CU_MUST_CHECK int rec_wl_status_release_parked(const struct api_workload *wl,
    bool park, int64_t now_ns, json_t **patch, cu_error *err);

/*
 * Kueue's SetDeactivationTarget: DeactivationTarget=True with reason and
 * message [borrowed]; status.accumulatedPastExecutionTimeSeconds is
 * cleared (reconcileMaxExecutionTime). NULL when already True.
 */
CU_MUST_CHECK int rec_wl_status_deactivation_target(
    const struct api_workload *wl, const char *reason, const char *message,
    int64_t now_ns, json_t **patch, cu_error *err);

/*
 * Requeued=True with reason and message [borrowed] (reactivation, queue
 * restarted after a stop). NULL when already True.
 */
CU_MUST_CHECK int rec_wl_status_requeued(const struct api_workload *wl,
    const char *reason, const char *message, int64_t now_ns, json_t **patch,
    cu_error *err);

/*
 * Kueue's OnHold (a StatefulSet scaled to zero keeps its Workload): is
 * wl's QuotaReserved False with reason REC_REASON_ON_HOLD?
 */
bool rec_workload_on_hold(const struct api_workload *wl);

/*
 * hold: a Workload that holds quota and is not finished gets
 * QuotaReserved=False (REC_REASON_ON_HOLD, message [borrowed]), its
 * admission cleared, Admitted=False: the quota is given back and the
 * Workload is not queued again. !hold: a Workload on hold gets
 * QuotaReserved=False (PendingEvaluation, message) and is queued again.
 * NULL when nothing would change.
 */
CU_MUST_CHECK int rec_wl_status_hold(const struct api_workload *wl, bool hold,
    const char *message, int64_t now_ns, json_t **patch, cu_error *err);

/*
 * Once the backoff of a PodsReadyTimeout eviction is over (Requeued=False
 * with that reason): Requeued=True (BackoffFinished, "The workload backoff
 * was finished") and status.requeueState.requeueAt cleared (the count is
 * kept). NULL when nothing would change.
 */
CU_MUST_CHECK int rec_wl_status_backoff_finished(const struct api_workload *wl,
    int64_t now_ns, json_t **patch, cu_error *err);

/*
 * The PodsReady condition set to status (true/false), reason and message
 * [borrowed] (lastTransitionTime changes with the status only). NULL when
 * the condition already says exactly this.
 */
CU_MUST_CHECK int rec_wl_status_pods_ready(const struct api_workload *wl,
    bool ready, const char *reason, const char *message, int64_t now_ns,
    json_t **patch, cu_error *err);

/* ---- waitForPodsReady: the pure decisions ------------------------------ */

/*
 * Kueue's generatePodsReadyCondition for a Workload wl [borrowed] that is
 * admitted: `ready` says the job's ready + succeeded pods reach its pod
 * count (rec_job_pods_ready). Returns the condition status (true: True)
 * and sets *reason [static]: Started (ready; Recovered when the condition
 * was WaitForRecovery or Recovered), WaitForRecovery (not ready and the
 * condition was True, or already WaitForRecovery), else WaitForStart.
 */
bool rec_pods_ready_condition(
    const struct api_workload *wl, bool ready, const char **reason);

/*
 * Are the job's pods ready (Kueue's PodsReady of each integration)? Job:
 * status.ready + status.succeeded >= min(parallelism, completions) (the
 * admitted count once started); JobSet: the ready + succeeded child Jobs
 * of status.replicatedJobsStatus add up to the replicas of
 * spec.replicatedJobs. *ready and *total (may be NULL) are those counts
 * (pods of a Job, child Jobs of a JobSet).
 */
bool rec_job_pods_ready(
    const struct rec_job *j, int32_t *ready, int32_t *total);

/*
 * The requeue backoff of the count-th requeue (count >= 1), in ns:
 * base_s * 2^(count-1) seconds, capped at max_s (max_s <= 0: no cap);
 * Kueue's UpdateRequeueState without its 0.01 % jitter. Never overflows.
 */
int64_t rec_requeue_backoff_ns(int32_t base_s, int32_t max_s, int32_t count);

/* The pods the Workload wl [borrowed] expects: the admitted counts of
 * status.admission (partial admission), else the spec's pod set counts. */
int32_t rec_wl_pod_count(const struct api_workload *wl);

/*
 * Root cause first: why a job's pods are not ready, from a LIST of them
 * (pods [borrowed]: a PodList object, or its items array). A pod counts
 * as ready with condition Ready=True or phase Succeeded; `expected` pods
 * are wanted (<= 0: as many as listed). Returns "<n> of <m> pods not
 * ready: <cause>" [owned: cu_free], the cause being the message of the
 * PodScheduled=False condition most of the not-ready pods share (the
 * scheduler's "0/3 nodes are available: ..."); NULL when every pod is
 * ready, no pod says why, or out of memory.
 */
char *rec_pods_not_ready_message(const json_t *pods, int32_t expected);

/* The waitForPodsReady configuration as the reconcilers use it. */
struct rec_pods_ready_cfg {
	bool enable;
	int64_t timeout_ns;
	/* recoveryTimeout; has_recovery false: a Workload whose pods stop
	 * being ready is never evicted for it. */
	bool has_recovery;
	int64_t recovery_timeout_ns;
	/* requeuingStrategy */
	bool creation_timestamp; /* timestamp Creation (else Eviction) */
	bool has_backoff_limit;	 /* unset: requeued forever */
	int32_t backoff_limit_count;
	int32_t backoff_base_s, backoff_max_s;
};

/*
 * The pods-not-ready timeout of an admitted Workload (Kueue's
 * admittedNotReadyWorkload): NULL *cause when there is none to run
 * (PodsReady True, not Admitted, or WaitForRecovery without a
 * recoveryTimeout); else *cause [static] WaitForStart (from the Admitted
 * condition's lastTransitionTime, timeout) or WaitForRecovery (from the
 * PodsReady condition's, recoveryTimeout), and *left_ns the time left at
 * now_ns (<= 0: expired).
 */
void rec_pods_ready_timeout(const struct rec_pods_ready_cfg *cfg,
    const struct api_workload *wl, int64_t now_ns, const char **cause,
    int64_t *left_ns);

/*
 * The spec patch that deactivates wl (spec.active=false), as Kueue does
 * for a DeactivationTarget. *patch NULL when already inactive; else a
 * merge patch with metadata.resourceVersion [owned: json_decref].
 * CU_ENOMEM.
 */
CU_MUST_CHECK int rec_wl_deactivate_patch(
    const struct api_workload *wl, json_t **patch, cu_error *err);

/*
 * Finished=True with reason [borrowed] (REC_FINISHED_*) and message
 * [borrowed]; status.admission is kept, as Kueue keeps it (the quota is
 * released because the Workload is finished). NULL when already Finished.
 */
CU_MUST_CHECK int rec_wl_status_finish(const struct api_workload *wl,
    const char *reason, const char *message, int64_t now_ns, json_t **patch,
    cu_error *err);

/*
 * rec_wl_status_finish; with ready_reason [borrowed] non-NULL the same
 * write sets PodsReady=True (ready_reason, Kueue's message,
 * lastTransitionTime ready_ns) when it is not True yet.
 */
CU_MUST_CHECK int rec_wl_status_finish_ready(const struct api_workload *wl,
    const char *reason, const char *message, const char *ready_reason,
    int64_t ready_ns, int64_t now_ns, json_t **patch, cu_error *err);

/*
 * Kueue's preemption message: "Preempted to accommodate a workload (UID:
 * <uid>, JobUID: <job uid>) due to <prioritization in the ClusterQueue |
 * reclamation within the cohort | reclamation within the cohort while
 * borrowing | Fair Sharing within the cohort>; preemptor path: <path>;
 * preemptee path: <path>". Empty or NULL strings print as UNKNOWN. Paths are
 * "/<cohort>/.../<cq>". All strings [borrowed]; returns [owned: cu_free] or
 * NULL (out of memory).
 */
char *rec_preemption_message(const char *preemptor_uid,
    const char *preemptor_job_uid, enum adm_preempt_reason reason,
    const char *preemptor_path, const char *preemptee_path);

/* ---- 4. start and stop ------------------------------------------------- */

/*
 * The one patch that starts admitted job j: spec.suspend false and, per
 * pod set of wl's status.admission (JobSet: the replicatedJob whose
 * lower-cased name is the pod set name), the flavors' nodeLabels merged
 * into the pod template's nodeSelector, their tolerations appended
 * (without duplicates), and the podset/local-queue/cluster-queue labels;
 * for a Job admitted partially (minCount), parallelism = the admitted
 * count (and completions when kueue.x-k8s.io/job-completions-equal-
 * parallelism is true). flavors [borrowed], n_flavors: the
 * ResourceFlavors (at least those the admission names).
 * *patch [owned: json_decref] is a merge patch for the job, or NULL when
 * the job is not suspended (already started) or nothing would change.
 * Errors: CU_EINVAL (wl not admitted, pod sets that do not match the job,
 * or a conflicting key: permanent, see above), CU_ENOTFOUND (a flavor
 * not in flavors; retry when it appears), CU_ENOMEM.
 */
CU_MUST_CHECK int rec_job_start_patch(const struct rec_job *j,
    const struct api_workload *wl, const struct api_resource_flavor *flavors,
    size_t n_flavors, json_t **patch, cu_error *err);

enum rec_stop_step {
	REC_STOP_DONE = 0,    /* nothing to write: *patch is NULL */
	REC_STOP_SUSPEND,     /* spec patch: suspend (+ stopping mark) */
	REC_STOP_RESET_START, /* /status patch: status.startTime = null */
	REC_STOP_RESTORE,     /* spec patch: restore templates (+ unmark) */
};

/*
 * The next write that stops job j (evicted, not admitted, or its
 * Workload deleted) and restores its pod templates from wl's
 * spec.podSets [borrowed; may be NULL: suspend only].
 * JobSet: one patch (suspend + restore), or DONE when already suspended.
 * Job (Kueue's custom Stop): SUSPEND while spec.suspend is not true
 * (suspend=true and annotation kueue.x-k8s.io/stopping=true); then
 * RESET_START while status.startTime is set (a /status patch); then
 * RESTORE (templates, partial-admission parallelism, annotation removed;
 * the batch controller's labels on the template are kept), or DONE when
 * nothing is left. *step says which; *patch [owned: json_decref] is the
 * merge patch, NULL exactly when *step is REC_STOP_DONE. Errors:
 * CU_ENOMEM.
 */
CU_MUST_CHECK int rec_job_stop_patch(const struct rec_job *j,
    const struct api_workload *wl, enum rec_stop_step *step, json_t **patch,
    cu_error *err);

/* ---- 5. job state ------------------------------------------------------ */

/* Job: spec.suspend true and no kueue.x-k8s.io/stopping=true annotation
 * (a stop in progress is not suspended yet); JobSet: spec.suspend. */
bool rec_job_is_suspended(const struct rec_job *j);

/* Job: status.active != 0; JobSet: some replicatedJobsStatus[].active > 0. */
bool rec_job_is_active(const struct rec_job *j);

/*
 * Job: a Complete or Failed condition with status True; JobSet: Completed
 * or Failed True. *success (may be NULL): not Failed; *message (may be
 * NULL): that condition's message [borrowed from j; "" when none].
 * Returns false (outputs untouched) while the job runs.
 */
bool rec_job_finished(
    const struct rec_job *j, bool *success, const char **message);

/* ==== 2. Events ==========================================================
 * The pure core of cueue's events.k8s.io/v1 Event recorder:
 * given an event to emit, decide whether to CREATE a new Event object,
 * PATCH the series of the one recorded for an identical earlier event, or
 * DROP it, and build the JSON body of that write. Plus the table of
 * Kueue's event types and reporting controllers by reason, and a guard
 * that lets callers announce Suspended/Resumed only on real transitions.
 *
 * Semantics follow client-go's tools/events broadcaster, which
 * controller-runtime's GetEventRecorder uses (docs/events.md):
 *  - An Event is named `<regarding.name>.<hex nanoseconds>`, with
 *    eventTime = now (microseconds), reportingController = the event's
 *    controller, reportingInstance = `<controller>-<instance>`, action
 *    (the reason when none is given), reason, regarding, note (cut to
 *    1024 bytes with " ..." as Kueue's TruncateEventMessage, on a UTF-8
 *    boundary) and type. Objects without a namespace put their events in
 *    "default".
 *  - Series: an event isomorphic to one recorded before (client-go's
 *    key: same type, action, reason, reporting controller and instance,
 *    regarding; the note is not part of it, the Event keeps the first
 *    one) is a repeat. The first repeat is a strategic-merge PATCH of
 *    that Event with {"series": {"count": 2, "lastObservedTime"}};
 *    later ones are only counted (REC_EVENT_FOLD) until
 *    REC_EVENTS_SERIES_REFRESH_NS (30 minutes, client-go's refresh)
 *    after the last PATCH, when the next repeat writes the count. So a
 *    series costs at most two writes per half hour, as Kueue's. A series
 *    not observed for REC_EVENTS_SERIES_FINISH_NS (6 minutes, client-go's
 *    finishTime) is over: the next repeat creates a new Event. The
 *    recorder remembers the last REC_EVENTS_LRU_SIZE keys (least
 *    recently used forgotten first).
 *  - Spam filter (client-go's core/v1 EventCorrelator, which
 *    controller-runtime's older recorder applies): a token bucket per
 *    reporting controller + regarding object (an LRU of the same size),
 *    burst 25, one token back every 300 s, full at start. An event
 *    without a token is dropped before the series, so it is neither
 *    written nor counted.
 *
 * Why this matters (docs/architecture.md lesson 4, Kueue #7649's "x14709"):
 * folding hides a flapping controller, the spam filter bounds its API writes,
 * and the transition guard keeps a level-triggered reconciler from announcing
 * the same state again.
 *
 * No I/O and no clock reads: time comes in as now_ns, bodies go out as
 * jansson objects for the caller to send. Event-loop thread only.
 * Prefix: rec_events_, rec_event_, REC_EVENT(S)_.
 */

#define REC_EVENTS_LRU_SIZE 4096
#define REC_EVENTS_SPAM_BURST 25
#define REC_EVENTS_SPAM_REFILL_NS (300LL * 1000000000LL)
#define REC_EVENTS_SERIES_FINISH_NS (360LL * 1000000000LL)
#define REC_EVENTS_SERIES_REFRESH_NS (1800LL * 1000000000LL)
/* Longest note (events.k8s.io's noteLengthLimit, Kueue's cut). */
#define REC_EVENTS_NOTE_MAX 1024
/* Longest reportingInstance the API accepts. */
#define REC_EVENTS_INSTANCE_MAX 128
/* Longest event key (all identifying strings together) accepted. */
#define REC_EVENTS_KEY_MAX ((size_t)1 << 20)

#define REC_EVENT_NORMAL "Normal"
#define REC_EVENT_WARNING "Warning"
#define REC_EVENT_REASON_SUSPENDED "Suspended"
#define REC_EVENT_REASON_RESUMED "Resumed"

/* Kueue's reporting controllers (constants.AdmissionName,
 * WorkloadControllerName, and the job framework's
 * "<integration>-kueue-controller"). */
#define REC_EVENTS_CTL_ADMISSION "kueue-admission"
#define REC_EVENTS_CTL_WORKLOAD "kueue-workload-controller"
#define REC_EVENTS_CTL_PROVISIONING "kueue-provisioning-request-controller"
#define REC_EVENTS_CTL_JOB "batch/job-kueue-controller"
#define REC_EVENTS_CTL_JOBSET "jobset.x-k8s.io/jobset-kueue-controller"

typedef struct rec_events rec_events;

struct rec_events_opts {
	/* Reporting controller used when an event names none, e.g.
	 * "kueue-workload-controller". [borrowed, copied] required. */
	const char *component;
	/* Instance suffix: reportingInstance is "<controller>-<instance>"
	 * (client-go: the host name), cut to REC_EVENTS_INSTANCE_MAX.
	 * [borrowed, copied]; NULL = the controller alone. */
	const char *instance;
	/* 0 = the defaults above. Tests shrink them. */
	size_t lru_size;
	int burst;
	int64_t refill_ns;
};

/* One event to emit. Every string [borrowed], read during the call only. */
struct rec_event {
	/* regarding */
	const char *kind;	 /* required, e.g. "Job" */
	const char *api_version; /* e.g. "batch/v1"; NULL = "" */
	const char *namespace_;	 /* NULL or "" for cluster-scoped objects */
	const char *name;	 /* required */
	const char *uid;	 /* NULL = "" */
	const char *field_path;	 /* usually NULL */
	const char *type;	 /* REC_EVENT_NORMAL or REC_EVENT_WARNING */
	const char *reason;	 /* required, CamelCase */
	const char *message;	 /* the note; NULL = "" */
	/* reportingController; NULL = opts.component */
	const char *reporting_controller;
	const char *action; /* NULL = the reason (as Kueue passes it) */
};

/*
 * Kueue's type and reporting controller of an event with reason about an
 * object of kind (both [borrowed]): Warning for the reasons Kueue warns
 * with (a Workload's pending reasons, SecondPassFailed,
 * AdmissionCheckRejected, MaximumExecutionTimeExceeded,
 * UnsupportedField, ...), else Normal; the scheduler's controller for
 * QuotaReserved/Admitted/Preempted/PreemptedWorkload and pending
 * reasons, the Workload controller for other Workload events, the job
 * framework's for Job and JobSet events. Outputs [static]; either may be
 * NULL to skip it. *controller is NULL for kinds it does not know.
 */
void rec_events_kueue_meta(const char *kind, const char *reason,
    const char **type, const char **controller);

/* note cut as Kueue's TruncateEventMessage (1024 bytes, " ..." suffix),
 * on a UTF-8 character boundary: [owned: cu_free], NULL on ENOMEM. */
char *rec_events_truncate_note(const char *note);

/*
 * Kueue's notes, [owned: cu_free], NULL on ENOMEM; strings [borrowed],
 * NULL read as "". Durations print as Go's "%.0f" of seconds (to the
 * nearest second, halves to even).
 *  quota_reserved: "Quota reserved in ClusterQueue <cq>, wait time since
 *    queued was <n>s";
 *  admitted: "Admitted by ClusterQueue <cq>, wait time since reservation
 *    was <n>s";
 *  preempted: msg + "; preemptor effective priority: <p> (base: <p>,
 *    boost: 0); preemptee effective priority: <v> (base: <v>, boost: 0)"
 *    (no priority boost in cueue);
 *  preempted_workload: "Preempted workload <ns>/<name> (UID: <uid>) in
 *    ClusterQueue <cq>" + the same priorities;
 *  finished: "Workload '<ns>/<name>' is declared finished".
 */
char *rec_events_note_quota_reserved(const char *cq, int64_t wait_ns);
char *rec_events_note_admitted(const char *cq, int64_t wait_ns);
char *rec_events_note_preempted(
    const char *msg, int32_t preemptor_prio, int32_t preemptee_prio);
char *rec_events_note_preempted_workload(const char *ns, const char *name,
    const char *uid, const char *cq, int32_t preemptor_prio,
    int32_t preemptee_prio);
char *rec_events_note_finished(const char *ns, const char *name);

enum rec_event_action {
	REC_EVENT_DROP = 0, /* spam filter: send nothing */
	REC_EVENT_CREATE,   /* POST /apis/events.k8s.io/v1/namespaces/{ns}/
			       events */
	REC_EVENT_PATCH,    /* PATCH .../events/{name} (the series),
			       application/strategic-merge-patch+json */
	REC_EVENT_FOLD,	    /* a repeat counted in the series, nothing to
			       send (count set, no name or body) */
};

/* What to send. Release with rec_event_write_dispose. */
struct rec_event_write {
	enum rec_event_action action;
	char *namespace_; /* [owned: cu_free] NULL for DROP */
	char *name;	  /* [owned: cu_free] the Event's name; NULL for DROP */
	int32_t count;	  /* occurrences after this write (1: no series yet); 0
			     for DROP */
	json_t *body;	  /* [owned: json_decref] NULL for DROP */
};

void rec_event_write_dispose(struct rec_event_write *w);

/* New recorder [owned: rec_events_free]. opts [borrowed]. CU_EINVAL (no
 * component, negative or overflowing limits), CU_ENOMEM. */
CU_MUST_CHECK int rec_events_new(
    rec_events **out, const struct rec_events_opts *opts, cu_error *err);
void rec_events_free(rec_events *r);

/*
 * Decide what to do with ev at now_ns and build the write. *out is
 * initialised here (dispose it whatever the action). The recorder's state
 * changes only on success. CU_EINVAL (missing kind/name/reason, type not
 * Normal/Warning), CU_ETOOBIG (key over REC_EVENTS_KEY_MAX), CU_ENOMEM.
 */
CU_MUST_CHECK int rec_events_record(rec_events *r, const struct rec_event *ev,
    int64_t now_ns, struct rec_event_write *out, cu_error *err);

/*
 * The PATCH of an Event came back 404 (expired: --event-ttl): forget it
 * and build a CREATE for ev (new name, no series), without spending a
 * spam token. Same errors as rec_events_record.
 */
CU_MUST_CHECK int rec_events_recreate(rec_events *r, const struct rec_event *ev,
    int64_t now_ns, struct rec_event_write *out, cu_error *err);

/* Forget the recorded Event of ev (e.g. its CREATE was refused), so the
 * next identical event creates a new one. No-op when unknown (and, best
 * effort, when the key cannot be built for lack of memory). */
void rec_events_forget(rec_events *r, const struct rec_event *ev);

/* The series PATCH of Event ns/name [borrowed] came back 404 (the Event
 * expired, --event-ttl): forget its series, so that the next repeat
 * creates a new Event (client-go creates it again). No-op when unknown. */
void rec_events_forget_name(rec_events *r, const char *ns, const char *name);

/* Number of remembered dedup keys / spam buckets (tests, metrics). */
size_t rec_events_size(const rec_events *r);
size_t rec_events_spam_size(const rec_events *r);

/* ---- Suspended/Resumed only on real transitions ------------------------ */

enum rec_run_state {
	REC_RUN_UNKNOWN = 0, /* not observed yet */
	REC_RUN_SUSPENDED,
	REC_RUN_RUNNING,
};

/* Per-object memory of the last announced state; zero-initialise and keep
 * it with the object's reconcile state. */
struct rec_transition {
	enum rec_run_state announced;
};

/*
 * prev: the state the object had before this reconcile's write (as
 * observed); next: the state after it (prev again when nothing was
 * written). Returns REC_EVENT_REASON_SUSPENDED or _RESUMED [static] when
 * prev -> next is a real transition that t has not announced yet, else
 * NULL. Without t (NULL) it is the plain comparison prev != next (both
 * known). With t: a stale observation repeating an already announced
 * transition returns NULL; an unchanged observation (prev == next)
 * records that state as announced; a first observation (prev UNKNOWN)
 * announces nothing.
 */
const char *rec_events_should_emit(
    struct rec_transition *t, enum rec_run_state prev, enum rec_run_state next);

/* ==== 3. Sync: Kueue objects into the queue model =======================
 * Translation of the Kueue objects the informers hold
 * (api/model.h) into the queue model the admission engine works on
 * (queues/queues.h): ResourceFlavors, ClusterQueues, Cohorts, LocalQueues
 * and Workloads, including Workloads that already hold quota (restored
 * after a restart from their status.admission, docs/architecture.md lesson 3).
 *
 * Pure: no I/O, no clock reads. Event-loop thread only. Prefix ctl_.
 */

/* Create or replace the object in st from its decoded form [borrowed].
 * CU_EINVAL when the engine rejects the spec (message names the field),
 * CU_ENOMEM. */
CU_MUST_CHECK int rec_sync_flavor(
    que_state *st, const struct api_resource_flavor *rf, cu_error *err);
CU_MUST_CHECK int rec_sync_cluster_queue(
    que_state *st, const struct api_cluster_queue *cq, cu_error *err);
CU_MUST_CHECK int rec_sync_cohort(
    que_state *st, const struct api_cohort *co, cu_error *err);
CU_MUST_CHECK int rec_sync_local_queue(
    que_state *st, const struct api_local_queue *lq, cu_error *err);

/* The Workload holds quota in the API's view: status.admission is set
 * and QuotaReserved is True. */
bool rec_workload_holds_quota(const struct api_workload *wl);
/* Finished=True, or spec.active=false: the engine must not queue it. */
bool rec_workload_inactive(const struct api_workload *wl);

/*
 * Queue a Workload [borrowed] in st: pending, or, when it holds quota,
 * adopted as admitted in the ClusterQueue its admission names with the
 * flavors and the pod counts it records (a partial admission holds its
 * admitted counts; `pods` is held when the admission names a flavor for
 * it; pods status.reclaimablePods gives back are neither requested nor
 * held). ns_eligible: the caller evaluated the ClusterQueue's
 * namespaceSelector. Errors: CU_EEXIST (already queued), CU_EINVAL (a pod
 * set the engine cannot model; message names the field), CU_ENOTFOUND
 * (the admission names a flavor or ClusterQueue the engine does not know:
 * the workload stays queued as pending), CU_ENOMEM.
 */
CU_MUST_CHECK int rec_sync_workload(que_state *st,
    const struct api_workload *wl, bool ns_eligible, cu_error *err);

/* ---- dynamic resource allocation (reconcile/dra.c) -------------------- */

/* A mapping's counter source (KueueDRAIntegrationPartitionableDevices)
 * [all borrowed]: the counter name in devices' consumesCounters, the
 * driver of the ResourceSlices, the CEL deviceSelector (NULL: any). */
struct rec_dra_counter {
	const char *name;
	const char *driver;
	const char *selector;
};

/* One resources.deviceClassMappings entry [all borrowed]. */
struct rec_dra_mapping {
	const char *name; /* the quota resource */
	const char *const *classes;
	size_t n_classes;
	/* false: counter or capacity sources */
	bool by_device_count;
	/* counter sources (charged by counters when n_counters > 0);
	 * capacity sources are not counted by cueue yet */
	const struct rec_dra_counter *counters;
	size_t n_counters;
};

/* Kueue's DRA gates and mappings [borrowed]. */
struct rec_dra_config {
	bool enabled;	      /* KueueDRAIntegration */
	bool extended;	      /* KueueDRAIntegrationExtendedResource */
	bool reject_disabled; /* KueueDRARejectWorkloadsWhenDRADisabled */
	const struct rec_dra_mapping *mappings;
	size_t n_mappings;
};

/* The caches DRA reads, as callbacks (NULL: none cached). */
struct rec_dra_lookup {
	/* [borrowed] ResourceClaimTemplate ns/name, or NULL */
	json_t *(*claim_template)(
	    void *payload, const char *ns, const char *name);
	/* [borrowed] the DeviceClass whose spec.extendedResourceName is name
	 * (the newest when several), or NULL */
	const char *(*extended_class)(void *payload, const char *name);
	/* [borrowed] the DeviceClass name, or NULL */
	json_t *(*device_class)(void *payload, const char *name);
	/* each cached resource.k8s.io/v1 ResourceSlice [borrowed] to
	 * visit(slice, arg); NULL: none cached */
	void (*slices)(
	    void *payload, void (*visit)(json_t *slice, void *arg), void *arg);
	void *payload;
};

/* Per podSet: requests to add (names [borrowed] from the config) and
 * extended resources to drop (names [borrowed] from the requests). */
struct rec_dra_podset {
	struct que_request *add; /* [owned] */
	size_t n_add;
	const char **drop; /* [owned] array */
	size_t n_drop;
};

struct rec_dra_result {
	struct rec_dra_podset *podsets; /* [owned] n of them, or NULL */
	size_t n;
	bool uses_dra; /* claims or DRA-backed extended resources */
	/* [owned] why the Workload cannot be counted (Kueue's message for
	 * QuotaReserved=False, Misconfigured), NULL when it can */
	char *refused;
	bool retry; /* refused on cluster state (a template missing) */
};

/*
 * Evaluate wl [borrowed] under cfg and lk: reqs[i][0..n_reqs[i]) are podSet
 * i's raw per-pod requests [borrowed] (may be NULL: no extended-resource
 * path). *out [owned: rec_dra_result_dispose] is filled; a refusal is
 * out->refused, not an error. CU_ENOMEM.
 */
CU_MUST_CHECK int rec_dra_evaluate(const struct rec_dra_config *cfg,
    const struct rec_dra_lookup *lk, const struct api_workload *wl,
    const struct que_request *const *reqs, const size_t *n_reqs,
    struct rec_dra_result *out, cu_error *err);
void rec_dra_result_dispose(struct rec_dra_result *r);

/*
 * rec_sync_workload with DRA: cfg and lk [borrowed; cfg NULL: no DRA]
 * decide the devices each podSet adds to its requests (after the
 * Configuration's transformations, as Kueue). A Workload DRA refuses is
 * not queued: CU_EINVAL with the refusal as err's message and *refused
 * [owned: cu_free] the same text (*retry: cluster state may cure it).
 */
CU_MUST_CHECK int rec_sync_workload_dra(que_state *st,
    const struct api_workload *wl, bool ns_eligible,
    const struct rec_dra_config *cfg, const struct rec_dra_lookup *lk,
    char **refused, bool *retry, cu_error *err);

/* ---- the resource-in-use finalizer of ClusterQueues and flavors ------- */

/*
 * The kueue.x-k8s.io/resource-in-use finalizer of a ClusterQueue or
 * ResourceFlavor obj [borrowed] as Kueue's controllers keep it: added
 * (after the finalizers it has) while the object is not being deleted;
 * once it is (metadata.deletionTimestamp), removed when in_use is false
 * (a ClusterQueue: no Workload holds quota in it; a ResourceFlavor: no
 * ClusterQueue names it, rec_cq_uses_flavor). *patch NULL when nothing
 * changes (or obj has no resourceVersion to guard the patch with), else
 * {"metadata":{"finalizers":[...],"resourceVersion"}} [owned:
 * json_decref] for a merge PATCH of the object. CU_ENOMEM.
 */
CU_MUST_CHECK int rec_in_use_finalizer_patch(
    const json_t *obj, bool in_use, json_t **patch, cu_error *err);

/* Does ClusterQueue cq [borrowed, as JSON] name flavor [borrowed] in its
 * spec.resourceGroups? */
bool rec_cq_uses_flavor(const json_t *cq, const char *flavor);

/* ---- objectRetentionPolicies (reconcile/retention.c) ---------------- */

/* objectRetentionPolicies.workloads; an unset duration never deletes, 0
 * deletes at once. */
struct rec_retention {
	bool has_after_finished;
	int64_t after_finished_ns;
	bool has_after_deactivated; /* afterDeactivatedByKueue */
	int64_t after_deactivated_ns;
};

enum rec_retention_action {
	REC_RETAIN_KEEP = 0,	    /* no policy applies */
	REC_RETAIN_WAIT,	    /* one applies, due at *due_ns */
	REC_RETAIN_DELETE_WORKLOAD, /* finished and due: delete the Workload */
	REC_RETAIN_DELETE_JOB,	    /* deactivated by Kueue and due: delete
				       its job (controller owner), Background
				       propagation */
};

/* What cfg [borrowed] says about wl [borrowed] at now_ns; *due_ns the
 * deadline when a policy applies (else INT64_MAX). A Workload being
 * deleted is kept (nothing more to do). */
enum rec_retention_action rec_retention_decide(const struct rec_retention *cfg,
    const struct api_workload *wl, int64_t now_ns, int64_t *due_ns);

/* ==== 4. Reconcilers: decisions as plans ================================
 * The Job/JobSet reconciler and the Workload reconciler as pure functions:
 * decoded objects and a read-only view of the controller's caches in, a
 * plan out. The controller gathers the inputs (cache lookups, decoding,
 * its own write expectations), calls the reconciler and carries out the
 * plan's items in order; the reconciler does no I/O, reads no clock and
 * sees no controller state but what the view gives it.
 */

/* The ledger's record of a Workload's decision, as the controller read
 * it (store/store.h's states; reconcile/ does not see the store). */
enum rec_ledger_state {
	REC_LEDGER_NONE = 0, /* no record (or not read) */
	REC_LEDGER_RESERVED, /* recorded, its announcement not answered */
	REC_LEDGER_ADMITTED, /* announced */
	REC_LEDGER_EVICTING, /* its eviction decided */
};

/* What an admission write says (rec_admission_write's ANNOUNCE, section
 * 5): the one writer's pipe kind, events and metrics follow from it. */
enum rec_admit_write {
	REC_ADMIT_WRITE_NONE = 0,
	/* the cycle's: QuotaReserved; admission checks wait */
	REC_ADMIT_WRITE_RESERVE,
	/* the cycle's: QuotaReserved and Admitted */
	REC_ADMIT_WRITE_RESERVE_ADMIT,
	/* the Workload controller's: the checks synced, not admitted */
	REC_ADMIT_WRITE_CHECKS_SYNC,
	/* the Workload controller's: every check Ready, Admitted=True */
	REC_ADMIT_WRITE_CHECKS_ADMIT,
};

enum rec_item_kind {
	REC_ITEM_WRITE = 1, /* an API write */
	REC_ITEM_EVENT,	    /* an Event about the reconciled job */
	REC_ITEM_WARN,	    /* a warning line for the log */
	REC_ITEM_ENGINE,    /* an action on the admission engine (+ ledger) */
};

/* Which write to a job a REC_TARGET_JOB item is: the kind is said, not
 * inferred from the stop step or the patch. */
enum rec_job_write {
	REC_JOB_START = 1,   /* spec: unsuspend with the admitted flavors */
	REC_JOB_SUSPEND,     /* stop step: spec.suspend (+ stopping mark) */
	REC_JOB_RESET_START, /* stop step: /status, startTime cleared */
	REC_JOB_RESTORE,     /* stop step: templates restored (+ unmark) */
};

/* What a write goes to. */
enum rec_target {
	REC_TARGET_JOB = 1, /* the reconciled Job or JobSet */
	REC_TARGET_WORKLOAD,
};

enum rec_write_op {
	REC_WRITE_CREATE = 1, /* POST body (a new object) */
	REC_WRITE_PATCH,      /* merge patch of the object (not status) */
	REC_WRITE_STATUS,     /* merge patch of its /status subresource */
	REC_WRITE_DELETE,     /* DELETE; body NULL */
};

enum rec_expect {
	REC_EXPECT_NONE = 0, /* nothing to wait for */
	/* The object is busy while the write is in flight, and afterwards
	 * the cache must show the resourceVersion the write produced before
	 * the object is acted on again (the controller's expectations). */
	REC_EXPECT_RV,
};

enum rec_engine_op {
	/* Remove uid from the engine and the ledger, and forget what the
	 * controller recorded about it. */
	REC_ENGINE_FORGET = 1,
	/* Queue the reconciled Workload (rec_sync_workload: pending, or
	 * adopted when it holds quota). */
	REC_ENGINE_ADD,
	/* Remove the reconciled Workload from the engine and, only if that
	 * worked, ADD it again. */
	REC_ENGINE_READD,
	/* Give back the quota uid holds in the engine and drop its ledger
	 * decision; it queues again by the timestamp at_ns (0: now, the
	 * eviction; requeuingStrategy Creation: its creation). */
	REC_ENGINE_RELEASE,
	/* Set the engine's namespace_eligible of the reconciled Workload to
	 * `eligible`. */
	REC_ENGINE_SET_ELIGIBLE,
	/* uid's eviction is decided: an ADMITTED Workload becomes EVICTING
	 * in the engine (it keeps its quota, is no preemption candidate)
	 * and the ledger records EVICTING before the eviction write that
	 * follows is sent. */
	REC_ENGINE_EVICTING,
	/* Reconcile the Workload again at at_ns (a deadline such as
	 * maximumExecutionTimeSeconds; a timer, not a poll). */
	REC_ENGINE_WAKE,
	/* uid holds counts[0..n_counts) pods per pod set from now on
	 * (que_workload_set_counts): status.reclaimablePods gave some
	 * back. */
	REC_ENGINE_SET_COUNTS,
	/* uid, holding quota, has priority `priority` from now on (its
	 * job's priority-class label changed): preemption sees it. */
	REC_ENGINE_SET_PRIORITY,
	/* The pending Workload uid waits out of scheduling until at_ns
	 * (requeueState.requeueAt; INT64_MAX: until it is reconciled again;
	 * 0: no longer, from the next cycle) (que_workload_backoff). */
	REC_ENGINE_BACKOFF,
};

/* One step of a plan. Only the members of its kind are set. */
struct rec_item {
	enum rec_item_kind kind;
	/* REC_ITEM_WRITE */
	enum rec_target target;
	enum rec_write_op op;
	enum rec_job_write job; /* REC_TARGET_JOB: which job write */
	char *ns, *name;	/* [owned: cu_free] the object written */
	json_t *body;		/* [owned: json_decref] NULL for DELETE */
	enum rec_expect expect;
	/* A Workload write the job's reconciler waits on: its answer (or the
	 * retry after a failure) brings the job back. */
	bool for_job;
	/* A Workload eviction (Evicted=True) the Workload reconciler
	 * decided: if it is not written, the engine's EVICTING is undone. */
	bool eviction;
	/* An admission write (rec_admission_write's ANNOUNCE, what it
	 * says): carried out by the controller's one admission writer;
	 * REC_ADMIT_WRITE_NONE for every other write. */
	enum rec_admit_write admission;
	/* An event about the job sent once the write succeeded (not per
	 * attempt), reason [static] and message `text`; NULL: none. */
	const char *done_reason;
	/* REC_ITEM_EVENT: type (REC_EVENT_NORMAL/_WARNING) and reason
	 * [static], message `text`, about the reconciled job, or, with ns
	 * and name set, about that object of the job's kind (a pod group's
	 * excess Pod); an eviction WRITE: reason is the
	 * Evicted reason [static] (metrics), `cause` its underlying cause
	 * [static] or NULL; a PodsReady WRITE: the condition's reason
	 * [static] */
	const char *type, *reason, *cause;
	/* EVENT message, WRITE done_reason's message, WARN line [owned:
	 * cu_free] */
	char *text;
	/* REC_ITEM_ENGINE */
	enum rec_engine_op engine;
	char *uid;	 /* [owned: cu_free] FORGET, RELEASE, EVICTING, BACKOFF,
			  * SET_COUNTS, SET_PRIORITY */
	bool eligible;	 /* SET_ELIGIBLE */
	int64_t at_ns;	 /* WAKE, BACKOFF, RELEASE */
	int32_t *counts; /* [owned: cu_free] SET_COUNTS */
	size_t n_counts;
	int32_t priority; /* SET_PRIORITY */
};

/* An ordered list of items; zero-initialise (or rec_plan_init) before
 * use. */
struct rec_plan {
	struct rec_item *items; /* [owned] items[0..n) */
	size_t n, cap;
};

void rec_plan_init(struct rec_plan *p);
/* Append a zeroed item; *item [borrowed from p, valid until the next
 * push or free] is filled by the caller (what it sets becomes owned by
 * p). CU_ENOMEM. */
CU_MUST_CHECK int rec_plan_push(
    struct rec_plan *p, struct rec_item **item, cu_error *err);
/* Releases every item and what it owns; p is empty (and reusable)
 * afterwards. NULL is a no-op. */
void rec_plan_free(struct rec_plan *p);

/* ---- the Job/JobSet reconciler ------------------------------------------ */

/* The controller's caches as the job reconciler sees them. */
struct rec_job_view {
	/* The namespace gate's answer for the job (ns_gate_decide with
	 * managedJobsNamespaceSelector and manageJobsWithoutQueueName): a job
	 * that is not ours is never written to (docs/architecture.md lesson 1).
	 */
	bool managed;
	/* The gate's queue name [borrowed]: the job's queue-name label when
	 * managed by it, NULL when managed without one. */
	const char *queue_name;
	/* Our last write to the job's Workload has not reached the cache yet
	 * (in flight, or the cache shows an older resourceVersion, or our
	 * create is not there yet): nothing is decided on what the cache
	 * shows. */
	bool wl_awaited;
	/* The ResourceFlavors named by wl's admission, decoded, those the
	 * cache does not hold left out: *out [owned by the caller of the
	 * callback: api_resource_flavor_dispose each, then cu_free] and *n.
	 * Errors as api_resource_flavor_decode, CU_ENOMEM. Required. */
	int (*admitted_flavors)(const struct api_workload *wl,
	    struct api_resource_flavor **out, size_t *n, void *payload,
	    cu_error *err);
	/* Does LocalQueue ns/name exist? Required. */
	bool (*local_queue_exists)(
	    const char *ns, const char *name, void *payload);
	/* Priority class lookups for rec_wl_build [borrowed]; NULL: none. */
	const struct api_priority_lookup *priority;
	/* The Configuration's integrations.labelKeysToCopy: these labels of
	 * the job are copied to the Workload it gets [borrowed]; NULL:
	 * none. */
	const struct api_strlist *label_keys_to_copy;
	/* waitForPodsReady is enabled: a started job's Workload carries the
	 * PodsReady condition. */
	bool pods_ready;
	/* Why the job's pods are not ready, taken from the pods (the
	 * controller's on-demand LIST), e.g. "1 of 4 pods not ready: 0/3
	 * nodes are available: 3 Insufficient nvidia.com/gpu" [borrowed];
	 * NULL: not known (Kueue's message, or the one already written). */
	const char *pods_not_ready;
	/* When the job's pods were first seen ready (the PodsReady=True
	 * condition's lastTransitionTime); 0: now. */
	int64_t pods_ready_since_ns;
	/* PodsReady=True (Started) may wait until the admission + this (a
	 * job that finishes by then gets it in its Finished write: one write
	 * less); 0: written at once (blockAdmission waits on it). */
	int64_t pods_ready_defer_ns;
	/* Kueue's AdmissionGatedBy gate switched off: the job's
	 * admission-gated-by annotation is not copied to its Workload. */
	bool no_admission_gated_by;
	/* Kueue's ElasticJobsViaWorkloadSlices switched off: an elastic
	 * job is handled as any other. */
	bool no_elastic_jobs;
	/* Kueue's SkipReassignmentForPodOwnedWorkloads switched off: an
	 * evicted Workload owned by a single Pod is requeued as any other
	 * (on: Requeued=False, rec_wl_status_release_parked). */
	bool no_skip_pod_owned;
	void *payload; /* passed to the callbacks */
};

/* Kueue's OwnedBySinglePod: is wl [borrowed; NULL: false] owned by
 * exactly one v1 Pod and not a pod group's (annotation
 * kueue.x-k8s.io/is-group-workload "true")? cueue's pod groups are owned
 * by their Pods, none of them the controller, so the one reference must
 * also be the controller (as the reference of a Pod's own Workload
 * is). */
bool rec_wl_owned_by_single_pod(const struct api_workload *wl);

/* The job reconciler's objects [all borrowed, read during the call]. */
struct rec_job_in {
	/* The job as cached, NULL when it is gone from the cache. */
	const struct rec_job *job;
	/* Which job (set also when job is NULL). */
	enum rec_job_kind kind;
	const char *ns, *name;
	/* The name of the job's Workload (api_workload_name); required when
	 * job is set. */
	const char *wl_name;
	/* That Workload as cached and decoded, NULL when absent (or not
	 * decodable). */
	const struct api_workload *wl;
	/* wl_name is the job's prebuilt Workload (rec_prebuilt_workload_name):
	 * it is adopted, never created (see rec_job_reconcile). */
	bool prebuilt;
	/* job NULL: the Workloads in ns whose controller owner is this job,
	 * as cached; owned[0..n_owned). */
	const struct api_workload *const *owned;
	size_t n_owned;
	/* An elastic job (ElasticJobsViaWorkloadSlices): the name [borrowed]
	 * of a new slice (with the job's generation), and old_slice
	 * [borrowed] the older of two unfinished slices while wl replaces
	 * it (rec_slices_pick). slice_name NULL: not sliced. */
	const char *slice_name;
	const struct api_workload *old_slice;
};

/* A pod group (reconcile/fw_podgroup.c): the Pods in ns labelled
 * kueue.x-k8s.io/pod-group-name `name`, and its Workload (named `name`). */
#define REC_POD_GROUP_LABEL "kueue.x-k8s.io/pod-group-name"
#define REC_POD_GROUP_TOTAL "kueue.x-k8s.io/pod-group-total-count"
/* A group's Workload made from its first Pod ("true"), and a Pod's role
 * (its pod set's name) when set by a serving webhook. */
#define REC_POD_GROUP_FAST "kueue.x-k8s.io/pod-group-fast-admission"
#define REC_POD_ROLE_HASH "kueue.x-k8s.io/role-hash"

struct rec_pod_group_in {
	const char *ns, *name;
	const json_t *const *pods; /* [borrowed] pods[0..n_pods), by name */
	size_t n_pods;
	/* kueue.x-k8s.io/pod-group-total-count of the group's Pods (<= 0:
	 * missing or invalid; the group waits). */
	int32_t total;
	/* The Workload `name` as cached and decoded, NULL when absent. */
	const struct api_workload *wl;
	/* The group's parent apps/v1 StatefulSet as cached [borrowed], NULL
	 * when the group has none (or it is gone): its Workload is owned by
	 * it, kept while it exists, on hold while it has zero replicas. */
	const json_t *parent;
};

/*
 * Kueue's pod-group reconciler as cueue does it. Appends to *out, the
 * first that applies deciding: not managed or wl_awaited: nothing; no
 * Pod left: the Workload loses its finalizer and is deleted; a finished
 * Workload loses its finalizer; a Workload being deleted: every Pod past
 * its gate is deleted, then, none running, it loses its finalizer;
 * the group finished (total Pods
 * Succeeded; or none running and a Failed Pod annotated
 * kueue.x-k8s.io/retriable-in-group "false"; other Failed Pods wait for
 * their replacements): the Workload is finished
 * (Succeeded / Failed); no Workload: created once the group has `total`
 * live (not Failed) Pods (with REC_POD_GROUP_FAST "true" on a Pod, at the
 * first, its first pod set counting the Pods still to come), with one
 * pod set per role named by the Pod's REC_POD_ROLE_HASH annotation (at
 * most 8 characters) or else the first 8 hex digits of the SHA-1 of the
 * role's shape, owned by every live Pod; excess Pods (not Failed, not
 * being deleted) beyond `total` without a Workload, or beyond a role's
 * pod set count with one, are deleted (gated, then newer, then by name
 * the first to go) and the rest reconciled as below;
 * admitted: every gated Pod is ungated with its role's assignment merged
 * in (a patch per Pod); else every Pod past its gate is deleted, and an
 * evicted Workload with none left releases its quota. CU_EINVAL (missing
 * input), CU_ENOMEM. view as rec_job_reconcile's (managed, wl_awaited,
 * queue_name, admitted_flavors, local_queue_exists, priority,
 * label_keys_to_copy are read).
 *
 * A group with a parent StatefulSet (in->parent) is Kueue's: its
 * Workload is made owned by the StatefulSet (not by its Pods; the
 * kueue.x-k8s.io/job-uid label and job-owner-gvk/-name annotations), and,
 * so owned, it is never deleted because the group has no Pod (preempted,
 * its Pods come back gated and the same Workload is queued again); the
 * StatefulSet at zero replicas puts it on hold (rec_wl_status_hold,
 * "StatefulSet scaled to zero; workload on hold") and scaled up again
 * clears the hold, or, when the new replica count is not the Workload's
 * pod set count, deletes it so that the group's next reconcile makes it
 * anew. rec_pod_group_parent_owned tells such a Workload.
 */
CU_MUST_CHECK int rec_pod_group_reconcile(const struct rec_job_view *view,
    const struct rec_pod_group_in *in, int64_t now_ns, struct rec_plan *out,
    cu_error *err);

/*
 * Kueue's pod finalizer on a single managed Pod pod [borrowed] of
 * namespace ns, its Workload wl [borrowed] (NULL: none). Called twice
 * per reconcile of the Pod: with `before` set ahead of
 * rec_job_reconcile, then (when *done stayed false) without it after.
 * Before: a Pod being deleted is only finalized (*done: rec_job_reconcile
 * must not run): its Workload, neither Finished nor being deleted, is
 * finished as orphaned (STATUS, REC_FINISHED_OWNER_NOT_FOUND) and the
 * Pod waits for that to be seen; else the Workload loses cueue's
 * finalizer (when it has it) and the Pod loses REC_POD_FINALIZER (a
 * PATCH guarded by its resourceVersion). After: the Pod loses
 * REC_POD_FINALIZER once its Workload is Finished, or when it has ended
 * without one. Nothing when the Pod does not have the finalizer.
 * CU_EINVAL (missing input), CU_ENOMEM.
 */
CU_MUST_CHECK int rec_pod_finalize(const json_t *pod, const char *ns,
    const struct api_workload *wl, int64_t now_ns, bool before,
    struct rec_plan *out, bool *done, cu_error *err);

/* Is wl a pod group's Workload owned by its parent StatefulSet (an
 * ownerReference of kind StatefulSet, apiVersion apps/v1)? */
bool rec_pod_group_parent_owned(const struct api_workload *wl);

/* ---- a LeaderWorkerSet's group Workloads (reconcile/fw_serving.c) ---- */

/* Kueue's annotations on the Workload of a LeaderWorkerSet's group. */
#define REC_ANNOT_GROUP_WORKLOAD "kueue.x-k8s.io/is-group-workload"
#define REC_ANNOT_JOB_OWNER_GVK "kueue.x-k8s.io/job-owner-gvk"
#define REC_ANNOT_JOB_OWNER_NAME "kueue.x-k8s.io/job-owner-name"
#define REC_ANNOT_COMPONENT_INDEX "kueue.x-k8s.io/component-workload-index"
#define REC_REASON_CREATED_WORKLOAD "CreatedWorkload"

/* Kueue's name of the Workload of group `index` of LeaderWorkerSet lws
 * with uid [both borrowed]: api_workload_name of "<lws>-<index>" (kind
 * LeaderWorkerSet) [owned in *out: cu_free]. */
CU_MUST_CHECK int rec_lws_workload_name(const char *lws, const char *uid,
    json_int_t index, char **out, cu_error *err);

/* Is wl owned by a LeaderWorkerSet (named lws [borrowed]; NULL: any)? */
bool rec_lws_owned(const struct api_workload *wl, const char *lws);

/* How many group Workloads Kueue keeps for the LeaderWorkerSet lws
 * [borrowed]: spec.replicas (default 1), or status.replicas when larger
 * during a rolling update with maxSurge > 0 and status.updatedReplicas <
 * spec.replicas. */
json_int_t rec_lws_groups(const json_t *lws);

/* The LeaderWorkerSet reconciler's objects [all borrowed]. */
struct rec_lws_in {
	const char *ns, *name;
	/* The LeaderWorkerSet as cached, NULL when it is gone. */
	const json_t *lws;
	/* The Workloads it owns (rec_lws_owned, its uid when cached), and
	 * for each how many Pods of its group (pod-group-name) are cached. */
	const struct api_workload *const *owned;
	const size_t *pods;
	size_t n_owned;
	/* Our last Workload write for it has not reached the cache: no
	 * Workload is created (it may be there already). */
	bool awaited;
};

/*
 * Kueue's leaderworkerset reconciler: one Workload per group index
 * 0..rec_lws_groups-1, named rec_lws_workload_name, pod sets as the
 * descriptor's (leader 1 + worker size-1, or main of size), the
 * LeaderWorkerSet's labels and priority, a non-controller owner
 * reference to it, the job-uid label and the is-group-workload,
 * job-owner-gvk, job-owner-name and component-workload-index annotations,
 * created with Kueue's CreatedWorkload event ("Created Workload: ns/name")
 * on the LeaderWorkerSet. A kept Workload gets the LeaderWorkerSet's queue
 * name; evicted with no Pod of its group left, it gives its quota back
 * (rec_wl_status_release) and is queued again: the SAME Workload across
 * preemption. Workloads of groups beyond the count are deleted, and lose
 * cueue's finalizer once their group has no Pod; those of a gone
 * LeaderWorkerSet only lose it (the garbage collector deletes them). The
 * group's Pods are driven by the pod group reconciler
 * (rec_pod_group_reconcile) against this Workload. view: managed
 * (the gate's answer for the LeaderWorkerSet), priority,
 * label_keys_to_copy are read. Appends to *out.
 */
CU_MUST_CHECK int rec_lws_reconcile(const struct rec_job_view *view,
    const struct rec_lws_in *in, int64_t now_ns, struct rec_plan *out,
    cu_error *err);

/*
 * The Job/JobSet reconciler (Kueue's jobframework reconciler as cueue
 * does it). Appends to *out [caller's; rec_plan_free] in this order of
 * precedence, the first that applies deciding:
 *   0. job gone: each owned Workload loses cueue's finalizer (a PATCH,
 *      when it has it) and is deleted (unless already being deleted).
 *   1. gate: a job that is not managed gets an empty plan, whatever else.
 *   2. wl_awaited: empty plan.
 *   2b. prebuilt (Kueue's ensureOneWorkload for a prebuilt Workload): a
 *      Workload controlled by another object is ignored (as absent); one
 *      not controlled by the job is adopted (rec_wl_adopt_patch, PATCH);
 *      one that no longer matches the job (rec_wl_equivalent) is
 *      finished (STATUS, reason OutOfSync, "The prebuilt workload is out
 *      of sync with its user job") unless it is finished already, then
 *      ignored. An absent or ignored one: an unfinished job gets its
 *      next stop write (+ "Stopped", "missing workload"); nothing is
 *      ever created.
 *   3. Workload Finished: its finalizer goes (PATCH, when present).
 *   4. job finished: its Workload (if any) is finished (STATUS).
 *   5. Workload being deleted: the job's next stop write (+ "Stopped"
 *      event for the suspend step); once stopped and inactive, the
 *      Workload's finalizer goes.
 *   6. no Workload: the job's next stop write (+ "Stopped"), else, once
 *      the job has no active pods, the Workload is created (queue
 *      "default" when the gate gave no queue name and that LocalQueue
 *      exists) + "CreatedWorkload" event; a Workload that cannot be built
 *      is a WARN.
 *   7. a Workload that no longer matches its job (rec_wl_equivalent;
 *      Kueue's ensureOneWorkload without a match): the job's next stop
 *      write (+ "Stopped", "No matching Workload; restoring pod templates
 *      according to existent Workload", templates restored from that
 *      Workload); once stopped, a Workload without quota gets its spec
 *      rebuilt from the job (PATCH, spec.active kept, + "UpdatedWorkload"
 *      once written), and one that holds quota is deleted once the job
 *      has no active pods (DELETE + "DeletedWorkload" once written; step
 *      5 then 6 create its replacement).
 *   8. admitted and not evicted: a suspended job gets its start PATCH
 *      with a "Started" event on success; a start that can never work
 *      (rec_job_start_patch's CU_EINVAL) is a WARN and the Workload's
 *      Finished STATUS (reason FailedToStart, the error as message), as
 *      Kueue does; a flavor that cannot be read (CU_EINVAL from the
 *      view) is a WARN only. A start the API server refuses is retried
 *      by the controller with back-off (Kueue requeues it too). A
 *      started job, with view->pods_ready: the
 *      PodsReady condition (rec_pods_ready_condition over
 *      rec_job_pods_ready; message Kueue's, or view->pods_not_ready when
 *      not ready) when it changes (STATUS; item reason = the condition's
 *      reason, so the controller can time Started); a change to True
 *      (Started) waits until the Admitted condition's time +
 *      pods_ready_defer_ns (a WAKE of the job then; the controller keeps
 *      that under half the timeout) and is written with
 *      lastTransitionTime pods_ready_since_ns.
 *   4. (job finished, view->pods_ready) a job that succeeded while its
 *      Workload's PodsReady was not True gets PodsReady=True in the
 *      Finished write.
 *   9. otherwise (pending or evicted): the job's next stop write (+
 *      "Stopped", message the eviction's); once stopped and inactive an
 *      evicted Workload that holds quota releases it (STATUS).
 *   7b. status.reclaimablePods follows the job (Kueue's Job: with
 *      parallelism > 1, the terminal pods - succeeded, or an Indexed
 *      Job's completed and failed indexes below completions - beyond
 *      what the remaining completions still need; a JobSet: per
 *      replicated job, succeeded replicas times pods per replica), each
 *      capped at its pod set's count: a STATUS write when it differs.
 *   7c. a Workload that holds quota follows the job's priority-class
 *      label as in step 10 (only from one WorkloadPriorityClass to
 *      another: its validation keeps the class's presence and kind
 *      while quota is reserved): a spec PATCH before anything else.
 *  10. a stopped job whose Workload holds no quota: the Workload follows
 *      the job's priority-class label (when its priority comes from a
 *      WorkloadPriorityClass or it has none; the class resolved again
 *      with view->priority, "UpdatedWorkload" event on success; a job
 *      without the label whose Workload has the "default" class keeps
 *      it, as Kueue's defaulting labelled it; a class
 *      that cannot be resolved is a WARN) and, unless it was evicted,
 *      its queue-name label (view->queue_name; a job managed without one
 *      keeps LocalQueue "default"): one spec PATCH, as Kueue's
 *      UpdateWorkloadPriority and QueueNameChange.
 * Job writes expect REC_EXPECT_RV; Workload writes too (for_job set),
 * except those of step 0. Errors of the pure helpers on the way end the
 * plan where the old decision tree ended (no error returned); the
 * function fails only with CU_EINVAL (missing input) or CU_ENOMEM, and
 * then *out may hold part of the plan.
 */
CU_MUST_CHECK int rec_job_reconcile(const struct rec_job_view *view,
    const struct rec_job_in *in, int64_t now_ns, struct rec_plan *out,
    cu_error *err);

/*
 * FinishOrphanedWorkloads (reconcile/orphan.c): in->job is gone; each of
 * in->owned[0..n_owned) [borrowed] not yet Finished nor being deleted
 * gets Finished=True (REC_FINISHED_OWNER_NOT_FOUND,
 * REC_MSG_OWNER_NOT_FOUND) at now_ns; one Finished or being deleted
 * loses cueue's finalizer. Nothing is deleted: objectRetentionPolicies
 * does that. Writes expect REC_EXPECT_RV (not for_job); the controller
 * calls it again when a Workload changes. CU_ENOMEM.
 */
CU_MUST_CHECK int rec_job_gone_finish(const struct rec_job_in *in,
    int64_t now_ns, struct rec_plan *p, cu_error *err);

/* ---- the Workload reconciler -------------------------------------------- */

/* The controller's records and caches as the Workload reconciler sees
 * them, all about the Workload's ns/name and its uid. */
struct rec_wl_view {
	/* The uid the engine holds under this ns/name [borrowed]; NULL:
	 * none. */
	const char *engine_uid;
	/* An admission write for the Workload is in flight (its cached state
	 * is older than the decision): not reconciled. */
	bool in_flight;
	/* The engine's record of the Workload's uid. */
	bool queued;
	enum que_where where;	 /* when queued */
	bool namespace_eligible; /* when queued */
	/* metadata.generation the Workload was queued at (0 when unknown). */
	int64_t queued_generation;
	/* The engine's record of the Workload's uid when queued
	 * [borrowed]; NULL: none (its pod counts: reclaimablePods). */
	const struct que_wl *engine_wl;
	/* The stopPolicy of the Workload's LocalQueue and of the
	 * ClusterQueue it is queued in or admitted to (QUE_STOP_NONE when
	 * unknown). */
	enum que_stop lq_stop, cq_stop;
	/* The time of the reconcile (maximumExecutionTimeSeconds). */
	int64_t now_ns;
	/* waitForPodsReady [borrowed]; NULL (or enable false): off. */
	const struct rec_pods_ready_cfg *pods_ready;
	/* where == QUE_WL_BACKOFF: until when the engine keeps it there. */
	int64_t backoff_until;
	/* This replica may not write (a follower, or not synced yet): only
	 * the engine items are planned; the evictions, deactivations and
	 * Requeued writes are decided once it may (its Workloads are all
	 * reconciled again then). */
	bool read_only;
	/* Does the ClusterQueue behind LocalQueue ns/queue admit namespace
	 * ns (queue NULL: true)? Required. */
	bool (*eligible)(const char *ns, const char *queue, void *payload);
	void *payload;
	/* The spec of the ClusterQueue the Workload is admitted to [borrowed]
	 * when it has admissionChecksStrategy or the Workload lists checks;
	 * NULL: checks are not synced (no strategy, or the queue unknown). */
	const struct api_cluster_queue_spec *cq_checks;
	/* Kueue's AdmissionGatedBy gate switched off: admission-gated-by
	 * holds nothing back. */
	bool no_admission_gated_by;
	/* The ledger's record of the Workload, read when its admission
	 * checks could admit it (it holds quota, lists checks and is not
	 * Admitted); REC_LEDGER_NONE otherwise. */
	enum rec_ledger_state ledger;
	/* The QuotaReserved=False reason of a Workload whose gate was
	 * cleared [static]: "Pending" with UnadmittedWorkloadsObservability
	 * off; NULL: PendingEvaluation. */
	const char *pending_reason;
};

/*
 * The Workload reconciler: keeps the engine's view of one Workload in
 * line with the API's, and decides the evictions and deactivations that
 * Kueue's Workload controller decides. wl [borrowed] is the Workload as
 * cached and decoded, NULL when it is gone. Plan, the first that applies
 * deciding:
 *   - gone: FORGET engine_uid (when set);
 *   - engine_uid differs from wl's uid (same name, new object): FORGET
 *     engine_uid, then go on;
 *   - in_flight: nothing more;
 *   - Finished or being deleted: FORGET its uid when queued;
 *   - not queued: ADD, unless inactive (spec.active false) without quota
 *     in the API (an inactive Workload is never queued; one that holds
 *     quota is adopted, so that its quota counts until its eviction is
 *     over);
 *   - the API holds quota, the engine does not: READD (adopt);
 *   - the engine holds quota (ADMITTED or EVICTING), the API does not
 *     (the eviction is complete): inactive: FORGET, else RELEASE;
 *   - inactive and pending: FORGET (it leaves the pending heap);
 *   - inactive without quota in the API and not Evicted (queued or
 *     not): the eviction STATUS write all the same (Evicted Deactivated,
 *     message and cause as below; no event, no metric, no engine
 *     EVICTING: it held nothing), as Kueue's Workload controller
 *     evicts every inactive Workload;
 *   - holding quota, and inactive (Evicted reason Deactivated[DueTo<the
 *     target's reason>], message "The workload is deactivated[ due to
 *     <DeactivationTarget message>]", underlyingCause the target's
 *     reason), or its
 *     LocalQueue's stopPolicy is HoldAndDrain (LocalQueueStopped), or its
 *     ClusterQueue's (ClusterQueueStopped): EVICTING (when ADMITTED) and,
 *     unless the API shows it Evicted already, the eviction STATUS write
 *     (eviction set). The quota is released later, when the job
 *     reconciler has stopped the job and cleared the admission;
 *   - DeactivationTarget True on an active Workload: the spec PATCH
 *     active=false;
 *   - holding quota in both: SET_PRIORITY when spec.priority differs
 *     from the engine's (engine_wl); SET_COUNTS when the pods it should hold
 *     per pod set (the admitted count, less status.reclaimablePods,
 *     never below 0: Kueue's podSetsCountsAfterReclaim) differ from the
 *     engine's (engine_wl), then the steps below;
 *   - waitForPodsReady, ADMITTED and not Evicted in the API:
 *     rec_pods_ready_timeout; time left: WAKE then; expired: when
 *     requeueState.count + 1 exceeds backoffLimitCount, DeactivationTarget
 *     (RequeuingLimitExceeded, "exceeding the maximum number of
 *     re-queuing retries") STATUS write (the deactivation above follows);
 *     else EVICTING and the eviction STATUS write (PodsReadyTimeout,
 *     "Exceeded the PodsReady timeout <ns>/<name>", followed by ": " and
 *     the PodsReady condition's message when it names the pods' own
 *     cause; underlyingCause WaitForStart or WaitForRecovery;
 *     requeueState count + 1, requeueAt now + rec_requeue_backoff_ns);
 *   - Admitted with spec.maximumExecutionTimeSeconds: time left (the
 *     limit minus accumulatedPastExecutionTimeSeconds minus the time
 *     since Admitted became True): WAKE at the deadline; none left:
 *     DeactivationTarget (MaximumExecutionTimeExceeded) STATUS write and
 *     a Warning event;
 *   - pending, generation changed since queued, or the pod counts it
 *     requests after status.reclaimablePods differ from the engine's:
 *     READD;
 *   - pending: SET_ELIGIBLE when the namespace eligibility changed; and
 *     Requeued=False by a deactivation (active again) or by a queue stop
 *     (that queue no longer stopped): Requeued=True (Reactivated,
 *     LocalQueueRestarted, ClusterQueueRestarted) STATUS write; Requeued=
 *     False by PodsReadyTimeout: WAKE at requeueState.requeueAt, and once
 *     it has passed Requeued=True (BackoffFinished) with requeueAt
 *     cleared (STATUS).
 *   - whenever the Workload is pending in the engine (after ADD and
 *     RELEASE too): BACKOFF while requeueState.requeueAt is ahead, or
 *     while Requeued is False by PodsReadyTimeout (INT64_MAX: until the
 *     BackoffFinished write is seen); BACKOFF 0 once neither holds. A
 *     RELEASE after a PodsReadyTimeout eviction under requeuingStrategy
 *     timestamp Creation queues it by its creation time (at_ns).
 * Writes expect REC_EXPECT_RV; with read_only set, the write-deciding
 * steps (evictions, DeactivationTarget, active=false, WAKE, Requeued) plan
 * nothing. CU_EINVAL (missing view), CU_ENOMEM.
 */
CU_MUST_CHECK int rec_workload_reconcile(const struct rec_wl_view *view,
    const struct api_workload *wl, struct rec_plan *out, cu_error *err);

/* ---- the ProvisioningRequest admission check (reconcile/provreq.c) ---- */

#define REC_PROVREQ_CONTROLLER "kueue.x-k8s.io/provisioning-request"
#define REC_PRC_KIND "ProvisioningRequestConfig"
#define REC_PROVREQ_ANN_CONSUME                                                \
	"autoscaling.x-k8s.io/consume-provisioning-request"
#define REC_PROVREQ_ANN_CLASS "autoscaling.x-k8s.io/provisioning-class-name"
#define REC_LABEL_MANAGED "kueue.x-k8s.io/managed"
#define REC_PROVREQ_MSG_INACTIVE "the check is not active"
#define REC_PROVREQ_MSG_NOT_NEEDED "the provisioning request is not needed"
/* Kueue's retryStrategy defaults. */
#define REC_PRC_DEFAULT_LIMIT 3
#define REC_PRC_DEFAULT_BASE_S 60
#define REC_PRC_DEFAULT_MAX_S 1800
/* Longest request/template name kept whole (253 - "-" - 5 hash digits). */
#define REC_PROVREQ_NAME_MAX 247

enum rec_prc_merge {
	REC_PRC_MERGE_NONE = 0,
	REC_PRC_MERGE_TEMPLATES,    /* IdenticalPodTemplates */
	REC_PRC_MERGE_REQUIREMENTS, /* IdenticalWorkloadSchedulingRequirements
				     */
};

/* A ProvisioningRequestConfig; every pointer [borrowed] from the decoded
 * document, valid while it is. */
struct rec_prc {
	const char *name;
	const char *class_name;	     /* spec.provisioningClassName */
	const json_t *parameters;    /* object of strings, or NULL */
	const json_t *managed;	     /* managedResources: strings, or NULL */
	int32_t backoff_limit_count; /* retryStrategy, Kueue's defaults */
	int32_t backoff_base_s;
	int32_t backoff_max_s;
	const json_t *node_selector; /* podSetUpdates.nodeSelector or NULL */
	enum rec_prc_merge merge;    /* podSetMergePolicy */
};

/* obj [borrowed] decoded into *out (types checked; absent retryStrategy
 * fields take Kueue's defaults 3, 60, 1800). CU_EINVAL. */
CU_MUST_CHECK int rec_prc_decode(
    const json_t *obj, struct rec_prc *out, cu_error *err);

/* Kueue's provisioning acReconciler: is AdmissionCheck ac [borrowed]
 * (controller REC_PROVREQ_CONTROLLER) Active, its parameters naming a
 * ProvisioningRequestConfig that exists (prc [borrowed]: the cached one
 * or NULL) and decodes? When not, *message [owned: cu_free; may be NULL
 * out of memory] is Kueue's reason text (BadParametersRef). */
bool rec_provreq_active(
    const struct api_admission_check *ac, const json_t *prc, char **message);

/* "<wl>-<check>-<attempt>", and the template "ppt-<pr>-<podset>", cut as
 * Kueue's limitObjectName does. [owned: cu_free] or NULL (no memory). */
char *rec_provreq_name(const char *wl, const char *check, int32_t attempt);
char *rec_provreq_template_name(const char *pr, const char *podset);

/* The attempt number in request name pr [borrowed] of wl's check, or -1
 * when pr is not named after them. */
int32_t rec_provreq_attempt(const char *pr, const char *wl, const char *check);

/* reqIsNeeded: does Workload wl [borrowed] have an assigned pod set with
 * pods that uses prc's managedResources (none: all)? CU_EINVAL when a
 * required pod set has no assignment. */
CU_MUST_CHECK int rec_provreq_needed(const struct api_workload *wl,
    const struct rec_prc *prc, bool *needed, cu_error *err);

/* One pod set of a request: spec.podSets[index] of the Workload, name
 * [borrowed from it], count (several merged: their sum). */
struct rec_provreq_podset {
	size_t index;
	const char *name;
	int32_t count;
};

/* The pod sets a request for wl [borrowed] covers (mergePodSets): *out
 * [owned: cu_free], *n. CU_EINVAL (assignments inconsistent), CU_ENOMEM. */
CU_MUST_CHECK int rec_provreq_podsets(const struct api_workload *wl,
    const struct rec_prc *prc, struct rec_provreq_podset **out, size_t *n,
    cu_error *err);

/* A controller owner reference to obj [borrowed] (apiVersion, kind
 * [borrowed]): [owned: json_decref] or NULL. */
json_t *rec_provreq_owner(
    const json_t *obj, const char *api_version, const char *kind);

/*
 * The attempt-th ProvisioningRequest of wl's [borrowed] check for config
 * prc: *pr [owned: json_decref] (label kueue.x-k8s.io/managed, controller
 * owner the Workload, provisioningClassName, parameters: the config's and
 * the Workload's provreq.kueue.x-k8s.io/ annotations, one podSet per
 * rec_provreq_podsets entry referencing its template), and *templates
 * [owned: json_decref] the array of its PodTemplates (owned by the
 * Workload; the pod set's template with the assigned flavors' nodeLabels
 * and tolerations (flavors [borrowed]) and limits as missing requests).
 * CU_EINVAL, CU_ENOMEM.
 */
CU_MUST_CHECK int rec_provreq_new(const struct api_workload *wl,
    const char *check, const struct rec_prc *prc, int32_t attempt,
    const struct api_resource_flavor *flavors, size_t n_flavors, json_t **pr,
    json_t **templates, cu_error *err);

struct api_provreq; /* api/wire.h */

/*
 * Kueue's syncCheckStates for one check: the Workload's admission check
 * state check [borrowed, changed in place] brought in line with its
 * request pr [borrowed; NULL: none yet] for Workload wl [borrowed]. prc
 * NULL: the check is not active (Pending, REC_PROVREQ_MSG_INACTIVE);
 * !needed: Ready (REC_PROVREQ_MSG_NOT_NEEDED, no podSetUpdates). Failed:
 * Retry with requeueAfterSeconds (backoff for retryCount + 1) while the
 * request's attempt <= backoffLimitCount and it is newer than
 * retryCount, else Rejected; BookingExpired likewise while not Admitted;
 * CapacityRevoked: Rejected (active, unfinished Workloads); Provisioned:
 * Ready with podSetUpdates (the consume and class annotations, the
 * config's nodeSelector from provisioningClassDetails); Accepted: the
 * Provisioned condition's message (ETA); none: Pending, message "". A
 * state change sets lastTransitionTime to now_ns. True when the state
 * changed (out of memory: a message or the podSetUpdates stay as they
 * were or are dropped).
 */
bool rec_provreq_sync_state(struct api_admission_check_state *check,
    const struct api_workload *wl, const struct rec_prc *prc, bool needed,
    const struct api_provreq *pr, int64_t now_ns);

/* Does check [borrowed] (after rec_provreq_sync_state) need a new request
 * given its active or last one pr [borrowed; may be NULL]? None: attempt
 * retryCount + 1; a Failed (or BookingExpired, not Admitted) one while
 * the check is Pending again: its attempt + 1. Never for a Ready check. */
bool rec_provreq_wants_new(const struct api_admission_check_state *check,
    const struct api_workload *wl, const struct api_provreq *pr,
    int32_t *attempt);

/* provReqSyncedWithConfig: pr's class is prc's and it has all of prc's
 * parameters. */
bool rec_provreq_synced_with(const json_t *pr, const struct rec_prc *prc);

/* The status merge patch from the Workload document from [borrowed: the
 * encoded Workload before its admission check states changed] to wl
 * [borrowed] encoded: *patch [owned: json_decref] with
 * metadata.resourceVersion, NULL when equal. CU_ENOMEM. */
CU_MUST_CHECK int rec_provreq_status_patch(const json_t *from,
    const struct api_workload *wl, json_t **patch, cu_error *err);

/* Kueue's AdmissionCheckUpdated event text [owned: cu_free]. */
char *rec_provreq_update_message(
    const char *check, const char *from, const char *to, const char *msg);

/* NeedsRequeueAtUpdate's time: the latest lastTransitionTime +
 * requeueAfterSeconds of wl's Retry checks (ns), 0 when none. */
int64_t rec_acheck_requeue_at(const struct api_workload *wl);

/* The workload controller's NeedsRequeueAtUpdate: status.requeueState.
 * requeueAt moved to rec_acheck_requeue_at when that is ahead of now_ns
 * and of the current requeueAt (the count is left alone). *patch [owned:
 * json_decref] or NULL (nothing to do). CU_ENOMEM. */
CU_MUST_CHECK int rec_wl_status_check_requeue_at(const struct api_workload *wl,
    int64_t now_ns, json_t **patch, cu_error *err);

/* ==== 5. the scheduling cycle's decisions, carried out =================
 * What the controller does with each decision of an admission cycle
 * (admit, preempt) and with the answer to each write announcing one,
 * given what it knows of the Workload at that moment (reconcile/cycle.c).
 * controller/decide.c gathers these inputs and carries the steps out; the
 * ledger is always written before the write that announces a decision.
 */

/* What the controller knows of one Workload when it carries out a
 * decision about it. */
struct rec_cycle_wl {
	enum que_where where; /* the engine's state of it */
	bool deferred; /* admission recorded, announcement waiting for the cache
			*/
	bool in_flight; /* admission write sent and not answered */
	bool stale;	/* our last write to it has not reached the cache */
	/* [borrowed] as cached, decoded; NULL: not cached or undecodable */
	const struct api_workload *wl;
};

enum rec_admit_step {
	/* nothing to write (the checks unchanged, or the ledger says the
	 * Workload is not to be announced now: why) */
	REC_ADMIT_NONE = 0,
	/* record in the ledger when `record`, then send patch (NULL: nothing
	 * to write) */
	REC_ADMIT_ANNOUNCE = 1,
	/* record in the ledger; announce once the cache caught up (if the
	 * record fails: withdraw) */
	REC_ADMIT_DEFER,
	/* blockAdmission: back to pending with reason and message */
	REC_ADMIT_BLOCKED,
	/* give the quota back; warning says why when not NULL */
	REC_ADMIT_WITHDRAW,
};

/* Who asks for an admission write: the one producer decides it for
 * both. */
enum rec_admit_source {
	/* the scheduling cycle admitted d: quota reserved (and Admitted
	 * when no admission checks wait) */
	REC_ADMIT_FROM_CYCLE = 0,
	/* the Workload reconciler: a Workload holding quota whose checks
	 * are synced with its ClusterQueue (Admitted once all are Ready) */
	REC_ADMIT_FROM_CHECKS,
};

struct rec_admit_in {
	enum rec_admit_source source;
	/* the ledger's record of the Workload: FROM_CHECKS, as read;
	 * FROM_CYCLE, RESERVED when the decision was recorded already (a
	 * deferred or restarted announcement), else NONE (a new decision,
	 * recorded by the plan) */
	enum rec_ledger_state ledger;
	/* FROM_CYCLE [borrowed]: an ADM_ADMIT decision, its podSets with
	 * their topology assignments filled in; FROM_CHECKS: NULL */
	const struct adm_decision *d;
	struct rec_cycle_wl w;
	bool blocked; /* waitForPodsReady's blockAdmission holds admissions */
	bool pods_ready; /* waitForPodsReady on: PodsReady=False goes with it */
	/* [borrowed] the spec of the ClusterQueue (FROM_CYCLE: of
	 * d->cluster_queue; FROM_CHECKS: the one w.wl is admitted to); NULL:
	 * checks left alone */
	const struct api_cluster_queue_spec *cq;
	int64_t queued_ns; /* creation or last requeue: the note's wait */
};

struct rec_admit_plan {
	enum rec_admit_step step;
	enum rec_admit_write write; /* ANNOUNCE: what the write says */
	/* ANNOUNCE, DEFER: the decision goes in the ledger (RESERVED)
	 * before the write is queued (lesson 3); a failed record withdraws
	 * it */
	bool record;
	json_t *patch; /* [owned] ANNOUNCE: the admission status patch */
	/* [owned] ANNOUNCE: the note of the write's event (QuotaReserved,
	 * or the Workload controller's Admitted) */
	char *note;
	const char *reason, *message; /* [static] BLOCKED: pending status */
	const char *why; /* [static] NONE: why nothing is written, or NULL */
	char *warning;	 /* [owned] WITHDRAW: what failed, or NULL */
};

/*
 * The one producer of admission writes: what is written to admit a
 * Workload, whoever asks (controller/decide.c's ctl_admission_write
 * carries every such plan out).
 *
 * FROM_CYCLE (decide_admit, and the ledger's deferred or restarted
 * announcements): blocked -> BLOCKED; our last write not in the cache
 * yet -> DEFER; not cached -> WITHDRAW; else the admission patch
 * (rec_wl_status_admit_checks) -> ANNOUNCE (RESERVE or RESERVE_ADMIT),
 * or WITHDRAW with its error. DEFER and ANNOUNCE are recorded first
 * unless the ledger holds the decision already (RESERVED).
 *
 * FROM_CHECKS (the Workload reconciler, a Workload holding quota): not
 * cached -> NONE; the ledger records its eviction (EVICTING) -> NONE
 * with why (a record RESERVED or ADMITTED, or none for a Workload
 * adopted without one, does not hold it back: the reservation is in the
 * API already); else the checks
 * synced with the ClusterQueue (rec_wl_status_sync_checks): no change ->
 * NONE, else ANNOUNCE, CHECKS_ADMIT when Admitted turns True (the note
 * is Kueue's Admitted, the wait since QuotaReserved), CHECKS_SYNC
 * otherwise; never recorded (the reservation was).
 *
 * in [borrowed]; *out initialised here (rec_admit_plan_dispose), also on
 * failure. CU_ENOMEM (FROM_CHECKS; FROM_CYCLE says failures as WITHDRAW
 * and leaves a note or warning NULL when out of memory).
 */
CU_MUST_CHECK int rec_admission_write(const struct rec_admit_in *in,
    int64_t now_ns, struct rec_admit_plan *out, cu_error *err);
void rec_admit_plan_dispose(struct rec_admit_plan *p);

enum rec_victim_step {
	REC_VICTIM_NONE = 0, /* not being evicted (any more): nothing */
	/* its admission was never announced: withdrawn, the ledger forgets
	 * it, nothing is written */
	REC_VICTIM_WITHDRAW,
	/* ADMITTED again; the preemption is decided anew later (why) */
	REC_VICTIM_POSTPONE,
	/* send patch (Evicted + Preempted), events when it is answered */
	REC_VICTIM_EVICT,
	/* Evicted already for another reason: the ledger records EVICTING */
	REC_VICTIM_EVICTING,
};

struct rec_victim_in {
	struct rec_cycle_wl w;
	enum adm_preempt_reason reason;
	/* the preemptor [borrowed]: uid, its job's uid (NULL: unknown),
	 * namespace, name, ClusterQueue path ("/cohort/.../cq"), priority */
	const char *pre_uid, *pre_job_uid, *pre_ns, *pre_name, *pre_path;
	int32_t pre_priority;
	/* the victim [borrowed]: namespace, name, uid, ClusterQueue name
	 * (NULL: none) and path, priority */
	const char *ns, *name, *uid, *cq, *path;
	int32_t priority;
};

struct rec_victim_plan {
	enum rec_victim_step step;
	const char *why; /* [static] POSTPONE */
	char *warning;	 /* [owned] POSTPONE after a failed patch, or NULL */
	json_t *patch;	 /* [owned] EVICT */
	/* [owned] EVICT: the Preempted event's note (Kueue's message and
	 * the priorities); its first message_len bytes are the message, the
	 * EvictedDueToPreempted note */
	char *note;
	size_t message_len;
	/* [owned] EVICT: the preemptor "ns/name" and its PreemptedWorkload
	 * note, sent once the eviction is written; NULL (out of memory):
	 * not sent */
	char *preemptor_ref, *preemptor_note;
};

/*
 * A preemption victim carried out (decide_preempt): not EVICTING -> NONE;
 * deferred -> WITHDRAW; admission in flight, cache stale or not cached ->
 * POSTPONE; else Kueue's eviction (rec_preemption_message,
 * rec_wl_status_evict) -> EVICT, EVICTING when already Evicted, POSTPONE
 * when no patch can be built. in [borrowed]; *out initialised here
 * (rec_victim_plan_dispose).
 */
void rec_cycle_victim(const struct rec_victim_in *in, int64_t now_ns,
    struct rec_victim_plan *out);
void rec_victim_plan_dispose(struct rec_victim_plan *p);

enum rec_answer_write { REC_ANSWER_ADMIT = 1, REC_ANSWER_EVICT };
enum rec_answer_outcome {
	REC_ANSWER_OK,		/* answered with success */
	REC_ANSWER_REFUSED,	/* answered with an error */
	REC_ANSWER_UNCOMMITTED, /* not sent: the ledger commit failed */
	REC_ANSWER_SEND_FAILED, /* not sent: the client refused it */
};

/* The steps an answer (or non-answer) of an admission or eviction write
 * takes, as a set of these bits. */
enum {
	REC_ANS_FORGET_IN_FLIGHT = 1 << 0, /* no longer in flight */
	REC_ANS_FORGET_PREEMPTOR = 1 << 1, /* no PreemptedWorkload event */
	REC_ANS_LEDGER_ADMITTED = 1 << 2,  /* ledger: announced */
	REC_ANS_LEDGER_EVICTING = 1 << 3,  /* ledger: eviction written */
	/* ledger: back to ADMITTED (an eviction the Workload reconciler
	 * recorded first); no decision there is not an error */
	REC_ANS_LEDGER_READMIT = 1 << 4,
	REC_ANS_LEDGER_FORGET = 1 << 5, /* ledger: the decision removed */
	REC_ANS_WITHDRAW = 1 << 6,	/* engine: quota given back */
	REC_ANS_UNEVICT = 1 << 7,	/* engine: ADMITTED again */
	REC_ANS_RECONCILE = 1 << 8,	/* reconcile the Workload again */
	REC_ANS_CYCLE = 1 << 9,		/* run a scheduling cycle */
	REC_ANS_METRICS = 1 << 10,	/* quota-reserved/admitted metrics */
};

/* The REC_ANS_* steps of an answer of kind to a Workload the engine
 * holds in state where (ledger and engine kept in agreement whatever
 * happened to the write). */
unsigned rec_cycle_answer(enum rec_answer_write kind,
    enum rec_answer_outcome outcome, enum que_where where);

/* ---- the events of a written decision (controller/decide.c) ---------- */

/* Whom an event of an answered write is about. */
enum rec_written_about {
	REC_WRITTEN_OBJECT, /* the object written (a ProvisioningRequest's
			     * events: its Workload) */
	REC_WRITTEN_OWNER,  /* the job the Workload write was for */
};

struct rec_written_in {
	bool admit;	       /* an admission write (the scheduler's) */
	const char *ev_reason; /* [borrowed] the write's event reason or NULL */
	const char *note;      /* [borrowed] the write's note, not NULL */
	const char *cq;	       /* [borrowed] admit: its ClusterQueue */
	/* Preempted: how many bytes of note are Kueue's message (the rest
	 * are the priorities); 0 when not known */
	size_t message_len;
};

struct rec_written_event {
	enum rec_written_about about;
	const char *reason; /* [static or borrowed from in] */
	const char *note;   /* [borrowed from in or the plan] NULL: none */
	size_t note_len;    /* bytes of note to send (a prefix of it) */
	bool workload_ctl;  /* sent as the Workload controller */
};

struct rec_written_plan {
	struct rec_written_event ev[2]; /* sent in this order */
	size_t n;
	/* the victim's eviction was written: the preemptor's
	 * PreemptedWorkload event and the "Preempted" log line follow */
	bool preempted;
	/* [static] the decision's log line, NULL: none; with its reason
	 * [static or borrowed from in] and message [borrowed from in or
	 * the plan] */
	const char *log, *log_reason, *log_message;
	char *note; /* [owned] the scheduler's Admitted note, or NULL */
};

/*
 * What a successful write announces (Kueue's events and log lines): an
 * admission: QuotaReserved, and Admitted unless admission checks wait
 * (ev_reason set); UpdatedWorkload, DeletedWorkload and FinishedWorkload
 * about the job; an eviction by preemption: EvictedDueToPreempted (the
 * message alone) then Preempted; Admitted by the Workload controller;
 * any other reason about the object. in [borrowed]; *out initialised
 * here (rec_written_plan_dispose). Out of memory leaves the Admitted
 * note NULL.
 */
void rec_cycle_written(
    const struct rec_written_in *in, struct rec_written_plan *out);
void rec_written_plan_dispose(struct rec_written_plan *p);

/* ---- MultiKueue (reconcile/mk.c) --------------------------------------
 *
 * The pure decisions of the MultiKueue admission check controller
 * (controllerName kueue.x-k8s.io/multikueue; process side controller/mk.c
 * and controller/mk_wl.c), as Kueue's admissionchecks/multikueue:
 *
 *  - an AdmissionCheck is Active while its MultiKueueConfig exists and at
 *    least one of its clusters is Active (SomeActiveClusters when not
 *    all are; NoUsableClusters, BadConfig otherwise);
 *  - a Workload holding quota is copied to every reachable worker of the
 *    check's config (AllAtOnce; or Incremental: stepSize more workers in
 *    name order per round); the first copy admitted on a worker
 *    wins (a copy whose worker is named by status.clusterName or already
 *    has the job first: a restarted manager keeps its choice), the
 *    others are removed, the check goes Ready naming the
 *    worker (status.clusterName); a finished copy finishes the manager's
 *    Workload; a Workload finished or without quota has its copies
 *    removed; a winner lost for workerLostTimeout sends the check to
 *    Retry (the Workload is requeued); a Workload evicted on the manager
 *    has its copies removed and, once no reachable worker holds its job,
 *    its job's copied status cleared (the quota can then be released).
 */
#define REC_MK_CONTROLLER "kueue.x-k8s.io/multikueue"
#define REC_MK_ORIGIN_LABEL "kueue.x-k8s.io/multikueue-origin"
#define REC_MK_MAX_CLUSTERS 20

/* One framework's MultiKueue adapter (reconcile/mk_adapt.c): a row per
 * framework Kueue has an adapter for. */
enum rec_mk_counts {
	REC_MK_COUNTS_NONE,  /* no counts (a state or a condition instead) */
	REC_MK_COUNTS_TOP,   /* directly under status (batch/v1 Job) */
	REC_MK_COUNTS_ARRAY, /* in each entry of an array under status */
	REC_MK_COUNTS_MAP,   /* in each value of a map under status */
};

struct rec_mk_adapter {
	const char *fw; /* [static] the descriptor's name (rec_fw.name) */
	/* [static] the field the Rejected message names ("Expecting <it>
	 * to be ..."), as Kueue's adapter of the kind writes it. */
	const char *managed_by_field;
	/* [static] the status fields copied back from the worker's job,
	 * NULL-terminated; NULL: the whole status (every Kueue adapter). */
	const char *const *status;
	/* The copy on the worker: a batch/v1 Job loses spec.selector and
	 * its template's controller labels; a TrainJob loses the
	 * spec.runtimePatches entry of this manager [static; NULL: none].
	 * Every copy loses the descriptor's managedBy. */
	bool job_cleanup;
	const char *drop_patch_manager;
	/* Running pods the status shows (rec_mk_job_inactive_patch): counts
	 * (counts_in [static] the array or map under status) set to null
	 * (counts_null) or to 0 (counts_zero); a status string state_field
	 * set to state_stopped (NULL: removed); a condition cond_off set
	 * False. */
	enum rec_mk_counts counts_shape;
	const char *counts_in;
	const char *const *counts_null, *const *counts_zero;
	const char *state_field, *state_stopped;
	const char *cond_off;
};

/* The adapter of framework fw [borrowed; may be NULL] [static], or NULL
 * when Kueue has none for it (the check is then Rejected). */
const struct rec_mk_adapter *rec_mk_adapter_of(const struct rec_fw *fw);

/* The table, for iteration: row i [static], NULL past the end. */
const struct rec_mk_adapter *rec_mk_adapter_at(size_t i);

/* What the manager knows of one cluster a MultiKueueConfig names. */
enum rec_mk_cluster_state {
	REC_MK_CLUSTER_MISSING,	 /* no MultiKueueCluster of that name */
	REC_MK_CLUSTER_INACTIVE, /* its Active condition is not True */
	REC_MK_CLUSTER_ACTIVE,
};

/* The Active condition of a MultiKueue AdmissionCheck: config_err
 * [borrowed] NULL when its MultiKueueConfig was loaded (else why not:
 * BadConfig), the config's clusters [borrowed] with their states. Returns
 * the status; *reason [static], *message [owned: cu_free; NULL on
 * CU_ENOMEM]. */
bool rec_mk_check_active(const char *config_err, const char *const *clusters,
    const enum rec_mk_cluster_state *states, size_t n, const char **reason,
    char **message);

/* One worker's copy of a manager Workload. */
struct rec_mk_remote {
	const char *cluster; /* [borrowed] the MultiKueueCluster */
	bool reachable;	     /* connected, its caches synced */
	const json_t *wl;    /* [borrowed] the copy, NULL: none */
	bool has_job;	     /* the job was created there already */
};

struct rec_mk_in {
	const json_t *local; /* [borrowed] the manager's Workload */
	const char *check;   /* [borrowed] the MultiKueue check's name */
	/* The owner job's managedBy is kueue.x-k8s.io/multikueue (Kueue's
	 * MultiKueueBatchJobWithManagedBy): else the check is Rejected. */
	bool job_managed;
	const char *job_managed_by; /* [borrowed; may be NULL] for the
				     * message */
	/* [borrowed; NULL: spec.managedBy] the field the message names
	 * (rec_mk_adapter.managed_by_field). */
	const char *managed_by_field;
	/* [borrowed; NULL: it has one] the owner's "group/version,
	 * Kind=kind" when its framework has no adapter: the check is
	 * Rejected (Kueue: no chance to run). */
	const char *no_adapter;
	const struct rec_mk_remote *remotes; /* [borrowed] config order */
	size_t n;			     /* <= REC_MK_MAX_CLUSTERS */
	int64_t now_ns;
	int64_t lost_since_ns; /* when the winner was first seen lost; 0 */
	int64_t worker_lost_ns;
	/* The Incremental dispatcher: rounds of step_size more workers (in
	 * name order) every round_ns while none admitted the copy;
	 * round_start_ns: the current round's start, 0 none. */
	bool incremental;
	int step_size;
	int64_t round_start_ns, round_ns;
	/* The manager's job: suspended (its stop after an eviction), and
	 * showing running pods (status copied from a worker; see
	 * rec_mk_job_inactive_patch). */
	bool job_suspended, job_active;
	/* The worker the manager's ledger recorded as this Workload's
	 * choice [borrowed; NULL: none]: kept like status.clusterName (an
	 * announced choice), so a manager restarted between the record and
	 * the status write resumes it instead of choosing again. */
	const char *recorded;
};

enum rec_mk_step {
	REC_MK_IDLE,	   /* nothing to do */
	REC_MK_REMOVE_ALL, /* finished or no quota: remove[] every copy */
	REC_MK_FINISH,	   /* copy `remote` finished: finish the Workload */
	REC_MK_REJECT,	   /* the job is not managed by MultiKueue */
	REC_MK_LOST_WAIT,  /* the winner is unreachable: wait (wake_ns) */
	REC_MK_RETRY,	   /* the reservation is gone: check to Retry */
	REC_MK_WINNER,	   /* copy `remote` admitted: keep it, remove[] the
			    * others, sync its job, check Ready */
	REC_MK_DISPATCH,   /* create[] the missing copies */
	REC_MK_EVICTED,	   /* evicted on the manager, quota still held:
			    * remove[] every copy; reset_job once no
			    * reachable worker holds the job */
	REC_MK_RECORD,	   /* copy `remote` admitted, no choice yet: record
			    * `record` in the ledger; the choice is announced
			    * (WINNER) once the record is committed */
};

struct rec_mk_plan {
	enum rec_mk_step step;
	int remote; /* FINISH, WINNER: the index in in->remotes; else -1 */
	bool create[REC_MK_MAX_CLUSTERS];
	bool remove[REC_MK_MAX_CLUSTERS];
	/* The check's new state [static] and message [owned: cu_free], NULL:
	 * unchanged; the Workload's new status.clusterName [borrowed from
	 * in] or NULL. */
	const char *state;
	char *message;
	const char *cluster_name;
	/* REMOVE_ALL of a Workload that lost its quota (evicted, requeued):
	 * status.clusterName and nominatedClusterNames are cleared. */
	bool clear_cluster;
	/* EVICTED: the manager's job (suspended) still shows the pods a
	 * worker ran and none is left where the manager can see: its
	 * status is cleared (rec_mk_job_inactive_patch), so the Workload
	 * controller releases the quota and requeues it. */
	bool reset_job;
	/* FINISH: the reason and message of the copy's Finished condition
	 * [borrowed from in]. */
	const char *finish_reason, *finish_message;
	int64_t wake_ns; /* look again then (LOST_WAIT, a round); 0: no */
	/* DISPATCH: the workers nominated [borrowed from in], in order;
	 * new_round: an Incremental round starts now. */
	const char *nominate[REC_MK_MAX_CLUSTERS];
	size_t n_nominate;
	bool new_round;
	/* RECORD: the worker to record as the choice [borrowed from in];
	 * forget: the ledger's choice (in->recorded) is void (the Workload
	 * finished, lost its quota, was evicted, or the unannounced choice's
	 * copy is gone from a reachable worker): delete it. */
	const char *record;
	bool forget;
};

/* The decision for one manager Workload; *out initialised here
 * (rec_mk_plan_dispose). */
void rec_mk_decide(const struct rec_mk_in *in, struct rec_mk_plan *out);
void rec_mk_plan_dispose(struct rec_mk_plan *p);

/* The status merge patch of the manager's Workload local [borrowed] that
 * carries out plan p for check [borrowed] at now (RFC 3339): the check's
 * state, message and lastTransitionTime, status.clusterName,
 * nominatedClusterNames (DISPATCH: nominated [borrowed], n), Finished
 * (FINISH). *patch [owned: json_decref] with metadata.resourceVersion,
 * NULL when nothing changes. CU_ENOMEM. */
CU_MUST_CHECK int rec_mk_status_patch(const json_t *local, const char *check,
    const struct rec_mk_plan *p, const char *const *nominated, size_t n,
    const char *now, json_t **patch, cu_error *err);

/* The copy of the manager's Workload local [borrowed] created on a
 * worker: name, namespace, labels (but kueue.x-k8s.io/job-uid) with the
 * origin label = origin [borrowed], annotations, spec. [owned:
 * json_decref] or NULL (out of memory). */
json_t *rec_mk_remote_workload(const json_t *local, const char *origin);

/* The copy of the manager's job doc [borrowed] of framework fw created on
 * the worker, as fw's adapter says: name, namespace, labels with Kueue's
 * prebuilt Workload label = wl_name and the origin label, annotations,
 * spec without the descriptor's managedBy (the worker's own controller
 * runs it) and what the adapter drops (rec_mk_adapter). [owned] or NULL
 * (no adapter, or out of memory). */
json_t *rec_mk_remote_job(const struct rec_fw *fw, const json_t *doc,
    const char *wl_name, const char *origin);

/* The status merge patch that makes the manager's job doc [borrowed]
 * show the status fields adapter a [static; NULL: all] copies from the
 * worker's job remote [borrowed]: [owned] or NULL when equal (or out of
 * memory). */
json_t *rec_mk_job_status_patch(
    const struct rec_mk_adapter *a, const json_t *doc, const json_t *remote);

/* FINISH: is the Finished write of the manager's Workload local
 * [borrowed] held back? Unless it is evicted, the worker's job remote
 * [borrowed; NULL: not seen yet, waited for too] of framework fw
 * [static] must be seen finished (the worker's Workload and job come
 * by two watches: its Workload may show Finished before its job's last
 * status, or before its job at all: under load a watch lags by
 * seconds, and the job ran meanwhile), the manager's job must be running
 * (job_suspended false: its unsuspend may come after a short job already
 * finished on the worker) and show the worker job's status (status_patch
 * [borrowed; may be NULL], from rec_mk_job_status_patch, NULL: nothing to
 * copy): once finished, the copies go and the final status could never be
 * copied back. The wait is bounded: once waited_ns (since the manager first
 * held the write back) reaches limit_ns (workerLostTimeout), it is
 * written anyway, with what was copied (Kueue never waits: it copies the
 * worker job's status once and finishes), or a worker Workload finished
 * while its job never finishes (finished on the worker by hand or by its
 * own controller, the job left running) would hold the manager's
 * Workload, and its quota, for ever. */
bool rec_mk_finish_waits(const json_t *local, const struct rec_fw *fw,
    const json_t *remote, bool job_suspended, const json_t *status_patch,
    int64_t waited_ns, int64_t limit_ns);

/* The status merge patch that makes the manager's job doc [borrowed]
 * show no running pods, as adapter a [static] says where they show (a
 * Job's active and ready, a JobSet's replicatedJobsStatus active and
 * ready, a Kubeflow job's replicaStatuses active, a RayJob's
 * jobDeploymentStatus, an AppWrapper's QuotaReserved condition...):
 * [owned], or NULL when it shows none (or a is NULL, or out of memory).
 * Written once the worker that ran them is gone or lost: nothing else
 * updates the status of a job MultiKueue manages. */
json_t *rec_mk_job_inactive_patch(
    const struct rec_mk_adapter *a, const json_t *doc);

#endif /* CU_RECONCILE_RECONCILE_H */
