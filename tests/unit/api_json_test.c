/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/api_json_test.c - api_json_lean and api_json_loadb_lean:
 * metadata.managedFields dropped from the bytes wherever ObjectMeta sits
 * (a top-level object, a watch event's object, list items, embedded
 * templates), whichever member of metadata it is; members of that name
 * elsewhere kept; whitespace outside strings dropped and inside kept; the
 * place of a watch event's "object" in the lean text; a dropped value that
 * is not JSON refused as a parser would; recorded watch events decode to
 * the same trees as a whole parse does, with fewer allocations.
 */
#include <criterion/criterion.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/json.h"
#include "lib/cu.h"

static char *lean_of(const char *in, const char *span, size_t *off, size_t *len)
{
	struct api_json_lean l;
	char *s;

	cr_assert_eq(api_json_lean(&l, in, strlen(in), span), CU_OK, "%s", in);
	s = cu_strdup(l.text);
	cr_assert_not_null(s);
	if (off != NULL)
		*off = l.span_off;
	if (len != NULL)
		*len = l.span_len;
	api_json_lean_dispose(&l);
	return s;
}

static void expect_lean(const char *in, const char *want)
{
	char *got = lean_of(in, NULL, NULL, NULL);

	cr_assert_str_eq(got, want, "in:   %s", in);
	cu_free(got);
}

Test(api_json_lean, managed_fields_go_wherever_they_sit_in_metadata)
{
	/* only, first, middle, last */
	expect_lean("{\"metadata\":{\"managedFields\":[{\"a\":{}}]}}",
	    "{\"metadata\":{}}");
	expect_lean("{\"metadata\":{\"managedFields\":[],\"name\":\"a\"}}",
	    "{\"metadata\":{\"name\":\"a\"}}");
	expect_lean("{\"metadata\":{\"name\":\"a\",\"managedFields\":[{}],"
		    "\"uid\":\"u\"}}",
	    "{\"metadata\":{\"name\":\"a\",\"uid\":\"u\"}}");
	expect_lean("{\"metadata\":{\"name\":\"a\",\"managedFields\":null}}",
	    "{\"metadata\":{\"name\":\"a\"}}");
	/* twice in one object */
	expect_lean("{\"metadata\":{\"managedFields\":1,\"managedFields\":2,"
		    "\"x\":3}}",
	    "{\"metadata\":{\"x\":3}}");
	/* a watch event, a list, an embedded template */
	expect_lean("{\"type\":\"ADDED\",\"object\":{\"kind\":\"Job\","
		    "\"metadata\":{\"name\":\"j\",\"managedFields\":[{\"f\":"
		    "{\"f:spec\":{\"f:x\":{}}}}]},\"spec\":{\"template\":{"
		    "\"metadata\":{\"managedFields\":[],\"labels\":{}}}}}}",
	    "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Job\",\"metadata\":"
	    "{\"name\":\"j\"},\"spec\":{\"template\":{\"metadata\":{"
	    "\"labels\":{}}}}}}");
	expect_lean("{\"kind\":\"List\",\"metadata\":{\"resourceVersion\":"
		    "\"5\"},\"items\":[{\"metadata\":{\"managedFields\":[1],"
		    "\"name\":\"a\"}},{\"metadata\":{\"name\":\"b\","
		    "\"managedFields\":[2]}}]}",
	    "{\"kind\":\"List\",\"metadata\":{\"resourceVersion\":\"5\"},"
	    "\"items\":[{\"metadata\":{\"name\":\"a\"}},{\"metadata\":{"
	    "\"name\":\"b\"}}]}");
}

Test(api_json_lean, the_name_elsewhere_and_look_alikes_are_kept)
{
	const char *const same[] = {
	    "{\"managedFields\":[1]}", /* not in metadata */
	    "{\"spec\":{\"managedFields\":{}}}",
	    "{\"metadata\":{\"labels\":{\"managedFields\":\"x\"}}}",
	    "{\"metadata\":{\"name\":\"managedFields\"}}",
	    "{\"metadata\":[{\"managedFields\":1}]}",
	    "{\"metadata\":\"managedFields\",\"x\":{\"managedFields\":1}}",
	    "{\"metadata\":{\"managedFieldsX\":1,\"xmanagedFields\":2}}",
	    "{\"a\":\"{\\\"metadata\\\":{\\\"managedFields\\\":1}}\"}",
	    /* spelled with an escape: kept here, the caller's tree sees it
	     * (the informer deletes it there) */
	    "{\"metadata\":{\"managed\\u0046ields\":1}}", "[]", "\"metadata\"",
	    "12", ""};
	size_t i;

	for (i = 0; i < sizeof(same) / sizeof(same[0]); i++)
		expect_lean(same[i], same[i]);
}

Test(api_json_lean, whitespace_goes_outside_strings_only)
{
	expect_lean(" {\n \"metadata\" : {\t\"managedFields\" : [ 1 , 2 ] ,"
		    " \"name\" : \"a b\\\" c\" } , \"n\" : [ 1 , true ] }\r\n",
	    "{\"metadata\":{\"name\":\"a b\\\" c\"},\"n\":[1,true]}");
	expect_lean("{\"metadata\":{\"managedFields\":[] , \"x\":1}}",
	    "{\"metadata\":{\"x\":1}}");
}

Test(api_json_lean, the_object_of_a_watch_event_is_found_in_the_text)
{
	const char *ev = "{\"type\":\"MODIFIED\", \"object\": {\"metadata\":"
			 "{\"name\":\"w\",\"managedFields\":[{\"x\":\"}\"}]},"
			 "\"spec\":{\"a\":[{}]}}, \"z\":{\"object\":{}}}";
	size_t off, len;
	char *t = lean_of(ev, "object", &off, &len);

	cr_assert_str_eq(t, "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":"
			    "{\"name\":\"w\"},\"spec\":{\"a\":[{}]}},\"z\":{"
			    "\"object\":{}}}");
	cr_assert_eq(len, strlen("{\"metadata\":{\"name\":\"w\"},\"spec\":{"
				 "\"a\":[{}]}}"));
	cr_assert(strncmp(t + off, "{\"metadata\":{\"name\":\"w\"},", 24) == 0);
	cu_free(t);
	/* absent, not an object, or unterminated: no span */
	t = lean_of("{\"type\":\"ERROR\",\"obj\":{}}", "object", &off, &len);
	cr_assert_eq(off + len, 0);
	cu_free(t);
	t = lean_of("{\"object\":\"x\"}", "object", &off, &len);
	cr_assert_eq(off + len, 0);
	cu_free(t);
	t = lean_of("{\"object\":{\"a\":1", "object", &off, &len);
	cr_assert_eq(off + len, 0);
	cu_free(t);
}

Test(api_json_lean, a_dropped_value_that_is_not_json_is_refused)
{
	const char *const bad[] = {
	    "{\"metadata\":{\"managedFields\":[1 2]}}",
	    "{\"metadata\":{\"managedFields\":[1,]}}",
	    "{\"metadata\":{\"managedFields\":{\"a\"}}}",
	    "{\"metadata\":{\"managedFields\":{\"a\":}}}",
	    "{\"metadata\":{\"managedFields\":{,}}}",
	    "{\"metadata\":{\"managedFields\":[}}",
	    "{\"metadata\":{\"managedFields\":\"abc}}",
	    "{\"metadata\":{\"managedFields\":\"a\\qb\"}}",
	    "{\"metadata\":{\"managedFields\":\"\\u12G4\"}}",
	    "{\"metadata\":{\"managedFields\":\"a\tb\"}}",
	    "{\"metadata\":{\"managedFields\":tru}}",
	    "{\"metadata\":{\"managedFields\":01}}",
	    "{\"metadata\":{\"managedFields\":-}}",
	    "{\"metadata\":{\"managedFields\":1.}}",
	    "{\"metadata\":{\"managedFields\":1e}}",
	    "{\"metadata\":{\"managedFields\"}}",
	    "{\"metadata\":{\"managedFields\"",
	    "{\"metadata\":{\"managedFields\":",
	};
	const char *const good[] = {"-0.5e+10", "1E3", "true", "null",
	    "\"\\u00e9\\n\\/\"", "[[],{},[{\"a\":[1,{\"b\":null}]}]]"};
	char doc[256];
	struct api_json_lean l;
	json_error_t jerr;
	json_t *j;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(api_json_lean(&l, bad[i], strlen(bad[i]), NULL),
		    CU_EPARSE, "%s", bad[i]);
		cr_assert_null(l.text);
		cr_assert_eq(
		    api_json_loadb_lean(&j, bad[i], strlen(bad[i]), 0, &jerr),
		    CU_EPARSE, "%s", bad[i]);
		cr_assert_null(j);
		cr_assert(strstr(jerr.text, "managedFields") != NULL);
	}
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(doc, sizeof(doc),
		    "{\"metadata\":{\"managedFields\":%s}}", good[i]);
		expect_lean(doc, "{\"metadata\":{}}");
	}
}

Test(api_json_lean, nesting_is_bounded)
{
	size_t n = API_JSON_MAX_DEPTH + 1, i;
	char *deep = cu_malloc(2 * n + 64), *p = deep;
	struct api_json_lean l;

	for (i = 0; i < n; i++)
		*p++ = '[';
	for (i = 0; i < n; i++)
		*p++ = ']';
	cr_assert_eq(api_json_lean(&l, deep, 2 * n, NULL), CU_EPARSE);
	/* the same bound inside a dropped value */
	memcpy(deep, "{\"metadata\":{\"managedFields\":", 29);
	p = deep + 29;
	for (i = 0; i < n; i++)
		*p++ = '[';
	for (i = 0; i < n; i++)
		*p++ = ']';
	memcpy(p, "}}", 2);
	p += 2;
	cr_assert_eq(
	    api_json_lean(&l, deep, (size_t)(p - deep), NULL), CU_EPARSE);
	/* at the bound: fine */
	p = deep;
	for (i = 0; i < n - 1; i++)
		*p++ = '[';
	for (i = 0; i < n - 1; i++)
		*p++ = ']';
	cr_assert_eq(api_json_lean(&l, deep, 2 * (n - 1), NULL), CU_OK);
	api_json_lean_dispose(&l);
	cu_free(deep);
}

Test(api_json_lean, recorded_watch_events_decode_to_the_same_trees)
{
	static const char *const files[] = {"tests/data/watch/workloads.ndjson",
	    "tests/data/watch/jobs.ndjson"};
	size_t f, lines = 0;

	json_set_alloc_funcs(cu_malloc, cu_free); /* counted, as controller */
	for (f = 0; f < 2; f++) {
		FILE *in = fopen(files[f], "r");
		char *line = NULL;
		size_t cap = 0;
		ssize_t n;

		cr_assert_not_null(in, "%s", files[f]);
		while ((n = getline(&line, &cap, in)) > 0) {
			json_t *whole, *lean, *span;
			struct api_json_lean l;
			uint64_t a0, a1, a2;

			a0 = cu_mem_calls();
			cr_assert_eq(
			    api_json_loadb(&whole, line, (size_t)n, 0, NULL),
			    CU_OK);
			a1 = cu_mem_calls();
			cr_assert_eq(api_json_loadb_lean(
					 &lean, line, (size_t)n, 0, NULL),
			    CU_OK);
			a2 = cu_mem_calls();
			cr_assert_not_null(json_object_get(
			    json_object_get(
				json_object_get(whole, "object"), "metadata"),
			    "managedFields"));
			api_json_drop_managed_fields(whole);
			cr_assert(json_equal(whole, lean), "%s", line);
			/* at most two thirds of the allocations */
			cr_assert_lt((a2 - a1) * 3, (a1 - a0) * 2, "%s", line);
			cr_assert_eq(
			    api_json_lean(&l, line, (size_t)n, "object"),
			    CU_OK);
			cr_assert_gt(l.dropped, 100);
			cr_assert_eq(api_json_loadb(&span, l.text + l.span_off,
					 l.span_len, 0, NULL),
			    CU_OK);
			cr_assert(
			    json_equal(span, json_object_get(lean, "object")));
			json_decref(span);
			api_json_lean_dispose(&l);
			json_decref(whole);
			json_decref(lean);
			lines++;
		}
		free(line);
		fclose(in);
	}
	cr_assert_gt(lines, 40);
}

Test(api_json_lean, out_of_memory_is_told_apart)
{
	const char *doc = "{\"metadata\":{\"managedFields\":[{\"a\":1}],"
			  "\"name\":\"x\"}}";
	struct api_json_lean l;
	json_t *j;
	uint64_t n;
	int rc;

	for (n = 1; n < 20; n++) {
		cu_mem_fail_after(n, false);
		rc = api_json_lean(&l, doc, strlen(doc), NULL);
		cu_mem_fail_after(0, false);
		cr_assert(rc == CU_OK || rc == CU_ENOMEM);
		if (rc == CU_OK)
			cr_assert_str_eq(
			    l.text, "{\"metadata\":{\"name\":\"x\"}}");
		api_json_lean_dispose(&l);
	}
	json_set_alloc_funcs(cu_malloc, cu_free);
	for (n = 1; n < 40; n++) {
		cu_mem_fail_after(n, false);
		rc = api_json_loadb_lean(&j, doc, strlen(doc), 0, NULL);
		cu_mem_fail_after(0, false);
		cr_assert(rc == CU_OK || rc == CU_ENOMEM, "n=%llu rc=%d",
		    (unsigned long long)n, rc);
		cr_assert_eq(rc == CU_OK, j != NULL);
		json_decref(j);
	}
	json_set_alloc_funcs(malloc, free);
}

/* api_json_dumps' text is kept by the informers' compact caches (one per
 * cached object): it takes what it holds, not the doubled capacity of the
 * buffer it was written into (1,100 bytes in a 2,048-byte block). */
Test(api_json_dumps, the_text_is_no_larger_than_it_needs)
{
	char pad[1101], *text;
	json_t *v;
	size_t len;

	memset(pad, '.', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	v = json_pack("{s:s}", "k", pad);
	cr_assert_not_null(v);
	cr_assert_eq(api_json_dumps(v, JSON_COMPACT, 0, &text, &len), CU_OK);
	cr_assert_eq(len, strlen("{\"k\":\"\"}") + 1100);
	cr_assert_str_eq(text + len - 2, "\"}");
	cr_assert_lt(malloc_usable_size(text), len + 1 + 64, "%zu for %zu",
	    malloc_usable_size(text), len);
	cu_free(text);
	json_decref(v);
}
