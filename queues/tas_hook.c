/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queues/tas_hook.c - the topology-aware scheduling hook of a queue
 * state (see queues.h): set and read; the admission engine calls it.
 */
#include "queues/queues_int.h"

void que_set_tas_hook(que_state *st, const struct que_tas_hook *h)
{
	st->tas = h;
}

const struct que_tas_hook *que_tas_hook(const que_state *st)
{
	return st->tas;
}

void que_tas_capacity_changed(que_state *st)
{
	size_t i;

	for (i = 0; i < st->n_cqs; i++)
		st->cqs[i]->requeue_needed = true;
}
