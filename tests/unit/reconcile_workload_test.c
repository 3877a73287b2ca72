/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/controller_workload_test.c - the transformation layer of
 * reconcile/reconcile.h: the Workload built for a Job and a JobSet,
 * equivalence, the admission/pending/eviction/release/finish status
 * patches (golden and idempotent), the start and stop patches applied to
 * jobs (round trip start -> stop gives back the original job), no-op
 * detection and the job state readers.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/patch.h"
#include "reconcile/reconcile.h"

#define NOW1 (1767225600LL * 1000000000LL) /* 2026-01-01T00:00:00Z */
#define NOW1_S "2026-01-01T00:00:00Z"
#define NOW2 (NOW1 + 90LL * 1000000000LL) /* 90 s later */
#define NOW2_S "2026-01-01T00:01:30Z"
#define NOW3 (NOW1 + 300LL * 1000000000LL)
#define NOW3_S "2026-01-01T00:05:00Z"

static json_t *parse(const char *text)
{
	json_error_t jerr;
	json_t *j = json_loads(text, 0, &jerr);

	cr_assert_not_null(j, "test JSON: %s at line %d col %d", jerr.text,
	    jerr.line, jerr.column);
	return j;
}

static char *dump(const json_t *j)
{
	return json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
}

static void assert_json_eq(const json_t *got, const json_t *want)
{
	char *g, *w;

	if (json_equal(got, want))
		return;
	g = dump(got);
	w = dump(want);
	cr_log_error("got:  %s", g ? g : "(null)");
	cr_log_error("want: %s", w ? w : "(null)");
	cu_free(g);
	cu_free(w);
	cr_assert_fail("JSON differs");
}

static void assert_json_text(const json_t *got, const char *want_text)
{
	json_t *want = parse(want_text);

	assert_json_eq(got, want);
	json_decref(want);
}

/* doc + merge patch -> new doc [owned]. */
static json_t *apply(const json_t *doc, const json_t *patch)
{
	json_t *out = NULL;
	cu_error err;

	cr_assert_not_null(patch, "expected a patch");
	cr_assert_eq(api_merge_patch_apply(&out, doc, patch, &err), CU_OK, "%s",
	    err.msg);
	return out;
}

/* Replace *doc by *doc + patch, and drop the patch. */
static void apply_in_place(json_t **doc, json_t *patch)
{
	json_t *n = apply(*doc, patch);

	json_decref(*doc);
	json_decref(patch);
	*doc = n;
}

/* ---- fixtures ----------------------------------------------------------- */

#define JOB_TEXT                                                               \
	"{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\","                       \
	"\"metadata\":{\"name\":\"sample\",\"namespace\":\"team-a\","          \
	"\"uid\":\"0b6e7d1c-1111-2222-3333-444455556666\","                    \
	"\"resourceVersion\":\"41\",\"generation\":1,"                         \
	"\"labels\":{\"kueue.x-k8s.io/queue-name\":\"main\",\"app\":\"x\","    \
	"\"kueue.x-k8s.io/max-exec-time-seconds\":\"600\"},"                   \
	"\"annotations\":{\"provreq.kueue.x-k8s.io/maxRunDuration\":\"60\","   \
	"\"other\":\"y\"}},"                                                   \
	"\"spec\":{\"parallelism\":3,\"completions\":5,\"suspend\":true,"      \
	"\"template\":{\"metadata\":{\"labels\":{\"app\":\"x\","               \
	"\"batch.kubernetes.io/controller-uid\":\"0b6e\","                     \
	"\"batch.kubernetes.io/job-name\":\"sample\"}},"                       \
	"\"spec\":{\"restartPolicy\":\"Never\","                               \
	"\"nodeSelector\":{\"disk\":\"ssd\"},"                                 \
	"\"tolerations\":[{\"key\":\"team\",\"operator\":\"Equal\","           \
	"\"value\":\"a\",\"effect\":\"NoSchedule\"}],"                         \
	"\"containers\":[{\"name\":\"c\",\"image\":\"busybox\","               \
	"\"resources\":{\"requests\":{\"cpu\":\"1\","                          \
	"\"memory\":\"1Gi\"}}}]}}}}"

#define JOBSET_TEXT                                                            \
	"{\"apiVersion\":\"jobset.x-k8s.io/v1alpha2\",\"kind\":\"JobSet\","    \
	"\"metadata\":{\"name\":\"js\",\"namespace\":\"team-a\","              \
	"\"uid\":\"9f9f-0000-1111\",\"resourceVersion\":\"7\","                \
	"\"labels\":{\"kueue.x-k8s.io/queue-name\":\"main\"}},"                \
	"\"spec\":{\"suspend\":true,\"replicatedJobs\":["                      \
	"{\"name\":\"driver\",\"replicas\":1,\"template\":{\"spec\":{"         \
	"\"parallelism\":1,\"completions\":1,\"template\":{"                   \
	"\"metadata\":{\"annotations\":{\"role\":\"driver\"}},"                \
	"\"spec\":{\"restartPolicy\":\"Never\",\"containers\":[{\"name\":"     \
	"\"d\",\"image\":\"img\",\"resources\":{\"requests\":{\"cpu\":"        \
	"\"500m\"}}}]}}}}},"                                                   \
	"{\"name\":\"Workers\",\"replicas\":2,\"template\":{\"spec\":{"        \
	"\"parallelism\":2,\"completions\":2,\"template\":{"                   \
	"\"metadata\":{\"labels\":{\"role\":\"worker\"}},"                     \
	"\"spec\":{\"restartPolicy\":\"Never\",\"containers\":[{\"name\":"     \
	"\"w\",\"image\":\"img\",\"resources\":{\"requests\":{\"cpu\":\"2\","  \
	"\"nvidia.com/gpu\":\"1\"}}}]}}}}}]}}"

#define FLAVOR_ON_DEMAND                                                       \
	"{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"                 \
	"\"ResourceFlavor\",\"metadata\":{\"name\":\"on-demand\"},"            \
	"\"spec\":{\"nodeLabels\":{\"cloud/capacity\":\"on-demand\"}}}"

#define FLAVOR_SPOT                                                            \
	"{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"                 \
	"\"ResourceFlavor\",\"metadata\":{\"name\":\"spot\"},"                 \
	"\"spec\":{\"nodeLabels\":{\"cloud/capacity\":\"spot\","               \
	"\"zone\":\"z1\"},\"tolerations\":[{\"key\":\"spot\","                 \
	"\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}]}}"

struct fixture {
	json_t *doc;
	struct api_job job;
	struct api_jobset jobset;
	struct rec_job view;
};

static void fixture_load(struct fixture *f, const char *text, bool jobset)
{
	cu_error err;

	memset(f, 0, sizeof(*f));
	f->doc = parse(text);
	f->view.kind = jobset ? REC_JOB_JOBSET : REC_JOB_BATCH;
	if (jobset) {
		cr_assert_eq(api_jobset_decode(&f->jobset, f->doc, &err), CU_OK,
		    "%s", err.msg);
		f->view.jobset = &f->jobset;
	} else {
		cr_assert_eq(api_job_decode(&f->job, f->doc, &err), CU_OK, "%s",
		    err.msg);
		f->view.job = &f->job;
	}
}

/* Re-decode after f->doc changed. */
static void fixture_reload(struct fixture *f)
{
	cu_error err;

	if (f->view.kind == REC_JOB_JOBSET) {
		api_jobset_dispose(&f->jobset);
		cr_assert_eq(api_jobset_decode(&f->jobset, f->doc, &err), CU_OK,
		    "%s", err.msg);
	} else {
		api_job_dispose(&f->job);
		cr_assert_eq(api_job_decode(&f->job, f->doc, &err), CU_OK, "%s",
		    err.msg);
	}
}

static void fixture_dispose(struct fixture *f)
{
	api_job_dispose(&f->job);
	api_jobset_dispose(&f->jobset);
	json_decref(f->doc);
}

static void wl_decode(struct api_workload *wl, const json_t *doc)
{
	cu_error err;

	cr_assert_eq(api_workload_decode(wl, doc, &err), CU_OK, "%s", err.msg);
}

/* The Workload of f as stored: built, with a uid, generation and
 * resourceVersion the API server would add. [owned] */
static json_t *stored_workload(const struct fixture *f)
{
	json_t *wl = NULL, *md;
	cu_error err;

	cr_assert_eq(
	    rec_wl_build(&f->view, NULL, &wl, &err), CU_OK, "%s", err.msg);
	md = json_object_get(wl, "metadata");
	json_object_set_new(md, "uid", json_string("wl-uid-1"));
	json_object_set_new(md, "generation", json_integer(1));
	json_object_set_new(md, "resourceVersion", json_string("100"));
	return wl;
}

static void load_flavors(struct api_resource_flavor fl[2])
{
	json_t *a = parse(FLAVOR_ON_DEMAND), *b = parse(FLAVOR_SPOT);
	cu_error err;

	cr_assert_eq(
	    api_resource_flavor_decode(&fl[0], a, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(
	    api_resource_flavor_decode(&fl[1], b, &err), CU_OK, "%s", err.msg);
	json_decref(a);
	json_decref(b);
}

static void dispose_flavors(struct api_resource_flavor fl[2])
{
	api_resource_flavor_dispose(&fl[0]);
	api_resource_flavor_dispose(&fl[1]);
}

/* ---- 1. building the Workload --------------------------------------- */

Test(workload_build, job_golden)
{
	struct fixture f;
	struct api_strlist keys;
	static char app[] = "app", high[] = "high";
	char *key_items[] = {app};
	struct api_priority prio = {
	    API_PRIO_WORKLOAD_PRIORITY_CLASS, high, 100};
	struct rec_wl_build_opts o = {0, &keys, &prio, NULL};
	json_t *wl = NULL;
	char *name = NULL, want[4096];
	cu_error err;

	keys.items = key_items;
	keys.n = 1;
	fixture_load(&f, JOB_TEXT, false);
	cr_assert_eq(
	    rec_wl_build(&f.view, &o, &wl, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(api_workload_name("Job", "batch", "sample",
			 "0b6e7d1c-1111-2222-3333-444455556666", -1,
			 API_WORKLOAD_NAME_MAX, &name, &err),
	    CU_OK);
	cr_assert_eq(strncmp(name, "job-sample-", 11), 0);
	snprintf(want, sizeof(want),
	    "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\","
	    "\"metadata\":{\"name\":\"%s\",\"namespace\":\"team-a\","
	    "\"labels\":{\"app\":\"x\",\"kueue.x-k8s.io/job-uid\":"
	    "\"0b6e7d1c-1111-2222-3333-444455556666\"},"
	    "\"annotations\":{\"provreq.kueue.x-k8s.io/maxRunDuration\":"
	    "\"60\"},"
	    "\"ownerReferences\":[{\"apiVersion\":\"batch/v1\",\"kind\":"
	    "\"Job\",\"name\":\"sample\",\"uid\":"
	    "\"0b6e7d1c-1111-2222-3333-444455556666\",\"controller\":true,"
	    "\"blockOwnerDeletion\":true}],"
	    "\"finalizers\":[\"kueue.x-k8s.io/resource-in-use\"]},"
	    "\"spec\":{\"queueName\":\"main\",\"priority\":100,"
	    "\"priorityClassRef\":{\"group\":\"kueue.x-k8s.io\",\"kind\":"
	    "\"WorkloadPriorityClass\",\"name\":\"high\"},"
	    "\"maximumExecutionTimeSeconds\":600,\"active\":true,"
	    "\"podSets\":[{\"name\":\"main\",\"count\":3,\"template\":{"
	    "\"metadata\":{\"labels\":{\"app\":\"x\"}},"
	    "\"spec\":{\"restartPolicy\":\"Never\","
	    "\"nodeSelector\":{\"disk\":\"ssd\"},"
	    "\"tolerations\":[{\"key\":\"team\",\"operator\":\"Equal\","
	    "\"value\":\"a\",\"effect\":\"NoSchedule\"}],"
	    "\"containers\":[{\"name\":\"c\",\"image\":\"busybox\","
	    "\"resources\":{\"requests\":{\"cpu\":\"1\","
	    "\"memory\":\"1Gi\"}}}]}},"
	    "\"topologyRequest\":{\"podIndexLabel\":"
	    "\"batch.kubernetes.io/job-completion-index\"}}]}}",
	    name);
	assert_json_text(wl, want);
	/* The result decodes as a Workload. */
	{
		struct api_workload m;

		wl_decode(&m, wl);
		cr_assert_eq(m.spec.n_pod_sets, 1);
		api_workload_dispose(&m);
	}
	cu_free(name);
	json_decref(wl);
	fixture_dispose(&f);
}

static int wpc_lookup(
    const char *name, int32_t *value, void *payload, cu_error *err)
{
	(void)payload;
	if (strcmp(name, "batch-low") == 0) {
		*value = -5;
		return CU_OK;
	}
	return cu_error_set(
	    err, CU_ENOTFOUND, "WorkloadPriorityClass %s", name);
}

static int pc_lookup(
    const char *name, int32_t *value, void *payload, cu_error *err)
{
	(void)payload;
	(void)value;
	return cu_error_set(err, CU_ENOTFOUND, "PriorityClass %s", name);
}

Test(workload_build, jobset_two_replicated_jobs)
{
	struct fixture f;
	json_t *wl = NULL, *ps;
	char *name = NULL;
	cu_error err;

	fixture_load(&f, JOBSET_TEXT, true);
	cr_assert_eq(
	    rec_wl_build(&f.view, NULL, &wl, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(
	    api_workload_name("JobSet", "jobset.x-k8s.io", "js",
		"9f9f-0000-1111", -1, API_WORKLOAD_NAME_MAX, &name, &err),
	    CU_OK);
	cr_assert_str_eq(json_string_value(json_object_get(
			     json_object_get(wl, "metadata"), "name")),
	    name);
	assert_json_text(
	    json_object_get(json_object_get(wl, "metadata"), "ownerReferences"),
	    "[{\"apiVersion\":\"jobset.x-k8s.io/v1alpha2\",\"kind\":"
	    "\"JobSet\",\"name\":\"js\",\"uid\":\"9f9f-0000-1111\","
	    "\"controller\":true,\"blockOwnerDeletion\":true}]");
	/* No copied labels, only the job uid; no annotations. */
	assert_json_text(
	    json_object_get(json_object_get(wl, "metadata"), "labels"),
	    "{\"kueue.x-k8s.io/job-uid\":\"9f9f-0000-1111\"}");
	cr_assert_null(
	    json_object_get(json_object_get(wl, "metadata"), "annotations"));
	ps = json_object_get(json_object_get(wl, "spec"), "podSets");
	assert_json_text(ps,
	    "[{\"name\":\"driver\",\"count\":1,\"template\":{"
	    "\"metadata\":{\"annotations\":{\"role\":\"driver\"}},"
	    "\"spec\":{\"restartPolicy\":\"Never\",\"containers\":[{\"name\":"
	    "\"d\",\"image\":\"img\",\"resources\":{\"requests\":{\"cpu\":"
	    "\"500m\"}}}]}},\"topologyRequest\":{\"podIndexLabel\":"
	    "\"batch.kubernetes.io/job-completion-index\","
	    "\"subGroupIndexLabel\":\"jobset.sigs.k8s.io/job-index\","
	    "\"subGroupCount\":1}},"
	    "{\"name\":\"workers\",\"count\":4,\"template\":{"
	    "\"metadata\":{\"labels\":{\"role\":\"worker\"}},"
	    "\"spec\":{\"restartPolicy\":\"Never\",\"containers\":[{\"name\":"
	    "\"w\",\"image\":\"img\",\"resources\":{\"requests\":{\"cpu\":"
	    "\"2\",\"nvidia.com/gpu\":\"1\"}}}]}},\"topologyRequest\":{"
	    "\"podIndexLabel\":\"batch.kubernetes.io/job-completion-index\","
	    "\"subGroupIndexLabel\":\"jobset.sigs.k8s.io/job-index\","
	    "\"subGroupCount\":2}}]");
	/* No priority class: priority 0, no ref. */
	cr_assert_eq(json_integer_value(json_object_get(
			 json_object_get(wl, "spec"), "priority")),
	    0);
	cr_assert_null(
	    json_object_get(json_object_get(wl, "spec"), "priorityClassRef"));
	cu_free(name);
	json_decref(wl);
	fixture_dispose(&f);
}

Test(workload_build, priority_from_lookup_and_missing_class)
{
	struct fixture f;
	struct api_priority_lookup lk = {
	    wpc_lookup, pc_lookup, NULL, false, NULL};
	struct rec_wl_build_opts o = {0, NULL, NULL, &lk};
	json_t *wl = NULL, *lbl;
	cu_error err;

	fixture_load(&f, JOB_TEXT, false);
	lbl = json_object_get(json_object_get(f.doc, "metadata"), "labels");
	json_object_set_new(
	    lbl, API_LABEL_PRIORITY_CLASS, json_string("batch-low"));
	fixture_reload(&f);
	cr_assert_eq(
	    rec_wl_build(&f.view, &o, &wl, &err), CU_OK, "%s", err.msg);
	assert_json_text(
	    json_object_get(json_object_get(wl, "spec"), "priorityClassRef"),
	    "{\"group\":\"kueue.x-k8s.io\",\"kind\":"
	    "\"WorkloadPriorityClass\",\"name\":\"batch-low\"}");
	cr_assert_eq(json_integer_value(json_object_get(
			 json_object_get(wl, "spec"), "priority")),
	    -5);
	json_decref(wl);
	json_object_set_new(lbl, API_LABEL_PRIORITY_CLASS, json_string("nope"));
	fixture_reload(&f);
	wl = NULL;
	cr_assert_eq(rec_wl_build(&f.view, &o, &wl, &err), CU_ENOTFOUND);
	cr_assert_null(wl);
	fixture_dispose(&f);
}

Test(workload_build, job_without_uid_is_rejected)
{
	struct fixture f;
	json_t *wl = NULL;
	cu_error err;

	fixture_load(&f,
	    "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":"
	    "{\"name\":\"x\"},\"spec\":{\"template\":{\"spec\":"
	    "{\"containers\":[]}}}}",
	    false);
	cr_assert_eq(rec_wl_build(&f.view, NULL, &wl, &err), CU_EINVAL);
	cr_assert(strstr(err.msg, "metadata.uid") != NULL, "%s", err.msg);
	cr_assert_null(wl);
	fixture_dispose(&f);
}

/* kueue.x-k8s.io/podset-group-name: Kueue's JobSet webhook rules on the
 * driver (1 pod) and Workers (4 pods) podSets; a refused job gets no
 * Workload. */
struct group_case {
	const char *driver, *workers; /* annotations JSON members */
	int driver_parallelism;
	const char *err; /* NULL: built with podSetGroupName "g" */
};

static const struct group_case group_cases[] = {
    {"\"kueue.x-k8s.io/podset-required-topology\":\"rack\","
     "\"kueue.x-k8s.io/podset-group-name\":\"g\"",
	"\"kueue.x-k8s.io/podset-required-topology\":\"rack\","
	"\"kueue.x-k8s.io/podset-group-name\":\"g\"",
	1, NULL},
    {"\"kueue.x-k8s.io/podset-required-topology\":\"rack\","
     "\"kueue.x-k8s.io/podset-group-name\":\"g\"",
	"\"kueue.x-k8s.io/podset-preferred-topology\":\"rack\","
	"\"kueue.x-k8s.io/podset-group-name\":\"g\"",
	1, "topology consistent with podSet workers in group 'g'"},
    {"\"kueue.x-k8s.io/podset-required-topology\":\"rack\","
     "\"kueue.x-k8s.io/podset-group-name\":\"g\"",
	"\"kueue.x-k8s.io/podset-required-topology\":\"block\","
	"\"kueue.x-k8s.io/podset-group-name\":\"g\"",
	1, "topology consistent with podSet workers in group 'g'"},
    {"\"kueue.x-k8s.io/podset-required-topology\":\"rack\","
     "\"kueue.x-k8s.io/podset-group-name\":\"g\"",
	"\"kueue.x-k8s.io/podset-required-topology\":\"rack\"", 1,
	"can only define groups of exactly 2 pod sets, got: 1 pod set(s)"},
    {"\"kueue.x-k8s.io/podset-required-topology\":\"rack\","
     "\"kueue.x-k8s.io/podset-group-name\":\"g\"",
	"\"kueue.x-k8s.io/podset-required-topology\":\"rack\","
	"\"kueue.x-k8s.io/podset-group-name\":\"g\"",
	2,
	"can only define groups where at least one pod set has only 1 "
	"replica, got: 2 replica(s) and 4 replica(s) in the group"},
    {"\"kueue.x-k8s.io/podset-required-topology\":\"rack\","
     "\"kueue.x-k8s.io/podset-group-name\":\"42\"",
	"\"kueue.x-k8s.io/podset-required-topology\":\"rack\","
	"\"kueue.x-k8s.io/podset-group-name\":\"42\"",
	1, "Invalid value: \"42\": must not be a number"},
    {"\"kueue.x-k8s.io/podset-required-topology\":\"rack\","
     "\"kueue.x-k8s.io/podset-group-name\":\"g\","
     "\"kueue.x-k8s.io/podset-slice-required-topology\":\"host\","
     "\"kueue.x-k8s.io/podset-slice-size\":\"1\"",
	"\"kueue.x-k8s.io/podset-required-topology\":\"rack\","
	"\"kueue.x-k8s.io/podset-group-name\":\"g\"",
	1,
	"Forbidden: may not be set when 'kueue.x-k8s.io/podset-slice-size' "
	"is specified"},
    {"\"kueue.x-k8s.io/podset-unconstrained-topology\":\"true\","
     "\"kueue.x-k8s.io/podset-group-name\":\"g\"",
	"\"kueue.x-k8s.io/podset-required-topology\":\"rack\","
	"\"kueue.x-k8s.io/podset-group-name\":\"g\"",
	1,
	"Forbidden: may not be set when neither "
	"'kueue.x-k8s.io/podset-preferred-topology' nor "
	"'kueue.x-k8s.io/podset-required-topology' is specified"},
};

static void set_rj(json_t *doc, size_t i, const char *anns, int par)
{
	json_t *rj = json_array_get(
	    json_object_get(json_object_get(doc, "spec"), "replicatedJobs"), i);
	json_t *js = json_object_get(json_object_get(rj, "template"), "spec");
	json_t *md =
	    json_object_get(json_object_get(js, "template"), "metadata");
	char buf[1024];

	snprintf(buf, sizeof(buf), "{%s}", anns);
	json_object_set_new(md, "annotations", parse(buf));
	if (par > 0) {
		json_object_set_new(js, "parallelism", json_integer(par));
		json_object_set_new(js, "completions", json_integer(par));
	}
}

Test(workload_build, podset_groups)
{
	size_t i, k;

	for (i = 0; i < sizeof(group_cases) / sizeof(group_cases[0]); i++) {
		const struct group_case *c = &group_cases[i];
		struct fixture f;
		json_t *wl = NULL;
		cu_error err;
		int rc;

		fixture_load(&f, JOBSET_TEXT, true);
		set_rj(f.doc, 0, c->driver, c->driver_parallelism);
		set_rj(f.doc, 1, c->workers, 0);
		fixture_reload(&f);
		rc = rec_wl_build(&f.view, NULL, &wl, &err);
		if (c->err == NULL) {
			json_t *ps;

			cr_assert_eq(rc, CU_OK, "case %zu: %s", i, err.msg);
			ps = json_object_get(
			    json_object_get(wl, "spec"), "podSets");
			for (k = 0; k < 2; k++)
				cr_assert_str_eq(
				    json_string_value(json_object_get(
					json_object_get(json_array_get(ps, k),
					    "topologyRequest"),
					"podSetGroupName")),
				    "g", "case %zu", i);
		} else {
			cr_assert_eq(rc, CU_EINVAL, "case %zu", i);
			cr_assert(strstr(err.msg, c->err) != NULL,
			    "case %zu: %s", i, err.msg);
			cr_assert_null(wl);
		}
		json_decref(wl);
		fixture_dispose(&f);
	}
}

/* ---- 2. equivalence ---------------------------------------------------- */

static bool equivalent(const struct fixture *f, const json_t *wlj)
{
	struct api_workload wl;
	bool eq = false;
	cu_error err;

	wl_decode(&wl, wlj);
	cr_assert_eq(
	    rec_wl_equivalent(&f->view, &wl, &eq, &err), CU_OK, "%s", err.msg);
	api_workload_dispose(&wl);
	return eq;
}

static json_t *pod_spec_of(json_t *jobdoc)
{
	return json_object_get(
	    json_object_get(json_object_get(jobdoc, "spec"), "template"),
	    "spec");
}

Test(workload_equivalent, true_and_false_cases)
{
	struct fixture f;
	json_t *wl, *req, *md;

	fixture_load(&f, JOB_TEXT, false);
	wl = stored_workload(&f);
	cr_assert(equivalent(&f, wl));

	/* Same quantity, other spelling: still equivalent. */
	req = json_object_get(
	    json_object_get(
		json_object_get(
		    json_array_get(
			json_object_get(pod_spec_of(f.doc), "containers"), 0),
		    "resources"),
		"requests"),
	    "cpu");
	cr_assert_not_null(req);
	json_string_set(req, "1000m");
	fixture_reload(&f);
	cr_assert(equivalent(&f, wl));

	/* Different request: replace. */
	json_string_set(req, "2");
	fixture_reload(&f);
	cr_assert_not(equivalent(&f, wl));
	json_string_set(req, "1");

	/* Different parallelism (count): replace. */
	json_object_set_new(
	    json_object_get(f.doc, "spec"), "parallelism", json_integer(4));
	fixture_reload(&f);
	cr_assert_not(equivalent(&f, wl));
	json_object_set_new(
	    json_object_get(f.doc, "spec"), "parallelism", json_integer(3));

	/* A node selector change does not matter (Kueue compares
	 * containers, initContainers and tolerations only). */
	json_object_set_new(pod_spec_of(f.doc), "nodeSelector",
	    json_pack("{s:s}", "disk", "hdd"));
	fixture_reload(&f);
	cr_assert(equivalent(&f, wl));

	/* Tolerations matter while not admitted... */
	json_object_set_new(pod_spec_of(f.doc), "tolerations", json_array());
	fixture_reload(&f);
	cr_assert_not(equivalent(&f, wl));
	/* ...and not once Admitted. */
	json_object_set_new(wl, "status",
	    parse("{\"conditions\":[{\"type\":\"Admitted\",\"status\":"
		  "\"True\",\"reason\":\"Admitted\",\"message\":\"m\","
		  "\"lastTransitionTime\":\"" NOW1_S "\"}]}"));
	cr_assert(equivalent(&f, wl));
	json_object_del(wl, "status");

	/* Another owner uid (job recreated with the same name). */
	json_object_set_new(pod_spec_of(f.doc), "tolerations",
	    parse("[{\"key\":\"team\",\"operator\":\"Equal\",\"value\":"
		  "\"a\",\"effect\":\"NoSchedule\"}]"));
	fixture_reload(&f);
	cr_assert(equivalent(&f, wl));
	md = json_object_get(f.doc, "metadata");
	json_object_set_new(md, "uid", json_string("other-uid"));
	fixture_reload(&f);
	cr_assert_not(equivalent(&f, wl));
	json_object_set_new(
	    md, "uid", json_string("0b6e7d1c-1111-2222-3333-444455556666"));

	/* max-exec-time label changed. */
	json_object_set_new(json_object_get(md, "labels"),
	    REC_LABEL_MAX_EXEC_TIME, json_string("900"));
	fixture_reload(&f);
	cr_assert_not(equivalent(&f, wl));

	json_decref(wl);
	fixture_dispose(&f);
}

Test(workload_equivalent, jobset_replicas_change)
{
	struct fixture f;
	json_t *wl, *rj;

	fixture_load(&f, JOBSET_TEXT, true);
	wl = stored_workload(&f);
	cr_assert(equivalent(&f, wl));
	rj = json_array_get(
	    json_object_get(json_object_get(f.doc, "spec"), "replicatedJobs"),
	    1);
	json_object_set_new(rj, "replicas", json_integer(3));
	fixture_reload(&f);
	cr_assert_not(equivalent(&f, wl));
	json_decref(wl);
	fixture_dispose(&f);
}

/* ---- 3. status --------------------------------------------------------- */

/* Two pod sets, two flavors: driver on on-demand (cpu), workers on spot
 * (cpu, nvidia.com/gpu) in ClusterQueue cq-a. */
static struct adm_flavor_use driver_uses[] = {
    {"cpu", "on-demand", 500},
};
static struct adm_flavor_use worker_uses[] = {
    {"cpu", "spot", 8000},
    {"nvidia.com/gpu", "spot", 4000},
};
static struct adm_podset_assignment admit_podsets[] = {
    {"driver", 1, driver_uses, 1, NULL},
    {"workers", 4, worker_uses, 2, NULL},
};

static struct adm_decision admit_decision(void)
{
	struct adm_decision d;

	memset(&d, 0, sizeof(d));
	d.kind = ADM_ADMIT;
	d.uid = "wl-uid-1";
	d.cluster_queue = "cq-a";
	d.podsets = admit_podsets;
	d.n_podsets = 2;
	return d;
}

#define ADMISSION_JSON                                                         \
	"{\"clusterQueue\":\"cq-a\",\"podSetAssignments\":["                   \
	"{\"name\":\"driver\",\"flavors\":{\"cpu\":\"on-demand\"},"            \
	"\"resourceUsage\":{\"cpu\":\"500m\"},\"count\":1},"                   \
	"{\"name\":\"workers\",\"flavors\":{\"cpu\":\"spot\","                 \
	"\"nvidia.com/gpu\":\"spot\"},\"resourceUsage\":{\"cpu\":\"8\","       \
	"\"nvidia.com/gpu\":\"4\"},\"count\":4}]}"

static json_t *admit_patch(const json_t *wlj, int64_t now)
{
	struct api_workload wl;
	struct adm_decision d = admit_decision();
	json_t *p = NULL;
	cu_error err;

	wl_decode(&wl, wlj);
	cr_assert_eq(
	    rec_wl_status_admit(&wl, &d, now, &p, &err), CU_OK, "%s", err.msg);
	api_workload_dispose(&wl);
	return p;
}

static json_t *pending_patch(
    const json_t *wlj, const char *reason, const char *msg, int64_t now)
{
	struct api_workload wl;
	json_t *p = NULL;
	cu_error err;

	wl_decode(&wl, wlj);
	cr_assert_eq(rec_wl_status_pending(&wl, reason, msg, now, &p, &err),
	    CU_OK, "%s", err.msg);
	api_workload_dispose(&wl);
	return p;
}

static json_t *evict_patch(
    const json_t *wlj, const struct rec_eviction *ev, int64_t now)
{
	struct api_workload wl;
	json_t *p = NULL;
	cu_error err;

	wl_decode(&wl, wlj);
	cr_assert_eq(
	    rec_wl_status_evict(&wl, ev, now, &p, &err), CU_OK, "%s", err.msg);
	api_workload_dispose(&wl);
	return p;
}

static json_t *release_patch(const json_t *wlj, int64_t now)
{
	struct api_workload wl;
	json_t *p = NULL;
	cu_error err;

	wl_decode(&wl, wlj);
	cr_assert_eq(
	    rec_wl_status_release(&wl, now, &p, &err), CU_OK, "%s", err.msg);
	api_workload_dispose(&wl);
	return p;
}

static json_t *finish_patch(
    const json_t *wlj, const char *reason, const char *msg, int64_t now)
{
	struct api_workload wl;
	json_t *p = NULL;
	cu_error err;

	wl_decode(&wl, wlj);
	cr_assert_eq(rec_wl_status_finish(&wl, reason, msg, now, &p, &err),
	    CU_OK, "%s", err.msg);
	api_workload_dispose(&wl);
	return p;
}

Test(workload_status, admission_golden_and_idempotent)
{
	struct fixture f;
	json_t *wl, *p;

	fixture_load(&f, JOBSET_TEXT, true);
	wl = stored_workload(&f);
	p = admit_patch(wl, NOW1);
	assert_json_text(p,
	    "{\"metadata\":{\"resourceVersion\":\"100\"},\"status\":{"
	    "\"admission\":" ADMISSION_JSON ",\"conditions\":["
	    "{\"type\":\"QuotaReserved\",\"status\":\"True\","
	    "\"observedGeneration\":1,\"lastTransitionTime\":\"" NOW1_S "\","
	    "\"reason\":\"QuotaReserved\",\"message\":\"Quota reserved in "
	    "ClusterQueue cq-a\"},"
	    "{\"type\":\"Admitted\",\"status\":\"True\","
	    "\"observedGeneration\":1,\"lastTransitionTime\":\"" NOW1_S "\","
	    "\"reason\":\"Admitted\",\"message\":\"The workload is "
	    "admitted\"}]}}");
	apply_in_place(&wl, p);
	/* The same decision again: nothing to write. */
	cr_assert_null(admit_patch(wl, NOW2));
	json_decref(wl);
	fixture_dispose(&f);
}

/* A podSet placed by topology carries its topologyAssignment. */
Test(workload_status, admission_carries_the_topology_assignment)
{
	struct fixture f;
	struct api_workload w;
	struct adm_decision d = admit_decision();
	struct adm_podset_assignment pa[2];
	json_t *wl,
	    *p = NULL, *psas,
	    *ta = parse("{\"levels\":[\"kubernetes.io/hostname\"],\"slices\":[{"
			"\"domainCount\":1,\"podCounts\":{\"universal\":4},"
			"\"valuesPerLevel\":[{\"universal\":\"n1\"}]}]}");
	cu_error err;

	fixture_load(&f, JOBSET_TEXT, true);
	wl = stored_workload(&f);
	memcpy(pa, admit_podsets, sizeof(pa));
	pa[1].topology = ta;
	d.podsets = pa;
	wl_decode(&w, wl);
	cr_assert_eq(
	    rec_wl_status_admit(&w, &d, NOW1, &p, &err), CU_OK, "%s", err.msg);
	api_workload_dispose(&w);
	psas = json_object_get(
	    json_object_get(json_object_get(p, "status"), "admission"),
	    "podSetAssignments");
	cr_assert_null(
	    json_object_get(json_array_get(psas, 0), "topologyAssignment"));
	cr_assert(json_equal(
	    json_object_get(json_array_get(psas, 1), "topologyAssignment"),
	    ta));
	json_decref(p);
	json_decref(ta);
	json_decref(wl);
	fixture_dispose(&f);
}

Test(workload_status, pending_idempotent_and_ltt_kept)
{
	struct fixture f;
	json_t *wl, *p, *conds;

	fixture_load(&f, JOB_TEXT, false);
	wl = stored_workload(&f);
	p = pending_patch(wl, "WaitingForQuota", "insufficient quota", NOW1);
	assert_json_text(p,
	    "{\"metadata\":{\"resourceVersion\":\"100\"},\"status\":{"
	    "\"conditions\":["
	    "{\"type\":\"QuotaReserved\",\"status\":\"False\","
	    "\"observedGeneration\":1,\"lastTransitionTime\":\"" NOW1_S "\","
	    "\"reason\":\"WaitingForQuota\",\"message\":\"insufficient "
	    "quota\"},"
	    "{\"type\":\"Admitted\",\"status\":\"False\","
	    "\"observedGeneration\":1,\"lastTransitionTime\":\"" NOW1_S "\","
	    "\"reason\":\"NoReservation\",\"message\":\"The workload has no "
	    "reservation\"}]}}");
	apply_in_place(&wl, p);
	/* Same decision twice: no second write. */
	cr_assert_null(
	    pending_patch(wl, "WaitingForQuota", "insufficient quota", NOW2));
	/* New message: written, lastTransitionTime unchanged (the status
	 * did not change). */
	p = pending_patch(wl, "WaitingForQuota", "still insufficient", NOW2);
	cr_assert_not_null(p);
	apply_in_place(&wl, p);
	conds = json_object_get(json_object_get(wl, "status"), "conditions");
	cr_assert_str_eq(json_string_value(json_object_get(
			     json_array_get(conds, 0), "lastTransitionTime")),
	    NOW1_S);
	cr_assert_str_eq(json_string_value(json_object_get(
			     json_array_get(conds, 0), "message")),
	    "still insufficient");
	json_decref(wl);
	fixture_dispose(&f);
}

/* Kueue's PropagateResourceRequests: the podSets' total requests ride
 * with the pending status, and only a difference is written. */
Test(workload_status, pending_writes_resource_requests_with_it)
{
	struct fixture f;
	struct api_workload w;
	json_t *wl, *p = NULL, *req;
	cu_error err;

	fixture_load(&f, JOB_TEXT, false);
	wl = stored_workload(&f);
	req = json_pack(
	    "[{s:s, s:{s:s}}]", "name", "main", "resources", "cpu", "2");
	wl_decode(&w, wl);
	cr_assert_eq(rec_wl_status_pending_requests(&w, "WaitingForQuota",
			 "insufficient quota", req, NOW1, &p, &err),
	    CU_OK, "%s", err.msg);
	api_workload_dispose(&w);
	cr_assert_not_null(p);
	cr_assert(json_equal(
	    json_object_get(json_object_get(p, "status"), "resourceRequests"),
	    req));
	apply_in_place(&wl, p);
	/* Same status and requests: nothing to write. */
	wl_decode(&w, wl);
	cr_assert_eq(rec_wl_status_pending_requests(&w, "WaitingForQuota",
			 "insufficient quota", req, NOW2, &p, &err),
	    CU_OK, "%s", err.msg);
	api_workload_dispose(&w);
	cr_assert_null(p);
	json_decref(req);
	json_decref(wl);
	fixture_dispose(&f);
}

Test(workload_status, eviction_release_readmit)
{
	struct fixture f;
	struct rec_eviction ev = {REC_EVICTED_PREEMPTED, NULL,
	    "InCohortReclamation", NULL, false, 0, 0};
	json_t *wl, *p, *st;
	char *msg;

	msg = rec_preemption_message("pre-uid", "job-uid-2",
	    ADM_IN_COHORT_RECLAMATION, "/co/cq-b", "/co/cq-a");
	cr_assert_str_eq(msg,
	    "Preempted to accommodate a workload (UID: pre-uid, JobUID: "
	    "job-uid-2) due to reclamation within the cohort; preemptor "
	    "path: /co/cq-b; preemptee path: /co/cq-a");
	ev.message = msg;
	fixture_load(&f, JOBSET_TEXT, true);
	wl = stored_workload(&f);
	apply_in_place(&wl, admit_patch(wl, NOW1));

	p = evict_patch(wl, &ev, NOW2);
	st = json_object_get(p, "status");
	/* Admission kept: the status patch does not touch it. */
	cr_assert_null(json_object_get(st, "admission"));
	apply_in_place(&wl, p);
	assert_json_text(json_object_get(wl, "status"),
	    "{\"admission\":" ADMISSION_JSON ",\"conditions\":["
	    "{\"type\":\"QuotaReserved\",\"status\":\"True\","
	    "\"observedGeneration\":1,\"lastTransitionTime\":\"" NOW1_S "\","
	    "\"reason\":\"QuotaReserved\",\"message\":\"Quota reserved in "
	    "ClusterQueue cq-a\"},"
	    "{\"type\":\"Admitted\",\"status\":\"True\","
	    "\"observedGeneration\":1,\"lastTransitionTime\":\"" NOW1_S "\","
	    "\"reason\":\"Admitted\",\"message\":\"The workload is "
	    "admitted\"},"
	    "{\"type\":\"Preempted\",\"status\":\"True\","
	    "\"lastTransitionTime\":\"" NOW2_S "\","
	    "\"reason\":\"InCohortReclamation\",\"message\":"
	    "\"Preempted to accommodate a workload (UID: pre-uid, JobUID: "
	    "job-uid-2) due to reclamation within the cohort; preemptor "
	    "path: /co/cq-b; preemptee path: /co/cq-a\"},"
	    "{\"type\":\"Evicted\",\"status\":\"True\","
	    "\"observedGeneration\":1,\"lastTransitionTime\":\"" NOW2_S "\","
	    "\"reason\":\"Preempted\",\"message\":"
	    "\"Preempted to accommodate a workload (UID: pre-uid, JobUID: "
	    "job-uid-2) due to reclamation within the cohort; preemptor "
	    "path: /co/cq-b; preemptee path: /co/cq-a\"}],"
	    "\"schedulingStats\":{\"evictions\":[{\"reason\":\"Preempted\","
	    "\"underlyingCause\":\"\",\"count\":1}]}}");
	/* Written once. */
	cr_assert_null(evict_patch(wl, &ev, NOW3));

	/* The job stopped: release the quota. */
	p = release_patch(wl, NOW3);
	assert_json_text(p,
	    "{\"metadata\":{\"resourceVersion\":\"100\"},\"status\":{"
	    "\"admission\":null,\"accumulatedPastExecutionTimeSeconds\":300,"
	    "\"conditions\":["
	    "{\"type\":\"QuotaReserved\",\"status\":\"False\","
	    "\"observedGeneration\":1,\"lastTransitionTime\":\"" NOW3_S "\","
	    "\"reason\":\"PendingEvaluation\",\"message\":\"Preempted to "
	    "accommodate a workload (UID: pre-uid, JobUID: job-uid-2) due to "
	    "reclamation within the cohort; preemptor path: /co/cq-b; "
	    "preemptee path: /co/cq-a\"},"
	    "{\"type\":\"Admitted\",\"status\":\"False\","
	    "\"observedGeneration\":1,\"lastTransitionTime\":\"" NOW3_S "\","
	    "\"reason\":\"NoReservation\",\"message\":\"The workload has no "
	    "reservation\"},"
	    "{\"type\":\"Preempted\",\"status\":\"True\","
	    "\"lastTransitionTime\":\"" NOW2_S "\","
	    "\"reason\":\"InCohortReclamation\",\"message\":"
	    "\"Preempted to accommodate a workload (UID: pre-uid, JobUID: "
	    "job-uid-2) due to reclamation within the cohort; preemptor "
	    "path: /co/cq-b; preemptee path: /co/cq-a\"},"
	    "{\"type\":\"Evicted\",\"status\":\"True\","
	    "\"observedGeneration\":1,\"lastTransitionTime\":\"" NOW2_S "\","
	    "\"reason\":\"Preempted\",\"message\":"
	    "\"Preempted to accommodate a workload (UID: pre-uid, JobUID: "
	    "job-uid-2) due to reclamation within the cohort; preemptor "
	    "path: /co/cq-b; preemptee path: /co/cq-a\"},"
	    "{\"type\":\"Requeued\",\"status\":\"True\","
	    "\"observedGeneration\":1,\"lastTransitionTime\":\"" NOW3_S "\","
	    "\"reason\":\"Preempted\",\"message\":"
	    "\"Preempted to accommodate a workload (UID: pre-uid, JobUID: "
	    "job-uid-2) due to reclamation within the cohort; preemptor "
	    "path: /co/cq-b; preemptee path: /co/cq-a\"}]}}");
	apply_in_place(&wl, p);
	cr_assert_null(release_patch(wl, NOW3 + 1000000000LL));

	/* Admitted again: Evicted and Preempted become False, "Previously". */
	apply_in_place(&wl, admit_patch(wl, NOW3 + 5000000000LL));
	st = json_object_get(wl, "status");
	{
		json_t *c;
		size_t i;
		int seen = 0;

		json_array_foreach(json_object_get(st, "conditions"), i, c)
		{
			const char *t =
			    json_string_value(json_object_get(c, "type"));
			const char *s =
			    json_string_value(json_object_get(c, "status"));

			if (strcmp(t, "Evicted") == 0 ||
			    strcmp(t, "Preempted") == 0) {
				seen++;
				cr_assert_str_eq(s, "False");
				cr_assert_str_eq(
				    json_string_value(
					json_object_get(c, "reason")),
				    "QuotaReserved");
				cr_assert(
				    strncmp(json_string_value(
						json_object_get(c, "message")),
					"Previously: Preempted to", 24) == 0);
			}
			if (strcmp(t, "Admitted") == 0 ||
			    strcmp(t, "QuotaReserved") == 0)
				cr_assert_str_eq(s, "True");
		}
		cr_assert_eq(seen, 2);
	}
	assert_json_text(json_object_get(st, "admission"), ADMISSION_JSON);
	cu_free(msg);
	json_decref(wl);
	fixture_dispose(&f);
}

Test(workload_status, finished_keeps_admission)
{
	struct fixture f;
	json_t *wl, *p;

	fixture_load(&f, JOB_TEXT, false);
	wl = stored_workload(&f);
	p = finish_patch(wl, REC_FINISHED_SUCCEEDED, "Job finished", NOW1);
	assert_json_text(p,
	    "{\"metadata\":{\"resourceVersion\":\"100\"},\"status\":{"
	    "\"conditions\":[{\"type\":\"Finished\",\"status\":\"True\","
	    "\"observedGeneration\":1,\"lastTransitionTime\":\"" NOW1_S "\","
	    "\"reason\":\"Succeeded\",\"message\":\"Job finished\"}]}}");
	json_decref(p);

	/* Admitted, then finished: admission untouched. */
	{
		struct fixture fs;

		fixture_load(&fs, JOBSET_TEXT, true);
		json_decref(wl);
		wl = stored_workload(&fs);
		apply_in_place(&wl, admit_patch(wl, NOW1));
		p = finish_patch(wl, REC_FINISHED_FAILED, "boom", NOW2);
		cr_assert_null(
		    json_object_get(json_object_get(p, "status"), "admission"));
		apply_in_place(&wl, p);
		cr_assert_not_null(json_object_get(
		    json_object_get(wl, "status"), "admission"));
		cr_assert_null(
		    finish_patch(wl, REC_FINISHED_FAILED, "x", NOW3));
		fixture_dispose(&fs);
	}
	json_decref(wl);
	fixture_dispose(&f);
}

Test(workload_status, long_message_truncated)
{
	struct fixture f;
	json_t *wl, *p, *c;
	char *big = cu_malloc(REC_CONDITION_MESSAGE_MAX + 100);
	const char *m;

	memset(big, 'a', REC_CONDITION_MESSAGE_MAX + 99);
	big[REC_CONDITION_MESSAGE_MAX + 99] = '\0';
	fixture_load(&f, JOB_TEXT, false);
	wl = stored_workload(&f);
	p = pending_patch(wl, "WaitingForQuota", big, NOW1);
	c = json_array_get(
	    json_object_get(json_object_get(p, "status"), "conditions"), 0);
	m = json_string_value(json_object_get(c, "message"));
	cr_assert_eq(strlen(m), REC_CONDITION_MESSAGE_MAX);
	cr_assert_str_eq(m + REC_CONDITION_MESSAGE_MAX - 4, " ...");
	json_decref(p);
	cu_free(big);
	json_decref(wl);
	fixture_dispose(&f);
}

Test(workload_status, bad_inputs)
{
	struct fixture f;
	struct api_workload wl;
	struct adm_decision d = admit_decision();
	json_t *wlj, *p = NULL;
	cu_error err;

	fixture_load(&f, JOB_TEXT, false);
	wlj = stored_workload(&f);
	wl_decode(&wl, wlj);
	d.kind = ADM_PENDING;
	cr_assert_eq(rec_wl_status_admit(&wl, &d, NOW1, &p, &err), CU_EINVAL);
	cr_assert_eq(
	    rec_wl_status_pending(&wl, "", "m", NOW1, &p, &err), CU_EINVAL);
	cr_assert(strstr(err.msg, "reason") != NULL);
	/* Not evicted: release writes nothing. */
	cr_assert_eq(rec_wl_status_release(&wl, NOW1, &p, &err), CU_OK);
	cr_assert_null(p);
	api_workload_dispose(&wl);
	json_decref(wlj);
	fixture_dispose(&f);
}

/* ---- 4. start and stop -------------------------------------------------- */

/* The admitted Workload of fixture f [owned decoded into *wl], admitted
 * with `adm` (status.admission JSON). */
static void admitted_workload(
    const struct fixture *f, const char *adm, struct api_workload *wl)
{
	json_t *wlj = stored_workload(f), *st;
	char buf[2048];

	snprintf(buf, sizeof(buf),
	    "{\"admission\":%s,\"conditions\":[{\"type\":\"QuotaReserved\","
	    "\"status\":\"True\",\"reason\":\"QuotaReserved\",\"message\":"
	    "\"m\",\"lastTransitionTime\":\"" NOW1_S "\"},{\"type\":"
	    "\"Admitted\",\"status\":\"True\",\"reason\":\"Admitted\","
	    "\"message\":\"m\",\"lastTransitionTime\":\"" NOW1_S "\"}]}",
	    adm);
	st = parse(buf);
	json_object_set_new(wlj, "status", st);
	wl_decode(wl, wlj);
	json_decref(wlj);
}

#define JOB_ADMISSION                                                          \
	"{\"clusterQueue\":\"cq-a\",\"podSetAssignments\":[{\"name\":"         \
	"\"main\",\"flavors\":{\"cpu\":\"spot\",\"memory\":\"spot\"},"         \
	"\"resourceUsage\":{\"cpu\":\"3\",\"memory\":\"3Gi\"},"                \
	"\"count\":3}]}"

/* A podSet placed by topology-aware scheduling: its pods are created
 * with the kueue.x-k8s.io/topology gate and name their Workload; the
 * podSet has no topologyRequest (implied TAS), so they say
 * unconstrained, as Kueue's podset.FromAssignment. */
Test(job_start, topology_assignment_gates_the_pods)
{
	struct fixture f;
	struct api_workload wl;
	struct api_resource_flavor fl[2];
	json_t *p = NULL, *after, *tpl, *anns;
	cu_error err;

	load_flavors(fl);
	fixture_load(&f, JOB_TEXT, false);
	admitted_workload(&f,
	    "{\"clusterQueue\":\"cq-a\",\"podSetAssignments\":[{\"name\":"
	    "\"main\",\"flavors\":{\"cpu\":\"spot\",\"memory\":\"spot\"},"
	    "\"resourceUsage\":{\"cpu\":\"3\",\"memory\":\"3Gi\"},"
	    "\"count\":3,\"topologyAssignment\":{\"levels\":["
	    "\"kubernetes.io/hostname\"],\"slices\":[{\"domainCount\":1,"
	    "\"podCounts\":{\"universal\":3},\"valuesPerLevel\":[{"
	    "\"universal\":\"n1\"}]}]}}]}",
	    &wl);
	cr_assert_eq(rec_job_start_patch(&f.view, &wl, fl, 2, &p, &err), CU_OK,
	    "%s", err.msg);
	after = apply(f.doc, p);
	json_decref(p);
	tpl = json_object_get(json_object_get(after, "spec"), "template");
	assert_json_text(
	    json_object_get(json_object_get(tpl, "spec"), "schedulingGates"),
	    "[{\"name\":\"kueue.x-k8s.io/topology\"}]");
	anns = json_object_get(json_object_get(tpl, "metadata"), "annotations");
	cr_assert_str_eq(
	    json_string_value(json_object_get(anns, "kueue.x-k8s.io/workload")),
	    wl.meta.name);
	cr_assert_str_eq(json_string_value(json_object_get(anns,
			     "kueue.x-k8s.io/podset-unconstrained-topology")),
	    "true");
	json_decref(after);
	api_workload_dispose(&wl);
	dispose_flavors(fl);
	fixture_dispose(&f);
}

Test(job_start, job_golden_and_noop)
{
	struct fixture f, started;
	struct api_workload wl;
	struct api_resource_flavor fl[2];
	json_t *p = NULL, *after;
	cu_error err;

	load_flavors(fl);
	fixture_load(&f, JOB_TEXT, false);
	admitted_workload(&f, JOB_ADMISSION, &wl);
	cr_assert_eq(rec_job_start_patch(&f.view, &wl, fl, 2, &p, &err), CU_OK,
	    "%s", err.msg);
	cr_assert_str_eq(
	    json_string_value(json_object_get(
		json_object_get(p, "metadata"), "resourceVersion")),
	    "41");
	after = apply(f.doc, p);
	json_decref(p);
	assert_json_text(json_object_get(after, "spec"),
	    "{\"parallelism\":3,\"completions\":5,\"suspend\":false,"
	    "\"template\":{\"metadata\":{\"labels\":{\"app\":\"x\","
	    "\"batch.kubernetes.io/controller-uid\":\"0b6e\","
	    "\"batch.kubernetes.io/job-name\":\"sample\","
	    "\"kueue.x-k8s.io/podset\":\"main\","
	    "\"kueue.x-k8s.io/local-queue-name\":\"main\","
	    "\"kueue.x-k8s.io/cluster-queue-name\":\"cq-a\"}},"
	    "\"spec\":{\"restartPolicy\":\"Never\","
	    "\"nodeSelector\":{\"disk\":\"ssd\",\"cloud/capacity\":\"spot\","
	    "\"zone\":\"z1\"},"
	    "\"tolerations\":[{\"key\":\"team\",\"operator\":\"Equal\","
	    "\"value\":\"a\",\"effect\":\"NoSchedule\"},{\"key\":\"spot\","
	    "\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}],"
	    "\"containers\":[{\"name\":\"c\",\"image\":\"busybox\","
	    "\"resources\":{\"requests\":{\"cpu\":\"1\","
	    "\"memory\":\"1Gi\"}}}]}}}");
	/* Already started: no write. */
	memset(&started, 0, sizeof(started));
	started.doc = after;
	started.view.kind = REC_JOB_BATCH;
	cr_assert_eq(api_job_decode(&started.job, after, &err), CU_OK);
	started.view.job = &started.job;
	cr_assert_eq(
	    rec_job_start_patch(&started.view, &wl, fl, 2, &p, &err), CU_OK);
	cr_assert_null(p);
	fixture_dispose(&started);
	api_workload_dispose(&wl);
	dispose_flavors(fl);
	fixture_dispose(&f);
}

Test(job_start, conflict_and_missing_flavor)
{
	struct fixture f;
	struct api_workload wl;
	struct api_resource_flavor fl[2];
	json_t *p = NULL;
	cu_error err;

	load_flavors(fl);
	fixture_load(&f, JOB_TEXT, false);
	json_object_set_new(json_object_get(pod_spec_of(f.doc), "nodeSelector"),
	    "zone", json_string("z9"));
	fixture_reload(&f);
	admitted_workload(&f, JOB_ADMISSION, &wl);
	cr_assert_eq(
	    rec_job_start_patch(&f.view, &wl, fl, 2, &p, &err), CU_EINVAL);
	cr_assert_str_eq(err.msg,
	    "invalid admission check PodSetUpdate: conflict for nodeSelector: "
	    "conflict for key=zone, value1=z9, value2=z1");
	cr_assert_null(p);
	/* Only on-demand known: spot is missing. */
	cr_assert_eq(
	    rec_job_start_patch(&f.view, &wl, fl, 1, &p, &err), CU_ENOTFOUND);
	cr_assert(strstr(err.msg, "ResourceFlavor spot not found") != NULL,
	    "%s", err.msg);
	api_workload_dispose(&wl);
	/* Not admitted at all. */
	{
		json_t *wlj = stored_workload(&f);

		wl_decode(&wl, wlj);
		json_decref(wlj);
		cr_assert_eq(rec_job_start_patch(&f.view, &wl, fl, 2, &p, &err),
		    CU_EINVAL);
		api_workload_dispose(&wl);
	}
	dispose_flavors(fl);
	fixture_dispose(&f);
}

/* The podSetUpdates of the Workload's admission checks are merged into
 * the started job's template after the flavor's (labels, annotations,
 * nodeSelector, tolerations); one that conflicts with the template is
 * refused with Kueue's message. */
Test(job_start, admission_check_pod_set_updates)
{
	struct fixture f;
	struct api_workload wl, wl2;
	struct api_resource_flavor fl[2];
	json_t *p = NULL, *after, *wlj, *tpl;
	cu_error err;

	load_flavors(fl);
	fixture_load(&f, JOB_TEXT, false);
	admitted_workload(&f, JOB_ADMISSION, &wl);
	wlj = json_deep_copy(wl.raw);
	json_object_set_new(json_object_get(wlj, "status"), "admissionChecks",
	    parse("[{\"name\":\"prov\",\"state\":\"Ready\",\"message\":"
		  "\"\",\"lastTransitionTime\":\"" NOW1_S "\","
		  "\"podSetUpdates\":[{\"name\":\"main\",\"labels\":{"
		  "\"l1\":\"v1\"},\"annotations\":{\"a1\":\"v2\"},"
		  "\"nodeSelector\":{\"pool\":\"p1\"},\"tolerations\":[{"
		  "\"key\":\"pool\",\"operator\":\"Exists\",\"effect\":"
		  "\"NoSchedule\"}]},{\"name\":\"other\",\"labels\":{"
		  "\"l2\":\"x\"}}]}]"));
	wl_decode(&wl2, wlj);
	cr_assert_eq(rec_job_start_patch(&f.view, &wl2, fl, 2, &p, &err), CU_OK,
	    "%s", err.msg);
	after = apply(f.doc, p);
	json_decref(p);
	tpl = json_object_get(json_object_get(after, "spec"), "template");
	cr_assert_str_eq(
	    json_string_value(json_object_get(
		json_object_get(json_object_get(tpl, "metadata"), "labels"),
		"l1")),
	    "v1");
	cr_assert_null(json_object_get(
	    json_object_get(json_object_get(tpl, "metadata"), "labels"), "l2"));
	cr_assert_str_eq(json_string_value(json_object_get(
			     json_object_get(json_object_get(tpl, "metadata"),
				 "annotations"),
			     "a1")),
	    "v2");
	cr_assert_str_eq(
	    json_string_value(json_object_get(
		json_object_get(json_object_get(tpl, "spec"), "nodeSelector"),
		"pool")),
	    "p1");
	/* the flavor's selector is kept */
	cr_assert_str_eq(
	    json_string_value(json_object_get(
		json_object_get(json_object_get(tpl, "spec"), "nodeSelector"),
		"zone")),
	    "z1");
	cr_assert_eq(json_array_size(json_object_get(
			 json_object_get(tpl, "spec"), "tolerations")),
	    3);
	json_decref(after);
	api_workload_dispose(&wl2);
	/* An update that contradicts the flavor: refused. */
	json_object_set_new(
	    json_object_get(
		json_array_get(
		    json_object_get(
			json_array_get(
			    json_object_get(json_object_get(wlj, "status"),
				"admissionChecks"),
			    0),
			"podSetUpdates"),
		    0),
		"nodeSelector"),
	    "zone", json_string("z7"));
	wl_decode(&wl2, wlj);
	cr_assert_eq(
	    rec_job_start_patch(&f.view, &wl2, fl, 2, &p, &err), CU_EINVAL);
	cr_assert_str_eq(err.msg,
	    "invalid admission check PodSetUpdate: conflict for nodeSelector: "
	    "conflict for key=zone, value1=z1, value2=z7");
	api_workload_dispose(&wl2);
	json_decref(wlj);
	api_workload_dispose(&wl);
	dispose_flavors(fl);
	fixture_dispose(&f);
}

/* Run the stop protocol on f to the end, applying each write; returns
 * the number of writes and checks the expected steps. */
static int stop_all(struct fixture *f, const struct api_workload *wl,
    const enum rec_stop_step *want, int n_want)
{
	enum rec_stop_step step;
	json_t *p = NULL;
	cu_error err;
	int n = 0;

	for (;;) {
		cr_assert_eq(rec_job_stop_patch(&f->view, wl, &step, &p, &err),
		    CU_OK, "%s", err.msg);
		if (step == REC_STOP_DONE) {
			cr_assert_null(p);
			break;
		}
		cr_assert_lt(n, n_want, "too many stop steps");
		cr_assert_eq(step, want[n], "step %d: %d", n, step);
		apply_in_place(&f->doc, p);
		fixture_reload(f);
		n++;
	}
	cr_assert_eq(n, n_want);
	return n;
}

Test(job_stop, job_round_trip_restores_original)
{
	struct fixture f;
	struct api_workload wl;
	struct api_resource_flavor fl[2];
	json_t *orig, *p = NULL;
	cu_error err;
	static const enum rec_stop_step steps[] = {
	    REC_STOP_SUSPEND, REC_STOP_RESET_START, REC_STOP_RESTORE};

	load_flavors(fl);
	fixture_load(&f, JOB_TEXT, false);
	orig = json_deep_copy(f.doc);
	admitted_workload(&f, JOB_ADMISSION, &wl);
	cr_assert(rec_job_is_suspended(&f.view));
	cr_assert_eq(rec_job_start_patch(&f.view, &wl, fl, 2, &p, &err), CU_OK,
	    "%s", err.msg);
	apply_in_place(&f.doc, p);
	/* The batch controller starts it. */
	json_object_set_new(f.doc, "status",
	    parse("{\"startTime\":\"" NOW1_S "\",\"active\":3}"));
	fixture_reload(&f);
	cr_assert_not(rec_job_is_suspended(&f.view));
	cr_assert(rec_job_is_active(&f.view));

	/* The first step only suspends and marks the stop. */
	{
		enum rec_stop_step step;

		cr_assert_eq(
		    rec_job_stop_patch(&f.view, &wl, &step, &p, &err), CU_OK);
		cr_assert_eq(step, REC_STOP_SUSPEND);
		assert_json_text(p,
		    "{\"metadata\":{\"resourceVersion\":\"41\","
		    "\"annotations\":{\"kueue.x-k8s.io/stopping\":\"true\"}},"
		    "\"spec\":{\"suspend\":true}}");
		json_decref(p);
	}
	stop_all(&f, &wl, steps, 3);
	/* A stop in progress is not "suspended" for Kueue; done now. */
	cr_assert(rec_job_is_suspended(&f.view));
	/* The batch controller drops the pods. */
	json_object_del(f.doc, "status");
	fixture_reload(&f);
	assert_json_eq(f.doc, orig);
	json_decref(orig);
	api_workload_dispose(&wl);
	dispose_flavors(fl);
	fixture_dispose(&f);
}

Test(job_stop, stopping_annotation_resumes)
{
	struct fixture f;
	json_t *ann;
	static const enum rec_stop_step steps[] = {REC_STOP_RESTORE};

	fixture_load(&f, JOB_TEXT, false);
	ann =
	    json_object_get(json_object_get(f.doc, "metadata"), "annotations");
	json_object_set_new(ann, REC_ANNOTATION_STOPPING, json_string("true"));
	fixture_reload(&f);
	/* suspend=true but still stopping: not suspended yet. */
	cr_assert_not(rec_job_is_suspended(&f.view));
	stop_all(&f, NULL, steps, 1);
	cr_assert_null(json_object_get(
	    ann = json_object_get(
		json_object_get(f.doc, "metadata"), "annotations"),
	    REC_ANNOTATION_STOPPING));
	cr_assert(rec_job_is_suspended(&f.view));
	fixture_dispose(&f);
}

#define JOBSET_ADMISSION                                                       \
	"{\"clusterQueue\":\"cq-a\",\"podSetAssignments\":["                   \
	"{\"name\":\"driver\",\"flavors\":{\"cpu\":\"on-demand\"},"            \
	"\"resourceUsage\":{\"cpu\":\"500m\"},\"count\":1},"                   \
	"{\"name\":\"workers\",\"flavors\":{\"cpu\":\"spot\","                 \
	"\"nvidia.com/gpu\":\"spot\"},\"resourceUsage\":{\"cpu\":\"8\","       \
	"\"nvidia.com/gpu\":\"4\"},\"count\":4}]}"

Test(job_start, jobset_round_trip)
{
	struct fixture f;
	struct api_workload wl;
	struct api_resource_flavor fl[2];
	json_t *orig, *p = NULL, *rjs;
	cu_error err;
	static const enum rec_stop_step steps[] = {REC_STOP_SUSPEND};

	load_flavors(fl);
	fixture_load(&f, JOBSET_TEXT, true);
	orig = json_deep_copy(f.doc);
	admitted_workload(&f, JOBSET_ADMISSION, &wl);
	cr_assert_eq(rec_job_start_patch(&f.view, &wl, fl, 2, &p, &err), CU_OK,
	    "%s", err.msg);
	/* A merge patch: the whole replicatedJobs list, guarded by the
	 * resourceVersion. */
	cr_assert_str_eq(
	    json_string_value(json_object_get(
		json_object_get(p, "metadata"), "resourceVersion")),
	    "7");
	apply_in_place(&f.doc, p);
	fixture_reload(&f);
	rjs = json_object_get(json_object_get(f.doc, "spec"), "replicatedJobs");
	assert_json_text(
	    json_object_get(
		json_object_get(
		    json_object_get(
			json_object_get(json_array_get(rjs, 0), "template"),
			"spec"),
		    "template"),
		"metadata"),
	    "{\"annotations\":{\"role\":\"driver\"},\"labels\":{"
	    "\"kueue.x-k8s.io/podset\":\"driver\","
	    "\"kueue.x-k8s.io/local-queue-name\":\"main\","
	    "\"kueue.x-k8s.io/cluster-queue-name\":\"cq-a\"}}");
	assert_json_text(
	    json_object_get(
		json_object_get(
		    json_object_get(
			json_object_get(json_array_get(rjs, 0), "template"),
			"spec"),
		    "template"),
		"spec"),
	    "{\"restartPolicy\":\"Never\",\"nodeSelector\":{"
	    "\"cloud/capacity\":\"on-demand\"},\"containers\":[{\"name\":"
	    "\"d\",\"image\":\"img\",\"resources\":{\"requests\":{\"cpu\":"
	    "\"500m\"}}}]}");
	assert_json_text(
	    json_object_get(
		json_object_get(
		    json_object_get(
			json_object_get(json_array_get(rjs, 1), "template"),
			"spec"),
		    "template"),
		"spec"),
	    "{\"restartPolicy\":\"Never\",\"nodeSelector\":{"
	    "\"cloud/capacity\":\"spot\",\"zone\":\"z1\"},\"tolerations\":[{"
	    "\"key\":\"spot\",\"operator\":\"Exists\",\"effect\":"
	    "\"NoSchedule\"}],\"containers\":[{\"name\":\"w\",\"image\":"
	    "\"img\",\"resources\":{\"requests\":{\"cpu\":\"2\","
	    "\"nvidia.com/gpu\":\"1\"}}}]}");
	cr_assert_eq(json_is_false(json_object_get(
			 json_object_get(f.doc, "spec"), "suspend")),
	    true);
	/* Started: start again is a no-op. */
	cr_assert_eq(rec_job_start_patch(&f.view, &wl, fl, 2, &p, &err), CU_OK);
	cr_assert_null(p);
	/* Stop: one patch, back to the original. */
	stop_all(&f, &wl, steps, 1);
	assert_json_eq(f.doc, orig);
	json_decref(orig);
	api_workload_dispose(&wl);
	dispose_flavors(fl);
	fixture_dispose(&f);
}

Test(job_start, partial_admission_sets_parallelism)
{
	struct fixture f;
	struct api_workload wl;
	struct api_resource_flavor fl[2];
	json_t *orig, *p = NULL, *ann;
	cu_error err;
	static const enum rec_stop_step steps[] = {
	    REC_STOP_SUSPEND, REC_STOP_RESTORE};

	load_flavors(fl);
	fixture_load(&f, JOB_TEXT, false);
	ann =
	    json_object_get(json_object_get(f.doc, "metadata"), "annotations");
	json_object_set_new(
	    ann, "kueue.x-k8s.io/job-min-parallelism", json_string("1"));
	json_object_set_new(ann, REC_ANNOTATION_COMPLETIONS_EQ_PARALLELISM,
	    json_string("true"));
	json_object_set_new(
	    json_object_get(f.doc, "spec"), "completions", json_integer(3));
	fixture_reload(&f);
	orig = json_deep_copy(f.doc);
	admitted_workload(&f,
	    "{\"clusterQueue\":\"cq-a\",\"podSetAssignments\":[{\"name\":"
	    "\"main\",\"flavors\":{\"cpu\":\"on-demand\"},\"resourceUsage\":"
	    "{\"cpu\":\"2\"},\"count\":2}]}",
	    &wl);
	cr_assert(wl.spec.pod_sets[0].has_min_count);
	cr_assert_eq(rec_job_start_patch(&f.view, &wl, fl, 2, &p, &err), CU_OK,
	    "%s", err.msg);
	apply_in_place(&f.doc, p);
	fixture_reload(&f);
	cr_assert_eq(f.job.spec.parallelism, 2);
	cr_assert_eq(f.job.spec.completions, 2);
	/* Stop restores the pod set count (no startTime: two steps). */
	stop_all(&f, &wl, steps, 2);
	assert_json_eq(f.doc, orig);
	json_decref(orig);
	api_workload_dispose(&wl);
	dispose_flavors(fl);
	fixture_dispose(&f);
}

Test(job_stop, already_suspended_is_noop)
{
	struct fixture f;
	json_t *wlj;
	struct api_workload wl;
	enum rec_stop_step step;
	json_t *p = NULL;
	cu_error err;

	fixture_load(&f, JOBSET_TEXT, true);
	wlj = stored_workload(&f);
	wl_decode(&wl, wlj);
	cr_assert_eq(rec_job_stop_patch(&f.view, &wl, &step, &p, &err), CU_OK);
	cr_assert_eq(step, REC_STOP_DONE);
	cr_assert_null(p);
	api_workload_dispose(&wl);
	json_decref(wlj);
	fixture_dispose(&f);

	/* A suspended Job whose templates are the saved ones. */
	fixture_load(&f, JOB_TEXT, false);
	wlj = stored_workload(&f);
	wl_decode(&wl, wlj);
	cr_assert_eq(rec_job_stop_patch(&f.view, &wl, &step, &p, &err), CU_OK);
	cr_assert_eq(step, REC_STOP_DONE);
	cr_assert_null(p);
	api_workload_dispose(&wl);
	json_decref(wlj);
	fixture_dispose(&f);

	/* The same without template metadata: nothing to restore, so no
	 * write adding an empty `metadata: {}` (a change to no one). */
	fixture_load(&f,
	    "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\","
	    "\"metadata\":{\"name\":\"bare\",\"namespace\":\"team-a\","
	    "\"uid\":\"u-1\",\"resourceVersion\":\"5\"},"
	    "\"spec\":{\"parallelism\":1,\"suspend\":true,"
	    "\"template\":{\"spec\":{\"restartPolicy\":\"Never\","
	    "\"containers\":[{\"name\":\"c\",\"image\":\"busybox\","
	    "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}}}",
	    false);
	wlj = stored_workload(&f);
	wl_decode(&wl, wlj);
	cr_assert_eq(rec_job_stop_patch(&f.view, &wl, &step, &p, &err), CU_OK,
	    "%s", err.msg);
	cr_assert_eq(step, REC_STOP_DONE);
	cr_assert_null(p);
	api_workload_dispose(&wl);
	json_decref(wlj);
	fixture_dispose(&f);
}

/* ---- 5. job state ------------------------------------------------------ */

Test(job_state, finished_job_and_jobset)
{
	struct fixture f;
	bool ok = true;
	const char *msg = NULL;

	fixture_load(&f, JOB_TEXT, false);
	cr_assert_not(rec_job_finished(&f.view, &ok, &msg));
	json_object_set_new(f.doc, "status",
	    parse("{\"conditions\":[{\"type\":\"SuccessCriteriaMet\","
		  "\"status\":\"True\"},{\"type\":\"Failed\",\"status\":"
		  "\"False\"}]}"));
	fixture_reload(&f);
	cr_assert_not(rec_job_finished(&f.view, &ok, &msg));
	json_object_set_new(f.doc, "status",
	    parse("{\"conditions\":[{\"type\":\"Failed\",\"status\":"
		  "\"True\",\"reason\":\"BackoffLimitExceeded\",\"message\":"
		  "\"Job has reached the specified backoff limit\"}]}"));
	fixture_reload(&f);
	cr_assert(rec_job_finished(&f.view, &ok, &msg));
	cr_assert_not(ok);
	cr_assert_str_eq(msg, "Job has reached the specified backoff limit");
	json_object_set_new(f.doc, "status",
	    parse("{\"conditions\":[{\"type\":\"Complete\",\"status\":"
		  "\"True\"}]}"));
	fixture_reload(&f);
	cr_assert(rec_job_finished(&f.view, &ok, &msg));
	cr_assert(ok);
	cr_assert_str_eq(msg, "");
	fixture_dispose(&f);

	fixture_load(&f, JOBSET_TEXT, true);
	cr_assert_not(rec_job_finished(&f.view, NULL, NULL));
	cr_assert_not(rec_job_is_active(&f.view));
	json_object_set_new(f.doc, "status",
	    parse("{\"replicatedJobsStatus\":[{\"name\":\"driver\","
		  "\"active\":1,\"ready\":0,\"succeeded\":0,\"failed\":0,"
		  "\"suspended\":0}],\"conditions\":[{\"type\":\"Completed\","
		  "\"status\":\"False\",\"reason\":\"r\",\"message\":\"m\","
		  "\"lastTransitionTime\":\"" NOW1_S "\"}]}"));
	fixture_reload(&f);
	cr_assert(rec_job_is_active(&f.view));
	cr_assert_not(rec_job_finished(&f.view, NULL, NULL));
	json_object_set_new(f.doc, "status",
	    parse("{\"conditions\":[{\"type\":\"Failed\",\"status\":\"True\","
		  "\"reason\":\"FailedJobs\",\"message\":\"jobset failed\","
		  "\"lastTransitionTime\":\"" NOW1_S "\"}]}"));
	fixture_reload(&f);
	cr_assert(rec_job_finished(&f.view, &ok, &msg));
	cr_assert_not(ok);
	cr_assert_str_eq(msg, "jobset failed");
	json_object_set_new(f.doc, "status",
	    parse("{\"conditions\":[{\"type\":\"Completed\",\"status\":"
		  "\"True\",\"reason\":\"AllJobsCompleted\",\"message\":"
		  "\"jobset completed successfully\",\"lastTransitionTime\":"
		  "\"" NOW1_S "\"}]}"));
	fixture_reload(&f);
	cr_assert(rec_job_finished(&f.view, &ok, &msg));
	cr_assert(ok);
	cr_assert_str_eq(msg, "jobset completed successfully");
	fixture_dispose(&f);
}

Test(job_state, preemption_message_unknowns)
{
	char *m =
	    rec_preemption_message(NULL, "", ADM_IN_CLUSTER_QUEUE, "/cq", NULL);

	cr_assert_str_eq(m,
	    "Preempted to accommodate a workload (UID: UNKNOWN, JobUID: "
	    "UNKNOWN) due to prioritization in the ClusterQueue; preemptor "
	    "path: /cq; preemptee path: UNKNOWN");
	cu_free(m);
	m = rec_preemption_message(
	    "u", "j", ADM_IN_COHORT_FAIR_SHARING, "/co/a", "/co/b");
	cr_assert_str_eq(m,
	    "Preempted to accommodate a workload (UID: u, JobUID: j) due to "
	    "Fair Sharing within the cohort; preemptor path: /co/a; "
	    "preemptee path: /co/b");
	cu_free(m);
	cr_assert_str_eq(adm_preempt_reason_string(ADM_IN_COHORT_FAIR_SHARING),
	    "InCohortFairSharing");
}

Test(workload_status, non_preemption_eviction_requeued_false)
{
	struct fixture f;
	struct rec_eviction ev = {REC_EVICTED_CLUSTER_QUEUE_STOPPED,
	    "The ClusterQueue is stopped", NULL, NULL, false, 0, 0};
	json_t *wl, *p, *c;
	size_t i;
	bool requeued = false;

	fixture_load(&f, JOB_TEXT, false);
	wl = stored_workload(&f);
	apply_in_place(&wl, admit_patch(wl, NOW1));
	p = evict_patch(wl, &ev, NOW2);
	cr_assert_not_null(p);
	apply_in_place(&wl, p);
	apply_in_place(&wl, release_patch(wl, NOW3));
	json_array_foreach(
	    json_object_get(json_object_get(wl, "status"), "conditions"), i, c)
	{
		const char *t = json_string_value(json_object_get(c, "type"));

		if (strcmp(t, "Requeued") == 0) {
			requeued = true;
			cr_assert_str_eq(
			    json_string_value(json_object_get(c, "status")),
			    "False");
			cr_assert_str_eq(
			    json_string_value(json_object_get(c, "reason")),
			    "ClusterQueueStopped");
		}
		cr_assert_str_neq(t, "Preempted");
	}
	cr_assert(requeued);
	cr_assert_null(
	    json_object_get(json_object_get(wl, "status"), "admission"));
	json_decref(wl);
	fixture_dispose(&f);
}

/* The condition of type t in wl's status, or NULL. */
static json_t *cond_of(json_t *wl, const char *t)
{
	json_t *c;
	size_t i;

	json_array_foreach(
	    json_object_get(json_object_get(wl, "status"), "conditions"), i, c)
	{
		if (strcmp(json_string_value(json_object_get(c, "type")), t) ==
		    0)
			return c;
	}
	return NULL;
}

/* maximumExecutionTimeSeconds, as Kueue: DeactivationTarget (clearing the
 * accumulated time), spec.active=false, then the Deactivated eviction
 * that consumes the target and counts its underlying cause; reactivated
 * later: Requeued=True. Each write is built once. */
Test(workload_status, deactivation_by_target)
{
	struct fixture f;
	struct rec_eviction ev = {REC_EVICTED_DEACTIVATED,
	    "The workload is deactivated due to exceeding the maximum "
	    "execution time",
	    NULL, REC_MAX_EXEC_EXCEEDED, false, 0, 0};
	struct api_workload d;
	json_t *wl, *p, *e;
	cu_error err;

	fixture_load(&f, JOB_TEXT, false);
	wl = stored_workload(&f);
	apply_in_place(&wl, admit_patch(wl, NOW1));
	json_object_set_new(json_object_get(wl, "status"),
	    "accumulatedPastExecutionTimeSeconds", json_integer(7));
	wl_decode(&d, wl);
	cr_assert_eq(
	    rec_wl_status_deactivation_target(&d, REC_MAX_EXEC_EXCEEDED,
		REC_MSG_MAX_EXEC_EXCEEDED, NOW2, &p, &err),
	    CU_OK);
	api_workload_dispose(&d);
	cr_assert_not_null(p);
	apply_in_place(&wl, p);
	cr_assert_null(json_object_get(json_object_get(wl, "status"),
	    "accumulatedPastExecutionTimeSeconds"));
	cr_assert_str_eq(json_string_value(json_object_get(
			     cond_of(wl, "DeactivationTarget"), "reason")),
	    "MaximumExecutionTimeExceeded");
	wl_decode(&d, wl);
	cr_assert_eq(
	    rec_wl_status_deactivation_target(&d, REC_MAX_EXEC_EXCEEDED,
		REC_MSG_MAX_EXEC_EXCEEDED, NOW3, &p, &err),
	    CU_OK);
	cr_assert_null(p, "written once");
	cr_assert_eq(rec_wl_deactivate_patch(&d, &p, &err), CU_OK);
	api_workload_dispose(&d);
	cr_assert_not_null(
	    json_object_get(json_object_get(p, "metadata"), "resourceVersion"));
	apply_in_place(&wl, p);
	cr_assert(json_is_false(
	    json_object_get(json_object_get(wl, "spec"), "active")));
	wl_decode(&d, wl);
	cr_assert_eq(rec_wl_deactivate_patch(&d, &p, &err), CU_OK);
	cr_assert_null(p, "already inactive");
	api_workload_dispose(&d);
	json_object_set_new(json_object_get(wl, "status"), "requeueState",
	    json_pack("{s:i}", "count", 2));
	apply_in_place(&wl, evict_patch(wl, &ev, NOW3));
	cr_assert_null(cond_of(wl, "DeactivationTarget"));
	cr_assert_null(
	    json_object_get(json_object_get(wl, "status"), "requeueState"),
	    "a deactivation clears the requeue state");
	cr_assert_str_eq(json_string_value(
			     json_object_get(cond_of(wl, "Evicted"), "reason")),
	    "DeactivatedDueToMaximumExecutionTimeExceeded");
	e = json_array_get(
	    json_object_get(json_object_get(json_object_get(wl, "status"),
				"schedulingStats"),
		"evictions"),
	    0);
	cr_assert_str_eq(
	    json_string_value(json_object_get(e, "underlyingCause")),
	    "MaximumExecutionTimeExceeded");
	cr_assert_str_eq(
	    json_string_value(json_object_get(e, "reason")), "Deactivated");
	apply_in_place(&wl, release_patch(wl, NOW3));
	cr_assert_str_eq(json_string_value(json_object_get(
			     cond_of(wl, "Requeued"), "status")),
	    "False");
	wl_decode(&d, wl);
	cr_assert_eq(rec_wl_status_requeued(&d, REC_REQUEUED_REACTIVATED,
			 "The workload was reactivated", NOW3, &p, &err),
	    CU_OK);
	api_workload_dispose(&d);
	apply_in_place(&wl, p);
	cr_assert_str_eq(json_string_value(json_object_get(
			     cond_of(wl, "Requeued"), "reason")),
	    "Reactivated");
	json_decref(wl);
	fixture_dispose(&f);
}
