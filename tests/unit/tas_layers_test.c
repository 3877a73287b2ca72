/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/tas_layers_test.c - placement with two and three slice
 * layers (Kueue's TASMultiLayerTopology: slices made of whole slices of
 * a lower level), table-driven over small trees whose hosts hold
 * different numbers of 1-cpu pods: a host's pods count above it only in
 * whole inner slices, the descent fills each slice's domain in inner
 * slices, the pending message gives the slices that fit per layer, and
 * the layers are validated as Kueue's.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "tas/tas.h"
#include "tests/unit/fixtures.h"

#define DC "cloud.com/topology-datacenter"
#define BLOCK "cloud.com/topology-block"
#define RACK "cloud.com/topology-rack"
#define HOST TAS_HOSTNAME_LABEL

static const struct tas_amount one_cpu[] = {{"cpu", 1000}};

/* A node: its values above the host level ("b1/r1"), host, cpus. */
struct node_spec {
	const char *path;
	const char *host;
	int cpus;
};

/* A tree of the levels [borrowed] over nodes (terminated by a NULL
 * host): each path has one value per level above the host. */
static struct tas_tree *tree_of(
    const char *const *levels, size_t n_levels, const struct node_spec *ns)
{
	struct tas_tree *t;
	cu_error err;

	cr_assert_eq(
	    tas_tree_new("default", levels, n_levels, &t, &err), CU_OK);
	for (; ns->host != NULL; ns++) {
		struct api_strmap l = {NULL, 0};
		struct tas_amount alloc[] = {
		    {"cpu", (int64_t)ns->cpus * 1000}, {"pods", 110}};
		const char *v = ns->path, *e;
		size_t k = 0;

		for (; *v != '\0'; v = *e ? e + 1 : e, k++) {
			char val[32];

			e = strchr(v, '/');
			if (e == NULL)
				e = v + strlen(v);
			snprintf(val, sizeof(val), "%.*s", (int)(e - v), v);
			cr_assert_eq(
			    api_strmap_set(&l, levels[k], val, &err), CU_OK);
		}
		cr_assert_eq(k, n_levels - 1, "%s", ns->host);
		cr_assert_eq(api_strmap_set(&l, HOST, ns->host, &err), CU_OK);
		cr_assert_eq(
		    tas_tree_node_set(t, ns->host, &l, alloc, 2, true, &err),
		    CU_OK);
		api_strmap_dispose(&l);
	}
	return t;
}

static const char *const three[] = {BLOCK, RACK, HOST};
static const char *const four[] = {DC, BLOCK, RACK, HOST};

/* b1 > r1 (x1: 1, x2: 4), r2 (x3: 3, x4: 4) */
static const struct node_spec uneven[] = {{"b1/r1", "x1", 1},
    {"b1/r1", "x2", 4}, {"b1/r2", "x3", 3}, {"b1/r2", "x4", 4}, {0}};
/* b1 > r1 (x1: 3, x2: 3, x3: 0) */
static const struct node_spec odd_hosts[] = {
    {"b1/r1", "x1", 3}, {"b1/r1", "x2", 3}, {"b1/r1", "x3", 0}, {0}};
/* b1 > r1 (x1: 7, x2: 4), r2 (x3: 7, x4: 3) */
static const struct node_spec small_host[] = {{"b1/r1", "x1", 7},
    {"b1/r1", "x2", 4}, {"b1/r2", "x3", 7}, {"b1/r2", "x4", 3}, {0}};
/* b1 > r1 (x1: 4), r2 (x2: 4), r3 (x3: 4) */
static const struct node_spec one_per_rack[] = {
    {"b1/r1", "x1", 4}, {"b1/r2", "x2", 4}, {"b1/r3", "x3", 4}, {0}};
/* dc1 > b1 > r1 (x1, x2), r2 (x3, x4); b2 > r3 (x5, x6), r4 (x7: 1,
 * x8: 1); the others 4 */
static const struct node_spec dc_small_r4[] = {{"dc1/b1/r1", "x1", 4},
    {"dc1/b1/r1", "x2", 4}, {"dc1/b1/r2", "x3", 4}, {"dc1/b1/r2", "x4", 4},
    {"dc1/b2/r3", "x5", 4}, {"dc1/b2/r3", "x6", 4}, {"dc1/b2/r4", "x7", 1},
    {"dc1/b2/r4", "x8", 1}, {0}};
/* the same with r4's hosts at 4 and a third block b3 > r5 (x9: 7) */
static const struct node_spec dc_full[] = {{"dc1/b1/r1", "x1", 4},
    {"dc1/b1/r1", "x2", 4}, {"dc1/b1/r2", "x3", 4}, {"dc1/b1/r2", "x4", 4},
    {"dc1/b2/r3", "x5", 4}, {"dc1/b2/r3", "x6", 5}, {"dc1/b2/r4", "x7", 4},
    {"dc1/b2/r4", "x8", 4}, {"dc1/b3/r5", "x9", 7}, {0}};

struct layer_case {
	const char *name;
	const char *const *levels;
	size_t n_levels;
	const struct node_spec *nodes;
	enum tas_mode mode;
	const char *level;
	int32_t count;
	struct tas_slice_layer layers[3]; /* outermost first */
	int rc;
	const char *want; /* "host:count,..." or the pending message */
};

static const struct layer_case cases[] = {
    /* Kueue's own example: x1 (1 pod) holds no host slice of 2, so r1
     * holds 4 pods (one rack slice, all on x2); r2 holds 3 host slices
     * but one rack slice of 4: its hosts, fewest pods first, give one
     * host slice each */
    {"block required, rack slices of 4, host slices of 2", three, 3, uneven,
	TAS_REQUIRED, BLOCK, 8, {{RACK, 4}, {HOST, 2}}, CU_OK,
	"x2:4,x3:2,x4:2"},
    /* the same request with one layer puts 3 pods on x3 */
    {"one layer: pods one by one below the rack", three, 3, uneven,
	TAS_REQUIRED, BLOCK, 8, {{RACK, 4}}, CU_OK, "x1:1,x2:3,x3:3,x4:1"},
    {"host slice rounding makes the rack slice impossible", three, 3, odd_hosts,
	TAS_REQUIRED, BLOCK, 6, {{RACK, 6}, {HOST, 2}}, TAS_NOFIT,
	"topology \"default\" doesn't allow to fit; 0/1 slice(s) fit on "
	"level " RACK "; 2/3 slice(s) fit on level " HOST},
    {"a small host kills a rack slice", three, 3, small_host, TAS_REQUIRED,
	BLOCK, 16, {{RACK, 8}, {HOST, 4}}, TAS_NOFIT,
	"topology \"default\" doesn't allow to fit; 1/2 slice(s) fit on "
	"level " RACK "; 3/4 slice(s) fit on level " HOST},
    {"enough host slices, not enough rack slices", three, 3, one_per_rack,
	TAS_REQUIRED, BLOCK, 12, {{RACK, 6}, {HOST, 2}}, TAS_NOFIT,
	"topology \"default\" doesn't allow to fit; 0/2 slice(s) fit on "
	"level " RACK "; 6/6 slice(s) fit on level " HOST},
    {"three layers: small hosts cascade up", four, 4, dc_small_r4, TAS_REQUIRED,
	DC, 24, {{BLOCK, 12}, {RACK, 6}, {HOST, 3}}, TAS_NOFIT,
	"topology \"default\" doesn't allow to fit; 1/2 slice(s) fit on "
	"level " BLOCK "; 3/4 slice(s) fit on level " RACK
	"; 6/8 slice(s) fit on level " HOST},
    /* b3 holds one rack slice of 6 but no block slice of 12: b1 and b2
     * are taken, each rack in two host slices of 3 (x6's fifth pod's
     * worth left out) */
    {"three layers placed", four, 4, dc_full, TAS_REQUIRED, DC, 24,
	{{BLOCK, 12}, {RACK, 6}, {HOST, 3}}, CU_OK,
	"x1:3,x2:3,x3:3,x4:3,x5:3,x6:3,x7:3,x8:3"},
    /* preferred rack: no rack holds 2 rack slices, the block does */
    {"preferred falls back above the layers", three, 3, uneven, TAS_PREFERRED,
	RACK, 8, {{RACK, 4}, {HOST, 2}}, CU_OK, "x2:4,x3:2,x4:2"},
    {"slices only: unconstrained from the top", three, 3, uneven,
	TAS_UNCONSTRAINED, NULL, 4, {{RACK, 4}, {HOST, 2}}, CU_OK, "x2:4"},
    {"unknown inner level", three, 3, uneven, TAS_REQUIRED, BLOCK, 8,
	{{RACK, 4}, {"zone", 2}}, TAS_NOFIT,
	"no requested topology level for additional slice layer: zone"},
    {"inner layer not below the one before", three, 3, uneven, TAS_REQUIRED,
	BLOCK, 8, {{RACK, 4}, {RACK, 2}}, TAS_NOFIT,
	"additional slice layer topology " RACK
	" must be at a lower level than " RACK},
    {"inner size does not divide the outer", three, 3, uneven, TAS_REQUIRED,
	BLOCK, 8, {{RACK, 4}, {HOST, 3}}, TAS_NOFIT,
	"additional slice layer size 3 must evenly divide parent layer "
	"size 4"},
};

Test(tas_layers, table)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct layer_case *c = &cases[i];
		struct tas_tree *t = tree_of(c->levels, c->n_levels, c->nodes);
		struct tas_request r = {c->mode, c->level, c->count, one_cpu, 1,
		    c->layers[0].level, c->layers[0].size, NULL, c->layers + 1,
		    0};
		struct api_topology_assignment a;
		char msg[512];
		cu_error err;
		int rc;

		while (r.n_inner < 2 && c->layers[1 + r.n_inner].level != NULL)
			r.n_inner++;
		rc = tas_place(t, &r, &a, msg, sizeof(msg), &err);
		fx_tas_expect(c->name, rc, c->rc, msg, &a, c->want);
		api_topology_assignment_dispose(&a);
		tas_tree_free(t);
	}
}

/* A node failure in a podSet placed in layers: the failed host's pods
 * (one host slice, half a rack slice) are placed again as a host slice
 * inside the rack whose slice they complete (x5), not pod by pod (x3
 * has room for one pod only). */
Test(tas_layers, replacement_keeps_inner_slices)
{
	static const struct node_spec ns[] = {{"b1/r1", "x1", 2},
	    {"b1/r1", "x2", 2}, {"b1/r1", "x3", 1}, {"b1/r1", "x5", 2},
	    {"b1/r2", "x4", 4}, {0}};
	static const struct tas_slice_layer inner[] = {{HOST, 2}};
	struct tas_tree *t = tree_of(three, 3, ns);
	struct tas_request r = {
	    TAS_REQUIRED, BLOCK, 4, one_cpu, 1, RACK, 4, NULL, inner, 1};
	struct api_topology_assignment a, b;
	char msg[256], got[256];
	cu_error err;

	cr_assert_eq(
	    tas_place(t, &r, &a, msg, sizeof(msg), &err), CU_OK, "%s", msg);
	fx_tas_render(&a, got, sizeof(got));
	/* r1 holds 6 pods in host slices (x3's one left out), r2 4: the
	 * best fit rack is r2 */
	cr_assert_str_eq(got, "x4:4");
	api_topology_assignment_dispose(&a);
	r.count = 8;
	cr_assert_eq(
	    tas_place(t, &r, &a, msg, sizeof(msg), &err), CU_OK, "%s", msg);
	fx_tas_render(&a, got, sizeof(got));
	cr_assert_str_eq(got, "x1:2,x2:2,x4:4");
	cr_assert_eq(
	    tas_tree_assignment_usage(t, &a, one_cpu, 1, 1, &err), CU_OK);
	/* x1 fails: its 2 pods (one host slice) go to x5, in r1 */
	cr_assert_eq(tas_replace(t, &a, "x1", &r, &b, msg, sizeof(msg), &err),
	    CU_OK, "%s", msg);
	fx_tas_render(&b, got, sizeof(got));
	cr_assert_str_eq(got, "x2:2,x4:4,x5:2");
	api_topology_assignment_dispose(&a);
	api_topology_assignment_dispose(&b);
	tas_tree_free(t);
}
