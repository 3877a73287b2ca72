/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/reconcile_fw_lws_test.c - a LeaderWorkerSet's group
 * Workloads (rec_lws_reconcile, reconcile/fw_serving.c), as Kueue's
 * leaderworkerset reconciler keeps them:
 *
 *   create:   one Workload per group index, named after "<lws>-<i>" and
 *             the set's uid, owned (not controlled) by the set, pod sets
 *             leader 1 + worker size-1, Kueue's annotations, the
 *             CreatedWorkload event once it lands; none while a create
 *             of ours is awaited
 *   surge:    status.replicas counts during a maxSurge rollout
 *   scale:    Workloads beyond the count deleted (finalizer dropped once
 *             their group has no Pod)
 *   keep:     the same Workload across preemption: evicted with no Pod of
 *             its group left, its quota released; the queue name follows
 *   gone:     the set gone: only the finalizers go (the collector deletes)
 *   gate:     a set the gate does not manage: nothing
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "api/json.h"
#include "reconcile/reconcile.h"
#include "tests/unit/fixtures.h"

#define LWS_UID "11111111-2222-3333-4444-555555555555"

/* LeaderWorkerSet "srv" with `replicas` groups of size 3 (a leader
 * template), queue q, and `extra` spec members (ending with a comma). */
static json_t *lws(
    int replicas, const char *q, const char *extra, const char *status)
{
	char buf[2048];

	snprintf(buf, sizeof(buf),
	    "{\"apiVersion\":\"leaderworkerset.x-k8s.io/v1\",\"kind\":"
	    "\"LeaderWorkerSet\",\"metadata\":{\"name\":\"srv\",\"namespace\":"
	    "\"ns\",\"uid\":\"" LWS_UID "\",\"labels\":{"
	    "\"kueue.x-k8s.io/queue-name\":\"%s\"}},\"spec\":{%s"
	    "\"replicas\":%d,\"leaderWorkerTemplate\":{\"size\":3,"
	    "\"leaderTemplate\":{\"metadata\":{\"labels\":{"
	    "\"leaderworkerset.sigs.k8s.io/name\":\"srv\","
	    "\"leaderworkerset.sigs.k8s.io/group-index\":\"0\"}},\"spec\":{"
	    "\"containers\":[{\"name\":\"l\",\"image\":\"i\",\"resources\":{"
	    "\"requests\":{\"cpu\":\"100m\"}}}]}},\"workerTemplate\":{\"spec\":"
	    "{\"containers\":[{\"name\":\"w\",\"image\":\"i\",\"resources\":{"
	    "\"requests\":{\"cpu\":\"200m\"}}}]}}}},\"status\":{%s}}",
	    q, extra, replicas, status);
	return fx_parse(buf);
}

static char *wl_name(int i)
{
	char *n = NULL;
	cu_error err;

	cr_assert_eq(rec_lws_workload_name("srv", LWS_UID, i, &n, &err), CU_OK);
	return n;
}

/* Workload of group i owned by the set, queue q, with `status` and
 * metadata extra members (ending with a comma). */
static void workload(struct api_workload *wl, int i, const char *q,
    const char *md, const char *status)
{
	char buf[2048], *n = wl_name(i);
	json_t *j;
	cu_error err;

	snprintf(buf, sizeof(buf),
	    "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\","
	    "\"metadata\":{%s\"name\":\"%s\",\"namespace\":\"ns\",\"uid\":"
	    "\"w%d\",\"resourceVersion\":\"5\",\"finalizers\":["
	    "\"kueue.x-k8s.io/resource-in-use\"],\"ownerReferences\":[{"
	    "\"apiVersion\":\"leaderworkerset.x-k8s.io/v1\",\"kind\":"
	    "\"LeaderWorkerSet\",\"name\":\"srv\",\"uid\":\"" LWS_UID "\"}]},"
	    "\"spec\":{\"queueName\":\"%s\",\"podSets\":[{\"name\":\"main\","
	    "\"count\":1,\"template\":{\"spec\":{\"containers\":[]}}}]},"
	    "\"status\":{%s}}",
	    md, n, i, q, status);
	cu_free(n);
	j = fx_parse(buf);
	cr_assert_eq(api_workload_decode(wl, j, &err), CU_OK, "%s", err.msg);
	json_decref(j);
}

static void run(const json_t *set, const struct api_workload *const *owned,
    const size_t *pods, size_t n, bool managed, bool awaited,
    struct rec_plan *plan)
{
	struct rec_job_view v;
	struct rec_lws_in in;
	cu_error err;

	memset(&v, 0, sizeof(v));
	v.managed = managed;
	v.queue_name = "lq";
	v.local_queue_exists = fx_no_lq;
	memset(&in, 0, sizeof(in));
	in.ns = "ns";
	in.name = "srv";
	in.lws = set;
	in.owned = owned;
	in.pods = pods;
	in.n_owned = n;
	in.awaited = awaited;
	rec_plan_init(plan);
	cr_assert_eq(
	    rec_lws_reconcile(&v, &in, 1000, plan, &err), CU_OK, "%s", err.msg);
}

/* The plan's writes as "op:name" joined by spaces (names shortened to
 * their group index). */
static void writes(const struct rec_plan *p, char *out, size_t n)
{
	static const char *const ops[] = {
	    "create", "patch", "status", "delete"};
	size_t i, k;

	out[0] = '\0';
	for (i = 0; i < p->n; i++) {
		const struct rec_item *it = &p->items[i];
		const char *op = "?";
		int g = -1;

		if (it->kind != REC_ITEM_WRITE)
			continue;
		op = it->op == REC_WRITE_CREATE	  ? ops[0]
		     : it->op == REC_WRITE_PATCH  ? ops[1]
		     : it->op == REC_WRITE_STATUS ? ops[2]
		     : it->op == REC_WRITE_DELETE ? ops[3]
						  : "?";
		for (k = 0; k < 8 && g < 0; k++) {
			char *nm = wl_name((int)k);

			if (strcmp(nm, it->name) == 0)
				g = (int)k;
			cu_free(nm);
		}
		snprintf(out + strlen(out), n - strlen(out), "%s%s:%d",
		    out[0] ? " " : "", op, g);
	}
}

Test(lws, creates_one_workload_per_group_as_kueue)
{
	json_t *set = lws(2, "lq", "", "");
	struct rec_plan p;
	char w[256], *n0 = wl_name(0);
	const json_t *md, *ps;

	run(set, NULL, NULL, 0, true, false, &p);
	writes(&p, w, sizeof(w));
	cr_assert_str_eq(w, "create:0 create:1");
	cr_assert(strncmp(n0, "leaderworkerset-srv-0-", 22) == 0, "%s", n0);
	md = json_object_get(p.items[0].body, "metadata");
	cr_assert_str_eq(api_json_str(md, "name"), n0);
	cr_assert_str_eq(api_json_str(json_object_get(md, "annotations"),
			     "kueue.x-k8s.io/component-workload-index"),
	    "0");
	cr_assert_str_eq(api_json_str(json_object_get(md, "annotations"),
			     "kueue.x-k8s.io/is-group-workload"),
	    "true");
	cr_assert_str_eq(api_json_str(json_object_get(md, "annotations"),
			     "kueue.x-k8s.io/job-owner-gvk"),
	    "leaderworkerset.x-k8s.io/v1, Kind=LeaderWorkerSet");
	cr_assert_str_eq(api_json_str(json_object_get(md, "labels"),
			     "kueue.x-k8s.io/job-uid"),
	    LWS_UID);
	cr_assert_eq(
	    json_array_size(json_object_get(md, "ownerReferences")), 1);
	cr_assert(!json_is_true(json_object_get(
	    json_array_get(json_object_get(md, "ownerReferences"), 0),
	    "controller")));
	ps = json_object_get(
	    json_object_get(p.items[0].body, "spec"), "podSets");
	cr_assert_str_eq(api_json_str(json_array_get(ps, 0), "name"), "leader");
	cr_assert_eq(
	    json_integer_value(json_object_get(json_array_get(ps, 0), "count")),
	    1);
	cr_assert_str_eq(api_json_str(json_array_get(ps, 1), "name"), "worker");
	cr_assert_eq(
	    json_integer_value(json_object_get(json_array_get(ps, 1), "count")),
	    2);
	/* Kueue drops the set's own keys from the templates but its name. */
	md = json_object_get(
	    json_object_get(json_array_get(ps, 0), "template"), "metadata");
	cr_assert_str_eq(api_json_str(json_object_get(md, "labels"),
			     "leaderworkerset.sigs.k8s.io/name"),
	    "srv");
	cr_assert_null(json_object_get(json_object_get(md, "labels"),
	    "leaderworkerset.sigs.k8s.io/group-index"));
	cr_assert_str_eq(p.items[0].done_reason, "CreatedWorkload");
	cr_assert(strstr(p.items[0].text, "Created Workload: ns/") != NULL);
	rec_plan_free(&p);
	/* Not while a create of ours is awaited, nor when not managed. */
	run(set, NULL, NULL, 0, true, true, &p);
	cr_assert_eq(p.n, 0);
	rec_plan_free(&p);
	run(set, NULL, NULL, 0, false, false, &p);
	cr_assert_eq(p.n, 0);
	rec_plan_free(&p);
	cu_free(n0);
	json_decref(set);
}

Test(lws, surge_counts_status_replicas)
{
	json_t *a = lws(2, "lq",
	    "\"rolloutStrategy\":{\"rollingUpdateConfiguration\":{"
	    "\"maxSurge\":1}},",
	    "\"replicas\":3,\"updatedReplicas\":1");
	json_t *b = lws(2, "lq", "", "\"replicas\":3,\"updatedReplicas\":1");

	cr_assert_eq(rec_lws_groups(a), 3);
	cr_assert_eq(rec_lws_groups(b), 2);
	json_decref(a);
	json_decref(b);
}

Test(lws, scale_down_deletes_beyond_the_count)
{
	json_t *set = lws(1, "lq", "", "");
	struct api_workload w[3];
	const struct api_workload *owned[3] = {&w[0], &w[1], &w[2]};
	size_t pods[3] = {3, 0, 3};
	struct rec_plan p;
	char s[256];

	workload(&w[0], 0, "lq", "", "");
	workload(&w[1], 1, "lq", "", "");
	workload(&w[2], 2, "lq", "", "");
	run(set, owned, pods, 3, true, false, &p);
	writes(&p, s, sizeof(s));
	/* Group 1 has no Pod: finalizer, then delete; group 2 still has its
	 * Pods: deleted, its pod group stops them and drops it. */
	cr_assert_str_eq(s, "patch:1 delete:1 delete:2");
	rec_plan_free(&p);
	for (size_t i = 0; i < 3; i++)
		api_workload_dispose(&w[i]);
	json_decref(set);
}

#define EVICTED                                                                \
	"\"admission\":{\"clusterQueue\":\"cq\",\"podSetAssignments\":[]},"    \
	"\"conditions\":[{\"type\":\"QuotaReserved\",\"status\":\"True\","     \
	"\"reason\":\"QuotaReserved\",\"message\":\"\","                       \
	"\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"},{\"type\":"          \
	"\"Evicted\",\"status\":\"True\",\"reason\":\"Preempted\","            \
	"\"message\":\"Preempted to accommodate a workload\","                 \
	"\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}]"

Test(lws, same_workload_released_after_preemption)
{
	json_t *set = lws(1, "lq", "", "");
	struct api_workload w;
	const struct api_workload *owned[1] = {&w};
	size_t pods[1] = {0};
	struct rec_plan p;
	char s[256];

	workload(&w, 0, "lq", "", EVICTED);
	run(set, owned, pods, 1, true, false, &p);
	writes(&p, s, sizeof(s));
	cr_assert_str_eq(s, "status:0", "the same Workload released: %s", s);
	cr_assert_not_null(json_object_get(p.items[0].body, "status"));
	rec_plan_free(&p);
	/* While Pods of the group remain, the pod group stops them first. */
	pods[0] = 2;
	run(set, owned, pods, 1, true, false, &p);
	cr_assert_eq(p.n, 0);
	rec_plan_free(&p);
	api_workload_dispose(&w);
	json_decref(set);
}

Test(lws, queue_name_follows_the_set)
{
	json_t *set = lws(1, "other", "", "");
	struct api_workload w;
	const struct api_workload *owned[1] = {&w};
	size_t pods[1] = {3};
	struct rec_plan p;
	char s[256];

	workload(&w, 0, "lq", "", "");
	run(set, owned, pods, 1, true, false, &p);
	writes(&p, s, sizeof(s));
	cr_assert_str_eq(s, "patch:0");
	cr_assert_str_eq(
	    api_json_str(json_object_get(p.items[0].body, "spec"), "queueName"),
	    "other");
	rec_plan_free(&p);
	api_workload_dispose(&w);
	json_decref(set);
}

Test(lws, gone_set_only_drops_finalizers)
{
	struct api_workload w[2];
	const struct api_workload *owned[2] = {&w[0], &w[1]};
	size_t pods[2] = {0, 1};
	struct rec_plan p;
	char s[256];

	workload(&w[0], 0, "lq",
	    "\"deletionTimestamp\":\"2026-01-01T00:00:00Z\",", "");
	workload(&w[1], 1, "lq", "", "");
	run(NULL, owned, pods, 2, true, false, &p);
	writes(&p, s, sizeof(s));
	cr_assert_str_eq(s, "patch:0");
	rec_plan_free(&p);
	api_workload_dispose(&w[0]);
	api_workload_dispose(&w[1]);
}
