/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/api_model_podsets_test.c - pod-set extraction from Jobs and
 * JobSets (counts as Kueue computes them, per-pod requests as Kubernetes
 * computes them), Workload names (SHA-1 vectors computed independently
 * with sha1sum) and priority resolution order.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "api/model.h"

static json_t *parse(const char *text)
{
	json_error_t jerr;
	json_t *j = json_loads(text, 0, &jerr);

	cr_assert_not_null(j, "test JSON: %s at %d", jerr.text, jerr.column);
	return j;
}

/* A Job whose spec is `spec_extra` + template spec `pod_spec`. */
static void job_podsets(const char *spec_extra, const char *pod_spec,
    const char *annotations, struct api_podsets *ps)
{
	char buf[4096];
	struct api_job job;
	json_t *j;
	cu_error err;

	snprintf(buf, sizeof(buf),
	    "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\","
	    "\"metadata\":{\"name\":\"j\",\"annotations\":{%s}},"
	    "\"spec\":{%s%s\"template\":{\"metadata\":{\"labels\":"
	    "{\"app\":\"x\",\"job-name\":\"j\","
	    "\"batch.kubernetes.io/controller-uid\":\"u\"}},"
	    "\"spec\":{%s}}}}",
	    annotations ? annotations : "", spec_extra, *spec_extra ? "," : "",
	    pod_spec);
	j = parse(buf);
	cr_assert_eq(api_job_decode(&job, j, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(api_job_podsets(&job, ps, &err), CU_OK, "%s", err.msg);
	api_job_dispose(&job);
	json_decref(j);
}

static int64_t req(const struct api_podset_info *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->n_requests; i++)
		if (strcmp(p->requests[i].name, name) == 0)
			return p->requests[i].milli;
	return -1;
}

#define ONE_CPU1                                                               \
	"\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{"        \
	"\"cpu\":\"1\"}}}]"

static int32_t count_for(const char *spec_extra)
{
	struct api_podsets ps;
	int32_t c;

	job_podsets(spec_extra, ONE_CPU1, NULL, &ps);
	cr_assert_eq(ps.n, 1);
	cr_assert_str_eq(ps.items[0].name, "main");
	c = ps.items[0].count;
	api_podsets_dispose(&ps);
	return c;
}

Test(podsets, job_count_is_min_of_parallelism_and_completions)
{
	cr_assert_eq(count_for(""), 1, "parallelism defaults to 1");
	cr_assert_eq(count_for("\"parallelism\":5"), 5);
	cr_assert_eq(count_for("\"parallelism\":5,\"completions\":3"), 3);
	cr_assert_eq(count_for("\"parallelism\":2,\"completions\":10"), 2);
	cr_assert_eq(count_for("\"completions\":4"), 1,
	    "completions alone keeps the default parallelism");
	cr_assert_eq(count_for("\"parallelism\":0"), 0);
}

Test(podsets, init_container_dominates_when_larger)
{
	struct api_podsets ps;

	job_podsets("",
	    "\"initContainers\":[{\"name\":\"i\",\"resources\":{\"requests\":"
	    "{\"cpu\":\"2\",\"memory\":\"100Mi\"}}}],"
	    "\"containers\":[{\"name\":\"a\",\"resources\":{\"requests\":"
	    "{\"cpu\":\"1\",\"memory\":\"200Mi\"}}},"
	    "{\"name\":\"b\",\"resources\":{\"requests\":{\"cpu\":\"500m\","
	    "\"memory\":\"100Mi\"}}}]",
	    NULL, &ps);
	cr_assert_eq(req(&ps.items[0], "cpu"), 2000, "init cpu 2 > 1.5");
	cr_assert_eq(req(&ps.items[0], "memory"), 300LL * 1024 * 1024 * 1000,
	    "containers' 300Mi > init 100Mi");
	cr_assert_str_eq(
	    ps.items[0].requests[0].name, "cpu", "requests are sorted by name");
	api_podsets_dispose(&ps);
}

Test(podsets, overhead_is_added_once_per_pod)
{
	struct api_podsets ps;

	job_podsets("\"parallelism\":2",
	    ONE_CPU1 ",\"overhead\":{\"cpu\":\"250m\",\"memory\":\"64Mi\"}",
	    NULL, &ps);
	cr_assert_eq(ps.items[0].count, 2);
	cr_assert_eq(req(&ps.items[0], "cpu"), 1250);
	cr_assert_eq(req(&ps.items[0], "memory"), 64LL * 1024 * 1024 * 1000);
	api_podsets_dispose(&ps);
}

Test(podsets, limits_only_container_requests_its_limits)
{
	struct api_podsets ps;

	job_podsets("",
	    "\"containers\":[{\"name\":\"a\",\"resources\":{\"limits\":"
	    "{\"cpu\":\"2\",\"nvidia.com/gpu\":\"1\"}}},"
	    "{\"name\":\"b\",\"resources\":{\"requests\":{\"cpu\":\"1\"},"
	    "\"limits\":{\"cpu\":\"3\"}}}]",
	    NULL, &ps);
	cr_assert_eq(req(&ps.items[0], "cpu"), 3000,
	    "2 (limit as request) + 1 (explicit request, not the limit 3)");
	cr_assert_eq(req(&ps.items[0], "nvidia.com/gpu"), 1000);
	cr_assert_eq(req(&ps.items[0], "memory"), -1);
	api_podsets_dispose(&ps);
}

Test(podsets, sidecar_init_containers_add_to_the_pod)
{
	struct api_podsets ps;

	job_podsets("",
	    "\"initContainers\":[{\"name\":\"proxy\",\"restartPolicy\":"
	    "\"Always\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}},"
	    "{\"name\":\"setup\",\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]"
	    "," ONE_CPU1,
	    NULL, &ps);
	/* regular phase: 1 + sidecar 1 = 2; init phase: 2 + sidecar 1 = 3 */
	cr_assert_eq(req(&ps.items[0], "cpu"), 3000);
	api_podsets_dispose(&ps);
}

Test(podsets, min_count_annotation_and_template_copy)
{
	struct api_podsets ps;
	json_t *labels;

	job_podsets("\"parallelism\":4",
	    ONE_CPU1
	    ",\"nodeSelector\":{\"pool\":\"gpu\"},"
	    "\"priorityClassName\":\"high\","
	    "\"tolerations\":[{\"key\":\"k\",\"operator\":\"Exists\"}],"
	    "\"affinity\":{\"nodeAffinity\":{"
	    "\"requiredDuringSchedulingIgnoredDuringExecution\":{"
	    "\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":"
	    "\"zone\",\"operator\":\"In\",\"values\":[\"a\"]}]}]}}}",
	    "\"kueue.x-k8s.io/job-min-parallelism\":\"2\"", &ps);
	cr_assert(ps.items[0].has_min_count);
	cr_assert_eq(ps.items[0].min_count, 2);
	cr_assert_str_eq(
	    api_strmap_get(&ps.items[0].node_selector, "pool"), "gpu");
	cr_assert_eq(ps.items[0].n_tolerations, 1);
	cr_assert_eq(ps.items[0].tolerations[0].op, API_TOL_OP_EXISTS);
	cr_assert_str_eq(ps.items[0].priority_class_name, "high");
	cr_assert_eq(json_array_size(ps.items[0].required_node_affinity), 1);
	labels = json_object_get(
	    json_object_get(ps.items[0].template, "metadata"), "labels");
	cr_assert_str_eq(
	    json_string_value(json_object_get(labels, "app")), "x");
	cr_assert_null(json_object_get(labels, "job-name"),
	    "batch-controller labels are dropped from the Workload copy");
	cr_assert_null(
	    json_object_get(labels, "batch.kubernetes.io/controller-uid"));
	api_podsets_dispose(&ps);

	job_podsets(
	    "", ONE_CPU1, "\"kueue.x-k8s.io/job-min-parallelism\":\"x2\"", &ps);
	cr_assert_not(ps.items[0].has_min_count, "non-integer is ignored");
	cr_assert_null(ps.items[0].required_node_affinity);
	api_podsets_dispose(&ps);
}

Test(podsets, bad_container_quantity_names_the_path)
{
	struct api_job job;
	struct api_podsets ps;
	cu_error err;
	json_t *j = parse(
	    "{\"spec\":{\"template\":{\"spec\":{\"containers\":["
	    "{\"name\":\"a\"},{\"name\":\"b\",\"resources\":{\"requests\":"
	    "{\"cpu\":\"one\"}}}]}}}}");

	cr_assert_eq(api_job_decode(&job, j, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(api_job_podsets(&job, &ps, &err), CU_EPARSE);
	cr_assert_eq(strncmp(err.msg,
			 "spec.template.spec.containers[1].resources.requests."
			 "cpu: ",
			 strlen("spec.template.spec.containers[1].resources."
				"requests.cpu: ")),
	    0, "%s", err.msg);
	cr_assert_eq(ps.n, 0);
	api_job_dispose(&job);
	json_decref(j);
}

static void jobset_podsets(
    const char *rjobs, struct api_podsets *ps, int want_rc, cu_error *err)
{
	char buf[4096];
	struct api_jobset js;
	json_t *j;

	snprintf(buf, sizeof(buf),
	    "{\"kind\":\"JobSet\",\"metadata\":{\"name\":\"js\"},"
	    "\"spec\":{\"replicatedJobs\":[%s]}}",
	    rjobs);
	j = parse(buf);
	cr_assert_eq(api_jobset_decode(&js, j, err), CU_OK, "%s", err->msg);
	cr_assert_eq(api_jobset_podsets(&js, ps, err), want_rc, "%s", err->msg);
	api_jobset_dispose(&js);
	json_decref(j);
}

#define RJ(name, extra, jobspec)                                               \
	"{\"name\":\"" name "\"" extra ",\"template\":{\"spec\":{" jobspec     \
	"\"template\":{\"spec\":{" ONE_CPU1 "}}}}}"

Test(podsets, jobset_count_is_replicas_times_min_parallelism_completions)
{
	struct api_podsets ps;
	cu_error err;

	jobset_podsets(RJ("a", ",\"replicas\":3",
			   "\"parallelism\":5,\"completions\":2,") "," RJ("B",
			   "", "\"parallelism\":4,") "," RJ("c",
			   ",\"replicas\":2", "\"completions\":3,") "," RJ("d",
			   ",\"replicas\":0", "\"parallelism\":8,"),
	    &ps, CU_OK, &err);
	cr_assert_eq(ps.n, 4);
	cr_assert_eq(ps.items[0].count, 6, "3 x min(5, 2)");
	cr_assert_str_eq(ps.items[1].name, "b", "names are lower-cased");
	cr_assert_eq(ps.items[1].count, 4, "replicas default 1");
	cr_assert_eq(ps.items[2].count, 2, "2 x min(1, 3)");
	cr_assert_eq(ps.items[3].count, 0);
	cr_assert_eq(req(&ps.items[0], "cpu"), 1000);
	api_podsets_dispose(&ps);
}

Test(podsets, jobset_golden_and_overflow)
{
	json_t *j = json_load_file("tests/data/golden/jobset.json", 0, NULL);
	struct api_jobset js;
	struct api_podsets ps;
	cu_error err;

	cr_assert_not_null(j);
	cr_assert_eq(api_jobset_decode(&js, j, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(api_jobset_podsets(&js, &ps, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(ps.n, 2);
	cr_assert_str_eq(ps.items[0].name, "workers");
	cr_assert_eq(ps.items[0].count, 8);
	cr_assert_eq(req(&ps.items[0], "cpu"), 500, "limits-only worker");
	cr_assert_eq(req(&ps.items[0], "memory"), 1024LL * 1024 * 1024 * 1000);
	cr_assert_str_eq(ps.items[1].name, "driver");
	cr_assert_str_eq(ps.items[1].priority_class_name, "batch-high");
	api_podsets_dispose(&ps);
	api_jobset_dispose(&js);
	json_decref(j);

	jobset_podsets(
	    RJ("big", ",\"replicas\":2147483647", "\"parallelism\":2,"), &ps,
	    CU_ERANGE, &err);
	cr_assert(
	    strstr(err.msg, "spec.replicatedJobs[0]") != NULL, "%s", err.msg);
	cr_assert_eq(ps.n, 0);
}

/* ---- names ----------------------------------------------------------------
 */

static void expect_name(const char *kind, const char *group, const char *name,
    const char *uid, int64_t gen, size_t max, const char *want)
{
	char *got = NULL;
	cu_error err;

	cr_assert_eq(
	    api_workload_name(kind, group, name, uid, gen, max, &got, &err),
	    CU_OK, "%s", err.msg);
	cr_assert_str_eq(got, want);
	cu_free(got);
}

Test(names, workload_names_match_sha1_vectors)
{
	/* printf 'Job\nbatch\nsample-job\n9a8b...0042' | sha1sum = a71fc89e..
	 */
	expect_name("Job", "batch", "sample-job",
	    "9a8b7c6d-0000-4000-8000-000000000042", -1, API_WORKLOAD_NAME_MAX,
	    "job-sample-job-a71fc");
	/* ... = 71847d3b.. */
	expect_name("JobSet", "jobset.x-k8s.io", "paralleljobs",
	    "7e57e57e-0000-4000-8000-00000000a0b0", -1, API_WORKLOAD_NAME_MAX,
	    "jobset-paralleljobs-71847");
	/* core group is empty: 'Pod\n\nmy-pod\nuid-3' = 7ddfe2a3.. */
	expect_name("Pod", "", "my-pod", "uid-3", -1, API_WORKLOAD_NAME_MAX,
	    "pod-my-pod-7ddfe");
	/* with generation: 'Job\nbatch\nelastic\nuid-2\n3' = 7f3f9b1f.. */
	expect_name("Job", "batch", "elastic", "uid-2", 3,
	    API_WORKLOAD_NAME_MAX, "job-elastic-7f3f9");
}

Test(names, long_names_are_truncated_before_the_hash)
{
	char name[301], want[300];
	char *got = NULL;

	memset(name, 'a', 300);
	name[300] = '\0';
	/* 'Job\nbatch\n' + 300 x 'a' + '\nuid-1' = 1e11d14f.. */
	snprintf(want, sizeof(want), "job-%.243s-1e11d", name);
	expect_name(
	    "Job", "batch", name, "uid-1", -1, API_WORKLOAD_NAME_MAX, want);
	cr_assert_eq(strlen(want), 253);
	snprintf(want, sizeof(want), "job-%.53s-1e11d", name);
	expect_name("Job", "batch", name, "uid-1", -1,
	    API_WORKLOAD_NAME_SHORT_MAX, want);
	cr_assert_eq(strlen(want), 63);
	cr_assert_eq(
	    api_workload_name("Job", "batch", "x", "u", -1, 6, &got, NULL),
	    CU_EINVAL);
	cr_assert_null(got);
}

/* ---- priority ---------------------------------------------------------------
 */

struct fake_classes {
	bool has_default_wpc;
	bool has_global_default;
	int calls;
};

static int fake_wpc(
    const char *name, int32_t *value, void *payload, cu_error *err)
{
	struct fake_classes *f = payload;

	(void)err;
	f->calls++;
	if (strcmp(name, "high") == 0) {
		*value = 10000;
		return CU_OK;
	}
	if (strcmp(name, "default") == 0 && f->has_default_wpc) {
		*value = 50;
		return CU_OK;
	}
	return CU_ENOTFOUND;
}

static int fake_pc(
    const char *name, int32_t *value, void *payload, cu_error *err)
{
	(void)payload;
	(void)err;
	if (strcmp(name, "batch-low") == 0) {
		*value = -10;
		return CU_OK;
	}
	return CU_ENOTFOUND;
}

static int fake_global(
    const char **name, int32_t *value, void *payload, cu_error *err)
{
	struct fake_classes *f = payload;

	(void)err;
	if (!f->has_global_default)
		return CU_ENOTFOUND;
	*name = "cluster-default";
	*value = 7;
	return CU_OK;
}

static void resolve(const char *label, const char *pod_pc,
    struct fake_classes *f, bool default_wpc, int want_rc,
    enum api_priority_source src, const char *cls, int32_t value)
{
	struct api_strmap labels = {NULL, 0};
	struct api_podset_info info;
	struct api_podsets ps = {&info, 1};
	struct api_priority_lookup lk = {
	    fake_wpc, fake_pc, fake_global, default_wpc, f};
	struct api_priority p;
	cu_error err;
	int rc;

	memset(&info, 0, sizeof(info));
	info.priority_class_name = (char *)pod_pc;
	if (label)
		cr_assert_eq(api_strmap_set(&labels, API_LABEL_PRIORITY_CLASS,
				 label, NULL),
		    CU_OK);
	cu_error_clear(&err);
	rc = api_resolve_priority(&labels, &ps, &lk, &p, &err);
	cr_assert_eq(rc, want_rc, "rc %d (%s)", rc, err.msg);
	if (rc == CU_OK) {
		cr_assert_eq(p.source, src);
		cr_assert_eq(p.value, value);
		if (cls)
			cr_assert_str_eq(p.class_name, cls);
		else
			cr_assert_null(p.class_name);
	}
	cu_free(p.class_name);
	api_strmap_dispose(&labels);
}

Test(priority, resolution_follows_kueue_order)
{
	struct fake_classes f = {true, true, 0};

	resolve("high", "batch-low", &f, true, CU_OK,
	    API_PRIO_WORKLOAD_PRIORITY_CLASS, "high", 10000);
	resolve(NULL, "batch-low", &f, true, CU_OK,
	    API_PRIO_WORKLOAD_PRIORITY_CLASS, "default", 50);
	resolve(NULL, "batch-low", &f, false, CU_OK, API_PRIO_PRIORITY_CLASS,
	    "batch-low", -10);
	f.has_default_wpc = false;
	resolve(NULL, "batch-low", &f, true, CU_OK, API_PRIO_PRIORITY_CLASS,
	    "batch-low", -10);
	resolve(NULL, NULL, &f, true, CU_OK, API_PRIO_PRIORITY_CLASS,
	    "cluster-default", 7);
	f.has_global_default = false;
	resolve(NULL, NULL, &f, true, CU_OK, API_PRIO_NONE, NULL, 0);
}

Test(priority, missing_named_classes_are_errors)
{
	struct fake_classes f = {true, true, 0};

	resolve("nope", NULL, &f, true, CU_ENOTFOUND, API_PRIO_NONE, NULL, 0);
	resolve(NULL, "missing-pc", &f, false, CU_ENOTFOUND, API_PRIO_NONE,
	    NULL, 0);
}

Test(priority, workload_gets_priority_class_ref)
{
	struct api_workload wl;
	struct api_priority p = {
	    API_PRIO_PRIORITY_CLASS, (char *)"batch-low", -10};
	json_t *out;

	memset(&wl, 0, sizeof(wl));
	cr_assert_eq(api_workload_set_priority(&wl, &p, NULL), CU_OK);
	cr_assert_str_eq(wl.spec.priority_class_ref.group, "scheduling.k8s.io");
	cr_assert_str_eq(wl.spec.priority_class_ref.kind, "PriorityClass");
	cr_assert_eq(wl.spec.priority, -10);
	cr_assert_eq(api_workload_encode(&out, &wl, NULL), CU_OK);
	cr_assert_str_eq(json_string_value(json_object_get(
			     json_object_get(json_object_get(out, "spec"),
				 "priorityClassRef"),
			     "name")),
	    "batch-low");
	json_decref(out);
	p.source = API_PRIO_NONE;
	p.value = 0;
	cr_assert_eq(api_workload_set_priority(&wl, &p, NULL), CU_OK);
	cr_assert_not(wl.spec.has_priority_class_ref);
	cr_assert(wl.spec.has_priority);
	api_workload_dispose(&wl);
}
