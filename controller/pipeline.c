/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/pipeline.c - the controller's write pipeline (see
 * pipeline.h): queue, ledger commit before announcement, sending, answers,
 * expectations, retries and status-report budgets.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "controller/pipeline.h"

/* How long the cache may lag behind our own write before it is trusted
 * anyway. Acting on an older object only costs a conflict (every status
 * write is resourceVersion-guarded); waiting forever on a version that
 * never comes (a conflict whose object did not change, a lost event)
 * would stall that object for good. client-go's expectations expire too. */
#define CTL_EXPECT_TTL_MS 10000
/* A write rejected (other than by a conflict) is looked at again after
 * this pause, or the same state would send it again in a loop. */
#define CTL_WRITE_RETRY_MS 2000
/* A write refused again and again (not a conflict) backs off: the pause
 * doubles per refusal of the same object, up to this. A success resets
 * it. */
#define CTL_WRITE_RETRY_MAX_MS (5 * 60 * 1000)
/* A turn that announces nothing leaves its ledger changes to a commit at
 * most this much later (see ctl_pipe_flush). */
#define CTL_LEDGER_LAZY_MS 500

/* Status reports may use clientConnection.qps / CTL_REPORT_QPS_DIVISOR
 * writes per second (CTL_REPORT_RATE_MIN to CTL_REPORT_RATE_MAX), half
 * for queue status and half for pending reasons, each with a burst of
 * CTL_REPORT_BURST: a small cluster sees every change at once, a busy one
 * keeps its write budget for admissions (one status write each). */
#define CTL_REPORT_QPS_DIVISOR 25.0
#define CTL_REPORT_RATE_MIN 1.0
#define CTL_REPORT_RATE_MAX 5.0
#define CTL_REPORT_BURST 10.0
/* Finalizer writes a second when the client has no qps limit. */
#define CTL_FINALIZER_RATE_UNLIMITED 100.0
/* Writes waiting in the main client (its rate limiter) from which
 * reports hold back: decisions go first. */
#define CTL_REPORT_BACKLOG 8
/* While the client is backlogged, reports refill at this share of their
 * rate: never starved, but they take few of the tokens admissions wait
 * for (the QPS-bound benchmark is one write per admission). */
#define CTL_REPORT_BACKLOG_SHARE 0.2

/* How each kind is sent. */
enum verb { V_STATUS, V_PATCH, V_CREATE, V_DELETE };

static const struct kind_info {
	enum verb verb;
	bool events;	/* sent by the Events client */
	bool announces; /* the ledger is committed before it is sent */
} kinds[] = {
    [CTL_PIPE_ADMIT] = {V_STATUS, false, true},
    [CTL_PIPE_WL_STATUS] = {V_STATUS, false, true},
    [CTL_PIPE_EVICT] = {V_STATUS, false, true},
    [CTL_PIPE_QUEUE_STATUS] = {V_STATUS, false, false},
    [CTL_PIPE_WL_PATCH] = {V_PATCH, false, true},
    [CTL_PIPE_WL_CREATE] = {V_CREATE, false, true},
    [CTL_PIPE_WL_DELETE] = {V_DELETE, false, true},
    [CTL_PIPE_JOB_START] = {V_PATCH, false, true},
    [CTL_PIPE_JOB_SUSPEND] = {V_PATCH, false, true},
    [CTL_PIPE_JOB_RESET_START] = {V_STATUS, false, true},
    [CTL_PIPE_JOB_RESTORE] = {V_PATCH, false, true},
    [CTL_PIPE_EVENT_CREATE] = {V_CREATE, true, false},
    [CTL_PIPE_EVENT_PATCH] = {V_PATCH, true, false},
};

struct bucket {
	double tokens, rate, burst;
	int64_t at_ms;
};

/* A write in flight [owned by its callback]. */
struct inflight {
	ctl_pipe *p;
	struct ctl_pipe_write w; /* moved from the queue; patch NULL */
	/* resourceVersion the patch was guarded by (0: none): after a 409 the
	 * object is not acted on until the cache shows a newer one. */
	unsigned long long sent_rv;
	bool main; /* sent by the main client (not the Events one) */
};

struct ctl_pipe {
	struct ctl_pipe_opts o;
	struct ctl_pipe_write *writes;
	size_t nwrites, capwrites;
	size_t in_flight;
	size_t main_in_flight; /* of them, by the main client */
	/* Object key (keys.h; Workloads, Jobs, JobSets, ClusterQueues,
	 * LocalQueues) -> s[0]: the resourceVersion our last write produced,
	 * n: the monotonic ms at which the expectation expires. Until the
	 * informer shows that version, the cached object is older than what
	 * we wrote and must not be acted on (it would undo or repeat the
	 * write). */
	ctl_keys expect;
	ctl_keys busy; /* object key: a write to it is in flight */
	/* object key of a write in flight -> the object skipped while it
	 * is (ctl_pipe_await_answer): s[0] its kind, s[1] its name, in the
	 * key's namespace */
	ctl_keys waiters;
	ctl_keys retry_at; /* object key -> n: ms a failed write is retried */
	/* object key -> n: refusals in a row of writes to the object, for
	 * the back-off. */
	ctl_keys refused;
	struct bucket budgets[CTL_PIPE_BUDGET__COUNT];
	/* Writes of each budget queued or in flight (ctl_pipe_set_budget). */
	size_t outstanding[CTL_PIPE_BUDGET__COUNT];
	bool txn;
	char ledger_fail[CU_ERROR_MSG_MAX]; /* the last commit's error; "" when
					       it worked */
	int64_t commit_ms; /* monotonic ms of the last ledger commit */
	/* A commit failed once: the turn rolled back may have held a
	 * release the engine made, so the ledger and the engine are no
	 * longer promised to agree (ctl_pipe_check_ledger). */
	bool lost_commit;
	/* monotonic ns before which ctl_pipe_check_ledger_due says no */
	int64_t check_next_ns;
	bool stopping;
	bool closing;
};

/* The pause before the next attempt after the n-th refusal in a row of
 * a write (n >= 1): CTL_WRITE_RETRY_MS doubled per refusal, capped. */
static int64_t refusal_pause_ms(unsigned n)
{
	int64_t ms = CTL_WRITE_RETRY_MS;

	while (--n > 0 && ms < CTL_WRITE_RETRY_MAX_MS)
		ms *= 2;
	return ms < CTL_WRITE_RETRY_MAX_MS ? ms : CTL_WRITE_RETRY_MAX_MS;
}

/* Count a refusal of a write to key [borrowed]; returns how many in a
 * row (1 when it cannot be remembered). */
static unsigned refusal_count(ctl_pipe *p, const char *const *key)
{
	struct ctl_kent *r = ctl_keys_put(&p->refused, key);

	if (r == NULL)
		return 1;
	if (r->n < UINT_MAX)
		r->n++;
	return (unsigned)r->n;
}

static void refusal_forget(ctl_pipe *p, const char *const *key)
{
	ctl_keys_del(&p->refused, key);
}

/* dst [owned parts] := a copy of key [borrowed; NULL: none]. */
static void key_set(char *dst[3], const char *const *key)
{
	size_t i;

	for (i = 0; i < 3; i++) {
		cu_free(dst[i]);
		dst[i] = NULL;
	}
	if (key == NULL)
		return;
	for (i = 0; i < 3; i++)
		if ((dst[i] = cu_strdup(key[i] ? key[i] : "")) == NULL) {
			key_set(dst, NULL);
			return;
		}
}

/* The key dst, or NULL when none. */
static const char *const *key_of(char *const dst[3])
{
	return dst[0] != NULL ? (const char *const *)dst : NULL;
}

static void write_dispose(struct ctl_pipe_write *w)
{
	json_decref(w->patch);
	cu_free(w->ns);
	cu_free(w->name);
	cu_free(w->uid);
	key_set(w->expect, NULL);
	key_set(w->owner, NULL);
	cu_free(w->note);
	cu_free(w->cq);
	memset(w, 0, sizeof(*w));
}

int ctl_pipe_new(
    ctl_pipe **out, const struct ctl_pipe_opts *opts, cu_error *err)
{
	ctl_pipe *p = cu_calloc(1, sizeof(*p));
	double rate;
	size_t i;

	*out = NULL;
	if (p == NULL)
		return cu_error_set(err, CU_ENOMEM, "pipeline: out of memory");
	p->o = *opts;
	ctl_keys_init(&p->expect, 3);
	ctl_keys_init(&p->busy, 3);
	ctl_keys_init(&p->waiters, 3);
	ctl_keys_init(&p->retry_at, 3);
	ctl_keys_init(&p->refused, 3);
	rate = opts->qps / CTL_REPORT_QPS_DIVISOR;
	if (!(rate >= CTL_REPORT_RATE_MIN))
		rate = CTL_REPORT_RATE_MIN;
	if (rate > CTL_REPORT_RATE_MAX)
		rate = CTL_REPORT_RATE_MAX;
	for (i = 0; i < CTL_PIPE_BUDGET__COUNT; i++) {
		/* Half each for queue status and pending reasons. */
		p->budgets[i].rate = rate / 2.0;
		p->budgets[i].burst = CTL_REPORT_BURST;
		p->budgets[i].tokens = CTL_REPORT_BURST;
	}
	/* Configuration finalizers: a quarter of the client's qps (they
	 * complete deletions, so not starved like reports). */
	p->budgets[CTL_PIPE_BUDGET_FINALIZERS].rate =
	    !(opts->qps > 0)	     ? CTL_FINALIZER_RATE_UNLIMITED
	    : opts->qps / 4.0 >= 1.0 ? opts->qps / 4.0
				     : 1.0;
	*out = p;
	return CU_OK;
}

void ctl_pipe_closing(ctl_pipe *p)
{
	if (p != NULL)
		p->closing = true;
}

void ctl_pipe_free(ctl_pipe *p)
{
	size_t i;

	if (p == NULL)
		return;
	for (i = 0; i < p->nwrites; i++)
		write_dispose(&p->writes[i]);
	cu_free(p->writes);
	if (p->o.ledger != NULL && p->txn)
		store_rollback(p->o.ledger);
	ctl_keys_dispose(&p->expect);
	ctl_keys_dispose(&p->busy);
	ctl_keys_dispose(&p->waiters);
	ctl_keys_dispose(&p->retry_at);
	ctl_keys_dispose(&p->refused);
	cu_free(p);
}

/* ---- the queue ------------------------------------------------------ */

struct ctl_pipe_write *ctl_pipe_queue(ctl_pipe *p, enum ctl_pipe_kind kind,
    const struct api_resource *res, const char *ns, const char *name,
    const char *uid, json_t *patch)
{
	struct ctl_pipe_write *w;

	if (cu_grow((void **)&p->writes, &p->capwrites, p->nwrites + 1,
		sizeof(*p->writes)) != CU_OK) {
		cu_errorf(
		    "write queue: out of memory; dropping a write to %s", name);
		json_decref(patch);
		return NULL;
	}
	w = &p->writes[p->nwrites++];
	memset(w, 0, sizeof(*w));
	w->kind = kind;
	w->res = res;
	w->ns = ns ? cu_strdup(ns) : NULL;
	w->name = cu_strdup(name);
	w->uid = uid ? cu_strdup(uid) : NULL;
	w->patch = patch;
	w->budget = -1;
	return w;
}

void ctl_pipe_expect(
    ctl_pipe *p, struct ctl_pipe_write *w, const char *const *key, bool busy)
{
	if (w == NULL || key == NULL)
		return;
	key_set(w->expect, key);
	if (busy)
		(void)ctl_keys_put(&p->busy, key);
}

void ctl_pipe_set_owner(struct ctl_pipe_write *w, const char *const *owner)
{
	if (w == NULL || owner == NULL)
		return;
	key_set(w->owner, owner);
}

void ctl_pipe_set_event(
    struct ctl_pipe_write *w, const char *reason, char *note)
{
	if (w == NULL) {
		cu_free(note);
		return;
	}
	cu_free(w->note);
	w->ev_reason = reason;
	w->note = note;
}

void ctl_pipe_set_admission(
    struct ctl_pipe_write *w, int64_t created_ns, const char *cq)
{
	if (w == NULL)
		return;
	w->created_ns = created_ns;
	cu_free(w->cq);
	w->cq = cq ? cu_strdup(cq) : NULL;
}

/* ---- the ledger transaction ----------------------------------------- */

int ctl_pipe_begin(ctl_pipe *p)
{
	cu_error err;

	if (p->txn)
		return CU_OK;
	if (store_begin(p->o.ledger, &err) != CU_OK) {
		cu_errorf("ledger: %s", err.msg);
		return err.code;
	}
	p->txn = true;
	return CU_OK;
}

/* Commit the open transaction; /readyz reports the ledger failing until
 * a commit succeeds again (a full disk, a volume gone read-only). */
static int ledger_commit(ctl_pipe *p, cu_error *err)
{
	int rc = store_commit(p->o.ledger, err);

	if (rc == CU_OK)
		p->ledger_fail[0] = '\0';
	else {
		cu_error ck;

		snprintf(
		    p->ledger_fail, sizeof(p->ledger_fail), "%s", err->msg);
		p->lost_commit = true;
		/* SQLite checkpoints only after a commit that succeeds: a
		 * WAL at its limit (a full disk, a file-size limit) would
		 * stay full for good. Fold it back and truncate it, so
		 * that the next turn's commit starts a new WAL. */
		store_rollback(p->o.ledger);
		if (store_checkpoint(p->o.ledger, &ck) != CU_OK)
			cu_debug("ledger: %s", ck.msg);
	}
	return rc;
}

const char *ctl_pipe_ledger_error(const ctl_pipe *p)
{
	return p->ledger_fail;
}

struct agree {
	que_state *st;
	cu_error *err;
	bool disagree;
};

/* 1 when the engine (payload, a struct agree) does not hold the live
 * decision d [borrowed] as ledger and engine must agree; 0 else. */
static int agree_one(const store_decision *d, void *payload)
{
	struct agree *x = payload;
	const struct que_wl *qw = que_workload_get(x->st, d->uid);

	x->disagree = true;
	if (qw == NULL)
		cu_error_set(x->err, CU_EINVAL,
		    "ledger holds a %s decision for workload %s/%s (uid %s) "
		    "that the engine does not know",
		    store_state_name(d->state), d->ns, d->name, d->uid);
	else if (qw->where != QUE_WL_ADMITTED && qw->where != QUE_WL_EVICTING)
		cu_error_set(x->err, CU_EINVAL,
		    "ledger holds a %s decision for workload %s/%s (uid %s) "
		    "that holds no quota in the engine (place %d)",
		    store_state_name(d->state), d->ns, d->name, d->uid,
		    (int)qw->where);
	else if (qw->cq != NULL && strcmp(qw->cq->name, d->cluster_queue) != 0)
		cu_error_set(x->err, CU_EINVAL,
		    "workload %s/%s (uid %s): ledger says ClusterQueue %s, "
		    "the engine %s",
		    d->ns, d->name, d->uid, d->cluster_queue, qw->cq->name);
	else
		x->disagree = false;
	return x->disagree ? 1 : 0;
}

/* The pause after a check of the ledger's agreement: at least this, and
 * at least CHECK_PAUSE_FACTOR times what the check took (reading every
 * live decision: about 0.1 ms each in an ASan build), so that the check
 * costs at most about 5% of the time whatever the ledger holds. */
#define CHECK_PAUSE_MIN_NS (100LL * 1000000LL)
#define CHECK_PAUSE_FACTOR 20

int ctl_pipe_check_ledger(ctl_pipe *p, que_state *st, cu_error *err)
{
	struct agree x = {st, err, false};
	int64_t t0 = cu_time_mono_ns(), took;
	cu_error ferr;
	int rc;

	if (p->o.ledger == NULL || p->lost_commit)
		return CU_OK;
	rc = store_decision_foreach_live(p->o.ledger, agree_one, &x, &ferr);
	took = cu_time_mono_ns() - t0;
	p->check_next_ns = t0 + took +
			   (took * CHECK_PAUSE_FACTOR > CHECK_PAUSE_MIN_NS
				   ? took * CHECK_PAUSE_FACTOR
				   : CHECK_PAUSE_MIN_NS);
	if (x.disagree)
		return CU_EINVAL;
	if (rc != CU_OK)
		return cu_error_set(err, rc, "ledger: %s", ferr.msg);
	return CU_OK;
}

bool ctl_pipe_check_ledger_due(const ctl_pipe *p)
{
	return cu_time_mono_ns() >= p->check_next_ns;
}

/* ---- expectations --------------------------------------------------- */

/* Expect the cache to show key at resourceVersion rv [borrowed] or later. */
static void expect_set(ctl_pipe *p, const char *const *key, const char *rv)
{
	struct ctl_kent *e = ctl_keys_put(&p->expect, key);

	if (e == NULL)
		return;
	if (ctl_keys_set_str(e, 0, rv) != CU_OK) {
		ctl_keys_del(&p->expect, key);
		return;
	}
	e->n = cu_time_mono_ms() + CTL_EXPECT_TTL_MS;
}

static void expect_drop(ctl_pipe *p, const char *const *key)
{
	ctl_keys_del(&p->expect, key);
}

/* (resourceVersions are decimal revisions here and on kube-apiserver;
 * only ever compared for this purpose.) A version seen by the informer
 * anywhere means everything up to it was delivered: the object simply
 * did not change - e.g. after a conflict whose cause was not a newer
 * object. */
bool ctl_pipe_stale(ctl_pipe *p, const char *const *key, json_t *obj)
{
	struct ctl_kent *want = ctl_keys_get(&p->expect, key);
	api_informer *inf;
	const char *have, *seen;
	unsigned long long w, h;

	if (ctl_keys_get(&p->busy, key) != NULL)
		return true;
	if (want == NULL)
		return false;
	have = json_string_value(json_object_get(
	    json_object_get(obj, "metadata"), "resourceVersion"));
	w = strtoull(want->s[0], NULL, 10);
	h = have ? strtoull(have, NULL, 10) : 0;
	inf = p->o.hooks.informer(key, p->o.hooks.payload);
	seen = inf ? api_informer_resource_version(inf) : NULL;
	if (h >= w || (seen != NULL && strtoull(seen, NULL, 10) >= w)) {
		expect_drop(p, key);
		return false;
	}
	if (cu_time_mono_ms() >= want->n) {
		cu_info("%s %s/%s: the cache did not show resourceVersion %llu "
			"within %d ms; using what it shows (%llu)",
		    key[0], key[1], key[2], w, CTL_EXPECT_TTL_MS, h);
		expect_drop(p, key);
		return false;
	}
	return true;
}

void ctl_pipe_gone_past_expect(
    ctl_pipe *p, api_informer *inf, const char *const *key)
{
	struct ctl_kent *want = ctl_keys_get(&p->expect, key);
	const char *seen = api_informer_resource_version(inf);

	if (want != NULL &&
	    ((seen != NULL &&
		 strtoull(seen, NULL, 10) >= strtoull(want->s[0], NULL, 10)) ||
		cu_time_mono_ms() >= want->n))
		expect_drop(p, key);
}

bool ctl_pipe_awaits(const ctl_pipe *p, const char *const *key)
{
	return ctl_keys_get(&p->busy, key) != NULL ||
	       ctl_keys_get(&p->expect, key) != NULL;
}

void ctl_pipe_await_answer(
    ctl_pipe *p, const char *const *key, const char *kind, const char *name)
{
	struct ctl_kent *e;

	if (key == NULL || kind == NULL || name == NULL ||
	    ctl_keys_get(&p->busy, key) == NULL)
		return;
	if ((e = ctl_keys_put(&p->waiters, key)) == NULL)
		return;
	if (ctl_keys_set_str(e, 0, kind) != CU_OK ||
	    ctl_keys_set_str(e, 1, name) != CU_OK)
		ctl_keys_del(&p->waiters, key);
}

/* The write to key is done (answered, or not sent): the object that
 * waited for it (ctl_pipe_await_answer) is looked at again. */
static void wake_waiter(ctl_pipe *p, const char *const *key)
{
	struct ctl_kent *e = ctl_keys_get(&p->waiters, key);

	if (e == NULL)
		return;
	p->o.hooks.mark(CTL_K3(e->s[0], key[1], e->s[1]), p->o.hooks.payload);
	ctl_keys_del(&p->waiters, key);
}

unsigned ctl_pipe_refusals(const ctl_pipe *p, const char *const *key)
{
	const struct ctl_kent *r = ctl_keys_get(&p->refused, key);

	return r != NULL ? (unsigned)r->n : 0;
}

/* ---- retries -------------------------------------------------------- */

bool ctl_pipe_retrying(const ctl_pipe *p, const char *const *key)
{
	return ctl_keys_get(&p->retry_at, key) != NULL;
}

/* In the order the retries were first set (as before: deterministic). */
void ctl_pipe_retry_due(ctl_pipe *p, int64_t now_ms)
{
	struct ctl_kent **v;
	size_t i, n;

	if (ctl_keys_ordered(&p->retry_at, &v, &n) != CU_OK)
		return;
	for (i = 0; i < n; i++) {
		const char *const *key = (const char *const *)v[i]->k;

		if (v[i]->n > now_ms)
			continue;
		p->o.hooks.mark(key, p->o.hooks.payload);
		ctl_keys_del(&p->retry_at, key);
	}
	cu_free(v);
}

/* ---- budgets -------------------------------------------------------- */

bool ctl_pipe_budget_room(const ctl_pipe *p, enum ctl_pipe_budget b)
{
	return p->outstanding[b] < CTL_PIPE_BUDGET_OUTSTANDING;
}

size_t ctl_pipe_budget_outstanding(const ctl_pipe *p, enum ctl_pipe_budget b)
{
	return p->outstanding[b];
}

void ctl_pipe_set_budget(
    ctl_pipe *p, struct ctl_pipe_write *w, enum ctl_pipe_budget b)
{
	if (w == NULL || w->budget >= 0)
		return;
	w->budget = (int)b;
	p->outstanding[b]++;
}

/* w [borrowed] is answered, failed or dropped: its budget has room. */
static void budget_release(ctl_pipe *p, struct ctl_pipe_write *w)
{
	if (w->budget >= 0 && p->outstanding[w->budget] > 0)
		p->outstanding[w->budget]--;
	w->budget = -1;
}

bool ctl_pipe_budget_take(
    ctl_pipe *p, enum ctl_pipe_budget which, int64_t now_ms)
{
	struct bucket *b = &p->budgets[which];
	double rate = p->main_in_flight >= CTL_REPORT_BACKLOG
			  ? b->rate * CTL_REPORT_BACKLOG_SHARE
			  : b->rate;

	if (!ctl_pipe_budget_room(p, which))
		return false;
	if (b->at_ms > 0 && now_ms > b->at_ms)
		b->tokens += rate * cu_ms_to_secs(now_ms - b->at_ms);
	if (b->tokens > b->burst)
		b->tokens = b->burst;
	b->at_ms = now_ms;
	if (b->tokens < 1.0)
		return false;
	b->tokens -= 1.0;
	return true;
}

/* ---- answers -------------------------------------------------------- */

static void inflight_free(struct inflight *f)
{
	write_dispose(&f->w);
	cu_free(f);
}

/* The expectation bookkeeping of an answer to f. */
static void answer_expect(
    ctl_pipe *p, struct inflight *f, const struct api_response *resp)
{
	const char *const *key = key_of(f->w.expect);
	const char *const *owner = key_of(f->w.owner);
	const char *rv = json_string_value(json_object_get(
	    json_object_get(resp->body, "metadata"), "resourceVersion"));
	struct ctl_kent *e;

	ctl_keys_del(&p->busy, key);
	if (resp->err == CU_OK && rv != NULL)
		expect_set(p, key, rv);
	wake_waiter(p, key);
	/* A conflict: our cache was behind. Wait for a newer object rather
	 * than retrying against the same old one. */
	if (resp->err == CU_ECONFLICT && f->sent_rv > 0) {
		char next[32];

		snprintf(next, sizeof(next), "%llu", f->sent_rv + 1);
		expect_set(p, key, next);
	}
	/* Look again once the cache has caught up; a rejected write (other
	 * than a conflict) only after a pause, or the same state would send
	 * it again in a loop. */
	if (resp->err != CU_OK && resp->err != CU_ECONFLICT) {
		unsigned n = refusal_count(p, key);
		int64_t pause = refusal_pause_ms(n);
		int64_t at = cu_time_now_ms() + pause;

		if ((e = ctl_keys_put(&p->retry_at, key)) != NULL)
			e->n = at;
		if (owner != NULL &&
		    (e = ctl_keys_put(&p->retry_at, owner)) != NULL)
			e->n = at;
		if (n == 1)
			cu_warn("write %s: %d %s %s (retried in %lld ms)",
			    resp->path, resp->code, resp->reason, resp->message,
			    (long long)pause);
		else
			cu_warn("write %s: %d %s %s (refused %u times in a "
				"row; backing off, retried in %lld ms)",
			    resp->path, resp->code, resp->reason, resp->message,
			    n, (long long)pause);
	} else {
		if (resp->err == CU_OK)
			refusal_forget(p, key);
		p->o.hooks.mark(key, p->o.hooks.payload);
		if (owner != NULL)
			p->o.hooks.mark(owner, p->o.hooks.payload);
	}
}

static void on_write_done(const struct api_response *resp, void *payload)
{
	struct inflight *f = payload;
	ctl_pipe *p = f->p;

	p->in_flight--;
	if (f->main)
		p->main_in_flight--;
	budget_release(p, &f->w);
	if (p->closing || resp->canceled)
		goto out;
	if (f->w.expect[0] != NULL)
		answer_expect(p, f, resp);
	p->o.hooks.settle(&f->w, CTL_PIPE_ANSWERED, resp, p->o.hooks.payload);
out:
	inflight_free(f);
	if (p->stopping && p->in_flight == 0 && !p->closing)
		p->o.hooks.drained(p->o.hooks.payload);
}

/* ---- flush ---------------------------------------------------------- */

/* Send w [borrowed] with body [borrowed]; f is the callback's payload. */
static int send_write(ctl_pipe *p, const struct ctl_pipe_write *w, json_t *body,
    struct inflight *f, cu_error *err)
{
	const struct kind_info *k = &kinds[w->kind];
	api_client *cl = k->events ? p->o.ev_client : p->o.client;

	switch (k->verb) {
	case V_PATCH:
		return api_merge_patch(NULL, cl, w->res, w->ns, w->name, body,
		    false, on_write_done, f, err);
	case V_CREATE:
		return api_create(
		    NULL, cl, w->res, w->ns, body, on_write_done, f, err);
	case V_DELETE:
		/* A non-empty body is the DeleteOptions (preconditions,
		 * propagationPolicy). */
		return api_delete(NULL, cl, w->res, w->ns, w->name,
		    json_object_size(body) > 0 ? body : NULL, on_write_done, f,
		    err);
	case V_STATUS:
		break;
	}
	return api_merge_patch(NULL, cl, w->res, w->ns, w->name, body, true,
	    on_write_done, f, err);
}

/* Invariant: the ledger first. A turn that announces nothing (only
 * bookkeeping: a write answered, a Workload finished) leaves its changes
 * to the next commit, at most CTL_LEDGER_LAZY_MS later: one fsync per
 * announcing turn, not one per answer. Losing them in a crash is safe,
 * the restart reconciles the ledger with the API (store.h). */
static void commit_before_sending(ctl_pipe *p)
{
	bool announces = p->stopping ||
			 cu_time_mono_ms() - p->commit_ms >= CTL_LEDGER_LAZY_MS;
	size_t i;
	int64_t t0;
	cu_error err;

	for (i = 0; i < p->nwrites && !announces; i++)
		announces = kinds[p->writes[i].kind].announces;
	if (!p->txn || !announces)
		return;
	t0 = cu_time_mono_ns();
	p->txn = false;
	p->commit_ms = cu_ns_to_ms(t0);
	if (ledger_commit(p, &err) != CU_OK) {
		cu_errorf("ledger commit: %s; decisions of this turn are "
			  "withdrawn",
		    err.msg);
		for (i = 0; i < p->nwrites; i++)
			if (p->writes[i].kind == CTL_PIPE_ADMIT)
				p->o.hooks.settle(&p->writes[i],
				    CTL_PIPE_UNCOMMITTED, NULL,
				    p->o.hooks.payload);
		for (i = 0; i < p->nwrites; i++)
			if (p->writes[i].kind == CTL_PIPE_ADMIT) {
				json_decref(p->writes[i].patch);
				p->writes[i].patch = NULL;
			}
	}
	if (p->o.metrics != NULL)
		ctl_metric_observe(p->o.metrics,
		    CTL_M_CUEUE_STORE_COMMIT_SECONDS, CTL_LV0,
		    cu_ns_to_secs(cu_time_mono_ns() - t0));
}

/* Send w: its fields but the body move to the in-flight record (which
 * its callback owns) before the request is made. */
static void send_one(ctl_pipe *p, struct ctl_pipe_write *w)
{
	struct inflight *f;
	const char *rv;
	cu_error err;

	if (w->patch == NULL) {
		budget_release(p, w);
		return;
	}
	f = cu_calloc(1, sizeof(*f));
	if (f == NULL) {
		budget_release(p, w);
		return;
	}
	f->p = p;
	rv = json_string_value(json_object_get(
	    json_object_get(w->patch, "metadata"), "resourceVersion"));
	f->sent_rv = rv ? strtoull(rv, NULL, 10) : 0;
	f->w = *w;
	f->w.patch = NULL;
	w->ns = w->name = w->uid = w->note = NULL;
	w->cq = NULL;
	memset(w->expect, 0, sizeof(w->expect));
	memset(w->owner, 0, sizeof(w->owner));
	w->budget = -1;
	if (send_write(p, &f->w, w->patch, f, &err) != CU_OK) {
		cu_warn("write %s: %s", f->w.name, err.msg);
		budget_release(p, &f->w);
		p->o.hooks.settle(
		    &f->w, CTL_PIPE_SEND_FAILED, NULL, p->o.hooks.payload);
		if (f->w.expect[0] != NULL) {
			ctl_keys_del(&p->busy, key_of(f->w.expect));
			wake_waiter(p, key_of(f->w.expect));
		}
		inflight_free(f);
		return;
	}
	p->in_flight++;
	f->main = !kinds[f->w.kind].events;
	if (f->main)
		p->main_in_flight++;
}

void ctl_pipe_flush(ctl_pipe *p)
{
	size_t i;
	cu_error err;

	commit_before_sending(p);
	/* Decisions first: a turn's Events (their own client and budget)
	 * are sent after its admission and status writes, never ahead. */
	for (i = 0; i < p->nwrites; i++)
		if (!kinds[p->writes[i].kind].events) {
			send_one(p, &p->writes[i]);
			write_dispose(&p->writes[i]);
		}
	for (i = 0; i < p->nwrites; i++)
		if (kinds[p->writes[i].kind].events) {
			send_one(p, &p->writes[i]);
			write_dispose(&p->writes[i]);
		}
	p->nwrites = 0;
	/* A failure path above may have reopened the transaction. */
	if (p->txn) {
		p->txn = false;
		if (ledger_commit(p, &err) != CU_OK)
			cu_errorf("ledger commit: %s", err.msg);
	}
}

bool ctl_pipe_stop(ctl_pipe *p)
{
	p->stopping = true;
	ctl_pipe_flush(p);
	return p->in_flight == 0;
}

size_t ctl_pipe_in_flight(const ctl_pipe *p)
{
	return p->in_flight;
}

size_t ctl_pipe_queued(const ctl_pipe *p)
{
	return p->nwrites;
}
