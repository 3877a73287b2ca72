/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/namespaces_selector_test.c - namespaces/selector: the label
 * selector grammar, validation messages, matching of every operator
 * (absent keys included), canonical strings, and field selectors.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "namespaces/selector.h"

#define NPAIRS(kv) (sizeof(kv) / sizeof((kv)[0]) / 2)

static void parse_ok(api_selector *sel, const char *s)
{
	cu_error err;
	cu_error_clear(&err);
	int rc = ns_selector_parse(sel, s, &err);
	cr_assert_eq(rc, CU_OK, "parse(\"%s\") = %d: %s", s, rc, err.msg);
}

/* Parse s, expect CU_EPARSE with exactly `msg`. */
static void parse_fails(const char *s, const char *msg)
{
	api_selector sel;
	cu_error err;
	cu_error_clear(&err);
	int rc = ns_selector_parse(&sel, s, &err);
	cr_assert_eq(rc, CU_EPARSE, "parse(\"%s\") = %d", s, rc);
	cr_assert_eq(err.code, CU_EPARSE);
	cr_assert_str_eq(err.msg, msg, "parse(\"%s\"): got \"%s\"", s, err.msg);
	cr_assert_eq(sel.nreqs, 0);
	cr_assert_null(sel.reqs);
}

/* Parse s, expect CU_EPARSE with a message containing `part`. */
static void parse_fails_with(const char *s, const char *part)
{
	api_selector sel;
	cu_error err;
	cu_error_clear(&err);
	int rc = ns_selector_parse(&sel, s, &err);
	cr_assert_eq(rc, CU_EPARSE, "parse(\"%.80s\") = %d", s, rc);
	cr_assert(strstr(err.msg, part) != NULL, "parse(\"%.80s\"): \"%s\"", s,
	    err.msg);
}

static bool sel_matches(const char *s, const char *const *kv, size_t n)
{
	api_selector sel;
	parse_ok(&sel, s);
	bool m = ns_selector_matches_pairs(&sel, kv, n);
	api_selector_dispose(&sel);
	return m;
}

static void assert_canonical(const char *in, const char *want)
{
	api_selector sel;
	parse_ok(&sel, in);
	char *s = api_selector_string(&sel);
	cr_assert_not_null(s);
	cr_assert_str_eq(s, want, "canonical(\"%s\")", in);
	/* The canonical form parses back to itself. */
	api_selector again;
	parse_ok(&again, s);
	char *s2 = api_selector_string(&again);
	cr_assert_str_eq(s2, want);
	cu_free(s);
	cu_free(s2);
	api_selector_dispose(&sel);
	api_selector_dispose(&again);
}

Test(api_selector, empty_string_matches_everything)
{
	static const char *const kv[] = {"a", "b"};
	cr_assert(sel_matches("", kv, 1));
	cr_assert(sel_matches("", NULL, 0));
	cr_assert(sel_matches("   ", kv, 1));
	api_selector sel;
	api_selector_init(&sel);
	cr_assert(ns_selector_matches_pairs(&sel, kv, 1));
	sel.match_nothing = true;
	cr_assert_not(ns_selector_matches_pairs(&sel, kv, 1));
	cr_assert_not(ns_selector_matches_pairs(&sel, NULL, 0));
}

Test(api_selector, equality_operators_need_the_key)
{
	static const char *const prod[] = {"env", "prod", "tier", "web"};
	static const char *const dev[] = {"env", "dev"};
	static const char *const none[] = {"tier", "web"};
	for (int i = 0; i < 2; i++) {
		const char *s = i ? "env==prod" : "env=prod";
		cr_assert(sel_matches(s, prod, NPAIRS(prod)));
		cr_assert_not(sel_matches(s, dev, NPAIRS(dev)));
		cr_assert_not(sel_matches(s, none, NPAIRS(none)));
	}
	cr_assert(sel_matches("env in (dev,prod)", prod, NPAIRS(prod)));
	cr_assert(sel_matches("env in (dev,prod)", dev, NPAIRS(dev)));
	cr_assert_not(sel_matches("env in (qa)", dev, NPAIRS(dev)));
	cr_assert_not(sel_matches("env in (dev,prod)", none, NPAIRS(none)));
}

Test(api_selector, negative_operators_match_absent_keys)
{
	static const char *const prod[] = {"env", "prod"};
	static const char *const dev[] = {"env", "dev"};
	static const char *const none[] = {"tier", "web"};
	cr_assert_not(sel_matches("env!=prod", prod, NPAIRS(prod)));
	cr_assert(sel_matches("env!=prod", dev, NPAIRS(dev)));
	cr_assert(sel_matches("env!=prod", none, NPAIRS(none)));
	cr_assert_not(sel_matches("env notin (prod,qa)", prod, NPAIRS(prod)));
	cr_assert(sel_matches("env notin (prod,qa)", dev, NPAIRS(dev)));
	cr_assert(sel_matches("env notin (prod,qa)", none, NPAIRS(none)));
	cr_assert(sel_matches("env notin (prod)", NULL, 0));
}

Test(api_selector, existence_operators)
{
	static const char *const empty_val[] = {"skip", ""};
	static const char *const none[] = {"tier", "web"};
	cr_assert(sel_matches("skip", empty_val, NPAIRS(empty_val)));
	cr_assert_not(sel_matches("skip", none, NPAIRS(none)));
	cr_assert_not(sel_matches("!skip", empty_val, NPAIRS(empty_val)));
	cr_assert(sel_matches("!skip", none, NPAIRS(none)));
	cr_assert(sel_matches("!skip", NULL, 0));
}

Test(api_selector, gt_lt_compare_integers_of_present_keys)
{
	static const char *const four[] = {"n", "4"};
	static const char *const three[] = {"n", "3"};
	static const char *const neg[] = {"n", "-5"};
	static const char *const word[] = {"n", "abc"};
	static const char *const huge[] = {"n", "99999999999999999999"};
	cr_assert(sel_matches("n>3", four, 1));
	cr_assert_not(sel_matches("n>3", three, 1));
	cr_assert_not(sel_matches("n>3", NULL, 0));
	cr_assert_not(sel_matches("n>3", word, 1));
	cr_assert_not(sel_matches("n>3", huge, 1));
	cr_assert(sel_matches("n<4", three, 1));
	cr_assert(sel_matches("n<4", neg, 1));
	cr_assert_not(sel_matches("n<4", four, 1));
	cr_assert_not(sel_matches("n<4", NULL, 0));
}

Test(api_selector, empty_values_are_values)
{
	static const char *const blank[] = {"x", ""};
	static const char *const a[] = {"x", "a"};
	cr_assert(sel_matches("x in ()", blank, 1));
	cr_assert_not(sel_matches("x in ()", a, 1));
	cr_assert_not(sel_matches("x in ()", NULL, 0));
	cr_assert(sel_matches("x=", blank, 1));
	cr_assert_not(sel_matches("x=", a, 1));
	cr_assert(sel_matches("x in (,a)", blank, 1));
	cr_assert(sel_matches("x in (,a)", a, 1));
	cr_assert(sel_matches("x in (a,)", blank, 1));
	cr_assert(sel_matches("x!=,y", (const char *const[]){"y", "1"}, 1));
}

Test(api_selector, conjunction_of_requirements)
{
	static const char *const kv[] = {
	    "env", "prod", "tier", "web", "n", "10"};
	const char *s = "env in (prod),tier,!skip,n>9,x!=y";
	cr_assert(sel_matches(s, kv, NPAIRS(kv)));
	cr_assert_not(sel_matches("env in (prod),tier,n>10", kv, NPAIRS(kv)));
}

Test(api_selector, seed_001_namespace_gate_selector)
{
	static const char *const vals[] = {
	    "kube-system", "kueue-system", "test"};
	static const char *const deflt[] = {
	    "kubernetes.io/metadata.name", "default"};
	static const char *const test[] = {
	    "kubernetes.io/metadata.name", "test"};
	api_selector sel;
	api_selector_init(&sel);
	cr_assert_eq(api_selector_add(&sel, "kubernetes.io/metadata.name",
			 API_SEL_OP_NOT_IN, vals, 3,
			 "managedJobsNamespaceSelector", NULL),
	    CU_OK);
	cr_assert(ns_selector_matches_pairs(&sel, deflt, 1));
	cr_assert_not(ns_selector_matches_pairs(&sel, test, 1));
	char *s = api_selector_string(&sel);
	cr_assert_str_eq(s,
	    "kubernetes.io/metadata.name notin (kube-system,kueue-system,"
	    "test)");
	cu_free(s);
	api_selector_dispose(&sel);

	const char *str = "kubernetes.io/metadata.name notin "
			  "(kube-system,kueue-system,test)";
	cr_assert(sel_matches(str, deflt, 1));
	cr_assert_not(sel_matches(str, test, 1));
}

Test(api_selector, whitespace_separates_tokens)
{
	static const char *const kv[] = {"env", "a", "tier", "x"};
	cr_assert(sel_matches("  env  in  ( a , b ) ,\ttier\n", kv, 2));
	cr_assert(sel_matches("env = a , tier != y", kv, 2));
	cr_assert(sel_matches("env\r\n==\ta", kv, 2));
}

Test(api_selector, keywords_are_identifiers_outside_operator_position)
{
	static const char *const kv[] = {"in", "notin"};
	cr_assert(sel_matches("in in (notin)", kv, 1));
	cr_assert(sel_matches(
	    "notin=notin", (const char *const[]){"notin", "notin"}, 1));
	assert_canonical("in in (notin)", "in in (notin)");
}

Test(api_selector, canonical_string_sorts_by_key)
{
	assert_canonical("z=1,a in (y,x),!b,c,d!=e,f==g,n>3,m<5",
	    "a in (x,y),!b,c,d!=e,f==g,m<5,n>3,z=1");
	assert_canonical("", "");
	assert_canonical("x in (b,a,b)", "x in (a,b)");
	assert_canonical("x in ()", "x in ()");
	assert_canonical("x notin (,a)", "x notin (,a)");
	assert_canonical("x=", "x=");
	assert_canonical("  k8s.io/app  ==  v1  ", "k8s.io/app==v1");
}

Test(api_selector, canonical_string_is_stable_for_repeated_keys)
{
	assert_canonical("a=2,b,a=1", "a=2,a=1,b");
}

Test(api_selector, rejects_missing_values_and_operators)
{
	parse_fails(
	    "env in", "unable to parse requirement: found '', expected: '('");
	parse_fails("in (a)", "unable to parse requirement: found '(', "
			      "expected: in, notin, =, ==, !=, gt, lt");
	parse_fails("a b", "unable to parse requirement: found 'b', "
			   "expected: in, notin, =, ==, !=, gt, lt");
	parse_fails("!", "unable to parse requirement: found '', expected: "
			 "identifier");
	parse_fails("x=(y)", "unable to parse requirement: found '(', "
			     "expected: identifier");
	parse_fails("a in (b",
	    "unable to parse requirement: found '', expected: ',' or ')'");
	parse_fails("a in (=)", "unable to parse requirement: found '=', "
				"expected: ',', ')' or identifier");
	parse_fails("a in (b c)",
	    "unable to parse requirement: found 'c', expected: ',' or ')'");
	parse_fails("a notin b",
	    "unable to parse requirement: found 'b', expected: '('");
	parse_fails("a=b=c", "found '=', expected: ',' or 'end of string'");
}

Test(api_selector, rejects_misplaced_separators)
{
	parse_fails("a,", "found '', expected: identifier after ','");
	parse_fails("a,,b", "found ',', expected: identifier after ','");
	parse_fails(
	    ",a", "found ',', expected: !, identifier, or 'end of string'");
	parse_fails(
	    "(a)", "found '(', expected: !, identifier, or 'end of string'");
	parse_fails("a=b c", "found 'c', expected: ',' or 'end of string'");
	parse_fails("!a=b", "found '=', expected: ',' or 'end of string'");
	parse_fails("!!a",
	    "unable to parse requirement: found '!', expected: identifier");
}

Test(api_selector, rejects_invalid_keys)
{
	char key[80];
	memset(key, 'k', 64);
	key[64] = '\0';
	parse_fails_with(key, "name part must be no more than 63 characters");
	memset(key, 'k', 63);
	key[63] = '\0';
	api_selector sel;
	parse_ok(&sel, key);
	api_selector_dispose(&sel);

	parse_fails_with("-a", "invalid label key \"-a\": name part must "
			       "consist of alphanumeric characters");
	parse_fails_with("a$", "invalid label key \"a$\"");
	parse_fails_with("/a=b", "prefix part must be non-empty");
	parse_fails_with("a/=b", "name part must be non-empty");
	parse_fails_with("Example.com/a", "prefix part a lowercase RFC 1123");
	parse_fails_with("a/b/c", "a qualified name must consist of");
	parse_fails_with("a..b/c", "prefix part a lowercase RFC 1123");
	parse_fails_with("-a.com/c", "prefix part a lowercase RFC 1123");

	char longprefix[300];
	memset(longprefix, 'p', 254);
	memcpy(longprefix + 254, "/a", 3);
	parse_fails_with(longprefix, "prefix part must be no more than 253");
	/* 253 is allowed when each DNS label stays valid. */
	memset(longprefix, 'p', 253);
	memcpy(longprefix + 253, "/a", 3);
	parse_ok(&sel, longprefix);
	api_selector_dispose(&sel);
}

Test(api_selector, rejects_invalid_values)
{
	char s[100] = "a=";
	memset(s + 2, 'v', 64);
	s[66] = '\0';
	parse_fails_with(s, "must be no more than 63 characters");
	s[65] = '\0';
	api_selector sel;
	parse_ok(&sel, s);
	api_selector_dispose(&sel);

	parse_fails("a=b$", "unable to parse requirement: invalid label "
			    "value: \"b$\": at key: \"a\": a valid label must "
			    "be an empty string or consist of alphanumeric "
			    "characters, '-', '_' or '.', and must start and "
			    "end with an alphanumeric character (e.g. "
			    "'MyValue', or 'my_value', or '12345')");
	parse_fails_with("a in (ok,-bad)", "invalid label value: \"-bad\"");
	parse_fails_with("a in (ok,bad-)", "invalid label value: \"bad-\"");
}

Test(api_selector, gt_lt_values_must_be_integers)
{
	parse_fails("n>x", "unable to parse requirement: for 'Gt', 'Lt' "
			   "operators, the value must be an integer");
	parse_fails("n<", "unable to parse requirement: for 'Gt', 'Lt' "
			  "operators, the value must be an integer");
	parse_fails("n>99999999999999999999",
	    "unable to parse requirement: for 'Gt', 'Lt' operators, the "
	    "value must be an integer");
	/* An integer that is not a label value is still rejected. */
	parse_fails_with("n>-1", "invalid label value: \"-1\"");
}

Test(api_selector, error_messages_stay_one_line)
{
	cu_error err;
	api_selector sel;
	cr_assert_eq(ns_selector_parse(&sel, "a\x01=b", &err), CU_EPARSE);
	cr_assert(strstr(err.msg, "a\\x01") != NULL, "%s", err.msg);
	cr_assert_null(strchr(err.msg, '\n'));
	cr_assert_eq(ns_selector_parse(&sel, NULL, &err), CU_OK);
	cr_assert_eq(sel.nreqs, 0);
}

Test(api_selector, add_validates_with_field_paths)
{
	api_selector sel;
	api_selector_init(&sel);
	cu_error err;
	const char *one[] = {"v"};
	const char *two[] = {"v", "w"};
	const char *bad[] = {"ok", "b@d"};
	const char *f = "spec.namespaceSelector.matchExpressions[0]";

	cr_assert_eq(
	    api_selector_add(&sel, "k", API_SEL_OP_IN, NULL, 0, f, &err),
	    CU_EINVAL);
	cr_assert_str_eq(err.msg,
	    "spec.namespaceSelector.matchExpressions[0].values: Required "
	    "value: must be specified when `operator` is 'In' or 'NotIn'");
	cr_assert_eq(
	    api_selector_add(&sel, "k", API_SEL_OP_EXISTS, one, 1, f, &err),
	    CU_EINVAL);
	cr_assert_str_eq(err.msg,
	    "spec.namespaceSelector.matchExpressions[0].values: Forbidden: "
	    "may not be specified when `operator` is 'Exists' or "
	    "'DoesNotExist'");
	cr_assert_eq(
	    api_selector_add(&sel, "k", API_SEL_OP_EQUALS, two, 2, f, &err),
	    CU_EINVAL);
	cr_assert(strstr(err.msg, "exact-match compatibility") != NULL);
	cr_assert_eq(
	    api_selector_add(&sel, "k", API_SEL_OP_GT, one, 1, f, &err),
	    CU_EINVAL);
	cr_assert(strstr(err.msg, "must be an integer") != NULL);
	cr_assert_eq(
	    api_selector_add(&sel, "k", API_SEL_OP_IN, bad, 2, f, &err),
	    CU_EINVAL);
	cr_assert(strstr(err.msg, "matchExpressions[0].values[1]: Invalid "
				  "value: \"b@d\"") != NULL,
	    "%s", err.msg);
	cr_assert_eq(api_selector_add(
			 &sel, "Bad Key", API_SEL_OP_EXISTS, NULL, 0, f, &err),
	    CU_EINVAL);
	cr_assert(strstr(err.msg, "matchExpressions[0].key: Invalid value: "
				  "\"Bad Key\"") != NULL,
	    "%s", err.msg);
	cr_assert_eq(
	    api_selector_add(&sel, "k", (enum api_sel_op)99, NULL, 0, f, &err),
	    CU_EINVAL);
	cr_assert_eq(sel.nreqs, 0);

	/* Without a field the messages are the string-selector ones. */
	cr_assert_eq(
	    api_selector_add(&sel, "k", API_SEL_OP_NOT_IN, NULL, 0, NULL, &err),
	    CU_EINVAL);
	cr_assert_str_eq(
	    err.msg, "for 'in', 'notin' operators, values set can't be empty");

	cr_assert_eq(
	    api_selector_add(&sel, "k", API_SEL_OP_IN, two, 2, f, &err), CU_OK);
	cr_assert_eq(sel.nreqs, 1);
	cr_assert_eq(sel.reqs[0].nvalues, 2);
	api_selector_dispose(&sel);
	cr_assert_null(sel.reqs);
}

Test(api_selector, validation_helpers)
{
	cu_error err;
	cr_assert_eq(
	    api_validate_label_key("example.com/Name_1.x", "f", &err), CU_OK);
	cr_assert_eq(
	    api_validate_label_key("a b", "metadata.labels", &err), CU_EINVAL);
	cr_assert(strncmp(err.msg,
		      "metadata.labels: Invalid value: \"a b\": ", 39) == 0,
	    "%s", err.msg);
	cr_assert_eq(api_validate_label_value("", "f", &err), CU_OK);
	cr_assert_eq(api_validate_label_value("a_b.c-D9", "f", &err), CU_OK);
	cr_assert_eq(api_validate_label_value("_a", NULL, &err), CU_EINVAL);
	cr_assert(strncmp(err.msg, "invalid label value: \"_a\"", 25) == 0,
	    "%s", err.msg);
}

static const char *lookup_env(const char *key, void *payload)
{
	int *calls = payload;
	(*calls)++;
	return strcmp(key, "env") == 0 ? "prod" : NULL;
}

Test(api_selector, matches_through_a_callback)
{
	api_selector sel;
	parse_ok(&sel, "env=prod,!gone");
	int calls = 0;
	cr_assert(ns_selector_matches(&sel, lookup_env, &calls));
	cr_assert_eq(calls, 2);
	api_selector_dispose(&sel);
	parse_ok(&sel, "env=dev");
	cr_assert_not(ns_selector_matches(&sel, lookup_env, &calls));
	api_selector_dispose(&sel);
}

Test(api_selector, survives_allocation_failures)
{
	const char *s = "a in (x,y,z),b!=c,!d,e,f>3";
	for (uint64_t n = 1; n < 200; n++) {
		api_selector sel;
		cu_error err;
		cu_mem_fail_after(n, false);
		int rc = ns_selector_parse(&sel, s, &err);
		cu_mem_fail_after(0, false);
		if (rc == CU_OK) {
			char *str = api_selector_string(&sel);
			cr_assert_str_eq(str, "a in (x,y,z),b!=c,!d,e,f>3");
			cu_free(str);
			api_selector_dispose(&sel);
			return;
		}
		cr_assert_eq(
		    rc, CU_ENOMEM, "n=%llu rc=%d", (unsigned long long)n, rc);
		cr_assert_eq(sel.nreqs, 0);
	}
	cr_assert_fail("parse never succeeded");
}

/* ---- field selectors ------------------------------------------------ */

static const char *fields_get(const char *key, void *payload)
{
	const char *const *kv = payload;
	for (size_t i = 0; kv[i] != NULL; i += 2)
		if (strcmp(kv[i], key) == 0)
			return kv[i + 1];
	return NULL;
}

static void fs_parse_ok(ns_fieldsel *fs, const char *s)
{
	cu_error err;
	cu_error_clear(&err);
	int rc = ns_fieldsel_parse(fs, s, &err);
	cr_assert_eq(rc, CU_OK, "parse(\"%s\"): %s", s, err.msg);
}

static void fs_parse_fails(const char *s, const char *msg)
{
	ns_fieldsel fs;
	cu_error err;
	cu_error_clear(&err);
	cr_assert_eq(ns_fieldsel_parse(&fs, s, &err), CU_EPARSE, "%s", s);
	cr_assert_str_eq(err.msg, msg);
	cr_assert_eq(fs.nterms, 0);
	cr_assert_null(fs.terms);
}

Test(ns_fieldsel, parses_and_matches_terms)
{
	ns_fieldsel fs;
	fs_parse_ok(&fs,
	    "metadata.name=foo,status.phase!=Terminating,metadata.namespace"
	    "==ns1");
	cr_assert_eq(fs.nterms, 3);
	const char *obj[] = {"metadata.name", "foo", "metadata.namespace",
	    "ns1", "status.phase", "Active", NULL};
	const char *other[] = {
	    "metadata.name", "bar", "metadata.namespace", "ns1", NULL};
	const char *term[] = {"metadata.name", "foo", "metadata.namespace",
	    "ns1", "status.phase", "Terminating", NULL};
	cr_assert(ns_fieldsel_matches(&fs, fields_get, obj));
	cr_assert_not(ns_fieldsel_matches(&fs, fields_get, other));
	cr_assert_not(ns_fieldsel_matches(&fs, fields_get, term));
	cr_assert_str_eq(
	    ns_fieldsel_required_value(&fs, "metadata.name"), "foo");
	cr_assert_null(ns_fieldsel_required_value(&fs, "status.phase"));
	cr_assert_null(ns_fieldsel_required_value(&fs, "spec.nodeName"));
	ns_fieldsel_dispose(&fs);
}

Test(ns_fieldsel, missing_fields_read_as_empty)
{
	ns_fieldsel fs;
	const char *none[] = {NULL};
	fs_parse_ok(&fs, "spec.nodeName!=n1");
	cr_assert(ns_fieldsel_matches(&fs, fields_get, none));
	ns_fieldsel_dispose(&fs);
	fs_parse_ok(&fs, "spec.nodeName=n1");
	cr_assert_not(ns_fieldsel_matches(&fs, fields_get, none));
	ns_fieldsel_dispose(&fs);
	fs_parse_ok(&fs, "spec.nodeName=");
	cr_assert(ns_fieldsel_matches(&fs, fields_get, none));
	ns_fieldsel_dispose(&fs);
}

Test(ns_fieldsel, empty_selector_matches_everything)
{
	ns_fieldsel fs;
	const char *obj[] = {"a", "b", NULL};
	fs_parse_ok(&fs, "");
	cr_assert_eq(fs.nterms, 0);
	cr_assert(ns_fieldsel_matches(&fs, fields_get, obj));
	ns_fieldsel_dispose(&fs);
	fs_parse_ok(&fs, ",,");
	cr_assert_eq(fs.nterms, 0);
	ns_fieldsel_dispose(&fs);
	fs_parse_ok(&fs, NULL);
	cr_assert_eq(fs.nterms, 0);
}

Test(ns_fieldsel, unescapes_values_and_reescapes_in_string)
{
	ns_fieldsel fs;
	fs_parse_ok(&fs, "b=x\\,y\\=z\\\\w,a!=1");
	cr_assert_eq(fs.nterms, 2);
	/* Parts are sorted bytewise: "a!=1" before "b=...". */
	cr_assert_str_eq(fs.terms[0].field, "a");
	cr_assert(fs.terms[0].negate);
	cr_assert_str_eq(fs.terms[1].field, "b");
	cr_assert_str_eq(fs.terms[1].value, "x,y=z\\w");
	char *s = ns_fieldsel_string(&fs);
	cr_assert_str_eq(s, "a!=1,b=x\\,y\\=z\\\\w");
	cu_free(s);
	ns_fieldsel_dispose(&fs);

	fs_parse_ok(&fs, "a==b");
	s = ns_fieldsel_string(&fs);
	cr_assert_str_eq(s, "a=b");
	cu_free(s);
	ns_fieldsel_dispose(&fs);
}

Test(ns_fieldsel, rejects_malformed_terms)
{
	fs_parse_fails("a", "invalid selector: 'a'; can't understand 'a'");
	fs_parse_fails("x=1,noop",
	    "invalid selector: 'x=1,noop'; can't understand 'noop'");
	fs_parse_fails("a=b=c", "invalid field selector: unescaped character "
				"in value: =");
	fs_parse_fails(
	    "a=b\\x", "invalid field selector: invalid escape sequence: \\x");
	fs_parse_fails(
	    "a=b\\", "invalid field selector: invalid escape sequence: \\");
	fs_parse_fails("a!b", "invalid selector: 'a!b'; can't understand "
			      "'a!b'");
}

Test(ns_fieldsel, cuts_at_the_first_operator)
{
	ns_fieldsel fs;
	fs_parse_ok(&fs, "a!=\\=b");
	cr_assert_str_eq(fs.terms[0].field, "a");
	cr_assert(fs.terms[0].negate);
	cr_assert_str_eq(fs.terms[0].value, "=b");
	ns_fieldsel_dispose(&fs);
	/* "!=" wins at position 1, leaving "=b" with a bare '='. */
	fs_parse_fails("a!==b", "invalid field selector: unescaped character "
				"in value: =");
	fs_parse_ok(&fs, "==b");
	cr_assert_str_eq(fs.terms[0].field, "");
	cr_assert_not(fs.terms[0].negate);
	cr_assert_str_eq(fs.terms[0].value, "b");
	ns_fieldsel_dispose(&fs);
}

Test(ns_fieldsel, survives_allocation_failures)
{
	for (uint64_t n = 1; n < 100; n++) {
		ns_fieldsel fs;
		cu_error err;
		cu_mem_fail_after(n, false);
		int rc = ns_fieldsel_parse(&fs, "a=1,b!=2,c==3", &err);
		cu_mem_fail_after(0, false);
		if (rc == CU_OK) {
			cr_assert_eq(fs.nterms, 3);
			ns_fieldsel_dispose(&fs);
			return;
		}
		cr_assert_eq(rc, CU_ENOMEM);
		cr_assert_eq(fs.nterms, 0);
	}
	cr_assert_fail("parse never succeeded");
}
