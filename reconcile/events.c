/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconcile/events.c - the events.k8s.io/v1 Event recorder's pure core (see
 * reconcile.h): two LRU maps on lib's cu_map (series keys -> recorded
 * Event, spam keys -> token bucket), the CREATE/PATCH/DROP decision and
 * the JSON bodies, Kueue's event types and reporting controllers by
 * reason, and the Suspended/Resumed transition guard. No I/O, no clock
 * reads.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "reconcile/reconcile.h"

/* ---- a small LRU map keyed by byte strings ------------------------------ */

/* A key: bytes (may hold NULs: the key joins fields with them). */
struct bkey {
	const char *p; /* [owned by the entry; borrowed in lookups] */
	size_t n;
};

struct entry {
	struct bkey k;		   /* k.p [owned] */
	struct entry *prev, *next; /* recency list, most recent first */
	/* series entries */
	char *ev_name; /* [owned] */
	int32_t count;
	/* the count last written (1: the create) and when */
	int32_t sent;
	int64_t sent_ns;
	/* spam entries: tokens in nanoseconds of refill (one token =
	 * refill_ns), and the time they were last topped up; series
	 * entries: the time of the last observation */
	int64_t tokens;
	int64_t last_ns;
};

/* The index is lib's map (keys borrowed from the entries); the recency
 * list owns the entries. */
struct lru {
	cu_map map;
	size_t cap;
	struct entry head; /* sentinel: head.next most, head.prev least */
};

static uint64_t bkey_hash(const void *key)
{
	const struct bkey *k = key;
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */

	for (size_t i = 0; i < k->n; i++) {
		h ^= (unsigned char)k->p[i];
		h *= 1099511628211ULL;
	}
	return h;
}

static bool bkey_eq(const void *a, const void *b)
{
	const struct bkey *x = a, *y = b;

	return x->n == y->n && memcmp(x->p, y->p, x->n) == 0;
}

static void entry_free(struct entry *e)
{
	if (e == NULL)
		return;
	cu_free((char *)e->k.p);
	cu_free(e->ev_name);
	cu_free(e);
}

static int lru_init(struct lru *l, size_t cap)
{
	memset(l, 0, sizeof(*l));
	cu_map_init_custom(&l->map, bkey_hash, bkey_eq);
	l->cap = cap;
	l->head.next = l->head.prev = &l->head;
	return cu_map_reserve(&l->map, cap + 1);
}

static void lru_dispose(struct lru *l)
{
	struct entry *e, *next;

	if (l->head.next == NULL)
		return;
	for (e = l->head.next; e != &l->head; e = next) {
		next = e->next;
		entry_free(e);
	}
	cu_map_dispose(&l->map);
	memset(l, 0, sizeof(*l));
}

static struct entry *lru_find(const struct lru *l, const char *key, size_t n)
{
	struct bkey k = {key, n};

	return cu_map_get(&l->map, &k);
}

static void list_remove(struct entry *e)
{
	e->prev->next = e->next;
	e->next->prev = e->prev;
}

static void list_push_front(struct lru *l, struct entry *e)
{
	e->prev = &l->head;
	e->next = l->head.next;
	l->head.next->prev = e;
	l->head.next = e;
}

static void lru_touch(struct lru *l, struct entry *e)
{
	list_remove(e);
	list_push_front(l, e);
}

/* Unlink e from the map (the caller frees it). */
static void lru_unlink(struct lru *l, struct entry *e)
{
	cu_map_del(&l->map, &e->k);
	list_remove(e);
}

/* Room for one lru_link in each map: the only step of a record that
 * can fail, taken before anything changes. CU_ENOMEM. */
static int lru_reserve(struct lru *l)
{
	return cu_map_reserve(&l->map, 1);
}

/* Link a new entry (key not present) as most recent; evict the least
 * recently used one when over capacity. Cannot fail after lru_reserve
 * (the list owns the entry either way). */
static void lru_link(struct lru *l, struct entry *e)
{
	if (cu_map_put(&l->map, &e->k, e, NULL) != CU_OK)
		cu_warn("events: index full"); /* not after lru_reserve */
	list_push_front(l, e);
	if (cu_map_count(&l->map) > l->cap) {
		struct entry *old = l->head.prev;
		lru_unlink(l, old);
		entry_free(old);
	}
}

/* New unlinked entry with a copy of key. NULL on ENOMEM. */
static struct entry *entry_new(const char *key, size_t n)
{
	struct entry *e = cu_calloc(1, sizeof(*e));
	char *p;

	if (e == NULL)
		return NULL;
	p = cu_malloc(n ? n : 1);
	if (p == NULL) {
		cu_free(e);
		return NULL;
	}
	memcpy(p, key, n);
	e->k.p = p;
	e->k.n = n;
	return e;
}

/* ---- the recorder -------------------------------------------------------- */

struct rec_events {
	char *component; /* [owned] */
	char *instance;	 /* [owned] or NULL */
	int64_t burst;
	int64_t refill_ns;
	int64_t last_name_ns; /* last nanosecond used in an Event name */
	struct lru dedup;
	struct lru spam;
};

void rec_event_write_dispose(struct rec_event_write *w)
{
	if (w == NULL)
		return;
	cu_free(w->namespace_);
	cu_free(w->name);
	json_decref(w->body);
	memset(w, 0, sizeof(*w));
}

int rec_events_new(
    rec_events **out, const struct rec_events_opts *opts, cu_error *err)
{
	rec_events *r;
	size_t lru_size;

	*out = NULL;
	if (opts == NULL || opts->component == NULL ||
	    opts->component[0] == '\0')
		return cu_error_set(err, CU_EINVAL,
		    "events: a reporting component is required");
	if (opts->burst < 0 || opts->refill_ns < 0 || opts->burst > 1000000 ||
	    opts->refill_ns > 86400LL * 1000000000LL ||
	    opts->lru_size > ((size_t)1 << 24))
		return cu_error_set(err, CU_EINVAL,
		    "events: spam filter limits out of range (burst %d, "
		    "refill %" PRId64 " ns, lru %zu)",
		    opts->burst, opts->refill_ns, opts->lru_size);
	r = cu_calloc(1, sizeof(*r));
	if (r == NULL)
		return cu_error_set(err, CU_ENOMEM, "events: out of memory");
	lru_size = opts->lru_size ? opts->lru_size : REC_EVENTS_LRU_SIZE;
	r->burst = opts->burst ? opts->burst : REC_EVENTS_SPAM_BURST;
	r->refill_ns =
	    opts->refill_ns ? opts->refill_ns : REC_EVENTS_SPAM_REFILL_NS;
	r->component = cu_strdup(opts->component);
	r->instance = opts->instance != NULL && opts->instance[0] != '\0'
			  ? cu_strdup(opts->instance)
			  : NULL;
	if (r->component == NULL ||
	    (opts->instance != NULL && opts->instance[0] != '\0' &&
		r->instance == NULL) ||
	    lru_init(&r->dedup, lru_size) != CU_OK ||
	    lru_init(&r->spam, lru_size) != CU_OK) {
		rec_events_free(r);
		return cu_error_set(err, CU_ENOMEM, "events: out of memory");
	}
	*out = r;
	return CU_OK;
}

void rec_events_free(rec_events *r)
{
	if (r == NULL)
		return;
	lru_dispose(&r->dedup);
	lru_dispose(&r->spam);
	cu_free(r->component);
	cu_free(r->instance);
	cu_free(r);
}

size_t rec_events_size(const rec_events *r)
{
	return r != NULL ? cu_map_count(&r->dedup.map) : 0;
}

size_t rec_events_spam_size(const rec_events *r)
{
	return r != NULL ? cu_map_count(&r->spam.map) : 0;
}

static const char *s_or_empty(const char *s)
{
	return s != NULL ? s : "";
}

static bool utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p != '\0') {
		unsigned char c = *p;
		size_t n;
		uint32_t cp;

		if (c < 0x80) {
			p++;
			continue;
		}
		if (c >= 0xC2 && c <= 0xDF) {
			n = 1;
			cp = c & 0x1F;
		} else if (c >= 0xE0 && c <= 0xEF) {
			n = 2;
			cp = c & 0x0F;
		} else if (c >= 0xF0 && c <= 0xF4) {
			n = 3;
			cp = c & 0x07;
		} else {
			return false;
		}
		for (size_t i = 1; i <= n; i++) {
			if ((p[i] & 0xC0) != 0x80)
				return false;
			cp = (cp << 6) | (p[i] & 0x3F);
		}
		if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
		    cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
			return false;
		p += n + 1;
	}
	return true;
}

static int validate(const struct rec_event *ev, cu_error *err)
{
	const char *fields[] = {ev->kind, ev->api_version, ev->namespace_,
	    ev->name, ev->uid, ev->field_path, ev->type, ev->reason,
	    ev->message, ev->reporting_controller, ev->action};

	if (ev->kind == NULL || ev->kind[0] == '\0' || ev->name == NULL ||
	    ev->name[0] == '\0')
		return cu_error_set(err, CU_EINVAL,
		    "event: involvedObject kind and name are required");
	if (ev->reason == NULL || ev->reason[0] == '\0')
		return cu_error_set(err, CU_EINVAL,
		    "event about %s %s: reason is required", ev->kind,
		    ev->name);
	if (ev->type == NULL || (strcmp(ev->type, REC_EVENT_NORMAL) != 0 &&
				    strcmp(ev->type, REC_EVENT_WARNING) != 0))
		return cu_error_set(err, CU_EINVAL,
		    "event about %s %s: type must be Normal or Warning",
		    ev->kind, ev->name);
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (fields[i] != NULL && !utf8_valid(fields[i]))
			return cu_error_set(err, CU_EINVAL,
			    "event about %s %s: text is not valid UTF-8",
			    ev->kind, ev->name);
	return CU_OK;
}

/* Length-prefixed concatenation, so that no two field lists collide. */
static int build_key(cu_buf *b, const char *const *fields, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *f = s_or_empty(fields[i]);
		size_t len = strlen(f);
		int rc = cu_buf_addf(b, "%zu:", len);
		if (rc == CU_OK && len > 0)
			rc = cu_buf_add(b, f, len);
		if (rc != CU_OK)
			return rc;
	}
	return CU_OK;
}

/* client-go's isomorphic key (the instance is the recorder's): the note
 * is not part of it, a repeat with a newer note joins the series. */
static int event_key(cu_buf *b, const struct rec_event *ev, const char *comp)
{
	const char *f[] = {comp, ev->action != NULL ? ev->action : ev->reason,
	    ev->kind, ev->namespace_, ev->name, ev->field_path, ev->uid,
	    ev->api_version, ev->type, ev->reason};
	return build_key(b, f, sizeof(f) / sizeof(f[0]));
}

static int spam_key(cu_buf *b, const struct rec_event *ev, const char *comp)
{
	const char *f[] = {comp, "", ev->kind, ev->namespace_, ev->name,
	    ev->uid, ev->api_version};
	return build_key(b, f, sizeof(f) / sizeof(f[0]));
}

static bool set_str(json_t *o, const char *key, const char *v)
{
	return json_object_set_new(o, key, json_string(v)) == 0;
}

static bool set_str_nonempty(json_t *o, const char *key, const char *v)
{
	if (v == NULL || v[0] == '\0')
		return true;
	return set_str(o, key, v);
}

/* "<comp>-<instance>" cut to REC_EVENTS_INSTANCE_MAX bytes. [owned] */
static char *instance_of(const rec_events *r, const char *comp)
{
	char *s = r->instance != NULL ? cu_asprintf("%s-%s", comp, r->instance)
				      : cu_strdup(comp);

	if (s != NULL && strlen(s) > REC_EVENTS_INSTANCE_MAX)
		s[REC_EVENTS_INSTANCE_MAX] = '\0';
	return s;
}

/* Byte length of the longest prefix of s, at most max bytes, that ends
 * on a UTF-8 character boundary (s is valid UTF-8). */
static size_t utf8_prefix(const char *s, size_t max)
{
	size_t n = max;

	while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
		n--;
	return n;
}

char *rec_events_truncate_note(const char *note)
{
	static const char suffix[] = " ...";
	size_t len, keep;
	char *out;

	if (note == NULL)
		note = "";
	len = strlen(note);
	if (len <= REC_EVENTS_NOTE_MAX)
		return cu_strdup(note);
	keep = utf8_prefix(note, REC_EVENTS_NOTE_MAX - (sizeof(suffix) - 1));
	out = cu_malloc(keep + sizeof(suffix));
	if (out == NULL)
		return NULL;
	memcpy(out, note, keep);
	memcpy(out + keep, suffix, sizeof(suffix));
	return out;
}

static json_t *create_body(const rec_events *r, const struct rec_event *ev,
    const char *comp, const char *ns, const char *name, int64_t now_ns)
{
	char ts[CU_TIME_MICRO_LEN];
	char *inst = instance_of(r, comp),
	     *note = rec_events_truncate_note(ev->message);
	json_t *body = json_object(), *meta = json_object(),
	       *reg = json_object();
	bool ok = body != NULL && meta != NULL && reg != NULL && inst != NULL &&
		  note != NULL;

	cu_time_format_micro(now_ns, ts);
	ok = ok && set_str(body, "apiVersion", "events.k8s.io/v1") &&
	     set_str(body, "kind", "Event") && set_str(meta, "name", name) &&
	     set_str(meta, "namespace", ns) && set_str(reg, "kind", ev->kind) &&
	     set_str_nonempty(reg, "namespace", ev->namespace_) &&
	     set_str(reg, "name", ev->name) &&
	     set_str_nonempty(reg, "uid", ev->uid) &&
	     set_str_nonempty(reg, "apiVersion", ev->api_version) &&
	     set_str_nonempty(reg, "fieldPath", ev->field_path);
	if (ok) {
		ok = json_object_set(body, "metadata", meta) == 0 &&
		     set_str(body, "eventTime", ts) &&
		     set_str(body, "reportingController", comp) &&
		     set_str(body, "reportingInstance", inst) &&
		     set_str(body, "action",
			 ev->action != NULL && ev->action[0] != '\0'
			     ? ev->action
			     : ev->reason) &&
		     set_str(body, "reason", ev->reason) &&
		     json_object_set(body, "regarding", reg) == 0 &&
		     set_str(body, "note", note) &&
		     set_str(body, "type", ev->type);
	}
	json_decref(meta);
	json_decref(reg);
	cu_free(inst);
	cu_free(note);
	if (!ok) {
		json_decref(body);
		return NULL;
	}
	return body;
}

/* The strategic-merge patch of a series: {"series": {count,
 * lastObservedTime}} (client-go's createPatchBytesForSeries). */
static json_t *patch_body(int32_t count, int64_t now_ns)
{
	char ts[CU_TIME_MICRO_LEN];

	cu_time_format_micro(now_ns, ts);
	return json_pack("{s:{s:i, s:s}}", "series", "count", (json_int_t)count,
	    "lastObservedTime", ts);
}

/* Token bucket: top up by the time since last, capped at burst. */
static void bucket_refill(
    const rec_events *r, int64_t *tokens, int64_t *last_ns, int64_t now_ns)
{
	int64_t full = r->burst * r->refill_ns;

	if (now_ns > *last_ns) {
		int64_t dt = now_ns - *last_ns;
		*tokens = dt >= full - *tokens ? full : *tokens + dt;
		*last_ns = now_ns;
	}
}

static int oom(cu_error *err)
{
	return cu_error_set(err, CU_ENOMEM, "events: out of memory");
}

/* One record() call's changes to the two LRUs, applied by commit() only
 * once every allocation has succeeded. */
struct pending {
	struct entry *spam;	/* the spam-filter entry found, or NULL */
	struct entry *new_spam; /* a new one to link (owned until linked) */
	int64_t tokens, last_ns;
	bool drop;	     /* the spam filter says: send nothing */
	struct entry *d;     /* the dedup entry found, or NULL */
	struct entry *new_d; /* a new one to link (owned until linked) */
	int64_t name_ns;     /* the time the new Event's name is made of */
};

/* 1. The spam filter's token bucket for key sk. CU_ENOMEM when out of
 * memory. */
static int spam_filter(
    rec_events *r, const cu_buf *sk, int64_t now_ns, struct pending *p)
{
	p->spam = lru_find(&r->spam, sk->ptr, sk->len);
	if (p->spam != NULL) {
		p->tokens = p->spam->tokens;
		p->last_ns = p->spam->last_ns;
	} else {
		p->new_spam = entry_new(sk->ptr, sk->len);
		if (p->new_spam == NULL)
			return CU_ENOMEM;
		p->tokens = r->burst * r->refill_ns;
	}
	bucket_refill(r, &p->tokens, &p->last_ns, now_ns);
	if (p->tokens < r->refill_ns)
		p->drop = true;
	else
		p->tokens -= r->refill_ns;
	return CU_OK;
}

/* A CREATE under a fresh name (ev->name and a time later than the last
 * one named), and the dedup entry for it. CU_ENOMEM when out of memory
 * (out half filled). */
static int plan_create(rec_events *r, const struct rec_event *ev,
    const char *comp, const char *ns, const cu_buf *ek, int64_t now_ns,
    struct pending *p, struct rec_event_write *out)
{
	if (r->last_name_ns != INT64_MAX && p->name_ns <= r->last_name_ns)
		p->name_ns = r->last_name_ns + 1;
	out->action = REC_EVENT_CREATE;
	out->count = 1;
	out->name = p->name_ns < 0 ? cu_asprintf("%s.-%" PRIx64, ev->name,
					 (uint64_t)0 - (uint64_t)p->name_ns)
				   : cu_asprintf("%s.%" PRIx64, ev->name,
					 (uint64_t)p->name_ns);
	out->namespace_ = cu_strdup(ns);
	p->new_d = entry_new(ek->ptr, ek->len);
	if (p->new_d != NULL) {
		p->new_d->count = 1;
		p->new_d->sent = 1;
		p->new_d->sent_ns = now_ns;
		p->new_d->ev_name = out->name ? cu_strdup(out->name) : NULL;
	}
	if (out->name != NULL && out->namespace_ != NULL)
		out->body = create_body(r, ev, comp, ns, out->name, now_ns);
	if (p->new_d == NULL || p->new_d->ev_name == NULL)
		return CU_ENOMEM;
	return CU_OK;
}

/* 2. Dedup: a PATCH of the Event already recorded under key ek (not for
 * a re-create), or a CREATE. CU_ENOMEM when out of memory. */
static int plan_write(rec_events *r, const struct rec_event *ev,
    const char *comp, const char *ns, const cu_buf *ek, int64_t now_ns,
    bool recreate, struct pending *p, struct rec_event_write *out)
{
	int rc;

	p->d = lru_find(&r->dedup, ek->ptr, ek->len);
	/* A series not observed for finishTime is over (client-go's
	 * finishSeries): a new Event. */
	if (p->d != NULL && !recreate &&
	    now_ns - p->d->last_ns <= REC_EVENTS_SERIES_FINISH_NS) {
		out->count =
		    p->d->count < INT32_MAX ? p->d->count + 1 : INT32_MAX;
		/* client-go writes the first repeat (the series starts),
		 * then only counts until its refresh is due. */
		if (p->d->sent > 1 &&
		    now_ns - p->d->sent_ns < REC_EVENTS_SERIES_REFRESH_NS) {
			out->action = REC_EVENT_FOLD;
			return CU_OK;
		}
		out->action = REC_EVENT_PATCH;
		out->name = cu_strdup(p->d->ev_name);
		out->namespace_ = cu_strdup(ns);
		out->body = patch_body(out->count, now_ns);
	} else {
		rc = plan_create(r, ev, comp, ns, ek, now_ns, p, out);
		if (rc != CU_OK)
			return rc;
	}
	if (out->name == NULL || out->namespace_ == NULL || out->body == NULL)
		return CU_ENOMEM;
	return CU_OK;
}

/* Apply p to the LRUs for the write out. CU_ENOMEM, with nothing
 * changed, when the LRUs cannot grow. */
static int commit(rec_events *r, bool recreate, struct pending *p,
    const struct rec_event_write *out, int64_t now_ns)
{
	if (lru_reserve(&r->spam) != CU_OK || lru_reserve(&r->dedup) != CU_OK)
		return CU_ENOMEM;
	if (!recreate) {
		if (p->new_spam != NULL) {
			p->spam = p->new_spam;
			p->new_spam = NULL;
			lru_link(&r->spam, p->spam);
		} else {
			lru_touch(&r->spam, p->spam);
		}
		p->spam->tokens = p->tokens;
		p->spam->last_ns = p->last_ns;
	}
	if (out->action == REC_EVENT_PATCH || out->action == REC_EVENT_FOLD) {
		p->d->count = out->count;
		p->d->last_ns = now_ns;
		if (out->action == REC_EVENT_PATCH) {
			p->d->sent = out->count;
			p->d->sent_ns = now_ns;
		}
		lru_touch(&r->dedup, p->d);
	} else if (out->action == REC_EVENT_CREATE) {
		if (p->d != NULL) {
			lru_unlink(&r->dedup, p->d);
			entry_free(p->d);
		}
		p->new_d->last_ns = now_ns;
		lru_link(&r->dedup, p->new_d);
		p->new_d = NULL;
		r->last_name_ns = p->name_ns;
	}
	return CU_OK;
}

static int record(rec_events *r, const struct rec_event *ev, int64_t now_ns,
    bool recreate, struct rec_event_write *out, cu_error *err)
{
	const char *comp, *ns;
	cu_buf ek, sk;
	struct pending p;
	int rc;

	memset(out, 0, sizeof(*out));
	if (r == NULL || ev == NULL)
		return cu_error_set(err, CU_EINVAL, "events: NULL argument");
	if ((rc = validate(ev, err)) != CU_OK)
		return rc;
	comp = ev->reporting_controller != NULL &&
		       ev->reporting_controller[0] != '\0'
		   ? ev->reporting_controller
		   : r->component;
	ns = ev->namespace_ != NULL && ev->namespace_[0] != '\0'
		 ? ev->namespace_
		 : "default";

	cu_buf_init(&ek, REC_EVENTS_KEY_MAX);
	cu_buf_init(&sk, REC_EVENTS_KEY_MAX);
	if ((rc = event_key(&ek, ev, comp)) != CU_OK ||
	    (rc = spam_key(&sk, ev, comp)) != CU_OK) {
		cu_buf_dispose(&ek);
		cu_buf_dispose(&sk);
		if (rc == CU_ETOOBIG)
			return cu_error_set(err, rc,
			    "event about %s %s: key longer than %zu bytes",
			    ev->kind, ev->name, (size_t)REC_EVENTS_KEY_MAX);
		return oom(err);
	}
	memset(&p, 0, sizeof(p));
	p.last_ns = now_ns;
	p.name_ns = now_ns;
	/* The spam filter is not for a re-create of an expired Event. */
	rc = recreate ? CU_OK : spam_filter(r, &sk, now_ns, &p);
	if (rc == CU_OK && p.drop)
		out->action = REC_EVENT_DROP;
	else if (rc == CU_OK)
		rc =
		    plan_write(r, ev, comp, ns, &ek, now_ns, recreate, &p, out);
	if (rc == CU_OK)
		rc = commit(r, recreate, &p, out, now_ns);
	cu_buf_dispose(&ek);
	cu_buf_dispose(&sk);
	if (rc != CU_OK) {
		entry_free(p.new_spam);
		entry_free(p.new_d);
		rec_event_write_dispose(out);
		return oom(err);
	}
	return CU_OK;
}

int rec_events_record(rec_events *r, const struct rec_event *ev, int64_t now_ns,
    struct rec_event_write *out, cu_error *err)
{
	return record(r, ev, now_ns, false, out, err);
}

int rec_events_recreate(rec_events *r, const struct rec_event *ev,
    int64_t now_ns, struct rec_event_write *out, cu_error *err)
{
	return record(r, ev, now_ns, true, out, err);
}

void rec_events_forget(rec_events *r, const struct rec_event *ev)
{
	const char *comp;
	cu_buf ek;
	struct entry *d;

	if (r == NULL || ev == NULL || ev->kind == NULL || ev->name == NULL)
		return;
	comp = ev->reporting_controller != NULL &&
		       ev->reporting_controller[0] != '\0'
		   ? ev->reporting_controller
		   : r->component;
	cu_buf_init(&ek, REC_EVENTS_KEY_MAX);
	if (event_key(&ek, ev, comp) == CU_OK) {
		d = lru_find(&r->dedup, ek.ptr, ek.len);
		if (d != NULL) {
			lru_unlink(&r->dedup, d);
			entry_free(d);
		}
	}
	cu_buf_dispose(&ek);
}

void rec_events_forget_name(rec_events *r, const char *ns, const char *name)
{
	struct entry *e;

	(void)ns; /* names are unique: <object>.<nanoseconds>, never reused */
	if (r == NULL || name == NULL || r->dedup.head.next == NULL)
		return;
	for (e = r->dedup.head.next; e != &r->dedup.head; e = e->next)
		if (e->ev_name != NULL && strcmp(e->ev_name, name) == 0) {
			lru_unlink(&r->dedup, e);
			entry_free(e);
			return;
		}
}

/* ---- Kueue's notes ------------------------------------------------------- */

static const char *z(const char *s)
{
	return s != NULL ? s : "";
}

char *rec_events_note_quota_reserved(const char *cq, int64_t wait_ns)
{
	return cu_asprintf("Quota reserved in ClusterQueue %s, wait time since "
			   "queued was %.0fs",
	    z(cq), (double)wait_ns / 1e9);
}

char *rec_events_note_admitted(const char *cq, int64_t wait_ns)
{
	return cu_asprintf("Admitted by ClusterQueue %s, wait time since "
			   "reservation was %.0fs",
	    z(cq), (double)wait_ns / 1e9);
}

#define PRIO_FMT                                                               \
	"; preemptor effective priority: %d (base: %d, boost: 0); preemptee "  \
	"effective priority: %d (base: %d, boost: 0)"

char *rec_events_note_preempted(
    const char *msg, int32_t preemptor_prio, int32_t preemptee_prio)
{
	return cu_asprintf("%s" PRIO_FMT, z(msg), (int)preemptor_prio,
	    (int)preemptor_prio, (int)preemptee_prio, (int)preemptee_prio);
}

char *rec_events_note_preempted_workload(const char *ns, const char *name,
    const char *uid, const char *cq, int32_t preemptor_prio,
    int32_t preemptee_prio)
{
	return cu_asprintf("Preempted workload %s/%s (UID: %s) in ClusterQueue "
			   "%s" PRIO_FMT,
	    z(ns), z(name), z(uid), z(cq), (int)preemptor_prio,
	    (int)preemptor_prio, (int)preemptee_prio, (int)preemptee_prio);
}

char *rec_events_note_finished(const char *ns, const char *name)
{
	return cu_asprintf(
	    "Workload '%s/%s' is declared finished", z(ns), z(name));
}

/* ---- Kueue's types and reporting controllers ------------------------------
 */

static bool in_list(const char *s, const char *const *list)
{
	for (; *list != NULL; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

void rec_events_kueue_meta(const char *kind, const char *reason,
    const char **type, const char **controller)
{
	/* The scheduler's events (pkg/scheduler, its preemptor and the
	 * eviction it writes); the pending ones are the QuotaReserved=False
	 * reasons it writes (UnadmittedWorkloadsObservability). */
	static const char *const sched[] = {"QuotaReserved", "Admitted",
	    "Preempted", "PreemptedWorkload", "EvictedDueToPreempted",
	    "SecondPassFailed", NULL};
	static const char *const pending[] = {"Pending", "WaitingForQuota",
	    "NoMatchingFlavor", "ExceedsMaxQuota", "Misconfigured", "Suspended",
	    "WaitingForPreemptedWorkloads", "WaitingForPodsReady",
	    "Inadmissible", NULL};
	static const char *const wl_warn[] = {"SecondPassFailed",
	    "AdmissionCheckRejected", "MaximumExecutionTimeExceeded",
	    "UnsupportedField", NULL};
	/* Kueue's ProvisioningRequest admission check controller. */
	static const char *const prov[] = {"ProvisioningRequestCreated",
	    "AdmissionCheckUpdated", "FailedCreate", NULL};
	static const char *const job_warn[] = {"JobNestingTooDeep",
	    "ErrWorkloadCompose", "WorkloadPriorityClassNotFound",
	    "UnsupportedField", NULL};
	const char *t = REC_EVENT_NORMAL, *c = NULL;

	if (kind == NULL)
		kind = "";
	if (reason == NULL)
		reason = "";
	if (strcmp(kind, "Workload") == 0) {
		bool pend = in_list(reason, pending);

		if (pend || in_list(reason, wl_warn) ||
		    strcmp(reason, "FailedCreate") == 0)
			t = REC_EVENT_WARNING;
		c = pend || in_list(reason, sched) ? REC_EVENTS_CTL_ADMISSION
		    : in_list(reason, prov)	   ? REC_EVENTS_CTL_PROVISIONING
						   : REC_EVENTS_CTL_WORKLOAD;
	} else if (strcmp(kind, "Job") == 0 || strcmp(kind, "JobSet") == 0 ||
		   strcmp(kind, "Pod") == 0) {
		if (in_list(reason, job_warn))
			t = REC_EVENT_WARNING;
		c = kind[0] == 'J' && kind[3] == '\0' ? REC_EVENTS_CTL_JOB
		    : kind[0] == 'J'		      ? REC_EVENTS_CTL_JOBSET
						      : "pod-kueue-controller";
	} else if (strcmp(reason, "UnsupportedField") == 0) {
		t = REC_EVENT_WARNING;
	}
	if (type != NULL)
		*type = t;
	if (controller != NULL)
		*controller = c;
}

/* ---- transitions ----------------------------------------------------------
 */

const char *rec_events_should_emit(
    struct rec_transition *t, enum rec_run_state prev, enum rec_run_state next)
{
	const char *reason;

	if (next == REC_RUN_UNKNOWN)
		return NULL;
	if (prev == next) {
		/* Nothing written: remember the observed state, so that a
		 * later real transition away from it is announced. */
		if (t != NULL)
			t->announced = next;
		return NULL;
	}
	if (prev == REC_RUN_UNKNOWN) {
		if (t != NULL)
			t->announced = next;
		return NULL;
	}
	if (t != NULL) {
		if (t->announced == next)
			return NULL; /* stale observation, said already */
		t->announced = next;
	}
	reason = next == REC_RUN_SUSPENDED ? REC_EVENT_REASON_SUSPENDED
					   : REC_EVENT_REASON_RESUMED;
	return reason;
}
