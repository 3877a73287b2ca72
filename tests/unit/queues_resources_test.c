/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/queues_resources_test.c - que_resources_apply: the
 * Configuration's resources (excludeResourcePrefixes, transformations)
 * applied to one pod's requests as Kueue's accounting does. Table-driven,
 * one row per rule: no configuration; Retain; Replace; Replace with no
 * outputs (ignored); multiplyBy present and absent; outputs summed across
 * inputs; a negative output as an allowance (clamped at 0, never reducing
 * a retained request); exclusion before transformation (an excluded input
 * gives no outputs, an excluded multiplier does not scale); plain string
 * prefixes; Kueue's documented examples (administer_cluster_quotas,
 * HAMi, the shared-quota credits); rounding and saturation. A Workload keeps
 * its pods' own requests (for topology placement) only when they differ from
 * what is counted.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "queues/queues.h"

#define GI (INT64_C(1) << 30)
#define M(x) ((int64_t)(x)*1000) /* units to milli-units */

struct row {
	const char *name;
	/* configuration */
	const char *exclude[3];
	struct {
		const char *input;
		bool replace;
		const char *multiply_by;
		struct que_request out[3];
	} tr[3];
	/* pod requests in, and what quota counts */
	struct que_request in[5];
	struct que_request want[6];
};

static const struct row rows[] = {
    {"no configuration: requests as written", {NULL},
	{{NULL, false, NULL, {{NULL, 0}}}}, {{"cpu", 1500}, {"memory", M(GI)}},
	{{"cpu", 1500}, {"memory", M(GI)}}},
    {"Retain keeps the input and adds the outputs", {NULL},
	{{"cpu", false, NULL, {{"cpu_credits", M(1)}}}}, {{"cpu", M(3)}},
	{{"cpu", M(3)}, {"cpu_credits", M(3)}}},
    {"Replace drops the input", {NULL},
	{{"example.com/gpu", true, NULL, {{"credits", M(10)}}}},
	{{"cpu", M(1)}, {"example.com/gpu", M(2)}},
	{{"cpu", M(1)}, {"credits", M(20)}}},
    {"Replace with no outputs ignores the input", {NULL},
	{{"example.com/ignored", true, NULL, {{NULL, 0}}}},
	{{"cpu", M(1)}, {"example.com/ignored", M(7)}}, {{"cpu", M(1)}}},
    {"a resource without transformation is kept among transformed ones", {NULL},
	{{"cpu", false, NULL, {{"credits", 500}}}},
	{{"memory", M(5)}, {"cpu", M(2)}},
	{{"memory", M(5)}, {"cpu", M(2)}, {"credits", M(1)}}},
    {"multiplyBy scales the outputs, never the retained input", {NULL},
	{{"example.com/gpumem", false, "nvidia.com/gpu",
	    {{"example.com/total-gpumem", M(1)}}}},
	{{"nvidia.com/gpu", M(2)}, {"example.com/gpumem", M(1024)}},
	{{"nvidia.com/gpu", M(2)}, {"example.com/gpumem", M(1024)},
	    {"example.com/total-gpumem", M(2048)}}},
    {"multiplyBy absent from the pod: outputs unscaled", {NULL},
	{{"example.com/gpumem", true, "nvidia.com/gpu",
	    {{"example.com/total-gpumem", M(1)}}}},
	{{"example.com/gpumem", M(1024)}},
	{{"example.com/total-gpumem", M(1024)}}},
    {"outputs of several inputs add up (Kueue's quota doc example)", {NULL},
	{{"example.com/gpu-type1", true, NULL,
	     {{"example.com/gpu-memory", M(5 * GI)},
		 {"example.com/credits", M(10)}}},
	    {"example.com/gpu-type2", true, NULL,
		{{"example.com/gpu-memory", M(20 * GI)},
		    {"example.com/credits", M(40)}}},
	    {"cpu", false, NULL, {{"example.com/credits", M(1)}}}},
	{{"cpu", M(1)}, {"memory", M(100 * GI)},
	    {"example.com/gpu-type1", M(2)}, {"example.com/gpu-type2", M(1)}},
	{{"cpu", M(1)}, {"memory", M(100 * GI)},
	    {"example.com/gpu-memory", M(30 * GI)},
	    {"example.com/credits", M(61)}}},
    {"a negative output is an allowance, clamped at zero", {NULL},
	{{"a.com/x", true, NULL, {{"credits", M(5)}}},
	    {"a.com/discount", true, NULL, {{"credits", M(-2)}}}},
	{{"a.com/x", M(1)}, {"a.com/discount", M(4)}}, {{"credits", 0}}},
    {"a negative output never reduces a retained request", {NULL},
	{{"a.com/discount", true, NULL, {{"cpu", M(-1)}}}},
	{{"cpu", M(2)}, {"a.com/discount", M(1)}}, {{"cpu", M(2)}}},
    {"outputs and a retained request of the same name add", {NULL},
	{{"a.com/x", true, NULL, {{"cpu", M(1)}}}},
	{{"cpu", M(2)}, {"a.com/x", M(1)}}, {{"cpu", M(3)}}},
    {"excluded prefixes are dropped, as plain string prefixes",
	{"example.com", NULL}, {{NULL, false, NULL, {{NULL, 0}}}},
	{{"cpu", M(1)}, {"example.com/a", M(1)}, {"example.community/b", M(1)},
	    {"other.io/example.com", M(1)}},
	{{"cpu", M(1)}, {"other.io/example.com", M(1)}}},
    {"an excluded input produces no outputs", {"a.com/", NULL},
	{{"a.com/x", false, NULL, {{"credits", M(1)}}}},
	{{"a.com/x", M(4)}, {"cpu", M(1)}}, {{"cpu", M(1)}}},
    {"an excluded multiplier does not scale; excluded output names stay",
	{"b.com/", NULL}, {{"a.com/x", true, "b.com/n", {{"b.com/out", M(1)}}}},
	{{"a.com/x", M(3)}, {"b.com/n", M(10)}}, {{"b.com/out", M(3)}}},
    {"fractions round up to a milli-unit", {NULL},
	{{"cpu", false, NULL, {{"credits", 1}}}}, {{"cpu", 1}},
	{{"cpu", 1}, {"credits", 1}}},
    {"products beyond int64 saturate", {NULL},
	{{"a.com/x", true, NULL, {{"big", INT64_MAX}}}}, {{"a.com/x", M(1000)}},
	{{"big", INT64_MAX}}},
};

static void check_row(const struct row *r)
{
	struct que_transform tr[3];
	struct que_request outs[3][3];
	struct que_resources_spec spec;
	struct que_request *got = NULL;
	size_t n_in = 0, n_want = 0, n_got = 0, i, k, n_ex = 0;
	que_state *st;
	cu_error err;

	cr_assert_eq(que_state_new(&st, NULL), CU_OK);
	memset(&spec, 0, sizeof(spec));
	memset(tr, 0, sizeof(tr));
	for (i = 0; i < 3 && r->tr[i].input != NULL; i++) {
		tr[i].input = r->tr[i].input;
		tr[i].replace = r->tr[i].replace;
		tr[i].multiply_by = r->tr[i].multiply_by;
		for (k = 0; k < 3 && r->tr[i].out[k].resource != NULL; k++)
			outs[i][k] = r->tr[i].out[k];
		tr[i].outputs = outs[i];
		tr[i].n_outputs = k;
	}
	while (n_ex < 3 && r->exclude[n_ex] != NULL)
		n_ex++;
	if (i > 0 || n_ex > 0) {
		spec.transforms = tr;
		spec.n_transforms = i;
		spec.exclude_prefixes = r->exclude;
		spec.n_exclude = n_ex;
		cr_assert_eq(
		    que_resources_set(st, &spec, &err), CU_OK, "%s", err.msg);
	}
	while (n_in < 5 && r->in[n_in].resource != NULL)
		n_in++;
	while (n_want < 6 && r->want[n_want].resource != NULL)
		n_want++;
	cr_assert_eq(
	    que_resources_apply(st, r->in, n_in, &got, &n_got, &err), CU_OK);
	cr_assert_eq(n_got, n_want, "%s: %zu requests, want %zu", r->name,
	    n_got, n_want);
	/* Kueue's result is a map: the order carries no meaning. */
	for (i = 0; i < n_want; i++) {
		for (k = 0; k < n_got; k++)
			if (strcmp(got[k].resource, r->want[i].resource) == 0)
				break;
		cr_assert_lt(
		    k, n_got, "%s: no %s", r->name, r->want[i].resource);
		cr_assert_eq(got[k].per_pod, r->want[i].per_pod,
		    "%s: %s = %lld, want %lld", r->name, got[k].resource,
		    (long long)got[k].per_pod, (long long)r->want[i].per_pod);
	}
	cu_free(got);
	que_state_free(st);
}

Test(queues_resources, table)
{
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		check_row(&rows[i]);
}

Test(queues_resources, empty_input_refused)
{
	struct que_transform t = {.input = ""};
	struct que_resources_spec spec = {.transforms = &t, .n_transforms = 1};
	que_state *st;
	cu_error err;

	cr_assert_eq(que_state_new(&st, NULL), CU_OK);
	cr_assert_eq(que_resources_set(st, &spec, &err), CU_EINVAL);
	cr_assert(strstr(err.msg, "transformations[0].input") != NULL);
	cr_assert_not(que_resources_ignore_undeclared(st));
	que_state_free(st);
}

/* A Workload keeps its pods' own requests for topology placement only
 * when the Configuration's resources made quota count something else. */
Test(queues_resources, pod_requests_kept_when_they_differ)
{
	static const char *const cpu[] = {"cpu_credits"};
	struct que_resource_quota rq = {
	    "cpu_credits", 1000000, false, 0, false, 0};
	struct que_flavor_quotas fq = {"default", &rq, 1};
	struct que_resource_group g = {cpu, 1, &fq, 1};
	struct que_flavor_spec f = {.name = "default"};
	struct que_cq_spec cq = {.name = "cq", .groups = &g, .n_groups = 1};
	struct que_lq_spec lq = {"ns", "lq", "cq", QUE_STOP_NONE};
	struct que_request counted = {"cpu_credits", 2000};
	struct que_request own[] = {{"cpu", 2000}, {"memory", 4096000}};
	struct que_podset_spec ps = {0};
	struct que_workload_spec w = {0};
	const struct que_wl *qw;
	que_state *st;
	cu_error err;

	cr_assert_eq(que_state_new(&st, NULL), CU_OK);
	cr_assert_eq(que_flavor_set(st, &f, &err), CU_OK);
	cr_assert_eq(que_cq_set(st, &cq, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(que_lq_set(st, &lq, &err), CU_OK);
	ps.count = 1;
	ps.requests = &counted;
	ps.n_requests = 1;
	ps.pod_requests = own;
	ps.n_pod_requests = 2;
	w.ns = "ns";
	w.queue_name = "lq";
	w.namespace_eligible = true;
	w.podsets = &ps;
	w.n_podsets = 1;
	w.uid = w.name = "differ";
	cr_assert_eq(que_workload_add(st, &w, &err), CU_OK, "%s", err.msg);
	qw = que_workload_get(st, "differ");
	cr_assert_eq(qw->podsets[0].n_pod_req, 2);
	cr_assert_str_eq(qw->podsets[0].pod_req[1].resource, "memory");
	cr_assert_eq(qw->podsets[0].pod_req[1].per_pod, 4096000);
	cr_assert_eq(qw->podsets[0].n_spec_req, 1);

	/* the same requests in another order: nothing kept */
	ps.requests = own;
	ps.n_requests = 2;
	{
		struct que_request swapped[] = {own[1], own[0]};

		ps.pod_requests = swapped;
		w.uid = w.name = "same";
		cr_assert_eq(
		    que_workload_add(st, &w, &err), CU_OK, "%s", err.msg);
	}
	qw = que_workload_get(st, "same");
	cr_assert_null(qw->podsets[0].pod_req);
	que_state_free(st);
}
