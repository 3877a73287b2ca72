/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/api_yaml_test.c - api/yaml: scalar resolution against
 * sigs.k8s.io/yaml (go-yaml v2) semantics, structure, limits, rejected
 * constructs with positioned errors, and the path -> line index.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/yaml.h"

/* YAML text -> compact JSON text in out; returns the load result. */
static int y2j(const char *yaml, char *out, size_t outsz, cu_error *err)
{
	json_t *j = NULL;
	size_t n;
	int rc;

	out[0] = '\0';
	rc = api_yaml_load(&j, NULL, yaml, strlen(yaml), NULL, err);
	if (rc != CU_OK) {
		cr_assert_null(j);
		return rc;
	}
	n = json_dumpb(j, out, outsz - 1, JSON_COMPACT | JSON_ENCODE_ANY);
	cr_assert(n < outsz - 1, "output too long");
	out[n] = '\0';
	json_decref(j);
	return rc;
}

static void expect_json(const char *yaml, const char *want)
{
	char got[4096];
	cu_error err;

	cu_error_clear(&err);
	cr_assert_eq(y2j(yaml, got, sizeof(got), &err), CU_OK, "yaml %s: %s",
	    yaml, err.msg);
	cr_assert_str_eq(got, want, "yaml %s", yaml);
}

static void expect_error(const char *yaml, int code, const char *msg_part)
{
	char got[4096];
	cu_error err;

	cu_error_clear(&err);
	cr_assert_eq(y2j(yaml, got, sizeof(got), &err), code,
	    "yaml %s: got %s / %s", yaml, got, err.msg);
	cr_assert_eq(err.code, code);
	cr_assert(strstr(err.msg, msg_part) != NULL,
	    "message \"%s\" lacks \"%s\"", err.msg, msg_part);
}

Test(api_yaml, resolves_plain_scalars_like_sigs_k8s_yaml)
{
	static const struct {
		const char *yaml, *json;
	} table[] = {
	    {"v: yes", "{\"v\":true}"},
	    {"v: No", "{\"v\":false}"},
	    {"v: on", "{\"v\":true}"},
	    {"v: OFF", "{\"v\":false}"},
	    {"v: y", "{\"v\":true}"},
	    {"v: n", "{\"v\":false}"},
	    {"v: True", "{\"v\":true}"},
	    {"v: tRUE", "{\"v\":\"tRUE\"}"},
	    {"v: ~", "{\"v\":null}"},
	    {"v: null", "{\"v\":null}"},
	    {"v: Null", "{\"v\":null}"},
	    {"v:", "{\"v\":null}"},
	    {"v: 0x1F", "{\"v\":31}"},
	    {"v: -0x1F", "{\"v\":-31}"},
	    {"v: 010", "{\"v\":8}"},
	    {"v: 0o17", "{\"v\":15}"},
	    {"v: 0b101", "{\"v\":5}"},
	    {"v: 08", "{\"v\":8}"},
	    {"v: 1_000", "{\"v\":1000}"},
	    {"v: +12", "{\"v\":12}"},
	    {"v: 1e3", "{\"v\":1000}"},
	    {"v: 1.5", "{\"v\":1.5}"},
	    {"v: .5", "{\"v\":0.5}"},
	    {"v: -.5e1", "{\"v\":-5}"},
	    {"v: 1.", "{\"v\":1}"},
	    {"v: 1e400", "{\"v\":\"1e400\"}"},
	    {"v: 0x", "{\"v\":\"0x\"}"},
	    {"v: 1.2.3", "{\"v\":\"1.2.3\"}"},
	    {"v: 500m", "{\"v\":\"500m\"}"},
	    {"v: 2Gi", "{\"v\":\"2Gi\"}"},
	    {"v: 2024-01-02", "{\"v\":\"2024-01-02\"}"},
	    {"v: 9223372036854775807", "{\"v\":9223372036854775807}"},
	    {"v: -9223372036854775808", "{\"v\":-9223372036854775808}"},
	    {"v: .", "{\"v\":\".\"}"},
	    {"v: -x", "{\"v\":\"-x\"}"},
	    {"v: +", "{\"v\":\"+\"}"},
	    {"v: yes please", "{\"v\":\"yes please\"}"},
	    {"v: \"yes\"", "{\"v\":\"yes\"}"},
	    {"v: '010'", "{\"v\":\"010\"}"},
	    {"v: \"\"", "{\"v\":\"\"}"},
	    {"v: ''", "{\"v\":\"\"}"},
	    {"v: \"~\"", "{\"v\":\"~\"}"},
	    {"v: |\n  12\n", "{\"v\":\"12\\n\"}"},
	    {"v: !!str 12", "{\"v\":\"12\"}"},
	    {"v: !!int \"12\"", "{\"v\":12}"},
	    {"v: !!float 2", "{\"v\":2}"},
	    {"v: !custom 12", "{\"v\":\"12\"}"},
	    {"v: \"a\\tb\\u00e9\"", "{\"v\":\"a\\tb\xc3\xa9\"}"},
	};
	size_t i;

	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		expect_json(table[i].yaml, table[i].json);
}

Test(api_yaml, uint64_beyond_int64_becomes_real)
{
	json_t *j = NULL;
	cu_error err;
	const char *y = "v: 18446744073709551615";

	cr_assert_eq(api_yaml_load(&j, NULL, y, strlen(y), NULL, &err), CU_OK);
	cr_assert(json_is_real(json_object_get(j, "v")));
	cr_assert_float_eq(json_real_value(json_object_get(j, "v")),
	    18446744073709551615.0, 1e3);
	json_decref(j);
}

Test(api_yaml, rejects_inf_and_nan_values_with_position)
{
	expect_error("a: 1\nv: .inf", CU_EPARSE, "line 2, column 4: .inf");
	expect_error("v: -.Inf", CU_EPARSE, "cannot be represented in JSON");
	expect_error("v: .NaN", CU_EPARSE, "line 1, column 4");
}

Test(api_yaml, rejects_tagged_scalar_of_wrong_type)
{
	expect_error("v: !!int abc", CU_EPARSE,
	    "line 1, column 4: cannot decode !!str \"abc\" as a !!int");
	expect_error("v: !!bool 1", CU_EPARSE, "cannot decode !!int");
	expect_error("v: !!binary aGVsbG8=", CU_EUNSUPPORTED, "!!binary");
}

Test(api_yaml, converts_map_keys_to_strings)
{
	expect_json("1: a\n2.5: b\nyes: c\n0x10: d\n\"q\": e",
	    "{\"1\":\"a\",\"2.5\":\"b\",\"true\":\"c\",\"16\":\"d\",\"q\":"
	    "\"e\"}");
	expect_json("1e6: a\n0.1: b\n1.0e-5: c",
	    "{\"1e+06\":\"a\",\"0.1\":\"b\",\"1e-05\":\"c\"}");
	expect_error("~: a", CU_EPARSE, "line 1, column 1: null map key");
	expect_error("? [a]\n: b", CU_EPARSE, "map keys must be scalars");
	expect_error("<<: {a: 1}", CU_EUNSUPPORTED, "merge keys");
}

Test(api_yaml, builds_nested_block_and_flow_collections)
{
	expect_json("a:\n  b:\n    - 1\n    - x: [2, {c: d}]\n  e: {}\nf: []\n",
	    "{\"a\":{\"b\":[1,{\"x\":[2,{\"c\":\"d\"}]}],\"e\":{}},\"f\":[]}");
	expect_json("[a, {b: c}, [1, 2]]", "[\"a\",{\"b\":\"c\"},[1,2]]");
	expect_json("- - - deep\n", "[[[\"deep\"]]]");
	expect_json("plain scalar", "\"plain scalar\"");
	expect_json(
	    "key: >\n  folded\n  text\n", "{\"key\":\"folded text\\n\"}");
}

Test(api_yaml, ignores_comments)
{
	expect_json(
	    "# head\na: 1 # trailing\n# between\nb:\n  # inner\n  - x\n",
	    "{\"a\":1,\"b\":[\"x\"]}");
}

Test(api_yaml, empty_input_is_null)
{
	expect_json("", "null");
	expect_json("# only a comment\n", "null");
	expect_json("---\n", "null");
	expect_json("---\n...\n---\n", "null");
	expect_json("\n\n   \n", "null");
}

Test(api_yaml, load_skips_empty_documents_and_rejects_two)
{
	expect_json("---\n---\na: 1\n---\n", "{\"a\":1}");
	expect_error("a: 1\n---\nb: 2\n", CU_EPARSE,
	    "line 2, column 1: expected a single document");
}

Test(api_yaml, load_all_returns_every_non_empty_document)
{
	const char *y = "a: 1\n---\n# nothing\n---\n- x\n---\n~\n---\nlast\n";
	json_t *j = NULL;
	char got[256];
	size_t n;
	cu_error err;

	cr_assert_eq(api_yaml_load_all(&j, y, strlen(y), NULL, &err), CU_OK,
	    "%s", err.msg);
	n = json_dumpb(j, got, sizeof(got) - 1, JSON_COMPACT);
	got[n] = '\0';
	cr_assert_str_eq(got, "[{\"a\":1},[\"x\"],\"last\"]");
	json_decref(j);

	cr_assert_eq(api_yaml_load_all(&j, "", 0, NULL, &err), CU_OK);
	cr_assert(json_is_array(j));
	cr_assert_eq(json_array_size(j), 0);
	json_decref(j);

	y = "a: 1\n---\nb: [\n";
	cr_assert_eq(
	    api_yaml_load_all(&j, y, strlen(y), NULL, &err), CU_EPARSE);
	cr_assert_null(j);
	cr_assert(strncmp(err.msg, "line ", 5) == 0, "%s", err.msg);
}

Test(api_yaml, rejects_aliases_and_anchors_with_line)
{
	expect_error("a: &x 1\nb: 2\n", CU_EUNSUPPORTED,
	    "line 1, column 4: anchors are not allowed (&x)");
	expect_error("a: [1]\nb: *x\n", CU_EUNSUPPORTED,
	    "line 2, column 4: aliases are not allowed (*x)");
	expect_error("base: &b {a: 1}\nderived:\n  <<: *b\n", CU_EUNSUPPORTED,
	    "anchors are not allowed");
}

Test(api_yaml, rejects_duplicate_keys_naming_key_and_line)
{
	expect_error("a: 1\nb: 2\na: 3\n", CU_EPARSE,
	    "line 3, column 1: duplicate key \"a\" (first at line 1)");
	expect_error("m:\n  x: 1\n  \"x\": 2\n", CU_EPARSE,
	    "line 3, column 3: duplicate key \"x\" (first at line 2)");
	/* 1 and "1" collide once converted to JSON keys. */
	expect_error("1: a\n\"1\": b\n", CU_EPARSE, "duplicate key \"1\"");
	/* Same key in sibling maps is fine. */
	expect_json("- a: 1\n- a: 2\n", "[{\"a\":1},{\"a\":2}]");
}

Test(api_yaml, reports_tab_indentation_with_line_and_column)
{
	expect_error("a:\n\tb: 1\n", CU_EPARSE,
	    "line 2, column 1: found character that cannot start any token");
	expect_error("a:\n  b: 1\n\tc: 2\n", CU_EPARSE,
	    "line 3, column 1: found a tab character that violates "
	    "indentation");
}

Test(api_yaml, reports_syntax_errors_with_line_and_column)
{
	expect_error("a: [1, 2\n", CU_EPARSE, "line 2, column 1:");
	expect_error("a: b: c\n", CU_EPARSE,
	    "line 1, column 5: mapping values are not allowed in this "
	    "context");
	expect_error("a: \"unterminated\n", CU_EPARSE, "line 2, column 1:");
	expect_error("ok: 1\nbad: \xff\xfe\n", CU_EPARSE, "line 2, column 6:");
}

Test(api_yaml, enforces_depth_limit)
{
	struct api_yaml_limits lim = {0, 3, 0};
	json_t *j = NULL;
	cu_error err;
	char deep[300];
	int i;

	cr_assert_eq(api_yaml_load(&j, NULL, "[[[1]]]", 7, &lim, &err), CU_OK);
	json_decref(j);
	cr_assert_eq(
	    api_yaml_load(&j, NULL, "[[[[1]]]]", 9, &lim, &err), CU_ETOOBIG);
	cr_assert_null(j);
	cr_assert_str_eq(
	    err.msg, "line 1, column 4: nesting deeper than 3 levels");
	/* Default limit 64: 100 nested flow sequences fail. */
	for (i = 0; i < 100; i++)
		deep[i] = '[';
	for (i = 0; i < 100; i++)
		deep[100 + i] = ']';
	deep[200] = '\0';
	cr_assert_eq(
	    api_yaml_load(&j, NULL, deep, 200, NULL, &err), CU_ETOOBIG);
	cr_assert(strstr(err.msg, "deeper than 64") != NULL, "%s", err.msg);
}

Test(api_yaml, enforces_size_limit)
{
	struct api_yaml_limits lim = {10, 0, 0};
	json_t *j = NULL;
	cu_error err;

	cr_assert_eq(
	    api_yaml_load(&j, NULL, "a: 1234567", 10, &lim, &err), CU_OK);
	json_decref(j);
	cr_assert_eq(
	    api_yaml_load(&j, NULL, "a: 12345678", 11, &lim, &err), CU_ETOOBIG);
	cr_assert_null(j);
	cr_assert(strstr(err.msg, "11 bytes, limit is 10") != NULL);
}

Test(api_yaml, enforces_node_count_limit)
{
	struct api_yaml_limits lim = {0, 0, 5};
	json_t *j = NULL;
	cu_error err;

	/* map + 2 keys + 2 values = 5 nodes */
	cr_assert_eq(
	    api_yaml_load(&j, NULL, "a: 1\nb: 2\n", 10, &lim, &err), CU_OK);
	json_decref(j);
	cr_assert_eq(
	    api_yaml_load(&j, NULL, "a: 1\nb: 2\nc: 3\n", 15, &lim, &err),
	    CU_ETOOBIG);
	cr_assert_str_eq(err.msg, "line 3, column 1: more than 5 nodes");
	/* The count spans all documents of a stream. */
	cr_assert_eq(
	    api_yaml_load_all(&j, "[1, 2]\n---\n[3, 4]\n", 18, &lim, &err),
	    CU_ETOOBIG);
	cr_assert_null(j);
}

Test(api_yaml, input_need_not_be_nul_terminated)
{
	const char text[] = "a: 1\nb: 2";
	json_t *j = NULL;
	cu_error err;

	/* Only "a: 1\nb" is in range: b is a plain scalar key with no value,
	 * which is a syntax error; "a: 1" alone is fine. */
	cr_assert_eq(api_yaml_load(&j, NULL, text, 4, NULL, &err), CU_OK);
	cr_assert_eq(json_integer_value(json_object_get(j, "a")), 1);
	cr_assert_eq(json_object_size(j), 1);
	json_decref(j);
}

static const char kueue_cfg[] =
    "apiVersion: config.kueue.x-k8s.io/v1beta1\n" /* 1 */
    "kind: Configuration\n"			  /* 2 */
    "manageJobsWithoutQueueName: true\n"	  /* 3 */
    "managedJobsNamespaceSelector:\n"		  /* 4 */
    "  matchExpressions:\n"			  /* 5 */
    "    - key: kubernetes.io/metadata.name\n"	  /* 6 */
    "      operator: NotIn\n"			  /* 7 */
    "      values: [kube-system, kueue-system]\n" /* 8 */
    "integrations:\n"				  /* 9 */
    "  frameworks:\n"				  /* 10 */
    "  - batch/job\n"				  /* 11 */
    "  - jobset.x-k8s.io/jobset\n"		  /* 12 */
    "\"odd.key[0]\": 1\n";			  /* 13 */

Test(api_yaml, looks_up_lines_of_nested_paths)
{
	json_t *j = NULL;
	api_yaml_lines *lines = NULL;
	cu_error err;
	int col = -1;

	cr_assert_eq(
	    api_yaml_load(&j, &lines, kueue_cfg, strlen(kueue_cfg), NULL, &err),
	    CU_OK, "%s", err.msg);
	cr_assert_not_null(lines);
	cr_assert_eq(api_yaml_line(lines, "", &col), 1);
	cr_assert_eq(col, 1);
	cr_assert_eq(api_yaml_line(lines, "kind", &col), 2);
	cr_assert_eq(col, 1);
	cr_assert_eq(
	    api_yaml_line(lines, "integrations.frameworks[1]", &col), 12);
	cr_assert_eq(col, 5);
	cr_assert_eq(api_yaml_line(lines, "integrations.frameworks", &col), 10);
	cr_assert_eq(col, 3);
	cr_assert_eq(
	    api_yaml_line(lines,
		"managedJobsNamespaceSelector.matchExpressions[0].key", &col),
	    6);
	cr_assert_eq(col, 7);
	cr_assert_eq(api_yaml_line(lines,
			 "managedJobsNamespaceSelector.matchExpressions[0]."
			 "values[1]",
			 NULL),
	    8);
	cr_assert_eq(api_yaml_line(lines, "odd\\.key\\[0]", &col), 13);
	cr_assert_eq(col, 1);
	/* Unknown or malformed paths. */
	cr_assert_eq(
	    api_yaml_line(lines, "integrations.frameworks[2]", &col), 0);
	cr_assert_eq(col, 0);
	cr_assert_eq(api_yaml_line(lines, "nope", NULL), 0);
	cr_assert_eq(api_yaml_line(lines, ".kind", NULL), 0);
	cr_assert_eq(api_yaml_line(lines, "integrations[0]", NULL), 0);
	cr_assert_eq(
	    api_yaml_line(lines, "integrations.frameworks[x]", NULL), 0);
	cr_assert_eq(
	    api_yaml_line(lines, "integrations.frameworks[1", NULL), 0);
	cr_assert_eq(api_yaml_line(NULL, "kind", NULL), 0);
	api_yaml_lines_free(lines);
	json_decref(j);
}

Test(api_yaml, lines_of_a_later_document_and_of_an_empty_stream)
{
	const char *y = "---\n# empty\n---\nfirst: 1\nsecond:\n  x: 2\n";
	json_t *j = NULL;
	api_yaml_lines *lines = NULL;
	cu_error err;

	cr_assert_eq(
	    api_yaml_load(&j, &lines, y, strlen(y), NULL, &err), CU_OK);
	cr_assert_eq(api_yaml_line(lines, "second.x", NULL), 6);
	api_yaml_lines_free(lines);
	json_decref(j);

	cr_assert_eq(api_yaml_load(&j, &lines, "", 0, NULL, &err), CU_OK);
	cr_assert(json_is_null(j));
	cr_assert_not_null(lines);
	cr_assert_eq(api_yaml_line(lines, "", NULL), 0);
	api_yaml_lines_free(lines);
	json_decref(j);

	cr_assert_eq(
	    api_yaml_load(&j, &lines, "a: [\n", 5, NULL, &err), CU_EPARSE);
	cr_assert_null(j);
	cr_assert_null(lines);
}

Test(api_yaml, load_file_prefixes_errors_with_the_path)
{
	char path[] = "/tmp/api_yaml_testXXXXXX";
	int fd = mkstemp(path);
	json_t *j = NULL;
	api_yaml_lines *lines = NULL;
	cu_error err;
	struct api_yaml_limits lim = {16, 0, 0};
	FILE *f;

	cr_assert(fd >= 0);
	f = fdopen(fd, "w");
	fputs("a: 1\nb:\n\t- 2\n", f);
	fclose(f);
	cr_assert_eq(
	    api_yaml_load_file(&j, &lines, path, NULL, &err), CU_EPARSE);
	cr_assert_null(j);
	cr_assert(strncmp(err.msg, path, strlen(path)) == 0, "%s", err.msg);
	cr_assert(
	    strstr(err.msg, ": line 3, column 1: ") != NULL, "%s", err.msg);

	f = fopen(path, "w");
	fputs("a: 1\nb: [2, 3]\n", f);
	fclose(f);
	cr_assert_eq(api_yaml_load_file(&j, &lines, path, NULL, &err), CU_OK);
	cr_assert_eq(api_yaml_line(lines, "b[1]", NULL), 2);
	api_yaml_lines_free(lines);
	json_decref(j);

	f = fopen(path, "w");
	fputs("a: 123456789012345\n", f);
	fclose(f);
	cr_assert_eq(
	    api_yaml_load_file(&j, NULL, path, &lim, &err), CU_ETOOBIG);
	cr_assert(
	    strstr(err.msg, "larger than 16 bytes") != NULL, "%s", err.msg);
	unlink(path);

	cr_assert_eq(
	    api_yaml_load_file(&j, NULL, path, NULL, &err), CU_ENOTFOUND);
	cr_assert(strncmp(err.msg, path, strlen(path)) == 0);
}

Test(api_yaml, survives_every_allocation_failure)
{
	uint64_t n;
	int ok = 0, nomem = 0;

	/* Fail our n-th allocation for every n until a load succeeds: each
	 * run must end in CU_OK or CU_ENOMEM with nothing leaked. */
	for (n = 1; n < 10000 && ok == 0; n++) {
		json_t *j = NULL;
		api_yaml_lines *lines = NULL;
		cu_error err;
		int rc;

		cu_mem_fail_after(n, false);
		rc = api_yaml_load(
		    &j, &lines, kueue_cfg, strlen(kueue_cfg), NULL, &err);
		cu_mem_fail_after(0, false);
		if (rc == CU_OK) {
			ok++;
			cr_assert_eq(api_yaml_line(lines, "kind", NULL), 2);
			api_yaml_lines_free(lines);
			json_decref(j);
		} else {
			cr_assert_eq(rc, CU_ENOMEM, "n=%llu: %s",
			    (unsigned long long)n, err.msg);
			cr_assert_null(j);
			cr_assert_null(lines);
			nomem++;
		}
	}
	cr_assert_eq(ok, 1);
	cr_assert_gt(nomem, 5);
}
