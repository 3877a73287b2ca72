/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/reconcile_dra_test.c - rec_dra_evaluate, Kueue's DRA
 * counting, table-driven: a Workload's podSet claims (templates, direct
 * claims) and requests, the templates and DeviceClasses the caches hold,
 * the gates and mappings in; per podSet additions and drops, or Kueue's
 * refusal message, out.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "reconcile/reconcile.h"

static const char *const gpu_classes[] = {
    "gpu.example.com", "accel.example.com"};
static const char *const cnt_classes[] = {"part.example.com"};
static const struct rec_dra_mapping maps[] = {
    {"example.com/gpu", gpu_classes, 2, true, NULL, 0},
    {"gpu.memory", cnt_classes, 1, false, NULL, 0},
};

/* Templates by name (namespace "ns"), as JSON spec.spec. */
static const struct {
	const char *name, *spec;
} templates[] = {
    {"one", "{\"devices\":{\"requests\":[{\"name\":\"g\",\"exactly\":"
	    "{\"deviceClassName\":\"gpu.example.com\"}}]}}"},
    {"three", "{\"devices\":{\"requests\":[{\"name\":\"g\",\"exactly\":"
	      "{\"deviceClassName\":\"gpu.example.com\",\"count\":2}},"
	      "{\"name\":\"h\",\"exactly\":{\"deviceClassName\":"
	      "\"accel.example.com\",\"allocationMode\":\"ExactCount\"}},"
	      "{\"name\":\"a\",\"exactly\":{\"deviceClassName\":"
	      "\"gpu.example.com\",\"adminAccess\":true,\"count\":5}}]}}"},
    {"first", "{\"devices\":{\"requests\":[{\"name\":\"g\","
	      "\"firstAvailable\":[{\"name\":\"x\",\"deviceClassName\":"
	      "\"gpu.example.com\"}]}]}}"},
    {"all", "{\"devices\":{\"requests\":[{\"name\":\"g\",\"exactly\":"
	    "{\"deviceClassName\":\"gpu.example.com\",\"allocationMode\":"
	    "\"All\"}}]}}"},
    {"unmapped", "{\"devices\":{\"requests\":[{\"name\":\"g\",\"exactly\":"
		 "{\"deviceClassName\":\"fpga.example.com\"}}]}}"},
    {"counter", "{\"devices\":{\"requests\":[{\"name\":\"g\",\"exactly\":"
		"{\"deviceClassName\":\"part.example.com\"}}]}}"},
};

static json_t *cached[sizeof(templates) / sizeof(templates[0])];

static json_t *claim_template(void *payload, const char *ns, const char *name)
{
	size_t i;

	(void)payload;
	for (i = 0; i < sizeof(templates) / sizeof(templates[0]); i++)
		if (strcmp(ns, "ns") == 0 &&
		    strcmp(name, templates[i].name) == 0)
			return cached[i];
	return NULL;
}

static const char *extended_class(void *payload, const char *name)
{
	(void)payload;
	if (strcmp(name, "example.com/accel") == 0)
		return "accel.example.com";
	if (strcmp(name, "example.com/gpu") == 0)
		return "gpu.example.com";
	return NULL;
}

struct row {
	const char *name;
	bool enabled, reject;
	const char *claims; /* JSON array of the podSet's resourceClaims */
	struct que_request req[2];
	/* want: added "example.com/gpu" milli (-1: nothing added), dropped
	 * name or NULL, refusal substring or NULL, retry */
	int64_t gpu;
	const char *drop;
	const char *refused;
	bool retry;
	bool uses;
};

static const struct row rows[] = {
    {"no claims: nothing", true, true, "[]", {{"cpu", 1000}}, -1, NULL, NULL,
	false, false},
    {"a template of one device", true, true,
	"[{\"name\":\"c\",\"resourceClaimTemplateName\":\"one\"}]",
	{{"cpu", 1000}}, 1000, NULL, NULL, false, true},
    {"counts summed per mapping; admin access counts 0", true, true,
	"[{\"name\":\"c\",\"resourceClaimTemplateName\":\"three\"}]",
	{{"cpu", 1000}}, 3000, NULL, NULL, false, true},
    {"firstAvailable refused", true, true,
	"[{\"name\":\"c\",\"resourceClaimTemplateName\":\"first\"}]",
	{{"cpu", 1000}}, -1, NULL,
	"spec.podSets[0].template.spec.resourceClaims[0].devices.requests[0]"
	": Invalid value: null: ResourceClaimTemplate first: FirstAvailable "
	"device selection is not supported",
	false, true},
    {"allocationMode All refused", true, true,
	"[{\"name\":\"c\",\"resourceClaimTemplateName\":\"all\"}]",
	{{"cpu", 1000}}, -1, NULL, "AllocationMode 'All' is not supported",
	false, true},
    {"an unmapped class refused", true, true,
	"[{\"name\":\"c\",\"resourceClaimTemplateName\":\"unmapped\"}]",
	{{"cpu", 1000}}, -1, NULL,
	"resourceClaimTemplateName: Not found: \"DeviceClass "
	"fpga.example.com is not mapped in DRA configuration for podset "
	"main\"",
	false, true},
    {"capacity sources not counted yet: refused", true, true,
	"[{\"name\":\"c\",\"resourceClaimTemplateName\":\"counter\"}]",
	{{"cpu", 1000}}, -1, NULL, "mapped with capacity sources", false, true},
    {"a missing template: refused until it exists", true, true,
	"[{\"name\":\"c\",\"resourceClaimTemplateName\":\"nope\"}]",
	{{"cpu", 1000}}, -1, NULL,
	"resourceclaimtemplates.resource.k8s.io \"nope\" not found", true,
	true},
    {"a direct claim refused", true, true,
	"[{\"name\":\"c\",\"resourceClaimName\":\"shared\"}]", {{"cpu", 1000}},
	-1, NULL,
	"KueueDRAIntegration feature does not support use of resource claims",
	false, true},
    {"DRA off, rejection on: refused", false, true,
	"[{\"name\":\"c\",\"resourceClaimTemplateName\":\"one\"}]",
	{{"cpu", 1000}}, -1, NULL,
	"Workload uses DRA resources but the KueueDRAIntegration feature "
	"gate is not enabled",
	false, true},
    {"DRA off, rejection off: claims ignored", false, false,
	"[{\"name\":\"c\",\"resourceClaimTemplateName\":\"one\"}]",
	{{"cpu", 1000}}, -1, NULL, NULL, false, false},
    {"a DRA-backed extended resource renamed to its mapping", true, true, "[]",
	{{"cpu", 1000}, {"example.com/accel", 2000}}, 2000, "example.com/accel",
	NULL, false, true},
    {"an extended resource named as its mapping stays", true, true, "[]",
	{{"example.com/gpu", 1000}}, -1, NULL, NULL, false, true},
    {"a fractional extended resource refused", true, true, "[]",
	{{"example.com/accel", 1500}}, -1, NULL,
	"extended resource quantity must be an integer", false, true},
};

static void check_row(const struct row *r)
{
	struct rec_dra_config cfg = {r->enabled, true, r->reject, maps, 2};
	struct rec_dra_lookup lk = {
	    claim_template, extended_class, NULL, NULL, NULL};
	char wlj[2048];
	json_t *j;
	struct api_workload wl;
	struct rec_dra_result out;
	const struct que_request *reqs[1];
	size_t nreq = r->req[1].resource != NULL ? 2 : 1, k;
	cu_error err;

	snprintf(wlj, sizeof(wlj),
	    "{\"metadata\":{\"name\":\"w\",\"namespace\":\"ns\",\"uid\":"
	    "\"u\"},\"spec\":{\"podSets\":[{\"name\":\"main\",\"count\":1,"
	    "\"template\":{\"spec\":{\"resourceClaims\":%s,\"containers\":"
	    "[]}}}]}}",
	    r->claims);
	j = json_loads(wlj, 0, NULL);
	cr_assert_not_null(j, "%s", r->name);
	cr_assert_eq(api_workload_decode(&wl, j, &err), CU_OK, "%s: %s",
	    r->name, err.msg);
	reqs[0] = r->req;
	cr_assert_eq(
	    rec_dra_evaluate(&cfg, &lk, &wl, reqs, &nreq, &out, &err), CU_OK);
	cr_assert_eq(out.uses_dra, r->uses, "%s: uses_dra", r->name);
	if (r->refused != NULL) {
		cr_assert_not_null(out.refused, "%s: not refused", r->name);
		cr_assert(strstr(out.refused, r->refused) != NULL,
		    "%s: got \"%s\"", r->name, out.refused);
		cr_assert_eq(out.retry, r->retry, "%s: retry", r->name);
	} else {
		cr_assert_null(
		    out.refused, "%s: refused: %s", r->name, out.refused);
		if (r->gpu < 0) {
			cr_assert(out.n == 0 || out.podsets[0].n_add == 0,
			    "%s: added", r->name);
		} else {
			cr_assert_eq(out.podsets[0].n_add, 1, "%s", r->name);
			cr_assert_str_eq(
			    out.podsets[0].add[0].resource, "example.com/gpu");
			cr_assert_eq(out.podsets[0].add[0].per_pod, r->gpu,
			    "%s: %lld", r->name,
			    (long long)out.podsets[0].add[0].per_pod);
		}
		k = out.n > 0 ? out.podsets[0].n_drop : 0;
		cr_assert_eq(
		    k, r->drop != NULL ? 1u : 0u, "%s: drops", r->name);
		if (r->drop != NULL)
			cr_assert_str_eq(out.podsets[0].drop[0], r->drop);
	}
	rec_dra_result_dispose(&out);
	api_workload_dispose(&wl);
	json_decref(j);
}

Test(dra, table)
{
	size_t i;

	for (i = 0; i < sizeof(templates) / sizeof(templates[0]); i++) {
		cached[i] = json_pack("{s:{s:o}}", "spec", "spec",
		    json_loads(templates[i].spec, 0, NULL));
		cr_assert_not_null(cached[i]);
	}
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		check_row(&rows[i]);
	for (i = 0; i < sizeof(templates) / sizeof(templates[0]); i++)
		json_decref(cached[i]);
}
