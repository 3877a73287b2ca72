/* SPDX-License-Identifier: Apache-2.0 */
/*
 * admission/cycle.c - one scheduling cycle (Kueue's scheduler.schedule):
 * report workloads that cannot even be queued (root cause first), take the
 * head of every active ClusterQueue, nominate (namespace gate, flavor
 * assignment, preemption targets), order the entries (no borrowing first,
 * then priority, then queue timestamp) and process them one by one against
 * usage that already includes this cycle's earlier decisions.
 * With fair sharing, Kueue's fair-sharing iterator picks each next entry
 * instead, and preemption is Kueue's fair-sharing preemption
 * (admission/fairshare.c).
 *
 * Preemptors reserve their usage for the rest of the cycle (so a later
 * head cannot take what the victims will free) and the reservation is
 * undone before returning: the victims still hold that quota until the
 * caller reports them gone with que_workload_release().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admission/admission_int.h"

struct entry {
	struct que_wl *wl;
	struct que_cq *cq;
	struct adm_assignment a;
	struct adm_targets t;
	bool done;     /* given back to the queues */
	bool reserved; /* usage added as a preemptor's reservation */
};

void adm_result_init(struct adm_result *r)
{
	memset(r, 0, sizeof(*r));
}

static void decision_dispose(struct adm_decision *d)
{
	size_t i;

	for (i = 0; i < d->n_podsets; i++)
		cu_free(d->podsets[i].uses);
	cu_free(d->podsets);
	cu_free(d->victims);
	cu_free(d->message);
}

void adm_result_dispose(struct adm_result *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		decision_dispose(&r->v[i]);
	cu_free(r->v);
	cu_free(r->skipped);
	cu_free(r->recomputed);
	memset(r, 0, sizeof(*r));
}

/* A head of cq [borrowed] that could preempt was skipped. A count lost to
 * a failed allocation only makes the metric low. */
static void skipped(struct adm_result *r, const struct que_cq *cq)
{
	if (cu_grow((void **)&r->skipped, &r->cap_skipped, r->n_skipped + 1,
		sizeof(*r->skipped)) == CU_OK)
		r->skipped[r->n_skipped++] = cq->name;
}

static void recomputed(
    struct adm_result *r, const struct que_cq *cq, const char *result)
{
	if (cu_grow((void **)&r->recomputed, &r->cap_recomputed,
		r->n_recomputed + 1, sizeof(*r->recomputed)) == CU_OK) {
		r->recomputed[r->n_recomputed].cluster_queue = cq->name;
		r->recomputed[r->n_recomputed++].result = result;
	}
}

static int reserve(struct adm_result *r, size_t more)
{
	return cu_grow((void **)&r->v, &r->cap, r->n + more, sizeof(*r->v));
}

/* Append a pending status unless it is the one last reported, or the
 * workload is looked at again without a cause (que_recheck_parked): what
 * it reported stands until something changes for it. */
static int pending(struct adm_result *out, struct que_wl *wl,
    enum adm_reason reason, const char *msg)
{
	uint32_t h = adm_status_hash(reason, msg);
	struct adm_decision *d;
	char *m;

	if (wl->pending_hash == h || wl->quiet)
		return CU_OK;
	m = cu_strdup(msg);
	if (!m || reserve(out, 1)) {
		cu_free(m);
		return CU_ENOMEM;
	}
	d = &out->v[out->n++];
	memset(d, 0, sizeof(*d));
	d->kind = ADM_PENDING;
	d->uid = wl->uid;
	d->cluster_queue = wl->cq ? wl->cq->name : NULL;
	d->reason = reason;
	d->message = m;
	wl->pending_hash = h;
	return CU_OK;
}

/* ---- root causes upstream of quota ------------------------------------- */

static int report_blocked(que_state *st, struct adm_result *out)
{
	struct que_wl *head = que_blocked_head(st), *wl = head;
	char msg[600];
	size_t i;

	while (wl) {
		enum adm_reason r = ADM_REASON_MISCONFIGURED;

		if (!wl->lq) {
			snprintf(msg, sizeof(msg),
			    "LocalQueue %s doesn't exist", wl->queue_name);
		} else if (wl->lq->stop != QUE_STOP_NONE) {
			snprintf(msg, sizeof(msg), "LocalQueue %s is inactive",
			    wl->queue_name);
			r = ADM_REASON_SUSPENDED;
		} else if (que_cq_terminating(st, wl->lq->cq_name)) {
			/* Kueue's terminating ClusterQueue is inactive. */
			snprintf(msg, sizeof(msg),
			    "ClusterQueue %s is inactive", wl->lq->cq_name);
			r = ADM_REASON_SUSPENDED;
		} else {
			snprintf(msg, sizeof(msg),
			    "ClusterQueue %s doesn't exist", wl->lq->cq_name);
		}
		if (pending(out, wl, r, msg))
			return CU_ENOMEM;
		wl = wl->next == head ? NULL : wl->next;
	}
	for (i = 0; i < que_cq_count(st); i++) {
		struct que_cq *cq = que_cq_at(st, i);
		size_t k;

		if (!cq->exists || cq->active)
			continue;
		if (cq->refused != NULL)
			snprintf(msg, sizeof(msg),
			    "ClusterQueue %s is inactive: its spec was "
			    "refused: %s",
			    cq->name, cq->refused);
		else
			snprintf(msg, sizeof(msg),
			    "ClusterQueue %s is inactive", cq->name);
		for (k = 0; k < cq->n_heap; k++)
			if (pending(
				out, cq->heap[k], ADM_REASON_SUSPENDED, msg))
				return CU_ENOMEM;
		wl = cq->inadmissible.head;
		for (k = 0; k < cq->inadmissible.n; k++, wl = wl->next)
			if (pending(out, wl, ADM_REASON_SUSPENDED, msg))
				return CU_ENOMEM;
	}
	return CU_OK;
}

/* ---- nomination -------------------------------------------------------- */

/* Preemption targets for assignment a (left empty unless a needs
 * preemption); with a topology hook the preemptor's TAS podSets must be
 * placed too once the targets are gone. */
static int targets_for(que_state *st, struct que_cq *cq, struct que_wl *wl,
    const struct adm_assignment *a, struct adm_targets *t, cu_error *err)
{
	uint32_t need[64];
	struct adm_tas_fit tas;
	size_t n_need = 0, i, off = 0, j, k;
	int rc;

	if (a->mode != ADM_MODE_PREEMPT && a->mode != ADM_MODE_RECLAIM)
		return CU_OK;
	for (i = 0; i < wl->n_podsets; i++) {
		for (j = 0; j < wl->podsets[i].n_req; j++, off++) {
			uint32_t fr = a->frs[off];

			if (fr == UINT32_MAX ||
			    a->req_mode[off] == ADM_MODE_FIT)
				continue;
			for (k = 0; k < n_need && need[k] != fr; k++)
				;
			if (k == n_need && n_need < 64)
				need[n_need++] = fr;
		}
	}
	adm_tas_fit_init(st, wl, a, &tas);
	if (que_fair_sharing(st)->enable)
		rc = adm_fair_find_targets(st, cq, wl, a->usage, a->n_usage,
		    need, n_need, &tas, t, err);
	else
		rc = adm_find_targets(st, cq, wl, a->usage, a->n_usage, need,
		    n_need, &tas, t, err);
	adm_tas_fit_dispose(&tas);
	return rc;
}

/*
 * Partial admission (Kueue's PodSetReducer): the full counts did not fit
 * and preemption found nothing, so look for the largest counts between
 * minCount and count that fit (or can preempt). All podsets shrink
 * together by the same fraction of what each may give up, and a binary
 * search finds the smallest such reduction that fits. When one is found,
 * it replaces e's assignment and targets; otherwise they stay those of
 * the full counts (and so does the pending message).
 */
static int reduce(que_state *st, struct entry *e, cu_error *err)
{
	struct que_wl *wl = e->wl;
	int32_t full[ADM_MAX_PODSETS], delta[ADM_MAX_PODSETS];
	int32_t cur[ADM_MAX_PODSETS];
	struct adm_assignment best;
	struct adm_targets best_t = {0};
	int64_t total = 0, lo = 0, hi;
	bool found = false;
	uint32_t i;
	int rc = CU_OK;

	if (wl->n_podsets > ADM_MAX_PODSETS)
		return CU_OK;
	for (i = 0; i < wl->n_podsets; i++) {
		full[i] = wl->podsets[i].full_count;
		delta[i] = full[i] - wl->podsets[i].min_count;
		total += delta[i];
	}
	if (total <= 0)
		return CU_OK;
	memset(&best, 0, sizeof(best));
	for (hi = total + 1; lo < hi;) {
		int64_t h = lo + (hi - lo) / 2;
		struct adm_assignment a;
		struct adm_targets t = {0};
		bool ok;

		for (i = 0; i < wl->n_podsets; i++)
			cur[i] =
			    full[i] - (int32_t)((int64_t)delta[i] * h / total);
		rc = adm_assign_flavors(st, e->cq, wl, cur, &a, err);
		if (rc == CU_OK)
			rc = targets_for(st, e->cq, wl, &a, &t, err);
		if (rc) {
			adm_assignment_dispose(&a);
			adm_targets_dispose(&t);
			break;
		}
		ok = a.mode == ADM_MODE_FIT || t.n > 0;
		if (ok) {
			adm_assignment_dispose(&best);
			adm_targets_dispose(&best_t);
			best = a;
			best_t = t;
			found = true;
			hi = h;
		} else {
			adm_assignment_dispose(&a);
			adm_targets_dispose(&t);
			lo = h + 1;
		}
	}
	if (rc == CU_OK && found) {
		adm_assignment_dispose(&e->a);
		adm_targets_dispose(&e->t);
		e->a = best;
		e->t = best_t;
		return CU_OK;
	}
	adm_assignment_dispose(&best);
	adm_targets_dispose(&best_t);
	return rc;
}

static bool partially_admissible(const struct que_wl *wl)
{
	uint32_t i;

	for (i = 0; i < wl->n_podsets; i++)
		if (wl->podsets[i].min_count < wl->podsets[i].full_count)
			return true;
	return false;
}

/* Kueue's workload slices: the slice e's workload replaces, its usage
 * taken out (and kept out of preemption) while e is assigned or checked;
 * slice_back puts it back. NULL when e replaces nothing. */
static struct que_wl *slice_free(que_state *st, const struct entry *e)
{
	struct que_wl *old = que_replaced_slice(st, e->wl);

	if (old != NULL) {
		que_wl_remove_usage(old);
		old->replaced = true;
	}
	return old;
}

static void slice_back(struct que_wl *old)
{
	if (old != NULL) {
		old->replaced = false;
		que_wl_add_usage(old);
	}
}

static int nominate_slice(
    que_state *st, struct entry *e, struct adm_result *out, cu_error *err);

static int nominate(
    que_state *st, struct entry *e, struct adm_result *out, cu_error *err)
{
	struct que_wl *old = slice_free(st, e);
	int rc = nominate_slice(st, e, out, err);

	slice_back(old);
	return rc;
}

static int nominate_slice(
    que_state *st, struct entry *e, struct adm_result *out, cu_error *err)
{
	int rc;

	if (!e->wl->namespace_eligible) {
		rc = pending(out, e->wl, ADM_REASON_MISCONFIGURED,
		    "workload namespace doesn't match ClusterQueue selector");
		if (rc)
			return cu_error_set(err, rc, "cycle: out of memory");
		que_requeue(st, e->wl, QUE_RQ_NAMESPACE_MISMATCH);
		e->done = true;
		return CU_OK;
	}
	rc = adm_assign_flavors(st, e->cq, e->wl, NULL, &e->a, err);
	if (rc == CU_OK)
		rc = targets_for(st, e->cq, e->wl, &e->a, &e->t, err);
	if (rc || e->a.mode == ADM_MODE_FIT || e->t.n > 0 ||
	    !partially_admissible(e->wl))
		return rc;
	return reduce(st, e, err);
}

/* Kueue's classical iterator: no borrowing first, then priority, then
 * FIFO by queue timestamp. */
static int entry_cmp(const void *pa, const void *pb)
{
	const struct entry *a = *(const struct entry *const *)pa;
	const struct entry *b = *(const struct entry *const *)pb;

	if (a->a.borrow != b->a.borrow)
		return a->a.borrow < b->a.borrow ? -1 : 1;
	if (a->wl->priority != b->wl->priority)
		return a->wl->priority > b->wl->priority ? -1 : 1;
	if (a->wl->queue_ts != b->wl->queue_ts)
		return a->wl->queue_ts < b->wl->queue_ts ? -1 : 1;
	return strcmp(a->wl->uid, b->wl->uid);
}

static int process(que_state *st, struct entry *e, int64_t now_ns,
    struct adm_result *out, struct que_wl ***victims, size_t *n_victims,
    size_t *cap_victims);

/* Fair sharing: process the entries in the order of Kueue's fair-sharing
 * iterator (admission/fairshare.c). */
static int process_fair(que_state *st, struct entry **order, size_t n,
    int64_t now_ns, struct adm_result *out, struct que_wl ***victims,
    size_t *n_victims, size_t *cap_victims, cu_error *err)
{
	struct adm_fs_cand *c = cu_calloc(n ? n : 1, sizeof(*c));
	struct adm_fs_iter *it = NULL;
	size_t i, k;
	int rc;

	if (!c)
		return cu_error_set(err, CU_ENOMEM, "cycle: out of memory");
	for (i = 0; i < n; i++)
		c[i] = (struct adm_fs_cand){order[i]->cq, order[i]->a.usage,
		    order[i]->a.n_usage, order[i]->wl->priority,
		    order[i]->wl->queue_ts};
	rc = adm_fs_iter_new(st, c, n, &it, err);
	while (rc == CU_OK && (rc = adm_fs_iter_next(it, &k, err)) == CU_OK &&
	       k != SIZE_MAX) {
		if (process(st, order[k], now_ns, out, victims, n_victims,
			cap_victims))
			rc = cu_error_set(
			    err, CU_ENOMEM, "cycle: out of memory");
		adm_fs_iter_done(it, k);
	}
	adm_fs_iter_free(it);
	cu_free(c);
	return rc;
}

/* ---- processing -------------------------------------------------------- */

/*
 * Does e still fit after this cycle's earlier decisions? A preemptor is
 * checked as Kueue's fits() checks it: the victims of every earlier
 * preemption of the cycle (their preemptors reserved what they need) and
 * its own targets count as gone, so two preemptors of one cohort whose
 * targets differ both go ahead in the same cycle. An admission counts
 * every victim as still there: victims hold their quota until they are
 * gone, and nothing is admitted on top of them (invariant 2).
 */
static bool still_fits(
    struct entry *e, struct que_wl *const *victims, size_t n_victims)
{
	size_t i;
	bool ok = true;

	if (e->t.n == 0)
		n_victims = 0;
	for (i = 0; i < n_victims; i++)
		que_wl_remove_usage(victims[i]);
	for (i = 0; i < e->t.n; i++)
		if (!e->t.v[i].wl->scratch)
			que_wl_remove_usage(e->t.v[i].wl);
	for (i = 0; i < e->a.n_usage && ok; i++)
		ok = e->a.usage[i].v <=
		     que_node_available(&e->cq->node, e->a.usage[i].fr);
	for (i = 0; i < e->t.n; i++)
		if (!e->t.v[i].wl->scratch)
			que_wl_add_usage(e->t.v[i].wl);
	for (i = 0; i < n_victims; i++)
		que_wl_add_usage(victims[i]);
	return ok;
}

static int admit_decision(
    que_state *st, struct entry *e, struct adm_decision *d)
{
	struct que_wl *wl = e->wl;
	size_t i, j, off = 0;

	memset(d, 0, sizeof(*d));
	d->kind = ADM_ADMIT;
	d->uid = wl->uid;
	d->cluster_queue = e->cq->name;
	d->podsets = cu_calloc(wl->n_podsets, sizeof(*d->podsets));
	if (!d->podsets)
		return CU_ENOMEM;
	d->n_podsets = wl->n_podsets;
	for (i = 0; i < wl->n_podsets; i++) {
		const struct que_podset *ps = &wl->podsets[i];
		struct adm_podset_assignment *pa = &d->podsets[i];

		pa->name = ps->name;
		pa->count = e->a.counts[i];
		pa->uses =
		    cu_calloc(ps->n_req ? ps->n_req : 1, sizeof(*pa->uses));
		if (!pa->uses) {
			decision_dispose(d);
			return CU_ENOMEM;
		}
		for (j = 0; j < ps->n_req; j++) {
			uint32_t fr = e->a.frs[off + j];

			if (fr == UINT32_MAX)
				continue;
			pa->uses[pa->n_uses].resource =
			    que_resource_name(st, ps->req[j].res);
			pa->uses[pa->n_uses].flavor =
			    que_flavor_by_id(st, que_fr_flavor(st, fr))->name;
			if (__builtin_mul_overflow(ps->req[j].per_pod,
				(int64_t)pa->count,
				&pa->uses[pa->n_uses].usage))
				pa->uses[pa->n_uses].usage = INT64_MAX;
			pa->n_uses++;
		}
		off += ps->n_req;
	}
	return CU_OK;
}

#define TAS_REFUSED (-1)

/* Topology-aware scheduling: place and charge the admission's TAS
 * podSets through the hook. TAS_REFUSED: not placed (an earlier
 * admission of this cycle took the capacity); wl is left pending. */
static int tas_assume(que_state *st, struct entry *e, struct adm_decision *d,
    struct adm_result *out)
{
	const struct que_tas_hook *h = que_tas_hook(st);
	const char *flavors[ADM_MAX_PODSETS];
	int32_t counts[ADM_MAX_PODSETS];
	char msg[256];
	size_t i;

	if (h == NULL || h->assume == NULL)
		return CU_OK;
	for (i = 0; i < d->n_podsets && i < ADM_MAX_PODSETS; i++) {
		flavors[i] =
		    d->podsets[i].n_uses ? d->podsets[i].uses[0].flavor : NULL;
		counts[i] = d->podsets[i].count;
	}
	if (h->assume(h->ctx, e->wl, flavors, counts, msg, sizeof(msg)) == 0)
		return CU_OK;
	if (pending(out, e->wl, ADM_REASON_WAITING_FOR_QUOTA, msg))
		return CU_ENOMEM;
	que_requeue(st, e->wl, QUE_RQ_FAILED_AFTER_NOMINATION);
	e->done = true;
	return TAS_REFUSED;
}

/* ---- overlapping preemption targets ----------------------------------- */

enum overlap {
	OVERLAP_SKIPPED = 0,
	OVERLAP_DEFERRED_FIT, /* fits once this cycle's victims are gone */
	OVERLAP_NEW_TARGETS,  /* other targets, none of them claimed */
};

/*
 * Kueue's RecomputeAssignmentUponPreemptionTargetsOverlap: e's targets
 * overlap an earlier head's. Assign e again as if every victim of this
 * cycle were gone: if it then fits, it only waits for those preemptions
 * (DeferredFit); if it needs other targets, none of them claimed and
 * fitting once gone, they replace e's (e->a and e->t); otherwise it is
 * skipped. The victims' usage is given back afterwards.
 */
static enum overlap recompute(que_state *st, struct entry *e,
    struct que_wl *const *victims, size_t n_victims)
{
	struct adm_assignment a;
	struct adm_targets t = {0};
	enum overlap o = OVERLAP_SKIPPED;
	cu_error err;
	size_t i;
	int rc;

	for (i = 0; i < n_victims; i++)
		que_wl_remove_usage(victims[i]);
	rc = adm_assign_flavors(st, e->cq, e->wl, e->a.counts, &a, &err);
	if (rc == CU_OK && a.mode == ADM_MODE_FIT)
		o = OVERLAP_DEFERRED_FIT;
	else if (rc == CU_OK && a.mode != ADM_MODE_NOFIT &&
		 targets_for(st, e->cq, e->wl, &a, &t, &err) == CU_OK &&
		 t.n > 0) {
		for (i = 0; i < t.n && !t.v[i].wl->scratch; i++)
			;
		if (i == t.n)
			o = OVERLAP_NEW_TARGETS;
	}
	for (i = 0; i < n_victims; i++)
		que_wl_add_usage(victims[i]);
	if (o != OVERLAP_SKIPPED) {
		adm_assignment_dispose(&e->a);
		adm_targets_dispose(&e->t);
		e->a = a;
		e->t = t;
		return o;
	}
	if (rc == CU_OK)
		adm_assignment_dispose(&a);
	adm_targets_dispose(&t);
	return o;
}

/* DeferredFit: e waits for this cycle's preemptions, its quota reserved
 * meanwhile and its place at the head kept (Kueue's PendingPreemption
 * requeue). */
static int deferred_fit(que_state *st, struct entry *e, struct adm_result *out)
{
	size_t i;

	if (pending(out, e->wl, ADM_REASON_WAITING_FOR_PREEMPTED_WORKLOADS,
		"Workload has overlapping preemption targets with another "
		"workload, but will fit after these preemptions complete"))
		return CU_ENOMEM;
	for (i = 0; i < e->a.n_usage; i++)
		que_node_add_usage(
		    &e->cq->node, e->a.usage[i].fr, e->a.usage[i].v);
	e->reserved = true;
	que_requeue(st, e->wl, QUE_RQ_PENDING_PREEMPTION);
	e->done = true;
	return CU_OK;
}

/* e needs preemptions: mark its victims (appended to *victims) evicting,
 * reserve its usage meanwhile and, when some victim is still admitted,
 * put an ADM_PREEMPT decision in out. */
static int preempt(que_state *st, struct entry *e, struct adm_result *out,
    struct que_wl ***victims, size_t *n_victims, size_t *cap_victims)
{
	struct que_wl *wl = e->wl;
	struct adm_decision d;
	size_t i, fresh = 0;

	/* Preempt: everything that can fail comes before the state changes. */
	if (cu_grow((void **)victims, cap_victims, *n_victims + e->t.n,
		sizeof(**victims)) ||
	    reserve(out, 1) ||
	    cu_buf_addf(&e->a.msg,
		". Pending the preemption of %zu "
		"workload(s)",
		e->t.n))
		return CU_ENOMEM;
	memset(&d, 0, sizeof(d));
	for (i = 0; i < e->t.n; i++)
		fresh += e->t.v[i].wl->where == QUE_WL_ADMITTED;
	if (fresh) {
		d.kind = ADM_PREEMPT;
		d.uid = wl->uid;
		d.cluster_queue = e->cq->name;
		d.reason = ADM_REASON_WAITING_FOR_PREEMPTED_WORKLOADS;
		d.victims = cu_calloc(fresh, sizeof(*d.victims));
		d.message = cu_strdup(e->a.msg.ptr);
		if (!d.victims || !d.message) {
			decision_dispose(&d);
			return CU_ENOMEM;
		}
	} else if (pending(out, wl, ADM_REASON_WAITING_FOR_PREEMPTED_WORKLOADS,
		       e->a.msg.ptr)) {
		return CU_ENOMEM;
	}
	for (i = 0; i < e->t.n; i++) {
		struct que_wl *v = e->t.v[i].wl;

		v->scratch = 1;
		(*victims)[(*n_victims)++] = v;
		if (v->where != QUE_WL_ADMITTED)
			continue; /* already evicting: never preempted twice */
		d.victims[d.n_victims].uid = v->uid;
		d.victims[d.n_victims].cluster_queue = v->cq->name;
		d.victims[d.n_victims].reason = e->t.v[i].reason;
		d.n_victims++;
		que_mark_evicting(st, v);
	}
	if (fresh) {
		out->v[out->n++] = d;
		wl->pending_hash = adm_status_hash(d.reason, d.message);
	}
	for (i = 0; i < e->a.n_usage; i++)
		que_node_add_usage(
		    &e->cq->node, e->a.usage[i].fr, e->a.usage[i].v);
	e->reserved = true;
	que_requeue(st, wl, QUE_RQ_PENDING_PREEMPTION);
	e->done = true;
	return CU_OK;
}

static int process(que_state *st, struct entry *e, int64_t now_ns,
    struct adm_result *out, struct que_wl ***victims, size_t *n_victims,
    size_t *cap_victims)
{
	struct que_wl *wl = e->wl, *old;
	struct adm_decision d;
	size_t i;
	bool fits;
	int rc;

	if (e->a.mode == ADM_MODE_NOFIT) {
		rc = pending(
		    out, wl, e->a.reason, e->a.msg.ptr ? e->a.msg.ptr : "");
		if (rc)
			return rc;
		que_requeue(st, wl, QUE_RQ_NO_FIT);
		e->done = true;
		return CU_OK;
	}
	if (e->a.mode != ADM_MODE_FIT && e->t.n == 0) {
		/* TODO(kueue parity): reserveCapacityForUnreclaimablePreempt
		 * is not modelled; see the report. */
		rc = pending(out, wl, ADM_REASON_WAITING_FOR_QUOTA,
		    e->a.msg.ptr ? e->a.msg.ptr : "");
		if (rc)
			return rc;
		que_requeue(st, wl, QUE_RQ_NO_CANDIDATES);
		e->done = true;
		return CU_OK;
	}
	for (i = 0; i < e->t.n; i++)
		if (e->t.v[i].wl->scratch)
			break;
	if (i < e->t.n) {
		enum overlap o = OVERLAP_SKIPPED;

		if (que_recompute_overlap(st)) {
			o = recompute(st, e, *victims, *n_victims);
			recomputed(out, e->cq,
			    o == OVERLAP_DEFERRED_FIT  ? "deferred_fit"
			    : o == OVERLAP_NEW_TARGETS ? "new_targets"
						       : "skipped");
		}
		if (o == OVERLAP_DEFERRED_FIT)
			return deferred_fit(st, e, out);
		if (o != OVERLAP_NEW_TARGETS) {
			skipped(out, e->cq);
			rc = pending(out, wl, ADM_REASON_WAITING_FOR_QUOTA,
			    "Workload has overlapping preemption targets with "
			    "another workload");
			if (rc)
				return rc;
			que_requeue(st, wl, QUE_RQ_FAILED_AFTER_NOMINATION);
			e->done = true;
			return CU_OK;
		}
	}
	old = slice_free(st, e);
	fits = still_fits(e, *victims, *n_victims);
	slice_back(old);
	if (!fits) {
		if (e->a.mode != ADM_MODE_FIT)
			skipped(out, e->cq);
		rc = pending(out, wl, ADM_REASON_WAITING_FOR_QUOTA,
		    "Workload no longer fits after processing another "
		    "workload");
		if (rc)
			return rc;
		que_requeue(st, wl, QUE_RQ_FAILED_AFTER_NOMINATION);
		e->done = true;
		return CU_OK;
	}
	if (e->a.mode == ADM_MODE_FIT) {
		if (reserve(out, 1) || admit_decision(st, e, &d))
			return CU_ENOMEM;
		if ((rc = tas_assume(st, e, &d, out)) != CU_OK) {
			decision_dispose(&d);
			if (rc != TAS_REFUSED)
				return rc;
			return CU_OK;
		}
		que_admit_counts(st, wl, e->a.frs, e->a.counts, now_ns);
		if (old != NULL) {
			que_workload_replaced(st, old);
			d.replaced_uid = old->uid;
		}
		out->v[out->n++] = d;
		out->admitted++;
		e->done = true;
		return CU_OK;
	}
	return preempt(st, e, out, victims, n_victims, cap_victims);
}

int adm_cycle(
    que_state *st, int64_t now_ns, struct adm_result *out, cu_error *err)
{
	struct que_wl **heads, **victims = NULL;
	struct entry *ents = NULL, **order = NULL;
	size_t n, i, n_ord = 0, n_victims = 0, cap_victims = 0;
	int rc;

	rc = que_pop_heads(st, now_ns, &heads, &n, err);
	if (rc)
		return rc;
	out->heads += n;
	ents = cu_calloc(n ? n : 1, sizeof(*ents));
	order = cu_calloc(n ? n : 1, sizeof(*order));
	if (!ents || !order) {
		rc = cu_error_set(err, CU_ENOMEM, "cycle: out of memory");
		goto out_requeue_heads;
	}
	for (i = 0; i < n; i++) {
		ents[i].wl = heads[i];
		ents[i].cq = heads[i]->cq;
	}
	if (report_blocked(st, out)) {
		rc = cu_error_set(err, CU_ENOMEM, "cycle: out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		rc = nominate(st, &ents[i], out, err);
		if (rc)
			goto out;
		if (!ents[i].done)
			order[n_ord++] = &ents[i];
	}
	if (n_ord > 1)
		qsort(order, n_ord, sizeof(*order), entry_cmp);
	if (que_fair_sharing(st)->enable) {
		rc = process_fair(st, order, n_ord, now_ns, out, &victims,
		    &n_victims, &cap_victims, err);
		n_ord = 0;
	}
	for (i = 0; i < n_ord; i++) {
		if (process(st, order[i], now_ns, out, &victims, &n_victims,
			&cap_victims)) {
			rc = cu_error_set(
			    err, CU_ENOMEM, "cycle: out of memory");
			goto out;
		}
	}
out:
	for (i = 0; i < n; i++) {
		struct entry *e = &ents[i];
		size_t k;

		if (e->reserved)
			for (k = 0; k < e->a.n_usage; k++)
				que_node_remove_usage(&e->cq->node,
				    e->a.usage[k].fr, e->a.usage[k].v);
		if (!e->done)
			que_requeue(st, e->wl, QUE_RQ_FAILED_AFTER_NOMINATION);
		adm_assignment_dispose(&e->a);
		adm_targets_dispose(&e->t);
	}
	for (i = 0; i < n_victims; i++)
		victims[i]->scratch = 0;
	cu_free(victims);
	cu_free(ents);
	cu_free(order);
	return rc;
out_requeue_heads:
	for (i = 0; i < n; i++)
		que_requeue(st, heads[i], QUE_RQ_FAILED_AFTER_NOMINATION);
	cu_free(ents);
	cu_free(order);
	return rc;
}
