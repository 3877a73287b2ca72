/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/labelselector.h - the JSON codec of metav1.LabelSelector
 * ({matchLabels, matchExpressions}) onto the namespaces/ selector model,
 * with the validation Kubernetes applies (LabelSelectorAsSelector and
 * ValidateLabelSelector), so that errors name the exact field path.
 * Prefix: api_label_selector_.
 */
#ifndef CU_API_LABELSELECTOR_H
#define CU_API_LABELSELECTOR_H

#include <jansson.h>

#include "lib/cu.h"
#include "namespaces/selector.h"

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
    ns_selector *out, const json_t *j, const char *path, cu_error *err);

/*
 * Encode sel [borrowed] as a LabelSelector: Equals/DoubleEquals become
 * matchLabels (a repeated key becomes an In expression), NotEquals becomes
 * NotIn with one value (same meaning), the rest matchExpressions. Gt/Lt
 * have no LabelSelector form: CU_EINVAL. match_nothing encodes as JSON
 * null, an empty selector as {}. *out [owned: json_decref]; untouched on
 * failure.
 */
CU_MUST_CHECK int api_label_selector_encode(
    json_t **out, const ns_selector *sel, cu_error *err);

#endif /* CU_API_LABELSELECTOR_H */
