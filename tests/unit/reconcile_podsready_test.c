/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/reconcile_podsready_test.c - waitForPodsReady in the pure
 * reconcile layer, table-driven:
 *
 *   the Workload reconciler (rec_workload_reconcile), condition states in,
 *   plan out: the timeout of WaitForStart (from Admitted) and
 *   WaitForRecovery (from PodsReady), the PodsReadyTimeout eviction with
 *   its requeueState and the pods' cause, backoffLimitCount (a
 *   DeactivationTarget, then the deactivation), the release's queue
 *   timestamp (requeuingStrategy Creation), the engine's BACKOFF until
 *   requeueAt and Requeued=True (BackoffFinished) after it, reactivation
 *   after a DeactivatedDueTo<cause> eviction;
 *   the job reconciler (rec_job_reconcile): the PodsReady condition of a
 *   started Job or JobSet (Started, Recovered, WaitForStart,
 *   WaitForRecovery) with the pods' cause; PodsReady=True deferred after
 *   the admission (a wake), dated from when the pods were seen ready, and
 *   folded into the Finished write of a job that succeeded meanwhile;
 *   the pure helpers: the backoff arithmetic, the pods' cause from a pod
 *   LIST, the status builders (admission and release fold PodsReady in,
 *   the eviction writes requeueState).
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "reconcile/reconcile.h"
#include "tests/unit/fixtures.h"

#define T0 "2026-01-01T00:00:00Z"
#define S (1000000000LL)
#define ADMISSION                                                              \
	"{\"clusterQueue\":\"cq-a\",\"podSetAssignments\":[{\"name\":"         \
	"\"main\",\"flavors\":{\"cpu\":\"spot\"},"                             \
	"\"resourceUsage\":{\"cpu\":\"2\"},\"count\":2}]}"

static json_t *parse(const char *text)
{
	json_error_t jerr;
	json_t *j = json_loads(text, 0, &jerr);

	cr_assert_not_null(j, "test JSON: %s: %s", jerr.text, text);
	return j;
}

static int64_t t0(void)
{
	int64_t t;
	cu_error err;

	cr_assert_eq(cu_time_parse(T0, &t, &err), CU_OK);
	return t;
}

/* A condition JSON with lastTransitionTime T0 + at_s. */
static json_t *cond(const char *type, const char *status, const char *reason,
    const char *msg, int at_s)
{
	char ts[CU_TIME_RFC3339_LEN];

	cu_time_format_rfc3339(t0() + at_s * S, ts);
	return json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", type, "status",
	    status, "reason", reason, "message", msg, "lastTransitionTime", ts);
}

static void app(char *buf, size_t cap, ...)
{
	va_list ap;
	const char *s;
	size_t len = strlen(buf);

	va_start(ap, cap);
	while ((s = va_arg(ap, const char *)) != NULL) {
		size_t n = strlen(s);

		cr_assert_lt(len + n, cap);
		memcpy(buf + len, s, n + 1);
		len += n;
	}
	va_end(ap);
}

/* A time as "+Ns" after now, "forever" (INT64_MAX) or "0". */
static void rel(char *out, size_t cap, int64_t at, int64_t now)
{
	if (at == INT64_MAX)
		snprintf(out, cap, "forever");
	else if (at == 0)
		snprintf(out, cap, "0");
	else
		snprintf(out, cap, "%+llds", (long long)((at - now) / S));
}

/* The job table also shows a PodsReady condition whose message changed
 * without a transition. */
static bool show_pods_ready;

/* Conditions a status write sets now, as type=status:reason:message, and
 * requeueState when it is written. */
static void render_status(json_t *body, int64_t now, char *buf, size_t cap)
{
	char ts[CU_TIME_RFC3339_LEN], n[64];
	json_t *st = json_object_get(body, "status");
	json_t *rs = json_object_get(st, "requeueState");
	json_t *c;
	size_t i;

	cu_time_format_rfc3339(now, ts);
	json_array_foreach(json_object_get(st, "conditions"), i, c)
	{
		const char *t =
		    json_string_value(json_object_get(c, "lastTransitionTime"));

		const char *ty = json_string_value(json_object_get(c, "type"));

		/* PodsReady: also a new message without a transition */
		if ((t == NULL || strcmp(t, ts) != 0) &&
		    (!show_pods_ready || ty == NULL ||
			strcmp(ty, "PodsReady") != 0))
			continue;
		app(buf, cap, json_string_value(json_object_get(c, "type")),
		    "=", json_string_value(json_object_get(c, "status")), ":",
		    json_string_value(json_object_get(c, "reason")), ":",
		    json_string_value(json_object_get(c, "message")), NULL);
		if (t != NULL && strcmp(t, ts) != 0 && show_pods_ready &&
		    strcmp(json_string_value(json_object_get(c, "status")),
			"True") == 0) {
			int64_t at;

			cr_assert_eq(cu_time_parse(t, &at, NULL), CU_OK);
			rel(n, sizeof(n), at, now);
			app(buf, cap, "@", n, NULL);
		}
	}
	if (json_is_object(rs)) {
		int64_t at = 0;
		const char *s =
		    json_string_value(json_object_get(rs, "requeueAt"));

		app(buf, cap, " requeue", NULL);
		if (json_object_get(rs, "count") != NULL) {
			snprintf(n, sizeof(n), "#%lld",
			    (long long)json_integer_value(
				json_object_get(rs, "count")));
			app(buf, cap, n, NULL);
		}
		if (s != NULL) {
			cr_assert_eq(cu_time_parse(s, &at, NULL), CU_OK);
			rel(n, sizeof(n), at, now);
			app(buf, cap, "@", n, NULL);
		} else if (json_is_null(json_object_get(rs, "requeueAt"))) {
			app(buf, cap, "@null", NULL);
		}
	} else if (json_is_null(rs)) {
		app(buf, cap, " requeue=null", NULL);
	}
}

static void render(const struct rec_plan *p, int64_t now, int64_t created,
    char *buf, size_t cap)
{
	size_t i;
	char n[64];

	buf[0] = '\0';
	for (i = 0; i < p->n; i++) {
		const struct rec_item *it = &p->items[i];

		if (i > 0)
			app(buf, cap, " | ", NULL);
		switch (it->kind) {
		case REC_ITEM_WRITE:
			if (it->op == REC_WRITE_PATCH) {
				app(buf, cap, "patch", NULL);
				break;
			}
			app(buf, cap, it->eviction ? "evict " : "status ",
			    NULL);
			render_status(it->body, now, buf, cap);
			if (it->done_reason != NULL)
				app(buf, cap, " [", it->done_reason, "]", NULL);
			if (it->cause != NULL)
				app(buf, cap, " cause=", it->cause, NULL);
			break;
		case REC_ITEM_EVENT:
			app(buf, cap, "event ", it->reason, NULL);
			break;
		case REC_ITEM_WARN:
			app(buf, cap, "warn", NULL);
			break;
		case REC_ITEM_ENGINE:
			switch (it->engine) {
			case REC_ENGINE_WAKE:
				rel(n, sizeof(n), it->at_ns, now);
				app(buf, cap, "wake ", n, NULL);
				break;
			case REC_ENGINE_BACKOFF:
				rel(n, sizeof(n), it->at_ns, now);
				app(buf, cap, "backoff ", n, NULL);
				break;
			case REC_ENGINE_RELEASE:
				app(buf, cap, "release",
				    it->at_ns == 0	   ? ""
				    : it->at_ns == created ? " @created"
				    /* the Requeued=False condition's time */
				    : it->at_ns == t0() + 4 * S ? " @evicted"
								: " @?",
				    NULL);
				break;
			case REC_ENGINE_EVICTING:
				app(buf, cap, "evicting", NULL);
				break;
			case REC_ENGINE_ADD:
				app(buf, cap, "add", NULL);
				break;
			default:
				app(buf, cap, "engine?", NULL);
				break;
			}
			break;
		}
	}
}

/* ==== the Workload reconciler ============================================ */

enum pr {
	PR_NONE = 0,	/* no PodsReady condition */
	PR_START,	/* False, WaitForStart (generic message) */
	PR_START_CAUSE, /* False, WaitForStart, the pods' cause */
	PR_RECOVERY,	/* False, WaitForRecovery since T0+10 */
	PR_READY,	/* True, Started */
	PR_OLD_REASON,	/* False, reason "PodsReady" (older Kueue) */
};

struct wrow {
	const char *name;
	bool holds;	       /* status.admission, QuotaReserved, Admitted */
	enum pr pr;	       /* the PodsReady condition */
	bool evicted;	       /* Evicted=True */
	bool inactive;	       /* spec.active=false */
	bool limit_target;     /* DeactivationTarget RequeuingLimitExceeded */
	const char *requeued;  /* Requeued=False with this reason */
	bool requeued_true;    /* Requeued=True BackoffFinished */
	int count;	       /* requeueState.count (0: none) */
	int requeue_at_s;      /* requeueState.requeueAt, now + this (0 none;
				  -1: in the past) */
	bool queued;	       /* the engine has it ... */
	enum que_where where;  /* ... here */
	int64_t backoff_until; /* where == BACKOFF: -1 = requeueAt, -2 = max */
	int now_s;	       /* now = T0 + this */
	bool disabled;	       /* waitForPodsReady off */
	bool no_recovery;      /* no recoveryTimeout */
	int limit;	       /* backoffLimitCount (0: unset) */
	bool creation;	       /* requeuingStrategy timestamp Creation */
	const char *want;
};

#define MSG_TIMEOUT "Exceeded the PodsReady timeout team-a/w"
#define CAUSE                                                                  \
	"1 of 2 pods not ready: 0/3 nodes are available: 3 Insufficient cpu"

static const struct wrow wrows[] = {
    {.name = "start_wakes_at_timeout",
	.holds = true,
	.pr = PR_START,
	.queued = true,
	.where = QUE_WL_ADMITTED,
	.now_s = 1,
	.want = "wake +2s"},
    {.name = "no_condition_counts_from_admitted",
	.holds = true,
	.queued = true,
	.where = QUE_WL_ADMITTED,
	.now_s = 2,
	.want = "wake +1s"},
    {.name = "old_reason_is_wait_for_start",
	.holds = true,
	.pr = PR_OLD_REASON,
	.queued = true,
	.where = QUE_WL_ADMITTED,
	.now_s = 2,
	.want = "wake +1s"},
    {.name = "ready_no_timeout",
	.holds = true,
	.pr = PR_READY,
	.queued = true,
	.where = QUE_WL_ADMITTED,
	.now_s = 50,
	.want = ""},
    {.name = "disabled_no_timeout",
	.holds = true,
	.pr = PR_START,
	.queued = true,
	.where = QUE_WL_ADMITTED,
	.now_s = 50,
	.disabled = true,
	.want = ""},
    {.name = "timeout_evicts_with_requeue_state",
	.holds = true,
	.pr = PR_START,
	.queued = true,
	.where = QUE_WL_ADMITTED,
	.now_s = 3,
	.want = "evicting | evict Evicted=True:PodsReadyTimeout:" MSG_TIMEOUT
		" requeue#1@+10s [EvictedDueToPodsReadyTimeout] "
		"cause=WaitForStart"},
    {.name = "timeout_names_the_pods_cause",
	.holds = true,
	.pr = PR_START_CAUSE,
	.queued = true,
	.where = QUE_WL_ADMITTED,
	.now_s = 4,
	.want = "evicting | evict Evicted=True:PodsReadyTimeout:" MSG_TIMEOUT
		": " CAUSE " requeue#1@+10s [EvictedDueToPodsReadyTimeout] "
		"cause=WaitForStart"},
    {.name = "third_timeout_backs_off_longer",
	.holds = true,
	.pr = PR_START,
	.count = 2,
	.queued = true,
	.where = QUE_WL_ADMITTED,
	.now_s = 3,
	.want = "evicting | evict Evicted=True:PodsReadyTimeout:" MSG_TIMEOUT
		" requeue#3@+25s [EvictedDueToPodsReadyTimeout] "
		"cause=WaitForStart"},
    {.name = "recovery_counts_from_pods_ready",
	.holds = true,
	.pr = PR_RECOVERY,
	.queued = true,
	.where = QUE_WL_ADMITTED,
	.now_s = 12,
	.want = "wake +3s"},
    {.name = "recovery_timeout_evicts",
	.holds = true,
	.pr = PR_RECOVERY,
	.queued = true,
	.where = QUE_WL_ADMITTED,
	.now_s = 15,
	.want = "evicting | evict Evicted=True:PodsReadyTimeout:" MSG_TIMEOUT
		" requeue#1@+10s [EvictedDueToPodsReadyTimeout] "
		"cause=WaitForRecovery"},
    {.name = "recovery_without_timeout_waits",
	.holds = true,
	.pr = PR_RECOVERY,
	.queued = true,
	.where = QUE_WL_ADMITTED,
	.now_s = 500,
	.no_recovery = true,
	.want = ""},
    {.name = "limit_reached_targets_deactivation",
	.holds = true,
	.pr = PR_START,
	.count = 2,
	.limit = 2,
	.queued = true,
	.where = QUE_WL_ADMITTED,
	.now_s = 3,
	.want = "status DeactivationTarget=True:RequeuingLimitExceeded:"
		"exceeding the maximum number of re-queuing retries"},
    {.name = "below_limit_evicts",
	.holds = true,
	.pr = PR_START,
	.count = 1,
	.limit = 2,
	.queued = true,
	.where = QUE_WL_ADMITTED,
	.now_s = 3,
	.want = "evicting | evict Evicted=True:PodsReadyTimeout:" MSG_TIMEOUT
		" requeue#2@+20s [EvictedDueToPodsReadyTimeout] "
		"cause=WaitForStart"},
    {.name = "limit_target_deactivates",
	.holds = true,
	.pr = PR_START,
	.count = 2,
	.limit = 2,
	.limit_target = true,
	.queued = true,
	.where = QUE_WL_ADMITTED,
	.now_s = 3,
	.want = "patch"},
    {.name = "limit_deactivation_evicts",
	.holds = true,
	.pr = PR_START,
	.count = 2,
	.limit = 2,
	.limit_target = true,
	.inactive = true,
	.queued = true,
	.where = QUE_WL_ADMITTED,
	.now_s = 3,
	.want = "evicting | evict Evicted=True:"
		"DeactivatedDueToRequeuingLimitExceeded:The workload is "
		"deactivated due to exceeding the maximum number of "
		"re-queuing retries requeue=null "
		"[EvictedDueToDeactivatedDueToRequeuingLimitExceeded] "
		"cause=RequeuingLimitExceeded"},
    {.name = "evicting_no_second_timeout",
	.holds = true,
	.pr = PR_START,
	.queued = true,
	.where = QUE_WL_EVICTING,
	.now_s = 30,
	.want = ""},
    {.name = "evicted_no_second_timeout",
	.holds = true,
	.pr = PR_START,
	.evicted = true,
	.queued = true,
	.where = QUE_WL_ADMITTED,
	.now_s = 30,
	.want = ""},
    {.name = "released_backs_off",
	.requeued = "PodsReadyTimeout",
	.count = 1,
	.requeue_at_s = 10,
	.queued = true,
	.where = QUE_WL_EVICTING,
	.now_s = 5,
	/* requeuingStrategy timestamp Eviction: by the eviction's time */
	.want = "release @evicted | backoff +10s"},
    {.name = "released_creation_timestamp",
	.requeued = "PodsReadyTimeout",
	.count = 1,
	.requeue_at_s = 10,
	.queued = true,
	.where = QUE_WL_EVICTING,
	.now_s = 5,
	.creation = true,
	.want = "release @created | backoff +10s"},
    {.name = "released_preempted_not_requeued_parked",
	.requeued = "Preempted",
	.queued = true,
	.where = QUE_WL_EVICTING,
	.now_s = 5,
	/* Kueue's queue order: by creation after a preemption; Requeued
	 * False (a Workload owned by a single Pod, with
	 * SkipReassignmentForPodOwnedWorkloads) keeps it out of scheduling
	 * for good, as Kueue's backoffWaitingTimeExpired */
	.want = "release @created | backoff forever"},
    {.name = "added_backs_off",
	.requeued = "PodsReadyTimeout",
	.count = 1,
	.requeue_at_s = 10,
	.now_s = 5,
	.want = "add | backoff +10s"},
    {.name = "pending_backs_off",
	.requeued = "PodsReadyTimeout",
	.count = 1,
	.requeue_at_s = 10,
	.queued = true,
	.where = QUE_WL_PENDING,
	.now_s = 5,
	.want = "backoff +10s | wake +10s"},
    {.name = "backing_off_wakes",
	.requeued = "PodsReadyTimeout",
	.count = 1,
	.requeue_at_s = 10,
	.queued = true,
	.where = QUE_WL_BACKOFF,
	.backoff_until = -1,
	.now_s = 5,
	.want = "wake +10s"},
    {.name = "backoff_over_requeued",
	.requeued = "PodsReadyTimeout",
	.count = 1,
	.requeue_at_s = -1,
	.queued = true,
	.where = QUE_WL_BACKOFF,
	.backoff_until = -1,
	.now_s = 5,
	.want = "backoff forever | status Requeued=True:BackoffFinished:The "
		"workload backoff was finished requeue@null"},
    {.name = "backoff_finished_lets_go",
	.requeued_true = true,
	.count = 1,
	.queued = true,
	.where = QUE_WL_BACKOFF,
	.backoff_until = -2,
	.now_s = 5,
	.want = "backoff 0"},
    {.name = "reactivated_after_the_limit",
	.requeued = "DeactivatedDueToRequeuingLimitExceeded",
	.queued = true,
	.where = QUE_WL_PENDING,
	.now_s = 5,
	.want = "status Requeued=True:Reactivated:The workload was "
		"reactivated"},
    {.name = "backoff_finished_pending_nothing",
	.requeued_true = true,
	.count = 1,
	.queued = true,
	.where = QUE_WL_PENDING,
	.now_s = 5,
	.want = ""},
};

static bool eligible_yes(const char *ns, const char *queue, void *payload)
{
	(void)ns;
	(void)queue;
	(void)payload;
	return true;
}

static void wl_of(const struct wrow *r, int64_t now, struct api_workload *wl)
{
	json_t *d = parse(
	    "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\","
	    "\"metadata\":{\"name\":\"w\",\"namespace\":\"team-a\","
	    "\"uid\":\"u1\",\"resourceVersion\":\"5\",\"creationTimestamp\":"
	    "\"2025-12-31T23:00:00Z\"},"
	    "\"spec\":{\"queueName\":\"main\",\"podSets\":[{\"name\":\"main\","
	    "\"count\":2,\"template\":{\"spec\":{\"containers\":[{"
	    "\"name\":\"c\",\"image\":\"i\"}]}}}]},\"status\":"
	    "{\"conditions\":[]}}");
	json_t *st = json_object_get(d, "status");
	json_t *cs = json_object_get(st, "conditions");
	char ts[CU_TIME_RFC3339_LEN];
	cu_error err;

	if (r->holds) {
		json_object_set_new(st, "admission", parse(ADMISSION));
		json_array_append_new(
		    cs, cond("QuotaReserved", "True", "QuotaReserved", "m", 0));
		json_array_append_new(
		    cs, cond("Admitted", "True", "Admitted", "m", 0));
	}
	switch (r->pr) {
	case PR_START:
		json_array_append_new(
		    cs, cond("PodsReady", "False", "WaitForStart",
			    REC_MSG_PODS_NOT_READY, 0));
		break;
	case PR_START_CAUSE:
		json_array_append_new(
		    cs, cond("PodsReady", "False", "WaitForStart", CAUSE, 1));
		break;
	case PR_RECOVERY:
		json_array_append_new(
		    cs, cond("PodsReady", "False", "WaitForRecovery",
			    REC_MSG_PODS_WAIT_RECOVERY, 10));
		break;
	case PR_READY:
		json_array_append_new(cs, cond("PodsReady", "True", "Started",
					      REC_MSG_PODS_READY, 1));
		break;
	case PR_OLD_REASON:
		json_array_append_new(
		    cs, cond("PodsReady", "False", "PodsReady", "m", 0));
		break;
	default:
		break;
	}
	if (r->evicted)
		json_array_append_new(
		    cs, cond("Evicted", "True", "Preempted", "m", 1));
	if (r->inactive)
		json_object_set_new(
		    json_object_get(d, "spec"), "active", json_false());
	if (r->limit_target)
		json_array_append_new(
		    cs, cond("DeactivationTarget", "True",
			    REC_REQUEUING_LIMIT_EXCEEDED,
			    REC_MSG_REQUEUING_LIMIT_EXCEEDED, 3));
	if (r->requeued != NULL)
		json_array_append_new(
		    cs, cond("Requeued", "False", r->requeued, "m", 4));
	if (r->requeued_true)
		json_array_append_new(
		    cs, cond("Requeued", "True", "BackoffFinished", "m", 4));
	if (r->count != 0 || r->requeue_at_s != 0) {
		json_t *rs = json_object();

		if (r->count != 0)
			json_object_set_new(
			    rs, "count", json_integer(r->count));
		if (r->requeue_at_s != 0) {
			cu_time_format_rfc3339(r->requeue_at_s > 0
						   ? now + r->requeue_at_s * S
						   : now - S,
			    ts);
			json_object_set_new(rs, "requeueAt", json_string(ts));
		}
		json_object_set_new(st, "requeueState", rs);
	}
	cr_assert_eq(api_workload_decode(wl, d, &err), CU_OK, "%s", err.msg);
	json_decref(d);
}

Test(pods_ready, workload_reconcile_table)
{
	size_t i;

	for (i = 0; i < sizeof(wrows) / sizeof(wrows[0]); i++) {
		const struct wrow *r = &wrows[i];
		struct rec_pods_ready_cfg cfg = {
		    .enable = !r->disabled,
		    .timeout_ns = 3 * S,
		    .has_recovery = !r->no_recovery,
		    .recovery_timeout_ns = 5 * S,
		    .creation_timestamp = r->creation,
		    .has_backoff_limit = r->limit != 0,
		    .backoff_limit_count = r->limit,
		    .backoff_base_s = 10,
		    .backoff_max_s = 25,
		};
		struct rec_wl_view v;
		struct rec_plan plan;
		struct api_workload wl;
		char got[1024];
		cu_error err;

		memset(&v, 0, sizeof(v));
		rec_plan_init(&plan);
		v.now_ns = t0() + r->now_s * S;
		wl_of(r, v.now_ns, &wl);
		v.engine_uid = r->queued ? "u1" : NULL;
		v.queued = r->queued;
		v.where = r->where;
		v.namespace_eligible = true;
		v.eligible = eligible_yes;
		v.pods_ready = &cfg;
		v.backoff_until = r->backoff_until == -1
				      ? wl.status.requeue_state.requeue_at_ns
				  : r->backoff_until == -2 ? INT64_MAX
							   : r->backoff_until;
		cr_assert_eq(rec_workload_reconcile(&v, &wl, &plan, &err),
		    CU_OK, "%s: %s", r->name, err.msg);
		render(&plan, v.now_ns, wl.meta.creation_ns, got, sizeof(got));
		cr_expect_str_eq(got, r->want, "%s: got \"%s\" want \"%s\"",
		    r->name, got, r->want);
		rec_plan_free(&plan);
		api_workload_dispose(&wl);
	}
}

/* ==== the job reconciler ===================================================
 */

enum jpr {
	J_NONE = 0,
	J_START,    /* False WaitForStart, Kueue's message */
	J_CAUSE,    /* False WaitForStart with the cause */
	J_READY,    /* True Started */
	J_RECOVERY, /* False WaitForRecovery */
};

struct jrow {
	const char *name;
	bool jobset;
	int ready, succeeded; /* Job: pods; JobSet: child Jobs */
	enum jpr pr;
	const char *cause; /* view->pods_not_ready */
	bool off;	   /* view->pods_ready false */
	bool suspended;	   /* the job is not started yet */
	int defer_s;	   /* view->pods_ready_defer_ns */
	int since_s;	   /* pods ready since now - this (0: unknown) */
	bool complete;	   /* the job succeeded */
	const char *want;
};

static const struct jrow jrows[] = {
    {.name = "ready_started",
	.ready = 2,
	.pr = J_START,
	.want = "status PodsReady=True:Started:" REC_MSG_PODS_READY},
    {.name = "succeeded_count_as_ready",
	.ready = 1,
	.succeeded = 1,
	.pr = J_START,
	.want = "status PodsReady=True:Started:" REC_MSG_PODS_READY},
    {.name = "no_condition_yet_not_ready",
	.ready = 1,
	.want = "status PodsReady=False:WaitForStart:" REC_MSG_PODS_NOT_READY},
    {.name = "not_ready_names_the_cause",
	.ready = 1,
	.pr = J_START,
	.cause = CAUSE,
	.want = "status PodsReady=False:WaitForStart:" CAUSE},
    {.name = "cause_kept_when_unknown", .ready = 1, .pr = J_CAUSE, .want = ""},
    {.name = "generic_kept", .ready = 0, .pr = J_START, .want = ""},
    {.name = "ready_unchanged", .ready = 2, .pr = J_READY, .want = ""},
    {.name = "no_longer_ready_waits_for_recovery",
	.ready = 1,
	.pr = J_READY,
	.want = "status "
		"PodsReady=False:WaitForRecovery:" REC_MSG_PODS_WAIT_RECOVERY},
    {.name = "recovered",
	.ready = 2,
	.pr = J_RECOVERY,
	.want = "status PodsReady=True:Recovered:" REC_MSG_PODS_READY},
    {.name = "off_nothing", .ready = 1, .pr = J_START, .off = true, .want = ""},
    {.name = "ready_deferred_wakes", /* until admitted (T0) + 25 s */
	.ready = 2,
	.pr = J_START,
	.defer_s = 25,
	.since_s = 1,
	.want = "wake +5s"},
    {.name = "recovered_not_deferred",
	.ready = 2,
	.pr = J_RECOVERY,
	.defer_s = 25,
	.since_s = 1,
	.want = "status PodsReady=True:Recovered:" REC_MSG_PODS_READY "@-1s"},
    {.name = "ready_deferral_over_dated_since",
	.ready = 2,
	.pr = J_START,
	.defer_s = 5,
	.since_s = 6,
	.want = "status PodsReady=True:Started:" REC_MSG_PODS_READY "@-6s"},
    {.name = "not_ready_not_deferred",
	.ready = 1,
	.pr = J_START,
	.defer_s = 5,
	.cause = CAUSE,
	.want = "status PodsReady=False:WaitForStart:" CAUSE},
    {.name = "finished_folds_pods_ready",
	.ready = 0,
	.succeeded = 2,
	.pr = J_START,
	.defer_s = 5,
	.since_s = 1,
	.complete = true,
	.want = "status PodsReady=True:Started:" REC_MSG_PODS_READY
		"@-1sFinished=True:Succeeded:done [FinishedWorkload]"},
    {.name = "finished_off_not_folded",
	.ready = 0,
	.succeeded = 2,
	.pr = J_START,
	.off = true,
	.complete = true,
	.want = "status PodsReady=False:WaitForStart:" REC_MSG_PODS_NOT_READY
		"Finished=True:Succeeded:done [FinishedWorkload]"},
    {.name = "jobset_children_ready",
	.jobset = true,
	.ready = 2,
	.pr = J_START,
	.want = "status PodsReady=True:Started:" REC_MSG_PODS_READY},
    {.name = "jobset_worker_not_ready",
	.jobset = true,
	.ready = 1,
	.pr = J_START,
	.cause = CAUSE,
	.want = "status PodsReady=False:WaitForStart:" CAUSE},
};

Test(pods_ready, job_reconcile_table)
{
	size_t i;

	for (i = 0; i < sizeof(jrows) / sizeof(jrows[0]); i++) {
		const struct jrow *r = &jrows[i];
		struct rec_job_view v = {0};
		struct rec_job_in in = {0};
		struct rec_job j = {0};
		struct api_job job;
		struct api_jobset js;
		struct api_workload wl;
		struct rec_plan plan;
		struct rec_wl_view unused;
		json_t *jd, *wd, *cs;
		int64_t now = t0() + 20 * S;
		char got[1024];
		cu_error err;

		(void)unused;
		if (r->jobset)
			jd = json_pack(
			    "{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:b, "
			    "s:[{s:s, s:i, s:{s:{s:{s:{s:[{s:s, s:s}]}}}}}, "
			    "{s:s, s:i, s:{s:{s:{s:{s:[{s:s, s:s}]}}}}}]}, "
			    "s:{s:[{s:s, s:i, s:i, s:i, s:i, s:i}, "
			    "{s:s, s:i, s:i, s:i, s:i, s:i}]}}",
			    "apiVersion", "jobset.x-k8s.io/v1alpha2", "kind",
			    "JobSet", "metadata", "name", "js", "namespace",
			    "team-a", "uid", "js-uid", "spec", "suspend",
			    r->suspended, "replicatedJobs", "name", "leader",
			    "replicas", 1, "template", "spec", "template",
			    "spec", "containers", "name", "c", "image", "i",
			    "name", "workers", "replicas", 1, "template",
			    "spec", "template", "spec", "containers", "name",
			    "c", "image", "i", "status", "replicatedJobsStatus",
			    "name", "leader", "ready", r->ready > 0 ? 1 : 0,
			    "succeeded", 0, "failed", 0, "active", 1,
			    "suspended", 0, "name", "workers", "ready",
			    r->ready > 1 ? 1 : 0, "succeeded", 0, "failed", 0,
			    "active", 1, "suspended", 0);
		else
			jd = json_pack(
			    "{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:i, s:i, s:b, "
			    "s:{s:{s:[{s:s, s:s}]}}}, s:{s:i, s:i, s:i}}",
			    "apiVersion", "batch/v1", "kind", "Job", "metadata",
			    "name", "j", "namespace", "team-a", "uid", "j-uid",
			    "spec", "parallelism", 2, "completions", 4,
			    "suspend", r->suspended, "template", "spec",
			    "containers", "name", "c", "image", "i", "status",
			    "active", 2, "ready", r->ready, "succeeded",
			    r->succeeded);
		if (r->complete)
			json_object_set_new(json_object_get(jd, "status"),
			    "conditions",
			    json_pack("[{s:s, s:s, s:s, s:s}]", "type",
				"Complete", "status", "True", "reason", "Done",
				"message", "done"));
		cr_assert_not_null(jd);
		if (r->jobset) {
			cr_assert_eq(api_jobset_decode(&js, jd, &err), CU_OK,
			    "%s", err.msg);
			j.kind = REC_JOB_JOBSET;
			j.jobset = &js;
		} else {
			cr_assert_eq(api_job_decode(&job, jd, &err), CU_OK,
			    "%s", err.msg);
			j.kind = REC_JOB_BATCH;
			j.job = &job;
		}
		wd = parse("{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\","
			   "\"kind\":\"Workload\",\"metadata\":{\"name\":"
			   "\"w\",\"namespace\":\"team-a\",\"uid\":\"u1\","
			   "\"resourceVersion\":\"5\"},\"spec\":{"
			   "\"queueName\":\"main\",\"podSets\":[{\"name\":"
			   "\"main\",\"count\":2,\"template\":{\"spec\":{"
			   "\"containers\":[{\"name\":\"c\",\"image\":"
			   "\"i\"}]}}}]},\"status\":{\"admission\":" ADMISSION
			   ",\"conditions\":[]}}");
		/* The job's own Workload (it matches the job: step 7 keeps
		 * it). */
		json_object_set_new(json_object_get(wd, "metadata"),
		    "ownerReferences",
		    json_pack("[{s:s, s:s, s:s, s:s, s:b}]", "apiVersion",
			r->jobset ? "jobset.x-k8s.io/v1alpha2" : "batch/v1",
			"kind", r->jobset ? "JobSet" : "Job", "name",
			r->jobset ? "js" : "j", "uid",
			r->jobset ? "js-uid" : "j-uid", "controller", 1));
		if (r->jobset)
			json_object_set_new(json_object_get(wd, "spec"),
			    "podSets",
			    parse("[{\"name\":\"leader\",\"count\":1,"
				  "\"template\":{\"spec\":{\"containers\":"
				  "[{\"name\":\"c\",\"image\":\"i\"}]}}},"
				  "{\"name\":\"workers\",\"count\":1,"
				  "\"template\":{\"spec\":{\"containers\":"
				  "[{\"name\":\"c\",\"image\":\"i\"}]}}}]"));
		cs = json_object_get(
		    json_object_get(wd, "status"), "conditions");
		json_array_append_new(
		    cs, cond("QuotaReserved", "True", "QuotaReserved", "m", 0));
		json_array_append_new(
		    cs, cond("Admitted", "True", "Admitted", "m", 0));
		if (r->pr == J_START)
			json_array_append_new(
			    cs, cond("PodsReady", "False", "WaitForStart",
				    REC_MSG_PODS_NOT_READY, 0));
		else if (r->pr == J_CAUSE)
			json_array_append_new(
			    cs, cond("PodsReady", "False", "WaitForStart",
				    CAUSE, 0));
		else if (r->pr == J_READY)
			json_array_append_new(
			    cs, cond("PodsReady", "True", "Started",
				    REC_MSG_PODS_READY, 0));
		else if (r->pr == J_RECOVERY)
			json_array_append_new(
			    cs, cond("PodsReady", "False", "WaitForRecovery",
				    REC_MSG_PODS_WAIT_RECOVERY, 0));
		cr_assert_eq(
		    api_workload_decode(&wl, wd, &err), CU_OK, "%s", err.msg);
		show_pods_ready = true;
		v.managed = true;
		v.admitted_flavors = fx_no_flavors;
		v.local_queue_exists = fx_no_lq;
		v.pods_ready = !r->off;
		v.pods_not_ready = r->cause;
		v.pods_ready_defer_ns = r->defer_s * S;
		v.pods_ready_since_ns = r->since_s ? now - r->since_s * S : 0;
		in.job = &j;
		in.kind = j.kind;
		in.ns = "team-a";
		in.name = r->jobset ? "js" : "j";
		in.wl_name = "w";
		in.wl = &wl;
		rec_plan_init(&plan);
		cr_assert_eq(rec_job_reconcile(&v, &in, now, &plan, &err),
		    CU_OK, "%s: %s", r->name, err.msg);
		render(&plan, now, 0, got, sizeof(got));
		cr_expect_str_eq(got, r->want, "%s: got \"%s\" want \"%s\"",
		    r->name, got, r->want);
		if (plan.n == 1 && plan.items[0].kind == REC_ITEM_WRITE &&
		    !r->complete)
			cr_expect(plan.items[0].for_job &&
				      plan.items[0].reason != NULL,
			    "%s: a PodsReady write the job waits on, with its "
			    "reason",
			    r->name);
		rec_plan_free(&plan);
		api_workload_dispose(&wl);
		if (r->jobset)
			api_jobset_dispose(&js);
		else
			api_job_dispose(&job);
		json_decref(jd);
		json_decref(wd);
	}
}

/* ==== pure helpers =========================================================
 */

Test(pods_ready, backoff_arithmetic)
{
	static const struct {
		int32_t base, max, count;
		int64_t want_s;
	} rows[] = {
	    {60, 3600, 1, 60},		   /* base */
	    {60, 3600, 2, 120},		   /* doubling */
	    {60, 3600, 3, 240},		   /* base * 2^(count-1) */
	    {60, 3600, 6, 1920},	   /* still under the cap */
	    {60, 3600, 7, 3600},	   /* capped */
	    {60, 3600, 1000, 3600},	   /* no overflow */
	    {1, 0, 30, 536870912LL},	   /* no cap: 2^29 s */
	    {1, 0, 100000, INT64_MAX / S}, /* saturates */
	    {0, 10, 5, 0},		   /* base 0: at once */
	    {10, 5, 1, 5},		   /* max below base */
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		cr_expect_eq(rec_requeue_backoff_ns(
				 rows[i].base, rows[i].max, rows[i].count),
		    rows[i].want_s * S, "row %zu: %lld", i,
		    (long long)rec_requeue_backoff_ns(
			rows[i].base, rows[i].max, rows[i].count));
}

#define POD(name, extra)                                                       \
	"{\"metadata\":{\"name\":\"" name "\"},\"status\":{" extra "}}"
#define UNSCHED(msg)                                                           \
	"\"phase\":\"Pending\",\"conditions\":[{\"type\":\"PodScheduled\","    \
	"\"status\":\"False\",\"reason\":\"Unschedulable\",\"message\":\"" msg \
	"\"}]"
#define READY                                                                  \
	"\"phase\":\"Running\",\"conditions\":[{\"type\":\"Ready\","           \
	"\"status\":\"True\"}]"

Test(pods_ready, pods_cause_from_a_list)
{
	static const struct {
		const char *pods;
		int32_t expected;
		const char *want; /* NULL: none */
	} rows[] = {
	    {"{\"items\":[" POD("a", READY) "," POD(
		 "b", UNSCHED("0/3 nodes "
			      "are available: 3 "
			      "Insufficient cpu")) "]}",
		2,
		"1 of 2 pods not ready: 0/3 nodes are available: 3 "
		"Insufficient cpu"},
	    /* pods not created yet count as not ready */
	    {"{\"items\":[" POD("b", UNSCHED("x")) "]}", 4,
		"4 of 4 pods not ready: x"},
	    /* the cause most pods share */
	    {"[" POD("a", UNSCHED("x")) "," POD("b", UNSCHED("y")) "," POD(
		 "c", UNSCHED("y")) "]",
		0, "3 of 3 pods not ready: y"},
	    {"{\"items\":[" POD("a", READY) "," POD("b", "\"phase\":"
							 "\"Succeeded\"") "]}",
		2, NULL},
	    /* nobody says why (scheduled, not ready yet) */
	    {"{\"items\":[" POD("a", "\"phase\":\"Pending\"") "]}", 1, NULL},
	    {"{\"items\":[]}", 2, NULL},
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		json_t *p = parse(rows[i].pods);
		char *got = rec_pods_not_ready_message(p, rows[i].expected);

		if (rows[i].want == NULL)
			cr_expect_null(got, "row %zu: %s", i, got);
		else
			cr_expect_str_eq(
			    got ? got : "(null)", rows[i].want, "row %zu", i);
		cu_free(got);
		json_decref(p);
	}
}

/* The admission folds PodsReady=False in (no write of its own); the
 * release sets it back to WaitForStart; the PodsReady condition changes
 * only when it says something else. */
Test(pods_ready, status_builders)
{
	struct api_workload wl;
	struct wrow r = {.name = "pending"};
	struct adm_podset_assignment pa = {0};
	struct adm_flavor_use use = {0};
	struct adm_decision d = {0};
	json_t *patch = NULL, *c;
	int64_t now = t0() + 7 * S;
	cu_error err;
	size_t i;
	bool found = false;

	use.resource = "cpu";
	use.flavor = "spot";
	use.usage = 2000;
	pa.name = "main";
	pa.count = 2;
	pa.uses = &use;
	pa.n_uses = 1;
	d.kind = ADM_ADMIT;
	d.uid = "u1";
	d.cluster_queue = "cq-a";
	d.podsets = &pa;
	d.n_podsets = 1;
	wl_of(&r, now, &wl);
	cr_assert_eq(
	    rec_wl_status_admit_wait(&wl, &d, true, now, &patch, &err), CU_OK);
	json_array_foreach(
	    json_object_get(json_object_get(patch, "status"), "conditions"), i,
	    c)
	{
		if (strcmp(json_string_value(json_object_get(c, "type")),
			"PodsReady") == 0) {
			found = true;
			cr_expect_str_eq(
			    json_string_value(json_object_get(c, "reason")),
			    "WaitForStart");
		}
	}
	cr_expect(found, "the admission write carries PodsReady=False");
	json_decref(patch);
	cr_assert_eq(
	    rec_wl_status_admit_wait(&wl, &d, false, now, &patch, &err), CU_OK);
	found = false;
	json_array_foreach(
	    json_object_get(json_object_get(patch, "status"), "conditions"), i,
	    c)
	{
		found |= strcmp(json_string_value(json_object_get(c, "type")),
			     "PodsReady") == 0;
	}
	cr_expect_not(found, "no PodsReady without waitForPodsReady");
	json_decref(patch);
	api_workload_dispose(&wl);

	/* release after a PodsReadyTimeout: PodsReady back to WaitForStart */
	r = (struct wrow){.name = "evicted", .holds = true, .pr = PR_READY};
	wl_of(&r, now, &wl);
	api_workload_dispose(&wl);
	{
		json_t *dd = parse(
		    "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"
		    "\"Workload\",\"metadata\":{\"name\":\"w\",\"namespace\":"
		    "\"team-a\",\"uid\":\"u1\",\"resourceVersion\":\"5\"},"
		    "\"spec\":{\"podSets\":[{\"name\":\"main\",\"count\":2,"
		    "\"template\":{\"spec\":{\"containers\":[]}}}]},"
		    "\"status\":{\"admission\":" ADMISSION
		    ",\"conditions\":[]}}");
		json_t *cs = json_object_get(
		    json_object_get(dd, "status"), "conditions");
		char got[1024] = "";

		json_array_append_new(
		    cs, cond("QuotaReserved", "True", "QuotaReserved", "m", 0));
		json_array_append_new(
		    cs, cond("Admitted", "True", "Admitted", "m", 0));
		json_array_append_new(cs, cond("PodsReady", "True", "Started",
					      REC_MSG_PODS_READY, 1));
		json_array_append_new(
		    cs, cond("Evicted", "True", "PodsReadyTimeout", "gone", 2));
		cr_assert_eq(api_workload_decode(&wl, dd, &err), CU_OK);
		json_decref(dd);
		cr_assert_eq(
		    rec_wl_status_release(&wl, now, &patch, &err), CU_OK);
		render_status(patch, now, got, sizeof(got));
		cr_expect_str_eq(got,
		    "QuotaReserved=False:PendingEvaluation:gone"
		    "Admitted=False:NoReservation:The workload has no "
		    "reservation"
		    "PodsReady=False:WaitForStart:" REC_MSG_PODS_NOT_READY
		    "Requeued=False:PodsReadyTimeout:gone");
		json_decref(patch);
		/* the same condition again: nothing to write */
		cr_assert_eq(rec_wl_status_pods_ready(&wl, true, "Started",
				 REC_MSG_PODS_READY, now, &patch, &err),
		    CU_OK);
		cr_expect_null(patch);
		cr_assert_eq(rec_wl_status_pods_ready(&wl, true, "Started",
				 "other", now, &patch, &err),
		    CU_OK);
		cr_expect_not_null(patch);
		json_decref(patch);
		api_workload_dispose(&wl);
	}
}
