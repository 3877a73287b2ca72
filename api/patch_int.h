/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/patch_int.h - helpers shared by the api/patch_*.c files only (never
 * included from outside api/patch_*.c).
 */
#ifndef CU_API_PATCH_INT_H
#define CU_API_PATCH_INT_H

#include <jansson.h>
#include <stddef.h>

/*
 * Deepest nesting a patch may produce. jansson parses at most 2048 levels
 * and all its tree functions recurse, so a patch must not build anything
 * deeper than a parsed document can be.
 */
#define API_PATCH_MAX_DEPTH 2048

/* Nesting depth of v [borrowed]: 1 for a scalar or empty container. */
size_t api_patch_depth(const json_t *v);

/*
 * One object key on the way from the document root to the value being
 * merged, linked child to parent on the C stack: recursion needs no
 * allocation to know where it is.
 */
struct api_patch_seg {
	const char *key;		/* [borrowed] */
	const struct api_patch_seg *up; /* NULL at the root [borrowed] */
};

/*
 * Write the keys of s, root first, each preceded by sep, into buf (always
 * NUL-terminated; "" for the root; truncated with "..." when too long).
 * buf [borrowed]. Returns buf.
 */
char *api_patch_path_format(
    const struct api_patch_seg *s, char sep, char *buf, size_t size);

#endif /* CU_API_PATCH_INT_H */
