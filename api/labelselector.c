/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/labelselector.c - metav1.LabelSelector <-> api_selector.
 *
 * Decoding applies, in Kubernetes' order, ValidateLabelSelector (operator
 * and value-count checks before the key check, per expression) and then
 * LabelSelectorAsSelector (value syntax), so the first error we report is
 * the first one Kubernetes would list, and it names the field path.
 */
#include "api/labelselector.h"

#include <stdio.h>
#include <string.h>

#include "api/json.h"

#define PATH_MAX_LEN 512
/* Child paths add a short suffix to a parent path of PATH_MAX_LEN. */
#define SUB_LEN (PATH_MAX_LEN + 64)

static int type_error(
    cu_error *err, const char *path, const json_t *j, const char *want)
{
	return cu_error_set(err, CU_EPARSE, "%s: Invalid value: %s: must be %s",
	    path, api_json_type_name(j, false), want);
}

static int decode_match_labels(
    api_selector *out, const json_t *ml, const char *path, cu_error *err)
{
	char p[PATH_MAX_LEN];
	snprintf(p, sizeof(p), "%.400s.matchLabels", path);
	if (ml == NULL || json_is_null(ml))
		return CU_OK;
	if (!json_is_object(ml))
		return type_error(err, p, ml, "an object");
	const char *k;
	json_t *v;
	/* ValidateLabels reports keys and values against the map's path. */
	json_object_foreach((json_t *)ml, k, v)
	{
		if (!json_is_string(v)) {
			char vp[SUB_LEN];
			snprintf(vp, sizeof(vp), "%.480s[%.64s]", p, k);
			return type_error(err, vp, v, "a string");
		}
		int rc = api_validate_label_key(k, p, err);
		if (rc != CU_OK)
			return rc;
		rc = api_validate_label_value(json_string_value(v), p, err);
		if (rc != CU_OK)
			return rc;
	}
	json_object_foreach((json_t *)ml, k, v)
	{
		const char *val = json_string_value(v);
		int rc = api_selector_add(
		    out, k, API_SEL_OP_EQUALS, &val, 1, p, err);
		if (rc != CU_OK)
			return rc;
	}
	return CU_OK;
}

static int decode_expression(
    api_selector *out, const json_t *e, const char *p, cu_error *err)
{
	char sub[SUB_LEN];
	if (!json_is_object(e))
		return type_error(err, p, e, "an object");

	const json_t *jkey = json_object_get(e, "key");
	const json_t *jop = json_object_get(e, "operator");
	const json_t *jvals = json_object_get(e, "values");
	if (jkey != NULL && !json_is_null(jkey) && !json_is_string(jkey)) {
		snprintf(sub, sizeof(sub), "%s.key", p);
		return type_error(err, sub, jkey, "a string");
	}
	if (jop != NULL && !json_is_null(jop) && !json_is_string(jop)) {
		snprintf(sub, sizeof(sub), "%s.operator", p);
		return type_error(err, sub, jop, "a string");
	}
	size_t n = 0;
	if (jvals != NULL && !json_is_null(jvals)) {
		snprintf(sub, sizeof(sub), "%s.values", p);
		if (!json_is_array(jvals))
			return type_error(err, sub, jvals, "an array");
		n = json_array_size(jvals);
		for (size_t i = 0; i < n; i++) {
			const json_t *v = json_array_get(jvals, i);
			if (!json_is_string(v)) {
				snprintf(
				    sub, sizeof(sub), "%s.values[%zu]", p, i);
				return type_error(err, sub, v, "a string");
			}
		}
	}
	const char *key =
	    jkey && json_is_string(jkey) ? json_string_value(jkey) : "";
	const char *opname =
	    jop && json_is_string(jop) ? json_string_value(jop) : "";

	enum api_sel_op op;
	if (strcmp(opname, "In") == 0 || strcmp(opname, "NotIn") == 0) {
		op = opname[0] == 'I' ? API_SEL_OP_IN : API_SEL_OP_NOT_IN;
		if (n == 0)
			return cu_error_set(err, CU_EINVAL,
			    "%s.values: Required value: must be specified "
			    "when `operator` is 'In' or 'NotIn'",
			    p);
	} else if (strcmp(opname, "Exists") == 0 ||
		   strcmp(opname, "DoesNotExist") == 0) {
		op = opname[0] == 'E' ? API_SEL_OP_EXISTS
				      : API_SEL_OP_DOES_NOT_EXIST;
		if (n > 0)
			return cu_error_set(err, CU_EINVAL,
			    "%s.values: Forbidden: may not be specified when "
			    "`operator` is 'Exists' or 'DoesNotExist'",
			    p);
	} else {
		return cu_error_set(err, CU_EINVAL,
		    "%s.operator: Invalid value: \"%.64s\": not a valid "
		    "selector operator",
		    p, opname);
	}
	snprintf(sub, sizeof(sub), "%s.key", p);
	int rc = api_validate_label_key(key, sub, err);
	if (rc != CU_OK)
		return rc;

	const char **vals = NULL;
	if (n > 0) {
		vals = cu_calloc(n, sizeof(*vals));
		if (vals == NULL)
			return cu_error_set(
			    err, CU_ENOMEM, "%s: out of memory", p);
		for (size_t i = 0; i < n; i++)
			vals[i] = json_string_value(json_array_get(jvals, i));
	}
	/* Value syntax (and anything else NewRequirement checks) is
	 * reported by api_selector_add against this expression's path. */
	rc = api_selector_add(out, key, op, vals, n, p, err);
	cu_free(vals);
	return rc;
}

int api_label_selector_decode(
    api_selector *out, const json_t *j, const char *path, cu_error *err)
{
	api_selector_init(out);
	if (path == NULL)
		path = "labelSelector";
	if (j == NULL || json_is_null(j)) {
		out->match_nothing = true;
		return CU_OK;
	}
	if (!json_is_object(j))
		return type_error(err, path, j, "an object");

	int rc = decode_match_labels(
	    out, json_object_get(j, "matchLabels"), path, err);
	if (rc != CU_OK)
		goto fail;

	const json_t *me = json_object_get(j, "matchExpressions");
	if (me != NULL && !json_is_null(me)) {
		char p[PATH_MAX_LEN];
		snprintf(p, sizeof(p), "%.400s.matchExpressions", path);
		if (!json_is_array(me)) {
			rc = type_error(err, p, me, "an array");
			goto fail;
		}
		for (size_t i = 0; i < json_array_size(me); i++) {
			snprintf(p, sizeof(p), "%.400s.matchExpressions[%zu]",
			    path, i);
			rc = decode_expression(
			    out, json_array_get(me, i), p, err);
			if (rc != CU_OK)
				goto fail;
		}
	}
	return CU_OK;
fail:
	api_selector_dispose(out);
	return rc;
}

static int encode_expression(json_t *exprs, const struct api_requirement *r)
{
	const char *opname = NULL;
	switch (r->op) {
	case API_SEL_OP_IN:
	case API_SEL_OP_EQUALS:
	case API_SEL_OP_DOUBLE_EQUALS:
		opname = "In";
		break;
	case API_SEL_OP_NOT_IN:
	case API_SEL_OP_NOT_EQUALS:
		opname = "NotIn";
		break;
	case API_SEL_OP_EXISTS:
		opname = "Exists";
		break;
	case API_SEL_OP_DOES_NOT_EXIST:
		opname = "DoesNotExist";
		break;
	case API_SEL_OP_GT:
	case API_SEL_OP_LT:
		return CU_EINVAL;
	}
	json_t *e = json_object();
	if (e == NULL || json_array_append_new(exprs, e) != 0)
		return CU_ENOMEM;
	if (json_object_set_new(e, "key", json_string(r->key)) != 0 ||
	    json_object_set_new(e, "operator", json_string(opname)) != 0)
		return CU_ENOMEM;
	if (r->nvalues == 0)
		return CU_OK;
	json_t *vals = json_array();
	if (vals == NULL || json_object_set_new(e, "values", vals) != 0)
		return CU_ENOMEM;
	for (size_t i = 0; i < r->nvalues; i++)
		if (json_array_append_new(vals, json_string(r->values[i])) != 0)
			return CU_ENOMEM;
	return CU_OK;
}

int api_label_selector_encode(
    json_t **out, const api_selector *sel, cu_error *err)
{
	for (size_t i = 0; i < sel->nreqs; i++)
		if (sel->reqs[i].op == API_SEL_OP_GT ||
		    sel->reqs[i].op == API_SEL_OP_LT)
			return cu_error_set(err, CU_EINVAL,
			    "label selector requirement on \"%.64s\": "
			    "operator '%s' has no LabelSelector form",
			    sel->reqs[i].key, api_sel_op_name(sel->reqs[i].op));
	if (sel->match_nothing) {
		json_t *n = json_null();
		*out = n;
		return CU_OK;
	}
	json_t *obj = json_object();
	json_t *labels = json_object();
	json_t *exprs = json_array();
	int rc = CU_OK;
	if (obj == NULL || labels == NULL || exprs == NULL) {
		rc = CU_ENOMEM;
		goto done;
	}
	for (size_t i = 0; rc == CU_OK && i < sel->nreqs; i++) {
		const struct api_requirement *r = &sel->reqs[i];
		bool exact = r->op == API_SEL_OP_EQUALS ||
			     r->op == API_SEL_OP_DOUBLE_EQUALS;
		if (exact && r->nvalues == 1 &&
		    json_object_get(labels, r->key) == NULL) {
			if (json_object_set_new(
				labels, r->key, json_string(r->values[0])) != 0)
				rc = CU_ENOMEM;
			continue;
		}
		rc = encode_expression(exprs, r);
	}
	if (rc == CU_OK && json_object_size(labels) > 0 &&
	    json_object_set(obj, "matchLabels", labels) != 0)
		rc = CU_ENOMEM;
	if (rc == CU_OK && json_array_size(exprs) > 0 &&
	    json_object_set(obj, "matchExpressions", exprs) != 0)
		rc = CU_ENOMEM;
done:
	json_decref(labels);
	json_decref(exprs);
	if (rc != CU_OK) {
		json_decref(obj);
		return cu_error_set(err, rc,
		    "label selector: out of memory "
		    "while encoding");
	}
	*out = obj;
	return CU_OK;
}
