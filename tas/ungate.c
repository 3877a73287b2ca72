/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tas/ungate.c - actuation of a topology assignment: which domain a pod
 * of a given rank belongs to, and the nodeSelector that pins it there
 * when its kueue.x-k8s.io/topology scheduling gate is removed.
 */
#include "tas/tas_int.h"

ssize_t tas_rank_domain(const struct api_topology_assignment *a, int64_t rank)
{
	int64_t upto = 0;
	size_t i;

	if (rank < 0)
		return -1;
	for (i = 0; i < a->n_domains; i++) {
		upto += a->domains[i].count;
		if (rank < upto)
			return (ssize_t)i;
	}
	return -1;
}

int tas_domain_selector(const struct api_topology_assignment *a, size_t d,
    struct api_strmap *sel, cu_error *err)
{
	size_t k;
	int rc;

	if (d >= a->n_domains)
		return cu_error_set(
		    err, CU_ERANGE, "topology assignment: no domain %zu", d);
	for (k = 0; k < a->levels.n; k++)
		if ((rc = api_strmap_set(sel, a->levels.items[k],
			 a->domains[d].values[k], err)) != CU_OK)
			return rc;
	return CU_OK;
}
