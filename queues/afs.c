/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queues/afs.c - the arithmetic of admission fair sharing (Kueue KEP
 * 4136): the decay of a LocalQueue's consumed resources at each sample
 * and the usage that orders its workloads. Pure: the caller keeps the
 * consumed amounts, passes the elapsed time and sets the result with
 * que_lq_set_afs().
 */
#include <math.h>

#include "queues/queues_int.h"

double que_afs_alpha(double elapsed_s, double half_life_s)
{
	if (half_life_s <= 0.0)
		return 0.0;
	if (elapsed_s <= 0.0)
		return 0.0;
	return 1.0 - pow(0.5, elapsed_s / half_life_s);
}

void que_afs_decay(double *consumed, const double *live, size_t n,
    double elapsed_s, double half_life_s)
{
	double alpha = que_afs_alpha(elapsed_s, half_life_s);
	size_t i;

	for (i = 0; i < n; i++)
		consumed[i] = consumed[i] * (1.0 - alpha) + live[i] * alpha;
}

double que_afs_usage(const double *consumed, const double *penalty,
    const double *weight, size_t n, double lq_weight)
{
	double sum = 0.0;
	size_t i;

	for (i = 0; i < n; i++)
		sum += (weight ? weight[i] : 1.0) *
		       (consumed[i] + (penalty ? penalty[i] : 0.0));
	/* 0/0 would be NaN and sort first; Kueue sorts such a queue last. */
	if (!(lq_weight > 0.0))
		return INFINITY;
	return sum / lq_weight;
}
