/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/sched.c - stand-ins for kube-scheduler and the kubelet
 * (--simulate scheduler), so that tests can see pods wait for room on
 * nodes. Inert until at least one v1 Node exists.
 *
 * Scheduler: binds each pending Pod (no spec.nodeName, phase Pending,
 * spec.schedulerName empty or default-scheduler) in priority order
 * (spec.priority, then creation time, then name), to the node in
 * status.nominatedNodeName when it fits (KEP-5278), else to the first
 * fitting node in name order (no scoring). The filters, in kube-scheduler's
 * default order: NodeUnschedulable (spec.unschedulable, unless the pod
 * tolerates node.kubernetes.io/unschedulable:NoSchedule), TaintToleration
 * (NoSchedule and NoExecute taints), NodeAffinity (nodeSelector and the
 * required node affinity: In, NotIn, Exists, DoesNotExist, Gt, Lt,
 * matchFields metadata.name) and NodeResourcesFit (status.allocatable, or
 * status.capacity without it, minus the requests of the unfinished pods
 * bound there: pods count, cpu, memory and every other resource). Binding
 * sets spec.nodeName and PodScheduled=True; a gated pod gets
 * PodScheduled=False reason SchedulingGated; a pod that fits nowhere gets
 * PodScheduled=False reason Unschedulable with kube-scheduler's message
 * (FitError.Error: reasons counted per node, sorted as strings, then the
 * preemption post-filter's own count). Nothing is ever preempted: a node
 * that failed only on resources counts as "No preemption victims found for
 * incoming pod".
 *
 * Each binding is recorded as a Normal Event "Scheduled" ("Successfully
 * assigned ns/pod to node"), each new Unschedulable message as a Warning
 * Event "FailedScheduling", both from default-scheduler.
 *
 * Kubelet: a bound pod becomes Running with Ready and ContainersReady True
 * after the milliseconds in its annotation cueue.dev/sim-ready-ms (copied
 * from the Job's pod template; default 0); until then it is Pending with
 * its containers waiting in ContainerCreating. A Node without a Ready
 * condition gets one (KubeletReady).
 *
 * Cost: usage per node and the set of pending pods are kept up to date
 * from every stored change (as_sched_notify), so a pass over the pending
 * pods runs only after something that can change its outcome: a pod
 * became pending or changed while pending, a pod stopped holding a node's
 * resources, or a Node changed.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/quantity.h"
#include "tests/apiserver/apiserver.h"

#define SCHED_USER "system:kube-scheduler"
#define KUBELET_USER "system:node:sim-kubelet"
#define READY_ANN "cueue.dev/sim-ready-ms"
#define DEFAULT_MAX_PODS 110 /* the kubelet's default maxPods */

/* Named amounts (milli-units of resources, or counts of reasons): a
 * handful per list, searched linearly. */
struct amt {
	char *name; /* owned */
	int64_t v;
};
struct amts {
	struct amt *a; /* owned */
	size_t n, cap;
};

/* A pod in the pending or starting set; the key parts live inside. */
struct podent {
	char *ns, *name;      /* owned */
	const char *parts[2]; /* {ns, name}: the map key */
	int64_t at;	      /* starting set: when the kubelet starts it */
};

/* What the unfinished pods bound to a node request. */
struct nodeuse {
	char *node; /* owned; the map key */
	struct amts req;
};

static bool started;
static cu_map used;	 /* node name -> struct nodeuse */
static cu_map pending;	 /* {ns, name} -> struct podent: for the scheduler */
static cu_map starting;	 /* {ns, name} -> struct podent: bound, not started */
static cu_map new_nodes; /* node name -> owned copy: Ready to check */
static bool dirty;	 /* something changed that a pass may act on */

static int64_t now_ms(void)
{
	return cu_time_now_ns() / 1000000;
}

static struct as_kind *pods_kind(struct as_server *srv)
{
	return as_kind_find(srv, "", "v1", "pods");
}

static struct as_kind *nodes_kind(struct as_server *srv)
{
	return as_kind_find(srv, "", "v1", "nodes");
}

static bool is_core(const struct as_kind *k, const char *plural)
{
	return k->group[0] == '\0' && strcmp(k->plural, plural) == 0;
}

static bool streq(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

bool as_sched_active(struct as_server *srv)
{
	struct as_kind *nk;

	if (!srv->sim_sched)
		return false;
	nk = nodes_kind(srv);
	return nk != NULL && nk->nitems > 0;
}

/* ---- pods ---------------------------------------------------------- */

static bool terminal(json_t *pod)
{
	const char *ph = as_jstr(pod, "status.phase");

	return streq(ph, "Succeeded") || streq(ph, "Failed");
}

static const char *node_of(json_t *pod)
{
	const char *n = as_jstr(pod, "spec.nodeName");

	return n != NULL && n[0] != '\0' ? n : NULL;
}

/* Bound and unfinished: counts against its node. */
static bool holds(json_t *pod)
{
	return pod != NULL && node_of(pod) != NULL && !terminal(pod);
}

static bool is_pending(json_t *pod)
{
	const char *ph = as_jstr(pod, "status.phase");
	const char *sn = as_jstr(pod, "spec.schedulerName");

	return node_of(pod) == NULL && (ph == NULL || streq(ph, "Pending")) &&
	       (sn == NULL || sn[0] == '\0' ||
		   strcmp(sn, "default-scheduler") == 0) &&
	       as_jget(pod, "metadata.deletionTimestamp") == NULL;
}

static bool is_ready(json_t *pod)
{
	json_t *c = as_fw_cond_get(pod, "Ready");

	return c != NULL && streq(as_jstr(c, "status"), "True");
}

/* ---- amounts and sets ---------------------------------------------- */

static int64_t amts_get(const struct amts *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->a[i].name, name) == 0)
			return s->a[i].v;
	return 0;
}

/* The entry for name, appended at 0 if new; NULL without memory. */
static struct amt *amts_slot(struct amts *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->a[i].name, name) == 0)
			return &s->a[i];
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 8;
		struct amt *a = cu_realloc(s->a, cap * sizeof(*a));

		if (a == NULL)
			return NULL;
		s->a = a;
		s->cap = cap;
	}
	s->a[s->n].name = cu_strdup(name);
	if (s->a[s->n].name == NULL)
		return NULL;
	s->a[s->n].v = 0;
	return &s->a[s->n++];
}

static void amts_add(struct amts *s, const char *name, int64_t v)
{
	struct amt *a = amts_slot(s, name);

	if (a != NULL)
		a->v += v;
}

static void amts_max(struct amts *s, const char *name, int64_t v)
{
	struct amt *a = amts_slot(s, name);

	if (a != NULL && v > a->v)
		a->v = v;
}

static void amts_free(struct amts *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		cu_free(s->a[i].name);
	cu_free(s->a);
	memset(s, 0, sizeof(*s));
}

static struct podent *pod_get(cu_map *m, const char *ns, const char *name)
{
	const char *k[2] = {ns, name};

	return cu_map_get(m, k);
}

/* The entry of (ns, name) in m, added if new; NULL without memory. */
static struct podent *pod_add(cu_map *m, const char *ns, const char *name)
{
	struct podent *e = pod_get(m, ns, name);

	if (e != NULL)
		return e;
	e = cu_calloc(1, sizeof(*e));
	if (e == NULL)
		return NULL;
	e->ns = cu_strdup(ns);
	e->name = cu_strdup(name);
	e->parts[0] = e->ns;
	e->parts[1] = e->name;
	if (e->ns == NULL || e->name == NULL ||
	    cu_map_put(m, e->parts, e, NULL) != CU_OK) {
		cu_free(e->ns);
		cu_free(e->name);
		cu_free(e);
		return NULL;
	}
	return e;
}

static void pod_del(cu_map *m, const char *ns, const char *name)
{
	const char *k[2] = {ns, name};
	struct podent *e = cu_map_del(m, k);

	if (e != NULL) {
		cu_free(e->ns);
		cu_free(e->name);
		cu_free(e);
	}
}

static void pods_clear(cu_map *m)
{
	cu_map_iter it = CU_MAP_ITER_INIT;
	void *v;

	while (cu_map_next(m, &it, NULL, &v)) {
		struct podent *e = v;

		cu_free(e->ns);
		cu_free(e->name);
		cu_free(e);
	}
	cu_map_dispose(m);
}

static int64_t milli_of(json_t *v)
{
	int64_t m = 0;
	cu_error err;

	if (json_is_integer(v))
		return (int64_t)json_integer_value(v) * 1000;
	if (!json_is_string(v) ||
	    api_quantity_parse_milli(json_string_value(v), &m, &err) != CU_OK)
		return 0;
	return m;
}

/* One container's requests: requests, with limits standing in for the
 * resources that have none (the API server's defaulting). */
static void container_requests(json_t *c, struct amts *out)
{
	json_t *v;
	const char *r;

	json_object_foreach(as_jget(c, "resources.limits"), r, v)
	{
		if (json_object_get(as_jget(c, "resources.requests"), r) ==
		    NULL)
			amts_add(out, r, milli_of(v));
	}
	json_object_foreach(as_jget(c, "resources.requests"), r, v)
	{
		amts_add(out, r, milli_of(v));
	}
}

/* What the pod asks of a node, in milli-units, "pods" included (into
 * req, empty on entry): the containers' sum, at least each init
 * container's, plus overhead. */
static void pod_requests(json_t *pod, struct amts *req)
{
	json_t *c, *v;
	const char *r;
	size_t i, j;

	json_array_foreach(as_jget(pod, "spec.containers"), i, c)
	{
		container_requests(c, req);
	}
	json_array_foreach(as_jget(pod, "spec.initContainers"), i, c)
	{
		struct amts one = {0};

		container_requests(c, &one);
		for (j = 0; j < one.n; j++)
			amts_max(req, one.a[j].name, one.a[j].v);
		amts_free(&one);
	}
	json_object_foreach(as_jget(pod, "spec.overhead"), r, v)
	{
		amts_add(req, r, milli_of(v));
	}
	amts_add(req, "pods", 1000);
}

static void account(json_t *pod, int sign)
{
	const char *node = node_of(pod);
	struct nodeuse *u = cu_map_get(&used, node);
	struct amts req = {0};
	size_t i;

	if (u == NULL) {
		u = cu_calloc(1, sizeof(*u));
		if (u == NULL)
			return;
		u->node = cu_strdup(node);
		if (u->node == NULL ||
		    cu_map_put(&used, u->node, u, NULL) != CU_OK) {
			cu_free(u->node);
			cu_free(u);
			return;
		}
	}
	pod_requests(pod, &req);
	for (i = 0; i < req.n; i++)
		amts_add(&u->req, req.a[i].name, sign * req.a[i].v);
	amts_free(&req);
}

static long long ready_ms(json_t *pod)
{
	const char *v = json_string_value(
	    json_object_get(as_jget(pod, "metadata.annotations"), READY_ANN));
	long long ms = v ? strtoll(v, NULL, 10) : 0;

	return ms < 0 ? 0 : ms;
}

void as_sched_notify(
    struct as_server *srv, struct as_kind *k, json_t *obj, json_t *old)
{
	json_t *ref = obj ? obj : old;
	const char *ns, *name;

	if (!srv->sim_sched || !started)
		return;
	if (is_core(k, "nodes")) {
		dirty = true;
		name = as_jstr(obj, "metadata.name");
		if (obj != NULL && name != NULL &&
		    as_fw_cond_get(obj, "Ready") == NULL &&
		    cu_map_get(&new_nodes, name) == NULL) {
			char *copy = cu_strdup(name);

			if (copy != NULL &&
			    cu_map_put(&new_nodes, copy, copy, NULL) != CU_OK)
				cu_free(copy);
		}
		return;
	}
	if (!is_core(k, "pods"))
		return;
	if (holds(old))
		account(old, -1);
	if (holds(obj))
		account(obj, 1);
	if (holds(old) && !(holds(obj) && streq(node_of(old), node_of(obj))))
		dirty = true; /* resources freed */
	ns = as_jstr(ref, "metadata.namespace");
	name = as_jstr(ref, "metadata.name");
	if (ns == NULL || name == NULL)
		return;
	if (obj != NULL && is_pending(obj)) {
		if (pod_get(&pending, ns, name) == NULL || old == NULL ||
		    !json_equal(json_object_get(old, "spec"),
			json_object_get(obj, "spec")) ||
		    !json_equal(as_jget(old, "status.nominatedNodeName"),
			as_jget(obj, "status.nominatedNodeName")))
			dirty = true;
		pod_add(&pending, ns, name);
	} else {
		pod_del(&pending, ns, name);
	}
	if (obj != NULL && node_of(obj) != NULL && !terminal(obj) &&
	    !is_ready(obj) &&
	    as_jget(obj, "metadata.deletionTimestamp") == NULL) {
		if (pod_get(&starting, ns, name) == NULL) {
			struct podent *e = pod_add(&starting, ns, name);

			if (e != NULL)
				e->at = now_ms() + ready_ms(obj);
		}
	} else {
		pod_del(&starting, ns, name);
	}
}

/* ---- conditions ------------------------------------------------------ */

static bool same_str(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || streq(a, b);
}

/* Append to a fixed buffer, truncating. */
static void put(char *buf, size_t cap, size_t *len, const char *fmt, ...)
    CU_PRINTF(4, 5);
static void put(char *buf, size_t cap, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*len >= cap)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *len, cap - *len, fmt, ap);
	va_end(ap);
	if (n > 0)
		*len = *len + (size_t)n < cap ? *len + (size_t)n : cap - 1;
}

/* Set condition `type` on obj (a copy being built); false when it already
 * says exactly this. */
static bool set_cond(json_t *obj, const char *type, const char *status,
    const char *reason, const char *message)
{
	json_t *c = as_fw_cond_get(obj, type);
	char now[CU_TIME_RFC3339_LEN];

	if (c != NULL && streq(as_jstr(c, "status"), status) &&
	    same_str(as_jstr(c, "reason"), reason) &&
	    same_str(as_jstr(c, "message"), message))
		return false;
	as_now_rfc3339(now);
	c = as_fw_cond_slot(obj, type);
	if (!streq(as_jstr(c, "status"), status))
		json_object_set_new(c, "lastTransitionTime", json_string(now));
	json_object_set_new(c, "status", json_string(status));
	json_object_set_new(c, "lastProbeTime", json_null());
	if (reason != NULL)
		json_object_set_new(c, "reason", json_string(reason));
	else
		json_object_del(c, "reason");
	if (message != NULL)
		json_object_set_new(c, "message", json_string(message));
	else
		json_object_del(c, "message");
	return true;
}

/* ---- filters --------------------------------------------------------- */

static bool tolerates(
    json_t *pod, const char *key, const char *value, const char *effect)
{
	json_t *t;
	size_t i;

	json_array_foreach(as_jget(pod, "spec.tolerations"), i, t)
	{
		const char *te = as_jstr(t, "effect");
		const char *tk = as_jstr(t, "key");
		const char *op = as_jstr(t, "operator");
		const char *tv = as_jstr(t, "value");

		if (te != NULL && te[0] != '\0' && !streq(te, effect))
			continue;
		if (tk != NULL && tk[0] != '\0' && !streq(tk, key))
			continue;
		if (streq(op, "Exists"))
			return true;
		if ((op == NULL || op[0] == '\0' || streq(op, "Equal")) &&
		    strcmp(tv ? tv : "", value ? value : "") == 0)
			return true;
	}
	return false;
}

static bool in_values(json_t *values, const char *v)
{
	json_t *x;
	size_t i;

	json_array_foreach(values, i, x)
	{
		if (streq(json_string_value(x), v))
			return true;
	}
	return false;
}

static bool requirement_ok(json_t *req, const char *have)
{
	const char *op = as_jstr(req, "operator");
	json_t *values = json_object_get(req, "values");

	if (streq(op, "In"))
		return have != NULL && in_values(values, have);
	if (streq(op, "NotIn"))
		return have == NULL || !in_values(values, have);
	if (streq(op, "Exists"))
		return have != NULL;
	if (streq(op, "DoesNotExist"))
		return have == NULL;
	if ((streq(op, "Gt") || streq(op, "Lt")) && have != NULL &&
	    json_array_size(values) == 1) {
		char *e1, *e2;
		const char *w = json_string_value(json_array_get(values, 0));
		long long a = strtoll(have, &e1, 10);
		long long b = strtoll(w ? w : "", &e2, 10);

		if (*e1 != '\0' || e2 == w || *e2 != '\0' || have[0] == '\0')
			return false;
		return streq(op, "Gt") ? a > b : a < b;
	}
	return false;
}

static bool term_ok(json_t *term, json_t *node)
{
	json_t *labels = as_jget(node, "metadata.labels"), *e;
	json_t *exprs = json_object_get(term, "matchExpressions");
	json_t *fields = json_object_get(term, "matchFields");
	size_t i;

	if (json_array_size(exprs) == 0 && json_array_size(fields) == 0)
		return false; /* an empty term matches nothing */
	json_array_foreach(exprs, i, e)
	{
		if (!requirement_ok(e, json_string_value(json_object_get(
					   labels, as_jstr(e, "key")))))
			return false;
	}
	json_array_foreach(fields, i, e)
	{
		if (!streq(as_jstr(e, "key"), "metadata.name") ||
		    !requirement_ok(e, as_jstr(node, "metadata.name")))
			return false;
	}
	return true;
}

static bool affinity_ok(json_t *pod, json_t *node)
{
	json_t *labels = as_jget(node, "metadata.labels"), *v, *req, *t;
	const char *k;
	size_t i;

	json_object_foreach(as_jget(pod, "spec.nodeSelector"), k, v)
	{
		if (!json_equal(json_object_get(labels, k), v))
			return false;
	}
	req = as_jget(pod, "spec.affinity.nodeAffinity."
			   "requiredDuringSchedulingIgnoredDuringExecution");
	if (req == NULL || json_is_null(req))
		return true;
	json_array_foreach(json_object_get(req, "nodeSelectorTerms"), i, t)
	{
		if (term_ok(t, node))
			return true;
	}
	return false;
}

enum fit { FIT, NO_ROOM, UNRESOLVABLE };

static int64_t allocatable(json_t *node, const char *r)
{
	json_t *a = as_jget(node, "status.allocatable");

	if (!json_is_object(a))
		a = as_jget(node, "status.capacity");
	return milli_of(json_object_get(a, r));
}

static void resource_check(json_t *node, const struct amts *u,
    const struct amts *req, const char *r, struct amts *hist, bool *short_of)
{
	int64_t want = amts_get(req, r);
	char msg[300];

	if (want <= 0)
		return;
	if (want > allocatable(node, r) - (u ? amts_get(u, r) : 0)) {
		snprintf(msg, sizeof(msg), "Insufficient %s", r);
		amts_add(hist, msg, 1);
		*short_of = true;
	}
}

/* Run the filters for pod on node; reasons of a failure go to hist. */
static enum fit filter(
    json_t *pod, json_t *node, const struct amts *req, struct amts *hist)
{
	struct nodeuse *nu = cu_map_get(&used, as_jstr(node, "metadata.name"));
	const struct amts *u = nu ? &nu->req : NULL;
	json_t *a, *t;
	size_t i;
	int64_t max_pods;
	bool short_of = false;

	if (json_is_true(as_jget(node, "spec.unschedulable")) &&
	    !tolerates(
		pod, "node.kubernetes.io/unschedulable", "", "NoSchedule")) {
		amts_add(hist, "node(s) were unschedulable", 1);
		return UNRESOLVABLE;
	}
	json_array_foreach(as_jget(node, "spec.taints"), i, t)
	{
		const char *eff = as_jstr(t, "effect");
		const char *key = as_jstr(t, "key");
		const char *val = as_jstr(t, "value");
		char msg[600];

		if (!streq(eff, "NoSchedule") && !streq(eff, "NoExecute"))
			continue;
		if (tolerates(pod, key ? key : "", val ? val : "", eff))
			continue;
		snprintf(msg, sizeof(msg),
		    "node(s) had untolerated taint {%s: %s}", key ? key : "",
		    val ? val : "");
		amts_add(hist, msg, 1);
		return UNRESOLVABLE;
	}
	if (!affinity_ok(pod, node)) {
		amts_add(hist,
		    "node(s) didn't match Pod's node affinity/selector", 1);
		return UNRESOLVABLE;
	}
	a = as_jget(node, "status.allocatable");
	if (!json_is_object(a))
		a = as_jget(node, "status.capacity");
	max_pods = json_object_get(a, "pods") != NULL
		       ? allocatable(node, "pods") / 1000
		       : DEFAULT_MAX_PODS;
	if ((u ? amts_get(u, "pods") : 0) / 1000 + 1 > max_pods) {
		amts_add(hist, "Too many pods", 1);
		short_of = true;
	}
	resource_check(node, u, req, "cpu", hist, &short_of);
	resource_check(node, u, req, "memory", hist, &short_of);
	resource_check(node, u, req, "ephemeral-storage", hist, &short_of);
	for (i = 0; i < req->n; i++) {
		const char *r = req->a[i].name;

		if (strcmp(r, "pods") != 0 && strcmp(r, "cpu") != 0 &&
		    strcmp(r, "memory") != 0 &&
		    strcmp(r, "ephemeral-storage") != 0)
			resource_check(node, u, req, r, hist, &short_of);
	}
	return short_of ? NO_ROOM : FIT;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "N reason, M reason" sorted as strings, as FitError.Error does. */
static void histogram(
    char *buf, size_t cap, size_t *len, const struct amts *hist)
{
	char **s = cu_calloc(hist->n ? hist->n : 1, sizeof(*s));
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < hist->n; i++)
		s[i] = cu_asprintf(
		    "%lld %s", (long long)hist->a[i].v, hist->a[i].name);
	qsort(s, hist->n, sizeof(*s), cmp_str);
	for (i = 0; i < hist->n; i++) {
		put(buf, cap, len, "%s%s", i ? ", " : "", s[i] ? s[i] : "");
		cu_free(s[i]);
	}
	cu_free(s);
}

static char *fit_error(
    json_t *pod, size_t nnodes, const struct amts *hist, const struct amts *pre)
{
	char buf[8192];
	size_t len = 0;

	buf[0] = '\0';
	put(buf, sizeof(buf), &len, "0/%zu nodes are available: ", nnodes);
	histogram(buf, sizeof(buf), &len, hist);
	put(buf, sizeof(buf), &len, ".");
	if (streq(as_jstr(pod, "spec.preemptionPolicy"), "Never"))
		put(buf, sizeof(buf), &len,
		    " preemption: not eligible due to preemptionPolicy=Never.");
	else {
		put(buf, sizeof(buf), &len,
		    " preemption: 0/%zu nodes are available: ", nnodes);
		histogram(buf, sizeof(buf), &len, pre);
		put(buf, sizeof(buf), &len, ".");
	}
	return cu_strdup(buf);
}

/* ---- the scheduling pass ------------------------------------------- */

struct cand {
	char *ns, *name; /* owned */
	json_int_t prio;
	const char *created; /* borrowed; valid while sorting */
};

static int cmp_cand(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	int c;

	if (x->prio != y->prio)
		return x->prio > y->prio ? -1 : 1;
	c = strcmp(x->created ? x->created : "", y->created ? y->created : "");
	if (c == 0)
		c = strcmp(x->ns, y->ns);
	return c != 0 ? c : strcmp(x->name, y->name);
}

/* The scheduler's Event about pod (core/v1, as a legacy recorder writes
 * it: source default-scheduler, count 1). */
static void event(struct as_server *srv, json_t *pod, const char *type,
    const char *reason, const char *msg)
{
	struct as_kind *ek = as_kind_find(srv, "", "v1", "events");
	const char *ns = as_jstr(pod, "metadata.namespace");
	const char *name = as_jstr(pod, "metadata.name");
	const char *uid = as_jstr(pod, "metadata.uid");
	char now[CU_TIME_RFC3339_LEN];
	char *ename;
	json_t *ev;

	if (ek == NULL || ns == NULL || name == NULL)
		return;
	as_now_rfc3339(now);
	ename =
	    cu_asprintf("%s.%llx", name, (unsigned long long)cu_time_now_ns());
	ev = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s, s:s, s:s, s:s}, "
		       "s:s, s:s, s:s, s:{s:s}, s:s, s:s, s:i, s:s}",
	    "apiVersion", "v1", "kind", "Event", "metadata", "name",
	    ename ? ename : name, "namespace", ns, "involvedObject", "kind",
	    "Pod", "apiVersion", "v1", "namespace", ns, "name", name, "uid",
	    uid ? uid : "", "reason", reason, "message", msg, "type", type,
	    "source", "component", "default-scheduler", "firstTimestamp", now,
	    "lastTimestamp", now, "count", 1, "reportingComponent",
	    "default-scheduler");
	cu_free(ename);
	if (ev != NULL)
		as_internal_create(srv, ek, ev, SCHED_USER);
}

static void write_status(struct as_server *srv, struct as_kind *pk, json_t *pod,
    const char *reason, const char *msg)
{
	json_t *upd = json_deep_copy(pod);

	if (!set_cond(upd, "PodScheduled", "False", reason, msg)) {
		json_decref(upd);
		return;
	}
	if (strcmp(reason, "Unschedulable") == 0)
		event(srv, pod, "Warning", "FailedScheduling", msg);
	as_internal_update(srv, pk, upd, true, SCHED_USER);
}

static void bind_pod(
    struct as_server *srv, struct as_kind *pk, json_t *pod, const char *node)
{
	json_t *upd = json_deep_copy(pod);
	char msg[800];

	snprintf(msg, sizeof(msg), "Successfully assigned %s/%s to %s",
	    as_jstr(pod, "metadata.namespace"), as_jstr(pod, "metadata.name"),
	    node);
	event(srv, pod, "Normal", "Scheduled", msg);
	as_jset(upd, "spec.nodeName", json_string(node));
	set_cond(upd, "PodScheduled", "True", NULL, NULL);
	as_internal_update(srv, pk, upd, false, SCHED_USER);
}

static void schedule_one(
    struct as_server *srv, struct as_kind *pk, struct as_kind *nk, json_t *pod)
{
	const char *nom = as_jstr(pod, "status.nominatedNodeName");
	struct amts req = {0}, hist = {0}, pre = {0};
	json_t *node;
	const char *chosen = NULL;
	size_t i;

	if (json_array_size(as_jget(pod, "spec.schedulingGates")) > 0) {
		write_status(srv, pk, pod, "SchedulingGated",
		    "Scheduling is blocked due to non-empty scheduling gates");
		return;
	}
	pod_requests(pod, &req);
	if (nom != NULL && nom[0] != '\0') {
		node = as_store_get(nk, "", nom);
		if (node != NULL && filter(pod, node, &req, &hist) == FIT)
			chosen = nom;
		amts_free(&hist);
	}
	for (i = 0; chosen == NULL && i < nk->nitems; i++) {
		node = nk->items[i].obj;
		switch (filter(pod, node, &req, &hist)) {
		case FIT:
			chosen = nk->items[i].name;
			break;
		case NO_ROOM:
			amts_add(&pre,
			    "No preemption victims found for incoming pod", 1);
			break;
		case UNRESOLVABLE:
			amts_add(&pre,
			    "Preemption is not helpful for scheduling", 1);
			break;
		}
	}
	if (chosen != NULL) {
		char *name = cu_strdup(chosen);

		if (name != NULL)
			bind_pod(srv, pk, pod, name);
		cu_free(name);
	} else {
		char *msg = fit_error(pod, nk->nitems, &hist, &pre);

		write_status(srv, pk, pod, "Unschedulable", msg ? msg : "");
		cu_free(msg);
	}
	amts_free(&req);
	amts_free(&hist);
	amts_free(&pre);
}

static void schedule_pass(struct as_server *srv)
{
	struct as_kind *pk = pods_kind(srv), *nk = nodes_kind(srv);
	size_t n = cu_map_count(&pending), i = 0, j;
	cu_map_iter it = CU_MAP_ITER_INIT;
	struct cand *c;
	void *v;

	if (pk == NULL || nk == NULL || n == 0)
		return;
	c = cu_calloc(n, sizeof(*c));
	if (c == NULL)
		return;
	while (i < n && cu_map_next(&pending, &it, NULL, &v)) {
		struct podent *e = v;
		json_t *pod = as_store_get(pk, e->ns, e->name);

		if (pod == NULL)
			continue;
		c[i].ns = cu_strdup(e->ns);
		c[i].name = cu_strdup(e->name);
		c[i].prio = json_integer_value(as_jget(pod, "spec.priority"));
		c[i].created = as_jstr(pod, "metadata.creationTimestamp");
		if (c[i].ns != NULL && c[i].name != NULL)
			i++;
		else {
			cu_free(c[i].ns);
			cu_free(c[i].name);
		}
	}
	qsort(c, i, sizeof(*c), cmp_cand);
	for (j = 0; j < i; j++) {
		json_t *pod = as_store_get(pk, c[j].ns, c[j].name);

		if (pod != NULL && is_pending(pod))
			schedule_one(srv, pk, nk, pod);
	}
	for (j = 0; j < i; j++) {
		cu_free(c[j].ns);
		cu_free(c[j].name);
	}
	cu_free(c);
}

/* ---- the kubelet ------------------------------------------------------ */

static void container_statuses(json_t *upd, json_t *pod, bool ready)
{
	json_t *arr = json_array(), *c;
	char now[CU_TIME_RFC3339_LEN];
	size_t i;

	as_now_rfc3339(now);
	json_array_foreach(as_jget(pod, "spec.containers"), i, c)
	{
		json_t *st = json_pack("{s:s, s:s, s:s, s:b, s:b, s:i}", "name",
		    as_jstr(c, "name") ? as_jstr(c, "name") : "", "image",
		    as_jstr(c, "image") ? as_jstr(c, "image") : "", "imageID",
		    "", "ready", ready, "started", ready, "restartCount", 0);

		if (ready)
			json_object_set_new(st, "state",
			    json_pack(
				"{s:{s:s}}", "running", "startedAt", now));
		else
			json_object_set_new(st, "state",
			    json_pack("{s:{s:s}}", "waiting", "reason",
				"ContainerCreating"));
		json_array_append_new(arr, st);
	}
	as_jset(upd, "status.containerStatuses", arr);
}

static void start_pod(
    struct as_server *srv, struct as_kind *pk, json_t *pod, bool ready)
{
	json_t *upd = json_deep_copy(pod);
	char now[CU_TIME_RFC3339_LEN];
	const char *t = ready ? "True" : "False";
	const char *why = ready ? NULL : "ContainersNotReady";
	const char *msg = NULL;
	char buf[1024];
	size_t len = 0;

	as_now_rfc3339(now);
	if (!ready) {
		json_t *c;
		size_t i;

		put(buf, sizeof(buf), &len,
		    "containers with unready status: [");
		json_array_foreach(as_jget(pod, "spec.containers"), i, c)
		{
			put(buf, sizeof(buf), &len, "%s%s", i ? " " : "",
			    as_jstr(c, "name") ? as_jstr(c, "name") : "");
		}
		put(buf, sizeof(buf), &len, "]");
		msg = buf;
	}
	as_jset(
	    upd, "status.phase", json_string(ready ? "Running" : "Pending"));
	if (as_jget(upd, "status.startTime") == NULL)
		as_jset(upd, "status.startTime", json_string(now));
	if (as_jget(upd, "status.podIP") == NULL) {
		static unsigned ips;
		char ip[32];

		ips++;
		snprintf(ip, sizeof(ip), "10.244.%u.%u", (ips / 250) % 250,
		    ips % 250 + 1);
		as_jset(upd, "status.podIP", json_string(ip));
		as_jset(upd, "status.podIPs", json_pack("[{s:s}]", "ip", ip));
	}
	set_cond(upd, "PodReadyToStartContainers", "True", NULL, NULL);
	set_cond(upd, "Initialized", "True", NULL, NULL);
	set_cond(upd, "Ready", t, why, msg);
	set_cond(upd, "ContainersReady", t, why, msg);
	container_statuses(upd, pod, ready);
	as_internal_update(srv, pk, upd, true, KUBELET_USER);
}

void as_sched_run_pod(struct as_server *srv, json_t *pod, bool ready)
{
	struct as_kind *pk = pods_kind(srv);

	if (pk != NULL)
		start_pod(srv, pk, pod, ready);
}

/* A pod to start, copied out of the starting set before any write. */
struct due {
	char *ns, *name; /* owned */
	bool ready;	 /* its delay is over */
};

static void kubelet(struct as_server *srv)
{
	struct as_kind *pk = pods_kind(srv), *nk = nodes_kind(srv);
	size_t n = cu_map_count(&new_nodes), m = cu_map_count(&starting);
	size_t cap = n > m ? n : m, i = 0, j;
	struct due *d = cu_calloc(cap ? cap : 1, sizeof(*d));
	cu_map_iter it = CU_MAP_ITER_INIT;
	int64_t now = now_ms();
	void *v;

	if (d == NULL)
		return;
	/* Nodes: a Ready condition where there is none. */
	while (i < n && cu_map_next(&new_nodes, &it, NULL, &v))
		d[i++].name = v; /* taken from the map */
	cu_map_dispose(&new_nodes);
	cu_map_init_str(&new_nodes);
	for (j = 0; j < i; j++) {
		json_t *node = nk ? as_store_get(nk, "", d[j].name) : NULL;

		if (node != NULL && as_fw_cond_get(node, "Ready") == NULL) {
			json_t *upd = json_deep_copy(node);

			set_cond(upd, "Ready", "True", "KubeletReady",
			    "kubelet is posting ready status");
			as_internal_update(srv, nk, upd, true, KUBELET_USER);
		}
		cu_free(d[j].name);
		d[j].name = NULL;
	}
	/* Pods: ContainerCreating, then Running when their time comes. */
	i = 0;
	it = CU_MAP_ITER_INIT;
	while (i < m && cu_map_next(&starting, &it, NULL, &v)) {
		struct podent *e = v;

		d[i].ns = cu_strdup(e->ns);
		d[i].name = cu_strdup(e->name);
		d[i].ready = e->at <= now;
		i++;
	}
	for (j = 0; j < i; j++) {
		json_t *pod = pk && d[j].ns && d[j].name
				  ? as_store_get(pk, d[j].ns, d[j].name)
				  : NULL;

		if (pod == NULL) {
			if (d[j].ns && d[j].name)
				pod_del(&starting, d[j].ns, d[j].name);
		} else if (d[j].ready) {
			start_pod(srv, pk, pod, true);
			pod_del(&starting, d[j].ns, d[j].name);
		} else if (!streq(as_jstr(pod, "status.phase"), "Pending") ||
			   as_fw_cond_get(pod, "ContainersReady") == NULL) {
			start_pod(srv, pk, pod, false);
		}
		cu_free(d[j].ns);
		cu_free(d[j].name);
	}
	cu_free(d);
}

void as_sched_tick(struct as_server *srv)
{
	if (!srv->sim_sched || !started)
		return;
	if (dirty && as_sched_active(srv)) {
		dirty = false;
		schedule_pass(srv);
	}
	kubelet(srv);
}

bool as_sched_busy(struct as_server *srv)
{
	return dirty && as_sched_active(srv);
}

void as_sched_start(struct as_server *srv)
{
	if (!srv->sim_sched || started)
		return;
	cu_map_init_str(&used);
	cu_map_init_parts(&pending, 2);
	cu_map_init_parts(&starting, 2);
	cu_map_init_str(&new_nodes);
	dirty = false;
	started = true;
}

void as_sched_stop(struct as_server *srv)
{
	cu_map_iter it = CU_MAP_ITER_INIT;
	void *v;

	(void)srv;
	if (!started)
		return;
	while (cu_map_next(&used, &it, NULL, &v)) {
		struct nodeuse *u = v;

		amts_free(&u->req);
		cu_free(u->node);
		cu_free(u);
	}
	cu_map_dispose(&used);
	pods_clear(&pending);
	pods_clear(&starting);
	it = CU_MAP_ITER_INIT;
	while (cu_map_next(&new_nodes, &it, NULL, &v))
		cu_free(v);
	cu_map_dispose(&new_nodes);
	started = false;
}

/* ---- logs -------------------------------------------------------------- */

void as_sched_pod_log(struct as_resp *resp, json_t *pod, const char *container)
{
	json_t *cs = as_jget(pod, "status.containerStatuses"), *c;
	const char *name = as_jstr(pod, "metadata.name");
	const char *ns = as_jstr(pod, "metadata.namespace");
	const char *node = node_of(pod);
	json_t *containers = as_jget(pod, "spec.containers");
	size_t i;
	bool found = false;

	if (container == NULL || container[0] == '\0') {
		if (json_array_size(containers) != 1) {
			as_resp_error(resp, 400, "BadRequest",
			    "a container name must be specified for pod %s",
			    name ? name : "");
			return;
		}
		container = as_jstr(json_array_get(containers, 0), "name");
	}
	json_array_foreach(containers, i, c)
	{
		if (streq(as_jstr(c, "name"), container))
			found = true;
	}
	if (!found) {
		as_resp_error(resp, 400, "BadRequest",
		    "container %s is not valid for pod %s",
		    container ? container : "", name ? name : "");
		return;
	}
	json_array_foreach(cs, i, c)
	{
		const char *w = as_jstr(c, "state.waiting.reason");

		if (streq(as_jstr(c, "name"), container) && w != NULL) {
			as_resp_error(resp, 400, "BadRequest",
			    "container \"%s\" in pod \"%s\" is waiting to "
			    "start: %s",
			    container, name ? name : "", w);
			return;
		}
	}
	resp->code = 200;
	resp->content_type = "text/plain";
	/* An unscheduled pod has no kubelet to ask: an empty log. */
	resp->raw = node == NULL ? cu_strdup("")
				 : cu_asprintf("simulated container %s of pod "
					       "%s/%s on node %s\n",
				       container ? container : "", ns ? ns : "",
				       name ? name : "", node);
	resp->raw_len = resp->raw ? strlen(resp->raw) : 0;
}
