/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/map.c - the hash map of lib/cu.h: open addressing with linear
 * probing over one array of {hash, key, value} slots, a power-of-two
 * capacity kept at most 3/4 full (tombstones included), tombstones on
 * deletion so that nothing moves while a caller iterates.
 *
 * Open addressing rather than chains: one allocation per map instead of
 * one per entry, and a probe reads adjacent slots whose stored hash
 * rules out almost every key comparison. Each slot keeps the full hash,
 * so growth never re-reads a key.
 *
 * A deleted slot becomes empty at once when the slot after it is empty
 * (no probe can pass through it then), and so do the tombstones just
 * before it; the rest are dropped by the next rehash.
 */
#include <string.h>

#include "lib/cu.h"

#define HASH_SEED 0x243f6a8885a308d3ULL /* pi: any odd constant */
#define HASH_MUL 0x9e3779b97f4a7c15ULL	/* 2^64 / golden ratio */
#define MIN_CAP 8

/* The deleted-slot marker: an address no key can have. */
const char cu_map_tomb_;
#define TOMB CU_MAP_TOMB

/* Hash n bytes into h, eight at a time (strlen, then whole words: the
 * byte-at-a-time FNV loop is a chain of dependent multiplies, four
 * times slower on names of 20-60 bytes). Each step multiplies and folds
 * the high half down, so every input bit reaches the low bits the slot
 * index is taken from. The length goes into the last word, so ("ab",
 * "c") and ("a", "bc") hash apart. */
static inline uint64_t hash_bytes(uint64_t h, const char *p, size_t n)
{
	size_t len = n;
	uint64_t w;

	for (; n >= 8; p += 8, n -= 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * HASH_MUL;
		h ^= h >> 32;
	}
	/* the last 0..7 bytes, little-endian, without a memcpy call */
	for (w = 0; n > 0; n--)
		w = (w << 8) | (unsigned char)p[n - 1];
	h = (h ^ w ^ ((uint64_t)len << 56)) * HASH_MUL;
	return h ^ (h >> 32);
}

/* Final avalanche (MurmurHash3's fmix64 constants). */
static inline uint64_t hash_final(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

static inline uint64_t hash_str(const char *s)
{
	return hash_final(hash_bytes(HASH_SEED, s, strlen(s)));
}

static inline uint64_t hash_parts(const char *const *parts, unsigned nparts)
{
	uint64_t h = HASH_SEED;
	unsigned i;

	for (i = 0; i < nparts; i++)
		h = hash_bytes(h, parts[i], strlen(parts[i]));
	return hash_final(h);
}

uint64_t cu_map_hash_str(const char *s)
{
	return hash_str(s);
}

uint64_t cu_map_hash_parts(const char *const *parts, unsigned nparts)
{
	return hash_parts(parts, nparts);
}

static void init(cu_map *m, enum cu_map_kind kind)
{
	memset(m, 0, sizeof(*m));
	m->kind = kind;
}

void cu_map_init_str(cu_map *m)
{
	init(m, CU_MAP_STR);
}

void cu_map_init_parts(cu_map *m, unsigned nparts)
{
	init(m, CU_MAP_PARTS);
	m->nparts = nparts;
}

void cu_map_init_custom(cu_map *m, uint64_t (*hash)(const void *key),
    bool (*eq)(const void *a, const void *b))
{
	init(m, CU_MAP_CUSTOM);
	m->hash = hash;
	m->eq = eq;
}

void cu_map_dispose(cu_map *m)
{
	cu_free(m->slots);
	m->slots = NULL;
	m->cap = 0;
	m->n = 0;
	m->tombs = 0;
}

/* key_eq and find_in take the kind as a constant where they are called,
 * so that each kind gets a probe loop of its own with the comparison
 * inlined (always_inline: the switch must not stay in the loop). */
#define HOT static inline __attribute__((always_inline))

HOT uint64_t hash_of(const cu_map *m, const void *key)
{
	switch (m->kind) {
	case CU_MAP_STR:
		return hash_str(key);
	case CU_MAP_PARTS:
		return hash_parts(key, m->nparts);
	case CU_MAP_CUSTOM:
		break;
	}
	return m->hash(key);
}

HOT bool key_eq(
    const cu_map *m, enum cu_map_kind kind, const void *a, const void *b)
{
	const char *const *pa, *const *pb;
	unsigned i;

	switch (kind) {
	case CU_MAP_STR:
		return strcmp(a, b) == 0;
	case CU_MAP_PARTS:
		pa = a;
		pb = b;
		for (i = 0; i < m->nparts; i++)
			if (strcmp(pa[i], pb[i]) != 0)
				return false;
		return true;
	case CU_MAP_CUSTOM:
		break;
	}
	return m->eq(a, b);
}

HOT struct cu_map_slot *find_in(
    const cu_map *m, enum cu_map_kind kind, const void *key, uint64_t h)
{
	size_t mask = m->cap - 1, i;

	for (i = (size_t)h & mask;; i = (i + 1) & mask) {
		struct cu_map_slot *s = &m->slots[i];

		if (s->key == NULL)
			return NULL;
		if (s->hash == h && s->key != TOMB &&
		    key_eq(m, kind, key, s->key))
			return s;
	}
}

/* The live slot holding key (hash h), or NULL. */
static struct cu_map_slot *find(const cu_map *m, const void *key, uint64_t h)
{
	if (m->n == 0)
		return NULL;
	switch (m->kind) {
	case CU_MAP_STR:
		return find_in(m, CU_MAP_STR, key, h);
	case CU_MAP_PARTS:
		return find_in(m, CU_MAP_PARTS, key, h);
	case CU_MAP_CUSTOM:
		break;
	}
	return find_in(m, CU_MAP_CUSTOM, key, h);
}

/* The first empty slot of h's probe sequence (no tombstone wanted). */
static struct cu_map_slot *empty_slot(
    struct cu_map_slot *slots, size_t cap, uint64_t h)
{
	size_t mask = cap - 1, i;

	for (i = (size_t)h & mask; slots[i].key != NULL; i = (i + 1) & mask)
		;
	return &slots[i];
}

/* Move every entry to a new array sized for `need` entries at most half
 * full. CU_ENOMEM leaves m untouched. */
static int rehash(cu_map *m, size_t need)
{
	struct cu_map_slot *ns;
	size_t cap = MIN_CAP, i;

	if (need > SIZE_MAX / 4 / sizeof(*ns))
		return CU_ENOMEM;
	while (cap < need * 2)
		cap *= 2;
	ns = cu_calloc(cap, sizeof(*ns));
	if (ns == NULL)
		return CU_ENOMEM;
	for (i = 0; i < m->cap; i++) {
		const struct cu_map_slot *s = &m->slots[i];

		if (s->key != NULL && s->key != TOMB)
			*empty_slot(ns, cap, s->hash) = *s;
	}
	cu_free(m->slots);
	m->slots = ns;
	m->cap = cap;
	m->tombs = 0;
	return CU_OK;
}

/* True when one more slot may be taken from the empty ones. */
static bool has_room(const cu_map *m, size_t extra)
{
	return m->cap > 0 && (m->n + m->tombs + extra) <= m->cap / 4 * 3;
}

void *cu_map_get(const cu_map *m, const void *key)
{
	const struct cu_map_slot *s;

	if (m->n == 0)
		return NULL;
	/* one probe loop per kind, hash and comparison inlined */
	switch (m->kind) {
	case CU_MAP_STR:
		s = find_in(m, CU_MAP_STR, key, hash_str(key));
		break;
	case CU_MAP_PARTS:
		s = find_in(m, CU_MAP_PARTS, key, hash_parts(key, m->nparts));
		break;
	default:
		s = find_in(m, CU_MAP_CUSTOM, key, m->hash(key));
		break;
	}
	return s != NULL ? s->val : NULL;
}

int cu_map_put(cu_map *m, const void *key, void *val, void **old)
{
	uint64_t h = hash_of(m, key);
	struct cu_map_slot *s, *tomb = NULL;
	size_t mask, i;

	if (old != NULL)
		*old = NULL;
	if (m->cap > 0) {
		mask = m->cap - 1;
		for (i = (size_t)h & mask;; i = (i + 1) & mask) {
			s = &m->slots[i];
			if (s->key == NULL)
				break;
			if (s->key == TOMB) {
				if (tomb == NULL)
					tomb = s;
				continue;
			}
			if (s->hash == h && key_eq(m, m->kind, key, s->key)) {
				if (old != NULL)
					*old = s->val;
				s->key = key;
				s->val = val;
				return CU_OK;
			}
		}
	}
	if (tomb != NULL) {
		s = tomb;
		m->tombs--;
	} else {
		if (!has_room(m, 1)) {
			int rc = rehash(m, m->n + 1);

			if (rc != CU_OK)
				return rc;
		}
		s = empty_slot(m->slots, m->cap, h);
	}
	s->hash = h;
	s->key = key;
	s->val = val;
	m->n++;
	return CU_OK;
}

void *cu_map_del(cu_map *m, const void *key)
{
	struct cu_map_slot *s;
	size_t mask, i;
	void *val;

	if (m->n == 0)
		return NULL;
	s = find(m, key, hash_of(m, key));
	if (s == NULL)
		return NULL;
	val = s->val;
	s->val = NULL;
	m->n--;
	mask = m->cap - 1;
	i = (size_t)(s - m->slots);
	if (m->slots[(i + 1) & mask].key != NULL) {
		s->key = TOMB;
		m->tombs++;
		return val;
	}
	/* Nothing probes past an empty slot: this one and the tombstones
	 * right before it can be empty too. */
	s->key = NULL;
	for (i = (i - 1) & mask; m->slots[i].key == TOMB; i = (i - 1) & mask) {
		m->slots[i].key = NULL;
		m->tombs--;
	}
	return val;
}

int cu_map_reserve(cu_map *m, size_t extra)
{
	if (extra > SIZE_MAX / 8 - m->n)
		return CU_ENOMEM;
	if (has_room(m, extra))
		return CU_OK;
	return rehash(m, m->n + extra);
}
