/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconcile/wlrec.c - the Workload reconciler as a pure function: the
 * Workload as cached and the engine's record of it in, the engine actions
 * that bring the engine in line with the API out (rec_workload_reconcile).
 * No I/O, no clock, no controller state. Contract in
 * reconcile/reconcile.h.
 */
#include <string.h>

#include "reconcile/reconcile.h"

static int engine(struct rec_plan *p, enum rec_engine_op op, const char *uid,
    bool eligible, cu_error *err)
{
	struct rec_item *it;

	if (rec_plan_push(p, &it, err) != CU_OK)
		return err->code;
	it->kind = REC_ITEM_ENGINE;
	it->engine = op;
	it->eligible = eligible;
	if (uid != NULL && (it->uid = cu_strdup(uid)) == NULL)
		return cu_error_set(
		    err, CU_ENOMEM, "workload reconciler: out of memory");
	return CU_OK;
}

int rec_workload_reconcile(const struct rec_wl_view *view,
    const struct api_workload *wl, struct rec_plan *out, cu_error *err)
{
	const char *uid;
	bool api_holds, que_holds, e;
	int64_t gen;

	if (view == NULL || out == NULL || view->eligible == NULL ||
	    (wl != NULL && wl->meta.uid == NULL))
		return cu_error_set(
		    err, CU_EINVAL, "workload reconciler: missing input");
	if (wl == NULL)
		return view->engine_uid == NULL
			   ? CU_OK
			   : engine(out, REC_ENGINE_FORGET, view->engine_uid,
				 false, err);
	uid = wl->meta.uid;
	/* Same name, new object: the old one is gone. */
	if (view->engine_uid != NULL && strcmp(view->engine_uid, uid) != 0 &&
	    engine(out, REC_ENGINE_FORGET, view->engine_uid, false, err) !=
		CU_OK)
		return err->code;
	if (view->in_flight)
		return CU_OK; /* the write's answer settles it */
	if (rec_workload_inactive(wl) || wl->meta.has_deletion)
		return view->queued
			   ? engine(out, REC_ENGINE_FORGET, uid, false, err)
			   : CU_OK;
	if (!view->queued)
		return engine(out, REC_ENGINE_ADD, NULL, false, err);
	api_holds = rec_workload_holds_quota(wl);
	que_holds =
	    view->where == QUE_WL_ADMITTED || view->where == QUE_WL_EVICTING;
	gen = wl->meta.has_generation ? wl->meta.generation : 0;
	/* Someone admitted it (a restart race, another replica): adopt what
	 * the API says. */
	if (api_holds && !que_holds)
		return engine(out, REC_ENGINE_READD, NULL, false, err);
	/* The reservation was cleared (eviction done, or the Workload was
	 * requeued): give the quota back. */
	if (!api_holds && que_holds)
		return engine(out, REC_ENGINE_RELEASE, uid, false, err);
	if (que_holds)
		return CU_OK;
	/* The spec changed while pending: queue it anew. */
	if (view->queued_generation != gen)
		return engine(out, REC_ENGINE_READD, NULL, false, err);
	e = view->eligible(
	    wl->meta.namespace_, wl->spec.queue_name, view->payload);
	if (e != view->namespace_eligible)
		return engine(out, REC_ENGINE_SET_ELIGIBLE, NULL, e, err);
	return CU_OK;
}
