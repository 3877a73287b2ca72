/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/queues_acheck_test.c - a ClusterQueue whose admission checks
 * are missing or not Active (que_cq_set_checks) is inactive with Kueue's
 * reason and keeps the message for its status; clearing it activates
 * the queue again; a queue not known is not created.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "queues/queues.h"

static que_state *st;

static void setup(void)
{
	cr_assert_eq(que_state_new(&st, NULL), CU_OK);
}

static void teardown(void)
{
	que_state_free(st);
}

TestSuite(queues_acheck, .init = setup, .fini = teardown);

static const char *const cpu[] = {"cpu"};

static void cq(const char *name)
{
	struct que_resource_quota rq = {"cpu", 1000, false, 0, false, 0};
	struct que_flavor_quotas fq = {"default", &rq, 1};
	struct que_resource_group g = {cpu, 1, &fq, 1};
	struct que_cq_spec s = {.name = name, .groups = &g, .n_groups = 1};

	cr_assert_eq(que_cq_set(st, &s, NULL), CU_OK);
}

Test(queues_acheck, missing_then_inactive_then_active)
{
	struct que_flavor_spec f = {.name = "default"};
	struct que_cq *q;
	cu_error err;

	cr_assert_eq(que_flavor_set(st, &f, NULL), CU_OK);
	cq("cq");
	cr_assert_eq(que_rebuild(st, NULL), CU_OK);
	cr_assert(que_cq_get(st, "cq")->active);

	cr_assert_eq(que_cq_set_checks(st, "cq", "AdmissionCheckNotFound",
			 "Can't admit new workloads: references missing "
			 "AdmissionCheck(s): a.",
			 &err),
	    CU_OK);
	cr_assert_eq(que_rebuild(st, NULL), CU_OK);
	q = que_cq_get(st, "cq");
	cr_assert(!q->active);
	cr_assert_str_eq(q->inactive_reason, "AdmissionCheckNotFound");
	cr_assert_str_eq(q->checks_message,
	    "Can't admit new workloads: references missing "
	    "AdmissionCheck(s): a.");

	/* A new spec keeps the checks' verdict until it is set again. */
	cq("cq");
	cr_assert_eq(que_rebuild(st, NULL), CU_OK);
	cr_assert(!que_cq_get(st, "cq")->active);

	cr_assert_eq(
	    que_cq_set_checks(st, "cq", "AdmissionCheckInactive", "m2", &err),
	    CU_OK);
	cr_assert_eq(que_rebuild(st, NULL), CU_OK);
	cr_assert_str_eq(
	    que_cq_get(st, "cq")->inactive_reason, "AdmissionCheckInactive");

	cr_assert_eq(que_cq_set_checks(st, "cq", NULL, NULL, &err), CU_OK);
	cr_assert_eq(que_rebuild(st, NULL), CU_OK);
	q = que_cq_get(st, "cq");
	cr_assert(q->active);
	cr_assert_null(q->checks_message);

	cr_assert_eq(
	    que_cq_set_checks(st, "nope", "AdmissionCheckNotFound", "m", &err),
	    CU_ENOTFOUND);
	cr_assert_null(que_cq_get(st, "nope"));
	cr_assert_eq(que_check_invariants(st, &err), CU_OK, "%s", err.msg);
}
