/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/api_patch_test.c - api/patch.h: RFC 6902 JSON Patch, RFC 7386
 * merge patch, strategic merge patch with the built-in schemas, the merge
 * patch diff, and JSON pointer escaping. Cases are tables of (document,
 * patch, expected result or error code) in JSON text.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "api/patch.h"

static json_t *parse(const char *text)
{
	json_error_t jerr;
	json_t *v = json_loads(text, JSON_DECODE_ANY, &jerr);

	cr_assert_not_null(v, "bad test JSON %s: %s", text, jerr.text);
	return v;
}

static int dump_cb(const char *data, size_t size, void *payload)
{
	return cu_buf_add(payload, data, size) == CU_OK ? 0 : -1;
}

/* Canonical text of v [owned: cu_free]. */
static char *dump(const json_t *v)
{
	cu_buf b;

	cu_buf_init(&b, 1 << 24);
	cr_assert_eq(json_dump_callback(
			 v, dump_cb, &b, JSON_SORT_KEYS | JSON_ENCODE_ANY),
	    0);
	return cu_buf_detach(&b, NULL);
}

/* Compare *got with the expected JSON text, then free got. */
static void expect_json(json_t *got, const char *want_text, const char *name)
{
	json_t *want = parse(want_text);
	char *g = dump(got);

	cr_assert(
	    json_equal(got, want), "%s: got %s, want %s", name, g, want_text);
	cu_free(g);
	json_decref(want);
	json_decref(got);
}

struct patch_case {
	const char *name;
	const char *doc;
	const char *patch;
	const char *want; /* NULL when an error is expected */
	int code;	  /* expected return code */
	const char *msg;  /* substring of the error message, or NULL */
};

enum algo { JSON_PATCH, MERGE_PATCH, SMP_POD, SMP_JOB, SMP_NONE };

static void run_cases(const struct patch_case *cases, size_t n, enum algo a)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct patch_case *tc = &cases[i];
		json_t *doc = parse(tc->doc), *patch = parse(tc->patch);
		char *before = dump(doc);
		char *after;
		json_t *out = (json_t *)1;
		cu_error err;
		int rc;

		cu_error_clear(&err);
		switch (a) {
		case JSON_PATCH:
			rc = api_json_patch_apply(&out, doc, patch, &err);
			break;
		case MERGE_PATCH:
			rc = api_merge_patch_apply(&out, doc, patch, &err);
			break;
		case SMP_POD:
			rc = api_smp_apply(&out, doc, patch,
			    api_smp_schema_for("", "Pod"), &err);
			break;
		case SMP_JOB:
			rc = api_smp_apply(&out, doc, patch,
			    api_smp_schema_for("batch", "Job"), &err);
			break;
		default:
			rc = api_smp_apply(&out, doc, patch, NULL, &err);
			break;
		}
		cr_assert_eq(rc, tc->code, "%s: rc %d (%s), want %d", tc->name,
		    rc, err.msg, tc->code);
		if (tc->want != NULL) {
			expect_json(out, tc->want, tc->name);
		} else {
			cr_assert_null(
			    out, "%s: *out must be NULL on error", tc->name);
			cr_assert_eq(err.code, tc->code, "%s", tc->name);
			if (tc->msg != NULL)
				cr_assert(strstr(err.msg, tc->msg) != NULL,
				    "%s: message \"%s\" lacks \"%s\"", tc->name,
				    err.msg, tc->msg);
		}
		/* Inputs are borrowed: never modified. */
		after = dump(doc);
		cr_assert_str_eq(before, after, "%s: input modified", tc->name);
		cu_free(before);
		cu_free(after);
		json_decref(doc);
		json_decref(patch);
	}
}

#define RUN(cases, algo)                                                       \
	run_cases(cases, sizeof(cases) / sizeof(cases[0]), algo)

/* ---- RFC 6902 -------------------------------------------------------- */

static const struct patch_case json_patch_ok[] = {
    {"add member", "{\"a\":1}",
	"[{\"op\":\"add\",\"path\":\"/b\",\"value\":2}]", "{\"a\":1,\"b\":2}",
	CU_OK, NULL},
    {"add replaces existing member", "{\"a\":1}",
	"[{\"op\":\"add\",\"path\":\"/a\",\"value\":[1]}]", "{\"a\":[1]}",
	CU_OK, NULL},
    {"add inserts into array", "{\"a\":[1,3]}",
	"[{\"op\":\"add\",\"path\":\"/a/1\",\"value\":2}]", "{\"a\":[1,2,3]}",
	CU_OK, NULL},
    {"add at array end by size", "{\"a\":[1]}",
	"[{\"op\":\"add\",\"path\":\"/a/1\",\"value\":2}]", "{\"a\":[1,2]}",
	CU_OK, NULL},
    {"add dash appends", "{\"a\":[1]}",
	"[{\"op\":\"add\",\"path\":\"/a/-\",\"value\":{\"x\":null}}]",
	"{\"a\":[1,{\"x\":null}]}", CU_OK, NULL},
    {"add at root replaces document", "{\"a\":1}",
	"[{\"op\":\"add\",\"path\":\"\",\"value\":[true]}]", "[true]", CU_OK,
	NULL},
    {"add null value", "{}",
	"[{\"op\":\"add\",\"path\":\"/n\",\"value\":null}]", "{\"n\":null}",
	CU_OK, NULL},
    {"remove member", "{\"a\":1,\"b\":2}",
	"[{\"op\":\"remove\",\"path\":\"/a\"}]", "{\"b\":2}", CU_OK, NULL},
    {"remove array item shifts", "{\"a\":[1,2,3]}",
	"[{\"op\":\"remove\",\"path\":\"/a/0\"}]", "{\"a\":[2,3]}", CU_OK,
	NULL},
    {"replace member", "{\"a\":{\"b\":1}}",
	"[{\"op\":\"replace\",\"path\":\"/a/b\",\"value\":\"x\"}]",
	"{\"a\":{\"b\":\"x\"}}", CU_OK, NULL},
    {"replace array item", "[1,2,3]",
	"[{\"op\":\"replace\",\"path\":\"/1\",\"value\":9}]", "[1,9,3]", CU_OK,
	NULL},
    {"replace root", "{\"a\":1}",
	"[{\"op\":\"replace\",\"path\":\"\",\"value\":{\"b\":2}}]", "{\"b\":2}",
	CU_OK, NULL},
    {"move member", "{\"a\":{\"b\":1},\"c\":{}}",
	"[{\"op\":\"move\",\"from\":\"/a/b\",\"path\":\"/c/d\"}]",
	"{\"a\":{},\"c\":{\"d\":1}}", CU_OK, NULL},
    {"move within array removes first", "[1,2,3,4]",
	"[{\"op\":\"move\",\"from\":\"/0\",\"path\":\"/3\"}]", "[2,3,4,1]",
	CU_OK, NULL},
    {"move onto itself is a no-op", "{\"a\":{\"b\":1}}",
	"[{\"op\":\"move\",\"from\":\"/a\",\"path\":\"/a\"}]",
	"{\"a\":{\"b\":1}}", CU_OK, NULL},
    {"move to sibling with common prefix name", "{\"a\":1}",
	"[{\"op\":\"move\",\"from\":\"/a\",\"path\":\"/ab\"}]", "{\"ab\":1}",
	CU_OK, NULL},
    {"copy member deep", "{\"a\":{\"b\":[1]}}",
	"[{\"op\":\"copy\",\"from\":\"/a\",\"path\":\"/c\"},"
	"{\"op\":\"add\",\"path\":\"/c/b/-\",\"value\":2}]",
	"{\"a\":{\"b\":[1]},\"c\":{\"b\":[1,2]}}", CU_OK, NULL},
    {"copy root into child", "{\"a\":1}",
	"[{\"op\":\"copy\",\"from\":\"\",\"path\":\"/b\"}]",
	"{\"a\":1,\"b\":{\"a\":1}}", CU_OK, NULL},
    {"test passes and numbers compare by value", "{\"a\":[1,{\"b\":2.0}]}",
	"[{\"op\":\"test\",\"path\":\"/a\",\"value\":[1.0,{\"b\":2}]}]",
	"{\"a\":[1,{\"b\":2.0}]}", CU_OK, NULL},
    {"test null value", "{\"a\":null}",
	"[{\"op\":\"test\",\"path\":\"/a\",\"value\":null}]", "{\"a\":null}",
	CU_OK, NULL},
    {"escaped keys ~0 and ~1", "{\"a/b\":1,\"m~n\":2}",
	"[{\"op\":\"replace\",\"path\":\"/a~1b\",\"value\":3},"
	"{\"op\":\"remove\",\"path\":\"/m~0n\"},"
	"{\"op\":\"add\",\"path\":\"/~01\",\"value\":4}]",
	"{\"a/b\":3,\"~1\":4}", CU_OK, NULL},
    {"empty key", "{\"\":1}",
	"[{\"op\":\"replace\",\"path\":\"/\",\"value\":2}]", "{\"\":2}", CU_OK,
	NULL},
    {"empty patch", "{\"a\":1}", "[]", "{\"a\":1}", CU_OK, NULL},
    {"later ops see earlier results", "{}",
	"[{\"op\":\"add\",\"path\":\"/a\",\"value\":{}},"
	"{\"op\":\"add\",\"path\":\"/a/b\",\"value\":[]},"
	"{\"op\":\"add\",\"path\":\"/a/b/0\",\"value\":1},"
	"{\"op\":\"test\",\"path\":\"/a/b/0\",\"value\":1}]",
	"{\"a\":{\"b\":[1]}}", CU_OK, NULL},
};

Test(api_patch, json_patch_rfc6902_ops_apply)
{
	RUN(json_patch_ok, JSON_PATCH);
}

static const struct patch_case json_patch_bad[] = {
    {"patch not an array", "{}", "{\"op\":\"add\"}", NULL, CU_EPARSE,
	"not an array"},
    {"op not an object", "{}", "[1]", NULL, CU_EPARSE, "op 0: not an object"},
    {"op member missing", "{}", "[{\"path\":\"/a\"}]", NULL, CU_EPARSE,
	"\"op\" missing"},
    {"unknown op", "{}", "[{\"op\":\"frob\",\"path\":\"/a\"}]", NULL, CU_EPARSE,
	"unknown op \"frob\""},
    {"path missing", "{}", "[{\"op\":\"remove\"}]", NULL, CU_EPARSE,
	"\"path\" missing"},
    {"path not a string", "{}", "[{\"op\":\"remove\",\"path\":3}]", NULL,
	CU_EPARSE, "\"path\" missing or not a string"},
    {"value missing", "{}", "[{\"op\":\"add\",\"path\":\"/a\"}]", NULL,
	CU_EPARSE, "op 0 (add /a): \"value\" missing"},
    {"from missing", "{}", "[{\"op\":\"copy\",\"path\":\"/a\"}]", NULL,
	CU_EPARSE, "\"from\" missing"},
    {"pointer without slash", "{\"a\":1}",
	"[{\"op\":\"remove\",\"path\":\"a\"}]", NULL, CU_EPARSE,
	"op 0 (remove a): JSON pointer must"},
    {"bad tilde escape", "{\"a\":1}", "[{\"op\":\"remove\",\"path\":\"/a~2\"}]",
	NULL, CU_EPARSE, "'~' not followed"},
    {"trailing tilde", "{\"a\":1}", "[{\"op\":\"remove\",\"path\":\"/a~\"}]",
	NULL, CU_EPARSE, "'~'"},
    {"bad from pointer", "{\"a\":1}",
	"[{\"op\":\"move\",\"from\":\"x\",\"path\":\"/b\"}]", NULL, CU_EPARSE,
	"from:"},
    {"malformed later op wins over failing earlier op", "{}",
	"[{\"op\":\"remove\",\"path\":\"/nope\"},{\"op\":\"bad\",\"path\":\"/"
	"\"}]",
	NULL, CU_EPARSE, "op 1: unknown op"},
    {"remove missing member", "{\"a\":1}",
	"[{\"op\":\"remove\",\"path\":\"/b\"}]", NULL, CU_EINVAL,
	"op 0 (remove /b): path does not exist"},
    {"remove root", "{\"a\":1}", "[{\"op\":\"remove\",\"path\":\"\"}]", NULL,
	CU_EINVAL, "root"},
    {"replace missing member", "{}",
	"[{\"op\":\"replace\",\"path\":\"/a\",\"value\":1}]", NULL, CU_EINVAL,
	"path does not exist"},
    {"add without parent", "{}",
	"[{\"op\":\"add\",\"path\":\"/a/b\",\"value\":1}]", NULL, CU_EINVAL,
	"op 0 (add /a/b): parent does not exist"},
    {"add under a scalar", "{\"a\":1}",
	"[{\"op\":\"add\",\"path\":\"/a/b\",\"value\":1}]", NULL, CU_EINVAL,
	"neither an object nor an array"},
    {"add index past end", "{\"a\":[1]}",
	"[{\"op\":\"add\",\"path\":\"/a/2\",\"value\":1}]", NULL, CU_EINVAL,
	"index out of range"},
    {"add index with leading zero", "{\"a\":[1,2]}",
	"[{\"op\":\"add\",\"path\":\"/a/01\",\"value\":1}]", NULL, CU_EINVAL,
	"index out of range"},
    {"add negative index", "{\"a\":[1,2]}",
	"[{\"op\":\"add\",\"path\":\"/a/-1\",\"value\":1}]", NULL, CU_EINVAL,
	"index out of range"},
    {"remove dash index", "{\"a\":[1]}",
	"[{\"op\":\"remove\",\"path\":\"/a/-\"}]", NULL, CU_EINVAL,
	"index out of range"},
    {"remove index past end", "{\"a\":[1]}",
	"[{\"op\":\"remove\",\"path\":\"/a/1\"}]", NULL, CU_EINVAL,
	"index out of range"},
    {"test value mismatch", "{\"spec\":{\"size\":1}}",
	"[{\"op\":\"test\",\"path\":\"/spec/size\",\"value\":2}]", NULL,
	CU_EINVAL, "op 0 (test /spec/size): value mismatch"},
    {"test type mismatch", "{\"a\":\"1\"}",
	"[{\"op\":\"test\",\"path\":\"/a\",\"value\":1}]", NULL, CU_EINVAL,
	"value mismatch"},
    {"test missing path", "{}",
	"[{\"op\":\"test\",\"path\":\"/a\",\"value\":null}]", NULL, CU_EINVAL,
	"path does not exist"},
    {"failed test aborts the whole patch", "{\"a\":1}",
	"[{\"op\":\"add\",\"path\":\"/b\",\"value\":1},"
	"{\"op\":\"test\",\"path\":\"/a\",\"value\":2}]",
	NULL, CU_EINVAL, "op 1 (test /a)"},
    {"move from missing", "{}",
	"[{\"op\":\"move\",\"from\":\"/x\",\"path\":\"/y\"}]", NULL, CU_EINVAL,
	"from /x does not exist"},
    {"copy from missing", "{}",
	"[{\"op\":\"copy\",\"from\":\"/x\",\"path\":\"/y\"}]", NULL, CU_EINVAL,
	"from /x does not exist"},
    {"copy to missing parent", "{\"x\":1}",
	"[{\"op\":\"copy\",\"from\":\"/x\",\"path\":\"/y/z\"}]", NULL,
	CU_EINVAL, "parent does not exist"},
};

Test(api_patch, json_patch_errors_have_code_and_op_path)
{
	RUN(json_patch_bad, JSON_PATCH);
}

static const struct patch_case json_patch_move_child[] = {
    {"move into own child", "{\"a\":{\"b\":{}}}",
	"[{\"op\":\"move\",\"from\":\"/a\",\"path\":\"/a/b/c\"}]", NULL,
	CU_EINVAL, "cannot move /a into its own child"},
    {"move root into child", "{\"a\":{}}",
	"[{\"op\":\"move\",\"from\":\"\",\"path\":\"/a\"}]", NULL, CU_EINVAL,
	"own child"},
};

Test(api_patch, json_patch_move_into_own_child_fails)
{
	RUN(json_patch_move_child, JSON_PATCH);
}

Test(api_patch, json_patch_over_max_ops_is_parse_error)
{
	json_t *doc = json_object(), *patch = json_array(), *out = NULL;
	cu_error err;
	int i;

	for (i = 0; i <= API_JSON_PATCH_MAX_OPS; i++)
		json_array_append_new(
		    patch, json_pack("{s:s,s:s,s:i}", "op", "add", "path", "/a",
			       "value", i));
	cr_assert_eq(api_json_patch_apply(&out, doc, patch, &err), CU_EPARSE);
	cr_assert_null(out);
	cr_assert(strstr(err.msg, "10001 operations") != NULL, "%s", err.msg);
	/* Exactly the limit is fine. */
	json_array_remove(patch, 0);
	cr_assert_eq(api_json_patch_apply(&out, doc, patch, &err), CU_OK);
	cr_assert_eq(json_integer_value(json_object_get(out, "a")),
	    API_JSON_PATCH_MAX_OPS);
	json_decref(out);
	json_decref(patch);
	json_decref(doc);
}

Test(api_patch, json_patch_exponential_copy_is_bounded)
{
	json_t *doc = parse("{\"a\":[1,2,3,4,5,6,7,8]}");
	json_t *patch = json_array(), *out = NULL;
	cu_error err;
	int i;

	/* Each op doubles the document; 40 doublings would need 2^40 nodes. */
	for (i = 0; i < 40; i++)
		json_array_append_new(
		    patch, json_pack("{s:s,s:s,s:s}", "op", "copy", "from", "",
			       "path", "/a/-"));
	cr_assert_eq(api_json_patch_apply(&out, doc, patch, &err), CU_EINVAL);
	cr_assert_null(out);
	cr_assert(
	    strstr(err.msg, "copied values exceed") != NULL, "%s", err.msg);
	json_decref(patch);
	json_decref(doc);
}

/* A chain {"d":{"d":...}} n levels deep. */
static json_t *deep_chain(int n)
{
	json_t *root = json_object(), *cur = root;
	int i;

	for (i = 1; i < n; i++) {
		json_t *next = json_object();

		json_object_set_new(cur, "d", next);
		cur = next;
	}
	return root;
}

Test(api_patch, json_patch_nesting_is_bounded)
{
	json_t *doc = json_pack("{s:o}", "a", deep_chain(1200));
	json_t *patch, *out = NULL;
	cu_buf path;
	cu_error err;
	int i;

	/* Copying a deep value into its own deepest leaf doubles the depth
	 * per op; jansson's recursive functions must never see that. */
	cu_buf_init(&path, 1 << 16);
	cr_assert_eq(cu_buf_adds(&path, "/a"), CU_OK);
	for (i = 1; i < 1200; i++)
		cr_assert_eq(cu_buf_adds(&path, "/d"), CU_OK);
	cr_assert_eq(cu_buf_adds(&path, "/copy"), CU_OK);
	patch = json_pack(
	    "[{s:s,s:s,s:s}]", "op", "copy", "from", "/a", "path", path.ptr);
	cr_assert_eq(api_json_patch_apply(&out, doc, patch, &err), CU_EINVAL);
	cr_assert_null(out);
	cr_assert(strstr(err.msg, "nested too deeply") != NULL, "%s", err.msg);
	json_decref(patch);
	cu_buf_dispose(&path);

	/* A value nested 2100 deep cannot be added either. */
	patch = json_pack("[{s:s,s:s,s:o}]", "op", "add", "path", "/b", "value",
	    deep_chain(2100));
	cr_assert_eq(api_json_patch_apply(&out, doc, patch, &err), CU_EINVAL);
	cr_assert(strstr(err.msg, "nested too deeply") != NULL, "%s", err.msg);
	cr_assert_null(out);
	json_decref(patch);

	/* ... while 2000 levels are fine. */
	patch = json_pack("[{s:s,s:s,s:o}]", "op", "add", "path", "/b", "value",
	    deep_chain(2000));
	cr_assert_eq(api_json_patch_apply(&out, doc, patch, &err), CU_OK);
	json_decref(out);
	json_decref(patch);
	json_decref(doc);
}

Test(api_patch, json_patch_null_err_is_accepted)
{
	json_t *doc = parse("{}"),
	       *patch = parse("[{\"op\":\"remove\",\"path\":\"/a\"}]");
	json_t *out = NULL;

	cr_assert_eq(api_json_patch_apply(&out, doc, patch, NULL), CU_EINVAL);
	cr_assert_null(out);
	json_decref(doc);
	json_decref(patch);
}

Test(api_patch, json_pointer_escape_round_trips_through_patch)
{
	static const struct {
		const char *key, *want;
	} cases[] = {
	    {"plain", "plain"},
	    {"a/b", "a~1b"},
	    {"m~n", "m~0n"},
	    {"~/", "~0~1"},
	    {"", ""},
	    {"kueue.x-k8s.io/queue-name", "kueue.x-k8s.io~1queue-name"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *esc = api_json_pointer_escape(cases[i].key);
		char *path;
		json_t *doc = json_object(), *patch, *out = NULL;

		cr_assert_not_null(esc);
		cr_assert_str_eq(esc, cases[i].want);
		path = cu_asprintf("/%s", esc);
		patch = json_pack(
		    "[{s:s,s:s,s:i}]", "op", "add", "path", path, "value", 7);
		cr_assert_eq(
		    api_json_patch_apply(&out, doc, patch, NULL), CU_OK);
		cr_assert_eq(
		    json_integer_value(json_object_get(out, cases[i].key)), 7,
		    "key %s", cases[i].key);
		json_decref(out);
		json_decref(patch);
		json_decref(doc);
		cu_free(path);
		cu_free(esc);
	}
}

/* ---- RFC 7386 -------------------------------------------------------- */

static const struct patch_case merge_cases[] = {
    /* The examples of RFC 7386 appendix A. */
    {"A1", "{\"a\":\"b\"}", "{\"a\":\"c\"}", "{\"a\":\"c\"}", CU_OK, NULL},
    {"A2", "{\"a\":\"b\"}", "{\"b\":\"c\"}", "{\"a\":\"b\",\"b\":\"c\"}", CU_OK,
	NULL},
    {"A3 null deletes", "{\"a\":\"b\"}", "{\"a\":null}", "{}", CU_OK, NULL},
    {"A4", "{\"a\":\"b\",\"b\":\"c\"}", "{\"a\":null}", "{\"b\":\"c\"}", CU_OK,
	NULL},
    {"A5 array replaced", "{\"a\":[\"b\"]}", "{\"a\":\"c\"}", "{\"a\":\"c\"}",
	CU_OK, NULL},
    {"A6", "{\"a\":\"c\"}", "{\"a\":[\"b\"]}", "{\"a\":[\"b\"]}", CU_OK, NULL},
    {"A7 nested", "{\"a\":{\"b\":\"c\"}}", "{\"a\":{\"b\":\"d\",\"c\":null}}",
	"{\"a\":{\"b\":\"d\"}}", CU_OK, NULL},
    {"A8 arrays wholesale", "{\"a\":[{\"b\":\"c\"}]}", "{\"a\":[1]}",
	"{\"a\":[1]}", CU_OK, NULL},
    {"A9", "[\"a\",\"b\"]", "[\"c\",\"d\"]", "[\"c\",\"d\"]", CU_OK, NULL},
    {"A10 object over array", "[\"a\"]", "{\"a\":\"b\"}", "{\"a\":\"b\"}",
	CU_OK, NULL},
    {"A11 scalar patch", "{\"a\":\"foo\"}", "null", "null", CU_OK, NULL},
    {"A12", "{\"a\":\"foo\"}", "\"bar\"", "\"bar\"", CU_OK, NULL},
    {"A13 null kept in array", "{\"e\":null}", "{\"a\":1}",
	"{\"e\":null,\"a\":1}", CU_OK, NULL},
    {"A14", "[1,2]", "{\"a\":\"b\",\"c\":null}", "{\"a\":\"b\"}", CU_OK, NULL},
    {"A15 nested nulls dropped in new member", "{}",
	"{\"a\":{\"bb\":{\"ccc\":null}}}", "{\"a\":{\"bb\":{}}}", CU_OK, NULL},
    {"delete missing member is no-op", "{\"a\":1}", "{\"z\":null}", "{\"a\":1}",
	CU_OK, NULL},
    {"labels merge", "{\"metadata\":{\"labels\":{\"a\":\"1\",\"b\":\"2\"}}}",
	"{\"metadata\":{\"labels\":{\"b\":null,\"c\":\"3\"}}}",
	"{\"metadata\":{\"labels\":{\"a\":\"1\",\"c\":\"3\"}}}", CU_OK, NULL},
    {"finalizers replaced wholesale", "{\"metadata\":{\"finalizers\":[\"a\"]}}",
	"{\"metadata\":{\"finalizers\":[\"b\"]}}",
	"{\"metadata\":{\"finalizers\":[\"b\"]}}", CU_OK, NULL},
    {"directive keys are plain data", "{}", "{\"$patch\":\"delete\"}",
	"{\"$patch\":\"delete\"}", CU_OK, NULL},
};

Test(api_patch, merge_patch_rfc7386_examples)
{
	RUN(merge_cases, MERGE_PATCH);
}

/* ---- strategic merge patch ----------------------------------------- */

static const struct patch_case smp_pod_cases[] = {
    {"containers merge by name",
	"{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"a:1\"},"
	"{\"name\":\"b\",\"image\":\"b:1\"}]}}",
	"{\"spec\":{\"containers\":[{\"name\":\"b\",\"image\":\"b:2\"},"
	"{\"name\":\"c\",\"image\":\"c:1\"}]}}",
	"{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"a:1\"},"
	"{\"name\":\"b\",\"image\":\"b:2\"},{\"name\":\"c\",\"image\":\"c:1\"}]"
	"}}",
	CU_OK, NULL},
    {"env merges by name inside a container",
	"{\"spec\":{\"containers\":[{\"name\":\"a\",\"env\":[{\"name\":\"X\","
	"\"value\":\"1\"},{\"name\":\"Y\",\"value\":\"2\"}]}]}}",
	"{\"spec\":{\"containers\":[{\"name\":\"a\",\"env\":[{\"name\":\"Y\","
	"\"value\":\"3\"},{\"name\":\"Z\",\"value\":\"4\"}]}]}}",
	"{\"spec\":{\"containers\":[{\"name\":\"a\",\"env\":[{\"name\":\"X\","
	"\"value\":\"1\"},{\"name\":\"Y\",\"value\":\"3\"},{\"name\":\"Z\","
	"\"value\":\"4\"}]}]}}",
	CU_OK, NULL},
    {"ports merge by containerPort",
	"{\"spec\":{\"containers\":[{\"name\":\"a\",\"ports\":[{"
	"\"containerPort\":80,\"name\":\"http\"}]}]}}",
	"{\"spec\":{\"containers\":[{\"name\":\"a\",\"ports\":[{"
	"\"containerPort\":80,\"protocol\":\"TCP\"},{\"containerPort\":443}]}]}"
	"}",
	"{\"spec\":{\"containers\":[{\"name\":\"a\",\"ports\":[{"
	"\"containerPort\":80,\"name\":\"http\",\"protocol\":\"TCP\"},"
	"{\"containerPort\":443}]}]}}",
	CU_OK, NULL},
    {"null in a merged item deletes the field",
	"{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"a:1\","
	"\"args\":[\"x\"]}]}}",
	"{\"spec\":{\"containers\":[{\"name\":\"a\",\"args\":null}]}}",
	"{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"a:1\"}]}}",
	CU_OK, NULL},
    {"tolerations are atomic",
	"{\"spec\":{\"tolerations\":[{\"key\":\"a\"},{\"key\":\"b\"}]}}",
	"{\"spec\":{\"tolerations\":[{\"key\":\"c\"}]}}",
	"{\"spec\":{\"tolerations\":[{\"key\":\"c\"}]}}", CU_OK, NULL},
    {"finalizers are a union", "{\"metadata\":{\"finalizers\":[\"a\",\"b\"]}}",
	"{\"metadata\":{\"finalizers\":[\"b\",\"c\"]}}",
	"{\"metadata\":{\"finalizers\":[\"a\",\"b\",\"c\"]}}", CU_OK, NULL},
    {"deleteFromPrimitiveList removes finalizers",
	"{\"metadata\":{\"finalizers\":[\"a\",\"b\",\"c\"]}}",
	"{\"metadata\":{\"$deleteFromPrimitiveList/"
	"finalizers\":[\"b\",\"x\"]}}",
	"{\"metadata\":{\"finalizers\":[\"a\",\"c\"]}}", CU_OK, NULL},
    {"deleteFromPrimitiveList before union",
	"{\"metadata\":{\"finalizers\":[\"a\",\"b\"]}}",
	"{\"metadata\":{\"$deleteFromPrimitiveList/finalizers\":[\"a\"],"
	"\"finalizers\":[\"d\"]}}",
	"{\"metadata\":{\"finalizers\":[\"b\",\"d\"]}}", CU_OK, NULL},
    {"ownerReferences merge by uid",
	"{\"metadata\":{\"ownerReferences\":[{\"uid\":\"1\",\"name\":\"x\"}]}}",
	"{\"metadata\":{\"ownerReferences\":[{\"uid\":\"2\",\"name\":\"y\"}]}}",
	"{\"metadata\":{\"ownerReferences\":[{\"uid\":\"1\",\"name\":\"x\"},"
	"{\"uid\":\"2\",\"name\":\"y\"}]}}",
	CU_OK, NULL},
    {"patch delete removes a list item",
	"{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"},"
	"{\"name\":\"c\"}]}}",
	"{\"spec\":{\"containers\":[{\"name\":\"b\",\"$patch\":\"delete\"}]}}",
	"{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"c\"}]}}",
	CU_OK, NULL},
    {"patch delete of a missing item is a no-op",
	"{\"spec\":{\"volumes\":[{\"name\":\"a\"}]}}",
	"{\"spec\":{\"volumes\":[{\"name\":\"z\",\"$patch\":\"delete\"}]}}",
	"{\"spec\":{\"volumes\":[{\"name\":\"a\"}]}}", CU_OK, NULL},
    {"patch replace item replaces the list",
	"{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"}]}}",
	"{\"spec\":{\"containers\":[{\"$patch\":\"replace\"},{\"name\":\"c\"}]}"
	"}",
	"{\"spec\":{\"containers\":[{\"name\":\"c\"}]}}", CU_OK, NULL},
    {"patch replace on a map",
	"{\"metadata\":{\"labels\":{\"a\":\"1\",\"b\":\"2\"}}}",
	"{\"metadata\":{\"labels\":{\"$patch\":\"replace\",\"c\":\"3\"}}}",
	"{\"metadata\":{\"labels\":{\"c\":\"3\"}}}", CU_OK, NULL},
    {"patch delete on a map",
	"{\"metadata\":{\"labels\":{\"a\":\"1\"}},\"spec\":{}}",
	"{\"metadata\":{\"labels\":{\"$patch\":\"delete\"}}}",
	"{\"metadata\":{},\"spec\":{}}", CU_OK, NULL},
    {"patch merge on a map is plain merge",
	"{\"metadata\":{\"labels\":{\"a\":\"1\"}}}",
	"{\"metadata\":{\"labels\":{\"$patch\":\"merge\",\"b\":\"2\"}}}",
	"{\"metadata\":{\"labels\":{\"a\":\"1\",\"b\":\"2\"}}}", CU_OK, NULL},
    {"setElementOrder reorders merged list",
	"{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"}]}}",
	"{\"spec\":{\"$setElementOrder/containers\":[{\"name\":\"c\"},"
	"{\"name\":\"b\"},{\"name\":\"a\"}],\"containers\":[{\"name\":\"c\"}]}"
	"}",
	"{\"spec\":{\"containers\":[{\"name\":\"c\"},{\"name\":\"b\"},"
	"{\"name\":\"a\"}]}}",
	CU_OK, NULL},
    {"setElementOrder keeps server-only items in place",
	"{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"s\"},"
	"{\"name\":\"b\"}]}}",
	"{\"spec\":{\"$setElementOrder/containers\":[{\"name\":\"b\"},"
	"{\"name\":\"a\"}]}}",
	"{\"spec\":{\"containers\":[{\"name\":\"b\"},{\"name\":\"s\"},"
	"{\"name\":\"a\"}]}}",
	CU_OK, NULL},
    {"setElementOrder on env inside a container",
	"{\"spec\":{\"containers\":[{\"name\":\"a\",\"env\":[{\"name\":\"X\"},"
	"{\"name\":\"Y\"}]}]}}",
	"{\"spec\":{\"containers\":[{\"name\":\"a\",\"$setElementOrder/env\":["
	"{\"name\":\"Y\"},{\"name\":\"X\"}]}]}}",
	"{\"spec\":{\"containers\":[{\"name\":\"a\",\"env\":[{\"name\":\"Y\"},"
	"{\"name\":\"X\"}]}]}}",
	CU_OK, NULL},
    {"setElementOrder of finalizers",
	"{\"metadata\":{\"finalizers\":[\"a\",\"b\"]}}",
	"{\"metadata\":{\"$setElementOrder/finalizers\":[\"b\",\"a\"]}}",
	"{\"metadata\":{\"finalizers\":[\"b\",\"a\"]}}", CU_OK, NULL},
    {"retainKeys drops unlisted keys",
	"{\"spec\":{\"strategy\":{\"type\":\"A\",\"rollingUpdate\":{\"x\":1}}}"
	"}",
	"{\"spec\":{\"strategy\":{\"$retainKeys\":[\"type\"],\"type\":\"B\"}}}",
	"{\"spec\":{\"strategy\":{\"type\":\"B\"}}}", CU_OK, NULL},
    {"retainKeys keeps listed original keys",
	"{\"spec\":{\"v\":{\"a\":1,\"b\":2,\"c\":3}}}",
	"{\"spec\":{\"v\":{\"$retainKeys\":[\"a\",\"b\"],\"b\":5}}}",
	"{\"spec\":{\"v\":{\"a\":1,\"b\":5}}}", CU_OK, NULL},
    {"directives in atomic list items are dropped", "{\"spec\":{}}",
	"{\"spec\":{\"tolerations\":[{\"key\":\"a\",\"$patch\":\"merge\"}]}}",
	"{\"spec\":{\"tolerations\":[{\"key\":\"a\"}]}}", CU_OK, NULL},
    {"new map with directives inside", "{}",
	"{\"metadata\":{\"$setElementOrder/finalizers\":[\"x\"],"
	"\"finalizers\":[\"x\"],\"labels\":{\"$patch\":\"merge\",\"a\":null,"
	"\"b\":\"1\"}}}",
	"{\"metadata\":{\"finalizers\":[\"x\"],\"labels\":{\"b\":\"1\"}}}",
	CU_OK, NULL},
    {"root patch delete empties the object", "{\"a\":1}",
	"{\"$patch\":\"delete\"}", "{}", CU_OK, NULL},
    {"conditions merge by type",
	"{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\"}"
	"]}}",
	"{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]"
	"}}",
	"{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]"
	"}}",
	CU_OK, NULL},
};

Test(api_patch, smp_pod_lists_and_directives)
{
	RUN(smp_pod_cases, SMP_POD);
}

static const struct patch_case smp_job_cases[] = {
    {"job template containers merge by name",
	"{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"a\","
	"\"image\":\"1\"}],\"tolerations\":[{\"key\":\"t\"}]}}}}",
	"{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"b\","
	"\"image\":\"2\"}]}}}}",
	"{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"a\","
	"\"image\":\"1\"},{\"name\":\"b\",\"image\":\"2\"}],\"tolerations\":["
	"{\"key\":\"t\"}]}}}}",
	CU_OK, NULL},
    {"job volumeMounts by mountPath",
	"{\"spec\":{\"template\":{\"spec\":{\"initContainers\":[{\"name\":"
	"\"i\","
	"\"volumeMounts\":[{\"mountPath\":\"/a\",\"name\":\"v\"}]}]}}}}",
	"{\"spec\":{\"template\":{\"spec\":{\"initContainers\":[{\"name\":"
	"\"i\","
	"\"volumeMounts\":[{\"mountPath\":\"/a\",\"readOnly\":true}]}]}}}}",
	"{\"spec\":{\"template\":{\"spec\":{\"initContainers\":[{\"name\":"
	"\"i\","
	"\"volumeMounts\":[{\"mountPath\":\"/a\",\"name\":\"v\",\"readOnly\":"
	"true}]}]}}}}",
	CU_OK, NULL},
    {"job pod spec path of a Pod is atomic in a Job",
	"{\"spec\":{\"containers\":[{\"name\":\"a\"}]}}",
	"{\"spec\":{\"containers\":[{\"name\":\"b\"}]}}",
	"{\"spec\":{\"containers\":[{\"name\":\"b\"}]}}", CU_OK, NULL},
    {"job suspend flips like a merge patch",
	"{\"spec\":{\"suspend\":true,\"parallelism\":2}}",
	"{\"spec\":{\"suspend\":false}}",
	"{\"spec\":{\"suspend\":false,\"parallelism\":2}}", CU_OK, NULL},
};

Test(api_patch, smp_job_pod_template_lists)
{
	RUN(smp_job_cases, SMP_JOB);
}

static const struct patch_case smp_none_cases[] = {
    {"unknown kind: containers replaced",
	"{\"spec\":{\"containers\":[{\"name\":\"a\"}]}}",
	"{\"spec\":{\"containers\":[{\"name\":\"b\"}]}}",
	"{\"spec\":{\"containers\":[{\"name\":\"b\"}]}}", CU_OK, NULL},
    {"unknown kind: finalizers replaced",
	"{\"metadata\":{\"finalizers\":[\"a\"]}}",
	"{\"metadata\":{\"finalizers\":[\"b\"]}}",
	"{\"metadata\":{\"finalizers\":[\"b\"]}}", CU_OK, NULL},
    {"unknown kind: directives still obeyed",
	"{\"metadata\":{\"labels\":{\"a\":\"1\"}}}",
	"{\"metadata\":{\"labels\":{\"$patch\":\"replace\",\"b\":\"2\"}}}",
	"{\"metadata\":{\"labels\":{\"b\":\"2\"}}}", CU_OK, NULL},
};

Test(api_patch, smp_unknown_kind_falls_back_to_atomic_lists)
{
	cr_assert_null(api_smp_schema_for("kueue.x-k8s.io", "Workload"));
	cr_assert_null(api_smp_schema_for("", "Job"));
	cr_assert_null(api_smp_schema_for(NULL, "Pod"));
	RUN(smp_none_cases, SMP_NONE);
}

static const struct patch_case smp_bad_cases[] = {
    {"patch not an object", "{}", "[1]", NULL, CU_EPARSE, "not an object"},
    {"document not an object", "[]", "{}", NULL, CU_EINVAL,
	"document is not an object"},
    {"bad patch directive", "{}", "{\"spec\":{\"$patch\":\"frob\"}}", NULL,
	CU_EPARSE, "strategic merge patch spec: $patch must be"},
    {"patch directive not a string", "{}", "{\"$patch\":1}", NULL, CU_EPARSE,
	"(root): $patch must be"},
    {"retainKeys not a list", "{}", "{\"spec\":{\"$retainKeys\":\"a\"}}", NULL,
	CU_EPARSE, "$retainKeys must be a list"},
    {"retainKeys item not a string", "{}", "{\"spec\":{\"$retainKeys\":[1]}}",
	NULL, CU_EPARSE, "not a string"},
    {"patch key outside retainKeys", "{}",
	"{\"spec\":{\"$retainKeys\":[\"a\"],\"b\":1}}", NULL, CU_EINVAL,
	"\"b\" is not in $retainKeys"},
    {"setElementOrder not a list", "{}",
	"{\"spec\":{\"$setElementOrder/containers\":{}}}", NULL, CU_EPARSE,
	"$setElementOrder/containers must be a list"},
    {"setElementOrder item without merge key",
	"{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"}]}}",
	"{\"spec\":{\"$setElementOrder/containers\":[{\"image\":\"x\"}]}}",
	NULL, CU_EPARSE, "has no merge key \"name\""},
    {"deleteFromPrimitiveList not a list", "{}",
	"{\"metadata\":{\"$deleteFromPrimitiveList/finalizers\":\"a\"}}", NULL,
	CU_EPARSE, "must be a list"},
    {"merge list item without key", "{}",
	"{\"spec\":{\"containers\":[{\"image\":\"x\"}]}}", NULL, CU_EINVAL,
	"spec.containers: list item 0 has no merge key \"name\""},
    {"merge list item not an object", "{}", "{\"spec\":{\"volumes\":[\"v\"]}}",
	NULL, CU_EINVAL, "list item 0 is not an object"},
    {"object in primitive list", "{}",
	"{\"metadata\":{\"finalizers\":[{\"a\":1}]}}", NULL, CU_EINVAL,
	"objects are not allowed"},
};

Test(api_patch, smp_malformed_patches_fail_with_path)
{
	RUN(smp_bad_cases, SMP_POD);
}

Test(api_patch, smp_schemas_cover_builtin_kinds)
{
	static const char *const kinds[][2] = {
	    {"", "ConfigMap"},
	    {"", "Secret"},
	    {"", "Namespace"},
	    {"", "Event"},
	    {"", "Pod"},
	    {"", "ServiceAccount"},
	    {"batch", "Job"},
	    {"coordination.k8s.io", "Lease"},
	    {"admissionregistration.k8s.io", "MutatingWebhookConfiguration"},
	    {"admissionregistration.k8s.io", "ValidatingWebhookConfiguration"},
	};
	size_t i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		const struct api_smp_schema *s =
		    api_smp_schema_for(kinds[i][0], kinds[i][1]);
		json_t *doc = parse("{\"metadata\":{\"finalizers\":[\"a\"]}}");
		json_t *patch =
		    parse("{\"metadata\":{\"finalizers\":[\"b\"]}}");
		json_t *out = NULL;

		cr_assert_not_null(s, "%s/%s", kinds[i][0], kinds[i][1]);
		cr_assert_str_eq(s->kind, kinds[i][1]);
		cr_assert_eq(api_smp_apply(&out, doc, patch, s, NULL), CU_OK);
		expect_json(out,
		    "{\"metadata\":{\"finalizers\":[\"a\",\"b\"]}}",
		    kinds[i][1]);
		json_decref(doc);
		json_decref(patch);
	}
}

Test(api_patch, smp_webhooks_merge_by_name)
{
	json_t *doc = parse("{\"webhooks\":[{\"name\":\"a\",\"sideEffects\":"
			    "\"None\"},{\"name\":\"b\"}]}");
	json_t *patch =
	    parse("{\"webhooks\":[{\"name\":\"a\",\"failurePolicy\":"
		  "\"Fail\"}]}");
	json_t *out = NULL;

	cr_assert_eq(api_smp_apply(&out, doc, patch,
			 api_smp_schema_for("admissionregistration.k8s.io",
			     "ValidatingWebhookConfiguration"),
			 NULL),
	    CU_OK);
	expect_json(out,
	    "{\"webhooks\":[{\"name\":\"a\",\"sideEffects\":\"None\","
	    "\"failurePolicy\":\"Fail\"},{\"name\":\"b\"}]}",
	    "webhooks");
	json_decref(doc);
	json_decref(patch);
}

/* ---- diff ------------------------------------------------------------ */

static const char *const diff_docs[][2] = {
    {"{\"a\":1}", "{\"a\":2}"},
    {"{\"a\":1,\"b\":{\"c\":[1,2]}}", "{\"b\":{\"c\":[2],\"d\":{}}}"},
    {"{\"spec\":{\"suspend\":true}}", "{\"spec\":{\"suspend\":false}}"},
    {"{\"a\":{\"b\":1}}", "{\"a\":[1,{\"x\":null}]}"},
    {"{\"a\":[1]}", "{\"a\":{\"b\":{\"c\":\"d\"}}}"},
    {"{\"a\":1}", "{\"a\":1.0}"},
    {"{}", "{\"metadata\":{\"labels\":{\"x\":\"y\"}}}"},
    {"{\"metadata\":{\"labels\":{\"x\":\"y\"}}}", "{}"},
    {"{\"a\":null}", "{}"},
    {"[1,2]", "{\"a\":{}}"},
    {"{\"a\":1}", "null"},
    {"{\"a\":1}", "[{\"b\":null}]"},
    {"\"s\"", "3"},
};

Test(api_patch, merge_patch_diff_round_trips)
{
	size_t i;

	for (i = 0; i < sizeof(diff_docs) / sizeof(diff_docs[0]); i++) {
		json_t *a = parse(diff_docs[i][0]), *b = parse(diff_docs[i][1]);
		json_t *p = NULL, *res = NULL;
		cu_error err;

		cr_assert_eq(api_merge_patch_diff(&p, a, b, &err), CU_OK,
		    "case %zu: %s", i, err.msg);
		cr_assert_not_null(p, "case %zu: unequal docs need a patch", i);
		cr_assert_eq(api_merge_patch_apply(&res, a, p, &err), CU_OK);
		cr_assert(json_equal(res, b), "case %zu: round trip", i);
		json_decref(res);
		json_decref(p);
		json_decref(a);
		json_decref(b);
	}
}

Test(api_patch, merge_patch_diff_is_minimal)
{
	json_t *a =
	    parse("{\"spec\":{\"suspend\":true,\"parallelism\":3},"
		  "\"metadata\":{\"name\":\"j\",\"labels\":{\"x\":\"1\"}}}");
	json_t *b = parse("{\"spec\":{\"suspend\":false,\"parallelism\":3},"
			  "\"metadata\":{\"name\":\"j\"}}");
	json_t *p = NULL;

	cr_assert_eq(api_merge_patch_diff(&p, a, b, NULL), CU_OK);
	expect_json(p,
	    "{\"spec\":{\"suspend\":false},\"metadata\":{\"labels\":null}}",
	    "minimal diff");
	json_decref(a);
	json_decref(b);
}

Test(api_patch, merge_patch_diff_of_equal_docs_is_null)
{
	static const char *const docs[] = {
	    "{}",
	    "{\"a\":{\"b\":[1,{\"c\":null}]}}",
	    "null",
	    "[1,2]",
	};
	size_t i;

	for (i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		json_t *a = parse(docs[i]), *b = parse(docs[i]);
		json_t *p = (json_t *)1;

		cr_assert_eq(api_merge_patch_diff(&p, a, b, NULL), CU_OK);
		cr_assert_null(p, "case %zu", i);
		json_decref(a);
		json_decref(b);
	}
}

Test(api_patch, merge_patch_diff_rejects_unexpressible_null)
{
	static const char *const cases[][2] = {
	    {"{\"a\":1}", "{\"a\":null}"},
	    {"{}", "{\"a\":{\"b\":null}}"},
	    {"{\"a\":5}", "{\"a\":{\"b\":null}}"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *a = parse(cases[i][0]), *b = parse(cases[i][1]);
		json_t *p = (json_t *)1;
		cu_error err;

		cr_assert_eq(api_merge_patch_diff(&p, a, b, &err), CU_EINVAL);
		cr_assert_null(p);
		cr_assert(
		    strstr(err.msg, "cannot set null") != NULL, "%s", err.msg);
		json_decref(a);
		json_decref(b);
	}
}

/* ---- allocation failure --------------------------------------------- */

Test(api_patch, pointer_escape_fails_cleanly_without_memory)
{
	char *s;

	cu_mem_fail_after(1, false);
	s = api_json_pointer_escape("a/b");
	cu_mem_fail_after(0, false);
	cr_assert_null(s);
}

Test(api_patch, json_patch_fails_cleanly_without_memory)
{
	json_t *doc = parse("{\"a\":{\"b\":1}}");
	json_t *patch =
	    parse("[{\"op\":\"move\",\"from\":\"/a/b\",\"path\":\"/c\"}]");
	json_t *out = NULL;
	uint64_t n;
	int rc = CU_ENOMEM;

	/* Fail each of our own allocations in turn; the loop ends once the
	 * apply no longer needs more allocations than we let it have. */
	for (n = 1; rc == CU_ENOMEM && n < 50; n++) {
		cu_error err;

		cu_mem_fail_after(n, false);
		rc = api_json_patch_apply(&out, doc, patch, &err);
		cu_mem_fail_after(0, false);
		if (rc == CU_ENOMEM)
			cr_assert_null(out);
	}
	cr_assert_eq(rc, CU_OK);
	expect_json(out, "{\"a\":{},\"c\":1}", "after torture");
	json_decref(doc);
	json_decref(patch);
}

/* Mutating a result must never reach the caller's inputs: no node of the
 * output may be shared with the document or the patch. */
Test(api_patch, results_share_no_nodes_with_inputs)
{
	json_t *doc =
	    parse("{\"spec\":{\"containers\":[{\"name\":\"a\","
		  "\"env\":[{\"name\":\"X\"}]}],\"keep\":{\"k\":1}}}");
	json_t *smp = parse("{\"spec\":{\"containers\":[{\"name\":\"b\","
			    "\"env\":[{\"name\":\"Y\"}]}],\"new\":{\"n\":1}}}");
	json_t *jp = parse("[{\"op\":\"add\",\"path\":\"/spec/new\","
			   "\"value\":{\"n\":1}}]");
	char *doc_before = dump(doc), *smp_before = dump(smp),
	     *jp_before = dump(jp), *s;
	json_t *outs[3] = {NULL, NULL, NULL};
	size_t i;

	cr_assert_eq(api_smp_apply(&outs[0], doc, smp,
			 api_smp_schema_for("", "Pod"), NULL),
	    CU_OK);
	cr_assert_eq(api_merge_patch_apply(&outs[1], doc, smp, NULL), CU_OK);
	cr_assert_eq(api_json_patch_apply(&outs[2], doc, jp, NULL), CU_OK);
	for (i = 0; i < 3; i++) {
		json_t *spec = json_object_get(outs[i], "spec");
		json_t *c0 =
		    json_array_get(json_object_get(spec, "containers"), 0);

		json_object_set_new(
		    json_object_get(spec, "keep"), "k", json_string("changed"));
		json_object_set_new(
		    json_object_get(spec, "new"), "n", json_string("changed"));
		json_array_clear(json_object_get(c0, "env"));
		json_decref(outs[i]);
	}
	s = dump(doc);
	cr_assert_str_eq(s, doc_before);
	cu_free(s);
	s = dump(smp);
	cr_assert_str_eq(s, smp_before);
	cu_free(s);
	s = dump(jp);
	cr_assert_str_eq(s, jp_before);
	cu_free(s);
	cu_free(doc_before);
	cu_free(smp_before);
	cu_free(jp_before);
	json_decref(doc);
	json_decref(smp);
	json_decref(jp);
}
