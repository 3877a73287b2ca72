/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/controller_sync_test.c - controller/sync.c: Kueue objects as
 * the API serves them, translated into the queue model and scheduled by the
 * real engine; Workloads that already hold quota are adopted, not
 * re-decided (docs/architecture.md lesson 3).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "admission/admission.h"
#include "reconcile/reconcile.h"

static json_t *load(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);

	cr_assert_not_null(j, "test JSON: %s", e.text);
	return j;
}

static const char *flavor_json =
    "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ResourceFlavor\","
    "\"metadata\":{\"name\":\"default\",\"uid\":\"rf1\"},\"spec\":{"
    "\"nodeLabels\":{\"pool\":\"a\"}}}";

static const char *cq_json =
    "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\","
    "\"metadata\":{\"name\":\"cq\",\"uid\":\"cq1\"},\"spec\":{"
    "\"namespaceSelector\":{},\"resourceGroups\":[{\"coveredResources\":"
    "[\"cpu\"],\"flavors\":[{\"name\":\"default\",\"resources\":[{\"name\":"
    "\"cpu\",\"nominalQuota\":\"3\"}]}]}]}}";

static const char *lq_json =
    "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"LocalQueue\","
    "\"metadata\":{\"name\":\"lq\",\"namespace\":\"ns\",\"uid\":\"lq1\"},"
    "\"spec\":{\"clusterQueue\":\"cq\"}}";

/* A Workload of one pod set asking `cpu` per pod for `count` pods. */
static json_t *workload(const char *name, const char *uid, const char *cpu,
    int count, bool admitted)
{
	char buf[2048];

	snprintf(buf, sizeof(buf),
	    "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\","
	    "\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns\",\"uid\":\"%s\","
	    "\"creationTimestamp\":\"2024-01-01T00:00:00Z\"},\"spec\":{"
	    "\"queueName\":\"lq\",\"podSets\":[{\"name\":\"main\",\"count\":%d,"
	    "\"template\":{\"spec\":{\"nodeSelector\":{\"pool\":\"a\"},"
	    "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{"
	    "\"cpu\":\"%s\"}}}]}}}]}%s}",
	    name, uid, count, cpu,
	    admitted ? ",\"status\":{\"conditions\":[{\"type\":"
		       "\"QuotaReserved\",\"status\":\"True\",\"reason\":"
		       "\"QuotaReserved\",\"message\":\"m\","
		       "\"lastTransitionTime\":\"2024-01-01T00:00:01Z\"}],"
		       "\"admission\":{\"clusterQueue\":\"cq\","
		       "\"podSetAssignments\":[{\"name\":\"main\",\"flavors\":{"
		       "\"cpu\":\"default\"},\"resourceUsage\":{\"cpu\":\"2\"},"
		       "\"count\":1}]}}"
		     : "");
	return load(buf);
}

static que_state *setup(void)
{
	que_state *st;
	struct api_resource_flavor rf;
	struct api_cluster_queue cq;
	struct api_local_queue lq;
	json_t *j;
	cu_error err;

	cr_assert_eq(que_state_new(&st, &err), CU_OK);
	j = load(flavor_json);
	cr_assert_eq(
	    api_resource_flavor_decode(&rf, j, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(rec_sync_flavor(st, &rf, &err), CU_OK, "%s", err.msg);
	api_resource_flavor_dispose(&rf);
	json_decref(j);
	j = load(cq_json);
	cr_assert_eq(
	    api_cluster_queue_decode(&cq, j, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(
	    rec_sync_cluster_queue(st, &cq, &err), CU_OK, "%s", err.msg);
	api_cluster_queue_dispose(&cq);
	json_decref(j);
	j = load(lq_json);
	cr_assert_eq(
	    api_local_queue_decode(&lq, j, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(rec_sync_local_queue(st, &lq, &err), CU_OK, "%s", err.msg);
	api_local_queue_dispose(&lq);
	json_decref(j);
	return st;
}

static void add(que_state *st, json_t *j, int expect_rc)
{
	struct api_workload wl;
	cu_error err;

	cr_assert_eq(api_workload_decode(&wl, j, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(
	    rec_sync_workload(st, &wl, true, &err), expect_rc, "%s", err.msg);
	api_workload_dispose(&wl);
	json_decref(j);
}

static const struct adm_decision *find(
    const struct adm_result *r, const char *uid)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (strcmp(r->v[i].uid, uid) == 0)
			return &r->v[i];
	return NULL;
}

Test(controller_sync, pending_workload_is_admitted_by_the_engine)
{
	que_state *st = setup();
	struct adm_result r;
	const struct adm_decision *d;
	cu_error err;

	add(st, workload("w1", "u1", "1", 2, false), CU_OK);
	adm_result_init(&r);
	cr_assert_eq(adm_cycle(st, 1000, &r, &err), CU_OK, "%s", err.msg);
	d = find(&r, "u1");
	cr_assert_not_null(d);
	cr_assert_eq(d->kind, ADM_ADMIT);
	cr_assert_str_eq(d->cluster_queue, "cq");
	cr_assert_eq(d->n_podsets, 1);
	cr_assert_eq(d->podsets[0].n_uses, 1);
	cr_assert_str_eq(d->podsets[0].uses[0].flavor, "default");
	cr_assert_eq(d->podsets[0].uses[0].usage, 2000);
	adm_result_dispose(&r);
	cr_assert_eq(que_check_invariants(st, &err), CU_OK, "%s", err.msg);
	que_state_free(st);
}

Test(controller_sync, admitted_workload_is_adopted_and_holds_its_quota)
{
	que_state *st = setup();
	struct adm_result r;
	const struct adm_decision *d;
	struct que_wl *w;
	cu_error err;

	/* After a restart: w1 holds 2 of the 3 cpu (its status says so). */
	add(st, workload("w1", "u1", "2", 1, true), CU_OK);
	w = que_workload_get(st, "u1");
	cr_assert_not_null(w);
	cr_assert_eq(w->where, QUE_WL_ADMITTED, "adopted, not re-decided");
	/* w2 needs 2 cpu: it must wait, w1 is not admitted a second time. */
	add(st, workload("w2", "u2", "2", 1, false), CU_OK);
	adm_result_init(&r);
	cr_assert_eq(adm_cycle(st, 1000, &r, &err), CU_OK, "%s", err.msg);
	cr_assert_null(find(&r, "u1"), "no decision about the adopted one");
	d = find(&r, "u2");
	cr_assert_not_null(d);
	cr_assert_eq(d->kind, ADM_PENDING);
	cr_assert_str_eq(adm_reason_string(d->reason), "WaitingForQuota");
	cr_assert(strstr(d->message, "insufficient unused quota for cpu in "
				     "flavor default, 1 more needed") != NULL,
	    "%s", d->message);
	adm_result_dispose(&r);
	cr_assert_eq(que_check_invariants(st, &err), CU_OK, "%s", err.msg);
	/* The adopted one finishes: w2 fits now. */
	cr_assert_eq(que_workload_remove(st, "u1", &err), CU_OK);
	adm_result_init(&r);
	cr_assert_eq(adm_cycle(st, 2000, &r, &err), CU_OK, "%s", err.msg);
	d = find(&r, "u2");
	cr_assert_not_null(d);
	cr_assert_eq(d->kind, ADM_ADMIT);
	adm_result_dispose(&r);
	que_state_free(st);
}

Test(controller_sync, admission_naming_an_unknown_flavor_is_not_adopted)
{
	que_state *st = setup();
	json_t *j = workload("w1", "u1", "1", 1, true);
	json_t *fl = json_object_get(
	    json_array_get(
		json_object_get(
		    json_object_get(json_object_get(j, "status"), "admission"),
		    "podSetAssignments"),
		0),
	    "flavors");
	struct que_wl *w;

	json_object_set_new(fl, "cpu", json_string("gone"));
	add(st, j, CU_ENOTFOUND);
	w = que_workload_get(st, "u1");
	cr_assert_not_null(w, "still queued");
	cr_assert_neq(w->where, QUE_WL_ADMITTED);
	que_state_free(st);
}

Test(controller_sync, finished_and_inactive_workloads_are_recognised)
{
	struct api_workload wl;
	json_t *j = workload("w1", "u1", "1", 1, false);
	cu_error err;

	json_object_set_new(json_object_get(j, "spec"), "active", json_false());
	cr_assert_eq(api_workload_decode(&wl, j, &err), CU_OK, "%s", err.msg);
	cr_assert(rec_workload_inactive(&wl));
	cr_assert(!rec_workload_holds_quota(&wl));
	api_workload_dispose(&wl);
	json_decref(j);
}

/* A ClusterQueue covering cpu and pods (5), its LocalQueue plq, and a
 * Workload of `count` pods (minCount 2) on it, admitted with `admitted`
 * pods (0 = pending). */
static void pods_queue(que_state *st)
{
	struct api_cluster_queue cq;
	struct api_local_queue lq;
	json_t *j;
	cu_error err;

	j = load("{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"
		 "\"ClusterQueue\",\"metadata\":{\"name\":\"pq\",\"uid\":"
		 "\"pq1\"},\"spec\":{\"namespaceSelector\":{},"
		 "\"resourceGroups\":[{\"coveredResources\":[\"cpu\","
		 "\"pods\"],\"flavors\":[{\"name\":\"default\","
		 "\"resources\":[{\"name\":\"cpu\",\"nominalQuota\":\"10\"},"
		 "{\"name\":\"pods\",\"nominalQuota\":\"5\"}]}]}]}}");
	cr_assert_eq(
	    api_cluster_queue_decode(&cq, j, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(
	    rec_sync_cluster_queue(st, &cq, &err), CU_OK, "%s", err.msg);
	api_cluster_queue_dispose(&cq);
	json_decref(j);
	j = load(
	    "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"
	    "\"LocalQueue\",\"metadata\":{\"name\":\"plq\",\"namespace\":"
	    "\"ns\",\"uid\":\"plq1\"},\"spec\":{\"clusterQueue\":\"pq\"}}");
	cr_assert_eq(
	    api_local_queue_decode(&lq, j, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(rec_sync_local_queue(st, &lq, &err), CU_OK, "%s", err.msg);
	api_local_queue_dispose(&lq);
	json_decref(j);
}

static json_t *pods_workload(const char *uid, int count, int admitted)
{
	char buf[2048], status[1024] = "";

	if (admitted)
		snprintf(status, sizeof(status),
		    ",\"status\":{\"conditions\":[{\"type\":\"QuotaReserved\","
		    "\"status\":\"True\",\"reason\":\"QuotaReserved\","
		    "\"message\":\"m\",\"lastTransitionTime\":"
		    "\"2024-01-01T00:00:01Z\"}],\"admission\":{"
		    "\"clusterQueue\":\"pq\",\"podSetAssignments\":[{\"name\":"
		    "\"main\",\"flavors\":{\"cpu\":\"default\",\"pods\":"
		    "\"default\"},\"resourceUsage\":{\"cpu\":\"%dm\",\"pods\":"
		    "\"%d\"},\"count\":%d}]}}",
		    admitted * 100, admitted, admitted);
	snprintf(buf, sizeof(buf),
	    "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\","
	    "\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns\",\"uid\":\"%s\","
	    "\"creationTimestamp\":\"2024-01-01T00:00:00Z\"},\"spec\":{"
	    "\"queueName\":\"plq\",\"podSets\":[{\"name\":\"main\",\"count\":%"
	    "d,"
	    "\"minCount\":2,\"template\":{\"spec\":{\"containers\":[{\"name\":"
	    "\"c\",\"resources\":{\"requests\":{\"cpu\":\"100m\"}}}]}}}]}%s}",
	    uid, uid, count, status);
	return load(buf);
}

Test(controller_sync, adopted_partial_admission_keeps_its_count_and_pods)
{
	que_state *st = setup();
	struct adm_result r;
	const struct adm_decision *d;
	struct que_wl *w;
	cu_error err;

	pods_queue(st);
	/* After a restart: u1 was admitted with 4 of its 20 pods. */
	add(st, pods_workload("u1", 20, 4), CU_OK);
	w = que_workload_get(st, "u1");
	cr_assert_eq(w->where, QUE_WL_ADMITTED);
	cr_assert_eq(w->podsets[0].count, 4, "the admitted count, not 20");
	cr_assert_eq(w->podsets[0].n_req, 2, "cpu and pods");
	cr_assert_eq(w->podsets[0].req[1].total, 4000, "4 pods held");
	cr_assert_eq(w->podsets[0].req[0].total, 400);
	cr_assert_eq(que_check_invariants(st, &err), CU_OK, "%s", err.msg);
	/* 1 pod left: u2 (3 pods, minCount 2) cannot get even 2. */
	add(st, pods_workload("u2", 3, 0), CU_OK);
	adm_result_init(&r);
	cr_assert_eq(adm_cycle(st, 1000, &r, &err), CU_OK, "%s", err.msg);
	d = find(&r, "u2");
	cr_assert_not_null(d);
	cr_assert_eq(d->kind, ADM_PENDING);
	cr_assert_str_eq(d->message,
	    "couldn't assign flavors to pod set main: insufficient unused "
	    "quota for pods in flavor default, 2 more needed");
	adm_result_dispose(&r);
	/* u1 ends: u2 is admitted in full, with its pods. */
	cr_assert_eq(que_workload_remove(st, "u1", &err), CU_OK);
	adm_result_init(&r);
	cr_assert_eq(adm_cycle(st, 2000, &r, &err), CU_OK, "%s", err.msg);
	d = find(&r, "u2");
	cr_assert_not_null(d);
	cr_assert_eq(d->kind, ADM_ADMIT);
	cr_assert_eq(d->podsets[0].count, 3);
	cr_assert_eq(d->podsets[0].n_uses, 2);
	cr_assert_str_eq(d->podsets[0].uses[1].resource, "pods");
	cr_assert_eq(d->podsets[0].uses[1].usage, 3000);
	adm_result_dispose(&r);
	cr_assert_eq(que_check_invariants(st, &err), CU_OK, "%s", err.msg);
	que_state_free(st);
}

/* status.reclaimablePods: the pods given back are neither held by an
 * adopted Workload nor requested by a pending one (Kueue's
 * podSetsCountsAfterReclaim). */
Test(controller_sync, reclaimable_pods_are_not_counted)
{
	que_state *st = setup();
	struct que_wl *w;
	json_t *j, *stj;
	cu_error err;

	pods_queue(st);
	/* Admitted with 4 of 20, 18 reclaimable: 2 held. */
	j = pods_workload("u1", 20, 4);
	json_object_set_new(json_object_get(j, "status"), "reclaimablePods",
	    load("[{\"name\":\"main\",\"count\":18}]"));
	add(st, j, CU_OK);
	w = que_workload_get(st, "u1");
	cr_assert_eq(w->where, QUE_WL_ADMITTED);
	cr_assert_eq(w->podsets[0].count, 2);
	cr_assert_eq(w->podsets[0].req[0].total, 200, "2 pods of 100m");
	cr_assert_eq(w->podsets[0].req[1].total, 2000, "2 pods held");
	/* Pending, 5 pods, 3 reclaimable: 2 requested. */
	j = pods_workload("u3", 5, 0);
	stj = json_object();
	json_object_set_new(
	    stj, "reclaimablePods", load("[{\"name\":\"main\",\"count\":3}]"));
	json_object_set_new(j, "status", stj);
	add(st, j, CU_OK);
	w = que_workload_get(st, "u3");
	cr_assert_eq(w->where, QUE_WL_PENDING);
	cr_assert_eq(w->podsets[0].full_count, 2);
	cr_assert_eq(que_check_invariants(st, &err), CU_OK, "%s", err.msg);
	que_state_free(st);
}

/* A node-affinity requirement without a key is skipped; the values it
 * listed must not be counted into the requirement that follows it (the
 * slot is reused). */
Test(controller_sync, keyless_affinity_requirement_does_not_leak_values)
{
	que_state *st = setup();
	struct adm_result r;
	const struct adm_decision *d;
	cu_error err;

	add(st,
	    load("{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"
		 "\"Workload\",\"metadata\":{\"name\":\"w1\",\"namespace\":"
		 "\"ns\",\"uid\":\"u1\",\"creationTimestamp\":"
		 "\"2024-01-01T00:00:00Z\"},\"spec\":{\"queueName\":\"lq\","
		 "\"podSets\":[{\"name\":\"main\",\"count\":1,\"template\":{"
		 "\"spec\":{\"affinity\":{\"nodeAffinity\":{"
		 "\"requiredDuringSchedulingIgnoredDuringExecution\":{"
		 "\"nodeSelectorTerms\":[{\"matchExpressions\":["
		 "{\"operator\":\"In\",\"values\":[\"x\",\"y\"]},"
		 "{\"key\":\"pool\",\"operator\":\"In\",\"values\":[\"a\"]}"
		 "]}]}}},\"containers\":[{\"name\":\"c\",\"resources\":{"
		 "\"requests\":{\"cpu\":\"1\"}}}]}}}]}}"),
	    CU_OK);
	adm_result_init(&r);
	cr_assert_eq(adm_cycle(st, 1000, &r, &err), CU_OK, "%s", err.msg);
	d = find(&r, "u1");
	cr_assert_not_null(d);
	cr_assert_eq(d->kind, ADM_ADMIT, "pool In [a] matches the flavor");
	adm_result_dispose(&r);
	que_state_free(st);
}
