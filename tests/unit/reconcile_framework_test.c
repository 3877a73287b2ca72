/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/reconcile_framework_test.c - the framework descriptors
 * (reconcile/framework.c, docs/frameworks.md), table-driven:
 *
 *   the table:   every framework found by name and by group+kind, unknown
 *                names and kinds not; Job and JobSet views map to theirs
 *   pod sets:    one row per Kubeflow kind and MPIJob: present replica
 *                types in Kueue's order, lower-cased names, replicas
 *                (default 1), requests from the template; a null entry
 *                skipped; a negative count refused naming the field
 *   state:       suspended (runPolicy.suspend), finished (Succeeded /
 *                Failed, with the message), active (replicaStatuses),
 *                pods ready (Running)
 *   Workload:    name hashed on kind and group, owner reference
 *   start/stop:  start unsuspends and merges the flavor into every
 *                replica template; a count mismatch is refused; stop
 *                suspends and restores the templates from the Workload
 *   serving:     statefulset and leaderworkerset are pods-only rows (never
 *                watched nor written); one group's pod sets read from the
 *                parent (main of replicas; leader 1 and worker size-1, or
 *                main of size), bad counts and missing templates refused
 *                naming the field; never suspended nor finished, active
 *                while status.replicas > 0, ready at spec.replicas ready
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "api/json.h"
#include "api/patch.h"
#include "reconcile/reconcile.h"
#include "tests/unit/fixtures.h"

static json_t *parse(const char *text)
{
	json_error_t jerr;
	json_t *j = json_loads(text, 0, &jerr);

	cr_assert_not_null(j, "test JSON: %s at line %d col %d", jerr.text,
	    jerr.line, jerr.column);
	return j;
}

/* ---- the table -------------------------------------------------------- */

struct by_row {
	const char *name, *group, *kind, *version, *plural;
};

static const struct by_row by_rows[] = {
    {"batch/job", "batch", "Job", "v1", "jobs"},
    {"jobset.x-k8s.io/jobset", "jobset.x-k8s.io", "JobSet", "v1alpha2",
	"jobsets"},
    {"kubeflow.org/pytorchjob", "kubeflow.org", "PyTorchJob", "v1",
	"pytorchjobs"},
    {"kubeflow.org/tfjob", "kubeflow.org", "TFJob", "v1", "tfjobs"},
    {"kubeflow.org/xgboostjob", "kubeflow.org", "XGBoostJob", "v1",
	"xgboostjobs"},
    {"kubeflow.org/paddlejob", "kubeflow.org", "PaddleJob", "v1", "paddlejobs"},
    {"kubeflow.org/jaxjob", "kubeflow.org", "JAXJob", "v1", "jaxjobs"},
    {"kubeflow.org/mpijob", "kubeflow.org", "MPIJob", "v2beta1", "mpijobs"},
    {"ray.io/rayjob", "ray.io", "RayJob", "v1", "rayjobs"},
    {"ray.io/raycluster", "ray.io", "RayCluster", "v1", "rayclusters"},
    {"workload.codeflare.dev/appwrapper", "workload.codeflare.dev",
	"AppWrapper", "v1beta2", "appwrappers"},
    {"pod", "", "Pod", "v1", "pods"},
    {"statefulset", "apps", "StatefulSet", "v1", "statefulsets"},
    {"leaderworkerset.x-k8s.io/leaderworkerset", "leaderworkerset.x-k8s.io",
	"LeaderWorkerSet", "v1", "leaderworkersets"},
    {"ray.io/rayservice", "ray.io", "RayService", "v1", "rayservices"},
    {"sparkoperator.k8s.io/sparkapplication", "sparkoperator.k8s.io",
	"SparkApplication", "v1beta2", "sparkapplications"},
    {"trainer.kubeflow.org/trainjob", "trainer.kubeflow.org", "TrainJob",
	"v1alpha1", "trainjobs"},
};

static void lookup_row(const struct by_row *r)
{
	const struct rec_fw *a = rec_fw_by_name(r->name);

	cr_assert_not_null(a, "%s", r->name);
	cr_assert_eq(rec_fw_by_kind(r->group, r->kind), a);
	cr_assert_str_eq(a->version, r->version);
	cr_assert_str_eq(a->plural, r->plural);
}

Test(framework, lookup)
{
	size_t i;

	for (i = 0; i < sizeof(by_rows) / sizeof(by_rows[0]); i++)
		lookup_row(&by_rows[i]);
}

Test(framework, unknown_and_iteration)
{
	struct rec_job job = {.kind = REC_JOB_BATCH};
	struct rec_job js = {.kind = REC_JOB_JOBSET};
	size_t i;

	cr_assert_null(rec_fw_by_name("ray.io/rayjob-not"));
	cr_assert_null(rec_fw_by_name(NULL));
	cr_assert_null(rec_fw_by_kind("kubeflow.org", "Job"));
	cr_assert_null(rec_fw_by_kind("", "Job"));
	for (i = 0; rec_fw_at(i) != NULL; i++)
		cr_assert_eq(rec_fw_by_name(rec_fw_at(i)->name), rec_fw_at(i));
	cr_assert_eq(i, sizeof(by_rows) / sizeof(by_rows[0]));
	cr_assert_str_eq(rec_job_fw(&job)->name, "batch/job");
	cr_assert_str_eq(rec_job_fw(&js)->name, "jobset.x-k8s.io/jobset");
}

/* ---- a job read as JSON ------------------------------------------------ */

struct docjob {
	json_t *doc;
	struct api_meta meta;
	struct rec_job view;
};

static void docjob_load(struct docjob *d, const char *fw, const char *text)
{
	cu_error err;

	d->doc = parse(text);
	cr_assert_eq(api_meta_decode(
			 &d->meta, json_object_get(d->doc, "metadata"), &err),
	    CU_OK, "%s", err.msg);
	memset(&d->view, 0, sizeof(d->view));
	d->view.kind = REC_JOB_DOC;
	d->view.fw = rec_fw_by_name(fw);
	d->view.doc = d->doc;
	d->view.meta = &d->meta;
	cr_assert_not_null(d->view.fw);
}

static void docjob_dispose(struct docjob *d)
{
	api_meta_dispose(&d->meta);
	json_decref(d->doc);
}

#define META                                                                   \
	"\"metadata\":{\"name\":\"train\",\"namespace\":\"ns\",\"uid\":"       \
	"\"u-1\",\"resourceVersion\":\"7\",\"labels\":{"                       \
	"\"kueue.x-k8s.io/queue-name\":\"lq\"}}"
#define TPL(cpu)                                                               \
	"{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\","          \
	"\"resources\":{\"requests\":{\"cpu\":\"" cpu "\"}}}]}}"

struct ps_row {
	const char *fw, *kind, *field, *replicas;
	const char *want; /* "name:count:cpu-milli,..." */
};

static const struct ps_row ps_rows[] = {
    {"kubeflow.org/pytorchjob", "PyTorchJob", "pytorchReplicaSpecs",
	"{\"Worker\":{\"replicas\":3,\"template\":" TPL(
	    "2") "},\"Master\":{\"replicas\":1,\"template\":" TPL("1") "}}",
	"master:1:1000,worker:3:2000"},
    {"kubeflow.org/tfjob", "TFJob", "tfReplicaSpecs",
	"{\"Worker\":{\"replicas\":2,\"template\":" TPL(
	    "1") "},\"PS\":{\"template\":" TPL("500m") "},\"Chief\":{"
						       "\"replicas\":1,"
						       "\"template\":" TPL(
							   "1") "},"
								"\"Evaluator\":"
								"null}",
	"chief:1:1000,ps:1:500,worker:2:1000"},
    {"kubeflow.org/xgboostjob", "XGBoostJob", "xgbReplicaSpecs",
	"{\"Master\":{\"replicas\":1,\"template\":" TPL("1") "}}",
	"master:1:1000"},
    {"kubeflow.org/paddlejob", "PaddleJob", "paddleReplicaSpecs",
	"{\"Worker\":{\"replicas\":2,\"template\":" TPL("1") "}}",
	"worker:2:1000"},
    {"kubeflow.org/jaxjob", "JAXJob", "jaxReplicaSpecs",
	"{\"Worker\":{\"replicas\":4,\"template\":" TPL("250m") "}}",
	"worker:4:250"},
    {"kubeflow.org/mpijob", "MPIJob", "mpiReplicaSpecs",
	"{\"Worker\":{\"replicas\":2,\"template\":" TPL(
	    "1") "},\"Launcher\":{\"replicas\":1,\"template\":" TPL("100m") "}"
									    "}",
	"launcher:1:100,worker:2:1000"},
    {"kubeflow.org/pytorchjob", "PyTorchJob", "pytorchReplicaSpecs", "{}", ""},
};

static void podsets_row(const struct ps_row *r)
{
	struct docjob d;
	struct api_podsets ps;
	char text[4096], got[512] = "";
	size_t used = 0;
	cu_error err;
	size_t i;

	snprintf(text, sizeof(text),
	    "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"%s\"," META
	    ",\"spec\":{\"%s\":%s}}",
	    r->kind, r->field, r->replicas);
	docjob_load(&d, r->fw, text);
	cr_assert_eq(rec_job_podsets(&d.view, &ps, &err), CU_OK, "%s", err.msg);
	for (i = 0; i < ps.n; i++) {
		char one[96];

		cr_assert_eq(ps.items[i].n_requests, 1);
		snprintf(one, sizeof(one), "%s%s:%d:%lld", i ? "," : "",
		    ps.items[i].name, (int)ps.items[i].count,
		    (long long)ps.items[i].requests[0].milli);
		used +=
		    (size_t)snprintf(got + used, sizeof(got) - used, "%s", one);
		cr_assert_not_null(ps.items[i].template);
		/* Kueue: every replica type's pods by replica index. */
		cr_assert(ps.items[i].has_topology_request);
		cr_assert_str_eq(ps.items[i].topology_request.pod_index_label,
		    "training.kubeflow.org/replica-index");
		cr_assert_null(
		    ps.items[i].topology_request.subgroup_index_label);
	}
	cr_assert_str_eq(got, r->want);
	api_podsets_dispose(&ps);
	docjob_dispose(&d);
}

Test(framework, podsets)
{
	size_t i;

	for (i = 0; i < sizeof(ps_rows) / sizeof(ps_rows[0]); i++)
		podsets_row(&ps_rows[i]);
}

Test(framework, negative_replicas_refused)
{
	struct docjob d;
	struct api_podsets ps;
	cu_error err;

	docjob_load(&d, "kubeflow.org/jaxjob",
	    "{" META ",\"spec\":{\"jaxReplicaSpecs\":{\"Worker\":{\"replicas\":"
	    "-1,\"template\":" TPL("1") "}}}}");
	cr_assert_eq(rec_job_podsets(&d.view, &ps, &err), CU_EINVAL);
	cr_assert(
	    strstr(err.msg, "spec.jaxReplicaSpecs.Worker.replicas") != NULL,
	    "%s", err.msg);
	docjob_dispose(&d);
}

/* ---- state ------------------------------------------------------------- */

struct st_row {
	const char *rest; /* after metadata: spec and status */
	bool suspended, finished, success, active, ready;
	const char *message;
};

static const struct st_row st_rows[] = {
    {"\"spec\":{\"runPolicy\":{\"suspend\":true}}", true, false, false, false,
	false, NULL},
    {"\"spec\":{\"runPolicy\":{\"suspend\":false}},\"status\":{"
     "\"conditions\":[{\"type\":\"Running\",\"status\":\"True\"}],"
     "\"replicaStatuses\":{\"Worker\":{\"active\":2}}}",
	false, false, false, true, true, NULL},
    {"\"spec\":{},\"status\":{\"conditions\":[{\"type\":\"Running\","
     "\"status\":\"False\"},{\"type\":\"Succeeded\",\"status\":\"True\","
     "\"message\":\"done\"}],\"replicaStatuses\":{\"Worker\":{"
     "\"active\":0,\"succeeded\":2}}}",
	false, true, true, false, false, "done"},
    {"\"spec\":{},\"status\":{\"conditions\":[{\"type\":\"Failed\","
     "\"status\":\"True\",\"message\":\"boom\"}]}",
	false, true, false, false, false, "boom"},
    {"\"spec\":{},\"status\":{\"conditions\":[{\"type\":\"Succeeded\","
     "\"status\":\"False\"}]}",
	false, false, false, false, false, NULL},
};

static void state_row(const struct st_row *r)
{
	struct docjob d;
	char text[2048];
	bool success = false;
	const char *msg = NULL;

	snprintf(text, sizeof(text), "{" META ",%s}", r->rest);
	docjob_load(&d, "kubeflow.org/pytorchjob", text);
	cr_assert_eq(rec_job_is_suspended(&d.view), r->suspended);
	cr_assert_eq(rec_job_finished(&d.view, &success, &msg), r->finished);
	if (r->finished) {
		cr_assert_eq(success, r->success);
		cr_assert_str_eq(msg, r->message);
	}
	cr_assert_eq(rec_job_is_active(&d.view), r->active);
	cr_assert_eq(rec_job_pods_ready(&d.view, NULL, NULL), r->ready);
	docjob_dispose(&d);
}

Test(framework, state)
{
	size_t i;

	for (i = 0; i < sizeof(st_rows) / sizeof(st_rows[0]); i++)
		state_row(&st_rows[i]);
}

/* ---- Workload, start and stop ----------------------------------------- */

#define PYTORCH(suspend, worker_extra)                                         \
	"{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"PyTorchJob\"," META    \
	",\"spec\":{\"runPolicy\":{\"suspend\":" suspend "},"                  \
	"\"pytorchReplicaSpecs\":{\"Master\":{\"replicas\":1,\"template\":"    \
	"{\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{"           \
	"\"requests\":{\"cpu\":\"1\"}}}]}}},\"Worker\":{\"replicas\":2,"       \
	"\"template\":{\"spec\":{" worker_extra "\"containers\":[{\"name\":"   \
	"\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}}}}}"

#define FLAVOR FX_SPOT_FLAVOR
#define ASSIGN FX_ASSIGN

/* The Workload rec_wl_build makes for d, stored and (adm != NULL)
 * admitted with status.admission adm. */
static void workload_of(
    const struct docjob *d, const char *adm, struct api_workload *wl)
{
	json_t *w = NULL, *md;
	char buf[2048];
	cu_error err;

	cr_assert_eq(
	    rec_wl_build(&d->view, NULL, &w, &err), CU_OK, "%s", err.msg);
	md = json_object_get(w, "metadata");
	json_object_set_new(md, "uid", json_string("wl-uid"));
	json_object_set_new(md, "resourceVersion", json_string("9"));
	if (adm != NULL) {
		snprintf(buf, sizeof(buf),
		    "{\"admission\":%s,\"conditions\":[{\"type\":"
		    "\"Admitted\",\"status\":\"True\",\"reason\":\"A\","
		    "\"message\":\"m\",\"lastTransitionTime\":"
		    "\"2026-01-01T00:00:00Z\"}]}",
		    adm);
		json_object_set_new(w, "status", parse(buf));
	}
	cr_assert_eq(api_workload_decode(wl, w, &err), CU_OK, "%s", err.msg);
	json_decref(w);
}

Test(framework, workload_name_and_owner)
{
	struct docjob d;
	json_t *w = NULL, *ref, *ps;
	char *hash = NULL, want[64];
	cu_error err;

	docjob_load(&d, "kubeflow.org/pytorchjob", PYTORCH("true", ""));
	cr_assert_eq(
	    rec_wl_build(&d.view, NULL, &w, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(api_workload_name("PyTorchJob", "kubeflow.org", "train",
			 "u-1", -1, API_WORKLOAD_NAME_MAX, &hash, &err),
	    CU_OK);
	snprintf(want, sizeof(want), "%s", hash);
	cu_free(hash);
	cr_assert_str_eq(json_string_value(json_object_get(
			     json_object_get(w, "metadata"), "name")),
	    want);
	cr_assert_eq(strncmp(want, "pytorchjob-train-", 17), 0, "%s", want);
	ref = json_array_get(
	    json_object_get(json_object_get(w, "metadata"), "ownerReferences"),
	    0);
	cr_assert_str_eq(api_json_str(ref, "apiVersion"), "kubeflow.org/v1");
	cr_assert_str_eq(api_json_str(ref, "kind"), "PyTorchJob");
	cr_assert_str_eq(api_json_str(ref, "uid"), "u-1");
	ps = json_object_get(json_object_get(w, "spec"), "podSets");
	cr_assert_eq(json_array_size(ps), 2);
	cr_assert_str_eq(api_json_str(json_array_get(ps, 1), "name"), "worker");
	cr_assert_str_eq(
	    api_json_str(json_object_get(w, "spec"), "queueName"), "lq");
	json_decref(w);
	docjob_dispose(&d);
}

static json_t *apply(const json_t *doc, const json_t *patch)
{
	json_t *out = NULL;
	cu_error err;

	cr_assert_eq(api_merge_patch_apply(&out, doc, patch, &err), CU_OK, "%s",
	    err.msg);
	return out;
}

static json_t *worker_spec(const json_t *doc)
{
	return json_object_get(
	    json_object_get(
		json_object_get(json_object_get(json_object_get(doc, "spec"),
				    "pytorchReplicaSpecs"),
		    "Worker"),
		"template"),
	    "spec");
}

Test(framework, start_then_stop_restores)
{
	struct docjob d, run;
	struct api_workload wl;
	struct api_resource_flavor fl;
	json_t *fj = parse(FLAVOR), *p = NULL, *after, *stopped;
	enum rec_stop_step step;
	cu_error err;

	cr_assert_eq(api_resource_flavor_decode(&fl, fj, &err), CU_OK);
	docjob_load(&d, "kubeflow.org/pytorchjob", PYTORCH("true", ""));
	workload_of(&d,
	    "{\"clusterQueue\":\"cq\",\"podSetAssignments\":[" ASSIGN(
		"master", 1) "," ASSIGN("worker", 2) "]}",
	    &wl);
	cr_assert_eq(rec_job_start_patch(&d.view, &wl, &fl, 1, &p, &err), CU_OK,
	    "%s", err.msg);
	cr_assert_str_eq(
	    api_json_str(json_object_get(p, "metadata"), "resourceVersion"),
	    "7");
	after = apply(d.doc, p);
	json_decref(p);
	cr_assert(json_is_false(json_object_get(
	    json_object_get(json_object_get(after, "spec"), "runPolicy"),
	    "suspend")));
	cr_assert_str_eq(
	    api_json_str(
		json_object_get(worker_spec(after), "nodeSelector"), "pool"),
	    "spot");
	cr_assert_eq(
	    json_array_size(json_object_get(worker_spec(after), "tolerations")),
	    1);

	/* Evicted: suspend, and the templates are the Workload's again. */
	run.doc = after;
	cr_assert_eq(api_meta_decode(
			 &run.meta, json_object_get(after, "metadata"), &err),
	    CU_OK);
	run.view = d.view;
	run.view.doc = after;
	run.view.meta = &run.meta;
	cr_assert(!rec_job_is_suspended(&run.view));
	cr_assert_eq(
	    rec_job_stop_patch(&run.view, &wl, &step, &p, &err), CU_OK);
	cr_assert_eq(step, REC_STOP_SUSPEND);
	stopped = apply(after, p);
	json_decref(p);
	cr_assert(json_is_true(json_object_get(
	    json_object_get(json_object_get(stopped, "spec"), "runPolicy"),
	    "suspend")));
	cr_assert_null(json_object_get(worker_spec(stopped), "nodeSelector"));
	cr_assert_null(json_object_get(worker_spec(stopped), "tolerations"));
	json_decref(stopped);
	docjob_dispose(&run);
	api_workload_dispose(&wl);
	api_resource_flavor_dispose(&fl);
	json_decref(fj);
	docjob_dispose(&d);
}

Test(framework, start_count_mismatch_refused)
{
	struct docjob d;
	struct api_workload wl;
	struct api_resource_flavor fl;
	json_t *fj = parse(FLAVOR), *p = NULL;
	cu_error err;

	cr_assert_eq(api_resource_flavor_decode(&fl, fj, &err), CU_OK);
	docjob_load(&d, "kubeflow.org/pytorchjob", PYTORCH("true", ""));
	workload_of(&d,
	    "{\"clusterQueue\":\"cq\",\"podSetAssignments\":[" ASSIGN(
		"master", 1) "]}",
	    &wl);
	cr_assert_eq(
	    rec_job_start_patch(&d.view, &wl, &fl, 1, &p, &err), CU_EINVAL);
	cr_assert_null(p);
	cr_assert(strstr(err.msg, "expecting 2 podset, got 1") != NULL, "%s",
	    err.msg);
	api_workload_dispose(&wl);
	api_resource_flavor_dispose(&fl);
	json_decref(fj);
	docjob_dispose(&d);
}

/* A stopped job stays as it is: nothing to send. */
Test(framework, stop_of_suspended_is_nothing)
{
	struct docjob d;
	struct api_workload wl;
	json_t *p = NULL;
	enum rec_stop_step step;
	cu_error err;

	docjob_load(&d, "kubeflow.org/pytorchjob", PYTORCH("true", ""));
	workload_of(&d, NULL, &wl);
	cr_assert_eq(rec_job_stop_patch(&d.view, &wl, &step, &p, &err), CU_OK);
	cr_assert_null(p);
	cr_assert_eq(step, REC_STOP_DONE);
	api_workload_dispose(&wl);
	docjob_dispose(&d);
}

/* ---- serving: StatefulSet, LeaderWorkerSet (reconcile/fw_serving.c) ---- */

/* A serving parent: metadata, then rest (spec, status). */
static void serving_load(struct docjob *d, const char *fw, const char *rest)
{
	char text[4096];

	snprintf(text, sizeof(text), "{" META ",%s}", rest);
	docjob_load(d, fw, text);
}

#define STS "statefulset"
#define LWS "leaderworkerset.x-k8s.io/leaderworkerset"

Test(framework, serving_rows_are_pods_only)
{
	const struct rec_fw *sts = rec_fw_by_kind("apps", "StatefulSet");
	const struct rec_fw *lws =
	    rec_fw_by_kind("leaderworkerset.x-k8s.io", "LeaderWorkerSet");

	cr_assert_not_null(sts);
	cr_assert_not_null(lws);
	cr_assert_eq(rec_fw_by_name(STS), sts);
	cr_assert_eq(rec_fw_by_name(LWS), lws);
	cr_assert(rec_fw_pods_only(sts));
	cr_assert(rec_fw_pods_only(lws));
	cr_assert_not(rec_fw_pods_only(rec_fw_by_name("pod")));
	cr_assert_not(rec_fw_pods_only(rec_fw_by_name("batch/job")));
	cr_assert_not(rec_fw_pods_only(NULL));
	cr_assert_null(rec_fw_by_kind("apps", "Deployment"));
	cr_assert_str_eq(sts->pod_index_label, "apps.kubernetes.io/pod-index");
}

struct sps_row {
	const char *fw, *rest;
	const char *want; /* "name:count:cpu-milli,..." or "!<field>" */
};

static const struct sps_row sps_rows[] = {
    {STS, "\"spec\":{\"replicas\":3,\"template\":" TPL("500m") "}",
	"main:3:500"},
    {STS, "\"spec\":{\"template\":" TPL("1") "}", "main:1:1000"},
    {STS, "\"spec\":{\"replicas\":0,\"template\":" TPL("1") "}", "main:0:1000"},
    {LWS,
	"\"spec\":{\"replicas\":2,\"leaderWorkerTemplate\":{\"size\":3,"
	"\"leaderTemplate\":" TPL("100m") ",\"workerTemplate\":" TPL(
	    "200m") "}}",
	"leader:1:100,worker:2:200"},
    {LWS,
	"\"spec\":{\"leaderWorkerTemplate\":{\"size\":4,"
	"\"workerTemplate\":" TPL("250m") "}}",
	"main:4:250"},
    {LWS,
	"\"spec\":{\"leaderWorkerTemplate\":{\"workerTemplate\":" TPL("1") "}}",
	"main:1:1000"},
    {STS, "\"spec\":{\"replicas\":-1,\"template\":" TPL("1") "}",
	"!spec.replicas: Invalid value: -1"},
    {LWS,
	"\"spec\":{\"leaderWorkerTemplate\":{\"size\":0,"
	"\"leaderTemplate\":" TPL("1") ",\"workerTemplate\":" TPL("1") "}}",
	"!spec.leaderWorkerTemplate.size: Invalid value: -1"},
    {STS, "\"spec\":{\"replicas\":2}", "!spec.template"},
    {LWS, "\"spec\":{\"leaderWorkerTemplate\":{\"size\":2}}",
	"!spec.leaderWorkerTemplate.workerTemplate"},
};

static void serving_podsets_row(const struct sps_row *r)
{
	struct docjob d;
	struct api_podsets ps;
	char got[512] = "";
	size_t used = 0, i;
	cu_error err;
	int rc;

	serving_load(&d, r->fw, r->rest);
	rc = rec_job_podsets(&d.view, &ps, &err);
	if (r->want[0] == '!') {
		cr_assert_eq(rc, CU_EINVAL, "%s", r->rest);
		cr_assert(strstr(err.msg, r->want + 1) != NULL, "%s", err.msg);
		docjob_dispose(&d);
		return;
	}
	cr_assert_eq(rc, CU_OK, "%s", err.msg);
	for (i = 0; i < ps.n; i++)
		used += (size_t)snprintf(got + used, sizeof(got) - used,
		    "%s%s:%d:%lld", i ? "," : "", ps.items[i].name,
		    (int)ps.items[i].count,
		    (long long)ps.items[i].requests[0].milli);
	cr_assert_str_eq(got, r->want, "%s", r->rest);
	api_podsets_dispose(&ps);
	docjob_dispose(&d);
}

Test(framework, serving_podsets)
{
	size_t i;

	for (i = 0; i < sizeof(sps_rows) / sizeof(sps_rows[0]); i++)
		serving_podsets_row(&sps_rows[i]);
}

struct sst_row {
	const char *fw, *rest;
	bool active, ready;
};

static const struct sst_row sst_rows[] = {
    {STS,
	"\"spec\":{\"replicas\":2},\"status\":{\"replicas\":2,"
	"\"readyReplicas\":2}",
	true, true},
    {STS,
	"\"spec\":{\"replicas\":2},\"status\":{\"replicas\":2,"
	"\"readyReplicas\":1}",
	true, false},
    {STS, "\"spec\":{\"replicas\":0},\"status\":{\"replicas\":0}", false,
	false},
    {LWS, "\"spec\":{},\"status\":{\"replicas\":1,\"readyReplicas\":1}", true,
	true},
    {LWS, "\"spec\":{\"replicas\":3}", false, false},
};

Test(framework, serving_state)
{
	size_t i;

	for (i = 0; i < sizeof(sst_rows) / sizeof(sst_rows[0]); i++) {
		const struct sst_row *r = &sst_rows[i];
		struct docjob d;
		bool ok = true;
		const char *msg = NULL;

		serving_load(&d, r->fw, r->rest);
		cr_assert_not(rec_job_is_suspended(&d.view), "%s", r->rest);
		cr_assert_not(rec_job_finished(&d.view, &ok, &msg));
		cr_assert_eq(
		    rec_job_is_active(&d.view), r->active, "%s", r->rest);
		cr_assert_eq(rec_job_pods_ready(&d.view, NULL, NULL), r->ready,
		    "%s", r->rest);
		docjob_dispose(&d);
	}
}
