/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/reconcile_elastic_test.c - Kueue's elastic jobs
 * (reconcile/elastic.c): the count comparison table (same, down, up,
 * mixed, other pod sets), the in-place count patch of a scale-down (only
 * for a scale-down, the Workload's other fields kept, under its
 * resourceVersion), the elastic-job opt-in ("true" only) and a slice's
 * annotations (first slice, replacement slice carrying the origin) and
 * the elastic ungater's table (which gated pods fit the granted count).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "reconcile/reconcile.h"

Test(reconcile_elastic, compare_table)
{
	static const struct rec_elastic_count w2[] = {{"a", 3}, {"b", 2}};
	static const struct {
		struct rec_elastic_count job[2];
		size_t nj;
		enum rec_elastic_change want;
	} rows[] = {
	    {{{"a", 3}, {"b", 2}}, 2, REC_ELASTIC_SAME},
	    {{{"b", 2}, {"a", 3}}, 2, REC_ELASTIC_SAME}, /* by name */
	    {{{"a", 1}, {"b", 2}}, 2, REC_ELASTIC_DOWN},
	    {{{"a", 1}, {"b", 0}}, 2, REC_ELASTIC_DOWN},
	    {{{"a", 5}, {"b", 2}}, 2, REC_ELASTIC_UP},
	    {{{"a", 5}, {"b", 1}}, 2, REC_ELASTIC_MIXED},
	    {{{"a", 3}, {"c", 2}}, 2, REC_ELASTIC_INCOMPATIBLE},
	    {{{"a", 3}}, 1, REC_ELASTIC_INCOMPATIBLE},
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		cr_expect_eq(
		    rec_elastic_compare(rows[i].job, rows[i].nj, w2, 2),
		    rows[i].want, "row %zu", i);
}

Test(reconcile_elastic, opt_in_is_true_only)
{
	static const char *vals[] = {"true", "True", "false", "", NULL};
	size_t i;

	for (i = 0; i < 5; i++) {
		struct api_meta m;
		cu_error err;

		memset(&m, 0, sizeof(m));
		if (vals[i] != NULL)
			cr_assert_eq(api_strmap_set(&m.annotations,
					 REC_ELASTIC_JOB, vals[i], &err),
			    CU_OK);
		cr_expect_eq(rec_elastic_job(&m), i == 0, "value %s", vals[i]);
		api_strmap_dispose(&m.annotations);
	}
}

/* A Job of parallelism p and its Workload for `count` pods. */
static void fixtures(
    int p, int count, struct api_job *job, struct api_workload *wl)
{
	const char *tpl = "{\"spec\":{\"containers\":[{\"name\":\"c\","
			  "\"image\":\"i\",\"resources\":{\"requests\":{"
			  "\"cpu\":\"1\"}}}],\"restartPolicy\":\"Never\"}}";
	json_t *t = json_loads(tpl, 0, NULL);
	json_t *jd = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:i, s:O}}",
	    "apiVersion", "batch/v1", "kind", "Job", "metadata", "name", "el",
	    "namespace", "team", "uid", "j1", "spec", "parallelism", p,
	    "template", t);
	json_t *wd = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:s}, "
			       "s:{s:s, s:[{s:s, s:i, s:O}]}}",
	    "apiVersion", "kueue.x-k8s.io/v1beta2", "kind", "Workload",
	    "metadata", "name", "wl", "namespace", "team", "uid", "w1",
	    "resourceVersion", "9", "spec", "queueName", "main", "podSets",
	    "name", "main", "count", count, "template", t);
	cu_error err;

	cr_assert_not_null(jd);
	cr_assert_not_null(wd);
	cr_assert_eq(api_job_decode(job, jd, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(api_workload_decode(wl, wd, &err), CU_OK, "%s", err.msg);
	json_decref(t);
	json_decref(jd);
	json_decref(wd);
}

Test(reconcile_elastic, scale_down_patch)
{
	static const struct {
		int p, count;
		int want; /* -1: no patch */
	} rows[] = {{1, 3, 1}, {3, 3, -1}, {5, 3, -1}, {0, 2, 0}};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct api_job job;
		struct api_workload wl;
		struct rec_job j = {0};
		json_t *patch = NULL, *ps;
		cu_error err = {0};

		fixtures(rows[i].p, rows[i].count, &job, &wl);
		j.kind = REC_JOB_BATCH;
		j.job = &job;
		cr_assert_eq(
		    rec_elastic_scale_down_patch(&j, &wl, &patch, &err), CU_OK,
		    "%s", err.msg);
		if (rows[i].want < 0) {
			cr_expect_null(patch, "row %zu", i);
		} else {
			cr_assert_not_null(patch, "row %zu", i);
			cr_expect_str_eq(json_string_value(json_object_get(
					     json_object_get(patch, "metadata"),
					     "resourceVersion")),
			    "9");
			ps = json_object_get(
			    json_object_get(patch, "spec"), "podSets");
			cr_assert_eq(json_array_size(ps), 1);
			cr_expect_eq(json_integer_value(json_object_get(
					 json_array_get(ps, 0), "count")),
			    rows[i].want, "row %zu", i);
			cr_expect_not_null(
			    json_object_get(json_array_get(ps, 0), "template"));
		}
		json_decref(patch);
		api_job_dispose(&job);
		api_workload_dispose(&wl);
	}
}

static const char *ann(const json_t *w, const char *k)
{
	return json_string_value(json_object_get(
	    json_object_get(json_object_get(w, "metadata"), "annotations"), k));
}

Test(reconcile_elastic, slice_annotations)
{
	json_t *first = json_pack("{s:{s:s}}", "metadata", "name", "wl-a");
	json_t *next = json_pack("{s:{s:s}}", "metadata", "name", "wl-b");
	struct api_workload old;
	json_t *od = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:{s:s}}, "
			       "s:{s:[{s:s, s:i, s:{s:{s:[]}}}]}}",
	    "apiVersion", "kueue.x-k8s.io/v1beta2", "kind", "Workload",
	    "metadata", "name", "wl-a", "namespace", "team", "uid", "w1",
	    "annotations", REC_WORKLOAD_SLICE_NAME, "wl-origin", "spec",
	    "podSets", "name", "main", "count", 1, "template", "spec",
	    "containers");
	cu_error err = {0};

	cr_assert_eq(
	    rec_elastic_slice_annotations(NULL, "wl-a", first, &err), CU_OK);
	cr_expect_str_eq(ann(first, REC_ELASTIC_JOB), "true");
	cr_expect_str_eq(ann(first, REC_WORKLOAD_SLICE_NAME), "wl-a");
	cr_expect_null(ann(first, REC_WORKLOAD_SLICE_REPLACEMENT_FOR));
	cr_assert_eq(api_workload_decode(&old, od, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(
	    rec_elastic_slice_annotations(&old, "wl-b", next, &err), CU_OK);
	cr_expect_str_eq(ann(next, REC_WORKLOAD_SLICE_NAME), "wl-origin");
	cr_expect_str_eq(
	    ann(next, REC_WORKLOAD_SLICE_REPLACEMENT_FOR), "team/wl-a");
	api_workload_dispose(&old);
	json_decref(od);
	json_decref(first);
	json_decref(next);
}

Test(reconcile_elastic, ungate_table)
{
	/* g: gated, t: terminated; want: the pods ungated */
	static const struct {
		const char *pods;
		int32_t granted;
		const char *want;
	} rows[] = {
	    {"ggggg", 3, "111--"}, /* first admission: up to the count */
	    {"uuggg", 2, "-----"}, /* scaled up, new slice waiting */
	    {"uuggg", 5, "--111"}, /* new slice admitted */
	    {"uuggg", 4, "--11-"}, /* partial */
	    {"uuuuu", 3, "-----"}, /* already beyond (scale-down): none */
	    {"tuggg", 2, "--1--"}, /* a terminated pod counts for nothing */
	    {"uTggg", 3, "--11-"}, /* nor a terminated gated one */
	    {"ggg", 0, "---"},	   /* no admitted slice */
	    {"", 3, ""},	   /* no pods */
	};
	size_t i, k;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		size_t n = strlen(rows[i].pods), want = 0;
		struct rec_egate_pod pods[8];
		bool ungate[8];

		for (k = 0; k < n; k++) {
			char ch = rows[i].pods[k];

			pods[k].gated = ch == 'g' || ch == 'T';
			pods[k].terminated = ch == 't' || ch == 'T';
			want += rows[i].want[k] == '1';
		}
		cr_expect_eq(
		    rec_elastic_ungate(pods, n, rows[i].granted, ungate), want,
		    "row %zu count", i);
		for (k = 0; k < n; k++)
			cr_expect_eq(ungate[k], rows[i].want[k] == '1',
			    "row %zu pod %zu", i, k);
	}
}
