/* SPDX-License-Identifier: Apache-2.0 */
/*
 * namespaces/selector.c - label selectors: the string grammar of the
 * labelSelector query parameter, requirement validation, matching and the
 * canonical string.
 *
 * The lexer and parser deliberately follow the structure of apimachinery's
 * pkg/labels/selector.go (tokens are scanned up front, then a recursive
 * descent with one token of lookahead), because clients depend on its
 * corner cases: "in"/"notin" are keywords only in operator position,
 * "x in ()" means the set {""}, "x=" means x equals the empty value, and
 * the first error found is the one reported.
 */
#include "namespaces/selector.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- messages ------------------------------------------------------- */

/*
 * Render s (n bytes) for an error message: quoted-style escapes for
 * anything unprintable, truncated, so messages stay one line and short.
 */
static void show(char *out, size_t outn, const char *s, size_t n)
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

#define SHOW_MAX 300

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
		else if (plen > NS_PREFIX_MAX)
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
	else if (nlen > NS_NAME_MAX)
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
	if (n > NS_NAME_MAX)
		reason_add(why, whyn, "must be no more than 63 characters");
	if (n > 0 && !name_chars_ok(v, n))
		reason_add(why, whyn,
		    "a valid label must be an empty string or consist of "
		    "alphanumeric characters, '-', '_' or '.', and must "
		    "start and end with an alphanumeric character (e.g. "
		    "'MyValue', or 'my_value', or '12345')");
	return why[0] == '\0';
}

int ns_validate_label_key(const char *key, const char *field, cu_error *err)
{
	char why[1024], shown[SHOW_MAX];
	if (key_reasons(key, why, sizeof(why)))
		return CU_OK;
	show(shown, sizeof(shown), key, strlen(key));
	if (field != NULL)
		return cu_error_set(err, CU_EINVAL,
		    "%s: Invalid value: \"%s\": %s", field, shown, why);
	return cu_error_set(
	    err, CU_EINVAL, "invalid label key \"%s\": %s", shown, why);
}

int ns_validate_label_value(const char *value, const char *field, cu_error *err)
{
	char why[512], shown[SHOW_MAX];
	if (value_reasons(value, why, sizeof(why)))
		return CU_OK;
	show(shown, sizeof(shown), value, strlen(value));
	if (field != NULL)
		return cu_error_set(err, CU_EINVAL,
		    "%s: Invalid value: \"%s\": %s", field, shown, why);
	return cu_error_set(
	    err, CU_EINVAL, "invalid label value: \"%s\": %s", shown, why);
}

/* strconv.ParseInt(s, 10, 64): optional sign, digits only, in range. */
static bool parse_int64(const char *s, int64_t *out)
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

const char *ns_op_name(enum ns_op op)
{
	switch (op) {
	case NS_OP_IN:
		return "in";
	case NS_OP_NOT_IN:
		return "notin";
	case NS_OP_EXISTS:
		return "exists";
	case NS_OP_DOES_NOT_EXIST:
		return "!";
	case NS_OP_EQUALS:
		return "=";
	case NS_OP_DOUBLE_EQUALS:
		return "==";
	case NS_OP_NOT_EQUALS:
		return "!=";
	case NS_OP_GT:
		return "gt";
	case NS_OP_LT:
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
static int req_check(const char *key, enum ns_op op, const char *const *values,
    size_t n, const char *field, const char *prefix, int code, cu_error *err)
{
	char why[1024], shown[SHOW_MAX], path[512];
	const char *count_msg = NULL;

	if (!key_reasons(key, why, sizeof(why))) {
		show(shown, sizeof(shown), key, strlen(key));
		if (field != NULL)
			return cu_error_set(err, CU_EINVAL,
			    "%s.key: Invalid value: \"%s\": %s", field, shown,
			    why);
		return cu_error_set(err, code, "%sinvalid label key \"%s\": %s",
		    prefix, shown, why);
	}
	switch (op) {
	case NS_OP_IN:
	case NS_OP_NOT_IN:
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
	case NS_OP_EQUALS:
	case NS_OP_DOUBLE_EQUALS:
	case NS_OP_NOT_EQUALS:
		if (n != 1)
			count_msg = "exact-match compatibility requires one "
				    "single value";
		break;
	case NS_OP_EXISTS:
	case NS_OP_DOES_NOT_EXIST:
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
	case NS_OP_GT:
	case NS_OP_LT: {
		int64_t iv;
		if (n != 1)
			count_msg = "for 'Gt', 'Lt' operators, exactly one "
				    "value is required";
		else if (!parse_int64(values[0], &iv))
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
		show(shown, sizeof(shown), values[i], strlen(values[i]));
		if (field != NULL) {
			snprintf(
			    path, sizeof(path), "%s.values[%zu]", field, i);
			return cu_error_set(err, CU_EINVAL,
			    "%s: Invalid value: \"%s\": %s", path, shown, why);
		}
		char kshown[SHOW_MAX];
		show(kshown, sizeof(kshown), key, strlen(key));
		return cu_error_set(err, code,
		    "%sinvalid label value: \"%s\": at key: \"%s\": %s", prefix,
		    shown, kshown, why);
	}
	return CU_OK;
}

/* ---- selector storage ---------------------------------------------- */

void ns_selector_init(ns_selector *sel)
{
	sel->reqs = NULL;
	sel->nreqs = 0;
	sel->match_nothing = false;
}

static void req_dispose(struct ns_requirement *r)
{
	cu_free(r->key);
	for (size_t i = 0; i < r->nvalues; i++)
		cu_free(r->values[i]);
	cu_free(r->values);
}

void ns_selector_dispose(ns_selector *sel)
{
	if (sel == NULL)
		return;
	for (size_t i = 0; i < sel->nreqs; i++)
		req_dispose(&sel->reqs[i]);
	cu_free(sel->reqs);
	ns_selector_init(sel);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Copy a validated requirement in, keeping reqs sorted by key and stable
 * for equal keys (Kubernetes sorts by key only). */
static int req_insert(ns_selector *sel, const char *key, enum ns_op op,
    const char *const *values, size_t n)
{
	struct ns_requirement r = {.op = op};
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
	struct ns_requirement *grown =
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

int ns_selector_add(ns_selector *sel, const char *key, enum ns_op op,
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

/* ---- lexer ---------------------------------------------------------- */

enum tok {
	T_ID,
	T_IN,
	T_NOTIN,
	T_OPEN,
	T_CLOSE,
	T_COMMA,
	T_NOT,
	T_NE,
	T_EQ,
	T_DEQ,
	T_GT,
	T_LT,
	T_EOS,
};

struct token {
	enum tok t;
	const char *p; /* into the input */
	size_t n;
};

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static bool is_special(char c)
{
	return c == '=' || c == '!' || c == '(' || c == ')' || c == ',' ||
	       c == '>' || c == '<';
}

/* One token at *pos; all special symbols are at most two bytes long and
 * every single special byte is a token, so maximal munch suffices. */
static struct token lex(const char *s, size_t *pos)
{
	size_t i = *pos;
	while (is_space(s[i]))
		i++;
	struct token k = {.t = T_EOS, .p = s + i, .n = 0};
	char c = s[i];
	if (c == '\0') {
		*pos = i;
		return k;
	}
	if (is_special(c)) {
		char d = s[i + 1];
		k.n = 1;
		if (c == '!' && d == '=') {
			k.t = T_NE;
			k.n = 2;
		} else if (c == '=' && d == '=') {
			k.t = T_DEQ;
			k.n = 2;
		} else {
			switch (c) {
			case '=':
				k.t = T_EQ;
				break;
			case '!':
				k.t = T_NOT;
				break;
			case '(':
				k.t = T_OPEN;
				break;
			case ')':
				k.t = T_CLOSE;
				break;
			case ',':
				k.t = T_COMMA;
				break;
			case '>':
				k.t = T_GT;
				break;
			default:
				k.t = T_LT;
				break;
			}
		}
		*pos = i + k.n;
		return k;
	}
	size_t j = i;
	while (s[j] != '\0' && !is_space(s[j]) && !is_special(s[j]))
		j++;
	k.n = j - i;
	if (k.n == 2 && memcmp(k.p, "in", 2) == 0)
		k.t = T_IN;
	else if (k.n == 5 && memcmp(k.p, "notin", 5) == 0)
		k.t = T_NOTIN;
	else
		k.t = T_ID;
	*pos = j;
	return k;
}

/* ---- parser --------------------------------------------------------- */

struct parser {
	struct token *toks;
	size_t pos;
	cu_error *err;
};

/* In value/key position the keywords are ordinary identifiers. */
static struct token peek_v(const struct parser *p)
{
	struct token k = p->toks[p->pos];
	if (k.t == T_IN || k.t == T_NOTIN)
		k.t = T_ID;
	return k;
}

static struct token next_v(struct parser *p)
{
	struct token k = peek_v(p);
	if (k.t != T_EOS)
		p->pos++;
	return k;
}

static int fail_tok(
    struct parser *p, bool in_req, struct token k, const char *expected)
{
	char shown[SHOW_MAX];
	show(shown, sizeof(shown), k.p, k.n);
	return cu_error_set(p->err, CU_EPARSE, "%sfound '%s', expected: %s",
	    in_req ? "unable to parse requirement: " : "", shown, expected);
}

/* A growing list of owned value strings for one requirement. */
struct vlist {
	char **v;
	size_t n;
};

static void vlist_dispose(struct vlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		cu_free(l->v[i]);
	cu_free(l->v);
	l->v = NULL;
	l->n = 0;
}

static int vlist_add(struct parser *p, struct vlist *l, const char *s, size_t n)
{
	char *copy = cu_strndup(s, n);
	char **grown =
	    copy ? cu_realloc(l->v, (l->n + 1) * sizeof(*grown)) : NULL;
	if (grown == NULL) {
		cu_free(copy);
		return cu_error_set(
		    p->err, CU_ENOMEM, "label selector: out of memory");
	}
	l->v = grown;
	l->v[l->n++] = copy;
	return CU_OK;
}

/* "(" [ VALUE ("," VALUE)* ] ")" with Kubernetes' handling of empty
 * members: "()" "(,a)" "(a,)" "(a,,b)" all contain "". */
static int parse_values(struct parser *p, struct vlist *l)
{
	struct token k = next_v(p);
	if (k.t != T_OPEN)
		return fail_tok(p, true, k, "'('");
	k = peek_v(p);
	if (k.t == T_CLOSE) {
		next_v(p);
		return vlist_add(p, l, "", 0);
	}
	if (k.t != T_ID && k.t != T_COMMA)
		return fail_tok(p, true, k, "',', ')' or identifier");
	for (;;) {
		k = next_v(p);
		if (k.t == T_ID) {
			int rc = vlist_add(p, l, k.p, k.n);
			if (rc != CU_OK)
				return rc;
			struct token k2 = peek_v(p);
			if (k2.t == T_COMMA)
				continue;
			if (k2.t == T_CLOSE)
				break;
			return fail_tok(p, true, k2, "',' or ')'");
		}
		if (k.t != T_COMMA)
			return fail_tok(p, true, k, "',', or identifier");
		if (l->n == 0 && vlist_add(p, l, "", 0) != CU_OK)
			return CU_ENOMEM;
		struct token k2 = peek_v(p);
		if (k2.t == T_CLOSE) {
			if (vlist_add(p, l, "", 0) != CU_OK)
				return CU_ENOMEM;
			break;
		}
		if (k2.t == T_COMMA) {
			next_v(p);
			if (vlist_add(p, l, "", 0) != CU_OK)
				return CU_ENOMEM;
		}
	}
	next_v(p); /* the ')' seen by lookahead */
	return CU_OK;
}

static int parse_requirement(struct parser *p, ns_selector *sel)
{
	bool not_exist = false;
	struct token k = next_v(p);
	if (k.t == T_NOT) {
		not_exist = true;
		k = next_v(p);
	}
	if (k.t != T_ID)
		return fail_tok(p, true, k, "identifier");
	char *key = cu_strndup(k.p, k.n);
	if (key == NULL)
		return cu_error_set(
		    p->err, CU_ENOMEM, "label selector: out of memory");
	struct vlist vals = {0};
	enum ns_op op = NS_OP_EXISTS;
	int rc;
	{
		char why[1024];
		if (!key_reasons(key, why, sizeof(why))) {
			char shown[SHOW_MAX];
			show(shown, sizeof(shown), key, strlen(key));
			rc = cu_error_set(p->err, CU_EPARSE,
			    "unable to parse requirement: invalid label key "
			    "\"%s\": %s",
			    shown, why);
			goto out;
		}
	}
	struct token la = peek_v(p);
	if (not_exist) {
		op = NS_OP_DOES_NOT_EXIST;
	} else if (la.t == T_EOS || la.t == T_COMMA) {
		op = NS_OP_EXISTS;
	} else {
		/* Operator position: keywords count as keywords here. */
		struct token o = p->toks[p->pos];
		if (o.t != T_EOS)
			p->pos++;
		switch (o.t) {
		case T_IN:
			op = NS_OP_IN;
			break;
		case T_NOTIN:
			op = NS_OP_NOT_IN;
			break;
		case T_EQ:
			op = NS_OP_EQUALS;
			break;
		case T_DEQ:
			op = NS_OP_DOUBLE_EQUALS;
			break;
		case T_NE:
			op = NS_OP_NOT_EQUALS;
			break;
		case T_GT:
			op = NS_OP_GT;
			break;
		case T_LT:
			op = NS_OP_LT;
			break;
		default:
			rc = fail_tok(
			    p, true, o, "in, notin, =, ==, !=, gt, lt");
			goto out;
		}
		if (op == NS_OP_IN || op == NS_OP_NOT_IN) {
			rc = parse_values(p, &vals);
			if (rc != CU_OK)
				goto out;
		} else {
			/* "x=" (nothing before ',' or the end) is x == "". */
			struct token v = peek_v(p);
			if (v.t == T_EOS || v.t == T_COMMA) {
				rc = vlist_add(p, &vals, "", 0);
			} else {
				next_v(p);
				if (v.t != T_ID)
					rc = fail_tok(p, true, v, "identifier");
				else
					rc = vlist_add(p, &vals, v.p, v.n);
			}
			if (rc != CU_OK)
				goto out;
		}
	}
	rc = req_check(key, op, (const char *const *)vals.v, vals.n, NULL,
	    "unable to parse requirement: ", CU_EPARSE, p->err);
	if (rc == CU_OK && req_insert(sel, key, op, (const char *const *)vals.v,
			       vals.n) != CU_OK)
		rc = cu_error_set(
		    p->err, CU_ENOMEM, "label selector: out of memory");
out:
	cu_free(key);
	vlist_dispose(&vals);
	return rc;
}

static int parse_all(struct parser *p, ns_selector *sel)
{
	for (;;) {
		struct token k = peek_v(p);
		if (k.t == T_EOS)
			return CU_OK;
		if (k.t != T_ID && k.t != T_NOT)
			return fail_tok(
			    p, false, k, "!, identifier, or 'end of string'");
		int rc = parse_requirement(p, sel);
		if (rc != CU_OK)
			return rc;
		k = next_v(p);
		if (k.t == T_EOS)
			return CU_OK;
		if (k.t != T_COMMA)
			return fail_tok(p, false, k, "',' or 'end of string'");
		k = peek_v(p);
		if (k.t != T_ID && k.t != T_NOT)
			return fail_tok(p, false, k, "identifier after ','");
	}
}

int ns_selector_parse(ns_selector *out, const char *s, cu_error *err)
{
	ns_selector_init(out);
	if (s == NULL)
		return CU_OK;
	size_t len = strlen(s);
	if (len > NS_SELECTOR_MAX)
		return cu_error_set(err, CU_EPARSE,
		    "label selector is too long: %zu bytes, at most %d", len,
		    NS_SELECTOR_MAX);
	/* Every token but EOS consumes at least one byte. */
	struct token *toks = cu_calloc(len + 1, sizeof(*toks));
	if (toks == NULL)
		return cu_error_set(
		    err, CU_ENOMEM, "label selector: out of memory");
	size_t pos = 0, nt = 0;
	do {
		toks[nt] = lex(s, &pos);
	} while (toks[nt++].t != T_EOS);
	struct parser p = {.toks = toks, .pos = 0, .err = err};
	int rc = parse_all(&p, out);
	cu_free(toks);
	if (rc != CU_OK)
		ns_selector_dispose(out);
	return rc;
}

/* ---- matching ------------------------------------------------------- */

static bool has_value(const struct ns_requirement *r, const char *v)
{
	for (size_t i = 0; i < r->nvalues; i++)
		if (strcmp(r->values[i], v) == 0)
			return true;
	return false;
}

static bool req_matches(
    const struct ns_requirement *r, ns_label_get get, void *payload)
{
	const char *v = get(r->key, payload);
	switch (r->op) {
	case NS_OP_IN:
	case NS_OP_EQUALS:
	case NS_OP_DOUBLE_EQUALS:
		return v != NULL && has_value(r, v);
	case NS_OP_NOT_IN:
	case NS_OP_NOT_EQUALS:
		return v == NULL || !has_value(r, v);
	case NS_OP_EXISTS:
		return v != NULL;
	case NS_OP_DOES_NOT_EXIST:
		return v == NULL;
	case NS_OP_GT:
	case NS_OP_LT: {
		int64_t have, want;
		if (v == NULL || r->nvalues != 1 || !parse_int64(v, &have) ||
		    !parse_int64(r->values[0], &want))
			return false;
		return r->op == NS_OP_GT ? have > want : have < want;
	}
	}
	return false;
}

bool ns_selector_matches(
    const ns_selector *sel, ns_label_get get, void *payload)
{
	if (sel->match_nothing)
		return false;
	for (size_t i = 0; i < sel->nreqs; i++)
		if (!req_matches(&sel->reqs[i], get, payload))
			return false;
	return true;
}

struct pairs {
	const char *const *kv;
	size_t n;
};

static const char *pairs_get(const char *key, void *payload)
{
	const struct pairs *ps = payload;
	for (size_t i = 0; i < ps->n; i++)
		if (strcmp(ps->kv[2 * i], key) == 0)
			return ps->kv[2 * i + 1];
	return NULL;
}

bool ns_selector_matches_pairs(
    const ns_selector *sel, const char *const *kv, size_t npairs)
{
	struct pairs ps = {.kv = kv, .n = npairs};
	return ns_selector_matches(sel, pairs_get, &ps);
}

/* ---- canonical string ---------------------------------------------- */

static int req_string(cu_buf *b, const struct ns_requirement *r)
{
	int rc = CU_OK;
	if (r->op == NS_OP_DOES_NOT_EXIST)
		rc = cu_buf_adds(b, "!");
	if (rc == CU_OK)
		rc = cu_buf_adds(b, r->key);
	if (rc != CU_OK || r->op == NS_OP_EXISTS ||
	    r->op == NS_OP_DOES_NOT_EXIST)
		return rc;
	static const char *const ops[] = {
	    [NS_OP_IN] = " in (",
	    [NS_OP_NOT_IN] = " notin (",
	    [NS_OP_EQUALS] = "=",
	    [NS_OP_DOUBLE_EQUALS] = "==",
	    [NS_OP_NOT_EQUALS] = "!=",
	    [NS_OP_GT] = ">",
	    [NS_OP_LT] = "<",
	};
	rc = cu_buf_adds(b, ops[r->op]);
	for (size_t i = 0; rc == CU_OK && i < r->nvalues; i++) {
		if (i > 0)
			rc = cu_buf_adds(b, ",");
		if (rc == CU_OK)
			rc = cu_buf_adds(b, r->values[i]);
	}
	if (rc == CU_OK && (r->op == NS_OP_IN || r->op == NS_OP_NOT_IN))
		rc = cu_buf_adds(b, ")");
	return rc;
}

char *ns_selector_string(const ns_selector *sel)
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
