/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/reconcile_mk_test.c - the MultiKueue admission check's pure
 * decisions, table-driven: the AdmissionCheck's Active verdict from its
 * config and clusters; the dispatch decision for one manager Workload
 * (copies removed when it finished or lost its quota, a finished copy
 * finishing it, the admitted copy winning and the others removed, a lost
 * winner waited for then retried, dispatch to the reachable workers
 * only, an owner not handed to MultiKueue rejected); the status patch;
 * the copies created on a worker.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "api/json.h"
#include "reconcile/reconcile.h"

#define S_NS 1000000000LL

static json_t *parse(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);

	cr_assert_not_null(j, "%s: %s", text, e.text);
	return j;
}

/* ---- the AdmissionCheck's Active condition ---------------------------- */

Test(mk_check, active_verdicts)
{
	static const struct {
		const char *config_err;
		enum rec_mk_cluster_state st[2];
		size_t n;
		bool active;
		const char *reason, *message;
	} rows[] = {
	    {NULL, {REC_MK_CLUSTER_ACTIVE, REC_MK_CLUSTER_ACTIVE}, 2, true,
		"Active", "The admission check is active"},
	    {NULL, {REC_MK_CLUSTER_ACTIVE, REC_MK_CLUSTER_INACTIVE}, 2, true,
		"SomeActiveClusters", "Inactive clusters: [w2]"},
	    {NULL, {REC_MK_CLUSTER_MISSING, REC_MK_CLUSTER_INACTIVE}, 2, false,
		"NoUsableClusters",
		"Missing clusters: [w1], Inactive clusters: [w2]"},
	    {NULL, {REC_MK_CLUSTER_MISSING, REC_MK_CLUSTER_MISSING}, 2, false,
		"NoUsableClusters", "Missing clusters: [w1 w2]"},
	    {"MultiKueueConfig.kueue.x-k8s.io \"c\" not found",
		{REC_MK_CLUSTER_ACTIVE}, 1, false, "BadConfig",
		"Cannot load the AdmissionChecks parameters: "
		"MultiKueueConfig.kueue.x-k8s.io \"c\" not found"},
	};
	const char *names[] = {"w1", "w2"};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const char *reason;
		char *msg;
		bool on = rec_mk_check_active(rows[i].config_err, names,
		    rows[i].st, rows[i].n, &reason, &msg);

		cr_expect_eq(on, rows[i].active, "row %zu", i);
		cr_expect_str_eq(reason, rows[i].reason, "row %zu", i);
		cr_assert_not_null(msg);
		cr_expect_str_eq(msg, rows[i].message, "row %zu", i);
		cu_free(msg);
	}
}

/* ---- the dispatch decision -------------------------------------------- */

/* A manager Workload: reserved (quota), finished, check state, its
 * clusterName (may be NULL). */
static json_t *local_wl(
    bool reserved, bool finished, const char *state, const char *cluster)
{
	char buf[2048];
	json_t *wl;

	snprintf(buf, sizeof(buf),
	    "{\"metadata\":{\"name\":\"wl\",\"namespace\":\"ns\","
	    "\"resourceVersion\":\"7\",\"generation\":1,"
	    "\"labels\":{\"kueue.x-k8s.io/job-uid\":\"u1\",\"team\":\"a\"}},"
	    "\"spec\":{\"queueName\":\"lq\",\"podSets\":[]},"
	    "\"status\":{%s\"conditions\":[{\"type\":\"QuotaReserved\","
	    "\"status\":\"%s\"}%s],\"admissionChecks\":[{\"name\":\"mk\","
	    "\"state\":\"%s\",\"message\":\"\"}]}}",
	    reserved ? "\"admission\":{\"clusterQueue\":\"cq\"}," : "",
	    reserved ? "True" : "False",
	    finished ? ",{\"type\":\"Finished\",\"status\":\"True\"}" : "",
	    state);
	wl = parse(buf);
	if (cluster != NULL)
		json_object_set_new(json_object_get(wl, "status"),
		    "clusterName", json_string(cluster));
	return wl;
}

/* A copy on a worker with the given True conditions at time t. */
static json_t *copy_wl(const char *conds, const char *t)
{
	char buf[1024], c1[64] = "", c2[64] = "";
	const char *comma;
	json_t *arr = json_array();
	json_t *o;

	if (conds != NULL && conds[0] != '\0') {
		comma = strchr(conds, ',');
		if (comma != NULL) {
			snprintf(c1, sizeof(c1), "%.*s", (int)(comma - conds),
			    conds);
			snprintf(c2, sizeof(c2), "%s", comma + 1);
		} else {
			snprintf(c1, sizeof(c1), "%s", conds);
		}
	}
	if (c1[0])
		json_array_append_new(
		    arr, json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", c1,
			     "status", "True", "lastTransitionTime", t,
			     "reason", "R1", "message", "M1"));
	if (c2[0])
		json_array_append_new(
		    arr, json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", c2,
			     "status", "True", "lastTransitionTime", t,
			     "reason", "R2", "message", "M2"));
	snprintf(buf, sizeof(buf), "{\"metadata\":{\"name\":\"wl\"}}");
	o = parse(buf);
	json_object_set_new(o, "status", json_pack("{s:o}", "conditions", arr));
	return o;
}

struct row {
	const char *what;
	bool reserved, finished, managed;
	const char *state, *cluster;
	/* per worker: reachable, copy conditions (NULL: no copy), time */
	bool reach[2];
	const char *copy[2], *t[2];
	int64_t lost_since_s, now_s;
	enum rec_mk_step step;
	int remote;
	bool create[2], remove[2];
	const char *new_state, *message, *cluster_name;
	/* the ledger's choice (NULL: none); the plan forgets it */
	const char *recorded;
	bool forget;
};

static const struct row rows[] = {
    {"no quota: copies removed", false, false, true, "Pending", NULL,
	{true, false}, {"", ""}, {"t1", "t1"}, 0, 10, REC_MK_REMOVE_ALL, -1,
	{false, false}, {true, false}, NULL, NULL, NULL, NULL, false},
    {"finished: copies removed", true, true, true, "Ready", "w1", {true, true},
	{"Admitted", ""}, {"t1", "t1"}, 0, 10, REC_MK_REMOVE_ALL, -1,
	{false, false}, {true, true}, NULL, NULL, NULL, NULL, false},
    {"not managed by MultiKueue: rejected", true, false, false, "Pending", NULL,
	{true, true}, {NULL, NULL}, {NULL, NULL}, 0, 10, REC_MK_REJECT, -1,
	{false, false}, {false, false}, "Rejected",
	"The owner is not managed by Kueue: Expecting spec.managedBy to be "
	"\"kueue.x-k8s.io/multikueue\" not \"\"",
	NULL, NULL, false},
    {"dispatch to the reachable workers", true, false, true, "Pending", NULL,
	{true, false}, {NULL, NULL}, {NULL, NULL}, 0, 10, REC_MK_DISPATCH, -1,
	{true, false}, {false, false}, NULL, NULL, NULL, NULL, false},
    {"dispatch only where no copy yet", true, false, true, "Pending", NULL,
	{true, true}, {"QuotaReserved", NULL}, {"t1", NULL}, 0, 10,
	REC_MK_DISPATCH, -1, {false, true}, {false, false}, NULL, NULL, NULL,
	NULL, false},
    {"the admitted copy is recorded before anything", true, false, true,
	"Pending", NULL, {true, true}, {"", "QuotaReserved,Admitted"},
	{"t1", "t2"}, 0, 10, REC_MK_RECORD, 1, {false, false}, {false, false},
	NULL, NULL, NULL, NULL, false},
    {"the recorded copy wins, the other goes", true, false, true, "Pending",
	NULL, {true, true}, {"", "QuotaReserved,Admitted"}, {"t1", "t2"}, 0, 10,
	REC_MK_WINNER, 1, {false, false}, {true, false}, "Ready",
	"The workload got reservation on \"w2\"", "w2", "w2", false},
    {"the earliest admission is recorded", true, false, true, "Pending", NULL,
	{true, true}, {"Admitted", "Admitted"},
	{"2026-01-01T00:00:09Z", "2026-01-01T00:00:05Z"}, 0, 10, REC_MK_RECORD,
	1, {false, false}, {false, false}, NULL, NULL, NULL, NULL, false},
    {"the recorded choice over an earlier admission", true, false, true,
	"Pending", NULL, {true, true}, {"Admitted", "Admitted"},
	{"2026-01-01T00:00:01Z", "2026-01-01T00:00:05Z"}, 0, 10, REC_MK_WINNER,
	1, {false, false}, {true, false}, "Ready",
	"The workload got reservation on \"w2\"", "w2", "w2", false},
    {"recorded worker unreachable: wait, never another", true, false, true,
	"Pending", NULL, {false, true}, {NULL, "Admitted"}, {NULL, "t1"}, 8, 10,
	REC_MK_LOST_WAIT, -1, {false, false}, {false, true}, NULL, NULL, NULL,
	"w1", false},
    {"recorded worker lost past the timeout: retry", true, false, true,
	"Pending", NULL, {false, true}, {NULL, "Admitted"}, {NULL, "t1"}, 4, 10,
	REC_MK_RETRY, -1, {false, false}, {false, true}, "Retry",
	"Reserving remote lost", NULL, "w1", false},
    {"announced winner unreachable, another copy admitted: wait", true, false,
	true, "Ready", "w1", {false, true}, {NULL, "Admitted"}, {NULL, "t1"}, 8,
	10, REC_MK_LOST_WAIT, -1, {false, false}, {false, true}, NULL, NULL,
	NULL, NULL, false},
    {"unannounced record, its copy gone: forgotten, chosen again", true, false,
	true, "Pending", NULL, {true, true}, {NULL, "Admitted"}, {NULL, "t1"},
	0, 10, REC_MK_RECORD, 1, {false, false}, {false, false}, NULL, NULL,
	NULL, "w1", true},
    {"finished: the recorded choice forgotten", true, true, true, "Ready", "w1",
	{true, true}, {"Admitted", ""}, {"t1", "t1"}, 0, 10, REC_MK_REMOVE_ALL,
	-1, {false, false}, {true, true}, NULL, NULL, NULL, "w1", true},
    {"the announced worker keeps it over an earlier admission", true, false,
	true, "Ready", "w2", {true, true}, {"Admitted", "Admitted"},
	{"2026-01-01T00:00:01Z", "2026-01-01T00:00:05Z"}, 0, 10, REC_MK_WINNER,
	1, {false, false}, {true, false}, "Ready",
	"The workload got reservation on \"w2\"", NULL, NULL, false},
    {"a finished copy finishes it", true, false, true, "Ready", "w1",
	{true, true}, {"Admitted,Finished", NULL}, {"t1", NULL}, 0, 10,
	REC_MK_FINISH, 0, {false, false}, {false, false}, NULL, NULL, NULL,
	NULL, false},
    {"winner unreachable: wait", true, false, true, "Ready", "w1",
	{false, true}, {NULL, NULL}, {NULL, NULL}, 8, 10, REC_MK_LOST_WAIT, -1,
	{false, false}, {false, false}, NULL, NULL, NULL, NULL, false},
    {"winner lost past the timeout: retry", true, false, true, "Ready", "w1",
	{false, true}, {NULL, NULL}, {NULL, NULL}, 4, 10, REC_MK_RETRY, -1,
	{false, false}, {false, false}, "Retry", "Reserving remote lost", NULL,
	NULL, false},
    {"winner reachable but its copy gone: retry", true, false, true, "Ready",
	"w1", {true, true}, {NULL, NULL}, {NULL, NULL}, 0, 10, REC_MK_RETRY, -1,
	{false, false}, {false, false}, "Retry",
	"Reserving remote no longer exists or is not admitted", NULL, NULL,
	false},
    {"no dispatch while the check is Retry", true, false, true, "Retry", NULL,
	{true, true}, {NULL, NULL}, {NULL, NULL}, 0, 10, REC_MK_IDLE, -1,
	{false, false}, {false, false}, NULL, NULL, NULL, NULL, false},
};

Test(mk_decide, table)
{
	size_t r, i;

	for (r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		const struct row *x = &rows[r];
		json_t *local =
		    local_wl(x->reserved, x->finished, x->state, x->cluster);
		json_t *copies[2] = {NULL, NULL};
		struct rec_mk_remote rem[2];
		struct rec_mk_in in;
		struct rec_mk_plan p;

		for (i = 0; i < 2; i++) {
			copies[i] =
			    x->copy[i] ? copy_wl(x->copy[i], x->t[i]) : NULL;
			rem[i].cluster = i ? "w2" : "w1";
			rem[i].reachable = x->reach[i];
			rem[i].wl = copies[i];
			rem[i].has_job = false;
		}
		memset(&in, 0, sizeof(in));
		in.local = local;
		in.check = "mk";
		in.job_managed = x->managed;
		in.remotes = rem;
		in.n = 2;
		in.now_ns = x->now_s * S_NS;
		in.lost_since_ns = x->lost_since_s * S_NS;
		in.worker_lost_ns = 5 * S_NS;
		in.recorded = x->recorded;
		rec_mk_decide(&in, &p);
		cr_expect_eq(p.step, x->step, "%s: step %d", x->what, p.step);
		cr_expect_eq(p.forget, x->forget, "%s: forget", x->what);
		if (x->step == REC_MK_RECORD)
			cr_expect_str_eq(p.record, rem[x->remote].cluster,
			    "%s: record", x->what);
		else
			cr_expect_null(p.record, "%s: record", x->what);
		cr_expect_eq(p.remote, x->remote, "%s: remote", x->what);
		for (i = 0; i < 2; i++) {
			cr_expect_eq(p.create[i], x->create[i],
			    "%s: create[%zu]", x->what, i);
			cr_expect_eq(p.remove[i], x->remove[i],
			    "%s: remove[%zu]", x->what, i);
		}
		if (x->new_state == NULL) {
			cr_expect_null(p.state, "%s: state", x->what);
		} else {
			cr_assert_not_null(p.state, "%s", x->what);
			cr_expect_str_eq(p.state, x->new_state, "%s", x->what);
			cr_expect_str_eq(p.message, x->message, "%s", x->what);
		}
		if (x->cluster_name == NULL)
			cr_expect_null(p.cluster_name, "%s", x->what);
		else
			cr_expect_str_eq(
			    p.cluster_name, x->cluster_name, "%s", x->what);
		if (x->step == REC_MK_LOST_WAIT)
			cr_expect_eq(p.wake_ns, (x->lost_since_s + 5) * S_NS,
			    "%s: wake", x->what);
		if (x->step == REC_MK_FINISH) {
			cr_expect_str_eq(p.finish_reason, "R2");
			cr_expect_str_eq(p.finish_message, "M2");
		}
		rec_mk_plan_dispose(&p);
		json_decref(copies[0]);
		json_decref(copies[1]);
		json_decref(local);
	}
}

Test(mk_decide, incremental_rounds)
{
	json_t *local = local_wl(true, false, "Pending", NULL);
	struct rec_mk_remote rem[3] = {{"c", true, NULL, false},
	    {"a", true, NULL, false}, {"b", false, NULL, false}};
	struct rec_mk_in in;
	struct rec_mk_plan p;

	memset(&in, 0, sizeof(in));
	in.local = local;
	in.check = "mk";
	in.job_managed = true;
	in.remotes = rem;
	in.n = 3;
	in.now_ns = 100 * S_NS;
	in.incremental = true;
	in.step_size = 2;
	in.round_ns = 10 * S_NS;
	/* no round yet: the first two by name, a and b */
	rec_mk_decide(&in, &p);
	cr_assert_eq(p.step, REC_MK_DISPATCH);
	cr_assert(p.new_round);
	cr_assert_eq(p.n_nominate, 2);
	cr_expect_str_eq(p.nominate[0], "a");
	cr_expect_str_eq(p.nominate[1], "b");
	cr_expect(p.create[1] && !p.create[0] && !p.create[2],
	    "a copy on a (b is unreachable, c not nominated)");
	cr_expect_eq(p.wake_ns, 110 * S_NS + 1);
	rec_mk_plan_dispose(&p);
	/* within the round: nothing new */
	json_object_set_new(json_object_get(local, "status"),
	    "nominatedClusterNames", json_pack("[s, s]", "a", "b"));
	in.round_start_ns = 95 * S_NS;
	rec_mk_decide(&in, &p);
	cr_expect_not(p.new_round);
	cr_expect_eq(p.n_nominate, 2);
	rec_mk_plan_dispose(&p);
	/* the round ran out: c joins */
	in.round_start_ns = 80 * S_NS;
	rec_mk_decide(&in, &p);
	cr_expect(p.new_round);
	cr_expect_eq(p.n_nominate, 3);
	cr_expect(p.create[0], "a copy on c");
	rec_mk_plan_dispose(&p);
	json_decref(local);
}

/* ---- the status patch and the copies ---------------------------------- */

Test(mk_patch, ready_names_the_worker_and_equal_is_null)
{
	json_t *local = local_wl(true, false, "Pending", NULL), *patch = NULL;
	struct rec_mk_plan p;
	const char *nom[] = {"w1", "w2"};
	cu_error err;

	memset(&p, 0, sizeof(p));
	p.step = REC_MK_WINNER;
	p.state = "Ready";
	p.message = cu_strdup("The workload got reservation on \"w2\"");
	p.cluster_name = "w2";
	cr_assert_eq(rec_mk_status_patch(local, "mk", &p, NULL, 0,
			 "2026-01-01T00:00:00Z", &patch, &err),
	    CU_OK);
	cr_assert_not_null(patch);
	cr_expect_str_eq(
	    api_json_str(json_object_get(patch, "status"), "clusterName"),
	    "w2");
	cr_expect_str_eq(
	    api_json_str(json_object_get(patch, "metadata"), "resourceVersion"),
	    "7");
	json_decref(patch);
	rec_mk_plan_dispose(&p);
	/* nothing to change: no patch */
	memset(&p, 0, sizeof(p));
	p.step = REC_MK_DISPATCH;
	cr_assert_eq(rec_mk_status_patch(local, "mk", &p, NULL, 0,
			 "2026-01-01T00:00:00Z", &patch, &err),
	    CU_OK);
	cr_expect_null(patch);
	/* dispatch names the nominated workers */
	cr_assert_eq(rec_mk_status_patch(local, "mk", &p, nom, 2,
			 "2026-01-01T00:00:00Z", &patch, &err),
	    CU_OK);
	cr_assert_not_null(patch);
	cr_expect_eq(
	    json_array_size(json_object_get(
		json_object_get(patch, "status"), "nominatedClusterNames")),
	    2);
	json_decref(patch);
	json_decref(local);
}

Test(mk_copies, workload_and_job)
{
	json_t *local = local_wl(true, false, "Pending", NULL);
	json_t *copy = rec_mk_remote_workload(local, "org");
	json_t *labels =
	    json_object_get(json_object_get(copy, "metadata"), "labels");
	json_t *job = parse(
	    "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{"
	    "\"name\":\"j\",\"namespace\":\"ns\",\"uid\":\"x\","
	    "\"resourceVersion\":\"3\"},\"spec\":{\"managedBy\":"
	    "\"kueue.x-k8s.io/multikueue\",\"suspend\":true,\"selector\":{},"
	    "\"template\":{\"metadata\":{\"labels\":{\"job-name\":\"j\","
	    "\"app\":\"a\"}},\"spec\":{}}},\"status\":{\"active\":1}}");
	json_t *rj;

	cr_assert_not_null(copy);
	cr_expect_str_eq(api_json_str(labels, REC_MK_ORIGIN_LABEL), "org");
	cr_expect_null(json_object_get(labels, "kueue.x-k8s.io/job-uid"));
	cr_expect_str_eq(api_json_str(labels, "team"), "a");
	cr_expect_null(json_object_get(copy, "status"));
	cr_expect_null(json_object_get(
	    json_object_get(copy, "metadata"), "resourceVersion"));
	rj =
	    rec_mk_remote_job(rec_fw_by_kind("batch", "Job"), job, "wl", "org");
	cr_assert_not_null(rj);
	cr_expect_null(
	    json_object_get(json_object_get(rj, "spec"), "managedBy"));
	cr_expect_null(
	    json_object_get(json_object_get(rj, "spec"), "selector"));
	cr_expect_null(json_object_get(rj, "status"));
	cr_expect_str_eq(
	    api_json_str(
		json_object_get(json_object_get(rj, "metadata"), "labels"),
		REC_PREBUILT_WORKLOAD),
	    "wl");
	cr_expect_null(json_object_get(
	    json_object_get(
		json_object_get(
		    json_object_get(json_object_get(rj, "spec"), "template"),
		    "metadata"),
		"labels"),
	    "job-name"));
	json_decref(rj);
	json_decref(copy);
	json_decref(job);
	json_decref(local);
}

Test(mk_copies, job_status_patch)
{
	json_t *doc = parse("{\"status\":{\"active\":1,\"ready\":1}}");
	json_t *rem = parse("{\"status\":{\"succeeded\":1}}");
	json_t *p = rec_mk_job_status_patch(NULL, doc, rem);
	json_t *st = json_object_get(p, "status");

	cr_assert_not_null(p);
	cr_expect_eq(json_integer_value(json_object_get(st, "succeeded")), 1);
	cr_expect(json_is_null(json_object_get(st, "active")));
	cr_expect_null(rec_mk_job_status_patch(NULL, rem, rem));
	json_decref(p);
	json_decref(doc);
	json_decref(rem);
}

/* Evicted on the manager while holding quota (a lost winner's Retry): the
 * copies go; the job's copied status is cleared once it is stopped and
 * no reachable worker holds the job, never before. */
Test(mk_decide, evicted_clears_the_job_status)
{
	static const struct {
		const char *what;
		bool reach, has_job, suspended, active, reset;
	} ev[] = {
	    {"winner lost, job stopped: cleared", false, false, true, true,
		true},
	    {"job not stopped yet: wait", false, false, false, true, false},
	    {"a reachable worker holds the job: wait", true, true, true, true,
		false},
	    {"reachable, job gone: cleared", true, false, true, true, true},
	    {"nothing shown: nothing to clear", false, false, true, false,
		false},
	};
	size_t r;

	for (r = 0; r < sizeof(ev) / sizeof(ev[0]); r++) {
		json_t *local = local_wl(true, false, "Pending", "w1");
		json_t *copy = copy_wl("QuotaReserved,Admitted", "t1");
		struct rec_mk_remote rem[1] = {{"w1", ev[r].reach,
		    ev[r].reach ? copy : NULL, ev[r].has_job}};
		struct rec_mk_in in;
		struct rec_mk_plan p;

		json_array_append_new(
		    json_object_get(
			json_object_get(local, "status"), "conditions"),
		    json_pack("{s:s, s:s, s:s}", "type", "Evicted", "status",
			"True", "reason", "AdmissionCheck"));
		memset(&in, 0, sizeof(in));
		in.local = local;
		in.check = "mk";
		in.job_managed = true;
		in.remotes = rem;
		in.n = 1;
		in.now_ns = 10 * S_NS;
		in.worker_lost_ns = 5 * S_NS;
		in.job_suspended = ev[r].suspended;
		in.job_active = ev[r].active;
		rec_mk_decide(&in, &p);
		cr_expect_eq(
		    p.step, REC_MK_EVICTED, "%s: step %d", ev[r].what, p.step);
		cr_expect_eq(p.reset_job, ev[r].reset, "%s", ev[r].what);
		cr_expect_eq(
		    p.remove[0], ev[r].reach, "%s: remove", ev[r].what);
		cr_expect_null(
		    p.state, "%s: the check is left alone", ev[r].what);
		rec_mk_plan_dispose(&p);
		json_decref(copy);
		json_decref(local);
	}
}

Test(mk_copies, job_inactive_patch)
{
	json_t *job = parse("{\"status\":{\"active\":1,\"ready\":1,"
			    "\"startTime\":\"t\"}}");
	json_t *js = parse("{\"status\":{\"replicatedJobsStatus\":["
			   "{\"name\":\"a\",\"active\":2,\"ready\":1},"
			   "{\"name\":\"b\",\"succeeded\":1}]}}");
	json_t *idle = parse("{\"status\":{\"succeeded\":1,\"ready\":0}}");
	const struct rec_mk_adapter *aj =
	    rec_mk_adapter_of(rec_fw_by_name("batch/job"));
	const struct rec_mk_adapter *ajs =
	    rec_mk_adapter_of(rec_fw_by_name("jobset.x-k8s.io/jobset"));
	json_t *p = rec_mk_job_inactive_patch(aj, job), *st, *rjs;

	cr_assert_not_null(p);
	st = json_object_get(p, "status");
	cr_expect(json_is_null(json_object_get(st, "active")));
	cr_expect_eq(json_integer_value(json_object_get(st, "ready")), 0);
	cr_expect_null(json_object_get(st, "startTime"));
	json_decref(p);
	p = rec_mk_job_inactive_patch(ajs, js);
	cr_assert_not_null(p);
	rjs = json_object_get(
	    json_object_get(p, "status"), "replicatedJobsStatus");
	cr_assert_eq(json_array_size(rjs), 2);
	cr_expect_eq(json_integer_value(
			 json_object_get(json_array_get(rjs, 0), "active")),
	    0);
	cr_expect_str_eq(api_json_str(json_array_get(rjs, 0), "name"), "a");
	cr_expect_eq(json_integer_value(
			 json_object_get(json_array_get(rjs, 1), "succeeded")),
	    1);
	cr_expect_null(json_object_get(json_object_get(p, "status"), "active"));
	json_decref(p);
	cr_expect_null(rec_mk_job_inactive_patch(aj, idle));
	json_decref(job);
	json_decref(js);
	json_decref(idle);
}

/* workerLostTimeout in these tests: 15 minutes, Kueue's default. */
#define LIMIT (15LL * 60 * 1000000000LL)

Test(mk_decide, finish_waits_for_the_job_status)
{
	json_t *wl = local_wl(true, false, "Ready", "w1");
	json_t *patch = json_object();

	const struct rec_fw *fw = rec_fw_by_name("batch/job");
	json_t *done = json_pack("{s:{s:[{s:s, s:s}]}}", "status", "conditions",
	    "type", "Complete", "status", "True");
	json_t *running = json_pack("{s:{s:i}}", "status", "active", 1);

	cr_assert_not_null(fw);
	cr_expect(rec_mk_finish_waits(wl, fw, done, true, NULL, 0, LIMIT),
	    "its job not yet unsuspended: wait");
	cr_expect(rec_mk_finish_waits(wl, fw, done, false, patch, 0, LIMIT),
	    "the worker's status not yet copied: wait");
	cr_expect(!rec_mk_finish_waits(wl, fw, done, false, NULL, 0, LIMIT),
	    "synced: finish");
	/* The worker's Workload is seen Finished before its job's last
	 * status (two watches): the manager's job equals the worker's
	 * running one, yet the final status is still to come. */
	cr_expect(rec_mk_finish_waits(wl, fw, running, false, NULL, 0, LIMIT),
	    "the worker's job not yet seen finished: wait");
	/* Its job's watch can lag its Workload's by seconds under load (a
	 * 300-Job mk_bench run finished 2 manager Workloads that way, their
	 * Jobs left without the worker's status): a job not seen yet is
	 * waited for too. */
	cr_expect(rec_mk_finish_waits(wl, fw, NULL, false, NULL, 0, LIMIT),
	    "the worker's job not seen yet: wait");
	cr_expect(!rec_mk_finish_waits(wl, fw, NULL, false, NULL, LIMIT, LIMIT),
	    "the worker's job never seen, at workerLostTimeout: finish");
	json_array_append_new(
	    json_object_get(json_object_get(wl, "status"), "conditions"),
	    json_pack("{s:s, s:s}", "type", "Evicted", "status", "True"));
	cr_expect(!rec_mk_finish_waits(wl, fw, running, true, patch, 0, LIMIT),
	    "evicted: finish");
	json_decref(running);
	json_decref(done);
	json_decref(patch);
	json_decref(wl);
}

/* The wait for the worker's job has a bound, workerLostTimeout: a
 * worker Workload finished while its job never finishes (finished on
 * the worker, its job left running), or a manager job never started,
 * would otherwise hold the manager's Workload and its quota for ever. */
Test(mk_decide, finish_waits_no_longer_than_worker_lost_timeout)
{
	json_t *wl = local_wl(true, false, "Ready", "w1");
	json_t *patch = json_object();
	const struct rec_fw *fw = rec_fw_by_name("batch/job");
	json_t *running = json_pack("{s:{s:i}}", "status", "active", 1);

	cr_assert_not_null(fw);
	cr_expect(
	    rec_mk_finish_waits(wl, fw, running, false, NULL, LIMIT - 1, LIMIT),
	    "the worker's job still running, within the bound: wait");
	cr_expect(
	    !rec_mk_finish_waits(wl, fw, running, false, NULL, LIMIT, LIMIT),
	    "still running at workerLostTimeout: finish");
	cr_expect(!rec_mk_finish_waits(
		      wl, fw, running, true, patch, LIMIT + 1, LIMIT),
	    "the manager's job never started: finish after the bound too");
	cr_expect(!rec_mk_finish_waits(wl, fw, running, false, patch, 0, 0),
	    "workerLostTimeout 0: no wait");
	json_decref(running);
	json_decref(patch);
	json_decref(wl);
}

/* The owner's framework decides the rejection: no adapter (Kueue: no
 * chance to run), or its managedBy not handed over, named as the kind's
 * adapter names it; a managed owner with an adapter is dispatched. */
Test(mk_decide, rejected_by_the_owners_adapter)
{
	static const struct {
		const char *no_adapter, *field, *by;
		bool managed;
		const char *message; /* NULL: not rejected */
	} rej[] = {
	    {"sparkoperator.k8s.io/v1beta2, Kind=SparkApplication", NULL, NULL,
		true,
		"No multikueue adapter found for owner kind "
		"\"sparkoperator.k8s.io/v1beta2, Kind=SparkApplication\""},
	    {NULL, "spec.runPolicy.managedBy", "kubeflow.org/mpi-operator",
		false,
		"The owner is not managed by Kueue: Expecting "
		"spec.runPolicy.managedBy to be \"kueue.x-k8s.io/multikueue\" "
		"not \"kubeflow.org/mpi-operator\""},
	    {NULL, "spec.managedBy", NULL, false,
		"The owner is not managed by Kueue: Expecting spec.managedBy "
		"to be \"kueue.x-k8s.io/multikueue\" not \"\""},
	    {NULL, "spec.managedBy", "kueue.x-k8s.io/multikueue", true, NULL},
	};
	size_t r;

	for (r = 0; r < sizeof(rej) / sizeof(rej[0]); r++) {
		json_t *local = local_wl(true, false, "Pending", NULL);
		struct rec_mk_remote rem[1] = {{"w1", true, NULL, false}};
		struct rec_mk_in in;
		struct rec_mk_plan p;

		memset(&in, 0, sizeof(in));
		in.local = local;
		in.check = "mk";
		in.job_managed = rej[r].managed;
		in.job_managed_by = rej[r].by;
		in.managed_by_field = rej[r].field;
		in.no_adapter = rej[r].no_adapter;
		in.remotes = rem;
		in.n = 1;
		in.now_ns = 10 * S_NS;
		in.worker_lost_ns = 5 * S_NS;
		rec_mk_decide(&in, &p);
		if (rej[r].message == NULL) {
			cr_expect_eq(p.step, REC_MK_DISPATCH, "row %zu", r);
			cr_expect(p.create[0], "row %zu", r);
		} else {
			cr_expect_eq(p.step, REC_MK_REJECT, "row %zu", r);
			cr_assert_not_null(p.message, "row %zu", r);
			cr_expect_str_eq(p.message, rej[r].message);
			cr_expect_str_eq(p.state, "Rejected");
		}
		rec_mk_plan_dispose(&p);
		json_decref(local);
	}
}
