/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/labelselector.h - the label-selector value (api_selector: a
 * conjunction of requirements), built only through checked constructors,
 * its canonical string, and the JSON codec of metav1.LabelSelector
 * ({matchLabels, matchExpressions}) with the validation Kubernetes applies
 * (LabelSelectorAsSelector and ValidateLabelSelector), so that errors name
 * the exact field path. Parsing the string form and matching an object's
 * labels are namespaces/selector.h's: that module includes this one, never
 * the reverse. Storage and checks in api/selector.c, the codec in
 * api/labelselector.c.
 * Prefix: api_selector_ (the value), api_label_selector_ (the codec),
 * API_SEL_ / API_LABEL_ (enum values, limits).
 */
#ifndef CU_API_LABELSELECTOR_H
#define CU_API_LABELSELECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "lib/cu.h"

/* Limits from apimachinery validation (qualified names, label values). */
#define API_LABEL_NAME_MAX 63	 /* name part of a key; a label value */
#define API_LABEL_PREFIX_MAX 253 /* DNS-subdomain prefix of a key */

enum api_sel_op {
	API_SEL_OP_IN,
	API_SEL_OP_NOT_IN,
	API_SEL_OP_EXISTS,
	API_SEL_OP_DOES_NOT_EXIST,
	API_SEL_OP_EQUALS,
	API_SEL_OP_DOUBLE_EQUALS,
	API_SEL_OP_NOT_EQUALS,
	API_SEL_OP_GT,
	API_SEL_OP_LT,
};

/* One requirement. All strings are owned by the selector holding it. */
struct api_requirement {
	char *key; /* [owned by the selector] */
	enum api_sel_op op;
	char **values;	/* [owned by the selector] sorted, de-duplicated */
	size_t nvalues; /* 0 for EXISTS / DOES_NOT_EXIST */
};

/*
 * A conjunction of requirements. No requirements and !match_nothing
 * matches everything (an empty selector string, `{}` LabelSelector);
 * match_nothing (a JSON null LabelSelector) matches no object at all.
 */
typedef struct api_selector {
	struct api_requirement *reqs; /* [owned] sorted by key after parse */
	size_t nreqs;
	bool match_nothing;
} api_selector;

/* Empty selector: matches everything. */
void api_selector_init(api_selector *sel);
/* Free everything the selector owns; it is left initialised (empty). */
void api_selector_dispose(api_selector *sel);

/*
 * Add one validated requirement (kept sorted by key). `field` (e.g.
 * "spec.namespaceSelector.matchExpressions[0]") prefixes error messages;
 * NULL means no prefix. key, values, field [borrowed, copied]. Value count
 * rules: In/NotIn >= 1, Exists/DoesNotExist 0, Equals/DoubleEquals/
 * NotEquals exactly 1, Gt/Lt exactly 1 integer. On failure sel is
 * unchanged.
 */
CU_MUST_CHECK int api_selector_add(api_selector *sel, const char *key,
    enum api_sel_op op, const char *const *values, size_t nvalues,
    const char *field, cu_error *err);

/*
 * As api_selector_add, with the messages Kubernetes gives for the string
 * form (no field path): each starts with prefix [borrowed] and the code is
 * CU_EPARSE ("label selector: out of memory" on CU_ENOMEM). For the parser
 * in namespaces/selector.c.
 */
CU_MUST_CHECK int api_selector_add_parsed(api_selector *sel, const char *key,
    enum api_sel_op op, const char *const *values, size_t nvalues,
    const char *prefix, cu_error *err);

/* IsQualifiedName on key [borrowed]: CU_OK, or `code` with the message
 * "<prefix>invalid label key \"<key>\": <reasons>". */
CU_MUST_CHECK int api_selector_check_key(
    const char *key, const char *prefix, int code, cu_error *err);

/* strconv.ParseInt(s, 10, 64), as Gt/Lt values are read; s [borrowed]. */
bool api_selector_int64(const char *s, int64_t *out);

/* Room for api_selector_show's rendering. */
#define API_SELECTOR_SHOW_MAX 300
/* s (n bytes) [borrowed] rendered for an error message into out (outn
 * bytes): unprintable bytes, '"' and backslash as \xNN, truncated at 64 bytes
 * with "...", so messages stay one line. */
void api_selector_show(char *out, size_t outn, const char *s, size_t n);

/* Canonical string (requirements sorted by key, as Selector.String()).
 * "" for an empty selector and for match_nothing (as labels.Nothing()).
 * [owned: cu_free]; NULL on allocation failure. */
char *api_selector_string(const api_selector *sel);

/* Static lowercase operator token as in the string form ("in", "!=", ...). */
const char *api_sel_op_name(enum api_sel_op op);

/* Validation helpers, usable by other modules. name [borrowed].
 * Return CU_OK or CU_EINVAL with a message prefixed by `field`. */
CU_MUST_CHECK int api_validate_label_key(
    const char *key, const char *field, cu_error *err);
CU_MUST_CHECK int api_validate_label_value(
    const char *value, const char *field, cu_error *err);

/*
 * Decode j [borrowed; may be NULL, treated as JSON null] into *out, which
 * is initialised here and left empty on failure. JSON null -> match_nothing
 * = true; {} -> everything. Errors name the path given by the caller
 * (path [borrowed]; NULL means "labelSelector"), e.g.
 * "spec.namespaceSelector.matchExpressions[1].values: Required value: must
 * be specified when `operator` is 'In' or 'NotIn'". CU_EINVAL for
 * validation failures, CU_EPARSE for wrong JSON types, CU_ENOMEM.
 */
CU_MUST_CHECK int api_label_selector_decode(
    api_selector *out, const json_t *j, const char *path, cu_error *err);

/*
 * Encode sel [borrowed] as a LabelSelector: Equals/DoubleEquals become
 * matchLabels (a repeated key becomes an In expression), NotEquals becomes
 * NotIn with one value (same meaning), the rest matchExpressions. Gt/Lt
 * have no LabelSelector form: CU_EINVAL. match_nothing encodes as JSON
 * null, an empty selector as {}. *out [owned: json_decref]; untouched on
 * failure.
 */
CU_MUST_CHECK int api_label_selector_encode(
    json_t **out, const api_selector *sel, cu_error *err);

#endif /* CU_API_LABELSELECTOR_H */
