/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconcile/orphan.c - Kueue's FinishOrphanedWorkloads: the Workloads of
 * a job that is gone are marked Finished (reason OwnerNotFound) instead
 * of being deleted, then lose cueue's finalizer; they stay until
 * objectRetentionPolicies (or a garbage collector) deletes them. One
 * being deleted only loses its finalizer. Pure: time is passed in.
 */
#include <string.h>

#include "reconcile/rec_int.h"
#include "reconcile/reconcile.h"

static int push_write(struct rec_plan *p, enum rec_write_op op, const char *ns,
    const char *name, json_t *body, cu_error *err)
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
	it->ns = cu_strdup(ns);
	it->name = cu_strdup(name);
	if (it->ns == NULL || it->name == NULL)
		return rec__nomem(err, "orphaned workload");
	return CU_OK;
}

int rec_job_gone_finish(const struct rec_job_in *in, int64_t now_ns,
    struct rec_plan *p, cu_error *err)
{
	size_t i;

	for (i = 0; i < in->n_owned; i++) {
		const struct api_workload *wl = in->owned[i];
		bool finished = api_conditions_true(
		    &wl->status.conditions, REC_COND_FINISHED);
		json_t *patch = NULL;
		int rc;

		/* One being deleted is not finished (Kueue's canFinish),
		 * only let go; a finished one loses its finalizer next. */
		if (!finished && !wl->meta.has_deletion) {
			rc = rec_wl_status_finish(wl,
			    REC_FINISHED_OWNER_NOT_FOUND,
			    REC_MSG_OWNER_NOT_FOUND, now_ns, &patch, err);
			if (rc == CU_OK && patch != NULL)
				rc = push_write(p, REC_WRITE_STATUS, in->ns,
				    wl->meta.name, patch, err);
		} else {
			rc = rec__wl_drop_finalizer_patch(wl, &patch, err);
			if (rc == CU_OK && patch != NULL)
				rc = push_write(p, REC_WRITE_PATCH, in->ns,
				    wl->meta.name, patch, err);
		}
		if (rc != CU_OK)
			return rc;
	}
	return CU_OK;
}
