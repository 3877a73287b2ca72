/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queues/queues_int.h - internals shared by the files of queues/ only:
 * the state struct, its indexes, pending heaps and workload lists. Never
 * included from another folder.
 */
#ifndef CU_QUEUES_QUEUES_INT_H
#define CU_QUEUES_QUEUES_INT_H

#include "lib/cu.h"
#include "queues/queues.h"

/* Indexes (lib/cu.h): keys are borrowed from the values, which live as
 * long as the state (configuration objects are never removed, invariant
 * 5) or until que_workload_remove takes them out. */
CU_MAP_TYPED(que_wl_map, const char *, struct que_wl); /* uid */
/* {ns, name} (the workload's name_key) */
CU_MAP_TYPED(que_wl_name_map, const char *const *, struct que_wl);
CU_MAP_TYPED(que_flavor_map, const char *, struct que_flavor);
CU_MAP_TYPED(que_cq_map, const char *, struct que_cq);
CU_MAP_TYPED(que_cohort_map, const char *, struct que_cohort);
CU_MAP_TYPED(que_lq_map, const char *const *, struct que_lq); /* ns, name */

struct que_state {
	cu_map res_map;	  /* name -> (void *)(uintptr_t)(id + 1) */
	char **res_names; /* owned */
	uint32_t n_res, cap_res;

	que_flavor_map flavor_map;
	struct que_flavor **flavors; /* owned */
	uint32_t n_flavors, cap_flavors;

	/* (flavor, resource) -> fr: a dense table, rows by flavor id. */
	uint32_t *fr_table; /* owned; fr_rows x fr_cols, UINT32_MAX = none */
	uint32_t fr_rows, fr_cols;
	uint32_t *fr_flavor, *fr_res; /* owned; by fr */
	uint32_t n_fr, cap_fr;

	que_cq_map cq_map;
	struct que_cq **cqs; /* owned */
	size_t n_cqs, cap_cqs;

	que_cohort_map cohort_map;
	struct que_cohort **cohorts; /* owned */
	size_t n_cohorts, cap_cohorts;

	que_lq_map lq_map;
	struct que_lq **lqs; /* owned */
	size_t n_lqs, cap_lqs;

	que_wl_map wl_index; /* uid -> workload [owned by the state] */
	/* {ns, name} -> the workload added last under it [borrowed from
	 * wl_index] */
	que_wl_name_map wl_by_name;

	struct que_wlist blocked; /* BLOCKED workloads */
	struct que_wl **backoff;  /* owned; min-heap on requeue_at */
	size_t n_backoff, cap_backoff;
	struct que_wl **heads; /* owned; last que_pop_heads result */
	size_t n_heads, cap_heads;

	bool dirty; /* configuration changed since the last rebuild */
	struct que_fair_config fair;
	bool afs_on;			 /* que_admission_fair_sharing_set */
	struct que_resources *resources; /* owned; NULL: none (resources.c) */
	bool no_recompute_overlap; /* que_recompute_overlap_set(st, false) */
	const struct que_tas_hook *tas; /* [borrowed] NULL: no TAS flavor */
	que_forget_fn forget;		/* que_set_forget_hook; NULL: none */
	void *forget_payload;		/* [borrowed] */
};

/* What cq [may be NULL] holds changed (struct que_cq version). */
static inline void que_cq_touch(struct que_cq *cq)
{
	if (cq != NULL)
		cq->version++;
}

/* A workload's share of its ClusterQueue's parked_mix: its address,
 * mixed (splitmix64's finaliser), stable while the record lives. */
static inline uint64_t que_wl_mix(const struct que_wl *wl)
{
	uint64_t h = (uint64_t)(uintptr_t)wl + 0x9e3779b97f4a7c15ULL;

	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
	return h ^ (h >> 31);
}

/* Grow an array of elem-sized items to hold at least need items. */

/* Lists. */
void que_wlist_push(struct que_wlist *l, struct que_wl *wl);
void que_wlist_del(struct que_wlist *l, struct que_wl *wl);

/* Pending heap of a CQ; capacity is reserved beforehand (n_members). */
void que_heap_push(struct que_cq *cq, struct que_wl *wl);
void que_heap_remove(struct que_cq *cq, struct que_wl *wl);
struct que_wl *que_heap_pop(struct que_cq *cq);
/* Re-establish the heap order of cq (its keys changed); clears afs_dirty.
 * que_heap_pop does it first when afs_dirty is set. */
void que_heap_reorder(struct que_cq *cq);
/* Backoff heap of the state. */
void que_backoff_push(struct que_state *st, struct que_wl *wl);
void que_backoff_remove(struct que_state *st, struct que_wl *wl);

/* Take wl out of whatever container its `where` names (not ADMITTED
 * lists: those are handled by the callers that release quota). */
void que_detach(struct que_state *st, struct que_wl *wl);

/* Intern a resource name to its id (workloads.c). CU_ENOMEM. */
CU_MUST_CHECK int que_intern_resource(
    struct que_state *st, const char *name, uint32_t *out);
/* Get or create a cohort struct (implied until que_cohort_set). */
CU_MUST_CHECK int que_cohort_intern(
    struct que_state *st, const char *name, struct que_cohort **out);

/* Route every workload that is not holding quota to the container its
 * LocalQueue and ClusterQueue say (workloads.c). CU_ENOMEM. */
CU_MUST_CHECK int que_route_all(struct que_state *st, cu_error *err);

/* Make sure every node has a cell for every fr. */
CU_MUST_CHECK int que_node_reserve(struct que_node *n, uint32_t nfr);

/* Recompute trees and subtree quotas (quota.c). */
CU_MUST_CHECK int que_rebuild_trees(struct que_state *st, cu_error *err);

/* Mark the tree of cq for an inadmissible requeue (capacity freed). */
void que_capacity_freed(struct que_cq *cq);
/* queues/podsets.c: activate or drop the pods slot of a workload that
 * does not hold quota, after its routing (or its CQ's groups) changed. */
void que_wl_sync_pods(struct que_wl *wl);
/* The checks every adoption starts with: *out is workload uid [borrowed],
 * which holds no quota, with the configuration rebuilt (routing must not
 * re-sync what the adoption sets). CU_ENOTFOUND, CU_EINVAL, CU_ENOMEM. */
int que_adopt_begin(
    que_state *st, const char *uid, struct que_wl **out, cu_error *err);
/* Set every podset's count (NULL = full counts) and request totals. */
void que_wl_set_counts(struct que_wl *wl, const int32_t *counts);
/* The spec's podset asks for `pods` itself (then there is no slot). */
bool que_spec_requests_pods(const struct que_podset_spec *ps);

/* queues/resources.c: free st->resources. */
void que_resources_free(que_state *st);
/* a x b of milli-unit values in milli-units, rounded away from zero,
 * saturated. */
int64_t que_milli_mul(int64_t a, int64_t b);

#endif /* CU_QUEUES_QUEUES_INT_H */
