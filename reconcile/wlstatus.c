/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconcile/wlstatus.c - the Workload's status merge patches (Kueue's
 * pkg/workload, pkg/workload/evict and .../finish): admission, admission
 * checks, pending, eviction, quota release, finish, deactivation target,
 * requeue and PodsReady, each a strict merge patch against the cached
 * Workload with its conditions set as apimeta.SetStatusCondition sets
 * them (api_conditions_set_json). Contracts in reconcile/reconcile.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/patch.h"
#include "reconcile/rec_int.h"

/* ---- small JSON helpers ---------------------------------------------- */

static json_t *arr_child(json_t *obj, const char *key)
{
	json_t *c = json_object_get(obj, key);

	if (json_is_array(c))
		return c;
	c = json_array();
	if (c == NULL || json_object_set_new(obj, key, c) != 0)
		return NULL;
	return c;
}

static int set_str(json_t *obj, const char *key, const char *s)
{
	return json_object_set_new(obj, key, json_string(s ? s : ""));
}

/* ---- status ----------------------------------------------------------- */

struct cond {
	const char *type;
	const char *status; /* "True" | "False" */
	const char *reason;
	const char *message;
	bool with_generation; /* observedGeneration = metadata.generation */
};

struct st {
	json_t *status; /* [borrowed] the status object being edited */
	int64_t generation;
	char now[CU_TIME_RFC3339_LEN];
	int64_t now_ns;
};

/* The conditions of the status being edited, decoded (they change as
 * the patch is built, so each question decodes them afresh); cs [owned:
 * api_conditions_dispose] is empty when they do not decode. */
static void conds_of(const json_t *status, struct api_conditions *cs)
{
	if (api_conditions_decode_status(status, cs, NULL) != CU_OK)
		memset(cs, 0, sizeof(*cs));
}

static bool cond_present(const json_t *status, const char *type)
{
	struct api_conditions cs;
	bool r;

	conds_of(status, &cs);
	r = api_conditions_find(&cs, type) != NULL;
	api_conditions_dispose(&cs);
	return r;
}

static bool cond_is_true(const json_t *status, const char *type)
{
	struct api_conditions cs;
	bool r;

	conds_of(status, &cs);
	r = api_conditions_true(&cs, type);
	api_conditions_dispose(&cs);
	return r;
}

/* apimeta.SetStatusCondition (api_conditions_set_json). Returns 0 or -1
 * (out of memory). */
static int cond_set(struct st *s, const struct cond *c)
{
	struct api_condition_set set = {c->type,
	    strcmp(c->status, "True") == 0 ? API_COND_TRUE : API_COND_FALSE,
	    c->reason, c->message, c->with_generation && s->generation != 0,
	    s->generation};

	return api_conditions_set_json(s->status, &set, s->now, NULL) == CU_OK
		   ? 0
		   : -1;
}

/* resetActiveCondition: a True condition becomes False with
 * "Previously: <message>". */
static int cond_reset_active(struct st *s, const char *type, const char *reason)
{
	struct api_conditions cs;
	const struct api_condition *c;
	char *msg = NULL;
	bool active;
	int rc;

	conds_of(s->status, &cs);
	c = api_conditions_find(&cs, type);
	active = c != NULL && c->status == API_COND_TRUE;
	if (active)
		msg =
		    cu_asprintf("Previously: %s", c->message ? c->message : "");
	api_conditions_dispose(&cs);
	if (!active)
		return 0;
	if (msg == NULL)
		return -1;
	rc = cond_set(s, &(struct cond){type, "False", reason, msg, true});
	cu_free(msg);
	return rc;
}

/* SyncAdmittedCondition with UnadmittedWorkloadsObservability on and no
 * admission checks: Admitted follows QuotaReserved; leaving Admitted adds
 * the admitted seconds to accumulatedPastExecutionTimeSeconds. */
static int sync_admitted(struct st *s)
{
	struct api_conditions cs;
	const struct api_condition *ad;
	bool reserved, was, has_ltt = false, ready;
	int64_t t = 0;

	conds_of(s->status, &cs);
	ad = api_conditions_find(&cs, REC_COND_ADMITTED);
	reserved = api_conditions_true(&cs, REC_COND_QUOTA_RESERVED);
	was = ad != NULL && ad->status == API_COND_TRUE;
	if (ad != NULL && ad->has_last_transition) {
		has_ltt = true;
		t = ad->last_transition_ns;
	}
	if (ad == NULL &&
	    api_conditions_find(&cs, REC_COND_QUOTA_RESERVED) == NULL) {
		api_conditions_dispose(&cs);
		return 0;
	}
	api_conditions_dispose(&cs);
	ready = rec__checks_all_ready(s->status);
	if (was && !(reserved && ready)) {
		json_t *acc;
		int64_t d;

		if (has_ltt) {
			d = (s->now_ns - t) / 1000000000LL;
			acc = json_object_get(
			    s->status, "accumulatedPastExecutionTimeSeconds");
			if (json_is_integer(acc))
				d += json_integer_value(acc);
			if (d > INT32_MAX)
				d = INT32_MAX;
			if (d < INT32_MIN)
				d = INT32_MIN;
			if (json_object_set_new(s->status,
				"accumulatedPastExecutionTimeSeconds",
				json_integer(d)) != 0)
				return -1;
		}
	}
	if (reserved && !ready)
		return cond_set(s, &(struct cond){REC_COND_ADMITTED, "False",
				       REC_ADMITTED_UNSATISFIED_CHECKS,
				       REC_MSG_UNSATISFIED_CHECKS, true});
	if (reserved)
		return cond_set(
		    s, &(struct cond){REC_COND_ADMITTED, "True", "Admitted",
			   "The workload is admitted", true});
	return cond_set(
	    s, &(struct cond){REC_COND_ADMITTED, "False", "NoReservation",
		   "The workload has no reservation", true});
}

/* UnsetQuotaReservationWithCondition */
static int unset_reservation(
    struct st *s, const char *reason, const char *message)
{
	if (cond_set(s, &(struct cond){REC_COND_QUOTA_RESERVED, "False", reason,
			    message, true}) != 0)
		return -1;
	json_object_del(s->status, "admission");
	return sync_admitted(s);
}

/* A status change must say why: CU_EINVAL "<what>: reason: Required
 * value" when reason is NULL or "". */
static int need_reason(const char *reason, const char *what, cu_error *err)
{
	if (reason == NULL || *reason == '\0')
		return cu_error_set(
		    err, CU_EINVAL, "%s: reason: Required value", what);
	return CU_OK;
}

/* Encode wl into *from (as read) and *to (a copy to edit), with s set up
 * on to's status. */
static int status_begin(const struct api_workload *wl, int64_t now_ns,
    json_t **from, json_t **to, struct st *s, cu_error *err)
{
	int rc;

	*from = *to = NULL;
	rc = api_workload_encode(from, wl, err);
	if (rc != CU_OK)
		return rc;
	*to = json_deep_copy(*from);
	if (*to == NULL ||
	    (s->status = api_json_obj_child(*to, "status")) == NULL) {
		json_decref(*from);
		json_decref(*to);
		*from = *to = NULL;
		return rec__nomem(err, "workload status");
	}
	s->generation = wl->meta.has_generation ? wl->meta.generation : 0;
	s->now_ns = now_ns;
	cu_time_format_rfc3339(now_ns, s->now);
	return CU_OK;
}

static int status_end(
    json_t *from, json_t *to, int edit_rc, json_t **patch, cu_error *err)
{
	int rc;

	if (edit_rc != 0)
		rc = rec__nomem(err, "workload status");
	else
		rc = rec__strict_patch(from, to, patch, err);
	json_decref(from);
	json_decref(to);
	return rc;
}

static json_t *admission_json(const struct adm_decision *d)
{
	json_t *adm, *psas, *psa, *flavors, *usage;
	char q[API_QUANTITY_STR_MAX + 16];
	size_t i, k;

	adm = json_pack("{s:s, s:[]}", "clusterQueue", d->cluster_queue,
	    "podSetAssignments");
	if (adm == NULL)
		return NULL;
	psas = json_object_get(adm, "podSetAssignments");
	for (i = 0; i < d->n_podsets; i++) {
		const struct adm_podset_assignment *a = &d->podsets[i];

		psa = json_pack("{s:s, s:{}, s:{}, s:i}", "name",
		    a->name ? a->name : "main", "flavors", "resourceUsage",
		    "count", (json_int_t)a->count);
		if (psa == NULL || json_array_append_new(psas, psa) != 0)
			goto fail;
		if (a->topology != NULL &&
		    json_object_set_new(psa, "topologyAssignment",
			json_deep_copy(a->topology)) != 0)
			goto fail;
		flavors = json_object_get(psa, "flavors");
		usage = json_object_get(psa, "resourceUsage");
		for (k = 0; k < a->n_uses; k++) {
			const struct adm_flavor_use *u = &a->uses[k];

			adm_format_quantity(
			    u->resource, u->usage, q, sizeof(q));
			if (set_str(flavors, u->resource, u->flavor) != 0 ||
			    set_str(usage, u->resource, q) != 0)
				goto fail;
		}
	}
	return adm;
fail:
	json_decref(adm);
	return NULL;
}

int rec_wl_status_admit(const struct api_workload *wl,
    const struct adm_decision *d, int64_t now_ns, json_t **patch, cu_error *err)
{
	return rec_wl_status_admit_wait(wl, d, false, now_ns, patch, err);
}

/* PodsReady=False, WaitForStart: the condition of a Workload whose pods
 * have not started (waitForPodsReady). */
static int pods_wait_for_start(struct st *s)
{
	return cond_set(s,
	    &(struct cond){REC_COND_PODS_READY, "False",
		REC_PODS_READY_WAIT_FOR_START, REC_MSG_PODS_NOT_READY, true});
}

int rec_wl_status_admit_wait(const struct api_workload *wl,
    const struct adm_decision *d, bool pods_ready, int64_t now_ns,
    json_t **patch, cu_error *err)
{
	return rec_wl_status_admit_checks(
	    wl, d, pods_ready, NULL, now_ns, patch, err);
}

int rec_wl_status_admit_checks(const struct api_workload *wl,
    const struct adm_decision *d, bool pods_ready,
    const struct api_cluster_queue_spec *cq, int64_t now_ns, json_t **patch,
    cu_error *err)
{
	json_t *from, *to, *adm;
	struct st s;
	char *msg;
	int rc, e = 0;

	*patch = NULL;
	if (d == NULL || d->kind != ADM_ADMIT)
		return cu_error_set(
		    err, CU_EINVAL, "admission decision: not an admission");
	if (d->cluster_queue == NULL || *d->cluster_queue == '\0')
		return cu_error_set(err, CU_EINVAL,
		    "admission decision: clusterQueue: Required value");
	rc = status_begin(wl, now_ns, &from, &to, &s, err);
	if (rc != CU_OK)
		return rc;
	adm = admission_json(d);
	msg =
	    cu_asprintf("Quota reserved in ClusterQueue %s", d->cluster_queue);
	if (adm == NULL || msg == NULL ||
	    json_object_set_new(s.status, "admission", adm) != 0) {
		e = -1;
	} else {
		e = cond_set(&s, &(struct cond){REC_COND_QUOTA_RESERVED, "True",
				     "QuotaReserved", msg, true});
		if (e == 0)
			e = cond_reset_active(
			    &s, REC_COND_EVICTED, "QuotaReserved");
		if (e == 0)
			e = cond_reset_active(
			    &s, REC_COND_PREEMPTED, "QuotaReserved");
		if (e == 0)
			e = cond_reset_active(
			    &s, "BlockedOnPreemptionGates", "QuotaReserved");
		if (e == 0 && cq != NULL)
			e = rec__checks_sync(s.status, cq, s.now);
		if (e == 0)
			e = sync_admitted(&s);
		if (e == 0 && pods_ready)
			e = pods_wait_for_start(&s);
		json_object_del(s.status, "resourceRequests");
	}
	cu_free(msg);
	return status_end(from, to, e, patch, err);
}

int rec_wl_status_pending(const struct api_workload *wl, const char *reason,
    const char *message, int64_t now_ns, json_t **patch, cu_error *err)
{
	return rec_wl_status_pending_requests(
	    wl, reason, message, NULL, now_ns, patch, err);
}

int rec_wl_status_pending_requests(const struct api_workload *wl,
    const char *reason, const char *message, const json_t *requests,
    int64_t now_ns, json_t **patch, cu_error *err)
{
	json_t *from, *to;
	struct st s;
	int rc, edit;

	*patch = NULL;
	rc = need_reason(reason, "pending status", err);
	if (rc == CU_OK)
		rc = status_begin(wl, now_ns, &from, &to, &s, err);
	if (rc != CU_OK)
		return rc;
	edit = unset_reservation(&s, reason, message);
	if (edit == 0 && requests != NULL &&
	    json_object_set_new(
		s.status, "resourceRequests", json_deep_copy(requests)) != 0)
		edit = -1;
	return status_end(from, to, edit, patch, err);
}

int rec_wl_status_sync_checks(const struct api_workload *wl,
    const struct api_cluster_queue_spec *cq, int64_t now_ns, json_t **patch,
    cu_error *err)
{
	json_t *from, *to;
	struct st s;
	int rc, e;

	*patch = NULL;
	rc = status_begin(wl, now_ns, &from, &to, &s, err);
	if (rc != CU_OK)
		return rc;
	e = cq != NULL ? rec__checks_sync(s.status, cq, s.now) : 0;
	if (e == 0)
		e = sync_admitted(&s);
	return status_end(from, to, e, patch, err);
}

/* resetChecksOnEviction */
static int reset_checks(struct st *s)
{
	json_t *checks = json_object_get(s->status, "admissionChecks"), *c, *n;
	size_t i;

	json_array_foreach(checks, i, c)
	{
		const char *state = api_json_str(c, "state");
		json_t *rc_old = json_object_get(c, "retryCount");
		json_t *ras = json_object_get(c, "requeueAfterSeconds");
		char *msg;

		if (state == NULL || strcmp(state, "Pending") == 0)
			continue;
		msg = cu_asprintf(
		    "Reset to Pending after eviction. Previously: %s", state);
		n = json_pack("{s:O?, s:s, s:s, s:s}", "name",
		    json_object_get(c, "name"), "state", "Pending",
		    "lastTransitionTime", s->now, "message", msg ? msg : "");
		if (msg == NULL || n == NULL) {
			cu_free(msg);
			json_decref(n);
			return -1;
		}
		cu_free(msg);
		if (ras != NULL &&
		    json_object_set(n, "requeueAfterSeconds", ras) != 0) {
			json_decref(n);
			return -1;
		}
		if (strcmp(state, "Retry") == 0 &&
		    json_object_set_new(n, "retryCount",
			json_integer((json_is_integer(rc_old)
					     ? json_integer_value(rc_old)
					     : 0) +
				     1)) != 0) {
			json_decref(n);
			return -1;
		}
		if (json_array_set_new(checks, i, n) != 0)
			return -1;
	}
	return 0;
}

/* workloadEvictionStateInc for an empty underlying cause. The CRD requires
 * underlyingCause, so the empty cause is written out as "". */
static int count_eviction(struct st *s, const char *reason, const char *cause)
{
	json_t *stats = api_json_obj_child(s->status, "schedulingStats"), *ev,
	       *e;
	size_t i;

	if (stats == NULL || (ev = arr_child(stats, "evictions")) == NULL)
		return -1;
	json_array_foreach(ev, i, e)
	{
		const char *r = api_json_str(e, "reason");
		const char *u = api_json_str(e, "underlyingCause");
		json_t *cnt = json_object_get(e, "count");

		if (r == NULL || strcmp(r, reason) != 0 ||
		    strcmp(u ? u : "", cause) != 0)
			continue;
		return json_object_set_new(e, "count",
		    json_integer(
			(json_is_integer(cnt) ? json_integer_value(cnt) : 0) +
			1));
	}
	return json_array_append_new(
	    ev, json_pack("{s:s, s:s, s:i}", "reason", reason,
		    "underlyingCause", cause, "count", 1));
}

/* apimeta.RemoveStatusCondition */
static void cond_remove(struct st *s, const char *type)
{
	struct api_conditions cs;
	const struct api_condition *c;

	conds_of(s->status, &cs);
	c = api_conditions_find(&cs, type);
	/* the decoded list keeps the array's order */
	if (c != NULL)
		json_array_remove(json_object_get(s->status, "conditions"),
		    (size_t)(c - cs.items));
	api_conditions_dispose(&cs);
}

static int close_preemption_gates(struct st *s)
{
	json_t *gates = json_object_get(s->status, "preemptionGates"), *g;
	size_t i;

	json_array_foreach(gates, i, g)
	{
		if (!json_is_object(g))
			continue;
		if (set_str(g, "position", "Closed") != 0 ||
		    set_str(g, "lastTransitionTime", s->now) != 0)
			return -1;
	}
	return 0;
}

int rec_wl_status_evict(const struct api_workload *wl,
    const struct rec_eviction *ev, int64_t now_ns, json_t **patch,
    cu_error *err)
{
	json_t *from, *to;
	struct st s;
	char *why = NULL;
	const char *cond_reason;
	int rc, e = 0;

	*patch = NULL;
	rc = need_reason(ev != NULL ? ev->reason : NULL, "eviction", err);
	if (rc != CU_OK ||
	    api_conditions_true(&wl->status.conditions, REC_COND_EVICTED))
		return rc;
	/* Kueue's Evict: a deactivation with a cause says so in the
	 * condition's reason (ReasonWithCause); the counters keep the
	 * plain reason. */
	cond_reason = ev->reason;
	if (strcmp(ev->reason, REC_EVICTED_DEACTIVATED) == 0 &&
	    ev->underlying_cause != NULL && *ev->underlying_cause) {
		why =
		    cu_asprintf("%sDueTo%s", ev->reason, ev->underlying_cause);
		if (why == NULL)
			return rec__nomem(err, "workload status");
		cond_reason = why;
	}
	rc = status_begin(wl, now_ns, &from, &to, &s, err);
	if (rc != CU_OK) {
		cu_free(why);
		return rc;
	}
	/* Kueue's CustomPrepare (Preempted) runs before prepareForEviction. */
	if (ev->preempted_reason != NULL)
		e = cond_set(&s, &(struct cond){REC_COND_PREEMPTED, "True",
				     ev->preempted_reason, ev->message, false});
	if (e == 0)
		e = cond_set(&s, &(struct cond){REC_COND_EVICTED, "True",
				     cond_reason, ev->message, true});
	json_object_del(s.status, "clusterName");
	json_object_del(s.status, "nominatedClusterNames");
	json_object_del(s.status, "unhealthyNodes");
	if (e == 0)
		e = reset_checks(&s);
	if (e == 0 && cond_is_true(s.status, "BlockedOnPreemptionGates"))
		e = cond_set(&s, &(struct cond){"BlockedOnPreemptionGates",
				     "False", cond_reason, ev->message, true});
	if (e == 0)
		e = close_preemption_gates(&s);
	if (e == 0)
		e = count_eviction(&s, ev->reason,
		    ev->underlying_cause ? ev->underlying_cause : "");
	/* The deactivation's own preparation: its target is consumed and
	 * the requeue state forgotten. */
	if (e == 0 && strcmp(ev->reason, REC_EVICTED_DEACTIVATED) == 0) {
		cond_remove(&s, REC_COND_DEACTIVATION_TARGET);
		json_object_del(s.status, "requeueState");
	}
	if (e == 0 && ev->set_requeue) {
		char at[CU_TIME_RFC3339_LEN];

		cu_time_format_rfc3339(ev->requeue_at_ns, at);
		e = json_object_set_new(s.status, "requeueState",
		    json_pack("{s:i, s:s}", "count",
			(json_int_t)ev->requeue_count, "requeueAt", at));
	}
	cu_free(why);
	return status_end(from, to, e, patch, err);
}

int rec_wl_status_release(const struct api_workload *wl, int64_t now_ns,
    json_t **patch, cu_error *err)
{
	return rec_wl_status_release_parked(wl, false, now_ns, patch, err);
}

int rec_wl_status_release_parked(const struct api_workload *wl, bool park,
    int64_t now_ns, json_t **patch, cu_error *err)
{
	const struct api_condition *ev;
	json_t *from, *to;
	struct st s;
	bool requeue;
	int rc, e;

	*patch = NULL;
	ev = api_conditions_find(&wl->status.conditions, REC_COND_EVICTED);
	if (ev == NULL || ev->status != API_COND_TRUE ||
	    !api_conditions_true(
		&wl->status.conditions, REC_COND_QUOTA_RESERVED))
		return CU_OK;
	requeue = !park && ev->reason != NULL &&
		  (strcmp(ev->reason, REC_EVICTED_PREEMPTED) == 0 ||
		      strcmp(ev->reason, REC_EVICTED_NODE_FAILURES) == 0);
	rc = status_begin(wl, now_ns, &from, &to, &s, err);
	if (rc != CU_OK)
		return rc;
	e = cond_set(
	    &s, &(struct cond){REC_COND_REQUEUED, requeue ? "True" : "False",
		    ev->reason ? ev->reason : "", ev->message, true});
	if (e == 0)
		e = unset_reservation(
		    &s, REC_REASON_PENDING_EVALUATION, ev->message);
	if (e == 0 && cond_present(s.status, REC_COND_PODS_READY))
		e = pods_wait_for_start(&s);
	return status_end(from, to, e, patch, err);
}

int rec_wl_status_finish(const struct api_workload *wl, const char *reason,
    const char *message, int64_t now_ns, json_t **patch, cu_error *err)
{
	return rec_wl_status_finish_ready(
	    wl, reason, message, NULL, 0, now_ns, patch, err);
}

int rec_wl_status_finish_ready(const struct api_workload *wl,
    const char *reason, const char *message, const char *ready_reason,
    int64_t ready_ns, int64_t now_ns, json_t **patch, cu_error *err)
{
	json_t *from, *to;
	struct st s;
	int rc, e;

	*patch = NULL;
	rc = need_reason(reason, "finished status", err);
	if (rc != CU_OK ||
	    api_conditions_true(&wl->status.conditions, REC_COND_FINISHED))
		return rc;
	rc = status_begin(wl, now_ns, &from, &to, &s, err);
	if (rc != CU_OK)
		return rc;
	e = cond_set(&s,
	    &(struct cond){REC_COND_FINISHED, "True", reason, message, true});
	if (e == 0 && ready_reason != NULL &&
	    !cond_is_true(s.status, REC_COND_PODS_READY)) {
		struct st r = s;

		r.now_ns = ready_ns;
		cu_time_format_rfc3339(ready_ns, r.now);
		e = cond_set(&r, &(struct cond){REC_COND_PODS_READY, "True",
				     ready_reason, REC_MSG_PODS_READY, true});
	}
	return status_end(from, to, e, patch, err);
}

int rec_wl_status_deactivation_target(const struct api_workload *wl,
    const char *reason, const char *message, int64_t now_ns, json_t **patch,
    cu_error *err)
{
	json_t *from, *to;
	struct st s;
	int rc, e;

	*patch = NULL;
	rc = need_reason(reason, "deactivation target", err);
	if (rc != CU_OK || api_conditions_true(&wl->status.conditions,
			       REC_COND_DEACTIVATION_TARGET))
		return rc;
	rc = status_begin(wl, now_ns, &from, &to, &s, err);
	if (rc != CU_OK)
		return rc;
	e = cond_set(&s, &(struct cond){REC_COND_DEACTIVATION_TARGET, "True",
			     reason, message, true});
	json_object_del(s.status, "accumulatedPastExecutionTimeSeconds");
	return status_end(from, to, e, patch, err);
}

int rec_wl_status_requeued(const struct api_workload *wl, const char *reason,
    const char *message, int64_t now_ns, json_t **patch, cu_error *err)
{
	json_t *from, *to;
	struct st s;
	int rc;

	*patch = NULL;
	rc = need_reason(reason, "requeued status", err);
	if (rc != CU_OK ||
	    api_conditions_true(&wl->status.conditions, REC_COND_REQUEUED))
		return rc;
	rc = status_begin(wl, now_ns, &from, &to, &s, err);
	if (rc != CU_OK)
		return rc;
	return status_end(from, to,
	    cond_set(&s, &(struct cond){REC_COND_REQUEUED, "True", reason,
			     message, true}),
	    patch, err);
}

bool rec_workload_on_hold(const struct api_workload *wl)
{
	const struct api_condition *c = api_conditions_find(
	    &wl->status.conditions, REC_COND_QUOTA_RESERVED);

	return c != NULL && c->status == API_COND_FALSE && c->reason != NULL &&
	       strcmp(c->reason, REC_REASON_ON_HOLD) == 0;
}

int rec_wl_status_hold(const struct api_workload *wl, bool hold,
    const char *message, int64_t now_ns, json_t **patch, cu_error *err)
{
	json_t *from, *to;
	struct st s;
	int rc;

	*patch = NULL;
	if (hold ? !rec_workload_holds_quota(wl) ||
		       api_conditions_true(
			   &wl->status.conditions, REC_COND_FINISHED)
		 : !rec_workload_on_hold(wl))
		return CU_OK;
	rc = status_begin(wl, now_ns, &from, &to, &s, err);
	if (rc != CU_OK)
		return rc;
	return status_end(from, to,
	    unset_reservation(&s,
		hold ? REC_REASON_ON_HOLD : REC_REASON_PENDING_EVALUATION,
		message),
	    patch, err);
}

int rec_wl_status_backoff_finished(const struct api_workload *wl,
    int64_t now_ns, json_t **patch, cu_error *err)
{
	json_t *from, *to, *rs;
	struct st s;
	int rc, e;

	*patch = NULL;
	rc = status_begin(wl, now_ns, &from, &to, &s, err);
	if (rc != CU_OK)
		return rc;
	e = cond_set(&s,
	    &(struct cond){REC_COND_REQUEUED, "True",
		REC_REQUEUED_BACKOFF_FINISHED, REC_MSG_BACKOFF_FINISHED, true});
	rs = json_object_get(s.status, "requeueState");
	if (json_is_object(rs))
		json_object_del(rs, "requeueAt");
	return status_end(from, to, e, patch, err);
}

int rec_wl_status_pods_ready(const struct api_workload *wl, bool ready,
    const char *reason, const char *message, int64_t now_ns, json_t **patch,
    cu_error *err)
{
	json_t *from, *to;
	struct st s;
	int rc;

	*patch = NULL;
	rc = need_reason(reason, "pods ready status", err);
	if (rc == CU_OK)
		rc = status_begin(wl, now_ns, &from, &to, &s, err);
	if (rc != CU_OK)
		return rc;
	return status_end(from, to,
	    cond_set(&s, &(struct cond){REC_COND_PODS_READY,
			     ready ? "True" : "False", reason, message, true}),
	    patch, err);
}
