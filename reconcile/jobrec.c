/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconcile/jobrec.c - the Job/JobSet reconciler as a pure function: the
 * job, its Workload and a view of the controller's caches in, a plan of
 * writes and events out (rec_job_reconcile). No I/O, no clock, no
 * controller state. Contract in reconcile/reconcile.h.
 */
#include <stdlib.h>
#include <string.h>

#include "reconcile/rec_int.h"

#define MSG_NOT_ADMITTED "Not admitted by cluster queue"
#define MSG_NO_MATCHING                                                        \
	"No matching Workload; restoring pod templates according to "          \
	"existent Workload"

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

/* A warning line "<what> J/ns/name: msg". */
static int warn_job(struct rec_plan *p, const struct rec_job_in *in,
    const char *what, const char *msg, cu_error *err)
{
	char *m = cu_asprintf("%s %c/%s/%s: %s", what,
	    in->kind == REC_JOB_BATCH	 ? 'J'
	    : in->kind == REC_JOB_JOBSET ? 'S'
					 : 'D',
	    in->ns, in->name, msg);
	int rc = m == NULL ? rec__nomem(err, "job reconciler")
			   : add_text(p, REC_ITEM_WARN, NULL, m, err);

	cu_free(m);
	return rc;
}

/*
 * Merge patch dropping cueue's finalizer from wl, other finalizers kept
 * in order, guarded by its resourceVersion. *out NULL when it has none
 * (or no resourceVersion to guard the patch with).
 */
int rec__wl_drop_finalizer_patch(
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

	if (rec__wl_drop_finalizer_patch(wl, &fp, err) != CU_OK)
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

		if (rec__wl_drop_finalizer_patch(wl, &fp, err) != CU_OK)
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

/* A Pod cannot be suspended: one that got past its gate is deleted (its
 * owner, if any, makes a new one, gated again), with Kueue's Stopped. */
static int stop_pod(const struct rec_job_in *in, const char *stopped_msg,
    struct rec_plan *p, bool *wrote, cu_error *err)
{
	struct rec_item *it;

	if (!rec__pod_stop_deletes(in->job->doc))
		return CU_OK;
	*wrote = true;
	if (add_write(p, REC_TARGET_JOB, REC_WRITE_DELETE, in->ns, in->name,
		NULL, REC_EXPECT_NONE, false, &it, err) != CU_OK)
		return err->code;
	it->job = REC_JOB_SUSPEND;
	it->done_reason = "Stopped";
	it->text = cu_strdup(stopped_msg ? stopped_msg : "");
	return it->text == NULL ? rec__nomem(err, "job reconciler") : CU_OK;
}

/* The job's next stop write, if any; `stopped_msg` is the "Stopped"
 * event's message for the suspend step, sent once that write lands. *wrote: a
 * write was planned. A stop patch that cannot be computed sets *failed (and
 * nothing else). */
static int stop(const struct rec_job_in *in, const struct api_workload *wl,
    const char *stopped_msg, struct rec_plan *p, bool *wrote, bool *failed,
    cu_error *err)
{
	enum rec_stop_step step;
	json_t *patch = NULL;
	struct rec_item *it;
	cu_error serr;

	*wrote = false;
	*failed = false;
	if (rec_job_fw(in->job)->shape == REC_FW_SHAPE_POD)
		return stop_pod(in, stopped_msg, p, wrote, err);
	if (rec_job_stop_patch(in->job, wl, &step, &patch, &serr) != CU_OK) {
		*failed = true;
		return CU_OK;
	}
	if (patch == NULL)
		return CU_OK;
	*wrote = true;
	if (job_write(p, in, stop_write(step), patch, &it, err) != CU_OK)
		return err->code;
	/* Kueue's Stopped, once the suspend is written (not per plan: a
	 * reconcile that runs again before it lands says nothing more). */
	if (step == REC_STOP_SUSPEND) {
		it->done_reason = "Stopped";
		it->text = cu_strdup(stopped_msg ? stopped_msg : "");
		if (it->text == NULL)
			return rec__nomem(err, "job reconciler");
	}
	return CU_OK;
}

/* ---- status.reclaimablePods ----------------------------------------- */

struct span {
	long first, last;
};

static int span_cmp(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->first < y->first ? -1 : x->first > y->first;
}

/* Intervals of an index list ("1,3-5") below limit appended to *v. */
static int spans_add(
    const char *list, long limit, struct span **v, size_t *n, size_t *cap)
{
	const char *p = list;

	while (p != NULL && *p != '\0') {
		char *end;
		long a = strtol(p, &end, 10), b = a;

		if (end == p)
			break; /* malformed: the rest is ignored, as Kueue */
		if (*end == '-') {
			const char *q = end + 1;

			b = strtol(q, &end, 10);
			if (end == q)
				break;
		}
		if (b >= limit)
			b = limit - 1;
		if (a >= 0 && a <= b) {
			if (cu_grow((void **)v, cap, *n + 1, sizeof(**v)) !=
			    CU_OK)
				return CU_ENOMEM;
			(*v)[*n].first = a;
			(*v)[*n].last = b;
			(*n)++;
		}
		p = *end == ',' ? end + 1 : NULL;
	}
	return CU_OK;
}

/* Kueue's terminalIndexesCount: indexes below completions that are
 * completed or failed (their union). -1: out of memory. */
static long terminal_indexes(const json_t *status, long completions)
{
	struct span *v = NULL;
	size_t n = 0, cap = 0, i;
	long count = 0, counted = -1;

	if (completions <= 0)
		return 0;
	if (spans_add(
		json_string_value(json_object_get(status, "completedIndexes")),
		completions, &v, &n, &cap) != CU_OK ||
	    spans_add(
		json_string_value(json_object_get(status, "failedIndexes")),
		completions, &v, &n, &cap) != CU_OK) {
		cu_free(v);
		return -1;
	}
	if (n > 0)
		qsort(v, n, sizeof(*v), span_cmp);
	for (i = 0; i < n; i++) {
		long from = v[i].first > counted ? v[i].first : counted + 1;

		if (from <= v[i].last) {
			count += v[i].last - from + 1;
			counted = v[i].last;
		}
	}
	cu_free(v);
	return count;
}

/* Append {name, count} to arr. */
static int reclaim_add(json_t *arr, const char *name, long count)
{
	return json_array_append_new(arr,
	    json_pack("{s:s, s:I}", "name", name, "count", (json_int_t)count));
}

/* The job's reclaimable pods as Kueue's Job and JobSet integrations
 * compute them, into arr [borrowed] as [{name, count}]. CU_ENOMEM. */
static int job_reclaimable(const struct rec_job *j, json_t *arr)
{
	size_t i, k;

	if (j->kind == REC_JOB_DOC) /* not JobWithReclaimablePods */
		return CU_OK;
	if (j->kind == REC_JOB_BATCH) {
		const struct api_job *b = j->job;
		long par = b->spec.has_parallelism ? b->spec.parallelism : 1;
		long comp = b->spec.has_completions ? b->spec.completions : par;
		long term = b->status.has_succeeded ? b->status.succeeded : 0;
		long left;

		if (b->spec.completion_mode != NULL &&
		    strcmp(b->spec.completion_mode, "Indexed") == 0 &&
		    (term = terminal_indexes(
			 json_object_get(b->raw, "status"), comp)) < 0)
			return CU_ENOMEM;
		/* A single pod, no terminal pod, or remaining work that still
		 * fills every parallel slot: nothing to reclaim. */
		if (par <= 1 || term <= 0)
			return CU_OK;
		left = comp - term > 0 ? comp - term : 0;
		if (left >= par)
			return CU_OK;
		return reclaim_add(arr, "main", par - left) == 0 ? CU_OK
								 : CU_ENOMEM;
	}
	for (i = 0; i < j->jobset->spec.n_replicated_jobs; i++) {
		const struct api_replicated_job *r =
		    &j->jobset->spec.replicated_jobs[i];
		long replicas = r->has_replicas ? r->replicas : 1;
		long per = r->has_parallelism ? r->parallelism : 1;

		if (r->has_completions && r->completions < per)
			per = r->completions;
		for (k = 0; k < j->jobset->status.n_replicated_jobs_status;
		     k++) {
			const struct api_replicated_job_status *st =
			    &j->jobset->status.replicated_jobs_status[k];

			if (st->name == NULL || strcmp(st->name, r->name) != 0)
				continue;
			if (st->succeeded > 0 && st->succeeded <= replicas &&
			    reclaim_add(arr, r->name, st->succeeded * per) != 0)
				return CU_ENOMEM;
			break;
		}
	}
	return CU_OK;
}

/* The count of pod set name in wl's status.reclaimablePods; -1: none. */
static long wl_reclaimable(const struct api_workload *wl, const char *name)
{
	size_t i;

	for (i = 0; i < wl->status.n_reclaimable_pods; i++)
		if (wl->status.reclaimable_pods[i].name != NULL &&
		    strcmp(wl->status.reclaimable_pods[i].name, name) == 0)
			return wl->status.reclaimable_pods[i].count;
	return -1;
}

/*
 * 7b. status.reclaimablePods follows the job (Kueue's reconciler, step
 * "update reclaimable counts"): each count capped at its pod set's count
 * (LimitReclaimablePodsToPodSetSizes), written when it differs as a set
 * from what the Workload says. *wrote: a write was planned.
 */
static int reclaimable(const struct rec_job_in *in,
    const struct api_workload *wl, struct rec_plan *p, bool *wrote,
    cu_error *err)
{
	json_t *want = json_array(), *e, *body;
	bool same;
	size_t i, k;

	*wrote = false;
	if (want == NULL || job_reclaimable(in->job, want) != CU_OK) {
		json_decref(want);
		return rec__nomem(err, "job reconciler");
	}
	json_array_foreach(want, i, e)
	{
		const char *name =
		    json_string_value(json_object_get(e, "name"));

		for (k = 0; k < wl->spec.n_pod_sets; k++) {
			const struct api_podset *ps = &wl->spec.pod_sets[k];
			long size = ps->has_count ? ps->count : 1;

			if (strcmp(ps->name ? ps->name : "main", name) == 0 &&
			    json_integer_value(json_object_get(e, "count")) >
				size)
				json_object_set_new(
				    e, "count", json_integer(size));
		}
	}
	same = json_array_size(want) == wl->status.n_reclaimable_pods;
	json_array_foreach(want, i, e)
	{
		same = same &&
		       wl_reclaimable(
			   wl, json_string_value(json_object_get(e, "name"))) ==
			   json_integer_value(json_object_get(e, "count"));
	}
	if (same || wl->meta.resource_version == NULL) {
		json_decref(want);
		return CU_OK;
	}
	body = json_pack("{s:{s:s}, s:{s:o}}", "metadata", "resourceVersion",
	    wl->meta.resource_version, "status", "reclaimablePods",
	    json_array_size(want) > 0 ? want : json_null());
	if (json_array_size(want) == 0)
		json_decref(want);
	if (body == NULL)
		return rec__nomem(err, "job reconciler");
	*wrote = true;
	return wl_write(p, in, REC_WRITE_STATUS, body, err);
}

/* The Workload the job should have now (rec_wl_build), with Kueue's
 * LocalQueue defaulting: a managed job without a queue name goes to the
 * LocalQueue "default" of its namespace when there is one. *w NULL: it
 * cannot be built (a WARN was planned). */
int rec__job_build_workload(const struct rec_job_view *view,
    const struct rec_job_in *in, struct rec_plan *p, json_t **w, cu_error *err)
{
	struct rec_wl_build_opts bo;
	cu_error berr;

	*w = NULL;
	memset(&bo, 0, sizeof(bo));
	bo.lookup = view->priority;
	bo.label_keys_to_copy = view->label_keys_to_copy;
	if (rec_wl_build(in->job, &bo, w, &berr) != CU_OK ||
	    rec_wl_requests_valid(*w, &berr) != CU_OK) {
		json_decref(*w);
		*w = NULL;
		if (warn_job(p, in, "workload for", berr.msg, err) != CU_OK)
			return err->code;
		return rec__plan_compose_error(p, &berr, err);
	}
	if ((!view->no_admission_gated_by &&
		rec_gate_copy(rec_job_meta(in->job), *w, err) != CU_OK) ||
	    (!view->no_elastic_jobs && rec_elastic_job(rec_job_meta(in->job)) &&
		rec_elastic_slice_annotations(NULL, in->wl_name, *w, err) !=
		    CU_OK)) {
		json_decref(*w);
		*w = NULL;
		return err->code;
	}
	if (view->queue_name == NULL &&
	    view->local_queue_exists(in->ns, "default", view->payload) &&
	    json_object_set_new(json_object_get(*w, "spec"), "queueName",
		json_string("default")) != 0) {
		json_decref(*w);
		*w = NULL;
		return rec__nomem(err, "job reconciler");
	}
	return CU_OK;
}

static int wl_write_noted(struct rec_plan *p, const struct rec_job_in *in,
    enum rec_write_op op, json_t *body, const char *reason, const char *what,
    cu_error *err);

/* 6. No Workload yet: keep the job suspended, wait for its pods to be
 * gone (Kueue's handleJobWithNoWorkload), then create one. */
static int create_workload(const struct rec_job_view *view,
    const struct rec_job_in *in, struct rec_plan *p, cu_error *err)
{
	json_t *w = NULL;
	bool wrote, failed;

	if (stop(in, NULL, MSG_NOT_ADMITTED, p, &wrote, &failed, err) != CU_OK)
		return err->code;
	if (wrote || rec_job_is_active(in->job))
		return CU_OK; /* create the Workload once it is stopped */
	if (rec__job_build_workload(view, in, p, &w, err) != CU_OK || w == NULL)
		return err->code;
	/* Kueue's CreatedWorkload, once the create succeeded (a refused
	 * create retried says nothing). */
	return wl_write_noted(p, in, REC_WRITE_CREATE, w, "CreatedWorkload",
	    "Created Workload", err);
}

/* A Workload write with Kueue's event "<what>: ns/name" on the job once
 * it lands. */
static int wl_write_noted(struct rec_plan *p, const struct rec_job_in *in,
    enum rec_write_op op, json_t *body, const char *reason, const char *what,
    cu_error *err)
{
	struct rec_item *it;

	if (add_write(p, REC_TARGET_WORKLOAD, op, in->ns, in->wl_name, body,
		REC_EXPECT_RV, true, &it, err) != CU_OK)
		return err->code;
	it->done_reason = reason;
	it->text = cu_asprintf("%s: %s/%s", what, in->ns, in->wl_name);
	return it->text == NULL ? rec__nomem(err, "job reconciler") : CU_OK;
}

/* Kueue's updateWorkloadToMatchJob: the spec of wl, which holds no quota,
 * rebuilt from the suspended job (spec.active kept), fields the new spec
 * lacks removed. */
static int update_to_match(const struct rec_job_view *view,
    const struct rec_job_in *in, const struct api_workload *wl,
    struct rec_plan *p, cu_error *err)
{
	json_t *w = NULL, *spec, *old_spec, *v, *body;
	const char *key;

	if (rec__job_build_workload(view, in, p, &w, err) != CU_OK || w == NULL)
		return err->code;
	spec = json_incref(json_object_get(w, "spec"));
	json_decref(w);
	old_spec = json_object_get(wl->raw, "spec");
	if (json_object_set_new(spec, "active",
		json_boolean(!wl->spec.has_active || wl->spec.active)) != 0)
		goto nomem;
	json_object_foreach(old_spec, key, v)
	{
		if (json_object_get(spec, key) == NULL &&
		    json_object_set_new(spec, key, json_null()) != 0)
			goto nomem;
	}
	if (wl->meta.resource_version == NULL) {
		json_decref(spec);
		return CU_OK;
	}
	body = json_pack("{s:{s:s}, s:o}", "metadata", "resourceVersion",
	    wl->meta.resource_version, "spec", spec);
	if (body == NULL)
		return rec__nomem(err, "job reconciler");
	return wl_write_noted(p, in, REC_WRITE_PATCH, body, "UpdatedWorkload",
	    "Updated not matching Workload for suspended job", err);
nomem:
	json_decref(spec);
	return rec__nomem(err, "job reconciler");
}

/*
 * 7. The job no longer matches its Workload (Kueue's ensureOneWorkload
 * with no match): a running job is stopped first, its templates restored
 * from that Workload; then a Workload without quota is updated in place,
 * and one that holds quota is deleted once the job's pods are gone (a
 * new one is created on a later pass and queued): the pods never run
 * beyond what a Workload holds quota for.
 */
static int replace_workload(const struct rec_job_view *view,
    const struct rec_job_in *in, const struct api_workload *wl, bool holds,
    struct rec_plan *p, cu_error *err)
{
	bool wrote, failed;

	if (stop(in, wl, MSG_NO_MATCHING, p, &wrote, &failed, err) != CU_OK)
		return err->code;
	if (wrote || failed)
		return CU_OK;
	if (!holds && !wl->meta.has_deletion)
		return update_to_match(view, in, wl, p, err);
	if (rec_job_is_active(in->job))
		return CU_OK;
	return wl_write_noted(p, in, REC_WRITE_DELETE, NULL, "DeletedWorkload",
	    "Deleted not matching Workload", err);
}

/*
 * 2b. The job's prebuilt Workload (Kueue's ensureOneWorkload with a
 * prebuilt name): adopted when nobody controls it, finished OutOfSync
 * when it no longer matches the job; *wlp set NULL when it is absent,
 * another object's, or out of sync and finished, and then the job is
 * kept stopped ("missing workload"). *done: the plan is complete.
 */
static int prebuilt(const struct rec_job_in *in,
    const struct api_workload **wlp, int64_t now_ns, struct rec_plan *p,
    bool *done, cu_error *err)
{
	const struct api_workload *wl = *wlp;
	bool other = false, keep = true, wrote, failed;
	json_t *patch = NULL;
	cu_error serr;

	*done = true;
	if (wl != NULL &&
	    !rec_wl_controlled_by(wl, rec_job_meta(in->job), &other) &&
	    !other) {
		if (rec_wl_adopt_patch(in->job, wl, &patch, err) != CU_OK)
			return err->code;
		return patch == NULL
			   ? CU_OK
			   : wl_write(p, in, REC_WRITE_PATCH, patch, err);
	}
	if (wl != NULL && !other) {
		if (rec_wl_equivalent(in->job, wl, &keep, &serr) != CU_OK)
			keep = true; /* pod sets unreadable: as step 7 */
		if (keep) {
			*done = false;
			return CU_OK;
		}
		if (!api_conditions_true(
			&wl->status.conditions, REC_COND_FINISHED)) {
			if (rec_wl_status_finish(wl, REC_FINISHED_OUT_OF_SYNC,
				"The prebuilt workload is out of sync with "
				"its user job",
				now_ns, &patch, &serr) != CU_OK ||
			    patch == NULL)
				return CU_OK;
			return wl_write(p, in, REC_WRITE_STATUS, patch, err);
		}
	}
	*wlp = NULL;
	if (rec_job_finished(in->job, NULL, NULL))
		return CU_OK;
	return stop(in, NULL, "missing workload", p, &wrote, &failed, err);
}

/*
 * 8. Admitted and not evicted: start the job (once). A start that can
 * never work (rec_job_start_patch's CU_EINVAL: the pod sets do not match
 * the admission, or a label or nodeSelector the start sets is already
 * set to another value: Kueue's podset.IsPermanent) finishes the
 * Workload with reason FailedToStart and the error as message, as
 * Kueue's reconciler does; its quota is then given back. A flavor that
 * cannot be read is not permanent: a warning, retried on the next
 * change (as Kueue returns the error).
 */
static int start(const struct rec_job_view *view, const struct rec_job_in *in,
    int64_t now_ns, struct rec_plan *p, cu_error *err)
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
	if (view->admitted_flavors(wl, &fl, &nfl, view->payload, &serr) !=
	    CU_OK) {
		if (serr.code == CU_EINVAL)
			rc = warn_job(p, in, "start", serr.msg, err);
	} else if (rec_job_start_patch(in->job, wl, fl, nfl, &patch, &serr) ==
		   CU_OK) {
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
		cu_error ferr;

		rc = warn_job(p, in, "start", serr.msg, err);
		if (rc == CU_OK &&
		    rec_wl_status_finish(wl, REC_FINISHED_FAILED_TO_START,
			serr.msg, now_ns, &patch, &ferr) == CU_OK &&
		    patch != NULL)
			rc = wl_write(p, in, REC_WRITE_STATUS, patch, err);
	}
	for (i = 0; i < nfl; i++)
		api_resource_flavor_dispose(&fl[i]);
	cu_free(fl);
	return rc;
}

/* The job's priority-class label as Kueue's webhook leaves it: the label;
 * or, for a job without one whose Workload got the "default"
 * WorkloadPriorityClass at creation, "default" (Kueue's defaulting
 * labels such a job with it when it is created, and only then). */
static const char *job_priority_label(
    const struct api_meta *m, const struct api_workload *wl)
{
	const char *l = api_strmap_get(&m->labels, API_LABEL_PRIORITY_CLASS);
	const struct api_priority_class_ref *r = &wl->spec.priority_class_ref;

	if (l != NULL && *l != '\0')
		return l;
	return wl->spec.has_priority_class_ref && r->name && r->kind &&
		       strcmp(r->name, API_DEFAULT_WPC_NAME) == 0 &&
		       strcmp(r->kind, "WorkloadPriorityClass") == 0
		   ? API_DEFAULT_WPC_NAME
		   : "";
}

/* spec.priorityClassRef and spec.priority of p [borrowed] into spec
 * (priorityClassRef null when p has no class). */
static int set_priority(json_t *spec, const struct api_priority *p)
{
	bool w = p->source == API_PRIO_WORKLOAD_PRIORITY_CLASS;
	json_t *ref =
	    p->source == API_PRIO_NONE
		? json_null()
		: json_pack("{s:s, s:s, s:s}", "group",
		      w ? "kueue.x-k8s.io" : "scheduling.k8s.io", "kind",
		      w ? "WorkloadPriorityClass" : "PriorityClass", "name",
		      p->class_name ? p->class_name : "");

	if (ref == NULL || json_object_set_new(spec, "priorityClassRef", ref) ||
	    json_object_set_new(spec, "priority", json_integer(p->value)))
		return -1;
	return 0;
}

/* Does wl's priority already say p? */
static bool priority_equal(
    const struct api_workload *wl, const struct api_priority *p)
{
	const struct api_priority_class_ref *r = &wl->spec.priority_class_ref;
	bool w = p->source == API_PRIO_WORKLOAD_PRIORITY_CLASS;

	if (!wl->spec.has_priority || wl->spec.priority != p->value)
		return false;
	if (p->source == API_PRIO_NONE)
		return !wl->spec.has_priority_class_ref;
	return wl->spec.has_priority_class_ref && r->name && r->kind &&
	       r->group && strcmp(r->name, p->class_name) == 0 &&
	       strcmp(r->kind, w ? "WorkloadPriorityClass" : "PriorityClass") ==
		   0 &&
	       strcmp(r->group, w ? "kueue.x-k8s.io" : "scheduling.k8s.io") ==
		   0;
}

/*
 * A Workload that holds no quota follows its job's labels, as Kueue's
 * reconciler does: the priority-class label (UpdateWorkloadPriority: only
 * a Workload whose priority comes from a WorkloadPriorityClass, or that
 * has none, follows it; the class is resolved again when its name
 * changed, and the "UpdatedWorkload" event is sent once the write
 * landed) and, unless it was evicted, the queue-name label
 * (QueueNameChange). Both go in one spec PATCH; the Workload reconciler
 * then queues the Workload again (its generation changed). *wrote: a
 * write was planned.
 */
static int follow_job_labels(const struct rec_job_view *view,
    const struct rec_job_in *in, const struct api_workload *wl, bool queue,
    bool holds, struct rec_plan *p, bool *wrote, cu_error *err)
{
	const struct api_meta *m = rec_job_meta(in->job);
	const struct api_priority_class_ref *ref = &wl->spec.priority_class_ref;
	const char *have_q = wl->spec.queue_name ? wl->spec.queue_name : "";
	const char *want_q = view->queue_name;
	const char *label = job_priority_label(m, wl);
	/* One that reserved quota without a class can no longer get one
	 * (the Workload's validation), so it does not follow. */
	bool follows =
	    (!holds && !wl->spec.has_priority_class_ref) ||
	    (wl->spec.has_priority_class_ref && ref->kind && ref->group &&
		strcmp(ref->kind, "WorkloadPriorityClass") == 0 &&
		strcmp(ref->group, "kueue.x-k8s.io") == 0);
	bool updated_priority = false;
	json_t *spec, *body;
	struct rec_item *it;
	int rc = CU_OK;

	*wrote = false;
	spec = json_object();
	if (spec == NULL)
		return rec__nomem(err, "job reconciler");
	/* A job managed without a queue name got LocalQueue "default" at
	 * creation (Kueue's webhook would have labelled it so). */
	if (want_q == NULL)
		want_q = strcmp(have_q, "default") == 0 &&
				 view->local_queue_exists(
				     in->ns, "default", view->payload)
			     ? "default"
			     : "";
	if (queue && strcmp(want_q, have_q) != 0 &&
	    json_object_set_new(spec, "queueName",
		*want_q ? json_string(want_q) : json_null()) != 0)
		rc = rec__nomem(err, "job reconciler");
	if (rc == CU_OK && follows && view->priority != NULL &&
	    strcmp(label, wl->spec.has_priority_class_ref && ref->name
			      ? ref->name
			      : "") != 0) {
		struct api_podsets ps = {NULL, 0};
		struct api_priority prio = {API_PRIO_NONE, NULL, 0};
		cu_error perr;

		if (rec_job_podsets(in->job, &ps, &perr) != CU_OK ||
		    api_resolve_priority(
			&m->labels, &ps, view->priority, &prio, &perr) != CU_OK)
			rc = warn_job(p, in, "priority of", perr.msg, err);
		/* While it holds quota the class keeps its kind (the
		 * Workload's validation): a change to another kind waits. */
		else if (!priority_equal(wl, &prio) &&
			 (!holds ||
			     prio.source == API_PRIO_WORKLOAD_PRIORITY_CLASS)) {
			updated_priority = true;
			if (set_priority(spec, &prio) != 0)
				rc = rec__nomem(err, "job reconciler");
		}
		api_podsets_dispose(&ps);
		cu_free(prio.class_name);
	}
	if (rc != CU_OK || json_object_size(spec) == 0 ||
	    wl->meta.resource_version == NULL) {
		json_decref(spec);
		return rc;
	}
	body = json_pack("{s:{s:s}, s:o}", "metadata", "resourceVersion",
	    wl->meta.resource_version, "spec", spec);
	if (body == NULL)
		return rec__nomem(err, "job reconciler");
	*wrote = true;
	rc = add_write(p, REC_TARGET_WORKLOAD, REC_WRITE_PATCH, in->ns,
	    in->wl_name, body, REC_EXPECT_RV, true, &it, err);
	if (rc == CU_OK && updated_priority) {
		it->done_reason = "UpdatedWorkload";
		it->text = cu_asprintf("Updated workload priority class: %s/%s",
		    in->ns, in->wl_name);
		if (it->text == NULL)
			rc = rec__nomem(err, "job reconciler");
	}
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

/* 7, elastic: a running elastic job scaled down keeps its Workload, whose
 * counts follow the job (its quota shrinks at once). */
static int scale_down(const struct rec_job_view *view,
    const struct rec_job_in *in, const struct api_workload *wl, bool holds,
    struct rec_plan *p, bool *wrote, cu_error *err)
{
	json_t *patch = NULL;
	cu_error serr;

	*wrote = false;
	if (view->no_elastic_jobs || !holds ||
	    !rec_elastic_job(rec_job_meta(in->job)) ||
	    rec_elastic_scale_down_patch(in->job, wl, &patch, &serr) != CU_OK ||
	    patch == NULL)
		return CU_OK;
	*wrote = true;
	return wl_write(p, in, REC_WRITE_PATCH, patch, err);
}

/* 7a. Kueue's UpdateAdmissionGatedBy (reconcile/gates.c): the job's
 * admission-gated-by annotation onto its Workload, with the job's
 * UpdatedWorkload event once written. */
static int follow_gates(const struct rec_job_view *view,
    const struct rec_job_in *in, const struct api_workload *wl,
    struct rec_plan *p, bool *wrote, cu_error *err)
{
	json_t *patch = NULL;
	char *ev = NULL;

	*wrote = false;
	if (view->no_admission_gated_by)
		return CU_OK;
	if (rec_gate_follow_patch(
		rec_job_meta(in->job), wl, &patch, &ev, err) != CU_OK)
		return err->code;
	if (patch == NULL)
		return CU_OK;
	*wrote = true;
	if (wl_write(p, in, REC_WRITE_PATCH, patch, err) != CU_OK) {
		cu_free(ev);
		return err->code;
	}
	p->items[p->n - 1].done_reason = "UpdatedWorkload";
	p->items[p->n - 1].text = ev;
	return CU_OK;
}

/* Step 4: the finished job finishes its Workload wl [borrowed, or NULL:
 * nothing to do]; with its pods all run, PodsReady=True is folded into
 * the same write. Kueue's FinishedWorkload is said on the job once the
 * Finished condition is written. */
static int finish_workload(const struct rec_job_view *view,
    const struct rec_job_in *in, const struct api_workload *wl, bool success,
    const char *msg, int64_t now_ns, struct rec_plan *out, cu_error *err)
{
	const char *ready_reason = NULL;
	json_t *patch = NULL;
	struct rec_item *it;
	cu_error serr;

	if (wl == NULL)
		return CU_OK;
	if (success && view->pods_ready && rec_workload_holds_quota(wl) &&
	    api_conditions_find(&wl->status.conditions, REC_COND_PODS_READY) !=
		NULL)
		(void)rec_pods_ready_condition(wl, true, &ready_reason);
	if (rec_wl_status_finish_ready(wl,
		success ? REC_FINISHED_SUCCEEDED : REC_FINISHED_FAILED,
		msg ? msg : "", ready_reason,
		view->pods_ready_since_ns > 0 ? view->pods_ready_since_ns
					      : now_ns,
		now_ns, &patch, &serr) != CU_OK ||
	    patch == NULL)
		return CU_OK;
	if (wl_write(out, in, REC_WRITE_STATUS, patch, err) != CU_OK)
		return err->code;
	it = &out->items[out->n - 1];
	it->done_reason = "FinishedWorkload";
	it->text = rec_events_note_finished(in->ns, in->wl_name);
	if (it->text == NULL)
		return rec__nomem(err, "job reconciler");
	if (ready_reason != NULL &&
	    !api_conditions_true(&wl->status.conditions, REC_COND_PODS_READY))
		it->reason = ready_reason;
	return CU_OK;
}

/* Step 5: a Workload being deleted stops its job (templates restored),
 * then lets the Workload go; a new one queues the job again. */
static int workload_deleted(const struct rec_job_in *in,
    const struct api_workload *wl, struct rec_plan *out, cu_error *err)
{
	bool wrote, failed;

	if (stop(in, wl, "The workload is deleted", out, &wrote, &failed,
		err) != CU_OK)
		return err->code;
	if (wrote || failed || rec_job_is_active(in->job))
		return CU_OK;
	return drop_finalizer(out, in, wl, err);
}

/* Steps 7a-7c: the Workload wl [borrowed] follows its job's admission
 * gates, gives back the quota of pods the job no longer needs and,
 * holding quota, follows the job's priority-class label. *wrote: a step
 * planned a write (the reconcile ends there). */
static int follow_job(const struct rec_job_view *view,
    const struct rec_job_in *in, const struct api_workload *wl, bool holds,
    struct rec_plan *out, bool *wrote, cu_error *err)
{
	if (follow_gates(view, in, wl, out, wrote, err) != CU_OK)
		return err->code;
	if (*wrote)
		return CU_OK;
	if (reclaimable(in, wl, out, wrote, err) != CU_OK)
		return err->code;
	if (*wrote || !holds)
		return CU_OK;
	return follow_job_labels(view, in, wl, false, true, out, wrote, err);
}

bool rec_wl_owned_by_single_pod(const struct api_workload *wl)
{
	const struct api_owner_ref *r;
	const char *group;

	if (wl == NULL || wl->meta.n_owner_refs != 1)
		return false;
	group = api_strmap_get(
	    &wl->meta.annotations, "kueue.x-k8s.io/is-group-workload");
	if (group != NULL && strcmp(group, "true") == 0)
		return false;
	r = &wl->meta.owner_refs[0];
	return r->kind != NULL && strcmp(r->kind, "Pod") == 0 &&
	       r->api_version != NULL && strcmp(r->api_version, "v1") == 0 &&
	       r->controller;
}

/* Steps 9 and 10: a Workload not admitted, or evicted, keeps its job
 * stopped with its original templates; an evicted Workload gives its
 * quota back once the job's pods are gone; a pending one follows the
 * job's queue-name (unless it was evicted) and priority-class labels. */
static int keep_stopped(const struct rec_job_view *view,
    const struct rec_job_in *in, const struct api_workload *wl, bool holds,
    bool evicted, int64_t now_ns, struct rec_plan *out, cu_error *err)
{
	const struct api_condition *ec =
	    api_conditions_find(&wl->status.conditions, REC_COND_EVICTED);
	json_t *patch = NULL;
	bool wrote, failed;
	cu_error serr;

	if (stop(in, wl,
		evicted && ec && ec->message ? ec->message : MSG_NOT_ADMITTED,
		out, &wrote, &failed, err) != CU_OK)
		return err->code;
	if (wrote || failed)
		return CU_OK;
	/* SkipReassignmentForPodOwnedWorkloads: a Pod's own Workload is
	 * not requeued; it ends with its Pod */
	if (evicted && holds && !rec_job_is_active(in->job) &&
	    rec_wl_status_release_parked(wl,
		!view->no_skip_pod_owned && rec_wl_owned_by_single_pod(wl),
		now_ns, &patch, &serr) == CU_OK &&
	    patch != NULL)
		return wl_write(out, in, REC_WRITE_STATUS, patch, err);
	if (!holds)
		return follow_job_labels(
		    view, in, wl, !evicted, false, out, &wrote, err);
	return CU_OK;
}

int rec_job_reconcile(const struct rec_job_view *view,
    const struct rec_job_in *in, int64_t now_ns, struct rec_plan *out,
    cu_error *err)
{
	const struct api_workload *wl;
	bool success = false, wrote, holds, admitted, evicted;
	bool keep = true;
	const char *msg = NULL;
	cu_error serr;

	if (view == NULL || in == NULL || out == NULL || in->ns == NULL ||
	    in->name == NULL || view->admitted_flavors == NULL ||
	    view->local_queue_exists == NULL)
		return cu_error_set(
		    err, CU_EINVAL, "job reconciler: missing input");
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
	/* 2b. a prebuilt Workload is adopted, never created */
	if (in->prebuilt) {
		bool done;

		if (prebuilt(in, &wl, now_ns, out, &done, err) != CU_OK)
			return err->code;
		if (done)
			return CU_OK;
	}
	/* 3. a finished Workload holds no resources: its finalizer goes */
	if (wl != NULL &&
	    api_conditions_true(&wl->status.conditions, REC_COND_FINISHED))
		return drop_finalizer(out, in, wl, err);
	/* 4. finished jobs finish their Workload */
	if (rec_job_finished(in->job, &success, &msg))
		return finish_workload(
		    view, in, wl, success, msg, now_ns, out, err);
	/* 5. a Workload being deleted */
	if (wl != NULL && wl->meta.has_deletion)
		return workload_deleted(in, wl, out, err);
	/* 6. no Workload yet: keep the job suspended and create one */
	if (wl == NULL)
		return create_workload(view, in, out, err);
	/* 6b. an elastic job's workload slices (reconcile/slices.c) */
	if (rec__slices_step(view, in, wl, now_ns, out, &wrote, err) != CU_OK)
		return err->code;
	if (wrote)
		return CU_OK;
	holds = rec_workload_holds_quota(wl);
	admitted = holds && api_conditions_true(
				&wl->status.conditions, REC_COND_ADMITTED);
	evicted = api_conditions_true(&wl->status.conditions, REC_COND_EVICTED);
	/* 7. a Workload that no longer matches its job is replaced, unless
	 * the job is elastic and scaled down (reconcile/elastic.c) */
	if (rec_wl_equivalent(in->job, wl, &keep, &serr) == CU_OK && !keep) {
		if (scale_down(view, in, wl, holds && !evicted, out, &wrote,
			err) != CU_OK)
			return err->code;
		return wrote ? CU_OK
			     : replace_workload(view, in, wl, holds, out, err);
	}
	/* 7a-7c. the Workload follows its job (gates, reclaimable pods,
	 * priority) */
	if (follow_job(view, in, wl, holds, out, &wrote, err) != CU_OK)
		return err->code;
	if (wrote)
		return CU_OK;
	/* 8. admitted: start it (once); then its pods' readiness */
	if (admitted && !evicted)
		return rec_job_is_suspended(in->job) || !view->pods_ready
			   ? start(view, in, now_ns, out, err)
			   : pods_ready(view, in, now_ns, out, err);
	/* 9, 10. not admitted, or evicted: kept stopped */
	return keep_stopped(view, in, wl, holds, evicted, now_ns, out, err);
}
