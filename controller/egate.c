/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/egate.c - the elastic-job ungater (Kueue's ElasticJobUngater,
 * ElasticJobsViaWorkloadSlices): the pods of an elastic Job are created
 * with the kueue.x-k8s.io/elastic-job scheduling gate (webhook/jobs.c),
 * and this removes it from no more of them than the Job's active slice
 * (admitted, not evicted, not finished) was granted, so that a Job scaled
 * up never runs its new pods while the new slice waits for quota. The
 * decision is rec_elastic_ungate; this file feeds it from a pod view and
 * sends the writes, each retried when its effect is not seen in the
 * cache. The pod view watches Job pods only (label
 * batch.kubernetes.io/controller-uid) and is started once an elastic Job
 * is seen with the gate on, so that clusters without elastic Jobs pay
 * nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "api/json.h"
#include "controller/ctl_int.h"

#define JOB_UID_LABEL "batch.kubernetes.io/controller-uid"
#define JOB_NAME_LABEL "batch.kubernetes.io/job-name"
#define RETRY_NS (5LL * 1000000000LL)

void ctl_egate_init(ctl *c)
{
	ctl_keys_init(&c->egate.dirty, 2);
	ctl_keys_init(&c->egate.sent, 1);
}

void ctl_egate_dispose(ctl *c)
{
	api_informer_free(c->egate.pods);
	c->egate.pods = NULL;
	ctl_keys_dispose(&c->egate.dirty);
	ctl_keys_dispose(&c->egate.sent);
}

static bool elastic_obj(json_t *obj)
{
	const char *v = api_json_str(
	    json_object_get(json_object_get(obj, "metadata"), "annotations"),
	    REC_ELASTIC_JOB);

	return v != NULL && strcmp(v, "true") == 0;
}

static void mark_job(ctl *c, const char *ns, const char *name)
{
	if (ns != NULL && name != NULL)
		(void)ctl_keys_put(&c->egate.dirty, CTL_K2(ns, name));
}

void ctl_egate_mark(ctl *c, enum inf_id id, json_t *obj)
{
	json_t *refs, *r;
	size_t i;

	if (!c->cfg->job_gates.elastic_jobs || !elastic_obj(obj))
		return;
	if (id == INF_JOB) {
		c->egate.wanted = true;
		mark_job(
		    c, ctl_jmeta(obj, "namespace"), ctl_jmeta(obj, "name"));
		return;
	}
	/* a slice of an elastic Job changed */
	refs = json_object_get(
	    json_object_get(obj, "metadata"), "ownerReferences");
	json_array_foreach(refs, i, r)
	{
		const char *kind = api_json_str(r, "kind");

		if (json_is_true(json_object_get(r, "controller")) &&
		    kind != NULL && strcmp(kind, "Job") == 0)
			mark_job(c, ctl_jmeta(obj, "namespace"),
			    api_json_str(r, "name"));
	}
}

/* ---- the pod view ----------------------------------------------------- */

/* A pod of a Job was seen: its Job is looked at. */
static void pod_seen(json_t *obj, void *payload)
{
	mark_job(payload, ctl_jmeta(obj, "namespace"),
	    api_json_str(
		json_object_get(json_object_get(obj, "metadata"), "labels"),
		JOB_NAME_LABEL));
}

static void pod_changed(json_t *old, json_t *obj, void *payload)
{
	(void)old;
	pod_seen(obj, payload);
}

static void pod_gone(json_t *obj, void *payload)
{
	ctl *c = payload;
	const char *uid = ctl_jmeta(obj, "uid");

	if (uid != NULL)
		(void)ctl_keys_del(&c->egate.sent, CTL_K1(uid));
	pod_seen(obj, payload);
}

static int start(ctl *c)
{
	static const struct api_informer_handlers h = {
	    pod_seen, pod_changed, pod_gone, NULL};
	cu_error err;
	int rc;

	rc = api_informer_new(&c->egate.pods, c->client,
	    &ctl_resources[INF_POD], NULL, JOB_UID_LABEL, NULL, &h, c, &err);
	if (rc == CU_OK && (rc = api_informer_compact(c->egate.pods)) != CU_OK)
		cu_error_set(&err, rc, "out of memory");
	if (rc != CU_OK) {
		cu_warn("elastic jobs: pod view: %s", err.msg);
		api_informer_free(c->egate.pods);
		c->egate.pods = NULL;
	}
	return rc;
}

/* ---- the granted count ------------------------------------------------ */

/* What slice w [borrowed] grants its first pod set: the admitted count,
 * at most the pod set's current count (a slice scaled down keeps its
 * admission); -1 when it is not active (admitted, not evicted, not
 * finished). */
static int64_t slice_grant(const struct api_workload *w)
{
	const struct api_conditions *cs = &w->status.conditions;
	const struct api_podset_assignment *psa;
	const struct api_podset *ps;
	int64_t n;

	if (!w->status.has_admission ||
	    w->status.admission.n_pod_set_assignments == 0 ||
	    w->spec.n_pod_sets == 0 || w->meta.has_deletion ||
	    !api_conditions_true(cs, "Admitted") ||
	    api_conditions_true(cs, "Evicted") ||
	    api_conditions_true(cs, "Finished"))
		return -1;
	psa = &w->status.admission.pod_set_assignments[0];
	ps = &w->spec.pod_sets[0];
	n = psa->has_count ? psa->count : ps->has_count ? ps->count : 1;
	if (ps->has_count && ps->count < n)
		n = ps->count;
	return n;
}

static void each_slice(json_t *obj, void *payload)
{
	int64_t *granted = payload, n = -1;
	struct api_workload w;
	cu_error err;

	cu_error_clear(&err);
	if (api_workload_decode(&w, obj, &err) != CU_OK)
		return;
	n = slice_grant(&w);
	api_workload_dispose(&w);

	/* While a swap completes both slices may be admitted: the new one,
	 * which replaced the old one's usage, holds the larger count. */
	if (n > *granted)
		*granted = n;
}

/* ---- one job ---------------------------------------------------------- */

struct job_pods {
	const char *ns;
	struct api_pod *pods;
	size_t n, cap;
	bool nomem;
};

static void each_pod(json_t *obj, void *payload)
{
	struct job_pods *jp = payload;
	const char *ns = ctl_jmeta(obj, "namespace");
	cu_error err;

	if (jp->nomem || ns == NULL || strcmp(ns, jp->ns) != 0)
		return;
	if (cu_grow(
		(void **)&jp->pods, &jp->cap, jp->n + 1, sizeof(*jp->pods))) {
		jp->nomem = true;
		return;
	}
	if (api_pod_decode(&jp->pods[jp->n], obj, &err) == CU_OK)
		jp->n++;
}

/* Oldest first (then by name): the pods the Job created first run. */
static int by_age(const void *a, const void *b)
{
	const struct api_pod *x = a, *y = b;

	if (x->meta.creation_ns != y->meta.creation_ns)
		return x->meta.creation_ns < y->meta.creation_ns ? -1 : 1;
	return strcmp(
	    x->meta.name ? x->meta.name : "", y->meta.name ? y->meta.name : "");
}

/* The merge patch that removes the elastic gate from p [borrowed],
 * keeping its other gates. */
static json_t *ungate_patch(const struct api_pod *p)
{
	json_t *gates = json_array();
	size_t i;

	for (i = 0; gates != NULL && i < p->spec.scheduling_gates.n; i++) {
		const char *n = p->spec.scheduling_gates.items[i];

		if (strcmp(n, REC_ELASTIC_GATE) != 0 &&
		    json_array_append_new(
			gates, json_pack("{s:s}", "name", n)) != 0) {
			json_decref(gates);
			return NULL;
		}
	}
	if (gates != NULL && json_array_size(gates) == 0) {
		json_decref(gates);
		gates = json_null();
	}
	return gates == NULL
		   ? NULL
		   : json_pack("{s:{s:o}}", "spec", "schedulingGates", gates);
}

/* Ungate what fits for Job ns/name; true when a write is still awaited
 * (the job is looked at again). */
static bool ungate_job(ctl *c, const char *ns, const char *name, int64_t now)
{
	json_t *job = api_informer_get(c->inf[INF_JOB], ns, name);
	const char *uid = job != NULL ? ctl_jmeta(job, "uid") : NULL;
	struct job_pods jp = {ns, NULL, 0, 0, false};
	struct rec_egate_pod *ep = NULL;
	int64_t granted = 0;
	bool *ungate = NULL, waiting = false;
	size_t i;

	if (uid == NULL || !elastic_obj(job))
		return false;
	(void)api_informer_foreach_owned(
	    c->inf[INF_WL], uid, each_slice, &granted);
	(void)api_informer_foreach_owned(c->egate.pods, uid, each_pod, &jp);
	if (jp.n > 0)
		qsort(jp.pods, jp.n, sizeof(*jp.pods), by_age);
	ep = cu_calloc(jp.n + 1, sizeof(*ep));
	ungate = cu_calloc(jp.n + 1, sizeof(*ungate));
	for (i = 0; ep != NULL && ungate != NULL && i < jp.n; i++) {
		const struct api_pod *p = &jp.pods[i];
		const char *pu = p->meta.uid ? p->meta.uid : "";
		struct ctl_kent *e = ctl_keys_get(&c->egate.sent, CTL_K1(pu));

		ep[i].gated = api_pod_gated(p, REC_ELASTIC_GATE);
		ep[i].terminated = api_pod_finished(p) || p->meta.has_deletion;
		if (!ep[i].gated && e != NULL)
			(void)ctl_keys_del(&c->egate.sent, CTL_K1(pu));
		/* a write in flight counts as done until it is due again */
		if (ep[i].gated && e != NULL && now < e->n) {
			ep[i].gated = false;
			waiting = true;
		}
	}
	if (ep != NULL && ungate != NULL && !jp.nomem &&
	    rec_elastic_ungate(
		ep, jp.n, (int32_t)(granted < 0 ? 0 : granted), ungate) > 0)
		for (i = 0; i < jp.n; i++) {
			const struct api_pod *p = &jp.pods[i];
			json_t *patch;
			struct ctl_kent *e;

			if (!ungate[i] || p->meta.uid == NULL ||
			    (patch = ungate_patch(p)) == NULL)
				continue;
			ctl_pipe_queue(c->pipe, CTL_PIPE_JOB_START,
			    &ctl_resources[INF_POD], ns, p->meta.name, NULL,
			    patch);
			if ((e = ctl_keys_put(
				 &c->egate.sent, CTL_K1(p->meta.uid))) != NULL)
				e->n = now + RETRY_NS;
			waiting = true;
		}
	cu_free(ep);
	cu_free(ungate);
	for (i = 0; i < jp.n; i++)
		api_pod_dispose(&jp.pods[i]);
	cu_free(jp.pods);
	return waiting;
}

void ctl_egate_turn(ctl *c, int64_t now)
{
	ctl_keys batch;
	struct ctl_kent **v;
	size_t i, n;

	if (!c->cfg->job_gates.elastic_jobs || !c->egate.wanted ||
	    c->inf[INF_JOB] == NULL || c->inf[INF_WL] == NULL)
		return;
	if (c->egate.pods == NULL && start(c) != CU_OK)
		return;
	if (!api_informer_synced(c->egate.pods) ||
	    ctl_keys_count(&c->egate.dirty) == 0)
		return;
	ctl_keys_init(&batch, 2);
	ctl_keys_move(&batch, &c->egate.dirty);
	if (ctl_keys_ordered(&batch, &v, &n) == CU_OK) {
		for (i = 0; i < n; i++)
			if (ungate_job(c, v[i]->k[0], v[i]->k[1], now))
				mark_job(c, v[i]->k[0], v[i]->k[1]);
		cu_free(v);
	}
	ctl_keys_dispose(&batch);
}
