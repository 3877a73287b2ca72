/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/controller_pipeline_test.c - controller/pipeline without a
 * server: ctl_pipe_queue returns the entry it queued (and the setters
 * fill it), expectations make an object stale while its write is in
 * flight (not for admissions), the status-report budgets (burst, refill,
 * independence, the writes each may have outstanding), and the turn's
 * ledger transaction committed by a flush that sends nothing.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "controller/pipeline.h"

static const struct api_resource WL = {
    "kueue.x-k8s.io", "v1beta2", "workloads", true};

static void no_settle(const struct ctl_pipe_write *w,
    enum ctl_pipe_outcome outcome, const struct api_response *resp,
    void *payload)
{
	(void)w;
	(void)outcome;
	(void)resp;
	(void)payload;
	cr_assert_fail("nothing was sent");
}

static void no_mark(const char *const *key, void *payload)
{
	(void)key;
	(void)payload;
}

static api_informer *no_informer(const char *const *key, void *payload)
{
	(void)key;
	(void)payload;
	return NULL;
}

static void no_drained(void *payload)
{
	(void)payload;
}

static store *ledger;

/* A pipeline on a new in-memory ledger, with these two hooks. */
static ctl_pipe *new_pipe_hooked(double qps,
    void (*settle)(const struct ctl_pipe_write *, enum ctl_pipe_outcome,
	const struct api_response *, void *),
    void (*mark)(const char *const *, void *))
{
	struct ctl_pipe_opts o;
	ctl_pipe *p = NULL;
	cu_error err;

	cr_assert_eq(
	    store_open(&ledger, ":memory:", &err), CU_OK, "%s", err.msg);
	memset(&o, 0, sizeof(o));
	o.ledger = ledger;
	o.qps = qps;
	o.hooks.settle = settle;
	o.hooks.mark = mark;
	o.hooks.informer = no_informer;
	o.hooks.drained = no_drained;
	cr_assert_eq(ctl_pipe_new(&p, &o, &err), CU_OK, "%s", err.msg);
	return p;
}

static ctl_pipe *new_pipe(double qps)
{
	return new_pipe_hooked(qps, no_settle, no_mark);
}

static void free_pipe(ctl_pipe *p)
{
	ctl_pipe_free(p);
	store_close(ledger);
	ledger = NULL;
}

Test(pipeline, queue_returns_the_entry)
{
	ctl_pipe *p = new_pipe(50);
	struct ctl_pipe_write *w = ctl_pipe_queue(p, CTL_PIPE_ADMIT, &WL,
	    "team", "wl-1", "uid-1", json_pack("{s:{}}", "status"));

	cr_assert_not_null(w);
	cr_assert_eq(w->kind, CTL_PIPE_ADMIT);
	cr_assert_eq(w->res, &WL);
	cr_assert_str_eq(w->ns, "team");
	cr_assert_str_eq(w->name, "wl-1");
	cr_assert_str_eq(w->uid, "uid-1");
	cr_assert_not_null(w->patch);
	ctl_pipe_set_event(w, NULL, cu_strdup("Quota reserved"));
	ctl_pipe_set_admission(w, 42, "cq");
	ctl_pipe_set_owner(w, CTL_K3(CTL_KIND_JOB, "team", "job"));
	cr_assert_str_eq(w->note, "Quota reserved");
	cr_assert_eq(w->created_ns, 42);
	cr_assert_str_eq(w->cq, "cq");
	cr_assert_str_eq(w->owner[0], "Job");
	cr_assert_str_eq(w->owner[1], "team");
	cr_assert_str_eq(w->owner[2], "job");
	w = ctl_pipe_queue(
	    p, CTL_PIPE_JOB_START, &WL, "team", "job", NULL, json_object());
	cr_assert_not_null(w);
	cr_assert_eq(w->kind, CTL_PIPE_JOB_START);
	cr_assert_null(w->uid);
	cr_assert_eq(ctl_pipe_queued(p), 2);
	free_pipe(p);
}

#define X CTL_K3(CTL_KIND_WL, "team", "x")
#define Y CTL_K3(CTL_KIND_WL, "team", "y")

Test(pipeline, expected_writes_make_the_object_stale)
{
	ctl_pipe *p = new_pipe(50);
	json_t *obj = json_pack(
	    "{s:{s:s, s:s}}", "metadata", "name", "x", "resourceVersion", "7");
	struct ctl_pipe_write *w = ctl_pipe_queue(
	    p, CTL_PIPE_WL_STATUS, &WL, "team", "x", NULL, json_object());

	cr_assert_not(ctl_pipe_stale(p, X, obj));
	cr_assert_not(ctl_pipe_awaits(p, X));
	ctl_pipe_expect(p, w, X, true);
	cr_assert_str_eq(w->expect[0], "Workload");
	cr_assert_str_eq(w->expect[1], "team");
	cr_assert_str_eq(w->expect[2], "x");
	/* The parts are compared one by one: nothing is glued. */
	cr_assert_not(ctl_pipe_awaits(p, CTL_K3("Workload", "team/x", "")));
	cr_assert_not(ctl_pipe_awaits(p, CTL_K3(CTL_KIND_JOB, "team", "x")));
	cr_assert(ctl_pipe_stale(p, X, obj), "busy while queued");
	cr_assert(ctl_pipe_awaits(p, X));
	cr_assert_not(ctl_pipe_retrying(p, X));
	/* An admission is held by its decision, not by the pipeline. */
	w = ctl_pipe_queue(
	    p, CTL_PIPE_ADMIT, &WL, "team", "y", "uid-y", json_object());
	ctl_pipe_expect(p, w, Y, false);
	cr_assert_not(ctl_pipe_stale(p, Y, obj));
	cr_assert_not(ctl_pipe_awaits(p, Y));
	json_decref(obj);
	free_pipe(p);
}

Test(pipeline, report_budgets)
{
	/* qps 50: 50 / 25 = 2 reports per second, 1 per budget. */
	ctl_pipe *p = new_pipe(50);
	int i;

	for (i = 0; i < 10; i++)
		cr_assert(
		    ctl_pipe_budget_take(p, CTL_PIPE_BUDGET_QUEUE_STATUS, 1000),
		    "burst token %d", i);
	cr_assert_not(
	    ctl_pipe_budget_take(p, CTL_PIPE_BUDGET_QUEUE_STATUS, 1000));
	/* The other budget is untouched. */
	cr_assert(ctl_pipe_budget_take(p, CTL_PIPE_BUDGET_PENDING, 1000));
	/* One second later: one token. */
	cr_assert_not(
	    ctl_pipe_budget_take(p, CTL_PIPE_BUDGET_QUEUE_STATUS, 1500));
	cr_assert(ctl_pipe_budget_take(p, CTL_PIPE_BUDGET_QUEUE_STATUS, 2000));
	cr_assert_not(
	    ctl_pipe_budget_take(p, CTL_PIPE_BUDGET_QUEUE_STATUS, 2000));
	free_pipe(p);
}

static size_t nfailed;

static void count_failed(const struct ctl_pipe_write *w,
    enum ctl_pipe_outcome outcome, const struct api_response *resp,
    void *payload)
{
	(void)w;
	(void)resp;
	(void)payload;
	cr_assert_eq(outcome, CTL_PIPE_SEND_FAILED);
	nfailed++;
}

/* Ten thousand ClusterQueues all wanting their Active condition written
 * at once (urgent: no token needed) put at most
 * CTL_PIPE_BUDGET_OUTSTANDING status writes into the one queue that
 * admissions share, never all of them (the moonshot at 10,000
 * ClusterQueues queued 30,000 writes ahead of its first admission). A
 * write answered or failed makes room again; tokens do not. */
Test(pipeline, report_writes_outstanding_are_bounded)
{
	struct ctl_pipe_opts o;
	ctl_pipe *p = NULL;
	struct ctl_pipe_write *w;
	size_t queued = 0;
	cu_error err;
	int i;

	cr_assert_eq(
	    store_open(&ledger, ":memory:", &err), CU_OK, "%s", err.msg);
	memset(&o, 0, sizeof(o));
	o.ledger = ledger;
	o.qps = 1000000;
	o.hooks.settle = count_failed;
	o.hooks.mark = no_mark;
	o.hooks.informer = no_informer;
	o.hooks.drained = no_drained;
	cr_assert_eq(ctl_pipe_new(&p, &o, &err), CU_OK, "%s", err.msg);
	nfailed = 0;
	for (i = 0; i < 10000; i++) {
		char name[32];

		if (!ctl_pipe_budget_room(p, CTL_PIPE_BUDGET_QUEUE_STATUS))
			continue;
		snprintf(name, sizeof(name), "cq-%d", i);
		w = ctl_pipe_queue(p, CTL_PIPE_QUEUE_STATUS, NULL, NULL, name,
		    NULL, json_object());
		ctl_pipe_set_budget(p, w, CTL_PIPE_BUDGET_QUEUE_STATUS);
		queued++;
	}
	cr_assert_eq(queued, CTL_PIPE_BUDGET_OUTSTANDING);
	cr_assert_eq(
	    ctl_pipe_budget_outstanding(p, CTL_PIPE_BUDGET_QUEUE_STATUS),
	    CTL_PIPE_BUDGET_OUTSTANDING);
	/* Tokens are left (a burst of 10 never taken), room is not. */
	cr_assert_not(
	    ctl_pipe_budget_take(p, CTL_PIPE_BUDGET_QUEUE_STATUS, 1000));
	/* The other budgets are not held by it. */
	cr_assert(ctl_pipe_budget_room(p, CTL_PIPE_BUDGET_PENDING));
	cr_assert(ctl_pipe_budget_take(p, CTL_PIPE_BUDGET_PENDING, 1000));
	/* An admission behind them, then the turn's flush: sending fails
	 * here (no resource), and each failure gives its room back. */
	cr_assert_not_null(ctl_pipe_queue(
	    p, CTL_PIPE_ADMIT, NULL, "team", "wl-1", "uid-1", json_object()));
	ctl_pipe_flush(p);
	cr_assert_eq(nfailed, CTL_PIPE_BUDGET_OUTSTANDING + 1);
	cr_assert_eq(
	    ctl_pipe_budget_outstanding(p, CTL_PIPE_BUDGET_QUEUE_STATUS), 0);
	cr_assert(ctl_pipe_budget_room(p, CTL_PIPE_BUDGET_QUEUE_STATUS));
	cr_assert(ctl_pipe_budget_take(p, CTL_PIPE_BUDGET_QUEUE_STATUS, 1000));
	/* A write of no budget counts against none. */
	w = ctl_pipe_queue(
	    p, CTL_PIPE_QUEUE_STATUS, NULL, NULL, "cq-x", NULL, json_object());
	cr_assert_eq(w->budget, -1);
	ctl_pipe_flush(p);
	cr_assert_eq(
	    ctl_pipe_budget_outstanding(p, CTL_PIPE_BUDGET_QUEUE_STATUS), 0);
	free_pipe(p);
}

Test(pipeline, flush_commits_the_turn)
{
	ctl_pipe *p = new_pipe(50);
	store_resource r = {"cpu", "default", 1000};
	store_podset ps = {"main", 1, 1, &r, NULL};
	store_decision sd;
	store_decision *got = NULL;
	cu_error err;

	cr_assert_eq(ctl_pipe_begin(p), CU_OK);
	cr_assert_eq(ctl_pipe_begin(p), CU_OK, "already open: no-op");
	memset(&sd, 0, sizeof(sd));
	sd.uid = "uid-1";
	sd.ns = "team";
	sd.name = "wl-1";
	sd.cluster_queue = "cq";
	sd.state = STORE_RESERVED;
	sd.n_podsets = 1;
	sd.podsets = &ps;
	cr_assert_eq(
	    store_decision_put(ledger, &sd, NULL, &err), CU_OK, "%s", err.msg);
	ctl_pipe_flush(p);
	cr_assert_str_eq(ctl_pipe_ledger_error(p), "");
	cr_assert_eq(ctl_pipe_queued(p), 0);
	/* Committed: a new transaction can be opened and rolled back
	 * without losing it. */
	cr_assert_eq(store_begin(ledger, &err), CU_OK, "%s", err.msg);
	store_rollback(ledger);
	cr_assert_eq(store_decision_get(ledger, "uid-1", &got, &err), CU_OK,
	    "%s", err.msg);
	cr_assert_str_eq(got->cluster_queue, "cq");
	store_decision_free(got);
	free_pipe(p);
}

static enum ctl_pipe_kind sent_order[4];
static size_t nsent;

static void record_send(const struct ctl_pipe_write *w,
    enum ctl_pipe_outcome outcome, const struct api_response *resp,
    void *payload)
{
	(void)resp;
	(void)payload;
	cr_assert_eq(outcome, CTL_PIPE_SEND_FAILED);
	cr_assert_lt(nsent, 4);
	sent_order[nsent++] = w->kind;
}

/* A turn's Events never go ahead of its decisions: queued first, they
 * are still sent after the admission and status writes (sending fails
 * here, without a resource, and the failures come back in send order). */
Test(pipeline, events_are_sent_after_the_turns_decisions)
{
	struct ctl_pipe_opts o;
	ctl_pipe *p = NULL;
	cu_error err;
	enum ctl_pipe_kind want[] = {CTL_PIPE_ADMIT, CTL_PIPE_WL_STATUS,
	    CTL_PIPE_EVENT_CREATE, CTL_PIPE_EVENT_PATCH};

	cr_assert_eq(
	    store_open(&ledger, ":memory:", &err), CU_OK, "%s", err.msg);
	memset(&o, 0, sizeof(o));
	o.ledger = ledger;
	o.qps = 50;
	o.hooks.settle = record_send;
	o.hooks.mark = no_mark;
	o.hooks.informer = no_informer;
	o.hooks.drained = no_drained;
	cr_assert_eq(ctl_pipe_new(&p, &o, &err), CU_OK, "%s", err.msg);
	nsent = 0;
	cr_assert_not_null(ctl_pipe_queue(p, CTL_PIPE_EVENT_CREATE, NULL,
	    "team", "wl-1.1", NULL, json_object()));
	cr_assert_not_null(ctl_pipe_queue(
	    p, CTL_PIPE_ADMIT, NULL, "team", "wl-1", "uid-1", json_object()));
	cr_assert_not_null(ctl_pipe_queue(p, CTL_PIPE_EVENT_PATCH, NULL, "team",
	    "wl-2.1", NULL, json_object()));
	cr_assert_not_null(ctl_pipe_queue(p, CTL_PIPE_WL_STATUS, NULL, "team",
	    "wl-2", "uid-2", json_object()));
	ctl_pipe_flush(p);
	cr_assert_eq(nsent, 4);
	for (size_t i = 0; i < 4; i++)
		cr_assert_eq(sent_order[i], want[i], "write %zu", i);
	cr_assert_eq(ctl_pipe_queued(p), 0);
	free_pipe(p);
}

static char marked[4][3][32];
static size_t nmarked;

static void record_mark(const char *const *key, void *payload)
{
	(void)payload;
	cr_assert_lt(nmarked, 4);
	for (size_t i = 0; i < 3; i++)
		snprintf(marked[nmarked][i], sizeof(marked[nmarked][i]), "%s",
		    key[i]);
	nmarked++;
}

static void ignore_settle(const struct ctl_pipe_write *w,
    enum ctl_pipe_outcome outcome, const struct api_response *resp,
    void *payload)
{
	(void)w;
	(void)outcome;
	(void)resp;
	(void)payload;
}

/* A job reconciler that skipped its job because a write to the job's
 * Workload was in flight (a write of another reconciler: no owner) is
 * brought back by that write's end. Else, when the Workload's watch
 * event came (and marked the job, skipped again) before the write's
 * answer, nothing looked at the job again: MultiKueue manager Jobs were
 * never started after the check-Ready and Admitted writes. Here the
 * write's send fails (no client): an end like an answer. */
Test(pipeline, a_job_skipped_for_a_write_in_flight_is_marked_at_its_end)
{
	ctl_pipe *p = new_pipe_hooked(50, ignore_settle, record_mark);
	struct ctl_pipe_write *w;

	nmarked = 0;
	w = ctl_pipe_queue(
	    p, CTL_PIPE_WL_STATUS, NULL, "team", "x", NULL, json_object());
	ctl_pipe_expect(p, w, X, true);
	ctl_pipe_await_answer(p, X, CTL_KIND_JOB, "job-x");
	/* Nothing in flight to y: nothing to wait for. */
	ctl_pipe_await_answer(p, Y, CTL_KIND_JOB, "job-y");
	cr_assert_eq(nmarked, 0);
	ctl_pipe_flush(p);
	cr_assert_not(ctl_pipe_awaits(p, X));
	cr_assert_eq(nmarked, 1, "the skipped job is looked at again");
	cr_assert_str_eq(marked[0][0], CTL_KIND_JOB);
	cr_assert_str_eq(marked[0][1], "team");
	cr_assert_str_eq(marked[0][2], "job-x");
	/* Once: the next write's end does not mark it again. */
	w = ctl_pipe_queue(
	    p, CTL_PIPE_WL_STATUS, NULL, "team", "x", NULL, json_object());
	ctl_pipe_expect(p, w, X, true);
	ctl_pipe_flush(p);
	cr_assert_eq(nmarked, 1);
	free_pipe(p);
}

/* ---- the ledger and the engine agree (checked after every turn) ------ */

static void engine_cq(que_state *st, const char *name)
{
	static const char *const cpu[] = {"cpu"};
	struct que_resource_quota rq = {"cpu", 4000, false, 0, false, 0};
	struct que_flavor_quotas fq = {"default", &rq, 1};
	struct que_resource_group g = {cpu, 1, &fq, 1};
	struct que_cq_spec s = {.name = name, .groups = &g, .n_groups = 1};
	struct que_lq_spec lq = {"team", name, name, QUE_STOP_NONE};
	cu_error err;

	cr_assert_eq(que_cq_set(st, &s, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(que_lq_set(st, &lq, &err), CU_OK, "%s", err.msg);
}

static void engine_wl(que_state *st, const char *uid, const char *queue)
{
	struct que_request r = {"cpu", 1000};
	struct que_podset_spec ps = {
	    .name = "main", .count = 1, .requests = &r, .n_requests = 1};
	struct que_workload_spec w = {.uid = uid,
	    .ns = "team",
	    .name = uid,
	    .queue_name = queue,
	    .namespace_eligible = true,
	    .podsets = &ps,
	    .n_podsets = 1};
	cu_error err;

	cr_assert_eq(que_workload_add(st, &w, &err), CU_OK, "%s", err.msg);
}

static void ledger_put(const char *uid, const char *cq)
{
	store_resource r = {"cpu", "default", 1000};
	store_podset ps = {"main", 1, 1, &r, NULL};
	store_decision sd;
	cu_error err;

	memset(&sd, 0, sizeof(sd));
	sd.uid = uid;
	sd.ns = "team";
	sd.name = uid;
	sd.cluster_queue = cq;
	sd.state = STORE_RESERVED;
	sd.n_podsets = 1;
	sd.podsets = &ps;
	cr_assert_eq(
	    store_decision_put(ledger, &sd, NULL, &err), CU_OK, "%s", err.msg);
}

static void engine_admit(que_state *st, const char *uid)
{
	const struct que_flavor *f = que_flavor_get(st, "default");
	struct que_wl **heads;
	uint32_t fr;
	size_t i, n;
	cu_error err;

	cr_assert_not_null(f);
	fr = que_fr_find(st, f->id, 0);
	cr_assert_eq(
	    que_pop_heads(st, 0, &heads, &n, &err), CU_OK, "%s", err.msg);
	for (i = 0; i < n; i++)
		if (strcmp(heads[i]->uid, uid) == 0)
			que_admit(st, heads[i], &fr, 0);
		else
			que_requeue(
			    st, heads[i], QUE_RQ_FAILED_AFTER_NOMINATION);
}

Test(pipeline, ledger_check_fires_on_a_decision_the_engine_does_not_hold)
{
	struct que_flavor_spec f = {.name = "default"};
	ctl_pipe *p = new_pipe(50);
	que_state *st = NULL;
	cu_error err;

	cr_assert_eq(que_state_new(&st, NULL), CU_OK);
	cr_assert_eq(que_flavor_set(st, &f, NULL), CU_OK);
	engine_cq(st, "cq");
	engine_cq(st, "other");
	cr_assert_eq(que_rebuild(st, &err), CU_OK, "%s", err.msg);
	cr_assert(ctl_pipe_check_ledger_due(p));
	cr_assert_eq(ctl_pipe_check_ledger(p, st, &err), CU_OK, "%s", err.msg);
	cr_assert(!ctl_pipe_check_ledger_due(p), "paced: not again at once");
	cr_assert_eq(ctl_pipe_begin(p), CU_OK);
	ledger_put("uid-1", "cq");
	/* A decision for a Workload the engine never heard of. */
	cr_assert_eq(ctl_pipe_check_ledger(p, st, &err), CU_EINVAL);
	cr_assert(strstr(err.msg, "does not know") != NULL, "%s", err.msg);
	/* Known, but waiting in its queue: it holds no quota. */
	engine_wl(st, "uid-1", "cq");
	cr_assert_eq(ctl_pipe_check_ledger(p, st, &err), CU_EINVAL);
	cr_assert(strstr(err.msg, "holds no quota") != NULL, "%s", err.msg);
	engine_admit(st, "uid-1");
	cr_assert_eq(ctl_pipe_check_ledger(p, st, &err), CU_OK, "%s", err.msg);
	/* Admitted in one ClusterQueue, recorded in another. */
	engine_wl(st, "uid-2", "cq");
	engine_admit(st, "uid-2");
	ledger_put("uid-2", "other");
	cr_assert_eq(ctl_pipe_check_ledger(p, st, &err), CU_EINVAL);
	cr_assert(strstr(err.msg, "ledger says ClusterQueue other, the "
				  "engine cq") != NULL,
	    "%s", err.msg);
	/* The engine adopts quota reserved without a decision: fine. */
	cr_assert_eq(
	    store_decision_delete(ledger, "uid-2", &err), CU_OK, "%s", err.msg);
	engine_wl(st, "uid-3", "cq");
	engine_admit(st, "uid-3");
	cr_assert_eq(ctl_pipe_check_ledger(p, st, &err), CU_OK, "%s", err.msg);
	ctl_pipe_flush(p);
	que_state_free(st);
	free_pipe(p);
}
