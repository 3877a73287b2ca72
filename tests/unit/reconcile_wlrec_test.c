/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/reconcile_wlrec_test.c - the Workload reconciler
 * (rec_workload_reconcile), table-driven: the Workload as cached and the
 * engine's record of it in, the engine actions out. Each branch of the
 * decision tree (the former reconcile_workload of controller/ctl.c) has a
 * row:
 *
 *   Workload gone:               gone_forgets, gone_unknown
 *   same name, new uid:          new_uid_forgets_old_then_adds,
 *                                new_uid_in_flight (old forgotten, the
 *                                new one left to its write)
 *   admission write in flight:   in_flight
 *   inactive or being deleted:   finished_queued_forgotten,
 *                                inactive_not_queued, deleting_queued
 *   on hold (OnHold):            on_hold_not_queued,
 *                                on_hold_pending_forgotten,
 *                                on_hold_released_forgotten
 *   not queued yet:              not_queued_added
 *   API holds, engine does not:  api_holds_engine_pending_readded
 *   both hold:                   both_hold_admitted, both_hold_evicting
 *   engine holds, API does not:  engine_admitted_released,
 *                                engine_evicting_released
 *   pending, spec changed:       generation_changed_readded
 *   pending, eligibility:        eligibility_lost, eligibility_gained,
 *                                eligibility_unchanged
 *   deactivation:                inactive_admitted_evicted (quota kept),
 *                                inactive_evicting_written,
 *                                inactive_evicted_waits,
 *                                inactive_evicted_engine_admitted,
 *                                inactive_released_forgotten,
 *                                inactive_pending_forgotten,
 *                                inactive_adopted_not_queued,
 *                                inactive_target_message,
 *                                inactive_not_queued and
 *                                inactive_pending_forgotten (a Workload
 *                                deactivated while pending is marked
 *                                Evicted), inactive_pending_*
 *   HoldAndDrain:                cq_drain_evicts, lq_drain_evicts,
 *                                lq_drain_first, cq_hold_keeps,
 *                                drain_released_requeued
 *   requeued again:              reactivated, cq_restarted,
 *                                cq_still_stopped
 *   maximumExecutionTimeSeconds: max_exec_wakes, max_exec_exceeded,
 *                                max_exec_accumulated, target_deactivates
 *   a follower (read_only):      follower_inactive_keeps_quota,
 *                                follower_inactive_released_forgotten,
 *                                follower_max_exec_exceeded,
 *                                follower_not_reactivated
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "reconcile/reconcile.h"

#define T0 "2026-01-01T00:00:00Z"
#define COND(type)                                                             \
	"{\"type\":\"" type "\",\"status\":\"True\",\"reason\":\"r\","         \
	"\"message\":\"m\",\"lastTransitionTime\":\"" T0 "\"}"
#define ADMISSION                                                              \
	"{\"clusterQueue\":\"cq-a\",\"podSetAssignments\":[{\"name\":"         \
	"\"main\",\"flavors\":{\"cpu\":\"spot\"},"                             \
	"\"resourceUsage\":{\"cpu\":\"1\"},\"count\":1}]}"

enum wl_state {
	W_GONE,
	W_PENDING,
	W_HOLDS,    /* status.admission + QuotaReserved */
	W_FINISHED, /* Finished=True */
	W_INACTIVE, /* spec.active false */
	W_DELETING,
	W_INACTIVE_HOLDS,   /* spec.active false, holds quota */
	W_INACTIVE_EVICTED, /* ... and Evicted=True already */
	W_INACTIVE_TARGET,  /* ... holds, DeactivationTarget=True */
	W_TARGET,	    /* active, holds, DeactivationTarget=True */
	W_MAX_EXEC,	    /* holds, maximumExecutionTimeSeconds 3 */
	W_REQUEUED_DEACT,   /* pending, Requeued=False (Deactivated) */
	W_REQUEUED_CQ,	    /* pending, Requeued=False (ClusterQueueStopped) */
	W_INACTIVE_PENDING_EVICTED, /* spec.active false, Evicted, no quota */
	W_INACTIVE_PENDING_TARGET,  /* ... not Evicted, DeactivationTarget */
	/* holds quota for 3 pods (count 3), reclaimablePods main=2 */
	W_HOLDS_RECLAIM,
	/* pending, 3 pods, reclaimablePods main=2 */
	W_PENDING_RECLAIM,
	/* QuotaReserved=False (OnHold): a StatefulSet scaled to zero */
	W_ON_HOLD,
};

struct row {
	const char *name;
	enum wl_state wl;
	int64_t generation;	/* the Workload's metadata.generation */
	const char *engine_uid; /* what the engine holds under ns/name */
	bool in_flight;
	bool queued;
	enum que_where where;
	bool ns_eligible; /* the engine's */
	int64_t queued_gen;
	bool eligible; /* what the namespace selector says now */
	enum que_stop lq_stop, cq_stop;
	int64_t now_s;	/* seconds after T0 (Admitted since T0); 0: 100 */
	int32_t acc_s;	/* accumulatedPastExecutionTimeSeconds */
	bool read_only; /* a follower: engine items only */
	/* > 0: the engine's record holds this many pods of pod set main
	 * (of 3) */
	int32_t engine_count;
	int32_t engine_priority; /* the engine record's priority */
	const char *want;
};

static const struct row rows[] = {
    {.name = "gone_forgets",
	.wl = W_GONE,
	.engine_uid = "old",
	.want = "forget old"},
    {.name = "gone_unknown", .wl = W_GONE, .want = ""},
    {.name = "new_uid_forgets_old_then_adds",
	.wl = W_PENDING,
	.engine_uid = "old",
	.want = "forget old | add"},
    {.name = "new_uid_in_flight",
	.wl = W_HOLDS,
	.engine_uid = "old",
	.in_flight = true,
	.queued = true,
	.where = QUE_WL_ADMITTED,
	.want = "forget old"},
    {.name = "in_flight",
	.wl = W_PENDING,
	.engine_uid = "u1",
	.in_flight = true,
	.want = ""},
    {.name = "finished_queued_forgotten",
	.wl = W_FINISHED,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_ADMITTED,
	.want = "forget u1"},
    /* On hold (Kueue's, a StatefulSet at zero replicas): never queued,
     * dropped by the engine (quota given back), never marked Evicted. */
    {.name = "on_hold_not_queued", .wl = W_ON_HOLD, .want = ""},
    {.name = "on_hold_pending_forgotten",
	.wl = W_ON_HOLD,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_PENDING,
	.want = "forget u1"},
    {.name = "on_hold_released_forgotten",
	.wl = W_ON_HOLD,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_ADMITTED,
	.want = "forget u1"},
    {.name = "inactive_not_queued",
	.wl = W_INACTIVE,
	.want = "status Evicted:Deactivated:The workload is deactivated"},
    {.name = "inactive_pending_evicted_already",
	.wl = W_INACTIVE_PENDING_EVICTED,
	.want = ""},
    {.name = "inactive_pending_target_message",
	.wl = W_INACTIVE_PENDING_TARGET,
	.want = "status Evicted:DeactivatedDueToMaximumExecutionTimeExceeded:"
		"The workload is deactivated due to exceeding the maximum "
		"execution time"},
    {.name = "follower_inactive_not_queued",
	.wl = W_INACTIVE,
	.read_only = true,
	.want = ""},
    {.name = "deleting_queued",
	.wl = W_DELETING,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_PENDING,
	.want = "forget u1"},
    {.name = "not_queued_added", .wl = W_PENDING, .want = "add"},
    {.name = "api_holds_engine_pending_readded",
	.wl = W_HOLDS,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_PENDING,
	.want = "readd"},
    {.name = "both_hold_admitted",
	.wl = W_HOLDS,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_ADMITTED,
	.generation = 3, /* generation is not looked at while holding */
	.want = ""},
    {.name = "both_hold_evicting",
	.wl = W_HOLDS,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_EVICTING,
	.want = ""},
    {.name = "engine_admitted_released",
	.wl = W_PENDING,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_ADMITTED,
	.want = "release u1"},
    {.name = "engine_evicting_released",
	.wl = W_PENDING,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_EVICTING,
	.want = "release u1"},
    {.name = "generation_changed_readded",
	.wl = W_PENDING,
	.generation = 2,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_INADMISSIBLE,
	.queued_gen = 1,
	.want = "readd"},
    {.name = "eligibility_lost",
	.wl = W_PENDING,
	.generation = 1,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_PENDING,
	.queued_gen = 1,
	.ns_eligible = true,
	.eligible = false,
	.want = "eligible false"},
    {.name = "eligibility_gained",
	.wl = W_PENDING,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_BACKOFF,
	.eligible = true,
	.want = "eligible true"},
    {.name = "eligibility_unchanged",
	.wl = W_PENDING,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_PENDING,
	.ns_eligible = true,
	.eligible = true,
	.want = ""},
    {.name = "inactive_admitted_evicted",
	.wl = W_INACTIVE_HOLDS,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_ADMITTED,
	.want = "evicting u1 | evict Evicted:Deactivated:The workload is "
		"deactivated [EvictedDueToDeactivated]"},
    {.name = "inactive_evicting_written",
	.wl = W_INACTIVE_HOLDS,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_EVICTING,
	.want = "evict Evicted:Deactivated:The workload is deactivated "
		"[EvictedDueToDeactivated]"},
    {.name = "inactive_evicted_waits",
	.wl = W_INACTIVE_EVICTED,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_EVICTING,
	.want = ""},
    {.name = "inactive_evicted_engine_admitted",
	.wl = W_INACTIVE_EVICTED,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_ADMITTED,
	.want = "evicting u1"},
    {.name = "inactive_released_forgotten",
	.wl = W_INACTIVE,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_EVICTING,
	.want = "forget u1"},
    {.name = "inactive_pending_forgotten",
	.wl = W_INACTIVE,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_PENDING,
	.want = "forget u1 | status Evicted:Deactivated:The workload is "
		"deactivated"},
    {.name = "follower_inactive_pending_forgotten",
	.wl = W_INACTIVE,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_PENDING,
	.read_only = true,
	.want = "forget u1"},
    {.name = "inactive_adopted_not_queued",
	.wl = W_INACTIVE_HOLDS,
	.want = "add"},
    {.name = "inactive_target_message",
	.wl = W_INACTIVE_TARGET,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_ADMITTED,
	.want = "evicting u1 | evict Evicted:"
		"DeactivatedDueToMaximumExecutionTimeExceeded:The workload is "
		"deactivated due to exceeding the maximum execution time "
		"[EvictedDueToDeactivatedDueToMaximumExecutionTimeExceeded]"},
    {.name = "cq_drain_evicts",
	.wl = W_HOLDS,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_ADMITTED,
	.cq_stop = QUE_STOP_HOLD_AND_DRAIN,
	.want = "evicting u1 | evict Evicted:ClusterQueueStopped:The "
		"ClusterQueue is stopped [EvictedDueToClusterQueueStopped]"},
    {.name = "lq_drain_evicts",
	.wl = W_HOLDS,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_ADMITTED,
	.lq_stop = QUE_STOP_HOLD_AND_DRAIN,
	.want = "evicting u1 | evict Evicted:LocalQueueStopped:The "
		"LocalQueue is stopped [EvictedDueToLocalQueueStopped]"},
    {.name = "lq_drain_first",
	.wl = W_HOLDS,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_ADMITTED,
	.lq_stop = QUE_STOP_HOLD_AND_DRAIN,
	.cq_stop = QUE_STOP_HOLD_AND_DRAIN,
	.want = "evicting u1 | evict Evicted:LocalQueueStopped:The "
		"LocalQueue is stopped [EvictedDueToLocalQueueStopped]"},
    {.name = "cq_hold_keeps",
	.wl = W_HOLDS,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_ADMITTED,
	.lq_stop = QUE_STOP_HOLD,
	.cq_stop = QUE_STOP_HOLD,
	.want = ""},
    {.name = "drain_released_requeued",
	.wl = W_PENDING,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_EVICTING,
	.cq_stop = QUE_STOP_HOLD_AND_DRAIN,
	.want = "release u1"},
    {.name = "reactivated",
	.wl = W_REQUEUED_DEACT,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_PENDING,
	.want = "status Requeued:Reactivated:The workload was reactivated"},
    {.name = "cq_restarted",
	.wl = W_REQUEUED_CQ,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_PENDING,
	.want = "status Requeued:ClusterQueueRestarted:The ClusterQueue was "
		"restarted after being stopped"},
    {.name = "cq_still_stopped",
	.wl = W_REQUEUED_CQ,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_BLOCKED,
	.cq_stop = QUE_STOP_HOLD_AND_DRAIN,
	.want = ""},
    {.name = "max_exec_wakes",
	.wl = W_MAX_EXEC,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_ADMITTED,
	.now_s = 1,
	.want = "wake +2s"},
    {.name = "max_exec_accumulated",
	.wl = W_MAX_EXEC,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_ADMITTED,
	.now_s = 1,
	.acc_s = 1,
	.want = "wake +1s"},
    {.name = "max_exec_exceeded",
	.wl = W_MAX_EXEC,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_ADMITTED,
	.now_s = 3,
	.want = "status DeactivationTarget:MaximumExecutionTimeExceeded:"
		"exceeding the maximum execution time | event Warning "
		"MaximumExecutionTimeExceeded The maximum execution time (3s) "
		"exceeded"},
    {.name = "follower_inactive_keeps_quota",
	.wl = W_INACTIVE_HOLDS,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_ADMITTED,
	.read_only = true,
	.want = ""},
    {.name = "follower_inactive_released_forgotten",
	.wl = W_INACTIVE,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_EVICTING,
	.read_only = true,
	.want = "forget u1"},
    {.name = "follower_max_exec_exceeded",
	.wl = W_MAX_EXEC,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_ADMITTED,
	.now_s = 3,
	.read_only = true,
	.want = ""},
    {.name = "follower_not_reactivated",
	.wl = W_REQUEUED_DEACT,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_PENDING,
	.read_only = true,
	.want = ""},
    {.name = "reclaimable_shrinks_usage",
	.wl = W_HOLDS_RECLAIM,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_ADMITTED,
	.engine_count = 3,
	.want = "set-counts u1 1"},
    {.name = "reclaimable_already_held",
	.wl = W_HOLDS_RECLAIM,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_ADMITTED,
	.engine_count = 1,
	.want = ""},
    {.name = "priority_changed_while_admitted",
	.wl = W_HOLDS_RECLAIM,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_ADMITTED,
	.engine_count = 1,
	.engine_priority = 5,
	.want = "set-priority u1 0"},
    {.name = "reclaimable_pending_readded",
	.wl = W_PENDING_RECLAIM,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_PENDING,
	.engine_count = 3,
	.want = "readd"},
    {.name = "reclaimable_follower",
	.wl = W_HOLDS_RECLAIM,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_ADMITTED,
	.engine_count = 3,
	.read_only = true,
	.want = ""},
    {.name = "target_deactivates",
	.wl = W_TARGET,
	.engine_uid = "u1",
	.queued = true,
	.where = QUE_WL_ADMITTED,
	.want = "patch active=false"},
};

static json_t *parse(const char *text)
{
	json_error_t jerr;
	json_t *j = json_loads(text, 0, &jerr);

	cr_assert_not_null(j, "test JSON: %s", jerr.text);
	return j;
}

static void wl_of(const struct row *r, struct api_workload *wl)
{
	json_t *d = parse(
	    "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\","
	    "\"metadata\":{\"name\":\"w\",\"namespace\":\"team-a\","
	    "\"uid\":\"u1\",\"resourceVersion\":\"5\"},"
	    "\"spec\":{\"queueName\":\"main\",\"podSets\":[{\"name\":\"main\","
	    "\"count\":1,\"template\":{\"spec\":{\"containers\":[{"
	    "\"name\":\"c\",\"image\":\"i\"}]}}}]},\"status\":{}}");
	json_t *md = json_object_get(d, "metadata");
	json_t *st = json_object_get(d, "status");
	cu_error err;

	if (r->generation != 0)
		json_object_set_new(
		    md, "generation", json_integer(r->generation));
	switch (r->wl) {
	case W_HOLDS:
		json_object_set_new(st, "admission", parse(ADMISSION));
		json_object_set_new(st, "conditions",
		    parse("[" COND("QuotaReserved") "," COND("Admitted") "]"));
		break;
	case W_FINISHED:
		json_object_set_new(
		    st, "conditions", parse("[" COND("Finished") "]"));
		break;
	case W_INACTIVE:
	case W_INACTIVE_PENDING_EVICTED:
	case W_INACTIVE_PENDING_TARGET:
		json_object_set_new(
		    json_object_get(d, "spec"), "active", json_false());
		if (r->wl == W_INACTIVE_PENDING_EVICTED)
			json_object_set_new(
			    st, "conditions", parse("[" COND("Evicted") "]"));
		if (r->wl == W_INACTIVE_PENDING_TARGET)
			json_object_set_new(st, "conditions",
			    parse("[{\"type\":\"DeactivationTarget\","
				  "\"status\":\"True\",\"reason\":"
				  "\"MaximumExecutionTimeExceeded\","
				  "\"message\":\"exceeding the maximum "
				  "execution time\",\"lastTransitionTime\":"
				  "\"" T0 "\"}]"));
		break;
	case W_DELETING:
		json_object_set_new(md, "deletionTimestamp", json_string(T0));
		break;
	case W_ON_HOLD:
		json_object_set_new(st, "conditions",
		    parse("[{\"type\":\"QuotaReserved\",\"status\":"
			  "\"False\",\"reason\":\"OnHold\",\"message\":"
			  "\"m\",\"lastTransitionTime\":\"" T0 "\"}]"));
		break;
	case W_INACTIVE_HOLDS:
	case W_INACTIVE_EVICTED:
	case W_INACTIVE_TARGET:
	case W_TARGET:
	case W_MAX_EXEC:
		if (r->wl != W_TARGET && r->wl != W_MAX_EXEC)
			json_object_set_new(
			    json_object_get(d, "spec"), "active", json_false());
		json_object_set_new(st, "admission", parse(ADMISSION));
		json_object_set_new(st, "conditions",
		    parse("[" COND("QuotaReserved") "," COND("Admitted") "]"));
		if (r->wl == W_INACTIVE_EVICTED)
			json_array_append_new(json_object_get(st, "conditions"),
			    parse(COND("Evicted")));
		if (r->wl == W_INACTIVE_TARGET || r->wl == W_TARGET)
			json_array_append_new(json_object_get(st, "conditions"),
			    parse("{\"type\":\"DeactivationTarget\","
				  "\"status\":\"True\",\"reason\":"
				  "\"MaximumExecutionTimeExceeded\","
				  "\"message\":\"exceeding the maximum "
				  "execution time\",\"lastTransitionTime\":"
				  "\"" T0 "\"}"));
		if (r->wl == W_MAX_EXEC)
			json_object_set_new(json_object_get(d, "spec"),
			    "maximumExecutionTimeSeconds", json_integer(3));
		if (r->acc_s != 0)
			json_object_set_new(st,
			    "accumulatedPastExecutionTimeSeconds",
			    json_integer(r->acc_s));
		break;
	case W_HOLDS_RECLAIM:
		json_object_set_new(
		    json_array_get(
			json_object_get(json_object_get(d, "spec"), "podSets"),
			0),
		    "count", json_integer(3));
		json_object_set_new(st, "admission",
		    parse("{\"clusterQueue\":\"cq-a\",\"podSetAssignments\":"
			  "[{\"name\":\"main\",\"flavors\":{\"cpu\":"
			  "\"spot\"},\"resourceUsage\":{\"cpu\":\"3\"},"
			  "\"count\":3}]}"));
		json_object_set_new(st, "conditions",
		    parse("[" COND("QuotaReserved") "," COND("Admitted") "]"));
		json_object_set_new(st, "reclaimablePods",
		    parse("[{\"name\":\"main\",\"count\":2}]"));
		break;
	case W_REQUEUED_DEACT:
	case W_REQUEUED_CQ:
		json_object_set_new(st, "conditions",
		    parse(r->wl == W_REQUEUED_DEACT
			      ? "[{\"type\":\"Requeued\",\"status\":"
				"\"False\",\"reason\":\"Deactivated\","
				"\"message\":\"m\",\"lastTransitionTime\":"
				"\"" T0 "\"}]"
			      : "[{\"type\":\"Requeued\",\"status\":"
				"\"False\",\"reason\":"
				"\"ClusterQueueStopped\",\"message\":\"m\","
				"\"lastTransitionTime\":\"" T0 "\"}]"));
		break;
	default:
		break;
	}
	cr_assert_eq(api_workload_decode(wl, d, &err), CU_OK, "%s", err.msg);
	json_decref(d);
}

struct elig {
	const struct row *r;
	int calls;
};

static bool eligible_cb(const char *ns, const char *queue, void *payload)
{
	struct elig *e = payload;

	cr_assert_str_eq(ns, "team-a");
	cr_assert_str_eq(queue, "main");
	e->calls++;
	return e->r->eligible;
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

/* The conditions a status write sets now (lastTransitionTime now), as
 * type:reason:message. */
static void render_status(
    const struct rec_item *it, int64_t now, char *buf, size_t cap)
{
	char ts[CU_TIME_RFC3339_LEN];
	json_t *conds =
	    json_object_get(json_object_get(it->body, "status"), "conditions");
	json_t *c;
	size_t i;

	cu_time_format_rfc3339(now, ts);
	json_array_foreach(conds, i, c)
	{
		const char *t =
		    json_string_value(json_object_get(c, "lastTransitionTime"));

		if (t == NULL || strcmp(t, ts) != 0)
			continue;
		app(buf, cap, json_string_value(json_object_get(c, "type")),
		    ":", json_string_value(json_object_get(c, "reason")), ":",
		    json_string_value(json_object_get(c, "message")), NULL);
	}
}

static void render(const struct rec_plan *p, int64_t now, char *buf, size_t cap)
{
	size_t i;

	buf[0] = '\0';
	for (i = 0; i < p->n; i++) {
		const struct rec_item *it = &p->items[i];
		char n[32];

		if (i > 0)
			app(buf, cap, " | ", NULL);
		if (it->kind == REC_ITEM_WRITE) {
			cr_assert_eq(it->target, REC_TARGET_WORKLOAD);
			cr_assert_eq(it->expect, REC_EXPECT_RV);
			cr_assert_str_eq(it->name, "w");
			cr_assert_not_null(json_object_get(
			    json_object_get(it->body, "metadata"),
			    "resourceVersion"));
			if (it->op == REC_WRITE_PATCH) {
				cr_assert(json_is_false(json_object_get(
				    json_object_get(it->body, "spec"),
				    "active")));
				app(buf, cap, "patch active=false", NULL);
				continue;
			}
			cr_assert_eq(it->op, REC_WRITE_STATUS);
			app(buf, cap, it->eviction ? "evict " : "status ",
			    NULL);
			render_status(it, now, buf, cap);
			if (it->done_reason != NULL)
				app(buf, cap, " [", it->done_reason, "]", NULL);
			continue;
		}
		if (it->kind == REC_ITEM_EVENT) {
			app(buf, cap, "event ", it->type, " ", it->reason, " ",
			    it->text, NULL);
			continue;
		}
		cr_assert_eq(it->kind, REC_ITEM_ENGINE);
		switch (it->engine) {
		case REC_ENGINE_EVICTING:
			app(buf, cap, "evicting ", it->uid, NULL);
			break;
		case REC_ENGINE_WAKE:
			snprintf(n, sizeof(n), "wake +%llds",
			    (long long)((it->at_ns - now) / 1000000000LL));
			app(buf, cap, n, NULL);
			break;
		case REC_ENGINE_FORGET:
			app(buf, cap, "forget ", it->uid, NULL);
			break;
		case REC_ENGINE_ADD:
			app(buf, cap, "add", NULL);
			break;
		case REC_ENGINE_READD:
			app(buf, cap, "readd", NULL);
			break;
		case REC_ENGINE_RELEASE:
			app(buf, cap, "release ", it->uid, NULL);
			break;
		case REC_ENGINE_SET_PRIORITY:
			snprintf(n, sizeof(n), "set-priority %s %d", it->uid,
			    (int)it->priority);
			app(buf, cap, n, NULL);
			break;
		case REC_ENGINE_SET_COUNTS:
			cr_assert_eq(it->n_counts, 1);
			snprintf(n, sizeof(n), "set-counts %s %d", it->uid,
			    (int)it->counts[0]);
			app(buf, cap, n, NULL);
			break;
		case REC_ENGINE_SET_ELIGIBLE:
			app(buf, cap, "eligible ",
			    it->eligible ? "true" : "false", NULL);
			break;
		case REC_ENGINE_BACKOFF:
			app(buf, cap, "backoff", NULL);
			break;
		}
	}
}

Test(workload_reconcile, table)
{
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct elig e = {r, 0};
		struct rec_wl_view v;
		struct rec_plan plan;
		struct api_workload wl;
		struct que_podset qps;
		struct que_wl qw;
		char got[1024];
		cu_error err;

		memset(&v, 0, sizeof(v));
		rec_plan_init(&plan);
		v.engine_uid = r->engine_uid;
		v.in_flight = r->in_flight;
		v.queued = r->queued;
		v.where = r->where;
		v.namespace_eligible = r->ns_eligible;
		v.queued_generation = r->queued_gen;
		v.eligible = eligible_cb;
		v.payload = &e;
		v.lq_stop = r->lq_stop;
		v.cq_stop = r->cq_stop;
		v.read_only = r->read_only;
		if (r->engine_count > 0) {
			memset(&qps, 0, sizeof(qps));
			memset(&qw, 0, sizeof(qw));
			qps.name = "main";
			qps.count = r->engine_count;
			qps.full_count = 3;
			qw.n_podsets = 1;
			qw.podsets = &qps;
			qw.priority = r->engine_priority;
			v.engine_wl = &qw;
		}
		cr_assert_eq(cu_time_parse(T0, &v.now_ns, &err), CU_OK);
		v.now_ns += (r->now_s != 0 ? r->now_s : 100) * 1000000000LL;
		if (r->wl != W_GONE)
			wl_of(r, &wl);
		cr_assert_eq(rec_workload_reconcile(
				 &v, r->wl == W_GONE ? NULL : &wl, &plan, &err),
		    CU_OK, "%s: %s", r->name, err.msg);
		render(&plan, v.now_ns, got, sizeof(got));
		cr_expect_str_eq(got, r->want, "%s: got \"%s\" want \"%s\"",
		    r->name, got, r->want);
		/* The namespace selector is consulted only for a pending
		 * Workload whose spec did not change. */
		if (strncmp(r->name, "eligibility_", 12) != 0 &&
		    r->wl != W_REQUEUED_DEACT && r->wl != W_REQUEUED_CQ)
			cr_expect_eq(e.calls, 0, "%s", r->name);
		rec_plan_free(&plan);
		if (r->wl != W_GONE)
			api_workload_dispose(&wl);
	}
}

Test(workload_reconcile, missing_input)
{
	struct rec_wl_view v = {0};
	struct rec_plan plan;
	cu_error err;

	rec_plan_init(&plan);
	cr_expect_eq(rec_workload_reconcile(&v, NULL, &plan, &err), CU_EINVAL);
	cr_expect_eq(
	    rec_workload_reconcile(NULL, NULL, &plan, &err), CU_EINVAL);
	rec_plan_free(&plan);
	rec_plan_free(NULL);
}
