/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cel/cel.h - a small evaluator for the subset of the Common Expression
 * Language that Kubernetes objects carry: the x-kubernetes-validations
 * rules of Kueue's CRDs (checked by the local API server) and the device
 * selectors of DRA DeviceClasses, ResourceClaims and Kueue's counter
 * sources (matched by the controller against ResourceSlice devices).
 *
 * The subset: literals (int, double, string, bool, null, lists),
 * variables, field selection, indexing, has(), size(), in, the
 * all/exists/exists_one/filter/map macros, comparisons, arithmetic, the
 * logical operators with CEL's error-absorbing && and ||, the ternary,
 * the string functions startsWith, endsWith, contains, matches,
 * lowerAscii, upperAscii, and Kubernetes quantities (quantity("10Gi"),
 * isQuantity, and on a quantity compareTo, isGreaterThan, isLessThan,
 * asInteger). Anything else is refused with a one-line message naming the
 * construct, at parse time when the grammar is outside the subset, at
 * evaluation time for an unknown function or a type mismatch.
 *
 * Values are jansson values (the JSON of an object is CEL's view of it);
 * a quantity is a JSON object with the single member "@quantity" holding
 * its milli-units (cel_quantity), which a JSON document could forge: the
 * callers build the values quantities are compared with.
 *
 * Pure: no I/O, no global state; any thread, one expression per thread at
 * a time (a parsed expression is read-only during evaluation).
 */
#ifndef CUEUE_CEL_H
#define CUEUE_CEL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "lib/cu.h"

/* At most this many variables per evaluation. */
#define CEL_MAX_VARS 8

/* A parsed expression. */
struct cel_expr;

/* A variable of an evaluation: name [borrowed], v [borrowed] (NULL:
 * declared but absent, "no such attribute" when read). */
struct cel_var {
	const char *name;
	json_t *v;
};

/* What an evaluation sees [borrowed]. */
struct cel_env {
	const struct cel_var *vars; /* n_vars of them, <= CEL_MAX_VARS */
	size_t n_vars;
	/* matches(): 1 match, 0 none, -1 pattern outside what the caller
	 * supports; NULL: matches() is refused. */
	int (*match)(const char *pattern, const char *s);
};

/* Parse src [borrowed]: the expression [owned: cel_free], or NULL with
 * *err [owned: cu_free] saying why (never both, never neither). */
struct cel_expr *cel_parse(const char *src, char **err);
void cel_free(struct cel_expr *cel);
/* Does the expression read oldSelf (a transition rule)? */
bool cel_uses_old(const struct cel_expr *cel);

/* Evaluate cel over env: the value [owned: json_decref], or NULL with
 * *err [owned: cu_free] (never both, never neither). */
json_t *cel_eval(
    const struct cel_expr *cel, const struct cel_env *env, char **err);

/* The CEL value of a quantity of milli milli-units [owned: json_decref],
 * NULL when out of memory. */
json_t *cel_quantity(int64_t milli);
/* Is v a quantity (cel_quantity)? *milli its value when it is. */
bool cel_is_quantity(const json_t *v, int64_t *milli);

#endif
