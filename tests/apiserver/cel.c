/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/cel.c - a small evaluator for the subset of CEL that
 * x-kubernetes-validations rules of Kueue's CRDs use: literals (int,
 * double, string, bool, null, lists), self and oldSelf, field selection,
 * indexing, has(), size(), in, the all/exists/exists_one/filter/map
 * macros, comparisons, arithmetic, logical operators with CEL's
 * error-absorbing && and ||, the ternary, and the string functions
 * startsWith, endsWith, contains, matches, lowerAscii, upperAscii. Values
 * are jansson values (the JSON of the object is CEL's view of it).
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tests/apiserver/apiserver.h"

enum nkind {
	N_LIT,
	N_IDENT,
	N_SELECT, /* a.name */
	N_HAS,	  /* has(a.name) */
	N_INDEX,  /* a[b] */
	N_CALL,	  /* name(args) or a.name(args) */
	N_MACRO,  /* a.all(x, e) ... */
	N_LIST,
	N_NOT,
	N_NEG,
	N_BIN,
	N_AND,
	N_OR,
	N_COND,
};

struct node {
	enum nkind kind;
	int op; /* N_BIN: a token */
	char *name;
	json_t *lit;
	struct node *a, *b, *c; /* operands; a = target of a method */
	struct node **args;
	size_t nargs;
};

struct as_cel {
	struct node *root;
	bool uses_old;
};

/* ---- lexer ------------------------------------------------------------ */

enum tok {
	T_END,
	T_IDENT,
	T_INT,
	T_DOUBLE,
	T_STR,
	T_EQ,
	T_NE,
	T_LT,
	T_LE,
	T_GT,
	T_GE,
	T_AND,
	T_OR,
	T_IN,
	T_PUNCT, /* one character, in .c */
	T_ERR,
};

struct parser {
	const char *p;
	enum tok t;
	char c;
	char *text; /* T_IDENT, T_STR [owned] */
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
				ps->t = T_ERR;
				cu_buf_dispose(&b);
				return;
			}
		}
		if (cu_buf_add(&b, &c, 1) != CU_OK) {
			perr(ps, "string too long");
			ps->t = T_ERR;
			cu_buf_dispose(&b);
			return;
		}
	}
	if (*ps->p != q) {
		perr(ps, "unterminated string");
		ps->t = T_ERR;
		cu_buf_dispose(&b);
		return;
	}
	ps->p++;
	ps->t = T_STR;
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
		ps->t = T_END;
		return;
	}
	if (isalpha((unsigned char)*p) || *p == '_') {
		while (isalnum((unsigned char)*ps->p) || *ps->p == '_')
			ps->p++;
		ps->text = cu_strndup(p, (size_t)(ps->p - p));
		ps->t = T_IDENT;
		if (ps->text && strcmp(ps->text, "in") == 0)
			ps->t = T_IN;
		return;
	}
	if (isdigit((unsigned char)*p)) {
		char *end;

		if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
			ps->i = (json_int_t)strtoll(p, &end, 16);
			ps->t = T_INT;
		} else {
			ps->d = strtod(p, &end);
			ps->t = T_DOUBLE;
			if (memchr(p, '.', (size_t)(end - p)) == NULL &&
			    memchr(p, 'e', (size_t)(end - p)) == NULL &&
			    memchr(p, 'E', (size_t)(end - p)) == NULL) {
				ps->i = (json_int_t)strtoll(p, &end, 10);
				ps->t = T_INT;
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
		ps->t = T_EQ;
	else if (strncmp(p, "!=", 2) == 0)
		ps->t = T_NE;
	else if (strncmp(p, "<=", 2) == 0)
		ps->t = T_LE;
	else if (strncmp(p, ">=", 2) == 0)
		ps->t = T_GE;
	else if (strncmp(p, "&&", 2) == 0)
		ps->t = T_AND;
	else if (strncmp(p, "||", 2) == 0)
		ps->t = T_OR;
	else {
		ps->p = p + 1;
		if (*p == '<')
			ps->t = T_LT;
		else if (*p == '>')
			ps->t = T_GT;
		else if (strchr("()[]{}.,?:!+-*/%", *p) != NULL) {
			ps->t = T_PUNCT;
			ps->c = *p;
		} else {
			perr(ps, "unexpected character '%c'", *p);
			ps->t = T_ERR;
		}
	}
}

static bool is_punct(struct parser *ps, char c)
{
	return ps->t == T_PUNCT && ps->c == c;
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

static void node_free(struct node *n)
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

static struct node *mknode(struct parser *ps, enum nkind k)
{
	struct node *n;

	/* A bound on the tree keeps the recursion of evaluation and of
	 * node_free shallow (left-deep chains such as 1+1+1+...). */
	if (++ps->nodes > 2000) {
		perr(ps, "expression too long");
		return NULL;
	}
	n = cu_calloc(1, sizeof(struct node));

	if (n == NULL)
		perr(ps, "out of memory");
	else
		n->kind = k;
	return n;
}

static struct node *expr(struct parser *ps);

/* Comma-separated expressions up to `close`; the opener is consumed. */
static bool arg_list(struct parser *ps, struct node *n, char close)
{
	if (is_punct(ps, close)) {
		next(ps);
		return true;
	}
	for (;;) {
		struct node *a = expr(ps), **na;

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

static struct node *primary(struct parser *ps)
{
	struct node *n = NULL;

	switch (ps->t) {
	case T_INT:
		n = mknode(ps, N_LIT);
		if (n)
			n->lit = json_integer(ps->i);
		next(ps);
		return n;
	case T_DOUBLE:
		n = mknode(ps, N_LIT);
		if (n)
			n->lit = json_real(ps->d);
		next(ps);
		return n;
	case T_STR:
		n = mknode(ps, N_LIT);
		if (n)
			n->lit = json_string(ps->text ? ps->text : "");
		next(ps);
		return n;
	case T_IDENT: {
		char *name = ps->text;

		ps->text = NULL;
		next(ps);
		if (name == NULL) {
			perr(ps, "out of memory");
			return NULL;
		}
		if (strcmp(name, "true") == 0 || strcmp(name, "false") == 0 ||
		    strcmp(name, "null") == 0) {
			n = mknode(ps, N_LIT);
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
				struct node *s = expr(ps);

				cu_free(name);
				if (s == NULL || !expect(ps, ')')) {
					node_free(s);
					return NULL;
				}
				if (s->kind != N_SELECT) {
					node_free(s);
					perr(ps, "invalid argument to has() "
						 "macro");
					return NULL;
				}
				s->kind = N_HAS;
				return s;
			}
			n = mknode(ps, N_CALL);
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
		n = mknode(ps, N_IDENT);
		if (n == NULL) {
			cu_free(name);
			return NULL;
		}
		n->name = name;
		return n;
	}
	case T_PUNCT:
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
			n = mknode(ps, N_LIST);
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

static struct node *member(struct parser *ps)
{
	struct node *n = primary(ps);

	while (n != NULL) {
		struct node *m;

		if (is_punct(ps, '.')) {
			next(ps);
			if (ps->t != T_IDENT || ps->text == NULL) {
				perr(ps, "expected a field name");
				node_free(n);
				return NULL;
			}
			m = mknode(ps, N_SELECT);
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
				m->kind = is_macro(m->name) ? N_MACRO : N_CALL;
				if (!arg_list(ps, m, ')')) {
					node_free(m);
					return NULL;
				}
				if (m->kind == N_MACRO &&
				    (m->nargs != 2 ||
					m->args[0]->kind != N_IDENT)) {
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
			m = mknode(ps, N_INDEX);
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

static struct node *unary(struct parser *ps)
{
	if (is_punct(ps, '!') || is_punct(ps, '-')) {
		struct node *n = mknode(ps, is_punct(ps, '!') ? N_NOT : N_NEG);

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
	case T_EQ:
	case T_NE:
	case T_LT:
	case T_LE:
	case T_GT:
	case T_GE:
	case T_IN:
		return 1;
	case T_PUNCT:
		if (ps->c == '+' || ps->c == '-')
			return 2;
		if (ps->c == '*' || ps->c == '/' || ps->c == '%')
			return 3;
		return 0;
	default:
		return 0;
	}
}

static struct node *binary(struct parser *ps, int level)
{
	struct node *l;

	if (level > 3)
		return unary(ps);
	l = binary(ps, level + 1);
	while (l != NULL && binop_level(ps) == level) {
		struct node *n = mknode(ps, N_BIN);

		if (n == NULL) {
			node_free(l);
			return NULL;
		}
		n->op = ps->t == T_PUNCT ? ps->c : -(int)ps->t;
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

static struct node *logic(struct parser *ps, enum tok t)
{
	struct node *l = t == T_OR ? logic(ps, T_AND) : binary(ps, 1);

	while (l != NULL && ps->t == t) {
		struct node *n = mknode(ps, t == T_OR ? N_OR : N_AND);

		if (n == NULL) {
			node_free(l);
			return NULL;
		}
		next(ps);
		n->a = l;
		n->b = t == T_OR ? logic(ps, T_AND) : binary(ps, 1);
		if (n->b == NULL) {
			node_free(n);
			return NULL;
		}
		l = n;
	}
	return l;
}

static struct node *expr(struct parser *ps)
{
	struct node *c, *n;

	if (++ps->depth > 200) {
		perr(ps, "expression nested too deeply");
		return NULL;
	}
	c = logic(ps, T_OR);
	if (c != NULL && is_punct(ps, '?')) {
		n = mknode(ps, N_COND);
		if (n == NULL) {
			node_free(c);
			ps->depth--;
			return NULL;
		}
		next(ps);
		n->a = c;
		n->b = logic(ps, T_OR);
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

struct as_cel *as_cel_parse(const char *src, char **err)
{
	struct parser ps;
	struct node *root;
	struct as_cel *cel;

	memset(&ps, 0, sizeof(ps));
	*err = NULL;
	ps.p = src;
	next(&ps);
	root = ps.t == T_ERR ? NULL : expr(&ps);
	if (root != NULL && ps.t != T_END)
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

void as_cel_free(struct as_cel *cel)
{
	if (cel == NULL)
		return;
	node_free(cel->root);
	cu_free(cel);
}

bool as_cel_uses_old(const struct as_cel *cel)
{
	return cel != NULL && cel->uses_old;
}

/* ---- evaluation ------------------------------------------------------- */

struct var {
	const char *name;
	json_t *v;
};

struct env {
	struct var vars[34];
	size_t n;
	char err[200];
	long steps;
};

static json_t *fail(struct env *e, const char *fmt, ...) CU_PRINTF(2, 3);

static json_t *fail(struct env *e, const char *fmt, ...)
{
	va_list ap;

	if (e->err[0])
		return NULL;
	va_start(ap, fmt);
	vsnprintf(e->err, sizeof(e->err), fmt, ap);
	va_end(ap);
	return NULL;
}

static json_t *eval(struct env *e, const struct node *n);

static const char *type_name(json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "map";
	case JSON_ARRAY:
		return "list";
	case JSON_STRING:
		return "string";
	case JSON_INTEGER:
		return "int";
	case JSON_REAL:
		return "double";
	case JSON_TRUE:
	case JSON_FALSE:
		return "bool";
	default:
		return "null_type";
	}
}

static bool num_eq(json_t *a, json_t *b)
{
	if (json_is_number(a) && json_is_number(b))
		return json_number_value(a) == json_number_value(b);
	return json_equal(a, b);
}

/* <0, 0, >0; *ok false when a and b do not compare. */
static int compare(json_t *a, json_t *b, bool *ok)
{
	*ok = true;
	if (json_is_number(a) && json_is_number(b)) {
		if (json_is_integer(a) && json_is_integer(b))
			return (json_integer_value(a) > json_integer_value(b)) -
			       (json_integer_value(a) < json_integer_value(b));
		return (json_number_value(a) > json_number_value(b)) -
		       (json_number_value(a) < json_number_value(b));
	}
	if (json_is_string(a) && json_is_string(b))
		return strcmp(json_string_value(a), json_string_value(b));
	if (json_is_boolean(a) && json_is_boolean(b))
		return json_is_true(a) - json_is_true(b);
	*ok = false;
	return 0;
}

static size_t utf8_len(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xC0) != 0x80)
			n++;
	return n;
}

static json_t *size_of(struct env *e, json_t *v)
{
	if (json_is_string(v))
		return json_integer((json_int_t)utf8_len(json_string_value(v)));
	if (json_is_array(v))
		return json_integer((json_int_t)json_array_size(v));
	if (json_is_object(v))
		return json_integer((json_int_t)json_object_size(v));
	return fail(e, "no such overload: size(%s)", type_name(v));
}

static json_t *bin(struct env *e, int op, json_t *a, json_t *b)
{
	bool ok;
	int c;

	switch (op) {
	case -T_EQ:
		return json_boolean(num_eq(a, b));
	case -T_NE:
		return json_boolean(!num_eq(a, b));
	case -T_IN: {
		size_t i;
		json_t *x;

		if (json_is_object(b))
			return json_boolean(
			    json_is_string(a) &&
			    json_object_get(b, json_string_value(a)) != NULL);
		if (!json_is_array(b))
			return fail(e, "no such overload: %s in %s",
			    type_name(a), type_name(b));
		json_array_foreach(b, i, x)
		{
			if (num_eq(a, x))
				return json_true();
		}
		return json_false();
	}
	case -T_LT:
	case -T_LE:
	case -T_GT:
	case -T_GE:
		c = compare(a, b, &ok);
		if (!ok)
			return fail(e, "no such overload: %s < %s",
			    type_name(a), type_name(b));
		return json_boolean(op == -T_LT	  ? c < 0
				    : op == -T_LE ? c <= 0
				    : op == -T_GT ? c > 0
						  : c >= 0);
	}
	if (op == '+' && json_is_string(a) && json_is_string(b)) {
		char *s = cu_asprintf(
		    "%s%s", json_string_value(a), json_string_value(b));
		json_t *r = s ? json_string(s) : NULL;

		cu_free(s);
		return r ? r : fail(e, "out of memory");
	}
	if (op == '+' && json_is_array(a) && json_is_array(b)) {
		json_t *r = json_copy(a);

		json_array_extend(r, b);
		return r;
	}
	if (json_is_integer(a) && json_is_integer(b)) {
		json_int_t x = json_integer_value(a), y = json_integer_value(b);
		long long r;

		switch (op) {
		case '+':
			if (__builtin_add_overflow(x, y, &r))
				return fail(e, "integer overflow");
			return json_integer(r);
		case '-':
			if (__builtin_sub_overflow(x, y, &r))
				return fail(e, "integer overflow");
			return json_integer(r);
		case '*':
			if (__builtin_mul_overflow(x, y, &r))
				return fail(e, "integer overflow");
			return json_integer(r);
		case '/':
		case '%':
			if (y == 0)
				return fail(e, op == '/' ? "division by zero"
							 : "modulus by zero");
			if (x == INT64_MIN && y == -1)
				return fail(e, "integer overflow");
			return json_integer(op == '/' ? x / y : x % y);
		}
	}
	if (json_is_real(a) && json_is_real(b)) {
		double x = json_real_value(a), y = json_real_value(b);

		switch (op) {
		case '+':
			return json_real(x + y);
		case '-':
			return json_real(x - y);
		case '*':
			return json_real(x * y);
		case '/':
			return json_real(x / y);
		}
	}
	return fail(e, "no such overload: %s %c %s", type_name(a),
	    op > 0 ? op : '?', type_name(b));
}

static json_t *call(struct env *e, const struct node *n)
{
	json_t *target = NULL, *args[2] = {NULL, NULL}, *r = NULL;
	const char *f = n->name;
	size_t i;

	if (n->nargs > 2)
		return fail(e, "found no matching overload for '%s'", f);
	if (n->a != NULL && (target = eval(e, n->a)) == NULL)
		return NULL;
	for (i = 0; i < n->nargs; i++)
		if ((args[i] = eval(e, n->args[i])) == NULL)
			goto out;
	if (target == NULL && n->nargs == 1) { /* global form */
		target = args[0];
		args[0] = NULL;
		if (strcmp(f, "size") == 0)
			r = size_of(e, target);
		else if (strcmp(f, "int") == 0 && json_is_number(target))
			r = json_integer((json_int_t)json_number_value(target));
		else if (strcmp(f, "string") == 0 && json_is_string(target))
			r = json_incref(target);
		else if (strcmp(f, "string") == 0 &&
			 (json_is_integer(target) || json_is_boolean(target))) {
			char *t =
			    json_is_integer(target)
				? cu_asprintf("%" JSON_INTEGER_FORMAT,
				      json_integer_value(target))
				: cu_strdup(
				      json_is_true(target) ? "true" : "false");

			r = t ? json_string(t) : fail(e, "out of memory");
			cu_free(t);
		} else
			r = fail(e, "found no matching overload for '%s'", f);
		goto out;
	}
	if (target == NULL)
		r = fail(e, "found no matching overload for '%s'", f);
	else if (strcmp(f, "size") == 0 && n->nargs == 0)
		r = size_of(e, target);
	else if (json_is_string(target) && n->nargs == 0 &&
		 (strcmp(f, "lowerAscii") == 0 ||
		     strcmp(f, "upperAscii") == 0)) {
		char *s = cu_strdup(json_string_value(target));

		for (i = 0; s && s[i]; i++)
			s[i] =
			    (char)(f[0] == 'l' ? tolower((unsigned char)s[i])
					       : toupper((unsigned char)s[i]));
		r = s ? json_string(s) : fail(e, "out of memory");
		cu_free(s);
	} else if (json_is_string(target) && n->nargs == 1 &&
		   json_is_string(args[0])) {
		const char *s = json_string_value(target);
		const char *x = json_string_value(args[0]);
		size_t ls = strlen(s), lx = strlen(x);

		if (strcmp(f, "startsWith") == 0)
			r = json_boolean(strncmp(s, x, lx) == 0);
		else if (strcmp(f, "endsWith") == 0)
			r = json_boolean(
			    ls >= lx && strcmp(s + ls - lx, x) == 0);
		else if (strcmp(f, "contains") == 0)
			r = json_boolean(strstr(s, x) != NULL);
		else if (strcmp(f, "matches") == 0) {
			int m = as_re_match(x, s);

			r = m < 0 ? fail(e,
					"pattern outside the supported "
					"subset: %s",
					x)
				  : json_boolean(m == 1);
		} else
			r = fail(e, "found no matching overload for '%s'", f);
	} else
		r = fail(e,
		    "found no matching overload for '%s' applied to "
		    "'%s'",
		    f, type_name(target));
out:
	json_decref(target);
	json_decref(args[0]);
	json_decref(args[1]);
	return r;
}

static json_t *macro(struct env *e, const struct node *n)
{
	json_t *range = eval(e, n->a), *out = NULL, *item;
	const char *m = n->name, *var = n->args[0]->name;
	size_t i, count = 0, len;
	bool all = strcmp(m, "all") == 0, exists = strcmp(m, "exists") == 0;
	bool one = strcmp(m, "exists_one") == 0;
	bool filter = strcmp(m, "filter") == 0;
	json_t *keys = NULL;
	bool err_seen = false;
	char saved[200] = "";

	if (range == NULL)
		return NULL;
	if (json_is_object(range)) {
		const char *k;
		json_t *v;

		keys = json_array();
		json_object_foreach(range, k, v)
		{
			json_array_append_new(keys, json_string(k));
		}
	} else if (json_is_array(range))
		keys = json_incref(range);
	else {
		json_decref(range);
		return fail(
		    e, "no such overload: %s.%s()", type_name(range), m);
	}
	if (e->n >= sizeof(e->vars) / sizeof(e->vars[0])) {
		json_decref(range);
		json_decref(keys);
		return fail(e, "comprehensions nested too deeply");
	}
	if (!all && !exists && !one)
		out = json_array();
	len = json_array_size(keys);
	for (i = 0; i < len; i++) {
		json_t *r;

		item = json_array_get(keys, i);
		e->vars[e->n].name = var;
		e->vars[e->n].v = item;
		e->n++;
		r = eval(e, n->args[1]);
		e->n--;
		if (r == NULL) {
			if (!(all || exists))
				goto fail;
			/* && and || absorb errors: remember the first. */
			if (!err_seen)
				snprintf(saved, sizeof(saved), "%s", e->err);
			err_seen = true;
			e->err[0] = '\0';
			continue;
		}
		if (!filter && !json_is_boolean(r) && (all || exists || one)) {
			json_decref(r);
			fail(e, "no matching overload for %s() predicate", m);
			goto fail;
		}
		if (all && json_is_false(r)) {
			json_decref(r);
			json_decref(range);
			json_decref(keys);
			return json_false();
		}
		if (exists && json_is_true(r)) {
			json_decref(r);
			json_decref(range);
			json_decref(keys);
			return json_true();
		}
		if (one && json_is_true(r))
			count++;
		if (filter) {
			if (!json_is_boolean(r)) {
				json_decref(r);
				fail(e, "no matching overload for filter() "
					"predicate");
				goto fail;
			}
			if (json_is_true(r))
				json_array_append(out, item);
		} else if (out != NULL)
			json_array_append(out, r);
		json_decref(r);
	}
	json_decref(range);
	json_decref(keys);
	if (err_seen) {
		json_decref(out);
		return fail(e, "%s", saved);
	}
	if (all)
		return json_true();
	if (exists)
		return json_false();
	if (one)
		return json_boolean(count == 1);
	return out;
fail:
	json_decref(range);
	json_decref(keys);
	json_decref(out);
	return NULL;
}

static json_t *eval(struct env *e, const struct node *n)
{
	json_t *a, *b, *r;
	size_t i;

	if (++e->steps > 1000000)
		return fail(e, "evaluation too costly");
	switch (n->kind) {
	case N_LIT:
		return json_incref(n->lit);
	case N_IDENT:
		for (i = e->n; i > 0; i--)
			if (strcmp(e->vars[i - 1].name, n->name) == 0) {
				if (e->vars[i - 1].v == NULL)
					return fail(e, "no such attribute: %s",
					    n->name);
				return json_incref(e->vars[i - 1].v);
			}
		return fail(e, "undeclared reference to '%s'", n->name);
	case N_SELECT:
	case N_HAS:
		if ((a = eval(e, n->a)) == NULL)
			return NULL;
		if (!json_is_object(a)) {
			json_decref(a);
			return fail(e, "no such key: %s", n->name);
		}
		r = json_object_get(a, n->name);
		if (n->kind == N_HAS) {
			json_decref(a);
			return json_boolean(r != NULL);
		}
		if (r == NULL) {
			json_decref(a);
			return fail(e, "no such key: %s", n->name);
		}
		json_incref(r);
		json_decref(a);
		return r;
	case N_INDEX:
		if ((a = eval(e, n->a)) == NULL)
			return NULL;
		if ((b = eval(e, n->b)) == NULL) {
			json_decref(a);
			return NULL;
		}
		r = NULL;
		if (json_is_array(a) && json_is_integer(b)) {
			json_int_t ix = json_integer_value(b);

			if (ix < 0 || (size_t)ix >= json_array_size(a))
				fail(e, "index out of bounds: %lld",
				    (long long)ix);
			else
				r = json_incref(json_array_get(a, (size_t)ix));
		} else if (json_is_object(a) && json_is_string(b)) {
			r = json_object_get(a, json_string_value(b));
			if (r == NULL)
				fail(
				    e, "no such key: %s", json_string_value(b));
			else
				json_incref(r);
		} else
			fail(e, "no such overload: %s[%s]", type_name(a),
			    type_name(b));
		json_decref(a);
		json_decref(b);
		return r;
	case N_CALL:
		return call(e, n);
	case N_MACRO:
		return macro(e, n);
	case N_LIST:
		r = json_array();
		for (i = 0; i < n->nargs; i++) {
			if ((a = eval(e, n->args[i])) == NULL) {
				json_decref(r);
				return NULL;
			}
			json_array_append_new(r, a);
		}
		return r;
	case N_NOT:
		if ((a = eval(e, n->a)) == NULL)
			return NULL;
		r = json_is_boolean(a)
			? json_boolean(!json_is_true(a))
			: fail(e, "no such overload: !%s", type_name(a));
		json_decref(a);
		return r;
	case N_NEG:
		if ((a = eval(e, n->a)) == NULL)
			return NULL;
		if (json_is_integer(a) && json_integer_value(a) != INT64_MIN)
			r = json_integer(-json_integer_value(a));
		else if (json_is_real(a))
			r = json_real(-json_real_value(a));
		else
			r = fail(e, "no such overload: -%s", type_name(a));
		json_decref(a);
		return r;
	case N_BIN:
		if ((a = eval(e, n->a)) == NULL)
			return NULL;
		if ((b = eval(e, n->b)) == NULL) {
			json_decref(a);
			return NULL;
		}
		r = bin(e, n->op, a, b);
		json_decref(a);
		json_decref(b);
		return r;
	case N_AND:
	case N_OR: {
		bool is_and = n->kind == N_AND;
		char saved[200];

		a = eval(e, n->a);
		if (a != NULL && !json_is_boolean(a)) {
			json_decref(a);
			return fail(e, "no matching overload for '%s'",
			    is_and ? "_&&_" : "_||_");
		}
		if (a != NULL && json_is_true(a) != is_and)
			return a; /* false && x, true || x */
		snprintf(saved, sizeof(saved), "%s", e->err);
		e->err[0] = '\0';
		b = eval(e, n->b);
		if (b != NULL && !json_is_boolean(b)) {
			json_decref(a);
			json_decref(b);
			return fail(e, "no matching overload for '%s'",
			    is_and ? "_&&_" : "_||_");
		}
		if (b != NULL && json_is_true(b) != is_and) {
			json_decref(a);
			return b; /* the error on the left is absorbed */
		}
		if (a == NULL) {
			json_decref(b);
			e->err[0] = '\0';
			return fail(e, "%s", saved);
		}
		json_decref(a);
		return b;
	}
	case N_COND:
		if ((a = eval(e, n->a)) == NULL)
			return NULL;
		if (!json_is_boolean(a)) {
			json_decref(a);
			return fail(e, "no matching overload for '_?_:_'");
		}
		r = eval(e, json_is_true(a) ? n->b : n->c);
		json_decref(a);
		return r;
	}
	return fail(e, "unsupported expression");
}

json_t *as_cel_eval(
    const struct as_cel *cel, json_t *self, json_t *old, char **err)
{
	struct env e;
	json_t *r;

	memset(&e, 0, sizeof(e));
	*err = NULL;
	e.vars[0].name = "self";
	e.vars[0].v = self;
	e.vars[1].name = "oldSelf";
	e.vars[1].v = old;
	e.n = 2;
	r = eval(&e, cel->root);
	if (r == NULL)
		*err = cu_strdup(e.err[0] ? e.err : "evaluation error");
	return r;
}
