/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/cli_specs_test.c - cli/specs.c: kueuectl's create flags -
 * quotas merged by flavor and grouped by resources (kueuectl's own
 * examples), labels, taints and tolerations - and the errors that say
 * what to write.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <string.h>

#include "api/json.h"
#include "cli/cli.h"

/* v [borrowed] as compact JSON [owned: cu_free]. */
static char *dump(const json_t *v)
{
	char *s = NULL;

	cr_assert_eq(api_json_dumps(v, JSON_COMPACT, 0, &s, NULL), CU_OK);
	return s;
}

static char *groups(const char *n, const char *b, const char *l)
{
	const char *nv[1] = {n}, *bv[1] = {b}, *lv[1] = {l};
	const char *const *flags[3] = {nv, bv, lv};
	size_t counts[3] = {n != NULL, b != NULL, l != NULL};
	json_t *out = NULL;
	cu_error e;
	char *s;

	cr_assert_eq(
	    cli_resource_groups(flags, counts, &out, &e), CU_OK, "%s", e.msg);
	s = dump(out);
	json_decref(out);
	return s;
}

Test(specs, kueuectl_quota_examples)
{
	char *s = groups("alpha:cpu=9;memory=36Gi", NULL, NULL);

	cr_assert_str_eq(s,
	    "[{\"coveredResources\":[\"cpu\",\"memory\"],\"flavors\":[{"
	    "\"name\":\"alpha\",\"resources\":[{\"nominalQuota\":\"9\","
	    "\"name\":\"cpu\"},{\"nominalQuota\":\"36Gi\",\"name\":"
	    "\"memory\"}]}]}]");
	cu_free(s);
	s = groups("alpha:cpu=9;memory=36Gi;nvidia.com/gpu=10,beta:cpu=18;"
		   "memory=72Gi;nvidia.com/gpu=20",
	    "alpha:cpu=1;memory=1Gi;nvidia.com/gpu=1,beta:cpu=2;memory=2Gi;"
	    "nvidia.com/gpu=2",
	    "alpha:cpu=1;memory=1Gi;nvidia.com/gpu=1");
	cr_assert(
	    strstr(s, "\"flavors\":[{\"name\":\"alpha\"") != NULL, "%s", s);
	cr_assert(strstr(s, "{\"nominalQuota\":\"18\",\"borrowingLimit\":"
			    "\"2\",\"name\":\"cpu\"}") != NULL,
	    "%s", s);
	cr_assert(
	    strstr(s, "{\"nominalQuota\":\"9\",\"borrowingLimit\":"
		      "\"1\",\"lendingLimit\":\"1\",\"name\":\"cpu\"}") != NULL,
	    "%s", s);
	cr_assert_eq(
	    strstr(s, "coveredResources") ==
		strstr(strstr(s, "coveredResources") + 1, "coveredResources"),
	    false);
	cu_free(s);
	/* a flavor only in --borrowing-limit has nominal quota 0 */
	s = groups(NULL, "spot:cpu=4", NULL);
	cr_assert(strstr(s, "\"borrowingLimit\":\"4\",\"name\":\"cpu\","
			    "\"nominalQuota\":\"0\"") != NULL,
	    "%s", s);
	cu_free(s);
	/* two groups */
	s = groups("a:cpu=1,b:nvidia.com/gpu=2;", NULL, NULL);
	cr_assert(
	    strstr(s, "},{\"coveredResources\":[\"nvidia.com/gpu\"]") != NULL,
	    "%s", s);
	cu_free(s);
}

static void bad_groups(const char *n, const char *b, const char *want)
{
	const char *nv[1] = {n}, *bv[1] = {b};
	const char *const *flags[3] = {nv, bv, NULL};
	size_t counts[3] = {n != NULL, b != NULL, 0};
	json_t *out = NULL;
	cu_error e;

	cr_assert_eq(cli_resource_groups(flags, counts, &out, &e), CU_EINVAL);
	cr_assert_null(out);
	cr_assert(strstr(e.msg, want) != NULL, "%s: %s", want, e.msg);
}

Test(specs, quota_errors_say_what_to_write)
{
	bad_groups("alpha", NULL,
	    "--nominal-quota \"alpha\": invalid flavor name: write "
	    "FLAVOR:RESOURCE=QUANTITY");
	bad_groups("Alpha:cpu=1", NULL, "invalid flavor name");
	bad_groups("alpha:cpu", NULL, "invalid resources specification");
	bad_groups("alpha:cpu=lots", NULL, "invalid quantity");
	bad_groups("alpha:cpu=1", "alpha:memory=1Gi",
	    "a flavor must list the same resources");
	bad_groups("alpha:cpu=1;memory=1Gi", "alpha:cpu=1",
	    "a flavor must list the same resources");
	bad_groups("a:cpu=1,b:cpu=1;memory=2", NULL,
	    "resource cpu is already covered");
}

Test(specs, labels_taints_tolerations)
{
	json_t *o = NULL;
	cu_error e;
	char *s;

	cr_assert_eq(
	    cli_key_values("--node-labels",
		"kubernetes.io/arch=arm64,kubernetes.io/os=linux", &o, &e),
	    CU_OK, "%s", e.msg);
	s = dump(o);
	cr_assert_str_eq(s, "{\"kubernetes.io/arch\":\"arm64\","
			    "\"kubernetes.io/os\":\"linux\"}");
	cu_free(s);
	json_decref(o);
	cr_assert_eq(
	    cli_key_values("--node-labels", "novalue", &o, &e), CU_EINVAL);
	cr_assert(strstr(e.msg, "must be formatted as key=value") != NULL);
	cr_assert_eq(cli_taints_or_tolerations(
			 true, "key1=value:NoSchedule,key2:NoExecute", &o, &e),
	    CU_OK, "%s", e.msg);
	s = dump(o);
	cr_assert_str_eq(s, "[{\"key\":\"key1\",\"value\":\"value\","
			    "\"effect\":\"NoSchedule\"},{\"key\":\"key2\","
			    "\"effect\":\"NoExecute\"}]");
	cu_free(s);
	json_decref(o);
	cr_assert_eq(cli_taints_or_tolerations(false,
			 "key1=value:NoSchedule,key2:NoExecute,key3=value,key4,"
			 ":PreferNoSchedule",
			 &o, &e),
	    CU_OK, "%s", e.msg);
	s = dump(o);
	cr_assert_str_eq(s,
	    "[{\"key\":\"key1\",\"operator\":\"Equal\",\"value\":\"value\","
	    "\"effect\":\"NoSchedule\"},{\"key\":\"key2\",\"operator\":"
	    "\"Exists\",\"effect\":\"NoExecute\"},{\"key\":\"key3\","
	    "\"operator\":\"Equal\",\"value\":\"value\"},{\"key\":\"key4\","
	    "\"operator\":\"Exists\"},{\"operator\":\"Exists\",\"effect\":"
	    "\"PreferNoSchedule\"}]");
	cu_free(s);
	json_decref(o);
	cr_assert_eq(
	    cli_taints_or_tolerations(true, "key1=v", &o, &e), CU_EINVAL);
	cr_assert(
	    strstr(e.msg, "write KEY[=VALUE]:EFFECT") != NULL, "%s", e.msg);
	cr_assert_eq(
	    cli_taints_or_tolerations(true, "k:Sometimes", &o, &e), CU_EINVAL);
	cr_assert(strstr(e.msg, "invalid taint effect \"Sometimes\"") != NULL,
	    "%s", e.msg);
	cr_assert_eq(cli_taints_or_tolerations(
			 true, "k:NoSchedule,k=x:NoSchedule", &o, &e),
	    CU_EINVAL);
	cr_assert(strstr(e.msg, "duplicated taints") != NULL, "%s", e.msg);
	cr_assert_eq(cli_taints_or_tolerations(false, "=v", &o, &e), CU_EINVAL);
}
