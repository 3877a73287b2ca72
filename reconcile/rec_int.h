/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconcile/rec_int.h - internals shared by the reconcile/ files
 * (jobs.c, workload.c, prebuilt.c): the strict merge patch every
 * actuation and status write is built as, the one-line out-of-memory
 * error, a Workload's owner reference and label-value check. Implemented in
 * reconcile/patch.c. Never included from another folder. Prefix: rec__.
 */
#ifndef CU_RECONCILE_REC_INT_H
#define CU_RECONCILE_REC_INT_H

#include <jansson.h>

#include "api/json.h"
#include "reconcile/reconcile.h"

/* CU_ENOMEM with the message "<what>: out of memory". what [borrowed]. */
int rec__nomem(cu_error *err, const char *what);

/*
 * The merge patch from -> to [both borrowed] in the strict form
 * reconcile.h describes: *patch [owned: json_decref] is NULL when the two
 * are equal, else the diff with metadata.resourceVersion copied from
 * `from` when it has one (optimistic concurrency). CU_ENOMEM.
 */
CU_MUST_CHECK int rec__strict_patch(
    const json_t *from, const json_t *to, json_t **patch, cu_error *err);

/*
 * Admission checks (reconcile/acheck.c), on a Workload status object
 * [borrowed]: true when every entry of status.admissionChecks is Ready
 * (none: true).
 */
bool rec__checks_all_ready(const json_t *status);

/*
 * status.admissionChecks synced with cq's admissionChecksStrategy and the
 * flavors of status.admission, as rec_wl_status_admit_checks describes;
 * now [borrowed] is the RFC 3339 time of new entries. 0 or -1 (out of
 * memory).
 */
int rec__checks_sync(
    json_t *status, const struct api_cluster_queue_spec *cq, const char *now);

/* The pods pod set `podset` [borrowed] of wl requests or holds: at
 * most `admitted` (its admission's count, or the spec's count) and at
 * most `full` (the spec's count) less its status.reclaimablePods count,
 * never below 0 (Kueue's podSetsCountsAfterReclaim). */
int32_t rec__count_after_reclaim(const struct api_workload *wl,
    const char *podset, int32_t admitted, int32_t full);

/* The spec's count of wl's pod set name [borrowed] (CRD default 1);
 * -1 when wl has no such pod set. */
int32_t rec__spec_count(const struct api_workload *wl, const char *name);

/* content.IsLabelValue: at most 63 bytes, [A-Za-z0-9] at both ends and
 * [-_.A-Za-z0-9] inside; "" is valid. s [borrowed]. */
bool rec__is_label_value(const char *s);

/* The controller owner reference a Workload of job j [borrowed] carries
 * (controller and blockOwnerDeletion true) [owned: json_decref]; NULL
 * when out of memory. */
json_t *rec__owner_ref(const struct rec_job *j);

/* Plan the Warning event ErrWorkloadCompose about the reconciled job
 * with why's message when why says the job itself is invalid (CU_EINVAL,
 * CU_EPARSE, CU_ERANGE); nothing for other failures
 * (reconcile/badreq.c). CU_ENOMEM. why [borrowed]. */
CU_MUST_CHECK int rec__plan_compose_error(
    struct rec_plan *p, const cu_error *why, cu_error *err);

/* ---- framework descriptors (reconcile/framework.c) ------------------ */

/* How many pod sets the job document doc [borrowed] has for fw. */
size_t rec__fw_n_podsets(const struct rec_fw *fw, const json_t *doc);

/* The pod template of pod set `name` in doc [borrowed, editable through
 * the result], or NULL: Job spec.template; JobSet the replicatedJob whose
 * lower-cased name is name; replica map the present replica type whose
 * lower-cased key is name. */
json_t *rec__fw_template(
    const struct rec_fw *fw, const json_t *doc, const char *name);

/* doc's suspend field (fw->suspend) set to `suspend` [doc edited].
 * CU_ENOMEM. */
int rec__fw_set_suspend(
    const struct rec_fw *fw, json_t *doc, bool suspend, cu_error *err);

/* A job read as JSON (REC_JOB_DOC) through its descriptor: the suspend
 * field is true; managedBy [borrowed] or NULL; a success or failure
 * condition is True (*success, *message [borrowed] as rec_job_finished);
 * some replica status counts active pods; the ready condition is True;
 * its pod sets (*out initialised here; CU_EINVAL naming the field,
 * CU_ENOMEM). */
bool rec__doc_suspended(const struct rec_fw *fw, const json_t *doc);
/* The status condition of doc [borrowed] of type `type` whose status is
 * True [borrowed from doc], or NULL. */
const json_t *rec__doc_true_condition(const json_t *doc, const char *type);
const char *rec__doc_managed_by(const struct rec_fw *fw, const json_t *doc);
bool rec__doc_finished(const struct rec_fw *fw, const json_t *doc,
    bool *success, const char **message);
bool rec__doc_active(const struct rec_fw *fw, const json_t *doc);
bool rec__doc_pods_ready(const struct rec_fw *fw, const json_t *doc);
CU_MUST_CHECK int rec__doc_podsets(const struct rec_fw *fw, const json_t *doc,
    struct api_podsets *out, cu_error *err);

/* The readers of a REC_FW_SHAPE_OPS descriptor, one set per shape
 * (reconcile/fw_ray.c, ...), with the contracts of the rec__fw_* and
 * rec__doc_* functions above that call them. template_optional: pod set
 * `name` may have no template in the object (Kueue then merges into a
 * template it throws away, as for a RayJob's default submitter), so
 * start skips it instead of failing; NULL means never. set_info and
 * clear_info (NULL: the templates are edited): a kind that keeps the
 * admission beside its templates (AppWrapper's podSetInfos) gets pod set
 * `name`'s info as a template-shaped object tpl [borrowed] (metadata
 * labels and annotations, spec nodeSelector, tolerations and
 * schedulingGates) written into doc [edited], and on stop every such
 * info removed instead of the templates being restored. restore_info
 * (NULL: the templates are restored): a kind whose pod templates are
 * built from other fields (SparkApplication) gets pod set `name`'s
 * saved template (the Workload's) to put back into doc [edited] on
 * stop. CU_EINVAL, CU_ENOMEM. */
struct rec_fw_ops {
	size_t (*n_podsets)(const struct rec_fw *fw, const json_t *doc);
	json_t *(*template_of)(
	    const struct rec_fw *fw, const json_t *doc, const char *name);
	bool (*template_optional)(
	    const struct rec_fw *fw, const json_t *doc, const char *name);
	int (*podsets)(const struct rec_fw *fw, const json_t *doc,
	    struct api_podsets *out, cu_error *err);
	bool (*finished)(const struct rec_fw *fw, const json_t *doc,
	    bool *success, const char **message);
	bool (*active)(const struct rec_fw *fw, const json_t *doc);
	bool (*pods_ready)(const struct rec_fw *fw, const json_t *doc);
	int (*set_info)(const struct rec_fw *fw, json_t *doc, const char *name,
	    const json_t *tpl, cu_error *err);
	int (*clear_info)(const struct rec_fw *fw, json_t *doc, cu_error *err);
	int (*restore_info)(const struct rec_fw *fw, json_t *doc,
	    const char *name, const json_t *saved, cu_error *err);
};

/* Pod set `name` of j's kind may lack a template in the object
 * (rec_fw_ops.template_optional). doc [borrowed]. */
bool rec__fw_template_optional(
    const struct rec_fw *fw, const json_t *doc, const char *name);

/* Ray (ray.io/v1 RayJob, RayCluster, RayService; reconcile/fw_ray.c). */
extern const struct rec_fw_ops rec__fw_ray_ops;
/* AppWrapper (workload.codeflare.dev/v1beta2; reconcile/fw_appwrapper.c). */
extern const struct rec_fw_ops rec__fw_appwrapper_ops;
/* StatefulSet and LeaderWorkerSet (reconcile/fw_serving.c). */
extern const struct rec_fw_ops rec__fw_serving_ops;

/* SparkApplication (sparkoperator.k8s.io/v1beta2; reconcile/fw_spark.c). */
extern const struct rec_fw_ops rec__fw_spark_ops;
/* TrainJob (trainer.kubeflow.org/v1alpha1; reconcile/fw_trainjob.c). */
extern const struct rec_fw_ops rec__fw_trainjob_ops;
/* The Workload the job in->job should have now (reconcile/jobrec.c):
 * *w [owned] NULL when it cannot be built (a WARN was planned into p). */
CU_MUST_CHECK int rec__job_build_workload(const struct rec_job_view *view,
    const struct rec_job_in *in, struct rec_plan *p, json_t **w, cu_error *err);
/* Step 6b of rec_job_reconcile (reconcile/slices.c), an elastic job's
 * workload slices (in->slice_name set), wl [borrowed] the job's newest
 * slice: with in->old_slice, the old slice is finished as replaced once
 * wl holds quota (STATUS, WorkloadSliceReplaced), or as OutOfSync when
 * it lost its own quota, else the pending wl follows the job's counts
 * (PATCH); with one admitted slice the job scaled up gets a new slice
 * in->slice_name replacing it (CREATE + "CreatedWorkload"). *done: the
 * plan is complete (the job keeps running meanwhile). */
CU_MUST_CHECK int rec__slices_step(const struct rec_job_view *view,
    const struct rec_job_in *in, const struct api_workload *wl, int64_t now_ns,
    struct rec_plan *p, bool *done, cu_error *err);
/* Merge patch dropping cueue's finalizer from wl [borrowed], other
 * finalizers kept in order, guarded by its resourceVersion; *out NULL
 * when it has none (reconcile/jobrec.c). CU_ENOMEM. */
CU_MUST_CHECK int rec__wl_drop_finalizer_patch(
    const struct api_workload *wl, json_t **out, cu_error *err);

/* ---- the pod shape (reconcile/fw_pod.c) ------------------------------ */

/* A Pod document doc [borrowed]: it carries the admission scheduling
 * gate; the gate added or removed [doc edited; CU_ENOMEM]; its phase is
 * terminal (*success, *message [borrowed or static]); it got past its
 * gate and is not terminal; stopping it means deleting it (active and not
 * already being deleted); its one pod set `main` of count 1, the pod's
 * labels, annotations and spec without the gate (*out initialised here;
 * api_podsets_dispose it). */
bool rec__pod_gated(const json_t *doc);
CU_MUST_CHECK int rec__pod_set_gate(json_t *doc, bool gated, cu_error *err);
bool rec__pod_finished(const json_t *doc, bool *success, const char **message);
bool rec__pod_active(const json_t *doc);
bool rec__pod_stop_deletes(const json_t *doc);
CU_MUST_CHECK int rec__pod_podsets(
    const json_t *doc, struct api_podsets *out, cu_error *err);
/* The Pod pod [borrowed] is being deleted; it has REC_POD_FINALIZER;
 * a PATCH of the Pod pod of namespace ns removing it, guarded by its
 * resourceVersion, appended to p (nothing when it has not it). */
bool rec__pod_deleting(const json_t *pod);
bool rec__pod_has_finalizer(const json_t *pod);
CU_MUST_CHECK int rec__pod_unfinalize(
    const json_t *pod, const char *ns, struct rec_plan *p, cu_error *err);

#endif /* CU_RECONCILE_REC_INT_H */
