/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/fixtures_tas.c - fixtures of the topology placement tests
 * (tests/unit/tas_*_test.c): an assignment rendered as
 * "host:count,..." and a placement's outcome checked against a table
 * row's expectation.
 */
#include <criterion/criterion.h>
#include <stdio.h>

#include "tests/unit/fixtures.h"

void fx_tas_render(
    const struct api_topology_assignment *a, char *buf, size_t len)
{
	size_t i, at = 0;

	buf[0] = '\0';
	for (i = 0; i < a->n_domains && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s:%d",
		    i ? "," : "", a->domains[i].values[a->levels.n - 1],
		    a->domains[i].count);
}

void fx_tas_expect(const char *name, int rc, int want_rc, const char *msg,
    const struct api_topology_assignment *a, const char *want)
{
	char got[1024];

	cr_assert_eq(rc, want_rc, "%s: rc %d (%s)", name, rc, msg);
	if (rc == CU_OK) {
		fx_tas_render(a, got, sizeof(got));
		cr_assert_str_eq(got, want, "%s", name);
	} else {
		cr_assert_str_eq(msg, want, "%s", name);
		cr_assert_eq(a->n_domains, 0, "%s", name);
	}
}
