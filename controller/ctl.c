/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/ctl.c - the cueue controller process (see ctl.h).
 *
 * Design notes
 * ------------
 * Informer handlers only mark objects dirty; all work happens in one
 * ev_prepare callback per loop turn ("the turn"), so a burst of watch
 * events costs one pass:
 *
 *   turn:  config dirty?  -> ResourceFlavors, ClusterQueues, Cohorts,
 *                            LocalQueues into the engine (controller/sync)
 *          Workloads dirty -> engine add / remove / release / adopt
 *          may write?     -> one admission cycle (admission/)
 *                            decisions -> ledger (reserved) + writes queued
 *          ledger commit  -> only then the queued writes are sent
 *
 * Invariants:
 *  1. A decision is in the ledger, committed, before the write that
 *     announces it leaves the process (DESIGN.md lesson 3). After a
 *     restart, Workloads whose status holds quota are adopted by the engine
 *     from their status (controller/sync), never decided again.
 *  2. No write is sent that would not change the object: every status
 *     patch comes from controller/workload.c, which returns NULL when the
 *     object already says it (DESIGN.md lesson 4); ClusterQueue status is
 *     compared with the cached object before writing.
 *  3. While an admission write is in flight for a Workload, its cached
 *     (older) state is not reconciled against the engine: the write's
 *     callback settles it (success: ledger ADMITTED; failure: the engine
 *     unadmits and the ledger forgets).
 *  4. Nothing writes before every informer synced, and only the leader
 *     writes (with leader election off, this process is the leader).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "admission/admission.h"
#include "api/client.h"
#include "api/informer.h"
#include "api/model.h"
#include "controller/ctl.h"
#include "reconcile/reconcile.h"
#include "controller/health.h"
#include "controller/httpd.h"
#include "controller/certrot.h"
#include "controller/whsrv.h"
#include "controller/leader.h"
#include "controller/metrics.h"
#include "namespaces/gate.h"
#include "queues/queues.h"
#include "store/store.h"

enum inf_id {
	INF_NS = 0,
	INF_RF,
	INF_CQ,
	INF_LQ,
	INF_COHORT,
	INF_WL,
	INF_WPC,    /* WorkloadPriorityClasses */
	INF_PC,	    /* scheduling.k8s.io PriorityClasses */
	INF_JOB,    /* only with batch/job enabled */
	INF_JOBSET, /* only with jobset.x-k8s.io/jobset enabled */
	INF__COUNT
};

static const struct api_resource resources[INF__COUNT] = {
    [INF_NS] = {"", "v1", "namespaces", false},
    [INF_RF] = {"kueue.x-k8s.io", "v1beta2", "resourceflavors", false},
    [INF_CQ] = {"kueue.x-k8s.io", "v1beta2", "clusterqueues", false},
    [INF_LQ] = {"kueue.x-k8s.io", "v1beta2", "localqueues", true},
    [INF_COHORT] = {"kueue.x-k8s.io", "v1beta2", "cohorts", false},
    [INF_WL] = {"kueue.x-k8s.io", "v1beta2", "workloads", true},
    [INF_WPC] = {"kueue.x-k8s.io", "v1beta2", "workloadpriorityclasses", false},
    [INF_PC] = {"scheduling.k8s.io", "v1", "priorityclasses", false},
    [INF_JOB] = {"batch", "v1", "jobs", true},
    [INF_JOBSET] = {"jobset.x-k8s.io", "v1alpha2", "jobsets", true},
};

static const struct api_resource WORKLOADS = {
    "kueue.x-k8s.io", "v1beta2", "workloads", true};
static const struct api_resource JOBS = {"batch", "v1", "jobs", true};
static const struct api_resource JOBSETS = {
    "jobset.x-k8s.io", "v1alpha2", "jobsets", true};
static const struct api_resource CLUSTERQUEUES = {
    "kueue.x-k8s.io", "v1beta2", "clusterqueues", false};
static const struct api_resource LOCALQUEUES = {
    "kueue.x-k8s.io", "v1beta2", "localqueues", true};

struct inf_slot {
	ctl *c;
	enum inf_id id;
};

/* A ClusterQueue's namespaceSelector, kept decoded between turns. */
struct cq_sel {
	char *name; /* owned */
	bool has;   /* a selector is set ({} = all); unset = none */
	api_selector sel;
};

enum write_kind {
	W_ADMIT,  /* admission status of a Workload (announces a decision) */
	W_STATUS, /* other Workload status */
	W_EVICT,  /* eviction of a preemption victim (uid set) */
	W_CQ,	  /* ClusterQueue or LocalQueue status */
	W_SPEC,	  /* merge patch of a job or Workload (not status) */
	W_JOB_STATUS, /* merge patch of a job's status */
	W_CREATE,     /* POST `patch` (a new object) */
	W_DELETE,     /* DELETE */
};

/* A write queued during a turn, sent after the ledger commit. */
struct qwrite {
	enum write_kind kind;
	const struct api_resource *res;
	char *ns, *name; /* owned */
	char *uid;	 /* owned; the Workload's, or NULL */
	json_t *patch;	 /* owned */
	char *expect;	 /* owned; key whose resourceVersion to expect */
	/* owned; the job ("J/ns/name") whose reconciler waits on this
	 * Workload write, or NULL: looked at again when the answer comes. */
	char *owner;
	/* An event sent once the write succeeds (not per attempt): reason
	 * [static] and message [owned]; W_ADMIT: QuotaReserved + Admitted. */
	const char *ev_reason;
	char *note;
};

/* Context of a write in flight [owned by the callback]. */
struct inflight {
	ctl *c;
	enum write_kind kind;
	char *uid;    /* owned */
	char *expect; /* owned; see struct ctl.expect */
	char *owner;  /* owned; see struct qwrite */
	int64_t created_ns;
	char *cq;		/* owned */
	char *ns, *name, *note; /* owned; events sent on success */
	const char *ev_reason;	/* static; see struct qwrite */
	const struct api_resource *res;
	/* resourceVersion the patch was guarded by (0: none): after a 409 the
	 * object is not acted on until the cache shows a newer one. */
	unsigned long long sent_rv;
	bool main; /* sent by the main client (not the Events one) */
};

struct ctl {
	struct ev_loop *loop;
	const struct ctl_config *cfg;
	struct ctl_run_opts opts;
	struct api_client_opts copts;
	api_client *client;
	api_informer *inf[INF__COUNT];
	struct inf_slot slots[INF__COUNT];
	que_state *st;
	store *ledger;
	ctl_metrics *metrics;
	ctl_health *health;
	ctl_httpd *probe_srv, *metrics_srv;
	ctl_whsrv *webhook;   /* NULL: no serving certificate */
	ctl_certrot *certrot; /* NULL: internalCertManagement off */
	struct wh_options wh; /* the webhook handlers' view of caches */
	ctl_leader *leader;   /* NULL with leader election off */
	rec_events *events;   /* event recorder (dedup, spam filter) */
	bool leading;
	bool failed; /* lost leadership: the process must exit (as Kueue) */

	ev_prepare turn_w;
	ev_timer tick_w;
	ev_tstamp tick_due; /* when tick_w should fire next (loop lag) */
	bool synced;	    /* every informer delivered its first LIST */
	bool resumed;	    /* the ledger's open decisions were taken up */
	bool dirty_config;  /* flavors/queues/cohorts/namespaces changed */
	bool dirty_cycle;   /* something may be admissible now */
	json_t *dirty_wl;   /* set: "ns/name" */
	json_t *dirty_jobs; /* set: "J/ns/name" (Job), "S/ns/name" (JobSet) */
	/* Object key -> resourceVersion our last write produced: until the
	 * informer shows that version, the cached object is older than what
	 * we wrote and must not be acted on (it would undo or repeat the
	 * write). Keys: "wl/ns/name", "J/ns/name", "S/ns/name". */
	json_t *expect;
	json_t *expect_until; /* key -> ms: an expectation expires then */
	json_t *busy;	      /* key -> true while a write to it is in flight */
	json_t *retry_at;     /* key -> ms: a failed write is retried then */
	struct ns_gate_config gate;
	json_t *wl_uid;	   /* "ns/name" -> uid of what the engine holds */
	json_t *wl_gen;	   /* uid -> metadata.generation it was added at */
	json_t *in_flight; /* uid -> true while an admission write runs */
	/* uid -> true: admitted by the engine and recorded in the ledger, the
	 * announcement waits for the cache to show our own earlier write to
	 * the Workload (announce_deferred). In in_flight too. */
	json_t *deferred;
	json_t *pending_at;  /* uid -> ms when its pending status was written */
	json_t *pending_due; /* uid -> [reason, message] not yet written */
	/* Events go through a client of their own with the same qps/burst,
	 * as controller-runtime's event recorder does: they never take the
	 * admission path's rate budget. */
	api_client *ev_client;
	/* Status reports (ClusterQueue and LocalQueue status; pending
	 * reasons) have budgets of their own within the client's: under
	 * load the admission path gets the API, reports are coalesced and
	 * written oldest-first. See report_budget_init. */
	struct bucket {
		double tokens, rate, burst;
		int64_t at_ms;
	} queue_reports, pending_reports;
	json_t *reported_at; /* report key -> ms of its last write */
	struct offer {
		const struct api_resource *res;
		char *ns, *name, *key; /* owned */
		json_t *patch;	       /* owned */
		int64_t last;
		bool urgent; /* Active changes: outside the budget */
	} * offers;	     /* queue status writes offered this tick */
	size_t noffers, capoffers;
	bool pending_scan; /* the tick asks the turn to write due ones */
	json_t *cq_names;  /* set of CQ names given to the engine */
	json_t *rf_names, *cohort_names, *lq_names;
	struct cq_sel *sels;
	size_t nsels, capsels;

	struct qwrite *writes;
	size_t nwrites, capwrites;
	size_t writes_in_flight;
	size_t main_writes_in_flight;	    /* of them, by the main client */
	char ledger_fail[CU_ERROR_MSG_MAX]; /* the last commit's error; "" when
					       it worked */
	int64_t commit_ms; /* monotonic ms of the last ledger commit */
	uint64_t ticks;	   /* on_tick calls */
	bool txn;
	bool stopping;
	void (*stop_done)(void *payload);
	void *stop_payload;
	bool freeing;
};

/* ---- small helpers ------------------------------------------------- */

static char *key_of(const char *ns, const char *name)
{
	return cu_asprintf("%s/%s", ns ? ns : "", name);
}

static const char *jmeta(json_t *obj, const char *field)
{
	return json_string_value(
	    json_object_get(json_object_get(obj, "metadata"), field));
}

static bool may_write(const ctl *c)
{
	/* ctl_leader_is_leader, not only c->leading: after a stall the
	 * callback that ends the term may run after the one writing. */
	return c->synced && !c->stopping &&
	       (c->leader == NULL ||
		   (c->leading && ctl_leader_is_leader(c->leader)));
}

static void queue_write(ctl *c, enum write_kind kind,
    const struct api_resource *res, const char *ns, const char *name,
    const char *uid, json_t *patch)
{
	struct qwrite *w;

	if (cu_grow((void **)&c->writes, &c->capwrites, c->nwrites + 1,
		sizeof(*c->writes)) != CU_OK) {
		cu_errorf(
		    "write queue: out of memory; dropping a write to %s", name);
		json_decref(patch);
		return;
	}
	w = &c->writes[c->nwrites++];
	w->kind = kind;
	w->res = res;
	w->ns = ns ? cu_strdup(ns) : NULL;
	w->name = cu_strdup(name);
	w->uid = uid ? cu_strdup(uid) : NULL;
	w->patch = patch;
	w->expect = NULL;
	w->owner = NULL;
	w->ev_reason = NULL;
	w->note = NULL;
}

/* Queue a write and remember, on success, the resourceVersion it
 * produced for `expect` [borrowed; copied]; the object is busy until
 * the answer arrives. */
static void queue_write_expect(ctl *c, enum write_kind kind,
    const struct api_resource *res, const char *ns, const char *name,
    json_t *patch, const char *expect)
{
	queue_write(c, kind, res, ns, name, NULL, patch);
	if (c->nwrites > 0 && c->writes[c->nwrites - 1].patch == patch &&
	    expect != NULL) {
		c->writes[c->nwrites - 1].expect = cu_strdup(expect);
		json_object_set_new(c->busy, expect, json_true());
	}
}

/* A Workload write awaited in the cache like job writes (key
 * "wl/ns/name"). owner [borrowed; copied; may be NULL] is the job key
 * whose reconciler sent it: that reconciler skips the job while the write
 * is in flight, so the answer (or the retry after a failure) brings the
 * job back, even when the Workload is gone by then. */
static void wl_write(ctl *c, enum write_kind kind, const char *ns,
    const char *name, json_t *patch, const char *owner)
{
	char *ek = cu_asprintf("wl/%s/%s", ns, name);

	queue_write_expect(c, kind, &WORKLOADS, ns, name, patch, ek);
	cu_free(ek);
	if (owner != NULL && c->nwrites > 0 &&
	    c->writes[c->nwrites - 1].patch == patch)
		c->writes[c->nwrites - 1].owner = cu_strdup(owner);
}

static const struct api_resource EVENTS = {"", "v1", "events", true};

/* Record an event about obj [borrowed] (a Job, JobSet or Workload as
 * cached): a new Event, or a count bump of an identical one (client-go's
 * dedup), or nothing (spam filter). Events are sent with the turn's
 * writes; only real transitions call this (DESIGN.md lesson 4). */
static void emit(ctl *c, json_t *obj, const char *type, const char *reason,
    const char *message)
{
	struct rec_event ev;
	struct rec_event_write w;
	cu_error err;

	if (c->events == NULL || obj == NULL)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.kind = json_string_value(json_object_get(obj, "kind"));
	ev.api_version = json_string_value(json_object_get(obj, "apiVersion"));
	ev.namespace_ = jmeta(obj, "namespace");
	ev.name = jmeta(obj, "name");
	ev.uid = jmeta(obj, "uid");
	ev.type = type;
	ev.reason = reason;
	ev.message = message;
	if (ev.kind == NULL || ev.name == NULL)
		return;
	if (rec_events_record(c->events, &ev, cu_time_now_ns(), &w, &err) !=
	    CU_OK) {
		cu_warn("event %s on %s: %s", reason, ev.name, err.msg);
		return;
	}
	if (w.action == REC_EVENT_CREATE)
		queue_write(c, W_CREATE, &EVENTS, w.namespace_, w.name, NULL,
		    json_incref(w.body));
	else if (w.action == REC_EVENT_PATCH)
		queue_write(c, W_SPEC, &EVENTS, w.namespace_, w.name, NULL,
		    json_incref(w.body));
	rec_event_write_dispose(&w);
}

/* How long the cache may lag behind our own write before it is trusted
 * anyway. Acting on an older object only costs a conflict (every status
 * write is resourceVersion-guarded); waiting forever on a version that
 * never comes (a conflict whose object did not change, a lost event)
 * would stall that object for good. client-go's expectations expire too. */
#define EXPECT_TTL_MS 10000

/* Expect the cache to show key at resourceVersion rv [borrowed] or later. */
static void expect_set(ctl *c, const char *key, const char *rv)
{
	json_object_set_new(c->expect, key, json_string(rv));
	json_object_set_new(c->expect_until, key,
	    json_integer(cu_time_mono_ns() / 1000000 + EXPECT_TTL_MS));
}

static void expect_drop(ctl *c, const char *key)
{
	json_object_del(c->expect, key);
	json_object_del(c->expect_until, key);
}

/* The informer whose cache an expectation key is about. */
static api_informer *expect_informer(ctl *c, const char *key)
{
	if (strncmp(key, "wl/", 3) == 0)
		return c->inf[INF_WL];
	return c->inf[key[0] == 'J' ? INF_JOB : INF_JOBSET];
}

/* Is the cached obj older than what our own last write to `key` left
 * on the server? (resourceVersions are decimal revisions here and on
 * kube-apiserver; only ever compared for this purpose.) It is not once
 * the object shows that version, or once its informer has seen that
 * version anywhere (everything up to it was delivered: the object simply
 * did not change - e.g. after a conflict whose cause was not a newer
 * object), or once the expectation has expired. */
static bool stale(ctl *c, const char *key, json_t *obj)
{
	json_t *want = json_object_get(c->expect, key);
	api_informer *inf;
	const char *have, *seen;
	unsigned long long w, h;

	if (json_object_get(c->busy, key) != NULL)
		return true;
	if (want == NULL)
		return false;
	have = json_string_value(json_object_get(
	    json_object_get(obj, "metadata"), "resourceVersion"));
	w = strtoull(json_string_value(want), NULL, 10);
	h = have ? strtoull(have, NULL, 10) : 0;
	inf = expect_informer(c, key);
	seen = inf ? api_informer_resource_version(inf) : NULL;
	if (h >= w || (seen != NULL && strtoull(seen, NULL, 10) >= w)) {
		expect_drop(c, key);
		return false;
	}
	if (cu_time_mono_ns() / 1000000 >=
	    json_integer_value(json_object_get(c->expect_until, key))) {
		cu_info("%s: the cache did not show resourceVersion %llu "
			"within %d ms; using what it shows (%llu)",
		    key, w, EXPECT_TTL_MS, h);
		expect_drop(c, key);
		return false;
	}
	return true;
}

/* Commit the open transaction; /readyz reports the ledger failing until
 * a commit succeeds again (a full disk, a volume gone read-only). */
static int ledger_commit(ctl *c, cu_error *err)
{
	int rc = store_commit(c->ledger, err);

	if (rc == CU_OK)
		c->ledger_fail[0] = '\0';
	else
		snprintf(
		    c->ledger_fail, sizeof(c->ledger_fail), "%s", err->msg);
	return rc;
}

static int ledger_begin(ctl *c)
{
	cu_error err;

	if (c->txn)
		return CU_OK;
	if (store_begin(c->ledger, &err) != CU_OK) {
		cu_errorf("ledger: %s", err.msg);
		return err.code;
	}
	c->txn = true;
	return CU_OK;
}

/*
 * Withdraw a decision that will not be announced (its write failed or was
 * never sent): an ADMITTED Workload gives its quota back and waits again
 * with its old timestamp. One chosen as a preemption victim meanwhile
 * (EVICTING) was never admitted in the API, so its eviction is over:
 * released and requeued - leaving it EVICTING would hold its quota with
 * nothing left to release it. Failures are only logged (the Workload is
 * then reconciled again from the API).
 */
static void withdraw(ctl *c, const char *uid, int64_t now)
{
	struct que_wl *qw = que_workload_get(c->st, uid);
	cu_error err;
	int rc;

	if (qw == NULL)
		return;
	if (qw->where == QUE_WL_EVICTING)
		rc = que_workload_release(c->st, uid, now, &err);
	else if (qw->where == QUE_WL_ADMITTED)
		rc = que_workload_unadmit(c->st, uid, &err);
	else
		return;
	if (rc != CU_OK)
		cu_warn("engine: %s", err.msg);
	c->dirty_cycle = true;
}

/* ---- informer handlers -------------------------------------------- */

static void mark_job(ctl *c, char kind, const char *ns, const char *name)
{
	char *k = cu_asprintf("%c/%s/%s", kind, ns ? ns : "", name);

	if (k != NULL)
		json_object_set_new(c->dirty_jobs, k, json_true());
	cu_free(k);
}

struct ns_jobs {
	ctl *c;
	char kind;
	const char *ns;
};

static void mark_ns_job(json_t *obj, void *payload)
{
	struct ns_jobs *n = payload;
	const char *ns = jmeta(obj, "namespace");

	if (ns != NULL && strcmp(ns, n->ns) == 0)
		mark_job(n->c, n->kind, ns, jmeta(obj, "name"));
}

/* A namespace's labels decide the gate for its jobs: look at them again
 * (new decisions only; the gate never undoes an admission). */
static void mark_namespace_jobs(ctl *c, const char *ns)
{
	struct ns_jobs n = {c, 'J', ns};

	if (ns == NULL)
		return;
	if (c->inf[INF_JOB] != NULL)
		api_informer_foreach(c->inf[INF_JOB], mark_ns_job, &n);
	n.kind = 'S';
	if (c->inf[INF_JOBSET] != NULL)
		api_informer_foreach(c->inf[INF_JOBSET], mark_ns_job, &n);
}

static void mark(ctl *c, enum inf_id id, json_t *obj)
{
	if (id == INF_WL) {
		char *k = key_of(jmeta(obj, "namespace"), jmeta(obj, "name"));
		json_t *refs = json_object_get(
		    json_object_get(obj, "metadata"), "ownerReferences");
		json_t *r;
		size_t i;

		if (k != NULL)
			json_object_set_new(c->dirty_wl, k, json_true());
		cu_free(k);
		/* A Workload change is news for the job that owns it. */
		json_array_foreach(refs, i, r)
		{
			const char *kind =
			    json_string_value(json_object_get(r, "kind"));
			const char *name =
			    json_string_value(json_object_get(r, "name"));

			if (!json_is_true(json_object_get(r, "controller")) ||
			    kind == NULL || name == NULL)
				continue;
			if (strcmp(kind, "Job") == 0)
				mark_job(c, 'J', jmeta(obj, "namespace"), name);
			else if (strcmp(kind, "JobSet") == 0)
				mark_job(c, 'S', jmeta(obj, "namespace"), name);
		}
	} else if (id == INF_JOB || id == INF_JOBSET) {
		mark_job(c, id == INF_JOB ? 'J' : 'S', jmeta(obj, "namespace"),
		    jmeta(obj, "name"));
		return;
	} else {
		if (id == INF_NS)
			mark_namespace_jobs(c, jmeta(obj, "name"));
		c->dirty_config = true;
	}
	c->dirty_cycle = true;
}

static void on_add(json_t *obj, void *payload)
{
	struct inf_slot *s = payload;

	mark(s->c, s->id, obj);
}

/* Did anything but status (and bookkeeping metadata) change? */
static bool beyond_status(json_t *old, json_t *obj)
{
	static const char *const md[] = {"labels", "annotations", "finalizers",
	    "deletionTimestamp", "uid", NULL};
	json_t *om = json_object_get(old, "metadata"),
	       *nm = json_object_get(obj, "metadata");
	size_t i;

	if (!json_equal(
		json_object_get(old, "spec"), json_object_get(obj, "spec")) &&
	    (json_object_get(old, "spec") || json_object_get(obj, "spec")))
		return true;
	for (i = 0; md[i] != NULL; i++) {
		json_t *a = json_object_get(om, md[i]),
		       *b = json_object_get(nm, md[i]);

		if ((a || b) && !json_equal(a, b))
			return true;
	}
	return false;
}

static void on_update(json_t *old, json_t *obj, void *payload)
{
	struct inf_slot *s = payload;

	/* Queue status is ours (written on the tick from the engine): its
	 * echo is no news for the configuration, and re-reading it would
	 * re-examine every Workload on every status write. */
	if ((s->id == INF_CQ || s->id == INF_LQ) && old != NULL &&
	    !beyond_status(old, obj))
		return;
	mark(s->c, s->id, obj);
}

static void on_delete(json_t *obj, void *payload)
{
	struct inf_slot *s = payload;

	mark(s->c, s->id, obj);
}

/* ---- configuration into the engine -------------------------------- */

struct sync_pass {
	ctl *c;
	json_t *seen; /* names present now */
	enum inf_id id;
};

static void sels_clear(ctl *c)
{
	size_t i;

	for (i = 0; i < c->nsels; i++) {
		cu_free(c->sels[i].name);
		api_selector_dispose(&c->sels[i].sel);
	}
	cu_free(c->sels);
	c->sels = NULL;
	c->nsels = 0;
	c->capsels = 0;
}

static void sync_one(json_t *obj, void *payload)
{
	struct sync_pass *p = payload;
	ctl *c = p->c;
	cu_error err;
	int rc = CU_OK;
	const char *name = jmeta(obj, "name");

	if (name == NULL)
		return;
	switch (p->id) {
	case INF_RF: {
		struct api_resource_flavor rf;

		rc = api_resource_flavor_decode(&rf, obj, &err);
		if (rc == CU_OK) {
			rc = rec_sync_flavor(c->st, &rf, &err);
			api_resource_flavor_dispose(&rf);
		}
		break;
	}
	case INF_CQ: {
		struct api_cluster_queue cq;
		struct cq_sel *s;

		rc = api_cluster_queue_decode(&cq, obj, &err);
		if (rc != CU_OK)
			break;
		rc = rec_sync_cluster_queue(c->st, &cq, &err);
		if (rc == CU_OK &&
		    cu_grow((void **)&c->sels, &c->capsels, c->nsels + 1,
			sizeof(*c->sels)) == CU_OK) {
			s = &c->sels[c->nsels++];
			s->name = cu_strdup(name);
			s->has = cq.spec.has_namespace_selector;
			/* Move the selector out of the decoded object. */
			s->sel = cq.spec.namespace_selector;
			memset(&cq.spec.namespace_selector, 0,
			    sizeof(cq.spec.namespace_selector));
		}
		api_cluster_queue_dispose(&cq);
		break;
	}
	case INF_COHORT: {
		struct api_cohort co;

		rc = api_cohort_decode(&co, obj, &err);
		if (rc == CU_OK) {
			rc = rec_sync_cohort(c->st, &co, &err);
			api_cohort_dispose(&co);
		}
		break;
	}
	case INF_LQ: {
		struct api_local_queue lq;

		rc = api_local_queue_decode(&lq, obj, &err);
		if (rc == CU_OK) {
			rc = rec_sync_local_queue(c->st, &lq, &err);
			api_local_queue_dispose(&lq);
		}
		name = NULL;
		{
			char *k =
			    key_of(jmeta(obj, "namespace"), jmeta(obj, "name"));

			if (k != NULL && rc == CU_OK)
				json_object_set_new(p->seen, k, json_true());
			cu_free(k);
		}
		break;
	}
	default:
		return;
	}
	if (rc != CU_OK) {
		cu_warn("%s %s: %s", resources[p->id].plural,
		    jmeta(obj, "name"), err.msg);
		return;
	}
	if (name != NULL)
		json_object_set_new(p->seen, name, json_true());
}

/* Objects the engine knows but the cache no longer has are deleted. */
static void sync_deletions(ctl *c, enum inf_id id, json_t *known, json_t *seen)
{
	const char *key;
	json_t *v;
	void *tmp;
	cu_error err;

	json_object_foreach_safe(known, tmp, key, v)
	{
		int rc = CU_OK;

		if (json_object_get(seen, key) != NULL)
			continue;
		if (id == INF_RF)
			rc = que_flavor_delete(c->st, key, &err);
		else if (id == INF_CQ)
			rc = que_cq_delete(c->st, key, &err);
		else if (id == INF_COHORT)
			rc = que_cohort_delete(c->st, key, &err);
		else if (id == INF_LQ) {
			const char *slash = strchr(key, '/');
			char ns[254];

			if (slash == NULL)
				continue;
			snprintf(
			    ns, sizeof(ns), "%.*s", (int)(slash - key), key);
			rc = que_lq_delete(c->st, ns, slash + 1, &err);
		}
		if (rc != CU_OK && rc != CU_ENOTFOUND)
			cu_warn("delete %s: %s", key, err.msg);
	}
	json_object_clear(known);
	json_object_update(known, seen);
}

static void sync_config(ctl *c)
{
	static const enum inf_id order[] = {INF_RF, INF_COHORT, INF_CQ, INF_LQ};
	json_t *known[] = {
	    c->rf_names, c->cohort_names, c->cq_names, c->lq_names};
	size_t i;
	cu_error err;

	sels_clear(c);
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		struct sync_pass p = {c, json_object(), order[i]};

		api_informer_foreach(c->inf[order[i]], sync_one, &p);
		sync_deletions(c, order[i], known[i], p.seen);
		json_decref(p.seen);
	}
	if (que_rebuild(c->st, &err) != CU_OK)
		cu_warn("engine rebuild: %s", err.msg);
	c->dirty_config = false;
}

/* ---- namespace eligibility ------------------------------------------ */

static const char *ns_label(const char *key, void *payload)
{
	json_t *labels = json_object_get(
	    json_object_get((json_t *)payload, "metadata"), "labels");

	return json_string_value(json_object_get(labels, key));
}

/* Does the ClusterQueue behind LocalQueue ns/queue admit namespace ns?
 * Unknown LocalQueue or ClusterQueue: true, so that the engine reports the
 * upstream cause (a missing queue) rather than a namespace mismatch. */
static bool eligible(ctl *c, const char *ns, const char *queue)
{
	json_t *lq, *nsobj;
	const char *cq;
	size_t i;

	if (queue == NULL)
		return true;
	lq = api_informer_get(c->inf[INF_LQ], ns, queue);
	cq = json_string_value(
	    json_object_get(json_object_get(lq, "spec"), "clusterQueue"));
	if (cq == NULL)
		return true;
	for (i = 0; i < c->nsels; i++) {
		if (strcmp(c->sels[i].name, cq) != 0)
			continue;
		if (!c->sels[i].has)
			return false; /* nil selector: no namespace */
		nsobj = api_informer_get(c->inf[INF_NS], NULL, ns);
		if (nsobj == NULL)
			return false;
		return ns_selector_matches(&c->sels[i].sel, ns_label, nsobj);
	}
	return true;
}

/* ---- Workloads into the engine ------------------------------------- */

static void ledger_release(ctl *c, const char *uid, int64_t now)
{
	cu_error err;

	if (ledger_begin(c) != CU_OK)
		return;
	if (store_decision_delete(c->ledger, uid, &err) != CU_OK &&
	    err.code != CU_ENOTFOUND)
		cu_warn("ledger: %s", err.msg);
	(void)now;
}

static void forget_workload(ctl *c, const char *key, const char *uid)
{
	cu_error err;

	if (que_workload_remove(c->st, uid, &err) != CU_OK &&
	    err.code != CU_ENOTFOUND)
		cu_warn("engine: %s", err.msg);
	ledger_release(c, uid, 0);
	json_object_del(c->wl_gen, uid);
	json_object_del(c->pending_at, uid);
	json_object_del(c->pending_due, uid);
	json_object_del(c->wl_uid, key);
	c->dirty_cycle = true;
}

static void add_workload(ctl *c, const char *key, const struct api_workload *wl)
{
	cu_error err;
	int rc = rec_sync_workload(c->st, wl,
	    eligible(c, wl->meta.namespace_, wl->spec.queue_name), &err);

	if (rc != CU_OK && rc != CU_ENOTFOUND) {
		cu_warn("workload %s: %s", key, err.msg);
		return;
	}
	if (rc == CU_ENOTFOUND)
		cu_warn("workload %s: %s", key, err.msg);
	cu_debug("workload %s queued (%s)", key,
	    rec_workload_holds_quota(wl) ? "adopted" : "pending");
	json_object_set_new(c->wl_uid, key, json_string(wl->meta.uid));
	json_object_set_new(c->wl_gen, wl->meta.uid,
	    json_integer(wl->meta.has_generation ? wl->meta.generation : 0));
	c->dirty_cycle = true;
}

/* ---- carrying out a reconciler's plan -------------------------------- */

/* What the items of a plan refer to [all borrowed]. */
struct plan_ctx {
	char kind;	     /* the job's: 'J' (Job), 'S' (JobSet); 0: none */
	const char *job_key; /* "J/ns/name" / "S/ns/name", or NULL */
	json_t *job_obj;     /* the job as cached: events are about it */
	const char *wl_key;  /* "ns/name" of the reconciled Workload */
	const struct api_workload *wl; /* the reconciled Workload, or NULL */
	int64_t now;
};

static enum write_kind plan_write_kind(const struct rec_item *it)
{
	if (it->target == REC_TARGET_JOB)
		return it->op == REC_WRITE_STATUS ? W_JOB_STATUS : W_SPEC;
	switch (it->op) {
	case REC_WRITE_CREATE:
		return W_CREATE;
	case REC_WRITE_STATUS:
		return W_STATUS;
	case REC_WRITE_DELETE:
		return W_DELETE;
	default:
		return W_SPEC;
	}
}

/* One write of a plan into the write queue; it->body and it->text move
 * there. Job writes are expected under the job's key; Workload writes
 * under "wl/ns/name", owned by the job when it->for_job. */
static void apply_write(ctl *c, const struct plan_ctx *x, struct rec_item *it)
{
	enum write_kind kind = plan_write_kind(it);
	json_t *body = it->body != NULL ? it->body : json_object();

	it->body = NULL;
	if (it->target == REC_TARGET_JOB)
		queue_write_expect(c, kind, x->kind == 'J' ? &JOBS : &JOBSETS,
		    it->ns, it->name, body,
		    it->expect == REC_EXPECT_RV ? x->job_key : NULL);
	else if (it->expect == REC_EXPECT_RV)
		wl_write(c, kind, it->ns, it->name, body,
		    it->for_job ? x->job_key : NULL);
	else
		queue_write(c, kind, &WORKLOADS, it->ns, it->name, NULL, body);
	if (it->done_reason != NULL && it->text != NULL && c->nwrites > 0 &&
	    c->writes[c->nwrites - 1].patch == body) {
		c->writes[c->nwrites - 1].ev_reason = it->done_reason;
		c->writes[c->nwrites - 1].note = it->text;
		it->text = NULL;
	}
}

/* One engine action of a Workload plan on x->wl (or it->uid). */
static void apply_engine(
    ctl *c, const struct plan_ctx *x, const struct rec_item *it)
{
	cu_error err;

	switch (it->engine) {
	case REC_ENGINE_FORGET:
		forget_workload(c, x->wl_key, it->uid);
		break;
	case REC_ENGINE_ADD:
		add_workload(c, x->wl_key, x->wl);
		break;
	case REC_ENGINE_READD:
		if (que_workload_remove(c->st, x->wl->meta.uid, &err) == CU_OK)
			add_workload(c, x->wl_key, x->wl);
		break;
	case REC_ENGINE_RELEASE:
		if (que_workload_release(c->st, it->uid, x->now, &err) != CU_OK)
			cu_warn("engine: %s", err.msg);
		if (ledger_begin(c) == CU_OK &&
		    store_decision_delete(c->ledger, it->uid, &err) != CU_OK &&
		    err.code != CU_ENOTFOUND)
			cu_warn("ledger: %s", err.msg);
		c->dirty_cycle = true;
		break;
	case REC_ENGINE_SET_ELIGIBLE:
		if (que_workload_set_namespace_eligible(
			c->st, x->wl->meta.uid, it->eligible, &err) != CU_OK)
			cu_warn("engine: %s", err.msg);
		c->dirty_cycle = true;
		break;
	}
}

/* Carry out plan [consumed: freed here] in order: writes into the write
 * queue (sent after the ledger commit), events, log lines, engine
 * actions. */
static void apply_plan(ctl *c, const struct plan_ctx *x, struct rec_plan *plan)
{
	size_t i;

	for (i = 0; i < plan->n; i++) {
		struct rec_item *it = &plan->items[i];

		switch (it->kind) {
		case REC_ITEM_WRITE:
			apply_write(c, x, it);
			break;
		case REC_ITEM_EVENT:
			emit(c, x->job_obj, it->type, it->reason, it->text);
			break;
		case REC_ITEM_WARN:
			cu_warn("%s", it->text);
			break;
		case REC_ITEM_ENGINE:
			apply_engine(c, x, it);
			break;
		}
	}
	rec_plan_free(plan);
}

/* ---- the Workload reconciler: inputs, rec_workload_reconcile, plan ---- */

static bool view_eligible(const char *ns, const char *queue, void *payload)
{
	return eligible(payload, ns, queue);
}

static void reconcile_workload(ctl *c, const char *key, int64_t now)
{
	const char *slash = strchr(key, '/');
	char ns[254];
	json_t *obj;
	struct api_workload wl;
	struct rec_wl_view v;
	struct rec_plan plan;
	struct plan_ctx x;
	struct que_wl *qw;
	cu_error err;
	bool have = false;

	if (slash == NULL)
		return;
	snprintf(ns, sizeof(ns), "%.*s", (int)(slash - key), key);
	obj = api_informer_get(c->inf[INF_WL], ns, slash + 1);
	if (obj != NULL) {
		char *ek = cu_asprintf("wl/%s", key);
		bool st = ek != NULL && stale(c, ek, obj);

		cu_free(ek);
		if (st)
			return; /* our own write has not reached the cache */
		if (api_workload_decode(&wl, obj, &err) != CU_OK) {
			cu_warn("workload %s: %s", key, err.msg);
			return;
		}
		have = true;
	}
	memset(&v, 0, sizeof(v));
	v.engine_uid = json_string_value(json_object_get(c->wl_uid, key));
	v.eligible = view_eligible;
	v.payload = c;
	if (have) {
		v.in_flight =
		    json_object_get(c->in_flight, wl.meta.uid) != NULL;
		qw = que_workload_get(c->st, wl.meta.uid);
		v.queued = qw != NULL;
		v.where = qw != NULL ? qw->where : QUE_WL_BLOCKED;
		v.namespace_eligible = qw != NULL && qw->namespace_eligible;
		v.queued_generation =
		    json_integer_value(json_object_get(c->wl_gen, wl.meta.uid));
	}
	rec_plan_init(&plan);
	if (rec_workload_reconcile(&v, have ? &wl : NULL, &plan, &err) != CU_OK)
		cu_warn("workload %s: %s", key, err.msg);
	memset(&x, 0, sizeof(x));
	x.wl_key = key;
	x.wl = have ? &wl : NULL;
	x.now = now;
	apply_plan(c, &x, &plan);
	if (have)
		api_workload_dispose(&wl);
}

static void mark_all_workloads(json_t *obj, void *payload)
{
	ctl *c = payload;

	mark(c, INF_WL, obj);
}

/* ---- the scheduling cycle ------------------------------------------ */

static int decode_cached(
    ctl *c, const char *ns, const char *name, struct api_workload *wl)
{
	json_t *obj = api_informer_get(c->inf[INF_WL], ns, name);
	cu_error err = {0}; /* an out parameter; cppcheck's CTU flags it */

	if (obj == NULL)
		return CU_ENOTFOUND;
	if (api_workload_decode(wl, obj, &err) != CU_OK) {
		cu_warn("workload %s/%s: %s", ns, name, err.msg);
		return err.code;
	}
	return CU_OK;
}

static int record_admission(ctl *c, const struct que_wl *qw,
    const struct adm_decision *d, int64_t now, cu_error *err)
{
	store_podset *ps = cu_calloc(d->n_podsets + 1, sizeof(*ps));
	store_resource **rs = cu_calloc(d->n_podsets + 1, sizeof(*rs));
	store_decision sd;
	size_t i, j;
	int rc = CU_ENOMEM;

	if (ps == NULL || rs == NULL)
		goto out;
	for (i = 0; i < d->n_podsets; i++) {
		rs[i] = cu_calloc(d->podsets[i].n_uses + 1, sizeof(**rs));
		if (rs[i] == NULL)
			goto out;
		for (j = 0; j < d->podsets[i].n_uses; j++) {
			rs[i][j].resource = d->podsets[i].uses[j].resource;
			rs[i][j].flavor = d->podsets[i].uses[j].flavor;
			rs[i][j].milli = d->podsets[i].uses[j].usage;
		}
		ps[i].name = d->podsets[i].name;
		ps[i].count = d->podsets[i].count;
		ps[i].n_resources = d->podsets[i].n_uses;
		ps[i].resources = rs[i];
	}
	memset(&sd, 0, sizeof(sd));
	sd.uid = qw->uid;
	sd.ns = qw->ns;
	sd.name = qw->name;
	sd.cluster_queue = d->cluster_queue;
	sd.state = STORE_RESERVED;
	sd.decided_ns = now;
	sd.n_podsets = d->n_podsets;
	sd.podsets = ps;
	rc = ledger_begin(c);
	if (rc == CU_OK)
		rc = store_decision_put(c->ledger, &sd, NULL, err);
out:
	if (rc == CU_ENOMEM)
		cu_error_set(err, CU_ENOMEM, "ledger record: out of memory");
	for (i = 0; rs != NULL && i < d->n_podsets; i++)
		cu_free(rs[i]);
	cu_free(rs);
	cu_free(ps);
	return rc;
}

static void decide_admit(ctl *c, const struct adm_decision *d, int64_t now)
{
	struct que_wl *qw = que_workload_get(c->st, d->uid);
	struct api_workload wl;
	json_t *patch = NULL;
	cu_error err;

	if (qw == NULL)
		return;
	{
		/* Our own write to it (a pending status) has not reached the
		 * cache: a patch on the older object would only conflict. The
		 * decision stands (quota held, ledger first); its announcement
		 * waits for the cache (announce_deferred). Withdrawing it would
		 * leave the Workload at the head of its queue, blocking it. */
		char *ek = cu_asprintf("wl/%s/%s", qw->ns, qw->name);
		json_t *obj =
		    api_informer_get(c->inf[INF_WL], qw->ns, qw->name);
		bool st = ek == NULL || (obj != NULL && stale(c, ek, obj));

		cu_free(ek);
		if (st && obj != NULL &&
		    record_admission(c, qw, d, now, &err) == CU_OK) {
			json_object_set_new(c->in_flight, d->uid, json_true());
			json_object_set_new(c->deferred, d->uid, json_true());
			return;
		}
		if (st) {
			withdraw(c, d->uid, now);
			return;
		}
	}
	if (decode_cached(c, qw->ns, qw->name, &wl) != CU_OK) {
		withdraw(c, d->uid, now);
		return;
	}
	if (rec_wl_status_admit(&wl, d, now, &patch, &err) != CU_OK ||
	    record_admission(c, qw, d, now, &err) != CU_OK) {
		cu_warn("admit %s/%s: %s", qw->ns, qw->name, err.msg);
		json_decref(patch);
		withdraw(c, d->uid, now);
		api_workload_dispose(&wl);
		return;
	}
	if (patch != NULL) {
		char *ek = cu_asprintf("wl/%s/%s", qw->ns, qw->name);

		json_object_set_new(c->in_flight, d->uid, json_true());
		queue_write(
		    c, W_ADMIT, &WORKLOADS, qw->ns, qw->name, d->uid, patch);
		if (c->nwrites > 0 &&
		    c->writes[c->nwrites - 1].patch == patch) {
			c->writes[c->nwrites - 1].expect = ek;
			c->writes[c->nwrites - 1].note = cu_asprintf(
			    "Quota reserved in ClusterQueue %s, wait time "
			    "since queued was %llds",
			    d->cluster_queue,
			    (long long)((now - qw->queue_ts) / 1000000000));
		} else {
			cu_free(ek);
		}
	}
	api_workload_dispose(&wl);
}

static bool bucket_take(ctl *c, struct bucket *b, int64_t now_ms);

/* The engine reports a pending reason once, when it changes; it is kept
 * here and written by write_due_pending() once due. */
static void decide_pending(ctl *c, const struct adm_decision *d, int64_t now)
{
	(void)now;
	json_object_set_new(c->pending_due, d->uid,
	    json_pack("[s,s]", adm_reason_string(d->reason),
		d->message ? d->message : ""));
}

/*
 * Writing every pending reason as it changes would cost a write per
 * Workload per cycle; users read the reason of Workloads that wait, so it
 * is written once a Workload has waited pending_status_delay_ms, then at
 * most once per pending_status_period_ms.
 */
static void write_due_pending(ctl *c, int64_t now)
{
	const char *uid;
	json_t *v;
	void *tmp;
	int64_t now_ms = now / 1000000;

	json_object_foreach_safe(c->pending_due, tmp, uid, v)
	{
		struct que_wl *qw = que_workload_get(c->st, uid);
		json_t *last = json_object_get(c->pending_at, uid);
		struct api_workload wl;
		json_t *patch = NULL;
		cu_error err;

		if (qw == NULL || qw->where == QUE_WL_ADMITTED ||
		    qw->where == QUE_WL_EVICTING || qw->where == QUE_WL_HEAD) {
			json_object_del(c->pending_due, uid);
			continue;
		}
		if (now - qw->created_ns <
			(int64_t)c->opts.pending_status_delay_ms * 1000000 ||
		    (last != NULL && now_ms - json_integer_value(last) <
					 c->opts.pending_status_period_ms))
			continue;
		if (!bucket_take(c, &c->pending_reports, now_ms))
			break; /* the oldest due ones go first next time */
		if (decode_cached(c, qw->ns, qw->name, &wl) != CU_OK) {
			json_object_del(c->pending_due, uid);
			continue;
		}
		if (rec_wl_status_pending(&wl,
			json_string_value(json_array_get(v, 0)),
			json_string_value(json_array_get(v, 1)), now, &patch,
			&err) != CU_OK)
			cu_warn("pending %s/%s: %s", qw->ns, qw->name, err.msg);
		else if (patch != NULL) {
			json_object_set_new(
			    c->pending_at, uid, json_integer(now_ms));
			wl_write(c, W_STATUS, qw->ns, qw->name, patch, NULL);
		}
		api_workload_dispose(&wl);
		json_object_del(c->pending_due, uid);
	}
}

/* The ledger records that uid's eviction is in the API (a Workload
 * without a decision there is not an error). */
static void ledger_evicting(ctl *c, const char *uid, int64_t now)
{
	cu_error err;

	if (ledger_begin(c) == CU_OK &&
	    store_decision_set_state(
		c->ledger, uid, STORE_EVICTING, now, &err) != CU_OK &&
	    err.code != CU_ENOTFOUND)
		cu_warn("ledger: %s", err.msg);
}

/* A victim's eviction cannot be written now: it is ADMITTED again and the
 * preemption is decided anew in a later cycle (with a fresh cache). */
static void unevict(ctl *c, struct que_wl *v, const char *why)
{
	cu_error err;

	cu_debug("preemption of %s/%s postponed: %s", v->ns, v->name, why);
	if (que_workload_unevict(c->st, v->uid, &err) != CU_OK)
		cu_warn("engine: %s", err.msg);
}

/*
 * Evict the victims of a preemption. The engine marked them EVICTING; what
 * the API shows decides what is written:
 *  - an admission recorded but not announced (deferred): it never reached
 *    the API, so it is withdrawn - released and requeued, nothing written;
 *  - an admission write in flight, or our own last write to the victim
 *    not yet in the cache: a status patch would be built on an object
 *    older than the server's (and conflict, or evict a Workload that was
 *    never admitted there): the victim is ADMITTED again and the
 *    preemption decided anew once the cache has caught up (that update
 *    marks the cycle);
 *  - else the Evicted patch (W_EVICT); if it fails, on_write_done makes
 *    the victim ADMITTED again. A victim left EVICTING without an
 *    eviction in the API would hold its quota until its job ends on its
 *    own, and the preemptor would wait that long.
 * The ledger records EVICTING and the Preempted event is sent once the
 * eviction is written.
 */
static void decide_preempt(ctl *c, const struct adm_decision *d, int64_t now)
{
	struct que_wl *pre = que_workload_get(c->st, d->uid);
	size_t i;
	cu_error err;

	for (i = 0; pre != NULL && i < d->n_victims; i++) {
		struct que_wl *v = que_workload_get(c->st, d->victims[i].uid);
		struct api_workload wl;
		struct rec_eviction ev;
		json_t *patch = NULL, *obj;
		char *msg, *ek;
		bool st;

		if (v == NULL || v->where != QUE_WL_EVICTING)
			continue;
		if (json_object_get(c->deferred, v->uid) != NULL) {
			cu_debug("preemption victim %s/%s was never announced; "
				 "withdrawn",
			    v->ns, v->name);
			json_object_del(c->deferred, v->uid);
			json_object_del(c->in_flight, v->uid);
			ledger_release(c, v->uid, now);
			withdraw(c, v->uid, now);
			continue;
		}
		if (json_object_get(c->in_flight, v->uid) != NULL) {
			unevict(c, v, "its admission is in flight");
			continue;
		}
		ek = cu_asprintf("wl/%s/%s", v->ns, v->name);
		obj = api_informer_get(c->inf[INF_WL], v->ns, v->name);
		st = ek == NULL || (obj != NULL && stale(c, ek, obj));
		if (st || decode_cached(c, v->ns, v->name, &wl) != CU_OK) {
			unevict(c, v,
			    st ? "the cache is behind our write"
			       : "not in the cache");
			cu_free(ek);
			continue;
		}
		msg =
		    rec_preemption_message(pre->uid, NULL, d->victims[i].reason,
			d->cluster_queue, d->victims[i].cluster_queue);
		ev.reason = REC_EVICTED_PREEMPTED;
		ev.message = msg ? msg : "Preempted";
		ev.preempted_reason =
		    adm_preempt_reason_string(d->victims[i].reason);
		if (rec_wl_status_evict(&wl, &ev, now, &patch, &err) != CU_OK) {
			cu_warn("evict %s/%s: %s", v->ns, v->name, err.msg);
			unevict(c, v, "no eviction patch");
		} else if (patch != NULL) {
			queue_write_expect(
			    c, W_EVICT, &WORKLOADS, v->ns, v->name, patch, ek);
			if (c->nwrites > 0 &&
			    c->writes[c->nwrites - 1].patch == patch) {
				struct qwrite *w = &c->writes[c->nwrites - 1];

				w->uid = cu_strdup(v->uid);
				w->ev_reason = "Preempted";
				w->note = cu_strdup(ev.message);
			}
		} else {
			/* Evicted already (another reason): its release is
			 * under way. */
			ledger_evicting(c, v->uid, now);
		}
		if (c->metrics != NULL && patch != NULL)
			ctl_metric_inc(c->metrics,
			    CTL_M_EVICTED_WORKLOADS_TOTAL,
			    CTL_LV(v->cq ? v->cq->name : "",
				REC_EVICTED_PREEMPTED, "",
				wl.spec.has_priority_class_ref &&
					wl.spec.priority_class_ref.name
				    ? wl.spec.priority_class_ref.name
				    : ""));
		if (c->metrics != NULL && v->where == QUE_WL_EVICTING)
			ctl_metric_inc(c->metrics,
			    CTL_M_PREEMPTED_WORKLOADS_TOTAL,
			    CTL_LV(d->cluster_queue ? d->cluster_queue : "",
				adm_preempt_reason_string(
				    d->victims[i].reason)));
		cu_free(msg);
		cu_free(ek);
		api_workload_dispose(&wl);
	}
	decide_pending(c, d, now);
}

static void run_cycle(ctl *c, int64_t now)
{
	struct adm_result r;
	size_t i, nwrites = c->nwrites;
	cu_error err;

	adm_result_init(&r);
	if (adm_cycle(c->st, now, &r, &err) != CU_OK)
		cu_warn("admission cycle: %s", err.msg);
	if (r.n > 0)
		cu_debug("cycle: %zu heads, %zu admitted, %zu decisions",
		    r.heads, r.admitted, r.n);
	for (i = 0; i < r.n; i++) {
		const struct adm_decision *d = &r.v[i];

		switch (d->kind) {
		case ADM_ADMIT:
			decide_admit(c, d, now);
			break;
		case ADM_PREEMPT:
			decide_preempt(c, d, now);
			break;
		case ADM_PENDING:
			decide_pending(c, d, now);
			break;
		}
	}
	if (c->metrics != NULL) {
		ctl_metric_add(c->metrics, CTL_M_ADMISSION_ATTEMPTS_TOTAL,
		    CTL_LV("success"), r.admitted);
		ctl_metric_add(c->metrics, CTL_M_ADMISSION_ATTEMPTS_TOTAL,
		    CTL_LV("inadmissible"), r.heads - r.admitted);
	}
	/* Heads that were requeued may fit after the writes land; the
	 * engine asks for more work through its own dirty flags. Decisions
	 * withdrawn because the cache is behind our own write (decide_admit)
	 * wait for that cache update, which marks the cycle: running it
	 * again at once would decide the same thing in a loop. */
	c->dirty_cycle = r.heads > 0 && r.admitted > 0 && c->nwrites > nwrites;
	adm_result_dispose(&r);
}

/* ---- writes --------------------------------------------------------- */

static void stop_writes_done(ctl *c);

static void inflight_free(struct inflight *f)
{
	cu_free(f->uid);
	cu_free(f->expect);
	cu_free(f->owner);
	cu_free(f->cq);
	cu_free(f->ns);
	cu_free(f->name);
	cu_free(f->note);
	cu_free(f);
}

/* The event a successful write announces, about the object as cached. */
static void write_event(ctl *c, struct inflight *f)
{
	enum inf_id id = f->res == &WORKLOADS ? INF_WL
			 : f->res == &JOBS    ? INF_JOB
					      : INF_JOBSET;
	json_t *obj = c->inf[id] && f->ns && f->name
			  ? api_informer_get(c->inf[id], f->ns, f->name)
			  : NULL;

	if (f->kind == W_ADMIT) {
		emit(c, obj, "Normal", "QuotaReserved", f->note);
		emit(c, obj, "Normal", "Admitted", "Admitted by ClusterQueue");
	} else if (f->ev_reason != NULL) {
		emit(c, obj, "Normal", f->ev_reason, f->note);
	}
}

static void on_write_done(const struct api_response *resp, void *payload)
{
	struct inflight *f = payload;
	ctl *c = f->c;
	cu_error err;
	int64_t now = cu_time_now_ns();

	c->writes_in_flight--;
	if (f->main)
		c->main_writes_in_flight--;
	if (c->freeing || resp->canceled)
		goto out;
	if (f->expect != NULL) {
		const char *rv = json_string_value(
		    json_object_get(json_object_get(resp->body, "metadata"),
			"resourceVersion"));

		json_object_del(c->busy, f->expect);
		if (resp->err == CU_OK && rv != NULL)
			expect_set(c, f->expect, rv);
		/* A conflict: our cache was behind. Wait for a newer object
		 * rather than retrying against the same old one. */
		if (resp->err == CU_ECONFLICT && f->sent_rv > 0) {
			char next[32];

			snprintf(next, sizeof(next), "%llu", f->sent_rv + 1);
			expect_set(c, f->expect, next);
		}
		/* Look again once the cache has caught up; a rejected write
		 * (other than a conflict) only after a pause, or the same
		 * state would send it again in a loop. */
		if (resp->err != CU_OK && resp->err != CU_ECONFLICT) {
			json_object_set_new(c->retry_at, f->expect,
			    json_integer(now / 1000000 + 2000));
			if (f->owner != NULL)
				json_object_set_new(c->retry_at, f->owner,
				    json_integer(now / 1000000 + 2000));
			cu_warn("write %s: %d %s %s (retried in 2 s)",
			    resp->path, resp->code, resp->reason,
			    resp->message);
		} else if (f->expect[0] == 'J' || f->expect[0] == 'S')
			json_object_set_new(
			    c->dirty_jobs, f->expect, json_true());
		else if (strncmp(f->expect, "wl/", 3) == 0) {
			json_object_set_new(
			    c->dirty_wl, f->expect + 3, json_true());
			if (f->owner != NULL)
				json_object_set_new(
				    c->dirty_jobs, f->owner, json_true());
		}
	}
	if (resp->err == CU_OK && f->note != NULL)
		write_event(c, f);
	if (f->kind == W_ADMIT) {
		json_object_del(c->in_flight, f->uid);
		if (resp->err == CU_OK) {
			if (ledger_begin(c) == CU_OK &&
			    store_decision_set_state(c->ledger, f->uid,
				STORE_ADMITTED, now, &err) != CU_OK)
				cu_warn("ledger: %s", err.msg);
			if (c->metrics != NULL && f->cq != NULL) {
				ctl_metric_inc(c->metrics,
				    CTL_M_ADMITTED_WORKLOADS_TOTAL,
				    CTL_LV(f->cq, ""));
				ctl_metric_inc(c->metrics,
				    CTL_M_QUOTA_RESERVED_WORKLOADS_TOTAL,
				    CTL_LV(f->cq, ""));
				ctl_metric_observe(c->metrics,
				    CTL_M_ADMISSION_WAIT_TIME_SECONDS,
				    CTL_LV(f->cq, ""),
				    (double)(now - f->created_ns) / 1e9);
			}
		} else {
			/* Not announced: undo the decision (the cached
			 * Workload will be reconciled again). */
			cu_warn("admission write %s: %s %s", f->uid,
			    resp->reason, resp->message);
			withdraw(c, f->uid, now);
			ledger_release(c, f->uid, now);
		}
		c->dirty_cycle = true;
	} else if (f->kind == W_EVICT && f->uid != NULL) {
		struct que_wl *qw = que_workload_get(c->st, f->uid);

		if (resp->err == CU_OK) {
			ledger_evicting(c, f->uid, now);
		} else if (qw != NULL && qw->where == QUE_WL_EVICTING) {
			/* The preemption did not happen: decided anew. */
			cu_info("eviction of %s/%s not written (%d %s); "
				"preemption decided again",
			    qw->ns, qw->name, resp->code, resp->reason);
			if (que_workload_unevict(c->st, f->uid, &err) != CU_OK)
				cu_warn("engine: %s", err.msg);
			c->dirty_cycle = true;
		}
	} else if (resp->err != CU_OK && resp->err != CU_ENOTFOUND) {
		cu_warn("write %s: %d %s %s", resp->path, resp->code,
		    resp->reason, resp->message);
	}
out:
	inflight_free(f);
	if (c->stopping && c->writes_in_flight == 0 && !c->freeing)
		stop_writes_done(c);
}

static int send_write(
    ctl *c, struct qwrite *w, struct inflight *f, cu_error *err)
{
	api_client *cl = w->res == &EVENTS ? c->ev_client : c->client;

	switch (w->kind) {
	case W_SPEC:
		return api_merge_patch(NULL, cl, w->res, w->ns, w->name,
		    w->patch, false, on_write_done, f, err);
	case W_CREATE:
		return api_create(
		    NULL, cl, w->res, w->ns, w->patch, on_write_done, f, err);
	case W_DELETE:
		return api_delete(NULL, c->client, w->res, w->ns, w->name, NULL,
		    on_write_done, f, err);
	case W_ADMIT:
	case W_STATUS:
	case W_EVICT:
	case W_CQ:
	case W_JOB_STATUS:
		break;
	}
	return api_merge_patch(NULL, c->client, w->res, w->ns, w->name,
	    w->patch, true, on_write_done, f, err);
}

#define LEDGER_LAZY_MS 500
#define REQUEUE_ALL_S 10

static void flush(ctl *c)
{
	size_t i;
	cu_error err;

	/* Invariant 1: the ledger first. A turn that announces nothing (only
	 * bookkeeping: a write answered, a Workload finished) leaves its
	 * changes to the next commit, at most LEDGER_LAZY_MS later: one fsync
	 * per announcing turn, not one per answer. Losing them in a crash is
	 * safe, the restart reconciles the ledger with the API (store.h). */
	bool announces =
	    c->stopping ||
	    cu_time_mono_ns() / 1000000 - c->commit_ms >= LEDGER_LAZY_MS;

	for (i = 0; i < c->nwrites && !announces; i++)
		announces = c->writes[i].res == &WORKLOADS ||
			    c->writes[i].res == &JOBS ||
			    c->writes[i].res == &JOBSETS;
	if (c->txn && announces) {
		int64_t t0 = cu_time_mono_ns();

		c->txn = false;
		c->commit_ms = t0 / 1000000;
		if (ledger_commit(c, &err) != CU_OK) {
			cu_errorf("ledger commit: %s; decisions of this turn "
				  "are withdrawn",
			    err.msg);
			for (i = 0; i < c->nwrites; i++)
				if (c->writes[i].kind == W_ADMIT) {
					withdraw(c, c->writes[i].uid,
					    cu_time_now_ns());
					json_object_del(
					    c->in_flight, c->writes[i].uid);
				}
			for (i = 0; i < c->nwrites; i++)
				if (c->writes[i].kind == W_ADMIT) {
					json_decref(c->writes[i].patch);
					c->writes[i].patch = NULL;
				}
		}
		if (c->metrics != NULL)
			ctl_metric_observe(c->metrics,
			    CTL_M_CUEUE_STORE_COMMIT_SECONDS, CTL_LV0,
			    (double)(cu_time_mono_ns() - t0) / 1e9);
	}
	for (i = 0; i < c->nwrites; i++) {
		struct qwrite *w = &c->writes[i];
		struct inflight *f;

		if (w->patch == NULL)
			goto next;
		f = cu_calloc(1, sizeof(*f));
		if (f == NULL)
			goto next;
		f->c = c;
		f->kind = w->kind;
		f->uid = w->uid ? cu_strdup(w->uid) : NULL;
		f->expect = w->expect;
		w->expect = NULL;
		f->owner = w->owner;
		w->owner = NULL;
		{
			const char *rv = json_string_value(json_object_get(
			    json_object_get(w->patch, "metadata"),
			    "resourceVersion"));

			f->sent_rv = rv ? strtoull(rv, NULL, 10) : 0;
		}
		if (w->kind == W_ADMIT && w->uid != NULL) {
			struct que_wl *qw = que_workload_get(c->st, w->uid);

			f->created_ns = qw ? qw->created_ns : 0;
			f->cq = qw && qw->cq ? cu_strdup(qw->cq->name) : NULL;
		}
		if (w->note != NULL) {
			f->ns = w->ns ? cu_strdup(w->ns) : NULL;
			f->name = w->name ? cu_strdup(w->name) : NULL;
			f->note = w->note;
			f->ev_reason = w->ev_reason;
			f->res = w->res;
			w->note = NULL;
		}
		if (send_write(c, w, f, &err) != CU_OK) {
			cu_warn("write %s: %s", w->name, err.msg);
			if (w->kind == W_ADMIT && w->uid != NULL) {
				withdraw(c, w->uid, cu_time_now_ns());
				json_object_del(c->in_flight, w->uid);
				ledger_release(c, w->uid, 0);
			}
			if (w->kind == W_EVICT && w->uid != NULL) {
				struct que_wl *v =
				    que_workload_get(c->st, w->uid);

				if (v != NULL && v->where == QUE_WL_EVICTING)
					unevict(c, v, "the write was not sent");
			}
			if (f->expect != NULL)
				json_object_del(c->busy, f->expect);
			inflight_free(f);
		} else {
			c->writes_in_flight++;
			f->main = w->res != &EVENTS;
			if (f->main)
				c->main_writes_in_flight++;
		}
	next:
		json_decref(w->patch);
		cu_free(w->ns);
		cu_free(w->name);
		cu_free(w->uid);
		cu_free(w->expect);
		cu_free(w->owner);
		cu_free(w->note);
	}
	c->nwrites = 0;
	/* A failure path above may have reopened the transaction. */
	if (c->txn) {
		c->txn = false;
		if (ledger_commit(c, &err) != CU_OK)
			cu_errorf("ledger commit: %s", err.msg);
	}
}

/* ---- ClusterQueue and LocalQueue status ---------------------------- */

/* Set the Active condition in st [borrowed], keeping lastTransitionTime
 * unless the status flips. */
static void set_active(
    json_t *st, bool active, const char *reason, const char *msg)
{
	const char *status = active ? "True" : "False";
	json_t *conds = json_object_get(st, "conditions"), *cond = NULL, *e;
	const char *old;
	size_t i;
	char now[CU_TIME_RFC3339_LEN];

	if (!json_is_array(conds)) {
		conds = json_array();
		json_object_set_new(st, "conditions", conds);
	}
	json_array_foreach(conds, i, e)
	{
		const char *t = json_string_value(json_object_get(e, "type"));

		if (t != NULL && strcmp(t, "Active") == 0)
			cond = e;
	}
	if (cond == NULL) {
		cond = json_object();
		json_object_set_new(cond, "type", json_string("Active"));
		json_array_append_new(conds, cond);
	}
	old = json_string_value(json_object_get(cond, "status"));
	if (old == NULL || strcmp(old, status) != 0) {
		cu_time_format_rfc3339(cu_time_now_ns(), now);
		json_object_set_new(
		    cond, "lastTransitionTime", json_string(now));
	}
	json_object_set_new(cond, "status", json_string(status));
	json_object_set_new(
	    cond, "reason", json_string(reason ? reason : "Unknown"));
	json_object_set_new(cond, "message", json_string(msg));
}

/* byflv [borrowed]: flavor -> [resource usage]; appends entry [stolen]. */
static void add_flavor_usage(json_t *byflv, const char *flavor, json_t *entry)
{
	json_t *list = json_object_get(byflv, flavor);

	if (list == NULL) {
		list = json_array();
		json_object_set_new(byflv, flavor, list);
	}
	json_array_append_new(list, entry);
}

/* Set flavorsReservation/flavorsUsage from byflv [stolen] and the
 * workload counts in a CQ or LQ status st [borrowed]. */
static void set_usage_and_counts(json_t *st, json_t *byflv, size_t pending,
    size_t reserving, size_t admitted)
{
	json_t *res = json_array(), *v;
	const char *fl;

	json_object_foreach(byflv, fl, v)
	{
		json_array_append_new(
		    res, json_pack("{s:s, s:O}", "name", fl, "resources", v));
	}
	json_decref(byflv);
	json_object_set(st, "flavorsReservation", res);
	json_object_set_new(st, "flavorsUsage", res);
	json_object_set_new(
	    st, "pendingWorkloads", json_integer((json_int_t)pending));
	json_object_set_new(
	    st, "reservingWorkloads", json_integer((json_int_t)reserving));
	json_object_set_new(
	    st, "admittedWorkloads", json_integer((json_int_t)admitted));
}

static json_t *cq_status(ctl *c, struct que_cq *cq, json_t *cached)
{
	json_t *st = json_deep_copy(json_object_get(cached, "status"));
	uint32_t fr, nfr = que_fr_count(c->st);
	json_t *byflv = json_object();

	if (!json_is_object(st)) {
		json_decref(st);
		st = json_object();
	}
	for (fr = 0; fr < nfr && fr < cq->node.ncells; fr++) {
		const struct que_cell *cell = &cq->node.cells[fr];
		const char *rs;
		char q[64], b[64];
		int64_t borrowed;

		if (!cell->q.defined)
			continue;
		rs = que_resource_name(c->st, que_fr_resource(c->st, fr));
		borrowed = cell->usage > cell->q.nominal
			       ? cell->usage - cell->q.nominal
			       : 0;
		adm_format_quantity(rs, cell->usage, q, sizeof(q));
		adm_format_quantity(rs, borrowed, b, sizeof(b));
		add_flavor_usage(byflv,
		    que_flavor_by_id(c->st, que_fr_flavor(c->st, fr))->name,
		    json_pack("{s:s, s:s, s:s}", "name", rs, "total", q,
			"borrowed", b));
	}
	set_usage_and_counts(st, byflv, cq->n_heap + cq->inadmissible.n,
	    cq->admitted.n, cq->admitted.n);
	set_active(st, cq->active, cq->active ? "Ready" : cq->inactive_reason,
	    cq->active ? "Can admit new workloads"
		       : "Can't admit new workloads");
	return st;
}

/* A queue status write for key is in flight, not yet in the cache, or
 * waiting to be retried. */
static bool status_busy(ctl *c, const char *key, json_t *cached)
{
	return stale(c, key, cached) ||
	       json_object_get(c->retry_at, key) != NULL;
}

/* Kueue's per-ClusterQueue gauges: status and, per flavor and resource,
 * nominal quota, reservation and usage (in units: cores, bytes). */
static void cq_metrics(ctl *c, struct que_cq *cq)
{
	static const char *const states[] = {
	    "pending", "active", "terminating"};
	const char *now = cq->active ? "active" : "pending";
	const char *cohort = cq->cohort_name ? cq->cohort_name : "";
	uint32_t fr, nfr = que_fr_count(c->st);
	size_t i;

	for (i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		ctl_metric_set(c->metrics, CTL_M_CLUSTER_QUEUE_STATUS,
		    CTL_LV(cq->name, states[i]),
		    strcmp(states[i], now) == 0 ? 1.0 : 0.0);
	for (fr = 0; fr < nfr && fr < cq->node.ncells; fr++) {
		const struct que_cell *cell = &cq->node.cells[fr];
		const char *fl, *rs;

		if (!cell->q.defined)
			continue;
		fl = que_flavor_by_id(c->st, que_fr_flavor(c->st, fr))->name;
		rs = que_resource_name(c->st, que_fr_resource(c->st, fr));
		ctl_metric_set(c->metrics, CTL_M_CLUSTER_QUEUE_NOMINAL_QUOTA,
		    CTL_LV(cohort, cq->name, fl, rs),
		    (double)cell->q.nominal / 1000.0);
		ctl_metric_set(c->metrics,
		    CTL_M_CLUSTER_QUEUE_RESOURCE_RESERVATION,
		    CTL_LV(cohort, cq->name, fl, rs),
		    (double)cell->usage / 1000.0);
		ctl_metric_set(c->metrics, CTL_M_CLUSTER_QUEUE_RESOURCE_USAGE,
		    CTL_LV(cohort, cq->name, fl, rs),
		    (double)cell->usage / 1000.0);
	}
}

/* Status reports may use clientConnection.qps / 25 writes per second
 * (1 to 5), half for queue status and half for pending reasons, each
 * with a burst of 10: a small cluster sees every change at once, a busy
 * one keeps its write budget for admissions (one status write each). */
static void report_budget_init(ctl *c)
{
	double rate = c->cfg->client_connection.qps / 25.0;

	if (!(rate >= 1.0))
		rate = 1.0;
	if (rate > 5.0)
		rate = 5.0;
	c->queue_reports.rate = c->pending_reports.rate = rate / 2.0;
	c->queue_reports.burst = c->pending_reports.burst = 10.0;
	c->queue_reports.tokens = c->pending_reports.tokens = 10.0;
}

/* Writes waiting in the main client (its rate limiter) from which
 * reports hold back: decisions go first. */
#define REPORT_BACKLOG 8
/* While the client is backlogged, reports refill at this share of their
 * rate: never starved, but they take few of the tokens admissions wait
 * for (the QPS-bound benchmark is one write per admission). */
#define REPORT_BACKLOG_SHARE 0.2

static bool bucket_take(ctl *c, struct bucket *b, int64_t now_ms)
{
	double rate = c->main_writes_in_flight >= REPORT_BACKLOG
			  ? b->rate * REPORT_BACKLOG_SHARE
			  : b->rate;

	if (b->at_ms > 0 && now_ms > b->at_ms)
		b->tokens += rate * (double)(now_ms - b->at_ms) / 1000.0;
	if (b->tokens > b->burst)
		b->tokens = b->burst;
	b->at_ms = now_ms;
	if (b->tokens < 1.0)
		return false;
	b->tokens -= 1.0;
	return true;
}

/* Does want [borrowed] change the Active condition's status of the
 * queue status have [borrowed; may be NULL]? A queue becoming (in)active
 * is a transition users and tools wait for (kubectl wait, a runner
 * waiting to submit): written at once, outside the report budget. There
 * are as many of them as configuration changes, not as admissions. */
static const char *active_status(json_t *status)
{
	json_t *cond;
	size_t i;

	json_array_foreach(json_object_get(status, "conditions"), i, cond)
	{
		const char *t =
		    json_string_value(json_object_get(cond, "type"));

		if (t != NULL && strcmp(t, "Active") == 0)
			return json_string_value(
			    json_object_get(cond, "status"));
	}
	return NULL;
}

static bool active_changed(json_t *have, json_t *want)
{
	const char *a = active_status(have), *b = active_status(want);

	return (a == NULL) != (b == NULL) ||
	       (a != NULL && b != NULL && strcmp(a, b) != 0);
}

/* Offer a queue status write (patch [consumed]); report_flush writes the
 * offers whose last report is oldest while the budget lasts. */
static void report_offer(ctl *c, const struct api_resource *res, const char *ns,
    const char *name, json_t *patch, const char *key, bool urgent)
{
	struct offer *o;

	if (c->noffers == c->capoffers) {
		size_t nc = c->capoffers ? c->capoffers * 2 : 64;
		struct offer *nv = cu_realloc(c->offers, nc * sizeof(*nv));

		if (nv == NULL) {
			json_decref(patch);
			return;
		}
		c->offers = nv;
		c->capoffers = nc;
	}
	o = &c->offers[c->noffers];
	o->res = res;
	o->ns = ns ? cu_strdup(ns) : NULL;
	o->name = cu_strdup(name);
	o->key = cu_strdup(key);
	o->patch = patch;
	o->last = json_integer_value(json_object_get(c->reported_at, key));
	o->urgent = urgent;
	if (o->name == NULL || o->key == NULL ||
	    (ns != NULL && o->ns == NULL)) {
		cu_free(o->ns);
		cu_free(o->name);
		cu_free(o->key);
		json_decref(patch);
		return;
	}
	c->noffers++;
}

static int offer_cmp(const void *a, const void *b)
{
	const struct offer *x = a, *y = b;

	if (x->last != y->last)
		return x->last < y->last ? -1 : 1;
	return strcmp(x->key, y->key);
}

static void report_flush(ctl *c, int64_t now_ms)
{
	size_t i;

	if (c->noffers == 0)
		return;
	qsort(c->offers, c->noffers, sizeof(*c->offers), offer_cmp);
	for (i = 0; i < c->noffers; i++) {
		struct offer *o = &c->offers[i];

		if (o->urgent || bucket_take(c, &c->queue_reports, now_ms)) {
			json_object_set_new(
			    c->reported_at, o->key, json_integer(now_ms));
			queue_write_expect(
			    c, W_CQ, o->res, o->ns, o->name, o->patch, o->key);
		} else {
			json_decref(o->patch);
		}
		cu_free(o->ns);
		cu_free(o->name);
		cu_free(o->key);
	}
	c->noffers = 0;
}

static void write_cq_status(ctl *c)
{
	size_t i, n = que_cq_count(c->st);

	for (i = 0; i < n; i++) {
		struct que_cq *cq = que_cq_at(c->st, i);
		json_t *cached, *want, *patch;
		char *key;

		if (cq == NULL || !cq->exists)
			continue;
		cached = api_informer_get(c->inf[INF_CQ], NULL, cq->name);
		if (cached == NULL)
			continue;
		want = cq_status(c, cq, cached);
		key = cu_asprintf("cq/%s", cq->name);
		/* One status write per queue at a time: a write waiting out
		 * a Retry-After must not be overtaken by a newer one. */
		if (key == NULL || status_busy(c, key, cached) ||
		    json_equal(want, json_object_get(cached, "status"))) {
			json_decref(want);
		} else {
			patch = json_pack("{s:o}", "status", want);
			report_offer(c, &CLUSTERQUEUES, NULL, cq->name, patch,
			    key,
			    active_changed(
				json_object_get(cached, "status"), want));
		}
		cu_free(key);
		if (c->metrics != NULL) {
			ctl_metric_set(c->metrics, CTL_M_PENDING_WORKLOADS,
			    CTL_LV(cq->name, "active"), (double)cq->n_heap);
			ctl_metric_set(c->metrics,
			    CTL_M_ADMITTED_ACTIVE_WORKLOADS, CTL_LV(cq->name),
			    (double)cq->admitted.n);
			ctl_metric_set(c->metrics,
			    CTL_M_RESERVING_ACTIVE_WORKLOADS, CTL_LV(cq->name),
			    (double)cq->admitted.n);
			cq_metrics(c, cq);
		}
	}
}

/* Per-LocalQueue tallies for its status, from one pass over the CQs. */
struct lq_tally {
	size_t pending, admitted;
	int64_t *usage; /* per fr, milli */
};

struct lq_pass {
	ctl *c;
	json_t *index; /* "ns/name" -> position in v */
	struct lq_tally *v;
	size_t n, cap;
	uint32_t nfr;
};

static struct lq_tally *lq_tally_of(struct lq_pass *p, const struct que_wl *wl)
{
	json_t *pos;

	if (wl->lq == NULL)
		return NULL;
	pos = json_object_get(p->index, wl->lq->key);
	if (pos != NULL)
		return &p->v[json_integer_value(pos)];
	if (cu_grow((void **)&p->v, &p->cap, p->n + 1, sizeof(*p->v)) != CU_OK)
		return NULL;
	p->v[p->n].pending = p->v[p->n].admitted = 0;
	p->v[p->n].usage = cu_calloc(p->nfr ? p->nfr : 1, sizeof(int64_t));
	if (p->v[p->n].usage == NULL)
		return NULL;
	json_object_set_new(
	    p->index, wl->lq->key, json_integer((json_int_t)p->n));
	return &p->v[p->n++];
}

static void lq_count_cq(struct lq_pass *p, struct que_cq *cq)
{
	struct que_wl *wl;
	struct lq_tally *t;
	size_t i;
	uint32_t ps, r;

	for (i = 0; i < cq->n_heap; i++)
		if ((t = lq_tally_of(p, cq->heap[i])) != NULL)
			t->pending++;
	wl = cq->inadmissible.head;
	for (i = 0; i < cq->inadmissible.n; i++, wl = wl->next)
		if ((t = lq_tally_of(p, wl)) != NULL)
			t->pending++;
	wl = cq->admitted.head;
	for (i = 0; i < cq->admitted.n; i++, wl = wl->next) {
		if ((t = lq_tally_of(p, wl)) == NULL)
			continue;
		t->admitted++;
		for (ps = 0; ps < wl->n_podsets; ps++)
			for (r = 0; r < wl->podsets[ps].n_req; r++)
				if (wl->podsets[ps].fr[r] < p->nfr)
					t->usage[wl->podsets[ps].fr[r]] +=
					    wl->podsets[ps].req[r].total;
	}
}

/* Kueue's LocalQueue status: counts, flavorsReservation/flavorsUsage
 * over the ClusterQueue's flavors and resources, and Active. */
static json_t *lq_status(ctl *c, struct lq_pass *p, json_t *cached)
{
	json_t *st = json_deep_copy(json_object_get(cached, "status"));
	const char *cqname = json_string_value(
	    json_object_get(json_object_get(cached, "spec"), "clusterQueue"));
	const char *stop = json_string_value(
	    json_object_get(json_object_get(cached, "spec"), "stopPolicy"));
	struct que_cq *cq = cqname ? que_cq_get(c->st, cqname) : NULL;
	char *key = key_of(jmeta(cached, "namespace"), jmeta(cached, "name"));
	json_t *pos = key ? json_object_get(p->index, key) : NULL;
	const struct lq_tally *t = pos ? &p->v[json_integer_value(pos)] : NULL;
	json_t *byflv = json_object();
	uint32_t fr;

	cu_free(key);
	if (!json_is_object(st)) {
		json_decref(st);
		st = json_object();
	}
	for (fr = 0;
	     cq != NULL && cq->exists && fr < p->nfr && fr < cq->node.ncells;
	     fr++) {
		const char *rs;
		char q[64];

		if (!cq->node.cells[fr].q.defined)
			continue;
		rs = que_resource_name(c->st, que_fr_resource(c->st, fr));
		adm_format_quantity(rs, t ? t->usage[fr] : 0, q, sizeof(q));
		add_flavor_usage(byflv,
		    que_flavor_by_id(c->st, que_fr_flavor(c->st, fr))->name,
		    json_pack("{s:s, s:s}", "name", rs, "total", q));
	}
	set_usage_and_counts(st, byflv, t ? t->pending : 0, t ? t->admitted : 0,
	    t ? t->admitted : 0);
	if (stop != NULL && strcmp(stop, "None") != 0)
		set_active(st, false, "Stopped", "LocalQueue is stopped");
	else if (cq == NULL || !cq->exists)
		set_active(st, false, "ClusterQueueDoesNotExist",
		    "Can't submit new workloads to clusterQueue");
	else if (!cq->active)
		set_active(st, false, "ClusterQueueIsInactive",
		    "Can't submit new workloads to clusterQueue");
	else
		set_active(st, true, "Ready",
		    "Can submit new workloads to localQueue");
	return st;
}

static void lq_metrics(ctl *c, json_t *cached, json_t *st)
{
	static const char *const states[] = {"True", "False", "Unknown"};
	const char *ns = jmeta(cached, "namespace"),
		   *name = jmeta(cached, "name");
	const char *now = "Unknown";
	json_t *cond;
	size_t i;

	json_array_foreach(json_object_get(st, "conditions"), i, cond)
	{
		const char *t =
		    json_string_value(json_object_get(cond, "type"));

		if (t != NULL && strcmp(t, "Active") == 0 &&
		    json_string_value(json_object_get(cond, "status")) != NULL)
			now =
			    json_string_value(json_object_get(cond, "status"));
	}
	if (ns == NULL || name == NULL)
		return;
	for (i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		ctl_metric_set(c->metrics, CTL_M_LOCAL_QUEUE_STATUS,
		    CTL_LV(name, ns, states[i]),
		    strcmp(states[i], now) == 0 ? 1.0 : 0.0);
	ctl_metric_set(c->metrics, CTL_M_LOCAL_QUEUE_PENDING_WORKLOADS,
	    CTL_LV(name, ns, "active"),
	    (double)json_integer_value(
		json_object_get(st, "pendingWorkloads")));
	ctl_metric_set(c->metrics, CTL_M_LOCAL_QUEUE_RESERVING_ACTIVE_WORKLOADS,
	    CTL_LV(name, ns),
	    (double)json_integer_value(
		json_object_get(st, "reservingWorkloads")));
	ctl_metric_set(c->metrics, CTL_M_LOCAL_QUEUE_ADMITTED_ACTIVE_WORKLOADS,
	    CTL_LV(name, ns),
	    (double)json_integer_value(
		json_object_get(st, "admittedWorkloads")));
}

static void write_one_lq(json_t *cached, void *payload)
{
	struct lq_pass *p = payload;
	json_t *want = lq_status(p->c, p, cached);
	char *key;

	if (p->c->metrics != NULL)
		lq_metrics(p->c, cached, want);

	key = cu_asprintf(
	    "lq/%s/%s", jmeta(cached, "namespace"), jmeta(cached, "name"));
	if (key == NULL || status_busy(p->c, key, cached) ||
	    json_equal(want, json_object_get(cached, "status")))
		json_decref(want);
	else
		report_offer(p->c, &LOCALQUEUES, jmeta(cached, "namespace"),
		    jmeta(cached, "name"), json_pack("{s:o}", "status", want),
		    key,
		    active_changed(json_object_get(cached, "status"), want));
	cu_free(key);
}

/* LocalQueue status, written only where it changed. */
static void write_lq_status(ctl *c)
{
	struct lq_pass p = {c, json_object(), NULL, 0, 0, que_fr_count(c->st)};
	size_t i, n = que_cq_count(c->st);

	for (i = 0; i < n; i++) {
		struct que_cq *cq = que_cq_at(c->st, i);

		if (cq != NULL)
			lq_count_cq(&p, cq);
	}
	api_informer_foreach(c->inf[INF_LQ], write_one_lq, &p);
	for (i = 0; i < p.n; i++)
		cu_free(p.v[i].usage);
	cu_free(p.v);
	json_decref(p.index);
}

/* ---- Jobs and JobSets ---------------------------------------------- */

/* Owner lookup for the gate, over the job caches. */
static int gate_lookup(const struct ns_gate_owner *ref, const char *ns,
    struct ns_gate_object *out, void *payload, cu_error *err)
{
	ctl *c = payload;
	enum ns_gate_kind kind = ns_gate_kind_of(ref->api_version, ref->kind);
	api_informer *inf = kind == NS_GATE_KIND_JOB	  ? c->inf[INF_JOB]
			    : kind == NS_GATE_KIND_JOBSET ? c->inf[INF_JOBSET]
							  : NULL;
	json_t *obj = inf ? api_informer_get(inf, ns, ref->name) : NULL;

	if (obj == NULL)
		return CU_ENOTFOUND;
	return ns_gate_object_from_json(out, obj, err);
}

/* Priority lookups over the class caches (api_resolve_priority). */
static int class_value(api_informer *inf, const char *name, int32_t *value)
{
	json_t *o = api_informer_get(inf, NULL, name);

	if (o == NULL)
		return CU_ENOTFOUND;
	*value = (int32_t)json_integer_value(json_object_get(o, "value"));
	return CU_OK;
}

static int lookup_wpc(
    const char *name, int32_t *value, void *payload, cu_error *err)
{
	(void)err;
	return class_value(((ctl *)payload)->inf[INF_WPC], name, value);
}

static int lookup_pc(
    const char *name, int32_t *value, void *payload, cu_error *err)
{
	(void)err;
	return class_value(((ctl *)payload)->inf[INF_PC], name, value);
}

struct global_default {
	const char *name;
	int32_t value;
};

static void find_global_default(json_t *pc, void *payload)
{
	struct global_default *g = payload;
	int32_t v = (int32_t)json_integer_value(json_object_get(pc, "value"));

	if (!json_is_true(json_object_get(pc, "globalDefault")))
		return;
	if (g->name == NULL || v < g->value) {
		g->name = jmeta(pc, "name");
		g->value = v;
	}
}

static int lookup_pc_default(
    const char **name, int32_t *value, void *payload, cu_error *err)
{
	ctl *c = payload;
	struct global_default g = {NULL, 0};

	(void)err;
	api_informer_foreach(c->inf[INF_PC], find_global_default, &g);
	if (g.name == NULL)
		return CU_ENOTFOUND;
	*name = g.name;
	*value = g.value;
	return CU_OK;
}

/* Workloads in ns whose controller owner is kind/name. */
struct owned {
	const char *kind, *name, *ns;
	json_t *found; /* array of borrowed objects */
};

static void find_owned(json_t *wl, void *payload)
{
	struct owned *o = payload;
	json_t *refs =
	    json_object_get(json_object_get(wl, "metadata"), "ownerReferences");
	json_t *r;
	size_t i;

	if (jmeta(wl, "namespace") == NULL ||
	    strcmp(jmeta(wl, "namespace"), o->ns) != 0)
		return;
	json_array_foreach(refs, i, r)
	{
		const char *k = json_string_value(json_object_get(r, "kind"));
		const char *n = json_string_value(json_object_get(r, "name"));

		if (json_is_true(json_object_get(r, "controller")) && k && n &&
		    strcmp(k, o->kind) == 0 && strcmp(n, o->name) == 0)
			json_array_append(o->found, wl);
	}
}

/* Decoded ResourceFlavors named by the Workload's admission. */
static int admitted_flavors(ctl *c, const struct api_workload *wl,
    struct api_resource_flavor **out, size_t *n, cu_error *err)
{
	size_t i, j, cap = 0;
	struct api_resource_flavor *v = NULL;

	*out = NULL;
	*n = 0;
	for (i = 0; i < wl->status.admission.n_pod_set_assignments; i++) {
		const struct api_podset_assignment *a =
		    &wl->status.admission.pod_set_assignments[i];

		for (j = 0; j < a->flavors.n; j++) {
			const char *fname = a->flavors.items[j].value;
			json_t *obj =
			    api_informer_get(c->inf[INF_RF], NULL, fname);
			size_t k;
			bool dup = false;

			for (k = 0; k < *n; k++)
				dup = dup || strcmp(v[k].meta.name, fname) == 0;
			if (dup || obj == NULL)
				continue;
			if (cu_grow((void **)&v, &cap, *n + 1, sizeof(*v)) !=
			    CU_OK) {
				cu_error_set(err, CU_ENOMEM, "out of memory");
				goto fail;
			}
			if (api_resource_flavor_decode(&v[*n], obj, err) !=
			    CU_OK)
				goto fail;
			(*n)++;
		}
	}
	*out = v;
	return CU_OK;
fail:
	for (i = 0; i < *n; i++)
		api_resource_flavor_dispose(&v[i]);
	cu_free(v);
	*n = 0;
	return err->code;
}

/* key's expected resourceVersion is dropped once inf [borrowed] has seen
 * that version or a later one: an object then missing from it was
 * deleted after our write and there is nothing more to wait for. Or once
 * it expired (EXPECT_TTL_MS). */
static void gone_past_expect(ctl *c, api_informer *inf, const char *key)
{
	json_t *want = json_object_get(c->expect, key);
	const char *seen = api_informer_resource_version(inf);

	if (want != NULL &&
	    ((seen != NULL &&
		 strtoull(seen, NULL, 10) >=
		     strtoull(json_string_value(want), NULL, 10)) ||
		cu_time_mono_ns() / 1000000 >=
		    json_integer_value(json_object_get(c->expect_until, key))))
		expect_drop(c, key);
}

/* ---- the job reconciler: inputs, rec_job_reconcile, plan ------------- */

static int view_flavors(const struct api_workload *wl,
    struct api_resource_flavor **out, size_t *n, void *payload, cu_error *err)
{
	return admitted_flavors(payload, wl, out, n, err);
}

static bool view_lq_exists(const char *ns, const char *name, void *payload)
{
	ctl *c = payload;

	return api_informer_get(c->inf[INF_LQ], ns, name) != NULL;
}

static void job_view_init(ctl *c, struct rec_job_view *v)
{
	memset(v, 0, sizeof(*v));
	v->managed = true;
	v->admitted_flavors = view_flavors;
	v->local_queue_exists = view_lq_exists;
	v->payload = c;
}

/* The job is gone: its Workloads go too (rec_job_reconcile, step 0). */
static void job_deleted(ctl *c, char kind, const char *ns, const char *name)
{
	struct owned o = {
	    kind == 'J' ? "Job" : "JobSet", name, ns, json_array()};
	struct api_workload *wls = NULL;
	const struct api_workload **owned = NULL;
	struct rec_job_view v;
	struct rec_job_in in;
	struct rec_plan plan;
	struct plan_ctx x;
	json_t *wl;
	size_t i, n = 0;
	cu_error err;

	api_informer_foreach(c->inf[INF_WL], find_owned, &o);
	if (json_array_size(o.found) > 0) {
		wls = cu_calloc(json_array_size(o.found), sizeof(*wls));
		owned = cu_calloc(json_array_size(o.found), sizeof(*owned));
		if (wls == NULL || owned == NULL) {
			cu_errorf("job %s/%s gone: out of memory", ns, name);
			goto out;
		}
	}
	json_array_foreach(o.found, i, wl)
	{
		if (api_workload_decode(&wls[n], wl, &err) != CU_OK) {
			cu_warn("workload %s/%s: %s", ns, jmeta(wl, "name"),
			    err.msg);
			continue;
		}
		owned[n] = &wls[n];
		n++;
	}
	job_view_init(c, &v);
	memset(&in, 0, sizeof(in));
	in.kind = kind == 'J' ? REC_JOB_BATCH : REC_JOB_JOBSET;
	in.ns = ns;
	in.name = name;
	in.owned = owned;
	in.n_owned = n;
	rec_plan_init(&plan);
	if (rec_job_reconcile(&v, &in, 0, &plan, &err) != CU_OK)
		cu_warn("job %s/%s gone: %s", ns, name, err.msg);
	memset(&x, 0, sizeof(x));
	x.kind = kind;
	apply_plan(c, &x, &plan);
out:
	for (i = 0; i < n; i++)
		api_workload_dispose(&wls[i]);
	cu_free(wls);
	cu_free(owned);
	json_decref(o.found);
}

/* The gate's answer for the cached job obj in ns; queue_name [borrowed
 * from obj]. A gate error reads as not managed (retried later). */
static bool job_gate(ctl *c, json_t *obj, const char *ns, const char **queue)
{
	struct ns_gate_object gobj;
	struct ns_gate_namespace gns;
	struct ns_gate_decision dec;
	json_t *nsobj;
	cu_error err;

	if (ns_gate_object_from_json(&gobj, obj, &err) != CU_OK)
		return false;
	nsobj = api_informer_get(c->inf[INF_NS], NULL, ns);
	gns.name = ns;
	gns.found = nsobj != NULL;
	gns.get = ns_label;
	gns.payload = nsobj;
	if (ns_gate_decide(&c->gate, &gobj, &gns, gate_lookup, c, &dec, &err) !=
		CU_OK ||
	    dec.managed != NS_GATE_YES)
		return false;
	*queue = dec.queue_name;
	return true;
}

/* The job's Workload ns/wlname as cached, decoded into *wl (*have), or
 * *awaited: our own last write to it has not reached the cache (stale,
 * or busy/expected while absent: our create is not there yet). */
static void job_workload(ctl *c, const char *ns, const char *wlname,
    struct api_workload *wl, bool *have, bool *awaited)
{
	json_t *wlobj = api_informer_get(c->inf[INF_WL], ns, wlname);
	char *ek = cu_asprintf("wl/%s/%s", ns, wlname);
	cu_error err = {0}; /* an out parameter; cppcheck's CTU flags it */

	*have = false;
	*awaited = false;
	if (wlobj != NULL) {
		*awaited = ek != NULL && stale(c, ek, wlobj);
		if (!*awaited)
			*have = api_workload_decode(wl, wlobj, &err) == CU_OK;
	} else {
		/* Absent from a cache that has seen past our last write to
		 * it: it is gone, not late. */
		if (ek != NULL)
			gone_past_expect(c, c->inf[INF_WL], ek);
		*awaited =
		    ek != NULL && (json_object_get(c->busy, ek) != NULL ||
				      json_object_get(c->expect, ek) != NULL);
	}
	cu_free(ek);
}

/* The job reconciler for one Job ('J') or JobSet ('S'): gather the inputs
 * (the gate first: a job that is not ours is neither decoded nor written
 * to, DESIGN.md lesson 1), rec_job_reconcile, carry out its plan. */
static void reconcile_job(ctl *c, const char *key, int64_t now)
{
	char kind = key[0], ns[254], name[254];
	const char *p = key + 2, *slash = strchr(p, '/');
	api_informer *inf = c->inf[kind == 'J' ? INF_JOB : INF_JOBSET];
	struct api_job job;
	struct api_jobset js;
	struct api_workload wl;
	struct rec_job j;
	struct rec_job_view v;
	struct rec_job_in in;
	struct rec_plan plan;
	struct plan_ctx x;
	bool have_wl = false, ok_job;
	json_t *obj;
	char *wlname = NULL;
	cu_error err;

	if (slash == NULL || inf == NULL)
		return;
	snprintf(ns, sizeof(ns), "%.*s", (int)(slash - p), p);
	snprintf(name, sizeof(name), "%s", slash + 1);
	obj = api_informer_get(inf, ns, name);
	if (obj == NULL) {
		job_deleted(c, kind, ns, name);
		return;
	}
	if (stale(c, key, obj) || json_object_get(c->retry_at, key) != NULL)
		return;
	job_view_init(c, &v);
	if (!job_gate(c, obj, ns, &v.queue_name))
		return; /* rec_job_reconcile would plan nothing */
	memset(&j, 0, sizeof(j));
	if (kind == 'J') {
		ok_job = api_job_decode(&job, obj, &err) == CU_OK;
		j.kind = REC_JOB_BATCH;
		j.job = &job;
	} else {
		ok_job = api_jobset_decode(&js, obj, &err) == CU_OK;
		j.kind = REC_JOB_JOBSET;
		j.jobset = &js;
	}
	if (!ok_job) {
		cu_warn("%s %s/%s: %s", kind == 'J' ? "job" : "jobset", ns,
		    name, err.msg);
		return;
	}
	if (api_workload_name(kind == 'J' ? "Job" : "JobSet",
		kind == 'J' ? "batch" : "jobset.x-k8s.io", name,
		rec_job_meta(&j)->uid, -1, API_WORKLOAD_NAME_MAX, &wlname,
		&err) != CU_OK)
		goto out;
	job_workload(c, ns, wlname, &wl, &have_wl, &v.wl_awaited);
	struct api_priority_lookup lk = {lookup_wpc, lookup_pc,
	    lookup_pc_default,
	    api_informer_get(c->inf[INF_WPC], NULL, API_DEFAULT_WPC_NAME) !=
		NULL,
	    c};

	v.priority = &lk;
	memset(&in, 0, sizeof(in));
	in.job = &j;
	in.kind = j.kind;
	in.ns = ns;
	in.name = name;
	in.wl_name = wlname;
	in.wl = have_wl ? &wl : NULL;
	rec_plan_init(&plan);
	if (rec_job_reconcile(&v, &in, now, &plan, &err) != CU_OK)
		cu_warn("%s: %s", key, err.msg);
	memset(&x, 0, sizeof(x));
	x.kind = kind;
	x.job_key = key;
	x.job_obj = obj;
	x.now = now;
	apply_plan(c, &x, &plan);
out:
	if (have_wl)
		api_workload_dispose(&wl);
	if (kind == 'J')
		api_job_dispose(&job);
	else
		api_jobset_dispose(&js);
	cu_free(wlname);
}

/* ---- the turn -------------------------------------------------------- */

static bool all_synced(const ctl *c)
{
	size_t i;

	for (i = 0; i < INF__COUNT; i++) {
		bool optional = i == INF_JOB || i == INF_JOBSET;

		if (c->inf[i] == NULL ? !optional
				      : !api_informer_synced(c->inf[i]))
			return false;
	}
	return true;
}

/* ---- restart: the ledger's decisions first (DESIGN.md lesson 3) ---- */

/* Every live decision: [uid, state]. */
static int collect_live(const store_decision *d, void *payload)
{
	return json_array_append_new(
		   payload, json_pack("[s,i]", d->uid, (int)d->state)) != 0;
}

/* The flavor of each request of qw [borrowed] as the decision sd
 * [borrowed] recorded it: frs[] in podset/request order, and the
 * assignment pa[] for the status write (uses[] owned by the caller).
 * false when the decision does not fit the Workload any more. */
static bool recorded_flavors(ctl *c, const struct que_wl *qw,
    const store_decision *sd, uint32_t *frs, struct adm_podset_assignment *pa)
{
	size_t i, j, m, k = 0;

	for (i = 0; i < qw->n_podsets; i++) {
		const store_podset *sp = NULL;

		for (m = 0; m < sd->n_podsets; m++)
			if (strcmp(sd->podsets[m].name, qw->podsets[i].name) ==
			    0)
				sp = &sd->podsets[m];
		if (sp == NULL)
			return false;
		pa[i].name = qw->podsets[i].name;
		pa[i].count = sp->count;
		pa[i].n_uses = qw->podsets[i].n_req;
		pa[i].uses = cu_calloc(pa[i].n_uses + 1, sizeof(*pa[i].uses));
		if (pa[i].uses == NULL)
			return false;
		for (j = 0; j < qw->podsets[i].n_req; j++, k++) {
			const char *res =
			    que_resource_name(c->st, qw->podsets[i].req[j].res);
			const store_resource *r = NULL;
			struct que_flavor *f;

			for (m = 0; m < sp->n_resources; m++)
				if (strcmp(sp->resources[m].resource, res) == 0)
					r = &sp->resources[m];
			if (r == NULL ||
			    (f = que_flavor_get(c->st, r->flavor)) == NULL)
				return false;
			frs[k] = que_fr_find(
			    c->st, f->id, qw->podsets[i].req[j].res);
			pa[i].uses[j].resource = res;
			pa[i].uses[j].flavor = f->name;
			pa[i].uses[j].usage = r->milli;
		}
	}
	return true;
}

/* A decision recorded but maybe never announced: if the API shows the
 * Workload admitted, the ledger catches up; if it shows it pending, the
 * recorded decision is adopted by the engine and announced now, before
 * any new cycle; if the Workload is gone, so is the decision. */
static bool announce_recorded(
    ctl *c, struct que_wl *qw, int64_t now, bool adopt);

static void resume_one(ctl *c, const char *uid, int64_t now)
{
	struct que_wl *qw = que_workload_get(c->st, uid);
	cu_error err;

	if (qw == NULL) {
		ledger_release(c, uid, now);
		return;
	}
	if (qw->where == QUE_WL_ADMITTED || qw->where == QUE_WL_EVICTING) {
		if (ledger_begin(c) == CU_OK &&
		    store_decision_set_state(
			c->ledger, uid, STORE_ADMITTED, now, &err) != CU_OK)
			cu_warn("ledger: %s", err.msg);
		return;
	}
	announce_recorded(c, qw, now, true);
}

/* Announce qw's decision as the ledger recorded it: the admission patch
 * on the cached Workload. adopt: the engine takes the decision first (a
 * restart); else it holds it already (a deferred announcement). Returns
 * false when nothing was sent; the decision is then released (adopt) or
 * left to the caller. */
static bool announce_recorded(
    ctl *c, struct que_wl *qw, int64_t now, bool adopt)
{
	const char *uid = qw->uid;
	store_decision *sd = NULL;
	struct adm_podset_assignment *pa = NULL;
	uint32_t *frs = NULL;
	struct api_workload wl;
	struct adm_decision d;
	json_t *patch = NULL;
	size_t i, n = 0;
	bool sent = false;
	cu_error err;

	if (store_decision_get(c->ledger, uid, &sd, &err) != CU_OK) {
		cu_warn("ledger: %s", err.msg);
		return false;
	}
	for (i = 0; i < qw->n_podsets; i++)
		n += qw->podsets[i].n_req;
	frs = cu_calloc(n + 1, sizeof(*frs));
	pa = cu_calloc(qw->n_podsets + 1, sizeof(*pa));
	if (frs == NULL || pa == NULL ||
	    !recorded_flavors(c, qw, sd, frs, pa)) {
		/* Queues changed under it: decided again by the engine. */
		cu_info("recorded decision for %s/%s no longer fits; released",
		    qw->ns, qw->name);
		if (adopt)
			ledger_release(c, uid, now);
		goto out;
	}
	if (adopt && que_workload_adopt(c->st, uid, sd->cluster_queue, frs,
			 sd->decided_ns, &err) != CU_OK) {
		cu_warn("resume %s/%s: %s", qw->ns, qw->name, err.msg);
		ledger_release(c, uid, now);
		goto out;
	}
	memset(&d, 0, sizeof(d));
	d.kind = ADM_ADMIT;
	d.uid = qw->uid;
	d.cluster_queue = qw->cq ? qw->cq->name : sd->cluster_queue;
	d.podsets = pa;
	d.n_podsets = qw->n_podsets;
	if (decode_cached(c, qw->ns, qw->name, &wl) != CU_OK)
		goto out;
	if (rec_wl_status_admit(&wl, &d, now, &patch, &err) != CU_OK)
		cu_warn("resume %s/%s: %s", qw->ns, qw->name, err.msg);
	else if (patch != NULL) {
		if (adopt)
			cu_info("announcing the recorded decision for %s/%s",
			    qw->ns, qw->name);
		sent = true;
		json_object_set_new(c->in_flight, uid, json_true());
		queue_write(
		    c, W_ADMIT, &WORKLOADS, qw->ns, qw->name, qw->uid, patch);
		if (c->nwrites > 0 &&
		    c->writes[c->nwrites - 1].patch == patch) {
			c->writes[c->nwrites - 1].expect =
			    cu_asprintf("wl/%s/%s", qw->ns, qw->name);
			c->writes[c->nwrites - 1].note =
			    cu_asprintf("Quota reserved in ClusterQueue %s",
				d.cluster_queue ? d.cluster_queue : "");
		}
	}
	api_workload_dispose(&wl);
out:
	for (i = 0; pa != NULL && i < qw->n_podsets; i++)
		cu_free(pa[i].uses);
	cu_free(pa);
	cu_free(frs);
	store_decision_free(sd);
	return sent;
}

/* Deferred announcements (decide_admit) whose Workload the cache now
 * shows as we last wrote it. A Workload gone, or one the engine no
 * longer holds, gives its decision back. */
static void announce_deferred(ctl *c, int64_t now)
{
	const char *uid;
	json_t *v;
	void *tmp;

	json_object_foreach_safe(c->deferred, tmp, uid, v)
	{
		struct que_wl *qw = que_workload_get(c->st, uid);
		json_t *obj =
		    qw ? api_informer_get(c->inf[INF_WL], qw->ns, qw->name)
		       : NULL;
		char *ek =
		    qw ? cu_asprintf("wl/%s/%s", qw->ns, qw->name) : NULL;
		bool st = obj != NULL && (ek == NULL || stale(c, ek, obj));

		cu_free(ek);
		if (st)
			continue;
		if (qw == NULL || obj == NULL || qw->where != QUE_WL_ADMITTED ||
		    !announce_recorded(c, qw, now, false)) {
			withdraw(c, uid, now);
			ledger_release(c, uid, now);
			json_object_del(c->in_flight, uid);
		}
		json_object_del(c->deferred, uid);
	}
}

static void resume_ledger(ctl *c, int64_t now)
{
	json_t *uids = json_array(), *v;
	size_t i;
	cu_error err;

	if (uids == NULL)
		return;
	if (store_decision_foreach_live(c->ledger, collect_live, uids, &err) !=
	    CU_OK)
		cu_warn("ledger: %s", err.msg);
	json_array_foreach(uids, i, v)
	{
		const char *uid = json_string_value(json_array_get(v, 0));
		struct que_wl *qw;

		if (json_integer_value(json_array_get(v, 1)) ==
		    STORE_RESERVED) {
			resume_one(c, uid, now);
			continue;
		}
		/* ADMITTED or EVICTING, but the admission ended while we
		 * were down (the Workload finished, was cleared, deactivated
		 * or deleted): store.h's STORE_RECON_STALE, release it. The
		 * engine holds every Workload the API shows reserved by now
		 * (reconcile_workload ran on the synced cache). */
		qw = que_workload_get(c->st, uid);
		if (qw == NULL || (qw->where != QUE_WL_ADMITTED &&
				      qw->where != QUE_WL_EVICTING))
			ledger_release(c, uid, now);
	}
	json_decref(uids);
}

static void turn(ctl *c)
{
	int64_t now = cu_time_now_ns();
	const char *key;
	json_t *v, *batch;
	void *tmp;

	if (c->freeing)
		return;
	if (!c->synced) {
		if (!all_synced(c))
			return;
		c->synced = true;
		c->dirty_config = true;
		ctl_certrot_run(c->certrot);
		api_informer_foreach(c->inf[INF_WL], mark_all_workloads, c);
		cu_info("informers synced: %zu workloads, %zu cluster queues",
		    api_informer_count(c->inf[INF_WL]),
		    api_informer_count(c->inf[INF_CQ]));
	}
	if (c->dirty_config) {
		sync_config(c);
		/* Eligibility and routing may have changed for all. */
		api_informer_foreach(c->inf[INF_WL], mark_all_workloads, c);
	}
	batch = c->dirty_wl;
	c->dirty_wl = json_object();
	json_object_foreach_safe(batch, tmp, key, v)
	{
		reconcile_workload(c, key, now);
	}
	json_decref(batch);
	if (may_write(c) && !c->resumed) {
		c->resumed = true;
		resume_ledger(c, now);
	}
	if (may_write(c)) {
		batch = c->dirty_jobs;
		c->dirty_jobs = json_object();
		json_object_foreach_safe(batch, tmp, key, v)
		{
			reconcile_job(c, key, now);
		}
		json_decref(batch);
	}
	if (may_write(c) && json_object_size(c->deferred) > 0)
		announce_deferred(c, now);
	if (may_write(c) && c->dirty_cycle)
		run_cycle(c, now);
	if (may_write(c) && c->pending_scan) {
		c->pending_scan = false;
		write_due_pending(c, now);
	}
	flush(c);
}

static void on_turn(struct ev_loop *loop, ev_prepare *w, int revents)
{
	(void)loop;
	(void)revents;
	turn(w->data);
}

/* Counters kept by the client and informers, brought into the registry
 * as deltas (the registry's counters only go up). */
static void count_to(ctl *c, enum ctl_metric_id id, const char *const *lv,
    size_t nlv, uint64_t total)
{
	double have = 0;

	if (ctl_metric_value(&have, c->metrics, id, lv, nlv) != CU_OK)
		have = 0;
	if ((double)total > have)
		ctl_metric_add(c->metrics, id, lv, nlv, total - (uint64_t)have);
}

/* Requests of both API clients (the main one and the events one), summed
 * per "verb code" into payload [borrowed] before they are counted. */
static void api_sum(const char *verb, int code, uint64_t n, void *payload)
{
	char k[64];

	snprintf(k, sizeof(k), "%s %d", verb, code);
	json_object_set_new(payload, k,
	    json_integer(json_integer_value(json_object_get(payload, k)) +
			 (json_int_t)n));
}

static void api_count(ctl *c)
{
	json_t *sum = json_object(), *v;
	const char *k;

	if (sum == NULL)
		return;
	api_client_stats_foreach(c->client, api_sum, sum);
	if (c->ev_client != NULL)
		api_client_stats_foreach(c->ev_client, api_sum, sum);
	json_object_foreach(sum, k, v)
	{
		char verb[48];
		const char *sp = strchr(k, ' ');

		if (sp == NULL || (size_t)(sp - k) >= sizeof(verb))
			continue;
		snprintf(verb, sizeof(verb), "%.*s", (int)(sp - k), k);
		count_to(c, CTL_M_CUEUE_API_REQUESTS_TOTAL,
		    CTL_LV(verb, sp + 1), (uint64_t)json_integer_value(v));
	}
	json_decref(sum);
}

static void own_metrics(ctl *c, ev_tstamp now)
{
	size_t i;

	if (c->tick_due > 0)
		ctl_metric_observe(c->metrics, CTL_M_CUEUE_LOOP_LAG_SECONDS,
		    CTL_LV0, now > c->tick_due ? now - c->tick_due : 0.0);
	api_count(c);
	for (i = 0; i < INF__COUNT; i++) {
		struct api_informer_stats is;

		if (c->inf[i] == NULL)
			continue;
		api_informer_stats(c->inf[i], &is);
		count_to(c, CTL_M_CUEUE_WATCH_RESTARTS_TOTAL,
		    CTL_LV(resources[i].plural, "expired"), is.relists);
		count_to(c, CTL_M_CUEUE_WATCH_RESTARTS_TOTAL,
		    CTL_LV(resources[i].plural, "resumed"),
		    is.watches > 1 + is.relists ? is.watches - 1 - is.relists
						: 0);
	}
}

static void on_tick(struct ev_loop *loop, ev_timer *w, int revents)
{
	ctl *c = w->data;

	(void)revents;
	if (c->metrics != NULL && !c->freeing)
		own_metrics(c, ev_now(loop));
	c->tick_due = ev_now(loop) + 1.0;
	if (c->freeing || !c->synced)
		return;
	/* Backoffs expire and pending statuses come due with time. */
	c->dirty_cycle = true;
	{
		const char *key;
		json_t *v;
		void *tmp;
		int64_t now_ms = cu_time_now_ns() / 1000000;

		json_object_foreach_safe(c->retry_at, tmp, key, v)
		{
			if (json_integer_value(v) > now_ms)
				continue;
			if (key[0] == 'J' || key[0] == 'S')
				json_object_set_new(
				    c->dirty_jobs, key, json_true());
			else if (strncmp(key, "wl/", 3) == 0)
				json_object_set_new(
				    c->dirty_wl, key + 3, json_true());
			json_object_del(c->retry_at, key);
		}
	}
	c->pending_scan = true;
	/* Level-triggered safety net: every REQUEUE_ALL_S, parked
	 * (inadmissible) Workloads get another look even if no capacity
	 * event was seen. A missed wake-up would otherwise leave a Workload
	 * pending forever on an idle cluster (seen once in 15,000 and under
	 * API faults; root cause not yet found). */
	if (++c->ticks % REQUEUE_ALL_S == 0) {
		size_t i, n = que_cq_count(c->st);

		for (i = 0; i < n; i++) {
			struct que_cq *q = que_cq_at(c->st, i);

			if (q != NULL && q->inadmissible.n > 0) {
				q->requeue_needed = true;
				c->dirty_cycle = true;
			}
		}
	}
	if (may_write(c)) {
		write_cq_status(c);
		write_lq_status(c);
		report_flush(c, cu_time_now_ns() / 1000000);
	}
}

/* ---- health ------------------------------------------------------ */

static int check_synced(cu_error *err, void *payload)
{
	ctl *c = payload;

	return c->synced ? CU_OK
			 : cu_error_set(
			       err, CU_EAGAIN, "informers have not synced yet");
}

static int check_ledger(cu_error *err, void *payload)
{
	ctl *c = payload;

	if (c->ledger == NULL)
		return cu_error_set(err, CU_EIO, "ledger not open");
	if (c->ledger_fail[0] != '\0')
		return cu_error_set(err, CU_EIO,
		    "ledger: the last commit failed: %s", c->ledger_fail);
	return CU_OK;
}

/* ---- lifecycle ------------------------------------------------------ */

/* ---- admission webhooks: the handlers' view of the caches --------- */

static bool wh_ready(void *payload)
{
	return ((ctl *)payload)->synced;
}

static int wh_namespace(const char *name, struct ns_gate_namespace *out,
    void *payload, cu_error *err)
{
	ctl *c = payload;
	json_t *nsobj = api_informer_get(c->inf[INF_NS], NULL, name);

	(void)err;
	out->name = name;
	out->found = nsobj != NULL;
	out->get = ns_label;
	out->payload = nsobj;
	return CU_OK;
}

static int wh_local_queue(const char *ns, const char *name, bool *exists,
    void *payload, cu_error *err)
{
	ctl *c = payload;

	(void)err;
	*exists = api_informer_get(c->inf[INF_LQ], ns, name) != NULL;
	return CU_OK;
}

static int wh_workload(const struct wh_job_ref *job,
    struct wh_workload_state *out, void *payload, cu_error *err)
{
	ctl *c = payload;
	bool js = job->kind == NS_GATE_KIND_JOBSET;
	char *wlname = NULL;
	json_t *wl;
	struct api_workload w;
	int rc;

	out->quota_reserved = out->admitted = false;
	rc = api_workload_name(js ? "JobSet" : "Job",
	    js ? "jobset.x-k8s.io" : "batch", job->name, job->uid, -1,
	    API_WORKLOAD_NAME_MAX, &wlname, err);
	if (rc != CU_OK)
		return rc;
	wl = api_informer_get(c->inf[INF_WL], job->namespace_, wlname);
	cu_free(wlname);
	if (wl == NULL)
		return CU_ENOTFOUND;
	rc = api_workload_decode(&w, wl, err);
	if (rc != CU_OK)
		return rc;
	out->quota_reserved = rec_workload_holds_quota(&w);
	out->admitted = out->quota_reserved &&
			api_conditions_true(&w.status.conditions, "Admitted");
	api_workload_dispose(&w);
	return CU_OK;
}

static bool certrot_may_run(void *payload)
{
	return may_write(payload);
}

/* internalCertManagement: the leader keeps the Secret, the caBundles
 * and the files in certDir. */
static int start_certrot(ctl *c, cu_error *err)
{
	struct ctl_certrot_opts o;

	if (!c->cfg->internal_cert.enable)
		return CU_OK;
	memset(&o, 0, sizeof(o));
	o.client = c->client;
	o.namespace_ = c->cfg->namespace;
	o.secret_name = c->cfg->internal_cert.webhook_secret_name;
	o.service_name = c->cfg->internal_cert.webhook_service_name;
	o.cert_dir = c->cfg->webhook.cert_dir;
	o.may_run = certrot_may_run;
	o.payload = c;
	return ctl_certrot_new(&c->certrot, c->loop, &o, err);
}

/* The webhook server; it serves once its certificate is mounted. */
static int start_webhook(ctl *c, cu_error *err)
{
	struct ctl_whsrv_opts o;
	char *listen;
	int rc;

	if (c->cfg->webhook.port <= 0)
		return CU_OK;
	c->wh.gate = &c->gate;
	c->wh.namespace_get = wh_namespace;
	c->wh.owner_lookup = gate_lookup;
	c->wh.local_queue_exists = wh_local_queue;
	c->wh.workload_state = wh_workload;
	c->wh.own_username = c->opts.own_username;
	c->wh.payload = c;
	listen = cu_asprintf("%s:%d",
	    c->cfg->webhook.host ? c->cfg->webhook.host : "",
	    c->cfg->webhook.port);
	if (listen == NULL)
		return cu_error_set(err, CU_ENOMEM, "webhook: out of memory");
	memset(&o, 0, sizeof(o));
	o.listen = listen;
	o.cert_dir = c->cfg->webhook.cert_dir;
	o.wh = &c->wh;
	o.ready = wh_ready;
	o.tls_priorities = c->cfg->tls.priorities;
	rc = ctl_whsrv_new(&c->webhook, c->loop, &o, err);
	cu_free(listen);
	return rc;
}

static int start_http(ctl *c, cu_error *err)
{
	struct ctl_httpd_opts o;
	const char *probe = c->cfg->health.probe_bind_address;
	const char *maddr = c->cfg->metrics.bind_address;
	int rc;

	rc = ctl_health_new(&c->health, err);
	if (rc == CU_OK)
		rc = ctl_health_add_check(
		    c->health, "informers-synced", check_synced, c, err);
	if (rc == CU_OK)
		rc = ctl_health_add_check(
		    c->health, "ledger-open", check_ledger, c, err);
	if (rc != CU_OK)
		return rc;
	if (probe != NULL && probe[0] != '\0' && strcmp(probe, "0") != 0) {
		memset(&o, 0, sizeof(o));
		o.name = "health";
		o.listen = probe;
		rc = ctl_httpd_new(&c->probe_srv, c->loop, &o, err);
		if (rc == CU_OK)
			rc = ctl_health_mount(c->health, c->probe_srv, err);
		if (rc != CU_OK)
			return rc;
	}
	if (maddr != NULL && maddr[0] != '\0' && strcmp(maddr, "0") != 0) {
		memset(&o, 0, sizeof(o));
		o.name = "metrics";
		o.listen = maddr;
		rc = ctl_httpd_new(&c->metrics_srv, c->loop, &o, err);
		if (rc == CU_OK)
			rc = ctl_metrics_mount(c->metrics, c->metrics_srv, err);
		if (rc != CU_OK)
			return rc;
	}
	return CU_OK;
}

int ctl_new(ctl **out, struct ev_loop *loop, const struct ctl_config *cfg,
    const struct ctl_run_opts *opts, cu_error *err)
{
	ctl *c = cu_calloc(1, sizeof(*c));
	int rc;

	*out = NULL;
	if (c == NULL)
		return cu_error_set(
		    err, CU_ENOMEM, "controller: out of memory");
	c->loop = loop;
	c->cfg = cfg;
	if (opts != NULL)
		c->opts = *opts;
	if (c->opts.pending_status_delay_ms <= 0)
		c->opts.pending_status_delay_ms = 1000;
	if (c->opts.pending_status_period_ms <= 0)
		c->opts.pending_status_period_ms = 30000;
	c->dirty_wl = json_object();
	c->dirty_jobs = json_object();
	c->expect = json_object();
	c->expect_until = json_object();
	c->busy = json_object();
	c->retry_at = json_object();
	c->gate.job_enabled = cfg->integrations.job;
	c->gate.jobset_enabled = cfg->integrations.jobset;
	c->gate.manage_jobs_without_queue_name =
	    cfg->manage_jobs_without_queue_name;
	c->gate.ns_selector = &cfg->managed_jobs_ns_selector;
	c->gate.own_namespace = cfg->namespace;
	c->wl_uid = json_object();
	c->wl_gen = json_object();
	c->in_flight = json_object();
	c->deferred = json_object();
	c->pending_at = json_object();
	c->pending_due = json_object();
	c->reported_at = json_object();
	report_budget_init(c);
	c->cq_names = json_object();
	c->rf_names = json_object();
	c->cohort_names = json_object();
	c->lq_names = json_object();
	if (!c->dirty_wl || !c->dirty_jobs || !c->expect || !c->expect_until ||
	    !c->busy || !c->retry_at || !c->wl_uid || !c->wl_gen ||
	    !c->in_flight || !c->pending_at || !c->pending_due ||
	    !c->cq_names || !c->rf_names || !c->cohort_names || !c->lq_names) {
		rc = cu_error_set(err, CU_ENOMEM, "controller: out of memory");
		goto fail;
	}
	rc = c->opts.kubeconfig != NULL
		 ? api_client_opts_from_kubeconfig(
		       &c->copts, c->opts.kubeconfig, err)
		 : api_client_opts_in_cluster(&c->copts, c->opts.sa_dir, err);
	if (rc != CU_OK)
		goto fail;
	c->copts.qps = cfg->client_connection.qps;
	c->copts.burst = cfg->client_connection.burst;
	rc = api_client_new(&c->client, loop, &c->copts, err);
	if (rc == CU_OK)
		rc = api_client_new(&c->ev_client, loop, &c->copts, err);
	if (rc == CU_OK)
		rc = que_state_new(&c->st, err);
	/* A corrupt ledger is moved aside and rebuilt from the API (the
	 * Workloads' status is the truth); read-only, full or newer ledgers
	 * stop the start-up with their "ledger ...:" message (store.h). */
	if (rc == CU_OK)
		rc = store_open_or_rebuild(&c->ledger,
		    c->opts.store_path ? c->opts.store_path : ":memory:", NULL,
		    err);
	if (rc == CU_OK)
		rc = ctl_metrics_new(&c->metrics, NULL, err);
	if (rc == CU_OK) {
		struct rec_events_opts eo;

		memset(&eo, 0, sizeof(eo));
		eo.component = "cueue-controller";
		eo.instance = c->opts.identity;
		rc = rec_events_new(&c->events, &eo, err);
	}
	if (rc == CU_OK)
		rc = start_http(c, err);
	if (rc == CU_OK)
		rc = start_webhook(c, err);
	if (rc == CU_OK)
		rc = start_certrot(c, err);
	if (rc != CU_OK)
		goto fail;
	*out = c;
	return CU_OK;
fail:
	ctl_free(c);
	return rc;
}

static void mark_all_jobs(json_t *obj, void *payload)
{
	ctl *c = payload;
	const char *kind = json_string_value(json_object_get(obj, "kind"));

	mark_job(c, kind != NULL && strcmp(kind, "JobSet") == 0 ? 'S' : 'J',
	    jmeta(obj, "namespace"), jmeta(obj, "name"));
}

static void on_started_leading(void *payload)
{
	ctl *c = payload;
	size_t i;

	cu_info("leader election: %s leads", ctl_leader_identity(c->leader));
	c->leading = true;
	ctl_metrics_set_role(c->metrics, CTL_ROLE_LEADER);
	ctl_certrot_run(c->certrot);
	/* Everything the follower watched may need a decision now. */
	c->dirty_config = true;
	c->dirty_cycle = true;
	api_informer_foreach(c->inf[INF_WL], mark_all_workloads, c);
	for (i = INF_JOB; i <= INF_JOBSET; i++)
		if (c->inf[i] != NULL)
			api_informer_foreach(c->inf[i], mark_all_jobs, c);
}

static void on_stopped_leading(void *payload)
{
	ctl *c = payload;

	c->leading = false;
	ctl_metrics_set_role(c->metrics, CTL_ROLE_FOLLOWER);
	if (c->stopping)
		return;
	/* As Kueue: a replica that lost its lease exits and is restarted,
	 * rather than risk a second writer. */
	cu_errorf("leader election: lost the lease; stopping");
	c->failed = true;
	ev_break(c->loop, EVBREAK_ALL);
}

static void on_new_leader(const char *identity, void *payload)
{
	(void)payload;
	cu_info("leader election: the leader is %s",
	    identity && identity[0] ? identity : "(none)");
}

/* The API clients' write gate, with leader election: a write still
 * waiting in a client's rate limiter or retry backoff when this replica
 * stopped leading (a stall past RenewDeadline, SIGSTOP) is withheld, not
 * sent late beside the new leader's. The election's own Lease writes
 * always pass. */
static bool write_gate(const char *method, const char *path, void *payload)
{
	static const char lease_api[] = "/apis/coordination.k8s.io/";
	ctl *c = payload;

	(void)method;
	if (c->leader == NULL ||
	    (c->leading && ctl_leader_is_leader(c->leader)))
		return true;
	return strncmp(path, lease_api, sizeof(lease_api) - 1) == 0;
}

static int start_leader(ctl *c, cu_error *err)
{
	static const struct ctl_leader_callbacks cbs = {
	    on_started_leading, on_stopped_leading, on_new_leader};
	struct ctl_leader_opts o;
	const char *ns = c->cfg->leader_election.resource_namespace;
	int rc;

	if (!c->cfg->leader_election.leader_elect) {
		ctl_metrics_set_role(c->metrics, CTL_ROLE_STANDALONE);
		return CU_OK;
	}
	memset(&o, 0, sizeof(o));
	if (ns == NULL || ns[0] == '\0')
		ns = c->copts.namespace_name && c->copts.namespace_name[0]
			 ? c->copts.namespace_name
			 : c->cfg->namespace;
	o.namespace_name = ns;
	o.name = c->cfg->leader_election.resource_name;
	o.identity = c->opts.identity;
	o.lease_duration_ns = c->cfg->leader_election.lease_duration_ns;
	o.renew_deadline_ns = c->cfg->leader_election.renew_deadline_ns;
	o.retry_period_ns = c->cfg->leader_election.retry_period_ns;
	ctl_metrics_set_role(c->metrics, CTL_ROLE_FOLLOWER);
	rc = ctl_leader_new(&c->leader, c->client, c->loop, &o, &cbs, c, err);
	if (rc == CU_OK) {
		api_client_set_write_gate(c->client, write_gate, c);
		api_client_set_write_gate(c->ev_client, write_gate, c);
		rc = ctl_leader_start(c->leader, err);
	}
	return rc;
}

bool ctl_failed(const ctl *c)
{
	return c->failed;
}

int ctl_start(ctl *c, cu_error *err)
{
	static const struct api_informer_handlers h = {
	    on_add, on_update, on_delete, NULL};
	size_t i;
	int rc;

	for (i = 0; i < INF__COUNT; i++) {
		c->slots[i].c = c;
		c->slots[i].id = (enum inf_id)i;
		if ((i == INF_JOB && !c->cfg->integrations.job) ||
		    (i == INF_JOBSET && !c->cfg->integrations.jobset))
			continue;
		rc = api_informer_new(&c->inf[i], c->client, &resources[i],
		    NULL, NULL, NULL, &h, &c->slots[i], err);
		/* The caches that grow with the cluster's work are kept as
		 * text: a Workload takes ~1.3 KiB instead of ~12 KiB. */
		if (rc == CU_OK &&
		    (i == INF_WL || i == INF_JOB || i == INF_JOBSET) &&
		    (rc = api_informer_compact(c->inf[i])) != CU_OK)
			cu_error_set(err, rc, "informer %s: out of memory",
			    resources[i].plural);
		if (rc != CU_OK)
			return rc;
	}
	if (c->probe_srv != NULL &&
	    (rc = ctl_httpd_start(c->probe_srv, err)) != CU_OK)
		return rc;
	if (c->webhook != NULL &&
	    (rc = ctl_whsrv_start(c->webhook, err)) != CU_OK)
		return rc;
	if (c->metrics_srv != NULL &&
	    (rc = ctl_httpd_start(c->metrics_srv, err)) != CU_OK)
		return rc;
	if ((rc = start_leader(c, err)) != CU_OK)
		return rc;
	ev_prepare_init(&c->turn_w, on_turn);
	c->turn_w.data = c;
	ev_prepare_start(c->loop, &c->turn_w);
	ev_timer_init(&c->tick_w, on_tick, 1.0, 1.0);
	c->tick_w.data = c;
	c->tick_due = ev_now(c->loop) + 1.0;
	ev_timer_start(c->loop, &c->tick_w);
	return CU_OK;
}

static void released(int err, void *payload)
{
	ctl *c = payload;
	void (*done)(void *) = c->stop_done;

	if (err != CU_OK)
		cu_warn("leader election: release failed (%s); the lease "
			"expires instead",
		    cu_err_name(err));
	c->stop_done = NULL;
	if (done != NULL)
		done(c->stop_payload);
}

/* Every write has been answered: give the lease back, then done. */
static void stop_writes_done(ctl *c)
{
	cu_error err;

	if (c->leader != NULL && c->leading &&
	    ctl_leader_release(c->leader, released, c, &err) == CU_OK)
		return;
	released(CU_OK, c);
}

void ctl_shutdown(ctl *c, void (*done)(void *payload), void *payload)
{
	c->stopping = true;
	c->stop_done = done;
	c->stop_payload = payload;
	flush(c);
	if (c->writes_in_flight == 0)
		stop_writes_done(c);
}

void ctl_free(ctl *c)
{
	size_t i;

	if (c == NULL)
		return;
	c->freeing = true;
	ev_prepare_stop(c->loop, &c->turn_w);
	ev_timer_stop(c->loop, &c->tick_w);
	ctl_leader_free(c->leader);
	for (i = 0; i < INF__COUNT; i++)
		api_informer_free(c->inf[i]);
	api_client_free(c->ev_client);
	api_client_free(c->client);
	api_client_opts_dispose(&c->copts);
	for (i = 0; i < c->nwrites; i++) {
		json_decref(c->writes[i].patch);
		cu_free(c->writes[i].ns);
		cu_free(c->writes[i].name);
		cu_free(c->writes[i].uid);
		cu_free(c->writes[i].expect);
		cu_free(c->writes[i].owner);
	}
	cu_free(c->writes);
	if (c->ledger != NULL && c->txn)
		store_rollback(c->ledger);
	store_close(c->ledger);
	que_state_free(c->st);
	ctl_httpd_free(c->probe_srv);
	ctl_whsrv_free(c->webhook);
	ctl_certrot_free(c->certrot);
	ctl_httpd_free(c->metrics_srv);
	ctl_health_free(c->health);
	ctl_metrics_free(c->metrics);
	rec_events_free(c->events);
	sels_clear(c);
	json_decref(c->dirty_wl);
	json_decref(c->dirty_jobs);
	json_decref(c->expect);
	json_decref(c->expect_until);
	json_decref(c->busy);
	json_decref(c->retry_at);
	json_decref(c->wl_uid);
	json_decref(c->wl_gen);
	json_decref(c->in_flight);
	json_decref(c->deferred);
	json_decref(c->pending_at);
	json_decref(c->pending_due);
	json_decref(c->reported_at);
	cu_free(c->offers);
	json_decref(c->cq_names);
	json_decref(c->rf_names);
	json_decref(c->cohort_names);
	json_decref(c->lq_names);
	cu_free(c);
}
