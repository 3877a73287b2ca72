/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/reconcile_inuse_test.c - the resource-in-use finalizer of
 * ClusterQueues and ResourceFlavors (rec_in_use_finalizer_patch,
 * rec_cq_uses_flavor), table-driven: the object's finalizers, whether it
 * is being deleted and whether it is in use in, the patch out.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "reconcile/reconcile.h"

#define FIN "kueue.x-k8s.io/resource-in-use"

struct row {
	const char *name;
	const char *finalizers; /* JSON array, or NULL: none */
	bool deleting;
	bool in_use;
	bool no_rv;
	const char *want; /* the patch's finalizers as JSON; NULL: none */
};

static const struct row rows[] = {
    {"live_without_adds", NULL, false, false, false, "[\"" FIN "\"]"},
    {"live_keeps_others", "[\"other/x\"]", false, true, false,
	"[\"other/x\",\"" FIN "\"]"},
    {"live_with_nothing", "[\"other/x\",\"" FIN "\"]", false, false, false,
	NULL},
    {"deleting_in_use_kept", "[\"" FIN "\"]", true, true, false, NULL},
    {"deleting_unused_removed", "[\"a/b\",\"" FIN "\",\"c/d\"]", true, false,
	false, "[\"a/b\",\"c/d\"]"},
    {"deleting_without_nothing", "[\"a/b\"]", true, false, false, NULL},
    {"no_resource_version", NULL, false, false, true, NULL},
};

Test(in_use_finalizer, table)
{
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		json_t *obj = json_pack("{s:{s:s}}", "metadata", "name", "cq");
		json_t *md = json_object_get(obj, "metadata");
		json_t *patch = NULL;
		cu_error err;
		char *got;

		if (!r->no_rv)
			json_object_set_new(
			    md, "resourceVersion", json_string("7"));
		if (r->finalizers != NULL)
			json_object_set_new(md, "finalizers",
			    json_loads(r->finalizers, 0, NULL));
		if (r->deleting)
			json_object_set_new(md, "deletionTimestamp",
			    json_string("2026-01-01T00:00:00Z"));
		cr_assert_eq(
		    rec_in_use_finalizer_patch(obj, r->in_use, &patch, &err),
		    CU_OK, "%s", r->name);
		if (r->want == NULL) {
			cr_expect_null(patch, "%s", r->name);
		} else {
			cr_assert_not_null(patch, "%s", r->name);
			got = json_dumps(
			    json_object_get(json_object_get(patch, "metadata"),
				"finalizers"),
			    JSON_COMPACT);
			cr_expect_str_eq(got, r->want, "%s", r->name);
			cu_free(got);
			cr_expect_str_eq(json_string_value(json_object_get(
					     json_object_get(patch, "metadata"),
					     "resourceVersion")),
			    "7", "%s", r->name);
		}
		json_decref(patch);
		json_decref(obj);
	}
}

Test(in_use_finalizer, cq_uses_flavor)
{
	json_t *cq = json_loads(
	    "{\"spec\":{\"resourceGroups\":[{\"coveredResources\":[\"cpu\"],"
	    "\"flavors\":[{\"name\":\"a\"},{\"name\":\"b\"}]},"
	    "{\"flavors\":[{\"name\":\"c\"}]}]}}",
	    0, NULL);

	cr_assert_not_null(cq);
	cr_expect(rec_cq_uses_flavor(cq, "b"));
	cr_expect(rec_cq_uses_flavor(cq, "c"));
	cr_expect(!rec_cq_uses_flavor(cq, "d"));
	json_decref(cq);
	cq = json_object();
	cr_expect(!rec_cq_uses_flavor(cq, "a"));
	json_decref(cq);
}
