/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/tas_ungate.c - the ungater: the pods of a placed podSet,
 * decoded from the cache (api_pod), are given to tas_ungate_plan, and
 * the gated ones it places lose the kueue.x-k8s.io/topology scheduling
 * gate and get their domain's nodeSelector, in its order, each write
 * retried if its effect is not seen in the cache; ctl_tas_ungate is the
 * tick's entry point, which also runs the node-failure checks of
 * tas_nodes.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/json.h"
#include "controller/tas_int.h"

/* ---- the ungater ------------------------------------------------------ */

int ctl_tas__pod_get(
    ctl *c, const char *ns, const char *name, struct api_pod *out)
{
	json_t *obj = api_informer_get(c->tas.pods, ns, name);
	cu_error err;

	if (obj == NULL)
		return CU_ENOTFOUND;
	if (api_pod_decode(out, obj, &err) != CU_OK) {
		cu_debug("topology: pod %s/%s: %s", ns, name, err.msg);
		return err.code;
	}
	return CU_OK;
}

/* The live pods of podSet `podset` [borrowed] of Workload ns/wl from the
 * ungater's index, decoded into *pods [owned: api_pod_dispose each,
 * cu_free]; their number. */
static size_t podset_pods(ctl *c, const char *ns, const char *wl,
    const char *podset, struct api_pod **pods)
{
	char *key = cu_asprintf("%s\x1f%s", ns, wl);
	struct tas_wl_pods *e =
	    key ? cu_map_get(&c->tas.pods_by_wl, key) : NULL;
	struct ctl_kent **v = NULL;
	size_t k, nv = 0, n = 0;

	cu_free(key);
	*pods = NULL;
	if (e == NULL || ctl_keys_ordered(&e->names, &v, &nv) != CU_OK)
		return 0;
	*pods = cu_calloc(nv + 1, sizeof(**pods));
	for (k = 0; *pods != NULL && k < nv; k++) {
		struct api_pod *p = &(*pods)[n];
		const char *pw, *ps;

		if (ctl_tas__pod_get(c, ns, v[k]->k[0], p) != CU_OK)
			continue;
		pw = api_strmap_get(&p->meta.annotations, ANN_WORKLOAD);
		ps = api_strmap_get(&p->meta.labels, LABEL_PODSET);
		if (p->meta.namespace_ == NULL || pw == NULL || ps == NULL ||
		    strcmp(p->meta.namespace_, ns) != 0 ||
		    strcmp(pw, wl) != 0 || strcmp(ps, podset) != 0 ||
		    api_pod_finished(p) || p->meta.has_deletion) {
			api_pod_dispose(p);
			continue;
		}
		n++;
	}
	cu_free(v);
	return n;
}

/* The merge patch that ungates pod p [borrowed] onto domain d of a: its
 * other scheduling gates kept, the domain's nodeSelector added. */
static json_t *ungate_patch(
    const struct api_pod *p, const struct api_topology_assignment *a, size_t d)
{
	json_t *gates = json_array(), *sel = json_object(), *patch;
	size_t i;

	for (i = 0; gates != NULL && i < p->spec.scheduling_gates.n; i++) {
		const char *n = p->spec.scheduling_gates.items[i];

		if (strcmp(n, TAS_SCHEDULING_GATE) != 0 &&
		    json_array_append_new(gates, json_pack("{s:s}", "name", n)))
			goto fail;
	}
	for (i = 0; sel != NULL && i < a->levels.n; i++)
		if (json_object_set_new(sel, a->levels.items[i],
			json_string(a->domains[d].values[i])) != 0)
			goto fail;
	if (gates == NULL || sel == NULL)
		goto fail;
	if (json_array_size(gates) == 0) {
		json_decref(gates);
		gates = json_null();
	}
	patch = json_pack("{s:{s:o,s:o}}", "spec", "nodeSelector", sel,
	    "schedulingGates", gates);
	return patch; /* json_pack's o consumed both, even on failure */
fail:
	json_decref(gates);
	json_decref(sel);
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
	struct api_pod *pods = NULL;
	size_t n = podset_pods(c, ns, wl, podset, &pods), i, todo = 0;
	struct tas_ungate_pod *up = cu_calloc(n + 1, sizeof(*up));
	cu_error err;

	for (i = 0; up != NULL && i < n; i++) {
		const struct api_pod *p = &pods[i];

		up[i].gated = api_pod_gated(p, TAS_SCHEDULING_GATE);
		up[i].rank = tas_pod_rank(a, &p->meta, tas_pod_index(&p->meta));
		up[i].created_ns =
		    p->meta.has_creation ? p->meta.creation_ns : INT64_MIN;
		up[i].name = p->meta.name;
		up[i].selector = &p->spec.node_selector;
		up[i].payload = &pods[i];
	}
	if (up != NULL && tas_ungate_plan(a, up, n, &err) == CU_OK)
		todo = n;
	for (i = 0; i < todo && up[i].gated && up[i].domain >= 0; i++) {
		const struct api_pod *p = up[i].payload;
		const char *uid = p->meta.uid;
		struct ctl_kent *e =
		    uid ? ctl_keys_get(&c->tas.ungating, CTL_K1(uid)) : NULL;
		json_t *patch;

		if (uid == NULL || (e != NULL && now < e->n))
			continue;
		patch = ungate_patch(p, a, (size_t)up[i].domain);
		if (patch == NULL)
			continue;
		ctl_pipe_queue(c->pipe, CTL_PIPE_JOB_START, &ctl_tas__res_pods,
		    ns, p->meta.name, NULL, patch);
		if ((e = ctl_keys_put(&c->tas.ungating, CTL_K1(uid))) != NULL)
			e->n = now + UNGATE_RETRY_NS;
		c->tas.ungated++;
		if (admitted_s >= 0 && cq != NULL)
			ctl_metric_observe(c->metrics,
			    CTL_M_POD_SCHEDULING_GATE_REMOVAL_SECONDS,
			    CTL_LV(TAS_SCHEDULING_GATE, cq, "false"),
			    admitted_s);
	}
	cu_free(up);
	for (i = 0; pods != NULL && i < n; i++)
		api_pod_dispose(&pods[i]);
	cu_free(pods);
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
