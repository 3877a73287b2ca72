/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/writes.c - the controller's writes by object, queued into the
 * pipeline: Workload writes awaited in the cache, the job stop and start steps,
 * Events (deduplicated by reconcile/events), and a deleted job's
 * Workloads.
 */
#include <string.h>

#include "controller/ctl_int.h"

/* A Workload write awaited in the cache like job writes (key
 * "wl/ns/name"). owner [borrowed; copied; may be NULL] is the job key
 * whose reconciler sent it: that reconciler skips the job while the write
 * is in flight, so the answer (or the retry after a failure) brings the
 * job back, even when the Workload is gone by then. */
struct ctl_pipe_write *ctl_wl_write(ctl *c, enum ctl_pipe_kind kind,
    const char *ns, const char *name, json_t *patch, const char *owner)
{
	char *ek = cu_asprintf("wl/%s/%s", ns, name);
	struct ctl_pipe_write *w = ctl_pipe_queue(
	    c->pipe, kind, CTL_RES(INF_WL), ns, name, NULL, patch);

	ctl_pipe_expect(c->pipe, w, ek, true);
	ctl_pipe_set_owner(w, owner);
	cu_free(ek);
	return w;
}

/* Record an event about obj [borrowed] (a Job, JobSet or Workload as
 * cached): a new Event, or a count bump of an identical one (client-go's
 * dedup), or nothing (spam filter). Events are sent with the turn's
 * writes; only real transitions call this (docs/architecture.md lesson 4). */
void ctl_emit(ctl *c, json_t *obj, const char *type, const char *reason,
    const char *message)
{
	struct rec_event ev;
	struct rec_event_write w;
	cu_error err;

	if (c->events == NULL || obj == NULL)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.kind = json_string_value(json_object_get(obj, "kind"));
	ev.api_version = json_string_value(json_object_get(obj, "apiVersion"));
	ev.namespace_ = ctl_jmeta(obj, "namespace");
	ev.name = ctl_jmeta(obj, "name");
	ev.uid = ctl_jmeta(obj, "uid");
	ev.type = type;
	ev.reason = reason;
	ev.message = message;
	if (ev.kind == NULL || ev.name == NULL)
		return;
	if (rec_events_record(c->events, &ev, cu_time_now_ns(), &w, &err) !=
	    CU_OK) {
		cu_warn("event %s on %s: %s", reason, ev.name, err.msg);
		return;
	}
	if (w.action == REC_EVENT_CREATE)
		ctl_pipe_queue(c->pipe, CTL_PIPE_EVENT_CREATE, &ctl_res_events,
		    w.namespace_, w.name, NULL, json_incref(w.body));
	else if (w.action == REC_EVENT_PATCH)
		ctl_pipe_queue(c->pipe, CTL_PIPE_EVENT_PATCH, &ctl_res_events,
		    w.namespace_, w.name, NULL, json_incref(w.body));
	rec_event_write_dispose(&w);
}

/* Workloads in ns whose controller owner is kind/name. */
struct owned {
	const char *kind, *name, *ns;
	json_t *found; /* array of borrowed objects */
};

static void find_owned(json_t *wl, void *payload)
{
	struct owned *o = payload;
	json_t *refs =
	    json_object_get(json_object_get(wl, "metadata"), "ownerReferences");
	json_t *r;
	size_t i;

	if (ctl_jmeta(wl, "namespace") == NULL ||
	    strcmp(ctl_jmeta(wl, "namespace"), o->ns) != 0)
		return;
	json_array_foreach(refs, i, r)
	{
		const char *k = json_string_value(json_object_get(r, "kind"));
		const char *n = json_string_value(json_object_get(r, "name"));

		if (json_is_true(json_object_get(r, "controller")) && k && n &&
		    strcmp(k, o->kind) == 0 && strcmp(n, o->name) == 0)
			json_array_append(o->found, wl);
	}
}

/* Merge patch dropping cueue's finalizer from a Workload, other
 * finalizers kept, guarded by its resourceVersion; NULL when absent. */
json_t *ctl_drop_finalizer_patch(json_t *wl)
{
	json_t *fin = json_object_get(
		   json_object_get(wl, "metadata"), "finalizers"),
	       *keep, *f;
	size_t i;
	bool found = false;

	keep = json_array();
	json_array_foreach(fin, i, f)
	{
		const char *v = json_string_value(f);

		if (v != NULL && strcmp(v, REC_FINALIZER_RESOURCE_IN_USE) == 0)
			found = true;
		else
			json_array_append(keep, f);
	}
	if (!found) {
		json_decref(keep);
		return NULL;
	}
	return json_pack("{s:{s:o, s:s}}", "metadata", "finalizers", keep,
	    "resourceVersion", ctl_jmeta(wl, "resourceVersion"));
}

/* The job is gone: its Workloads go too (what Kueue leaves to the garbage
 * collector after dropping its finalizer; done here so quota is released
 * on clusters and test servers alike). */
void ctl_job_deleted(ctl *c, char kind, const char *ns, const char *name)
{
	struct owned o = {
	    kind == 'J' ? "Job" : "JobSet", name, ns, json_array()};
	json_t *wl;
	size_t i;

	api_informer_foreach(c->inf[INF_WL], find_owned, &o);
	json_array_foreach(o.found, i, wl)
	{
		const char *wname = ctl_jmeta(wl, "name");
		json_t *fp = ctl_drop_finalizer_patch(wl);

		if (fp != NULL)
			ctl_pipe_queue(c->pipe, CTL_PIPE_WL_PATCH,
			    CTL_RES(INF_WL), ns, wname, NULL, fp);
		if (ctl_jmeta(wl, "deletionTimestamp") == NULL)
			ctl_pipe_queue(c->pipe, CTL_PIPE_WL_DELETE,
			    CTL_RES(INF_WL), ns, wname, NULL, json_object());
	}
	json_decref(o.found);
}

/* The write of a stop step: which step decides what is written. */
void ctl_job_write(ctl *c, char kind, const char *key, const char *ns,
    const char *name, enum rec_stop_step step, json_t *patch)
{
	enum ctl_pipe_kind k =
	    step == REC_STOP_RESET_START ? CTL_PIPE_JOB_RESET_START
	    : step == REC_STOP_RESTORE	 ? CTL_PIPE_JOB_RESTORE
					 : CTL_PIPE_JOB_SUSPEND;

	ctl_pipe_expect(c->pipe,
	    ctl_pipe_queue(c->pipe, k,
		kind == 'J' ? CTL_RES(INF_JOB) : CTL_RES(INF_JOBSET), ns, name,
		NULL, patch),
	    key, true);
}

/* The start patch of an admitted job; its Started event carries note
 * [consumed]. */
void ctl_job_start(ctl *c, char kind, const char *key, const char *ns,
    const char *name, json_t *patch, char *note)
{
	struct ctl_pipe_write *w = ctl_pipe_queue(c->pipe, CTL_PIPE_JOB_START,
	    kind == 'J' ? CTL_RES(INF_JOB) : CTL_RES(INF_JOBSET), ns, name,
	    NULL, patch);

	ctl_pipe_expect(c->pipe, w, key, true);
	ctl_pipe_set_event(w, note ? "Started" : NULL, note);
}
