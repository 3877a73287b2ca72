/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/informer.h - list/watch informers: a local cache of one resource
 * type (optionally one namespace, label and field selectors) kept in sync
 * with the API server through the client of api/client.h, with
 * add/update/delete handlers.
 *
 * Protocol (docs/apiserver.md §3.5): a paginated LIST (limit=500,
 * continue), then a WATCH from the list's resourceVersion with bookmarks
 * and a random timeoutSeconds in [300, 600). A normal close re-watches
 * from the last resourceVersion without relisting; 410 Gone (HTTP or an
 * ERROR event) relists, first at the last resourceVersion, then without
 * one, and delivers the difference to the cache as add/update/delete. A
 * watch that ends less than a second after it started, or fails, having
 * delivered no event backs off (0.8 s doubling to 30 s) before the next
 * one; a watch that delivered events (bookmarks included) is followed at
 * once however it ended, a cut connection included (client-go's rule).
 *
 * Event-loop thread only. Prefix: api_informer_.
 */
#ifndef CU_API_INFORMER_H
#define CU_API_INFORMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "api/client.h"
#include "lib/cu.h"

typedef struct api_informer api_informer;

/*
 * Handlers; any may be NULL. Object pointers are [borrowed; valid during
 * the call; json_incref to keep; never modify them]: they are the cached
 * objects. When a handler runs the cache already holds the new state
 * (on_delete: the object is already gone). Handlers may issue requests
 * and read any informer, but must not free this informer.
 * on_synced runs once, after the first complete LIST has been delivered.
 */
struct api_informer_handlers {
	void (*on_add)(json_t *obj, void *payload);
	void (*on_update)(json_t *old_obj, json_t *new_obj, void *payload);
	void (*on_delete)(json_t *obj, void *payload);
	void (*on_synced)(void *payload);
};

struct api_informer_stats {
	uint64_t lists;	    /* LIST requests (pages) sent */
	uint64_t relists;   /* relists after the initial one */
	uint64_t watches;   /* WATCH requests started */
	uint64_t bookmarks; /* BOOKMARK events seen */
	uint64_t events;    /* ADDED/MODIFIED/DELETED events seen */
	uint64_t skipped;   /* events dropped as duplicates */
};

/*
 * Start an informer on client c [borrowed; must outlive the informer].
 * res, ns (NULL = all namespaces), label_selector, field_selector (NULL
 * or "" = none), handlers: [borrowed; copied]. payload is passed to every
 * handler. The first LIST is sent at once. *out [owned:
 * api_informer_free]. Errors: CU_EINVAL, CU_ENOMEM.
 */
CU_MUST_CHECK int api_informer_new(api_informer **out, api_client *c,
    const struct api_resource *res, const char *ns, const char *label_selector,
    const char *field_selector, const struct api_informer_handlers *handlers,
    void *payload, cu_error *err);

/* Stop (cancel the in-flight LIST/WATCH) and free; no handler runs.
 * Not from inside its own handlers. NULL is a no-op. inf [consumed]. */
void api_informer_free(api_informer *inf);

/* Apply one watch-stream line to inf as if its watch had delivered it:
 * the event updates the cache and runs the handlers, or a line that does
 * not decode marks the watch failed (it is then restarted). For fuzzing
 * and tests (tests/fuzz/informer_fuzz.c). line [borrowed]. */
void api_informer_feed_line(api_informer *inf, const char *line, size_t len);

/* True once the first LIST has been delivered. */
bool api_informer_synced(const api_informer *inf);

/* True while the resource is not served: the last LIST answered 404 (a
 * CRD not installed). The informer asks again every few seconds and
 * syncs as usual once the resource appears. */
bool api_informer_absent(const api_informer *inf);

/* The cached object ns/name (ns NULL or "" for cluster-scoped) or NULL.
 * [borrowed; valid until the next loop iteration that runs this
 * informer; do not modify]. */
json_t *api_informer_get(
    const api_informer *inf, const char *ns, const char *name);

/* Number of cached objects. */
size_t api_informer_count(const api_informer *inf);

/* Call fn for every cached object [borrowed], in no particular order.
 * fn must not change the cache (no api_informer_free). */
void api_informer_foreach(const api_informer *inf,
    void (*fn)(json_t *obj, void *payload), void *payload);

/* Call fn for every cached object whose metadata.ownerReferences names
 * uid (once per such reference), in no particular order; returns how
 * many. uid [borrowed]. */
size_t api_informer_foreach_owned(const api_informer *inf, const char *uid,
    void (*fn)(json_t *obj, void *payload), void *payload);

/*
 * Keep cached objects as compact JSON text (about a tenth of the memory
 * of jansson's parsed form) and parse them when asked for. Objects from
 * api_informer_get and friends are then [borrowed] until the informer
 * next applies data from the server, or until 1,024 further objects have
 * been parsed, whichever comes first: json_incref to keep one longer.
 * (The 128 parsed last stay parsed over a watch event, so that a burst
 * of events is not parsed twice; nobody may count on that.)
 * Call before the first LIST completes (CU_EINVAL once objects are
 * cached); CU_ENOMEM.
 */
CU_MUST_CHECK int api_informer_compact(api_informer *inf);

/* The last resourceVersion seen (list, event or bookmark) [borrowed;
 * valid until the next event], "" before the first LIST. */
const char *api_informer_resource_version(const api_informer *inf);

void api_informer_stats(
    const api_informer *inf, struct api_informer_stats *out);

#endif /* CU_API_INFORMER_H */
