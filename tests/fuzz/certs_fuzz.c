/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/certs_fuzz.c - fuzz the webhook certificate Secret's
 * handling: the Secret's data fields decoded from base64 as
 * controller/certrot.c reads them, then the PEM certificate, key and CA
 * checked as the controller checks a stored set (ctl_certs_check:
 * parsing, the chain, the key matching, the service names, validity).
 * Garbage is "invalid" with a reason, never an error or a crash; a set
 * that checks valid is checked again the same.
 *
 * Input: one JSON document, a Secret ({"data": {"ca.crt": base64,
 * "tls.crt": base64, "tls.key": base64}}); fields absent or not base64
 * are missing (NULL).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "api/json.h"
#include "controller/certs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *field(const json_t *secret, const char *key)
{
	const char *v = json_string_value(
	    json_object_get(json_object_get(secret, "data"), key));
	char *out = NULL;
	size_t n;

	if (v == NULL || api_base64_decode(v, &out, &n, NULL) != CU_OK)
		return NULL;
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = {
	    "cueue-webhook-service.cueue-system.svc",
	    "cueue-webhook-service.cueue-system.svc.cluster.local"};
	/* 2027-06-01: within the corpus certificate's validity. */
	const int64_t now = 1811808000LL * 1000000000LL;
	json_t *j = json_loadb((const char *)data, size, 0, NULL);
	char *ca, *crt, *key;
	bool valid = true, again = false;
	cu_error err;
	int rc;

	if (j == NULL)
		return 0;
	ca = field(j, "ca.crt");
	crt = field(j, "tls.crt");
	key = field(j, "tls.key");
	cu_error_clear(&err);
	rc = ctl_certs_check(ca, crt, key, names, 2, now, 0, &valid, &err);
	if (rc != CU_OK && rc != CU_ENOMEM && rc != CU_EIO)
		abort();
	if (rc == CU_OK && !valid && err.msg[0] == '\0')
		abort();
	if (rc == CU_OK && valid) {
		if (ctl_certs_check(ca, crt, key, names, 2, now, 0, &again,
			NULL) != CU_OK ||
		    !again)
			abort();
	}
	cu_free(ca);
	cu_free(crt);
	cu_free(key);
	json_decref(j);
	return 0;
}
