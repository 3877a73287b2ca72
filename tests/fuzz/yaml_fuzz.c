/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/yaml_fuzz.c - fuzz target for api/yaml: raw bytes through
 * api_yaml_load_all and api_yaml_load with small limits, so that depth,
 * node and size limits are hit often, plus the line index on success.
 * Any crash, leak or sanitizer report is a finding.
 */
#include <stddef.h>
#include <stdint.h>

#include "api/yaml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct api_yaml_limits lim = {64 * 1024, 16, 4096};
	json_t *j = NULL;
	api_yaml_lines *lines = NULL;
	cu_error err;

	if (api_yaml_load_all(&j, (const char *)data, size, &lim, &err) ==
	    CU_OK) {
		CU_ASSERT(json_is_array(j));
		json_decref(j);
	} else {
		CU_ASSERT(j == NULL);
		CU_ASSERT(err.msg[0] != '\0');
	}
	if (api_yaml_load(&j, &lines, (const char *)data, size, &lim, &err) ==
	    CU_OK) {
		/* Exercise lookups, including malformed ones. */
		(void)api_yaml_line(lines, "", NULL);
		(void)api_yaml_line(lines, "a.b[0].c", NULL);
		(void)api_yaml_line(lines, "[0]", NULL);
		(void)api_yaml_line(lines, "a\\.b[", NULL);
		api_yaml_lines_free(lines);
		json_decref(j);
	} else {
		CU_ASSERT(j == NULL && lines == NULL);
	}
	return 0;
}
