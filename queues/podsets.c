/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queues/podsets.c - what a podset asks of quota beyond its containers:
 * the implicit `pods` request (one unit per pod when the ClusterQueue
 * covers `pods`, as Kueue's flavor assigner adds it) and the admitted
 * count of a partially admitted podset (minCount), with the request
 * totals that follow from it.
 */
#include <string.h>

#include "queues/queues_int.h"

bool que_spec_requests_pods(const struct que_podset_spec *ps)
{
	size_t j;

	for (j = 0; j < ps->n_requests; j++)
		if (strcmp(ps->requests[j].resource, "pods") == 0)
			return true;
	return false;
}

static bool covers(const struct que_cq *cq, uint32_t res)
{
	size_t g, k;

	for (g = 0; cq && g < cq->n_groups; g++)
		for (k = 0; k < cq->groups[g].n_res; k++)
			if (cq->groups[g].res[k] == res)
				return true;
	return false;
}

void que_wl_sync_pods(struct que_wl *wl)
{
	uint32_t i;

	que_cq_touch(wl->cq);
	if (wl->where == QUE_WL_ADMITTED || wl->where == QUE_WL_EVICTING)
		return;
	for (i = 0; i < wl->n_podsets; i++) {
		struct que_podset *ps = &wl->podsets[i];

		if (!ps->pods_slot)
			continue;
		ps->fr[ps->n_spec_req] = UINT32_MAX;
		ps->n_req =
		    ps->n_spec_req +
		    (covers(wl->cq, ps->req[ps->n_spec_req].res) ? 1 : 0);
	}
}

void que_wl_set_counts(struct que_wl *wl, const int32_t *counts)
{
	uint32_t i, j;

	que_cq_touch(wl->cq);
	for (i = 0; i < wl->n_podsets; i++) {
		struct que_podset *ps = &wl->podsets[i];

		ps->count = counts ? counts[i] : ps->full_count;
		for (j = 0; j < ps->n_spec_req + (ps->pods_slot ? 1 : 0); j++)
			if (__builtin_mul_overflow(ps->req[j].per_pod,
				(int64_t)ps->count, &ps->req[j].total))
				ps->req[j].total = INT64_MAX;
	}
}

void que_admit_counts(que_state *st, struct que_wl *wl, const uint32_t *frs,
    const int32_t *counts, int64_t now_ns)
{
	que_wl_set_counts(wl, counts);
	que_admit(st, wl, frs, now_ns);
}

int que_workload_adopt_counts(que_state *st, const char *uid,
    const char *cq_name, const uint32_t *frs, const int32_t *counts,
    int64_t admitted_ns, cu_error *err)
{
	struct que_wl *wl;
	uint32_t *cur = NULL;
	size_t n = 0, k = 0, o = 0;
	uint32_t i, j;
	int rc;

	/* Routing must not re-sync the slots chosen below. */
	rc = que_adopt_begin(st, uid, &wl, err);
	if (rc)
		return rc;
	for (i = 0; i < wl->n_podsets; i++) {
		if (counts &&
		    (counts[i] < 0 || counts[i] > wl->podsets[i].full_count))
			return cu_error_set(err, CU_EINVAL,
			    "workload %s: podset %s: admitted count %d out of "
			    "range",
			    uid, wl->podsets[i].name, (int)counts[i]);
		n += wl->podsets[i].n_spec_req + 1;
	}
	cur = cu_calloc(n + 1, sizeof(*cur));
	if (!cur)
		return cu_error_set(
		    err, CU_ENOMEM, "workload %s: out of memory", uid);
	/* Recorded layout -> the model's: a pods slot with no flavor is not
	 * counted. */
	for (i = 0; i < wl->n_podsets; i++) {
		struct que_podset *ps = &wl->podsets[i];

		for (j = 0; j < ps->n_spec_req; j++)
			cur[o++] = frs[k++];
		ps->n_req = ps->n_spec_req;
		if (ps->pods_slot && frs[k++] != UINT32_MAX) {
			cur[o++] = frs[k - 1];
			ps->n_req++;
		}
	}
	que_wl_set_counts(wl, counts);
	rc = que_workload_adopt(st, uid, cq_name, cur, admitted_ns, err);
	if (rc) {
		que_wl_set_counts(wl, NULL);
		que_wl_sync_pods(wl);
	}
	cu_free(cur);
	return rc;
}

int que_workload_set_counts(
    que_state *st, const char *uid, const int32_t *counts, cu_error *err)
{
	struct que_wl *wl = que_workload_get(st, uid);
	uint32_t i;

	if (!wl)
		return cu_error_set(
		    err, CU_ENOTFOUND, "workload %s not found", uid);
	if (wl->where != QUE_WL_ADMITTED && wl->where != QUE_WL_EVICTING)
		return cu_error_set(
		    err, CU_EINVAL, "workload %s does not hold quota", uid);
	for (i = 0; i < wl->n_podsets; i++)
		if (counts[i] < 0 || counts[i] > wl->podsets[i].full_count)
			return cu_error_set(err, CU_EINVAL,
			    "workload %s: podset %s: admitted count %d out of "
			    "range",
			    uid, wl->podsets[i].name, (int)counts[i]);
	que_wl_remove_usage(wl);
	que_wl_set_counts(wl, counts);
	que_wl_add_usage(wl);
	que_capacity_freed(wl->cq);
	return CU_OK;
}
