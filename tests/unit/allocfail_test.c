/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/allocfail_test.c - allocation-failure injection (curl's
 * torture tests, SQLite's malloc tests) over the hostile-input paths:
 * decoding a Workload, a scheduling cycle, a ledger commit, a webhook
 * review and the controller configuration.
 *
 * Each scenario is first run once to count its allocations, then rerun
 * with the n-th allocation failing (cu_mem_fail_after(n, false)) for
 * n = 1, 2, ... until a run completes without reaching the injected
 * failure. A failing run must end in a clean error (CU_ENOMEM, or the
 * code the module documents for it), leave no half-done state where that
 * can be checked, and leak nothing: LeakSanitizer is asked at the end of
 * every test body (Criterion would report a leak as a pass otherwise).
 *
 * jansson allocates through cu_malloc here (json_set_alloc_funcs, as the
 * controller's main does) so JSON allocations fail too; store_open routes
 * SQLite's allocations through cu_malloc itself (store/store.h).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admission/admission.h"
#include "webhook/webhook.h"
#include "api/json.h"
#include "api/model.h"
#include "controller/config.h"
#include "queues/queues.h"
#include "store/store.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define LEAK_CHECK() __lsan_do_recoverable_leak_check()
#else
#define LEAK_CHECK() 0
#endif

static void json_via_cu(void)
{
	json_set_alloc_funcs(cu_malloc, cu_free);
}

TestSuite(allocfail, .init = json_via_cu);

/* ---- the torture driver -------------------------------------------- */

/*
 * One scenario run. Returns the scenario's result code; `hit` tells it
 * whether the injected failure was reached (so it can check the state
 * that failure left). ctx [borrowed].
 */
typedef int (*scenario_fn)(void *ctx, cu_error *err);
typedef void (*check_fn)(void *ctx, int rc, bool hit);

struct torture_stats {
	uint64_t baseline;  /* allocations of an undisturbed run */
	uint64_t runs;	    /* runs with a failure injected (both walks) */
	uint64_t enomem;    /* of which ended in CU_ENOMEM */
	uint64_t tolerated; /* of which still succeeded (failure absorbed) */
};

/* One walk over n = 1, 2, ... with the n-th allocation failing (and,
 * when sticky, every one after it: memory stays short). */
static void torture_walk(const char *name, scenario_fn run, check_fn check,
    void *ctx, const int *ok_codes, bool sticky, struct torture_stats *ts)
{
	cu_error err = {0};
	uint64_t before, n;
	int rc;

	for (n = 1;; n++) {
		bool hit, allowed;

		cu_error_clear(&err);
		before = cu_mem_calls();
		cu_mem_fail_after(n, sticky);
		rc = run(ctx, &err);
		cu_mem_fail_after(0, false);
		hit = cu_mem_calls() - before >= n;
		if (!hit) {
			cr_assert_eq(rc, CU_OK,
			    "%s: n=%llu not reached: %s: %s", name,
			    (unsigned long long)n, cu_err_name(rc), err.msg);
			if (check)
				check(ctx, rc, false);
			break;
		}
		ts->runs++;
		allowed = rc == CU_OK || rc == CU_ENOMEM;
		for (const int *c = ok_codes; !allowed && c && *c; c++)
			allowed = rc == *c;
		cr_assert(allowed, "%s: allocation %llu%s failed: %s: %s", name,
		    (unsigned long long)n, sticky ? " (sticky)" : "",
		    cu_err_name(rc), err.msg);
		if (rc != CU_OK)
			cr_assert_neq(err.msg[0], '\0',
			    "%s: allocation %llu: %s without a message", name,
			    (unsigned long long)n, cu_err_name(rc));
		ts->enomem += rc == CU_ENOMEM;
		ts->tolerated += rc == CU_OK;
		if (check)
			check(ctx, rc, true);
		cr_assert(n < 1000000, "%s: runaway", name);
	}
}

/* Run `run` undisturbed, then with every allocation 1..n failing in turn
 * until a run no longer reaches the injected failure, once failing only
 * that allocation and once failing it and all after it. `ok_codes` lists
 * the error codes besides CU_ENOMEM a failing run may return (0-ended). */
static struct torture_stats torture(const char *name, scenario_fn run,
    check_fn check, void *ctx, const int *ok_codes)
{
	struct torture_stats ts = {0};
	cu_error err = {0};
	uint64_t before;
	int rc;

	before = cu_mem_calls();
	rc = run(ctx, &err);
	ts.baseline = cu_mem_calls() - before;
	cr_assert_eq(rc, CU_OK, "%s: undisturbed run: %s: %s", name,
	    cu_err_name(rc), err.msg);
	if (check)
		check(ctx, rc, false);
	for (int sticky = 0; sticky < 2; sticky++)
		torture_walk(name, run, check, ctx, ok_codes, sticky, &ts);
	cr_log_info("%s: %llu allocations, %llu failure runs, %llu CU_ENOMEM, "
		    "%llu absorbed",
	    name, (unsigned long long)ts.baseline, (unsigned long long)ts.runs,
	    (unsigned long long)ts.enomem, (unsigned long long)ts.tolerated);
	fprintf(stderr,
	    "allocfail %s: %llu allocations, %llu failure runs, %llu "
	    "CU_ENOMEM, %llu absorbed\n",
	    name, (unsigned long long)ts.baseline, (unsigned long long)ts.runs,
	    (unsigned long long)ts.enomem, (unsigned long long)ts.tolerated);
	cr_assert_gt(ts.runs, 0, "%s: nothing allocated", name);
	return ts;
}

static void no_leaks(void)
{
	cr_assert_eq(LEAK_CHECK(), 0, "LeakSanitizer found leaks (see log)");
}

/* Whole file [owned: cu_free], read without fault injection. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	cu_buf b;
	char chunk[4096];
	size_t n;

	cr_assert_not_null(f, "open %s", path);
	cu_buf_init(&b, (size_t)1 << 24);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		cr_assert_eq(cu_buf_add(&b, chunk, n), CU_OK);
	fclose(f);
	return cu_buf_detach(&b, len);
}

/* ---- 1. decode (and re-encode) a Workload --------------------------- */

struct wl_ctx {
	const char *doc;
	size_t len;
	char *golden; /* encoding of the undisturbed run [owned] */
};

static int wl_run(void *p, cu_error *err)
{
	struct wl_ctx *c = p;
	struct api_workload w;
	json_error_t jerr;
	json_t *j, *enc = NULL;
	char *out;
	int rc;

	rc = api_json_loadb(&j, c->doc, c->len, JSON_REJECT_DUPLICATES, &jerr);
	if (rc != CU_OK)
		return cu_error_set(err, rc, "workload.json: %s",
		    rc == CU_ENOMEM ? "out of memory" : jerr.text);
	rc = api_workload_decode(&w, j, err);
	json_decref(j);
	if (rc != CU_OK) {
		/* "left empty on failure": disposing again is harmless */
		api_workload_dispose(&w);
		return rc;
	}
	cr_assert_str_eq(w.meta.name, "job-sample-job-6d3c1");
	rc = api_workload_encode(&enc, &w, err);
	api_workload_dispose(&w);
	if (rc != CU_OK) {
		cr_assert_null(enc);
		return rc;
	}
	/* json_dumps itself may drop an object key when an allocation
	 * fails (jansson 2.14): the checked dumper of api/json.h. */
	rc = api_json_dumps(enc, JSON_SORT_KEYS | JSON_COMPACT, 0, &out, NULL);
	json_decref(enc);
	if (rc != CU_OK)
		return cu_error_set(
		    err, rc, "api_json_dumps: %s", cu_err_name(rc));
	if (c->golden == NULL)
		c->golden = out;
	else {
		cr_assert_str_eq(
		    out, c->golden, "re-encoding differs:\n%s", out);
		cu_free(out);
	}
	return CU_OK;
}

Test(allocfail, workload_decode_encode)
{
	struct wl_ctx c = {0};

	c.doc = slurp("tests/data/golden/workload.json", &c.len);
	(void)torture("workload_decode", wl_run, NULL, &c, NULL);
	cu_free((char *)c.doc);
	cu_free(c.golden);
	no_leaks();
}

/* Every typed decoder on its golden document. */
#define DECODE_RUN(K, file)                                                    \
	static int K##_run(void *p, cu_error *err)                             \
	{                                                                      \
		struct wl_ctx *c = p;                                          \
		struct api_##K x;                                              \
		json_error_t jerr;                                             \
		json_t *j, *enc = NULL;                                        \
		int rc;                                                        \
                                                                               \
		rc = api_json_loadb(&j, c->doc, c->len, 0, &jerr);             \
		if (rc != CU_OK)                                               \
			return cu_error_set(err, rc, "%s: %s", file,           \
			    rc == CU_ENOMEM ? "out of memory" : jerr.text);    \
		rc = api_##K##_decode(&x, j, err);                             \
		json_decref(j);                                                \
		if (rc != CU_OK)                                               \
			return rc;                                             \
		rc = api_##K##_encode(&enc, &x, err);                          \
		api_##K##_dispose(&x);                                         \
		json_decref(enc);                                              \
		return rc;                                                     \
	}

DECODE_RUN(cluster_queue, "clusterqueue.json")
DECODE_RUN(local_queue, "localqueue.json")
DECODE_RUN(resource_flavor, "resourceflavor.json")
DECODE_RUN(job, "job.json")
DECODE_RUN(jobset, "jobset.json")
DECODE_RUN(event, "event.json")

Test(allocfail, other_decoders)
{
	static const struct {
		const char *file;
		scenario_fn run;
	} kinds[] = {
	    {"tests/data/golden/clusterqueue.json", cluster_queue_run},
	    {"tests/data/golden/localqueue.json", local_queue_run},
	    {"tests/data/golden/resourceflavor.json", resource_flavor_run},
	    {"tests/data/golden/job.json", job_run},
	    {"tests/data/golden/jobset.json", jobset_run},
	    {"tests/data/golden/event.json", event_run},
	};

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		struct wl_ctx c = {0};

		c.doc = slurp(kinds[i].file, &c.len);
		(void)torture(kinds[i].file, kinds[i].run, NULL, &c, NULL);
		cu_free((char *)c.doc);
	}
	no_leaks();
}

/* ---- 2. a scheduling cycle ------------------------------------------ */

#define CPU(x) ((int64_t)(x)*1000)

struct cyc_ctx {
	que_state *st;
	struct adm_result res;
	size_t golden_admitted; /* admissions of the undisturbed cycle */
};

static int cyc_cq(que_state *st, const char *name, const char *cohort,
    int64_t nominal, cu_error *err)
{
	static const char *const covered[] = {"cpu"};
	struct que_resource_quota rq[2] = {
	    {"cpu", nominal, false, 0, false, 0},
	    {"cpu", nominal / 2, false, 0, false, 0},
	};
	struct que_flavor_quotas fqs[2] = {
	    {"on-demand", &rq[0], 1},
	    {"spot", &rq[1], 1},
	};
	struct que_resource_group g = {covered, 1, fqs, 2};
	struct que_cq_spec s = {0};
	struct que_lq_spec lq = {"team", name, name, QUE_STOP_NONE};
	int rc;

	s.name = name;
	s.cohort = cohort;
	s.groups = &g;
	s.n_groups = 1;
	s.preemption.within_cluster_queue = QUE_PREEMPT_LOWER_PRIORITY;
	s.preemption.reclaim_within_cohort = QUE_PREEMPT_ANY;
	rc = que_cq_set(st, &s, err);
	if (rc == CU_OK)
		rc = que_lq_set(st, &lq, err);
	return rc;
}

static int cyc_wl(que_state *st, const char *uid, const char *queue,
    int32_t prio, int64_t milli, int64_t created, cu_error *err)
{
	struct que_request r = {"cpu", milli};
	struct que_podset_spec ps = {0};
	struct que_workload_spec w = {0};

	ps.name = "main";
	ps.count = 2;
	/* "part" may shrink to one pod: partial admission (the reducer's
	 * search) runs under injection too. */
	ps.has_min_count = strcmp(uid, "part") == 0;
	ps.min_count = 1;
	ps.requests = &r;
	ps.n_requests = 1;
	w.uid = uid;
	w.ns = "team";
	w.name = uid;
	w.queue_name = queue;
	w.priority = prio;
	w.created_ns = created;
	w.namespace_eligible = true;
	w.podsets = &ps;
	w.n_podsets = 1;
	return que_workload_add(st, &w, err);
}

/* CQs a and b share cohort "co" (borrowing), c is alone and holds an
 * admitted low-priority workload, so that a pending high-priority one
 * plans a preemption; a2 exceeds every quota, "lost" has no LocalQueue;
 * "part" (2 pods of 2 cpu, minCount 1) gets 1 pod of d's 3 cpu. */
static int cyc_build(que_state *st, cu_error *err)
{
	struct que_flavor_spec od = {.name = "on-demand"};
	struct que_flavor_spec spot = {.name = "spot"};
	struct adm_result r;
	int rc;

	if ((rc = que_flavor_set(st, &od, err)) != CU_OK ||
	    (rc = que_flavor_set(st, &spot, err)) != CU_OK ||
	    (rc = cyc_cq(st, "a", "co", CPU(4), err)) != CU_OK ||
	    (rc = cyc_cq(st, "b", "co", CPU(4), err)) != CU_OK ||
	    (rc = cyc_cq(st, "c", NULL, CPU(2), err)) != CU_OK ||
	    (rc = cyc_cq(st, "d", NULL, CPU(3), err)) != CU_OK ||
	    (rc = cyc_wl(st, "low", "c", 0, CPU(1), 1, err)) != CU_OK)
		return rc;
	adm_result_init(&r);
	rc = adm_cycle(st, 10, &r, err);
	if (rc == CU_OK && r.admitted != 1)
		rc = cu_error_set(err, CU_EIO, "set-up: low not admitted");
	adm_result_dispose(&r);
	if (rc != CU_OK)
		return rc;
	if ((rc = cyc_wl(st, "high", "c", 100, CPU(1), 2, err)) != CU_OK ||
	    (rc = cyc_wl(st, "a1", "a", 0, CPU(1), 3, err)) != CU_OK ||
	    (rc = cyc_wl(st, "b1", "b", 0, CPU(3), 4, err)) != CU_OK ||
	    (rc = cyc_wl(st, "b2", "b", 0, CPU(2), 5, err)) != CU_OK ||
	    (rc = cyc_wl(st, "a2", "a", 0, CPU(9), 6, err)) != CU_OK ||
	    (rc = cyc_wl(st, "lost", "nowhere", 0, CPU(1), 7, err)) != CU_OK ||
	    (rc = cyc_wl(st, "part", "d", 0, CPU(2), 8, err)) != CU_OK)
		return rc;
	return CU_OK;
}

/* Set-up and cycle both run under injection: a failing que_*_set or
 * que_workload_add must be as clean as a failing cycle. */
static int cyc_run(void *p, cu_error *err)
{
	struct cyc_ctx *c = p;
	int rc;

	adm_result_dispose(&c->res);
	adm_result_init(&c->res);
	que_state_free(c->st);
	c->st = NULL;
	rc = que_state_new(&c->st, err);
	if (rc != CU_OK)
		return rc;
	rc = cyc_build(c->st, err);
	if (rc != CU_OK)
		return rc;
	return adm_cycle(c->st, 100, &c->res, err);
}

static const struct adm_decision *cyc_find(
    const struct adm_result *r, const char *uid)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->v[i].uid, uid) == 0)
			return &r->v[i];
	return NULL;
}

/* After every run: the queue state holds (invariant 1 of admission.h),
 * and when the failure hit the cycle, an undisturbed cycle on the same
 * state reaches the same decisions the undisturbed run did. */
static void cyc_check(void *p, int rc, bool hit)
{
	struct cyc_ctx *c = p;
	struct adm_result again;
	cu_error err;
	const struct adm_decision *d;

	if (c->st == NULL)
		return; /* que_state_new failed: nothing was built */
	cr_assert_eq(que_check_invariants(c->st, &err), CU_OK,
	    "after rc=%s: %s", cu_err_name(rc), err.msg);
	if (rc == CU_OK && !hit) {
		if (c->golden_admitted == 0)
			c->golden_admitted = c->res.admitted;
		cr_assert_eq(c->res.admitted, c->golden_admitted);
		cr_assert_geq(c->res.admitted, 2);
		d = cyc_find(&c->res, "high");
		cr_assert(d != NULL && d->kind == ADM_PREEMPT);
		cr_assert_eq(d->n_victims, 1);
		cr_assert_str_eq(d->victims[0].uid, "low");
		d = cyc_find(&c->res, "part");
		cr_assert(d != NULL && d->kind == ADM_ADMIT);
		cr_assert_eq(d->podsets[0].count, 1, "partially admitted");
		return;
	}
	if (rc == CU_OK)
		return;
	/* The cycle (or its set-up) failed: decisions appended so far stand
	 * and were applied; the rest must be reachable by running again.
	 * Only a state whose set-up completed is comparable. */
	if (que_workload_get(c->st, "part") == NULL)
		return;
	adm_result_init(&again);
	cr_assert_eq(adm_cycle(c->st, 200, &again, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(que_check_invariants(c->st, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(c->res.admitted + again.admitted, 3, "admitted %zu + %zu",
	    c->res.admitted, again.admitted);
	adm_result_dispose(&again);
}

Test(allocfail, scheduling_cycle)
{
	struct cyc_ctx c = {0};

	adm_result_init(&c.res);
	(void)torture("scheduling_cycle", cyc_run, cyc_check, &c, NULL);
	adm_result_dispose(&c.res);
	que_state_free(c.st);
	no_leaks();
}

/* ---- 3. commit a decision to the ledger ----------------------------- */

struct led_ctx {
	char dir[256];
	char path[300];
	unsigned seq; /* uid counter: one fresh decision per run */
	char uid[32];
	bool open_under_injection;
	store *s; /* kept open when !open_under_injection */
};

static const store_resource led_res[] = {
    {.resource = "cpu", .flavor = "on-demand", .milli = 4000},
    {.resource = "memory", .flavor = "on-demand", .milli = 8589934592000},
};
static const store_podset led_ps[] = {
    {.name = "main", .count = 2, .n_resources = 2, .resources = led_res},
};

static int led_turn(store *s, const char *uid, cu_error *err)
{
	store_decision d = {0};
	int rc;

	d.uid = uid;
	d.ns = "team";
	d.name = uid;
	d.cluster_queue = "a";
	d.state = STORE_RESERVED;
	d.decided_ns = 1000;
	d.n_podsets = 1;
	d.podsets = led_ps;
	if ((rc = store_begin(s, err)) != CU_OK)
		return rc;
	if ((rc = store_decision_put(s, &d, NULL, err)) != CU_OK ||
	    (rc = store_decision_set_state(
		 s, uid, STORE_ADMITTED, 2000, err)) != CU_OK ||
	    (rc = store_commit(s, err)) != CU_OK) {
		store_rollback(s);
		return rc;
	}
	return CU_OK;
}

static int led_run(void *p, cu_error *err)
{
	struct led_ctx *c = p;
	store *s = NULL;
	int rc;

	snprintf(c->uid, sizeof(c->uid), "wl-%u", c->seq++);
	if (!c->open_under_injection)
		return led_turn(c->s, c->uid, err);
	rc = store_open(&s, c->path, err);
	if (rc != CU_OK) {
		cr_assert_null(s);
		return rc;
	}
	rc = led_turn(s, c->uid, err);
	store_close(s);
	return rc;
}

/* The decision is in the ledger exactly when the run succeeded, and the
 * derived usage agrees with the decisions. */
static void led_check(void *p, int rc, bool hit)
{
	struct led_ctx *c = p;
	store *s = c->s;
	store_decision *d = NULL;
	cu_error err;
	int grc;

	(void)hit;
	if (s == NULL)
		cr_assert_eq(
		    store_open(&s, c->path, &err), CU_OK, "%s", err.msg);
	grc = store_decision_get(s, c->uid, &d, &err);
	if (rc == CU_OK) {
		cr_assert_eq(
		    grc, CU_OK, "%s committed but: %s", c->uid, err.msg);
		cr_assert_eq(d->state, STORE_ADMITTED);
		cr_assert_eq(d->podsets[0].n_resources, 2);
	} else {
		cr_assert_eq(grc, CU_ENOTFOUND,
		    "%s failed (%s) but left a decision (%s)", c->uid,
		    cu_err_name(rc), cu_err_name(grc));
	}
	store_decision_free(d);
	cr_assert_eq(store_check_consistency(s, &err), CU_OK, "%s", err.msg);
	if (s != c->s)
		store_close(s);
}

static void led_setup(struct led_ctx *c)
{
	const char *base = getenv("TMPDIR");
	store *s = NULL;
	cu_error err;

	snprintf(c->dir, sizeof(c->dir), "%s/cueue-allocfail-XXXXXX",
	    base != NULL && base[0] != '\0' ? base : "/tmp");
	cr_assert_not_null(mkdtemp(c->dir));
	snprintf(c->path, sizeof(c->path), "%s/ledger.db", c->dir);
	cr_assert_eq(store_open(&s, c->path, &err), CU_OK, "%s", err.msg);
	store_close(s);
}

static void led_teardown(struct led_ctx *c)
{
	DIR *d = opendir(c->dir);
	struct dirent *e;
	char p[600];

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", c->dir, e->d_name);
		unlink(p);
	}
	closedir(d);
	rmdir(c->dir);
}

/* The loop turn on an open ledger: BEGIN, put, set_state, COMMIT. */
Test(allocfail, ledger_commit)
{
	struct led_ctx c = {0};
	cu_error err;

	led_setup(&c);
	cr_assert_eq(store_open(&c.s, c.path, &err), CU_OK, "%s", err.msg);
	(void)torture("ledger_commit", led_run, led_check, &c, NULL);
	store_close(c.s);
	led_teardown(&c);
	no_leaks();
}

/* Opening (and migrating a new file is covered by store_ledger_test),
 * then the same turn: every allocation SQLite makes to open, prepare
 * and commit. */
Test(allocfail, ledger_open_and_commit)
{
	struct led_ctx c = {0};

	led_setup(&c);
	c.open_under_injection = true;
	(void)torture("ledger_open_commit", led_run, led_check, &c, NULL);
	led_teardown(&c);
	no_leaks();
}

/* ---- 4. serve a webhook review -------------------------------------- */

static const char *const TEAM_LABELS[] = {"managed", "true", NULL};

static const char *wh_label(const char *key, void *payload)
{
	const char *const *kv = payload;

	for (size_t i = 0; kv[i] != NULL; i += 2)
		if (strcmp(kv[i], key) == 0)
			return kv[i + 1];
	return NULL;
}

static int wh_ns_get(const char *name, struct ns_gate_namespace *out,
    void *payload, cu_error *err)
{
	(void)payload;
	(void)err;
	out->name = name;
	out->found = strcmp(name, "team-a") == 0;
	out->get = wh_label;
	out->payload = (void *)(uintptr_t)TEAM_LABELS;
	return CU_OK;
}

static int wh_lq_exists(const char *ns, const char *name, bool *exists,
    void *payload, cu_error *err)
{
	(void)payload;
	(void)err;
	*exists = strcmp(ns, "team-a") == 0 && strcmp(name, "default") == 0;
	return CU_OK;
}

struct wh_ctx {
	struct wh_options opt;
	enum wh_mode mode;
	const char *body;
	char *golden; /* compact, sorted response of the undisturbed run */
	int golden_status;
};

static int wh_run(void *p, cu_error *err)
{
	struct wh_ctx *c = p;
	int status = 0;
	char *out = NULL;
	size_t len = 0;
	json_t *doc;
	const json_t *code;
	char *norm;
	int rc;

	rc = wh_serve(&c->opt, c->mode, c->body, strlen(c->body), &status, &out,
	    &len, err);
	if (rc != CU_OK) {
		cr_assert_eq(rc, CU_ENOMEM, "serve: %s", cu_err_name(rc));
		cr_assert_null(out);
		return rc;
	}
	cr_assert_not_null(out);
	cr_assert_eq(strlen(out), len);
	/* Read the answer as the API server would, outside the injection:
	 * jansson on the C allocator for the parse and the normal form. */
	{
		json_error_t jerr;

		json_set_alloc_funcs(malloc, free);
		doc = json_loadb(out, len, 0, &jerr);
		norm = json_dumps(doc, JSON_SORT_KEYS | JSON_COMPACT);
		json_set_alloc_funcs(cu_malloc, cu_free);
		cr_assert_not_null(
		    doc, "answer is not JSON: %s: %s", jerr.text, out);
		cr_assert_not_null(norm);
	}
	code = json_object_get(
	    json_object_get(json_object_get(doc, "response"), "status"),
	    "code");
	if (c->golden != NULL && json_integer_value(code) == 500) {
		/* An errored review: never allowed, never a 4xx denial made
		 * up from an allocation failure. */
		cr_assert(json_is_false(json_object_get(
			      json_object_get(doc, "response"), "allowed")),
		    "500 but allowed: %s", out);
		cr_assert(status == 200 || status == 500, "status %d", status);
		json_decref(doc);
		cu_free(out);
		cu_free(norm);
		return cu_error_set(err, CU_ENOMEM, "review errored (500)");
	}
	json_decref(doc);
	cu_free(out);
	if (c->golden == NULL) {
		c->golden = norm;
		c->golden_status = status;
		return CU_OK;
	}
	/* Anything but a 500 must be exactly the undisturbed answer: an
	 * allocation failure may never turn into "allowed without the
	 * suspend patch" or into a different denial. */
	cr_assert_str_eq(
	    norm, c->golden, "answer differs under failure:\n%s", norm);
	cr_assert_eq(status, c->golden_status);
	cu_free(norm);
	return CU_OK;
}

static void wh_torture(
    const char *name, enum wh_mode mode, const char *body, const char *expect)
{
	api_selector sel;
	struct ns_gate_config cfg = {0};
	struct wh_ctx c = {0};
	cu_error err;

	cr_assert_eq(ns_selector_parse(&sel, "managed=true", &err), CU_OK);
	cfg.job_enabled = true;
	cfg.jobset_enabled = true;
	cfg.ns_selector = &sel;
	cfg.own_namespace = "cueue-system";
	c.opt.gate = &cfg;
	c.opt.namespace_get = wh_ns_get;
	c.opt.local_queue_exists = wh_lq_exists;
	c.opt.own_username = "system:serviceaccount:cueue-system:cueue";
	c.mode = mode;
	c.body = body;
	(void)torture(name, wh_run, NULL, &c, NULL);
	cr_assert_not_null(strstr(c.golden, expect), "%s: %s", name, c.golden);
	cu_free(c.golden);
	api_selector_dispose(&sel);
}

#define REVIEW(gvk_group, version, kind, op, obj)                              \
	"{\"apiVersion\":\"admission.k8s.io/"                                  \
	"v1\",\"kind\":\"AdmissionReview\","                                   \
	"\"request\":{\"uid\":\"u-1\",\"kind\":{\"group\":\"" gvk_group        \
	"\",\"version\":\"" version "\",\"kind\":\"" kind "\"},"               \
	"\"resource\":{\"group\":\"" gvk_group "\",\"version\":\"" version     \
	"\",\"resource\":\"things\"},\"namespace\":\"team-a\","                \
	"\"operation\":\"" op "\",\"userInfo\":{\"username\":\"alice\"},"      \
	"\"object\":" obj "}}"

/* A managed Job without a queue name in a namespace with a LocalQueue
 * "default": suspended and labelled by a JSON patch. */
Test(allocfail, webhook_mutate_job)
{
	wh_torture("webhook_mutate_job", WH_MUTATE,
	    REVIEW("batch", "v1", "Job", "CREATE",
		"{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":"
		"{\"name\":\"j\",\"namespace\":\"team-a\"},\"spec\":"
		"{\"parallelism\":2,\"template\":{\"spec\":{\"containers\":"
		"[{\"name\":\"c\",\"image\":\"busybox\",\"resources\":"
		"{\"requests\":{\"cpu\":\"1\"}}}],\"restartPolicy\":"
		"\"Never\"}}}}"),
	    "\"patch\":");
	no_leaks();
}

/* A ClusterQueue with two resource groups: validated through the typed
 * decoder, allowed. */
Test(allocfail, webhook_validate_clusterqueue)
{
	wh_torture("webhook_validate_cq", WH_VALIDATE,
	    REVIEW("kueue.x-k8s.io", "v1beta2", "ClusterQueue", "CREATE",
		"{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"
		"\"ClusterQueue\",\"metadata\":{\"name\":\"cq\"},\"spec\":"
		"{\"cohortName\":\"co\",\"resourceGroups\":[{"
		"\"coveredResources\":[\"cpu\",\"memory\"],\"flavors\":[{"
		"\"name\":\"on-demand\",\"resources\":[{\"name\":\"cpu\","
		"\"nominalQuota\":\"10\",\"borrowingLimit\":\"2\"},{\"name\":"
		"\"memory\",\"nominalQuota\":\"64Gi\"}]}]},{"
		"\"coveredResources\":[\"nvidia.com/gpu\"],\"flavors\":[{"
		"\"name\":\"a100\",\"resources\":[{\"name\":"
		"\"nvidia.com/gpu\",\"nominalQuota\":\"8\"}]}]}],"
		"\"preemption\":{\"withinClusterQueue\":\"LowerPriority\"}}}"),
	    "\"allowed\":true");
	no_leaks();
}

/* A Workload with a duplicate podSet name: denied 403 under every
 * failure that does not error the review. */
Test(allocfail, webhook_deny_workload)
{
	wh_torture("webhook_deny_workload", WH_VALIDATE,
	    REVIEW("kueue.x-k8s.io", "v1beta2", "Workload", "CREATE",
		"{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"
		"\"Workload\",\"metadata\":{\"name\":\"w\",\"namespace\":"
		"\"team-a\"},\"spec\":{\"queueName\":\"main\",\"podSets\":["
		"{\"name\":\"main\",\"count\":1,\"template\":{\"spec\":{"
		"\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}},"
		"{\"name\":\"main\",\"count\":1,\"template\":{\"spec\":{"
		"\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}}]}}"),
	    "\"code\":403");
	no_leaks();
}

/* ---- 5. the controller configuration (YAML) ------------------------- */

struct cfg_ctx {
	const char *yaml;
};

static int cfg_run(void *p, cu_error *err)
{
	struct cfg_ctx *c = p;
	struct ctl_config cfg;
	int rc;

	rc = ctl_config_load_buffer(
	    &cfg, c->yaml, strlen(c->yaml), "config.yaml", err);
	if (rc == CU_OK) {
		cr_assert(cfg.integrations.job);
		cr_assert_eq(cfg.integrations.nframeworks, 2);
	}
	/* "left disposed (safe to dispose again)" */
	ctl_config_dispose(&cfg);
	return rc;
}

Test(allocfail, controller_config)
{
	struct cfg_ctx c = {"apiVersion: config.kueue.x-k8s.io/v1beta2\n"
			    "kind: Configuration\n"
			    "namespace: cueue-system\n"
			    "manageJobsWithoutQueueName: true\n"
			    "managedJobsNamespaceSelector:\n"
			    "  matchExpressions:\n"
			    "  - key: kubernetes.io/metadata.name\n"
			    "    operator: NotIn\n"
			    "    values: [kube-system, cueue-system]\n"
			    "internalCertManagement:\n"
			    "  enable: false\n"
			    "clientConnection:\n"
			    "  qps: 50\n"
			    "  burst: 100\n"
			    "integrations:\n"
			    "  frameworks:\n"
			    "  - batch/job\n"
			    "  - jobset.x-k8s.io/jobset\n"
			    "  labelKeysToCopy: [team, project]\n"};

	(void)torture("controller_config", cfg_run, NULL, &c, NULL);
	no_leaks();
}
