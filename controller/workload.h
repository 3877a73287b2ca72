/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/workload.h - the pure transformation layer between the
 * Kubernetes objects cueue manages (batch/v1 Job, jobset.x-k8s.io/v1alpha2
 * JobSet, kueue.x-k8s.io/v1beta2 Workload) and cueue's decisions, as
 * Kueue's job reconciler (pkg/controller/jobframework/reconciler.go),
 * pkg/workload, pkg/podset and the Job/JobSet integrations do it:
 *
 *   - the Workload a job gets (ctl_wl_build) and whether an existing one
 *     still matches its job (ctl_wl_equivalent);
 *   - the Workload status writes for an admission, a pending decision, an
 *     eviction (and the release of its quota once the job stopped) and a
 *     finished job (ctl_wl_status_*);
 *   - the job writes that start an admitted job and stop an evicted one
 *     (ctl_job_start_patch, ctl_job_stop_patch);
 *   - job state readers (suspended, active, finished).
 *
 * Pure: no I/O, no clock reads (now_ns is passed in), event-loop thread or
 * any thread. Inputs are [borrowed] and never modified.
 *
 * Writes. Every write is returned as a JSON merge patch (RFC 7386, an
 * object) for PATCH with application/merge-patch+json (api_merge_patch of
 * api/client.h), computed with api_merge_patch_diff between the object as
 * read and the object as it must become. When nothing would change the
 * patch is NULL and nothing must be sent (DESIGN.md lesson 4); so applying
 * a decision twice writes once. A non-NULL patch always carries
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
 *   - Eviction is two writes, as in Kueue: ctl_wl_status_evict marks the
 *     Workload Evicted (and Preempted) but keeps status.admission, so the
 *     quota stays held while the job's pods run; once the job is stopped
 *     and no longer active, ctl_wl_status_release clears the admission,
 *     sets QuotaReserved=False (PendingEvaluation), Admitted=False and the
 *     Requeued condition.
 *
 * Not modelled: admission-check podSetUpdates, topology-aware scheduling,
 * elastic jobs (workload slices), MultiKueue, status.resourceRequests of
 * pending Workloads, the CustomMetricLabels annotation copy.
 *
 * Prefix: ctl_wl_ (Workload), ctl_job_ (jobs), CTL_.
 */
#ifndef CU_CONTROLLER_WORKLOAD_H
#define CU_CONTROLLER_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "admission/admission.h"
#include "api/model.h"
#include "lib/cu.h"

/* ---- names Kueue uses ------------------------------------------------ */

#define CTL_LABEL_QUEUE_NAME "kueue.x-k8s.io/queue-name"
#define CTL_LABEL_JOB_UID "kueue.x-k8s.io/job-uid"
#define CTL_LABEL_MAX_EXEC_TIME "kueue.x-k8s.io/max-exec-time-seconds"
#define CTL_LABEL_PODSET "kueue.x-k8s.io/podset"
#define CTL_LABEL_LOCAL_QUEUE "kueue.x-k8s.io/local-queue-name"
#define CTL_LABEL_CLUSTER_QUEUE "kueue.x-k8s.io/cluster-queue-name"
#define CTL_ANNOTATION_STOPPING "kueue.x-k8s.io/stopping"
#define CTL_ANNOTATION_COMPLETIONS_EQ_PARALLELISM                              \
	"kueue.x-k8s.io/job-completions-equal-parallelism"
#define CTL_ANNOTATION_PROVREQ_PREFIX "provreq.kueue.x-k8s.io/"
#define CTL_FINALIZER_RESOURCE_IN_USE "kueue.x-k8s.io/resource-in-use"

/* Workload condition types. */
#define CTL_COND_QUOTA_RESERVED "QuotaReserved"
#define CTL_COND_ADMITTED "Admitted"
#define CTL_COND_EVICTED "Evicted"
#define CTL_COND_PREEMPTED "Preempted"
#define CTL_COND_REQUEUED "Requeued"
#define CTL_COND_FINISHED "Finished"

/* Evicted reasons (Kueue's WorkloadEvictedBy* constants). */
#define CTL_EVICTED_PREEMPTED "Preempted"
#define CTL_EVICTED_PODS_READY_TIMEOUT "PodsReadyTimeout"
#define CTL_EVICTED_ADMISSION_CHECK "AdmissionCheck"
#define CTL_EVICTED_CLUSTER_QUEUE_STOPPED "ClusterQueueStopped"
#define CTL_EVICTED_LOCAL_QUEUE_STOPPED "LocalQueueStopped"
#define CTL_EVICTED_DEACTIVATED "Deactivated"
#define CTL_EVICTED_NODE_FAILURES "NodeFailures"

/* Finished reasons. */
#define CTL_FINISHED_SUCCEEDED "Succeeded"
#define CTL_FINISHED_FAILED "Failed"
#define CTL_FINISHED_FAILED_TO_START "FailedToStart"

/* QuotaReserved=False reason once an evicted Workload released quota. */
#define CTL_REASON_PENDING_EVALUATION "PendingEvaluation"

/* Kueue cuts condition messages to 32 KiB ("... " suffix). */
#define CTL_CONDITION_MESSAGE_MAX (32 * 1024)

/* ---- the managed job ------------------------------------------------- */

enum ctl_job_kind {
	CTL_JOB_BATCH = 1, /* batch/v1 Job */
	CTL_JOB_JOBSET,	   /* jobset.x-k8s.io/v1alpha2 JobSet */
};

/* A borrowed view of one managed job: exactly the member named by kind
 * is set. */
struct ctl_job {
	enum ctl_job_kind kind;
	const struct api_job *job;	 /* [borrowed] CTL_JOB_BATCH */
	const struct api_jobset *jobset; /* [borrowed] CTL_JOB_JOBSET */
};

/* The job's metadata [borrowed from j]. */
const struct api_meta *ctl_job_meta(const struct ctl_job *j);

/* Kueue's pod sets of the job (api_job_podsets / api_jobset_podsets).
 * *out initialised here; api_podsets_dispose it. */
CU_MUST_CHECK int ctl_job_podsets(
    const struct ctl_job *j, struct api_podsets *out, cu_error *err);

/* ---- 1. the Workload for a job --------------------------------------- */

struct ctl_wl_build_opts {
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
 * podSets [{name, template, count, minCount?}] from ctl_job_podsets (the
 * templates are the originals a stop restores), maximumExecutionTimeSeconds
 * (from the max-exec-time-seconds label when a positive int32), priority
 * (always) and priorityClassRef (when a class applies), active true.
 * opts [borrowed; NULL = defaults]. *out [owned: json_decref].
 * Errors: CU_EINVAL (job without name/uid, or a pod set Kueue cannot
 * build; message names the field), CU_ENOTFOUND (the priority class the
 * job names does not exist; from the lookup), CU_EIO, CU_ENOMEM.
 */
CU_MUST_CHECK int ctl_wl_build(const struct ctl_job *j,
    const struct ctl_wl_build_opts *opts, json_t **out, cu_error *err);

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
CU_MUST_CHECK int ctl_wl_equivalent(const struct ctl_job *j,
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
 * CTL_CONDITION_MESSAGE_MAX are cut as Kueue cuts them. Errors: CU_EINVAL
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
CU_MUST_CHECK int ctl_wl_status_admit(const struct api_workload *wl,
    const struct adm_decision *d, int64_t now_ns, json_t **patch,
    cu_error *err);

/*
 * Not admitted: QuotaReserved=False with reason [borrowed] (e.g.
 * adm_reason_string(d->reason)) and message [borrowed], status.admission
 * cleared, Admitted=False (NoReservation, "The workload has no
 * reservation"; the time it was admitted is added to
 * accumulatedPastExecutionTimeSeconds). Kueue's
 * UnsetQuotaReservationWithCondition + SyncAdmittedCondition.
 */
CU_MUST_CHECK int ctl_wl_status_pending(const struct api_workload *wl,
    const char *reason, const char *message, int64_t now_ns, json_t **patch,
    cu_error *err);

struct ctl_eviction {
	const char *reason;  /* [borrowed] Evicted reason: CTL_EVICTED_* */
	const char *message; /* [borrowed] */
	/* [borrowed] Preempted reason for preemptions
	 * (adm_preempt_reason_string: InClusterQueue, InCohortReclamation,
	 * ...); NULL for other evictions. */
	const char *preempted_reason;
};

/*
 * Eviction (Kueue's evict.Evict): Evicted=True (reason, message),
 * Preempted=True (preempted_reason, message) for preemptions,
 * status.clusterName and nominatedClusterNames cleared, admission checks
 * reset to Pending, BlockedOnPreemptionGates closed,
 * schedulingStats.evictions[reason].count + 1. status.admission is kept
 * (the quota is held until the job's pods are gone). NULL when the
 * Workload is already Evicted (an eviction is written once).
 */
CU_MUST_CHECK int ctl_wl_status_evict(const struct api_workload *wl,
    const struct ctl_eviction *ev, int64_t now_ns, json_t **patch,
    cu_error *err);

/*
 * After an eviction, once the job is stopped and no longer active
 * (ctl_job_is_active false): Requeued (True for Preempted and
 * NodeFailures evictions, else False; reason and message of the Evicted
 * condition), QuotaReserved=False (PendingEvaluation, the eviction
 * message), admission cleared, Admitted=False. NULL when the Workload is
 * not Evicted or holds no quota.
 */
CU_MUST_CHECK int ctl_wl_status_release(const struct api_workload *wl,
    int64_t now_ns, json_t **patch, cu_error *err);

/*
 * Finished=True with reason [borrowed] (CTL_FINISHED_*) and message
 * [borrowed]; status.admission is kept, as Kueue keeps it (the quota is
 * released because the Workload is finished). NULL when already Finished.
 */
CU_MUST_CHECK int ctl_wl_status_finish(const struct api_workload *wl,
    const char *reason, const char *message, int64_t now_ns, json_t **patch,
    cu_error *err);

/*
 * Kueue's preemption message: "Preempted to accommodate a workload (UID:
 * <uid>, JobUID: <job uid>) due to <prioritization in the ClusterQueue |
 * reclamation within the cohort | reclamation within the cohort while
 * borrowing>; preemptor path: <path>; preemptee path: <path>". Empty or
 * NULL strings print as UNKNOWN. Paths are "/<cohort>/.../<cq>". All
 * strings [borrowed]; returns [owned: cu_free] or NULL (out of memory).
 */
char *ctl_preemption_message(const char *preemptor_uid,
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
CU_MUST_CHECK int ctl_job_start_patch(const struct ctl_job *j,
    const struct api_workload *wl, const struct api_resource_flavor *flavors,
    size_t n_flavors, json_t **patch, cu_error *err);

enum ctl_stop_step {
	CTL_STOP_DONE = 0,    /* nothing to write: *patch is NULL */
	CTL_STOP_SUSPEND,     /* spec patch: suspend (+ stopping mark) */
	CTL_STOP_RESET_START, /* /status patch: status.startTime = null */
	CTL_STOP_RESTORE,     /* spec patch: restore templates (+ unmark) */
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
 * merge patch, NULL exactly when *step is CTL_STOP_DONE. Errors:
 * CU_ENOMEM.
 */
CU_MUST_CHECK int ctl_job_stop_patch(const struct ctl_job *j,
    const struct api_workload *wl, enum ctl_stop_step *step, json_t **patch,
    cu_error *err);

/* ---- 5. job state ------------------------------------------------------ */

/* Job: spec.suspend true and no kueue.x-k8s.io/stopping=true annotation
 * (a stop in progress is not suspended yet); JobSet: spec.suspend. */
bool ctl_job_is_suspended(const struct ctl_job *j);

/* Job: status.active != 0; JobSet: some replicatedJobsStatus[].active > 0. */
bool ctl_job_is_active(const struct ctl_job *j);

/*
 * Job: a Complete or Failed condition with status True; JobSet: Completed
 * or Failed True. *success (may be NULL): not Failed; *message (may be
 * NULL): that condition's message [borrowed from j; "" when none].
 * Returns false (outputs untouched) while the job runs.
 */
bool ctl_job_finished(
    const struct ctl_job *j, bool *success, const char **message);

#endif /* CU_CONTROLLER_WORKLOAD_H */
