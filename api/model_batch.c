/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/model_batch.c - JSON codecs of the workloads cueue manages:
 * batch/v1 Job and jobset.x-k8s.io/v1alpha2 JobSet. Only what the queueing
 * decisions need is modelled (suspend, counts, pod templates, status);
 * everything else rides along in `raw`.
 */
#include <string.h>

#include "api/model_internal.h"

/* ---- batch/v1 Job ------------------------------------------------------- */

static void job_decode_body(
    struct api_dec *d, const json_t *j, struct api_job *job)
{
	const json_t *sec;
	size_t mark;

	apid_meta(d, j, &job->meta);
	sec = apid_section(d, j, "spec", true, &mark);
	apid_i32(d, sec, "parallelism", false, &job->spec.has_parallelism,
	    &job->spec.parallelism);
	apid_i32(d, sec, "completions", false, &job->spec.has_completions,
	    &job->spec.completions);
	apid_bool(
	    d, sec, "suspend", &job->spec.has_suspend, &job->spec.suspend);
	apid_str(d, sec, "managedBy", false, &job->spec.managed_by);
	apid_str(d, sec, "completionMode", false, &job->spec.completion_mode);
	job->spec.template = apid_json(d, sec, "template", JSON_OBJECT, true);
	apid_pop(d, mark);
	sec = apid_section(d, j, "status", false, &mark);
	apid_conditions(d, sec, "conditions", true, &job->status.conditions);
	apid_i32(d, sec, "active", false, &job->status.has_active,
	    &job->status.active);
	apid_i32(d, sec, "succeeded", false, &job->status.has_succeeded,
	    &job->status.succeeded);
	apid_i32(d, sec, "failed", false, &job->status.has_failed,
	    &job->status.failed);
	apid_i32(
	    d, sec, "ready", false, &job->status.has_ready, &job->status.ready);
	apid_time(d, sec, "startTime", false, &job->status.has_start_time,
	    &job->status.start_time_ns);
	apid_time(d, sec, "completionTime", false,
	    &job->status.has_completion_time, &job->status.completion_time_ns);
	apid_pop(d, mark);
}

static void job_encode_body(
    struct api_enc *e, json_t *dst, const struct api_job *job)
{
	json_t *spec, *st;
	bool any;

	apie_meta(e, dst, &job->meta);
	spec = apie_obj(e, dst, "spec", true);
	apie_i64(e, spec, "parallelism", job->spec.has_parallelism,
	    job->spec.parallelism);
	apie_i64(e, spec, "completions", job->spec.has_completions,
	    job->spec.completions);
	apie_bool(e, spec, "suspend", job->spec.has_suspend, job->spec.suspend);
	apie_str(e, spec, "managedBy", job->spec.managed_by);
	apie_str(e, spec, "completionMode", job->spec.completion_mode);
	apie_json(e, spec, "template", job->spec.template);
	any = job->status.conditions.n || job->status.has_active ||
	      job->status.has_succeeded || job->status.has_failed ||
	      job->status.has_ready || job->status.has_start_time ||
	      job->status.has_completion_time ||
	      json_is_object(json_object_get(dst, "status"));
	st = apie_obj(e, dst, "status", any);
	apie_conditions(e, st, "conditions", &job->status.conditions, true);
	apie_i64(e, st, "active", job->status.has_active, job->status.active);
	apie_i64(e, st, "succeeded", job->status.has_succeeded,
	    job->status.succeeded);
	apie_i64(e, st, "failed", job->status.has_failed, job->status.failed);
	apie_i64(e, st, "ready", job->status.has_ready, job->status.ready);
	apie_time(e, st, "startTime", job->status.has_start_time,
	    job->status.start_time_ns, false);
	apie_time(e, st, "completionTime", job->status.has_completion_time,
	    job->status.completion_time_ns, false);
}

static void job_dispose_body(struct api_job *job)
{
	cu_free(job->spec.managed_by);
	cu_free(job->spec.completion_mode);
	json_decref(job->spec.template);
	api_conditions_dispose(&job->status.conditions);
}

API_MODEL_DEFINE_CODEC(job, "batch/v1", "Job")

/* ---- JobSet ------------------------------------------------------------- */

static void dec_replicated_job(
    struct api_dec *d, const json_t *e, void *item, void *ctx)
{
	struct api_replicated_job *rj = item;
	const json_t *tspec;
	size_t mark, m2;

	(void)ctx;
	apid_str(d, e, "name", true, &rj->name);
	apid_str(d, e, "groupName", false, &rj->group_name);
	apid_i32(d, e, "replicas", false, &rj->has_replicas, &rj->replicas);
	rj->template = apid_json(d, e, "template", JSON_OBJECT, true);
	if (rj->template == NULL)
		return;
	mark = apid_push(d, "template");
	tspec = apid_field(d, rj->template, "spec", JSON_OBJECT, true);
	m2 = apid_push(d, "spec");
	apid_i32(d, tspec, "parallelism", false, &rj->has_parallelism,
	    &rj->parallelism);
	apid_i32(d, tspec, "completions", false, &rj->has_completions,
	    &rj->completions);
	rj->pod_template = apid_json(d, tspec, "template", JSON_OBJECT, true);
	apid_pop(d, m2);
	apid_pop(d, mark);
}

static void dec_replicated_job_status(
    struct api_dec *d, const json_t *e, void *item, void *ctx)
{
	struct api_replicated_job_status *s = item;

	(void)ctx;
	apid_str(d, e, "name", true, &s->name);
	apid_i32(d, e, "ready", true, NULL, &s->ready);
	apid_i32(d, e, "succeeded", true, NULL, &s->succeeded);
	apid_i32(d, e, "failed", true, NULL, &s->failed);
	apid_i32(d, e, "active", true, NULL, &s->active);
	apid_i32(d, e, "suspended", true, NULL, &s->suspended);
}

static void jobset_decode_body(
    struct api_dec *d, const json_t *j, struct api_jobset *js)
{
	const json_t *sec;
	size_t mark;

	apid_meta(d, j, &js->meta);
	sec = apid_section(d, j, "spec", false, &mark);
	js->spec.replicated_jobs = apid_each(d, sec, "replicatedJobs", false,
	    sizeof(*js->spec.replicated_jobs), &js->spec.n_replicated_jobs,
	    dec_replicated_job, NULL);
	apid_bool(d, sec, "suspend", &js->spec.has_suspend, &js->spec.suspend);
	apid_str(d, sec, "managedBy", false, &js->spec.managed_by);
	apid_pop(d, mark);

	sec = apid_section(d, j, "status", false, &mark);
	apid_conditions(d, sec, "conditions", false, &js->status.conditions);
	apid_i32(d, sec, "restarts", false, &js->status.has_restarts,
	    &js->status.restarts);
	apid_i32(d, sec, "restartsCountTowardsMax", false,
	    &js->status.has_restarts_count_towards_max,
	    &js->status.restarts_count_towards_max);
	apid_str(d, sec, "terminalState", false, &js->status.terminal_state);
	js->status.replicated_jobs_status =
	    apid_each(d, sec, "replicatedJobsStatus", false,
		sizeof(*js->status.replicated_jobs_status),
		&js->status.n_replicated_jobs_status, dec_replicated_job_status,
		NULL);
	apid_pop(d, mark);
}

static void enc_replicated_job(
    struct api_enc *e, json_t *o, const struct api_replicated_job *rj)
{
	json_t *tpl, *tspec;

	apie_str(e, o, "name", rj->name);
	apie_str(e, o, "groupName", rj->group_name);
	apie_i64(e, o, "replicas", rj->has_replicas, rj->replicas);
	apie_json(e, o, "template", rj->template);
	tpl = apie_obj(e, o, "template", true);
	tspec = apie_obj(e, tpl, "spec", true);
	apie_i64(e, tspec, "parallelism", rj->has_parallelism, rj->parallelism);
	apie_i64(e, tspec, "completions", rj->has_completions, rj->completions);
	apie_json(e, tspec, "template", rj->pod_template);
}

static void jobset_encode_body(
    struct api_enc *e, json_t *dst, const struct api_jobset *js)
{
	json_t *spec, *st, *a;
	size_t i;
	bool any;

	apie_meta(e, dst, &js->meta);
	spec = apie_obj(e, dst, "spec", true);
	a = apie_arr(e, spec, "replicatedJobs", js->spec.n_replicated_jobs);
	for (i = 0; a && i < js->spec.n_replicated_jobs; i++)
		enc_replicated_job(
		    e, json_array_get(a, i), &js->spec.replicated_jobs[i]);
	apie_bool(e, spec, "suspend", js->spec.has_suspend, js->spec.suspend);
	apie_str(e, spec, "managedBy", js->spec.managed_by);

	any = js->status.conditions.n || js->status.has_restarts ||
	      js->status.has_restarts_count_towards_max ||
	      js->status.terminal_state ||
	      js->status.n_replicated_jobs_status ||
	      json_is_object(json_object_get(dst, "status"));
	st = apie_obj(e, dst, "status", any);
	apie_conditions(e, st, "conditions", &js->status.conditions, false);
	apie_i64(
	    e, st, "restarts", js->status.has_restarts, js->status.restarts);
	apie_i64(e, st, "restartsCountTowardsMax",
	    js->status.has_restarts_count_towards_max,
	    js->status.restarts_count_towards_max);
	apie_str(e, st, "terminalState", js->status.terminal_state);
	a = apie_arr(
	    e, st, "replicatedJobsStatus", js->status.n_replicated_jobs_status);
	for (i = 0; a && i < js->status.n_replicated_jobs_status; i++) {
		const struct api_replicated_job_status *s =
		    &js->status.replicated_jobs_status[i];
		json_t *o = json_array_get(a, i);

		apie_str(e, o, "name", s->name);
		apie_i64(e, o, "ready", true, s->ready);
		apie_i64(e, o, "succeeded", true, s->succeeded);
		apie_i64(e, o, "failed", true, s->failed);
		apie_i64(e, o, "active", true, s->active);
		apie_i64(e, o, "suspended", true, s->suspended);
	}
}

static void jobset_dispose_body(struct api_jobset *js)
{
	size_t i;

	for (i = 0; i < js->spec.n_replicated_jobs; i++) {
		struct api_replicated_job *rj = &js->spec.replicated_jobs[i];

		cu_free(rj->name);
		cu_free(rj->group_name);
		json_decref(rj->template);
		json_decref(rj->pod_template);
	}
	cu_free(js->spec.replicated_jobs);
	cu_free(js->spec.managed_by);
	api_conditions_dispose(&js->status.conditions);
	cu_free(js->status.terminal_state);
	for (i = 0; i < js->status.n_replicated_jobs_status; i++)
		cu_free(js->status.replicated_jobs_status[i].name);
	cu_free(js->status.replicated_jobs_status);
}

API_MODEL_DEFINE_CODEC(jobset, "jobset.x-k8s.io/v1alpha2", "JobSet")
