/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/tas_int.h - what the files of the controller's topology-aware
 * scheduling share, and nothing else includes:
 *
 *   tas.c         the TAS state of Workloads (struct tas_wl, one per uid,
 *                 a struct tas_ps per podSet), their assignments adopted
 *                 from the status or the ledger, lifecycle;
 *   tas_hook.c    the engine's hook (que_tas_hook: check, check_without,
 *                 assume) placing podSets during the scheduling cycle;
 *   tas_trees.c   the capacity trees of the TAS flavors, the Topology,
 *                 Node and Pod informers feeding them, the configuration
 *                 (which flavors are TAS flavors);
 *   tas_ungate.c  the ungater: pods of placed podSets lose the
 *                 kueue.x-k8s.io/topology gate in rank order;
 *   tas_nodes.c   node failures: unhealthy nodes, replacements within the
 *                 domain, evictions, stray pods failed.
 *
 * The controller's other files use only the ctl_tas_* entry points of
 * controller/ctl_int.h. Names shared between the TAS files carry the
 * internal prefix ctl_tas__. Event-loop thread only.
 */
#ifndef CU_CONTROLLER_TAS_INT_H
#define CU_CONTROLLER_TAS_INT_H

#include "controller/ctl_int.h"
#include "tas/tas.h"

#define ANN_WORKLOAD "kueue.x-k8s.io/workload"
#define LABEL_PODSET "kueue.x-k8s.io/podset"
#define LABEL_INDEX "batch.kubernetes.io/job-completion-index"
/* An ungate write not seen in the cache after this long is sent again. */
#define UNGATE_RETRY_NS (5LL * 1000000000LL)
/* A failed node not yet handled is looked at again after this long. */
#define NODE_RECHECK_NS (200LL * 1000000LL)
/* tas_place's message for a level the Topology does not have. */
#define NO_LEVEL "no requested topology level"
/* The most podSets a Workload has (the CRD's limit). */
#define TAS_PODSETS_MAX 18

/* The resources the TAS informers watch and the ungater patches (tas.c). */
extern const struct api_resource ctl_tas__res_topo;
extern const struct api_resource ctl_tas__res_nodes;
extern const struct api_resource ctl_tas__res_pods;

struct tas_flavor {
	char *name;		   /* [owned] ResourceFlavor */
	char *topology;		   /* [owned] spec.topologyName */
	json_t *labels;		   /* [owned] spec.nodeLabels or NULL */
	json_t *tols;		   /* [owned] spec.tolerations or NULL */
	struct tas_filter *tols_f; /* [owned] its parse (strings in tols) */
	struct tas_tree *tree;	   /* [owned] NULL until built */
	struct tas_pods *pods;	   /* [owned] charges of non-TAS pods */
};

struct tas_ps {
	enum tas_mode mode; /* 0: no topologyRequest */
	char *level;	    /* [owned] */
	char *slice_level;  /* [owned] podSetSliceRequiredTopology or NULL */
	int32_t slice_size;
	/* the slice layers (podsetSliceRequiredTopologyConstraints) after
	 * the first, which is slice_level/slice_size: levels [owned] */
	struct tas_slice_layer inner[2];
	size_t n_inner;
	char *group; /* [owned] podSetGroupName or NULL */
	/* the pod template's tolerations, nodeSelector and required node
	 * affinity: sched [owned] (a copy of those fields), filter [owned,
	 * strings in sched], both NULL when it has none */
	json_t *sched;
	struct tas_filter *filter;
	/* the placement while the Workload holds quota */
	bool placed, charged;
	char *flavor; /* [owned] */
	struct api_topology_assignment a;
	json_t *wire; /* [owned] a in the wire form */
	struct tas_amount req[TAS_MAX_RESOURCES]; /* names [owned] */
	size_t n_req;
	/* failed nodes of the placement kept, not replaced
	 * (SkipReassignmentForPodOwnedWorkloads), while they stay failed
	 * [owned]; forgotten with the placement */
	struct api_strlist kept;
};

struct tas_wl {
	char *uid; /* [owned] map key */
	size_t n;
	struct tas_ps *ps; /* [owned] n */
};

struct tas_wl_pods {
	char *key; /* [owned] map key */
	ctl_keys names;
};

/* ---- tas.c: Workloads' podSets ------------------------------------------ */

/* The TAS flavor named name [borrowed], or NULL. */
struct tas_flavor *ctl_tas__flavor_find(ctl *c, const char *name);
/* Have the Topology, Node and Pod informers all listed once? */
bool ctl_tas__informers_synced(const ctl *c);
/* Forget p's placement, releasing its charge from its flavor's tree. */
void ctl_tas__ps_unplace(ctl *c, struct tas_ps *p);
/* The TAS state of Workload uid [borrowed] with n podSets, created empty
 * when missing (NULL: out of memory). */
struct tas_wl *ctl_tas__wl_get_or_new(ctl *c, const char *uid, size_t n);
/* The per-pod requests of podSet i of qw into out[cap]; their number. */
size_t ctl_tas__per_pod(ctl *c, const struct que_wl *qw, size_t i,
    struct tas_amount *out, size_t cap);
/* p's per-pod requests from podSet i of qw (names [owned] by p). */
int ctl_tas__ps_set_reqs(
    ctl *c, struct tas_ps *p, const struct que_wl *qw, size_t i, cu_error *err);
/* Charge p's placement to its flavor's current tree (once). */
void ctl_tas__ps_charge(ctl *c, struct tas_ps *p);

/* ---- tas_hook.c: the engine's hook -------------------------------------- */

/* The node filter of podSet p in flavor f: the flavor's tolerations with
 * the template's (out's strings borrowed from f and p). */
void ctl_tas__filter_of(
    const struct tas_flavor *f, const struct tas_ps *p, struct tas_filter *out);
/* que_tas_hook.check, check_without and assume (ctx is the ctl). */
int ctl_tas__hook_check(void *ctx, const struct que_wl *wl, size_t podset,
    const struct que_flavor *fl, int32_t count, char *msg, size_t len);
int ctl_tas__hook_check_without(void *ctx, const struct que_wl *wl,
    size_t podset, const struct que_flavor *fl, int32_t count,
    const struct que_wl *const *gone, size_t n_gone, bool empty, char *msg,
    size_t len);
int ctl_tas__hook_assume(void *ctx, const struct que_wl *wl,
    const char *const *flavors, const int32_t *counts, char *msg, size_t len);

/* ---- tas_trees.c: capacity trees, informers, configuration -------------- */

/* Rebuild every TAS flavor's tree from the caches and the charges. */
void ctl_tas__rebuild(ctl *c);
/* Node or pod capacity changed: pending TAS Workloads are tried again. */
void ctl_tas__capacity_changed(ctl *c);
void ctl_tas__wl_pods_free(struct tas_wl_pods *e);
/* Free n flavors fl [owned] and their trees. */
void ctl_tas__flavors_free(struct tas_flavor *fl, size_t n);

/* ---- tas_ungate.c and tas_nodes.c ---------------------------------------- */

/* Pod ns/name of the TAS pod cache decoded into *out (api_pod_dispose
 * it): CU_OK, CU_ENOTFOUND, or the decoder's error (logged at debug). */
int ctl_tas__pod_get(
    ctl *c, const char *ns, const char *name, struct api_pod *out);
/* The host an ungated, unbound, unfinished pod [borrowed] waits for (its
 * nodeSelector's kubernetes.io/hostname) [borrowed from pod], or NULL. */
const char *ctl_tas__pinned_host(const struct api_pod *pod);
/* Node failures: the nodes of placed podSets and the stray pods checked. */
void ctl_tas__check_nodes(ctl *c, int64_t now);
void ctl_tas__check_strays(ctl *c, int64_t now);

#endif
