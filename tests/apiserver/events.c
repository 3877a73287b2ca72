/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/events.c - events.k8s.io/v1 Event as a view of core/v1
 * Event storage, as kube-apiserver serves both from one store
 * (docs/apiserver.md §8.1): note<->message, regarding<->
 * involvedObject, deprecatedSource<->source, deprecatedFirstTimestamp<->
 * firstTimestamp, deprecatedLastTimestamp<->lastTimestamp,
 * deprecatedCount<->count, reportingController<->reportingComponent. A
 * core event without eventTime reads back with "eventTime": null (the
 * real server's quirk that python3-kubernetes trips over).
 */
#include <string.h>

#include "tests/apiserver/apiserver.h"

static const char *const renames[][2] = {
    /* {events.k8s.io/v1 name, core/v1 name} */
    {"note", "message"},
    {"regarding", "involvedObject"},
    {"deprecatedSource", "source"},
    {"deprecatedFirstTimestamp", "firstTimestamp"},
    {"deprecatedLastTimestamp", "lastTimestamp"},
    {"deprecatedCount", "count"},
    {"reportingController", "reportingComponent"},
};

#define NRENAMES (sizeof(renames) / sizeof(renames[0]))

static void move_key(json_t *o, const char *from, const char *to)
{
	json_t *v = json_object_get(o, from);

	if (v == NULL)
		return;
	json_object_set(o, to, v);
	json_object_del(o, from);
}

json_t *as_view_out(const struct as_kind *view, json_t *stored)
{
	json_t *o = json_deep_copy(stored);
	size_t i;

	if (o == NULL)
		return NULL;
	for (i = 0; i < NRENAMES; i++)
		move_key(o, renames[i][1], renames[i][0]);
	if (json_object_get(o, "eventTime") == NULL)
		json_object_set_new(o, "eventTime", json_null());
	json_object_set_new(o, "apiVersion", json_string("events.k8s.io/v1"));
	json_object_set_new(o, "kind", json_string(view->kind));
	return o;
}

json_t *as_view_in(const struct as_kind *view, json_t *obj, bool create,
    const char **field, const char **why)
{
	static const char *const legacy[] = {"deprecatedSource",
	    "deprecatedFirstTimestamp", "deprecatedLastTimestamp",
	    "deprecatedCount"};
	json_t *o;
	size_t i;

	(void)view;
	*field = NULL;
	*why = NULL;
	if (create) {
		/* Validation of events created through events.k8s.io/v1
		 * (kubernetes pkg/apis/core/validation/events.go). */
		json_t *et = json_object_get(obj, "eventTime");
		json_t *series = json_object_get(obj, "series");

		if (et == NULL || json_is_null(et)) {
			*field = "eventTime";
			*why = "Required value";
			return NULL;
		}
		if (series != NULL && !json_is_null(series) &&
		    json_integer_value(json_object_get(series, "count")) < 2) {
			*field = "series.count";
			*why = "Invalid value: should be at least 2";
			return NULL;
		}
		for (i = 0; i < sizeof(legacy) / sizeof(legacy[0]); i++) {
			json_t *v = json_object_get(obj, legacy[i]);

			if (v != NULL && !json_is_null(v) &&
			    !(json_is_integer(v) &&
				json_integer_value(v) == 0)) {
				*field = legacy[i];
				*why = "Forbidden: needs to be unset";
				return NULL;
			}
		}
		if (json_string_value(json_object_get(obj, "reason")) == NULL) {
			*field = "reason";
			*why = "Required value";
			return NULL;
		}
		if (json_string_value(json_object_get(obj, "action")) == NULL) {
			*field = "action";
			*why = "Required value";
			return NULL;
		}
	}
	o = json_deep_copy(obj);
	if (o == NULL)
		return NULL;
	for (i = 0; i < NRENAMES; i++)
		move_key(o, renames[i][0], renames[i][1]);
	if (json_is_null(json_object_get(o, "eventTime")))
		json_object_del(o, "eventTime");
	json_object_set_new(o, "apiVersion", json_string("v1"));
	json_object_set_new(o, "kind", json_string("Event"));
	return o;
}
