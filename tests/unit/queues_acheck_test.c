/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/queues_acheck_test.c - a ClusterQueue whose admission checks
 * are missing or not Active (que_cq_set_checks) is inactive with Kueue's
 * reason and keeps the cause for its status; clearing it activates
 * the queue again; a queue not known is not created. The Active
 * message names every cause in Kueue's order (que_cq_active_message).
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
			 "references missing AdmissionCheck(s): a", &err),
	    CU_OK);
	cr_assert_eq(que_rebuild(st, NULL), CU_OK);
	q = que_cq_get(st, "cq");
	cr_assert(!q->active);
	cr_assert_str_eq(q->inactive_reason, "AdmissionCheckNotFound");
	cr_assert_str_eq(
	    q->checks_message, "references missing AdmissionCheck(s): a");

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

/* cq with one resource group of the given flavors (cpu, 1 each). */
static void cq_flavors(
    const char *name, const char *const *flv, size_t n, enum que_stop stop)
{
	struct que_resource_quota rq = {"cpu", 1000, false, 0, false, 0};
	struct que_flavor_quotas fq[4];
	struct que_resource_group g = {cpu, 1, fq, n};
	struct que_cq_spec s = {
	    .name = name, .groups = &g, .n_groups = 1, .stop = stop};
	size_t i;

	cr_assert(n <= 4);
	for (i = 0; i < n; i++)
		fq[i] = (struct que_flavor_quotas){flv[i], &rq, 1};
	cr_assert_eq(que_cq_set(st, &s, NULL), CU_OK);
}

static void expect_active(
    const char *name, const char *reason, const char *message)
{
	struct que_cq *q;
	char *m;

	cr_assert_eq(que_rebuild(st, NULL), CU_OK);
	q = que_cq_get(st, name);
	cr_assert_not_null(q);
	m = que_cq_active_message(st, q);
	cr_assert_not_null(m);
	cr_expect_str_eq(q->inactive_reason, reason);
	cr_expect_str_eq(m, message);
	cu_free(m);
}

/* Kueue's inactive messages name every cause: stopped, the missing
 * flavors (in the order the queue names them), the checks; the reason
 * is the first cause. */
Test(queues_acheck, active_message_names_every_cause_in_kueues_order)
{
	static const char *const two_missing[] = {"x", "default", "y"};
	struct que_flavor_spec f = {.name = "default"};
	cu_error err;

	cr_assert_eq(que_flavor_set(st, &f, NULL), CU_OK);
	cq("ok");
	expect_active("ok", "Ready", "Can admit new workloads");

	cq_flavors("flv", two_missing, 3, QUE_STOP_NONE);
	expect_active("flv", "FlavorNotFound",
	    "Can't admit new workloads: references missing "
	    "ResourceFlavor(s): x,y.");

	cq_flavors("stopped", two_missing + 1, 1, QUE_STOP_HOLD);
	expect_active(
	    "stopped", "Stopped", "Can't admit new workloads: is stopped.");

	cq_flavors("all", two_missing, 2, QUE_STOP_HOLD_AND_DRAIN);
	cr_assert_eq(que_cq_set_checks(st, "all", "AdmissionCheckInactive",
			 "references inactive AdmissionCheck(s): c", &err),
	    CU_OK);
	expect_active("all", "Stopped",
	    "Can't admit new workloads: is stopped, references missing "
	    "ResourceFlavor(s): x, references inactive AdmissionCheck(s): c.");

	/* Not stopped: the missing flavor comes before the checks. */
	cq_flavors("all", two_missing, 2, QUE_STOP_NONE);
	expect_active("all", "FlavorNotFound",
	    "Can't admit new workloads: references missing "
	    "ResourceFlavor(s): x, references inactive AdmissionCheck(s): c.");

	cr_assert_eq(que_cq_delete(st, "ok", &err), CU_OK);
	cr_assert_eq(que_rebuild(st, NULL), CU_OK);
	{
		struct que_cq *q = NULL;
		size_t i;
		char *m;

		for (i = 0; i < que_cq_count(st); i++)
			if (strcmp(que_cq_at(st, i)->name, "ok") == 0)
				q = que_cq_at(st, i);
		cr_assert_not_null(q);
		m = que_cq_active_message(st, q);
		cr_expect_str_eq(m,
		    "Can't admit new workloads; clusterQueue is terminating");
		cu_free(m);
	}
}
