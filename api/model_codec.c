/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/model_codec.c - the field-level JSON readers and writers every kind
 * codec is built from (see model_internal.h), plus the small containers of
 * model.h (string maps, lists, resource lists); conditions are in
 * model_conditions.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "api/model_internal.h"

/* ---- containers -------------------------------------------------------- */

const char *api_strmap_get(const struct api_strmap *m, const char *key)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (strcmp(m->items[i].key, key) == 0)
			return m->items[i].value;
	return NULL;
}

int api_strmap_set(
    struct api_strmap *m, const char *key, const char *value, cu_error *err)
{
	size_t i;
	char *v = cu_strdup(value);
	char *k;
	struct api_kv *items;

	if (v == NULL)
		return cu_error_set(
		    err, CU_ENOMEM, "map[%s]: out of memory", key);
	for (i = 0; i < m->n; i++) {
		if (strcmp(m->items[i].key, key) == 0) {
			cu_free(m->items[i].value);
			m->items[i].value = v;
			return CU_OK;
		}
	}
	k = cu_strdup(key);
	items = k ? cu_realloc(m->items, (m->n + 1) * sizeof(*items)) : NULL;
	if (items == NULL) {
		cu_free(k);
		cu_free(v);
		return cu_error_set(
		    err, CU_ENOMEM, "map[%s]: out of memory", key);
	}
	items[m->n].key = k;
	items[m->n].value = v;
	m->items = items;
	m->n++;
	return CU_OK;
}

void api_strmap_dispose(struct api_strmap *m)
{
	size_t i;

	for (i = 0; i < m->n; i++) {
		cu_free(m->items[i].key);
		cu_free(m->items[i].value);
	}
	cu_free(m->items);
	m->items = NULL;
	m->n = 0;
}

void api_strlist_dispose(struct api_strlist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		cu_free(l->items[i]);
	cu_free(l->items);
	l->items = NULL;
	l->n = 0;
}

const struct api_quantity *api_qmap_get(
    const struct api_qmap *m, const char *name)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (strcmp(m->items[i].name, name) == 0)
			return &m->items[i].q;
	return NULL;
}

void api_qmap_dispose(struct api_qmap *m)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		cu_free(m->items[i].name);
	cu_free(m->items);
	m->items = NULL;
	m->n = 0;
}

void api_tolerations_dispose(struct api_toleration *t, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		cu_free(t[i].key);
		cu_free(t[i].value);
	}
	cu_free(t);
}

/* ---- decoding context ----------------------------------------------- */

void apid_init(struct api_dec *d, cu_error *err)
{
	d->path[0] = '\0';
	d->len = 0;
	d->rc = CU_OK;
	d->err = err;
}

static size_t apid_append(struct api_dec *d, const char *s)
{
	size_t mark = d->len;
	size_t n = strlen(s);

	if (d->len + n >= sizeof(d->path))
		n = sizeof(d->path) - 1 - d->len;
	memcpy(d->path + d->len, s, n);
	d->len += n;
	d->path[d->len] = '\0';
	return mark;
}

size_t apid_push(struct api_dec *d, const char *key)
{
	size_t mark = d->len;

	if (d->len > 0)
		apid_append(d, ".");
	apid_append(d, key);
	return mark;
}

size_t apid_push_idx(struct api_dec *d, size_t i)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "[%zu]", i);
	return apid_append(d, buf);
}

void apid_pop(struct api_dec *d, size_t mark)
{
	if (mark <= d->len) {
		d->len = mark;
		d->path[mark] = '\0';
	}
}

int apid_fail(struct api_dec *d, int code, const char *fmt, ...)
{
	char msg[CU_ERROR_MSG_MAX];
	va_list ap;

	if (d->rc != CU_OK)
		return d->rc;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	d->rc = code;
	cu_error_set(
	    d->err, code, "%s: %s", d->len ? d->path : "<object>", msg);
	return code;
}

void apid_nomem(struct api_dec *d)
{
	apid_fail(d, CU_ENOMEM, "out of memory");
}

const json_t *apid_field(struct api_dec *d, const json_t *o, const char *key,
    json_type want, bool required)
{
	const json_t *v;
	size_t mark;

	if (d->rc != CU_OK || o == NULL)
		return NULL;
	v = json_object_get(o, key);
	if (v == NULL || json_is_null(v)) {
		if (required) {
			mark = apid_push(d, key);
			apid_fail(d, CU_EINVAL, "Required value");
			apid_pop(d, mark);
		}
		return NULL;
	}
	if (json_typeof(v) != want) {
		mark = apid_push(d, key);
		apid_fail(d, CU_EPARSE, "Invalid type: expected %s, got %s",
		    api_json_type_word(want, true),
		    api_json_type_name(v, true));
		apid_pop(d, mark);
		return NULL;
	}
	return v;
}

void apid_str(struct api_dec *d, const json_t *o, const char *key,
    bool required, char **out)
{
	const json_t *v = apid_field(d, o, key, JSON_STRING, required);
	char *s;

	if (v == NULL)
		return;
	s = cu_strndup(json_string_value(v), json_string_length(v));
	if (s == NULL) {
		apid_nomem(d);
		return;
	}
	cu_free(*out);
	*out = s;
}

static void apid_int(struct api_dec *d, const json_t *o, const char *key,
    bool required, bool *has, int64_t *out, int64_t lo, int64_t hi)
{
	const json_t *v = apid_field(d, o, key, JSON_INTEGER, required);
	json_int_t x;
	size_t mark;

	if (v == NULL)
		return;
	x = json_integer_value(v);
	if (x < lo || x > hi) {
		mark = apid_push(d, key);
		apid_fail(d, CU_ERANGE,
		    "Invalid value: %" JSON_INTEGER_FORMAT
		    ": must be between %" PRId64 " and %" PRId64,
		    x, lo, hi);
		apid_pop(d, mark);
		return;
	}
	*out = x;
	if (has)
		*has = true;
}

void apid_i32(struct api_dec *d, const json_t *o, const char *key,
    bool required, bool *has, int32_t *out)
{
	int64_t v = 0;
	bool got = false;

	apid_int(d, o, key, required, &got, &v, INT32_MIN, INT32_MAX);
	if (got) {
		*out = (int32_t)v;
		if (has)
			*has = true;
	}
}

void apid_i64(struct api_dec *d, const json_t *o, const char *key,
    bool required, bool *has, int64_t *out)
{
	apid_int(d, o, key, required, has, out, INT64_MIN, INT64_MAX);
}

void apid_bool(
    struct api_dec *d, const json_t *o, const char *key, bool *has, bool *out)
{
	const json_t *v;
	size_t mark;

	if (d->rc != CU_OK || o == NULL)
		return;
	v = json_object_get(o, key);
	if (v == NULL || json_is_null(v))
		return;
	if (!json_is_boolean(v)) {
		mark = apid_push(d, key);
		apid_fail(d, CU_EPARSE,
		    "Invalid type: expected boolean, got %s",
		    api_json_type_name(v, true));
		apid_pop(d, mark);
		return;
	}
	*out = json_is_true(v);
	if (has)
		*has = true;
}

/* Quantities are strings on the wire, but Kubernetes also accepts bare
 * JSON numbers; both are turned into the string the parser expects. */
static int qty_from_json(const json_t *v, struct api_quantity *q, cu_error *err)
{
	char buf[64];

	if (json_is_string(v))
		return api_quantity_parse(q, json_string_value(v), err);
	if (json_is_integer(v)) {
		snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT,
		    json_integer_value(v));
		return api_quantity_parse(q, buf, err);
	}
	if (json_is_real(v)) {
		snprintf(buf, sizeof(buf), "%.17g", json_real_value(v));
		return api_quantity_parse(q, buf, err);
	}
	return cu_error_set(err, CU_EPARSE,
	    "Invalid type: expected string, got %s",
	    api_json_type_name(v, true));
}

void apid_qty(struct api_dec *d, const json_t *o, const char *key,
    bool required, bool *has, struct api_quantity *out)
{
	const json_t *v;
	cu_error local;
	size_t mark;
	int rc;

	if (d->rc != CU_OK || o == NULL)
		return;
	v = json_object_get(o, key);
	if (v == NULL || json_is_null(v)) {
		apid_field(d, o, key, JSON_STRING, required);
		return;
	}
	cu_error_clear(&local);
	rc = qty_from_json(v, out, &local);
	if (rc != CU_OK) {
		mark = apid_push(d, key);
		apid_fail(d, rc == CU_ENOMEM ? CU_ENOMEM : CU_EPARSE, "%s",
		    local.msg);
		apid_pop(d, mark);
		return;
	}
	if (has)
		*has = true;
}

void apid_time(struct api_dec *d, const json_t *o, const char *key,
    bool required, bool *has, int64_t *out)
{
	const json_t *v = apid_field(d, o, key, JSON_STRING, required);
	cu_error local;
	size_t mark;

	if (v == NULL)
		return;
	cu_error_clear(&local);
	if (cu_time_parse(json_string_value(v), out, &local) != CU_OK) {
		mark = apid_push(d, key);
		apid_fail(d, CU_EPARSE, "%s", local.msg);
		apid_pop(d, mark);
		return;
	}
	if (has)
		*has = true;
}

void apid_enum(struct api_dec *d, const json_t *o, const char *key,
    bool required, const struct api_enum_name *tbl, int *out)
{
	const json_t *v = apid_field(d, o, key, JSON_STRING, required);
	char supported[256];
	size_t i, len = 0, mark;

	if (v == NULL)
		return;
	for (i = 0; tbl[i].name; i++) {
		if (strcmp(tbl[i].name, json_string_value(v)) == 0) {
			*out = tbl[i].value;
			return;
		}
	}
	supported[0] = '\0';
	for (i = 0; tbl[i].name && len < sizeof(supported); i++) {
		int w = snprintf(supported + len, sizeof(supported) - len,
		    "%s\"%s\"", i ? ", " : "", tbl[i].name);
		if (w < 0)
			break;
		len += (size_t)w;
	}
	mark = apid_push(d, key);
	apid_fail(d, CU_EINVAL,
	    "Unsupported value: \"%.64s\": supported values: %s",
	    json_string_value(v), supported);
	apid_pop(d, mark);
}

void apid_strmap(
    struct api_dec *d, const json_t *o, const char *key, struct api_strmap *out)
{
	const json_t *v = apid_field(d, o, key, JSON_OBJECT, false);
	const char *k;
	json_t *val;
	size_t n, i = 0, mark;

	if (v == NULL)
		return;
	n = json_object_size(v);
	if (n == 0)
		return;
	out->items = cu_calloc(n, sizeof(*out->items));
	if (out->items == NULL) {
		apid_nomem(d);
		return;
	}
	mark = apid_push(d, key);
	json_object_foreach((json_t *)v, k, val)
	{
		if (!json_is_string(val)) {
			size_t m2 = apid_push(d, k);
			apid_fail(d, CU_EPARSE,
			    "Invalid type: expected string, got %s",
			    api_json_type_name(val, true));
			apid_pop(d, m2);
			break;
		}
		out->items[i].key = cu_strdup(k);
		out->items[i].value =
		    cu_strndup(json_string_value(val), json_string_length(val));
		out->n = ++i;
		if (!out->items[i - 1].key || !out->items[i - 1].value) {
			apid_nomem(d);
			break;
		}
	}
	apid_pop(d, mark);
}

void apid_strlist(struct api_dec *d, const json_t *o, const char *key,
    bool required, struct api_strlist *out)
{
	const json_t *arr = apid_field(d, o, key, JSON_ARRAY, required);
	size_t n, i, mark;

	if (arr == NULL || (n = json_array_size(arr)) == 0)
		return;
	out->items = cu_calloc(n, sizeof(*out->items));
	if (out->items == NULL) {
		apid_nomem(d);
		return;
	}
	mark = apid_push(d, key);
	for (i = 0; i < n && d->rc == CU_OK; i++) {
		const json_t *s = json_array_get(arr, i);

		if (!json_is_string(s)) {
			size_t m2 = apid_push_idx(d, i);
			apid_fail(d, CU_EPARSE,
			    "Invalid type: expected string, got %s",
			    api_json_type_name(s, true));
			apid_pop(d, m2);
			break;
		}
		out->items[i] =
		    cu_strndup(json_string_value(s), json_string_length(s));
		out->n = i + 1;
		if (out->items[i] == NULL)
			apid_nomem(d);
	}
	apid_pop(d, mark);
}

void apid_qmap(
    struct api_dec *d, const json_t *o, const char *key, struct api_qmap *out)
{
	const json_t *v = apid_field(d, o, key, JSON_OBJECT, false);
	const char *k;
	json_t *val;
	size_t n, mark;

	if (v == NULL || (n = json_object_size(v)) == 0)
		return;
	out->items = cu_calloc(n, sizeof(*out->items));
	if (out->items == NULL) {
		apid_nomem(d);
		return;
	}
	mark = apid_push(d, key);
	json_object_foreach((json_t *)v, k, val)
	{
		struct api_qentry *qe = &out->items[out->n];

		apid_qty(d, v, k, true, NULL, &qe->q);
		if (d->rc != CU_OK)
			break;
		qe->name = cu_strdup(k);
		if (qe->name == NULL) {
			apid_nomem(d);
			break;
		}
		out->n++;
	}
	apid_pop(d, mark);
}

json_t *apid_json(struct api_dec *d, const json_t *o, const char *key,
    json_type want, bool required)
{
	const json_t *v = apid_field(d, o, key, want, required);

	return v ? json_incref((json_t *)v) : NULL;
}

void *apid_array(struct api_dec *d, const json_t *o, const char *key,
    bool required, size_t size, size_t *n, const json_t **arr)
{
	const json_t *a = apid_field(d, o, key, JSON_ARRAY, required);
	void *p;

	*n = 0;
	*arr = NULL;
	if (a == NULL || json_array_size(a) == 0)
		return NULL;
	p = cu_calloc(json_array_size(a), size);
	if (p == NULL) {
		apid_nomem(d);
		return NULL;
	}
	*arr = a;
	*n = json_array_size(a);
	return p;
}

const json_t *apid_elem(
    struct api_dec *d, const json_t *arr, size_t i, size_t *mark)
{
	const json_t *v = json_array_get(arr, i);

	*mark = apid_push_idx(d, i);
	if (d->rc != CU_OK)
		return NULL;
	if (!json_is_object(v)) {
		apid_fail(d, CU_EPARSE, "Invalid type: expected object, got %s",
		    api_json_type_name(v, true));
		return NULL;
	}
	return v;
}

const json_t *apid_section(struct api_dec *d, const json_t *o, const char *key,
    bool required, size_t *mark)
{
	const json_t *s = apid_field(d, o, key, JSON_OBJECT, required);

	*mark = apid_push(d, key);
	return s;
}

void *apid_each(struct api_dec *d, const json_t *o, const char *key,
    bool required, size_t size, size_t *n, apid_elem_fn fn, void *ctx)
{
	const json_t *arr;
	size_t len, i, mark, m2;
	char *items = apid_array(d, o, key, required, size, &len, &arr);

	*n = 0;
	if (items == NULL)
		return NULL;
	mark = apid_push(d, key);
	for (i = 0; i < len && d->rc == CU_OK; i++) {
		const json_t *e = apid_elem(d, arr, i, &m2);

		*n = i + 1;
		if (e != NULL)
			fn(d, e, items + i * size, ctx);
		apid_pop(d, m2);
	}
	apid_pop(d, mark);
	return items;
}

void api_meta_dispose(struct api_meta *m)
{
	size_t i;

	if (m == NULL)
		return;
	cu_free(m->name);
	cu_free(m->generate_name);
	cu_free(m->namespace_);
	cu_free(m->uid);
	cu_free(m->resource_version);
	api_strmap_dispose(&m->labels);
	api_strmap_dispose(&m->annotations);
	for (i = 0; i < m->n_owner_refs; i++) {
		cu_free(m->owner_refs[i].api_version);
		cu_free(m->owner_refs[i].kind);
		cu_free(m->owner_refs[i].name);
		cu_free(m->owner_refs[i].uid);
	}
	cu_free(m->owner_refs);
	api_strlist_dispose(&m->finalizers);
	memset(m, 0, sizeof(*m));
}

static void dec_owner_ref(
    struct api_dec *d, const json_t *e, void *item, void *ctx)
{
	struct api_owner_ref *r = item;

	(void)ctx;
	apid_str(d, e, "apiVersion", true, &r->api_version);
	apid_str(d, e, "kind", true, &r->kind);
	apid_str(d, e, "name", true, &r->name);
	apid_str(d, e, "uid", true, &r->uid);
	apid_bool(d, e, "controller", &r->has_controller, &r->controller);
	apid_bool(d, e, "blockOwnerDeletion", &r->has_block_owner_deletion,
	    &r->block_owner_deletion);
}

static void apid_meta_fields(
    struct api_dec *d, const json_t *md, struct api_meta *out)
{
	apid_str(d, md, "name", false, &out->name);
	apid_str(d, md, "generateName", false, &out->generate_name);
	apid_str(d, md, "namespace", false, &out->namespace_);
	apid_str(d, md, "uid", false, &out->uid);
	apid_str(d, md, "resourceVersion", false, &out->resource_version);
	apid_i64(
	    d, md, "generation", false, &out->has_generation, &out->generation);
	apid_strmap(d, md, "labels", &out->labels);
	apid_strmap(d, md, "annotations", &out->annotations);
	out->owner_refs = apid_each(d, md, "ownerReferences", false,
	    sizeof(*out->owner_refs), &out->n_owner_refs, dec_owner_ref, NULL);
	apid_strlist(d, md, "finalizers", false, &out->finalizers);
	apid_time(d, md, "creationTimestamp", false, &out->has_creation,
	    &out->creation_ns);
	apid_time(d, md, "deletionTimestamp", false, &out->has_deletion,
	    &out->deletion_ns);
}

void apid_meta(struct api_dec *d, const json_t *o, struct api_meta *out)
{
	const json_t *md = apid_field(d, o, "metadata", JSON_OBJECT, false);
	size_t mark;

	if (md == NULL)
		return;
	mark = apid_push(d, "metadata");
	apid_meta_fields(d, md, out);
	apid_pop(d, mark);
}

int api_meta_decode(struct api_meta *out, const json_t *j, cu_error *err)
{
	struct api_dec d;

	apid_init(&d, err);
	memset(out, 0, sizeof(*out));
	apid_push(&d, "metadata");
	if (!json_is_object(j))
		return apid_fail(
		    &d, CU_EPARSE, "Invalid type: expected object");
	apid_meta_fields(&d, j, out);
	if (d.rc != CU_OK)
		api_meta_dispose(out);
	return d.rc;
}

int api_object_meta_decode(
    struct api_meta *out, const json_t *obj, cu_error *err)
{
	struct api_dec d;

	apid_init(&d, err);
	memset(out, 0, sizeof(*out));
	apid_meta(&d, obj, out);
	if (d.rc != CU_OK)
		api_meta_dispose(out);
	return d.rc;
}

const struct api_owner_ref *api_meta_controller(const struct api_meta *m)
{
	size_t i;

	for (i = 0; i < m->n_owner_refs; i++)
		if (m->owner_refs[i].has_controller &&
		    m->owner_refs[i].controller)
			return &m->owner_refs[i];
	return NULL;
}

const struct api_enum_name apid_effect_names[] = {
    {"NoSchedule", API_EFFECT_NO_SCHEDULE},
    {"PreferNoSchedule", API_EFFECT_PREFER_NO_SCHEDULE},
    {"NoExecute", API_EFFECT_NO_EXECUTE},
    {NULL, 0},
};

static const struct api_enum_name tol_op_names[] = {
    {"Equal", API_TOL_OP_EQUAL},
    {"Exists", API_TOL_OP_EXISTS},
    {NULL, 0},
};

static void dec_toleration(
    struct api_dec *d, const json_t *e, void *item, void *ctx)
{
	struct api_toleration *t = item;
	int op = 0, eff = 0;

	(void)ctx;
	apid_str(d, e, "key", false, &t->key);
	apid_enum(d, e, "operator", false, tol_op_names, &op);
	apid_str(d, e, "value", false, &t->value);
	/* "" means all effects; keep it distinct from absent only
	 * through the source document. */
	if (json_is_string(json_object_get(e, "effect")) &&
	    json_string_length(json_object_get(e, "effect")) == 0)
		eff = API_EFFECT_UNSET;
	else
		apid_enum(d, e, "effect", false, apid_effect_names, &eff);
	apid_i64(d, e, "tolerationSeconds", false, &t->has_toleration_seconds,
	    &t->toleration_seconds);
	t->op = (enum api_toleration_op)op;
	t->effect = (enum api_taint_effect)eff;
}

void apid_tolerations(struct api_dec *d, const json_t *o, const char *key,
    struct api_toleration **out, size_t *n)
{
	*out =
	    apid_each(d, o, key, false, sizeof(**out), n, dec_toleration, NULL);
}

void apid_kind(struct api_dec *d, const json_t *j, const char *api_version,
    const char *kind)
{
	const json_t *v;
	size_t mark;

	v = apid_field(d, j, "apiVersion", JSON_STRING, false);
	if (v && strcmp(json_string_value(v), api_version) != 0) {
		mark = apid_push(d, "apiVersion");
		apid_fail(d, CU_EINVAL,
		    "Invalid value: \"%.64s\": expected \"%s\"",
		    json_string_value(v), api_version);
		apid_pop(d, mark);
	}
	v = kind != NULL ? apid_field(d, j, "kind", JSON_STRING, false) : NULL;
	if (v && strcmp(json_string_value(v), kind) != 0) {
		mark = apid_push(d, "kind");
		apid_fail(d, CU_EINVAL,
		    "Invalid value: \"%.64s\": expected \"%s\"",
		    json_string_value(v), kind);
		apid_pop(d, mark);
	}
}

int apid_begin(struct api_dec *d, const json_t *j, const char *api_version,
    const char *kind, const char *what, cu_error *err)
{
	apid_init(d, err);
	if (!json_is_object(j))
		return apid_fail(d, CU_EPARSE,
		    "Invalid type: a %s must be a JSON object", what);
	apid_kind(d, j, api_version, kind);
	return d->rc;
}

/* ---- encoding ----------------------------------------------------------- */

void apie_nomem(struct api_enc *e)
{
	if (e->rc != CU_OK)
		return;
	e->rc = cu_error_set(e->err, CU_ENOMEM, "out of memory encoding");
}

static void apie_set(struct api_enc *e, json_t *dst, const char *key, json_t *v)
{
	if (v == NULL || json_object_set_new(dst, key, v) != 0) {
		e->rc = e->rc ? e->rc
			      : cu_error_set(e->err, CU_ENOMEM,
				    "%s: out of memory encoding", key);
	}
}

/* "Absent" in the model: drop the key, but keep an explicit JSON null from
 * the source (null and absent mean the same to Kubernetes). */
static void apie_del(json_t *dst, const char *key)
{
	if (!json_is_null(json_object_get(dst, key)))
		json_object_del(dst, key);
}

void apie_str(struct api_enc *e, json_t *dst, const char *key, const char *s)
{
	if (e->rc != CU_OK || dst == NULL)
		return;
	if (s == NULL) {
		apie_del(dst, key);
		return;
	}
	apie_set(e, dst, key, json_string(s));
}

void apie_i64(
    struct api_enc *e, json_t *dst, const char *key, bool has, int64_t v)
{
	if (e->rc != CU_OK || dst == NULL)
		return;
	if (!has) {
		apie_del(dst, key);
		return;
	}
	apie_set(e, dst, key, json_integer((json_int_t)v));
}

void apie_bool(
    struct api_enc *e, json_t *dst, const char *key, bool has, bool v)
{
	if (e->rc != CU_OK || dst == NULL)
		return;
	if (!has) {
		apie_del(dst, key);
		return;
	}
	apie_set(e, dst, key, json_boolean(v));
}

/* Keep the source spelling ("1000m" vs "1") when the value is unchanged,
 * so that an untouched object encodes byte-for-byte as it was read. */
static json_t *qty_json(const json_t *old, const struct api_quantity *q)
{
	char buf[API_QUANTITY_STR_MAX];
	struct api_quantity prev;

	if (old != NULL && qty_from_json(old, &prev, NULL) == CU_OK &&
	    prev.milli == q->milli)
		return json_deep_copy(old);
	api_quantity_format(q, buf, sizeof(buf));
	return json_string(buf);
}

void apie_qty(struct api_enc *e, json_t *dst, const char *key, bool has,
    const struct api_quantity *q)
{
	if (e->rc != CU_OK || dst == NULL)
		return;
	if (!has) {
		apie_del(dst, key);
		return;
	}
	apie_set(e, dst, key, qty_json(json_object_get(dst, key), q));
}

void apie_time(struct api_enc *e, json_t *dst, const char *key, bool has,
    int64_t ns, bool micro)
{
	const json_t *old;
	int64_t prev;
	char buf[CU_TIME_MICRO_LEN];

	if (e->rc != CU_OK || dst == NULL)
		return;
	if (!has) {
		apie_del(dst, key);
		return;
	}
	old = json_object_get(dst, key);
	if (json_is_string(old) &&
	    cu_time_parse(json_string_value(old), &prev, NULL) == CU_OK &&
	    prev == ns)
		return;
	if (micro)
		cu_time_format_micro(ns, buf);
	else
		cu_time_format_rfc3339(ns, buf);
	apie_set(e, dst, key, json_string(buf));
}

void apie_enum(struct api_enc *e, json_t *dst, const char *key,
    const struct api_enum_name *tbl, int v)
{
	size_t i;

	if (e->rc != CU_OK || dst == NULL)
		return;
	for (i = 0; tbl[i].name; i++) {
		if (tbl[i].value == v) {
			apie_set(e, dst, key, json_string(tbl[i].name));
			return;
		}
	}
	apie_del(dst, key);
}

/* An empty map/list is written as {} / [] only where the source had one,
 * so that "absent" and "empty" both survive a round trip. */
static bool keep_empty(json_t *dst, const char *key, bool is_array)
{
	json_t *old = json_object_get(dst, key);

	if (old != NULL &&
	    (is_array ? json_is_array(old) : json_is_object(old)))
		return true;
	apie_del(dst, key);
	return false;
}

void apie_strmap(
    struct api_enc *e, json_t *dst, const char *key, const struct api_strmap *m)
{
	json_t *o;
	size_t i;

	if (e->rc != CU_OK || dst == NULL)
		return;
	if (m->n == 0 && !keep_empty(dst, key, false))
		return;
	o = json_object();
	for (i = 0; o && i < m->n; i++) {
		if (json_object_set_new(o, m->items[i].key,
			json_string(m->items[i].value)) != 0) {
			json_decref(o);
			o = NULL;
		}
	}
	apie_set(e, dst, key, o);
}

void apie_strlist(struct api_enc *e, json_t *dst, const char *key,
    const struct api_strlist *l)
{
	json_t *a;
	size_t i;

	if (e->rc != CU_OK || dst == NULL)
		return;
	if (l->n == 0 && !keep_empty(dst, key, true))
		return;
	a = json_array();
	for (i = 0; a && i < l->n; i++) {
		if (json_array_append_new(a, json_string(l->items[i])) != 0) {
			json_decref(a);
			a = NULL;
		}
	}
	apie_set(e, dst, key, a);
}

static void dec_name(struct api_dec *d, const json_t *e, void *item, void *ctx)
{
	(void)ctx;
	apid_str(d, e, "name", true, (char **)item);
}

void apid_name_list(struct api_dec *d, const json_t *o, const char *key,
    struct api_strlist *out)
{
	out->items = apid_each(
	    d, o, key, false, sizeof(char *), &out->n, dec_name, NULL);
}

void apie_name_list(struct api_enc *e, json_t *dst, const char *key,
    const struct api_strlist *l)
{
	json_t *a;
	size_t i;

	if (e->rc != CU_OK || dst == NULL)
		return;
	if (l->n == 0 && !keep_empty(dst, key, true))
		return;
	a = json_array();
	for (i = 0; a && i < l->n; i++) {
		if (json_array_append_new(
			a, json_pack("{s:s}", "name", l->items[i])) != 0) {
			json_decref(a);
			a = NULL;
		}
	}
	apie_set(e, dst, key, a);
}

void apie_qmap(
    struct api_enc *e, json_t *dst, const char *key, const struct api_qmap *m)
{
	json_t *o, *old;
	size_t i;

	if (e->rc != CU_OK || dst == NULL)
		return;
	if (m->n == 0 && !keep_empty(dst, key, false))
		return;
	old = json_object_get(dst, key);
	o = json_object();
	for (i = 0; o && i < m->n; i++) {
		json_t *prev = json_is_object(old)
				   ? json_object_get(old, m->items[i].name)
				   : NULL;

		if (json_object_set_new(o, m->items[i].name,
			qty_json(prev, &m->items[i].q)) != 0) {
			json_decref(o);
			o = NULL;
		}
	}
	apie_set(e, dst, key, o);
}

void apie_json(struct api_enc *e, json_t *dst, const char *key, const json_t *v)
{
	if (e->rc != CU_OK || dst == NULL)
		return;
	if (v == NULL) {
		apie_del(dst, key);
		return;
	}
	apie_set(e, dst, key, json_deep_copy(v));
}

json_t *apie_obj(struct api_enc *e, json_t *dst, const char *key, bool has)
{
	json_t *o;

	if (e->rc != CU_OK || dst == NULL)
		return NULL;
	if (!has) {
		apie_del(dst, key);
		return NULL;
	}
	o = json_object_get(dst, key);
	if (json_is_object(o))
		return o;
	o = json_object();
	apie_set(e, dst, key, o);
	return e->rc == CU_OK ? o : NULL;
}

json_t *apie_arr(struct api_enc *e, json_t *dst, const char *key, size_t n)
{
	json_t *a;
	size_t i;

	if (e->rc != CU_OK || dst == NULL)
		return NULL;
	if (n == 0) {
		if (keep_empty(dst, key, true))
			apie_set(e, dst, key, json_array());
		return NULL;
	}
	a = json_object_get(dst, key);
	if (!json_is_array(a)) {
		a = json_array();
		apie_set(e, dst, key, a);
		if (e->rc != CU_OK)
			return NULL;
	}
	while (json_array_size(a) > n)
		json_array_remove(a, json_array_size(a) - 1);
	for (i = 0; i < n; i++) {
		json_t *el = json_array_get(a, i);
		int rc;

		if (json_is_object(el))
			continue;
		rc = el ? json_array_set_new(a, i, json_object())
			: json_array_append_new(a, json_object());
		if (rc != 0) {
			apie_nomem(e);
			return NULL;
		}
	}
	return a;
}

static void apie_meta_fields(
    struct api_enc *e, json_t *md, const struct api_meta *m)
{
	json_t *a;
	size_t i;

	apie_str(e, md, "name", m->name);
	apie_str(e, md, "generateName", m->generate_name);
	apie_str(e, md, "namespace", m->namespace_);
	apie_str(e, md, "uid", m->uid);
	apie_str(e, md, "resourceVersion", m->resource_version);
	apie_i64(e, md, "generation", m->has_generation, m->generation);
	apie_strmap(e, md, "labels", &m->labels);
	apie_strmap(e, md, "annotations", &m->annotations);
	a = apie_arr(e, md, "ownerReferences", m->n_owner_refs);
	for (i = 0; a && i < m->n_owner_refs; i++) {
		const struct api_owner_ref *r = &m->owner_refs[i];
		json_t *o = json_array_get(a, i);

		apie_str(e, o, "apiVersion", r->api_version);
		apie_str(e, o, "kind", r->kind);
		apie_str(e, o, "name", r->name);
		apie_str(e, o, "uid", r->uid);
		apie_bool(e, o, "controller", r->has_controller, r->controller);
		apie_bool(e, o, "blockOwnerDeletion",
		    r->has_block_owner_deletion, r->block_owner_deletion);
	}
	apie_strlist(e, md, "finalizers", &m->finalizers);
	apie_time(
	    e, md, "creationTimestamp", m->has_creation, m->creation_ns, false);
	apie_time(
	    e, md, "deletionTimestamp", m->has_deletion, m->deletion_ns, false);
}

void apie_meta(struct api_enc *e, json_t *dst, const struct api_meta *m)
{
	json_t *md = apie_obj(e, dst, "metadata", true);

	if (md != NULL)
		apie_meta_fields(e, md, m);
}

int api_meta_encode(json_t *dst, const struct api_meta *m, cu_error *err)
{
	struct api_enc e = {CU_OK, err};

	apie_meta_fields(&e, dst, m);
	return e.rc;
}

void apie_tolerations(struct api_enc *e, json_t *dst, const char *key,
    const struct api_toleration *t, size_t n)
{
	json_t *a = apie_arr(e, dst, key, n);
	size_t i;

	for (i = 0; a && i < n; i++) {
		json_t *o = json_array_get(a, i);
		const json_t *old_eff = json_object_get(o, "effect");

		apie_str(e, o, "key", t[i].key);
		apie_enum(e, o, "operator", tol_op_names, (int)t[i].op);
		apie_str(e, o, "value", t[i].value);
		/* keep an explicit "" (all effects) from the source */
		if (!(t[i].effect == API_EFFECT_UNSET &&
			json_is_string(old_eff) &&
			json_string_length(old_eff) == 0))
			apie_enum(e, o, "effect", apid_effect_names,
			    (int)t[i].effect);
		apie_i64(e, o, "tolerationSeconds", t[i].has_toleration_seconds,
		    t[i].toleration_seconds);
	}
}

/* ---- taints (ResourceFlavor) are decoded in model_kueue.c ------------- */

const struct api_enum_name api_stop_policy_names[] = {
    {"None", API_STOP_NONE},
    {"Hold", API_STOP_HOLD},
    {"HoldAndDrain", API_STOP_HOLD_AND_DRAIN},
    {NULL, 0},
};
