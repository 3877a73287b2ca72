/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/lib_base64_test.c - api_base64_encode/decode: RFC 4648 test
 * vectors, binary round trips of every length, Go's tolerance of unused
 * trailing bits, and Go's strict-decoding rejections with
 * the offset Go reports.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "api/json.h"
#include "lib/cu.h"

static const char *const plain[] = {
    "", "f", "fo", "foo", "foob", "fooba", "foobar"};
static const char *const coded[] = {
    "", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};

Test(lib_base64, rfc4648_vectors_both_ways)
{
	size_t i, n;
	char *e, *d;

	for (i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
		e = api_base64_encode(plain[i], strlen(plain[i]));
		cr_assert_not_null(e);
		cr_assert_str_eq(e, coded[i]);
		cu_free(e);
		cr_assert_eq(api_base64_decode(coded[i], &d, &n, NULL), CU_OK,
		    "%s", coded[i]);
		cr_assert_eq(n, strlen(plain[i]));
		cr_assert_str_eq(d, plain[i]);
		cu_free(d);
	}
}

Test(lib_base64, binary_round_trip_keeps_every_byte)
{
	unsigned char in[256];
	size_t i, n;
	char *e, *d;

	for (i = 0; i < sizeof(in); i++)
		in[i] = (unsigned char)(255 - i);
	e = api_base64_encode(in, sizeof(in));
	cr_assert_not_null(e);
	cr_assert_eq(api_base64_decode(e, &d, &n, NULL), CU_OK);
	cr_assert_eq(n, sizeof(in));
	cr_assert_eq(memcmp(d, in, n), 0);
	cr_assert_eq(d[n], '\0');
	cu_free(e);
	cu_free(d);
}

Test(lib_base64, strict_rejections_name_the_offset)
{
	static const struct {
		const char *in;
		size_t bad;
	} cases[] = {
	    {"Zg", 0},	     /* not a multiple of four */
	    {"Zm9vY", 4},    /* ... */
	    {"Zm9v YmF", 4}, /* no whitespace */
	    {"Zm-v", 2},     /* URL-safe alphabet is not standard */
	    {"Z===", 1},     /* padding in the first half of a quantum */
	    {"Zg=a", 2},     /* '=' not followed by '=' or the end */
	    {"Zg==Zg==", 2}, /* padding before the end */
	};
	size_t i, n, bad;
	char *d = (char *)1;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bad = 999;
		cr_assert_eq(api_base64_decode(cases[i].in, &d, &n, &bad),
		    CU_EPARSE, "%s", cases[i].in);
		cr_assert_null(d);
		cr_assert_eq(
		    bad, cases[i].bad, "%s: got %zu", cases[i].in, bad);
	}
}

/* Go's StdEncoding (not Strict) ignores the unused low bits of the last
 * quantum, and so does api_base64_decode. */
Test(lib_base64, unused_trailing_bits_are_ignored)
{
	static const char *const in[] = {"Zh==", "Zm9=", "Zm/="};
	static const char *const want[] = {"f", "fo", "fo"};
	size_t i, n;
	char *d;

	for (i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		cr_assert_eq(api_base64_decode(in[i], &d, &n, NULL), CU_OK);
		cr_assert_eq(n, strlen(want[i]), "%s", in[i]);
		cr_assert_eq(memcmp(d, want[i], n), 0, "%s", in[i]);
		cu_free(d);
	}
}

/* Every length 0..64 and every byte value in every position of a quantum
 * survives encode + decode. */
Test(lib_base64, every_length_round_trips)
{
	unsigned char in[64];
	size_t len, i, n;
	char *e, *d;

	for (len = 0; len <= sizeof(in); len++) {
		for (i = 0; i < len; i++)
			in[i] = (unsigned char)(i * 37 + len * 11);
		e = api_base64_encode(in, len);
		cr_assert_not_null(e);
		cr_assert_eq(strlen(e), (len + 2) / 3 * 4);
		cr_assert_eq(api_base64_decode(e, &d, &n, NULL), CU_OK);
		cr_assert_eq(n, len);
		cr_assert_eq(memcmp(d, in, n), 0, "length %zu", len);
		cu_free(e);
		cu_free(d);
	}
}
