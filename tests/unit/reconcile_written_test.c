/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/reconcile_written_test.c - what a successful admission,
 * eviction or job-reconciler write announces (rec_cycle_written in
 * reconcile/cycle.c): which events, about whom, in which order, with
 * which note, and the decision's log line - from a table.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "reconcile/reconcile.h"

struct want_ev {
	enum rec_written_about about;
	const char *reason;
	size_t note_len; /* (size_t)-1: the whole note */
	bool workload_ctl;
};

struct row {
	const char *name;
	bool admit;
	const char *ev_reason;
	size_t message_len;
	size_t n;
	struct want_ev ev[2];
	bool preempted;
	const char *log, *log_reason;
};

#define NOTE "Preempted to accommodate a workload (UID: u) due to reclaim"
#define ALL ((size_t)-1)

static const struct row rows[] = {
    {"admission, no checks", true, NULL, 0, 2,
	{{REC_WRITTEN_OBJECT, "QuotaReserved", ALL, false},
	    {REC_WRITTEN_OBJECT, "Admitted", ALL, false}},
	false, "Workload admitted", "Admitted"},
    {"admission, checks pending", true, "QuotaReserved", 0, 1,
	{{REC_WRITTEN_OBJECT, "QuotaReserved", ALL, false}}, false,
	"Workload quota reserved", "QuotaReserved"},
    {"no event", false, NULL, 0, 0, {{0}}, false, NULL, NULL},
    {"updated, about the job", false, "UpdatedWorkload", 0, 1,
	{{REC_WRITTEN_OWNER, "UpdatedWorkload", ALL, false}}, false, NULL,
	NULL},
    {"deleted, about the job", false, "DeletedWorkload", 0, 1,
	{{REC_WRITTEN_OWNER, "DeletedWorkload", ALL, false}}, false, NULL,
	NULL},
    {"created (once the create succeeded), about the job", false,
	"CreatedWorkload", 0, 1,
	{{REC_WRITTEN_OWNER, "CreatedWorkload", ALL, false}}, false, NULL,
	NULL},
    {"finished, about the job, logged", false, "FinishedWorkload", 0, 1,
	{{REC_WRITTEN_OWNER, "FinishedWorkload", ALL, false}}, false,
	"Workload finished", "FinishedWorkload"},
    {"preempted: the message alone first", false, "Preempted", 9, 2,
	{{REC_WRITTEN_OBJECT, "EvictedDueToPreempted", 9, false},
	    {REC_WRITTEN_OBJECT, "Preempted", ALL, false}},
	true, NULL, NULL},
    {"preempted, message length unknown", false, "Preempted", 0, 2,
	{{REC_WRITTEN_OBJECT, "EvictedDueToPreempted", ALL, false},
	    {REC_WRITTEN_OBJECT, "Preempted", ALL, false}},
	true, NULL, NULL},
    {"preempted, message longer than the note", false, "Preempted", 999, 2,
	{{REC_WRITTEN_OBJECT, "EvictedDueToPreempted", ALL, false},
	    {REC_WRITTEN_OBJECT, "Preempted", ALL, false}},
	true, NULL, NULL},
    {"checks ready: the Workload controller's Admitted", false, "Admitted", 0,
	1, {{REC_WRITTEN_OBJECT, "Admitted", ALL, true}}, false,
	"Workload admitted", "Admitted"},
    {"evicted, logged", false, "EvictedDueToDeactivated", 0, 1,
	{{REC_WRITTEN_OBJECT, "EvictedDueToDeactivated", ALL, false}}, false,
	"Workload evicted", "EvictedDueToDeactivated"},
    {"other reasons: the event only", false, "Pending", 0, 1,
	{{REC_WRITTEN_OBJECT, "Pending", ALL, false}}, false, NULL, NULL},
};

Test(reconcile_written, events_and_log_lines_from_a_table)
{
	size_t i, k;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct rec_written_in in = {.admit = r->admit,
		    .ev_reason = r->ev_reason,
		    .note = NOTE,
		    .cq = "cq",
		    .message_len = r->message_len};
		struct rec_written_plan p;

		rec_cycle_written(&in, &p);
		cr_assert_eq(p.n, r->n, "%s: %zu events", r->name, p.n);
		for (k = 0; k < r->n; k++) {
			const struct rec_written_event *e = &p.ev[k];
			size_t len =
			    r->ev[k].note_len == ALL
				? strlen(e->note != NULL ? e->note : "")
				: r->ev[k].note_len;

			cr_assert_eq(e->about, r->ev[k].about, "%s", r->name);
			cr_assert_str_eq(
			    e->reason, r->ev[k].reason, "%s [%zu]", r->name, k);
			cr_assert_not_null(e->note, "%s", r->name);
			cr_assert_eq(e->note_len, len, "%s [%zu]: %zu", r->name,
			    k, e->note_len);
			cr_assert_eq(e->workload_ctl, r->ev[k].workload_ctl,
			    "%s", r->name);
		}
		cr_assert_eq(p.preempted, r->preempted, "%s", r->name);
		if (r->log == NULL) {
			cr_assert_null(p.log, "%s: %s", r->name, p.log);
		} else {
			cr_assert_str_eq(p.log, r->log, "%s", r->name);
			cr_assert_str_eq(
			    p.log_reason, r->log_reason, "%s", r->name);
			cr_assert_not_null(p.log_message, "%s", r->name);
		}
		rec_written_plan_dispose(&p);
	}
}

Test(reconcile_written, the_scheduler_admitted_note_names_the_queue)
{
	struct rec_written_in in = {.admit = true,
	    .note = "Quota reserved in ClusterQueue cq",
	    .cq = "cq"};
	struct rec_written_plan p;

	rec_cycle_written(&in, &p);
	cr_assert_eq(p.n, 2);
	cr_assert_str_eq(p.ev[0].note, in.note);
	cr_assert_not_null(p.note);
	cr_assert_eq(p.ev[1].note, p.note);
	cr_assert(strstr(p.note, "cq") != NULL, "%s", p.note);
	cr_assert_eq(p.log_message, p.note);
	rec_written_plan_dispose(&p);
	rec_written_plan_dispose(NULL);
}
