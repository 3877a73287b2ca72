/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/patch_smp.c - strategic merge patch (`application/strategic-merge-
 * patch+json`), what kubectl apply/patch send for built-in kinds, and the
 * list-strategy tables of the built-in kinds the local API server serves.
 *
 * It is a merge patch in which some lists are merged instead of replaced
 * (by a merge key, or as a set of primitives) and in which "$..." keys
 * steer the merge. Every map level builds a fresh object from a deep copy
 * of the original and the patch, so the result never shares a node with
 * either input and no directive key can leak into it.
 */
#include <stdlib.h>
#include <string.h>

#include "api/patch.h"
#include "api/patch_int.h"

#define DIR_PATCH "$patch"
#define DIR_RETAIN "$retainKeys"
#define DIR_DELETE_PRIM "$deleteFromPrimitiveList/"
#define DIR_ORDER "$setElementOrder/"

/* ---- schemas ---------------------------------------------------------- */

/* ObjectMeta: apimachinery types.go patchStrategy tags. */
static const struct api_smp_rule meta_rules[] = {
    {"ownerReferences", "uid"},
    {"finalizers", NULL},
    {NULL, NULL},
};

/* PodSpec (core/v1 types.go patch tags). Tolerations, envFrom and
 * topologySpreadConstraints are atomic upstream too. */
#define CONTAINER_RULES(list)                                                  \
	{list, "name"}, {list ".env", "name"},                                 \
	    {list ".ports", "containerPort"},                                  \
	    {list ".volumeMounts", "mountPath"},                               \
	{                                                                      \
		list ".volumeDevices", "devicePath"                            \
	}

static const struct api_smp_rule podspec_rules[] = {
    CONTAINER_RULES("containers"),
    CONTAINER_RULES("initContainers"),
    CONTAINER_RULES("ephemeralContainers"),
    {"volumes", "name"},
    {"imagePullSecrets", "name"},
    {"hostAliases", "ip"},
    {NULL, NULL},
};

static const struct api_smp_rule conditions_rules[] = {
    {"conditions", "type"},
    {NULL, NULL},
};

static const struct api_smp_rule service_account_rules[] = {
    {"secrets", "name"},
    {NULL, NULL},
};

static const struct api_smp_rule webhook_rules[] = {
    {"webhooks", "name"},
    {NULL, NULL},
};

static const struct api_smp_mount meta_only[] = {
    {"metadata", meta_rules},
    {NULL, NULL},
};

static const struct api_smp_mount namespace_mounts[] = {
    {"metadata", meta_rules},
    {"status", conditions_rules},
    {NULL, NULL},
};

static const struct api_smp_mount pod_mounts[] = {
    {"metadata", meta_rules},
    {"spec", podspec_rules},
    {"status", conditions_rules},
    {NULL, NULL},
};

static const struct api_smp_mount job_mounts[] = {
    {"metadata", meta_rules},
    {"spec.template.metadata", meta_rules},
    {"spec.template.spec", podspec_rules},
    {"status", conditions_rules},
    {NULL, NULL},
};

static const struct api_smp_mount service_account_mounts[] = {
    {"metadata", meta_rules},
    {"", service_account_rules},
    {NULL, NULL},
};

static const struct api_smp_mount webhook_mounts[] = {
    {"metadata", meta_rules},
    {"", webhook_rules},
    {NULL, NULL},
};

static const struct api_smp_schema schemas[] = {
    {"", "ConfigMap", meta_only},
    {"", "Secret", meta_only},
    {"", "Namespace", namespace_mounts},
    {"", "Event", meta_only},
    {"", "Pod", pod_mounts},
    {"", "ServiceAccount", service_account_mounts},
    {"batch", "Job", job_mounts},
    {"coordination.k8s.io", "Lease", meta_only},
    {"admissionregistration.k8s.io", "MutatingWebhookConfiguration",
	webhook_mounts},
    {"admissionregistration.k8s.io", "ValidatingWebhookConfiguration",
	webhook_mounts},
};

const struct api_smp_schema *api_smp_schema_for(
    const char *group, const char *kind)
{
	size_t i;

	if (group == NULL || kind == NULL)
		return NULL;
	for (i = 0; i < sizeof(schemas) / sizeof(schemas[0]); i++)
		if (strcmp(schemas[i].group, group) == 0 &&
		    strcmp(schemas[i].kind, kind) == 0)
			return &schemas[i];
	return NULL;
}

/* The rule for the list at `at`, NULL when the list is atomic. */
static const struct api_smp_rule *rule_for(
    const struct api_smp_schema *sc, const struct api_patch_seg *at)
{
	char buf[256];
	const struct api_patch_seg *s;
	const struct api_smp_mount *m;
	const struct api_smp_rule *r;
	const char *path;
	size_t plen;

	if (sc == NULL)
		return NULL;
	/* A key with a dot (an annotation, say) would alias a nested
	 * path; such keys never name a list of a built-in kind. */
	for (s = at; s != NULL; s = s->up)
		if (strchr(s->key, '.') != NULL)
			return NULL;
	api_patch_path_format(at, '.', buf, sizeof(buf));
	path = buf[0] == '.' ? buf + 1 : buf;
	for (m = sc->mounts; m->prefix != NULL; m++) {
		const char *rel = path;

		plen = strlen(m->prefix);
		if (plen > 0) {
			if (strncmp(path, m->prefix, plen) != 0 ||
			    path[plen] != '.')
				continue;
			rel = path + plen + 1;
		}
		for (r = m->rules; r->path != NULL; r++)
			if (strcmp(rel, r->path) == 0)
				return r;
	}
	return NULL;
}

/* ---- merge ------------------------------------------------------------ */

struct smp {
	const struct api_smp_schema *schema; /* borrowed; may be NULL */
	cu_error *err;			     /* borrowed; may be NULL */
};

static const char *where(const struct api_patch_seg *at, char *buf, size_t size)
{
	api_patch_path_format(at, '.', buf, size);
	if (buf[0] == '\0')
		return "(root)";
	return buf[0] == '.' ? buf + 1 : buf;
}

#define SMPERR(c, code, at, fmt, ...) smp_error(c, code, at, fmt, __VA_ARGS__)

CU_PRINTF(4, 5)
static int smp_error(struct smp *c, int code, const struct api_patch_seg *at,
    const char *fmt, ...)
{
	char path[256], why[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return cu_error_set(c->err, code, "strategic merge patch %s: %s",
	    where(at, path, sizeof(path)), why);
}

static int oom(struct smp *c, const struct api_patch_seg *at)
{
	return SMPERR(c, CU_ENOMEM, at, "%s", "out of memory");
}

enum directive { DIR_NONE, DIR_REPLACE, DIR_MERGE, DIR_DELETE };

/* The "$patch" directive of the patch map m. */
static int get_directive(struct smp *c, const json_t *m,
    const struct api_patch_seg *at, enum directive *d)
{
	const json_t *v = json_object_get(m, DIR_PATCH);
	const char *s;

	*d = DIR_NONE;
	if (v == NULL)
		return CU_OK;
	s = json_string_value(v);
	if (s != NULL && strcmp(s, "replace") == 0)
		*d = DIR_REPLACE;
	else if (s != NULL && strcmp(s, "merge") == 0)
		*d = DIR_MERGE;
	else if (s != NULL && strcmp(s, "delete") == 0)
		*d = DIR_DELETE;
	else
		return SMPERR(c, CU_EPARSE, at, "%s",
		    "$patch must be \"replace\", \"merge\" or \"delete\"");
	return CU_OK;
}

static bool is_directive_key(const char *k)
{
	return strcmp(k, DIR_PATCH) == 0 || strcmp(k, DIR_RETAIN) == 0 ||
	       strncmp(k, DIR_DELETE_PRIM, strlen(DIR_DELETE_PRIM)) == 0 ||
	       strncmp(k, DIR_ORDER, strlen(DIR_ORDER)) == 0;
}

static bool in_string_list(const json_t *list, const char *s)
{
	size_t i;

	for (i = 0; i < json_array_size(list); i++)
		if (strcmp(json_string_value(json_array_get(list, i)), s) == 0)
			return true;
	return false;
}

static bool in_list(const json_t *list, const json_t *v)
{
	size_t i;

	for (i = 0; i < json_array_size(list); i++)
		if (json_equal(json_array_get(list, i), v))
			return true;
	return false;
}

static int merge_map(struct smp *c, json_t **out, const json_t *orig,
    const json_t *patch, const struct api_patch_seg *at);

/*
 * A patch value written where nothing is merged (atomic lists): objects
 * still go through merge_map so their directives are obeyed and dropped,
 * never stored. *out is NULL when the value deletes itself.
 */
static int sanitize(struct smp *c, json_t **out, const json_t *v,
    const struct api_patch_seg *at)
{
	json_t *arr, *item;
	size_t i;
	int rc;

	*out = NULL;
	if (json_is_object(v))
		return merge_map(c, out, NULL, v, at);
	if (!json_is_array(v)) {
		*out = json_deep_copy(v);
		return *out ? CU_OK : oom(c, at);
	}
	arr = json_array();
	if (arr == NULL)
		return oom(c, at);
	for (i = 0; i < json_array_size(v); i++) {
		rc = sanitize(c, &item, json_array_get(v, i), at);
		if (rc != CU_OK) {
			json_decref(arr);
			return rc;
		}
		if (item != NULL && json_array_append_new(arr, item) != 0) {
			json_decref(arr);
			return oom(c, at);
		}
	}
	*out = arr;
	return CU_OK;
}

/* Merged primitive list: orig (or nothing) plus the patch values it lacks,
 * in patch order. */
static int merge_primitive_list(struct smp *c, json_t **out, const json_t *orig,
    const json_t *patch, const struct api_patch_seg *at)
{
	json_t *res;
	size_t i;
	bool replace = false;

	for (i = 0; i < json_array_size(patch); i++) {
		const json_t *item = json_array_get(patch, i);
		enum directive d;
		int rc;

		if (!json_is_object(item))
			continue;
		rc = get_directive(c, item, at, &d);
		if (rc != CU_OK)
			return rc;
		if (d != DIR_REPLACE)
			return SMPERR(c, CU_EINVAL, at, "%s",
			    "objects are not allowed in a primitive list");
		replace = true;
	}
	res = replace || !json_is_array(orig) ? json_array()
					      : json_deep_copy(orig);
	if (res == NULL)
		return oom(c, at);
	for (i = 0; i < json_array_size(patch); i++) {
		json_t *item = json_array_get(patch, i);

		if (json_is_object(item) || in_list(res, item))
			continue;
		if (json_array_append_new(res, json_deep_copy(item)) != 0) {
			json_decref(res);
			return oom(c, at);
		}
	}
	*out = res;
	return CU_OK;
}

/* Index of the first object in list whose `key` equals kv, or -1. */
static long find_keyed(const json_t *list, const char *key, const json_t *kv)
{
	size_t i;

	for (i = 0; i < json_array_size(list); i++) {
		const json_t *v = json_object_get(json_array_get(list, i), key);

		if (v != NULL && json_equal(v, kv))
			return (long)i;
	}
	return -1;
}

/* Merge-keyed list: items matched by key are merged, new items appended,
 * "$patch": "delete" items remove, a "$patch": "replace" item replaces the
 * list by the rest of the patch list. */
static int merge_keyed_list(struct smp *c, json_t **out, const json_t *orig,
    const json_t *patch, const char *key, const struct api_patch_seg *at)
{
	json_t *res, *nv;
	size_t i;
	bool replace = false;
	enum directive d;
	int rc;

	for (i = 0; i < json_array_size(patch); i++) {
		const json_t *item = json_array_get(patch, i);

		if (!json_is_object(item))
			return SMPERR(c, CU_EINVAL, at,
			    "list item %zu is not an object", i);
		rc = get_directive(c, item, at, &d);
		if (rc != CU_OK)
			return rc;
		if (d == DIR_REPLACE)
			replace = true;
		else if (json_object_get(item, key) == NULL)
			return SMPERR(c, CU_EINVAL, at,
			    "list item %zu has no merge key \"%s\"", i, key);
	}
	res = replace || !json_is_array(orig) ? json_array()
					      : json_deep_copy(orig);
	if (res == NULL)
		return oom(c, at);
	for (i = 0; i < json_array_size(patch); i++) {
		const json_t *item = json_array_get(patch, i);
		long idx;

		rc = get_directive(c, item, at, &d);
		CU_ASSERT(rc == CU_OK); /* checked above */
		if (d == DIR_REPLACE && replace &&
		    json_object_get(item, key) == NULL)
			continue; /* the marker item itself */
		idx = find_keyed(res, key, json_object_get(item, key));
		if (d == DIR_DELETE) {
			/* Every duplicate goes, as upstream does. */
			while (idx >= 0) {
				json_array_remove(res, (size_t)idx);
				idx = find_keyed(
				    res, key, json_object_get(item, key));
			}
			continue;
		}
		rc = merge_map(c, &nv,
		    idx >= 0 ? json_array_get(res, (size_t)idx) : NULL, item,
		    at);
		if (rc != CU_OK) {
			json_decref(res);
			return rc;
		}
		if (nv == NULL)
			continue;
		if (idx >= 0)
			rc = json_array_set_new(res, (size_t)idx, nv);
		else
			rc = json_array_append_new(res, nv);
		if (rc != 0) {
			json_decref(res);
			return oom(c, at);
		}
	}
	*out = res;
	return CU_OK;
}

static int merge_list(struct smp *c, json_t **out, const json_t *orig,
    const json_t *patch, const struct api_patch_seg *at)
{
	const struct api_smp_rule *r = rule_for(c->schema, at);

	*out = NULL;
	if (r == NULL)
		return sanitize(c, out, patch, at);
	if (r->merge_key == NULL)
		return merge_primitive_list(c, out, orig, patch, at);
	return merge_keyed_list(c, out, orig, patch, r->merge_key, at);
}

/* Position of item in the $setElementOrder list, or -1. */
static long order_pos(const json_t *order, const json_t *item, const char *key)
{
	size_t j;

	for (j = 0; j < json_array_size(order); j++) {
		const json_t *o = json_array_get(order, j);

		if (key != NULL) {
			const json_t *a = json_object_get(item, key);

			if (a != NULL && json_equal(a, json_object_get(o, key)))
				return (long)j;
		} else if (json_equal(item, o)) {
			return (long)j;
		}
	}
	return -1;
}

struct slot {
	long pos;   /* in the order list */
	size_t idx; /* in the merged list */
};

static int slot_cmp(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;

	if (x->pos != y->pos)
		return x->pos < y->pos ? -1 : 1;
	return x->idx < y->idx ? -1 : (x->idx > y->idx);
}

/*
 * Reorder list field `field` of m by $setElementOrder. Items named by the
 * order list take the slots such items occupy, in the order given; items
 * it does not name (added by others, "server-only") keep their slots, so
 * an apply by one client does not shuffle another's entries.
 */
static int apply_order(struct smp *c, json_t *m, const char *field,
    const json_t *order, const struct api_patch_seg *at)
{
	struct api_patch_seg seg = {field, at};
	const struct api_smp_rule *r = rule_for(c->schema, &seg);
	const char *key = r ? r->merge_key : NULL;
	json_t *list = json_object_get(m, field), *res;
	struct slot *slots;
	size_t i, n, ns = 0, next = 0;

	if (!json_is_array(order))
		return SMPERR(
		    c, CU_EPARSE, at, "%s%s must be a list", DIR_ORDER, field);
	for (i = 0; key != NULL && i < json_array_size(order); i++)
		if (json_object_get(json_array_get(order, i), key) == NULL)
			return SMPERR(c, CU_EPARSE, at,
			    "%s%s item %zu has no merge key \"%s\"", DIR_ORDER,
			    field, i, key);
	if (!json_is_array(list) || json_array_size(list) < 2)
		return CU_OK;
	n = json_array_size(list);
	slots = cu_calloc(n, sizeof(*slots));
	if (slots == NULL)
		return oom(c, at);
	for (i = 0; i < n; i++) {
		long pos = order_pos(order, json_array_get(list, i), key);

		if (pos >= 0)
			slots[ns++] = (struct slot){pos, i};
	}
	qsort(slots, ns, sizeof(*slots), slot_cmp);
	res = json_array();
	for (i = 0; res != NULL && i < n; i++) {
		json_t *item = json_array_get(list, i);

		if (order_pos(order, item, key) >= 0)
			item = json_array_get(list, slots[next++].idx);
		if (json_array_append(res, item) != 0) {
			json_decref(res);
			res = NULL;
		}
	}
	cu_free(slots);
	if (res == NULL || json_object_set_new(m, field, res) != 0)
		return oom(c, at);
	return CU_OK;
}

/* Remove the values of del from the primitive list m[field]. */
static int delete_primitives(struct smp *c, json_t *m, const char *field,
    const json_t *del, const struct api_patch_seg *at)
{
	json_t *list = json_object_get(m, field);
	size_t i;

	if (!json_is_array(del))
		return SMPERR(c, CU_EPARSE, at, "%s%s must be a list",
		    DIR_DELETE_PRIM, field);
	if (!json_is_array(list))
		return CU_OK;
	for (i = json_array_size(list); i-- > 0;)
		if (in_list(del, json_array_get(list, i)))
			json_array_remove(list, i);
	return CU_OK;
}

/* Check $retainKeys and, if present, that the patch sets no other key. */
static int check_retain(struct smp *c, const json_t *patch,
    const json_t *retain, const struct api_patch_seg *at)
{
	const char *key;
	json_t *v;
	size_t i;

	if (!json_is_array(retain))
		return SMPERR(
		    c, CU_EPARSE, at, "%s", "$retainKeys must be a list");
	for (i = 0; i < json_array_size(retain); i++)
		if (!json_is_string(json_array_get(retain, i)))
			return SMPERR(c, CU_EPARSE, at,
			    "$retainKeys item %zu is not a string", i);
	json_object_foreach((json_t *)patch, key, v)
	{
		if (is_directive_key(key) || json_is_null(v))
			continue;
		if (!in_string_list(retain, key))
			return SMPERR(c, CU_EINVAL, at,
			    "key \"%s\" is not in $retainKeys", key);
	}
	return CU_OK;
}

/* The merge of patch into orig [NULL = absent]; *out NULL when the patch
 * deletes the map ("$patch": "delete"). */
static int merge_map(struct smp *c, json_t **out, const json_t *orig,
    const json_t *patch, const struct api_patch_seg *at)
{
	const json_t *retain = json_object_get(patch, DIR_RETAIN);
	const char *key;
	json_t *res, *v, *nv;
	enum directive d;
	int rc;

	*out = NULL;
	rc = get_directive(c, patch, at, &d);
	if (rc != CU_OK)
		return rc;
	if (d == DIR_DELETE)
		return CU_OK;
	if (d == DIR_REPLACE || !json_is_object(orig))
		orig = NULL;
	if (retain != NULL) {
		rc = check_retain(c, patch, retain, at);
		if (rc != CU_OK)
			return rc;
	}
	res = json_object();
	if (res == NULL)
		return oom(c, at);
	if (orig != NULL) {
		json_object_foreach((json_t *)orig, key, v)
		{
			if (retain != NULL && !in_string_list(retain, key))
				continue;
			/* A map the patch recurses into is read from orig
			 * directly: copying it here too would make deep
			 * patches quadratic. */
			if (json_is_object(json_object_get(patch, key)))
				continue;
			if (json_object_set_new(res, key, json_deep_copy(v))) {
				rc = oom(c, at);
				goto out_free;
			}
		}
	}
	/* Deletions from primitive lists apply to the original values,
	 * before the patch's own list (if any) is merged in. */
	json_object_foreach((json_t *)patch, key, v)
	{
		if (strncmp(key, DIR_DELETE_PRIM, strlen(DIR_DELETE_PRIM)) != 0)
			continue;
		rc = delete_primitives(
		    c, res, key + strlen(DIR_DELETE_PRIM), v, at);
		if (rc != CU_OK)
			goto out_free;
	}
	json_object_foreach((json_t *)patch, key, v)
	{
		struct api_patch_seg seg = {key, at};

		if (is_directive_key(key))
			continue;
		if (json_is_null(v)) {
			json_object_del(res, key);
			continue;
		}
		if (json_is_object(v))
			rc = merge_map(c, &nv,
			    orig ? json_object_get(orig, key) : NULL, v, &seg);
		else if (json_is_array(v))
			rc = merge_list(
			    c, &nv, json_object_get(res, key), v, &seg);
		else
			rc = (nv = json_deep_copy(v)) ? CU_OK : oom(c, &seg);
		if (rc != CU_OK)
			goto out_free;
		if (nv == NULL) {
			json_object_del(res, key);
			continue;
		}
		if (json_object_set_new(res, key, nv) != 0) {
			rc = oom(c, &seg);
			goto out_free;
		}
	}
	json_object_foreach((json_t *)patch, key, v)
	{
		if (strncmp(key, DIR_ORDER, strlen(DIR_ORDER)) != 0)
			continue;
		rc = apply_order(c, res, key + strlen(DIR_ORDER), v, at);
		if (rc != CU_OK)
			goto out_free;
	}
	*out = res;
	return CU_OK;
out_free:
	json_decref(res);
	return rc;
}

int api_smp_apply(json_t **out, const json_t *doc, const json_t *patch,
    const struct api_smp_schema *schema, cu_error *err)
{
	struct smp c = {schema, err};
	int rc;

	CU_ASSERT(out != NULL && doc != NULL && patch != NULL);
	*out = NULL;
	if (!json_is_object(patch))
		return cu_error_set(err, CU_EPARSE,
		    "strategic merge patch: patch is not an object");
	if (!json_is_object(doc))
		return cu_error_set(err, CU_EINVAL,
		    "strategic merge patch: document is not an object");
	rc = merge_map(&c, out, doc, patch, NULL);
	if (rc != CU_OK)
		return rc;
	if (*out == NULL) {
		/* "$patch": "delete" at the top empties the object. */
		*out = json_object();
		if (*out == NULL)
			return cu_error_set(err, CU_ENOMEM,
			    "strategic merge patch: out of memory");
	}
	return CU_OK;
}
