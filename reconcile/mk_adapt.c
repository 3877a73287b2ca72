/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconcile/mk_adapt.c - the MultiKueue adapters, one table row per
 * framework with one in Kueue (beside the framework descriptors of
 * reconcile/framework.c): which field names the job's managedBy in the
 * Rejected message, which status fields are copied back from the worker
 * (every Kueue adapter copies the whole status), what is dropped from
 * the copy created on the worker besides managedBy (a batch/v1 Job's
 * selector and controller labels, a TrainJob's runtime patch of Kueue),
 * and how the status shows running pods, cleared on the manager once
 * the worker that ran them is gone. The copies and patches built from a
 * row are in reconcile/mk.c; the controller (controller/mk.c) watches
 * the kinds of the rows on each worker. Pure, no I/O.
 */
#include <string.h>

#include "reconcile/rec_int.h"
#include "reconcile/reconcile.h"

static const char *const job_null[] = {"active", NULL};
static const char *const ready_only[] = {"ready", NULL};
static const char *const active_ready[] = {"active", "ready", NULL};
static const char *const active_only[] = {"active", NULL};

/* Kueue's runtime patch manager of a TrainJob (reconcile/fw_trainjob.c). */
#define TJ_KUEUE_PATCH "kueue.x-k8s.io/manager"

/* A Kubeflow training-operator v1 kind or MPIJob: running pods in
 * status.replicaStatuses.<type>.active. */
#define KF_ROW(name, field)                                                    \
	{                                                                      \
		name, field, NULL, false, NULL, REC_MK_COUNTS_MAP,             \
		    "replicaStatuses", NULL, active_only, NULL, NULL, NULL     \
	}
/* A Ray kind: managedBy at spec.managedBy. */
#define RAY_ROW(name, state, stopped)                                          \
	{                                                                      \
		name, "spec.managedBy", NULL, false, NULL, REC_MK_COUNTS_NONE, \
		    NULL, NULL, NULL, state, stopped, NULL                     \
	}

static const struct rec_mk_adapter table[] = {
    {"batch/job", "spec.managedBy", NULL, true, NULL, REC_MK_COUNTS_TOP, NULL,
	job_null, ready_only, NULL, NULL, NULL},
    {"jobset.x-k8s.io/jobset", "spec.managedBy", NULL, false, NULL,
	REC_MK_COUNTS_ARRAY, "replicatedJobsStatus", NULL, active_ready, NULL,
	NULL, NULL},
    /* Kueue's Kubeflow adapter names spec.managedBy in its message; its
     * MPIJob adapter the real path. */
    KF_ROW("kubeflow.org/pytorchjob", "spec.managedBy"),
    KF_ROW("kubeflow.org/tfjob", "spec.managedBy"),
    KF_ROW("kubeflow.org/xgboostjob", "spec.managedBy"),
    KF_ROW("kubeflow.org/paddlejob", "spec.managedBy"),
    KF_ROW("kubeflow.org/jaxjob", "spec.managedBy"),
    KF_ROW("kubeflow.org/mpijob", "spec.runPolicy.managedBy"),
    /* A RayJob runs while its jobDeploymentStatus is not Suspended
     * (reconcile/fw_ray.c); a RayCluster while its state is ready. */
    RAY_ROW("ray.io/rayjob", "jobDeploymentStatus", "Suspended"),
    RAY_ROW("ray.io/raycluster", "state", "suspended"),
    RAY_ROW("ray.io/rayservice", "serviceStatus", NULL),
    /* An AppWrapper runs while its QuotaReserved condition is True. */
    {"workload.codeflare.dev/appwrapper", "spec.managedBy", NULL, false, NULL,
	REC_MK_COUNTS_NONE, NULL, NULL, NULL, NULL, NULL, "QuotaReserved"},
    {"trainer.kubeflow.org/trainjob", "spec.managedBy", NULL, false,
	TJ_KUEUE_PATCH, REC_MK_COUNTS_ARRAY, "jobsStatus", NULL, active_ready,
	NULL, NULL, NULL},
};

#define N_TABLE (sizeof(table) / sizeof(table[0]))

const struct rec_mk_adapter *rec_mk_adapter_at(size_t i)
{
	return i < N_TABLE ? &table[i] : NULL;
}

const struct rec_mk_adapter *rec_mk_adapter_of(const struct rec_fw *fw)
{
	size_t i;

	for (i = 0; fw != NULL && i < N_TABLE; i++)
		if (strcmp(table[i].fw, fw->name) == 0)
			return &table[i];
	return NULL;
}
