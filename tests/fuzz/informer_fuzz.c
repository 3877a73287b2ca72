/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/informer_fuzz.c - fuzz the watch-stream line parser of
 * api/informer.c: each input line goes to a fresh informer of a
 * namespaced resource as if its watch delivered it
 * (api_informer_feed_line): ADDED, MODIFIED, DELETED, BOOKMARK and ERROR
 * events, and anything else. The informer's client points at no server
 * (its first LIST never completes here).
 *
 * Input: watch-stream lines separated by '\n'.
 *
 * Checked contracts (abort() on a breach): the handlers see the cache
 * already updated (an added or updated object is the cached one); the
 * count of cached objects is what foreach walks; the resourceVersion is
 * always a string; nothing leaks or crashes (ASan).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>
#include <jansson.h>

#include "api/informer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct api_resource CM = {"", "v1", "configmaps", true};
static struct ev_loop *loop;
static api_client *client;
static api_informer *inf;

static void expect_cached(json_t *obj)
{
	json_t *md = json_object_get(obj, "metadata");
	const char *ns = json_string_value(json_object_get(md, "namespace"));
	const char *name = json_string_value(json_object_get(md, "name"));

	if (name != NULL && api_informer_get(inf, ns, name) != obj)
		abort();
}

static void on_add(json_t *obj, void *payload)
{
	(void)payload;
	expect_cached(obj);
}

static void on_update(json_t *old, json_t *obj, void *payload)
{
	(void)payload;
	if (old == NULL)
		abort();
	expect_cached(obj);
}

static void on_delete(json_t *obj, void *payload)
{
	(void)payload;
	if (obj == NULL)
		abort();
}

static void count(json_t *obj, void *payload)
{
	(void)obj;
	(*(size_t *)payload)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct api_informer_handlers h = {
	    on_add, on_update, on_delete, NULL};
	const char *p = (const char *)data, *end = p + size, *nl;
	size_t n = 0;

	if (client == NULL) {
		struct api_client_opts o;

		memset(&o, 0, sizeof(o));
		o.server = "http://127.0.0.1:1";
		loop = ev_loop_new(EVFLAG_AUTO);
		if (loop == NULL ||
		    api_client_new(&client, loop, &o, NULL) != CU_OK)
			abort();
	}
	if (api_informer_new(
		&inf, client, &CM, NULL, NULL, NULL, &h, NULL, NULL) != CU_OK)
		return 0;
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			nl = end;
		api_informer_feed_line(inf, p, (size_t)(nl - p));
		if (api_informer_resource_version(inf) == NULL)
			abort();
		p = nl + 1;
	}
	api_informer_foreach(inf, count, &n);
	if (n != api_informer_count(inf))
		abort();
	api_informer_free(inf);
	inf = NULL;
	return 0;
}
