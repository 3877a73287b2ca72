/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/sim.c - built-in stand-ins for the Job and JobSet
 * controllers (--simulate jobs,jobsets), so that cueue can be tested end
 * to end without kube-controller-manager or the JobSet operator.
 *
 * Jobs (batch/v1):
 *   - unsuspended and not started: startTime = now, one Pod per active
 *     index (at most 64 Pod objects; status.active counts them all), all
 *     ready; condition Suspended flips to False if it was True;
 *   - suspended: its Pods are deleted, active/ready drop to 0 and
 *     condition Suspended=True (reason JobSuspended) is set;
 *   - running for the milliseconds in annotation cueue.dev/sim-runtime-ms
 *     (default 1000; the clock restarts on every resume): completes with
 *     conditions SuccessCriteriaMet and Complete, succeeded = completions;
 *     with annotation cueue.dev/sim-fail: "true" it fails instead
 *     (FailureTarget, Failed, reason BackoffLimitExceeded);
 *   - deleted: its Pods are deleted (the garbage collector's part).
 * JobSets (jobset.x-k8s.io/v1alpha2), as docs/jobset.md §1-2 describes:
 *   - child Jobs <jobset>-<replicatedJob>-<index> with a controller
 *     ownerReference and JobSet's labels/annotations on Job and template,
 *     created suspended iff the JobSet is;
 *   - spec.suspend true: unfinished children are suspended; condition
 *     Suspended=True (SuspendedJobs);
 *   - spec.suspend false: each suspended child gets startTime cleared (a
 *     status write), its pod template's labels, annotations and
 *     nodeSelector merged (new wins) and tolerations and schedulingGates
 *     unioned from the replicatedJob's current template, then suspend
 *     false; condition Suspended=False (ResumeJobs) if it existed;
 *   - status.replicatedJobsStatus, and Completed/Failed with
 *     terminalState once every child completed or one failed (message
 *     naming the first failed Job); a finished JobSet's active Jobs are
 *     deleted;
 *   - deleted: its child Jobs are deleted (garbage collection).
 * A Job whose spec.managedBy is neither unset nor
 * kubernetes.io/job-controller, and a JobSet whose spec.managedBy is
 * neither unset nor jobset.sigs.k8s.io/jobset-controller, is left alone
 * (no pods, no child Jobs, no status), as those controllers do.
 * With --simulate scheduler and at least one Node (sched.c), a Job's
 * Pods are created Pending, carrying the template's scheduling fields and
 * spec.priority resolved from priorityClassName; the scheduler stand-in
 * binds them and the kubelet stand-in starts them. status.active counts
 * the Job's unfinished Pods, status.ready its Ready ones; deleted Pods are
 * recreated; the runtime starts once every Pod is Ready (and restarts if
 * one stops being Ready), so a Job whose Pods cannot all run never
 * completes.
 * Simulator writes go through the store directly (user
 * system:serviceaccount:kube-system:job-controller or
 * jobset-controller), so they appear in watches and write counters but
 * not in the HTTP access log.
 *
 * --simulate provisioning: cluster-autoscaler's ProvisioningRequests
 * (provsim.c); pods and the framework controllers: fwkit.c.
 *
 * Changes are noticed synchronously (as_sim_notify) but handled on the
 * next tick, never inside the write that caused them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/apiserver/apiserver.h"

#define JOB_USER "system:serviceaccount:kube-system:job-controller"
#define JS_USER "system:serviceaccount:jobset-system:jobset-controller"
#define MAX_PODS 64
#define RUNTIME_ANN "cueue.dev/sim-runtime-ms"
#define FAIL_ANN "cueue.dev/sim-fail"
#define JOB_MANAGER "kubernetes.io/job-controller"
#define JS_MANAGER "jobset.sigs.k8s.io/jobset-controller"

static json_t *dirty_jobs;    /* "ns/name" -> true */
static json_t *dirty_jobsets; /* "ns/name" -> true */
static json_t *deadlines;     /* "ns/name" -> ms since epoch */
static json_t *sched_jobs;    /* "ns/name" -> true: Jobs whose Pods wait
			       * for the scheduler stand-in */

static int64_t now_ms(void)
{
	return cu_time_now_ns() / 1000000;
}

static struct as_kind *jobs_kind(struct as_server *srv)
{
	return as_kind_find(srv, "batch", "v1", "jobs");
}

static struct as_kind *pods_kind(struct as_server *srv)
{
	return as_kind_find(srv, "", "v1", "pods");
}

static struct as_kind *jobsets_kind(struct as_server *srv)
{
	return as_kind_find(srv, "jobset.x-k8s.io", "v1alpha2", "jobsets");
}

static char *key_of(json_t *obj)
{
	return cu_asprintf("%s/%s", as_jstr(obj, "metadata.namespace"),
	    as_jstr(obj, "metadata.name"));
}

static void mark(json_t *set, json_t *obj)
{
	char *k = key_of(obj);

	if (k != NULL)
		json_object_set_new(set, k, json_true());
	cu_free(k);
}

void as_sim_notify(
    struct as_server *srv, struct as_kind *k, json_t *obj, json_t *old)
{
	json_t *ref = obj ? obj : old;

	if (dirty_jobs == NULL || ref == NULL)
		return;
	as_fw_notify(srv, k, obj, old);
	as_provsim_notify(srv, k, ref);
	as_sched_notify(srv, k, obj, old);
	if (k->group[0] == '\0' && strcmp(k->plural, "pods") == 0 &&
	    json_object_size(sched_jobs) > 0) {
		/* A Pod of a Job that follows its Pods changed. */
		json_t *o =
		    json_array_get(as_jget(ref, "metadata.ownerReferences"), 0);
		char *key;

		if (o == NULL ||
		    !json_is_true(json_object_get(o, "controller")) ||
		    as_jstr(o, "kind") == NULL ||
		    strcmp(as_jstr(o, "kind"), "Job") != 0)
			return;
		key = cu_asprintf("%s/%s", as_jstr(ref, "metadata.namespace"),
		    as_jstr(o, "name"));
		if (key != NULL && json_object_get(sched_jobs, key) != NULL)
			json_object_set_new(dirty_jobs, key, json_true());
		cu_free(key);
		return;
	}
	if (srv->sim_jobs && strcmp(k->group, "batch") == 0 &&
	    strcmp(k->plural, "jobs") == 0) {
		mark(dirty_jobs, ref);
	}
	if (srv->sim_jobsets && strcmp(k->group, "batch") == 0 &&
	    strcmp(k->plural, "jobs") == 0) {
		/* A child changed: its JobSet recomputes status. */
		json_t *owners = as_jget(ref, "metadata.ownerReferences"), *o;
		size_t i;

		json_array_foreach(owners, i, o)
		{
			if (json_is_true(json_object_get(o, "controller")) &&
			    as_jstr(o, "kind") &&
			    strcmp(as_jstr(o, "kind"), "JobSet") == 0) {
				char *key = cu_asprintf("%s/%s",
				    as_jstr(ref, "metadata.namespace"),
				    as_jstr(o, "name"));

				if (key != NULL)
					json_object_set_new(
					    dirty_jobsets, key, json_true());
				cu_free(key);
			}
		}
	}
	if (srv->sim_jobsets && strcmp(k->group, "jobset.x-k8s.io") == 0 &&
	    strcmp(k->plural, "jobsets") == 0)
		mark(dirty_jobsets, ref);
}

/* ---- helpers ------------------------------------------------------ */

static bool condition_true(json_t *obj, const char *type)
{
	json_t *c = as_fw_cond_get(obj, type);

	return c != NULL && as_jstr(c, "status") != NULL &&
	       strcmp(as_jstr(c, "status"), "True") == 0;
}

/* Set a condition, keeping lastTransitionTime when the status is
 * unchanged. `job_style` adds lastProbeTime as the Job controller does. */
static void condition_set(json_t *obj, const char *type, const char *status,
    const char *reason, const char *message, bool job_style)
{
	char now[CU_TIME_RFC3339_LEN];

	as_fw_cond(obj, type, status, reason, message, false);
	as_now_rfc3339(now);
	if (job_style)
		json_object_set_new(as_fw_cond_get(obj, type), "lastProbeTime",
		    json_string(now));
}

/* Does spec.managedBy leave obj to its own controller `mine` (unset or
 * equal)? Kube's Job controller and the JobSet controller skip every
 * object that names another (KEP-4368). */
static bool managed_here(json_t *obj, const char *mine)
{
	const char *by = as_jstr(obj, "spec.managedBy");

	return by == NULL || strcmp(by, mine) == 0;
}

static json_int_t int_or(json_t *obj, const char *path, json_int_t dflt)
{
	json_t *v = as_jget(obj, path);

	return json_is_integer(v) ? json_integer_value(v) : dflt;
}

/* ---- Job controller ----------------------------------------------- */

/* Priority admission: spec.priority from the PriorityClass named in
 * spec.priorityClassName, or from the globalDefault class, else 0. */
void as_sim_resolve_priority(struct as_server *srv, json_t *spec)
{
	struct as_kind *pck =
	    as_kind_find(srv, "scheduling.k8s.io", "v1", "priorityclasses");
	const char *name = as_jstr(spec, "priorityClassName");
	json_t *pc = NULL;
	size_t i;

	if (json_is_integer(json_object_get(spec, "priority")))
		return;
	if (pck != NULL && name != NULL)
		pc = as_store_get(pck, "", name);
	for (i = 0;
	     pck != NULL && name == NULL && pc == NULL && i < pck->nitems;
	     i++) {
		if (json_is_true(as_jget(pck->items[i].obj, "globalDefault"))) {
			pc = pck->items[i].obj;
			json_object_set_new(spec, "priorityClassName",
			    json_string(pck->items[i].name));
		}
	}
	json_object_set_new(
	    spec, "priority", json_integer(int_or(pc, "value", 0)));
	if (json_object_get(spec, "preemptionPolicy") == NULL)
		json_object_set_new(spec, "preemptionPolicy",
		    json_string(as_jstr(pc, "preemptionPolicy")
				    ? as_jstr(pc, "preemptionPolicy")
				    : "PreemptLowerPriority"));
}

/* The Job's Pods, found by name prefix and controller-uid label
 * [owned array of borrowed-then-increfed pods]. */
static json_t *pods_of(struct as_server *srv, json_t *job)
{
	struct as_kind *pk = pods_kind(srv);
	const char *uid = as_jstr(job, "metadata.uid");
	const char *ns = as_jstr(job, "metadata.namespace");
	char *prefix = cu_asprintf("%s-", as_jstr(job, "metadata.name"));
	json_t *out = json_array();
	long at;
	size_t i, plen;

	if (pk == NULL || prefix == NULL || uid == NULL || ns == NULL) {
		cu_free(prefix);
		return out;
	}
	plen = strlen(prefix);
	at = as_store_find(pk, ns, prefix);
	for (i = at >= 0 ? (size_t)at : (size_t)(-at - 1); i < pk->nitems;
	     i++) {
		const char *puid;

		if (strcmp(pk->items[i].ns, ns) != 0 ||
		    strncmp(pk->items[i].name, prefix, plen) != 0)
			break;
		puid =
		    as_jstr(pk->items[i].obj, "metadata.labels.controller-uid");
		if (puid != NULL && strcmp(puid, uid) == 0)
			json_array_append(out, pk->items[i].obj);
	}
	cu_free(prefix);
	return out;
}

static void delete_pods_of(struct as_server *srv, json_t *job)
{
	struct as_kind *pk = pods_kind(srv);
	json_t *pods = pods_of(srv, job), *p;
	size_t i;

	json_array_foreach(pods, i, p)
	{
		as_internal_delete(srv, pk, as_jstr(p, "metadata.namespace"),
		    as_jstr(p, "metadata.name"), JOB_USER);
	}
	json_decref(pods);
}

static void create_pods(struct as_server *srv, json_t *job, json_int_t first,
    json_int_t n, bool sched)
{
	struct as_kind *pk = pods_kind(srv);
	const char *name = as_jstr(job, "metadata.name");
	json_int_t i;

	for (i = first; pk != NULL && i < first + n && i < MAX_PODS; i++) {
		json_t *tmpl = as_jget(job, "spec.template");
		json_t *pod = json_object(), *md, *labels, *spec;
		char *pname = cu_asprintf("%s-%lld-%05llx", name, (long long)i,
		    (unsigned long long)(as_rand(srv) & 0xFFFFF));

		md = json_deep_copy(json_object_get(tmpl, "metadata"));
		if (!json_is_object(md))
			md = json_object();
		labels = json_object_get(md, "labels");
		if (!json_is_object(labels)) {
			labels = json_object();
			json_object_set_new(md, "labels", labels);
		}
		json_object_set_new(labels, "job-name", json_string(name));
		json_object_set_new(
		    labels, "batch.kubernetes.io/job-name", json_string(name));
		json_object_set_new(labels, "controller-uid",
		    json_string(as_jstr(job, "metadata.uid")));
		json_object_set_new(labels,
		    "batch.kubernetes.io/controller-uid",
		    json_string(as_jstr(job, "metadata.uid")));
		json_object_set_new(md, "name", json_string(pname));
		json_object_set_new(md, "namespace",
		    json_string(as_jstr(job, "metadata.namespace")));
		json_object_set_new(md, "ownerReferences",
		    as_fw_controller_ref(job, "batch/v1", "Job"));
		json_object_set_new(pod, "apiVersion", json_string("v1"));
		json_object_set_new(pod, "kind", json_string("Pod"));
		json_object_set_new(pod, "metadata", md);
		if (sched) {
			spec = json_deep_copy(json_object_get(tmpl, "spec"));
			if (!json_is_object(spec))
				spec = json_object();
			as_sim_resolve_priority(srv, spec);
			if (json_object_get(spec, "schedulerName") == NULL)
				json_object_set_new(spec, "schedulerName",
				    json_string("default-scheduler"));
			json_object_set_new(pod, "spec", spec);
		} else {
			json_object_set(pod, "spec",
			    json_object_get(tmpl, "spec")
				? json_object_get(tmpl, "spec")
				: json_object());
		}
		cu_free(pname);
		as_internal_create(srv, pk, pod, JOB_USER);
		/* stamp_new dropped the status; set it as the API server
		 * (Pending) or, without the scheduler, a kubelet would. */
		{
			json_t *stored =
			    as_store_get(pk, as_jstr(job, "metadata.namespace"),
				json_string_value(json_object_get(md, "name")));

			if (stored != NULL) {
				json_t *upd = json_deep_copy(stored);

				if (sched)
					as_jset(upd, "status",
					    json_pack(
						"{s:s}", "phase", "Pending"));
				else
					as_jset(upd, "status",
					    json_pack("{s:s, s:[{s:s, s:s}]}",
						"phase", "Running",
						"conditions", "type", "Ready",
						"status", "True"));
				as_internal_update(
				    srv, pk, upd, true, JOB_USER);
			}
		}
	}
}

static void set_pods_phase(
    struct as_server *srv, json_t *job, const char *phase)
{
	struct as_kind *pk = pods_kind(srv);
	json_t *todo = pods_of(srv, job), *p;
	size_t i;

	json_array_foreach(todo, i, p)
	{
		json_t *upd = json_deep_copy(p), *cs, *c;
		bool ok = strcmp(phase, "Succeeded") == 0;
		size_t j;

		as_jset(upd, "status.phase", json_string(phase));
		cs = as_jget(upd, "status.containerStatuses");
		if (!json_is_array(cs)) {
			as_jset(upd, "status.conditions",
			    json_pack("[{s:s, s:s}]", "type", "Ready", "status",
				"False"));
			as_internal_update(srv, pk, upd, true, JOB_USER);
			continue;
		}
		/* Started by the kubelet stand-in: its containers exit. */
		json_array_foreach(cs, j, c)
		{
			json_object_set_new(c, "ready", json_false());
			json_object_set_new(c, "started", json_false());
			json_object_set_new(c, "state",
			    json_pack("{s:{s:i, s:s}}", "terminated",
				"exitCode", ok ? 0 : 1, "reason",
				ok ? "Completed" : "Error"));
		}
		condition_set(upd, "Ready", "False", "PodCompleted", "", false);
		condition_set(
		    upd, "ContainersReady", "False", "PodCompleted", "", false);
		as_internal_update(srv, pk, upd, true, JOB_USER);
	}
	json_decref(todo);
}

static long long runtime_of(json_t *job)
{
	/* The annotation key has dots: look it up directly. */
	json_t *anns = as_jget(job, "metadata.annotations");
	const char *v = json_string_value(json_object_get(anns, RUNTIME_ANN));
	long long runtime = v ? strtoll(v, NULL, 10) : 1000;

	return runtime < 0 ? 0 : runtime;
}

/* A Job whose Pods go through the scheduler stand-in: create missing
 * Pods, count active and ready ones into upd [consumed when false is
 * returned], start the runtime once all are Ready. true: the runtime has
 * elapsed with every Pod Ready, finish (upd kept). */
static bool sched_job_step(struct as_server *srv, json_t *job, json_t *upd,
    const char *key, json_int_t want)
{
	struct as_kind *jk = jobs_kind(srv);
	json_int_t want_pods = want < MAX_PODS ? want : MAX_PODS;
	json_int_t live = 0, ready = 0, extra = want - want_pods;
	json_t *pods, *p, *dl;
	char now[CU_TIME_RFC3339_LEN];
	size_t i;

	as_now_rfc3339(now);
	if (json_object_get(sched_jobs, key) == NULL) {
		json_object_set_new(sched_jobs, key, json_true());
		if (as_jget(job, "status.startTime") == NULL)
			as_jset(upd, "status.startTime", json_string(now));
		if (as_fw_cond_get(job, "Suspended") != NULL)
			condition_set(upd, "Suspended", "False", "JobResumed",
			    "Job resumed", true);
	}
	pods = pods_of(srv, job);
	json_array_foreach(pods, i, p)
	{
		const char *ph = as_jstr(p, "status.phase");

		if (as_jget(p, "metadata.deletionTimestamp") != NULL ||
		    (ph != NULL && (strcmp(ph, "Succeeded") == 0 ||
				       strcmp(ph, "Failed") == 0)))
			continue;
		live++;
		if (condition_true(p, "Ready"))
			ready++;
	}
	json_decref(pods);
	if (live < want_pods) {
		create_pods(srv, job, live, want_pods - live, true);
		live = want_pods;
	}
	dl = json_object_get(deadlines, key);
	if (ready >= want_pods) {
		if (dl == NULL)
			json_object_set_new(deadlines, key,
			    json_integer(now_ms() + runtime_of(job)));
		else if (json_integer_value(dl) <= now_ms())
			return true;
		ready += extra;
	} else {
		json_object_del(deadlines, key);
	}
	as_jset(upd, "status.active", json_integer(live + extra));
	as_jset(upd, "status.ready", json_integer(ready));
	as_internal_update(srv, jk, upd, true, JOB_USER);
	return false;
}

static void reconcile_job(struct as_server *srv, const char *key)
{
	struct as_kind *jk = jobs_kind(srv);
	char ns[254], name[254];
	const char *slash = strchr(key, '/');
	json_t *job, *upd;
	json_int_t par, comp, active;
	char now[CU_TIME_RFC3339_LEN];

	if (jk == NULL || slash == NULL)
		return;
	snprintf(ns, sizeof(ns), "%.*s", (int)(slash - key), key);
	snprintf(name, sizeof(name), "%s", slash + 1);
	job = as_store_get(jk, ns, name);
	if (job == NULL) {
		json_object_del(deadlines, key);
		json_object_del(sched_jobs, key);
		return; /* deleted: pods were cleaned at deletion */
	}
	if (condition_true(job, "Complete") || condition_true(job, "Failed") ||
	    !managed_here(job, JOB_MANAGER)) {
		json_object_del(deadlines, key);
		json_object_del(sched_jobs, key);
		return;
	}
	as_now_rfc3339(now);
	par = int_or(job, "spec.parallelism", 1);
	comp = int_or(job, "spec.completions", par);
	active = par < comp ? par : comp;
	upd = json_deep_copy(job);
	if (json_is_true(as_jget(job, "spec.suspend"))) {
		json_object_del(deadlines, key);
		json_object_del(sched_jobs, key);
		if (int_or(job, "status.active", 0) > 0 ||
		    !condition_true(job, "Suspended")) {
			delete_pods_of(srv, job);
			as_jset(upd, "status.active", json_integer(0));
			as_jset(upd, "status.ready", json_integer(0));
			condition_set(upd, "Suspended", "True", "JobSuspended",
			    "Job suspended", true);
			as_internal_update(srv, jk, upd, true, JOB_USER);
			return;
		}
		json_decref(upd);
		return;
	}
	if (json_object_get(sched_jobs, key) != NULL ||
	    (json_object_get(deadlines, key) == NULL && as_sched_active(srv))) {
		if (!sched_job_step(srv, job, upd, key, active))
			return;
	} else if (json_object_get(deadlines, key) == NULL) {
		/* Starting (or resuming). */
		json_object_set_new(
		    deadlines, key, json_integer(now_ms() + runtime_of(job)));
		if (as_jget(job, "status.startTime") == NULL)
			as_jset(upd, "status.startTime", json_string(now));
		as_jset(upd, "status.active", json_integer(active));
		as_jset(upd, "status.ready", json_integer(active));
		if (as_fw_cond_get(job, "Suspended") != NULL)
			condition_set(upd, "Suspended", "False", "JobResumed",
			    "Job resumed", true);
		if (int_or(job, "status.active", 0) == 0)
			create_pods(srv, job, 0, active, false);
		as_internal_update(srv, jk, upd, true, JOB_USER);
		return;
	} else if (json_integer_value(json_object_get(deadlines, key)) >
		   now_ms()) {
		json_decref(upd);
		return;
	}
	/* Runtime elapsed: finish. */
	json_object_del(deadlines, key);
	json_object_del(sched_jobs, key);
	{
		json_t *anns = as_jget(job, "metadata.annotations");
		const char *fail =
		    json_string_value(json_object_get(anns, FAIL_ANN));
		bool failed = fail != NULL && strcmp(fail, "true") == 0;

		set_pods_phase(srv, job, failed ? "Failed" : "Succeeded");
		as_jset(upd, "status.active", json_integer(0));
		as_jset(upd, "status.ready", json_integer(0));
		if (failed) {
			as_jset(upd, "status.failed", json_integer(active));
			condition_set(upd, "FailureTarget", "True",
			    "BackoffLimitExceeded",
			    "Job has reached the specified backoff limit",
			    true);
			condition_set(upd, "Failed", "True",
			    "BackoffLimitExceeded",
			    "Job has reached the specified backoff limit",
			    true);
		} else {
			as_jset(upd, "status.succeeded", json_integer(comp));
			as_jset(upd, "status.completionTime", json_string(now));
			condition_set(upd, "SuccessCriteriaMet", "True",
			    "CompletionsReached",
			    "Reached expected number of succeeded pods", true);
			condition_set(upd, "Complete", "True",
			    "CompletionsReached",
			    "Reached expected number of succeeded pods", true);
		}
		as_internal_update(srv, jk, upd, true, JOB_USER);
	}
}

/* ---- JobSet controller -------------------------------------------- */

static void set_label_ann(json_t *md, const char *k, const char *v)
{
	json_t *l = json_object_get(md, "labels"), *a;

	if (!json_is_object(l)) {
		l = json_object();
		json_object_set_new(md, "labels", l);
	}
	a = json_object_get(md, "annotations");
	if (!json_is_object(a)) {
		a = json_object();
		json_object_set_new(md, "annotations", a);
	}
	json_object_set_new(l, k, json_string(v));
	json_object_set_new(a, k, json_string(v));
}

static json_t *child_job(json_t *js, json_t *rj, int idx, long long global,
    long long global_replicas)
{
	const char *jsname = as_jstr(js, "metadata.name");
	const char *ns = as_jstr(js, "metadata.namespace");
	const char *rjname = as_jstr(rj, "name");
	json_t *tmpl = json_object_get(rj, "template");
	json_t *job = json_object(), *md, *spec, *pmd;
	char buf[64], name[512], hash[41];
	const char *group = as_jstr(rj, "groupName");

	snprintf(name, sizeof(name), "%s-%s-%d", jsname, rjname, idx);
	md = json_deep_copy(json_object_get(tmpl, "metadata"));
	if (!json_is_object(md))
		md = json_object();
	spec = json_deep_copy(json_object_get(tmpl, "spec"));
	if (!json_is_object(spec))
		spec = json_object();
	pmd = as_jget(spec, "template.metadata");
	if (!json_is_object(pmd)) {
		as_jset(spec, "template.metadata", json_object());
		pmd = as_jget(spec, "template.metadata");
	}
	{
		char *keyin = cu_asprintf("%s/%s", ns, name);

		as_fw_sha1_hex(keyin ? keyin : "", hash);
		cu_free(keyin);
	}
	{
		json_t *targets[2] = {md, pmd};
		int t;

		for (t = 0; t < 2; t++) {
			set_label_ann(targets[t],
			    "jobset.sigs.k8s.io/jobset-name", jsname);
			set_label_ann(targets[t],
			    "jobset.sigs.k8s.io/jobset-uid",
			    as_jstr(js, "metadata.uid"));
			set_label_ann(targets[t],
			    "jobset.sigs.k8s.io/replicatedjob-name", rjname);
			snprintf(buf, sizeof(buf), "%lld",
			    (long long)int_or(js, "status.restarts", 0));
			set_label_ann(targets[t],
			    "jobset.sigs.k8s.io/restart-attempt", buf);
			snprintf(buf, sizeof(buf), "%lld",
			    (long long)int_or(rj, "replicas", 1));
			set_label_ann(targets[t],
			    "jobset.sigs.k8s.io/replicatedjob-replicas", buf);
			snprintf(buf, sizeof(buf), "%lld", global_replicas);
			set_label_ann(targets[t],
			    "jobset.sigs.k8s.io/global-replicas", buf);
			snprintf(buf, sizeof(buf), "%d", idx);
			set_label_ann(
			    targets[t], "jobset.sigs.k8s.io/job-index", buf);
			set_label_ann(
			    targets[t], "jobset.sigs.k8s.io/job-key", hash);
			snprintf(buf, sizeof(buf), "%lld", global);
			set_label_ann(targets[t],
			    "jobset.sigs.k8s.io/job-global-index", buf);
			set_label_ann(targets[t],
			    "jobset.sigs.k8s.io/group-name",
			    group ? group : "default");
		}
	}
	json_object_set_new(md, "name", json_string(name));
	json_object_set_new(md, "namespace", json_string(ns));
	json_object_set_new(md, "ownerReferences",
	    as_fw_controller_ref(js, "jobset.x-k8s.io/v1alpha2", "JobSet"));
	json_object_set_new(spec, "suspend",
	    json_boolean(json_is_true(as_jget(js, "spec.suspend"))));
	json_object_set_new(job, "apiVersion", json_string("batch/v1"));
	json_object_set_new(job, "kind", json_string("Job"));
	json_object_set_new(job, "metadata", md);
	json_object_set_new(job, "spec", spec);
	return job;
}

static void reconcile_jobset(struct as_server *srv, const char *key)
{
	struct as_kind *jsk = jobsets_kind(srv), *jk = jobs_kind(srv);
	const char *slash = strchr(key, '/');
	char ns[254], name[254];
	json_t *js, *rjs, *rj, *rjstatus, *upd;
	size_t i;
	long long global = 0, global_replicas = 0, total = 0, completed = 0,
		  failed = 0;
	bool suspend;
	char first_failed[512] = "";

	if (jsk == NULL || jk == NULL || slash == NULL)
		return;
	snprintf(ns, sizeof(ns), "%.*s", (int)(slash - key), key);
	snprintf(name, sizeof(name), "%s", slash + 1);
	js = as_store_get(jsk, ns, name);
	if (js == NULL) {
		/* Garbage-collect the children of a deleted JobSet. */
		json_t *victims = json_array(), *v;

		for (i = 0; i < jk->nitems; i++) {
			json_t *o =
			    json_array_get(as_jget(jk->items[i].obj,
					       "metadata.ownerReferences"),
				0);

			if (strcmp(jk->items[i].ns, ns) == 0 && o != NULL &&
			    as_jstr(o, "kind") &&
			    strcmp(as_jstr(o, "kind"), "JobSet") == 0 &&
			    strcmp(as_jstr(o, "name"), name) == 0)
				json_array_append(victims, jk->items[i].obj);
		}
		json_array_foreach(victims, i, v)
		{
			delete_pods_of(srv, v);
			as_internal_delete(
			    srv, jk, ns, as_jstr(v, "metadata.name"), JS_USER);
		}
		json_decref(victims);
		return;
	}
	if (!managed_here(js, JS_MANAGER))
		return;
	if (as_jstr(js, "status.terminalState") != NULL) {
		/* A finished JobSet deletes its active Jobs. */
		json_t *kids = as_fw_owned(jk, js), *v;

		json_array_foreach(kids, i, v)
		{
			if (condition_true(v, "Complete") ||
			    condition_true(v, "Failed"))
				continue;
			delete_pods_of(srv, v);
			as_internal_delete(
			    srv, jk, ns, as_jstr(v, "metadata.name"), JS_USER);
		}
		json_decref(kids);
		return;
	}
	suspend = json_is_true(as_jget(js, "spec.suspend"));
	rjs = as_jget(js, "spec.replicatedJobs");
	json_array_foreach(rjs, i, rj)
	{
		global_replicas += int_or(rj, "replicas", 1);
	}
	rjstatus = json_array();
	json_array_foreach(rjs, i, rj)
	{
		int idx, replicas = (int)int_or(rj, "replicas", 1);
		long long ready = 0, succ = 0, fail = 0, act = 0, susp = 0;
		const char *rjname = as_jstr(rj, "name");

		for (idx = 0; rjname != NULL && idx < replicas;
		     idx++, global++) {
			char cname[512];
			json_t *child;

			snprintf(cname, sizeof(cname), "%s-%s-%d", name, rjname,
			    idx);
			child = as_store_get(jk, ns, cname);
			total++;
			if (child == NULL) {
				as_internal_create(srv, jk,
				    child_job(
					js, rj, idx, global, global_replicas),
				    JS_USER);
				continue;
			}
			if (condition_true(child, "Complete")) {
				succ++;
				completed++;
				continue;
			}
			if (condition_true(child, "Failed")) {
				if (failed == 0)
					snprintf(first_failed,
					    sizeof(first_failed), "%s", cname);
				fail++;
				failed++;
				continue;
			}
			if (int_or(child, "status.active", 0) > 0)
				act++;
			{
				/* JobSet counts a Job ready when all its
				 * pods are ready or succeeded. */
				json_int_t pc = int_or(
					       child, "spec.parallelism", 1),
					   cc = int_or(
					       child, "spec.completions", pc);

				if (int_or(child, "status.ready", 0) +
					int_or(child, "status.succeeded", 0) >=
				    (cc < pc ? cc : pc))
					ready++;
			}
			if (json_is_true(as_jget(child, "spec.suspend")))
				susp++;
			if (suspend &&
			    !json_is_true(as_jget(child, "spec.suspend"))) {
				json_t *u = json_deep_copy(child);

				as_jset(u, "spec.suspend", json_true());
				as_internal_update(srv, jk, u, false, JS_USER);
			} else if (!suspend && json_is_true(as_jget(
						   child, "spec.suspend"))) {
				json_t *u = json_deep_copy(child);
				json_t *src =
				    as_jget(rj, "template.spec.template");

				if (as_jget(u, "status.startTime") != NULL) {
					json_t *s = json_deep_copy(child);

					json_object_del(
					    json_object_get(s, "status"),
					    "startTime");
					as_internal_update(
					    srv, jk, s, true, JS_USER);
					json_object_del(
					    json_object_get(u, "status"),
					    "startTime");
				}
				as_fw_merge_template(
				    as_jget(u, "spec.template"), src);
				as_jset(u, "spec.suspend", json_false());
				as_internal_update(srv, jk, u, false, JS_USER);
			}
		}
		json_array_append_new(rjstatus,
		    json_pack("{s:s, s:I, s:I, s:I, s:I, s:I}", "name",
			rjname ? rjname : "", "ready", (json_int_t)ready,
			"succeeded", (json_int_t)succ, "failed",
			(json_int_t)fail, "active", (json_int_t)act,
			"suspended", (json_int_t)susp));
	}
	js = as_store_get(jsk, ns, name);
	if (js == NULL) {
		json_decref(rjstatus);
		return;
	}
	upd = json_deep_copy(js);
	as_jset(upd, "status.replicatedJobsStatus", rjstatus);
	if (failed > 0) {
		char msg[700];

		snprintf(msg, sizeof(msg),
		    "jobset failed due to one or more job failures (first "
		    "failed job: %s)",
		    first_failed);
		condition_set(upd, "Failed", "True", "FailedJobs", msg, false);
		as_jset(upd, "status.terminalState", json_string("Failed"));
	} else if (total > 0 && completed == total) {
		condition_set(upd, "Completed", "True", "AllJobsCompleted",
		    "jobset completed successfully", false);
		as_jset(upd, "status.terminalState", json_string("Completed"));
	} else if (suspend) {
		condition_set(upd, "Suspended", "True", "SuspendedJobs",
		    "jobset is suspended", false);
	} else if (as_fw_cond_get(js, "Suspended") != NULL) {
		/* JobSet only writes False over an existing condition. */
		condition_set(upd, "Suspended", "False", "ResumeJobs",
		    "jobset is resumed", false);
	}
	as_internal_update(srv, jsk, upd, true, JS_USER);
}

/* ---- the tick ------------------------------------------------------ */

static void on_tick(struct ev_loop *loop, ev_timer *t, int revents)
{
	struct as_server *srv = t->data;
	const char *key;
	json_t *v, *batch;
	void *tmp;
	int64_t now = now_ms();
	int rounds;

	(void)loop;
	(void)revents;
	/* Due completions become dirty. */
	json_object_foreach(deadlines, key, v)
	{
		if (json_integer_value(v) <= now)
			json_object_set_new(dirty_jobs, key, json_true());
	}
	/* A few rounds so that a chain (JobSet -> Job -> Pod -> scheduler
	 * -> kubelet -> status) settles within one tick. */
	as_provsim_tick(srv);
	as_sched_tick(srv);
	for (rounds = 0; rounds < 6; rounds++) {
		bool fw = as_fw_tick(srv);

		if (!fw && json_object_size(dirty_jobsets) == 0 &&
		    json_object_size(dirty_jobs) == 0 && !as_sched_busy(srv))
			break;
		batch = dirty_jobsets;
		dirty_jobsets = json_object();
		json_object_foreach_safe(batch, tmp, key, v)
		{
			reconcile_jobset(srv, key);
		}
		json_decref(batch);
		batch = dirty_jobs;
		dirty_jobs = json_object();
		json_object_foreach_safe(batch, tmp, key, v)
		{
			reconcile_job(srv, key);
		}
		json_decref(batch);
		as_sched_tick(srv);
	}
}

static void ensure_jobset_crd(struct as_server *srv)
{
	struct as_kind *crds = as_kind_find(
	    srv, "apiextensions.k8s.io", "v1", "customresourcedefinitions");
	json_t *crd;
	cu_error err;

	if (crds == NULL || jobsets_kind(srv) != NULL)
		return;
	/* Installing the JobSet operator installs its CRD; the simulator
	 * does the same (a schema that keeps spec and status whole). */
	crd = json_pack(
	    "{s:s, s:s, s:{s:s}, s:{s:s, s:s, s:{s:s, s:s, s:s, s:s}, "
	    "s:[{s:s, s:b, s:b, s:{s:{}}, s:{s:{s:s, s:{s:{s:s, s:b}, "
	    "s:{s:s, s:b}}}}}]}}",
	    "apiVersion", "apiextensions.k8s.io/v1", "kind",
	    "CustomResourceDefinition", "metadata", "name",
	    "jobsets.jobset.x-k8s.io", "spec", "group", "jobset.x-k8s.io",
	    "scope", "Namespaced", "names", "kind", "JobSet", "listKind",
	    "JobSetList", "plural", "jobsets", "singular", "jobset", "versions",
	    "name", "v1alpha2", "served", 1, "storage", 1, "subresources",
	    "status", "schema", "openAPIV3Schema", "type", "object",
	    "properties", "spec", "type", "object",
	    "x-kubernetes-preserve-unknown-fields", 1, "status", "type",
	    "object", "x-kubernetes-preserve-unknown-fields", 1);
	if (crd == NULL || as_crd_prepare(crd, &err) != CU_OK ||
	    as_crd_register(srv, crd, &err) != CU_OK ||
	    as_internal_create(srv, crds, json_incref(crd), JS_USER) != CU_OK)
		cu_warn("jobset simulator: cannot install the JobSet CRD");
	json_decref(crd);
}

void as_sim_start(struct as_server *srv)
{
	if (!srv->sim_jobs && !srv->sim_jobsets && !srv->sim_sched &&
	    !srv->sim_prov && srv->sim_fw == 0)
		return;
	dirty_jobs = json_object();
	dirty_jobsets = json_object();
	deadlines = json_object();
	sched_jobs = json_object();
	as_sched_start(srv);
	as_provsim_start(srv);
	if (srv->sim_jobsets)
		ensure_jobset_crd(srv);
	as_fw_start(srv);
	ev_timer_init(&srv->sim_timer, on_tick, srv->sim_tick_ms / 1000.0,
	    srv->sim_tick_ms / 1000.0);
	srv->sim_timer.data = srv;
	ev_timer_start(srv->loop, &srv->sim_timer);
}

void as_sim_stop(struct as_server *srv);
void as_sim_stop(struct as_server *srv)
{
	ev_timer_stop(srv->loop, &srv->sim_timer);
	json_decref(dirty_jobs);
	json_decref(dirty_jobsets);
	json_decref(deadlines);
	json_decref(sched_jobs);
	dirty_jobs = dirty_jobsets = deadlines = sched_jobs = NULL;
	as_fw_stop(srv);
	as_sched_stop(srv);
	as_provsim_stop();
}

void as_sim_job_selector(struct as_server *srv, json_t *job)
{
	json_t *spec = json_object_get(job, "spec"), *md, *labels;
	const char *uid = as_jstr(job, "metadata.uid");
	const char *name = as_jstr(job, "metadata.name");

	if (!srv->sim_jobs || !json_is_object(spec) || uid == NULL ||
	    name == NULL ||
	    json_is_true(json_object_get(spec, "manualSelector")))
		return;
	md = as_jget(spec, "template.metadata");
	if (!json_is_object(md)) {
		if (!json_is_object(json_object_get(spec, "template")))
			json_object_set_new(spec, "template", json_object());
		md = json_object();
		json_object_set_new(
		    json_object_get(spec, "template"), "metadata", md);
	}
	labels = json_object_get(md, "labels");
	if (!json_is_object(labels)) {
		labels = json_object();
		json_object_set_new(md, "labels", labels);
	}
	json_object_set_new(
	    labels, "batch.kubernetes.io/controller-uid", json_string(uid));
	json_object_set_new(
	    labels, "batch.kubernetes.io/job-name", json_string(name));
	json_object_set_new(labels, "controller-uid", json_string(uid));
	json_object_set_new(labels, "job-name", json_string(name));
	if (json_object_get(spec, "selector") == NULL)
		json_object_set_new(spec, "selector",
		    json_pack("{s:{s:s}}", "matchLabels",
			"batch.kubernetes.io/controller-uid", uid));
}
