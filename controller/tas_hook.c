/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/tas_hook.c - the scheduling cycle's topology hook
 * (queues.h que_tas_hook): check places a podSet (or a podSet group) in a
 * TAS flavor's capacity tree without charging it, check_without does the
 * same with the usage of preemption victims released (or of every
 * Workload, to tell "preempt" from "never fits"), and assume places every
 * podSet of a Workload being admitted and charges the trees. See
 * controller/tas_int.h for how the TAS files share their state.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/json.h"
#include "controller/tas_int.h"

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
		if (!tas_only_cq(c, wl)) {
			snprintf(msg, len,
			    "Flavor \"%s\" supports only "
			    "TopologyAwareScheduling",
			    fname);
			return 1;
		}
		*mode = TAS_UNCONSTRAINED; /* implied: needs the tree too */
	} else if (f == NULL) {
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
void ctl_tas__filter_of(
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

	ctl_tas__filter_of(f, p, &filter);
	r.mode = mode;
	r.level = level;
	r.count = count;
	r.per_pod = req;
	r.n_per_pod = ctl_tas__per_pod(c, wl, i, req, TAS_MAX_RESOURCES);
	r.slice_level = p != NULL ? p->slice_level : NULL;
	r.slice_size = p != NULL ? p->slice_size : 0;
	r.filter = &filter;
	r.inner = p != NULL ? p->inner : NULL;
	r.n_inner = p != NULL ? p->n_inner : 0;
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
	w.n_per_pod = ctl_tas__per_pod(c, wl, wi, rw, TAS_MAX_RESOURCES);
	w.slice_level = NULL;
	w.slice_size = 0;
	w.inner = NULL;
	w.n_inner = 0;
	ctl_tas__filter_of(
	    f, tw != NULL && wi < tw->n ? &tw->ps[wi] : NULL, &fw);
	w.filter = &fw;
	l = w;
	l.count = cl;
	l.per_pod = rl;
	l.n_per_pod = ctl_tas__per_pod(c, wl, li, rl, TAS_MAX_RESOURCES);
	ctl_tas__filter_of(
	    f, tw != NULL && li < tw->n ? &tw->ps[li] : NULL, &fl);
	l.filter = &fl;
	rc = tas_place_group(f->tree, &w, &l, &aw, &al, msg, len, &err);
	rc = placed(f, rc, &err, msg, len);
	if (rc != CU_OK)
		return rc;
	*ai = wi == i ? aw : al;
	*aj = wi == i ? al : aw;
	return CU_OK;
}

int ctl_tas__hook_check(void *ctx, const struct que_wl *wl, size_t podset,
    const struct que_flavor *fl, int32_t count, char *msg, size_t len)
{
	ctl *c = ctx;
	struct tas_flavor *f = ctl_tas__flavor_find(c, fl->name);
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

/* The hook's check_without (TAS preemption): ctl_tas__hook_check (a podSet
 * group placed together) with the topology usage of gone (or, with `empty`, of
 * every admitted Workload) released for the time of the placement; the tree is
 * as it was when it returns. */
int ctl_tas__hook_check_without(void *ctx, const struct que_wl *wl,
    size_t podset, const struct que_flavor *fl, int32_t count,
    const struct que_wl *const *gone, size_t n_gone, bool empty, char *msg,
    size_t len)
{
	ctl *c = ctx;
	struct tas_flavor *f = ctl_tas__flavor_find(c, fl->name);
	enum tas_mode mode;
	const char *level;
	int rc;

	if (request_of(c, wl, podset, f, fl->name, &mode, &level, msg, len))
		return 1;
	if (mode == 0 || count < 1)
		return 0;
	usage_of(c, f, gone, n_gone, empty, -1);
	rc = ctl_tas__hook_check(ctx, wl, podset, fl, count, msg, len);
	usage_of(c, f, gone, n_gone, empty, 1);
	return rc;
}

/* Charge (+1) or release (-1) podSet i's placement a [borrowed] in
 * flavor while the Workload's other podSets are placed, as Kueue's
 * assumed usage: they do not take the same capacity. */
static bool tmp_charge(ctl *c, const struct que_wl *wl, size_t i,
    const char *flavor, const struct api_topology_assignment *a, int sign)
{
	struct tas_flavor *f = ctl_tas__flavor_find(c, flavor);
	struct tas_amount req[TAS_MAX_RESOURCES];
	size_t n = ctl_tas__per_pod(c, wl, i, req, TAS_MAX_RESOURCES);
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

int ctl_tas__hook_assume(void *ctx, const struct que_wl *wl,
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
		struct tas_flavor *f = ctl_tas__flavor_find(c, flavors[i]);
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
		w = ctl_tas__wl_get_or_new(c, wl->uid, wl->n_podsets);
	for (i = 0; i < n; i++) {
		struct tas_ps *p;

		if (!got[i])
			continue;
		if (rc != 0 || w == NULL) {
			api_topology_assignment_dispose(&a[i]);
			continue;
		}
		p = &w->ps[i];
		ctl_tas__ps_unplace(c, p);
		p->flavor = cu_strdup(flavors[i]);
		p->a = a[i];
		p->placed = true;
		if (p->flavor == NULL ||
		    ctl_tas__ps_set_reqs(c, p, wl, i, &err) != CU_OK ||
		    api_topology_assignment_encode(&p->wire, &p->a, &err) !=
			CU_OK) {
			ctl_tas__ps_unplace(c, p);
			rc = 1;
			snprintf(msg, len, "topology: out of memory");
			continue;
		}
		ctl_tas__ps_charge(c, p);
	}
	if (rc != 0 && w != NULL)
		for (i = 0; i < w->n; i++)
			ctl_tas__ps_unplace(c, &w->ps[i]);
	return rc;
}
