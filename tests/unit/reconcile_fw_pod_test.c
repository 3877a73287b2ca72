/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/reconcile_fw_pod_test.c - the pod shape of the framework
 * descriptors (reconcile/fw_pod.c, docs/frameworks.md section 2),
 * table-driven:
 *
 *   descriptor: "pod" is core v1 Pod, found by name and by kind
 *   pod set:    one, `main`, count 1, requests from the containers; the
 *               admission gate, node name and the pod's identity are not
 *               in its template; other gates are
 *   state:      suspended = gated; finished = phase Succeeded / Failed
 *               (with status.message, or Kueue-like defaults); active =
 *               past the gate and not terminal; ready = Ready condition
 *   start:      the gate removed (other gates kept), the flavor's node
 *               labels and tolerations merged into the pod itself, under
 *               the pod's resourceVersion; a pod already ungated: nothing
 *   stop:       never a patch; the reconciler deletes an evicted running
 *               pod, leaves a gated, terminal or deleting one alone
 *   finalizer:  Kueue's pod finalizer: a pod being deleted is only
 *               finalized (its Workload finished as orphaned first, then
 *               the finalizer dropped); otherwise dropped once the
 *               Workload is Finished or the pod ended without one
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

struct podjob {
	json_t *doc;
	struct api_meta meta;
	struct rec_job view;
};

static void pod_load(struct podjob *d, const char *text)
{
	cu_error err;

	d->doc = parse(text);
	cr_assert_eq(api_meta_decode(
			 &d->meta, json_object_get(d->doc, "metadata"), &err),
	    CU_OK, "%s", err.msg);
	memset(&d->view, 0, sizeof(d->view));
	d->view.kind = REC_JOB_DOC;
	d->view.fw = rec_fw_by_name("pod");
	d->view.doc = d->doc;
	d->view.meta = &d->meta;
	cr_assert_not_null(d->view.fw);
}

static void pod_dispose(struct podjob *d)
{
	api_meta_dispose(&d->meta);
	json_decref(d->doc);
}

#define GATE "{\"name\":\"kueue.x-k8s.io/admission\"}"
#define OTHER_GATE "{\"name\":\"example.com/other\"}"

/* A pod with scheduling gates `gates` (a JSON array body), extra spec
 * members `extra` (ending with a comma) and status `status`. */
#define POD(gates, extra, status)                                              \
	"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"      \
	"\"p\",\"namespace\":\"ns\",\"uid\":\"u-1\",\"resourceVersion\":"      \
	"\"7\",\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq\"}},"            \
	"\"spec\":{" extra "\"schedulingGates\":[" gates "],"                  \
	"\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"resources\":{"      \
	"\"requests\":{\"cpu\":\"1500m\"}}}]},\"status\":" status "}"

Test(fw_pod, descriptor)
{
	const struct rec_fw *fw = rec_fw_by_name("pod");

	cr_assert_not_null(fw);
	cr_assert_eq(rec_fw_by_kind("", "Pod"), fw);
	cr_assert_eq(rec_fw_by_kind(NULL, "Pod"), fw);
	cr_assert_null(rec_fw_by_kind("apps", "Pod"));
	cr_assert_str_eq(fw->version, "v1");
	cr_assert_str_eq(fw->plural, "pods");
	cr_assert_eq(fw->shape, REC_FW_SHAPE_POD);
}

Test(fw_pod, podset_without_gate_or_identity)
{
	struct podjob d;
	struct api_podsets ps;
	const json_t *t, *gates;
	cu_error err;

	pod_load(&d, POD(GATE "," OTHER_GATE, "\"nodeName\":\"n1\",",
			 "{\"phase\":\"Pending\"}"));
	cr_assert_eq(rec_job_podsets(&d.view, &ps, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(ps.n, 1);
	cr_assert_str_eq(ps.items[0].name, "main");
	cr_assert_eq(ps.items[0].count, 1);
	cr_assert_eq(ps.items[0].n_requests, 1);
	cr_assert_eq(ps.items[0].requests[0].milli, 1500);
	t = ps.items[0].template;
	cr_assert_not_null(t);
	gates = json_object_get(json_object_get(t, "spec"), "schedulingGates");
	cr_assert_eq(json_array_size(gates), 1);
	cr_assert_str_eq(api_json_str(json_array_get(gates, 0), "name"),
	    "example.com/other");
	cr_assert_null(json_object_get(json_object_get(t, "spec"), "nodeName"));
	cr_assert_null(json_object_get(json_object_get(t, "metadata"), "uid"));
	cr_assert_str_eq(
	    api_json_str(
		json_object_get(json_object_get(t, "metadata"), "labels"),
		"kueue.x-k8s.io/queue-name"),
	    "lq");
	/* The document itself is untouched. */
	cr_assert_eq(json_array_size(json_object_get(
			 json_object_get(d.doc, "spec"), "schedulingGates")),
	    2);
	api_podsets_dispose(&ps);
	pod_dispose(&d);
}

struct st_row {
	const char *doc;
	bool suspended, active, finished, success, ready;
	const char *message;
};

static const struct st_row st_rows[] = {
    {POD(GATE, "", "{\"phase\":\"Pending\"}"), true, false, false, false, false,
	NULL},
    {POD(OTHER_GATE, "", "{\"phase\":\"Pending\"}"), false, true, false, false,
	false, NULL},
    {POD("", "",
	 "{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Ready\","
	 "\"status\":\"True\"}]}"),
	false, true, false, false, true, NULL},
    {POD("", "", "{\"phase\":\"Succeeded\"}"), false, false, true, true, false,
	"Pod succeeded"},
    {POD("", "", "{\"phase\":\"Failed\",\"message\":\"OOMKilled\"}"), false,
	false, true, false, false, "OOMKilled"},
    {POD("", "", "{\"phase\":\"Failed\"}"), false, false, true, false, false,
	"Pod failed"},
};

static void state_row(size_t i, const struct st_row *r)
{
	struct podjob d;
	bool ok = !r->success;
	const char *msg = NULL;

	pod_load(&d, r->doc);
	cr_assert_eq(rec_job_is_suspended(&d.view), r->suspended, "row %zu", i);
	cr_assert_eq(rec_job_is_active(&d.view), r->active, "row %zu", i);
	cr_assert_eq(
	    rec_job_finished(&d.view, &ok, &msg), r->finished, "row %zu", i);
	cr_assert_eq(
	    rec_job_pods_ready(&d.view, NULL, NULL), r->ready, "row %zu", i);
	if (r->finished) {
		cr_assert_eq(ok, r->success, "row %zu", i);
		cr_assert_str_eq(msg, r->message, "row %zu", i);
	}
	pod_dispose(&d);
}

Test(fw_pod, state)
{
	size_t i;

	for (i = 0; i < sizeof(st_rows) / sizeof(st_rows[0]); i++)
		state_row(i, &st_rows[i]);
}

#define FLAVOR                                                                 \
	"{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"                 \
	"\"ResourceFlavor\",\"metadata\":{\"name\":\"spot\"},\"spec\":{"       \
	"\"nodeLabels\":{\"pool\":\"spot\"},\"tolerations\":[{\"key\":"        \
	"\"spot\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}]}}"

#define ADMISSION                                                              \
	"{\"clusterQueue\":\"cq\",\"podSetAssignments\":[{\"name\":\"main\","  \
	"\"flavors\":{\"cpu\":\"spot\"},\"resourceUsage\":{\"cpu\":"           \
	"\"1500m\"},\"count\":1}]}"

/* The Workload rec_wl_build makes for d, admitted with ADMISSION. */
static void admitted_workload(const struct podjob *d, struct api_workload *wl,
    const char *extra_conditions)
{
	json_t *w = NULL, *md;
	char buf[2048];
	cu_error err;

	cr_assert_eq(
	    rec_wl_build(&d->view, NULL, &w, &err), CU_OK, "%s", err.msg);
	md = json_object_get(w, "metadata");
	json_object_set_new(md, "uid", json_string("wl-uid"));
	json_object_set_new(md, "resourceVersion", json_string("9"));
	snprintf(buf, sizeof(buf),
	    "{\"admission\":" ADMISSION ",\"conditions\":[{\"type\":"
	    "\"QuotaReserved\",\"status\":\"True\",\"reason\":\"A\","
	    "\"message\":\"m\",\"lastTransitionTime\":"
	    "\"2026-01-01T00:00:00Z\"},{\"type\":"
	    "\"Admitted\",\"status\":\"True\",\"reason\":\"A\","
	    "\"message\":\"m\",\"lastTransitionTime\":"
	    "\"2026-01-01T00:00:00Z\"}%s]}",
	    extra_conditions);
	json_object_set_new(w, "status", parse(buf));
	cr_assert_eq(api_workload_decode(wl, w, &err), CU_OK, "%s", err.msg);
	json_decref(w);
}

Test(fw_pod, workload_name_and_owner)
{
	struct podjob d;
	json_t *w = NULL, *ref;
	cu_error err;

	pod_load(&d, POD(GATE, "", "{\"phase\":\"Pending\"}"));
	cr_assert_eq(
	    rec_wl_build(&d.view, NULL, &w, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(
	    strncmp(api_json_str(json_object_get(w, "metadata"), "name"),
		"pod-p-", 6),
	    0);
	ref = json_array_get(
	    json_object_get(json_object_get(w, "metadata"), "ownerReferences"),
	    0);
	cr_assert_str_eq(api_json_str(ref, "apiVersion"), "v1");
	cr_assert_str_eq(api_json_str(ref, "kind"), "Pod");
	json_decref(w);
	pod_dispose(&d);
}

Test(fw_pod, start_ungates_and_merges)
{
	struct podjob d, run;
	struct api_workload wl;
	struct api_resource_flavor fl;
	json_t *fj = parse(FLAVOR), *p = NULL, *after = NULL, *spec, *gates;
	enum rec_stop_step step;
	cu_error err;

	cr_assert_eq(api_resource_flavor_decode(&fl, fj, &err), CU_OK);
	pod_load(&d, POD(GATE "," OTHER_GATE, "", "{\"phase\":\"Pending\"}"));
	admitted_workload(&d, &wl, "");
	cr_assert_eq(rec_job_start_patch(&d.view, &wl, &fl, 1, &p, &err), CU_OK,
	    "%s", err.msg);
	cr_assert_not_null(p);
	cr_assert_str_eq(
	    api_json_str(json_object_get(p, "metadata"), "resourceVersion"),
	    "7");
	cr_assert_eq(api_merge_patch_apply(&after, d.doc, p, &err), CU_OK);
	json_decref(p);
	spec = json_object_get(after, "spec");
	cr_assert_str_eq(
	    api_json_str(json_object_get(spec, "nodeSelector"), "pool"),
	    "spot");
	cr_assert_eq(json_array_size(json_object_get(spec, "tolerations")), 1);
	gates = json_object_get(spec, "schedulingGates");
	cr_assert_eq(json_array_size(gates), 1);
	cr_assert_str_eq(api_json_str(json_array_get(gates, 0), "name"),
	    "example.com/other");

	/* Started: nothing more to start, and stop is never a patch. */
	run.doc = after;
	cr_assert_eq(api_meta_decode(
			 &run.meta, json_object_get(after, "metadata"), &err),
	    CU_OK);
	run.view = d.view;
	run.view.doc = after;
	run.view.meta = &run.meta;
	cr_assert(!rec_job_is_suspended(&run.view));
	cr_assert_eq(
	    rec_job_start_patch(&run.view, &wl, &fl, 1, &p, &err), CU_OK);
	cr_assert_null(p);
	cr_assert_eq(
	    rec_job_stop_patch(&run.view, &wl, &step, &p, &err), CU_OK);
	cr_assert_null(p);
	cr_assert_eq(step, REC_STOP_DONE);
	pod_dispose(&run);
	api_workload_dispose(&wl);
	api_resource_flavor_dispose(&fl);
	json_decref(fj);
	pod_dispose(&d);
}

/* ---- the reconciler stops a pod by deleting it ------------------------ */

struct evict_row {
	const char *pod;
	bool deletes;
};

#define EVICTED                                                                \
	",{\"type\":\"Evicted\",\"status\":\"True\",\"reason\":\"Preempted\"," \
	"\"message\":\"Preempted to accommodate a workload\","                 \
	"\"lastTransitionTime\":\"2026-01-01T00:00:01Z\"}"

static const struct evict_row ev_rows[] = {
    {POD("", "", "{\"phase\":\"Running\"}"), true},
    {POD(GATE, "", "{\"phase\":\"Pending\"}"), false},
    {"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\","
     "\"namespace\":\"ns\",\"uid\":\"u-1\",\"resourceVersion\":\"7\","
     "\"deletionTimestamp\":\"2026-01-01T00:00:02Z\"},\"spec\":{"
     "\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"resources\":{"
     "\"requests\":{\"cpu\":\"1500m\"}}}]},\"status\":{\"phase\":"
     "\"Running\"}}",
	false},
};

static void evict_row(size_t i, const struct evict_row *r)
{
	struct podjob d;
	struct api_workload wl;
	struct rec_job_view v;
	struct rec_job_in in;
	struct rec_plan plan;
	size_t k, deletes = 0, patches = 0;
	cu_error err;

	pod_load(&d, r->pod);
	admitted_workload(&d, &wl, EVICTED);
	fx_pod_reconcile_in(&v, &in, &d.view, &wl);
	rec_plan_init(&plan);
	cr_assert_eq(rec_job_reconcile(&v, &in, 0, &plan, &err), CU_OK,
	    "row %zu: %s", i, err.msg);
	for (k = 0; k < plan.n; k++) {
		const struct rec_item *it = &plan.items[k];

		if (it->kind != REC_ITEM_WRITE || it->target != REC_TARGET_JOB)
			continue;
		if (it->op == REC_WRITE_DELETE) {
			deletes++;
			cr_assert_str_eq(it->name, "p");
			cr_assert_str_eq(it->done_reason, "Stopped");
		} else {
			patches++;
		}
	}
	cr_assert_eq(deletes, r->deletes ? 1 : 0, "row %zu", i);
	cr_assert_eq(patches, 0, "row %zu: a pod is never patched to stop", i);
	rec_plan_free(&plan);
	api_workload_dispose(&wl);
	pod_dispose(&d);
}

Test(fw_pod, evicted_running_pod_is_deleted)
{
	size_t i;

	for (i = 0; i < sizeof(ev_rows) / sizeof(ev_rows[0]); i++)
		evict_row(i, &ev_rows[i]);
}

/* ---- the pod finalizer (rec_pod_finalize) ----------------------------- */

#define FINISHED_COND                                                          \
	",{\"type\":\"Finished\",\"status\":\"True\",\"reason\":"              \
	"\"Succeeded\",\"message\":\"m\",\"lastTransitionTime\":"              \
	"\"2026-01-01T00:00:02Z\"}"

struct fin_row {
	const char *status; /* the pod's status */
	bool deleting, fin; /* being deleted; has the pod finalizer */
	int wl;		    /* 0 none, 1 admitted, 2 finished, 3 deleted */
	bool before;	    /* the step before rec_job_reconcile */
	const char *want;   /* "<W|J><S|P>" per write */
	bool done;
};

static const struct fin_row fin_rows[] = {
    /* before: only a Pod being deleted is decided here */
    {"{\"phase\":\"Running\"}", false, true, 1, true, "", false},
    {"{\"phase\":\"Running\"}", true, true, 1, true, "WS", true},
    {"{\"phase\":\"Failed\"}", true, true, 2, true, "WP,JP", true},
    {"{\"phase\":\"Running\"}", true, true, 3, true, "WP,JP", true},
    {"{\"phase\":\"Running\"}", true, true, 0, true, "JP", true},
    {"{\"phase\":\"Running\"}", true, false, 0, true, "", true},
    /* after: the finalizer goes once the result is accounted */
    {"{\"phase\":\"Succeeded\"}", false, true, 1, false, "", false},
    {"{\"phase\":\"Succeeded\"}", false, true, 2, false, "JP", false},
    {"{\"phase\":\"Running\"}", false, true, 2, false, "JP", false},
    {"{\"phase\":\"Failed\"}", false, true, 0, false, "JP", false},
    {"{\"phase\":\"Running\"}", false, true, 0, false, "", false},
    {"{\"phase\":\"Succeeded\"}", false, false, 2, false, "", false},
};

static const json_t *at_md(const json_t *o, const char *key)
{
	return json_object_get(json_object_get(o, "metadata"), key);
}

static void fin_row(size_t i, const struct fin_row *r)
{
	struct podjob d;
	struct api_workload wl;
	struct rec_plan plan;
	char text[2048], got[64];
	size_t k, used = 0;
	bool done = !r->done;
	cu_error err;
	json_t *md;

	snprintf(text, sizeof(text), POD("", "", "%s"), r->status);
	pod_load(&d, text);
	md = json_object_get(d.doc, "metadata");
	if (r->fin)
		json_object_set_new(md, "finalizers",
		    json_pack("[s, s]", "x.io/f", REC_POD_FINALIZER));
	if (r->deleting)
		json_object_set_new(md, "deletionTimestamp",
		    json_string("2026-01-01T00:00:03Z"));
	if (r->wl > 0) {
		admitted_workload(&d, &wl, r->wl == 2 ? FINISHED_COND : "");
		wl.meta.has_deletion = r->wl == 3;
	}
	rec_plan_init(&plan);
	cr_assert_eq(rec_pod_finalize(d.doc, "ns", r->wl > 0 ? &wl : NULL, 0,
			 r->before, &plan, &done, &err),
	    CU_OK, "row %zu: %s", i, err.msg);
	got[0] = '\0';
	for (k = 0; k < plan.n; k++)
		used += (size_t)snprintf(got + used, sizeof(got) - used,
		    "%s%c%c", used ? "," : "",
		    plan.items[k].target == REC_TARGET_WORKLOAD ? 'W' : 'J',
		    plan.items[k].op == REC_WRITE_STATUS ? 'S' : 'P');
	cr_assert_str_eq(got, r->want, "row %zu: %s", i, got);
	cr_assert_eq(done, r->done, "row %zu", i);
	for (k = 0; k < plan.n; k++) {
		const json_t *b = plan.items[k].body;

		if (plan.items[k].target != REC_TARGET_JOB)
			continue;
		/* the other finalizer kept, under the pod's version */
		cr_assert_str_eq(json_string_value(
				     json_array_get(at_md(b, "finalizers"), 0)),
		    "x.io/f", "row %zu", i);
		cr_assert_eq(json_array_size(at_md(b, "finalizers")), 1);
		cr_assert_str_eq(api_json_str(json_object_get(b, "metadata"),
				     "resourceVersion"),
		    "7", "row %zu", i);
	}
	if (r->wl == 1 && r->deleting && plan.n > 0) {
		char *t = json_dumps(plan.items[0].body, 0);

		cr_assert(t != NULL && strstr(t, "\"OwnerNotFound\"") != NULL,
		    "row %zu: %s", i, t);
		cu_free(t);
	}
	rec_plan_free(&plan);
	if (r->wl > 0)
		api_workload_dispose(&wl);
	pod_dispose(&d);
}

Test(fw_pod, finalizer)
{
	size_t i;

	for (i = 0; i < sizeof(fin_rows) / sizeof(fin_rows[0]); i++)
		fin_row(i, &fin_rows[i]);
}
