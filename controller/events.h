/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/events.h - the pure core of cueue's core/v1 Event recorder:
 * given an event to emit, decide whether to CREATE a new Event object,
 * PATCH the one recorded for an identical earlier event (count + 1), or
 * DROP it, and build the JSON body of that write. Plus a guard that lets
 * callers announce Suspended/Resumed only on real transitions.
 *
 * Semantics follow client-go's tools/record EventCorrelator (notes
 * kubernetes-api.md §8.2):
 *  - An Event is named `<involvedObject.name>.<hex nanoseconds>`; count 1,
 *    firstTimestamp = lastTimestamp = now, source.component and
 *    reportingComponent = the reporting controller, reportingInstance =
 *    the recorder's instance. Objects without a namespace put their events
 *    in "default".
 *  - Dedup: an event identical to one recorded before (same source,
 *    involvedObject incl. uid and apiVersion, type, reason and message;
 *    client-go's getEventKey) becomes a strategic-merge PATCH of the
 *    earlier Event with {count, lastTimestamp, message}. The recorder
 *    remembers the last CTL_EVENTS_LRU_SIZE keys (least recently used
 *    forgotten first).
 *  - Spam filter: a token bucket per source + involvedObject (an LRU of
 *    the same size), burst 25, one token back every 300 s, full at start.
 *    An event without a token is dropped before dedup, so it is neither
 *    written nor counted.
 *  Not done: client-go's aggregation of events that differ only in their
 *  message ("(combined from similar events)"); each distinct message is its
 *  own Event.
 *
 * Why this matters (DESIGN.md lesson 4, Kueue #7649's "x14709"): folding
 * hides a flapping controller, the spam filter bounds its API writes, and
 * the transition guard keeps a level-triggered reconciler from announcing
 * the same state again.
 *
 * No I/O and no clock reads: time comes in as now_ns, bodies go out as
 * jansson objects for the caller to send. Event-loop thread only.
 * Prefix: ctl_events_, ctl_event_, CTL_EVENT(S)_.
 */
#ifndef CU_CONTROLLER_EVENTS_H
#define CU_CONTROLLER_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "lib/cu.h"

#define CTL_EVENTS_LRU_SIZE 4096
#define CTL_EVENTS_SPAM_BURST 25
#define CTL_EVENTS_SPAM_REFILL_NS (300LL * 1000000000LL)
/* Longest event key (all identifying strings together) accepted. */
#define CTL_EVENTS_KEY_MAX ((size_t)1 << 20)

#define CTL_EVENT_NORMAL "Normal"
#define CTL_EVENT_WARNING "Warning"
#define CTL_EVENT_REASON_SUSPENDED "Suspended"
#define CTL_EVENT_REASON_RESUMED "Resumed"

typedef struct ctl_events ctl_events;

struct ctl_events_opts {
	/* Reporting controller used when an event names none, e.g.
	 * "cueue.dev/job-controller". [borrowed, copied] required. */
	const char *component;
	/* reportingInstance, e.g. the pod name. [borrowed, copied]; NULL =
	 * left out. */
	const char *instance;
	/* 0 = the defaults above. Tests shrink them. */
	size_t lru_size;
	int burst;
	int64_t refill_ns;
};

/* One event to emit. Every string [borrowed], read during the call only. */
struct ctl_event {
	/* involvedObject */
	const char *kind;	 /* required, e.g. "Job" */
	const char *api_version; /* e.g. "batch/v1"; NULL = "" */
	const char *namespace_;	 /* NULL or "" for cluster-scoped objects */
	const char *name;	 /* required */
	const char *uid;	 /* NULL = "" */
	const char *field_path;	 /* usually NULL */
	const char *type;	 /* CTL_EVENT_NORMAL or CTL_EVENT_WARNING */
	const char *reason;	 /* required, CamelCase */
	const char *message;	 /* NULL = "" */
	/* source.component / reportingComponent; NULL = opts.component */
	const char *reporting_controller;
};

enum ctl_event_action {
	CTL_EVENT_DROP = 0, /* spam filter: send nothing */
	CTL_EVENT_CREATE,   /* POST /api/v1/namespaces/{ns}/events */
	CTL_EVENT_PATCH,    /* PATCH .../events/{name},
			       application/strategic-merge-patch+json */
};

/* What to send. Release with ctl_event_write_dispose. */
struct ctl_event_write {
	enum ctl_event_action action;
	char *namespace_; /* [owned: cu_free] NULL for DROP */
	char *name;	  /* [owned: cu_free] the Event's name; NULL for DROP */
	int32_t count;	  /* count after this write; 0 for DROP */
	json_t *body;	  /* [owned: json_decref] NULL for DROP */
};

void ctl_event_write_dispose(struct ctl_event_write *w);

/* New recorder [owned: ctl_events_free]. opts [borrowed]. CU_EINVAL (no
 * component, negative or overflowing limits), CU_ENOMEM. */
CU_MUST_CHECK int ctl_events_new(
    ctl_events **out, const struct ctl_events_opts *opts, cu_error *err);
void ctl_events_free(ctl_events *r);

/*
 * Decide what to do with ev at now_ns and build the write. *out is
 * initialised here (dispose it whatever the action). The recorder's state
 * changes only on success. CU_EINVAL (missing kind/name/reason, type not
 * Normal/Warning), CU_ETOOBIG (key over CTL_EVENTS_KEY_MAX), CU_ENOMEM.
 */
CU_MUST_CHECK int ctl_events_record(ctl_events *r, const struct ctl_event *ev,
    int64_t now_ns, struct ctl_event_write *out, cu_error *err);

/*
 * The PATCH of an Event came back 404 (expired: --event-ttl): forget it
 * and build a CREATE for ev (new name, count 1), without spending a spam
 * token. Same errors as ctl_events_record.
 */
CU_MUST_CHECK int ctl_events_recreate(ctl_events *r, const struct ctl_event *ev,
    int64_t now_ns, struct ctl_event_write *out, cu_error *err);

/* Forget the recorded Event of ev (e.g. its CREATE was refused), so the
 * next identical event creates a new one. No-op when unknown (and, best
 * effort, when the key cannot be built for lack of memory). */
void ctl_events_forget(ctl_events *r, const struct ctl_event *ev);

/* Number of remembered dedup keys / spam buckets (tests, metrics). */
size_t ctl_events_size(const ctl_events *r);
size_t ctl_events_spam_size(const ctl_events *r);

/* ---- Suspended/Resumed only on real transitions ------------------------ */

enum ctl_run_state {
	CTL_RUN_UNKNOWN = 0, /* not observed yet */
	CTL_RUN_SUSPENDED,
	CTL_RUN_RUNNING,
};

/* Per-object memory of the last announced state; zero-initialise and keep
 * it with the object's reconcile state. */
struct ctl_transition {
	enum ctl_run_state announced;
};

/*
 * prev: the state the object had before this reconcile's write (as
 * observed); next: the state after it (prev again when nothing was
 * written). Returns CTL_EVENT_REASON_SUSPENDED or _RESUMED [static] when
 * prev -> next is a real transition that t has not announced yet, else
 * NULL. Without t (NULL) it is the plain comparison prev != next (both
 * known). With t: a stale observation repeating an already announced
 * transition returns NULL; an unchanged observation (prev == next)
 * records that state as announced; a first observation (prev UNKNOWN)
 * announces nothing.
 */
const char *ctl_events_should_emit(
    struct ctl_transition *t, enum ctl_run_state prev, enum ctl_run_state next);

#endif /* CU_CONTROLLER_EVENTS_H */
