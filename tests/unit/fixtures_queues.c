/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/fixtures_queues.c - a queue model with one ResourceFlavor
 * (default) and one ClusterQueue (cq) holding cpu, with LocalQueues onto
 * it, for the tests that drive the queue model directly.
 */
#include <criterion/criterion.h>

#include "tests/unit/fixtures.h"

que_state *fx_one_cq(int64_t cpu_milli, enum que_queueing queueing,
    const struct que_lq_spec *lqs, size_t nlqs)
{
	static const char *const cpu[] = {"cpu"};
	struct que_flavor_spec f = {.name = "default"};
	struct que_resource_quota rq = {"cpu", cpu_milli, false, 0, false, 0};
	struct que_flavor_quotas fq = {"default", &rq, 1};
	struct que_resource_group g = {cpu, 1, &fq, 1};
	struct que_cq_spec s = {
	    .name = "cq", .groups = &g, .n_groups = 1, .queueing = queueing};
	que_state *st;
	cu_error err;
	size_t i;

	cr_assert_eq(que_state_new(&st, NULL), CU_OK);
	cr_assert_eq(que_flavor_set(st, &f, NULL), CU_OK);
	cr_assert_eq(que_cq_set(st, &s, &err), CU_OK, "%s", err.msg);
	for (i = 0; i < nlqs; i++)
		cr_assert_eq(que_lq_set(st, &lqs[i], NULL), CU_OK);
	return st;
}
