/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/apiserver_schema_test.c - tests/apiserver/types.c: every
 * structural-schema keyword kube-apiserver enforces on a custom resource,
 * with its message and field path, all errors of one object listed, list
 * uniqueness (x-kubernetes-list-type set and map), the pattern subset and
 * the formats checked.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "tests/apiserver/apiserver.h"

struct vcase {
	const char *name;
	const char *schema; /* the schema of "spec" */
	const char *spec;
	const char *want; /* "field: detail" joined by " | ", "" = valid */
};

static const struct vcase cases[] = {
    {"minimum ok", "{\"type\":\"integer\",\"minimum\":0}", "0", ""},
    {"minimum", "{\"type\":\"integer\",\"minimum\":0}", "-1",
	"spec: Invalid value: -1: spec in body should be greater than or "
	"equal to 0"},
    {"exclusiveMinimum",
	"{\"type\":\"integer\",\"minimum\":0,"
	"\"exclusiveMinimum\":true}",
	"0", "spec: Invalid value: 0: spec in body should be greater than 0"},
    {"maximum", "{\"type\":\"number\",\"maximum\":1.5}", "2",
	"spec: Invalid value: 2: spec in body should be less than or equal "
	"to 1.5"},
    {"exclusiveMaximum",
	"{\"type\":\"integer\",\"maximum\":1000000,\"exclusiveMaximum\":"
	"true}",
	"1000000",
	"spec: Invalid value: 1000000: spec in body should be less than "
	"1e+06"},
    {"multipleOf", "{\"type\":\"integer\",\"multipleOf\":5}", "12",
	"spec: Invalid value: 12: spec in body should be a multiple of 5"},
    {"multipleOf ok", "{\"type\":\"integer\",\"multipleOf\":5}", "15", ""},
    {"maxLength counts characters", "{\"type\":\"string\",\"maxLength\":2}",
	"\"\xc3\xa9\xc3\xa9\"", ""},
    {"maxLength", "{\"type\":\"string\",\"maxLength\":2}", "\"abc\"",
	"spec: Too long: may not be more than 2 bytes"},
    {"minLength", "{\"type\":\"string\",\"minLength\":1}", "\"\"",
	"spec: Invalid value: \"\": spec in body should be at least 1 chars "
	"long"},
    {"pattern", "{\"type\":\"string\",\"pattern\":\"^[a-z]+$\"}", "\"A1\"",
	"spec: Invalid value: \"A1\": spec in body should match '^[a-z]+$'"},
    {"pattern escapes",
	"{\"type\":\"string\",\"pattern\":\"^\\\\d+\\\\.\\\\w\\\\s?$\"}",
	"\"12.x\"", ""},
    {"pattern escapes fail",
	"{\"type\":\"string\",\"pattern\":\"^\\\\d+\\\\.\\\\w$\"}", "\"12x_\"",
	"spec: Invalid value: \"12x_\": spec in body should match "
	"'^\\d+\\.\\w$'"},
    {"pattern non-capturing group and class escapes",
	"{\"type\":\"string\",\"pattern\":\"^(?:[\\\\w\\\\-]+\\\\/)?[a-z]+$"
	"\"}",
	"\"a-b/c\"", ""},
    {"pattern outside the subset is not checked",
	"{\"type\":\"string\",\"pattern\":\"^(?=a)b$\"}", "\"c\"", ""},
    {"format date-time", "{\"type\":\"string\",\"format\":\"date-time\"}",
	"\"yesterday\"",
	"spec: Invalid value: \"yesterday\": spec in body must be of type "
	"date-time: \"yesterday\""},
    {"format date-time ok", "{\"type\":\"string\",\"format\":\"date-time\"}",
	"\"2024-02-29T10:00:00.5+02:00\"", ""},
    {"format date", "{\"type\":\"string\",\"format\":\"date\"}",
	"\"2023-02-29\"",
	"spec: Invalid value: \"2023-02-29\": spec in body must be of type "
	"date: \"2023-02-29\""},
    {"format byte", "{\"type\":\"string\",\"format\":\"byte\"}", "\"a\"",
	"spec: Invalid value: \"a\": spec in body must be of type byte: "
	"\"a\""},
    {"format uuid", "{\"type\":\"string\",\"format\":\"uuid\"}",
	"\"123e4567-e89b-12d3-a456-426614174000\"", ""},
    {"format int32 not checked", "{\"type\":\"string\",\"format\":\"int32\"}",
	"\"x\"", ""},
    {"enum", "{\"type\":\"string\",\"enum\":[\"a\",\"b\"]}", "\"c\"",
	"spec: Unsupported value: \"c\": supported values: \"a\", \"b\""},
    {"maxItems",
	"{\"type\":\"array\",\"maxItems\":1,\"items\":{\"type\":"
	"\"integer\"}}",
	"[1,2]", "spec: Too many: 2: must have at most 1 item"},
    {"minItems", "{\"type\":\"array\",\"minItems\":1}", "[]",
	"spec: Invalid value: 0: spec in body should have at least 1 items"},
    {"maxProperties",
	"{\"type\":\"object\",\"maxProperties\":1,"
	"\"additionalProperties\":{\"type\":\"string\"}}",
	"{\"a\":\"x\",\"b\":\"y\"}",
	"spec: Too many: 2: must have at most 1 item"},
    {"minProperties", "{\"type\":\"object\",\"minProperties\":1}", "{}",
	"spec: Invalid value: 0: spec in body should have at least 1 "
	"properties"},
    {"required and every error listed",
	"{\"type\":\"object\",\"required\":[\"name\"],\"properties\":{"
	"\"count\":{\"type\":\"integer\",\"minimum\":0},\"size\":{\"type\":"
	"\"integer\",\"maximum\":3}}}",
	"{\"count\":-1,\"size\":4}",
	"spec.name: Required value | spec.count: Invalid value: -1: "
	"spec.count in body should be greater than or equal to 0 | "
	"spec.size: Invalid value: 4: spec.size in body should be less "
	"than or equal to 3"},
    {"type", "{\"type\":\"integer\"}", "\"x\"",
	"spec: Invalid value: \"string\": spec in body must be of type "
	"integer: \"string\""},
    {"set duplicate",
	"{\"type\":\"array\",\"x-kubernetes-list-type\":\"set\",\"items\":{"
	"\"type\":\"string\"}}",
	"[\"a\",\"b\",\"a\"]", "spec[2]: Duplicate value: \"a\""},
    {"map duplicate",
	"{\"type\":\"array\",\"x-kubernetes-list-type\":\"map\","
	"\"x-kubernetes-list-map-keys\":[\"name\"],\"items\":{\"type\":"
	"\"object\",\"properties\":{\"name\":{\"type\":\"string\"}}}}",
	"[{\"name\":\"main\"},{\"name\":\"w\"},{\"name\":\"main\"}]",
	"spec[2]: Duplicate value: map[string]interface {}{\"name\":\"main\"}"},
    {"map with distinct keys",
	"{\"type\":\"array\",\"x-kubernetes-list-type\":\"map\","
	"\"x-kubernetes-list-map-keys\":[\"name\",\"port\"]}",
	"[{\"name\":\"a\",\"port\":1},{\"name\":\"a\",\"port\":2}]", ""},
    {"atomic list may repeat",
	"{\"type\":\"array\",\"x-kubernetes-list-type\":\"atomic\"}", "[1,1]",
	""},
};

static char *run(const struct vcase *c)
{
	char *text = cu_asprintf(
	    "{\"type\":\"object\",\"properties\":{\"spec\":%s}}", c->schema);
	char *objtext = cu_asprintf("{\"spec\":%s}", c->spec);
	json_t *schema = json_loads(text, 0, NULL);
	json_t *obj = json_loads(objtext, JSON_DECODE_ANY, NULL);
	json_t *errs, *e;
	size_t i;
	cu_buf b;
	char *out;

	cr_assert_not_null(schema, "%s: schema", c->name);
	cr_assert_not_null(obj, "%s: object", c->name);
	errs = as_schema_errors(schema, obj, NULL);
	cr_assert_not_null(errs);
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
	json_decref(schema);
	json_decref(obj);
	cu_free(text);
	cu_free(objtext);
	return out;
}

Test(schema, every_keyword_with_kube_message)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = run(&cases[i]);

		cr_expect_str_eq(got, cases[i].want, "%s:\n got %s\nwant %s",
		    cases[i].name, got, cases[i].want);
		cu_free(got);
	}
}

Test(schema, pattern_translation)
{
	static const struct {
		const char *re2, *ere; /* NULL ere: outside the subset */
	} t[] = {
	    {"^\\d+$", "^[0-9]+$"},
	    {"\\w\\s\\D", "[A-Za-z0-9_][[:space:]][^0-9]"},
	    {"[\\w.-]", "[A-Za-z0-9_.-]"},
	    {"[\\]a]", NULL},
	    {"a+?b", "a+b"},
	    {"(?:ab)|c", "(ab)|c"},
	    {"\\/\\.", "/\\."},
	    {"(?i)a", NULL},
	    {"\\bword", NULL},
	    {"(a)\\1", NULL},
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		cu_buf b;
		int rc;

		cu_buf_init(&b, 4096);
		rc = as_re_translate(t[i].re2, &b);
		if (t[i].ere == NULL)
			cr_expect_neq(rc, CU_OK, "%s accepted", t[i].re2);
		else
			cr_expect(rc == CU_OK && b.ptr &&
				      strcmp(b.ptr, t[i].ere) == 0,
			    "%s: got %s want %s", t[i].re2,
			    b.ptr ? b.ptr : "(null)", t[i].ere);
		cu_buf_dispose(&b);
	}
}

Test(schema, formats)
{
	static const struct {
		const char *fmt, *s;
		int want;
	} t[] = {
	    {"date-time", "2024-01-02T03:04:05Z", 1},
	    {"date-time", "2024-01-02t03:04:05.123z", 1},
	    {"date-time", "2024-01-02T24:00:00Z", 0},
	    {"date-time", "2024-01-02 03:04:05Z", 0},
	    {"date", "2024-02-29", 1},
	    {"date", "2024-13-01", 0},
	    {"byte", "aGVsbG8=", 1},
	    {"byte", "aGVsbG8", 0},
	    {"uuid", "123E4567E89B12D3A456426614174000", 1},
	    {"uuid4", "123e4567-e89b-42d3-a456-426614174000", 1},
	    {"uuid4", "123e4567-e89b-12d3-a456-426614174000", 0},
	    {"ipv4", "10.0.0.1", 1},
	    {"ipv4", "10.0.0.256", 0},
	    {"ipv6", "::1", 1},
	    {"cidr", "10.0.0.0/8", 1},
	    {"cidr", "10.0.0.0/33", 0},
	    {"mac", "01:23:45:67:89:ab", 1},
	    {"mac", "01:23:45:67:89", 0},
	    {"hostname", "a.example.com", 1},
	    {"hostname", "-a.com", 0},
	    {"hexcolor", "#fff", 1},
	    {"bsonobjectid", "507f1f77bcf86cd799439011", 1},
	    {"uri", "anything", -1},
	    {"int64", "x", -1},
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		cr_expect_eq(as_format_ok(t[i].fmt, t[i].s), t[i].want, "%s %s",
		    t[i].fmt, t[i].s);
}
