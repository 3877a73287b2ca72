/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queues/util.c - containers used by the queueing model: intrusive
 * workload lists and the binary heaps (per-CQ pending heap, state-wide
 * backoff heap). Heaps keep each workload's heap_idx current so that
 * removal from the middle is O(log n). The indexes are lib/cu.h maps.
 */
#include <string.h>

#include "queues/queues_int.h"

/* Circular doubly linked list; head->prev is the tail, so push is O(1)
 * and keeps insertion order (inadmissible workloads requeue in order). */
void que_wlist_push(struct que_wlist *l, struct que_wl *wl)
{
	if (!l->head) {
		wl->prev = wl->next = wl;
		l->head = wl;
	} else {
		wl->next = l->head;
		wl->prev = l->head->prev;
		l->head->prev->next = wl;
		l->head->prev = wl;
	}
	l->n++;
	if (wl->cq != NULL && l == &wl->cq->inadmissible)
		wl->cq->parked_mix += que_wl_mix(wl);
}

void que_wlist_del(struct que_wlist *l, struct que_wl *wl)
{
	if (wl->next == wl) {
		l->head = NULL;
	} else {
		wl->prev->next = wl->next;
		wl->next->prev = wl->prev;
		if (l->head == wl)
			l->head = wl->next;
	}
	wl->prev = wl->next = NULL;
	l->n--;
	if (wl->cq != NULL && l == &wl->cq->inadmissible)
		wl->cq->parked_mix -= que_wl_mix(wl);
}

bool que_wl_before(const struct que_wl *a, const struct que_wl *b)
{
	/* A preemptor waiting for its victims keeps its place so that the
	 * quota they release is not taken by the next head (Kueue #13662). */
	if (a->sticky != b->sticky)
		return a->sticky;
	if (a->priority != b->priority)
		return a->priority > b->priority;
	if (a->queue_ts != b->queue_ts)
		return a->queue_ts < b->queue_ts;
	return strcmp(a->uid, b->uid) < 0;
}

bool que_wl_before_afs(const struct que_wl *a, const struct que_wl *b)
{
	double ua = a->lq ? a->lq->afs_usage : 0.0;
	double ub = b->lq ? b->lq->afs_usage : 0.0;

	if (ua != ub)
		return ua < ub;
	return que_wl_before(a, b);
}

typedef bool (*heap_less)(const struct que_wl *, const struct que_wl *);

static void heap_set(struct que_wl **h, size_t i, struct que_wl *wl)
{
	h[i] = wl;
	wl->heap_idx = i;
}

/* always inlined: each caller's comparator is a constant. */
__attribute__((always_inline)) static inline void heap_up(
    struct que_wl **h, size_t i, heap_less less)
{
	struct que_wl *wl = h[i];

	while (i > 0) {
		size_t p = (i - 1) / 2;

		if (!less(wl, h[p]))
			break;
		heap_set(h, i, h[p]);
		i = p;
	}
	heap_set(h, i, wl);
}

/* always inlined: each caller's comparator is a constant. */
__attribute__((always_inline)) static inline void heap_down(
    struct que_wl **h, size_t n, size_t i, heap_less less)
{
	struct que_wl *wl = h[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && less(h[c + 1], h[c]))
			c++;
		if (!less(h[c], wl))
			break;
		heap_set(h, i, h[c]);
		i = c;
	}
	heap_set(h, i, wl);
}

/* always inlined: each caller's comparator is a constant. */
__attribute__((always_inline)) static inline void heap_del(
    struct que_wl **h, size_t *n, size_t i, heap_less less)
{
	struct que_wl *last = h[--*n];

	if (i == *n)
		return;
	heap_set(h, i, last);
	heap_down(h, *n, i, less);
	heap_up(h, i, less);
}

/*
 * cq's heap is ordered classically unless it opts in to admission fair
 * sharing. The classical bodies below are exactly what they were before
 * admission fair sharing (the comparator a constant the compiler
 * inlines); the other order lives in functions of its own, kept out of
 * line so that the classical path pays one test per operation.
 */
__attribute__((noinline)) static void afs_push(struct que_cq *cq)
{
	heap_up(cq->heap, cq->n_heap - 1, que_wl_before_afs);
}

__attribute__((noinline)) static void afs_del(struct que_cq *cq, size_t i)
{
	heap_del(cq->heap, &cq->n_heap, i, que_wl_before_afs);
}

void que_heap_push(struct que_cq *cq, struct que_wl *wl)
{
	CU_ASSERT(cq->n_heap < cq->cap_heap);
	heap_set(cq->heap, cq->n_heap, wl);
	cq->n_heap++;
	if (cq->admission_fair) {
		afs_push(cq);
		return;
	}
	heap_up(cq->heap, cq->n_heap - 1, que_wl_before);
}

void que_heap_remove(struct que_cq *cq, struct que_wl *wl)
{
	CU_ASSERT(wl->heap_idx < cq->n_heap && cq->heap[wl->heap_idx] == wl);
	if (cq->admission_fair) {
		afs_del(cq, wl->heap_idx);
		return;
	}
	heap_del(cq->heap, &cq->n_heap, wl->heap_idx, que_wl_before);
}

/* Floyd's bottom-up heapify: O(n), after keys of many entries changed. */
__attribute__((noinline)) void que_heap_reorder(struct que_cq *cq)
{
	size_t i;

	cq->afs_dirty = false;
	for (i = cq->n_heap / 2; i-- > 0;)
		heap_down(cq->heap, cq->n_heap, i,
		    cq->admission_fair ? que_wl_before_afs : que_wl_before);
}

struct que_wl *que_heap_pop(struct que_cq *cq)
{
	struct que_wl *top;

	if (cq->afs_dirty || cq->admission_fair) {
		if (cq->afs_dirty)
			que_heap_reorder(cq);
		if (cq->admission_fair) {
			if (cq->n_heap == 0)
				return NULL;
			top = cq->heap[0];
			afs_del(cq, 0);
			return top;
		}
	}
	if (cq->n_heap == 0)
		return NULL;
	top = cq->heap[0];
	heap_del(cq->heap, &cq->n_heap, 0, que_wl_before);
	return top;
}

static bool backoff_less(const struct que_wl *a, const struct que_wl *b)
{
	return a->requeue_at < b->requeue_at;
}

void que_backoff_push(struct que_state *st, struct que_wl *wl)
{
	CU_ASSERT(st->n_backoff < st->cap_backoff);
	heap_set(st->backoff, st->n_backoff, wl);
	st->n_backoff++;
	if (wl->cq)
		wl->cq->n_backoff++;
	que_cq_touch(wl->cq);
	heap_up(st->backoff, st->n_backoff - 1, backoff_less);
}

void que_backoff_remove(struct que_state *st, struct que_wl *wl)
{
	CU_ASSERT(
	    wl->heap_idx < st->n_backoff && st->backoff[wl->heap_idx] == wl);
	heap_del(st->backoff, &st->n_backoff, wl->heap_idx, backoff_less);
	if (wl->cq)
		wl->cq->n_backoff--;
	que_cq_touch(wl->cq);
}
