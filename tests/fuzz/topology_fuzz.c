/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/topology_fuzz.c - fuzz the TAS topology decoder
 * (api_topology_assignment_decode: Kueue v1beta2's topologyAssignment
 * wire form - levels, slices, universal or individual values and counts,
 * prefix/suffix). Whatever decodes must have one value per level in every
 * domain and a non-negative count, and must encode and decode back to the
 * same domains; a refusal carries a message.
 *
 * Input: one JSON document (the topologyAssignment object).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool same(const struct api_topology_assignment *a,
    const struct api_topology_assignment *b)
{
	size_t i, k;

	if (a->levels.n != b->levels.n || a->n_domains != b->n_domains)
		return false;
	for (i = 0; i < a->levels.n; i++)
		if (strcmp(a->levels.items[i], b->levels.items[i]) != 0)
			return false;
	for (i = 0; i < a->n_domains; i++) {
		if (a->domains[i].count != b->domains[i].count)
			return false;
		for (k = 0; k < a->levels.n; k++)
			if (strcmp(a->domains[i].values[k],
				b->domains[i].values[k]) != 0)
				return false;
	}
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct api_topology_assignment a, b;
	json_t *j, *enc = NULL;
	cu_error err;
	size_t i, k;

	j = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
	if (j == NULL)
		return 0;
	cu_error_clear(&err);
	if (api_topology_assignment_decode(&a, j, &err) != CU_OK) {
		if (err.msg[0] == '\0')
			abort();
		api_topology_assignment_dispose(&a);
		json_decref(j);
		return 0;
	}
	for (i = 0; i < a.n_domains; i++) {
		if (a.domains[i].count < 0)
			abort();
		for (k = 0; k < a.levels.n; k++)
			if (a.domains[i].values[k] == NULL)
				abort();
	}
	if (api_topology_assignment_encode(&enc, &a, &err) == CU_OK) {
		if (api_topology_assignment_decode(&b, enc, &err) != CU_OK ||
		    !same(&a, &b))
			abort();
		api_topology_assignment_dispose(&b);
		json_decref(enc);
	} else if (err.msg[0] == '\0')
		abort();
	api_topology_assignment_dispose(&a);
	json_decref(j);
	return 0;
}
