/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/webhook_convert_test.c - webhook/webhook.h conversion: every
 * Kueue kind cueue serves both ways against golden files
 * (tests/data/conversion/<kind>.v1beta1.json <-> .v1beta2.json, lossless
 * round trips), Kueue's one-way mappings (admissionChecks list, Borrow /
 * Preempt, dropped v1beta1-only status), v1beta2-only spec fields kept in
 * the annotation and restored, topology assignment encodings, and the
 * ConversionReview codec with errors that name the field.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "api/json.h"
#include "webhook/webhook.h"

#define V1 "kueue.x-k8s.io/v1beta1"
#define V2 "kueue.x-k8s.io/v1beta2"

static json_t *golden(const char *name)
{
	char path[256];
	json_error_t e;
	json_t *j;

	snprintf(path, sizeof(path), "tests/data/conversion/%s", name);
	j = json_load_file(path, 0, &e);
	cr_assert_not_null(j, "%s: %s", path, e.text);
	return j;
}

static json_t *conv(json_t *in, const char *to)
{
	json_t *out = NULL;
	cu_error err;

	cu_error_clear(&err);
	cr_assert_eq(
	    wh_convert_object(in, to, &out, &err), CU_OK, "%s", err.msg);
	return out;
}

static void assert_json_eq(json_t *got, json_t *want, const char *what)
{
	char *g = NULL, *w = NULL;

	if (api_json_dumps(got, JSON_SORT_KEYS | JSON_INDENT(1), 0, &g, NULL) !=
	    CU_OK)
		g = NULL;
	if (api_json_dumps(
		want, JSON_SORT_KEYS | JSON_INDENT(1), 0, &w, NULL) != CU_OK)
		w = NULL;
	cr_assert(json_equal(got, want), "%s:\n got  %s\n want %s", what, g, w);
	cu_free(g);
	cu_free(w);
}

/* v1beta1 -> v1beta2 gives the v1beta2 golden, and back gives the
 * v1beta1 golden again. */
static void both_ways(const char *base)
{
	char n1[128], n2[128];
	json_t *a, *b, *up, *down, *up2;

	snprintf(n1, sizeof(n1), "%s.v1beta1.json", base);
	snprintf(n2, sizeof(n2), "%s.v1beta2.json", base);
	a = golden(n1);
	b = golden(n2);
	up = conv(a, V2);
	assert_json_eq(up, b, n1);
	down = conv(b, V1);
	assert_json_eq(down, a, n2);
	up2 = conv(down, V2);
	assert_json_eq(up2, b, "round trip");
	json_decref(a);
	json_decref(b);
	json_decref(up);
	json_decref(down);
	json_decref(up2);
}

Test(convert, clusterqueue_both_ways)
{
	both_ways("clusterqueue");
}

Test(convert, localqueue_both_ways)
{
	both_ways("localqueue");
}

Test(convert, workload_both_ways)
{
	both_ways("workload");
}

Test(convert, cohort_both_ways)
{
	both_ways("cohort");
}

Test(convert, resourceflavor_both_ways)
{
	both_ways("resourceflavor");
}

Test(convert, workloadpriorityclass_both_ways)
{
	both_ways("workloadpriorityclass");
}

Test(convert, topology_both_ways)
{
	both_ways("topology");
}

Test(convert, admissioncheck_both_ways)
{
	both_ways("admissioncheck");
}

Test(convert, provisioningrequestconfig_both_ways)
{
	both_ways("provisioningrequestconfig");
}

/* MultiKueueCluster: spec.kubeConfig <-> spec.clusterSource.kubeConfig. */
Test(convert, multikueuecluster_both_ways)
{
	both_ways("multikueuecluster");
}

Test(convert, multikueueconfig_both_ways)
{
	both_ways("multikueueconfig");
}

/* AdmissionCheck's deprecated retryDelayMinutes: dropped going up (Kueue
 * keeps no annotation), so it does not come back; a wrong type is an
 * error naming it. */
Test(convert, admissioncheck_retry_delay_one_way)
{
	json_t *a = golden("admissioncheck-retrydelay.v1beta1.json");
	json_t *b = golden("admissioncheck-retrydelay.v1beta2.json");
	json_t *up = conv(a, V2), *down, *out = NULL;
	cu_error err;

	assert_json_eq(up, b, "up");
	down = conv(up, V1);
	cr_assert_null(json_object_get(
	    json_object_get(down, "spec"), "retryDelayMinutes"));
	cr_assert_null(json_object_get(down, "metadata") != NULL
			   ? json_object_get(json_object_get(down, "metadata"),
				 "annotations")
			   : NULL);
	json_object_set_new(
	    json_object_get(a, "spec"), "retryDelayMinutes", json_string("15"));
	cu_error_clear(&err);
	cr_assert_eq(wh_convert_object(a, V2, &out, &err), CU_EPARSE);
	cr_assert_null(out);
	cr_assert_str_eq(err.msg, "spec.retryDelayMinutes: Invalid type: "
				  "expected integer, got string");
	json_decref(a);
	json_decref(b);
	json_decref(up);
	json_decref(down);
}

/* Kueue's one-way mappings: the list becomes a strategy, the deprecated
 * fungibility values become MayStopSearch, v1beta1-only status goes. */
Test(convert, clusterqueue_deprecated_fields_one_way)
{
	json_t *a = golden("clusterqueue-deprecated.v1beta1.json");
	json_t *b = golden("clusterqueue-deprecated.v1beta2.json");
	json_t *up = conv(a, V2), *down;

	assert_json_eq(up, b, "up");
	down = conv(up, V1);
	cr_assert_str_eq(json_string_value(json_object_get(
			     json_object_get(down, "spec"), "cohort")),
	    "all");
	cr_assert_null(
	    json_object_get(json_object_get(down, "spec"), "admissionChecks"));
	cr_assert_not_null(json_object_get(
	    json_object_get(down, "spec"), "admissionChecksStrategy"));
	json_decref(a);
	json_decref(b);
	json_decref(up);
	json_decref(down);
}

/* v1beta2-only spec fields survive v1beta2 -> v1beta1 -> v1beta2 through
 * the annotation; status-only ones are dropped, as Kueue's; the
 * topology slices read back as one compact slice. */
Test(convert, workload_v1beta2_only_fields)
{
	json_t *b = golden("workload-new.v1beta2.json");
	json_t *a = golden("workload-new.v1beta1.json");
	json_t *down = conv(b, V1), *up, *ta, *want;

	assert_json_eq(down, a, "down");
	up = conv(down, V2);
	assert_json_eq(json_object_get(up, "spec"), json_object_get(b, "spec"),
	    "spec after the round trip");
	assert_json_eq(json_object_get(up, "metadata"),
	    json_object_get(b, "metadata"), "metadata (annotation removed)");
	cr_assert_null(
	    json_object_get(json_object_get(up, "status"), "preemptionGates"));
	ta = json_object_get(
	    json_array_get(
		json_object_get(
		    json_object_get(json_object_get(up, "status"), "admission"),
		    "podSetAssignments"),
		0),
	    "topologyAssignment");
	want = json_pack("{s[s]s[{sis[{s{sss[ss]}}]s{si}}]}", "levels",
	    "kubernetes.io/hostname", "slices", "domainCount", 2,
	    "valuesPerLevel", "individual", "prefix", "n", "roots", "1", "2",
	    "podCounts", "universal", 1);
	assert_json_eq(ta, want, "topology");
	json_decref(want);
	json_decref(a);
	json_decref(b);
	json_decref(down);
	json_decref(up);
}

Test(convert, clusterqueue_concurrent_admission_policy_kept)
{
	json_t *b = json_pack("{sssss{ss}s{sss{s{ss}}}}", "apiVersion", V2,
	    "kind", "ClusterQueue", "metadata", "name", "cq", "spec",
	    "cohortName", "c", "concurrentAdmissionPolicy", "migration", "mode",
	    "Enabled");
	json_t *down = conv(b, V1), *up;

	cr_assert_null(json_object_get(
	    json_object_get(down, "spec"), "concurrentAdmissionPolicy"));
	cr_assert_not_null(json_object_get(
	    json_object_get(json_object_get(down, "metadata"), "annotations"),
	    WH_CONVERT_ANNOTATION));
	up = conv(down, V2);
	assert_json_eq(up, b, "round trip");
	json_decref(b);
	json_decref(down);
	json_decref(up);
}

/* Prefix and suffix never overlap in the shortest value ({"ababa",
 * "aba"}), and equal values are universal. */
Test(convert, topology_affixes)
{
	json_t *w =
	    json_pack("{sssss{ss}s{s{s[{s{s[s]s[{s[s]si}{s[s]si}]}}]}}}",
		"apiVersion", V1, "kind", "Workload", "metadata", "name", "w",
		"status", "admission", "podSetAssignments",
		"topologyAssignment", "levels", "h", "domains", "values",
		"ababa", "count", 1, "values", "aba", "count", 1);
	json_t *up = conv(w, V2), *down, *ind;

	ind = json_object_get(
	    json_array_get(
		json_object_get(
		    json_array_get(
			json_object_get(
			    json_object_get(
				json_array_get(
				    json_object_get(
					json_object_get(
					    json_object_get(up, "status"),
					    "admission"),
					"podSetAssignments"),
				    0),
				"topologyAssignment"),
			    "slices"),
			0),
		    "valuesPerLevel"),
		0),
	    "individual");
	cr_assert_not_null(ind);
	/* "aba" is both the common prefix and suffix: only one is kept. */
	cr_assert_null(json_object_get(ind, "prefix"));
	cr_assert_str_eq(api_json_str(ind, "suffix"), "aba");
	down = conv(up, V1);
	assert_json_eq(down, w, "round trip");
	json_decref(w);
	json_decref(up);
	json_decref(down);
}

static void assert_fails(json_t *in, const char *to, const char *msg)
{
	json_t *out = NULL;
	cu_error err;

	cu_error_clear(&err);
	cr_assert_neq(wh_convert_object(in, to, &out, &err), CU_OK);
	cr_assert_null(out);
	cr_assert_str_eq(err.msg, msg);
	json_decref(in);
}

Test(convert, errors_name_the_field)
{
	assert_fails(json_pack("{ssss}", "apiVersion",
			 "kueue.x-k8s.io/v1alpha1", "kind", "ClusterQueue"),
	    V2,
	    "apiVersion: Unsupported value: \"kueue.x-k8s.io/v1alpha1\": "
	    "supported values: \"kueue.x-k8s.io/v1beta1\", "
	    "\"kueue.x-k8s.io/v1beta2\"");
	assert_fails(json_pack("{ssss}", "apiVersion", V1, "kind", "Job"), V2,
	    "kind: Unsupported value: \"Job\": not a kind of "
	    "kueue.x-k8s.io/v1beta2 cueue serves");
	assert_fails(json_pack("{sssss{si}}", "apiVersion", V1, "kind",
			 "ClusterQueue", "spec", "cohort", 3),
	    V2, "spec.cohort: Invalid type: expected string, got integer");
	assert_fails(json_pack("{sssss[]}", "apiVersion", V1, "kind",
			 "LocalQueue", "status"),
	    V2, "status: Invalid type: expected object, got array");
	assert_fails(json_pack("{sssss{s{s[{s{s[s]s[{s[]si}]}}]}}}",
			 "apiVersion", V1, "kind", "Workload", "status",
			 "admission", "podSetAssignments", "topologyAssignment",
			 "levels", "h", "domains", "values", "count", 1),
	    V2,
	    "status.admission.podSetAssignments[0].topologyAssignment."
	    "domains[0].values: Invalid value: must have one value per "
	    "level (1)");
	assert_fails(json_pack("{sssss{s{s[{s{s[s]s[{sis[]s{si}}]}}]}}}",
			 "apiVersion", V2, "kind", "Workload", "status",
			 "admission", "podSetAssignments", "topologyAssignment",
			 "levels", "h", "slices", "domainCount", 1,
			 "valuesPerLevel", "podCounts", "universal", 1),
	    V1,
	    "status.admission.podSetAssignments[0].topologyAssignment."
	    "slices[0].valuesPerLevel: Invalid value: must have one entry "
	    "per level (1)");
}

/* ---- the ConversionReview --------------------------------------------- */

static json_t *serve(const char *body, int *status)
{
	char *out = NULL;
	size_t len = 0;
	json_t *j;
	cu_error err;

	cu_error_clear(&err);
	cr_assert_eq(
	    wh_convert_serve(body, strlen(body), status, &out, &len, &err),
	    CU_OK);
	j = json_loadb(out, len, 0, NULL);
	cr_assert_not_null(j);
	cu_free(out);
	return j;
}

Test(convert, review_converts_every_object)
{
	int status = 0;
	json_t *r = serve(
	    "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":"
	    "\"ConversionReview\",\"request\":{\"uid\":\"u-1\","
	    "\"desiredAPIVersion\":\"kueue.x-k8s.io/v1beta1\",\"objects\":["
	    "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"
	    "\"ClusterQueue\",\"metadata\":{\"name\":\"a\"},\"spec\":{"
	    "\"cohortName\":\"c\"}},{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\","
	    "\"kind\":\"LocalQueue\",\"metadata\":{\"name\":\"q\"}}]}}",
	    &status);
	json_t *resp = json_object_get(r, "response");
	json_t *objs = json_object_get(resp, "convertedObjects");

	cr_assert_eq(status, 200);
	cr_assert_str_eq(api_json_str(r, "kind"), "ConversionReview");
	cr_assert_str_eq(api_json_str(resp, "uid"), "u-1");
	cr_assert_str_eq(
	    api_json_str(json_object_get(resp, "result"), "status"), "Success");
	cr_assert_eq(json_array_size(objs), 2);
	cr_assert_str_eq(
	    api_json_str(json_array_get(objs, 0), "apiVersion"), V1);
	cr_assert_str_eq(
	    api_json_str(
		json_object_get(json_array_get(objs, 0), "spec"), "cohort"),
	    "c");
	cr_assert_str_eq(
	    api_json_str(json_array_get(objs, 1), "apiVersion"), V1);
	json_decref(r);
}

static void review_fails(const char *body, int want_status, const char *msg)
{
	int status = 0;
	json_t *r = serve(body, &status);
	json_t *res = json_object_get(json_object_get(r, "response"), "result");

	cr_assert_eq(status, want_status, "%s", body);
	cr_assert_str_eq(api_json_str(res, "status"), "Failure");
	cr_assert_str_eq(api_json_str(res, "message"), msg);
	cr_assert_eq(json_array_size(json_object_get(
			 json_object_get(r, "response"), "convertedObjects")),
	    0);
	json_decref(r);
}

Test(convert, review_errors_name_the_field)
{
	review_fails("nope", 400,
	    "request body: Invalid value: not JSON: '[' or '{' expected near "
	    "'nope'");
	review_fails(
	    "{\"apiVersion\":\"apiextensions.k8s.io/v1beta1\",\"kind\":"
	    "\"ConversionReview\"}",
	    400,
	    "apiVersion: Unsupported value: \"apiextensions.k8s.io/v1beta1\": "
	    "supported values: \"apiextensions.k8s.io/v1\"");
	review_fails("{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":"
		     "\"ConversionReview\"}",
	    400, "request: Required value");
	review_fails("{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":"
		     "\"ConversionReview\",\"request\":{\"uid\":\"u\"}}",
	    400, "request.desiredAPIVersion: Required value");
	review_fails("{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":"
		     "\"ConversionReview\",\"request\":{\"uid\":\"u\","
		     "\"desiredAPIVersion\":\"kueue.x-k8s.io/v1beta2\","
		     "\"objects\":{}}}",
	    400, "request.objects: Invalid type: expected array, got object");
	review_fails("{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":"
		     "\"ConversionReview\",\"request\":{\"uid\":\"u\","
		     "\"desiredAPIVersion\":\"kueue.x-k8s.io/v1beta2\","
		     "\"objects\":[{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\","
		     "\"kind\":\"Workload\"},{\"apiVersion\":\"kueue.x-k8s.io/"
		     "v1beta1\",\"kind\":\"Workload\",\"spec\":{"
		     "\"priorityClassName\":1}}]}}",
	    200,
	    "request.objects[1].spec.priorityClassName: Invalid type: "
	    "expected string, got integer");
}
