/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/reconcile_job_test.c - the Job/JobSet reconciler
 * (rec_job_reconcile), table-driven: the job, its Workload and the view
 * of the caches in, the plan out. Each branch of the decision tree (the
 * former reconcile_job of controller/ctl.c) has a row:
 *
 *   step 0, job gone:           gone_no_workloads, gone_owned_workloads
 *                               (finalizer dropped; deleted unless being
 *                               deleted; no finalizer: delete only)
 *   step 1, gate (first):       gate_no_*  (three rows: an unmanaged job
 *                               gets an empty plan whatever its Workload
 *                               and job state say)
 *   step 2, our write awaited:  awaited
 *   step 3, Workload Finished:  wl_finished_drops_finalizer,
 *                               wl_finished_without_finalizer
 *   step 4, job finished:       job_complete_finishes_wl,
 *                               job_failed_finishes_wl,
 *                               job_finished_no_wl
 *   step 5, Workload deleted:   deleting_job_running (suspend + Stopped),
 *                               deleting_job_stopping (status step, no
 *                               event), deleting_job_stopped (finalizer
 *                               dropped), deleting_job_still_active,
 *                               deleting_without_finalizer
 *   step 6, no Workload:        absent_job_running (suspend + Stopped),
 *                               absent_creates (gate by label: the
 *                               label's queue), absent_mjwqn_default_lq
 *                               (manageJobsWithoutQueueName, LocalQueue
 *                               "default" exists: queueName default),
 *                               absent_mjwqn_no_default_lq,
 *                               absent_build_fails (WARN)
 *   step 2b, prebuilt:          prebuilt_* (absent: stopped, never
 *                               created; unowned: adopted; another
 *                               object's: ignored; out of sync: Finished
 *                               OutOfSync, then ignored)
 *   step 7, mismatch:           mismatch_pending_updated (in place),
 *                               mismatch_*_running_stopped (Stopped, No
 *                               matching Workload), mismatch_admitted_
 *                               deleted (holds quota: deleted once the
 *                               job is stopped), mismatch_admitted_pods_
 *                               left_kept (not while its pods run)
 *   step 8, admitted:           admitted_starts (Started on success),
 *                               admitted_running_nothing,
 *                               admitted_flavor_error_warns (CU_EINVAL),
 *                               admitted_flavor_missing (CU_ENOTFOUND:
 *                               nothing, retried when it appears)
 *   step 9, pending / evicted:  pending_job_running (suspend + Stopped),
 *                               pending_job_suspended (nothing),
 *                               pending_job_stopping (status step),
 *                               evicted_job_running (Stopped with the
 *                               eviction's message),
 *                               evicted_job_stopped_releases,
 *                               evicted_job_still_active,
 *                               evicted_released_nothing,
 *                               evicted_job_stopping (status step)
 *   step 7b, reclaimablePods:   reclaimable_* (written when it differs,
 *                               Indexed by terminal indexes, also for a
 *                               pending Workload)
 *   step 7c, admitted priority: admitted_priority_label_* (a class to a
 *                               class only)
 *   step 8, start impossible:   admitted_start_conflict_failed_to_start
 *                               (WARN + Finished FailedToStart)
 *   step 10, labels followed:   pending_queue_label_changed,
 *                               pending_priority_label_*, evicted_*_label_*
 *                               (an evicted Workload keeps its queue)
 *   labelKeysToCopy:            absent_creates_copies_labels
 *   JobSet:                     jobset_absent_creates, jobset_running_
 *                               pending_stops (one patch + Stopped)
 *
 * Not reachable from a table: a stop patch or equivalence check that
 * fails (they fail only for lack of memory; the plan then ends, as the
 * old tree did).
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "reconcile/reconcile.h"

#define NOW (1767225600LL * 1000000000LL) /* 2026-01-01T00:00:00Z */
#define T0 "2026-01-01T00:00:00Z"

/* ---- fixtures ------------------------------------------------------------ */

#define JOB_TEXT                                                               \
	"{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\","                       \
	"\"metadata\":{\"name\":\"sample\",\"namespace\":\"team-a\","          \
	"\"uid\":\"job-uid-1\",\"resourceVersion\":\"41\",\"generation\":1,"   \
	"\"labels\":{\"kueue.x-k8s.io/queue-name\":\"main\"}},"                \
	"\"spec\":{\"parallelism\":1,\"completions\":1,\"suspend\":true,"      \
	"\"template\":{\"spec\":{\"restartPolicy\":\"Never\","                 \
	"\"containers\":[{\"name\":\"c\",\"image\":\"busybox\","               \
	"\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}}}"

#define JOBSET_TEXT                                                            \
	"{\"apiVersion\":\"jobset.x-k8s.io/v1alpha2\",\"kind\":\"JobSet\","    \
	"\"metadata\":{\"name\":\"js\",\"namespace\":\"team-a\","              \
	"\"uid\":\"js-uid-1\",\"resourceVersion\":\"7\","                      \
	"\"labels\":{\"kueue.x-k8s.io/queue-name\":\"main\"}},"                \
	"\"spec\":{\"suspend\":true,\"replicatedJobs\":["                      \
	"{\"name\":\"w\",\"replicas\":1,\"template\":{\"spec\":{"              \
	"\"parallelism\":1,\"completions\":1,\"template\":{"                   \
	"\"spec\":{\"restartPolicy\":\"Never\",\"containers\":[{\"name\":"     \
	"\"d\",\"image\":\"img\",\"resources\":{\"requests\":{\"cpu\":"        \
	"\"1\"}}}]}}}}}]}}"

#define FLAVOR_SPOT                                                            \
	"{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"                 \
	"\"ResourceFlavor\",\"metadata\":{\"name\":\"spot\"},"                 \
	"\"spec\":{\"nodeLabels\":{\"cloud/capacity\":\"spot\"}}}"

#define ADMISSION                                                              \
	"{\"clusterQueue\":\"cq-a\",\"podSetAssignments\":[{\"name\":"         \
	"\"main\",\"flavors\":{\"cpu\":\"spot\"},"                             \
	"\"resourceUsage\":{\"cpu\":\"1\"},\"count\":1}]}"

#define COND(type, reason, msg)                                                \
	"{\"type\":\"" type "\",\"status\":\"True\",\"reason\":\"" reason      \
	"\",\"message\":\"" msg "\",\"lastTransitionTime\":\"" T0 "\"}"

#define EVICT_MSG "Preempted to accommodate a workload"

enum job_state {
	J_GONE,
	J_SUSPENDED,	    /* suspended, no pods, never started */
	J_RUNNING,	    /* started, pods active */
	J_SUSPENDED_ACTIVE, /* suspended, pods still terminating */
	J_STOPPING,	    /* suspend + stopping mark, startTime set */
	J_COMPLETE,
	J_FAILED,
};

enum wl_state {
	W_ABSENT,
	W_PENDING,  /* built from the job, no status */
	W_MISMATCH, /* pending, count differs from the job */
	W_ADMITTED, /* QuotaReserved + Admitted */
	W_ADMITTED_MISMATCH,
	W_EVICTED,	    /* admitted + Evicted: holds quota */
	W_EVICTED_RELEASED, /* Evicted, quota released */
	W_FINISHED,
	W_FINISHED_NOFIN,
	W_DELETING,
	W_DELETING_NOFIN,
};

enum gate { G_LABEL, G_NO, G_MJWQN };
/* The job names a prebuilt Workload (in.prebuilt); the Workload has no
 * owner, the job as controller owner, or another object's. */
enum prebuilt { P_NO, P_UNOWNED, P_OWNED, P_FOREIGN };
enum flavors { F_OK, F_EINVAL, F_MISSING };

struct row {
	const char *name;
	bool jobset;
	enum job_state job;
	bool no_label; /* the job has no queue-name label */
	bool bad_prio; /* the job names a priority class that does not
			  exist */
	enum wl_state wl;
	enum gate gate;
	bool awaited;
	bool default_lq; /* LocalQueue team-a/default exists */
	enum flavors flavors;
	bool owned; /* J_GONE: three owned Workloads */
	/* the job is labelled team=a and tier=gold; the view's
	 * labelKeysToCopy is [team]: the created Workload has team=a, not
	 * tier */
	bool copy_labels;
	/* the pod template carries kueue.x-k8s.io/podset=other: the start
	 * can never work */
	bool podset_label;
	/* the gate's queue name (the job's queue-name label) when not
	 * "main": the Workload was built for "main" */
	const char *queue_label;
	/* the job's priority-class label once its Workload was built (the
	 * class "high" exists, value 100) */
	const char *prio_label;
	/* the Workload's WorkloadPriorityClass (priority 1); NULL: none */
	const char *wl_class;
	/* parallelism = completions = 3, status.succeeded = `succeeded`;
	 * the Workload already says reclaimablePods main=`reclaim_have`
	 * (0: none) */
	int succeeded;
	int reclaim_have;
	/* Indexed: completedIndexes "0,2-7" (beyond completions: capped),
	 * failedIndexes "2": `succeeded` must be 2 */
	bool indexed;
	enum prebuilt prebuilt;
	bool mismatch;	  /* the Workload's count differs from the job's */
	const char *want; /* rendered plan; a trailing '*' compares a prefix */
	const char
	    *queue_name; /* created Workload's spec.queueName, "-" none */
};

#define WLN "job-sample-"
#define JWRITE_SUSPEND "job.suspend team-a/sample rv"
#define JWRITE_START "job.start team-a/sample rv"
#define STOPPED_NA "(Stopped: Not admitted by cluster queue)"
#define NO_MATCH                                                               \
	"No matching Workload; restoring pod templates according to "          \
	"existent Workload"

static const struct row rows[] = {
    /* step 0 */
    {.name = "gone_no_workloads", .job = J_GONE, .want = ""},
    {.name = "gone_owned_workloads",
	.job = J_GONE,
	.owned = true,
	.want = "wl.patch team-a/wl-a | wl.delete team-a/wl-a | "
		"wl.patch team-a/wl-b | wl.delete team-a/wl-c"},
    /* step 1: the gate first */
    {.name = "gate_no_running_admitted",
	.job = J_RUNNING,
	.wl = W_EVICTED,
	.gate = G_NO,
	.want = ""},
    {.name = "gate_no_absent_wl",
	.job = J_RUNNING,
	.wl = W_ABSENT,
	.gate = G_NO,
	.default_lq = true,
	.want = ""},
    {.name = "gate_no_finished",
	.job = J_COMPLETE,
	.wl = W_FINISHED,
	.gate = G_NO,
	.want = ""},
    /* step 2 */
    {.name = "awaited",
	.job = J_RUNNING,
	.wl = W_PENDING,
	.awaited = true,
	.want = ""},
    /* step 3 */
    {.name = "wl_finished_drops_finalizer",
	.job = J_COMPLETE,
	.wl = W_FINISHED,
	.want = "wl.patch team-a/" WLN "* rv job"},
    {.name = "wl_finished_without_finalizer",
	.job = J_RUNNING,
	.wl = W_FINISHED_NOFIN,
	.want = ""},
    /* step 4 */
    {.name = "job_complete_finishes_wl",
	.job = J_COMPLETE,
	.wl = W_ADMITTED,
	.want = "wl.status team-a/" WLN "* rv job (FinishedWorkload: "
		"Workload 'team-a/" WLN "*' is declared finished)"},
    {.name = "job_failed_finishes_wl",
	.job = J_FAILED,
	.wl = W_PENDING,
	.want = "wl.status team-a/" WLN "* rv job (FinishedWorkload: "
		"Workload 'team-a/" WLN "*' is declared finished)"},
    {.name = "job_finished_no_wl", .job = J_FAILED, .want = ""},
    /* step 5 */
    {.name = "deleting_job_running",
	.job = J_RUNNING,
	.wl = W_DELETING,
	.want = JWRITE_SUSPEND " (Stopped: The workload is deleted)"},
    {.name = "deleting_job_stopping",
	.job = J_STOPPING,
	.wl = W_DELETING,
	.want = "job.reset-start team-a/sample rv"},
    {.name = "deleting_job_stopped",
	.job = J_SUSPENDED,
	.wl = W_DELETING,
	.want = "wl.patch team-a/" WLN "* rv job"},
    {.name = "deleting_job_still_active",
	.job = J_SUSPENDED_ACTIVE,
	.wl = W_DELETING,
	.want = ""},
    {.name = "deleting_without_finalizer",
	.job = J_SUSPENDED,
	.wl = W_DELETING_NOFIN,
	.want = ""},
    /* step 6 */
    {.name = "absent_job_running",
	.job = J_RUNNING,
	.want = JWRITE_SUSPEND " " STOPPED_NA},
    {.name = "absent_creates",
	.job = J_SUSPENDED,
	.default_lq = true,
	.want = "wl.create team-a/" WLN "* rv job (CreatedWorkload: "
		"Created Workload: team-a/" WLN "*)",
	.queue_name = "main"},
    {.name = "absent_creates_copies_labels",
	.job = J_SUSPENDED,
	.copy_labels = true,
	.want = "wl.create team-a/" WLN "* rv job (CreatedWorkload: "
		"Created Workload: team-a/" WLN "*)",
	.queue_name = "main"},
    {.name = "absent_mjwqn_default_lq",
	.job = J_SUSPENDED,
	.no_label = true,
	.gate = G_MJWQN,
	.default_lq = true,
	.want = "wl.create team-a/" WLN "*",
	.queue_name = "default"},
    {.name = "absent_mjwqn_no_default_lq",
	.job = J_SUSPENDED,
	.no_label = true,
	.gate = G_MJWQN,
	.want = "wl.create team-a/" WLN "*",
	.queue_name = "-"},
    {.name = "absent_build_fails",
	.job = J_SUSPENDED,
	.bad_prio = true,
	.want = "warn workload for J/team-a/sample: *"},
    /* step 7 */
    {.name = "mismatch_pending_updated",
	.job = J_SUSPENDED,
	.wl = W_MISMATCH,
	.want = "wl.patch team-a/" WLN "* rv job (UpdatedWorkload: Updated "
		"not matching Workload for suspended job: team-a/" WLN "*"},
    {.name = "mismatch_pending_running_stopped",
	.job = J_RUNNING,
	.wl = W_MISMATCH,
	.want = JWRITE_SUSPEND " (Stopped: " NO_MATCH ")"},
    {.name = "mismatch_admitted_deleted",
	.job = J_SUSPENDED,
	.wl = W_ADMITTED_MISMATCH,
	.want = "wl.delete team-a/" WLN "* rv job (DeletedWorkload: Deleted "
		"not matching Workload: team-a/" WLN "*"},
    {.name = "mismatch_admitted_running_stopped",
	.job = J_RUNNING,
	.wl = W_ADMITTED_MISMATCH,
	.want = JWRITE_SUSPEND " (Stopped: " NO_MATCH ")"},
    {.name = "mismatch_admitted_pods_left_kept",
	.job = J_SUSPENDED_ACTIVE,
	.wl = W_ADMITTED_MISMATCH,
	.want = ""},
    /* step 2b: prebuilt Workloads */
    {.name = "prebuilt_absent_running_stopped",
	.job = J_RUNNING,
	.prebuilt = P_OWNED,
	.want = JWRITE_SUSPEND " (Stopped: missing workload)"},
    {.name = "prebuilt_absent_never_created",
	.job = J_SUSPENDED,
	.prebuilt = P_OWNED,
	.default_lq = true,
	.want = ""},
    {.name = "prebuilt_unowned_adopted",
	.job = J_SUSPENDED,
	.wl = W_PENDING,
	.prebuilt = P_UNOWNED,
	.want = "wl.patch team-a/" WLN "* rv job"},
    {.name = "prebuilt_foreign_ignored",
	.job = J_RUNNING,
	.wl = W_ADMITTED,
	.prebuilt = P_FOREIGN,
	.want = JWRITE_SUSPEND " (Stopped: missing workload)"},
    {.name = "prebuilt_foreign_finished_untouched",
	.job = J_SUSPENDED,
	.wl = W_FINISHED,
	.prebuilt = P_FOREIGN,
	.want = ""},
    {.name = "prebuilt_owned_admitted_starts",
	.job = J_SUSPENDED,
	.wl = W_ADMITTED,
	.prebuilt = P_OWNED,
	.want = JWRITE_START " (Started: Admitted by clusterQueue cq-a)"},
    {.name = "prebuilt_out_of_sync_finished",
	.job = J_SUSPENDED,
	.wl = W_MISMATCH,
	.prebuilt = P_OWNED,
	.want = "wl.status team-a/" WLN "* rv job"},
    {.name = "prebuilt_out_of_sync_and_finished_stops",
	.job = J_RUNNING,
	.wl = W_FINISHED,
	.prebuilt = P_OWNED,
	.mismatch = true,
	.want = JWRITE_SUSPEND " (Stopped: missing workload)"},
    /* step 8 */
    {.name = "admitted_starts",
	.job = J_SUSPENDED,
	.wl = W_ADMITTED,
	.want = JWRITE_START " (Started: Admitted by clusterQueue cq-a)"},
    {.name = "admitted_start_conflict_failed_to_start",
	.job = J_SUSPENDED,
	.wl = W_ADMITTED,
	.podset_label = true,
	.want = "warn start J/team-a/sample: invalid admission check "
		"PodSetUpdate: conflict for labels: *"
		" | wl.status team-a/" WLN "* rv job"},
    {.name = "admitted_running_nothing",
	.job = J_RUNNING,
	.wl = W_ADMITTED,
	.want = ""},
    {.name = "admitted_flavor_error_warns",
	.job = J_SUSPENDED,
	.wl = W_ADMITTED,
	.flavors = F_EINVAL,
	.want = "warn start J/team-a/sample: bad flavor"},
    {.name = "admitted_flavor_missing",
	.job = J_SUSPENDED,
	.wl = W_ADMITTED,
	.flavors = F_MISSING,
	.want = ""},
    /* step 9 */
    {.name = "pending_job_running",
	.job = J_RUNNING,
	.wl = W_PENDING,
	.want = JWRITE_SUSPEND " " STOPPED_NA},
    {.name = "pending_job_suspended",
	.job = J_SUSPENDED,
	.wl = W_PENDING,
	.want = ""},
    {.name = "pending_job_stopping",
	.job = J_STOPPING,
	.wl = W_PENDING,
	.want = "job.reset-start team-a/sample rv"},
    {.name = "evicted_job_running",
	.job = J_RUNNING,
	.wl = W_EVICTED,
	.want = JWRITE_SUSPEND " (Stopped: " EVICT_MSG ")"},
    {.name = "evicted_job_stopped_releases",
	.job = J_SUSPENDED,
	.wl = W_EVICTED,
	.want = "wl.status team-a/" WLN "* rv job"},
    {.name = "evicted_job_still_active",
	.job = J_SUSPENDED_ACTIVE,
	.wl = W_EVICTED,
	.want = ""},
    {.name = "evicted_released_nothing",
	.job = J_SUSPENDED,
	.wl = W_EVICTED_RELEASED,
	.want = ""},
    {.name = "evicted_job_stopping",
	.job = J_STOPPING,
	.wl = W_EVICTED,
	.want = "job.reset-start team-a/sample rv"},
    /* step 10: a Workload without quota follows the job's labels */
    {.name = "pending_queue_label_changed",
	.job = J_SUSPENDED,
	.wl = W_PENDING,
	.queue_label = "other",
	.want = "wl.patch team-a/" WLN "* rv job"},
    {.name = "pending_priority_label_changed",
	.job = J_SUSPENDED,
	.wl = W_PENDING,
	.prio_label = "high",
	.want = "wl.patch team-a/" WLN "* rv job (UpdatedWorkload: Updated "
		"workload priority class: team-a/" WLN "*)"},
    {.name = "pending_defaulted_class_kept",
	.job = J_SUSPENDED,
	.wl = W_PENDING,
	.wl_class = "default",
	.want = ""},
    {.name = "pending_priority_label_missing_class",
	.job = J_SUSPENDED,
	.wl = W_PENDING,
	.prio_label = "nope",
	.want = "warn priority of J/team-a/sample: *"},
    {.name = "pending_job_running_queue_label_changed_stops_first",
	.job = J_RUNNING,
	.wl = W_PENDING,
	.queue_label = "other",
	.want = JWRITE_SUSPEND " " STOPPED_NA},
    {.name = "admitted_queue_label_changed_starts",
	.job = J_SUSPENDED,
	.wl = W_ADMITTED,
	.queue_label = "other",
	.want = JWRITE_START " (Started: Admitted by clusterQueue cq-a)"},
    {.name = "evicted_holding_queue_label_changed_releases",
	.job = J_SUSPENDED,
	.wl = W_EVICTED,
	.queue_label = "other",
	.want = "wl.status team-a/" WLN "* rv job"},
    {.name = "evicted_released_queue_label_changed_nothing",
	.job = J_SUSPENDED,
	.wl = W_EVICTED_RELEASED,
	.queue_label = "other",
	.want = ""},
    {.name = "evicted_released_priority_label_changed",
	.job = J_SUSPENDED,
	.wl = W_EVICTED_RELEASED,
	.prio_label = "high",
	.want = "wl.patch team-a/" WLN "* rv job (UpdatedWorkload: *)"},
    /* step 7c: holding quota, the priority follows (a class only) */
    {.name = "admitted_priority_label_no_class_starts",
	.job = J_SUSPENDED,
	.wl = W_ADMITTED,
	.prio_label = "high",
	.want = JWRITE_START " (Started: Admitted by clusterQueue cq-a)"},
    {.name = "admitted_priority_label_changed",
	.job = J_RUNNING,
	.wl = W_ADMITTED,
	.wl_class = "low",
	.prio_label = "high",
	.want = "wl.patch team-a/" WLN "* rv job (UpdatedWorkload: *)"},
    {.name = "admitted_priority_label_same",
	.job = J_RUNNING,
	.wl = W_ADMITTED,
	.wl_class = "high",
	.prio_label = "high",
	.want = ""},
    /* step 7b: status.reclaimablePods */
    {.name = "reclaimable_written",
	.job = J_RUNNING,
	.wl = W_ADMITTED,
	.succeeded = 1,
	.want = "wl.status team-a/" WLN "* rv job"},
    {.name = "reclaimable_unchanged",
	.job = J_RUNNING,
	.wl = W_ADMITTED,
	.succeeded = 1,
	.reclaim_have = 1,
	.want = ""},
    {.name = "reclaimable_grows",
	.job = J_RUNNING,
	.wl = W_ADMITTED,
	.succeeded = 2,
	.reclaim_have = 1,
	.want = "wl.status team-a/" WLN "* rv job"},
    {.name = "reclaimable_indexed",
	.job = J_RUNNING,
	.wl = W_ADMITTED,
	.succeeded = 2,
	.indexed = true,
	.want = "wl.status team-a/" WLN "* rv job"},
    {.name = "reclaimable_pending_evicted_job",
	.job = J_SUSPENDED,
	.wl = W_PENDING,
	.succeeded = 2,
	.want = "wl.status team-a/" WLN "* rv job"},
    /* JobSet */
    {.name = "jobset_absent_creates",
	.jobset = true,
	.job = J_SUSPENDED,
	.want = "wl.create team-a/jobset-js-* rv job (CreatedWorkload: "
		"*)",
	.queue_name = "main"},
    {.name = "jobset_running_pending_stops",
	.jobset = true,
	.job = J_RUNNING,
	.wl = W_PENDING,
	.want = "job.suspend team-a/js rv " STOPPED_NA},
};

/* ---- building a row's inputs ------------------------------------------- */

static json_t *parse(const char *text)
{
	json_error_t jerr;
	json_t *j = json_loads(text, 0, &jerr);

	cr_assert_not_null(j, "test JSON: %s", jerr.text);
	return j;
}

static void set_path(json_t *root, const char *a, const char *b, json_t *v)
{
	json_t *o = json_object_get(root, a);

	if (o == NULL) {
		o = json_object();
		json_object_set_new(root, a, o);
	}
	json_object_set_new(o, b, v);
}

static json_t *job_doc(const struct row *r)
{
	json_t *j = parse(r->jobset ? JOBSET_TEXT : JOB_TEXT);
	json_t *md = json_object_get(j, "metadata");

	if (r->no_label)
		json_object_del(
		    json_object_get(md, "labels"), REC_LABEL_QUEUE_NAME);
	if (r->bad_prio)
		json_object_set_new(json_object_get(md, "labels"),
		    API_LABEL_PRIORITY_CLASS, json_string("nope"));
	if (r->succeeded > 0 || r->reclaim_have > 0) {
		set_path(j, "spec", "parallelism", json_integer(3));
		set_path(j, "spec", "completions", json_integer(3));
		set_path(j, "status", "succeeded",
		    json_integer(r->indexed ? 99 : r->succeeded));
	}
	if (r->indexed) {
		set_path(j, "spec", "completionMode", json_string("Indexed"));
		set_path(j, "status", "completedIndexes", json_string("0,2-7"));
		set_path(j, "status", "failedIndexes", json_string("2"));
	}
	if (r->podset_label)
		set_path(
		    json_object_get(json_object_get(j, "spec"), "template"),
		    "metadata", "labels",
		    parse("{\"" REC_LABEL_PODSET "\":\"other\"}"));
	if (r->copy_labels) {
		json_object_set_new(
		    json_object_get(md, "labels"), "team", json_string("a"));
		json_object_set_new(
		    json_object_get(md, "labels"), "tier", json_string("gold"));
	}
	switch (r->job) {
	case J_RUNNING:
		set_path(j, "spec", "suspend", json_false());
		set_path(j, "status", "startTime", json_string(T0));
		if (r->jobset)
			json_object_set_new(json_object_get(j, "status"),
			    "replicatedJobsStatus",
			    parse("[{\"name\":\"w\",\"ready\":0,"
				  "\"succeeded\":0,\"failed\":0,"
				  "\"active\":1,\"suspended\":0}]"));
		else
			set_path(j, "status", "active", json_integer(1));
		break;
	case J_SUSPENDED_ACTIVE:
		set_path(j, "status", "active", json_integer(1));
		break;
	case J_STOPPING:
		json_object_set_new(md, "annotations",
		    parse("{\"" REC_ANNOTATION_STOPPING "\":\"true\"}"));
		set_path(j, "status", "startTime", json_string(T0));
		break;
	case J_COMPLETE:
		set_path(j, "spec", "suspend", json_false());
		set_path(j, "status", "conditions",
		    parse("[" COND("Complete", "Done", "") "]"));
		break;
	case J_FAILED:
		set_path(j, "spec", "suspend", json_false());
		set_path(j, "status", "conditions",
		    parse("[" COND("Failed", "BackoffLimitExceeded",
			"too many failures") "]"));
		break;
	default:
		break;
	}
	return j;
}

/* The Workload of the row [owned], built for the job as the controller
 * builds it, then put in the row's state. */
static json_t *wl_doc(const struct row *r, const struct rec_job *j)
{
	json_t *w = NULL, *md, *st;
	cu_error err;

	cr_assert_eq(rec_wl_build(j, NULL, &w, &err), CU_OK, "%s", err.msg);
	md = json_object_get(w, "metadata");
	json_object_set_new(md, "uid", json_string("wl-uid-1"));
	json_object_set_new(md, "generation", json_integer(1));
	json_object_set_new(md, "resourceVersion", json_string("100"));
	if (r->wl_class != NULL) {
		json_object_set_new(json_object_get(w, "spec"),
		    "priorityClassRef",
		    json_pack("{s:s, s:s, s:s}", "group", "kueue.x-k8s.io",
			"kind", "WorkloadPriorityClass", "name", r->wl_class));
		json_object_set_new(
		    json_object_get(w, "spec"), "priority", json_integer(1));
	}
	st = json_object();
	json_object_set_new(w, "status", st);
	if (r->reclaim_have > 0)
		json_object_set_new(st, "reclaimablePods",
		    json_pack("[{s:s, s:i}]", "name", "main", "count",
			r->reclaim_have));
	if (r->prebuilt == P_UNOWNED)
		json_object_del(md, "ownerReferences");
	else if (r->prebuilt == P_FOREIGN)
		json_object_set_new(
		    json_array_get(json_object_get(md, "ownerReferences"), 0),
		    "uid", json_string("someone-else"));
	if (r->mismatch)
		json_object_set_new(
		    json_array_get(
			json_object_get(json_object_get(w, "spec"), "podSets"),
			0),
		    "count", json_integer(99));
	switch (r->wl) {
	case W_MISMATCH:
		json_object_set_new(
		    json_array_get(
			json_object_get(json_object_get(w, "spec"), "podSets"),
			0),
		    "count", json_integer(99));
		break;
	case W_ADMITTED_MISMATCH:
		json_object_set_new(
		    json_array_get(
			json_object_get(json_object_get(w, "spec"), "podSets"),
			0),
		    "count", json_integer(99));
		/* fall through */
	case W_ADMITTED:
		json_object_set_new(st, "admission", parse(ADMISSION));
		json_object_set_new(st, "conditions",
		    parse("[" COND("QuotaReserved", "QuotaReserved",
			"m") "," COND("Admitted", "Admitted", "m") "]"));
		break;
	case W_EVICTED:
		json_object_set_new(st, "admission", parse(ADMISSION));
		json_object_set_new(st, "conditions",
		    parse("[" COND("QuotaReserved", "QuotaReserved",
			"m") "," COND("Admitted", "Admitted",
			"m") "," COND("Evicted", "Preempted", EVICT_MSG) "]"));
		break;
	case W_EVICTED_RELEASED:
		json_object_set_new(st, "conditions",
		    parse("[" COND("Evicted", "Preempted", EVICT_MSG) "]"));
		break;
	case W_FINISHED_NOFIN:
		json_object_del(md, "finalizers");
		/* fall through */
	case W_FINISHED:
		json_object_set_new(st, "conditions",
		    parse("[" COND("Finished", "Succeeded", "ok") "]"));
		break;
	case W_DELETING_NOFIN:
		json_object_del(md, "finalizers");
		/* fall through */
	case W_DELETING:
		json_object_set_new(md, "deletionTimestamp", json_string(T0));
		break;
	default:
		break;
	}
	return w;
}

/* An owned Workload of a gone job: name, finalizer?, being deleted? */
static void owned_wl(
    struct api_workload *wl, const char *name, bool fin, bool deleting)
{
	char buf[1024];
	json_t *d;
	cu_error err;

	snprintf(buf, sizeof(buf),
	    "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\","
	    "\"metadata\":{\"name\":\"%s\",\"namespace\":\"team-a\","
	    "\"uid\":\"u-%s\",\"resourceVersion\":\"5\"%s%s},"
	    "\"spec\":{\"queueName\":\"main\",\"podSets\":[{\"name\":\"main\","
	    "\"count\":1,\"template\":{\"spec\":{\"containers\":[{"
	    "\"name\":\"c\",\"image\":\"i\"}]}}}]}}",
	    name, name,
	    fin ? ",\"finalizers\":[\"other/"
		  "keep\",\"" REC_FINALIZER_RESOURCE_IN_USE "\"]"
		: "",
	    deleting ? ",\"deletionTimestamp\":\"" T0 "\"" : "");
	d = parse(buf);
	cr_assert_eq(api_workload_decode(wl, d, &err), CU_OK, "%s", err.msg);
	json_decref(d);
}

/* ---- the view ------------------------------------------------------------ */

struct view_state {
	const struct row *r;
	int flavor_calls;
};

static int flavors_cb(const struct api_workload *wl,
    struct api_resource_flavor **out, size_t *n, void *payload, cu_error *err)
{
	struct view_state *vs = payload;
	json_t *d;
	int rc;

	(void)wl;
	vs->flavor_calls++;
	*out = NULL;
	*n = 0;
	if (vs->r->flavors == F_EINVAL)
		return cu_error_set(err, CU_EINVAL, "bad flavor");
	if (vs->r->flavors == F_MISSING)
		return CU_OK;
	*out = cu_calloc(1, sizeof(**out));
	cr_assert_not_null(*out);
	d = parse(FLAVOR_SPOT);
	rc = api_resource_flavor_decode(&(*out)[0], d, err);
	json_decref(d);
	cr_assert_eq(rc, CU_OK);
	*n = 1;
	return CU_OK;
}

static bool lq_cb(const char *ns, const char *name, void *payload)
{
	struct view_state *vs = payload;

	return vs->r->default_lq && strcmp(ns, "team-a") == 0 &&
	       strcmp(name, "default") == 0;
}

static int no_class(
    const char *name, int32_t *value, void *payload, cu_error *err)
{
	(void)payload;
	if (strcmp(name, "high") == 0) {
		*value = 100;
		return CU_OK;
	}
	return cu_error_set(err, CU_ENOTFOUND, "class %s not found", name);
}

static const struct api_priority_lookup classes = {
    no_class, no_class, NULL, false, NULL};

/* ---- rendering a plan ---------------------------------------------------- */

/* Append the strings (NULL ends the list) to buf. */
static void app(char *buf, size_t cap, ...)
{
	va_list ap;
	const char *s;
	size_t len = strlen(buf);

	va_start(ap, cap);
	while ((s = va_arg(ap, const char *)) != NULL && len < cap) {
		size_t n = strlen(s);

		if (n >= cap - len)
			n = cap - len - 1;
		memcpy(buf + len, s, n);
		len += n;
		buf[len] = '\0';
	}
	va_end(ap);
}

static void render(const struct rec_plan *p, char *buf, size_t cap)
{
	static const char *const ops[] = {
	    "?", "create", "patch", "status", "delete"};
	/* A job write is named by what it is (rec_job_write), not by its
	 * request: the start and the suspend step are both spec patches. */
	static const char *const jobs[] = {
	    "?", "start", "suspend", "reset-start", "restore"};
	size_t i;

	buf[0] = '\0';
	for (i = 0; i < p->n; i++) {
		const struct rec_item *it = &p->items[i];

		if (i > 0)
			app(buf, cap, " | ", NULL);
		switch (it->kind) {
		case REC_ITEM_WRITE:
			app(buf, cap,
			    it->target == REC_TARGET_JOB ? "job." : "wl.",
			    it->target == REC_TARGET_JOB ? jobs[it->job]
							 : ops[it->op],
			    " ", it->ns, "/", it->name,
			    it->expect == REC_EXPECT_RV ? " rv" : "",
			    it->for_job ? " job" : "", NULL);
			if (it->done_reason != NULL)
				app(buf, cap, " (", it->done_reason, ": ",
				    it->text, ")", NULL);
			break;
		case REC_ITEM_EVENT:
			app(buf, cap, "event ", it->reason, ": ", it->text,
			    NULL);
			break;
		case REC_ITEM_WARN:
			app(buf, cap, "warn ", it->text, NULL);
			break;
		default:
			app(buf, cap, "engine?", NULL);
		}
	}
}

/* want may hold '*': any text up to the next literal character. */
static bool matches(const char *got, const char *want)
{
	if (*want == '\0')
		return *got == '\0';
	if (*want == '*') {
		for (;; got++) {
			if (matches(got, want + 1))
				return true;
			if (*got == '\0')
				return false;
		}
	}
	return *got == *want && matches(got + 1, want + 1);
}

/* ---- the table ----------------------------------------------------------- */

static void run_row(const struct row *r)
{
	struct view_state vs = {r, 0};
	struct rec_job_view v;
	struct rec_job_in in;
	struct rec_plan plan;
	struct api_job job;
	struct api_jobset js;
	struct api_workload wl, ow[3];
	const struct api_workload *owned[3];
	struct rec_job j;
	json_t *jd = NULL, *wd = NULL;
	char *wlname = NULL, got[4096];
	char team_key[] = "team";
	char *copy_keys[] = {team_key};
	struct api_strlist keys = {copy_keys, 1};
	cu_error err;
	size_t i;

	memset(&v, 0, sizeof(v));
	memset(&in, 0, sizeof(in));
	memset(&j, 0, sizeof(j));
	memset(&job, 0, sizeof(job));
	memset(&js, 0, sizeof(js));
	rec_plan_init(&plan);
	v.managed = r->gate != G_NO;
	v.queue_name = r->gate != G_LABEL ? NULL
		       : r->queue_label	  ? r->queue_label
					  : "main";
	v.wl_awaited = r->awaited;
	v.admitted_flavors = flavors_cb;
	v.local_queue_exists = lq_cb;
	v.priority = &classes;
	v.label_keys_to_copy = &keys;
	v.payload = &vs;
	in.kind = r->jobset ? REC_JOB_JOBSET : REC_JOB_BATCH;
	in.ns = "team-a";
	in.name = r->jobset ? "js" : "sample";
	if (r->job == J_GONE) {
		if (r->owned) {
			owned_wl(&ow[0], "wl-a", true, false);
			owned_wl(&ow[1], "wl-b", true, true);
			owned_wl(&ow[2], "wl-c", false, false);
			for (i = 0; i < 3; i++)
				owned[i] = &ow[i];
			in.owned = owned;
			in.n_owned = 3;
		}
	} else {
		jd = job_doc(r);
		j.kind = in.kind;
		if (r->jobset) {
			cr_assert_eq(api_jobset_decode(&js, jd, &err), CU_OK,
			    "%s", err.msg);
			j.jobset = &js;
		} else {
			cr_assert_eq(api_job_decode(&job, jd, &err), CU_OK,
			    "%s", err.msg);
			j.job = &job;
		}
		in.job = &j;
		cr_assert_eq(api_workload_name(r->jobset ? "JobSet" : "Job",
				 r->jobset ? "jobset.x-k8s.io" : "batch",
				 in.name, rec_job_meta(&j)->uid, -1,
				 API_WORKLOAD_NAME_MAX, &wlname, &err),
		    CU_OK);
		in.wl_name = wlname;
		in.prebuilt = r->prebuilt != P_NO;
		if (r->wl != W_ABSENT) {
			wd = wl_doc(r, &j);
			cr_assert_eq(api_workload_decode(&wl, wd, &err), CU_OK,
			    "%s", err.msg);
			cr_assert_str_eq(wl.meta.name, wlname);
			in.wl = &wl;
		}
		if (r->prio_label != NULL) {
			/* the label changes after the Workload was built */
			api_job_dispose(&job);
			json_object_set_new(
			    json_object_get(
				json_object_get(jd, "metadata"), "labels"),
			    API_LABEL_PRIORITY_CLASS,
			    json_string(r->prio_label));
			cr_assert_eq(api_job_decode(&job, jd, &err), CU_OK,
			    "%s", err.msg);
		}
	}
	cr_assert_eq(rec_job_reconcile(&v, &in, NOW, &plan, &err), CU_OK,
	    "%s: %s", r->name, err.msg);
	render(&plan, got, sizeof(got));
	cr_expect(matches(got, r->want), "%s:\n  got  \"%s\"\n  want \"%s\"",
	    r->name, got, r->want);
	if (r->queue_name != NULL) {
		const json_t *spec;
		const char *q;

		cr_assert(plan.n > 0 && plan.items[0].op == REC_WRITE_CREATE,
		    "%s", r->name);
		spec = json_object_get(plan.items[0].body, "spec");
		q = json_string_value(json_object_get(spec, "queueName"));
		if (strcmp(r->queue_name, "-") == 0)
			cr_expect_null(q, "%s: queueName %s", r->name, q);
		else
			cr_expect(q != NULL && strcmp(q, r->queue_name) == 0,
			    "%s: queueName %s", r->name, q ? q : "(none)");
		/* labelKeysToCopy: only the keys named are copied */
		{
			const json_t *lab = json_object_get(
			    json_object_get(plan.items[0].body, "metadata"),
			    "labels");
			const char *team =
			    json_string_value(json_object_get(lab, "team"));

			cr_expect(r->copy_labels
				      ? team != NULL && strcmp(team, "a") == 0
				      : team == NULL,
			    "%s: label team %s", r->name, team ? team : "-");
			cr_expect_null(
			    json_object_get(lab, "tier"), "%s: tier", r->name);
		}
	}
	/* The label-following patch says the new queue and priority. */
	for (i = 0; i < plan.n; i++) {
		const struct rec_item *it = &plan.items[i];
		const json_t *spec = json_object_get(it->body, "spec");

		if (it->kind != REC_ITEM_WRITE ||
		    it->target != REC_TARGET_WORKLOAD ||
		    it->op != REC_WRITE_PATCH || spec == NULL)
			continue;
		/* The in-place update: the whole spec rebuilt from the job
		 * (one pod), spec.active kept. */
		if (it->text != NULL &&
		    strncmp(it->text, "Updated not matching", 20) == 0) {
			cr_expect_eq(
			    json_integer_value(json_object_get(
				json_array_get(
				    json_object_get(spec, "podSets"), 0),
				"count")),
			    1, "%s: podSets[0].count", r->name);
			cr_expect(json_is_true(json_object_get(spec, "active")),
			    "%s: active", r->name);
			cr_expect_str_eq(json_string_value(json_object_get(
					     spec, "queueName")),
			    "main", "%s", r->name);
			continue;
		}
		if (r->queue_label != NULL)
			cr_expect_str_eq(json_string_value(json_object_get(
					     spec, "queueName")),
			    r->queue_label, "%s", r->name);
		else
			cr_expect_null(
			    json_object_get(spec, "queueName"), "%s", r->name);
		if (r->prio_label != NULL) {
			cr_expect_eq(json_integer_value(
					 json_object_get(spec, "priority")),
			    100, "%s", r->name);
			cr_expect_str_eq(
			    json_string_value(json_object_get(
				json_object_get(spec, "priorityClassRef"),
				"name")),
			    r->prio_label, "%s", r->name);
			cr_expect_str_eq(
			    json_string_value(json_object_get(
				json_object_get(spec, "priorityClassRef"),
				"kind")),
			    "WorkloadPriorityClass", "%s", r->name);
		} else
			cr_expect_null(
			    json_object_get(spec, "priority"), "%s", r->name);
	}
	/* The adoption: the job becomes the controller owner. */
	if (r->prebuilt == P_UNOWNED && plan.n == 1) {
		const json_t *md =
		    json_object_get(plan.items[0].body, "metadata");
		const json_t *ref =
		    json_array_get(json_object_get(md, "ownerReferences"), 0);

		cr_expect_eq(
		    json_array_size(json_object_get(md, "ownerReferences")), 1,
		    "%s: one owner", r->name);
		cr_expect_str_eq(json_string_value(json_object_get(ref, "uid")),
		    "job-uid-1", "%s: owner uid", r->name);
		cr_expect_str_eq(
		    json_string_value(json_object_get(ref, "kind")), "Job");
		cr_expect(json_is_true(json_object_get(ref, "controller")));
		cr_expect_str_eq(
		    json_string_value(json_object_get(
			json_object_get(md, "labels"), REC_LABEL_JOB_UID)),
		    "job-uid-1", "%s: job-uid label", r->name);
		cr_expect_str_eq(
		    json_string_value(json_object_get(md, "resourceVersion")),
		    "100", "%s: guarded", r->name);
	}
	/* The reclaimablePods write: succeeded pods beyond the remaining
	 * work (3 slots, 3 completions). */
	if (r->succeeded > 0 && plan.n == 1 &&
	    plan.items[0].op == REC_WRITE_STATUS) {
		char *b = json_dumps(
		    json_object_get(
			json_object_get(plan.items[0].body, "status"),
			"reclaimablePods"),
		    JSON_COMPACT | JSON_SORT_KEYS);
		char want[64];

		snprintf(want, sizeof(want),
		    "[{\"count\":%d,\"name\":\"main\"}]", r->succeeded);
		cr_expect_str_eq(b, want, "%s", r->name);
		cu_free(b);
	}
	/* Every write carries a body but a DELETE; patches of existing
	 * objects are guarded by their resourceVersion. */
	for (i = 0; i < plan.n; i++) {
		const struct rec_item *it = &plan.items[i];

		if (it->kind != REC_ITEM_WRITE)
			continue;
		cr_expect((it->body == NULL) == (it->op == REC_WRITE_DELETE),
		    "%s: item %zu body", r->name, i);
		if (it->op == REC_WRITE_PATCH || it->op == REC_WRITE_STATUS)
			cr_expect_not_null(
			    json_object_get(
				json_object_get(it->body, "metadata"),
				"resourceVersion"),
			    "%s: item %zu unguarded", r->name, i);
	}
	/* The gate comes first: nothing is even looked up for a job that
	 * is not ours. */
	if (r->gate == G_NO)
		cr_expect_eq(vs.flavor_calls, 0, "%s", r->name);
	rec_plan_free(&plan);
	cr_expect_eq(plan.n, 0);
	if (in.wl != NULL)
		api_workload_dispose(&wl);
	for (i = 0; i < in.n_owned; i++)
		api_workload_dispose(&ow[i]);
	api_job_dispose(&job);
	api_jobset_dispose(&js);
	json_decref(jd);
	json_decref(wd);
	cu_free(wlname);
}

Test(job_reconcile, table)
{
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		run_row(&rows[i]);
}

/* ---- details the table does not show ------------------------------------- */

/* Dropping the finalizer keeps the other finalizers in order, guarded by
 * the Workload's resourceVersion. */
Test(job_reconcile, gone_finalizer_patch_body)
{
	struct rec_job_view v = {0};
	struct rec_job_in in = {0};
	struct rec_plan plan;
	struct api_workload wl;
	const struct api_workload *owned[1] = {&wl};
	cu_error err;
	char *s;

	rec_plan_init(&plan);
	v.admitted_flavors = flavors_cb;
	v.local_queue_exists = lq_cb;
	in.kind = REC_JOB_BATCH;
	in.ns = "team-a";
	in.name = "sample";
	in.owned = owned;
	in.n_owned = 1;
	owned_wl(&wl, "wl-a", true, false);
	cr_assert_eq(rec_job_reconcile(&v, &in, NOW, &plan, &err), CU_OK);
	cr_assert_eq(plan.n, 2);
	s = json_dumps(plan.items[0].body, JSON_SORT_KEYS | JSON_COMPACT);
	cr_expect_str_eq(s, "{\"metadata\":{\"finalizers\":[\"other/keep\"],"
			    "\"resourceVersion\":\"5\"}}");
	cu_free(s);
	cr_expect_null(plan.items[1].body);
	rec_plan_free(&plan);
	api_workload_dispose(&wl);
}

/* The FailedToStart write: Finished=True, reason FailedToStart, the start
 * error as message (Kueue's workloadfinish.Finish on a permanent podset
 * error). */
Test(job_reconcile, failed_to_start_body)
{
	static const struct row r = {.name = "fts",
	    .job = J_SUSPENDED,
	    .wl = W_ADMITTED,
	    .podset_label = true};
	struct view_state vs = {&r, 0};
	struct rec_job_view v = {0};
	struct rec_job_in in = {0};
	struct rec_plan plan;
	struct api_job job;
	struct api_workload wl;
	struct rec_job j = {0};
	json_t *jd = job_doc(&r), *wd, *c;
	cu_error err;
	size_t i;

	rec_plan_init(&plan);
	cr_assert_eq(api_job_decode(&job, jd, &err), CU_OK, "%s", err.msg);
	j.kind = REC_JOB_BATCH;
	j.job = &job;
	wd = wl_doc(&r, &j);
	cr_assert_eq(api_workload_decode(&wl, wd, &err), CU_OK, "%s", err.msg);
	v.managed = true;
	v.queue_name = "main";
	v.admitted_flavors = flavors_cb;
	v.local_queue_exists = lq_cb;
	v.payload = &vs;
	in.job = &j;
	in.kind = REC_JOB_BATCH;
	in.ns = "team-a";
	in.name = "sample";
	in.wl_name = wl.meta.name;
	in.wl = &wl;
	cr_assert_eq(rec_job_reconcile(&v, &in, NOW, &plan, &err), CU_OK);
	cr_assert_eq(plan.n, 2);
	c = NULL;
	json_array_foreach(
	    json_object_get(
		json_object_get(plan.items[1].body, "status"), "conditions"),
	    i, c)
	{
		if (strcmp(json_string_value(json_object_get(c, "type")),
			"Finished") == 0)
			break;
		c = NULL;
	}
	cr_assert_not_null(c, "no Finished condition");
	cr_expect_str_eq(
	    json_string_value(json_object_get(c, "status")), "True");
	cr_expect_str_eq(json_string_value(json_object_get(c, "reason")),
	    REC_FINISHED_FAILED_TO_START);
	cr_expect(strstr(json_string_value(json_object_get(c, "message")),
		      "conflict for labels") != NULL,
	    "%s", json_string_value(json_object_get(c, "message")));
	rec_plan_free(&plan);
	api_workload_dispose(&wl);
	api_job_dispose(&job);
	json_decref(jd);
	json_decref(wd);
}

Test(job_reconcile, missing_input)
{
	struct rec_job_view v = {0};
	struct rec_job_in in = {0};
	struct rec_plan plan;
	cu_error err;

	rec_plan_init(&plan);
	cr_expect_eq(rec_job_reconcile(&v, &in, NOW, &plan, &err), CU_EINVAL);
	cr_expect_eq(rec_job_reconcile(NULL, &in, NOW, &plan, &err), CU_EINVAL);
	cr_expect_eq(plan.n, 0);
}
