/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/reconcile_fw_trainjob_test.c - the TrainJob shape of the
 * framework descriptors (reconcile/fw_trainjob.c, docs/frameworks.md):
 * pod sets of the JobSet rendered from the referenced training runtime,
 * state from the conditions and jobsStatus, start writing the admission
 * into Kueue's runtime patch and stop clearing it.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "api/json.h"
#include "tests/unit/fixtures.h"

#define FW "trainer.kubeflow.org/trainjob"
#define META                                                                   \
	"\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":"           \
	"\"TrainJob\",\"metadata\":{\"name\":\"tj\",\"namespace\":\"ns\","     \
	"\"uid\":\"u-1\",\"resourceVersion\":\"7\",\"labels\":{"               \
	"\"kueue.x-k8s.io/queue-name\":\"lq\"}}"

/* The runtime: an initializer (1 pod, 500m) and the trainer step "node"
 * (mlPolicy.numNodes 1, 1 cpu). */
#define RUNTIME                                                                \
	"{\"metadata\":{\"name\":\"torch\"},\"spec\":{\"mlPolicy\":{"          \
	"\"numNodes\":1},\"template\":{\"spec\":{\"replicatedJobs\":["         \
	"{\"name\":\"init\",\"template\":{\"spec\":{\"template\":{\"spec\":{"  \
	"\"containers\":[{\"name\":\"i\",\"resources\":{\"requests\":{"        \
	"\"cpu\":\"500m\"}}}]}}}}},"                                           \
	"{\"name\":\"node\",\"template\":{\"metadata\":{\"labels\":{"          \
	"\"trainer.kubeflow.org/trainjob-ancestor-step\":\"trainer\"}},"       \
	"\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"n\","   \
	"\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}}}}]}}}}"

static json_t *runtime;

static const json_t *lookup(const char *group, const char *plural,
    const char *ns, const char *name, void *payload)
{
	(void)payload;
	cr_assert_str_eq(group, "trainer.kubeflow.org");
	if (strcmp(name, "torch") != 0)
		return NULL;
	/* a ClusterTrainingRuntime unless the reference says otherwise */
	if (strcmp(plural, "clustertrainingruntimes") == 0)
		cr_assert_null(ns);
	else
		cr_assert_str_eq(ns, "ns");
	return runtime;
}

static void setup(void)
{
	runtime = fx_parse(RUNTIME);
	rec_fw_set_lookup(lookup, NULL);
}

static void teardown(void)
{
	rec_fw_set_lookup(NULL, NULL);
	json_decref(runtime);
}

TestSuite(fw_trainjob, .init = setup, .fini = teardown);

/* ---- pod sets ---------------------------------------------------------- */

struct ps_row {
	const char *spec;
	const char *want; /* "name:count:cpu-milli:memory,..."; NULL:
			   * CU_ENOTFOUND */
};

static const struct ps_row ps_rows[] = {
    /* the runtime's numNodes */
    {"{\"runtimeRef\":{\"name\":\"torch\"}}", "init:1:500:0,node:1:1000:0"},
    /* the TrainJob's numNodes and resourcesPerNode */
    {"{\"runtimeRef\":{\"name\":\"torch\"},\"trainer\":{\"numNodes\":3,"
     "\"resourcesPerNode\":{\"requests\":{\"cpu\":\"2\"}}}}",
	"init:1:500:0,node:3:2000:0"},
    {"{\"runtimeRef\":{\"name\":\"torch\",\"kind\":\"TrainingRuntime\"},"
     "\"trainer\":{\"numNodes\":2}}",
	"init:1:500:0,node:2:1000:0"},
    /* an unknown runtime: no pod sets yet */
    {"{\"runtimeRef\":{\"name\":\"other\"}}", NULL},
};

Test(fw_trainjob, podsets)
{
	size_t r;

	for (r = 0; r < sizeof(ps_rows) / sizeof(ps_rows[0]); r++) {
		char text[2048], got[512];
		int rc;

		snprintf(text, sizeof(text), "{" META ",\"spec\":%s}",
		    ps_rows[r].spec);
		rc = fx_docjob_podsets(FW, text, got, sizeof(got));
		cr_assert_eq(
		    rc, ps_rows[r].want ? CU_OK : CU_ENOTFOUND, "%s", text);
		if (ps_rows[r].want != NULL)
			cr_assert_str_eq(got, ps_rows[r].want, "%s", text);
	}
}

/* ---- state ------------------------------------------------------------- */

struct st_row {
	const char *rest; /* after metadata: spec and status */
	struct fx_state want;
};

#define REF "\"runtimeRef\":{\"name\":\"torch\"}"

static const struct st_row st_rows[] = {
    {"\"spec\":{\"suspend\":true," REF "},\"status\":{}",
	{true, false, false, false, false, NULL}},
    {"\"spec\":{" REF "},\"status\":{\"jobsStatus\":[{\"name\":\"init\","
     "\"active\":1,\"ready\":1},{\"name\":\"node\",\"active\":1,"
     "\"ready\":0}]}",
	{false, false, false, true, false, NULL}},
    {"\"spec\":{" REF "},\"status\":{\"jobsStatus\":[{\"name\":\"init\","
     "\"succeeded\":1},{\"name\":\"node\",\"active\":1,\"ready\":1}]}",
	{false, false, false, true, true, NULL}},
    {"\"spec\":{" REF "},\"status\":{\"conditions\":[{\"type\":"
     "\"Complete\",\"status\":\"True\",\"message\":\"done\"}]}",
	{false, true, true, false, false, "done"}},
    {"\"spec\":{" REF "},\"status\":{\"conditions\":[{\"type\":\"Failed\","
     "\"status\":\"True\",\"message\":\"boom\"}]}",
	{false, true, false, false, false, "boom"}},
};

Test(fw_trainjob, state)
{
	size_t r;

	for (r = 0; r < sizeof(st_rows) / sizeof(st_rows[0]); r++) {
		char text[2048];

		snprintf(text, sizeof(text), "{" META ",%s}", st_rows[r].rest);
		fx_docjob_check_state(FW, text, &st_rows[r].want);
	}
}

/* ---- start and stop ---------------------------------------------------- */

/* o at the path of keys (NULL-terminated), or NULL. */
static json_t *at(const json_t *o, const char *const *keys)
{
	for (; o != NULL && *keys != NULL; keys++)
		o = json_object_get(o, *keys);
	return (json_t *)o;
}

/* Kueue's runtime patch's pod template spec for replicated job `name`
 * in doc, or NULL. */
static const json_t *patched(const json_t *doc, const char *name)
{
	static const char *const rjs_path[] = {
	    "trainingRuntimeSpec", "template", "spec", "replicatedJobs", NULL};
	static const char *const tpl_path[] = {
	    "template", "spec", "template", "spec", NULL};
	json_t *p, *rj;
	size_t i, j;

	json_array_foreach(
	    json_object_get(json_object_get(doc, "spec"), "runtimePatches"), i,
	    p)
	{
		if (strcmp(api_json_str(p, "manager"),
			"kueue.x-k8s.io/manager") != 0)
			continue;
		json_array_foreach(at(p, rjs_path), j, rj)
		{
			if (strcmp(api_json_str(rj, "name"), name) == 0)
				return at(rj, tpl_path);
		}
	}
	return NULL;
}

Test(fw_trainjob, start_writes_kueue_patch_then_stop_clears_it)
{
	json_t *stopped,
	    *after = fx_docjob_start_stop(FW,
		"{" META ",\"spec\":{\"suspend\":true," REF
		",\"trainer\":{\"numNodes\":2},\"runtimePatches\":[{"
		"\"manager\":\"example.com/user\"}]}}",
		FX_SPOT_FLAVOR,
		"{\"clusterQueue\":\"cq\",\"podSetAssignments\":[" FX_ASSIGN(
		    "init", 1) "," FX_ASSIGN("node", 2) "]}",
		&stopped);
	const json_t *node = patched(after, "node");

	cr_assert(json_is_false(
	    json_object_get(json_object_get(after, "spec"), "suspend")));
	cr_assert_not_null(node);
	cr_assert_str_eq(
	    api_json_str(json_object_get(node, "nodeSelector"), "pool"),
	    "spot");
	cr_assert_eq(json_array_size(json_object_get(node, "tolerations")), 1);
	cr_assert_not_null(patched(after, "init"));
	cr_assert_eq(json_array_size(json_object_get(
			 json_object_get(after, "spec"), "runtimePatches")),
	    2, "the user's patch kept, Kueue's added");

	cr_assert(json_is_true(
	    json_object_get(json_object_get(stopped, "spec"), "suspend")));
	cr_assert_null(patched(stopped, "node"));
	cr_assert_null(patched(stopped, "init"));
	json_decref(after);
	json_decref(stopped);
}

/* Which runtime events are news for a TrainJob: the one its runtimeRef
 * names, of that kind (ClusterTrainingRuntime unless it says otherwise)
 * and, for a TrainingRuntime, of its own namespace. */
Test(fw_trainjob, uses_runtime)
{
	json_t *dflt = fx_parse("{" META ",\"spec\":{\"runtimeRef\":{"
				"\"name\":\"torch\"}}}");
	json_t *ns = fx_parse("{" META ",\"spec\":{\"runtimeRef\":{"
			      "\"name\":\"torch\",\"kind\":"
			      "\"TrainingRuntime\"}}}");
	json_t *none = fx_parse("{" META ",\"spec\":{}}");

	cr_assert(rec_trainjob_uses_runtime(dflt, true, NULL, "torch"));
	cr_assert_not(rec_trainjob_uses_runtime(dflt, true, NULL, "jax"));
	cr_assert_not(rec_trainjob_uses_runtime(dflt, false, "ns", "torch"),
	    "a TrainingRuntime of the same name is another runtime");
	cr_assert(rec_trainjob_uses_runtime(ns, false, "ns", "torch"));
	cr_assert_not(rec_trainjob_uses_runtime(ns, false, "other", "torch"),
	    "a TrainingRuntime of another namespace");
	cr_assert_not(rec_trainjob_uses_runtime(ns, true, NULL, "torch"));
	cr_assert_not(rec_trainjob_uses_runtime(ns, false, NULL, "torch"));
	cr_assert_not(rec_trainjob_uses_runtime(none, true, NULL, "torch"));
	cr_assert_not(rec_trainjob_uses_runtime(dflt, true, NULL, NULL));
	json_decref(dflt);
	json_decref(ns);
	json_decref(none);
}
