/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/store.c - the object store: per kind a sorted array of
 * current objects plus a ring of past changes (see the invariants in
 * apiserver.h). Gives current reads, writes with the global revision,
 * snapshots at an older revision (continue tokens, Exact lists) and the
 * history watches replay from.
 */
#include <string.h>

#include "tests/apiserver/apiserver.h"

static int key_cmp(
    const char *ns1, const char *n1, const char *ns2, const char *n2)
{
	int c = strcmp(ns1, ns2);

	return c != 0 ? c : strcmp(n1, n2);
}

static long find_in(
    const struct as_entry *items, size_t n, const char *ns, const char *name)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = key_cmp(items[mid].ns, items[mid].name, ns, name);

		if (c == 0)
			return (long)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -(long)lo - 1;
}

long as_store_find(const struct as_kind *k, const char *ns, const char *name)
{
	return find_in(k->items, k->nitems, ns ? ns : "", name);
}

json_t *as_store_get(const struct as_kind *k, const char *ns, const char *name)
{
	long i = as_store_find(k, ns, name);

	return i >= 0 ? k->items[i].obj : NULL;
}

uint64_t as_store_floor(const struct as_server *srv, const struct as_kind *k)
{
	return k->ring_floor > srv->compacted ? k->ring_floor : srv->compacted;
}

/* Append a change to the ring, evicting the oldest when full. Takes the
 * references of obj and old. */
static void ring_push(struct as_kind *k, uint64_t rv, enum as_ev_type type,
    json_t *obj, json_t *old)
{
	struct as_event *e;

	if (k->ring_cap == 0) {
		json_decref(obj);
		json_decref(old);
		k->ring_floor = rv;
		return;
	}
	if (k->ring_len == k->ring_cap) {
		e = &k->ring[k->ring_start];
		k->ring_floor = e->rv;
		json_decref(e->obj);
		json_decref(e->old);
		k->ring_start = (k->ring_start + 1) % k->ring_cap;
		k->ring_len--;
	}
	e = &k->ring[(k->ring_start + k->ring_len) % k->ring_cap];
	e->rv = rv;
	e->type = type;
	e->obj = obj;
	e->old = old;
	k->ring_len++;
	(void)0;
}

static const struct as_event *ring_at(const struct as_kind *k, size_t i)
{
	return &k->ring[(k->ring_start + i) % k->ring_cap];
}

static void set_rv(json_t *obj, uint64_t rv)
{
	char buf[32];
	json_t *md = json_object_get(obj, "metadata");

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)rv);
	if (md != NULL)
		json_object_set_new(md, "resourceVersion", json_string(buf));
}

int as_store_put(struct as_server *srv, struct as_kind *k, const char *ns,
    const char *name, json_t *obj)
{
	long i;
	json_t *old = NULL;
	uint64_t rv;
	enum as_ev_type type;

	ns = ns ? ns : "";
	i = as_store_find(k, ns, name);
	if (i < 0) {
		size_t at = (size_t)(-i - 1);

		if (k->nitems == k->capitems) {
			size_t cap = k->capitems ? k->capitems * 2 : 64;
			struct as_entry *p =
			    cu_realloc(k->items, cap * sizeof(*p));

			if (p == NULL) {
				json_decref(obj);
				return CU_ENOMEM;
			}
			k->items = p;
			k->capitems = cap;
		}
		memmove(&k->items[at + 1], &k->items[at],
		    (k->nitems - at) * sizeof(k->items[0]));
		k->items[at].ns = cu_strdup(ns);
		k->items[at].name = cu_strdup(name);
		k->items[at].obj = NULL;
		k->nitems++;
		if (k->items[at].ns == NULL || k->items[at].name == NULL) {
			cu_free(k->items[at].ns);
			cu_free(k->items[at].name);
			memmove(&k->items[at], &k->items[at + 1],
			    (k->nitems - at - 1) * sizeof(k->items[0]));
			k->nitems--;
			json_decref(obj);
			return CU_ENOMEM;
		}
		i = (long)at;
		type = AS_EV_ADDED;
	} else {
		old = k->items[i].obj;
		type = AS_EV_MODIFIED;
	}
	rv = ++srv->rv;
	set_rv(obj, rv);
	k->items[i].obj = obj;
	json_incref(obj);
	ring_push(k, rv, type, obj, old); /* the ring takes `old` */
	{
		const struct as_event *ev = ring_at(k, k->ring_len - 1);
		struct as_event tmp = {rv, type, obj, old};

		as_watch_dispatch(srv, k, k->ring_len ? ev : &tmp);
	}
	as_sim_notify(srv, k, obj, old);
	return CU_OK;
}

int as_store_remove(
    struct as_server *srv, struct as_kind *k, const char *ns, const char *name)
{
	long i = as_store_find(k, ns, name);
	json_t *old, *gone;
	uint64_t rv;

	if (i < 0)
		return CU_ENOTFOUND;
	old = k->items[i].obj;
	cu_free(k->items[i].ns);
	cu_free(k->items[i].name);
	memmove(&k->items[i], &k->items[i + 1],
	    (k->nitems - (size_t)i - 1) * sizeof(k->items[0]));
	k->nitems--;
	rv = ++srv->rv;
	/* DELETED carries the last state with the delete's revision. */
	gone = json_deep_copy(old);
	if (gone == NULL) {
		json_decref(old);
		return CU_ENOMEM;
	}
	set_rv(gone, rv);
	ring_push(k, rv, AS_EV_DELETED, gone, old);
	{
		struct as_event tmp = {rv, AS_EV_DELETED, gone, old};

		as_watch_dispatch(
		    srv, k, k->ring_len ? ring_at(k, k->ring_len - 1) : &tmp);
	}
	as_sim_notify(srv, k, NULL, old);
	return CU_OK;
}

/* Insert/replace/remove one key in a snapshot array (sorted). */
static int snap_set(struct as_entry **arr, size_t *n, size_t *cap,
    const char *ns, const char *name, json_t *obj)
{
	long i = find_in(*arr, *n, ns, name);

	if (obj == NULL) {
		if (i >= 0) {
			memmove(&(*arr)[i], &(*arr)[i + 1],
			    (*n - (size_t)i - 1) * sizeof(**arr));
			(*n)--;
		}
		return CU_OK;
	}
	if (i >= 0) {
		(*arr)[i].obj = obj;
		return CU_OK;
	}
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		struct as_entry *p = cu_realloc(*arr, c * sizeof(*p));

		if (p == NULL)
			return CU_ENOMEM;
		*arr = p;
		*cap = c;
	}
	i = -i - 1;
	memmove(&(*arr)[i + 1], &(*arr)[i], (*n - (size_t)i) * sizeof(**arr));
	(*arr)[i].ns = (char *)ns;
	(*arr)[i].name = (char *)name;
	(*arr)[i].obj = obj;
	(*n)++;
	return CU_OK;
}

size_t as_store_seek(const struct as_entry *items, size_t n, const char *ns,
    const char *name, bool after)
{
	long i = find_in(items, n, ns, name);

	if (i < 0)
		return (size_t)(-i - 1);
	return (size_t)i + (after ? 1 : 0);
}

bool as_store_changed_since(const struct as_kind *k, uint64_t rv)
{
	return k->ring_len > 0 && ring_at(k, k->ring_len - 1)->rv > rv;
}

int as_store_snapshot(struct as_server *srv, struct as_kind *k, uint64_t rv,
    struct as_entry **out, size_t *n)
{
	struct as_entry *arr;
	size_t cnt = k->nitems, cap = k->nitems + 1, j;

	*out = NULL;
	*n = 0;
	if (rv < as_store_floor(srv, k))
		return CU_EGONE;
	arr = cu_malloc(cap * sizeof(*arr));
	if (arr == NULL)
		return CU_ENOMEM;
	if (cnt)
		memcpy(arr, k->items, cnt * sizeof(*arr));
	/* Undo, newest first, every change made after rv. Names and
	 * namespaces are borrowed from the event objects, which live as long
	 * as the ring keeps them (for the duration of this request). */
	for (j = k->ring_len; j-- > 0;) {
		const struct as_event *e = ring_at(k, j);
		json_t *ref = e->old ? e->old : e->obj;
		const char *ns = as_jstr(ref, "metadata.namespace");
		const char *name = as_jstr(ref, "metadata.name");
		int rc;

		if (e->rv <= rv)
			break;
		if (name == NULL)
			continue;
		rc = snap_set(&arr, &cnt, &cap, ns ? ns : "", name,
		    e->type == AS_EV_ADDED ? NULL : e->old);
		if (rc != CU_OK) {
			cu_free(arr);
			return rc;
		}
	}
	*out = arr;
	*n = cnt;
	return CU_OK;
}

void as_store_compact(struct as_server *srv)
{
	struct as_kind *k;

	srv->compacted = srv->rv;
	for (k = srv->kinds; k != NULL; k = k->next) {
		while (k->ring_len > 0) {
			struct as_event *e = &k->ring[k->ring_start];

			json_decref(e->obj);
			json_decref(e->old);
			k->ring_start = (k->ring_start + 1) % k->ring_cap;
			k->ring_len--;
		}
		k->ring_floor = srv->rv;
	}
}

void as_kind_storage_free(struct as_kind *k)
{
	size_t i;

	for (i = 0; i < k->nitems; i++) {
		cu_free(k->items[i].ns);
		cu_free(k->items[i].name);
		json_decref(k->items[i].obj);
	}
	cu_free(k->items);
	k->items = NULL;
	k->nitems = k->capitems = 0;
	for (i = 0; i < k->ring_len; i++) {
		struct as_event *e =
		    &k->ring[(k->ring_start + i) % k->ring_cap];

		json_decref(e->obj);
		json_decref(e->old);
	}
	cu_free(k->ring);
	k->ring = NULL;
	k->ring_len = k->ring_cap = 0;
}
