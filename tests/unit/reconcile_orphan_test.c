/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/reconcile_orphan_test.c - rec_job_gone_finish, Kueue's
 * FinishOrphanedWorkloads: the Workloads of a gone job are finished
 * (OwnerNotFound), never deleted; finished or deleting ones only lose
 * cueue's finalizer; one without it gets nothing.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "api/json.h"
#include "reconcile/reconcile.h"

#define NOW INT64_C(1767225600000000000) /* 2026-01-01T00:00:00Z */
#define T0 "2025-12-31T00:00:00Z"

/* A Workload of a gone job: finalizer?, deleting?, Finished? */
static void owned_wl(struct api_workload *wl, const char *name, bool fin,
    bool deleting, bool finished)
{
	char buf[2048];
	json_t *d;
	json_error_t je;
	cu_error err;

	snprintf(buf, sizeof(buf),
	    "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\","
	    "\"metadata\":{\"name\":\"%s\",\"namespace\":\"team-a\","
	    "\"uid\":\"u-%s\",\"resourceVersion\":\"5\",\"generation\":2%s%s},"
	    "\"spec\":{\"queueName\":\"main\",\"podSets\":[{\"name\":\"main\","
	    "\"count\":1,\"template\":{\"spec\":{\"containers\":[{"
	    "\"name\":\"c\",\"image\":\"i\"}]}}}]}%s}",
	    name, name,
	    fin ? ",\"finalizers\":[\"other/"
		  "keep\",\"" REC_FINALIZER_RESOURCE_IN_USE "\"]"
		: "",
	    deleting ? ",\"deletionTimestamp\":\"" T0 "\"" : "",
	    finished ? ",\"status\":{\"conditions\":[{\"type\":\"Finished\","
		       "\"status\":\"True\",\"reason\":\"Succeeded\","
		       "\"message\":\"\",\"lastTransitionTime\":\"" T0 "\"}]}"
		     : "");
	d = json_loads(buf, 0, &je);
	cr_assert_not_null(d, "%s", je.text);
	cr_assert_eq(api_workload_decode(wl, d, &err), CU_OK, "%s", err.msg);
	json_decref(d);
}

static void in_of(
    struct rec_job_in *in, const struct api_workload **owned, size_t n)
{
	memset(in, 0, sizeof(*in));
	in->kind = REC_JOB_BATCH;
	in->ns = "team-a";
	in->name = "sample";
	in->owned = owned;
	in->n_owned = n;
}

static char *dump(const json_t *j)
{
	return json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
}

Test(orphan, running_workload_is_finished_not_deleted)
{
	struct api_workload wl;
	const struct api_workload *owned[1] = {&wl};
	struct rec_job_in in;
	struct rec_plan plan;
	const json_t *c;
	cu_error err;

	owned_wl(&wl, "wl-a", true, false, false);
	in_of(&in, owned, 1);
	rec_plan_init(&plan);
	cr_assert_eq(rec_job_gone_finish(&in, NOW, &plan, &err), CU_OK);
	cr_assert_eq(plan.n, 1);
	cr_expect_eq(plan.items[0].kind, REC_ITEM_WRITE);
	cr_expect_eq(plan.items[0].target, REC_TARGET_WORKLOAD);
	cr_expect_eq(plan.items[0].op, REC_WRITE_STATUS);
	cr_expect_eq(plan.items[0].expect, REC_EXPECT_RV);
	cr_expect_str_eq(plan.items[0].name, "wl-a");
	c = json_array_get(
	    json_object_get(
		json_object_get(plan.items[0].body, "status"), "conditions"),
	    0);
	cr_assert_not_null(c);
	cr_expect_str_eq(
	    json_string_value(json_object_get(c, "type")), "Finished");
	cr_expect_str_eq(
	    json_string_value(json_object_get(c, "status")), "True");
	cr_expect_str_eq(
	    json_string_value(json_object_get(c, "reason")), "OwnerNotFound");
	cr_expect_str_eq(json_string_value(json_object_get(c, "message")),
	    "The workload's owner no longer exists");
	rec_plan_free(&plan);
	api_workload_dispose(&wl);
}

Test(orphan, finished_or_deleting_only_loses_the_finalizer)
{
	struct api_workload a, b;
	const struct api_workload *owned[2] = {&a, &b};
	struct rec_job_in in;
	struct rec_plan plan;
	cu_error err;
	size_t i;
	char *s;

	owned_wl(&a, "wl-fin", true, false, true);
	owned_wl(&b, "wl-del", true, true, false);
	in_of(&in, owned, 2);
	rec_plan_init(&plan);
	cr_assert_eq(rec_job_gone_finish(&in, NOW, &plan, &err), CU_OK);
	cr_assert_eq(plan.n, 2);
	for (i = 0; i < 2; i++) {
		cr_expect_eq(plan.items[i].op, REC_WRITE_PATCH);
		s = dump(plan.items[i].body);
		cr_expect_str_eq(s, "{\"metadata\":{\"finalizers\":[\"other/"
				    "keep\"],\"resourceVersion\":\"5\"}}");
		cu_free(s);
	}
	rec_plan_free(&plan);
	api_workload_dispose(&a);
	api_workload_dispose(&b);
}

Test(orphan, finished_without_finalizer_plans_nothing)
{
	struct api_workload wl;
	const struct api_workload *owned[1] = {&wl};
	struct rec_job_in in;
	struct rec_plan plan;
	cu_error err;
	size_t i;

	owned_wl(&wl, "wl-done", false, false, true);
	in_of(&in, owned, 1);
	rec_plan_init(&plan);
	cr_assert_eq(rec_job_gone_finish(&in, NOW, &plan, &err), CU_OK);
	cr_expect_eq(plan.n, 0);
	for (i = 0; i < plan.n; i++)
		cr_expect_neq(
		    plan.items[i].op, REC_WRITE_DELETE, "never deleted");
	rec_plan_free(&plan);
	api_workload_dispose(&wl);
}
