/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/json.c - json_loadb and json_dumps that cannot be fooled by an
 * allocation failure inside jansson, and the small shared jansson helpers
 * (see api/json.h).
 */
#include <stdint.h>

#include "api/json.h"

int api_json_loadb(
    json_t **out, const void *buf, size_t len, size_t flags, json_error_t *jerr)
{
	uint64_t failures = cu_mem_failures();
	json_error_t local;
	json_t *j;

	*out = NULL;
	j = json_loadb(buf != NULL ? buf : "", buf != NULL ? len : 0, flags,
	    jerr != NULL ? jerr : &local);
	if (cu_mem_failures() != failures) {
		json_decref(j);
		return CU_ENOMEM;
	}
	if (j == NULL)
		return CU_EPARSE;
	*out = j;
	return CU_OK;
}

struct dump_ctx {
	cu_buf b;
	int rc; /* first failure of an append; CU_OK while none */
};

static int dump_cb(const char *data, size_t size, void *payload)
{
	struct dump_ctx *d = payload;

	if (d->rc != CU_OK)
		return -1; /* jansson may write on after a failure */
	d->rc = cu_buf_add(&d->b, data, size);
	return d->rc == CU_OK ? 0 : -1;
}

int api_json_dumps(
    const json_t *v, size_t flags, size_t max, char **out, size_t *len)
{
	uint64_t failures = cu_mem_failures();
	struct dump_ctx d = {.rc = CU_OK};
	int jrc;

	*out = NULL;
	cu_buf_init(&d.b, max != 0 ? max : SIZE_MAX - 1);
	jrc = json_dump_callback(v, dump_cb, &d, flags);
	if (d.rc == CU_OK && cu_mem_failures() != failures)
		d.rc = CU_ENOMEM;
	if (d.rc == CU_OK && jrc != 0)
		d.rc = CU_EINVAL;
	if (d.rc == CU_OK) {
		*out = cu_buf_detach(&d.b, len);
		if (*out == NULL)
			d.rc = CU_ENOMEM;
	}
	cu_buf_dispose(&d.b);
	return d.rc;
}

const char *api_json_type_word(json_type t, bool int_apart)
{
	switch (t) {
	case JSON_OBJECT:
		return "object";
	case JSON_ARRAY:
		return "array";
	case JSON_STRING:
		return "string";
	case JSON_INTEGER:
		return int_apart ? "integer" : "number";
	case JSON_REAL:
		return "number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "boolean";
	case JSON_NULL:
		break;
	}
	return "null";
}

const char *api_json_type_name(const json_t *v, bool int_apart)
{
	return api_json_type_word(
	    v != NULL ? json_typeof(v) : JSON_NULL, int_apart);
}

const char *api_json_str(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

int api_json_get_str(const json_t *o, const char *key, const char *path,
    const char *dflt, const char **out, cu_error *err)
{
	const json_t *v = json_object_get(o, key);

	*out = dflt;
	if (v == NULL || json_is_null(v))
		return CU_OK;
	if (!json_is_string(v))
		return cu_error_set(err, CU_EPARSE,
		    "%s: Invalid type: expected string, got %s", path,
		    api_json_type_name(v, false));
	*out = json_string_value(v);
	return CU_OK;
}

json_t *api_json_obj_child(json_t *obj, const char *key)
{
	json_t *c = json_object_get(obj, key);

	if (json_is_object(c))
		return c;
	c = json_object();
	if (c == NULL || json_object_set_new(obj, key, c) != 0)
		return NULL;
	return c;
}
