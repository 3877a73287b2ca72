/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/controller_config_errors_test.c - every error of a
 * Configuration reported in one run, each with its field path and YAML
 * line: all unknown fields and wrong types of the schema walk; when the
 * types are right, every section's validation errors; the first error
 * with "; and N more errors" in err.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "controller/config.h"

static void load(
    const char *yaml, char ***errs, size_t *n, cu_error *err, int want_rc)
{
	struct ctl_config c;

	cr_assert_eq(ctl_config_load_buffer_all(
			 &c, yaml, strlen(yaml), "cfg.yaml", errs, n, err),
	    want_rc, "%s", err->msg);
}

Test(ctl_config_errors, every_schema_error_with_its_line)
{
	char **errs = NULL;
	size_t n = 0;
	cu_error err;

	load("apiVersion: config.kueue.x-k8s.io/v1beta2\n" /* 1 */
	     "kind: Configuration\n"			   /* 2 */
	     "manageJobsWithoutQueueNme: true\n"	   /* 3 */
	     "webhook:\n"				   /* 4 */
	     "  port: nine\n"				   /* 5 */
	     "leaderElection:\n"			   /* 6 */
	     "  leaderElekt: false\n",			   /* 7 */
	    &errs, &n, &err, CU_EPARSE);
	cr_assert_eq(n, 3, "%zu errors", n);
	cr_assert_str_eq(errs[0],
	    "cfg.yaml: line 3: unknown field \"manageJobsWithoutQueueNme\"");
	cr_assert_str_eq(errs[1], "cfg.yaml: line 5: webhook.port: invalid "
				  "type: expected an integer, got a string");
	cr_assert_str_eq(errs[2],
	    "cfg.yaml: line 7: unknown field \"leaderElection.leaderElekt\"");
	cr_assert_str_eq(err.msg,
	    "cfg.yaml: line 3: unknown field \"manageJobsWithoutQueueNme\"; "
	    "and 2 more errors");
	ctl_config_errors_free(errs, n);
}

Test(ctl_config_errors, every_section_validated)
{
	char **errs = NULL;
	size_t n = 0, i;
	cu_error err;
	static const char *const want[] = {
	    "line 5: webhook.port: Invalid value: 0",
	    "line 7: metrics.bindAddress: Invalid value: \"nowhere\"",
	    "line 9: waitForPodsReady.timeout: Invalid value",
	    "line 10: waitForPodsReady.recoveryTimeout: Invalid value",
	    "line 16: resources.transformations[0].strategy: Unsupported "
	    "value: \"Drop\"",
	    "line 13: objectRetentionPolicies.workloads.afterFinished: "
	    "Invalid value",
	    "line 19: featureGates[NoSuchGate]: unrecognized feature gate",
	};

	load("apiVersion: config.kueue.x-k8s.io/v1beta2\n" /* 1 */
	     "kind: Configuration\n"			   /* 2 */
	     "namespace: kueue-system\n"		   /* 3 */
	     "webhook:\n"				   /* 4 */
	     "  port: 0\n"				   /* 5 */
	     "metrics:\n"				   /* 6 */
	     "  bindAddress: nowhere\n"			   /* 7 */
	     "waitForPodsReady:\n"			   /* 8 */
	     "  timeout: -1s\n"				   /* 9 */
	     "  recoveryTimeout: -2s\n"			   /* 10 */
	     "objectRetentionPolicies:\n"		   /* 11 */
	     "  workloads:\n"				   /* 12 */
	     "    afterFinished: -1h\n"			   /* 13 */
	     "resources:\n"				   /* 14 */
	     "  transformations:\n"			   /* 15 */
	     "  - {input: cpu, strategy: Drop}\n"	   /* 16 */
	     "featureGates:\n"				   /* 17 */
	     "  PartialAdmission: true\n"		   /* 18 */
	     "  NoSuchGate: true\n",			   /* 19 */
	    &errs, &n, &err, CU_EINVAL);
	cr_assert_eq(n, sizeof(want) / sizeof(want[0]), "%zu errors: %s", n,
	    n ? errs[n - 1] : "");
	for (i = 0; i < n; i++)
		cr_assert(strstr(errs[i], want[i]) != NULL, "error %zu: %s", i,
		    errs[i]);
	cr_assert(
	    strstr(err.msg, "; and 6 more errors") != NULL, "%s", err.msg);
	ctl_config_errors_free(errs, n);
}

Test(ctl_config_errors, none_on_success_and_one_for_bad_yaml)
{
	struct ctl_config c;
	char **errs = (char **)1;
	size_t n = 9;
	cu_error err;
	const char *ok = "apiVersion: config.kueue.x-k8s.io/v1beta2\n"
			 "kind: Configuration\n";
	const char *bad = "kind: [\n";

	cr_assert_eq(ctl_config_load_buffer_all(
			 &c, ok, strlen(ok), "cfg.yaml", &errs, &n, &err),
	    CU_OK, "%s", err.msg);
	cr_assert_null(errs);
	cr_assert_eq(n, 0);
	ctl_config_dispose(&c);
	cr_assert_neq(ctl_config_load_buffer_all(
			  &c, bad, strlen(bad), "cfg.yaml", &errs, &n, &err),
	    CU_OK);
	cr_assert_eq(n, 1);
	cr_assert_str_eq(errs[0], err.msg);
	ctl_config_errors_free(errs, n);
}
