/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/watch.c - watch fan-out: turns each stored change into
 * the per-watcher event (ADDED/MODIFIED/DELETED after selector
 * transitions, docs/apiserver.md §3.3), frames it as one JSON line and
 * wakes the watcher's suspended connection.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "tests/apiserver/apiserver.h"

/* Soft cap on bytes queued for one watcher: past it the watch is closed,
 * as kube-apiserver closes watchers that cannot keep up. */
#define WATCH_MAX_BUFFER (64u * 1024u * 1024u)

struct field_ctx {
	const struct as_kind *k;
	json_t *obj;
};

static const char *label_get(const char *key, void *payload)
{
	json_t *labels = as_jget(payload, "metadata.labels");

	return json_string_value(json_object_get(labels, key));
}

static const char *field_get(const char *field, void *payload)
{
	struct field_ctx *c = payload;

	return as_obj_field(c->k, c->obj, field);
}

static bool watch_matches(struct as_watch *w, json_t *obj)
{
	struct field_ctx fc = {w->kind, obj};

	if (obj == NULL)
		return false;
	if (w->ns != NULL) {
		const char *ns = as_jstr(obj, "metadata.namespace");

		if (ns == NULL || strcmp(ns, w->ns) != 0)
			return false;
	}
	if (!ns_selector_matches(&w->labels, label_get, obj))
		return false;
	return ns_fieldsel_matches(&w->fields, field_get, &fc);
}

static void wake(struct as_watch *w)
{
	if (w->suspended && w->conn != NULL) {
		w->suspended = false;
		MHD_resume_connection(w->conn);
		as_http_wake(w->srv);
	}
}

/* Queue one event line. obj is borrowed. rv_override (non-zero) replaces
 * metadata.resourceVersion (a selector-transition DELETED carries the
 * previous content with the new revision). */
/* Serialisation cache: one change goes to many watchers, mostly in the
 * same form, so it is serialised once. Cleared at the start and end of
 * every dispatch so that a freed object's address can never alias. */
static struct {
	json_t *obj;
	uint64_t rv;
	char *av;   /* owned */
	char *text; /* owned */
	size_t len;
} cache;

static void cache_clear(void)
{
	cu_free(cache.av);
	cu_free(cache.text);
	memset(&cache, 0, sizeof(cache));
}

static const char *serialise(json_t *obj, uint64_t rv_override,
    const char *want_av, const struct as_kind *view, size_t *len)
{
	const char *av = json_string_value(json_object_get(obj, "apiVersion"));
	bool fix_av =
	    want_av != NULL && (av == NULL || strcmp(av, want_av) != 0);
	json_t *o = obj;

	if (cache.text != NULL && cache.obj == obj && cache.rv == rv_override &&
	    ((cache.av == NULL && !fix_av) ||
		(cache.av != NULL && fix_av &&
		    strcmp(cache.av, want_av) == 0))) {
		*len = cache.len;
		return cache.text;
	}
	cache_clear();
	if (rv_override != 0 || fix_av) {
		char buf[32];

		o = view != NULL ? as_view_out(view, obj) : json_deep_copy(obj);
		if (o == NULL)
			return NULL;
		if (rv_override != 0) {
			snprintf(buf, sizeof(buf), "%llu",
			    (unsigned long long)rv_override);
			as_jset(
			    o, "metadata.resourceVersion", json_string(buf));
		}
		if (fix_av && view == NULL)
			json_object_set_new(
			    o, "apiVersion", json_string(want_av));
	}
	cache.text = as_json_dump(o, &cache.len);
	if (o != obj)
		json_decref(o);
	if (cache.text == NULL)
		return NULL;
	cache.obj = obj;
	cache.rv = rv_override;
	cache.av = fix_av ? cu_strdup(want_av) : NULL;
	*len = cache.len;
	return cache.text;
}

void as_watch_queue(
    struct as_watch *w, const char *type, json_t *obj, uint64_t rv_override)
{
	const char *text;
	char *owned = NULL;
	size_t len;

	if (w->done)
		return;
	if (w->convert_to != NULL) {
		owned = as_convert_event(w, obj, rv_override, &len);
		if (owned == NULL)
			return; /* an ERROR event ended the stream */
		text = owned;
	} else
		text =
		    serialise(obj, rv_override, w->api_version, w->view, &len);
	if (text == NULL || cu_buf_adds(&w->out, "{\"type\":\"") != CU_OK ||
	    cu_buf_adds(&w->out, type) != CU_OK ||
	    cu_buf_adds(&w->out, "\",\"object\":") != CU_OK ||
	    cu_buf_add(&w->out, text, len) != CU_OK ||
	    cu_buf_adds(&w->out, "}\n") != CU_OK ||
	    w->out.len > WATCH_MAX_BUFFER)
		goto fail;
	cu_free(owned);
	wake(w);
	return;
fail:
	cu_free(owned);
	cu_buf_dispose(&w->out);
	w->out_pos = 0;
	w->done = true;
	wake(w);
}

void as_watch_deliver(struct as_watch *w, const struct as_event *ev)
{
	bool now = ev->type != AS_EV_DELETED && watch_matches(w, ev->obj);
	bool before = ev->old != NULL && watch_matches(w, ev->old);

	if (ev->type == AS_EV_DELETED) {
		if (before)
			as_watch_queue(w, "DELETED", ev->obj, 0);
	} else if (now && before) {
		as_watch_queue(w, "MODIFIED", ev->obj, 0);
	} else if (now) {
		as_watch_queue(w, "ADDED", ev->obj, 0);
	} else if (before) {
		as_watch_queue(w, "DELETED", ev->old, ev->rv);
	}
}

void as_watch_dispatch(
    struct as_server *srv, struct as_kind *k, const struct as_event *ev)
{
	struct as_watch *w;

	(void)srv;
	cache_clear();
	for (w = k->watchers; w != NULL; w = w->next)
		as_watch_deliver(w, ev);
	cache_clear();
}

void as_watch_cache_clear(void)
{
	cache_clear();
}

void as_watch_error(struct as_watch *w, json_t *status)
{
	char *s = as_json_dump(status, NULL);

	if (s == NULL ||
	    cu_buf_addf(&w->out, "{\"type\":\"ERROR\",\"object\":%s}\n", s) !=
		CU_OK) {
		cu_buf_dispose(&w->out);
		w->out_pos = 0;
	}
	cu_free(s);
	w->done = true;
	wake(w);
}

static void on_deadline(struct ev_loop *loop, ev_timer *t, int revents)
{
	struct as_watch *w =
	    (struct as_watch *)((char *)t -
				offsetof(struct as_watch, deadline));

	(void)loop;
	(void)revents;
	w->done = true;
	wake(w);
}

static void on_bookmark(struct ev_loop *loop, ev_timer *t, int revents)
{
	struct as_watch *w =
	    (struct as_watch *)((char *)t -
				offsetof(struct as_watch, bookmark));
	char rv[32];
	json_t *bm;
	char *s;

	(void)loop;
	(void)revents;
	if (w->done)
		return;
	snprintf(rv, sizeof(rv), "%llu", (unsigned long long)w->srv->rv);
	bm = json_pack("{s:s, s:s, s:{s:s, s:n}}", "kind", w->kind->kind,
	    "apiVersion", w->api_version ? w->api_version : "v1", "metadata",
	    "resourceVersion", rv, "creationTimestamp");
	s = as_json_dump(bm, NULL);
	json_decref(bm);
	if (s != NULL &&
	    cu_buf_addf(
		&w->out, "{\"type\":\"BOOKMARK\",\"object\":%s}\n", s) == CU_OK)
		wake(w);
	cu_free(s);
}

void as_watch_attach(struct as_watch *w, double timeout_s)
{
	struct as_kind *k = w->kind;

	w->next = k->watchers;
	w->prev = NULL;
	if (k->watchers != NULL)
		k->watchers->prev = w;
	k->watchers = w;
	w->attached = true;
	ev_timer_init(&w->deadline, on_deadline, timeout_s, 0.);
	ev_timer_start(w->srv->loop, &w->deadline);
	if (w->bookmarks) {
		double iv = w->srv->bookmark_ms / 1000.0;

		ev_timer_init(&w->bookmark, on_bookmark, iv, iv);
		ev_timer_start(w->srv->loop, &w->bookmark);
	}
}

void as_watch_free(struct as_watch *w)
{
	if (w == NULL)
		return;
	if (w->attached) {
		if (w->prev != NULL)
			w->prev->next = w->next;
		else
			w->kind->watchers = w->next;
		if (w->next != NULL)
			w->next->prev = w->prev;
		ev_timer_stop(w->srv->loop, &w->deadline);
		if (w->bookmarks)
			ev_timer_stop(w->srv->loop, &w->bookmark);
	}
	cu_free(w->ns);
	cu_free(w->api_version);
	cu_free(w->convert_to);
	api_selector_dispose(&w->labels);
	ns_fieldsel_dispose(&w->fields);
	cu_buf_dispose(&w->out);
	cu_free(w);
}

static void end_watch(struct as_watch *w)
{
	w->done = true;
	wake(w);
}

void as_watch_drop_kind(struct as_server *srv, struct as_kind *k)
{
	struct as_watch *w;

	(void)srv;
	for (w = k->watchers; w != NULL; w = w->next) {
		/* A dropped connection, not a clean end: discard what is
		 * queued so clients see the stream stop mid-way. */
		cu_buf_reset(&w->out);
		w->out_pos = 0;
		end_watch(w);
	}
}

void as_watch_drop_all(struct as_server *srv)
{
	struct as_kind *k;

	for (k = srv->kinds; k != NULL; k = k->next)
		as_watch_drop_kind(srv, k);
}
