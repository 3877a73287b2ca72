/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/reconcile_gates_test.c - Kueue's admission gate in the
 * reconcilers (reconcile/gates.c), table-driven:
 *   rec_gate_workload: a gated pending Workload leaves the engine and is
 *     told AdmissionGated (event once), its message follows the gates, a
 *     cleared gate is told AdmissionGateCleared before it is queued, a
 *     Workload holding quota or the gate switched off is left alone, a
 *     follower only forgets; and through rec_workload_reconcile, a gated
 *     Workload is never ADDed while an ungated one is.
 *   rec_gate_follow_patch / rec_gate_copy: the Workload follows the
 *     job's annotation (set, changed, removed) with Kueue's event text.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "reconcile/reconcile.h"

#define T0 "2026-01-01T00:00:00Z"
#define GATE "kueue.x-k8s.io/admission-gated-by"

enum qr { QR_NONE, QR_GATED_A, QR_GATED_AB, QR_PENDING, QR_HOLDS };

static void workload(struct api_workload *wl, const char *gate, enum qr qr)
{
	json_t *d = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:{}}, "
			      "s:{s:s, s:[{s:s, s:i, s:{s:{s:[]}}}]}, s:{}}",
	    "apiVersion", "kueue.x-k8s.io/v1beta2", "kind", "Workload",
	    "metadata", "name", "wl", "namespace", "team", "uid", "u1",
	    "resourceVersion", "7", "annotations", "spec", "queueName", "main",
	    "podSets", "name", "main", "count", 1, "template", "spec",
	    "containers", "status");
	json_t *st, *md;
	cu_error err;

	cr_assert_not_null(d);
	st = json_object_get(d, "status");
	md = json_object_get(d, "metadata");
	if (gate != NULL)
		json_object_set_new(json_object_get(md, "annotations"), GATE,
		    json_string(gate));
	if (qr != QR_NONE && qr != QR_HOLDS)
		json_object_set_new(st, "conditions",
		    json_pack("[{s:s, s:s, s:s, s:s, s:s}]", "type",
			"QuotaReserved", "status", "False", "reason",
			qr == QR_PENDING ? "Pending" : "AdmissionGated",
			"message",
			qr == QR_PENDING   ? "waiting"
			: qr == QR_GATED_A ? "Admission is gated by: a.io/x"
					   : "Admission is gated by: "
					     "a.io/x,b.io/y",
			"lastTransitionTime", T0));
	if (qr == QR_HOLDS) {
		json_object_set_new(st, "conditions",
		    json_pack("[{s:s, s:s, s:s, s:s, s:s}]", "type",
			"QuotaReserved", "status", "True", "reason",
			"QuotaReserved", "message", "ok", "lastTransitionTime",
			T0));
		json_object_set_new(st, "admission",
		    json_pack("{s:s, s:[{s:s, s:{s:s}, s:{s:s}, s:i}]}",
			"clusterQueue", "cq", "podSetAssignments", "name",
			"main", "flavors", "cpu", "f", "resourceUsage", "cpu",
			"1", "count", 1));
	}
	cr_assert_eq(api_workload_decode(wl, d, &err), CU_OK, "%s", err.msg);
	json_decref(d);
}

struct row {
	const char *name;
	const char *gate; /* the Workload's annotation */
	enum qr qr;
	bool queued, read_only, off;
	/* want */
	bool done;
	bool forget;
	const char *reason;  /* status write's QuotaReserved reason; NULL:
				no write */
	const char *message; /* its message */
	const char *event;   /* done_reason; NULL: none */
	const char *text;
};

static const struct row ROWS[] = {
    {"gated-new-queued", "a.io/x", QR_PENDING, true, false, false, true, true,
	"AdmissionGated", "Admission is gated by: a.io/x", "AdmissionGated",
	"Workload admission is gated by: a.io/x"},
    {"gated-new-not-queued", "a.io/x", QR_NONE, false, false, false, true,
	false, "AdmissionGated", "Admission is gated by: a.io/x",
	"AdmissionGated", "Workload admission is gated by: a.io/x"},
    {"gated-already-told", "a.io/x", QR_GATED_A, false, false, false, true,
	false, NULL, NULL, NULL, NULL},
    {"gated-message-follows", "a.io/x", QR_GATED_AB, false, false, false, true,
	false, "AdmissionGated", "Admission is gated by: a.io/x", NULL, NULL},
    {"gated-follower-forgets-only", "a.io/x", QR_PENDING, true, true, false,
	true, true, NULL, NULL, NULL, NULL},
    {"empty-value-not-gated", "", QR_PENDING, true, false, false, false, false,
	NULL, NULL, NULL, NULL},
    {"cleared", NULL, QR_GATED_A, false, false, false, true, false,
	"PendingEvaluation",
	"AdmissionGatedBy cleared, waiting for quota reservation",
	"AdmissionGateCleared",
	"Admission gate cleared, workload is now admissible"},
    {"cleared-follower-waits", NULL, QR_GATED_A, false, true, false, true,
	false, NULL, NULL, NULL, NULL},
    {"never-gated", NULL, QR_PENDING, true, false, false, false, false, NULL,
	NULL, NULL, NULL},
    {"holds-quota-left-alone", "a.io/x", QR_HOLDS, true, false, false, false,
	false, NULL, NULL, NULL, NULL},
    {"gate-off", "a.io/x", QR_PENDING, true, false, true, false, false, NULL,
	NULL, NULL, NULL},
};

static bool always(const char *ns, const char *q, void *p)
{
	(void)ns;
	(void)q;
	(void)p;
	return true;
}

static const json_t *cond_of(const json_t *body)
{
	const json_t *c =
	    json_object_get(json_object_get(body, "status"), "conditions");
	size_t i;
	json_t *v;

	json_array_foreach(
	    c, i, v) if (strcmp(json_string_value(json_object_get(v, "type")),
			     "QuotaReserved") == 0) return v;
	return NULL;
}

Test(reconcile_gates, workload_table)
{
	size_t i, k;

	for (i = 0; i < sizeof(ROWS) / sizeof(ROWS[0]); i++) {
		const struct row *r = &ROWS[i];
		struct api_workload wl;
		struct rec_wl_view v;
		struct rec_plan p;
		bool done = false, forget = false;
		const struct rec_item *w = NULL;
		cu_error err = {0};

		workload(&wl, r->gate, r->qr);
		memset(&v, 0, sizeof(v));
		v.queued = r->queued;
		v.read_only = r->read_only;
		v.no_admission_gated_by = r->off;
		v.eligible = always;
		v.now_ns = 1;
		rec_plan_init(&p);
		cr_assert_eq(rec_gate_workload(&v, &wl, &p, &done, &err), CU_OK,
		    "%s: %s", r->name, err.msg);
		cr_expect_eq(done, r->done, "%s: done", r->name);
		for (k = 0; k < p.n; k++) {
			if (p.items[k].kind == REC_ITEM_ENGINE &&
			    p.items[k].engine == REC_ENGINE_FORGET) {
				forget = true;
				cr_expect_str_eq(p.items[k].uid, "u1");
			}
			if (p.items[k].kind == REC_ITEM_WRITE)
				w = &p.items[k];
		}
		cr_expect_eq(forget, r->forget, "%s: forget", r->name);
		if (r->reason == NULL) {
			cr_expect_null(w, "%s: no write", r->name);
		} else {
			const json_t *c;

			cr_assert_not_null(w, "%s: a write", r->name);
			cr_expect_eq(w->op, REC_WRITE_STATUS);
			c = cond_of(w->body);
			cr_assert_not_null(c, "%s: QuotaReserved", r->name);
			cr_expect_str_eq(
			    json_string_value(json_object_get(c, "status")),
			    "False");
			cr_expect_str_eq(
			    json_string_value(json_object_get(c, "reason")),
			    r->reason, "%s", r->name);
			cr_expect_str_eq(
			    json_string_value(json_object_get(c, "message")),
			    r->message, "%s", r->name);
			if (r->event == NULL) {
				cr_expect_null(w->done_reason, "%s", r->name);
			} else {
				cr_expect_str_eq(
				    w->done_reason, r->event, "%s", r->name);
				cr_expect_str_eq(
				    w->text, r->text, "%s", r->name);
			}
		}
		rec_plan_free(&p);
		api_workload_dispose(&wl);
	}
}

/* Through the Workload reconciler: never ADDed while gated. */
Test(reconcile_gates, reconciler_never_adds_gated)
{
	const char *gates[] = {"a.io/x", NULL};
	size_t i, k;

	for (i = 0; i < 2; i++) {
		struct api_workload wl;
		struct rec_wl_view v;
		struct rec_plan p;
		bool added = false;
		cu_error err = {0};

		workload(&wl, gates[i], QR_NONE);
		memset(&v, 0, sizeof(v));
		v.eligible = always;
		rec_plan_init(&p);
		cr_assert_eq(rec_workload_reconcile(&v, &wl, &p, &err), CU_OK,
		    "%s", err.msg);
		for (k = 0; k < p.n; k++)
			added |= p.items[k].kind == REC_ITEM_ENGINE &&
				 p.items[k].engine == REC_ENGINE_ADD;
		cr_expect_eq(added, gates[i] == NULL, "gate %s", gates[i]);
		rec_plan_free(&p);
		api_workload_dispose(&wl);
	}
}

Test(reconcile_gates, follow_patch)
{
	static const struct {
		const char *job, *wl,
		    *want; /* want: "" = removed, NULL: none */
		const char *event;
	} rows[] = {
	    {"a.io/x", "a.io/x", NULL, NULL},
	    {NULL, NULL, NULL, NULL},
	    {"", NULL, NULL, NULL},
	    {"b.io/y", "a.io/x,b.io/y", "b.io/y",
		"Updated workload AdmissionGatedBy to \"b.io/y\""},
	    {NULL, "a.io/x", "", "Updated workload AdmissionGatedBy to \"\""},
	    {"a.io/x", NULL, "a.io/x",
		"Updated workload AdmissionGatedBy to \"a.io/x\""},
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct api_workload wl;
		struct api_meta m;
		json_t *patch = NULL, *a;
		char *ev = NULL;
		cu_error err = {0};

		workload(&wl, rows[i].wl, QR_NONE);
		memset(&m, 0, sizeof(m));
		if (rows[i].job != NULL)
			cr_assert_eq(api_strmap_set(&m.annotations, GATE,
					 rows[i].job, &err),
			    CU_OK);
		cr_assert_eq(
		    rec_gate_follow_patch(&m, &wl, &patch, &ev, &err), CU_OK);
		if (rows[i].want == NULL) {
			cr_expect_null(patch, "row %zu", i);
			cr_expect_null(ev, "row %zu", i);
		} else {
			cr_assert_not_null(patch, "row %zu", i);
			cr_expect_str_eq(json_string_value(json_object_get(
					     json_object_get(patch, "metadata"),
					     "resourceVersion")),
			    "7");
			a = json_object_get(
			    json_object_get(json_object_get(patch, "metadata"),
				"annotations"),
			    GATE);
			if (*rows[i].want == '\0')
				cr_expect(json_is_null(a), "row %zu", i);
			else
				cr_expect_str_eq(json_string_value(a),
				    rows[i].want, "row %zu", i);
			cr_expect_str_eq(ev, rows[i].event, "row %zu", i);
		}
		json_decref(patch);
		cu_free(ev);
		api_strmap_dispose(&m.annotations);
		api_workload_dispose(&wl);
	}
}

Test(reconcile_gates, copy_on_build)
{
	struct api_meta m;
	json_t *w = json_pack("{s:{s:s}}", "metadata", "name", "wl");
	cu_error err = {0};

	memset(&m, 0, sizeof(m));
	cr_assert_eq(rec_gate_copy(&m, w, &err), CU_OK);
	cr_expect_null(
	    json_object_get(json_object_get(w, "metadata"), "annotations"));
	cr_assert_eq(
	    api_strmap_set(&m.annotations, GATE, "a.io/x", &err), CU_OK);
	cr_assert_eq(rec_gate_copy(&m, w, &err), CU_OK);
	cr_expect_str_eq(
	    json_string_value(json_object_get(
		json_object_get(json_object_get(w, "metadata"), "annotations"),
		GATE)),
	    "a.io/x");
	json_decref(w);
	api_strmap_dispose(&m.annotations);
}
