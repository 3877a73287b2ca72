/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/api_informer_test.c - api/informer.c against the project's
 * real API server (tests/apiserver) in-process on the same libev loop:
 * paginated initial sync, add/update/delete delivery, resume after dropped
 * watches without a relist, relist after compaction (410) with the cache
 * matching the server, bookmarks, selectors and the owner index.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/informer.h"
#include "tests/apiserver/apiserver.h"
#include "tests/apiserver/tls.h"
#include "tests/unit/fixtures.h"

static const struct api_resource CM = {"", "v1", "configmaps", true};

/* ---- informer fixtures --------------------------------------------- */

struct seen {
	int adds, updates, deletes, synced;
	int updates_same_rv; /* must stay 0 */
	api_informer *inf;
	bool cache_updated_first;
};

static void h_add(json_t *obj, void *payload)
{
	struct seen *s = payload;
	const char *md_ns = json_string_value(
	    json_object_get(json_object_get(obj, "metadata"), "namespace"));
	const char *md_name = json_string_value(
	    json_object_get(json_object_get(obj, "metadata"), "name"));

	s->adds++;
	if (s->inf != NULL && api_informer_get(s->inf, md_ns, md_name) != obj)
		s->cache_updated_first = false;
}

static const char *rv_of(json_t *obj)
{
	return json_string_value(json_object_get(
	    json_object_get(obj, "metadata"), "resourceVersion"));
}

static void h_update(json_t *old_obj, json_t *new_obj, void *payload)
{
	struct seen *s = payload;

	s->updates++;
	if (strcmp(rv_of(old_obj), rv_of(new_obj)) == 0)
		s->updates_same_rv++;
}

static void h_delete(json_t *obj, void *payload)
{
	struct seen *s = payload;

	(void)obj;
	s->deletes++;
}

static void h_synced(void *payload)
{
	((struct seen *)payload)->synced++;
}

static const struct api_informer_handlers handlers = {
    h_add, h_update, h_delete, h_synced};

static void start_informer(
    struct seen *s, const char *ns, const char *labels, api_informer **out)
{
	cu_error err;

	memset(s, 0, sizeof(*s));
	s->cache_updated_first = true;
	cr_assert_eq(api_informer_new(
			 out, fx_cl, &CM, ns, labels, NULL, &handlers, s, &err),
	    CU_OK, "%s", err.msg);
	s->inf = *out;
}

static bool synced_flag(api_informer *inf)
{
	double t0 = ev_time();

	while (!api_informer_synced(inf) && ev_time() - t0 < 20)
		ev_run(fx_loop, EVRUN_ONCE);
	return api_informer_synced(inf);
}

/* Run the loop until *counter >= want (or 20 s). */
static bool wait_count(int *counter, int want)
{
	double t0 = ev_time();

	while (*counter < want && ev_time() - t0 < 20)
		ev_run(fx_loop, EVRUN_ONCE);
	return *counter >= want;
}

static struct as_kind *cm_kind(void)
{
	return as_kind_find(&fx_srv, "", "v1", "configmaps");
}

static void seed_configmaps(int n, const char *prefix)
{
	int i;

	for (i = 0; i < n; i++) {
		char name[64];

		snprintf(name, sizeof(name), "%s%04d", prefix, i);
		cr_assert_eq(as_internal_create(&fx_srv, cm_kind(),
				 fx_configmap(name, "v"), "test"),
		    CU_OK);
	}
}

/* Count LISTs (GETs without watch=1) of configmaps in the access log. */
static int count_lists(void)
{
	struct fx_result r;
	json_t *e;
	size_t i;
	int n = 0;

	fx_call(&r, "GET", "/__test/log", NULL, NULL);
	json_array_foreach(json_object_get(r.body, "items"), i, e)
	{
		const char *path =
		    json_string_value(json_object_get(e, "path"));
		const char *q = json_string_value(json_object_get(e, "query"));

		if (strcmp(json_string_value(json_object_get(e, "verb")),
			"GET") == 0 &&
		    strstr(path, "configmaps") != NULL &&
		    strstr(q, "watch=") == NULL)
			n++;
	}
	fx_result_dispose(&r);
	return n;
}

struct cmp_ctx {
	api_informer *inf;
	int mismatches;
	int n;
	bool full; /* compare whole objects, not resourceVersions */
};

static void cmp_one(json_t *obj, void *payload)
{
	struct cmp_ctx *c = payload;
	json_t *md = json_object_get(obj, "metadata");
	json_t *cached = api_informer_get(c->inf,
	    json_string_value(json_object_get(md, "namespace")),
	    json_string_value(json_object_get(md, "name")));

	c->n++;
	if (cached == NULL ||
	    (c->full ? !json_equal(cached, obj)
		     : strcmp(rv_of(cached), rv_of(obj)) != 0))
		c->mismatches++;
}

/* The informer's cache equals the server's configmaps in default. */
static void assert_cache_matches_server(api_informer *inf)
{
	struct as_kind *k = cm_kind();
	struct cmp_ctx c = {inf, 0, 0, false};
	size_t i;

	for (i = 0; i < k->nitems; i++)
		if (strcmp(k->items[i].ns, "default") == 0)
			cmp_one(k->items[i].obj, &c);
	cr_assert_eq(c.mismatches, 0);
	cr_assert_eq((size_t)c.n, api_informer_count(inf),
	    "server %d, cache %zu", c.n, api_informer_count(inf));
}

/* ---- tests ------------------------------------------------------------ */

Test(api_informer, initial_sync_is_paginated, .init = fx_setup,
    .fini = fx_teardown)
{
	struct api_informer_stats st;
	struct seen s;
	api_informer *inf;

	seed_configmaps(1203, "cm");
	start_informer(&s, "default", NULL, &inf);
	cr_assert(synced_flag(inf));
	cr_assert_eq(s.synced, 1);
	cr_assert_eq(s.adds, 1203);
	cr_assert_eq(api_informer_count(inf), 1203);
	cr_assert(s.cache_updated_first);
	api_informer_stats(inf, &st);
	cr_assert_eq(st.lists, 3, "1203 objects at limit=500: 3 pages");
	cr_assert_eq(count_lists(), 3);
	cr_assert_not_null(api_informer_get(inf, "default", "cm0500"));
	cr_assert_str_eq(
	    json_string_value(json_object_get(
		api_informer_get(inf, "default", "cm0500"), "kind")),
	    "ConfigMap");
	cr_assert_neq(api_informer_resource_version(inf)[0], '\0');
	assert_cache_matches_server(inf);
	api_informer_free(inf);
}

Test(api_informer, delivers_add_update_delete, .init = fx_setup,
    .fini = fx_teardown)
{
	struct fx_result r;
	struct seen s;
	api_informer *inf;
	json_t *patch;
	cu_error err;

	seed_configmaps(3, "a");
	start_informer(&s, NULL, NULL, &inf);
	cr_assert(synced_flag(inf));
	cr_assert_eq(s.adds, 3);
	fx_call(&r, "POST", "/api/v1/namespaces/default/configmaps", NULL,
	    fx_configmap("new", "1"));
	cr_assert_eq(r.code, 201);
	fx_result_dispose(&r);
	cr_assert(wait_count(&s.adds, 4));
	cr_assert_not_null(api_informer_get(inf, "default", "new"));
	patch = json_pack("{s:{s:s}}", "data", "k", "2");
	memset(&r, 0, sizeof(r));
	cr_assert_eq(api_merge_patch(NULL, fx_cl, &CM, "default", "new", patch,
			 false, fx_on_resp, &r, &err),
	    CU_OK);
	json_decref(patch);
	cr_assert(fx_run_until(&r.done, 10));
	fx_result_dispose(&r);
	cr_assert(wait_count(&s.updates, 1));
	cr_assert_str_eq(
	    json_string_value(json_object_get(
		json_object_get(
		    api_informer_get(inf, "default", "new"), "data"),
		"k")),
	    "2");
	fx_call(&r, "DELETE", "/api/v1/namespaces/default/configmaps/new", NULL,
	    NULL);
	fx_result_dispose(&r);
	cr_assert(wait_count(&s.deletes, 1));
	cr_assert_null(api_informer_get(inf, "default", "new"));
	cr_assert_eq(s.updates_same_rv, 0);
	cr_assert_eq(s.synced, 1);
	assert_cache_matches_server(inf);
	api_informer_free(inf);
}

/* The cache keeps objects without metadata.managedFields, as
 * controller-runtime's cache strips them: nothing reads them, and for a
 * Workload written by several managers they outweigh the rest. */
Test(api_informer, cache_drops_managed_fields, .init = fx_setup,
    .fini = fx_teardown)
{
	struct fx_result r;
	struct seen s;
	api_informer *inf;
	struct as_kind *k = cm_kind();
	json_t *cached, *stored = NULL;
	size_t i;

	fx_call(&r, "POST", "/api/v1/namespaces/default/configmaps", NULL,
	    fx_configmap("early", "1"));
	cr_assert_eq(r.code, 201);
	fx_result_dispose(&r);
	start_informer(&s, NULL, NULL, &inf);
	cr_assert(synced_flag(inf));
	fx_call(&r, "POST", "/api/v1/namespaces/default/configmaps", NULL,
	    fx_configmap("late", "1"));
	cr_assert_eq(r.code, 201);
	fx_result_dispose(&r);
	cr_assert(wait_count(&s.adds, 2));
	for (i = 0; i < k->nitems; i++)
		if (strcmp(k->items[i].name, "late") == 0)
			stored = k->items[i].obj;
	cr_assert_not_null(json_object_get(
	    json_object_get(stored, "metadata"), "managedFields"));
	cached = api_informer_get(inf, "default", "early"); /* from the LIST */
	cr_assert_not_null(cached);
	cr_assert_null(json_object_get(
	    json_object_get(cached, "metadata"), "managedFields"));
	cached = api_informer_get(inf, "default", "late"); /* from the watch */
	cr_assert_not_null(cached);
	cr_assert_null(json_object_get(
	    json_object_get(cached, "metadata"), "managedFields"));
	api_informer_free(inf);
}

Test(api_informer, resumes_after_dropped_watch_without_relist, .init = fx_setup,
    .fini = fx_teardown)
{
	struct api_informer_stats st;
	struct fx_result r;
	struct seen s;
	api_informer *inf;

	seed_configmaps(5, "d");
	start_informer(&s, "default", NULL, &inf);
	cr_assert(synced_flag(inf));
	fx_run_for(0.2);
	fx_call(&r, "DELETE", "/__test/log", NULL, NULL);
	fx_result_dispose(&r);
	fx_call(&r, "POST", "/__test/drop-watches", NULL, NULL);
	fx_result_dispose(&r);
	/* written while no watch is open: the resumed watch replays it */
	cr_assert_eq(as_internal_create(&fx_srv, cm_kind(),
			 fx_configmap("while-down", "x"), "test"),
	    CU_OK);
	cr_assert(wait_count(&s.adds, 6));
	fx_call(&r, "POST", "/api/v1/namespaces/default/configmaps", NULL,
	    fx_configmap("after", "y"));
	fx_result_dispose(&r);
	cr_assert(wait_count(&s.adds, 7));
	cr_assert_eq(count_lists(), 0, "resume must not relist");
	api_informer_stats(inf, &st);
	cr_assert_eq(st.relists, 0);
	cr_assert_geq(st.watches, 2);
	cr_assert_eq(s.updates + s.deletes, 0);
	assert_cache_matches_server(inf);
	api_informer_free(inf);
}

Test(api_informer, relists_after_compaction_with_diff, .init = fx_setup,
    .fini = fx_teardown)
{
	struct api_informer_stats st;
	struct seen s;
	api_informer *inf;
	json_t *obj;

	seed_configmaps(4, "c");
	start_informer(&s, "default", NULL, &inf);
	cr_assert(synced_flag(inf));
	fx_run_for(0.2);
	/* in-process and in one step: no watch sees these changes */
	as_watch_drop_all(&fx_srv);
	cr_assert_eq(as_internal_create(&fx_srv, cm_kind(),
			 fx_configmap("c-new", "x"), "test"),
	    CU_OK);
	obj = json_deep_copy(as_store_get(cm_kind(), "default", "c0000"));
	json_object_set_new(
	    json_object_get(obj, "data"), "k", json_string("changed"));
	cr_assert_eq(
	    as_internal_update(&fx_srv, cm_kind(), obj, false, "test"), CU_OK);
	cr_assert_eq(
	    as_internal_delete(&fx_srv, cm_kind(), "default", "c0001", "test"),
	    CU_OK);
	as_store_compact(&fx_srv);
	cr_assert(wait_count(&s.deletes, 1));
	cr_assert(wait_count(&s.adds, 5));
	cr_assert(wait_count(&s.updates, 1));
	fx_run_for(0.3);
	cr_assert_eq(s.adds, 5);
	cr_assert_eq(s.updates, 1, "unchanged objects are not updated");
	cr_assert_eq(s.deletes, 1);
	cr_assert_eq(s.updates_same_rv, 0);
	cr_assert_eq(s.synced, 1);
	api_informer_stats(inf, &st);
	cr_assert_geq(st.relists, 1);
	assert_cache_matches_server(inf);
	cr_assert_null(api_informer_get(inf, "default", "c0001"));
	cr_assert_str_eq(
	    json_string_value(json_object_get(
		json_object_get(
		    api_informer_get(inf, "default", "c0000"), "data"),
		"k")),
	    "changed");
	/* and it watches again afterwards */
	cr_assert_eq(as_internal_create(&fx_srv, cm_kind(),
			 fx_configmap("c-later", "x"), "test"),
	    CU_OK);
	cr_assert(wait_count(&s.adds, 6));
	api_informer_free(inf);
}

/* A watch cut right after it delivered events is followed at once (the
 * server was healthy); one cut before it delivered anything backs off.
 * (client-go's reflector: only a short watch without events is an
 * error.) */
Test(api_informer, cut_watch_with_events_resumes_at_once, .init = fx_setup,
    .fini = fx_teardown)
{
	struct api_informer_stats st;
	struct seen s;
	api_informer *inf;
	uint64_t watches;
	double t0;

	seed_configmaps(2, "w");
	start_informer(&s, "default", NULL, &inf);
	cr_assert(synced_flag(inf));
	fx_run_for(0.1);
	/* an event on the watch, then the watch is cut (< 1 s old) */
	cr_assert_eq(as_internal_create(
			 &fx_srv, cm_kind(), fx_configmap("w-a", "x"), "test"),
	    CU_OK);
	cr_assert(wait_count(&s.adds, 3));
	as_watch_drop_all(&fx_srv);
	t0 = ev_time();
	cr_assert_eq(as_internal_create(
			 &fx_srv, cm_kind(), fx_configmap("w-b", "x"), "test"),
	    CU_OK);
	cr_assert(wait_count(&s.adds, 4));
	cr_assert_lt(ev_time() - t0, 0.6, "resumed after %.2f s, backed off",
	    ev_time() - t0);
	/* cut again: that watch delivered w-b, so the next one starts at
	 * once; cut that one before it delivered anything: it backs off */
	fx_run_for(0.1);
	api_informer_stats(inf, &st);
	watches = st.watches;
	as_watch_drop_all(&fx_srv);
	fx_run_for(0.1);
	api_informer_stats(inf, &st);
	cr_assert_eq(st.watches, watches + 1);
	watches = st.watches;
	as_watch_drop_all(&fx_srv);
	fx_run_for(0.5);
	api_informer_stats(inf, &st);
	cr_assert_eq(st.watches, watches, "re-watched within 0.5 s");
	fx_run_for(1.0);
	api_informer_stats(inf, &st);
	cr_assert_eq(st.watches, watches + 1);
	cr_assert_eq(st.relists, 0);
	assert_cache_matches_server(inf);
	api_informer_free(inf);
}

Test(api_informer, bookmarks_advance_resource_version, .init = fx_setup,
    .fini = fx_teardown)
{
	struct api_informer_stats st;
	struct seen s;
	api_informer *inf;
	char before[32];

	fx_srv.bookmark_ms = 100;
	seed_configmaps(2, "b");
	start_informer(&s, "default", NULL, &inf);
	cr_assert(synced_flag(inf));
	snprintf(
	    before, sizeof(before), "%s", api_informer_resource_version(inf));
	/* a change in another namespace moves the global revision only */
	cr_assert_eq(as_internal_create(&fx_srv,
			 as_kind_find(&fx_srv, "", "v1", "namespaces"),
			 json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1",
			     "kind", "Namespace", "metadata", "name", "other"),
			 "test"),
	    CU_OK);
	fx_run_for(0.6);
	api_informer_stats(inf, &st);
	cr_assert_geq(st.bookmarks, 1);
	cr_assert_eq(st.relists, 0);
	cr_assert_str_neq(api_informer_resource_version(inf), before,
	    "bookmark did not advance the RV");
	cr_assert_eq(s.adds, 2);
	api_informer_free(inf);
}

static void count_owned(json_t *obj, void *payload)
{
	(void)obj;
	(*(int *)payload)++;
}

Test(api_informer, label_selector_and_owner_index, .init = fx_setup,
    .fini = fx_teardown)
{
	struct seen s;
	api_informer *inf;
	int n = 0, i;

	for (i = 0; i < 6; i++) {
		char name[16];
		json_t *cm;

		snprintf(name, sizeof(name), "o%d", i);
		cm = fx_configmap(name, "v");
		json_object_set_new(json_object_get(cm, "metadata"), "labels",
		    json_pack("{s:s}", "app", i % 2 ? "odd" : "even"));
		json_object_set_new(json_object_get(cm, "metadata"),
		    "ownerReferences",
		    json_pack("[{s:s, s:s, s:s, s:s}]", "apiVersion", "v1",
			"kind", "ConfigMap", "name", "owner", "uid",
			i < 4 ? "uid-1" : "uid-2"));
		cr_assert_eq(
		    as_internal_create(&fx_srv, cm_kind(), cm, "test"), CU_OK);
	}
	start_informer(&s, "default", "app=even", &inf);
	cr_assert(synced_flag(inf));
	cr_assert_eq(s.adds, 3);
	cr_assert_eq(api_informer_count(inf), 3);
	cr_assert_null(api_informer_get(inf, "default", "o1"));
	cr_assert_eq(
	    api_informer_foreach_owned(inf, "uid-1", count_owned, &n), 2);
	cr_assert_eq(n, 2);
	cr_assert_eq(api_informer_foreach_owned(inf, "uid-2", NULL, NULL), 1);
	cr_assert_eq(api_informer_foreach_owned(inf, "uid-x", NULL, NULL), 0);
	n = 0;
	api_informer_foreach(inf, count_owned, &n);
	cr_assert_eq(n, 3);
	api_informer_free(inf);
}

/* ConfigMap ns/name owned by the given uids (NULL-ended). */
static json_t *owned_configmap(
    const char *ns, const char *name, const char *const *uids)
{
	json_t *cm = fx_configmap(name, "v"), *refs = json_array();

	for (; *uids != NULL; uids++)
		json_array_append_new(refs,
		    json_pack("{s:s, s:s, s:s, s:s}", "apiVersion", "v1",
			"kind", "ConfigMap", "name", "owner", "uid", *uids));
	json_object_set_new(
	    json_object_get(cm, "metadata"), "namespace", json_string(ns));
	json_object_set_new(
	    json_object_get(cm, "metadata"), "ownerReferences", refs);
	return cm;
}

/* Append the object's name and a comma to the string payload. */
static void append_name(json_t *obj, void *payload)
{
	char *names = payload;
	size_t len = strlen(names);

	snprintf(names + len, 64 - len, "%s,",
	    json_string_value(
		json_object_get(json_object_get(obj, "metadata"), "name")));
}

/* The owner index follows updates (a reference moved, one added) and
 * deletes, and two objects of one name in two namespaces are two
 * entries. */
Test(api_informer, owner_index_follows_updates_and_deletes, .init = fx_setup,
    .fini = fx_teardown)
{
	static const char *const u1[] = {"uid-1", NULL};
	static const char *const u12[] = {"uid-1", "uid-2", NULL};
	static const char *const u2[] = {"uid-2", NULL};
	static const char *const u22[] = {"uid-2", "uid-2", NULL};
	static const char *const u3[] = {"uid-3", NULL};
	static const char *const pqr[] = {"p", "q", "r"};
	char names[64];
	struct seen s;
	int i;
	api_informer *inf;

	cr_assert_eq(as_internal_create(&fx_srv, cm_kind(),
			 owned_configmap("default", "x", u1), "test"),
	    CU_OK);
	cr_assert_eq(as_internal_create(&fx_srv, cm_kind(),
			 owned_configmap("other", "x", u12), "test"),
	    CU_OK);
	start_informer(&s, NULL, NULL, &inf);
	cr_assert(synced_flag(inf));
	cr_assert_eq(api_informer_count(inf), 2);
	cr_assert_neq(api_informer_get(inf, "default", "x"),
	    api_informer_get(inf, "other", "x"));
	cr_assert_null(api_informer_get(inf, "", "x"));
	cr_assert_eq(api_informer_foreach_owned(inf, "uid-1", NULL, NULL), 2);
	cr_assert_eq(api_informer_foreach_owned(inf, "uid-2", NULL, NULL), 1);

	/* default/x moves from uid-1 to uid-2 */
	cr_assert_eq(as_internal_update(&fx_srv, cm_kind(),
			 owned_configmap("default", "x", u2), false, "test"),
	    CU_OK);
	cr_assert(wait_count(&s.updates, 1));
	cr_assert_eq(api_informer_foreach_owned(inf, "uid-1", NULL, NULL), 1);
	cr_assert_eq(api_informer_foreach_owned(inf, "uid-2", NULL, NULL), 2);

	/* other/x goes: only default/x is left, owned by uid-2 */
	cr_assert_eq(
	    as_internal_delete(&fx_srv, cm_kind(), "other", "x", "test"),
	    CU_OK);
	cr_assert(wait_count(&s.deletes, 1));
	cr_assert_eq(api_informer_count(inf), 1);
	cr_assert_eq(api_informer_foreach_owned(inf, "uid-1", NULL, NULL), 0);
	cr_assert_eq(api_informer_foreach_owned(inf, "uid-2", NULL, NULL), 1);
	cr_assert_not_null(api_informer_get(inf, "default", "x"));
	cr_assert_null(api_informer_get(inf, "other", "x"));

	/* default/y names uid-2 twice: two links, counted twice */
	cr_assert_eq(as_internal_create(&fx_srv, cm_kind(),
			 owned_configmap("default", "y", u22), "test"),
	    CU_OK);
	cr_assert(wait_count(&s.adds, 3));
	cr_assert_eq(api_informer_foreach_owned(inf, "uid-2", NULL, NULL), 3);
	/* default/x leaves the front of uid-2's list; y's links move */
	cr_assert_eq(
	    as_internal_delete(&fx_srv, cm_kind(), "default", "x", "test"),
	    CU_OK);
	cr_assert(wait_count(&s.deletes, 2));
	cr_assert_eq(api_informer_foreach_owned(inf, "uid-2", NULL, NULL), 2);
	cr_assert_eq(as_internal_update(&fx_srv, cm_kind(),
			 owned_configmap("default", "y", u1), false, "test"),
	    CU_OK);
	cr_assert(wait_count(&s.updates, 2));
	cr_assert_eq(api_informer_foreach_owned(inf, "uid-2", NULL, NULL), 0);
	cr_assert_eq(api_informer_foreach_owned(inf, "uid-1", NULL, NULL), 1);

	/* p, q, r under uid-3: take p (first) then r (moved into p's place)
	 * out; q alone is left, found through the owner index */
	for (i = 0; i < 3; i++)
		cr_assert_eq(
		    as_internal_create(&fx_srv, cm_kind(),
			owned_configmap("default", pqr[i], u3), "test"),
		    CU_OK);
	cr_assert(wait_count(&s.adds, 6));
	cr_assert_eq(api_informer_foreach_owned(inf, "uid-3", NULL, NULL), 3);
	cr_assert_eq(
	    as_internal_delete(&fx_srv, cm_kind(), "default", "p", "test"),
	    CU_OK);
	cr_assert(wait_count(&s.deletes, 3));
	cr_assert_eq(
	    as_internal_delete(&fx_srv, cm_kind(), "default", "r", "test"),
	    CU_OK);
	cr_assert(wait_count(&s.deletes, 4));
	names[0] = '\0';
	cr_assert_eq(
	    api_informer_foreach_owned(inf, "uid-3", append_name, names), 1);
	cr_assert_str_eq(names, "q,");
	api_informer_free(inf);
}

Test(api_informer, freed_while_listing_runs_no_handler, .init = fx_setup,
    .fini = fx_teardown)
{
	struct seen s;
	api_informer *inf;

	seed_configmaps(10, "f");
	start_informer(&s, "default", NULL, &inf);
	api_informer_free(inf);
	fx_run_for(0.2);
	cr_assert_eq(s.adds + s.synced, 0);
}

/* Compact mode: the cache holds text, parsed on demand. Content, events
 * (old and new objects), foreach and the pool's turnover (more objects
 * than the pool holds) behave as in the default mode. */
static void count_foreach(json_t *obj, void *payload)
{
	(void)obj;
	(*(int *)payload)++;
}

Test(api_informer, compact_cache_equals_server, .init = fx_setup,
    .fini = fx_teardown)
{
	struct as_kind *k;
	struct cmp_ctx c;
	struct fx_result r;
	struct seen s;
	api_informer *inf;
	json_t *patch;
	cu_error err;
	size_t i;
	int n = 0;

	seed_configmaps(1203, "cm");
	start_informer(&s, "default", NULL, &inf);
	cr_assert_eq(api_informer_compact(inf), CU_OK);
	cr_assert(synced_flag(inf));
	cr_assert_eq(api_informer_compact(inf), CU_OK, "idempotent");
	cr_assert_eq(s.adds, 1203);
	cr_assert(s.cache_updated_first);
	/* every object, twice over the pool's 1,024 */
	k = cm_kind();
	for (int pass = 0; pass < 2; pass++) {
		c.inf = inf;
		c.n = c.mismatches = 0;
		c.full = true;
		for (i = 0; i < k->nitems; i++)
			if (strcmp(k->items[i].ns, "default") == 0)
				cmp_one(k->items[i].obj, &c);
		cr_assert_eq(c.mismatches, 0, "pass %d", pass);
		cr_assert_eq(c.n, 1203);
	}
	api_informer_foreach(inf, count_foreach, &n);
	cr_assert_eq(n, 1203);
	patch = json_pack("{s:{s:s}}", "data", "k", "changed");
	memset(&r, 0, sizeof(r));
	cr_assert_eq(api_merge_patch(NULL, fx_cl, &CM, "default", "cm0007",
			 patch, false, fx_on_resp, &r, &err),
	    CU_OK);
	json_decref(patch);
	cr_assert(fx_run_until(&r.done, 10));
	fx_result_dispose(&r);
	cr_assert(wait_count(&s.updates, 1));
	cr_assert_eq(s.updates_same_rv, 0, "old and new objects differ");
	cr_assert_str_eq(
	    json_string_value(json_object_get(
		json_object_get(
		    api_informer_get(inf, "default", "cm0007"), "data"),
		"k")),
	    "changed");
	fx_call(&r, "DELETE", "/api/v1/namespaces/default/configmaps/cm0008",
	    NULL, NULL);
	fx_result_dispose(&r);
	cr_assert(wait_count(&s.deletes, 1));
	cr_assert_null(api_informer_get(inf, "default", "cm0008"));
	assert_cache_matches_server(inf);
	api_informer_free(inf);
}

/* Watch events come decoded lean (api_json_lean): in compact mode the
 * cached text is the event's object as sent, less its managedFields, and
 * reads back as the server's object less its managedFields. */
Test(api_informer, compact_watch_objects_are_lean_copies, .init = fx_setup,
    .fini = fx_teardown)
{
	struct as_kind *k = cm_kind();
	struct fx_result r;
	struct seen s;
	api_informer *inf;
	json_t *patch, *want;
	cu_error err;
	size_t i;
	int n = 0;

	start_informer(&s, "default", NULL, &inf);
	cr_assert_eq(api_informer_compact(inf), CU_OK);
	cr_assert(synced_flag(inf));
	for (i = 0; i < 3; i++) {
		char name[16];

		snprintf(name, sizeof(name), "w%zu", i);
		fx_call(&r, "POST", "/api/v1/namespaces/default/configmaps",
		    NULL, fx_configmap(name, "1"));
		cr_assert_eq(r.code, 201);
		fx_result_dispose(&r);
	}
	patch = json_pack("{s:{s:s}}", "data", "k", "changed");
	memset(&r, 0, sizeof(r));
	cr_assert_eq(api_merge_patch(NULL, fx_cl, &CM, "default", "w1", patch,
			 false, fx_on_resp, &r, &err),
	    CU_OK);
	json_decref(patch);
	cr_assert(fx_run_until(&r.done, 10));
	fx_result_dispose(&r);
	cr_assert(wait_count(&s.adds, 3));
	cr_assert(wait_count(&s.updates, 1));
	for (i = 0; i < k->nitems; i++) {
		json_t *cached;

		if (strcmp(k->items[i].ns, "default") != 0)
			continue;
		cr_assert_not_null(json_object_get(
		    json_object_get(k->items[i].obj, "metadata"),
		    "managedFields"));
		want = json_deep_copy(k->items[i].obj);
		json_object_del(
		    json_object_get(want, "metadata"), "managedFields");
		cached = api_informer_get(inf, "default", k->items[i].name);
		cr_assert(json_equal(cached, want), "%s", k->items[i].name);
		json_decref(want);
		n++;
	}
	cr_assert_eq(n, 3);
	api_informer_free(inf);
}

/* jansson's allocations still live, counted (json_set_alloc_funcs). */
static long json_live;

static void *live_malloc(size_t n)
{
	void *p = cu_malloc(n);

	json_live += p != NULL;
	return p;
}

static void live_free(void *p)
{
	json_live -= p != NULL;
	cu_free(p);
}

struct live_seen {
	int adds, want;
	long live; /* json_live at the want-th add */
};

static void h_add_live(json_t *obj, void *payload)
{
	struct live_seen *l = payload;

	(void)obj;
	if (++l->adds == l->want)
		l->live = json_live;
}

/* A compact informer's list holds its items as text until the last page,
 * not as trees: when the last item is delivered, the jansson objects
 * still live are those of the parse pool (1,024 objects), one page (500)
 * and the last page's answer, not one tree per listed object (which is
 * what doubled the controller's RSS after a restart). */
Test(api_informer, compact_list_keeps_no_tree_per_item, .init = fx_setup,
    .fini = fx_teardown, .timeout = 60)
{
	static const struct api_informer_handlers h = {
	    h_add_live, NULL, NULL, NULL};
	const int n = 4000;
	struct live_seen l = {0, n, 0};
	api_informer *inf;
	json_t *one;
	char *text;
	long base, per_tree;
	cu_error err;

	seed_configmaps(n, "t");
	json_set_alloc_funcs(live_malloc, live_free);
	base = json_live;
	cr_assert_eq(api_informer_new(
			 &inf, fx_cl, &CM, "default", NULL, NULL, &h, &l, &err),
	    CU_OK, "%s", err.msg);
	cr_assert_eq(api_informer_compact(inf), CU_OK);
	cr_assert(synced_flag(inf));
	cr_assert_eq(l.adds, n);
	/* what one cached object costs as a tree */
	text = json_dumps(api_informer_get(inf, "default", "t0001"), 0);
	cr_assert_not_null(text);
	per_tree = json_live;
	one = json_loads(text, 0, NULL);
	per_tree = json_live - per_tree;
	json_decref(one);
	live_free(text);
	cr_assert_gt(per_tree, 5);
	cr_assert_lt(l.live - base, (1024 + 500 + 500) * per_tree,
	    "%ld live jansson allocations at the last add (%ld a tree, "
	    "%d objects listed)",
	    l.live - base, per_tree, n);
	api_informer_free(inf);
	json_set_alloc_funcs(malloc, free);
}

Test(api_informer, compact_only_before_objects_are_cached, .init = fx_setup,
    .fini = fx_teardown)
{
	struct seen s;
	api_informer *inf;

	seed_configmaps(2, "cm");
	start_informer(&s, "default", NULL, &inf);
	cr_assert(synced_flag(inf));
	cr_assert_eq(api_informer_compact(inf), CU_EINVAL);
	api_informer_free(inf);
}

/* An etcd restore: the server's revision goes back below the informer's.
 * Its watch from the old revision is refused as too large (after the
 * server's 3 s wait), and the informer relists from scratch: objects
 * created after the restore are delivered, and it watches again. */
Test(api_informer, relists_when_the_server_revision_goes_backwards,
    .init = fx_setup, .fini = fx_teardown, .timeout = 60)
{
	struct api_informer_stats st;
	struct fx_result r;
	struct seen s;
	api_informer *inf;
	uint64_t before;
	int i;

	seed_configmaps(3, "r");
	start_informer(&s, "default", NULL, &inf);
	cr_assert(synced_flag(inf));
	/* Changes the informer sees, so its revision is well ahead. */
	for (i = 0; i < 20; i++) {
		json_t *obj =
		    json_deep_copy(as_store_get(cm_kind(), "default", "r0000"));

		json_object_set_new(
		    json_object_get(obj, "data"), "k", json_integer(i));
		cr_assert_eq(
		    as_internal_update(&fx_srv, cm_kind(), obj, false, "test"),
		    CU_OK);
	}
	cr_assert(wait_count(&s.updates, 20));
	before = fx_srv.rv;
	fx_call(&r, "POST", "/__test/restore", NULL,
	    json_pack("{s:I}", "resourceVersion", (json_int_t)(before - 15)));
	cr_assert_eq(r.code, 200, "restore: %d %s", r.code, r.msg);
	fx_result_dispose(&r);
	cr_assert_eq(fx_srv.rv, before - 15);
	/* Written after the restore: revisions the informer has passed. */
	cr_assert_eq(as_internal_create(&fx_srv, cm_kind(),
			 fx_configmap("after-restore", "x"), "test"),
	    CU_OK);
	cr_assert(wait_count(&s.adds, 4), "the new object delivered");
	cr_assert_not_null(api_informer_get(inf, "default", "after-restore"));
	api_informer_stats(inf, &st);
	cr_assert_geq(st.relists, 1);
	cr_assert_str_neq(api_informer_resource_version(inf), "");
	/* and it watches again afterwards */
	cr_assert_eq(as_internal_create(&fx_srv, cm_kind(),
			 fx_configmap("later", "x"), "test"),
	    CU_OK);
	cr_assert(wait_count(&s.adds, 5));
	api_informer_free(inf);
}
