/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queues/quota.c - quota arithmetic over the ClusterQueue/Cohort tree
 * (what a node may still use, what it could ever use, how usage bubbles
 * up), the rebuild that relinks cohort trees after configuration changes,
 * and the invariant checker.
 *
 * Model (the same as Kueue's resource nodes): for each (flavor, resource)
 * a node keeps `localQuota = max(0, subtree - lendingLimit)` for itself
 * (0 without a lending limit) and stores the rest of its subtree quota in
 * its parent. Only usage beyond localQuota is visible in the parent, which
 * is how "a CQ lends at most lendingLimit of its unused nominal" falls out
 * of plain sums. A borrowingLimit caps how much more than it stores a node
 * may take from its parent.
 */
#include <stdio.h>
#include <string.h>

#include "queues/queues_int.h"

static const struct que_cell zero_cell;

static const struct que_cell *cell(const struct que_node *n, uint32_t fr)
{
	return fr < n->ncells ? &n->cells[fr] : &zero_cell;
}

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* Quotas are validated non-negative and far below 2^62 in practice; the
 * saturating add keeps a pathological configuration from wrapping. */
static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static int64_t sat_sub(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_sub_overflow(a, b, &r))
		return b < 0 ? INT64_MAX : INT64_MIN;
	return r;
}

const struct que_quota *que_node_quota(const struct que_node *n, uint32_t fr)
{
	return &cell(n, fr)->q;
}

int64_t que_node_usage(const struct que_node *n, uint32_t fr)
{
	return cell(n, fr)->usage;
}

int64_t que_node_subtree(const struct que_node *n, uint32_t fr)
{
	return cell(n, fr)->subtree;
}

int64_t que_node_local_quota(const struct que_node *n, uint32_t fr)
{
	const struct que_cell *c = cell(n, fr);

	if (!c->q.has_lending_limit)
		return 0;
	return max64(0, sat_sub(c->subtree, c->q.lending_limit));
}

int64_t que_node_local_available(const struct que_node *n, uint32_t fr)
{
	return max64(
	    0, sat_sub(que_node_local_quota(n, fr), cell(n, fr)->usage));
}

int64_t que_node_available(const struct que_node *n, uint32_t fr)
{
	const struct que_cell *c = cell(n, fr);
	int64_t parent_avail, lq;

	if (!n->parent)
		return sat_sub(c->subtree, c->usage);
	parent_avail = que_node_available(&n->parent->node, fr);
	if (c->q.has_borrowing_limit) {
		int64_t stored, used;

		lq = que_node_local_quota(n, fr);
		stored = sat_sub(c->subtree, lq);
		used = max64(0, sat_sub(c->usage, lq));
		parent_avail = min64(parent_avail,
		    sat_add(sat_sub(stored, used), c->q.borrowing_limit));
	}
	return sat_add(que_node_local_available(n, fr), parent_avail);
}

int64_t que_node_potential_available(const struct que_node *n, uint32_t fr)
{
	const struct que_cell *c = cell(n, fr);
	int64_t avail;

	if (!n->parent)
		return c->subtree;
	avail = sat_add(que_node_local_quota(n, fr),
	    que_node_potential_available(&n->parent->node, fr));
	if (c->q.has_borrowing_limit)
		avail = min64(avail, sat_add(c->subtree, c->q.borrowing_limit));
	return avail;
}

bool que_node_borrowing_with(const struct que_node *n, uint32_t fr, int64_t v)
{
	const struct que_cell *c = cell(n, fr);

	return sat_add(c->usage, v) > c->subtree;
}

int que_cohort_height(const struct que_cohort *c)
{
	return c->height;
}

void que_node_add_usage(struct que_node *n, uint32_t fr, int64_t v)
{
	int64_t la;

	CU_ASSERT(fr < n->ncells);
	la = que_node_local_available(n, fr);
	n->cells[fr].usage = sat_add(n->cells[fr].usage, v);
	if (n->parent && v > la)
		que_node_add_usage(&n->parent->node, fr, v - la);
}

void que_node_remove_usage(struct que_node *n, uint32_t fr, int64_t v)
{
	int64_t stored;

	CU_ASSERT(fr < n->ncells);
	stored = sat_sub(n->cells[fr].usage, que_node_local_quota(n, fr));
	n->cells[fr].usage = sat_sub(n->cells[fr].usage, v);
	if (stored <= 0 || !n->parent)
		return;
	que_node_remove_usage(&n->parent->node, fr, min64(v, stored));
}

void que_wl_add_usage(struct que_wl *wl)
{
	uint32_t i, j;

	que_cq_touch(wl->cq);
	if (wl->replaced)
		return; /* its usage went with que_workload_replaced */
	for (i = 0; i < wl->n_podsets; i++)
		for (j = 0; j < wl->podsets[i].n_req; j++)
			if (wl->podsets[i].req[j].total > 0 &&
			    wl->podsets[i].fr[j] != UINT32_MAX)
				que_node_add_usage(&wl->cq->node,
				    wl->podsets[i].fr[j],
				    wl->podsets[i].req[j].total);
}

void que_wl_remove_usage(struct que_wl *wl)
{
	uint32_t i, j;

	que_cq_touch(wl->cq);
	if (wl->replaced)
		return; /* its usage went with que_workload_replaced */
	for (i = 0; i < wl->n_podsets; i++)
		for (j = 0; j < wl->podsets[i].n_req; j++)
			if (wl->podsets[i].req[j].total > 0 &&
			    wl->podsets[i].fr[j] != UINT32_MAX)
				que_node_remove_usage(&wl->cq->node,
				    wl->podsets[i].fr[j],
				    wl->podsets[i].req[j].total);
}

void que_capacity_freed(struct que_cq *cq)
{
	if (cq->node.parent && cq->node.parent->root)
		cq->node.parent->root->requeue_needed = true;
	else
		cq->requeue_needed = true;
}

/* ---- rebuild --------------------------------------------------------- */

/* FNV-1a over the bytes of a value. */
static uint64_t sig_mix(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= b[i];
		h *= 1099511628211ull;
	}
	return h;
}

#define SIG(h, v) sig_mix((h), &(v), sizeof(v))

static uint64_t sig_str(uint64_t h, const char *s)
{
	return sig_mix(h, s ? s : "", s ? strlen(s) + 1 : 1);
}

static uint64_t sig_node(uint64_t h, const struct que_node *n, uint32_t nfr)
{
	uint32_t fr;

	for (fr = 0; fr < nfr && fr < n->ncells; fr++) {
		const struct que_cell *c = &n->cells[fr];
		unsigned char flags =
		    (unsigned char)(c->q.has_borrowing_limit |
				    c->q.has_lending_limit << 1 |
				    c->q.defined << 2);

		h = SIG(h, c->q.nominal);
		h = SIG(h, c->q.borrowing_limit);
		h = SIG(h, c->q.lending_limit);
		h = SIG(h, c->subtree);
		h = SIG(h, flags);
	}
	return h;
}

static uint64_t sig_flavor(uint64_t h, const struct que_flavor *f)
{
	size_t i;

	h = SIG(h, f->exists);
	for (i = 0; i < f->n_labels; i++) {
		h = sig_str(h, f->labels[i].key);
		h = sig_str(h, f->labels[i].value);
	}
	for (i = 0; i < f->n_taints; i++) {
		h = sig_str(h, f->taints[i].key);
		h = sig_str(h, f->taints[i].value);
		h = SIG(h, f->taints[i].effect);
	}
	for (i = 0; i < f->n_tolerations; i++) {
		h = sig_str(h, f->tolerations[i].key);
		h = sig_str(h, f->tolerations[i].value);
		h = SIG(h, f->tolerations[i].op);
		h = SIG(h, f->tolerations[i].any_effect);
		h = SIG(h, f->tolerations[i].effect);
	}
	return h;
}

/*
 * What decides whether a parked workload of cq could now be admitted,
 * apart from usage: whether cq is active, its spec (queueing, preemption,
 * fungibility, resource groups and their flavors), and the quotas of cq
 * and every cohort above it (a subtree quota there sums its children's).
 * Kueue looks at parked workloads again when these change, not when the
 * objects are merely written again (a status update).
 */
static uint64_t cq_signature(const que_state *st, const struct que_cq *cq)
{
	uint64_t h = 14695981039346656037ull;
	const struct que_cohort *co;
	size_t g, k;

	h = SIG(h, cq->active);
	h = sig_str(h, cq->inactive_reason);
	h = SIG(h, cq->queueing);
	h = SIG(h, cq->stop);
	h = SIG(h, cq->preemption.within_cluster_queue);
	h = SIG(h, cq->preemption.reclaim_within_cohort);
	h = SIG(h, cq->preemption.borrow_within_cohort);
	h = SIG(h, cq->preemption.has_max_priority_threshold);
	h = SIG(h, cq->preemption.max_priority_threshold);
	h = SIG(h, cq->when_can_borrow);
	h = SIG(h, cq->when_can_preempt);
	h = SIG(h, cq->preference);
	for (g = 0; g < cq->n_groups; g++) {
		h = SIG(h, cq->groups[g].n_res);
		for (k = 0; k < cq->groups[g].n_res; k++)
			h = SIG(h, cq->groups[g].res[k]);
		for (k = 0; k < cq->groups[g].n_flv; k++) {
			h = SIG(h, cq->groups[g].flv[k]);
			h = sig_flavor(h, st->flavors[cq->groups[g].flv[k]]);
		}
	}
	h = sig_node(h, &cq->node, st->n_fr);
	for (co = cq->node.parent; co; co = co->node.parent) {
		h = SIG(h, co);
		h = sig_node(h, &co->node, st->n_fr);
	}
	return h ? h : 1;
}

static void accumulate(
    struct que_node *parent, const struct que_node *child, uint32_t nfr)
{
	uint32_t fr;

	for (fr = 0; fr < nfr; fr++) {
		int64_t lq = que_node_local_quota(child, fr);

		parent->cells[fr].subtree = sat_add(parent->cells[fr].subtree,
		    sat_sub(cell(child, fr)->subtree, lq));
		parent->cells[fr].usage = sat_add(parent->cells[fr].usage,
		    max64(0, sat_sub(cell(child, fr)->usage, lq)));
	}
}

static void cq_own_subtree(struct que_cq *cq, uint32_t nfr)
{
	uint32_t fr;

	for (fr = 0; fr < nfr; fr++)
		cq->node.cells[fr].subtree = cq->node.cells[fr].q.defined
						 ? cq->node.cells[fr].q.nominal
						 : 0;
}

static void compute_tree(
    struct que_cohort *co, struct que_cohort *root, uint32_t nfr)
{
	size_t i;
	uint32_t fr;

	co->root = root;
	for (fr = 0; fr < nfr; fr++) {
		co->node.cells[fr].subtree = co->node.cells[fr].q.defined
						 ? co->node.cells[fr].q.nominal
						 : 0;
		co->node.cells[fr].usage = 0;
	}
	co->height = (co->n_kids + co->n_cqs) > 0 ? 1 : 0;
	for (i = 0; i < co->n_kids; i++) {
		compute_tree(co->kids[i], root, nfr);
		if (co->kids[i]->height + 1 > co->height)
			co->height = co->kids[i]->height + 1;
		accumulate(&co->node, &co->kids[i]->node, nfr);
	}
	for (i = 0; i < co->n_cqs; i++) {
		cq_own_subtree(co->cqs[i], nfr);
		accumulate(&co->node, &co->cqs[i]->node, nfr);
	}
}

static bool cq_linked(const struct que_cq *cq)
{
	/* A deleted CQ still holding quota stays in its tree until its
	 * workloads release it, so usage keeps adding up (invariant 2). */
	return cq->exists || cq->admitted.n > 0;
}

/* Whether cq may admit, and Kueue's reason when it may not (its
 * ClusterQueue Active condition): terminating, invalid, stopped, checks
 * missing, a flavor missing, or its cohort in a cycle. */
static void cq_set_activity(const struct que_state *st, struct que_cq *cq)
{
	size_t g, f;

	cq->active = false;
	if (!cq->exists) {
		cq->inactive_reason = "Terminating";
		return;
	}
	if (cq->refused != NULL) {
		cq->inactive_reason = "InvalidSpec";
		return;
	}
	if (cq->stop != QUE_STOP_NONE) {
		cq->inactive_reason = "Stopped";
		return;
	}
	/* Kueue's order: a missing flavor before the checks. */
	cq->inactive_reason = NULL;
	for (g = 0; g < cq->n_groups && !cq->inactive_reason; g++)
		for (f = 0; f < cq->groups[g].n_flv; f++)
			if (!st->flavors[cq->groups[g].flv[f]]->exists) {
				cq->inactive_reason = "FlavorNotFound";
				break;
			}
	if (!cq->inactive_reason && cq->checks_reason != NULL)
		cq->inactive_reason = cq->checks_reason;
	if (!cq->inactive_reason && cq->node.parent &&
	    cq->node.parent->in_cycle)
		cq->inactive_reason = "Unknown";
	cq->active = !cq->inactive_reason;
	if (cq->active)
		cq->inactive_reason = "Ready";
}

/* ", " between the causes after the first. */
static int add_cause(cu_buf *b, size_t *n, const char *text)
{
	return cu_buf_addf(b, "%s%s", (*n)++ ? ", " : ": ", text);
}

/* "references missing ResourceFlavor(s): a,b" in the order the resource
 * groups name them, as Kueue lists them. */
static int add_missing_flavors(
    const que_state *st, const struct que_cq *cq, cu_buf *b, size_t *n)
{
	size_t g, f, k = 0;
	int rc = CU_OK;

	for (g = 0; g < cq->n_groups && rc == CU_OK; g++)
		for (f = 0; f < cq->groups[g].n_flv && rc == CU_OK; f++) {
			const struct que_flavor *fl =
			    st->flavors[cq->groups[g].flv[f]];

			if (fl->exists)
				continue;
			rc = k++ == 0 ? add_cause(b, n,
					    "references missing "
					    "ResourceFlavor(s): ")
				      : cu_buf_adds(b, ",");
			if (rc == CU_OK)
				rc = cu_buf_adds(b, fl->name);
		}
	return rc;
}

char *que_cq_active_message(const que_state *st, const struct que_cq *cq)
{
	cu_buf b;
	size_t n = 0;
	int rc;

	if (!cq->exists)
		return cu_strdup("Can't admit new workloads; clusterQueue is "
				 "terminating");
	if (cq->refused != NULL)
		return cu_asprintf("Can't admit new workloads: its spec was "
				   "refused: %s",
		    cq->refused);
	if (cq->active)
		return cu_strdup("Can admit new workloads");
	cu_buf_init(&b, 32768); /* Kueue truncates condition messages there */
	rc = cu_buf_adds(&b, "Can't admit new workloads");
	if (rc == CU_OK && cq->stop != QUE_STOP_NONE)
		rc = add_cause(&b, &n, "is stopped");
	if (rc == CU_OK)
		rc = add_missing_flavors(st, cq, &b, &n);
	if (rc == CU_OK && cq->checks_reason != NULL && cq->checks_message)
		rc = add_cause(&b, &n, cq->checks_message);
	if (rc == CU_OK)
		rc = cu_buf_adds(&b, ".");
	return rc == CU_OK ? cu_buf_detach(&b, NULL) : NULL;
}

int que_rebuild_trees(struct que_state *st, cu_error *err)
{
	size_t i, n0, steps;
	uint32_t nfr = st->n_fr;

	for (i = 0; i < st->n_cqs; i++)
		if (que_node_reserve(&st->cqs[i]->node, nfr))
			goto out_nomem;
	for (i = 0; i < st->n_cohorts; i++) {
		struct que_cohort *co = st->cohorts[i];

		if (que_node_reserve(&co->node, nfr))
			goto out_nomem;
		co->refs = 0;
		co->n_kids = co->n_cqs = 0;
		co->in_cycle = false;
		co->node.parent = NULL;
		co->root = NULL;
	}
	n0 = st->n_cohorts;
	for (i = 0; i < n0; i++) {
		struct que_cohort *co = st->cohorts[i], *p;

		if (!co->is_explicit || !co->parent_name)
			continue;
		if (que_cohort_intern(st, co->parent_name, &p))
			goto out_nomem;
		p->refs++;
		co->node.parent = p;
	}
	for (i = 0; i < st->n_cqs; i++) {
		struct que_cq *cq = st->cqs[i];
		struct que_cohort *co;

		cq->node.parent = NULL;
		if (!cq_linked(cq) || !cq->cohort_name)
			continue;
		if (que_cohort_intern(st, cq->cohort_name, &co) ||
		    cu_grow((void **)&co->cqs, &co->cap_cqs, co->n_cqs + 1,
			sizeof(*co->cqs)))
			goto out_nomem;
		co->refs++;
		co->cqs[co->n_cqs++] = cq;
		cq->node.parent = co;
	}
	/* A parent chain longer than the number of cohorts loops. Members
	 * and descendants of a loop are cut loose and their CQs inactive
	 * (Kueue disables the whole tree). */
	for (i = 0; i < st->n_cohorts; i++) {
		struct que_cohort *p = st->cohorts[i];

		for (steps = 0; p && steps <= st->n_cohorts; steps++)
			p = p->node.parent;
		if (p)
			st->cohorts[i]->in_cycle = true;
	}
	for (i = 0; i < st->n_cohorts; i++) {
		struct que_cohort *co = st->cohorts[i], *p;

		if (co->in_cycle) {
			co->node.parent = NULL;
			continue;
		}
		p = co->node.parent;
		if (!p)
			continue;
		if (cu_grow((void **)&p->kids, &p->cap_kids, p->n_kids + 1,
			sizeof(*p->kids)))
			goto out_nomem;
		p->kids[p->n_kids++] = co;
	}
	for (i = 0; i < st->n_cohorts; i++)
		if (!st->cohorts[i]->node.parent)
			compute_tree(st->cohorts[i], st->cohorts[i], nfr);
	for (i = 0; i < st->n_cqs; i++) {
		if (!st->cqs[i]->node.parent)
			cq_own_subtree(st->cqs[i], nfr);
		cq_set_activity(st, st->cqs[i]);
	}
	/* What is inadmissible deserves another look where quota, flavors,
	 * the spec or activity changed (not on every configuration pass). */
	for (i = 0; i < st->n_cqs; i++) {
		struct que_cq *cq = st->cqs[i];
		uint64_t sig = cq_signature(st, cq);

		if (sig != cq->config_sig) {
			cq->config_sig = sig;
			cq->requeue_needed = true;
		}
	}
	return CU_OK;
out_nomem:
	return cu_error_set(err, CU_ENOMEM,
	    "rebuild of cohort trees: out of "
	    "memory");
}

int que_rebuild(que_state *st, cu_error *err)
{
	size_t i;
	int rc;

	if (!st->dirty)
		return CU_OK;
	rc = que_rebuild_trees(st, err);
	if (rc)
		return rc;
	rc = que_route_all(st, err);
	if (rc)
		return rc;
	st->dirty = false;
	for (i = 0; i < st->n_cqs; i++)
		que_cq_touch(st->cqs[i]);
	return CU_OK;
}

/* ---- invariants ------------------------------------------------------ */

static int check_limits(const que_state *st, const struct que_node *n,
    const char *kind, const char *name, cu_error *err)
{
	uint32_t fr;

	for (fr = 0; fr < n->ncells; fr++) {
		const struct que_cell *c = &n->cells[fr];
		const char *flv = st->flavors[st->fr_flavor[fr]]->name;
		const char *res = st->res_names[st->fr_res[fr]];

		if (c->usage < 0)
			return cu_error_set(err, CU_ERANGE,
			    "%s %s: negative usage of %s in flavor %s", kind,
			    name, res, flv);
		if (!n->parent && c->usage > c->subtree)
			return cu_error_set(err, CU_ERANGE,
			    "%s %s: usage %lld of %s in flavor %s exceeds its "
			    "quota %lld",
			    kind, name, (long long)c->usage, res, flv,
			    (long long)c->subtree);
		if (n->parent && c->q.has_borrowing_limit &&
		    c->usage > sat_add(c->subtree, c->q.borrowing_limit))
			return cu_error_set(err, CU_ERANGE,
			    "%s %s: usage %lld of %s in flavor %s exceeds "
			    "quota %lld + borrowingLimit %lld",
			    kind, name, (long long)c->usage, res, flv,
			    (long long)c->subtree,
			    (long long)c->q.borrowing_limit);
	}
	return CU_OK;
}

static int check_wl_place(const struct que_wl *wl, cu_error *err)
{
	const char *bad = NULL;

	switch (wl->where) {
	case QUE_WL_PENDING:
		if (!wl->cq || wl->heap_idx >= wl->cq->n_heap ||
		    wl->cq->heap[wl->heap_idx] != wl)
			bad = "not in its ClusterQueue heap";
		break;
	case QUE_WL_HEAD:
		bad = "left as a head between cycles";
		break;
	case QUE_WL_INADMISSIBLE:
	case QUE_WL_ADMITTED:
	case QUE_WL_EVICTING:
		if (!wl->cq || !wl->next)
			bad = "not in its ClusterQueue list";
		break;
	case QUE_WL_BLOCKED:
		if (wl->cq || !wl->next)
			bad = "blocked but routed";
		break;
	case QUE_WL_BACKOFF:
		if (!wl->cq)
			bad = "in backoff without a ClusterQueue";
		break;
	}
	if (bad)
		return cu_error_set(
		    err, CU_EINVAL, "workload %s: %s", wl->uid, bad);
	return CU_OK;
}

/* Invariants 1, 2 and 4, and 3 when `limits`. */
static int check_all(que_state *st, bool limits, cu_error *err)
{
	cu_map_iter it = CU_MAP_ITER_INIT;
	struct que_wl *iw;
	int64_t *sum = NULL;
	size_t i, j, counted = 0;
	uint32_t fr, nfr;
	int rc;

	rc = que_rebuild(st, err);
	if (rc)
		return rc;
	nfr = st->n_fr;
	sum = cu_calloc(nfr ? nfr : 1, sizeof(*sum));
	if (!sum)
		return cu_error_set(err, CU_ENOMEM,
		    "invariant check: out of "
		    "memory");
	for (i = 0; i < st->n_cqs; i++) {
		struct que_cq *cq = st->cqs[i];
		struct que_wl *wl = cq->admitted.head;
		size_t k;

		memset(sum, 0, nfr * sizeof(*sum));
		for (k = 0; k < cq->admitted.n; k++, wl = wl->next) {
			uint32_t p, r;

			if (wl->replaced)
				continue; /* holds nothing any more */
			for (p = 0; p < wl->n_podsets; p++)
				for (r = 0; r < wl->podsets[p].n_req; r++)
					if (wl->podsets[p].req[r].total > 0 &&
					    wl->podsets[p].fr[r] < nfr)
						sum[wl->podsets[p].fr[r]] +=
						    wl->podsets[p].req[r].total;
		}
		for (fr = 0; fr < nfr; fr++)
			if (que_node_usage(&cq->node, fr) != sum[fr]) {
				rc = cu_error_set(err, CU_EINVAL,
				    "clusterQueue %s: usage %lld of %s in "
				    "flavor %s, but its workloads use %lld",
				    cq->name,
				    (long long)que_node_usage(&cq->node, fr),
				    st->res_names[st->fr_res[fr]],
				    st->flavors[st->fr_flavor[fr]]->name,
				    (long long)sum[fr]);
				goto out;
			}
		if (limits && (rc = check_limits(st, &cq->node, "clusterQueue",
				   cq->name, err)) != CU_OK)
			goto out;
		for (j = 0; !cq->afs_dirty && j < cq->n_heap; j++) {
			if (j > 0 && (cq->admission_fair ? que_wl_before_afs
							 : que_wl_before)(
					 cq->heap[j], cq->heap[(j - 1) / 2])) {
				rc = cu_error_set(err, CU_EINVAL,
				    "clusterQueue %s: pending heap out of "
				    "order",
				    cq->name);
				goto out;
			}
		}
	}
	for (i = 0; i < st->n_cohorts; i++) {
		struct que_cohort *co = st->cohorts[i];

		memset(sum, 0, nfr * sizeof(*sum));
		for (j = 0; j < co->n_kids; j++)
			for (fr = 0; fr < nfr; fr++)
				sum[fr] += max64(
				    0, que_node_usage(&co->kids[j]->node, fr) -
					   que_node_local_quota(
					       &co->kids[j]->node, fr));
		for (j = 0; j < co->n_cqs; j++)
			for (fr = 0; fr < nfr; fr++)
				sum[fr] += max64(
				    0, que_node_usage(&co->cqs[j]->node, fr) -
					   que_node_local_quota(
					       &co->cqs[j]->node, fr));
		for (fr = 0; fr < nfr; fr++)
			if (que_node_usage(&co->node, fr) != sum[fr]) {
				rc = cu_error_set(err, CU_EINVAL,
				    "cohort %s: usage %lld of %s in flavor %s, "
				    "but its children store %lld there",
				    co->name,
				    (long long)que_node_usage(&co->node, fr),
				    st->res_names[st->fr_res[fr]],
				    st->flavors[st->fr_flavor[fr]]->name,
				    (long long)sum[fr]);
				goto out;
			}
		if (limits && (rc = check_limits(st, &co->node, "cohort",
				   co->name, err)) != CU_OK)
			goto out;
	}
	while (que_wl_map_next(&st->wl_index, &it, &iw)) {
		counted++;
		if (que_workload_get(st, iw->uid) != iw)
			rc = cu_error_set(err, CU_EINVAL,
			    "workload %s: not found by its uid", iw->uid);
		else
			rc = check_wl_place(iw, err);
		if (rc)
			goto out;
	}
	if (counted != que_wl_map_count(&st->wl_index))
		rc = cu_error_set(err, CU_EINVAL,
		    "%zu workloads indexed, %zu counted",
		    que_wl_map_count(&st->wl_index), counted);
out:
	cu_free(sum);
	return rc;
}

int que_check_invariants(que_state *st, cu_error *err)
{
	return check_all(st, true, err);
}

int que_check_structure(que_state *st, cu_error *err)
{
	return check_all(st, false, err);
}
