/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/admission_reasons_test.c - adm_format_quantity prints a
 * quantity as Kueue's resource formatter does: cpu in milli-units,
 * memory-like resources and the quota resources of DRA counter or
 * capacity mappings in binary suffixes when the value is a multiple of
 * 1024 (else in decimal, as Kueue's printed-then-parsed quantity),
 * everything else in decimal suffixes.
 */
#include <criterion/criterion.h>

#include "admission/admission.h"

#define GI (1024LL * 1024 * 1024)

static void expect(const char *res, int64_t milli, const char *want)
{
	char buf[64];

	adm_format_quantity(res, milli, buf, sizeof(buf));
	cr_expect_str_eq(buf, want, "%s %lld", res, (long long)milli);
}

Test(adm_format_quantity, decimal_and_memory_as_kubernetes)
{
	expect("cpu", 1500, "1500m");
	expect("cpu", 2000000, "2k");
	expect("example.com/gpu", 3000, "3");
	expect("memory", 10 * GI * 1000, "10Gi");
	expect("memory", 1000 * 1000, "1k");
	expect("memory", 3000 * 1000, "3k"); /* no binary suffix: decimal */
	expect("memory", 2048000LL * 1000, "2000Ki");
	expect("hugepages-2Mi", 2 * 1024 * 1024 * 1000LL, "2Mi");
	expect("example.com/gpu-memory", 10 * GI * 1000, "10737418240");
}

Test(adm_format_quantity, counter_mapped_resources_in_binary_as_kueue)
{
	static const char *const names[] = {"example.com/gpu-memory"};

	adm_binary_resources_set(names, 1);
	expect("example.com/gpu-memory", 10 * GI * 1000, "10Gi");
	expect("example.com/gpu-memory", 40 * GI * 1000, "40Gi");
	expect("example.com/gpu-memory", 1000 * 1000, "1k");
	expect("example.com/gpu", 2000 * 1000, "2k");
	adm_binary_resources_set(NULL, 0);
	expect("example.com/gpu-memory", 10 * GI * 1000, "10737418240");
}
