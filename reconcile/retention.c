/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconcile/retention.c - Kueue's objectRetentionPolicies.workloads: when
 * a finished Workload is deleted (afterFinished: Finished=True's
 * lastTransitionTime + the duration; the Workload alone, its job stays),
 * and when the job of a Workload Kueue deactivated is deleted
 * (afterDeactivatedByKueue: spec.active false and Evicted=True with a
 * reason DeactivatedDueTo<cause>, from that condition's
 * lastTransitionTime; a user's own deactivation, reason Deactivated, is
 * never matched). Pure: time is passed in.
 */
#include <string.h>

#include "reconcile/reconcile.h"

#define DEACTIVATED_BY_KUEUE "DeactivatedDueTo"

/* since + after, saturated. */
static int64_t due_at(int64_t since, int64_t after)
{
	int64_t at;

	return __builtin_add_overflow(since, after, &at) ? INT64_MAX : at;
}

enum rec_retention_action rec_retention_decide(const struct rec_retention *cfg,
    const struct api_workload *wl, int64_t now_ns, int64_t *due_ns)
{
	const struct api_condition *c;
	int64_t at;

	*due_ns = INT64_MAX;
	if (wl->meta.has_deletion)
		return REC_RETAIN_KEEP;
	c = api_conditions_find(&wl->status.conditions, REC_COND_FINISHED);
	if (c != NULL && c->status == API_COND_TRUE) {
		if (!cfg->has_after_finished)
			return REC_RETAIN_KEEP;
		at = due_at(c->has_last_transition ? c->last_transition_ns
						   : wl->meta.creation_ns,
		    cfg->after_finished_ns);
		*due_ns = at;
		return now_ns >= at ? REC_RETAIN_DELETE_WORKLOAD
				    : REC_RETAIN_WAIT;
	}
	if (!cfg->has_after_deactivated || !wl->spec.has_active ||
	    wl->spec.active)
		return REC_RETAIN_KEEP;
	c = api_conditions_find(&wl->status.conditions, REC_COND_EVICTED);
	if (c == NULL || c->status != API_COND_TRUE || c->reason == NULL ||
	    strncmp(c->reason, DEACTIVATED_BY_KUEUE,
		strlen(DEACTIVATED_BY_KUEUE)) != 0 ||
	    api_meta_controller(&wl->meta) == NULL)
		return REC_RETAIN_KEEP;
	at = due_at(c->has_last_transition ? c->last_transition_ns
					   : wl->meta.creation_ns,
	    cfg->after_deactivated_ns);
	*due_ns = at;
	return now_ns >= at ? REC_RETAIN_DELETE_JOB : REC_RETAIN_WAIT;
}
