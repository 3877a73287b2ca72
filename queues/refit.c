/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queues/refit.c - the re-check of an admission that the ledger recorded
 * but the API server never showed (the controller stopped between the
 * commit and the announcement, or the announcement kept failing): would
 * the same decision still be made in the world the API shows now?
 *
 * Design notes
 * ------------
 * A recorded decision is a promise made to nobody yet. While the
 * controller was down the world may have moved on: another replica, or
 * this one started on an empty or older ledger, admitted other Workloads
 * into the same quota; the Workload was deleted, deactivated or edited;
 * the ClusterQueue, its flavors or its cohort changed. Adopting the
 * decision blindly (que_workload_adopt checks no quota, by design: it
 * also restores what the API already shows) could then hold more than the
 * quota allows. So the caller adopts every Workload the API shows
 * admitted first, then asks this function about each recorded decision
 * in ledger order, adopting those that fit before asking about the next.
 *
 * Invariants:
 *  1. Pure: reads the model only (a pending que_rebuild aside); the caller
 *     adopts or withdraws.
 *  2. "Fits" uses the same arithmetic as the admission engine
 *     (que_node_available: the ClusterQueue's free nominal quota plus what
 *     its cohort may lend it, within borrowing and lending limits), with
 *     the usage summed per (flavor, resource) over the podsets, so a
 *     decision that fits here never takes a node past its quota.
 *  3. Every verdict but QUE_REFIT_FITS comes with one line naming the
 *     first reason found.
 */
#include <stdarg.h>
#include <stdio.h>

#include "queues/queues.h"

static enum que_refit verdict(enum que_refit r, char *why, size_t why_len,
    const char *fmt, ...) CU_PRINTF(4, 5);

static enum que_refit verdict(
    enum que_refit r, char *why, size_t why_len, const char *fmt, ...)
{
	va_list ap;

	if (why == NULL || why_len == 0)
		return r;
	va_start(ap, fmt);
	vsnprintf(why, why_len, fmt, ap);
	va_end(ap);
	return r;
}

static size_t n_requests(const struct que_wl *wl)
{
	size_t n = 0;
	uint32_t i;

	for (i = 0; i < wl->n_podsets; i++)
		n += wl->podsets[i].n_req;
	return n;
}

/* The podset and request of flat index k (podset by podset). */
static void locate(
    const struct que_wl *wl, size_t k, uint32_t *ps, uint32_t *req)
{
	uint32_t i;

	for (i = 0; i < wl->n_podsets; i++) {
		if (k < wl->podsets[i].n_req) {
			*ps = i;
			*req = (uint32_t)k;
			return;
		}
		k -= wl->podsets[i].n_req;
	}
	*ps = *req = 0; /* not reached: k < n_requests(wl) */
}

/* usage is what podset ps asks for r with a count it may be partially
 * admitted with (minCount <= count < full count). */
static bool partial_usage(
    const struct que_podset *ps, const struct que_req *r, int64_t usage)
{
	int64_t n;

	if (ps->min_count >= ps->full_count || r->per_pod <= 0 ||
	    usage % r->per_pod != 0)
		return false;
	n = usage / r->per_pod;
	return n >= ps->min_count && n < ps->full_count;
}

static enum que_refit check_requests(que_state *st, const struct que_wl *wl,
    const struct que_recorded *rec, char *why, size_t why_len)
{
	size_t k;

	if (rec->n != n_requests(wl))
		return verdict(QUE_REFIT_CHANGED, why, why_len,
		    "the Workload requests %zu resources, the decision "
		    "recorded %zu",
		    n_requests(wl), rec->n);
	for (k = 0; k < rec->n; k++) {
		uint32_t i, j;
		const struct que_req *r;

		locate(wl, k, &i, &j);
		r = &wl->podsets[i].req[j];
		if (r->total != rec->usage[k] &&
		    !partial_usage(&wl->podsets[i], r, rec->usage[k]))
			return verdict(QUE_REFIT_CHANGED, why, why_len,
			    "podset %s requests %lldm %s, the decision "
			    "recorded %lldm",
			    wl->podsets[i].name, (long long)r->total,
			    que_resource_name(st, r->res),
			    (long long)rec->usage[k]);
	}
	return QUE_REFIT_FITS;
}

static enum que_refit check_queue(que_state *st, const struct que_wl *wl,
    const struct que_recorded *rec, struct que_cq **cq_out, char *why,
    size_t why_len)
{
	struct que_cq *cq = que_cq_get(st, rec->cluster_queue);

	if (cq == NULL)
		return verdict(QUE_REFIT_QUEUE, why, why_len,
		    "ClusterQueue %s no longer exists", rec->cluster_queue);
	if (!cq->active)
		return verdict(QUE_REFIT_QUEUE, why, why_len,
		    "ClusterQueue %s is inactive (%s)", cq->name,
		    cq->inactive_reason ? cq->inactive_reason : "unknown");
	if (wl->cq != cq)
		return verdict(QUE_REFIT_QUEUE, why, why_len,
		    "its LocalQueue %s no longer routes to ClusterQueue %s",
		    wl->queue_name, cq->name);
	if (!wl->namespace_eligible)
		return verdict(QUE_REFIT_QUEUE, why, why_len,
		    "namespace %s no longer matches the namespaceSelector "
		    "of ClusterQueue %s",
		    wl->ns, cq->name);
	*cq_out = cq;
	return QUE_REFIT_FITS;
}

static enum que_refit check_flavors(que_state *st, const struct que_wl *wl,
    const struct que_cq *cq, const struct que_recorded *rec, char *why,
    size_t why_len)
{
	size_t k;

	for (k = 0; k < rec->n; k++) {
		uint32_t i, j, fr = rec->frs[k];
		const struct que_flavor *f;

		locate(wl, k, &i, &j);
		if (fr >= que_fr_count(st) ||
		    que_fr_resource(st, fr) != wl->podsets[i].req[j].res)
			return verdict(QUE_REFIT_FLAVORS, why, why_len,
			    "podset %s: the recorded flavor for %s is unknown",
			    wl->podsets[i].name,
			    que_resource_name(st, wl->podsets[i].req[j].res));
		f = que_flavor_by_id(st, que_fr_flavor(st, fr));
		if (!f->exists)
			return verdict(QUE_REFIT_FLAVORS, why, why_len,
			    "ResourceFlavor %s no longer exists", f->name);
		if (!que_node_quota(&cq->node, fr)->defined)
			return verdict(QUE_REFIT_FLAVORS, why, why_len,
			    "ClusterQueue %s no longer offers flavor %s for %s",
			    cq->name, f->name,
			    que_resource_name(st, que_fr_resource(st, fr)));
	}
	return QUE_REFIT_FITS;
}

static enum que_refit check_quota(que_state *st, const struct que_cq *cq,
    const struct que_recorded *rec, char *why, size_t why_len)
{
	size_t k, m;

	for (k = 0; k < rec->n; k++) {
		uint32_t fr = rec->frs[k];
		int64_t need = 0, avail;
		bool seen = false;

		for (m = 0; m < k && !seen; m++)
			seen = rec->frs[m] == fr;
		if (seen)
			continue; /* summed with its first occurrence */
		for (m = k; m < rec->n; m++)
			if (rec->frs[m] == fr &&
			    __builtin_add_overflow(need, rec->usage[m], &need))
				need = INT64_MAX;
		if (need <= 0)
			continue;
		avail = que_node_available(&cq->node, fr);
		if (need > avail)
			return verdict(QUE_REFIT_QUOTA, why, why_len,
			    "%s in flavor %s: %lldm needed, %lldm free in "
			    "ClusterQueue %s%s",
			    que_resource_name(st, que_fr_resource(st, fr)),
			    que_flavor_by_id(st, que_fr_flavor(st, fr))->name,
			    (long long)need, (long long)(avail > 0 ? avail : 0),
			    cq->name, cq->node.parent ? " and its cohort" : "");
	}
	return QUE_REFIT_FITS;
}

int que_workload_fits_recorded(que_state *st, const struct que_recorded *rec,
    const struct que_observed *now, enum que_refit *out, char *why,
    size_t why_len, cu_error *err)
{
	struct que_wl *wl;
	struct que_cq *cq = NULL;
	enum que_refit r;
	int rc;

	if (why != NULL && why_len > 0)
		why[0] = '\0';
	rc = que_rebuild(st, err);
	if (rc != CU_OK)
		return rc;
	wl = que_workload_get(st, rec->uid);
	if (wl == NULL)
		r = verdict(QUE_REFIT_GONE, why, why_len,
		    "no Workload with uid %s (deleted or re-created)",
		    rec->uid);
	else if (wl->where == QUE_WL_ADMITTED || wl->where == QUE_WL_EVICTING ||
		 wl->where == QUE_WL_HEAD)
		r = verdict(QUE_REFIT_HOLDS, why, why_len,
		    "the Workload already holds quota");
	else if (!now->active)
		r = verdict(QUE_REFIT_INACTIVE, why, why_len,
		    "the Workload is deactivated (spec.active is false)");
	else if (rec->generation != 0 && now->generation != 0 &&
		 rec->generation != now->generation)
		r = verdict(QUE_REFIT_CHANGED, why, why_len,
		    "the Workload changed since the decision (generation "
		    "%lld, recorded %lld)",
		    (long long)now->generation, (long long)rec->generation);
	else {
		r = check_requests(st, wl, rec, why, why_len);
		if (r == QUE_REFIT_FITS)
			r = check_queue(st, wl, rec, &cq, why, why_len);
		if (r == QUE_REFIT_FITS)
			r = check_flavors(st, wl, cq, rec, why, why_len);
		if (r == QUE_REFIT_FITS)
			r = check_quota(st, cq, rec, why, why_len);
	}
	*out = r;
	return CU_OK;
}

const char *que_refit_name(enum que_refit r)
{
	static const char *const names[] = {
	    [QUE_REFIT_FITS] = "fits",
	    [QUE_REFIT_GONE] = "gone",
	    [QUE_REFIT_INACTIVE] = "inactive",
	    [QUE_REFIT_CHANGED] = "changed",
	    [QUE_REFIT_HOLDS] = "holds",
	    [QUE_REFIT_QUEUE] = "queue",
	    [QUE_REFIT_FLAVORS] = "flavors",
	    [QUE_REFIT_QUOTA] = "quota",
	};

	if ((unsigned)r >= sizeof(names) / sizeof(names[0]))
		return "unknown";
	return names[r];
}
