/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/map.c - the hash map of lib/map.h: open addressing with linear
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

#include "lib/map.h"

#define FNV_OFFSET 1469598103934665603ULL
#define FNV_PRIME 1099511628211ULL
#define MIN_CAP 8

/* The deleted-slot marker: an address no key can have. */
static const char cu_map_tomb_;
#define TOMB ((const void *)&cu_map_tomb_)

uint64_t cu_map_hash_str(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	uint64_t h = FNV_OFFSET;

	for (; *p != '\0'; p++) {
		h ^= *p;
		h *= FNV_PRIME;
	}
	/* FNV's low bits only see the inputs' low bits: fold the high half
	 * in, since the slot index is taken from the low bits. */
	return h ^ (h >> 32);
}

uint64_t cu_map_hash_parts(const char *const *parts, unsigned nparts)
{
	uint64_t h = FNV_OFFSET;
	unsigned i;

	for (i = 0; i < nparts; i++) {
		const unsigned char *p = (const unsigned char *)parts[i];

		for (; *p != '\0'; p++) {
			h ^= *p;
			h *= FNV_PRIME;
		}
		h *= FNV_PRIME; /* the NUL: ("ab","c") != ("a","bc") */
	}
	return h ^ (h >> 32);
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

static uint64_t hash_of(const cu_map *m, const void *key)
{
	switch (m->kind) {
	case CU_MAP_STR:
		return cu_map_hash_str(key);
	case CU_MAP_PARTS:
		return cu_map_hash_parts(key, m->nparts);
	case CU_MAP_CUSTOM:
		break;
	}
	return m->hash(key);
}

static bool key_eq(const cu_map *m, const void *a, const void *b)
{
	const char *const *pa, *const *pb;
	unsigned i;

	switch (m->kind) {
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

/* The live slot holding key (hash h), or NULL. */
static struct cu_map_slot *find(const cu_map *m, const void *key, uint64_t h)
{
	size_t mask, i;

	if (m->n == 0)
		return NULL;
	mask = m->cap - 1;
	for (i = (size_t)h & mask;; i = (i + 1) & mask) {
		struct cu_map_slot *s = &m->slots[i];

		if (s->key == NULL)
			return NULL;
		if (s->key != TOMB && s->hash == h && key_eq(m, key, s->key))
			return s;
	}
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
	struct cu_map_slot *s;

	if (m->n == 0)
		return NULL;
	s = find(m, key, hash_of(m, key));
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
			if (s->hash == h && key_eq(m, key, s->key)) {
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

bool cu_map_next(const cu_map *m, cu_map_iter *it, const void **key, void **val)
{
	size_t i;

	for (i = *it; i < m->cap; i++) {
		const struct cu_map_slot *s = &m->slots[i];

		if (s->key == NULL || s->key == TOMB)
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
