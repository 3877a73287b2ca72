/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/queues_refit_test.c - que_workload_fits_recorded, the re-check
 * of an admission the ledger recorded but the API never showed, against
 * the model after the Workloads the API shows admitted were adopted.
 * Table-driven: one row per outcome (fits; quota taken by adopted usage;
 * cohort borrowing limit; generation changed; deactivated; deleted;
 * requests changed; flavor no longer offered; ClusterQueue stopped;
 * podsets summed per flavor; ...).
 *
 * Configuration of every row:
 *   ResourceFlavors default, spot
 *   ClusterQueue solo: no cohort, default cpu 10
 *   ClusterQueue a:    cohort co, default cpu 4, borrowingLimit 2
 *   ClusterQueue b:    cohort co, default cpu 6
 *   LocalQueues ns/q-solo, ns/q-a, ns/q-b onto them.
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

TestSuite(queues_refit, .init = setup, .fini = teardown);

static const char *const cpu[] = {"cpu"};

static void flavor(const char *name)
{
	struct que_flavor_spec f = {.name = name};

	cr_assert_eq(que_flavor_set(st, &f, NULL), CU_OK);
}

static void cq(const char *name, const char *cohort, int64_t nominal,
    bool has_bl, int64_t bl, enum que_stop stop)
{
	struct que_resource_quota rq = {"cpu", nominal, has_bl, bl, false, 0};
	struct que_flavor_quotas fq = {"default", &rq, 1};
	struct que_resource_group g = {cpu, 1, &fq, 1};
	struct que_cq_spec s = {.name = name,
	    .cohort = cohort,
	    .groups = &g,
	    .n_groups = 1,
	    .stop = stop};
	cu_error err;

	cr_assert_eq(que_cq_set(st, &s, &err), CU_OK, "%s", err.msg);
}

static void lq(const char *name, const char *cq_name)
{
	struct que_lq_spec s = {"ns", name, cq_name, QUE_STOP_NONE};

	cr_assert_eq(que_lq_set(st, &s, NULL), CU_OK);
}

/* A pending Workload uid in ns/queue with one pod per podset, each
 * asking for cpu[i] milli-cpu. */
static void wl(
    const char *uid, const char *queue, const int64_t *cpus, size_t n)
{
	struct que_request r[4];
	struct que_podset_spec ps[4];
	static const char *const names[] = {"main", "aux", "p2", "p3"};
	struct que_workload_spec w = {.uid = uid,
	    .ns = "ns",
	    .name = uid,
	    .queue_name = queue,
	    .created_ns = 1,
	    .namespace_eligible = true,
	    .podsets = ps,
	    .n_podsets = n};
	cu_error err;
	size_t i;

	cr_assert_leq(n, 4);
	for (i = 0; i < n; i++) {
		r[i] = (struct que_request){"cpu", cpus[i]};
		ps[i] = (struct que_podset_spec){.name = names[i],
		    .count = 1,
		    .requests = &r[i],
		    .n_requests = 1};
	}
	cr_assert_eq(que_workload_add(st, &w, &err), CU_OK, "%s", err.msg);
}

static uint32_t fr_of(const char *flv)
{
	const struct que_flavor *f = que_flavor_get(st, flv);
	uint32_t fr;

	cr_assert_not_null(f);
	for (fr = 0; fr < que_fr_count(st); fr++)
		if (que_fr_flavor(st, fr) == f->id &&
		    strcmp(que_resource_name(st, que_fr_resource(st, fr)),
			"cpu") == 0)
			return fr;
	return UINT32_MAX;
}

/* What the API shows admitted: adopted before any recorded decision. */
static void adopt(
    const char *uid, const char *queue, const char *cq_name, int64_t milli)
{
	uint32_t frs[1] = {fr_of("default")};
	cu_error err;

	wl(uid, queue, &milli, 1);
	cr_assert_eq(que_workload_adopt(st, uid, cq_name, frs, 1, &err), CU_OK,
	    "%s", err.msg);
}

enum tweak {
	T_NONE = 0,
	T_DELETED,    /* the Workload is removed before the check */
	T_ADOPTED,    /* the Workload itself already holds quota */
	T_SPOT,	      /* the decision recorded flavor spot */
	T_STOPPED,    /* ClusterQueue solo is on hold */
	T_REROUTED,   /* q-solo now routes to b */
	T_CQ_DELETED, /* ClusterQueue solo is gone */
};

struct row {
	const char *name;
	const char *queue, *cq; /* the Workload's LocalQueue, recorded CQ */
	int64_t now_cpu[2];	/* its podsets now (0 = no second) */
	int64_t rec_cpu[2];	/* recorded usage per podset */
	int64_t rec_gen, now_gen;
	bool inactive;
	/* already admitted from the API's view */
	const char *other_queue, *other_cq;
	int64_t other_cpu;
	enum tweak tweak;
	enum que_refit want;
	const char *why; /* substring of the reason */
};

static const struct row rows[] = {
    {"fits on top of adopted usage", "q-solo", "solo", {6000}, {6000}, 1, 1,
	false, "q-solo", "solo", 4000, T_NONE, QUE_REFIT_FITS, ""},
    {"quota exceeded by adopted usage", "q-solo", "solo", {6000}, {6000}, 1, 1,
	false, "q-solo", "solo", 8000, T_NONE, QUE_REFIT_QUOTA,
	"cpu in flavor default: 6000m needed, 2000m free in ClusterQueue "
	"solo"},
    {"borrows within the cohort's limit", "q-a", "a", {6000}, {6000}, 1, 1,
	false, NULL, NULL, 0, T_NONE, QUE_REFIT_FITS, ""},
    {"cohort borrowing limit exceeded", "q-a", "a", {7000}, {7000}, 1, 1, false,
	NULL, NULL, 0, T_NONE, QUE_REFIT_QUOTA,
	"7000m needed, 6000m free in ClusterQueue a and its cohort"},
    {"cohort used by a sibling", "q-a", "a", {6000}, {6000}, 1, 1, false, "q-b",
	"b", 5000, T_NONE, QUE_REFIT_QUOTA,
	"6000m needed, 5000m free in ClusterQueue a and its cohort"},
    {"podsets summed per flavor", "q-solo", "solo", {3000, 3000}, {3000, 3000},
	1, 1, false, "q-solo", "solo", 5000, T_NONE, QUE_REFIT_QUOTA,
	"6000m needed, 5000m free"},
    {"generation changed", "q-solo", "solo", {6000}, {6000}, 1, 2, false, NULL,
	NULL, 0, T_NONE, QUE_REFIT_CHANGED, "generation 2, recorded 1"},
    {"generation not recorded", "q-solo", "solo", {6000}, {6000}, 0, 5, false,
	NULL, NULL, 0, T_NONE, QUE_REFIT_FITS, ""},
    {"requests changed", "q-solo", "solo", {6000}, {4000}, 0, 5, false, NULL,
	NULL, 0, T_NONE, QUE_REFIT_CHANGED,
	"podset main requests 6000m cpu, the decision recorded 4000m"},
    {"deactivated", "q-solo", "solo", {6000}, {6000}, 1, 2, true, NULL, NULL, 0,
	T_NONE, QUE_REFIT_INACTIVE, "spec.active is false"},
    {"deleted", "q-solo", "solo", {6000}, {6000}, 1, 1, false, NULL, NULL, 0,
	T_DELETED, QUE_REFIT_GONE, "no Workload with uid w"},
    {"already admitted", "q-solo", "solo", {6000}, {6000}, 1, 1, false, NULL,
	NULL, 0, T_ADOPTED, QUE_REFIT_HOLDS, "already holds quota"},
    {"flavor not offered", "q-solo", "solo", {6000}, {6000}, 1, 1, false, NULL,
	NULL, 0, T_SPOT, QUE_REFIT_FLAVORS,
	"no longer offers flavor spot for cpu"},
    {"ClusterQueue stopped", "q-solo", "solo", {6000}, {6000}, 1, 1, false,
	NULL, NULL, 0, T_STOPPED, QUE_REFIT_QUEUE, "inactive (Stopped)"},
    {"ClusterQueue deleted", "q-solo", "solo", {6000}, {6000}, 1, 1, false,
	NULL, NULL, 0, T_CQ_DELETED, QUE_REFIT_QUEUE,
	"ClusterQueue solo no longer exists"},
    {"routed elsewhere", "q-solo", "solo", {6000}, {6000}, 1, 1, false, NULL,
	NULL, 0, T_REROUTED, QUE_REFIT_QUEUE,
	"no longer routes to ClusterQueue solo"},
};

static void run_row(const struct row *r)
{
	size_t n = r->now_cpu[1] ? 2 : 1;
	uint32_t frs[2];
	int64_t usage[2] = {r->rec_cpu[0], r->rec_cpu[1]};
	struct que_recorded rec = {"w", r->cq, r->rec_gen, frs, usage, n};
	struct que_observed now = {r->now_gen, !r->inactive};
	enum que_refit got = QUE_REFIT_FITS;
	char why[256] = "x";
	cu_error err;

	flavor("default");
	flavor("spot");
	cq("solo", NULL, 10000, false, 0,
	    r->tweak == T_STOPPED ? QUE_STOP_HOLD : QUE_STOP_NONE);
	cq("a", "co", 4000, true, 2000, QUE_STOP_NONE);
	cq("b", "co", 6000, false, 0, QUE_STOP_NONE);
	lq("q-solo", r->tweak == T_REROUTED ? "b" : "solo");
	lq("q-a", "a");
	lq("q-b", "b");
	if (r->other_cpu > 0)
		adopt("other", r->other_queue, r->other_cq, r->other_cpu);
	wl("w", r->queue, r->now_cpu, n);
	/* spot's fr exists once some node names it; the test interns it
	 * through a ClusterQueue that nobody routes to. */
	if (r->tweak == T_SPOT) {
		struct que_resource_quota rq = {
		    "cpu", 1000, false, 0, false, 0};
		struct que_flavor_quotas fq = {"spot", &rq, 1};
		struct que_resource_group g = {cpu, 1, &fq, 1};
		struct que_cq_spec s = {
		    .name = "spotty", .groups = &g, .n_groups = 1};

		cr_assert_eq(que_cq_set(st, &s, NULL), CU_OK);
		cr_assert_eq(que_rebuild(st, NULL), CU_OK);
	}
	frs[0] = frs[1] = fr_of(r->tweak == T_SPOT ? "spot" : "default");
	if (r->tweak == T_DELETED)
		cr_assert_eq(que_workload_remove(st, "w", NULL), CU_OK);
	if (r->tweak == T_ADOPTED)
		cr_assert_eq(
		    que_workload_adopt(st, "w", r->cq, frs, 1, NULL), CU_OK);
	if (r->tweak == T_CQ_DELETED)
		cr_assert_eq(que_cq_delete(st, "solo", NULL), CU_OK);
	cr_assert_eq(que_workload_fits_recorded(
			 st, &rec, &now, &got, why, sizeof(why), &err),
	    CU_OK, "%s: %s", r->name, err.msg);
	cr_assert_eq(got, r->want, "%s: got %s (%s), want %s", r->name,
	    que_refit_name(got), why, que_refit_name(r->want));
	if (r->want == QUE_REFIT_FITS)
		cr_assert_str_eq(why, "", "%s: %s", r->name, why);
	else
		cr_assert(strstr(why, r->why) != NULL, "%s: reason \"%s\"",
		    r->name, why);
	/* Pure: the check itself holds nothing. */
	cr_assert_eq(que_workload_get(st, "w") == NULL, r->tweak == T_DELETED);
	if (r->tweak != T_DELETED && r->tweak != T_ADOPTED)
		cr_assert_neq(que_workload_get(st, "w")->where, QUE_WL_ADMITTED,
		    "%s", r->name);
	cr_assert_eq(
	    que_check_invariants(st, &err), CU_OK, "%s: %s", r->name, err.msg);
}

/* Every row on a state of its own. */
Test(queues_refit, table)
{
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		que_state_free(st);
		cr_assert_eq(que_state_new(&st, NULL), CU_OK);
		run_row(&rows[i]);
	}
}

/* What fits is adopted before the next recorded decision is asked about:
 * two decisions of 6 cpu each, recorded against a 10-cpu ClusterQueue,
 * cannot both be adopted. */
Test(queues_refit, decisions_adopted_in_turn_see_each_other)
{
	int64_t six = 6000;
	uint32_t frs[1];
	int64_t usage[1] = {6000};
	struct que_recorded r1 = {"w1", "solo", 1, frs, usage, 1};
	struct que_recorded r2 = {"w2", "solo", 1, frs, usage, 1};
	struct que_observed now = {1, true};
	enum que_refit got;
	cu_error err;

	flavor("default");
	cq("solo", NULL, 10000, false, 0, QUE_STOP_NONE);
	lq("q-solo", "solo");
	wl("w1", "q-solo", &six, 1);
	wl("w2", "q-solo", &six, 1);
	frs[0] = fr_of("default");
	cr_assert_eq(
	    que_workload_fits_recorded(st, &r1, &now, &got, NULL, 0, &err),
	    CU_OK);
	cr_assert_eq(got, QUE_REFIT_FITS);
	cr_assert_eq(que_workload_adopt(st, "w1", "solo", frs, 1, &err), CU_OK);
	cr_assert_eq(
	    que_workload_fits_recorded(st, &r2, &now, &got, NULL, 0, &err),
	    CU_OK);
	cr_assert_eq(got, QUE_REFIT_QUOTA);
	cr_assert_eq(que_check_invariants(st, &err), CU_OK, "%s", err.msg);
}

Test(queues_refit, names)
{
	cr_assert_str_eq(que_refit_name(QUE_REFIT_FITS), "fits");
	cr_assert_str_eq(que_refit_name(QUE_REFIT_QUOTA), "quota");
	cr_assert_str_eq(que_refit_name((enum que_refit)99), "unknown");
}

/* A partial admission (minCount) recorded a count between minCount and
 * count: its usage is what the podset asks for that many pods. */
Test(queues_refit, partial_admission_recorded_with_fewer_pods)
{
	static const struct {
		int64_t usage;
		enum que_refit want;
	} cases[] = {
	    {4000, QUE_REFIT_FITS},    /* the full count */
	    {3000, QUE_REFIT_FITS},    /* 3 of 4 pods */
	    {2000, QUE_REFIT_FITS},    /* minCount */
	    {1000, QUE_REFIT_CHANGED}, /* below minCount */
	    {2500, QUE_REFIT_CHANGED}, /* not a whole number of pods */
	};
	struct que_request r = {"cpu", 1000};
	struct que_podset_spec ps = {.name = "main",
	    .count = 4,
	    .has_min_count = true,
	    .min_count = 2,
	    .requests = &r,
	    .n_requests = 1};
	struct que_workload_spec w = {.uid = "w",
	    .ns = "ns",
	    .name = "w",
	    .queue_name = "q-solo",
	    .created_ns = 1,
	    .namespace_eligible = true,
	    .podsets = &ps,
	    .n_podsets = 1};
	struct que_observed now = {1, true};
	uint32_t frs[1];
	size_t i;
	cu_error err;

	flavor("default");
	cq("solo", NULL, 10000, false, 0, QUE_STOP_NONE);
	lq("q-solo", "solo");
	cr_assert_eq(que_workload_add(st, &w, &err), CU_OK, "%s", err.msg);
	frs[0] = fr_of("default");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t usage[1] = {cases[i].usage};
		struct que_recorded rec = {"w", "solo", 1, frs, usage, 1};
		enum que_refit got;
		char why[256];

		cr_assert_eq(que_workload_fits_recorded(
				 st, &rec, &now, &got, why, sizeof(why), &err),
		    CU_OK, "%s", err.msg);
		cr_assert_eq(got, cases[i].want, "usage %lld: %s (%s)",
		    (long long)cases[i].usage, que_refit_name(got), why);
	}
}
