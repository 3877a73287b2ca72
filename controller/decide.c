/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/decide.c - the scheduling cycle: the engine's decisions become
 * ledger records and queued writes (admissions, evictions of preemption
 * victims, pending reasons), and the answers to those writes confirm or
 * withdraw them (the pipeline's settle hook).
 *
 * Invariant (docs/architecture.md lesson 3): a decision is recorded in
 * the ledger before the write announcing it is queued; the pipeline
 * commits the ledger before sending it.
 */
#include <string.h>

#include "controller/ctl_int.h"

/*
 * Withdraw a decision that will not be announced (its write failed or was
 * never sent): an ADMITTED Workload gives its quota back and waits again
 * with its old timestamp. One chosen as a preemption victim meanwhile
 * (EVICTING) was never admitted in the API, so its eviction is over:
 * released and requeued - leaving it EVICTING would hold its quota with
 * nothing left to release it. Failures are only logged (the Workload is
 * then reconciled again from the API).
 */
void ctl_withdraw(ctl *c, const char *uid, int64_t now)
{
	struct que_wl *qw = que_workload_get(c->st, uid);
	cu_error err;
	int rc;

	if (qw == NULL)
		return;
	if (qw->where == QUE_WL_EVICTING)
		rc = que_workload_release(c->st, uid, now, &err);
	else if (qw->where == QUE_WL_ADMITTED)
		rc = que_workload_unadmit(c->st, uid, &err);
	else
		return;
	if (rc != CU_OK)
		cu_warn("engine: %s", err.msg);
	ctl_pr_track(c, uid, false);
	c->dirty_cycle = true;
}

void ctl_ledger_release(ctl *c, const char *uid, int64_t now)
{
	cu_error err;

	if (ctl_pipe_begin(c->pipe) != CU_OK)
		return;
	if (store_decision_delete(c->ledger, uid, &err) != CU_OK &&
	    err.code != CU_ENOTFOUND)
		cu_warn("ledger: %s", err.msg);
	(void)now;
}

enum rec_ledger_state ctl_ledger_state(ctl *c, const char *uid)
{
	store_decision *sd = NULL;
	enum rec_ledger_state st = REC_LEDGER_NONE;
	cu_error err;

	if (uid == NULL || c->ledger == NULL)
		return REC_LEDGER_NONE;
	if (store_decision_get(c->ledger, uid, &sd, &err) != CU_OK) {
		if (err.code != CU_ENOTFOUND)
			cu_warn("ledger: %s", err.msg);
		return REC_LEDGER_NONE;
	}
	switch (sd->state) {
	case STORE_RESERVED:
		st = REC_LEDGER_RESERVED;
		break;
	case STORE_ADMITTED:
		st = REC_LEDGER_ADMITTED;
		break;
	case STORE_EVICTING:
		st = REC_LEDGER_EVICTING;
		break;
	default:
		break;
	}
	store_decision_free(sd);
	return st;
}

int ctl_decode_cached(
    ctl *c, const char *ns, const char *name, struct api_workload *wl)
{
	json_t *obj = api_informer_get(c->inf[INF_WL], ns, name);
	cu_error err = {0}; /* an out parameter; cppcheck's CTU flags it */

	if (obj == NULL)
		return CU_ENOTFOUND;
	if (api_workload_decode(wl, obj, &err) != CU_OK) {
		cu_warn("workload %s/%s: %s", ns, name, err.msg);
		return err.code;
	}
	return CU_OK;
}

static int record_admission(ctl *c, const struct que_wl *qw,
    const struct adm_decision *d, int64_t now, cu_error *err)
{
	store_podset *ps = cu_calloc(d->n_podsets + 1, sizeof(*ps));
	store_resource **rs = cu_calloc(d->n_podsets + 1, sizeof(*rs));
	store_decision sd;
	size_t i, j;
	int rc = CU_ENOMEM;

	if (ps == NULL || rs == NULL)
		goto out;
	for (i = 0; i < d->n_podsets; i++) {
		rs[i] = cu_calloc(d->podsets[i].n_uses + 1, sizeof(**rs));
		if (rs[i] == NULL)
			goto out;
		for (j = 0; j < d->podsets[i].n_uses; j++) {
			rs[i][j].resource = d->podsets[i].uses[j].resource;
			rs[i][j].flavor = d->podsets[i].uses[j].flavor;
			rs[i][j].milli = d->podsets[i].uses[j].usage;
		}
		ps[i].name = d->podsets[i].name;
		ps[i].count = d->podsets[i].count;
		ps[i].n_resources = d->podsets[i].n_uses;
		ps[i].resources = rs[i];
		ps[i].topology = ctl_tas_ledger_text(c, qw->uid, i);
	}
	memset(&sd, 0, sizeof(sd));
	sd.uid = qw->uid;
	sd.ns = qw->ns;
	sd.name = qw->name;
	sd.cluster_queue = d->cluster_queue;
	sd.state = STORE_RESERVED;
	sd.decided_ns = now;
	sd.generation = qw->generation;
	sd.n_podsets = d->n_podsets;
	sd.podsets = ps;
	rc = ctl_pipe_begin(c->pipe);
	if (rc == CU_OK)
		rc = store_decision_put(c->ledger, &sd, NULL, err);
out:
	if (rc == CU_ENOMEM)
		cu_error_set(err, CU_ENOMEM, "ledger record: out of memory");
	for (i = 0; rs != NULL && i < d->n_podsets; i++)
		cu_free(rs[i]);
	for (i = 0; ps != NULL && i < d->n_podsets; i++)
		cu_free((char *)ps[i].topology);
	cu_free(rs);
	cu_free(ps);
	return rc;
}

/* Queue qw's admission patch [consumed] with the note [consumed] of its
 * QuotaReserved event. The decision is in flight until the answer
 * (invariant 3); the write is expected in the cache like any other, but
 * not marked busy: in_flight holds the Workload. */
void ctl_queue_admit(ctl *c, const struct que_wl *qw, json_t *patch, char *note)
{
	struct ctl_pipe_write *w;
	/* With admission checks pending the write reserves quota only: its
	 * events are QuotaReserved alone (ev_reason says so). */
	bool quota_only = rec_acheck_patch_admitted(patch) == 0;

	(void)ctl_keys_put(&c->dec.in_flight, CTL_K1(qw->uid));
	w = ctl_pipe_queue(c->pipe, CTL_PIPE_ADMIT, CTL_RES(INF_WL), qw->ns,
	    qw->name, qw->uid, patch);
	ctl_pipe_expect(
	    c->pipe, w, CTL_K3(CTL_KIND_WL, qw->ns, qw->name), false);
	ctl_pipe_set_event(w, quota_only ? "QuotaReserved" : NULL, note);
	/* Kueue's wait times start at creation, or the last requeue. */
	ctl_pipe_set_admission(w, qw->queue_ts, qw->cq ? qw->cq->name : NULL);
}

/* The admission metrics of a Workload wl [borrowed] its checks admit
 * (Kueue's admitted counters and the admission-check wait times). */
static void checks_admitted_metrics(
    ctl *c, const struct api_workload *wl, int64_t now)
{
	const char *cq = wl->status.admission.cluster_queue;
	const struct api_condition *qr = api_conditions_find(
	    &wl->status.conditions, REC_COND_QUOTA_RESERVED);
	const char *ns = wl->meta.namespace_, *lq = wl->spec.queue_name;
	struct ctl_wm_labels l;
	json_t *cached;
	double wait;

	if (c->metrics == NULL || cq == NULL)
		return;
	ctl_wm_labels(c, &l, wl, cq);
	ctl_wm_admitted(c, &l, cu_ns_to_secs(now - ctl_wm_queued_ns(wl)));
	if (qr == NULL || !qr->has_last_transition)
		return;
	wait = cu_ns_to_secs(now - qr->last_transition_ns);
	ctl_metric_observe(c->metrics, CTL_M_ADMISSION_CHECKS_WAIT_TIME_SECONDS,
	    CTL_LV(cq, l.pc), wait);
	/* Its LocalQueue's, when that queue's metrics are reported. */
	if (ns == NULL || lq == NULL || c->inf[INF_LQ] == NULL)
		return;
	cached = api_informer_get(c->inf[INF_LQ], ns, lq);
	if (cached != NULL && ctl_lq_reported(c, cached))
		ctl_metric_observe(c->metrics,
		    CTL_M_LOCAL_QUEUE_ADMISSION_CHECKS_WAIT_TIME_SECONDS,
		    CTL_LV(lq, ns, ctl_wm_priority_class(wl)), wait);
}

void ctl_admission_write(ctl *c, const struct ctl_admission *a,
    struct rec_admit_plan *p, int64_t now)
{
	struct ctl_pipe_write *w;
	cu_error err = {0};

	if (p->step != REC_ADMIT_ANNOUNCE && p->step != REC_ADMIT_DEFER)
		return;
	/* Lesson 3: the ledger first; a decision it cannot hold is not
	 * announced but withdrawn. */
	if (p->record) {
		if (a->qw == NULL || a->d == NULL ||
		    record_admission(c, a->qw, a->d, now, &err) != CU_OK) {
			if (p->step == REC_ADMIT_ANNOUNCE && a->qw != NULL)
				cu_warn("admit %s/%s: %s", a->qw->ns,
				    a->qw->name, err.msg);
			if (a->qw != NULL)
				ctl_withdraw(c, a->qw->uid, now);
			return;
		}
		ctl_pr_track(c, a->qw->uid, true);
	}
	if (p->step == REC_ADMIT_DEFER) {
		if (a->qw != NULL) {
			(void)ctl_keys_put(
			    &c->dec.in_flight, CTL_K1(a->qw->uid));
			(void)ctl_keys_put(
			    &c->dec.deferred, CTL_K1(a->qw->uid));
		}
		return;
	}
	if (p->patch == NULL)
		return;
	switch (p->write) {
	case REC_ADMIT_WRITE_RESERVE:
	case REC_ADMIT_WRITE_RESERVE_ADMIT:
		if (a->qw == NULL)
			return;
		ctl_queue_admit(c, a->qw, p->patch, p->note);
		p->patch = NULL;
		p->note = NULL;
		return;
	case REC_ADMIT_WRITE_CHECKS_SYNC:
	case REC_ADMIT_WRITE_CHECKS_ADMIT:
		w = ctl_wl_write(
		    c, CTL_PIPE_WL_STATUS, a->ns, a->name, p->patch, NULL);
		p->patch = NULL;
		if (p->write != REC_ADMIT_WRITE_CHECKS_ADMIT)
			return;
		if (w != NULL && p->note != NULL) {
			ctl_pipe_set_event(w, "Admitted", p->note);
			p->note = NULL;
		}
		if (a->wl != NULL)
			checks_admitted_metrics(c, a->wl, now);
		return;
	case REC_ADMIT_WRITE_NONE:
		return;
	}
}

/* What the controller knows of Workload qw [borrowed] when it carries a
 * decision about it out. *wl is decoded from the cache (api_workload_dispose
 * it when *decoded) unless our own last write has not reached it, or, for
 * a victim, its admission is still in flight or deferred (nothing to
 * decode it for). */
static struct rec_cycle_wl cycle_wl(ctl *c, const struct que_wl *qw,
    bool victim, struct api_workload *wl, bool *decoded)
{
	struct rec_cycle_wl w = {.where = qw->where};
	json_t *obj = api_informer_get(c->inf[INF_WL], qw->ns, qw->name);

	w.deferred = ctl_keys_get(&c->dec.deferred, CTL_K1(qw->uid)) != NULL;
	w.in_flight = ctl_keys_get(&c->dec.in_flight, CTL_K1(qw->uid)) != NULL;
	w.stale =
	    obj != NULL &&
	    ctl_pipe_stale(c->pipe, CTL_K3(CTL_KIND_WL, qw->ns, qw->name), obj);
	*decoded = !w.stale && !(victim && (w.in_flight || w.deferred)) &&
		   ctl_decode_cached(c, qw->ns, qw->name, wl) == CU_OK;
	w.wl = *decoded ? wl : NULL;
	return w;
}

static void decide_admit(ctl *c, const struct adm_decision *d, int64_t now)
{
	struct que_wl *qw = que_workload_get(c->st, d->uid);
	struct rec_admit_in in = {.source = REC_ADMIT_FROM_CYCLE, .d = d};
	struct ctl_admission a = {.qw = qw, .d = d};
	struct rec_admit_plan plan;
	struct adm_decision td;
	struct adm_podset_assignment *pa = NULL;
	struct api_workload wl;
	struct api_cluster_queue cq;
	bool decoded = false, has_cq = false;
	struct ctl_kent *e;
	cu_error err;

	if (qw == NULL)
		return;
	in.blocked = ctl_pr_blocked(c);
	if (!in.blocked) {
		in.w = cycle_wl(c, qw, false, &wl, &decoded);
		has_cq =
		    decoded && ctl_acheck_cq(c, d->cluster_queue, false, &cq);
		in.cq = has_cq ? &cq.spec : NULL;
		/* The topology placements go with the admission. */
		td = *d;
		pa = cu_calloc(d->n_podsets + 1, sizeof(*pa));
		if (pa != NULL) {
			memcpy(pa, d->podsets, d->n_podsets * sizeof(*pa));
			ctl_tas_fill(c, d->uid, pa, d->n_podsets);
			td.podsets = pa;
		} else {
			in.w.wl = NULL; /* out of memory: withdrawn */
		}
		in.d = &td;
	}
	in.pods_ready = c->pr.cfg.enable;
	in.queued_ns = qw->queue_ts;
	if (qw != NULL) {
		a.ns = qw->ns;
		a.name = qw->name;
	}
	/* FROM_CYCLE says its failures as WITHDRAW: CU_OK always. */
	if (rec_admission_write(&in, now, &plan, &err) != CU_OK)
		plan.step = REC_ADMIT_WITHDRAW;
	switch (plan.step) {
	case REC_ADMIT_NONE:
		break;
	case REC_ADMIT_BLOCKED:
		if (que_workload_unadmit(c->st, d->uid, &err) != CU_OK)
			cu_warn("engine: %s", err.msg);
		e = ctl_keys_put(&c->rep.pending_due, CTL_K1(d->uid));
		if (e != NULL &&
		    (ctl_keys_set_str(e, 0, plan.reason) != CU_OK ||
			ctl_keys_set_str(e, 1, plan.message) != CU_OK))
			ctl_keys_del(&c->rep.pending_due, CTL_K1(d->uid));
		break;
	case REC_ADMIT_DEFER:
	case REC_ADMIT_ANNOUNCE:
		a.wl = in.w.wl;
		ctl_admission_write(c, &a, &plan, now);
		break;
	case REC_ADMIT_WITHDRAW:
		if (plan.warning != NULL)
			cu_warn(
			    "admit %s/%s: %s", qw->ns, qw->name, plan.warning);
		ctl_withdraw(c, d->uid, now);
		break;
	}
	rec_admit_plan_dispose(&plan);
	cu_free(pa);
	if (has_cq)
		api_cluster_queue_dispose(&cq);
	if (decoded)
		api_workload_dispose(&wl);
}

/* The engine reports a pending reason once, when it changes; it is kept
 * here and written by ctl_report_pending() once due. */
static void decide_pending(ctl *c, const struct adm_decision *d, int64_t now)
{
	(void)now;
	struct ctl_kent *e = ctl_keys_put(&c->rep.pending_due, CTL_K1(d->uid));

	if (e != NULL &&
	    (ctl_keys_set_str(e, 0, adm_reason_string(d->reason)) != CU_OK ||
		ctl_keys_set_str(e, 1, d->message ? d->message : "") != CU_OK))
		ctl_keys_del(&c->rep.pending_due, CTL_K1(d->uid));
}

/* The ledger records that uid's eviction is in the API (a Workload
 * without a decision there is not an error). */
void ctl_ledger_evicting(ctl *c, const char *uid, int64_t now)
{
	cu_error err;

	if (ctl_pipe_begin(c->pipe) == CU_OK &&
	    store_decision_set_state(
		c->ledger, uid, STORE_EVICTING, now, &err) != CU_OK &&
	    err.code != CU_ENOTFOUND)
		cu_warn("ledger: %s", err.msg);
}

/* A victim's eviction cannot be written now: it is ADMITTED again and the
 * preemption is decided anew in a later cycle (with a fresh cache). */
static void unevict(ctl *c, struct que_wl *v, const char *why)
{
	cu_error err;

	cu_debug("preemption of %s/%s postponed: %s", v->ns, v->name, why);
	if (que_workload_unevict(c->st, v->uid, &err) != CU_OK)
		cu_warn("engine: %s", err.msg);
}

/* Victim v [borrowed] of decision d [borrowed] carried out as plan p
 * says (rec_cycle_victim; p's patch and note are taken). */
static void victim_step(ctl *c, const struct adm_decision *d,
    enum adm_preempt_reason reason, struct que_wl *v, struct rec_victim_plan *p,
    const struct api_workload *wl, int64_t now)
{
	struct ctl_pipe_write *w;
	struct ctl_kent *e;

	switch (p->step) {
	case REC_VICTIM_NONE:
		return;
	case REC_VICTIM_WITHDRAW:
		cu_debug("preemption victim %s/%s was never announced; "
			 "withdrawn",
		    v->ns, v->name);
		ctl_keys_del(&c->dec.deferred, CTL_K1(v->uid));
		ctl_keys_del(&c->dec.in_flight, CTL_K1(v->uid));
		ctl_ledger_release(c, v->uid, now);
		ctl_withdraw(c, v->uid, now);
		return;
	case REC_VICTIM_POSTPONE:
		if (p->warning != NULL)
			cu_warn("evict %s/%s: %s", v->ns, v->name, p->warning);
		unevict(c, v, p->why);
		return;
	case REC_VICTIM_EVICTING:
		ctl_ledger_evicting(c, v->uid, now);
		break;
	case REC_VICTIM_EVICT:
		e = p->preemptor_ref != NULL && p->preemptor_note != NULL
			? ctl_keys_put(&c->dec.preemptors, CTL_K1(v->uid))
			: NULL;
		if (e != NULL) {
			e->n = (int64_t)p->message_len;
			if (ctl_keys_set_str(e, 0, p->preemptor_ref) != CU_OK ||
			    ctl_keys_set_str(e, 1, p->preemptor_note) != CU_OK)
				ctl_keys_del(
				    &c->dec.preemptors, CTL_K1(v->uid));
		}
		w = ctl_pipe_queue(c->pipe, CTL_PIPE_EVICT, CTL_RES(INF_WL),
		    v->ns, v->name, v->uid, p->patch);
		p->patch = NULL;
		ctl_pipe_expect(
		    c->pipe, w, CTL_K3(CTL_KIND_WL, v->ns, v->name), true);
		ctl_pipe_set_event(w, "Preempted", p->note);
		p->note = NULL;
		ctl_pr_evicted_metrics(c, wl, v->cq ? v->cq->name : "",
		    REC_EVICTED_PREEMPTED, "", now);
		ctl_wm_evicted(
		    c, wl, v->cq ? v->cq->name : "", REC_EVICTED_PREEMPTED, "");
		break;
	}
	if (c->metrics != NULL)
		ctl_metric_inc(c->metrics, CTL_M_PREEMPTED_WORKLOADS_TOTAL,
		    CTL_LV(d->cluster_queue ? d->cluster_queue : "",
			adm_preempt_reason_string(reason)));
}

/*
 * Evict the victims of a preemption, each as rec_cycle_victim plans it
 * (reconcile.h section 5): what the API shows decides what is written.
 * The ledger records EVICTING and the Preempted event is sent once the
 * eviction is written; a victim whose eviction cannot be written is
 * ADMITTED again, never left EVICTING without an eviction in the API
 * (it would hold its quota until its job ends on its own).
 */
static void decide_preempt(ctl *c, const struct adm_decision *d, int64_t now)
{
	struct que_wl *pre = que_workload_get(c->st, d->uid);
	const char *v_ns[64], *v_name[64];
	char pre_path[512], v_path[512];
	struct api_workload pw;
	bool pre_decoded;
	size_t i, nv = 0;

	if (pre == NULL) {
		decide_pending(c, d, now);
		return;
	}
	/* Kueue names the preemptor's job by its job-uid label. */
	pre_decoded = d->n_victims > 0 &&
		      ctl_decode_cached(c, pre->ns, pre->name, &pw) == CU_OK;
	pre_path[0] = '\0';
	if (pre->cq != NULL)
		adm_cq_path(pre->cq, pre_path, sizeof(pre_path));
	for (i = 0; i < d->n_victims; i++) {
		struct que_wl *v = que_workload_get(c->st, d->victims[i].uid);
		struct rec_victim_in in = {0};
		struct rec_victim_plan plan;
		struct api_workload wl;
		bool decoded = false;

		if (v == NULL)
			continue;
		in.w = cycle_wl(c, v, true, &wl, &decoded);
		v_path[0] = '\0';
		if (v->cq != NULL)
			adm_cq_path(v->cq, v_path, sizeof(v_path));
		in.reason = d->victims[i].reason;
		in.pre_uid = pre->uid;
		in.pre_job_uid = pre_decoded ? api_strmap_get(&pw.meta.labels,
						   REC_LABEL_JOB_UID)
					     : NULL;
		in.pre_ns = pre->ns;
		in.pre_name = pre->name;
		in.pre_path = pre_path;
		in.pre_priority = pre->priority;
		in.ns = v->ns;
		in.name = v->name;
		in.uid = v->uid;
		in.cq = v->cq != NULL ? v->cq->name : NULL;
		in.path = v_path;
		in.priority = v->priority;
		rec_cycle_victim(&in, now, &plan);
		victim_step(
		    c, d, in.reason, v, &plan, decoded ? &wl : NULL, now);
		if (plan.step != REC_VICTIM_NONE &&
		    nv < sizeof(v_ns) / sizeof(v_ns[0])) {
			v_ns[nv] = v->ns;
			v_name[nv++] = v->name;
		}
		rec_victim_plan_dispose(&plan);
		if (decoded)
			api_workload_dispose(&wl);
	}
	if (pre_decoded)
		api_workload_dispose(&pw);
	if (d->n_victims > 0)
		cu_info_kv("Workload preempting",
		    CU_LOGF_REF("workload", pre->ns, pre->name),
		    CU_LOGF_REF("clusterQueue", NULL, d->cluster_queue),
		    CU_LOGF_REF("localQueue", pre->ns, pre->queue_name),
		    CU_LOGF_S("reason",
			adm_preempt_reason_string(d->victims[0].reason)),
		    CU_LOGF_REFS("victims", v_ns, v_name, nv));
	decide_pending(c, d, now);
}

void ctl_run_cycle(ctl *c, int64_t now)
{
	struct adm_result r;
	size_t i, npreempt = 0, nwrites = ctl_pipe_queued(c->pipe);
	cu_ns_t t0;
	double took;
	cu_error err;

	adm_result_init(&r);
	t0 = cu_time_mono_ns();
	if (adm_cycle(c->st, now, &r, &err) != CU_OK)
		cu_warn("admission cycle: %s", err.msg);
	took = cu_ns_to_secs(cu_time_mono_ns() - t0);
	for (i = 0; i < r.n; i++)
		npreempt += r.v[i].kind == ADM_PREEMPT;
	if (r.n > 0)
		cu_debug("cycle: %zu heads, %zu admitted, %zu preempting, %zu "
			 "decisions",
		    r.heads, r.admitted, npreempt, r.n);
	for (i = 0; i < r.n; i++) {
		const struct adm_decision *d = &r.v[i];

		switch (d->kind) {
		case ADM_ADMIT:
			decide_admit(c, d, now);
			break;
		case ADM_PREEMPT:
			decide_preempt(c, d, now);
			break;
		case ADM_PENDING:
			decide_pending(c, d, now);
			break;
		}
	}
	for (i = 0; c->cfg->admission_fair_sharing.enable && i < r.n; i++) {
		struct que_wl *qw = r.v[i].kind == ADM_ADMIT
					? que_workload_get(c->st, r.v[i].uid)
					: NULL;

		/* Still admitted: decide_admit may have withdrawn it. */
		if (qw != NULL && qw->where == QUE_WL_ADMITTED)
			ctl_afs_admitted(c, qw, now);
	}
	/* As Kueue: one attempt per cycle that had heads, a success when it
	 * admitted at least one of them. */
	if (c->metrics != NULL && r.heads > 0) {
		const char *res = r.admitted > 0 ? "success" : "inadmissible";

		ctl_metric_inc(
		    c->metrics, CTL_M_ADMISSION_ATTEMPTS_TOTAL, CTL_LV(res));
		ctl_metric_observe(c->metrics,
		    CTL_M_ADMISSION_ATTEMPT_DURATION_SECONDS, CTL_LV(res),
		    took);
	}
	/* As Kueue: set for the ClusterQueues that had skips this cycle. */
	for (i = 0; c->metrics != NULL && i < r.n_skipped; i++) {
		size_t j, n = 0;

		for (j = 0; j < r.n_skipped; j++)
			if (strcmp(r.skipped[j], r.skipped[i]) == 0) {
				if (j < i)
					break; /* counted at its first */
				n++;
			}
		if (n > 0)
			ctl_metric_set(c->metrics,
			    CTL_M_ADMISSION_CYCLE_PREEMPTION_SKIPS,
			    CTL_LV(r.skipped[i]), (double)n);
	}
	for (i = 0; c->metrics != NULL && i < r.n_recomputed; i++)
		ctl_metric_inc(c->metrics,
		    CTL_M_PREEMPTION_TARGET_RECOMPUTATIONS_TOTAL,
		    CTL_LV(
			r.recomputed[i].cluster_queue, r.recomputed[i].result));
	/* Heads that were requeued may fit after the writes land; the
	 * engine asks for more work through its own dirty flags. Decisions
	 * withdrawn because the cache is behind our own write (decide_admit)
	 * wait for that cache update, which marks the cycle: running it
	 * again at once would decide the same thing in a loop. */
	c->dirty_cycle =
	    r.heads > 0 && r.admitted > 0 && ctl_pipe_queued(c->pipe) > nwrites;
	adm_result_dispose(&r);
}

/* The ClusterQueue a cached Workload [borrowed] is admitted to, or "". */
static const char *admitted_cq(json_t *wl)
{
	const char *cq = json_string_value(json_object_get(
	    json_object_get(json_object_get(wl, "status"), "admission"),
	    "clusterQueue"));

	return cq != NULL ? cq : "";
}

static const char *queue_of(json_t *wl)
{
	const char *q = json_string_value(
	    json_object_get(json_object_get(wl, "spec"), "queueName"));

	return q != NULL ? q : "";
}

/* The job a Workload write was sent for (its owner key), as cached, or
 * NULL. */
static json_t *ctl_owner_obj(ctl *c, const struct ctl_pipe_write *w)
{
	enum inf_id id;

	if (w->owner[0] == NULL || w->owner[1] == NULL || w->owner[2] == NULL)
		return NULL;
	id = ctl_fw_inf(w->owner[0]);
	if (id == INF__COUNT)
		id = INF_JOB;
	return c->inf[id] != NULL
		   ? api_informer_get(c->inf[id], w->owner[1], w->owner[2])
		   : NULL;
}

/* The preemptor's PreemptedWorkload event once its victim's eviction is
 * written (Kueue sends it after the eviction), and the preemption's log
 * line. */
static void preempted_written(
    ctl *c, const struct ctl_pipe_write *w, json_t *victim)
{
	struct ctl_kent *e =
	    w->uid != NULL ? ctl_keys_get(&c->dec.preemptors, CTL_K1(w->uid))
			   : NULL;
	const char *ref = e != NULL ? e->s[0] : NULL;
	const char *slash = ref != NULL ? strchr(ref, '/') : NULL;
	char ns[256];
	json_t *pre = NULL;

	if (slash != NULL && (size_t)(slash - ref) < sizeof(ns)) {
		memcpy(ns, ref, (size_t)(slash - ref));
		ns[slash - ref] = '\0';
		pre = api_informer_get(c->inf[INF_WL], ns, slash + 1);
		ctl_emit(c, pre, NULL, "PreemptedWorkload", e->s[1]);
	}
	cu_info_kv("Preempted", CU_LOGF_REF("targetWorkload", w->ns, w->name),
	    CU_LOGF_REF("preemptingWorkload", slash != NULL ? ns : "",
		slash != NULL ? slash + 1 : ""),
	    CU_LOGF_S("reason", "Preempted"), CU_LOGF_S("message", w->note),
	    CU_LOGF_REF("targetClusterQueue", NULL, admitted_cq(victim)));
	if (e != NULL)
		ctl_keys_del(&c->dec.preemptors, CTL_K1(w->uid));
}

/* The events a successful write announces (rec_cycle_written), about the
 * object as cached or its job, and the decision's log line. */
static void write_event(ctl *c, const struct ctl_pipe_write *w)
{
	enum inf_id id = INF_WL;

	for (size_t i = INF_JOB; w->res != CTL_RES(INF_WL) && i < INF__COUNT;
	     i++)
		if (w->res == CTL_RES(i))
			id = (enum inf_id)i;
	if (w->res != CTL_RES(INF_WL) && id == INF_WL)
		id = INF_JOBSET; /* as before: the queue status writes */
	json_t *obj = c->inf[id] && w->ns && w->name
			  ? api_informer_get(c->inf[id], w->ns, w->name)
			  : NULL;
	struct ctl_kent *pe =
	    w->uid != NULL ? ctl_keys_get(&c->dec.preemptors, CTL_K1(w->uid))
			   : NULL;
	struct rec_written_in in = {.admit = w->kind == CTL_PIPE_ADMIT,
	    .ev_reason = w->ev_reason,
	    .note = w->note,
	    .cq = w->cq,
	    .message_len = pe != NULL && pe->n > 0 ? (size_t)pe->n : 0};
	struct rec_written_plan p;
	size_t i;

	/* A ProvisioningRequest's events are about its Workload (owner). */
	if (w->res == CTL_RES(INF_PROVREQ))
		obj = w->owner[1] && w->owner[2]
			  ? api_informer_get(
				c->inf[INF_WL], w->owner[1], w->owner[2])
			  : NULL;
	rec_cycle_written(&in, &p);
	for (i = 0; i < p.n; i++) {
		const struct rec_written_event *ev = &p.ev[i];
		json_t *about =
		    ev->about == REC_WRITTEN_OWNER ? ctl_owner_obj(c, w) : obj;
		char *m = ev->note != NULL && ev->note_len < strlen(ev->note)
			      ? cu_strndup(ev->note, ev->note_len)
			      : NULL;
		const char *note = m != NULL ? m : ev->note;

		if (ev->workload_ctl)
			ctl_emit_as(c, about, REC_EVENTS_CTL_WORKLOAD,
			    ev->reason, note);
		else
			ctl_emit(c, about, NULL, ev->reason, note);
		cu_free(m);
	}
	if (p.preempted)
		preempted_written(c, w, obj);
	else if (p.log != NULL)
		cu_info_kv(p.log, CU_LOGF_REF("workload", w->ns, w->name),
		    CU_LOGF_REF("clusterQueue", NULL,
			in.admit ? w->cq : admitted_cq(obj)),
		    CU_LOGF_REF("localQueue", w->ns, queue_of(obj)),
		    CU_LOGF_S("reason", p.log_reason),
		    CU_LOGF_S("message", p.log_message));
	rec_written_plan_dispose(&p);
}

/* The steps rec_cycle_answer gives for an admission or eviction write
 * w [borrowed] and what became of it, carried out. */
static void answered(ctl *c, const struct ctl_pipe_write *w,
    enum rec_answer_outcome outcome, int64_t now)
{
	struct que_wl *qw = que_workload_get(c->st, w->uid);
	enum rec_answer_write kind =
	    w->kind == CTL_PIPE_ADMIT ? REC_ANSWER_ADMIT : REC_ANSWER_EVICT;
	unsigned s = rec_cycle_answer(
	    kind, outcome, qw != NULL ? qw->where : QUE_WL_BLOCKED);
	cu_error err;

	if (s & REC_ANS_FORGET_IN_FLIGHT)
		ctl_keys_del(&c->dec.in_flight, CTL_K1(w->uid));
	if (s & REC_ANS_FORGET_PREEMPTOR)
		ctl_keys_del(&c->dec.preemptors, CTL_K1(w->uid));
	if ((s & REC_ANS_LEDGER_ADMITTED) && ctl_pipe_begin(c->pipe) == CU_OK &&
	    store_decision_set_state(
		c->ledger, w->uid, STORE_ADMITTED, now, &err) != CU_OK)
		cu_warn("ledger: %s", err.msg);
	if (s & REC_ANS_LEDGER_EVICTING)
		ctl_ledger_evicting(c, w->uid, now);
	if (s & REC_ANS_WITHDRAW)
		ctl_withdraw(c, w->uid, now);
	if (s & REC_ANS_LEDGER_FORGET)
		ctl_ledger_release(c, w->uid, now);
	if ((s & REC_ANS_UNEVICT) && qw != NULL) {
		if (outcome == REC_ANSWER_REFUSED)
			cu_info("eviction of %s/%s not written; preemption "
				"decided again (a deactivation or drain: "
				"reconciled again)",
			    qw->ns, qw->name);
		unevict(c, qw, "the eviction was not written");
	}
	if ((s & REC_ANS_LEDGER_READMIT) && ctl_pipe_begin(c->pipe) == CU_OK &&
	    store_decision_set_state(
		c->ledger, w->uid, STORE_ADMITTED, now, &err) != CU_OK &&
	    err.code != CU_ENOTFOUND)
		cu_warn("ledger: %s", err.msg);
	if ((s & REC_ANS_RECONCILE) && qw != NULL)
		(void)ctl_keys_put(&c->dirty_wl, CTL_K2(qw->ns, qw->name));
	if (s & REC_ANS_CYCLE)
		c->dirty_cycle = true;
	if ((s & REC_ANS_METRICS) && c->metrics != NULL && w->cq != NULL) {
		struct ctl_wm_labels l;
		double wait = cu_ns_to_secs(now - w->created_ns);

		ctl_wm_labels_json(c, &l,
		    api_informer_get(c->inf[INF_WL], w->ns, w->name), w->cq);
		ctl_wm_quota_reserved(c, &l, wait);
		/* Admitted with it unless admission checks wait. */
		if (w->ev_reason == NULL)
			ctl_wm_admitted(c, &l, wait);
	}
}

/* A job's Workload create the API refused for good (400, 422, or 403
 * Forbidden): said on the job, a Warning (Kueue's ErrWorkloadCompose)
 * with the API's message, once per series of refusals (the pipeline
 * retries it with back-off). */
static void create_refused(
    ctl *c, const struct ctl_pipe_write *w, const struct api_response *resp)
{
	json_t *job = ctl_owner_obj(c, w);
	/* Only a refusal the job's spec causes (invalid, or denied by an
	 * admission policy): a transient failure is retried silently, as
	 * Kueue's requeue does. */
	bool lasting = resp->code == 400 || resp->code == 422 ||
		       (resp->code == 403 && resp->reason != NULL &&
			   strcmp(resp->reason, "Forbidden") == 0);

	if (job == NULL || !lasting ||
	    ctl_pipe_refusals(c->pipe, (const char *const *)w->expect) > 1)
		return;
	ctl_emit(c, job, REC_EVENT_WARNING, "ErrWorkloadCompose",
	    resp->message[0] ? resp->message : resp->reason);
}

void ctl_settle(const struct ctl_pipe_write *w, enum ctl_pipe_outcome outcome,
    const struct api_response *resp, void *payload)
{
	ctl *c = payload;
	int64_t now = cu_time_now_ns();
	bool decision = w->uid != NULL && (w->kind == CTL_PIPE_ADMIT ||
					      w->kind == CTL_PIPE_EVICT);

	if (outcome != CTL_PIPE_ANSWERED) {
		if (decision)
			answered(c, w,
			    outcome == CTL_PIPE_UNCOMMITTED
				? REC_ANSWER_UNCOMMITTED
				: REC_ANSWER_SEND_FAILED,
			    now);
		return;
	}
	/* An expired Event's series: the next repeat creates a new one. */
	if (w->kind == CTL_PIPE_EVENT_PATCH && resp->err == CU_ENOTFOUND)
		rec_events_forget_name(c->events, w->ns, w->name);
	if (resp->err == CU_OK && w->note != NULL)
		write_event(c, w);
	if (decision) {
		/* A refused eviction says so where it is undone. */
		if (resp->err != CU_OK && w->kind == CTL_PIPE_ADMIT)
			cu_warn("admission write %s/%s: %d %s %s", w->ns,
			    w->name, resp->code, resp->reason, resp->message);
		answered(c, w,
		    resp->err == CU_OK ? REC_ANSWER_OK : REC_ANSWER_REFUSED,
		    now);
	} else if (w->kind == CTL_PIPE_WL_CREATE &&
		   w->res == CTL_RES(INF_PROVREQ) && resp->err != CU_OK) {
		ctl_provreq_create_failed(c, w, resp);
	} else if (resp->err != CU_OK && resp->err != CU_ENOTFOUND) {
		cu_warn("write %s: %d %s %s", resp->path, resp->code,
		    resp->reason, resp->message);
		if (w->kind == CTL_PIPE_WL_CREATE && w->res == CTL_RES(INF_WL))
			create_refused(c, w, resp);
	}
	if (w->kind == CTL_PIPE_WL_CREATE && resp->err == CU_OK)
		ctl_wm_created(c, resp->body);
}

int ctl_decide_init(struct ctl_decide *d)
{
	ctl_keys_init(&d->in_flight, 1);
	ctl_keys_init(&d->deferred, 1);
	ctl_keys_init(&d->preemptors, 1);
	return CU_OK;
}

void ctl_decide_dispose(struct ctl_decide *d)
{
	ctl_keys_dispose(&d->in_flight);
	ctl_keys_dispose(&d->deferred);
	ctl_keys_dispose(&d->preemptors);
}
