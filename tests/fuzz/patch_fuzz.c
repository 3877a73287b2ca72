/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/patch_fuzz.c - fuzz target for api/patch.h. The input is a
 * document and a patch (split at the first NUL byte, else in halves), both
 * JSON. Every applier runs on them; the merge-patch diff must round-trip:
 * applying diff(a, b) to a gives b. Sanitizers catch memory errors, abort()
 * catches broken contracts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/patch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A failed call must leave *out NULL and say why. */
static void check_result(int rc, json_t *out, const cu_error *err)
{
	if (rc == CU_OK && out == NULL)
		abort();
	if (rc != CU_OK && (out != NULL || err->code != rc))
		abort();
}

static bool has_directive(const json_t *v)
{
	const char *key;
	json_t *child;
	size_t i;

	if (json_is_array(v)) {
		for (i = 0; i < json_array_size(v); i++)
			if (has_directive(json_array_get(v, i)))
				return true;
		return false;
	}
	json_object_foreach((json_t *)v, key, child)
	{
		if (strcmp(key, "$patch") == 0 ||
		    strcmp(key, "$retainKeys") == 0 ||
		    strncmp(key, "$setElementOrder/", 17) == 0 ||
		    strncmp(key, "$deleteFromPrimitiveList/", 25) == 0 ||
		    has_directive(child))
			return true;
	}
	return false;
}

/* A strategic merge patch never leaves a directive key behind. */
static void check_smp(
    int rc, json_t *out, const cu_error *err, const json_t *doc)
{
	check_result(rc, out, err);
	if (rc == CU_OK && !has_directive(doc) && has_directive(out))
		abort();
}

static void check_diff(const json_t *a, const json_t *b)
{
	json_t *p = NULL, *res = NULL;
	cu_error err;
	int rc = api_merge_patch_diff(&p, a, b, &err);

	if (rc == CU_EINVAL || rc == CU_ENOMEM) {
		if (p != NULL)
			abort();
		return;
	}
	if (rc != CU_OK)
		abort();
	if (p == NULL) {
		if (!json_equal(a, b))
			abort(); /* NULL promises "nothing to do" */
		return;
	}
	if (api_merge_patch_apply(&res, a, p, &err) != CU_OK)
		abort();
	if (!json_equal(res, b))
		abort();
	json_decref(res);
	json_decref(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t doc_len = nul ? (size_t)(nul - data) : size / 2;
	size_t patch_off = nul ? doc_len + 1 : doc_len;
	json_t *doc, *patch, *out;
	const struct api_smp_schema *schema;
	cu_error err;
	int rc;

	doc = json_loadb((const char *)data, doc_len, JSON_DECODE_ANY, NULL);
	patch = json_loadb((const char *)data + patch_off, size - patch_off,
	    JSON_DECODE_ANY, NULL);
	if (doc == NULL || patch == NULL)
		goto out;

	out = NULL;
	rc = api_json_patch_apply(&out, doc, patch, &err);
	check_result(rc, out, &err);
	json_decref(out);

	out = NULL;
	rc = api_merge_patch_apply(&out, doc, patch, &err);
	check_result(rc, out, &err);
	if (rc != CU_OK)
		abort(); /* only allocation can fail, and it does not here */
	json_decref(out);

	/* Alternate between a schema with every rule kind and none. */
	schema = size % 2 ? api_smp_schema_for("batch", "Job")
			  : api_smp_schema_for("", "Pod");
	out = NULL;
	rc = api_smp_apply(&out, doc, patch, schema, &err);
	check_smp(rc, out, &err, doc);
	json_decref(out);
	out = NULL;
	rc = api_smp_apply(&out, doc, patch, NULL, &err);
	check_smp(rc, out, &err, doc);
	json_decref(out);

	if (json_is_object(doc) && json_is_object(patch)) {
		check_diff(doc, patch);
		check_diff(patch, doc);
	}
out:
	json_decref(doc);
	json_decref(patch);
	return 0;
}
