/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/cli_jsonpath_test.c - cli/jsonpath.c: kubectl's JSONPath
 * templates on the document of kubectl's JSONPath reference (a List of
 * two Pods-like objects), each expected output as kubectl prints it;
 * syntax errors named with their position.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <string.h>

#include "cli/cli.h"

static const char DOC[] =
    "{\"kind\": \"List\", \"items\": ["
    "{\"kind\": \"None\", \"metadata\": {\"name\": \"127.0.0.1\", "
    "\"labels\": {\"app.kubernetes.io/name\": \"a\"}},"
    " \"status\": {\"capacity\": {\"cpu\": \"4\"}, \"addresses\": "
    "[{\"type\": \"LegacyHostIP\", \"address\": \"127.0.0.1\"}]}},"
    "{\"kind\": \"None\", \"metadata\": {\"name\": \"127.0.0.2\"},"
    " \"status\": {\"capacity\": {\"cpu\": \"8\"}, \"addresses\": "
    "[{\"type\": \"LegacyHostIP\", \"address\": \"127.0.0.2\"}, "
    "{\"type\": \"another\", \"address\": \"127.0.0.3\"}]}}],"
    " \"users\": [{\"name\": \"myself\", \"user\": {}}, "
    "{\"name\": \"e2e\", \"user\": {\"username\": \"admin\", \"password\": "
    "\"secret\"}}], \"n\": [1, 2.5, 3, 4], \"b\": true}";

static char *run(const char *tmpl)
{
	json_error_t je;
	json_t *doc = json_loads(DOC, 0, &je);
	cli_jsonpath *jp = NULL;
	cu_error e;
	cu_buf out;
	char *s;

	cr_assert_not_null(doc, "%s", je.text);
	cr_assert_eq(
	    cli_jsonpath_parse(tmpl, &jp, &e), CU_OK, "%s: %s", tmpl, e.msg);
	cu_buf_init(&out, 1 << 20);
	cr_assert_eq(cli_jsonpath_exec(jp, doc, &out, &e), CU_OK, "%s", e.msg);
	s = cu_strdup(out.ptr);
	cu_buf_dispose(&out);
	cli_jsonpath_free(jp);
	json_decref(doc);
	return s;
}

static void want(const char *tmpl, const char *expect)
{
	char *got = run(tmpl);

	cr_assert_str_eq(got, expect, "%s", tmpl);
	cu_free(got);
}

Test(jsonpath, kubectl_reference_examples)
{
	want("{.kind}", "List");
	want("{['kind']}", "List");
	want("{$.kind}", "List");
	want("{.items[0].metadata.name}", "127.0.0.1");
	want("{.items[*].metadata.name}", "127.0.0.1 127.0.0.2");
	want("{.items[-1:].metadata.name}", "127.0.0.2");
	want("{.items[0:1].metadata.name}", "127.0.0.1");
	want("{..name}", "127.0.0.1 127.0.0.2 myself e2e");
	want("{.users[?(@.name==\"e2e\")].user.password}", "secret");
	want("{.users[?(@.name!='e2e')].name}", "myself");
	want("{.items[*].status.addresses[?(@.type=='another')].address}",
	    "127.0.0.3");
	want("{.users[?(@.user.username)].name}", "e2e");
	want("{.users[0]['name','user']}", "myself {}");
	want("{.items[*]['metadata.name', 'status.capacity']}", "");
	want("{range .items[*]}[{.metadata.name}, {.status.capacity.cpu}] "
	     "{end}",
	    "[127.0.0.1, 4] [127.0.0.2, 8] ");
	want("{range .users[*]}{.name}{\"\\t\"}{end}", "myself\te2e\t");
	want("{.items[0].metadata.labels.app\\.kubernetes\\.io/name}", "a");
	want("{.items[0].metadata.labels['app.kubernetes.io/name']}", "a");
	want("{.users[1].user}",
	    "{\"password\":\"secret\",\"username\":\"admin\"}");
	want("{.n[?(@ > 2)]}", "2.5 3 4");
	want("{.n[1,3]}", "2.5 4");
	want("{.n[::2]}", "1 3");
	want("{.n[::-1]}", "4 3 2.5 1");
	want("{.b}", "true");
	want("{.missing}", "");
	want("{.items[5].metadata.name}", "");
	want("name: {.items[1].metadata.name}\n", "name: 127.0.0.2\n");
	want("{range .items[*]}{range .status.addresses[*]}{.address},{end};"
	     "{end}",
	    "127.0.0.1,;127.0.0.2,127.0.0.3,;");
	want("{.items[*].status.capacity.*}", "4 8");
	want("{.users[*].user[?(@)]}", "");
	want("{metadata.name}", "");
}

static void bad(const char *tmpl, const char *msg)
{
	cli_jsonpath *jp = NULL;
	cu_error e;

	cr_assert_eq(cli_jsonpath_parse(tmpl, &jp, &e), CU_EINVAL, "%s", tmpl);
	cr_assert_null(jp);
	cr_assert(strstr(e.msg, msg) != NULL, "%s: %s", tmpl, e.msg);
	cr_assert(strncmp(e.msg, "jsonpath: ", 10) == 0, "%s", e.msg);
}

Test(jsonpath, syntax_errors)
{
	bad("{.items[0}", "expected ]");
	bad("{.a", "unclosed action");
	bad("{range .items[*]}{.a}", "{range} without {end}");
	bad("{end}", "{end} without {range}");
	bad("{.a[?(@.x == )]}", "filter: expected a value");
	bad("{.a[::0]}", "step must not be 0");
	bad("{\"unterminated}", "unclosed action");
	bad("{.a b}", "unexpected text");
	bad("{.a[x]}", "bad subscript");
}
