/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/mk_wl.c - the MultiKueue admission check controller, its
 * Workload side (see mk_int.h): for each manager Workload with a
 * MultiKueue check, the copies on the check's workers and the owner job
 * are gathered from the caches, reconcile/mk.c decides, and this file
 * carries the plan out:
 *
 *  - copies of the Workload are created on the reachable workers
 *    (AllAtOnce), with the origin label; status.nominatedClusterNames
 *    names them;
 *  - once a copy is admitted on a worker, the copies elsewhere are
 *    removed, the choice is written (status.clusterName, the check
 *    Ready) and, once the cache shows it, the job is created there (Kueue's
 * prebuilt Workload label, managedBy cleared: the worker's controllers run it),
 * the check goes Ready naming the worker (status.clusterName) and, once the
 *    manager's job runs (unsuspended, left alone by its own controller
 *    through spec.managedBy), the worker's job status is copied to it;
 *  - a copy that finished finishes the manager's Workload (with the job
 *    status copied first); a Workload finished, without quota or gone
 *    has its copies and their jobs removed;
 *  - a winner unreachable for workerLostTimeout sends the check to Retry
 *    (the Workload controller requeues the Workload);
 *  - every gcInterval, copies on connected workers whose manager
 *    Workload is gone are removed (orphans).
 *
 * Writes to the workers go through each worker's own client, one in
 * flight per object and verb (mk->inflight); writes to the manager go
 * through the pipeline with expectations, as every other write.
 */
#include <string.h>

#include "api/json.h"
#include "controller/mk_int.h"

static const struct api_resource res_wl = {
    "kueue.x-k8s.io", "v1beta2", "workloads", true};

/* ---- writes to a worker ----------------------------------------------- */

struct rw {
	struct ctl_mk *mk;
	char *cluster, *what, *key, *ns, *wl; /* [owned] */
	char *cq; /* [owned] a copy's manager ClusterQueue, or NULL */
};

static void rw_free(struct rw *r)
{
	cu_free(r->cq);
	cu_free(r->cluster);
	cu_free(r->what);
	cu_free(r->key);
	cu_free(r->ns);
	cu_free(r->wl);
	cu_free(r);
}

static void rw_done(const struct api_response *resp, void *payload)
{
	struct rw *r = payload;

	(void)ctl_keys_del(
	    &r->mk->inflight, CTL_K3(r->cluster, r->what, r->key));
	if (!resp->canceled) {
		/* multikueue_workloads_dispatched_total: a copy created. */
		if (resp->err == CU_OK && r->cq != NULL)
			(void)ctl_metric_inc(r->mk->c->metrics,
			    CTL_M_MK_WORKLOADS_DISPATCHED_TOTAL,
			    CTL_LV(r->cq, r->cluster));
		if (resp->err != CU_OK && resp->code != 404 &&
		    resp->code != 409)
			cu_warn("multikueue: cluster %s: %s %s: %s", r->cluster,
			    r->what, r->key,
			    resp->message[0] ? resp->message : resp->reason);
		ctl_mk__mark(r->mk, r->ns, r->wl);
	}
	rw_free(r);
}

enum rw_verb { RW_CREATE, RW_DELETE, RW_PATCH };

/* One write to worker w of res ns/name (body [borrowed; may be NULL]),
 * unless the same (what) is in flight; wl [borrowed]: the manager
 * Workload to look at again on the answer; cq [borrowed; may be NULL]:
 * a copy of a Workload of that ClusterQueue, counted once created. */
static void remote_send_cq(struct ctl_mk *mk, struct mk_worker *w,
    enum rw_verb verb, const char *what, const struct api_resource *res,
    const char *ns, const char *name, const char *wl, json_t *body,
    const char *cq)
{
	struct rw *r;
	char *key = cu_asprintf("%s/%s", ns, name);
	cu_error err;
	int rc;

	if (key == NULL || w->cl == NULL ||
	    ctl_keys_get(&mk->inflight, CTL_K3(w->name, what, key)) != NULL) {
		cu_free(key);
		return;
	}
	r = cu_calloc(1, sizeof(*r));
	if (r == NULL) {
		cu_free(key);
		return;
	}
	r->mk = mk;
	r->key = key;
	r->cluster = cu_strdup(w->name);
	r->what = cu_strdup(what);
	r->ns = cu_strdup(ns);
	r->wl = cu_strdup(wl);
	r->cq = cq != NULL ? cu_strdup(cq) : NULL;
	if (r->cluster == NULL || r->what == NULL || r->ns == NULL ||
	    r->wl == NULL ||
	    ctl_keys_put(&mk->inflight, CTL_K3(w->name, what, key)) == NULL) {
		rw_free(r);
		return;
	}
	cu_error_clear(&err);
	switch (verb) {
	case RW_CREATE:
		rc = api_create(NULL, w->cl, res, ns, body, rw_done, r, &err);
		break;
	case RW_DELETE:
		rc = api_delete(
		    NULL, w->cl, res, ns, name, body, rw_done, r, &err);
		break;
	default:
		rc = api_merge_patch(
		    NULL, w->cl, res, ns, name, body, false, rw_done, r, &err);
		break;
	}
	if (rc != CU_OK) {
		cu_warn("multikueue: cluster %s: %s %s/%s: %s", w->name, what,
		    ns, name, err.msg);
		(void)ctl_keys_del(&mk->inflight, CTL_K3(w->name, what, key));
		rw_free(r);
	}
}

static void remote_send(struct ctl_mk *mk, struct mk_worker *w,
    enum rw_verb verb, const char *what, const struct api_resource *res,
    const char *ns, const char *name, const char *wl, json_t *body)
{
	remote_send_cq(mk, w, verb, what, res, ns, name, wl, body, NULL);
}

static bool deleting(json_t *obj)
{
	return json_object_get(json_object_get(obj, "metadata"),
		   "deletionTimestamp") != NULL;
}

struct find_job {
	const char *ns, *wl;
	json_t *found; /* [borrowed] */
};

static void find_job(json_t *obj, void *payload)
{
	struct find_job *f = payload;
	const char *ns = ctl_jmeta(obj, "namespace");
	const char *l = api_json_str(
	    json_object_get(json_object_get(obj, "metadata"), "labels"),
	    REC_PREBUILT_WORKLOAD);

	if (ns != NULL && l != NULL && strcmp(ns, f->ns) == 0 &&
	    strcmp(l, f->wl) == 0)
		f->found = obj;
}

/* The job of kind [NULL: any] on w whose prebuilt Workload is ns/wl
 * [borrowed], or NULL; *res its resource. */
static json_t *remote_job_of(struct mk_worker *w, const char *kind,
    const char *ns, const char *wl, const char *job_name,
    const struct api_resource **res)
{
	struct find_job f = {ns, wl, NULL};
	enum inf_id want = kind != NULL ? ctl_fw_inf(kind) : INF__COUNT;
	size_t i;

	*res = CTL_RES(INF_JOB);
	for (i = 0; i < MK_MAX_ADAPTERS && f.found == NULL; i++) {
		enum inf_id id = ctl_mk__row_inf(w->mk->c, i);

		if (w->jobs[i] == NULL || (kind != NULL && id != want))
			continue;
		*res = CTL_RES(id);
		if (job_name != NULL && kind != NULL)
			return api_informer_get(w->jobs[i], ns, job_name);
		api_informer_foreach(w->jobs[i], find_job, &f);
	}
	return f.found;
}

/* Remove the copy of ns/wl and its job of kind (NULL, or job_name NULL:
 * found by its label) from w. */
static void remove_remote(struct ctl_mk *mk, struct mk_worker *w,
    const char *kind, const char *ns, const char *wl, const char *job_name)
{
	const struct api_resource *res;
	json_t *job = remote_job_of(w, kind, ns, wl, job_name, &res);
	json_t *copy = w->wl ? api_informer_get(w->wl, ns, wl) : NULL;
	json_t *opts;

	if (job != NULL && !deleting(job)) {
		opts = json_pack("{s:s}", "propagationPolicy", "Background");
		remote_send(mk, w, RW_DELETE, "delete-job", res, ns,
		    ctl_jmeta(job, "name"), wl, opts);
		json_decref(opts);
	}
	if (copy == NULL)
		return;
	/* Its worker's finalizer would keep it (Kueue removes it too). */
	if (json_array_size(json_object_get(
		json_object_get(copy, "metadata"), "finalizers")) > 0) {
		json_t *p = json_pack("{s:{s:n}}", "metadata", "finalizers");

		remote_send(
		    mk, w, RW_PATCH, "unfinalize-wl", &res_wl, ns, wl, wl, p);
		json_decref(p);
	}
	if (!deleting(copy))
		remote_send(
		    mk, w, RW_DELETE, "delete-wl", &res_wl, ns, wl, wl, NULL);
}

static void remove_everywhere(struct ctl_mk *mk, const char *ns, const char *wl)
{
	size_t i;

	for (i = 0; i < mk->nw; i++)
		if (mk->w[i]->connected)
			remove_remote(mk, mk->w[i], NULL, ns, wl, NULL);
}

/* ---- the manager's side ----------------------------------------------- */

/* The owner job of wl [borrowed]: its cache entry [borrowed], descriptor
 * and informer, or NULL. */
static json_t *owner_job(
    ctl *c, json_t *wl, const struct rec_fw **fw, enum inf_id *id)
{
	json_t *refs =
	    json_object_get(json_object_get(wl, "metadata"), "ownerReferences");
	json_t *r;
	size_t i;

	json_array_foreach(refs, i, r)
	{
		const char *kind = api_json_str(r, "kind");
		const char *name = api_json_str(r, "name");

		if (!json_is_true(json_object_get(r, "controller")) ||
		    kind == NULL || name == NULL)
			continue;
		*id = ctl_fw_inf(kind);
		if (*id == INF__COUNT || c->inf[*id] == NULL)
			return NULL;
		*fw = rec_fw_at(*id - INF_JOB);
		return api_informer_get(
		    c->inf[*id], ctl_jmeta(wl, "namespace"), name);
	}
	return NULL;
}

static const char *managed_by(const struct rec_fw *fw, json_t *doc)
{
	json_t *v = doc;
	size_t i;

	for (i = 0; fw->managed_by != NULL && fw->managed_by[i] != NULL; i++)
		v = json_object_get(v, fw->managed_by[i]);
	return fw->managed_by != NULL ? json_string_value(v) : NULL;
}

static bool suspended(const struct rec_fw *fw, json_t *doc)
{
	json_t *v = doc;
	size_t i;

	for (i = 0; fw->suspend != NULL && fw->suspend[i] != NULL; i++)
		v = json_object_get(v, fw->suspend[i]);
	return json_is_true(v);
}

/* Status merge patch [consumed; may be NULL] onto the manager's job
 * (unless a write of it is not seen back yet). */
static void job_status_write(ctl *c, enum inf_id id, json_t *job, json_t *patch)
{
	const char *ns = ctl_jmeta(job, "namespace"),
		   *name = ctl_jmeta(job, "name");
	const char *kind = ctl_fw_kind(id);
	struct ctl_pipe_write *pw;

	if (patch == NULL)
		return;
	if (ctl_pipe_stale(c->pipe, CTL_K3(kind, ns, name), job)) {
		json_decref(patch);
		return;
	}
	pw = ctl_pipe_queue(c->pipe, CTL_PIPE_JOB_RESET_START, CTL_RES(id), ns,
	    name, NULL, patch);
	if (pw != NULL)
		ctl_pipe_expect(c->pipe, pw, CTL_K3(kind, ns, name), true);
}

/* The worker's job status onto the manager's job (not while it is
 * suspended: Kueue waits for the start). */
static void copy_job_status(ctl *c, enum inf_id id, const struct rec_fw *fw,
    json_t *job, json_t *remote)
{
	if (remote == NULL || suspended(fw, job))
		return;
	job_status_write(c, id, job,
	    rec_mk_job_status_patch(rec_mk_adapter_of(fw), job, remote));
}

/* The manager ClusterQueue holding wl's quota [borrowed], or NULL. */
static const char *cq_of(json_t *wl)
{
	return api_json_str(
	    json_object_get(json_object_get(wl, "status"), "admission"),
	    "clusterQueue");
}

/* Is check [borrowed] of wl [borrowed] Ready already? */
static bool check_ready(json_t *wl, const char *check)
{
	json_t *checks =
	    json_object_get(json_object_get(wl, "status"), "admissionChecks");
	json_t *chk;
	size_t i;

	json_array_foreach(checks, i, chk)
	{
		const char *n = api_json_str(chk, "name");
		const char *st = api_json_str(chk, "state");

		if (n != NULL && strcmp(n, check) == 0)
			return st != NULL && strcmp(st, "Ready") == 0;
	}
	return false;
}

/* winner [borrowed; may be NULL]: the worker a Ready check names. */
static void status_write(ctl *c, json_t *wl, const char *check,
    const struct rec_mk_plan *p, const char *const *nominated, size_t n,
    const char *winner)
{
	const char *ns = ctl_jmeta(wl, "namespace"),
		   *name = ctl_jmeta(wl, "name");
	char now[CU_TIME_RFC3339_LEN];
	json_t *patch = NULL;
	cu_error err;

	cu_time_format_rfc3339(cu_time_now_ns(), now);
	cu_error_clear(&err);
	if (rec_mk_status_patch(
		wl, check, p, nominated, n, now, &patch, &err) != CU_OK) {
		cu_warn("workload %s/%s: %s", ns, name, err.msg);
		return;
	}
	if (patch == NULL)
		return;
	/* multikueue_workloads_admitted_total: the check goes Ready. */
	if (p->state != NULL && strcmp(p->state, "Ready") == 0 &&
	    p->remote >= 0 && !check_ready(wl, check) && cq_of(wl) != NULL)
		(void)ctl_metric_inc(c->metrics,
		    CTL_M_MK_WORKLOADS_ADMITTED_TOTAL,
		    CTL_LV(cq_of(wl), winner));
	ctl_wl_write(c, CTL_PIPE_WL_STATUS, ns, name, patch, NULL);
	if (p->message != NULL &&
	    (p->step == REC_MK_WINNER || p->step == REC_MK_RETRY))
		ctl_emit(c, wl, REC_EVENT_NORMAL, "MultiKueue", p->message);
}

/* The MultiKueue check of wl [borrowed] and its config, or NULL. */
static const char *mk_check(struct ctl_mk *mk, json_t *wl, const char **cfg)
{
	json_t *checks =
	    json_object_get(json_object_get(wl, "status"), "admissionChecks");
	json_t *chk;
	size_t i;

	json_array_foreach(checks, i, chk)
	{
		const char *n = api_json_str(chk, "name");

		if (n != NULL && (*cfg = ctl_mk__check_config(mk, n)) != NULL)
			return n;
	}
	return NULL;
}

struct wl_ctx {
	json_t *wl, *job;
	const struct rec_fw *fw;
	const struct rec_mk_adapter *adapter; /* NULL: none */
	enum inf_id id;
	const char *ns, *name, *uid;
	struct mk_worker *workers[REC_MK_MAX_CLUSTERS];
	struct rec_mk_remote remotes[REC_MK_MAX_CLUSTERS];
	size_t n;
	bool job_active; /* the job shows running pods */
};

/* Look at the lost and dispatching Workloads again at wall time at_ns. */
static void wake_at(struct ctl_mk *mk, int64_t now, int64_t at_ns)
{
	int64_t mono_due = cu_time_mono_ns() + (at_ns - now);

	if (mk->wake_ns == 0 || mono_due < mk->wake_ns)
		mk->wake_ns = mono_due;
}

/* ---- the ledger's choices -------------------------------------------- */

/* The worker the ledger recorded for uid [borrowed; may be NULL]:
 * [owned: cu_free], or NULL. */
static char *recorded_choice(ctl *c, const char *uid)
{
	char *cluster = NULL;
	cu_error err;

	if (c->ledger == NULL || uid == NULL)
		return NULL;
	cu_error_clear(&err);
	if (store_dispatch_get(c->ledger, uid, &cluster, &err) != CU_OK &&
	    err.code != CU_ENOTFOUND)
		cu_warn("ledger: %s", err.msg);
	return cluster;
}

/* Record worker cluster [borrowed] as x's choice in the turn's ledger
 * transaction. The choice is announced by a later turn that reads it
 * back: committed then, since every turn's flush commits (a failed
 * commit rolls it back and the choice is made again). */
static void record_choice(
    struct ctl_mk *mk, struct wl_ctx *x, const char *cluster, int64_t now)
{
	ctl *c = mk->c;
	cu_error err;

	if (c->ledger == NULL || x->uid == NULL ||
	    ctl_pipe_begin(c->pipe) != CU_OK)
		return;
	cu_error_clear(&err);
	if (store_dispatch_put(c->ledger, x->uid, x->ns, x->name, cluster, now,
		&err) != CU_OK) {
		cu_warn("ledger: %s", err.msg);
		return;
	}
	cu_debug("multikueue: workload %s/%s: %s chosen (recorded)", x->ns,
	    x->name, cluster);
	ctl_mk__mark(mk, x->ns, x->name);
	/* A ledger that cannot commit is not spun on: the clock's turn. */
	if (ctl_pipe_ledger_error(c->pipe)[0] == '\0')
		ctl_mk__soon(mk);
}

static void forget_choice(ctl *c, const char *uid)
{
	cu_error err;

	if (c->ledger == NULL || uid == NULL ||
	    ctl_pipe_begin(c->pipe) != CU_OK)
		return;
	cu_error_clear(&err);
	if (store_dispatch_delete(c->ledger, uid, &err) != CU_OK &&
	    err.code != CU_ENOTFOUND)
		cu_warn("ledger: %s", err.msg);
}

/* A copy on win [borrowed] finished: the worker job's final status onto
 * the manager's job first (rec_mk_finish_waits, for up to
 * workerLostTimeout from the first time it held the write back), then
 * the Workload Finished. */
static void finish(struct ctl_mk *mk, struct wl_ctx *x, const char *check,
    const struct rec_mk_plan *p, struct mk_worker *win, int64_t now)
{
	const struct api_resource *rres;
	json_t *rj = remote_job_of(win, ctl_fw_kind(x->id), x->ns, x->name,
	    ctl_jmeta(x->job, "name"), &rres);
	bool held = suspended(x->fw, x->job);
	json_t *patch =
	    rj != NULL ? rec_mk_job_status_patch(x->adapter, x->job, rj) : NULL;
	struct ctl_kent *since =
	    ctl_keys_get(&mk->finishing, CTL_K2(x->ns, x->name));
	int64_t waited = since != NULL && since->n != 0 ? now - since->n : 0;
	int64_t limit = mk->c->cfg->mk.worker_lost_ns;

	if (rec_mk_finish_waits(x->wl, x->fw, rj, held, patch, waited, limit)) {
		if (!held)
			job_status_write(mk->c, x->id, x->job, patch);
		else
			json_decref(patch);
		since = ctl_keys_put(&mk->finishing, CTL_K2(x->ns, x->name));
		if (since != NULL && since->n == 0)
			since->n = now;
		wake_at(mk, now,
		    since != NULL && since->n + limit < now + MK_FINISH_POLL_NS
			? since->n + limit
			: now + MK_FINISH_POLL_NS);
		return;
	}
	if (waited >= limit &&
	    rec_mk_finish_waits(x->wl, x->fw, rj, held, patch, 0, 1)) {
		/* Given up: the last status seen is copied as the Workload
		 * finishes (Kueue copies the worker job's status once, then
		 * finishes). */
		cu_warn(
		    "multikueue: workload %s/%s: the job on %s was not seen "
		    "finished, or the manager's job never showed its "
		    "status, within workerLostTimeout; the Workload is "
		    "finished as its copy there",
		    x->ns, x->name, win->name);
		if (!held) {
			job_status_write(mk->c, x->id, x->job, patch);
			patch = NULL;
		}
	}
	json_decref(patch);
	(void)ctl_keys_del(&mk->finishing, CTL_K2(x->ns, x->name));
	status_write(mk->c, x->wl, check, p, NULL, 0, NULL);
}

static void carry_out(struct ctl_mk *mk, struct wl_ctx *x, const char *check,
    const struct rec_mk_plan *p, int64_t now)
{
	ctl *c = mk->c;
	const char *jname = ctl_jmeta(x->job, "name");
	const char *kind = ctl_fw_kind(x->id);
	const struct api_resource *rres;
	struct mk_worker *win = p->remote >= 0 ? x->workers[p->remote] : NULL;
	size_t i;

	if (p->record != NULL)
		record_choice(mk, x, p->record, now);
	else if (p->forget)
		forget_choice(c, x->uid);
	for (i = 0; i < x->n; i++)
		if (p->remove[i])
			remove_remote(
			    mk, x->workers[i], kind, x->ns, x->name, jname);
	if (p->step != REC_MK_LOST_WAIT)
		(void)ctl_keys_del(&mk->lost, CTL_K2(x->ns, x->name));
	if (p->step != REC_MK_DISPATCH)
		(void)ctl_keys_del(&mk->rounds, CTL_K2(x->ns, x->name));
	if (p->step != REC_MK_EVICTED || p->reset_job || !x->job_active)
		(void)ctl_keys_del(&mk->evicting, CTL_K2(x->ns, x->name));
	if (p->step != REC_MK_FINISH)
		(void)ctl_keys_del(&mk->finishing, CTL_K2(x->ns, x->name));
	switch (p->step) {
	case REC_MK_REMOVE_ALL:
		if (p->clear_cluster)
			status_write(c, x->wl, check, p, NULL, 0, NULL);
		break;
	case REC_MK_FINISH:
		finish(mk, x, check, p, win, now);
		break;
	case REC_MK_WINNER: {
		json_t *rj =
		    remote_job_of(win, kind, x->ns, x->name, jname, &rres);

		/* The choice is written (status.clusterName) and seen in the
		 * cache before the job is created on the winner: a manager
		 * restarted in between finds its choice, never a second
		 * one. */
		if (p->cluster_name != NULL) {
			status_write(c, x->wl, check, p, NULL, 0, win->name);
			break;
		}
		if (rj == NULL) {
			json_t *body = rec_mk_remote_job(
			    x->fw, x->job, x->name, c->cfg->mk.origin);

			if (body != NULL)
				remote_send(mk, win, RW_CREATE, "create-job",
				    CTL_RES(x->id), x->ns, jname, x->name,
				    body);
			json_decref(body);
		} else {
			copy_job_status(c, x->id, x->fw, x->job, rj);
		}
		status_write(c, x->wl, check, p, NULL, 0, win->name);
		break;
	}
	case REC_MK_DISPATCH:
		if (p->new_round) {
			struct ctl_kent *e =
			    ctl_keys_put(&mk->rounds, CTL_K2(x->ns, x->name));

			if (e != NULL)
				e->n = now;
		}
		if (p->wake_ns != 0)
			wake_at(mk, now, p->wake_ns);
		for (i = 0; i < x->n; i++) {
			json_t *body;

			if (!p->create[i])
				continue;
			body = rec_mk_remote_workload(x->wl, c->cfg->mk.origin);
			if (body != NULL)
				remote_send_cq(mk, x->workers[i], RW_CREATE,
				    "create-wl", &res_wl, x->ns, x->name,
				    x->name, body, cq_of(x->wl));
			json_decref(body);
		}
		status_write(
		    c, x->wl, check, p, p->nominate, p->n_nominate, NULL);
		break;
	case REC_MK_LOST_WAIT: {
		struct ctl_kent *e =
		    ctl_keys_put(&mk->lost, CTL_K2(x->ns, x->name));

		if (e != NULL && e->n == 0)
			e->n = now;
		wake_at(mk, now, p->wake_ns);
		break;
	}
	case REC_MK_EVICTED:
		if (p->reset_job) {
			cu_info("multikueue: workload %s/%s evicted: its "
				"job's pods on the workers are gone or lost, "
				"its status cleared",
			    x->ns, x->name);
			job_status_write(c, x->id, x->job,
			    rec_mk_job_inactive_patch(x->adapter, x->job));
		} else if (x->job_active) {
			/* The job's stop and the copies' removal are not
			 * all news for this Workload: look again. */
			(void)ctl_keys_put(
			    &mk->evicting, CTL_K2(x->ns, x->name));
			wake_at(mk, now, now + MK_EVICT_POLL_NS);
		}
		break;
	case REC_MK_RETRY:
	case REC_MK_REJECT:
		status_write(c, x->wl, check, p, NULL, 0, NULL);
		break;
	default:
		break;
	}
}

static void workload(
    struct ctl_mk *mk, const char *ns, const char *name, int64_t now)
{
	ctl *c = mk->c;
	struct wl_ctx x;
	struct rec_mk_in in;
	struct rec_mk_plan plan;
	struct ctl_kent *lost, *round;
	const struct api_resource *rres;
	const char *check, *cfg = NULL;
	json_t *clusters, *cl, *inactive;
	size_t i;
	char *recorded, *no_adapter = NULL;

	memset(&x, 0, sizeof(x));
	x.ns = ns;
	x.name = name;
	x.wl = api_informer_get(c->inf[INF_WL], ns, name);
	if (x.wl == NULL || deleting(x.wl)) {
		remove_everywhere(mk, ns, name);
		(void)ctl_keys_del(&mk->lost, CTL_K2(ns, name));
		(void)ctl_keys_del(&mk->rounds, CTL_K2(ns, name));
		(void)ctl_keys_del(&mk->evicting, CTL_K2(ns, name));
		(void)ctl_keys_del(&mk->finishing, CTL_K2(ns, name));
		return;
	}
	if (ctl_pipe_stale(c->pipe, CTL_K3(CTL_KIND_WL, ns, name), x.wl) ||
	    ctl_pipe_awaits(c->pipe, CTL_K3(CTL_KIND_WL, ns, name)))
		return;
	check = mk_check(mk, x.wl, &cfg);
	if (check == NULL || !ctl_mk__config_clusters(mk, cfg, &clusters))
		return;
	x.job = owner_job(c, x.wl, &x.fw, &x.id);
	if (x.job == NULL || x.fw == NULL)
		return;
	x.adapter = rec_mk_adapter_of(x.fw);
	json_array_foreach(clusters, i, cl)
	{
		struct mk_worker *w = ctl_mk__worker(mk, json_string_value(cl));

		if (w == NULL || x.n == REC_MK_MAX_CLUSTERS)
			continue;
		x.workers[x.n] = w;
		x.remotes[x.n].cluster = w->name;
		x.remotes[x.n].reachable = w->connected;
		x.remotes[x.n].wl =
		    w->connected ? api_informer_get(w->wl, ns, name) : NULL;
		x.remotes[x.n].has_job =
		    w->connected &&
		    remote_job_of(w, ctl_fw_kind(x.id), ns, name,
			ctl_jmeta(x.job, "name"), &rres) != NULL;
		x.n++;
	}
	memset(&in, 0, sizeof(in));
	in.local = x.wl;
	in.check = check;
	in.job_managed_by = managed_by(x.fw, x.job);
	if (x.adapter != NULL)
		in.managed_by_field = x.adapter->managed_by_field;
	else
		in.no_adapter = no_adapter = cu_asprintf(
		    "%s/%s, Kind=%s", x.fw->group, x.fw->version, x.fw->kind);
	in.job_managed = in.job_managed_by != NULL &&
			 strcmp(in.job_managed_by, REC_MK_CONTROLLER) == 0;
	in.remotes = x.remotes;
	in.n = x.n;
	in.now_ns = now;
	lost = ctl_keys_get(&mk->lost, CTL_K2(ns, name));
	in.lost_since_ns = lost ? lost->n : 0;
	in.worker_lost_ns = c->cfg->mk.worker_lost_ns;
	in.incremental = c->cfg->mk.incremental;
	in.step_size = c->cfg->mk.step_size;
	in.round_ns = mk->round_ns;
	round = ctl_keys_get(&mk->rounds, CTL_K2(ns, name));
	in.round_start_ns = round ? round->n : 0;
	in.job_suspended = suspended(x.fw, x.job);
	inactive = rec_mk_job_inactive_patch(x.adapter, x.job);
	x.job_active = in.job_active = inactive != NULL;
	json_decref(inactive);
	x.uid = ctl_jmeta(x.wl, "uid");
	in.recorded = recorded = recorded_choice(c, x.uid);
	rec_mk_decide(&in, &plan);
	carry_out(mk, &x, check, &plan, now);
	rec_mk_plan_dispose(&plan);
	cu_free(recorded);
	cu_free(no_adapter);
}

/* ---- entry points ----------------------------------------------------- */

static void mark_if_checked(json_t *obj, void *payload)
{
	struct ctl_mk *mk = payload;

	if (json_array_size(json_object_get(
		json_object_get(obj, "status"), "admissionChecks")) > 0)
		ctl_mk__mark(
		    mk, ctl_jmeta(obj, "namespace"), ctl_jmeta(obj, "name"));
}

void ctl_mk__mark_all(struct ctl_mk *mk)
{
	mk->all_wl = true;
}

static void mark_set(struct ctl_mk *mk, ctl_keys *set)
{
	struct ctl_kent **v;
	size_t i, n;

	if (ctl_keys_ordered(set, &v, &n) != CU_OK)
		return;
	for (i = 0; i < n; i++)
		ctl_mk__mark(mk, v[i]->k[0], v[i]->k[1]);
	cu_free(v);
}

/* The Workloads waiting for a clock (a lost winner, an Incremental
 * round, an evicted one whose job still shows pods, a finished one whose
 * job does not yet show the worker's status) are looked at again. */
static void mark_lost(struct ctl_mk *mk)
{
	mark_set(mk, &mk->lost);
	mark_set(mk, &mk->rounds);
	mark_set(mk, &mk->evicting);
	mark_set(mk, &mk->finishing);
}

void ctl_mk_workloads(ctl *c, int64_t now)
{
	struct ctl_mk *mk = c->mk;
	struct ctl_kent **v;
	ctl_keys batch;
	size_t i, n;

	if (mk == NULL || !ctl_may_write(c) || c->inf[INF_ACHECK] == NULL)
		return;
	if (mk->all_wl) {
		mk->all_wl = false;
		api_informer_foreach(c->inf[INF_WL], mark_if_checked, mk);
	}
	if (mk->wake_ns != 0 && cu_time_mono_ns() >= mk->wake_ns) {
		mk->wake_ns = 0;
		mark_lost(mk);
	}
	ctl_keys_init(&batch, 2);
	ctl_keys_move(&batch, &mk->dirty);
	if (ctl_keys_ordered(&batch, &v, &n) == CU_OK) {
		for (i = 0; i < n; i++)
			workload(mk, v[i]->k[0], v[i]->k[1], now);
		cu_free(v);
	}
	ctl_keys_dispose(&batch);
	/* A Workload waiting for its job that was skipped (its own write
	 * not yet seen back) armed no clock: look again soon. */
	if (mk->wake_ns == 0 && (ctl_keys_count(&mk->finishing) > 0 ||
				    ctl_keys_count(&mk->evicting) > 0))
		wake_at(mk, now, now + MK_FINISH_POLL_NS);
}

void ctl_mk_workload(ctl *c, const char *const *key)
{
	if (c->mk != NULL && c->mk->nw > 0)
		ctl_mk__mark(c->mk, key[0], key[1]);
}

/* ---- orphans ---------------------------------------------------------- */

struct gc {
	struct ctl_mk *mk;
	struct mk_worker *w;
};

static void gc_wl(json_t *obj, void *payload)
{
	struct gc *g = payload;
	const char *ns = ctl_jmeta(obj, "namespace"),
		   *name = ctl_jmeta(obj, "name");

	if (ns != NULL && name != NULL &&
	    api_informer_get(g->mk->c->inf[INF_WL], ns, name) == NULL) {
		cu_info("multikueue: cluster %s: orphan workload %s/%s "
			"collected",
		    g->w->name, ns, name);
		remove_remote(g->mk, g->w, NULL, ns, name, NULL);
	}
}

static void gc_job(json_t *obj, void *payload)
{
	struct gc *g = payload;
	const char *ns = ctl_jmeta(obj, "namespace");
	const char *wl = api_json_str(
	    json_object_get(json_object_get(obj, "metadata"), "labels"),
	    REC_PREBUILT_WORKLOAD);

	if (ns != NULL && wl != NULL && !deleting(obj) &&
	    api_informer_get(g->mk->c->inf[INF_WL], ns, wl) == NULL)
		remove_remote(g->mk, g->w, api_json_str(obj, "kind"), ns, wl,
		    ctl_jmeta(obj, "name"));
}

struct gone {
	ctl *c;
	char **uids; /* [owned] */
	size_t n, cap;
};

static int gone_choice(const char *uid, const char *ns, const char *name,
    const char *cluster, int64_t decided_ns, void *payload)
{
	struct gone *g = payload;
	json_t *wl = api_informer_get(g->c->inf[INF_WL], ns, name);
	const char *cur = wl != NULL ? ctl_jmeta(wl, "uid") : NULL;
	char **more;

	(void)cluster;
	(void)decided_ns;
	if (cur != NULL && strcmp(cur, uid) == 0)
		return 0;
	if (g->n == g->cap) {
		more = cu_realloc(g->uids, (g->cap * 2 + 8) * sizeof(*more));
		if (more == NULL)
			return 0;
		g->uids = more;
		g->cap = g->cap * 2 + 8;
	}
	if ((g->uids[g->n] = cu_strdup(uid)) != NULL)
		g->n++;
	return 0;
}

/* The ledger's choices for Workloads no longer in the cache go (one
 * deleted while the manager was down, or gone before its choice was
 * forgotten). */
static void gc_choices(ctl *c)
{
	struct gone g = {c, NULL, 0, 0};
	cu_error err;
	size_t i;

	if (c->ledger == NULL)
		return;
	cu_error_clear(&err);
	if (store_dispatch_foreach(c->ledger, gone_choice, &g, &err) != CU_OK)
		cu_warn("ledger: %s", err.msg);
	for (i = 0; i < g.n; i++) {
		forget_choice(c, g.uids[i]);
		cu_free(g.uids[i]);
	}
	cu_free(g.uids);
}

void ctl_mk__gc(struct ctl_mk *mk)
{
	struct gc g = {mk, NULL};
	size_t i, k;

	gc_choices(mk->c);
	for (i = 0; i < mk->nw; i++) {
		g.w = mk->w[i];
		if (!g.w->connected)
			continue;
		api_informer_foreach(g.w->wl, gc_wl, &g);
		for (k = 0; k < MK_MAX_ADAPTERS; k++)
			if (g.w->jobs[k] != NULL)
				api_informer_foreach(g.w->jobs[k], gc_job, &g);
	}
}

void ctl_mk__forget_worker(struct ctl_mk *mk, struct mk_worker *w)
{
	/* Its writes in flight are cancelled with its client; their
	 * bookkeeping (mk->inflight) is keyed by name, not by w. */
	(void)mk;
	(void)w;
}
