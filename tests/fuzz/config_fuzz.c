/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/config_fuzz.c - fuzz target for controller/config: any input
 * must load or fail cleanly, and whatever loads must print as YAML that
 * loads back to the same printed configuration (--check-config output is
 * a valid configuration).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "controller/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctl_config c, again;
	cu_error err;
	cu_buf y1, y2;

	if (ctl_config_load_buffer(
		&c, (const char *)data, size, "fuzz", &err) != CU_OK)
		return 0;
	cu_buf_init(&y1, (size_t)1 << 20);
	cu_buf_init(&y2, (size_t)1 << 20);
	if (ctl_config_to_yaml(&c, &y1, &err) == CU_OK) {
		/* The printed form must be accepted and be a fixed point. */
		if (ctl_config_load_buffer(
			&again, y1.ptr, y1.len, "printed", &err) != CU_OK)
			abort();
		if (ctl_config_to_yaml(&again, &y2, &err) != CU_OK ||
		    y1.len != y2.len || memcmp(y1.ptr, y2.ptr, y1.len) != 0)
			abort();
		ctl_config_dispose(&again);
	}
	cu_buf_dispose(&y1);
	cu_buf_dispose(&y2);
	ctl_config_dispose(&c);
	return 0;
}
