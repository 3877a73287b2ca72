/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/tas.c - topology-aware scheduling in the controller: the
 * Topology, Node and Pod informers (started once a ResourceFlavor names
 * a topology; they never hold readiness back), one capacity tree per TAS
 * flavor (tas/) fed incrementally from their events, the engine's hook
 * (queues.h que_tas_hook: check and place during the scheduling cycle),
 * the assignments of admitted Workloads (charged to the trees, written in
 * the admission and the ledger, adopted from the status or the ledger
 * after a restart) and the ungater (pods of TAS Workloads lose the
 * kueue.x-k8s.io/topology gate and get their domain's nodeSelector, in
 * rank order).
 *
 * Design notes
 * ------------
 * Workloads with a topologyRequest are known by uid (struct tas_wl) from
 * the moment the engine gets them: the hook reads their request there,
 * and the per-pod requests from the engine's podSet. A placed podSet
 * keeps its assignment and whether it is charged to the current tree of
 * its flavor. A tree is rebuilt (from the caches, then every charged
 * assignment) only when the TAS configuration changes (a flavor, its
 * Topology) or an informer syncs; Node and Pod events change one node's
 * contribution. Charges of Workloads the engine no longer holds are
 * released before each cycle (ctl_tas_before_cycle), so no engine path
 * needs to know about topologies.
 *
 * Event-loop thread only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/json.h"
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

static const struct api_resource res_topo = {
    "kueue.x-k8s.io", "v1beta2", "topologies", false};
static const struct api_resource res_nodes = {"", "v1", "nodes", false};
static const struct api_resource res_pods = {"", "v1", "pods", true};

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
};

struct tas_wl {
	char *uid; /* [owned] map key */
	size_t n;
	struct tas_ps *ps; /* [owned] n */
};

/* ---- small helpers ---------------------------------------------------- */

static bool finished(json_t *pod); /* Succeeded or Failed */
static const char *pinned_host(json_t *pod);

static struct tas_flavor *flavor_find(ctl *c, const char *name)
{
	size_t i;

	for (i = 0; name != NULL && i < c->tas.nfl; i++)
		if (strcmp(c->tas.fl[i].name, name) == 0)
			return &c->tas.fl[i];
	return NULL;
}

static bool informers_synced(const ctl *c)
{
	return c->tas.started && api_informer_synced(c->tas.topo) &&
	       api_informer_synced(c->tas.nodes) &&
	       api_informer_synced(c->tas.pods);
}

static void ps_unplace(ctl *c, struct tas_ps *p)
{
	struct tas_flavor *f;
	cu_error err;

	if (p->charged && (f = flavor_find(c, p->flavor)) != NULL &&
	    f->tree != NULL &&
	    tas_tree_assignment_usage(
		f->tree, &p->a, p->req, p->n_req, -1, &err) != CU_OK)
		cu_warn("topology: %s", err.msg);
	p->charged = false;
	p->placed = false;
	api_topology_assignment_dispose(&p->a);
	json_decref(p->wire);
	p->wire = NULL;
	cu_free(p->flavor);
	p->flavor = NULL;
}

static void ps_reqs_free(struct tas_ps *p)
{
	size_t i;

	for (i = 0; i < p->n_req; i++)
		cu_free((char *)p->req[i].name);
	p->n_req = 0;
}

static void wl_free(ctl *c, struct tas_wl *w)
{
	size_t i;

	for (i = 0; i < w->n; i++) {
		ps_unplace(c, &w->ps[i]);
		ps_reqs_free(&w->ps[i]);
		cu_free(w->ps[i].level);
		cu_free(w->ps[i].slice_level);
		cu_free(w->ps[i].group);
		tas_filter_free(w->ps[i].filter);
		json_decref(w->ps[i].sched);
	}
	cu_free(w->ps);
	cu_free(w->uid);
	cu_free(w);
}

static bool wl_placed(const struct tas_wl *w)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		if (w->ps[i].placed)
			return true;
	return false;
}

static bool wl_has_request(const struct tas_wl *w)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		if (w->ps[i].mode != 0 || w->ps[i].filter != NULL)
			return true;
	return false;
}

static struct tas_wl *wl_get_or_new(ctl *c, const char *uid, size_t n)
{
	struct tas_wl *w = cu_map_get(&c->tas.wls, uid);

	if (w != NULL && w->n >= n)
		return w;
	if (w != NULL) {
		struct tas_ps *ps = cu_realloc(w->ps, n * sizeof(*ps));

		if (ps == NULL)
			return NULL;
		memset(ps + w->n, 0, (n - w->n) * sizeof(*ps));
		w->ps = ps;
		w->n = n;
		return w;
	}
	w = cu_calloc(1, sizeof(*w));
	if (w == NULL || (w->uid = cu_strdup(uid)) == NULL ||
	    (w->ps = cu_calloc(n ? n : 1, sizeof(*w->ps))) == NULL ||
	    cu_map_put(&c->tas.wls, w->uid, w, NULL) != CU_OK) {
		if (w != NULL) {
			cu_free(w->ps);
			cu_free(w->uid);
		}
		cu_free(w);
		return NULL;
	}
	w->n = n;
	return w;
}

/* The per-pod requests of podSet i of qw (the pods slot left out: the
 * tree counts pods itself). */
static size_t per_pod(ctl *c, const struct que_wl *qw, size_t i,
    struct tas_amount *out, size_t cap)
{
	const struct que_podset *ps = &qw->podsets[i];
	size_t n = 0, j;

	for (j = 0; j < ps->n_spec_req && n < cap; j++) {
		out[n].name = que_resource_name(c->st, ps->req[j].res);
		out[n++].value = ps->req[j].per_pod;
	}
	return n;
}

static int ps_set_reqs(
    ctl *c, struct tas_ps *p, const struct que_wl *qw, size_t i, cu_error *err)
{
	struct tas_amount tmp[TAS_MAX_RESOURCES];
	size_t n = per_pod(c, qw, i, tmp, TAS_MAX_RESOURCES), k;

	ps_reqs_free(p);
	for (k = 0; k < n; k++) {
		p->req[k].value = tmp[k].value;
		p->req[k].name = cu_strdup(tmp[k].name ? tmp[k].name : "");
		if (p->req[k].name == NULL) {
			p->n_req = k;
			return cu_error_set(
			    err, CU_ENOMEM, "topology: out of memory");
		}
	}
	p->n_req = n;
	return CU_OK;
}

/* Charge p to its flavor's tree (when built). */
static void ps_charge(ctl *c, struct tas_ps *p)
{
	struct tas_flavor *f = flavor_find(c, p->flavor);
	cu_error err;

	if (!p->placed || p->charged || f == NULL || f->tree == NULL)
		return;
	if (tas_tree_assignment_usage(
		f->tree, &p->a, p->req, p->n_req, 1, &err) != CU_OK) {
		cu_warn("topology: %s", err.msg);
		return;
	}
	p->charged = true;
}

/* ---- the engine's hook ------------------------------------------------ */

static bool tas_only_cq(ctl *c, const struct que_wl *wl)
{
	return wl->cq != NULL &&
	       ctl_keys_get(&c->tas.tas_only, CTL_K1(wl->cq->name)) != NULL;
}

/* The request of podSet i of wl in flavor f: *mode (0: not a TAS
 * placement) and *level; 1 with msg when the flavor cannot serve it. */
static int request_of(ctl *c, const struct que_wl *wl, size_t i,
    struct tas_flavor *f, const char *fname, enum tas_mode *mode,
    const char **level, char *msg, size_t len)
{
	struct tas_wl *w = cu_map_get(&c->tas.wls, wl->uid);

	*mode = w != NULL && i < w->n ? w->ps[i].mode : 0;
	*level = w != NULL && i < w->n ? w->ps[i].level : NULL;
	if (*mode == 0) {
		if (f == NULL)
			return 0;
		if (tas_only_cq(c, wl)) {
			*mode = TAS_UNCONSTRAINED; /* implied */
			return 0;
		}
		snprintf(msg, len,
		    "Flavor \"%s\" supports only TopologyAwareScheduling",
		    fname);
		return 1;
	}
	if (f == NULL) {
		snprintf(msg, len,
		    "Flavor \"%s\" does not support TopologyAwareScheduling",
		    fname);
		return 1;
	}
	if (f->tree == NULL) {
		snprintf(msg, len,
		    "Flavor \"%s\" information missing in TAS cache", fname);
		return 1;
	}
	return 0;
}

/* The nodes podSet p (NULL: none known) may use in flavor f: its pod
 * template's filter and the flavor's tolerations, into *out (borrowing
 * from both). The flavor's nodeLabels are not added: only Nodes that
 * carry them are in f's tree. */
static void filter_of(
    const struct tas_flavor *f, const struct tas_ps *p, struct tas_filter *out)
{
	memset(out, 0, sizeof(*out));
	if (p != NULL && p->filter != NULL)
		*out = *p->filter;
	if (f != NULL && f->tols_f != NULL) {
		out->flavor_tolerations = f->tols_f->tolerations;
		out->n_flavor_tolerations = f->tols_f->n_tolerations;
	}
}

/* The outcome of a placement in flavor f: an error (err) is a NoFit
 * with its message; a level the Topology lacks (tas_place says so before
 * looking at any capacity) is worded per flavor, as Kueue's flavor
 * assigner does. */
static int placed(const struct tas_flavor *f, int rc, const cu_error *err,
    char *msg, size_t len)
{
	if (rc != CU_OK && rc != TAS_NOFIT) {
		snprintf(msg, len, "%s", err->msg);
		return TAS_NOFIT;
	}
	if (rc == TAS_NOFIT &&
	    strncmp(msg, NO_LEVEL, sizeof(NO_LEVEL) - 1) == 0)
		snprintf(msg, len,
		    "Flavor \"%s\" does not contain the requested level",
		    f->name);
	return rc;
}

static int place(ctl *c, struct tas_flavor *f, const struct que_wl *wl,
    size_t i, enum tas_mode mode, const char *level, int32_t count,
    struct api_topology_assignment *out, char *msg, size_t len)
{
	struct tas_wl *w = cu_map_get(&c->tas.wls, wl->uid);
	const struct tas_ps *p = w != NULL && i < w->n ? &w->ps[i] : NULL;
	struct tas_amount req[TAS_MAX_RESOURCES];
	struct tas_filter filter;
	struct tas_request r;
	cu_error err;
	int rc;

	filter_of(f, p, &filter);
	r.mode = mode;
	r.level = level;
	r.count = count;
	r.per_pod = req;
	r.n_per_pod = per_pod(c, wl, i, req, TAS_MAX_RESOURCES);
	r.slice_level = p != NULL ? p->slice_level : NULL;
	r.slice_size = p != NULL ? p->slice_size : 0;
	r.filter = &filter;
	rc = tas_place(f->tree, &r, out, msg, len, &err);
	return placed(f, rc, &err, msg, len);
}

/* The other podSet of podSet i's group (podSetGroupName), or -1. */
static ssize_t group_partner(ctl *c, const struct que_wl *wl, size_t i)
{
	struct tas_wl *w = cu_map_get(&c->tas.wls, wl->uid);
	size_t j;

	if (w == NULL || i >= w->n || w->ps[i].group == NULL)
		return -1;
	for (j = 0; j < w->n && j < wl->n_podsets; j++)
		if (j != i && w->ps[j].group != NULL &&
		    strcmp(w->ps[j].group, w->ps[i].group) == 0)
			return (ssize_t)j;
	return -1;
}

/* Place podSets i and j of wl (one group) together in flavor f, with
 * ci and cj pods: as Kueue's findLeaderAndWorkers, the first of the two
 * in podSet order is the workers' podSet unless it has fewer pods than
 * the second, which is then the leader. *ai, *aj: their assignments. */
static int place_group(ctl *c, struct tas_flavor *f, const struct que_wl *wl,
    size_t i, size_t j, int32_t ci, int32_t cj,
    struct api_topology_assignment *ai, struct api_topology_assignment *aj,
    char *msg, size_t len)
{
	struct tas_amount rw[TAS_MAX_RESOURCES], rl[TAS_MAX_RESOURCES];
	struct tas_request w, l;
	struct tas_wl *tw = cu_map_get(&c->tas.wls, wl->uid);
	struct tas_filter fw, fl;
	size_t wi = i < j ? i : j, li = i < j ? j : i;
	int32_t cw = i < j ? ci : cj, cl = i < j ? cj : ci;
	struct api_topology_assignment aw, al;
	const char *level;
	enum tas_mode mode;
	cu_error err;
	int rc;

	if (cl > cw) {
		size_t t = wi;
		int32_t tc = cw;

		wi = li, li = t;
		cw = cl, cl = tc;
	}
	if (request_of(c, wl, wi, f, f->name, &mode, &level, msg, len))
		return TAS_NOFIT;
	w.mode = mode;
	w.level = level;
	w.count = cw;
	w.per_pod = rw;
	w.n_per_pod = per_pod(c, wl, wi, rw, TAS_MAX_RESOURCES);
	w.slice_level = NULL;
	w.slice_size = 0;
	filter_of(f, tw != NULL && wi < tw->n ? &tw->ps[wi] : NULL, &fw);
	w.filter = &fw;
	l = w;
	l.count = cl;
	l.per_pod = rl;
	l.n_per_pod = per_pod(c, wl, li, rl, TAS_MAX_RESOURCES);
	filter_of(f, tw != NULL && li < tw->n ? &tw->ps[li] : NULL, &fl);
	l.filter = &fl;
	rc = tas_place_group(f->tree, &w, &l, &aw, &al, msg, len, &err);
	rc = placed(f, rc, &err, msg, len);
	if (rc != CU_OK)
		return rc;
	*ai = wi == i ? aw : al;
	*aj = wi == i ? al : aw;
	return CU_OK;
}

static int hook_check(void *ctx, const struct que_wl *wl, size_t podset,
    const struct que_flavor *fl, int32_t count, char *msg, size_t len)
{
	ctl *c = ctx;
	struct tas_flavor *f = flavor_find(c, fl->name);
	struct api_topology_assignment a, b;
	enum tas_mode mode;
	const char *level;
	ssize_t j;
	int rc;

	if (request_of(c, wl, podset, f, fl->name, &mode, &level, msg, len))
		return 2; /* the flavor cannot serve it: NoMatchingFlavor */
	if (mode == 0 || count < 1)
		return 0;
	j = group_partner(c, wl, podset);
	if (j >= 0 && wl->podsets[j].count >= 1) {
		/* the group in this flavor, with the other podSet's pods */
		rc = place_group(c, f, wl, podset, (size_t)j, count,
		    wl->podsets[j].count, &a, &b, msg, len);
		if (rc == CU_OK)
			api_topology_assignment_dispose(&b);
	} else {
		rc = place(c, f, wl, podset, mode, level, count, &a, msg, len);
	}
	if (rc == CU_OK)
		api_topology_assignment_dispose(&a);
	if (rc != CU_OK && strstr(msg, "does not contain the requested level"))
		return 2;
	return rc == CU_OK ? 0 : 1;
}

/* Give back (sign -1) or charge again (+1) the topology usage in flavor
 * f of the Workloads gone[0..n_gone), or with `empty` of every Workload
 * charged there. The same set both ways: nothing else runs between. */
static void usage_of(ctl *c, struct tas_flavor *f,
    const struct que_wl *const *gone, size_t n_gone, bool empty, int sign)
{
	cu_map_iter it = CU_MAP_ITER_INIT;
	struct tas_wl *w;
	size_t g = 0, i;
	void *v;
	cu_error err;

	for (;;) {
		if (empty) {
			if (!cu_map_next(&c->tas.wls, &it, NULL, &v))
				break;
			w = v;
		} else {
			if (g == n_gone)
				break;
			w = cu_map_get(&c->tas.wls, gone[g++]->uid);
			if (w == NULL)
				continue;
		}
		for (i = 0; i < w->n; i++) {
			struct tas_ps *p = &w->ps[i];

			if (!p->charged || p->flavor == NULL ||
			    strcmp(p->flavor, f->name) != 0)
				continue;
			if (tas_tree_assignment_usage(f->tree, &p->a, p->req,
				p->n_req, sign, &err) != CU_OK)
				cu_warn("topology: %s", err.msg);
		}
	}
}

/* The hook's check_without (TAS preemption): hook_check (a podSet group
 * placed together) with the topology usage of gone (or, with `empty`, of every
 * admitted Workload) released for the time of the placement; the tree is as it
 * was when it returns. */
static int hook_check_without(void *ctx, const struct que_wl *wl, size_t podset,
    const struct que_flavor *fl, int32_t count,
    const struct que_wl *const *gone, size_t n_gone, bool empty, char *msg,
    size_t len)
{
	ctl *c = ctx;
	struct tas_flavor *f = flavor_find(c, fl->name);
	enum tas_mode mode;
	const char *level;
	int rc;

	if (request_of(c, wl, podset, f, fl->name, &mode, &level, msg, len))
		return 1;
	if (mode == 0 || count < 1)
		return 0;
	usage_of(c, f, gone, n_gone, empty, -1);
	rc = hook_check(ctx, wl, podset, fl, count, msg, len);
	usage_of(c, f, gone, n_gone, empty, 1);
	return rc;
}

/* Charge (+1) or release (-1) podSet i's placement a [borrowed] in
 * flavor while the Workload's other podSets are placed, as Kueue's
 * assumed usage: they do not take the same capacity. */
static bool tmp_charge(ctl *c, const struct que_wl *wl, size_t i,
    const char *flavor, const struct api_topology_assignment *a, int sign)
{
	struct tas_flavor *f = flavor_find(c, flavor);
	struct tas_amount req[TAS_MAX_RESOURCES];
	size_t n = per_pod(c, wl, i, req, TAS_MAX_RESOURCES);
	cu_error err;

	if (f == NULL || f->tree == NULL)
		return false;
	if (tas_tree_assignment_usage(f->tree, a, req, n, sign, &err) !=
	    CU_OK) {
		cu_warn("topology: %s", err.msg);
		return false;
	}
	return true;
}

static int hook_assume(void *ctx, const struct que_wl *wl,
    const char *const *flavors, const int32_t *counts, char *msg, size_t len)
{
	ctl *c = ctx;
	struct api_topology_assignment a[TAS_PODSETS_MAX];
	bool got[TAS_PODSETS_MAX] = {false}, tmp[TAS_PODSETS_MAX] = {false};
	struct tas_wl *w = NULL;
	size_t i, n = wl->n_podsets < TAS_PODSETS_MAX ? wl->n_podsets
						      : TAS_PODSETS_MAX;
	int rc = 0;
	cu_error err;

	for (i = 0; i < n && rc == 0; i++) {
		struct tas_flavor *f = flavor_find(c, flavors[i]);
		enum tas_mode mode;
		const char *level;
		ssize_t j;

		if (flavors[i] == NULL || counts[i] < 1 || got[i])
			continue;
		if (request_of(
			c, wl, i, f, flavors[i], &mode, &level, msg, len)) {
			rc = 1;
			break;
		}
		if (mode == 0)
			continue;
		j = group_partner(c, wl, i);
		if (j >= 0 && (size_t)j < n && flavors[j] != NULL &&
		    counts[j] >= 1) {
			/* a podSet group: placed together, in one flavor */
			if (strcmp(flavors[i], flavors[j]) != 0) {
				struct tas_wl *gw =
				    cu_map_get(&c->tas.wls, wl->uid);

				snprintf(msg, len,
				    "podSet group \"%s\": podSets %s and %s "
				    "assigned different flavors",
				    gw->ps[i].group,
				    wl->podsets[i].name ? wl->podsets[i].name
							: "",
				    wl->podsets[j].name ? wl->podsets[j].name
							: "");
				rc = 1;
				break;
			}
			if (place_group(c, f, wl, i, (size_t)j, counts[i],
				counts[j], &a[i], &a[j], msg, len) != CU_OK) {
				rc = 1;
				break;
			}
			got[i] = got[j] = true;
			tmp[i] = tmp_charge(c, wl, i, flavors[i], &a[i], 1);
			tmp[j] =
			    tmp_charge(c, wl, (size_t)j, flavors[j], &a[j], 1);
			continue;
		}
		if (place(c, f, wl, i, mode, level, counts[i], &a[i], msg,
			len) != CU_OK) {
			rc = 1;
			break;
		}
		got[i] = true;
		tmp[i] = tmp_charge(c, wl, i, flavors[i], &a[i], 1);
	}
	for (i = 0; i < n; i++)
		if (tmp[i])
			tmp_charge(c, wl, i, flavors[i], &a[i], -1);
	if (rc == 0)
		w = wl_get_or_new(c, wl->uid, wl->n_podsets);
	for (i = 0; i < n; i++) {
		struct tas_ps *p;

		if (!got[i])
			continue;
		if (rc != 0 || w == NULL) {
			api_topology_assignment_dispose(&a[i]);
			continue;
		}
		p = &w->ps[i];
		ps_unplace(c, p);
		p->flavor = cu_strdup(flavors[i]);
		p->a = a[i];
		p->placed = true;
		if (p->flavor == NULL ||
		    ps_set_reqs(c, p, wl, i, &err) != CU_OK ||
		    api_topology_assignment_encode(&p->wire, &p->a, &err) !=
			CU_OK) {
			ps_unplace(c, p);
			rc = 1;
			snprintf(msg, len, "topology: out of memory");
			continue;
		}
		ps_charge(c, p);
	}
	if (rc != 0 && w != NULL)
		for (i = 0; i < w->n; i++)
			ps_unplace(c, &w->ps[i]);
	return rc;
}

/* ---- trees ------------------------------------------------------------ */

static bool node_matches(const struct tas_flavor *f, json_t *node)
{
	json_t *labels =
	    json_object_get(json_object_get(node, "metadata"), "labels");
	const char *k;
	json_t *v;

	json_object_foreach(f->labels, k, v)
	{
		if (!json_equal(json_object_get(labels, k), v))
			return false;
	}
	return true;
}

static void node_into(ctl *c, struct tas_flavor *f, json_t *node)
{
	cu_error err;

	(void)c;
	if (f->tree == NULL)
		return;
	if (!node_matches(f, node)) {
		const char *name = ctl_jmeta(node, "name");

		if (name != NULL)
			tas_tree_node_remove(f->tree, name);
		return;
	}
	if (tas_node_apply(f->tree, node, &err) != CU_OK)
		cu_warn("topology %s: node: %s", f->topology, err.msg);
}

struct each {
	ctl *c;
	struct tas_flavor *f;
};

static void each_node(json_t *obj, void *payload)
{
	struct each *e = payload;

	node_into(e->c, e->f, obj);
}

static void each_pod(json_t *obj, void *payload)
{
	struct each *e = payload;
	const char *uid = ctl_jmeta(obj, "uid");
	cu_error err;

	if (uid != NULL &&
	    tas_pods_update(e->f->pods, e->f->tree, uid, obj, &err) != CU_OK)
		cu_warn("topology %s: pod: %s", e->f->topology, err.msg);
}

static void flavor_drop_tree(struct tas_flavor *f)
{
	tas_pods_free(f->pods);
	tas_tree_free(f->tree);
	f->pods = NULL;
	f->tree = NULL;
}

/* Build f's tree from the caches (when its Topology is known). */
static void flavor_build(ctl *c, struct tas_flavor *f)
{
	json_t *topo = api_informer_get(c->tas.topo, NULL, f->topology);
	json_t *levels =
	    json_object_get(json_object_get(topo, "spec"), "levels");
	const char *names[16];
	struct each e = {c, f};
	size_t n = 0, i;
	json_t *lv;
	cu_error err;

	flavor_drop_tree(f);
	json_array_foreach(levels, i, lv)
	{
		const char *l = api_json_str(lv, "nodeLabel");

		if (l != NULL && n < 16)
			names[n++] = l;
	}
	if (n == 0)
		return;
	if (tas_tree_new(f->topology, names, n, &f->tree, &err) != CU_OK ||
	    tas_pods_new(&f->pods, &err) != CU_OK) {
		cu_warn("topology %s: %s", f->topology, err.msg);
		flavor_drop_tree(f);
		return;
	}
	tas_tree_set_mixed_profile(
	    f->tree, c->cfg == NULL || c->cfg->tas_gates.profile_mixed);
	api_informer_foreach(c->tas.nodes, each_node, &e);
	api_informer_foreach(c->tas.pods, each_pod, &e);
}

static void rebuild(ctl *c)
{
	cu_map_iter it = CU_MAP_ITER_INIT;
	void *v;
	size_t i;

	c->tas.dirty_rebuild = false;
	/* trees go first: nothing is charged to the new ones yet */
	while (cu_map_next(&c->tas.wls, &it, NULL, &v)) {
		struct tas_wl *w = v;

		for (i = 0; i < w->n; i++)
			w->ps[i].charged = false;
	}
	for (i = 0; i < c->tas.nfl; i++) {
		if (informers_synced(c))
			flavor_build(c, &c->tas.fl[i]);
		else
			flavor_drop_tree(&c->tas.fl[i]);
	}
	it = CU_MAP_ITER_INIT;
	while (cu_map_next(&c->tas.wls, &it, NULL, &v)) {
		struct tas_wl *w = v;

		for (i = 0; i < w->n; i++)
			ps_charge(c, &w->ps[i]);
	}
	que_tas_capacity_changed(c->st);
	c->dirty_cycle = true;
}

/* ---- informers -------------------------------------------------------- */

static void capacity_changed(ctl *c)
{
	que_tas_capacity_changed(c->st);
	c->dirty_cycle = true;
}

static void node_event(json_t *obj, bool deleted, void *payload)
{
	ctl *c = payload;
	const char *name = ctl_jmeta(obj, "name");
	size_t i;

	for (i = 0; i < c->tas.nfl; i++) {
		struct tas_flavor *f = &c->tas.fl[i];

		if (f->tree == NULL)
			continue;
		if (deleted) {
			if (name != NULL)
				tas_tree_node_remove(f->tree, name);
		} else {
			node_into(c, f, obj);
		}
	}
	c->tas.dirty_nodes = true;
	capacity_changed(c);
}

static void node_add(json_t *obj, void *payload)
{
	node_event(obj, false, payload);
}

static void node_update(json_t *old, json_t *obj, void *payload)
{
	(void)old;
	node_event(obj, false, payload);
}

static void node_delete(json_t *obj, void *payload)
{
	node_event(obj, true, payload);
}

static bool has_gate(json_t *pod)
{
	json_t *g;
	size_t i;

	json_array_foreach(
	    json_object_get(json_object_get(pod, "spec"), "schedulingGates"), i,
	    g)
	{
		const char *n = api_json_str(g, "name");

		if (n != NULL && strcmp(n, TAS_SCHEDULING_GATE) == 0)
			return true;
	}
	return false;
}

static const char *pod_ann(json_t *pod, const char *key)
{
	return api_json_str(
	    json_object_get(json_object_get(pod, "metadata"), "annotations"),
	    key);
}

/* The pods of one Workload (by name) in the pod cache. */
struct tas_wl_pods {
	char *key; /* [owned] map key */
	ctl_keys names;
};

static void wl_pods_free(struct tas_wl_pods *e)
{
	ctl_keys_dispose(&e->names);
	cu_free(e->key);
	cu_free(e);
}

/* Keep the ungater's index of pod [borrowed] up to date. */
static void index_pod(ctl *c, json_t *pod, bool deleted)
{
	const char *wl = pod_ann(pod, ANN_WORKLOAD);
	const char *ns = ctl_jmeta(pod, "namespace");
	const char *name = ctl_jmeta(pod, "name");
	struct tas_wl_pods *e;
	char *key;

	if (wl == NULL || ns == NULL || name == NULL ||
	    (key = cu_asprintf("%s\x1f%s", ns, wl)) == NULL)
		return;
	e = cu_map_get(&c->tas.pods_by_wl, key);
	if (deleted) {
		if (e != NULL && ctl_keys_del(&e->names, CTL_K1(name)) &&
		    ctl_keys_count(&e->names) == 0) {
			cu_map_del(&c->tas.pods_by_wl, key);
			wl_pods_free(e);
		}
		cu_free(key);
		return;
	}
	if (e == NULL) {
		e = cu_calloc(1, sizeof(*e));
		if (e == NULL ||
		    cu_map_put(&c->tas.pods_by_wl, key, e, NULL) != CU_OK) {
			cu_free(e);
			cu_free(key);
			return;
		}
		e->key = key;
		key = NULL;
		ctl_keys_init(&e->names, 1);
	}
	cu_free(key);
	(void)ctl_keys_put(&e->names, CTL_K1(name));
}

static void pod_event(json_t *obj, bool deleted, void *payload)
{
	ctl *c = payload;
	const char *uid = ctl_jmeta(obj, "uid");
	const char *wl = pod_ann(obj, ANN_WORKLOAD);
	size_t i;
	cu_error err;

	if (uid == NULL)
		return;
	for (i = 0; i < c->tas.nfl; i++) {
		struct tas_flavor *f = &c->tas.fl[i];

		if (f->tree != NULL && tas_pods_update(f->pods, f->tree, uid,
					   deleted ? NULL : obj, &err) != CU_OK)
			cu_warn("topology %s: pod: %s", f->topology, err.msg);
	}
	if (deleted || tas_pod_charged_node(obj) == NULL)
		capacity_changed(c);
	index_pod(c, obj, deleted);
	/* Kueue's node failure controller looks at a node again when a
	 * TAS pod bound there ends or goes (TASReplaceNodeOnPodTermination),
	 * and when an ungated pod waits for its host (a stray one) */
	if (wl != NULL &&
	    api_json_str(json_object_get(obj, "spec"), "nodeName") != NULL &&
	    (deleted || finished(obj) ||
		ctl_jmeta(obj, "deletionTimestamp") != NULL))
		c->tas.dirty_nodes = true;
	if (wl != NULL && !deleted && pinned_host(obj) != NULL) {
		const char *ns = ctl_jmeta(obj, "namespace");

		(void)ctl_keys_put(&c->tas.strays, CTL_K2(ns ? ns : "", wl));
	}
	if (deleted || finished(obj))
		ctl_keys_del(&c->tas.terminating, CTL_K1(uid));
	if (deleted || !has_gate(obj))
		ctl_keys_del(&c->tas.ungating, CTL_K1(uid));
	if (!deleted && wl != NULL && has_gate(obj)) {
		const char *ns = ctl_jmeta(obj, "namespace");

		(void)ctl_keys_put(
		    &c->tas.dirty_ungate, CTL_K2(ns ? ns : "", wl));
	}
}

static void pod_add(json_t *obj, void *payload)
{
	pod_event(obj, false, payload);
}

static void pod_update(json_t *old, json_t *obj, void *payload)
{
	(void)old;
	pod_event(obj, false, payload);
}

static void pod_delete(json_t *obj, void *payload)
{
	pod_event(obj, true, payload);
}

static void topo_event(json_t *obj, void *payload)
{
	ctl *c = payload;

	(void)obj;
	c->tas.dirty_rebuild = true;
	c->dirty_cycle = true;
}

static void topo_update(json_t *old, json_t *obj, void *payload)
{
	(void)old;
	topo_event(obj, payload);
}

static void synced(void *payload)
{
	ctl *c = payload;

	c->tas.dirty_rebuild = true;
	c->dirty_cycle = true;
}

static int start_informers(ctl *c, cu_error *err)
{
	static const struct api_informer_handlers th = {
	    topo_event, topo_update, topo_event, synced};
	static const struct api_informer_handlers nh = {
	    node_add, node_update, node_delete, synced};
	static const struct api_informer_handlers ph = {
	    pod_add, pod_update, pod_delete, synced};
	int rc;

	rc = api_informer_new(
	    &c->tas.topo, c->client, &res_topo, NULL, NULL, NULL, &th, c, err);
	if (rc == CU_OK)
		rc = api_informer_new(&c->tas.nodes, c->client, &res_nodes,
		    NULL, NULL, NULL, &nh, c, err);
	if (rc == CU_OK)
		rc = api_informer_new(&c->tas.pods, c->client, &res_pods, NULL,
		    NULL, NULL, &ph, c, err);
	if (rc == CU_OK)
		rc = api_informer_compact(c->tas.pods);
	if (rc == CU_OK)
		c->tas.started = true;
	return rc;
}

/* ---- configuration ------------------------------------------------------ */

struct cfg_scan {
	struct tas_flavor *fl;
	size_t n, cap;
	bool nomem;
};

static void scan_rf(json_t *obj, void *payload)
{
	struct cfg_scan *s = payload;
	json_t *spec = json_object_get(obj, "spec");
	const char *topo = api_json_str(spec, "topologyName");
	const char *name = ctl_jmeta(obj, "name");
	struct tas_flavor *f;
	cu_error err;

	if (topo == NULL || name == NULL || s->nomem)
		return;
	if (cu_grow((void **)&s->fl, &s->cap, s->n + 1, sizeof(*s->fl))) {
		s->nomem = true;
		return;
	}
	f = &s->fl[s->n];
	memset(f, 0, sizeof(*f));
	f->name = cu_strdup(name);
	f->topology = cu_strdup(topo);
	f->labels = json_deep_copy(json_object_get(spec, "nodeLabels"));
	if (json_array_size(json_object_get(spec, "tolerations")) > 0)
		f->tols = json_pack("{s:o}", "tolerations",
		    json_deep_copy(json_object_get(spec, "tolerations")));
	if (f->name == NULL || f->topology == NULL ||
	    (json_array_size(json_object_get(spec, "tolerations")) > 0 &&
		f->tols == NULL) ||
	    tas_filter_parse(f->tols, &f->tols_f, &err) != CU_OK) {
		cu_free(f->name);
		cu_free(f->topology);
		json_decref(f->labels);
		json_decref(f->tols);
		s->nomem = true;
		return;
	}
	s->n++;
}

static int cmp_flavor(const void *a, const void *b)
{
	return strcmp(((const struct tas_flavor *)a)->name,
	    ((const struct tas_flavor *)b)->name);
}

static bool same_flavors(const struct tas_flavor *a, size_t na,
    const struct tas_flavor *b, size_t nb)
{
	size_t i;

	if (na != nb)
		return false;
	for (i = 0; i < na; i++)
		if (strcmp(a[i].name, b[i].name) != 0 ||
		    strcmp(a[i].topology, b[i].topology) != 0 ||
		    !((a[i].labels == NULL && b[i].labels == NULL) ||
			json_equal(a[i].labels, b[i].labels)) ||
		    !((a[i].tols == NULL && b[i].tols == NULL) ||
			json_equal(a[i].tols, b[i].tols)))
			return false;
	return true;
}

static void flavors_free(struct tas_flavor *fl, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		flavor_drop_tree(&fl[i]);
		cu_free(fl[i].name);
		cu_free(fl[i].topology);
		json_decref(fl[i].labels);
		tas_filter_free(fl[i].tols_f);
		json_decref(fl[i].tols);
	}
	cu_free(fl);
}

static void scan_cq(json_t *obj, void *payload)
{
	ctl *c = payload;
	const char *name = ctl_jmeta(obj, "name");
	json_t *g, *f;
	size_t i, k, n = 0;
	bool all = true;

	json_array_foreach(
	    json_object_get(json_object_get(obj, "spec"), "resourceGroups"), i,
	    g)
	{
		json_array_foreach(json_object_get(g, "flavors"), k, f)
		{
			n++;
			if (flavor_find(c, api_json_str(f, "name")) == NULL)
				all = false;
		}
	}
	if (name != NULL && n > 0 && all)
		(void)ctl_keys_put(&c->tas.tas_only, CTL_K1(name));
}

void ctl_tas_sync_config(ctl *c)
{
	struct cfg_scan s = {NULL, 0, 0, false};
	cu_error err;

	api_informer_foreach(c->inf[INF_RF], scan_rf, &s);
	if (s.nomem) {
		flavors_free(s.fl, s.n);
		cu_warn("topology: out of memory");
		return;
	}
	if (s.n > 1)
		qsort(s.fl, s.n, sizeof(*s.fl), cmp_flavor);
	if (same_flavors(s.fl, s.n, c->tas.fl, c->tas.nfl)) {
		flavors_free(s.fl, s.n);
	} else {
		flavors_free(c->tas.fl, c->tas.nfl);
		c->tas.fl = s.fl;
		c->tas.nfl = s.n;
		c->tas.dirty_rebuild = true;
	}
	ctl_keys_dispose(&c->tas.tas_only);
	ctl_keys_init(&c->tas.tas_only, 1);
	if (c->tas.nfl > 0)
		api_informer_foreach(c->inf[INF_CQ], scan_cq, c);
	if (c->tas.nfl > 0 && !c->tas.started) {
		cu_info("topology-aware scheduling: %zu flavor(s) name a "
			"topology; watching Topologies, Nodes and Pods",
		    c->tas.nfl);
		if (start_informers(c, &err) != CU_OK)
			cu_warn("topology: %s", err.msg);
	}
	if (c->tas.nfl > 0) {
		c->tas.hook.ctx = c;
		c->tas.hook.check = hook_check;
		c->tas.hook.assume = hook_assume;
		c->tas.hook.check_without = hook_check_without;
		que_set_tas_hook(c->st, &c->tas.hook);
	} else {
		que_set_tas_hook(c->st, NULL);
	}
}

/* ---- Workloads -------------------------------------------------------- */

/* The flavor podSet assignment psa [borrowed] uses for its TAS
 * placement [borrowed]: the first of its flavors that is a TAS flavor,
 * else the first. */
static const char *psa_flavor(ctl *c, const struct api_podset_assignment *psa)
{
	size_t i;

	for (i = 0; i < psa->flavors.n; i++)
		if (flavor_find(c, psa->flavors.items[i].value) != NULL)
			return psa->flavors.items[i].value;
	return psa->flavors.n ? psa->flavors.items[0].value : NULL;
}

/* Adopt podSet i's assignment wire [borrowed] in flavor [borrowed]. */
static void adopt(ctl *c, struct tas_wl *w, size_t i, const struct que_wl *qw,
    const char *flavor, const json_t *wire)
{
	struct tas_ps *p = &w->ps[i];
	struct api_topology_assignment a;
	cu_error err;

	if (p->placed && p->wire != NULL && json_equal(p->wire, wire) &&
	    p->flavor != NULL && flavor != NULL &&
	    strcmp(p->flavor, flavor) == 0)
		return; /* ours already */
	ps_unplace(c, p);
	if (flavor == NULL ||
	    api_topology_assignment_decode(&a, wire, &err) != CU_OK) {
		if (flavor != NULL)
			cu_warn("workload %s/%s: topologyAssignment: %s",
			    qw->ns, qw->name, err.msg);
		return;
	}
	p->a = a;
	p->placed = true;
	p->flavor = cu_strdup(flavor);
	p->wire = json_deep_copy(wire);
	if (p->flavor == NULL || p->wire == NULL ||
	    ps_set_reqs(c, p, qw, i, &err) != CU_OK) {
		ps_unplace(c, p);
		return;
	}
	ps_charge(c, p);
}

/* The scheduling fields of a pod template [borrowed] that decide which
 * nodes its pods may use (tolerations, nodeSelector, required node
 * affinity), copied [owned], or NULL when it has none. */
static json_t *sched_of(const json_t *template)
{
	json_t *spec = json_object_get(template, "spec");
	json_t *tols = json_object_get(spec, "tolerations");
	json_t *sel = json_object_get(spec, "nodeSelector");
	json_t *req = json_object_get(
	    json_object_get(json_object_get(spec, "affinity"), "nodeAffinity"),
	    "requiredDuringSchedulingIgnoredDuringExecution");
	json_t *o;

	if (json_array_size(tols) == 0 && json_object_size(sel) == 0 &&
	    req == NULL)
		return NULL;
	o = json_object();
	if (o == NULL)
		return NULL;
	if ((json_array_size(tols) > 0 && json_object_set_new(o, "tolerations",
					      json_deep_copy(tols)) != 0) ||
	    (json_object_size(sel) > 0 && json_object_set_new(o, "nodeSelector",
					      json_deep_copy(sel)) != 0) ||
	    (req != NULL &&
		json_object_set_new(o, "affinity",
		    json_pack("{s:{s:o}}", "nodeAffinity",
			"requiredDuringSchedulingIgnoredDuringExecution",
			json_deep_copy(req))) != 0)) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* Podset p's filter from its template [borrowed] (kept when unchanged). */
static void ps_set_filter(struct tas_ps *p, const json_t *template)
{
	json_t *sched = sched_of(template);
	cu_error err;

	if ((sched == NULL && p->sched == NULL) ||
	    (sched != NULL && p->sched != NULL &&
		json_equal(sched, p->sched))) {
		json_decref(sched);
		return;
	}
	tas_filter_free(p->filter);
	json_decref(p->sched);
	p->filter = NULL;
	p->sched = sched;
	if (sched != NULL && tas_filter_parse(sched, &p->filter, &err) != CU_OK)
		cu_warn("topology: %s", err.msg);
}

static bool has_sched(const json_t *template)
{
	json_t *spec = json_object_get(template, "spec");

	return json_array_size(json_object_get(spec, "tolerations")) > 0 ||
	       json_object_size(json_object_get(spec, "nodeSelector")) > 0 ||
	       json_object_get(
		   json_object_get(
		       json_object_get(spec, "affinity"), "nodeAffinity"),
		   "requiredDuringSchedulingIgnoredDuringExecution") != NULL;
}

void ctl_tas_workload(ctl *c, const struct api_workload *wl)
{
	const struct que_wl *qw = que_workload_get(c->st, wl->meta.uid);
	struct tas_wl *w = cu_map_get(&c->tas.wls, wl->meta.uid);
	size_t i, n = wl->spec.n_pod_sets;
	bool want = false, holds;

	/* its status.unhealthyNodes may have changed: replace or evict;
	 * its assignment too: pods waiting for a host it lost */
	if (w != NULL) {
		c->tas.dirty_nodes = true;
		(void)ctl_keys_put(&c->tas.strays,
		    CTL_K2(wl->meta.namespace_ ? wl->meta.namespace_ : "",
			wl->meta.name ? wl->meta.name : ""));
	}

	for (i = 0; i < n; i++)
		want = want || wl->spec.pod_sets[i].has_topology_request ||
		       (c->tas.nfl > 0 &&
			   has_sched(wl->spec.pod_sets[i].template));
	holds = qw != NULL && rec_workload_holds_quota(wl) &&
		wl->status.has_admission;
	for (i = 0; holds && i < wl->status.admission.n_pod_set_assignments;
	     i++)
		want = want || wl->status.admission.pod_set_assignments[i]
				       .topology_assignment != NULL;
	if (!want && w == NULL)
		return;
	if (w == NULL && (w = wl_get_or_new(c, wl->meta.uid, n)) == NULL)
		return;
	if (w->n < n && wl_get_or_new(c, wl->meta.uid, n) == NULL)
		return;
	for (i = 0; i < n; i++) {
		const struct api_topology_request *r =
		    &wl->spec.pod_sets[i].topology_request;
		struct tas_ps *p = &w->ps[i];

		cu_free(p->level);
		cu_free(p->slice_level);
		cu_free(p->group);
		p->level = p->slice_level = p->group = NULL;
		p->slice_size = 0;
		p->mode = 0;
		ps_set_filter(p, wl->spec.pod_sets[i].template);
		if (!wl->spec.pod_sets[i].has_topology_request)
			continue;
		if (r->slice_required != NULL && r->has_slice_size) {
			p->slice_level = cu_strdup(r->slice_required);
			p->slice_size = r->slice_size;
		}
		if (r->group_name != NULL)
			p->group = cu_strdup(r->group_name);
		if (r->required != NULL) {
			p->mode = TAS_REQUIRED;
			p->level = cu_strdup(r->required);
		} else if (r->preferred != NULL) {
			p->mode = TAS_PREFERRED;
			p->level = cu_strdup(r->preferred);
		} else if ((r->has_unconstrained && r->unconstrained) ||
			   p->slice_level != NULL) {
			/* Kueue: a slice request alone is unconstrained */
			p->mode = TAS_UNCONSTRAINED;
		}
	}
	for (i = 0; holds && i < wl->status.admission.n_pod_set_assignments &&
		    i < w->n && i < qw->n_podsets;
	     i++) {
		const struct api_podset_assignment *psa =
		    &wl->status.admission.pod_set_assignments[i];

		if (psa->topology_assignment != NULL)
			adopt(c, w, i, qw, psa_flavor(c, psa),
			    psa->topology_assignment);
	}
}

void ctl_tas_adopt_recorded(ctl *c, const char *uid, const store_decision *sd)
{
	const struct que_wl *qw = que_workload_get(c->st, uid);
	struct tas_wl *w;
	size_t i, j;

	if (qw == NULL)
		return;
	for (i = 0; i < sd->n_podsets && i < qw->n_podsets; i++) {
		const store_podset *sp = &sd->podsets[i];
		const char *flavor = NULL;
		json_t *wire;

		if (sp->topology == NULL)
			continue;
		for (j = 0; j < sp->n_resources && flavor == NULL; j++)
			if (flavor_find(c, sp->resources[j].flavor) != NULL)
				flavor = sp->resources[j].flavor;
		if (flavor == NULL && sp->n_resources > 0)
			flavor = sp->resources[0].flavor;
		wire = json_loads(sp->topology, 0, NULL);
		w = wl_get_or_new(c, uid, qw->n_podsets);
		if (wire != NULL && w != NULL)
			adopt(c, w, i, qw, flavor, wire);
		json_decref(wire);
	}
}

void ctl_tas_forget(ctl *c, const char *uid)
{
	struct tas_wl *w = cu_map_del(&c->tas.wls, uid);

	if (w == NULL)
		return;
	if (wl_placed(w))
		capacity_changed(c);
	wl_free(c, w);
}

void ctl_tas_before_cycle(ctl *c, int64_t now)
{
	cu_map_iter it = CU_MAP_ITER_INIT;
	struct tas_wl **drop = NULL;
	size_t ndrop = 0, cap = 0, i;
	void *v;

	if (c->tas.started && c->tas.dirty_rebuild)
		rebuild(c);
	while (cu_map_next(&c->tas.wls, &it, NULL, &v)) {
		struct tas_wl *w = v;
		const struct que_wl *qw;

		if (!wl_placed(w))
			continue;
		qw = que_workload_get(c->st, w->uid);
		if (qw != NULL && (qw->where == QUE_WL_ADMITTED ||
				      qw->where == QUE_WL_EVICTING))
			continue;
		for (i = 0; i < w->n; i++)
			ps_unplace(c, &w->ps[i]);
		capacity_changed(c);
		if (!wl_has_request(w) &&
		    !cu_grow((void **)&drop, &cap, ndrop + 1, sizeof(*drop)))
			drop[ndrop++] = w;
	}
	for (i = 0; i < ndrop; i++) {
		cu_map_del(&c->tas.wls, drop[i]->uid);
		wl_free(c, drop[i]);
	}
	cu_free(drop);
	(void)now;
}

void ctl_tas_fill(
    ctl *c, const char *uid, struct adm_podset_assignment *pa, size_t n)
{
	struct tas_wl *w = cu_map_get(&c->tas.wls, uid);
	size_t i;

	for (i = 0; w != NULL && i < n && i < w->n; i++)
		if (w->ps[i].placed)
			pa[i].topology = w->ps[i].wire;
}

char *ctl_tas_ledger_text(ctl *c, const char *uid, size_t i)
{
	struct tas_wl *w = cu_map_get(&c->tas.wls, uid);

	if (w == NULL || i >= w->n || !w->ps[i].placed || w->ps[i].wire == NULL)
		return NULL;
	/* json_dumps allocates with malloc; cu_free is free */
	return json_dumps(w->ps[i].wire, JSON_COMPACT | JSON_SORT_KEYS);
}

/* Does assignment wire [borrowed] place pods on a node named in the
 * unhealthyNodes list un [borrowed]? true when undecodable. */
static bool wire_uses_node(const json_t *wire, const json_t *un)
{
	struct api_topology_assignment a;
	bool uses = false;
	size_t d, i, nl;
	json_t *e;
	cu_error err;

	if (api_topology_assignment_decode(&a, wire, &err) != CU_OK)
		return true;
	nl = a.levels.n;
	for (d = 0; nl > 0 && d < a.n_domains && !uses; d++)
		json_array_foreach(un, i, e)
		{
			const char *n =
			    json_string_value(json_object_get(e, "name"));

			if (n != NULL &&
			    strcmp(n, a.domains[d].values[nl - 1]) == 0)
				uses = true;
		}
	api_topology_assignment_dispose(&a);
	return uses;
}

/* The restart took podSet i's assignment from the status; its recorded
 * replacement wire [borrowed] is charged instead (the status write that
 * follows changes no engine state: ctl_tas_workload is not called for
 * an admitted Workload's status). */
static void adopt_replacement(ctl *c, const char *uid, size_t i,
    const struct que_wl *qw, const json_t *wire)
{
	struct tas_wl *w = cu_map_get(&c->tas.wls, uid);
	char *flavor;

	if (w == NULL || i >= w->n || !w->ps[i].placed ||
	    w->ps[i].flavor == NULL ||
	    (flavor = cu_strdup(w->ps[i].flavor)) == NULL)
		return;
	adopt(c, w, i, qw, flavor, wire); /* frees the old flavor */
	cu_free(flavor);
	capacity_changed(c);
}

void ctl_tas_resume_replaced(ctl *c, const char *uid)
{
	const struct que_wl *qw = que_workload_get(c->st, uid);
	json_t *obj, *st, *un, *adm, *psas, *psa, *patch;
	store_decision *sd = NULL;
	bool changed = false;
	size_t i, j;
	cu_error err;

	if (qw == NULL || qw->where != QUE_WL_ADMITTED ||
	    (obj = api_informer_get(c->inf[INF_WL], qw->ns, qw->name)) ==
		NULL ||
	    ctl_pipe_stale(c->pipe, CTL_K3(CTL_KIND_WL, qw->ns, qw->name), obj))
		return;
	st = json_object_get(obj, "status");
	un = json_object_get(st, "unhealthyNodes");
	if (json_array_size(un) == 0)
		return; /* no replacement under way */
	if (store_decision_get(c->ledger, uid, &sd, &err) != CU_OK) {
		if (err.code != CU_ENOTFOUND)
			cu_warn("ledger: %s", err.msg);
		return;
	}
	adm = json_deep_copy(json_object_get(st, "admission"));
	psas = json_object_get(adm, "podSetAssignments");
	for (i = 0; i < sd->n_podsets; i++) {
		const char *name = sd->podsets[i].name;
		json_t *rec, *cur;

		if (sd->podsets[i].topology == NULL)
			continue;
		json_array_foreach(psas, j, psa)
		{
			const char *n =
			    json_string_value(json_object_get(psa, "name"));

			if (n == NULL || strcmp(n, name) != 0)
				continue;
			cur = json_object_get(psa, "topologyAssignment");
			rec = json_loads(sd->podsets[i].topology, 0, NULL);
			if (cur != NULL && rec != NULL &&
			    !json_equal(cur, rec) && wire_uses_node(cur, un) &&
			    !wire_uses_node(rec, un)) {
				json_object_set(psa, "topologyAssignment", rec);
				changed = true;
				adopt_replacement(c, uid, j, qw, rec);
			}
			json_decref(rec);
			break;
		}
	}
	store_decision_free(sd);
	if (!changed) {
		json_decref(adm);
		return;
	}
	patch = json_pack(
	    "{s:{s:o,s:n}}", "status", "admission", adm, "unhealthyNodes");
	if (patch == NULL)
		return;
	cu_info("workload %s/%s: announcing the recorded replacement of its "
		"unhealthy node(s)",
	    qw->ns, qw->name);
	ctl_wl_write(c, CTL_PIPE_WL_STATUS, qw->ns, qw->name, patch, NULL);
	(void)ctl_keys_put(&c->tas.strays, CTL_K2(qw->ns, qw->name));
}

/* ---- the ungater ------------------------------------------------------ */

struct gated {
	json_t *pod;   /* [borrowed: incref'd] */
	int64_t index; /* -1: none */
	const char *created, *name;
};

struct pods_of {
	const char *ns, *wl, *podset;
	struct gated *v;
	size_t n, cap;
	const struct api_topology_assignment *a;
	int64_t *used; /* per domain: pods ungated there */
	bool nomem;
};

static bool finished(json_t *pod)
{
	const char *ph = api_json_str(json_object_get(pod, "status"), "phase");

	return ph != NULL &&
	       (strcmp(ph, "Succeeded") == 0 || strcmp(ph, "Failed") == 0);
}

static ssize_t selector_domain(
    const struct api_topology_assignment *a, json_t *pod)
{
	json_t *sel =
	    json_object_get(json_object_get(pod, "spec"), "nodeSelector");
	size_t d, l;

	for (d = 0; d < a->n_domains; d++) {
		for (l = 0; l < a->levels.n; l++) {
			const char *v = api_json_str(sel, a->levels.items[l]);

			if (v == NULL ||
			    strcmp(v, a->domains[d].values[l]) != 0)
				break;
		}
		if (l == a->levels.n)
			return (ssize_t)d;
	}
	return -1;
}

static void collect_pod(json_t *pod, void *payload)
{
	struct pods_of *p = payload;
	const char *ns = ctl_jmeta(pod, "namespace");
	const char *wl = pod_ann(pod, ANN_WORKLOAD);
	const char *ps = api_json_str(
	    json_object_get(json_object_get(pod, "metadata"), "labels"),
	    LABEL_PODSET);
	const char *idx;
	struct gated *g;

	if (ns == NULL || wl == NULL || ps == NULL || strcmp(ns, p->ns) != 0 ||
	    strcmp(wl, p->wl) != 0 || strcmp(ps, p->podset) != 0 ||
	    finished(pod) || ctl_jmeta(pod, "deletionTimestamp") != NULL)
		return;
	if (!has_gate(pod)) {
		ssize_t d = selector_domain(p->a, pod);

		if (d >= 0)
			p->used[d]++;
		return;
	}
	if (cu_grow((void **)&p->v, &p->cap, p->n + 1, sizeof(*p->v))) {
		p->nomem = true;
		return;
	}
	g = &p->v[p->n++];
	g->pod = json_incref(pod);
	idx = api_json_str(
	    json_object_get(json_object_get(pod, "metadata"), "labels"),
	    LABEL_INDEX);
	if (idx == NULL)
		idx = pod_ann(pod, LABEL_INDEX);
	g->index = idx != NULL ? strtoll(idx, NULL, 10) : -1;
	g->index = tas_pod_rank(p->a, pod, g->index);
	g->created = ctl_jmeta(pod, "creationTimestamp");
	g->name = ctl_jmeta(pod, "name");
}

static int cmp_gated(const void *x, const void *y)
{
	const struct gated *a = x, *b = y;
	int r;

	if (a->index != b->index)
		return a->index < b->index ? -1 : 1;
	r = strcmp(a->created ? a->created : "", b->created ? b->created : "");
	return r != 0 ? r
		      : strcmp(a->name ? a->name : "", b->name ? b->name : "");
}

/* The merge patch that ungates pod [borrowed] onto domain d of a. */
static json_t *ungate_patch(
    json_t *pod, const struct api_topology_assignment *a, size_t d)
{
	json_t *patch = json_object(), *spec = json_object(),
	       *sel = json_object(), *gates = json_array(), *g;
	size_t i;

	if (patch == NULL || spec == NULL || sel == NULL || gates == NULL)
		goto fail;
	json_array_foreach(
	    json_object_get(json_object_get(pod, "spec"), "schedulingGates"), i,
	    g)
	{
		const char *n = api_json_str(g, "name");

		if ((n == NULL || strcmp(n, TAS_SCHEDULING_GATE) != 0) &&
		    json_array_append(gates, g) != 0)
			goto fail;
	}
	for (i = 0; i < a->levels.n; i++)
		if (json_object_set_new(sel, a->levels.items[i],
			json_string(a->domains[d].values[i])) != 0)
			goto fail;
	if (json_object_set_new(spec, "nodeSelector", sel) != 0) {
		sel = NULL;
		goto fail;
	}
	sel = NULL;
	if (json_object_set_new(spec, "schedulingGates",
		json_array_size(gates) ? gates : json_null()) != 0) {
		gates = NULL;
		goto fail;
	}
	if (json_array_size(gates) == 0)
		json_decref(gates);
	gates = NULL;
	if (json_object_set_new(patch, "spec", spec) != 0) {
		spec = NULL;
		goto fail;
	}
	return patch;
fail:
	json_decref(patch);
	json_decref(spec);
	json_decref(sel);
	json_decref(gates);
	return NULL;
}

/* Seconds since wl's [borrowed] Admitted=True, or -1 when it is not. */
static double since_admitted(json_t *wl, int64_t now)
{
	json_t *conds =
	    json_object_get(json_object_get(wl, "status"), "conditions");
	json_t *cd;
	size_t i;

	json_array_foreach(conds, i, cd)
	{
		const char *t = api_json_str(cd, "type");
		const char *st = api_json_str(cd, "status");
		const char *at = api_json_str(cd, "lastTransitionTime");
		int64_t ns;
		cu_error err;

		if (t == NULL || strcmp(t, "Admitted") != 0)
			continue;
		if (st == NULL || strcmp(st, "True") != 0 || at == NULL ||
		    cu_time_parse(at, &ns, &err) != CU_OK)
			return -1;
		return now > ns ? (double)(now - ns) / 1e9 : 0.0;
	}
	return -1;
}

static void ungate_podset(ctl *c, const char *ns, const char *wl,
    const char *podset, const struct api_topology_assignment *a, int64_t now,
    const char *cq, double admitted_s)
{
	struct pods_of p;
	int64_t *used = cu_calloc(a->n_domains + 1, sizeof(*used));
	size_t i;

	memset(&p, 0, sizeof(p));
	p.ns = ns;
	p.wl = wl;
	p.podset = podset;
	p.a = a;
	p.used = used;
	if (used == NULL)
		return;
	{
		char *key = cu_asprintf("%s\x1f%s", ns, wl);
		struct tas_wl_pods *e =
		    key ? cu_map_get(&c->tas.pods_by_wl, key) : NULL;
		struct ctl_kent **v = NULL;
		size_t k, nv = 0;

		cu_free(key);
		if (e != NULL &&
		    ctl_keys_ordered(&e->names, &v, &nv) == CU_OK) {
			for (k = 0; k < nv; k++) {
				json_t *pod = api_informer_get(
				    c->tas.pods, ns, v[k]->k[0]);

				if (pod != NULL)
					collect_pod(pod, &p);
			}
			cu_free(v);
		}
	}
	if (p.n > 1)
		qsort(p.v, p.n, sizeof(*p.v), cmp_gated);
	for (i = 0; i < p.n && !p.nomem; i++) {
		const char *uid = ctl_jmeta(p.v[i].pod, "uid");
		struct ctl_kent *e =
		    uid ? ctl_keys_get(&c->tas.ungating, CTL_K1(uid)) : NULL;
		ssize_t d = -1;
		size_t k;
		json_t *patch;

		if (p.v[i].index >= 0) {
			d = tas_rank_domain(a, p.v[i].index);
			if (d >= 0 && used[d] >= a->domains[d].count)
				d = -1;
		}
		for (k = 0; d < 0 && k < a->n_domains; k++)
			if (used[k] < a->domains[k].count)
				d = (ssize_t)k;
		if (d < 0)
			break; /* more gated pods than the assignment */
		used[d]++;
		if (uid == NULL || (e != NULL && now < e->n))
			continue;
		patch = ungate_patch(p.v[i].pod, a, (size_t)d);
		if (patch == NULL)
			continue;
		ctl_pipe_queue(c->pipe, CTL_PIPE_JOB_START, &res_pods, ns,
		    p.v[i].name, NULL, patch);
		if ((e = ctl_keys_put(&c->tas.ungating, CTL_K1(uid))) != NULL)
			e->n = now + UNGATE_RETRY_NS;
		c->tas.ungated++;
		if (admitted_s >= 0 && cq != NULL)
			ctl_metric_observe(c->metrics,
			    CTL_M_POD_SCHEDULING_GATE_REMOVAL_SECONDS,
			    CTL_LV(TAS_SCHEDULING_GATE, cq, "false"),
			    admitted_s);
	}
	for (i = 0; i < p.n; i++)
		json_decref(p.v[i].pod);
	cu_free(p.v);
	cu_free(used);
}

static void ungate_workload(
    ctl *c, const char *ns, const char *name, int64_t now)
{
	json_t *obj = api_informer_get(c->inf[INF_WL], ns, name);
	json_t *psas = json_object_get(
	    json_object_get(json_object_get(obj, "status"), "admission"),
	    "podSetAssignments");
	const char *cq = api_json_str(
	    json_object_get(json_object_get(obj, "status"), "admission"),
	    "clusterQueue");
	double admitted_s = since_admitted(obj, now);
	json_t *psa;
	size_t i;

	json_array_foreach(psas, i, psa)
	{
		json_t *ta = json_object_get(psa, "topologyAssignment");
		const char *ps = api_json_str(psa, "name");
		struct api_topology_assignment a;
		cu_error err;

		if (ta == NULL || ps == NULL ||
		    api_topology_assignment_decode(&a, ta, &err) != CU_OK)
			continue;
		ungate_podset(c, ns, name, ps, &a, now, cq, admitted_s);
		api_topology_assignment_dispose(&a);
	}
}

/* ---- node failures ---------------------------------------------------- */

/* Kueue's node failure controller: an assigned node that failed
 * (tas_node_health) is added to the Workload's status.unhealthyNodes. */
/* Kueue's eviction for node failures (reason NodeFailures): the
 * Workload is requeued once its job stopped. */
static void evict_node_failures(
    ctl *c, const struct que_wl *qw, const char *msg, int64_t now)
{
	struct api_workload wl;
	struct rec_eviction ev = {0};
	json_t *patch = NULL;
	cu_error err;

	if (ctl_decode_cached(c, qw->ns, qw->name, &wl) != CU_OK)
		return;
	ev.reason = REC_EVICTED_NODE_FAILURES;
	ev.message = msg;
	if (rec_wl_status_evict(&wl, &ev, now, &patch, &err) != CU_OK)
		cu_warn("evict %s/%s: %s", qw->ns, qw->name, err.msg);
	else if (patch != NULL) {
		cu_info("workload %s/%s evicted: %s", qw->ns, qw->name, msg);
		ctl_ledger_evicting(c, qw->uid, now);
		ctl_wl_write(
		    c, CTL_PIPE_WL_STATUS, qw->ns, qw->name, patch, NULL);
		if (c->metrics != NULL)
			ctl_metric_inc(c->metrics,
			    CTL_M_EVICTED_WORKLOADS_TOTAL,
			    CTL_LV(qw->cq ? qw->cq->name : "",
				REC_EVICTED_NODE_FAILURES, "",
				wl.spec.has_priority_class_ref &&
					wl.spec.priority_class_ref.name
				    ? wl.spec.priority_class_ref.name
				    : ""));
	}
	api_workload_dispose(&wl);
}

/* The ledger first: podSet i's new assignment replaces the recorded one
 * in the turn's transaction, committed before the status write is sent
 * (WL_STATUS announces). A restart between the two finds the status
 * still listing the node in unhealthyNodes and the ledger past it:
 * ctl_tas_resume_replaced announces the recorded replacement. */
static void record_replacement(ctl *c, const char *uid, size_t i)
{
	char *text = ctl_tas_ledger_text(c, uid, i);
	cu_error err;

	if (text != NULL && ctl_pipe_begin(c->pipe) == CU_OK &&
	    store_podset_set_topology(c->ledger, uid, i, text, &err) != CU_OK)
		cu_warn("ledger: %s", err.msg);
	cu_free(text);
}

/* Kueue's replacement (TASFailedNodeReplacement, on by default): the
 * podSet's pods on `node` move within its assigned domain; the
 * admission's topologyAssignment is rewritten and unhealthyNodes
 * cleared. No room: evicted (TASFailedNodeReplacementFailFast). */
static void replace_node(ctl *c, const struct que_wl *qw, json_t *obj,
    struct tas_ps *p, size_t podset, const char *node, int64_t now)
{
	struct tas_flavor *f = flavor_find(c, p->flavor);
	struct tas_filter filter;
	struct tas_request r = {p->mode ? p->mode : TAS_UNCONSTRAINED, p->level,
	    1, p->req, p->n_req, p->slice_level, p->slice_size, &filter};
	struct api_topology_assignment na;
	json_t *adm, *psas, *wire = NULL, *patch;
	char msg[512], nbuf[256];
	cu_error err;
	int rc;

	if (f == NULL || f->tree == NULL)
		return;
	filter_of(f, p, &filter);
	/* node is borrowed from p->a, which is replaced below */
	snprintf(nbuf, sizeof(nbuf), "%s", node);
	node = nbuf;
	rc = tas_replace(f->tree, &p->a, node, &r, &na, msg, sizeof(msg), &err);
	if (rc == TAS_NOFIT) {
		snprintf(msg, sizeof(msg),
		    "Workload was evicted as there was no replacement for "
		    "unhealthy node(s): %s",
		    node);
		evict_node_failures(c, qw, msg, now);
		return;
	}
	if (rc != CU_OK) {
		cu_warn("topology: replace %s: %s", node, err.msg);
		return;
	}
	adm = json_deep_copy(
	    json_object_get(json_object_get(obj, "status"), "admission"));
	psas = json_object_get(adm, "podSetAssignments");
	if (adm == NULL || podset >= json_array_size(psas) ||
	    api_topology_assignment_encode(&wire, &na, &err) != CU_OK) {
		json_decref(adm);
		api_topology_assignment_dispose(&na);
		return;
	}
	if (p->charged && tas_tree_assignment_usage(f->tree, &p->a, p->req,
			      p->n_req, -1, &err) != CU_OK)
		cu_warn("topology: %s", err.msg);
	api_topology_assignment_dispose(&p->a);
	p->a = na;
	json_decref(p->wire);
	p->wire = json_deep_copy(wire);
	if (tas_tree_assignment_usage(
		f->tree, &p->a, p->req, p->n_req, 1, &err) != CU_OK)
		cu_warn("topology: %s", err.msg);
	p->charged = true;
	json_object_set_new(
	    json_array_get(psas, podset), "topologyAssignment", wire);
	patch = json_pack(
	    "{s:{s:o,s:n}}", "status", "admission", adm, "unhealthyNodes");
	if (patch == NULL)
		return;
	record_replacement(c, qw->uid, podset);
	cu_info("workload %s/%s: pods of unhealthy node %s replaced within "
		"the assigned domain",
	    qw->ns, qw->name, node);
	ctl_wl_write(c, CTL_PIPE_WL_STATUS, qw->ns, qw->name, patch, NULL);
	/* pods ungated to the failed node wait there: check_strays */
	(void)ctl_keys_put(&c->tas.strays, CTL_K2(qw->ns, qw->name));
	capacity_changed(c);
}

static void mark_unhealthy(ctl *c, const struct que_wl *qw, struct tas_ps *p,
    size_t podset, const char *node, int64_t now)
{
	json_t *obj = api_informer_get(c->inf[INF_WL], qw->ns, qw->name);
	json_t *un =
	    json_object_get(json_object_get(obj, "status"), "unhealthyNodes");
	json_t *list, *e, *patch;
	size_t i;
	json_t *conds =
	    json_object_get(json_object_get(obj, "status"), "conditions");

	if (obj == NULL ||
	    ctl_pipe_stale(c->pipe, CTL_K3(CTL_KIND_WL, qw->ns, qw->name), obj))
		return;
	json_array_foreach(conds, i, e)
	{
		const char *t = json_string_value(json_object_get(e, "type"));
		const char *st =
		    json_string_value(json_object_get(e, "status"));

		/* evicted already: its release is under way */
		if (t && st && strcmp(t, REC_COND_EVICTED) == 0 &&
		    strcmp(st, "True") == 0)
			return;
	}
	json_array_foreach(un, i, e)
	{
		const char *n = json_string_value(json_object_get(e, "name"));

		if (n != NULL && strcmp(n, node) == 0) {
			replace_node(c, qw, obj, p, podset, node, now);
			return;
		}
	}
	if (json_array_size(un) > 0) {
		/* Kueue: a second failed node evicts the Workload */
		char msg[512];
		size_t at;

		at = (size_t)snprintf(msg, sizeof(msg),
		    "Workload eviction triggered due to multiple TAS assigned "
		    "node failures, including: ");
		json_array_foreach(un, i, e)
		{
			const char *n =
			    json_string_value(json_object_get(e, "name"));

			if (n != NULL && at < sizeof(msg))
				at += (size_t)snprintf(
				    msg + at, sizeof(msg) - at, "%s, ", n);
		}
		if (at < sizeof(msg))
			snprintf(msg + at, sizeof(msg) - at, "%s", node);
		evict_node_failures(c, qw, msg, now);
		return;
	}
	list = json_is_array(un) ? json_deep_copy(un) : json_array();
	json_array_append_new(list, json_pack("{s:s}", "name", node));
	patch = json_pack("{s:{s:o}}", "status", "unhealthyNodes", list);
	if (patch == NULL)
		return;
	cu_info("workload %s/%s: node %s failed; recorded in "
		"status.unhealthyNodes",
	    qw->ns, qw->name, node);
	ctl_wl_write(c, CTL_PIPE_WL_STATUS, qw->ns, qw->name, patch, NULL);
}

/* Kueue's rules with the configured gates (all at Kueue's defaults
 * without a configuration). */
static struct tas_health_rules health_rules(const ctl *c)
{
	struct tas_health_rules r = {c->tas.node_delay_ns, false, true, true};

	if (c->cfg != NULL) {
		r.fixed_delay = c->cfg->tas_gates.not_ready_fixed_time;
		r.on_pod_termination = c->cfg->tas_gates.on_pod_termination;
		r.on_taints = c->cfg->tas_gates.on_node_taints;
	}
	return r;
}

/* Does Node `node` [borrowed] need the Workload's pods or tolerations to
 * be judged: a Ready condition not True (pods), or taints? */
static bool node_not_ready(const json_t *node)
{
	json_t *c;
	size_t i;

	json_array_foreach(
	    json_object_get(json_object_get(node, "status"), "conditions"), i,
	    c)
	{
		const char *t = api_json_str(c, "type");
		const char *st = api_json_str(c, "status");

		if (t != NULL && strcmp(t, "Ready") == 0)
			return st == NULL || strcmp(st, "True") != 0;
	}
	return false;
}

static bool node_has_taints(const json_t *node)
{
	return json_array_size(json_object_get(
		   json_object_get(node, "spec"), "taints")) > 0;
}

/* Kueue's progressing pods: has Workload ns/wl a pod bound to `node`,
 * not being deleted and not Succeeded or Failed? */
static bool progressing_on(
    ctl *c, const char *ns, const char *wl, const char *node)
{
	char *key = cu_asprintf("%s\x1f%s", ns, wl);
	struct tas_wl_pods *e =
	    key ? cu_map_get(&c->tas.pods_by_wl, key) : NULL;
	struct ctl_kent **v = NULL;
	bool found = false;
	size_t i, n = 0;

	cu_free(key);
	if (e == NULL || ctl_keys_ordered(&e->names, &v, &n) != CU_OK)
		return false;
	for (i = 0; i < n && !found; i++) {
		json_t *pod = api_informer_get(c->tas.pods, ns, v[i]->k[0]);
		const char *bound =
		    api_json_str(json_object_get(pod, "spec"), "nodeName");

		found = pod != NULL && bound != NULL &&
			strcmp(bound, node) == 0 && !finished(pod) &&
			ctl_jmeta(pod, "deletionTimestamp") == NULL;
	}
	cu_free(v);
	return found;
}

/* podSet i's effective tolerations, as Kueue's podset.FromAssignment and
 * the admission checks' podSetUpdates make them: its template's, its
 * flavor's (spec.tolerations), and the updates' for its name. A new
 * array [owned: json_decref], NULL when out of memory. */
static json_t *podset_tolerations(
    ctl *c, json_t *obj, size_t i, const char *flavor)
{
	json_t *out = json_array();
	json_t *ps = json_array_get(
	    json_object_get(json_object_get(obj, "spec"), "podSets"), i);
	const char *name = api_json_str(ps, "name");
	json_t *rf = c->inf[INF_RF] != NULL && flavor != NULL
			 ? api_informer_get(c->inf[INF_RF], NULL, flavor)
			 : NULL;
	json_t *ac, *u;
	size_t j, k;

	if (out == NULL)
		return NULL;
	json_array_extend(
	    out, json_object_get(
		     json_object_get(json_object_get(ps, "template"), "spec"),
		     "tolerations"));
	json_array_extend(
	    out, json_object_get(json_object_get(rf, "spec"), "tolerations"));
	json_array_foreach(
	    json_object_get(json_object_get(obj, "status"), "admissionChecks"),
	    j, ac)
	{
		json_array_foreach(json_object_get(ac, "podSetUpdates"), k, u)
		{
			const char *n = api_json_str(u, "name");

			if (n != NULL && name != NULL && strcmp(n, name) == 0)
				json_array_extend(
				    out, json_object_get(u, "tolerations"));
		}
	}
	return out;
}

/* Kueue's handleHealthyNode: a node of the Workload's unhealthyNodes
 * that is healthy again leaves the list. */
static void unlist_healthy(
    ctl *c, const struct que_wl *qw, json_t *obj, const char *node)
{
	json_t *un =
	    json_object_get(json_object_get(obj, "status"), "unhealthyNodes");
	json_t *list, *e, *patch;
	bool listed = false;
	size_t i;

	if (json_array_size(un) == 0 ||
	    ctl_pipe_stale(c->pipe, CTL_K3(CTL_KIND_WL, qw->ns, qw->name), obj))
		return;
	list = json_array();
	json_array_foreach(un, i, e)
	{
		const char *n = api_json_str(e, "name");

		if (n != NULL && strcmp(n, node) == 0)
			listed = true;
		else
			json_array_append(list, e);
	}
	if (!listed) {
		json_decref(list);
		return;
	}
	patch = json_pack("{s:{s:o}}", "status", "unhealthyNodes", list);
	if (patch == NULL)
		return;
	cu_info("workload %s/%s: node %s is healthy again; removed from "
		"status.unhealthyNodes",
	    qw->ns, qw->name, node);
	ctl_wl_write(c, CTL_PIPE_WL_STATUS, qw->ns, qw->name, patch, NULL);
}

/* The host an ungated, unbound, unfinished pod [borrowed] waits for
 * (its nodeSelector's kubernetes.io/hostname) [borrowed from pod], or
 * NULL. */
static const char *pinned_host(json_t *pod)
{
	json_t *spec = json_object_get(pod, "spec");
	const char *ph = api_json_str(json_object_get(pod, "status"), "phase");

	if (api_json_str(spec, "nodeName") != NULL || has_gate(pod) ||
	    (ph != NULL && strcmp(ph, "Pending") != 0) ||
	    ctl_jmeta(pod, "deletionTimestamp") != NULL)
		return NULL;
	return api_json_str(
	    json_object_get(spec, "nodeSelector"), TAS_HOSTNAME_LABEL);
}

/* Kueue's late pods: a pod of the Workload ungated to a host its podSet's
 * assignment no longer has (its node was replaced) would wait there for
 * ever; it is marked Failed (condition TerminatedByKueue) so that its
 * job makes a new one, ungated to the new assignment. */
static void fail_strays(
    ctl *c, const struct que_wl *qw, struct tas_wl *w, json_t *obj, int64_t now)
{
	char *key = cu_asprintf("%s\x1f%s", qw->ns, qw->name);
	struct tas_wl_pods *e =
	    key ? cu_map_get(&c->tas.pods_by_wl, key) : NULL;
	json_t *spec_ps =
	    json_object_get(json_object_get(obj, "spec"), "podSets");
	struct ctl_kent **v = NULL;
	size_t i, n = 0;

	cu_free(key);
	if (e == NULL || ctl_keys_ordered(&e->names, &v, &n) != CU_OK)
		return;
	for (i = 0; i < n; i++) {
		json_t *pod = api_informer_get(c->tas.pods, qw->ns, v[i]->k[0]);
		const char *host = pod ? pinned_host(pod) : NULL;
		const char *ps = api_json_str(
		    json_object_get(json_object_get(pod, "metadata"), "labels"),
		    LABEL_PODSET);
		const char *uid = pod ? ctl_jmeta(pod, "uid") : NULL;
		const struct tas_ps *p = NULL;
		struct ctl_kent *t;
		json_t *conds, *patch, *x;
		char ts[CU_TIME_RFC3339_LEN];
		size_t j, d, nl;
		bool kept = false;

		if (host == NULL || ps == NULL || uid == NULL)
			continue;
		for (j = 0; j < w->n && j < json_array_size(spec_ps); j++) {
			const char *name =
			    api_json_str(json_array_get(spec_ps, j), "name");

			if (name != NULL && strcmp(name, ps) == 0)
				p = &w->ps[j];
		}
		if (p == NULL || !p->placed || (nl = p->a.levels.n) == 0 ||
		    strcmp(p->a.levels.items[nl - 1], TAS_HOSTNAME_LABEL) != 0)
			continue;
		for (d = 0; d < p->a.n_domains && !kept; d++)
			kept =
			    strcmp(p->a.domains[d].values[nl - 1], host) == 0;
		t = ctl_keys_get(&c->tas.terminating, CTL_K1(uid));
		if (kept || (t != NULL && now < t->n))
			continue;
		cu_time_format_rfc3339(now, ts);
		conds = json_deep_copy(json_object_get(
		    json_object_get(pod, "status"), "conditions"));
		if (!json_is_array(conds)) {
			json_decref(conds);
			conds = json_array();
		}
		x = json_pack("{s:s,s:s,s:s,s:s,s:s}", "type",
		    "TerminatedByKueue", "status", "True", "reason",
		    "UnschedulableOnAssignedNode", "message",
		    "Pod terminated by Kueue NodeController due to node taint",
		    "lastTransitionTime", ts);
		json_array_append_new(conds, x);
		patch = json_pack("{s:{s:s,s:o}}", "status", "phase", "Failed",
		    "conditions", conds);
		if (patch == NULL)
			continue;
		cu_info("pod %s/%s of workload %s: waits for %s, which its "
			"assignment no longer has; marked Failed",
		    qw->ns, v[i]->k[0], qw->name, host);
		ctl_pipe_queue(c->pipe, CTL_PIPE_JOB_RESET_START, &res_pods,
		    qw->ns, v[i]->k[0], NULL, patch);
		/* Kueue's event on the pod, by the recorder its node
		 * controller shares with the ResourceFlavor one (the
		 * cache's pods carry no kind) */
		x = json_pack("{s:s,s:s,s:{s:s,s:s,s:s}}", "apiVersion", "v1",
		    "kind", "Pod", "metadata", "namespace", qw->ns, "name",
		    v[i]->k[0], "uid", uid);
		ctl_emit_as(c, x, "tas-resource-flavor-controller",
		    "PodTerminatedByKueue",
		    "Pod terminated by Kueue NodeController due to node taint");
		json_decref(x);
		if ((t = ctl_keys_put(&c->tas.terminating, CTL_K1(uid))) !=
		    NULL)
			t->n = now + UNGATE_RETRY_NS;
	}
	cu_free(v);
}

static void check_podset_nodes(ctl *c, const struct que_wl *qw,
    struct tas_ps *p, size_t podset, int64_t now, int64_t *due)
{
	const struct api_topology_assignment *a = &p->a;
	struct tas_health_rules rules = health_rules(c);
	json_t *obj = api_informer_get(c->inf[INF_WL], qw->ns, qw->name);
	json_t *tols = NULL;
	size_t nl = a->levels.n, d;

	/* Kueue tracks nodes of assignments at the hostname level only. */
	if (nl == 0 || strcmp(a->levels.items[nl - 1], TAS_HOSTNAME_LABEL) != 0)
		return;
	for (d = 0; d < a->n_domains; d++) {
		const char *node = a->domains[d].values[nl - 1];
		json_t *nobj = api_informer_get(c->tas.nodes, NULL, node);
		struct tas_node_usage u = {false, NULL};
		int64_t when = 0;
		enum tas_node_health h;

		if (nobj != NULL &&
		    (node_not_ready(nobj) ||
			(rules.on_taints && node_has_taints(nobj))))
			u.progressing =
			    progressing_on(c, qw->ns, qw->name, node);
		if (nobj != NULL && rules.on_taints && node_has_taints(nobj) &&
		    tols == NULL)
			tols = podset_tolerations(c, obj, podset, p->flavor);
		u.tolerations = tols;
		h = tas_node_health(nobj, &u, &rules, now, &when);
		if (h == TAS_NODE_FAILED) {
			/* looked at again until handled: the Workload's
			 * update may reach us before our write is seen */
			if (*due == 0 || now + NODE_RECHECK_NS < *due)
				*due = now + NODE_RECHECK_NS;
			json_decref(tols);
			mark_unhealthy(c, qw, p, podset, node, now);
			return; /* p may have changed */
		}
		if (h == TAS_NODE_WAIT && (*due == 0 || when < *due))
			*due = when;
		if (obj != NULL)
			unlist_healthy(c, qw, obj, node);
	}
	json_decref(tols);
}

static void check_nodes(ctl *c, int64_t now)
{
	cu_map_iter it = CU_MAP_ITER_INIT;
	const struct que_wl *wake = NULL;
	int64_t due = 0;
	void *v;
	size_t i;

	if (!c->tas.started || !informers_synced(c) || c->inf[INF_WL] == NULL)
		return;
	/* TASFailedNodeReplacement off: Kueue leaves failed nodes alone */
	if (c->cfg != NULL && !c->cfg->tas_gates.node_replacement)
		return;
	if (!c->tas.dirty_nodes &&
	    (c->tas.nodes_due == 0 || now < c->tas.nodes_due))
		return;
	c->tas.dirty_nodes = false;
	while (cu_map_next(&c->tas.wls, &it, NULL, &v)) {
		struct tas_wl *w = v;
		const struct que_wl *qw = que_workload_get(c->st, w->uid);
		int64_t before = due;

		if (qw == NULL || qw->where != QUE_WL_ADMITTED)
			continue;
		for (i = 0; i < w->n; i++)
			if (w->ps[i].placed)
				check_podset_nodes(
				    c, qw, &w->ps[i], i, now, &due);
		if (due != before)
			wake = qw;
	}
	c->tas.nodes_due = due;
	/* a turn at the deadline: the Workload's reconcile wakes the loop */
	if (wake != NULL)
		ctl_wake_workload(c, CTL_K2(wake->ns, wake->name), due);
}

/* The Workloads whose pods wait for a host, or whose assignment
 * changed: stray pods are failed (fail_strays), judged against the
 * assignment the cache shows; while our write to the Workload is in
 * flight it is looked at again soon (the answer may come after the
 * Workload's event). */
static void check_strays(ctl *c, int64_t now)
{
	ctl_keys batch;
	struct ctl_kent **v;
	size_t i, n;

	if (!c->tas.started || !informers_synced(c) || c->inf[INF_WL] == NULL ||
	    ctl_keys_count(&c->tas.strays) == 0 ||
	    (c->cfg != NULL && !c->cfg->tas_gates.node_replacement))
		return;
	ctl_keys_init(&batch, 2);
	ctl_keys_move(&batch, &c->tas.strays);
	if (ctl_keys_ordered(&batch, &v, &n) == CU_OK) {
		for (i = 0; i < n; i++) {
			const char *const *k = (const char *const *)v[i]->k;
			json_t *obj =
			    api_informer_get(c->inf[INF_WL], k[0], k[1]);
			const char *uid = obj ? ctl_jmeta(obj, "uid") : NULL;
			struct tas_wl *w =
			    uid ? cu_map_get(&c->tas.wls, uid) : NULL;
			const struct que_wl *qw =
			    uid ? que_workload_get(c->st, uid) : NULL;

			if (w == NULL || qw == NULL ||
			    qw->where != QUE_WL_ADMITTED)
				continue;
			if (ctl_pipe_stale(c->pipe,
				CTL_K3(CTL_KIND_WL, k[0], k[1]), obj)) {
				(void)ctl_keys_put(&c->tas.strays, k);
				ctl_wake_workload(c, k, now + NODE_RECHECK_NS);
				continue;
			}
			fail_strays(c, qw, w, obj, now);
		}
		cu_free(v);
	}
	ctl_keys_dispose(&batch);
}

void ctl_tas_ungate(ctl *c, int64_t now)
{
	ctl_keys batch;
	struct ctl_kent **v;
	size_t i, n;

	check_nodes(c, now);
	check_strays(c, now);
	if (!c->tas.started || ctl_keys_count(&c->tas.dirty_ungate) == 0)
		return;
	ctl_keys_init(&batch, 2);
	ctl_keys_move(&batch, &c->tas.dirty_ungate);
	if (ctl_keys_ordered(&batch, &v, &n) == CU_OK) {
		for (i = 0; i < n; i++)
			ungate_workload(c, v[i]->k[0], v[i]->k[1], now);
		cu_free(v);
	}
	ctl_keys_dispose(&batch);
}

/* ---- lifecycle -------------------------------------------------------- */

int ctl_tas_init(ctl *c)
{
	const char *env;

	cu_map_init_str(&c->tas.wls);
	cu_map_init_str(&c->tas.pods_by_wl);
	ctl_keys_init(&c->tas.tas_only, 1);
	ctl_keys_init(&c->tas.dirty_ungate, 2);
	ctl_keys_init(&c->tas.ungating, 1);
	ctl_keys_init(&c->tas.terminating, 1);
	ctl_keys_init(&c->tas.strays, 2);
	c->tas.node_delay_ns = TAS_NODE_FAILURE_DELAY_NS;
	/* tests only: a shorter NodeFailureDelay */
	if ((env = getenv("CUEUE_TAS_NODE_FAILURE_DELAY_MS")) != NULL) {
		char *end = NULL;
		long long ms = strtoll(env, &end, 10);

		if (end != env && *end == '\0' && ms >= 0)
			c->tas.node_delay_ns = ms * 1000000LL;
	}
	return CU_OK;
}

void ctl_tas_dispose(ctl *c)
{
	cu_map_iter it = CU_MAP_ITER_INIT;
	void *v;

	api_informer_free(c->tas.topo);
	api_informer_free(c->tas.nodes);
	api_informer_free(c->tas.pods);
	c->tas.topo = c->tas.nodes = c->tas.pods = NULL;
	c->tas.started = false;
	/* trees go first: releasing charges into freed trees is skipped */
	flavors_free(c->tas.fl, c->tas.nfl);
	c->tas.fl = NULL;
	c->tas.nfl = 0;
	while (cu_map_next(&c->tas.wls, &it, NULL, &v))
		wl_free(c, v);
	cu_map_dispose(&c->tas.wls);
	it = CU_MAP_ITER_INIT;
	while (cu_map_next(&c->tas.pods_by_wl, &it, NULL, &v))
		wl_pods_free(v);
	cu_map_dispose(&c->tas.pods_by_wl);
	ctl_keys_dispose(&c->tas.tas_only);
	ctl_keys_dispose(&c->tas.dirty_ungate);
	ctl_keys_dispose(&c->tas.ungating);
	ctl_keys_dispose(&c->tas.terminating);
	ctl_keys_dispose(&c->tas.strays);
}
