/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/controller_report_pass_test.c - controller/report_pass.c,
 * which queues the one-second status pass builds again: a queue found
 * written is skipped while its fingerprint and cached resourceVersion
 * stay; a new resourceVersion, a new fingerprint, a write in flight, a
 * queue never fingerprinted (1) and the periodic full pass build it
 * again. And the fingerprint itself, over random runs of the queue
 * model (adds, removals, admissions, releases, backoffs, parking and the
 * requeue-all look): whenever it is unchanged, everything the
 * ClusterQueue's and its LocalQueues' statuses count is unchanged too,
 * so a skipped queue's status is the one a full rebuild makes; and the
 * parking round trip of the requeue-all look leaves it unchanged, so a
 * quiet queue stays skipped.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "controller/ctl_int.h"
#include "queues/queues.h"
#include "tests/unit/fixtures.h"

static json_t *cached(const char *rv)
{
	return json_pack("{s:{s:s, s:s}, s:{s:i}}", "metadata", "name", "cq",
	    "resourceVersion", rv, "status", "pendingWorkloads", 3);
}

Test(report_pass, clean_queue_is_skipped_until_an_input_changes)
{
	struct ctl_report r;
	const char *const *key = CTL_K3(CTL_KIND_CQ, "", "cq");
	json_t *o5 = cached("5"), *o6 = cached("6");
	int i;

	cr_assert_eq(ctl_report_init(&r), CU_OK);
	ctl_report__pass_begin(&r, false);
	cr_assert(r.full, "the first pass builds every queue");
	ctl_report__mark(&r, key, 42, o5, true);
	cr_assert_not(ctl_report__clean(&r, key, 42, o5), "not in a full pass");
	ctl_report__pass_begin(&r, false);
	cr_assert_not(r.full);
	cr_assert(ctl_report__clean(&r, key, 42, o5), "nothing changed");
	cr_assert_not(ctl_report__clean(&r, key, 43, o5), "the model changed");
	cr_assert_not(ctl_report__clean(&r, key, 42, o6), "the object changed");
	cr_assert_not(
	    ctl_report__clean(&r, CTL_K3(CTL_KIND_LQ, "", "cq"), 42, o5),
	    "another queue");
	/* A status offered or in flight is not written yet. */
	ctl_report__mark(&r, key, 42, o5, false);
	cr_assert_not(ctl_report__clean(&r, key, 42, o5));
	ctl_report__mark(&r, key, 42, o6, true);
	cr_assert(ctl_report__clean(&r, key, 42, o6), "written at rv 6");
	/* 1: never skipped (fair sharing, a LocalQueue without its CQ). */
	ctl_report__mark(&r, key, 1, o6, true);
	cr_assert_not(ctl_report__clean(&r, key, 1, o6));
	ctl_report__mark(&r, key, 42, o6, true);
	/* The safety net: every CTL_REPORT_FULL_PASSES-th pass is full. */
	for (i = 2; i < CTL_REPORT_FULL_PASSES; i++) {
		ctl_report__pass_begin(&r, false);
		cr_assert_not(r.full, "pass %d", i);
		cr_assert(ctl_report__clean(&r, key, 42, o6), "pass %d", i);
	}
	ctl_report__pass_begin(&r, false);
	cr_assert(r.full);
	cr_assert_not(ctl_report__clean(&r, key, 42, o6));
	ctl_report__pass_begin(&r, false);
	cr_assert_not(ctl_report__clean(&r, key, 42, o6),
	    "a full pass forgets what it did not find written again");
	/* Without reading the object: the model alone, for a pass whose
	 * informer saw nothing change. */
	ctl_report__mark(&r, key, 42, o6, true);
	cr_assert(ctl_report__clean_print(&r, key, 42));
	cr_assert_not(ctl_report__clean_print(&r, key, 43));
	{
		char *seen = NULL;

		cr_assert_not(ctl_report__informer_same(&r, &seen, "17"),
		    "nothing seen yet");
		cr_assert(ctl_report__informer_same(&r, &seen, "17"));
		cr_assert_not(ctl_report__informer_same(&r, &seen, "18"));
		cr_assert(ctl_report__informer_same(&r, &seen, "18"));
		cr_assert_not(ctl_report__informer_same(&r, &seen, ""),
		    "before the first LIST");
		cu_free(seen);
	}
	ctl_report__pass_begin(&r, true);
	cr_assert(r.full, "asked for");
	cr_assert_not(ctl_report__clean_print(&r, key, 42));
	ctl_report_dispose(&r);
	json_decref(o5);
	json_decref(o6);
}

/* ---- the fingerprint over the queue model ---------------------------- */

static que_state *st;

static void model(void)
{
	static const struct que_lq_spec lqs[] = {
	    {"ns", "a", "cq", QUE_STOP_NONE},
	    {"ns", "b", "cq", QUE_STOP_NONE},
	};
	cu_error err;

	st = fx_one_cq(4000, QUE_BEST_EFFORT_FIFO, lqs, 2);
	cr_assert_eq(que_rebuild(st, &err), CU_OK);
}

/* Everything the statuses count: per LocalQueue (a, b) pending, parked
 * and admitted Workloads and usage; the ClusterQueue's totals, usage
 * and Active. */
struct digest {
	size_t pending[2], parked[2], admitted[2], backoff;
	int64_t lq_usage[2], usage;
	bool active, exists;
};

static int lq_i(const struct que_wl *w)
{
	return strcmp(w->queue_name, "a") == 0 ? 0 : 1;
}

static void digest(const struct que_cq *cq, struct digest *d)
{
	const struct que_wl *w;
	size_t i;

	memset(d, 0, sizeof(*d));
	for (i = 0; i < cq->n_heap; i++)
		d->pending[lq_i(cq->heap[i])]++;
	w = cq->inadmissible.head;
	for (i = 0; i < cq->inadmissible.n; i++, w = w->next) {
		d->pending[lq_i(w)]++;
		d->parked[lq_i(w)]++;
	}
	w = cq->admitted.head;
	for (i = 0; i < cq->admitted.n; i++, w = w->next) {
		d->admitted[lq_i(w)]++;
		d->lq_usage[lq_i(w)] += w->podsets[0].req[0].total;
	}
	d->backoff = cq->n_backoff;
	d->usage = cq->node.cells[0].usage;
	d->active = cq->active;
	d->exists = cq->exists;
}

static void add(int id, int64_t cpu)
{
	char uid[32];
	struct que_request r = {"cpu", cpu};
	struct que_podset_spec ps = {
	    .name = "main", .count = 1, .requests = &r, .n_requests = 1};
	struct que_workload_spec w = {.uid = uid,
	    .ns = "ns",
	    .name = uid,
	    .queue_name = id % 2 ? "a" : "b",
	    .priority = id % 3,
	    .created_ns = id,
	    .namespace_eligible = true,
	    .podsets = &ps,
	    .n_podsets = 1};
	cu_error err;

	snprintf(uid, sizeof(uid), "w%d", id);
	cr_assert_eq(que_workload_add(st, &w, &err), CU_OK, "%s", err.msg);
}

/* A random admitted Workload of cq, or a pending one (of its heap, else
 * parked); NULL when there is none. */
static struct que_wl *any(struct que_cq *cq, bool admitted, unsigned *seed)
{
	const struct que_wlist *l = admitted ? &cq->admitted : NULL;
	struct que_wl *w;
	size_t i, k;

	if (l == NULL) {
		if (cq->n_heap > 0)
			return cq->heap[(size_t)rand_r(seed) % cq->n_heap];
		l = &cq->inadmissible;
	}
	if (l->n == 0)
		return NULL;
	k = (size_t)rand_r(seed) % l->n;
	for (w = l->head, i = 0; i < k; i++)
		w = w->next;
	return w;
}

/* One cycle: every head admitted when it fits, else parked. */
static void cycle(struct que_cq *cq, int64_t now)
{
	struct que_wl **heads;
	size_t n, i;
	uint32_t fr = 0;
	cu_error err;

	cr_assert_eq(que_pop_heads(st, now, &heads, &n, &err), CU_OK);
	for (i = 0; i < n; i++) {
		if (cq->node.cells[0].usage +
			heads[i]->podsets[0].req[0].total <=
		    cq->node.cells[0].q.nominal)
			que_admit(st, heads[i], &fr, now);
		else
			que_requeue(st, heads[i], QUE_RQ_NO_FIT);
	}
}

static void step(struct que_cq *cq, unsigned *seed, int *next, int64_t now)
{
	struct que_wl *w;
	cu_error err;

	switch (rand_r(seed) % 8) {
	case 0:
	case 1:
		add((*next)++, 1000 * (1 + rand_r(seed) % 3));
		break;
	case 2:
		if ((w = any(cq, rand_r(seed) % 2, seed)) != NULL)
			cr_assert_eq(
			    que_workload_remove(st, w->uid, &err), CU_OK);
		break;
	case 3:
		if ((w = any(cq, true, seed)) != NULL)
			cr_assert_eq(
			    que_workload_release(st, w->uid, now, &err), CU_OK);
		break;
	case 4:
		if ((w = any(cq, false, seed)) != NULL)
			cr_assert_eq(
			    que_workload_backoff(st, w->uid, now + 3, &err),
			    CU_OK);
		break;
	case 5:
		(void)que_recheck_parked(st);
		cycle(cq, now);
		break;
	default:
		cycle(cq, now);
		break;
	}
}

Test(report_pass, unchanged_fingerprint_means_unchanged_status)
{
	unsigned seed;
	int64_t now = 100;
	size_t same = 0, round_trips = 0;

	for (seed = 1; seed <= 40; seed++) {
		unsigned s = seed;
		int next = 0, i, k;
		struct que_cq *cq;

		model();
		cq = que_cq_get(st, "cq");
		for (i = 0; i < 300; i++, now++) {
			struct digest before, after;
			uint64_t p0 = ctl_report__cq_print(cq), p1;

			digest(cq, &before);
			step(cq, &s, &next, now);
			digest(cq, &after);
			p1 = ctl_report__cq_print(cq);
			cr_assert_gt(p1, 1);
			if (p0 != p1)
				continue;
			same++;
			cr_assert(memcmp(&before, &after, sizeof(before)) == 0,
			    "seed %u step %d: the fingerprint stayed while "
			    "what the status counts changed",
			    seed, i);
		}
		/* Quiet: every pending one tried at today's usage (the heap
		 * and the backoffs drained). The requeue-all look and the
		 * cycles that park them again leave it as it was. */
		for (k = 0; k < 1000 && (cq->n_heap > 0 || cq->n_backoff > 0);
		     k++, now += 10)
			cycle(cq, now);
		if (cq->inadmissible.n > 0 && cq->n_heap == 0 &&
		    cq->n_backoff == 0) {
			uint64_t p0 = ctl_report__cq_print(cq);
			size_t parked = cq->inadmissible.n;

			cr_assert(que_recheck_parked(st));
			for (k = 0; k < 1000 && (k == 0 || cq->n_heap > 0); k++)
				cycle(cq, now++);
			cr_assert_eq(cq->inadmissible.n, parked);
			cr_assert_eq(ctl_report__cq_print(cq), p0,
			    "seed %u: the parking round trip moved it", seed);
			round_trips++;
		}
		que_state_free(st);
	}
	cr_assert_gt(same, 1000, "the fingerprint stays often (%zu)", same);
	cr_assert_gt(round_trips, 5);
	cr_assert_eq(ctl_report__cq_print(NULL), 1);
}
