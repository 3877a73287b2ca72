/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/lib_base_test.c - lib/: errors, buffers, allocation fault
 * injection, time formats.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "lib/cu.h"

Test(cu_error, set_returns_code_and_flattens_newlines)
{
	cu_error err;

	cr_assert_eq(cu_error_set(&err, CU_EPARSE, "a\nb %d", 7), CU_EPARSE);
	cr_assert_eq(err.code, CU_EPARSE);
	cr_assert_str_eq(err.msg, "a b 7");
	cr_assert_eq(cu_error_set(NULL, CU_EIO, "x"), CU_EIO);
	cr_assert_str_eq(cu_err_name(CU_ECONFLICT), "CU_ECONFLICT");
	cr_assert(cu_err_retryable(CU_ECONFLICT));
	cr_assert(!cu_err_retryable(CU_EINVAL));
	cr_assert_str_eq(cu_err_name(12345), "unknown");
}

Test(cu_buf, grows_and_enforces_max)
{
	cu_buf b;
	char *s;
	size_t len;
	int i;

	cu_buf_init(&b, 100);
	for (i = 0; i < 10; i++)
		cr_assert_eq(cu_buf_addf(&b, "%d", i), CU_OK);
	cr_assert_str_eq(b.ptr, "0123456789");
	s = cu_buf_detach(&b, &len);
	cr_assert_eq(len, 10);
	cr_assert_str_eq(s, "0123456789");
	cr_assert_null(b.ptr);
	cu_free(s);

	cu_buf_init(&b, 4);
	cr_assert_eq(cu_buf_adds(&b, "abcd"), CU_OK);
	/* Over the maximum: error, and the buffer is freed (dynbuf). */
	cr_assert_eq(cu_buf_adds(&b, "e"), CU_ETOOBIG);
	cr_assert_null(b.ptr);
	cr_assert_eq(b.len, 0);
}

Test(cu_mem, fault_injection_fails_exactly_the_nth_call)
{
	void *a, *b, *c;

	cu_mem_fail_after(2, false);
	a = cu_malloc(8);
	b = cu_malloc(8);
	c = cu_malloc(8);
	cu_mem_fail_after(0, false);
	cr_assert_not_null(a);
	cr_assert_null(b);
	cr_assert_not_null(c);
	cu_free(a);
	cu_free(c);

	/* A failed append frees the buffer and reports CU_ENOMEM. */
	{
		cu_buf buf;

		cu_buf_init(&buf, 1 << 20);
		cu_mem_fail_after(1, true);
		cr_assert_eq(cu_buf_adds(&buf, "x"), CU_ENOMEM);
		cu_mem_fail_after(0, false);
		cr_assert_null(buf.ptr);
	}
}

Test(cu_time, formats_and_parses_kubernetes_timestamps)
{
	char t[CU_TIME_RFC3339_LEN], m[CU_TIME_MICRO_LEN];
	int64_t ns;
	cu_error err;

	/* 2021-02-03T04:05:06.123456789Z */
	ns = 1612325106123456789LL;
	cu_time_format_rfc3339(ns, t);
	cu_time_format_micro(ns, m);
	cr_assert_str_eq(t, "2021-02-03T04:05:06Z");
	cr_assert_str_eq(m, "2021-02-03T04:05:06.123456Z");
	cr_assert_eq(
	    cu_time_parse("2021-02-03T04:05:06.123456Z", &ns, &err), CU_OK);
	cr_assert_eq(ns, 1612325106123456000LL);
	cr_assert_eq(
	    cu_time_parse("2021-02-03T05:05:06+01:00", &ns, &err), CU_OK);
	cr_assert_eq(ns, 1612325106000000000LL);
	cr_assert_eq(
	    cu_time_parse("2021-02-03 04:05:06Z", &ns, &err), CU_EPARSE);
	cr_assert(strstr(err.msg, "2021-02-03 04:05:06Z") != NULL);
	cr_assert_eq(
	    cu_time_parse("2021-13-03T04:05:06Z", &ns, &err), CU_EPARSE);
}

Test(cu_log, parse_level)
{
	enum cu_log_level l;

	cr_assert_eq(cu_log_parse_level("WARN", &l), CU_OK);
	cr_assert_eq(l, CU_LOG_WARN);
	cr_assert_eq(cu_log_parse_level("loud", &l), CU_EINVAL);
}
