/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/model_internal.h - helpers shared by the api/model_*.c codecs; not
 * for use outside api/model_*.c.
 *
 * Decoding and encoding use a sticky context: the first failure records
 * its code and one-line message (with the JSON field path on decode) and
 * every later helper call becomes a no-op. That keeps each kind's codec a
 * flat list of field reads/writes, while the error is still set exactly
 * once, where it happened.
 */
#ifndef CU_API_MODEL_INTERNAL_H
#define CU_API_MODEL_INTERNAL_H

#include <string.h>

#include "api/json.h"
#include "api/model.h"

#define API_PATH_MAX 384

struct api_dec {
	char path[API_PATH_MAX]; /* ".a.b[3].c" without the leading dot */
	size_t len;
	int rc;
	cu_error *err; /* [borrowed] may be NULL */
};

struct api_enc {
	int rc;
	cu_error *err; /* [borrowed] may be NULL */
};

/* String <-> enum tables end with a NULL name. */
struct api_enum_name {
	const char *name;
	int value;
};

void apid_init(struct api_dec *d, cu_error *err);
/* Append ".key" / "[i]"; return the mark to pop back to. Paths longer
 * than API_PATH_MAX are cut (messages stay one line). */
size_t apid_push(struct api_dec *d, const char *key);
size_t apid_push_idx(struct api_dec *d, size_t i);
void apid_pop(struct api_dec *d, size_t mark);
/* Record the first failure as "<path>: <msg>"; returns d->rc. */
int apid_fail(struct api_dec *d, int code, const char *fmt, ...)
    CU_PRINTF(3, 4);
/* Allocation failure at the current path. */
void apid_nomem(struct api_dec *d);

/*
 * Field readers. o is the containing object [borrowed]; key [borrowed].
 * JSON null counts as absent (as in Kubernetes' decoder). A required
 * field that is absent fails with "Required value". Outputs are written
 * only on success; has (may be NULL for required fields) tells presence.
 */
const json_t *apid_field(struct api_dec *d, const json_t *o, const char *key,
    json_type want, bool required);
void apid_str(struct api_dec *d, const json_t *o, const char *key,
    bool required, char **out);
void apid_i32(struct api_dec *d, const json_t *o, const char *key,
    bool required, bool *has, int32_t *out);
void apid_i64(struct api_dec *d, const json_t *o, const char *key,
    bool required, bool *has, int64_t *out);
void apid_bool(
    struct api_dec *d, const json_t *o, const char *key, bool *has, bool *out);
void apid_qty(struct api_dec *d, const json_t *o, const char *key,
    bool required, bool *has, struct api_quantity *out);
void apid_time(struct api_dec *d, const json_t *o, const char *key,
    bool required, bool *has, int64_t *out);
void apid_enum(struct api_dec *d, const json_t *o, const char *key,
    bool required, const struct api_enum_name *tbl, int *out);
void apid_strmap(struct api_dec *d, const json_t *o, const char *key,
    struct api_strmap *out);
void apid_strlist(struct api_dec *d, const json_t *o, const char *key,
    bool required, struct api_strlist *out);
void apid_qmap(
    struct api_dec *d, const json_t *o, const char *key, struct api_qmap *out);
/* An owned reference (json_incref) to the value, or NULL. */
json_t *apid_json(struct api_dec *d, const json_t *o, const char *key,
    json_type want, bool required);
/* The array at key (NULL when absent) and a zeroed C array of *n elements
 * of `size` bytes for it [owned: cu_free]; NULL too when empty. */
void *apid_array(struct api_dec *d, const json_t *o, const char *key,
    bool required, size_t size, size_t *n, const json_t **arr);
/* Element i of arr, which must be an object; pushes "[i]" (pop with
 * *mark). NULL on failure. */
const json_t *apid_elem(
    struct api_dec *d, const json_t *arr, size_t i, size_t *mark);
/* The object o[key] (NULL when absent or on failure) with ".key" pushed
 * either way: pop with *mark. For a kind's spec/status sections. */
const json_t *apid_section(struct api_dec *d, const json_t *o, const char *key,
    bool required, size_t *mark);
/* Fill item [zeroed] from e [borrowed], the array element being decoded
 * (its path pushed); ctx is apid_each's. */
typedef void (*apid_elem_fn)(
    struct api_dec *d, const json_t *e, void *item, void *ctx);
/*
 * The one decode loop of every array of objects: the array o[key] as a
 * zeroed C array of *n items of `size` bytes [owned by the caller's
 * type, cu_free], each filled by fn(d, element, item, ctx) with ".key[i]"
 * pushed. *n counts every item fn was given, also when decoding stopped
 * at a failure, so the type's dispose frees exactly what was filled. NULL
 * (and *n = 0) when absent or empty; a type error names key.
 */
void *apid_each(struct api_dec *d, const json_t *o, const char *key,
    bool required, size_t size, size_t *n, apid_elem_fn fn, void *ctx);
/* ResourceFlavor nodeTaints and toleration effects. */
extern const struct api_enum_name apid_effect_names[];
void apid_conditions(struct api_dec *d, const json_t *o, const char *key,
    bool job_style, struct api_conditions *out);
void apid_meta(struct api_dec *d, const json_t *o, struct api_meta *out);
void apid_tolerations(struct api_dec *d, const json_t *o, const char *key,
    struct api_toleration **out, size_t *n);
/* The per-pod requests of the PodSpec spec [borrowed] (see
 * api_pod_requests) into *out [owned: cu_free each name and the array]
 * and *n; nothing on failure. */
void apid_pod_requests(
    struct api_dec *d, const json_t *spec, struct api_request **out, size_t *n);
/* One v1 Taint (ResourceFlavor nodeTaints, Node spec.taints); an
 * apid_each element function, ctx unused. */
void apid_taint(struct api_dec *d, const json_t *e, void *item, void *ctx);
/* A list of {name} objects (Workload status.unhealthyNodes) as the
 * names alone, and back. */
void apid_name_list(struct api_dec *d, const json_t *o, const char *key,
    struct api_strlist *out);
void apie_name_list(struct api_enc *e, json_t *dst, const char *key,
    const struct api_strlist *l);
/* A present "apiVersion"/"kind" must equal the expected strings (kind
 * NULL: not checked). */
void apid_kind(struct api_dec *d, const json_t *j, const char *api_version,
    const char *kind);

/*
 * Field writers into dst [borrowed], which starts as a copy of the source
 * document. "Absent" values (NULL string, has == false, UNSET enum)
 * delete the key. dst == NULL is a no-op so that writers chain after an
 * absent parent.
 */
void apie_nomem(struct api_enc *e);
void apie_str(struct api_enc *e, json_t *dst, const char *key, const char *s);
void apie_i64(
    struct api_enc *e, json_t *dst, const char *key, bool has, int64_t v);
void apie_bool(
    struct api_enc *e, json_t *dst, const char *key, bool has, bool v);
void apie_qty(struct api_enc *e, json_t *dst, const char *key, bool has,
    const struct api_quantity *q);
void apie_time(struct api_enc *e, json_t *dst, const char *key, bool has,
    int64_t ns, bool micro);
void apie_enum(struct api_enc *e, json_t *dst, const char *key,
    const struct api_enum_name *tbl, int v);
void apie_strmap(struct api_enc *e, json_t *dst, const char *key,
    const struct api_strmap *m);
void apie_strlist(struct api_enc *e, json_t *dst, const char *key,
    const struct api_strlist *l);
void apie_qmap(
    struct api_enc *e, json_t *dst, const char *key, const struct api_qmap *m);
/* Workload podSet topologyRequest (api/model_topology.c). */
void apid_topology_request(struct api_dec *d, const json_t *o, bool *has,
    struct api_topology_request *t);
void apie_topology_request(struct api_enc *e, json_t *dst, bool has,
    const struct api_topology_request *t);
/* Deep copy of v [borrowed] at key; NULL deletes. */
void apie_json(
    struct api_enc *e, json_t *dst, const char *key, const json_t *v);
/* The object at key [borrowed from dst], created when missing; with
 * has == false the key is deleted and NULL returned. */
json_t *apie_obj(struct api_enc *e, json_t *dst, const char *key, bool has);
/* The array at key [borrowed from dst] resized to n objects, reusing the
 * existing elements by position. n == 0 keeps `[]` only when the source
 * had an array there and returns NULL. */
json_t *apie_arr(struct api_enc *e, json_t *dst, const char *key, size_t n);
void apie_conditions(struct api_enc *e, json_t *dst, const char *key,
    const struct api_conditions *cs, bool job_style);
void apie_meta(struct api_enc *e, json_t *dst, const struct api_meta *m);
void apie_tolerations(struct api_enc *e, json_t *dst, const char *key,
    const struct api_toleration *t, size_t n);
/* The status object of dst [borrowed from dst], written only when any
 * (the model has a status) or the source has one, so that a spec-only
 * object does not grow an empty status; NULL when not written
 * (api/model_kueue.c). */
json_t *apie_status(struct api_enc *e, json_t *dst, bool any);

/* Dispose helpers for shared pieces (api_conditions_dispose: model.h). */
void api_tolerations_dispose(struct api_toleration *t, size_t n);
void api_resource_groups_dispose(struct api_resource_groups *rg);
void api_flavor_usages_dispose(struct api_flavor_usages *fu);
void apid_resource_groups(struct api_dec *d, const json_t *o, const char *key,
    struct api_resource_groups *out);
void apie_resource_groups(struct api_enc *e, json_t *dst, const char *key,
    const struct api_resource_groups *rg);
void apid_flavor_usages(struct api_dec *d, const json_t *o, const char *key,
    struct api_flavor_usages *out);
void apie_flavor_usages(struct api_enc *e, json_t *dst, const char *key,
    const struct api_flavor_usages *fu);

extern const struct api_enum_name api_stop_policy_names[];

/*
 * Start decoding the top-level object j [borrowed] into d: d initialised
 * with err; j must be a JSON object ("Invalid type: a <what> must be a
 * JSON object") whose apiVersion and kind, when present, match (kind
 * NULL: apiVersion only, the body checks the kind). Returns d->rc.
 */
int apid_begin(struct api_dec *d, const json_t *j, const char *api_version,
    const char *kind, const char *what, cu_error *err);

/*
 * Defines api_K_decode from the static K_decode_body(d, j, out) the
 * including file provides and api_K_dispose: *out zeroed, apid_begin,
 * the body, a reference to j kept in out->raw; on failure out disposed.
 */
#define API_MODEL_DEFINE_DECODE(K, APIVERSION, KIND, WHAT)                     \
	int api_##K##_decode(                                                  \
	    struct api_##K *out, const json_t *j, cu_error *err)               \
	{                                                                      \
		struct api_dec d;                                              \
                                                                               \
		memset(out, 0, sizeof(*out));                                  \
		if (apid_begin(&d, j, APIVERSION, KIND, WHAT, err) == CU_OK)   \
			K##_decode_body(&d, j, out);                           \
		if (d.rc != CU_OK) {                                           \
			api_##K##_dispose(out);                                \
			return d.rc;                                           \
		}                                                              \
		out->raw = json_incref((json_t *)j);                           \
		return CU_OK;                                                  \
	}

/*
 * Defines api_K_decode/encode/dispose from three static functions the
 * including file provides: K_decode_body(d, j, out),
 * K_encode_body(e, dst, in) and K_dispose_body(x).
 */
#define API_MODEL_DEFINE_CODEC(K, APIVERSION, KIND)                            \
	API_MODEL_DEFINE_DECODE(K, APIVERSION, KIND, KIND)                     \
	int api_##K##_encode(                                                  \
	    json_t **out, const struct api_##K *in, cu_error *err)             \
	{                                                                      \
		struct api_enc e = {CU_OK, err};                               \
		json_t *dst =                                                  \
		    in->raw != NULL ? json_deep_copy(in->raw) : json_object(); \
                                                                               \
		*out = NULL;                                                   \
		if (dst == NULL)                                               \
			return cu_error_set(                                   \
			    err, CU_ENOMEM, KIND ": out of memory encoding");  \
		apie_str(&e, dst, "apiVersion", APIVERSION);                   \
		apie_str(&e, dst, "kind", KIND);                               \
		K##_encode_body(&e, dst, in);                                  \
		if (e.rc != CU_OK) {                                           \
			json_decref(dst);                                      \
			return e.rc;                                           \
		}                                                              \
		*out = dst;                                                    \
		return CU_OK;                                                  \
	}                                                                      \
	void api_##K##_dispose(struct api_##K *x)                              \
	{                                                                      \
		if (x == NULL)                                                 \
			return;                                                \
		K##_dispose_body(x);                                           \
		api_meta_dispose(&x->meta);                                    \
		json_decref(x->raw);                                           \
		memset(x, 0, sizeof(*x));                                      \
	}

#endif /* CU_API_MODEL_INTERNAL_H */
