/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/yaml.h - YAML to JSON (jansson) for configuration files, manifests and
 * Kueue's generator.yaml. Scalars are resolved the way Kubernetes'
 * sigs.k8s.io/yaml does (go-yaml v2 resolution, then JSON): plain
 * true/false/yes/no/on/off are booleans, ~/null/empty are null, decimal,
 * 0x, 0o-less octal ("010" = 8) and float forms are numbers, quoted scalars
 * are always strings. Anchors and aliases are rejected (billion-laughs),
 * as are duplicate keys, and input size, nesting depth and node count are
 * bounded because libyaml 0.2.5 has no nesting limit of its own.
 *
 * Every error message carries a 1-based "line L, column C: " prefix, and
 * api_yaml_load can record the position of every node by JSON path so that
 * a strict loader can report "line 12: unknown field ...".
 * Uses libyaml (event API) and jansson. Prefix: api_yaml_.
 */
#ifndef CU_API_YAML_H
#define CU_API_YAML_H

#include <stddef.h>

#include <jansson.h>

#include "lib/cu.h"

#define API_YAML_DEFAULT_MAX_BYTES ((size_t)8 << 20)
#define API_YAML_DEFAULT_MAX_DEPTH 64u
#define API_YAML_DEFAULT_MAX_NODES ((size_t)1000000)

/* Any zero field (or a NULL limits pointer) takes the default above.
 * max_depth counts nested collections: a top-level map is depth 1. */
struct api_yaml_limits {
	size_t max_bytes;
	unsigned max_depth;
	size_t max_nodes; /* scalars + sequences + mappings (keys included) */
};

/* Opaque index JSON path -> (line, column), both 1-based. */
typedef struct api_yaml_lines api_yaml_lines;

/*
 * Parse exactly one YAML document from buf[0..len) (buf [borrowed]; need not
 * be NUL-terminated). A stream with more than one non-empty document is an
 * error (CU_EPARSE); an empty stream (or only comments) gives JSON null.
 * Errors: CU_EPARSE (syntax, aliases, duplicate keys, non-scalar keys),
 * CU_EUNSUPPORTED (anchors),
 * CU_ETOOBIG (a limit), CU_ENOMEM. On success *out [owned: json_decref];
 * if lines != NULL, *lines [owned: api_yaml_lines_free]. On failure
 * *out and *lines are NULL. lim [borrowed; may be NULL].
 */
CU_MUST_CHECK int api_yaml_load(json_t **out, api_yaml_lines **lines,
    const char *buf, size_t len, const struct api_yaml_limits *lim,
    cu_error *err);

/*
 * All documents of a stream as a JSON array, empty documents skipped.
 * Limits apply to the whole stream (node count is cumulative).
 * *out [owned: json_decref]; NULL on failure.
 */
CU_MUST_CHECK int api_yaml_load_all(json_t **out, const char *buf, size_t len,
    const struct api_yaml_limits *lim, cu_error *err);

/*
 * Line (and column, if column != NULL) of the node at path, e.g.
 * "integrations.frameworks[1]" or
 * "managedJobsNamespaceSelector.matchExpressions[0].key"; "" is the root.
 * For a mapping member the position is that of its key. Keys containing
 * '.', '[' or '\\' are written escaped with a backslash ("a\\.b").
 * Returns 0 (and *column = 0) when the path is unknown or lines is NULL.
 * lines, path [borrowed].
 */
int api_yaml_line(const api_yaml_lines *lines, const char *path, int *column);

/* Free an index; NULL is a no-op. lines [consumed]. */
void api_yaml_lines_free(api_yaml_lines *lines);

/*
 * Read the whole file at path (refusing more than max_bytes) and
 * api_yaml_load it. Every error message starts with the path:
 * "cfg.yaml: line 3, column 1: ...". CU_EIO / CU_ENOTFOUND when the file
 * cannot be read. Ownership as for api_yaml_load; path [borrowed].
 */
CU_MUST_CHECK int api_yaml_load_file(json_t **out, api_yaml_lines **lines,
    const char *path, const struct api_yaml_limits *lim, cu_error *err);

#endif /* CU_API_YAML_H */
