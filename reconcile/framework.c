/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconcile/framework.c - the framework descriptors (docs/frameworks.md):
 * the table of kinds cueue queues, and the readers every reconciler uses
 * on a job through its descriptor: the pod templates of its pod sets,
 * the suspend field, and, for kinds read as JSON (REC_JOB_DOC), pod sets
 * and counts, suspension, activity, completion and readiness.
 * Contracts in reconcile/reconcile.h and reconcile/rec_int.h.
 */
#include <stdio.h>
#include <string.h>

#include "reconcile/rec_int.h"

/* ---- the table -------------------------------------------------------- */

static const char *const spec_suspend[] = {"spec", "suspend", NULL};
static const char *const run_policy_suspend[] = {
    "spec", "runPolicy", "suspend", NULL};
static const char *const spec_managed_by[] = {"spec", "managedBy", NULL};
static const char *const ray_cluster_config_suspend[] = {
    "spec", "rayClusterConfig", "suspend", NULL};
static const char *const run_policy_managed_by[] = {
    "spec", "runPolicy", "managedBy", NULL};

static const char *const master_worker[] = {"Master", "Worker", NULL};
static const char *const tf_order[] = {
    "Chief", "Master", "PS", "Worker", "Evaluator", NULL};
static const char *const worker_only[] = {"Worker", NULL};
static const char *const launcher_worker[] = {"Launcher", "Worker", NULL};

#define KF_INDEX "training.kubeflow.org/replica-index"
#define KF_OPERATOR "kubeflow.org/training-operator"

/* A Kubeflow training-operator v1 kind: replica map under spec. */
#define KUBEFLOW(fwname, k, pl, field, order)                                  \
	{                                                                      \
		fwname, "kubeflow.org", "v1", k, pl, REC_FW_SHAPE_REPLICA_MAP, \
		    run_policy_suspend, field, order, "Succeeded", "Failed",   \
		    "Running", run_policy_managed_by, KF_OPERATOR, KF_INDEX,   \
		    NULL                                                       \
	}

static const struct rec_fw table[] = {
    {"batch/job", "batch", "v1", "Job", "jobs", REC_FW_SHAPE_BATCH,
	spec_suspend, NULL, NULL, "Complete", "Failed", NULL, spec_managed_by,
	"kubernetes.io/job-controller",
	"batch.kubernetes.io/job-completion-index", NULL},
    {"jobset.x-k8s.io/jobset", "jobset.x-k8s.io", "v1alpha2", "JobSet",
	"jobsets", REC_FW_SHAPE_JOBSET, spec_suspend, NULL, NULL, "Completed",
	"Failed", NULL, spec_managed_by, "jobset.sigs.k8s.io/jobset-controller",
	"batch.kubernetes.io/job-completion-index", NULL},
    KUBEFLOW("kubeflow.org/pytorchjob", "PyTorchJob", "pytorchjobs",
	"pytorchReplicaSpecs", master_worker),
    KUBEFLOW(
	"kubeflow.org/tfjob", "TFJob", "tfjobs", "tfReplicaSpecs", tf_order),
    KUBEFLOW("kubeflow.org/xgboostjob", "XGBoostJob", "xgboostjobs",
	"xgbReplicaSpecs", master_worker),
    KUBEFLOW("kubeflow.org/paddlejob", "PaddleJob", "paddlejobs",
	"paddleReplicaSpecs", master_worker),
    KUBEFLOW("kubeflow.org/jaxjob", "JAXJob", "jaxjobs", "jaxReplicaSpecs",
	worker_only),
    {"kubeflow.org/mpijob", "kubeflow.org", "v2beta1", "MPIJob", "mpijobs",
	REC_FW_SHAPE_REPLICA_MAP, run_policy_suspend, "mpiReplicaSpecs",
	launcher_worker, "Succeeded", "Failed", "Running",
	run_policy_managed_by, "kubeflow.org/mpi-operator", KF_INDEX, NULL},
    /* Ray (reconcile/fw_ray.c): replicas_field names the cluster spec
     * under spec (NULL: spec itself). */
    {"ray.io/rayjob", "ray.io", "v1", "RayJob", "rayjobs", REC_FW_SHAPE_OPS,
	spec_suspend, "rayClusterSpec", NULL, NULL, NULL, NULL, spec_managed_by,
	"ray.io/kuberay-operator", NULL, &rec__fw_ray_ops},
    {"ray.io/raycluster", "ray.io", "v1", "RayCluster", "rayclusters",
	REC_FW_SHAPE_OPS, spec_suspend, NULL, NULL, NULL, NULL, NULL,
	spec_managed_by, "ray.io/kuberay-operator", NULL, &rec__fw_ray_ops},
    {"workload.codeflare.dev/appwrapper", "workload.codeflare.dev", "v1beta2",
	"AppWrapper", "appwrappers", REC_FW_SHAPE_OPS, spec_suspend, NULL, NULL,
	NULL, NULL, NULL, spec_managed_by,
	"workload.codeflare.dev/appwrapper-controller", NULL,
	&rec__fw_appwrapper_ops},
    {"pod", "", "v1", "Pod", "pods", REC_FW_SHAPE_POD, NULL, NULL, NULL, NULL,
	NULL, "Ready", NULL, NULL, NULL, NULL},
    /* Serving (reconcile/fw_serving.c): never written to, never watched
     * (rec_fw_pods_only); their Pods are queued as pod groups. */
    {"statefulset", "apps", "v1", "StatefulSet", "statefulsets",
	REC_FW_SHAPE_OPS, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
	"apps.kubernetes.io/pod-index", &rec__fw_serving_ops},
    {"leaderworkerset.x-k8s.io/leaderworkerset", "leaderworkerset.x-k8s.io",
	"v1", "LeaderWorkerSet", "leaderworkersets", REC_FW_SHAPE_OPS, NULL,
	NULL, NULL, NULL, NULL, NULL, NULL, NULL,
	"leaderworkerset.sigs.k8s.io/worker-index", &rec__fw_serving_ops},
    /* RayService: its rayClusterConfig is the managed cluster spec. */
    {"ray.io/rayservice", "ray.io", "v1", "RayService", "rayservices",
	REC_FW_SHAPE_OPS, ray_cluster_config_suspend, "rayClusterConfig", NULL,
	NULL, NULL, NULL, spec_managed_by, "ray.io/kuberay-operator", NULL,
	&rec__fw_ray_ops},
    /* SparkApplication (reconcile/fw_spark.c): no managedBy. */
    {"sparkoperator.k8s.io/sparkapplication", "sparkoperator.k8s.io", "v1beta2",
	"SparkApplication", "sparkapplications", REC_FW_SHAPE_OPS, spec_suspend,
	NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &rec__fw_spark_ops},
    /* TrainJob (reconcile/fw_trainjob.c): through its rendered JobSet. */
    {"trainer.kubeflow.org/trainjob", "trainer.kubeflow.org", "v1alpha1",
	"TrainJob", "trainjobs", REC_FW_SHAPE_OPS, spec_suspend, NULL, NULL,
	NULL, NULL, NULL, spec_managed_by,
	"trainer.kubeflow.org/trainjob-controller",
	"batch.kubernetes.io/job-completion-index", &rec__fw_trainjob_ops},
};

#define N_TABLE (sizeof(table) / sizeof(table[0]))

const struct rec_fw *rec_fw_at(size_t i)
{
	return i < N_TABLE ? &table[i] : NULL;
}

const struct rec_fw *rec_fw_by_name(const char *name)
{
	size_t i;

	for (i = 0; name != NULL && i < N_TABLE; i++)
		if (strcmp(table[i].name, name) == 0)
			return &table[i];
	return NULL;
}

const struct rec_fw *rec_fw_by_kind(const char *group, const char *kind)
{
	size_t i;

	for (i = 0; kind != NULL && i < N_TABLE; i++)
		if (strcmp(table[i].kind, kind) == 0 &&
		    strcmp(table[i].group, group ? group : "") == 0)
			return &table[i];
	return NULL;
}

const struct rec_fw *rec_job_fw(const struct rec_job *j)
{
	if (j->kind == REC_JOB_DOC && j->fw != NULL)
		return j->fw;
	return &table[j->kind == REC_JOB_JOBSET ? 1 : 0];
}

/* ---- pod templates in a job document ---------------------------------- */

static void lower(char *s)
{
	for (; *s; s++)
		if (*s >= 'A' && *s <= 'Z')
			*s = (char)(*s - 'A' + 'a');
}

/* Does `key` lower-cased equal `name`? */
static bool lower_eq(const char *key, const char *name)
{
	char buf[256];

	if (key == NULL || strlen(key) >= sizeof(buf))
		return false;
	snprintf(buf, sizeof(buf), "%s", key);
	lower(buf);
	return strcmp(buf, name) == 0;
}

/* The replica map of a REPLICA_MAP document [borrowed], or NULL. */
static json_t *replica_map(const struct rec_fw *fw, const json_t *doc)
{
	json_t *m =
	    json_object_get(json_object_get(doc, "spec"), fw->replicas_field);

	return json_is_object(m) ? m : NULL;
}

/* The k-th present replica type of doc (Kueue's OrderedReplicaTypes
 * filtered to the non-nil entries), or NULL past the end. */
static const char *replica_type(
    const struct rec_fw *fw, const json_t *doc, size_t k)
{
	json_t *m = replica_map(fw, doc), *r;
	size_t i, seen = 0;

	for (i = 0; m != NULL && fw->replica_order[i] != NULL; i++) {
		r = json_object_get(m, fw->replica_order[i]);
		if (r == NULL || json_is_null(r))
			continue;
		if (seen++ == k)
			return fw->replica_order[i];
	}
	return NULL;
}

size_t rec__fw_n_podsets(const struct rec_fw *fw, const json_t *doc)
{
	size_t n = 0;

	switch (fw->shape) {
	case REC_FW_SHAPE_BATCH:
	case REC_FW_SHAPE_POD:
		return 1;
	case REC_FW_SHAPE_JOBSET:
		return json_array_size(json_object_get(
		    json_object_get(doc, "spec"), "replicatedJobs"));
	case REC_FW_SHAPE_REPLICA_MAP:
		while (replica_type(fw, doc, n) != NULL)
			n++;
		return n;
	case REC_FW_SHAPE_OPS:
		return fw->ops->n_podsets(fw, doc);
	}
	return 0;
}

json_t *rec__fw_template(
    const struct rec_fw *fw, const json_t *doc, const char *name)
{
	json_t *spec = json_object_get(doc, "spec"), *rjs, *rj, *t;
	const char *type;
	size_t i;

	switch (fw->shape) {
	case REC_FW_SHAPE_BATCH:
		return json_object_get(spec, "template");
	case REC_FW_SHAPE_POD: /* the pod is its own template */
		return (json_t *)doc;
	case REC_FW_SHAPE_JOBSET:
		rjs = json_object_get(spec, "replicatedJobs");
		json_array_foreach(rjs, i, rj)
		{
			if (!lower_eq(api_json_str(rj, "name"), name))
				continue;
			t = json_object_get(rj, "template");
			t = json_object_get(t, "spec");
			return json_object_get(t, "template");
		}
		return NULL;
	case REC_FW_SHAPE_REPLICA_MAP:
		for (i = 0; (type = replica_type(fw, doc, i)) != NULL; i++)
			if (lower_eq(type, name))
				return json_object_get(
				    json_object_get(replica_map(fw, doc), type),
				    "template");
		return NULL;
	case REC_FW_SHAPE_OPS:
		return fw->ops->template_of(fw, doc, name);
	}
	return NULL;
}

bool rec__fw_template_optional(
    const struct rec_fw *fw, const json_t *doc, const char *name)
{
	return fw->ops != NULL && fw->ops->template_optional != NULL &&
	       fw->ops->template_optional(fw, doc, name);
}

/* The object holding the last key of path in doc, created when `make`
 * [borrowed]; NULL when absent (or out of memory). */
static json_t *path_parent(json_t *doc, const char *const *path, bool make)
{
	json_t *o = doc;
	size_t i;

	for (i = 0; o != NULL && path[i + 1] != NULL; i++)
		o = make ? api_json_obj_child(o, path[i])
			 : json_object_get(o, path[i]);
	return json_is_object(o) ? o : NULL;
}

static const json_t *path_get(const json_t *doc, const char *const *path)
{
	size_t n = 0;
	json_t *p = path_parent((json_t *)doc, path, false);

	while (path[n + 1] != NULL)
		n++;
	return p ? json_object_get(p, path[n]) : NULL;
}

int rec__fw_set_suspend(
    const struct rec_fw *fw, json_t *doc, bool suspend, cu_error *err)
{
	json_t *p;
	size_t n = 0;

	if (fw->shape == REC_FW_SHAPE_POD)
		return rec__pod_set_gate(doc, suspend, err);
	if (fw->suspend == NULL)
		return cu_error_set(
		    err, CU_EINVAL, "%s: cannot be suspended", fw->kind);
	p = path_parent(doc, fw->suspend, true);
	while (fw->suspend[n + 1] != NULL)
		n++;
	if (p == NULL ||
	    json_object_set_new(p, fw->suspend[n], json_boolean(suspend)) != 0)
		return rec__nomem(err, "job suspend");
	return CU_OK;
}

/* ---- the state of a job read as JSON ---------------------------------- */

bool rec__doc_suspended(const struct rec_fw *fw, const json_t *doc)
{
	if (fw->shape == REC_FW_SHAPE_POD)
		return rec__pod_gated(doc);
	if (fw->suspend == NULL)
		return false;
	return json_is_true(path_get(doc, fw->suspend));
}

const char *rec__doc_managed_by(const struct rec_fw *fw, const json_t *doc)
{
	return fw->managed_by ? json_string_value(path_get(doc, fw->managed_by))
			      : NULL;
}

const json_t *rec__doc_true_condition(const json_t *doc, const char *type)
{
	json_t *cs = json_object_get(
		   json_object_get(doc, "status"), "conditions"),
	       *c;
	size_t i;

	if (type == NULL)
		return NULL;
	json_array_foreach(cs, i, c)
	{
		const char *t = api_json_str(c, "type");
		const char *s = api_json_str(c, "status");

		if (t != NULL && s != NULL && strcmp(t, type) == 0 &&
		    strcmp(s, "True") == 0)
			return c;
	}
	return NULL;
}

bool rec__doc_finished(const struct rec_fw *fw, const json_t *doc,
    bool *success, const char **message)
{
	const json_t *ok = rec__doc_true_condition(doc, fw->cond_success);
	const json_t *bad = rec__doc_true_condition(doc, fw->cond_failed);
	const json_t *hit = ok ? ok : bad;
	const char *m;

	if (fw->ops != NULL)
		return fw->ops->finished(fw, doc, success, message);
	if (fw->shape == REC_FW_SHAPE_POD)
		return rec__pod_finished(doc, success, message);
	if (hit == NULL)
		return false;
	m = api_json_str(hit, "message");
	if (success != NULL)
		*success = ok != NULL;
	if (message != NULL)
		*message = m ? m : "";
	return true;
}

bool rec__doc_active(const struct rec_fw *fw, const json_t *doc)
{
	json_t *rs = json_object_get(
		   json_object_get(doc, "status"), "replicaStatuses"),
	       *r;
	const char *k;

	if (fw->ops != NULL)
		return fw->ops->active(fw, doc);
	if (fw->shape == REC_FW_SHAPE_POD)
		return rec__pod_active(doc);
	json_object_foreach(rs, k, r)
	{
		json_t *a = json_object_get(r, "active");

		if (json_is_integer(a) && json_integer_value(a) != 0)
			return true;
	}
	return false;
}

bool rec__doc_pods_ready(const struct rec_fw *fw, const json_t *doc)
{
	if (fw->ops != NULL)
		return fw->ops->pods_ready(fw, doc);
	return rec__doc_true_condition(doc, fw->cond_ready) != NULL;
}

int rec__doc_podsets(const struct rec_fw *fw, const json_t *doc,
    struct api_podsets *out, cu_error *err)
{
	size_t n = rec__fw_n_podsets(fw, doc), i;
	const char *type;
	int rc = CU_OK;

	if (fw->ops != NULL)
		return fw->ops->podsets(fw, doc, out, err);
	memset(out, 0, sizeof(*out));
	if (fw->shape == REC_FW_SHAPE_POD)
		return rec__pod_podsets(doc, out, err);
	if (fw->shape != REC_FW_SHAPE_REPLICA_MAP)
		return cu_error_set(
		    err, CU_EINVAL, "%s: not read as a document", fw->kind);
	if (n == 0)
		return CU_OK;
	out->items = cu_calloc(n, sizeof(*out->items));
	if (out->items == NULL)
		return rec__nomem(err, "podsets");
	for (i = 0; i < n && rc == CU_OK; i++) {
		json_t *r = json_object_get(
		    replica_map(fw, doc), type = replica_type(fw, doc, i));
		json_t *rep = json_object_get(r, "replicas");
		json_int_t count =
		    json_is_integer(rep) ? json_integer_value(rep) : 1;
		char name[256], path[320];
		int len;

		snprintf(name, sizeof(name), "%s", type);
		lower(name);
		len = snprintf(
		    path, sizeof(path), "spec.%s.%s", fw->replicas_field, type);
		out->n = i + 1;
		if (len < 0 || (size_t)len + sizeof(".template") > sizeof(path))
			rc = cu_error_set(err, CU_EINVAL,
			    "spec.%s: replica type name too long",
			    fw->replicas_field);
		else if (count < 0 || count > INT32_MAX)
			rc = cu_error_set(err, CU_EINVAL,
			    "%s.replicas: Invalid value: %lld", path,
			    (long long)count);
		else {
			memcpy(path + len, ".template", sizeof(".template"));
			rc = api_podset_from_template(
			    json_object_get(r, "template"), name,
			    (int32_t)count, path, &out->items[i], err);
			/* Kueue: Kubeflow's and MPI's replica index. */
			if (rc == CU_OK)
				rc = api_podset_index_labels(&out->items[i],
				    API_LABEL_KUBEFLOW_REPLICA_INDEX, NULL, 0,
				    err);
		}
	}
	if (rc != CU_OK)
		api_podsets_dispose(out);
	return rc;
}
