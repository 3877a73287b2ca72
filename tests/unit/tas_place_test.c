/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/tas_place_test.c - topology-aware placement, table-driven
 * over a 2 blocks x 2 racks x 4 hosts tree (one 1-cpu pod per host):
 * required, preferred (falling back up the levels), unconstrained, best
 * fit of the last domain, capacity taken by bound/nominated pods and by
 * admitted assignments, unschedulable nodes and the pending messages.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "tas/tas.h"
#include "tests/unit/fixtures.h"

#define BLOCK "cloud.provider.com/topology-block"
#define RACK "cloud.provider.com/topology-rack"

static const struct tas_amount one_cpu[] = {{"cpu", 1000}};

static void add_node(
    struct tas_tree *t, int b, int r, int h, int64_t cpu, bool schedulable)
{
	char name[32], bv[8], rv[8];
	struct api_strmap labels = {NULL, 0};
	struct tas_amount alloc[] = {{"cpu", cpu}, {"pods", 110}};
	cu_error err;

	snprintf(name, sizeof(name), "b%d-r%d-n%d", b, r, h);
	snprintf(bv, sizeof(bv), "b%d", b);
	snprintf(rv, sizeof(rv), "b%d-r%d", b, r);
	cr_assert_eq(api_strmap_set(&labels, BLOCK, bv, &err), CU_OK);
	cr_assert_eq(api_strmap_set(&labels, RACK, rv, &err), CU_OK);
	cr_assert_eq(
	    api_strmap_set(&labels, TAS_HOSTNAME_LABEL, name, &err), CU_OK);
	cr_assert_eq(
	    tas_tree_node_set(t, name, &labels, alloc, 2, schedulable, &err),
	    CU_OK, "%s", err.msg);
	api_strmap_dispose(&labels);
}

static struct tas_tree *fixture(void)
{
	const char *levels[] = {BLOCK, RACK, TAS_HOSTNAME_LABEL};
	struct tas_tree *t;
	cu_error err;
	int b, r, h;

	cr_assert_eq(tas_tree_new("default", levels, 3, &t, &err), CU_OK);
	for (b = 1; b <= 2; b++)
		for (r = 1; r <= 2; r++)
			for (h = 1; h <= 4; h++)
				add_node(t, b, r, h, 1000, true);
	return t;
}

static void take(struct tas_tree *t, const char *node)
{
	cu_error err;

	cr_assert_eq(tas_tree_node_usage(t, node, one_cpu, 1, 1, &err), CU_OK);
}

/* Setups: capacity taken before the placement. */
static void none(struct tas_tree *t)
{
	(void)t;
}

/* b1-r1 keeps 2 free hosts, b1-r2 keeps 4: best fit picks b1-r1. */
static void rack1_half(struct tas_tree *t)
{
	take(t, "b1-r1-n1");
	take(t, "b1-r1-n2");
}

/* Every host of b1-r1 has a pod charged (bound or nominated). */
static void rack1_full(struct tas_tree *t)
{
	take(t, "b1-r1-n1");
	take(t, "b1-r1-n2");
	take(t, "b1-r1-n3");
	take(t, "b1-r1-n4");
}

/* One host per rack left free in b1, none taken elsewhere. */
static void b1_sparse(struct tas_tree *t)
{
	int r, h;
	char n[32];

	for (r = 1; r <= 2; r++)
		for (h = 2; h <= 4; h++) {
			snprintf(n, sizeof(n), "b1-r%d-n%d", r, h);
			take(t, n);
		}
}

/* b2-r2 cordoned, b2-r1 full: block b2 offers nothing. */
static void b2_gone(struct tas_tree *t)
{
	int h;
	char n[32];

	for (h = 1; h <= 4; h++) {
		add_node(t, 2, 2, h, 1000, false);
		snprintf(n, sizeof(n), "b2-r1-n%d", h);
		take(t, n);
	}
}

/* b1 offers 4 (all in b1-r1), b2 offers 5 (3 in b2-r1, 2 in b2-r2). */
static void uneven(struct tas_tree *t)
{
	take(t, "b1-r2-n1");
	take(t, "b1-r2-n2");
	take(t, "b1-r2-n3");
	take(t, "b1-r2-n4");
	take(t, "b2-r1-n1");
	take(t, "b2-r2-n1");
	take(t, "b2-r2-n2");
}

struct place_case {
	const char *name;
	void (*setup)(struct tas_tree *);
	enum tas_mode mode;
	const char *level;
	int32_t count;
	int rc;
	const char *want; /* "host:count,..." or the pending message */
};

static const struct place_case cases[] = {
    {"required rack fits one rack", none, TAS_REQUIRED, RACK, 4, CU_OK,
	"b1-r1-n1:1,b1-r1-n2:1,b1-r1-n3:1,b1-r1-n4:1"},
    {"required rack too big", none, TAS_REQUIRED, RACK, 5, TAS_NOFIT,
	"topology \"default\" allows to fit only 4 out of 5 pod(s)"},
    {"required block", none, TAS_REQUIRED, BLOCK, 6, CU_OK,
	"b1-r1-n1:1,b1-r1-n2:1,b1-r1-n3:1,b1-r1-n4:1,b1-r2-n1:1,"
	"b1-r2-n2:1"},
    {"required rack best fit", rack1_half, TAS_REQUIRED, RACK, 2, CU_OK,
	"b1-r1-n3:1,b1-r1-n4:1"},
    {"required rack skips charged rack", rack1_full, TAS_REQUIRED, RACK, 4,
	CU_OK, "b1-r2-n1:1,b1-r2-n2:1,b1-r2-n3:1,b1-r2-n4:1"},
    {"required host", none, TAS_REQUIRED, TAS_HOSTNAME_LABEL, 2, TAS_NOFIT,
	"topology \"default\" allows to fit only 1 out of 2 pod(s)"},
    {"required none free", b2_gone, TAS_REQUIRED, BLOCK, 9, TAS_NOFIT,
	"topology \"default\" allows to fit only 8 out of 9 pod(s)"},
    {"preferred rack falls back to block", none, TAS_PREFERRED, RACK, 5, CU_OK,
	"b1-r1-n1:1,b1-r1-n2:1,b1-r1-n3:1,b1-r1-n4:1,b1-r2-n1:1"},
    /* rack-level greedy would take b1-r1 and one host of b2: the block
     * fallback keeps all 5 in b2 */
    {"preferred rack falls back to one block", uneven, TAS_PREFERRED, RACK, 5,
	CU_OK, "b2-r1-n2:1,b2-r1-n3:1,b2-r1-n4:1,b2-r2-n3:1,b2-r2-n4:1"},
    {"preferred rack in one rack", rack1_half, TAS_PREFERRED, RACK, 3, CU_OK,
	"b1-r2-n1:1,b1-r2-n2:1,b1-r2-n3:1"},
    {"preferred spreads over blocks", none, TAS_PREFERRED, RACK, 10, CU_OK,
	"b1-r1-n1:1,b1-r1-n2:1,b1-r1-n3:1,b1-r1-n4:1,b1-r2-n1:1,"
	"b1-r2-n2:1,b1-r2-n3:1,b1-r2-n4:1,b2-r1-n1:1,b2-r1-n2:1"},
    {"preferred packs the fuller block", b1_sparse, TAS_PREFERRED, BLOCK, 3,
	CU_OK, "b2-r1-n1:1,b2-r1-n2:1,b2-r1-n3:1"},
    {"preferred too big", none, TAS_PREFERRED, RACK, 17, TAS_NOFIT,
	"topology \"default\" allows to fit only 16 out of 17 pod(s)"},
    {"unconstrained", rack1_half, TAS_UNCONSTRAINED, NULL, 3, CU_OK,
	"b1-r1-n3:1,b1-r1-n4:1,b1-r2-n1:1"},
    {"unconstrained too big", b2_gone, TAS_UNCONSTRAINED, NULL, 9, TAS_NOFIT,
	"topology \"default\" allows to fit only 8 out of 9 pod(s)"},
    {"unknown level", none, TAS_REQUIRED, "zone", 1, TAS_NOFIT,
	"no requested topology level: zone"},
};

Test(tas_place, table)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct place_case *c = &cases[i];
		struct tas_tree *t = fixture();
		struct tas_request r = {c->mode, c->level, c->count, one_cpu, 1,
		    NULL, 0, NULL, NULL, 0};
		struct api_topology_assignment a;
		char msg[256];
		cu_error err;
		int rc;

		c->setup(t);
		rc = tas_place(t, &r, &a, msg, sizeof(msg), &err);
		fx_tas_expect(c->name, rc, c->rc, msg, &a, c->want);
		if (rc == CU_OK) {
			cr_assert_eq(a.levels.n, 1, "%s", c->name);
			cr_assert_str_eq(a.levels.items[0], TAS_HOSTNAME_LABEL);
		}
		api_topology_assignment_dispose(&a);
		tas_tree_free(t);
	}
}

/* An admitted assignment is charged; the next one goes elsewhere, and
 * releasing it gives the rack back. */
Test(tas_place, admitted_assignments_take_capacity)
{
	struct tas_tree *t = fixture();
	struct tas_request r = {
	    TAS_REQUIRED, RACK, 4, one_cpu, 1, NULL, 0, NULL, NULL, 0};
	struct api_topology_assignment a, b, c;
	char msg[256], got[512];
	cu_error err;

	cr_assert_eq(tas_place(t, &r, &a, msg, sizeof(msg), &err), CU_OK);
	cr_assert_eq(
	    tas_tree_assignment_usage(t, &a, one_cpu, 1, 1, &err), CU_OK);
	cr_assert_eq(tas_tree_leaf_free(t, "b1-r1-n1", "cpu"), 0);
	cr_assert_eq(tas_place(t, &r, &b, msg, sizeof(msg), &err), CU_OK);
	fx_tas_render(&b, got, sizeof(got));
	cr_assert_str_eq(got, "b1-r2-n1:1,b1-r2-n2:1,b1-r2-n3:1,b1-r2-n4:1");
	cr_assert_eq(
	    tas_tree_assignment_usage(t, &a, one_cpu, 1, -1, &err), CU_OK);
	cr_assert_eq(tas_place(t, &r, &c, msg, sizeof(msg), &err), CU_OK);
	fx_tas_render(&c, got, sizeof(got));
	cr_assert_str_eq(got, "b1-r1-n1:1,b1-r1-n2:1,b1-r1-n3:1,b1-r1-n4:1");
	api_topology_assignment_dispose(&a);
	api_topology_assignment_dispose(&b);
	api_topology_assignment_dispose(&c);
	tas_tree_free(t);
}

/* Usage charged before the node is known applies when it appears, and
 * un-charging (a nomination cleared) gives the capacity back. */
Test(tas_place, usage_before_node_and_release)
{
	const char *levels[] = {RACK, TAS_HOSTNAME_LABEL};
	struct tas_tree *t;
	struct api_strmap labels = {NULL, 0};
	struct tas_amount alloc[] = {{"cpu", 4000}};
	cu_error err;

	cr_assert_eq(tas_tree_new("t", levels, 2, &t, &err), CU_OK);
	cr_assert_eq(tas_tree_node_usage(t, "n1", one_cpu, 1, 1, &err), CU_OK);
	cr_assert_eq(api_strmap_set(&labels, RACK, "r1", &err), CU_OK);
	cr_assert_eq(
	    api_strmap_set(&labels, TAS_HOSTNAME_LABEL, "n1", &err), CU_OK);
	cr_assert_eq(
	    tas_tree_node_set(t, "n1", &labels, alloc, 1, true, &err), CU_OK);
	cr_assert_eq(tas_tree_leaf_free(t, "n1", "cpu"), 3000);
	cr_assert_eq(tas_tree_node_usage(t, "n1", one_cpu, 1, -1, &err), CU_OK);
	cr_assert_eq(tas_tree_leaf_free(t, "n1", "cpu"), 4000);
	/* relabelled to another rack: the old leaf loses it */
	cr_assert_eq(api_strmap_set(&labels, RACK, "r2", &err), CU_OK);
	cr_assert_eq(
	    tas_tree_node_set(t, "n1", &labels, alloc, 1, true, &err), CU_OK);
	tas_tree_node_remove(t, "n1");
	cr_assert_eq(tas_tree_leaf_free(t, "n1", "cpu"), 0);
	api_strmap_dispose(&labels);
	tas_tree_free(t);
}

/* Without a hostname level, the assignment names every level. */
Test(tas_place, non_host_lowest_level_lists_all_levels)
{
	const char *levels[] = {BLOCK, RACK};
	struct tas_tree *t;
	struct api_strmap labels = {NULL, 0};
	struct tas_amount alloc[] = {{"cpu", 3000}};
	struct tas_request r = {
	    TAS_REQUIRED, BLOCK, 2, one_cpu, 1, NULL, 0, NULL, NULL, 0};
	struct api_topology_assignment a;
	char msg[128];
	cu_error err;

	cr_assert_eq(tas_tree_new("t", levels, 2, &t, &err), CU_OK);
	cr_assert_eq(api_strmap_set(&labels, BLOCK, "b1", &err), CU_OK);
	cr_assert_eq(api_strmap_set(&labels, RACK, "r1", &err), CU_OK);
	cr_assert_eq(
	    tas_tree_node_set(t, "n1", &labels, alloc, 1, true, &err), CU_OK);
	cr_assert_eq(tas_place(t, &r, &a, msg, sizeof(msg), &err), CU_OK);
	cr_assert_eq(a.levels.n, 2);
	cr_assert_eq(a.n_domains, 1);
	cr_assert_str_eq(a.domains[0].values[0], "b1");
	cr_assert_str_eq(a.domains[0].values[1], "r1");
	cr_assert_eq(a.domains[0].count, 2);
	/* a resource no node offers fits nowhere */
	{
		struct tas_amount gpu[] = {{"nvidia.com/gpu", 1}};
		struct tas_request g = {
		    TAS_UNCONSTRAINED, NULL, 1, gpu, 1, NULL, 0, NULL, NULL, 0};
		struct api_topology_assignment none;

		cr_assert_eq(
		    tas_place(t, &g, &none, msg, sizeof(msg), &err), TAS_NOFIT);
		cr_assert_str_eq(msg, "topology \"t\" doesn't allow to fit any "
				      "of 1 pod(s)");
	}
	api_topology_assignment_dispose(&a);
	api_strmap_dispose(&labels);
	tas_tree_free(t);
}

/* Ranks fill the domains in order; the selector names every level of
 * the assignment and keeps the pod's other selector entries. */
Test(tas_place, ranks_map_to_domains_and_selectors)
{
	struct tas_tree *t = fixture();
	struct tas_request r = {
	    TAS_PREFERRED, RACK, 5, one_cpu, 1, NULL, 0, NULL, NULL, 0};
	struct api_topology_assignment a;
	struct api_strmap sel = {NULL, 0};
	char msg[128];
	cu_error err;

	take(t, "b1-r1-n1"); /* b1-r1 offers 3, so 5 pods span 2 racks */
	cr_assert_eq(tas_place(t, &r, &a, msg, sizeof(msg), &err), CU_OK);
	cr_assert_eq(a.n_domains, 5);
	cr_assert_eq(tas_rank_domain(&a, 0), 0);
	cr_assert_eq(tas_rank_domain(&a, 4), 4);
	cr_assert_eq(tas_rank_domain(&a, 5), -1);
	cr_assert_eq(tas_rank_domain(&a, -1), -1);
	cr_assert_eq(api_strmap_set(&sel, "disk", "ssd", &err), CU_OK);
	cr_assert_eq(tas_domain_selector(&a, 3, &sel, &err), CU_OK);
	cr_assert_str_eq(api_strmap_get(&sel, TAS_HOSTNAME_LABEL), "b1-r2-n1");
	cr_assert_str_eq(api_strmap_get(&sel, "disk"), "ssd");
	cr_assert_eq(tas_domain_selector(&a, 9, &sel, &err), CU_ERANGE);
	api_strmap_dispose(&sel);
	api_topology_assignment_dispose(&a);
	tas_tree_free(t);
}

/* Several pods per domain: ranks 0..2 on the first host, 3 on the next. */
Test(tas_place, rank_domain_counts)
{
	char h1[] = "h1", h2[] = "h2", lv[] = TAS_HOSTNAME_LABEL;
	char *v1[] = {h1}, *v2[] = {h2}, *levels[] = {lv};
	struct api_topology_domain doms[] = {{v1, 3}, {v2, 1}};
	struct api_topology_assignment a = {{levels, 1}, doms, 2};

	cr_assert_eq(tas_rank_domain(&a, 2), 0);
	cr_assert_eq(tas_rank_domain(&a, 3), 1);
	cr_assert_eq(tas_rank_domain(&a, 4), -1);
}

/* Setups of a replacement: the failed node b1-r1-n2 deleted or
 * unschedulable, with or without the rack's last free host taken. */
static void n2_deleted(struct tas_tree *t)
{
	tas_tree_node_remove(t, "b1-r1-n2");
}

static void n2_notready(struct tas_tree *t)
{
	add_node(t, 1, 1, 2, 1000, false);
}

static void n2_deleted_rack_full(struct tas_tree *t)
{
	tas_tree_node_remove(t, "b1-r1-n2");
	take(t, "b1-r1-n4");
}

/* Kueue's failed node replacement: within the assigned rack, never
 * another one, else no fit. */
Test(tas_place, replace_failed_node_table)
{
	static const struct {
		const char *name;
		void (*setup)(struct tas_tree *);
		const char *node;
		int rc;
		const char *want;
	} rows[] = {
	    {"deleted", n2_deleted, "b1-r1-n2", CU_OK,
		"b1-r1-n1:1,b1-r1-n3:1,b1-r1-n4:1"},
	    {"notready", n2_notready, "b1-r1-n2", CU_OK,
		"b1-r1-n1:1,b1-r1-n3:1,b1-r1-n4:1"},
	    {"rack full: other racks are not used", n2_deleted_rack_full,
		"b1-r1-n2", TAS_NOFIT,
		"no replacement for unhealthy node b1-r1-n2: 1 pod(s) do "
		"not fit in the assigned domain"},
	    {"node not assigned", n2_deleted, "b2-r1-n1", CU_EINVAL, ""},
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct tas_tree *t = fixture();
		struct tas_request r = {
		    TAS_REQUIRED, RACK, 3, one_cpu, 1, NULL, 0, NULL, NULL, 0};
		struct api_topology_assignment a, b;
		char msg[256], got[512];
		cu_error err;
		int rc;

		cr_assert_eq(
		    tas_place(t, &r, &a, msg, sizeof(msg), &err), CU_OK);
		fx_tas_render(&a, got, sizeof(got));
		cr_assert_str_eq(got, "b1-r1-n1:1,b1-r1-n2:1,b1-r1-n3:1");
		cr_assert_eq(
		    tas_tree_assignment_usage(t, &a, one_cpu, 1, 1, &err),
		    CU_OK);
		rows[i].setup(t);
		rc = tas_replace(
		    t, &a, rows[i].node, &r, &b, msg, sizeof(msg), &err);
		cr_assert_eq(
		    rc, rows[i].rc, "%s: rc %d (%s)", rows[i].name, rc, msg);
		if (rc == CU_OK) {
			fx_tas_render(&b, got, sizeof(got));
			cr_assert_str_eq(got, rows[i].want, "%s", rows[i].name);
			cr_assert_eq(b.levels.n, 1);
		} else if (rc == TAS_NOFIT) {
			cr_assert_str_eq(msg, rows[i].want, "%s", rows[i].name);
			cr_assert_eq(b.n_domains, 0);
		}
		api_topology_assignment_dispose(&a);
		api_topology_assignment_dispose(&b);
		tas_tree_free(t);
	}
}

/* Kueue's Mixed profile (TASProfileMixed): hosts h1..h4 hold 4, 1, 2
 * and 3 pods. An unconstrained podSet that no host holds alone is
 * spread from the least free host up (best fit: from the largest); one
 * host that holds it all is the same under both; required stays best
 * fit. */
static struct tas_tree *uneven_hosts(bool mixed)
{
	const char *levels[] = {TAS_HOSTNAME_LABEL};
	const int64_t cpu[] = {4000, 1000, 2000, 3000};
	struct tas_tree *t;
	cu_error err;
	int h;

	cr_assert_eq(tas_tree_new("default", levels, 1, &t, &err), CU_OK);
	tas_tree_set_mixed_profile(t, mixed);
	for (h = 0; h < 4; h++) {
		struct api_strmap labels = {NULL, 0};
		struct tas_amount alloc[] = {{"cpu", cpu[h]}, {"pods", 110}};
		char name[16];

		snprintf(name, sizeof(name), "h%d", h + 1);
		cr_assert_eq(
		    api_strmap_set(&labels, TAS_HOSTNAME_LABEL, name, &err),
		    CU_OK);
		cr_assert_eq(
		    tas_tree_node_set(t, name, &labels, alloc, 2, true, &err),
		    CU_OK, "%s", err.msg);
		api_strmap_dispose(&labels);
	}
	return t;
}

Test(tas_place, mixed_profile_spreads_least_free_first)
{
	static const struct {
		bool mixed;
		enum tas_mode mode;
		int32_t count;
		const char *want;
	} mcases[] = {
	    {false, TAS_UNCONSTRAINED, 5, "h1:4,h2:1"},
	    {true, TAS_UNCONSTRAINED, 5, "h2:1,h3:2,h4:2"},
	    {true, TAS_UNCONSTRAINED, 10, "h1:4,h2:1,h3:2,h4:3"},
	    {false, TAS_UNCONSTRAINED, 2, "h3:2"},
	    {true, TAS_UNCONSTRAINED, 2, "h3:2"},
	    {true, TAS_UNCONSTRAINED, 4, "h1:4"},
	    {true, TAS_PREFERRED, 5, "h1:4,h2:1"},
	};
	size_t i;

	for (i = 0; i < sizeof(mcases) / sizeof(mcases[0]); i++) {
		struct tas_tree *t = uneven_hosts(mcases[i].mixed);
		struct tas_request r = {mcases[i].mode,
		    mcases[i].mode == TAS_UNCONSTRAINED ? NULL
							: TAS_HOSTNAME_LABEL,
		    mcases[i].count, one_cpu, 1, NULL, 0, NULL, NULL, 0};
		struct api_topology_assignment a;
		char msg[256], got[256];
		cu_error err;

		cr_assert_eq(tas_place(t, &r, &a, msg, sizeof(msg), &err),
		    CU_OK, "case %zu: %s", i, msg);
		fx_tas_render(&a, got, sizeof(got));
		cr_assert_str_eq(got, mcases[i].want, "case %zu (mixed %d)", i,
		    mcases[i].mixed);
		api_topology_assignment_dispose(&a);
		tas_tree_free(t);
	}
}
