/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/tas_nodes.c - node failures of placed podSets, as Kueue's
 * default gates: NotReady nodes (after the NodeFailureDelay, or once the
 * pods on them ended), tainted nodes the podSet does not tolerate, healthy
 * nodes leaving status.unhealthyNodes, a failed node replaced within the
 * domain (recorded in the ledger first) or the Workload evicted
 * (NodeFailures), and stray pods left for a replaced node failed.
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
	    1, p->req, p->n_req, p->slice_level, p->slice_size, &filter};
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

static void mark_unhealthy(ctl *c, const struct que_wl *qw, struct tas_ps *p,
    size_t podset, const char *node, int64_t now)
{
	json_t *obj = api_informer_get(c->inf[INF_WL], qw->ns, qw->name);
	json_t *un =
	    json_object_get(json_object_get(obj, "status"), "unhealthyNodes");
	json_t *list, *e, *patch;
	size_t i;
	struct api_conditions cs;
	bool evicted;

	if (obj == NULL ||
	    ctl_pipe_stale(c->pipe, CTL_K3(CTL_KIND_WL, qw->ns, qw->name), obj))
		return;
	evicted = api_conditions_decode(obj, &cs, NULL) == CU_OK &&
		  api_conditions_true(&cs, REC_COND_EVICTED);
	api_conditions_dispose(&cs);
	if (evicted)
		return; /* evicted already: its release is under way */
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
	struct api_conditions cs;
	const struct api_condition *ready;
	bool not_ready;

	if (api_conditions_decode(node, &cs, NULL) != CU_OK)
		return true; /* a Ready condition without a status */
	ready = api_conditions_find(&cs, "Ready");
	not_ready = ready != NULL && ready->status != API_COND_TRUE;
	api_conditions_dispose(&cs);
	return not_ready;
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
			strcmp(bound, node) == 0 && !ctl_tas__finished(pod) &&
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
const char *ctl_tas__pinned_host(json_t *pod)
{
	json_t *spec = json_object_get(pod, "spec");
	const char *ph = api_json_str(json_object_get(pod, "status"), "phase");

	if (api_json_str(spec, "nodeName") != NULL || ctl_tas__has_gate(pod) ||
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
		const char *host = pod ? ctl_tas__pinned_host(pod) : NULL;
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
		ctl_pipe_queue(c->pipe, CTL_PIPE_JOB_RESET_START,
		    &ctl_tas__res_pods, qw->ns, v[i]->k[0], NULL, patch);
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
