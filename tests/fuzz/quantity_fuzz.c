/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/quantity_fuzz.c - fuzz api_quantity_parse. Whatever parses
 * must print a canonical string that parses back to the same milli value
 * (quota math stores quantities as strings), and arithmetic must either
 * succeed exactly or report CU_ERANGE.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/quantity.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = cu_strndup((const char *)data, size);
	if (s == NULL)
		return 0;
	struct api_quantity q, back, r;
	cu_error err;
	if (api_quantity_parse(&q, s, &err) == CU_OK) {
		char buf[API_QUANTITY_STR_MAX];
		size_t n = api_quantity_format(&q, buf, sizeof(buf));
		if (n >= sizeof(buf))
			abort();
		if (api_quantity_parse(&back, buf, &err) != CU_OK ||
		    back.milli != q.milli)
			abort();
		int rc = api_quantity_add(&r, &q, &q, &err);
		if (rc == CU_OK && r.milli / 2 != q.milli)
			abort();
		if (rc != CU_OK && rc != CU_ERANGE)
			abort();
		if (api_quantity_sub(&r, &q, &q, &err) != CU_OK || r.milli != 0)
			abort();
		if (api_quantity_cmp(&q, &back) != 0)
			abort();
	} else if (err.msg[0] == '\0') {
		abort();
	}
	cu_free(s);
	return 0;
}
