/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/informer.c - list/watch informers over api/client.h: paginated
 * LIST, WATCH with bookmarks, resume from the last resourceVersion, relist
 * on 410 - and from scratch when the server refuses the last
 * resourceVersion as ahead of its own ("Too large resource version": its
 * revision went backwards, an etcd restore) - with a diff delivered to
 * the handlers, and a cache indexed by
 * namespace/name and by owner UID. See api/informer.h.
 *
 * States (one request or one timer at a time):
 *
 *   new --start_list()--> LISTING --last page: apply_list()--> WATCHING
 *              ^   (pages: on_list)                               |
 *              |                                                  |
 *              +--- 410 / relist ----- WAITING <-- watch ended ---+
 *                                      (timer)  --> WATCHING (re-watch)
 *
 * Invariants:
 *   1. At most one of inf->req (LIST or WATCH in flight) and inf->timer
 *      is active; api_informer_free cancels whichever it is.
 *   2. inf->rv only moves to a value the server gave: a list's
 *      resourceVersion, an event's object resourceVersion or a bookmark.
 *   3. The cache holds at most one entry per key; every entry's owner UIDs
 *      are in the owner index exactly once per ownerReference.
 *   4. Handlers see the cache already updated; an update whose
 *      resourceVersion equals the cached one is never delivered.
 *   5. No two watches start less than a second apart without a back-off
 *      between them (0.8 s doubling to 30 s), unless the first delivered
 *      an event: as client-go's reflector, only a watch that ends (or
 *      fails) having delivered nothing counts as a failure. A server
 *      that cuts streams which are making progress is followed at once,
 *      or the cache would go stale for up to 30 s.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/informer.h"
#include "api/json.h"
#include "api/pack_int.h"
#include "lib/cu.h"

#define INF_MAGIC 0x494e464fu /* "INFO" */
#define PAGE_LIMIT 500
#define BACKOFF_MIN 0.8
#define BACKOFF_MAX 30.0
/* A resource the server does not serve (404 on LIST: a CRD not installed)
 * is asked for again at this pace, so that it is noticed soon after it is
 * installed; a 404 is cheap for the server. */
#define ABSENT_RETRY 5.0
#define SHORT_WATCH 1.0

enum inf_state { ST_LISTING, ST_WATCHING, ST_WAITING };
enum next_action { NEXT_LIST, NEXT_WATCH };

/* A cached object. One allocation: the struct, then the namespace ("" for
 * cluster-scoped) and name strings that ids[] points at. */
struct entry {
	const char *ids[2]; /* {namespace, name}: the cache key */
	json_t *obj;	    /* owned reference; NULL when kept as text */
	/* Compact mode (api_informer_compact): the object as compact JSON
	 * text [owned] (api/pack_int.h: deflated once the cache is large),
	 * and its parsed form [borrowed from the pool] while parsed_seq is
	 * still in the pool. */
	struct api__text t;
	json_t *parsed;
	uint64_t parsed_seq;
	/* One link per ownerReference with a uid: where e sits in that
	 * owner's list, so that unlinking costs O(references), whatever the
	 * size of the owner's list (and reads no JSON). Owned array. */
	struct owner_link *links;
	size_t nlinks;
	bool seen; /* relist mark */
};

/* One item of a list in progress, kept as compact JSON text until the
 * last page: the items of every page held as jansson trees until then
 * cost several times what the cache itself holds (a relist of 20,000
 * Workloads doubled the controller's RSS), and in compact mode the text
 * becomes the cached text as it is. */
struct pend {
	char *text; /* [owned] compact JSON of the item, or NULL once taken */
	size_t len;
	char *key; /* [owned] namespace ("" if none), NUL, name, NUL */
};

struct owner_link {
	struct owners *o; /* [borrowed from the owner index] */
	size_t pos;	  /* index in o->v */
};

/* One object in an owner's list: the entry [borrowed from the cache] and
 * the index of the matching link in its links. */
struct owned {
	struct entry *e;
	size_t link;
};

/* The cached objects naming one owner UID, in no particular order. One
 * allocation with the uid string; v [owned]. */
struct owners {
	const char *uid;
	struct owned *v;
	size_t n, cap;
};

CU_MAP_TYPED(inf_cache, const char *const *, struct entry);
CU_MAP_TYPED(inf_owner_index, const char *, struct owners);

struct api_informer {
	unsigned magic;
	api_client *c;
	struct ev_loop *loop;		/* the client's */
	char *group, *version, *plural; /* owned */
	bool namespaced;
	char *ns;	 /* owned or NULL */
	char *base;	 /* owned; collection path */
	char *selectors; /* owned; "&labelSelector=..&fieldSelector=.." */
	struct api_informer_handlers h;
	void *payload;

	enum inf_state state;
	api_req *req; /* in flight, or NULL */
	ev_timer timer;
	enum next_action next;
	char *rv; /* owned; last resourceVersion, "" before the first list */
	bool synced;
	bool absent; /* the last LIST answered 404: not served */

	/* list in progress */
	struct pend *pend; /* [owned] the items of the pages so far */
	size_t npend, cap_pend;
	char *cont;	   /* owned continue token or NULL */
	bool list_with_rv; /* first page asked for resourceVersion=rv */
	char *item_kind;   /* owned; from the list's kind */
	char *item_api_version;

	/* watch in progress */
	double watch_started;
	bool watch_gone;       /* an ERROR 410 event arrived */
	bool watch_error;      /* another ERROR or a bad line */
	uint64_t watch_events; /* events and bookmarks this watch delivered */
	bool self_cancel;
	double backoff;

	inf_cache cache;	/* entries [owned] by {ns, name} */
	inf_owner_index owners; /* owners [owned] by owner UID */

	struct api_informer_stats stats;
	uint64_t rand;

	/* Compact mode: parsed objects handed out, a ring of POOL_CAP owned
	 * references; seq numbers [pool_min, pool_seq) are live. */
	bool compact;
	json_t **pool;
	uint64_t pool_seq, pool_min;
	api__pack *pack; /* [owned] once PACK_MIN objects were cached */
};

#define POOL_CAP 1024
#define POOL_KEEP 128
/* Texts are packed once the cache holds this many objects: the packer's
 * streams (about 100 KiB) are not worth it for a handful. */
#define PACK_MIN 64

static void start_list(api_informer *inf);
static void start_watch(api_informer *inf);

/* ---- cache ----------------------------------------------------------- */

/* Drop every parsed object handed out (compact mode): called when the
 * informer applies new data, the point where borrowed objects expire. */
static void pool_clear(api_informer *inf)
{
	for (; inf->pool_min < inf->pool_seq; inf->pool_min++)
		json_decref(inf->pool[inf->pool_min % POOL_CAP]);
}

/* Drop the oldest parsed objects until at most keep are handed out: a
 * watch line trims the pool to POOL_KEEP, so that the objects of a burst
 * of events are still parsed when the loop turn reconciles them (and the
 * old object of an update is at hand), while the pool stays small. */
static void pool_trim(api_informer *inf, uint64_t keep)
{
	while (inf->pool_seq - inf->pool_min > keep)
		json_decref(inf->pool[inf->pool_min++ % POOL_CAP]);
}

/* Keep obj [consumed] in the pool; returns its seq. */
static uint64_t pool_put(api_informer *inf, json_t *obj)
{
	if (inf->pool_seq - inf->pool_min == POOL_CAP)
		json_decref(inf->pool[inf->pool_min++ % POOL_CAP]);
	inf->pool[inf->pool_seq % POOL_CAP] = obj;
	return inf->pool_seq++;
}

/* The cached object of e [borrowed]; in compact mode parsed from its
 * text on first use (NULL only if that parse runs out of memory). */
static inline json_t *entry_obj(const api_informer *cinf, struct entry *e)
{
	api_informer *inf = (api_informer *)cinf; /* the pool changes */
	json_t *obj;

	if (e->obj != NULL || e->t.text == NULL)
		return e->obj;
	if (e->parsed != NULL && e->parsed_seq >= inf->pool_min)
		return e->parsed;
	if ((obj = api__text_parse(inf->pack, &e->t)) == NULL)
		return NULL;
	e->parsed_seq = pool_put(inf, obj);
	e->parsed = obj;
	return obj;
}

/* Make obj [borrowed] the content of e: a reference, or in compact mode
 * its text (the parsed object stays in the pool for this turn). raw
 * [borrowed; may be NULL], raw_len: compact JSON text of exactly obj (a
 * watch event's lean "object", a list item's text), kept as it is
 * instead of writing obj out again. take: NULL, or where raw's owner
 * keeps it [owned: cu_free] when the text may be taken instead of
 * copied (*take is then set to NULL). */
static void entry_set(api_informer *inf, struct entry *e, json_t *obj,
    const char *raw, size_t raw_len, char **take)
{
	if (inf->compact &&
	    api__text_make(&inf->pack, inf_cache_count(&inf->cache) >= PACK_MIN,
		obj, raw, raw_len, take, &e->t)) {
		e->parsed_seq = pool_put(inf, json_incref(obj));
		e->parsed = obj;
		return;
	}
	e->obj = json_incref(obj); /* or when the text could not be made */
}

static void entry_clear(struct entry *e)
{
	json_decref(e->obj);
	cu_free(e->t.text);
	e->obj = NULL;
	e->t.text = NULL;
	e->parsed = NULL;
}

static const char *meta_str(json_t *obj, const char *key)
{
	return json_string_value(
	    json_object_get(json_object_get(obj, "metadata"), key));
}

/* Fill k with the cache key of ns/name (ns NULL or "" when
 * cluster-scoped); false when there is no name. k [borrows ns, name]. */
static bool key_of(const char *k[2], const char *ns, const char *name)
{
	if (name == NULL)
		return false;
	k[0] = ns != NULL ? ns : "";
	k[1] = name;
	return true;
}

static struct entry *cache_find(const api_informer *inf, const char *const *k)
{
	return inf_cache_get(&inf->cache, k);
}

static void owners_drop(api_informer *inf, struct owners *o)
{
	inf_owner_index_del(&inf->owners, o->uid);
	cu_free(o->v);
	cu_free(o);
}

static void owners_unlink(api_informer *inf, struct entry *e)
{
	size_t i;

	for (i = 0; i < e->nlinks; i++) {
		struct owners *o = e->links[i].o;
		size_t pos = e->links[i].pos;

		/* the last of o's list takes the freed place */
		o->v[pos] = o->v[--o->n];
		o->v[pos].e->links[o->v[pos].link].pos = pos;
		if (o->n == 0)
			owners_drop(inf, o);
	}
	cu_free(e->links);
	e->links = NULL;
	e->nlinks = 0;
}

/* The owners record of uid, created if needed; NULL on ENOMEM. */
static struct owners *owners_of(api_informer *inf, const char *uid)
{
	struct owners *o = inf_owner_index_get(&inf->owners, uid);
	size_t len;

	if (o != NULL)
		return o;
	len = strlen(uid) + 1;
	o = cu_calloc(1, sizeof(*o) + len);
	if (o == NULL)
		return NULL;
	memcpy(o + 1, uid, len);
	o->uid = (const char *)(o + 1);
	if (inf_owner_index_put(&inf->owners, o->uid, o) != CU_OK) {
		cu_free(o);
		return NULL;
	}
	return o;
}

/* Link e under every owner UID of its ownerReferences (once per
 * reference). Out of memory: the links that could not be made are
 * missing (logged), the others are made. */
static void owners_link(api_informer *inf, struct entry *e)
{
	json_t *refs = json_object_get(
	    json_object_get(entry_obj(inf, e), "metadata"), "ownerReferences");
	size_t n = json_array_size(refs), i;
	json_t *ref;

	if (n == 0)
		return;
	e->links = cu_calloc(n, sizeof(*e->links));
	json_array_foreach(refs, i, ref)
	{
		const char *uid =
		    json_string_value(json_object_get(ref, "uid"));
		struct owners *o;

		if (uid == NULL)
			continue;
		o = e->links != NULL ? owners_of(inf, uid) : NULL;
		if (o == NULL || cu_grow((void **)&o->v, &o->cap, o->n + 1,
				     sizeof(*o->v)) != CU_OK) {
			if (o != NULL && o->n == 0)
				owners_drop(inf, o);
			cu_warn("informer %s: owner index: out of memory",
			    inf->plural);
			continue;
		}
		o->v[o->n].e = e;
		o->v[o->n].link = e->nlinks;
		e->links[e->nlinks].o = o;
		e->links[e->nlinks].pos = o->n++;
		e->nlinks++;
	}
}

/* Insert obj [reference taken] under ns/name [copied], raw and take as
 * for entry_set. NULL on ENOMEM. */
static struct entry *cache_insert(api_informer *inf, const char *const *k,
    json_t *obj, const char *raw, size_t raw_len, char **take)
{
	size_t lns = strlen(k[0]) + 1, lname = strlen(k[1]) + 1;
	struct entry *e = cu_calloc(1, sizeof(*e) + lns + lname);
	char *str;

	if (e == NULL)
		return NULL;
	str = (char *)(e + 1);
	memcpy(str, k[0], lns);
	memcpy(str + lns, k[1], lname);
	e->ids[0] = str;
	e->ids[1] = str + lns;
	if (inf_cache_put(&inf->cache, e->ids, e) != CU_OK) {
		cu_free(e);
		return NULL;
	}
	entry_set(inf, e, obj, raw, raw_len, take);
	owners_link(inf, e);
	return e;
}

/* Swap the object of e (raw and take as for entry_set); returns the old
 * one [owned by the caller]. */
static json_t *cache_replace(api_informer *inf, struct entry *e, json_t *obj,
    const char *raw, size_t raw_len, char **take)
{
	json_t *old = json_incref(entry_obj(inf, e));

	owners_unlink(inf, e);
	entry_clear(e);
	entry_set(inf, e, obj, raw, raw_len, take);
	owners_link(inf, e);
	return old;
}

/* Take e out of the cache and free it; returns its object [owned by the
 * caller]. */
static json_t *cache_remove(api_informer *inf, struct entry *e)
{
	json_t *obj = json_incref(entry_obj(inf, e));

	inf_cache_del(&inf->cache, e->ids);
	owners_unlink(inf, e);
	entry_clear(e);
	cu_free(e);
	return obj;
}

/* ---- delivering changes ---------------------------------------------- */

static void set_rv(api_informer *inf, const char *rv)
{
	char *d;

	if (rv == NULL || rv[0] == '\0' || strcmp(rv, inf->rv) == 0)
		return;
	d = cu_strdup(rv);
	if (d == NULL)
		return; /* keep the older one: a relist at worst */
	cu_free(inf->rv);
	inf->rv = d;
}

/* Add or update obj [borrowed] (invariant 4); raw and take as for
 * entry_set.
 * Its metadata.managedFields are gone, as controller-runtime's cache
 * strips them: nothing here reads them, and for an object written by
 * several managers (a Workload: the job controller, the scheduler, status
 * writers) they outweigh the rest. Watch lines and list pages come here
 * lean (api_json_loadb_lean); the delete catches a key spelled with
 * escapes, which the lean text keeps (raw is then not obj's text). */
static void upsert(api_informer *inf, json_t *obj, const char *raw,
    size_t raw_len, char **take)
{
	const char *k[2];
	struct entry *e;
	const char *nrv, *orv;
	json_t *old, *md = json_object_get(obj, "metadata");

	if (json_is_object(md) && json_object_del(md, "managedFields") == 0)
		raw = NULL;
	if (!key_of(k, meta_str(obj, "namespace"), meta_str(obj, "name")))
		return;
	e = cache_find(inf, k);
	if (e == NULL) {
		e = cache_insert(inf, k, obj, raw, raw_len, take);
		if (e != NULL && inf->h.on_add != NULL && entry_obj(inf, e))
			inf->h.on_add(entry_obj(inf, e), inf->payload);
		return;
	}
	e->seen = true;
	nrv = meta_str(obj, "resourceVersion");
	orv = meta_str(entry_obj(inf, e), "resourceVersion");
	if (nrv != NULL && orv != NULL && strcmp(nrv, orv) == 0) {
		inf->stats.skipped++;
		return;
	}
	old = cache_replace(inf, e, obj, raw, raw_len, take);
	if (inf->h.on_update != NULL && entry_obj(inf, e) != NULL)
		inf->h.on_update(old, entry_obj(inf, e), inf->payload);
	json_decref(old);
}

static void remove_obj(api_informer *inf, json_t *obj)
{
	const char *k[2];
	struct entry *e;
	json_t *old;

	if (!key_of(k, meta_str(obj, "namespace"), meta_str(obj, "name")))
		return;
	e = cache_find(inf, k);
	if (e == NULL) {
		inf->stats.skipped++;
		return;
	}
	old = cache_remove(inf, e);
	/* the event carries the final state; hand that over */
	if (inf->h.on_delete != NULL)
		inf->h.on_delete(obj, inf->payload);
	json_decref(old);
}

/* ---- scheduling ------------------------------------------------------- */

static void on_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	api_informer *inf = w->data;

	(void)loop;
	(void)revents;
	if (inf->next == NEXT_LIST)
		start_list(inf);
	else
		start_watch(inf);
}

static void schedule(api_informer *inf, enum next_action next, double delay)
{
	struct ev_loop *loop = inf->loop;

	inf->state = ST_WAITING;
	inf->next = next;
	ev_timer_stop(loop, &inf->timer);
	ev_timer_set(&inf->timer, delay, 0.0);
	ev_timer_start(loop, &inf->timer);
}

/* Next back-off delay with jitter, doubling up to BACKOFF_MAX. */
static double next_backoff(api_informer *inf)
{
	double d = inf->backoff;

	inf->rand = inf->rand * 6364136223846793005ULL + 1442695040888963407ULL;
	inf->backoff = d * 2 > BACKOFF_MAX ? BACKOFF_MAX : d * 2;
	return d * (1.0 + (double)((inf->rand >> 33) % 200) / 1000.0);
}

/* ---- LIST -------------------------------------------------------------- */

static void pend_clear(api_informer *inf)
{
	size_t i;

	for (i = 0; i < inf->npend; i++) {
		cu_free(inf->pend[i].text);
		cu_free(inf->pend[i].key);
	}
	cu_free(inf->pend);
	inf->pend = NULL;
	inf->npend = inf->cap_pend = 0;
}

static void list_reset(api_informer *inf)
{
	pend_clear(inf);
	cu_free(inf->cont);
	inf->cont = NULL;
}

/* Keep list item it [borrowed] as text until the list is complete; an
 * item without a name is never cached and not kept. CU_ENOMEM. */
static int pend_add(api_informer *inf, json_t *it)
{
	const char *ns = meta_str(it, "namespace"),
		   *name = meta_str(it, "name");
	size_t lns, lname;
	struct pend *p;

	if (name == NULL)
		return CU_OK;
	if (ns == NULL)
		ns = "";
	if (cu_grow((void **)&inf->pend, &inf->cap_pend, inf->npend + 1,
		sizeof(*inf->pend)) != CU_OK)
		return CU_ENOMEM;
	p = &inf->pend[inf->npend];
	lns = strlen(ns) + 1;
	lname = strlen(name) + 1;
	if ((p->key = cu_malloc(lns + lname)) == NULL)
		return CU_ENOMEM;
	memcpy(p->key, ns, lns);
	memcpy(p->key + lns, name, lname);
	/* as upsert would: the text is then the cached text as it is */
	json_object_del(json_object_get(it, "metadata"), "managedFields");
	if (api_json_dumps(it, JSON_COMPACT, 0, &p->text, &p->len) != CU_OK) {
		cu_free(p->key);
		return CU_ENOMEM;
	}
	inf->npend++;
	return CU_OK;
}

static void pend_key(const struct pend *p, const char *k[2])
{
	k[0] = p->key;
	k[1] = p->key + strlen(p->key) + 1;
}

/* The list is complete: make the cache equal to it (invariant 4), one
 * item parsed at a time. False when an item could not be parsed again
 * (out of memory): the cache may then miss its change, and the caller
 * lists again. */
static bool apply_list(api_informer *inf, const char *list_rv)
{
	struct entry **gone = NULL, *e;
	size_t ngone = 0, cap = 0, i;
	cu_map_iter iter = CU_MAP_ITER_INIT;
	bool ok = true;

	pool_clear(inf);
	while (inf_cache_next(&inf->cache, &iter, &e))
		e->seen = false;
	for (i = 0; i < inf->npend; i++) {
		const char *k[2];

		pend_key(&inf->pend[i], k);
		if ((e = cache_find(inf, k)) != NULL)
			e->seen = true;
	}
	iter = CU_MAP_ITER_INIT;
	while (inf_cache_next(&inf->cache, &iter, &e)) {
		if (e->seen)
			continue;
		if (cu_grow((void **)&gone, &cap, ngone + 1, sizeof(*gone)) !=
		    CU_OK)
			break;
		gone[ngone++] = e;
	}
	set_rv(inf, list_rv);
	for (i = 0; i < inf->npend; i++) {
		struct pend *p = &inf->pend[i];
		json_t *obj;

		if (api_json_loadb(&obj, p->text, p->len, 0, NULL) != CU_OK) {
			ok = false;
			continue;
		}
		upsert(inf, obj, p->text, p->len, &p->text);
		json_decref(obj);
		cu_free(p->text); /* unless the cache took it */
		p->text = NULL;
	}
	for (i = 0; i < ngone; i++) {
		json_t *old = cache_remove(inf, gone[i]);

		if (inf->h.on_delete != NULL)
			inf->h.on_delete(old, inf->payload);
		json_decref(old);
	}
	cu_free(gone);
	list_reset(inf);
	if (!ok)
		cu_warn("informer %s: list: out of memory applying it; "
			"listing again",
		    inf->plural);
	return ok;
}

/* ---- a resourceVersion ahead of the server's (etcd restored) --------- */

/* Is st [borrowed] kube's "Too large resource version" (504 Timeout,
 * cause ResourceVersionTooLarge)? The server's revision is behind the
 * one asked for: after an etcd restore it went backwards, and waiting
 * for it would miss everything written meanwhile (client-go relists
 * from scratch, reflector.go isTooLargeResourceVersionError). */
static bool rv_too_large(const json_t *st)
{
	const json_t *causes =
	    json_object_get(json_object_get(st, "details"), "causes");
	const char *msg = json_string_value(json_object_get(st, "message"));
	size_t i;
	json_t *c;

	if (json_integer_value(json_object_get(st, "code")) != 504)
		return false;
	json_array_foreach((json_t *)causes, i, c)
	{
		const char *r = json_string_value(json_object_get(c, "reason"));

		if (r != NULL && strcmp(r, "ResourceVersionTooLarge") == 0)
			return true;
	}
	return msg != NULL && strstr(msg, "Too large resource version") != NULL;
}

/* Forget the last resourceVersion: the next LIST is a consistent read. */
static void rv_forget(api_informer *inf)
{
	char *e = cu_strdup("");

	if (e == NULL)
		return; /* keep it: the next list asks again */
	cu_free(inf->rv);
	inf->rv = e;
}

static void on_list(const struct api_response *resp, void *payload)
{
	api_informer *inf = payload;
	json_t *md, *items, *it;
	const char *kind, *cont;
	size_t i;

	inf->req = NULL;
	if (resp->canceled)
		return;
	if (resp->err == CU_EGONE ||
	    (inf->list_with_rv && rv_too_large(resp->body))) {
		/* too old: the last RV, or an expired continue token; too
		 * large: the server's revision went backwards */
		bool again = inf->list_with_rv || inf->cont != NULL;

		if (resp->err == CU_EGONE)
			cu_info("informer %s: list: 410 Gone, relisting from "
				"scratch",
			    inf->plural);
		else
			cu_warn("informer %s: list: resourceVersion %s is "
				"ahead of the server's (etcd restored?): "
				"relisting from scratch",
			    inf->plural, inf->rv);
		list_reset(inf);
		inf->list_with_rv = false;
		cu_free(inf->rv);
		inf->rv = cu_strdup("");
		if (inf->rv == NULL || !again)
			schedule(inf, NEXT_LIST, next_backoff(inf));
		else
			start_list(inf);
		return;
	}
	if (resp->code == 404) {
		/* The resource is not served (yet): said once, then asked
		 * again at a steady pace until it appears. */
		if (!inf->absent)
			cu_info("informer %s: not served by the API server; "
				"asking again every %.0f s",
			    inf->plural, ABSENT_RETRY);
		inf->absent = true;
		list_reset(inf);
		schedule(inf, NEXT_LIST, ABSENT_RETRY);
		return;
	}
	if (resp->err != CU_OK || !json_is_object(resp->body)) {
		/* No HTTP answer: the client logs that, once per back-off
		 * step for all informers (api_client_unreachable). */
		if (resp->code == 0)
			cu_debug("informer %s: list: %s", inf->plural,
			    resp->message);
		else
			cu_warn("informer %s: list: HTTP %d %s: %s",
			    inf->plural, resp->code, resp->reason,
			    resp->message);
		list_reset(inf);
		schedule(inf, NEXT_LIST, next_backoff(inf));
		return;
	}
	if (inf->absent)
		cu_info("informer %s: now served", inf->plural);
	inf->absent = false;
	kind = json_string_value(json_object_get(resp->body, "kind"));
	if (inf->item_kind == NULL && kind != NULL && strlen(kind) > 4 &&
	    strcmp(kind + strlen(kind) - 4, "List") == 0) {
		inf->item_kind = cu_strndup(kind, strlen(kind) - 4);
		inf->item_api_version = cu_strdup(
		    json_string_value(json_object_get(resp->body, "apiVersion"))
			? json_string_value(
			      json_object_get(resp->body, "apiVersion"))
			: "");
	}
	items = json_object_get(resp->body, "items");
	json_array_foreach(items, i, it)
	{
		/* list items carry no TypeMeta; watch events do */
		if (inf->item_kind != NULL &&
		    json_object_get(it, "kind") == NULL) {
			json_object_set_new(
			    it, "kind", json_string(inf->item_kind));
			if (inf->item_api_version != NULL)
				json_object_set_new(it, "apiVersion",
				    json_string(inf->item_api_version));
		}
		if (pend_add(inf, it) != CU_OK) {
			cu_warn(
			    "informer %s: list: out of memory", inf->plural);
			list_reset(inf);
			schedule(inf, NEXT_LIST, next_backoff(inf));
			return;
		}
	}
	md = json_object_get(resp->body, "metadata");
	cont = json_string_value(json_object_get(md, "continue"));
	cu_free(inf->cont);
	inf->cont = NULL;
	if (cont != NULL && cont[0] != '\0') {
		inf->cont = cu_strdup(cont);
		if (inf->cont == NULL) {
			list_reset(inf);
			schedule(inf, NEXT_LIST, next_backoff(inf));
			return;
		}
		start_list(inf);
		return;
	}
	if (!apply_list(inf,
		json_string_value(json_object_get(md, "resourceVersion")))) {
		schedule(inf, NEXT_LIST, next_backoff(inf));
		return;
	}
	if (!inf->synced) {
		inf->synced = true;
		if (inf->h.on_synced != NULL)
			inf->h.on_synced(inf->payload);
	}
	start_watch(inf);
}

static void start_list(api_informer *inf)
{
	char *path, *tok = NULL;
	cu_error err;
	int rc;

	inf->state = ST_LISTING;
	if (inf->cont == NULL) {
		/* a new list: relists start at the last RV (client-go) */
		pend_clear(inf);
		inf->list_with_rv = inf->rv[0] != '\0';
		if (inf->synced)
			inf->stats.relists++;
	} else {
		tok = api_escape(inf->cont);
	}
	if (inf->cont == NULL && inf->list_with_rv)
		path = cu_asprintf("%s?limit=%d&resourceVersion=%s%s",
		    inf->base, PAGE_LIMIT, inf->rv, inf->selectors);
	else if (tok != NULL)
		path = cu_asprintf("%s?limit=%d&continue=%s%s", inf->base,
		    PAGE_LIMIT, tok, inf->selectors);
	else if (inf->cont == NULL)
		path = cu_asprintf(
		    "%s?limit=%d%s", inf->base, PAGE_LIMIT, inf->selectors);
	else
		path = NULL;
	cu_free(tok);
	if (path == NULL) {
		list_reset(inf);
		schedule(inf, NEXT_LIST, next_backoff(inf));
		cu_free(path);
		return;
	}
	inf->stats.lists++;
	rc = api_request(
	    &inf->req, inf->c, "GET", path, NULL, NULL, on_list, inf, &err);
	cu_free(path);
	if (rc != CU_OK) {
		cu_warn("informer %s: list: %s", inf->plural, err.msg);
		inf->req = NULL;
		list_reset(inf);
		schedule(inf, NEXT_LIST, next_backoff(inf));
	}
}

/* ---- WATCH ------------------------------------------------------------- */

static void on_watch_line(const char *line, size_t len, void *payload)
{
	api_informer *inf = payload;
	struct api_json_lean lean;
	json_t *ev = NULL, *obj;
	const char *type;

	if (inf->watch_gone || inf->watch_error)
		return;
	pool_trim(inf, POOL_KEEP);
	/* Decode only what is read: the line without its managedFields
	 * (api_json_lean), whose "object" becomes the cached text as it is.
	 * Any failure (bad JSON, or out of memory: a half-parsed event is
	 * not trusted) restarts the watch from a relist. */
	if (api_json_lean(&lean, line, len, "object") != CU_OK ||
	    api_json_loadb(&ev, lean.text, lean.len, 0, NULL) != CU_OK)
		ev = NULL;
	type = json_string_value(json_object_get(ev, "type"));
	obj = json_object_get(ev, "object");
	if (type == NULL || !json_is_object(obj)) {
		cu_warn("informer %s: undecodable watch event", inf->plural);
		inf->watch_error = true;
		inf->self_cancel = true;
		api_request_cancel(inf->req); /* completes after we return */
		json_decref(ev);
		api_json_lean_dispose(&lean);
		return;
	}
	if (strcmp(type, "ERROR") == 0) {
		json_int_t code =
		    json_integer_value(json_object_get(obj, "code"));

		if (code == 410)
			inf->watch_gone = true;
		else if (rv_too_large(obj)) {
			/* the server's revision went backwards: relist from
			 * scratch, as after a 410 */
			cu_warn("informer %s: watch from resourceVersion %s "
				"refused as ahead of the server's (etcd "
				"restored?): relisting from scratch",
			    inf->plural, inf->rv);
			rv_forget(inf);
			inf->watch_gone = true;
		} else
			inf->watch_error = true;
		cu_info("informer %s: watch error %d: %s", inf->plural,
		    (int)code,
		    json_string_value(json_object_get(obj, "message"))
			? json_string_value(json_object_get(obj, "message"))
			: "");
	} else if (strcmp(type, "BOOKMARK") == 0) {
		inf->stats.bookmarks++;
		inf->watch_events++;
		set_rv(inf, meta_str(obj, "resourceVersion"));
	} else if (strcmp(type, "ADDED") == 0 ||
		   strcmp(type, "MODIFIED") == 0) {
		inf->stats.events++;
		inf->watch_events++;
		set_rv(inf, meta_str(obj, "resourceVersion"));
		upsert(inf, obj,
		    lean.span_len > 0 ? lean.text + lean.span_off : NULL,
		    lean.span_len, NULL);
	} else if (strcmp(type, "DELETED") == 0) {
		inf->stats.events++;
		inf->watch_events++;
		set_rv(inf, meta_str(obj, "resourceVersion"));
		remove_obj(inf, obj);
	}
	json_decref(ev);
	api_json_lean_dispose(&lean);
}

static void on_watch_done(const struct api_response *resp, void *payload)
{
	api_informer *inf = payload;
	double lasted = ev_now(inf->loop) - inf->watch_started;
	double delay = 0.0;

	inf->req = NULL;
	if (resp->canceled && !inf->self_cancel)
		return; /* api_informer_free or api_client_free */
	/* invariant 5: a watch that ended quickly, or failed, having
	 * delivered nothing waits before the next; one that delivered events
	 * was healthy however it ended (a cut stream is CU_EIO) */
	if (inf->watch_error ||
	    (inf->watch_events == 0 &&
		(lasted < SHORT_WATCH || resp->err != CU_OK)))
		delay = next_backoff(inf);
	else
		inf->backoff = BACKOFF_MIN;
	if (resp->err == CU_EGONE || inf->watch_gone) {
		schedule(inf, NEXT_LIST, delay);
		return;
	}
	if (resp->err != CU_OK && !resp->canceled && resp->code == 0)
		cu_debug("informer %s: watch: %s", inf->plural, resp->message);
	else if (resp->err != CU_OK && !resp->canceled)
		cu_warn("informer %s: watch: HTTP %d %s: %s", inf->plural,
		    resp->code, resp->reason, resp->message);
	if (inf->watch_error && resp->err == CU_OK) {
		/* a non-410 ERROR event: relist at the last RV (client-go) */
		schedule(inf, NEXT_LIST, delay);
		return;
	}
	if (delay > 0)
		schedule(inf, NEXT_WATCH, delay);
	else
		start_watch(inf);
}

static void start_watch(api_informer *inf)
{
	struct ev_loop *loop = inf->loop;
	char *path;
	cu_error err;
	int timeout, rc;

	inf->rand = inf->rand * 6364136223846793005ULL + 1442695040888963407ULL;
	timeout = 300 + (int)((inf->rand >> 33) % 300);
	path = cu_asprintf("%s?watch=1&resourceVersion=%s&"
			   "allowWatchBookmarks=true&timeoutSeconds=%d%s",
	    inf->base, inf->rv, timeout, inf->selectors);
	if (path == NULL) {
		schedule(inf, NEXT_WATCH, next_backoff(inf));
		return;
	}
	inf->state = ST_WATCHING;
	inf->watch_gone = false;
	inf->watch_error = false;
	inf->watch_events = 0;
	inf->self_cancel = false;
	ev_now_update(loop);
	inf->watch_started = ev_now(loop);
	inf->stats.watches++;
	rc = api_stream(&inf->req, inf->c, path, (timeout + 30) * 1000,
	    on_watch_line, on_watch_done, inf, &err);
	cu_free(path);
	if (rc != CU_OK) {
		cu_warn("informer %s: watch: %s", inf->plural, err.msg);
		inf->req = NULL;
		schedule(inf, NEXT_WATCH, next_backoff(inf));
	}
}

/* ---- public ------------------------------------------------------------ */

static int add_selector(cu_buf *b, const char *name, const char *sel)
{
	char *e;
	int rc;

	if (sel == NULL || sel[0] == '\0')
		return CU_OK;
	e = api_escape(sel);
	if (e == NULL)
		return CU_ENOMEM;
	rc = cu_buf_addf(b, "&%s=%s", name, e);
	cu_free(e);
	return rc;
}

int api_informer_new(api_informer **out, api_client *c,
    const struct api_resource *res, const char *ns, const char *label_selector,
    const char *field_selector, const struct api_informer_handlers *handlers,
    void *payload, cu_error *err)
{
	api_informer *inf;
	struct api_resource r;
	cu_buf sel;

	*out = NULL;
	if (c == NULL || res == NULL || res->version == NULL ||
	    res->plural == NULL)
		return cu_error_set(
		    err, CU_EINVAL, "informer: needs a client and a resource");
	inf = cu_calloc(1, sizeof(*inf));
	if (inf == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	inf->magic = INF_MAGIC;
	inf->c = c;
	inf->loop = api_client_loop(c);
	inf->group = cu_strdup(res->group ? res->group : "");
	inf->version = cu_strdup(res->version);
	inf->plural = cu_strdup(res->plural);
	inf->namespaced = res->namespaced;
	if (ns != NULL && ns[0] != '\0' && res->namespaced)
		inf->ns = cu_strdup(ns);
	if (handlers != NULL)
		inf->h = *handlers;
	inf->payload = payload;
	inf->rv = cu_strdup("");
	inf->backoff = BACKOFF_MIN;
	inf->rand = (uint64_t)cu_time_now_ns();
	inf_cache_init_parts(&inf->cache, 2);
	inf_owner_index_init_str(&inf->owners);
	ev_init(&inf->timer, on_timer);
	inf->timer.data = inf;
	cu_buf_init(&sel, 64 * 1024);
	if (add_selector(&sel, "labelSelector", label_selector) != CU_OK ||
	    add_selector(&sel, "fieldSelector", field_selector) != CU_OK)
		inf->selectors = NULL;
	else
		inf->selectors = cu_buf_detach(&sel, NULL);
	cu_buf_dispose(&sel);
	if (inf->group != NULL && inf->version != NULL && inf->plural != NULL) {
		r.group = inf->group;
		r.version = inf->version;
		r.plural = inf->plural;
		r.namespaced = inf->namespaced;
		inf->base = api_resource_path(&r, inf->ns, NULL, NULL);
	}
	if (inf->group == NULL || inf->version == NULL || inf->plural == NULL ||
	    inf->rv == NULL || inf->selectors == NULL || inf->base == NULL ||
	    (ns != NULL && ns[0] != '\0' && res->namespaced &&
		inf->ns == NULL)) {
		api_informer_free(inf);
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	}
	start_list(inf);
	*out = inf;
	return CU_OK;
}

void api_informer_free(api_informer *inf)
{
	cu_map_iter it = CU_MAP_ITER_INIT;
	struct owners *o;
	struct entry *e;

	if (inf == NULL)
		return;
	CU_ASSERT(inf->magic == INF_MAGIC);
	if (inf->req != NULL) {
		api_req *r = inf->req;

		inf->self_cancel = false;
		inf->req = NULL;
		api_request_cancel(r); /* on_* return at once: canceled */
	}
	ev_timer_stop(inf->loop, &inf->timer);
	while (inf_cache_next(&inf->cache, &it, &e))
		json_decref(cache_remove(inf, e));
	inf_cache_dispose(&inf->cache);
	it = CU_MAP_ITER_INIT; /* empty by now, unless a link was lost */
	while (inf_owner_index_next(&inf->owners, &it, &o)) {
		cu_free(o->v);
		cu_free(o);
	}
	inf_owner_index_dispose(&inf->owners);
	pool_clear(inf);
	cu_free(inf->pool);
	api__pack_free(inf->pack);
	list_reset(inf);
	cu_free(inf->group);
	cu_free(inf->version);
	cu_free(inf->plural);
	cu_free(inf->ns);
	cu_free(inf->base);
	cu_free(inf->selectors);
	cu_free(inf->rv);
	cu_free(inf->item_kind);
	cu_free(inf->item_api_version);
	inf->magic = 0;
	cu_free(inf);
}

bool api_informer_synced(const api_informer *inf)
{
	return inf->synced;
}

bool api_informer_absent(const api_informer *inf)
{
	return inf->absent;
}

json_t *api_informer_get(
    const api_informer *inf, const char *ns, const char *name)
{
	const char *k[2];
	struct entry *e;

	if (!key_of(k, inf->namespaced ? ns : NULL, name))
		return NULL;
	e = cache_find(inf, k);
	return e != NULL ? entry_obj(inf, e) : NULL;
}

size_t api_informer_count(const api_informer *inf)
{
	return inf_cache_count(&inf->cache);
}

void api_informer_foreach(const api_informer *inf,
    void (*fn)(json_t *obj, void *payload), void *payload)
{
	cu_map_iter it = CU_MAP_ITER_INIT;
	struct entry *e;

	while (inf_cache_next(&inf->cache, &it, &e)) {
		json_t *o = entry_obj(inf, e);

		if (o != NULL)
			fn(o, payload);
	}
}

size_t api_informer_foreach_owned(const api_informer *inf, const char *uid,
    void (*fn)(json_t *obj, void *payload), void *payload)
{
	const struct owners *o = inf_owner_index_get(&inf->owners, uid);
	size_t i;

	if (o == NULL)
		return 0;
	for (i = 0; fn != NULL && i < o->n; i++)
		if (entry_obj(inf, o->v[i].e) != NULL)
			fn(entry_obj(inf, o->v[i].e), payload);
	return o->n;
}

int api_informer_compact(api_informer *inf)
{
	if (inf->compact)
		return CU_OK;
	if (inf_cache_count(&inf->cache) > 0)
		return CU_EINVAL;
	inf->pool = cu_calloc(POOL_CAP, sizeof(*inf->pool));
	if (inf->pool == NULL)
		return CU_ENOMEM;
	inf->compact = true;
	return CU_OK;
}

const char *api_informer_resource_version(const api_informer *inf)
{
	return inf->rv;
}

void api_informer_stats(const api_informer *inf, struct api_informer_stats *out)
{
	*out = inf->stats;
}

void api_informer_feed_line(api_informer *inf, const char *line, size_t len)
{
	on_watch_line(line, len, inf);
}
