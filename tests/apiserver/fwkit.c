/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/fwkit.c - what the framework stand-ins share
 * (--simulate pods, deployments, statefulsets, leaderworkersets,
 * kubeflow, mpijobs, trainjobs, ray, appwrappers, sparkapplications;
 * docs/apiserver.md §15): parsing the --simulate list, the table of
 * simulated controllers, their dirty sets and wake-up times, garbage
 * collection of the children of deleted owners, CRD installation, and
 * creating objects through the server's own HTTP front door so that
 * admission webhooks (cueue's pod webhook among them) see a simulated
 * controller's creates as they see kube-controller-manager's.
 *
 * Reconciling happens on the simulator tick (sim.c), never inside the
 * write that caused it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "tests/apiserver/apiserver.h"

#define RUNTIME_ANN "cueue.dev/sim-runtime-ms"
#define FAIL_ANN "cueue.dev/sim-fail"
#define BACKOFF_MS 1000
#define MAX_BATCH 64 /* creates in flight per owner */
#define MAX_CONNS 8L /* connections to this server */

static const struct as_fw_ctl *const ctls[] = {&as_fw_deployments,
    &as_fw_replicasets, &as_fw_statefulsets, &as_fw_lws, &as_fw_pytorchjobs,
    &as_fw_tfjobs, &as_fw_xgboostjobs, &as_fw_paddlejobs, &as_fw_jaxjobs,
    &as_fw_mpijobs, &as_fw_trainjobs, &as_fw_rayclusters, &as_fw_rayjobs,
    &as_fw_rayservices, &as_fw_appwrappers, &as_fw_sparkapps};
#define NCTLS (sizeof(ctls) / sizeof(ctls[0]))

/* One create in flight. */
struct call {
	char *key;	   /* owned: "plural/ns/name" of the object */
	char *owner;	   /* owned: owner uid, or NULL */
	int ctl;	   /* index in ctls, -1 without owner */
	char *ons, *oname; /* owned: the owner's namespace and name */
	char *body;	   /* owned: the request body */
	char *resp;	   /* owned: the answer */
	size_t resp_len;
	struct curl_slist *hdrs; /* owned */
	CURL *easy;		 /* owned while in flight */
};

static struct {
	bool on;
	json_t *dirty;	  /* "i/ns/name" -> true */
	json_t *wake;	  /* "i/ns/name" -> ms */
	json_t *gone;	  /* uid -> "ns" of a deleted owner, to collect */
	json_t *inflight; /* "plural/ns/name" -> true */
	json_t *owners;	  /* owner uid -> creates in flight */
	json_t *backoff;  /* owner uid -> ms before which nothing is sent */
	json_t *tokens;	  /* user -> bearer token */
	json_t *refusals; /* owner uid -> the last refusal logged */
	struct as_curlev cl;
	bool cl_ok;
	json_t *calls; /* array of integers: struct call pointers */
} fw;

/* ---- the --simulate list -------------------------------------------- */

static const struct {
	const char *name;
	unsigned bits; /* AS_SIM_* set */
	int builtin;   /* 1 jobs, 2 jobsets, 3 scheduler, 4 provisioning */
} sim_names[] = {
    {"jobs", 0, 1},
    {"jobsets", 0, 2},
    {"scheduler", 0, 3},
    {"provisioning", 0, 4},
    {"pods", AS_SIM_PODS, 0},
    {"deployments", AS_SIM_DEPLOYMENTS | AS_SIM_PODS, 0},
    {"statefulsets", AS_SIM_STATEFULSETS | AS_SIM_PODS, 0},
    {"leaderworkersets", AS_SIM_LWS | AS_SIM_PODS, 0},
    {"kubeflow", AS_SIM_KUBEFLOW | AS_SIM_PODS, 0},
    {"mpijobs", AS_SIM_MPIJOBS | AS_SIM_PODS, 0},
    {"trainjobs", AS_SIM_TRAINJOBS | AS_SIM_PODS, 0},
    {"ray", AS_SIM_RAY | AS_SIM_PODS, 0},
    {"appwrappers", AS_SIM_APPWRAPPERS | AS_SIM_PODS, 0},
    {"sparkapplications", AS_SIM_SPARK | AS_SIM_PODS, 0},
};

bool as_sim_parse(struct as_server *srv, const char *list, cu_error *err)
{
	const char *p = list;

	while (p != NULL && *p != '\0') {
		const char *c = strchr(p, ',');
		size_t n = c ? (size_t)(c - p) : strlen(p), i;
		bool found = false;

		for (i = 0; n > 0 && i < sizeof(sim_names) / sizeof(*sim_names);
		     i++) {
			if (strlen(sim_names[i].name) != n ||
			    strncmp(sim_names[i].name, p, n) != 0)
				continue;
			found = true;
			srv->sim_fw |= sim_names[i].bits;
			srv->sim_jobs |= sim_names[i].builtin == 1;
			srv->sim_jobsets |= sim_names[i].builtin == 2;
			srv->sim_sched |= sim_names[i].builtin == 3;
			srv->sim_prov |= sim_names[i].builtin == 4;
		}
		if (!found && n > 0) {
			cu_error_set(err, CU_EINVAL,
			    "--simulate: unknown simulator \"%.*s\" (known: "
			    "jobs, jobsets, scheduler, provisioning, pods, "
			    "deployments, statefulsets, leaderworkersets, "
			    "kubeflow, mpijobs, trainjobs, ray, appwrappers, "
			    "sparkapplications)",
			    (int)n, p);
			return false;
		}
		p = c ? c + 1 : NULL;
	}
	/* A TrainJob runs through its JobSet, which runs through Jobs. */
	if (srv->sim_fw & AS_SIM_TRAINJOBS)
		srv->sim_jobs = srv->sim_jobsets = true;
	return true;
}

/* ---- small helpers ---------------------------------------------------- */

int64_t as_fw_now_ms(void)
{
	return cu_time_now_ns() / 1000000;
}

struct as_kind *as_fw_kind(struct as_server *srv, const struct as_fw_ctl *c)
{
	return as_kind_find(srv, c->group, c->version, c->plural);
}

const char *as_fw_ann(json_t *obj, const char *key)
{
	return json_string_value(
	    json_object_get(as_jget(obj, "metadata.annotations"), key));
}

json_int_t as_fw_int(json_t *obj, const char *path, json_int_t dflt)
{
	json_t *v = as_jget(obj, path);

	return json_is_integer(v) ? json_integer_value(v) : dflt;
}

long long as_fw_runtime(json_t *obj, json_t *tmpl, long long dflt)
{
	const char *v = as_fw_ann(obj, RUNTIME_ANN);
	long long ms;

	if (v == NULL)
		v = as_fw_ann(tmpl, RUNTIME_ANN);
	ms = v ? strtoll(v, NULL, 10) : dflt;
	return ms < 0 ? 0 : ms;
}

bool as_fw_fails(json_t *obj, json_t *tmpl)
{
	const char *v = as_fw_ann(obj, FAIL_ANN);

	if (v == NULL)
		v = as_fw_ann(tmpl, FAIL_ANN);
	return v != NULL && strcmp(v, "true") == 0;
}

bool as_fw_managed_here(json_t *obj, const char *path, const char *mine)
{
	const char *by = as_jstr(obj, path);

	return by == NULL || by[0] == '\0' || strcmp(by, mine) == 0;
}

static bool terminal(json_t *pod)
{
	const char *ph = as_jstr(pod, "status.phase");

	return ph != NULL &&
	       (strcmp(ph, "Succeeded") == 0 || strcmp(ph, "Failed") == 0);
}

bool as_fw_pod_live(json_t *pod)
{
	return pod != NULL && !terminal(pod) &&
	       as_jget(pod, "metadata.deletionTimestamp") == NULL;
}

json_t *as_fw_cond_get(json_t *obj, const char *type)
{
	json_t *c;
	size_t i;

	json_array_foreach(as_jget(obj, "status.conditions"), i, c)
	{
		const char *t = as_jstr(c, "type");

		if (t != NULL && strcmp(t, type) == 0)
			return c;
	}
	return NULL;
}

json_t *as_fw_cond_slot(json_t *obj, const char *type)
{
	json_t *c = as_fw_cond_get(obj, type), *conds;

	if (c != NULL)
		return c;
	if (!json_is_object(json_object_get(obj, "status")))
		json_object_set_new(obj, "status", json_object());
	conds = as_jget(obj, "status.conditions");
	if (!json_is_array(conds)) {
		conds = json_array();
		as_jset(obj, "status.conditions", conds);
	}
	c = json_object();
	json_array_append_new(conds, c);
	json_object_set_new(c, "type", json_string(type));
	return c;
}

bool as_fw_cond_true(json_t *obj, const char *type)
{
	const char *st = as_jstr(as_fw_cond_get(obj, type), "status");

	return st != NULL && strcmp(st, "True") == 0;
}

bool as_fw_pod_ready(json_t *pod)
{
	return as_fw_pod_live(pod) && as_fw_cond_true(pod, "Ready");
}

void as_fw_cond(json_t *obj, const char *type, const char *status,
    const char *reason, const char *message, bool with_update)
{
	json_t *c = as_fw_cond_slot(obj, type);
	char now[CU_TIME_RFC3339_LEN];
	const char *old;

	as_now_rfc3339(now);
	old = as_jstr(c, "status");
	if (old == NULL || strcmp(old, status) != 0) {
		json_object_set_new(c, "lastTransitionTime", json_string(now));
		if (with_update)
			json_object_set_new(
			    c, "lastUpdateTime", json_string(now));
	}
	json_object_set_new(c, "status", json_string(status));
	json_object_set_new(c, "reason", json_string(reason));
	json_object_set_new(c, "message", json_string(message));
}

bool as_fw_split(const char *key, char *ns, size_t nsz, char *name, size_t nmz)
{
	const char *slash = key ? strchr(key, '/') : NULL;

	if (slash == NULL)
		return false;
	snprintf(ns, nsz, "%.*s", (int)(slash - key), key);
	snprintf(name, nmz, "%s", slash + 1);
	return true;
}

/* ---- dirty sets and wake-ups ------------------------------------------ */

static int ctl_index(const struct as_fw_ctl *c)
{
	size_t i;

	for (i = 0; i < NCTLS; i++)
		if (ctls[i] == c)
			return (int)i;
	return -1;
}

static void mark_i(int i, const char *ns, const char *name)
{
	char *key;

	if (!fw.on || i < 0 || ns == NULL || name == NULL)
		return;
	key = cu_asprintf("%d/%s/%s", i, ns, name);
	if (key != NULL)
		json_object_set_new(fw.dirty, key, json_true());
	cu_free(key);
}

void as_fw_mark(const struct as_fw_ctl *c, const char *ns, const char *name)
{
	mark_i(ctl_index(c), ns, name);
}

void as_fw_wake(
    const struct as_fw_ctl *c, const char *ns, const char *name, int64_t at_ms)
{
	char *key;
	json_t *cur;

	if (!fw.on || ctl_index(c) < 0)
		return;
	key = cu_asprintf("%d/%s/%s", ctl_index(c), ns, name);
	if (key == NULL)
		return;
	cur = json_object_get(fw.wake, key);
	if (cur == NULL || json_integer_value(cur) > at_ms)
		json_object_set_new(fw.wake, key, json_integer(at_ms));
	cu_free(key);
}

static bool kind_is(const struct as_kind *k, const struct as_fw_ctl *c)
{
	return strcmp(k->group, c->group) == 0 &&
	       strcmp(k->plural, c->plural) == 0;
}

/* "group/version" -> does it name c's group? */
static bool api_version_of(const char *av, const struct as_fw_ctl *c)
{
	const char *slash = av ? strchr(av, '/') : NULL;
	size_t n = strlen(c->group);

	if (c->group[0] == '\0')
		return av != NULL && slash == NULL;
	return slash != NULL && (size_t)(slash - av) == n &&
	       strncmp(av, c->group, n) == 0;
}

/* Objects of kind k may own what a simulator created. */
static bool owner_kind(struct as_server *srv, const struct as_kind *k)
{
	size_t i;

	if (strcmp(k->group, "batch") == 0 || strcmp(k->plural, "jobsets") == 0)
		return true;
	for (i = 0; i < NCTLS; i++)
		if ((srv->sim_fw & ctls[i]->sim) && kind_is(k, ctls[i]))
			return true;
	return false;
}

void as_fw_notify(
    struct as_server *srv, struct as_kind *k, json_t *obj, json_t *old)
{
	json_t *ref = obj ? obj : old, *o;
	const char *ns = as_jstr(ref, "metadata.namespace");
	size_t i, j;

	if (!fw.on || ref == NULL)
		return;
	if (k->group[0] == '\0' && strcmp(k->plural, "pods") == 0)
		as_podsim_notify(srv, obj, old);
	for (i = 0; i < NCTLS; i++)
		if ((srv->sim_fw & ctls[i]->sim) && kind_is(k, ctls[i]))
			mark_i((int)i, ns, as_jstr(ref, "metadata.name"));
	json_array_foreach(as_jget(ref, "metadata.ownerReferences"), j, o)
	{
		if (!json_is_true(json_object_get(o, "controller")))
			continue;
		for (i = 0; i < NCTLS; i++)
			if ((srv->sim_fw & ctls[i]->sim) &&
			    strcmp(as_jstr(o, "kind") ? as_jstr(o, "kind") : "",
				ctls[i]->kind) == 0 &&
			    api_version_of(as_jstr(o, "apiVersion"), ctls[i]))
				mark_i((int)i, ns, as_jstr(o, "name"));
	}
	/* A deleted owner: its dependents go (the garbage collector's part,
	 * for the kinds whose children these simulators make). */
	if (obj == NULL && as_jstr(old, "metadata.uid") != NULL &&
	    owner_kind(srv, k))
		json_object_set_new(fw.gone, as_jstr(old, "metadata.uid"),
		    json_string(ns ? ns : ""));
}

/* ---- garbage collection ------------------------------------------------ */

static bool owned_by(json_t *obj, const char *uid)
{
	json_t *o;
	size_t i;

	json_array_foreach(as_jget(obj, "metadata.ownerReferences"), i, o)
	{
		const char *u = as_jstr(o, "uid");

		if (u != NULL && strcmp(u, uid) == 0)
			return true;
	}
	return false;
}

/* Does an owner other than those in gone, named by obj's
 * ownerReferences, still exist (same uid)? The garbage collector leaves
 * an object while any of its owners is alive (a pod group's Workload,
 * owned by every Pod of the group, outlives the first Pod deleted). */
static bool other_owner_alive(
    struct as_server *srv, json_t *obj, json_t *gone, const char *ns)
{
	json_t *o, *cur;
	size_t i;

	json_array_foreach(as_jget(obj, "metadata.ownerReferences"), i, o)
	{
		const char *uid = as_jstr(o, "uid"), *name = as_jstr(o, "name");
		struct as_kind *k;

		if (uid == NULL || name == NULL ||
		    json_object_get(gone, uid) != NULL)
			continue;
		k = as_kind_by_gvk(
		    srv, as_jstr(o, "apiVersion"), as_jstr(o, "kind"));
		if (k == NULL)
			continue;
		cur =
		    as_store_get(k, (k->flags & AS_NAMESPACED) ? ns : "", name);
		if (cur != NULL && as_jstr(cur, "metadata.uid") != NULL &&
		    strcmp(as_jstr(cur, "metadata.uid"), uid) == 0)
			return true;
	}
	return false;
}

/* Delete, in every kind, what the owners in fw.gone own once none of
 * its owners is left (background propagation). */
static void collect(struct as_server *srv)
{
	json_t *gone = fw.gone, *victims = json_array(), *v;
	const char *uid;
	struct as_kind *k;
	size_t i;

	fw.gone = json_object();
	if (json_object_size(gone) == 0 || victims == NULL) {
		json_decref(gone);
		json_decref(victims);
		return;
	}
	for (k = srv->kinds; k != NULL; k = k->next) {
		if (!(k->flags & AS_NAMESPACED) || k->storage != NULL ||
		    strcmp(k->plural, "events") == 0)
			continue;
		for (i = 0; i < k->nitems; i++) {
			json_t *it = k->items[i].obj;
			json_t *owners =
			    as_jget(it, "metadata.ownerReferences");

			if (json_array_size(owners) == 0)
				continue;
			json_object_foreach(gone, uid, v)
			{
				if (owned_by(it, uid) &&
				    !other_owner_alive(
					srv, it, gone, k->items[i].ns)) {
					json_array_append_new(victims,
					    json_pack("{s:I, s:O}", "k",
						(json_int_t)(intptr_t)k, "o",
						it));
					break;
				}
			}
		}
	}
	json_array_foreach(victims, i, v)
	{
		as_fw_delete(srv,
		    (struct as_kind *)(intptr_t)json_integer_value(
			json_object_get(v, "k")),
		    json_object_get(v, "o"),
		    "system:serviceaccount:kube-system:generic-garbage-"
		    "collector");
	}
	json_decref(victims);
	json_decref(gone);
}

/* ---- owned objects, deletes, pods -------------------------------------- */

/* The uid of obj's controller reference when its kind is `kind` (NULL:
 * any), else NULL. */
static const char *controller_uid(json_t *obj, const char *kind)
{
	json_t *o;
	size_t j;

	json_array_foreach(as_jget(obj, "metadata.ownerReferences"), j, o)
	{
		if (json_is_true(json_object_get(o, "controller")))
			return kind == NULL || (as_jstr(o, "kind") != NULL &&
						   strcmp(as_jstr(o, "kind"),
						       kind) == 0)
				   ? as_jstr(o, "uid")
				   : NULL;
	}
	return NULL;
}

json_t *as_fw_owned(struct as_kind *k, json_t *owner)
{
	json_t *out = json_array(), *uids = json_object();
	const char *ns = as_jstr(owner, "metadata.namespace");
	const char *uid = as_jstr(owner, "metadata.uid");
	long at;
	size_t i, from;
	int pass;

	if (k == NULL || out == NULL || uids == NULL || ns == NULL ||
	    uid == NULL) {
		json_decref(uids);
		return out;
	}
	json_object_set_new(uids, uid, json_true());
	at = as_store_find(k, ns, "");
	from = at >= 0 ? (size_t)at : (size_t)(-at - 1);
	/* Pass 1: controlled by owner; pass 2 (Pods): by one of its Pods
	 * (a Spark driver's executors). */
	for (pass = 0; pass < (strcmp(k->plural, "pods") == 0 ? 2 : 1);
	     pass++) {
		for (i = from; i < k->nitems; i++) {
			const char *u = controller_uid(
			    k->items[i].obj, pass == 0 ? NULL : "Pod");

			if (strcmp(k->items[i].ns, ns) != 0)
				break;
			if (u == NULL ||
			    (pass == 0 ? strcmp(u, uid) != 0
				       : json_object_get(uids, u) == NULL ||
					     strcmp(u, uid) == 0))
				continue;
			json_array_append(out, k->items[i].obj);
			if (pass == 0 &&
			    as_jstr(k->items[i].obj, "metadata.uid") != NULL)
				json_object_set_new(uids,
				    as_jstr(k->items[i].obj, "metadata.uid"),
				    json_true());
		}
	}
	json_decref(uids);
	return out;
}

void as_fw_delete(
    struct as_server *srv, struct as_kind *k, json_t *obj, const char *user)
{
	const char *ns = as_jstr(obj, "metadata.namespace");
	const char *name = as_jstr(obj, "metadata.name");
	char now[CU_TIME_RFC3339_LEN];
	json_t *upd;

	if (k == NULL || name == NULL)
		return;
	if (json_array_size(as_jget(obj, "metadata.finalizers")) == 0) {
		char *n = cu_strdup(name), *s = cu_strdup(ns ? ns : "");

		if (n != NULL && s != NULL)
			as_internal_delete(srv, k, s, n, user);
		cu_free(n);
		cu_free(s);
		return;
	}
	if (as_jget(obj, "metadata.deletionTimestamp") != NULL)
		return;
	as_now_rfc3339(now);
	upd = json_deep_copy(obj);
	as_jset(upd, "metadata.deletionTimestamp", json_string(now));
	as_jset(upd, "metadata.deletionGracePeriodSeconds", json_integer(0));
	as_internal_update(srv, k, upd, false, user);
}

void as_fw_stop_pod(
    struct as_server *srv, json_t *pod, bool ok, const char *user)
{
	struct as_kind *pk = as_kind_find(srv, "", "v1", "pods");
	json_t *upd, *c, *arr;
	size_t i;

	if (pk == NULL || terminal(pod))
		return;
	upd = json_deep_copy(pod);
	as_jset(upd, "status.phase", json_string(ok ? "Succeeded" : "Failed"));
	arr = json_array();
	json_array_foreach(as_jget(pod, "spec.containers"), i, c)
	{
		const char *n = as_jstr(c, "name");
		const char *img = as_jstr(c, "image");

		json_array_append_new(arr,
		    json_pack(
			"{s:s, s:s, s:s, s:b, s:b, s:i, s:{s:{s:i, s:s}}}",
			"name", n ? n : "", "image", img ? img : "", "imageID",
			"", "ready", 0, "started", 0, "restartCount", 0,
			"state", "terminated", "exitCode", ok ? 0 : 137,
			"reason", ok ? "Completed" : "Error"));
	}
	as_jset(upd, "status.containerStatuses", arr);
	as_fw_cond(upd, "Ready", "False", "PodCompleted", "", false);
	as_fw_cond(upd, "ContainersReady", "False", "PodCompleted", "", false);
	as_internal_update(srv, pk, upd, true, user);
}

json_t *as_fw_pod(json_t *owner, const char *api_version, const char *kind,
    json_t *tmpl, const char *name)
{
	json_t *pod = json_object(), *md, *spec;

	md = json_deep_copy(json_object_get(tmpl, "metadata"));
	if (!json_is_object(md))
		md = json_object();
	spec = json_deep_copy(json_object_get(tmpl, "spec"));
	if (!json_is_object(spec))
		spec = json_object();
	if (!json_is_object(json_object_get(md, "labels")))
		json_object_set_new(md, "labels", json_object());
	json_object_set_new(md, "name", json_string(name));
	json_object_set_new(
	    md, "namespace", json_string(as_jstr(owner, "metadata.namespace")));
	json_object_set_new(md, "ownerReferences",
	    as_fw_controller_ref(owner, api_version, kind));
	json_object_set_new(pod, "apiVersion", json_string("v1"));
	json_object_set_new(pod, "kind", json_string("Pod"));
	json_object_set_new(pod, "metadata", md);
	json_object_set_new(pod, "spec", spec);
	return pod;
}

json_t *as_fw_controller_ref(
    json_t *owner, const char *api_version, const char *kind)
{
	return json_pack("[{s:s, s:s, s:s, s:s, s:b, s:b}]", "apiVersion",
	    api_version, "kind", kind, "name", as_jstr(owner, "metadata.name"),
	    "uid", as_jstr(owner, "metadata.uid"), "controller", 1,
	    "blockOwnerDeletion", 1);
}

void as_fw_merge_map(json_t *dst_parent, const char *key, json_t *src)
{
	json_t *dst = json_object_get(dst_parent, key);

	if (!json_is_object(src) || !json_is_object(dst_parent))
		return;
	if (!json_is_object(dst)) {
		dst = json_object();
		json_object_set_new(dst_parent, key, dst);
	}
	json_object_update(dst, src);
}

void as_fw_union_list(json_t *dst_parent, const char *key, json_t *src)
{
	json_t *dst = json_object_get(dst_parent, key), *v, *w;
	size_t i, j;

	if (!json_is_array(src) || !json_is_object(dst_parent))
		return;
	if (!json_is_array(dst)) {
		dst = json_array();
		json_object_set_new(dst_parent, key, dst);
	}
	json_array_foreach(src, i, v)
	{
		bool found = false;

		json_array_foreach(dst, j, w)
		{
			if (json_equal(v, w))
				found = true;
		}
		if (!found)
			json_array_append(dst, v);
	}
}

void as_fw_merge_template(json_t *pt, json_t *src)
{
	json_t *md, *spec;

	if (!json_is_object(pt) || !json_is_object(src))
		return;
	if (!json_is_object(json_object_get(pt, "metadata")))
		json_object_set_new(pt, "metadata", json_object());
	if (!json_is_object(json_object_get(pt, "spec")))
		json_object_set_new(pt, "spec", json_object());
	md = json_object_get(pt, "metadata");
	spec = json_object_get(pt, "spec");
	as_fw_merge_map(md, "labels", as_jget(src, "metadata.labels"));
	as_fw_merge_map(
	    md, "annotations", as_jget(src, "metadata.annotations"));
	as_fw_merge_map(
	    spec, "nodeSelector", as_jget(src, "spec.nodeSelector"));
	as_fw_union_list(spec, "tolerations", as_jget(src, "spec.tolerations"));
	as_fw_union_list(
	    spec, "schedulingGates", as_jget(src, "spec.schedulingGates"));
}

void as_fw_sha1_hex(const char *s, char out[41])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0, i;

	EVP_Digest(s, strlen(s), md, &n, EVP_sha1(), NULL);
	for (i = 0; i < n && i < 20; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
	out[40] = '\0';
}

/* ---- CRDs ---------------------------------------------------------------- */

void as_fw_install_crds(struct as_server *srv, json_t *list)
{
	struct as_kind *crds = as_kind_find(
	    srv, "apiextensions.k8s.io", "v1", "customresourcedefinitions");
	json_t *crd;
	size_t i;

	json_array_foreach(list, i, crd)
	{
		json_t *copy;
		cu_error err;

		if (crds == NULL || as_store_get(crds, "",
					as_jstr(crd, "metadata.name")) != NULL)
			continue;
		copy = json_deep_copy(crd);
		if (copy == NULL || as_crd_prepare(copy, &err) != CU_OK ||
		    as_crd_register(srv, copy, &err) != CU_OK ||
		    as_internal_create(srv, crds, json_incref(copy),
			"system:serviceaccount:kube-system:simulators") !=
			CU_OK)
			cu_warn("simulators: cannot install CRD %s",
			    as_jstr(crd, "metadata.name"));
		json_decref(copy);
	}
}

/* ---- creates through the front door ---------------------------------------
 */

static void call_free(struct call *c)
{
	if (c == NULL)
		return;
	cu_free(c->key);
	cu_free(c->owner);
	cu_free(c->ons);
	cu_free(c->oname);
	cu_free(c->body);
	cu_free(c->resp);
	curl_slist_free_all(c->hdrs);
	cu_free(c);
}

static size_t on_write(char *p, size_t sz, size_t n, void *ud)
{
	struct call *c = ud;
	char *b = cu_realloc(c->resp, c->resp_len + sz * n + 1);

	if (b == NULL)
		return 0;
	memcpy(b + c->resp_len, p, sz * n);
	c->resp_len += sz * n;
	b[c->resp_len] = '\0';
	c->resp = b;
	return sz * n;
}

static void owner_count(const char *uid, int delta)
{
	json_int_t n;

	if (uid == NULL)
		return;
	n = json_integer_value(json_object_get(fw.owners, uid)) + delta;
	if (n > 0)
		json_object_set_new(fw.owners, uid, json_integer(n));
	else
		json_object_del(fw.owners, uid);
}

static void forget_call(struct call *c)
{
	json_t *v;
	size_t i;

	json_array_foreach(fw.calls, i, v)
	{
		if ((struct call *)(intptr_t)json_integer_value(v) == c) {
			json_array_remove(fw.calls, i);
			break;
		}
	}
}

static void on_done(CURL *e, CURLcode rc, void *ctx)
{
	struct call *c = NULL;
	long code = 0;

	(void)ctx;
	curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&c);
	curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
	curl_multi_remove_handle(fw.cl.multi, e);
	curl_easy_cleanup(e);
	if (c == NULL)
		return;
	forget_call(c);
	json_object_del(fw.inflight, c->key);
	owner_count(c->owner, -1);
	/* 409 too: the name is taken by an object this controller does
	 * not own (a real one reports the error and backs off). */
	if (rc != CURLE_OK || (code != 201 && code != 200)) {
		const char *why = c->resp ? c->resp : curl_easy_strerror(rc);
		const char *last = c->owner ? json_string_value(json_object_get(
						  fw.refusals, c->owner))
					    : NULL;

		/* Once per owner and answer: a refusing webhook is retried
		 * every second. */
		if (last == NULL || strcmp(last, why) != 0)
			cu_warn("simulators: create %s refused (%ld): %.300s",
			    c->key, code, why);
		if (c->owner != NULL)
			json_object_set_new(
			    fw.refusals, c->owner, json_string(why));
		if (c->owner != NULL)
			json_object_set_new(fw.backoff, c->owner,
			    json_integer(as_fw_now_ms() + BACKOFF_MS));
		/* Again when the back-off ends: the latest refusal sets
		 * both (a wake-up before it would find the owner held). */
		if (c->ctl >= 0 && c->ons != NULL && c->oname != NULL) {
			char *key =
			    cu_asprintf("%d/%s/%s", c->ctl, c->ons, c->oname);

			if (key != NULL)
				json_object_set_new(fw.wake, key,
				    json_integer(as_fw_now_ms() + BACKOFF_MS));
			cu_free(key);
		}
	} else if (c->ctl >= 0) {
		if (c->owner != NULL)
			json_object_del(fw.refusals, c->owner);
		mark_i(c->ctl, c->ons, c->oname);
	}
	call_free(c);
}

static const char *token_for(struct as_server *srv, const char *user)
{
	json_t *t = json_object_get(fw.tokens, user);
	struct as_token *arr;
	char *tok;

	if (t != NULL)
		return json_string_value(t);
	tok = cu_asprintf("sim-%016llx%016llx",
	    (unsigned long long)as_rand(srv), (unsigned long long)as_rand(srv));
	arr = cu_realloc(srv->tokens, (srv->ntokens + 1) * sizeof(*arr));
	if (tok == NULL || arr == NULL) {
		cu_free(tok);
		if (arr != NULL)
			srv->tokens = arr;
		return NULL;
	}
	srv->tokens = arr;
	arr[srv->ntokens].token = tok;
	arr[srv->ntokens].user = cu_strdup(user);
	arr[srv->ntokens].groups = NULL;
	srv->ntokens++;
	json_object_set_new(fw.tokens, user, json_string(tok));
	return json_string_value(json_object_get(fw.tokens, user));
}

bool as_fw_pending(json_t *owner)
{
	const char *uid = as_jstr(owner, "metadata.uid");
	json_t *b = uid ? json_object_get(fw.backoff, uid) : NULL;

	if (uid == NULL)
		return false;
	if (b != NULL && json_integer_value(b) > as_fw_now_ms())
		return true;
	return json_object_get(fw.owners, uid) != NULL;
}

static char *collection_path(struct as_kind *k, const char *ns)
{
	if (k->group[0] == '\0')
		return cu_asprintf(
		    "/api/%s/namespaces/%s/%s", k->version, ns, k->plural);
	return cu_asprintf("/apis/%s/%s/namespaces/%s/%s", k->group, k->version,
	    ns, k->plural);
}

/* Where this server answers: its listen address, loopback for a
 * wildcard. */
static const char *self_host(const struct as_server *srv)
{
	const char *h = srv->listen_host;

	if (h == NULL || h[0] == '\0' || strcmp(h, "0.0.0.0") == 0 ||
	    strchr(h, ':') != NULL)
		return "127.0.0.1";
	return h;
}

void as_fw_create(struct as_server *srv, const struct as_fw_ctl *c,
    struct as_kind *k, json_t *obj, json_t *owner)
{
	const char *ns = as_jstr(obj, "metadata.namespace");
	const char *name = as_jstr(obj, "metadata.name");
	const char *tok = token_for(srv, c->user);
	struct call *call = NULL;
	char *path = NULL, *url = NULL, *auth = NULL, *ua = NULL;
	CURL *e = NULL;
	CURLcode rc = CURLE_OK;

	if (!fw.cl_ok || k == NULL || ns == NULL || name == NULL || tok == NULL)
		goto out;
	/* Batches, as kube's controllers create: the rest on the answers. */
	if (as_jstr(owner, "metadata.uid") != NULL &&
	    json_integer_value(json_object_get(
		fw.owners, as_jstr(owner, "metadata.uid"))) >= MAX_BATCH)
		goto out;
	call = cu_calloc(1, sizeof(*call));
	if (call == NULL)
		goto out;
	call->key = cu_asprintf("%s/%s/%s", k->plural, ns, name);
	if (call->key == NULL ||
	    json_object_get(fw.inflight, call->key) != NULL)
		goto out;
	call->ctl = ctl_index(c);
	call->ons = cu_strdup(as_jstr(owner, "metadata.namespace"));
	call->oname = cu_strdup(as_jstr(owner, "metadata.name"));
	call->owner = cu_strdup(as_jstr(owner, "metadata.uid"));
	/* What kube-apiserver's Priority admission adds to a Pod (the
	 * scheduler stand-in orders by it). */
	if (k->group[0] == '\0' && strcmp(k->plural, "pods") == 0 &&
	    json_is_object(json_object_get(obj, "spec")))
		as_sim_resolve_priority(srv, json_object_get(obj, "spec"));
	call->body = as_json_dump(obj, NULL);
	path = collection_path(k, ns);
	url = cu_asprintf("%s://%s:%u%s?fieldManager=%s",
	    srv->tls ? "https" : "http", self_host(srv), (unsigned)srv->port,
	    path ? path : "",
	    strrchr(c->user, ':') ? strrchr(c->user, ':') + 1 : c->user);
	auth = cu_asprintf("Authorization: Bearer %s", tok);
	ua = cu_asprintf("kube-controller-manager/v1.33.0 (linux/amd64) "
			 "kubernetes/simulated %s",
	    c->user);
	e = curl_easy_init();
	if (call->body == NULL || url == NULL || auth == NULL || ua == NULL ||
	    e == NULL)
		goto out;
	call->hdrs = curl_slist_append(NULL, auth);
	call->hdrs =
	    curl_slist_append(call->hdrs, "Content-Type: application/json");
	call->hdrs = curl_slist_append(call->hdrs, "Accept: application/json");
	rc |= curl_easy_setopt(e, CURLOPT_URL, url);
	rc |= curl_easy_setopt(e, CURLOPT_PRIVATE, call);
	rc |= curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	rc |= curl_easy_setopt(e, CURLOPT_USERAGENT, ua);
	rc |= curl_easy_setopt(e, CURLOPT_POSTFIELDS, call->body);
	rc |= curl_easy_setopt(e, CURLOPT_HTTPHEADER, call->hdrs);
	rc |= curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
	rc |= curl_easy_setopt(e, CURLOPT_WRITEDATA, call);
	rc |= curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, 30000L);
	if (srv->tls && srv->ca_pem != NULL) {
		struct curl_blob b = {
		    srv->ca_pem, strlen(srv->ca_pem), CURL_BLOB_COPY};

		rc |= curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &b);
		rc |= curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
		/* Our own certificate may lack SANs (--no-san). */
		rc |= curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (rc != CURLE_OK || curl_multi_add_handle(fw.cl.multi, e) != CURLM_OK)
		goto out;
	json_object_set_new(fw.inflight, call->key, json_true());
	owner_count(call->owner, 1);
	call->easy = e;
	json_array_append_new(
	    fw.calls, json_integer((json_int_t)(intptr_t)call));
	call = NULL;
	e = NULL;
out:
	if (e != NULL)
		curl_easy_cleanup(e);
	call_free(call);
	cu_free(path);
	cu_free(url);
	cu_free(auth);
	cu_free(ua);
	json_decref(obj);
}

/* ---- the loop ----------------------------------------------------------- */

bool as_fw_tick(struct as_server *srv)
{
	json_t *batch, *v;
	const char *key;
	void *tmp;
	int64_t now = as_fw_now_ms();
	bool ran = false;

	if (!fw.on)
		return false;
	json_object_foreach_safe(fw.wake, tmp, key, v)
	{
		if (json_integer_value(v) <= now) {
			json_object_set_new(fw.dirty, key, json_true());
			json_object_del(fw.wake, key);
		}
	}
	collect(srv);
	ran = as_podsim_tick(srv);
	batch = fw.dirty;
	fw.dirty = json_object();
	json_object_foreach_safe(batch, tmp, key, v)
	{
		char *end;
		long i = strtol(key, &end, 10);
		char ns[254], name[254];

		if (*end != '/' || i < 0 || (size_t)i >= NCTLS ||
		    !as_fw_split(end + 1, ns, sizeof(ns), name, sizeof(name)))
			continue;
		ctls[i]->reconcile(srv, ctls[i], ns, name);
		ran = true;
	}
	json_decref(batch);
	return ran || json_object_size(fw.dirty) > 0;
}

void as_fw_start(struct as_server *srv)
{
	if (srv->sim_fw == 0 || fw.on)
		return;
	fw.dirty = json_object();
	fw.wake = json_object();
	fw.gone = json_object();
	fw.inflight = json_object();
	fw.owners = json_object();
	fw.backoff = json_object();
	fw.tokens = json_object();
	fw.refusals = json_object();
	fw.calls = json_array();
	fw.cl_ok = as_curlev_init(&fw.cl, srv->loop, on_done, NULL) == CU_OK;
	if (fw.cl_ok)
		curl_multi_setopt(
		    fw.cl.multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, MAX_CONNS);
	fw.on = true;
	{
		cu_error err;
		json_t *list = as_fw_crds(srv->sim_fw, &err);

		if (list == NULL)
			cu_warn("simulators: CRDs: %s", err.msg);
		as_fw_install_crds(srv, list);
		json_decref(list);
	}
	as_podsim_start(srv);
}

void as_fw_stop(struct as_server *srv)
{
	json_t *v;
	size_t i;

	(void)srv;
	if (!fw.on)
		return;
	json_array_foreach(fw.calls, i, v)
	{
		struct call *c = (struct call *)(intptr_t)json_integer_value(v);

		curl_multi_remove_handle(fw.cl.multi, c->easy);
		curl_easy_cleanup(c->easy);
		call_free(c);
	}
	if (fw.cl_ok)
		as_curlev_dispose(&fw.cl);
	as_podsim_stop();
	as_fw_roles_free();
	as_raysim_free();
	json_decref(fw.dirty);
	json_decref(fw.wake);
	json_decref(fw.gone);
	json_decref(fw.inflight);
	json_decref(fw.owners);
	json_decref(fw.backoff);
	json_decref(fw.tokens);
	json_decref(fw.refusals);
	json_decref(fw.calls);
	memset(&fw, 0, sizeof(fw));
}
