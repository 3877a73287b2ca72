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
 * {CTL_KIND_WL, ns, name}). owner [borrowed; copied; may be NULL] is the
 * job's object key whose reconciler sent it: that reconciler skips the
 * job while the write is in flight, so the answer (or the retry after a
 * failure) brings the job back, even when the Workload is gone by then. */
struct ctl_pipe_write *ctl_wl_write(ctl *c, enum ctl_pipe_kind kind,
    const char *ns, const char *name, json_t *patch, const char *const *owner)
{
	struct ctl_pipe_write *w = ctl_pipe_queue(
	    c->pipe, kind, CTL_RES(INF_WL), ns, name, NULL, patch);

	ctl_pipe_expect(
	    c->pipe, w, CTL_K3(CTL_KIND_WL, ns ? ns : "", name), true);
	ctl_pipe_set_owner(w, owner);
	return w;
}

/* Record an event about obj [borrowed] (a Job, JobSet or Workload as
 * cached), as Kueue's controller for it reports it: a new
 * events.k8s.io Event, or the next count of an identical one's series,
 * or nothing (spam filter). Events are sent with the turn's
 * writes; only real transitions call this (docs/architecture.md lesson 4). */
static void emit(ctl *c, json_t *obj, const char *type, const char *rc,
    const char *reason, const char *message)
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
	rec_events_kueue_meta(ev.kind, reason, type == NULL ? &ev.type : NULL,
	    &ev.reporting_controller);
	if (type != NULL)
		ev.type = type;
	if (rc != NULL)
		ev.reporting_controller = rc;
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

void ctl_emit(ctl *c, json_t *obj, const char *type, const char *reason,
    const char *message)
{
	emit(c, obj, type, NULL, reason, message);
}

void ctl_emit_as(ctl *c, json_t *obj, const char *rc, const char *reason,
    const char *message)
{
	emit(c, obj, NULL, rc, reason, message);
}
