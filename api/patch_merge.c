/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/patch_merge.c - RFC 7386 JSON Merge Patch (`application/merge-patch+
 * json`, what kubectl apply sends for CRs) and its inverse, the diff that
 * lets the controller send only what changed and nothing when nothing did.
 * Also the small helpers the other api/patch_*.c files share.
 */
#include <string.h>

#include "api/patch.h"
#include "api/patch_int.h"

size_t api_patch_depth(const json_t *v)
{
	size_t best = 0, d, k;
	const char *key;
	json_t *child;

	if (json_is_object(v)) {
		/* jansson's iterators take non-const pointers; nothing is
		 * modified. */
		json_object_foreach((json_t *)v, key, child)
		{
			d = api_patch_depth(child);
			if (d > best)
				best = d;
		}
	} else if (json_is_array(v)) {
		for (k = 0; k < json_array_size(v); k++) {
			d = api_patch_depth(json_array_get(v, k));
			if (d > best)
				best = d;
		}
	}
	return best + 1;
}

static size_t path_put(
    const struct api_patch_seg *s, char sep, char *buf, size_t size, size_t pos)
{
	size_t len;

	if (s == NULL)
		return pos;
	pos = path_put(s->up, sep, buf, size, pos);
	len = strlen(s->key);
	if (pos + 1 + len + 4 > size)
		return size; /* marks truncation; the caller adds "..." */
	buf[pos++] = sep;
	memcpy(buf + pos, s->key, len);
	return pos + len;
}

char *api_patch_path_format(
    const struct api_patch_seg *s, char sep, char *buf, size_t size)
{
	size_t pos;

	CU_ASSERT(size >= 4);
	pos = path_put(s, sep, buf, size, 0);
	if (pos >= size) {
		memcpy(buf + size - 4, "...", 4);
		return buf;
	}
	buf[pos] = '\0';
	return buf;
}

/* Merge patch into target [consumed, may be NULL]; a new reference or
 * NULL when out of memory. */
static json_t *merge(json_t *target, const json_t *patch)
{
	const char *key;
	json_t *pv, *merged;

	if (!json_is_object(patch)) {
		json_decref(target);
		return json_deep_copy(patch);
	}
	if (!json_is_object(target)) {
		json_decref(target);
		target = json_object();
		if (target == NULL)
			return NULL;
	}
	json_object_foreach((json_t *)patch, key, pv)
	{
		if (json_is_null(pv)) {
			json_object_del(target, key);
			continue;
		}
		/* target is our private copy, so the member may be merged in
		 * place; the extra reference keeps it alive across set. */
		merged = merge(json_incref(json_object_get(target, key)), pv);
		if (merged == NULL ||
		    json_object_set_new(target, key, merged)) {
			json_decref(target);
			return NULL;
		}
	}
	return target;
}

int api_merge_patch_apply(
    json_t **out, const json_t *doc, const json_t *patch, cu_error *err)
{
	json_t *target;

	CU_ASSERT(out != NULL && doc != NULL && patch != NULL);
	*out = NULL;
	target = json_deep_copy(doc);
	if (target == NULL)
		return cu_error_set(
		    err, CU_ENOMEM, "merge patch: out of memory");
	*out = merge(target, patch);
	if (*out == NULL)
		return cu_error_set(
		    err, CU_ENOMEM, "merge patch: out of memory");
	return CU_OK;
}

/*
 * *out = the patch turning from [NULL = member absent] into to, NULL when
 * nothing changes. `nested` is false only for the document itself, the one
 * place where a null patch means "null" rather than "delete".
 */
static int diff(json_t **out, const json_t *from, const json_t *to,
    const struct api_patch_seg *at, bool nested, cu_error *err)
{
	char path[256];
	const char *key;
	json_t *p, *fv, *tv, *sub;
	int rc;

	*out = NULL;
	if (from != NULL && json_equal(from, to))
		return CU_OK;
	if (!json_is_object(to)) {
		if (nested && json_is_null(to))
			return cu_error_set(err, CU_EINVAL,
			    "merge patch diff %s: a merge patch cannot set "
			    "null",
			    api_patch_path_format(at, '/', path, sizeof(path)));
		*out = json_deep_copy(to);
		if (*out == NULL)
			return cu_error_set(
			    err, CU_ENOMEM, "merge patch diff: out of memory");
		return CU_OK;
	}
	/* Merging an object into a non-object starts from {}. */
	if (!json_is_object(from))
		from = NULL;
	p = json_object();
	if (p == NULL)
		return cu_error_set(
		    err, CU_ENOMEM, "merge patch diff: out of memory");
	if (from != NULL) {
		json_object_foreach((json_t *)from, key, fv)
		{
			if (json_object_get(to, key) == NULL &&
			    json_object_set_new(p, key, json_null()) != 0) {
				json_decref(p);
				return cu_error_set(err, CU_ENOMEM,
				    "merge patch diff: out of memory");
			}
		}
	}
	json_object_foreach((json_t *)to, key, tv)
	{
		struct api_patch_seg seg = {key, at};

		rc = diff(&sub, from ? json_object_get(from, key) : NULL, tv,
		    &seg, true, err);
		if (rc != CU_OK) {
			json_decref(p);
			return rc;
		}
		if (sub != NULL && json_object_set_new(p, key, sub) != 0) {
			json_decref(p);
			return cu_error_set(
			    err, CU_ENOMEM, "merge patch diff: out of memory");
		}
	}
	*out = p;
	return CU_OK;
}

int api_merge_patch_diff(
    json_t **out, const json_t *from, const json_t *to, cu_error *err)
{
	CU_ASSERT(out != NULL && from != NULL && to != NULL);
	return diff(out, from, to, NULL, false, err);
}
