/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/plans.c - carrying out a pure reconciler's plan
 * (reconcile/plan.h): its writes into the pipeline (with their
 * expectations and the events sent on success), its events, log lines
 * and engine actions, in the plan's order. Every reconciler of
 * controller/reconcilers.c ends here.
 */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "api/json.h"
#include "controller/ctl_int.h"

/* ---- carrying out a reconciler's plan -------------------------------- */

/* The pipeline's kind of a plan's write: said by the plan, never
 * inferred from the body. */
static enum ctl_pipe_kind plan_write_kind(const struct rec_item *it)
{
	if (it->target == REC_TARGET_JOB && it->op == REC_WRITE_DELETE)
		return CTL_PIPE_WL_DELETE; /* a Pod stopped (the verb) */
	if (it->target == REC_TARGET_JOB) {
		switch (it->job) {
		case REC_JOB_START:
			return CTL_PIPE_JOB_START;
		case REC_JOB_RESET_START:
			return CTL_PIPE_JOB_RESET_START;
		case REC_JOB_RESTORE:
			return CTL_PIPE_JOB_RESTORE;
		default:
			return CTL_PIPE_JOB_SUSPEND;
		}
	}
	switch (it->op) {
	case REC_WRITE_CREATE:
		return CTL_PIPE_WL_CREATE;
	case REC_WRITE_STATUS:
		return CTL_PIPE_WL_STATUS;
	case REC_WRITE_DELETE:
		return CTL_PIPE_WL_DELETE;
	default:
		return CTL_PIPE_WL_PATCH;
	}
}

/* The eviction metrics of the Workload reconciler's eviction. */
static void evict_metric(
    ctl *c, const struct ctl_plan_ctx *x, const struct rec_item *it)
{
	const struct que_wl *qw = que_workload_get(c->st, x->wl->meta.uid);
	const char *cq = qw != NULL && qw->cq != NULL ? qw->cq->name : "";

	if (c->metrics == NULL || it->reason == NULL)
		return;
	ctl_wm_evicted(c, x->wl, cq, it->reason, it->cause);
	ctl_pr_evicted_metrics(c, x->wl, cq, it->reason, it->cause, x->now);
}

/* One write of a plan into the pipeline; it->body and it->text move
 * there. Job writes are expected under the job's key; Workload writes
 * under {CTL_KIND_WL, ns, name}, owned by the job when it->for_job. */
static void apply_write(
    ctl *c, const struct ctl_plan_ctx *x, struct rec_item *it)
{
	enum ctl_pipe_kind kind = plan_write_kind(it);
	json_t *body = it->body != NULL ? it->body : json_object();
	struct ctl_pipe_write *w;

	it->body = NULL;
	if (it->admission != REC_ADMIT_WRITE_NONE && x->wl != NULL) {
		/* The Workload reconciler's admission write (its checks
		 * synced, Admitted once Ready): the one admission writer. */
		struct rec_admit_plan p = {.step = REC_ADMIT_ANNOUNCE,
		    .write = it->admission,
		    .patch = body,
		    .note = it->text};
		struct ctl_admission a = {
		    .wl = x->wl, .ns = it->ns, .name = it->name};

		it->text = NULL;
		ctl_admission_write(c, &a, &p, x->now);
		rec_admit_plan_dispose(&p);
		return;
	}
	if (it->eviction && x->wl != NULL) {
		/* Decided by the Workload reconciler, recorded in the ledger
		 * (EVICTING) before: settle undoes it if it is not written. */
		w = ctl_pipe_queue(c->pipe, CTL_PIPE_EVICT, CTL_RES(INF_WL),
		    it->ns, it->name, x->wl->meta.uid, body);
		ctl_pipe_expect(c->pipe, w,
		    CTL_K3(CTL_KIND_WL, it->ns ? it->ns : "", it->name), true);
		evict_metric(c, x, it);
	} else if (it->target == REC_TARGET_JOB) {
		w = ctl_pipe_queue(c->pipe, kind, CTL_RES(x->inf), it->ns,
		    it->name, NULL, body);
		if (it->expect == REC_EXPECT_RV)
			ctl_pipe_expect(c->pipe, w, x->job_key, true);
	} else if (it->expect == REC_EXPECT_RV) {
		w = ctl_wl_write(c, kind, it->ns, it->name, body,
		    it->for_job ? x->job_key : NULL);
		if (it->reason != NULL && x->wl != NULL &&
		    strcmp(it->reason, REC_PODS_READY_STARTED) == 0)
			ctl_pr_ready_metrics(
			    c, x->wl, x->ready_ns ? x->ready_ns : x->now);
	} else {
		w = ctl_pipe_queue(c->pipe, kind, CTL_RES(INF_WL), it->ns,
		    it->name, NULL, body);
	}
	if (w != NULL && it->done_reason != NULL && it->text != NULL) {
		ctl_pipe_set_event(w, it->done_reason, it->text);
		it->text = NULL;
	}
}

/* One engine action of a Workload plan on x->wl (or it->uid). */
static void apply_engine(
    ctl *c, const struct ctl_plan_ctx *x, const struct rec_item *it)
{
	cu_error err;

	switch (it->engine) {
	case REC_ENGINE_FORGET:
		ctl_forget_workload(c, x->wl_key, it->uid);
		break;
	case REC_ENGINE_ADD:
	case REC_ENGINE_READD:
		if (it->engine == REC_ENGINE_ADD ||
		    que_workload_remove(c->st, x->wl->meta.uid, &err) == CU_OK)
			ctl_add_workload(c, x->wl_key, x->wl);
		/* Adopted with its quota (a restart): its deadlines (the
		 * PodsReady timeout, maximumExecutionTimeSeconds) and
		 * evictions are decided on its next reconcile, once the
		 * engine holds it. */
		if (rec_workload_holds_quota(x->wl))
			(void)ctl_keys_put(&c->dirty_wl, x->wl_key);
		break;
	case REC_ENGINE_RELEASE: {
		const struct que_wl *rq = que_workload_get(c->st, it->uid);
		int64_t at = it->at_ns != 0 ? it->at_ns : x->now;

		if (x->wl != NULL)
			ctl_wm_released(c, x->wl,
			    rq != NULL && rq->cq != NULL ? rq->cq->name : NULL,
			    x->now);
		if (que_workload_release(c->st, it->uid, at, &err) != CU_OK)
			cu_warn("engine: %s", err.msg);
		if (ctl_pipe_begin(c->pipe) == CU_OK &&
		    store_decision_delete(c->ledger, it->uid, &err) != CU_OK &&
		    err.code != CU_ENOTFOUND)
			cu_warn("ledger: %s", err.msg);
		c->dirty_cycle = true;
		break;
	}
	case REC_ENGINE_EVICTING: {
		struct que_wl *qw = que_workload_get(c->st, it->uid);

		if (qw != NULL && qw->where == QUE_WL_ADMITTED)
			que_mark_evicting(c->st, qw);
		ctl_ledger_evicting(c, it->uid, x->now);
		break;
	}
	case REC_ENGINE_WAKE:
		if (x->job_key != NULL)
			ctl_pr_wake_job(c, x->job_key, it->at_ns);
		else
			ctl_wake_workload(c, x->wl_key, it->at_ns);
		break;
	case REC_ENGINE_BACKOFF:
		if (que_workload_backoff(c->st, it->uid, it->at_ns, &err) !=
		    CU_OK)
			cu_warn("engine: %s", err.msg);
		c->dirty_cycle = true;
		break;
	case REC_ENGINE_SET_PRIORITY: {
		/* Preemption reads an admitted Workload's priority when it
		 * runs; no heap holds it in order. */
		struct que_wl *qw = que_workload_get(c->st, it->uid);

		if (qw != NULL && (qw->where == QUE_WL_ADMITTED ||
				      qw->where == QUE_WL_EVICTING))
			qw->priority = it->priority;
		c->dirty_cycle = true;
		break;
	}
	case REC_ENGINE_SET_COUNTS:
		if (que_workload_set_counts(c->st, it->uid, it->counts, &err) !=
		    CU_OK)
			cu_warn("engine: %s", err.msg);
		c->dirty_cycle = true;
		break;
	case REC_ENGINE_SET_ELIGIBLE:
		if (que_workload_set_namespace_eligible(
			c->st, x->wl->meta.uid, it->eligible, &err) != CU_OK)
			cu_warn("engine: %s", err.msg);
		c->dirty_cycle = true;
		break;
	}
}

/* The object an event item is about: the one it names in the job's
 * informer (NULL when not cached), else the reconciled job. */
static json_t *event_about(
    ctl *c, const struct ctl_plan_ctx *x, const struct rec_item *it)
{
	if (it->name == NULL)
		return x->job_obj;
	return c->inf[x->inf] != NULL
		   ? api_informer_get(c->inf[x->inf], it->ns, it->name)
		   : NULL;
}

/* Carry out plan [consumed: freed here] in order: writes into the write
 * queue (sent after the ledger commit), events, log lines, engine
 * actions. */
void ctl_apply_plan(ctl *c, const struct ctl_plan_ctx *x, struct rec_plan *plan)
{
	size_t i;

	for (i = 0; i < plan->n; i++) {
		struct rec_item *it = &plan->items[i];

		switch (it->kind) {
		case REC_ITEM_WRITE:
			apply_write(c, x, it);
			break;
		case REC_ITEM_EVENT:
			ctl_emit(c, event_about(c, x, it), it->type, it->reason,
			    it->text);
			break;
		case REC_ITEM_WARN:
			cu_warn("%s", it->text);
			break;
		case REC_ITEM_ENGINE:
			apply_engine(c, x, it);
			break;
		}
	}
	rec_plan_free(plan);
}
