/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/mauth_fuzz.c - fuzz what the metrics and visibility gate
 * (controller/mauth.h) reads from the API server and builds for its
 * callers: a TokenReview's answer (ctl_mauth_token_answer), a
 * SubjectAccessReview's (ctl_mauth_access_answer), and kube's Forbidden
 * Status for arbitrary request attributes (ctl_mauth_forbidden).
 *
 * Input: one JSON document, read as the answer of both reviews and as
 * the request attributes; its "user" member (a string) names the user
 * of the Forbidden message.
 *
 * Checked contracts (abort() on a breach): an answer without a status
 * object is a failed review (CU_EINVAL), never authenticated or allowed;
 * an authenticated user has a non-empty string username and groups a
 * list of strings when present; a reason is non-empty when given; the
 * Forbidden Status is a Status with code 403, reason Forbidden and a
 * message naming the user.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "controller/mauth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void token_review(const json_t *body)
{
	json_t *user = (json_t *)1, *g, *x;
	bool yes = true;
	const char *name;
	size_t i;
	int rc = ctl_mauth_token_answer(body, &yes, &user);

	if (rc != CU_OK && (rc != CU_EINVAL || yes || user != NULL))
		abort();
	if (!yes) {
		if (user != NULL)
			abort();
		return;
	}
	name = json_string_value(json_object_get(user, "username"));
	if (name == NULL || name[0] == '\0')
		abort();
	g = json_object_get(user, "groups");
	json_array_foreach(g, i, x)
	{
		if (!json_is_string(x))
			abort();
	}
}

static void access_review(const json_t *body)
{
	const char *reason = "x";
	bool allowed = true;
	int rc = ctl_mauth_access_answer(body, &allowed, &reason);

	if (rc != CU_OK && (rc != CU_EINVAL || allowed || reason != NULL))
		abort();
	if (reason != NULL && reason[0] == '\0')
		abort();
}

static void forbidden(const json_t *attrs)
{
	const char *user = json_string_value(json_object_get(attrs, "user"));
	json_t *st;
	const char *msg;

	if (user == NULL)
		user = "someone";
	st = ctl_mauth_forbidden(attrs, user, "no RBAC policy matched");
	if (st == NULL)
		return; /* out of memory */
	msg = json_string_value(json_object_get(st, "message"));
	if (json_integer_value(json_object_get(st, "code")) != 403 ||
	    strcmp(json_string_value(json_object_get(st, "reason")),
		"Forbidden") != 0 ||
	    strcmp(json_string_value(json_object_get(st, "kind")), "Status") !=
		0 ||
	    msg == NULL || strstr(msg, user) == NULL)
		abort();
	json_decref(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *j = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);

	if (j == NULL)
		return 0;
	token_review(j);
	access_review(j);
	forbidden(j);
	json_decref(j);
	return 0;
}
