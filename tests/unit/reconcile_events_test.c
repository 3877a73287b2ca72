/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/reconcile_events_test.c - reconcile/events: the
 * events.k8s.io Event recorder's pure core (CREATE bodies, folding
 * identical events into one Event's series, a series ending after six
 * minutes, separate Events for different notes, note truncation, Kueue's
 * types and reporting controllers by reason, the
 * per-object spam filter with its refill, LRU eviction, unique names,
 * re-creating expired Events, allocation failures) and the
 * Suspended/Resumed transition guard, including a 1,000-round flapping
 * scenario (docs/architecture.md lesson 4, Kueue #7649's "x14709").
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "reconcile/reconcile.h"

#define SEC 1000000000LL
/* 2025-11-13T10:00:00Z */
#define T0 (1763028000LL * SEC)

static rec_events *rec;

static void setup(void)
{
	struct rec_events_opts o = {
	    .component = "cueue.dev/job-controller",
	    .instance = "cueue-controller-7d9f-abcde",
	};
	cu_error err;
	cr_assert_eq(rec_events_new(&rec, &o, &err), CU_OK, "%s", err.msg);
}

static void teardown(void)
{
	rec_events_free(rec);
	rec = NULL;
	cu_mem_fail_after(0, false);
}

TestSuite(events, .init = setup, .fini = teardown);

static struct rec_event job_event(
    const char *name, const char *reason, const char *message)
{
	struct rec_event ev = {
	    .kind = "Job",
	    .api_version = "batch/v1",
	    .namespace_ = "default",
	    .name = name,
	    .uid = "5f1c0b7e-0000-4000-8000-000000000001",
	    .type = REC_EVENT_NORMAL,
	    .reason = reason,
	    .message = message,
	};
	return ev;
}

static enum rec_event_action emit(
    const struct rec_event *ev, int64_t now, struct rec_event_write *w)
{
	cu_error err;
	cu_error_clear(&err);
	int rc = rec_events_record(rec, ev, now, w, &err);
	cr_assert_eq(rc, CU_OK, "record: %d %s", rc, err.msg);
	return w->action;
}

static const char *jstr(const json_t *o, const char *path)
{
	/* path "a.b": nested object members */
	char buf[128];
	const json_t *cur = o;
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *tok = buf, *dot; tok != NULL; tok = dot) {
		dot = strchr(tok, '.');
		if (dot != NULL)
			*dot++ = '\0';
		cur = json_object_get(cur, tok);
		cr_assert_not_null(cur, "no %s", path);
	}
	cr_assert(json_is_string(cur), "%s is not a string", path);
	return json_string_value(cur);
}

Test(events, create_body)
{
	struct rec_event ev = job_event(
	    "sleep-driver-0", "Suspended", "Kueue managed child job suspended");
	struct rec_event_write w;
	char want[64];

	cr_assert_eq(emit(&ev, T0 + 123, &w), REC_EVENT_CREATE);
	snprintf(want, sizeof(want), "sleep-driver-0.%" PRIx64,
	    (uint64_t)(T0 + 123));
	cr_assert_str_eq(w.name, want);
	cr_assert_str_eq(w.namespace_, "default");
	cr_assert_eq(w.count, 1);
	cr_assert_str_eq(jstr(w.body, "apiVersion"), "events.k8s.io/v1");
	cr_assert_str_eq(jstr(w.body, "kind"), "Event");
	cr_assert_str_eq(jstr(w.body, "metadata.name"), want);
	cr_assert_str_eq(jstr(w.body, "metadata.namespace"), "default");
	cr_assert_str_eq(jstr(w.body, "regarding.kind"), "Job");
	cr_assert_str_eq(jstr(w.body, "regarding.apiVersion"), "batch/v1");
	cr_assert_str_eq(jstr(w.body, "regarding.namespace"), "default");
	cr_assert_str_eq(jstr(w.body, "regarding.name"), "sleep-driver-0");
	cr_assert_str_eq(jstr(w.body, "regarding.uid"), ev.uid);
	cr_assert_null(
	    json_object_get(json_object_get(w.body, "regarding"), "fieldPath"));
	cr_assert_str_eq(jstr(w.body, "reason"), "Suspended");
	cr_assert_str_eq(jstr(w.body, "action"), "Suspended");
	cr_assert_str_eq(
	    jstr(w.body, "note"), "Kueue managed child job suspended");
	cr_assert_str_eq(jstr(w.body, "type"), "Normal");
	cr_assert_str_eq(
	    jstr(w.body, "reportingController"), "cueue.dev/job-controller");
	cr_assert_str_eq(jstr(w.body, "reportingInstance"),
	    "cueue.dev/job-controller-cueue-controller-7d9f-abcde");
	cr_assert_str_eq(
	    jstr(w.body, "eventTime"), "2025-11-13T10:00:00.000000Z");
	/* The core/v1 fields events.k8s.io refuses on create. */
	cr_assert_null(json_object_get(w.body, "series"));
	cr_assert_null(json_object_get(w.body, "count"));
	cr_assert_null(json_object_get(w.body, "source"));
	cr_assert_null(json_object_get(w.body, "deprecatedCount"));
	cr_assert_null(json_object_get(w.body, "message"));
	cr_assert_null(json_object_get(w.body, "involvedObject"));
	rec_event_write_dispose(&w);
	cr_assert_null(w.body);
	rec_event_write_dispose(&w); /* twice is fine */
}

Test(events, identical_events_fold_into_one)
{
	struct rec_event ev = job_event("j", "Started", "Admitted by q");
	struct rec_event_write w;
	char *name;

	cr_assert_eq(emit(&ev, T0, &w), REC_EVENT_CREATE);
	name = cu_strdup(w.name);
	rec_event_write_dispose(&w);
	/* the first repeat starts the series (client-go: count 2) */
	cr_assert_eq(emit(&ev, T0 + 2 * SEC, &w), REC_EVENT_PATCH);
	cr_assert_str_eq(w.name, name);
	cr_assert_str_eq(w.namespace_, "default");
	cr_assert_eq(w.count, 2);
	/* strategic-merge patch: exactly the series */
	cr_assert_eq(json_object_size(w.body), 1);
	json_t *series = json_object_get(w.body, "series");
	cr_assert_eq(json_object_size(series), 2);
	cr_assert_eq(json_integer_value(json_object_get(series, "count")), 2);
	char ts[CU_TIME_MICRO_LEN];
	cu_time_format_micro(T0 + 2 * SEC, ts);
	cr_assert_str_eq(jstr(w.body, "series.lastObservedTime"), ts);
	rec_event_write_dispose(&w);
	/* later repeats are counted, not written, with a newer note too */
	for (int i = 3; i <= 20; i++) {
		ev.message = i % 2 ? "Admitted by q again" : "Admitted by q";
		cr_assert_eq(emit(&ev, T0 + i * SEC, &w), REC_EVENT_FOLD);
		cr_assert_eq(w.count, i);
		cr_assert_null(w.name);
		cr_assert_null(w.body);
		rec_event_write_dispose(&w);
	}
	cr_assert_eq(rec_events_size(rec), 1);
	cu_free(name);
}

/* client-go's refresh: a series' count is written again 30 minutes after
 * its last write (on the next repeat), then counted again. */
Test(events, series_count_refreshed_after_30_minutes)
{
	struct rec_event ev = job_event("j", "Pending", "waiting");
	struct rec_event_write w;
	int64_t t = T0;

	cr_assert_eq(emit(&ev, t, &w), REC_EVENT_CREATE);
	rec_event_write_dispose(&w);
	cr_assert_eq(emit(&ev, t += SEC, &w), REC_EVENT_PATCH);
	rec_event_write_dispose(&w);
	/* a repeat every 5 minutes keeps the series on (finish: 6) */
	for (int i = 0; i < 5; i++) {
		cr_assert_eq(emit(&ev, t += 300 * SEC, &w), REC_EVENT_FOLD);
		rec_event_write_dispose(&w);
	}
	cr_assert_eq(emit(&ev, t += 300 * SEC, &w), REC_EVENT_PATCH);
	cr_assert_eq(w.count, 8);
	rec_event_write_dispose(&w);
	cr_assert_eq(emit(&ev, t += SEC, &w), REC_EVENT_FOLD);
	cr_assert_eq(w.count, 9);
	rec_event_write_dispose(&w);
}

Test(events, differing_fields_make_separate_events)
{
	struct rec_event base = job_event("j", "Started", "m1");
	struct rec_event variants[6];
	struct rec_event_write w;
	char *names[7];

	for (int i = 0; i < 6; i++)
		variants[i] = base;
	variants[0].action = "Start";
	variants[1].reason = "Stopped";
	variants[2].uid = "another-uid";
	variants[3].type = REC_EVENT_WARNING;
	variants[4].reporting_controller = "cueue.dev/jobset-controller";
	variants[5].api_version = "batch/v2";

	cr_assert_eq(emit(&base, T0, &w), REC_EVENT_CREATE);
	names[0] = cu_strdup(w.name);
	rec_event_write_dispose(&w);
	for (int i = 0; i < 6; i++) {
		cr_assert_eq(emit(&variants[i], T0 + 1, &w), REC_EVENT_CREATE,
		    "variant %d", i);
		names[i + 1] = cu_strdup(w.name);
		rec_event_write_dispose(&w);
	}
	/* every name distinct, even at the same nanosecond */
	for (int i = 0; i < 7; i++)
		for (int j = i + 1; j < 7; j++)
			cr_assert_str_neq(names[i], names[j]);
	cr_assert_eq(rec_events_size(rec), 7);
	/* a newer note is no new Event: the base's series (client-go) */
	struct rec_event newer = base;
	newer.message = "m2";
	cr_assert_eq(emit(&newer, T0 + 1, &w), REC_EVENT_PATCH);
	cr_assert_str_eq(w.name, names[0]);
	rec_event_write_dispose(&w);

	/* each folds on its own */
	cr_assert_eq(emit(&variants[1], T0 + 2, &w), REC_EVENT_PATCH);
	cr_assert_str_eq(w.name, names[2]);
	cr_assert_eq(w.count, 2);
	rec_event_write_dispose(&w);
	cr_assert_eq(emit(&variants[4], T0 + 3, &w), REC_EVENT_PATCH);
	cr_assert_str_eq(w.name, names[5]);
	rec_event_write_dispose(&w);
	for (int i = 0; i < 7; i++)
		cu_free(names[i]);
}

Test(events, reporting_controller_override)
{
	struct rec_event ev = job_event("j", "Started", "m");
	struct rec_event_write w;

	ev.reporting_controller = "cueue.dev/jobset-controller";
	cr_assert_eq(emit(&ev, T0, &w), REC_EVENT_CREATE);
	cr_assert_str_eq(
	    jstr(w.body, "reportingController"), "cueue.dev/jobset-controller");
	cr_assert_str_eq(jstr(w.body, "reportingInstance"),
	    "cueue.dev/jobset-controller-cueue-controller-7d9f-abcde");
	rec_event_write_dispose(&w);
}

Test(events, names_unique_per_nanosecond)
{
	struct rec_event_write w;
	char msg[32], prev[128] = "";
	int64_t now = T0;

	/* distinct nanoseconds give distinct hex suffixes */
	for (int i = 0; i < 20; i++) {
		snprintf(msg, sizeof(msg), "R%d", i);
		struct rec_event ev = job_event("j", msg, "m");
		cr_assert_eq(emit(&ev, now + i, &w), REC_EVENT_CREATE);
		char want[64];
		snprintf(want, sizeof(want), "j.%" PRIx64, (uint64_t)(now + i));
		cr_assert_str_eq(w.name, want);
		rec_event_write_dispose(&w);
	}
	/* the same nanosecond (coarse clock) or a clock step back still
	 * gives a new name */
	for (int i = 0; i < 5; i++) {
		snprintf(msg, sizeof(msg), "Same%d", i);
		struct rec_event ev = job_event("k", msg, "m");
		cr_assert_eq(emit(&ev, now - i * SEC, &w), REC_EVENT_CREATE);
		cr_assert_str_neq(w.name, prev);
		snprintf(prev, sizeof(prev), "%s", w.name);
		rec_event_write_dispose(&w);
	}
}

Test(events, spam_filter_drops_after_burst_and_refills)
{
	struct rec_event_write w;
	char reason[32];
	int created = 0, dropped = 0;

	/* 40 different reasons about one object in one second */
	for (int i = 0; i < 40; i++) {
		snprintf(reason, sizeof(reason), "Failed%d", i);
		struct rec_event ev = job_event("j", reason, "attempt");
		enum rec_event_action a = emit(&ev, T0 + i, &w);
		if (a == REC_EVENT_CREATE)
			created++;
		if (a == REC_EVENT_DROP) {
			dropped++;
			cr_assert_null(w.body);
			cr_assert_null(w.name);
		}
		rec_event_write_dispose(&w);
	}
	cr_assert_eq(created, REC_EVENTS_SPAM_BURST);
	cr_assert_eq(dropped, 40 - REC_EVENTS_SPAM_BURST);
	/* dropped events are neither written nor remembered */
	cr_assert_eq(rec_events_size(rec), REC_EVENTS_SPAM_BURST);

	/* identical events spend tokens too */
	struct rec_event first = job_event("j", "Failed0", "attempt");
	cr_assert_eq(emit(&first, T0 + SEC, &w), REC_EVENT_DROP);
	rec_event_write_dispose(&w);

	/* just before 300 s: still nothing; at 300 s: one token */
	cr_assert_eq(emit(&first, T0 + 300 * SEC - SEC, &w), REC_EVENT_DROP);
	rec_event_write_dispose(&w);
	cr_assert_eq(emit(&first, T0 + 300 * SEC + 40, &w), REC_EVENT_PATCH);
	cr_assert_eq(w.count, 2, "drops are not counted");
	rec_event_write_dispose(&w);
	cr_assert_eq(emit(&first, T0 + 301 * SEC, &w), REC_EVENT_DROP);
	rec_event_write_dispose(&w);

	/* another object has its own bucket */
	struct rec_event other = job_event("other", "Failed0", "attempt");
	cr_assert_eq(emit(&other, T0 + 301 * SEC, &w), REC_EVENT_CREATE);
	rec_event_write_dispose(&w);

	/* after 25 x 300 s of silence the whole burst is back, no more */
	int64_t later = T0 + 300 * SEC + 40 + 100 * 300 * SEC;
	int ok = 0;
	for (int i = 0; i < 30; i++) {
		if (emit(&first, later + i, &w) != REC_EVENT_DROP)
			ok++;
		rec_event_write_dispose(&w);
	}
	cr_assert_eq(ok, REC_EVENTS_SPAM_BURST);
}

Test(events, spam_filter_custom_limits)
{
	rec_events *r2;
	struct rec_events_opts o = {
	    .component = "c", .burst = 2, .refill_ns = 10, .lru_size = 8};
	struct rec_event ev = job_event("j", "R", "m");
	struct rec_event_write w;
	enum rec_event_action want[] = {
	    REC_EVENT_CREATE, REC_EVENT_PATCH, REC_EVENT_DROP, REC_EVENT_DROP};

	cr_assert_eq(rec_events_new(&r2, &o, NULL), CU_OK);
	for (int i = 0; i < 4; i++) {
		cr_assert_eq(
		    rec_events_record(r2, &ev, 100 + i, &w, NULL), CU_OK);
		cr_assert_eq(w.action, want[i], "step %d", i);
		/* No instance: the controller alone. */
		if (w.action == REC_EVENT_CREATE)
			cr_assert_str_eq(
			    jstr(w.body, "reportingInstance"), "c");
		rec_event_write_dispose(&w);
	}
	cr_assert_eq(rec_events_record(r2, &ev, 113, &w, NULL), CU_OK);
	cr_assert_eq(w.action, REC_EVENT_FOLD);
	cr_assert_eq(w.count, 3);
	rec_event_write_dispose(&w);
	rec_events_free(r2);
}

Test(events, lru_eviction)
{
	struct rec_event_write w;
	char name[32];
	char *first_name = NULL;

	/* 4097 objects: the first one's key falls out */
	for (int i = 0; i <= REC_EVENTS_LRU_SIZE; i++) {
		snprintf(name, sizeof(name), "job-%d", i);
		struct rec_event ev = job_event(name, "Created", "m");
		cr_assert_eq(emit(&ev, T0 + i, &w), REC_EVENT_CREATE);
		if (i == 0)
			first_name = cu_strdup(w.name);
		rec_event_write_dispose(&w);
	}
	cr_assert_eq(rec_events_size(rec), REC_EVENTS_LRU_SIZE);
	cr_assert_eq(rec_events_spam_size(rec), REC_EVENTS_LRU_SIZE);

	/* the most recent ones still fold */
	snprintf(name, sizeof(name), "job-%d", REC_EVENTS_LRU_SIZE);
	struct rec_event last = job_event(name, "Created", "m");
	cr_assert_eq(emit(&last, T0 + SEC, &w), REC_EVENT_PATCH);
	rec_event_write_dispose(&w);
	/* job-1 is now the least recently used; touching it keeps it */
	struct rec_event one = job_event("job-1", "Created", "m");
	cr_assert_eq(emit(&one, T0 + SEC, &w), REC_EVENT_PATCH);
	rec_event_write_dispose(&w);

	/* the evicted one is created afresh, under a new name */
	struct rec_event zero = job_event("job-0", "Created", "m");
	cr_assert_eq(emit(&zero, T0 + 2 * SEC, &w), REC_EVENT_CREATE);
	cr_assert_str_neq(w.name, first_name);
	rec_event_write_dispose(&w);
	/* which pushed out job-2 (least recent), not job-1 */
	cr_assert_eq(emit(&one, T0 + 3 * SEC, &w), REC_EVENT_FOLD);
	rec_event_write_dispose(&w);
	struct rec_event two = job_event("job-2", "Created", "m");
	cr_assert_eq(emit(&two, T0 + 3 * SEC, &w), REC_EVENT_CREATE);
	rec_event_write_dispose(&w);
	cr_assert_eq(rec_events_size(rec), REC_EVENTS_LRU_SIZE);
	cu_free(first_name);
}

Test(events, recreate_after_expiry_and_forget)
{
	struct rec_event ev = job_event("j", "Started", "m");
	struct rec_event_write w;
	char *old;

	cr_assert_eq(emit(&ev, T0, &w), REC_EVENT_CREATE);
	old = cu_strdup(w.name);
	rec_event_write_dispose(&w);
	cr_assert_eq(emit(&ev, T0 + SEC, &w), REC_EVENT_PATCH);
	rec_event_write_dispose(&w);

	/* the PATCH 404'd: the Event expired */
	cr_assert_eq(
	    rec_events_recreate(rec, &ev, T0 + 2 * SEC, &w, NULL), CU_OK);
	cr_assert_eq(w.action, REC_EVENT_CREATE);
	cr_assert_eq(w.count, 1);
	cr_assert_str_neq(w.name, old);
	char *fresh = cu_strdup(w.name);
	rec_event_write_dispose(&w);
	cr_assert_eq(emit(&ev, T0 + 3 * SEC, &w), REC_EVENT_PATCH);
	cr_assert_str_eq(w.name, fresh);
	cr_assert_eq(w.count, 2);
	rec_event_write_dispose(&w);
	cr_assert_eq(rec_events_size(rec), 1);

	/* forget: next one creates */
	rec_events_forget(rec, &ev);
	cr_assert_eq(rec_events_size(rec), 0);
	rec_events_forget(rec, &ev); /* unknown: no-op */
	cr_assert_eq(emit(&ev, T0 + 4 * SEC, &w), REC_EVENT_CREATE);
	rec_event_write_dispose(&w);
	cu_free(old);
	cu_free(fresh);
}

Test(events, recreate_spends_no_token)
{
	struct rec_event ev = job_event("j", "Started", "m");
	struct rec_event_write w;

	for (int i = 0; i < REC_EVENTS_SPAM_BURST; i++) {
		cr_assert_neq(emit(&ev, T0 + i, &w), REC_EVENT_DROP);
		rec_event_write_dispose(&w);
	}
	cr_assert_eq(emit(&ev, T0 + 100, &w), REC_EVENT_DROP);
	rec_event_write_dispose(&w);
	cr_assert_eq(rec_events_recreate(rec, &ev, T0 + 101, &w, NULL), CU_OK);
	cr_assert_eq(w.action, REC_EVENT_CREATE);
	rec_event_write_dispose(&w);
}

Test(events, cluster_scoped_and_optional_fields)
{
	struct rec_event ev = {
	    .kind = "ClusterQueue",
	    .name = "cq",
	    .type = REC_EVENT_WARNING,
	    .reason = "Inactive",
	    .field_path = "spec.resourceGroups",
	};
	struct rec_event_write w;

	cr_assert_eq(emit(&ev, T0, &w), REC_EVENT_CREATE);
	cr_assert_str_eq(w.namespace_, "default");
	cr_assert_str_eq(jstr(w.body, "metadata.namespace"), "default");
	const json_t *io = json_object_get(w.body, "regarding");
	cr_assert_null(json_object_get(io, "namespace"));
	cr_assert_null(json_object_get(io, "uid"));
	cr_assert_null(json_object_get(io, "apiVersion"));
	cr_assert_str_eq(
	    jstr(w.body, "regarding.fieldPath"), "spec.resourceGroups");
	cr_assert_str_eq(jstr(w.body, "note"), "");
	cr_assert_str_eq(jstr(w.body, "type"), "Warning");
	rec_event_write_dispose(&w);
}

Test(events, invalid_input)
{
	struct rec_event_write w;
	cu_error err;
	struct rec_event ok = job_event("j", "R", "m");
	struct rec_event bad[6];
	const char *msgs[] = {
	    "event: involvedObject kind and name are required",
	    "event: involvedObject kind and name are required",
	    "event about Job j: reason is required",
	    "event about Job j: type must be Normal or Warning",
	    "event about Job j: type must be Normal or Warning",
	    "event about Job j: text is not valid UTF-8",
	};
	for (int i = 0; i < 6; i++)
		bad[i] = ok;
	bad[0].kind = NULL;
	bad[1].name = "";
	bad[2].reason = NULL;
	bad[3].type = "Info";
	bad[4].type = NULL;
	bad[5].message = "caf\xc3(";
	for (int i = 0; i < 6; i++) {
		cu_error_clear(&err);
		cr_assert_eq(rec_events_record(rec, &bad[i], T0, &w, &err),
		    CU_EINVAL, "case %d", i);
		cr_assert_str_eq(err.msg, msgs[i], "case %d", i);
		cr_assert_eq(w.action, REC_EVENT_DROP);
		cr_assert_null(w.body);
	}
	cr_assert_eq(rec_events_size(rec), 0);
	cr_assert_eq(rec_events_spam_size(rec), 0);
	cr_assert_eq(rec_events_record(rec, NULL, T0, &w, &err), CU_EINVAL);
	cr_assert_eq(rec_events_record(NULL, &ok, T0, &w, &err), CU_EINVAL);

	/* valid multi-byte text passes */
	ok.message = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80";
	cr_assert_eq(emit(&ok, T0, &w), REC_EVENT_CREATE);
	rec_event_write_dispose(&w);
	/* overlong, surrogate and out-of-range sequences do not */
	const char *invalid[] = {"\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80",
	    "\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\x80", "\xe2\x82"};
	for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++) {
		ok.message = invalid[i];
		cr_assert_eq(rec_events_record(rec, &ok, T0, &w, NULL),
		    CU_EINVAL, "invalid %zu", i);
	}
}

Test(events, options)
{
	rec_events *r2 = NULL;
	cu_error err;
	struct rec_events_opts o = {.component = NULL};

	cr_assert_eq(rec_events_new(&r2, &o, &err), CU_EINVAL);
	cr_assert_str_eq(err.msg, "events: a reporting component is required");
	cr_assert_eq(rec_events_new(&r2, NULL, &err), CU_EINVAL);
	o.component = "c";
	o.burst = -1;
	cr_assert_eq(rec_events_new(&r2, &o, &err), CU_EINVAL);
	o.burst = 2000000;
	cr_assert_eq(rec_events_new(&r2, &o, &err), CU_EINVAL);
	o.burst = 0;
	o.refill_ns = -5;
	cr_assert_eq(rec_events_new(&r2, &o, &err), CU_EINVAL);
	cr_assert_null(r2);
	rec_events_free(NULL);
	cr_assert_eq(rec_events_size(NULL), 0);
}

/* Every allocation failure leaves the recorder as it was. */
Test(events, allocation_failures)
{
	struct rec_event ev = job_event("j", "Started", "m");
	struct rec_event_write w;
	cu_error err;
	int64_t now = T0;

	for (int round = 0; round < 2; round++) {
		/* round 0: a CREATE, round 1: a PATCH */
		for (uint64_t n = 1;; n++) {
			size_t before = rec_events_size(rec);
			cu_mem_fail_after(n, true);
			int rc = rec_events_record(rec, &ev, now, &w, &err);
			cu_mem_fail_after(0, false);
			if (rc == CU_OK)
				break;
			cr_assert_eq(rc, CU_ENOMEM, "n=%" PRIu64, n);
			cr_assert_null(w.body);
			cr_assert_null(w.name);
			cr_assert_eq(rec_events_size(rec), before);
			cr_assert(n < 100);
		}
		cr_assert_eq(
		    w.action, round == 0 ? REC_EVENT_CREATE : REC_EVENT_PATCH);
		cr_assert_eq(w.count, round + 1, "no failed try was counted");
		rec_event_write_dispose(&w);
		now += SEC;
	}
	/* creating a recorder */
	for (uint64_t n = 1;; n++) {
		rec_events *r2;
		struct rec_events_opts o = {.component = "c", .instance = "i"};
		cu_mem_fail_after(n, true);
		int rc = rec_events_new(&r2, &o, &err);
		cu_mem_fail_after(0, false);
		if (rc == CU_OK) {
			rec_events_free(r2);
			break;
		}
		cr_assert_eq(rc, CU_ENOMEM);
		cr_assert_null(r2);
	}
}

/* ---- transitions -----------------------------------------------------------
 */

Test(events, should_emit_pure)
{
	const enum rec_run_state U = REC_RUN_UNKNOWN, S = REC_RUN_SUSPENDED,
				 R = REC_RUN_RUNNING;
	cr_assert_str_eq(rec_events_should_emit(NULL, R, S), "Suspended");
	cr_assert_str_eq(rec_events_should_emit(NULL, S, R), "Resumed");
	cr_assert_null(rec_events_should_emit(NULL, S, S));
	cr_assert_null(rec_events_should_emit(NULL, R, R));
	cr_assert_null(rec_events_should_emit(NULL, U, S));
	cr_assert_null(rec_events_should_emit(NULL, U, R));
	cr_assert_null(rec_events_should_emit(NULL, S, U));
	cr_assert_null(rec_events_should_emit(NULL, U, U));
}

Test(events, should_emit_with_memory)
{
	struct rec_transition t = {0};
	const enum rec_run_state S = REC_RUN_SUSPENDED, R = REC_RUN_RUNNING;

	/* created suspended by the webhook: nothing to announce */
	cr_assert_null(rec_events_should_emit(&t, REC_RUN_UNKNOWN, S));
	/* admitted */
	cr_assert_str_eq(rec_events_should_emit(&t, S, R), "Resumed");
	/* stale cache still shows it suspended, we "resume" again */
	cr_assert_null(rec_events_should_emit(&t, S, R));
	/* evicted: a real transition */
	cr_assert_str_eq(rec_events_should_emit(&t, R, S), "Suspended");
	/* someone else resumed it; we observe that and write nothing */
	cr_assert_null(rec_events_should_emit(&t, R, R));
	/* we suspend it again: real, announced */
	cr_assert_str_eq(rec_events_should_emit(&t, R, S), "Suspended");
}

/*
 * A reconciler asked 1,000 times to suspend a Job and then 1,000 times to
 * resume it. Only the first request of each kind is a real transition;
 * every later one finds the object already in that state, or reads a
 * stale cached copy that still shows the state before the first write
 * (every third request here), so its write changes nothing on the server.
 * Each emission goes through the recorder, as the controller would send it.
 */
static void flap(struct rec_transition *t, int *suspended, int *resumed)
{
	enum rec_run_state actual = REC_RUN_RUNNING;
	int64_t now = T0;

	*suspended = *resumed = 0;
	(void)rec_events_should_emit(t, actual, actual); /* first look */
	for (int phase = 0; phase < 2; phase++) {
		enum rec_run_state want =
		    phase == 0 ? REC_RUN_SUSPENDED : REC_RUN_RUNNING;
		enum rec_run_state before = actual; /* state before phase */
		for (int i = 0; i < 1000; i++) {
			enum rec_run_state prev =
			    (i > 0 && i % 3 == 0) ? before : actual;
			actual = want; /* write (a no-op after i == 0) */
			const char *reason =
			    rec_events_should_emit(t, prev, actual);
			if (reason == NULL)
				continue;
			if (strcmp(reason, REC_EVENT_REASON_SUSPENDED) == 0)
				(*suspended)++;
			else
				(*resumed)++;
			struct rec_event ev = job_event(
			    "flappy", reason, "Kueue managed child job");
			struct rec_event_write w;
			(void)emit(&ev, now, &w);
			rec_event_write_dispose(&w);
			now += SEC / 10;
		}
	}
}

Test(events, flapping_emits_once_per_real_transition)
{
	struct rec_transition t = {0};
	int suspended, resumed;

	flap(&t, &suspended, &resumed);
	cr_assert_eq(suspended, 1, "Suspended emitted %d times", suspended);
	cr_assert_eq(resumed, 1, "Resumed emitted %d times", resumed);
	cr_assert_eq(rec_events_size(rec), 2);
}

/* The same loop with the plain comparison (no per-object memory) would
 * announce every stale repeat: that is what the memory is for. */
Test(events, flapping_without_memory_repeats)
{
	int suspended, resumed;

	flap(NULL, &suspended, &resumed);
	cr_assert_gt(suspended, 300);
	cr_assert_gt(resumed, 300);
}

/* Without the guard the same loop would announce every request; the
 * recorder then folds and rate-limits what reaches the API server. */
Test(events, unguarded_flapping_is_bounded_by_the_recorder)
{
	int writes = 0, folds = 0, drops = 0, max_count = 0;
	int64_t now = T0;

	for (int i = 0; i < 2000; i++) {
		const char *reason = i % 2 ? "Resumed" : "Suspended";
		struct rec_event ev = job_event("flappy", reason, "x");
		struct rec_event_write w;
		enum rec_event_action a = emit(&ev, now, &w);
		if (a == REC_EVENT_DROP)
			drops++;
		else if (a == REC_EVENT_FOLD)
			folds++;
		else
			writes++;
		if (w.count > max_count)
			max_count = w.count;
		rec_event_write_dispose(&w);
		now += SEC / 25; /* 2,000 in 80 s */
	}
	/* two series (a create and a patch each), the rest counted */
	cr_assert_eq(writes, 4);
	cr_assert_eq(folds, REC_EVENTS_SPAM_BURST - 4);
	cr_assert_eq(drops, 2000 - REC_EVENTS_SPAM_BURST);
	cr_assert_eq(rec_events_size(rec), 2);
	cr_assert_eq(max_count, 13);
}

/* client-go's finishSeries: a series not observed for six minutes is
 * over, the next repeat is a new Event; within six minutes it goes on. */
Test(events, series_ends_after_six_minutes)
{
	struct rec_event ev = job_event("j", "Stopped", "No matching Workload");
	struct rec_event_write w;
	char *first;

	cr_assert_eq(emit(&ev, T0, &w), REC_EVENT_CREATE);
	first = cu_strdup(w.name);
	rec_event_write_dispose(&w);
	cr_assert_eq(
	    emit(&ev, T0 + REC_EVENTS_SERIES_FINISH_NS, &w), REC_EVENT_PATCH);
	cr_assert_str_eq(w.name, first);
	cr_assert_eq(w.count, 2);
	rec_event_write_dispose(&w);
	/* 6 min after the last observation (not the first): still on */
	cr_assert_eq(emit(&ev, T0 + 2 * REC_EVENTS_SERIES_FINISH_NS, &w),
	    REC_EVENT_FOLD);
	cr_assert_eq(w.count, 3);
	rec_event_write_dispose(&w);
	cr_assert_eq(emit(&ev, T0 + 3 * REC_EVENTS_SERIES_FINISH_NS + 1, &w),
	    REC_EVENT_CREATE);
	cr_assert_str_neq(w.name, first);
	cr_assert_eq(w.count, 1);
	cr_assert_null(json_object_get(w.body, "series"));
	rec_event_write_dispose(&w);
	cu_free(first);
}

/* The action is part of the series key; it defaults to the reason. */
Test(events, action_in_body_and_key)
{
	struct rec_event ev = job_event("j", "Deleted", "m");
	struct rec_event_write w;

	ev.action = "Delete";
	cr_assert_eq(emit(&ev, T0, &w), REC_EVENT_CREATE);
	cr_assert_str_eq(jstr(w.body, "action"), "Delete");
	rec_event_write_dispose(&w);
	ev.action = NULL;
	cr_assert_eq(emit(&ev, T0 + 1, &w), REC_EVENT_CREATE);
	cr_assert_str_eq(jstr(w.body, "action"), "Deleted");
	rec_event_write_dispose(&w);
	cr_assert_eq(emit(&ev, T0 + 2, &w), REC_EVENT_PATCH);
	rec_event_write_dispose(&w);
}

/* Kueue's TruncateEventMessage: 1024 bytes at most, " ..." at the end;
 * cueue backs off to a UTF-8 boundary. */
Test(events, note_truncated_as_kueue)
{
	char big[2000], *t;
	struct rec_event ev;
	struct rec_event_write w;

	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	t = rec_events_truncate_note(big);
	cr_assert_eq(strlen(t), 1024);
	cr_assert_str_eq(t + 1020, " ...");
	cr_assert_eq(t[1019], 'a');
	cu_free(t);
	big[1024] = '\0';
	t = rec_events_truncate_note(big);
	cr_assert_str_eq(t, big, "1024 bytes are kept whole");
	cu_free(t);
	/* a 2-byte character straddling byte 1020 is dropped whole */
	memset(big, 'a', 1100);
	big[1100] = '\0';
	big[1019] = (char)0xC3;
	big[1020] = (char)0xA9;
	t = rec_events_truncate_note(big);
	cr_assert_eq(strlen(t), 1023);
	cr_assert_str_eq(t + 1019, " ...");
	cu_free(t);
	t = rec_events_truncate_note(NULL);
	cr_assert_str_eq(t, "");
	cu_free(t);
	ev = job_event("j", "Stopped", big);
	cr_assert_eq(emit(&ev, T0, &w), REC_EVENT_CREATE);
	cr_assert_eq(strlen(jstr(w.body, "note")), 1023);
	rec_event_write_dispose(&w);
}

/* Kueue's types and reporting controllers, by kind and reason. */
Test(events, kueue_meta)
{
	static const struct {
		const char *kind, *reason, *type, *ctl;
	} cases[] = {
	    {"Workload", "QuotaReserved", "Normal", "kueue-admission"},
	    {"Workload", "Admitted", "Normal", "kueue-admission"},
	    {"Workload", "Preempted", "Normal", "kueue-admission"},
	    {"Workload", "PreemptedWorkload", "Normal", "kueue-admission"},
	    {"Workload", "EvictedDueToPreempted", "Normal", "kueue-admission"},
	    {"Workload", "Pending", "Warning", "kueue-admission"},
	    {"Workload", "WaitingForQuota", "Warning", "kueue-admission"},
	    {"Workload", "NoMatchingFlavor", "Warning", "kueue-admission"},
	    {"Workload", "EvictedDueToPodsReadyTimeout", "Normal",
		"kueue-workload-controller"},
	    {"Workload", "AdmissionCheckRejected", "Warning",
		"kueue-workload-controller"},
	    {"Workload", "MaximumExecutionTimeExceeded", "Warning",
		"kueue-workload-controller"},
	    {"Workload", "ProvisioningRequestCreated", "Normal",
		"kueue-provisioning-request-controller"},
	    {"Workload", "AdmissionCheckUpdated", "Normal",
		"kueue-provisioning-request-controller"},
	    {"Workload", "FailedCreate", "Warning",
		"kueue-provisioning-request-controller"},
	    {"Job", "CreatedWorkload", "Normal", "batch/job-kueue-controller"},
	    {"Job", "Suspended", "Normal", "batch/job-kueue-controller"},
	    {"Job", "FinishedWorkload", "Normal", "batch/job-kueue-controller"},
	    {"JobSet", "Started", "Normal",
		"jobset.x-k8s.io/jobset-kueue-controller"},
	    {"Pod", "Stopped", "Normal", "pod-kueue-controller"},
	    {"Job", "WorkloadPriorityClassNotFound", "Warning",
		"batch/job-kueue-controller"},
	    {"ClusterQueue", "UnsupportedField", "Warning", NULL},
	    {"ClusterQueue", "Whatever", "Normal", NULL},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *type = NULL, *ctl = "unset";

		rec_events_kueue_meta(
		    cases[i].kind, cases[i].reason, &type, &ctl);
		cr_assert_str_eq(type, cases[i].type, "%s %s", cases[i].kind,
		    cases[i].reason);
		if (cases[i].ctl == NULL)
			cr_assert_null(
			    ctl, "%s %s", cases[i].kind, cases[i].reason);
		else
			cr_assert_str_eq(ctl, cases[i].ctl, "%s %s",
			    cases[i].kind, cases[i].reason);
	}
	rec_events_kueue_meta(NULL, NULL, NULL, NULL); /* no crash */
}

/* A long reportingInstance is cut to the 128 bytes the API accepts. */
Test(events, instance_cut_to_128)
{
	char inst[300];
	rec_events *r2;
	struct rec_events_opts o = {.component = "kueue-admission"};
	struct rec_event ev = job_event("j", "R", "m");
	struct rec_event_write w;

	memset(inst, 'x', sizeof(inst) - 1);
	inst[sizeof(inst) - 1] = '\0';
	o.instance = inst;
	cr_assert_eq(rec_events_new(&r2, &o, NULL), CU_OK);
	cr_assert_eq(rec_events_record(r2, &ev, T0, &w, NULL), CU_OK);
	cr_assert_eq(strlen(jstr(w.body, "reportingInstance")), 128);
	cr_assert_eq(
	    strncmp(jstr(w.body, "reportingInstance"), "kueue-admission-", 16),
	    0);
	rec_event_write_dispose(&w);
	rec_events_free(r2);
}

/* A series PATCH answered 404: the series is forgotten by the Event's
 * name, the next repeat creates a new Event. */
Test(events, forget_by_name_after_404)
{
	struct rec_event ev = job_event("j", "Stopped", "m");
	struct rec_event other = job_event("k", "Stopped", "m");
	struct rec_event_write w;
	char *name;

	cr_assert_eq(emit(&other, T0, &w), REC_EVENT_CREATE);
	rec_event_write_dispose(&w);
	cr_assert_eq(emit(&ev, T0 + 1, &w), REC_EVENT_CREATE);
	name = cu_strdup(w.name);
	rec_event_write_dispose(&w);
	cr_assert_eq(emit(&ev, T0 + 2, &w), REC_EVENT_PATCH);
	rec_event_write_dispose(&w);
	rec_events_forget_name(rec, "default", "nope");
	cr_assert_eq(rec_events_size(rec), 2);
	rec_events_forget_name(rec, "default", name);
	cr_assert_eq(rec_events_size(rec), 1);
	cr_assert_eq(emit(&ev, T0 + 3, &w), REC_EVENT_CREATE);
	cr_assert_str_neq(w.name, name);
	rec_event_write_dispose(&w);
	cr_assert_eq(emit(&other, T0 + 4, &w), REC_EVENT_PATCH, "kept");
	rec_event_write_dispose(&w);
	rec_events_forget_name(NULL, NULL, NULL);
	cu_free(name);
}

/* Kueue's notes, durations as Go's "%.0f" of seconds. */
Test(events, kueue_notes)
{
	static const struct {
		int64_t ns;
		const char *want;
	} waits[] = {
	    {0, "0"},
	    {499999999, "0"},
	    {1500000000, "2"}, /* halves to even, as Go */
	    {2500000000LL, "2"},
	    {2500000001LL, "3"},
	    {61400000000LL, "61"},
	};
	char want[256], *n;

	for (size_t i = 0; i < sizeof(waits) / sizeof(waits[0]); i++) {
		n = rec_events_note_quota_reserved("cq", waits[i].ns);
		snprintf(want, sizeof(want),
		    "Quota reserved in ClusterQueue cq, wait time since "
		    "queued was %ss",
		    waits[i].want);
		cr_assert_str_eq(n, want);
		cu_free(n);
		n = rec_events_note_admitted("cq", waits[i].ns);
		snprintf(want, sizeof(want),
		    "Admitted by ClusterQueue cq, wait time since reservation "
		    "was %ss",
		    waits[i].want);
		cr_assert_str_eq(n, want);
		cu_free(n);
	}
	n = rec_events_note_preempted("Preempted to accommodate a workload "
				      "(UID: u, JobUID: j) due to x",
	    1000, -5);
	cr_assert_str_eq(n,
	    "Preempted to accommodate a workload (UID: u, JobUID: j) due to "
	    "x; preemptor effective priority: 1000 (base: 1000, boost: 0); "
	    "preemptee effective priority: -5 (base: -5, boost: 0)");
	cu_free(n);
	n = rec_events_note_preempted_workload(
	    "team", "low", "uid-1", "cq", 7, 3);
	cr_assert_str_eq(n,
	    "Preempted workload team/low (UID: uid-1) in ClusterQueue cq; "
	    "preemptor effective priority: 7 (base: 7, boost: 0); preemptee "
	    "effective priority: 3 (base: 3, boost: 0)");
	cu_free(n);
	n = rec_events_note_finished("team", "job-a-1");
	cr_assert_str_eq(n, "Workload 'team/job-a-1' is declared finished");
	cu_free(n);
	n = rec_events_note_admitted(NULL, 0);
	cr_assert_str_eq(
	    n, "Admitted by ClusterQueue , wait time since reservation was 0s");
	cu_free(n);
}
