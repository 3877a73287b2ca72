/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/keys.h - the controller's keyed bookkeeping: ctl_keys, a
 * map (lib/cu.h cu_map) from a tuple of strings - a uid, a {namespace,
 * name}, or an object key {kind, namespace, name} - to a small owned
 * entry (a number, up to two strings), that also remembers insertion
 * order: loops that act on what they find (dirty sets, retries, due
 * pending reasons) walk entries in the order they were first added,
 * so what is done first does not depend on hashing.
 *
 * Object keys name what the controller writes and looks at again: the
 * first part is the kind (CTL_KIND_*), then the namespace ("" when
 * cluster-scoped) and the name; nothing is glued into one string.
 *
 * Event-loop thread only. Prefix ctl_keys_, CTL_K, CTL_KIND_.
 */
#ifndef CU_CONTROLLER_KEYS_H
#define CU_CONTROLLER_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/cu.h"

/* The kinds of object keys (their first part). */
#define CTL_KIND_WL "Workload"
#define CTL_KIND_JOB "Job"
#define CTL_KIND_JOBSET "JobSet"
/* A pod group's key: {CTL_KIND_POD_GROUP, ns, pod-group-name}. */
#define CTL_KIND_POD_GROUP "PodGroup"
#define CTL_KIND_CQ "ClusterQueue"
#define CTL_KIND_LQ "LocalQueue"
#define CTL_KIND_RF "ResourceFlavor"
#define CTL_KIND_COHORT "Cohort"

/* Key tuples as compound literals [borrowed for the call]. */
#define CTL_K1(a) ((const char *const[]){(a)})
#define CTL_K2(a, b) ((const char *const[]){(a), (b)})
#define CTL_K3(a, b, c) ((const char *const[]){(a), (b), (c)})

/* One entry. k, s [owned by the ctl_keys]; the caller sets n and s. */
struct ctl_kent {
	char *k[3];   /* the key's parts (nparts of them; the rest NULL), in
		       * the entry's own allocation: never freed alone */
	uint64_t seq; /* when the key was added (insertion order) */
	int64_t n;    /* a number (ms, ns, a generation...), 0 when new */
	char *s[2];   /* strings [owned: cu_free, or ctl_keys_set_str] */
};

typedef struct ctl_keys {
	cu_map map;	 /* key -> struct ctl_kent [owned] */
	unsigned nparts; /* 1: a string map (cu_map_init_str), 2 or 3 */
	uint64_t seq;	 /* the next entry's seq */
} ctl_keys;

/* An empty set of nparts-string keys (1 to 3); allocates nothing. */
void ctl_keys_init(ctl_keys *s, unsigned nparts);
/* Free every entry and the map; s is then empty and may be used again. */
void ctl_keys_dispose(ctl_keys *s);
/* The entry of key [borrowed], or NULL. */
struct ctl_kent *ctl_keys_get(const ctl_keys *s, const char *const *key);
/* The entry of key [borrowed; copied], added (n 0, s NULL, last in
 * order) when absent; an existing key keeps its place. NULL: out of
 * memory (logged; s unchanged). */
struct ctl_kent *ctl_keys_put(ctl_keys *s, const char *const *key);
/* Remove key's entry (freed); false if absent. */
bool ctl_keys_del(ctl_keys *s, const char *const *key);
static inline size_t ctl_keys_count(const ctl_keys *s)
{
	return cu_map_count(&s->map);
}
/* Replace e->s[i] by a copy of str [borrowed; may be NULL]. CU_ENOMEM
 * (e->s[i] is then NULL). */
int ctl_keys_set_str(struct ctl_kent *e, unsigned i, const char *str);
/*
 * The entries in insertion order: *out [owned: cu_free; the entries
 * borrowed], *n of them. A loop over it may delete the entry it is at
 * (ctl_keys_del), never another one, and may add keys (not visited).
 * CU_ENOMEM (logged; *out NULL, *n 0).
 */
int ctl_keys_ordered(const ctl_keys *s, struct ctl_kent ***out, size_t *n);
/* Move src's entries into dst (disposed first); src is left empty. */
void ctl_keys_move(ctl_keys *dst, ctl_keys *src);

#endif /* CU_CONTROLLER_KEYS_H */
