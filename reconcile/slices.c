/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconcile/slices.c - the workload slices of an elastic job (Kueue's
 * ElasticJobsViaWorkloadSlices, scale-up): which of the job's Workloads
 * its reconciler looks at (oldest unfinished first), the slice a
 * Workload replaces, the Finished status of a replaced slice, and the
 * job reconciler's step for them (rec__slices_step): an admitted job
 * scaled up gets a new slice that replaces the old one; while the new
 * slice waits the job keeps running on the old one; once the new slice
 * holds quota (the admission engine counted the old one's usage as
 * freed) the old one is finished with reason WorkloadSliceReplaced.
 * Contract in reconcile/reconcile.h and reconcile/rec_int.h.
 */
#include <stdlib.h>
#include <string.h>

#include "reconcile/rec_int.h"

#define MSG_SLICE_OUT_OF_SYNC                                                  \
	"The workload slice is out of sync with its parent job"

const char *rec_slice_replaces(const struct api_workload *wl)
{
	const char *v = api_strmap_get(
	    &wl->meta.annotations, REC_WORKLOAD_SLICE_REPLACEMENT_FOR);
	const char *slash = v != NULL ? strchr(v, '/') : NULL;
	const char *ns = wl->meta.namespace_ ? wl->meta.namespace_ : "";

	if (slash == NULL || slash[1] == '\0' ||
	    (size_t)(slash - v) != strlen(ns) ||
	    strncmp(v, ns, (size_t)(slash - v)) != 0)
		return NULL;
	return slash + 1;
}

static bool finished(const struct api_workload *wl)
{
	return api_conditions_true(&wl->status.conditions, REC_COND_FINISHED);
}

static bool has_finalizer(const struct api_workload *wl)
{
	size_t i;

	for (i = 0; i < wl->meta.finalizers.n; i++)
		if (strcmp(wl->meta.finalizers.items[i],
			REC_FINALIZER_RESOURCE_IN_USE) == 0)
			return true;
	return false;
}

/* a before b: older, or the slice b replaces (equal creation times). */
static bool before(const struct api_workload *a, const struct api_workload *b)
{
	const char *r;

	if (a->meta.creation_ns != b->meta.creation_ns)
		return a->meta.creation_ns < b->meta.creation_ns;
	r = rec_slice_replaces(b);
	if (r != NULL && a->meta.name != NULL && strcmp(r, a->meta.name) == 0)
		return true;
	r = rec_slice_replaces(a);
	if (r != NULL && b->meta.name != NULL && strcmp(r, b->meta.name) == 0)
		return false;
	return a->meta.name != NULL && b->meta.name != NULL &&
	       strcmp(a->meta.name, b->meta.name) < 0;
}

void rec_slices_pick(
    const struct api_workload *const *wls, size_t n, struct rec_slices *out)
{
	const struct api_workload *last = NULL, *prev = NULL;
	size_t i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < n; i++)
		if (finished(wls[i]) && has_finalizer(wls[i])) {
			out->wl = wls[i];
			return;
		}
	for (i = 0; i < n; i++) {
		const struct api_workload *w = wls[i];

		if (finished(w))
			continue;
		if (last == NULL || before(last, w)) {
			prev = last;
			last = w;
		} else if (prev == NULL || before(prev, w)) {
			prev = w;
		}
	}
	out->wl = last;
	out->old = prev;
}

int rec_slice_replaced_patch(const struct api_workload *old,
    const struct api_workload *by, int64_t now_ns, json_t **patch,
    cu_error *err)
{
	const char *job_uid =
	    api_strmap_get(&by->meta.labels, REC_LABEL_JOB_UID);
	char *msg;
	int rc;

	*patch = NULL;
	if (finished(old))
		return CU_OK;
	msg = cu_asprintf("Replaced to accommodate a workload (UID: %s, "
			  "JobUID: %s) due to workload slice aggregation",
	    by->meta.uid ? by->meta.uid : "", job_uid ? job_uid : "");
	if (msg == NULL)
		return rec__nomem(err, "workload slice");
	rc = rec_wl_status_finish(
	    old, REC_FINISHED_SLICE_REPLACED, msg, now_ns, patch, err);
	cu_free(msg);
	return rc;
}

/* A write to the Workload name of the job's namespace that the job's
 * reconciler waits on; body [owned]. *out: the item (may be NULL). */
static int slice_write(struct rec_plan *p, const struct rec_job_in *in,
    enum rec_write_op op, const char *name, json_t *body, struct rec_item **out,
    cu_error *err)
{
	struct rec_item *it;

	if (rec_plan_push(p, &it, err) != CU_OK) {
		json_decref(body);
		return err->code;
	}
	it->kind = REC_ITEM_WRITE;
	it->target = REC_TARGET_WORKLOAD;
	it->op = op;
	it->body = body;
	it->expect = REC_EXPECT_RV;
	it->for_job = true;
	it->ns = cu_strdup(in->ns);
	it->name = cu_strdup(name);
	if (it->ns == NULL || it->name == NULL)
		return rec__nomem(err, "workload slice");
	if (out != NULL)
		*out = it;
	return CU_OK;
}

/* Two unfinished slices: wl replaces in->old_slice. */
static int two_slices(const struct rec_job_in *in,
    const struct api_workload *wl, int64_t now_ns, struct rec_plan *p,
    cu_error *err)
{
	const struct api_workload *old = in->old_slice;
	json_t *patch = NULL;
	cu_error serr;

	/* The new slice holds quota: the old one is retired (the engine
	 * counted its usage as freed when it admitted the new one). */
	if (rec_workload_holds_quota(wl)) {
		if (rec_slice_replaced_patch(old, wl, now_ns, &patch, err) !=
		    CU_OK)
			return err->code;
		return patch == NULL ? CU_OK
				     : slice_write(p, in, REC_WRITE_STATUS,
					   old->meta.name, patch, NULL, err);
	}
	/* The old slice lost its quota: it is out of sync, the new one
	 * queues the job as any Workload does. */
	if (!rec_workload_holds_quota(old) ||
	    api_conditions_find(&old->status.conditions, REC_COND_EVICTED)) {
		if (rec_wl_status_finish(old, REC_FINISHED_OUT_OF_SYNC,
			MSG_SLICE_OUT_OF_SYNC, now_ns, &patch,
			&serr) != CU_OK ||
		    patch == NULL)
			return CU_OK;
		return slice_write(
		    p, in, REC_WRITE_STATUS, old->meta.name, patch, NULL, err);
	}
	/* Waiting: the job runs on the old slice; the new one follows the
	 * job's counts. */
	if (rec_elastic_counts_patch(in->job, wl, false, &patch, &serr) !=
		CU_OK ||
	    patch == NULL)
		return CU_OK;
	return slice_write(
	    p, in, REC_WRITE_PATCH, wl->meta.name, patch, NULL, err);
}

/* One slice, admitted, and the job asks for more: a new slice that
 * replaces it. *done false: not a scale-up (the usual steps go on). */
static int scale_up(const struct rec_job_view *view,
    const struct rec_job_in *in, const struct api_workload *wl,
    struct rec_plan *p, bool *done, cu_error *err)
{
	enum rec_elastic_change ch;
	struct rec_item *it;
	json_t *w = NULL;
	cu_error serr;

	if (!rec_workload_holds_quota(wl) ||
	    api_conditions_true(&wl->status.conditions, REC_COND_EVICTED) ||
	    rec_elastic_change_of(in->job, wl, &ch, &serr) != CU_OK ||
	    (ch != REC_ELASTIC_UP && ch != REC_ELASTIC_MIXED) ||
	    wl->meta.name == NULL || strcmp(in->slice_name, wl->meta.name) == 0)
		return CU_OK;
	*done = true;
	if (rec__job_build_workload(view, in, p, &w, err) != CU_OK || w == NULL)
		return err->code;
	if (rec_elastic_slice_annotations(wl, in->slice_name, w, err) !=
	    CU_OK) {
		json_decref(w);
		return err->code;
	}
	if (slice_write(p, in, REC_WRITE_CREATE, in->slice_name, w, &it, err) !=
	    CU_OK)
		return err->code;
	it->done_reason = "CreatedWorkload";
	it->text =
	    cu_asprintf("Created Workload: %s/%s", in->ns, in->slice_name);
	return it->text == NULL ? rec__nomem(err, "workload slice") : CU_OK;
}

int rec__slices_step(const struct rec_job_view *view,
    const struct rec_job_in *in, const struct api_workload *wl, int64_t now_ns,
    struct rec_plan *p, bool *done, cu_error *err)
{
	*done = false;
	if (in->slice_name == NULL || wl == NULL || view->no_elastic_jobs ||
	    wl->meta.has_deletion || finished(wl) ||
	    rec_job_finished(in->job, NULL, NULL))
		return CU_OK;
	if (in->old_slice != NULL) {
		*done = true;
		return two_slices(in, wl, now_ns, p, err);
	}
	return scale_up(view, in, wl, p, done, err);
}
