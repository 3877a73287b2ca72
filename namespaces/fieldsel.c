/* SPDX-License-Identifier: Apache-2.0 */
/*
 * namespaces/fieldsel.c - field selectors (the fieldSelector query
 * parameter): "a=b,c!=d,e==f", values escaping '\', ',' and '='.
 *
 * Follows apimachinery pkg/fields/selector.go: the string is split on
 * unescaped commas, the parts are sorted bytewise (so errors and the
 * canonical string do not depend on the client's order), each part is cut
 * at its first operator, and the right-hand side is unescaped. Field names
 * are not validated here: which fields exist is the API server's call.
 */
#include "namespaces/selector.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ns_fieldsel_init(ns_fieldsel *fs)
{
	fs->terms = NULL;
	fs->nterms = 0;
}

void ns_fieldsel_dispose(ns_fieldsel *fs)
{
	if (fs == NULL)
		return;
	for (size_t i = 0; i < fs->nterms; i++) {
		cu_free(fs->terms[i].field);
		cu_free(fs->terms[i].value);
	}
	cu_free(fs->terms);
	ns_fieldsel_init(fs);
}

/* One-line, bounded rendering of user input for messages. */
static void show(char *out, size_t outn, const char *s, size_t n)
{
	size_t o = 0, limit = n > 96 ? 96 : n;
	for (size_t i = 0; i < limit && o + 5 < outn; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c >= 0x7f)
			o += (size_t)snprintf(out + o, outn - o, "\\x%02x", c);
		else
			out[o++] = (char)c;
	}
	if (n > limit && o + 4 < outn) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
}

#define SHOW_BUF 400

struct part {
	const char *p;
	size_t n;
};

static int cmp_part(const void *a, const void *b)
{
	const struct part *x = a, *y = b;
	size_t m = x->n < y->n ? x->n : y->n;
	int c = memcmp(x->p, y->p, m);
	if (c != 0)
		return c;
	return (x->n > y->n) - (x->n < y->n);
}

/* UnescapeValue: the only escapes are \\ \, \= and a bare ',' or '=' is
 * an error. out has room for n + 1 bytes. */
static int unescape(const char *s, size_t n, char *out, cu_error *err)
{
	size_t o = 0;
	bool in_slash = false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (in_slash) {
			if (c != '\\' && c != ',' && c != '=') {
				char seq[3] = {'\\', c, '\0'};
				char shown[16];
				show(shown, sizeof(shown), seq, 2);
				return cu_error_set(err, CU_EPARSE,
				    "invalid field selector: invalid escape "
				    "sequence: %s",
				    shown);
			}
			out[o++] = c;
			in_slash = false;
			continue;
		}
		if (c == '\\')
			in_slash = true;
		else if (c == ',' || c == '=')
			return cu_error_set(err, CU_EPARSE,
			    "invalid field selector: unescaped character in "
			    "value: %c",
			    c);
		else
			out[o++] = c;
	}
	if (in_slash)
		return cu_error_set(err, CU_EPARSE,
		    "invalid field selector: invalid escape sequence: \\");
	out[o] = '\0';
	return CU_OK;
}

/* Cut a part at its first operator, trying "!=" then "==" then "=" at
 * each position, as splitTerm does. */
static bool split_term(struct part t, size_t *lhs_n, size_t *op_n, bool *negate)
{
	for (size_t i = 0; i < t.n; i++) {
		const char *r = t.p + i;
		size_t left = t.n - i;
		if (left >= 2 && r[0] == '!' && r[1] == '=') {
			*lhs_n = i;
			*op_n = 2;
			*negate = true;
			return true;
		}
		if (left >= 2 && r[0] == '=' && r[1] == '=') {
			*lhs_n = i;
			*op_n = 2;
			*negate = false;
			return true;
		}
		if (r[0] == '=') {
			*lhs_n = i;
			*op_n = 1;
			*negate = false;
			return true;
		}
	}
	return false;
}

int ns_fieldsel_parse(ns_fieldsel *out, const char *s, cu_error *err)
{
	ns_fieldsel_init(out);
	if (s == NULL || *s == '\0')
		return CU_OK;
	size_t len = strlen(s);
	if (len > NS_SELECTOR_MAX)
		return cu_error_set(err, CU_EPARSE,
		    "field selector is too long: %zu bytes, at most %d", len,
		    NS_SELECTOR_MAX);

	/* Split on commas not preceded by an escaping backslash. */
	size_t nparts = 1;
	bool in_slash = false;
	for (size_t i = 0; i < len; i++) {
		if (in_slash)
			in_slash = false;
		else if (s[i] == '\\')
			in_slash = true;
		else if (s[i] == ',')
			nparts++;
	}
	struct part *parts = cu_calloc(nparts, sizeof(*parts));
	if (parts == NULL)
		return cu_error_set(
		    err, CU_ENOMEM, "field selector: out of memory");
	size_t np = 0, start = 0;
	in_slash = false;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && in_slash) {
			in_slash = false;
			continue;
		}
		if (i < len && s[i] == '\\') {
			in_slash = true;
			continue;
		}
		if (i == len || s[i] == ',') {
			parts[np].p = s + start;
			parts[np].n = i - start;
			np++;
			start = i + 1;
		}
	}
	qsort(parts, np, sizeof(*parts), cmp_part);

	int rc = CU_OK;
	out->terms = cu_calloc(np, sizeof(*out->terms));
	if (out->terms == NULL) {
		rc = cu_error_set(
		    err, CU_ENOMEM, "field selector: out of memory");
		goto done;
	}
	for (size_t i = 0; i < np; i++) {
		if (parts[i].n == 0)
			continue;
		size_t lhs_n, op_n;
		bool negate;
		if (!split_term(parts[i], &lhs_n, &op_n, &negate)) {
			char whole[SHOW_BUF], part[SHOW_BUF];
			show(whole, sizeof(whole), s, len);
			show(part, sizeof(part), parts[i].p, parts[i].n);
			rc = cu_error_set(err, CU_EPARSE,
			    "invalid selector: '%s'; can't understand '%s'",
			    whole, part);
			goto done;
		}
		const char *rhs = parts[i].p + lhs_n + op_n;
		size_t rhs_n = parts[i].n - lhs_n - op_n;
		struct ns_field_term *t = &out->terms[out->nterms];
		t->field = cu_strndup(parts[i].p, lhs_n);
		t->value = cu_malloc(rhs_n + 1);
		t->negate = negate;
		out->nterms++; /* owned from here, even if half-built */
		if (t->field == NULL || t->value == NULL) {
			rc = cu_error_set(
			    err, CU_ENOMEM, "field selector: out of memory");
			goto done;
		}
		rc = unescape(rhs, rhs_n, t->value, err);
		if (rc != CU_OK)
			goto done;
	}
done:
	cu_free(parts);
	if (rc != CU_OK)
		ns_fieldsel_dispose(out);
	return rc;
}

bool ns_fieldsel_matches(const ns_fieldsel *fs, ns_label_get get, void *payload)
{
	for (size_t i = 0; i < fs->nterms; i++) {
		const struct ns_field_term *t = &fs->terms[i];
		/* Kubernetes' Fields.Get yields "" for a missing field. */
		const char *v = get(t->field, payload);
		bool eq = strcmp(v ? v : "", t->value) == 0;
		if (eq == t->negate)
			return false;
	}
	return true;
}

const char *ns_fieldsel_required_value(const ns_fieldsel *fs, const char *field)
{
	for (size_t i = 0; i < fs->nterms; i++)
		if (!fs->terms[i].negate &&
		    strcmp(fs->terms[i].field, field) == 0)
			return fs->terms[i].value;
	return NULL;
}

char *ns_fieldsel_string(const ns_fieldsel *fs)
{
	cu_buf b;
	cu_buf_init(&b, SIZE_MAX / 2);
	int rc = CU_OK;
	for (size_t i = 0; rc == CU_OK && i < fs->nterms; i++) {
		const struct ns_field_term *t = &fs->terms[i];
		if (i > 0)
			rc = cu_buf_adds(&b, ",");
		if (rc == CU_OK)
			rc = cu_buf_adds(&b, t->field);
		if (rc == CU_OK)
			rc = cu_buf_adds(&b, t->negate ? "!=" : "=");
		for (const char *c = t->value; rc == CU_OK && *c; c++) {
			if (*c == '\\' || *c == ',' || *c == '=')
				rc = cu_buf_add(&b, "\\", 1);
			if (rc == CU_OK)
				rc = cu_buf_add(&b, c, 1);
		}
	}
	if (rc != CU_OK)
		return NULL;
	return cu_buf_detach(&b, NULL);
}
