/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/controller_config_dra_test.c - resources.deviceClassMappings
 * counter sources checked at load as Kueue's configuration validation
 * does: name and driver required, the deviceSelector's CEL expression
 * required and compiled (parsed by cueue's CEL subset; an expression
 * outside it refused, naming the construct); a valid source loads.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "controller/config.h"

#define HDR                                                                    \
	"apiVersion: config.kueue.x-k8s.io/v1beta2\n"                          \
	"kind: Configuration\n"                                                \
	"resources:\n  deviceClassMappings:\n"                                 \
	"  - name: gpu.memory\n    deviceClassNames: [mig.example.com]\n"      \
	"    sources:\n    - counter:\n"

static int load(struct ctl_config *c, const char *body, cu_error *err)
{
	char doc[1024];

	snprintf(doc, sizeof(doc), "%s%s", HDR, body);
	return ctl_config_load_buffer(c, doc, strlen(doc), "t.yaml", err);
}

Test(ctl_config_dra, a_counter_source_loads)
{
	struct ctl_config c;
	cu_error err;

	cr_assert_eq(load(&c,
			 "        name: memory\n"
			 "        driver: gpu.example.com\n"
			 "        deviceSelector:\n          cel:\n"
			 "            expression: device.driver == 'x'\n",
			 &err),
	    CU_OK, "%s", err.msg);
	cr_assert(c.dra.mappings[0].counter_sources);
	ctl_config_dispose(&c);
}

Test(ctl_config_dra, counter_source_fields_checked_at_load)
{
	static const struct {
		const char *body, *want;
	} cases[] = {
	    {"        driver: gpu.example.com\n"
	     "        deviceSelector: {cel: {expression: 'true'}}\n",
		"sources[0].counter.name: Required value"},
	    {"        name: memory\n"
	     "        deviceSelector: {cel: {expression: 'true'}}\n",
		"sources[0].counter.driver: Required value"},
	    {"        name: memory\n        driver: gpu.example.com\n",
		"sources[0].counter.deviceSelector.cel.expression: Required "
		"value"},
	    {"        name: memory\n        driver: gpu.example.com\n"
	     "        deviceSelector: {cel: {expression: 'device.driver "
	     "=='}}\n",
		"sources[0].counter.deviceSelector.cel.expression: Invalid "
		"value: \"device.driver ==\": CEL compilation failed"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ctl_config c;
		cu_error err;

		cr_expect_neq(
		    load(&c, cases[i].body, &err), CU_OK, "case %zu loaded", i);
		cr_expect(strstr(err.msg, cases[i].want) != NULL,
		    "case %zu: got \"%s\", want \"%s\"", i, err.msg,
		    cases[i].want);
		ctl_config_dispose(&c);
	}
}
