/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/tas_nodes.c - node failures of placed podSets, as Kueue's
 * default gates: NotReady nodes (after the NodeFailureDelay, or once the
 * pods on them ended), tainted nodes the podSet does not tolerate, healthy
 * nodes leaving status.unhealthyNodes, a failed node replaced within the
 * domain (recorded in the ledger first) or the Workload evicted
 * (NodeFailures), and stray pods left for a replaced node failed; the
 * assignment of a Workload owned by a single Pod kept as it is
 * (SkipReassignmentForPodOwnedWorkloads).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/json.h"
#include "controller/tas_int.h"

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
	struct tas_flavor *f = ctl_tas__flavor_find(c, p->flavor);
	struct tas_filter filter;
	struct tas_request r = {p->mode ? p->mode : TAS_UNCONSTRAINED, p->level,
	    1, p->req, p->n_req, p->slice_level, p->slice_size, &filter,
	    p->inner, p->n_inner};
	struct api_topology_assignment na;
	json_t *adm, *psas, *wire = NULL, *patch;
	char msg[512], nbuf[256];
	cu_error err;
	int rc;

	if (f == NULL || f->tree == NULL)
		return;
	ctl_tas__filter_of(f, p, &filter);
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
	ctl_tas__capacity_changed(c);
}

/* ---- SkipReassignmentForPodOwnedWorkloads ---------------------------- */

/* Is Workload wl [borrowed] one whose failed nodes are not replaced:
 * owned by a single Pod, with Kueue's SkipReassignmentForPodOwnedWorkloads
 * on (its default)? */
static bool pod_owned(const ctl *c, const struct api_workload *wl)
{
	if (c->cfg != NULL && !c->cfg->tas_gates.skip_pod_owned)
		return false;
	return rec_wl_owned_by_single_pod(wl);
}

/* The node failures of podSet p kept (not replaced) while the nodes stay
 * failed: p->kept, a node added or dropped. */
static bool kept_add(struct tas_ps *p, const char *node)
{
	char **items =
	    cu_realloc(p->kept.items, (p->kept.n + 1) * sizeof(*p->kept.items));

	if (items == NULL)
		return false;
	p->kept.items = items;
	if ((items[p->kept.n] = cu_strdup(node)) == NULL)
		return false;
	p->kept.n++;
	return true;
}

static void kept_drop(struct tas_ps *p, const char *node)
{
	size_t i;

	for (i = 0; i < p->kept.n; i++)
		if (strcmp(p->kept.items[i], node) == 0) {
			cu_free(p->kept.items[i]);
			p->kept.items[i] = p->kept.items[--p->kept.n];
			return;
		}
}

/* Kueue keeps the assignment of a Workload owned by a single Pod: its
 * Pod cannot move, and the Workload ends with it (the Pod's owner makes
 * a new Pod, a new Workload), so a replacement would only charge a node
 * nobody uses while the Pod's own node looks free. Kueue's scheduler
 * clears status.unhealthyNodes; the node is remembered so that it is
 * not recorded again while it stays failed. */
static void keep_assignment(
    ctl *c, const struct que_wl *qw, struct tas_ps *p, const char *node)
{
	json_t *patch = json_pack("{s:{s:n}}", "status", "unhealthyNodes");

	if (patch == NULL || !kept_add(p, node)) {
		json_decref(patch);
		return;
	}
	cu_info("workload %s/%s: owned by a single Pod, keeps its "
		"assignment on unhealthy node %s "
		"(SkipReassignmentForPodOwnedWorkloads)",
	    qw->ns, qw->name, node);
	ctl_wl_write(c, CTL_PIPE_WL_STATUS, qw->ns, qw->name, patch, NULL);
}

/* The patch that sets the Workload's status.unhealthyNodes to l
 * [borrowed] [owned: json_decref], NULL when out of memory. */
static json_t *unhealthy_patch(const struct api_strlist *l)
{
	json_t *list = json_array();
	size_t i;

	for (i = 0; list != NULL && i < l->n; i++)
		if (json_array_append_new(
			list, json_pack("{s:s}", "name", l->items[i])) != 0) {
			json_decref(list);
			return NULL;
		}
	return json_pack("{s:{s:o}}", "status", "unhealthyNodes", list);
}

/* Failed node `node` of podSet p: tas_node_failed's action carried out
 * on the Workload as cached. */
static void mark_unhealthy(ctl *c, const struct que_wl *qw, struct tas_ps *p,
    size_t podset, const char *node, int64_t now)
{
	json_t *obj = api_informer_get(c->inf[INF_WL], qw->ns, qw->name);
	struct api_workload wl;
	struct api_strlist l = {NULL, 0};
	json_t *patch = NULL;
	char msg[512];
	cu_error err;

	if (obj == NULL ||
	    ctl_pipe_stale(c->pipe, CTL_K3(CTL_KIND_WL, qw->ns, qw->name), obj))
		return;
	cu_error_clear(&err);
	if (api_workload_decode(&wl, obj, &err) != CU_OK) {
		cu_warn("workload %s/%s: %s", qw->ns, qw->name, err.msg);
		return;
	}
	if (api_conditions_true(&wl.status.conditions, REC_COND_EVICTED)) {
		/* evicted already: its release is under way */
		api_workload_dispose(&wl);
		return;
	}
	switch (pod_owned(c, &wl)
		    ? tas_node_failed_pod_owned(&wl.status.unhealthy_nodes,
			  &p->kept, node, msg, sizeof(msg))
		    : tas_node_failed(
			  &wl.status.unhealthy_nodes, node, msg, sizeof(msg))) {
	case TAS_FAILED_REPLACE:
		replace_node(c, qw, obj, p, podset, node, now);
		break;
	case TAS_FAILED_KEEP:
		keep_assignment(c, qw, p, node);
		break;
	case TAS_FAILED_KEPT:
		break;
	case TAS_FAILED_EVICT:
		evict_node_failures(c, qw, msg, now);
		break;
	case TAS_FAILED_RECORD:
		l.items = (char **)&node;
		l.n = 1;
		patch = unhealthy_patch(&l);
		if (patch == NULL)
			break;
		cu_info("workload %s/%s: node %s failed; recorded in "
			"status.unhealthyNodes",
		    qw->ns, qw->name, node);
		ctl_wl_write(
		    c, CTL_PIPE_WL_STATUS, qw->ns, qw->name, patch, NULL);
		break;
	}
	api_workload_dispose(&wl);
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
		struct api_pod pod;

		if (ctl_tas__pod_get(c, ns, v[i]->k[0], &pod) != CU_OK)
			continue;
		found = pod.spec.node_name != NULL &&
			strcmp(pod.spec.node_name, node) == 0 &&
			!api_pod_finished(&pod) && !pod.meta.has_deletion;
		api_pod_dispose(&pod);
	}
	cu_free(v);
	return found;
}

/* podSet i's effective tolerations, as Kueue's podset.FromAssignment and
 * the admission checks' podSetUpdates make them: its template's, its
 * flavor's (spec.tolerations), and the updates' for its name. A new
 * array [owned: json_decref], NULL when out of memory. */
static void extend_tols(json_t *out, const struct api_toleration *t, size_t n)
{
	json_t *a = NULL;

	if (n > 0 && api_tolerations_encode(t, n, &a, NULL) == CU_OK)
		json_array_extend(out, a);
	json_decref(a);
}

static json_t *podset_tolerations(ctl *c, json_t *obj,
    const struct api_workload *wl, size_t i, const char *flavor)
{
	json_t *out = json_array();
	const struct api_podset *ps = wl != NULL && i < wl->spec.n_pod_sets
					  ? &wl->spec.pod_sets[i]
					  : NULL;
	const char *name = ps != NULL ? ps->name : NULL;
	json_t *rf = c->inf[INF_RF] != NULL && flavor != NULL
			 ? api_informer_get(c->inf[INF_RF], NULL, flavor)
			 : NULL;
	struct api_resource_flavor drf;
	struct api_pod_sched sched;
	json_t *ac, *u;
	size_t j, k;

	if (out == NULL)
		return NULL;
	if (ps != NULL &&
	    api_pod_sched_decode(&sched, ps->template, NULL) == CU_OK) {
		extend_tols(out, sched.tolerations, sched.n_tolerations);
		api_pod_sched_dispose(&sched);
	}
	if (rf != NULL && api_resource_flavor_decode(&drf, rf, NULL) == CU_OK) {
		extend_tols(out, drf.spec.tolerations, drf.spec.n_tolerations);
		api_resource_flavor_dispose(&drf);
	}
	/* podSetUpdates are not in the model (api_admission_check_state) */
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
 * that is healthy again leaves the list (tas_node_recovered). */
static void unlist_healthy(ctl *c, const struct que_wl *qw, json_t *obj,
    const struct api_workload *wl, const char *node)
{
	struct api_strlist rest;
	json_t *patch;
	bool nomem;

	if (wl->status.unhealthy_nodes.n == 0 ||
	    ctl_pipe_stale(c->pipe, CTL_K3(CTL_KIND_WL, qw->ns, qw->name), obj))
		return;
	if (!tas_node_recovered(
		&wl->status.unhealthy_nodes, node, &rest, &nomem))
		return;
	patch = unhealthy_patch(&rest);
	api_strlist_dispose(&rest);
	if (patch == NULL)
		return;
	cu_info("workload %s/%s: node %s is healthy again; removed from "
		"status.unhealthyNodes",
	    qw->ns, qw->name, node);
	ctl_wl_write(c, CTL_PIPE_WL_STATUS, qw->ns, qw->name, patch, NULL);
}

const char *ctl_tas__pinned_host(const struct api_pod *pod)
{
	const char *ph = pod->status.phase;

	if (pod->spec.node_name != NULL ||
	    api_pod_gated(pod, TAS_SCHEDULING_GATE) ||
	    (ph != NULL && strcmp(ph, "Pending") != 0) ||
	    pod->meta.has_deletion)
		return NULL;
	return api_strmap_get(&pod->spec.node_selector, TAS_HOSTNAME_LABEL);
}

/* Pod `pod` [borrowed] waits for `host`, which its podSet's assignment
 * no longer has: marked Failed with TerminatedByKueue, and the event. */
static void fail_stray(ctl *c, const struct que_wl *qw,
    const struct api_pod *pod, const char *host, int64_t now)
{
	static const struct api_condition_set terminated = {"TerminatedByKueue",
	    API_COND_TRUE, "UnschedulableOnAssignedNode",
	    "Pod terminated by Kueue NodeController due to node taint", false,
	    0};
	const char *name = pod->meta.name, *uid = pod->meta.uid;
	json_t *status, *patch, *x;
	char ts[CU_TIME_RFC3339_LEN];
	struct ctl_kent *t;

	cu_time_format_rfc3339(now, ts);
	/* the cached conditions, copied: the patch replaces the list */
	status = json_object();
	if (status != NULL && api_conditions_encode_status(status,
				  &pod->status.conditions, true, NULL) != CU_OK)
		json_object_clear(status);
	if (status == NULL ||
	    api_conditions_set_json(status, &terminated, ts, NULL) != CU_OK ||
	    json_object_set_new(status, "phase", json_string("Failed")) != 0) {
		json_decref(status);
		return;
	}
	/* json_pack's o takes status, also when it fails */
	if ((patch = json_pack("{s:o}", "status", status)) == NULL)
		return;
	cu_info("pod %s/%s of workload %s: waits for %s, which its "
		"assignment no longer has; marked Failed",
	    qw->ns, name, qw->name, host);
	ctl_pipe_queue(c->pipe, CTL_PIPE_JOB_RESET_START, &ctl_tas__res_pods,
	    qw->ns, name, NULL, patch);
	/* Kueue's event on the pod, by the recorder its node controller
	 * shares with the ResourceFlavor one (the cache's pods carry no
	 * kind) */
	x = json_pack("{s:s,s:s,s:{s:s,s:s,s:s}}", "apiVersion", "v1", "kind",
	    "Pod", "metadata", "namespace", qw->ns, "name", name, "uid", uid);
	ctl_emit_as(c, x, "tas-resource-flavor-controller",
	    "PodTerminatedByKueue",
	    "Pod terminated by Kueue NodeController due to node taint");
	json_decref(x);
	if ((t = ctl_keys_put(&c->tas.terminating, CTL_K1(uid))) != NULL)
		t->n = now + UNGATE_RETRY_NS;
}

/* The placed podSet of w named `name` [borrowed] by wl's spec, or NULL. */
static const struct tas_ps *placed_podset(
    const struct tas_wl *w, const struct api_workload *wl, const char *name)
{
	const struct tas_ps *p = NULL;
	size_t j;

	for (j = 0; j < w->n && j < wl->spec.n_pod_sets; j++)
		if (strcmp(wl->spec.pod_sets[j].name, name) == 0)
			p = &w->ps[j];
	return p != NULL && p->placed ? p : NULL;
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
	struct ctl_kent **v = NULL;
	struct api_workload wl;
	size_t i, n = 0;

	cu_free(key);
	if (e == NULL || api_workload_decode(&wl, obj, NULL) != CU_OK)
		return;
	if (ctl_keys_ordered(&e->names, &v, &n) != CU_OK)
		n = 0;
	for (i = 0; i < n; i++) {
		struct api_pod pod;
		const char *host, *ps;
		const struct tas_ps *p;
		struct ctl_kent *t;

		if (ctl_tas__pod_get(c, qw->ns, v[i]->k[0], &pod) != CU_OK)
			continue;
		host = ctl_tas__pinned_host(&pod);
		ps = api_strmap_get(&pod.meta.labels, LABEL_PODSET);
		p = host && ps && pod.meta.uid ? placed_podset(w, &wl, ps)
					       : NULL;
		t = p ? ctl_keys_get(&c->tas.terminating, CTL_K1(pod.meta.uid))
		      : NULL;
		if (p != NULL && tas_host_stray(&p->a, host) &&
		    (t == NULL || now >= t->n))
			fail_stray(c, qw, &pod, host, now);
		api_pod_dispose(&pod);
	}
	cu_free(v);
	api_workload_dispose(&wl);
}

static void check_podset_nodes(ctl *c, const struct que_wl *qw,
    struct tas_ps *p, size_t podset, int64_t now, int64_t *due)
{
	const struct api_topology_assignment *a = &p->a;
	struct tas_health_rules rules = health_rules(c);
	json_t *obj = api_informer_get(c->inf[INF_WL], qw->ns, qw->name);
	struct api_workload wl;
	bool have_wl = false;
	json_t *tols = NULL;
	size_t nl = a->levels.n, d;

	/* Kueue tracks nodes of assignments at the hostname level only. */
	if (nl == 0 || strcmp(a->levels.items[nl - 1], TAS_HOSTNAME_LABEL) != 0)
		return;
	have_wl = obj != NULL && api_workload_decode(&wl, obj, NULL) == CU_OK;
	for (d = 0; d < a->n_domains; d++) {
		const char *node = a->domains[d].values[nl - 1];
		json_t *nobj = api_informer_get(c->tas.nodes, NULL, node);
		struct tas_node_usage u = {false, NULL};
		struct api_node n;
		bool have_n = false, not_ready = false, tainted = false;
		int64_t when = 0;
		enum tas_node_health h;

		if (nobj != NULL && api_node_decode(&n, nobj, NULL) == CU_OK) {
			have_n = true;
			not_ready = !api_node_ready(&n);
			tainted = n.spec.n_taints > 0;
		} else if (nobj != NULL) {
			/* a Node we cannot read: not judged until it can be */
			continue;
		}
		if (not_ready || (rules.on_taints && tainted))
			u.progressing =
			    progressing_on(c, qw->ns, qw->name, node);
		if (rules.on_taints && tainted && tols == NULL)
			tols = podset_tolerations(
			    c, obj, have_wl ? &wl : NULL, podset, p->flavor);
		u.tolerations = tols;
		h = tas_node_health(have_n ? &n : NULL, &u, &rules, now, &when);
		if (have_n)
			api_node_dispose(&n);
		if (h != TAS_NODE_FAILED)
			kept_drop(p, node); /* a new failure is handled anew */
		else if (have_wl && pod_owned(c, &wl) &&
			 tas_node_failed_pod_owned(&wl.status.unhealthy_nodes,
			     &p->kept, node, NULL, 0) == TAS_FAILED_KEPT)
			continue; /* kept: nothing to look at again */
		if (h == TAS_NODE_FAILED) {
			/* looked at again until handled: the Workload's
			 * update may reach us before our write is seen */
			if (*due == 0 || now + NODE_RECHECK_NS < *due)
				*due = now + NODE_RECHECK_NS;
			json_decref(tols);
			if (have_wl)
				api_workload_dispose(&wl);
			mark_unhealthy(c, qw, p, podset, node, now);
			return; /* p may have changed */
		}
		if (h == TAS_NODE_WAIT && (*due == 0 || when < *due))
			*due = when;
		if (have_wl)
			unlist_healthy(c, qw, obj, &wl, node);
	}
	json_decref(tols);
	if (have_wl)
		api_workload_dispose(&wl);
}

void ctl_tas__check_nodes(ctl *c, int64_t now)
{
	cu_map_iter it = CU_MAP_ITER_INIT;
	const struct que_wl *wake = NULL;
	int64_t due = 0;
	void *v;
	size_t i;

	if (!c->tas.started || !ctl_tas__informers_synced(c) ||
	    c->inf[INF_WL] == NULL)
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
void ctl_tas__check_strays(ctl *c, int64_t now)
{
	ctl_keys batch;
	struct ctl_kent **v;
	size_t i, n;

	if (!c->tas.started || !ctl_tas__informers_synced(c) ||
	    c->inf[INF_WL] == NULL || ctl_keys_count(&c->tas.strays) == 0 ||
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
