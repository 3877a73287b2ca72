/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/controller_config_tasgates_test.c - Kueue's TAS node failure
 * gates and TASProfileMixed in the Configuration: at Kueue's defaults without
 * featureGates (TASFailedNodeReplacement, TASReplaceNodeOnPodTermination and
 * TASReplaceNodeOnNodeTaints on, TASReplaceNodeDueToNotReadyOverFixedTime
 * off) and SkipReassignmentForPodOwnedWorkloads (on), honoured when set (no
 * "not acted on" warning), and printed back when not at the default so that a
 * converted file keeps them.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "controller/config.h"
#include "lib/cu.h"

#define HDR                                                                    \
	"apiVersion: config.kueue.x-k8s.io/v1beta2\n"                          \
	"kind: Configuration\n"

static void load_ok(struct ctl_config *c, const char *yaml)
{
	cu_error err;

	cr_assert_eq(
	    ctl_config_load_buffer(c, yaml, strlen(yaml), "t.yaml", &err),
	    CU_OK, "%s", err.msg);
}

static char *print(const struct ctl_config *c)
{
	cu_buf b;
	cu_error err;
	char *s;

	cu_buf_init(&b, 1 << 20);
	cr_assert_eq(ctl_config_to_yaml(c, &b, &err), CU_OK, "%s", err.msg);
	s = cu_buf_detach(&b, NULL);
	cr_assert_not_null(s);
	return s;
}

Test(ctl_config_tasgates, kueue_defaults_and_not_printed)
{
	struct ctl_config c;
	char *y;

	load_ok(&c, HDR);
	cr_assert(c.tas_gates.profile_mixed);
	cr_assert(c.tas_gates.node_replacement);
	cr_assert(c.tas_gates.on_pod_termination);
	cr_assert(c.tas_gates.on_node_taints);
	cr_assert_not(c.tas_gates.not_ready_fixed_time);
	cr_assert(c.tas_gates.skip_pod_owned);
	y = print(&c);
	cr_assert(strstr(y, "TAS") == NULL, "%s", y);
	cr_assert(strstr(y, "SkipReassignment") == NULL, "%s", y);
	cu_free(y);
	ctl_config_dispose(&c);
}

Test(ctl_config_tasgates, honoured_and_printed_back)
{
	struct ctl_config c, again;
	char *y;

	load_ok(&c, HDR "featureGates:\n"
			"  TASProfileMixed: false\n"
			"  TASFailedNodeReplacement: false\n"
			"  TASReplaceNodeOnPodTermination: false\n"
			"  TASReplaceNodeOnNodeTaints: false\n"
			"  TASReplaceNodeDueToNotReadyOverFixedTime: true\n"
			"  SkipReassignmentForPodOwnedWorkloads: false\n");
	cr_assert_eq(c.nwarnings, 0, "%s", c.nwarnings ? c.warnings[0] : "");
	cr_assert_not(c.tas_gates.profile_mixed);
	cr_assert_not(c.tas_gates.node_replacement);
	cr_assert_not(c.tas_gates.on_pod_termination);
	cr_assert_not(c.tas_gates.on_node_taints);
	cr_assert(c.tas_gates.not_ready_fixed_time);
	cr_assert_not(c.tas_gates.skip_pod_owned);
	y = print(&c);
	cr_assert(
	    strstr(y, "TASReplaceNodeDueToNotReadyOverFixedTime: true") != NULL,
	    "%s", y);
	cr_assert(
	    strstr(y, "SkipReassignmentForPodOwnedWorkloads: false") != NULL,
	    "%s", y);
	load_ok(&again, y);
	cr_assert_not(again.tas_gates.profile_mixed);
	cr_assert_not(again.tas_gates.node_replacement);
	cr_assert_not(again.tas_gates.on_pod_termination);
	cr_assert_not(again.tas_gates.on_node_taints);
	cr_assert(again.tas_gates.not_ready_fixed_time);
	cr_assert_not(again.tas_gates.skip_pod_owned);
	cu_free(y);
	ctl_config_dispose(&c);
	ctl_config_dispose(&again);
}

/* FailFast stays a gate cueue does not act on: it warns. */
Test(ctl_config_tasgates, fail_fast_still_warns)
{
	struct ctl_config c;

	load_ok(&c, HDR "featureGates:\n"
			"  TASFailedNodeReplacementFailFast: false\n");
	cr_assert_eq(c.nwarnings, 1);
	cr_assert(
	    strstr(c.warnings[0], "not acted on") != NULL, "%s", c.warnings[0]);
	ctl_config_dispose(&c);
}
