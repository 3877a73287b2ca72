/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tas/objects.c - v1 Nodes and Pods (decoded once: api_node, api_pod)
 * into a capacity tree: a Node's labels, taints, allocatable and
 * schedulability, and its health for the node-failure rules; and the
 * tracker of the non-TAS Pods that take capacity on a node: bound there
 * (spec.nodeName) or, until bound, nominated there
 * (status.nominatedNodeName), so that a placement never counts capacity
 * the scheduler already promised.
 */
#include <string.h>

#include "tas/tas_int.h"

#define ANN_PREFIX "kueue.x-k8s.io/podset-"

static const json_t *path2(const json_t *o, const char *a, const char *b)
{
	o = json_is_object(o) ? json_object_get(o, a) : NULL;
	return json_is_object(o) && b ? json_object_get(o, b) : o;
}

static const char *str2(const json_t *o, const char *a, const char *b)
{
	const json_t *v = path2(o, a, b);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* The wire name of a scheduling taint effect (NoSchedule, NoExecute), or
 * NULL for the others: only those keep pods off a node. */
static const char *sched_effect(enum api_taint_effect e)
{
	switch (e) {
	case API_EFFECT_NO_SCHEDULE:
		return "NoSchedule";
	case API_EFFECT_NO_EXECUTE:
		return "NoExecute";
	default:
		return NULL;
	}
}

/* Kubernetes' ToleratesTaint: toleration tol [borrowed] matches taint
 * [borrowed] (effect, key, and value unless the operator is Exists). */
static bool health_tolerates(const json_t *tol, const struct api_taint *taint)
{
	const char *te = str2(tol, "effect", NULL);
	const char *tk = str2(tol, "key", NULL);
	const char *op = str2(tol, "operator", NULL);
	const char *tv = str2(tol, "value", NULL);
	const char *e = sched_effect(taint->effect);
	const char *k = taint->key;
	const char *v = taint->value;

	if (te != NULL && *te != '\0' && (e == NULL || strcmp(te, e) != 0))
		return false;
	if (tk != NULL && *tk != '\0' && (k == NULL || strcmp(tk, k) != 0))
		return false;
	if (op != NULL && strcmp(op, "Exists") == 0)
		return true;
	if (op != NULL && *op != '\0' && strcmp(op, "Equal") != 0)
		return false;
	return strcmp(tv ? tv : "", v ? v : "") == 0;
}

enum health_taint {
	HEALTH_TOLERATED,   /* by a toleration without tolerationSeconds */
	HEALTH_TEMPORARY,   /* only for tolerationSeconds */
	HEALTH_UNTOLERATED, /* not at all */
};

static enum health_taint health_classify(
    const json_t *tolerations, const struct api_taint *taint)
{
	const json_t *t;
	bool any = false;
	size_t i;

	json_array_foreach(tolerations, i, t)
	{
		if (!health_tolerates(t, taint))
			continue;
		if (json_object_get(t, "tolerationSeconds") == NULL ||
		    json_is_null(json_object_get(t, "tolerationSeconds")))
			return HEALTH_TOLERATED;
		any = true;
	}
	return any ? HEALTH_TEMPORARY : HEALTH_UNTOLERATED;
}

/* Kueue's rules for a Ready node's taints: the worst NoSchedule or
 * NoExecute taint for the podSet's tolerations. */
static enum health_taint health_taints(
    const struct api_node *node, const json_t *tolerations)
{
	enum health_taint worst = HEALTH_TOLERATED;
	size_t i;

	for (i = 0; i < node->spec.n_taints; i++) {
		enum health_taint h;

		if (sched_effect(node->spec.taints[i].effect) == NULL)
			continue;
		h = health_classify(tolerations, &node->spec.taints[i]);
		if (h > worst)
			worst = h;
	}
	return worst;
}

enum tas_node_health tas_node_health(const struct api_node *node,
    const struct tas_node_usage *u, const struct tas_health_rules *r,
    int64_t now_ns, int64_t *due_ns)
{
	const struct api_condition *ready;
	bool by_delay = r->fixed_delay || !r->on_pod_termination;

	if (node == NULL)
		return TAS_NODE_FAILED;
	ready = api_conditions_find(&node->status.conditions, "Ready");
	if (ready != NULL && ready->status != API_COND_TRUE) {
		int64_t since = ready->has_last_transition
				    ? ready->last_transition_ns
				    : now_ns;

		if (by_delay && now_ns - since >= r->delay_ns)
			return TAS_NODE_FAILED;
		if (r->on_pod_termination && !u->progressing)
			return TAS_NODE_FAILED;
		if (!by_delay)
			return TAS_NODE_HEALTHY; /* its pods still run */
		if (due_ns != NULL)
			*due_ns = since + r->delay_ns;
		return TAS_NODE_WAIT;
	}
	/* Ready, or no Ready condition (counted as ready here) */
	if (!r->on_taints)
		return TAS_NODE_HEALTHY;
	switch (health_taints(node, u->tolerations)) {
	case HEALTH_UNTOLERATED:
		if (!r->on_pod_termination)
			return TAS_NODE_FAILED;
		return u->progressing ? TAS_NODE_HEALTHY : TAS_NODE_FAILED;
	case HEALTH_TEMPORARY:
		return u->progressing ? TAS_NODE_HEALTHY : TAS_NODE_FAILED;
	case HEALTH_TOLERATED:
		break;
	}
	return TAS_NODE_HEALTHY;
}

/* The most taints of a Node looked at (more are not expected). */
#define MAX_TAINTS 64

int tas_node_apply(
    struct tas_tree *t, const struct api_node *node, cu_error *err)
{
	const char *name = node->meta.name;
	struct tas_amount am[TAS_MAX_RESOURCES];
	struct tas_taint tt[MAX_TAINTS];
	size_t n = 0, nt = 0, i;

	if (name == NULL)
		return cu_error_set(err, CU_EINVAL, "node: no metadata.name");
	for (i = 0; i < node->status.allocatable.n && n < TAS_MAX_RESOURCES;
	     i++) {
		const struct api_qentry *q = &node->status.allocatable.items[i];

		am[n].name = q->name;
		/* pods are counted in pods, everything else in milli */
		am[n++].value = strcmp(q->name, "pods") == 0 ? q->q.milli / 1000
							     : q->q.milli;
	}
	for (i = 0; i < node->spec.n_taints; i++) {
		const struct api_taint *v = &node->spec.taints[i];
		const char *e = sched_effect(v->effect);

		/* only the scheduling ones matter; beyond MAX_TAINTS, the
		 * node is kept off as if a taint were not tolerated */
		if (e == NULL)
			continue;
		if (nt == MAX_TAINTS) {
			tt[0].key = "";
			tt[0].effect = "NoSchedule";
			tt[0].value = "cueue.x-k8s.io/too-many-taints";
			break;
		}
		tt[nt].key = v->key;
		tt[nt].value = v->value;
		tt[nt++].effect = e;
	}
	return tas_tree_node_put(t, name, &node->meta.labels, am, n, tt, nt,
	    !node->spec.unschedulable && api_node_ready(node), err);
}

const char *tas_pod_charged_node(const struct api_pod *pod)
{
	const char *node = pod->spec.node_name;
	size_t i;

	for (i = 0; i < pod->meta.annotations.n; i++) {
		const char *key = pod->meta.annotations.items[i].key;

		/* a TAS pod: its usage is the Workload's assignment */
		if (strncmp(key, ANN_PREFIX, strlen(ANN_PREFIX)) == 0 &&
		    (strstr(key, "-topology") != NULL))
			return NULL;
	}
	if (api_pod_finished(pod))
		return NULL;
	if (node && *node)
		return node;
	node = pod->status.nominated_node_name;
	return node && *node ? node : NULL;
}

struct tas_charge {
	char *uid;		/* [owned] map key */
	char *node;		/* [owned] */
	struct tas_amount *req; /* [owned; names owned] */
	size_t n_req;
};

struct tas_pods {
	cu_map by_uid; /* uid -> struct tas_charge [owned] */
};

int tas_pods_new(struct tas_pods **out, cu_error *err)
{
	*out = cu_calloc(1, sizeof(**out));
	if (*out == NULL)
		return cu_error_set(err, CU_ENOMEM, "pods: out of memory");
	cu_map_init_str(&(*out)->by_uid);
	return CU_OK;
}

static void charge_free(struct tas_charge *c)
{
	size_t i;

	for (i = 0; i < c->n_req; i++)
		cu_free((char *)c->req[i].name);
	cu_free(c->req);
	cu_free(c->node);
	cu_free(c->uid);
	cu_free(c);
}

void tas_pods_free(struct tas_pods *p)
{
	cu_map_iter it = CU_MAP_ITER_INIT;
	void *v;

	if (p == NULL)
		return;
	while (cu_map_next(&p->by_uid, &it, NULL, &v))
		charge_free(v);
	cu_map_dispose(&p->by_uid);
	cu_free(p);
}

size_t tas_pods_count(const struct tas_pods *p)
{
	return cu_map_count(&p->by_uid);
}

int tas_pods_update(struct tas_pods *p, struct tas_tree *t, const char *uid,
    const struct api_pod *pod, cu_error *err)
{
	struct tas_charge *old = cu_map_get(&p->by_uid, uid), *c = NULL;
	const char *node = pod ? tas_pod_charged_node(pod) : NULL;
	size_t n = 0, i;
	int rc;

	if (old != NULL && node != NULL && strcmp(old->node, node) == 0)
		return CU_OK; /* requests of a placed pod do not change */
	if (node != NULL) {
		n = pod->spec.n_requests;
		c = cu_calloc(1, sizeof(*c));
		if (c == NULL || (c->uid = cu_strdup(uid)) == NULL ||
		    (c->node = cu_strdup(node)) == NULL ||
		    (c->req = cu_calloc(n ? n : 1, sizeof(*c->req))) == NULL)
			goto nomem;
		for (i = 0; i < n; i++) {
			c->req[i].name = cu_strdup(pod->spec.requests[i].name);
			if (c->req[i].name == NULL)
				goto nomem;
			c->req[i].value = pod->spec.requests[i].milli;
			c->n_req = i + 1;
		}
		if (cu_map_reserve(&p->by_uid, 1) != CU_OK)
			goto nomem;
		rc = tas_tree_node_usage(t, c->node, c->req, c->n_req, 1, err);
		if (rc != CU_OK)
			goto fail;
	}
	if (old != NULL) {
		/* cannot fail: the columns exist since the charge */
		rc = tas_tree_node_usage(
		    t, old->node, old->req, old->n_req, -1, err);
		cu_map_del(&p->by_uid, uid);
		charge_free(old);
		(void)rc;
	}
	if (c != NULL) {
		rc = cu_map_put(&p->by_uid, c->uid, c, NULL); /* reserved */
		(void)rc;
	}
	return CU_OK;
nomem:
	rc = cu_error_set(err, CU_ENOMEM, "pods: out of memory");
fail:
	if (c != NULL)
		charge_free(c);
	return rc;
}
