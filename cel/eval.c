/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cel/eval.c - evaluation of a parsed CEL expression over jansson values:
 * CEL's semantics for the subset of cel/cel.h (error-absorbing && and ||,
 * the macros, the string functions, Kubernetes quantities), bounded in
 * steps.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "api/quantity.h"
#include "cel/cel_int.h"

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
	int (*match)(const char *pattern, const char *s);
};

static json_t *fail(struct env *e, const char *fmt, ...) CU_PRINTF(2, 3);

#define QKEY "@quantity"

json_t *cel_quantity(int64_t milli)
{
	return json_pack("{s:I}", QKEY, (json_int_t)milli);
}

bool cel_is_quantity(const json_t *v, int64_t *milli)
{
	json_t *m = json_object_get(v, QKEY);

	if (!json_is_integer(m) || json_object_size(v) != 1)
		return false;
	if (milli != NULL)
		*milli = json_integer_value(m);
	return true;
}

/* quantity(s), isQuantity(s): Kubernetes' CEL quantity library. */
static json_t *quantity_of(struct env *e, const char *f, json_t *s)
{
	int64_t milli;
	cu_error qe;
	json_t *q;
	bool ok;

	if (!json_is_string(s))
		return fail(e, "found no matching overload for '%s'", f);
	ok = api_quantity_parse_milli(json_string_value(s), &milli, &qe) ==
	     CU_OK;
	if (strcmp(f, "isQuantity") == 0)
		return json_boolean(ok);
	if (!ok)
		return fail(e, "invalid quantity: %s", json_string_value(s));
	q = cel_quantity(milli);
	return q != NULL ? q : fail(e, "out of memory");
}

/* A method on a quantity: compareTo, isGreaterThan, isLessThan (another
 * quantity), asInteger (no argument). */
static json_t *quantity_method(
    struct env *e, const char *f, int64_t a, json_t *arg, size_t nargs)
{
	int64_t b;

	if (nargs == 0 && strcmp(f, "asInteger") == 0) {
		if (a % 1000 != 0)
			return fail(e, "cannot convert quantity to integer: "
				       "it has a fractional part");
		return json_integer((json_int_t)(a / 1000));
	}
	if (nargs != 1 || !cel_is_quantity(arg, &b))
		return fail(e,
		    "found no matching overload for '%s' applied to "
		    "'quantity'",
		    f);
	if (strcmp(f, "compareTo") == 0)
		return json_integer((a > b) - (a < b));
	if (strcmp(f, "isGreaterThan") == 0)
		return json_boolean(a > b);
	if (strcmp(f, "isLessThan") == 0)
		return json_boolean(a < b);
	return fail(
	    e, "found no matching overload for '%s' applied to 'quantity'", f);
}

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

static json_t *eval(struct env *e, const struct cel__node *n);

static const char *type_name(json_t *v)
{
	if (cel_is_quantity(v, NULL))
		return "quantity";
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
	case -CEL_T_EQ:
		return json_boolean(num_eq(a, b));
	case -CEL_T_NE:
		return json_boolean(!num_eq(a, b));
	case -CEL_T_IN: {
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
	case -CEL_T_LT:
	case -CEL_T_LE:
	case -CEL_T_GT:
	case -CEL_T_GE:
		c = compare(a, b, &ok);
		if (!ok)
			return fail(e, "no such overload: %s < %s",
			    type_name(a), type_name(b));
		return json_boolean(op == -CEL_T_LT   ? c < 0
				    : op == -CEL_T_LE ? c <= 0
				    : op == -CEL_T_GT ? c > 0
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

static json_t *call(struct env *e, const struct cel__node *n)
{
	json_t *target = NULL, *args[2] = {NULL, NULL}, *r = NULL;
	const char *f = n->name;
	int64_t milli;
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
		else if (strcmp(f, "quantity") == 0 ||
			 strcmp(f, "isQuantity") == 0)
			r = quantity_of(e, f, target);
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
	else if (cel_is_quantity(target, &milli))
		r = quantity_method(e, f, milli, args[0], n->nargs);
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
			int m = e->match != NULL ? e->match(x, s) : -1;

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

static json_t *macro(struct env *e, const struct cel__node *n)
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

/* a[b]: a list by an int, a map by a string. */
static json_t *index_of(struct env *e, const struct cel__node *n)
{
	json_t *a, *b, *r;

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
			fail(e, "index out of bounds: %lld", (long long)ix);
		else
			r = json_incref(json_array_get(a, (size_t)ix));
	} else if (json_is_object(a) && json_is_string(b)) {
		r = json_object_get(a, json_string_value(b));
		if (r == NULL)
			fail(e, "no such key: %s", json_string_value(b));
		else
			json_incref(r);
	} else
		fail(e, "no such overload: %s[%s]", type_name(a), type_name(b));
	json_decref(a);
	json_decref(b);
	return r;
}

/* && and ||, CEL's way: an error on one side is absorbed when the other
 * side decides. */
static json_t *logic(struct env *e, const struct cel__node *n)
{
	json_t *a, *b;
	bool is_and = n->kind == CEL_N_AND;
	char saved[sizeof(e->err)];

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

static json_t *eval(struct env *e, const struct cel__node *n)
{
	json_t *a, *b, *r;
	size_t i;

	if (++e->steps > 1000000)
		return fail(e, "evaluation too costly");
	switch (n->kind) {
	case CEL_N_LIT:
		return json_incref(n->lit);
	case CEL_N_IDENT:
		for (i = e->n; i > 0; i--)
			if (strcmp(e->vars[i - 1].name, n->name) == 0) {
				if (e->vars[i - 1].v == NULL)
					return fail(e, "no such attribute: %s",
					    n->name);
				return json_incref(e->vars[i - 1].v);
			}
		return fail(e, "undeclared reference to '%s'", n->name);
	case CEL_N_SELECT:
	case CEL_N_HAS:
		if ((a = eval(e, n->a)) == NULL)
			return NULL;
		if (!json_is_object(a)) {
			json_decref(a);
			return fail(e, "no such key: %s", n->name);
		}
		r = json_object_get(a, n->name);
		if (n->kind == CEL_N_HAS) {
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
	case CEL_N_INDEX:
		return index_of(e, n);
	case CEL_N_CALL:
		return call(e, n);
	case CEL_N_MACRO:
		return macro(e, n);
	case CEL_N_LIST:
		r = json_array();
		for (i = 0; i < n->nargs; i++) {
			if ((a = eval(e, n->args[i])) == NULL) {
				json_decref(r);
				return NULL;
			}
			json_array_append_new(r, a);
		}
		return r;
	case CEL_N_NOT:
		if ((a = eval(e, n->a)) == NULL)
			return NULL;
		r = json_is_boolean(a)
			? json_boolean(!json_is_true(a))
			: fail(e, "no such overload: !%s", type_name(a));
		json_decref(a);
		return r;
	case CEL_N_NEG:
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
	case CEL_N_BIN:
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
	case CEL_N_AND:
	case CEL_N_OR:
		return logic(e, n);
	case CEL_N_COND:
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

json_t *cel_eval(
    const struct cel_expr *cel, const struct cel_env *env, char **err)
{
	struct env e;
	json_t *r;
	size_t i;

	memset(&e, 0, sizeof(e));
	*err = NULL;
	if (env->n_vars > CEL_MAX_VARS) {
		*err = cu_strdup("too many variables");
		return NULL;
	}
	for (i = 0; i < env->n_vars; i++) {
		e.vars[i].name = env->vars[i].name;
		e.vars[i].v = env->vars[i].v;
	}
	e.n = env->n_vars;
	e.match = env->match;
	r = eval(&e, cel->root);
	if (r == NULL)
		*err = cu_strdup(e.err[0] ? e.err : "evaluation error");
	return r;
}
