/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/tas_ungate.c - the ungater: the pods of a placed podSet
 * lose the kueue.x-k8s.io/topology scheduling gate and get their domain's
 * nodeSelector, in rank order, each write retried if its effect is not
 * seen in the cache; ctl_tas_ungate is the tick's entry point, which also
 * runs the node-failure checks of tas_nodes.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/json.h"
#include "controller/tas_int.h"

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

bool ctl_tas__finished(json_t *pod)
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
	const char *wl = ctl_tas__pod_ann(pod, ANN_WORKLOAD);
	const char *ps = api_json_str(
	    json_object_get(json_object_get(pod, "metadata"), "labels"),
	    LABEL_PODSET);
	const char *idx;
	struct gated *g;

	if (ns == NULL || wl == NULL || ps == NULL || strcmp(ns, p->ns) != 0 ||
	    strcmp(wl, p->wl) != 0 || strcmp(ps, p->podset) != 0 ||
	    ctl_tas__finished(pod) ||
	    ctl_jmeta(pod, "deletionTimestamp") != NULL)
		return;
	if (!ctl_tas__has_gate(pod)) {
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
		idx = ctl_tas__pod_ann(pod, LABEL_INDEX);
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

/* Seconds since Admitted=True in cs [borrowed], or -1 when it is not. */
static double since_admitted(const struct api_conditions *cs, int64_t now)
{
	const struct api_condition *adm = api_conditions_find(cs, "Admitted");

	if (adm == NULL || adm->status != API_COND_TRUE ||
	    !adm->has_last_transition)
		return -1;
	return now > adm->last_transition_ns
		   ? (double)(now - adm->last_transition_ns) / 1e9
		   : 0.0;
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
		ctl_pipe_queue(c->pipe, CTL_PIPE_JOB_START, &ctl_tas__res_pods,
		    ns, p.v[i].name, NULL, patch);
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
	struct api_workload wl;
	double admitted_s;
	size_t i;

	if (ctl_decode_cached(c, ns, name, &wl) != CU_OK)
		return;
	admitted_s = since_admitted(&wl.status.conditions, now);
	for (i = 0; wl.status.has_admission &&
		    i < wl.status.admission.n_pod_set_assignments;
	     i++) {
		const struct api_podset_assignment *psa =
		    &wl.status.admission.pod_set_assignments[i];
		struct api_topology_assignment a;
		cu_error err;

		if (psa->topology_assignment == NULL ||
		    api_topology_assignment_decode(
			&a, psa->topology_assignment, &err) != CU_OK)
			continue;
		ungate_podset(c, ns, name, psa->name, &a, now,
		    wl.status.admission.cluster_queue, admitted_s);
		api_topology_assignment_dispose(&a);
	}
	api_workload_dispose(&wl);
}

void ctl_tas_ungate(ctl *c, int64_t now)
{
	ctl_keys batch;
	struct ctl_kent **v;
	size_t i, n;

	ctl_tas__check_nodes(c, now);
	ctl_tas__check_strays(c, now);
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
