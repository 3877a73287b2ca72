/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/reconcilers.c - the controller's side of the two pure
 * reconcilers (reconcile/reconcile.h): gather their inputs from the caches
 * (the namespace gate first: a job that is not ours is neither decoded nor
 * written to), call rec_job_reconcile / rec_workload_reconcile (and the
 * pod-group and LeaderWorkerSet reconcilers), and hand the plan they
 * return to ctl_apply_plan (controller/plans.c).
 */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "api/json.h"
#include "controller/ctl_int.h"

/* ---- the Workload reconciler: inputs, rec_workload_reconcile, plan ---- */

static bool view_eligible(const char *ns, const char *queue, void *payload)
{
	return ctl_eligible(payload, ns, queue);
}

/*
 * FinishOrphanedWorkloads for a Workload that lost its owner references
 * (a job deleted with orphan propagation: the garbage collector strips
 * them before the job goes) but keeps the job-uid label: finished
 * (OwnerNotFound) and let go of, as a gone job's own Workloads. true when
 * writes were planned for it.
 */
static bool orphaned(ctl *c, const struct api_workload *wl, int64_t now)
{
	const struct api_workload *owned[1] = {wl};
	struct rec_job_in in;
	struct rec_plan plan;
	struct ctl_plan_ctx x;
	cu_error err;
	bool wrote;

	if (!c->cfg->job_gates.finish_orphaned || !ctl_may_write(c) ||
	    wl->meta.n_owner_refs > 0 ||
	    api_strmap_get(&wl->meta.labels, REC_LABEL_JOB_UID) == NULL)
		return false;
	memset(&in, 0, sizeof(in));
	in.ns = wl->meta.namespace_;
	in.owned = owned;
	in.n_owned = 1;
	rec_plan_init(&plan);
	if (rec_job_gone_finish(&in, now, &plan, &err) != CU_OK)
		cu_warn("workload %s/%s: %s", wl->meta.namespace_,
		    wl->meta.name, err.msg);
	wrote = plan.n > 0;
	memset(&x, 0, sizeof(x));
	x.now = now;
	ctl_apply_plan(c, &x, &plan);
	return wrote;
}

void ctl_reconcile_workload(ctl *c, const char *const *key, int64_t now)
{
	const char *ns = key[0], *name = key[1];
	json_t *obj;
	struct api_workload wl;
	struct rec_wl_view v;
	struct rec_plan plan;
	struct ctl_plan_ctx x;
	struct que_wl *qw;
	cu_error err = {0}; /* an out parameter; cppcheck's CTU flags it */
	bool have = false, has_cq = false;
	struct api_cluster_queue cq;
	char *engine_uid = NULL;

	obj = api_informer_get(c->inf[INF_WL], ns, name);
	if (obj != NULL) {
		if (ctl_pipe_stale(c->pipe, CTL_K3(CTL_KIND_WL, ns, name), obj))
			return; /* our own write has not reached the cache */
		if (api_workload_decode(&wl, obj, &err) != CU_OK) {
			cu_warn("workload %s/%s: %s", ns, name, err.msg);
			return;
		}
		have = true;
	}
	memset(&v, 0, sizeof(v));
	{
		/* A copy: the plan may forget (free) the record it is in. */
		const struct que_wl *e =
		    que_workload_by_name(c->st, key[0], key[1]);

		if (e != NULL && (engine_uid = cu_strdup(e->uid)) == NULL) {
			if (have)
				api_workload_dispose(&wl);
			return; /* out of memory: the next event retries */
		}
		v.engine_uid = engine_uid;
	}
	v.eligible = view_eligible;
	v.payload = c;
	if (have) {
		v.in_flight = ctl_keys_get(&c->dec.in_flight,
				  CTL_K1(wl.meta.uid)) != NULL;
		qw = que_workload_get(c->st, wl.meta.uid);
		v.engine_wl = qw;
		v.queued = qw != NULL;
		v.where = qw != NULL ? qw->where : QUE_WL_BLOCKED;
		v.namespace_eligible = qw != NULL && qw->namespace_eligible;
		v.queued_generation = qw != NULL ? qw->generation : 0;
		if (qw != NULL && qw->lq != NULL)
			v.lq_stop = qw->lq->stop;
		if (qw != NULL && qw->cq != NULL)
			v.cq_stop = qw->cq->stop;
		if (qw != NULL && qw->where == QUE_WL_BACKOFF)
			v.backoff_until = qw->requeue_at;
		if (wl.status.has_admission &&
		    (has_cq =
			    ctl_acheck_cq(c, wl.status.admission.cluster_queue,
				wl.status.n_admission_checks > 0, &cq)))
			v.cq_checks = &cq.spec;
	}
	/* The ledger is read only where the one admission producer needs
	 * it: a Workload whose checks could admit it. */
	if (have && (v.cq_checks != NULL || wl.status.n_admission_checks > 0) &&
	    rec_workload_holds_quota(&wl) &&
	    !api_conditions_true(&wl.status.conditions, REC_COND_ADMITTED))
		v.ledger = ctl_ledger_state(c, wl.meta.uid);
	if (have && orphaned(c, &wl, now)) {
		api_workload_dispose(&wl);
		if (has_cq)
			api_cluster_queue_dispose(&cq);
		cu_free(engine_uid);
		return; /* its writes bring it back */
	}
	v.pods_ready = &c->pr.cfg;
	v.now_ns = now;
	v.read_only = !ctl_may_write(c);
	v.no_admission_gated_by = !c->cfg->job_gates.admission_gated_by;
	v.pending_reason = c->cfg->metrics.unadmitted ? NULL : "Pending";
	rec_plan_init(&plan);
	if (rec_workload_reconcile(&v, have ? &wl : NULL, &plan, &err) != CU_OK)
		cu_warn("workload %s/%s: %s", ns, name, err.msg);
	memset(&x, 0, sizeof(x));
	x.wl_key = key;
	x.wl = have ? &wl : NULL;
	x.job_obj = obj; /* its events are about the Workload */
	x.now = now;
	ctl_apply_plan(c, &x, &plan);
	/* blockAdmission's set: Workloads holding quota whose pods are not
	 * ready. */
	if (have)
		ctl_pr_track(c, wl.meta.uid,
		    rec_workload_holds_quota(&wl) &&
			!api_conditions_true(
			    &wl.status.conditions, REC_COND_FINISHED) &&
			!api_conditions_true(
			    &wl.status.conditions, REC_COND_PODS_READY));
	else
		ctl_pr_track(c, v.engine_uid, false);
	ctl_wm_seen(c, key, have ? &wl : NULL);
	if (have)
		api_workload_dispose(&wl);
	if (has_cq)
		api_cluster_queue_dispose(&cq);
	cu_free(engine_uid);
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

	if (ctl_jmeta(wl, "namespace") == NULL ||
	    strcmp(ctl_jmeta(wl, "namespace"), o->ns) != 0)
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

/* ---- the job reconciler: inputs, rec_job_reconcile, plan ------------- */

static int view_flavors(const struct api_workload *wl,
    struct api_resource_flavor **out, size_t *n, void *payload, cu_error *err)
{
	return ctl_admitted_flavors(payload, wl, out, n, err);
}

static bool view_lq_exists(const char *ns, const char *name, void *payload)
{
	ctl *c = payload;

	return api_informer_get(c->inf[INF_LQ], ns, name) != NULL;
}

/* The priority class lookups over the controller's caches. */
static struct api_priority_lookup priority_lookup(ctl *c)
{
	struct api_priority_lookup lk = {ctl_lookup_wpc, ctl_lookup_pc,
	    ctl_lookup_pc_default,
	    api_informer_get(c->inf[INF_WPC], NULL, API_DEFAULT_WPC_NAME) !=
		NULL,
	    c};

	return lk;
}

/* keys [caller's, outlives the view]: the labelKeysToCopy view of the
 * configuration (its strings borrowed from c->cfg), with the keys of
 * Workload-sourced custom metric labels. */
static void job_view_init(
    ctl *c, struct rec_job_view *v, struct api_strlist *keys)
{
	memset(v, 0, sizeof(*v));
	v->managed = true;
	v->admitted_flavors = view_flavors;
	v->local_queue_exists = view_lq_exists;
	keys->items = c->copy_keys != NULL
			  ? c->copy_keys
			  : c->cfg->integrations.label_keys_to_copy;
	keys->n = c->copy_keys != NULL
		      ? c->ncopy_keys
		      : c->cfg->integrations.nlabel_keys_to_copy;
	v->label_keys_to_copy = keys;
	v->payload = c;
	v->no_admission_gated_by = !c->cfg->job_gates.admission_gated_by;
	v->no_elastic_jobs = !c->cfg->job_gates.elastic_jobs;
	v->no_skip_pod_owned = !c->cfg->tas_gates.skip_pod_owned;
}

/* The first n of wls, decoded, and the arrays wls and owned (pointers
 * to them) freed. */
static void workloads_dispose(
    struct api_workload *wls, const struct api_workload **owned, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		api_workload_dispose(&wls[i]);
	cu_free(wls);
	cu_free(owned);
}

/* The job is gone: its Workloads go too (rec_job_reconcile, step 0). */
static void job_deleted(
    ctl *c, enum inf_id inf, const char *ns, const char *name, int64_t now)
{
	struct owned o = {ctl_fw_kind(inf), name, ns, json_array()};
	struct api_workload *wls = NULL;
	const struct api_workload **owned = NULL;
	struct api_strlist keys;
	struct rec_job_view v;
	struct rec_job_in in;
	struct rec_plan plan;
	struct ctl_plan_ctx x;
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
		/* Our own write to it has not reached the cache yet. */
		const char *wn = ctl_jmeta(wl, "name");

		if (c->cfg->job_gates.finish_orphaned && wn != NULL &&
		    ctl_pipe_stale(c->pipe, CTL_K3(CTL_KIND_WL, ns, wn), wl))
			continue;
		if (api_workload_decode(&wls[n], wl, &err) != CU_OK) {
			cu_warn("workload %s/%s: %s", ns, ctl_jmeta(wl, "name"),
			    err.msg);
			continue;
		}
		owned[n] = &wls[n];
		n++;
	}
	job_view_init(c, &v, &keys);
	memset(&in, 0, sizeof(in));
	in.kind = inf == INF_JOB      ? REC_JOB_BATCH
		  : inf == INF_JOBSET ? REC_JOB_JOBSET
				      : REC_JOB_DOC;
	in.ns = ns;
	in.name = name;
	in.owned = owned;
	in.n_owned = n;
	rec_plan_init(&plan);
	/* FinishOrphanedWorkloads: finished and kept; else deleted (the
	 * garbage collector's part, which the local server lacks). */
	if ((c->cfg->job_gates.finish_orphaned
		    ? rec_job_gone_finish(&in, now, &plan, &err)
		    : rec_job_reconcile(&v, &in, 0, &plan, &err)) != CU_OK)
		cu_warn("job %s/%s gone: %s", ns, name, err.msg);
	memset(&x, 0, sizeof(x));
	x.inf = inf;
	ctl_apply_plan(c, &x, &plan);
out:
	workloads_dispose(wls, owned, n);
	json_decref(o.found);
}

/* The gate's answer for the cached job obj in ns, decided as for an
 * object of kind `as` (NS_GATE_KIND_OTHER: its own); queue_name
 * [borrowed from obj]. A gate error reads as not managed (retried
 * later). */
static bool job_gate_as(ctl *c, json_t *obj, const char *ns, const char **queue,
    enum ns_gate_kind as)
{
	struct ns_gate_object gobj;
	struct ns_gate_namespace gns;
	struct ns_gate_decision dec;
	json_t *nsobj;
	cu_error err;

	if (ns_gate_object_from_json(&gobj, obj, &err) != CU_OK)
		return false;
	if (as != NS_GATE_KIND_OTHER)
		gobj.kind = as;
	nsobj = api_informer_get(c->inf[INF_NS], NULL, ns);
	gns.name = ns;
	gns.found = nsobj != NULL;
	gns.get = ctl_ns_label;
	gns.payload = nsobj;
	if (ns_gate_decide(&c->gate, &gobj, &gns, ctl_gate_lookup, c, &dec,
		&err) != CU_OK ||
	    dec.managed != NS_GATE_YES)
		return false;
	*queue = dec.queue_name;
	return true;
}

static bool job_gate(ctl *c, json_t *obj, const char *ns, const char **queue)
{
	return job_gate_as(c, obj, ns, queue, NS_GATE_KIND_OTHER);
}

/* The job's Workload ns/wlname as cached, decoded into *wl (*have), or
 * *awaited: our own last write to it has not reached the cache (stale,
 * or busy/expected while absent: our create is not there yet). The job
 * (key [borrowed]) skipped while a write to the Workload is in flight is
 * looked at again when it is answered: its watch event may have come
 * first, and been skipped. */
static void job_workload(ctl *c, const char *const *key, const char *wlname,
    struct api_workload *wl, bool *have, bool *awaited)
{
	const char *ns = key[1];

	json_t *wlobj = api_informer_get(c->inf[INF_WL], ns, wlname);
	const char *const *ek = CTL_K3(CTL_KIND_WL, ns, wlname);
	cu_error err = {0}; /* an out parameter; cppcheck's CTU flags it */

	*have = false;
	*awaited = false;
	if (wlobj != NULL) {
		*awaited = ctl_pipe_stale(c->pipe, ek, wlobj);
		if (!*awaited)
			*have = api_workload_decode(wl, wlobj, &err) == CU_OK;
	} else {
		/* Absent from a cache that has seen past our last write to
		 * it: it is gone, not late. */
		ctl_pipe_gone_past_expect(c->pipe, c->inf[INF_WL], ek);
		*awaited = ctl_pipe_awaits(c->pipe, ek);
	}
	if (*awaited)
		ctl_pipe_await_answer(c->pipe, ek, key[0], key[2]);
}

/* A job of informer id as cached (obj [borrowed]) decoded into *j: the
 * typed kinds into d's job or jobset, the others as their document and
 * its metadata (framework descriptors). false (logged) when it cannot be
 * read; then nothing is to be disposed. */
struct job_dec {
	struct api_job job;
	struct api_jobset js;
	struct api_meta meta;
};

static bool job_decode(enum inf_id id, json_t *obj, const char *ns,
    const char *name, struct rec_job *j, struct job_dec *d)
{
	cu_error err = {0}; /* an out parameter; cppcheck's CTU flags it */
	int rc;

	memset(j, 0, sizeof(*j));
	if (id == INF_JOB) {
		rc = api_job_decode(&d->job, obj, &err);
		j->kind = REC_JOB_BATCH;
		j->job = &d->job;
	} else if (id == INF_JOBSET) {
		rc = api_jobset_decode(&d->js, obj, &err);
		j->kind = REC_JOB_JOBSET;
		j->jobset = &d->js;
	} else {
		rc = api_meta_decode(
		    &d->meta, json_object_get(obj, "metadata"), &err);
		j->kind = REC_JOB_DOC;
		j->fw = rec_fw_at((size_t)(id - INF_JOB));
		j->doc = obj;
		j->meta = &d->meta;
	}
	if (rc != CU_OK)
		cu_warn("%s %s/%s: %s", ctl_fw_kind(id), ns, name, err.msg);
	return rc == CU_OK;
}

static void job_dispose(const struct rec_job *j, struct job_dec *d)
{
	if (j->kind == REC_JOB_BATCH)
		api_job_dispose(&d->job);
	else if (j->kind == REC_JOB_JOBSET)
		api_jobset_dispose(&d->js);
	else
		api_meta_dispose(&d->meta);
}

/* An elastic job's Workload slices (ElasticJobsViaWorkloadSlices): the
 * Workloads it controls as cached, decoded (wls[0..n)), the ones its
 * reconciler looks at (pick), the name of a new slice (slice_name,
 * with the job's generation, as Kueue names slices) and whether a write
 * of ours to one of them has not reached the cache yet (awaited). */
struct slices {
	struct api_workload *wls;
	const struct api_workload **ptrs;
	size_t n;
	struct rec_slices pick;
	char *slice_name;
	bool awaited;
};

static void slices_dispose(struct slices *sl)
{
	size_t i;

	for (i = 0; i < sl->n; i++)
		api_workload_dispose(&sl->wls[i]);
	cu_free(sl->wls);
	cu_free(sl->ptrs);
	cu_free(sl->slice_name);
	memset(sl, 0, sizeof(*sl));
}

/* false: out of memory or the name cannot be derived (logged). */
static bool slices_gather(ctl *c, const char *ns, const char *name,
    const struct rec_job *j, struct slices *sl)
{
	const struct api_meta *m = rec_job_meta(j);
	struct owned o = {rec_job_fw(j)->kind, name, ns, json_array()};
	size_t i, k = json_array_size(o.found);
	json_t *wl;
	cu_error err;

	memset(sl, 0, sizeof(*sl));
	if (o.found == NULL ||
	    api_workload_name(rec_job_fw(j)->kind, rec_job_fw(j)->group, name,
		m->uid, m->has_generation ? m->generation : -1,
		API_WORKLOAD_NAME_MAX, &sl->slice_name, &err) != CU_OK) {
		json_decref(o.found);
		return false;
	}
	api_informer_foreach(c->inf[INF_WL], find_owned, &o);
	k = json_array_size(o.found);
	sl->wls = cu_calloc(k + 1, sizeof(*sl->wls));
	sl->ptrs = cu_calloc(k + 1, sizeof(*sl->ptrs));
	if (sl->wls == NULL || sl->ptrs == NULL) {
		json_decref(o.found);
		slices_dispose(sl);
		return false;
	}
	json_array_foreach(o.found, i, wl)
	{
		const char *wn = ctl_jmeta(wl, "name");

		if (wn != NULL &&
		    ctl_pipe_stale(c->pipe, CTL_K3(CTL_KIND_WL, ns, wn), wl)) {
			sl->awaited = true;
			ctl_pipe_await_answer(
			    c->pipe, CTL_K3(CTL_KIND_WL, ns, wn), o.kind, name);
		}
		if (api_workload_decode(&sl->wls[sl->n], wl, &err) != CU_OK)
			continue;
		sl->ptrs[sl->n] = &sl->wls[sl->n];
		sl->n++;
	}
	json_decref(o.found);
	rec_slices_pick(sl->ptrs, sl->n, &sl->pick);
	if (ctl_pipe_awaits(c->pipe, CTL_K3(CTL_KIND_WL, ns, sl->slice_name)) &&
	    (sl->pick.wl == NULL ||
		strcmp(sl->pick.wl->meta.name, sl->slice_name) != 0)) {
		sl->awaited = true;
		ctl_pipe_await_answer(c->pipe,
		    CTL_K3(CTL_KIND_WL, ns, sl->slice_name), o.kind, name);
	}
	return true;
}

/* The name [owned] of the job's Workload: its prebuilt one when it names
 * one (*prebuilt; adopted, never created), an elastic job's slice (sl
 * gathered, *sliced), else the one Kueue names after it. NULL: out of
 * memory or no name. */
static char *job_wl_name(ctl *c, const char *ns, const char *name,
    const struct rec_job *j, const char **prebuilt, struct slices *sl,
    bool *sliced)
{
	char *wlname = NULL;
	cu_error err;

	*sliced = false;
	*prebuilt = rec_prebuilt_workload_name(rec_job_meta(j));
	if (*prebuilt != NULL)
		return cu_strdup(*prebuilt);
	if (c->cfg->job_gates.elastic_jobs &&
	    rec_elastic_job(rec_job_meta(j))) {
		if (!slices_gather(c, ns, name, j, sl))
			return NULL;
		*sliced = true;
		return cu_strdup(sl->pick.wl != NULL ? sl->pick.wl->meta.name
						     : sl->slice_name);
	}
	if (api_workload_name(rec_job_fw(j)->kind, rec_job_fw(j)->group, name,
		rec_job_meta(j)->uid, -1, API_WORKLOAD_NAME_MAX, &wlname,
		&err) != CU_OK)
		return NULL;
	return wlname;
}

/* A single Pod the gate no longer calls ours (its queue-name label
 * gone, say) that still carries Kueue's managed label and pod finalizer:
 * being deleted, it loses the finalizer (Kueue finalizes a Pod being
 * deleted before its namespace and queue-name checks), so that it never
 * stays Terminating; nothing else is written to it. */
static void pod_let_go(
    ctl *c, enum inf_id id, const char *const *key, json_t *obj, int64_t now)
{
	const char *m = api_json_str(
	    json_object_get(json_object_get(obj, "metadata"), "labels"),
	    REC_LABEL_MANAGED);
	const char *ns = key[1];
	struct rec_plan plan;
	struct ctl_plan_ctx x;
	bool done;
	cu_error err;

	/* any other job the gate refuses: rec_job_reconcile would plan
	 * nothing */
	if (id != INF_POD || ctl_pod_group_of(obj) != NULL || m == NULL ||
	    strcmp(m, "true") != 0)
		return;
	rec_plan_init(&plan);
	if (rec_pod_finalize(obj, ns, NULL, now, true, &plan, &done, &err) !=
	    CU_OK)
		cu_warn("pod %s/%s: %s", ns, key[2], err.msg);
	memset(&x, 0, sizeof(x));
	x.inf = INF_POD;
	x.job_key = key;
	x.job_obj = obj;
	x.now = now;
	ctl_apply_plan(c, &x, &plan);
}

/* A single Pod: rec_job_reconcile between the two steps of its
 * finalizer (rec_pod_finalize): a Pod being deleted is only finalized. */
static void pod_finalize(const json_t *pod, const char *ns,
    const struct api_workload *wl, int64_t now, const struct rec_job_view *v,
    const struct rec_job_in *in, struct rec_plan *plan)
{
	bool done = false;
	cu_error err;

	if (rec_pod_finalize(pod, ns, wl, now, true, plan, &done, &err) !=
	    CU_OK) {
		cu_warn("pod %s/%s: %s", ns, in->name, err.msg);
		return;
	}
	if (done)
		return;
	if (rec_job_reconcile(v, in, now, plan, &err) != CU_OK)
		cu_warn("pod %s/%s: %s", ns, in->name, err.msg);
	else if (rec_pod_finalize(pod, ns, wl, now, false, plan, &done, &err) !=
		 CU_OK)
		cu_warn("pod %s/%s: %s", ns, in->name, err.msg);
}

/* The job's plan: rec_job_reconcile, with a single Pod's finalizer
 * steps around it (pod_finalize). */
static void job_plan(enum inf_id id, const json_t *obj, const char *const *key,
    int64_t now, const struct rec_job_view *v, const struct rec_job_in *in,
    struct rec_plan *plan)
{
	cu_error err;

	if (id == INF_POD && !v->wl_awaited)
		pod_finalize(obj, key[1], in->wl, now, v, in, plan);
	else if (rec_job_reconcile(v, in, now, plan, &err) != CU_OK)
		cu_warn("%s %s/%s: %s", key[0], key[1], key[2], err.msg);
}

/* The job reconciler for one job of any framework: gather the inputs
 * (the gate first: a job that is not ours is neither decoded nor written
 * to, docs/architecture.md lesson 1), rec_job_reconcile, carry out its plan. */
void ctl_reconcile_job(ctl *c, const char *const *key, int64_t now)
{
	enum inf_id id = ctl_fw_inf(key[0]);
	const char *ns = key[1], *name = key[2];
	api_informer *inf = id != INF__COUNT ? c->inf[id] : NULL;
	struct job_dec jd;
	struct api_workload wl;
	struct rec_job j;
	struct api_strlist keys;
	struct rec_job_view v;
	struct rec_job_in in;
	struct rec_plan plan;
	struct ctl_plan_ctx x;
	struct slices sl;
	bool have_wl = false, sliced = false;
	json_t *obj;
	char *wlname = NULL;
	const char *prebuilt;

	if (strcmp(key[0], CTL_KIND_POD_GROUP) == 0) {
		ctl_reconcile_pod_group(c, key, now);
		return;
	}
	if (id == INF_STATEFULSET || id == INF_LWS) { /* pods-only */
		(id == INF_LWS ? ctl_reconcile_lws : ctl_fw_sts_reconcile)(
		    c, key, now);
		return;
	}
	if (inf == NULL)
		return;
	obj = api_informer_get(inf, ns, name);
	if (obj == NULL) {
		ctl_pr_done(c, key);
		(void)ctl_pr_ready_since(c, key, false, now);
		job_deleted(c, id, ns, name, now);
		return;
	}
	if (ctl_pipe_stale(c->pipe, key, obj) ||
	    ctl_pipe_retrying(c->pipe, key))
		return;
	job_view_init(c, &v, &keys);
	if (!job_gate(c, obj, ns, &v.queue_name)) {
		pod_let_go(c, id, key, obj, now);
		return;
	}
	if (id == INF_POD && ctl_pod_group_of(obj) != NULL)
		return; /* its group's (ctl_reconcile_pod_group) */
	if (!job_decode(id, obj, ns, name, &j, &jd))
		return;
	if ((wlname = job_wl_name(c, ns, name, &j, &prebuilt, &sl, &sliced)) ==
	    NULL)
		goto out;
	job_workload(c, key, wlname, &wl, &have_wl, &v.wl_awaited);
	v.wl_awaited |= sliced && sl.awaited;
	struct api_priority_lookup lk = {ctl_lookup_wpc, ctl_lookup_pc,
	    ctl_lookup_pc_default,
	    c->cfg->job_gates.wpc_defaulting &&
		api_informer_get(c->inf[INF_WPC], NULL, API_DEFAULT_WPC_NAME) !=
		    NULL,
	    c};

	v.priority = &lk;
	v.pods_ready = c->pr.cfg.enable;
	/* A job that waits for its pods: their own cause, if any. */
	if (v.pods_ready && have_wl && !v.wl_awaited &&
	    rec_workload_holds_quota(&wl) &&
	    api_conditions_true(&wl.status.conditions, REC_COND_ADMITTED) &&
	    !api_conditions_true(&wl.status.conditions, REC_COND_EVICTED) &&
	    !api_conditions_true(&wl.status.conditions, REC_COND_FINISHED) &&
	    !rec_job_is_suspended(&j) && !rec_job_pods_ready(&j, NULL, NULL))
		v.pods_not_ready = ctl_pr_cause(c, key, &j, &wl, now);
	else if (!v.wl_awaited)
		ctl_pr_done(c, key);
	/* PodsReady=True waits a little (a short job gets it with its
	 * Finished write), unless blockAdmission waits on it. */
	if (!v.wl_awaited)
		v.pods_ready_since_ns = ctl_pr_ready_since(c, key,
		    v.pods_ready && have_wl && rec_workload_holds_quota(&wl) &&
			!api_conditions_true(
			    &wl.status.conditions, REC_COND_PODS_READY) &&
			!api_conditions_true(
			    &wl.status.conditions, REC_COND_FINISHED) &&
			(rec_job_pods_ready(&j, NULL, NULL) ||
			    rec_job_finished(&j, NULL, NULL)),
		    now);
	if (!c->cfg->wait_for_pods_ready.block_admission)
		v.pods_ready_defer_ns =
		    c->pr.cfg.timeout_ns / 2 < CTL_PR_READY_DEFER_NS
			? c->pr.cfg.timeout_ns / 2
			: CTL_PR_READY_DEFER_NS;
	memset(&in, 0, sizeof(in));
	in.job = &j;
	in.kind = j.kind;
	in.ns = ns;
	in.name = name;
	in.wl_name = wlname;
	in.prebuilt = prebuilt != NULL;
	in.wl = have_wl ? &wl : NULL;
	in.slice_name = sliced ? sl.slice_name : NULL;
	in.old_slice = sliced ? sl.pick.old : NULL;
	rec_plan_init(&plan);
	job_plan(id, obj, key, now, &v, &in, &plan);
	memset(&x, 0, sizeof(x));
	x.inf = id;
	x.job_key = key;
	x.job_obj = obj;
	x.wl = have_wl ? &wl : NULL; /* PodsReady timings */
	x.ready_ns = v.pods_ready_since_ns;
	x.now = now;
	ctl_apply_plan(c, &x, &plan);
out:
	if (have_wl)
		api_workload_dispose(&wl);
	if (sliced)
		slices_dispose(&sl);
	job_dispose(&j, &jd);
	cu_free(wlname);
}

/* ---- pod groups ------------------------------------------------------- */

const char *ctl_pod_group_of(json_t *obj)
{
	const char *g = json_string_value(json_object_get(
	    json_object_get(json_object_get(obj, "metadata"), "labels"),
	    REC_POD_GROUP_LABEL));

	return g != NULL && g[0] != '\0' ? g : NULL;
}

struct group_pods {
	const char *ns, *group;
	json_t *found; /* array of borrowed Pods */
};

static void find_group_pod(json_t *pod, void *payload)
{
	struct group_pods *g = payload;
	const char *ns = ctl_jmeta(pod, "namespace");
	const char *group = ctl_pod_group_of(pod);

	if (ns != NULL && group != NULL && strcmp(ns, g->ns) == 0 &&
	    strcmp(group, g->group) == 0)
		json_array_append(g->found, pod);
}

static int by_name(const void *a, const void *b)
{
	const char *x = ctl_jmeta(*(json_t *const *)a, "name");
	const char *y = ctl_jmeta(*(json_t *const *)b, "name");

	return strcmp(x ? x : "", y ? y : "");
}

/* kueue.x-k8s.io/pod-group-total-count of pod, or 0 when not a positive
 * integer. */
static int32_t group_total(json_t *pod)
{
	const char *s = json_string_value(json_object_get(
	    json_object_get(json_object_get(pod, "metadata"), "annotations"),
	    REC_POD_GROUP_TOTAL));
	char *end;
	long v;

	if (s == NULL || *s < '0' || *s > '9')
		return 0;
	v = strtol(s, &end, 10);
	return *end == '\0' && v > 0 && v <= INT32_MAX ? (int32_t)v : 0;
}

/* A Workload cueue made for a pod group: Pods (or its StatefulSet) own
 * it, none controls it. */
static bool group_workload(const struct api_workload *wl)
{
	size_t i;

	if (api_meta_controller(&wl->meta) != NULL)
		return false;
	if (rec_pod_group_parent_owned(wl))
		return true;
	for (i = 0; i < wl->meta.n_owner_refs; i++)
		if (wl->meta.owner_refs[i].kind != NULL &&
		    strcmp(wl->meta.owner_refs[i].kind, "Pod") == 0)
			return true;
	return false;
}

void ctl_reconcile_pod_group(ctl *c, const char *const *key, int64_t now)
{
	const char *ns = key[1], *name = key[2];
	struct group_pods g = {ns, name, json_array()};
	const json_t **pods = NULL;
	struct api_workload wl;
	struct api_strlist keys;
	struct rec_job_view v;
	struct rec_pod_group_in in;
	struct rec_plan plan;
	struct ctl_plan_ctx x;
	bool have_wl = false, parent_awaited = false;
	size_t i, n;
	cu_error err;

	if (c->inf[INF_POD] == NULL || g.found == NULL)
		goto out;
	api_informer_foreach(c->inf[INF_POD], find_group_pod, &g);
	n = json_array_size(g.found);
	pods = cu_calloc(n + 1, sizeof(*pods));
	if (pods == NULL)
		goto out;
	for (i = 0; i < n; i++)
		pods[i] = json_array_get(g.found, i);
	qsort(pods, n, sizeof(*pods), by_name);
	job_view_init(c, &v, &keys);
	/* The gate first, on the group's Pods (they share a namespace). */
	if (n > 0 && !job_gate(c, (json_t *)pods[0], ns, &v.queue_name))
		goto out;
	job_workload(c, key, name, &wl, &have_wl, &v.wl_awaited);
	if (n == 0 && (!have_wl || !group_workload(&wl)))
		goto out;
	struct api_priority_lookup lk = priority_lookup(c);

	v.priority = &lk;
	memset(&in, 0, sizeof(in));
	in.ns = ns;
	in.name = name;
	in.pods = pods;
	in.n_pods = n;
	in.total = n > 0 ? group_total((json_t *)pods[0]) : 0;
	in.wl = have_wl ? &wl : NULL;
	in.parent = ctl_fw_sts_parent(c, pods, n, in.wl, &parent_awaited);
	if (parent_awaited || (n > 0 && c->inf[INF_LWS] != NULL &&
				  ctl_lws_pod_group_awaited(pods[0], have_wl)))
		goto out;
	rec_plan_init(&plan);
	if (rec_pod_group_reconcile(&v, &in, now, &plan, &err) != CU_OK)
		cu_warn("pod group %s/%s: %s", ns, name, err.msg);
	memset(&x, 0, sizeof(x));
	x.inf = INF_POD;
	x.job_key = key;
	x.job_obj = n > 0 ? (json_t *)pods[0] : NULL;
	x.wl = have_wl ? &wl : NULL;
	x.now = now;
	ctl_apply_plan(c, &x, &plan);
out:
	if (have_wl)
		api_workload_dispose(&wl);
	cu_free(pods);
	json_decref(g.found);
}

/* ---- a LeaderWorkerSet's group Workloads (rec_lws_reconcile) ---------- */

struct lws_owned {
	const char *ns, *name, *uid; /* uid NULL: any (the set is gone) */
	json_t *found;		     /* array of borrowed Workloads */
};

static void find_lws_owned(json_t *wl, void *payload)
{
	struct lws_owned *o = payload;
	const char *ns = ctl_jmeta(wl, "namespace");
	json_t *r;
	size_t i;

	if (ns == NULL || strcmp(ns, o->ns) != 0)
		return;
	json_array_foreach(
	    json_object_get(json_object_get(wl, "metadata"), "ownerReferences"),
	    i, r)
	{
		const char *kind =
		    json_string_value(json_object_get(r, "kind"));
		const char *name =
		    json_string_value(json_object_get(r, "name"));
		const char *uid = json_string_value(json_object_get(r, "uid"));

		if (kind != NULL && strcmp(kind, "LeaderWorkerSet") == 0 &&
		    name != NULL && strcmp(name, o->name) == 0 &&
		    (o->uid == NULL ||
			(uid != NULL && strcmp(uid, o->uid) == 0))) {
			json_array_append(o->found, wl);
			return;
		}
	}
}

struct group_count {
	const char *ns, *group;
	size_t n;
};

static void count_group_pod(json_t *pod, void *payload)
{
	struct group_count *g = payload;
	const char *ns = ctl_jmeta(pod, "namespace");
	const char *group = ctl_pod_group_of(pod);

	g->n += ns != NULL && group != NULL && strcmp(ns, g->ns) == 0 &&
		strcmp(group, g->group) == 0;
}

const char *ctl_lws_of_pod(const json_t *obj)
{
	return api_json_str(
	    json_object_get(json_object_get(obj, "metadata"), "labels"),
	    "leaderworkerset.sigs.k8s.io/name");
}

bool ctl_lws_pod_group_awaited(const json_t *pod, bool have_wl)
{
	const char *p = api_json_str(
	    json_object_get(json_object_get(pod, "metadata"), "annotations"),
	    "kueue.x-k8s.io/pod-suspending-parent");

	return !have_wl && p != NULL &&
	       (strcmp(p, "leaderworkerset.x-k8s.io/leaderworkerset") == 0 ||
		   strcmp(p, "leaderworkerset") == 0);
}

void ctl_reconcile_lws(ctl *c, const char *const *key, int64_t now)
{
	const char *ns = key[1], *name = key[2];
	json_t *lws = c->inf[INF_LWS] != NULL
			  ? api_informer_get(c->inf[INF_LWS], ns, name)
			  : NULL;
	struct lws_owned o = {ns, name, ctl_jmeta(lws, "uid"), json_array()};
	struct api_workload *wls = NULL;
	const struct api_workload **owned = NULL;
	size_t *pods = NULL, i, n = 0, m;
	struct api_strlist keys;
	struct rec_job_view v;
	struct rec_lws_in in;
	struct rec_plan plan;
	struct ctl_plan_ctx x;
	json_t *wl;
	cu_error err;

	job_view_init(c, &v, &keys);
	memset(&in, 0, sizeof(in));
	/* The gate first: a LeaderWorkerSet that is not ours is not read. */
	if (o.found == NULL ||
	    (lws != NULL &&
		!job_gate_as(c, lws, ns, &v.queue_name, NS_GATE_KIND_POD)))
		goto out;
	struct api_priority_lookup lk = priority_lookup(c);

	v.priority = &lk;
	api_informer_foreach(c->inf[INF_WL], find_lws_owned, &o);
	m = json_array_size(o.found);
	wls = cu_calloc(m + 1, sizeof(*wls));
	owned = cu_calloc(m + 1, sizeof(*owned));
	pods = cu_calloc(m + 1, sizeof(*pods));
	if (wls == NULL || owned == NULL || pods == NULL)
		goto out;
	json_array_foreach(o.found, i, wl)
	{
		const char *wn = ctl_jmeta(wl, "name");
		struct group_count g = {ns, wn, 0};

		if (wn == NULL ||
		    ctl_pipe_stale(c->pipe, CTL_K3(CTL_KIND_WL, ns, wn), wl)) {
			in.awaited = true; /* our write is not cached yet */
			continue;
		}
		if (api_workload_decode(&wls[n], wl, &err) != CU_OK) {
			cu_warn("workload %s/%s: %s", ns, wn, err.msg);
			continue;
		}
		if (c->inf[INF_POD] != NULL)
			api_informer_foreach(
			    c->inf[INF_POD], count_group_pod, &g);
		pods[n] = g.n;
		owned[n] = &wls[n];
		n++;
	}
	/* A create of ours not answered yet: it is looked at again then. */
	for (i = 0;
	     lws != NULL && !in.awaited && i < (size_t)rec_lws_groups(lws);
	     i++) {
		char *wn = NULL;

		if (rec_lws_workload_name(
			name, o.uid, (json_int_t)i, &wn, &err) != CU_OK)
			break;
		ctl_pipe_gone_past_expect(
		    c->pipe, c->inf[INF_WL], CTL_K3(CTL_KIND_WL, ns, wn));
		if (api_informer_get(c->inf[INF_WL], ns, wn) == NULL &&
		    ctl_pipe_awaits(c->pipe, CTL_K3(CTL_KIND_WL, ns, wn))) {
			ctl_pipe_await_answer(c->pipe,
			    CTL_K3(CTL_KIND_WL, ns, wn), key[0], key[2]);
			in.awaited = true;
		}
		cu_free(wn);
	}
	in = (struct rec_lws_in){ns, name, lws, owned, pods, n, in.awaited};
	rec_plan_init(&plan);
	if (rec_lws_reconcile(&v, &in, now, &plan, &err) != CU_OK)
		cu_warn("leaderworkerset %s/%s: %s", ns, name, err.msg);
	x = (struct ctl_plan_ctx){
	    .inf = INF_LWS, .job_key = key, .job_obj = lws, .now = now};
	ctl_apply_plan(c, &x, &plan);
out:
	workloads_dispose(wls, owned, n);
	cu_free(pods);
	json_decref(o.found);
}
