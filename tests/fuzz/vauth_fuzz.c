/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/vauth_fuzz.c - fuzz the visibility server's delegated
 * authentication (controller/vauth.h): the extension-apiserver-
 * authentication ConfigMap read into settings, the front proxy's user
 * from request headers, a client certificate chain verified against the
 * ConfigMap's CAs, and a request path read into SubjectAccessReview
 * attributes.
 *
 * Input: four parts separated by lines "--":
 *   1. the ConfigMap, JSON (not JSON: no ConfigMap at all);
 *   2. request headers, one "Name: value" per line;
 *   3. "METHOD PATH" on one line;
 *   4. the client's leaf certificate, DER bytes.
 *
 * Checked contracts (abort() on a breach): a refused ConfigMap says why;
 * a user from headers has a non-empty username and groups, when there,
 * a list of strings; no user means no object; the attributes are one of
 * resourceAttributes (with a verb and a resource) or
 * nonResourceAttributes (with the path); a verified chain gives a CN
 * string and a list of O values, a refused one says why.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "controller/vauth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_HEADERS 32

/* The next part of [*p, end) up to a "\n--\n" line [borrowed]. */
static const char *part(const char **p, const char *end, size_t *len)
{
	const char *s = *p, *q;

	for (q = s; q + 4 <= end; q++)
		if (memcmp(q, "\n--\n", 4) == 0) {
			*len = (size_t)(q - s);
			*p = q + 4;
			return s;
		}
	*len = (size_t)(end - s);
	*p = end;
	return s;
}

static void check_user(enum ctl_mauth_who who, json_t *u)
{
	const char *name = json_string_value(json_object_get(u, "username"));
	json_t *g = json_object_get(u, "groups"), *x;
	size_t i;

	if (who != CTL_MAUTH_WHO_USER) {
		if (u != NULL)
			abort();
		return;
	}
	if (name == NULL || name[0] == '\0' || (g != NULL && !json_is_array(g)))
		abort();
	json_array_foreach(g, i, x)
	{
		if (!json_is_string(x))
			abort();
	}
}

static void check_attrs(json_t *a)
{
	json_t *ra = json_object_get(a, "resourceAttributes");
	json_t *nra = json_object_get(a, "nonResourceAttributes");

	if (a == NULL)
		return; /* out of memory */
	if ((ra == NULL) == (nra == NULL))
		abort();
	if (ra != NULL && (!json_is_string(json_object_get(ra, "verb")) ||
			      !json_is_string(json_object_get(ra, "resource"))))
		abort();
	if (nra != NULL && !json_is_string(json_object_get(nra, "path")))
		abort();
}

static void headers(
    const struct ctl_vauth_settings *s, const char *h, size_t len)
{
	char *text = cu_strndup(h, len), *line, *save = NULL;
	const char *hv[2 * MAX_HEADERS + 1];
	enum ctl_mauth_who who;
	size_t n = 0;
	json_t *u = NULL;

	if (text == NULL)
		return;
	for (line = strtok_r(text, "\n", &save);
	     line != NULL && n < 2 * MAX_HEADERS;
	     line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':');

		if (colon == NULL)
			continue;
		*colon = '\0';
		hv[n++] = line;
		hv[n++] = colon + 1 + (colon[1] == ' ');
	}
	hv[n] = NULL;
	who = ctl_vauth_headers_user(s, hv, &u);
	check_user(who, u);
	json_decref(u);
	cu_free(text);
}

static void request_line(const char *r, size_t len)
{
	char *text = cu_strndup(r, len), *sp;
	json_t *a;

	if (text == NULL)
		return;
	sp = strchr(text, ' ');
	if (sp != NULL) {
		*sp = '\0';
		a = ctl_vauth_attributes(text, sp + 1);
		check_attrs(a);
		json_decref(a);
	}
	cu_free(text);
}

static void chain(
    const struct ctl_vauth_settings *s, const char *der, size_t len)
{
	struct ctl_http_der c = {(const unsigned char *)der, len};
	const char *ca = s->client_ca_pem ? s->client_ca_pem : s->rh_ca_pem;
	char *cn = NULL;
	json_t *orgs = NULL;
	cu_error err;
	int rc;

	if (ca == NULL || len == 0)
		return;
	cu_error_clear(&err);
	rc = ctl_vauth_verify(&c, 1, ca, &cn, &orgs, &err);
	if (rc == CU_OK && (cn == NULL || !json_is_array(orgs)))
		abort();
	if (rc != CU_OK && rc != CU_ENOMEM && err.msg[0] == '\0')
		abort();
	cu_free(cn);
	json_decref(orgs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size, *cm_text, *h, *r,
		   *der;
	size_t cm_len, h_len, r_len, der_len;
	struct ctl_vauth_settings s;
	json_t *cm;
	cu_error err;

	cm_text = part(&p, end, &cm_len);
	h = part(&p, end, &h_len);
	r = part(&p, end, &r_len);
	der = p;
	der_len = (size_t)(end - p);
	cm = json_loadb(cm_text, cm_len, 0, NULL);
	cu_error_clear(&err);
	if (ctl_vauth_settings_from(&s, cm, &err) != CU_OK) {
		if (err.msg[0] == '\0')
			abort();
		json_decref(cm);
		request_line(r, r_len);
		return 0;
	}
	headers(&s, h, h_len);
	request_line(r, r_len);
	chain(&s, der, der_len);
	ctl_vauth_settings_dispose(&s);
	json_decref(cm);
	return 0;
}
