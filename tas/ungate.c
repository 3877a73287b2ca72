/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tas/ungate.c - actuation of a topology assignment: which domain a pod
 * of a given rank belongs to, and the nodeSelector that pins it there
 * when its kueue.x-k8s.io/topology scheduling gate is removed.
 */
#include <stdlib.h>

#include "tas/tas_int.h"

#define LABEL_JOB_INDEX "jobset.sigs.k8s.io/job-index"
#define LABEL_JS_REPLICAS "jobset.sigs.k8s.io/replicatedjob-replicas"

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

/* Label `key` of pod, else its annotation of that name [borrowed]. */
static const char *meta_value(const json_t *pod, const char *key)
{
	const json_t *md = json_object_get(pod, "metadata");
	const json_t *v = json_object_get(json_object_get(md, "labels"), key);

	if (!json_is_string(v))
		v = json_object_get(json_object_get(md, "annotations"), key);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

int64_t tas_pod_rank(
    const struct api_topology_assignment *a, const json_t *pod, int64_t index)
{
	const char *ji = meta_value(pod, LABEL_JOB_INDEX);
	const char *rs = meta_value(pod, LABEL_JS_REPLICAS);
	int64_t job, replicas, total = 0, single;
	size_t d;

	if (index < 0 || ji == NULL || rs == NULL)
		return index;
	job = strtoll(ji, NULL, 10);
	replicas = strtoll(rs, NULL, 10);
	if (replicas <= 0 || job < 0 || job >= replicas)
		return index;
	for (d = 0; d < a->n_domains; d++)
		total += a->domains[d].count;
	single = total / replicas;
	return index < single ? index + job * single : -1;
}
