/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconcile/order.c - where a Workload that gave its quota back queues
 * again: Kueue's GetQueueOrderTimestamp. Its creation time, except after
 * an eviction by a PodsReady timeout under requeuingStrategy timestamp
 * Eviction, or by an admission check: then the eviction's time.
 * (PrioritySortingWithinCohort, on by default, leaves out Kueue's
 * Preempted + 1 ms case.) Pure. Contract in reconcile/reconcile.h.
 */
#include <string.h>

#include "reconcile/rec_int.h"

/* Evicted=True with reason, or Requeued=False with it (the eviction's
 * trace once the quota is released): its condition, else NULL. */
static const struct api_condition *evicted_by(
    const struct api_workload *wl, const char *reason)
{
	const struct api_condition *e =
	    api_conditions_find(&wl->status.conditions, REC_COND_EVICTED);
	const struct api_condition *r =
	    api_conditions_find(&wl->status.conditions, REC_COND_REQUEUED);

	if (e != NULL && e->status == API_COND_TRUE && e->reason != NULL &&
	    strcmp(e->reason, reason) == 0)
		return e;
	if (r != NULL && r->status == API_COND_FALSE && r->reason != NULL &&
	    strcmp(r->reason, reason) == 0)
		return e != NULL && e->reason != NULL &&
			       strcmp(e->reason, reason) == 0
			   ? e
			   : r;
	return NULL;
}

int64_t rec_queue_order_ns(const struct rec_pods_ready_cfg *pods_ready,
    const struct api_workload *wl, int64_t now_ns)
{
	const struct api_condition *c = NULL;

	if (pods_ready != NULL && pods_ready->enable &&
	    !pods_ready->creation_timestamp)
		c = evicted_by(wl, REC_EVICTED_PODS_READY_TIMEOUT);
	if (c == NULL)
		c = evicted_by(wl, REC_EVICTED_ADMISSION_CHECK);
	if (c != NULL)
		return c->has_last_transition ? c->last_transition_ns : now_ns;
	return wl->meta.has_creation ? wl->meta.creation_ns : now_ns;
}
