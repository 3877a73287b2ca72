/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/tas_slices_test.c - topology-aware placement with slices
 * (podset-slice-required-topology + podset-slice-size) and of podSet
 * groups (a leader podSet placed with its workers), table-driven over a
 * 2 blocks x 2 racks x 4 hosts tree of 2-cpu hosts (two 1-cpu pods per
 * host): each slice inside one domain of its level, the best fit
 * counted in slices, the validation messages, and the leader's node
 * taken into account when the workers are packed.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "tas/tas.h"
#include "tests/unit/fixtures.h"

#define BLOCK "cloud.provider.com/topology-block"
#define RACK "cloud.provider.com/topology-rack"
#define HOST TAS_HOSTNAME_LABEL

static const struct tas_amount one_cpu[] = {{"cpu", 1000}};
static const struct tas_amount two_cpu[] = {{"cpu", 2000}};

static struct tas_tree *fixture(void)
{
	const char *levels[] = {BLOCK, RACK, HOST};
	struct tas_tree *t;
	cu_error err;
	int b, r, h;

	cr_assert_eq(tas_tree_new("default", levels, 3, &t, &err), CU_OK);
	for (b = 1; b <= 2; b++)
		for (r = 1; r <= 2; r++)
			for (h = 1; h <= 4; h++) {
				char name[48], bv[16], rv[32];
				struct api_strmap l = {NULL, 0};
				struct tas_amount alloc[] = {
				    {"cpu", 2000}, {"pods", 110}};

				snprintf(
				    name, sizeof(name), "b%d-r%d-n%d", b, r, h);
				snprintf(bv, sizeof(bv), "b%d", b);
				snprintf(rv, sizeof(rv), "b%d-r%d", b, r);
				cr_assert_eq(
				    api_strmap_set(&l, BLOCK, bv, &err), CU_OK);
				cr_assert_eq(
				    api_strmap_set(&l, RACK, rv, &err), CU_OK);
				cr_assert_eq(
				    api_strmap_set(&l, HOST, name, &err),
				    CU_OK);
				cr_assert_eq(tas_tree_node_set(t, name, &l,
						 alloc, 2, true, &err),
				    CU_OK);
				api_strmap_dispose(&l);
			}
	return t;
}

static void take(struct tas_tree *t, const char *node)
{
	cu_error err;

	cr_assert_eq(tas_tree_node_usage(t, node, one_cpu, 1, 1, &err), CU_OK);
}

static void none(struct tas_tree *t)
{
	(void)t;
}

/* One pod's worth taken on b1-r1-n1: that rack holds 6 pods, 3 slices
 * of 2 at host level but only one slice of 4 at rack level. */
static void r1_one_taken(struct tas_tree *t)
{
	take(t, "b1-r1-n1");
	take(t, "b1-r1-n1");
}

/* Hosts n1 and n2 of b1-r1 keep one free cpu each: the rack holds 6
 * pods but only 2 host slices of 2. */
static void r1_halves(struct tas_tree *t)
{
	take(t, "b1-r1-n1");
	take(t, "b1-r1-n2");
}

/* Every host of b1-r1 keeps one free cpu: no 2-cpu leader fits there. */
static void r1_all_halves(struct tas_tree *t)
{
	int h;
	char n[32];

	for (h = 1; h <= 4; h++) {
		snprintf(n, sizeof(n), "b1-r1-n%d", h);
		take(t, n);
	}
}

struct slice_case {
	const char *name;
	void (*setup)(struct tas_tree *);
	enum tas_mode mode;
	const char *level;
	int32_t count;
	const char *slice_level;
	int32_t slice_size;
	int rc;
	const char *want; /* "host:count,..." or the pending message */
};

static const struct slice_case slice_cases[] = {
    {"host slices of 2 in one rack", none, TAS_REQUIRED, RACK, 8, HOST, 2,
	CU_OK, "b1-r1-n1:2,b1-r1-n2:2,b1-r1-n3:2,b1-r1-n4:2"},
    /* without slices the best fit is b1-r1 (6 pods); in host slices of
     * 2 it holds only 2 of the 3 slices */
    {"best fit counted in slices", r1_halves, TAS_REQUIRED, RACK, 6, HOST, 2,
	CU_OK, "b1-r2-n1:2,b1-r2-n2:2,b1-r2-n3:2"},
    {"slice of 4 bigger than any host", none, TAS_REQUIRED, RACK, 8, HOST, 4,
	TAS_NOFIT,
	"topology \"default\" doesn't allow to fit any of 2 "
	"slice(s)"},
    {"too many slices for a rack", none, TAS_REQUIRED, RACK, 10, HOST, 2,
	TAS_NOFIT,
	"topology \"default\" allows to fit only 4 out of 5 "
	"slice(s)"},
    {"rack slices of 4 in one block", none, TAS_REQUIRED, BLOCK, 8, RACK, 4,
	CU_OK, "b1-r1-n1:2,b1-r1-n2:2,b1-r1-n3:2,b1-r1-n4:2"},
    /* b1 holds 3 rack slices of 4 (b1-r1 only one of its 6 pods' worth):
     * the best fit block, its fuller rack first */
    {"rack slices best fit block", r1_one_taken, TAS_REQUIRED, BLOCK, 12, RACK,
	4, CU_OK,
	"b1-r1-n2:2,b1-r1-n3:2,b1-r2-n1:2,b1-r2-n2:2,b1-r2-n3:2,"
	"b1-r2-n4:2"},
    {"preferred rack falls back to block", none, TAS_PREFERRED, RACK, 12, HOST,
	2, CU_OK,
	"b1-r1-n1:2,b1-r1-n2:2,b1-r1-n3:2,b1-r1-n4:2,b1-r2-n1:2,"
	"b1-r2-n2:2"},
    {"slices only: unconstrained from the top", none, TAS_UNCONSTRAINED, NULL,
	4, HOST, 2, CU_OK, "b1-r1-n1:2,b1-r1-n2:2"},
    {"slice level above the podset level", none, TAS_REQUIRED, HOST, 2, RACK, 2,
	TAS_NOFIT,
	"podset slice topology cloud.provider.com/topology-rack is above "
	"the podset topology kubernetes.io/hostname"},
    {"slice size does not divide the count", none, TAS_REQUIRED, RACK, 6, HOST,
	4, TAS_NOFIT, "podset slice size 4 does not divide the pod count 6"},
    {"unknown slice level", none, TAS_REQUIRED, RACK, 4, "zone", 2, TAS_NOFIT,
	"no requested topology level for slices: zone"},
    {"slice size missing", none, TAS_REQUIRED, RACK, 4, HOST, 0, TAS_NOFIT,
	"slice topology requested, but slice size not provided"},
    /* slice size 1: one pod per slice, as without slices */
    {"slice size 1", r1_halves, TAS_REQUIRED, RACK, 6, HOST, 1, CU_OK,
	"b1-r1-n1:1,b1-r1-n2:1,b1-r1-n3:2,b1-r1-n4:2"},
};

Test(tas_slices, table)
{
	size_t i;

	for (i = 0; i < sizeof(slice_cases) / sizeof(slice_cases[0]); i++) {
		const struct slice_case *c = &slice_cases[i];
		struct tas_tree *t = fixture();
		struct tas_request r = {c->mode, c->level, c->count, one_cpu, 1,
		    c->slice_level, c->slice_size, NULL, NULL, 0};
		struct api_topology_assignment a;
		char msg[256];
		cu_error err;
		int rc;

		c->setup(t);
		rc = tas_place(t, &r, &a, msg, sizeof(msg), &err);
		fx_tas_expect(c->name, rc, c->rc, msg, &a, c->want);
		if (rc == CU_OK) {
			cr_assert_eq(a.levels.n, 1, "%s", c->name);
			cr_assert_str_eq(a.levels.items[0], HOST);
		}
		api_topology_assignment_dispose(&a);
		tas_tree_free(t);
	}
}

struct group_case {
	const char *name;
	void (*setup)(struct tas_tree *);
	enum tas_mode mode;
	const char *level;
	int32_t workers;
	const struct tas_amount *leader_req;
	int rc;
	const char *want;	 /* workers, or the pending message */
	const char *want_leader; /* the leader's host */
};

static const struct group_case group_cases[] = {
    /* the leader's host keeps one worker, the rest packed around it */
    {"leader and 7 workers in one rack", none, TAS_REQUIRED, RACK, 7, one_cpu,
	CU_OK, "b1-r1-n1:1,b1-r1-n2:2,b1-r1-n3:2,b1-r1-n4:2", "b1-r1-n1:1"},
    /* Kueue reports the workers' fit without the leader */
    {"leader and 8 workers do not fit a rack", none, TAS_REQUIRED, RACK, 8,
	one_cpu, TAS_NOFIT,
	"topology \"default\" allows to fit only 8 out of 8 pod(s)", NULL},
    {"preferred rack falls back to block", none, TAS_PREFERRED, RACK, 8,
	one_cpu, CU_OK,
	"b1-r1-n1:1,b1-r1-n2:2,b1-r1-n3:2,b1-r1-n4:2,b1-r2-n1:1", "b1-r1-n1:1"},
    /* no block holds 20 workers and the leader: spread from the top,
     * the leader's block first, the workers packed around it */
    {"preferred spreads from the leader's block", none, TAS_PREFERRED, RACK, 20,
	one_cpu, CU_OK,
	"b1-r1-n1:1,b1-r1-n2:2,b1-r1-n3:2,b1-r1-n4:2,b1-r2-n1:2,"
	"b1-r2-n2:2,b1-r2-n3:2,b1-r2-n4:2,b2-r1-n1:2,b2-r1-n2:2,"
	"b2-r1-n3:1",
	"b1-r1-n1:1"},
    /* b1-r1 would be the workers' best fit (4 free), but no 2-cpu
     * leader fits there: the group goes to a rack that takes both */
    {"the leader's rack", r1_all_halves, TAS_REQUIRED, RACK, 4, two_cpu, CU_OK,
	"b1-r2-n2:2,b1-r2-n3:2", "b1-r2-n1:1"},
};

Test(tas_slices, groups)
{
	size_t i;

	for (i = 0; i < sizeof(group_cases) / sizeof(group_cases[0]); i++) {
		const struct group_case *c = &group_cases[i];
		struct tas_tree *t = fixture();
		struct tas_request w = {c->mode, c->level, c->workers, one_cpu,
		    1, NULL, 0, NULL, NULL, 0};
		struct tas_request l = {c->mode, c->level, 1, c->leader_req, 1,
		    NULL, 0, NULL, NULL, 0};
		struct api_topology_assignment a, b;
		char msg[256], got[512];
		cu_error err;
		int rc;

		c->setup(t);
		rc = tas_place_group(t, &w, &l, &a, &b, msg, sizeof(msg), &err);
		cr_assert_eq(rc, c->rc, "%s: rc %d (%s)", c->name, rc, msg);
		if (rc == CU_OK) {
			fx_tas_render(&a, got, sizeof(got));
			cr_assert_str_eq(got, c->want, "%s", c->name);
			fx_tas_render(&b, got, sizeof(got));
			cr_assert_str_eq(got, c->want_leader, "%s", c->name);
		} else {
			cr_assert_str_eq(msg, c->want, "%s", c->name);
			cr_assert_eq(a.n_domains + b.n_domains, 0);
		}
		api_topology_assignment_dispose(&a);
		api_topology_assignment_dispose(&b);
		tas_tree_free(t);
	}
}

Test(tas_slices, bad_group_requests)
{
	struct tas_tree *t = fixture();
	struct tas_request w = {
	    TAS_REQUIRED, RACK, 4, one_cpu, 1, NULL, 0, NULL, NULL, 0};
	struct tas_request l = {
	    TAS_REQUIRED, RACK, 2, one_cpu, 1, NULL, 0, NULL, NULL, 0};
	struct api_topology_assignment a, b;
	char msg[256];
	cu_error err;

	/* a leader podSet has one pod */
	cr_assert_eq(tas_place_group(t, &w, &l, &a, &b, msg, sizeof(msg), &err),
	    CU_EINVAL);
	/* no slices in a group */
	l.count = 1;
	w.slice_level = HOST;
	w.slice_size = 2;
	cr_assert_eq(tas_place_group(t, &w, &l, &a, &b, msg, sizeof(msg), &err),
	    CU_EINVAL);
	tas_tree_free(t);
}

/* A sliced assignment charged to the tree takes its hosts: the next
 * sliced podSet goes to another rack. */
Test(tas_slices, charged_slices_take_capacity)
{
	struct tas_tree *t = fixture();
	struct tas_request r = {
	    TAS_REQUIRED, RACK, 8, one_cpu, 1, HOST, 2, NULL, NULL, 0};
	struct api_topology_assignment a, b;
	char msg[256], got[512];
	cu_error err;

	cr_assert_eq(tas_place(t, &r, &a, msg, sizeof(msg), &err), CU_OK);
	cr_assert_eq(
	    tas_tree_assignment_usage(t, &a, one_cpu, 1, 1, &err), CU_OK);
	cr_assert_eq(tas_place(t, &r, &b, msg, sizeof(msg), &err), CU_OK);
	fx_tas_render(&b, got, sizeof(got));
	cr_assert_str_eq(got, "b1-r2-n1:2,b1-r2-n2:2,b1-r2-n3:2,b1-r2-n4:2");
	api_topology_assignment_dispose(&a);
	api_topology_assignment_dispose(&b);
	tas_tree_free(t);
}

/* Slices of one pod at the lowest level are Kueue's plain placement:
 * the general form gives what tas_place gives without slices, over
 * pseudo-random charges, required and preferred (an unconstrained
 * request with slices starts at the highest level, as Kueue's). */
Test(tas_slices, one_pod_slices_are_plain_placement)
{
	static const char *const levels[] = {BLOCK, RACK, HOST};
	unsigned seed = 7;
	int round, k;

	for (round = 0; round < 200; round++) {
		struct tas_tree *t = fixture();
		enum tas_mode mode = (enum tas_mode)(1 + round % 2);
		struct tas_request r = {mode, levels[round % 3 % 2],
		    1 + round % 13, one_cpu, 1, NULL, 0, NULL, NULL, 0};
		struct tas_request s = r;
		struct api_topology_assignment a, b;
		char m1[256], m2[256], g1[512], g2[512];
		cu_error err;
		int rc1, rc2;

		for (k = 0; k < 12; k++) {
			char n[32];

			seed = seed * 1103515245u + 12345u;
			snprintf(n, sizeof(n), "b%u-r%u-n%u",
			    1 + (seed >> 8) % 2, 1 + (seed >> 12) % 2,
			    1 + (seed >> 16) % 4);
			if (tas_tree_leaf_free(t, n, "cpu") > 0)
				take(t, n);
		}
		s.slice_level = HOST;
		s.slice_size = 1;
		rc1 = tas_place(t, &r, &a, m1, sizeof(m1), &err);
		rc2 = tas_place(t, &s, &b, m2, sizeof(m2), &err);
		cr_assert_eq(rc1, rc2, "round %d: %s / %s", round, m1, m2);
		fx_tas_render(&a, g1, sizeof(g1));
		fx_tas_render(&b, g2, sizeof(g2));
		cr_assert_str_eq(g1, g2, "round %d", round);
		if (rc1 != CU_OK)
			cr_assert_str_eq(m1, m2, "round %d", round);
		api_topology_assignment_dispose(&a);
		api_topology_assignment_dispose(&b);
		tas_tree_free(t);
	}
}

/* Pods of a JobSet's child Jobs (jobset.sigs.k8s.io/job-index of
 * replicatedjob-replicas) take consecutive ranks per Job, so each Job
 * of a slice's size lands in one slice's domain; other pods rank by
 * their completion index. */
Test(tas_slices, jobset_pods_rank_by_job)
{
	static char h1[] = "h1", h2[] = "h2", host[] = HOST;
	char *v1[] = {h1}, *v2[] = {h2}, *lv[] = {host};
	struct api_topology_domain doms[] = {{v1, 4}, {v2, 4}};
	struct api_topology_assignment a = {{lv, 1}, doms, 2};
	static const struct {
		const char *meta; /* metadata members */
		int64_t index, rank;
		ssize_t domain;
	} cases[] = {
	    {"\"labels\":{\"jobset.sigs.k8s.io/job-index\":\"0\","
	     "\"jobset.sigs.k8s.io/replicatedjob-replicas\":\"2\"}",
		2, 2, 0},
	    {"\"labels\":{\"jobset.sigs.k8s.io/job-index\":\"1\","
	     "\"jobset.sigs.k8s.io/replicatedjob-replicas\":\"2\"}",
		0, 4, 1},
	    {"\"labels\":{\"jobset.sigs.k8s.io/job-index\":\"1\"},"
	     "\"annotations\":{"
	     "\"jobset.sigs.k8s.io/replicatedjob-replicas\":\"2\"}",
		3, 7, 1},
	    /* beyond one Job's pods: no rank */
	    {"\"labels\":{\"jobset.sigs.k8s.io/job-index\":\"1\","
	     "\"jobset.sigs.k8s.io/replicatedjob-replicas\":\"2\"}",
		4, -1, -1},
	    /* a plain Job's pod: its completion index */
	    {"\"labels\":{}", 1, 1, 0},
	    {"\"labels\":{}", -1, -1, -1},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[512];
		json_t *pod;
		struct api_meta m;
		int64_t r;

		snprintf(
		    buf, sizeof(buf), "{\"metadata\":{%s}}", cases[i].meta);
		pod = json_loads(buf, 0, NULL);
		cr_assert_not_null(pod, "case %zu", i);
		cr_assert_eq(api_object_meta_decode(&m, pod, NULL), CU_OK);
		r = tas_pod_rank(&a, &m, cases[i].index);
		api_meta_dispose(&m);
		cr_assert_eq(
		    r, cases[i].rank, "case %zu: %lld", i, (long long)r);
		cr_assert_eq(
		    tas_rank_domain(&a, r), cases[i].domain, "case %zu", i);
		json_decref(pod);
	}
}

/* Replacement of a failed node of a sliced podSet (Kueue's
 * TASFailedNodeReplacement with slices). */
struct replace_case {
	const char *name;
	void (*setup)(struct tas_tree *); /* after the placement */
	enum tas_mode mode;
	const char *level;
	int32_t count;
	const char *slice_level;
	int32_t slice_size;
	const char *failed;
	int rc;
	const char *want; /* the new assignment, or the message */
};

/* n3 and n4 of b1-r1 keep one free cpu each: room for 2 pods, not for
 * a host slice of 2. */
static void r1_n3_n4_halves(struct tas_tree *t)
{
	take(t, "b1-r1-n3");
	take(t, "b1-r1-n4");
}

static void r1_n3_half(struct tas_tree *t)
{
	take(t, "b1-r1-n3");
}

/* n3 and n4 of b1-r1 full. */
static void r1_n3_n4_full(struct tas_tree *t)
{
	r1_n3_n4_halves(t);
	r1_n3_n4_halves(t);
}

static const struct replace_case replace_cases[] = {
    /* host slices of 2 on n1, n2; n1 fails: a whole host slice needed */
    {"a whole host slice", r1_n3_half, TAS_REQUIRED, RACK, 4, HOST, 2,
	"b1-r1-n1", CU_OK, "b1-r1-n2:2,b1-r1-n4:2"},
    /* pod by pod would split the slice over n3 and n4 */
    {"no host holds the slice", r1_n3_n4_halves, TAS_REQUIRED, RACK, 4, HOST, 2,
	"b1-r1-n1", TAS_NOFIT,
	"no replacement for unhealthy node b1-r1-n1: 2 pod(s) do not fit in "
	"the assigned domain"},
    /* a rack slice of 4 on n1, n2: n1's 2 pods complete it in b1-r1 */
    {"the incomplete slice's rack", none, TAS_REQUIRED, BLOCK, 4, RACK, 4,
	"b1-r1-n1", CU_OK, "b1-r1-n2:2,b1-r1-n3:2"},
    /* b1-r2 has room, but the slice is b1-r1's */
    {"only in the incomplete slice's rack", r1_n3_n4_full, TAS_REQUIRED, BLOCK,
	4, RACK, 4, "b1-r1-n1", TAS_NOFIT,
	"no replacement for unhealthy node b1-r1-n1: 2 pod(s) do not fit in "
	"the assigned domain"},
};

Test(tas_slices, replace_failed_node)
{
	size_t i;

	for (i = 0; i < sizeof(replace_cases) / sizeof(replace_cases[0]); i++) {
		const struct replace_case *c = &replace_cases[i];
		struct tas_tree *t = fixture();
		struct tas_request r = {c->mode, c->level, c->count, one_cpu, 1,
		    c->slice_level, c->slice_size, NULL, NULL, 0};
		struct api_topology_assignment a, b;
		char msg[256], got[512];
		cu_error err;
		int rc;

		cr_assert_eq(tas_place(t, &r, &a, msg, sizeof(msg), &err),
		    CU_OK, "%s: %s", c->name, msg);
		cr_assert_eq(
		    tas_tree_assignment_usage(t, &a, one_cpu, 1, 1, &err),
		    CU_OK);
		c->setup(t);
		fx_tas_render(&a, got, sizeof(got));
		cr_assert(strstr(got, c->failed) != NULL, "%s: placed %s",
		    c->name, got);
		rc = tas_replace(
		    t, &a, c->failed, &r, &b, msg, sizeof(msg), &err);
		cr_assert_eq(rc, c->rc, "%s: rc %d (%s)", c->name, rc, msg);
		if (rc == CU_OK) {
			fx_tas_render(&b, got, sizeof(got));
			cr_assert_str_eq(got, c->want, "%s", c->name);
		} else {
			cr_assert_str_eq(msg, c->want, "%s", c->name);
		}
		api_topology_assignment_dispose(&a);
		api_topology_assignment_dispose(&b);
		tas_tree_free(t);
	}
}
