/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/fixtures_docjob.c - framework document fixtures (see
 * fixtures.h): a job of any descriptor read as JSON, its admitted
 * Workload, and merge patches applied, for the reconcile framework
 * tests; JSON text parsed, and decoders checked to refuse it.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "api/patch.h"
#include "tests/unit/fixtures.h"

json_t *fx_parse(const char *text)
{
	json_error_t jerr;
	json_t *j = json_loads(text, 0, &jerr);

	cr_assert_not_null(j, "test JSON: %s at line %d col %d: %s", jerr.text,
	    jerr.line, jerr.column, text);
	return j;
}

void fx_refused(fx_decode_fn dec, const char *doc, const char *msg)
{
	json_t *j = fx_parse(doc);
	cu_error err;

	cu_error_clear(&err);
	cr_assert_neq(dec(j, &err), CU_OK, "%s decoded", doc);
	cr_assert_str_eq(err.msg, msg, "%s", doc);
	json_decref(j);
}

void fx_docjob_load(struct fx_docjob *d, const char *fw, const char *text)
{
	const struct rec_fw *f = rec_fw_by_name(fw);

	cr_assert_not_null(f, "%s", fw);
	memset(d, 0, sizeof(*d));
	d->view.fw = f;
	fx_docjob_adopt(d, d, fx_parse(text));
}

void fx_docjob_adopt(
    struct fx_docjob *d, const struct fx_docjob *like, json_t *doc)
{
	const struct rec_fw *fw = like->view.fw;
	cu_error err;

	d->doc = doc;
	cr_assert_eq(
	    api_meta_decode(&d->meta, json_object_get(doc, "metadata"), &err),
	    CU_OK, "%s", err.msg);
	memset(&d->view, 0, sizeof(d->view));
	d->view.kind = REC_JOB_DOC;
	d->view.fw = fw;
	d->view.doc = doc;
	d->view.meta = &d->meta;
}

void fx_docjob_dispose(struct fx_docjob *d)
{
	api_meta_dispose(&d->meta);
	json_decref(d->doc);
	d->doc = NULL;
}

void fx_docjob_workload(
    const struct fx_docjob *d, const char *adm, struct api_workload *wl)
{
	json_t *w = NULL;
	char buf[4096];
	cu_error err;

	cr_assert_eq(
	    rec_wl_build(&d->view, NULL, &w, &err), CU_OK, "%s", err.msg);
	json_object_set_new(
	    json_object_get(w, "metadata"), "uid", json_string("wl-uid"));
	snprintf(buf, sizeof(buf),
	    "{\"admission\":%s,\"conditions\":[{\"type\":"
	    "\"Admitted\",\"status\":\"True\",\"reason\":\"A\","
	    "\"message\":\"m\",\"lastTransitionTime\":"
	    "\"2026-01-01T00:00:00Z\"}]}",
	    adm);
	json_object_set_new(w, "status", fx_parse(buf));
	cr_assert_eq(api_workload_decode(wl, w, &err), CU_OK, "%s", err.msg);
	json_decref(w);
}

int fx_no_flavors(const struct api_workload *wl,
    struct api_resource_flavor **out, size_t *n, void *payload, cu_error *err)
{
	(void)wl;
	(void)payload;
	(void)err;
	*out = NULL;
	*n = 0;
	return CU_OK;
}

bool fx_no_lq(const char *ns, const char *name, void *payload)
{
	(void)ns;
	(void)name;
	(void)payload;
	return false;
}

void fx_pod_reconcile_in(struct rec_job_view *v, struct rec_job_in *in,
    const struct rec_job *job, const struct api_workload *wl)
{
	memset(v, 0, sizeof(*v));
	v->managed = true;
	v->admitted_flavors = fx_no_flavors;
	v->local_queue_exists = fx_no_lq;
	memset(in, 0, sizeof(*in));
	in->job = job;
	in->kind = REC_JOB_DOC;
	in->ns = "ns";
	in->name = "p";
	in->wl_name = wl->meta.name;
	in->wl = wl;
}

json_t *fx_apply(const json_t *doc, const json_t *patch)
{
	json_t *out = NULL;
	cu_error err;

	cr_assert_eq(api_merge_patch_apply(&out, doc, patch, &err), CU_OK, "%s",
	    err.msg);
	return out;
}

json_t *fx_docjob_start_stop(const char *fw, const char *text,
    const char *flavor, const char *adm, json_t **stopped)
{
	struct fx_docjob d, run;
	struct api_workload wl;
	struct api_resource_flavor fl;
	json_t *fj = fx_parse(flavor), *p = NULL, *after;
	enum rec_stop_step step;
	cu_error err;

	cr_assert_eq(api_resource_flavor_decode(&fl, fj, &err), CU_OK);
	fx_docjob_load(&d, fw, text);
	fx_docjob_workload(&d, adm, &wl);
	cr_assert_eq(rec_job_start_patch(&d.view, &wl, &fl, 1, &p, &err), CU_OK,
	    "%s", err.msg);
	after = fx_apply(d.doc, p);
	json_decref(p);
	fx_docjob_adopt(&run, &d, json_incref(after));
	cr_assert_eq(rec_job_stop_patch(&run.view, &wl, &step, &p, &err), CU_OK,
	    "%s", err.msg);
	cr_assert_eq(step, REC_STOP_SUSPEND);
	*stopped = fx_apply(after, p);
	json_decref(p);
	fx_docjob_dispose(&run);
	api_workload_dispose(&wl);
	api_resource_flavor_dispose(&fl);
	json_decref(fj);
	fx_docjob_dispose(&d);
	return after;
}

void fx_docjob_check_state(
    const char *fw, const char *text, const struct fx_state *want)
{
	struct fx_docjob d;
	bool success = false;
	const char *msg = NULL;

	fx_docjob_load(&d, fw, text);
	cr_assert_eq(
	    rec_job_is_suspended(&d.view), want->suspended, "%s", text);
	cr_assert_eq(rec_job_finished(&d.view, &success, &msg), want->finished,
	    "%s", text);
	if (want->finished) {
		cr_assert_eq(success, want->success, "%s", text);
		cr_assert_str_eq(msg, want->message);
	}
	cr_assert_eq(rec_job_is_active(&d.view), want->active, "%s", text);
	cr_assert_eq(
	    rec_job_pods_ready(&d.view, NULL, NULL), want->ready, "%s", text);
	fx_docjob_dispose(&d);
}

static long long request_of(const struct api_podset_info *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->n_requests; i++)
		if (strcmp(p->requests[i].name, name) == 0)
			return (long long)p->requests[i].milli;
	return 0;
}

int fx_docjob_podsets(const char *fw, const char *text, char *out, size_t n)
{
	struct fx_docjob d;
	struct api_podsets ps;
	size_t used = 0, i;
	cu_error err;
	int rc;

	out[0] = '\0';
	fx_docjob_load(&d, fw, text);
	rc = rec_job_podsets(&d.view, &ps, &err);
	for (i = 0; rc == CU_OK && i < ps.n && used < n; i++)
		used += (size_t)snprintf(out + used, n - used,
		    "%s%s:%d:%lld:%lld", i ? "," : "", ps.items[i].name,
		    (int)ps.items[i].count, request_of(&ps.items[i], "cpu"),
		    request_of(&ps.items[i], "memory") / 1000);
	if (rc == CU_OK)
		api_podsets_dispose(&ps);
	fx_docjob_dispose(&d);
	return rc;
}
