/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/feed.c - configuration and Workloads into the engine:
 * ResourceFlavors, Cohorts, ClusterQueues and LocalQueues from their caches
 * (through reconcile/sync), their deletions, the ClusterQueues' namespace
 * selectors, the Workloads the engine holds (added, forgotten), and the
 * timer that brings a Workload back at a deadline it named.
 */
#include <stdio.h>
#include <string.h>

#include "controller/ctl_int.h"

struct sync_pass {
	ctl *c;
	ctl_keys seen; /* names present now (as the known set's keys) */
	enum inf_id id;
};

/* An invalid configuration object already logged. */
struct ctl_warned {
	char *parts[3]; /* [owned] plural, namespace ("" if none), name */
	char *uid;	/* [owned] */
	int64_t generation;
	unsigned pass; /* last ctl_sync_config pass that saw it invalid */
};

static void warned_free(struct ctl_warned *w)
{
	size_t i;

	if (w == NULL)
		return;
	for (i = 0; i < 3; i++)
		cu_free(w->parts[i]);
	cu_free(w->uid);
	cu_free(w);
}

/* The engine refused obj [borrowed] (msg [borrowed]): say so once per
 * uid and metadata.generation. Out of memory: logged every time. */
static void warn_invalid(ctl *c, enum inf_id id, json_t *obj, const char *msg)
{
	const char *ns = ctl_jmeta(obj, "namespace");
	const char *name = ctl_jmeta(obj, "name");
	const char *uid = ctl_jmeta(obj, "uid");
	int64_t gen = json_integer_value(
	    json_object_get(json_object_get(obj, "metadata"), "generation"));
	const char *key[3] = {
	    ctl_resources[id].plural, ns ? ns : "", name ? name : ""};
	struct ctl_warned *w = cu_map_get(&c->feed.warned, key);
	char *u;

	if (uid == NULL)
		uid = "";
	if (w != NULL) {
		w->pass = c->feed.pass;
		if (w->generation == gen && strcmp(w->uid, uid) == 0)
			return;
		if ((u = cu_strdup(uid)) != NULL) {
			cu_free(w->uid);
			w->uid = u;
			w->generation = gen;
		}
	} else if ((w = cu_calloc(1, sizeof(*w))) != NULL) {
		size_t i;
		bool ok = (w->uid = cu_strdup(uid)) != NULL;

		for (i = 0; i < 3; i++)
			ok = ok && (w->parts[i] = cu_strdup(key[i])) != NULL;
		w->generation = gen;
		w->pass = c->feed.pass;
		if (!ok || cu_map_put(&c->feed.warned,
			       (const char *const *)w->parts, w, NULL) != CU_OK)
			warned_free(w);
	}
	cu_warn("%s %s%s%s: %s (logged once per generation)",
	    ctl_resources[id].plural, ns ? ns : "", ns ? "/" : "",
	    name ? name : "", msg);
}

/* obj [borrowed] was accepted: a later refusal is news again. */
static void forget_invalid(ctl *c, enum inf_id id, json_t *obj)
{
	const char *ns = ctl_jmeta(obj, "namespace");
	const char *name = ctl_jmeta(obj, "name");
	const char *key[3] = {
	    ctl_resources[id].plural, ns ? ns : "", name ? name : ""};

	warned_free(cu_map_del(&c->feed.warned, key));
}

/* Entries of objects that were not refused in this pass (gone, or
 * valid) are dropped. */
static void sweep_invalid(struct ctl_feed *f)
{
	cu_map_iter it = CU_MAP_ITER_INIT;
	void *v;

	while (cu_map_next(&f->warned, &it, NULL, &v)) {
		struct ctl_warned *w = v;

		if (w->pass != f->pass)
			warned_free(cu_map_del(
			    &f->warned, (const char *const *)w->parts));
	}
}

static void sels_clear(struct ctl_feed *f)
{
	size_t i;

	for (i = 0; i < f->nsels; i++) {
		cu_free(f->sels[i].name);
		api_selector_dispose(&f->sels[i].sel);
	}
	cu_free(f->sels);
	f->sels = NULL;
	f->nsels = 0;
	f->capsels = 0;
}

/* The engine refused ClusterQueue name [borrowed] (err: why): it stays
 * known as inactive with the reason (que_cq_refuse) rather than absent,
 * so its status and its Workloads say why. The warning is logged by the
 * caller once per generation. */
static void refuse_cq(
    ctl *c, struct sync_pass *p, const char *name, const cu_error *err)
{
	cu_error e2;

	if (que_cq_refuse(c->st, name, err->msg, &e2) != CU_OK)
		cu_warn("clusterqueues %s: %s", name, e2.msg);
	else
		(void)ctl_keys_put(&p->seen, CTL_K1(name));
}

static void sync_one(json_t *obj, void *payload)
{
	struct sync_pass *p = payload;
	ctl *c = p->c;
	cu_error err;
	int rc = CU_OK;
	const char *name = ctl_jmeta(obj, "name");

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

		/* Being deleted (its finalizer holds it while Workloads use
		 * it): it admits nothing new, as Kueue's terminating
		 * ClusterQueue; what it admitted keeps its quota. */
		if (json_object_get(json_object_get(obj, "metadata"),
			"deletionTimestamp") != NULL)
			return;
		rc = api_cluster_queue_decode(&cq, obj, &err);
		if (rc != CU_OK) {
			refuse_cq(c, p, name, &err);
			break;
		}
		rc = rec_sync_cluster_queue(c->st, &cq, &err);
		if (rc == CU_EINVAL)
			refuse_cq(c, p, name, &err);
		if (rc == CU_OK)
			ctl_acheck_sync_cq(c, &cq);
		if (rc == CU_OK &&
		    cu_grow((void **)&c->feed.sels, &c->feed.capsels,
			c->feed.nsels + 1, sizeof(*c->feed.sels)) == CU_OK) {
			s = &c->feed.sels[c->feed.nsels++];
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
		if (rc == CU_OK) {
			const char *ns = ctl_jmeta(obj, "namespace");

			(void)ctl_keys_put(
			    &p->seen, CTL_K2(ns ? ns : "", name));
		}
		name = NULL;
		break;
	}
	default:
		return;
	}
	if (rc != CU_OK) {
		warn_invalid(c, p->id, obj, err.msg);
		return;
	}
	if (cu_map_count(&c->feed.warned) > 0)
		forget_invalid(c, p->id, obj);
	if (name != NULL)
		(void)ctl_keys_put(&p->seen, CTL_K1(name));
}

/* Objects the engine knows but the cache no longer has are deleted. */
/* known becomes seen (moved; seen is left empty). In the order the
 * names were last seen. */
static void sync_deletions(
    ctl *c, enum inf_id id, ctl_keys *known, ctl_keys *seen)
{
	struct ctl_kent **v;
	size_t i, n;
	cu_error err;

	if (ctl_keys_ordered(known, &v, &n) != CU_OK)
		n = 0;
	for (i = 0; i < n; i++) {
		const char *key = v[i]->k[0];
		int rc = CU_OK;

		if (ctl_keys_get(seen, (const char *const *)v[i]->k) != NULL)
			continue;
		if (id == INF_RF) {
			rc = que_flavor_delete(c->st, key, &err);
		} else if (id == INF_CQ) {
			rc = que_cq_delete(c->st, key, &err);
			ctl_wm_forget_cq(c, key);
		} else if (id == INF_COHORT) {
			rc = que_cohort_delete(c->st, key, &err);
		} else if (id == INF_LQ) {
			rc = que_lq_delete(c->st, key, v[i]->k[1], &err);
			ctl_wm_forget_lq(c, key, v[i]->k[1]);
		}
		if (rc != CU_OK && rc != CU_ENOTFOUND)
			cu_warn("delete %s%s%s: %s", key,
			    id == INF_LQ ? "/" : "",
			    id == INF_LQ ? v[i]->k[1] : "", err.msg);
	}
	cu_free(v);
	ctl_keys_move(known, seen);
}

/* The loop wakes for a sync that had to wait: the turn that follows
 * (ev_prepare) does it. */
static void on_sync_due(struct ev_loop *loop, ev_timer *w, int revents)
{
	ctl *c = w->data;

	(void)loop;
	(void)revents;
	c->feed.sync_armed = false;
}

bool ctl_config_due(ctl *c)
{
	int64_t now = cu_time_mono_ns();

	if (now >= c->feed.sync_next_ns)
		return true;
	if (!c->feed.sync_armed) {
		ev_init(&c->feed.sync_w, on_sync_due);
		c->feed.sync_w.data = c;
		ev_timer_set(&c->feed.sync_w,
		    cu_ns_to_secs(c->feed.sync_next_ns - now) + 0.001, 0.);
		ev_timer_start(c->loop, &c->feed.sync_w);
		c->feed.sync_armed = true;
	}
	return false;
}

void ctl_sync_config(ctl *c)
{
	static const enum inf_id order[] = {INF_RF, INF_COHORT, INF_CQ, INF_LQ};
	ctl_keys *known[] = {&c->feed.rf_names, &c->feed.cohort_names,
	    &c->feed.cq_names, &c->feed.lq_names};
	int64_t start = cu_time_mono_ns(), cost;
	size_t i;
	cu_error err;

	if (c->feed.sync_armed) {
		ev_timer_stop(c->loop, &c->feed.sync_w);
		c->feed.sync_armed = false;
	}
	sels_clear(&c->feed);
	c->feed.pass++;
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		struct sync_pass p = {.c = c, .id = order[i]};

		ctl_keys_init(&p.seen, order[i] == INF_LQ ? 2 : 1);
		api_informer_foreach(c->inf[order[i]], sync_one, &p);
		sync_deletions(c, order[i], known[i], &p.seen);
		ctl_keys_dispose(&p.seen);
	}
	sweep_invalid(&c->feed);
	if (que_rebuild(c->st, &err) != CU_OK)
		cu_warn("engine rebuild: %s", err.msg);
	c->dirty_config = false;
	/* Churn is batched: the next sync waits a few times this one's
	 * cost, so that a burst of configuration events costs a few
	 * rebuilds and the turns between keep admitting. */
	cost = cu_time_mono_ns() - start;
	c->feed.sync_next_ns =
	    start + cost +
	    (cost * CTL_SYNC_SPACING < CTL_SYNC_SPACING_MAX_NS
		    ? cost * CTL_SYNC_SPACING
		    : CTL_SYNC_SPACING_MAX_NS);
	cu_debug("configuration synced: %zu flavors, %zu cluster queues, %zu "
		 "local queues in %.3f ms",
	    ctl_keys_count(&c->feed.rf_names),
	    ctl_keys_count(&c->feed.cq_names),
	    ctl_keys_count(&c->feed.lq_names), (double)cost / 1e6);
}

/* ---- the resource-in-use finalizers ---------------------------------- */

/* The finalizer write of ClusterQueue or ResourceFlavor obj (id INF_CQ
 * or INF_RF), unless one is awaited or waits for its retry. */
static void finalizer_sync(ctl *c, enum inf_id id, json_t *obj, bool in_use)
{
	const char *name = ctl_jmeta(obj, "name");
	const char *const *key =
	    CTL_K3(id == INF_CQ ? CTL_KIND_CQ : CTL_KIND_RF, "", name);
	struct ctl_pipe_write *w;
	json_t *patch = NULL;
	cu_error err;

	if (name == NULL || c->feed.fin_spent ||
	    ctl_pipe_stale(c->pipe, key, obj) ||
	    ctl_pipe_retrying(c->pipe, key))
		return;
	if (rec_in_use_finalizer_patch(obj, in_use, &patch, &err) != CU_OK) {
		cu_warn("%s %s: %s", key[0], name, err.msg);
		return;
	}
	if (patch == NULL)
		return;
	/* Thousands of new or deleted flavors must not queue thousands of
	 * writes ahead of admissions: finalizers have a budget of their
	 * own; the rest wait for the next tick. */
	if (!ctl_pipe_budget_take(
		c->pipe, CTL_PIPE_BUDGET_FINALIZERS, cu_time_now_ms())) {
		c->feed.fin_spent = true;
		json_decref(patch);
		return;
	}
	w = ctl_pipe_queue(
	    c->pipe, CTL_PIPE_WL_PATCH, CTL_RES(id), NULL, name, NULL, patch);
	ctl_pipe_set_budget(c->pipe, w, CTL_PIPE_BUDGET_FINALIZERS);
	if (w != NULL)
		ctl_pipe_expect(c->pipe, w, key, true);
}

struct flavor_pass {
	ctl *c;
	const char *flavor; /* the flavor looked for */
	bool used;
};

static void cq_uses(json_t *cq, void *payload)
{
	struct flavor_pass *p = payload;

	p->used = p->used || rec_cq_uses_flavor(cq, p->flavor);
}

static void flavor_finalizer(json_t *rf, void *payload)
{
	ctl *c = payload;
	const char *name = ctl_jmeta(rf, "name");
	struct flavor_pass p = {c, name, false};

	if (name == NULL || c->feed.fin_spent)
		return;
	/* Only a flavor being deleted needs the scan: Kueue's
	 * ClusterQueuesUsingFlavor, every ClusterQueue that still exists. */
	if (json_object_get(
		json_object_get(rf, "metadata"), "deletionTimestamp") != NULL)
		api_informer_foreach(c->inf[INF_CQ], cq_uses, &p);
	finalizer_sync(c, INF_RF, rf, p.used);
}

void ctl_sync_finalizers(ctl *c)
{
	size_t i, n = que_cq_count(c->st);

	c->feed.fin_spent = false;
	/* The engine keeps a deleted ClusterQueue while Workloads it
	 * admitted hold quota: that is what "in use" means (Kueue's
	 * ClusterQueueEmpty). */
	for (i = 0; i < n; i++) {
		struct que_cq *cq = que_cq_at(c->st, i);
		json_t *obj;

		if (cq != NULL && (obj = api_informer_get(
				       c->inf[INF_CQ], NULL, cq->name)) != NULL)
			finalizer_sync(c, INF_CQ, obj, cq->admitted.n > 0);
	}
	api_informer_foreach(c->inf[INF_RF], flavor_finalizer, c);
}

/* Does the ClusterQueue behind LocalQueue ns/queue admit namespace ns?
 * Unknown LocalQueue or ClusterQueue: true, so that the engine reports the
 * upstream cause (a missing queue) rather than a namespace mismatch. */
bool ctl_eligible(ctl *c, const char *ns, const char *queue)
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
	for (i = 0; i < c->feed.nsels; i++) {
		if (strcmp(c->feed.sels[i].name, cq) != 0)
			continue;
		if (!c->feed.sels[i].has)
			return false; /* nil selector: no namespace */
		nsobj = api_informer_get(c->inf[INF_NS], NULL, ns);
		if (nsobj == NULL)
			return false;
		return ns_selector_matches(
		    &c->feed.sels[i].sel, ctl_ns_label, nsobj);
	}
	return true;
}

/* Arm the wake timer for at_ns (INT64_MAX: stopped). */
static void wake_arm_at(ctl *c, int64_t at_ns)
{
	int64_t now = cu_time_now_ns();

	if (c->feed.wake_armed)
		ev_timer_stop(c->loop, &c->feed.wake_w);
	c->feed.wake_armed = false;
	if (at_ns == INT64_MAX)
		return;
	ev_timer_set(&c->feed.wake_w,
	    at_ns > now ? cu_ns_to_secs(at_ns - now) + 0.001 : 0.0, 0.0);
	ev_timer_start(c->loop, &c->feed.wake_w);
	c->feed.wake_armed = true;
	c->feed.wake_due = at_ns;
}

/* Arm the wake timer for the earliest deadline (none: stopped). */
static void wake_arm(ctl *c)
{
	cu_map_iter it = CU_MAP_ITER_INIT;
	void *v;
	int64_t first = INT64_MAX;

	while (cu_map_next(&c->feed.wake.map, &it, NULL, &v)) {
		const struct ctl_kent *e = v;

		if (e->n < first)
			first = e->n;
	}
	wake_arm_at(c, first);
}

static void on_wake(struct ev_loop *loop, ev_timer *w, int revents)
{
	ctl *c = w->data;
	int64_t now = cu_time_now_ns();
	struct ctl_kent **v;
	size_t i, n;

	(void)loop;
	(void)revents;
	c->feed.wake_armed = false;
	/* In the order the deadlines were first set (as before). */
	if (ctl_keys_ordered(&c->feed.wake, &v, &n) != CU_OK)
		n = 0;
	for (i = 0; i < n; i++) {
		const char *const *key = (const char *const *)v[i]->k;

		if (v[i]->n > now)
			continue;
		(void)ctl_keys_put(&c->dirty_wl, key);
		ctl_keys_del(&c->feed.wake, key);
	}
	cu_free(v);
	wake_arm(c);
}

void ctl_wake_workload(ctl *c, const char *const *key, int64_t at_ns)
{
	struct ctl_kent *cur = ctl_keys_get(&c->feed.wake, key);

	/* Several deadlines of one Workload (maximumExecutionTimeSeconds,
	 * the PodsReady timeout): the earliest ahead wins; its reconcile
	 * arms the next. */
	if (cur != NULL &&
	    (cur->n == at_ns || (cur->n < at_ns && cur->n > cu_time_now_ns())))
		return;
	if (!c->feed.wake_armed && c->feed.wake_w.data != c) {
		ev_timer_init(&c->feed.wake_w, on_wake, 0.0, 0.0);
		c->feed.wake_w.data = c;
	}
	if ((cur = ctl_keys_put(&c->feed.wake, key)) != NULL)
		cur->n = at_ns;
	/* Without a scan (one deadline per admitted Workload with
	 * waitForPodsReady): the armed timer fires no later than this one;
	 * a deadline that moved later only makes it fire early (on_wake
	 * looks at them all). */
	if (!c->feed.wake_armed || at_ns < c->feed.wake_due)
		wake_arm_at(c, at_ns);
}

void ctl_forget_workload(ctl *c, const char *const *key, const char *uid)
{
	cu_error err;

	if (que_workload_remove(c->st, uid, &err) != CU_OK &&
	    err.code != CU_ENOTFOUND)
		cu_warn("engine: %s", err.msg);
	ctl_ledger_release(c, uid, 0);
	ctl_pr_track(c, uid, false);
	ctl_keys_del(&c->rep.pending_at, CTL_K1(uid));
	ctl_keys_del(&c->rep.pending_due, CTL_K1(uid));
	ctl_keys_del(&c->feed.wake, key);
	ctl_tas_forget(c, uid);
	c->dirty_cycle = true;
}

/* A Workload the engine refuses because of what it asks (a negative
 * request: Kueue's webhook refuses those, but none may run) is said on
 * the Workload, not only in the log: a Warning event Pending with the
 * validation's message (the events recorder folds repeats into a series
 * and limits their rate). */
static void say_invalid(ctl *c, const char *const *key)
{
	json_t *obj = api_informer_get(c->inf[INF_WL], key[0], key[1]);
	cu_error why;

	if (obj != NULL && rec_wl_requests_valid(obj, &why) != CU_OK)
		ctl_emit(c, obj, REC_EVENT_WARNING, "Pending", why.msg);
}

void ctl_add_workload(
    ctl *c, const char *const *key, const struct api_workload *wl)
{
	cu_error err;
	int rc = ctl_dra_sync_workload(c, wl,
	    ctl_eligible(c, wl->meta.namespace_, wl->spec.queue_name), &err);

	if (rc != CU_OK && rc != CU_ENOTFOUND) {
		cu_warn("workload %s/%s: %s", key[0], key[1], err.msg);
		if (rc == CU_EINVAL)
			say_invalid(c, key);
		return;
	}
	if (rc == CU_ENOTFOUND)
		cu_warn("workload %s/%s: %s", key[0], key[1], err.msg);
	cu_debug("workload %s/%s queued (%s)", key[0], key[1],
	    rec_workload_holds_quota(wl) ? "adopted" : "pending");
	/* The engine holds it (also on CU_ENOTFOUND: added, not adopted);
	 * its record keeps the generation, and the name it is found by. */
	if (que_workload_set_generation(c->st, wl->meta.uid,
		wl->meta.has_generation ? wl->meta.generation : 0,
		&err) != CU_OK)
		cu_debug("workload %s/%s: %s", key[0], key[1], err.msg);
	ctl_tas_workload(c, wl);
	c->dirty_cycle = true;
}

int ctl_feed_init(struct ctl_feed *f)
{
	memset(f, 0, sizeof(*f));
	cu_map_init_parts(&f->warned, 3);
	ctl_keys_init(&f->cq_names, 1);
	ctl_keys_init(&f->rf_names, 1);
	ctl_keys_init(&f->cohort_names, 1);
	ctl_keys_init(&f->lq_names, 2);
	ctl_keys_init(&f->wake, 2);
	return CU_OK;
}

void ctl_feed_dispose(struct ctl_feed *f)
{
	ctl_keys_dispose(&f->cq_names);
	ctl_keys_dispose(&f->rf_names);
	ctl_keys_dispose(&f->cohort_names);
	ctl_keys_dispose(&f->lq_names);
	ctl_keys_dispose(&f->wake);
	sels_clear(f);
	if (f->warned.kind == CU_MAP_PARTS) {
		cu_map_iter it = CU_MAP_ITER_INIT;
		void *v;

		while (cu_map_next(&f->warned, &it, NULL, &v))
			warned_free(v);
		cu_map_dispose(&f->warned);
	}
	memset(f, 0, sizeof(*f));
}
