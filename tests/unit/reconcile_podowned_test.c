/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/reconcile_podowned_test.c - Kueue's
 * SkipReassignmentForPodOwnedWorkloads (on by default) in the pure
 * reconcile layer:
 *
 *   owner:    which Workloads are owned by a single Pod
 *             (rec_wl_owned_by_single_pod): one ownerReference, a v1
 *             Pod, its controller, and no is-group-workload annotation
 *   release:  the job reconciler releasing an evicted Workload whose pod
 *             is no longer active writes Requeued=False (the eviction's
 *             reason and message) for a Pod-owned one with the gate on,
 *             Requeued=True as for any other with the gate off, and
 *             Requeued=True for a Workload with another owner
 *   parked:   the Workload reconciler keeps a Workload with
 *             Requeued=False (Preempted or NodeFailures) out of
 *             scheduling for good (Kueue's backoffWaitingTimeExpired),
 *             where Requeued=True lets it queue
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "api/json.h"
#include "tests/unit/fixtures.h"

/* ---- owner ------------------------------------------------------------ */

#define POD_REF(name, ctl)                                                     \
	"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":\"" name             \
	"\",\"uid\":\"u-" name "\"" ctl "}"
#define CTL ",\"controller\":true"

static const struct {
	const char *name;
	const char *meta; /* the Workload's metadata, JSON */
	bool want;
} owner_rows[] = {
    {"single_pod", "{\"ownerReferences\":[" POD_REF("p", CTL) "]}", true},
    {"two_pods",
	"{\"ownerReferences\":[" POD_REF("p", "") "," POD_REF("q", "") "]}",
	false},
    /* a pod group of one Pod: its Pods own the Workload, none of them
     * its controller */
    {"group_of_one", "{\"ownerReferences\":[" POD_REF("p", "") "]}", false},
    {"group_annotation",
	"{\"annotations\":{\"kueue.x-k8s.io/is-group-workload\":\"true\"},"
	"\"ownerReferences\":[" POD_REF("p", CTL) "]}",
	false},
    {"annotation_not_true",
	"{\"annotations\":{\"kueue.x-k8s.io/is-group-workload\":\"false\"},"
	"\"ownerReferences\":[" POD_REF("p", CTL) "]}",
	true},
    {"job",
	"{\"ownerReferences\":[{\"apiVersion\":\"batch/v1\",\"kind\":"
	"\"Job\",\"name\":\"j\",\"uid\":\"u-j\",\"controller\":true}]}",
	false},
    {"pod_of_another_group",
	"{\"ownerReferences\":[{\"apiVersion\":\"example.com/v1\",\"kind\":"
	"\"Pod\",\"name\":\"p\",\"uid\":\"u-p\",\"controller\":true}]}",
	false},
    {"no_owner", "{}", false},
};

Test(podowned, owner_table)
{
	size_t i;

	for (i = 0; i < sizeof(owner_rows) / sizeof(owner_rows[0]); i++) {
		struct api_workload wl;
		json_t *md = fx_parse(owner_rows[i].meta);
		cu_error err;

		memset(&wl, 0, sizeof(wl));
		cr_assert_eq(
		    api_meta_decode(&wl.meta, md, &err), CU_OK, "%s", err.msg);
		cr_expect_eq(rec_wl_owned_by_single_pod(&wl),
		    owner_rows[i].want, "%s", owner_rows[i].name);
		api_meta_dispose(&wl.meta);
		json_decref(md);
	}
	cr_assert_not(rec_wl_owned_by_single_pod(NULL));
}

/* ---- release ---------------------------------------------------------- */

/* A managed pod still held by its scheduling gate: not active, so an
 * evicted Workload of it gives its quota back at once. */
#define GATED_POD                                                              \
	"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"      \
	"\"p\",\"namespace\":\"ns\",\"uid\":\"u-1\",\"resourceVersion\":"      \
	"\"7\",\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq\"}},"            \
	"\"spec\":{\"schedulingGates\":[{\"name\":"                            \
	"\"kueue.x-k8s.io/admission\"}],\"containers\":[{\"name\":\"c\","      \
	"\"image\":\"i\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]},"     \
	"\"status\":{\"phase\":\"Pending\"}}"

#define T0 "2026-01-01T00:00:00Z"
#define HELD(type)                                                             \
	"{\"type\":\"" type "\",\"status\":\"True\",\"reason\":\"A\","         \
	"\"message\":\"m\",\"lastTransitionTime\":\"" T0 "\"}"

static const struct {
	const char *name;
	bool gate_off;
	const char *reason; /* the eviction's */
	bool group; /* annotated kueue.x-k8s.io/is-group-workload "true" */
	const char *want; /* Requeued's status */
} release_rows[] = {
    {"preempted_parked", false, "Preempted", false, "False"},
    {"node_failures_parked", false, "NodeFailures", false, "False"},
    {"preempted_gate_off_requeued", true, "Preempted", false, "True"},
    {"node_failures_gate_off_requeued", true, "NodeFailures", false, "True"},
    {"group_requeued", false, "Preempted", true, "True"},
    /* not requeued whatever the gate */
    {"pods_ready_timeout", false, "PodsReadyTimeout", false, "False"},
};

/* The Workload of d, holding quota and evicted for `reason`, a pod
 * group's when `group`. */
static void evicted_workload(const struct fx_docjob *d, const char *reason,
    bool group, struct api_workload *wl)
{
	json_t *w = NULL;
	char buf[2048];
	cu_error err;

	cr_assert_eq(
	    rec_wl_build(&d->view, NULL, &w, &err), CU_OK, "%s", err.msg);
	json_object_set_new(
	    json_object_get(w, "metadata"), "uid", json_string("wl-uid"));
	json_object_set_new(json_object_get(w, "metadata"), "resourceVersion",
	    json_string("9"));
	if (group)
		json_object_set_new(json_object_get(w, "metadata"),
		    "annotations",
		    fx_parse("{\"kueue.x-k8s.io/is-group-workload\":"
			     "\"true\"}"));
	snprintf(buf, sizeof(buf),
	    "{\"admission\":{\"clusterQueue\":\"cq\",\"podSetAssignments\":"
	    "[{\"name\":\"main\",\"flavors\":{\"cpu\":\"f\"},"
	    "\"resourceUsage\":{\"cpu\":\"1\"},\"count\":1}]},"
	    "\"conditions\":[" HELD("QuotaReserved") "," HELD(
		"Admitted") ",{\"type\":\"Evicted\",\"status\":\"True\","
			    "\"reason\":\"%s\","
			    "\"message\":\"evicted for a "
			    "test\",\"lastTransitionTime\":"
			    "\"" T0 "\"}]}",
	    reason);
	json_object_set_new(w, "status", fx_parse(buf));
	cr_assert_eq(api_workload_decode(wl, w, &err), CU_OK, "%s", err.msg);
	json_decref(w);
}

/* The Requeued condition the plan's status write sets, or NULL. */
static const json_t *requeued_of(const struct rec_plan *plan)
{
	size_t k, i;

	for (k = 0; k < plan->n; k++) {
		const struct rec_item *it = &plan->items[k];
		const json_t *c;

		if (it->kind != REC_ITEM_WRITE ||
		    it->target != REC_TARGET_WORKLOAD ||
		    it->op != REC_WRITE_STATUS)
			continue;
		json_array_foreach(
		    json_object_get(
			json_object_get(it->body, "status"), "conditions"),
		    i, c)
		{
			const char *t = api_json_str(c, "type");

			if (t != NULL && strcmp(t, "Requeued") == 0)
				return c;
		}
	}
	return NULL;
}

Test(podowned, release_table)
{
	size_t i;

	for (i = 0; i < sizeof(release_rows) / sizeof(release_rows[0]); i++) {
		struct fx_docjob d;
		struct api_workload wl;
		struct rec_job_view v;
		struct rec_job_in in;
		struct rec_plan plan;
		const json_t *c;
		const char *name = release_rows[i].name;
		cu_error err;

		fx_docjob_load(&d, "pod", GATED_POD);
		evicted_workload(
		    &d, release_rows[i].reason, release_rows[i].group, &wl);
		fx_pod_reconcile_in(&v, &in, &d.view, &wl);
		v.no_skip_pod_owned = release_rows[i].gate_off;
		rec_plan_init(&plan);
		cr_assert_eq(rec_job_reconcile(&v, &in, 0, &plan, &err), CU_OK,
		    "%s: %s", name, err.msg);
		c = requeued_of(&plan);
		cr_assert_not_null(
		    c, "%s: no Requeued condition written", name);
		cr_expect_str_eq(api_json_str(c, "status"),
		    release_rows[i].want, "%s", name);
		cr_expect_str_eq(api_json_str(c, "reason"),
		    release_rows[i].reason, "%s", name);
		cr_expect_str_eq(api_json_str(c, "message"),
		    "evicted for a test", "%s", name);
		rec_plan_free(&plan);
		api_workload_dispose(&wl);
		fx_docjob_dispose(&d);
	}
}

/* ---- parked ----------------------------------------------------------- */

static bool any_queue(const char *ns, const char *queue, void *payload)
{
	(void)ns;
	(void)queue;
	(void)payload;
	return true;
}

static const struct {
	const char *name;
	const char *requeued; /* Requeued's status and reason, JSON */
	bool queued;
	enum que_where where;
	bool parked; /* a BACKOFF until INT64_MAX planned */
} parked_rows[] = {
    {"preempted_not_queued", "\"status\":\"False\",\"reason\":\"Preempted\"",
	false, QUE_WL_PENDING, true},
    {"preempted_pending", "\"status\":\"False\",\"reason\":\"Preempted\"", true,
	QUE_WL_PENDING, true},
    {"node_failures_released",
	"\"status\":\"False\",\"reason\":\"NodeFailures\"", true,
	QUE_WL_ADMITTED, true},
    {"requeued_true_queues", "\"status\":\"True\",\"reason\":\"Preempted\"",
	false, QUE_WL_PENDING, false},
};

Test(podowned, parked_table)
{
	size_t i;

	for (i = 0; i < sizeof(parked_rows) / sizeof(parked_rows[0]); i++) {
		struct rec_wl_view v;
		struct rec_plan plan;
		struct api_workload wl;
		bool parked = false;
		json_t *d;
		char buf[1024];
		size_t k;
		cu_error err;

		snprintf(buf, sizeof(buf),
		    "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"
		    "\"Workload\",\"metadata\":{\"name\":\"w\",\"namespace\":"
		    "\"ns\",\"uid\":\"u1\",\"resourceVersion\":\"5\"},"
		    "\"spec\":{\"queueName\":\"lq\",\"podSets\":[{\"name\":"
		    "\"main\",\"count\":1,\"template\":{\"spec\":{"
		    "\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}}]},"
		    "\"status\":{\"conditions\":[{\"type\":\"Requeued\",%s,"
		    "\"message\":\"m\",\"lastTransitionTime\":\"" T0 "\"}]}}",
		    parked_rows[i].requeued);
		d = fx_parse(buf);
		cr_assert_eq(
		    api_workload_decode(&wl, d, &err), CU_OK, "%s", err.msg);
		json_decref(d);
		memset(&v, 0, sizeof(v));
		v.engine_uid = parked_rows[i].queued ? "u1" : NULL;
		v.queued = parked_rows[i].queued;
		v.where = parked_rows[i].where;
		v.namespace_eligible = true;
		v.eligible = any_queue;
		cr_assert_eq(cu_time_parse(T0, &v.now_ns, &err), CU_OK);
		v.now_ns += 100 * 1000000000LL;
		rec_plan_init(&plan);
		cr_assert_eq(rec_workload_reconcile(&v, &wl, &plan, &err),
		    CU_OK, "%s: %s", parked_rows[i].name, err.msg);
		for (k = 0; k < plan.n; k++)
			parked |= plan.items[k].kind == REC_ITEM_ENGINE &&
				  plan.items[k].engine == REC_ENGINE_BACKOFF &&
				  plan.items[k].at_ns == INT64_MAX;
		cr_expect_eq(
		    parked, parked_rows[i].parked, "%s", parked_rows[i].name);
		rec_plan_free(&plan);
		api_workload_dispose(&wl);
	}
}
