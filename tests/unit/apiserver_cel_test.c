/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/apiserver_cel_test.c - the cel/ module as the local API
 * server uses it for validation rules: each CEL construct of the subset
 * (literals, self/oldSelf, selection, indexing, has, size, in, the macros,
 * comparisons, arithmetic, logical operators with error absorption, ternary,
 * string functions), every rule of Kueue's CRDs parsed
 * (tests/unit/data/kueue_cel_rules.txt), a sample of them evaluated both ways,
 * and x-kubernetes-validations reported by the schema validation as
 * kube-apiserver words it.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "tests/apiserver/apiserver.h"

struct ccase {
	const char *rule;
	const char *self; /* JSON */
	const char *old;  /* JSON or NULL */
	const char *want; /* JSON of the value, or "error: <substring>" */
};

static const struct ccase cases[] = {
    {"1 + 2 * 3 == 7", "{}", NULL, "true"},
    {"(1 + 2) * 3", "{}", NULL, "9"},
    {"7 / 2 == 3 && 7 % 2 == 1", "{}", NULL, "true"},
    {"-self.a", "{\"a\":3}", NULL, "-3"},
    {"1.5 < 2.0", "{}", NULL, "true"},
    {"'ab' + \"cd\"", "{}", NULL, "\"abcd\""},
    {"'a\\'b'", "{}", NULL, "\"a'b\""},
    {"[1, 2] + [3]", "{}", NULL, "[1,2,3]"},
    {"true && !false", "{}", NULL, "true"},
    {"null == null", "{}", NULL, "true"},
    {"self.a.b", "{\"a\":{\"b\":\"x\"}}", NULL, "\"x\""},
    {"self.a.c", "{\"a\":{\"b\":\"x\"}}", NULL, "error: no such key: c"},
    {"has(self.a) && !has(self.z)", "{\"a\":1}", NULL, "true"},
    {"self[1]", "[5,6]", NULL, "6"},
    {"self[2]", "[5,6]", NULL, "error: index out of bounds"},
    {"self['k']", "{\"k\":1}", NULL, "1"},
    {"size(self) == 2 && self.size() == 2", "[1,2]", NULL, "true"},
    {"size('h\xc3\xa9')", "{}", NULL, "2"},
    {"size(self)", "{\"a\":1}", NULL, "1"},
    {"'x' in ['x', 'y'] && !(3 in [1, 2])", "{}", NULL, "true"},
    {"'a' in self", "{\"a\":1}", NULL, "true"},
    {"self.all(x, x > 0)", "[1,2]", NULL, "true"},
    {"self.all(x, x > 1)", "[1,2]", NULL, "false"},
    {"self.exists(x, x == 2)", "[1,2]", NULL, "true"},
    {"self.exists_one(x, x > 0)", "[1,2]", NULL, "false"},
    {"self.exists_one(x, x > 1)", "[1,2]", NULL, "true"},
    {"self.filter(x, x > 1)", "[1,2,3]", NULL, "[2,3]"},
    {"self.map(x, x * 2)", "[1,2]", NULL, "[2,4]"},
    {"self.all(k, k.startsWith('a'))", "{\"ab\":1,\"ac\":2}", NULL, "true"},
    {"self.a.all(x, self.b.exists(y, y == x))", "{\"a\":[1],\"b\":[1,2]}", NULL,
	"true"},
    {"self.a > 1 ? 'big' : 'small'", "{\"a\":1}", NULL, "\"small\""},
    {"self.startsWith('ab') && self.endsWith('cd') && "
     "self.contains('bc')",
	"\"abcd\"", NULL, "true"},
    {"self.matches('^[a-z]+\\\\d$')", "\"abc1\"", NULL, "true"},
    {"self.lowerAscii() == 'ab'", "\"AB\"", NULL, "true"},
    {"self == oldSelf", "1", "1", "true"},
    {"self == oldSelf", "1", "2", "false"},
    {"1 == 1.0", "{}", NULL, "true"},
    {"string(size(self)) + string(true)", "[1,2]", NULL, "\"2true\""},
    /* && and || absorb an error when the other side decides. */
    {"self.missing == 1 && false", "{}", NULL, "false"},
    {"self.missing == 1 || true", "{}", NULL, "true"},
    {"self.missing == 1 && true", "{}", NULL, "error: no such key"},
    {"self.all(x, x.a == 1)", "[{\"a\":2},{}]", NULL, "false"},
    {"1 + 'a'", "{}", NULL, "error: no such overload"},
    {"1 / 0", "{}", NULL, "error: division by zero"},
    {"9223372036854775807 + 1", "{}", NULL, "error: integer overflow"},
    {"foo", "{}", NULL, "error: undeclared reference"},
};

static char *run(const char *rule, const char *self, const char *old)
{
	char *err = NULL, *out;
	struct cel_expr *cel = cel_parse(rule, &err);
	json_t *s, *o = NULL, *r;

	if (cel == NULL) {
		out = cu_asprintf("parse error: %s", err ? err : "");
		cu_free(err);
		return out;
	}
	s = json_loads(self, JSON_DECODE_ANY, NULL);
	if (old != NULL)
		o = json_loads(old, JSON_DECODE_ANY, NULL);
	cr_assert_not_null(s, "%s", self);
	r = as_cel_eval(cel, s, o, &err);
	if (r == NULL)
		out = cu_asprintf("error: %s", err ? err : "");
	else
		out = as_json_dump(r, NULL);
	json_decref(r);
	json_decref(s);
	json_decref(o);
	cu_free(err);
	cel_free(cel);
	return out;
}

Test(cel, each_construct)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = run(cases[i].rule, cases[i].self, cases[i].old);
		bool ok = strncmp(cases[i].want, "error: ", 7) == 0
			      ? strncmp(got, "error: ", 7) == 0 &&
				    strstr(got, cases[i].want + 7) != NULL
			      : strcmp(got, cases[i].want) == 0;

		cr_expect(ok, "%s on %s: got %s, want %s", cases[i].rule,
		    cases[i].self, got, cases[i].want);
		cu_free(got);
	}
}

Test(cel, syntax_errors)
{
	static const char *bad[] = {"", "1 +", "(1", "has(self)", "self.",
	    "'open", "a ? b", "self.all(1, x)", "1 $ 2", "[1, 2",
	    "((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((("
	    "(((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((("
	    "(((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((("
	    "((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((1"};
	size_t i;
	cu_buf chain;
	char *err = NULL;
	struct cel_expr *cel;

	/* A long left-deep chain is refused, not evaluated recursively. */
	cu_buf_init(&chain, 1 << 20);
	cr_assert_eq(cu_buf_add(&chain, "1", 1), CU_OK);
	for (i = 0; i < 5000; i++)
		cr_assert_eq(cu_buf_add(&chain, "+1", 2), CU_OK);
	cel = cel_parse(chain.ptr, &err);
	cr_expect_null(cel);
	cr_expect(err != NULL && strstr(err, "too long") != NULL);
	cel_free(cel);
	cu_free(err);
	cu_buf_dispose(&chain);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err = NULL;
		cel = cel_parse(bad[i], &err);

		cr_expect_null(cel, "%s parsed", bad[i]);
		cr_expect_not_null(err, "%s: no message", bad[i]);
		cel_free(cel);
		cu_free(err);
	}
}

/* Every rule of Kueue's CRDs is inside the subset. */
Test(cel, kueue_rules_parse)
{
	FILE *f = fopen("tests/unit/data/kueue_cel_rules.txt", "r");
	char line[4096];
	int n = 0;

	cr_assert_not_null(f, "tests/unit/data/kueue_cel_rules.txt");
	while (fgets(line, sizeof(line), f) != NULL) {
		char *rule = strrchr(line, '\t'), *err = NULL;
		struct cel_expr *cel;

		if (line[0] == '#' || rule == NULL)
			continue;
		rule++;
		rule[strcspn(rule, "\n")] = '\0';
		cel = cel_parse(rule, &err);
		cr_expect_not_null(cel, "%s: %s", rule, err ? err : "");
		cel_free(cel);
		cu_free(err);
		n++;
	}
	fclose(f);
	cr_expect_geq(n, 40, "only %d rules", n);
}

/* Kueue's rules evaluated on objects that pass and that fail. */
Test(cel, kueue_rules_evaluate)
{
	static const struct ccase k[] = {
	    {"has(self.minCount) ? self.minCount <= self.count : true",
		"{\"count\":2,\"minCount\":3}", NULL, "false"},
	    {"has(self.minCount) ? self.minCount <= self.count : true",
		"{\"count\":2}", NULL, "true"},
	    {"self.flavors.all(x, size(x.resources) == "
	     "size(self.coveredResources))",
		"{\"coveredResources\":[\"cpu\",\"memory\"],\"flavors\":[{"
		"\"resources\":[{}]}]}",
		NULL, "false"},
	    {"!has(self.cohort) && has(self.resourceGroups) ? "
	     "self.resourceGroups.all(rg, rg.flavors.all(f, f.resources.all(r, "
	     "!has(r.borrowingLimit)))) : true",
		"{\"resourceGroups\":[{\"flavors\":[{\"resources\":[{"
		"\"borrowingLimit\":1}]}]}]}",
		NULL, "false"},
	    {"size(self.filter(i, size(self.filter(j, j == i)) > 1)) == 0",
		"[\"a\",\"b\",\"a\"]", NULL, "false"},
	    {"[has(self.universal),has(self.individual)].filter(x,x==true)."
	     "size() == 1",
		"{\"universal\":1}", NULL, "true"},
	    {"size(self.filter(i, i.nodeLabel == 'kubernetes.io/hostname')) "
	     "== 0 || self[size(self) - 1].nodeLabel == "
	     "'kubernetes.io/hostname'",
		"[{\"nodeLabel\":\"kubernetes.io/hostname\"},{\"nodeLabel\":"
		"\"rack\"}]",
		NULL, "false"},
	    {"self.all(x, x.effect in ['NoSchedule', 'PreferNoSchedule', "
	     "'NoExecute'])",
		"[{\"effect\":\"Sometimes\"}]", NULL, "false"},
	    {"!has(oldSelf.clusterName) || !has(self.clusterName) || "
	     "oldSelf.clusterName == self.clusterName",
		"{\"clusterName\":\"b\"}", "{\"clusterName\":\"a\"}", "false"},
	};
	size_t i;

	for (i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		char *got = run(k[i].rule, k[i].self, k[i].old);

		cr_expect_str_eq(
		    got, k[i].want, "%s on %s", k[i].rule, k[i].self);
		cu_free(got);
	}
}

static char *causes(const char *schema, const char *obj, const char *old)
{
	json_t *s = json_loads(schema, 0, NULL);
	json_t *o = json_loads(obj, 0, NULL);
	json_t *p = old ? json_loads(old, 0, NULL) : NULL;
	json_t *errs, *e;
	size_t i;
	cu_buf b;
	char *out;

	cr_assert_not_null(s, "%s", schema);
	cr_assert_not_null(o, "%s", obj);
	errs = as_schema_errors(s, o, p);
	cu_buf_init(&b, 1 << 16);
	json_array_foreach(errs, i, e)
	{
		cr_assert_eq(cu_buf_addf(&b, "%s%s: %s", i ? " | " : "",
				 as_jstr(e, "field"), as_jstr(e, "detail")),
		    CU_OK);
	}
	out = cu_strdup(b.ptr ? b.ptr : "");
	cu_buf_dispose(&b);
	json_decref(errs);
	json_decref(s);
	json_decref(o);
	json_decref(p);
	return out;
}

#define PODSETS                                                                \
	"{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\","  \
	"\"properties\":{\"queueName\":{\"type\":\"string\",\"x-kubernetes-"   \
	"validations\":[{\"rule\":\"self == oldSelf\",\"message\":\"field is " \
	"immutable\"}]},\"podSets\":{\"type\":\"array\",\"items\":{\"type\":"  \
	"\"object\",\"properties\":{\"count\":{\"type\":\"integer\"},"         \
	"\"minCount\":{\"type\":\"integer\"}},\"x-kubernetes-validations\":[{" \
	"\"rule\":\"has(self.minCount) ? self.minCount <= self.count : "       \
	"true\",\"message\":\"minCount should be positive and less or equal "  \
	"to count\"}]}}},\"x-kubernetes-validations\":[{\"rule\":\"size(self." \
	"podSets) < 3\"},{\"rule\":\"self.podSets.size() > 0\",\"reason\":"    \
	"\"FieldValueForbidden\",\"fieldPath\":\".podSets\",\"message\":"      \
	"\"empty\"}]}}}"

Test(cel, rules_reported_as_kube)
{
	char *got;

	got = causes(PODSETS,
	    "{\"spec\":{\"podSets\":[{\"count\":1,\"minCount\":2}]}}", NULL);
	cr_expect_str_eq(got,
	    "spec.podSets[0]: Invalid value: \"object\": minCount should be "
	    "positive and less or equal to count");
	cu_free(got);
	got = causes(PODSETS,
	    "{\"spec\":{\"podSets\":[{\"count\":1},{\"count\":1},{\"count\":"
	    "1}]}}",
	    NULL);
	cr_expect_str_eq(got, "spec: Invalid value: \"object\": failed rule: "
			      "size(self.podSets) < 3");
	cu_free(got);
	got = causes(PODSETS, "{\"spec\":{\"podSets\":[]}}", NULL);
	cr_expect_str_eq(got, "spec.podSets: Forbidden: empty");
	cu_free(got);
	/* A transition rule: skipped on create, checked on update. */
	got = causes(PODSETS,
	    "{\"spec\":{\"queueName\":\"b\",\"podSets\":[{\"count\":1}]}}",
	    NULL);
	cr_expect_str_eq(got, "");
	cu_free(got);
	got = causes(PODSETS,
	    "{\"spec\":{\"queueName\":\"b\",\"podSets\":[{\"count\":1}]}}",
	    "{\"spec\":{\"queueName\":\"a\",\"podSets\":[{\"count\":1}]}}");
	cr_expect_str_eq(got,
	    "spec.queueName: Invalid value: \"string\": field is immutable");
	cu_free(got);
	/* A rule that cannot be evaluated, as kube words it. */
	got = causes("{\"type\":\"object\",\"properties\":{\"spec\":{"
		     "\"type\":\"object\",\"x-kubernetes-validations\":[{"
		     "\"rule\":\"self.a == 1\"}]}}}",
	    "{\"spec\":{}}", NULL);
	cr_expect_str_eq(got, "spec: Invalid value: \"object\": no such key: a "
			      "evaluating rule: self.a == 1");
	cu_free(got);
	/* A type error stops the rules, with kube's note. */
	got = causes(PODSETS,
	    "{\"spec\":{\"podSets\":[{\"count\":\"x\",\"minCount\":2}]}}",
	    NULL);
	cr_expect_str_eq(got,
	    "spec.podSets[0].count: Invalid value: \"string\": "
	    "spec.podSets[0].count in body must be of type integer: "
	    "\"string\" | <nil>: Invalid value: \"null\": some validation "
	    "rules were not checked because the object was invalid; correct "
	    "the existing errors to complete validation");
	cu_free(got);
}
