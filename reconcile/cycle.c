/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconcile/cycle.c - the scheduling cycle's decisions carried into plans,
 * pure: the one producer of admission writes (rec_admission_write: the
 * cycle's decision announced, deferred until the cache caught up, held
 * back for blockAdmission or withdrawn; a Workload's admission checks
 * synced and Admitted once all are Ready), what is done with each victim
 * of a preemption (evict, postpone, withdraw a never-announced
 * admission), and with the answer to the write announcing
 * either (which ledger and engine steps keep the two in agreement). See
 * reconcile.h section 5; controller/decide.c gathers the inputs and
 * carries the steps out, the ledger always before the write.
 */
#include <string.h>

#include "reconcile/rec_int.h"

/* FROM_CYCLE: the scheduling cycle's decision in->d. */
static void from_cycle(
    const struct rec_admit_in *in, int64_t now_ns, struct rec_admit_plan *out)
{
	cu_error err;

	if (in->blocked) {
		/* blockAdmission: an admitted Workload waits for its pods;
		 * this one waits for them too, and says so (as Kueue). */
		out->step = REC_ADMIT_BLOCKED;
		out->reason = REC_REASON_WAITING_FOR_PODS_READY;
		out->message = REC_MSG_WAITING_FOR_PODS_READY;
		return;
	}
	if (in->w.stale) {
		/* Our own write to it (a pending status) has not reached the
		 * cache: a patch on the older object would only conflict. The
		 * decision stands (quota held, ledger first) and is announced
		 * once the cache caught up. Withdrawing it would leave the
		 * Workload at the head of its queue, blocking it. */
		out->step = REC_ADMIT_DEFER;
		out->record = in->ledger != REC_LEDGER_RESERVED;
		return;
	}
	if (in->w.wl == NULL) {
		out->step = REC_ADMIT_WITHDRAW;
		return;
	}
	if (rec_wl_status_admit_checks(in->w.wl, in->d, in->pods_ready, in->cq,
		now_ns, &out->patch, &err) != CU_OK) {
		out->step = REC_ADMIT_WITHDRAW;
		out->warning = cu_strdup(err.msg);
		return;
	}
	out->step = REC_ADMIT_ANNOUNCE;
	out->record = in->ledger != REC_LEDGER_RESERVED;
	if (out->patch == NULL)
		return;
	out->write = rec_acheck_patch_admitted(out->patch) == 0
			 ? REC_ADMIT_WRITE_RESERVE
			 : REC_ADMIT_WRITE_RESERVE_ADMIT;
	out->note = rec_events_note_quota_reserved(
	    in->d->cluster_queue, now_ns - in->queued_ns);
}

/* FROM_CHECKS: the Workload in->w.wl, holding quota, with its checks
 * synced with its ClusterQueue. */
static int from_checks(const struct rec_admit_in *in, int64_t now_ns,
    struct rec_admit_plan *out, cu_error *err)
{
	const struct api_workload *wl = in->w.wl;
	const struct api_condition *qr;

	out->step = REC_ADMIT_NONE;
	if (wl == NULL)
		return CU_OK;
	/* The reservation is in the API (it holds quota): the ledger's
	 * record of it, RESERVED or ADMITTED, or none for one adopted
	 * without a record, does not hold the checks back. An eviction the
	 * ledger recorded does: it is not admitted while it is evicted. */
	if (in->ledger == REC_LEDGER_EVICTING) {
		out->why = "its eviction is decided";
		return CU_OK;
	}
	if (rec_wl_status_sync_checks(wl, in->cq, now_ns, &out->patch, err) !=
	    CU_OK)
		return err->code;
	if (out->patch == NULL)
		return CU_OK;
	out->step = REC_ADMIT_ANNOUNCE;
	out->write = REC_ADMIT_WRITE_CHECKS_SYNC;
	if (api_conditions_true(&wl->status.conditions, REC_COND_ADMITTED) ||
	    rec_acheck_patch_admitted(out->patch) != 1)
		return CU_OK;
	/* Kueue's Admitted event, the wait since the reservation. */
	out->write = REC_ADMIT_WRITE_CHECKS_ADMIT;
	qr = api_conditions_find(
	    &wl->status.conditions, REC_COND_QUOTA_RESERVED);
	out->note = rec_events_note_admitted(wl->status.admission.cluster_queue,
	    qr != NULL && qr->has_last_transition
		? now_ns - qr->last_transition_ns
		: 0);
	if (out->note == NULL)
		return cu_error_set(
		    err, CU_ENOMEM, "admission write: out of memory");
	return CU_OK;
}

int rec_admission_write(const struct rec_admit_in *in, int64_t now_ns,
    struct rec_admit_plan *out, cu_error *err)
{
	memset(out, 0, sizeof(*out));
	if (in->source == REC_ADMIT_FROM_CHECKS)
		return from_checks(in, now_ns, out, err);
	from_cycle(in, now_ns, out);
	return CU_OK;
}

void rec_admit_plan_dispose(struct rec_admit_plan *p)
{
	json_decref(p->patch);
	cu_free(p->note);
	cu_free(p->warning);
	memset(p, 0, sizeof(*p));
}

void rec_cycle_victim(
    const struct rec_victim_in *in, int64_t now_ns, struct rec_victim_plan *out)
{
	struct rec_eviction ev = {0};
	cu_error err;
	char *msg;

	memset(out, 0, sizeof(*out));
	if (in->w.where != QUE_WL_EVICTING)
		return; /* REC_VICTIM_NONE */
	if (in->w.deferred) {
		/* Its admission was recorded but never announced: nothing
		 * to evict in the API, the decision is withdrawn. */
		out->step = REC_VICTIM_WITHDRAW;
		return;
	}
	/* A status patch on an object older than the server's would
	 * conflict, or evict a Workload never admitted there: the victim is
	 * ADMITTED again and the preemption decided anew once the cache
	 * caught up (that update marks the cycle). */
	out->step = REC_VICTIM_POSTPONE;
	if (in->w.in_flight) {
		out->why = "its admission is in flight";
		return;
	}
	if (in->w.stale || in->w.wl == NULL) {
		out->why = in->w.stale ? "the cache is behind our write"
				       : "not in the cache";
		return;
	}
	msg = rec_preemption_message(
	    in->pre_uid, in->pre_job_uid, in->reason, in->pre_path, in->path);
	ev.reason = REC_EVICTED_PREEMPTED;
	ev.message = msg != NULL ? msg : "Preempted";
	ev.preempted_reason = adm_preempt_reason_string(in->reason);
	if (rec_wl_status_evict(in->w.wl, &ev, now_ns, &out->patch, &err) !=
	    CU_OK) {
		out->why = "no eviction patch";
		out->warning = cu_strdup(err.msg);
		cu_free(msg);
		return;
	}
	if (out->patch == NULL) {
		/* Evicted already (another reason): its release is under
		 * way; the ledger only records the eviction. */
		out->step = REC_VICTIM_EVICTING;
		cu_free(msg);
		return;
	}
	out->step = REC_VICTIM_EVICT;
	/* Kueue's Preempted note adds the priorities (no boost in cueue:
	 * effective = base) to the condition's message, which is also the
	 * EvictedDueToPreempted note; the preemptor's PreemptedWorkload
	 * names the victim. */
	out->note = msg != NULL ? rec_events_note_preempted(
				      msg, in->pre_priority, in->priority)
				: NULL;
	if (out->note == NULL)
		out->note = cu_strdup(ev.message);
	out->message_len = strlen(ev.message);
	out->preemptor_ref = cu_asprintf("%s/%s", in->pre_ns, in->pre_name);
	out->preemptor_note =
	    rec_events_note_preempted_workload(in->ns, in->name, in->uid,
		in->cq != NULL ? in->cq : "", in->pre_priority, in->priority);
	cu_free(msg);
}

void rec_victim_plan_dispose(struct rec_victim_plan *p)
{
	json_decref(p->patch);
	cu_free(p->warning);
	cu_free(p->note);
	cu_free(p->preemptor_ref);
	cu_free(p->preemptor_note);
	memset(p, 0, sizeof(*p));
}

unsigned rec_cycle_answer(enum rec_answer_write kind,
    enum rec_answer_outcome outcome, enum que_where where)
{
	if (kind == REC_ANSWER_ADMIT) {
		switch (outcome) {
		case REC_ANSWER_OK:
			return REC_ANS_FORGET_IN_FLIGHT |
			       REC_ANS_LEDGER_ADMITTED | REC_ANS_METRICS |
			       REC_ANS_CYCLE;
		case REC_ANSWER_REFUSED:
			/* Not announced: undone; the cached Workload is
			 * reconciled again. */
			return REC_ANS_FORGET_IN_FLIGHT | REC_ANS_WITHDRAW |
			       REC_ANS_LEDGER_FORGET | REC_ANS_CYCLE;
		case REC_ANSWER_UNCOMMITTED:
			/* The failed commit took the decision with it. */
			return REC_ANS_FORGET_IN_FLIGHT | REC_ANS_WITHDRAW;
		case REC_ANSWER_SEND_FAILED:
			return REC_ANS_FORGET_IN_FLIGHT | REC_ANS_WITHDRAW |
			       REC_ANS_LEDGER_FORGET;
		}
		return 0;
	}
	switch (outcome) {
	case REC_ANSWER_OK:
		return REC_ANS_LEDGER_EVICTING;
	case REC_ANSWER_REFUSED:
		/* The preemption did not happen: decided again (by the
		 * cycle; a deactivation or drain by the Workload
		 * reconciler), and an eviction the Workload reconciler
		 * recorded first is taken back in the ledger. */
		return REC_ANS_FORGET_PREEMPTOR |
		       (where == QUE_WL_EVICTING
			       ? REC_ANS_UNEVICT | REC_ANS_LEDGER_READMIT |
				     REC_ANS_RECONCILE | REC_ANS_CYCLE
			       : 0);
	case REC_ANSWER_UNCOMMITTED:
		/* Not reported for evictions: they are sent whatever the
		 * commit, and recorded in the ledger once answered. */
		return 0;
	case REC_ANSWER_SEND_FAILED:
		return REC_ANS_FORGET_PREEMPTOR |
		       (where == QUE_WL_EVICTING
			       ? REC_ANS_UNEVICT | REC_ANS_RECONCILE
			       : 0);
	}
	return 0;
}

/* ---- the events of a written decision --------------------------------- */

static void written_event(struct rec_written_plan *p,
    enum rec_written_about about, const char *reason, const char *note,
    bool workload_ctl)
{
	struct rec_written_event *e = &p->ev[p->n++];

	e->about = about;
	e->reason = reason;
	e->note = note;
	e->note_len = note != NULL ? strlen(note) : 0;
	e->workload_ctl = workload_ctl;
}

void rec_cycle_written(
    const struct rec_written_in *in, struct rec_written_plan *out)
{
	const char *r = in->ev_reason;

	memset(out, 0, sizeof(*out));
	if (in->admit) {
		written_event(
		    out, REC_WRITTEN_OBJECT, "QuotaReserved", in->note, false);
		out->log = "Workload quota reserved";
		out->log_reason = "QuotaReserved";
		out->log_message = in->note;
		/* With admission checks pending, quota only. Kueue's
		 * scheduler admits at once: no wait since the reservation. */
		if (r == NULL) {
			out->note = rec_events_note_admitted(in->cq, 0);
			written_event(out, REC_WRITTEN_OBJECT, "Admitted",
			    out->note, false);
			out->log = "Workload admitted";
			out->log_reason = "Admitted";
			if (out->note != NULL)
				out->log_message = out->note;
		}
		return;
	}
	if (r == NULL)
		return;
	if (strcmp(r, "UpdatedWorkload") == 0 ||
	    strcmp(r, "DeletedWorkload") == 0 ||
	    strcmp(r, "CreatedWorkload") == 0 ||
	    strcmp(r, "FinishedWorkload") == 0) {
		/* The job reconciler's, about the job (as Kueue). */
		written_event(out, REC_WRITTEN_OWNER, r, in->note, false);
		if (r[0] == 'F') {
			out->log = "Workload finished";
			out->log_reason = r;
			out->log_message = in->note;
		}
		return;
	}
	out->preempted = strcmp(r, "Preempted") == 0;
	/* Kueue's eviction announces itself (EvictedDueTo<reason>, the
	 * condition's message) before the preemptor's Preempted. */
	if (out->preempted) {
		written_event(out, REC_WRITTEN_OBJECT, "EvictedDueToPreempted",
		    in->note, false);
		if (in->message_len > 0 &&
		    in->message_len < out->ev[0].note_len)
			out->ev[0].note_len = in->message_len;
	}
	/* Admitted here is the Workload controller's: the admission checks
	 * became Ready (the scheduler's is above). */
	written_event(
	    out, REC_WRITTEN_OBJECT, r, in->note, strcmp(r, "Admitted") == 0);
	if (!out->preempted &&
	    (strncmp(r, "Evicted", 7) == 0 || strcmp(r, "Admitted") == 0)) {
		out->log =
		    r[0] == 'A' ? "Workload admitted" : "Workload evicted";
		out->log_reason = r;
		out->log_message = in->note;
	}
}

void rec_written_plan_dispose(struct rec_written_plan *p)
{
	if (p == NULL)
		return;
	cu_free(p->note);
	memset(p, 0, sizeof(*p));
}
