/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconcile/plan.c - the plan the reconcilers return: an ordered list of
 * writes, events, warnings and engine actions (struct rec_plan). Contracts
 * in reconcile/reconcile.h.
 */
#include <string.h>

#include "reconcile/reconcile.h"

void rec_plan_init(struct rec_plan *p)
{
	memset(p, 0, sizeof(*p));
}

int rec_plan_push(struct rec_plan *p, struct rec_item **item, cu_error *err)
{
	if (cu_grow((void **)&p->items, &p->cap, p->n + 1, sizeof(*p->items)) !=
	    CU_OK)
		return cu_error_set(err, CU_ENOMEM, "plan: out of memory");
	*item = &p->items[p->n++];
	memset(*item, 0, sizeof(**item));
	return CU_OK;
}

void rec_plan_free(struct rec_plan *p)
{
	size_t i;

	if (p == NULL)
		return;
	for (i = 0; i < p->n; i++) {
		struct rec_item *it = &p->items[i];

		cu_free(it->ns);
		cu_free(it->name);
		json_decref(it->body);
		cu_free(it->text);
		cu_free(it->uid);
		cu_free(it->counts);
	}
	cu_free(p->items);
	rec_plan_init(p);
}
