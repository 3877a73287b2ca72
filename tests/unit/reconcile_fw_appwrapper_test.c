/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/reconcile_fw_appwrapper_test.c - the AppWrapper shape of the
 * framework descriptors (reconcile/fw_appwrapper.c, docs/frameworks.md),
 * table-driven:
 *
 *   pod sets:   explicit podSets (path, replicas default 1) and the ones a
 *               component's kind implies (Job, Deployment, JobSet,
 *               RayCluster, LeaderWorkerSet, PyTorchJob), named
 *               <appwrapper>-<k> across components; a negative count
 *               refused naming the field
 *   state:      finished on phase Succeeded, or Failed once
 *               ResourcesDeployed is no longer True; active while
 *               QuotaReserved; pods ready with PodsReady
 *   start/stop: start writes each pod set's admission into its
 *               component's podSetInfos and leaves the wrapped templates
 *               alone; stop suspends and clears podSetInfos
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "api/json.h"
#include "api/patch.h"
#include "reconcile/reconcile.h"

#define FW "workload.codeflare.dev/appwrapper"

static json_t *parse(const char *text)
{
	json_error_t jerr;
	json_t *j = json_loads(text, 0, &jerr);

	cr_assert_not_null(
	    j, "test JSON: %s at col %d: %s", jerr.text, jerr.column, text);
	return j;
}

struct docjob {
	json_t *doc;
	struct api_meta meta;
	struct rec_job view;
};

static void docjob_load(struct docjob *d, const char *text)
{
	cu_error err;

	d->doc = parse(text);
	cr_assert_eq(api_meta_decode(
			 &d->meta, json_object_get(d->doc, "metadata"), &err),
	    CU_OK, "%s", err.msg);
	memset(&d->view, 0, sizeof(d->view));
	d->view.kind = REC_JOB_DOC;
	d->view.fw = rec_fw_by_name(FW);
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
	"\"apiVersion\":\"workload.codeflare.dev/v1beta2\",\"kind\":"          \
	"\"AppWrapper\",\"metadata\":{\"name\":\"aw\",\"namespace\":\"ns\","   \
	"\"uid\":\"u-1\",\"resourceVersion\":\"7\",\"labels\":{"               \
	"\"kueue.x-k8s.io/queue-name\":\"lq\"}}"
#define TPL(cpu)                                                               \
	"{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\","          \
	"\"resources\":{\"requests\":{\"cpu\":\"" cpu "\"}}}]}}"
#define AW(comps)                                                              \
	"{" META ",\"spec\":{\"suspend\":true,\"components\":[" comps "]}}"
#define DEPLOY(n)                                                              \
	"{\"template\":{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\","   \
	"\"spec\":{\"replicas\":" #n ",\"template\":" TPL("100m") "}}}"
#define PYTORCH                                                                \
	"{\"template\":{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":"          \
	"\"PyTorchJob\",\"spec\":{\"pytorchReplicaSpecs\":{\"Worker\":{"       \
	"\"replicas\":3,\"template\":" TPL(                                    \
	    "2") "},\"Master\":{\"template\":" TPL("1") "}}}}}"

/* A Job of 2 pods; a JobSet of 2 Jobs of 3 pods. */
#define AW_JOB2                                                                \
	AW("{\"template\":{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\","      \
	   "\"spec\":{\"parallelism\":2,\"template\":" TPL("1") "}}}")
#define AW_JOBSET                                                              \
	AW("{\"template\":{\"apiVersion\":\"jobset.x-k8s.io/v1alpha2\","       \
	   "\"kind\":\"JobSet\",\"spec\":{\"replicatedJobs\":[{"               \
	   "\"name\":\"a\",\"replicas\":2,\"template\":{\"spec\":{"            \
	   "\"parallelism\":3,\"template\":" TPL("1") "}}}]}}}")

struct ps_row {
	const char *doc, *want; /* "name:count:cpu-milli,..." */
};

static const struct ps_row ps_rows[] = {
    {AW(DEPLOY(2)), "aw-0:2:100"},
    {AW(PYTORCH), "aw-0:1:1000,aw-1:3:2000"},
    {AW(DEPLOY(1) "," PYTORCH), "aw-0:1:100,aw-1:1:1000,aw-2:3:2000"},
    /* explicit podSets win over the kind's */
    {AW("{\"podSets\":[{\"path\":\"template.spec.template\",\"replicas\":4}"
	"],\"template\":{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\","
	"\"spec\":{\"parallelism\":9,\"template\":" TPL("1") "}}}"),
	"aw-0:4:1000"},
    {AW_JOB2, "aw-0:2:1000"},
    {AW_JOBSET, "aw-0:6:1000"},
    /* AppWrapper's inference for a Job: min(parallelism, completions),
     * parallelism 1 when unset; for a JobSet's Job the same, times its
     * replicas */
    {AW("{\"template\":{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\","
	"\"spec\":{\"parallelism\":4,\"completions\":2,\"template\":" TPL(
	    "1") "}}}"),
	"aw-0:2:1000"},
    {AW("{\"template\":{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\","
	"\"spec\":{\"parallelism\":2,\"completions\":5,\"template\":" TPL(
	    "1") "}}}"),
	"aw-0:2:1000"},
    {AW("{\"template\":{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\","
	"\"spec\":{\"completions\":3,\"template\":" TPL("1") "}}}"),
	"aw-0:1:1000"},
    {AW("{\"template\":{\"apiVersion\":\"jobset.x-k8s.io/v1alpha2\","
	"\"kind\":\"JobSet\",\"spec\":{\"replicatedJobs\":[{"
	"\"name\":\"a\",\"replicas\":2,\"template\":{\"spec\":{"
	"\"parallelism\":3,\"completions\":1,\"template\":" TPL("1") "}}}]}}}"),
	"aw-0:2:1000"},
    {AW("{\"template\":{\"apiVersion\":\"ray.io/v1\",\"kind\":"
	"\"RayCluster\",\"spec\":{\"headGroupSpec\":{\"template\":" TPL(
	    "1") "},\"workerGroupSpecs\":[{\"groupName\":\"w\",\"replicas\":"
		 "2,\"template\":" TPL("500m") "}]}}}"),
	"aw-0:1:1000,aw-1:2:500"},
    {AW("{\"template\":{\"apiVersion\":\"leaderworkerset.x-k8s.io/v1\","
	"\"kind\":\"LeaderWorkerSet\",\"spec\":{\"replicas\":2,"
	"\"leaderWorkerTemplate\":{\"size\":4,\"leaderTemplate\":" TPL(
	    "1") ",\"workerTemplate\":" TPL("2") "}}}}"),
	"aw-0:2:1000,aw-1:6:2000"},
    {AW(""), ""},
};

/* Pod set i of ps [borrowed] rendered into buf [len bytes]. */
typedef int (*ps_fmt)(
    const struct api_podset_info *p, size_t i, char *buf, size_t len);

/* The pod sets of the AppWrapper doc, each rendered by fmt, are want. */
static void check_podsets(const char *doc, const char *want, ps_fmt fmt)
{
	struct docjob d;
	struct api_podsets ps;
	char got[512] = "";
	size_t used = 0, i;
	cu_error err;

	docjob_load(&d, doc);
	cr_assert_eq(
	    rec_job_podsets(&d.view, &ps, &err), CU_OK, "%s: %s", err.msg, doc);
	for (i = 0; i < ps.n && used < sizeof(got); i++)
		used += (size_t)fmt(
		    &ps.items[i], i, got + used, sizeof(got) - used);
	cr_assert_str_eq(got, want, "%s", doc);
	api_podsets_dispose(&ps);
	docjob_dispose(&d);
}

static int name_count_cpu(
    const struct api_podset_info *p, size_t i, char *buf, size_t len)
{
	return snprintf(buf, len, "%s%s:%d:%lld", i ? "," : "", p->name,
	    (int)p->count, (long long)p->requests[0].milli);
}

static void podsets_row(const struct ps_row *r)
{
	check_podsets(r->doc, r->want, name_count_cpu);
}

Test(fw_appwrapper, podsets)
{
	size_t i;

	for (i = 0; i < sizeof(ps_rows) / sizeof(ps_rows[0]); i++)
		podsets_row(&ps_rows[i]);
}

Test(fw_appwrapper, negative_replicas_refused)
{
	struct docjob d;
	struct api_podsets ps;
	cu_error err;

	docjob_load(&d, AW("{\"podSets\":[{\"path\":\"template.spec.template\","
			   "\"replicas\":-1}],\"template\":{\"kind\":\"Job\","
			   "\"spec\":{\"template\":" TPL("1") "}}}"));
	cr_assert_eq(rec_job_podsets(&d.view, &ps, &err), CU_EINVAL);
	cr_assert(
	    strstr(err.msg, "spec.components[0].podSets[0].replicas") != NULL,
	    "%s", err.msg);
	docjob_dispose(&d);
}

struct st_row {
	const char *status;
	bool finished, success, active, ready;
};

static const struct st_row st_rows[] = {
    {"{\"phase\":\"Suspended\"}", false, false, false, false},
    {"{\"phase\":\"Running\",\"conditions\":[{\"type\":\"QuotaReserved\","
     "\"status\":\"True\"},{\"type\":\"PodsReady\",\"status\":\"True\"}]}",
	false, false, true, true},
    {"{\"phase\":\"Succeeded\"}", true, true, false, false},
    {"{\"phase\":\"Failed\",\"conditions\":[{\"type\":\"ResourcesDeployed\","
     "\"status\":\"True\"}]}",
	false, false, false, false},
    {"{\"phase\":\"Failed\",\"conditions\":[{\"type\":\"ResourcesDeployed\","
     "\"status\":\"False\"}]}",
	true, false, false, false},
};

Test(fw_appwrapper, state)
{
	size_t i;

	for (i = 0; i < sizeof(st_rows) / sizeof(st_rows[0]); i++) {
		const struct st_row *r = &st_rows[i];
		struct docjob d;
		char text[1024];
		bool success = false;
		const char *msg = NULL;

		snprintf(text, sizeof(text),
		    "{" META ",\"spec\":{},\"status\":%s}", r->status);
		docjob_load(&d, text);
		cr_assert_eq(rec_job_finished(&d.view, &success, &msg),
		    r->finished, "%s", text);
		if (r->finished)
			cr_assert_eq(success, r->success, "%s", text);
		cr_assert_eq(rec_job_is_active(&d.view), r->active, "%s", text);
		cr_assert_eq(rec_job_pods_ready(&d.view, NULL, NULL), r->ready,
		    "%s", text);
		docjob_dispose(&d);
	}
}

#define FLAVOR                                                                 \
	"{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"                 \
	"\"ResourceFlavor\",\"metadata\":{\"name\":\"spot\"},\"spec\":{"       \
	"\"nodeLabels\":{\"pool\":\"spot\"},\"tolerations\":[{\"key\":"        \
	"\"spot\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}]}}"
#define ASSIGN(n, c)                                                           \
	"{\"name\":\"" n "\",\"flavors\":{\"cpu\":\"spot\"},"                  \
	"\"resourceUsage\":{\"cpu\":\"" #c "\"},\"count\":" #c "}"

static json_t *apply(const json_t *doc, const json_t *patch)
{
	json_t *out = NULL;
	cu_error err;

	cr_assert_eq(api_merge_patch_apply(&out, doc, patch, &err), CU_OK, "%s",
	    err.msg);
	return out;
}

Test(fw_appwrapper, start_sets_podsetinfos_stop_clears_them)
{
	struct docjob d, run;
	struct api_workload wl;
	struct api_resource_flavor fl;
	json_t *fj = parse(FLAVOR), *w = NULL, *p = NULL, *after, *stopped,
	       *infos;
	enum rec_stop_step step;
	cu_error err;

	cr_assert_eq(api_resource_flavor_decode(&fl, fj, &err), CU_OK);
	docjob_load(&d, AW(DEPLOY(1) "," PYTORCH));
	cr_assert_eq(
	    rec_wl_build(&d.view, NULL, &w, &err), CU_OK, "%s", err.msg);
	json_object_set_new(w, "status",
	    parse("{\"admission\":{\"clusterQueue\":\"cq\","
		  "\"podSetAssignments\":[" ASSIGN("aw-0", 1) "," ASSIGN(
		      "aw-1", 1) "," ASSIGN("aw-2", 3) "]},\"conditions\":[{"
						       "\"type\":\"Admitted\","
						       "\"status\":\"True\","
						       "\"reason\":\"A\","
						       "\"message\":\"m\","
						       "\"lastTransitionTime\":"
						       "\"2026-01-01T00:00:"
						       "00Z\"}]}"));
	cr_assert_eq(api_workload_decode(&wl, w, &err), CU_OK, "%s", err.msg);
	json_decref(w);
	cr_assert_eq(rec_job_start_patch(&d.view, &wl, &fl, 1, &p, &err), CU_OK,
	    "%s", err.msg);
	after = apply(d.doc, p);
	json_decref(p);
	cr_assert(json_is_false(
	    json_object_get(json_object_get(after, "spec"), "suspend")));
	infos = json_object_get(
	    json_array_get(
		json_object_get(json_object_get(after, "spec"), "components"),
		1),
	    "podSetInfos");
	cr_assert_eq(json_array_size(infos), 2);
	cr_assert_str_eq(api_json_str(json_object_get(json_array_get(infos, 1),
					  "nodeSelector"),
			     "pool"),
	    "spot");
	cr_assert_eq(json_array_size(json_object_get(
			 json_array_get(infos, 1), "tolerations")),
	    1);
	/* the wrapped template itself is untouched */
	cr_assert(json_equal(
	    json_object_get(
		json_array_get(json_object_get(json_object_get(after, "spec"),
				   "components"),
		    1),
		"template"),
	    json_object_get(
		json_array_get(json_object_get(json_object_get(d.doc, "spec"),
				   "components"),
		    1),
		"template")));

	run.doc = after;
	cr_assert_eq(api_meta_decode(
			 &run.meta, json_object_get(after, "metadata"), &err),
	    CU_OK);
	run.view = d.view;
	run.view.doc = after;
	run.view.meta = &run.meta;
	cr_assert_eq(
	    rec_job_stop_patch(&run.view, &wl, &step, &p, &err), CU_OK);
	stopped = apply(after, p);
	json_decref(p);
	cr_assert(json_is_true(
	    json_object_get(json_object_get(stopped, "spec"), "suspend")));
	cr_assert(json_equal(stopped, d.doc) ||
		  json_equal(json_object_get(stopped, "spec"),
		      json_object_get(d.doc, "spec")));
	json_decref(stopped);
	docjob_dispose(&run);
	api_workload_dispose(&wl);
	api_resource_flavor_dispose(&fl);
	json_decref(fj);
	docjob_dispose(&d);
}

/* Kueue's topology request of each pod set: the index labels of the
 * component's podSets[].annotations (tas-pod-index-label,
 * tas-sub-group-index-label, tas-sub-group-count), or the ones
 * AppWrapper's webhook infers for a Job, a JobSet's replicated Jobs and
 * a PyTorchJob; none for the other kinds. */
struct idx_row {
	const char *doc;
	const char *want; /* "pod|sub|count,..." ("-": no request) */
};

/* A Deployment component listing its pod set with the tas-*
 * annotations, the sub-group count `count`. */
#define AW_TAS "workload.codeflare.dev.appwrapper/tas-"
#define ANNOTATED(count)                                                       \
	AW("{\"podSets\":[{\"path\":\"template.spec.template\","               \
	   "\"replicas\":4,\"annotations\":{\"" AW_TAS                         \
	   "pod-index-label\":\"p\",\"" AW_TAS                                 \
	   "sub-group-index-label\":\"s\",\"" AW_TAS                           \
	   "sub-group-count\":\"" count "\"}}],\"template\":{"                 \
	   "\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\","               \
	   "\"spec\":{\"template\":" TPL("1") "}}}")

static const struct idx_row idx_rows[] = {
    {AW_JOB2, "batch.kubernetes.io/job-completion-index||0"},
    {AW_JOBSET, "batch.kubernetes.io/job-completion-index|jobset.sigs.k8s.io/"
		"job-index|2"},
    {AW(PYTORCH), "training.kubeflow.org/replica-index||0,"
		  "training.kubeflow.org/replica-index||0"},
    {AW(DEPLOY(2)), "-"},
    {ANNOTATED("3"), "p|s|3"},
    /* a malformed count is ignored, with its sub group */
    {ANNOTATED("x"), "p||0"},
    /* explicit podSets without the annotations: none */
    {AW("{\"podSets\":[{\"path\":\"template.spec.template\",\"replicas\":4}"
	"],\"template\":{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\","
	"\"spec\":{\"parallelism\":9,\"template\":" TPL("1") "}}}"),
	"-"},
};

static int index_labels(
    const struct api_podset_info *p, size_t i, char *buf, size_t len)
{
	const struct api_topology_request *t = &p->topology_request;

	if (!p->has_topology_request)
		return snprintf(buf, len, "%s-", i ? "," : "");
	return snprintf(buf, len, "%s%s|%s|%d", i ? "," : "",
	    t->pod_index_label ? t->pod_index_label : "",
	    t->subgroup_index_label ? t->subgroup_index_label : "",
	    (int)t->subgroup_count);
}

Test(fw_appwrapper, topology_request_index_labels)
{
	size_t r;

	for (r = 0; r < sizeof(idx_rows) / sizeof(idx_rows[0]); r++)
		check_podsets(idx_rows[r].doc, idx_rows[r].want, index_labels);
}
