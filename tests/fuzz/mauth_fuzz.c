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
	struct api_user_info user;
	bool yes = true;
	size_t i;
	int rc = ctl_mauth_token_answer(body, &yes, &user);

	if (rc != CU_OK && (rc != CU_EINVAL || yes || user.username != NULL))
		abort();
	if (!yes) {
		if (user.username != NULL || user.groups.n != 0)
			abort();
		return;
	}
	if (user.username == NULL || user.username[0] == '\0')
		abort();
	for (i = 0; i < user.groups.n; i++)
		if (user.groups.items[i] == NULL)
			abort();
	api_user_info_dispose(&user);
}

static void access_review(const json_t *body)
{
	char *reason = (char *)"x";
	bool allowed = true;
	int rc = ctl_mauth_access_answer(body, &allowed, &reason);

	if (rc != CU_OK && (rc != CU_EINVAL || allowed || reason != NULL))
		abort();
	if (reason != NULL && reason[0] == '\0')
		abort();
	cu_free(reason);
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
