/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/podsready.c - waitForPodsReady's controller side: the pods'
 * own cause of a job that waits for them, and blockAdmission's set of
 * admitted Workloads whose pods are not ready. The decisions (the
 * PodsReady condition, the timeout, the eviction and its backoff) are the
 * pure reconcilers' (reconcile/reconcile.h); this file gathers what they
 * cannot see.
 *
 * Root cause first: a job whose pods are not ready says why, from the
 * pods' PodScheduled=False message. The pods are not watched: a
 * cluster-wide pod informer would cache every pod of the cluster for the
 * few jobs that wait. Instead, only a job that waits (admitted, started,
 * its pods not all ready) gets a LIST of its own pods by label selector
 * (batch.kubernetes.io/controller-uid=<job uid>; a JobSet's
 * jobset.sigs.k8s.io/jobset-name=<name>), first CTL_PR_FIRST_MS after its
 * admission (at most a quarter of the timeout: a job whose status has not
 * caught up with its start is not listed), at most CTL_PR_LISTS at a
 * time, again after CTL_PR_RETRY_MS (doubling) while no pod says why and
 * every CTL_PR_REFRESH_MS while the job keeps waiting; a job that stops
 * waiting is forgotten. Event-loop thread only. Prefix ctl_pr_.
 */
#include <string.h>

#include "controller/ctl_int.h"

#define CTL_PR_LISTS 4
#define CTL_PR_FIRST_MS 1000 /* after the admission (<= timeout/4) */
#define CTL_PR_RETRY_MS 250
#define CTL_PR_RETRY_MAX_MS 4000
#define CTL_PR_REFRESH_MS 10000
#define MS (1000000LL)

/* A job's object key {kind, ns, name}, owned: the map key of its entry. */
struct jkey {
	char *part[3]; /* [owned] */
};

static int jkey_set(struct jkey *k, const char *const *key)
{
	unsigned i;

	for (i = 0; i < 3; i++)
		if ((k->part[i] = cu_strdup(key[i])) == NULL)
			return CU_ENOMEM;
	return CU_OK;
}

static void jkey_dispose(struct jkey *k)
{
	unsigned i;

	for (i = 0; i < 3; i++)
		cu_free(k->part[i]);
}

static void mark_job(ctl *c, const struct jkey *k)
{
	(void)ctl_keys_put(&c->dirty_jobs, (const char *const *)k->part);
}

struct ctl_pr_diag {
	ctl *c;
	struct jkey key;  /* the map key */
	char *ns;	  /* [owned] */
	char *selector;	  /* [owned] label selector of the job's pods */
	char *msg;	  /* [owned] the cause, NULL: none found */
	int32_t expected; /* pods the Workload expects */
	int64_t next_ns;  /* next LIST */
	int64_t delay_ns; /* retry delay while no cause is found */
	bool in_flight;	  /* a LIST runs */
	bool gone;	  /* out of the map: its answer frees it */
};

/* A job whose pods are ready while its Workload does not say so yet. */
struct ctl_pr_ready {
	struct jkey key;  /* the map key */
	int64_t since_ns; /* first seen ready */
	int64_t wake_ns;  /* reconcile the job again then; 0: no */
};

static void diag_free(struct ctl_pr_diag *d)
{
	if (d == NULL)
		return;
	jkey_dispose(&d->key);
	cu_free(d->ns);
	cu_free(d->selector);
	cu_free(d->msg);
	cu_free(d);
}

static void on_timer(struct ev_loop *loop, ev_timer *w, int revents);

/* Arm the timer for the earliest LIST due (none: stopped). */
static void arm(ctl *c)
{
	cu_map_iter it = CU_MAP_ITER_INIT;
	const void *k;
	void *v;
	int64_t first = INT64_MAX, now = cu_time_now_ns();

	while (cu_map_next(&c->pr.diag, &it, &k, &v)) {
		const struct ctl_pr_diag *d = v;

		if (!d->in_flight && d->next_ns < first)
			first = d->next_ns;
	}
	it = CU_MAP_ITER_INIT;
	while (cu_map_next(&c->pr.ready, &it, &k, &v)) {
		const struct ctl_pr_ready *r = v;

		if (r->wake_ns != 0 && r->wake_ns < first)
			first = r->wake_ns;
	}
	if (!c->pr.timer_init) {
		ev_timer_init(&c->pr.timer, on_timer, 0.0, 0.0);
		c->pr.timer.data = c;
		c->pr.timer_init = true;
	}
	if (c->pr.armed)
		ev_timer_stop(c->loop, &c->pr.timer);
	c->pr.armed = false;
	if (first == INT64_MAX || c->freeing)
		return;
	ev_timer_set(&c->pr.timer,
	    first > now ? cu_ns_to_secs(first - now) + 0.001 : 0.0, 0.0);
	ev_timer_start(c->loop, &c->pr.timer);
	c->pr.armed = true;
}

static void on_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	ctl *c = w->data;
	cu_map_iter it = CU_MAP_ITER_INIT;
	const void *k;
	void *v;
	int64_t now = cu_time_now_ns();

	(void)loop;
	(void)revents;
	c->pr.armed = false;
	while (cu_map_next(&c->pr.diag, &it, &k, &v)) {
		const struct ctl_pr_diag *d = v;

		if (!d->in_flight && d->next_ns <= now)
			mark_job(c, &d->key);
	}
	it = CU_MAP_ITER_INIT;
	while (cu_map_next(&c->pr.ready, &it, &k, &v)) {
		struct ctl_pr_ready *r = v;

		if (r->wake_ns != 0 && r->wake_ns <= now) {
			r->wake_ns = 0;
			mark_job(c, &r->key);
		}
	}
	arm(c);
}

static void on_list(const struct api_response *resp, void *payload)
{
	struct ctl_pr_diag *d = payload;
	ctl *c = d->c;
	int64_t now = cu_time_now_ns();
	char *msg;
	bool changed;

	d->in_flight = false;
	if (c->pr.lists > 0)
		c->pr.lists--;
	if (d->gone || resp->canceled || c->freeing) {
		if (d->gone)
			diag_free(d);
		return;
	}
	if (resp->err != CU_OK) {
		cu_debug("pods of %s/%s: %d %s", d->ns, d->key.part[2],
		    resp->code, resp->message);
		d->next_ns = now + CTL_PR_RETRY_MAX_MS * MS;
		arm(c);
		return;
	}
	msg = rec_pods_not_ready_message(resp->body, d->expected);
	changed = (msg == NULL) != (d->msg == NULL) ||
		  (msg != NULL && strcmp(msg, d->msg) != 0);
	if (msg != NULL) {
		cu_free(d->msg);
		d->msg = msg;
		d->next_ns = now + CTL_PR_REFRESH_MS * MS;
		d->delay_ns = CTL_PR_RETRY_MS * MS;
	} else {
		/* No pod says why (yet): the scheduler may not have tried
		 * them. Ask again soon, then less often. A cause found
		 * before stands until another one is. */
		d->next_ns = now + d->delay_ns;
		if (d->delay_ns < CTL_PR_RETRY_MAX_MS * MS)
			d->delay_ns *= 2;
		changed = false;
	}
	if (changed)
		mark_job(c, &d->key);
	arm(c);
}

/* Start the LIST of d's pods. */
static void list(ctl *c, struct ctl_pr_diag *d, int64_t now)
{
	char *q = api_escape(d->selector);
	char *path = q == NULL ? NULL
			       : cu_asprintf("/api/v1/namespaces/%s/pods?"
					     "labelSelector=%s",
				     d->ns, q);
	cu_error err;

	cu_free(q);
	if (path != NULL && api_request(NULL, c->client, "GET", path, NULL,
				NULL, on_list, d, &err) == CU_OK) {
		d->in_flight = true;
		c->pr.lists++;
	} else {
		d->next_ns = now + CTL_PR_RETRY_MAX_MS * MS;
	}
	cu_free(path);
}

const char *ctl_pr_cause(ctl *c, const char *const *job_key,
    const struct rec_job *j, const struct api_workload *wl, int64_t now)
{
	struct ctl_pr_diag *d = cu_map_get(&c->pr.diag, job_key);
	const struct api_meta *m = rec_job_meta(j);

	if (d == NULL) {
		d = cu_calloc(1, sizeof(*d));
		if (d == NULL)
			return NULL;
		d->c = c;
		d->ns = cu_strdup(m->namespace_ ? m->namespace_ : "");
		d->selector =
		    j->kind == REC_JOB_BATCH
			? cu_asprintf("batch.kubernetes.io/controller-uid=%s",
			      m->uid ? m->uid : "")
		    : j->kind == REC_JOB_JOBSET
			? cu_asprintf("jobset.sigs.k8s.io/jobset-name=%s",
			      m->name ? m->name : "")
			: cu_asprintf("training.kubeflow.org/job-name=%s",
			      m->name ? m->name : "");
		d->delay_ns = CTL_PR_RETRY_MS * MS;
		/* The first LIST once the job has had a moment to start its
		 * pods: a job that only just started (its status not updated
		 * yet) is not listed. */
		{
			const struct api_condition *ad = api_conditions_find(
			    &wl->status.conditions, REC_COND_ADMITTED);
			int64_t first = c->pr.cfg.timeout_ns / 4;

			if (first > CTL_PR_FIRST_MS * MS)
				first = CTL_PR_FIRST_MS * MS;
			d->next_ns = (ad != NULL && ad->has_last_transition
					     ? ad->last_transition_ns
					     : now) +
				     first;
		}
		if (jkey_set(&d->key, job_key) != CU_OK || d->ns == NULL ||
		    d->selector == NULL ||
		    cu_map_put(&c->pr.diag, d->key.part, d, NULL) != CU_OK) {
			diag_free(d);
			return NULL;
		}
	}
	d->expected = rec_wl_pod_count(wl);
	if (!d->in_flight && d->next_ns <= now) {
		if (c->pr.lists < CTL_PR_LISTS)
			list(c, d, now);
		else
			d->next_ns = now + CTL_PR_RETRY_MS * MS;
	}
	arm(c); /* the timer covers the next LIST */
	return d->msg;
}

void ctl_pr_done(ctl *c, const char *const *job_key)
{
	struct ctl_pr_diag *d = cu_map_del(&c->pr.diag, job_key);

	if (d == NULL)
		return;
	if (d->in_flight)
		d->gone = true; /* freed by its answer */
	else
		diag_free(d);
}

int64_t ctl_pr_ready_since(
    ctl *c, const char *const *job_key, bool need, int64_t now)
{
	struct ctl_pr_ready *r;

	if (!need) {
		r = cu_map_del(&c->pr.ready, job_key);
		if (r != NULL) {
			jkey_dispose(&r->key);
			cu_free(r);
		}
		return 0;
	}
	r = cu_map_get(&c->pr.ready, job_key);
	if (r != NULL)
		return r->since_ns;
	r = cu_calloc(1, sizeof(*r));
	if (r == NULL || jkey_set(&r->key, job_key) != CU_OK ||
	    cu_map_put(&c->pr.ready, r->key.part, r, NULL) != CU_OK) {
		if (r != NULL)
			jkey_dispose(&r->key);
		cu_free(r);
		return now;
	}
	r->since_ns = now;
	return now;
}

void ctl_pr_wake_job(ctl *c, const char *const *job_key, int64_t at_ns)
{
	struct ctl_pr_ready *r = cu_map_get(&c->pr.ready, job_key);

	if (r == NULL || r->wake_ns == at_ns)
		return;
	r->wake_ns = at_ns;
	arm(c);
}

void ctl_pr_track(ctl *c, const char *uid, bool not_ready)
{
	char *k;

	if (!c->pr.cfg.enable || !c->cfg->wait_for_pods_ready.block_admission ||
	    uid == NULL)
		return;
	if (not_ready) {
		if (cu_map_get(&c->pr.not_ready, uid) != NULL)
			return;
		k = cu_strdup(uid);
		if (k != NULL &&
		    cu_map_put(&c->pr.not_ready, k, k, NULL) != CU_OK)
			cu_free(k);
		return;
	}
	k = cu_map_del(&c->pr.not_ready, uid);
	if (k == NULL)
		return;
	cu_free(k);
	if (cu_map_count(&c->pr.not_ready) == 0)
		c->dirty_cycle = true; /* admissions may go on */
}

bool ctl_pr_blocked(const ctl *c)
{
	return c->pr.cfg.enable &&
	       c->cfg->wait_for_pods_ready.block_admission &&
	       cu_map_count(&c->pr.not_ready) > 0;
}

static const char *priority_class(const struct api_workload *wl)
{
	return wl->spec.has_priority_class_ref &&
		       wl->spec.priority_class_ref.name
		   ? wl->spec.priority_class_ref.name
		   : "";
}

void ctl_pr_ready_metrics(ctl *c, const struct api_workload *wl, int64_t now)
{
	const struct api_condition *rq =
	    api_conditions_find(&wl->status.conditions, REC_COND_REQUEUED);
	const struct api_condition *ad =
	    api_conditions_find(&wl->status.conditions, REC_COND_ADMITTED);
	const char *cq = wl->status.admission.cluster_queue
			     ? wl->status.admission.cluster_queue
			     : "";
	int64_t queued = rq != NULL && rq->has_last_transition
			     ? rq->last_transition_ns
			     : wl->meta.creation_ns;

	bool has_ad = ad != NULL && ad->has_last_transition;

	if (c->metrics == NULL)
		return;
	ctl_metric_observe(c->metrics, CTL_M_READY_WAIT_TIME_SECONDS,
	    CTL_LV(cq, priority_class(wl)), cu_ns_to_secs(now - queued));
	if (has_ad)
		ctl_metric_observe(c->metrics,
		    CTL_M_ADMITTED_UNTIL_READY_WAIT_TIME_SECONDS,
		    CTL_LV(cq, priority_class(wl)),
		    cu_ns_to_secs(now - ad->last_transition_ns));
	ctl_wm_ready(c, wl, cu_ns_to_secs(now - queued),
	    has_ad ? cu_ns_to_secs(now - ad->last_transition_ns) : 0, has_ad);
}

void ctl_pr_evicted_metrics(ctl *c, const struct api_workload *wl,
    const char *cq, const char *reason, const char *cause, int64_t now)
{
	const struct api_condition *pr =
	    api_conditions_find(&wl->status.conditions, REC_COND_PODS_READY);

	if (c->metrics == NULL || pr == NULL || pr->status != API_COND_TRUE ||
	    !pr->has_last_transition)
		return;
	ctl_metric_observe(c->metrics, CTL_M_PODS_READY_TO_EVICTED_TIME_SECONDS,
	    CTL_LV(cq ? cq : "", reason ? reason : "", cause ? cause : ""),
	    cu_ns_to_secs(now - pr->last_transition_ns));
}

int ctl_pr_init(ctl *c)
{
	const struct ctl_config *cfg = c->cfg;

	cu_map_init_str(&c->pr.not_ready);
	cu_map_init_parts(&c->pr.diag, 3);
	cu_map_init_parts(&c->pr.ready, 3);
	c->pr.cfg.enable = cfg->wait_for_pods_ready.enable;
	c->pr.cfg.timeout_ns = cfg->wait_for_pods_ready.timeout_ns;
	c->pr.cfg.has_recovery =
	    cfg->wait_for_pods_ready.recovery_timeout_ns > 0;
	c->pr.cfg.recovery_timeout_ns =
	    cfg->wait_for_pods_ready.recovery_timeout_ns;
	c->pr.cfg.creation_timestamp =
	    cfg->wait_for_pods_ready.timestamp == CTL_REQUEUE_CREATION;
	c->pr.cfg.has_backoff_limit =
	    cfg->wait_for_pods_ready.has_backoff_limit_count;
	c->pr.cfg.backoff_limit_count =
	    cfg->wait_for_pods_ready.backoff_limit_count;
	c->pr.cfg.backoff_base_s =
	    cfg->wait_for_pods_ready.backoff_base_seconds;
	c->pr.cfg.backoff_max_s = cfg->wait_for_pods_ready.backoff_max_seconds;
	return CU_OK;
}

void ctl_pr_dispose(ctl *c)
{
	cu_map_iter it = CU_MAP_ITER_INIT;
	const void *k;
	void *v;

	if (c->pr.armed)
		ev_timer_stop(c->loop, &c->pr.timer);
	c->pr.armed = false;
	while (cu_map_next(&c->pr.diag, &it, &k, &v))
		diag_free(v);
	cu_map_dispose(&c->pr.diag);
	it = CU_MAP_ITER_INIT;
	while (cu_map_next(&c->pr.ready, &it, &k, &v)) {
		struct ctl_pr_ready *r = v;

		jkey_dispose(&r->key);
		cu_free(r);
	}
	cu_map_dispose(&c->pr.ready);
	it = CU_MAP_ITER_INIT;
	while (cu_map_next(&c->pr.not_ready, &it, &k, &v))
		cu_free(v);
	cu_map_dispose(&c->pr.not_ready);
}
