/* SPDX-License-Identifier: Apache-2.0 */
/*
 * admission/flavors.c - flavor assignment, Kueue's flavorassigner: for
 * every podset and every resource group its requests touch, try the CQ's
 * flavors in order, skipping flavors whose taints the podset does not
 * tolerate or whose node labels contradict its node selector / required
 * node affinity, and rank the rest by how the quota could be obtained
 * (fit > reclaim > preempt > no candidates > no fit, then less borrowing),
 * stopping early as flavorFungibility allows. Also builds the pending
 * message and picks the root-cause reason of a NoFit.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admission/admission_int.h"

#define GROUP_MAX 64 /* coveredResources per group (API limit) */

struct reasons {
	char **v; /* owned strings */
	size_t n, cap;
};

static void reasons_dispose(struct reasons *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		cu_free(r->v[i]);
	cu_free(r->v);
	memset(r, 0, sizeof(*r));
}

static int reasons_add(struct reasons *r, const char *fmt, ...) CU_PRINTF(2, 3);
static int reasons_add(struct reasons *r, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	char *s;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (cu_grow((void **)&r->v, &r->cap, r->n + 1, sizeof(*r->v)))
		return CU_ENOMEM;
	s = cu_strdup(buf);
	if (!s)
		return CU_ENOMEM;
	r->v[r->n++] = s;
	return CU_OK;
}

/* Move every reason of src to the end of dst. */
static int reasons_take(struct reasons *dst, struct reasons *src)
{
	if (cu_grow(
		(void **)&dst->v, &dst->cap, dst->n + src->n, sizeof(*dst->v)))
		return CU_ENOMEM;
	memcpy(dst->v + dst->n, src->v, src->n * sizeof(*src->v));
	dst->n += src->n;
	src->n = 0;
	return CU_OK;
}

/* Remove reason i of r (if any). */
static void reasons_drop(struct reasons *r, size_t i)
{
	if (i >= r->n)
		return;
	cu_free(r->v[i]);
	memmove(r->v + i, r->v + i + 1, (r->n - i - 1) * sizeof(*r->v));
	r->n--;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int severity(enum adm_reason r)
{
	switch (r) {
	case ADM_REASON_NO_MATCHING_FLAVOR:
		return 4;
	case ADM_REASON_EXCEEDS_MAX_QUOTA:
		return 3;
	case ADM_REASON_WAITING_FOR_QUOTA:
		return 2;
	case ADM_REASON_TOPOLOGY_PLACEMENT_FAILED:
		return 1;
	default:
		return 0;
	}
}

static enum adm_reason most_severe(enum adm_reason a, enum adm_reason b)
{
	return severity(a) >= severity(b) ? a : b;
}

struct gmode {
	enum adm_mode mode;
	int borrow;
};

/* Kueue's isPreferred: is a better than b? A flavor that cannot be had
 * ranks last, one whose preemption found no candidates next; then
 * BorrowingOverPreemption (the default) ranks by how the quota is had
 * (fit > reclaim > preempt) before how far it is borrowed, and
 * PreemptionOverBorrowing the other way round. */
static bool preferred(
    struct gmode a, struct gmode b, enum que_fungibility_preference pref)
{
	bool a_nc, b_nc;

	if (a.mode == ADM_MODE_NOFIT)
		return false;
	if (b.mode == ADM_MODE_NOFIT)
		return true;
	a_nc = a.mode == ADM_MODE_NO_CANDIDATES;
	b_nc = b.mode == ADM_MODE_NO_CANDIDATES;
	if (a_nc != b_nc)
		return !a_nc;
	if (pref == QUE_PREEMPTION_OVER_BORROWING) {
		if (a.borrow != b.borrow)
			return a.borrow < b.borrow;
		return a.mode > b.mode;
	}
	if (a.mode != b.mode)
		return a.mode > b.mode;
	return a.borrow < b.borrow;
}

static bool try_next_flavor(struct gmode m, const struct que_cq *cq)
{
	if (m.mode == ADM_MODE_NOFIT || m.mode == ADM_MODE_NO_CANDIDATES)
		return true;
	if ((m.mode == ADM_MODE_PREEMPT || m.mode == ADM_MODE_RECLAIM) &&
	    cq->when_can_preempt == QUE_TRY_NEXT_FLAVOR)
		return true;
	return m.borrow > 0 && cq->when_can_borrow == QUE_TRY_NEXT_FLAVOR;
}

/* ---- taints and node affinity ----------------------------------------- */

static const char *effect_name(enum que_taint_effect e)
{
	switch (e) {
	case QUE_EFFECT_NO_SCHEDULE:
		return "NoSchedule";
	case QUE_EFFECT_PREFER_NO_SCHEDULE:
		return "PreferNoSchedule";
	case QUE_EFFECT_NO_EXECUTE:
		return "NoExecute";
	}
	return "";
}

static bool tolerates(
    const struct que_toleration *t, const struct que_taint *taint)
{
	bool no_key = !t->key || !*t->key;

	if (!t->any_effect && t->effect != taint->effect)
		return false;
	if (no_key)
		return t->op == QUE_TOLERATE_EXISTS;
	if (strcmp(t->key, taint->key) != 0)
		return false;
	if (t->op == QUE_TOLERATE_EXISTS)
		return true;
	return strcmp(t->value ? t->value : "",
		   taint->value ? taint->value : "") == 0;
}

static const struct que_taint *untolerated(
    const struct que_flavor *f, const struct que_podset *ps)
{
	size_t i, j;

	for (i = 0; i < f->n_taints; i++) {
		const struct que_taint *t = &f->taints[i];
		bool ok = false;

		/* Only NoSchedule and NoExecute keep pods off nodes. */
		if (t->effect == QUE_EFFECT_PREFER_NO_SCHEDULE)
			continue;
		for (j = 0; j < ps->n_tolerations && !ok; j++)
			ok = tolerates(&ps->tolerations[j], t);
		for (j = 0; j < f->n_tolerations && !ok; j++)
			ok = tolerates(&f->tolerations[j], t);
		if (!ok)
			return t;
	}
	return NULL;
}

static const char *label(const struct que_flavor *f, const char *key)
{
	size_t i;

	for (i = 0; i < f->n_labels; i++)
		if (strcmp(f->labels[i].key, key) == 0)
			return f->labels[i].value;
	return NULL;
}

static bool req_matches(const struct que_sel_req *r, const char *v)
{
	uint32_t i;
	bool in = false;

	for (i = 0; i < r->n_values && !in; i++)
		in = strcmp(r->values[i], v) == 0;
	switch (r->op) {
	case QUE_SEL_IN:
		return in;
	case QUE_SEL_NOT_IN:
		return !in;
	case QUE_SEL_EXISTS:
		return true;
	case QUE_SEL_DOES_NOT_EXIST:
		return false;
	}
	return false;
}

/*
 * Only keys the flavor labels are compared: a flavor says nothing about
 * other node labels. A required term left empty by that filter matches
 * every flavor, and since terms are ORed the affinity is then moot.
 */
static bool affinity_ok(const struct que_flavor *f, const struct que_podset *ps)
{
	uint32_t i, j;

	for (i = 0; i < ps->n_selector; i++) {
		const char *v = label(f, ps->selector[i].key);

		if (v && strcmp(v, ps->selector[i].value) != 0)
			return false;
	}
	if (ps->n_terms == 0)
		return true;
	for (i = 0; i < ps->n_terms; i++) {
		uint32_t kept = 0;

		for (j = 0; j < ps->terms[i].n_reqs; j++)
			kept += label(f, ps->terms[i].reqs[j].key) != NULL;
		if (kept == 0)
			return true;
	}
	for (i = 0; i < ps->n_terms; i++) {
		bool all = true;

		for (j = 0; j < ps->terms[i].n_reqs && all; j++) {
			const char *v = label(f, ps->terms[i].reqs[j].key);

			if (v)
				all = req_matches(&ps->terms[i].reqs[j], v);
		}
		if (all)
			return true;
	}
	return false;
}

/* ---- quota ------------------------------------------------------------ */

int adm_borrow_level(
    const struct que_cq *cq, uint32_t fr, int64_t val, bool *may_reclaim)
{
	const struct que_cohort *node;
	int64_t remaining;

	if (may_reclaim)
		*may_reclaim = cq->node.parent != NULL;
	if (!cq->node.parent || !que_node_borrowing_with(&cq->node, fr, val))
		return 0;
	remaining = val - que_node_local_available(&cq->node, fr);
	for (node = cq->node.parent; node; node = node->node.parent) {
		if (!que_node_borrowing_with(&node->node, fr, remaining)) {
			if (may_reclaim)
				*may_reclaim = node->node.parent != NULL;
			return que_cohort_height(node);
		}
		remaining -= que_node_local_available(&node->node, fr);
	}
	if (may_reclaim)
		*may_reclaim = false;
	return que_cohort_height(cq->node.parent->root);
}

static int64_t assumed_usage(const struct adm_assignment *a, uint32_t fr)
{
	size_t i;

	for (i = 0; i < a->n_usage; i++)
		if (a->usage[i].fr == fr)
			return a->usage[i].v;
	return 0;
}

static int oracle(que_state *st, struct que_cq *cq, struct que_wl *wl,
    uint32_t fr, int64_t val, struct gmode *out, cu_error *err)
{
	struct adm_fr_amount req = {fr, val};
	struct adm_targets t = {0};
	size_t i;
	int rc;

	rc = (que_fair_sharing(st)->enable ? adm_fair_find_targets
					   : adm_find_targets)(
	    st, cq, wl, &req, 1, &fr, 1, NULL, &t, err);
	if (rc)
		return rc;
	if (t.n == 0) {
		out->mode = ADM_MODE_NO_CANDIDATES;
		out->borrow = adm_borrow_level(cq, fr, val, NULL);
		adm_targets_dispose(&t);
		return CU_OK;
	}
	out->mode = ADM_MODE_RECLAIM;
	for (i = 0; i < t.n; i++) {
		if (t.v[i].wl->cq == cq)
			out->mode = ADM_MODE_PREEMPT;
		que_wl_remove_usage(t.v[i].wl);
	}
	out->borrow = adm_borrow_level(cq, fr, val, NULL);
	for (i = 0; i < t.n; i++)
		que_wl_add_usage(t.v[i].wl);
	adm_targets_dispose(&t);
	return CU_OK;
}

static int fits_quota(que_state *st, struct que_cq *cq, struct que_wl *wl,
    uint32_t fr, int64_t assumed, int64_t request, struct gmode *out,
    enum adm_reason *reason, struct reasons *rs, cu_error *err)
{
	const char *res = que_resource_name(st, que_fr_resource(st, fr));
	const char *flv = que_flavor_by_id(st, que_fr_flavor(st, fr))->name;
	int64_t val, avail, maxcap;
	bool may_reclaim;
	char q1[40], q2[40], q3[40];

	*reason = ADM_REASON_NONE;
	out->borrow = 0;
	if (__builtin_add_overflow(assumed, request, &val))
		val = INT64_MAX;
	maxcap = que_node_potential_available(&cq->node, fr);
	if (val > maxcap) {
		adm_format_quantity(res, assumed, q1, sizeof(q1));
		adm_format_quantity(res, request, q2, sizeof(q2));
		adm_format_quantity(res, maxcap, q3, sizeof(q3));
		out->mode = ADM_MODE_NOFIT;
		*reason = ADM_REASON_EXCEEDS_MAX_QUOTA;
		if (reasons_add(rs,
			"insufficient quota for %s in flavor %s, previously "
			"considered podsets requests (%s) + current podset "
			"request (%s) > maximum capacity (%s)",
			res, flv, q1, q2, q3))
			goto out_nomem;
		return CU_OK;
	}
	out->borrow = adm_borrow_level(cq, fr, val, &may_reclaim);
	avail = que_node_available(&cq->node, fr);
	if (val <= avail) {
		out->mode = ADM_MODE_FIT;
		return CU_OK;
	}
	adm_format_quantity(res, val - avail, q1, sizeof(q1));
	if (reasons_add(rs,
		"insufficient unused quota for %s in flavor %s, %s "
		"more needed",
		res, flv, q1))
		goto out_nomem;
	/* Preempting is only worth simulating when it could free enough:
	 * within nominal quota, or from a subtree this CQ has a claim on, or
	 * when borrowWithinCohort (or, with fair sharing, reclaimWithinCohort)
	 * lets it preempt while borrowing. */
	if (que_node_quota(&cq->node, fr)->nominal >= val || may_reclaim ||
	    cq->preemption.borrow_within_cohort != QUE_PREEMPT_NEVER ||
	    (que_fair_sharing(st)->enable &&
		cq->preemption.reclaim_within_cohort != QUE_PREEMPT_NEVER))
		return oracle(st, cq, wl, fr, val, out, err);
	out->mode = ADM_MODE_NOFIT;
	*reason = ADM_REASON_WAITING_FOR_QUOTA;
	return CU_OK;
out_nomem:
	return cu_error_set(err, CU_ENOMEM, "flavor assignment: out of memory");
}

/* ---- one resource group of one podset ----------------------------------- */

/* Request j of ps for count pods (partial admission probes fewer pods). */
static int64_t req_total(const struct que_podset *ps, size_t j, int32_t count)
{
	int64_t v;

	if (__builtin_mul_overflow(ps->req[j].per_pod, (int64_t)count, &v))
		return INT64_MAX;
	return v;
}

struct group_result {
	struct gmode m;
	enum adm_reason min_reason; /* the closest NoFit attempt */
};

/* Topology-aware scheduling: the hook's answer for podSet ps running
 * count pods in flv (0 it may; 1 no room; 2 the flavor cannot serve the
 * request), its message added to rs when not 0 (*rc: CU_ENOMEM). */
static int tas_nofit(que_state *st, const struct que_wl *wl,
    const struct que_podset *ps, const struct que_flavor *flv, int32_t count,
    int *rc, struct reasons *rs)
{
	const struct que_tas_hook *h = que_tas_hook(st);
	char msg[256];
	int r;

	if (h == NULL || h->check == NULL ||
	    (r = h->check(h->ctx, wl, (size_t)(ps - wl->podsets), flv, count,
		 msg, sizeof(msg))) == 0)
		return 0;
	*rc = reasons_add(rs, "%s", msg);
	return r;
}

/* Topology-aware scheduling, when the hook said no room: would podSet ps
 * fit flv's topology once every admitted Workload's topology usage were
 * released (Kueue's simulateEmpty)? If not, the flavor is NoFit with
 * TopologyPlacementFailed (*placement_failed); if so and the ClusterQueue
 * may preempt, the flavor is Preempt at best instead of NoFit, and the
 * preemption search looks for victims whose removal makes it fit. */
static bool tas_preemptible(que_state *st, const struct que_cq *cq,
    const struct que_wl *wl, const struct que_podset *ps,
    const struct que_flavor *flv, int32_t count, bool *placement_failed)
{
	const struct que_tas_hook *h = que_tas_hook(st);
	char msg[256];

	*placement_failed = false;
	if (h == NULL || h->check_without == NULL)
		return false;
	if (h->check_without(h->ctx, wl, (size_t)(ps - wl->podsets), flv, count,
		NULL, 0, true, msg, sizeof(msg)) != 0) {
		*placement_failed = true;
		return false;
	}
	return cq->preemption.within_cluster_queue != QUE_PREEMPT_NEVER ||
	       (cq->node.parent != NULL &&
		   cq->preemption.reclaim_within_cohort != QUE_PREEMPT_NEVER);
}

/* Try one flavor flv for the n requests idx[] of pod set ps: its mode
 * (*rep_out; cur[k] for each request) and, when it does not fit, the most
 * severe reason why (*why_out). Reasons go to rs. */
static int try_flavor(que_state *st, struct que_cq *cq, struct que_wl *wl,
    const struct que_podset *ps, int32_t count, const struct que_flavor *flv,
    const uint32_t *idx, size_t n, const struct adm_assignment *a,
    struct reasons *rs, struct gmode *rep_out, enum adm_reason *why_out,
    uint8_t *cur, cu_error *err)
{
	const struct que_taint *taint;
	struct gmode rep = {ADM_MODE_FIT, 0};
	enum adm_reason flavor_reason = ADM_REASON_NONE;
	bool tas_preempt = false, tas_failed = false;
	int tas_r, rc;
	size_t k;
	size_t tas_msg = rs->n;

	rc = CU_OK;
	if (!flv->exists) {
		rc = reasons_add(rs, "flavor %s not found", flv->name);
		flavor_reason = ADM_REASON_NO_MATCHING_FLAVOR;
		rep.mode = ADM_MODE_NOFIT;
	} else if ((taint = untolerated(flv, ps))) {
		/* Kueue prints the Taint struct as Go does: {key
		 * value effect timeAdded}, timeAdded unset. */
		rc = reasons_add(rs,
		    "untolerated taint {%s %s %s <nil>} in flavor %s",
		    taint->key, taint->value ? taint->value : "",
		    effect_name(taint->effect), flv->name);
		flavor_reason = ADM_REASON_NO_MATCHING_FLAVOR;
		rep.mode = ADM_MODE_NOFIT;
	} else if (!affinity_ok(flv, ps)) {
		rc = reasons_add(
		    rs, "flavor %s doesn't match node affinity", flv->name);
		flavor_reason = ADM_REASON_NO_MATCHING_FLAVOR;
		rep.mode = ADM_MODE_NOFIT;
	} else if ((tas_r = tas_nofit(st, wl, ps, flv, count, &rc, rs)) != 0 &&
		   (rc != CU_OK || tas_r == 2 ||
		       !(tas_preempt = tas_preemptible(
			     st, cq, wl, ps, flv, count, &tas_failed)))) {
		/* Kueue's reasons: the flavor cannot serve the
		 * request at all; no room even with every Workload
		 * gone; room only after preemptions it may not
		 * make. */
		flavor_reason = tas_r == 2 ? ADM_REASON_NO_MATCHING_FLAVOR
				: tas_failed
				    ? ADM_REASON_TOPOLOGY_PLACEMENT_FAILED
				    : ADM_REASON_WAITING_FOR_QUOTA;
		rep.mode = ADM_MODE_NOFIT;
	} else {
		for (k = 0; k < n; k++) {
			const struct que_req *r = &ps->req[idx[k]];
			uint32_t fr = que_fr_find(st, flv->id, r->res);
			struct gmode m;
			enum adm_reason why;

			rc = fits_quota(st, cq, wl, fr, assumed_usage(a, fr),
			    req_total(ps, idx[k], count), &m, &why, rs, err);
			if (rc)
				return rc;
			flavor_reason = most_severe(flavor_reason, why);
			cur[k] = (uint8_t)m.mode;
			if (preferred(rep, m, cq->preference))
				rep = m;
			if (rep.mode == ADM_MODE_NOFIT)
				break;
		}
		/* Topology preemption: Kueue looks at the topology
		 * only once the quota fits (otherwise the quota's
		 * reasons alone), then, as its updateMode(Preempt),
		 * every resource of the group needs preemption. */
		if (tas_preempt && rep.mode != ADM_MODE_FIT)
			reasons_drop(rs, tas_msg);
		if (tas_preempt && rep.mode >= ADM_MODE_PREEMPT) {
			rep.mode = ADM_MODE_PREEMPT;
			for (k = 0; k < n; k++)
				if (cur[k] > ADM_MODE_PREEMPT)
					cur[k] = ADM_MODE_PREEMPT;
		}
	}
	if (rc)
		return cu_error_set(
		    err, CU_ENOMEM, "flavor assignment: out of memory");
	*rep_out = rep;
	*why_out = flavor_reason;
	return CU_OK;
}

static int find_flavor(que_state *st, struct que_cq *cq, struct que_wl *wl,
    const struct que_podset *ps, int32_t count, size_t off,
    const struct que_group *g, struct adm_assignment *a, struct reasons *rs,
    struct group_result *gr, cu_error *err)
{
	uint32_t idx[GROUP_MAX];
	uint8_t cur[GROUP_MAX], best_modes[GROUP_MAX];
	struct gmode best = {ADM_MODE_NOFIT, 0};
	uint32_t best_flv = UINT32_MAX;
	size_t n = 0, i, k, f;
	bool attempted = false;
	int rc;

	for (i = 0; i < ps->n_req && n < GROUP_MAX; i++)
		for (k = 0; k < g->n_res; k++)
			if (g->res[k] == ps->req[i].res)
				idx[n++] = (uint32_t)i;
	gr->min_reason = ADM_REASON_NONE;
	for (f = 0; f < g->n_flv; f++) {
		const struct que_flavor *flv = que_flavor_by_id(st, g->flv[f]);
		struct gmode rep;
		enum adm_reason flavor_reason = ADM_REASON_NONE;

		rc = try_flavor(st, cq, wl, ps, count, flv, idx, n, a, rs, &rep,
		    &flavor_reason, cur, err);
		if (rc)
			return rc;
		if (rep.mode == ADM_MODE_NOFIT) {
			if (!attempted ||
			    severity(flavor_reason) < severity(gr->min_reason))
				gr->min_reason = flavor_reason;
			attempted = true;
			continue;
		}
		if (!try_next_flavor(rep, cq) ||
		    preferred(rep, best, cq->preference)) {
			best = rep;
			best_flv = flv->id;
			memcpy(best_modes, cur, n);
			if (!try_next_flavor(rep, cq))
				break;
		}
	}
	gr->m = best;
	if (best.mode == ADM_MODE_NOFIT) {
		if (!attempted)
			gr->min_reason = ADM_REASON_NO_MATCHING_FLAVOR;
		return CU_OK;
	}
	for (k = 0; k < n; k++) {
		a->frs[off + idx[k]] =
		    que_fr_find(st, best_flv, ps->req[idx[k]].res);
		a->req_mode[off + idx[k]] = best_modes[k];
	}
	return CU_OK;
}

static int add_usage(struct adm_assignment *a, uint32_t fr, int64_t v)
{
	size_t i;

	for (i = 0; i < a->n_usage; i++)
		if (a->usage[i].fr == fr) {
			if (__builtin_add_overflow(
				a->usage[i].v, v, &a->usage[i].v))
				a->usage[i].v = INT64_MAX;
			return CU_OK;
		}
	a->usage[a->n_usage].fr = fr;
	a->usage[a->n_usage].v = v;
	a->n_usage++;
	return CU_OK;
}

/* "couldn't assign flavors to pod set X: r1, r2" with sorted reasons,
 * podsets separated by "; " (Kueue's Assignment.Message). */
static int append_message(
    struct adm_assignment *a, const char *podset, struct reasons *rs)
{
	size_t i;

	if (rs->n > 1)
		qsort(rs->v, rs->n, sizeof(*rs->v), cmp_str);
	if (a->msg.len && cu_buf_adds(&a->msg, "; "))
		return CU_ENOMEM;
	if (cu_buf_addf(
		&a->msg, "couldn't assign flavors to pod set %s: ", podset))
		return CU_ENOMEM;
	for (i = 0; i < rs->n; i++)
		if ((i && cu_buf_adds(&a->msg, ", ")) ||
		    cu_buf_adds(&a->msg, rs->v[i]))
			return CU_ENOMEM;
	return CU_OK;
}

void adm_assignment_dispose(struct adm_assignment *a)
{
	cu_free(a->frs);
	cu_free(a->req_mode);
	cu_free(a->usage);
	cu_buf_dispose(&a->msg);
	memset(a, 0, sizeof(*a));
}

static const struct que_group *group_of(const struct que_cq *cq, uint32_t res)
{
	size_t g, k;

	for (g = 0; g < cq->n_groups; g++)
		for (k = 0; k < cq->groups[g].n_res; k++)
			if (cq->groups[g].res[k] == res)
				return &cq->groups[g];
	return NULL;
}

int adm_assign_flavors(que_state *st, struct que_cq *cq, struct que_wl *wl,
    const int32_t *counts, struct adm_assignment *a, cu_error *err)
{
	size_t total = 0, off = 0, i, j;
	struct reasons ps_rs = {0}, grp_rs = {0};
	int rc = CU_OK;

	memset(a, 0, sizeof(*a));
	cu_buf_init(&a->msg, 64 * 1024);
	for (i = 0; i < wl->n_podsets; i++)
		total += wl->podsets[i].n_req;
	a->frs = cu_malloc((total ? total : 1) * sizeof(*a->frs));
	a->req_mode = cu_malloc(total ? total : 1);
	a->usage = cu_malloc((total ? total : 1) * sizeof(*a->usage));
	if (!a->frs || !a->req_mode || !a->usage)
		goto out_nomem;
	for (i = 0; i < wl->n_podsets && i < ADM_MAX_PODSETS; i++)
		a->counts[i] = counts ? counts[i] : wl->podsets[i].count;
	for (i = 0; i < total; i++) {
		a->frs[i] = UINT32_MAX;
		a->req_mode[i] = ADM_MODE_FIT;
	}
	a->mode = ADM_MODE_FIT;
	for (i = 0; i < wl->n_podsets; i++, off += wl->podsets[i - 1].n_req) {
		const struct que_podset *ps = &wl->podsets[i];
		struct gmode psm = {ADM_MODE_FIT, 0};
		enum adm_reason ps_reason = ADM_REASON_NONE;
		bool failed = false;

		for (j = 0; j < ps->n_req && !failed; j++) {
			const struct que_group *g;
			struct group_result gr = {
			    {ADM_MODE_NOFIT, 0}, ADM_REASON_NONE};

			if (a->frs[off + j] != UINT32_MAX)
				continue;
			g = group_of(cq, ps->req[j].res);
			if (!g) {
				/* A zero request for an uncovered resource
				 * needs no flavor (Kueue #8079), nor any with
				 * quotaCheckStrategy IgnoreUndeclared. */
				if (req_total(ps, j, a->counts[i]) == 0 ||
				    que_resources_ignore_undeclared(st))
					continue;
				if (reasons_add(&ps_rs,
					"resource %s unavailable in "
					"ClusterQueue",
					que_resource_name(st, ps->req[j].res)))
					goto out_nomem;
				ps_reason = ADM_REASON_NO_MATCHING_FLAVOR;
				failed = true;
				break;
			}
			rc = find_flavor(st, cq, wl, ps, a->counts[i], off, g,
			    a, &grp_rs, &gr, err);
			if (rc)
				goto out;
			/* A group that fits says nothing about why the
			 * workload waits: its reasons are dropped. */
			if (gr.m.mode == ADM_MODE_FIT) {
				reasons_dispose(&grp_rs);
			} else if (reasons_take(&ps_rs, &grp_rs)) {
				goto out_nomem;
			}
			if (gr.m.mode == ADM_MODE_NOFIT) {
				ps_reason =
				    most_severe(ps_reason, gr.min_reason);
				failed = true;
				break;
			}
			if (gr.m.mode < psm.mode)
				psm.mode = gr.m.mode;
			if (gr.m.borrow > psm.borrow)
				psm.borrow = gr.m.borrow;
		}
		if (failed || psm.mode != ADM_MODE_FIT) {
			if (append_message(a, ps->name, &ps_rs))
				goto out_nomem;
		}
		reasons_dispose(&ps_rs);
		if (failed) {
			/* Kueue stops at the first podset that cannot get
			 * flavors: the workload is NoFit as a whole. */
			a->mode = ADM_MODE_NOFIT;
			a->reason = most_severe(a->reason, ps_reason);
			break;
		}
		if (psm.mode < a->mode)
			a->mode = psm.mode;
		if (psm.borrow > a->borrow)
			a->borrow = psm.borrow;
		for (j = 0; j < ps->n_req; j++)
			if (a->frs[off + j] != UINT32_MAX &&
			    req_total(ps, j, a->counts[i]) > 0)
				add_usage(a, a->frs[off + j],
				    req_total(ps, j, a->counts[i]));
	}
	goto out;
out_nomem:
	rc = cu_error_set(err, CU_ENOMEM, "flavor assignment: out of memory");
out:
	reasons_dispose(&ps_rs);
	reasons_dispose(&grp_rs);
	return rc;
}
