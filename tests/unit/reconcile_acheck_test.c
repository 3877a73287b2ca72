/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/reconcile_acheck_test.c - admission checks in the pure
 * reconcile layer, table-driven: the admission write of a ClusterQueue
 * with admissionChecksStrategy (checks per flavor, all Pending, Admitted
 * False) and the Workload reconciler's answer to each check state of a
 * Workload holding quota (Pending waits, all Ready admits, Retry evicts,
 * Rejected deactivates, a check no longer required is dropped).
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "reconcile/reconcile.h"

#define T0 "2026-01-01T00:00:00Z"
#define NOW_NS (1767225600LL * 1000000000LL + 100LL * 1000000000LL)

static json_t *parse(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);

	cr_assert_not_null(j, "%s: %s", text, e.text);
	return j;
}

static void cq_of(const char *strategy, struct api_cluster_queue *cq)
{
	char buf[1024];
	json_t *j;
	cu_error err;

	snprintf(buf, sizeof(buf),
	    "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"
	    "\"ClusterQueue\",\"metadata\":{\"name\":\"cq-a\"},\"spec\":{"
	    "\"admissionChecksStrategy\":{\"admissionChecks\":%s}}}",
	    strategy);
	j = parse(buf);
	cr_assert_eq(
	    api_cluster_queue_decode(cq, j, &err), CU_OK, "%s", err.msg);
	json_decref(j);
}

/* A Workload holding quota in cq-a with flavor spot; checks is the JSON
 * of status.admissionChecks ("" none); admitted: Admitted's status. */
static void wl_of(const char *checks, const char *admitted,
    const char *extra_cond, struct api_workload *wl)
{
	char buf[4096];
	json_t *j;
	cu_error err;

	snprintf(buf, sizeof(buf),
	    "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\","
	    "\"metadata\":{\"name\":\"w\",\"namespace\":\"ns\",\"uid\":"
	    "\"u1\",\"resourceVersion\":\"7\",\"generation\":1},"
	    "\"spec\":{\"queueName\":\"lq\",\"podSets\":[{\"name\":\"main\","
	    "\"count\":1,\"template\":{\"spec\":{\"containers\":[{\"name\":"
	    "\"c\",\"image\":\"i\"}]}}}]},"
	    "\"status\":{\"admission\":{\"clusterQueue\":\"cq-a\","
	    "\"podSetAssignments\":[{\"name\":\"main\",\"flavors\":{\"cpu\":"
	    "\"spot\"},\"resourceUsage\":{\"cpu\":\"1\"},\"count\":1}]},"
	    "\"conditions\":[{\"type\":\"QuotaReserved\",\"status\":\"True\","
	    "\"reason\":\"QuotaReserved\",\"message\":\"m\","
	    "\"observedGeneration\":1,"
	    "\"lastTransitionTime\":\"" T0 "\"},{\"type\":\"Admitted\","
	    "\"status\":\"%s\",\"reason\":\"%s\",\"message\":\"%s\","
	    "\"observedGeneration\":1,"
	    "\"lastTransitionTime\":\"" T0 "\"}%s]%s%s}}",
	    admitted,
	    strcmp(admitted, "True") == 0 ? "Admitted"
					  : REC_ADMITTED_UNSATISFIED_CHECKS,
	    strcmp(admitted, "True") == 0 ? "The workload is admitted"
					  : REC_MSG_UNSATISFIED_CHECKS,
	    extra_cond, *checks ? ",\"admissionChecks\":" : "", checks);
	j = parse(buf);
	cr_assert_eq(
	    api_workload_decode(wl, j, &err), CU_OK, "%s: %s", buf, err.msg);
	json_decref(j);
}

#define CHECK(n, s, m)                                                         \
	"{\"name\":\"" n "\",\"state\":\"" s "\",\"message\":\"" m "\","       \
	"\"lastTransitionTime\":\"" T0 "\"}"

static void app(char *buf, size_t cap, ...)
{
	va_list ap;
	const char *s;

	va_start(ap, cap);
	while ((s = va_arg(ap, const char *)) != NULL)
		strncat(buf, s, cap - strlen(buf) - 1);
	va_end(ap);
}

/* The checks of a status patch ("a:Pending,b:Ready"), then the conditions
 * it changes now ("Admitted=False:reason"). */
static void render_status(const json_t *body, char *buf, size_t cap)
{
	char ts[CU_TIME_RFC3339_LEN];
	json_t *st = json_object_get(body, "status"), *c;
	size_t i;

	cu_time_format_rfc3339(NOW_NS, ts);
	json_array_foreach(json_object_get(st, "admissionChecks"), i, c)
	{
		app(buf, cap, i ? "," : " checks ",
		    json_string_value(json_object_get(c, "name")), ":",
		    json_string_value(json_object_get(c, "state")), NULL);
	}
	json_array_foreach(json_object_get(st, "conditions"), i, c)
	{
		const char *t =
		    json_string_value(json_object_get(c, "lastTransitionTime"));

		if (t == NULL || strcmp(t, ts) != 0)
			continue;
		app(buf, cap, " ",
		    json_string_value(json_object_get(c, "type")), "=",
		    json_string_value(json_object_get(c, "status")), ":",
		    json_string_value(json_object_get(c, "reason")), NULL);
	}
}

/* ---- the admission write ------------------------------------------------ */

struct admit_row {
	const char *name;
	const char *strategy; /* CQ admissionChecks JSON; NULL: no CQ */
	const char *flavor;   /* assigned to cpu */
	const char *want;
};

static const struct admit_row admit_rows[] = {
    {"no_checks_admits", NULL, "spot",
	" QuotaReserved=True:QuotaReserved "
	"Admitted=True:Admitted"},
    {"empty_strategy_admits", "[]", "spot",
	" QuotaReserved=True:QuotaReserved Admitted=True:Admitted"},
    {"two_checks_pending_sorted", "[{\"name\":\"zz\"},{\"name\":\"aa\"}]",
	"spot",
	" checks aa:Pending,zz:Pending QuotaReserved=True:QuotaReserved "
	"Admitted=False:UnsatisfiedAdmissionChecks"},
    {"on_flavors_match", "[{\"name\":\"prov\",\"onFlavors\":[\"spot\"]}]",
	"spot",
	" checks prov:Pending QuotaReserved=True:QuotaReserved "
	"Admitted=False:UnsatisfiedAdmissionChecks"},
    {"on_flavors_other", "[{\"name\":\"prov\",\"onFlavors\":[\"gpu\"]}]",
	"spot", " QuotaReserved=True:QuotaReserved Admitted=True:Admitted"},
    {"per_flavor_mix",
	"[{\"name\":\"prov\",\"onFlavors\":[\"gpu\"]},{\"name\":\"all\"}]",
	"spot",
	" checks all:Pending QuotaReserved=True:QuotaReserved "
	"Admitted=False:UnsatisfiedAdmissionChecks"},
};

Test(acheck, admission_write)
{
	size_t r;

	for (r = 0; r < sizeof(admit_rows) / sizeof(admit_rows[0]); r++) {
		const struct admit_row *row = &admit_rows[r];
		struct adm_flavor_use use = {"cpu", row->flavor, 1000};
		struct adm_podset_assignment pa = {"main", 1, &use, 1, NULL};
		struct adm_decision d = {0};
		struct api_cluster_queue cq;
		struct api_workload wl;
		json_t *patch = NULL, *j;
		cu_error err;
		char got[1024] = "";

		j = parse("{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"
			  "\"Workload\",\"metadata\":{\"name\":\"w\","
			  "\"namespace\":\"ns\",\"uid\":\"u1\","
			  "\"resourceVersion\":\"7\"},\"spec\":{\"queueName\":"
			  "\"lq\",\"podSets\":[{\"name\":\"main\",\"count\":1,"
			  "\"template\":{\"spec\":{\"containers\":[{\"name\":"
			  "\"c\",\"image\":\"i\"}]}}}]}}");
		cr_assert_eq(api_workload_decode(&wl, j, &err), CU_OK);
		json_decref(j);
		d.kind = ADM_ADMIT;
		d.uid = "u1";
		d.cluster_queue = "cq-a";
		d.podsets = &pa;
		d.n_podsets = 1;
		if (row->strategy != NULL)
			cq_of(row->strategy, &cq);
		cr_assert_eq(
		    rec_wl_status_admit_checks(&wl, &d, false,
			row->strategy ? &cq.spec : NULL, NOW_NS, &patch, &err),
		    CU_OK, "%s: %s", row->name, err.msg);
		cr_assert_not_null(patch);
		render_status(patch, got, sizeof(got));
		cr_expect_str_eq(
		    got, row->want, "%s: got [%s]", row->name, got);
		json_decref(patch);
		if (row->strategy != NULL)
			api_cluster_queue_dispose(&cq);
		api_workload_dispose(&wl);
	}
}

/* ---- the Workload reconciler -------------------------------------------- */

struct rec_row {
	const char *name;
	const char *strategy; /* NULL: the view has no ClusterQueue */
	const char *checks;   /* status.admissionChecks */
	const char *admitted; /* Admitted's status */
	int extra;	      /* 1: Evicted=True, 2: Requeued=False */
	const char *want;
};

#define EVICTED_COND                                                           \
	",{\"type\":\"Evicted\",\"status\":\"True\",\"reason\":\"r\","         \
	"\"message\":\"m\",\"lastTransitionTime\":\"" T0 "\"}"

#define REQUEUED_AC                                                            \
	",{\"type\":\"Requeued\",\"status\":\"False\",\"reason\":"             \
	"\"AdmissionCheck\",\"message\":\"m\",\"observedGeneration\":1,"       \
	"\"lastTransitionTime\":\"" T0 "\"}"

static const struct rec_row rec_rows[] = {
    {"pending_waits", "[{\"name\":\"a\"}]", "[" CHECK("a", "Pending", "") "]",
	"False", false, ""},
    {"no_checks_no_write", NULL, "", "True", false, ""},
    {"no_checks_strategy_empty_no_write", "[]", "", "True", false, ""},
    {"one_of_two_ready_waits", "[{\"name\":\"a\"},{\"name\":\"b\"}]",
	"[" CHECK("a", "Ready", "") "," CHECK("b", "Pending", "") "]", "False",
	false, ""},
    {"all_ready_admits", "[{\"name\":\"a\"},{\"name\":\"b\"}]",
	"[" CHECK("a", "Ready", "") "," CHECK("b", "Ready", "") "]", "False",
	false, "status Admitted=True:Admitted [Admitted]"},
    {"missing_check_added_pending", "[{\"name\":\"a\"},{\"name\":\"b\"}]",
	"[" CHECK("a", "Ready", "") "]", "False", false,
	"status checks a:Ready,b:Pending"},
    {"admitted_then_check_added_unadmits", "[{\"name\":\"a\"}]", "", "True",
	false,
	"status checks a:Pending Admitted=False:UnsatisfiedAdmissionChecks"},
    {"check_removed_from_cq_admits", "[{\"name\":\"b\"}]",
	"[" CHECK("a", "Pending", "") "," CHECK("b", "Ready", "") "]", "False",
	false, "status checks b:Ready Admitted=True:Admitted [Admitted]"},
    {"retry_evicts", "[{\"name\":\"a\"}]",
	"[" CHECK("a", "Retry", "capacity gone") "]", "False", false,
	"evicting u1 | evict checks a:Pending Evicted=True:AdmissionCheck "
	"[EvictedDueToAdmissionCheck]"},
    /* Retry with requeueAfterSeconds ahead: requeueState.requeueAt is
     * written first (NeedsRequeueAtUpdate), the eviction follows */
    {"retry_backoff_requeue_at_first", "[{\"name\":\"a\"}]",
	"[{\"name\":\"a\",\"state\":\"Retry\",\"message\":\"\","
	"\"lastTransitionTime\":\"" T0 "\",\"requeueAfterSeconds\":600}]",
	"False", false, "status"},
    {"retry_backoff_passed_evicts", "[{\"name\":\"a\"}]",
	"[{\"name\":\"a\",\"state\":\"Retry\",\"message\":\"\","
	"\"lastTransitionTime\":\"" T0 "\",\"requeueAfterSeconds\":60}]",
	"False", false,
	"evicting u1 | evict checks a:Pending Evicted=True:AdmissionCheck "
	"[EvictedDueToAdmissionCheck]"},
    {"rejected_deactivates", "[{\"name\":\"a\"},{\"name\":\"b\"}]",
	"[" CHECK("a", "Rejected", "no") "," CHECK("b", "Rejected", "") "]",
	"False", false,
	"status "
	"DeactivationTarget=True:AdmissionCheck | event Warning "
	"AdmissionCheckRejected Deactivated due to AdmissionChecks in "
	"Rejected state: \"a\" (no); \"b\""},
    {"rejected_wins_over_retry", "[{\"name\":\"a\"},{\"name\":\"b\"}]",
	"[" CHECK("a", "Retry", "") "," CHECK("b", "Rejected", "") "]", "False",
	false,
	"status "
	"DeactivationTarget=True:AdmissionCheck | event Warning "
	"AdmissionCheckRejected Deactivated due to AdmissionCheck in "
	"Rejected state: \"b\""},
    {"readmitted_requeued_answered", "[{\"name\":\"a\"}]",
	"[" CHECK("a", "Pending", "") "]", "False", 2,
	"status Requeued=True:BackoffFinished"},
    {"evicted_left_alone", "[{\"name\":\"a\"}]",
	"[" CHECK("a", "Retry", "") "]", "False", true, ""},
    {"unknown_cq_keeps_checks", NULL, "[" CHECK("a", "Pending", "") "]",
	"False", false, ""},
};

static bool eligible_cb(const char *ns, const char *queue, void *payload)
{
	(void)ns;
	(void)queue;
	(void)payload;
	return true;
}

static void render_plan(const struct rec_plan *p, char *buf, size_t cap)
{
	size_t i;

	buf[0] = '\0';
	for (i = 0; i < p->n; i++) {
		const struct rec_item *it = &p->items[i];

		if (i > 0)
			app(buf, cap, " | ", NULL);
		if (it->kind == REC_ITEM_WRITE) {
			cr_assert_eq(it->op, REC_WRITE_STATUS);
			app(buf, cap, it->eviction ? "evict" : "status", NULL);
			render_status(it->body, buf, cap);
			if (it->done_reason != NULL)
				app(buf, cap, " [", it->done_reason, "]", NULL);
		} else if (it->kind == REC_ITEM_EVENT) {
			app(buf, cap, "event ", it->type, " ", it->reason, " ",
			    it->text, NULL);
		} else if (it->kind == REC_ITEM_ENGINE &&
			   it->engine == REC_ENGINE_EVICTING) {
			app(buf, cap, "evicting ", it->uid, NULL);
		} else {
			app(buf, cap, "other", NULL);
		}
	}
}

Test(acheck, workload_reconciler)
{
	size_t r;

	for (r = 0; r < sizeof(rec_rows) / sizeof(rec_rows[0]); r++) {
		const struct rec_row *row = &rec_rows[r];
		struct api_cluster_queue cq;
		struct api_workload wl;
		struct rec_wl_view v;
		struct rec_plan plan;
		cu_error err;
		char got[2048];

		wl_of(row->checks, row->admitted,
		    row->extra == 1   ? EVICTED_COND
		    : row->extra == 2 ? REQUEUED_AC
				      : "",
		    &wl);
		memset(&v, 0, sizeof(v));
		v.engine_uid = "u1";
		v.queued = true;
		v.where = QUE_WL_ADMITTED;
		v.queued_generation = 1;
		v.namespace_eligible = true;
		v.now_ns = NOW_NS;
		v.eligible = eligible_cb;
		if (row->strategy != NULL) {
			cq_of(row->strategy, &cq);
			v.cq_checks = &cq.spec;
		}
		rec_plan_init(&plan);
		cr_assert_eq(rec_workload_reconcile(&v, &wl, &plan, &err),
		    CU_OK, "%s: %s", row->name, err.msg);
		render_plan(&plan, got, sizeof(got));
		cr_expect_str_eq(
		    got, row->want, "%s: got [%s]", row->name, got);
		rec_plan_free(&plan);
		if (row->strategy != NULL)
			api_cluster_queue_dispose(&cq);
		api_workload_dispose(&wl);
	}
}

Test(acheck, verdict_messages)
{
	struct api_workload wl;
	char *msg = NULL;

	wl_of("[" CHECK("b", "Retry", "") "," CHECK("a", "Retry", "x") "]",
	    "False", "", &wl);
	cr_assert_eq(rec_acheck_verdict(&wl, &msg), REC_ACHECK_RETRY);
	cr_expect_str_eq(msg, "Evicted due to AdmissionChecks in Retry state: "
			      "\"a\" (x); \"b\"");
	cu_free(msg);
	api_workload_dispose(&wl);
	wl_of("[" CHECK("a", "Ready", "") "]", "True", "", &wl);
	cr_assert_eq(rec_acheck_verdict(&wl, &msg), REC_ACHECK_NONE);
	cr_assert_null(msg);
	api_workload_dispose(&wl);
}

/* After an AdmissionCheck eviction is released, the pending Workload's
 * Requeued=False (AdmissionCheck) becomes True (BackoffFinished) as Kueue
 * sets it once requeueAt, if any, has passed. */
Test(acheck, requeued_after_check_eviction)
{
	struct api_workload wl;
	struct rec_wl_view v;
	struct rec_plan plan;
	json_t *j;
	cu_error err;
	char got[512];

	j = parse("{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"
		  "\"Workload\",\"metadata\":{\"name\":\"w\",\"namespace\":"
		  "\"ns\",\"uid\":\"u1\",\"resourceVersion\":\"7\","
		  "\"generation\":1},\"spec\":{\"queueName\":\"lq\","
		  "\"podSets\":[{\"name\":\"main\",\"count\":1,\"template\":"
		  "{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":"
		  "\"i\"}]}}}]},\"status\":{\"conditions\":[{\"type\":"
		  "\"Requeued\",\"status\":\"False\",\"reason\":"
		  "\"AdmissionCheck\",\"message\":\"m\",\"observedGeneration\""
		  ":1,\"lastTransitionTime\":\"" T0 "\"}]}}");
	cr_assert_eq(api_workload_decode(&wl, j, &err), CU_OK, "%s", err.msg);
	json_decref(j);
	memset(&v, 0, sizeof(v));
	v.engine_uid = "u1";
	v.queued = true;
	v.where = QUE_WL_PENDING;
	v.queued_generation = 1;
	v.namespace_eligible = true;
	v.now_ns = NOW_NS;
	v.eligible = eligible_cb;
	rec_plan_init(&plan);
	cr_assert_eq(rec_workload_reconcile(&v, &wl, &plan, &err), CU_OK);
	render_plan(&plan, got, sizeof(got));
	cr_expect_str_eq(got, "status Requeued=True:BackoffFinished");
	rec_plan_free(&plan);
	api_workload_dispose(&wl);
}
