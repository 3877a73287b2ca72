/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queues/hashes.c - Kueue's scheduling equivalence hashes
 * (SchedulingEquivalenceHashing): two pending Workloads are equivalent
 * when they ask for the same thing - per podSet its name, count, minCount,
 * per-pod requests (and the pods' own when quota counts others), node
 * selector, tolerations and required node affinity, and the Workload's
 * priority - whatever their names, namespaces and queues. Here: the
 * number of distinct shapes among a ClusterQueue's pending Workloads, active
 * (in the heap) and inadmissible (parked or backing off; all of them while the
 * ClusterQueue is inactive), for kueue_pending_scheduling_hashes. The hash is
 * cueue's own (64-bit FNV-1a over the shape); only the counts are Kueue's. Also
 * the switch of the other scheduling gate whose cost is in the cycle,
 * RecomputeAssignmentUponPreemptionTargetsOverlap.
 */
#include <stdlib.h>
#include <string.h>

#include "queues/queues_int.h"

#define FNV_OFFSET UINT64_C(14695981039346656037)
#define FNV_PRIME UINT64_C(1099511628211)

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= b[i];
		h *= FNV_PRIME;
	}
	return h;
}

static uint64_t mix_str(uint64_t h, const char *s)
{
	/* The terminating NUL separates fields. */
	return mix(h, s != NULL ? s : "", strlen(s != NULL ? s : "") + 1);
}

static uint64_t mix_i64(uint64_t h, int64_t v)
{
	return mix(h, &v, sizeof(v));
}

uint64_t que_wl_shape_hash(const que_state *st, const struct que_wl *wl)
{
	uint64_t h = mix_i64(FNV_OFFSET, wl->priority);
	uint32_t i, j, k, m;

	for (i = 0; i < wl->n_podsets; i++) {
		const struct que_podset *ps = &wl->podsets[i];

		h = mix_str(h, ps->name);
		h = mix_i64(h, ps->full_count);
		h = mix_i64(h, ps->min_count);
		for (j = 0; j < ps->n_spec_req; j++) {
			h = mix_str(h, st->res_names[ps->req[j].res]);
			h = mix_i64(h, ps->req[j].per_pod);
		}
		/* The pods' own requests, which topology placement reads,
		 * when quota counts others. */
		for (j = 0; j < ps->n_pod_req; j++) {
			h = mix_str(h, ps->pod_req[j].resource);
			h = mix_i64(h, ps->pod_req[j].per_pod);
		}
		for (j = 0; j < ps->n_selector; j++) {
			h = mix_str(h, ps->selector[j].key);
			h = mix_str(h, ps->selector[j].value);
		}
		for (j = 0; j < ps->n_tolerations; j++) {
			const struct que_toleration *t = &ps->tolerations[j];

			h = mix_str(h, t->key);
			h = mix_str(h, t->value);
			h = mix_i64(h, t->op);
			h = mix_i64(h, t->any_effect ? -1 : (int64_t)t->effect);
		}
		for (j = 0; j < ps->n_terms; j++) {
			h = mix_i64(h, (int64_t)j);
			for (k = 0; k < ps->terms[j].n_reqs; k++) {
				const struct que_sel_req *r =
				    &ps->terms[j].reqs[k];

				h = mix_str(h, r->key);
				h = mix_i64(h, r->op);
				for (m = 0; m < r->n_values; m++)
					h = mix_str(h, r->values[m]);
			}
		}
	}
	return h;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static size_t distinct(uint64_t *v, size_t n)
{
	size_t i, d = n > 0;

	qsort(v, n, sizeof(*v), cmp_u64);
	for (i = 1; i < n; i++)
		d += v[i] != v[i - 1];
	return d;
}

int que_cq_scheduling_hashes(que_state *st, const struct que_cq *cq,
    size_t *active, size_t *inadmissible, cu_error *err)
{
	size_t n_act = 0, n_in = 0, i, cap;
	uint64_t *act, *in;
	const struct que_wl *w;
	int rc;

	*active = *inadmissible = 0;
	rc = que_rebuild(st, err);

	if (rc != CU_OK)
		return rc;
	cap = cq->n_heap + cq->inadmissible.n + st->n_backoff + 1;
	act = cu_malloc(cap * sizeof(*act));
	in = cu_malloc(cap * sizeof(*in));
	if (act == NULL || in == NULL) {
		cu_free(act);
		cu_free(in);
		return cu_error_set(err, CU_ENOMEM, "hashes: out of memory");
	}
	for (i = 0; i < cq->n_heap; i++) {
		uint64_t h = que_wl_shape_hash(st, cq->heap[i]);

		if (cq->active)
			act[n_act++] = h;
		else
			in[n_in++] = h;
	}
	for (w = cq->inadmissible.head, i = 0;
	     w != NULL && i < cq->inadmissible.n; w = w->next, i++)
		in[n_in++] = que_wl_shape_hash(st, w);
	for (i = 0; i < st->n_backoff; i++)
		if (st->backoff[i]->cq == cq)
			in[n_in++] = que_wl_shape_hash(st, st->backoff[i]);
	*active = distinct(act, n_act);
	*inadmissible = distinct(in, n_in);
	cu_free(act);
	cu_free(in);
	return CU_OK;
}

void que_recompute_overlap_set(que_state *st, bool on)
{
	st->no_recompute_overlap = !on;
}

bool que_recompute_overlap(const que_state *st)
{
	return !st->no_recompute_overlap;
}
