/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/api_model_auth_test.c - the review answers in the model: a
 * TokenReview's user (username, uid, groups, extra) and a
 * SubjectAccessReview's decision decode; an unauthenticated answer's
 * empty user is accepted; wrong-typed fields are refused with the
 * field's path; request attributes decode; a user is written back into a
 * review's spec.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "api/wire.h"
#include "tests/unit/fixtures.h"

Test(api_model_auth, token_review_user)
{
	struct api_token_review tr;
	json_t *j = fx_parse(
	    "{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":"
	    "\"TokenReview\",\"status\":{\"authenticated\":true,\"user\":{"
	    "\"username\":\"alice\",\"uid\":\"42\",\"groups\":[\"g1\","
	    "\"g2\"],\"extra\":{\"scopes\":[\"a\",\"b\"]}}}}");
	cu_error err;

	cr_assert_eq(
	    api_token_review_decode(&tr, j, &err), CU_OK, "%s", err.msg);
	cr_assert(tr.has_status);
	cr_assert(tr.status.authenticated);
	cr_assert(tr.status.has_user);
	cr_assert_str_eq(tr.status.user.username, "alice");
	cr_assert_str_eq(tr.status.user.uid, "42");
	cr_assert(tr.status.user.has_groups);
	cr_assert_eq(tr.status.user.groups.n, 2);
	cr_assert_str_eq(tr.status.user.groups.items[1], "g2");
	cr_assert_not_null(tr.status.user.extra);
	api_token_review_dispose(&tr);
	json_decref(j);
}

Test(api_model_auth, token_review_not_authenticated_empty_user)
{
	struct api_token_review tr;
	json_t *j = fx_parse("{\"status\":{\"user\":{},\"error\":\"bad\"}}");
	cu_error err;

	cr_assert_eq(
	    api_token_review_decode(&tr, j, &err), CU_OK, "%s", err.msg);
	cr_assert(!tr.status.authenticated);
	cr_assert(tr.status.has_user);
	cr_assert_null(tr.status.user.username);
	cr_assert_str_eq(tr.status.error, "bad");
	api_token_review_dispose(&tr);
	json_decref(j);
}

static int dec_tr(const json_t *j, cu_error *err)
{
	struct api_token_review tr;
	int rc = api_token_review_decode(&tr, j, err);

	api_token_review_dispose(&tr);
	return rc;
}

static int dec_sar(const json_t *j, cu_error *err)
{
	struct api_subject_access_review sar;
	int rc = api_subject_access_review_decode(&sar, j, err);

	api_subject_access_review_dispose(&sar);
	return rc;
}

static int dec_user(const json_t *j, cu_error *err)
{
	struct api_user_info u;
	int rc = api_user_info_decode(&u, j, err);

	api_user_info_dispose(&u);
	return rc;
}

static int dec_attrs(const json_t *j, cu_error *err)
{
	struct api_access_attributes a;
	int rc = api_access_attributes_decode(&a, j, err);

	api_access_attributes_dispose(&a);
	return rc;
}

Test(api_model_auth, wrong_types_name_the_field)
{
	fx_refused(dec_tr, "{\"status\":{\"authenticated\":\"yes\"}}",
	    "status.authenticated: Invalid type: expected boolean, got "
	    "string");
	fx_refused(dec_tr,
	    "{\"status\":{\"authenticated\":true,\"user\":{\"username\":"
	    "\"u\",\"groups\":[\"a\",7]}}}",
	    "status.user.groups[1]: Invalid type: expected string, got "
	    "integer");
	fx_refused(dec_tr,
	    "{\"status\":{\"user\":{\"username\":\"u\",\"extra\":{\"k\":"
	    "\"v\"}}}}",
	    "status.user.extra.k: Invalid type: expected array, got string");
	fx_refused(dec_tr, "{\"status\":{\"user\":[]}}",
	    "status.user: Invalid type: expected object, got array");
	fx_refused(dec_tr, "{\"kind\":\"Pod\",\"status\":{}}",
	    "kind: Invalid value: \"Pod\": expected \"TokenReview\"");
	fx_refused(dec_sar, "{\"status\":{\"allowed\":1}}",
	    "status.allowed: Invalid type: expected boolean, got integer");
	fx_refused(dec_sar, "{\"status\":{\"allowed\":false,\"reason\":[]}}",
	    "status.reason: Invalid type: expected string, got array");
	fx_refused(dec_user, "{\"groups\":[]}", "username: Required value");
	fx_refused(dec_attrs, "{\"resourceAttributes\":{\"verb\":3}}",
	    "resourceAttributes.verb: Invalid type: expected string, got "
	    "integer");
}

Test(api_model_auth, access_review_decision)
{
	struct api_subject_access_review sar;
	json_t *j = fx_parse("{\"apiVersion\":\"authorization.k8s.io/v1\","
			     "\"kind\":\"SubjectAccessReview\",\"status\":{"
			     "\"allowed\":false,\"denied\":true,\"reason\":"
			     "\"no\",\"evaluationError\":\"e\"}}");
	cu_error err;

	cr_assert_eq(api_subject_access_review_decode(&sar, j, &err), CU_OK,
	    "%s", err.msg);
	cr_assert(sar.has_status);
	cr_assert(!sar.status.allowed);
	cr_assert(sar.status.denied);
	cr_assert_str_eq(sar.status.reason, "no");
	cr_assert_str_eq(sar.status.evaluation_error, "e");
	api_subject_access_review_dispose(&sar);
	json_decref(j);
	j = fx_parse("{}");
	cr_assert_eq(api_subject_access_review_decode(&sar, j, &err), CU_OK);
	cr_assert(!sar.has_status);
	api_subject_access_review_dispose(&sar);
	json_decref(j);
}

Test(api_model_auth, attributes_and_spec)
{
	struct api_access_attributes a;
	struct api_user_info u, c;
	json_t *j = fx_parse("{\"resourceAttributes\":{\"verb\":\"get\","
			     "\"group\":\"g\",\"resource\":\"r\","
			     "\"subresource\":\"s\",\"namespace\":\"ns\","
			     "\"name\":\"n\"}}");
	json_t *spec, *want;
	cu_error err;

	cr_assert_eq(
	    api_access_attributes_decode(&a, j, &err), CU_OK, "%s", err.msg);
	cr_assert(a.resource);
	cr_assert(!a.non_resource);
	cr_assert_str_eq(a.resource_name, "r");
	cr_assert_str_eq(a.namespace_, "ns");
	api_access_attributes_dispose(&a);
	json_decref(j);

	j = fx_parse("{\"username\":\"bob\",\"uid\":\"7\",\"groups\":[\"g\"],"
		     "\"extra\":{\"x\":[\"y\"]}}");
	cr_assert_eq(api_user_info_decode(&u, j, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(api_user_info_copy(&c, &u, &err), CU_OK);
	api_user_info_dispose(&u);
	spec = json_object();
	cr_assert_eq(api_user_info_encode_spec(spec, &c, &err), CU_OK);
	want = fx_parse("{\"user\":\"bob\",\"uid\":\"7\",\"groups\":[\"g\"],"
			"\"extra\":{\"x\":[\"y\"]}}");
	cr_assert(json_equal(spec, want));
	api_user_info_dispose(&c);
	json_decref(spec);
	json_decref(want);
	json_decref(j);
}
