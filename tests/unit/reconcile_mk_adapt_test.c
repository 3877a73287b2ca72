/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/reconcile_mk_adapt_test.c - the MultiKueue adapter table
 * (reconcile/mk_adapt.c), row by row: which frameworks have one (Kueue's
 * list), the copy each creates on a worker (managedBy cleared at the
 * kind's own path, Kueue's labels, no status, a TrainJob's Kueue runtime
 * patch dropped), what is copied back, and how each kind's running pods
 * are cleared from the manager's copy.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "api/json.h"
#include "reconcile/reconcile.h"
#include "tests/unit/fixtures.h"

static const struct rec_mk_adapter *row(const char *fw)
{
	return rec_mk_adapter_of(rec_fw_by_name(fw));
}

/* Kueue has an adapter for these (pkg/controller/jobs/ at its HEAD); the
 * pod-group kinds and SparkApplication have none here. */
Test(mk_adapt, rows_are_kueues_list)
{
	static const char *const with[] = {"batch/job",
	    "jobset.x-k8s.io/jobset", "kubeflow.org/pytorchjob",
	    "kubeflow.org/tfjob", "kubeflow.org/xgboostjob",
	    "kubeflow.org/paddlejob", "kubeflow.org/jaxjob",
	    "kubeflow.org/mpijob", "ray.io/rayjob", "ray.io/raycluster",
	    "ray.io/rayservice", "workload.codeflare.dev/appwrapper",
	    "trainer.kubeflow.org/trainjob", NULL};
	static const char *const without[] = {
	    "sparkoperator.k8s.io/sparkapplication", NULL};
	const struct rec_mk_adapter *a;
	size_t i, n = 0;

	for (i = 0; with[i] != NULL; i++)
		cr_expect_not_null(row(with[i]), "%s", with[i]);
	for (i = 0; without[i] != NULL; i++)
		cr_expect_null(row(without[i]), "%s", without[i]);
	cr_expect_null(rec_mk_adapter_of(NULL));
	/* Every row names a descriptor with a managedBy path. */
	for (i = 0; (a = rec_mk_adapter_at(i)) != NULL; i++, n++) {
		const struct rec_fw *fw = rec_fw_by_name(a->fw);

		cr_assert_not_null(fw, "%s", a->fw);
		cr_expect_not_null(fw->managed_by, "%s", a->fw);
		cr_expect_not_null(a->managed_by_field, "%s", a->fw);
	}
	cr_expect_eq(n, 13);
}

/* What each row creates on the worker from the manager's job. */
Test(mk_adapt, the_copy_created_on_the_worker)
{
	static const struct {
		const char *fw, *doc;
		const char *api_version;
		const char *const managed[4]; /* the managedBy path */
		const char *kept;	      /* a spec key kept */
	} rows[] = {
	    {"kubeflow.org/pytorchjob",
		"{\"spec\":{\"runPolicy\":{\"suspend\":true,\"managedBy\":"
		"\"kueue.x-k8s.io/multikueue\"},\"pytorchReplicaSpecs\":{}}}",
		"kubeflow.org/v1", {"spec", "runPolicy", "managedBy", NULL},
		"pytorchReplicaSpecs"},
	    {"kubeflow.org/mpijob",
		"{\"spec\":{\"runPolicy\":{\"managedBy\":"
		"\"kueue.x-k8s.io/multikueue\"},\"mpiReplicaSpecs\":{}}}",
		"kubeflow.org/v2beta1",
		{"spec", "runPolicy", "managedBy", NULL}, "mpiReplicaSpecs"},
	    {"ray.io/rayjob",
		"{\"spec\":{\"suspend\":true,\"managedBy\":"
		"\"kueue.x-k8s.io/multikueue\",\"entrypoint\":\"e\"}}",
		"ray.io/v1", {"spec", "managedBy", NULL}, "entrypoint"},
	    {"ray.io/raycluster",
		"{\"spec\":{\"managedBy\":\"kueue.x-k8s.io/multikueue\","
		"\"headGroupSpec\":{}}}",
		"ray.io/v1", {"spec", "managedBy", NULL}, "headGroupSpec"},
	    {"workload.codeflare.dev/appwrapper",
		"{\"spec\":{\"managedBy\":\"kueue.x-k8s.io/multikueue\","
		"\"components\":[]}}",
		"workload.codeflare.dev/v1beta2", {"spec", "managedBy", NULL},
		"components"},
	    {"jobset.x-k8s.io/jobset",
		"{\"spec\":{\"managedBy\":\"kueue.x-k8s.io/multikueue\","
		"\"replicatedJobs\":[]}}",
		"jobset.x-k8s.io/v1alpha2", {"spec", "managedBy", NULL},
		"replicatedJobs"},
	};
	size_t r;

	for (r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		const struct rec_fw *fw = rec_fw_by_name(rows[r].fw);
		json_t *doc = fx_parse(rows[r].doc), *md, *rj, *v;
		size_t i;

		md = json_pack("{s:s, s:s, s:s, s:s, s:{s:s}}", "name", "j",
		    "namespace", "ns", "uid", "u1", "resourceVersion", "7",
		    "labels", "app", "a");
		json_object_set_new(doc, "metadata", md);
		json_object_set_new(
		    doc, "status", json_pack("{s:s}", "phase", "x"));
		rj = rec_mk_remote_job(fw, doc, "wl-1", "org");
		cr_assert_not_null(rj, "%s", rows[r].fw);
		cr_expect_str_eq(api_json_str(rj, "apiVersion"),
		    rows[r].api_version, "%s", rows[r].fw);
		cr_expect_str_eq(api_json_str(rj, "kind"), fw->kind);
		md = json_object_get(rj, "metadata");
		cr_expect_str_eq(api_json_str(md, "name"), "j");
		cr_expect_null(json_object_get(md, "uid"), "%s", rows[r].fw);
		cr_expect_null(json_object_get(md, "resourceVersion"));
		v = json_object_get(md, "labels");
		cr_expect_str_eq(
		    api_json_str(v, REC_PREBUILT_WORKLOAD), "wl-1");
		cr_expect_str_eq(api_json_str(v, REC_MK_ORIGIN_LABEL), "org");
		cr_expect_str_eq(api_json_str(v, "app"), "a");
		cr_expect_null(json_object_get(rj, "status"), "%s", rows[r].fw);
		for (v = rj, i = 0; v != NULL && rows[r].managed[i + 1]; i++)
			v = json_object_get(v, rows[r].managed[i]);
		cr_expect_not_null(
		    v, "%s: the managedBy parent kept", rows[r].fw);
		cr_expect_null(json_object_get(v, rows[r].managed[i]),
		    "%s: managedBy cleared", rows[r].fw);
		cr_expect_not_null(
		    json_object_get(json_object_get(rj, "spec"), rows[r].kept),
		    "%s", rows[r].fw);
		json_decref(rj);
		json_decref(doc);
	}
	/* No adapter: nothing is created. */
	{
		json_t *spark = fx_parse("{\"spec\":{}}");

		cr_expect_null(rec_mk_remote_job(
		    rec_fw_by_name("sparkoperator.k8s.io/sparkapplication"),
		    spark, "wl", "org"));
		json_decref(spark);
	}
}

/* A TrainJob loses Kueue's runtime patch (the worker's Kueue writes its
 * own), keeps the others'. */
Test(mk_adapt, trainjob_drops_kueues_runtime_patch)
{
	json_t *doc = fx_parse(
	    "{\"metadata\":{\"name\":\"t\",\"namespace\":\"ns\"},\"spec\":{"
	    "\"managedBy\":\"kueue.x-k8s.io/multikueue\",\"runtimePatches\":["
	    "{\"manager\":\"kueue.x-k8s.io/manager\"},{\"manager\":\"me\"}]}}");
	json_t *only = fx_parse(
	    "{\"metadata\":{\"name\":\"t\",\"namespace\":\"ns\"},\"spec\":{"
	    "\"runtimePatches\":[{\"manager\":\"kueue.x-k8s.io/manager\"}]}}");
	const struct rec_fw *fw =
	    rec_fw_by_name("trainer.kubeflow.org/trainjob");
	json_t *rj = rec_mk_remote_job(fw, doc, "wl", "org"), *ps;

	cr_assert_not_null(rj);
	ps = json_object_get(json_object_get(rj, "spec"), "runtimePatches");
	cr_assert_eq(json_array_size(ps), 1);
	cr_expect_str_eq(api_json_str(json_array_get(ps, 0), "manager"), "me");
	cr_expect_null(
	    json_object_get(json_object_get(rj, "spec"), "managedBy"));
	/* The manager's own object is left as it was. */
	cr_expect_eq(json_array_size(json_object_get(
			 json_object_get(doc, "spec"), "runtimePatches")),
	    2);
	json_decref(rj);
	rj = rec_mk_remote_job(fw, only, "wl", "org");
	cr_assert_not_null(rj);
	cr_expect_null(
	    json_object_get(json_object_get(rj, "spec"), "runtimePatches"));
	json_decref(rj);
	json_decref(only);
	json_decref(doc);
}

/* What is copied back: every row copies the worker's whole status (as
 * every Kueue adapter does); equal statuses give no patch. */
Test(mk_adapt, the_status_copied_back)
{
	static const char *const fws[] = {"kubeflow.org/pytorchjob",
	    "kubeflow.org/mpijob", "ray.io/rayjob", "ray.io/raycluster",
	    "workload.codeflare.dev/appwrapper",
	    "trainer.kubeflow.org/trainjob", NULL};
	json_t *local = fx_parse("{\"status\":{\"phase\":\"Running\","
				 "\"startTime\":\"t0\"}}");
	json_t *remote = fx_parse(
	    "{\"status\":{\"phase\":\"Succeeded\",\"jobDeploymentStatus\":"
	    "\"Complete\",\"conditions\":[{\"type\":\"Succeeded\","
	    "\"status\":\"True\"}]}}");
	size_t i;

	for (i = 0; fws[i] != NULL; i++) {
		const struct rec_mk_adapter *a = row(fws[i]);
		json_t *p = rec_mk_job_status_patch(a, local, remote);
		json_t *want = fx_parse(
		    "{\"status\":{\"phase\":\"Succeeded\","
		    "\"jobDeploymentStatus\":\"Complete\",\"conditions\":[{"
		    "\"type\":\"Succeeded\",\"status\":\"True\"}],"
		    "\"startTime\":null}}");

		cr_assert_not_null(a, "%s", fws[i]);
		cr_expect(json_equal(p, want), "%s", fws[i]);
		cr_expect_null(rec_mk_job_status_patch(a, remote, remote),
		    "%s: equal", fws[i]);
		json_decref(want);
		json_decref(p);
	}
	json_decref(local);
	json_decref(remote);
}

/* How each kind's running pods are cleared from the manager's copy once
 * the worker that ran them is gone: the patch, or none when it shows
 * none. */
Test(mk_adapt, running_pods_cleared)
{
	static const struct {
		const char *fw, *status, *want; /* want NULL: no patch */
	} rows[] = {
	    {"kubeflow.org/pytorchjob",
		"{\"replicaStatuses\":{\"Master\":{\"active\":1},"
		"\"Worker\":{\"active\":2,\"succeeded\":1}}}",
		"{\"replicaStatuses\":{\"Master\":{\"active\":0},"
		"\"Worker\":{\"active\":0,\"succeeded\":1}}}"},
	    {"kubeflow.org/mpijob",
		"{\"replicaStatuses\":{\"Launcher\":{\"succeeded\":1}}}", NULL},
	    {"ray.io/rayjob", "{\"jobDeploymentStatus\":\"Running\"}",
		"{\"jobDeploymentStatus\":\"Suspended\"}"},
	    {"ray.io/rayjob", "{\"jobDeploymentStatus\":\"Suspended\"}", NULL},
	    {"ray.io/raycluster", "{\"state\":\"ready\"}",
		"{\"state\":\"suspended\"}"},
	    {"ray.io/rayservice", "{\"serviceStatus\":\"Running\"}",
		"{\"serviceStatus\":null}"},
	    {"ray.io/rayservice", "{}", NULL},
	    {"workload.codeflare.dev/appwrapper",
		"{\"phase\":\"Running\",\"conditions\":[{\"type\":"
		"\"QuotaReserved\",\"status\":\"True\"},{\"type\":"
		"\"PodsReady\",\"status\":\"True\"}]}",
		"{\"conditions\":[{\"type\":\"QuotaReserved\",\"status\":"
		"\"False\"},{\"type\":\"PodsReady\",\"status\":\"True\"}]}"},
	    {"workload.codeflare.dev/appwrapper",
		"{\"conditions\":[{\"type\":\"QuotaReserved\",\"status\":"
		"\"False\"}]}",
		NULL},
	    {"trainer.kubeflow.org/trainjob",
		"{\"jobsStatus\":[{\"name\":\"node\",\"active\":2,\"ready\":"
		"2}]}",
		"{\"jobsStatus\":[{\"name\":\"node\",\"active\":0,\"ready\":"
		"0}]}"},
	    {"batch/job", "{\"active\":1,\"ready\":1}",
		"{\"active\":null,\"ready\":0}"},
	};
	size_t r;

	for (r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		json_t *doc =
		    json_pack("{s:o}", "status", fx_parse(rows[r].status));
		json_t *p = rec_mk_job_inactive_patch(row(rows[r].fw), doc);

		if (rows[r].want == NULL) {
			cr_expect_null(p, "%s %s", rows[r].fw, rows[r].status);
		} else {
			json_t *want = fx_parse(rows[r].want);

			cr_expect(
			    json_equal(json_object_get(p, "status"), want),
			    "%s %s", rows[r].fw, rows[r].status);
			json_decref(want);
		}
		json_decref(p);
		json_decref(doc);
	}
	{
		json_t *job = fx_parse("{\"status\":{\"active\":1}}");

		cr_expect_null(rec_mk_job_inactive_patch(NULL, job));
		json_decref(job);
	}
}
