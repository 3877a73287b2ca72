/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/reconcile_cycle_test.c - the scheduling cycle's decisions
 * carried into plans (reconcile/cycle.c): the one producer of admission
 * writes, for the cycle's decision (announce, defer, blocked, withdraw;
 * recorded first) and for a Workload's admission checks (synced,
 * Admitted once all are Ready, held back by a recorded eviction), what
 * each preemption victim
 * becomes (evict, already evicted, postpone, withdraw, nothing), and the
 * table of ledger and engine steps for every answer to an admission or
 * eviction write.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "reconcile/reconcile.h"

#define NOW 1700000000000000000LL

#define WL_JSON(STATUS)                                                        \
	"{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\","    \
	"\"metadata\":{\"name\":\"job-a-1\",\"namespace\":\"ns\","             \
	"\"uid\":\"wl-uid-1\",\"resourceVersion\":\"7\",\"generation\":1,"     \
	"\"labels\":{\"kueue.x-k8s.io/job-uid\":\"job-uid-1\"}},"              \
	"\"spec\":{\"queueName\":\"lq\",\"podSets\":[{\"name\":\"main\","      \
	"\"count\":2,\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\"," \
	"\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}}]}" STATUS "}"

#define ADMITTED_STATUS                                                        \
	",\"status\":{\"admission\":{\"clusterQueue\":\"cq\","                 \
	"\"podSetAssignments\":[{\"name\":\"main\",\"flavors\":{\"cpu\":"      \
	"\"default\"},\"resourceUsage\":{\"cpu\":\"2\"},\"count\":2}]},"       \
	"\"conditions\":[{\"type\":\"QuotaReserved\",\"status\":\"True\","     \
	"\"reason\":\"QuotaReserved\",\"message\":\"m\","                      \
	"\"lastTransitionTime\":\"2023-11-14T22:13:20Z\"},"                    \
	"{\"type\":\"Admitted\",\"status\":\"True\",\"reason\":\"Admitted\","  \
	"\"message\":\"m\",\"lastTransitionTime\":\"2023-11-14T22:13:20Z\"}"

#define EVICTED_COND                                                           \
	",{\"type\":\"Evicted\",\"status\":\"True\",\"reason\":"               \
	"\"Deactivated\",\"message\":\"m\","                                   \
	"\"lastTransitionTime\":\"2023-11-14T22:13:20Z\"}"

static struct adm_flavor_use uses[] = {{"cpu", "default", 2000}};
static struct adm_podset_assignment podsets[] = {
    {"main", 2, uses, 1, NULL},
};

static struct adm_decision admit_decision(void)
{
	struct adm_decision d;

	memset(&d, 0, sizeof(d));
	d.kind = ADM_ADMIT;
	d.uid = "wl-uid-1";
	d.cluster_queue = "cq";
	d.podsets = podsets;
	d.n_podsets = 1;
	return d;
}

static void decode(struct api_workload *wl, const char *text)
{
	json_error_t je;
	json_t *doc = json_loads(text, 0, &je);
	cu_error err;

	cr_assert_not_null(doc, "%s", je.text);
	cr_assert_eq(api_workload_decode(wl, doc, &err), CU_OK, "%s", err.msg);
	json_decref(doc);
}

static const json_t *cond(const json_t *patch, const char *type)
{
	const json_t *cs =
	    json_object_get(json_object_get(patch, "status"), "conditions");
	size_t i;
	json_t *c;

	json_array_foreach(cs, i, c)
	{
		if (strcmp(json_string_value(json_object_get(c, "type")),
			type) == 0)
			return c;
	}
	return NULL;
}

/* ---- admission --------------------------------------------------------- */

struct admit_row {
	const char *name;
	bool blocked, stale, cached;
	enum rec_admit_step step;
	/* RESERVED: recorded already (a deferred or restarted
	 * announcement) */
	enum rec_ledger_state ledger;
};

static const struct admit_row admit_rows[] = {
    {"blockAdmission holds it, whatever the cache", true, true, true,
	REC_ADMIT_BLOCKED, REC_LEDGER_NONE},
    {"our own write not in the cache yet: deferred", false, true, true,
	REC_ADMIT_DEFER, REC_LEDGER_NONE},
    {"not in the cache: withdrawn", false, false, false, REC_ADMIT_WITHDRAW,
	REC_LEDGER_NONE},
    {"cached and current: announced", false, false, true, REC_ADMIT_ANNOUNCE,
	REC_LEDGER_NONE},
    {"recorded already: announced, not recorded again", false, false, true,
	REC_ADMIT_ANNOUNCE, REC_LEDGER_RESERVED},
    {"recorded already, cache behind: deferred, not recorded again", false,
	true, true, REC_ADMIT_DEFER, REC_LEDGER_RESERVED},
};

Test(reconcile_cycle, admit_steps_from_a_table)
{
	struct api_workload wl;
	size_t i;

	decode(&wl, WL_JSON(""));
	for (i = 0; i < sizeof(admit_rows) / sizeof(admit_rows[0]); i++) {
		const struct admit_row *r = &admit_rows[i];
		struct adm_decision d = admit_decision();
		struct rec_admit_in in = {.d = &d};
		struct rec_admit_plan p;

		in.blocked = r->blocked;
		in.w.where = QUE_WL_ADMITTED;
		in.w.stale = r->stale;
		in.w.wl = r->cached ? &wl : NULL;
		in.queued_ns = NOW - 3000000000LL;
		in.ledger = r->ledger;
		cr_assert_eq(rec_admission_write(&in, NOW, &p, NULL), CU_OK);
		cr_assert_eq(p.step, r->step, "%s: step %d", r->name, p.step);
		/* The ledger first: what is (or will be) announced is
		 * recorded, nothing else is. */
		cr_assert_eq(p.record,
		    (r->step == REC_ADMIT_ANNOUNCE ||
			r->step == REC_ADMIT_DEFER) &&
			r->ledger != REC_LEDGER_RESERVED,
		    "%s: record", r->name);
		cr_assert_eq(p.write,
		    r->step == REC_ADMIT_ANNOUNCE
			? REC_ADMIT_WRITE_RESERVE_ADMIT
			: REC_ADMIT_WRITE_NONE,
		    "%s: write %d", r->name, p.write);
		cr_assert_eq(p.patch != NULL, r->step == REC_ADMIT_ANNOUNCE,
		    "%s: patch", r->name);
		if (r->step == REC_ADMIT_BLOCKED) {
			cr_assert_str_eq(p.reason, "WaitingForPodsReady");
			cr_assert_not_null(strstr(p.message, "PodsReady"));
		}
		if (r->step == REC_ADMIT_ANNOUNCE) {
			const json_t *qr = cond(p.patch, "QuotaReserved");

			cr_assert_not_null(qr, "%s: QuotaReserved", r->name);
			cr_assert_str_eq(
			    json_string_value(json_object_get(
				json_object_get(
				    json_object_get(p.patch, "status"),
				    "admission"),
				"clusterQueue")),
			    "cq");
			cr_assert_not_null(p.note);
			cr_assert_not_null(strstr(p.note, "cq"), "%s", p.note);
		}
		rec_admit_plan_dispose(&p);
	}
	api_workload_dispose(&wl);
}

Test(reconcile_cycle, admit_a_patch_that_cannot_be_built_is_withdrawn)
{
	struct api_workload wl;
	struct adm_decision d = admit_decision();
	struct rec_admit_in in = {.d = &d};
	struct rec_admit_plan p;

	decode(&wl, WL_JSON(""));
	d.cluster_queue = NULL; /* no ClusterQueue to admit to */
	in.w.where = QUE_WL_ADMITTED;
	in.w.wl = &wl;
	cr_assert_eq(rec_admission_write(&in, NOW, &p, NULL), CU_OK);
	cr_assert_eq(p.step, REC_ADMIT_WITHDRAW);
	cr_assert_not_null(p.warning);
	cr_assert_null(p.patch);
	rec_admit_plan_dispose(&p);
	api_workload_dispose(&wl);
}

/* ---- admission writes of a Workload's checks --------------------------- */

/* A Workload holding quota in cq (QuotaReserved at T0, 10 s before NOW)
 * with check "prov" in state and Admitted as admitted says. */
static void checks_wl(struct api_workload *wl, const char *state, bool admitted)
{
	char buf[2048];

	snprintf(buf, sizeof(buf),
	    WL_JSON(",\"status\":{\"admission\":{\"clusterQueue\":\"cq\","
		    "\"podSetAssignments\":[{\"name\":\"main\","
		    "\"flavors\":{\"cpu\":\"default\"},\"resourceUsage\":"
		    "{\"cpu\":\"2\"},\"count\":2}]},\"conditions\":["
		    "{\"type\":\"QuotaReserved\",\"status\":\"True\","
		    "\"reason\":\"QuotaReserved\",\"message\":\"m\","
		    "\"lastTransitionTime\":\"2023-11-14T22:13:10Z\"},"
		    "{\"type\":\"Admitted\",\"status\":\"%s\","
		    "\"reason\":\"%s\",\"message\":\"%s\","
		    "\"observedGeneration\":1,"
		    "\"lastTransitionTime\":\"2023-11-14T22:13:10Z\"}],"
		    "\"admissionChecks\":[{\"name\":\"prov\",\"state\":"
		    "\"%s\",\"message\":\"\",\"lastTransitionTime\":"
		    "\"2023-11-14T22:13:10Z\"}]}"),
	    admitted ? "True" : "False",
	    admitted ? "Admitted" : REC_ADMITTED_UNSATISFIED_CHECKS,
	    admitted ? "The workload is admitted" : REC_MSG_UNSATISFIED_CHECKS,
	    state);
	decode(wl, buf);
}

static void checks_cq(struct api_cluster_queue *cq)
{
	json_error_t je;
	json_t *doc = json_loads(
	    "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"
	    "\"ClusterQueue\",\"metadata\":{\"name\":\"cq\"},\"spec\":{"
	    "\"admissionChecksStrategy\":{\"admissionChecks\":[{\"name\":"
	    "\"prov\"}]}}}",
	    0, &je);
	cu_error err;

	cr_assert_not_null(doc, "%s", je.text);
	cr_assert_eq(
	    api_cluster_queue_decode(cq, doc, &err), CU_OK, "%s", err.msg);
	json_decref(doc);
}

struct checks_row {
	const char *name;
	bool cached;
	const char *state; /* the check's state */
	bool admitted;	   /* Admitted=True already */
	enum rec_ledger_state ledger;
	enum rec_admit_step step;
	enum rec_admit_write write;
};

static const struct checks_row checks_rows[] = {
    {"not cached: nothing", false, "Ready", false, REC_LEDGER_ADMITTED,
	REC_ADMIT_NONE, REC_ADMIT_WRITE_NONE},
    {"every check Ready, announced reservation: Admitted", true, "Ready", false,
	REC_LEDGER_ADMITTED, REC_ADMIT_ANNOUNCE, REC_ADMIT_WRITE_CHECKS_ADMIT},
    {"every check Ready, reservation answer pending: Admitted", true, "Ready",
	false, REC_LEDGER_RESERVED, REC_ADMIT_ANNOUNCE,
	REC_ADMIT_WRITE_CHECKS_ADMIT},
    {"every check Ready, adopted without a record: Admitted", true, "Ready",
	false, REC_LEDGER_NONE, REC_ADMIT_ANNOUNCE,
	REC_ADMIT_WRITE_CHECKS_ADMIT},
    {"every check Ready, eviction recorded: held back", true, "Ready", false,
	REC_LEDGER_EVICTING, REC_ADMIT_NONE, REC_ADMIT_WRITE_NONE},
    {"a check Pending, nothing changed: nothing", true, "Pending", false,
	REC_LEDGER_ADMITTED, REC_ADMIT_NONE, REC_ADMIT_WRITE_NONE},
    {"a check back to Pending while Admitted: synced, not admitted", true,
	"Pending", true, REC_LEDGER_ADMITTED, REC_ADMIT_ANNOUNCE,
	REC_ADMIT_WRITE_CHECKS_SYNC},
    {"Admitted already and Ready: nothing", true, "Ready", true,
	REC_LEDGER_ADMITTED, REC_ADMIT_NONE, REC_ADMIT_WRITE_NONE},
};

Test(reconcile_cycle, checks_admission_writes_from_a_table)
{
	struct api_cluster_queue cq;
	size_t i;

	checks_cq(&cq);
	for (i = 0; i < sizeof(checks_rows) / sizeof(checks_rows[0]); i++) {
		const struct checks_row *r = &checks_rows[i];
		struct rec_admit_in in = {.source = REC_ADMIT_FROM_CHECKS};
		struct rec_admit_plan p;
		struct api_workload wl;
		cu_error err;

		checks_wl(&wl, r->state, r->admitted);
		in.ledger = r->ledger;
		in.w.where = QUE_WL_ADMITTED;
		in.w.wl = r->cached ? &wl : NULL;
		in.cq = &cq.spec;
		cr_assert_eq(rec_admission_write(&in, NOW, &p, &err), CU_OK,
		    "%s: %s", r->name, err.msg);
		cr_expect_eq(p.step, r->step, "%s: step %d", r->name, p.step);
		cr_expect_eq(
		    p.write, r->write, "%s: write %d", r->name, p.write);
		cr_expect_eq(p.patch != NULL, r->step == REC_ADMIT_ANNOUNCE,
		    "%s: patch", r->name);
		/* Never recorded: the reservation was. */
		cr_expect_not(p.record, "%s: record", r->name);
		if (r->ledger == REC_LEDGER_EVICTING)
			cr_expect_not_null(p.why, "%s: why", r->name);
		if (r->write == REC_ADMIT_WRITE_CHECKS_ADMIT) {
			const json_t *ad = cond(p.patch, "Admitted");

			cr_assert_not_null(ad, "%s: Admitted", r->name);
			cr_expect_str_eq(
			    json_string_value(json_object_get(ad, "status")),
			    "True", "%s", r->name);
			/* Kueue's Admitted note: the ClusterQueue and the
			 * wait since the reservation. */
			cr_assert_not_null(p.note, "%s: note", r->name);
			cr_expect_not_null(strstr(p.note, "cq"), "%s", p.note);
			cr_expect_not_null(strstr(p.note, "10s"), "%s", p.note);
		} else {
			cr_expect_null(p.note, "%s: note", r->name);
		}
		rec_admit_plan_dispose(&p);
		api_workload_dispose(&wl);
	}
	api_cluster_queue_dispose(&cq);
}

/* ---- preemption victims ------------------------------------------------ */

struct victim_row {
	const char *name;
	enum que_where where;
	bool deferred, in_flight, stale, cached;
	enum rec_victim_step step;
	const char *why;
};

static const struct victim_row victim_rows[] = {
    {"not being evicted any more", QUE_WL_ADMITTED, false, false, false, true,
	REC_VICTIM_NONE, NULL},
    {"never announced: withdrawn", QUE_WL_EVICTING, true, true, false, true,
	REC_VICTIM_WITHDRAW, NULL},
    {"admission in flight: postponed", QUE_WL_EVICTING, false, true, false,
	true, REC_VICTIM_POSTPONE, "its admission is in flight"},
    {"cache behind our write: postponed", QUE_WL_EVICTING, false, false, true,
	true, REC_VICTIM_POSTPONE, "the cache is behind our write"},
    {"not cached: postponed", QUE_WL_EVICTING, false, false, false, false,
	REC_VICTIM_POSTPONE, "not in the cache"},
    {"admitted in the API: evicted", QUE_WL_EVICTING, false, false, false, true,
	REC_VICTIM_EVICT, NULL},
};

static struct rec_victim_in victim_in(const struct api_workload *wl)
{
	struct rec_victim_in in;

	memset(&in, 0, sizeof(in));
	in.reason = ADM_IN_CLUSTER_QUEUE;
	in.pre_uid = "pre-uid";
	in.pre_job_uid = "pre-job-uid";
	in.pre_ns = "ns";
	in.pre_name = "big";
	in.pre_path = "/cq";
	in.pre_priority = 100;
	in.ns = "ns";
	in.name = "job-a-1";
	in.uid = "wl-uid-1";
	in.cq = "cq";
	in.path = "/cq";
	in.priority = 10;
	in.w.wl = wl;
	return in;
}

Test(reconcile_cycle, victim_steps_from_a_table)
{
	struct api_workload wl;
	size_t i;

	decode(&wl, WL_JSON(ADMITTED_STATUS "]}"));
	for (i = 0; i < sizeof(victim_rows) / sizeof(victim_rows[0]); i++) {
		const struct victim_row *r = &victim_rows[i];
		struct rec_victim_in in = victim_in(r->cached ? &wl : NULL);
		struct rec_victim_plan p;

		in.w.where = r->where;
		in.w.deferred = r->deferred;
		in.w.in_flight = r->in_flight;
		in.w.stale = r->stale;
		rec_cycle_victim(&in, NOW, &p);
		cr_assert_eq(p.step, r->step, "%s: step %d", r->name, p.step);
		if (r->why != NULL)
			cr_assert_str_eq(p.why, r->why, "%s", r->name);
		cr_assert_eq(p.patch != NULL, r->step == REC_VICTIM_EVICT,
		    "%s: patch", r->name);
		rec_victim_plan_dispose(&p);
	}
	api_workload_dispose(&wl);
}

Test(reconcile_cycle, victim_eviction_carries_kueues_message_and_events)
{
	struct api_workload wl;
	struct rec_victim_in in;
	struct rec_victim_plan p;
	const json_t *ev, *pre;
	const char *msg;

	decode(&wl, WL_JSON(ADMITTED_STATUS "]}"));
	in = victim_in(&wl);
	in.w.where = QUE_WL_EVICTING;
	rec_cycle_victim(&in, NOW, &p);
	cr_assert_eq(p.step, REC_VICTIM_EVICT);
	ev = cond(p.patch, "Evicted");
	pre = cond(p.patch, "Preempted");
	cr_assert_not_null(ev);
	cr_assert_not_null(pre);
	cr_assert_str_eq(
	    json_string_value(json_object_get(ev, "reason")), "Preempted");
	cr_assert_str_eq(json_string_value(json_object_get(pre, "reason")),
	    "InClusterQueue");
	msg = json_string_value(json_object_get(ev, "message"));
	cr_assert_not_null(
	    strstr(msg, "UID: pre-uid, JobUID: pre-job-uid"), "%s", msg);
	/* The EvictedDueToPreempted note is the message, the Preempted note
	 * adds the priorities. */
	cr_assert_eq(p.message_len, strlen(msg));
	cr_assert_eq(strncmp(p.note, msg, p.message_len), 0, "%s", p.note);
	cr_assert_gt(strlen(p.note), p.message_len);
	cr_assert_str_eq(p.preemptor_ref, "ns/big");
	cr_assert_not_null(
	    strstr(p.preemptor_note, "job-a-1"), "%s", p.preemptor_note);
	rec_victim_plan_dispose(&p);
	api_workload_dispose(&wl);
}

Test(reconcile_cycle, victim_evicted_already_is_only_recorded)
{
	struct api_workload wl;
	struct rec_victim_in in;
	struct rec_victim_plan p;

	decode(&wl, WL_JSON(ADMITTED_STATUS EVICTED_COND "]}"));
	in = victim_in(&wl);
	in.w.where = QUE_WL_EVICTING;
	rec_cycle_victim(&in, NOW, &p);
	cr_assert_eq(p.step, REC_VICTIM_EVICTING);
	cr_assert_null(p.patch);
	cr_assert_null(p.note);
	rec_victim_plan_dispose(&p);
	api_workload_dispose(&wl);
}

/* ---- answers ------------------------------------------------------------ */

struct answer_row {
	enum rec_answer_write kind;
	enum rec_answer_outcome outcome;
	enum que_where where;
	unsigned steps;
};

static const struct answer_row answer_rows[] = {
    /* an admission announced: the ledger says so */
    {REC_ANSWER_ADMIT, REC_ANSWER_OK, QUE_WL_ADMITTED,
	REC_ANS_FORGET_IN_FLIGHT | REC_ANS_LEDGER_ADMITTED | REC_ANS_METRICS |
	    REC_ANS_CYCLE},
    /* refused: undone in the engine and the ledger */
    {REC_ANSWER_ADMIT, REC_ANSWER_REFUSED, QUE_WL_ADMITTED,
	REC_ANS_FORGET_IN_FLIGHT | REC_ANS_WITHDRAW | REC_ANS_LEDGER_FORGET |
	    REC_ANS_CYCLE},
    /* a victim meanwhile: withdrawn all the same (released) */
    {REC_ANSWER_ADMIT, REC_ANSWER_REFUSED, QUE_WL_EVICTING,
	REC_ANS_FORGET_IN_FLIGHT | REC_ANS_WITHDRAW | REC_ANS_LEDGER_FORGET |
	    REC_ANS_CYCLE},
    /* the failed commit already took the decision out of the ledger */
    {REC_ANSWER_ADMIT, REC_ANSWER_UNCOMMITTED, QUE_WL_ADMITTED,
	REC_ANS_FORGET_IN_FLIGHT | REC_ANS_WITHDRAW},
    {REC_ANSWER_ADMIT, REC_ANSWER_SEND_FAILED, QUE_WL_ADMITTED,
	REC_ANS_FORGET_IN_FLIGHT | REC_ANS_WITHDRAW | REC_ANS_LEDGER_FORGET},
    /* an eviction written: the ledger records it */
    {REC_ANSWER_EVICT, REC_ANSWER_OK, QUE_WL_EVICTING, REC_ANS_LEDGER_EVICTING},
    /* refused while still evicting: ADMITTED again in both, decided anew */
    {REC_ANSWER_EVICT, REC_ANSWER_REFUSED, QUE_WL_EVICTING,
	REC_ANS_FORGET_PREEMPTOR | REC_ANS_UNEVICT | REC_ANS_LEDGER_READMIT |
	    REC_ANS_RECONCILE | REC_ANS_CYCLE},
    /* refused after the engine moved on (released, removed): nothing */
    {REC_ANSWER_EVICT, REC_ANSWER_REFUSED, QUE_WL_PENDING,
	REC_ANS_FORGET_PREEMPTOR},
    {REC_ANSWER_EVICT, REC_ANSWER_SEND_FAILED, QUE_WL_EVICTING,
	REC_ANS_FORGET_PREEMPTOR | REC_ANS_UNEVICT | REC_ANS_RECONCILE},
    {REC_ANSWER_EVICT, REC_ANSWER_SEND_FAILED, QUE_WL_BLOCKED,
	REC_ANS_FORGET_PREEMPTOR},
    {REC_ANSWER_EVICT, REC_ANSWER_UNCOMMITTED, QUE_WL_EVICTING, 0},
};

Test(reconcile_cycle, answer_steps_keep_ledger_and_engine_together)
{
	size_t i;

	for (i = 0; i < sizeof(answer_rows) / sizeof(answer_rows[0]); i++) {
		const struct answer_row *r = &answer_rows[i];
		unsigned got = rec_cycle_answer(r->kind, r->outcome, r->where);

		cr_assert_eq(got, r->steps, "row %zu: steps %#x, want %#x", i,
		    got, r->steps);
	}
}

/* Whatever happens to a write, an admission never stays in the engine
 * without the ledger agreeing: every failure withdraws it, every success
 * records it. */
Test(reconcile_cycle, every_admission_outcome_is_recorded_or_withdrawn)
{
	enum rec_answer_outcome o;

	for (o = REC_ANSWER_OK; o <= REC_ANSWER_SEND_FAILED; o++) {
		unsigned s =
		    rec_cycle_answer(REC_ANSWER_ADMIT, o, QUE_WL_ADMITTED);

		cr_assert((s & REC_ANS_LEDGER_ADMITTED) != 0 ||
			      (s & REC_ANS_WITHDRAW) != 0,
		    "outcome %d: %#x", o, s);
		cr_assert_not(
		    (s & REC_ANS_LEDGER_ADMITTED) && (s & REC_ANS_WITHDRAW),
		    "outcome %d: %#x", o, s);
		cr_assert(s & REC_ANS_FORGET_IN_FLIGHT);
	}
}
