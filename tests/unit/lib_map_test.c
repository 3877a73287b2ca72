/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/lib_map_test.c - lib/cu.h: insert, lookup, replace,
 * delete; growth; deletion during iteration; tombstones under forced
 * collisions; multi-part keys; allocation failure leaving the map intact.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "lib/cu.h"

struct item {
	char name[32];
	const char *parts[2]; /* {ns, name} for the parts map */
	char ns[32];
	int value;
	bool seen;
};

CU_MAP_TYPED(item_map, const char *, struct item);
CU_MAP_TYPED(item_pmap, const char *const *, struct item);

static struct item *items_new(size_t n)
{
	struct item *v = cu_calloc(n, sizeof(*v));
	size_t i;

	cr_assert_not_null(v);
	for (i = 0; i < n; i++) {
		snprintf(v[i].name, sizeof(v[i].name), "item-%zu", i);
		snprintf(v[i].ns, sizeof(v[i].ns), "ns-%zu", i % 7);
		v[i].parts[0] = v[i].ns;
		v[i].parts[1] = v[i].name;
		v[i].value = (int)i;
	}
	return v;
}

Test(cu_map, insert_lookup_replace_delete)
{
	item_map m;
	struct item a = {.name = "a", .value = 1},
		    a2 = {.name = "a", .value = 2};
	struct item b = {.name = "b", .value = 3}, *old = &b;
	char key[] = "a";

	item_map_init_str(&m);
	cr_assert_null(item_map_get(&m, "a"));
	cr_assert_null(item_map_del(&m, "a"));
	cr_assert_eq(item_map_count(&m), 0);
	cr_assert_eq(item_map_put_old(&m, a.name, &a, &old), CU_OK);
	cr_assert_null(old);
	cr_assert_eq(item_map_put(&m, b.name, &b), CU_OK);
	cr_assert_eq(item_map_get(&m, key), &a, "looked up by content");
	cr_assert_eq(item_map_get(&m, "b"), &b);
	cr_assert_null(item_map_get(&m, "c"));
	cr_assert_eq(item_map_count(&m), 2);

	/* replace: the new key pointer is kept, the old value returned */
	cr_assert_eq(item_map_put_old(&m, a2.name, &a2, &old), CU_OK);
	cr_assert_eq(old, &a);
	cr_assert_eq(item_map_count(&m), 2);
	memset(a.name, 'x', sizeof(a.name) - 1); /* old key may now change */
	cr_assert_eq(item_map_get(&m, "a"), &a2);

	cr_assert_eq(item_map_del(&m, "a"), &a2);
	cr_assert_null(item_map_get(&m, "a"));
	cr_assert_null(item_map_del(&m, "a"));
	cr_assert_eq(item_map_count(&m), 1);
	cr_assert_eq(item_map_get(&m, "b"), &b);
	item_map_dispose(&m);
	cr_assert_eq(item_map_count(&m), 0);
	cr_assert_null(item_map_get(&m, "b"));
	/* usable again after dispose */
	cr_assert_eq(item_map_put(&m, b.name, &b), CU_OK);
	cr_assert_eq(item_map_get(&m, "b"), &b);
	item_map_dispose(&m);
}

Test(cu_map, grows_across_resizes_and_keeps_every_entry)
{
	enum { N = 5000 };
	struct item *v = items_new(N);
	item_map m;
	size_t i, cap = 0, resizes = 0;

	item_map_init_str(&m);
	for (i = 0; i < N; i++) {
		cr_assert_eq(item_map_put(&m, v[i].name, &v[i]), CU_OK);
		if (m.map.cap != cap) {
			cap = m.map.cap;
			resizes++;
		}
		cr_assert_eq(item_map_count(&m), i + 1);
		/* an early entry survives every rehash */
		cr_assert_eq(item_map_get(&m, "item-0"), &v[0]);
	}
	cr_assert_geq(resizes, 8);
	cr_assert_leq(m.map.n + m.map.tombs, m.map.cap / 4 * 3);
	for (i = 0; i < N; i++)
		cr_assert_eq(item_map_get(&m, v[i].name), &v[i]);
	/* delete every other one, then look everything up again */
	for (i = 0; i < N; i += 2)
		cr_assert_eq(item_map_del(&m, v[i].name), &v[i]);
	for (i = 0; i < N; i++)
		cr_assert_eq(item_map_get(&m, v[i].name), i % 2 ? &v[i] : NULL);
	cr_assert_eq(item_map_count(&m), N / 2);
	item_map_dispose(&m);
	cu_free(v);
}

Test(cu_map, iteration_visits_each_once_and_allows_deletion)
{
	enum { N = 300 };
	struct item *v = items_new(N), *it;
	cu_map_iter iter = CU_MAP_ITER_INIT;
	item_map m;
	size_t i, visited = 0;

	item_map_init_str(&m);
	for (i = 0; i < N; i++)
		cr_assert_eq(item_map_put(&m, v[i].name, &v[i]), CU_OK);
	/* delete the current entry when odd, and its successor in index
	 * order (maybe not yet visited) when divisible by 10 */
	while (item_map_next(&m, &iter, &it)) {
		cr_assert(!it->seen, "%s visited twice", it->name);
		it->seen = true;
		visited++;
		if (it->value % 2)
			cr_assert_eq(item_map_del(&m, it->name), it);
		if (it->value % 10 == 0 && it->value + 1 < N &&
		    item_map_get(&m, v[it->value + 1].name) != NULL)
			item_map_del(&m, v[it->value + 1].name);
	}
	cr_assert_null(it);
	for (i = 0; i < N; i++) {
		bool kept = i % 2 == 0;

		cr_assert_eq(
		    item_map_get(&m, v[i].name), kept ? &v[i] : NULL, "%zu", i);
		/* every entry still in the map when reached was visited */
		if (kept)
			cr_assert(v[i].seen);
	}
	cr_assert_leq(visited, N);
	cr_assert_eq(item_map_count(&m), N / 2);
	/* an empty map iterates nothing */
	item_map_dispose(&m);
	iter = CU_MAP_ITER_INIT;
	cr_assert(!item_map_next(&m, &iter, &it));
	cu_free(v);
}

/* Every key hashes alike: every probe walks the one cluster. */
static uint64_t same_hash(const void *key)
{
	(void)key;
	return 42;
}

static bool str_eq(const void *a, const void *b)
{
	return strcmp(a, b) == 0;
}

Test(cu_map, colliding_hashes_and_tombstones)
{
	enum { N = 64 };
	struct item *v = items_new(N);
	cu_map m;
	size_t i, round;

	cu_map_init_custom(&m, same_hash, str_eq);
	for (i = 0; i < N; i++)
		cr_assert_eq(cu_map_put(&m, v[i].name, &v[i], NULL), CU_OK);
	for (i = 0; i < N; i++)
		cr_assert_eq(cu_map_get(&m, v[i].name), &v[i]);
	/* Delete from the middle of the cluster: tombstones must not end
	 * the probe for the keys behind them. */
	for (i = 0; i < N; i += 3)
		cr_assert_eq(cu_map_del(&m, v[i].name), &v[i]);
	cr_assert_gt(m.tombs, 0);
	for (i = 0; i < N; i++)
		cr_assert_eq(
		    cu_map_get(&m, v[i].name), i % 3 ? &v[i] : NULL, "%zu", i);
	/* Re-insert: tombstones are reused, a key is never stored twice. */
	for (i = 0; i < N; i++)
		cr_assert_eq(cu_map_put(&m, v[i].name, &v[i], NULL), CU_OK);
	cr_assert_eq(cu_map_count(&m), N);
	for (i = 0; i < N; i++)
		cr_assert_eq(cu_map_del(&m, v[i].name), &v[i]);
	cr_assert_eq(cu_map_count(&m), 0);
	/* churn: deletes and inserts forever must not fill the table with
	 * tombstones (every probe would then loop) */
	for (round = 0; round < 50; round++)
		for (i = 0; i < N; i++) {
			cr_assert_eq(
			    cu_map_put(&m, v[i].name, &v[i], NULL), CU_OK);
			if (i >= 5)
				cr_assert_eq(
				    cu_map_del(&m, v[i - 5].name), &v[i - 5]);
		}
	cr_assert_leq(m.n + m.tombs, m.cap / 4 * 3);
	cu_map_dispose(&m);
	cu_free(v);
}

Test(cu_map, deleting_the_tail_of_a_cluster_clears_its_tombstones)
{
	struct item *v = items_new(4);
	cu_map m;
	size_t i;

	cu_map_init_custom(&m, same_hash, str_eq);
	for (i = 0; i < 4; i++)
		cr_assert_eq(cu_map_put(&m, v[i].name, &v[i], NULL), CU_OK);
	cr_assert_eq(cu_map_del(&m, v[1].name), &v[1]);
	cr_assert_eq(cu_map_del(&m, v[2].name), &v[2]);
	cr_assert_eq(m.tombs, 2);
	cr_assert_eq(cu_map_del(&m, v[3].name), &v[3]);
	cr_assert_eq(m.tombs, 0, "the cluster's tail is empty again");
	cr_assert_eq(cu_map_get(&m, v[0].name), &v[0]);
	cu_map_dispose(&m);
	cu_free(v);
}

Test(cu_map, parts_keys_never_collide_as_concatenations)
{
	const char *k1[2] = {"a/b", "c"}, *k2[2] = {"a", "b/c"};
	const char *k3[2] = {"ab", ""}, *k4[2] = {"a", "b"};
	const char *k5[2] = {"", "ab"}, *q[2];
	struct item x1 = {.value = 1}, x2 = {.value = 2}, x3 = {.value = 3},
		    x4 = {.value = 4}, x5 = {.value = 5};
	item_pmap m;
	char ns[8], name[8];

	item_pmap_init_parts(&m, 2);
	cr_assert_eq(item_pmap_put(&m, k1, &x1), CU_OK);
	cr_assert_eq(item_pmap_put(&m, k2, &x2), CU_OK);
	cr_assert_eq(item_pmap_put(&m, k3, &x3), CU_OK);
	cr_assert_eq(item_pmap_put(&m, k4, &x4), CU_OK);
	cr_assert_eq(item_pmap_put(&m, k5, &x5), CU_OK);
	cr_assert_eq(item_pmap_count(&m), 5);
	/* looked up through other arrays and other string copies */
	snprintf(ns, sizeof(ns), "a");
	snprintf(name, sizeof(name), "b/c");
	q[0] = ns;
	q[1] = name;
	cr_assert_eq(item_pmap_get(&m, q), &x2);
	snprintf(ns, sizeof(ns), "a/b");
	snprintf(name, sizeof(name), "c");
	cr_assert_eq(item_pmap_get(&m, q), &x1);
	q[0] = "";
	q[1] = "ab";
	cr_assert_eq(item_pmap_get(&m, q), &x5);
	q[0] = "ab";
	q[1] = "";
	cr_assert_eq(item_pmap_get(&m, q), &x3);
	q[0] = "a";
	q[1] = "bc";
	cr_assert_null(item_pmap_get(&m, q));
	cr_assert_neq(cu_map_hash_parts(k1, 2), cu_map_hash_parts(k2, 2));
	cr_assert_neq(cu_map_hash_parts(k3, 2), cu_map_hash_parts(k5, 2));
	cr_assert_eq(item_pmap_del(&m, k2), &x2);
	cr_assert_eq(item_pmap_get(&m, k1), &x1);
	item_pmap_dispose(&m);
}

Test(cu_map, zero_part_map_holds_the_empty_tuple)
{
	struct item x = {.value = 1};
	const char *stored[1] = {NULL};
	item_pmap m;

	item_pmap_init_parts(&m, 0);
	cr_assert_null(item_pmap_get(&m, NULL));
	cr_assert_eq(item_pmap_put(&m, stored, &x), CU_OK);
	cr_assert_eq(item_pmap_get(&m, NULL), &x);
	cr_assert_eq(item_pmap_count(&m), 1);
	cr_assert_eq(item_pmap_del(&m, NULL), &x);
	item_pmap_dispose(&m);
}

Test(cu_map, allocation_failure_leaves_the_map_intact)
{
	enum { N = 200 };
	struct item *v = items_new(N);
	item_map m;
	size_t i, n, failures = 0;

	item_map_init_str(&m);
	/* The first insertion allocates: failing it leaves an empty map. */
	cu_mem_fail_after(1, false);
	cr_assert_eq(item_map_put(&m, v[0].name, &v[0]), CU_ENOMEM);
	cr_assert_eq(item_map_count(&m), 0);
	cr_assert_null(item_map_get(&m, v[0].name));
	/* Every allocation fails: inserts that need growth fail, the others
	 * succeed, and the map always holds exactly what was put. */
	for (n = 0, i = 0; i < N; i++) {
		int rc;

		cu_mem_fail_after(1, true);
		rc = item_map_put(&m, v[i].name, &v[i]);
		cu_mem_fail_after(0, false);
		if (rc == CU_ENOMEM) {
			failures++;
			cr_assert_eq(item_map_count(&m), n);
			cr_assert_null(item_map_get(&m, v[i].name));
			cr_assert_eq(item_map_put(&m, v[i].name, &v[i]), CU_OK);
		} else {
			cr_assert_eq(rc, CU_OK);
		}
		n++;
		cr_assert_eq(item_map_count(&m), n);
		for (size_t j = 0; j <= i; j++)
			cr_assert_eq(item_map_get(&m, v[j].name), &v[j]);
	}
	cr_assert_geq(failures, 5);
	/* Replacing and deleting never allocate. */
	cu_mem_fail_after(1, true);
	cr_assert_eq(item_map_put(&m, v[3].name, &v[3]), CU_OK);
	cr_assert_eq(item_map_del(&m, v[4].name), &v[4]);
	cr_assert_eq(item_map_put(&m, v[4].name, &v[4]), CU_OK, "tombstone");
	cu_mem_fail_after(0, false);
	item_map_dispose(&m);
	cu_free(v);
}

Test(cu_map, reserve_makes_insertions_infallible)
{
	enum { N = 100 };
	struct item *v = items_new(N);
	item_map m;
	size_t i;

	item_map_init_str(&m);
	cu_mem_fail_after(1, true);
	cr_assert_eq(item_map_reserve(&m, N), CU_ENOMEM);
	cu_mem_fail_after(0, false);
	cr_assert_eq(m.map.cap, 0);
	cr_assert_eq(item_map_reserve(&m, N), CU_OK);
	cu_mem_fail_after(1, true);
	for (i = 0; i < N; i++)
		cr_assert_eq(item_map_put(&m, v[i].name, &v[i]), CU_OK);
	cr_assert_eq(item_map_reserve(&m, 0), CU_OK);
	cu_mem_fail_after(0, false);
	cr_assert_eq(item_map_count(&m), N);
	item_map_dispose(&m);
	cu_free(v);
}

Test(cu_map, string_hash_spreads_low_bits)
{
	/* keys differing in one digit land in many of 64 slots */
	bool used[64] = {false};
	size_t i, distinct = 0;
	char key[32];

	for (i = 0; i < 64; i++) {
		snprintf(key, sizeof(key), "workload-%03zu", i);
		used[cu_map_hash_str(key) & 63] = true;
	}
	for (i = 0; i < 64; i++)
		distinct += used[i];
	cr_assert_geq(distinct, 32);
	cr_assert_neq(cu_map_hash_str(""), cu_map_hash_str("a"));
}
