/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/openapi3.c - OpenAPI v3 for the custom resources
 * (GET /openapi/v3 and /openapi/v3/apis/<group>/<version>, docs/
 * apiserver.md §1.6), so that `kubectl explain` describes Kueue's kinds.
 *
 * As kube-apiserver, the discovery document lists one path per group and
 * version with a serverRelativeURL carrying the document's hash (upper-
 * case hex SHA-512 of the JSON served, also its ETag). A group-version
 * document has, per kind, the CRD's openAPIV3Schema with apiVersion, kind
 * and a reference to ObjectMeta added, a List schema, and a path per kind
 * whose PATCH names the kind (x-kubernetes-group-version-kind), lists the
 * dryRun, fieldManager, fieldValidation and force query parameters that
 * kubectl's query-parameter verifier looks for, and accepts the JSON
 * patch types (no strategic merge patch, as for any custom resource, so
 * kubectl apply keeps computing merge patches itself).
 *
 * Built-in groups are not listed: kubectl then falls back to /openapi/v2
 * for them (openapi.c), which keeps its behaviour for built-in kinds.
 */
#include <openssl/evp.h>
#include <string.h>

#include "tests/apiserver/apiserver.h"

#define META "io.k8s.apimachinery.pkg.apis.meta.v1."

/* "kueue.x-k8s.io" -> "io.x-k8s.kueue" [owned: cu_free]. */
static char *reverse_group(const char *group)
{
	size_t n = strlen(group), o = 0;
	char *out = cu_malloc(n + 1);
	const char *end = group + n;

	if (out == NULL)
		return NULL;
	while (end > group) {
		const char *dot = end;

		while (dot > group && dot[-1] != '.')
			dot--;
		if (o > 0)
			out[o++] = '.';
		memcpy(out + o, dot, (size_t)(end - dot));
		o += (size_t)(end - dot);
		end = dot > group ? dot - 1 : group;
	}
	out[o] = '\0';
	return out;
}

char *as_openapi3_schema_name(
    const char *group, const char *version, const char *kind)
{
	char *rg = reverse_group(group);
	char *name;

	if (rg == NULL)
		return NULL;
	name = cu_asprintf("%s.%s.%s", rg, version, kind);
	cu_free(rg);
	return name;
}

static json_t *gvk_ext(const char *group, const char *version, const char *kind)
{
	return json_pack("[{s:s, s:s, s:s}]", "group", group, "kind", kind,
	    "version", version);
}

static json_t *ref(const char *name)
{
	char *r = cu_asprintf("#/components/schemas/%s", name);
	json_t *v = json_pack("{s:s}", "$ref", r ? r : "");

	cu_free(r);
	return v;
}

static json_t *str_field(const char *desc)
{
	return json_pack("{s:s, s:s}", "description", desc, "type", "string");
}

#define API_VERSION_DESC                                                       \
	"The versioned schema of this representation of an object, as "        \
	"group/version."
#define KIND_DESC                                                              \
	"The REST resource this object represents, in CamelCase (the type "    \
	"name)."

json_t *as_openapi3_kind_schema(const char *group, const char *version,
    const char *kind, json_t *crd_schema)
{
	json_t *s = json_is_object(crd_schema) ? json_deep_copy(crd_schema)
					       : json_object();
	json_t *props;

	if (s == NULL)
		return NULL;
	if (json_object_get(s, "type") == NULL)
		json_object_set_new(s, "type", json_string("object"));
	props = json_object_get(s, "properties");
	if (!json_is_object(props)) {
		props = json_object();
		json_object_set_new(s, "properties", props);
	}
	json_object_set_new(props, "apiVersion", str_field(API_VERSION_DESC));
	json_object_set_new(props, "kind", str_field(KIND_DESC));
	json_object_set_new(props, "metadata",
	    json_pack("{s:[o], s:{}, s:s}", "allOf", ref(META "ObjectMeta"),
		"default", "description",
		"Standard object's metadata: name, namespace, labels, "
		"annotations, owners and the server's bookkeeping."));
	json_object_set_new(s, "x-kubernetes-group-version-kind",
	    gvk_ext(group, version, kind));
	return s;
}

static json_t *list_schema(const char *group, const char *version,
    const char *kind, const char *item_name)
{
	char *lk = cu_asprintf("%sList", kind);
	json_t *s;

	if (lk == NULL)
		return NULL;
	s = json_pack("{s:s, s:s, s:[s], s:{s:o, s:{s:s, s:s, s:[o]}, s:o, "
		      "s:{s:[o], s:{}, s:s}}, s:o}",
	    "description", "A list of objects of one kind.", "type", "object",
	    "required", "items", "properties", "apiVersion",
	    str_field(API_VERSION_DESC), "items", "description",
	    "The objects listed.", "type", "array", "items", ref(item_name),
	    "kind", str_field(KIND_DESC), "metadata", "allOf",
	    ref(META "ListMeta"), "default", "description",
	    "Standard list metadata (resourceVersion, continue).",
	    "x-kubernetes-group-version-kind", gvk_ext(group, version, lk));
	cu_free(lk);
	return s;
}

/* A query parameter as kube-apiserver writes it. */
static json_t *qparam(const char *name, const char *type, const char *desc)
{
	return json_pack("{s:s, s:s, s:s, s:{s:s, s:b}}", "name", name, "in",
	    "query", "description", desc, "schema", "type", type, "uniqueItems",
	    1);
}

static json_t *path_param(const char *name, const char *desc)
{
	return json_pack("{s:s, s:s, s:s, s:b, s:{s:s, s:b}}", "name", name,
	    "in", "path", "description", desc, "required", 1, "schema", "type",
	    "string", "uniqueItems", 1);
}

static json_t *ok_response(const char *item_name)
{
	return json_pack("{s:{s:s, s:{s:{s:o}}}}", "200", "description", "OK",
	    "content", "application/json", "schema", ref(item_name));
}

/* The /{name} path of a kind: GET and PATCH. */
static json_t *kind_path_item(const struct as_kind *k, const char *version,
    const char *item_name, const char *op_kind)
{
	json_t *gvk = json_pack("{s:s, s:s, s:s}", "group", k->group, "version",
	    version, "kind", k->kind);
	json_t *patch_params = json_pack("[oooo]",
	    qparam("dryRun", "string",
		"When present (All), changes are checked and not stored."),
	    qparam("fieldManager", "string",
		"The name of the actor making the change."),
	    qparam("fieldValidation", "string",
		"Ignore, Warn or Strict: what to do with unknown or duplicate "
		"fields."),
	    qparam("force", "boolean",
		"Apply requests only: take fields owned by other managers."));
	json_t *patch_body = json_object();
	json_t *params =
	    json_pack("[o]", path_param("name", "The name of the object."));
	json_t *item;
	static const char *const patch_types[] = {
	    "application/apply-patch+yaml", "application/json-patch+json",
	    "application/merge-patch+json"};
	size_t i;

	for (i = 0; i < sizeof(patch_types) / sizeof(patch_types[0]); i++)
		json_object_set_new(patch_body, patch_types[i],
		    json_pack("{s:o}", "schema", ref(META "Patch")));
	if (k->flags & AS_NAMESPACED)
		json_array_append_new(params,
		    path_param("namespace", "The namespace of the object."));
	item = json_pack("{s:{s:s, s:s, s:o, s:s, s:O}, "
			 "s:{s:s, s:s, s:o, s:{s:o, s:b}, s:o, s:s, s:O}, "
			 "s:o}",
	    "get", "description", "read the specified object", "operationId",
	    op_kind, "responses", ok_response(item_name), "x-kubernetes-action",
	    "get", "x-kubernetes-group-version-kind", gvk, "patch",
	    "description", "partially update the specified object",
	    "operationId", op_kind, "parameters", patch_params, "requestBody",
	    "content", patch_body, "required", 1, "responses",
	    ok_response(item_name), "x-kubernetes-action", "patch",
	    "x-kubernetes-group-version-kind", gvk, "parameters", params);
	json_decref(gvk);
	return item;
}

/* ObjectMeta and the few other meta/v1 types the documents reference. */
static void add_meta_schemas(json_t *schemas)
{
	json_t *time =
	    json_pack("{s:s, s:s}", "type", "string", "format", "date-time");
	json_t *owner = json_pack(
	    "{s:s, s:s, s:[ssss], s:{s:o, s:{s:s, s:s}, s:{s:s, s:s}, "
	    "s:o, s:o, s:o}, s:s}",
	    "description", "Names an object this object belongs to.", "type",
	    "object", "required", "apiVersion", "kind", "name", "uid",
	    "properties", "apiVersion", str_field(API_VERSION_DESC),
	    "blockOwnerDeletion", "description",
	    "The owner cannot be deleted in the foreground before this "
	    "object is gone.",
	    "type", "boolean", "controller", "description",
	    "This owner is the managing controller.", "type", "boolean", "kind",
	    str_field(KIND_DESC), "name", str_field("The owner's name."), "uid",
	    str_field("The owner's UID."), "x-kubernetes-map-type", "atomic");
	json_t *om = json_pack("{s:s, s:s, s:{}}", "description",
	    "Metadata every persisted object has: identity, labels and "
	    "annotations, owners, and fields the server maintains.",
	    "type", "object", "properties");
	json_t *p = json_object_get(om, "properties");

	json_object_set_new(p, "annotations",
	    json_pack("{s:s, s:s, s:{s:s, s:s}}", "description",
		"Unstructured key-value data kept with the object; not "
		"selectable.",
		"type", "object", "additionalProperties", "type", "string",
		"default", ""));
	json_object_set(p, "creationTimestamp", time);
	json_object_set_new(p, "deletionGracePeriodSeconds",
	    json_pack("{s:s, s:s, s:s}", "description",
		"Seconds allowed for graceful termination once deletion was "
		"requested. Read-only.",
		"type", "integer", "format", "int64"));
	json_object_set(p, "deletionTimestamp", time);
	json_object_set_new(p, "finalizers",
	    json_pack("{s:s, s:s, s:{s:s, s:s}, s:s}", "description",
		"Keys that must be removed before the object is deleted.",
		"type", "array", "items", "type", "string", "default", "",
		"x-kubernetes-list-type", "set"));
	json_object_set_new(p, "generateName",
	    str_field("Prefix from which the server makes a unique name when "
		      "name is empty."));
	json_object_set_new(p, "generation",
	    json_pack("{s:s, s:s, s:s}", "description",
		"Sequence number of changes to the desired state. Read-only.",
		"type", "integer", "format", "int64"));
	json_object_set_new(p, "labels",
	    json_pack("{s:s, s:s, s:{s:s, s:s}}", "description",
		"Key-value pairs used to organise and select objects.", "type",
		"object", "additionalProperties", "type", "string", "default",
		""));
	json_object_set_new(p, "managedFields",
	    json_pack("{s:s, s:s, s:{s:s, s:b}}", "description",
		"Which field manager owns which fields (server-side apply).",
		"type", "array", "items", "type", "object",
		"x-kubernetes-preserve-unknown-fields", 1));
	json_object_set_new(p, "name",
	    str_field("Unique within a namespace; required when creating, "
		      "unless generateName is set. Cannot be updated."));
	json_object_set_new(p, "namespace",
	    str_field("The namespace of a namespaced object; empty for a "
		      "cluster-scoped one. Cannot be updated."));
	json_object_set_new(p, "ownerReferences",
	    json_pack("{s:s, s:s, s:o, s:s, s:s, s:[s], s:s}", "description",
		"Objects this one depends on; it is collected when all of "
		"them are gone.",
		"type", "array", "items", ref(META "OwnerReference"),
		"x-kubernetes-patch-strategy", "merge",
		"x-kubernetes-list-type", "map", "x-kubernetes-list-map-keys",
		"uid", "x-kubernetes-patch-merge-key", "uid"));
	json_object_set_new(p, "resourceVersion",
	    str_field("Opaque version of the object for optimistic "
		      "concurrency and watches. Read-only."));
	json_object_set_new(p, "selfLink", str_field("Deprecated; not set."));
	json_object_set_new(p, "uid",
	    str_field("Unique identifier over time, set by the server. "
		      "Read-only."));

	json_object_set_new(schemas, META "ObjectMeta", om);
	json_decref(time);
	json_object_set_new(schemas, META "OwnerReference", owner);
	json_object_set_new(schemas, META "ListMeta",
	    json_pack("{s:s, s:s, s:{s:o, s:o, s:o}}", "description",
		"Metadata of a list.", "type", "object", "properties",
		"continue", str_field("Token for the next page, if any."),
		"remainingItemCount",
		json_pack("{s:s, s:s, s:s}", "description",
		    "Items left after this page, when known.", "type",
		    "integer", "format", "int64"),
		"resourceVersion",
		str_field("The revision the list was read at.")));
	json_object_set_new(schemas, META "Patch",
	    json_pack("{s:s, s:s}", "description",
		"A patch body; its format follows the Content-Type.", "type",
		"object"));
}

/* The openAPIV3Schema of version `version` in the CRD of kind k, or the
 * storage version's when the CRD is not found [borrowed]. */
static json_t *crd_schema(
    struct as_server *srv, const struct as_kind *k, const char *version)
{
	struct as_kind *crds = as_kind_find(
	    srv, "apiextensions.k8s.io", "v1", "customresourcedefinitions");
	char *name = cu_asprintf("%s.%s", k->plural, k->group);
	json_t *crd = NULL, *v;
	size_t i;

	if (crds != NULL && name != NULL)
		crd = as_store_get(crds, "", name);
	cu_free(name);
	json_array_foreach(as_jget(crd, "spec.versions"), i, v)
	{
		if (strcmp(as_jstr(v, "name"), version) == 0)
			return as_jget(v, "schema.openAPIV3Schema");
	}
	return k->schema;
}

static bool served(const struct as_kind *k, const char *version)
{
	json_t *v;
	size_t i;

	if (k->removed || !(k->flags & AS_CUSTOM))
		return false;
	json_array_foreach(k->versions, i, v)
	{
		if (strcmp(json_string_value(v), version) == 0)
			return true;
	}
	return false;
}

json_t *as_openapi3_gv(
    struct as_server *srv, const char *group, const char *version)
{
	json_t *doc, *paths, *schemas;
	const struct as_kind *k;
	int nkinds = 0;

	paths = json_object();
	schemas = json_object();
	doc = json_pack("{s:s, s:{s:s, s:s}, s:o, s:{s:o}}", "openapi", "3.0.0",
	    "info", "title", "Kubernetes CRD Swagger", "version", "v0.1.0",
	    "paths", paths, "components", "schemas", schemas);
	if (doc == NULL)
		return NULL;
	for (k = srv->kinds; k != NULL; k = k->next) {
		char *item, *list, *path, *op;

		if (strcmp(k->group, group) != 0 || !served(k, version))
			continue;
		item = as_openapi3_schema_name(group, version, k->kind);
		list = cu_asprintf("%sList", item ? item : "");
		path = cu_asprintf("/apis/%s/%s/%s%s/{name}", group, version,
		    (k->flags & AS_NAMESPACED) ? "namespaces/{namespace}/" : "",
		    k->plural);
		op = cu_asprintf("%s%s", version, k->kind);
		if (item != NULL && list != NULL && path != NULL &&
		    op != NULL) {
			json_object_set_new(schemas, item,
			    as_openapi3_kind_schema(group, version, k->kind,
				crd_schema(srv, k, version)));
			json_object_set_new(schemas, list,
			    list_schema(group, version, k->kind, item));
			json_object_set_new(
			    paths, path, kind_path_item(k, version, item, op));
			nkinds++;
		}
		cu_free(item);
		cu_free(list);
		cu_free(path);
		cu_free(op);
	}
	if (nkinds == 0) {
		json_decref(doc);
		return NULL;
	}
	add_meta_schemas(schemas);
	return doc;
}

char *as_openapi3_hash(const char *data, size_t len)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0, i;
	char *hex;

	if (EVP_Digest(data, len, md, &mdlen, EVP_sha512(), NULL) != 1)
		return NULL;
	hex = cu_malloc(mdlen * 2 + 1);
	if (hex == NULL)
		return NULL;
	for (i = 0; i < mdlen; i++)
		snprintf(hex + i * 2, 3, "%02X", md[i]);
	return hex;
}

char *as_openapi3_gv_text(
    struct as_server *srv, const char *group, const char *version, size_t *len)
{
	json_t *doc = as_openapi3_gv(srv, group, version);
	char *text;

	if (doc == NULL)
		return NULL;
	text = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(doc);
	if (text != NULL)
		*len = strlen(text);
	return text;
}

json_t *as_openapi3_root(struct as_server *srv)
{
	json_t *paths = json_object();
	json_t *root = json_pack("{s:o}", "paths", paths);
	const struct as_kind *k;
	json_t *v;
	size_t i;

	if (root == NULL)
		return NULL;
	for (k = srv->kinds; k != NULL; k = k->next) {
		if (k->removed || !(k->flags & AS_CUSTOM))
			continue;
		json_array_foreach(k->versions, i, v)
		{
			const char *ver = json_string_value(v);
			char *key = cu_asprintf("apis/%s/%s", k->group, ver);
			char *text = NULL, *hash = NULL, *url = NULL;
			size_t len = 0;

			if (key != NULL && json_object_get(paths, key) == NULL)
				text = as_openapi3_gv_text(
				    srv, k->group, ver, &len);
			if (text != NULL)
				hash = as_openapi3_hash(text, len);
			if (hash != NULL)
				url = cu_asprintf(
				    "/openapi/v3/%s?hash=%s", key, hash);
			if (url != NULL)
				json_object_set_new(paths, key,
				    json_pack(
					"{s:s}", "serverRelativeURL", url));
			cu_free(key);
			cu_free(text);
			cu_free(hash);
			cu_free(url);
		}
	}
	return root;
}
