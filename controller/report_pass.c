/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/report_pass.c - the bookkeeping of the one-second status
 * pass (report.c): which queues it builds again, and the status writes
 * it offers, written oldest report first within the queue-status budget.
 * A ClusterQueue or LocalQueue whose status the last pass
 * found written (nothing to offer, no write in flight) is remembered with
 * what that status was built from: a fingerprint of the queue model's
 * inputs (the ClusterQueue's version and counts, queues.h) and the
 * cached object's resourceVersion. While both are the same, its status
 * and gauges are what they were, and the pass skips it; so a pass costs
 * what changed, not the number of queues. Every CTL_REPORT_FULL_PASSES-th
 * pass builds every queue (a safety net, as the requeue-all tick is, and
 * it drops the entries of deleted queues).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/ctl_int.h"

/* splitmix64's finaliser: every input bit moves every output bit. */
static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	return h ^ (h >> 31);
}

uint64_t ctl_report__cq_print(const struct que_cq *cq)
{
	uint64_t h = 0x51ab1e;

	if (cq == NULL)
		return 1;
	h = mix(h, cq->version);
	h = mix(h, cq->n_heap);
	h = mix(h, cq->inadmissible.n);
	h = mix(h, cq->n_backoff);
	h = mix(h, cq->admitted.n);
	h = mix(h, cq->parked_mix);
	h = mix(h, (uint64_t)cq->exists << 1 | (uint64_t)cq->active);
	return h > 1 ? h : h + 2; /* 0 and 1 are never a queue's */
}

void ctl_report__pass_begin(struct ctl_report *r, bool full)
{
	r->full = full || r->passes % CTL_REPORT_FULL_PASSES == 0;
	r->passes++;
	if (r->full) {
		ctl_keys_dispose(&r->clean);
		ctl_keys_init(&r->clean, 3);
	}
}

static const char *rv_of(json_t *cached)
{
	return json_string_value(json_object_get(
	    json_object_get(cached, "metadata"), "resourceVersion"));
}

bool ctl_report__clean(const struct ctl_report *r, const char *const *key,
    uint64_t print, json_t *cached)
{
	const struct ctl_kent *e;
	const char *rv = rv_of(cached);

	if (r->full || print <= 1 || rv == NULL ||
	    (e = ctl_keys_get(&r->clean, key)) == NULL)
		return false;
	return (uint64_t)e->n == print && e->s[0] != NULL &&
	       strcmp(e->s[0], rv) == 0;
}

bool ctl_report__clean_print(
    const struct ctl_report *r, const char *const *key, uint64_t print)
{
	const struct ctl_kent *e;

	return !r->full && print > 1 &&
	       (e = ctl_keys_get(&r->clean, key)) != NULL &&
	       (uint64_t)e->n == print;
}

bool ctl_report__informer_same(
    const struct ctl_report *r, char **seen, const char *rv)
{
	bool same = !r->full && rv != NULL && *rv != '\0' && *seen != NULL &&
		    strcmp(*seen, rv) == 0;

	if (!same) {
		cu_free(*seen);
		*seen = rv != NULL ? cu_strdup(rv) : NULL;
	}
	return same;
}

void ctl_report__mark(struct ctl_report *r, const char *const *key,
    uint64_t print, json_t *cached, bool clean)
{
	const char *rv = rv_of(cached);
	struct ctl_kent *e;

	if (!clean || print <= 1 || rv == NULL) {
		ctl_keys_del(&r->clean, key);
		return;
	}
	if ((e = ctl_keys_put(&r->clean, key)) == NULL)
		return; /* out of memory: built again next pass */
	e->n = (int64_t)print;
	if ((e->s[0] == NULL || strcmp(e->s[0], rv) != 0) &&
	    ctl_keys_set_str(e, 0, rv) != CU_OK)
		ctl_keys_del(&r->clean, key);
}

/* ---- offers ---------------------------------------------------------- */

static const char *kind_tag(const char *kind)
{
	if (strcmp(kind, CTL_KIND_CQ) == 0)
		return "cq";
	return strcmp(kind, CTL_KIND_COHORT) == 0 ? "co" : "lq";
}

/* Offers last reported at the same time go in the order of their keys
 * as "cq/name" and "lq/ns/name" strings (as they always did), made once
 * per offer. */
static char *order_key(const char *kind, const char *ns, const char *name)
{
	size_t n = strlen(name) + (ns ? strlen(ns) + 1 : 0) + 4;
	char *k = cu_malloc(n);

	if (k != NULL)
		snprintf(k, n, "%s/%s%s%s", kind_tag(kind), ns ? ns : "",
		    ns ? "/" : "", name);
	return k;
}

static int offer_cmp(const void *a, const void *b)
{
	const struct offer *x = a, *y = b;

	if (x->last != y->last)
		return x->last < y->last ? -1 : 1;
	return strcmp(x->order, y->order);
}

void ctl_report__offer_dispose(struct offer *o)
{
	cu_free(o->ns);
	cu_free(o->name);
	cu_free(o->order);
	o->ns = o->name = o->order = NULL;
}

/* Offer a queue status write (patch [consumed]); report_flush writes the
 * offers whose last report is oldest while the budget lasts. */
void ctl_report__offer(ctl *c, const struct api_resource *res, const char *ns,
    const char *name, json_t *patch, const char *kind, bool urgent)
{
	struct offer *o;
	struct ctl_kent *last;

	if (c->rep.noffers == c->rep.capoffers) {
		size_t nc = c->rep.capoffers ? c->rep.capoffers * 2 : 64;
		struct offer *nv = cu_realloc(c->rep.offers, nc * sizeof(*nv));

		if (nv == NULL) {
			json_decref(patch);
			return;
		}
		c->rep.offers = nv;
		c->rep.capoffers = nc;
	}
	o = &c->rep.offers[c->rep.noffers];
	o->res = res;
	o->ns = ns ? cu_strdup(ns) : NULL;
	o->name = cu_strdup(name);
	o->kind = kind;
	o->patch = patch;
	o->order = order_key(kind, ns, name);
	last =
	    ctl_keys_get(&c->rep.reported_at, CTL_K3(kind, ns ? ns : "", name));
	o->last = last != NULL ? last->n : 0;
	o->urgent = urgent;
	if (o->name == NULL || (ns != NULL && o->ns == NULL) ||
	    o->order == NULL) {
		ctl_report__offer_dispose(o);
		json_decref(patch);
		return;
	}
	c->rep.noffers++;
}

void ctl_report__flush(ctl *c, int64_t now_ms)
{
	size_t i;

	if (c->rep.noffers == 0)
		return;
	qsort(c->rep.offers, c->rep.noffers, sizeof(*c->rep.offers), offer_cmp);
	for (i = 0; i < c->rep.noffers; i++) {
		struct offer *o = &c->rep.offers[i];

		/* An urgent report needs no token, but room like any
		 * other: the writes it waits behind are admissions'. */
		if ((o->urgent && ctl_pipe_budget_room(
				      c->pipe, CTL_PIPE_BUDGET_QUEUE_STATUS)) ||
		    ctl_pipe_budget_take(
			c->pipe, CTL_PIPE_BUDGET_QUEUE_STATUS, now_ms)) {
			const char *const *key =
			    CTL_K3(o->kind, o->ns ? o->ns : "", o->name);
			struct ctl_kent *e =
			    ctl_keys_put(&c->rep.reported_at, key);
			struct ctl_pipe_write *w =
			    ctl_pipe_queue(c->pipe, CTL_PIPE_QUEUE_STATUS,
				o->res, o->ns, o->name, NULL, o->patch);

			if (e != NULL)
				e->n = now_ms;
			ctl_pipe_set_budget(
			    c->pipe, w, CTL_PIPE_BUDGET_QUEUE_STATUS);
			ctl_pipe_expect(c->pipe, w, key, true);
		} else {
			json_decref(o->patch);
		}
		ctl_report__offer_dispose(o);
	}
	c->rep.noffers = 0;
}
