/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/reconcile_slices_test.c - the workload slices of an elastic
 * job (reconcile/slices.c): the slice a Workload replaces (same
 * namespace only), which slices the job's reconciler looks at (oldest
 * unfinished first, the replaced slice first on equal creation times, a
 * finished slice with cueue's finalizer before all), and the Finished
 * status of a replaced slice (reason and message as Kueue's).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "reconcile/reconcile.h"

/* A Workload name in ns "team", created at sec, replacing repl ("" for
 * none), finished or not, with cueue's finalizer or not. */
static void mk(struct api_workload *wl, const char *name, int sec,
    const char *repl, bool done, bool fin)
{
	char ts[32];
	json_t *d;
	cu_error err;

	snprintf(ts, sizeof(ts), "2026-01-01T00:00:%02dZ", sec);
	d = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:{s:s}, s:[], "
		      "s:{s:s}}, s:{s:s, s:[{s:s, s:i, s:{s:{s:[{s:s, "
		      "s:s}]}}}]}, s:{s:[]}}",
	    "apiVersion", "kueue.x-k8s.io/v1beta2", "kind", "Workload",
	    "metadata", "name", name, "namespace", "team", "uid", name,
	    "creationTimestamp", ts, "annotations",
	    "kueue.x-k8s.io/workload-slice-replacement-for", repl, "finalizers",
	    "labels", "kueue.x-k8s.io/job-uid", "job-uid-1", "spec",
	    "queueName", "q", "podSets", "name", "main", "count", 1, "template",
	    "spec", "containers", "name", "c", "image", "i", "status",
	    "conditions");
	cr_assert_not_null(d);
	if (!*repl)
		json_object_del(json_object_get(json_object_get(d, "metadata"),
				    "annotations"),
		    "kueue.x-k8s.io/workload-slice-replacement-for");
	if (fin)
		json_array_append_new(
		    json_object_get(
			json_object_get(d, "metadata"), "finalizers"),
		    json_string(REC_FINALIZER_RESOURCE_IN_USE));
	if (done)
		json_array_append_new(
		    json_object_get(json_object_get(d, "status"), "conditions"),
		    json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", "Finished",
			"status", "True", "reason", "Succeeded", "message", "",
			"lastTransitionTime", ts));
	cr_assert_eq(api_workload_decode(wl, d, &err), CU_OK, "%s", err.msg);
	json_decref(d);
}

Test(reconcile_slices, replaces_same_namespace_only)
{
	struct api_workload a, b, c;

	mk(&a, "a", 1, "team/old", false, false);
	mk(&b, "b", 1, "other/old", false, false);
	mk(&c, "c", 1, "", false, false);
	cr_expect_str_eq(rec_slice_replaces(&a), "old");
	cr_expect_null(rec_slice_replaces(&b));
	cr_expect_null(rec_slice_replaces(&c));
	api_workload_dispose(&a);
	api_workload_dispose(&b);
	api_workload_dispose(&c);
}

Test(reconcile_slices, pick_table)
{
	struct api_workload w[4];
	const struct api_workload *p[4];
	struct rec_slices s;
	int i;

	/* equal creation times: the replaced slice comes first */
	mk(&w[0], "z-new", 5, "team/a-old", false, false);
	mk(&w[1], "a-old", 5, "", false, true);
	mk(&w[2], "done", 1, "", true, false);
	for (i = 0; i < 3; i++)
		p[i] = &w[i];
	rec_slices_pick(p, 3, &s);
	cr_expect_eq(s.wl, &w[0]);
	cr_expect_eq(s.old, &w[1]);
	/* reversed name order, same answer */
	api_workload_dispose(&w[0]);
	api_workload_dispose(&w[1]);
	mk(&w[0], "a-new", 5, "team/z-old", false, false);
	mk(&w[1], "z-old", 5, "", false, true);
	rec_slices_pick(p, 3, &s);
	cr_expect_eq(s.wl, &w[0]);
	cr_expect_eq(s.old, &w[1]);
	/* one slice; none */
	rec_slices_pick(p + 1, 2, &s);
	cr_expect_eq(s.wl, &w[1]);
	cr_expect_null(s.old);
	rec_slices_pick(p + 2, 1, &s);
	cr_expect_null(s.wl);
	cr_expect_null(s.old);
	/* a finished slice still holding the finalizer comes first */
	mk(&w[3], "retired", 2, "", true, true);
	p[3] = &w[3];
	rec_slices_pick(p, 4, &s);
	cr_expect_eq(s.wl, &w[3]);
	cr_expect_null(s.old);
	for (i = 0; i < 4; i++)
		api_workload_dispose(&w[i]);
}

Test(reconcile_slices, replaced_patch)
{
	struct api_workload old, by, fin;
	json_t *patch = NULL, *c;
	cu_error err;

	mk(&old, "old", 1, "", false, true);
	mk(&by, "new", 2, "team/old", false, true);
	mk(&fin, "fin", 1, "", true, true);
	cr_assert_eq(
	    rec_slice_replaced_patch(&old, &by, 7000000000LL, &patch, &err),
	    CU_OK, "%s", err.msg);
	cr_assert_not_null(patch);
	c = json_array_get(
	    json_object_get(json_object_get(patch, "status"), "conditions"), 0);
	cr_assert_not_null(c, "%s", json_dumps(patch, 0));
	cr_expect_str_eq(
	    json_string_value(json_object_get(c, "type")), "Finished");
	cr_expect_str_eq(json_string_value(json_object_get(c, "reason")),
	    REC_FINISHED_SLICE_REPLACED);
	cr_expect_str_eq(json_string_value(json_object_get(c, "message")),
	    "Replaced to accommodate a workload (UID: new, JobUID: "
	    "job-uid-1) due to workload slice aggregation");
	json_decref(patch);
	patch = NULL;
	cr_assert_eq(
	    rec_slice_replaced_patch(&fin, &by, 7000000000LL, &patch, &err),
	    CU_OK);
	cr_expect_null(patch, "already finished: no write");
	api_workload_dispose(&old);
	api_workload_dispose(&by);
	api_workload_dispose(&fin);
}
