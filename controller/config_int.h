/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/config_int.h - the configuration loader's internal header:
 * the decoding context, field paths and the helpers its files call across
 * each other. Only the loader's own files include it; the public
 * interface is config.h.
 *
 * Files and what they own:
 *   config.c          the entry points: durations, loading a file or a
 *                     buffer (version detection), dispose, the operator
 *                     namespace
 *   config_schema.c   the field table, the strict schema walk, field
 *                     paths, error and warning messages, typed readers of
 *                     checked values
 *   config_sections.c each section's values with Kueue's defaults, and
 *                     the per-field validation done while reading them
 *   config_checks.c   name and address validators, the semantic checks
 *                     Kueue makes on sections cueue does not act on, the
 *                     "not acted on" warnings
 *   config_print.c    the effective configuration as v1beta2 YAML
 *                     (--check-config)
 *   config_resources.c the resources section (excluded prefixes,
 *                     transformations, quotaCheckStrategy): loading,
 *                     printing, handing it to the quota model; and
 *                     objectRetentionPolicies
 *   config_dra.c      the DRA feature gates and deviceClassMappings
 *   config_labels.c   metrics.customLabels
 *
 * Prefix: ctl_config_.
 */
#ifndef CU_CONTROLLER_CONFIG_INT_H
#define CU_CONTROLLER_CONFIG_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "api/yaml.h"
#include "controller/config.h"

/* Go's time units, in nanoseconds. */
#define NS_PER_US INT64_C(1000)
#define NS_PER_MS CU_NS_PER_MS
#define NS_PER_S CU_NS_PER_S
#define NS_PER_M (60 * NS_PER_S)
#define NS_PER_H (60 * NS_PER_M)

/* API versions as bits (the schema marks the versions having a field). */
#define CTL_CONFIG_VER_1 1u /* config.kueue.x-k8s.io/v1beta1 */
#define CTL_CONFIG_VER_2 2u /* config.kueue.x-k8s.io/v1beta2 */

#define CTL_CONFIG_PATH_MAX 512

/* A field path in two spellings: `disp` for messages (Kubernetes field
 * path style, map keys in brackets) and `look` for api_yaml_line (keys
 * with '.', '[' or '\\' backslash-escaped). Truncation only costs the
 * line number, never memory safety. */
struct ctl_config_path {
	char disp[CTL_CONFIG_PATH_MAX];
	char look[CTL_CONFIG_PATH_MAX];
};

/* Every error of one run, in the order found: each a full message line
 * ("name: line N: path: what") [owned]. */
struct ctl_config_errs {
	char **lines;
	size_t n;
};

/* One decoding run. Borrowed pointers, none owned. */
struct ctl_config_dec {
	const char *name; /* message prefix, may be NULL */
	const api_yaml_lines *lines;
	unsigned version; /* CTL_CONFIG_VER_1 or CTL_CONFIG_VER_2 */
	struct ctl_config *c;
	cu_error *err;		      /* the first error */
	struct ctl_config_errs *errs; /* NULL: first error only */
};

/* ---- config_schema.c: strict decoding and messages ------------------ */

/* Strictly check root against the Configuration schema of d->version:
 * unknown fields and wrong types fail with path and line. */
int ctl_config_check_schema(const struct ctl_config_dec *d, const json_t *root);

/* Record the error "name: line N: <fmt>" (line of `look`, when known;
 * look may be NULL) in d->errs and, when it is the first, in d->err;
 * return code. The loaders go on after an error so that one run reports
 * them all; only CU_ENOMEM stops them. */
__attribute__((format(printf, 4, 5))) int ctl_config_fail(
    const struct ctl_config_dec *d, int code, const char *look, const char *fmt,
    ...);

/* The first error of a section that goes on after its errors. */
static inline int ctl_config_keep(int first, int rc)
{
	return first != CU_OK ? first : rc;
}

/* Append a warning "name: line N: disp: what" to d->c->warnings (a copy;
 * what stays the caller's). */
int ctl_config_add_warning(const struct ctl_config_dec *d, const char *look,
    const char *disp, const char *what);

/* Field paths: dst = parent + key (a map key when map_key), dst =
 * parent + [i], p = the fixed dotted path s. */
void ctl_config_path_child(struct ctl_config_path *dst,
    const struct ctl_config_path *parent, const char *key, bool map_key);
void ctl_config_path_index(struct ctl_config_path *dst,
    const struct ctl_config_path *parent, size_t i);
void ctl_config_path_set(struct ctl_config_path *p, const char *s);

/* "a mapping", "a string", ... for messages (static storage). */
const char *ctl_config_type_name(const json_t *j);

/* Member k of o (borrowed), NULL when o is NULL, k is absent or k is
 * null. */
json_t *ctl_config_jget(const json_t *o, const char *k);

/* Readers of values check() accepted, with Kueue's defaulting: *dst a
 * copy (caller owns; untouched when no value and def is NULL), an empty
 * string taking def as Go's cmp.Or does; a zero duration takes def. */
int ctl_config_dup_str(const struct ctl_config_dec *d, char **dst,
    const json_t *o, const char *k, const char *def);
bool ctl_config_get_bool(const json_t *o, const char *k, bool def);
int64_t ctl_config_get_dur(const json_t *o, const char *k, int64_t def);

/* Append a copy of s to the string array *arr of *n entries. */
int ctl_config_push_str(
    const struct ctl_config_dec *d, char ***arr, size_t *n, const char *s);

/* Decode a LabelSelector at path, errors in the loader's format. */
int ctl_config_decode_selector(const struct ctl_config_dec *d,
    api_selector *out, const json_t *j, const char *path);

/* ---- config_sections.c: values with Kueue's defaults ---------------- */

/* Fill d->c from root (already schema-checked), validating as Kueue
 * does, then add the warnings (ctl_config_warn_ignored). */
int ctl_config_load_root(const struct ctl_config_dec *d, const json_t *root);

/* ---- config_checks.c: validators and semantic checks ---------------- */

bool ctl_config_is_dns1123_label(const char *s);
bool ctl_config_is_dns1035_label(const char *s);
bool ctl_config_is_dns1123_subdomain(const char *s);
/* "host:port", "[v6]:port" or ":port" with port 0..65535, or "0". */
bool ctl_config_valid_bind_address(const char *s);

/* Kueue's checks on fairSharing, resources and featureGates, and one
 * warning per set field cueue does not act on (controller/compat.c). */
int ctl_config_warn_ignored(const struct ctl_config_dec *d, const json_t *root);

/* ---- config_resources.c: the resources section ---------------------- */

int ctl_config_load_resources(
    const struct ctl_config_dec *d, const json_t *root);
void ctl_config_dispose_resources(struct ctl_config *c);
/* [owned] resources in v1beta2 form, json null when unset, NULL when out
 * of memory. */
json_t *ctl_config_resources_json(const struct ctl_config *c);
/* ---- config_labels.c: metrics.customLabels --------------------------- */

int ctl_config_load_labels(const struct ctl_config_dec *d, const json_t *root);
void ctl_config_dispose_labels(struct ctl_config *c);
/* [owned] customLabels as a JSON array; NULL when out of memory. */
json_t *ctl_config_labels_json(const struct ctl_config *c);

/* ---- config_dra.c: DRA gates and deviceClassMappings ---------------- */

int ctl_config_load_dra(const struct ctl_config_dec *d, const json_t *root);
void ctl_config_dispose_dra(struct ctl_config *c);
/* [owned] deviceClassMappings as a JSON array; NULL when out of memory. */
json_t *ctl_config_dra_json(const struct ctl_config *c);

/* objectRetentionPolicies: load (negative durations refused) and print
 * (json null when unset, NULL when out of memory). */
/* config_mk.c: the multiKueue section (Kueue's defaults when absent). */
int ctl_config_load_mk(const struct ctl_config_dec *d, const json_t *root);
void ctl_config_dispose_mk(struct ctl_config *c);

int ctl_config_load_retention(
    const struct ctl_config_dec *d, const json_t *root);
json_t *ctl_config_retention_json(const struct ctl_config *c);

#endif
