/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/api_model_acheck_test.c - the AdmissionCheck codec: Kueue's
 * sample decodes (controllerName, parameters, Active), re-encodes to the
 * same document, and a missing controllerName or parameters.name is
 * refused with the field's path.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "api/model.h"

#define SAMPLE                                                                 \
	"{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"                 \
	"\"AdmissionCheck\",\"metadata\":{\"name\":\"prov-test\"},"            \
	"\"spec\":{\"controllerName\":\"ProvisioningRequestController\","      \
	"\"parameters\":{\"apiGroup\":\"kueue.x-k8s.io\",\"kind\":"            \
	"\"ProvisioningRequestConfig\",\"name\":\"prov-test-config\"}},"       \
	"\"status\":{\"conditions\":[{\"type\":\"Active\",\"status\":"         \
	"\"True\",\"reason\":\"Active\",\"message\":\"ok\","                   \
	"\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}]}}"

static json_t *parse(const char *s)
{
	json_t *j = json_loads(s, 0, NULL);

	cr_assert_not_null(j);
	return j;
}

Test(api_model_acheck, sample_round_trip)
{
	struct api_admission_check ac;
	json_t *j = parse(SAMPLE), *out = NULL;
	cu_error err;

	cr_assert_eq(
	    api_admission_check_decode(&ac, j, &err), CU_OK, "%s", err.msg);
	cr_assert_str_eq(ac.meta.name, "prov-test");
	cr_assert_str_eq(
	    ac.spec.controller_name, "ProvisioningRequestController");
	cr_assert(ac.spec.has_parameters);
	cr_assert_str_eq(ac.spec.parameters.kind, "ProvisioningRequestConfig");
	cr_assert_str_eq(ac.spec.parameters.name, "prov-test-config");
	cr_assert(api_conditions_true(&ac.status.conditions, "Active"));
	cr_assert_eq(api_admission_check_encode(&out, &ac, &err), CU_OK);
	cr_assert(json_equal(out, j));
	json_decref(out);
	api_admission_check_dispose(&ac);
	json_decref(j);
}

Test(api_model_acheck, required_fields)
{
	static const char *const bad[][2] = {
	    {"{\"kind\":\"AdmissionCheck\",\"metadata\":{\"name\":\"a\"},"
	     "\"spec\":{}}",
		"spec.controllerName: Required value"},
	    {"{\"kind\":\"AdmissionCheck\",\"metadata\":{\"name\":\"a\"},"
	     "\"spec\":{\"controllerName\":\"c\",\"parameters\":{"
	     "\"apiGroup\":\"g\",\"kind\":\"K\"}}}",
		"spec.parameters.name: Required value"},
	    {"{\"kind\":\"AdmissionCheck\",\"metadata\":{\"name\":\"a\"}}",
		"spec: Required value"},
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct api_admission_check ac;
		json_t *j = parse(bad[i][0]);
		cu_error err;

		cr_assert_neq(api_admission_check_decode(&ac, j, &err), CU_OK,
		    "%s", bad[i][0]);
		cr_expect(strstr(err.msg, bad[i][1]) != NULL, "%s: %s",
		    bad[i][1], err.msg);
		json_decref(j);
	}
}
