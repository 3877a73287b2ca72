/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queues/workloads.c - the workload half of the queueing model: one
 * allocation per workload, the uid index, routing LocalQueue ->
 * ClusterQueue, the pending heaps and inadmissible sets, requeue backoff,
 * and the transitions the admission engine drives (pop heads, requeue,
 * admit, evict, release). See the state diagram in queues.h.
 *
 * Heap capacity of a CQ is reserved for every workload routed to it
 * (n_members), so that putting a workload back is infallible: a cycle can
 * always return its heads.
 */
#include <stdio.h>
#include <string.h>

#include "queues/queues_int.h"

static size_t r8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static size_t slen(const char *s)
{
	return strlen(s ? s : "") + 1;
}

/* ---- uid index --------------------------------------------------------- */

struct que_wl *que_workload_get(que_state *st, const char *uid)
{
	return que_wl_map_get(&st->wl_index, uid);
}

struct que_wl *que_workload_by_name(
    que_state *st, const char *ns, const char *name)
{
	const char *key[2] = {ns, name};

	return que_wl_name_map_get(&st->wl_by_name, key);
}

/* *out is workload uid [borrowed]; CU_ENOTFOUND when there is none. */
static int known(
    que_state *st, const char *uid, struct que_wl **out, cu_error *err)
{
	*out = que_workload_get(st, uid);
	if (*out == NULL)
		return cu_error_set(
		    err, CU_ENOTFOUND, "workload %s not found", uid);
	return CU_OK;
}

int que_workload_set_generation(
    que_state *st, const char *uid, int64_t generation, cu_error *err)
{
	struct que_wl *wl;

	if (known(st, uid, &wl, err) != CU_OK)
		return CU_ENOTFOUND;
	wl->generation = generation;
	return CU_OK;
}

size_t que_workload_count(const que_state *st)
{
	return que_wl_map_count(&st->wl_index);
}

struct que_wl *que_blocked_head(que_state *st)
{
	return st->blocked.head;
}

/* ---- containers -------------------------------------------------------- */

void que_detach(que_state *st, struct que_wl *wl)
{
	switch (wl->where) {
	case QUE_WL_BLOCKED:
		que_wlist_del(&st->blocked, wl);
		break;
	case QUE_WL_PENDING:
		que_heap_remove(wl->cq, wl);
		break;
	case QUE_WL_INADMISSIBLE:
		que_wlist_del(&wl->cq->inadmissible, wl);
		break;
	case QUE_WL_BACKOFF:
		que_backoff_remove(st, wl);
		break;
	case QUE_WL_HEAD:
		break;
	case QUE_WL_ADMITTED:
	case QUE_WL_EVICTING:
		que_wlist_del(&wl->cq->admitted, wl);
		break;
	}
}

/* Where the LocalQueue of wl leads; NULL when blocked. */
static struct que_cq *route_target(que_state *st, struct que_wl *wl)
{
	const char *key[2] = {wl->ns, wl->queue_name};
	struct que_lq *lq = que_lq_map_get(&st->lq_map, key);
	struct que_cq *cq;

	wl->lq = lq && lq->exists ? lq : NULL;
	if (!wl->lq || wl->lq->stop != QUE_STOP_NONE)
		return NULL;
	cq = que_cq_map_get(&st->cq_map, wl->lq->cq_name);
	return cq && cq->exists ? cq : NULL;
}

static void set_cq(struct que_wl *wl, struct que_cq *cq)
{
	if (wl->cq)
		wl->cq->n_members--;
	que_cq_touch(wl->cq);
	wl->cq = cq;
	if (cq)
		cq->n_members++;
	que_cq_touch(cq);
}

static void block(que_state *st, struct que_wl *wl)
{
	set_cq(wl, NULL);
	wl->where = QUE_WL_BLOCKED;
	que_wlist_push(&st->blocked, wl);
}

/*
 * Put a detached workload where routing says. Falls back to BLOCKED (and a
 * rebuild on the next cycle) when a new CQ's heap cannot grow, so the
 * workload is never lost.
 */
static void place(que_state *st, struct que_wl *wl)
{
	struct que_cq *cq = route_target(st, wl);

	if (!cq) {
		block(st, wl);
		que_wl_sync_pods(wl);
		return;
	}
	if (cq != wl->cq) {
		if (cu_grow((void **)&cq->heap, &cq->cap_heap,
			cq->n_members + 1, sizeof(*cq->heap))) {
			block(st, wl);
			que_wl_sync_pods(wl);
			st->dirty = true;
			return;
		}
		set_cq(wl, cq);
	}
	wl->where = QUE_WL_PENDING;
	que_wl_sync_pods(wl);
	que_heap_push(cq, wl);
}

static int route_one(que_state *st, struct que_wl *wl)
{
	struct que_cq *cq;

	if (wl->where == QUE_WL_HEAD || wl->where == QUE_WL_ADMITTED ||
	    wl->where == QUE_WL_EVICTING)
		return CU_OK;
	que_wl_sync_pods(wl); /* the CQ's groups may have changed */
	cq = route_target(st, wl);
	if (cq && cq == wl->cq && wl->where != QUE_WL_BLOCKED)
		return CU_OK;
	if (!cq && wl->where == QUE_WL_BLOCKED)
		return CU_OK;
	if (cq && cq != wl->cq &&
	    cu_grow((void **)&cq->heap, &cq->cap_heap, cq->n_members + 1,
		sizeof(*cq->heap)))
		return CU_ENOMEM;
	que_detach(st, wl);
	/* A backoff keeps running in the new CQ. */
	if (wl->where == QUE_WL_BACKOFF && cq) {
		set_cq(wl, cq);
		que_wl_sync_pods(wl);
		que_backoff_push(st, wl);
		return CU_OK;
	}
	place(st, wl);
	return CU_OK;
}

int que_route_all(que_state *st, cu_error *err)
{
	cu_map_iter it = CU_MAP_ITER_INIT;
	struct que_wl *wl;

	while (que_wl_map_next(&st->wl_index, &it, &wl))
		if (route_one(st, wl))
			return cu_error_set(err, CU_ENOMEM,
			    "routing workload %s: out of memory", wl->uid);
	return CU_OK;
}

/* ---- add / remove ------------------------------------------------------ */

/* Whether the pods' own requests are what quota counts (any order). */
static bool pod_requests_counted(const struct que_podset_spec *ps)
{
	size_t i, j;

	if (ps->pod_requests == NULL)
		return true;
	if (ps->n_pod_requests != ps->n_requests)
		return false;
	for (i = 0; i < ps->n_pod_requests; i++) {
		const struct que_request *r = &ps->pod_requests[i];

		for (j = 0; j < ps->n_requests; j++)
			if (strcmp(ps->requests[j].resource, r->resource) ==
				0 &&
			    ps->requests[j].per_pod == r->per_pod)
				break;
		if (j == ps->n_requests)
			return false;
	}
	return true;
}

static size_t wl_arrays_size(const struct que_workload_spec *sp)
{
	size_t a = r8(sizeof(struct que_wl)) +
		   r8(sp->n_podsets * sizeof(struct que_podset));
	size_t i, t;

	for (i = 0; i < sp->n_podsets; i++) {
		const struct que_podset_spec *ps = &sp->podsets[i];
		size_t nr = ps->n_requests + !que_spec_requests_pods(ps);

		a +=
		    r8(nr * sizeof(struct que_req)) +
		    r8(nr * sizeof(uint32_t)) +
		    r8(pod_requests_counted(ps)
			    ? 0
			    : ps->n_pod_requests * sizeof(struct que_request)) +
		    r8(ps->n_tolerations * sizeof(struct que_toleration)) +
		    r8(ps->n_node_selector * sizeof(struct que_kv)) +
		    r8(ps->n_affinity * sizeof(struct que_term));
		for (t = 0; t < ps->n_affinity; t++) {
			size_t r;

			a += r8(ps->affinity[t].n_reqs *
				sizeof(struct que_sel_req));
			for (r = 0; r < ps->affinity[t].n_reqs; r++)
				a += r8(ps->affinity[t].reqs[r].n_values *
					sizeof(char *));
		}
	}
	return a;
}

static size_t wl_strings_size(const struct que_workload_spec *sp)
{
	size_t s = slen(sp->uid) + slen(sp->ns) + slen(sp->name) +
		   slen(sp->queue_name) + slen(sp->replaces);
	size_t i, j, t;

	for (i = 0; i < sp->n_podsets; i++) {
		const struct que_podset_spec *ps = &sp->podsets[i];

		s += slen(ps->name ? ps->name : "main");
		if (!pod_requests_counted(ps))
			for (j = 0; j < ps->n_pod_requests; j++)
				s += slen(ps->pod_requests[j].resource);
		for (j = 0; j < ps->n_tolerations; j++)
			s += slen(ps->tolerations[j].key) +
			     slen(ps->tolerations[j].value);
		for (j = 0; j < ps->n_node_selector; j++)
			s += slen(ps->node_selector[j].key) +
			     slen(ps->node_selector[j].value);
		for (t = 0; t < ps->n_affinity; t++)
			for (j = 0; j < ps->affinity[t].n_reqs; j++) {
				const struct que_node_requirement *r =
				    &ps->affinity[t].reqs[j];
				size_t v;

				s += slen(r->key);
				for (v = 0; v < r->n_values; v++)
					s += slen(r->values[v]);
			}
	}
	return s;
}

struct bump {
	char *a; /* arrays, 8-aligned */
	char *s; /* strings */
};

static void *take(struct bump *b, size_t n)
{
	void *p = b->a;

	b->a += r8(n);
	return p;
}

static const char *put(struct bump *b, const char *src)
{
	size_t l = slen(src);
	char *p = b->s;

	memcpy(p, src ? src : "", l);
	b->s += l;
	return p;
}

/* The pods' own requests, kept for topology placement when they differ
 * from what quota counts. */
static void fill_pod_requests(
    struct que_podset *q, struct bump *b, const struct que_podset_spec *ps)
{
	size_t j;

	if (pod_requests_counted(ps))
		return;
	q->pod_req = take(b, ps->n_pod_requests * sizeof(*q->pod_req));
	q->n_pod_req = (uint32_t)ps->n_pod_requests;
	for (j = 0; j < ps->n_pod_requests; j++) {
		q->pod_req[j].resource = put(b, ps->pod_requests[j].resource);
		q->pod_req[j].per_pod = ps->pod_requests[j].per_pod;
	}
}

static int validate(const struct que_workload_spec *sp, cu_error *err)
{
	size_t i, j, k;

	if (!sp->uid || !*sp->uid || !sp->ns || !*sp->ns || !sp->name ||
	    !sp->queue_name || !*sp->queue_name)
		return cu_error_set(err, CU_EINVAL,
		    "workload: uid, namespace, name and queueName are "
		    "required");
	if (sp->n_podsets < 1 || sp->n_podsets > 18)
		return cu_error_set(err, CU_EINVAL,
		    "workload %s: 1..18 podSets required", sp->uid);
	for (i = 0; i < sp->n_podsets; i++) {
		const struct que_podset_spec *ps = &sp->podsets[i];

		if (ps->count < 0)
			return cu_error_set(err, CU_EINVAL,
			    "workload %s: podSets[%zu].count: must be >= 0",
			    sp->uid, i);
		for (j = 0; j < ps->n_requests; j++) {
			if (!ps->requests[j].resource ||
			    !*ps->requests[j].resource ||
			    ps->requests[j].per_pod < 0)
				return cu_error_set(err, CU_EINVAL,
				    "workload %s: podSets[%zu].requests[%zu]: "
				    "invalid",
				    sp->uid, i, j);
			for (k = 0; k < j; k++)
				if (strcmp(ps->requests[k].resource,
					ps->requests[j].resource) == 0)
					return cu_error_set(err, CU_EINVAL,
					    "workload %s: podSets[%zu]: "
					    "resource %s requested twice",
					    sp->uid, i,
					    ps->requests[j].resource);
		}
		for (j = 0; j < i; j++)
			if (strcmp(ps->name ? ps->name : "main",
				sp->podsets[j].name ? sp->podsets[j].name
						    : "main") == 0)
				return cu_error_set(err, CU_EINVAL,
				    "workload %s: podSet name %s used twice",
				    sp->uid, ps->name ? ps->name : "main");
	}
	return CU_OK;
}

static int fill(que_state *st, struct que_wl *wl, struct bump *b,
    const struct que_workload_spec *sp)
{
	size_t i, j, t;

	wl->uid = put(b, sp->uid);
	wl->ns = put(b, sp->ns);
	wl->name = put(b, sp->name);
	wl->queue_name = put(b, sp->queue_name);
	wl->replaces = put(b, sp->replaces);
	wl->priority = sp->priority;
	wl->created_ns = sp->created_ns;
	wl->queue_ts = sp->created_ns;
	wl->namespace_eligible = sp->namespace_eligible;
	wl->n_podsets = (uint32_t)sp->n_podsets;
	wl->podsets = take(b, sp->n_podsets * sizeof(struct que_podset));
	for (i = 0; i < sp->n_podsets; i++) {
		const struct que_podset_spec *ps = &sp->podsets[i];
		struct que_podset *q = &wl->podsets[i];

		q->name = put(b, ps->name ? ps->name : "main");
		q->count = ps->count;
		q->full_count = ps->count;
		/* A minCount outside [0, count] (an annotation the webhook
		 * did not check) allows no partial admission. */
		q->min_count = ps->has_min_count && ps->min_count >= 0 &&
				       ps->min_count <= ps->count
				   ? ps->min_count
				   : ps->count;
		q->n_req = (uint32_t)ps->n_requests;
		q->n_spec_req = q->n_req;
		q->pods_slot = !que_spec_requests_pods(ps);
		q->req = take(b, (q->n_req + q->pods_slot) * sizeof(*q->req));
		q->fr = take(b, (q->n_req + q->pods_slot) * sizeof(uint32_t));
		if (q->pods_slot &&
		    que_intern_resource(st, "pods", &q->req[q->n_req].res))
			return CU_ENOMEM;
		if (q->pods_slot)
			q->req[q->n_req].per_pod = 1000; /* one unit per pod */
		for (j = 0; j < ps->n_requests; j++) {
			int64_t total;

			if (que_intern_resource(
				st, ps->requests[j].resource, &q->req[j].res))
				return CU_ENOMEM;
			q->req[j].per_pod = ps->requests[j].per_pod;
			if (__builtin_mul_overflow(ps->requests[j].per_pod,
				(int64_t)ps->count, &total))
				total = INT64_MAX;
			q->req[j].total = total;
			q->fr[j] = UINT32_MAX;
		}
		fill_pod_requests(q, b, ps);
		q->n_tolerations = (uint32_t)ps->n_tolerations;
		q->tolerations =
		    take(b, ps->n_tolerations * sizeof(struct que_toleration));
		for (j = 0; j < ps->n_tolerations; j++) {
			q->tolerations[j] = ps->tolerations[j];
			q->tolerations[j].key = put(b, ps->tolerations[j].key);
			q->tolerations[j].value =
			    put(b, ps->tolerations[j].value);
		}
		q->n_selector = (uint32_t)ps->n_node_selector;
		q->selector =
		    take(b, ps->n_node_selector * sizeof(struct que_kv));
		for (j = 0; j < ps->n_node_selector; j++) {
			q->selector[j].key = put(b, ps->node_selector[j].key);
			q->selector[j].value =
			    put(b, ps->node_selector[j].value);
		}
		q->n_terms = (uint32_t)ps->n_affinity;
		q->terms = take(b, ps->n_affinity * sizeof(struct que_term));
		for (t = 0; t < ps->n_affinity; t++) {
			const struct que_affinity_term *at = &ps->affinity[t];

			q->terms[t].n_reqs = (uint32_t)at->n_reqs;
			q->terms[t].reqs =
			    take(b, at->n_reqs * sizeof(struct que_sel_req));
			for (j = 0; j < at->n_reqs; j++) {
				struct que_sel_req *r = &q->terms[t].reqs[j];
				const char **vals;
				size_t v;

				r->key = put(b, at->reqs[j].key);
				r->op = at->reqs[j].op;
				r->n_values = (uint32_t)at->reqs[j].n_values;
				vals = take(
				    b, at->reqs[j].n_values * sizeof(char *));
				for (v = 0; v < at->reqs[j].n_values; v++)
					vals[v] = put(b, at->reqs[j].values[v]);
				r->values = vals;
			}
		}
	}
	return CU_OK;
}

int que_workload_add(
    que_state *st, const struct que_workload_spec *spec, cu_error *err)
{
	size_t arrays, strings;
	struct que_wl *wl;
	struct bump b;
	int rc;

	rc = validate(spec, err);
	if (rc)
		return rc;
	if (que_workload_get(st, spec->uid))
		return cu_error_set(
		    err, CU_EEXIST, "workload %s already queued", spec->uid);
	arrays = wl_arrays_size(spec);
	strings = wl_strings_size(spec);
	if (que_wl_map_reserve(&st->wl_index, 1) ||
	    que_wl_name_map_reserve(&st->wl_by_name, 1) ||
	    cu_grow((void **)&st->backoff, &st->cap_backoff,
		que_wl_map_count(&st->wl_index) + 1, sizeof(*st->backoff)))
		goto out_nomem;
	wl = cu_calloc(1, arrays + strings);
	if (!wl)
		goto out_nomem;
	b.a = (char *)wl;
	b.s = (char *)wl + arrays;
	take(&b, sizeof(*wl));
	if (fill(st, wl, &b, spec)) {
		cu_free(wl);
		goto out_nomem;
	}
	CU_ASSERT(
	    b.a == (char *)wl + arrays && b.s == (char *)wl + arrays + strings);
	/* infallible: reserved above, and the uid is new */
	CU_ASSERT(que_wl_map_put(&st->wl_index, wl->uid, wl) == CU_OK);
	wl->name_key[0] = wl->ns;
	wl->name_key[1] = wl->name;
	/* infallible too (reserved); replaces an older one of that name */
	CU_ASSERT(
	    que_wl_name_map_put(&st->wl_by_name, wl->name_key, wl) == CU_OK);
	que_wl_set_counts(wl, NULL);
	place(st, wl);
	return CU_OK;
out_nomem:
	return cu_error_set(
	    err, CU_ENOMEM, "workload %s: out of memory", spec->uid);
}

struct que_wl *que_replaced_slice(que_state *st, const struct que_wl *wl)
{
	struct que_wl *o;
	size_t k;

	(void)st;
	if (wl->replaces == NULL || *wl->replaces == '\0' || wl->cq == NULL)
		return NULL;
	o = wl->cq->admitted.head;
	for (k = 0; k < wl->cq->admitted.n; k++, o = o->next)
		if (o->where == QUE_WL_ADMITTED && !o->replaced &&
		    strcmp(o->ns, wl->ns) == 0 &&
		    strcmp(o->name, wl->replaces) == 0)
			return o;
	return NULL;
}

void que_workload_replaced(que_state *st, struct que_wl *old)
{
	(void)st;
	if (old->replaced ||
	    (old->where != QUE_WL_ADMITTED && old->where != QUE_WL_EVICTING))
		return;
	que_wl_remove_usage(old);
	old->replaced = true;
	que_capacity_freed(old->cq);
}

static void release_quota(struct que_wl *wl)
{
	uint32_t i, j;

	que_wl_remove_usage(wl);
	que_capacity_freed(wl->cq);
	for (i = 0; i < wl->n_podsets; i++)
		for (j = 0; j < wl->podsets[i].n_req; j++)
			wl->podsets[i].fr[j] = UINT32_MAX;
	que_wl_set_counts(wl, NULL);
}

int que_workload_remove(que_state *st, const char *uid, cu_error *err)
{
	struct que_wl *wl = que_workload_get(st, uid);

	if (!wl)
		return cu_error_set(
		    err, CU_ENOTFOUND, "workload %s not found", uid);
	CU_ASSERT(wl->where != QUE_WL_HEAD);
	que_detach(st, wl);
	if (wl->where == QUE_WL_ADMITTED || wl->where == QUE_WL_EVICTING)
		release_quota(wl);
	set_cq(wl, NULL);
	que_wl_map_del(&st->wl_index, wl->uid);
	if (que_workload_by_name(st, wl->ns, wl->name) == wl)
		que_wl_name_map_del(&st->wl_by_name, wl->name_key);
	if (wl->tag != 0 && st->forget != NULL)
		st->forget(wl->tag, st->forget_payload);
	cu_free(wl);
	return CU_OK;
}

void que_set_forget_hook(que_state *st, que_forget_fn fn, void *payload)
{
	st->forget = fn;
	st->forget_payload = payload;
}

static int holding(que_state *st, const char *uid, bool evicting_ok,
    struct que_wl **out, cu_error *err)
{
	struct que_wl *wl;

	if (known(st, uid, out, err) != CU_OK)
		return CU_ENOTFOUND;
	wl = *out;
	if (wl->where != QUE_WL_ADMITTED &&
	    !(evicting_ok && wl->where == QUE_WL_EVICTING))
		return cu_error_set(
		    err, CU_EINVAL, "workload %s does not hold quota", uid);
	return CU_OK;
}

int que_workload_release(
    que_state *st, const char *uid, int64_t now_ns, cu_error *err)
{
	struct que_wl *wl;
	int rc = holding(st, uid, true, &wl, err);

	if (rc)
		return rc;
	que_detach(st, wl);
	release_quota(wl);
	/* It queues by now_ns: the caller's Kueue queue-order time
	 * (reconcile/order.c: creation, or the eviction's time after a
	 * PodsReady timeout or an admission check). */
	wl->queue_ts = now_ns;
	wl->sticky = false;
	wl->pending_hash = 0;
	place(st, wl);
	return CU_OK;
}

int que_workload_unadmit(que_state *st, const char *uid, cu_error *err)
{
	struct que_wl *wl;
	int rc = holding(st, uid, false, &wl, err);

	if (rc)
		return rc;
	que_detach(st, wl);
	release_quota(wl);
	wl->pending_hash = 0;
	place(st, wl);
	return CU_OK;
}

int que_workload_unevict(que_state *st, const char *uid, cu_error *err)
{
	struct que_wl *wl = que_workload_get(st, uid);

	if (!wl)
		return cu_error_set(
		    err, CU_ENOTFOUND, "workload %s not found", uid);
	if (wl->where != QUE_WL_EVICTING)
		return cu_error_set(
		    err, CU_EINVAL, "workload %s is not being evicted", uid);
	wl->where = QUE_WL_ADMITTED;
	que_capacity_freed(wl->cq);
	return CU_OK;
}

int que_workload_backoff(
    que_state *st, const char *uid, int64_t requeue_at_ns, cu_error *err)
{
	struct que_wl *wl;

	if (known(st, uid, &wl, err) != CU_OK)
		return CU_ENOTFOUND;
	if (wl->where == QUE_WL_ADMITTED || wl->where == QUE_WL_EVICTING ||
	    wl->where == QUE_WL_HEAD)
		return cu_error_set(
		    err, CU_EINVAL, "workload %s is not pending", uid);
	wl->requeue_at = requeue_at_ns;
	if (wl->where == QUE_WL_BLOCKED)
		return CU_OK;
	que_detach(st, wl);
	wl->where = QUE_WL_BACKOFF;
	que_backoff_push(st, wl);
	return CU_OK;
}

int que_workload_set_namespace_eligible(
    que_state *st, const char *uid, bool eligible, cu_error *err)
{
	struct que_wl *wl = que_workload_get(st, uid);

	if (!wl)
		return cu_error_set(
		    err, CU_ENOTFOUND, "workload %s not found", uid);
	if (eligible && !wl->namespace_eligible && wl->cq)
		wl->cq->requeue_needed = true;
	wl->namespace_eligible = eligible;
	return CU_OK;
}

/* ---- cycle transitions ------------------------------------------------- */

static void requeue_inadmissible(struct que_cq *cq, bool quiet)
{
	size_t i;

	/* A cause: what waits in the heap from a quiet recheck is looked
	 * at for it too (a pass over the heap at most once per recheck). */
	if (!quiet && cq->has_quiet) {
		for (i = 0; i < cq->n_heap; i++)
			cq->heap[i]->quiet = false;
		cq->has_quiet = false;
	}
	if (quiet && cq->inadmissible.n > 0)
		cq->has_quiet = true;
	while (cq->inadmissible.head) {
		struct que_wl *wl = cq->inadmissible.head;

		que_wlist_del(&cq->inadmissible, wl);
		wl->where = QUE_WL_PENDING;
		wl->quiet = quiet;
		que_heap_push(cq, wl);
	}
}

bool que_recheck_parked(que_state *st)
{
	bool any = false;
	size_t i;

	for (i = 0; i < st->n_cqs; i++)
		if (st->cqs[i]->inadmissible.n > 0) {
			st->cqs[i]->recheck_needed = true;
			any = true;
		}
	return any;
}

int que_pop_heads(que_state *st, int64_t now_ns, struct que_wl ***heads,
    size_t *n, cu_error *err)
{
	size_t i;
	int rc;

	*heads = NULL;
	*n = 0;
	rc = que_rebuild(st, err);
	if (rc)
		return rc;
	if (cu_grow((void **)&st->heads, &st->cap_heads, st->n_cqs + 1,
		sizeof(*st->heads)))
		return cu_error_set(err, CU_ENOMEM, "heads: out of memory");
	while (st->n_backoff && st->backoff[0]->requeue_at <= now_ns) {
		struct que_wl *wl = st->backoff[0];

		que_backoff_remove(st, wl);
		wl->where = QUE_WL_PENDING;
		que_heap_push(wl->cq, wl);
	}
	for (i = 0; i < st->n_cqs; i++) {
		struct que_cq *cq = st->cqs[i];
		struct que_cohort *root =
		    cq->node.parent ? cq->node.parent->root : NULL;

		if (cq->requeue_needed || (root && root->requeue_needed))
			requeue_inadmissible(cq, false);
		else if (cq->recheck_needed)
			requeue_inadmissible(cq, true);
		cq->requeue_needed = false;
		cq->recheck_needed = false;
	}
	for (i = 0; i < st->n_cohorts; i++)
		st->cohorts[i]->requeue_needed = false;
	st->n_heads = 0;
	for (i = 0; i < st->n_cqs; i++) {
		struct que_cq *cq = st->cqs[i];
		struct que_wl *wl;

		if (!cq->active || !(wl = que_heap_pop(cq)))
			continue;
		wl->where = QUE_WL_HEAD;
		st->heads[st->n_heads++] = wl;
	}
	*heads = st->heads;
	*n = st->n_heads;
	return CU_OK;
}

void que_requeue(que_state *st, struct que_wl *wl, enum que_requeue_reason why)
{
	struct que_cq *cq = wl->cq;
	bool immediate;

	(void)st;
	CU_ASSERT(wl->where == QUE_WL_HEAD && cq);
	if (cq->queueing == QUE_STRICT_FIFO)
		immediate = why != QUE_RQ_NAMESPACE_MISMATCH;
	else
		immediate = why == QUE_RQ_FAILED_AFTER_NOMINATION ||
			    why == QUE_RQ_PENDING_PREEMPTION;
	wl->sticky = why == QUE_RQ_PENDING_PREEMPTION &&
		     cq->queueing == QUE_BEST_EFFORT_FIFO;
	if (immediate) {
		wl->where = QUE_WL_PENDING;
		que_heap_push(cq, wl);
	} else {
		wl->where = QUE_WL_INADMISSIBLE;
		que_wlist_push(&cq->inadmissible, wl);
	}
}

void que_admit(
    que_state *st, struct que_wl *wl, const uint32_t *frs, int64_t now_ns)
{
	uint32_t i, j;
	size_t k = 0;

	(void)st;
	CU_ASSERT(wl->where == QUE_WL_HEAD && wl->cq);
	for (i = 0; i < wl->n_podsets; i++)
		for (j = 0; j < wl->podsets[i].n_req; j++)
			wl->podsets[i].fr[j] = frs[k++];
	wl->admitted_ns = now_ns;
	wl->sticky = false;
	wl->quiet = false;
	wl->pending_hash = 0;
	que_wl_add_usage(wl);
	wl->where = QUE_WL_ADMITTED;
	que_wlist_push(&wl->cq->admitted, wl);
}

int que_adopt_begin(
    que_state *st, const char *uid, struct que_wl **out, cu_error *err)
{
	struct que_wl *wl = que_workload_get(st, uid);

	*out = wl;
	if (!wl)
		return cu_error_set(
		    err, CU_ENOTFOUND, "workload %s not found", uid);
	if (wl->where == QUE_WL_HEAD || wl->where == QUE_WL_ADMITTED ||
	    wl->where == QUE_WL_EVICTING)
		return cu_error_set(
		    err, CU_EINVAL, "workload %s already holds quota", uid);
	return que_rebuild(st, err);
}

int que_workload_adopt(que_state *st, const char *uid, const char *cq_name,
    const uint32_t *frs, int64_t admitted_ns, cu_error *err)
{
	struct que_wl *wl;
	struct que_cq *cq;
	uint32_t i, j;
	size_t k = 0;
	int rc;

	rc = que_adopt_begin(st, uid, &wl, err);
	if (rc)
		return rc;
	cq = que_cq_get(st, cq_name);
	if (!cq)
		return cu_error_set(err, CU_ENOTFOUND,
		    "workload %s: ClusterQueue %s not found", uid, cq_name);
	for (i = 0; i < wl->n_podsets; i++)
		for (j = 0; j < wl->podsets[i].n_req; j++, k++)
			if (frs[k] >= que_fr_count(st) &&
			    !(frs[k] == UINT32_MAX &&
				que_resources_ignore_undeclared(st)))
				return cu_error_set(err, CU_EINVAL,
				    "workload %s: podset %s: unknown flavor "
				    "assignment",
				    uid, wl->podsets[i].name);
	/* The admission names the ClusterQueue that holds the quota, even
	 * if the LocalQueue now routes elsewhere. */
	que_detach(st, wl);
	set_cq(wl, cq);
	k = 0;
	for (i = 0; i < wl->n_podsets; i++)
		for (j = 0; j < wl->podsets[i].n_req; j++)
			wl->podsets[i].fr[j] = frs[k++];
	wl->admitted_ns = admitted_ns;
	wl->sticky = false;
	wl->quiet = false;
	wl->pending_hash = 0;
	que_wl_add_usage(wl);
	wl->where = QUE_WL_ADMITTED;
	que_wlist_push(&cq->admitted, wl);
	return CU_OK;
}

void que_mark_evicting(que_state *st, struct que_wl *wl)
{
	(void)st;
	CU_ASSERT(wl->where == QUE_WL_ADMITTED);
	wl->where = QUE_WL_EVICTING;
}
