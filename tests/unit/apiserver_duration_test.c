/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/apiserver_duration_test.c - tests/apiserver/duration.c: ages
 * in Table cells worded and rounded as kube-apiserver words them, at every
 * boundary of its steps, and date cells of strings that are no time.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "tests/apiserver/apiserver.h"

#define S(n) ((cu_ns_t)(n)*CU_NS_PER_S)
#define M(n) S((n)*60)
#define H(n) M((n)*60)
#define D(n) H((n)*24)

static void is(cu_ns_t d, const char *want)
{
	char out[AS_DURATION_LEN];

	as_human_duration(d, out);
	cr_assert_str_eq(
	    out, want, "%lld ns: got %s, want %s", (long long)d, out, want);
}

Test(duration, seconds_up_to_two_minutes)
{
	is(S(-2), "<invalid>");
	is(S(-1), "0s");
	is(-CU_NS_PER_S / 2, "0s");
	is(0, "0s");
	is(S(59), "59s");
	is(S(119), "119s");
}

Test(duration, minutes_with_seconds_below_ten)
{
	is(S(120), "2m");
	is(S(121), "2m1s");
	is(M(9) + S(59), "9m59s");
	is(M(10) + S(30), "10m");
	is(M(179) + S(59), "179m");
}

Test(duration, hours_days_years)
{
	is(H(3), "3h");
	is(H(3) + M(1), "3h1m");
	is(H(7) + M(59), "7h59m");
	is(H(8) + M(30), "8h");
	is(H(47), "47h");
	is(H(48), "2d");
	is(D(2) + H(5), "2d5h");
	is(D(7) + H(23), "7d23h");
	is(D(8) + H(5), "8d");
	is(D(729), "729d");
	is(D(730), "2y");
	is(D(731), "2y1d");
	is(D(365 * 8 - 1), "7y364d");
	is(D(365 * 8 + 3), "8y");
}

Test(duration, date_cells)
{
	cu_ns_t now = S(1767225600); /* 2026-01-01T00:00:00Z */
	json_t *v = json_string("2025-12-31T23:55:00Z"), *c;

	c = as_age_cell(now, v);
	cr_assert_str_eq(json_string_value(c), "5m");
	json_decref(c);
	json_decref(v);
	v = json_string("soon");
	c = as_age_cell(now, v);
	cr_assert_str_eq(json_string_value(c), "<invalid>");
	json_decref(c);
	json_decref(v);
	c = as_age_cell(now, NULL);
	cr_assert(json_is_null(c));
	json_decref(c);
}
