/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/raysim.c - a stand-in for the KubeRay operator
 * (--simulate ray: RayCluster, RayJob and RayService of ray.io/v1;
 * docs/apiserver.md §15.7).
 *
 * RayCluster: a head Pod <cluster>-head and, per worker group,
 * replicas x numOfHosts Pods <cluster>-<group>-worker-<index>, labelled
 * ray.io/{cluster,node-type,group,is-ray-node}; spec.suspend deletes
 * them; status.state ready once every Pod is Ready (suspended while
 * suspended), desired/available/ready worker counts, head.podName and
 * the conditions HeadPodReady, RayClusterProvisioned and
 * RayClusterSuspended. A RayCluster never finishes.
 * RayJob: while unsuspended, a RayCluster <rayjob>-<5 characters> from
 * spec.rayClusterSpec (jobDeploymentStatus Initializing); once it is
 * ready, Running with jobStatus RUNNING for the runtime
 * (cueue.dev/sim-runtime-ms on the RayJob or its head template, default
 * 1000), then SUCCEEDED / Complete (FAILED / Failed with
 * cueue.dev/sim-fail: "true"), the cluster deleted when
 * spec.shutdownAfterJobFinishes. In K8sJobMode (the default) with the Job
 * simulator, the runtime is that of KubeRay's submitter Job <rayjob>
 * (spec.submitterPodTemplate, or ray-job-submitter with 500m / 200Mi
 * requested), which gets the RayJob's runtime annotations. spec.suspend
 * deletes the cluster and the submitter (Suspended).
 * RayService: a RayCluster <service>-raycluster-<5 characters> from
 * spec.rayClusterConfig whose suspend follows rayClusterConfig.suspend
 * (on resume the cluster's spec is the config's again, so templates
 * edited while suspended reach its pods);
 * condition Ready and serviceStatus Running while it is ready;
 * activeServiceStatus.rayClusterName. Never finishes.
 * Each leaves an object whose spec.managedBy is set to anything but
 * ray.io/kuberay-operator alone.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "tests/apiserver/apiserver.h"

#define RAY_USER "system:serviceaccount:ray-system:kuberay-operator"
#define RAY_MANAGER "ray.io/kuberay-operator"

static json_t *job_due; /* "ns/name" -> ms the RayJob's runtime ends */

/* ---- RayCluster ------------------------------------------------------------
 */

static void rc_pod_name(
    json_t *obj, const struct as_fw_role *r, int idx, char *buf, size_t n)
{
	if (strcmp(r->name, "headgroup") == 0)
		snprintf(buf, n, "%s-head", as_jstr(obj, "metadata.name"));
	else
		snprintf(buf, n, "%s-%s-worker-%d",
		    as_jstr(obj, "metadata.name"), r->name, idx);
}

static void rc_decorate(
    json_t *obj, const struct as_fw_role *r, int idx, json_t *pod)
{
	json_t *l = as_jget(pod, "metadata.labels");
	bool head = strcmp(r->name, "headgroup") == 0;

	(void)idx;
	json_object_set_new(
	    l, "ray.io/cluster", json_string(as_jstr(obj, "metadata.name")));
	json_object_set_new(
	    l, "ray.io/node-type", json_string(head ? "head" : "worker"));
	json_object_set_new(l, "ray.io/group", json_string(r->name));
	json_object_set_new(l, "ray.io/is-ray-node", json_string("yes"));
}

static const struct as_fw_podjob rc_podjob = {
    "ray.io/v1", "RayCluster", false, rc_pod_name, rc_decorate, NULL};

static int rc_roles(json_t *spec, struct as_fw_role *roles)
{
	json_t *g;
	size_t i;
	int n = 1;

	snprintf(roles[0].name, sizeof(roles[0].name), "headgroup");
	roles[0].replicas = 1;
	roles[0].tmpl = as_jget(spec, "headGroupSpec.template");
	json_array_foreach(json_object_get(spec, "workerGroupSpecs"), i, g)
	{
		json_int_t hosts = as_fw_int(g, "numOfHosts", 1);

		if (n >= AS_FW_MAX_ROLES)
			break;
		snprintf(roles[n].name, sizeof(roles[n].name), "%s",
		    as_jstr(g, "groupName") ? as_jstr(g, "groupName")
					    : "group");
		roles[n].replicas =
		    as_fw_int(g, "replicas", 0) * (hosts > 0 ? hosts : 1);
		roles[n].tmpl = json_object_get(g, "template");
		n++;
	}
	return n;
}

static void rc_reconcile(struct as_server *srv, const struct as_fw_ctl *c,
    const char *ns, const char *name)
{
	struct as_kind *k = as_fw_kind(srv, c);
	json_t *rc = k ? as_store_get(k, ns, name) : NULL, *upd;
	struct as_fw_role roles[AS_FW_MAX_ROLES] = {0};
	struct as_fw_tally t;
	enum as_fw_run run;
	bool suspended;
	int n, i;
	json_int_t workers = 0, ready_w = 0;
	char head[300];

	if (rc == NULL) {
		as_fw_forget(&rc_podjob, ns, name);
		return;
	}
	if (!as_fw_managed_here(rc, "spec.managedBy", RAY_MANAGER))
		return;
	suspended = json_is_true(as_jget(rc, "spec.suspend"));
	n = rc_roles(json_object_get(rc, "spec"), roles);
	run = as_fw_run_pods(srv, c, &rc_podjob, rc, roles, n, suspended, &t);
	rc = as_store_get(k, ns, name);
	if (rc == NULL)
		return;
	for (i = 1; i < n; i++) {
		workers += roles[i].replicas;
		ready_w += t.ready_r[i];
	}
	upd = json_deep_copy(rc);
	as_jset(upd, "status.desiredWorkerReplicas", json_integer(workers));
	as_jset(upd, "status.availableWorkerReplicas", json_integer(ready_w));
	as_jset(upd, "status.readyWorkerReplicas", json_integer(ready_w));
	as_jset(upd, "status.observedGeneration",
	    json_integer(as_fw_int(rc, "metadata.generation", 1)));
	if (suspended) {
		as_jset(upd, "status.state", json_string("suspended"));
		as_fw_cond(upd, "RayClusterSuspended", "True",
		    "RayClusterSuspended", "", false);
		as_fw_cond(upd, "HeadPodReady", "False", "HeadPodNotFound",
		    "Head Pod not found", false);
	} else {
		if (as_jget(upd, "status.conditions") != NULL)
			as_fw_cond(upd, "RayClusterSuspended", "False",
			    "RayClusterSuspended", "", false);
		if (t.ready_r[0] > 0)
			as_fw_cond(upd, "HeadPodReady", "True",
			    "HeadPodRunningAndReady", "", false);
		if (run == AS_FW_RUNNING) {
			as_jset(upd, "status.state", json_string("ready"));
			as_fw_cond(upd, "RayClusterProvisioned", "True",
			    "AllPodRunningAndReadyFirstTime",
			    "All Ray Pods are ready for the first time", false);
		} else if (as_jstr(upd, "status.state") != NULL &&
			   strcmp(as_jstr(upd, "status.state"), "suspended") ==
			       0) {
			json_object_del(
			    json_object_get(upd, "status"), "state");
		}
	}
	rc_pod_name(rc, &roles[0], 0, head, sizeof(head));
	as_jset(upd, "status.head.podName", json_string(head));
	as_internal_update(srv, k, upd, true, c->user);
}

const struct as_fw_ctl as_fw_rayclusters = {"ray.io", "v1", "rayclusters",
    "RayCluster", AS_SIM_RAY, RAY_USER, rc_reconcile};

/* ---- the RayCluster of a RayJob or RayService
 * -------------------------------- */

static json_t *cluster_of(struct as_server *srv, json_t *owner)
{
	struct as_kind *rk = as_fw_kind(srv, &as_fw_rayclusters);
	json_t *owned = as_fw_owned(rk, owner);
	json_t *rc = json_incref(json_array_get(owned, 0));

	json_decref(owned);
	return rc;
}

static void make_cluster(struct as_server *srv, const struct as_fw_ctl *c,
    json_t *owner, const char *infix, json_t *spec, bool suspend)
{
	struct as_kind *rk = as_fw_kind(srv, &as_fw_rayclusters);
	static const char alnum[] = "bcdfghjklmnpqrstvwxz2456789";
	char name[300], sfx[6];
	json_t *obj, *s;
	int j;

	if (rk == NULL || as_fw_pending(owner))
		return;
	for (j = 0; j < 5; j++)
		sfx[j] = alnum[as_rand(srv) % (sizeof(alnum) - 1)];
	sfx[5] = '\0';
	snprintf(name, sizeof(name), "%s-%s%s", as_jstr(owner, "metadata.name"),
	    infix, sfx);
	s = json_deep_copy(spec);
	if (!json_is_object(s))
		s = json_object();
	json_object_set_new(s, "suspend", json_boolean(suspend));
	obj = json_pack("{s:s, s:s, s:{s:s, s:s, s:o}, s:o}", "apiVersion",
	    "ray.io/v1", "kind", "RayCluster", "metadata", "name", name,
	    "namespace", as_jstr(owner, "metadata.namespace"),
	    "ownerReferences",
	    as_fw_controller_ref(owner, "ray.io/v1", c->kind), "spec", s);
	as_fw_create(srv, c, rk, obj, owner);
}

static bool cluster_ready(json_t *rc)
{
	const char *st = as_jstr(rc, "status.state");

	return st != NULL && strcmp(st, "ready") == 0;
}

/* ---- RayJob
 * -------------------------------------------------------------------- */

static void rj_finish(struct as_server *srv, const struct as_fw_ctl *c,
    json_t *upd, json_t *rc, bool ok)
{
	char now[CU_TIME_RFC3339_LEN];

	as_now_rfc3339(now);
	as_jset(
	    upd, "status.jobStatus", json_string(ok ? "SUCCEEDED" : "FAILED"));
	as_jset(upd, "status.jobDeploymentStatus",
	    json_string(ok ? "Complete" : "Failed"));
	as_jset(upd, "status.message",
	    json_string(
		ok ? "Job finished successfully." : "Job failed (simulated)."));
	as_jset(upd, "status.endTime", json_string(now));
	if (rc != NULL &&
	    json_is_true(as_jget(upd, "spec.shutdownAfterJobFinishes")))
		as_fw_delete(
		    srv, as_fw_kind(srv, &as_fw_rayclusters), rc, c->user);
	else if (rc != NULL)
		as_fw_stop_all(srv, rc, ok, c->user);
}

#define HEAD_TMPL "spec.rayClusterSpec.headGroupSpec.template"

/* K8sJobMode (the CRD's default) with the Job simulator: KubeRay's
 * submitter Job runs the job; else the runtime is timed here. */
static bool with_submitter(struct as_server *srv, json_t *rj)
{
	const char *mode = as_jstr(rj, "spec.submissionMode");

	return srv->sim_jobs &&
	       (mode == NULL || strcmp(mode, "K8sJobMode") == 0);
}

/* The submitter Job KubeRay makes: named after the RayJob, from
 * spec.submitterPodTemplate or its default (ray-job-submitter with the
 * head's image, 500m / 200Mi requested); the runtime annotations of the
 * RayJob go with it. */
static json_t *submitter_job(json_t *rj)
{
	json_t *tmpl = json_deep_copy(as_jget(rj, "spec.submitterPodTemplate"));
	json_t *ann = json_object(), *job;
	const char *keys[] = {"cueue.dev/sim-runtime-ms", "cueue.dev/sim-fail"};
	const char *img = as_jstr(
	    json_array_get(as_jget(rj, HEAD_TMPL ".spec.containers"), 0),
	    "image");
	size_t i;

	if (!json_is_object(tmpl))
		tmpl = json_pack("{s:{s:s, s:[{s:s, s:s, s:[s,s,s], s:{s:{s:s, "
				 "s:s}, s:{s:s, s:s}}}]}}",
		    "spec", "restartPolicy", "Never", "containers", "name",
		    "ray-job-submitter", "image", img ? img : "rayproject/ray",
		    "command", "ray", "job", "submit", "resources", "requests",
		    "cpu", "500m", "memory", "200Mi", "limits", "cpu", "1",
		    "memory", "1Gi");
	for (i = 0; i < 2; i++)
		if (as_fw_ann(rj, keys[i]) != NULL)
			json_object_set_new(
			    ann, keys[i], json_string(as_fw_ann(rj, keys[i])));
	job = json_pack("{s:s, s:s, s:{s:s, s:s, s:o, s:o}, s:{s:i, s:o}}",
	    "apiVersion", "batch/v1", "kind", "Job", "metadata", "name",
	    as_jstr(rj, "metadata.name"), "namespace",
	    as_jstr(rj, "metadata.namespace"), "annotations", ann,
	    "ownerReferences", as_fw_controller_ref(rj, "ray.io/v1", "RayJob"),
	    "spec", "backoffLimit", 2, "template", tmpl);
	return job;
}

/* The ready cluster runs the job: 1 done well, -1 failed, 0 running. */
static int rj_run(struct as_server *srv, const struct as_fw_ctl *c, json_t *rj,
    json_t *upd, const char *key)
{
	const char *ns = as_jstr(rj, "metadata.namespace");
	const char *name = as_jstr(rj, "metadata.name");
	json_t *due = json_object_get(job_due, key);
	char ts[CU_TIME_RFC3339_LEN];

	if (with_submitter(srv, rj)) {
		struct as_kind *jk = as_kind_find(srv, "batch", "v1", "jobs");
		json_t *owned = as_fw_owned(jk, rj);
		json_t *job = json_array_get(owned, 0);
		int out = job == NULL			     ? 0
			  : as_fw_cond_true(job, "Complete") ? 1
			  : as_fw_cond_true(job, "Failed")   ? -1
							     : 0;

		if (job == NULL && jk != NULL && !as_fw_pending(rj))
			as_fw_create(srv, c, jk, submitter_job(rj), rj);
		json_decref(owned);
		if (out != 0)
			return out;
	} else if (due == NULL) {
		int64_t at = as_fw_now_ms() +
			     as_fw_runtime(rj, as_jget(rj, HEAD_TMPL), 1000);

		json_object_set_new(job_due, key, json_integer(at));
		as_fw_wake(c, ns, name, at);
	} else if (json_integer_value(due) <= as_fw_now_ms()) {
		json_object_del(job_due, key);
		return as_fw_fails(rj, as_jget(rj, HEAD_TMPL)) ? -1 : 1;
	}
	as_now_rfc3339(ts);
	as_jset(upd, "status.jobDeploymentStatus", json_string("Running"));
	as_jset(upd, "status.jobStatus", json_string("RUNNING"));
	as_jset(upd, "status.jobId", json_string(name));
	if (as_jget(upd, "status.startTime") == NULL)
		as_jset(upd, "status.startTime", json_string(ts));
	return 0;
}

static void rj_reconcile(struct as_server *srv, const struct as_fw_ctl *c,
    const char *ns, const char *name)
{
	struct as_kind *k = as_fw_kind(srv, c);
	struct as_kind *jk = as_kind_find(srv, "batch", "v1", "jobs");
	json_t *rj = k ? as_store_get(k, ns, name) : NULL, *rc, *upd;
	const char *dep;
	char *key = cu_asprintf("%s/%s", ns, name);

	if (job_due == NULL)
		job_due = json_object();
	if (rj == NULL || key == NULL) {
		if (key != NULL)
			json_object_del(job_due, key);
		cu_free(key);
		return;
	}
	dep = as_jstr(rj, "status.jobDeploymentStatus");
	if (!as_fw_managed_here(rj, "spec.managedBy", RAY_MANAGER) ||
	    as_jget(rj, "spec.clusterSelector") != NULL ||
	    (dep != NULL &&
		(strcmp(dep, "Complete") == 0 || strcmp(dep, "Failed") == 0))) {
		cu_free(key);
		return;
	}
	rc = cluster_of(srv, rj);
	upd = json_deep_copy(rj);
	if (json_is_true(as_jget(rj, "spec.suspend"))) {
		json_object_del(job_due, key);
		if (rc != NULL)
			as_fw_delete(srv, as_fw_kind(srv, &as_fw_rayclusters),
			    rc, c->user);
		as_fw_delete_all(srv, jk, rj, c->user);
		as_jset(upd, "status.jobDeploymentStatus",
		    json_string("Suspended"));
		as_jset(upd, "status.jobStatus", json_string(""));
		json_object_del(
		    json_object_get(upd, "status"), "rayClusterName");
		json_object_del(
		    json_object_get(upd, "status"), "rayClusterStatus");
	} else if (rc == NULL) {
		make_cluster(
		    srv, c, rj, "", as_jget(rj, "spec.rayClusterSpec"), false);
		as_jset(upd, "status.jobDeploymentStatus",
		    json_string("Initializing"));
	} else {
		int done = 0;

		as_jset(upd, "status.rayClusterName",
		    json_string(as_jstr(rc, "metadata.name")));
		if (as_jget(rc, "status") != NULL)
			as_jset(upd, "status.rayClusterStatus",
			    json_deep_copy(as_jget(rc, "status")));
		if (!cluster_ready(rc)) {
			json_object_del(job_due, key);
			as_jset(upd, "status.jobDeploymentStatus",
			    json_string("Initializing"));
		} else {
			done = rj_run(srv, c, rj, upd, key);
		}
		if (done != 0)
			rj_finish(srv, c, upd, rc, done > 0);
	}
	json_decref(rc);
	cu_free(key);
	if (as_store_get(k, ns, name) != NULL)
		as_internal_update(srv, k, upd, true, c->user);
	else
		json_decref(upd);
}

const struct as_fw_ctl as_fw_rayjobs = {
    "ray.io", "v1", "rayjobs", "RayJob", AS_SIM_RAY, RAY_USER, rj_reconcile};

/* ---- RayService
 * ---------------------------------------------------------------- */

static void rs_reconcile(struct as_server *srv, const struct as_fw_ctl *c,
    const char *ns, const char *name)
{
	struct as_kind *k = as_fw_kind(srv, c);
	struct as_kind *rk = as_fw_kind(srv, &as_fw_rayclusters);
	json_t *svc = k ? as_store_get(k, ns, name) : NULL, *rc, *upd;
	bool suspend;

	if (svc == NULL || rk == NULL ||
	    !as_fw_managed_here(svc, "spec.managedBy", RAY_MANAGER))
		return;
	suspend = json_is_true(as_jget(svc, "spec.rayClusterConfig.suspend"));
	rc = cluster_of(srv, svc);
	if (rc == NULL) {
		make_cluster(srv, c, svc, "raycluster-",
		    as_jget(svc, "spec.rayClusterConfig"), suspend);
	} else if (json_is_true(as_jget(rc, "spec.suspend")) != suspend) {
		json_t *u = json_deep_copy(rc);
		json_t *spec =
		    json_deep_copy(as_jget(svc, "spec.rayClusterConfig"));

		/* resumed: the cluster takes the config as it is now (the
		 * templates a queueing controller edited while suspended) */
		if (!suspend && json_is_object(spec))
			json_object_set_new(u, "spec", spec);
		else
			json_decref(spec);
		as_jset(u, "spec.suspend", json_boolean(suspend));
		as_internal_update(srv, rk, u, false, c->user);
	}
	svc = as_store_get(k, ns, name);
	if (svc == NULL) {
		json_decref(rc);
		return;
	}
	upd = json_deep_copy(svc);
	if (rc != NULL && cluster_ready(rc) && !suspend) {
		as_fw_cond(upd, "Ready", "True", "NonZeroServeEndpoints",
		    "Number of serve endpoints is greater than 0", false);
		as_jset(upd, "status.serviceStatus", json_string("Running"));
	} else {
		as_fw_cond(upd, "Ready", "False", "ZeroServeEndpoints",
		    "Number of serve endpoints dropped to 0", false);
		json_object_del(
		    json_object_get(upd, "status"), "serviceStatus");
	}
	if (rc != NULL)
		as_jset(upd, "status.activeServiceStatus.rayClusterName",
		    json_string(as_jstr(rc, "metadata.name")));
	json_decref(rc);
	as_internal_update(srv, k, upd, true, c->user);
}

const struct as_fw_ctl as_fw_rayservices = {"ray.io", "v1", "rayservices",
    "RayService", AS_SIM_RAY, RAY_USER, rs_reconcile};

void as_raysim_free(void)
{
	json_decref(job_due);
	job_due = NULL;
}
