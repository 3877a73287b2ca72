/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/controller_keys_test.c - controller/keys: entries by string
 * tuples (parts compared one by one), insertion order kept across
 * replacement, deletion and growth, deletion while walking the ordered
 * entries, moving a set, and the 1-part string map.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "controller/keys.h"

Test(keys, parts_are_not_glued)
{
	ctl_keys s;
	struct ctl_kent *e;

	ctl_keys_init(&s, 3);
	e = ctl_keys_put(&s, CTL_K3(CTL_KIND_WL, "a/b", "c"));
	cr_assert_not_null(e);
	e->n = 7;
	cr_assert_null(ctl_keys_get(&s, CTL_K3(CTL_KIND_WL, "a", "b/c")));
	cr_assert_null(ctl_keys_get(&s, CTL_K3(CTL_KIND_JOB, "a/b", "c")));
	e = ctl_keys_get(&s, CTL_K3(CTL_KIND_WL, "a/b", "c"));
	cr_assert_not_null(e);
	cr_assert_eq(e->n, 7);
	cr_assert_str_eq(e->k[1], "a/b");
	cr_assert_eq(ctl_keys_count(&s), 1);
	cr_assert(ctl_keys_del(&s, CTL_K3(CTL_KIND_WL, "a/b", "c")));
	cr_assert_not(ctl_keys_del(&s, CTL_K3(CTL_KIND_WL, "a/b", "c")));
	cr_assert_eq(ctl_keys_count(&s), 0);
	ctl_keys_dispose(&s);
}

Test(keys, insertion_order)
{
	ctl_keys s;
	struct ctl_kent **v, *e;
	size_t i, n;
	char k[32];

	ctl_keys_init(&s, 1);
	/* Enough keys for the map to grow (and rehash) several times. */
	for (i = 0; i < 200; i++) {
		snprintf(k, sizeof(k), "uid-%zu", 199 - i);
		cr_assert_not_null(ctl_keys_put(&s, CTL_K1(k)));
	}
	/* A key put again keeps its place; one deleted and added again
	 * goes last. */
	e = ctl_keys_put(&s, CTL_K1("uid-199"));
	cr_assert_not_null(e);
	cr_assert_eq(ctl_keys_set_str(e, 0, "kept"), CU_OK);
	cr_assert(ctl_keys_del(&s, CTL_K1("uid-150")));
	cr_assert_not_null(ctl_keys_put(&s, CTL_K1("uid-150")));
	cr_assert_eq(ctl_keys_ordered(&s, &v, &n), CU_OK);
	cr_assert_eq(n, 200);
	cr_assert_str_eq(v[0]->k[0], "uid-199");
	cr_assert_str_eq(v[0]->s[0], "kept");
	cr_assert_str_eq(v[198]->k[0], "uid-0");
	cr_assert_str_eq(v[199]->k[0], "uid-150");
	/* Deleting the entry at hand while walking. */
	for (i = 0; i < n; i++)
		if (i % 2 == 0)
			cr_assert(ctl_keys_del(&s, CTL_K1(v[i]->k[0])));
	cu_free(v);
	cr_assert_eq(ctl_keys_count(&s), 100);
	cr_assert_eq(ctl_keys_ordered(&s, &v, &n), CU_OK);
	cr_assert_eq(n, 100);
	cr_assert_str_eq(v[0]->k[0], "uid-198");
	cu_free(v);
	ctl_keys_dispose(&s);
}

Test(keys, move_empties_the_source)
{
	ctl_keys a, b;

	ctl_keys_init(&a, 2);
	ctl_keys_init(&b, 2);
	cr_assert_not_null(ctl_keys_put(&a, CTL_K2("ns", "x")));
	cr_assert_not_null(ctl_keys_put(&b, CTL_K2("ns", "old")));
	ctl_keys_move(&b, &a);
	cr_assert_eq(ctl_keys_count(&a), 0);
	cr_assert_eq(ctl_keys_count(&b), 1);
	cr_assert_not_null(ctl_keys_get(&b, CTL_K2("ns", "x")));
	cr_assert_null(ctl_keys_get(&b, CTL_K2("ns", "old")));
	cr_assert_not_null(ctl_keys_put(&a, CTL_K2("ns", "y")));
	ctl_keys_dispose(&a);
	ctl_keys_dispose(&b);
}

/* The controller keeps several entries per Workload: an entry is one
 * allocation with its key's parts (plus the map's own growth), not one
 * per part. */
Test(keys, an_entry_is_one_allocation)
{
	ctl_keys s;
	struct ctl_kent *e;
	uint64_t before;
	char name[32];
	int i;

	ctl_keys_init(&s, 3);
	before = cu_mem_calls();
	for (i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "wl-%d", i);
		cr_assert_not_null(
		    ctl_keys_put(&s, CTL_K3(CTL_KIND_WL, "ns", name)));
	}
	cr_assert_lt(cu_mem_calls() - before, 1100, "%llu allocations",
	    (unsigned long long)(cu_mem_calls() - before));
	e = ctl_keys_put(&s, CTL_K3(CTL_KIND_JOB, "", "j"));
	cr_assert_str_eq(e->k[0], CTL_KIND_JOB);
	cr_assert_str_eq(e->k[1], "");
	cr_assert_str_eq(e->k[2], "j");
	cr_assert_not_null(ctl_keys_get(&s, CTL_K3(CTL_KIND_JOB, "", "j")));
	cr_assert_str_eq(
	    ctl_keys_get(&s, CTL_K3(CTL_KIND_WL, "ns", "wl-999"))->k[2],
	    "wl-999");
	ctl_keys_dispose(&s);
}
