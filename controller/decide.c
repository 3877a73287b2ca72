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
	{
		struct ctl_kent *g =
		    ctl_keys_get(&c->feed.wl_gen, CTL_K1(qw->uid));

		sd.generation = g != NULL ? g->n : 0;
	}
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

static void decide_admit(ctl *c, const struct adm_decision *d, int64_t now)
{
	struct que_wl *qw = que_workload_get(c->st, d->uid);
	struct api_workload wl;
	struct api_cluster_queue cq;
	json_t *patch = NULL;
	cu_error err;
	bool has_cq;
	int rc;

	if (qw == NULL)
		return;
	if (ctl_pr_blocked(c)) {
		struct ctl_kent *e;

		/* blockAdmission: an admitted Workload waits for its pods;
		 * this one waits for them too, and says so (as Kueue). */
		if (que_workload_unadmit(c->st, d->uid, &err) != CU_OK)
			cu_warn("engine: %s", err.msg);
		e = ctl_keys_put(&c->rep.pending_due, CTL_K1(d->uid));
		if (e != NULL &&
		    (ctl_keys_set_str(
			 e, 0, REC_REASON_WAITING_FOR_PODS_READY) != CU_OK ||
			ctl_keys_set_str(
			    e, 1, REC_MSG_WAITING_FOR_PODS_READY) != CU_OK))
			ctl_keys_del(&c->rep.pending_due, CTL_K1(d->uid));
		return;
	}
	{
		/* Our own write to it (a pending status) has not reached the
		 * cache: a patch on the older object would only conflict. The
		 * decision stands (quota held, ledger first); its announcement
		 * waits for the cache (ctl_announce_deferred). Withdrawing it
		 * would leave the Workload at the head of its queue, blocking
		 * it. */
		json_t *obj =
		    api_informer_get(c->inf[INF_WL], qw->ns, qw->name);
		bool st = obj != NULL &&
			  ctl_pipe_stale(c->pipe,
			      CTL_K3(CTL_KIND_WL, qw->ns, qw->name), obj);

		if (st && record_admission(c, qw, d, now, &err) == CU_OK) {
			ctl_pr_track(c, d->uid, true);
			(void)ctl_keys_put(&c->dec.in_flight, CTL_K1(d->uid));
			(void)ctl_keys_put(&c->dec.deferred, CTL_K1(d->uid));
			return;
		}
		if (st) {
			ctl_withdraw(c, d->uid, now);
			return;
		}
	}
	if (ctl_decode_cached(c, qw->ns, qw->name, &wl) != CU_OK) {
		ctl_withdraw(c, d->uid, now);
		return;
	}
	has_cq = ctl_acheck_cq(c, d->cluster_queue, false, &cq);
	{
		/* The topology placements go with the admission. */
		struct adm_decision td = *d;
		struct adm_podset_assignment *pa =
		    cu_calloc(d->n_podsets + 1, sizeof(*pa));

		if (pa != NULL) {
			memcpy(pa, d->podsets, d->n_podsets * sizeof(*pa));
			ctl_tas_fill(c, d->uid, pa, d->n_podsets);
			td.podsets = pa;
		}
		rc =
		    pa == NULL
			? cu_error_set(
			      &err, CU_ENOMEM, "admission: out of memory")
			: rec_wl_status_admit_checks(&wl, &td, c->pr.cfg.enable,
			      has_cq ? &cq.spec : NULL, now, &patch, &err);
		cu_free(pa);
	}
	if (has_cq)
		api_cluster_queue_dispose(&cq);
	if (rc != CU_OK || record_admission(c, qw, d, now, &err) != CU_OK) {
		cu_warn("admit %s/%s: %s", qw->ns, qw->name, err.msg);
		json_decref(patch);
		ctl_withdraw(c, d->uid, now);
		api_workload_dispose(&wl);
		return;
	}
	ctl_pr_track(c, d->uid, true);
	if (patch != NULL)
		ctl_queue_admit(c, qw, patch,
		    rec_events_note_quota_reserved(
			d->cluster_queue, now - qw->queue_ts));
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

/*
 * Evict the victims of a preemption. The engine marked them EVICTING; what
 * the API shows decides what is written:
 *  - an admission recorded but not announced (deferred): it never reached
 *    the API, so it is withdrawn - released and requeued, nothing written;
 *  - an admission write in flight, or our own last write to the victim
 *    not yet in the cache: a status patch would be built on an object
 *    older than the server's (and conflict, or evict a Workload that was
 *    never admitted there): the victim is ADMITTED again and the
 *    preemption decided anew once the cache has caught up (that update
 *    marks the cycle);
 *  - else the Evicted patch (CTL_PIPE_EVICT); if it fails, settle makes
 *    the victim ADMITTED again. A victim left EVICTING without an
 *    eviction in the API would hold its quota until its job ends on its
 *    own, and the preemptor would wait that long.
 * The ledger records EVICTING and the Preempted event is sent once the
 * eviction is written.
 */
static void decide_preempt(ctl *c, const struct adm_decision *d, int64_t now)
{
	struct que_wl *pre = que_workload_get(c->st, d->uid);
	const char *job_uid = NULL, *v_ns[64], *v_name[64];
	char pre_path[512], v_path[512];
	size_t i, nv = 0;
	cu_error err;

	/* Kueue names the preemptor's job by its job-uid label. */
	if (pre != NULL)
		job_uid = json_string_value(json_object_get(
		    json_object_get(
			json_object_get(api_informer_get(
					    c->inf[INF_WL], pre->ns, pre->name),
			    "metadata"),
			"labels"),
		    REC_LABEL_JOB_UID));
	for (i = 0; pre != NULL && i < d->n_victims; i++) {
		struct que_wl *v = que_workload_get(c->st, d->victims[i].uid);
		struct api_workload wl;
		struct rec_eviction ev = {0};
		json_t *patch = NULL, *obj;
		struct ctl_kent *pre_ev;
		char *msg, *note;
		bool st;

		if (v == NULL || v->where != QUE_WL_EVICTING)
			continue;
		if (ctl_keys_get(&c->dec.deferred, CTL_K1(v->uid)) != NULL) {
			cu_debug("preemption victim %s/%s was never announced; "
				 "withdrawn",
			    v->ns, v->name);
			ctl_keys_del(&c->dec.deferred, CTL_K1(v->uid));
			ctl_keys_del(&c->dec.in_flight, CTL_K1(v->uid));
			ctl_ledger_release(c, v->uid, now);
			ctl_withdraw(c, v->uid, now);
			continue;
		}
		if (ctl_keys_get(&c->dec.in_flight, CTL_K1(v->uid)) != NULL) {
			unevict(c, v, "its admission is in flight");
			continue;
		}
		obj = api_informer_get(c->inf[INF_WL], v->ns, v->name);
		st = obj != NULL &&
		     ctl_pipe_stale(
			 c->pipe, CTL_K3(CTL_KIND_WL, v->ns, v->name), obj);
		if (st || ctl_decode_cached(c, v->ns, v->name, &wl) != CU_OK) {
			unevict(c, v,
			    st ? "the cache is behind our write"
			       : "not in the cache");
			continue;
		}
		pre_path[0] = v_path[0] = '\0';
		if (pre->cq != NULL)
			adm_cq_path(pre->cq, pre_path, sizeof(pre_path));
		if (v->cq != NULL)
			adm_cq_path(v->cq, v_path, sizeof(v_path));
		msg = rec_preemption_message(
		    pre->uid, job_uid, d->victims[i].reason, pre_path, v_path);
		/* Kueue's Preempted note adds the priorities (no boost in
		 * cueue: effective = base); the preemptor's
		 * PreemptedWorkload names the victim. */
		note = msg != NULL ? rec_events_note_preempted(
					 msg, pre->priority, v->priority)
				   : NULL;
		pre_ev = ctl_keys_put(&c->dec.preemptors, CTL_K1(v->uid));
		if (pre_ev != NULL) {
			pre_ev->n = msg != NULL ? (int64_t)strlen(msg) : 0;
			char *who = cu_asprintf("%s/%s", pre->ns, pre->name);
			char *pw = rec_events_note_preempted_workload(v->ns,
			    v->name, v->uid, v->cq != NULL ? v->cq->name : "",
			    pre->priority, v->priority);

			if (who == NULL || pw == NULL ||
			    ctl_keys_set_str(pre_ev, 0, who) != CU_OK ||
			    ctl_keys_set_str(pre_ev, 1, pw) != CU_OK)
				ctl_keys_del(
				    &c->dec.preemptors, CTL_K1(v->uid));
			cu_free(who);
			cu_free(pw);
		}
		ev.reason = REC_EVICTED_PREEMPTED;
		ev.message = msg ? msg : "Preempted";
		ev.preempted_reason =
		    adm_preempt_reason_string(d->victims[i].reason);
		if (rec_wl_status_evict(&wl, &ev, now, &patch, &err) != CU_OK) {
			cu_warn("evict %s/%s: %s", v->ns, v->name, err.msg);
			ctl_keys_del(&c->dec.preemptors, CTL_K1(v->uid));
			unevict(c, v, "no eviction patch");
		} else if (patch != NULL) {
			struct ctl_pipe_write *w =
			    ctl_pipe_queue(c->pipe, CTL_PIPE_EVICT,
				CTL_RES(INF_WL), v->ns, v->name, v->uid, patch);

			ctl_pipe_expect(c->pipe, w,
			    CTL_K3(CTL_KIND_WL, v->ns, v->name), true);
			ctl_pipe_set_event(w, "Preempted",
			    note != NULL ? note : cu_strdup(ev.message));
			note = NULL;
		} else {
			/* Evicted already (another reason): its release is
			 * under way. */
			ctl_keys_del(&c->dec.preemptors, CTL_K1(v->uid));
			ctl_ledger_evicting(c, v->uid, now);
		}
		if (patch != NULL)
			ctl_pr_evicted_metrics(c, &wl, v->cq ? v->cq->name : "",
			    REC_EVICTED_PREEMPTED, "", now);
		if (patch != NULL)
			ctl_wm_evicted(c, &wl, v->cq ? v->cq->name : "",
			    REC_EVICTED_PREEMPTED, "");
		if (c->metrics != NULL && v->where == QUE_WL_EVICTING)
			ctl_metric_inc(c->metrics,
			    CTL_M_PREEMPTED_WORKLOADS_TOTAL,
			    CTL_LV(d->cluster_queue ? d->cluster_queue : "",
				adm_preempt_reason_string(
				    d->victims[i].reason)));
		cu_free(msg);
		cu_free(note);
		api_workload_dispose(&wl);
		if (nv < sizeof(v_ns) / sizeof(v_ns[0])) {
			v_ns[nv] = v->ns;
			v_name[nv++] = v->name;
		}
	}
	if (pre != NULL && d->n_victims > 0)
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
	id = strcmp(w->owner[0], CTL_KIND_JOBSET) == 0 ? INF_JOBSET : INF_JOB;
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

/* The event a successful write announces, about the object as cached,
 * and the decision's log line. */
static void write_event(ctl *c, const struct ctl_pipe_write *w)
{
	enum inf_id id = w->res == CTL_RES(INF_WL)    ? INF_WL
			 : w->res == CTL_RES(INF_JOB) ? INF_JOB
						      : INF_JOBSET;
	json_t *obj = c->inf[id] && w->ns && w->name
			  ? api_informer_get(c->inf[id], w->ns, w->name)
			  : NULL;

	/* A ProvisioningRequest's events are about its Workload (owner). */
	if (w->res == CTL_RES(INF_PROVREQ))
		obj = w->owner[1] && w->owner[2]
			  ? api_informer_get(
				c->inf[INF_WL], w->owner[1], w->owner[2])
			  : NULL;

	if (w->kind == CTL_PIPE_ADMIT) {
		char *note = NULL;

		ctl_emit(c, obj, NULL, "QuotaReserved", w->note);
		/* With admission checks pending, quota only. Kueue's
		 * scheduler admits at once: no wait since the reservation. */
		if (w->ev_reason == NULL) {
			note = rec_events_note_admitted(w->cq, 0);
			ctl_emit(c, obj, NULL, "Admitted", note);
		}
		cu_info_kv(w->ev_reason == NULL ? "Workload admitted"
						: "Workload quota reserved",
		    CU_LOGF_REF("workload", w->ns, w->name),
		    CU_LOGF_REF("clusterQueue", NULL, w->cq),
		    CU_LOGF_REF("localQueue", w->ns, queue_of(obj)),
		    CU_LOGF_S("reason",
			w->ev_reason == NULL ? "Admitted" : "QuotaReserved"),
		    CU_LOGF_S("message", note != NULL ? note : w->note));
		cu_free(note);
	} else if (w->ev_reason != NULL &&
		   (strcmp(w->ev_reason, "UpdatedWorkload") == 0 ||
		       strcmp(w->ev_reason, "DeletedWorkload") == 0)) {
		/* The job reconciler's, about the job (as Kueue). */
		ctl_emit(c, ctl_owner_obj(c, w), NULL, w->ev_reason, w->note);
	} else if (w->ev_reason != NULL &&
		   strcmp(w->ev_reason, "FinishedWorkload") == 0) {
		ctl_emit(c, ctl_owner_obj(c, w), NULL, w->ev_reason, w->note);
		cu_info_kv("Workload finished",
		    CU_LOGF_REF("workload", w->ns, w->name),
		    CU_LOGF_REF("clusterQueue", NULL, admitted_cq(obj)),
		    CU_LOGF_REF("localQueue", w->ns, queue_of(obj)),
		    CU_LOGF_S("reason", w->ev_reason),
		    CU_LOGF_S("message", w->note));
	} else if (w->ev_reason != NULL) {
		bool preempted = strcmp(w->ev_reason, "Preempted") == 0;

		/* Kueue's eviction announces itself (EvictedDueTo<reason>,
		 * the condition's message) before the preemptor's Preempted
		 * (that message and the priorities: n bytes of the note). */
		if (preempted) {
			struct ctl_kent *e =
			    w->uid != NULL ? ctl_keys_get(&c->dec.preemptors,
						 CTL_K1(w->uid))
					   : NULL;
			size_t len = strlen(w->note);
			char *m;

			if (e != NULL && e->n > 0 && (size_t)e->n < len)
				len = (size_t)e->n;
			m = cu_strndup(w->note, len);
			ctl_emit(c, obj, NULL, "EvictedDueToPreempted",
			    m != NULL ? m : w->note);
			cu_free(m);
		}
		/* Admitted here is the Workload controller's: the admission
		 * checks became Ready (the scheduler's is above). */
		if (strcmp(w->ev_reason, "Admitted") == 0)
			ctl_emit_as(c, obj, REC_EVENTS_CTL_WORKLOAD,
			    w->ev_reason, w->note);
		else
			ctl_emit(c, obj, NULL, w->ev_reason, w->note);
		if (preempted)
			preempted_written(c, w, obj);
		else if (strncmp(w->ev_reason, "Evicted", 7) == 0 ||
			 strcmp(w->ev_reason, "Admitted") == 0)
			cu_info_kv(w->ev_reason[0] == 'A' ? "Workload admitted"
							  : "Workload evicted",
			    CU_LOGF_REF("workload", w->ns, w->name),
			    CU_LOGF_REF("clusterQueue", NULL, admitted_cq(obj)),
			    CU_LOGF_REF("localQueue", w->ns, queue_of(obj)),
			    CU_LOGF_S("reason", w->ev_reason),
			    CU_LOGF_S("message", w->note));
	}
}

/* An admission write answered: the ledger says ADMITTED, or, not
 * announced, the decision is undone (the cached Workload will be
 * reconciled again). */
static void admit_answered(ctl *c, const struct ctl_pipe_write *w,
    const struct api_response *resp, int64_t now)
{
	cu_error err;

	ctl_keys_del(&c->dec.in_flight, CTL_K1(w->uid));
	if (resp->err == CU_OK) {
		if (ctl_pipe_begin(c->pipe) == CU_OK &&
		    store_decision_set_state(
			c->ledger, w->uid, STORE_ADMITTED, now, &err) != CU_OK)
			cu_warn("ledger: %s", err.msg);
		if (c->metrics != NULL && w->cq != NULL) {
			struct ctl_wm_labels l;
			double wait = cu_ns_to_secs(now - w->created_ns);

			ctl_wm_labels_json(c, &l,
			    api_informer_get(c->inf[INF_WL], w->ns, w->name),
			    w->cq);
			ctl_wm_quota_reserved(c, &l, wait);
			/* Admitted with it unless admission checks wait. */
			if (w->ev_reason == NULL)
				ctl_wm_admitted(c, &l, wait);
		}
	} else {
		cu_warn("admission write %s: %s %s", w->uid, resp->reason,
		    resp->message);
		ctl_withdraw(c, w->uid, now);
		ctl_ledger_release(c, w->uid, now);
	}
	c->dirty_cycle = true;
}

/* An eviction answered: the ledger records it, or the preemption did not
 * happen and is decided anew. */
static void evict_answered(ctl *c, const struct ctl_pipe_write *w,
    const struct api_response *resp, int64_t now)
{
	struct que_wl *qw = que_workload_get(c->st, w->uid);
	cu_error err;

	if (resp->err != CU_OK)
		ctl_keys_del(&c->dec.preemptors, CTL_K1(w->uid));
	if (resp->err == CU_OK) {
		ctl_ledger_evicting(c, w->uid, now);
	} else if (qw != NULL && qw->where == QUE_WL_EVICTING) {

		cu_info("eviction of %s/%s not written (%d %s); preemption "
			"decided again (a deactivation or drain: "
			"reconciled again)",
		    qw->ns, qw->name, resp->code, resp->reason);
		if (que_workload_unevict(c->st, w->uid, &err) != CU_OK)
			cu_warn("engine: %s", err.msg);
		/* An eviction the Workload reconciler recorded first. */
		if (ctl_pipe_begin(c->pipe) == CU_OK &&
		    store_decision_set_state(c->ledger, w->uid, STORE_ADMITTED,
			now, &err) != CU_OK &&
		    err.code != CU_ENOTFOUND)
			cu_warn("ledger: %s", err.msg);
		/* A deactivation or a drain is decided again by the Workload
		 * reconciler, a preemption by the cycle. */
		(void)ctl_keys_put(&c->dirty_wl, CTL_K2(qw->ns, qw->name));
		c->dirty_cycle = true;
	}
}

/* A write that will not be sent: its decision is withdrawn. */
static void unsent(
    ctl *c, const struct ctl_pipe_write *w, enum ctl_pipe_outcome outcome)
{
	if (w->uid == NULL)
		return;
	if (w->kind == CTL_PIPE_ADMIT) {
		ctl_withdraw(c, w->uid, cu_time_now_ns());
		ctl_keys_del(&c->dec.in_flight, CTL_K1(w->uid));
		/* A failed commit took the decision with it. */
		if (outcome == CTL_PIPE_SEND_FAILED)
			ctl_ledger_release(c, w->uid, 0);
	} else if (w->kind == CTL_PIPE_EVICT &&
		   outcome == CTL_PIPE_SEND_FAILED) {
		struct que_wl *v = que_workload_get(c->st, w->uid);

		ctl_keys_del(&c->dec.preemptors, CTL_K1(w->uid));
		if (v != NULL && v->where == QUE_WL_EVICTING) {
			unevict(c, v, "the write was not sent");
			/* A deactivation or drain is decided again by the
			 * Workload reconciler. */
			(void)ctl_keys_put(
			    &c->dirty_wl, CTL_K2(v->ns, v->name));
		}
	}
}

void ctl_settle(const struct ctl_pipe_write *w, enum ctl_pipe_outcome outcome,
    const struct api_response *resp, void *payload)
{
	ctl *c = payload;
	int64_t now = cu_time_now_ns();

	if (outcome != CTL_PIPE_ANSWERED) {
		unsent(c, w, outcome);
		return;
	}
	/* An expired Event's series: the next repeat creates a new one. */
	if (w->kind == CTL_PIPE_EVENT_PATCH && resp->err == CU_ENOTFOUND)
		rec_events_forget_name(c->events, w->ns, w->name);
	if (resp->err == CU_OK && w->note != NULL)
		write_event(c, w);
	if (w->kind == CTL_PIPE_ADMIT)
		admit_answered(c, w, resp, now);
	else if (w->kind == CTL_PIPE_EVICT && w->uid != NULL)
		evict_answered(c, w, resp, now);
	else if (w->kind == CTL_PIPE_WL_CREATE &&
		 w->res == CTL_RES(INF_PROVREQ) && resp->err != CU_OK)
		ctl_provreq_create_failed(c, w, resp);
	else if (resp->err != CU_OK && resp->err != CU_ENOTFOUND)
		cu_warn("write %s: %d %s %s", resp->path, resp->code,
		    resp->reason, resp->message);
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
