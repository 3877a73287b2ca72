/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/cel_device_test.c - the cel/ module on DRA device selectors
 * as DeviceClasses, ResourceClaims and Kueue's counter sources write
 * them: device.driver, device.attributes[domain].name,
 * device.capacity[domain].name with Kubernetes quantities (quantity(),
 * compareTo, isGreaterThan, isLessThan, asInteger, isQuantity), `in` on
 * lists; and the constructs outside the subset refused with a message
 * naming them.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "cel/cel.h"

struct dcase {
	const char *expr;
	const char *want; /* JSON of the value, or "error: <substring>" */
};

/* A MIG-like partition of a GPU as the DRA code presents it. */
static json_t *device(void)
{
	json_t *d = json_pack("{s:s, s:{s:{s:s, s:I, s:b}}, s:{s:{}}}",
	    "driver", "gpu.example.com", "attributes", "gpu.example.com",
	    "profile", "1g.10gb", "index", (json_int_t)3, "mig", 1, "capacity",
	    "gpu.example.com");

	json_object_set_new(
	    json_object_get(json_object_get(d, "capacity"), "gpu.example.com"),
	    "memory", cel_quantity(10LL * 1024 * 1024 * 1024 * 1000));
	return d;
}

static const struct dcase cases[] = {
    {"device.driver == 'gpu.example.com'", "true"},
    {"device.driver != \"gpu.example.com\"", "false"},
    {"device.attributes[\"gpu.example.com\"].profile == '1g.10gb'", "true"},
    {"device.attributes['gpu.example.com'].index >= 2 && "
     "device.attributes['gpu.example.com'].index < 4",
	"true"},
    {"device.attributes['gpu.example.com'].mig", "true"},
    {"!(device.attributes['gpu.example.com'].mig) || false", "false"},
    {"device.attributes['gpu.example.com'].profile in ['1g.10gb', "
     "'2g.20gb']",
	"true"},
    {"device.capacity['gpu.example.com'].memory.compareTo("
     "quantity('10Gi')) >= 0",
	"true"},
    {"device.capacity['gpu.example.com'].memory.compareTo("
     "quantity('20Gi'))",
	"-1"},
    {"device.capacity['gpu.example.com'].memory.isGreaterThan("
     "quantity('8Gi'))",
	"true"},
    {"device.capacity['gpu.example.com'].memory.isLessThan("
     "quantity('8Gi'))",
	"false"},
    {"quantity('1500m').asInteger()", "error: fractional"},
    {"quantity('2k').asInteger()", "2000"},
    {"isQuantity('10Gi') && !isQuantity('ten')", "true"},
    {"quantity('ten')", "error: invalid quantity: ten"},
    {"device.capacity['gpu.example.com'].memory >= quantity('1Gi')",
	"error: no such overload"},
    {"device.attributes['gpu.example.com'].profile.isGreaterThan("
     "quantity('1'))",
	"error: 'isGreaterThan' applied to 'string'"},
    {"device.attributes['other.example.com'].profile",
	"error: no such key: other.example.com"},
    {"semver('1.0.0')", "error: 'semver'"},
    {"device.attributes['gpu.example.com'].profile.matches('^1g')",
	"error: pattern outside the supported subset"},
};

Test(cel_device, selectors_of_the_subset_evaluate_as_dra_does)
{
	json_t *dev = device();
	struct cel_var vars[] = {{"device", dev}};
	struct cel_env env = {vars, 1, NULL};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *err = NULL;
		struct cel_expr *cel = cel_parse(cases[i].expr, &err);
		json_t *r;

		cr_assert_not_null(cel, "%s: %s", cases[i].expr, err);
		r = cel_eval(cel, &env, &err);
		if (strncmp(cases[i].want, "error: ", 7) == 0) {
			cr_expect_null(r, "%s: a value", cases[i].expr);
			cr_expect(err != NULL &&
				      strstr(err, cases[i].want + 7) != NULL,
			    "%s: error '%s'", cases[i].expr,
			    err ? err : "(none)");
		} else {
			json_t *want =
			    json_loads(cases[i].want, JSON_DECODE_ANY, NULL);

			cr_expect(r != NULL && json_equal(r, want),
			    "%s: got %s", cases[i].expr,
			    err ? err : "another value");
			json_decref(want);
		}
		json_decref(r);
		cu_free(err);
		cel_free(cel);
	}
	json_decref(dev);
}

Test(cel_device, grammar_outside_the_subset_is_named)
{
	static const char *const bad[] = {
	    "device.driver ==",
	    "device.attributes[",
	    "{'a': 1}",
	    "device.driver == 'a' ;",
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *err = NULL;
		struct cel_expr *cel = cel_parse(bad[i], &err);

		cr_expect_null(cel, "%s parsed", bad[i]);
		cr_expect(
		    err != NULL && err[0] != '\0', "%s: no message", bad[i]);
		cu_free(err);
		cel_free(cel);
	}
}

Test(cel_device, quantity_values_are_recognised_only_as_built)
{
	json_t *q = cel_quantity(1500),
	       *o = json_pack("{s:I,s:i}", "@quantity", (json_int_t)1, "x", 1);
	int64_t m = 0;

	cr_expect(cel_is_quantity(q, &m));
	cr_expect_eq(m, 1500);
	cr_expect_not(cel_is_quantity(o, NULL));
	json_decref(q);
	json_decref(o);
}
