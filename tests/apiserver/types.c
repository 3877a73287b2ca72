/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/types.c - type checking of request bodies. A real
 * kube-apiserver decodes built-in kinds into Go structs, so a value of the
 * wrong JSON type is a decode error (400 "... cannot be handled as a ...");
 * custom resources are validated against their structural schema after
 * pruning and defaulting (422 Invalid: type, enum, required). A lenient
 * server would store objects no real client could read back.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tests/apiserver/apiserver.h"

enum ty { T_OBJ, T_STR, T_INT, T_BOOL, T_ARR, T_MAPSTR, T_ARRSTR };

struct field_type {
	const char *plural; /* NULL = every built-in kind */
	const char *path;
	enum ty type;
	const char *go; /* Go type named in the error */
};

static const struct field_type fields[] = {
    {NULL, "apiVersion", T_STR, "string"},
    {NULL, "kind", T_STR, "string"},
    {NULL, "metadata", T_OBJ, "v1.ObjectMeta"},
    {NULL, "metadata.name", T_STR, "string"},
    {NULL, "metadata.generateName", T_STR, "string"},
    {NULL, "metadata.namespace", T_STR, "string"},
    {NULL, "metadata.uid", T_STR, "types.UID"},
    {NULL, "metadata.resourceVersion", T_STR, "string"},
    {NULL, "metadata.generation", T_INT, "int64"},
    {NULL, "metadata.labels", T_MAPSTR, "map[string]string"},
    {NULL, "metadata.annotations", T_MAPSTR, "map[string]string"},
    {NULL, "metadata.finalizers", T_ARRSTR, "[]string"},
    {NULL, "metadata.ownerReferences", T_ARR, "[]v1.OwnerReference"},
    {"configmaps", "data", T_MAPSTR, "map[string]string"},
    {"configmaps", "binaryData", T_MAPSTR, "map[string][]uint8"},
    {"configmaps", "immutable", T_BOOL, "bool"},
    {"secrets", "data", T_MAPSTR, "map[string][]uint8"},
    {"secrets", "stringData", T_MAPSTR, "map[string]string"},
    {"secrets", "type", T_STR, "v1.SecretType"},
    {"secrets", "immutable", T_BOOL, "bool"},
    {"leases", "spec", T_OBJ, "v1.LeaseSpec"},
    {"leases", "spec.holderIdentity", T_STR, "string"},
    {"leases", "spec.leaseDurationSeconds", T_INT, "int32"},
    {"leases", "spec.leaseTransitions", T_INT, "int32"},
    {"leases", "spec.acquireTime", T_STR, "v1.MicroTime"},
    {"leases", "spec.renewTime", T_STR, "v1.MicroTime"},
    {"jobs", "spec", T_OBJ, "v1.JobSpec"},
    {"jobs", "spec.suspend", T_BOOL, "bool"},
    {"jobs", "spec.parallelism", T_INT, "int32"},
    {"jobs", "spec.completions", T_INT, "int32"},
    {"jobs", "spec.backoffLimit", T_INT, "int32"},
    {"jobs", "spec.template", T_OBJ, "v1.PodTemplateSpec"},
    {"jobs", "status", T_OBJ, "v1.JobStatus"},
    {"namespaces", "spec", T_OBJ, "v1.NamespaceSpec"},
    {"namespaces", "status", T_OBJ, "v1.NamespaceStatus"},
    {"pods", "spec", T_OBJ, "v1.PodSpec"},
    {"pods", "status", T_OBJ, "v1.PodStatus"},
    {"events", "involvedObject", T_OBJ, "v1.ObjectReference"},
    {"events", "reason", T_STR, "string"},
    {"events", "message", T_STR, "string"},
    {"events", "count", T_INT, "int32"},
    {"events", "type", T_STR, "string"},
};

static const char *json_type_name(json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "object";
	case JSON_ARRAY:
		return "array";
	case JSON_STRING:
		return "string";
	case JSON_INTEGER:
	case JSON_REAL:
		return "number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "bool";
	case JSON_NULL:
		return "null";
	}
	return "value";
}

static bool is_integral(json_t *v)
{
	double d;

	if (json_is_integer(v))
		return true;
	if (!json_is_real(v))
		return false;
	d = json_real_value(v);
	return d == floor(d) && fabs(d) < 9.2e18;
}

/* NULL if v (not null) has type t, else the offending JSON type. */
static const char *mismatch(json_t *v, enum ty t)
{
	size_t i;
	const char *key;
	json_t *e;

	switch (t) {
	case T_OBJ:
		return json_is_object(v) ? NULL : json_type_name(v);
	case T_STR:
		return json_is_string(v) ? NULL : json_type_name(v);
	case T_INT:
		return is_integral(v) ? NULL : json_type_name(v);
	case T_BOOL:
		return json_is_boolean(v) ? NULL : json_type_name(v);
	case T_ARR:
		return json_is_array(v) ? NULL : json_type_name(v);
	case T_MAPSTR:
		if (!json_is_object(v))
			return json_type_name(v);
		json_object_foreach(v, key, e)
		{
			if (!json_is_string(e) && !json_is_null(e))
				return json_type_name(e);
		}
		return NULL;
	case T_ARRSTR:
		if (!json_is_array(v))
			return json_type_name(v);
		json_array_foreach(v, i, e)
		{
			if (!json_is_string(e))
				return json_type_name(e);
		}
		return NULL;
	}
	return NULL;
}

static char *check_builtin(const struct as_kind *k, json_t *obj, char **field)
{
	size_t i;

	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const struct field_type *f = &fields[i];
		json_t *v;
		const char *bad;

		if (f->plural != NULL && strcmp(f->plural, k->plural) != 0)
			continue;
		v = as_jget(obj, f->path);
		if (v == NULL || json_is_null(v))
			continue;
		bad = mismatch(v, f->type);
		if (bad == NULL)
			continue;
		*field = cu_strdup(f->path);
		return cu_asprintf(
		    "%s in version \"%s\" cannot be handled as a "
		    "%s: json: cannot unmarshal %s into Go "
		    "struct field %s.%s of type %s",
		    k->kind, k->version, k->kind, bad, k->kind, f->path, f->go);
	}
	return NULL;
}

/* Schema validation of a custom resource: type, enum, required. */
static char *check_schema(
    json_t *schema, json_t *v, const char *path, char **field, int depth)
{
	const char *type, *key;
	json_t *sub, *e;
	size_t i;

	if (schema == NULL || v == NULL || depth > 64)
		return NULL;
	if (json_is_null(v)) {
		if (json_is_true(json_object_get(schema, "nullable")))
			return NULL;
		/* Pruning keeps nulls only where a schema allows them. */
		type = json_string_value(json_object_get(schema, "type"));
		if (type == NULL)
			return NULL;
		*field = cu_strdup(path);
		return cu_asprintf("Invalid value: \"null\": %s in body must "
				   "be of type %s: \"null\"",
		    path, type);
	}
	if (json_is_true(
		json_object_get(schema, "x-kubernetes-int-or-string"))) {
		if (!json_is_string(v) && !is_integral(v)) {
			*field = cu_strdup(path);
			return cu_asprintf("Invalid value: \"%s\": %s in body "
					   "must be of type int-or-string: "
					   "\"%s\"",
			    json_type_name(v), path, json_type_name(v));
		}
		return NULL;
	}
	type = json_string_value(json_object_get(schema, "type"));
	if (type != NULL) {
		bool ok = (strcmp(type, "object") == 0 && json_is_object(v)) ||
			  (strcmp(type, "array") == 0 && json_is_array(v)) ||
			  (strcmp(type, "string") == 0 && json_is_string(v)) ||
			  (strcmp(type, "integer") == 0 && is_integral(v)) ||
			  (strcmp(type, "number") == 0 && json_is_number(v)) ||
			  (strcmp(type, "boolean") == 0 && json_is_boolean(v));
		const char *jt = json_is_integer(v) || json_is_real(v)
				     ? (is_integral(v) ? "integer" : "number")
				 : json_is_boolean(v) ? "boolean"
						      : json_type_name(v);

		if (!ok) {
			*field = cu_strdup(path);
			return cu_asprintf("Invalid value: \"%s\": %s in body "
					   "must be of type %s: \"%s\"",
			    jt, path, type, jt);
		}
	}
	sub = json_object_get(schema, "enum");
	if (json_is_array(sub) && json_array_size(sub) > 0) {
		bool found = false;

		json_array_foreach(sub, i, e)
		{
			if (json_equal(e, v))
				found = true;
		}
		if (!found) {
			cu_buf b;
			char *vs = as_json_dump(v, NULL);
			char *msg;

			cu_buf_init(&b, 4096);
			json_array_foreach(sub, i, e)
			{
				char *es = as_json_dump(e, NULL);

				if (es == NULL ||
				    cu_buf_addf(&b, "%s%s", i ? ", " : "",
					es) != CU_OK) {
					cu_free(es);
					break;
				}
				cu_free(es);
			}
			*field = cu_strdup(path);
			msg = cu_asprintf("Unsupported value: %s: supported "
					  "values: %s",
			    vs ? vs : "", b.ptr ? b.ptr : "");
			cu_free(vs);
			cu_buf_dispose(&b);
			return msg;
		}
	}
	if (json_is_object(v)) {
		json_t *props = json_object_get(schema, "properties");
		json_t *req = json_object_get(schema, "required");

		json_array_foreach(req, i, e)
		{
			const char *rk = json_string_value(e);

			if (rk != NULL && json_object_get(v, rk) == NULL) {
				*field = cu_asprintf(
				    "%s%s%s", path, path[0] ? "." : "", rk);
				return cu_strdup("Required value");
			}
		}
		json_object_foreach(v, key, e)
		{
			json_t *ps = json_object_get(props, key);
			char *cpath, *msg;

			if (ps == NULL)
				ps = json_object_get(
				    schema, "additionalProperties");
			if (!json_is_object(ps))
				continue;
			cpath = cu_asprintf(
			    "%s%s%s", path, path[0] ? "." : "", key);
			msg = check_schema(
			    ps, e, cpath ? cpath : "", field, depth + 1);
			cu_free(cpath);
			if (msg != NULL)
				return msg;
		}
	} else if (json_is_array(v)) {
		json_t *items = json_object_get(schema, "items");

		json_array_foreach(v, i, e)
		{
			char *cpath = cu_asprintf("%s[%zu]", path, i);
			char *msg = check_schema(
			    items, e, cpath ? cpath : "", field, depth + 1);

			cu_free(cpath);
			if (msg != NULL)
				return msg;
		}
	}
	return NULL;
}

char *as_type_check(
    const struct as_kind *k, json_t *obj, bool *invalid, char **field)
{
	*invalid = false;
	*field = NULL;
	if (!(k->flags & AS_CUSTOM)) {
		char *m = check_builtin(k, obj, field);

		return m;
	}
	{
		/* The metadata of a custom resource decodes as ObjectMeta
		 * too: a wrong type there is a 400 as for built-ins. */
		size_t i;

		for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
			json_t *v;
			const char *bad;

			if (fields[i].plural != NULL ||
			    strncmp(fields[i].path, "metadata", 8) != 0)
				continue;
			v = as_jget(obj, fields[i].path);
			if (v == NULL || json_is_null(v))
				continue;
			bad = mismatch(v, fields[i].type);
			if (bad != NULL) {
				*field = cu_strdup(fields[i].path);
				return cu_asprintf(
				    "%s in version \"%s\" cannot "
				    "be handled as a %s: json: "
				    "cannot unmarshal %s into "
				    "Go struct field "
				    "%s of type %s",
				    k->kind, k->version, k->kind, bad,
				    fields[i].path, fields[i].go);
			}
		}
	}
	*invalid = true;
	{
		json_t *props = json_object_get(k->schema, "properties");
		const char *key;
		json_t *v;

		json_object_foreach(obj, key, v)
		{
			char *msg;

			if (strcmp(key, "metadata") == 0 ||
			    strcmp(key, "apiVersion") == 0 ||
			    strcmp(key, "kind") == 0)
				continue;
			msg = check_schema(
			    json_object_get(props, key), v, key, field, 0);
			if (msg != NULL)
				return msg;
		}
	}
	return NULL;
}
