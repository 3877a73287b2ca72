/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/reconcile_order_test.c - rec_queue_order_ns
 * (reconcile/order.c), Kueue's GetQueueOrderTimestamp, one row per case:
 * creation time after a preemption, a drain or a deactivation; the
 * eviction's time after an admission check's eviction, and after a
 * PodsReady timeout only with requeuingStrategy timestamp Eviction
 * (creation with Creation or waitForPodsReady off); the Evicted
 * condition's time first, then Requeued=False's.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "reconcile/reconcile.h"

#define S 1000000000LL

/* Workload created at 2026-01-01T00:00:00Z; Evicted=True (reason ev, at
 * +10s) and/or Requeued=False (reason rq, at +20s) when non-NULL. */
static void wl_of(const char *ev, const char *rq, struct api_workload *wl)
{
	json_t *d = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:s}, "
			      "s:{s:[{s:s, s:i, s:{s:{s:[]}}}]}, s:{s:[]}}",
	    "apiVersion", "kueue.x-k8s.io/v1beta2", "kind", "Workload",
	    "metadata", "name", "w", "namespace", "n", "uid", "u",
	    "creationTimestamp", "2026-01-01T00:00:00Z", "spec", "podSets",
	    "name", "main", "count", 1, "template", "spec", "containers",
	    "status", "conditions");
	json_t *cs =
	    json_object_get(json_object_get(d, "status"), "conditions");
	cu_error err;

	if (ev != NULL)
		json_array_append_new(cs,
		    json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", "Evicted",
			"status", "True", "reason", ev, "message", "m",
			"lastTransitionTime", "2026-01-01T00:00:10Z"));
	if (rq != NULL)
		json_array_append_new(cs,
		    json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", "Requeued",
			"status", "False", "reason", rq, "message", "m",
			"lastTransitionTime", "2026-01-01T00:00:20Z"));
	cr_assert_eq(api_workload_decode(wl, d, &err), CU_OK, "%s", err.msg);
	json_decref(d);
}

Test(reconcile_order, table)
{
	static const struct {
		const char *name, *ev, *rq;
		int pr;	    /* 0 off, 1 Eviction, 2 Creation */
		int want_s; /* seconds after creation */
	} rows[] = {
	    {"never evicted", NULL, NULL, 1, 0},
	    {"preempted", "Preempted", NULL, 1, 0},
	    {"preempted, released", NULL, "Preempted", 1, 0},
	    {"drained", "LocalQueueStopped", NULL, 0, 0},
	    {"admission check", "AdmissionCheck", NULL, 0, 10},
	    {"admission check, released", NULL, "AdmissionCheck", 0, 20},
	    {"admission check, both", "AdmissionCheck", "AdmissionCheck", 0,
		10},
	    {"pods ready, Eviction", "PodsReadyTimeout", NULL, 1, 10},
	    {"pods ready, released", NULL, "PodsReadyTimeout", 1, 20},
	    {"pods ready, Creation", "PodsReadyTimeout", NULL, 2, 0},
	    {"pods ready, gate off", "PodsReadyTimeout", NULL, 0, 0},
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct rec_pods_ready_cfg cfg;
		struct api_workload wl;

		memset(&cfg, 0, sizeof(cfg));
		cfg.enable = rows[i].pr != 0;
		cfg.creation_timestamp = rows[i].pr == 2;
		wl_of(rows[i].ev, rows[i].rq, &wl);
		cr_expect_eq(rec_queue_order_ns(&cfg, &wl, 0),
		    wl.meta.creation_ns + rows[i].want_s * S, "%s",
		    rows[i].name);
		api_workload_dispose(&wl);
	}
}
