/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/jsonlean_fuzz.c - fuzz target of api_json_lean (api/json.h),
 * the byte-level pass that drops metadata.managedFields before jansson
 * parses a watch line or a response body. Properties, any violation
 * aborts:
 *   1. input jansson parses is made lean without error (short of the
 *      nesting bound), and the lean text parses to the same tree once
 *      metadata.managedFields are deleted from both (a key spelled with
 *      escapes is kept by the pass and deleted by the caller's tree);
 *   2. the lean text is never longer than the input;
 *   3. the span of the top-level "object", when there is one, parses to
 *      the tree's "object".
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>

#include "api/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct api_json_lean l;
	json_t *whole, *lean = NULL, *span;
	int rc;

	rc = api_json_lean(&l, (const char *)data, size, "object");
	if (rc == CU_OK && l.len > size)
		abort();
	whole = json_loadb((const char *)data, size, 0, NULL);
	if (whole != NULL && rc != CU_OK)
		abort(); /* what jansson takes, the pass takes */
	if (rc == CU_OK)
		lean = json_loadb(l.text, l.len, 0, NULL);
	if (whole != NULL && rc == CU_OK) {
		if (lean == NULL)
			abort();
		api_json_drop_managed_fields(whole);
		api_json_drop_managed_fields(lean);
		if (!json_equal(whole, lean))
			abort();
	}
	if (lean != NULL && l.span_len > 0) {
		span = json_loadb(l.text + l.span_off, l.span_len, 0, NULL);
		if (span == NULL)
			abort();
		api_json_drop_managed_fields(span);
		if (!json_equal(span, json_object_get(lean, "object")))
			abort();
		json_decref(span);
	}
	json_decref(whole);
	json_decref(lean);
	api_json_lean_dispose(&l);
	return 0;
}
