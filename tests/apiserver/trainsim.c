/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/trainsim.c - stand-ins for Kubeflow's training-operator
 * (--simulate kubeflow: PyTorchJob, TFJob, XGBoostJob, PaddleJob, JAXJob
 * of kubeflow.org/v1), the MPI operator (--simulate mpijobs: MPIJob
 * v2beta1) and Kubeflow Trainer (--simulate trainjobs: TrainJob
 * trainer.kubeflow.org/v1alpha1, through its JobSet); docs/apiserver.md
 * §15.4-15.6.
 *
 * Kubeflow jobs and MPIJobs: each present replica type (in the kind's
 * order) gets replicas (default 1) Pods <job>-<type>-<index>, labelled
 * training.kubeflow.org/{job-name,operator-name,replica-type,
 * replica-index,job-role}. An MPIJob's launcher is, with --simulate jobs,
 * mpi-operator's batch/v1 Job <job>-launcher (created at start, suspended
 * and resumed with the MPIJob; its completion ends the MPIJob), else a
 * Pod <job>-launcher created once every worker is Ready.
 * spec.runPolicy.suspend deletes the Pods; the runtime (rolesim.c) ends
 * with every Pod stopped; conditions Created, Running, Suspended,
 * Succeeded, Failed with the operators' reasons (<Kind>Created, ...) and
 * status.replicaStatuses.<Type>.{active,succeeded,failed}. An object whose
 * spec.runPolicy.managedBy names another controller is left alone.
 *
 * TrainJob: the JobSet <trainjob> rendered from the referenced
 * (Cluster)TrainingRuntime's spec.template (the replicated job labelled
 * trainer.kubeflow.org/trainjob-ancestor-step: trainer, or named "node",
 * gets spec.trainer.numNodes (else spec.mlPolicy.numNodes) Pods and the
 * trainer's image, command, args and resourcesPerNode), with every
 * spec.runtimePatches entry's replicated-job pod metadata, nodeSelector,
 * tolerations and schedulingGates applied; spec.suspend is passed to the
 * JobSet (templates re-rendered on resume); status.jobsStatus and the
 * Complete / Failed conditions follow the JobSet.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "tests/apiserver/apiserver.h"

#define KF_USER "system:serviceaccount:kubeflow:training-operator"
#define MPI_USER "system:serviceaccount:mpi-operator:mpi-operator"
#define TRAINER_USER                                                           \
	"system:serviceaccount:kubeflow-system:kubeflow-trainer-controller-"   \
	"manager"

/* A Kubeflow kind: its replica map and the types in Kueue's order. */
struct kf_kind {
	const char *kind, *specs, *operator_name, *manager;
	const char *types[6];
	const struct as_fw_ctl *ctl;
	const char *user, *api_version;
};

static const struct kf_kind kinds[] = {
    {"PyTorchJob", "pytorchReplicaSpecs", "pytorchjob-controller",
	"kubeflow.org/training-operator", {"Master", "Worker", NULL},
	&as_fw_pytorchjobs, KF_USER, "kubeflow.org/v1"},
    {"TFJob", "tfReplicaSpecs", "tfjob-controller",
	"kubeflow.org/training-operator",
	{"Chief", "Master", "PS", "Worker", "Evaluator", NULL}, &as_fw_tfjobs,
	KF_USER, "kubeflow.org/v1"},
    {"XGBoostJob", "xgbReplicaSpecs", "xgboostjob-controller",
	"kubeflow.org/training-operator", {"Master", "Worker", NULL},
	&as_fw_xgboostjobs, KF_USER, "kubeflow.org/v1"},
    {"PaddleJob", "paddleReplicaSpecs", "paddlejob-controller",
	"kubeflow.org/training-operator", {"Master", "Worker", NULL},
	&as_fw_paddlejobs, KF_USER, "kubeflow.org/v1"},
    {"JAXJob", "jaxReplicaSpecs", "jaxjob-controller",
	"kubeflow.org/training-operator", {"Worker", NULL}, &as_fw_jaxjobs,
	KF_USER, "kubeflow.org/v1"},
    {"MPIJob", "mpiReplicaSpecs", "mpi-operator", "kubeflow.org/mpi-operator",
	{"Launcher", "Worker", NULL}, &as_fw_mpijobs, MPI_USER,
	"kubeflow.org/v2beta1"},
};

static const struct kf_kind *kf_of(const char *kind)
{
	size_t i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(kinds[i].kind, kind) == 0)
			return &kinds[i];
	return NULL;
}

static void lower(const char *s, char *out, size_t n)
{
	size_t i;

	for (i = 0; s[i] != '\0' && i + 1 < n; i++)
		out[i] = (char)tolower((unsigned char)s[i]);
	out[i] = '\0';
}

static void kf_pod_name(
    json_t *obj, const struct as_fw_role *r, int idx, char *buf, size_t n)
{
	char t[64];

	lower(r->name, t, sizeof(t));
	if (strcmp(r->name, "Launcher") == 0)
		snprintf(buf, n, "%s-launcher", as_jstr(obj, "metadata.name"));
	else
		snprintf(
		    buf, n, "%s-%s-%d", as_jstr(obj, "metadata.name"), t, idx);
}

static void put_label(json_t *pod, const char *k, const char *v)
{
	json_object_set_new(as_jget(pod, "metadata.labels"), k, json_string(v));
}

static void kf_decorate(
    json_t *obj, const struct as_fw_role *r, int idx, json_t *pod)
{
	const struct kf_kind *kk = kf_of(as_jstr(obj, "kind"));
	char t[64], i[24];

	lower(r->name, t, sizeof(t));
	snprintf(i, sizeof(i), "%d", idx);
	put_label(pod, "training.kubeflow.org/job-name",
	    as_jstr(obj, "metadata.name"));
	put_label(pod, "training.kubeflow.org/operator-name",
	    kk ? kk->operator_name : "");
	put_label(pod, "training.kubeflow.org/replica-type", t);
	put_label(pod, "training.kubeflow.org/replica-index", i);
	if (strcmp(r->name, "Master") == 0 || strcmp(r->name, "Chief") == 0)
		put_label(pod, "training.kubeflow.org/job-role", "master");
	if (strcmp(r->name, "Launcher") == 0 ||
	    (kk != NULL && strcmp(kk->kind, "MPIJob") == 0))
		put_label(pod, "training.kubeflow.org/job-role", t);
	/* The replica's restartPolicy is the pod's (ExitCode: Never). */
	if (kk != NULL) {
		const char *rp =
		    as_jstr(json_object_get(
				json_object_get(
				    json_object_get(obj, "spec"), kk->specs),
				r->name),
			"restartPolicy");

		if (rp != NULL)
			as_jset(pod, "spec.restartPolicy",
			    json_string(
				strcmp(rp, "ExitCode") == 0 ? "Never" : rp));
	}
}

/* MPI: the launcher waits for every worker to be Ready. */
static bool mpi_before(json_t *obj, int r, const struct as_fw_tally *t)
{
	json_int_t workers =
	    as_fw_int(obj, "spec.mpiReplicaSpecs.Worker.replicas", 1);

	(void)obj;
	if (r != 0 || as_jget(obj, "spec.mpiReplicaSpecs.Launcher") == NULL ||
	    as_jget(obj, "spec.mpiReplicaSpecs.Worker") == NULL)
		return true;
	return t->ready_r[1] >= workers;
}

static int kf_roles(
    const struct kf_kind *kk, json_t *obj, struct as_fw_role *roles, int *types)
{
	json_t *specs =
	    json_object_get(json_object_get(obj, "spec"), kk->specs);
	int n = 0, i;

	for (i = 0; kk->types[i] != NULL && n < AS_FW_MAX_ROLES; i++) {
		json_t *rs = json_object_get(specs, kk->types[i]);

		if (!json_is_object(rs))
			continue;
		snprintf(
		    roles[n].name, sizeof(roles[n].name), "%s", kk->types[i]);
		roles[n].replicas = as_fw_int(rs, "replicas", 1);
		roles[n].tmpl = json_object_get(rs, "template");
		types[n] = i;
		n++;
	}
	return n;
}

static void kf_conditions(const struct kf_kind *kk, json_t *upd,
    enum as_fw_run run, bool was_suspended)
{
	const char *name = as_jstr(upd, "metadata.name");
	const char *ns = as_jstr(upd, "metadata.namespace");
	char reason[80], msg[600];
	bool mpi = strcmp(kk->kind, "MPIJob") == 0;

#define R(what) snprintf(reason, sizeof(reason), "%s" what, kk->kind)
	if (!as_fw_cond_true(upd, "Created")) {
		R("Created");
		if (mpi)
			snprintf(msg, sizeof(msg), "MPIJob %s/%s is created.",
			    ns, name);
		else
			snprintf(msg, sizeof(msg), "%s %s is created.",
			    kk->kind, name);
		as_fw_cond(upd, "Created", "True", reason, msg, true);
	}
	if (run == AS_FW_IDLE) {
		R("Suspended");
		if (mpi)
			snprintf(msg, sizeof(msg), "MPIJob suspended");
		else
			snprintf(msg, sizeof(msg), "%s %s is suspended.",
			    kk->kind, name);
		as_fw_cond(upd, "Running", "False", reason, msg, true);
		as_fw_cond(upd, "Suspended", "True", reason, msg, true);
		return;
	}
	if (was_suspended) {
		R("Resumed");
		if (mpi)
			snprintf(msg, sizeof(msg), "MPIJob resumed");
		else
			snprintf(msg, sizeof(msg), "%s %s is resumed.",
			    kk->kind, name);
		as_fw_cond(upd, "Suspended", "False", reason, msg, true);
	}
	if (run == AS_FW_RUNNING) {
		R("Running");
		snprintf(msg, sizeof(msg), "%s %s/%s is running.", kk->kind, ns,
		    name);
		as_fw_cond(upd, "Running", "True", reason, msg, true);
	} else if (run == AS_FW_SUCCEEDED || run == AS_FW_FAILED) {
		bool ok = run == AS_FW_SUCCEEDED;

		R("Running");
		snprintf(msg, sizeof(msg), "%s %s/%s is running.", kk->kind, ns,
		    name);
		as_fw_cond(upd, "Running", "False", reason, msg, true);
		if (ok) {
			R("Succeeded");
			snprintf(msg, sizeof(msg),
			    "%s %s/%s successfully completed.", kk->kind, ns,
			    name);
		} else {
			R("Failed");
			snprintf(msg, sizeof(msg),
			    "%s %s/%s has failed because 1 replica(s) failed.",
			    kk->kind, ns, name);
		}
		as_fw_cond(upd, ok ? "Succeeded" : "Failed", "True", reason,
		    msg, true);
	}
#undef R
}

static const struct as_fw_podjob kf_podjob = {
    NULL, NULL, true, kf_pod_name, kf_decorate, NULL};

/* MPI v2beta1 with the Job simulator: the launcher is a batch/v1 Job
 * <mpijob>-launcher (mpi-operator's), created at start-up, suspended and
 * resumed with the MPIJob (its pod template merged from the Launcher
 * replica's on resume). 1 once it completed, -1 failed, else 0;
 * *active: its active pods. */
static int mpi_launcher(struct as_server *srv, const struct as_fw_ctl *c,
    json_t *mpi, bool suspended, json_int_t *active)
{
	struct as_kind *jk = as_kind_find(srv, "batch", "v1", "jobs");
	json_t *tmpl = as_jget(mpi, "spec.mpiReplicaSpecs.Launcher.template");
	json_t *owned = as_fw_owned(jk, mpi), *job = NULL, *j;
	char name[320];
	size_t i;
	int out = 0;

	*active = 0;
	snprintf(
	    name, sizeof(name), "%s-launcher", as_jstr(mpi, "metadata.name"));
	json_array_foreach(owned, i, j)
	{
		if (strcmp(as_jstr(j, "metadata.name"), name) == 0)
			job = j;
	}
	if (job == NULL && jk != NULL && !as_fw_pending(mpi)) {
		json_t *t = json_deep_copy(tmpl), *ann = json_object(), *obj;
		const char *keys[] = {
		    "cueue.dev/sim-runtime-ms", "cueue.dev/sim-fail"};

		if (!json_is_object(t))
			t = json_object();
		if (as_jstr(t, "spec.restartPolicy") == NULL)
			as_jset(
			    t, "spec.restartPolicy", json_string("OnFailure"));
		for (i = 0; i < 2; i++)
			if (as_fw_ann(mpi, keys[i]) != NULL)
				json_object_set_new(ann, keys[i],
				    json_string(as_fw_ann(mpi, keys[i])));
		obj = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s}, s:o, "
				"s:o}, s:{s:b, s:i, s:o}}",
		    "apiVersion", "batch/v1", "kind", "Job", "metadata", "name",
		    name, "namespace", as_jstr(mpi, "metadata.namespace"),
		    "labels", "training.kubeflow.org/job-name",
		    as_jstr(mpi, "metadata.name"),
		    "training.kubeflow.org/job-role", "launcher", "annotations",
		    ann, "ownerReferences",
		    as_fw_controller_ref(mpi, "kubeflow.org/v2beta1", "MPIJob"),
		    "spec", "suspend", suspended, "backoffLimit", 6, "template",
		    t);
		as_fw_create(srv, c, jk, obj, mpi);
	} else if (job != NULL) {
		*active = as_fw_int(job, "status.active", 0);
		if (as_fw_cond_true(job, "Complete"))
			out = 1;
		else if (as_fw_cond_true(job, "Failed"))
			out = -1;
		else if (json_is_true(as_jget(job, "spec.suspend")) !=
			 suspended) {
			json_t *u = json_deep_copy(job);

			if (!suspended)
				as_fw_merge_template(
				    as_jget(u, "spec.template"), tmpl);
			as_jset(u, "spec.suspend", json_boolean(suspended));
			as_internal_update(srv, jk, u, false, c->user);
		}
	}
	json_decref(owned);
	return out;
}

static void kf_reconcile(struct as_server *srv, const struct as_fw_ctl *c,
    const char *ns, const char *name)
{
	const struct kf_kind *kk = kf_of(c->kind);
	struct as_kind *k = as_fw_kind(srv, c);
	json_t *obj = k ? as_store_get(k, ns, name) : NULL, *upd, *rs;
	struct as_fw_role roles[AS_FW_MAX_ROLES] = {0};
	struct as_fw_podjob pj = kf_podjob;
	struct as_fw_tally t;
	enum as_fw_run run;
	int types[AS_FW_MAX_ROLES], n, i;
	bool suspended, was, launcher;
	json_int_t lactive = 0;
	int lj;
	char now[CU_TIME_RFC3339_LEN];

	pj.api_version = kk ? kk->api_version : "";
	pj.kind = c->kind;
	if (strcmp(c->kind, "MPIJob") == 0)
		pj.before = mpi_before;
	if (obj == NULL) {
		as_fw_forget(&pj, ns, name);
		return;
	}
	if (kk == NULL ||
	    !as_fw_managed_here(obj, "spec.runPolicy.managedBy", kk->manager))
		return;
	if (as_fw_cond_true(obj, "Succeeded") ||
	    as_fw_cond_true(obj, "Failed")) {
		as_fw_stop_all(
		    srv, obj, as_fw_cond_true(obj, "Succeeded"), c->user);
		return;
	}
	suspended = json_is_true(as_jget(obj, "spec.runPolicy.suspend"));
	was = as_fw_cond_true(obj, "Suspended");
	n = kf_roles(kk, obj, roles, types);
	launcher = strcmp(c->kind, "MPIJob") == 0 && srv->sim_jobs && n > 0 &&
		   strcmp(roles[0].name, "Launcher") == 0;
	if (launcher) {
		/* The workers run until the launcher Job ends. */
		pj.finishes = false;
		pj.before = NULL;
		run = as_fw_run_pods(
		    srv, c, &pj, obj, roles + 1, n - 1, suspended, &t);
		lj = mpi_launcher(srv, c, obj, suspended, &lactive);
		if (lj != 0 && !suspended) {
			as_fw_stop_all(srv, obj, lj > 0, c->user);
			run = lj > 0 ? AS_FW_SUCCEEDED : AS_FW_FAILED;
		} else if (run == AS_FW_RUNNING && lactive == 0) {
			run = AS_FW_STARTING;
		}
	} else {
		run = as_fw_run_pods(srv, c, &pj, obj, roles, n, suspended, &t);
	}
	obj = as_store_get(k, ns, name);
	if (obj == NULL)
		return;
	upd = json_deep_copy(obj);
	as_now_rfc3339(now);
	kf_conditions(kk, upd, run, was && !suspended);
	rs = json_object();
	for (i = 0; i < n; i++) {
		json_int_t act = run == AS_FW_SUCCEEDED || run == AS_FW_FAILED
				     ? 0
				 : !launcher ? t.active[i]
				 : i == 0    ? lactive
					     : t.active[i - 1];
		json_t *one = json_pack("{s:I}", "active", act);

		if (run == AS_FW_SUCCEEDED)
			json_object_set_new(
			    one, "succeeded", json_integer(roles[i].replicas));
		if (run == AS_FW_FAILED)
			json_object_set_new(one, "failed", json_integer(1));
		json_object_set_new(rs, kk->types[types[i]], one);
	}
	as_jset(upd, "status.replicaStatuses", rs);
	if (run == AS_FW_RUNNING && as_jget(upd, "status.startTime") == NULL)
		as_jset(upd, "status.startTime", json_string(now));
	if (run == AS_FW_IDLE) /* the operators clear it on suspension */
		json_object_del(json_object_get(upd, "status"), "startTime");
	if (run == AS_FW_SUCCEEDED || run == AS_FW_FAILED)
		as_jset(upd, "status.completionTime", json_string(now));
	as_internal_update(srv, k, upd, true, c->user);
}

const struct as_fw_ctl as_fw_pytorchjobs = {"kubeflow.org", "v1", "pytorchjobs",
    "PyTorchJob", AS_SIM_KUBEFLOW, KF_USER, kf_reconcile};
const struct as_fw_ctl as_fw_tfjobs = {"kubeflow.org", "v1", "tfjobs", "TFJob",
    AS_SIM_KUBEFLOW, KF_USER, kf_reconcile};
const struct as_fw_ctl as_fw_xgboostjobs = {"kubeflow.org", "v1", "xgboostjobs",
    "XGBoostJob", AS_SIM_KUBEFLOW, KF_USER, kf_reconcile};
const struct as_fw_ctl as_fw_paddlejobs = {"kubeflow.org", "v1", "paddlejobs",
    "PaddleJob", AS_SIM_KUBEFLOW, KF_USER, kf_reconcile};
const struct as_fw_ctl as_fw_jaxjobs = {"kubeflow.org", "v1", "jaxjobs",
    "JAXJob", AS_SIM_KUBEFLOW, KF_USER, kf_reconcile};
const struct as_fw_ctl as_fw_mpijobs = {"kubeflow.org", "v2beta1", "mpijobs",
    "MPIJob", AS_SIM_MPIJOBS, MPI_USER, kf_reconcile};

/* ---- TrainJob ------------------------------------------------------------ */

static json_t *runtime_of(struct as_server *srv, json_t *tj)
{
	const char *kind = as_jstr(tj, "spec.runtimeRef.kind");
	const char *rname = as_jstr(tj, "spec.runtimeRef.name");
	bool cluster =
	    kind == NULL || strcmp(kind, "ClusterTrainingRuntime") == 0;
	struct as_kind *rk =
	    as_kind_find(srv, "trainer.kubeflow.org", "v1alpha1",
		cluster ? "clustertrainingruntimes" : "trainingruntimes");

	if (rk == NULL || rname == NULL)
		return NULL;
	return as_store_get(
	    rk, cluster ? "" : as_jstr(tj, "metadata.namespace"), rname);
}

static bool is_trainer_step(json_t *rj)
{
	const char *step = json_string_value(
	    json_object_get(as_jget(rj, "template.metadata.labels"),
		"trainer.kubeflow.org/trainjob-ancestor-step"));
	const char *name = as_jstr(rj, "name");

	return (step != NULL && strcmp(step, "trainer") == 0) ||
	       (name != NULL && strcmp(name, "node") == 0);
}

/* The trainer's overrides and the runtime patches on the JobSet spec. */
static void render_trainer(json_t *tj, json_t *spec)
{
	json_t *rj, *patch, *pr;
	size_t i, j, l;

	json_array_foreach(json_object_get(spec, "replicatedJobs"), i, rj)
	{
		json_t *jspec = as_jget(rj, "template.spec"), *c;
		json_int_t nodes = as_fw_int(tj, "spec.trainer.numNodes", -1);

		if (!json_is_object(jspec) || !is_trainer_step(rj))
			continue;
		if (nodes > 0) {
			json_object_set_new(
			    jspec, "parallelism", json_integer(nodes));
			json_object_set_new(
			    jspec, "completions", json_integer(nodes));
		}
		c = json_array_get(
		    as_jget(jspec, "template.spec.containers"), 0);
		if (c == NULL)
			continue;
		if (as_jget(tj, "spec.trainer.image") != NULL)
			json_object_set(
			    c, "image", as_jget(tj, "spec.trainer.image"));
		if (as_jget(tj, "spec.trainer.command") != NULL)
			json_object_set(
			    c, "command", as_jget(tj, "spec.trainer.command"));
		if (as_jget(tj, "spec.trainer.args") != NULL)
			json_object_set(
			    c, "args", as_jget(tj, "spec.trainer.args"));
		if (as_jget(tj, "spec.trainer.resourcesPerNode") != NULL)
			json_object_set(c, "resources",
			    as_jget(tj, "spec.trainer.resourcesPerNode"));
	}
	json_array_foreach(as_jget(tj, "spec.runtimePatches"), i, patch)
	{
		json_array_foreach(
		    as_jget(patch, "trainingRuntimeSpec.template.spec."
				   "replicatedJobs"),
		    j, pr)
		{
			json_array_foreach(
			    json_object_get(spec, "replicatedJobs"), l, rj)
			{
				json_t *pt =
				    as_jget(rj, "template.spec.template");
				json_t *src =
				    as_jget(pr, "template.spec.template");

				if (as_jstr(rj, "name") == NULL ||
				    as_jstr(pr, "name") == NULL ||
				    strcmp(as_jstr(rj, "name"),
					as_jstr(pr, "name")) != 0 ||
				    !json_is_object(pt))
					continue;
				as_fw_merge_template(pt, src);
			}
		}
	}
}

static json_t *render_jobset(json_t *tj, json_t *rt)
{
	json_t *spec = json_deep_copy(as_jget(rt, "spec.template.spec"));
	json_t *rj;
	size_t i;

	if (!json_is_object(spec))
		spec = json_object();
	json_array_foreach(json_object_get(spec, "replicatedJobs"), i, rj)
	{
		json_int_t nodes = as_fw_int(rt, "spec.mlPolicy.numNodes", -1);

		if (nodes > 0 && is_trainer_step(rj) &&
		    json_is_object(as_jget(rj, "template.spec"))) {
			as_jset(rj, "template.spec.parallelism",
			    json_integer(nodes));
			as_jset(rj, "template.spec.completions",
			    json_integer(nodes));
		}
	}
	render_trainer(tj, spec);
	json_object_set_new(spec, "suspend",
	    json_boolean(json_is_true(as_jget(tj, "spec.suspend"))));
	return spec;
}

static void trainjob_reconcile(struct as_server *srv, const struct as_fw_ctl *c,
    const char *ns, const char *name)
{
	struct as_kind *k = as_fw_kind(srv, c);
	struct as_kind *jsk =
	    as_kind_find(srv, "jobset.x-k8s.io", "v1alpha2", "jobsets");
	json_t *tj = k ? as_store_get(k, ns, name) : NULL;
	json_t *rt, *js, *upd, *owned, *cond;
	bool suspend;

	if (tj == NULL || jsk == NULL ||
	    !as_fw_managed_here(tj, "spec.managedBy",
		"trainer.kubeflow.org/trainjob-controller") ||
	    as_fw_cond_true(tj, "Complete") || as_fw_cond_true(tj, "Failed"))
		return;
	suspend = json_is_true(as_jget(tj, "spec.suspend"));
	rt = runtime_of(srv, tj);
	owned = as_fw_owned(jsk, tj);
	js = json_incref(json_array_get(owned, 0));
	json_decref(owned);
	if (rt == NULL) {
		as_fw_wake(c, ns, name, as_fw_now_ms() + 1000);
		json_decref(js);
		return;
	}
	if (js == NULL) {
		json_t *obj;

		if (!as_fw_pending(tj)) {
			obj = json_pack(
			    "{s:s, s:s, s:{s:s, s:s, s:{s:s}, s:o}, "
			    "s:o}",
			    "apiVersion", "jobset.x-k8s.io/v1alpha2", "kind",
			    "JobSet", "metadata", "name", name, "namespace", ns,
			    "labels", "trainer.kubeflow.org/trainjob-name",
			    name, "ownerReferences",
			    as_fw_controller_ref(tj,
				"trainer.kubeflow.org/v1alpha1", "TrainJob"),
			    "spec", render_jobset(tj, rt));
			as_fw_create(srv, c, jsk, obj, tj);
		}
	} else if (json_is_true(as_jget(js, "spec.suspend")) != suspend) {
		json_t *u = json_deep_copy(js);

		if (!suspend) {
			json_t *spec = render_jobset(tj, rt);

			json_object_set(json_object_get(u, "spec"),
			    "replicatedJobs",
			    json_object_get(spec, "replicatedJobs"));
			json_decref(spec);
		}
		as_jset(u, "spec.suspend", json_boolean(suspend));
		as_internal_update(srv, jsk, u, false, c->user);
	}
	tj = as_store_get(k, ns, name);
	if (tj == NULL) {
		json_decref(js);
		return;
	}
	upd = json_deep_copy(tj);
	if (js != NULL) {
		as_fw_cond(upd, "Created", "True", "JobsCreationSucceeded",
		    "Succeeded to create Jobs", false);
		if (as_jget(js, "status.replicatedJobsStatus") != NULL)
			as_jset(upd, "status.jobsStatus",
			    json_deep_copy(
				as_jget(js, "status.replicatedJobsStatus")));
	}
	if (suspend)
		as_fw_cond(upd, "Suspended", "True", "Suspended",
		    "TrainJob is suspended", false);
	else if (as_fw_cond_true(upd, "Suspended"))
		as_fw_cond(upd, "Suspended", "False", "Resumed",
		    "TrainJob is resumed", false);
	cond = NULL;
	if (js != NULL && as_fw_cond_true(js, "Completed")) {
		size_t i;

		json_array_foreach(as_jget(js, "status.conditions"), i, cond)
		{
			if (strcmp(as_jstr(cond, "type"), "Completed") == 0)
				break;
		}
		as_fw_cond(upd, "Complete", "True", "JobSetCompleted",
		    as_jstr(cond, "message") ? as_jstr(cond, "message") : "",
		    false);
	} else if (js != NULL && as_fw_cond_true(js, "Failed")) {
		as_fw_cond(upd, "Failed", "True", "JobSetFailed",
		    "jobset failed due to one or more job failures", false);
	}
	as_internal_update(srv, k, upd, true, c->user);
	json_decref(js);
}

const struct as_fw_ctl as_fw_trainjobs = {"trainer.kubeflow.org", "v1alpha1",
    "trainjobs", "TrainJob", AS_SIM_TRAINJOBS, TRAINER_USER,
    trainjob_reconcile};
