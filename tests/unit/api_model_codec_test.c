/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/api_model_codec_test.c - the typed object codecs of
 * api/model.h: golden round trips for every kind (unknown fields kept,
 * model-only re-encoding stable), typed values read from the golden files,
 * and decode errors that name the exact field path.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "api/model.h"

/* ---- helpers ------------------------------------------------------------ */

static json_t *load_golden(const char *name)
{
	const char *dir = getenv("CUEUE_GOLDEN_DIR");
	char path[512];
	json_error_t jerr;
	json_t *j;

	snprintf(
	    path, sizeof(path), "%s/%s", dir ? dir : "tests/data/golden", name);
	j = json_load_file(path, 0, &jerr);
	cr_assert_not_null(
	    j, "cannot load %s: %s (line %d)", path, jerr.text, jerr.line);
	return j;
}

/* Walk "a.b[2].c" from root; NULL when missing. */
static json_t *at(json_t *root, const char *path)
{
	char buf[256];
	char *tok, *save = NULL;
	json_t *cur = root;

	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, ".", &save); tok && cur;
	     tok = strtok_r(NULL, ".", &save)) {
		char *br = strchr(tok, '[');

		if (br != NULL)
			*br = '\0';
		if (*tok)
			cur = json_object_get(cur, tok);
		while (br != NULL && cur) {
			cur = json_array_get(cur, strtoul(br + 1, NULL, 10));
			br = strchr(br + 1, '[');
		}
	}
	return cur;
}

/* Set (v != NULL, stolen) or delete the last key of path. */
static void put(json_t *root, const char *path, json_t *v)
{
	char parent[256];
	const char *dot = strrchr(path, '.');
	json_t *p;

	if (dot == NULL) {
		p = root;
		dot = path - 1;
	} else {
		snprintf(
		    parent, sizeof(parent), "%.*s", (int)(dot - path), path);
		p = at(root, parent);
	}
	cr_assert(json_is_object(p), "no parent object for %s", path);
	if (v == NULL)
		json_object_del(p, dot + 1);
	else
		json_object_set_new(p, dot + 1, v);
}

static void assert_json_equal(
    const json_t *a, const json_t *b, const char *what)
{
	if (!json_equal((json_t *)a, (json_t *)b)) {
		static char sa[16384], sb[16384];
		size_t na = json_dumpb(
		    a, sa, sizeof(sa) - 1, JSON_SORT_KEYS | JSON_COMPACT);
		size_t nb = json_dumpb(
		    b, sb, sizeof(sb) - 1, JSON_SORT_KEYS | JSON_COMPACT);

		sa[na < sizeof(sa) ? na : sizeof(sa) - 1] = '\0';
		sb[nb < sizeof(sb) ? nb : sizeof(sb) - 1] = '\0';
		cr_log_error("%s\n got: %s\nwant: %s", what, sa, sb);
		cr_assert_fail("%s: JSON differs", what);
	}
}

/*
 * Round trip for one kind: encode(decode(j)) == j; decoding the encoded
 * form again gives the same encoding; and with the source document dropped
 * (model-only encoding) decode/encode is a fixed point and drops the
 * unmodelled keys.
 */
#define ROUND_TRIP_FN(K)                                                       \
	static json_t *round_trip_##K(json_t *j)                               \
	{                                                                      \
		struct api_##K x, y, z;                                        \
		json_t *e1 = NULL, *e2 = NULL, *e3 = NULL, *e4 = NULL;         \
		cu_error err;                                                  \
                                                                               \
		cu_error_clear(&err);                                          \
		cr_assert_eq(                                                  \
		    api_##K##_decode(&x, j, &err), CU_OK, "%s", err.msg);      \
		cr_assert_eq(                                                  \
		    api_##K##_encode(&e1, &x, &err), CU_OK, "%s", err.msg);    \
		assert_json_equal(e1, j, #K " encode(decode(golden))");        \
		cr_assert_eq(                                                  \
		    api_##K##_decode(&y, e1, &err), CU_OK, "%s", err.msg);     \
		cr_assert_eq(                                                  \
		    api_##K##_encode(&e2, &y, &err), CU_OK, "%s", err.msg);    \
		assert_json_equal(e2, e1, #K " second round");                 \
		json_decref(y.raw);                                            \
		y.raw = NULL;                                                  \
		cr_assert_eq(                                                  \
		    api_##K##_encode(&e3, &y, &err), CU_OK, "%s", err.msg);    \
		cr_assert_eq(                                                  \
		    api_##K##_decode(&z, e3, &err), CU_OK, "%s", err.msg);     \
		{                                                              \
			json_t *keep = z.raw;                                  \
			z.raw = NULL;                                          \
			cr_assert_eq(api_##K##_encode(&e4, &z, &err), CU_OK,   \
			    "%s", err.msg);                                    \
			z.raw = keep;                                          \
		}                                                              \
		assert_json_equal(e4, e3, #K " model-only round trip");        \
		api_##K##_dispose(&x);                                         \
		api_##K##_dispose(&y);                                         \
		api_##K##_dispose(&z);                                         \
		json_decref(e1);                                               \
		json_decref(e2);                                               \
		json_decref(e4);                                               \
		return e3;                                                     \
	}

ROUND_TRIP_FN(cluster_queue)
ROUND_TRIP_FN(local_queue)
ROUND_TRIP_FN(resource_flavor)
ROUND_TRIP_FN(workload)
ROUND_TRIP_FN(workload_priority_class)
ROUND_TRIP_FN(cohort)
ROUND_TRIP_FN(job)
ROUND_TRIP_FN(jobset)
ROUND_TRIP_FN(namespace)
ROUND_TRIP_FN(priority_class)
ROUND_TRIP_FN(lease)
ROUND_TRIP_FN(event)

/* ---- golden round trips ------------------------------------------------- */

Test(model_golden, cluster_queue_round_trips_and_drops_unknown_without_raw)
{
	json_t *j = load_golden("clusterqueue.json");
	json_t *m = round_trip_cluster_queue(j);

	cr_assert_not_null(at(j, "spec.futureField"));
	cr_assert_null(at(m, "spec.futureField"),
	    "model-only encoding must not invent unmodelled fields");
	cr_assert_null(at(m, "metadata.managedFields"));
	cr_assert_str_eq(
	    json_string_value(at(m, "spec.cohortName")), "research");
	json_decref(m);
	json_decref(j);
}

Test(model_golden, local_queue_round_trips)
{
	json_t *j = load_golden("localqueue.json");
	json_t *m = round_trip_local_queue(j);

	cr_assert_null(at(m, "status.fairSharing"));
	cr_assert_str_eq(json_string_value(at(m, "spec.stopPolicy")), "Hold");
	json_decref(m);
	json_decref(j);
}

Test(model_golden, resource_flavor_round_trips)
{
	json_t *j = load_golden("resourceflavor.json");
	json_t *m = round_trip_resource_flavor(j);

	cr_assert_str_eq(
	    json_string_value(at(m, "spec.nodeTaints[1].effect")), "NoExecute");
	json_decref(m);
	json_decref(j);
}

Test(model_golden, workload_round_trips_and_keeps_unmodelled_status)
{
	json_t *j = load_golden("workload.json");
	json_t *m = round_trip_workload(j);

	cr_assert_null(at(m, "status.schedulingStats"));
	/* topologyRequest is modelled (topology-aware scheduling). */
	cr_assert_str_eq(json_string_value(at(
			     m, "spec.podSets[0].topologyRequest.preferred")),
	    "cloud.example.com/rack");
	cr_assert_str_eq(
	    json_string_value(at(m, "status.admission.podSetAssignments[0]."
				    "resourceUsage.memory")),
	    "600Mi");
	json_decref(m);
	json_decref(j);
}

Test(model_golden, workload_priority_class_round_trips)
{
	json_t *j = load_golden("workloadpriorityclass.json");
	json_t *m = round_trip_workload_priority_class(j);

	cr_assert_null(at(m, "vendorExtension"));
	cr_assert_eq(json_integer_value(at(m, "value")), 10000);
	json_decref(m);
	json_decref(j);
}

Test(model_golden, cohort_round_trips)
{
	json_t *j = load_golden("cohort.json");
	json_t *m = round_trip_cohort(j);

	cr_assert_str_eq(
	    json_string_value(at(m, "spec.fairSharing.weight")), "500m");
	json_decref(m);
	json_decref(j);
}

Test(model_golden, job_round_trips)
{
	json_t *j = load_golden("job.json");
	json_t *m = round_trip_job(j);

	cr_assert_null(at(m, "spec.backoffLimit"));
	cr_assert_not_null(at(m, "spec.template.spec.initContainers[0]"));
	json_decref(m);
	json_decref(j);
}

Test(model_golden, jobset_round_trips)
{
	json_t *j = load_golden("jobset.json");
	json_t *m = round_trip_jobset(j);

	cr_assert_null(at(m, "spec.network"));
	cr_assert_eq(json_integer_value(at(m,
			 "spec.replicatedJobs[0].template.spec.parallelism")),
	    4);
	json_decref(m);
	json_decref(j);
}

Test(model_golden, namespace_round_trips)
{
	json_t *j = load_golden("namespace.json");
	json_t *m = round_trip_namespace(j);

	cr_assert_str_eq(json_string_value(at(m, "status.phase")), "Active");
	cr_assert_null(at(m, "spec"));
	json_decref(m);
	json_decref(j);
}

Test(model_golden, priority_class_round_trips)
{
	json_t *j = load_golden("priorityclass.json");
	json_t *m = round_trip_priority_class(j);

	cr_assert_eq(json_integer_value(at(m, "value")), -10);
	json_decref(m);
	json_decref(j);
}

Test(model_golden, lease_round_trips_with_micro_time)
{
	json_t *j = load_golden("lease.json");
	json_t *m = round_trip_lease(j);

	cr_assert_str_eq(json_string_value(at(m, "spec.renewTime")),
	    "2025-03-02T09:05:30.123456Z");
	cr_assert_null(at(m, "spec.strategy"));
	json_decref(m);
	json_decref(j);
}

Test(model_golden, event_round_trips_keeping_null_event_time)
{
	json_t *j = load_golden("event.json");
	json_t *m = round_trip_event(j);

	cr_assert(json_is_null(at(j, "eventTime")));
	cr_assert_null(at(m, "eventTime"));
	json_decref(m);
	json_decref(j);
}

/* ---- typed values ---------------------------------------------------------
 */

Test(model_values, cluster_queue_fields_are_typed)
{
	json_t *j = load_golden("clusterqueue.json");
	struct api_cluster_queue cq;
	cu_error err;
	const struct api_resource_group *g;

	cr_assert_eq(
	    api_cluster_queue_decode(&cq, j, &err), CU_OK, "%s", err.msg);
	cr_assert_str_eq(cq.meta.name, "team-a-cq");
	cr_assert_eq(cq.meta.generation, 3);
	cr_assert_str_eq(
	    cq.meta.finalizers.items[0], "kueue.x-k8s.io/resource-in-use");
	cr_assert_eq(cq.spec.resource_groups.n, 2);
	g = &cq.spec.resource_groups.items[0];
	cr_assert_eq(g->covered_resources.n, 2);
	cr_assert_str_eq(g->flavors[1].name, "spot");
	cr_assert_eq(g->flavors[0].resources[0].nominal_quota.milli, 9000);
	cr_assert(g->flavors[0].resources[0].has_borrowing_limit);
	cr_assert_eq(g->flavors[0].resources[0].borrowing_limit.milli, 1000);
	cr_assert_not(g->flavors[0].resources[0].has_lending_limit);
	cr_assert_eq(g->flavors[0].resources[1].lending_limit.milli,
	    4LL * 1024 * 1024 * 1024 * 1000);
	cr_assert_eq(cq.spec.resource_groups.items[1]
			 .flavors[0]
			 .resources[0]
			 .nominal_quota.milli,
	    8000);
	cr_assert_eq(cq.spec.queueing_strategy, API_QS_BEST_EFFORT_FIFO);
	cr_assert(cq.spec.has_namespace_selector);
	cr_assert_eq(cq.spec.namespace_selector.nreqs, 1);
	cr_assert_eq(cq.spec.preemption.reclaim_within_cohort, API_PREEMPT_ANY);
	cr_assert_eq(cq.spec.preemption.within_cluster_queue,
	    API_PREEMPT_LOWER_PRIORITY);
	cr_assert_eq(
	    cq.spec.preemption.borrow_within_cohort.max_priority_threshold,
	    100);
	cr_assert_eq(cq.spec.flavor_fungibility.when_can_preempt,
	    API_FUNG_TRY_NEXT_FLAVOR);
	cr_assert_str_eq(
	    cq.spec.admission_checks[0].on_flavors.items[0], "spot");
	cr_assert_eq(cq.spec.stop_policy, API_STOP_NONE);
	cr_assert_eq(cq.spec.fair_sharing_weight.milli, 2000);
	cr_assert(api_conditions_true(&cq.status.conditions, "Active"));
	cr_assert_eq(api_conditions_find(&cq.status.conditions, "Active")
			 ->observed_generation,
	    3);
	cr_assert_eq(
	    cq.status.flavors_usage.items[0].resources[0].total.milli, 4500);
	cr_assert_eq(cq.status.pending_workloads, 2);
	cr_assert_eq(cq.status.weighted_share, 250);
	api_cluster_queue_dispose(&cq);
	json_decref(j);
}

Test(model_values, cluster_queue_defaults_when_fields_absent)
{
	json_t *j = json_pack("{s:s, s:{s:s}, s:{}}", "kind", "ClusterQueue",
	    "metadata", "name", "bare", "spec");
	struct api_cluster_queue cq;
	json_t *out;

	cr_assert_eq(api_cluster_queue_decode(&cq, j, NULL), CU_OK);
	cr_assert_eq(cq.spec.queueing_strategy, API_QS_UNSET);
	cr_assert_eq(api_cq_queueing_strategy(&cq), API_QS_BEST_EFFORT_FIFO);
	cr_assert_not(cq.spec.has_namespace_selector);
	cr_assert_eq(api_cluster_queue_encode(&out, &cq, NULL), CU_OK);
	cr_assert_null(at(out, "spec.queueingStrategy"),
	    "an unset default must not be written");
	cr_assert_null(at(out, "status"));
	json_decref(out);
	api_cluster_queue_dispose(&cq);
	json_decref(j);
}

Test(model_values, workload_admission_and_requeue_state)
{
	json_t *j = load_golden("workload.json");
	struct api_workload wl;
	const struct api_podset_assignment *a;
	cu_error err;

	cr_assert_eq(api_workload_decode(&wl, j, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(wl.spec.n_pod_sets, 1);
	cr_assert_str_eq(wl.spec.pod_sets[0].name, "main");
	cr_assert_eq(wl.spec.pod_sets[0].count, 3);
	cr_assert_eq(wl.spec.pod_sets[0].min_count, 1);
	cr_assert(json_is_object(wl.spec.pod_sets[0].template));
	cr_assert_str_eq(wl.spec.priority_class_ref.name, "high");
	cr_assert_eq(wl.spec.priority, 10000);
	cr_assert(wl.spec.has_active && wl.spec.active);
	cr_assert_eq(wl.spec.maximum_execution_time_seconds, 3600);
	cr_assert(wl.status.has_admission);
	cr_assert_str_eq(wl.status.admission.cluster_queue, "team-a-cq");
	a = &wl.status.admission.pod_set_assignments[0];
	cr_assert_str_eq(api_strmap_get(&a->flavors, "cpu"), "on-demand");
	cr_assert_eq(api_qmap_get(&a->resource_usage, "cpu")->milli, 3000);
	cr_assert_eq(api_qmap_get(&a->resource_usage, "memory")->milli,
	    600LL * 1024 * 1024 * 1000);
	cr_assert_null(api_qmap_get(&a->resource_usage, "gpu"));
	cr_assert_eq(a->count, 3);
	cr_assert_eq(wl.status.requeue_state.count, 1);
	cr_assert(wl.status.requeue_state.has_requeue_at);
	cr_assert_eq(wl.status.reclaimable_pods[0].count, 1);
	cr_assert_eq(wl.status.admission_checks[0].state, API_CHECK_READY);
	cr_assert_eq(wl.status.accumulated_past_execution_time_seconds, 120);
	cr_assert(api_conditions_true(&wl.status.conditions, "Admitted"));
	cr_assert_str_eq(
	    api_conditions_find(&wl.status.conditions, "Requeued")->message,
	    "");
	cr_assert_str_eq(api_meta_controller(&wl.meta)->kind, "Job");
	api_workload_dispose(&wl);
	json_decref(j);
}

Test(model_values, changed_fields_are_written_and_unknown_ones_kept)
{
	json_t *j = load_golden("workload.json");
	struct api_workload wl;
	struct api_podset_assignment *a;
	json_t *out;

	cr_assert_eq(api_workload_decode(&wl, j, NULL), CU_OK);
	a = &wl.status.admission.pod_set_assignments[0];
	a->resource_usage.items[0].q.milli = 1500; /* cpu */
	wl.status.requeue_state.count = 2;
	wl.spec.has_maximum_execution_time_seconds = false;
	cr_assert_eq(
	    api_strmap_set(&wl.meta.labels, "extra", "yes", NULL), CU_OK);
	cr_assert_eq(api_workload_encode(&out, &wl, NULL), CU_OK);
	cr_assert_str_eq(
	    json_string_value(at(out, "status.admission.podSetAssignments[0]."
				      "resourceUsage.cpu")),
	    "1500m");
	cr_assert_str_eq(
	    json_string_value(at(out, "status.admission.podSetAssignments[0]."
				      "resourceUsage.memory")),
	    "600Mi");
	cr_assert_eq(
	    json_integer_value(at(out, "status.requeueState.count")), 2);
	cr_assert_null(at(out, "spec.maximumExecutionTimeSeconds"));
	cr_assert_str_eq(
	    json_string_value(at(out, "metadata.labels.extra")), "yes");
	cr_assert_not_null(at(out, "status.schedulingStats.evictions[0]"));
	cr_assert_not_null(at(out, "spec.podSets[0].topologyRequest"));
	cr_assert_not_null(
	    at(out, "status.admissionChecks[0].podSetUpdates[0]"));
	json_decref(out);
	api_workload_dispose(&wl);
	json_decref(j);
}

Test(model_values, job_and_jobset_fields)
{
	json_t *jj = load_golden("job.json");
	json_t *js = load_golden("jobset.json");
	struct api_job job;
	struct api_jobset set;

	cr_assert_eq(api_job_decode(&job, jj, NULL), CU_OK);
	cr_assert_eq(job.spec.parallelism, 3);
	cr_assert_eq(job.spec.completions, 6);
	cr_assert(job.spec.has_suspend && !job.spec.suspend);
	cr_assert_str_eq(job.spec.completion_mode, "Indexed");
	cr_assert_eq(job.status.ready, 2);
	cr_assert(job.status.conditions.items[0].has_last_probe);
	cr_assert_eq(job.status.conditions.items[0].status, API_COND_FALSE);
	cr_assert_eq(api_jobset_decode(&set, js, NULL), CU_OK);
	cr_assert_eq(set.spec.n_replicated_jobs, 2);
	cr_assert_eq(set.spec.replicated_jobs[0].replicas, 2);
	cr_assert_eq(set.spec.replicated_jobs[0].parallelism, 4);
	cr_assert(json_is_object(set.spec.replicated_jobs[1].pod_template));
	cr_assert(set.spec.suspend);
	cr_assert_eq(set.status.replicated_jobs_status[0].suspended, 2);
	api_job_dispose(&job);
	api_jobset_dispose(&set);
	json_decref(jj);
	json_decref(js);
}

Test(model_values, object_built_in_code_encodes_from_scratch)
{
	struct api_local_queue lq;
	struct api_local_queue back;
	json_t *out;

	memset(&lq, 0, sizeof(lq));
	lq.meta.name = cu_strdup("q");
	lq.meta.namespace_ = cu_strdup("ns");
	lq.spec.cluster_queue = cu_strdup("cq");
	lq.spec.stop_policy = API_STOP_HOLD_AND_DRAIN;
	cr_assert_eq(api_local_queue_encode(&out, &lq, NULL), CU_OK);
	cr_assert_str_eq(
	    json_string_value(at(out, "apiVersion")), "kueue.x-k8s.io/v1beta2");
	cr_assert_str_eq(json_string_value(at(out, "kind")), "LocalQueue");
	cr_assert_str_eq(
	    json_string_value(at(out, "spec.stopPolicy")), "HoldAndDrain");
	cr_assert_eq(api_local_queue_decode(&back, out, NULL), CU_OK);
	cr_assert_str_eq(back.meta.name, "q");
	cr_assert_str_eq(back.meta.namespace_, "ns");
	cr_assert_str_eq(back.spec.cluster_queue, "cq");
	cr_assert_eq(back.spec.stop_policy, API_STOP_HOLD_AND_DRAIN);
	api_local_queue_dispose(&back);
	api_local_queue_dispose(&lq);
	json_decref(out);
}

/* ---- decode errors --------------------------------------------------------
 */

typedef int (*decode_fn)(const json_t *j, cu_error *err);

#define DECODE_ONLY(K)                                                         \
	static int decode_only_##K(const json_t *j, cu_error *err)             \
	{                                                                      \
		struct api_##K x;                                              \
		int rc = api_##K##_decode(&x, j, err);                         \
                                                                               \
		if (rc == CU_OK)                                               \
			api_##K##_dispose(&x);                                 \
		return rc;                                                     \
	}

DECODE_ONLY(cluster_queue)
DECODE_ONLY(local_queue)
DECODE_ONLY(resource_flavor)
DECODE_ONLY(workload)
DECODE_ONLY(workload_priority_class)
DECODE_ONLY(cohort)
DECODE_ONLY(job)
DECODE_ONLY(jobset)
DECODE_ONLY(namespace)
DECODE_ONLY(priority_class)
DECODE_ONLY(lease)
DECODE_ONLY(event)

/* Load golden, set path to the JSON text `value` (NULL deletes), decode,
 * expect code and a message starting with `prefix`. */
static void expect_error(const char *golden, decode_fn fn, const char *path,
    const char *value, int code, const char *prefix)
{
	json_t *j = load_golden(golden);
	cu_error err;
	int rc;

	if (value != NULL) {
		json_error_t jerr;
		json_t *v = json_loads(value, JSON_DECODE_ANY, &jerr);

		cr_assert_not_null(v, "bad test value %s", value);
		put(j, path, v);
	} else {
		put(j, path, NULL);
	}
	cu_error_clear(&err);
	rc = fn(j, &err);
	cr_assert_eq(rc, code, "%s=%s: rc %d (%s), want %d", path,
	    value ? value : "<deleted>", rc, err.msg, code);
	cr_assert_eq(strncmp(err.msg, prefix, strlen(prefix)), 0,
	    "message \"%s\" does not start with \"%s\"", err.msg, prefix);
	cr_assert_eq(err.code, code);
	json_decref(j);
}

/* A class value outside int32 is refused, never wrapped (2147483648 is
 * not -2147483648). */
Test(model_errors, priority_class_values_outside_int32_are_refused)
{
	expect_error("workloadpriorityclass.json",
	    decode_only_workload_priority_class, "value", "2147483648",
	    CU_ERANGE, "value: Invalid value: 2147483648");
	expect_error("workloadpriorityclass.json",
	    decode_only_workload_priority_class, "value", "-2147483649",
	    CU_ERANGE, "value: Invalid value: -2147483649");
}

Test(model_errors, cluster_queue_bad_quantity_names_full_path)
{
	expect_error("clusterqueue.json", decode_only_cluster_queue,
	    "spec.resourceGroups[0].flavors[1].resources[0].nominalQuota",
	    "\"12 cores\"", CU_EPARSE,
	    "spec.resourceGroups[0].flavors[1].resources[0].nominalQuota: ");
}

Test(model_errors, cluster_queue_enum_type_and_required)
{
	expect_error("clusterqueue.json", decode_only_cluster_queue,
	    "spec.queueingStrategy", "\"Random\"", CU_EINVAL,
	    "spec.queueingStrategy: Unsupported value: \"Random\": supported "
	    "values: \"StrictFIFO\", \"BestEffortFIFO\"");
	/* Any is valid for reclaimWithinCohort, not for withinClusterQueue */
	expect_error("clusterqueue.json", decode_only_cluster_queue,
	    "spec.preemption.withinClusterQueue", "\"Any\"", CU_EINVAL,
	    "spec.preemption.withinClusterQueue: Unsupported value");
	expect_error("clusterqueue.json", decode_only_cluster_queue,
	    "spec.resourceGroups[1].flavors[0].resources[0].name", NULL,
	    CU_EINVAL,
	    "spec.resourceGroups[1].flavors[0].resources[0].name: Required "
	    "value");
	expect_error("clusterqueue.json", decode_only_cluster_queue,
	    "spec.cohortName", "7", CU_EPARSE,
	    "spec.cohortName: Invalid type: expected string, got integer");
	expect_error("clusterqueue.json", decode_only_cluster_queue,
	    "status.conditions[0].lastTransitionTime", NULL, CU_EINVAL,
	    "status.conditions[0].lastTransitionTime: Required value");
	expect_error("clusterqueue.json", decode_only_cluster_queue,
	    "status.pendingWorkloads", "3000000000", CU_ERANGE,
	    "status.pendingWorkloads: Invalid value: 3000000000");
}

Test(model_errors, cluster_queue_flavor_resources_must_match_covered)
{
	expect_error("clusterqueue.json", decode_only_cluster_queue,
	    "spec.resourceGroups[1].coveredResources",
	    "[\"nvidia.com/gpu\", \"cpu\"]", CU_EINVAL,
	    "spec.resourceGroups[1].flavors[0]: Invalid value: flavors must "
	    "have the same number of resources");
}

Test(model_errors, cluster_queue_bad_namespace_selector_names_path)
{
	expect_error("clusterqueue.json", decode_only_cluster_queue,
	    "spec.namespaceSelector",
	    "{\"matchExpressions\": [{\"key\": \"a\", \"operator\": \"In\"}]}",
	    CU_EINVAL, "spec.namespaceSelector.matchExpressions[0]");
}

Test(model_errors, local_queue_errors)
{
	expect_error("localqueue.json", decode_only_local_queue,
	    "spec.stopPolicy", "\"Pause\"", CU_EINVAL,
	    "spec.stopPolicy: Unsupported value: \"Pause\"");
	expect_error("localqueue.json", decode_only_local_queue,
	    "status.conditions[0].status", "\"Maybe\"", CU_EINVAL,
	    "status.conditions[0].status: Unsupported value: \"Maybe\"");
	expect_error("localqueue.json", decode_only_local_queue,
	    "status.flavorsUsage[0].resources[0].total", "\"lots\"", CU_EPARSE,
	    "status.flavorsUsage[0].resources[0].total: ");
}

Test(model_errors, resource_flavor_errors)
{
	expect_error("resourceflavor.json", decode_only_resource_flavor,
	    "spec.nodeTaints[1].effect", NULL, CU_EINVAL,
	    "spec.nodeTaints[1].effect: Required value");
	expect_error("resourceflavor.json", decode_only_resource_flavor,
	    "spec.tolerations[0].operator", "\"Like\"", CU_EINVAL,
	    "spec.tolerations[0].operator: Unsupported value");
	expect_error("resourceflavor.json", decode_only_resource_flavor,
	    "spec.nodeLabels", "[\"a\"]", CU_EPARSE,
	    "spec.nodeLabels: Invalid type: expected object, got array");
}

Test(model_errors, workload_errors)
{
	expect_error("workload.json", decode_only_workload,
	    "spec.podSets[0].template", NULL, CU_EINVAL,
	    "spec.podSets[0].template: Required value");
	expect_error("workload.json", decode_only_workload, "spec.podSets",
	    "[]", CU_EINVAL, "spec.podSets: Invalid value: 0");
	/* The item count is checked before the items: 19 bad items report
	 * the count, not the first item. */
	expect_error("workload.json", decode_only_workload, "spec.podSets",
	    "[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]", CU_EINVAL,
	    "spec.podSets: Too many: 19: must have at most 18 items");
	expect_error("workload.json", decode_only_workload, "spec.podSets",
	    "[{},1]", CU_EINVAL, "spec.podSets[0].template: Required value");
	expect_error("workload.json", decode_only_workload, "spec.podSets",
	    "[1]", CU_EPARSE,
	    "spec.podSets[0]: Invalid type: expected object, got integer");
	expect_error("workload.json", decode_only_workload, "spec", NULL,
	    CU_EINVAL, "spec: Required value");
	expect_error("workload.json", decode_only_workload,
	    "status.admission.podSetAssignments[0].resourceUsage.cpu",
	    "\"3 cores\"", CU_EPARSE,
	    "status.admission.podSetAssignments[0].resourceUsage.cpu: ");
	expect_error("workload.json", decode_only_workload,
	    "status.admission.clusterQueue", NULL, CU_EINVAL,
	    "status.admission.clusterQueue: Required value");
	expect_error("workload.json", decode_only_workload,
	    "spec.priorityClassRef.kind", "\"Priority\"", CU_EINVAL,
	    "spec.priorityClassRef.kind: Unsupported value");
	expect_error("workload.json", decode_only_workload, "spec.priority",
	    NULL, CU_EINVAL, "spec.priority: Required value");
	expect_error("workload.json", decode_only_workload,
	    "status.admissionChecks[0].state", "\"Done\"", CU_EINVAL,
	    "status.admissionChecks[0].state: Unsupported value");
	expect_error("workload.json", decode_only_workload,
	    "status.requeueState.requeueAt", "\"soon\"", CU_EPARSE,
	    "status.requeueState.requeueAt: ");
	expect_error("workload.json", decode_only_workload, "kind", "\"Job\"",
	    CU_EINVAL, "kind: Invalid value: \"Job\": expected \"Workload\"");
	expect_error("workload.json", decode_only_workload, "apiVersion",
	    "\"kueue.x-k8s.io/v1beta1\"", CU_EINVAL,
	    "apiVersion: Invalid value");
}

Test(model_errors, priority_classes_errors)
{
	expect_error("workloadpriorityclass.json",
	    decode_only_workload_priority_class, "value", NULL, CU_EINVAL,
	    "value: Required value");
	expect_error("workloadpriorityclass.json",
	    decode_only_workload_priority_class, "value", "1099511627776",
	    CU_ERANGE, "value: Invalid value");
	expect_error("priorityclass.json", decode_only_priority_class, "value",
	    "\"high\"", CU_EPARSE,
	    "value: Invalid type: expected integer, got string");
	expect_error("priorityclass.json", decode_only_priority_class,
	    "globalDefault", "\"yes\"", CU_EPARSE,
	    "globalDefault: Invalid type: expected boolean");
}

Test(model_errors, cohort_errors)
{
	expect_error("cohort.json", decode_only_cohort,
	    "spec.fairSharing.weight", "\"heavy\"", CU_EPARSE,
	    "spec.fairSharing.weight: ");
	expect_error("cohort.json", decode_only_cohort,
	    "spec.resourceGroups[0].flavors", NULL, CU_EINVAL,
	    "spec.resourceGroups[0].flavors: Required value");
}

Test(model_errors, job_and_jobset_errors)
{
	expect_error("job.json", decode_only_job, "spec.template", NULL,
	    CU_EINVAL, "spec.template: Required value");
	expect_error("job.json", decode_only_job, "spec.parallelism", "\"3\"",
	    CU_EPARSE, "spec.parallelism: Invalid type");
	expect_error("job.json", decode_only_job, "status.conditions[0].type",
	    NULL, CU_EINVAL, "status.conditions[0].type: Required value");
	expect_error("jobset.json", decode_only_jobset,
	    "spec.replicatedJobs[1].name", NULL, CU_EINVAL,
	    "spec.replicatedJobs[1].name: Required value");
	expect_error("jobset.json", decode_only_jobset,
	    "spec.replicatedJobs[0].template.spec.template", NULL, CU_EINVAL,
	    "spec.replicatedJobs[0].template.spec.template: Required value");
	expect_error("jobset.json", decode_only_jobset,
	    "status.replicatedJobsStatus[0].active", NULL, CU_EINVAL,
	    "status.replicatedJobsStatus[0].active: Required value");
}

Test(model_errors, core_kinds_errors)
{
	expect_error("namespace.json", decode_only_namespace,
	    "metadata.labels.kueue-managed", "true", CU_EPARSE,
	    "metadata.labels.kueue-managed: Invalid type: expected string, "
	    "got boolean");
	expect_error("namespace.json", decode_only_namespace,
	    "metadata.creationTimestamp", "\"yesterday\"", CU_EPARSE,
	    "metadata.creationTimestamp: ");
	expect_error("lease.json", decode_only_lease, "spec.renewTime",
	    "\"later\"", CU_EPARSE, "spec.renewTime: ");
	expect_error("event.json", decode_only_event, "involvedObject", NULL,
	    CU_EINVAL, "involvedObject: Required value");
	expect_error("workload.json", decode_only_workload,
	    "metadata.ownerReferences[0].uid", NULL, CU_EINVAL,
	    "metadata.ownerReferences[0].uid: Required value");
}

Test(model_errors, non_object_document_is_rejected)
{
	json_t *a = json_array();
	struct api_job job;
	cu_error err;

	cr_assert_eq(api_job_decode(&job, a, &err), CU_EPARSE);
	cr_assert(
	    strstr(err.msg, "must be a JSON object") != NULL, "%s", err.msg);
	json_decref(a);
}

Test(model_errors, allocation_failures_are_reported_and_leak_free)
{
	json_t *j = load_golden("workload.json");
	uint64_t n;
	int ok = 0, nomem = 0;

	for (n = 1; n < 400; n++) {
		struct api_workload wl;
		json_t *out = NULL;
		cu_error err;
		int rc;

		cu_mem_fail_after(n, false);
		rc = api_workload_decode(&wl, j, &err);
		if (rc == CU_OK) {
			rc = api_workload_encode(&out, &wl, &err);
			api_workload_dispose(&wl);
			json_decref(out);
		}
		cu_mem_fail_after(0, false);
		cr_assert(
		    rc == CU_OK || rc == CU_ENOMEM, "rc %d: %s", rc, err.msg);
		if (rc == CU_ENOMEM)
			nomem++;
		else
			ok++;
	}
	cr_assert_gt(nomem, 10);
	cr_assert_gt(ok, 0);
	json_decref(j);
}

Test(model_conditions, decoded_from_any_object_status)
{
	json_t *j = json_loads(
	    "{\"status\":{\"conditions\":[{\"type\":\"Evicted\",\"status\":"
	    "\"True\",\"reason\":\"PodsReadyTimeout\",\"lastTransitionTime\":"
	    "\"2024-01-02T03:04:05Z\"},{\"type\":\"Admitted\",\"status\":"
	    "\"False\"}]}}",
	    0, NULL);
	struct api_conditions cs;
	const struct api_condition *ev;
	cu_error err;

	cr_assert_eq(api_conditions_decode(j, &cs, &err), CU_OK);
	cr_assert_eq(cs.n, 2);
	ev = api_conditions_find(&cs, "Evicted");
	cr_assert_not_null(ev);
	cr_assert_str_eq(ev->reason, "PodsReadyTimeout");
	cr_assert(ev->has_last_transition);
	cr_assert_eq(ev->last_transition_ns, 1704164645LL * 1000000000LL);
	cr_assert(!api_conditions_true(&cs, "Admitted"));
	cr_assert_null(api_conditions_find(&cs, "Finished"));
	api_conditions_dispose(&cs);
	json_decref(j);
}

Test(model_conditions, absent_status_is_no_conditions_and_bad_ones_fail)
{
	json_t *none = json_loads("{\"metadata\":{}}", 0, NULL);
	json_t *bad = json_loads(
	    "{\"status\":{\"conditions\":[{\"type\":\"Admitted\"}]}}", 0, NULL);
	struct api_conditions cs;
	cu_error err;

	cr_assert_eq(api_conditions_decode(none, &cs, &err), CU_OK);
	cr_assert_eq(cs.n, 0);
	cr_assert_eq(api_conditions_decode(bad, &cs, &err), CU_EINVAL);
	cr_assert_eq(cs.n, 0);
	cr_assert(strstr(err.msg, "status.conditions[0].status") != NULL, "%s",
	    err.msg);
	json_decref(none);
	json_decref(bad);
}

Test(model_meta, object_meta_decoded_from_the_whole_object)
{
	json_t *j = json_loads(
	    "{\"kind\":\"PodTemplate\",\"metadata\":{\"name\":\"p\","
	    "\"namespace\":\"ns\",\"ownerReferences\":[{\"apiVersion\":"
	    "\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\",\"name\":\"w\","
	    "\"uid\":\"u1\"}]}}",
	    0, NULL);
	json_t *bad =
	    json_loads("{\"metadata\":{\"ownerReferences\":[{}]}}", 0, NULL);
	json_t *none = json_loads("{}", 0, NULL);
	struct api_meta m;
	cu_error err;

	cr_assert_eq(api_object_meta_decode(&m, j, &err), CU_OK);
	cr_assert_str_eq(m.namespace_, "ns");
	cr_assert_eq(m.n_owner_refs, 1);
	cr_assert_str_eq(m.owner_refs[0].kind, "Workload");
	cr_assert_str_eq(m.owner_refs[0].name, "w");
	api_meta_dispose(&m);
	cr_assert_eq(api_object_meta_decode(&m, none, &err), CU_OK);
	cr_assert_null(m.name);
	cr_assert_neq(api_object_meta_decode(&m, bad, &err), CU_OK);
	cr_assert_eq(m.n_owner_refs, 0);
	json_decref(j);
	json_decref(bad);
	json_decref(none);
}
