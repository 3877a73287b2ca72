/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/handlers.c - the REST semantics of cueue-apiserver:
 * routing, discovery, get/list/watch, create, update, patch, delete,
 * status subresources, CRDs, and the per-kind rules a controller relies on
 * (docs/apiserver.md §1-§5). Every rule here exists because a real
 * kube-apiserver has it; leniency would make every test above it lie.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/patch.h"
#include "api/yaml.h"
#include "tests/apiserver/apiserver.h"

/* The path of a resource request, split. */
struct route {
	char group[128];
	char version[64];
	char ns[254];
	char plural[128];
	char name[254];
	char sub[64];
	bool has_ns, has_name, has_sub, watch_prefix;
	struct as_kind *kind; /* storage kind */
	struct as_kind *view; /* the requested kind when it is a view */
	/* The client's version when the CRD's conversion webhook converts
	 * to and from it (convert.c); "" otherwise. The handlers then run at
	 * the storage version (to_storage). */
	char conv_from[64];
};

static void copy_seg(char *dst, size_t cap, const char *src);

/* Run the handlers at the storage version; convert.c converts the body in
 * and the reply out. */
static void to_storage(struct route *r)
{
	if (r->conv_from[0] != '\0')
		copy_seg(r->version, sizeof(r->version), r->kind->version);
}

/* The kind as the client named it (for list kinds and apiVersions). */
static const struct as_kind *shown(const struct route *r)
{
	return r->view ? r->view : r->kind;
}

static bool view_in(
    const struct route *r, json_t **obj, bool create, struct as_resp *resp);

/* ---- small helpers -------------------------------------------------- */

static void resp_json(struct as_resp *resp, int code, json_t *body)
{
	resp->code = code;
	json_decref(resp->body);
	resp->body = body;
}

static bool is_dry_run(
    const struct as_request *rq, struct as_resp *resp, bool *bad)
{
	const char *d = as_query(rq, "dryRun");

	*bad = false;
	if (d == NULL || d[0] == '\0')
		return false;
	if (strcmp(d, "All") == 0)
		return true;
	*bad = true;
	as_resp_error(resp, 422, "Invalid",
	    "dryRun: Unsupported value: \"%s\": supported values: \"All\"", d);
	return false;
}

static const char *field_validation(const struct as_request *rq)
{
	const char *fv = as_query(rq, "fieldValidation");

	return fv ? fv : "Warn";
}

static char *media_type(const char *ct)
{
	const char *semi;
	char *m, *p;

	if (ct == NULL)
		return cu_strdup("");
	semi = strchr(ct, ';');
	m = cu_strndup(ct, semi ? (size_t)(semi - ct) : strlen(ct));
	for (p = m; p != NULL && *p != '\0'; p++)
		*p = (char)tolower((unsigned char)*p);
	/* trim trailing blanks */
	if (m != NULL) {
		size_t n = strlen(m);

		while (n > 0 && isspace((unsigned char)m[n - 1]))
			m[--n] = '\0';
	}
	return m;
}

static char *rv_string(uint64_t rv)
{
	return cu_asprintf("%llu", (unsigned long long)rv);
}

static bool parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (s == NULL || *s == '\0' || !isdigit((unsigned char)s[0]))
		return false;
	v = strtoull(s, &end, 10);
	if (*end != '\0')
		return false;
	*out = v;
	return true;
}

static const char *md_str(json_t *obj, const char *key)
{
	return json_string_value(
	    json_object_get(json_object_get(obj, "metadata"), key));
}

static json_t *md_of(json_t *obj)
{
	json_t *md = json_object_get(obj, "metadata");

	if (!json_is_object(md)) {
		md = json_object();
		json_object_set_new(obj, "metadata", md);
	}
	return md;
}

/* Objects equal apart from resourceVersion (the no-op write test):
 * callers align the resourceVersions first, so this is plain equality. */
static bool same_object(json_t *a, json_t *b)
{
	return json_equal(a, b);
}

static bool skip_key(const struct as_kind *k, const char *key)
{
	return strcmp(key, "metadata") == 0 ||
	       ((k->flags & AS_STATUS) && strcmp(key, "status") == 0);
}

/* Anything but metadata (and status when it is a subresource) differs. */
static bool spec_changed(const struct as_kind *k, json_t *a, json_t *b)
{
	const char *key;
	json_t *v;

	json_object_foreach(a, key, v)
	{
		if (!skip_key(k, key) &&
		    !json_equal(v, json_object_get(b, key)))
			return true;
	}
	json_object_foreach(b, key, v)
	{
		if (!skip_key(k, key) && json_object_get(a, key) == NULL)
			return true;
	}
	return false;
}

static bool is_qualified_name(const char *s)
{
	const char *slash = strchr(s, '/');
	const char *name = slash ? slash + 1 : s;
	size_t n = strlen(name), i;

	if (slash != NULL) {
		char prefix[254];
		size_t pl = (size_t)(slash - s);

		if (pl == 0 || pl > 253)
			return false;
		memcpy(prefix, s, pl);
		prefix[pl] = '\0';
		if (!as_valid_dns_subdomain(prefix))
			return false;
	}
	if (n == 0 || n > 63 || !isalnum((unsigned char)name[0]) ||
	    !isalnum((unsigned char)name[n - 1]))
		return false;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)name[i]) && name[i] != '-' &&
		    name[i] != '_' && name[i] != '.')
			return false;
	return true;
}

static bool is_label_value(const char *v)
{
	size_t n = strlen(v), i;

	if (n == 0)
		return true;
	if (n > 63 || !isalnum((unsigned char)v[0]) ||
	    !isalnum((unsigned char)v[n - 1]))
		return false;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)v[i]) && v[i] != '-' &&
		    v[i] != '_' && v[i] != '.')
			return false;
	return true;
}

/* ObjectMeta validation shared by create and update. Returns false with
 * a 422 in resp. */
static bool validate_meta(
    const struct as_kind *k, json_t *obj, struct as_resp *resp)
{
	json_t *md = json_object_get(obj, "metadata"), *v, *labels;
	const char *name = md_str(obj, "name"), *key;
	size_t i, nctl = 0;

	if (name != NULL) {
		int rule = as_kind_name_rule(k, obj, name, resp);
		bool ok = rule > 0 || (strcmp(k->plural, "namespaces") == 0
					      ? as_valid_dns_label(name)
					      : as_valid_dns_subdomain(name));

		if (rule == 0)
			return false;
		if (!ok) {
			as_resp_invalid(resp, k, name, "metadata.name",
			    "Invalid value: \"%s\": a lowercase RFC 1123 %s "
			    "must consist of lower case alphanumeric "
			    "characters, '-' or '.', and must start and end "
			    "with an alphanumeric character",
			    name,
			    strcmp(k->plural, "namespaces") == 0 ? "label"
								 : "subdomain");
			return false;
		}
	}
	labels = json_object_get(md, "labels");
	if (labels != NULL && !json_is_null(labels)) {
		if (!json_is_object(labels)) {
			as_resp_invalid(resp, k, name, "metadata.labels",
			    "Invalid value: must be a map of strings");
			return false;
		}
		json_object_foreach(labels, key, v)
		{
			char field[512];

			snprintf(field, sizeof(field), "metadata.labels");
			if (!is_qualified_name(key)) {
				as_resp_invalid(resp, k, name, field,
				    "Invalid value: \"%s\": name part must "
				    "consist of alphanumeric characters, '-', "
				    "'_' or '.', and must start and end with "
				    "an alphanumeric character",
				    key);
				return false;
			}
			if (!json_is_string(v) ||
			    !is_label_value(json_string_value(v))) {
				as_resp_invalid(resp, k, name, field,
				    "Invalid value: \"%s\": a valid label must "
				    "be an empty string or consist of "
				    "alphanumeric characters, '-', '_' or '.', "
				    "and must start and end with an "
				    "alphanumeric character",
				    json_is_string(v) ? json_string_value(v)
						      : "");
				return false;
			}
		}
	}
	v = json_object_get(md, "annotations");
	if (v != NULL && !json_is_null(v)) {
		json_t *a;

		if (!json_is_object(v)) {
			as_resp_invalid(resp, k, name, "metadata.annotations",
			    "Invalid value: must be a map of strings");
			return false;
		}
		json_object_foreach(v, key, a)
		{
			if (!is_qualified_name(key) || !json_is_string(a)) {
				as_resp_invalid(resp, k, name,
				    "metadata.annotations",
				    "Invalid value: \"%s\": must be a "
				    "qualified name with a string value",
				    key);
				return false;
			}
		}
	}
	v = json_object_get(md, "finalizers");
	if (v != NULL && !json_is_null(v)) {
		json_t *f;

		if (!json_is_array(v)) {
			as_resp_invalid(resp, k, name, "metadata.finalizers",
			    "Invalid value: must be a list of strings");
			return false;
		}
		json_array_foreach(v, i, f)
		{
			if (!json_is_string(f) ||
			    !is_qualified_name(json_string_value(f))) {
				char field[64];

				snprintf(field, sizeof(field),
				    "metadata.finalizers[%zu]", i);
				as_resp_invalid(resp, k, name, field,
				    "Invalid value: \"%s\": name part must "
				    "consist of alphanumeric characters",
				    json_is_string(f) ? json_string_value(f)
						      : "");
				return false;
			}
		}
	}
	v = json_object_get(md, "ownerReferences");
	if (v != NULL && !json_is_null(v)) {
		json_t *o;

		json_array_foreach(v, i, o)
		{
			static const char *const req[] = {
			    "apiVersion", "kind", "name", "uid"};
			size_t j;

			for (j = 0; j < 4; j++) {
				const char *s = json_string_value(
				    json_object_get(o, req[j]));

				if (s == NULL || s[0] == '\0') {
					char field[96];

					snprintf(field, sizeof(field),
					    "metadata.ownerReferences[%zu].%s",
					    i, req[j]);
					as_resp_invalid(resp, k, name, field,
					    "Invalid value: \"\": %s must not "
					    "be empty",
					    req[j]);
					return false;
				}
			}
			if (json_is_true(json_object_get(o, "controller")))
				nctl++;
		}
		if (nctl > 1) {
			as_resp_invalid(resp, k, name,
			    "metadata.ownerReferences",
			    "Invalid value: []: Only one reference can have "
			    "Controller set to true");
			return false;
		}
	}
	return true;
}

/* Decode a request body; 400 on malformed JSON (strict mode also rejects
 * duplicate fields, as a real server's strict decoder does). */
static json_t *decode_body(
    const struct as_request *rq, struct as_resp *resp, bool strict)
{
	json_error_t jerr;
	json_t *j;
	size_t flags = strict ? JSON_REJECT_DUPLICATES : 0;

	if (rq->body_len == 0) {
		as_resp_error(resp, 400, "BadRequest",
		    "the body of the request was empty");
		return NULL;
	}
	j = json_loadb(rq->body, rq->body_len, flags | JSON_DECODE_ANY, &jerr);
	if (j == NULL) {
		if (strict && strstr(jerr.text, "duplicate") != NULL)
			as_resp_error(resp, 400, "BadRequest",
			    "strict decoding error: %s", jerr.text);
		else
			as_resp_error(resp, 400, "BadRequest",
			    "couldn't get version/kind; json parse error: %s "
			    "(line %d, column %d)",
			    jerr.text, jerr.line, jerr.column);
		return NULL;
	}
	if (!json_is_object(j)) {
		json_decref(j);
		as_resp_error(resp, 400, "BadRequest",
		    "couldn't get version/kind; json parse error: expected "
		    "an object");
		return NULL;
	}
	return j;
}

/* The Content-Type of a POST or PUT body: JSON, or protobuf already
 * turned into JSON by proto.c (a kind with a message); else 415 naming
 * only what this resource takes. Frees mt [owned]. */
static bool body_type_ok(const struct route *r, char *mt, struct as_resp *resp)
{
	bool have = mt != NULL;
	bool ok =
	    have && (mt[0] == '\0' || strcmp(mt, "application/json") == 0);

	if (!have)
		as_resp_error(resp, 500, "InternalError", "out of memory");
	else if (!ok)
		as_resp_error(resp, 415, "UnsupportedMediaType",
		    "the body of the request was in an unknown format - "
		    "accepted media types include: application/json%s",
		    as_proto_kind(r->kind) ? ", " AS_PROTOBUF : "");
	cu_free(mt);
	return ok;
}

/* Check (and fill in when absent) apiVersion/kind against the URL. */
static bool check_gvk(const struct route *r, json_t *obj, struct as_resp *resp)
{
	const struct as_kind *k = r->kind;
	char *want = as_kind_api_version(k, r->version);
	const char *av = json_string_value(json_object_get(obj, "apiVersion"));
	const char *kind = json_string_value(json_object_get(obj, "kind"));
	bool ok = true;

	if (av != NULL && av[0] != '\0' && strcmp(av, want) != 0) {
		as_resp_error(resp, 400, "BadRequest",
		    "the API version in the data (%s) does not match the "
		    "expected API version (%s)",
		    av, want);
		ok = false;
	} else if (kind != NULL && kind[0] != '\0' &&
		   strcmp(kind, k->kind) != 0) {
		as_resp_error(resp, 400, "BadRequest",
		    "the kind in the data (%s) does not match the expected "
		    "kind (%s)",
		    kind, k->kind);
		ok = false;
	} else {
		json_object_set_new(obj, "apiVersion", json_string(want));
		json_object_set_new(obj, "kind", json_string(k->kind));
	}
	cu_free(want);
	return ok;
}

/* Strict/Warn/Ignore field validation after pruning. */
static bool check_unknown(const struct as_request *rq, const struct route *r,
    json_t *unknown, struct as_resp *resp)
{
	const char *fv = field_validation(rq);
	cu_buf b;
	size_t i;
	json_t *u;

	if (json_array_size(unknown) == 0 || strcmp(fv, "Ignore") == 0)
		return true;
	cu_buf_init(&b, 8192);
	json_array_foreach(unknown, i, u)
	{
		if (cu_buf_addf(&b, "%sunknown field \"%s\"", i ? ", " : "",
			json_string_value(u)) != CU_OK)
			break;
	}
	if (strcmp(fv, "Strict") == 0) {
		as_resp_error(resp, 400, "BadRequest",
		    "%s in version \"%s\" cannot be handled as a %s: strict "
		    "decoding error: %s",
		    r->kind->kind, r->version, r->kind->kind,
		    b.ptr ? b.ptr : "");
		cu_buf_dispose(&b);
		return false;
	}
	cu_buf_dispose(&b);
	/* Warn: one warning per field, as kube-apiserver adds them; the text
	 * quoted and escaped (a client drops a malformed Warning header). */
	json_array_foreach(unknown, i, u)
	{
		char *w =
		    cu_asprintf("unknown field \"%s\"", json_string_value(u));

		if (w != NULL)
			as_resp_warn(resp, w);
		cu_free(w);
	}
	return true;
}

/* Decode-level type check (400), as the real server's typed decoder. */
static bool types_ok(const struct as_kind *k, json_t *obj, struct as_resp *resp)
{
	bool invalid;
	char *field = NULL;
	char *msg = as_type_check(k, obj, &invalid, &field);

	cu_free(field);
	if (msg == NULL || invalid) {
		cu_free(msg);
		return true;
	}
	as_resp_error(resp, 400, "BadRequest", "%s", msg);
	cu_free(msg);
	return false;
}

/* Schema validation of a custom resource after defaulting (422). old:
 * the stored object on update, NULL on create. */
static bool schema_ok(
    const struct as_kind *k, json_t *obj, json_t *old, struct as_resp *resp)
{
	return !(k->flags & AS_CUSTOM) || as_schema_validate(k, obj, old, resp);
}

/* Output form of a stored object for the requested version. */
static json_t *out_object(const struct route *r, json_t *obj)
{
	json_t *o;
	char *av;

	if (r->view != NULL)
		return as_view_out(r->view, obj);
	if (r->kind == NULL || !(r->kind->flags & AS_CUSTOM) ||
	    strcmp(r->version, r->kind->version) == 0)
		return json_incref(obj);
	o = json_deep_copy(obj);
	av = as_kind_api_version(r->kind, r->version);
	json_object_set_new(o, "apiVersion", json_string(av));
	cu_free(av);
	return o;
}

/* ---- routing ------------------------------------------------------- */

static int split_path(const char *path, char seg[][256], int max)
{
	int n = 0;
	const char *p = path;

	while (*p == '/')
		p++;
	while (*p != '\0' && n < max) {
		const char *s = strchr(p, '/');
		size_t l = s ? (size_t)(s - p) : strlen(p);

		if (l >= 256)
			return -1;
		memcpy(seg[n], p, l);
		seg[n][l] = '\0';
		n++;
		p += l;
		while (*p == '/')
			p++;
	}
	return *p == '\0' ? n : -1;
}

static void copy_seg(char *dst, size_t cap, const char *src)
{
	size_t n = strlen(src);

	if (n >= cap)
		n = cap - 1; /* longer names fail lookups and validation */
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* Parse the segments after /api/v1 or /apis/g/v. Returns false if this is
 * not a resource path. */
static bool parse_resource(
    struct as_server *srv, char seg[][256], int n, int i, struct route *r)
{
	if (i < n && strcmp(seg[i], "watch") == 0) {
		r->watch_prefix = true;
		i++;
	}
	if (i >= n)
		return false;
	if (strcmp(seg[i], "namespaces") == 0 && i + 2 < n) {
		/* /namespaces/{ns}/{plural}... unless {x}/{status|finalize} of
		 * the namespace itself. */
		bool ns_sub = r->group[0] == '\0' && i + 3 == n &&
			      (strcmp(seg[i + 2], "status") == 0 ||
				  strcmp(seg[i + 2], "finalize") == 0);

		if (!ns_sub) {
			r->has_ns = true;
			copy_seg(r->ns, sizeof(r->ns), seg[i + 1]);
			i += 2;
		}
	}
	copy_seg(r->plural, sizeof(r->plural), seg[i]);
	i++;
	if (i < n) {
		r->has_name = true;
		copy_seg(r->name, sizeof(r->name), seg[i]);
		i++;
	}
	if (i < n) {
		r->has_sub = true;
		copy_seg(r->sub, sizeof(r->sub), seg[i]);
		i++;
	}
	if (i < n)
		return false;
	r->kind = as_kind_find(srv, r->group, r->version, r->plural);
	return true;
}

/* ---- continue tokens ----------------------------------------------- */

static const char b64url[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static char *token_encode(uint64_t rv, const char *ns, const char *name)
{
	char *plain =
	    cu_asprintf("%llu\n%s\n%s", (unsigned long long)rv, ns, name);
	size_t n, i, o = 0;
	char *out;

	if (plain == NULL)
		return NULL;
	n = strlen(plain);
	out = cu_malloc(n * 2 + 4);
	if (out == NULL) {
		cu_free(plain);
		return NULL;
	}
	for (i = 0; i < n; i += 3) {
		unsigned v = (unsigned char)plain[i] << 16;

		if (i + 1 < n)
			v |= (unsigned char)plain[i + 1] << 8;
		if (i + 2 < n)
			v |= (unsigned char)plain[i + 2];
		out[o++] = b64url[(v >> 18) & 63];
		out[o++] = b64url[(v >> 12) & 63];
		if (i + 1 < n)
			out[o++] = b64url[(v >> 6) & 63];
		if (i + 2 < n)
			out[o++] = b64url[v & 63];
	}
	out[o] = '\0';
	cu_free(plain);
	return out;
}

static bool token_decode(const char *tok, uint64_t *rv, char **ns, char **name)
{
	size_t n = strlen(tok), i, o = 0;
	char *plain = cu_malloc(n + 1), *a, *b;
	unsigned v = 0;
	int bits = 0;

	if (plain == NULL)
		return false;
	for (i = 0; i < n; i++) {
		const char *p = strchr(b64url, tok[i]);

		if (p == NULL || tok[i] == '\0') {
			cu_free(plain);
			return false;
		}
		v = (v << 6) | (unsigned)(p - b64url);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			plain[o++] = (char)((v >> bits) & 0xFF);
		}
	}
	plain[o] = '\0';
	a = strchr(plain, '\n');
	b = a ? strchr(a + 1, '\n') : NULL;
	if (a == NULL || b == NULL) {
		cu_free(plain);
		return false;
	}
	*a = '\0';
	*b = '\0';
	if (!parse_u64(plain, rv)) {
		cu_free(plain);
		return false;
	}
	*ns = cu_strdup(a + 1);
	*name = cu_strdup(b + 1);
	cu_free(plain);
	return *ns != NULL && *name != NULL;
}

/* ---- selectors ----------------------------------------------------- */

static bool parse_selectors(const struct as_request *rq, const struct route *r,
    api_selector *labels, ns_fieldsel *fields, struct as_resp *resp)
{
	const char *ls = as_query(rq, "labelSelector");
	const char *fs = as_query(rq, "fieldSelector");
	cu_error err;
	size_t i;

	api_selector_init(labels);
	ns_fieldsel_init(fields);
	if (ls != NULL && ns_selector_parse(labels, ls, &err) != CU_OK) {
		as_resp_error(resp, 400, "BadRequest", "%s", err.msg);
		return false;
	}
	if (fs != NULL && ns_fieldsel_parse(fields, fs, &err) != CU_OK) {
		as_resp_error(resp, 400, "BadRequest", "%s", err.msg);
		return false;
	}
	for (i = 0; i < fields->nterms; i++) {
		const char *f = fields->terms[i].field;

		if (as_kind_field_ok(r->kind, f))
			continue;
		if (r->kind->flags & AS_CUSTOM)
			as_resp_error(resp, 400, "BadRequest",
			    "field label not supported: %s", f);
		else
			as_resp_error(resp, 400, "BadRequest",
			    "\"%s\" is not a known field selector: only "
			    "\"metadata.name\", \"metadata.namespace\"",
			    f);
		return false;
	}
	/* A named watch path is a metadata.name field selector. */
	if (r->has_name) {
		const char *name = r->name;

		for (i = 0; i < fields->nterms; i++) {
			if (strcmp(fields->terms[i].field, "metadata.name") ==
				0 &&
			    (fields->terms[i].negate ||
				strcmp(fields->terms[i].value, name) != 0)) {
				as_resp_error(resp, 400, "BadRequest",
				    "fieldSelector metadata.name doesn't "
				    "match requested name");
				return false;
			}
		}
		{
			char *sel = cu_asprintf("metadata.name=%s", name);
			ns_fieldsel extra;

			ns_fieldsel_init(&extra);
			if (sel != NULL &&
			    ns_fieldsel_parse(&extra, sel, NULL) == CU_OK &&
			    extra.nterms == 1) {
				struct ns_field_term *t =
				    cu_realloc(fields->terms,
					(fields->nterms + 1) * sizeof(*t));

				if (t != NULL) {
					fields->terms = t;
					t[fields->nterms++] = extra.terms[0];
					extra.nterms = 0;
				}
			}
			ns_fieldsel_dispose(&extra);
			cu_free(sel);
		}
	}
	return true;
}

struct match_ctx {
	const struct as_kind *k;
	json_t *obj;
};

static const char *label_of(const char *key, void *payload)
{
	json_t *labels =
	    json_object_get(json_object_get(payload, "metadata"), "labels");

	return json_string_value(json_object_get(labels, key));
}

static const char *field_of(const char *field, void *payload)
{
	struct match_ctx *c = payload;

	return as_obj_field(c->k, c->obj, field);
}

static bool obj_matches(const struct as_kind *k, json_t *obj,
    const api_selector *labels, const ns_fieldsel *fields)
{
	struct match_ctx c = {k, obj};

	return ns_selector_matches(labels, label_of, obj) &&
	       ns_fieldsel_matches(fields, field_of, &c);
}

/* ---- tables (kubectl get) ------------------------------------------ */

/* The filter "[?(@.key=='value')]" (or with double quotes) at p: the key
 * and value into fk and fv; returns its closing ']' or NULL. */
static const char *jsonpath_filter(const char *p, char fk[64], char fv[128])
{
	const char *k = p + 5, *eq, *v, *close;
	char q;

	if (strncmp(p, "[?(@.", 5) != 0 || (eq = strstr(k, "==")) == NULL ||
	    eq == k || (size_t)(eq - k) >= 64)
		return NULL;
	q = eq[2];
	if (q != '\'' && q != '"')
		return NULL;
	v = eq + 3;
	close = strchr(v, q);
	if (close == NULL || (size_t)(close - v) >= 128 ||
	    strncmp(close + 1, ")]", 2) != 0)
		return NULL;
	memcpy(fk, k, (size_t)(eq - k));
	fk[eq - k] = '\0';
	memcpy(fv, v, (size_t)(close - v));
	fv[close - v] = '\0';
	return close + 2;
}

/* Minimal JSONPath for printer columns: ".a.b", ".a[0].b" and
 * ".a[?(@.type=='X')].b" with single or double quotes (Kueue's CRDs use
 * single). Returns a borrowed value or NULL. */
static json_t *jsonpath(json_t *obj, const char *path)
{
	const char *p = path;
	json_t *cur = obj;

	while (cur != NULL && *p != '\0') {
		if (*p == '.') {
			char key[128];
			size_t n = 0;

			p++;
			while (*p != '\0' && *p != '.' && *p != '[' &&
			       n + 1 < sizeof(key))
				key[n++] = *p++;
			key[n] = '\0';
			cur = json_object_get(cur, key);
		} else if (*p == '[') {
			const char *end = strchr(p, ']');

			if (end == NULL)
				return NULL;
			if (p[1] == '?') {
				char fk[64], fv[128];
				size_t i;
				json_t *el, *found = NULL;

				/* the value may hold a ']' */
				end = jsonpath_filter(p, fk, fv);
				if (end == NULL)
					return NULL;
				json_array_foreach(cur, i, el)
				{
					const char *s = json_string_value(
					    json_object_get(el, fk));

					if (s != NULL && strcmp(s, fv) == 0) {
						found = el;
						break;
					}
				}
				cur = found;
			} else {
				cur = json_array_get(
				    cur, (size_t)strtoul(p + 1, NULL, 10));
			}
			p = end + 1;
		} else {
			return NULL;
		}
	}
	return cur;
}

static json_t *cell_value(json_t *v)
{
	if (v == NULL)
		return json_null();
	if (json_is_array(v) || json_is_object(v)) {
		char *s = as_json_dump(v, NULL);
		json_t *r = json_string(s ? s : "");

		cu_free(s);
		return r;
	}
	return json_incref(v);
}

/* A custom kind's cell: `date` columns as ages (kube-apiserver's CRD
 * table convertor does so; kubectl prints cells as they come). */
static json_t *custom_cell(cu_ns_t now, json_t *col, json_t *v)
{
	const char *type = as_jstr(col, "type");

	if (type != NULL && strcmp(type, "date") == 0)
		return as_age_cell(now, v);
	return cell_value(v);
}

static json_t *table_for(const struct as_request *rq, const struct route *r,
    json_t *items, const char *rv, const char *cont)
{
	const struct as_kind *k = r->kind;
	json_t *cols = json_array(), *rows = json_array(), *pc, *c, *it;
	json_t *builtin = as_table_columns(k);
	const char *include = as_query(rq, "includeObject");
	size_t i, j;
	bool custom_age = false;
	json_t *age_col = NULL;
	cu_ns_t now = cu_time_now_ns();

	if (builtin != NULL) {
		/* pods, nodes, jobs, namespaces: kube's own printers */
		json_decref(cols);
		cols = builtin;
		custom_age = true;
	} else
		json_array_append_new(
		    cols, json_pack("{s:s, s:s, s:s, s:s, s:i}", "name", "Name",
			      "type", "string", "format", "name", "description",
			      "Name must be unique within a namespace.",
			      "priority", 0));
	pc = k->printer_columns;
	/* A CRD without additionalPrinterColumns gets kube's default: an Age
	 * column of metadata.creationTimestamp. */
	if ((k->flags & AS_CUSTOM) && json_array_size(pc) == 0) {
		age_col = json_pack("[{s:s, s:s, s:s, s:s}]", "name", "Age",
		    "type", "date", "jsonPath", ".metadata.creationTimestamp",
		    "description",
		    "CreationTimestamp is a timestamp representing the server "
		    "time when this object was created.");
		pc = age_col;
		custom_age = true;
	} else if (k->flags & AS_CUSTOM) {
		custom_age = true; /* only the CRD's own columns */
	}
	json_array_foreach(pc, i, c)
	{
		const char *type = as_jstr(c, "type");

		if (as_jstr(c, "name") &&
		    strcmp(as_jstr(c, "name"), "Age") == 0)
			custom_age = true;
		json_array_append_new(cols,
		    json_pack("{s:s, s:s, s:s, s:s, s:i}", "name",
			as_jstr(c, "name") ? as_jstr(c, "name") : "", "type",
			type ? type : "string", "format",
			as_jstr(c, "format") ? as_jstr(c, "format") : "",
			"description",
			as_jstr(c, "description") ? as_jstr(c, "description")
						  : "",
			"priority",
			(int)json_integer_value(
			    json_object_get(c, "priority"))));
	}
	if (!custom_age)
		json_array_append_new(cols,
		    json_pack("{s:s, s:s, s:s, s:s, s:i}", "name",
			k->printer_columns ? "Age" : "Created At", "type",
			"date", "format", "", "description",
			"CreationTimestamp is a timestamp representing the "
			"server time when this object was created.",
			"priority", 0));
	json_array_foreach(items, i, it)
	{
		json_t *cells = builtin ? as_table_cells(k, it) : json_array();
		json_t *row, *o;

		if (builtin == NULL)
			json_array_append_new(cells,
			    json_string(
				md_str(it, "name") ? md_str(it, "name") : ""));
		json_array_foreach(pc, j, c)
		{
			const char *jp = as_jstr(c, "jsonPath");

			json_array_append_new(cells,
			    custom_cell(now, c, jp ? jsonpath(it, jp) : NULL));
		}
		if (!custom_age)
			json_array_append_new(cells,
			    json_string(md_str(it, "creationTimestamp")
					    ? md_str(it, "creationTimestamp")
					    : ""));
		row = json_pack("{s:o}", "cells", cells);
		if (include != NULL && strcmp(include, "Object") == 0) {
			o = json_incref(it);
		} else if (include != NULL && strcmp(include, "None") == 0) {
			o = NULL;
		} else {
			o = json_pack("{s:s, s:s, s:O}", "kind",
			    "PartialObjectMetadata", "apiVersion",
			    "meta.k8s.io/v1", "metadata",
			    json_object_get(it, "metadata"));
		}
		if (o != NULL)
			json_object_set_new(row, "object", o);
		json_array_append_new(rows, row);
	}
	json_decref(age_col);
	it = json_pack("{s:s, s:s, s:{s:s}, s:o, s:o}", "kind", "Table",
	    "apiVersion", "meta.k8s.io/v1", "metadata", "resourceVersion", rv,
	    "columnDefinitions", cols, "rows", rows);
	if (cont != NULL)
		json_object_set_new(json_object_get(it, "metadata"), "continue",
		    json_string(cont));
	return it;
}

static bool wants_table(const struct as_request *rq)
{
	const char *accept = as_header(rq, "Accept");

	return accept != NULL && strstr(accept, "as=Table") != NULL &&
	       strstr(accept, "g=meta.k8s.io") != NULL;
}

/* ---- GET / LIST / WATCH -------------------------------------------- */

static void do_get(
    const struct as_request *rq, const struct route *r, struct as_resp *resp)
{
	json_t *obj = as_store_get(r->kind, r->ns, r->name);

	if (obj == NULL) {
		as_resp_not_found(resp, r->kind, r->name);
		return;
	}
	if (r->has_sub && strcmp(r->sub, "scale") == 0) {
		resp_json(resp, 200, as_scale_get(r->kind, obj));
		return;
	}
	if (wants_table(rq)) {
		json_t *one = json_pack("[O]", obj);
		char *rv = rv_string(rq->srv->rv);

		resp_json(resp, 200, table_for(rq, r, one, rv, NULL));
		json_decref(one);
		cu_free(rv);
		return;
	}
	resp_json(resp, 200, out_object(r, obj));
}

/* kube's "Too large resource version" Status [owned] for a request at
 * revision want while the server is at cur (storage.
 * NewTooLargeResourceVersionError: 504 Timeout, cause
 * ResourceVersionTooLarge, retry after 1 s). */
static json_t *too_large(uint64_t want, uint64_t cur)
{
	char msg[256];
	json_t *st;

	snprintf(msg, sizeof(msg),
	    "Timeout: Too large resource version: %llu, current: %llu",
	    (unsigned long long)want, (unsigned long long)cur);
	st = as_status(504, "Timeout", msg);
	if (st != NULL)
		json_object_set_new(st, "details",
		    json_pack("{s:[{s:s, s:s}], s:i}", "causes", "reason",
			"ResourceVersionTooLarge", "message",
			"Too large resource version", "retryAfterSeconds", 1));
	return st;
}

static void do_watch(const struct as_request *rq, const struct route *r,
    struct as_resp *resp, api_selector *labels, ns_fieldsel *fields);

static void do_list(
    const struct as_request *rq, const struct route *r, struct as_resp *resp)
{
	struct as_server *srv = rq->srv;
	struct as_kind *k = r->kind;
	const char *rvq = as_query(rq, "resourceVersion");
	const char *match = as_query(rq, "resourceVersionMatch");
	const char *cont = as_query(rq, "continue");
	const char *lim = as_query(rq, "limit");
	bool watch = r->watch_prefix || as_query_bool(rq, "watch");
	api_selector labels;
	ns_fieldsel fields;
	uint64_t snap_rv = srv->rv, want = 0, limit = 0;
	char *start_ns = NULL, *start_name = NULL, *rvs = NULL,
	     *next_tok = NULL;
	struct as_entry *snap = NULL;
	const struct as_entry *items;
	size_t nitems, i, count = 0, remaining = 0;
	bool use_snap = false, has_more = false, selectors;
	json_t *arr, *list;

	if (!parse_selectors(rq, r, &labels, &fields, resp))
		goto out;
	if (lim != NULL && lim[0] != '\0' && !parse_u64(lim, &limit)) {
		as_resp_error(
		    resp, 400, "BadRequest", "invalid limit: \"%s\"", lim);
		goto out;
	}
	{
		const char *ts = as_query(rq, "timeoutSeconds");
		uint64_t tsv;

		if (ts != NULL && ts[0] != '\0' && !parse_u64(ts, &tsv)) {
			as_resp_error(resp, 400, "BadRequest",
			    "invalid timeoutSeconds: strconv.ParseInt: parsing "
			    "\"%s\": invalid syntax",
			    ts);
			goto out;
		}
	}
	if (match != NULL && match[0] != '\0') {
		const char *why = NULL;
		bool unsupported = false;

		if (watch)
			why = "resourceVersionMatch is forbidden for watch";
		else if (rvq == NULL || rvq[0] == '\0')
			why = "resourceVersionMatch is forbidden unless "
			      "resourceVersion is provided";
		else if (cont != NULL && cont[0] != '\0')
			why = "resourceVersionMatch is forbidden when "
			      "continue is provided";
		else if (strcmp(match, "Exact") != 0 &&
			 strcmp(match, "NotOlderThan") != 0) {
			why = "supported values: \"Exact\", \"NotOlderThan\"";
			unsupported = true;
		} else if (strcmp(match, "Exact") == 0 && strcmp(rvq, "0") == 0)
			why = "resourceVersionMatch \"exact\" is forbidden "
			      "for resourceVersion \"0\"";
		if (why != NULL) {
			json_t *st;
			char msg[512];

			char detail[300];

			if (unsupported)
				snprintf(detail, sizeof(detail),
				    "Unsupported value: \"%.64s\": %s", match,
				    why);
			else
				snprintf(detail, sizeof(detail),
				    "Forbidden: %s", why);
			snprintf(msg, sizeof(msg),
			    "ListOptions.meta.k8s.io \"\" is invalid: "
			    "resourceVersionMatch: %s",
			    detail);
			st = as_status(422, "Invalid", msg);
			json_object_set_new(st, "details",
			    json_pack("{s:s, s:s, s:[{s:s, s:s, s:s}]}",
				"group", "meta.k8s.io", "kind", "ListOptions",
				"causes", "reason",
				unsupported ? "FieldValueNotSupported"
					    : "FieldValueForbidden",
				"message", detail, "field",
				"resourceVersionMatch"));
			as_resp_status(resp, 422, st);
			goto out;
		}
	}
	if (rvq != NULL && rvq[0] != '\0' && !parse_u64(rvq, &want)) {
		as_resp_error(resp, 400, "BadRequest",
		    "invalid resource version: %s", rvq);
		goto out;
	}
	if (watch && want > srv->rv &&
	    cu_time_mono_ns() - rq->first_ns < 3000000000LL) {
		/* A watch from a revision the server has not reached: kube's
		 * watch cache waits up to 3 s for it, then refuses it
		 * (do_watch) - after an etcd restore that refusal is what
		 * makes clients relist. */
		resp->delay = true;
		resp->delay_ms = 100;
		goto out;
	}
	if (watch) {
		do_watch(rq, r, resp, &labels, &fields);
		return; /* do_watch took the selectors */
	}
	if (cont != NULL && cont[0] != '\0') {
		if (rvq != NULL && rvq[0] != '\0' && strcmp(rvq, "0") != 0) {
			as_resp_error(resp, 400, "BadRequest",
			    "specifying resource version is not allowed when "
			    "using continue");
			goto out;
		}
		if (!token_decode(cont, &snap_rv, &start_ns, &start_name)) {
			as_resp_error(resp, 400, "BadRequest",
			    "invalid continue token: malformed");
			goto out;
		}
		use_snap = true;
	} else if (rvq != NULL && rvq[0] != '\0' && strcmp(rvq, "0") != 0) {
		bool exact = (match != NULL && strcmp(match, "Exact") == 0) ||
			     ((match == NULL || match[0] == '\0') && limit > 0);

		if (exact) {
			snap_rv = want;
			use_snap = true;
		} else if (want > srv->rv) {
			/* Not-older-than a revision the server has not
			 * reached: wait up to 3 s, then 504. */
			if (cu_time_mono_ns() - rq->first_ns < 3000000000LL) {
				resp->delay = true;
				resp->delay_ms = 100;
				goto out;
			}
			as_resp_status(resp, 504, too_large(want, srv->rv));
			goto out;
		}
	}
	if (rvq != NULL && strcmp(rvq, "0") == 0 && !use_snap)
		limit = 0; /* the watch cache ignores limit for RV=0 */
	if (use_snap && snap_rv <= srv->rv &&
	    snap_rv >= as_store_floor(srv, k) &&
	    !as_store_changed_since(k, snap_rv)) {
		/* Nothing of this kind changed since: the current items are
		 * the snapshot (a relist's pages cost no copy). */
		items = k->items;
		nitems = k->nitems;
	} else if (use_snap) {
		size_t n;
		int rc = snap_rv > srv->rv
			     ? CU_EGONE
			     : as_store_snapshot(srv, k, snap_rv, &snap, &n);

		if (snap_rv > srv->rv && cont == NULL) {
			as_resp_error(resp, 504, "Timeout",
			    "Timeout: Too large resource version: %llu, "
			    "current: %llu",
			    (unsigned long long)snap_rv,
			    (unsigned long long)srv->rv);
			goto out;
		}
		if (rc == CU_EGONE) {
			if (cont != NULL && cont[0] != '\0') {
				json_t *st = as_status(410, "Expired",
				    "The provided continue parameter is too "
				    "old to display a consistent list result. "
				    "You can start a new list without the "
				    "continue parameter, or use the continue "
				    "token in this response to retrieve the "
				    "remainder of the results. Continuing "
				    "with the provided token results in an "
				    "inconsistent list - objects that were "
				    "created, modified, or deleted between the "
				    "time the first chunk was returned and now "
				    "may show up in the list.");
				char *t =
				    token_encode(srv->rv, start_ns, start_name);

				json_object_set_new(
				    json_object_get(st, "metadata"), "continue",
				    json_string(t ? t : ""));
				cu_free(t);
				as_resp_status(resp, 410, st);
			} else {
				as_resp_error(resp, 410, "Expired",
				    "The resourceVersion for the provided "
				    "list is too old.");
			}
			goto out;
		}
		if (rc != CU_OK) {
			as_resp_error(
			    resp, 500, "InternalError", "snapshot failed");
			goto out;
		}
		items = snap;
		nitems = n;
	} else {
		items = k->items;
		nitems = k->nitems;
	}
	selectors = labels.nreqs > 0 || fields.nterms > 0;
	arr = json_array();
	/* Items are sorted by (namespace, name): a page starts by binary
	 * search after its continue key (or at its namespace), not by a scan
	 * from the first item, so a relist is linear, not quadratic. */
	if (start_ns != NULL)
		i = as_store_seek(items, nitems, start_ns, start_name, true);
	else if (r->has_ns)
		i = as_store_seek(items, nitems, r->ns, "", false);
	else
		i = 0;
	for (; i < nitems; i++) {
		const struct as_entry *e = &items[i];
		json_t *o;

		if (r->has_ns && strcmp(e->ns, r->ns) != 0) {
			if (strcmp(e->ns, r->ns) > 0)
				break; /* past the namespace */
			continue;
		}
		if (limit > 0 && count == limit && !selectors) {
			/* The rest of the range is remainingItemCount. */
			has_more = true;
			if (!r->has_ns)
				remaining = nitems - i;
			for (; r->has_ns && i < nitems; i++) {
				if (strcmp(items[i].ns, r->ns) != 0)
					break;
				remaining++;
			}
			break;
		}
		if (!obj_matches(k, e->obj, &labels, &fields))
			continue;
		if (limit > 0 && count == limit) {
			has_more = true; /* no count with selectors, as kube */
			break;
		}
		o = out_object(r, e->obj);
		if (!(k->flags & AS_CUSTOM) && !wants_table(rq)) {
			/* Typed list items carry no TypeMeta. */
			json_t *c = json_copy(o);

			json_decref(o);
			o = c;
			json_object_del(o, "kind");
			json_object_del(o, "apiVersion");
		}
		json_array_append_new(arr, o);
		count++;
		if (limit > 0 && count == limit) {
			cu_free(next_tok);
			next_tok = token_encode(snap_rv, e->ns, e->name);
		}
	}
	if (!has_more) {
		cu_free(next_tok);
		next_tok = NULL;
	}
	rvs = rv_string(snap_rv);
	if (wants_table(rq)) {
		resp_json(resp, 200, table_for(rq, r, arr, rvs, next_tok));
		json_decref(arr);
		goto out;
	}
	{
		char *av = as_kind_api_version(
		    shown(r), r->view ? r->view->version : r->version);

		list = json_pack("{s:s, s:s, s:{s:s}, s:o}", "kind",
		    shown(r)->list_kind, "apiVersion", av, "metadata",
		    "resourceVersion", rvs, "items", arr);
		cu_free(av);
	}
	if (next_tok != NULL) {
		json_t *md = json_object_get(list, "metadata");

		json_object_set_new(md, "continue", json_string(next_tok));
		if (!selectors)
			json_object_set_new(md, "remainingItemCount",
			    json_integer((json_int_t)remaining));
	}
	resp_json(resp, 200, list);
out:
	api_selector_dispose(&labels);
	ns_fieldsel_dispose(&fields);
	cu_free(start_ns);
	cu_free(start_name);
	cu_free(rvs);
	cu_free(next_tok);
	cu_free(snap);
}

static void do_watch(const struct as_request *rq, const struct route *r,
    struct as_resp *resp, api_selector *labels, ns_fieldsel *fields)
{
	struct as_server *srv = rq->srv;
	struct as_kind *k = r->kind;
	const char *rvq = as_query(rq, "resourceVersion");
	const char *ts = as_query(rq, "timeoutSeconds");
	struct as_watch *w = cu_calloc(1, sizeof(*w));
	uint64_t from = 0, tsec = 0;
	double timeout;

	if (w == NULL) {
		api_selector_dispose(labels);
		ns_fieldsel_dispose(fields);
		as_resp_error(resp, 500, "InternalError", "out of memory");
		return;
	}
	w->srv = srv;
	w->kind = k;
	w->labels = *labels;
	w->fields = *fields;
	w->ns = r->has_ns ? cu_strdup(r->ns) : NULL;
	w->api_version = as_kind_api_version(
	    shown(r), r->view ? r->view->version : r->version);
	w->view = r->view;
	if (r->conv_from[0] != '\0') {
		cu_free(w->api_version);
		w->api_version = as_kind_api_version(k, r->conv_from);
		w->convert_to = cu_strdup(r->conv_from);
	}
	w->bookmarks = as_query_bool(rq, "allowWatchBookmarks");
	cu_buf_init(&w->out, (size_t)1 << 30);
	if (ts != NULL && ts[0] != '\0' && parse_u64(ts, &tsec) && tsec > 0)
		timeout = (double)tsec;
	else
		timeout = 1800.0 + (double)(as_rand(srv) % 1800);
	if (rvq == NULL || rvq[0] == '\0' || strcmp(rvq, "0") == 0) {
		size_t i;

		for (i = 0; i < k->nitems; i++) {
			json_t *o = k->items[i].obj;

			if (w->ns != NULL && strcmp(k->items[i].ns, w->ns) != 0)
				continue;
			if (obj_matches(k, o, &w->labels, &w->fields))
				as_watch_queue(w, "ADDED", o, 0);
		}
	} else {
		uint64_t floor;

		parse_u64(rvq, &from);
		floor = as_store_floor(srv, k);
		if (from > srv->rv) {
			/* Still ahead after the wait (the handler's delay):
			 * kube's cacher answers with an ERROR event. */
			json_t *st = too_large(from, srv->rv);

			as_watch_error(w, st);
			json_decref(st);
		} else if (from < floor) {
			char msg[128];
			json_t *st;

			snprintf(msg, sizeof(msg),
			    "too old resource version: %llu (%llu)",
			    (unsigned long long)from,
			    (unsigned long long)floor);
			st = as_status(410, "Expired", msg);
			as_watch_error(w, st);
			json_decref(st);
		} else {
			size_t i;

			for (i = 0; i < k->ring_len; i++) {
				const struct as_event *e =
				    &k->ring[(k->ring_start + i) % k->ring_cap];

				if (e->rv > from)
					as_watch_deliver(w, e);
			}
		}
	}
	as_watch_cache_clear();
	as_watch_attach(w, timeout);
	resp->code = 200;
	resp->watch = w;
}

/* ---- kind-specific preparation ------------------------------------ */

static void job_defaults(json_t *job)
{
	json_t *spec = json_object_get(job, "spec");
	json_t *tmpl_spec;

	if (!json_is_object(spec))
		return;
	if (json_object_get(spec, "parallelism") == NULL)
		json_object_set_new(spec, "parallelism", json_integer(1));
	if (json_object_get(spec, "completions") == NULL &&
	    json_integer_value(json_object_get(spec, "parallelism")) == 1)
		json_object_set_new(spec, "completions", json_integer(1));
	if (json_object_get(spec, "backoffLimit") == NULL)
		json_object_set_new(spec, "backoffLimit", json_integer(6));
	if (json_object_get(spec, "completionMode") == NULL)
		json_object_set_new(
		    spec, "completionMode", json_string("NonIndexed"));
	if (json_object_get(spec, "suspend") == NULL)
		json_object_set_new(spec, "suspend", json_false());
	tmpl_spec = as_jget(spec, "template.spec");
	if (json_is_object(tmpl_spec) &&
	    json_object_get(tmpl_spec, "restartPolicy") == NULL)
		json_object_set_new(
		    tmpl_spec, "restartPolicy", json_string("Never"));
}

/* Remove empty objects (recursively) and nulls from obj. */
static void drop_empty(json_t *obj)
{
	const char *key;
	json_t *v;
	void *tmp;

	json_object_foreach_safe(obj, tmp, key, v)
	{
		if (json_is_object(v))
			drop_empty(v);
		if (json_is_null(v) ||
		    (json_is_object(v) && json_object_size(v) == 0) ||
		    (json_is_array(v) && json_array_size(v) == 0))
			json_object_del(obj, key);
	}
}

/* The pod template of a Job is immutable, except the scheduling
 * directives of a suspended Job that has not started (Kubernetes 1.27+,
 * which Kueue relies on to inject flavor node selectors). */
static bool job_update_ok(
    json_t *old, json_t *new_obj, struct as_resp *resp, const struct as_kind *k)
{
	json_t *ot = as_jget(old, "spec.template");
	json_t *nt = as_jget(new_obj, "spec.template");
	json_t *a, *b;
	bool eq, mutable_ok;
	static const char *const sched[] = {"spec.nodeSelector",
	    "spec.tolerations", "spec.affinity", "spec.schedulingGates",
	    "metadata.labels", "metadata.annotations", NULL};
	size_t i;

	if (json_equal(ot, nt))
		return true;
	mutable_ok = json_is_true(as_jget(old, "spec.suspend")) &&
		     as_jget(old, "status.startTime") == NULL;
	a = json_deep_copy(ot);
	b = json_deep_copy(nt);
	if (mutable_ok) {
		for (i = 0; sched[i] != NULL; i++) {
			const char *dot = strchr(sched[i], '.');
			char parent[32];

			snprintf(parent, sizeof(parent), "%.*s",
			    (int)(dot - sched[i]), sched[i]);
			json_object_del(json_object_get(a, parent), dot + 1);
			json_object_del(json_object_get(b, parent), dot + 1);
		}
	}
	/* Typed objects compare an empty struct or map equal to an absent
	 * one ({"metadata":{}} == no metadata). */
	drop_empty(a);
	drop_empty(b);
	eq = json_equal(a, b);
	json_decref(a);
	json_decref(b);
	if (!eq) {
		as_resp_invalid(resp, k, md_str(new_obj, "name"),
		    "spec.template", "Invalid value: field is immutable");
		return false;
	}
	return true;
}

/* Namespace must exist and not be terminating. */
static bool namespace_ok(
    struct as_server *srv, const char *ns, struct as_resp *resp)
{
	struct as_kind *nk = as_kind_find(srv, "", "v1", "namespaces");
	json_t *n = nk ? as_store_get(nk, "", ns) : NULL;

	if (n == NULL) {
		as_resp_not_found(resp, nk, ns);
		return false;
	}
	if (md_str(n, "deletionTimestamp") != NULL) {
		json_t *st;
		char msg[512];

		snprintf(msg, sizeof(msg),
		    "unable to create new content in namespace %s because it "
		    "is being terminated",
		    ns);
		st = as_status(403, "Forbidden", msg);
		json_object_set_new(st, "details",
		    json_pack("{s:s, s:s, s:[{s:s, s:s, s:s}]}", "name", ns,
			"kind", "namespaces", "causes", "reason",
			"NamespaceTerminating", "message", msg, "field",
			"metadata.namespace"));
		as_resp_status(resp, 403, st);
		return false;
	}
	return true;
}

static bool lease_ok(json_t *obj, struct as_resp *resp, const struct as_kind *k)
{
	json_t *d = as_jget(obj, "spec.leaseDurationSeconds");
	json_t *t = as_jget(obj, "spec.leaseTransitions");

	if (d != NULL && !json_is_null(d) && json_integer_value(d) <= 0) {
		as_resp_invalid(resp, k, md_str(obj, "name"),
		    "spec.leaseDurationSeconds",
		    "Invalid value: %lld: must be greater than 0",
		    (long long)json_integer_value(d));
		return false;
	}
	if (t != NULL && !json_is_null(t) && json_integer_value(t) < 0) {
		as_resp_invalid(resp, k, md_str(obj, "name"),
		    "spec.leaseTransitions",
		    "Invalid value: %lld: must be greater than or equal to 0",
		    (long long)json_integer_value(t));
		return false;
	}
	return true;
}

/* Kind-specific checks and server-side fields before a write. */
static bool prepare_kind(const struct as_request *rq, const struct route *r,
    json_t *obj, json_t *old, struct as_resp *resp, json_t *unknown)
{
	struct as_kind *k = r->kind;

	if (k->group[0] == '\0' && strcmp(k->plural, "namespaces") == 0) {
		json_t *labels = json_object_get(md_of(obj), "labels");

		if (!json_is_object(labels)) {
			labels = json_object();
			json_object_set_new(md_of(obj), "labels", labels);
		}
		json_object_set_new(labels, "kubernetes.io/metadata.name",
		    json_string(md_str(obj, "name")));
		if (old == NULL) {
			json_object_set_new(obj, "spec",
			    json_pack("{s:[s]}", "finalizers", "kubernetes"));
			json_object_set_new(obj, "status",
			    json_pack("{s:s}", "phase", "Active"));
		}
	}
	if (strcmp(k->group, "batch") == 0 && strcmp(k->plural, "jobs") == 0) {
		job_defaults(obj);
		if (old == NULL)
			as_sim_job_selector(rq->srv, obj);
		if (old != NULL && !job_update_ok(old, obj, resp, k))
			return false;
	}
	if (!as_pod_resources_ok(k, obj, md_str(obj, "name"), resp))
		return false;
	if (strcmp(k->group, "coordination.k8s.io") == 0 &&
	    !lease_ok(obj, resp, k))
		return false;
	if (strcmp(k->group, "apiextensions.k8s.io") == 0) {
		cu_error err;

		if (as_crd_prepare(obj, &err) != CU_OK) {
			const char *colon = strchr(err.msg, ':');
			char field[128];

			snprintf(field, sizeof(field), "%.*s",
			    colon ? (int)(colon - err.msg) : 0, err.msg);
			as_resp_invalid(resp, k, md_str(obj, "name"), field,
			    "%s", colon ? colon + 2 : err.msg);
			return false;
		}
	}
	if (strcmp(k->group, "events.k8s.io") == 0 && old == NULL) {
		if (json_object_get(obj, "eventTime") == NULL ||
		    json_is_null(json_object_get(obj, "eventTime"))) {
			as_resp_invalid(resp, k, md_str(obj, "name"),
			    "eventTime", "Required value");
			return false;
		}
	}
	if (strcmp(k->group, "admissionregistration.k8s.io") == 0 &&
	    !as_webhook_config_prepare(k, obj, resp))
		return false;
	if (strcmp(k->group, "apiregistration.k8s.io") == 0 &&
	    !as_apiservice_prepare(k, obj, resp))
		return false;
	if (k->flags & AS_CUSTOM || k->top_fields != NULL)
		as_schema_apply(k, obj, unknown);
	return unknown == NULL || check_unknown(rq, r, unknown, resp);
}

/* ---- admission ------------------------------------------------------ */

/* The *Options object a webhook sees for this request [owned]. */
static json_t *write_options(
    const struct as_request *rq, const char *kind, bool dry)
{
	json_t *o = json_pack(
	    "{s:s, s:s}", "kind", kind, "apiVersion", "meta.k8s.io/v1");
	const char *fm = as_query(rq, "fieldManager");
	const char *fv = as_query(rq, "fieldValidation");

	if (dry)
		json_object_set_new(o, "dryRun", json_pack("[s]", "All"));
	if (fm != NULL && fm[0] != '\0')
		json_object_set_new(o, "fieldManager", json_string(fm));
	if (fv != NULL && fv[0] != '\0')
		json_object_set_new(o, "fieldValidation", json_string(fv));
	return o;
}

static void admit_attrs(struct as_admit_attrs *at, const struct route *r,
    const char *op, json_t *obj, json_t *old, json_t *options, bool dry)
{
	const char *name = r->has_name ? r->name : md_str(obj, "name");

	memset(at, 0, sizeof(*at));
	at->kind = r->kind;
	at->version = r->version;
	at->subresource = r->has_sub ? r->sub : "";
	at->operation = op;
	if (r->kind->flags & AS_NAMESPACED)
		at->ns = r->ns;
	else if (r->kind->group[0] == '\0' &&
		 strcmp(r->kind->plural, "namespaces") == 0 && r->has_name)
		at->ns = r->name; /* the request path's namespace */
	else
		at->ns = "";
	at->name = name ? name : "";
	at->object = obj;
	at->old = old;
	at->options = options;
	at->dry_run = dry;
}

/* What the decoder does before admission: defaults and pruning, with the
 * request's unknown fields reported (Strict fails here). */
static bool decode_defaults(const struct as_request *rq, const struct route *r,
    json_t *obj, json_t *unknown, struct as_resp *resp)
{
	struct as_kind *k = r->kind;

	if (strcmp(k->group, "batch") == 0 && strcmp(k->plural, "jobs") == 0)
		job_defaults(obj);
	if (k->flags & AS_CUSTOM || k->top_fields != NULL)
		as_schema_apply(k, obj, unknown);
	return check_unknown(rq, r, unknown, resp);
}

/* Mutating then validating admission of a DELETE of `old`. */
static bool admit_delete(const struct as_request *rq, const struct route *r,
    const char *ns, const char *name, json_t *old, json_t *opts,
    struct as_resp *resp)
{
	struct as_admit_attrs at;
	struct route one = *r;
	json_t *options = json_copy(opts), *none = NULL;
	bool ok;

	if (options == NULL) {
		as_resp_error(resp, 500, "InternalError", "out of memory");
		return false;
	}
	json_object_del(options, "dry");
	json_object_set_new(options, "kind", json_string("DeleteOptions"));
	json_object_set_new(
	    options, "apiVersion", json_string("meta.k8s.io/v1"));
	snprintf(one.ns, sizeof(one.ns), "%s", ns);
	snprintf(one.name, sizeof(one.name), "%s", name);
	one.has_name = true;
	admit_attrs(&at, &one, "DELETE", NULL, old, options,
	    json_is_true(json_object_get(opts, "dry")));
	ok = as_admit_mutate(rq, &at, &none, resp) &&
	     as_admit_validate(rq, &at, resp);
	json_decref(none);
	json_decref(options);
	return ok;
}

/* ---- field managers (apply.c) ------------------------------------- */

static bool is_apply_type(const char *mt)
{
	return mt != NULL &&
	       (strcmp(mt, "application/apply-patch+yaml") == 0 ||
		   strcmp(mt, "application/apply-patch+json") == 0);
}

/* Whether the request is a server-side apply (PATCH of an apply type). */
static bool is_apply(const struct as_request *rq)
{
	char *mt = media_type(as_header(rq, "Content-Type"));
	bool yes = is_apply_type(mt);

	cu_free(mt);
	return yes && rq->method != NULL && strcmp(rq->method, "PATCH") == 0;
}

/* The request's field manager: the fieldManager parameter, else the user
 * agent up to its first '/' (kube's default), at most 128 bytes. */
static void field_manager(const struct as_request *rq, char out[129])
{
	const char *fm = as_query(rq, "fieldManager");
	size_t n;

	if (fm == NULL || fm[0] == '\0') {
		fm = as_header(rq, "User-Agent");
		if (fm == NULL)
			fm = "";
		n = strcspn(fm, "/");
	} else {
		n = strlen(fm);
	}
	if (n > 128)
		n = 128;
	memcpy(out, fm, n);
	out[n] = '\0';
}

static void apply_type(const struct as_kind *k, struct as_apply_type *t)
{
	t->schema = (k->flags & AS_CUSTOM) ? k->schema : NULL;
	t->kind = k->kind;
}

/* The manager of this request, for managedFields. *api_version [owned:
 * cu_free]. */
static void request_manager(const struct as_request *rq, const struct route *r,
    struct as_manager *m, char name[129], char now[CU_TIME_RFC3339_LEN],
    char **api_version)
{
	field_manager(rq, name);
	as_now_rfc3339(now);
	*api_version = as_kind_api_version(
	    r->kind, r->conv_from[0] != '\0' ? r->conv_from : r->version);
	m->manager = name;
	m->api_version = *api_version ? *api_version : "";
	m->time = now;
	m->force = as_query_bool(rq, "force");
	m->subresource =
	    r->has_sub && strcmp(r->sub, "status") == 0 ? "status" : NULL;
}

/* Record the write of obj (old: NULL for a create) as an Update by the
 * request's manager. */
static void track_update(const struct as_request *rq, const struct route *r,
    json_t *old, json_t *obj)
{
	struct as_apply_type t;
	struct as_manager m;
	char name[129], now[CU_TIME_RFC3339_LEN], *av = NULL;

	apply_type(r->kind, &t);
	request_manager(rq, r, &m, name, now, &av);
	if (as_apply_track_update(&t, old, obj, &m) != CU_OK)
		json_object_del(md_of(obj), "managedFields");
	cu_free(av);
}

/* ---- create -------------------------------------------------------- */

static void stamp_new(
    struct as_server *srv, const struct as_kind *k, json_t *obj)
{
	json_t *md = md_of(obj);
	char now[CU_TIME_RFC3339_LEN];
	char *uid = as_uuid(srv);

	as_now_rfc3339(now);
	json_object_set_new(md, "uid", json_string(uid ? uid : ""));
	cu_free(uid);
	json_object_set_new(md, "creationTimestamp", json_string(now));
	json_object_del(md, "deletionTimestamp");
	json_object_del(md, "deletionGracePeriodSeconds");
	json_object_del(md, "selfLink");
	json_object_del(md, "managedFields");
	json_object_del(md, "resourceVersion");
	if (k->flags & AS_GENERATION)
		json_object_set_new(md, "generation", json_integer(1));
	else
		json_object_del(md, "generation");
	/* Nodes, like Namespaces and CRDs, keep the status they are created
	 * with (the Node strategy allows it; kubelets register that way). */
	if ((k->flags & AS_STATUS) && strcmp(k->plural, "namespaces") != 0 &&
	    strcmp(k->plural, "nodes") != 0 &&
	    strcmp(k->plural, "customresourcedefinitions") != 0)
		json_object_del(obj, "status");
	/* A new Pod is Pending (the Pod strategy); only with the scheduler
	 * stand-in, so that other tests see the objects they always did. */
	if ((srv->sim_sched || (srv->sim_fw & AS_SIM_PODS)) &&
	    k->group[0] == '\0' && strcmp(k->plural, "pods") == 0)
		json_object_set_new(
		    obj, "status", json_pack("{s:s}", "phase", "Pending"));
}

/* The uid of a new object stays the same on every re-run of a request
 * that waits for webhooks (which saw it). */
static void stamp_stable(const struct as_request *rq, json_t *obj)
{
	json_t *md = md_of(obj);
	const char *uid = as_admit_memo(rq, "uid", md_str(obj, "uid"));

	if (uid != NULL)
		json_object_set_new(md, "uid", json_string(uid));
}

/* Register a CRD's kind if obj is one, store obj and answer with it. */
static void store_and_answer(struct as_server *srv, const struct route *r,
    const char *name, json_t *obj, int code, struct as_resp *resp)
{
	struct as_kind *k = r->kind;
	cu_error err;

	if (strcmp(k->group, "apiextensions.k8s.io") == 0 &&
	    as_crd_register(srv, obj, &err) != CU_OK) {
		as_resp_error(resp, 500, "InternalError", "%s", err.msg);
		return;
	}
	json_incref(obj);
	if (as_store_put(srv, k, r->ns, name, obj) != CU_OK) {
		as_resp_error(resp, 500, "InternalError", "out of memory");
		return;
	}
	resp_json(resp, code, out_object(r, obj));
}

/* Add the metadata.generateName cause when the prefix itself is what
 * made the generated name invalid (ValidateObjectMeta's prefix mode). */
static void check_generate_name(const char *gen, struct as_resp *resp)
{
	char buf[254];
	size_t n = strlen(gen);

	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	memcpy(buf, gen, n);
	buf[n] = '\0';
	/* A trailing dash is fine in a prefix. */
	if (n > 0 && buf[n - 1] == '-')
		buf[n - 1] = 'a';
	if (as_valid_dns_subdomain(buf))
		return;
	as_resp_invalid_add(resp, "metadata.generateName",
	    "Invalid value: \"%s\": a lowercase RFC 1123 subdomain must "
	    "consist of lower case alphanumeric characters, '-' or '.', and "
	    "must start and end with an alphanumeric character",
	    gen);
}

static void create_obj(const struct as_request *rq, const struct route *r,
    json_t *obj_in, struct as_resp *resp)
{
	struct as_server *srv = rq->srv;
	struct as_kind *k = r->kind;
	json_t *md, *unknown = json_array(), *obj = json_incref(obj_in);
	json_t *options = NULL;
	const char *name, *gen, *ns;
	bool bad, dry = is_dry_run(rq, resp, &bad), decoded = false;
	char *gen_name = NULL;
	struct as_admit_attrs at;
	json_t *applied = NULL;

	if (bad || !types_ok(k, obj, resp))
		goto out;
	md = md_of(obj);
	if (is_apply(rq))
		applied = json_incref(json_object_get(md, "managedFields"));
	if (k->flags & AS_NAMESPACED) {
		ns = md_str(obj, "namespace");
		if (ns != NULL && ns[0] != '\0' && strcmp(ns, r->ns) != 0) {
			as_resp_error(resp, 400, "BadRequest",
			    "the namespace of the provided object does not "
			    "match the namespace sent on the request");
			goto out;
		}
		json_object_set_new(md, "namespace", json_string(r->ns));
		if (!namespace_ok(srv, r->ns, resp))
			goto out;
	} else {
		json_object_del(md, "namespace");
	}
	/* Mutating admission sees the decoded (defaulted) object. */
	options = write_options(rq, "CreateOptions", dry);
	admit_attrs(&at, r, "CREATE", obj, NULL, options, dry);
	at.name = md_str(obj, "name") ? md_str(obj, "name") : "";
	if (as_admit_mutating_matches(rq, &at)) {
		if (!decode_defaults(rq, r, obj, unknown, resp))
			goto out;
		decoded = true;
	}
	if (!as_admit_mutate(rq, &at, &obj, resp))
		goto out;
	md = md_of(obj);
	if (k->flags & AS_NAMESPACED) {
		ns = md_str(obj, "namespace");
		if (ns == NULL || strcmp(ns, r->ns) != 0) {
			as_resp_error(resp, 400, "BadRequest",
			    "the namespace of the provided object does not "
			    "match the namespace sent on the request");
			goto out;
		}
	}
	name = md_str(obj, "name");
	gen = md_str(obj, "generateName");
	if ((name == NULL || name[0] == '\0') && gen != NULL &&
	    gen[0] != '\0') {
		static const char alnum[] = "bcdfghjklmnpqrstvwxz2456789";
		char suffix[6];
		int i;

		for (i = 0; i < 5; i++)
			suffix[i] = alnum[as_rand(srv) % (sizeof(alnum) - 1)];
		suffix[5] = '\0';
		gen_name = cu_asprintf("%.58s%s", gen, suffix);
		if (gen_name != NULL) {
			const char *pinned =
			    as_admit_memo(rq, "generateName", gen_name);
			char *copy = cu_strdup(pinned);

			cu_free(gen_name);
			gen_name = copy;
		}
		json_object_set_new(md, "name", json_string(gen_name));
		name = md_str(obj, "name");
		if (as_store_get(k, r->ns, name) != NULL) {
			char *qr = as_qualified_resource(k);

			as_resp_error(resp, 500, "ServerTimeout",
			    "The POST operation against %s could not be "
			    "completed at this time, please try again.",
			    qr ? qr : "");
			cu_free(qr);
			goto out;
		}
	}
	if (name == NULL || name[0] == '\0') {
		as_resp_invalid(resp, k, "", "metadata.name",
		    "Required value: name or generateName is required");
		goto out;
	}
	if (md_str(obj, "resourceVersion") != NULL &&
	    md_str(obj, "resourceVersion")[0] != '\0') {
		as_resp_error(resp, 500, "InternalError",
		    "Internal error occurred: resourceVersion should not be "
		    "set on objects to be created");
		goto out;
	}
	if (!validate_meta(k, obj, resp)) {
		if (gen_name != NULL && resp->code == 422)
			check_generate_name(gen, resp);
		goto out;
	}
	if (as_store_get(k, r->ns, name) != NULL) {
		json_t *old = as_store_get(k, r->ns, name);
		char *qr = as_qualified_resource(k);
		json_t *st;
		char msg[600];

		snprintf(msg, sizeof(msg), "%s%s \"%s\" already exists",
		    md_str(old, "deletionTimestamp")
			? "object is being deleted: "
			: "",
		    qr ? qr : "", name);
		st = as_status(409, "AlreadyExists", msg);
		json_object_set_new(st, "details",
		    json_pack("{s:s, s:s, s:s}", "name", name, "group",
			k->group, "kind", k->plural));
		if (k->group[0] == '\0')
			json_object_del(
			    json_object_get(st, "details"), "group");
		as_resp_status(resp, 409, st);
		cu_free(qr);
		goto out;
	}
	stamp_new(srv, k, obj);
	stamp_stable(rq, obj);
	if (!prepare_kind(rq, r, obj, NULL, resp, decoded ? NULL : unknown) ||
	    !schema_ok(k, obj, NULL, resp))
		goto out;
	if (applied != NULL)
		json_object_set(md_of(obj), "managedFields", applied);
	else
		track_update(rq, r, NULL, obj);
	at.object = obj;
	at.name = name;
	if (!as_admit_validate(rq, &at, resp))
		goto out;
	if (dry) {
		resp_json(resp, 201, out_object(r, obj));
		goto out;
	}
	store_and_answer(srv, r, name, obj, 201, resp);
out:
	json_decref(applied);
	json_decref(unknown);
	json_decref(options);
	json_decref(obj);
	cu_free(gen_name);
}

/* ---- update (PUT and the tail of PATCH) ---------------------------- */

/* Store `obj` as the new state of the existing `old` (or create it when
 * the kind allows create-on-update). `check_rv`: the request carried the
 * object's resourceVersion as a precondition (PUT) or may (PATCH). */
static void update_obj(const struct as_request *rq, const struct route *r,
    json_t *obj, json_t *old, bool is_patch, struct as_resp *resp)
{
	struct as_server *srv = rq->srv;
	struct as_kind *k = r->kind;
	json_t *md, *omd, *unknown = json_array(), *merged = NULL;
	json_t *mutated = NULL, *options = NULL, *applied = NULL;
	const char *rv, *ns, *uid;
	bool bad, dry = is_dry_run(rq, resp, &bad), decoded = false;
	bool status_sub = r->has_sub && strcmp(r->sub, "status") == 0;
	bool finalize_sub = r->has_sub && strcmp(r->sub, "finalize") == 0;
	struct as_admit_attrs at;

	if (bad || !types_ok(k, obj, resp))
		goto out;
	md = md_of(obj);
	rv = md_str(obj, "resourceVersion");
	ns = md_str(obj, "namespace");
	uid = md_str(obj, "uid");
	if (md_str(obj, "name") != NULL &&
	    strcmp(md_str(obj, "name"), r->name) != 0) {
		as_resp_error(resp, 400, "BadRequest",
		    "the name of the object (%s) does not match the name on "
		    "the URL (%s)",
		    md_str(obj, "name"), r->name);
		goto out;
	}
	json_object_set_new(md, "name", json_string(r->name));
	if (k->flags & AS_NAMESPACED) {
		if (ns != NULL && ns[0] != '\0' && strcmp(ns, r->ns) != 0) {
			as_resp_error(resp, 400, "BadRequest",
			    "the namespace of the provided object does not "
			    "match the namespace sent on the request");
			goto out;
		}
		json_object_set_new(md, "namespace", json_string(r->ns));
	} else {
		json_object_del(md, "namespace");
	}
	if (old == NULL) {
		if (!(k->flags & AS_CREATE_ON_UPDATE) || r->has_sub) {
			as_resp_not_found(resp, k, r->name);
			goto out;
		}
		json_object_del(md, "resourceVersion");
		json_decref(unknown);
		unknown = NULL;
		create_obj(rq, r, obj, resp);
		goto out;
	}
	/* Mutating admission sees the decoded object (before the
	 * resourceVersion precondition and the strategy's preparation). */
	options = write_options(rq, "UpdateOptions", dry);
	admit_attrs(&at, r, "UPDATE", obj, old, options, dry);
	if (as_admit_mutating_matches(rq, &at)) {
		if (!decode_defaults(rq, r, obj, unknown, resp))
			goto out;
		decoded = true;
	}
	mutated = json_incref(obj);
	if (!as_admit_mutate(rq, &at, &mutated, resp))
		goto out;
	if (mutated != obj) {
		obj = mutated;
		md = md_of(obj);
		if (md_str(obj, "name") == NULL ||
		    strcmp(md_str(obj, "name"), r->name) != 0) {
			as_resp_invalid(resp, k, r->name, "metadata.name",
			    "Invalid value: \"%s\": field is immutable",
			    md_str(obj, "name") ? md_str(obj, "name") : "");
			goto out;
		}
		if ((k->flags & AS_NAMESPACED) &&
		    (md_str(obj, "namespace") == NULL ||
			strcmp(md_str(obj, "namespace"), r->ns) != 0)) {
			as_resp_invalid(resp, k, r->name, "metadata.namespace",
			    "Invalid value: \"%s\": field is immutable",
			    md_str(obj, "namespace") ? md_str(obj, "namespace")
						     : "");
			goto out;
		}
		rv = md_str(obj, "resourceVersion");
		uid = md_str(obj, "uid");
	}
	omd = json_object_get(old, "metadata");
	if (rv == NULL || rv[0] == '\0') {
		if (!is_patch && !(k->flags & AS_UNCONDITIONAL_UPDATE)) {
			as_resp_invalid(resp, k, r->name,
			    "metadata.resourceVersion",
			    "Invalid value: 0x0: must be specified for an "
			    "update");
			goto out;
		}
	} else if (strcmp(rv, md_str(old, "resourceVersion")) != 0) {
		char *qr = as_qualified_resource(k);
		json_t *st;
		char msg[700];

		snprintf(msg, sizeof(msg),
		    "Operation cannot be fulfilled on %s \"%s\": the object "
		    "has been modified; please apply your changes to the "
		    "latest version and try again",
		    qr ? qr : "", r->name);
		st = as_status(409, "Conflict", msg);
		json_object_set_new(st, "details",
		    json_pack("{s:s, s:s, s:s}", "name", r->name, "group",
			k->group, "kind", k->plural));
		if (k->group[0] == '\0')
			json_object_del(
			    json_object_get(st, "details"), "group");
		as_resp_status(resp, 409, st);
		cu_free(qr);
		goto out;
	}
	if (uid != NULL && uid[0] != '\0' &&
	    strcmp(uid, md_str(old, "uid")) != 0) {
		if (is_patch) {
			as_resp_error(resp, 409, "Conflict",
			    "Precondition failed: UID in precondition: %s, "
			    "UID in object meta: %s",
			    uid, md_str(old, "uid"));
		} else {
			as_resp_invalid(resp, k, r->name, "metadata.uid",
			    "Invalid value: \"%s\": field is immutable", uid);
		}
		goto out;
	}
	if (status_sub || finalize_sub) {
		/* Only status (or spec.finalizers) is taken from the
		 * request; everything else stays as stored. */
		merged = json_deep_copy(old);
		if (status_sub) {
			json_t *st = json_object_get(obj, "status");

			if (st != NULL)
				json_object_set(merged, "status", st);
			else
				json_object_del(merged, "status");
		} else {
			json_t *fin = as_jget(obj, "spec.finalizers");

			as_jset(merged, "spec.finalizers",
			    fin ? json_incref(fin) : json_array());
		}
		obj = merged;
		md = md_of(obj);
	} else {
		/* Server-owned metadata is restored, not rejected. */
		static const char *const keep[] = {"uid", "creationTimestamp",
		    "deletionTimestamp", "deletionGracePeriodSeconds",
		    "generation", NULL};
		size_t i;

		for (i = 0; keep[i] != NULL; i++) {
			json_t *v = json_object_get(omd, keep[i]);

			if (v != NULL)
				json_object_set(md, keep[i], v);
			else
				json_object_del(md, keep[i]);
		}
		if (is_apply(rq))
			applied =
			    json_incref(json_object_get(md, "managedFields"));
		json_object_del(md, "managedFields");
		json_object_del(md, "selfLink");
		if (k->flags & AS_STATUS) {
			json_t *st = json_object_get(old, "status");

			if (st != NULL)
				json_object_set(obj, "status", st);
			else
				json_object_del(obj, "status");
		}
		if (!check_gvk(r, obj, resp) || !validate_meta(k, obj, resp))
			goto out;
		/* No new finalizers once deletion started. */
		if (json_object_get(omd, "deletionTimestamp") != NULL) {
			json_t *nf = json_object_get(md, "finalizers");
			json_t *of = json_object_get(omd, "finalizers");
			size_t i2, j;
			json_t *f, *g;

			json_array_foreach(nf, i2, f)
			{
				bool found = false;

				json_array_foreach(of, j, g)
				{
					if (json_equal(f, g))
						found = true;
				}
				if (!found) {
					as_resp_invalid(resp, k, r->name,
					    "metadata.finalizers",
					    "Forbidden: no new finalizers can "
					    "be added if the object is being "
					    "deleted, found new finalizers "
					    "[\"%s\"]",
					    json_string_value(f));
					goto out;
				}
			}
		}
		if (!prepare_kind(
			rq, r, obj, old, resp, decoded ? NULL : unknown))
			goto out;
		if ((k->flags & AS_GENERATION) && spec_changed(k, old, obj)) {
			json_int_t g = json_integer_value(
			    json_object_get(omd, "generation"));

			json_object_set_new(
			    md, "generation", json_integer(g + 1));
		}
	}
	json_object_set(
	    md, "resourceVersion", json_object_get(omd, "resourceVersion"));
	if (!schema_ok(k, obj, old, resp))
		goto out;
	if (applied != NULL)
		json_object_set(md_of(obj), "managedFields", applied);
	else if (!finalize_sub)
		track_update(rq, r, old, obj);
	at.object = obj;
	if (!as_admit_validate(rq, &at, resp))
		goto out;
	if (same_object(obj, old)) {
		/* No-op write: no new revision, no event. */
		resp_json(resp, 200, out_object(r, old));
		goto out;
	}
	if (dry) {
		resp_json(resp, 200, out_object(r, obj));
		goto out;
	}
	if (json_object_get(md, "deletionTimestamp") != NULL &&
	    json_array_size(json_object_get(md, "finalizers")) == 0 &&
	    strcmp(k->plural, "namespaces") != 0) {
		/* Removing the last finalizer completes the deletion; the
		 * answer carries the deletion's revision, as the DELETED
		 * event does (etcd3 store's conditionalDelete). */
		json_t *gone = json_deep_copy(obj);
		char grv[32];

		if (strcmp(k->group, "apiextensions.k8s.io") == 0)
			as_crd_unregister(srv, old);
		as_store_remove(srv, k, r->ns, r->name);
		snprintf(grv, sizeof(grv), "%llu", (unsigned long long)srv->rv);
		if (gone != NULL)
			json_object_set_new(json_object_get(gone, "metadata"),
			    "resourceVersion", json_string(grv));
		resp_json(resp, 200, out_object(r, gone ? gone : obj));
		json_decref(gone);
		goto out;
	}
	store_and_answer(srv, r, r->name, obj, 200, resp);
out:
	json_decref(applied);
	json_decref(unknown);
	json_decref(merged);
	json_decref(mutated);
	json_decref(options);
}

/* ---- patch --------------------------------------------------------- */

/* Server-side apply (apply.c): merge the applied configuration into the
 * object as the client sees it, or create it. */
static void do_apply(const struct as_request *rq, const struct route *r,
    json_t *old, struct as_resp *resp)
{
	struct as_kind *k = r->kind;
	struct as_apply_type t;
	struct as_manager m;
	char name[129], now[CU_TIME_RFC3339_LEN], *av = NULL;
	json_t *cfg = NULL, *base = NULL, *result = NULL, *conflict = NULL;
	const char *fm = as_query(rq, "fieldManager");
	cu_error err;
	int rc;

	if (fm == NULL || fm[0] == '\0') {
		as_resp_error(resp, 422, "Invalid",
		    "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: "
		    "Required value: is required for apply patch");
		return;
	}
	if (api_yaml_load(&cfg, NULL, rq->body ? rq->body : "", rq->body_len,
		NULL, &err) != CU_OK) {
		as_resp_error(resp, 400, "BadRequest",
		    "error decoding YAML: %s", err.msg);
		return;
	}
	if (!json_is_object(cfg)) {
		as_resp_error(resp, 400, "BadRequest",
		    "error decoding YAML: the applied configuration is not an "
		    "object");
		goto out;
	}
	if (r->conv_from[0] == '\0' && r->view == NULL &&
	    !check_gvk(r, cfg, resp))
		goto out;
	/* The URL names the object (kube takes the name from it). */
	if (md_str(cfg, "name") == NULL)
		json_object_set_new(md_of(cfg), "name", json_string(r->name));
	if (old != NULL) {
		base = r->conv_from[0] != '\0'
			   ? as_convert(rq->srv, k, old, r->conv_from, resp)
			   : out_object(r, old);
		if (base == NULL)
			goto out;
	}
	apply_type(k, &t);
	request_manager(rq, r, &m, name, now, &av);
	rc = as_apply(&t, base, cfg, &m, &result, &conflict, &err);
	if (rc == CU_ECONFLICT) {
		as_resp_status(resp, 409, conflict);
		conflict = NULL;
		goto out;
	}
	if (rc == CU_EPARSE) {
		as_resp_error(resp, 400, "BadRequest", "%s", err.msg);
		goto out;
	}
	if (rc != CU_OK) {
		as_resp_invalid(resp, k, r->name, "patch", "%s", err.msg);
		goto out;
	}
	if ((r->conv_from[0] != '\0' &&
		!as_convert_in(rq->srv, k, r->conv_from, &result, resp)) ||
	    !view_in(r, &result, old == NULL, resp))
		goto out;
	if (old == NULL)
		create_obj(rq, r, result, resp);
	else
		update_obj(rq, r, result, old, true, resp);
out:
	cu_free(av);
	json_decref(conflict);
	json_decref(result);
	json_decref(base);
	json_decref(cfg);
}

static void do_patch(
    const struct as_request *rq, const struct route *r, struct as_resp *resp)
{
	struct as_kind *k = r->kind;
	json_t *old = as_store_get(k, r->ns, r->name), *patch = NULL,
	       *result = NULL, *base;
	char *mt = media_type(as_header(rq, "Content-Type"));
	json_error_t jerr;
	cu_error err;
	int rc;

	if (mt == NULL) {
		as_resp_error(resp, 500, "InternalError", "out of memory");
		return;
	}
	if (is_apply_type(mt)) {
		do_apply(rq, r, old, resp);
		goto out;
	}
	if (strcmp(mt, "application/json-patch+json") != 0 &&
	    strcmp(mt, "application/merge-patch+json") != 0 &&
	    (strcmp(mt, "application/strategic-merge-patch+json") != 0 ||
		(k->flags & AS_CUSTOM))) {
		as_resp_error(resp, 415, "UnsupportedMediaType",
		    "the body of the request was in an unknown format - "
		    "accepted media types include: "
		    "application/json-patch+json, "
		    "application/merge-patch+json, "
		    "application/apply-patch+yaml%s",
		    (k->flags & AS_CUSTOM)
			? ""
			: ", application/strategic-merge-patch+json");
		goto out;
	}
	if (old == NULL) {
		as_resp_not_found(resp, k, r->name);
		goto out;
	}
	patch = json_loadb(rq->body, rq->body_len, JSON_DECODE_ANY, &jerr);
	if (patch == NULL) {
		as_resp_error(resp, 400, "BadRequest",
		    "error decoding patch: %s", jerr.text);
		goto out;
	}
	/* Patch the object as the client sees it (its version). */
	base = r->conv_from[0] != '\0'
		   ? as_convert(rq->srv, k, old, r->conv_from, resp)
		   : out_object(r, old);
	if (base == NULL)
		goto out;
	if (strcmp(mt, "application/json-patch+json") == 0)
		rc = api_json_patch_apply(&result, base, patch, &err);
	else if (strcmp(mt, "application/merge-patch+json") == 0)
		rc = api_merge_patch_apply(&result, base, patch, &err);
	else
		rc = api_smp_apply(&result, base, patch,
		    api_smp_schema_for(k->group, k->kind), &err);
	json_decref(base);
	if (rc == CU_EPARSE) {
		as_resp_error(resp, 400, "BadRequest", "%s", err.msg);
		goto out;
	}
	if (rc != CU_OK) {
		as_resp_invalid(resp, k, r->name, "patch", "%s", err.msg);
		goto out;
	}
	if (!json_is_object(result)) {
		as_resp_error(resp, 400, "BadRequest",
		    "the patch result is not an object");
		goto out;
	}
	/* A resourceVersion the patch did not set is the current one: a
	 * patch only conflicts when it carries a stale precondition. */
	if (md_str(result, "resourceVersion") != NULL &&
	    md_str(old, "resourceVersion") != NULL &&
	    json_object_get(
		json_object_get(patch, "metadata"), "resourceVersion") == NULL)
		json_object_set(md_of(result), "resourceVersion",
		    json_object_get(
			json_object_get(old, "metadata"), "resourceVersion"));
	if ((r->conv_from[0] != '\0' &&
		!as_convert_in(rq->srv, k, r->conv_from, &result, resp)) ||
	    !view_in(r, &result, false, resp))
		goto out;
	update_obj(rq, r, result, old, true, resp);
out:
	json_decref(patch);
	json_decref(result);
	cu_free(mt);
}

/* ---- delete -------------------------------------------------------- */

static void delete_one(const struct as_request *rq, const struct route *r,
    const char *ns, const char *name, json_t *opts, struct as_resp *resp,
    json_t **deleted)
{
	struct as_server *srv = rq->srv;
	struct as_kind *k = r->kind;
	json_t *old = as_store_get(k, ns, name), *obj, *md, *fin;
	const char *policy = as_jstr(opts, "propagationPolicy");
	const char *pre_uid = as_jstr(opts, "preconditions.uid");
	const char *pre_rv = as_jstr(opts, "preconditions.resourceVersion");
	bool dry = json_is_true(json_object_get(opts, "dry"));
	json_t *orphan = json_object_get(opts, "orphanDependents");
	char now[CU_TIME_RFC3339_LEN];

	if (old == NULL) {
		as_resp_not_found(resp, k, name);
		return;
	}
	if (pre_uid != NULL && strcmp(pre_uid, md_str(old, "uid")) != 0) {
		as_resp_error(resp, 409, "Conflict",
		    "Operation cannot be fulfilled on %s \"%s\": Precondition "
		    "failed: UID in precondition: %s, UID in object meta: %s",
		    k->plural, name, pre_uid, md_str(old, "uid"));
		return;
	}
	if (pre_rv != NULL &&
	    strcmp(pre_rv, md_str(old, "resourceVersion")) != 0) {
		as_resp_error(resp, 409, "Conflict",
		    "Operation cannot be fulfilled on %s \"%s\": Precondition "
		    "failed: ResourceVersion in precondition: %s, "
		    "ResourceVersion in object meta: %s",
		    k->plural, name, pre_rv, md_str(old, "resourceVersion"));
		return;
	}
	if (!admit_delete(rq, r, ns, name, old, opts, resp))
		return;
	obj = json_deep_copy(old);
	md = md_of(obj);
	fin = json_object_get(md, "finalizers");
	if (!json_is_array(fin)) {
		fin = json_array();
		json_object_set_new(md, "finalizers", fin);
	}
	if (md_str(old, "deletionTimestamp") == NULL) {
		const char *add = NULL;

		if (policy != NULL && strcmp(policy, "Foreground") == 0)
			add = "foregroundDeletion";
		else if ((policy != NULL && strcmp(policy, "Orphan") == 0) ||
			 json_is_true(orphan))
			add = "orphan";
		/* Only the garbage collector (not run here, as in envtest)
		 * removes these: the object then waits, as on a real
		 * cluster without kube-controller-manager. */
		if (add != NULL && strcmp(k->plural, "namespaces") != 0)
			json_array_append_new(fin, json_string(add));
	}
	if (strcmp(k->plural, "namespaces") == 0 && k->group[0] == '\0') {
		/* No namespace controller: the namespace stays Terminating
		 * until someone finalizes it (envtest behaves the same). */
		if (md_str(old, "deletionTimestamp") == NULL) {
			as_now_rfc3339(now);
			json_object_set_new(
			    md, "deletionTimestamp", json_string(now));
			json_object_set_new(
			    md, "deletionGracePeriodSeconds", json_integer(0));
			as_jset(
			    obj, "status.phase", json_string("Terminating"));
			if (!dry)
				as_store_put(
				    srv, k, ns, name, json_incref(obj));
		}
		*deleted = out_object(r, dry ? obj : as_store_get(k, ns, name));
		resp->code = 200;
		json_decref(obj);
		return;
	}
	if (json_array_size(fin) > 0) {
		if (md_str(old, "deletionTimestamp") == NULL) {
			json_int_t g = json_integer_value(
			    json_object_get(md, "generation"));

			as_now_rfc3339(now);
			json_object_set_new(
			    md, "deletionTimestamp", json_string(now));
			json_object_set_new(
			    md, "deletionGracePeriodSeconds", json_integer(0));
			if (g > 0)
				json_object_set_new(
				    md, "generation", json_integer(g + 1));
			if (!dry)
				as_store_put(
				    srv, k, ns, name, json_incref(obj));
		}
		*deleted = out_object(r, dry ? obj : as_store_get(k, ns, name));
		resp->code = 200;
		json_decref(obj);
		return;
	}
	json_decref(obj);
	{
		json_t *st =
		    json_pack("{s:s, s:s, s:{}, s:s, s:{s:s, s:s, s:s, s:s}}",
			"kind", "Status", "apiVersion", "v1", "metadata",
			"status", "Success", "details", "name", name, "group",
			k->group, "kind", k->plural, "uid", md_str(old, "uid"));

		if (k->group[0] == '\0')
			json_object_del(
			    json_object_get(st, "details"), "group");
		*deleted = st;
	}
	resp->code = 200;
	if (dry)
		return;
	if (strcmp(k->group, "apiextensions.k8s.io") == 0)
		as_crd_unregister(srv, old);
	as_store_remove(srv, k, ns, name);
}

/* PUT or PATCH of a /scale subresource: the object's replicas are
 * written as an update of the object; the answer is the new Scale. */
static void do_scale(
    const struct as_request *rq, const struct route *r, struct as_resp *resp)
{
	json_t *old = as_store_get(r->kind, r->ns, r->name), *scale;
	json_int_t want = 0;

	if (old == NULL) {
		as_resp_not_found(resp, r->kind, r->name);
		return;
	}
	scale = as_scale_get(r->kind, old);
	if (scale == NULL || as_scale_wanted(rq, scale, &want, resp) != CU_OK) {
		json_decref(scale);
		return;
	}
	json_decref(scale);
	/* An update of the object whose admission names the subresource
	 * "scale": webhooks registered for <plural>/scale see it, those for
	 * <plural> do not, as in kube. */
	scale = as_scale_set(r->kind, old, want);
	if (scale != NULL)
		update_obj(rq, r, scale, old, false, resp);
	json_decref(scale);
	if (resp->code == 200 && resp->body != NULL && resp->watch == NULL &&
	    !resp->delay) {
		json_t *now = as_store_get(r->kind, r->ns, r->name);

		json_decref(resp->body);
		resp->body = now ? as_scale_get(r->kind, now) : NULL;
	}
}

static json_t *delete_options(const struct as_request *rq, struct as_resp *resp)
{
	json_t *opts;
	const char *q;

	if (rq->body_len > 0) {
		json_error_t jerr;

		opts = json_loadb(rq->body, rq->body_len, 0, &jerr);
		if (!json_is_object(opts)) {
			json_decref(opts);
			as_resp_error(resp, 400, "BadRequest",
			    "couldn't decode DeleteOptions: %s", jerr.text);
			return NULL;
		}
	} else {
		opts = json_object();
		q = as_query(rq, "propagationPolicy");
		if (q != NULL)
			json_object_set_new(
			    opts, "propagationPolicy", json_string(q));
		if (as_query(rq, "orphanDependents") != NULL)
			json_object_set_new(opts, "orphanDependents",
			    json_boolean(
				as_query_bool(rq, "orphanDependents")));
		q = as_query(rq, "dryRun");
		if (q != NULL)
			json_object_set_new(
			    opts, "dryRun", json_pack("[s]", q));
	}
	{
		json_t *dr = json_object_get(opts, "dryRun");
		const char *d = json_string_value(json_array_get(dr, 0));

		if (d != NULL && strcmp(d, "All") != 0) {
			json_decref(opts);
			as_resp_error(resp, 422, "Invalid",
			    "dryRun: Unsupported value: \"%s\"", d);
			return NULL;
		}
		json_object_set_new(opts, "dry", json_boolean(d != NULL));
	}
	return opts;
}

static void do_delete(
    const struct as_request *rq, const struct route *r, struct as_resp *resp)
{
	json_t *opts = delete_options(rq, resp), *out = NULL;

	if (opts == NULL)
		return;
	delete_one(rq, r, r->ns, r->name, opts, resp, &out);
	if (out != NULL)
		resp_json(resp, resp->code ? resp->code : 200, out);
	json_decref(opts);
}

static void do_delete_collection(
    const struct as_request *rq, const struct route *r, struct as_resp *resp)
{
	struct as_kind *k = r->kind;
	api_selector labels;
	ns_fieldsel fields;
	json_t *opts, *items = json_array(), *keys = json_array(), *key;
	size_t i;

	if (!parse_selectors(rq, r, &labels, &fields, resp)) {
		json_decref(items);
		json_decref(keys);
		api_selector_dispose(&labels);
		ns_fieldsel_dispose(&fields);
		return;
	}
	opts = delete_options(rq, resp);
	for (i = 0; opts != NULL && i < k->nitems; i++) {
		struct as_entry *e = &k->items[i];

		if (r->has_ns && strcmp(e->ns, r->ns) != 0)
			continue;
		if (obj_matches(k, e->obj, &labels, &fields))
			json_array_append_new(
			    keys, json_pack("[s,s]", e->ns, e->name));
	}
	/* Admission of every item first: nothing is deleted while a
	 * webhook is still to answer, and a denial fails the request. */
	json_array_foreach(keys, i, key)
	{
		const char *ns = json_string_value(json_array_get(key, 0));
		const char *name = json_string_value(json_array_get(key, 1));

		if (!admit_delete(rq, r, ns, name, as_store_get(k, ns, name),
			opts, resp)) {
			json_decref(items);
			json_decref(keys);
			json_decref(opts);
			api_selector_dispose(&labels);
			ns_fieldsel_dispose(&fields);
			return;
		}
	}
	json_array_foreach(keys, i, key)
	{
		json_t *out = NULL;
		struct as_resp tmp = {0};

		delete_one(rq, r, json_string_value(json_array_get(key, 0)),
		    json_string_value(json_array_get(key, 1)), opts, &tmp,
		    &out);
		if (out != NULL)
			json_array_append_new(items, out);
		json_decref(tmp.body);
		cu_free(tmp.warning);
	}
	if (opts != NULL) {
		char *av = as_kind_api_version(k, r->version);
		char *rv = rv_string(rq->srv->rv);

		resp_json(resp, 200,
		    json_pack("{s:s, s:s, s:{s:s}, s:o}", "kind", k->list_kind,
			"apiVersion", av, "metadata", "resourceVersion", rv,
			"items", items));
		items = NULL;
		cu_free(av);
		cu_free(rv);
	}
	json_decref(items);
	json_decref(keys);
	json_decref(opts);
	api_selector_dispose(&labels);
	ns_fieldsel_dispose(&fields);
}

/* A body in a view's shape becomes the stored shape (*obj replaced);
 * false with a 422 in resp when the view's validation rejects it. */
static bool view_in(
    const struct route *r, json_t **obj, bool create, struct as_resp *resp)
{
	const char *field, *why;
	json_t *o;

	if (r->view == NULL)
		return true;
	o = as_view_in(r->view, *obj, create, &field, &why);
	if (o == NULL) {
		const char *name = json_string_value(
		    json_object_get(json_object_get(*obj, "metadata"), "name"));

		if (why != NULL)
			as_resp_invalid(
			    resp, r->view, name ? name : "", field, "%s", why);
		else
			as_resp_error(
			    resp, 500, "InternalError", "out of memory");
		json_decref(*obj);
		*obj = NULL;
		return false;
	}
	json_decref(*obj);
	*obj = o;
	return true;
}

/* ---- entry --------------------------------------------------------- */

static void non_resource(
    const struct as_request *rq, char seg[][256], int n, struct as_resp *resp)
{
	struct as_server *srv = rq->srv;
	json_t *doc = NULL;

	if (n == 1 && strcmp(seg[0], "api") == 0)
		doc = as_discovery_api(srv);
	else if (n == 2 && strcmp(seg[0], "api") == 0 &&
		 strcmp(seg[1], "v1") == 0)
		doc = as_discovery_resources(srv, "", "v1");
	else if (n == 1 && strcmp(seg[0], "apis") == 0)
		doc = as_discovery_apis(srv);
	else if (n == 2 && strcmp(seg[0], "apis") == 0)
		doc = as_discovery_group(srv, seg[1]);
	else if (n == 3 && strcmp(seg[0], "apis") == 0)
		doc = as_discovery_resources(srv, seg[1], seg[2]);
	if (doc != NULL) {
		resp_json(resp, 200, doc);
		return;
	}
	as_resp_error(resp, 404, "NotFound",
	    "the server could not find the requested resource");
}

/* GET /openapi/v3 and /openapi/v3/apis/<group>/<version> (openapi3.c):
 * custom resource groups only; other paths are 404 so kubectl falls back
 * to /openapi/v2 for built-in kinds. */
static void serve_openapi3(
    const struct as_request *rq, struct as_resp *resp, char seg[][256], int n)
{
	char *hash;

	if (strcmp(rq->method, "GET") != 0) {
		as_resp_error(resp, 405, "MethodNotAllowed",
		    "the server does not allow this method on the requested "
		    "resource");
		return;
	}
	if (n == 2) {
		resp_json(resp, 200, as_openapi3_root(rq->srv));
		if (resp->body == NULL)
			as_resp_error(resp, 500, "InternalError",
			    "out of memory building the OpenAPI document");
		return;
	}
	if (n != 5 || strcmp(seg[2], "apis") != 0 ||
	    (resp->raw = as_openapi3_gv_text(
		 rq->srv, seg[3], seg[4], &resp->raw_len)) == NULL) {
		as_resp_error(resp, 404, "NotFound",
		    "the server could not "
		    "find the requested "
		    "resource");
		return;
	}
	resp->code = 200;
	resp->content_type = "application/json";
	hash = as_openapi3_hash(resp->raw, resp->raw_len);
	if (hash != NULL)
		snprintf(resp->etag, sizeof(resp->etag), "\"%s\"", hash);
	cu_free(hash);
}

static void handle(struct as_request *rq, struct as_resp *resp);

void as_handle(struct as_request *rq, struct as_resp *resp)
{
	bool write = strcmp(rq->method, "GET") != 0;
	const char *body = rq->body;
	size_t body_len = rq->body_len;
	char *json = NULL;

	/* protobuf in and out (proto.c); the handlers see JSON */
	if (!as_proto_request(rq, resp, &json))
		return;
	if (json != NULL) {
		rq->body = json;
		rq->body_len = strlen(json);
		rq->proto_json = true;
	}
	if (write)
		as_admit_begin(rq);
	handle(rq, resp);
	if (write)
		as_admit_end();
	if (json != NULL) {
		rq->body = body;
		rq->body_len = body_len;
		rq->proto_json = false;
		cu_free(json);
	}
	as_proto_reply(rq, resp);
}

static void handle(struct as_request *rq, struct as_resp *resp)
{
	char seg[10][256];
	int n = split_path(rq->path, seg, 10);
	struct route r;
	const char *m = rq->method;

	memset(&r, 0, sizeof(r));
	if (n < 0) {
		as_resp_error(resp, 404, "NotFound",
		    "the server could not find the requested resource");
		return;
	}
	if (n == 1 &&
	    (strcmp(seg[0], "healthz") == 0 || strcmp(seg[0], "livez") == 0 ||
		strcmp(seg[0], "readyz") == 0)) {
		resp->code = 200;
		resp->raw = cu_strdup("ok");
		resp->raw_len = 2;
		resp->content_type = "text/plain; charset=utf-8";
		return;
	}
	if (n == 1 && strcmp(seg[0], "version") == 0) {
		resp_json(resp, 200,
		    json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}",
			"major", "1", "minor", "33", "gitVersion",
			"v1.33.0-cueue", "gitCommit",
			"0000000000000000000000000000000000000000",
			"gitTreeState", "clean", "buildDate",
			"2026-01-01T00:00:00Z", "goVersion", "go1.24",
			"compiler", "gc", "platform", "linux/amd64"));
		return;
	}
	if (n == 2 && strcmp(seg[0], "openapi") == 0 &&
	    strcmp(seg[1], "v2") == 0) {
		resp->raw = as_openapi_v2(rq->srv, &resp->raw_len);
		if (resp->raw == NULL) {
			as_resp_error(resp, 500, "InternalError",
			    "out of memory building the OpenAPI document");
			return;
		}
		resp->code = 200;
		resp->content_type =
		    "application/com.github.proto-openapi.spec.v2.v1.0+"
		    "protobuf";
		return;
	}
	if (n >= 2 && strcmp(seg[0], "openapi") == 0 &&
	    strcmp(seg[1], "v3") == 0) {
		serve_openapi3(rq, resp, seg, n);
		return;
	}
	if (n >= 1 && strcmp(seg[0], "__test") == 0) {
		if (rq->srv->test_endpoints) {
			as_testapi_handle(rq, resp);
			return;
		}
	}
	if (as_authz_route(rq, seg, n, resp))
		return;
	if (n >= 3 && strcmp(seg[0], "apis") == 0) {
		json_t *apisvc = as_aggregated(rq->srv, seg[1], seg[2]);

		if (apisvc != NULL) {
			as_aggregator_proxy(rq, apisvc, resp);
			return;
		}
	}
	if (n >= 3 && strcmp(seg[0], "api") == 0 && strcmp(seg[1], "v1") == 0) {
		copy_seg(r.version, sizeof(r.version), "v1");
		if (!parse_resource(rq->srv, seg, n, 2, &r))
			goto notfound;
	} else if (n >= 4 && strcmp(seg[0], "apis") == 0) {
		copy_seg(r.group, sizeof(r.group), seg[1]);
		copy_seg(r.version, sizeof(r.version), seg[2]);
		if (!parse_resource(rq->srv, seg, n, 3, &r))
			goto notfound;
	} else {
		non_resource(rq, seg, n, resp);
		return;
	}
	if (r.kind == NULL)
		goto notfound;
	if (r.kind->storage != NULL) {
		r.view = r.kind;
		r.kind = r.kind->storage;
		copy_seg(r.version, sizeof(r.version), r.kind->version);
	}
	if (as_convert_needed(rq->srv, r.kind, r.version))
		copy_seg(r.conv_from, sizeof(r.conv_from), r.version);
	if (!(r.kind->flags & AS_NAMESPACED) && r.has_ns)
		goto notfound;
	if (r.has_sub) {
		bool ok = (strcmp(r.sub, "status") == 0 &&
			      (r.kind->flags & AS_STATUS)) ||
			  (strcmp(r.sub, "scale") == 0 &&
			      (r.kind->flags & AS_SCALE)) ||
			  (strcmp(r.sub, "finalize") == 0 &&
			      strcmp(r.kind->plural, "namespaces") == 0 &&
			      r.kind->group[0] == '\0');
		bool log = strcmp(r.sub, "log") == 0 &&
			   strcmp(r.kind->plural, "pods") == 0 &&
			   r.kind->group[0] == '\0' && strcmp(m, "GET") == 0;

		if (log && r.has_ns && !r.watch_prefix) {
			/* pods/log, from the kubelet stand-in (sched.c) */
			json_t *pod = as_store_get(r.kind, r.ns, r.name);

			if (pod == NULL)
				as_resp_not_found(resp, r.kind, r.name);
			else
				as_sched_pod_log(
				    resp, pod, as_query(rq, "container"));
			return;
		}
		if (!ok)
			goto notfound;
	}
	if (r.watch_prefix && strcmp(m, "GET") != 0)
		goto notfound;
	if ((r.kind->flags & AS_NAMESPACED) && !r.has_ns &&
	    (r.has_name || strcmp(m, "GET") != 0))
		goto notfound;
	if (strcmp(m, "GET") == 0) {
		to_storage(&r);
		if (r.has_name && !r.watch_prefix)
			do_get(rq, &r, resp);
		else
			do_list(rq, &r, resp);
		if (r.conv_from[0] != '\0' && resp->watch == NULL)
			as_convert_reply(rq->srv, r.kind, r.conv_from, resp);
		return;
	}
	if (strcmp(m, "POST") == 0 && !r.has_name) {
		char *mt = media_type(as_header(rq, "Content-Type"));
		json_t *obj;

		if (!body_type_ok(&r, mt, resp))
			return;
		obj = decode_body(
		    rq, resp, strcmp(field_validation(rq), "Strict") == 0);
		if (obj == NULL || !view_in(&r, &obj, true, resp))
			return;
		if (check_gvk(&r, obj, resp) &&
		    as_convert_in(rq->srv, r.kind, r.version, &obj, resp)) {
			to_storage(&r);
			create_obj(rq, &r, obj, resp);
			as_convert_reply(rq->srv, r.kind, r.conv_from, resp);
		}
		json_decref(obj);
		return;
	}
	if (strcmp(m, "PUT") == 0 && r.has_name) {
		json_t *obj;

		if (!body_type_ok(
			&r, media_type(as_header(rq, "Content-Type")), resp))
			return;
		obj = decode_body(
		    rq, resp, strcmp(field_validation(rq), "Strict") == 0);
		if (obj == NULL || !view_in(&r, &obj, false, resp))
			return;
		if (check_gvk(&r, obj, resp) &&
		    as_convert_in(rq->srv, r.kind, r.version, &obj, resp)) {
			to_storage(&r);
			update_obj(rq, &r, obj,
			    as_store_get(r.kind, r.ns, r.name), false, resp);
			as_convert_reply(rq->srv, r.kind, r.conv_from, resp);
		}
		json_decref(obj);
		return;
	}
	to_storage(&r);
	if ((strcmp(m, "PATCH") == 0 || strcmp(m, "PUT") == 0) && r.has_name &&
	    r.has_sub && strcmp(r.sub, "scale") == 0) {
		do_scale(rq, &r, resp);
		return;
	}
	if (strcmp(m, "PATCH") == 0 && r.has_name) {
		do_patch(rq, &r, resp);
		as_convert_reply(rq->srv, r.kind, r.conv_from, resp);
		return;
	}
	if (strcmp(m, "DELETE") == 0 && r.has_name && !r.has_sub) {
		do_delete(rq, &r, resp);
		as_convert_reply(rq->srv, r.kind, r.conv_from, resp);
		return;
	}
	if (strcmp(m, "DELETE") == 0 && !r.has_name &&
	    strcmp(r.kind->plural, "namespaces") != 0) {
		do_delete_collection(rq, &r, resp);
		as_convert_reply(rq->srv, r.kind, r.conv_from, resp);
		return;
	}
	as_resp_error(resp, 405, "MethodNotAllowed",
	    "the server does not allow this method on the requested resource");
	return;
notfound:
	as_resp_error(resp, 404, "NotFound",
	    "the server could not find the requested resource");
}

/* ---- internal writes (simulators) ---------------------------------- */

int as_internal_create(
    struct as_server *srv, struct as_kind *k, json_t *obj, const char *user)
{
	const char *ns = md_str(obj, "namespace");
	const char *name = md_str(obj, "name");

	if (name == NULL || as_store_get(k, ns, name) != NULL) {
		json_decref(obj);
		return CU_EEXIST;
	}
	stamp_new(srv, k, obj);
	if (strcmp(k->group, "batch") == 0 && strcmp(k->plural, "jobs") == 0)
		as_sim_job_selector(srv, obj);
	as_count_write(srv, user);
	return as_store_put(srv, k, ns, name, obj);
}

int as_internal_update(struct as_server *srv, struct as_kind *k, json_t *obj,
    bool status, const char *user)
{
	const char *ns = md_str(obj, "namespace");
	const char *name = md_str(obj, "name");
	json_t *old = name ? as_store_get(k, ns, name) : NULL;

	(void)status;
	if (old == NULL) {
		json_decref(obj);
		return CU_ENOTFOUND;
	}
	json_object_set(md_of(obj), "resourceVersion",
	    json_object_get(
		json_object_get(old, "metadata"), "resourceVersion"));
	if (same_object(obj, old)) {
		json_decref(obj);
		return CU_OK;
	}
	if ((k->flags & AS_GENERATION) && !status && spec_changed(k, old, obj))
		json_object_set_new(md_of(obj), "generation",
		    json_integer(json_integer_value(
				     as_jget(old, "metadata.generation")) +
				 1));
	as_count_write(srv, user);
	return as_store_put(srv, k, ns, name, obj);
}

int as_internal_delete(struct as_server *srv, struct as_kind *k, const char *ns,
    const char *name, const char *user)
{
	as_count_write(srv, user);
	return as_store_remove(srv, k, ns, name);
}
