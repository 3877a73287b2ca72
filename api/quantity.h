/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/quantity.h - Kubernetes resource.Quantity held exactly as int64
 * milli-units, plus the suffix family needed to print it back the way
 * Kubernetes does (Quantity.String / CanonicalizeBytes). Quota arithmetic
 * works on milli-units so that CPU ("500m") and memory ("2Gi") share one
 * representation. libc only. Prefix: api_quantity_ / API_QFMT_.
 */
#ifndef CU_API_QUANTITY_H
#define CU_API_QUANTITY_H

#include <stddef.h>
#include <stdint.h>

#include "lib/cu.h"

/* Longest string api_quantity_format can produce, plus NUL. */
#define API_QUANTITY_STR_MAX 32

enum api_qformat {
	API_QFMT_DECIMAL_SI,	   /* m, "", k, M, G, T, P, E */
	API_QFMT_BINARY_SI,	   /* Ki, Mi, Gi, Ti, Pi, Ei */
	API_QFMT_DECIMAL_EXPONENT, /* e3, E6, ... */
};

struct api_quantity {
	int64_t milli; /* value * 1000, rounded away from zero */
	enum api_qformat format;
};

/*
 * Parse "500m" "1" "1.5" "2Gi" "1e3" "100M" "0.1Ki" "+1" "-2" ".5" ...
 * Sub-milli precision rounds up, away from zero (Quantity.MilliValue
 * semantics: "1u" -> 1, "-1u" -> -1). The format is taken from the suffix
 * as Kubernetes does. CU_EPARSE naming the input; CU_ERANGE when it does
 * not fit int64 milli-units. s [borrowed].
 */
CU_MUST_CHECK int api_quantity_parse(
    struct api_quantity *out, const char *s, cu_error *err);

/*
 * Canonical string as Quantity.String() prints it ("1500m", "2Gi", "1k",
 * "0", "100M", "1e3"). Returns the length it needed (excluding NUL);
 * snprintf truncation contract (buf may be NULL when n == 0).
 */
size_t api_quantity_format(const struct api_quantity *q, char *buf, size_t n);

/* Overflow-checked (CU_ERANGE, *out untouched); result keeps a's format.
 * out may alias a or b. */
CU_MUST_CHECK int api_quantity_add(struct api_quantity *out,
    const struct api_quantity *a, const struct api_quantity *b, cu_error *err);
CU_MUST_CHECK int api_quantity_sub(struct api_quantity *out,
    const struct api_quantity *a, const struct api_quantity *b, cu_error *err);

/* -1, 0, 1 by value (format ignored). */
int api_quantity_cmp(
    const struct api_quantity *a, const struct api_quantity *b);

/* Parse and keep only the milli value. */
CU_MUST_CHECK int api_quantity_parse_milli(
    const char *s, int64_t *milli, cu_error *err);

/* Format a milli value in DecimalSI. Same contract as api_quantity_format. */
size_t api_quantity_format_milli(int64_t milli, char *buf, size_t n);

#endif /* CU_API_QUANTITY_H */
