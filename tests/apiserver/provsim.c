/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/provsim.c - a stand-in for cluster-autoscaler's
 * ProvisioningRequest processing (--simulate provisioning), so that the
 * ProvisioningRequest admission check can be tested end to end.
 *
 * For every autoscaling.x-k8s.io/v1 ProvisioningRequest (the CRD is the
 * test's to install; without it nothing happens):
 *   - first seen: Accepted=True (reason Accepted) and Provisioned=False
 *     (reason Provisioning, message "Provisioning in progress");
 *   - after the milliseconds of cueue.dev/sim-provision-ms (an annotation
 *     on the request, else a spec.parameters entry of that name or
 *     simProvisionMs, which Kueue copies from the ProvisioningRequestConfig
 *     or from a Workload annotation provreq.kueue.x-k8s.io/simProvisionMs;
 *     default 500): Provisioned=True (reason Provisioned), or Failed=True
 *     (reason Failed, message "Simulated provisioning failure") when
 *     cueue.dev/sim-provision-result (annotation, or parameter of that
 *     name or simProvisionResult) is "Failed", or when the request's
 *     attempt (the number its name ends in) is at most
 *     cueue.dev/sim-fail-attempts (annotation, or parameter of that name or
 *     simFailAttempts);
 *   - with --simulate scheduler, a provisioned request brings its
 *     capacity: one Node per pod of each pod set, named
 *     <request>-<podset index>-<pod index>, labeled
 *     autoscaling.x-k8s.io/provisioning-request=<request> and with the
 *     template's nodeSelector, its allocatable the pod's requests (the
 *     sum of its containers') plus 110 pods;
 *   - a test that sets annotation cueue.dev/sim-capacity-revoked: "true"
 *     or cueue.dev/sim-booking-expired: "true" on a provisioned request
 *     gets CapacityRevoked=True or BookingExpired=True (reason and message
 *     "Simulated ...") on the next tick.
 * Writes go through the store as user
 * system:serviceaccount:kube-system:cluster-autoscaler.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/quantity.h"
#include "tests/apiserver/apiserver.h"

#define CA_USER "system:serviceaccount:kube-system:cluster-autoscaler"
#define DELAY_KEY "cueue.dev/sim-provision-ms"
#define RESULT_KEY "cueue.dev/sim-provision-result"
#define FAILN_KEY "cueue.dev/sim-fail-attempts"
#define REVOKE_ANN "cueue.dev/sim-capacity-revoked"
#define EXPIRE_ANN "cueue.dev/sim-booking-expired"
#define DEFAULT_DELAY_MS 500

static json_t *dirty; /* "ns/name" -> true */
static json_t *due;   /* "ns/name" -> ms since epoch the outcome is due */

static struct as_kind *prs_kind(struct as_server *srv)
{
	return as_kind_find(
	    srv, "autoscaling.x-k8s.io", "v1", "provisioningrequests");
}

static int64_t now_ms(void)
{
	return cu_time_now_ns() / 1000000;
}

void as_provsim_notify(struct as_server *srv, struct as_kind *k, json_t *ref)
{
	char *key;

	if (!srv->sim_prov || dirty == NULL ||
	    strcmp(k->group, "autoscaling.x-k8s.io") != 0 ||
	    strcmp(k->plural, "provisioningrequests") != 0)
		return;
	key = cu_asprintf("%s/%s", as_jstr(ref, "metadata.namespace"),
	    as_jstr(ref, "metadata.name"));
	if (key != NULL)
		json_object_set_new(dirty, key, json_true());
	cu_free(key);
}

/* Annotation name, else parameter name or alt, of pr [borrowed]. */
static const char *setting(json_t *pr, const char *name, const char *alt)
{
	json_t *ann = as_jget(pr, "metadata.annotations");
	json_t *params = as_jget(pr, "spec.parameters");
	const char *v = json_string_value(json_object_get(ann, name));

	if (v == NULL)
		v = json_string_value(json_object_get(params, name));
	if (v == NULL)
		v = json_string_value(json_object_get(params, alt));
	return v;
}

static long long num(const char *s, long long dflt)
{
	char *end;
	long long v;

	if (s == NULL || *s == '\0')
		return dflt;
	v = strtoll(s, &end, 10);
	return *end == '\0' && v >= 0 ? v : dflt;
}

static json_t *cond_get(json_t *obj, const char *type)
{
	json_t *c;
	size_t i;

	json_array_foreach(as_jget(obj, "status.conditions"), i, c)
	{
		if (as_jstr(c, "type") && strcmp(as_jstr(c, "type"), type) == 0)
			return c;
	}
	return NULL;
}

static bool cond_true(json_t *obj, const char *type)
{
	const char *s = as_jstr(cond_get(obj, type), "status");

	return s != NULL && strcmp(s, "True") == 0;
}

static void cond_set(json_t *obj, const char *type, const char *status,
    const char *reason, const char *message)
{
	json_t *conds = as_jget(obj, "status.conditions"), *c;
	char now[CU_TIME_RFC3339_LEN];

	as_now_rfc3339(now);
	if (!json_is_array(conds)) {
		conds = json_array();
		as_jset(obj, "status.conditions", conds);
	}
	c = cond_get(obj, type);
	if (c == NULL) {
		c = json_object();
		json_array_append_new(conds, c);
		json_object_set_new(c, "type", json_string(type));
	}
	if (as_jstr(c, "status") == NULL ||
	    strcmp(as_jstr(c, "status"), status) != 0)
		json_object_set_new(c, "lastTransitionTime", json_string(now));
	json_object_set_new(c, "status", json_string(status));
	json_object_set_new(c, "reason", json_string(reason));
	json_object_set_new(c, "message", json_string(message));
	json_object_set_new(c, "observedGeneration",
	    json_integer(
		json_integer_value(as_jget(obj, "metadata.generation"))));
}

/* The number the request's name ends in (its attempt), or 0. */
static long long attempt_of(const char *name)
{
	const char *dash = name ? strrchr(name, '-') : NULL;

	return dash != NULL ? num(dash + 1, 0) : 0;
}

static bool ann_true(json_t *pr, const char *ann)
{
	const char *v = json_string_value(
	    json_object_get(as_jget(pr, "metadata.annotations"), ann));

	return v != NULL && strcmp(v, "true") == 0;
}

static void add_nodes(struct as_server *srv, json_t *pr);

static void reconcile_pr(struct as_server *srv, const char *key)
{
	struct as_kind *k = prs_kind(srv);
	const char *slash = strchr(key, '/');
	char ns[254], name[254];
	json_t *pr, *upd;
	json_t *d;
	bool failed;

	if (k == NULL || slash == NULL)
		return;
	snprintf(ns, sizeof(ns), "%.*s", (int)(slash - key), key);
	snprintf(name, sizeof(name), "%s", slash + 1);
	pr = as_store_get(k, ns, name);
	if (pr == NULL || as_jget(pr, "metadata.deletionTimestamp") != NULL) {
		json_object_del(due, key);
		return;
	}
	if (cond_true(pr, "Failed"))
		return;
	upd = json_deep_copy(pr);
	if (upd == NULL)
		return;
	if (cond_get(pr, "Accepted") == NULL) {
		cond_set(upd, "Accepted", "True", "Accepted",
		    "ProvisioningRequest is accepted");
		cond_set(upd, "Provisioned", "False", "Provisioning",
		    "Provisioning in progress");
		json_object_set_new(due, key,
		    json_integer(
			now_ms() + num(setting(pr, DELAY_KEY, "simProvisionMs"),
				       DEFAULT_DELAY_MS)));
		as_internal_update(srv, k, upd, true, CA_USER);
		return;
	}
	if (!cond_true(pr, "Provisioned")) {
		const char *res = setting(pr, RESULT_KEY, "simProvisionResult");

		d = json_object_get(due, key);
		if (d == NULL) { /* restarted: start the clock again */
			json_object_set_new(due, key,
			    json_integer(now_ms() + num(setting(pr, DELAY_KEY,
							    "simProvisionMs"),
							DEFAULT_DELAY_MS)));
			json_decref(upd);
			return;
		}
		if (json_integer_value(d) > now_ms()) {
			json_decref(upd);
			return;
		}
		json_object_del(due, key);
		failed = (res != NULL && strcmp(res, "Failed") == 0) ||
			 attempt_of(name) <=
			     num(setting(pr, FAILN_KEY, "simFailAttempts"), 0);
		if (failed) {
			cond_set(upd, "Provisioned", "False", "Failed",
			    "Simulated provisioning failure");
			cond_set(upd, "Failed", "True", "Failed",
			    "Simulated provisioning failure");
		} else {
			cond_set(upd, "Provisioned", "True", "Provisioned",
			    "Capacity is provisioned");
			as_jset(upd, "status.provisioningClassDetails",
			    json_pack("{s:s}", "simulated", "true"));
			add_nodes(srv, pr);
		}
		as_internal_update(srv, k, upd, true, CA_USER);
		return;
	}
	if (ann_true(pr, REVOKE_ANN) && !cond_true(pr, "CapacityRevoked")) {
		cond_set(upd, "CapacityRevoked", "True", "CapacityRevoked",
		    "Simulated capacity revocation");
		as_internal_update(srv, k, upd, true, CA_USER);
		return;
	}
	if (ann_true(pr, EXPIRE_ANN) && !cond_true(pr, "BookingExpired")) {
		cond_set(upd, "BookingExpired", "True", "BookingExpired",
		    "Simulated booking expiry");
		as_internal_update(srv, k, upd, true, CA_USER);
		return;
	}
	json_decref(upd);
}

/* The summed container requests of pod template pt [borrowed] as a
 * resource list [owned], "pods": "110" added. */
static json_t *pod_capacity(json_t *pt)
{
	json_t *out = json_object(), *c, *v;
	const char *r;
	size_t i;
	char buf[API_QUANTITY_STR_MAX];
	cu_error err;

	json_array_foreach(as_jget(pt, "template.spec.containers"), i, c)
	{
		json_object_foreach(as_jget(c, "resources.requests"), r, v)
		{
			int64_t m = 0, have = 0;
			json_t *cur = json_object_get(out, r);

			if (!json_is_string(v) ||
			    api_quantity_parse_milli(
				json_string_value(v), &m, &err) != CU_OK)
				continue;
			if (json_is_string(cur) &&
			    api_quantity_parse_milli(
				json_string_value(cur), &have, &err) != CU_OK)
				have = 0;
			api_quantity_format_milli(have + m, buf, sizeof(buf));
			json_object_set_new(out, r, json_string(buf));
		}
	}
	json_object_set_new(out, "pods", json_string("110"));
	return out;
}

/* --simulate scheduler: Nodes for what request pr [borrowed] provisions. */
static void add_nodes(struct as_server *srv, json_t *pr)
{
	struct as_kind *nodes = as_kind_find(srv, "", "v1", "nodes");
	struct as_kind *pts = as_kind_find(srv, "", "v1", "podtemplates");
	const char *ns = as_jstr(pr, "metadata.namespace");
	const char *name = as_jstr(pr, "metadata.name");
	json_t *ps, *pt, *node, *labels, *cap;
	size_t i;
	json_int_t k, count;

	if (!srv->sim_sched || nodes == NULL || pts == NULL || name == NULL)
		return;
	json_array_foreach(as_jget(pr, "spec.podSets"), i, ps)
	{
		pt = as_store_get(pts, ns, as_jstr(ps, "podTemplateRef.name"));
		count = json_integer_value(json_object_get(ps, "count"));
		if (pt == NULL)
			continue;
		for (k = 0; k < count && k < 64; k++) {
			char *nn =
			    cu_asprintf("%s-%zu-%lld", name, i, (long long)k);

			if (nn == NULL || as_store_get(nodes, "", nn) != NULL) {
				cu_free(nn);
				continue;
			}
			labels = json_deep_copy(
			    as_jget(pt, "template.spec.nodeSelector"));
			if (!json_is_object(labels)) {
				json_decref(labels);
				labels = json_object();
			}
			json_object_set_new(labels,
			    "autoscaling.x-k8s.io/provisioning-request",
			    json_string(name));
			json_object_set_new(
			    labels, "kubernetes.io/hostname", json_string(nn));
			cap = pod_capacity(pt);
			node =
			    json_pack("{s:s, s:s, s:{s:s, s:o}, s:{s:O, s:o}}",
				"apiVersion", "v1", "kind", "Node", "metadata",
				"name", nn, "labels", labels, "status",
				"capacity", cap, "allocatable", cap);
			if (node != NULL)
				as_internal_create(srv, nodes, node, CA_USER);
			cu_free(nn);
		}
	}
}

void as_provsim_tick(struct as_server *srv)
{
	json_t *batch, *v;
	const char *key;
	void *tmp;
	int64_t now = now_ms();

	if (!srv->sim_prov || dirty == NULL)
		return;
	json_object_foreach(due, key, v)
	{
		if (json_integer_value(v) <= now)
			json_object_set_new(dirty, key, json_true());
	}
	batch = dirty;
	dirty = json_object();
	json_object_foreach_safe(batch, tmp, key, v)
	{
		reconcile_pr(srv, key);
	}
	json_decref(batch);
}

void as_provsim_start(struct as_server *srv)
{
	if (!srv->sim_prov)
		return;
	dirty = json_object();
	due = json_object();
}

void as_provsim_stop(void)
{
	json_decref(dirty);
	json_decref(due);
	dirty = due = NULL;
}
