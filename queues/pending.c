/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queues/pending.c - the pending Workloads of a ClusterQueue in the order
 * its scheduler would take them, with their positions in the ClusterQueue
 * and in their LocalQueue: what Kueue's visibility API
 * (visibility.kueue.x-k8s.io pendingworkloads) lists.
 *
 * A ClusterQueue's pending Workloads are its heap (PENDING), its parked
 * list (INADMISSIBLE) and those of its Workloads that wait out a backoff
 * (BACKOFF, in the state-wide backoff heap). The heap is walked in order
 * without being copied or changed: a small frontier heap of heap indices
 * (a node's children enter when it leaves), O(k log k) for k items. The
 * parked and backing-off ones have no order: their pointers are heapified
 * (O(m)) and popped lazily. The two streams are merged under the heap's
 * own order (que_wl_before, or que_wl_before_afs with admission fair
 * sharing: LocalQueue usage first); a heap whose order is stale
 * (afs_dirty) is taken as unordered entries instead.
 */
#include <string.h>

#include "queues/queues_int.h"

/* The walk over one ClusterQueue. */
struct walk {
	const struct que_cq *cq;
	/* The heap's order: que_wl_before, or que_wl_before_afs in a
	 * ClusterQueue with admission fair sharing. */
	bool (*before)(const struct que_wl *, const struct que_wl *);
	bool use_heap; /* walk cq->heap in place (it is a heap now) */
	size_t *front; /* owned; indices into cq->heap, a heap by their wl */
	size_t n_front, cap_front;
	struct que_wl **rest; /* owned; parked and backing-off, a heap */
	size_t n_rest;
};

void que_pending_visit(const que_state *st, const struct que_cq *cq,
    void (*fn)(const struct que_wl *wl, bool heap, void *payload),
    void *payload)
{
	const struct que_wl *p = cq->inadmissible.head;
	size_t i;

	for (i = 0; i < cq->n_heap; i++)
		fn(cq->heap[i], true, payload);
	for (i = 0; i < cq->inadmissible.n; i++, p = p->next)
		fn(p, false, payload);
	for (i = 0; i < st->n_backoff; i++)
		if (st->backoff[i]->cq == cq)
			fn(st->backoff[i], false, payload);
}

static bool front_less(const struct walk *w, size_t a, size_t b)
{
	return w->before(w->cq->heap[a], w->cq->heap[b]);
}

static void front_up(struct walk *w, size_t i)
{
	size_t v = w->front[i];

	while (i > 0) {
		size_t p = (i - 1) / 2;

		if (!front_less(w, v, w->front[p]))
			break;
		w->front[i] = w->front[p];
		i = p;
	}
	w->front[i] = v;
}

static void front_down(struct walk *w, size_t i)
{
	size_t v = w->front[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= w->n_front)
			break;
		if (c + 1 < w->n_front &&
		    front_less(w, w->front[c + 1], w->front[c]))
			c++;
		if (!front_less(w, w->front[c], v))
			break;
		w->front[i] = w->front[c];
		i = c;
	}
	w->front[i] = v;
}

static int front_push(struct walk *w, size_t idx)
{
	if (!w->use_heap || idx >= w->cq->n_heap)
		return CU_OK;
	if (cu_grow((void **)&w->front, &w->cap_front, w->n_front + 1,
		sizeof(*w->front)) != CU_OK)
		return CU_ENOMEM;
	w->front[w->n_front++] = idx;
	front_up(w, w->n_front - 1);
	return CU_OK;
}

static void rest_down(struct walk *w, size_t i)
{
	struct que_wl *v = w->rest[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= w->n_rest)
			break;
		if (c + 1 < w->n_rest && w->before(w->rest[c + 1], w->rest[c]))
			c++;
		if (!w->before(w->rest[c], v))
			break;
		w->rest[i] = w->rest[c];
		i = c;
	}
	w->rest[i] = v;
}

static void walk_dispose(struct walk *w)
{
	cu_free(w->front);
	cu_free(w->rest);
	memset(w, 0, sizeof(*w));
}

static int walk_begin(struct que_state *st, const struct que_cq *cq,
    struct walk *w, cu_error *err)
{
	size_t n = cq->inadmissible.n, i;
	const struct que_wl *p;

	memset(w, 0, sizeof(*w));
	w->cq = cq;
	w->before = cq->admission_fair ? que_wl_before_afs : que_wl_before;
	/* A LocalQueue's usage changed since the heap was last ordered
	 * (afs_dirty): it is re-heapified before the next pop, and until
	 * then its entries are taken as unordered ones. */
	w->use_heap = !cq->afs_dirty;
	if (!w->use_heap)
		n += cq->n_heap;
	for (i = 0; i < st->n_backoff; i++)
		if (st->backoff[i]->cq == cq)
			n++;
	if (n > 0 && (w->rest = cu_calloc(n, sizeof(*w->rest))) == NULL)
		return cu_error_set(err, CU_ENOMEM, "pending: out of memory");
	p = cq->inadmissible.head;
	for (i = 0; i < cq->inadmissible.n; i++, p = p->next)
		w->rest[w->n_rest++] = (struct que_wl *)p;
	for (i = 0; i < st->n_backoff; i++)
		if (st->backoff[i]->cq == cq)
			w->rest[w->n_rest++] = st->backoff[i];
	for (i = 0; !w->use_heap && i < cq->n_heap; i++)
		w->rest[w->n_rest++] = cq->heap[i];
	for (i = w->n_rest / 2; i-- > 0;)
		rest_down(w, i);
	if (front_push(w, 0) != CU_OK) {
		walk_dispose(w);
		return cu_error_set(err, CU_ENOMEM, "pending: out of memory");
	}
	return CU_OK;
}

/* The next Workload in order into *out (NULL at the end). CU_ENOMEM. */
static int walk_next(struct walk *w, const struct que_wl **out)
{
	const struct que_wl *h =
	    w->n_front > 0 ? w->cq->heap[w->front[0]] : NULL;
	const struct que_wl *r = w->n_rest > 0 ? w->rest[0] : NULL;

	*out = NULL;
	if (h == NULL && r == NULL)
		return CU_OK;
	if (h != NULL && (r == NULL || w->before(h, r))) {
		size_t idx = w->front[0];

		w->front[0] = w->front[--w->n_front];
		if (w->n_front > 0)
			front_down(w, 0);
		if (front_push(w, 2 * idx + 1) != CU_OK ||
		    front_push(w, 2 * idx + 2) != CU_OK)
			return CU_ENOMEM;
		*out = h;
		return CU_OK;
	}
	w->rest[0] = w->rest[--w->n_rest];
	if (w->n_rest > 0)
		rest_down(w, 0);
	*out = r;
	return CU_OK;
}

/* ---- positions in LocalQueues ------------------------------------------ */

/* How many Workloads of one LocalQueue were seen so far. */
struct lq_count {
	const char *key[2]; /* {ns, queue name} [borrowed from a Workload] */
	int32_t n;
};

static void counts_dispose(cu_map *m)
{
	cu_map_iter it = CU_MAP_ITER_INIT;
	const void *k;
	void *v;

	while (cu_map_next(m, &it, &k, &v))
		cu_free(v);
	cu_map_dispose(m);
}

/* The position of wl in its LocalQueue, counting it. CU_ENOMEM. */
static int lq_position(cu_map *m, const struct que_wl *wl, int32_t *pos)
{
	const char *key[2] = {wl->ns, wl->queue_name ? wl->queue_name : ""};
	struct lq_count *c = cu_map_get(m, key);

	if (c == NULL) {
		if ((c = cu_calloc(1, sizeof(*c))) == NULL)
			return CU_ENOMEM;
		c->key[0] = wl->ns;
		c->key[1] = key[1];
		if (cu_map_put(m, c->key, c, NULL) != CU_OK) {
			cu_free(c);
			return CU_ENOMEM;
		}
	}
	*pos = c->n++;
	return CU_OK;
}

/* ---- listings -------------------------------------------------------- */

static void bound(int64_t *offset, int64_t *limit)
{
	if (*limit < 0)
		*limit = 0;
	if (*limit > QUE_PENDING_MAX_LIMIT)
		*limit = QUE_PENDING_MAX_LIMIT;
	if (*offset < 0)
		*offset = 0;
	/* Positions are int32: nothing lies beyond (and offset + limit
	 * cannot overflow). */
	if (*offset > INT32_MAX)
		*offset = INT32_MAX;
}

static int add_item(struct que_pending_item **out, size_t *n, size_t *cap,
    const struct que_wl *wl, int32_t pos_cq, int32_t pos_lq)
{
	if (cu_grow((void **)out, cap, *n + 1, sizeof(**out)) != CU_OK)
		return CU_ENOMEM;
	(*out)[*n].wl = wl;
	(*out)[*n].pos_cq = pos_cq;
	(*out)[*n].pos_lq = pos_lq;
	(*n)++;
	return CU_OK;
}

static int ready(que_state *st, cu_error *err)
{
	return st->dirty ? que_rebuild(st, err) : CU_OK;
}

int que_pending_cq(que_state *st, const char *cq_name, int64_t offset,
    int64_t limit, struct que_pending_item **out, size_t *n, cu_error *err)
{
	struct que_cq *cq;
	struct walk w;
	cu_map counts;
	size_t cap = 0;
	int64_t i;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = ready(st, err)) != CU_OK)
		return rc;
	if (cq_name == NULL || (cq = que_cq_get(st, cq_name)) == NULL)
		return cu_error_set(err, CU_ENOTFOUND,
		    "clusterqueue \"%s\" not found", cq_name ? cq_name : "");
	bound(&offset, &limit);
	if ((rc = walk_begin(st, cq, &w, err)) != CU_OK)
		return rc;
	cu_map_init_parts(&counts, 2);
	/* Positions in LocalQueues count every Workload before the page,
	 * so the walk starts at the top. */
	for (i = 0; rc == CU_OK && i < offset + limit && i <= INT32_MAX; i++) {
		const struct que_wl *wl;
		int32_t pos_lq = 0;

		if ((rc = walk_next(&w, &wl)) != CU_OK || wl == NULL)
			break;
		rc = lq_position(&counts, wl, &pos_lq);
		if (rc == CU_OK && i >= offset)
			rc = add_item(out, n, &cap, wl, (int32_t)i, pos_lq);
	}
	counts_dispose(&counts);
	walk_dispose(&w);
	if (rc != CU_OK) {
		cu_free(*out);
		*out = NULL;
		*n = 0;
		return cu_error_set(err, CU_ENOMEM, "pending: out of memory");
	}
	return CU_OK;
}

int que_pending_lq(que_state *st, const char *ns, const char *name,
    int64_t offset, int64_t limit, struct que_pending_item **out, size_t *n,
    cu_error *err)
{
	struct que_lq *lq;
	struct que_cq *cq;
	struct walk w;
	size_t cap = 0;
	int64_t i, skipped = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = ready(st, err)) != CU_OK)
		return rc;
	if (ns == NULL || name == NULL ||
	    (lq = que_lq_get(st, ns, name)) == NULL)
		return cu_error_set(err, CU_ENOTFOUND,
		    "localqueue \"%s\" not found", name ? name : "");
	bound(&offset, &limit);
	/* A LocalQueue whose ClusterQueue does not exist lists nothing. */
	if (lq->cq_name == NULL || (cq = que_cq_get(st, lq->cq_name)) == NULL)
		return CU_OK;
	if ((rc = walk_begin(st, cq, &w, err)) != CU_OK)
		return rc;
	for (i = 0; rc == CU_OK && (int64_t)*n < limit && i <= INT32_MAX; i++) {
		const struct que_wl *wl;

		if ((rc = walk_next(&w, &wl)) != CU_OK || wl == NULL)
			break;
		if (wl->queue_name == NULL || strcmp(wl->ns, ns) != 0 ||
		    strcmp(wl->queue_name, name) != 0)
			continue;
		if (skipped < offset) {
			skipped++;
			continue;
		}
		rc = add_item(out, n, &cap, wl, (int32_t)i,
		    (int32_t)((int64_t)*n + offset));
	}
	walk_dispose(&w);
	if (rc != CU_OK) {
		cu_free(*out);
		*out = NULL;
		*n = 0;
		return cu_error_set(err, CU_ENOMEM, "pending: out of memory");
	}
	return CU_OK;
}
