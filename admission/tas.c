/* SPDX-License-Identifier: Apache-2.0 */
/*
 * admission/tas.c - topology-aware scheduling in the preemption search
 * (Kueue's workloadFits with TAS requests): the preemptor's TAS podSets
 * must be placed in their flavors' topologies once the candidates
 * removed so far have released their topology usage. The engine only
 * asks the hook (queues.h que_tas_hook.check_without); the topology
 * itself is the caller's.
 */
#include <string.h>

#include "admission/admission_int.h"

void adm_tas_fit_init(que_state *st, const struct que_wl *wl,
    const struct adm_assignment *a, struct adm_tas_fit *f)
{
	const struct que_tas_hook *h = que_tas_hook(st);
	size_t i, j, off = 0;

	memset(f, 0, sizeof(*f));
	if (h == NULL || h->check_without == NULL)
		return;
	f->h = h;
	f->wl = wl;
	for (i = 0; i < wl->n_podsets && i < ADM_MAX_PODSETS; i++) {
		const struct que_podset *ps = &wl->podsets[i];

		for (j = 0; j < ps->n_req && f->flv[i] == NULL; j++)
			if (a->frs[off + j] != UINT32_MAX)
				f->flv[i] = que_flavor_by_id(
				    st, que_fr_flavor(st, a->frs[off + j]));
		f->counts[i] = a->counts[i];
		off += ps->n_req;
	}
	f->n = i;
}

void adm_tas_fit_dispose(struct adm_tas_fit *f)
{
	cu_free(f->gone);
	memset(f, 0, sizeof(*f));
}

bool adm_tas_fits(
    struct adm_tas_fit *f, const struct adm_targets *t, size_t skip)
{
	char msg[256];
	size_t i, n = 0;

	if (f == NULL || f->h == NULL)
		return true;
	if (cu_grow((void **)&f->gone, &f->cap_gone, t->n ? t->n : 1,
		sizeof(*f->gone)))
		return false;
	for (i = 0; i < t->n; i++)
		if (i != skip)
			f->gone[n++] = t->v[i].wl;
	for (i = 0; i < f->n; i++) {
		if (f->flv[i] == NULL || f->counts[i] < 1)
			continue;
		if (f->h->check_without(f->h->ctx, f->wl, i, f->flv[i],
			f->counts[i], f->gone, n, false, msg, sizeof(msg)) != 0)
			return false;
	}
	return true;
}
