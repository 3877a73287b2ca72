/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tas/tas_int.h - the capacity tree's structures, shared by tas/tree.c
 * (building and incremental updates) and tas/place.c (placement).
 */
#ifndef CU_TAS_TAS_INT_H
#define CU_TAS_TAS_INT_H

#include "tas/tas.h"

struct tas_domain {
	char *key;   /* [owned] value path joined with '\x1f' (map key) */
	char *value; /* [borrowed from key] this level's value */
	size_t level;
	size_t
	    ord; /* rank of key at its level (tas__order); sorts compare it */
	struct tas_domain *parent;    /* [borrowed] NULL at level 0 */
	struct tas_domain **children; /* [owned array, borrowed items] */
	size_t n_children, cap_children;
	/* leaves: free capacity of schedulable untainted nodes minus TAS
	 * usage */
	int64_t free[TAS_MAX_RESOURCES];
	size_t n_nodes; /* nodes contributing (leaves) */
	/* placement scratch */
	int64_t fit, take;
	/* slices and groups (tas/slice.c): workers' pods beside the
	 * leader, slices (with it), leader fits (0/1), leaders taken */
	int64_t fit_wl, slices, slices_wl, leader, take_leader;
	/* leaves, read by filtered placements only (kept after the fields
	 * every placement reads): */
	size_t n_tainted;	 /* schedulable nodes with a scheduling taint */
	struct tas_node **nodes; /* [owned array, borrowed items] its nodes */
	size_t n_all, cap_all;
	/* usage of admitted TAS assignments (in free already) */
	int64_t tas[TAS_MAX_RESOURCES];
};

struct tas_node {
	char *name;		 /* [owned] */
	struct tas_domain *leaf; /* [borrowed] NULL: absent or unlabelled */
	bool present, schedulable;
	bool tainted;		  /* a NoSchedule/NoExecute taint */
	struct api_strmap labels; /* [owned] items sorted by key */
	struct tas_taint *taints; /* [owned, strings owned] scheduling ones */
	size_t n_taints;
	int64_t alloc[TAS_MAX_RESOURCES];
	int64_t used[TAS_MAX_RESOURCES];
};

struct tas_level {
	struct tas_domain **items; /* [owned array, owned items] */
	size_t n, cap;
};

struct tas_tree {
	char *name;    /* [owned] */
	char **levels; /* [owned] node labels */
	size_t n_levels;
	bool host_lowest; /* lowest level is kubernetes.io/hostname */
	bool mixed;	/* Kueue's Mixed profile (tas_tree_set_mixed_profile) */
	bool ord_stale; /* a domain was added since tas__order */
	char *res[TAS_MAX_RESOURCES]; /* [owned] column names */
	size_t n_res;
	cu_map nodes;	      /* name -> struct tas_node [owned] */
	cu_map domains;	      /* key -> struct tas_domain [borrowed] */
	cu_map leaf_by_value; /* lowest value -> leaf (host_lowest only) */
	struct tas_level *per_level; /* [owned] n_levels */
};

/* Column 0 is always "pods": one per pod, unlimited on a Node that does
 * not declare allocatable pods. */
#define TAS_PODS 0
#define TAS_PODS_UNLIMITED ((int64_t)1 << 40)

/* Column of resource `name`, added when missing and `add`; -1 when
 * missing (and not added), -2 when full. */
int tas__column(struct tas_tree *t, const char *name, bool add);

/* Whether a taint of this effect keeps pods off (NoSchedule,
 * NoExecute). */
bool tas__scheduling_taint(const char *effect);

/* Pods of request r (resource columns cols) that fit in free capacity
 * `free` of n nodes (inlined: every placement calls it once per leaf;
 * tas/place.c and tas/slice.c). */
static inline __attribute__((always_inline)) int64_t tas__fit_in(
    const int64_t *free, size_t n, const int *cols, const struct tas_request *r)
{
	int64_t fit = free[TAS_PODS] > 0 ? free[TAS_PODS] : 0;
	size_t i;

	if (n == 0)
		return 0;
	for (i = 0; i < r->n_per_pod; i++) {
		int64_t f;

		if (r->per_pod[i].value <= 0 || cols[i] == TAS_PODS)
			continue;
		if (cols[i] < 0)
			return 0; /* no node offers that resource */
		f = free[cols[i]] / r->per_pod[i].value;
		if (f < fit)
			fit = f > 0 ? f : 0;
	}
	return fit;
}

/* The free capacity of leaf [borrowed] for the requests of filter f
 * (NULL: none): per resource column, the leaf's own free array when no
 * node is left out, else buf [TAS_MAX_RESOURCES] filled with the free
 * capacity of the nodes f admits (less all the leaf's TAS usage when f
 * selects on labels: see tas/tas.h). *n_nodes: the nodes counted (0: no
 * pod fits). Every leaf count of a placement goes through it. */
const int64_t *tas__leaf_free(const struct tas_tree *t,
    const struct tas_domain *leaf, const struct tas_filter *f, int64_t *buf,
    size_t *n_nodes);

/* tas_filter_matches for a node of the tree (its labels sorted by key). */
bool tas__node_matches(const struct tas_filter *f, const struct tas_node *n);

/* tas/place.c: the assignment of leaves [edited: sorted] with their
 * `take` pod counts (0 left out), in Kueue's levels. CU_ENOMEM. */
/* Rank every domain's key at its level (struct tas_domain.ord) once a
 * domain was added since the last call; placements call it first, so
 * their sorts compare integers, not value paths. CU_ENOMEM (the ranks
 * stay stale; the next call retries). */
CU_MUST_CHECK int tas__order(struct tas_tree *t, cu_error *err);
int tas__build(struct tas_tree *t, struct tas_domain **leaves, size_t n,
    struct api_topology_assignment *out, cu_error *err);

/* tas/slice.c: tas_place with slices and/or a group's leader (NULL: no
 * leader; then leader_out is unused). */
int tas__place_general(struct tas_tree *t, const struct tas_request *r,
    const struct tas_request *leader, struct api_topology_assignment *out,
    struct api_topology_assignment *leader_out, char *msg, size_t msg_len,
    cu_error *err);

/* tas/slice.c: tas_replace for a sliced request: *add [owned] gets the
 * new leaves of domain f's pods (f excluded). */
int tas__replace_sliced(struct tas_tree *t,
    const struct api_topology_assignment *a, size_t f,
    const struct tas_request *r, struct api_topology_assignment *add, char *msg,
    size_t msg_len, cu_error *err);

/* The leaf domain i of a names [borrowed], or NULL. */
struct tas_domain *tas__assigned_leaf(
    struct tas_tree *t, const struct api_topology_assignment *a, size_t i);

#endif /* CU_TAS_TAS_INT_H */
