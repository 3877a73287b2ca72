/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/wrapsim.c - stand-ins for the AppWrapper controller
 * (--simulate appwrappers: workload.codeflare.dev/v1beta2) and the Spark
 * operator (--simulate sparkapplications: sparkoperator.k8s.io/v1beta2);
 * docs/apiserver.md §15.8-15.9.
 *
 * AppWrapper: while spec.suspend is false every spec.components[i]
 * .template is created in the AppWrapper's namespace, controlled by it and
 * labelled workload.codeflare.dev/appwrapper, with podSetInfos[j]
 * (labels, annotations, nodeSelector, tolerations, schedulingGates)
 * merged into the pod template at podSets[j].path (or the path the kind
 * implies: Job, Deployment, StatefulSet, JobSet, the Kubeflow jobs,
 * RayCluster, LeaderWorkerSet); suspending deletes them. status.phase
 * Suspended, Resuming, Running, Suspending, Succeeded (every component
 * that can finish finished well) or Failed (one failed); conditions
 * QuotaReserved, ResourcesDeployed (False once a failed AppWrapper's
 * components are deleted) and PodsReady. Components are whatever
 * their own simulators make of them. spec.managedBy other than
 * workload.codeflare.dev/appwrapper-controller: left alone.
 *
 * SparkApplication: a driver Pod <app>-driver, then spec.executor.instances
 * executor Pods <app>-<id>-exec-<n> once the driver is Ready, built as
 * spark-operator builds them (containers spark-kubernetes-driver /
 * -executor, cores and memory as requests, the application's and the
 * role's labels,
 * annotations, nodeSelector, tolerations and template schedulingGates;
 * the driver controlled by the application, the executors by the driver
 * Pod, as the driver creates them on a cluster);
 * spec.suspend deletes them; status.applicationState.state SUBMITTED,
 * RUNNING, COMPLETED / FAILED after the runtime, SUSPENDED;
 * driverInfo.podName, executorState, sparkApplicationId.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/apiserver/apiserver.h"

#define AW_USER "system:serviceaccount:appwrapper-system:appwrapper-controller"
#define AW_MANAGER "workload.codeflare.dev/appwrapper-controller"
#define SPARK_USER "system:serviceaccount:spark-operator:spark-operator"

/* The node at a path such as "template.spec.replicatedJobs[0].template"
 * [borrowed], or NULL. */
static json_t *at_path(json_t *root, const char *path)
{
	char seg[256];
	const char *p = path;

	while (root != NULL && *p != '\0') {
		size_t n = strcspn(p, ".[");

		if (n >= sizeof(seg))
			return NULL;
		memcpy(seg, p, n);
		seg[n] = '\0';
		if (n > 0)
			root = json_object_get(root, seg);
		p += n;
		while (root != NULL && *p == '[') {
			char *end;
			long i = strtol(p + 1, &end, 10);

			if (*end != ']' || i < 0)
				return NULL;
			root = json_array_get(root, (size_t)i);
			p = end + 1;
		}
		if (*p == '.')
			p++;
	}
	return root;
}

/* Pod template paths a component's kind implies, in podSet order. */
static json_t *implied_paths(json_t *tmpl)
{
	const char *kind = as_jstr(tmpl, "kind");
	json_t *out = json_array(), *v;
	const char *key;
	size_t i;
	static const char *const kf[] = {"pytorchReplicaSpecs",
	    "tfReplicaSpecs", "xgbReplicaSpecs", "paddleReplicaSpecs",
	    "jaxReplicaSpecs", "mpiReplicaSpecs", NULL};
	static const char *const order[] = {
	    "Launcher", "Chief", "Master", "PS", "Worker", "Evaluator", NULL};

	if (kind == NULL)
		return out;
	if (strcmp(kind, "Job") == 0 || strcmp(kind, "Deployment") == 0 ||
	    strcmp(kind, "StatefulSet") == 0 || strcmp(kind, "ReplicaSet") == 0)
		json_array_append_new(
		    out, json_string("template.spec.template"));
	else if (strcmp(kind, "Pod") == 0)
		json_array_append_new(out, json_string("template"));
	else if (strcmp(kind, "JobSet") == 0)
		json_array_foreach(as_jget(tmpl, "spec.replicatedJobs"), i, v)
		{
			char *p =
			    cu_asprintf("template.spec.replicatedJobs[%zu]."
					"template.spec.template",
				i);

			json_array_append_new(out, json_string(p ? p : ""));
			cu_free(p);
		}
	else if (strcmp(kind, "RayCluster") == 0) {
		json_array_append_new(
		    out, json_string("template.spec.headGroupSpec.template"));
		json_array_foreach(as_jget(tmpl, "spec.workerGroupSpecs"), i, v)
		{
			char *p = cu_asprintf(
			    "template.spec.workerGroupSpecs[%zu].template", i);

			json_array_append_new(out, json_string(p ? p : ""));
			cu_free(p);
		}
	} else if (strcmp(kind, "LeaderWorkerSet") == 0) {
		if (as_jget(tmpl, "spec.leaderWorkerTemplate.leaderTemplate"))
			json_array_append_new(out,
			    json_string("template.spec.leaderWorkerTemplate."
					"leaderTemplate"));
		json_array_append_new(out,
		    json_string(
			"template.spec.leaderWorkerTemplate.workerTemplate"));
	} else {
		for (i = 0; kf[i] != NULL; i++) {
			json_t *specs = json_object_get(
			    json_object_get(tmpl, "spec"), kf[i]);
			size_t j;

			for (j = 0; specs != NULL && order[j] != NULL; j++) {
				char *p;

				if (json_object_get(specs, order[j]) == NULL)
					continue;
				p = cu_asprintf("template.spec.%s.%s.template",
				    kf[i], order[j]);
				json_array_append_new(
				    out, json_string(p ? p : ""));
				cu_free(p);
			}
		}
	}
	(void)key;
	return out;
}

/* A PodSetInfo-like info [borrowed] (labels, annotations, nodeSelector,
 * tolerations, schedulingGates) merged into pod template pt. */
static void merge_into(json_t *pt, json_t *info)
{
	json_t *spec;

	if (!json_is_object(pt) || !json_is_object(info))
		return;
	if (!json_is_object(json_object_get(pt, "metadata")))
		json_object_set_new(pt, "metadata", json_object());
	if (!json_is_object(json_object_get(pt, "spec")))
		json_object_set_new(pt, "spec", json_object());
	spec = json_object_get(pt, "spec");
	as_fw_merge_map(json_object_get(pt, "metadata"), "labels",
	    json_object_get(info, "labels"));
	as_fw_merge_map(json_object_get(pt, "metadata"), "annotations",
	    json_object_get(info, "annotations"));
	as_fw_merge_map(
	    spec, "nodeSelector", json_object_get(info, "nodeSelector"));
	as_fw_union_list(
	    spec, "tolerations", json_object_get(info, "tolerations"));
	as_fw_union_list(
	    spec, "schedulingGates", json_object_get(info, "schedulingGates"));
}

/* The object component i describes, podSetInfos applied [owned]. */
static json_t *component_object(json_t *aw, json_t *comp)
{
	/* a copy: the merge below must not edit the stored AppWrapper */
	json_t *wrapper = json_pack("{s:o}", "template",
	    json_deep_copy(json_object_get(comp, "template")));
	json_t *paths = json_array(), *ps, *info, *obj, *md;
	size_t j;

	json_array_foreach(json_object_get(comp, "podSets"), j, ps)
	{
		json_array_append_new(
		    paths, json_string(
			       as_jstr(ps, "path") ? as_jstr(ps, "path") : ""));
	}
	if (json_array_size(paths) == 0) {
		json_decref(paths);
		paths = implied_paths(json_object_get(comp, "template"));
	}
	json_array_foreach(json_object_get(comp, "podSetInfos"), j, info)
	{
		const char *p = json_string_value(json_array_get(paths, j));

		if (p != NULL)
			merge_into(at_path(wrapper, p), info);
	}
	obj = json_deep_copy(json_object_get(wrapper, "template"));
	json_decref(wrapper);
	json_decref(paths);
	if (!json_is_object(obj))
		return NULL;
	md = json_object_get(obj, "metadata");
	if (!json_is_object(md)) {
		md = json_object();
		json_object_set_new(obj, "metadata", md);
	}
	json_object_set_new(
	    md, "namespace", json_string(as_jstr(aw, "metadata.namespace")));
	if (!json_is_object(json_object_get(md, "labels")))
		json_object_set_new(md, "labels", json_object());
	json_object_set_new(json_object_get(md, "labels"),
	    "workload.codeflare.dev/appwrapper",
	    json_string(as_jstr(aw, "metadata.name")));
	json_object_set_new(md, "ownerReferences",
	    as_fw_controller_ref(
		aw, "workload.codeflare.dev/v1beta2", "AppWrapper"));
	return obj;
}

/* 1 finished well, -1 failed, 0 not finished (or never finishes). */
static int finished(json_t *o)
{
	const char *ts = as_jstr(o, "status.terminalState");
	const char *dep = as_jstr(o, "status.jobDeploymentStatus");
	const char *ph = as_jstr(o, "status.phase");
	const char *st = as_jstr(o, "status.applicationState.state");

	if (as_fw_cond_true(o, "Failed") || (ts && strcmp(ts, "Failed") == 0) ||
	    (dep && strcmp(dep, "Failed") == 0) ||
	    (ph && strcmp(ph, "Failed") == 0) ||
	    (st && strcmp(st, "FAILED") == 0))
		return -1;
	if (as_fw_cond_true(o, "Complete") || as_fw_cond_true(o, "Completed") ||
	    as_fw_cond_true(o, "Succeeded") ||
	    (ts && strcmp(ts, "Completed") == 0) ||
	    (dep && strcmp(dep, "Complete") == 0) ||
	    (ph && strcmp(ph, "Succeeded") == 0) ||
	    (st && strcmp(st, "COMPLETED") == 0))
		return 1;
	return 0;
}

static bool ready(json_t *o)
{
	json_int_t want = as_fw_int(o, "spec.replicas", -1);
	const char *st = as_jstr(o, "status.state");

	if (finished(o) > 0 || as_fw_cond_true(o, "Running") ||
	    (st != NULL && strcmp(st, "ready") == 0))
		return true;
	if (want >= 0)
		return as_fw_int(o, "status.readyReplicas", 0) >= want;
	return as_fw_int(o, "status.ready", 0) > 0 ||
	       as_fw_int(o, "status.active", 0) > 0;
}

static bool controlled_by(json_t *obj, json_t *owner)
{
	json_t *o;
	size_t i;

	json_array_foreach(as_jget(obj, "metadata.ownerReferences"), i, o)
	{
		const char *u = as_jstr(o, "uid");

		if (json_is_true(json_object_get(o, "controller")) &&
		    u != NULL && as_jstr(owner, "metadata.uid") != NULL &&
		    strcmp(u, as_jstr(owner, "metadata.uid")) == 0)
			return true;
	}
	return false;
}

/* Component comp of aw as an object *obj [owned, may be NULL] of kind *ck
 * [may be NULL]; the stored object of that name [borrowed], or NULL. */
static json_t *component(struct as_server *srv, json_t *aw, json_t *comp,
    json_t **obj, struct as_kind **ck)
{
	const char *cname;

	*obj = component_object(aw, comp);
	*ck = *obj ? as_kind_by_gvk(srv, as_jstr(*obj, "apiVersion"),
			 as_jstr(*obj, "kind"))
		   : NULL;
	cname = as_jstr(*obj, "metadata.name");
	return *ck && cname
		   ? as_store_get(*ck, as_jstr(aw, "metadata.namespace"), cname)
		   : NULL;
}

/* Delete every component aw controls; how many were still there. */
static int aw_delete(
    struct as_server *srv, const struct as_fw_ctl *c, json_t *aw)
{
	json_t *comp;
	size_t i;
	int n = 0;

	json_array_foreach(as_jget(aw, "spec.components"), i, comp)
	{
		struct as_kind *ck;
		json_t *obj, *cur = component(srv, aw, comp, &obj, &ck);

		if (cur != NULL && controlled_by(cur, aw)) {
			n++;
			as_fw_delete(srv, ck, cur, c->user);
		}
		json_decref(obj);
	}
	return n;
}

static void aw_reconcile(struct as_server *srv, const struct as_fw_ctl *c,
    const char *ns, const char *name)
{
	bool can_create;
	struct as_kind *k = as_fw_kind(srv, c);
	json_t *aw = k ? as_store_get(k, ns, name) : NULL, *comp, *upd, *cs;
	const char *phase;
	bool suspend, any_left = false, all_ready = true;
	int done_ok = 0, done_fail = 0, ncomp, clash = 0;
	size_t i;

	if (aw == NULL || !as_fw_managed_here(aw, "spec.managedBy", AW_MANAGER))
		return;
	phase = as_jstr(aw, "status.phase");
	if (phase != NULL &&
	    (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0))
		return;
	suspend = json_is_true(as_jget(aw, "spec.suspend"));
	/* Creates answered before more are sent (one batch per pass). */
	can_create = !as_fw_pending(aw);
	ncomp = (int)json_array_size(as_jget(aw, "spec.components"));
	cs = json_array();
	json_array_foreach(as_jget(aw, "spec.components"), i, comp)
	{
		struct as_kind *ck;
		json_t *obj, *cur = component(srv, aw, comp, &obj, &ck);
		const char *cname = as_jstr(obj, "metadata.name");
		int f;

		if (cur != NULL && !controlled_by(cur, aw)) {
			/* Someone else's object of that name: never ours to
			 * run or delete (the create would fail). */
			all_ready = false;
			clash++;
			json_decref(obj);
			continue;
		}
		if (suspend) {
			json_decref(obj);
			continue;
		}
		if (cur == NULL) {
			all_ready = false;
			if (ck != NULL && cname != NULL && can_create)
				as_fw_create(srv, c, ck, json_incref(obj), aw);
			json_decref(obj);
			continue;
		}
		f = finished(cur);
		done_ok += f > 0;
		done_fail += f < 0;
		all_ready &= ready(cur);
		json_array_append_new(
		    cs, json_pack("{s:s, s:s, s:s}", "name", cname, "kind",
			    as_jstr(obj, "kind"), "apiVersion",
			    as_jstr(obj, "apiVersion")));
		json_decref(obj);
	}
	/* Suspended or failed: the components go (a failed AppWrapper is
	 * finished once they are, ResourcesDeployed False). */
	if (suspend || done_fail > 0)
		any_left = aw_delete(srv, c, aw) > 0;
	aw = as_store_get(k, ns, name);
	if (aw == NULL) {
		json_decref(cs);
		return;
	}
	upd = json_deep_copy(aw);
	as_jset(upd, "status.componentStatus", cs);
	if (suspend) {
		as_jset(upd, "status.phase",
		    json_string(any_left ? "Suspending" : "Suspended"));
		as_fw_cond(upd, "QuotaReserved", "False", "Suspended",
		    "AppWrapper is suspended", false);
		as_fw_cond(upd, "ResourcesDeployed", "False", "Suspended",
		    "AppWrapper is suspended", false);
		as_fw_cond(upd, "PodsReady", "False", "Suspended",
		    "AppWrapper is suspended", false);
	} else {
		bool deployed = (int)json_array_size(cs) == ncomp;

		as_fw_cond(upd, "QuotaReserved", "True", "Resuming",
		    "AppWrapper is running", false);
		if (clash > 0)
			as_fw_cond(upd, "ResourcesDeployed", "False",
			    "CreateFailed",
			    "a component's name is taken by an object the "
			    "AppWrapper does not own",
			    false);
		else
			as_fw_cond(upd, "ResourcesDeployed",
			    deployed ? "True" : "False",
			    deployed ? "ComponentsCreated" : "Resuming",
			    deployed ? "AppWrapper components are deployed"
				     : "Creating the components",
			    false);
		as_fw_cond(upd, "PodsReady", all_ready ? "True" : "False",
		    all_ready ? "PodsReady" : "InsufficientPodsReady",
		    all_ready ? "All pods are ready" : "Not all pods are ready",
		    false);
		if (done_fail > 0) {
			as_jset(upd, "status.phase", json_string("Failed"));
			as_fw_cond(upd, "ResourcesDeployed", "False", "Failed",
			    "AppWrapper failed: its resources were deleted",
			    false);
			(void)any_left;
		} else if (deployed && done_ok == ncomp && ncomp > 0)
			as_jset(upd, "status.phase", json_string("Succeeded"));
		else
			as_jset(upd, "status.phase",
			    json_string(deployed ? "Running" : "Resuming"));
	}
	as_internal_update(srv, k, upd, true, c->user);
}

const struct as_fw_ctl as_fw_appwrappers = {"workload.codeflare.dev", "v1beta2",
    "appwrappers", "AppWrapper", AS_SIM_APPWRAPPERS, AW_USER, aw_reconcile};

/* ---- SparkApplication -------------------------------------------------------
 */

/* "1g", "512m" (Java units) as Kubernetes quantities. */
static json_t *java_memory(const char *m)
{
	size_t n = m ? strlen(m) : 0;
	char buf[64];
	char u = n ? (char)tolower((unsigned char)m[n - 1]) : 0;

	if (n == 0 || n >= sizeof(buf) - 3)
		return NULL;
	if (u == 'k' || u == 'm' || u == 'g' || u == 't')
		snprintf(buf, sizeof(buf), "%.*s%ci", (int)(n - 1), m,
		    (char)toupper((unsigned char)u));
	else
		snprintf(buf, sizeof(buf), "%s", m);
	return json_string(buf);
}

static json_t *spark_template(json_t *app, const char *role)
{
	json_t *r = json_object_get(json_object_get(app, "spec"), role);
	json_t *t = json_deep_copy(json_object_get(r, "template"));
	json_t *spec, *md, *c, *req = json_object(), *v;
	char cname[64];
	const char *img = as_jstr(r, "image") ? as_jstr(r, "image")
					      : as_jstr(app, "spec.image");

	if (!json_is_object(t))
		t = json_object();
	if (!json_is_object(json_object_get(t, "metadata")))
		json_object_set_new(t, "metadata", json_object());
	if (!json_is_object(json_object_get(t, "spec")))
		json_object_set_new(t, "spec", json_object());
	md = json_object_get(t, "metadata");
	spec = json_object_get(t, "spec");
	snprintf(cname, sizeof(cname), "spark-kubernetes-%s", role);
	v = as_jget(r, "coreRequest");
	if (v == NULL && json_is_integer(as_jget(r, "cores")))
		v = json_sprintf(
		    "%lld", (long long)json_integer_value(as_jget(r, "cores")));
	else
		v = json_incref(v ? v : NULL);
	json_object_set_new(req, "cpu", v ? v : json_string("1"));
	v = java_memory(as_jstr(r, "memory"));
	if (v != NULL)
		json_object_set_new(req, "memory", v);
	c = json_pack("{s:s, s:s, s:{s:o}}", "name", cname, "image",
	    img ? img : "spark", "resources", "requests", req);
	json_object_set_new(spec, "containers", json_pack("[o]", c));
	json_object_set_new(spec, "restartPolicy", json_string("Never"));
	if (as_jstr(r, "serviceAccount") != NULL)
		json_object_set(
		    spec, "serviceAccountName", as_jget(r, "serviceAccount"));
	v = json_pack("{s:O*, s:O*, s:O*, s:O*}", "labels",
	    json_object_get(r, "labels"), "annotations",
	    json_object_get(r, "annotations"), "nodeSelector",
	    as_jget(app, "spec.nodeSelector"), "tolerations",
	    json_object_get(r, "tolerations"));
	merge_into(t, v);
	json_decref(v);
	v = json_pack(
	    "{s:O*}", "nodeSelector", json_object_get(r, "nodeSelector"));
	merge_into(t, v);
	json_decref(v);
	(void)md;
	return t;
}

static void spark_pod_name(
    json_t *obj, const struct as_fw_role *r, int idx, char *buf, size_t n)
{
	const char *name = as_jstr(obj, "metadata.name");
	const char *uid = as_jstr(obj, "metadata.uid");

	if (strcmp(r->name, "driver") == 0)
		snprintf(buf, n, "%s-driver", name);
	else
		snprintf(
		    buf, n, "%s-%.8s-exec-%d", name, uid ? uid : "", idx + 1);
}

/* The server spark_decorate reads the driver Pod from: set by
 * spark_reconcile for the one as_fw_run_pods call it makes (the decorate
 * hook has no server handle). */
static struct as_server *spark_srv;

/* The Spark driver creates the executors: each is controlled by the
 * driver Pod (its uid), not by the application, as on a cluster running
 * the Spark operator. */
static void spark_owner(json_t *obj, const struct as_fw_role *r, json_t *pod)
{
	struct as_kind *pk =
	    spark_srv ? as_kind_find(spark_srv, "", "v1", "pods") : NULL;
	char drv[512];
	json_t *d;

	if (strcmp(r->name, "driver") == 0 || pk == NULL)
		return;
	spark_pod_name(
	    obj, &(struct as_fw_role){"driver", 1, NULL}, 0, drv, sizeof(drv));
	d = as_store_get(
	    pk, as_jstr(obj, "metadata.namespace"), drv); /* borrowed */
	if (d == NULL)
		return;
	as_jset(pod, "metadata.ownerReferences",
	    as_fw_controller_ref(d, "v1", "Pod"));
}

static void spark_decorate(
    json_t *obj, const struct as_fw_role *r, int idx, json_t *pod)
{
	json_t *l = as_jget(pod, "metadata.labels"), *v;
	const char *k;
	char id[64];

	(void)idx;
	/* spark-operator gives the driver and executor pods the
	 * application's labels (the queue-name label among them); the
	 * role's own labels win. */
	json_object_foreach(as_jget(obj, "metadata.labels"), k, v)
	{
		if (json_object_get(l, k) == NULL)
			json_object_set(l, k, v);
	}
	snprintf(id, sizeof(id), "spark-%.32s",
	    as_jstr(obj, "metadata.uid") ? as_jstr(obj, "metadata.uid") : "");
	json_object_set_new(l, "spark-role", json_string(r->name));
	json_object_set_new(l, "spark-app-selector", json_string(id));
	json_object_set_new(
	    l, "spark-app-name", json_string(as_jstr(obj, "metadata.name")));
	json_object_set_new(l, "sparkoperator.k8s.io/app-name",
	    json_string(as_jstr(obj, "metadata.name")));
	json_object_set_new(l,
	    "sparkoperator.k8s.io/launched-by-spark-operator",
	    json_string("true"));
	spark_owner(obj, r, pod);
}

static bool spark_before(json_t *obj, int r, const struct as_fw_tally *t)
{
	(void)obj;
	return r == 0 || t->ready_r[0] > 0;
}

static const struct as_fw_podjob spark_podjob = {"sparkoperator.k8s.io/v1beta2",
    "SparkApplication", true, spark_pod_name, spark_decorate, spark_before};

static void spark_reconcile(struct as_server *srv, const struct as_fw_ctl *c,
    const char *ns, const char *name)
{
	struct as_kind *k = as_fw_kind(srv, c);
	struct as_kind *pk = as_kind_find(srv, "", "v1", "pods");
	json_t *app = k ? as_store_get(k, ns, name) : NULL, *upd, *es, *pods,
	       *p;
	struct as_fw_role roles[2] = {0};
	struct as_fw_tally t;
	enum as_fw_run run;
	const char *state;
	char now[CU_TIME_RFC3339_LEN], id[64], drv[300];
	size_t i;

	if (app == NULL) {
		as_fw_forget(&spark_podjob, ns, name);
		return;
	}
	state = as_jstr(app, "status.applicationState.state");
	if (state != NULL &&
	    (strcmp(state, "COMPLETED") == 0 || strcmp(state, "FAILED") == 0))
		return;
	snprintf(roles[0].name, sizeof(roles[0].name), "driver");
	roles[0].replicas = 1;
	roles[0].tmpl = spark_template(app, "driver");
	snprintf(roles[1].name, sizeof(roles[1].name), "executor");
	roles[1].replicas = as_fw_int(app, "spec.executor.instances", 0);
	roles[1].tmpl = spark_template(app, "executor");
	spark_srv = srv;
	run = as_fw_run_pods(srv, c, &spark_podjob, app, roles, 2,
	    json_is_true(as_jget(app, "spec.suspend")), &t);
	spark_srv = NULL;
	json_decref(roles[0].tmpl);
	json_decref(roles[1].tmpl);
	app = as_store_get(k, ns, name);
	if (app == NULL)
		return;
	upd = json_deep_copy(app);
	as_now_rfc3339(now);
	snprintf(id, sizeof(id), "spark-%.32s",
	    as_jstr(app, "metadata.uid") ? as_jstr(app, "metadata.uid") : "");
	spark_pod_name(app, &roles[0], 0, drv, sizeof(drv));
	switch (run) {
	case AS_FW_IDLE:
		state = "SUSPENDED";
		break;
	case AS_FW_STARTING:
		state = "SUBMITTED";
		break;
	case AS_FW_RUNNING:
		state = "RUNNING";
		break;
	case AS_FW_SUCCEEDED:
		state = "COMPLETED";
		break;
	default:
		state = "FAILED";
		break;
	}
	as_jset(upd, "status.applicationState.state", json_string(state));
	if (run == AS_FW_FAILED)
		as_jset(upd, "status.applicationState.errorMessage",
		    json_string("driver container failed (simulated)"));
	if (run != AS_FW_IDLE) {
		as_jset(upd, "status.sparkApplicationId", json_string(id));
		as_jset(upd, "status.driverInfo.podName", json_string(drv));
		if (as_jget(upd, "status.submissionAttempts") == NULL) {
			as_jset(
			    upd, "status.submissionAttempts", json_integer(1));
			as_jset(upd, "status.lastSubmissionAttemptTime",
			    json_string(now));
		}
	}
	if (run == AS_FW_SUCCEEDED || run == AS_FW_FAILED)
		as_jset(upd, "status.terminationTime", json_string(now));
	es = json_object();
	pods = as_fw_owned(pk, app);
	json_array_foreach(pods, i, p)
	{
		const char *role = json_string_value(json_object_get(
		    as_jget(p, "metadata.labels"), "spark-role"));
		const char *ph = as_jstr(p, "status.phase");

		if (role == NULL || strcmp(role, "executor") != 0)
			continue;
		json_object_set_new(es, as_jstr(p, "metadata.name"),
		    json_string(ph && strcmp(ph, "Succeeded") == 0 ? "COMPLETED"
				: ph && strcmp(ph, "Failed") == 0  ? "FAILED"
				: as_fw_pod_ready(p)		   ? "RUNNING"
						     : "PENDING"));
	}
	json_decref(pods);
	as_jset(upd, "status.executorState", es);
	as_internal_update(srv, k, upd, true, c->user);
}

const struct as_fw_ctl as_fw_sparkapps = {"sparkoperator.k8s.io", "v1beta2",
    "sparkapplications", "SparkApplication", AS_SIM_SPARK, SPARK_USER,
    spark_reconcile};
