/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tas/ungate.c - actuation of a topology assignment: which domain a pod
 * of a given rank belongs to, the nodeSelector that pins it there when
 * its kueue.x-k8s.io/topology scheduling gate is removed, and the
 * ungater's plan: which gated pods of a placed podSet go to which
 * domain, in which order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tas/tas_int.h"

#define LABEL_COMPLETION_INDEX "batch.kubernetes.io/job-completion-index"
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

/* Label `key` of m, else its annotation of that name [borrowed]. */
static const char *meta_value(const struct api_meta *m, const char *key)
{
	const char *v = api_strmap_get(&m->labels, key);

	return v != NULL ? v : api_strmap_get(&m->annotations, key);
}

int64_t tas_pod_index(const struct api_meta *m)
{
	const char *idx = meta_value(m, LABEL_COMPLETION_INDEX);

	return idx != NULL ? strtoll(idx, NULL, 10) : -1;
}

int64_t tas_pod_rank(const struct api_topology_assignment *a,
    const struct api_meta *m, int64_t index)
{
	const char *ji = meta_value(m, LABEL_JOB_INDEX);
	const char *rs = meta_value(m, LABEL_JS_REPLICAS);
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

ssize_t tas_selector_domain(
    const struct api_topology_assignment *a, const struct api_strmap *sel)
{
	size_t d, l;

	for (d = 0; d < a->n_domains; d++) {
		for (l = 0; l < a->levels.n; l++) {
			const char *v = api_strmap_get(sel, a->levels.items[l]);

			if (v == NULL ||
			    strcmp(v, a->domains[d].values[l]) != 0)
				break;
		}
		if (l == a->levels.n)
			return (ssize_t)d;
	}
	return -1;
}

static int cmp_ungate(const void *x, const void *y)
{
	const struct tas_ungate_pod *a = x, *b = y;
	int r;

	if (a->gated != b->gated)
		return a->gated ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->created_ns != b->created_ns)
		return a->created_ns < b->created_ns ? -1 : 1;
	r = strcmp(a->name ? a->name : "", b->name ? b->name : "");
	return r;
}

int tas_ungate_plan(const struct api_topology_assignment *a,
    struct tas_ungate_pod *pods, size_t n, cu_error *err)
{
	int64_t *used = cu_calloc(a->n_domains + 1, sizeof(*used));
	size_t i, k;

	if (used == NULL)
		return cu_error_set(err, CU_ENOMEM, "ungate: out of memory");
	for (i = 0; i < n; i++) {
		pods[i].domain = -1;
		if (!pods[i].gated && pods[i].selector != NULL) {
			ssize_t d = tas_selector_domain(a, pods[i].selector);

			if (d >= 0)
				used[d]++;
		}
	}
	if (n > 1)
		qsort(pods, n, sizeof(*pods), cmp_ungate);
	for (i = 0; i < n && pods[i].gated; i++) {
		ssize_t d = -1;

		if (pods[i].rank >= 0) {
			d = tas_rank_domain(a, pods[i].rank);
			if (d >= 0 && used[d] >= a->domains[d].count)
				d = -1;
		}
		for (k = 0; d < 0 && k < a->n_domains; k++)
			if (used[k] < a->domains[k].count)
				d = (ssize_t)k;
		if (d < 0)
			break; /* more gated pods than the assignment */
		used[d]++;
		pods[i].domain = d;
	}
	cu_free(used);
	return CU_OK;
}

bool tas_host_stray(const struct api_topology_assignment *a, const char *host)
{
	size_t nl = a->levels.n, d;

	if (nl == 0 || strcmp(a->levels.items[nl - 1], TAS_HOSTNAME_LABEL) != 0)
		return false;
	for (d = 0; d < a->n_domains; d++)
		if (strcmp(a->domains[d].values[nl - 1], host) == 0)
			return false;
	return true;
}

/* ---- node failures: the Workload's status.unhealthyNodes -------------- */

static bool listed_has(const struct api_strlist *l, const char *node)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->items[i], node) == 0)
			return true;
	return false;
}

enum tas_failed_action tas_node_failed(
    const struct api_strlist *listed, const char *node, char *msg, size_t len)
{
	size_t at, i;

	if (listed_has(listed, node))
		return TAS_FAILED_REPLACE;
	if (listed->n == 0)
		return TAS_FAILED_RECORD;
	/* Kueue: a second failed node evicts the Workload */
	at = (size_t)snprintf(msg, len,
	    "Workload eviction triggered due to multiple TAS assigned node "
	    "failures, including: ");
	for (i = 0; i < listed->n && at < len; i++)
		at += (size_t)snprintf(
		    msg + at, len - at, "%s, ", listed->items[i]);
	if (at < len)
		snprintf(msg + at, len - at, "%s", node);
	return TAS_FAILED_EVICT;
}

enum tas_failed_action tas_node_failed_pod_owned(
    const struct api_strlist *listed, const struct api_strlist *kept,
    const char *node, char *msg, size_t len)
{
	if (listed_has(listed, node))
		return TAS_FAILED_KEEP;
	if (listed_has(kept, node))
		return TAS_FAILED_KEPT;
	return tas_node_failed(listed, node, msg, len);
}

bool tas_node_recovered(const struct api_strlist *listed, const char *node,
    struct api_strlist *out, bool *nomem)
{
	size_t i;

	memset(out, 0, sizeof(*out));
	*nomem = false;
	if (!listed_has(listed, node))
		return false;
	out->items = cu_calloc(listed->n, sizeof(*out->items));
	for (i = 0; out->items != NULL && i < listed->n; i++) {
		if (strcmp(listed->items[i], node) == 0)
			continue;
		if ((out->items[out->n] = cu_strdup(listed->items[i])) == NULL)
			break;
		out->n++;
	}
	if (out->items == NULL || i < listed->n) {
		api_strlist_dispose(out);
		*nomem = true;
		return false;
	}
	return true;
}
