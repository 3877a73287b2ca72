/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/reconcile_fw_spark_test.c - the SparkApplication shape of
 * the framework descriptors (reconcile/fw_spark.c, docs/frameworks.md):
 * driver and executor pod sets built from the roles' fields, state from
 * applicationState, start writing the admission into the roles' fields
 * and stop putting back the Workload's.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "api/json.h"
#include "tests/unit/fixtures.h"

#define FW "sparkoperator.k8s.io/sparkapplication"
#define META                                                                   \
	"\"apiVersion\":\"sparkoperator.k8s.io/v1beta2\",\"kind\":"            \
	"\"SparkApplication\",\"metadata\":{\"name\":\"pi\",\"namespace\":"    \
	"\"ns\",\"uid\":\"u-1\",\"resourceVersion\":\"7\",\"labels\":{"        \
	"\"kueue.x-k8s.io/queue-name\":\"lq\"}}"

/* ---- pod sets ---------------------------------------------------------- */

struct ps_row {
	const char *spec;
	const char *want; /* "name:count:cpu-milli:memory,..." */
};

static const struct ps_row ps_rows[] = {
    {"{\"driver\":{\"coreRequest\":\"1\",\"memory\":\"512m\"},"
     "\"executor\":{\"instances\":2,\"coreRequest\":\"500m\",\"memory\":"
     "\"1g\"}}",
	"driver:1:1000:536870912,executor:2:500:1073741824"},
    /* cores when there is no coreRequest; no instances: 0 executors */
    {"{\"driver\":{\"cores\":2},\"executor\":{\"cores\":1}}",
	"driver:1:2000:0,executor:0:1000:0"},
    {"{\"driver\":{\"coreRequest\":\"1\",\"cores\":4},\"executor\":{"
     "\"instances\":3,\"coreRequest\":\"250m\"}}",
	"driver:1:1000:0,executor:3:250:0"},
};

Test(fw_spark, podsets)
{
	size_t r;

	for (r = 0; r < sizeof(ps_rows) / sizeof(ps_rows[0]); r++) {
		char text[2048], got[512];

		snprintf(text, sizeof(text), "{" META ",\"spec\":%s}",
		    ps_rows[r].spec);
		cr_assert_eq(fx_docjob_podsets(FW, text, got, sizeof(got)),
		    CU_OK, "%s", text);
		cr_assert_str_eq(got, ps_rows[r].want, "%s", text);
	}
}

Test(fw_spark, negative_instances_refused)
{
	struct fx_docjob d;
	struct api_podsets ps;
	cu_error err;

	fx_docjob_load(&d, FW,
	    "{" META ",\"spec\":{\"driver\":{},\"executor\":{\"instances\":"
	    "-1}}}");
	cr_assert_eq(rec_job_podsets(&d.view, &ps, &err), CU_EINVAL);
	cr_assert(
	    strstr(err.msg, "spec.executor.instances") != NULL, "%s", err.msg);
	fx_docjob_dispose(&d);
}

/* ---- state ------------------------------------------------------------- */

struct st_row {
	const char *rest; /* after metadata: spec and status */
	struct fx_state want;
};

#define EXEC2 "\"spec\":{\"executor\":{\"instances\":2}},"

static const struct st_row st_rows[] = {
    {"\"spec\":{\"suspend\":true},\"status\":{\"applicationState\":{"
     "\"state\":\"SUSPENDED\"}}",
	{true, false, false, false, false, NULL}},
    {EXEC2 "\"status\":{\"applicationState\":{\"state\":\"SUBMITTED\"}}",
	{false, false, false, false, false, NULL}},
    {EXEC2 "\"status\":{\"applicationState\":{\"state\":\"RUNNING\"},"
	   "\"executorState\":{\"a\":\"RUNNING\",\"b\":\"PENDING\"}}",
	{false, false, false, true, false, NULL}},
    {EXEC2 "\"status\":{\"applicationState\":{\"state\":\"RUNNING\"},"
	   "\"executorState\":{\"a\":\"RUNNING\",\"b\":\"COMPLETED\"}}",
	{false, false, false, true, true, NULL}},
    {EXEC2 "\"status\":{\"applicationState\":{\"state\":\"COMPLETED\"}}",
	{false, true, true, false, false, ""}},
    {EXEC2 "\"status\":{\"applicationState\":{\"state\":\"FAILED\","
	   "\"errorMessage\":\"driver failed\"}}",
	{false, true, false, false, false, "driver failed"}},
    {EXEC2 "\"status\":{\"applicationState\":{\"state\":"
	   "\"SUBMISSION_FAILED\",\"errorMessage\":\"no image\"}}",
	{false, true, false, false, false, "no image"}},
};

Test(fw_spark, state)
{
	size_t r;

	for (r = 0; r < sizeof(st_rows) / sizeof(st_rows[0]); r++) {
		char text[2048];

		snprintf(text, sizeof(text), "{" META ",%s}", st_rows[r].rest);
		fx_docjob_check_state(FW, text, &st_rows[r].want);
	}
}

/* ---- start and stop ---------------------------------------------------- */

#define ADMISSION                                                              \
	"{\"clusterQueue\":\"cq\",\"podSetAssignments\":[" FX_ASSIGN(          \
	    "driver", 1) "," FX_ASSIGN("executor", 2) "]}"

static const json_t *at(
    const json_t *doc, const char *a, const char *b, const char *c)
{
	const json_t *v = json_object_get(json_object_get(doc, "spec"), a);

	v = b ? json_object_get(v, b) : v;
	return c ? json_object_get(v, c) : v;
}

/* Start then stop of spec [JSON text]: returns the started document,
 * *stopped the stopped one [both owned]. */
static json_t *start_stop(const char *spec, json_t **stopped)
{
	char text[2048];

	snprintf(text, sizeof(text), "{" META ",\"spec\":%s}", spec);
	return fx_docjob_start_stop(
	    FW, text, FX_SPOT_FLAVOR, ADMISSION, stopped);
}

Test(fw_spark, start_writes_roles_then_stop_restores)
{
	json_t *stopped,
	    *after = start_stop(
		"{\"suspend\":true,\"driver\":{\"coreRequest\":\"1\","
		"\"labels\":{\"team\":\"a\"},\"nodeSelector\":{\"disk\":"
		"\"ssd\"}},\"executor\":{\"instances\":2,\"coreRequest\":"
		"\"1\"}}",
		&stopped);

	cr_assert(json_is_false(at(after, "suspend", NULL, NULL)));
	cr_assert_str_eq(
	    api_json_str(at(after, "driver", "nodeSelector", NULL), "pool"),
	    "spot");
	cr_assert_str_eq(
	    api_json_str(at(after, "driver", "nodeSelector", NULL), "disk"),
	    "ssd");
	cr_assert_str_eq(
	    api_json_str(at(after, "executor", "nodeSelector", NULL), "pool"),
	    "spot");
	cr_assert_eq(
	    json_array_size(at(after, "executor", "tolerations", NULL)), 1);
	cr_assert_str_eq(api_json_str(at(after, "executor", "labels", NULL),
			     "kueue.x-k8s.io/podset"),
	    "executor");

	cr_assert(json_is_true(at(stopped, "suspend", NULL, NULL)));
	cr_assert_str_eq(
	    api_json_str(at(stopped, "driver", "nodeSelector", NULL), "disk"),
	    "ssd");
	cr_assert_null(
	    api_json_str(at(stopped, "driver", "nodeSelector", NULL), "pool"));
	cr_assert_null(at(stopped, "executor", "nodeSelector", NULL));
	cr_assert_null(at(stopped, "executor", "tolerations", NULL));
	cr_assert_null(api_json_str(
	    at(stopped, "executor", "labels", NULL), "kueue.x-k8s.io/podset"));
	cr_assert_str_eq(
	    api_json_str(at(stopped, "driver", "labels", NULL), "team"), "a");
	json_decref(after);
	json_decref(stopped);
}

Test(fw_spark, app_node_selector_takes_the_flavor)
{
	json_t *stopped,
	    *after = start_stop(
		"{\"suspend\":true,\"nodeSelector\":{\"zone\":\"z1\"},"
		"\"driver\":{},\"executor\":{\"instances\":2}}",
		&stopped);

	cr_assert_str_eq(
	    api_json_str(at(after, "nodeSelector", NULL, NULL), "pool"),
	    "spot");
	cr_assert_null(at(after, "driver", "nodeSelector", NULL));
	cr_assert_str_eq(
	    api_json_str(at(stopped, "nodeSelector", NULL, NULL), "zone"),
	    "z1");
	cr_assert_null(
	    api_json_str(at(stopped, "nodeSelector", NULL, NULL), "pool"));
	json_decref(after);
	json_decref(stopped);
}
