/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/controller_flags_test.c - controller/flags: Kueue's manager
 * command lines (the kustomize Deployment's, the Helm chart's, Go's
 * spellings) parse with Kueue's meaning; the zap defaults under explicit
 * choices; unknown flags refused with the list; --feature-gates items.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <string.h>

#include "controller/flags.h"

#define ARGV(...) ((const char *const[]){"cueue-controller", __VA_ARGS__})
#define NARGS(...) ((int)(sizeof(ARGV(__VA_ARGS__)) / sizeof(char *)))
#define PARSE(f, e, ...)                                                       \
	ctl_flags_parse(NARGS(__VA_ARGS__), ARGV(__VA_ARGS__), (f), (e))

Test(flags, kueue_deployment_args)
{
	struct ctl_flags f;
	cu_error e;

	cr_assert_eq(PARSE(&f, &e, "--config=/controller_manager_config.yaml",
			 "--zap-log-level=2"),
	    CU_OK, "%s", e.msg);
	cr_assert_eq(f.action, CTL_FLAGS_RUN);
	cr_assert_str_eq(f.config, "/controller_manager_config.yaml");
	cr_assert(f.level_set);
	cr_assert_eq(f.level, CU_LOG_INFO);
	cr_assert_not(f.json_set);
	cr_assert(f.metrics_secure);
}

Test(flags, go_spellings)
{
	struct ctl_flags f;
	cu_error e;

	cr_assert_eq(PARSE(&f, &e, "-config", "c.yaml", "-kubeconfig=k",
			 "--feature-gates", "A=true", "-zap-devel"),
	    CU_OK, "%s", e.msg);
	cr_assert_str_eq(f.config, "c.yaml");
	cr_assert_str_eq(f.kubeconfig, "k");
	cr_assert_str_eq(f.feature_gates, "A=true");
	/* development: console lines at debug level */
	cr_assert(f.level_set && f.level == CU_LOG_DEBUG);
	cr_assert(f.json_set && !f.json);
}

Test(flags, zap_defaults_under_explicit_choices)
{
	struct ctl_flags f;
	cu_error e;

	/* production defaults: JSON, info */
	cr_assert_eq(PARSE(&f, &e, "--zap-devel=false"), CU_OK);
	cr_assert(f.json_set && f.json);
	cr_assert(f.level_set && f.level == CU_LOG_INFO);
	/* an explicit encoder and level win, before or after */
	cr_assert_eq(PARSE(&f, &e, "--zap-encoder=console", "--zap-devel=false",
			 "--zap-log-level=error"),
	    CU_OK);
	cr_assert(f.json_set && !f.json);
	cr_assert_eq(f.level, CU_LOG_ERROR);
	cr_assert_eq(PARSE(&f, &e, "--zap-log-level", "debug", "--zap-encoder",
			 "json", "--zap-devel"),
	    CU_OK);
	cr_assert(f.json && f.level == CU_LOG_DEBUG);
	cr_assert_eq(PARSE(&f, &e, "--zap-log-level=panic"), CU_OK);
	cr_assert_eq(f.level, CU_LOG_ERROR);
	cr_assert_eq(PARSE(&f, &e, "--zap-log-level=5"), CU_OK);
	cr_assert_eq(f.level, CU_LOG_DEBUG);
	cr_assert_eq(PARSE(&f, &e, "--zap-log-level=1"), CU_OK);
	cr_assert_eq(f.level, CU_LOG_INFO);
	cr_assert_eq(PARSE(&f, &e, "--zap-stacktrace-level=panic",
			 "--zap-time-encoding=rfc3339nano"),
	    CU_OK);
	cr_assert_not(f.level_set || f.json_set);
	/* cueue's own spellings */
	cr_assert_eq(PARSE(&f, &e, "--log-json", "--log-level=warn",
			 "--metrics-secure=false", "--store", "l.db"),
	    CU_OK);
	cr_assert(f.json_set && f.json && f.level == CU_LOG_WARN);
	cr_assert_not(f.metrics_secure);
	cr_assert_str_eq(f.store, "l.db");
}

Test(flags, actions)
{
	struct ctl_flags f;
	cu_error e;

	cr_assert_eq(PARSE(&f, &e, "--check-config"), CU_OK);
	cr_assert_eq(f.action, CTL_FLAGS_CHECK_CONFIG);
	cr_assert_null(f.config);
	cr_assert_eq(PARSE(&f, &e, "--convert-config", "old.yaml"), CU_OK);
	cr_assert_eq(f.action, CTL_FLAGS_CONVERT_CONFIG);
	cr_assert_eq(PARSE(&f, &e, "-h", "--bogus"), CU_OK);
	cr_assert_eq(f.action, CTL_FLAGS_HELP);
	cr_assert_eq(PARSE(&f, &e, "--version"), CU_OK);
	cr_assert_eq(f.action, CTL_FLAGS_VERSION);
	cr_assert_eq(PARSE(&f, &e, "--config", "c", "--"), CU_OK);
}

static void refused(int rc, const cu_error *e, const char *want)
{
	cr_assert_eq(rc, CU_EINVAL);
	cr_assert(strstr(e->msg, want) != NULL, "%s: want %s", e->msg, want);
	cr_assert_null(strchr(e->msg, '\n'), "one line: %s", e->msg);
}

Test(flags, refused_with_what_to_do)
{
	struct ctl_flags f;
	cu_error e;

	refused(PARSE(&f, &e, "--leader-elect"), &e,
	    "unknown flag --leader-elect; the flags are: --check-config, "
	    "--compat-table, --config,");
	cr_assert(strstr(e.msg, "--zap-time-encoding") != NULL, "%s", e.msg);
	refused(PARSE(&f, &e, "-v=2"), &e, "unknown flag -v;");
	refused(PARSE(&f, &e, "--config"), &e,
	    "flag needs an argument: --config (write --config=VALUE)");
	refused(PARSE(&f, &e, "--zap-log-level=0"), &e,
	    "invalid value \"0\" for --zap-log-level: debug, info, error, "
	    "panic or an integer above 0");
	refused(PARSE(&f, &e, "--zap-log-level=warn"), &e, "\"warn\"");
	refused(PARSE(&f, &e, "--zap-encoder=text"), &e, "json or console");
	refused(PARSE(&f, &e, "--zap-devel=maybe"), &e,
	    "invalid boolean value \"maybe\" for --zap-devel");
	refused(PARSE(&f, &e, "--zap-stacktrace-level=warn"), &e,
	    "info, error or panic");
	refused(PARSE(&f, &e, "--zap-time-encoding=unix"), &e, "rfc3339nano");
	refused(PARSE(&f, &e, "--log-level=loud"), &e, "debug, info, warn");
	refused(PARSE(&f, &e, "extra"), &e,
	    "unexpected argument \"extra\": cueue-controller takes flags "
	    "only");
	refused(PARSE(&f, &e, "--", "x"), &e, "unexpected argument \"x\"");
	refused(PARSE(&f, &e, "-"), &e, "unexpected argument \"-\"");
}

Test(flags, feature_gates)
{
	json_t *g = NULL;
	cu_error e;

	cr_assert_eq(ctl_flags_gates("TopologyAwareScheduling=true, "
				     "PartialAdmission = false,X=1,Y=F",
			 &g, &e),
	    CU_OK, "%s", e.msg);
	cr_assert_eq(json_object_size(g), 4);
	cr_assert(json_is_true(json_object_get(g, "TopologyAwareScheduling")));
	cr_assert(json_is_false(json_object_get(g, "PartialAdmission")));
	cr_assert(json_is_true(json_object_get(g, "X")));
	cr_assert(json_is_false(json_object_get(g, "Y")));
	json_decref(g);
	cr_assert_eq(ctl_flags_gates("", &g, &e), CU_OK);
	cr_assert_eq(json_object_size(g), 0);
	json_decref(g);
	cr_assert_eq(ctl_flags_gates("A=true,B", &g, &e), CU_EINVAL);
	cr_assert_null(g);
	cr_assert_str_eq(e.msg, "--feature-gates: missing bool value for B "
				"(write B=true or B=false)");
	cr_assert_eq(ctl_flags_gates("A=yes", &g, &e), CU_EINVAL);
	cr_assert(strstr(e.msg, "invalid value of A=yes") != NULL, "%s", e.msg);
	cr_assert_eq(ctl_flags_gates("=true", &g, &e), CU_EINVAL);
	cr_assert_eq(
	    ctl_flags_gates("A=truetruetruetruetrue", &g, &e), CU_EINVAL);
}
