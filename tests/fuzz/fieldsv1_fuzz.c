/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fieldsv1_fuzz.c - fuzz target for the FieldsV1 decoder of
 * cueue-apiserver's server-side apply (tests/apiserver/apply.c). The input
 * is JSON text, as metadata.managedFields[].fieldsV1 arrives from clients.
 * A decoded set must survive encode/decode unchanged, and the set algebra
 * must hold on it (a | a = a, a & a = a, a - a = {}); the member paths are
 * printed. Sanitizers catch memory errors, abort() broken contracts.
 */
#include <stdint.h>
#include <stdlib.h>

#include "tests/apiserver/apiserver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *in = json_loadb((const char *)data, size,
	    JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, NULL);
	json_t *set = NULL, *wire, *back = NULL, *u, *i, *d, *paths;
	cu_error err;
	int rc;

	if (in == NULL)
		return 0;
	rc = as_fields_decode(in, &set, &err);
	if (rc != CU_OK) {
		if (set != NULL || rc != CU_EPARSE || err.code != rc)
			abort();
		json_decref(in);
		return 0;
	}
	wire = as_fields_encode(set);
	if (as_fields_decode(wire, &back, &err) != CU_OK ||
	    !json_equal(back, set))
		abort();
	u = as_fields_union(set, set);
	i = as_fields_intersect(set, set);
	d = as_fields_diff(set, set);
	if (!json_equal(u, set) || !json_equal(i, set) ||
	    json_object_size(d) != 0)
		abort();
	paths = as_fields_paths(set);
	if (!json_is_array(paths))
		abort();
	json_decref(paths);
	json_decref(u);
	json_decref(i);
	json_decref(d);
	json_decref(back);
	json_decref(wire);
	json_decref(set);
	json_decref(in);
	return 0;
}
