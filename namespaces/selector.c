/* SPDX-License-Identifier: Apache-2.0 */
/*
 * namespaces/selector.c - label selectors: the string grammar of the
 * labelSelector query parameter and matching. The value itself, its
 * requirement checks and canonical string are api/selector.c's.
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
	char shown[API_SELECTOR_SHOW_MAX];
	api_selector_show(shown, sizeof(shown), k.p, k.n);
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

static int parse_requirement(struct parser *p, api_selector *sel)
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
	enum api_sel_op op = API_SEL_OP_EXISTS;
	int rc;
	rc = api_selector_check_key(
	    key, "unable to parse requirement: ", CU_EPARSE, p->err);
	if (rc != CU_OK)
		goto out;
	struct token la = peek_v(p);
	if (not_exist) {
		op = API_SEL_OP_DOES_NOT_EXIST;
	} else if (la.t == T_EOS || la.t == T_COMMA) {
		op = API_SEL_OP_EXISTS;
	} else {
		/* Operator position: keywords count as keywords here. */
		struct token o = p->toks[p->pos];
		if (o.t != T_EOS)
			p->pos++;
		switch (o.t) {
		case T_IN:
			op = API_SEL_OP_IN;
			break;
		case T_NOTIN:
			op = API_SEL_OP_NOT_IN;
			break;
		case T_EQ:
			op = API_SEL_OP_EQUALS;
			break;
		case T_DEQ:
			op = API_SEL_OP_DOUBLE_EQUALS;
			break;
		case T_NE:
			op = API_SEL_OP_NOT_EQUALS;
			break;
		case T_GT:
			op = API_SEL_OP_GT;
			break;
		case T_LT:
			op = API_SEL_OP_LT;
			break;
		default:
			rc = fail_tok(
			    p, true, o, "in, notin, =, ==, !=, gt, lt");
			goto out;
		}
		if (op == API_SEL_OP_IN || op == API_SEL_OP_NOT_IN) {
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
	rc = api_selector_add_parsed(sel, key, op, (const char *const *)vals.v,
	    vals.n, "unable to parse requirement: ", p->err);
out:
	cu_free(key);
	vlist_dispose(&vals);
	return rc;
}

static int parse_all(struct parser *p, api_selector *sel)
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

int ns_selector_parse(api_selector *out, const char *s, cu_error *err)
{
	api_selector_init(out);
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
		api_selector_dispose(out);
	return rc;
}

/* ---- matching ------------------------------------------------------- */

static bool has_value(const struct api_requirement *r, const char *v)
{
	for (size_t i = 0; i < r->nvalues; i++)
		if (strcmp(r->values[i], v) == 0)
			return true;
	return false;
}

static bool req_matches(
    const struct api_requirement *r, ns_label_get get, void *payload)
{
	const char *v = get(r->key, payload);
	switch (r->op) {
	case API_SEL_OP_IN:
	case API_SEL_OP_EQUALS:
	case API_SEL_OP_DOUBLE_EQUALS:
		return v != NULL && has_value(r, v);
	case API_SEL_OP_NOT_IN:
	case API_SEL_OP_NOT_EQUALS:
		return v == NULL || !has_value(r, v);
	case API_SEL_OP_EXISTS:
		return v != NULL;
	case API_SEL_OP_DOES_NOT_EXIST:
		return v == NULL;
	case API_SEL_OP_GT:
	case API_SEL_OP_LT: {
		int64_t have, want;
		if (v == NULL || r->nvalues != 1 ||
		    !api_selector_int64(v, &have) ||
		    !api_selector_int64(r->values[0], &want))
			return false;
		return r->op == API_SEL_OP_GT ? have > want : have < want;
	}
	}
	return false;
}

bool ns_selector_matches(
    const api_selector *sel, ns_label_get get, void *payload)
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
    const api_selector *sel, const char *const *kv, size_t npairs)
{
	struct pairs ps = {.kv = kv, .n = npairs};
	return ns_selector_matches(sel, pairs_get, &ps);
}
