/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/api_pack_test.c - api/pack.c, the text a compact informer
 * keeps per cached object: similar objects deflate to a fraction of their
 * JSON against the first one, every text parses back to its object, small
 * texts and an unpacked cache stay plain, and a failed allocation at any
 * point leaves either no text or a good one (never a broken one).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "api/pack_int.h"
#include "lib/cu.h"

/* A pending Workload much like the moonshot's, numbered i. */
static json_t *workload(int i)
{
	char name[32], uid[48];

	snprintf(name, sizeof(name), "wl-%07d", i);
	snprintf(uid, sizeof(uid), "51046e91-31a3-46e5-9dfe-%012d", i * 7919);
	return json_pack(
	    "{s:s,s:s,s:{s:s,s:s,s:s,s:s,s:i,s:s},s:{s:s,s:[{s:s,s:i,s:{s:{"
	    "s:s,s:[{s:s,s:s,s:{s:{s:s}}}]}}}],s:b},s:{s:[{s:s,s:s,s:s,s:s,"
	    "s:s}]}}",
	    "apiVersion", "kueue.x-k8s.io/v1beta2", "kind", "Workload",
	    "metadata", "name", name, "namespace", "moon", "uid", uid,
	    "creationTimestamp", "2026-12-07T12:51:50Z", "generation", 1,
	    "resourceVersion", name + 3, "spec", "queueName", "lq-0", "podSets",
	    "name", "main", "count", 1, "template", "spec", "restartPolicy",
	    "Never", "containers", "name", "c", "image", "busybox", "resources",
	    "requests", "cpu", "1", "active", 1, "status", "conditions", "type",
	    "QuotaReserved", "status", "False", "reason", "Pending", "message",
	    "couldn't assign flavors to pod set main: insufficient unused "
	    "quota for cpu in flavor default, 1 more needed",
	    "lastTransitionTime", "2026-12-07T12:52:10Z");
}

static void assert_reads_back(
    api__pack *p, const struct api__text *t, json_t *obj)
{
	json_t *back = api__text_parse(p, t);

	cr_assert_not_null(back);
	cr_assert(json_equal(back, obj));
	json_decref(back);
}

Test(api_pack, similar_objects_pack_to_a_fraction)
{
	struct api__text t[200];
	api__pack *p = NULL;
	size_t plain = 0, packed = 0;
	int i;

	for (i = 0; i < 200; i++) {
		json_t *o = workload(i);

		cr_assert(api__text_make(&p, true, o, NULL, 0, NULL, &t[i]));
		cr_assert_gt(t[i].plain, 0, "object %d packed", i);
		plain += t[i].plain;
		packed += t[i].len;
		json_decref(o);
	}
	cr_assert_lt(
	    packed * 5, plain, "%zu bytes packed of %zu", packed, plain);
	for (i = 199; i >= 0; i--) {
		json_t *o = workload(i);

		assert_reads_back(p, &t[i], o);
		json_decref(o);
		cu_free(t[i].text);
	}
	api__pack_free(p);
}

Test(api_pack, raw_text_is_taken_when_not_packed)
{
	json_t *o = json_pack("{s:s}", "a", "b");
	char *raw = cu_strdup("{\"a\":\"b\"}"), *keep = raw;
	struct api__text t;
	api__pack *p = NULL;

	/* too small to pack: the owner's text is taken as it is */
	cr_assert(api__text_make(&p, true, o, raw, strlen(raw), &raw, &t));
	cr_assert_null(raw);
	cr_assert_eq(t.text, keep);
	cr_assert_eq(t.plain, 0);
	assert_reads_back(p, &t, o);
	cu_free(t.text);
	json_decref(o);
	/* large but the cache is small: plain, written out */
	o = workload(1);
	cr_assert(api__text_make(&p, false, o, NULL, 0, NULL, &t));
	cr_assert_eq(t.plain, 0);
	cr_assert_null(p, "no packer made when nothing is packed");
	assert_reads_back(p, &t, o);
	cu_free(t.text);
	json_decref(o);
}

/* A packed text reads back only with the packer that made it; with
 * another dictionary it is an error or other bytes, never the object. */
Test(api_pack, a_text_reads_back_only_with_its_packer)
{
	struct api__text a, b;
	api__pack *p = NULL, *q = NULL;
	json_t *o = workload(3), *x = workload(50000), *back;

	json_object_set_new(x, "kind", json_string("NotAWorkloadAtAll"));
	cr_assert(api__text_make(&p, true, o, NULL, 0, NULL, &a));
	cr_assert(api__text_make(&q, true, x, NULL, 0, NULL, &b));
	cr_assert_gt(a.plain, 0);
	assert_reads_back(p, &a, o);
	assert_reads_back(q, &b, x);
	back = api__text_parse(q, &a);
	cr_assert(back == NULL || !json_equal(back, o));
	json_decref(back);
	cr_assert_null(api__text_parse(NULL, &a), "no packer, no text");
	cu_free(a.text);
	cu_free(b.text);
	api__pack_free(p);
	api__pack_free(q);
	json_decref(o);
	json_decref(x);
}

/* Every allocation of a make and a parse fails in turn. */
Test(api_pack, allocation_failures_leave_no_broken_text)
{
	uint64_t n;
	int made = 0;

	for (n = 1; n < 64; n++) {
		json_t *o = workload((int)n), *back;
		api__pack *p = NULL;
		struct api__text t;

		cu_mem_fail_after(n, false);
		if (api__text_make(&p, true, o, NULL, 0, NULL, &t)) {
			made++;
			cu_mem_fail_after(n, false);
			back = api__text_parse(p, &t);
			cu_mem_fail_after(0, false);
			if (back != NULL)
				cr_assert(json_equal(back, o));
			json_decref(back);
			assert_reads_back(p, &t, o);
			cu_free(t.text);
		}
		cu_mem_fail_after(0, false);
		api__pack_free(p);
		json_decref(o);
	}
	cr_assert_gt(made, 0);
}
