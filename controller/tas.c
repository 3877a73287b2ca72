/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/tas.c - topology-aware scheduling in the controller: the TAS
 * state of each Workload with a topologyRequest (struct tas_wl, podSets'
 * requests and filters, their placements while the Workload holds quota),
 * assignments adopted from the status or the ledger after a restart and
 * replacements after node failures, the values the admission write and
 * the ledger carry, and the lifecycle. The engine's hook is in
 * tas_hook.c, the capacity trees and informers in tas_trees.c, the
 * ungater in tas_ungate.c, node failures in tas_nodes.c; they share
 * controller/tas_int.h.
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
#include "api/wire.h"
#include "controller/tas_int.h"

const struct api_resource ctl_tas__res_topo = {
    "kueue.x-k8s.io", "v1beta2", "topologies", false};
const struct api_resource ctl_tas__res_nodes = {"", "v1", "nodes", false};
const struct api_resource ctl_tas__res_pods = {"", "v1", "pods", true};

/* ---- small helpers ---------------------------------------------------- */

struct tas_flavor *ctl_tas__flavor_find(ctl *c, const char *name)
{
	size_t i;

	for (i = 0; name != NULL && i < c->tas.nfl; i++)
		if (strcmp(c->tas.fl[i].name, name) == 0)
			return &c->tas.fl[i];
	return NULL;
}

bool ctl_tas__informers_synced(const ctl *c)
{
	return c->tas.started && api_informer_synced(c->tas.topo) &&
	       api_informer_synced(c->tas.nodes) &&
	       api_informer_synced(c->tas.pods);
}

void ctl_tas__ps_unplace(ctl *c, struct tas_ps *p)
{
	struct tas_flavor *f;
	cu_error err;

	if (p->charged && (f = ctl_tas__flavor_find(c, p->flavor)) != NULL &&
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
	api_strlist_dispose(&p->kept);
}

static void ps_reqs_free(struct tas_ps *p)
{
	size_t i;

	for (i = 0; i < p->n_req; i++)
		cu_free((char *)p->req[i].name);
	p->n_req = 0;
}

static void ps_inner_free(struct tas_ps *p)
{
	while (p->n_inner > 0)
		cu_free((char *)p->inner[--p->n_inner].level);
}

static void wl_free(ctl *c, struct tas_wl *w)
{
	size_t i;

	for (i = 0; i < w->n; i++) {
		ctl_tas__ps_unplace(c, &w->ps[i]);
		ps_reqs_free(&w->ps[i]);
		cu_free(w->ps[i].level);
		cu_free(w->ps[i].slice_level);
		ps_inner_free(&w->ps[i]);
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

struct tas_wl *ctl_tas__wl_get_or_new(ctl *c, const char *uid, size_t n)
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
 * tree counts pods itself): the pods' own, as Kueue's placement reads
 * them, not what quota counts after the Configuration's resources. */
size_t ctl_tas__per_pod(ctl *c, const struct que_wl *qw, size_t i,
    struct tas_amount *out, size_t cap)
{
	const struct que_podset *ps = &qw->podsets[i];
	size_t n = 0, j;

	if (ps->pod_req != NULL) {
		for (j = 0; j < ps->n_pod_req && n < cap; j++) {
			out[n].name = ps->pod_req[j].resource;
			out[n++].value = ps->pod_req[j].per_pod;
		}
		return n;
	}
	for (j = 0; j < ps->n_spec_req && n < cap; j++) {
		out[n].name = que_resource_name(c->st, ps->req[j].res);
		out[n++].value = ps->req[j].per_pod;
	}
	return n;
}

int ctl_tas__ps_set_reqs(
    ctl *c, struct tas_ps *p, const struct que_wl *qw, size_t i, cu_error *err)
{
	struct tas_amount tmp[TAS_MAX_RESOURCES];
	size_t n = ctl_tas__per_pod(c, qw, i, tmp, TAS_MAX_RESOURCES), k;

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
void ctl_tas__ps_charge(ctl *c, struct tas_ps *p)
{
	struct tas_flavor *f = ctl_tas__flavor_find(c, p->flavor);
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

/* ---- Workloads -------------------------------------------------------- */

/* The flavor podSet assignment psa [borrowed] uses for its TAS
 * placement [borrowed]: the first of its flavors that is a TAS flavor,
 * else the first. */
static const char *psa_flavor(ctl *c, const struct api_podset_assignment *psa)
{
	size_t i;

	for (i = 0; i < psa->flavors.n; i++)
		if (ctl_tas__flavor_find(c, psa->flavors.items[i].value) !=
		    NULL)
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
	ctl_tas__ps_unplace(c, p);
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
	    ctl_tas__ps_set_reqs(c, p, qw, i, &err) != CU_OK) {
		ctl_tas__ps_unplace(c, p);
		return;
	}
	ctl_tas__ps_charge(c, p);
}

/* The scheduling fields of a pod template [borrowed] that decide which
 * nodes its pods may use (tolerations, nodeSelector, required node
 * affinity), in the wire form tas/filter.c parses [owned], or NULL when
 * it has none (or they do not decode). */
static json_t *sched_of(const json_t *template)
{
	struct api_pod_sched ps;
	json_t *o = NULL, *tols = NULL;
	bool bad = false;

	if (api_pod_sched_decode(&ps, template, NULL) != CU_OK)
		return NULL;
	if (api_pod_sched_any(&ps))
		o = json_object();
	if (o != NULL && ps.n_tolerations > 0)
		bad = api_tolerations_encode(ps.tolerations, ps.n_tolerations,
			  &tols, NULL) != CU_OK ||
		      json_object_set_new(o, "tolerations", tols) != 0;
	if (o != NULL && !bad && ps.node_selector.n > 0)
		bad = json_object_set_new(o, "nodeSelector",
			  api_strmap_encode(&ps.node_selector)) != 0;
	if (o != NULL && !bad && ps.required_node_affinity != NULL)
		bad = json_object_set_new(o, "affinity",
			  json_pack("{s:{s:o}}", "nodeAffinity",
			      "requiredDuringSchedulingIgnoredDuringExecution",
			      json_deep_copy(ps.required_node_affinity))) != 0;
	api_pod_sched_dispose(&ps);
	if (bad) {
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
	struct api_pod_sched ps;
	bool any;

	if (api_pod_sched_decode(&ps, template, NULL) != CU_OK)
		return false;
	any = api_pod_sched_any(&ps);
	api_pod_sched_dispose(&ps);
	return any;
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
		want = want ||
		       (wl->spec.pod_sets[i].has_topology_request &&
			   api_topology_request_places(
			       &wl->spec.pod_sets[i].topology_request)) ||
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
	if (w == NULL &&
	    (w = ctl_tas__wl_get_or_new(c, wl->meta.uid, n)) == NULL)
		return;
	if (w->n < n && ctl_tas__wl_get_or_new(c, wl->meta.uid, n) == NULL)
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
		ps_inner_free(p);
		p->mode = 0;
		ps_set_filter(p, wl->spec.pod_sets[i].template);
		if (!wl->spec.pod_sets[i].has_topology_request)
			continue;
		if (r->slice_required != NULL && r->has_slice_size) {
			p->slice_level = cu_strdup(r->slice_required);
			p->slice_size = r->slice_size;
		} else if (r->n_layers >= 1) {
			/* the first layer is the slice request, the others
			 * its inner layers (TASMultiLayerTopology) */
			p->slice_level = cu_strdup(r->layers[0].topology);
			p->slice_size = r->layers[0].size;
			for (; p->n_inner + 1 < r->n_layers && p->n_inner < 2;
			     p->n_inner++) {
				p->inner[p->n_inner].level = cu_strdup(
				    r->layers[p->n_inner + 1].topology);
				p->inner[p->n_inner].size =
				    r->layers[p->n_inner + 1].size;
			}
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
			if (ctl_tas__flavor_find(c, sp->resources[j].flavor) !=
			    NULL)
				flavor = sp->resources[j].flavor;
		if (flavor == NULL && sp->n_resources > 0)
			flavor = sp->resources[0].flavor;
		wire = json_loads(sp->topology, 0, NULL);
		w = ctl_tas__wl_get_or_new(c, uid, qw->n_podsets);
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
		ctl_tas__capacity_changed(c);
	wl_free(c, w);
}

void ctl_tas_before_cycle(ctl *c, int64_t now)
{
	cu_map_iter it = CU_MAP_ITER_INIT;
	struct tas_wl **drop = NULL;
	size_t ndrop = 0, cap = 0, i;
	void *v;

	if (c->tas.started && c->tas.dirty_rebuild)
		ctl_tas__rebuild(c);
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
			ctl_tas__ps_unplace(c, &w->ps[i]);
		ctl_tas__capacity_changed(c);
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
static bool wire_uses_node(const json_t *wire, const struct api_strlist *un)
{
	struct api_topology_assignment a;
	bool uses = false;
	size_t d, i, nl;
	cu_error err;

	if (api_topology_assignment_decode(&a, wire, &err) != CU_OK)
		return true;
	nl = a.levels.n;
	for (d = 0; nl > 0 && d < a.n_domains && !uses; d++)
		for (i = 0; i < un->n && !uses; i++)
			uses = strcmp(un->items[i],
				   a.domains[d].values[nl - 1]) == 0;
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
	ctl_tas__capacity_changed(c);
}

void ctl_tas_resume_replaced(ctl *c, const char *uid)
{
	const struct que_wl *qw = que_workload_get(c->st, uid);
	json_t *obj, *adm, *psas, *psa, *patch;
	struct api_workload wl;
	const struct api_strlist *un = &wl.status.unhealthy_nodes;
	store_decision *sd = NULL;
	bool changed = false;
	size_t i, j;
	cu_error err;

	if (qw == NULL || qw->where != QUE_WL_ADMITTED ||
	    (obj = api_informer_get(c->inf[INF_WL], qw->ns, qw->name)) ==
		NULL ||
	    ctl_pipe_stale(c->pipe, CTL_K3(CTL_KIND_WL, qw->ns, qw->name), obj))
		return;
	if (api_workload_decode(&wl, obj, NULL) != CU_OK)
		return;
	if (un->n == 0 ||
	    store_decision_get(c->ledger, uid, &sd, &err) != CU_OK) {
		/* no replacement under way, or none recorded */
		if (un->n != 0 && err.code != CU_ENOTFOUND)
			cu_warn("ledger: %s", err.msg);
		api_workload_dispose(&wl);
		return;
	}
	adm = json_deep_copy(
	    json_object_get(json_object_get(obj, "status"), "admission"));
	psas = json_object_get(adm, "podSetAssignments");
	for (i = 0; i < sd->n_podsets; i++) {
		const char *name = sd->podsets[i].name;
		json_t *rec, *cur;

		if (sd->podsets[i].topology == NULL)
			continue;
		/* the decoded assignments are the wire array's, in order */
		for (j = 0; j < wl.status.admission.n_pod_set_assignments;
		     j++) {
			const struct api_podset_assignment *pa =
			    &wl.status.admission.pod_set_assignments[j];

			if (strcmp(pa->name, name) != 0)
				continue;
			cur = pa->topology_assignment;
			rec = json_loads(sd->podsets[i].topology, 0, NULL);
			if (cur != NULL && rec != NULL &&
			    !json_equal(cur, rec) && wire_uses_node(cur, un) &&
			    !wire_uses_node(rec, un) &&
			    (psa = json_array_get(psas, j)) != NULL) {
				json_object_set(psa, "topologyAssignment", rec);
				changed = true;
				adopt_replacement(c, uid, j, qw, rec);
			}
			json_decref(rec);
			break;
		}
	}
	store_decision_free(sd);
	api_workload_dispose(&wl);
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
	ctl_tas__flavors_free(c->tas.fl, c->tas.nfl);
	c->tas.fl = NULL;
	c->tas.nfl = 0;
	while (cu_map_next(&c->tas.wls, &it, NULL, &v))
		wl_free(c, v);
	cu_map_dispose(&c->tas.wls);
	it = CU_MAP_ITER_INIT;
	while (cu_map_next(&c->tas.pods_by_wl, &it, NULL, &v))
		ctl_tas__wl_pods_free(v);
	cu_map_dispose(&c->tas.pods_by_wl);
	ctl_keys_dispose(&c->tas.tas_only);
	ctl_keys_dispose(&c->tas.dirty_ungate);
	ctl_keys_dispose(&c->tas.ungating);
	ctl_keys_dispose(&c->tas.terminating);
	ctl_keys_dispose(&c->tas.strays);
}
