/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/tas_ungate_test.c - the pure decisions of the controller's
 * TAS ungater and node-failure checks (tas/ungate.c), from tables: which
 * gated pods go to which domain and in which order (tas_ungate_plan),
 * which domain a nodeSelector names, whether a pinned pod is a stray of a
 * replaced node, and what a failed or recovered node does to a
 * Workload's status.unhealthyNodes.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "tas/tas.h"

#define HOST TAS_HOSTNAME_LABEL

/* Two domains h1 (2 pods) and h2 (1 pod) at the hostname level. */
static char h1[] = "h1", h2[] = "h2", host[] = HOST;
static char *v1[] = {h1}, *v2[] = {h2}, *lv[] = {host};
static struct api_topology_domain doms[] = {{v1, 2}, {v2, 1}};
static const struct api_topology_assignment A = {{lv, 1}, doms, 2};

struct plan_pod {
	const char *name;
	bool gated;
	int64_t rank, created;
	const char *on; /* an ungated pod's nodeSelector host, or NULL */
};

struct plan_case {
	const char *what;
	struct plan_pod pods[5];
	size_t n;
	/* the gated pods in ungate order, "name:domain" (domain -1: stays
	 * gated), then NULL */
	const char *want[6];
};

Test(tas_ungate, plan_table)
{
	static const struct plan_case cases[] = {
	    {"ranks fill their own domains",
		{{"c", true, 2, 0, NULL}, {"a", true, 0, 0, NULL},
		    {"b", true, 1, 0, NULL}},
		3, {"a:0", "b:0", "c:1", NULL}},
	    {"no rank: creation then name order, first domain with room",
		{{"y", true, -1, 5, NULL}, {"x", true, -1, 5, NULL},
		    {"w", true, -1, 9, NULL}},
		3, {"x:0", "y:0", "w:1", NULL}},
	    {"an ungated pod holds its domain's place",
		{{"old", false, -1, 0, "h1"}, {"p", true, 0, 0, NULL},
		    {"q", true, 1, 0, NULL}},
		3, {"p:0", "q:1", NULL}},
	    {"rank's domain full: the next with room",
		{{"o1", false, -1, 0, "h1"}, {"o2", false, -1, 0, "h1"},
		    {"r", true, 0, 0, NULL}},
		3, {"r:1", NULL}},
	    {"more gated pods than places: the rest stay gated",
		{{"a", true, 0, 0, NULL}, {"b", true, 1, 0, NULL},
		    {"c", true, 2, 0, NULL}, {"d", true, 3, 0, NULL}},
		4, {"a:0", "b:0", "c:1", "d:-1", NULL}},
	    {"a selector outside the assignment takes no place",
		{{"o", false, -1, 0, "h9"}, {"a", true, 2, 0, NULL}}, 2,
		{"a:1", NULL}},
	    {"nothing gated", {{"o", false, -1, 0, "h1"}}, 1, {NULL}},
	};
	size_t i, k;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct plan_case *c = &cases[i];
		struct tas_ungate_pod up[5];
		struct api_strmap sel[5];
		struct api_kv kv[5];
		cu_error err;

		memset(up, 0, sizeof(up));
		for (k = 0; k < c->n; k++) {
			kv[k].key = host;
			kv[k].value = (char *)c->pods[k].on;
			sel[k].items = &kv[k];
			sel[k].n = c->pods[k].on ? 1 : 0;
			up[k].gated = c->pods[k].gated;
			up[k].rank = c->pods[k].rank;
			up[k].created_ns = c->pods[k].created;
			up[k].name = c->pods[k].name;
			up[k].selector = &sel[k];
		}
		cr_assert_eq(tas_ungate_plan(&A, up, c->n, &err), CU_OK);
		for (k = 0; c->want[k] != NULL; k++) {
			char got[32];

			cr_assert(up[k].gated, "%s: pod %zu", c->what, k);
			snprintf(got, sizeof(got), "%s:%zd", up[k].name,
			    up[k].domain);
			cr_assert_str_eq(got, c->want[k], "%s", c->what);
		}
		cr_assert(
		    k == c->n || !up[k].gated, "%s: %zu gated", c->what, k);
	}
}

Test(tas_ungate, selector_domain_and_strays)
{
	struct api_kv kv[] = {{host, h2}, {(char *)"zone", (char *)"z"}};
	struct api_strmap sel = {kv, 2}, none = {NULL, 0};
	static char zl[] = "zone", z1[] = "z1";
	char *zv[] = {z1}, *zlv[] = {zl};
	struct api_topology_domain zd[] = {{zv, 3}};
	struct api_topology_assignment zone = {{zlv, 1}, zd, 1};

	cr_assert_eq(tas_selector_domain(&A, &sel), 1);
	cr_assert_eq(tas_selector_domain(&A, &none), -1);
	kv[0].value = (char *)"h3";
	cr_assert_eq(tas_selector_domain(&A, &sel), -1);
	/* a host the assignment has is not a stray; one it lost is */
	cr_assert_not(tas_host_stray(&A, "h1"));
	cr_assert_not(tas_host_stray(&A, "h2"));
	cr_assert(tas_host_stray(&A, "h3"));
	/* assignments above the hostname level track no hosts */
	cr_assert_not(tas_host_stray(&zone, "h3"));
}

Test(tas_ungate, failed_node_table)
{
	static const struct {
		const char *listed[3];
		size_t n;
		const char *node;
		enum tas_failed_action want;
		const char *msg;
	} cases[] = {
	    {{NULL}, 0, "n1", TAS_FAILED_RECORD, NULL},
	    {{"n1"}, 1, "n1", TAS_FAILED_REPLACE, NULL},
	    {{"n2", "n1"}, 2, "n1", TAS_FAILED_REPLACE, NULL},
	    {{"n2"}, 1, "n1", TAS_FAILED_EVICT,
		"Workload eviction triggered due to multiple TAS assigned "
		"node failures, including: n2, n1"},
	    {{"n2", "n3"}, 2, "n1", TAS_FAILED_EVICT,
		"Workload eviction triggered due to multiple TAS assigned "
		"node failures, including: n2, n3, n1"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct api_strlist l = {(char **)cases[i].listed, cases[i].n};
		char msg[512] = "";

		cr_assert_eq(
		    tas_node_failed(&l, cases[i].node, msg, sizeof(msg)),
		    cases[i].want, "case %zu", i);
		if (cases[i].msg)
			cr_assert_str_eq(msg, cases[i].msg);
	}
}

/* SkipReassignmentForPodOwnedWorkloads: a Workload owned by a single Pod
 * keeps its assignment (the listed node is not replaced), and a node
 * whose failure was answered so asks for nothing more while it stays
 * failed; recording and the eviction for a second node are as for any
 * Workload. */
Test(tas_ungate, failed_node_pod_owned_table)
{
	static const struct {
		const char *listed[2];
		size_t n;
		const char *kept[2];
		size_t n_kept;
		const char *node;
		enum tas_failed_action want;
	} cases[] = {
	    {{NULL}, 0, {NULL}, 0, "n1", TAS_FAILED_RECORD},
	    {{"n1"}, 1, {NULL}, 0, "n1", TAS_FAILED_KEEP},
	    {{"n2", "n1"}, 2, {NULL}, 0, "n1", TAS_FAILED_KEEP},
	    {{NULL}, 0, {"n1"}, 1, "n1", TAS_FAILED_KEPT},
	    /* listed again (another writer): cleared again */
	    {{"n1"}, 1, {"n1"}, 1, "n1", TAS_FAILED_KEEP},
	    {{NULL}, 0, {"n1"}, 1, "n2", TAS_FAILED_RECORD},
	    /* another node recorded since: no eviction for this one */
	    {{"n2"}, 1, {"n1"}, 1, "n1", TAS_FAILED_KEPT},
	    {{"n2"}, 1, {NULL}, 0, "n1", TAS_FAILED_EVICT},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct api_strlist l = {(char **)cases[i].listed, cases[i].n};
		struct api_strlist k = {
		    (char **)cases[i].kept, cases[i].n_kept};
		char msg[512] = "";

		cr_expect_eq(tas_node_failed_pod_owned(
				 &l, &k, cases[i].node, msg, sizeof(msg)),
		    cases[i].want, "case %zu", i);
	}
}

Test(tas_ungate, eviction_message_is_cut_to_fit)
{
	const char *names[] = {
	    "a-very-long-node-name-0001", "a-very-long-node-name-0002"};
	struct api_strlist l = {(char **)names, 2};
	char msg[40];

	cr_assert_eq(
	    tas_node_failed(&l, "n", msg, sizeof(msg)), TAS_FAILED_EVICT);
	cr_assert_eq(strlen(msg), sizeof(msg) - 1);
}

Test(tas_ungate, recovered_node_table)
{
	const char *three[] = {"n1", "n2", "n3"};
	struct api_strlist l = {(char **)three, 3}, out;
	bool nomem;

	cr_assert_not(tas_node_recovered(&l, "n9", &out, &nomem));
	cr_assert_eq(out.n, 0);
	cr_assert_not(nomem);
	cr_assert(tas_node_recovered(&l, "n2", &out, &nomem));
	cr_assert_eq(out.n, 2);
	cr_assert_str_eq(out.items[0], "n1");
	cr_assert_str_eq(out.items[1], "n3");
	api_strlist_dispose(&out);
	l.n = 1;
	cr_assert(tas_node_recovered(&l, "n1", &out, &nomem));
	cr_assert_eq(out.n, 0);
	api_strlist_dispose(&out);
}
