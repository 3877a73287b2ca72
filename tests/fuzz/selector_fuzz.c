/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/selector_fuzz.c - fuzz the string label selector and field
 * selector parsers. Besides memory safety it checks that whatever parses
 * prints a canonical string that parses back to the same canonical string,
 * because the API server echoes selectors and compares them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "namespaces/selector.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const labels[] = {"env", "prod", "tier", "", "n", "7",
    "kubernetes.io/metadata.name", "default"};

static const char *fields_get(const char *key, void *payload)
{
	(void)payload;
	if (strcmp(key, "metadata.name") == 0)
		return "a,b=c\\d";
	return NULL;
}

static void check_labels(const char *s)
{
	api_selector sel, again;
	cu_error err;
	if (ns_selector_parse(&sel, s, &err) != CU_OK) {
		if (sel.nreqs != 0 || err.msg[0] == '\0')
			abort();
		return;
	}
	(void)ns_selector_matches_pairs(&sel, labels, 4);
	char *canon = api_selector_string(&sel);
	if (canon != NULL) {
		if (ns_selector_parse(&again, canon, &err) != CU_OK)
			abort();
		char *canon2 = api_selector_string(&again);
		if (canon2 != NULL && strcmp(canon, canon2) != 0)
			abort();
		cu_free(canon2);
		api_selector_dispose(&again);
	}
	cu_free(canon);
	api_selector_dispose(&sel);
}

static void check_fields(const char *s)
{
	ns_fieldsel fs, again;
	cu_error err;
	if (ns_fieldsel_parse(&fs, s, &err) != CU_OK) {
		if (fs.nterms != 0 || err.msg[0] == '\0')
			abort();
		return;
	}
	(void)ns_fieldsel_matches(&fs, fields_get, NULL);
	(void)ns_fieldsel_required_value(&fs, "metadata.name");
	/*
	 * Like Kubernetes, terms keep the order of the sorted input parts,
	 * and "==" prints as "=", so one round may reorder; from then on the
	 * string must be a fixed point.
	 */
	char *canon = ns_fieldsel_string(&fs);
	for (int round = 0; canon != NULL && round < 2; round++) {
		if (ns_fieldsel_parse(&again, canon, &err) != CU_OK)
			abort();
		char *next = ns_fieldsel_string(&again);
		ns_fieldsel_dispose(&again);
		if (round == 1 && next != NULL && strcmp(canon, next) != 0)
			abort();
		cu_free(canon);
		canon = next;
	}
	cu_free(canon);
	ns_fieldsel_dispose(&fs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = cu_strndup((const char *)data, size);
	if (s == NULL)
		return 0;
	check_labels(s);
	check_fields(s);
	cu_free(s);
	return 0;
}
