/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/selector.c - the label-selector value (api/labelselector.h): its
 * storage, the requirement checks Kubernetes applies on construction
 * (qualified-name keys, label values, value counts per operator) and the
 * canonical string. Parsing the string form and matching live in
 * namespaces/selector.c; the JSON codec in api/labelselector.c.
 */
#include "api/labelselector.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- messages ------------------------------------------------------- */

/*
 * Render s (n bytes) for an error message: quoted-style escapes for
 * anything unprintable, truncated, so messages stay one line and short.
 */
void api_selector_show(char *out, size_t outn, const char *s, size_t n)
{
	size_t o = 0;
	size_t limit = n > 64 ? 64 : n;
	for (size_t i = 0; i < limit && o + 5 < outn; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
			o += (size_t)snprintf(out + o, outn - o, "\\x%02x", c);
		} else {
			out[o++] = (char)c;
		}
	}
	if (n > limit && o + 4 < outn) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
}

static const char name_charset_msg[] =
    "must consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyName', or "
    "'my.name', or '123-abc')";

static bool is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9');
}

static bool is_lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])? over n > 0 bytes. */
static bool name_chars_ok(const char *s, size_t n)
{
	if (n == 0 || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' &&
		    s[i] != '.')
			return false;
	return true;
}

/* RFC 1123 subdomain: dot-separated labels of [a-z0-9]([-a-z0-9]*[a-z0-9])?*/
static bool dns_subdomain_ok(const char *s, size_t n)
{
	size_t start = 0;
	for (size_t i = 0; i <= n; i++) {
		if (i < n && s[i] != '.') {
			if (!is_lower_alnum(s[i]) && s[i] != '-')
				return false;
			continue;
		}
		if (i == start || !is_lower_alnum(s[start]) ||
		    !is_lower_alnum(s[i - 1]))
			return false;
		start = i + 1;
	}
	return true;
}

/* Append "; " between reasons, as Kubernetes joins its error lists. */
static void reason_add(char *out, size_t outn, const char *msg)
{
	size_t o = strlen(out);
	snprintf(out + o, outn - o, "%s%s", o ? "; " : "", msg);
}

/* IsQualifiedName: true when valid; else the reasons are written to why. */
static bool key_reasons(const char *key, char *why, size_t whyn)
{
	why[0] = '\0';
	const char *slash = strchr(key, '/');
	const char *name = key;
	if (slash != NULL) {
		if (strchr(slash + 1, '/') != NULL) {
			reason_add(why, whyn,
			    "a qualified name must consist of alphanumeric "
			    "characters, '-', '_' or '.', and must start and "
			    "end with an alphanumeric character with an "
			    "optional DNS subdomain prefix and '/' (e.g. "
			    "'example.com/MyName')");
			return false;
		}
		size_t plen = (size_t)(slash - key);
		if (plen == 0)
			reason_add(why, whyn, "prefix part must be non-empty");
		else if (plen > API_LABEL_PREFIX_MAX)
			reason_add(why, whyn,
			    "prefix part must be no more than 253 characters");
		else if (!dns_subdomain_ok(key, plen))
			reason_add(why, whyn,
			    "prefix part a lowercase RFC 1123 subdomain must "
			    "consist of lower case alphanumeric characters, "
			    "'-' or '.', and must start and end with an "
			    "alphanumeric character (e.g. 'example.com')");
		name = slash + 1;
	}
	size_t nlen = strlen(name);
	if (nlen == 0)
		reason_add(why, whyn, "name part must be non-empty");
	else if (nlen > API_LABEL_NAME_MAX)
		reason_add(
		    why, whyn, "name part must be no more than 63 characters");
	if (!name_chars_ok(name, nlen)) {
		char m[256];
		snprintf(m, sizeof(m), "name part %s", name_charset_msg);
		reason_add(why, whyn, m);
	}
	return why[0] == '\0';
}

/* IsValidLabelValue. */
static bool value_reasons(const char *v, char *why, size_t whyn)
{
	why[0] = '\0';
	size_t n = strlen(v);
	if (n > API_LABEL_NAME_MAX)
		reason_add(why, whyn, "must be no more than 63 characters");
	if (n > 0 && !name_chars_ok(v, n))
		reason_add(why, whyn,
		    "a valid label must be an empty string or consist of "
		    "alphanumeric characters, '-', '_' or '.', and must "
		    "start and end with an alphanumeric character (e.g. "
		    "'MyValue', or 'my_value', or '12345')");
	return why[0] == '\0';
}

int api_validate_label_key(const char *key, const char *field, cu_error *err)
{
	char why[1024], shown[API_SELECTOR_SHOW_MAX];
	if (field == NULL)
		return api_selector_check_key(key, "", CU_EINVAL, err);
	if (key_reasons(key, why, sizeof(why)))
		return CU_OK;
	api_selector_show(shown, sizeof(shown), key, strlen(key));
	return cu_error_set(
	    err, CU_EINVAL, "%s: Invalid value: \"%s\": %s", field, shown, why);
}

int api_selector_check_key(
    const char *key, const char *prefix, int code, cu_error *err)
{
	char why[1024], shown[API_SELECTOR_SHOW_MAX];
	if (key_reasons(key, why, sizeof(why)))
		return CU_OK;
	api_selector_show(shown, sizeof(shown), key, strlen(key));
	return cu_error_set(
	    err, code, "%sinvalid label key \"%s\": %s", prefix, shown, why);
}

int api_validate_label_value(
    const char *value, const char *field, cu_error *err)
{
	char why[512], shown[API_SELECTOR_SHOW_MAX];
	if (value_reasons(value, why, sizeof(why)))
		return CU_OK;
	api_selector_show(shown, sizeof(shown), value, strlen(value));
	if (field != NULL)
		return cu_error_set(err, CU_EINVAL,
		    "%s: Invalid value: \"%s\": %s", field, shown, why);
	return cu_error_set(
	    err, CU_EINVAL, "invalid label value: \"%s\": %s", shown, why);
}

/* strconv.ParseInt(s, 10, 64): optional sign, digits only, in range. */
bool api_selector_int64(const char *s, int64_t *out)
{
	bool neg = false;
	if (*s == '+' || *s == '-') {
		neg = *s == '-';
		s++;
	}
	if (*s == '\0')
		return false;
	uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : INT64_MAX;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		unsigned d = (unsigned)(*s - '0');
		if (v > (lim - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return true;
}

const char *api_sel_op_name(enum api_sel_op op)
{
	switch (op) {
	case API_SEL_OP_IN:
		return "in";
	case API_SEL_OP_NOT_IN:
		return "notin";
	case API_SEL_OP_EXISTS:
		return "exists";
	case API_SEL_OP_DOES_NOT_EXIST:
		return "!";
	case API_SEL_OP_EQUALS:
		return "=";
	case API_SEL_OP_DOUBLE_EQUALS:
		return "==";
	case API_SEL_OP_NOT_EQUALS:
		return "!=";
	case API_SEL_OP_GT:
		return "gt";
	case API_SEL_OP_LT:
		return "lt";
	}
	return "?";
}

/*
 * NewRequirement's checks. With `field` the message is a field-path error
 * ("<field>.values: Required value: ..."); without it, the message is the
 * one Kubernetes gives for a string selector, after `prefix`. `code` is
 * CU_EPARSE for the parser and CU_EINVAL for structured callers.
 */
static int req_check(const char *key, enum api_sel_op op,
    const char *const *values, size_t n, const char *field, const char *prefix,
    int code, cu_error *err)
{
	char why[1024], shown[API_SELECTOR_SHOW_MAX], path[512];
	const char *count_msg = NULL;

	if (field == NULL) {
		int rc = api_selector_check_key(key, prefix, code, err);
		if (rc != CU_OK)
			return rc;
	} else if (!key_reasons(key, why, sizeof(why))) {
		api_selector_show(shown, sizeof(shown), key, strlen(key));
		return cu_error_set(err, CU_EINVAL,
		    "%s.key: Invalid value: \"%s\": %s", field, shown, why);
	}
	switch (op) {
	case API_SEL_OP_IN:
	case API_SEL_OP_NOT_IN:
		if (n == 0) {
			if (field != NULL)
				return cu_error_set(err, CU_EINVAL,
				    "%s.values: Required value: must be "
				    "specified when `operator` is 'In' or "
				    "'NotIn'",
				    field);
			count_msg = "for 'in', 'notin' operators, values set "
				    "can't be empty";
		}
		break;
	case API_SEL_OP_EQUALS:
	case API_SEL_OP_DOUBLE_EQUALS:
	case API_SEL_OP_NOT_EQUALS:
		if (n != 1)
			count_msg = "exact-match compatibility requires one "
				    "single value";
		break;
	case API_SEL_OP_EXISTS:
	case API_SEL_OP_DOES_NOT_EXIST:
		if (n != 0) {
			if (field != NULL)
				return cu_error_set(err, CU_EINVAL,
				    "%s.values: Forbidden: may not be "
				    "specified when `operator` is 'Exists' or "
				    "'DoesNotExist'",
				    field);
			count_msg = "values set must be empty for exists and "
				    "does not exist";
		}
		break;
	case API_SEL_OP_GT:
	case API_SEL_OP_LT: {
		int64_t iv;
		if (n != 1)
			count_msg = "for 'Gt', 'Lt' operators, exactly one "
				    "value is required";
		else if (!api_selector_int64(values[0], &iv))
			count_msg = "for 'Gt', 'Lt' operators, the value must "
				    "be an integer";
		break;
	}
	default:
		if (field != NULL)
			return cu_error_set(err, CU_EINVAL,
			    "%s.operator: Unsupported value: %d", field,
			    (int)op);
		return cu_error_set(err, code,
		    "%soperator '%d' is not recognized", prefix, (int)op);
	}
	if (count_msg != NULL) {
		if (field != NULL)
			return cu_error_set(err, CU_EINVAL,
			    "%s.values: Invalid value: %zu: %s", field, n,
			    count_msg);
		return cu_error_set(err, code, "%s%s", prefix, count_msg);
	}
	for (size_t i = 0; i < n; i++) {
		if (value_reasons(values[i], why, sizeof(why)))
			continue;
		api_selector_show(
		    shown, sizeof(shown), values[i], strlen(values[i]));
		if (field != NULL) {
			snprintf(
			    path, sizeof(path), "%s.values[%zu]", field, i);
			return cu_error_set(err, CU_EINVAL,
			    "%s: Invalid value: \"%s\": %s", path, shown, why);
		}
		char kshown[API_SELECTOR_SHOW_MAX];
		api_selector_show(kshown, sizeof(kshown), key, strlen(key));
		return cu_error_set(err, code,
		    "%sinvalid label value: \"%s\": at key: \"%s\": %s", prefix,
		    shown, kshown, why);
	}
	return CU_OK;
}

/* ---- selector storage ---------------------------------------------- */

void api_selector_init(api_selector *sel)
{
	sel->reqs = NULL;
	sel->nreqs = 0;
	sel->match_nothing = false;
}

static void req_dispose(struct api_requirement *r)
{
	cu_free(r->key);
	for (size_t i = 0; i < r->nvalues; i++)
		cu_free(r->values[i]);
	cu_free(r->values);
}

void api_selector_dispose(api_selector *sel)
{
	if (sel == NULL)
		return;
	for (size_t i = 0; i < sel->nreqs; i++)
		req_dispose(&sel->reqs[i]);
	cu_free(sel->reqs);
	api_selector_init(sel);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Copy a validated requirement in, keeping reqs sorted by key and stable
 * for equal keys (Kubernetes sorts by key only). */
static int req_insert(api_selector *sel, const char *key, enum api_sel_op op,
    const char *const *values, size_t n)
{
	struct api_requirement r = {.op = op};
	r.key = cu_strdup(key);
	if (r.key == NULL)
		return CU_ENOMEM;
	if (n > 0) {
		r.values = cu_calloc(n, sizeof(*r.values));
		if (r.values == NULL)
			goto nomem;
		for (size_t i = 0; i < n; i++) {
			r.values[i] = cu_strdup(values[i]);
			if (r.values[i] == NULL)
				goto nomem;
			r.nvalues++;
		}
		/* Set semantics: sorted and de-duplicated, like sets.String. */
		qsort(r.values, r.nvalues, sizeof(*r.values), cmp_str);
		size_t w = 1;
		for (size_t i = 1; i < r.nvalues; i++) {
			if (strcmp(r.values[i], r.values[w - 1]) == 0)
				cu_free(r.values[i]);
			else
				r.values[w++] = r.values[i];
		}
		r.nvalues = w;
	}
	struct api_requirement *grown =
	    cu_realloc(sel->reqs, (sel->nreqs + 1) * sizeof(*grown));
	if (grown == NULL)
		goto nomem;
	sel->reqs = grown;
	size_t at = sel->nreqs;
	while (at > 0 && strcmp(sel->reqs[at - 1].key, r.key) > 0)
		at--;
	memmove(&sel->reqs[at + 1], &sel->reqs[at],
	    (sel->nreqs - at) * sizeof(*sel->reqs));
	sel->reqs[at] = r;
	sel->nreqs++;
	return CU_OK;
nomem:
	req_dispose(&r);
	return CU_ENOMEM;
}

int api_selector_add(api_selector *sel, const char *key, enum api_sel_op op,
    const char *const *values, size_t nvalues, const char *field, cu_error *err)
{
	int rc = req_check(key, op, values, nvalues, field, "", CU_EINVAL, err);
	if (rc != CU_OK)
		return rc;
	if (req_insert(sel, key, op, values, nvalues) != CU_OK)
		return cu_error_set(err, CU_ENOMEM,
		    "%s%sout of memory adding label requirement",
		    field ? field : "", field ? ": " : "");
	return CU_OK;
}

/* ---- canonical string ---------------------------------------------- */

static int req_string(cu_buf *b, const struct api_requirement *r)
{
	int rc = CU_OK;
	if (r->op == API_SEL_OP_DOES_NOT_EXIST)
		rc = cu_buf_adds(b, "!");
	if (rc == CU_OK)
		rc = cu_buf_adds(b, r->key);
	if (rc != CU_OK || r->op == API_SEL_OP_EXISTS ||
	    r->op == API_SEL_OP_DOES_NOT_EXIST)
		return rc;
	static const char *const ops[] = {
	    [API_SEL_OP_IN] = " in (",
	    [API_SEL_OP_NOT_IN] = " notin (",
	    [API_SEL_OP_EQUALS] = "=",
	    [API_SEL_OP_DOUBLE_EQUALS] = "==",
	    [API_SEL_OP_NOT_EQUALS] = "!=",
	    [API_SEL_OP_GT] = ">",
	    [API_SEL_OP_LT] = "<",
	};
	rc = cu_buf_adds(b, ops[r->op]);
	for (size_t i = 0; rc == CU_OK && i < r->nvalues; i++) {
		if (i > 0)
			rc = cu_buf_adds(b, ",");
		if (rc == CU_OK)
			rc = cu_buf_adds(b, r->values[i]);
	}
	if (rc == CU_OK &&
	    (r->op == API_SEL_OP_IN || r->op == API_SEL_OP_NOT_IN))
		rc = cu_buf_adds(b, ")");
	return rc;
}

char *api_selector_string(const api_selector *sel)
{
	cu_buf b;
	cu_buf_init(&b, SIZE_MAX / 2);
	for (size_t i = 0; i < sel->nreqs; i++) {
		if (i > 0 && cu_buf_adds(&b, ",") != CU_OK)
			return NULL;
		if (req_string(&b, &sel->reqs[i]) != CU_OK)
			return NULL;
	}
	return cu_buf_detach(&b, NULL);
}

int api_selector_add_parsed(api_selector *sel, const char *key,
    enum api_sel_op op, const char *const *values, size_t nvalues,
    const char *prefix, cu_error *err)
{
	int rc =
	    req_check(key, op, values, nvalues, NULL, prefix, CU_EPARSE, err);
	if (rc != CU_OK)
		return rc;
	if (req_insert(sel, key, op, values, nvalues) != CU_OK)
		return cu_error_set(
		    err, CU_ENOMEM, "label selector: out of memory");
	return CU_OK;
}
