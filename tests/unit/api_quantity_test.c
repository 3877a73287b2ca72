/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/api_quantity_test.c - api/quantity: parsing every suffix
 * family, rounding of sub-milli values, Kubernetes' canonical strings,
 * overflow on parse and arithmetic, comparison.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "api/quantity.h"

static struct api_quantity parse_ok(const char *s)
{
	struct api_quantity q = {0};
	cu_error err;
	cu_error_clear(&err);
	int rc = api_quantity_parse(&q, s, &err);
	cr_assert_eq(rc, CU_OK, "parse(\"%s\") = %d: %s", s, rc, err.msg);
	return q;
}

static int64_t milli_of(const char *s)
{
	return parse_ok(s).milli;
}

/* Parse then print: the string Kubernetes' Quantity.String() gives. */
static void assert_canonical(const char *in, const char *want)
{
	struct api_quantity q = parse_ok(in);
	char buf[API_QUANTITY_STR_MAX];
	size_t n = api_quantity_format(&q, buf, sizeof(buf));
	cr_assert_str_eq(buf, want, "canonical(\"%s\") = \"%s\", want \"%s\"",
	    in, buf, want);
	cr_assert_eq(n, strlen(want));
}

static void assert_parse_fails(const char *s, int code)
{
	struct api_quantity q = {.milli = 77, .format = API_QFMT_BINARY_SI};
	cu_error err;
	cu_error_clear(&err);
	int rc = api_quantity_parse(&q, s, &err);
	cr_assert_eq(rc, code, "parse(\"%s\") = %d, want %d", s, rc, code);
	cr_assert_eq(err.code, code);
	cr_assert(strstr(err.msg, "quantity \"") != NULL, "msg: %s", err.msg);
	cr_assert_eq(q.milli, 77, "output touched on failure");
}

Test(api_quantity, parses_plain_and_signed_numbers)
{
	cr_assert_eq(milli_of("1"), 1000);
	cr_assert_eq(milli_of("+1"), 1000);
	cr_assert_eq(milli_of("-2"), -2000);
	cr_assert_eq(milli_of("1.5"), 1500);
	cr_assert_eq(milli_of(".5"), 500);
	cr_assert_eq(milli_of("007"), 7000);
	cr_assert_eq(milli_of("0.001"), 1);
	cr_assert_eq(milli_of("12.250"), 12250);
	cr_assert_eq(parse_ok("1").format, API_QFMT_DECIMAL_SI);
}

Test(api_quantity, parses_decimal_si_suffixes)
{
	cr_assert_eq(milli_of("1n"), 1); /* rounds up */
	cr_assert_eq(milli_of("1u"), 1);
	cr_assert_eq(milli_of("500m"), 500);
	cr_assert_eq(milli_of("1k"), INT64_C(1000000));
	cr_assert_eq(milli_of("100M"), INT64_C(100000000000));
	cr_assert_eq(milli_of("1G"), INT64_C(1000000000000));
	cr_assert_eq(milli_of("1T"), INT64_C(1000000000000000));
	cr_assert_eq(milli_of("1P"), INT64_C(1000000000000000000));
	cr_assert_eq(milli_of("0.001E"), INT64_C(1000000000000000000));
	cr_assert_eq(parse_ok("1k").format, API_QFMT_DECIMAL_SI);
	cr_assert_eq(parse_ok("2m").format, API_QFMT_DECIMAL_SI);
}

Test(api_quantity, parses_binary_suffixes)
{
	cr_assert_eq(milli_of("1Ki"), INT64_C(1024000));
	cr_assert_eq(milli_of("1Mi"), INT64_C(1048576000));
	cr_assert_eq(milli_of("2Gi"), INT64_C(2147483648000));
	cr_assert_eq(milli_of("1Ti"), INT64_C(1099511627776000));
	cr_assert_eq(milli_of("1Pi"), INT64_C(1125899906842624000));
	cr_assert_eq(milli_of("0.001Ei"), INT64_C(1152921504606846976));
	cr_assert_eq(milli_of("0.1Ki"), 102400);
	cr_assert_eq(milli_of("1.5Gi"), INT64_C(1610612736000));
	cr_assert_eq(parse_ok("2Gi").format, API_QFMT_BINARY_SI);
}

Test(api_quantity, parses_exponents)
{
	cr_assert_eq(milli_of("1e3"), INT64_C(1000000));
	cr_assert_eq(milli_of("1E3"), INT64_C(1000000));
	cr_assert_eq(milli_of("1e+3"), INT64_C(1000000));
	cr_assert_eq(milli_of("1e-3"), 1);
	cr_assert_eq(milli_of("15e-1"), 1500);
	cr_assert_eq(milli_of("1e-99999"), 1);
	cr_assert_eq(milli_of("0e99999999999"), 0);
	cr_assert_eq(parse_ok("1e3").format, API_QFMT_DECIMAL_EXPONENT);
	cr_assert_eq(parse_ok("1E3").format, API_QFMT_DECIMAL_EXPONENT);
}

Test(api_quantity, rounds_sub_milli_away_from_zero)
{
	cr_assert_eq(milli_of("1u"), 1);
	cr_assert_eq(milli_of("1001u"), 2);
	cr_assert_eq(milli_of("0.0001"), 1);
	cr_assert_eq(milli_of("1.0001"), 1001);
	cr_assert_eq(milli_of("-1u"), -1);
	cr_assert_eq(milli_of("0.000000000000000000000000001"), 1);
	cr_assert_eq(milli_of("1.5000000000000000000000000"), 1500);
}

Test(api_quantity, accepts_kubernetes_zero_forms)
{
	/* parseQuantityString treats missing digits as zero. */
	cr_assert_eq(milli_of("0"), 0);
	cr_assert_eq(milli_of("-0"), 0);
	cr_assert_eq(milli_of("0Gi"), 0);
	cr_assert_eq(milli_of("000.000m"), 0);
	cr_assert_eq(milli_of("."), 0);
	cr_assert_eq(milli_of("-"), 0);
	cr_assert_eq(milli_of("m"), 0);
	cr_assert_eq(milli_of("1.G"), INT64_C(1000000000000));
}

Test(api_quantity, rejects_malformed_input)
{
	assert_parse_fails("", CU_EPARSE);
	assert_parse_fails("abc", CU_EPARSE);
	assert_parse_fails("1.1.1", CU_EPARSE);
	assert_parse_fails("1 ", CU_EPARSE);
	assert_parse_fails(" 1", CU_EPARSE);
	assert_parse_fails("1K", CU_EPARSE);
	assert_parse_fails("1mi", CU_EPARSE);
	assert_parse_fails("1e", CU_EPARSE);
	assert_parse_fails("1Gi3", CU_EPARSE);
	assert_parse_fails("1e3.5", CU_EPARSE);
	assert_parse_fails("1ee3", CU_EPARSE);
	assert_parse_fails("--1", CU_EPARSE);
	assert_parse_fails("1e99999999999999999999", CU_EPARSE);
	assert_parse_fails("0x10", CU_EPARSE);
}

Test(api_quantity, rejects_values_beyond_int64_milli)
{
	struct api_quantity q;
	cr_assert_eq(milli_of("9223372036854775807m"), INT64_MAX);
	cr_assert_eq(milli_of("9223372036854775.807"), INT64_MAX);
	cr_assert_eq(milli_of("-9223372036854775807m"), -INT64_MAX);
	assert_parse_fails("9223372036854775808m", CU_ERANGE);
	assert_parse_fails("9223372036854775.8071", CU_ERANGE);
	assert_parse_fails("-9223372036854775808m", CU_ERANGE);
	assert_parse_fails("1E", CU_ERANGE);
	assert_parse_fails("1Ei", CU_ERANGE);
	assert_parse_fails("1e99999", CU_ERANGE);
	assert_parse_fails("123456789012345678901234567890", CU_ERANGE);
	cr_assert_eq(api_quantity_parse(&q, "10P", NULL), CU_ERANGE);
}

/* Kubernetes accepts both (resource.Quantity keeps 1e1000 exactly and
 * caps 8Ei at 2^63-1 units); cueue cannot account them and says so with
 * its bound, which is what a job asking them is told (issue 32). */
Test(api_quantity, out_of_range_names_the_bound)
{
	static const char *const big[] = {
	    "1e1000", "8Ei", "-1e1000", "9223372036854775.808"};
	struct api_quantity q;
	cu_error err;
	size_t i;

	for (i = 0; i < sizeof(big) / sizeof(big[0]); i++) {
		cr_assert_eq(api_quantity_parse(&q, big[i], &err), CU_ERANGE,
		    "%s", big[i]);
		cr_expect(
		    strstr(err.msg, "(at most 9223372036854775807m)") != NULL,
		    "msg: %s", err.msg);
	}
}

Test(api_quantity, formats_canonically_like_kubernetes)
{
	assert_canonical("1000m", "1");
	assert_canonical("1.5", "1500m");
	assert_canonical("1024Ki", "1Mi");
	assert_canonical("2000", "2k");
	assert_canonical("0.1Ki", "102400m");
	assert_canonical("1e3", "1e3");
	assert_canonical("1E3", "1e3");
	assert_canonical("1e2", "100");
	assert_canonical("1.5e3", "1500");
	assert_canonical("15e-1", "1500e-3");
	assert_canonical("1e-3", "1e-3");
	assert_canonical("100M", "100M");
	assert_canonical("2Gi", "2Gi");
	assert_canonical("1.5Gi", "1536Mi");
	assert_canonical("1025Ki", "1025Ki");
	assert_canonical("1023", "1023");
	assert_canonical("500m", "500m");
	assert_canonical("0", "0");
	assert_canonical("0Gi", "0");
	assert_canonical("1u", "1m");
	assert_canonical("+1", "1");
	assert_canonical("10", "10");
	assert_canonical("1200000", "1200k");
	assert_canonical("0.001E", "1P");
	assert_canonical("-1Ki", "-1Ki");
	assert_canonical("-0.5Ki", "-512");
	assert_canonical("-1500m", "-1500m");
	assert_canonical("9223372036854775807m", "9223372036854775807m");
}

Test(api_quantity, format_follows_snprintf_truncation)
{
	char buf[4];
	struct api_quantity q = {.milli = 1500, .format = API_QFMT_DECIMAL_SI};
	cr_assert_eq(api_quantity_format(&q, buf, sizeof(buf)), 5);
	cr_assert_str_eq(buf, "150");
	cr_assert_eq(api_quantity_format(&q, NULL, 0), 5);
	cr_assert_eq(api_quantity_format_milli(-1500, buf, 1), 6);
	cr_assert_str_eq(buf, "");
	char big[API_QUANTITY_STR_MAX];
	cr_assert_eq(api_quantity_format_milli(-1500, big, sizeof(big)), 6);
	cr_assert_str_eq(big, "-1500m");
	cr_assert_eq(api_quantity_format_milli(
			 INT64_C(3) * 1024 * 1000, big, sizeof(big)),
	    4);
	cr_assert_str_eq(big, "3072");
}

Test(api_quantity, adds_and_subtracts_keeping_first_format)
{
	struct api_quantity a = parse_ok("1Gi"), b = parse_ok("1Gi"), r;
	cr_assert_eq(api_quantity_add(&r, &a, &b, NULL), CU_OK);
	cr_assert_eq(r.milli, INT64_C(2147483648000));
	cr_assert_eq(r.format, API_QFMT_BINARY_SI);
	char buf[API_QUANTITY_STR_MAX];
	api_quantity_format(&r, buf, sizeof(buf));
	cr_assert_str_eq(buf, "2Gi");

	struct api_quantity c = parse_ok("500m");
	cr_assert_eq(api_quantity_add(&r, &a, &c, NULL), CU_OK);
	api_quantity_format(&r, buf, sizeof(buf));
	cr_assert_str_eq(buf, "1073741824500m");

	cr_assert_eq(api_quantity_sub(&r, &c, &a, NULL), CU_OK);
	cr_assert_eq(r.milli, 500 - INT64_C(1073741824000));
	cr_assert_eq(r.format, API_QFMT_DECIMAL_SI);

	/* out may alias an operand. */
	cr_assert_eq(api_quantity_add(&a, &a, &b, NULL), CU_OK);
	cr_assert_eq(a.milli, INT64_C(2147483648000));
}

Test(api_quantity, arithmetic_overflow_is_an_error_and_leaves_out)
{
	struct api_quantity max = {INT64_MAX, API_QFMT_DECIMAL_SI};
	struct api_quantity min = {-INT64_MAX, API_QFMT_DECIMAL_SI};
	struct api_quantity one = {1, API_QFMT_DECIMAL_SI};
	struct api_quantity two = {2, API_QFMT_DECIMAL_SI};
	struct api_quantity out = {42, API_QFMT_BINARY_SI};
	cu_error err;
	cu_error_clear(&err);
	cr_assert_eq(api_quantity_add(&out, &max, &one, &err), CU_ERANGE);
	cr_assert_eq(err.code, CU_ERANGE);
	cr_assert(strstr(err.msg, "addition") != NULL, "%s", err.msg);
	cr_assert_eq(out.milli, 42);
	cr_assert_eq(out.format, API_QFMT_BINARY_SI);
	cr_assert_eq(api_quantity_sub(&out, &min, &one, &err), CU_ERANGE);
	cr_assert_eq(api_quantity_sub(&out, &min, &two, &err), CU_ERANGE);
	cr_assert_eq(api_quantity_sub(&out, &one, &min, &err), CU_ERANGE);
	cr_assert(strstr(err.msg, "subtraction") != NULL, "%s", err.msg);
	cr_assert_eq(out.milli, 42);
	cr_assert_eq(api_quantity_sub(&out, &max, &max, &err), CU_OK);
	cr_assert_eq(out.milli, 0);
}

Test(api_quantity, compares_by_value_only)
{
	struct api_quantity a = parse_ok("1Ki"), b = parse_ok("1024");
	struct api_quantity c = parse_ok("1025"), d = parse_ok("-1");
	cr_assert_eq(api_quantity_cmp(&a, &b), 0);
	cr_assert_eq(api_quantity_cmp(&a, &c), -1);
	cr_assert_eq(api_quantity_cmp(&c, &a), 1);
	cr_assert_eq(api_quantity_cmp(&d, &a), -1);
}

Test(api_quantity, parse_milli_returns_value_or_error)
{
	int64_t m = 5;
	cr_assert_eq(api_quantity_parse_milli("250m", &m, NULL), CU_OK);
	cr_assert_eq(m, 250);
	cu_error err;
	cu_error_clear(&err);
	cr_assert_eq(api_quantity_parse_milli("2X", &m, &err), CU_EPARSE);
	cr_assert_eq(m, 250);
	cr_assert(strstr(err.msg, "\"2X\"") != NULL, "%s", err.msg);
}

Test(api_quantity, reports_out_of_memory)
{
	struct api_quantity q = {0};
	cu_error err;
	cu_mem_fail_after(1, false);
	int rc = api_quantity_parse(&q, "1.5Gi", &err);
	cu_mem_fail_after(0, false);
	cr_assert_eq(rc, CU_ENOMEM);
	cr_assert_eq(err.code, CU_ENOMEM);
}
