/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/api_labelselector_test.c - api/labelselector: decoding
 * metav1.LabelSelector JSON with Kubernetes' validation and field paths,
 * null versus {}, and encoding back to JSON.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <string.h>

#include "api/labelselector.h"
#include "namespaces/selector.h"

#define PATH "spec.namespaceSelector"

static json_t *js(const char *text)
{
	json_error_t jerr;
	json_t *j = json_loads(text, JSON_DECODE_ANY, &jerr);
	cr_assert_not_null(j, "bad test JSON %s: %s", text, jerr.text);
	return j;
}

static void decode_ok(api_selector *sel, const char *text)
{
	json_t *j = js(text);
	cu_error err;
	cu_error_clear(&err);
	int rc = api_label_selector_decode(sel, j, PATH, &err);
	json_decref(j);
	cr_assert_eq(rc, CU_OK, "decode(%s) = %d: %s", text, rc, err.msg);
}

static void decode_fails(const char *text, int code, const char *msg)
{
	json_t *j = js(text);
	api_selector sel;
	cu_error err;
	cu_error_clear(&err);
	int rc = api_label_selector_decode(&sel, j, PATH, &err);
	json_decref(j);
	cr_assert_eq(rc, code, "decode(%s) = %d: %s", text, rc, err.msg);
	cr_assert_str_eq(err.msg, msg, "decode(%s)", text);
	cr_assert_eq(sel.nreqs, 0);
	cr_assert_null(sel.reqs);
}

static void decode_fails_prefix(const char *text, const char *prefix)
{
	json_t *j = js(text);
	api_selector sel;
	cu_error err;
	cu_error_clear(&err);
	int rc = api_label_selector_decode(&sel, j, PATH, &err);
	json_decref(j);
	cr_assert_neq(rc, CU_OK, "decode(%s) succeeded", text);
	cr_assert(strncmp(err.msg, prefix, strlen(prefix)) == 0,
	    "decode(%s): \"%s\" does not start with \"%s\"", text, err.msg,
	    prefix);
}

Test(api_labelselector, null_matches_nothing_and_empty_matches_all)
{
	static const char *const kv[] = {"a", "b"};
	api_selector sel;
	decode_ok(&sel, "null");
	cr_assert(sel.match_nothing);
	cr_assert_not(ns_selector_matches_pairs(&sel, kv, 1));
	cr_assert_not(ns_selector_matches_pairs(&sel, NULL, 0));
	api_selector_dispose(&sel);

	cr_assert_eq(api_label_selector_decode(&sel, NULL, PATH, NULL), CU_OK);
	cr_assert(sel.match_nothing);

	decode_ok(&sel, "{}");
	cr_assert_not(sel.match_nothing);
	cr_assert_eq(sel.nreqs, 0);
	cr_assert(ns_selector_matches_pairs(&sel, kv, 1));
	cr_assert(ns_selector_matches_pairs(&sel, NULL, 0));

	decode_ok(
	    &sel, "{\"matchLabels\":{},\"matchExpressions\":[],\"other\":1}");
	cr_assert_not(sel.match_nothing);
	cr_assert(ns_selector_matches_pairs(&sel, kv, 1));
	decode_ok(&sel, "{\"matchLabels\":null,\"matchExpressions\":null}");
	cr_assert(ns_selector_matches_pairs(&sel, NULL, 0));
}

Test(api_labelselector, match_labels_and_expressions_combine)
{
	api_selector sel;
	decode_ok(&sel,
	    "{\"matchLabels\":{\"app\":\"web\",\"tier\":\"be\"},"
	    "\"matchExpressions\":["
	    "{\"key\":\"env\",\"operator\":\"In\",\"values\":[\"prod\","
	    "\"qa\"]},"
	    "{\"key\":\"zone\",\"operator\":\"NotIn\",\"values\":[\"x\"]},"
	    "{\"key\":\"team\",\"operator\":\"Exists\"},"
	    "{\"key\":\"skip\",\"operator\":\"DoesNotExist\",\"values\":null}"
	    "]}");
	cr_assert_eq(sel.nreqs, 6);
	static const char *const yes[] = {
	    "app", "web", "tier", "be", "env", "qa", "team", "t1"};
	static const char *const no_team[] = {
	    "app", "web", "tier", "be", "env", "qa"};
	static const char *const skip[] = {
	    "app", "web", "tier", "be", "env", "qa", "team", "t1", "skip", ""};
	static const char *const zone[] = {
	    "app", "web", "tier", "be", "env", "qa", "team", "t1", "zone", "x"};
	cr_assert(ns_selector_matches_pairs(&sel, yes, 4));
	cr_assert_not(ns_selector_matches_pairs(&sel, no_team, 3));
	cr_assert_not(ns_selector_matches_pairs(&sel, skip, 5));
	cr_assert_not(ns_selector_matches_pairs(&sel, zone, 5));
	char *s = api_selector_string(&sel);
	cr_assert_str_eq(s, "app=web,env in (prod,qa),!skip,team,tier=be,"
			    "zone notin (x)");
	cu_free(s);
	api_selector_dispose(&sel);
}

Test(api_labelselector, seed_001_managed_jobs_namespace_selector)
{
	api_selector sel;
	decode_ok(&sel,
	    "{\"matchExpressions\":[{\"key\":\"kubernetes.io/metadata.name\","
	    "\"operator\":\"NotIn\",\"values\":[\"kube-system\","
	    "\"kueue-system\",\"test\"]}]}");
	static const char *const deflt[] = {
	    "kubernetes.io/metadata.name", "default"};
	static const char *const test[] = {
	    "kubernetes.io/metadata.name", "test"};
	cr_assert(ns_selector_matches_pairs(&sel, deflt, 1));
	cr_assert_not(ns_selector_matches_pairs(&sel, test, 1));
	api_selector_dispose(&sel);
}

Test(api_labelselector, in_and_notin_require_values)
{
	decode_fails("{\"matchExpressions\":[{\"key\":\"a\",\"operator\":"
		     "\"Exists\"},{\"key\":\"b\",\"operator\":\"In\"}]}",
	    CU_EINVAL,
	    "spec.namespaceSelector.matchExpressions[1].values: Required "
	    "value: must be specified when `operator` is 'In' or 'NotIn'");
	decode_fails("{\"matchExpressions\":[{\"key\":\"b\",\"operator\":"
		     "\"NotIn\",\"values\":[]}]}",
	    CU_EINVAL,
	    "spec.namespaceSelector.matchExpressions[0].values: Required "
	    "value: must be specified when `operator` is 'In' or 'NotIn'");
}

Test(api_labelselector, exists_forbids_values)
{
	decode_fails("{\"matchExpressions\":[{\"key\":\"b\",\"operator\":"
		     "\"DoesNotExist\",\"values\":[\"x\"]}]}",
	    CU_EINVAL,
	    "spec.namespaceSelector.matchExpressions[0].values: Forbidden: "
	    "may not be specified when `operator` is 'Exists' or "
	    "'DoesNotExist'");
}

Test(api_labelselector, rejects_unknown_or_missing_operator)
{
	decode_fails("{\"matchExpressions\":[{\"key\":\"b\",\"operator\":"
		     "\"Gt\",\"values\":[\"1\"]}]}",
	    CU_EINVAL,
	    "spec.namespaceSelector.matchExpressions[0].operator: Invalid "
	    "value: \"Gt\": not a valid selector operator");
	decode_fails("{\"matchExpressions\":[{\"key\":\"b\"}]}", CU_EINVAL,
	    "spec.namespaceSelector.matchExpressions[0].operator: Invalid "
	    "value: \"\": not a valid selector operator");
	/* Case matters, as in Kubernetes. */
	decode_fails_prefix("{\"matchExpressions\":[{\"key\":\"b\","
			    "\"operator\":\"in\",\"values\":[\"x\"]}]}",
	    "spec.namespaceSelector.matchExpressions[0].operator: Invalid "
	    "value: \"in\"");
}

Test(api_labelselector, operator_is_checked_before_key)
{
	decode_fails_prefix("{\"matchExpressions\":[{\"key\":\"bad key\","
			    "\"operator\":\"Nope\"}]}",
	    "spec.namespaceSelector.matchExpressions[0].operator:");
}

Test(api_labelselector, rejects_invalid_keys_and_values)
{
	decode_fails_prefix("{\"matchExpressions\":[{\"key\":\"bad key\","
			    "\"operator\":\"Exists\"}]}",
	    "spec.namespaceSelector.matchExpressions[0].key: Invalid value: "
	    "\"bad key\": name part must consist of alphanumeric");
	decode_fails_prefix(
	    "{\"matchExpressions\":[{\"operator\":\"Exists\"}]}",
	    "spec.namespaceSelector.matchExpressions[0].key: Invalid value: "
	    "\"\": name part must be non-empty");
	decode_fails_prefix(
	    "{\"matchExpressions\":[{\"key\":\"k\","
	    "\"operator\":\"In\",\"values\":[\"ok\",\"b@d\"]}]}",
	    "spec.namespaceSelector.matchExpressions[0].values[1]: Invalid "
	    "value: \"b@d\": a valid label must be an empty string");
	decode_fails_prefix("{\"matchLabels\":{\"a/b/c\":\"x\"}}",
	    "spec.namespaceSelector.matchLabels: Invalid value: \"a/b/c\": a "
	    "qualified name");
	decode_fails_prefix("{\"matchLabels\":{\"k\":\"-x\"}}",
	    "spec.namespaceSelector.matchLabels: Invalid value: \"-x\": a "
	    "valid label");
	decode_fails_prefix(
	    "{\"matchLabels\":{\"k\":"
	    "\"0123456789012345678901234567890123456789012345678901234567890123"
	    "\"}}",
	    "spec.namespaceSelector.matchLabels: Invalid value: "
	    "\"0123456789");
}

Test(api_labelselector, rejects_wrong_json_types)
{
	decode_fails("[]", CU_EPARSE,
	    "spec.namespaceSelector: Invalid value: array: must be an object");
	decode_fails("{\"matchLabels\":[]}", CU_EPARSE,
	    "spec.namespaceSelector.matchLabels: Invalid value: array: must "
	    "be an object");
	decode_fails("{\"matchLabels\":{\"a\":1}}", CU_EPARSE,
	    "spec.namespaceSelector.matchLabels[a]: Invalid value: number: "
	    "must be a string");
	decode_fails("{\"matchExpressions\":{}}", CU_EPARSE,
	    "spec.namespaceSelector.matchExpressions: Invalid value: object: "
	    "must be an array");
	decode_fails("{\"matchExpressions\":[\"a\"]}", CU_EPARSE,
	    "spec.namespaceSelector.matchExpressions[0]: Invalid value: "
	    "string: must be an object");
	decode_fails("{\"matchExpressions\":[{\"key\":1,\"operator\":"
		     "\"Exists\"}]}",
	    CU_EPARSE,
	    "spec.namespaceSelector.matchExpressions[0].key: Invalid value: "
	    "number: must be a string");
	decode_fails("{\"matchExpressions\":[{\"key\":\"k\",\"operator\":"
		     "true}]}",
	    CU_EPARSE,
	    "spec.namespaceSelector.matchExpressions[0].operator: Invalid "
	    "value: boolean: must be a string");
	decode_fails("{\"matchExpressions\":[{\"key\":\"k\",\"operator\":"
		     "\"In\",\"values\":\"x\"}]}",
	    CU_EPARSE,
	    "spec.namespaceSelector.matchExpressions[0].values: Invalid "
	    "value: string: must be an array");
	decode_fails("{\"matchExpressions\":[{\"key\":\"k\",\"operator\":"
		     "\"In\",\"values\":[\"x\",null]}]}",
	    CU_EPARSE,
	    "spec.namespaceSelector.matchExpressions[0].values[1]: Invalid "
	    "value: null: must be a string");
}

Test(api_labelselector, default_path_is_labelselector)
{
	json_t *j = js("{\"matchExpressions\":[{\"key\":\"k\"}]}");
	api_selector sel;
	cu_error err;
	cr_assert_eq(api_label_selector_decode(&sel, j, NULL, &err), CU_EINVAL);
	cr_assert(
	    strncmp(err.msg, "labelSelector.matchExpressions[0]", 33) == 0,
	    "%s", err.msg);
	json_decref(j);
}

static void assert_roundtrip(const char *text, const char *want)
{
	api_selector sel, back;
	decode_ok(&sel, text);
	json_t *out = NULL;
	cu_error err;
	cr_assert_eq(
	    api_label_selector_encode(&out, &sel, &err), CU_OK, "%s", err.msg);
	char *dumped =
	    json_dumps(out, JSON_SORT_KEYS | JSON_COMPACT | JSON_ENCODE_ANY);
	cr_assert_str_eq(dumped, want);
	cr_assert_eq(api_label_selector_decode(&back, out, PATH, &err), CU_OK);
	char *s1 = api_selector_string(&sel), *s2 = api_selector_string(&back);
	cr_assert_str_eq(s1, s2);
	cr_assert_eq(sel.match_nothing, back.match_nothing);
	cu_free(dumped); /* jansson allocates with malloc() */
	cu_free(s1);
	cu_free(s2);
	json_decref(out);
	api_selector_dispose(&sel);
	api_selector_dispose(&back);
}

Test(api_labelselector, encodes_back_to_json)
{
	assert_roundtrip("null", "null");
	assert_roundtrip("{}", "{}");
	assert_roundtrip("{\"matchLabels\":{\"b\":\"2\",\"a\":\"1\"}}",
	    "{\"matchLabels\":{\"a\":\"1\",\"b\":\"2\"}}");
	assert_roundtrip(
	    "{\"matchExpressions\":[{\"key\":\"e\",\"operator\":\"In\","
	    "\"values\":[\"y\",\"x\"]},{\"key\":\"f\",\"operator\":"
	    "\"DoesNotExist\"}],\"matchLabels\":{\"a\":\"1\"}}",
	    "{\"matchExpressions\":[{\"key\":\"e\",\"operator\":\"In\","
	    "\"values\":[\"x\",\"y\"]},{\"key\":\"f\",\"operator\":"
	    "\"DoesNotExist\"}],\"matchLabels\":{\"a\":\"1\"}}");
}

Test(api_labelselector, encodes_string_only_operators)
{
	api_selector sel;
	cu_error err;
	cr_assert_eq(ns_selector_parse(&sel, "a=1,a==2,b!=3", &err), CU_OK);
	json_t *out = NULL;
	cr_assert_eq(api_label_selector_encode(&out, &sel, &err), CU_OK);
	char *d = json_dumps(out, JSON_SORT_KEYS | JSON_COMPACT);
	cr_assert_str_eq(d, "{\"matchExpressions\":[{\"key\":\"a\","
			    "\"operator\":\"In\",\"values\":[\"2\"]},{\"key\":"
			    "\"b\",\"operator\":\"NotIn\",\"values\":[\"3\"]}],"
			    "\"matchLabels\":{\"a\":\"1\"}}");
	cu_free(d);
	json_decref(out);
	api_selector_dispose(&sel);

	cr_assert_eq(ns_selector_parse(&sel, "a,n>3", &err), CU_OK);
	out = NULL;
	cr_assert_eq(api_label_selector_encode(&out, &sel, &err), CU_EINVAL);
	cr_assert_null(out);
	cr_assert(strstr(err.msg, "\"n\"") != NULL, "%s", err.msg);
	api_selector_dispose(&sel);
}

Test(api_labelselector, survives_allocation_failures)
{
	json_t *j = js("{\"matchLabels\":{\"a\":\"1\"},\"matchExpressions\":"
		       "[{\"key\":\"k\",\"operator\":\"In\",\"values\":[\"x\","
		       "\"y\"]}]}");
	for (uint64_t n = 1; n < 100; n++) {
		api_selector sel;
		cu_error err;
		cu_mem_fail_after(n, false);
		int rc = api_label_selector_decode(&sel, j, PATH, &err);
		cu_mem_fail_after(0, false);
		if (rc == CU_OK) {
			cr_assert_eq(sel.nreqs, 2);
			api_selector_dispose(&sel);
			json_decref(j);
			return;
		}
		cr_assert_eq(rc, CU_ENOMEM);
		cr_assert_eq(sel.nreqs, 0);
	}
	cr_assert_fail("decode never succeeded");
}
