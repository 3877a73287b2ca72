/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cel/parse.c - the CEL subset's lexer and recursive-descent parser:
 * source text into the syntax tree of cel_int.h (bounded depth and node
 * count), with a one-line message naming what is outside the subset.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cel/cel_int.h"

struct parser {
	const char *p;
	enum cel__tok t;
	char c;
	char *text; /* CEL_T_IDENT, CEL_T_STR [owned] */
	json_int_t i;
	double d;
	int depth;
	int nodes;
	char err[160];
	bool uses_old;
};

static void perr(struct parser *ps, const char *fmt, ...) CU_PRINTF(2, 3);

static void perr(struct parser *ps, const char *fmt, ...)
{
	va_list ap;

	if (ps->err[0])
		return;
	va_start(ap, fmt);
	vsnprintf(ps->err, sizeof(ps->err), fmt, ap);
	va_end(ap);
}

static void lex_string(struct parser *ps)
{
	char q = *ps->p++;
	cu_buf b;

	cu_buf_init(&b, 1 << 16);
	while (*ps->p && *ps->p != q) {
		char c = *ps->p++;

		if (c == '\\') {
			c = *ps->p++;
			switch (c) {
			case 'n':
				c = '\n';
				break;
			case 't':
				c = '\t';
				break;
			case 'r':
				c = '\r';
				break;
			case '\\':
			case '\'':
			case '"':
			case '`':
			case '?':
				break;
			default:
				perr(
				    ps, "unsupported escape \\%c", c ? c : '0');
				ps->t = CEL_T_ERR;
				cu_buf_dispose(&b);
				return;
			}
		}
		if (cu_buf_add(&b, &c, 1) != CU_OK) {
			perr(ps, "string too long");
			ps->t = CEL_T_ERR;
			cu_buf_dispose(&b);
			return;
		}
	}
	if (*ps->p != q) {
		perr(ps, "unterminated string");
		ps->t = CEL_T_ERR;
		cu_buf_dispose(&b);
		return;
	}
	ps->p++;
	ps->t = CEL_T_STR;
	ps->text = cu_strdup(b.ptr ? b.ptr : "");
	cu_buf_dispose(&b);
}

static void next(struct parser *ps)
{
	const char *p;

	cu_free(ps->text);
	ps->text = NULL;
	while (isspace((unsigned char)*ps->p))
		ps->p++;
	p = ps->p;
	if (*p == '\0') {
		ps->t = CEL_T_END;
		return;
	}
	if (isalpha((unsigned char)*p) || *p == '_') {
		while (isalnum((unsigned char)*ps->p) || *ps->p == '_')
			ps->p++;
		ps->text = cu_strndup(p, (size_t)(ps->p - p));
		ps->t = CEL_T_IDENT;
		if (ps->text && strcmp(ps->text, "in") == 0)
			ps->t = CEL_T_IN;
		return;
	}
	if (isdigit((unsigned char)*p)) {
		char *end;

		if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
			ps->i = (json_int_t)strtoll(p, &end, 16);
			ps->t = CEL_T_INT;
		} else {
			ps->d = strtod(p, &end);
			ps->t = CEL_T_DOUBLE;
			if (memchr(p, '.', (size_t)(end - p)) == NULL &&
			    memchr(p, 'e', (size_t)(end - p)) == NULL &&
			    memchr(p, 'E', (size_t)(end - p)) == NULL) {
				ps->i = (json_int_t)strtoll(p, &end, 10);
				ps->t = CEL_T_INT;
			}
		}
		ps->p = end;
		if (*ps->p == 'u' || *ps->p == 'U')
			ps->p++;
		return;
	}
	if (*p == '\'' || *p == '"') {
		lex_string(ps);
		return;
	}
	ps->p += 2;
	if (strncmp(p, "==", 2) == 0)
		ps->t = CEL_T_EQ;
	else if (strncmp(p, "!=", 2) == 0)
		ps->t = CEL_T_NE;
	else if (strncmp(p, "<=", 2) == 0)
		ps->t = CEL_T_LE;
	else if (strncmp(p, ">=", 2) == 0)
		ps->t = CEL_T_GE;
	else if (strncmp(p, "&&", 2) == 0)
		ps->t = CEL_T_AND;
	else if (strncmp(p, "||", 2) == 0)
		ps->t = CEL_T_OR;
	else {
		ps->p = p + 1;
		if (*p == '<')
			ps->t = CEL_T_LT;
		else if (*p == '>')
			ps->t = CEL_T_GT;
		else if (strchr("()[]{}.,?:!+-*/%", *p) != NULL) {
			ps->t = CEL_T_PUNCT;
			ps->c = *p;
		} else {
			perr(ps, "unexpected character '%c'", *p);
			ps->t = CEL_T_ERR;
		}
	}
}

static bool is_punct(struct parser *ps, char c)
{
	return ps->t == CEL_T_PUNCT && ps->c == c;
}

static bool expect(struct parser *ps, char c)
{
	if (!is_punct(ps, c)) {
		perr(ps, "expected '%c'", c);
		return false;
	}
	next(ps);
	return true;
}

/* ---- parser ----------------------------------------------------------- */

static void node_free(struct cel__node *n)
{
	size_t i;

	if (n == NULL)
		return;
	cu_free(n->name);
	json_decref(n->lit);
	node_free(n->a);
	node_free(n->b);
	node_free(n->c);
	for (i = 0; i < n->nargs; i++)
		node_free(n->args[i]);
	cu_free(n->args);
	cu_free(n);
}

static struct cel__node *mknode(struct parser *ps, enum cel__nkind k)
{
	struct cel__node *n;

	/* A bound on the tree keeps the recursion of evaluation and of
	 * node_free shallow (left-deep chains such as 1+1+1+...). */
	if (++ps->nodes > 2000) {
		perr(ps, "expression too long");
		return NULL;
	}
	n = cu_calloc(1, sizeof(struct cel__node));

	if (n == NULL)
		perr(ps, "out of memory");
	else
		n->kind = k;
	return n;
}

static struct cel__node *expr(struct parser *ps);

/* Comma-separated expressions up to `close`; the opener is consumed. */
static bool arg_list(struct parser *ps, struct cel__node *n, char close)
{
	if (is_punct(ps, close)) {
		next(ps);
		return true;
	}
	for (;;) {
		struct cel__node *a = expr(ps), **na;

		if (a == NULL)
			return false;
		na = cu_realloc(n->args, (n->nargs + 1) * sizeof(*na));
		if (na == NULL) {
			node_free(a);
			perr(ps, "out of memory");
			return false;
		}
		n->args = na;
		n->args[n->nargs++] = a;
		if (is_punct(ps, ','))
			next(ps);
		else
			return expect(ps, close);
		if (is_punct(ps, close)) { /* trailing comma */
			next(ps);
			return true;
		}
	}
}

static bool is_macro(const char *name)
{
	return strcmp(name, "all") == 0 || strcmp(name, "exists") == 0 ||
	       strcmp(name, "exists_one") == 0 || strcmp(name, "filter") == 0 ||
	       strcmp(name, "map") == 0;
}

static struct cel__node *primary(struct parser *ps)
{
	struct cel__node *n = NULL;

	switch (ps->t) {
	case CEL_T_INT:
		n = mknode(ps, CEL_N_LIT);
		if (n)
			n->lit = json_integer(ps->i);
		next(ps);
		return n;
	case CEL_T_DOUBLE:
		n = mknode(ps, CEL_N_LIT);
		if (n)
			n->lit = json_real(ps->d);
		next(ps);
		return n;
	case CEL_T_STR:
		n = mknode(ps, CEL_N_LIT);
		if (n)
			n->lit = json_string(ps->text ? ps->text : "");
		next(ps);
		return n;
	case CEL_T_IDENT: {
		char *name = ps->text;

		ps->text = NULL;
		next(ps);
		if (name == NULL) {
			perr(ps, "out of memory");
			return NULL;
		}
		if (strcmp(name, "true") == 0 || strcmp(name, "false") == 0 ||
		    strcmp(name, "null") == 0) {
			n = mknode(ps, CEL_N_LIT);
			if (n)
				n->lit = name[0] == 't'	  ? json_true()
					 : name[0] == 'f' ? json_false()
							  : json_null();
			cu_free(name);
			return n;
		}
		if (is_punct(ps, '(')) {
			next(ps);
			if (strcmp(name, "has") == 0) {
				struct cel__node *s = expr(ps);

				cu_free(name);
				if (s == NULL || !expect(ps, ')')) {
					node_free(s);
					return NULL;
				}
				if (s->kind != CEL_N_SELECT) {
					node_free(s);
					perr(ps, "invalid argument to has() "
						 "macro");
					return NULL;
				}
				s->kind = CEL_N_HAS;
				return s;
			}
			n = mknode(ps, CEL_N_CALL);
			if (n == NULL) {
				cu_free(name);
				return NULL;
			}
			n->name = name;
			if (!arg_list(ps, n, ')')) {
				node_free(n);
				return NULL;
			}
			return n;
		}
		if (strcmp(name, "oldSelf") == 0)
			ps->uses_old = true;
		n = mknode(ps, CEL_N_IDENT);
		if (n == NULL) {
			cu_free(name);
			return NULL;
		}
		n->name = name;
		return n;
	}
	case CEL_T_PUNCT:
		if (ps->c == '(') {
			next(ps);
			n = expr(ps);
			if (n != NULL && !expect(ps, ')')) {
				node_free(n);
				return NULL;
			}
			return n;
		}
		if (ps->c == '[') {
			next(ps);
			n = mknode(ps, CEL_N_LIST);
			if (n != NULL && !arg_list(ps, n, ']')) {
				node_free(n);
				return NULL;
			}
			return n;
		}
		perr(ps, "unexpected '%c'", ps->c);
		return NULL;
	default:
		perr(ps, "unexpected end of expression");
		return NULL;
	}
}

static struct cel__node *member(struct parser *ps)
{
	struct cel__node *n = primary(ps);

	while (n != NULL) {
		struct cel__node *m;

		if (is_punct(ps, '.')) {
			next(ps);
			if (ps->t != CEL_T_IDENT || ps->text == NULL) {
				perr(ps, "expected a field name");
				node_free(n);
				return NULL;
			}
			m = mknode(ps, CEL_N_SELECT);
			if (m == NULL) {
				node_free(n);
				return NULL;
			}
			m->name = ps->text;
			ps->text = NULL;
			m->a = n;
			next(ps);
			if (is_punct(ps, '(')) {
				next(ps);
				m->kind = is_macro(m->name) ? CEL_N_MACRO
							    : CEL_N_CALL;
				if (!arg_list(ps, m, ')')) {
					node_free(m);
					return NULL;
				}
				if (m->kind == CEL_N_MACRO &&
				    (m->nargs != 2 ||
					m->args[0]->kind != CEL_N_IDENT)) {
					perr(ps,
					    "%s() takes a variable and an "
					    "expression",
					    m->name);
					node_free(m);
					return NULL;
				}
			}
			n = m;
		} else if (is_punct(ps, '[')) {
			next(ps);
			m = mknode(ps, CEL_N_INDEX);
			if (m == NULL) {
				node_free(n);
				return NULL;
			}
			m->a = n;
			m->b = expr(ps);
			if (m->b == NULL || !expect(ps, ']')) {
				node_free(m);
				return NULL;
			}
			n = m;
		} else
			break;
	}
	return n;
}

static struct cel__node *unary(struct parser *ps)
{
	if (is_punct(ps, '!') || is_punct(ps, '-')) {
		struct cel__node *n =
		    mknode(ps, is_punct(ps, '!') ? CEL_N_NOT : CEL_N_NEG);

		if (n == NULL)
			return NULL;
		if (++ps->depth > 200) {
			perr(ps, "expression nested too deeply");
			node_free(n);
			return NULL;
		}
		next(ps);
		n->a = unary(ps);
		ps->depth--;
		if (n->a == NULL) {
			node_free(n);
			return NULL;
		}
		return n;
	}
	return member(ps);
}

static int binop_level(struct parser *ps)
{
	switch (ps->t) {
	case CEL_T_EQ:
	case CEL_T_NE:
	case CEL_T_LT:
	case CEL_T_LE:
	case CEL_T_GT:
	case CEL_T_GE:
	case CEL_T_IN:
		return 1;
	case CEL_T_PUNCT:
		if (ps->c == '+' || ps->c == '-')
			return 2;
		if (ps->c == '*' || ps->c == '/' || ps->c == '%')
			return 3;
		return 0;
	default:
		return 0;
	}
}

static struct cel__node *binary(struct parser *ps, int level)
{
	struct cel__node *l;

	if (level > 3)
		return unary(ps);
	l = binary(ps, level + 1);
	while (l != NULL && binop_level(ps) == level) {
		struct cel__node *n = mknode(ps, CEL_N_BIN);

		if (n == NULL) {
			node_free(l);
			return NULL;
		}
		n->op = ps->t == CEL_T_PUNCT ? ps->c : -(int)ps->t;
		next(ps);
		n->a = l;
		n->b = binary(ps, level + 1);
		if (n->b == NULL) {
			node_free(n);
			return NULL;
		}
		l = n;
	}
	return l;
}

static struct cel__node *logic(struct parser *ps, enum cel__tok t)
{
	struct cel__node *l =
	    t == CEL_T_OR ? logic(ps, CEL_T_AND) : binary(ps, 1);

	while (l != NULL && ps->t == t) {
		struct cel__node *n =
		    mknode(ps, t == CEL_T_OR ? CEL_N_OR : CEL_N_AND);

		if (n == NULL) {
			node_free(l);
			return NULL;
		}
		next(ps);
		n->a = l;
		n->b = t == CEL_T_OR ? logic(ps, CEL_T_AND) : binary(ps, 1);
		if (n->b == NULL) {
			node_free(n);
			return NULL;
		}
		l = n;
	}
	return l;
}

static struct cel__node *expr(struct parser *ps)
{
	struct cel__node *c, *n;

	if (++ps->depth > 200) {
		perr(ps, "expression nested too deeply");
		return NULL;
	}
	c = logic(ps, CEL_T_OR);
	if (c != NULL && is_punct(ps, '?')) {
		n = mknode(ps, CEL_N_COND);
		if (n == NULL) {
			node_free(c);
			ps->depth--;
			return NULL;
		}
		next(ps);
		n->a = c;
		n->b = logic(ps, CEL_T_OR);
		if (n->b == NULL || !expect(ps, ':') ||
		    (n->c = expr(ps)) == NULL) {
			node_free(n);
			ps->depth--;
			return NULL;
		}
		c = n;
	}
	ps->depth--;
	return c;
}

struct cel_expr *cel_parse(const char *src, char **err)
{
	struct parser ps;
	struct cel__node *root;
	struct cel_expr *cel;

	memset(&ps, 0, sizeof(ps));
	*err = NULL;
	ps.p = src;
	next(&ps);
	root = ps.t == CEL_T_ERR ? NULL : expr(&ps);
	if (root != NULL && ps.t != CEL_T_END)
		perr(&ps, "unexpected text after the expression");
	cu_free(ps.text);
	if (ps.err[0] || root == NULL) {
		node_free(root);
		*err = cu_strdup(ps.err[0] ? ps.err : "syntax error");
		return NULL;
	}
	cel = cu_calloc(1, sizeof(*cel));
	if (cel == NULL) {
		node_free(root);
		*err = cu_strdup("out of memory");
		return NULL;
	}
	cel->root = root;
	cel->uses_old = ps.uses_old;
	return cel;
}

void cel_free(struct cel_expr *cel)
{
	if (cel == NULL)
		return;
	node_free(cel->root);
	cu_free(cel);
}

bool cel_uses_old(const struct cel_expr *cel)
{
	return cel != NULL && cel->uses_old;
}
