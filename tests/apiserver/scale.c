/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/scale.c - the /scale subresource (docs/apiserver.md
 * §4.4): an autoscaling/v1 Scale read from, and written into, the
 * object's replica fields. Built-in Deployments and StatefulSets keep
 * them at spec.replicas, status.replicas and spec.selector; a custom
 * resource names them in its CRD (subresources.scale: specReplicasPath,
 * statusReplicasPath, labelSelectorPath). kubectl scale GETs or PATCHes
 * the Scale; the object is then updated as any other write.
 */
#include <stdio.h>
#include <string.h>

#include "api/patch.h"
#include "tests/apiserver/apiserver.h"

/* A CRD's JSONPath ".spec.replicas" as our dotted path. */
static const char *scale_path(
    const struct as_kind *k, const char *field, const char *builtin)
{
	const char *p = as_jstr(k->scale, field);

	if (k->scale == NULL)
		return builtin;
	if (p == NULL)
		return NULL;
	return p[0] == '.' ? p + 1 : p;
}

/* matchLabels as "k=v,k2=v2" (metav1.FormatLabelSelector, sorted). */
static json_t *selector_string(json_t *sel)
{
	json_t *ml = json_object_get(sel, "matchLabels"), *v;
	const char **keys;
	size_t n = json_object_size(ml), i = 0, j, len = 0;
	const char *key;
	char *buf, *p;
	json_t *out;

	if (n == 0)
		return NULL;
	keys = cu_calloc(n, sizeof(*keys));
	if (keys == NULL)
		return NULL;
	json_object_foreach(ml, key, v)
	{
		keys[i++] = key;
		len +=
		    strlen(key) +
		    strlen(json_string_value(v) ? json_string_value(v) : "") +
		    2;
	}
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && strcmp(keys[j - 1], keys[j]) > 0; j--) {
			const char *t = keys[j];

			keys[j] = keys[j - 1];
			keys[j - 1] = t;
		}
	buf = cu_calloc(1, len + 1);
	for (i = 0, p = buf; buf != NULL && i < n; i++) {
		const char *val =
		    json_string_value(json_object_get(ml, keys[i]));
		int w = snprintf(p, len + 1 - (size_t)(p - buf), "%s%s=%s",
		    i ? "," : "", keys[i], val ? val : "");

		if (w > 0)
			p += w;
	}
	out = buf ? json_string(buf) : NULL;
	cu_free(buf);
	cu_free(keys);
	return out;
}

json_t *as_scale_get(const struct as_kind *k, json_t *obj)
{
	const char *sp = scale_path(k, "specReplicasPath", "spec.replicas");
	const char *st = scale_path(k, "statusReplicasPath", "status.replicas");
	const char *lp = scale_path(k, "labelSelectorPath", NULL);
	json_t *md = json_object_get(obj, "metadata"), *scale, *sel = NULL;
	json_t *want = sp ? as_jget(obj, sp) : NULL;
	json_t *have = st ? as_jget(obj, st) : NULL;

	scale = json_pack("{s:s, s:s, s:{s:O*, s:O*, s:O*, s:O*, s:O*}, "
			  "s:{s:I}, s:{s:I}}",
	    "kind", "Scale", "apiVersion", "autoscaling/v1", "metadata", "name",
	    json_object_get(md, "name"), "namespace",
	    json_object_get(md, "namespace"), "uid", json_object_get(md, "uid"),
	    "resourceVersion", json_object_get(md, "resourceVersion"),
	    "creationTimestamp", json_object_get(md, "creationTimestamp"),
	    "spec", "replicas",
	    json_is_integer(want) ? json_integer_value(want) : (json_int_t)0,
	    "status", "replicas",
	    json_is_integer(have) ? json_integer_value(have) : (json_int_t)0);
	if (k->scale == NULL)
		sel = selector_string(as_jget(obj, "spec.selector"));
	else if (lp != NULL && as_jstr(obj, lp) != NULL)
		sel = json_string(as_jstr(obj, lp));
	if (scale != NULL && sel != NULL)
		as_jset(scale, "status.selector", sel);
	else
		json_decref(sel);
	return scale;
}

int as_scale_wanted(const struct as_request *rq, json_t *scale,
    json_int_t *replicas, struct as_resp *resp)
{
	const char *ct = as_header(rq, "Content-Type");
	json_t *body, *result = NULL, *r;
	json_error_t jerr;
	cu_error err;
	int rc = CU_OK;

	body = json_loadb(rq->body, rq->body_len, JSON_DECODE_ANY, &jerr);
	if (body == NULL) {
		as_resp_error(resp, 400, "BadRequest",
		    "error decoding the Scale: %s", jerr.text);
		return CU_EPARSE;
	}
	if (strcmp(rq->method, "PUT") == 0) {
		const char *rv = as_jstr(body, "metadata.resourceVersion");

		if (rv != NULL && rv[0] != '\0' &&
		    strcmp(rv, as_jstr(scale, "metadata.resourceVersion")) !=
			0) {
			as_resp_error(resp, 409, "Conflict",
			    "Operation cannot be fulfilled on %s \"%s\": the "
			    "object has been modified; please apply your "
			    "changes to the latest version and try again",
			    "scale", as_jstr(scale, "metadata.name"));
			json_decref(body);
			return CU_ECONFLICT;
		}
		result = json_incref(body);
	} else if (ct != NULL &&
		   strncmp(ct, "application/json-patch+json",
		       strlen("application/json-patch+json")) == 0) {
		rc = api_json_patch_apply(&result, scale, body, &err);
	} else {
		/* merge and strategic merge patches agree on a Scale */
		rc = api_merge_patch_apply(&result, scale, body, &err);
	}
	json_decref(body);
	if (rc != CU_OK) {
		as_resp_error(resp, rc == CU_EPARSE ? 400 : 422,
		    rc == CU_EPARSE ? "BadRequest" : "Invalid", "%s", err.msg);
		return rc;
	}
	r = as_jget(result, "spec.replicas");
	if (r != NULL && (!json_is_integer(r) || json_integer_value(r) < 0)) {
		as_resp_error(resp, 422, "Invalid",
		    "Scale.autoscaling \"%s\" is invalid: spec.replicas: "
		    "Invalid value: %lld: must be greater than or equal to 0",
		    as_jstr(scale, "metadata.name"),
		    json_is_integer(r) ? (long long)json_integer_value(r) : -1);
		json_decref(result);
		return CU_EINVAL;
	}
	*replicas = json_is_integer(r) ? json_integer_value(r) : 0;
	json_decref(result);
	return CU_OK;
}

json_t *as_scale_set(const struct as_kind *k, json_t *obj, json_int_t replicas)
{
	const char *sp = scale_path(k, "specReplicasPath", "spec.replicas");
	json_t *upd = json_deep_copy(obj);

	if (upd != NULL && sp != NULL)
		as_jset(upd, sp, json_integer(replicas));
	return upd;
}
