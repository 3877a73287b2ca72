/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tas/tas.h - topology-aware scheduling (Kueue TAS) as pure logic: the
 * capacity tree of one Topology over the Nodes of a flavor, kept up to
 * date incrementally from Node and Pod events, and the placement of a
 * podSet in it (required, preferred, unconstrained) with Kueue's
 * algorithm and pending messages.
 *
 * No I/O, no clock reads; event-loop thread only. Prefix: tas_ / TAS_.
 *
 * Design notes
 * ------------
 * Domains form a tree: one domain per distinct value path at each level
 * (block "b1" > rack "b1/r1" > host "b1/r1/h1"); the lowest level's
 * domains are the leaves. Each leaf keeps, per resource column, the free
 * capacity of its schedulable Nodes (allocatable minus the usage charged
 * to them) minus the usage of admitted TAS podSets placed on it; every
 * event adjusts one node's contribution (O(resources)), never the whole
 * tree. A placement fills the pod counts per leaf (floor of free over
 * the per-pod request, "pods" counted as one per pod when Nodes declare
 * it), sums them up the tree, then, as Kueue does:
 *   - find the fitting level: domains sorted by fit (desc, ties by value
 *     path); if the first fits all pods, the best fit (the first domain
 *     with the smallest fit >= count) is taken; otherwise required fails
 *     ("topology "T" allows to fit only N out of M pod(s)"), preferred
 *     moves one level up, and at the top (or for unconstrained, at the
 *     lowest level) the pods are spread greedily over the largest
 *     domains, the last one chosen by best fit;
 *   - descend: at each lower level the children of the chosen domains
 *     are taken greedily the same way, so pods pack into as few domains
 *     as possible at every level.
 * Slices and podSet groups (tas/slice.c) run Kueue's general form of the
 * same algorithm: counts are in slices down to the slice level (a
 * domain's slices: its pods / slice size at the slice level, summed
 * above), then in pods within each slice domain; a group's leader is
 * counted per domain as "fits" (0/1) with the workers' capacity that is
 * left beside it. Inner slice layers (TASMultiLayerTopology) count a
 * domain below the outermost slice level towards its parent in whole
 * slices of its layer's size, and the descent below that level hands
 * each domain's pods to its children in those slices.
 * Usage charged to a node (tas_tree_node_usage) is what the caller
 * counts as taken there: pods bound to it and pods nominated to it
 * (status.nominatedNodeName), which Kueue leaves out.
 *
 * Which nodes a placement may use (struct tas_filter): each leaf's free
 * capacity counts its untainted nodes only, so a request without
 * tolerations or selectors (the common case) reads it as is. A request
 * with a filter counts, per leaf, the nodes the filter admits: with
 * tolerations only, the leaf's free capacity plus its tolerated tainted
 * nodes (leaves without tainted nodes are read as is); with a selector
 * or affinity, the admitted nodes' free capacity minus all the TAS
 * usage of the leaf (when a leaf holds several nodes the scheduler may
 * have put those pods on any of them: counted against the admitted ones,
 * so nothing is over-placed).
 */
#ifndef CU_TAS_TAS_H
#define CU_TAS_TAS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "api/model.h"
#include "lib/cu.h"

/* Resource columns a tree tracks (cpu, memory, pods, GPUs...). */
#define TAS_MAX_RESOURCES 16
/* Returned by tas_place when the podSet does not fit (not an error). */
#define TAS_NOFIT 1

#define TAS_HOSTNAME_LABEL "kubernetes.io/hostname"

struct tas_tree;

/* A per-resource amount in the caller's units (cueue uses milli-units;
 * the same unit must be used for allocatable and requests). */
struct tas_amount {
	const char *name; /* [borrowed] resource name */
	int64_t value;
};

/* New empty tree for Topology `name` with levels (node labels, highest
 * first) [borrowed, copied]; *out [owned: tas_tree_free]. CU_EINVAL (no
 * level), CU_ENOMEM. */
CU_MUST_CHECK int tas_tree_new(const char *name, const char *const *levels,
    size_t n_levels, struct tas_tree **out, cu_error *err);
void tas_tree_free(struct tas_tree *t);

/* Add or update Node `node` [borrowed, copied]: its labels (for the
 * level values) and allocatable; a node missing a level label, or not
 * schedulable (spec.unschedulable, NotReady, an untolerated NoSchedule
 * taint: the caller decides), contributes no capacity. Usage already
 * charged to the node is kept. CU_ENOMEM, CU_ERANGE (more resource
 * names than TAS_MAX_RESOURCES). */
CU_MUST_CHECK int tas_tree_node_set(struct tas_tree *t, const char *node,
    const struct api_strmap *labels, const struct tas_amount *alloc,
    size_t n_alloc, bool schedulable, cu_error *err);
/* A Node's taint; only NoSchedule and NoExecute ones keep pods off
 * (PreferNoSchedule and others are ignored, as the scheduler's
 * TaintToleration filter does). */
struct tas_taint {
	const char *key;    /* [borrowed] */
	const char *value;  /* [borrowed] NULL: none */
	const char *effect; /* [borrowed] */
};

/* tas_tree_node_set with the Node's taints [borrowed, the scheduling
 * ones copied]: a tainted node contributes only to the placements of
 * requests whose filter tolerates all its scheduling taints; its
 * labels are kept for the filters' node selectors. `schedulable` is
 * then spec.unschedulable and readiness only. Errors as
 * tas_tree_node_set. */
CU_MUST_CHECK int tas_tree_node_put(struct tas_tree *t, const char *node,
    const struct api_strmap *labels, const struct tas_amount *alloc,
    size_t n_alloc, const struct tas_taint *taints, size_t n_taints,
    bool schedulable, cu_error *err);
/* Kueue's TASProfileMixed (on by default in Kueue since v0.15): an
 * unconstrained podSet that no single domain holds is spread over the
 * lowest level's domains with the least free capacity first (each taken
 * whole, the last for the rest), not the largest first; every other
 * placement stays best fit. A new tree has it off (best fit only). */
void tas_tree_set_mixed_profile(struct tas_tree *t, bool on);
/* Remove a Node (its capacity goes; usage charged to it is forgotten). */
void tas_tree_node_remove(struct tas_tree *t, const char *node);
/* Charge (sign +1) or release (-1) one pod's usage on a node, e.g. a
 * non-TAS pod bound or nominated to it (it also takes one of the node's
 * "pods"; a "pods" entry in req is ignored). A node not seen yet is remembered
 * and its usage applies once it appears. CU_ENOMEM, CU_ERANGE. */
CU_MUST_CHECK int tas_tree_node_usage(struct tas_tree *t, const char *node,
    const struct tas_amount *req, size_t n_req, int sign, cu_error *err);

/* Charge (+1) or release (-1) an admitted TAS assignment: each domain's
 * count times the per-pod request (and one "pods" per pod) on that leaf.
 * Domains the tree does not know are skipped (a later node event brings them).
 * CU_ERANGE, CU_ENOMEM. */
CU_MUST_CHECK int tas_tree_assignment_usage(struct tas_tree *t,
    const struct api_topology_assignment *a, const struct tas_amount *req,
    size_t n_req, int sign, cu_error *err);

enum tas_mode {
	TAS_REQUIRED = 1,
	TAS_PREFERRED,
	TAS_UNCONSTRAINED,
};

/* ---- which nodes a podSet may use (tas/filter.c) ------------------------ */

/* A toleration, as core/v1: an empty key with `exists` tolerates every
 * taint; an empty effect every effect; otherwise key, effect and (unless
 * `exists`) value must equal the taint's. */
struct tas_toleration {
	const char *key;    /* [borrowed] NULL or "": every key */
	const char *value;  /* [borrowed] NULL: "" */
	const char *effect; /* [borrowed] NULL or "": every effect */
	bool exists;	    /* operator Exists (else Equal) */
};

enum tas_sel_op {
	TAS_SEL_IN = 1,
	TAS_SEL_NOT_IN,
	TAS_SEL_EXISTS,
	TAS_SEL_DOES_NOT_EXIST,
	TAS_SEL_GT,
	TAS_SEL_LT,
	TAS_SEL_NEVER, /* an unknown operator or a bad Gt/Lt value */
};

/* One requirement of a node selector term: on a label, or (`field`,
 * matchFields) on metadata.name. Gt/Lt compare the label's value and
 * values[0] as integers (a label that is not one does not match). */
struct tas_node_req {
	const char *key; /* [borrowed] */
	enum tas_sel_op op;
	const char *const *values; /* [borrowed] */
	size_t n_values;
	bool field;
};

/* One nodeSelector entry: the node's label `key` equals `value`. */
struct tas_label {
	const char *key;   /* [borrowed] */
	const char *value; /* [borrowed] */
};

/* A node selector term: all its requirements hold (an empty term
 * matches no node, as core/v1). */
struct tas_term {
	const struct tas_node_req *reqs; /* [borrowed] */
	size_t n_reqs;
};

/* The nodes a podSet's pods may run on: every NoSchedule/NoExecute taint
 * of the node tolerated by one of the tolerations (the pod template's
 * and the flavor's), every nodeSelector entry equal to the node's
 * label, and, when there are terms (required node affinity), one of
 * them matching. A NULL or empty filter tolerates no taint and selects
 * every node. */
struct tas_filter {
	const struct tas_toleration *tolerations; /* [borrowed] */
	size_t n_tolerations;
	const struct tas_toleration *flavor_tolerations; /* [borrowed] */
	size_t n_flavor_tolerations;
	const struct tas_label *selector; /* [borrowed] nodeSelector */
	size_t n_selector;
	const struct tas_term *terms; /* [borrowed] ORed */
	size_t n_terms;
};

/* Whether a filter (NULL: none) admits a node with these name, labels
 * and taints [all borrowed]. */
bool tas_filter_matches(const struct tas_filter *f, const char *node,
    const struct api_strmap *labels, const struct tas_taint *taints,
    size_t n_taints);
/* Whether f selects on labels (nodeSelector or affinity terms). */
bool tas_filter_selects(const struct tas_filter *f);
/* Whether f tolerates every scheduling taint of taints. */
bool tas_filter_tolerates(
    const struct tas_filter *f, const struct tas_taint *taints, size_t n);

/* A filter parsed from a v1 PodSpec `spec` [borrowed: the strings of *out
 * point into it; keep it alive and unchanged]: its tolerations,
 * nodeSelector and required node affinity terms (matchExpressions and
 * matchFields). *out [owned: tas_filter_free] is NULL when the spec has
 * none of them. CU_ENOMEM. */
CU_MUST_CHECK int tas_filter_parse(
    const json_t *spec, struct tas_filter **out, cu_error *err);
/* Free a filter of tas_filter_parse (NULL: nothing). */
void tas_filter_free(struct tas_filter *f);

/* One slice layer: slices of `size` pods, each inside one domain of
 * node label `level` [borrowed]. */
struct tas_slice_layer {
	const char *level;
	int32_t size;
};

struct tas_request {
	enum tas_mode mode;
	/* [borrowed] node label; for unconstrained: ignored (the lowest
	 * level; the highest when slices are requested, as Kueue) */
	const char *level;
	int32_t count;			  /* pods, >= 1 */
	const struct tas_amount *per_pod; /* [borrowed] */
	size_t n_per_pod;
	/* Slices (podset-slice-required-topology, podset-slice-size): the
	 * pods in slices of slice_size, each slice inside one domain of
	 * slice_level [borrowed], all within the podSet's domain. NULL: no
	 * slices (one pod per slice at the lowest level). */
	const char *slice_level;
	int32_t slice_size;
	/* [borrowed] NULL: every node without a scheduling taint */
	const struct tas_filter *filter;
	/* Inner slice layers (TASMultiLayerTopology: the
	 * podsetSliceRequiredTopologyConstraints after the first, which is
	 * slice_level/slice_size) [borrowed], 0 to 2: each slice of a layer
	 * is made of whole slices of the next one, inside one domain of
	 * that layer's level (strictly below the level before; its size
	 * divides the size before). Needs slice_level. */
	const struct tas_slice_layer *inner;
	size_t n_inner;
};

/* Place a podSet. CU_OK: *out [owned: api_topology_assignment_dispose]
 * holds the leaves and their pod counts, in value order, with Kueue's
 * levels (only the hostname level when the lowest level is
 * kubernetes.io/hostname, else every level). TAS_NOFIT: msg gets
 * Kueue's message (e.g. `topology "default" allows to fit only 3 out of
 * 4 pod(s)`), *out is empty. CU_ENOMEM. The tree is not changed (the
 * caller charges an admitted assignment with tas_tree_assignment_usage). */
CU_MUST_CHECK int tas_place(struct tas_tree *t, const struct tas_request *r,
    struct api_topology_assignment *out, char *msg, size_t msg_len,
    cu_error *err);

/* Place a podSet group (kueue.x-k8s.io/podset-group-name): the
 * `leader` podSet (count 1, its own per-pod requests) and the `workers`
 * podSet together, as Kueue does it: one domain of the workers' level
 * (required or preferred, with their fallback) must hold the leader and
 * the workers, and the leader's node is taken into account when the
 * workers are packed (the leader goes where the workers' capacity loses
 * least). Slices are not allowed in a group (r->slice_level NULL).
 * CU_OK: *workers_out and *leader_out [owned:
 * api_topology_assignment_dispose] as tas_place's. TAS_NOFIT: msg as
 * tas_place's (counted in workers' pods), both empty. CU_EINVAL (leader
 * count not 1, slices), CU_ENOMEM. The tree is not changed. */
CU_MUST_CHECK int tas_place_group(struct tas_tree *t,
    const struct tas_request *workers, const struct tas_request *leader,
    struct api_topology_assignment *workers_out,
    struct api_topology_assignment *leader_out, char *msg, size_t msg_len,
    cu_error *err);

/* Kueue's TASFailedNodeReplacement for one podSet: the pods a [borrowed]
 * (charged in t) placed on node `node` move to other leaves of the
 * domain of r->level that holds the rest of the assignment (the failed
 * node's own when it holds all of it; any domain of that level when the
 * tree no longer knows any), the failed node excluded; per pod as r
 * (r->count is ignored). CU_OK: *out [owned:
 * api_topology_assignment_dispose] is a without the node plus the new
 * leaves, in value order. TAS_NOFIT: no room in that domain (msg says
 * so), *out empty. CU_EINVAL: node not in a. CU_ENOMEM.
 * With slices (r->slice_level), as Kueue: pods that are not whole slices
 * go back, pod by pod, to the slice-level domain whose slice they
 * complete; whole slices are placed again in slices, within the required
 * domain of the rest of the assignment (anywhere the request allows when
 * it is preferred or unconstrained). */
CU_MUST_CHECK int tas_replace(struct tas_tree *t,
    const struct api_topology_assignment *a, const char *node,
    const struct tas_request *r, struct api_topology_assignment *out, char *msg,
    size_t msg_len, cu_error *err);

/* Free capacity of the leaf whose lowest-level value is `value` for
 * resource `res`, or -1 if unknown (tests, diagnostics). */
int64_t tas_tree_leaf_free(
    const struct tas_tree *t, const char *value, const char *res);

/* ---- actuation (tas/ungate.c) ------------------------------------------ */

/* The scheduling gate TAS pods carry until their domain is chosen. */
#define TAS_SCHEDULING_GATE "kueue.x-k8s.io/topology"

/* The domain (index into a->domains) of the pod of rank `rank` (0-based,
 * e.g. its completion index): domains are filled in order, each with its
 * count, as Kueue's ungater assigns ranks. -1 when rank is outside the
 * assignment's pods. */
ssize_t tas_rank_domain(const struct api_topology_assignment *a, int64_t rank);
/* The completion index of a pod with metadata m [borrowed]: its
 * batch.kubernetes.io/job-completion-index label, else the annotation
 * of that name; -1 when it has neither. */
int64_t tas_pod_index(const struct api_meta *m);
/* The rank of the pod with metadata m [borrowed] whose completion index
 * is `index` (-1: none) in a podSet placed as a, as Kueue's ungater
 * ranks a JobSet's pods by its subgroups: with the labels (or
 * annotations) jobset.sigs.k8s.io/job-index J and
 * replicatedjob-replicas R, J times the pods of one Job (a's pods / R)
 * plus the index, so each child Job's pods take consecutive ranks (and a
 * Job the size of a slice is one slice); otherwise the index. -1 when
 * the index is out of its Job's range. */
int64_t tas_pod_rank(const struct api_topology_assignment *a,
    const struct api_meta *m, int64_t index);
/* The domain of a whose values at every level of a a nodeSelector sel
 * [borrowed] names, or -1. */
ssize_t tas_selector_domain(
    const struct api_topology_assignment *a, const struct api_strmap *sel);

/* One live pod of a placed podSet (not finished, not being deleted), as
 * the ungater sees it. */
struct tas_ungate_pod {
	bool gated;	    /* carries TAS_SCHEDULING_GATE */
	int64_t rank;	    /* tas_pod_rank of its index, -1: none */
	int64_t created_ns; /* creationTimestamp (INT64_MIN: none) */
	const char *name;   /* [borrowed] tie-break */
	/* [borrowed] its nodeSelector (an ungated pod's domain), or NULL */
	const struct api_strmap *selector;
	void *payload;	/* [borrowed] the caller's, carried along */
	ssize_t domain; /* out: where a gated pod goes, -1: nowhere */
};

/*
 * Kueue's ungater for one podSet placed as a [borrowed]: every ungated
 * pod of pods[n] takes a place in the domain its nodeSelector names;
 * the gated ones, in order of rank, creation and name, each go to the
 * domain of their rank while it has room, else to the first domain
 * with room; once no domain has room the rest stay gated (domain -1).
 * pods is sorted in place: the gated pods first, in the order their
 * ungate writes are to be sent. CU_ENOMEM.
 */
CU_MUST_CHECK int tas_ungate_plan(const struct api_topology_assignment *a,
    struct tas_ungate_pod *pods, size_t n, cu_error *err);

/* Is a pod pinned to `host` [borrowed] (its nodeSelector's
 * kubernetes.io/hostname) a stray of assignment a [borrowed]: a is at
 * the hostname level and no domain of a is that host (its node was
 * replaced)? */
bool tas_host_stray(const struct api_topology_assignment *a, const char *host);

/* What a node of a placed podSet that failed does to its Workload,
 * given the Workload's status.unhealthyNodes (Kueue's node failure
 * controller with TASFailedNodeReplacement). */
enum tas_failed_action {
	TAS_FAILED_RECORD = 0, /* add it to status.unhealthyNodes */
	TAS_FAILED_REPLACE,    /* listed already: replace it in its domain */
	TAS_FAILED_EVICT,      /* another node failed before: evict */
	TAS_FAILED_KEEP, /* listed: the assignment kept, the list cleared */
	TAS_FAILED_KEPT, /* kept before and still failed: nothing */
};

/* The action for failed node `node` [borrowed] of a Workload whose
 * status.unhealthyNodes is listed [borrowed]; for TAS_FAILED_EVICT the
 * eviction's message (Kueue's words, the listed nodes then node) into
 * msg[len], cut to fit. */
enum tas_failed_action tas_node_failed(
    const struct api_strlist *listed, const char *node, char *msg, size_t len);

/* tas_node_failed for a Workload owned by a single Pod with Kueue's
 * SkipReassignmentForPodOwnedWorkloads (on by default): the Pod cannot
 * move and the Workload ends with it, so a listed node is not replaced
 * (TAS_FAILED_KEEP: the assignment stays as it is and unhealthyNodes is
 * cleared, as Kueue's scheduler clears it); a node whose failure was
 * kept so, in kept [borrowed], asks for nothing more while it stays
 * failed (TAS_FAILED_KEPT, also with another node listed since).
 * Otherwise as tas_node_failed (record, or the eviction for a second
 * failed node). */
enum tas_failed_action tas_node_failed_pod_owned(
    const struct api_strlist *listed, const struct api_strlist *kept,
    const char *node, char *msg, size_t len);

/* Kueue's handleHealthyNode: when node [borrowed] is in listed
 * [borrowed], the list without it into *out (initialised here;
 * api_strlist_dispose it) and true; false (out empty) when it is not
 * listed. CU_ENOMEM leaves out empty and returns false with *nomem. */
bool tas_node_recovered(const struct api_strlist *listed, const char *node,
    struct api_strlist *out, bool *nomem);

/* The nodeSelector that pins a pod to domain `d` of a: one entry per
 * level of the assignment (label -> value), merged into *sel (existing
 * keys replaced). CU_ENOMEM, CU_ERANGE (d out of range). */
CU_MUST_CHECK int tas_domain_selector(const struct api_topology_assignment *a,
    size_t d, struct api_strmap *sel, cu_error *err);

/* ---- v1 objects (tas/objects.c) ---------------------------------------- */

/* Add or update the Node `node` [borrowed] (decoded once,
 * api_node_decode): labels, taints, allocatable (pods in pods, the rest
 * in milli-units) and schedulable = not spec.unschedulable and Ready=True
 * when a Ready condition is present (Kueue needs Ready=True; Nodes
 * without conditions, as simulated ones, count as ready). Its
 * NoSchedule/NoExecute taints keep it from the placements whose filter
 * does not tolerate them. CU_EINVAL (no name), CU_ENOMEM, CU_ERANGE. */
CU_MUST_CHECK int tas_node_apply(
    struct tas_tree *t, const struct api_node *node, cu_error *err);

/* Kueue's NodeFailureDelay: how long a Node stays NotReady before the
 * TAS Workloads assigned to it record it as unhealthy (with the
 * TASReplaceNodeDueToNotReadyOverFixedTime gate, off by default, or
 * without TASReplaceNodeOnPodTermination). */
#define TAS_NODE_FAILURE_DELAY_NS (30LL * 1000000000LL)

enum tas_node_health {
	TAS_NODE_HEALTHY = 0, /* not failed */
	TAS_NODE_WAIT,	      /* NotReady, failed at *due_ns unless Ready */
	TAS_NODE_FAILED,      /* the Workload's pods there are to be moved */
};

/* Kueue's node failure rules and the feature gates that shape them. */
struct tas_health_rules {
	int64_t delay_ns;	 /* NodeFailureDelay */
	bool fixed_delay;	 /* TASReplaceNodeDueToNotReadyOverFixedTime */
	bool on_pod_termination; /* TASReplaceNodeOnPodTermination */
	bool on_taints;		 /* TASReplaceNodeOnNodeTaints */
};

/* What one podSet of a Workload has on the node. */
struct tas_node_usage {
	/* a pod of the Workload bound to the node (spec.nodeName), not
	 * being deleted and not Succeeded or Failed */
	bool progressing;
	/* the podSet's effective tolerations (its template's, its
	 * flavor's, admission checks' podSetUpdates'): a JSON array
	 * [borrowed] or NULL */
	const json_t *tolerations;
};

/*
 * Health of Node `node` [borrowed] (decoded; NULL: deleted) for the
 * podSet u [borrowed] at now_ns, as Kueue's node failure controller
 * judges it with the gates in r [borrowed]:
 *  - deleted: failed;
 *  - Ready condition not True: failed once delay_ns has passed since its
 *    lastTransitionTime (an unparsable or missing time counts as now)
 *    when fixed_delay is on or on_pod_termination off (else *due_ns, when
 *    non-NULL, is set to that time: WAIT); with on_pod_termination,
 *    failed as soon as u has no progressing pod there, healthy while it
 *    has one;
 *  - Ready (or no Ready condition: healthy here, simulated Nodes carry
 *    none; Kueue fails them at once) with on_taints: a NoSchedule or
 *    NoExecute taint no toleration matches fails the node (with
 *    on_pod_termination only once u has no progressing pod there); one
 *    tolerated only with tolerationSeconds fails it once u has no
 *    progressing pod there; tolerations without tolerationSeconds keep
 *    it healthy. Kubernetes' matching: effect (empty: any), key (empty:
 *    any), operator Exists or Equal (the default: same value).
 */
enum tas_node_health tas_node_health(const struct api_node *node,
    const struct tas_node_usage *u, const struct tas_health_rules *r,
    int64_t now_ns, int64_t *due_ns);

/* The node whose capacity Pod `pod` [borrowed; decoded, api_pod_decode]
 * takes [borrowed from pod], or NULL: spec.nodeName when bound, else
 * status.nominatedNodeName (KEP-5278: the scheduler promised it that node;
 * Kueue counts bound pods only); NULL for terminated pods (Succeeded, Failed)
 * and for TAS pods (a kueue.x-k8s.io/podset-*-topology annotation: their usage
 * is their Workload's assignment). */
const char *tas_pod_charged_node(const struct api_pod *pod);

/* Tracker of the charges of non-TAS pods in one tree, by pod uid. */
struct tas_pods;

CU_MUST_CHECK int tas_pods_new(struct tas_pods **out, cu_error *err);
void tas_pods_free(struct tas_pods *p);
size_t tas_pods_count(const struct tas_pods *p);
/* Apply Pod `uid`'s current state (pod [borrowed; decoded, its per-pod
 * requests included], or NULL when deleted): its charge moves to the node
 * tas_pod_charged_node names (released when none, e.g. un-nominated or
 * finished; moved when bound elsewhere than nominated). On failure
 * nothing changed. CU_ENOMEM, CU_ERANGE. */
CU_MUST_CHECK int tas_pods_update(struct tas_pods *p, struct tas_tree *t,
    const char *uid, const struct api_pod *pod, cu_error *err);

#endif /* CU_TAS_TAS_H */
