/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/reconcile_fw_ray_test.c - the Ray shape of the framework
 * descriptors (reconcile/fw_ray.c, docs/frameworks.md), table-driven:
 *
 *   pod sets:  RayJob / RayCluster: head (1), worker groups lower-cased
 *              with replicas (default 1) x numOfHosts, a RayJob in
 *              K8sJobMode adds submitter (its template, else KubeRay's
 *              default 500m); a negative count refused naming the field
 *   state:     suspended (spec.suspend); RayJob finished on
 *              jobDeploymentStatus Complete / Failed (success from
 *              jobStatus, message), active unless New or Suspended, ready from
 *              rayClusterStatus.state; RayCluster never finished, active
 *              and ready while status.state is ready
 *   start/stop: start unsuspends and merges the flavor into the head and
 *              worker templates (the default submitter has none to merge
 *              into and is skipped); stop suspends and restores them
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "api/json.h"
#include "tests/unit/fixtures.h"

#define META                                                                   \
	"\"metadata\":{\"name\":\"r\",\"namespace\":\"ns\",\"uid\":"           \
	"\"u-1\",\"resourceVersion\":\"7\",\"labels\":{"                       \
	"\"kueue.x-k8s.io/queue-name\":\"lq\"}}"
#define TPL(cpu)                                                               \
	"{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"ray:1\","      \
	"\"resources\":{\"requests\":{\"cpu\":\"" cpu "\"}}}]}}"
#define HEAD "\"headGroupSpec\":{\"template\":" TPL("1") "}"
#define GROUP(name, extra, cpu)                                                \
	"{\"groupName\":\"" name "\"," extra "\"template\":" TPL(cpu) "}"
#define CLUSTER(groups) "{" HEAD ",\"workerGroupSpecs\":[" groups "]}"

/* ---- pod sets ---------------------------------------------------------- */

struct ps_row {
	const char *fw, *doc;
	const char *want; /* "name:count:cpu-milli,..." */
};

static const struct ps_row ps_rows[] = {
    {"ray.io/raycluster",
	"{" META ",\"spec\":" CLUSTER(GROUP("Small-Group",
	    "\"replicas\":2,\"minReplicas\":1,"
	    "\"maxReplicas\":5,",
	    "200m") "," GROUP("gpu", "", "2")) "}",
	"head:1:1000,small-group:2:200,gpu:1:2000"},
    {"ray.io/raycluster",
	"{" META ",\"spec\":" CLUSTER(
	    GROUP("tpu", "\"replicas\":2,\"numOfHosts\":4,", "1")) "}",
	"head:1:1000,tpu:8:1000"},
    {"ray.io/raycluster", "{" META ",\"spec\":{" HEAD "}}", "head:1:1000"},
    /* RayJob: no submissionMode (HTTPMode in effect): no submitter */
    {"ray.io/rayjob",
	"{" META ",\"spec\":{\"rayClusterSpec\":" CLUSTER(
	    GROUP("w", "\"replicas\":3,", "500m")) "}}",
	"head:1:1000,w:3:500"},
    {"ray.io/rayjob",
	"{" META ",\"spec\":{\"submissionMode\":\"K8sJobMode\","
	"\"rayClusterSpec\":" CLUSTER(GROUP("w", "", "500m")) "}}",
	"head:1:1000,w:1:500,submitter:1:500"},
    {"ray.io/rayjob",
	"{" META ",\"spec\":{\"submissionMode\":\"K8sJobMode\","
	"\"submitterPodTemplate\":" TPL("100m") ",\"rayClusterSpec\":" CLUSTER(
	    "") "}}",
	"head:1:1000,submitter:1:100"},
    {"ray.io/rayjob",
	"{" META ",\"spec\":{\"submissionMode\":\"InteractiveMode\","
	"\"rayClusterSpec\":" CLUSTER("") "}}",
	"head:1:1000"},
    /* RayService: the cluster of spec.rayClusterConfig */
    {"ray.io/rayservice",
	"{" META ",\"spec\":{\"rayClusterConfig\":" CLUSTER(
	    GROUP("w", "\"replicas\":2,", "500m")) "}}",
	"head:1:1000,w:2:500"},
};

static void podsets_row(const struct ps_row *r)
{
	struct fx_docjob d;
	struct api_podsets ps;
	char got[512] = "";
	size_t used = 0, i;
	cu_error err;

	fx_docjob_load(&d, r->fw, r->doc);
	cr_assert_eq(rec_job_podsets(&d.view, &ps, &err), CU_OK, "%s", err.msg);
	for (i = 0; i < ps.n; i++) {
		cr_assert_geq(ps.items[i].n_requests, 1);
		used += (size_t)snprintf(got + used, sizeof(got) - used,
		    "%s%s:%d:%lld", i ? "," : "", ps.items[i].name,
		    (int)ps.items[i].count,
		    (long long)ps.items[i].requests[0].milli);
		cr_assert_not_null(ps.items[i].template);
	}
	cr_assert_str_eq(got, r->want, "%s", r->doc);
	api_podsets_dispose(&ps);
	fx_docjob_dispose(&d);
}

Test(fw_ray, podsets)
{
	size_t i;

	for (i = 0; i < sizeof(ps_rows) / sizeof(ps_rows[0]); i++)
		podsets_row(&ps_rows[i]);
}

Test(fw_ray, default_submitter_template)
{
	struct fx_docjob d;
	struct api_podsets ps;
	cu_error err;
	json_t *c;

	fx_docjob_load(&d, "ray.io/rayjob",
	    "{" META ",\"spec\":{\"submissionMode\":\"K8sJobMode\","
	    "\"rayClusterSpec\":" CLUSTER("") "}}");
	cr_assert_eq(rec_job_podsets(&d.view, &ps, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(ps.n, 2);
	c = json_array_get(
	    json_object_get(
		json_object_get(ps.items[1].template, "spec"), "containers"),
	    0);
	cr_assert_str_eq(api_json_str(c, "name"), "ray-job-submitter");
	cr_assert_str_eq(api_json_str(c, "image"), "ray:1");
	cr_assert_str_eq(ps.items[1].requests[0].name, "cpu");
	cr_assert_str_eq(ps.items[1].requests[1].name, "memory");
	api_podsets_dispose(&ps);
	fx_docjob_dispose(&d);
}

Test(fw_ray, negative_replicas_refused)
{
	struct fx_docjob d;
	struct api_podsets ps;
	cu_error err;

	fx_docjob_load(&d, "ray.io/rayjob",
	    "{" META ",\"spec\":{\"rayClusterSpec\":" CLUSTER(
		GROUP("w", "\"replicas\":-2,", "1")) "}}");
	cr_assert_eq(rec_job_podsets(&d.view, &ps, &err), CU_EINVAL);
	cr_assert(
	    strstr(err.msg,
		"spec.rayClusterSpec.workerGroupSpecs[0].replicas") != NULL,
	    "%s", err.msg);
	fx_docjob_dispose(&d);
}

/* ---- state ------------------------------------------------------------- */

struct st_row {
	const char *fw, *rest; /* after metadata: spec and status */
	struct fx_state want;
};

static const struct st_row st_rows[] = {
    {"ray.io/rayjob",
	"\"spec\":{\"suspend\":true},\"status\":{\"jobDeploymentStatus\":"
	"\"Suspended\"}",
	{true, false, false, false, false, NULL}},
    {"ray.io/rayjob",
	"\"spec\":{\"suspend\":false},\"status\":{\"jobDeploymentStatus\":"
	"\"Running\",\"jobStatus\":\"RUNNING\",\"rayClusterStatus\":{"
	"\"state\":\"ready\"}}",
	{false, false, false, true, true, NULL}},
    {"ray.io/rayjob",
	"\"spec\":{},\"status\":{\"jobDeploymentStatus\":\"Complete\","
	"\"jobStatus\":\"SUCCEEDED\",\"message\":\"done\"}",
	{false, true, true, true, false, "done"}},
    {"ray.io/rayjob",
	"\"spec\":{},\"status\":{\"jobDeploymentStatus\":\"Failed\","
	"\"jobStatus\":\"FAILED\",\"message\":\"boom\"}",
	{false, true, false, true, false, "boom"}},
    {"ray.io/rayjob",
	"\"spec\":{},\"status\":{\"jobDeploymentStatus\":\"Complete\"}",
	{false, true, false, true, false, ""}},
    /* New (no jobDeploymentStatus yet, as a RayJob its operator leaves
     * alone: spec.managedBy) is not active, as in Kueue */
    {"ray.io/rayjob", "\"spec\":{\"suspend\":true}",
	{true, false, false, false, false, NULL}},
    {"ray.io/rayjob",
	"\"spec\":{\"suspend\":true},\"status\":{\"jobDeploymentStatus\":"
	"\"\"}",
	{true, false, false, false, false, NULL}},
    {"ray.io/raycluster",
	"\"spec\":{\"suspend\":true},\"status\":{\"state\":\"suspended\"}",
	{true, false, false, false, false, NULL}},
    {"ray.io/raycluster", "\"spec\":{},\"status\":{\"state\":\"ready\"}",
	{false, false, false, true, true, NULL}},
    {"ray.io/raycluster", "\"spec\":{},\"status\":{\"state\":\"failed\"}",
	{false, false, false, false, false, NULL}},
    /* RayService: suspended through rayClusterConfig.suspend, never
     * finished, active and ready while its service is Running */
    {"ray.io/rayservice",
	"\"spec\":{\"suspend\":false,\"rayClusterConfig\":{\"suspend\":"
	"true}},\"status\":{}",
	{true, false, false, false, false, NULL}},
    {"ray.io/rayservice",
	"\"spec\":{\"rayClusterConfig\":{}},\"status\":{\"serviceStatus\":"
	"\"Running\",\"activeServiceStatus\":{\"rayClusterStatus\":{"
	"\"state\":\"ready\"}}}",
	{false, false, false, true, true, NULL}},
    {"ray.io/rayservice", "\"spec\":{\"rayClusterConfig\":{}},\"status\":{}",
	{false, false, false, false, false, NULL}},
};

static void state_row(const struct st_row *r)
{
	char text[2048];

	snprintf(text, sizeof(text), "{" META ",%s}", r->rest);
	fx_docjob_check_state(r->fw, text, &r->want);
}

Test(fw_ray, state)
{
	size_t i;

	for (i = 0; i < sizeof(st_rows) / sizeof(st_rows[0]); i++)
		state_row(&st_rows[i]);
}

/* ---- start and stop ---------------------------------------------------- */

#define FLAVOR                                                                 \
	"{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"                 \
	"\"ResourceFlavor\",\"metadata\":{\"name\":\"spot\"},\"spec\":{"       \
	"\"nodeLabels\":{\"pool\":\"spot\"}}}"
#define ASSIGN(n, c)                                                           \
	"{\"name\":\"" n "\",\"flavors\":{\"cpu\":\"spot\"},"                  \
	"\"resourceUsage\":{\"cpu\":\"" #c "\"},\"count\":" #c "}"

/* The node selector of the head (group < 0) or worker group's template
 * in a RayJob document. */
static const char *pool_of(const json_t *doc, int group)
{
	json_t *cs = json_object_get(
		   json_object_get(doc, "spec"), "rayClusterSpec"),
	       *t = group < 0 ? json_object_get(cs, "headGroupSpec")
			      : json_array_get(
				    json_object_get(cs, "workerGroupSpecs"),
				    (size_t)group);

	return api_json_str(
	    json_object_get(
		json_object_get(json_object_get(t, "template"), "spec"),
		"nodeSelector"),
	    "pool");
}

Test(fw_ray, rayjob_start_then_stop_restores)
{
	struct fx_docjob d, run;
	struct api_workload wl;
	struct api_resource_flavor fl;
	json_t *fj = fx_parse(FLAVOR), *p = NULL, *after, *stopped;
	enum rec_stop_step step;
	cu_error err;

	cr_assert_eq(api_resource_flavor_decode(&fl, fj, &err), CU_OK);
	fx_docjob_load(&d, "ray.io/rayjob",
	    "{\"apiVersion\":\"ray.io/v1\",\"kind\":\"RayJob\"," META
	    ",\"spec\":{\"suspend\":true,\"submissionMode\":\"K8sJobMode\","
	    "\"rayClusterSpec\":" CLUSTER(
		GROUP("W", "\"replicas\":2,", "1")) "}}");
	fx_docjob_workload(&d,
	    "{\"clusterQueue\":\"cq\",\"podSetAssignments\":[" ASSIGN(
		"head", 1) "," ASSIGN("w", 2) "," ASSIGN("submitter", 1) "]}",
	    &wl);
	cr_assert_eq(rec_job_start_patch(&d.view, &wl, &fl, 1, &p, &err), CU_OK,
	    "%s", err.msg);
	after = fx_apply(d.doc, p);
	json_decref(p);
	cr_assert(json_is_false(
	    json_object_get(json_object_get(after, "spec"), "suspend")));
	cr_assert_str_eq(pool_of(after, -1), "spot");
	cr_assert_str_eq(pool_of(after, 0), "spot");
	cr_assert_null(json_object_get(
	    json_object_get(after, "spec"), "submitterPodTemplate"));

	fx_docjob_adopt(&run, &d, after);
	cr_assert_eq(
	    rec_job_stop_patch(&run.view, &wl, &step, &p, &err), CU_OK);
	cr_assert_eq(step, REC_STOP_SUSPEND);
	stopped = fx_apply(after, p);
	json_decref(p);
	cr_assert(json_is_true(
	    json_object_get(json_object_get(stopped, "spec"), "suspend")));
	cr_assert_null(pool_of(stopped, -1));
	cr_assert_null(pool_of(stopped, 0));
	json_decref(stopped);
	fx_docjob_dispose(&run);
	api_workload_dispose(&wl);
	api_resource_flavor_dispose(&fl);
	json_decref(fj);
	fx_docjob_dispose(&d);
}

Test(fw_ray, raycluster_start_merges_every_group)
{
	struct fx_docjob d;
	struct api_workload wl;
	struct api_resource_flavor fl;
	json_t *fj = fx_parse(FLAVOR), *p = NULL, *after, *groups;
	cu_error err;

	cr_assert_eq(api_resource_flavor_decode(&fl, fj, &err), CU_OK);
	fx_docjob_load(&d, "ray.io/raycluster",
	    "{\"apiVersion\":\"ray.io/v1\",\"kind\":\"RayCluster\"," META
	    ",\"spec\":{\"suspend\":true," HEAD ",\"workerGroupSpecs\":[" GROUP(
		"a", "", "1") "," GROUP("b", "", "1") "]}}");
	fx_docjob_workload(&d,
	    "{\"clusterQueue\":\"cq\",\"podSetAssignments\":[" ASSIGN(
		"head", 1) "," ASSIGN("a", 1) "," ASSIGN("b", 1) "]}",
	    &wl);
	cr_assert_eq(rec_job_start_patch(&d.view, &wl, &fl, 1, &p, &err), CU_OK,
	    "%s", err.msg);
	after = fx_apply(d.doc, p);
	json_decref(p);
	groups =
	    json_object_get(json_object_get(after, "spec"), "workerGroupSpecs");
	cr_assert_str_eq(
	    api_json_str(
		json_object_get(
		    json_object_get(
			json_object_get(json_array_get(groups, 1), "template"),
			"spec"),
		    "nodeSelector"),
		"pool"),
	    "spot");
	json_decref(after);
	api_workload_dispose(&wl);
	api_resource_flavor_dispose(&fl);
	json_decref(fj);
	fx_docjob_dispose(&d);
}

/* The head template's node selector pool in a RayService document. */
static const char *service_pool(const json_t *doc)
{
	json_t *cc =
	    json_object_get(json_object_get(doc, "spec"), "rayClusterConfig");
	json_t *t =
	    json_object_get(json_object_get(cc, "headGroupSpec"), "template");

	return api_json_str(
	    json_object_get(json_object_get(t, "spec"), "nodeSelector"),
	    "pool");
}

static const json_t *service_suspend(const json_t *doc)
{
	return json_object_get(
	    json_object_get(json_object_get(doc, "spec"), "rayClusterConfig"),
	    "suspend");
}

Test(fw_ray, rayservice_start_then_stop_through_cluster_config)
{
	json_t *stopped, *after = fx_docjob_start_stop("ray.io/rayservice",
			     "{\"apiVersion\":\"ray.io/v1\",\"kind\":"
			     "\"RayService\"," META
			     ",\"spec\":{\"rayClusterConfig\":{\"suspend\":"
			     "true," HEAD ",\"workerGroupSpecs\":[" GROUP(
				 "w", "", "1") "]}}}",
			     FLAVOR,
			     "{\"clusterQueue\":\"cq\",\"podSetAssignments\":"
			     "[" ASSIGN("head", 1) "," ASSIGN("w", 1) "]}",
			     &stopped);

	cr_assert(json_is_false(service_suspend(after)));
	cr_assert_null(
	    json_object_get(json_object_get(after, "spec"), "suspend"));
	cr_assert_str_eq(service_pool(after), "spot");
	cr_assert(json_is_true(service_suspend(stopped)));
	cr_assert_null(service_pool(stopped));
	json_decref(after);
	json_decref(stopped);
}
