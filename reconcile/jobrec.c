/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconcile/jobrec.c - the Job/JobSet reconciler as a pure function: the
 * job, its Workload and a view of the controller's caches in, a plan of
 * writes and events out (rec_job_reconcile). No I/O, no clock, no
 * controller state. Contract in reconcile/reconcile.h.
 */
#include <string.h>

#include "reconcile/rec_int.h"

#define MSG_NOT_ADMITTED "Not admitted by cluster queue"

/* Append a write; body [owned: taken even on failure]. */
static int add_write(struct rec_plan *p, enum rec_target target,
    enum rec_write_op op, const char *ns, const char *name, json_t *body,
    enum rec_expect expect, bool for_job, struct rec_item **out, cu_error *err)
{
	struct rec_item *it;

	if (rec_plan_push(p, &it, err) != CU_OK) {
		json_decref(body);
		return err->code;
	}
	it->kind = REC_ITEM_WRITE;
	it->target = target;
	it->op = op;
	it->body = body;
	it->expect = expect;
	it->for_job = for_job;
	it->ns = cu_strdup(ns);
	it->name = cu_strdup(name);
	if (it->ns == NULL || it->name == NULL)
		return rec__nomem(err, "job reconciler");
	if (out != NULL)
		*out = it;
	return CU_OK;
}

/* A write to the job's Workload that the job's reconciler waits on. */
static int wl_write(struct rec_plan *p, const struct rec_job_in *in,
    enum rec_write_op op, json_t *body, cu_error *err)
{
	return add_write(p, REC_TARGET_WORKLOAD, op, in->ns, in->wl_name, body,
	    REC_EXPECT_RV, true, NULL, err);
}

/* A write to the job: the start and the suspend and restore steps patch
 * the job, the start-time reset patches its status. */
static int job_write(struct rec_plan *p, const struct rec_job_in *in,
    enum rec_job_write what, json_t *body, struct rec_item **out, cu_error *err)
{
	struct rec_item *it;
	int rc = add_write(p, REC_TARGET_JOB,
	    what == REC_JOB_RESET_START ? REC_WRITE_STATUS : REC_WRITE_PATCH,
	    in->ns, in->name, body, REC_EXPECT_RV, false, &it, err);

	if (rc == CU_OK) {
		it->job = what;
		if (out != NULL)
			*out = it;
	}
	return rc;
}

/* The job write of a stop step. */
static enum rec_job_write stop_write(enum rec_stop_step step)
{
	return step == REC_STOP_RESET_START ? REC_JOB_RESET_START
	       : step == REC_STOP_RESTORE   ? REC_JOB_RESTORE
					    : REC_JOB_SUSPEND;
}

static int add_text(struct rec_plan *p, enum rec_item_kind kind,
    const char *reason, const char *text, cu_error *err)
{
	struct rec_item *it;

	if (rec_plan_push(p, &it, err) != CU_OK)
		return err->code;
	it->kind = kind;
	if (kind == REC_ITEM_EVENT) {
		it->type = REC_EVENT_NORMAL;
		it->reason = reason;
	}
	it->text = cu_strdup(text ? text : "");
	return it->text == NULL ? rec__nomem(err, "job reconciler") : CU_OK;
}

static int event(
    struct rec_plan *p, const char *reason, const char *message, cu_error *err)
{
	return add_text(p, REC_ITEM_EVENT, reason, message, err);
}

/*
 * Merge patch dropping cueue's finalizer from wl, other finalizers kept
 * in order, guarded by its resourceVersion. *out NULL when it has none
 * (or no resourceVersion to guard the patch with).
 */
static int drop_finalizer_patch(
    const struct api_workload *wl, json_t **out, cu_error *err)
{
	const struct api_strlist *fin = &wl->meta.finalizers;
	json_t *keep;
	bool found = false;
	size_t i;

	*out = NULL;
	keep = json_array();
	if (keep == NULL)
		return rec__nomem(err, "job reconciler");
	for (i = 0; i < fin->n; i++) {
		if (strcmp(fin->items[i], REC_FINALIZER_RESOURCE_IN_USE) == 0)
			found = true;
		else if (json_array_append_new(
			     keep, json_string(fin->items[i])) != 0) {
			json_decref(keep);
			return rec__nomem(err, "job reconciler");
		}
	}
	if (!found || wl->meta.resource_version == NULL) {
		json_decref(keep);
		return CU_OK;
	}
	*out = json_pack("{s:{s:o, s:s}}", "metadata", "finalizers", keep,
	    "resourceVersion", wl->meta.resource_version);
	return *out == NULL ? rec__nomem(err, "job reconciler") : CU_OK;
}

/* The Workload loses its finalizer (when it has it). */
static int drop_finalizer(struct rec_plan *p, const struct rec_job_in *in,
    const struct api_workload *wl, cu_error *err)
{
	json_t *fp;

	if (drop_finalizer_patch(wl, &fp, err) != CU_OK)
		return err->code;
	return fp == NULL ? CU_OK : wl_write(p, in, REC_WRITE_PATCH, fp, err);
}

/* 0. The job is gone: its Workloads go too (what Kueue leaves to the
 * garbage collector after dropping its finalizer; done here so that quota
 * is released on clusters and test servers alike). */
static int job_gone(
    const struct rec_job_in *in, struct rec_plan *p, cu_error *err)
{
	size_t i;

	for (i = 0; i < in->n_owned; i++) {
		const struct api_workload *wl = in->owned[i];
		json_t *fp;

		if (drop_finalizer_patch(wl, &fp, err) != CU_OK)
			return err->code;
		if (fp != NULL &&
		    add_write(p, REC_TARGET_WORKLOAD, REC_WRITE_PATCH, in->ns,
			wl->meta.name, fp, REC_EXPECT_NONE, false, NULL,
			err) != CU_OK)
			return err->code;
		if (!wl->meta.has_deletion &&
		    add_write(p, REC_TARGET_WORKLOAD, REC_WRITE_DELETE, in->ns,
			wl->meta.name, NULL, REC_EXPECT_NONE, false, NULL,
			err) != CU_OK)
			return err->code;
	}
	return CU_OK;
}

/* The job's next stop write, if any; `stopped_msg` is the "Stopped"
 * event's message for the suspend step. *wrote: a write was planned. A
 * stop patch that cannot be computed sets *failed (and nothing else). */
static int stop(const struct rec_job_in *in, const struct api_workload *wl,
    const char *stopped_msg, struct rec_plan *p, bool *wrote, bool *failed,
    cu_error *err)
{
	enum rec_stop_step step;
	json_t *patch = NULL;
	cu_error serr;

	*wrote = false;
	*failed = false;
	if (rec_job_stop_patch(in->job, wl, &step, &patch, &serr) != CU_OK) {
		*failed = true;
		return CU_OK;
	}
	if (patch == NULL)
		return CU_OK;
	*wrote = true;
	if (job_write(p, in, stop_write(step), patch, NULL, err) != CU_OK)
		return err->code;
	if (step == REC_STOP_SUSPEND)
		return event(p, "Stopped", stopped_msg, err);
	return CU_OK;
}

/* 6. No Workload yet: keep the job suspended, then create one. */
static int create_workload(const struct rec_job_view *view,
    const struct rec_job_in *in, struct rec_plan *p, cu_error *err)
{
	struct rec_wl_build_opts bo;
	json_t *w = NULL;
	cu_error berr;
	bool wrote, failed;
	char *m;
	int rc;

	if (stop(in, NULL, MSG_NOT_ADMITTED, p, &wrote, &failed, err) != CU_OK)
		return err->code;
	if (wrote)
		return CU_OK; /* create the Workload once it is stopped */
	memset(&bo, 0, sizeof(bo));
	bo.lookup = view->priority;
	if (rec_wl_build(in->job, &bo, &w, &berr) != CU_OK) {
		m = cu_asprintf("workload for %c/%s/%s: %s",
		    in->kind == REC_JOB_BATCH ? 'J' : 'S', in->ns, in->name,
		    berr.msg);
		rc = m == NULL ? rec__nomem(err, "job reconciler")
			       : add_text(p, REC_ITEM_WARN, NULL, m, err);
		cu_free(m);
		return rc;
	}
	/* Kueue's LocalQueue defaulting: a managed job without a queue name
	 * goes to the LocalQueue "default" of its namespace when there is
	 * one. */
	if (view->queue_name == NULL &&
	    view->local_queue_exists(in->ns, "default", view->payload) &&
	    json_object_set_new(json_object_get(w, "spec"), "queueName",
		json_string("default")) != 0) {
		json_decref(w);
		return rec__nomem(err, "job reconciler");
	}
	if (wl_write(p, in, REC_WRITE_CREATE, w, err) != CU_OK)
		return err->code;
	m = cu_asprintf("Created Workload: %s/%s", in->ns, in->wl_name);
	rc = m == NULL ? rec__nomem(err, "job reconciler")
		       : event(p, "CreatedWorkload", m, err);
	cu_free(m);
	return rc;
}

/* 8. Admitted and not evicted: start the job (once). */
static int start(const struct rec_job_view *view, const struct rec_job_in *in,
    struct rec_plan *p, cu_error *err)
{
	const struct api_workload *wl = in->wl;
	struct api_resource_flavor *fl = NULL;
	size_t nfl = 0, i;
	json_t *patch = NULL;
	struct rec_item *it;
	cu_error serr;
	int rc = CU_OK;

	if (!rec_job_is_suspended(in->job))
		return CU_OK;
	if (view->admitted_flavors(wl, &fl, &nfl, view->payload, &serr) ==
		CU_OK &&
	    rec_job_start_patch(in->job, wl, fl, nfl, &patch, &serr) == CU_OK) {
		if (patch != NULL) {
			rc = job_write(p, in, REC_JOB_START, patch, &it, err);
			if (rc == CU_OK) {
				it->done_reason = "Started";
				it->text =
				    cu_asprintf("Admitted by clusterQueue %s",
					wl->status.admission.cluster_queue
					    ? wl->status.admission.cluster_queue
					    : "");
				if (it->text == NULL)
					rc = rec__nomem(err, "job reconciler");
			}
		}
	} else if (serr.code == CU_EINVAL) {
		char *m = cu_asprintf("start %c/%s/%s: %s",
		    in->kind == REC_JOB_BATCH ? 'J' : 'S', in->ns, in->name,
		    serr.msg);

		rc = m == NULL ? rec__nomem(err, "job reconciler")
			       : add_text(p, REC_ITEM_WARN, NULL, m, err);
		cu_free(m);
	}
	for (i = 0; i < nfl; i++)
		api_resource_flavor_dispose(&fl[i]);
	cu_free(fl);
	return rc;
}

/* 8. A started job's PodsReady condition (waitForPodsReady). */
static int pods_ready(const struct rec_job_view *view,
    const struct rec_job_in *in, int64_t now_ns, struct rec_plan *p,
    cu_error *err)
{
	const struct api_workload *wl = in->wl;
	const struct api_condition *cur =
	    api_conditions_find(&wl->status.conditions, REC_COND_PODS_READY);
	const char *reason, *msg;
	json_t *patch = NULL;
	cu_error serr;
	bool ready = rec_pods_ready_condition(
	    wl, rec_job_pods_ready(in->job, NULL, NULL), &reason);

	if (ready && (cur == NULL || cur->status != API_COND_TRUE)) {
		const struct api_condition *ad = api_conditions_find(
		    &wl->status.conditions, REC_COND_ADMITTED);
		int64_t since = view->pods_ready_since_ns > 0
				    ? view->pods_ready_since_ns
				    : now_ns;
		int64_t due = (ad != NULL && ad->has_last_transition
				      ? ad->last_transition_ns
				      : since) +
			      view->pods_ready_defer_ns;
		struct rec_item *it;

		/* Deferred (from the admission, so well before the
		 * timeout; never a recovery): a short job gets it in its
		 * Finished write. */
		if (due > now_ns &&
		    strcmp(reason, REC_PODS_READY_STARTED) == 0) {
			if (rec_plan_push(p, &it, err) != CU_OK)
				return err->code;
			it->kind = REC_ITEM_ENGINE;
			it->engine = REC_ENGINE_WAKE;
			it->at_ns = due;
			return CU_OK;
		}
		now_ns = since;
	}
	if (ready)
		msg = REC_MSG_PODS_READY;
	else if (view->pods_not_ready != NULL)
		msg = view->pods_not_ready;
	else if (cur != NULL && cur->status == API_COND_FALSE &&
		 cur->reason != NULL && strcmp(cur->reason, reason) == 0 &&
		 cur->message != NULL)
		msg = cur->message; /* the cause written before stands */
	else if (strcmp(reason, REC_PODS_READY_WAIT_FOR_RECOVERY) == 0)
		msg = REC_MSG_PODS_WAIT_RECOVERY;
	else
		msg = REC_MSG_PODS_NOT_READY;
	if (rec_wl_status_pods_ready(
		wl, ready, reason, msg, now_ns, &patch, &serr) != CU_OK ||
	    patch == NULL)
		return CU_OK;
	if (wl_write(p, in, REC_WRITE_STATUS, patch, err) != CU_OK)
		return err->code;
	p->items[p->n - 1].reason = reason;
	return CU_OK;
}

int rec_job_reconcile(const struct rec_job_view *view,
    const struct rec_job_in *in, int64_t now_ns, struct rec_plan *out,
    cu_error *err)
{
	const struct api_workload *wl;
	json_t *patch = NULL;
	bool success = false, wrote, failed, holds, admitted, evicted;
	bool keep = true;
	const char *msg = NULL;
	cu_error serr;

	if (view == NULL || in == NULL || out == NULL || in->ns == NULL ||
	    in->name == NULL || view->admitted_flavors == NULL ||
	    view->local_queue_exists == NULL)
		return cu_error_set(err, CU_EINVAL,
		    "job reconciler: missing "
		    "input");
	/* 0. the job is gone */
	if (in->job == NULL)
		return job_gone(in, out, err);
	/* 1. the gate comes first: not ours, never written to */
	if (!view->managed)
		return CU_OK;
	if (in->wl_name == NULL)
		return cu_error_set(
		    err, CU_EINVAL, "job reconciler: missing Workload name");
	/* 2. our own Workload write has not reached the cache */
	if (view->wl_awaited)
		return CU_OK;
	wl = in->wl;
	/* 3. a finished Workload holds no resources: its finalizer goes */
	if (wl != NULL &&
	    api_conditions_true(&wl->status.conditions, REC_COND_FINISHED))
		return drop_finalizer(out, in, wl, err);
	/* 4. finished jobs finish their Workload */
	if (rec_job_finished(in->job, &success, &msg)) {
		const char *ready_reason = NULL;

		/* Its pods all ran: PodsReady=True folded in. */
		if (wl != NULL && success && view->pods_ready &&
		    rec_workload_holds_quota(wl) &&
		    api_conditions_find(
			&wl->status.conditions, REC_COND_PODS_READY) != NULL)
			(void)rec_pods_ready_condition(wl, true, &ready_reason);
		if (wl != NULL &&
		    rec_wl_status_finish_ready(wl,
			success ? REC_FINISHED_SUCCEEDED : REC_FINISHED_FAILED,
			msg ? msg : "", ready_reason,
			view->pods_ready_since_ns > 0
			    ? view->pods_ready_since_ns
			    : now_ns,
			now_ns, &patch, &serr) == CU_OK &&
		    patch != NULL) {
			if (wl_write(out, in, REC_WRITE_STATUS, patch, err) !=
			    CU_OK)
				return err->code;
			if (ready_reason != NULL &&
			    !api_conditions_true(
				&wl->status.conditions, REC_COND_PODS_READY))
				out->items[out->n - 1].reason = ready_reason;
			return CU_OK;
		}
		return CU_OK;
	}
	/* 5. a Workload being deleted: stop the job (templates restored),
	 * then let the Workload go; a new one queues the job again. */
	if (wl != NULL && wl->meta.has_deletion) {
		if (stop(in, wl, "The workload is deleted", out, &wrote,
			&failed, err) != CU_OK)
			return err->code;
		if (wrote || failed || rec_job_is_active(in->job))
			return CU_OK;
		return drop_finalizer(out, in, wl, err);
	}
	/* 6. no Workload yet: keep the job suspended and create one */
	if (wl == NULL)
		return create_workload(view, in, out, err);
	holds = rec_workload_holds_quota(wl);
	admitted = holds && api_conditions_true(
				&wl->status.conditions, REC_COND_ADMITTED);
	evicted = api_conditions_true(&wl->status.conditions, REC_COND_EVICTED);
	/* 7. a Workload that no longer matches its job is replaced (only
	 * while it holds no quota) */
	if (!holds && rec_wl_equivalent(in->job, wl, &keep, &serr) == CU_OK &&
	    !keep)
		return wl_write(out, in, REC_WRITE_DELETE, NULL, err);
	/* 8. admitted: start it (once); then its pods' readiness */
	if (admitted && !evicted)
		return rec_job_is_suspended(in->job) || !view->pods_ready
			   ? start(view, in, out, err)
			   : pods_ready(view, in, now_ns, out, err);
	/* 9. not admitted, or evicted: keep it stopped with its original
	 * templates; an evicted Workload gives its quota back once the job's
	 * pods are gone */
	{
		const struct api_condition *ec = api_conditions_find(
		    &wl->status.conditions, REC_COND_EVICTED);

		if (stop(in, wl,
			evicted && ec && ec->message ? ec->message
						     : MSG_NOT_ADMITTED,
			out, &wrote, &failed, err) != CU_OK)
			return err->code;
	}
	if (wrote || failed)
		return CU_OK;
	if (evicted && holds && !rec_job_is_active(in->job) &&
	    rec_wl_status_release(wl, now_ns, &patch, &serr) == CU_OK &&
	    patch != NULL)
		return wl_write(out, in, REC_WRITE_STATUS, patch, err);
	return CU_OK;
}
