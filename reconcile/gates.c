/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconcile/gates.c - Kueue's admission gate (AdmissionGatedBy): a job's
 * kueue.x-k8s.io/admission-gated-by annotation is copied onto its
 * Workload when the Workload is built and followed afterwards
 * (UpdateAdmissionGatedBy: "Updated workload AdmissionGatedBy to %q" on
 * the job); a Workload whose annotation is non-empty is kept out of the
 * engine while it holds no quota, with QuotaReserved=False reason
 * AdmissionGated ("Admission is gated by: <gates>") and the event
 * AdmissionGated, and once the annotation is gone it is told so
 * (AdmissionGateCleared, "AdmissionGatedBy cleared, waiting for quota
 * reservation") and queued. Pure: plans only. Contract in
 * reconcile/reconcile.h.
 */
#include <stdio.h>
#include <string.h>

#include "reconcile/rec_int.h"

#define GATED_MSG "Admission is gated by: "
#define CLEARED_MSG "AdmissionGatedBy cleared, waiting for quota reservation"

const char *rec_gate_value(const struct api_meta *m)
{
	const char *v = api_strmap_get(&m->annotations, REC_ADMISSION_GATED_BY);

	return v != NULL && *v != '\0' ? v : NULL;
}

int rec_gate_copy(const struct api_meta *job, json_t *wl, cu_error *err)
{
	const char *v = rec_gate_value(job);
	json_t *ann;

	if (v == NULL)
		return CU_OK;
	/* wl is the document being built: written, not read */
	ann = api_json_obj_child(
	    api_json_obj_child(wl, "metadata"), "annotations");
	if (ann == NULL ||
	    json_object_set_new(ann, REC_ADMISSION_GATED_BY, json_string(v)))
		return rec__nomem(err, "admission gate");
	return CU_OK;
}

int rec_gate_follow_patch(const struct api_meta *job,
    const struct api_workload *wl, json_t **patch, char **event, cu_error *err)
{
	const char *jv = rec_gate_value(job), *wv = rec_gate_value(&wl->meta);
	const char *raw =
	    api_strmap_get(&job->annotations, REC_ADMISSION_GATED_BY);

	*patch = NULL;
	*event = NULL;
	if (strcmp(jv ? jv : "", wv ? wv : "") == 0 ||
	    wl->meta.resource_version == NULL)
		return CU_OK;
	*patch = json_pack("{s:{s:s, s:{s:o}}}", "metadata", "resourceVersion",
	    wl->meta.resource_version, "annotations", REC_ADMISSION_GATED_BY,
	    jv != NULL ? json_string(jv) : json_null());
	*event = rec_gate_quote_event(raw != NULL ? raw : "");
	if (*patch == NULL || *event == NULL) {
		json_decref(*patch);
		cu_free(*event);
		*patch = NULL;
		*event = NULL;
		return rec__nomem(err, "admission gate");
	}
	return CU_OK;
}

char *rec_gate_quote_event(const char *v)
{
	size_t n = strlen(v), i, o;
	char *s = cu_malloc(n * 4 + 64);

	if (s == NULL)
		return NULL;
	o = (size_t)snprintf(
	    s, n * 4 + 64, "Updated workload AdmissionGatedBy to \"");
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)v[i];

		if (c == '"' || c == '\\') {
			s[o++] = '\\';
			s[o++] = (char)c;
		} else if (c < 0x20 || c == 0x7f) {
			o += (size_t)snprintf(
			    s + o, n * 4 + 64 - o, "\\x%02x", c);
		} else {
			s[o++] = (char)c;
		}
	}
	s[o++] = '"';
	s[o] = '\0';
	return s;
}

/* A status write of the Workload reconciler with an event about the
 * Workload once it lands (reason [static], text [owned: taken]). */
static int status_write(struct rec_plan *p, const struct api_workload *wl,
    json_t *body, const char *reason, char *text, cu_error *err)
{
	struct rec_item *it;

	if (rec_plan_push(p, &it, err) != CU_OK) {
		json_decref(body);
		cu_free(text);
		return err->code;
	}
	it->kind = REC_ITEM_WRITE;
	it->target = REC_TARGET_WORKLOAD;
	it->op = REC_WRITE_STATUS;
	it->body = body;
	it->expect = REC_EXPECT_RV;
	it->done_reason = reason;
	it->text = text;
	if ((it->ns = cu_strdup(wl->meta.namespace_)) == NULL ||
	    (it->name = cu_strdup(wl->meta.name)) == NULL)
		return rec__nomem(err, "admission gate");
	return CU_OK;
}

/* Is QuotaReserved False with reason AdmissionGated? *msg its message. */
static bool gated_condition(const struct api_workload *wl, const char **msg)
{
	const struct api_condition *c = api_conditions_find(
	    &wl->status.conditions, REC_COND_QUOTA_RESERVED);

	*msg = NULL;
	if (c == NULL || c->status != API_COND_FALSE || c->reason == NULL ||
	    strcmp(c->reason, REC_REASON_ADMISSION_GATED) != 0)
		return false;
	*msg = c->message;
	return true;
}

int rec_gate_workload(const struct rec_wl_view *view,
    const struct api_workload *wl, struct rec_plan *out, bool *done,
    cu_error *err)
{
	const char *v = rec_gate_value(&wl->meta), *msg;
	bool was = gated_condition(wl, &msg);
	json_t *patch = NULL;
	char *m, *ev;
	struct rec_item *it;

	*done = false;
	if (view->no_admission_gated_by || rec_workload_holds_quota(wl))
		return CU_OK;
	if (v == NULL) {
		if (!was)
			return CU_OK;
		*done = true;
		if (view->read_only)
			return CU_OK;
		if (rec_wl_status_pending(wl,
			view->pending_reason != NULL
			    ? view->pending_reason
			    : REC_REASON_PENDING_EVALUATION,
			CLEARED_MSG, view->now_ns, &patch, err) != CU_OK)
			return err->code;
		if (patch == NULL)
			return CU_OK;
		ev = cu_strdup("Admission gate cleared, workload is now "
			       "admissible");
		if (ev == NULL) {
			json_decref(patch);
			return rec__nomem(err, "admission gate");
		}
		return status_write(
		    out, wl, patch, "AdmissionGateCleared", ev, err);
	}
	*done = true;
	if (view->queued) {
		if (rec_plan_push(out, &it, err) != CU_OK)
			return err->code;
		it->kind = REC_ITEM_ENGINE;
		it->engine = REC_ENGINE_FORGET;
		if ((it->uid = cu_strdup(wl->meta.uid)) == NULL)
			return rec__nomem(err, "admission gate");
	}
	if (view->read_only)
		return CU_OK;
	m = cu_asprintf(GATED_MSG "%s", v);
	if (m == NULL)
		return rec__nomem(err, "admission gate");
	if (was && msg != NULL && strcmp(msg, m) == 0) {
		cu_free(m);
		return CU_OK;
	}
	if (rec_wl_status_pending(wl, REC_REASON_ADMISSION_GATED, m,
		view->now_ns, &patch, err) != CU_OK) {
		cu_free(m);
		return err->code;
	}
	cu_free(m);
	if (patch == NULL)
		return CU_OK;
	if (was)
		return status_write(out, wl, patch, NULL, NULL, err);
	ev = cu_asprintf("Workload admission is gated by: %s", v);
	if (ev == NULL) {
		json_decref(patch);
		return rec__nomem(err, "admission gate");
	}
	return status_write(out, wl, patch, "AdmissionGated", ev, err);
}
