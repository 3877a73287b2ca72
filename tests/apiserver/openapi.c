/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/openapi.c - the OpenAPI v2 document (GET /openapi/v2,
 * gnostic's openapi.v2.Document in protobuf) that kubectl downloads
 * before apply/create (docs/apiserver.md §1.6).
 *
 * It has no definitions (so kubectl's client-side schema validation finds
 * no schema and lets every object through) but, as kube-apiserver's, a
 * path per served kind and version whose PATCH operation names the kind
 * (x-kubernetes-group-version-kind) and lists the dryRun, fieldManager,
 * fieldValidation and force query parameters: kubectl 1.20 consults those
 * paths before `--dry-run=server` and refuses the flag for a kind it does
 * not find there (for a custom resource it looks for Namespace instead).
 *
 * Only the fields kubectl reads are written; field numbers are those of
 * gnostic's openapiv2/OpenAPIv2.proto.
 */
#include <string.h>

#include "tests/apiserver/apiserver.h"

/* A protobuf writer over cu_buf: length-delimited fields are written into
 * their own buffer first and then appended with their length. */

static int pb_varint(cu_buf *b, uint64_t v)
{
	unsigned char tmp[10];
	size_t n = 0;

	do {
		tmp[n] = (unsigned char)(v & 0x7f);
		v >>= 7;
		if (v != 0)
			tmp[n] |= 0x80;
		n++;
	} while (v != 0);
	return cu_buf_add(b, tmp, n);
}

/* Field `field` (wire type 2) holding `len` bytes of `data`. */
static int pb_bytes(cu_buf *b, unsigned field, const void *data, size_t len)
{
	int rc = pb_varint(b, ((uint64_t)field << 3) | 2u);

	if (rc == CU_OK)
		rc = pb_varint(b, len);
	if (rc == CU_OK && len > 0)
		rc = cu_buf_add(b, data, len);
	return rc;
}

static int pb_str(cu_buf *b, unsigned field, const char *s)
{
	return pb_bytes(b, field, s, strlen(s));
}

/* Appends the message in `sub` as field `field` of `b` and disposes of
 * `sub` whatever happens. */
static int pb_msg(cu_buf *b, unsigned field, cu_buf *sub, int rc)
{
	if (rc == CU_OK)
		rc = pb_bytes(b, field, sub->ptr ? sub->ptr : "", sub->len);
	cu_buf_dispose(sub);
	return rc;
}

/* NamedAny{name, value: Any{yaml}} as field `field` of `b`. */
static int named_any(
    cu_buf *b, unsigned field, const char *name, const char *yaml)
{
	cu_buf any, named;
	int rc;

	cu_buf_init(&any, AS_MAX_BODY);
	cu_buf_init(&named, AS_MAX_BODY);
	rc = pb_str(&any, 2, yaml); /* Any.yaml */
	if (rc == CU_OK)
		rc = pb_str(&named, 1, name); /* NamedAny.name */
	rc = pb_msg(&named, 2, &any, rc);     /* NamedAny.value */
	return pb_msg(b, field, &named, rc);
}

/* Operation.parameters[]: a query parameter of type string (or boolean). */
static int query_param(cu_buf *op, const char *name, const char *type)
{
	cu_buf q, nonbody, param, item;
	int rc;

	cu_buf_init(&q, AS_MAX_BODY);
	cu_buf_init(&nonbody, AS_MAX_BODY);
	cu_buf_init(&param, AS_MAX_BODY);
	cu_buf_init(&item, AS_MAX_BODY);
	/* QueryParameterSubSchema: in = 2, name = 4, type = 6, and
	 * uniqueItems = 20 as kube-apiserver writes it. */
	rc = pb_str(&q, 2, "query");
	if (rc == CU_OK)
		rc = pb_str(&q, 4, name);
	if (rc == CU_OK)
		rc = pb_str(&q, 6, type);
	if (rc == CU_OK)
		rc = cu_buf_add(&q, "\xa0\x01\x01", 3); /* field 20, true */
	rc = pb_msg(&nonbody, 3, &q, rc);     /* query_parameter_sub_schema */
	rc = pb_msg(&param, 2, &nonbody, rc); /* Parameter.non_body_parameter */
	rc = pb_msg(&item, 1, &param, rc);    /* ParametersItem.parameter */
	return pb_msg(op, 8, &item, rc);      /* Operation.parameters */
}

/* NamedPathItem for one kind and version, as field 2 of Paths. */
static int kind_path(cu_buf *paths, const struct as_kind *k, const char *ver)
{
	cu_buf op, item, named;
	char *path, *gvk;
	int rc;

	if (k->group[0] == '\0')
		path = cu_asprintf("/api/%s/%s%s/{name}", ver,
		    (k->flags & AS_NAMESPACED) ? "namespaces/{namespace}/" : "",
		    k->plural);
	else
		path = cu_asprintf("/apis/%s/%s/%s%s/{name}", k->group, ver,
		    (k->flags & AS_NAMESPACED) ? "namespaces/{namespace}/" : "",
		    k->plural);
	gvk = cu_asprintf(
	    "group: \"%s\"\nkind: %s\nversion: %s\n", k->group, k->kind, ver);
	if (path == NULL || gvk == NULL) {
		cu_free(path);
		cu_free(gvk);
		return CU_ENOMEM;
	}
	cu_buf_init(&op, AS_MAX_BODY);
	cu_buf_init(&item, AS_MAX_BODY);
	cu_buf_init(&named, AS_MAX_BODY);
	rc = pb_str(&op, 5, "patch"); /* Operation.operation_id */
	if (rc == CU_OK)
		rc = query_param(&op, "dryRun", "string");
	if (rc == CU_OK)
		rc = query_param(&op, "fieldManager", "string");
	if (rc == CU_OK)
		rc = query_param(&op, "fieldValidation", "string");
	if (rc == CU_OK)
		rc = query_param(&op, "force", "boolean");
	if (rc == CU_OK) /* Operation.vendor_extension */
		rc = named_any(&op, 13, "x-kubernetes-action", "patch\n");
	if (rc == CU_OK)
		rc = named_any(&op, 13, "x-kubernetes-group-version-kind", gvk);
	rc = pb_msg(&item, 8, &op, rc); /* PathItem.patch */
	if (rc == CU_OK)
		rc = pb_str(&named, 1, path); /* NamedPathItem.name */
	rc = pb_msg(&named, 2, &item, rc);    /* NamedPathItem.value */
	rc = pb_msg(paths, 2, &named, rc);    /* Paths.path */
	cu_free(path);
	cu_free(gvk);
	return rc;
}

char *as_openapi_v2(struct as_server *srv, size_t *len)
{
	cu_buf doc, info, paths;
	const struct as_kind *k;
	size_t i;
	json_t *v;
	int rc;

	cu_buf_init(&doc, AS_MAX_BODY * 4);
	cu_buf_init(&info, AS_MAX_BODY);
	cu_buf_init(&paths, AS_MAX_BODY * 4);
	rc = pb_str(&doc, 1, "2.0"); /* Document.swagger */
	if (rc == CU_OK)
		rc = pb_str(&info, 1, "Kubernetes"); /* Info.title */
	if (rc == CU_OK)
		rc = pb_str(&info, 2, "v1.33.0"); /* Info.version */
	rc = pb_msg(&doc, 2, &info, rc);	  /* Document.info */
	for (k = srv->kinds; k != NULL && rc == CU_OK; k = k->next) {
		if (k->removed)
			continue;
		json_array_foreach(k->versions, i, v)
		{
			if (rc == CU_OK)
				rc = kind_path(&paths, k, json_string_value(v));
		}
	}
	rc = pb_msg(&doc, 8, &paths, rc); /* Document.paths */
	if (rc != CU_OK) {
		cu_buf_dispose(&doc);
		return NULL;
	}
	return cu_buf_detach(&doc, len);
}
