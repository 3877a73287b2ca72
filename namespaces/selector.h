/* SPDX-License-Identifier: Apache-2.0 */
/*
 * namespaces/selector.h - Kubernetes label selectors and field selectors:
 * parsing of the string forms used in list/watch query parameters,
 * structured construction (for metav1.LabelSelector decoded elsewhere),
 * matching against an object's labels/fields, and the canonical string.
 *
 * Semantics follow apimachinery pkg/labels/selector.go and
 * pkg/fields/selector.go. Pure logic: libc and lib/cu.h only.
 * Prefix: ns_ (functions), NS_ (enum values).
 */
#ifndef CU_NAMESPACES_SELECTOR_H
#define CU_NAMESPACES_SELECTOR_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/cu.h"

/* Limits from apimachinery validation (qualified names, label values). */
#define NS_NAME_MAX 63	      /* name part of a key; a label value */
#define NS_PREFIX_MAX 253     /* DNS-subdomain prefix of a key */
#define NS_SELECTOR_MAX 65536 /* longest selector string we accept */

enum ns_op {
	NS_OP_IN,
	NS_OP_NOT_IN,
	NS_OP_EXISTS,
	NS_OP_DOES_NOT_EXIST,
	NS_OP_EQUALS,
	NS_OP_DOUBLE_EQUALS,
	NS_OP_NOT_EQUALS,
	NS_OP_GT,
	NS_OP_LT,
};

/* One requirement. All strings are owned by the selector holding it. */
struct ns_requirement {
	char *key; /* [owned by the selector] */
	enum ns_op op;
	char **values;	/* [owned by the selector] sorted, de-duplicated */
	size_t nvalues; /* 0 for EXISTS / DOES_NOT_EXIST */
};

/*
 * A conjunction of requirements. No requirements and !match_nothing
 * matches everything (an empty selector string, `{}` LabelSelector);
 * match_nothing (a JSON null LabelSelector) matches no object at all.
 */
typedef struct ns_selector {
	struct ns_requirement *reqs; /* [owned] sorted by key after parse */
	size_t nreqs;
	bool match_nothing;
} ns_selector;

/* Empty selector: matches everything. */
void ns_selector_init(ns_selector *sel);
/* Free everything the selector owns; it is left initialised (empty). */
void ns_selector_dispose(ns_selector *sel);

/*
 * Parse the string form ("env in (a,b),!skip,tier,x!=y,a==b,n>3"); callers
 * URL-decode first. *out is initialised here (callers need not init it) and
 * left empty on failure. CU_EPARSE with a Kubernetes-like message naming
 * the offending token; keys are qualified names, values label values.
 * s [borrowed].
 */
CU_MUST_CHECK int ns_selector_parse(
    ns_selector *out, const char *s, cu_error *err);

/*
 * Add one validated requirement (kept sorted by key). `field` (e.g.
 * "spec.namespaceSelector.matchExpressions[0]") prefixes error messages;
 * NULL means no prefix. key, values, field [borrowed, copied]. Value count
 * rules: In/NotIn >= 1, Exists/DoesNotExist 0, Equals/DoubleEquals/
 * NotEquals exactly 1, Gt/Lt exactly 1 integer. On failure sel is
 * unchanged.
 */
CU_MUST_CHECK int ns_selector_add(ns_selector *sel, const char *key,
    enum ns_op op, const char *const *values, size_t nvalues, const char *field,
    cu_error *err);

/* Label lookup callback: value of `key` [borrowed, valid until the next
 * call], or NULL when absent. */
typedef const char *(*ns_label_get)(const char *key, void *payload);

bool ns_selector_matches(
    const ns_selector *sel, ns_label_get get, void *payload);
/* kv [borrowed] = k0,v0,k1,v1,... (npairs pairs). */
bool ns_selector_matches_pairs(
    const ns_selector *sel, const char *const *kv, size_t npairs);

/* Canonical string (requirements sorted by key, as Selector.String()).
 * "" for an empty selector and for match_nothing (as labels.Nothing()).
 * [owned: cu_free]; NULL on allocation failure. */
char *ns_selector_string(const ns_selector *sel);

/* Static lowercase operator token as in the string form ("in", "!=", ...). */
const char *ns_op_name(enum ns_op op);

/* Validation helpers, usable by other modules. name [borrowed].
 * Return CU_OK or CU_EINVAL with a message prefixed by `field`. */
CU_MUST_CHECK int ns_validate_label_key(
    const char *key, const char *field, cu_error *err);
CU_MUST_CHECK int ns_validate_label_value(
    const char *value, const char *field, cu_error *err);

/* ---- field selectors (implemented in namespaces/fieldsel.c) ---------- */

struct ns_field_term {
	char *field; /* [owned by the field selector] */
	bool negate; /* true for "!=" */
	char *value; /* [owned by the field selector] unescaped */
};

typedef struct ns_fieldsel {
	struct ns_field_term *terms; /* [owned] */
	size_t nterms;
} ns_fieldsel;

void ns_fieldsel_init(ns_fieldsel *fs);
void ns_fieldsel_dispose(ns_fieldsel *fs);

/* "a=b,c!=d,e==f" with backslash escapes of \ , = in values. Empty string
 * = no terms (matches everything). *out is initialised here and left empty
 * on failure. s [borrowed]. */
CU_MUST_CHECK int ns_fieldsel_parse(
    ns_fieldsel *out, const char *s, cu_error *err);

/* get(field) = the object's value or NULL if it has none. As in
 * Kubernetes (Fields.Get), a missing field reads as "": "x!=v" matches it
 * for any non-empty v, "x=v" does not, and "x=" does. */
bool ns_fieldsel_matches(
    const ns_fieldsel *fs, ns_label_get get, void *payload);

/* The term for `field` with "=" (not negated), or NULL. Lets the API
 * server check e.g. metadata.name against a named watch. [borrowed, valid
 * until fs is disposed]. */
const char *ns_fieldsel_required_value(
    const ns_fieldsel *fs, const char *field);

/* Canonical string with values re-escaped ("a=b,c!=d"). [owned: cu_free];
 * NULL on allocation failure. */
char *ns_fieldsel_string(const ns_fieldsel *fs);

#endif /* CU_NAMESPACES_SELECTOR_H */
