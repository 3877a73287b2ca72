/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/controller_config_convert_test.c - controller/config_print.c's
 * ctl_config_to_yaml_minimal behind `cueue-controller --convert-config`:
 * a v1beta1 file becomes the shortest v1beta2 file (golden text), and for
 * every test configuration the short file loads to the same effective
 * configuration as the original.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "controller/config.h"

#define DATA "tests/data/config/"

static char *minimal(const struct ctl_config *c)
{
	cu_buf b;
	cu_error err;
	char *s;

	cu_buf_init(&b, 1 << 20);
	cr_assert_eq(
	    ctl_config_to_yaml_minimal(c, &b, &err), CU_OK, "%s", err.msg);
	s = cu_buf_detach(&b, NULL);
	cr_assert_not_null(s);
	return s;
}

static char *effective(const struct ctl_config *c)
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

static char *convert_file(const char *name)
{
	struct ctl_config c;
	cu_error err;
	char *path = cu_asprintf(DATA "%s", name), *s;

	cr_assert_not_null(path);
	cr_assert_eq(ctl_config_load(&c, path, &err), CU_OK, "%s", err.msg);
	s = minimal(&c);
	ctl_config_dispose(&c);
	cu_free(path);
	return s;
}

/* v1beta1's waitForPodsReady.enable becomes the section's presence, with
 * the values v1beta1 defaulted that differ from v1beta2's (timeouts,
 * blockAdmission); fields v1beta2 dropped (queueVisibility,
 * integrations.podOptions) and fields at v1beta2's defaults are gone. */
Test(ctl_config_convert, v1beta1_becomes_short_v1beta2)
{
	char *s = convert_file("v1beta1.yaml");

	cr_assert_str_eq(s, "apiVersion: config.kueue.x-k8s.io/v1beta2\n"
			    "kind: Configuration\n"
			    "namespace: team-system\n"
			    "waitForPodsReady:\n"
			    "  timeout: 5m0s\n"
			    "  blockAdmission: true\n"
			    "  requeuingStrategy:\n"
			    "    timestamp: Creation\n"
			    "    backoffLimitCount: 5\n"
			    "  recoveryTimeout: 5m0s\n"
			    "clientConnection:\n"
			    "  qps: 50\n"
			    "  burst: 100\n");
	cu_free(s);
}

/* A v1beta1 file with waitForPodsReady off: v1beta2 turns it on by
 * default, so the converted file must say it is off (v1beta2's only way:
 * the DisableWaitForPodsReady feature gate). */
Test(ctl_config_convert, v1beta1_pods_ready_off_stays_off)
{
	static const char in[] = "apiVersion: config.kueue.x-k8s.io/v1beta1\n"
				 "kind: Configuration\n"
				 "namespace: ns1\n";
	struct ctl_config c, again;
	cu_error err;
	char *s, *a, *b;

	cr_assert_eq(ctl_config_load_buffer(&c, in, strlen(in), "t", &err),
	    CU_OK, "%s", err.msg);
	cr_assert_not(c.wait_for_pods_ready.enable);
	s = minimal(&c);
	cr_assert_not_null(
	    strstr(s, "featureGates:\n  DisableWaitForPodsReady: true\n"), "%s",
	    s);
	cr_assert_eq(ctl_config_load_buffer(&again, s, strlen(s), "t", &err),
	    CU_OK, "%s", err.msg);
	cr_assert_not(again.wait_for_pods_ready.enable, "%s", s);
	a = effective(&c);
	b = effective(&again);
	cr_assert_str_eq(a, b);
	cu_free(a);
	cu_free(b);
	cu_free(s);
	ctl_config_dispose(&c);
	ctl_config_dispose(&again);
}

Test(ctl_config_convert, defaults_only_is_the_header)
{
	static const char in[] = "apiVersion: config.kueue.x-k8s.io/v1beta2\n"
				 "kind: Configuration\n"
				 "namespace: ns1\n";
	struct ctl_config c;
	cu_error err;
	char *s;

	cr_assert_eq(ctl_config_load_buffer(&c, in, strlen(in), "t", &err),
	    CU_OK, "%s", err.msg);
	s = minimal(&c);
	cr_assert_str_eq(s, in);
	cu_free(s);
	ctl_config_dispose(&c);
}

/* The short file always loads to the original's configuration, also
 * where a section written in part would not (metrics.localQueueMetrics:
 * a section that is present takes Go's zero values, not the defaults). */
Test(ctl_config_convert, short_file_reloads_identically)
{
	static const char *const files[] = {"defaults.yaml", "seed-001.yaml",
	    "v1beta1.yaml", "full-v1beta2.yaml"};
	size_t i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct ctl_config c, again;
		cu_error err;
		char *path = cu_asprintf(DATA "%s", files[i]), *s, *a, *b;

		cr_assert_eq(
		    ctl_config_load(&c, path, &err), CU_OK, "%s", err.msg);
		s = minimal(&c);
		cr_assert_eq(
		    strncmp(
			s, "apiVersion: config.kueue.x-k8s.io/v1beta2\n", 42),
		    0, "%s", s);
		cr_assert_eq(ctl_config_load_buffer(
				 &again, s, strlen(s), files[i], &err),
		    CU_OK, "%s: %s", files[i], err.msg);
		a = effective(&c);
		b = effective(&again);
		cr_assert_str_eq(a, b, "%s:\n%s", files[i], s);
		cr_assert_leq(strlen(s), strlen(a), "%s", files[i]);
		cu_free(a);
		cu_free(b);
		cu_free(s);
		cu_free(path);
		ctl_config_dispose(&c);
		ctl_config_dispose(&again);
	}
}
