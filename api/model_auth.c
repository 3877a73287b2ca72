/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/model_auth.c - the answers of the API server's reviews in the
 * model, decoded once for the controller's gate of the metrics and
 * visibility endpoints: a TokenReview's status (authenticated, the user
 * with its groups, uid and extra), a SubjectAccessReview's status
 * (allowed, denied, reason), the request attributes a review asks about,
 * and the user's fields written back into a review's spec (see
 * api/model.h). Decode only: cueue never stores these kinds.
 */
#include <string.h>

#include "api/model_internal.h"
#include "api/wire.h"

/* ---- user.Info ---------------------------------------------------------- */

void api_user_info_dispose(struct api_user_info *u)
{
	if (u == NULL)
		return;
	cu_free(u->username);
	cu_free(u->uid);
	api_strlist_dispose(&u->groups);
	json_decref(u->extra);
	memset(u, 0, sizeof(*u));
}

int api_user_info_copy(
    struct api_user_info *dst, const struct api_user_info *src, cu_error *err)
{
	size_t i;
	bool bad = false;

	memset(dst, 0, sizeof(*dst));
	dst->username = src->username ? cu_strdup(src->username) : NULL;
	dst->uid = src->uid ? cu_strdup(src->uid) : NULL;
	bad = (src->username && !dst->username) || (src->uid && !dst->uid);
	dst->has_groups = src->has_groups;
	if (src->groups.n > 0) {
		dst->groups.items =
		    cu_calloc(src->groups.n, sizeof(*dst->groups.items));
		bad = bad || dst->groups.items == NULL;
		for (i = 0; !bad && i < src->groups.n; i++) {
			dst->groups.items[i] = cu_strdup(src->groups.items[i]);
			dst->groups.n = i + 1;
			bad = dst->groups.items[i] == NULL;
		}
	}
	dst->extra = src->extra ? json_incref(src->extra) : NULL;
	if (!bad)
		return CU_OK;
	api_user_info_dispose(dst);
	return cu_error_set(err, CU_ENOMEM, "user: out of memory");
}

/* extra: map[string][]string; every value a list of strings. */
static void user_extra(struct api_dec *d, const json_t *o, json_t **out)
{
	json_t *x = apid_json(d, o, "extra", JSON_OBJECT, false);
	const char *k;
	json_t *v, *s;
	size_t mark, m2, i;

	if (x == NULL)
		return;
	mark = apid_push(d, "extra");
	json_object_foreach(x, k, v)
	{
		m2 = apid_push(d, k);
		if (!json_is_array(v) && !json_is_null(v))
			apid_fail(d, CU_EPARSE,
			    "Invalid type: expected array, got %s",
			    api_json_type_name(v, true));
		json_array_foreach(v, i, s)
		{
			if (!json_is_string(s) && d->rc == CU_OK) {
				size_t m3 = apid_push_idx(d, i);

				apid_fail(d, CU_EPARSE,
				    "Invalid type: expected string, got %s",
				    api_json_type_name(s, true));
				apid_pop(d, m3);
			}
		}
		apid_pop(d, m2);
	}
	apid_pop(d, mark);
	if (d->rc != CU_OK) {
		json_decref(x);
		return;
	}
	*out = x;
}

/* A TokenReview's user may be empty (`"user": {}` when not
 * authenticated): its username is then optional. */
static void user_fields(struct api_dec *d, const json_t *u, bool need_name,
    struct api_user_info *out)
{
	apid_str(d, u, "username", need_name, &out->username);
	apid_str(d, u, "uid", false, &out->uid);
	out->has_groups = apid_field(d, u, "groups", JSON_ARRAY, false) != NULL;
	apid_strlist(d, u, "groups", false, &out->groups);
	user_extra(d, u, &out->extra);
}

int api_user_info_decode(
    struct api_user_info *out, const json_t *j, cu_error *err)
{
	struct api_dec d;

	apid_init(&d, err);
	memset(out, 0, sizeof(*out));
	if (!json_is_object(j))
		return apid_fail(&d, CU_EPARSE,
		    "Invalid type: a user must be a JSON object");
	user_fields(&d, j, true, out);
	if (d.rc != CU_OK)
		api_user_info_dispose(out);
	return d.rc;
}

int api_user_info_encode_spec(
    json_t *spec, const struct api_user_info *u, cu_error *err)
{
	json_t *g = NULL;
	size_t i;
	int bad = 0;

	bad |= json_object_set_new(
	    spec, "user", json_string(u->username ? u->username : ""));
	if (u->has_groups) {
		g = json_array();
		for (i = 0; g != NULL && i < u->groups.n; i++)
			bad |= json_array_append_new(
			    g, json_string(u->groups.items[i]));
		bad |= json_object_set_new(spec, "groups", g);
	}
	if (u->uid != NULL)
		bad |= json_object_set_new(spec, "uid", json_string(u->uid));
	if (u->extra != NULL)
		bad |= json_object_set(spec, "extra", u->extra);
	return bad ? cu_error_set(err, CU_ENOMEM, "user: out of memory")
		   : CU_OK;
}

/* ---- TokenReview -------------------------------------------------------- */

static void token_review_decode_body(
    struct api_dec *d, const json_t *j, struct api_token_review *x)
{
	const json_t *st, *u;
	bool has = false;
	size_t mark, m2;

	st = apid_section(d, j, "status", false, &mark);
	x->has_status = st != NULL;
	apid_bool(d, st, "authenticated", &has, &x->status.authenticated);
	apid_str(d, st, "error", false, &x->status.error);
	u = apid_section(d, st, "user", false, &m2);
	if (u != NULL) {
		x->status.has_user = true;
		user_fields(d, u, false, &x->status.user);
	}
	apid_pop(d, m2);
	apid_pop(d, mark);
}

void api_token_review_dispose(struct api_token_review *x)
{
	if (x == NULL)
		return;
	api_user_info_dispose(&x->status.user);
	cu_free(x->status.error);
	json_decref(x->raw);
	memset(x, 0, sizeof(*x));
}

/* ---- SubjectAccessReview ------------------------------------------------ */

static void subject_access_review_decode_body(
    struct api_dec *d, const json_t *j, struct api_subject_access_review *x)
{
	const json_t *st;
	bool has = false;
	size_t mark;

	st = apid_section(d, j, "status", false, &mark);
	x->has_status = st != NULL;
	apid_bool(d, st, "allowed", &has, &x->status.allowed);
	apid_bool(d, st, "denied", &has, &x->status.denied);
	apid_str(d, st, "reason", false, &x->status.reason);
	apid_str(d, st, "evaluationError", false, &x->status.evaluation_error);
	apid_pop(d, mark);
}

void api_subject_access_review_dispose(struct api_subject_access_review *x)
{
	if (x == NULL)
		return;
	cu_free(x->status.reason);
	cu_free(x->status.evaluation_error);
	json_decref(x->raw);
	memset(x, 0, sizeof(*x));
}

/* ---- request attributes ------------------------------------------------- */

void api_access_attributes_dispose(struct api_access_attributes *a)
{
	if (a == NULL)
		return;
	cu_free(a->verb);
	cu_free(a->group);
	cu_free(a->version);
	cu_free(a->resource_name);
	cu_free(a->subresource);
	cu_free(a->namespace_);
	cu_free(a->name);
	cu_free(a->path);
	cu_free(a->nr_verb);
	memset(a, 0, sizeof(*a));
}

int api_access_attributes_decode(
    struct api_access_attributes *out, const json_t *j, cu_error *err)
{
	struct api_dec d;
	const json_t *ra, *nra;
	size_t mark;

	apid_init(&d, err);
	memset(out, 0, sizeof(*out));
	if (!json_is_object(j))
		return apid_fail(&d, CU_EPARSE,
		    "Invalid type: request attributes must be a JSON object");
	ra = apid_section(&d, j, "resourceAttributes", false, &mark);
	out->resource = ra != NULL;
	apid_str(&d, ra, "verb", false, &out->verb);
	apid_str(&d, ra, "group", false, &out->group);
	apid_str(&d, ra, "version", false, &out->version);
	apid_str(&d, ra, "resource", false, &out->resource_name);
	apid_str(&d, ra, "subresource", false, &out->subresource);
	apid_str(&d, ra, "namespace", false, &out->namespace_);
	apid_str(&d, ra, "name", false, &out->name);
	apid_pop(&d, mark);
	nra = apid_section(&d, j, "nonResourceAttributes", false, &mark);
	out->non_resource = nra != NULL;
	apid_str(&d, nra, "path", false, &out->path);
	apid_str(&d, nra, "verb", false, &out->nr_verb);
	apid_pop(&d, mark);
	if (d.rc != CU_OK)
		api_access_attributes_dispose(out);
	return d.rc;
}

/* ---- the decoders ------------------------------------------------------- */

API_MODEL_DEFINE_DECODE(
    token_review, "authentication.k8s.io/v1", "TokenReview", "TokenReview")
API_MODEL_DEFINE_DECODE(subject_access_review, "authorization.k8s.io/v1",
    "SubjectAccessReview", "SubjectAccessReview")
