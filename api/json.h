/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/json.h - the one way cueue parses JSON text: jansson's json_loadb
 * with allocation failures told apart from bad input.
 *
 * jansson 2.14 does not report allocation failures reliably: its lexer
 * drops a byte silently when growing a string buffer fails (lex_save
 * ignores strbuffer_append_byte's result), so a parse can "succeed" with
 * a corrupted string, and other failures come back as syntax errors or
 * with no error at all. cueue routes jansson's allocations through
 * cu_malloc (json_set_alloc_funcs in controller/main.c), so the parse is
 * trusted only when no allocation failed while it ran (cu_mem_failures).
 *
 * Its dumper has the mirror problem: a failed write of an object key is
 * ignored (dump_string's result is not checked), so json_dumps can
 * return text with a key missing. api_json_dumps makes a failed write
 * stick and checks the allocator too.
 *
 * Also the small jansson helpers every module had written for itself:
 * the type name used in error messages, a string member (lenient, and
 * type-checked with an error), a member object created on demand.
 *
 * Prefix: api_json_.
 */
#ifndef CU_API_JSON_H
#define CU_API_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "lib/cu.h"

/*
 * Parse buf[0..len) [borrowed; need not be NUL-terminated] as
 * json_loadb(buf, len, flags, jerr) does. CU_OK: *out [owned:
 * json_decref]. CU_EPARSE: not JSON (jerr, if not NULL, says why).
 * CU_ENOMEM: an allocation failed during the parse; whatever jansson
 * built is discarded. *out is NULL on failure. Sets no cu_error: callers
 * name the document.
 */
CU_MUST_CHECK int api_json_loadb(json_t **out, const void *buf, size_t len,
    size_t flags, json_error_t *jerr);

/* ---- decoding only what is read ---------------------------------- */

/*
 * The text of one JSON document without the members cueue never reads,
 * made before jansson builds a tree of it (parsing them would cost more
 * than everything the controller reads: a Workload's managedFields are
 * half its bytes and most of its JSON nodes).
 *
 * Dropped: the member "managedFields" of every object that is the value
 * of a member "metadata" (an object's ObjectMeta: top-level objects,
 * watch events' "object", list items, embedded objects), as
 * controller-runtime's cache strips them. Whitespace outside strings is
 * dropped too, so the text is compact. Everything else is copied byte
 * for byte; it is not checked here (the parser that reads the text does
 * that). A dropped value is checked for its structure (balanced
 * containers, members and elements separated as JSON requires, strings
 * terminated and their escapes valid, literals and numbers made of the
 * right characters): text that is not JSON there is CU_EPARSE, as a
 * parser would answer, never passed on as if it were.
 */
struct api_json_lean {
	char *text;	/* [owned: cu_free] NUL-terminated, or NULL */
	size_t len;	/* bytes of text */
	size_t dropped; /* input bytes of the members dropped */
	/* Where the value of the top-level member named by `span` of
	 * api_json_lean starts in text and how long it is (0, 0 when absent
	 * or not asked for): a watch event's "object", kept as the cached
	 * object's text without being written again from the tree. */
	size_t span_off, span_len;
};

/*
 * Make lean text of in[0..len) [borrowed; need not be NUL-terminated]
 * into *out (zeroed first; free with api_json_lean_dispose). span
 * [borrowed; NULL = none]: a top-level member whose value's place in the
 * lean text is wanted. CU_EPARSE: a dropped value is not JSON, or the
 * document nests deeper than API_JSON_MAX_DEPTH; CU_ENOMEM. Sets no
 * cu_error: callers name the document.
 */
#define API_JSON_MAX_DEPTH 2048
CU_MUST_CHECK int api_json_lean(
    struct api_json_lean *out, const char *in, size_t len, const char *span);
void api_json_lean_dispose(struct api_json_lean *l);

/* Delete metadata.managedFields from the tree v [modified] wherever
 * api_json_lean drops them from text (a key spelled with escapes
 * included): the tree counterpart, for checks of the lean text. */
void api_json_drop_managed_fields(json_t *v);

/*
 * api_json_loadb of the lean text of buf[0..len): the tree without the
 * members api_json_lean drops. Same results and ownership as
 * api_json_loadb (CU_EPARSE also for a dropped value that is not JSON).
 */
CU_MUST_CHECK int api_json_loadb_lean(json_t **out, const void *buf, size_t len,
    size_t flags, json_error_t *jerr);

/*
 * JSON text of v [borrowed] as json_dumps(v, flags) would write it, at
 * most max bytes (0 = no limit). *out [owned: cu_free] NUL-terminated,
 * *len its length (len may be NULL). CU_ENOMEM; CU_ETOOBIG beyond max;
 * CU_EINVAL when jansson refuses v (a scalar without JSON_ENCODE_ANY, a
 * reference cycle). *out is NULL on failure.
 */
CU_MUST_CHECK int api_json_dumps(
    const json_t *v, size_t flags, size_t max, char **out, size_t *len);

/*
 * The JSON type of v [borrowed; NULL reads as null] as error messages name
 * it: "object", "array", "string", "number", "boolean" or "null"; with
 * int_apart an integer is "integer" and only a real is "number". Static.
 */
const char *api_json_type_name(const json_t *v, bool int_apart);
/* The same word for a json_type t (what a check expected). Static. */
const char *api_json_type_word(json_type t, bool int_apart);

/* The string value of member `key` of obj [borrowed; may be NULL or not
 * an object], or NULL when absent or not a string. Borrowed from obj. */
const char *api_json_str(const json_t *obj, const char *key);

/*
 * Decode the string member o[key] of the object o [borrowed]: *out is its
 * value [borrowed from o], or dflt when absent or JSON null. Another type:
 * *out = dflt and CU_EPARSE "<path>: Invalid type: expected string, got
 * <type>" (path [borrowed]; err may be NULL for callers with messages of
 * their own).
 */
CU_MUST_CHECK int api_json_get_str(const json_t *o, const char *key,
    const char *path, const char *dflt, const char **out, cu_error *err);

/*
 * Member `key` of obj [borrowed, an object] as an object: the existing
 * one, or a new empty object set in its place when absent or of another
 * type. Borrowed from obj; NULL on allocation failure.
 */
json_t *api_json_obj_child(json_t *obj, const char *key);

/* ---- base64 --------------------------------------------------------- */

/* Standard padded base64 (RFC 4648) of n bytes, as Go's encoding/json
 * writes []byte [owned: cu_free]; NULL on allocation failure or when n is
 * too large for OpenSSL's encoder. Kubernetes carries []byte fields
 * (Secret data, caBundle, AdmissionReview patches) this way, hence here. */
char *api_base64_encode(const void *data, size_t n);

/*
 * Decode standard padded base64 s (NUL-terminated; no whitespace) as Go's
 * encoding/base64 StdEncoding does. *out [owned: cu_free] holds *n bytes
 * and a NUL after them. CU_EPARSE when s is not valid (*bad, if not NULL,
 * is the offset of the first offending byte, as Go's "illegal base64 data
 * at input byte N"); CU_ENOMEM. Sets no cu_error: callers name the field.
 */
CU_MUST_CHECK int api_base64_decode(
    const char *s, char **out, size_t *n, size_t *bad);

#endif /* CU_API_JSON_H */
