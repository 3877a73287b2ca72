/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/labelselector_fuzz.c - fuzz metav1.LabelSelector JSON
 * decoding. A selector that decodes must encode, and the encoding must
 * decode to a selector with the same canonical string.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/labelselector.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *j = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
	if (j == NULL)
		return 0;
	api_selector sel, back;
	cu_error err;
	if (api_label_selector_decode(&sel, j, "spec.selector", &err) ==
	    CU_OK) {
		json_t *out = NULL;
		if (api_label_selector_encode(&out, &sel, &err) != CU_OK)
			abort();
		if (api_label_selector_decode(&back, out, "x", &err) != CU_OK)
			abort();
		char *a = api_selector_string(&sel);
		char *b = api_selector_string(&back);
		if (a != NULL && b != NULL && strcmp(a, b) != 0)
			abort();
		if (sel.match_nothing != back.match_nothing)
			abort();
		cu_free(a);
		cu_free(b);
		json_decref(out);
		api_selector_dispose(&back);
		api_selector_dispose(&sel);
	} else if (err.msg[0] == '\0' || sel.nreqs != 0) {
		abort();
	}
	json_decref(j);
	return 0;
}
