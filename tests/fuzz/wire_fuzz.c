/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/wire_fuzz.c - fuzz the decode-only kinds of api/model.h
 * the controller reads besides its own objects: ProvisioningRequest,
 * Secret, webhook configurations, CustomResourceDefinition, the
 * TokenReview and SubjectAccessReview answers, a user and the request
 * attributes of a review, and the caBundle setters.
 *
 * Input: one JSON document, decoded as every kind. Checked contracts
 * (abort() on a breach): a decode either succeeds or sets a one-line
 * message; what decodes holds its required fields (a request's pod
 * sets name their templates, a webhook has a name, a user its
 * username); a setter that reports a change changed the document, and a
 * second call with the same bundle changes nothing.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void must_fail_with_message(int rc, const cu_error *err)
{
	if (rc != CU_OK && err->msg[0] == '\0')
		abort();
}

static void kinds(const json_t *j)
{
	struct api_provreq pr;
	struct api_secret sec;
	struct api_webhook_configuration wc;
	struct api_crd crd;
	struct api_token_review tr;
	struct api_subject_access_review sar;
	struct api_user_info u;
	struct api_access_attributes a;
	cu_error err;
	size_t i;
	int rc;

	cu_error_clear(&err);
	rc = api_provreq_decode(&pr, j, &err);
	must_fail_with_message(rc, &err);
	for (i = 0; rc == CU_OK && i < pr.spec.n_podsets; i++)
		if (pr.spec.podsets[i].template_name == NULL)
			abort();
	api_provreq_dispose(&pr);
	cu_error_clear(&err);
	must_fail_with_message(api_secret_decode(&sec, j, &err), &err);
	api_secret_dispose(&sec);
	cu_error_clear(&err);
	rc = api_webhook_configuration_decode(&wc, j, &err);
	must_fail_with_message(rc, &err);
	for (i = 0; rc == CU_OK && i < wc.n_webhooks; i++)
		if (wc.webhooks[i].name == NULL)
			abort();
	api_webhook_configuration_dispose(&wc);
	cu_error_clear(&err);
	must_fail_with_message(api_crd_decode(&crd, j, &err), &err);
	api_crd_dispose(&crd);
	cu_error_clear(&err);
	must_fail_with_message(api_token_review_decode(&tr, j, &err), &err);
	api_token_review_dispose(&tr);
	cu_error_clear(&err);
	must_fail_with_message(
	    api_subject_access_review_decode(&sar, j, &err), &err);
	api_subject_access_review_dispose(&sar);
	cu_error_clear(&err);
	rc = api_user_info_decode(&u, j, &err);
	must_fail_with_message(rc, &err);
	if (rc == CU_OK && u.username == NULL)
		abort();
	api_user_info_dispose(&u);
	cu_error_clear(&err);
	must_fail_with_message(api_access_attributes_decode(&a, j, &err), &err);
	api_access_attributes_dispose(&a);
}

static void setters(const json_t *j)
{
	json_t *c = json_deep_copy(j);

	if (c == NULL)
		return;
	if (api_webhook_configuration_set_ca_bundle(c, "QQ==") &&
	    json_equal(c, j))
		abort();
	if (api_webhook_configuration_set_ca_bundle(c, "QQ=="))
		abort();
	if (api_crd_set_ca_bundle(c, "QQ==") &&
	    api_crd_set_ca_bundle(c, "QQ=="))
		abort();
	json_decref(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *j = json_loadb((const char *)data, size, 0, NULL);

	if (j == NULL)
		return 0;
	kinds(j);
	setters(j);
	json_decref(j);
	return 0;
}
