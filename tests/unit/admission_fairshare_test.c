/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/admission_fairshare_test.c - Kueue's fair sharing in the
 * admission engine: the dominant resource share (borrowed over lendable
 * per resource, summed over flavors, weighted, through the cohort tree,
 * weight 0), its comparison, and the fair-sharing iterator's tournament.
 * Table-driven; each case names the rule it would fail without.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "admission/admission_int.h"
#include "queues/queues.h"

#define CPU(x) ((int64_t)(x)*1000)
#define NOLIM (-1)

static que_state *st;

static void setup(void)
{
	cr_assert_eq(que_state_new(&st, NULL), CU_OK);
}

static void teardown(void)
{
	que_state_free(st);
}

/* A node's quotas: per flavor ("f1", "f2"), cpu and memory nominal (and
 * a cpu lending limit, NOLIM = none). */
struct nq {
	const char *name, *parent;
	bool cohort;
	int64_t weight; /* milli; NOLIM = unset */
	int64_t cpu[2], mem[2], cpu_lend[2];
};

static void node(const struct nq *q)
{
	static const char *const covered[] = {"cpu", "memory"};
	static const char *const flv[] = {"f1", "f2"};
	struct que_resource_quota rq[2][2];
	struct que_flavor_quotas fq[2];
	struct que_resource_group g = {covered, 2, fq, 0};
	cu_error err;
	int i;

	for (i = 0; i < 2; i++) {
		struct que_flavor_spec f = {.name = flv[i]};

		cr_assert_eq(que_flavor_set(st, &f, NULL), CU_OK);
		rq[i][0] = (struct que_resource_quota){"cpu", q->cpu[i], false,
		    0, q->cpu_lend[i] != NOLIM && q->cpu_lend[i] != 0,
		    q->cpu_lend[i]};
		rq[i][1] = (struct que_resource_quota){
		    "memory", q->mem[i], false, 0, false, 0};
		fq[g.n_flavors++] =
		    (struct que_flavor_quotas){flv[i], rq[i], 2};
	}
	if (q->cohort) {
		struct que_cohort_spec s = {q->name, q->parent, &g, 1};

		cr_assert_eq(
		    que_cohort_set(st, &s, &err), CU_OK, "%s", err.msg);
		cr_assert_eq(que_cohort_set_fair_weight(st, q->name,
				 q->weight != NOLIM, q->weight, &err),
		    CU_OK);
	} else {
		struct que_cq_spec s = {.name = q->name,
		    .cohort = q->parent,
		    .groups = &g,
		    .n_groups = 1,
		    .has_fair_weight = q->weight != NOLIM,
		    .fair_weight = q->weight};

		cr_assert_eq(que_cq_set(st, &s, &err), CU_OK, "%s", err.msg);
	}
}

static uint32_t fr_of(const char *flavor, const char *res)
{
	uint32_t fr;

	for (fr = 0; fr < que_fr_count(st); fr++)
		if (strcmp(que_flavor_by_id(st, que_fr_flavor(st, fr))->name,
			flavor) == 0 &&
		    strcmp(que_resource_name(st, que_fr_resource(st, fr)),
			res) == 0)
			return fr;
	cr_assert_fail("no fr %s/%s", flavor, res);
	return 0;
}

/* Usage of a CQ: cpu and memory in f1 and f2. */
struct use {
	const char *cq;
	int64_t cpu[2], mem[2];
};

static void add_use(const struct use *u)
{
	static const char *const flv[] = {"f1", "f2"};
	struct que_cq *cq = que_cq_get(st, u->cq);
	int i;

	cr_assert_not_null(cq, "%s", u->cq);
	for (i = 0; i < 2; i++) {
		if (u->cpu[i])
			que_node_add_usage(
			    &cq->node, fr_of(flv[i], "cpu"), u->cpu[i]);
		if (u->mem[i])
			que_node_add_usage(
			    &cq->node, fr_of(flv[i], "memory"), u->mem[i]);
	}
}

static const struct que_node *node_of(const char *name)
{
	struct que_cq *cq = que_cq_get(st, name);

	if (cq)
		return &cq->node;
	cr_assert_not_null(que_cohort_get(st, name), "%s", name);
	return &que_cohort_get(st, name)->node;
}

#define MAXN 8

struct drs_case {
	const char *rule;
	struct nq nodes[MAXN];
	struct use uses[MAXN];
	const char *of;
	double share;	 /* expected adm_drs_share */
	int64_t rounded; /* expected adm_drs_rounded */
	const char *dominant;
};

#define W NOLIM
/* name, parent, cohort?, weight, cpu{f1,f2}, mem{f1,f2}, lend{f1,f2} */
static const struct drs_case drs_cases[] = {
    {"a root has share 0",
	{{"a", NULL, false, W, {CPU(1)}, {0}, {NOLIM, NOLIM}}},
	{{"a", {CPU(5)}, {0}}}, "a", 0, 0, NULL},
    {"usage within nominal quota has share 0",
	{{"co", NULL, true, W, {0}, {0}, {NOLIM, NOLIM}},
	    {"a", "co", false, W, {CPU(10)}, {0}, {NOLIM, NOLIM}},
	    {"b", "co", false, W, {CPU(10)}, {0}, {NOLIM, NOLIM}}},
	{{"a", {CPU(10)}, {0}}}, "a", 0, 0, NULL},
    {"borrowed over lendable, per mille",
	{{"co", NULL, true, W, {0}, {0}, {NOLIM, NOLIM}},
	    {"a", "co", false, W, {CPU(10)}, {0}, {NOLIM, NOLIM}},
	    {"b", "co", false, W, {CPU(10)}, {0}, {NOLIM, NOLIM}}},
	{{"a", {CPU(15)}, {0}}}, "a", 250, 250, "cpu"},
    {"the dominant resource is the largest ratio",
	{{"co", NULL, true, W, {0}, {0}, {NOLIM, NOLIM}},
	    {"a", "co", false, W, {CPU(10)}, {100}, {NOLIM, NOLIM}},
	    {"b", "co", false, W, {CPU(10)}, {100}, {NOLIM, NOLIM}}},
	{{"a", {CPU(15)}, {180}}}, "a", 400, 400, "memory"},
    {"the share is divided by the weight",
	{{"co", NULL, true, W, {0}, {0}, {NOLIM, NOLIM}},
	    {"a", "co", false, 2000, {CPU(10)}, {0}, {NOLIM, NOLIM}},
	    {"b", "co", false, W, {CPU(10)}, {0}, {NOLIM, NOLIM}}},
	{{"a", {CPU(15)}, {0}}}, "a", 125, 125, "cpu"},
    {"weight 0 borrowing is +Inf",
	{{"co", NULL, true, W, {0}, {0}, {NOLIM, NOLIM}},
	    {"a", "co", false, 0, {CPU(10)}, {0}, {NOLIM, NOLIM}},
	    {"b", "co", false, W, {CPU(10)}, {0}, {NOLIM, NOLIM}}},
	{{"a", {CPU(11)}, {0}}}, "a", INFINITY, INT64_MAX, "cpu"},
    {"weight 0 not borrowing is 0",
	{{"co", NULL, true, W, {0}, {0}, {NOLIM, NOLIM}},
	    {"a", "co", false, 0, {CPU(10)}, {0}, {NOLIM, NOLIM}},
	    {"b", "co", false, W, {CPU(10)}, {0}, {NOLIM, NOLIM}}},
	{{"a", {CPU(9)}, {0}}}, "a", 0, 0, NULL},
    {"the status value is rounded up",
	{{"co", NULL, true, W, {0}, {0}, {NOLIM, NOLIM}},
	    {"a", "co", false, W, {1500}, {0}, {NOLIM, NOLIM}},
	    {"b", "co", false, W, {1500}, {0}, {NOLIM, NOLIM}}},
	{{"a", {2500}, {0}}}, "a", 1000.0 / 3.0, 334, "cpu"},
    {"flavors of a resource are summed",
	{{"co", NULL, true, W, {0}, {0}, {NOLIM, NOLIM}},
	    {"a", "co", false, W, {CPU(10), CPU(10)}, {0}, {NOLIM, NOLIM}},
	    {"b", "co", false, W, {CPU(10), CPU(10)}, {0}, {NOLIM, NOLIM}}},
	{{"a", {CPU(14), CPU(14)}, {0}}}, "a", 200, 200, "cpu"},
    {"a lending limit bounds what is lendable",
	{{"co", NULL, true, W, {0}, {0}, {NOLIM, NOLIM}},
	    {"a", "co", false, W, {CPU(10)}, {0}, {NOLIM, NOLIM}},
	    {"b", "co", false, W, {CPU(10)}, {0}, {CPU(4), NOLIM}}},
	{{"a", {CPU(15)}, {0}}}, "a", 5000.0 / 14.0, 358, "cpu"},
    {"a cohort's share is against its parent",
	{{"root", NULL, true, W, {0}, {0}, {NOLIM, NOLIM}},
	    {"team", "root", true, W, {0}, {0}, {NOLIM, NOLIM}},
	    {"a", "team", false, W, {CPU(10)}, {0}, {NOLIM, NOLIM}},
	    {"b", "team", false, W, {CPU(10)}, {0}, {NOLIM, NOLIM}},
	    {"c", "root", false, W, {CPU(20)}, {0}, {NOLIM, NOLIM}}},
	{{"a", {CPU(30)}, {0}}}, "team", 250, 250, "cpu"},
    {"a cohort's weight divides its share",
	{{"root", NULL, true, W, {0}, {0}, {NOLIM, NOLIM}},
	    {"team", "root", true, 500, {0}, {0}, {NOLIM, NOLIM}},
	    {"a", "team", false, W, {CPU(10)}, {0}, {NOLIM, NOLIM}},
	    {"b", "team", false, W, {CPU(10)}, {0}, {NOLIM, NOLIM}},
	    {"c", "root", false, W, {CPU(20)}, {0}, {NOLIM, NOLIM}}},
	{{"a", {CPU(30)}, {0}}}, "team", 500, 500, "cpu"},
};

Test(admission_fairshare, drs_table, .init = setup, .fini = teardown)
{
	size_t i, k;

	for (i = 0; i < sizeof(drs_cases) / sizeof(drs_cases[0]); i++) {
		const struct drs_case *c = &drs_cases[i];
		struct adm_drs d;
		double got;

		que_state_free(st);
		cr_assert_eq(que_state_new(&st, NULL), CU_OK);
		for (k = 0; k < MAXN && c->nodes[k].name; k++)
			node(&c->nodes[k]);
		cr_assert_eq(que_rebuild(st, NULL), CU_OK);
		for (k = 0; k < MAXN && c->uses[k].cq; k++)
			add_use(&c->uses[k]);
		adm_drs_of(st, node_of(c->of), &d);
		got = adm_drs_share(&d);
		if (isinf(c->share))
			cr_assert(isinf(got), "%s: got %g", c->rule, got);
		else
			cr_assert(fabs(got - c->share) < 1e-9,
			    "%s: got %.12g want %.12g", c->rule, got, c->share);
		cr_assert_eq(adm_drs_rounded(&d), c->rounded,
		    "%s: rounded %lld", c->rule,
		    (long long)adm_drs_rounded(&d));
		if (c->dominant)
			cr_assert_str_eq(que_resource_name(st, d.dominant),
			    c->dominant, "%s", c->rule);
		else
			cr_assert_eq(d.dominant, UINT32_MAX, "%s", c->rule);
	}
}

Test(admission_fairshare, compare)
{
	static const struct {
		const char *rule;
		struct adm_drs a, b;
		int want;
	} cases[] = {
	    {"lower share first", {1000, 100, 0, true}, {1000, 200, 0, true},
		-1},
	    {"weighted share, not ratio", {4000, 200, 0, true},
		{1000, 100, 0, true}, -1},
	    {"weight 0 borrowing goes last", {0, 1, 0, true},
		{1000, 1e9, 0, true}, 1},
	    {"two weight-0 borrowers by ratio", {0, 100, 0, true},
		{0, 200, 0, true}, -1},
	    {"weight 0 not borrowing is 0", {0, 0, 0, false},
		{1000, 1, 0, true}, -1},
	    {"equal", {1000, 100, 0, true}, {2000, 200, 0, true}, 0},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int got = adm_drs_cmp(&cases[i].a, &cases[i].b);

		cr_assert_eq(got < 0   ? -1
			     : got > 0 ? 1
				       : 0,
		    cases[i].want, "%s", cases[i].rule);
	}
}

Test(admission_fairshare, weights_of_cohorts_and_local_queues, .init = setup,
    .fini = teardown)
{
	struct que_lq_spec lq = {"ns", "q", "a", QUE_STOP_NONE};
	struct nq co = {"co", NULL, true, NOLIM, {0}, {0}, {NOLIM, NOLIM}};
	cu_error err;

	node(&co);
	cr_assert_eq(que_lq_set(st, &lq, &err), CU_OK);
	cr_assert_eq(que_rebuild(st, NULL), CU_OK);
	cr_assert_eq(que_lq_get(st, "ns", "q")->fair_weight, 1000);
	cr_assert_eq(que_cohort_get(st, "co")->node.fair_weight, 1000);
	cr_assert_eq(
	    que_lq_set_fair_weight(st, "ns", "q", true, 0, &err), CU_OK);
	cr_assert_eq(que_lq_get(st, "ns", "q")->fair_weight, 0);
	cr_assert_eq(
	    que_cohort_set_fair_weight(st, "co", true, 2500, &err), CU_OK);
	cr_assert_eq(que_cohort_get(st, "co")->node.fair_weight, 2500);
	cr_assert_eq(
	    que_cohort_set_fair_weight(st, "co", true, -1, &err), CU_EINVAL);
	cr_assert(strstr(err.msg, "spec.fairSharing.weight") != NULL);
	cr_assert_eq(que_cohort_set_fair_weight(st, "nope", false, 0, &err),
	    CU_ENOTFOUND);
	/* que_cohort_set keeps the weight. */
	{
		struct que_cohort_spec again = {"co", NULL, NULL, 0};

		cr_assert_eq(que_cohort_set(st, &again, &err), CU_OK);
	}
	cr_assert_eq(que_cohort_get(st, "co")->node.fair_weight, 2500);
}

/* ---- the fair-sharing iterator ----------------------------------------- */

struct cand {
	const char *cq;
	int64_t cpu_f1, cpu_f2; /* the usage its admission adds */
	int32_t priority;
	int64_t queue_ts;
};

struct iter_case {
	const char *rule;
	struct nq nodes[MAXN];
	struct use uses[MAXN];
	struct cand cands[MAXN]; /* in the classical order */
	const char *winner;	 /* the ClusterQueue picked first */
};

static const struct iter_case iter_cases[] = {
    {"the lowest share after admission wins",
	{{"co", NULL, true, W, {CPU(10)}, {0}, {NOLIM, NOLIM}},
	    {"a", "co", false, W, {0}, {0}, {NOLIM, NOLIM}},
	    {"b", "co", false, W, {0}, {0}, {NOLIM, NOLIM}}},
	{{"a", {CPU(1)}, {0}}, {"b", {CPU(4)}, {0}}},
	{{"b", CPU(1), 0, 0, 1}, {"a", CPU(1), 0, 0, 2}}, "a"},
    {"the share counts the candidate's own request",
	{{"co", NULL, true, W, {CPU(10)}, {0}, {NOLIM, NOLIM}},
	    {"a", "co", false, W, {0}, {0}, {NOLIM, NOLIM}},
	    {"b", "co", false, W, {0}, {0}, {NOLIM, NOLIM}}},
	{{"a", {CPU(1)}, {0}}, {"b", {CPU(2)}, {0}}},
	{{"a", CPU(5), 0, 0, 1}, {"b", CPU(1), 0, 0, 2}}, "b"},
    {"weights divide the shares",
	{{"co", NULL, true, W, {CPU(10)}, {0}, {NOLIM, NOLIM}},
	    {"a", "co", false, W, {0}, {0}, {NOLIM, NOLIM}},
	    {"b", "co", false, 2000, {0}, {0}, {NOLIM, NOLIM}}},
	{{"a", {CPU(2)}, {0}}, {"b", {CPU(2)}, {0}}},
	{{"a", CPU(1), 0, 0, 1}, {"b", CPU(1), 0, 0, 2}}, "b"},
    {"weight 0 goes after any positive share",
	{{"co", NULL, true, W, {CPU(10)}, {0}, {NOLIM, NOLIM}},
	    {"a", "co", false, 0, {0}, {0}, {NOLIM, NOLIM}},
	    {"b", "co", false, W, {0}, {0}, {NOLIM, NOLIM}}},
	{{"b", {CPU(8)}, {0}}},
	{{"a", CPU(1), 0, 0, 1}, {"b", CPU(1), 0, 0, 2}}, "b"},
    {"not borrowing on the requested flavors comes first",
	{{"co", NULL, true, W, {CPU(10), CPU(10)}, {0}, {NOLIM, NOLIM}},
	    {"a", "co", false, W, {0, CPU(5)}, {0}, {NOLIM, NOLIM}},
	    {"b", "co", false, W, {0}, {0}, {NOLIM, NOLIM}}},
	{{"a", {CPU(6)}, {0}}},
	{{"b", CPU(1), 0, 0, 1}, {"a", 0, CPU(1), 0, 2}}, "a"},
    {"equal shares: higher priority",
	{{"co", NULL, true, W, {CPU(10)}, {0}, {NOLIM, NOLIM}},
	    {"a", "co", false, W, {0}, {0}, {NOLIM, NOLIM}},
	    {"b", "co", false, W, {0}, {0}, {NOLIM, NOLIM}}},
	{{NULL}}, {{"a", CPU(1), 0, 1, 0}, {"b", CPU(1), 0, 5, 0}}, "b"},
    {"equal shares and priority: older queue timestamp",
	{{"co", NULL, true, W, {CPU(10)}, {0}, {NOLIM, NOLIM}},
	    {"a", "co", false, W, {0}, {0}, {NOLIM, NOLIM}},
	    {"b", "co", false, W, {0}, {0}, {NOLIM, NOLIM}}},
	{{NULL}}, {{"a", CPU(1), 0, 0, 9}, {"b", CPU(1), 0, 0, 3}}, "b"},
    {"each cohort compares its children's subtree shares",
	{{"root", NULL, true, W, {CPU(20)}, {0}, {NOLIM, NOLIM}},
	    {"team", "root", true, W, {0}, {0}, {NOLIM, NOLIM}},
	    {"a", "team", false, W, {0}, {0}, {NOLIM, NOLIM}},
	    {"b", "team", false, W, {0}, {0}, {NOLIM, NOLIM}},
	    {"c", "root", false, W, {0}, {0}, {NOLIM, NOLIM}}},
	/* team borrows 10 (b), c 6: a's own share is the lowest but its
	 * cohort's is not. */
	{{"b", {CPU(10)}, {0}}, {"c", {CPU(6)}, {0}}},
	{{"a", CPU(1), 0, 0, 1}, {"c", CPU(1), 0, 0, 2}}, "c"},
    {"a candidate without a cohort goes as it comes",
	{{"x", NULL, false, W, {CPU(1)}, {0}, {NOLIM, NOLIM}},
	    {"co", NULL, true, W, {CPU(10)}, {0}, {NOLIM, NOLIM}},
	    {"a", "co", false, W, {0}, {0}, {NOLIM, NOLIM}}},
	{{NULL}}, {{"x", CPU(1), 0, 0, 1}, {"a", CPU(1), 0, 0, 2}}, "x"},
};

Test(admission_fairshare, iterator_table, .init = setup, .fini = teardown)
{
	size_t i, k;

	for (i = 0; i < sizeof(iter_cases) / sizeof(iter_cases[0]); i++) {
		const struct iter_case *c = &iter_cases[i];
		struct adm_fs_cand cands[MAXN];
		struct adm_fr_amount use[MAXN][2];
		size_t n = 0, got;
		int64_t before[MAXN];
		cu_error err;

		que_state_free(st);
		cr_assert_eq(que_state_new(&st, NULL), CU_OK);
		for (k = 0; k < MAXN && c->nodes[k].name; k++)
			node(&c->nodes[k]);
		cr_assert_eq(que_rebuild(st, NULL), CU_OK);
		for (k = 0; k < MAXN && c->uses[k].cq; k++)
			add_use(&c->uses[k]);
		for (k = 0; k < MAXN && c->cands[k].cq; k++, n++) {
			size_t u = 0;

			if (c->cands[k].cpu_f1)
				use[k][u++] = (struct adm_fr_amount){
				    fr_of("f1", "cpu"), c->cands[k].cpu_f1};
			if (c->cands[k].cpu_f2)
				use[k][u++] = (struct adm_fr_amount){
				    fr_of("f2", "cpu"), c->cands[k].cpu_f2};
			cands[k] = (struct adm_fs_cand){
			    que_cq_get(st, c->cands[k].cq), use[k], u,
			    c->cands[k].priority, c->cands[k].queue_ts};
		}
		for (k = 0; k < n; k++)
			before[k] = que_node_usage(
			    &cands[k].cq->node, fr_of("f1", "cpu"));
		cr_assert_eq(adm_fair_next(st, cands, n, &got, &err), CU_OK);
		cr_assert_str_eq(cands[got].cq->name, c->winner, "%s", c->rule);
		/* The tournament leaves no simulated usage behind. */
		for (k = 0; k < n; k++)
			cr_assert_eq(que_node_usage(&cands[k].cq->node,
					 fr_of("f1", "cpu")),
			    before[k], "%s", c->rule);
	}
}

/* ---- the cycle with fair sharing on ------------------------------------- */

static void lq(const char *name)
{
	struct que_lq_spec s = {"ns", name, name, QUE_STOP_NONE};

	cr_assert_eq(que_lq_set(st, &s, NULL), CU_OK);
}

static void workload(const char *uid, const char *queue, int64_t created)
{
	struct que_request r = {"cpu", CPU(1)};
	struct que_podset_spec ps = {0};
	struct que_workload_spec w = {0};
	cu_error err;

	ps.name = "main";
	ps.count = 1;
	ps.requests = &r;
	ps.n_requests = 1;
	w.uid = uid;
	w.ns = "ns";
	w.name = uid;
	w.queue_name = queue;
	w.created_ns = created;
	w.namespace_eligible = true;
	w.podsets = &ps;
	w.n_podsets = 1;
	cr_assert_eq(que_workload_add(st, &w, &err), CU_OK, "%s", err.msg);
}

static const struct adm_decision *decision(
    const struct adm_result *r, const char *uid)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (strcmp(r->v[i].uid, uid) == 0)
			return &r->v[i];
	return NULL;
}

/* One cpu left in the cohort, two heads want it: classically the older
 * one (in the ClusterQueue already borrowing) takes it; with fair sharing
 * the one whose admission leaves the lower share does. */
static void one_left(bool fair, const char *want_admitted)
{
	struct nq co = {"co", NULL, true, NOLIM, {CPU(2)}, {0}, {NOLIM, NOLIM}};
	struct nq a = {"a", "co", false, NOLIM, {0}, {0}, {NOLIM, NOLIM}};
	struct nq b = {"b", "co", false, NOLIM, {0}, {0}, {NOLIM, NOLIM}};
	struct que_fair_config fc = {
	    fair, 2, {QUE_FAIR_LE_FINAL_SHARE, QUE_FAIR_LT_INITIAL_SHARE}};
	struct adm_result r;
	const struct adm_decision *d;
	cu_error err;

	que_fair_sharing_set(st, &fc);
	node(&co);
	node(&a);
	node(&b);
	lq("a");
	lq("b");
	workload("a1", "a", 1);
	adm_result_init(&r);
	cr_assert_eq(adm_cycle(st, 10, &r, &err), CU_OK);
	cr_assert_eq(r.admitted, 1);
	adm_result_dispose(&r);
	workload("a2", "a", 2);
	workload("b1", "b", 3);
	adm_result_init(&r);
	cr_assert_eq(adm_cycle(st, 20, &r, &err), CU_OK);
	cr_assert_eq(r.admitted, 1);
	d = decision(&r, want_admitted);
	cr_assert_not_null(d);
	cr_assert_eq(d->kind, ADM_ADMIT, "%s", want_admitted);
	adm_result_dispose(&r);
	cr_assert_eq(que_check_invariants(st, &err), CU_OK, "%s", err.msg);
}

Test(admission_fairshare, cycle_classical_takes_the_older, .init = setup,
    .fini = teardown)
{
	one_left(false, "a2");
}

Test(admission_fairshare, cycle_fair_takes_the_lower_share, .init = setup,
    .fini = teardown)
{
	one_left(true, "b1");
}

/* ---- fair-sharing preemption -------------------------------------------- */

/* A ClusterQueue (or Cohort) on flavor f1, cpu only, that reclaims within
 * its cohort from any priority. */
static void pnode(const char *name, const char *parent, bool cohort,
    int64_t nominal, int64_t weight)
{
	static const char *const covered[] = {"cpu"};
	struct que_resource_quota rq = {"cpu", nominal, false, 0, false, 0};
	struct que_flavor_quotas fq = {"f1", &rq, 1};
	struct que_resource_group g = {covered, 1, &fq, 1};
	struct que_flavor_spec f = {.name = "f1"};
	cu_error err;

	cr_assert_eq(que_flavor_set(st, &f, NULL), CU_OK);
	if (cohort) {
		struct que_cohort_spec s = {name, parent, &g, 1};

		cr_assert_eq(
		    que_cohort_set(st, &s, &err), CU_OK, "%s", err.msg);
		cr_assert_eq(que_cohort_set_fair_weight(
				 st, name, weight != NOLIM, weight, &err),
		    CU_OK);
		return;
	}
	{
		struct que_cq_spec s = {.name = name,
		    .cohort = parent,
		    .groups = &g,
		    .n_groups = 1,
		    .preemption = {.reclaim_within_cohort = QUE_PREEMPT_ANY},
		    .has_fair_weight = weight != NOLIM,
		    .fair_weight = weight};

		cr_assert_eq(que_cq_set(st, &s, &err), CU_OK, "%s", err.msg);
		lq(name);
	}
}

/* An admitted workload of cpu cores in cq, admitted at t. */
static void running(const char *uid, const char *cq, int64_t cpu, int64_t t)
{
	struct que_request r = {"cpu", CPU(cpu)};
	struct que_podset_spec ps = {0};
	struct que_workload_spec w = {0};
	uint32_t fr;
	cu_error err;

	ps.name = "main";
	ps.count = 1;
	ps.requests = &r;
	ps.n_requests = 1;
	w.uid = uid;
	w.ns = "ns";
	w.name = uid;
	w.queue_name = cq;
	w.created_ns = t;
	w.namespace_eligible = true;
	w.podsets = &ps;
	w.n_podsets = 1;
	cr_assert_eq(que_workload_add(st, &w, &err), CU_OK, "%s", err.msg);
	fr = fr_of("f1", "cpu");
	cr_assert_eq(que_workload_adopt(st, uid, cq, &fr, t, &err), CU_OK, "%s",
	    err.msg);
}

struct pnodes {
	const char *name, *parent;
	bool cohort;
	int64_t nominal, weight;
};

struct prun {
	const char *uid, *cq;
	int64_t cpu, t;
};

struct preempt_case {
	const char *rule;
	size_t n_strategies;
	enum que_fair_strategy s[2];
	struct pnodes nodes[MAXN];
	struct prun run[MAXN];
	const char *pre_cq; /* the preemptor's ClusterQueue */
	int64_t pre_cpu;
	const char *victims; /* "" = no preemption */
	const char *reason;
};

#define LE QUE_FAIR_LE_FINAL_SHARE
#define LT QUE_FAIR_LT_INITIAL_SHARE
/* Root quota 10: a 2, b 2, c 4 (full, not borrowing), cohort 2. */
#define TREE(bw)                                                               \
	{                                                                      \
		{"co", NULL, true, CPU(2), NOLIM},                             \
		    {"a", "co", false, CPU(2), NOLIM},                         \
		    {"b", "co", false, CPU(2), bw},                            \
		{                                                              \
			"c", "co", false, CPU(4), NOLIM                        \
		}                                                              \
	}
/* b borrows 2 with a big newer and a small older workload; a is at its
 * nominal quota; a 1-cpu preemptor in a would borrow 1. */
#define BIG_SMALL                                                              \
	{                                                                      \
		{"c1", "c", 4, 1}, {"a1", "a", 2, 2}, {"bs", "b", 1, 3},       \
		{                                                              \
			"bb", "b", 3, 4                                        \
		}                                                              \
	}
/* b borrows 3 (b1 2 cpu older, b2 3 cpu newer); a uses 1 and its 3-cpu
 * preemptor would borrow 2. */
#define S2B_ONLY                                                               \
	{                                                                      \
		{"c1", "c", 4, 1}, {"a1", "a", 1, 2}, {"b1", "b", 2, 3},       \
		{                                                              \
			"b2", "b", 3, 4                                        \
		}                                                              \
	}

static const struct preempt_case preempt_cases[] = {
    {"LessThanOrEqualToFinalShare spares what would leave b below a", 1, {LE},
	TREE(NOLIM), BIG_SMALL, "a", 1, "bs", "InCohortFairSharing"},
    {"LessThanInitialShare takes the first candidate", 1, {LT}, TREE(NOLIM),
	BIG_SMALL, "a", 1, "bb", "InCohortFairSharing"},
    {"both: the first strategy decides when it can", 2, {LE, LT}, TREE(NOLIM),
	BIG_SMALL, "a", 1, "bs", "InCohortFairSharing"},
    {"LessThanOrEqualToFinalShare alone finds nothing", 1, {LE}, TREE(NOLIM),
	S2B_ONLY, "a", 3, "", NULL},
    {"LessThanInitialShare alone", 1, {LT}, TREE(NOLIM), S2B_ONLY, "a", 3, "b2",
	"InCohortFairSharing"},
    {"both: the second strategy on the first one's leftovers", 2, {LE, LT},
	TREE(NOLIM), S2B_ONLY, "a", 3, "b2", "InCohortFairSharing"},
    {"a weight protects the target", 2, {LE, LT}, TREE(CPU(2)), BIG_SMALL, "a",
	1, "", NULL},
    {"within nominal quota the preemptor reclaims", 2, {LE, LT}, TREE(NOLIM),
	{{"c1", "c", 4, 1}, {"a1", "a", 1, 2}, {"bs", "b", 1, 3},
	    {"bb", "b", 4, 4}},
	"a", 1, "bb", "InCohortReclamation"},
    {"the highest share is preempted from first", 2, {LE, LT},
	{{"co", NULL, true, CPU(3), NOLIM}, {"a", "co", false, CPU(2), NOLIM},
	    {"b", "co", false, CPU(3), NOLIM},
	    {"d", "co", false, CPU(2), NOLIM}},
	/* d borrows 2 (share 200), b 1 (100): d first, though b's
	 * workloads are newer. */
	{{"a1", "a", 2, 1}, {"d1", "d", 4, 2}, {"b1", "b", 2, 3},
	    {"b2", "b", 2, 4}},
	"a", 1, "d1", "InCohortFairSharing"},
    {"shares are compared below the least common ancestor", 2, {LE, LT},
	{{"root", NULL, true, 0, NOLIM}, {"team1", "root", true, 0, NOLIM},
	    {"team2", "root", true, 0, NOLIM},
	    {"a", "team1", false, CPU(1), NOLIM},
	    {"a2", "team1", false, CPU(3), NOLIM},
	    {"b", "team2", false, CPU(2), NOLIM},
	    {"c", "root", false, CPU(4), NOLIM}},
	/* a would borrow 2 (share 200, as b), but team1 stays within its
	 * quota (share 0) while team2 borrows 2. */
	{{"c1", "c", 4, 1}, {"a1", "a", 2, 2}, {"b1", "b", 2, 3},
	    {"b2", "b", 2, 4}},
	"a", 1, "b2", "InCohortFairSharing"},
};

static void check_preempt(const struct preempt_case *c)
{
	struct que_fair_config fc = {true, c->n_strategies, {c->s[0], c->s[1]}};
	struct adm_result r;
	const struct adm_decision *d;
	char got[256] = "";
	size_t k;
	cu_error err;

	que_state_free(st);
	cr_assert_eq(que_state_new(&st, NULL), CU_OK);
	que_fair_sharing_set(st, &fc);
	for (k = 0; k < MAXN && c->nodes[k].name; k++)
		pnode(c->nodes[k].name, c->nodes[k].parent, c->nodes[k].cohort,
		    c->nodes[k].nominal, c->nodes[k].weight);
	for (k = 0; k < MAXN && c->run[k].uid; k++)
		running(
		    c->run[k].uid, c->run[k].cq, c->run[k].cpu, c->run[k].t);
	workload("pre", c->pre_cq, 100);
	/* workload() asks for 1 cpu; bigger preemptors get their own */
	if (c->pre_cpu != 1) {
		cr_assert_eq(que_workload_remove(st, "pre", &err), CU_OK);
		{
			struct que_request rq = {"cpu", CPU(c->pre_cpu)};
			struct que_podset_spec ps = {.name = "main",
			    .count = 1,
			    .requests = &rq,
			    .n_requests = 1};
			struct que_workload_spec w = {.uid = "pre",
			    .ns = "ns",
			    .name = "pre",
			    .queue_name = c->pre_cq,
			    .created_ns = 100,
			    .namespace_eligible = true,
			    .podsets = &ps,
			    .n_podsets = 1};

			cr_assert_eq(que_workload_add(st, &w, &err), CU_OK);
		}
	}
	adm_result_init(&r);
	cr_assert_eq(adm_cycle(st, 200, &r, &err), CU_OK, "%s", err.msg);
	d = decision(&r, "pre");
	cr_assert_not_null(d, "%s", c->rule);
	if (d->kind == ADM_PREEMPT)
		for (k = 0; k < d->n_victims; k++) {
			if (k)
				strcat(got, ",");
			strcat(got, d->victims[k].uid);
			cr_assert_str_eq(
			    adm_preempt_reason_string(d->victims[k].reason),
			    c->reason, "%s", c->rule);
		}
	cr_assert_str_eq(got, c->victims, "%s: kind %d", c->rule, d->kind);
	cr_assert_neq(d->kind, ADM_ADMIT, "%s", c->rule);
	adm_result_dispose(&r);
	cr_assert_eq(
	    que_check_invariants(st, &err), CU_OK, "%s: %s", c->rule, err.msg);
}

Test(admission_fairshare, preemption_table, .init = setup, .fini = teardown)
{
	size_t i;

	for (i = 0; i < sizeof(preempt_cases) / sizeof(preempt_cases[0]); i++)
		check_preempt(&preempt_cases[i]);
}

/* The cycle's iterator replays only the rounds on the processed
 * candidate's path: after each admission it must pick what a fresh
 * tournament over the remaining candidates picks. Two identical states:
 * one long-lived iterator on the first, fresh tournaments on the second,
 * the same admissions applied to both. */
Test(admission_fairshare, iterator_incremental_equals_fresh, .init = setup,
    .fini = teardown)
{
	static const struct nq nodes[] = {
	    {"root", NULL, true, W, {CPU(12)}, {0}, {NOLIM, NOLIM}},
	    {"t1", "root", true, W, {0}, {0}, {NOLIM, NOLIM}},
	    {"t2", "root", true, 2000, {0}, {0}, {NOLIM, NOLIM}},
	    {"a", "t1", false, W, {CPU(1)}, {0}, {NOLIM, NOLIM}},
	    {"b", "t1", false, 3000, {0}, {0}, {NOLIM, NOLIM}},
	    {"c", "t2", false, W, {0}, {0}, {NOLIM, NOLIM}},
	    {"d", "t2", false, 500, {CPU(2)}, {0}, {NOLIM, NOLIM}},
	    {"e", "root", false, W, {0}, {0}, {NOLIM, NOLIM}},
	};
	static const char *const cqs[] = {"a", "b", "c", "d", "e"};
	static const int64_t want[] = {CPU(2), CPU(3), CPU(1), CPU(4), CPU(2)};
	que_state *two[2];
	struct adm_fs_cand c[2][5];
	struct adm_fr_amount use[2][5];
	struct adm_fs_iter *it;
	bool gone[5] = {false};
	size_t i, j, k, steps;
	cu_error err;

	two[0] = st;
	cr_assert_eq(que_state_new(&two[1], NULL), CU_OK);
	for (j = 0; j < 2; j++) {
		st = two[j];
		for (i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++)
			node(&nodes[i]);
		cr_assert_eq(que_rebuild(st, NULL), CU_OK);
		for (i = 0; i < 5; i++) {
			use[j][i] =
			    (struct adm_fr_amount){fr_of("f1", "cpu"), want[i]};
			c[j][i] = (struct adm_fs_cand){que_cq_get(st, cqs[i]),
			    &use[j][i], 1, 0, (int64_t)i};
		}
	}
	st = two[0];
	cr_assert_eq(adm_fs_iter_new(two[0], c[0], 5, &it, &err), CU_OK);
	for (steps = 0; steps < 5; steps++) {
		struct adm_fs_cand rest[5];
		size_t map[5], n = 0, fresh;

		for (i = 0; i < 5; i++)
			if (!gone[i]) {
				map[n] = i;
				rest[n++] = c[1][i];
			}
		cr_assert_eq(adm_fs_iter_next(it, &k, &err), CU_OK);
		cr_assert_neq(k, SIZE_MAX);
		cr_assert_eq(
		    adm_fair_next(two[1], rest, n, &fresh, &err), CU_OK);
		cr_assert_eq(map[fresh], k, "step %zu: fresh %s, iterator %s",
		    steps, cqs[map[fresh]], cqs[k]);
		/* admit it in both states */
		for (j = 0; j < 2; j++)
			que_node_add_usage(
			    &c[j][k].cq->node, use[j][k].fr, use[j][k].v);
		gone[k] = true;
		adm_fs_iter_done(it, k);
	}
	cr_assert_eq(adm_fs_iter_next(it, &k, &err), CU_OK);
	cr_assert_eq(k, SIZE_MAX);
	adm_fs_iter_free(it);
	que_state_free(two[1]);
}
