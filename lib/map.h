/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/map.h - the project's one hash map: open addressing, keys borrowed
 * from the values, typed wrappers. Use it instead of a hand-written table
 * (and never a jansson object as a map or set).
 *
 * Why not a library: none of the stack (libc, jansson, libcurl, libev,
 * SQLite, libyaml, libmicrohttpd, OpenSSL) offers a typed map; POSIX
 * hsearch is one global table of string keys without delete, and jansson
 * objects copy every key and hold json_t values only.
 *
 * Keys, by the kind chosen at init:
 *   - CU_MAP_STR: a NUL-terminated string, `const char *`;
 *   - CU_MAP_PARTS: a tuple of nparts strings, `const char *const *`
 *     (an array of nparts pointers), e.g. {namespace, name}: parts are
 *     compared one by one, so ("a/b", "c") and ("a", "b/c") are two keys,
 *     and nothing is glued into a prefixed string;
 *   - custom: any pointer, with the caller's hash and equality
 *     (cu_map_init_custom; tests use it to force collisions).
 *
 * Ownership: the map owns its slot array only. Keys and values are
 * [borrowed]: a stored key (the string, or the parts array and its
 * strings) must stay valid and unchanged while its entry is in the map,
 * which is easiest when the key lives inside the value (wl->uid, an
 * entry's {ns, name} array). A set of owned strings stores the copy as
 * both key and value, and frees what cu_map_del returns.
 *
 * Stored keys must not be NULL (a 0-part map may be given NULL to look
 * up; its only key is the empty tuple). Values must not be NULL.
 *
 * Iteration visits every entry once, in no particular order (slot
 * order; deterministic for a given history of operations). Deleting any
 * entry during an iteration is allowed (deletion leaves a tombstone,
 * nothing moves); inserting a new key is not (it may rehash), replacing
 * the value of an existing key is.
 *
 * Allocation: only growth allocates (cu_calloc); a failed growth returns
 * CU_ENOMEM and leaves the map as it was. cu_map_reserve makes the next
 * insertions infallible. Deletion never allocates and never shrinks.
 *
 * Not thread-safe; the hash is not keyed (a fixed multiply-fold over
 * 8-byte words): keys come from the API server or the configuration, not
 * from an adversary able to choose colliding names at scale. Prefix:
 * cu_map_, CU_MAP_.
 */
#ifndef CU_LIB_MAP_H
#define CU_LIB_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/cu.h"

enum cu_map_kind {
	CU_MAP_STR = 0, /* key: const char * */
	CU_MAP_PARTS,	/* key: const char *const *, nparts strings */
	CU_MAP_CUSTOM,	/* key: const void *, hash and eq given */
};

struct cu_map_slot {
	uint64_t hash;
	const void *key; /* NULL: empty; CU_MAP_TOMB: deleted */
	void *val;
};

/* Embed by value; zero-initialised is not enough: call cu_map_init. */
typedef struct cu_map {
	struct cu_map_slot *slots; /* owned; cap slots, NULL while cap == 0 */
	size_t cap;		   /* 0 or a power of two */
	size_t n;		   /* live entries */
	size_t tombs;		   /* deleted slots not yet reused */
	enum cu_map_kind kind;
	unsigned nparts;			  /* CU_MAP_PARTS */
	uint64_t (*hash)(const void *key);	  /* CU_MAP_CUSTOM */
	bool (*eq)(const void *a, const void *b); /* CU_MAP_CUSTOM */
} cu_map;

/* Iterator: set to CU_MAP_ITER_INIT, then call cu_map_next. */
typedef size_t cu_map_iter;
#define CU_MAP_ITER_INIT ((cu_map_iter)0)

/* An empty map; allocates nothing. */
void cu_map_init_str(cu_map *m);
void cu_map_init_parts(cu_map *m, unsigned nparts);
void cu_map_init_custom(cu_map *m, uint64_t (*hash)(const void *key),
    bool (*eq)(const void *a, const void *b));
/* Free the slot array (not keys or values); m is then empty and may be
 * used again with the same kind. */
void cu_map_dispose(cu_map *m);

/* The value stored for key [borrowed, only during the call], or NULL. */
void *cu_map_get(const cu_map *m, const void *key);

/*
 * Store val under key (both [borrowed], see above). If key is present
 * its value and stored key are replaced (the new key pointer is kept,
 * so the old value may then be freed) and *old, if old is not NULL, gets
 * the previous value; else *old = NULL. CU_ENOMEM (only when a new key
 * needs growth; the map is unchanged).
 */
CU_MUST_CHECK int cu_map_put(cu_map *m, const void *key, void *val, void **old);

/* Remove key; returns its value (the caller's again) or NULL. */
void *cu_map_del(cu_map *m, const void *key);

/* Make room so that the next `extra` insertions of new keys cannot fail.
 * CU_ENOMEM (map unchanged). */
CU_MUST_CHECK int cu_map_reserve(cu_map *m, size_t extra);

static inline size_t cu_map_count(const cu_map *m)
{
	return m->n;
}

/* The deleted-slot marker (internal). */
extern const char cu_map_tomb_;
#define CU_MAP_TOMB ((const void *)&cu_map_tomb_)

/* Next entry: true with *key and *val set (either may be NULL to skip),
 * false at the end. Inline: callers walk whole maps in hot loops. */
static inline bool cu_map_next(
    const cu_map *m, cu_map_iter *it, const void **key, void **val)
{
	size_t i;

	for (i = *it; i < m->cap; i++) {
		const struct cu_map_slot *s = &m->slots[i];

		if (s->key == NULL || s->key == CU_MAP_TOMB)
			continue;
		*it = i + 1;
		if (key != NULL)
			*key = s->key;
		if (val != NULL)
			*val = s->val;
		return true;
	}
	*it = m->cap;
	return false;
}

/* The hashes the built-in kinds use (64 bits; each part's length is
 * hashed with it, so the tuple's encoding is unambiguous). */
uint64_t cu_map_hash_str(const char *s);
uint64_t cu_map_hash_parts(const char *const *parts, unsigned nparts);

/*
 * Typed maps: CU_MAP_TYPED(name, K, V) declares `name`, a map with keys
 * of type K (`const char *` for CU_MAP_STR, `const char *const *` for
 * CU_MAP_PARTS) and values of type V * (V a complete or incomplete
 * type), and static inline functions that check both:
 *
 *   void name_init_str(name *t);             (or name_init_parts(t, n))
 *   void name_dispose(name *t);
 *   V *name_get(const name *t, K key);
 *   int name_put(name *t, K key, V *val);    CU_ENOMEM; replaces
 *   int name_put_old(name *t, K key, V *val, V **old);
 *   V *name_del(name *t, K key);
 *   int name_reserve(name *t, size_t extra);
 *   size_t name_count(const name *t);
 *   bool name_next(const name *t, cu_map_iter *it, V **val);
 *
 *   CU_MAP_TYPED(wl_index, const char *, struct que_wl);
 *   wl_index idx; struct que_wl *wl; cu_map_iter it = CU_MAP_ITER_INIT;
 *   wl_index_init_str(&idx);
 *   if (wl_index_put(&idx, wl->uid, wl)) ...;
 *   while (wl_index_next(&idx, &it, &wl)) ...;
 */
#define CU_MAP_TYPED(name, K, V)                                               \
	typedef struct name {                                                  \
		cu_map map;                                                    \
	} name;                                                                \
	static inline void name##_init_str(name *t)                            \
	{                                                                      \
		cu_map_init_str(&t->map);                                      \
	}                                                                      \
	static inline void name##_init_parts(name *t, unsigned nparts)         \
	{                                                                      \
		cu_map_init_parts(&t->map, nparts);                            \
	}                                                                      \
	static inline void name##_dispose(name *t)                             \
	{                                                                      \
		cu_map_dispose(&t->map);                                       \
	}                                                                      \
	static inline V *name##_get(const name *t, K key)                      \
	{                                                                      \
		return (V *)cu_map_get(&t->map, (const void *)key);            \
	}                                                                      \
	static inline CU_MUST_CHECK int name##_put_old(                        \
	    name *t, K key, V *val, V **old)                                   \
	{                                                                      \
		void *o = NULL;                                                \
		int rc = cu_map_put(&t->map, (const void *)key, val, &o);      \
		if (old != NULL)                                               \
			*old = (V *)o;                                         \
		return rc;                                                     \
	}                                                                      \
	static inline CU_MUST_CHECK int name##_put(name *t, K key, V *val)     \
	{                                                                      \
		return cu_map_put(&t->map, (const void *)key, val, NULL);      \
	}                                                                      \
	static inline V *name##_del(name *t, K key)                            \
	{                                                                      \
		return (V *)cu_map_del(&t->map, (const void *)key);            \
	}                                                                      \
	static inline CU_MUST_CHECK int name##_reserve(name *t, size_t extra)  \
	{                                                                      \
		return cu_map_reserve(&t->map, extra);                         \
	}                                                                      \
	static inline size_t name##_count(const name *t)                       \
	{                                                                      \
		return cu_map_count(&t->map);                                  \
	}                                                                      \
	static inline bool name##_next(                                        \
	    const name *t, cu_map_iter *it, V **val)                           \
	{                                                                      \
		void *v = NULL;                                                \
		bool more = cu_map_next(&t->map, it, NULL, &v);                \
		*val = (V *)v;                                                 \
		return more;                                                   \
	}                                                                      \
	typedef int name##_semicolon_

#endif /* CU_LIB_MAP_H */
