/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/wlmetrics.c - Kueue's per-Workload metrics, fed where the
 * event happens: a quota reservation or an admission answered, an
 * eviction written, an eviction's quota released, a Workload first seen
 * finished or gone, its unadmitted status changed; and the series of a
 * deleted ClusterQueue or LocalQueue removed. Each call costs O(1) (plus the
 * cohort depth for the cohort subtree counters): nothing here walks the
 * Workloads.
 *
 * Labels follow Kueue: priority_class is spec.priorityClassRef.name ("" when
 * unset); the LocalQueue families only with metrics.localQueueMetrics (and
 * the LocalQueue in its localQueueSelector).
 */
#include <stdio.h>
#include <string.h>

#include "controller/ctl_int.h"

/* reason, underlying cause and LocalQueue name, with two separators */
#define CTL_WM_STATUS_LEN 1024

static const char *jstr(json_t *obj, const char *a, const char *b)
{
	return json_string_value(json_object_get(json_object_get(obj, a), b));
}

static const char *or_empty(const char *s)
{
	return s != NULL ? s : "";
}

const char *ctl_wm_priority_class(const struct api_workload *wl)
{
	return wl != NULL && wl->spec.has_priority_class_ref &&
		       wl->spec.priority_class_ref.name != NULL
		   ? wl->spec.priority_class_ref.name
		   : "";
}

void ctl_wm_labels_json(
    ctl *c, struct ctl_wm_labels *l, json_t *wl, const char *cq)
{
	json_t *pc =
	    json_object_get(json_object_get(wl, "spec"), "priorityClassRef");
	json_t *lq;

	l->cq = or_empty(cq);
	l->ns = or_empty(jstr(wl, "metadata", "namespace"));
	l->lq = or_empty(jstr(wl, "spec", "queueName"));
	l->pc = or_empty(json_string_value(json_object_get(pc, "name")));
	lq = l->lq[0] != '\0' && c->inf[INF_LQ] != NULL
		 ? api_informer_get(c->inf[INF_LQ], l->ns, l->lq)
		 : NULL;
	l->lq_on = lq != NULL && ctl_lq_reported(c, lq);
	l->has_wlv = l->lq_on && ctl_metrics_labels_wl_values(c, wl, l->wlv);
}

void ctl_wm_labels(ctl *c, struct ctl_wm_labels *l,
    const struct api_workload *wl, const char *cq)
{
	json_t *lq;

	l->cq = or_empty(cq);
	l->ns = or_empty(wl->meta.namespace_);
	l->lq = or_empty(wl->spec.queue_name);
	l->pc = ctl_wm_priority_class(wl);
	lq = l->lq[0] != '\0' && c->inf[INF_LQ] != NULL
		 ? api_informer_get(c->inf[INF_LQ], l->ns, l->lq)
		 : NULL;
	l->lq_on = lq != NULL && ctl_lq_reported(c, lq);
	l->has_wlv =
	    l->lq_on && ctl_metrics_labels_wl_values(c, wl->raw, l->wlv);
}

void ctl_wm_quota_reserved(ctl *c, const struct ctl_wm_labels *l, double wait_s)
{
	if (c->metrics == NULL)
		return;
	ctl_metric_inc(c->metrics, CTL_M_QUOTA_RESERVED_WORKLOADS_TOTAL,
	    CTL_LV(l->cq, l->pc));
	ctl_metric_observe(c->metrics, CTL_M_QUOTA_RESERVED_WAIT_TIME_SECONDS,
	    CTL_LV(l->cq, l->pc), wait_s);
	if (!l->lq_on)
		return;
	ctl_metric_inc(c->metrics,
	    CTL_M_LOCAL_QUEUE_QUOTA_RESERVED_WORKLOADS_TOTAL,
	    CTL_LV(l->lq, l->ns, l->pc));
	ctl_metric_observe(c->metrics,
	    CTL_M_LOCAL_QUEUE_QUOTA_RESERVED_WAIT_TIME_SECONDS,
	    CTL_LV(l->lq, l->ns, l->pc), wait_s);
}

void ctl_wm_admitted(ctl *c, const struct ctl_wm_labels *l, double wait_s)
{
	struct que_cq *cq;
	const struct que_cohort *co;

	if (c->metrics == NULL)
		return;
	ctl_metric_inc(
	    c->metrics, CTL_M_ADMITTED_WORKLOADS_TOTAL, CTL_LV(l->cq, l->pc));
	ctl_metric_observe(c->metrics, CTL_M_ADMISSION_WAIT_TIME_SECONDS,
	    CTL_LV(l->cq, l->pc), wait_s);
	/* Every cohort above the ClusterQueue (none in a cycle). */
	cq = l->cq[0] != '\0' && c->cfg->metrics.cohorts
		 ? que_cq_get(c->st, l->cq)
		 : NULL;
	for (co = cq != NULL ? cq->node.parent : NULL;
	     co != NULL && !co->in_cycle; co = co->node.parent)
		ctl_metric_inc(c->metrics,
		    CTL_M_COHORT_SUBTREE_ADMITTED_WORKLOADS_TOTAL,
		    CTL_LV(co->name, l->pc));
	if (!l->lq_on)
		return;
	ctl_metric_inc_wl(c->metrics,
	    CTL_M_LOCAL_QUEUE_ADMITTED_WORKLOADS_TOTAL,
	    CTL_LV(l->lq, l->ns, l->pc), l->has_wlv ? l->wlv : NULL);
	ctl_metric_observe_wl(c->metrics,
	    CTL_M_LOCAL_QUEUE_ADMISSION_WAIT_TIME_SECONDS,
	    CTL_LV(l->lq, l->ns, l->pc), l->has_wlv ? l->wlv : NULL, wait_s);
}

int64_t ctl_wm_queued_ns(const struct api_workload *wl)
{
	const struct api_condition *rq =
	    api_conditions_find(&wl->status.conditions, REC_COND_REQUEUED);

	return rq != NULL && rq->has_last_transition ? rq->last_transition_ns
						     : wl->meta.creation_ns;
}

/* Has wl [borrowed] never been evicted for (reason, cause) before, as
 * its status.schedulingStats.evictions count? */
static bool first_eviction(
    const struct api_workload *wl, const char *reason, const char *cause)
{
	json_t *ev =
	    json_object_get(json_object_get(json_object_get(wl->raw, "status"),
				"schedulingStats"),
		"evictions");
	json_t *e;
	size_t i;

	json_array_foreach(ev, i, e)
	{
		const char *r = json_string_value(json_object_get(e, "reason"));
		const char *u =
		    json_string_value(json_object_get(e, "underlyingCause"));

		if (r != NULL && strcmp(r, reason) == 0 &&
		    strcmp(or_empty(u), cause) == 0)
			return json_integer_value(
				   json_object_get(e, "count")) <= 0;
	}
	return true;
}

void ctl_wm_evicted(ctl *c, const struct api_workload *wl, const char *cq,
    const char *reason, const char *cause)
{
	struct ctl_wm_labels l;

	if (c->metrics == NULL || reason == NULL)
		return;
	cause = or_empty(cause);
	ctl_wm_labels(c, &l, wl, cq);
	ctl_metric_inc(c->metrics, CTL_M_EVICTED_WORKLOADS_TOTAL,
	    CTL_LV(l.cq, reason, cause, l.pc));
	if (first_eviction(wl, reason, cause))
		ctl_metric_inc(c->metrics, CTL_M_EVICTED_WORKLOADS_ONCE_TOTAL,
		    CTL_LV(l.cq, reason, cause, l.pc));
	if (l.lq_on)
		ctl_metric_inc(c->metrics,
		    CTL_M_LOCAL_QUEUE_EVICTED_WORKLOADS_TOTAL,
		    CTL_LV(l.lq, l.ns, reason, cause, l.pc));
}

void ctl_wm_released(
    ctl *c, const struct api_workload *wl, const char *cq, int64_t now)
{
	const struct api_condition *ev =
	    api_conditions_find(&wl->status.conditions, REC_COND_EVICTED);
	double s;

	if (c->metrics == NULL || ev == NULL || ev->status != API_COND_TRUE ||
	    !ev->has_last_transition)
		return;
	if (wl->status.has_admission && wl->status.admission.cluster_queue)
		cq = wl->status.admission.cluster_queue;
	if (cq == NULL || cq[0] == '\0')
		return;
	s = cu_ns_to_secs(now - ev->last_transition_ns);
	ctl_metric_observe(c->metrics, CTL_M_WORKLOAD_EVICTION_LATENCY_SECONDS,
	    CTL_LV(cq, or_empty(ev->reason)), s > 0 ? s : 0);
}

void ctl_wm_ready(ctl *c, const struct api_workload *wl, double queued_s,
    double admitted_s, bool has_admitted)
{
	struct ctl_wm_labels l;

	if (c->metrics == NULL)
		return;
	ctl_wm_labels(c, &l, wl, wl->status.admission.cluster_queue);
	if (!l.lq_on)
		return;
	ctl_metric_observe(c->metrics,
	    CTL_M_LOCAL_QUEUE_READY_WAIT_TIME_SECONDS, CTL_LV(l.lq, l.ns, l.pc),
	    queued_s);
	if (has_admitted)
		ctl_metric_observe(c->metrics,
		    CTL_M_LOCAL_QUEUE_ADMITTED_UNTIL_READY_WAIT_TIME_SECONDS,
		    CTL_LV(l.lq, l.ns, l.pc), admitted_s);
}

/* ---- finished Workloads ---------------------------------------------- */

/* The finished set: {ns, name} -> s[0] ClusterQueue, s[1] LocalQueue
 * name, n 1 when counted in the LocalQueue gauge. */

/* Add d to a gauge, never below 0: the series of a deleted queue go
 * (ctl_wm_forget_*) while the set still holds its Workloads. */
static void add_floor0(
    ctl *c, enum ctl_metric_id id, const char *const *lv, size_t nlv, double d)
{
	double v;

	ctl_metric_gauge_add(c->metrics, id, lv, nlv, d);
	if (ctl_metric_value(&v, c->metrics, id, lv, nlv) == CU_OK && v < 0)
		ctl_metric_set(c->metrics, id, lv, nlv, 0.0);
}

static void finished_gauges(ctl *c, const struct ctl_kent *e, double d)
{
	if (c->metrics == NULL)
		return;
	add_floor0(c, CTL_M_FINISHED_WORKLOADS, CTL_LV(e->s[0]), d);
	if (e->n)
		add_floor0(c, CTL_M_LOCAL_QUEUE_FINISHED_WORKLOADS,
		    CTL_LV(e->s[1], e->k[0]), d);
}

/* Kueue's TotalExecutionTime: Admitted and Finished True; the time from
 * the one to the other plus what ran before evictions. */
static bool execution_time(const struct api_workload *wl, double *out)
{
	const struct api_condition *ad =
	    api_conditions_find(&wl->status.conditions, REC_COND_ADMITTED);
	const struct api_condition *fi =
	    api_conditions_find(&wl->status.conditions, REC_COND_FINISHED);
	double s;

	if (ad == NULL || ad->status != API_COND_TRUE ||
	    !ad->has_last_transition || fi == NULL ||
	    fi->status != API_COND_TRUE || !fi->has_last_transition)
		return false;
	s = cu_ns_to_secs(fi->last_transition_ns - ad->last_transition_ns);
	if (wl->status.has_accumulated_past_execution_time_seconds)
		s += wl->status.accumulated_past_execution_time_seconds;
	*out = s > 0 ? s : 0;
	return true;
}

static void finished_seen(
    ctl *c, const char *const *key, const struct api_workload *wl)
{
	struct ctl_kent *e = ctl_keys_get(&c->wm.finished, key);
	const struct api_condition *fi =
	    wl != NULL
		? api_conditions_find(&wl->status.conditions, REC_COND_FINISHED)
		: NULL;
	struct ctl_wm_labels l;
	double xs;

	if (fi == NULL || fi->status != API_COND_TRUE) {
		/* Gone (or, recreated under its name, not finished). */
		if (e != NULL) {
			finished_gauges(c, e, -1.0);
			ctl_keys_del(&c->wm.finished, key);
		}
		return;
	}
	if (e != NULL)
		return;
	ctl_wm_labels(c, &l, wl,
	    wl->status.has_admission ? wl->status.admission.cluster_queue
				     : NULL);
	e = ctl_keys_put(&c->wm.finished, key);
	if (e == NULL || ctl_keys_set_str(e, 0, l.cq) != CU_OK ||
	    ctl_keys_set_str(e, 1, l.lq) != CU_OK) {
		if (e != NULL)
			ctl_keys_del(&c->wm.finished, key);
		return;
	}
	e->n = l.lq_on;
	finished_gauges(c, e, 1.0);
	/* The counters only for a Workload that finished while this process
	 * ran, as Kueue counts the transitions it watches: not again for
	 * every finished Workload listed after a restart. */
	if (c->metrics == NULL || !fi->has_last_transition ||
	    fi->last_transition_ns / CU_NS_PER_S <
		c->wm.started_ns / CU_NS_PER_S)
		return;
	ctl_metric_inc(
	    c->metrics, CTL_M_FINISHED_WORKLOADS_TOTAL, CTL_LV(l.cq, l.pc));
	if (l.lq_on)
		ctl_metric_inc(c->metrics,
		    CTL_M_LOCAL_QUEUE_FINISHED_WORKLOADS_TOTAL,
		    CTL_LV(l.lq, l.ns, l.pc));
	if (!execution_time(wl, &xs))
		return;
	ctl_metric_observe(
	    c->metrics, CTL_M_EXECUTION_TIME_SECONDS, CTL_LV(l.cq, l.pc), xs);
	if (l.lq_on)
		ctl_metric_observe(c->metrics,
		    CTL_M_LOCAL_QUEUE_EXECUTION_TIME_SECONDS,
		    CTL_LV(l.lq, l.ns, l.pc), xs);
}

/* ---- unadmitted Workloads -------------------------------------------- */

#define SEP '\x1f'

/* Add d to the unadmitted gauges of tag's labels; a series at 0 goes. */
static void unadmitted_add(ctl *c, uint32_t tag, double d)
{
	const struct ctl_kent *e = c->wm.tags[tag - 1].e;
	char buf[CTL_WM_STATUS_LEN];
	char *reason = buf, *cause, *lq;
	const char *ns = e->k[0], *cq = e->k[1];
	bool lq_on = e->k[2][0] == '1';
	double v;

	snprintf(buf, sizeof(buf), "%s", e->k[2] + 1);
	cause = strchr(reason, SEP);
	lq = cause != NULL ? strchr(cause + 1, SEP) : NULL;
	if (cause == NULL || lq == NULL)
		return;
	*cause++ = '\0';
	*lq++ = '\0';
	ctl_metric_gauge_add(c->metrics, CTL_M_UNADMITTED_WORKLOADS,
	    CTL_LV(cq, reason, cause), d);
	if (ctl_metric_value(&v, c->metrics, CTL_M_UNADMITTED_WORKLOADS,
		CTL_LV(cq, reason, cause)) == CU_OK &&
	    v <= 0)
		(void)ctl_metric_remove(c->metrics, CTL_M_UNADMITTED_WORKLOADS,
		    CTL_LV(cq, reason, cause));
	if (!lq_on)
		return;
	ctl_metric_gauge_add(c->metrics, CTL_M_LOCAL_QUEUE_UNADMITTED_WORKLOADS,
	    CTL_LV(lq, ns, cq, reason, cause), d);
	if (ctl_metric_value(&v, c->metrics,
		CTL_M_LOCAL_QUEUE_UNADMITTED_WORKLOADS,
		CTL_LV(lq, ns, cq, reason, cause)) == CU_OK &&
	    v <= 0)
		(void)ctl_metric_remove(c->metrics,
		    CTL_M_LOCAL_QUEUE_UNADMITTED_WORKLOADS,
		    CTL_LV(lq, ns, cq, reason, cause));
}

/* The tag of the labels key [borrowed], taken once more (interned on
 * first use); 0: out of memory. */
static uint32_t tag_take(ctl *c, const char *const *key)
{
	struct ctl_wm *w = &c->wm;
	struct ctl_kent *e = ctl_keys_get(&w->labels, key);
	uint32_t i;

	if (e != NULL) {
		w->tags[e->n - 1].refs++;
		return (uint32_t)e->n;
	}
	if (w->free_tag == 0 &&
	    (w->n_tags >= UINT32_MAX - 1 ||
		cu_grow((void **)&w->tags, &w->cap_tags, w->n_tags + 1,
		    sizeof(*w->tags)) != CU_OK))
		return 0;
	if ((e = ctl_keys_put(&w->labels, key)) == NULL)
		return 0;
	if (w->free_tag != 0) {
		i = w->free_tag - 1;
		w->free_tag = w->tags[i].refs;
	} else {
		i = (uint32_t)w->n_tags++;
	}
	w->tags[i].e = e;
	w->tags[i].refs = 1;
	e->n = (int64_t)i + 1;
	return i + 1;
}

/* One holder of tag fewer: its gauges count one Workload less, and the
 * labels go with the last holder. */
static void tag_drop(ctl *c, uint32_t tag)
{
	struct ctl_wm_tag *t = &c->wm.tags[tag - 1];

	unadmitted_add(c, tag, -1.0);
	if (--t->refs > 0)
		return;
	ctl_keys_del(&c->wm.labels, (const char *const *)t->e->k);
	t->e = NULL;
	t->refs = c->wm.free_tag;
	c->wm.free_tag = tag;
}

/* The queue model's forget hook: a record holding a tag went. */
static void on_forget(uint32_t tag, void *payload)
{
	tag_drop(payload, tag);
}

/* Kueue's unadmitted status of wl [borrowed; NULL: gone] into status
 * ("reason SEP cause SEP LocalQueue"): false when it is admitted,
 * finished, being deleted, deactivated or gone, or with the
 * UnadmittedWorkloadsObservability gate off. */
static bool unadmitted_status(
    ctl *c, const struct api_workload *wl, char *status, size_t size)
{
	const struct api_condition *ad, *qr;
	const char *cause;

	if (wl == NULL || wl->meta.has_deletion ||
	    !c->cfg->metrics.unadmitted ||
	    (wl->spec.has_active && !wl->spec.active) ||
	    api_conditions_true(&wl->status.conditions, REC_COND_ADMITTED) ||
	    api_conditions_true(&wl->status.conditions, REC_COND_FINISHED))
		return false;
	ad = api_conditions_find(&wl->status.conditions, REC_COND_ADMITTED);
	qr = api_conditions_find(
	    &wl->status.conditions, REC_COND_QUOTA_RESERVED);
	cause = qr == NULL		      ? "PendingEvaluation"
		: qr->status == API_COND_TRUE ? ""
					      : or_empty(qr->reason);
	snprintf(status, size, "%s%c%s%c%s",
	    ad != NULL && ad->reason != NULL ? ad->reason : "NoReservation",
	    SEP, cause, SEP, or_empty(wl->spec.queue_name));
	return true;
}

/* The labels wl [borrowed] is counted under, into status (the third part
 * of a labels key) and *cq [borrowed]; false: not counted. */
static bool unadmitted_labels(ctl *c, const char *ns,
    const struct api_workload *wl, char *status, size_t size, const char **cq)
{
	const struct que_lq *lq;
	json_t *lqobj;

	*cq = "";
	if (!unadmitted_status(c, wl, status + 1, size - 1))
		return false;
	lq = wl->spec.queue_name != NULL
		 ? que_lq_get(c->st, ns, wl->spec.queue_name)
		 : NULL;
	lqobj = lq != NULL && c->inf[INF_LQ] != NULL
		    ? api_informer_get(c->inf[INF_LQ], ns, wl->spec.queue_name)
		    : NULL;
	*cq = lq != NULL ? or_empty(lq->cq_name) : "";
	status[0] = lqobj != NULL && ctl_lq_reported(c, lqobj) ? '1' : '0';
	return true;
}

/* Where a Workload's tag lives: in the queue model's record of this
 * Workload when there is one (the record's uid is wl's; when wl is gone,
 * the record of its name), else in the controller's own entry of {ns,
 * name}; never in both. */
static void unadmitted_seen(
    ctl *c, const char *const *key, const struct api_workload *wl)
{
	char status[CTL_WM_STATUS_LEN];
	const char *cq;
	struct ctl_kent *e;
	struct que_wl *r;
	uint32_t rt, et, cur, nt = 0;
	bool is;

	if (c->metrics == NULL)
		return;
	if (!c->wm.hooked) {
		que_set_forget_hook(c->st, on_forget, c);
		c->wm.hooked = true;
	}
	is = unadmitted_labels(c, key[0], wl, status, sizeof(status), &cq);
	r = que_workload_by_name(c->st, key[0], key[1]);
	if (r != NULL && wl != NULL && strcmp(r->uid, wl->meta.uid) != 0)
		r = NULL; /* an older Workload of that name */
	e = ctl_keys_get(&c->wm.unadmitted, key);
	rt = r != NULL ? r->tag : 0;
	et = e != NULL ? (uint32_t)e->n : 0;
	cur = r != NULL ? (et == 0 ? rt : 0) : et;
	if (is && cur != 0 && strcmp(c->wm.tags[cur - 1].e->k[1], cq) == 0 &&
	    strcmp(c->wm.tags[cur - 1].e->k[2], status) == 0)
		return; /* counted where it belongs, under these labels */
	if (is && (nt = tag_take(c, CTL_K3(key[0], cq, status))) != 0)
		unadmitted_add(c, nt, 1.0);
	if (rt != 0) {
		r->tag = 0;
		tag_drop(c, rt);
	}
	if (e != NULL) {
		ctl_keys_del(&c->wm.unadmitted, key);
		if (et != 0)
			tag_drop(c, et);
	}
	if (nt == 0)
		return;
	if (r != NULL)
		r->tag = nt;
	else if ((e = ctl_keys_put(&c->wm.unadmitted, key)) != NULL)
		e->n = nt;
	else
		tag_drop(c, nt); /* out of memory: not counted */
}

/* ---- created Workloads ---------------------------------------------- */

void ctl_wm_created(ctl *c, json_t *wl)
{
	json_t *refs =
	    json_object_get(json_object_get(wl, "metadata"), "ownerReferences");
	const char *ns = jstr(wl, "metadata", "namespace");
	const char *kind = NULL, *name = NULL, *ts;
	json_t *r, *job = NULL;
	int64_t job_ns, wl_ns;
	size_t i;
	cu_error err;

	if (c->metrics == NULL || ns == NULL ||
	    !c->cfg->metrics.creation_latency)
		return;
	json_array_foreach(refs, i, r)
	{
		if (!json_is_true(json_object_get(r, "controller")))
			continue;
		kind = json_string_value(json_object_get(r, "kind"));
		name = json_string_value(json_object_get(r, "name"));
		break;
	}
	if (kind != NULL && name != NULL && ctl_fw_inf(kind) != INF__COUNT &&
	    c->inf[ctl_fw_inf(kind)] != NULL)
		job = api_informer_get(c->inf[ctl_fw_inf(kind)], ns, name);
	/* As Kueue: jobs of generation 1 only (not one changed since). */
	if (job == NULL ||
	    json_integer_value(json_object_get(
		json_object_get(job, "metadata"), "generation")) > 1 ||
	    (ts = jstr(job, "metadata", "creationTimestamp")) == NULL ||
	    cu_time_parse(ts, &job_ns, &err) != CU_OK ||
	    (ts = jstr(wl, "metadata", "creationTimestamp")) == NULL ||
	    cu_time_parse(ts, &wl_ns, &err) != CU_OK)
		return;
	ctl_metric_observe(c->metrics, CTL_M_WORKLOAD_CREATION_LATENCY_SECONDS,
	    CTL_LV(kind), cu_ns_to_secs(wl_ns - job_ns));
}

void ctl_wm_seen(ctl *c, const char *const *key, const struct api_workload *wl)
{
	unadmitted_seen(c, key, wl);
	finished_seen(c, key, wl);
}

/* ---- deleted queues -------------------------------------------------- */

void ctl_wm_forget_cq(ctl *c, const char *name)
{
	if (c->metrics == NULL)
		return;
	(void)ctl_metrics_remove_label(c->metrics, "cluster_queue", name);
	(void)ctl_metrics_remove_label(
	    c->metrics, "preempting_cluster_queue", name);
}

void ctl_wm_forget_lq(ctl *c, const char *ns, const char *name)
{
	if (c->metrics == NULL)
		return;
	(void)ctl_metrics_remove_match(c->metrics, CTL_M__COUNT,
	    CTL_LV("name", "namespace"), CTL_LV(name, ns));
}

int ctl_wm_init(ctl *c)
{
	ctl_keys_init(&c->wm.finished, 2);
	ctl_keys_init(&c->wm.unadmitted, 2);
	ctl_keys_init(&c->wm.labels, 3);
	c->wm.started_ns = cu_time_now_ns();
	return CU_OK;
}

void ctl_wm_dispose(ctl *c)
{
	ctl_keys_dispose(&c->wm.finished);
	ctl_keys_dispose(&c->wm.unadmitted);
	ctl_keys_dispose(&c->wm.labels);
	cu_free(c->wm.tags);
}
