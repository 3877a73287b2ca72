/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/client_paths.c - the REST paths of Kubernetes resources
 * (/api/v1/namespaces/ns/pods/name/status) with their segments
 * percent-escaped, and the per-verb requests built on them (api_get,
 * api_create, api_update, the patches, api_delete). See api/client.h.
 */
#include <ctype.h>
#include <string.h>

#include "api/client.h"
#include "api/client_int.h"

/* ---- public: paths and wrappers ------------------------------------- */

char *api_escape(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(s), i, j = 0;
	char *o = cu_malloc(3 * n + 1);

	if (o == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (isalnum(ch) || ch == '-' || ch == '.' || ch == '_' ||
		    ch == '~') {
			o[j++] = (char)ch;
		} else {
			o[j++] = '%';
			o[j++] = hex[ch >> 4];
			o[j++] = hex[ch & 15];
		}
	}
	o[j] = '\0';
	return o;
}

char *api_resource_path(const struct api_resource *res, const char *ns,
    const char *name, const char *subresource)
{
	cu_buf b;
	char *e;
	int rc;

	cu_buf_init(&b, 64 * 1024);
	if (res->group == NULL || res->group[0] == '\0')
		rc = cu_buf_addf(&b, "/api/%s", res->version);
	else
		rc = cu_buf_addf(&b, "/apis/%s/%s", res->group, res->version);
	if (rc == CU_OK && res->namespaced && ns != NULL) {
		e = api_escape(ns);
		rc = e ? cu_buf_addf(&b, "/namespaces/%s", e) : CU_ENOMEM;
		cu_free(e);
	}
	if (rc == CU_OK)
		rc = cu_buf_addf(&b, "/%s", res->plural);
	if (rc == CU_OK && name != NULL) {
		e = api_escape(name);
		rc = e ? cu_buf_addf(&b, "/%s", e) : CU_ENOMEM;
		cu_free(e);
	}
	if (rc == CU_OK && subresource != NULL)
		rc = cu_buf_addf(&b, "/%s", subresource);
	if (rc != CU_OK)
		return NULL; /* the buffer freed itself */
	return cu_buf_detach(&b, NULL);
}

static int path_request(api_req **out, api_client *c,
    const struct api_resource *res, const char *ns, const char *name,
    const char *sub, const char *method, const char *ctype, json_t *body,
    api_response_cb cb, void *payload, cu_error *err)
{
	char *path;
	int rc;

	if (res == NULL)
		return cu_error_set(err, CU_EINVAL, "no resource");
	path = api_resource_path(res, ns, name, sub);
	if (path == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	rc = api_request(out, c, method, path, ctype, body, cb, payload, err);
	cu_free(path);
	return rc;
}

int api_get(api_req **out, api_client *c, const struct api_resource *res,
    const char *ns, const char *name, api_response_cb cb, void *payload,
    cu_error *err)
{
	if (name == NULL)
		return cu_error_set(err, CU_EINVAL, "get: no name");
	return path_request(
	    out, c, res, ns, name, NULL, "GET", NULL, NULL, cb, payload, err);
}

int api_create(api_req **out, api_client *c, const struct api_resource *res,
    const char *ns, json_t *obj, api_response_cb cb, void *payload,
    cu_error *err)
{
	if (!json_is_object(obj))
		return cu_error_set(err, CU_EINVAL, "create: no object");
	return path_request(
	    out, c, res, ns, NULL, NULL, "POST", NULL, obj, cb, payload, err);
}

int api_update(api_req **out, api_client *c, const struct api_resource *res,
    json_t *obj, bool status, api_response_cb cb, void *payload, cu_error *err)
{
	json_t *md = json_object_get(obj, "metadata");
	const char *ns = json_string_value(json_object_get(md, "namespace"));
	const char *name = json_string_value(json_object_get(md, "name"));

	if (name == NULL)
		return cu_error_set(
		    err, CU_EINVAL, "update: object has no metadata.name");
	return path_request(out, c, res, ns, name, status ? "status" : NULL,
	    "PUT", NULL, obj, cb, payload, err);
}

int api_merge_patch(api_req **out, api_client *c,
    const struct api_resource *res, const char *ns, const char *name,
    json_t *patch, bool status, api_response_cb cb, void *payload,
    cu_error *err)
{
	if (name == NULL || !json_is_object(patch))
		return cu_error_set(
		    err, CU_EINVAL, "merge patch: needs a name and an object");
	return path_request(out, c, res, ns, name, status ? "status" : NULL,
	    "PATCH", "application/merge-patch+json", patch, cb, payload, err);
}

int api_json_patch(api_req **out, api_client *c, const struct api_resource *res,
    const char *ns, const char *name, json_t *patch, bool status,
    api_response_cb cb, void *payload, cu_error *err)
{
	if (name == NULL || !json_is_array(patch))
		return cu_error_set(
		    err, CU_EINVAL, "json patch: needs a name and an array");
	return path_request(out, c, res, ns, name, status ? "status" : NULL,
	    "PATCH", "application/json-patch+json", patch, cb, payload, err);
}

int api_delete(api_req **out, api_client *c, const struct api_resource *res,
    const char *ns, const char *name, json_t *options, api_response_cb cb,
    void *payload, cu_error *err)
{
	if (name == NULL)
		return cu_error_set(err, CU_EINVAL, "delete: no name");
	return path_request(out, c, res, ns, name, NULL, "DELETE", NULL,
	    options, cb, payload, err);
}
