/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/apiserver_names_test.c - cueue-apiserver's object names as
 * kube-apiserver's (apimachinery IsDNS1123Subdomain): a dot-separated
 * part longer than 63 characters is valid (only labels have that limit),
 * 253 characters in all are, 254 are not, and parts must start and end
 * with a letter or digit.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "tests/unit/fixtures.h"

static int create(const char *name)
{
	struct fx_result r;
	int code;

	fx_call(&r, "POST", "/api/v1/namespaces/default/configmaps", NULL,
	    fx_configmap(name, "v"));
	code = r.code;
	fx_result_dispose(&r);
	return code;
}

Test(apiserver_names, dns_subdomain_parts_have_no_length_limit,
    .init = fx_setup, .fini = fx_teardown)
{
	char name[300];

	/* A part of 100 characters. */
	memset(name, 'a', sizeof(name));
	memcpy(name, "x.", 2);
	name[102] = '.';
	name[103] = 'y';
	name[104] = '\0';
	cr_expect_eq(create(name), 201, "a 100-character part");
	/* 253 characters: the limit. */
	memset(name, 'b', 253);
	name[100] = '.';
	name[253] = '\0';
	cr_expect_eq(create(name), 201, "253 characters");
	name[253] = 'b';
	name[254] = '\0';
	cr_expect_eq(create(name), 422, "254 characters");
	cr_expect_eq(create("a.-b"), 422, "a part starting with '-'");
	cr_expect_eq(create("a-.b"), 422, "a part ending with '-'");
	cr_expect_eq(create("a..b"), 422, "an empty part");
	cr_expect_eq(create("A.b"), 422, "upper case");
}
