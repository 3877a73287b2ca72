/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/reconcile_badreq_test.c - rec_wl_requests_valid: Kueue's
 * Workload validation of requests and limits (a negative one, of a
 * container, an init container or the pod, in any pod set, is refused
 * with its field path; zero, large and non-quantity values are not this
 * check's business).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "reconcile/reconcile.h"

static int validate(const char *json, cu_error *err)
{
	json_t *wl = json_loads(json, 0, NULL);
	int rc;

	cr_assert_not_null(wl, "%s", json);
	cu_error_clear(err);
	rc = rec_wl_requests_valid(wl, err);
	json_decref(wl);
	return rc;
}

#define PS(spec)                                                               \
	"{\"name\":\"main\",\"count\":1,\"template\":{\"spec\":" spec "}}"
#define WL(ps) "{\"spec\":{\"podSets\":[" ps "]}}"

Test(reconcile_badreq, negative_requests_named)
{
	cu_error err;

	cr_assert_eq(
	    validate(WL(PS("{\"containers\":[{\"name\":\"c\"}]}") "," PS(
			 "{\"containers\":[{\"name\":\"c\",\"resources\":"
			 "{\"requests\":{\"cpu\":\"-3\"}}}]}")),
		&err),
	    CU_EINVAL);
	cr_expect_str_eq(err.msg,
	    "spec.podSets[1].template.spec.containers[0].resources."
	    "requests[cpu]: Invalid value: \"-3\": must be greater than or "
	    "equal to 0");
	cr_assert_eq(validate(WL(PS("{\"initContainers\":[{\"resources\":"
				    "{\"limits\":{\"memory\":\"-0.5Ki\"}}}]}")),
			 &err),
	    CU_EINVAL);
	cr_expect_str_eq(err.msg,
	    "spec.podSets[0].template.spec.initContainers[0].resources."
	    "limits[memory]: Invalid value: \"-512\": must be greater than or "
	    "equal to 0");
	cr_assert_eq(validate(WL(PS("{\"resources\":{\"requests\":"
				    "{\"cpu\":\"-1e1000\"}}}")),
			 &err),
	    CU_EINVAL);
	cr_expect_str_eq(err.msg,
	    "spec.podSets[0].template.spec.resources.requests[cpu]: Invalid "
	    "value: \"-1e1000\": must be greater than or equal to 0");
}

Test(reconcile_badreq, others_pass)
{
	cu_error err;

	cr_expect_eq(validate(WL(PS("{\"containers\":[{\"resources\":{"
				    "\"requests\":{\"cpu\":\"0\",\"memory\":"
				    "\"8Ei\",\"x\":\"-0\"},\"limits\":{\"cpu\":"
				    "\"1e1000\",\"y\":\"abc\"}}}]}")),
			 &err),
	    CU_OK, "%s", err.msg);
	cr_expect_eq(validate("{}", &err), CU_OK);
	cr_expect_eq(validate(WL(PS("null")), &err), CU_OK);
}
