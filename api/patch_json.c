/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/patch_json.c - RFC 6902 JSON Patch and RFC 6901 JSON pointers, as
 * the API server applies them to `application/json-patch+json` PATCH
 * requests.
 *
 * Two passes: the whole patch is decoded and checked first (so a
 * malformed patch is a 400 no matter what the document holds), then the
 * ops are applied one by one to a private deep copy of the document, so a
 * failing op leaves the caller's document untouched.
 */
#include <stdio.h>
#include <string.h>

#include "api/patch.h"
#include "api/patch_int.h"

/*
 * A patch may grow the document only so far: "copy" can double it per op
 * (10000 ops would be 2^10000 nodes) and nesting a value into itself can
 * double its depth, which would overflow the stack of every recursive
 * jansson function. The real API server bounds copies the same way.
 */
#define COPY_NODES_MAX ((size_t)1 << 20)

enum op_kind { OP_ADD, OP_REMOVE, OP_REPLACE, OP_MOVE, OP_COPY, OP_TEST };

static const char *const op_names[] = {
    [OP_ADD] = "add",
    [OP_REMOVE] = "remove",
    [OP_REPLACE] = "replace",
    [OP_MOVE] = "move",
    [OP_COPY] = "copy",
    [OP_TEST] = "test",
};

/* A decoded JSON pointer: tokens already unescaped. */
struct ptr {
	char **tok; /* owned; cu_malloc; each token owned (cu_strdup) */
	size_t n;
};

struct op {
	enum op_kind kind;
	const char *path_s;  /* borrowed from the patch */
	const char *from_s;  /* borrowed from the patch; move/copy only */
	const json_t *value; /* borrowed from the patch; add/replace/test */
	struct ptr path;
	struct ptr from;
};

char *api_json_pointer_escape(const char *key)
{
	size_t n = 0, i;
	const char *s;
	char *out;

	for (s = key; *s; s++)
		n += (*s == '~' || *s == '/') ? 2 : 1;
	out = cu_malloc(n + 1);
	if (out == NULL)
		return NULL;
	for (s = key, i = 0; *s; s++) {
		if (*s == '~') {
			out[i++] = '~';
			out[i++] = '0';
		} else if (*s == '/') {
			out[i++] = '~';
			out[i++] = '1';
		} else {
			out[i++] = *s;
		}
	}
	out[i] = '\0';
	return out;
}

static void ptr_dispose(struct ptr *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		cu_free(p->tok[i]);
	cu_free(p->tok);
	p->tok = NULL;
	p->n = 0;
}

/* Decode one pointer. Returns CU_EPARSE with a static reason in *why. */
static int ptr_parse(struct ptr *p, const char *s, const char **why)
{
	size_t count = 0, i;
	const char *c;

	p->tok = NULL;
	p->n = 0;
	if (*s == '\0')
		return CU_OK; /* the whole document */
	if (*s != '/') {
		*why = "JSON pointer must be empty or start with '/'";
		return CU_EPARSE;
	}
	for (c = s; *c; c++) {
		if (*c == '/')
			count++;
		/* RFC 6901 defines only ~0 and ~1; anything else is a
		 * syntax error, not a literal '~'. */
		if (*c == '~' && c[1] != '0' && c[1] != '1') {
			*why = "JSON pointer has '~' not followed by 0 or 1";
			return CU_EPARSE;
		}
	}
	p->tok = cu_calloc(count, sizeof(*p->tok));
	if (p->tok == NULL) {
		*why = "out of memory";
		return CU_ENOMEM;
	}
	c = s + 1;
	for (i = 0; i < count; i++) {
		const char *end = strchr(c, '/');
		size_t len = end ? (size_t)(end - c) : strlen(c);
		size_t j, k = 0;
		char *t = cu_malloc(len + 1);

		if (t == NULL) {
			ptr_dispose(p);
			*why = "out of memory";
			return CU_ENOMEM;
		}
		for (j = 0; j < len; j++) {
			if (c[j] == '~') {
				t[k++] = c[j + 1] == '0' ? '~' : '/';
				j++;
			} else {
				t[k++] = c[j];
			}
		}
		t[k] = '\0';
		p->tok[p->n++] = t;
		c += len + 1;
	}
	return CU_OK;
}

/* RFC 6901 array index: "0" or a digit string without leading zeros. */
static bool parse_index(const char *tok, size_t *out)
{
	size_t v = 0;
	const char *c;

	if (tok[0] == '\0' || (tok[0] == '0' && tok[1] != '\0'))
		return false;
	if (strlen(tok) > 18)
		return false; /* beyond any array jansson can hold */
	for (c = tok; *c; c++) {
		if (*c < '0' || *c > '9')
			return false;
		v = v * 10 + (size_t)(*c - '0');
	}
	*out = v;
	return true;
}

/* The value the first n tokens of p point at, or NULL. */
static json_t *ptr_get(json_t *root, const struct ptr *p, size_t n)
{
	json_t *cur = root;
	size_t i, idx;

	for (i = 0; i < n && cur != NULL; i++) {
		if (json_is_object(cur))
			cur = json_object_get(cur, p->tok[i]);
		else if (json_is_array(cur) && parse_index(p->tok[i], &idx))
			cur = json_array_get(cur, idx); /* NULL if too big */
		else
			cur = NULL;
	}
	return cur;
}

/* Numbers compare by value (RFC 6902 4.6: 1 equals 1.0), unlike
 * json_equal, which tells integers and reals apart. */
static bool value_equal(const json_t *a, const json_t *b)
{
	if (json_is_number(a) && json_is_number(b)) {
		if (json_is_integer(a) && json_is_integer(b))
			return json_integer_value(a) == json_integer_value(b);
		return json_number_value(a) == json_number_value(b);
	}
	if (json_typeof(a) != json_typeof(b))
		return false;
	if (json_is_object(a)) {
		const char *key;
		json_t *va;

		if (json_object_size(a) != json_object_size(b))
			return false;
		/* jansson's iterators take non-const pointers; nothing is
		 * modified. */
		json_object_foreach((json_t *)a, key, va)
		{
			const json_t *vb = json_object_get(b, key);

			if (vb == NULL || !value_equal(va, vb))
				return false;
		}
		return true;
	}
	if (json_is_array(a)) {
		size_t i;

		if (json_array_size(a) != json_array_size(b))
			return false;
		for (i = 0; i < json_array_size(a); i++)
			if (!value_equal(
				json_array_get(a, i), json_array_get(b, i)))
				return false;
		return true;
	}
	return json_equal(a, b);
}

/* Error prefix helpers keep every message "op N (name path): why". */
#define OPERR(err, code, i, o, ...)                                            \
	patch_op_error(                                                        \
	    err, code, i, op_names[(o)->kind], (o)->path_s, __VA_ARGS__)

CU_PRINTF(6, 7)
static int patch_op_error(cu_error *err, int code, size_t i, const char *name,
    const char *path, const char *fmt, ...)
{
	char why[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	/* Keep the reason visible when a pointer is long: cut the path. */
	return cu_error_set(err, code, "op %zu (%s %.200s%s): %s", i, name,
	    path, strlen(path) > 200 ? "..." : "", why);
}

/* Insert value [consumed] at p ("add" semantics). */
static int do_add(json_t **root, const struct ptr *p, json_t *value, size_t i,
    const struct op *o, cu_error *err)
{
	json_t *parent;
	const char *last;
	size_t idx;

	if (p->n + api_patch_depth(value) > API_PATCH_MAX_DEPTH) {
		json_decref(value);
		return OPERR(err, CU_EINVAL, i, o, "result nested too deeply");
	}
	if (p->n == 0) {
		json_decref(*root);
		*root = value;
		return CU_OK;
	}
	parent = ptr_get(*root, p, p->n - 1);
	last = p->tok[p->n - 1];
	if (parent == NULL) {
		json_decref(value);
		return OPERR(err, CU_EINVAL, i, o, "parent does not exist");
	}
	if (json_is_object(parent)) {
		if (json_object_set_new(parent, last, value) != 0)
			return OPERR(err, CU_ENOMEM, i, o, "out of memory");
		return CU_OK;
	}
	if (!json_is_array(parent)) {
		json_decref(value);
		return OPERR(err, CU_EINVAL, i, o,
		    "parent is neither an object nor an array");
	}
	if (strcmp(last, "-") == 0) {
		idx = json_array_size(parent);
	} else if (!parse_index(last, &idx) || idx > json_array_size(parent)) {
		json_decref(value);
		return OPERR(err, CU_EINVAL, i, o, "array index out of range");
	}
	if (json_array_insert_new(parent, idx, value) != 0)
		return OPERR(err, CU_ENOMEM, i, o, "out of memory");
	return CU_OK;
}

/* Detach the value at p; *removed [owned: json_decref] when non-NULL. */
static int do_remove(json_t *root, const struct ptr *p, json_t **removed,
    size_t i, const struct op *o, cu_error *err)
{
	json_t *parent, *child;
	const char *last;
	size_t idx;

	if (p->n == 0)
		return OPERR(
		    err, CU_EINVAL, i, o, "cannot remove the document root");
	parent = ptr_get(root, p, p->n - 1);
	last = p->tok[p->n - 1];
	if (json_is_object(parent)) {
		child = json_object_get(parent, last);
		if (child == NULL)
			return OPERR(
			    err, CU_EINVAL, i, o, "path does not exist");
		if (removed)
			*removed = json_incref(child);
		json_object_del(parent, last);
		return CU_OK;
	}
	if (json_is_array(parent)) {
		if (!parse_index(last, &idx) || idx >= json_array_size(parent))
			return OPERR(
			    err, CU_EINVAL, i, o, "array index out of range");
		if (removed)
			*removed = json_incref(json_array_get(parent, idx));
		json_array_remove(parent, idx);
		return CU_OK;
	}
	return OPERR(err, CU_EINVAL, i, o, "path does not exist");
}

static bool is_proper_prefix(const struct ptr *a, const struct ptr *b)
{
	size_t k;

	if (a->n >= b->n)
		return false;
	for (k = 0; k < a->n; k++)
		if (strcmp(a->tok[k], b->tok[k]) != 0)
			return false;
	return true;
}

static bool ptr_same(const struct ptr *a, const struct ptr *b)
{
	size_t k;

	if (a->n != b->n)
		return false;
	for (k = 0; k < a->n; k++)
		if (strcmp(a->tok[k], b->tok[k]) != 0)
			return false;
	return true;
}

static size_t count_nodes(const json_t *v)
{
	size_t n = 1, k;
	const char *key;
	json_t *child;

	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, key, child) n +=
		    count_nodes(child);
	} else if (json_is_array(v)) {
		for (k = 0; k < json_array_size(v); k++)
			n += count_nodes(json_array_get(v, k));
	}
	return n;
}

static int apply_op(
    json_t **root, size_t i, const struct op *o, size_t *copied, cu_error *err)
{
	json_t *target, *v;
	int rc;

	switch (o->kind) {
	case OP_ADD:
		v = json_deep_copy(o->value);
		if (v == NULL)
			return OPERR(err, CU_ENOMEM, i, o, "out of memory");
		return do_add(root, &o->path, v, i, o, err);
	case OP_REMOVE:
		return do_remove(*root, &o->path, NULL, i, o, err);
	case OP_REPLACE:
		if (ptr_get(*root, &o->path, o->path.n) == NULL)
			return OPERR(
			    err, CU_EINVAL, i, o, "path does not exist");
		/* The target exists, so removing then adding at the same
		 * place is a replace (array indices stay valid). */
		if (o->path.n > 0) {
			rc = do_remove(*root, &o->path, NULL, i, o, err);
			if (rc != CU_OK)
				return rc;
		}
		v = json_deep_copy(o->value);
		if (v == NULL)
			return OPERR(err, CU_ENOMEM, i, o, "out of memory");
		return do_add(root, &o->path, v, i, o, err);
	case OP_MOVE:
		if (ptr_get(*root, &o->from, o->from.n) == NULL)
			return OPERR(err, CU_EINVAL, i, o,
			    "from %.200s does not exist", o->from_s);
		if (is_proper_prefix(&o->from, &o->path))
			return OPERR(err, CU_EINVAL, i, o,
			    "cannot move %.200s into its own child", o->from_s);
		if (ptr_same(&o->from, &o->path))
			return CU_OK;
		rc = do_remove(*root, &o->from, &v, i, o, err);
		if (rc != CU_OK)
			return rc;
		return do_add(root, &o->path, v, i, o, err);
	case OP_COPY:
		target = ptr_get(*root, &o->from, o->from.n);
		if (target == NULL)
			return OPERR(err, CU_EINVAL, i, o,
			    "from %.200s does not exist", o->from_s);
		*copied += count_nodes(target);
		if (*copied > COPY_NODES_MAX)
			return OPERR(err, CU_EINVAL, i, o,
			    "copied values exceed %zu nodes", COPY_NODES_MAX);
		v = json_deep_copy(target);
		if (v == NULL)
			return OPERR(err, CU_ENOMEM, i, o, "out of memory");
		return do_add(root, &o->path, v, i, o, err);
	case OP_TEST:
		target = ptr_get(*root, &o->path, o->path.n);
		if (target == NULL)
			return OPERR(
			    err, CU_EINVAL, i, o, "path does not exist");
		if (!value_equal(target, o->value))
			return OPERR(err, CU_EINVAL, i, o, "value mismatch");
		return CU_OK;
	}
	CU_ASSERT(!"unreachable op kind");
	return CU_EINVAL;
}

/* Check and decode op i of the patch into *o. */
static int decode_op(struct op *o, const json_t *jop, size_t i, cu_error *err)
{
	const json_t *jname, *jpath, *jfrom;
	const char *name, *why = NULL;
	size_t k;
	int rc;

	if (!json_is_object(jop))
		return cu_error_set(err, CU_EPARSE, "op %zu: not an object", i);
	jname = json_object_get(jop, "op");
	if (!json_is_string(jname))
		return cu_error_set(err, CU_EPARSE,
		    "op %zu: \"op\" missing or not a string", i);
	name = json_string_value(jname);
	for (k = 0; k < sizeof(op_names) / sizeof(op_names[0]); k++)
		if (strcmp(name, op_names[k]) == 0)
			break;
	if (k == sizeof(op_names) / sizeof(op_names[0]))
		return cu_error_set(
		    err, CU_EPARSE, "op %zu: unknown op \"%s\"", i, name);
	o->kind = (enum op_kind)k;
	jpath = json_object_get(jop, "path");
	if (!json_is_string(jpath))
		return cu_error_set(err, CU_EPARSE,
		    "op %zu (%s): \"path\" missing or not a string", i, name);
	o->path_s = json_string_value(jpath);
	rc = ptr_parse(&o->path, o->path_s, &why);
	if (rc != CU_OK)
		return OPERR(err, rc, i, o, "%s", why);
	if (o->kind == OP_MOVE || o->kind == OP_COPY) {
		jfrom = json_object_get(jop, "from");
		if (!json_is_string(jfrom))
			return OPERR(err, CU_EPARSE, i, o,
			    "\"from\" missing or not a string");
		o->from_s = json_string_value(jfrom);
		rc = ptr_parse(&o->from, o->from_s, &why);
		if (rc != CU_OK)
			return OPERR(err, rc, i, o, "from: %s", why);
	}
	if (o->kind == OP_ADD || o->kind == OP_REPLACE || o->kind == OP_TEST) {
		/* A JSON null is a legal value; only absence is an error. */
		o->value = json_object_get(jop, "value");
		if (o->value == NULL)
			return OPERR(err, CU_EPARSE, i, o, "\"value\" missing");
	}
	return CU_OK;
}

int api_json_patch_apply(
    json_t **out, const json_t *doc, const json_t *patch, cu_error *err)
{
	struct op *ops;
	size_t n, i, copied = 0;
	json_t *root = NULL;
	int rc = CU_OK;

	CU_ASSERT(out != NULL && doc != NULL && patch != NULL);
	*out = NULL;
	if (!json_is_array(patch))
		return cu_error_set(
		    err, CU_EPARSE, "JSON patch: document is not an array");
	n = json_array_size(patch);
	if (n > API_JSON_PATCH_MAX_OPS)
		return cu_error_set(err, CU_EPARSE,
		    "JSON patch: %zu operations, at most %d allowed", n,
		    API_JSON_PATCH_MAX_OPS);
	ops = cu_calloc(n ? n : 1, sizeof(*ops));
	if (ops == NULL)
		return cu_error_set(
		    err, CU_ENOMEM, "JSON patch: out of memory");
	for (i = 0; i < n && rc == CU_OK; i++)
		rc = decode_op(&ops[i], json_array_get(patch, i), i, err);
	if (rc != CU_OK)
		goto out_free_ops;
	root = json_deep_copy(doc);
	if (root == NULL) {
		rc = cu_error_set(err, CU_ENOMEM, "JSON patch: out of memory");
		goto out_free_ops;
	}
	for (i = 0; i < n && rc == CU_OK; i++)
		rc = apply_op(&root, i, &ops[i], &copied, err);
	if (rc == CU_OK) {
		*out = root;
		root = NULL;
	}
	json_decref(root);
out_free_ops:
	for (i = 0; i < n; i++) {
		ptr_dispose(&ops[i].path);
		ptr_dispose(&ops[i].from);
	}
	cu_free(ops);
	return rc;
}
