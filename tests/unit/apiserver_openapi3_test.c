/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/apiserver_openapi3_test.c - tests/apiserver/openapi3.c's pure
 * parts: schema names with the group reversed, a kind's schema built from
 * a CRD's openAPIV3Schema as kube-apiserver builds it (apiVersion, kind,
 * metadata referencing ObjectMeta, the GVK extension, the CRD's own
 * fields kept and the CRD's schema left untouched), and document hashes.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "tests/apiserver/apiserver.h"

static void name_is(const char *group, const char *want)
{
	char *got = as_openapi3_schema_name(group, "v1beta2", "Workload");

	cr_assert_not_null(got);
	cr_assert_str_eq(got, want);
	cu_free(got);
}

Test(openapi3, schema_names_reverse_the_group)
{
	name_is("kueue.x-k8s.io", "io.x-k8s.kueue.v1beta2.Workload");
	name_is("example.com", "com.example.v1beta2.Workload");
	name_is("single", "single.v1beta2.Workload");
}

Test(openapi3, kind_schema_from_crd_schema)
{
	json_t *crd = json_pack("{s:s, s:s, s:{s:{s:s, s:{s:{s:s}}}, s:{s:s}}}",
	    "description", "A queue.", "type", "object", "properties", "spec",
	    "type", "object", "properties", "cohort", "type", "string",
	    "metadata", "type", "object");
	json_t *s = as_openapi3_kind_schema(
	    "kueue.x-k8s.io", "v1beta2", "ClusterQueue", crd);
	json_t *props, *gvk;

	cr_assert_not_null(s);
	props = json_object_get(s, "properties");
	cr_assert_str_eq(
	    json_string_value(json_object_get(s, "description")), "A queue.");
	cr_assert_str_eq(
	    as_jstr(props, "spec.properties.cohort.type"), "string");
	cr_assert_str_eq(as_jstr(props, "apiVersion.type"), "string");
	cr_assert_str_eq(as_jstr(props, "kind.type"), "string");
	cr_assert_str_eq(
	    json_string_value(json_object_get(
		json_array_get(as_jget(props, "metadata.allOf"), 0), "$ref")),
	    "#/components/schemas/"
	    "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta");
	cr_assert_null(as_jget(props, "metadata.type"));
	gvk = json_array_get(
	    json_object_get(s, "x-kubernetes-group-version-kind"), 0);
	cr_assert_str_eq(as_jstr(gvk, "group"), "kueue.x-k8s.io");
	cr_assert_str_eq(as_jstr(gvk, "version"), "v1beta2");
	cr_assert_str_eq(as_jstr(gvk, "kind"), "ClusterQueue");
	/* the CRD's schema is copied, not changed */
	cr_assert_null(as_jget(crd, "properties.apiVersion"));
	cr_assert_str_eq(as_jstr(crd, "properties.metadata.type"), "object");
	json_decref(s);
	json_decref(crd);
}

Test(openapi3, kind_schema_without_crd_schema)
{
	json_t *s = as_openapi3_kind_schema("g.io", "v1", "Thing", NULL);

	cr_assert_not_null(s);
	cr_assert_str_eq(as_jstr(s, "type"), "object");
	cr_assert_not_null(as_jget(s, "properties.metadata"));
	json_decref(s);
}

Test(openapi3, hash_is_upper_case_sha512)
{
	char *h = as_openapi3_hash("abc", 3);

	cr_assert_not_null(h);
	cr_assert_eq(strlen(h), 128);
	cr_assert(strncmp(h, "DDAF35A193617ABA", 16) == 0, "%s", h);
	cu_free(h);
}
