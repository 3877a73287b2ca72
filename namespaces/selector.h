/* SPDX-License-Identifier: Apache-2.0 */
/*
 * namespaces/selector.h - Kubernetes label selectors and field selectors:
 * parsing of the string forms used in list/watch query parameters and
 * matching against an object's labels/fields. The label-selector value
 * (api_selector), its construction with validation, its canonical string
 * and its JSON codec are api/'s (api/labelselector.h): api/ defines the
 * values, namespaces/ evaluates them, never the other way round.
 *
 * Semantics follow apimachinery pkg/labels/selector.go and
 * pkg/fields/selector.go. Pure logic: libc, lib/ and api/'s selector value.
 * Prefix: ns_ (functions), NS_ (macros).
 */
#ifndef CU_NAMESPACES_SELECTOR_H
#define CU_NAMESPACES_SELECTOR_H

#include <stdbool.h>
#include <stddef.h>

#include "api/labelselector.h"
#include "lib/cu.h"

#define NS_SELECTOR_MAX 65536 /* longest selector string we accept */

/*
 * Parse the string form ("env in (a,b),!skip,tier,x!=y,a==b,n>3"); callers
 * URL-decode first. *out is initialised here (callers need not init it) and
 * left empty on failure. CU_EPARSE with a Kubernetes-like message naming
 * the offending token; keys are qualified names, values label values.
 * s [borrowed].
 */
CU_MUST_CHECK int ns_selector_parse(
    api_selector *out, const char *s, cu_error *err);

/* Label lookup callback: value of `key` [borrowed, valid until the next
 * call], or NULL when absent. */
typedef const char *(*ns_label_get)(const char *key, void *payload);

bool ns_selector_matches(
    const api_selector *sel, ns_label_get get, void *payload);
/* kv [borrowed] = k0,v0,k1,v1,... (npairs pairs). */
bool ns_selector_matches_pairs(
    const api_selector *sel, const char *const *kv, size_t npairs);

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
