/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconcile/wlrec.c - the Workload reconciler as a pure function: the
 * Workload as cached and the engine's record of it in, the engine actions
 * that bring the engine in line with the API out (rec_workload_reconcile),
 * and the Workload's own evictions and deactivations (spec.active=false,
 * a stopPolicy HoldAndDrain, maximumExecutionTimeSeconds) as status and
 * spec writes. No I/O, no clock read (the time is in the view), no
 * controller state. Contract in reconcile/reconcile.h.
 */
#include <stdint.h>
#include <string.h>

#include "reconcile/rec_int.h"

/* An engine item with a time (WAKE, BACKOFF). */
static int engine_at(struct rec_plan *p, enum rec_engine_op op, const char *uid,
    int64_t at_ns, cu_error *err)
{
	struct rec_item *it;

	if (rec_plan_push(p, &it, err) != CU_OK)
		return err->code;
	it->kind = REC_ITEM_ENGINE;
	it->engine = op;
	it->at_ns = at_ns;
	if (uid != NULL && (it->uid = cu_strdup(uid)) == NULL)
		return cu_error_set(
		    err, CU_ENOMEM, "workload reconciler: out of memory");
	return CU_OK;
}

/* The underlying causes as static strings (metrics label values). */
static const char *static_cause(const char *cause)
{
	static const char *const known[] = {REC_MAX_EXEC_EXCEEDED,
	    REC_REQUEUING_LIMIT_EXCEEDED, REC_PODS_READY_WAIT_FOR_START,
	    REC_PODS_READY_WAIT_FOR_RECOVERY};
	size_t i;

	for (i = 0; cause != NULL && i < sizeof(known) / sizeof(*known); i++)
		if (strcmp(cause, known[i]) == 0)
			return known[i];
	return NULL;
}

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

static int wl_write(struct rec_plan *p, const struct api_workload *wl,
    enum rec_write_op op, json_t *body, bool eviction, cu_error *err)
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
	it->eviction = eviction;
	if ((it->ns = cu_strdup(wl->meta.namespace_)) == NULL ||
	    (it->name = cu_strdup(wl->meta.name)) == NULL)
		return cu_error_set(
		    err, CU_ENOMEM, "workload reconciler: out of memory");
	return CU_OK;
}

/* Requeued=False by a deactivation: Deactivated, or DeactivatedDueTo<cause>
 * (Kueue's IsEvictedByDeactivation matches the prefix). */
static bool requeued_false_deactivated(const struct api_workload *wl)
{
	const struct api_condition *c =
	    api_conditions_find(&wl->status.conditions, REC_COND_REQUEUED);

	return c != NULL && c->status == API_COND_FALSE && c->reason != NULL &&
	       strncmp(c->reason, REC_EVICTED_DEACTIVATED,
		   strlen(REC_EVICTED_DEACTIVATED)) == 0;
}

static bool cond_false_for(
    const struct api_workload *wl, const char *type, const char *reason)
{
	const struct api_condition *c =
	    api_conditions_find(&wl->status.conditions, type);

	return c != NULL && c->status == API_COND_FALSE && c->reason != NULL &&
	       strcmp(c->reason, reason) == 0;
}

/* Evict a Workload that holds quota in the engine and the API. */
static int evict(const struct rec_wl_view *view, const struct api_workload *wl,
    const struct rec_eviction *ev, struct rec_plan *out, cu_error *err)
{
	struct rec_item *it;
	json_t *patch = NULL;

	if (view->where == QUE_WL_ADMITTED &&
	    engine(out, REC_ENGINE_EVICTING, wl->meta.uid, false, err) != CU_OK)
		return err->code;
	if (rec_wl_status_evict(wl, ev, view->now_ns, &patch, err) != CU_OK)
		return err->code;
	if (patch == NULL)
		return CU_OK;
	if (wl_write(out, wl, REC_WRITE_STATUS, patch, true, err) != CU_OK)
		return err->code;
	/* Kueue's event: Evicted + "DueTo" + reason (+ "DueTo" + cause). */
	it = &out->items[out->n - 1];
	it->reason = ev->reason;
	it->cause = static_cause(ev->underlying_cause);
	if (strcmp(ev->reason, REC_EVICTED_PODS_READY_TIMEOUT) == 0)
		it->done_reason = "EvictedDueToPodsReadyTimeout";
	else if (strcmp(ev->reason, REC_EVICTED_LOCAL_QUEUE_STOPPED) == 0)
		it->done_reason = "EvictedDueToLocalQueueStopped";
	else if (strcmp(ev->reason, REC_EVICTED_CLUSTER_QUEUE_STOPPED) == 0)
		it->done_reason = "EvictedDueToClusterQueueStopped";
	else if (ev->underlying_cause != NULL &&
		 strcmp(ev->underlying_cause, REC_MAX_EXEC_EXCEEDED) == 0)
		it->done_reason =
		    "EvictedDueToDeactivatedDueTo" REC_MAX_EXEC_EXCEEDED;
	else if (ev->underlying_cause != NULL &&
		 strcmp(ev->underlying_cause, REC_REQUEUING_LIMIT_EXCEEDED) ==
		     0)
		it->done_reason =
		    "EvictedDueToDeactivatedDueTo" REC_REQUEUING_LIMIT_EXCEEDED;
	else
		it->done_reason = "EvictedDueToDeactivated";
	if ((it->text = cu_strdup(ev->message)) == NULL)
		return cu_error_set(
		    err, CU_ENOMEM, "workload reconciler: out of memory");
	return CU_OK;
}

/* The eviction of an inactive Workload: reason Deactivated, message "The
 * workload is deactivated[ due to <DeactivationTarget message>]", the
 * target's reason as underlying cause. *msg [owned: cu_free] holds the
 * message when it was built. */
static int deactivation(const struct api_workload *wl, struct rec_eviction *ev,
    char **msg, cu_error *err)
{
	const struct api_condition *dt = api_conditions_find(
	    &wl->status.conditions, REC_COND_DEACTIVATION_TARGET);

	*msg = NULL;
	ev->reason = REC_EVICTED_DEACTIVATED;
	ev->message = REC_MSG_DEACTIVATED;
	if (dt != NULL && dt->status == API_COND_TRUE) {
		*msg = cu_asprintf("%s due to %s", REC_MSG_DEACTIVATED,
		    dt->message ? dt->message : "");
		if (*msg == NULL)
			return cu_error_set(err, CU_ENOMEM,
			    "workload reconciler: out of memory");
		ev->message = *msg;
		ev->underlying_cause = dt->reason;
	}
	return CU_OK;
}

/*
 * A Workload deactivated while it holds no quota is marked Evicted
 * (Deactivated) all the same, as Kueue's Workload controller evicts every
 * inactive Workload that is not Evicted yet: the status write only (no
 * engine state to keep, and neither the event nor the metric, which
 * Kueue reports only for a Workload that had an admission).
 */
static int evict_pending(const struct rec_wl_view *view,
    const struct api_workload *wl, struct rec_plan *out, cu_error *err)
{
	struct rec_eviction ev = {0};
	json_t *patch = NULL;
	char *msg;
	int rc;

	if (view->read_only ||
	    api_conditions_true(&wl->status.conditions, REC_COND_EVICTED))
		return CU_OK;
	rc = deactivation(wl, &ev, &msg, err);
	if (rc == CU_OK)
		rc = rec_wl_status_evict(wl, &ev, view->now_ns, &patch, err);
	cu_free(msg);
	if (rc != CU_OK || patch == NULL)
		return rc;
	return wl_write(out, wl, REC_WRITE_STATUS, patch, false, err);
}

/* Deactivation, LocalQueue or ClusterQueue HoldAndDrain. */
static int drain(const struct rec_wl_view *view, const struct api_workload *wl,
    bool inactive, struct rec_plan *out, bool *done, cu_error *err)
{
	struct rec_eviction ev = {0};
	char *msg = NULL;
	int rc;

	*done = true;
	if (inactive) {
		if (deactivation(wl, &ev, &msg, err) != CU_OK)
			return err->code;
	} else if (view->lq_stop == QUE_STOP_HOLD_AND_DRAIN) {
		ev.reason = REC_EVICTED_LOCAL_QUEUE_STOPPED;
		ev.message = REC_MSG_LOCAL_QUEUE_STOPPED;
	} else if (view->cq_stop == QUE_STOP_HOLD_AND_DRAIN) {
		ev.reason = REC_EVICTED_CLUSTER_QUEUE_STOPPED;
		ev.message = REC_MSG_CLUSTER_QUEUE_STOPPED;
	} else {
		*done = false;
		return CU_OK;
	}
	rc = evict(view, wl, &ev, out, err);
	cu_free(msg);
	return rc;
}

/* spec.maximumExecutionTimeSeconds of an Admitted Workload
 * (reconcileMaxExecutionTime). */
static int max_exec(const struct rec_wl_view *view,
    const struct api_workload *wl, struct rec_plan *out, cu_error *err)
{
	const struct api_condition *ad =
	    api_conditions_find(&wl->status.conditions, REC_COND_ADMITTED);
	struct rec_item *it;
	json_t *patch = NULL;
	int64_t left;
	char *text;

	if (ad == NULL || ad->status != API_COND_TRUE ||
	    !wl->spec.has_maximum_execution_time_seconds ||
	    !ad->has_last_transition)
		return CU_OK;
	left = ((int64_t)wl->spec.maximum_execution_time_seconds -
		   (wl->status.has_accumulated_past_execution_time_seconds
			   ? wl->status.accumulated_past_execution_time_seconds
			   : 0)) *
		   1000000000LL -
	       (view->now_ns - ad->last_transition_ns);
	if (left > 0) {
		if (rec_plan_push(out, &it, err) != CU_OK)
			return err->code;
		it->kind = REC_ITEM_ENGINE;
		it->engine = REC_ENGINE_WAKE;
		it->at_ns = view->now_ns + left;
		return CU_OK;
	}
	if (rec_wl_status_deactivation_target(wl, REC_MAX_EXEC_EXCEEDED,
		REC_MSG_MAX_EXEC_EXCEEDED, view->now_ns, &patch, err) != CU_OK)
		return err->code;
	if (patch == NULL)
		return CU_OK;
	if (wl_write(out, wl, REC_WRITE_STATUS, patch, false, err) != CU_OK)
		return err->code;
	text = cu_asprintf("The maximum execution time (%ds) exceeded",
	    (int)wl->spec.maximum_execution_time_seconds);
	if (text == NULL || rec_plan_push(out, &it, err) != CU_OK) {
		cu_free(text);
		return cu_error_set(
		    err, CU_ENOMEM, "workload reconciler: out of memory");
	}
	it->kind = REC_ITEM_EVENT;
	it->type = REC_EVENT_WARNING;
	it->reason = REC_MAX_EXEC_EXCEEDED;
	it->text = text;
	return CU_OK;
}

static bool pods_ready_on(const struct rec_wl_view *view)
{
	return view->pods_ready != NULL && view->pods_ready->enable;
}

/* Is msg one of Kueue's own PodsReady messages (no cause of ours)? */
static bool generic_pods_msg(const char *msg)
{
	return msg == NULL || *msg == '\0' ||
	       strcmp(msg, REC_MSG_PODS_NOT_READY) == 0 ||
	       strcmp(msg, REC_MSG_PODS_WAIT_RECOVERY) == 0 ||
	       strcmp(msg, REC_MSG_PODS_READY) == 0;
}

/* waitForPodsReady: an ADMITTED Workload whose pods are not ready in
 * time is evicted (PodsReadyTimeout) or, past backoffLimitCount, marked
 * for deactivation (reconcileNotReadyTimeout). *done: a write was
 * planned. */
static int pods_timeout(const struct rec_wl_view *view,
    const struct api_workload *wl, struct rec_plan *out, bool *done,
    cu_error *err)
{
	const struct rec_pods_ready_cfg *cfg = view->pods_ready;
	const struct api_condition *pr;
	struct rec_eviction ev = {0};
	const char *cause;
	int64_t left;
	int32_t count;
	json_t *patch = NULL;
	char *msg;
	int rc;

	*done = false;
	if (!pods_ready_on(view) || view->where != QUE_WL_ADMITTED ||
	    api_conditions_true(&wl->status.conditions, REC_COND_EVICTED))
		return CU_OK;
	rec_pods_ready_timeout(cfg, wl, view->now_ns, &cause, &left);
	if (cause == NULL)
		return CU_OK;
	if (left > 0)
		return engine_at(
		    out, REC_ENGINE_WAKE, NULL, view->now_ns + left, err);
	count =
	    wl->status.has_requeue_state && wl->status.requeue_state.has_count
		? wl->status.requeue_state.count
		: 0;
	*done = true;
	if (cfg->has_backoff_limit &&
	    (int64_t)count + 1 > cfg->backoff_limit_count) {
		if (rec_wl_status_deactivation_target(wl,
			REC_REQUEUING_LIMIT_EXCEEDED,
			REC_MSG_REQUEUING_LIMIT_EXCEEDED, view->now_ns, &patch,
			err) != CU_OK)
			return err->code;
		return patch == NULL ? CU_OK
				     : wl_write(out, wl, REC_WRITE_STATUS,
					   patch, false, err);
	}
	pr = api_conditions_find(&wl->status.conditions, REC_COND_PODS_READY);
	msg = pr != NULL && !generic_pods_msg(pr->message)
		  ? cu_asprintf("Exceeded the PodsReady timeout %s/%s: %s",
			wl->meta.namespace_, wl->meta.name, pr->message)
		  : cu_asprintf("Exceeded the PodsReady timeout %s/%s",
			wl->meta.namespace_, wl->meta.name);
	if (msg == NULL)
		return cu_error_set(
		    err, CU_ENOMEM, "workload reconciler: out of memory");
	ev.reason = REC_EVICTED_PODS_READY_TIMEOUT;
	ev.message = msg;
	ev.underlying_cause = cause;
	ev.set_requeue = true;
	ev.requeue_count = count < INT32_MAX ? count + 1 : INT32_MAX;
	ev.requeue_at_ns =
	    view->now_ns + rec_requeue_backoff_ns(cfg->backoff_base_s,
			       cfg->backoff_max_s, ev.requeue_count);
	rc = evict(view, wl, &ev, out, err);
	cu_free(msg);
	return rc;
}

/* Until when the engine must keep the pending Workload out of scheduling
 * (Kueue's backoffWaitingTimeExpired): 0 = not at all. */
static int64_t hold_until(
    const struct rec_wl_view *view, const struct api_workload *wl)
{
	int64_t at = wl->status.has_requeue_state &&
			     wl->status.requeue_state.has_requeue_at
			 ? wl->status.requeue_state.requeue_at_ns
			 : 0;

	if (at <= view->now_ns)
		at = 0;
	if (cond_false_for(
		wl, REC_COND_REQUEUED, REC_EVICTED_PODS_READY_TIMEOUT) &&
	    at == 0)
		return INT64_MAX; /* until BackoffFinished is written */
	/* A Workload owned by a single Pod evicted with
	 * SkipReassignmentForPodOwnedWorkloads: it ends with its Pod */
	if (cond_false_for(wl, REC_COND_REQUEUED, REC_EVICTED_PREEMPTED) ||
	    cond_false_for(wl, REC_COND_REQUEUED, REC_EVICTED_NODE_FAILURES))
		return INT64_MAX;
	return at;
}

/* Keep the engine's BACKOFF in line with hold_until; `known`: the view's
 * where/backoff_until describe the engine's record (false right after an
 * ADD or a RELEASE in the same plan: it is pending then). */
static int backoff(const struct rec_wl_view *view,
    const struct api_workload *wl, bool known, struct rec_plan *out,
    cu_error *err)
{
	int64_t until = hold_until(view, wl);
	bool in = known && view->where == QUE_WL_BACKOFF;

	if (until != 0 && (!in || view->backoff_until != until))
		return engine_at(
		    out, REC_ENGINE_BACKOFF, wl->meta.uid, until, err);
	if (until == 0 && in && view->backoff_until > view->now_ns)
		return engine_at(out, REC_ENGINE_BACKOFF, wl->meta.uid, 0, err);
	return CU_OK;
}

/* Requeued=False by a deactivation or a queue stop whose cause is gone. */
static int requeue(const struct rec_wl_view *view,
    const struct api_workload *wl, struct rec_plan *out, cu_error *err)
{
	const char *reason = NULL, *msg = NULL;
	json_t *patch = NULL;

	if (requeued_false_deactivated(wl)) {
		reason = REC_REQUEUED_REACTIVATED;
		msg = "The workload was reactivated";
	} else if (cond_false_for(wl, REC_COND_REQUEUED,
		       REC_EVICTED_LOCAL_QUEUE_STOPPED) &&
		   view->lq_stop == QUE_STOP_NONE) {
		reason = REC_REQUEUED_LQ_RESTARTED;
		msg = "The LocalQueue was restarted after being stopped";
	} else if (cond_false_for(wl, REC_COND_REQUEUED,
		       REC_EVICTED_CLUSTER_QUEUE_STOPPED) &&
		   view->cq_stop == QUE_STOP_NONE) {
		reason = REC_REQUEUED_CQ_RESTARTED;
		msg = "The ClusterQueue was restarted after being stopped";
	}
	if (reason == NULL && (cond_false_for(wl, REC_COND_REQUEUED,
				   REC_EVICTED_PODS_READY_TIMEOUT) ||
				  cond_false_for(wl, REC_COND_REQUEUED,
				      REC_EVICTED_ADMISSION_CHECK))) {
		int64_t at = wl->status.has_requeue_state &&
				     wl->status.requeue_state.has_requeue_at
				 ? wl->status.requeue_state.requeue_at_ns
				 : 0;

		if (at > view->now_ns)
			return engine_at(out, REC_ENGINE_WAKE, NULL, at, err);
		if (rec_wl_status_backoff_finished(
			wl, view->now_ns, &patch, err) != CU_OK)
			return err->code;
		return patch == NULL ? CU_OK
				     : wl_write(out, wl, REC_WRITE_STATUS,
					   patch, false, err);
	}
	if (reason == NULL)
		return CU_OK;
	if (rec_wl_status_requeued(
		wl, reason, msg, view->now_ns, &patch, err) != CU_OK)
		return err->code;
	return patch == NULL
		   ? CU_OK
		   : wl_write(out, wl, REC_WRITE_STATUS, patch, false, err);
}

/* The checks synced with the ClusterQueue, Admitted once all are Ready:
 * an admission write, decided by the one producer of those
 * (rec_admission_write) and marked for the controller's one writer. */
static int admission(const struct rec_wl_view *view,
    const struct api_workload *wl, struct rec_plan *out, bool *done,
    cu_error *err)
{
	struct rec_admit_in in = {.source = REC_ADMIT_FROM_CHECKS};
	struct rec_admit_plan plan;
	struct rec_item *it;

	in.ledger = view->ledger;
	in.w.wl = wl;
	in.cq = view->cq_checks;
	if (rec_admission_write(&in, view->now_ns, &plan, err) != CU_OK) {
		rec_admit_plan_dispose(&plan);
		return err->code;
	}
	if (plan.step != REC_ADMIT_ANNOUNCE) {
		rec_admit_plan_dispose(&plan);
		return CU_OK;
	}
	*done = true;
	if (wl_write(out, wl, REC_WRITE_STATUS, plan.patch, false, err) !=
	    CU_OK) {
		plan.patch = NULL; /* consumed */
		rec_admit_plan_dispose(&plan);
		return err->code;
	}
	plan.patch = NULL;
	it = &out->items[out->n - 1];
	it->admission = plan.write;
	if (plan.write == REC_ADMIT_WRITE_CHECKS_ADMIT) {
		/* Kueue's Admitted event, once the write lands. */
		it->done_reason = "Admitted";
		it->text = plan.note;
		plan.note = NULL;
	}
	rec_admit_plan_dispose(&plan);
	return CU_OK;
}

/* Admission checks of a Workload holding quota: Rejected deactivates,
 * Retry evicts (reason AdmissionCheck), else the list and Admitted are
 * synced with the ClusterQueue (Admitted=True once all are Ready). */
static int checks(const struct rec_wl_view *view, const struct api_workload *wl,
    struct rec_plan *out, bool *done, cu_error *err)
{
	struct rec_eviction ev = {0};
	struct rec_item *it;
	json_t *patch = NULL;
	char *msg = NULL, *text;
	int rc = CU_OK;

	*done = false;
	if (view->cq_checks == NULL && wl->status.n_admission_checks == 0)
		return CU_OK;
	switch (rec_acheck_verdict(wl, &msg)) {
	case REC_ACHECK_NOMEM:
		return cu_error_set(
		    err, CU_ENOMEM, "workload reconciler: out of memory");
	case REC_ACHECK_RETRY:
		*done = true;
		/* Kueue's NeedsRequeueAtUpdate runs first: the checks' retry
		 * time becomes requeueState.requeueAt, then the eviction
		 * (which resets the checks) requeues after it. */
		if (rec_wl_status_check_requeue_at(
			wl, view->now_ns, &patch, err) != CU_OK) {
			cu_free(msg);
			return err->code;
		}
		if (patch != NULL) {
			cu_free(msg);
			return wl_write(
			    out, wl, REC_WRITE_STATUS, patch, false, err);
		}
		ev.reason = REC_EVICTED_ADMISSION_CHECK;
		ev.message = msg;
		rc = evict(view, wl, &ev, out, err);
		if (rc == CU_OK && out->n > 0 &&
		    out->items[out->n - 1].reason == ev.reason)
			out->items[out->n - 1].done_reason =
			    "EvictedDueToAdmissionCheck";
		cu_free(msg);
		return rc;
	case REC_ACHECK_REJECTED:
		*done = true;
		if (rec_wl_status_deactivation_target(wl,
			REC_EVICTED_ADMISSION_CHECK, msg, view->now_ns, &patch,
			err) != CU_OK ||
		    patch == NULL) {
			cu_free(msg);
			return patch == NULL ? CU_OK : err->code;
		}
		rc = wl_write(out, wl, REC_WRITE_STATUS, patch, false, err);
		text = rc == CU_OK ? cu_asprintf("Deactivated due to %s", msg)
				   : NULL;
		cu_free(msg);
		if (rc != CU_OK)
			return rc;
		if (text == NULL || rec_plan_push(out, &it, err) != CU_OK) {
			cu_free(text);
			return cu_error_set(err, CU_ENOMEM,
			    "workload reconciler: out of memory");
		}
		it->kind = REC_ITEM_EVENT;
		it->type = REC_EVENT_WARNING;
		it->reason = "AdmissionCheckRejected";
		it->text = text;
		return CU_OK;
	default:
		break;
	}
	if (api_conditions_true(&wl->status.conditions, REC_COND_EVICTED))
		return CU_OK;
	/* Re-admitted before its Requeued=False (AdmissionCheck) was
	 * answered: Kueue sets BackoffFinished whatever the reservation. */
	if (cond_false_for(
		wl, REC_COND_REQUEUED, REC_EVICTED_ADMISSION_CHECK) &&
	    !(wl->status.has_requeue_state &&
		wl->status.requeue_state.has_requeue_at &&
		wl->status.requeue_state.requeue_at_ns > view->now_ns)) {
		if (rec_wl_status_backoff_finished(
			wl, view->now_ns, &patch, err) != CU_OK)
			return err->code;
		if (patch != NULL) {
			*done = true;
			return wl_write(
			    out, wl, REC_WRITE_STATUS, patch, false, err);
		}
	}
	return admission(view, wl, out, done, err);
}

/* The pods pod set i of qw should hold: its admission's count less the
 * pods status.reclaimablePods gives back (counted from the spec's count,
 * capped at what the engine queued it with). */
static int32_t count_for(
    const struct que_wl *qw, uint32_t i, const struct api_workload *wl)
{
	const struct que_podset *ps = &qw->podsets[i];
	int32_t full = rec__spec_count(wl, ps->name), admitted, n;
	size_t k;

	if (full < 0)
		full = ps->full_count;
	admitted = full;
	for (k = 0; k < wl->status.admission.n_pod_set_assignments; k++) {
		const struct api_podset_assignment *a =
		    &wl->status.admission.pod_set_assignments[k];

		if (strcmp(a->name, ps->name) == 0 && a->has_count &&
		    a->count >= 0 && a->count <= full)
			admitted = a->count;
	}
	n = rec__count_after_reclaim(wl, ps->name, admitted, full);
	return n < ps->full_count ? n : ps->full_count;
}

/* A pending Workload's requests follow status.reclaimablePods: does the
 * engine queue it with other counts than it would now? */
static bool pending_counts_changed(
    const struct que_wl *qw, const struct api_workload *wl)
{
	uint32_t i;

	for (i = 0; qw != NULL && i < qw->n_podsets; i++) {
		int32_t full = rec__spec_count(wl, qw->podsets[i].name);

		if (full >= 0 &&
		    rec__count_after_reclaim(wl, qw->podsets[i].name, full,
			full) != qw->podsets[i].full_count)
			return true;
	}
	return false;
}

/* status.reclaimablePods: the engine holds, per pod set, what the
 * admission gave less the pods the job no longer needs. */
static int reclaim_counts(const struct rec_wl_view *view,
    const struct api_workload *wl, struct rec_plan *out, cu_error *err)
{
	const struct que_wl *qw = view->engine_wl;
	struct rec_item *it;
	int32_t *counts;
	bool differ = false;
	uint32_t i;

	for (i = 0; qw != NULL && i < qw->n_podsets && !differ; i++)
		differ = count_for(qw, i, wl) != qw->podsets[i].count;
	if (!differ)
		return CU_OK;
	counts = cu_calloc(qw->n_podsets, sizeof(*counts));
	if (counts == NULL)
		return cu_error_set(
		    err, CU_ENOMEM, "workload reconciler: out of memory");
	for (i = 0; i < qw->n_podsets; i++)
		counts[i] = count_for(qw, i, wl);
	if (rec_plan_push(out, &it, err) != CU_OK) {
		cu_free(counts);
		return err->code;
	}
	it->kind = REC_ITEM_ENGINE;
	it->engine = REC_ENGINE_SET_COUNTS;
	it->counts = counts;
	it->n_counts = qw->n_podsets;
	if ((it->uid = cu_strdup(wl->meta.uid)) == NULL)
		return cu_error_set(
		    err, CU_ENOMEM, "workload reconciler: out of memory");
	return CU_OK;
}

/* A Workload holding quota, past its eviction and deactivation steps:
 * the engine follows its priority and reclaimable pods, then its
 * admission checks, the PodsReady timeout and maximumExecutionTime. */
static int holding(const struct rec_wl_view *view,
    const struct api_workload *wl, struct rec_plan *out, cu_error *err)
{
	int32_t prio = wl->spec.has_priority ? wl->spec.priority : 0;
	bool done;

	if (view->engine_wl != NULL && view->engine_wl->priority != prio) {
		if (engine(out, REC_ENGINE_SET_PRIORITY, wl->meta.uid, false,
			err) != CU_OK)
			return err->code;
		out->items[out->n - 1].priority = prio;
	}
	if (reclaim_counts(view, wl, out, err) != CU_OK)
		return err->code;
	if (checks(view, wl, out, &done, err) != CU_OK)
		return err->code;
	if (done)
		return CU_OK;
	if (pods_timeout(view, wl, out, &done, err) != CU_OK)
		return err->code;
	return done ? CU_OK : max_exec(view, wl, out, err);
}

int rec_workload_reconcile(const struct rec_wl_view *view,
    const struct api_workload *wl, struct rec_plan *out, cu_error *err)
{
	const char *uid;
	bool api_holds, que_holds, e, inactive, done;
	int64_t gen;
	json_t *patch = NULL;

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
	if (api_conditions_true(&wl->status.conditions, REC_COND_FINISHED) ||
	    wl->meta.has_deletion)
		return view->queued
			   ? engine(out, REC_ENGINE_FORGET, uid, false, err)
			   : CU_OK;
	/* On hold (a StatefulSet scaled to zero): not queued, its quota
	 * given back, until its owner clears the hold. */
	if (rec_workload_on_hold(wl) && !rec_workload_holds_quota(wl))
		return view->queued
			   ? engine(out, REC_ENGINE_FORGET, uid, false, err)
			   : CU_OK;
	inactive = rec_workload_inactive(wl);
	api_holds = rec_workload_holds_quota(wl);
	/* Held by its admission gates (reconcile/gates.c). */
	if (!inactive) {
		if (rec_gate_workload(view, wl, out, &done, err) != CU_OK)
			return err->code;
		if (done)
			return CU_OK;
	}
	if (!view->queued) {
		if (inactive && !api_holds)
			return evict_pending(view, wl, out, err);
		if (engine(out, REC_ENGINE_ADD, NULL, false, err) != CU_OK)
			return err->code;
		return api_holds ? CU_OK : backoff(view, wl, false, out, err);
	}
	que_holds =
	    view->where == QUE_WL_ADMITTED || view->where == QUE_WL_EVICTING;
	gen = wl->meta.has_generation ? wl->meta.generation : 0;
	/* Someone admitted it (a restart race, another replica): adopt what
	 * the API says. */
	if (api_holds && !que_holds)
		return engine(out, REC_ENGINE_READD, NULL, false, err);
	/* The reservation was cleared (eviction done, or the Workload was
	 * requeued): give the quota back; an inactive one leaves. */
	if (!api_holds && que_holds) {
		if (inactive)
			return engine(out, REC_ENGINE_FORGET, uid, false, err);
		if (engine(out, REC_ENGINE_RELEASE, uid, false, err) != CU_OK)
			return err->code;
		/* Kueue's queue order: by creation, but for a few evictions
		 * (reconcile/order.c). */
		out->items[out->n - 1].at_ns =
		    rec_queue_order_ns(view->pods_ready, wl, view->now_ns);
		return backoff(view, wl, false, out, err);
	}
	/* Never admitted while inactive: out of the pending heap. */
	if (inactive && !que_holds)
		return engine(out, REC_ENGINE_FORGET, uid, false, err) != CU_OK
			   ? err->code
			   : evict_pending(view, wl, out, err);
	if (view->read_only && que_holds)
		return CU_OK;
	if (que_holds) {
		/* Quota is given back only once the eviction is complete. */
		if (drain(view, wl, inactive, out, &done, err) != CU_OK)
			return err->code;
		if (done)
			return CU_OK;
	}
	if (!view->read_only && api_conditions_true(&wl->status.conditions,
				    REC_COND_DEACTIVATION_TARGET)) {
		if (rec_wl_deactivate_patch(wl, &patch, err) != CU_OK)
			return err->code;
		return patch == NULL ? CU_OK
				     : wl_write(out, wl, REC_WRITE_PATCH, patch,
					   false, err);
	}
	if (que_holds)
		return holding(view, wl, out, err);
	/* The spec changed while pending, or status.reclaimablePods: queue
	 * it anew. */
	if (view->queued_generation != gen ||
	    pending_counts_changed(view->engine_wl, wl))
		return engine(out, REC_ENGINE_READD, NULL, false, err) != CU_OK
			   ? err->code
			   : backoff(view, wl, false, out, err);
	e = view->eligible(
	    wl->meta.namespace_, wl->spec.queue_name, view->payload);
	if (e != view->namespace_eligible &&
	    engine(out, REC_ENGINE_SET_ELIGIBLE, NULL, e, err) != CU_OK)
		return err->code;
	if (backoff(view, wl, true, out, err) != CU_OK)
		return err->code;
	return view->read_only ? CU_OK : requeue(view, wl, out, err);
}
