/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/patch.h - the three Kubernetes PATCH algorithms on jansson documents:
 * RFC 6902 JSON Patch, RFC 7386 JSON Merge Patch and the strategic merge
 * patch (SMP) of built-in kinds, plus the merge-patch diff the controller
 * uses to build minimal writes.
 *
 * The local API server (tests/apiserver) calls these for PATCH requests and
 * maps CU_EPARSE to 400 and CU_EINVAL to 422; the controller calls
 * api_merge_patch_diff() so that it never sends a write that changes
 * nothing (docs/architecture.md lesson 4).
 *
 * Common contract of the appliers: inputs are [borrowed] and never
 * modified; on success *out is a NEW document [owned: json_decref]; on
 * failure *out is NULL and err (may be NULL) holds one line naming the
 * failing op or field path. Pure functions: no I/O, any thread.
 */
#ifndef CU_API_PATCH_H
#define CU_API_PATCH_H

#include <jansson.h>

#include "lib/cu.h"

/* Kubernetes refuses JSON patches with more operations than this. */
#define API_JSON_PATCH_MAX_OPS 10000

/*
 * RFC 6902 JSON Patch. `patch` must be an array of operation objects.
 * The whole patch is validated before anything is applied, so a malformed
 * patch is always reported as such even if an earlier op would fail.
 * Returns:
 *   CU_EPARSE  the patch document is malformed: not an array, an op that is
 *              not an object or misses op/path/from/value, unknown op, bad
 *              JSON pointer syntax, more than API_JSON_PATCH_MAX_OPS ops;
 *   CU_EINVAL  well-formed but not applicable to doc: path missing, failed
 *              "test", array index out of range, "add" without a parent,
 *              "move" into its own child, result nesting or copied size
 *              over the limits;
 *   CU_ENOMEM.
 * The message names the op index and path: "op 2 (test /spec/size): ...".
 */
CU_MUST_CHECK int api_json_patch_apply(
    json_t **out, const json_t *doc, const json_t *patch, cu_error *err);

/*
 * RFC 7386 JSON Merge Patch: objects merge recursively, null deletes a
 * member, arrays and every other non-object patch value replace the target
 * wholesale. Never fails except with CU_ENOMEM.
 */
CU_MUST_CHECK int api_merge_patch_apply(
    json_t **out, const json_t *doc, const json_t *patch, cu_error *err);

/*
 * Strategic merge patch schema: which lists of a kind are not atomic.
 *
 * A field path is the dotted chain of object keys from the document root;
 * list items add no segment, so "spec.containers.env" is the env list of
 * every container. A kind's schema is a set of mounts: each mount places a
 * table of rules (paths relative to the mount) under a prefix, so that the
 * PodSpec table serves both "spec" (Pod) and "spec.template.spec" (Job).
 * Lists not named by any rule are atomic (replaced wholesale).
 */
struct api_smp_rule {
	/* Path relative to the mount [borrowed; static]; NULL ends a table. */
	const char *path;
	/* Key whose value identifies a list item (items are merged, the
	 * "$patch": "delete" item removes one); NULL makes the list a merged
	 * primitive list (set union, as metadata.finalizers)
	 * [borrowed; static]. */
	const char *merge_key;
};

struct api_smp_mount {
	/* Dotted prefix, "" for the root [borrowed; static]; NULL ends the
	 * mount table. */
	const char *prefix;
	/* Rules below the prefix [borrowed; static]. */
	const struct api_smp_rule *rules;
};

struct api_smp_schema {
	const char *group; /* "" = core [borrowed; static] */
	const char *kind;  /* [borrowed; static] */
	/* Terminated by an entry whose prefix is NULL [borrowed; static]. */
	const struct api_smp_mount *mounts;
};

/*
 * Strategic merge patch (Kubernetes strategicpatch semantics) of `patch`
 * (an object) into `doc` (an object), with list strategies from `schema`
 * [borrowed; NULL = every list atomic, i.e. merge patch semantics plus the
 * directives]. Directives: "$patch": "replace"|"merge"|"delete" in maps
 * and merge-keyed list items, "$retainKeys", "$deleteFromPrimitiveList/F",
 * "$setElementOrder/F". No directive key is ever left in the result.
 * Returns CU_EPARSE for a malformed patch (not an object, bad directive
 * value or type), CU_EINVAL when doc is not an object, a merge-keyed list
 * item lacks its key, or the patch sets keys outside its "$retainKeys";
 * CU_ENOMEM.
 */
CU_MUST_CHECK int api_smp_apply(json_t **out, const json_t *doc,
    const json_t *patch, const struct api_smp_schema *schema, cu_error *err);

/*
 * The SMP schema of a built-in kind, or NULL when the kind has none (CRs:
 * the API server answers 415 to SMP for those). group "" = core. Covers
 * core/v1 ConfigMap, Secret, Namespace, Event, Pod, ServiceAccount;
 * batch/v1 Job; coordination.k8s.io/v1 Lease;
 * admissionregistration.k8s.io/v1 Mutating- and
 * ValidatingWebhookConfiguration. group, kind [borrowed]. Returns a static
 * schema [borrowed].
 */
const struct api_smp_schema *api_smp_schema_for(
    const char *group, const char *kind);

/*
 * The RFC 7386 merge patch that turns `from` into `to` (both [borrowed]):
 * api_merge_patch_apply(from, *out) is json_equal to `to`. *out is NULL
 * (and CU_OK returned) when from and to are equal, so callers can skip
 * no-op writes; otherwise a new document [owned: json_decref]. Returns
 * CU_EINVAL when `to` holds a null object member that a merge patch cannot
 * express (null means delete) at a place the patch must write; CU_ENOMEM.
 */
CU_MUST_CHECK int api_merge_patch_diff(
    json_t **out, const json_t *from, const json_t *to, cu_error *err);

/*
 * RFC 6901 escape of one object key ('~' -> "~0", '/' -> "~1") for use as
 * a JSON pointer token. key [borrowed]. Returns a new string
 * [owned: cu_free], NULL on allocation failure.
 */
char *api_json_pointer_escape(const char *key);

#endif /* CU_API_PATCH_H */
