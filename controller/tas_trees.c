/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/tas_trees.c - the capacity trees of the TAS flavors: built
 * from the Node and Pod caches and the charged assignments when the TAS
 * configuration changes or an informer syncs, changed one node at a time
 * by Node and Pod events; the Topology, Node and Pod informers (started
 * once a ResourceFlavor names a topology); which ResourceFlavors are TAS
 * flavors (ctl_tas_sync_config), which installs the engine's hook.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/json.h"
#include "api/wire.h"
#include "controller/tas_int.h"

/* ---- trees ------------------------------------------------------------ */

/* Does node carry every label of f's spec.nodeLabels? */
static bool node_matches(
    const struct tas_flavor *f, const struct api_node *node)
{
	const char *k;
	json_t *v;

	json_object_foreach(f->labels, k, v)
	{
		const char *have = api_strmap_get(&node->meta.labels, k);

		if (have == NULL || !json_is_string(v) ||
		    strcmp(have, json_string_value(v)) != 0)
			return false;
	}
	return true;
}

static void node_into(struct tas_flavor *f, const struct api_node *node)
{
	cu_error err;

	if (f->tree == NULL)
		return;
	if (!node_matches(f, node)) {
		if (node->meta.name != NULL)
			tas_tree_node_remove(f->tree, node->meta.name);
		return;
	}
	if (tas_node_apply(f->tree, node, &err) != CU_OK)
		cu_warn("topology %s: node: %s", f->topology, err.msg);
}

/* Node obj [borrowed] decoded into *out; false (logged) when it cannot
 * be. */
static bool node_decode(json_t *obj, struct api_node *out)
{
	const char *name = ctl_jmeta(obj, "name");
	cu_error err;

	if (api_node_decode(out, obj, &err) == CU_OK)
		return true;
	cu_warn("topology: node %s: %s", name ? name : "", err.msg);
	return false;
}

struct each {
	ctl *c;
	struct tas_flavor *f;
};

static void each_node(json_t *obj, void *payload)
{
	struct each *e = payload;
	struct api_node node;

	if (!node_decode(obj, &node))
		return;
	node_into(e->f, &node);
	api_node_dispose(&node);
}

static void each_pod(json_t *obj, void *payload)
{
	struct each *e = payload;
	struct api_pod pod;
	cu_error err;

	if (api_pod_decode(&pod, obj, &err) != CU_OK) {
		cu_debug("topology %s: pod: %s", e->f->topology, err.msg);
		return;
	}
	if (pod.meta.uid != NULL && tas_pods_update(e->f->pods, e->f->tree,
					pod.meta.uid, &pod, &err) != CU_OK)
		cu_warn("topology %s: pod: %s", e->f->topology, err.msg);
	api_pod_dispose(&pod);
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
	json_t *obj = api_informer_get(c->tas.topo, NULL, f->topology);
	struct api_topology topo;
	const char *names[16];
	struct each e = {c, f};
	size_t n = 0, i;
	cu_error err;

	flavor_drop_tree(f);
	if (obj == NULL || api_topology_decode(&topo, obj, NULL) != CU_OK)
		return;
	for (i = 0; i < topo.spec.levels.n && n < 16; i++)
		names[n++] = topo.spec.levels.items[i];
	if (n > 0 &&
	    (tas_tree_new(f->topology, names, n, &f->tree, &err) != CU_OK ||
		tas_pods_new(&f->pods, &err) != CU_OK)) {
		cu_warn("topology %s: %s", f->topology, err.msg);
		flavor_drop_tree(f);
		n = 0;
	}
	api_topology_dispose(&topo);
	if (n == 0)
		return;
	tas_tree_set_mixed_profile(
	    f->tree, c->cfg == NULL || c->cfg->tas_gates.profile_mixed);
	api_informer_foreach(c->tas.nodes, each_node, &e);
	api_informer_foreach(c->tas.pods, each_pod, &e);
}

void ctl_tas__rebuild(ctl *c)
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
		if (ctl_tas__informers_synced(c))
			flavor_build(c, &c->tas.fl[i]);
		else
			flavor_drop_tree(&c->tas.fl[i]);
	}
	it = CU_MAP_ITER_INIT;
	while (cu_map_next(&c->tas.wls, &it, NULL, &v)) {
		struct tas_wl *w = v;

		for (i = 0; i < w->n; i++)
			ctl_tas__ps_charge(c, &w->ps[i]);
	}
	que_tas_capacity_changed(c->st);
	c->dirty_cycle = true;
}

/* ---- informers -------------------------------------------------------- */

void ctl_tas__capacity_changed(ctl *c)
{
	que_tas_capacity_changed(c->st);
	c->dirty_cycle = true;
}

static void node_event(json_t *obj, bool deleted, void *payload)
{
	ctl *c = payload;
	struct api_node node;
	size_t i;

	if (!node_decode(obj, &node))
		return;
	for (i = 0; i < c->tas.nfl; i++) {
		struct tas_flavor *f = &c->tas.fl[i];

		if (f->tree == NULL)
			continue;
		if (!deleted)
			node_into(f, &node);
		else if (node.meta.name != NULL)
			tas_tree_node_remove(f->tree, node.meta.name);
	}
	api_node_dispose(&node);
	c->tas.dirty_nodes = true;
	ctl_tas__capacity_changed(c);
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

/* The pods of one Workload (by name) in the pod cache. */
void ctl_tas__wl_pods_free(struct tas_wl_pods *e)
{
	ctl_keys_dispose(&e->names);
	cu_free(e->key);
	cu_free(e);
}

/* Keep the ungater's index of pod [borrowed] up to date. */
static void index_pod(ctl *c, const struct api_pod *pod, bool deleted)
{
	const char *wl = api_strmap_get(&pod->meta.annotations, ANN_WORKLOAD);
	const char *ns = pod->meta.namespace_;
	const char *name = pod->meta.name;
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
			ctl_tas__wl_pods_free(e);
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

/* What a TAS pod's event means for the ungater and the node-failure
 * checks (pod decoded once). */
static void pod_marks(ctl *c, const struct api_pod *pod, bool deleted)
{
	const char *wl = api_strmap_get(&pod->meta.annotations, ANN_WORKLOAD);
	const char *ns = pod->meta.namespace_ ? pod->meta.namespace_ : "";
	const char *uid = pod->meta.uid;
	bool gated = api_pod_gated(pod, TAS_SCHEDULING_GATE);
	bool finished = api_pod_finished(pod);

	index_pod(c, pod, deleted);
	/* Kueue's node failure controller looks at a node again when a
	 * TAS pod bound there ends or goes (TASReplaceNodeOnPodTermination),
	 * and when an ungated pod waits for its host (a stray one) */
	if (wl != NULL && pod->spec.node_name != NULL &&
	    (deleted || finished || pod->meta.has_deletion))
		c->tas.dirty_nodes = true;
	if (wl != NULL && !deleted && ctl_tas__pinned_host(pod) != NULL)
		(void)ctl_keys_put(&c->tas.strays, CTL_K2(ns, wl));
	if (deleted || finished)
		ctl_keys_del(&c->tas.terminating, CTL_K1(uid));
	if (deleted || !gated)
		ctl_keys_del(&c->tas.ungating, CTL_K1(uid));
	if (!deleted && wl != NULL && gated)
		(void)ctl_keys_put(&c->tas.dirty_ungate, CTL_K2(ns, wl));
}

static void pod_event(json_t *obj, bool deleted, void *payload)
{
	ctl *c = payload;
	struct api_pod pod;
	size_t i;
	cu_error err;

	if (api_pod_decode(&pod, obj, &err) != CU_OK) {
		cu_debug("topology: pod: %s", err.msg);
		return;
	}
	if (pod.meta.uid == NULL) {
		api_pod_dispose(&pod);
		return;
	}
	for (i = 0; i < c->tas.nfl; i++) {
		struct tas_flavor *f = &c->tas.fl[i];

		if (f->tree != NULL &&
		    tas_pods_update(f->pods, f->tree, pod.meta.uid,
			deleted ? NULL : &pod, &err) != CU_OK)
			cu_warn("topology %s: pod: %s", f->topology, err.msg);
	}
	if (deleted || tas_pod_charged_node(&pod) == NULL)
		ctl_tas__capacity_changed(c);
	pod_marks(c, &pod, deleted);
	api_pod_dispose(&pod);
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

	rc = api_informer_new(&c->tas.topo, c->client, &ctl_tas__res_topo, NULL,
	    NULL, NULL, &th, c, err);
	if (rc == CU_OK)
		rc = api_informer_new(&c->tas.nodes, c->client,
		    &ctl_tas__res_nodes, NULL, NULL, NULL, &nh, c, err);
	if (rc == CU_OK)
		rc = api_informer_new(&c->tas.pods, c->client,
		    &ctl_tas__res_pods, NULL, NULL, NULL, &ph, c, err);
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

/* f's labels and tolerations from the decoded flavor rf, in the wire
 * form the node filter parses; false when out of memory. */
static bool flavor_wire(
    struct tas_flavor *f, const struct api_resource_flavor *rf)
{
	json_t *tols;

	if (rf->spec.node_labels.n > 0 &&
	    (f->labels = api_strmap_encode(&rf->spec.node_labels)) == NULL)
		return false;
	if (rf->spec.n_tolerations == 0)
		return true;
	if (api_tolerations_encode(rf->spec.tolerations, rf->spec.n_tolerations,
		&tols, NULL) != CU_OK)
		return false;
	/* json_pack's o takes tols, also when it fails */
	f->tols = json_pack("{s:o}", "tolerations", tols);
	return f->tols != NULL;
}

static void scan_rf(json_t *obj, void *payload)
{
	struct cfg_scan *s = payload;
	struct api_resource_flavor rf;
	struct tas_flavor *f;
	cu_error err;

	if (s->nomem || api_resource_flavor_decode(&rf, obj, NULL) != CU_OK)
		return;
	if (rf.spec.topology_name == NULL || rf.meta.name == NULL) {
		api_resource_flavor_dispose(&rf);
		return;
	}
	if (cu_grow((void **)&s->fl, &s->cap, s->n + 1, sizeof(*s->fl))) {
		s->nomem = true;
		api_resource_flavor_dispose(&rf);
		return;
	}
	f = &s->fl[s->n];
	memset(f, 0, sizeof(*f));
	f->name = cu_strdup(rf.meta.name);
	f->topology = cu_strdup(rf.spec.topology_name);
	if (f->name == NULL || f->topology == NULL || !flavor_wire(f, &rf) ||
	    tas_filter_parse(f->tols, &f->tols_f, &err) != CU_OK) {
		api_resource_flavor_dispose(&rf);
		cu_free(f->name);
		cu_free(f->topology);
		json_decref(f->labels);
		json_decref(f->tols);
		s->nomem = true;
		return;
	}
	s->n++;
	api_resource_flavor_dispose(&rf);
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

void ctl_tas__flavors_free(struct tas_flavor *fl, size_t n)
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
	struct api_cluster_queue cq;
	const struct api_resource_groups *rg;
	size_t i, k, n = 0;
	bool all = true;

	if (api_cluster_queue_decode(&cq, obj, NULL) != CU_OK)
		return;
	rg = &cq.spec.resource_groups;
	for (i = 0; i < rg->n; i++)
		for (k = 0; k < rg->items[i].n_flavors; k++) {
			n++;
			if (ctl_tas__flavor_find(
				c, rg->items[i].flavors[k].name) == NULL)
				all = false;
		}
	if (cq.meta.name != NULL && n > 0 && all)
		(void)ctl_keys_put(&c->tas.tas_only, CTL_K1(cq.meta.name));
	api_cluster_queue_dispose(&cq);
}

void ctl_tas_sync_config(ctl *c)
{
	struct cfg_scan s = {NULL, 0, 0, false};
	cu_error err;

	api_informer_foreach(c->inf[INF_RF], scan_rf, &s);
	if (s.nomem) {
		ctl_tas__flavors_free(s.fl, s.n);
		cu_warn("topology: out of memory");
		return;
	}
	if (s.n > 1)
		qsort(s.fl, s.n, sizeof(*s.fl), cmp_flavor);
	if (same_flavors(s.fl, s.n, c->tas.fl, c->tas.nfl)) {
		ctl_tas__flavors_free(s.fl, s.n);
	} else {
		ctl_tas__flavors_free(c->tas.fl, c->tas.nfl);
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
		c->tas.hook.check = ctl_tas__hook_check;
		c->tas.hook.assume = ctl_tas__hook_assume;
		c->tas.hook.check_without = ctl_tas__hook_check_without;
		que_set_tas_hook(c->st, &c->tas.hook);
	} else {
		que_set_tas_hook(c->st, NULL);
	}
}
