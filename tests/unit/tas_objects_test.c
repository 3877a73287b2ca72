/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/tas_objects_test.c - Nodes and Pods into the capacity tree:
 * schedulability (unschedulable, taints, Ready), allocatable units, which
 * node a pod is charged to (bound, nominated, finished, TAS pods), and
 * the tracker moving charges; a nominated pod keeps its node out of a
 * placement where Kueue's bound-only accounting would over-place.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "tas/tas.h"

#define RACK "cloud.provider.com/topology-rack"

static json_t *parse(const char *text)
{
	json_error_t jerr;
	json_t *j = json_loads(text, 0, &jerr);

	cr_assert_not_null(j, "test JSON: %s at %d", jerr.text, jerr.column);
	return j;
}

static json_t *node_json(const char *name, const char *rack, const char *cpu,
    const char *spec, const char *conds)
{
	char buf[1024];

	snprintf(buf, sizeof(buf),
	    "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"" RACK "\":\"%s\","
	    "\"kubernetes.io/hostname\":\"%s\"}},\"spec\":{%s},"
	    "\"status\":{\"allocatable\":{\"cpu\":\"%s\",\"pods\":\"110\"},"
	    "\"conditions\":[%s]}}",
	    name, rack, name, spec, cpu, conds);
	return parse(buf);
}

static struct tas_tree *tree(void)
{
	const char *levels[] = {RACK, TAS_HOSTNAME_LABEL};
	struct tas_tree *t;
	cu_error err;

	cr_assert_eq(tas_tree_new("default", levels, 2, &t, &err), CU_OK);
	return t;
}

static void apply(struct tas_tree *t, json_t *n)
{
	struct api_node nd;
	cu_error err;

	cr_assert_eq(api_node_decode(&nd, n, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(tas_node_apply(t, &nd, &err), CU_OK, "%s", err.msg);
	api_node_dispose(&nd);
	json_decref(n);
}

Test(tas_objects, node_schedulability_table)
{
	static const struct {
		const char *spec, *conds;
		int64_t want;
	} cases[] = {
	    {"", "", 2000},
	    {"", "{\"type\":\"Ready\",\"status\":\"True\"}", 2000},
	    {"", "{\"type\":\"Ready\",\"status\":\"False\"}", 0},
	    {"", "{\"type\":\"Ready\",\"status\":\"Unknown\"}", 0},
	    {"\"unschedulable\":true", "", 0},
	    {"\"taints\":[{\"key\":\"k\",\"effect\":\"NoSchedule\"}]", "", 0},
	    {"\"taints\":[{\"key\":\"k\",\"effect\":\"PreferNoSchedule\"}]", "",
		2000},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tas_tree *t = tree();

		apply(t,
		    node_json("n1", "r1", "2", cases[i].spec, cases[i].conds));
		cr_assert_eq(tas_tree_leaf_free(t, "n1", "cpu"), cases[i].want,
		    "case %zu", i);
		tas_tree_free(t);
	}
}

Test(tas_objects, charged_node_table)
{
	static const struct {
		const char *pod;
		const char *want;
	} cases[] = {
	    {"{\"spec\":{\"nodeName\":\"n1\"}}", "n1"},
	    {"{\"spec\":{},\"status\":{\"nominatedNodeName\":\"n2\"}}", "n2"},
	    {"{\"spec\":{\"nodeName\":\"n1\"},\"status\":{"
	     "\"nominatedNodeName\":\"n2\"}}",
		"n1"},
	    {"{\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"phase\":"
	     "\"Succeeded\"}}",
		NULL},
	    {"{\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"phase\":\"Failed\"}"
	     "}",
		NULL},
	    {"{\"metadata\":{\"annotations\":{\"kueue.x-k8s.io/podset-"
	     "required-topology\":\"r\"}},\"spec\":{\"nodeName\":\"n1\"}}",
		NULL},
	    {"{\"spec\":{}}", NULL},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *p = parse(cases[i].pod);
		struct api_pod pd;
		const char *got;

		cr_assert_eq(
		    api_pod_decode(&pd, p, NULL), CU_OK, "case %zu", i);
		got = tas_pod_charged_node(&pd);

		if (cases[i].want)
			cr_assert_str_eq(
			    got ? got : "(null)", cases[i].want, "case %zu", i);
		else
			cr_assert_null(got, "case %zu", i);
		api_pod_dispose(&pd);
		json_decref(p);
	}
}

static json_t *pod(const char *node, const char *nominated)
{
	char buf[512];

	snprintf(buf, sizeof(buf),
	    "{\"spec\":{%s%s%s\"containers\":[{\"name\":\"c\",\"resources\":"
	    "{\"requests\":{\"cpu\":\"1\"}}}]},\"status\":{%s%s%s}}",
	    node ? "\"nodeName\":\"" : "", node ? node : "", node ? "\"," : "",
	    nominated ? "\"nominatedNodeName\":\"" : "",
	    nominated ? nominated : "", nominated ? "\"" : "");
	return parse(buf);
}

static void update(
    struct tas_pods *ps, struct tas_tree *t, const char *uid, json_t *p)
{
	struct api_pod pd;
	cu_error err;

	cr_assert_eq(api_pod_decode(&pd, p, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(
	    tas_pods_update(ps, t, uid, &pd, &err), CU_OK, "%s", err.msg);
	api_pod_dispose(&pd);
	json_decref(p);
}

Test(tas_objects, tracker_moves_charges)
{
	struct tas_tree *t = tree();
	struct tas_pods *ps;
	cu_error err;

	apply(t, node_json("n1", "r1", "2", "", ""));
	apply(t, node_json("n2", "r1", "2", "", ""));
	cr_assert_eq(tas_pods_new(&ps, &err), CU_OK);
	update(ps, t, "u1", pod(NULL, "n1")); /* nominated */
	cr_assert_eq(tas_tree_leaf_free(t, "n1", "cpu"), 1000);
	update(ps, t, "u1", pod("n2", NULL)); /* bound elsewhere */
	cr_assert_eq(tas_tree_leaf_free(t, "n1", "cpu"), 2000);
	cr_assert_eq(tas_tree_leaf_free(t, "n2", "cpu"), 1000);
	update(ps, t, "u1", pod("n2", NULL)); /* unchanged: no double charge */
	cr_assert_eq(tas_tree_leaf_free(t, "n2", "cpu"), 1000);
	update(ps, t, "u2", pod(NULL, "n1"));
	update(ps, t, "u2", pod(NULL, NULL)); /* un-nominated */
	cr_assert_eq(tas_tree_leaf_free(t, "n1", "cpu"), 2000);
	cr_assert_eq(tas_pods_update(ps, t, "u1", NULL, &err), CU_OK);
	cr_assert_eq(tas_tree_leaf_free(t, "n2", "cpu"), 2000);
	cr_assert_eq(tas_pods_count(ps), 0);
	tas_pods_free(ps);
	tas_tree_free(t);
}

/* Two racks of two 1-cpu hosts; the scheduler nominated a pod to r1's
 * n1. A 2-pod required-rack podSet must go to r2: counting bound pods
 * only (Kueue) would put it on r1 and collide with the nominated pod. */
Test(tas_objects, nominated_pod_keeps_capacity_out)
{
	struct tas_amount cpu[] = {{"cpu", 1000}};
	struct tas_request r = {
	    TAS_REQUIRED, RACK, 2, cpu, 1, NULL, 0, NULL, NULL, 0};
	struct api_topology_assignment a, b;
	struct tas_tree *t = tree(), *bound_only = tree();
	struct tas_pods *ps, *ps_bound;
	json_t *nominated = pod(NULL, "r1-n1");
	char msg[128];
	cu_error err;

	apply(t, node_json("r1-n1", "r1", "1", "", ""));
	apply(t, node_json("r1-n2", "r1", "1", "", ""));
	apply(t, node_json("r2-n1", "r2", "1", "", ""));
	apply(t, node_json("r2-n2", "r2", "1", "", ""));
	apply(bound_only, node_json("r1-n1", "r1", "1", "", ""));
	apply(bound_only, node_json("r1-n2", "r1", "1", "", ""));
	apply(bound_only, node_json("r2-n1", "r2", "1", "", ""));
	apply(bound_only, node_json("r2-n2", "r2", "1", "", ""));
	cr_assert_eq(tas_pods_new(&ps, &err), CU_OK);
	cr_assert_eq(tas_pods_new(&ps_bound, &err), CU_OK);
	update(ps, t, "u", nominated);
	/* bound-only accounting: the nominated pod is not charged */
	cr_assert_eq(
	    tas_place(bound_only, &r, &b, msg, sizeof(msg), &err), CU_OK);
	cr_assert_str_eq(b.domains[0].values[0], "r1-n1");
	cr_assert_eq(tas_place(t, &r, &a, msg, sizeof(msg), &err), CU_OK);
	cr_assert_eq(a.n_domains, 2);
	cr_assert_str_eq(a.domains[0].values[0], "r2-n1");
	cr_assert_str_eq(a.domains[1].values[0], "r2-n2");
	api_topology_assignment_dispose(&a);
	api_topology_assignment_dispose(&b);
	tas_pods_free(ps);
	tas_pods_free(ps_bound);
	tas_tree_free(t);
	tas_tree_free(bound_only);
}

/* Kueue's node failure rules: deleted at once, NotReady after the delay,
 * no Ready condition healthy (simulated Nodes). */
Test(tas_objects, node_health_table)
{
	/* 2026-01-01T00:00:00Z plus s seconds */
	const int64_t t0 = 1767225600LL * 1000000000LL, s = 1000000000LL;
	static const struct {
		const char *conds; /* NULL: deleted */
		int64_t at;	   /* seconds after t0 */
		enum tas_node_health want;
		int64_t due; /* seconds after t0, WAIT only */
	} rows[] = {
	    {NULL, 0, TAS_NODE_FAILED, 0},
	    {"", 0, TAS_NODE_HEALTHY, 0},
	    {"{\"type\":\"Ready\",\"status\":\"True\","
	     "\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}",
		100, TAS_NODE_HEALTHY, 0},
	    {"{\"type\":\"Ready\",\"status\":\"False\","
	     "\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}",
		10, TAS_NODE_WAIT, 30},
	    {"{\"type\":\"Ready\",\"status\":\"Unknown\","
	     "\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}",
		29, TAS_NODE_WAIT, 30},
	    {"{\"type\":\"Ready\",\"status\":\"False\","
	     "\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}",
		30, TAS_NODE_FAILED, 0},
	    {"{\"type\":\"MemoryPressure\",\"status\":\"True\"},"
	     "{\"type\":\"Ready\",\"status\":\"False\"}",
		5, TAS_NODE_WAIT, 35},
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		json_t *n = rows[i].conds
				? node_json("h1", "r1", "4", "", rows[i].conds)
				: NULL;
		int64_t due = -1;
		/* the fixed delay alone (tas_health_test.c: the gates) */
		const struct tas_health_rules r = {
		    TAS_NODE_FAILURE_DELAY_NS, true, false, true};
		const struct tas_node_usage u = {true, NULL};
		struct api_node nd;
		enum tas_node_health h;

		if (n != NULL)
			cr_assert_eq(api_node_decode(&nd, n, NULL), CU_OK);
		h = tas_node_health(
		    n ? &nd : NULL, &u, &r, t0 + rows[i].at * s, &due);
		if (n != NULL)
			api_node_dispose(&nd);

		cr_expect_eq(h, rows[i].want, "row %zu: %d", i, (int)h);
		if (rows[i].want == TAS_NODE_WAIT)
			cr_expect_eq(due, t0 + rows[i].due * s, "row %zu", i);
		json_decref(n);
	}
}
