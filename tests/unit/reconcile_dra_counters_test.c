/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/reconcile_dra_counters_test.c - rec_dra_evaluate with counter
 * sources (Kueue's KueueDRAIntegrationPartitionableDevices): MIG-like
 * partitions of a GPU published in ResourceSlices with consumesCounters;
 * a request charges the largest counter among the devices that the
 * source's, the DeviceClass's and its own CEL selectors match, times its
 * count; incomplete pools and older generations are not looked at; too
 * few devices or none consuming the counter refuse (to be retried);
 * selectors outside the CEL subset, or failing on a device, refuse for
 * good. And Kueue's check of
 * every request's CEL selectors against the cluster's devices, classes
 * counted by device too: fewer matching devices than requested refuse,
 * a device one request matched is not matched again.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "reconcile/reconcile.h"

#define GI (1024LL * 1024 * 1024)

static const char *const classes[] = {"mig.example.com"};
static const char *const whole[] = {"gpu.example.com"};
static const struct rec_dra_counter counters[] = {
    {"memory", "gpu.example.com",
	"device.attributes['gpu.example.com'].productName == 'GPU-80'"},
};
static const struct rec_dra_mapping maps[] = {
    {"gpu.memory", classes, 1, false, counters, 1},
    {"gpu", whole, 1, true, NULL, 0},
};

/* A template of count devices of profile prof, or with selector sel. */
static json_t *tmpl(const char *prof, int count, const char *sel)
{
	char buf[512], cel[160];

	if (sel == NULL) {
		snprintf(cel, sizeof(cel),
		    "device.attributes['gpu.example.com'].profile == '%s'",
		    prof);
		sel = cel;
	}
	snprintf(buf, sizeof(buf),
	    "{\"spec\":{\"spec\":{\"devices\":{\"requests\":[{\"name\":\"g\","
	    "\"exactly\":{\"deviceClassName\":\"mig.example.com\",\"count\":%d,"
	    "\"selectors\":[{\"cel\":{\"expression\":\"%s\"}}]}}]}}}}",
	    count, sel);
	return json_loads(buf, 0, NULL);
}

static json_t *the_template;
static json_t *the_class;
static json_t *the_slices;

static json_t *claim_template(void *payload, const char *ns, const char *name)
{
	(void)payload;
	(void)ns;
	return strcmp(name, "t") == 0 ? the_template : NULL;
}

static json_t *device_class(void *payload, const char *name)
{
	(void)payload;
	return strcmp(name, "mig.example.com") == 0 ||
		       strcmp(name, "gpu.example.com") == 0
		   ? the_class
		   : NULL;
}

static void slices(
    void *payload, void (*visit)(json_t *slice, void *arg), void *arg)
{
	json_t *s;
	size_t i;

	(void)payload;
	json_array_foreach(the_slices, i, s) visit(s, arg);
}

static json_t *dev(const char *name, const char *prof, const char *mem)
{
	return json_pack("{s:s, s:{s:{s:s}, s:{s:s}}, s:{s:{s:s}}, "
			 "s:[{s:s, s:{s:{s:s}}}]}",
	    "name", name, "attributes", "productName", "string", "GPU-80",
	    "profile", "string", prof, "capacity", "memory", "value", mem,
	    "consumesCounters", "counterSet", "gpu-0-counter-set", "counters",
	    "memory", "value", mem);
}

static json_t *slice(const char *pool, int gen, int count, json_t *devs)
{
	return json_pack("{s:{s:s, s:{s:s, s:i, s:i}, s:o}}", "spec", "driver",
	    "gpu.example.com", "pool", "name", pool, "generation", gen,
	    "resourceSliceCount", count, "devices", devs);
}

static void setup(void)
{
	the_class = json_pack("{s:{s:[{s:{s:s}}]}}", "spec", "selectors", "cel",
	    "expression", "device.driver == 'gpu.example.com'");
	/* node-a, complete: a whole GPU, two 1g and one 3g partition */
	the_slices = json_pack(
	    "[o]", slice("node-a", 1, 1,
		       json_pack("[o,o,o,o]", dev("gpu-0", "full", "80Gi"),
			   dev("gpu-0-1g-0", "1g.10gb", "10Gi"),
			   dev("gpu-0-1g-1", "1g.10gb", "10Gi"),
			   dev("gpu-0-3g-0", "3g.40gb", "40Gi"))));
	/* node-b: one slice of two, not looked at */
	json_array_append_new(
	    the_slices, slice("node-b", 1, 2,
			    json_pack("[o]", dev("b-1g", "1g.10gb", "99Gi"))));
	/* node-c: generation 2 replaces generation 1 */
	json_array_append_new(the_slices,
	    slice("node-c", 1, 1,
		json_pack("[o]", dev("c-old-1g", "1g.10gb", "77Gi"))));
	json_array_append_new(
	    the_slices, slice("node-c", 2, 1,
			    json_pack("[o]", dev("c-1g", "1g.10gb", "10Gi"))));
}

static void teardown(void)
{
	json_decref(the_class);
	json_decref(the_slices);
	json_decref(the_template);
	the_template = NULL;
}

/* Evaluate one Workload of one pod with claim template "t". */
static void run(struct rec_dra_result *out)
{
	static const char wlj[] =
	    "{\"metadata\":{\"name\":\"w\",\"namespace\":\"ns\",\"uid\":"
	    "\"u\"},\"spec\":{\"podSets\":[{\"name\":\"main\",\"count\":1,"
	    "\"template\":{\"spec\":{\"resourceClaims\":[{\"name\":\"c\","
	    "\"resourceClaimTemplateName\":\"t\"}],\"containers\":[]}}}]}}";
	struct rec_dra_config cfg = {true, true, true, maps, 2};
	struct rec_dra_lookup lk = {
	    claim_template, NULL, device_class, slices, NULL};
	json_t *j = json_loads(wlj, 0, NULL);
	struct api_workload wl;
	cu_error err;

	cr_assert_eq(api_workload_decode(&wl, j, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(
	    rec_dra_evaluate(&cfg, &lk, &wl, NULL, NULL, out, &err), CU_OK);
	api_workload_dispose(&wl);
	json_decref(j);
}

static void expect_charge_to(const char *resource, int64_t milli)
{
	struct rec_dra_result out;

	run(&out);
	cr_assert_null(out.refused, "refused: %s", out.refused);
	cr_assert_eq(out.podsets[0].n_add, 1);
	cr_expect_str_eq(out.podsets[0].add[0].resource, resource);
	cr_expect_eq(out.podsets[0].add[0].per_pod, milli, "%lld",
	    (long long)out.podsets[0].add[0].per_pod);
	rec_dra_result_dispose(&out);
}

static void expect_charge(int64_t milli)
{
	expect_charge_to("gpu.memory", milli);
}

static void expect_refusal(const char *part, bool retry)
{
	struct rec_dra_result out;

	run(&out);
	cr_assert_not_null(out.refused, "not refused");
	cr_expect(strstr(out.refused, part) != NULL, "%s", out.refused);
	cr_expect_eq(out.retry, retry, "%s", out.refused);
	rec_dra_result_dispose(&out);
}

TestSuite(dra_counters, .init = setup, .fini = teardown);

Test(dra_counters, one_partition_charges_its_counter)
{
	the_template = tmpl("1g.10gb", 1, NULL);
	expect_charge(10 * GI * 1000);
}

Test(dra_counters, count_multiplies_the_largest_matched_counter)
{
	the_template = tmpl("3g.40gb", 1, NULL);
	expect_charge(40 * GI * 1000);
	json_decref(the_template);
	/* three 1g partitions match: node-a's two, node-c's newest one */
	the_template = tmpl("1g.10gb", 3, NULL);
	expect_charge(30 * GI * 1000);
}

Test(dra_counters, too_few_matching_devices_refused_to_be_retried)
{
	the_template = tmpl("1g.10gb", 4, NULL);
	expect_refusal("insufficient matching devices for counter driver: 3 "
		       "device(s) match but 4 requested",
	    true);
}

Test(dra_counters, no_slices_refused_to_be_retried)
{
	json_decref(the_slices);
	the_slices = json_array();
	the_template = tmpl("1g.10gb", 1, NULL);
	/* Kueue's check against the cluster's devices refuses first */
	expect_refusal("insufficient matching devices for CEL selector in "
		       "DeviceClass mig.example.com: 0 device(s) match in the "
		       "cluster but 1 requested",
	    true);
}

Test(dra_counters, a_missing_device_class_refused_to_be_retried)
{
	json_decref(the_class);
	the_class = NULL;
	the_template = tmpl("1g.10gb", 1, NULL);
	expect_refusal("failed to get DeviceClass mig.example.com", true);
}

Test(dra_counters, a_selector_outside_the_subset_refused_naming_it)
{
	the_template = tmpl(NULL, 1, "device.attributes[");
	expect_refusal("CEL compilation failed", false);
}

/* A function outside cueue's subset fails when evaluated; Kueue refuses
 * such a selector for good too (compiled or evaluated: field.Invalid). */
Test(dra_counters, an_unknown_function_refused_naming_it)
{
	the_template = tmpl(NULL, 1, "semver('1.0.0') == device.driver");
	expect_refusal("semver", false);
}

/* Whole devices of class gpu.example.com (mapped by device count): one
 * request per entry of counts, each of profile prof. */
static json_t *whole_tmpl(const char *prof, int c0, int c1)
{
	char sel[160];
	json_t *reqs = json_array();
	int k, c[2] = {c0, c1};

	snprintf(sel, sizeof(sel),
	    "device.attributes['gpu.example.com'].profile == '%s'", prof);
	for (k = 0; k < 2; k++)
		if (c[k] > 0)
			json_array_append_new(reqs,
			    json_pack("{s:s, s:{s:s, s:i, s:[{s:{s:s}}]}}",
				"name", k ? "b" : "a", "exactly",
				"deviceClassName", "gpu.example.com", "count",
				c[k], "selectors", "cel", "expression", sel));
	return json_pack(
	    "{s:{s:{s:{s:o}}}}", "spec", "spec", "devices", "requests", reqs);
}

Test(dra_counters, whole_devices_too_few_matching_refused_as_kueue)
{
	/* one 3g partition in the cluster, two asked */
	the_template = whole_tmpl("3g.40gb", 2, 0);
	expect_refusal(
	    "spec.podSets[0].template.spec.resourceClaims[0].devices."
	    "requests[0].exactly.selectors: Internal error: "
	    "ResourceClaimTemplate t: insufficient matching devices for CEL "
	    "selector in DeviceClass gpu.example.com: 1 device(s) match in "
	    "the cluster but 2 requested",
	    true);
}

/* A selector failing on a device (a missing attribute) is Kueue's
 * field.Invalid: the Workload is Misconfigured with the evaluation error,
 * not retried as a shortage of devices is. */
Test(dra_counters, an_evaluation_error_refused_for_good)
{
	the_template = json_pack("{s:{s:{s:{s:[{s:s, s:{s:s, s:i, "
				 "s:[{s:{s:s}}]}}]}}}}",
	    "spec", "spec", "devices", "requests", "name", "a", "exactly",
	    "deviceClassName", "gpu.example.com", "count", 1, "selectors",
	    "cel", "expression",
	    "device.attributes['gpu.example.com'].nosuch == 'x'");
	expect_refusal(
	    "spec.podSets[0].template.spec.resourceClaims[0].devices."
	    "requests[0].exactly.selectors: Invalid value: null: "
	    "ResourceClaimTemplate t: CEL evaluation failed for DeviceClass "
	    "gpu.example.com: ",
	    false);
}

Test(dra_counters, whole_devices_enough_matching_charged_by_count)
{
	the_template = whole_tmpl("3g.40gb", 1, 0);
	expect_charge_to("gpu", 1000);
	json_decref(the_template);
	/* every slice counts here, complete pool or not: five 1g devices */
	the_template = whole_tmpl("1g.10gb", 5, 0);
	expect_charge_to("gpu", 5000);
}

Test(dra_counters, a_device_matched_by_one_request_is_not_matched_again)
{
	the_template = whole_tmpl("3g.40gb", 1, 1);
	expect_refusal("requests[1].exactly.selectors: Internal error: "
		       "ResourceClaimTemplate t: insufficient matching "
		       "devices for CEL selector in DeviceClass "
		       "gpu.example.com: 0 device(s) match in the cluster but "
		       "1 requested",
	    true);
}
