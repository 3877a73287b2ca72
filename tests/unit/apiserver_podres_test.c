/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/apiserver_podres_test.c - cueue-apiserver validates the
 * resources of pod templates as kube-apiserver does (ValidateResource-
 * Requirements: a negative request or limit, of a container, an init
 * container or the pod, is refused with "must be greater than or equal to
 * 0") and, like resource.Quantity, accepts what is merely large: "1e1000"
 * and "8Ei" are valid quantities that reach the controller.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "tests/unit/fixtures.h"

static json_t *job(
    const char *name, const char *where, const char *res, const char *value)
{
	json_t *c = json_pack("{s:s, s:s}", "name", "c", "image", "busybox");
	json_t *spec = json_pack(
	    "{s:s, s:[o]}", "restartPolicy", "Never", "containers", c);
	json_t *list = json_pack("{s:s}", res, value);

	if (strcmp(where, "pod") == 0)
		json_object_set_new(
		    spec, "resources", json_pack("{s:o}", "requests", list));
	else if (strcmp(where, "init") == 0)
		json_object_set_new(spec, "initContainers",
		    json_pack("[{s:s, s:s, s:{s:o}}]", "name", "i", "image",
			"busybox", "resources", "limits", list));
	else
		json_object_set_new(
		    c, "resources", json_pack("{s:o}", "requests", list));
	return json_pack("{s:s, s:s, s:{s:s}, s:{s:b, s:{s:o}}}", "apiVersion",
	    "batch/v1", "kind", "Job", "metadata", "name", name, "spec",
	    "suspend", 1, "template", "spec", spec);
}

static int create(struct fx_result *r, json_t *body)
{
	fx_call(
	    r, "POST", "/apis/batch/v1/namespaces/default/jobs", NULL, body);
	return r->code;
}

/* The Status message after its "<Kind> \"name\" is invalid: ". */
static const char *message(const struct fx_result *r)
{
	const char *m = json_string_value(json_object_get(r->body, "message"));
	const char *p = m ? strstr(m, " is invalid: ") : NULL;

	return p ? p + strlen(" is invalid: ") : m;
}

Test(apiserver_podres, negative_requests_refused, .init = fx_setup,
    .fini = fx_teardown)
{
	struct fx_result r;

	cr_assert_eq(create(&r, job("neg", "container", "cpu", "-3")), 422);
	cr_expect_str_eq(message(&r),
	    "spec.template.spec.containers[0].resources.requests[cpu]: "
	    "Invalid value: \"-3\": must be greater than or equal to 0");
	fx_result_dispose(&r);
	cr_assert_eq(create(&r, job("neg2", "init", "memory", "-0.5Ki")), 422);
	cr_expect_str_eq(message(&r),
	    "spec.template.spec.initContainers[0].resources.limits[memory]: "
	    "Invalid value: \"-512\": must be greater than or equal to 0");
	fx_result_dispose(&r);
	cr_assert_eq(create(&r, job("neg3", "pod", "cpu", "-1e1000")), 422);
	cr_expect_str_eq(message(&r),
	    "spec.template.spec.resources.requests[cpu]: "
	    "Invalid value: \"-1e1000\": must be greater than or equal to 0");
	fx_result_dispose(&r);
}

Test(apiserver_podres, negative_in_pods, .init = fx_setup, .fini = fx_teardown)
{
	struct fx_result r;
	json_t *pod = json_pack("{s:s, s:s, s:{s:s}, s:{s:[{s:s, s:s, "
				"s:{s:{s:s}}}]}}",
	    "apiVersion", "v1", "kind", "Pod", "metadata", "name", "p", "spec",
	    "containers", "name", "c", "image", "busybox", "resources",
	    "requests", "cpu", "-1m");

	fx_call(&r, "POST", "/api/v1/namespaces/default/pods", NULL, pod);
	cr_expect_eq(r.code, 422);
	cr_expect_str_eq(message(&r),
	    "spec.containers[0].resources.requests[cpu]: "
	    "Invalid value: \"-1m\": must be greater than or equal to 0");
	fx_result_dispose(&r);
}

Test(apiserver_podres, large_quantities_accepted, .init = fx_setup,
    .fini = fx_teardown)
{
	struct fx_result r;

	cr_expect_eq(
	    create(&r, job("huge", "container", "cpu", "1e1000")), 201);
	fx_result_dispose(&r);
	cr_expect_eq(create(&r, job("ei", "container", "memory", "8Ei")), 201);
	fx_result_dispose(&r);
	cr_expect_eq(create(&r, job("zero", "container", "cpu", "-0")), 201);
	fx_result_dispose(&r);
}
