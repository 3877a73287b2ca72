/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/apiserver.h - internals of cueue-apiserver, the local
 * Kubernetes-compatible API server every cueue test runs against.
 *
 * Design notes
 * ------------
 * One thread, one libev loop. libmicrohttpd runs in external-loop epoll
 * mode: its epoll fd is one ev_io, its timeout one ev_timer. Watches are
 * long-lived chunked responses whose connections are suspended while they
 * have nothing to send and resumed when an event is queued for them.
 *
 * Invariants:
 *   1. One global resourceVersion counter (srv->rv) for every kind; every
 *      stored object's metadata.resourceVersion is the revision of its last
 *      write; a list's resourceVersion is srv->rv at read time.
 *   2. Stored json_t objects are immutable once stored: a write builds a new
 *      object and swaps it in. History events and watchers hold references,
 *      never copies, so a write costs one allocation per changed object.
 *   3. Per kind, `items` is sorted by (namespace, name) - the etcd key order
 *      that continue tokens rely on.
 *   4. Per kind, the event ring holds every change with rv > ring_floor in rv
 *      order; a watch or snapshot at rv X is servable iff
 *      X >= max(ring_floor, srv->compacted), else 410 Expired.
 *   5. Watch events are delivered in rv order, synchronously at write time,
 *      so no watcher can observe a later write before an earlier one.
 *   6. Admission webhooks never block the loop: a write that waits for a
 *      webhook is suspended and its handler re-run from the top when the
 *      answer arrives (webhooks.c), so handlers do every admission step
 *      before their first side effect.
 *
 * Prefix: as_.
 */
#ifndef CU_TESTS_APISERVER_H
#define CU_TESTS_APISERVER_H

#include <curl/curl.h>
#include <ev.h>
#include <jansson.h>
#include <microhttpd.h>
#include <stdbool.h>
#include <stdint.h>

#include "cel/cel.h"
#include "lib/cu.h"
#include "namespaces/selector.h"

#define AS_MAX_BODY (3u * 1024u * 1024u) /* bodies over 3 MiB get 413 */

/* Kind flags. */
enum {
	AS_NAMESPACED = 1u << 0,
	AS_STATUS = 1u << 1,	 /* has a /status subresource */
	AS_GENERATION = 1u << 2, /* tracks metadata.generation */
	AS_CREATE_ON_UPDATE = 1u << 3,
	AS_UNCONDITIONAL_UPDATE = 1u << 4, /* PUT without resourceVersion ok */
	AS_CUSTOM = 1u << 5,		   /* a custom resource (CRD-backed) */
	AS_SCALE = 1u << 6,		   /* has a /scale subresource */
	AS_NO_WATCH = 1u << 7,
};

enum as_ev_type { AS_EV_ADDED, AS_EV_MODIFIED, AS_EV_DELETED };

/* One stored object, element of a kind's sorted item array. */
struct as_entry {
	char *ns;    /* owned; "" for cluster-scoped kinds */
	char *name;  /* owned */
	json_t *obj; /* owned reference; immutable */
};

/* One change in a kind's history. */
struct as_event {
	uint64_t rv;
	enum as_ev_type type;
	json_t *obj; /* owned ref: new state; for DELETED the last state
		      * carrying the delete's resourceVersion */
	json_t *old; /* owned ref: previous state, NULL for ADDED */
};

struct as_watch;
struct as_admit;    /* per-request admission state (webhooks.c) */
struct as_whclient; /* the webhook HTTPS client (webhooks.c) */

/* One resource type: its REST identity, its semantics and its storage. */
struct as_kind {
	char *group;	     /* owned; "" for core */
	char *version;	     /* owned; storage version */
	json_t *versions;    /* owned; array of served version strings */
	char *plural;	     /* owned */
	char *singular;	     /* owned; may be "" for built-ins (as in 1.20) */
	char *kind;	     /* owned */
	char *list_kind;     /* owned */
	json_t *short_names; /* owned array */
	json_t *categories;  /* owned array */
	unsigned flags;
	const char *const *fields;     /* extra selectable fields [static] */
	const char *const *top_fields; /* known top-level fields for strict
					* validation of built-ins, or NULL */
	json_t *schema; /* owned ref: structural schema (CRs), or NULL */
	json_t *scale;	/* owned ref: subresources.scale spec, or NULL */
	json_t *printer_columns; /* owned ref: additionalPrinterColumns */

	struct as_entry *items; /* owned; sorted by (ns, name) */
	size_t nitems, capitems;

	struct as_event *ring; /* owned circular buffer */
	size_t ring_cap, ring_start, ring_len;
	uint64_t ring_floor; /* events with rv <= floor were evicted */

	struct as_watch *watchers; /* intrusive list of open watches */
	struct as_kind *next;	   /* registry list */
	bool removed;		   /* CRD deleted; freed at shutdown */
	/* A view onto another kind's storage (events.k8s.io/v1 Event is
	 * core/v1 Event in another shape): requests to this kind read and
	 * write `storage`, converting with as_view_out / as_view_in. */
	struct as_kind *storage;
};

/* Fault injection rule (test endpoint /__test/faults). */
struct as_fault {
	char *method;	    /* owned; NULL = any */
	char *path_prefix;  /* owned; NULL = any */
	int code;	    /* 429, 500, ... ; 0 = only latency */
	int retry_after;    /* seconds; < 0 = no header */
	bool plain;	    /* plain-text body instead of a Status */
	int remaining;	    /* requests still to fault; < 0 = unlimited */
	double probability; /* 0..1 (1 = always) */
	int latency_ms;	    /* added before answering */
	/* the request is carried out, its answer sent this much later */
	int answer_delay_ms;
};

/* The front-proxy client certificate's CN (kube's usual name). */
#define AS_PROXY_CN "front-proxy-client"

struct as_token {
	char *token;  /* owned */
	char *user;   /* owned */
	char *groups; /* owned; comma separated */
};

struct as_server {
	struct ev_loop *loop;
	struct MHD_Daemon *mhd;
	ev_io mhd_io;
	ev_timer mhd_timer;
	ev_prepare mhd_prepare;
	ev_signal sigterm, sigint;
	ev_timer sim_timer;
	bool need_run; /* a connection was resumed: MHD_run before sleeping */
	size_t conns, peak_conns; /* open client connections, and the most */

	uint64_t rv;	    /* global revision (invariant 1) */
	uint64_t compacted; /* revisions <= compacted are gone */
	size_t history;	    /* ring capacity per kind */
	int write_latency_ms;
	int bookmark_ms;
	bool test_endpoints;
	bool tls;
	uint16_t port;
	char *listen_host;
	char *kubeconfig_out;
	char *cert_pem, *key_pem, *ca_pem; /* owned */
	/* The front-proxy client certificate the aggregator presents to
	 * APIService backends, and its CA (published in the ConfigMap
	 * kube-system/extension-apiserver-authentication) [owned]. */
	struct {
		char *cert_pem, *key_pem, *ca_pem;
	} proxy;

	struct as_token *tokens; /* owned */
	size_t ntokens;

	struct as_kind *kinds; /* registry */

	/* /__test/ state */
	json_t *access_log; /* owned array of entries */
	uint64_t log_seq;
	json_t *writes_by_user; /* owned object user -> count */
	struct as_fault *faults;
	size_t nfaults;
	uint64_t rand_state;

	/* simulators */
	bool sim_jobs, sim_jobsets, sim_sched, sim_prov;
	unsigned sim_fw; /* AS_SIM_* bits: the framework stand-ins */
	int sim_tick_ms;

	/* admission webhooks */
	struct as_whclient *whc; /* owned; created on the first call */
	bool wh_stopped;	 /* shutting down: calls fail at once */
};

/* ---- kinds (kinds.c) ------------------------------------------------ */
int as_kinds_init(struct as_server *srv, cu_error *err);
void as_kinds_free(struct as_server *srv);
struct as_kind *as_kind_find(struct as_server *srv, const char *group,
    const char *version, const char *plural);
struct as_kind *as_kind_by_gvk(
    struct as_server *srv, const char *api_version, const char *kind);
/* apiVersion string of a kind for a served version [owned: cu_free]. */
char *as_kind_api_version(const struct as_kind *k, const char *version);
/* Register/refresh the kinds of a stored CRD object. */
int as_crd_register(struct as_server *srv, json_t *crd, cu_error *err);
void as_crd_unregister(struct as_server *srv, json_t *crd);
/* Validate a CRD and fill its status (accepted names, conditions). */
int as_crd_prepare(json_t *crd, cu_error *err);
/* Prune unknown fields and apply defaults per the kind's schema. When
 * `unknown` is non-NULL, the paths of pruned fields are appended to it. */
void as_schema_apply(const struct as_kind *k, json_t *obj, json_t *unknown);
json_t *as_discovery_api(struct as_server *srv);
json_t *as_discovery_apis(struct as_server *srv);
json_t *as_discovery_group(struct as_server *srv, const char *group);
json_t *as_discovery_resources(
    struct as_server *srv, const char *group, const char *version);
/* Type check of a request body as the real server's decoder (built-in
 * kinds: 400 "cannot be handled as") or schema validation (custom
 * resources: 422) would do it. Returns NULL when fine, else a message
 * [owned: cu_free]; *invalid tells 422 (true) from 400. */
char *as_type_check(
    const struct as_kind *k, json_t *obj, bool *invalid, char **field);
struct as_resp;
/* Every structural-schema error of a custom resource body (after
 * pruning and defaulting), as kube-apiserver lists them: an array of
 * {"field", "detail"} [owned: json_decref], empty when valid. old: the
 * stored object on update or NULL [borrowed]. */
json_t *as_schema_errors(json_t *schema, json_t *obj, json_t *old);
/* Validate a custom resource as kube-apiserver: true when valid, else
 * false with a 400 (decode) or a 422 with one cause per error in resp. */
bool as_schema_validate(
    const struct as_kind *k, json_t *obj, json_t *old, struct as_resp *resp);
/* Go RE2 pattern onto POSIX ERE (the documented subset) appended to out;
 * CU_EINVAL outside it. */
int as_re_translate(const char *pat, cu_buf *out);
/* Does s match the pattern (searched, as Go's regexp.MatchString)? 1 yes,
 * 0 no, -1 pattern outside the subset (compiled patterns are cached). */
int as_re_match(const char *pattern, const char *s);

/* A CEL rule (cel/cel.h) evaluated with self and oldSelf (NULL: unset)
 * [borrowed] and matches() through as_re_match: the value [owned:
 * json_decref], or NULL with *err [owned: cu_free] (types.c). */
json_t *as_cel_eval(
    const struct cel_expr *cel, json_t *self, json_t *old, char **err);
/* strfmt check kube-apiserver runs for a CRD `format`: 1 valid, 0 not,
 * -1 a format not checked. */
int as_format_ok(const char *format, const char *s);
/* Is `field` selectable on this kind; and its value on obj (or NULL). */
bool as_kind_field_ok(const struct as_kind *k, const char *field);
const char *as_obj_field(
    const struct as_kind *k, json_t *obj, const char *field);

/* Convert between a view kind and its storage kind (events.c). out: a
 * stored object to the view's shape [owned: json_decref]. in: a request
 * body in the view's shape to the stored shape [owned]; NULL with *why
 * set (a 422 detail, field in *field) when the view's validation fails. */
json_t *as_view_out(const struct as_kind *view, json_t *stored);
json_t *as_view_in(const struct as_kind *view, json_t *obj, bool create,
    const char **field, const char **why);

/* ---- store (store.c) ------------------------------------------------ */
/* Index of (ns, name) in k->items, or -(insertion point)-1. */
long as_store_find(const struct as_kind *k, const char *ns, const char *name);
json_t *as_store_get(
    const struct as_kind *k, const char *ns, const char *name); /* borrowed */
/* Write obj (reference consumed) as the new state of its key, assigning
 * the next revision. Emits ADDED or MODIFIED. */
int as_store_put(struct as_server *srv, struct as_kind *k, const char *ns,
    const char *name, json_t *obj);
/* Remove the key, emitting DELETED with a new revision. */
int as_store_remove(
    struct as_server *srv, struct as_kind *k, const char *ns, const char *name);
/* The items of k visible at revision rv (a snapshot), as an array of
 * borrowed entries sorted by key. Returns CU_EGONE if rv is compacted.
 * *out [owned: cu_free, entries borrowed]. */
int as_store_snapshot(struct as_server *srv, struct as_kind *k, uint64_t rv,
    struct as_entry **out, size_t *n);
/* The position in items [borrowed, n sorted by key] of the first key at
 * or (after) just after (ns, name) [borrowed]: where a list page starts. */
size_t as_store_seek(const struct as_entry *items, size_t n, const char *ns,
    const char *name, bool after);
/* Has k changed after revision rv (an event newer than rv in its ring)?
 * When not, and rv is not compacted, k->items is the snapshot at rv. */
bool as_store_changed_since(const struct as_kind *k, uint64_t rv);
/* Oldest revision a watch or snapshot on k may start from. */
uint64_t as_store_floor(const struct as_server *srv, const struct as_kind *k);
void as_store_compact(struct as_server *srv);
void as_kind_storage_free(struct as_kind *k);

/* ---- watch (watch.c) ------------------------------------------------ */
struct as_watch {
	struct as_server *srv;
	struct as_kind *kind;
	struct MHD_Connection *conn;
	char *ns; /* owned; NULL = all namespaces */
	api_selector labels;
	ns_fieldsel fields;
	char *api_version;    /* owned; the version the client asked for */
	struct as_kind *view; /* non-NULL: convert events into this view */
	bool bookmarks;
	bool suspended;
	bool done;  /* end the stream once the buffer drains */
	cu_buf out; /* bytes not yet handed to MHD */
	size_t out_pos;
	ev_timer deadline;
	ev_timer bookmark;
	struct as_watch *next, *prev;
	bool attached;
	/* owned; non-NULL: events go through the CRD's conversion webhook
	 * to this version (convert.c) */
	char *convert_to;
};

/* ---- the aggregation layer (aggregator.c) ----------------------------- */
struct as_request;
struct as_resp;
/* The APIService <version>.<group> [borrowed] when it proxies to a
 * service, else NULL. */
json_t *as_aggregated(
    struct as_server *srv, const char *group, const char *version);
/* The APIGroup document of an aggregated group [owned], or NULL. */
json_t *as_aggregated_group(struct as_server *srv, const char *group);
/* Append the aggregated groups missing from groups (an APIGroupList's
 * array, entries without kind/apiVersion). */
void as_aggregated_groups(struct as_server *srv, json_t *groups);
/* Defaults (service port 443) and kube-aggregator's validation of an
 * APIService obj [borrowed; changed]: false with a 422 in resp. */
bool as_apiservice_prepare(
    const struct as_kind *k, json_t *obj, struct as_resp *resp);
/* Proxy rq to the backend of apisvc [borrowed]; the answer in resp, or
 * resp->delay while the call is in flight (the handler runs again once it
 * is answered). */
void as_aggregator_proxy(
    const struct as_request *rq, json_t *apisvc, struct as_resp *resp);
/* Cancel the calls in flight and free the client (at shutdown). */
void as_aggregator_stop(struct as_server *srv);

/* ---- CRD conversion webhooks (convert.c) ----------------------------- */
struct as_resp;
/* true when k [borrowed] at `version` is not its storage version and its
 * CRD converts with a webhook. */
bool as_convert_needed(
    struct as_server *srv, const struct as_kind *k, const char *version);
/* obj [borrowed] in `version` through the webhook [owned], or NULL with
 * resp holding the 500. */
json_t *as_convert(struct as_server *srv, const struct as_kind *k, json_t *obj,
    const char *version, struct as_resp *resp);
/* A request body *obj [owned; replaced] in `version` to the storage
 * version when needed; false with resp holding the 500. */
bool as_convert_in(struct as_server *srv, const struct as_kind *k,
    const char *version, json_t **obj, struct as_resp *resp);
/* A handler's 2xx reply at the storage version (an object of k, or a
 * list of them) converted to `version` in place, when needed. */
void as_convert_reply(struct as_server *srv, const struct as_kind *k,
    const char *version, struct as_resp *resp);
/* The JSON text of obj [borrowed] for w (w->convert_to set) [owned:
 * cu_free]; NULL after queueing an ERROR event that ends the stream. */
char *as_convert_event(
    struct as_watch *w, json_t *obj, uint64_t rv_override, size_t *len);

/* Deliver one change to every watcher of k (invariant 5). */
void as_watch_dispatch(
    struct as_server *srv, struct as_kind *k, const struct as_event *ev);
/* Deliver one change to one watcher (history replay). */
void as_watch_deliver(struct as_watch *w, const struct as_event *ev);
/* Queue one event of `type` for obj [borrowed]; rv_override != 0 replaces
 * metadata.resourceVersion. */
void as_watch_queue(
    struct as_watch *w, const char *type, json_t *obj, uint64_t rv_override);
/* Queue an ERROR event carrying a Status [borrowed] and end the stream. */
void as_watch_error(struct as_watch *w, json_t *status);
/* Drop the serialisation cache (after replaying history). */
void as_watch_cache_clear(void);
/* Start the deadline/bookmark timers; link into the kind's list. */
void as_watch_attach(struct as_watch *w, double timeout_s);
void as_watch_free(struct as_watch *w);
/* Drop every open watch (fault injection / shutdown). */
void as_watch_drop_all(struct as_server *srv);
void as_watch_drop_kind(struct as_server *srv, struct as_kind *k);

/* ---- http glue (http.c) -------------------------------------------- */
struct as_req;
int as_http_start(struct as_server *srv, cu_error *err);
void as_http_stop(struct as_server *srv);
void as_http_wake(struct as_server *srv);
/* Re-run the handler of a request suspended on `conn` now (no-op when it
 * is not suspended). */
void as_http_resume(struct as_server *srv, struct MHD_Connection *conn);

/* A response under construction by a handler. */
struct as_resp {
	int code;
	json_t *body; /* owned; NULL with raw */
	char *raw;    /* owned; raw bytes (openapi, text) */
	size_t raw_len;
	const char *content_type; /* static */
	int retry_after;	  /* >= 0: Retry-After header */
	char *warning;		  /* owned; Warning header value */
	char etag[136];		  /* ETag header value when non-empty */
	struct as_watch *watch;	  /* a watch stream instead of a body */
	bool delay;		  /* handler asks to be called again later */
	int delay_ms;
};

/* Parsed request handed to the handlers. */
struct as_request {
	struct as_server *srv;
	const char *method;
	const char *path;
	struct MHD_Connection *conn;
	const char *body;
	size_t body_len;
	const char *user;
	int attempt; /* how many times the handler has been called */
	int64_t first_ns;
	/* Without a connection (in-process tests and fuzzing) query
	 * parameters and headers come from these objects [borrowed]. */
	json_t *params;
	json_t *headers;
	/* Admission state kept across re-runs of the handler for this
	 * request (http.c owns the slot); NULL without a connection, and
	 * then no webhook is called. */
	struct as_admit **admit;
	/* body holds JSON decoded from a protobuf body (proto.c): the
	 * Content-Type header reads as application/json. */
	bool proto_json;
};

const char *as_query(const struct as_request *rq, const char *name);
bool as_query_bool(const struct as_request *rq, const char *name);
const char *as_header(const struct as_request *rq, const char *name);

/* ---- protobuf bodies (proto.c) ------------------------------------- */
#define AS_PROTOBUF "application/vnd.kubernetes.protobuf"

/* true when k [borrowed] has a protobuf message (kube.proto). */
bool as_proto_kind(const struct as_kind *k);
/* true when content_type [borrowed, may be NULL] is AS_PROTOBUF. */
bool as_proto_is_protobuf(const char *content_type);
/* The envelope's typeMeta: *api_version and *kind [owned: cu_free] ("" when
 * absent); CU_EPARSE (one-line message in err) when buf is not one. */
int as_proto_peek(const void *buf, size_t len, char **api_version, char **kind,
    cu_error *err);
/* A protobuf body (magic, envelope, message) as the JSON object a JSON
 * client would send [owned], or NULL with err set (CU_EPARSE, CU_EINVAL for
 * a kind without a message, CU_ENOMEM). */
json_t *as_proto_decode(const void *buf, size_t len, cu_error *err);
/* obj [borrowed] (an object or list of a kind with a message, or a
 * Status) as a protobuf body [owned: cu_free] of *len bytes; NULL when no
 * message covers it or on allocation failure. */
char *as_proto_encode(json_t *obj, size_t *len);

enum as_accept { AS_ACCEPT_JSON, AS_ACCEPT_PROTOBUF, AS_ACCEPT_NONE };
/* What to answer for the Accept header [borrowed, may be NULL], as
 * kube-apiserver negotiates: the first entry served wins; entries with
 * "as=" (Tables) are left to the handlers; protobuf counts only when
 * can_protobuf. NONE: only protobuf was asked for and cannot be given. */
enum as_accept as_proto_accept(const char *accept, bool can_protobuf);
/* Before a handler: a protobuf POST/PUT/DELETE body of a kind with a
 * message becomes JSON in *json_out [owned: cu_free; NULL when the body
 * stays as it is]; false after answering 400 in resp. */
bool as_proto_request(
    struct as_request *rq, struct as_resp *resp, char **json_out);
/* After a handler: a JSON body re-encoded as protobuf when Accept asks
 * for it first, or 406 when only protobuf is acceptable and the body has
 * no message. */
void as_proto_reply(const struct as_request *rq, struct as_resp *resp);

/* ---- review APIs (authz.c) ------------------------------------------ */
/* POST /apis/authentication.k8s.io/v1/tokenreviews and
 * /apis/authorization.k8s.io/v1/subjectaccessreviews (seg[0..n) the
 * path's segments): true when the path is one of them (resp filled). */
bool as_authz_route(
    const struct as_request *rq, char seg[][256], int n, struct as_resp *resp);

/* ---- service references (webhooks.c) ------------------------------- */
struct curl_slist;
/* A service reference svc [borrowed] ({name, namespace, port}) dialled
 * as this server dials every service: *url is
 * "https://<name>.<namespace>.svc:<port><path><query>", *addr the
 * loopback address at that port and *resolve the curl entry mapping the
 * name onto it [each owned: cu_free, curl_slist_free_all; set even on
 * failure]. false when any could not be made. */
bool as_service_target(json_t *svc, const char *path, const char *query,
    char **url, char **addr, struct curl_slist **resolve);

/* ---- handlers (handlers.c) ----------------------------------------- */
void as_handle(struct as_request *rq, struct as_resp *resp);
/* Internal writes used by simulators (no HTTP, no admission). */
int as_internal_update(struct as_server *srv, struct as_kind *k, json_t *obj,
    bool status, const char *user);
int as_internal_create(
    struct as_server *srv, struct as_kind *k, json_t *obj, const char *user);
int as_internal_delete(struct as_server *srv, struct as_kind *k, const char *ns,
    const char *name, const char *user);
void as_count_write(struct as_server *srv, const char *user);

/* ---- the /scale subresource (scale.c) ------------------------------- */
/* The autoscaling/v1 Scale of obj [borrowed] of kind k [owned]. */
json_t *as_scale_get(const struct as_kind *k, json_t *obj);
/* The replicas a PUT (a Scale) or PATCH (of scale [borrowed]) of rq asks
 * for; an error code with the answer in resp otherwise. */
int as_scale_wanted(const struct as_request *rq, json_t *scale,
    json_int_t *replicas, struct as_resp *resp);
/* A copy of obj [borrowed] with its spec replicas set [owned]. */
json_t *as_scale_set(const struct as_kind *k, json_t *obj, json_int_t replicas);

/* ---- status bodies (status.c) -------------------------------------- */
json_t *as_status(int code, const char *reason, const char *message);
void as_resp_error(struct as_resp *resp, int code, const char *reason,
    const char *fmt, ...) CU_PRINTF(4, 5);
void as_resp_status(struct as_resp *resp, int code, json_t *status);
void as_resp_not_found(
    struct as_resp *resp, const struct as_kind *k, const char *name);
/* 422 Invalid with one cause. */
void as_resp_invalid(struct as_resp *resp, const struct as_kind *k,
    const char *name, const char *field, const char *fmt, ...) CU_PRINTF(5, 6);
/* Add one more cause to a 422 built by as_resp_invalid. */
void as_resp_invalid_add(struct as_resp *resp, const char *field,
    const char *fmt, ...) CU_PRINTF(3, 4);
/* "configmaps" or "widgets.example.com" as used in messages. */
char *as_qualified_resource(const struct as_kind *k);

/* Append a `299 - "text"` warn-value to resp->warning. */
void as_resp_warn(struct as_resp *resp, const char *text);

/* ---- server-side apply (apply.c) ---------------------------------- */

/* Where list and map semantics come from: a custom resource's structural
 * schema, or (schema NULL) the built-in merge keys of the core kinds. */
struct as_apply_type {
	const json_t *schema; /* [borrowed] or NULL */
	const char *kind;     /* [borrowed] e.g. "Service" */
};

/* Who writes, as recorded in metadata.managedFields. */
struct as_manager {
	const char *manager;	 /* [borrowed] */
	const char *api_version; /* [borrowed] apiVersion of the request */
	const char *time;	 /* [borrowed] RFC 3339 */
	bool force;		 /* apply: take over conflicting fields */
	const char *subresource; /* [borrowed] "status" or NULL (the object) */
};

/* Field sets (normalised FieldsV1 trees, every member has a "." child).
 * Every function returns a new reference [owned], NULL only on ENOMEM.
 * as_fields_of: the fields obj [borrowed] sets (NULL when an item of an
 * associative list lacks a key); as_fields_paths: the members as kube
 * prints them (".spec.containers[name=\"c\"].image"). */
json_t *as_fields_of(const struct as_apply_type *t, const json_t *obj);
json_t *as_fields_union(const json_t *a, const json_t *b);
json_t *as_fields_diff(const json_t *a, const json_t *b);
json_t *as_fields_intersect(const json_t *a, const json_t *b);
json_t *as_fields_paths(const json_t *set);
/* Wire FieldsV1 <-> normalised set. decode: CU_EPARSE for anything that
 * is not FieldsV1 (*set NULL then); *set [owned]. */
int as_fields_decode(const json_t *fields, json_t **set, cu_error *err);
json_t *as_fields_encode(const json_t *set);
/* The structured merge of cfg into live (both [borrowed]) [owned]. */
json_t *as_apply_merge(
    const struct as_apply_type *t, const json_t *live, const json_t *cfg);
/* Server-side apply of cfg onto live (NULL: the object is created).
 * CU_OK: *out is the new object with its managedFields [owned].
 * CU_ECONFLICT: *conflict is the 409 Status [owned]. CU_EINVAL/CU_EPARSE:
 * the configuration is unusable (err says why). */
int as_apply(const struct as_apply_type *t, const json_t *live,
    const json_t *cfg, const struct as_manager *m, json_t **out,
    json_t **conflict, cu_error *err);
/* Record an Update by m: obj's managedFields [modified] become old's
 * (both objects) with the fields that changed moved to m; a status
 * subresource write (m->subresource "status") owns fields of status. */
int as_apply_track_update(const struct as_apply_type *t, const json_t *old,
    json_t *obj, const struct as_manager *m);

/* ---- durations (duration.c) ---------------------------------------- */

#define AS_DURATION_LEN 32
/* d as kube words ages in Tables ("45s", "3m20s", "6d3h"); "0s" for up
 * to a second in the future, "<invalid>" beyond. */
void as_human_duration(cu_ns_t d, char out[AS_DURATION_LEN]);
/* The Table cell of a `type: date` column: the age at `now` of the
 * RFC 3339 string v [borrowed], null for no value, "<invalid>" for a
 * string that is no time. Returns a new reference. */
json_t *as_age_cell(cu_ns_t now, json_t *v);

/* ---- OpenAPI (openapi.c) ------------------------------------------ */

/* The /openapi/v2 document (protobuf) for the kinds served now: a PATCH
 * path per kind and version. Returns it [owned: cu_free] with its length
 * in *len, or NULL on allocation failure. */
char *as_openapi_v2(struct as_server *srv, size_t *len);

/* OpenAPI v3 (openapi3.c), custom resource groups only. The discovery
 * document (GET /openapi/v3) [owned: json_decref]. */
json_t *as_openapi3_root(struct as_server *srv);
/* The document of one group and version, or NULL when no custom kind is
 * served there [owned: json_decref]. */
json_t *as_openapi3_gv(
    struct as_server *srv, const char *group, const char *version);
/* The same serialised as served (compact, sorted keys) with its length,
 * or NULL [owned: cu_free]. */
char *as_openapi3_gv_text(
    struct as_server *srv, const char *group, const char *version, size_t *len);
/* Upper-case hex SHA-512 of data: the hash and ETag of a document
 * [owned: cu_free]. */
char *as_openapi3_hash(const char *data, size_t len);
/* Pure: the components.schemas entry of a kind built from the CRD's
 * openAPIV3Schema crd_schema [borrowed, copied] as kube-apiserver does
 * (apiVersion, kind, metadata -> ObjectMeta, GVK extension)
 * [owned: json_decref]. */
json_t *as_openapi3_kind_schema(const char *group, const char *version,
    const char *kind, json_t *crd_schema);
/* "io.x-k8s.kueue.v1beta1.ClusterQueue" for a kind [owned: cu_free]. */
char *as_openapi3_schema_name(
    const char *group, const char *version, const char *kind);

/* ---- admission webhooks (webhooks.c) -------------------------------- */
/* What is being admitted (admission.Attributes). All [borrowed]. */
struct as_admit_attrs {
	const struct as_kind *kind; /* storage kind */
	const char *version;	    /* the version the client used */
	const char *subresource;    /* "" for the main resource */
	const char *operation;	    /* "CREATE", "UPDATE" or "DELETE" */
	const char *ns;		    /* "" for cluster-scoped objects; a
				     * Namespace's own name on its path */
	const char *name;	    /* "" on CREATE with generateName */
	json_t *object;		    /* NULL for DELETE */
	json_t *old;		    /* NULL for CREATE */
	json_t *options;	    /* Create/Update/DeleteOptions */
	bool dry_run;
};
/* Run the matching mutating webhooks on *obj [owned; replaced by the
 * patched object; NULL for DELETE]. true: go on. false: stop, resp holds
 * the error or asks to be re-run later (resp->delay). */
bool as_admit_mutate(const struct as_request *rq,
    const struct as_admit_attrs *at, json_t **obj, struct as_resp *resp);
/* Run the matching validating webhooks on at->object; as above. */
bool as_admit_validate(const struct as_request *rq,
    const struct as_admit_attrs *at, struct as_resp *resp);
/* Would any mutating webhook be called for this request? */
bool as_admit_mutating_matches(
    const struct as_request *rq, const struct as_admit_attrs *at);
/* The value pinned for `slot` in this request (fresh on first use, the
 * same on every re-run) [borrowed]; fresh itself without admission
 * state. */
const char *as_admit_memo(
    const struct as_request *rq, const char *slot, const char *fresh);
/* Pin the clock to the request's first run while its handler runs. */
void as_admit_begin(const struct as_request *rq);
void as_admit_end(void);
void as_admit_free(struct as_admit *a); /* NULL is a no-op */
/* Cancel calls in flight and free the client; later calls fail. */
void as_webhooks_stop(struct as_server *srv);

/* ---- libcurl multi on the server's loop (curlev.c) --------------------- */

/* One multi handle driven by loop: transfers added to `multi` run
 * without blocking the server; each finished one is handed to done(e,
 * rc, ctx) (the easy handle is still in the multi handle: done removes
 * it). Embedded by its owner; must not move once initialised. */
struct as_curlev {
	struct ev_loop *loop; /* [borrowed] */
	CURLM *multi;	      /* [owned] */
	ev_timer timer;
	int running;
	void (*done)(CURL *e, CURLcode rc, void *ctx);
	void *ctx; /* [borrowed] */
};

/* CU_OK, or CU_ENOMEM (no multi handle). */
CU_MUST_CHECK int as_curlev_init(struct as_curlev *c, struct ev_loop *loop,
    void (*done)(CURL *e, CURLcode rc, void *ctx), void *ctx);
/* Clean the multi handle up (its transfers must be removed first). */
void as_curlev_dispose(struct as_curlev *c);
/* Default and validate a Mutating/ValidatingWebhookConfiguration (v1
 * rules); false with a 422 in resp. */
bool as_webhook_config_prepare(
    const struct as_kind *k, json_t *obj, struct as_resp *resp);

/* ---- test endpoints (testapi.c) ------------------------------------ */
void as_testapi_handle(struct as_request *rq, struct as_resp *resp);
/* A fault to inject for this request, or NULL. */
const struct as_fault *as_fault_match(
    struct as_server *srv, const char *method, const char *path);
void as_access_log(struct as_server *srv, const struct as_request *rq,
    const char *query, int code);

/* ---- in-process fixture for unit tests (fixture.c) ------------------ */
struct as_tls_material;
/* Serve on 127.0.0.1:<free port> from `loop` [borrowed], test endpoints
 * on, `token` [borrowed; copied] for user admin, namespace default. With
 * tls non-NULL, generate TLS material into it (the caller disposes it
 * after as_fixture_stop). srv->port is the port. On failure everything
 * is released. */
CU_MUST_CHECK int as_fixture_start(struct as_server *srv, struct ev_loop *loop,
    const char *token, struct as_tls_material *tls, cu_error *err);
void as_fixture_stop(struct as_server *srv);

/* ---- simulators (sim.c) -------------------------------------------- */
void as_sim_start(struct as_server *srv);
/* Called after every stored change so simulators react at once. */
void as_sim_notify(
    struct as_server *srv, struct as_kind *k, json_t *obj, json_t *old);
/* What the API server adds to a Job it creates while the Job simulator
 * runs (the Job strategy's generateSelector): the controller-uid and
 * job-name labels on the pod template and spec.selector, unless
 * spec.manualSelector or a selector is given. job [borrowed, modified]. */
void as_sim_job_selector(struct as_server *srv, json_t *job);
/* kube-apiserver's Priority admission for a pod spec [borrowed,
 * modified]: spec.priority (and preemptionPolicy) from the PriorityClass
 * named in priorityClassName, or the globalDefault class, else 0. */
void as_sim_resolve_priority(struct as_server *srv, json_t *spec);

/* ---- cluster-autoscaler's ProvisioningRequests (provsim.c) ---------- */
void as_provsim_start(struct as_server *srv);
void as_provsim_stop(void);
/* A stored change of kind k, object ref [borrowed] (from as_sim_notify). */
void as_provsim_notify(struct as_server *srv, struct as_kind *k, json_t *ref);
/* One step: requests accepted, provisioned, failed, revoked. */
void as_provsim_tick(struct as_server *srv);

/* ---- Table columns of built-in kinds (tables.c) ---------------------- */
/* Column definitions for `kubectl get` of pods, nodes, jobs and
 * namespaces [owned], or NULL for other kinds (then the default table). */
json_t *as_table_columns(const struct as_kind *k);
/* The row cells of obj [borrowed] in those columns [owned], or NULL. */
json_t *as_table_cells(const struct as_kind *k, json_t *obj);

/* ---- scheduler and kubelet stand-ins (sched.c) ---------------------- */
void as_sched_start(struct as_server *srv);
void as_sched_stop(struct as_server *srv);
/* --simulate scheduler is on and at least one Node exists. */
bool as_sched_active(struct as_server *srv);
/* Keep node usage and the pending set current (from as_sim_notify). */
void as_sched_notify(
    struct as_server *srv, struct as_kind *k, json_t *obj, json_t *old);
/* One step: a scheduling pass if anything changed, then the kubelet. */
void as_sched_tick(struct as_server *srv);
/* GET pods/{name}/log: what the kubelet stand-in answers for pod
 * [borrowed]: a line naming container, pod and node, or the kubelet's
 * 400 for a container still waiting. */
void as_sched_pod_log(struct as_resp *resp, json_t *pod, const char *container);
/* A pass is due (something changed since the last one). */
bool as_sched_busy(struct as_server *srv);

/* Start pod [borrowed] as the kubelet stand-in does: Running with Ready
 * and ContainersReady True, or (ready false) Pending in
 * ContainerCreating. */
void as_sched_run_pod(struct as_server *srv, json_t *pod, bool ready);

/* ---- framework stand-ins (fwkit.c and the *sim.c families) ---------- */
/* --simulate names beyond jobs, jobsets, scheduler and provisioning. */
enum {
	AS_SIM_PODS = 1u << 0,	       /* podsim.c */
	AS_SIM_DEPLOYMENTS = 1u << 1,  /* appsim.c */
	AS_SIM_STATEFULSETS = 1u << 2, /* appsim.c */
	AS_SIM_LWS = 1u << 3,	       /* lwssim.c */
	AS_SIM_KUBEFLOW = 1u << 4,     /* trainsim.c */
	AS_SIM_MPIJOBS = 1u << 5,      /* trainsim.c */
	AS_SIM_TRAINJOBS = 1u << 6,    /* trainsim.c */
	AS_SIM_RAY = 1u << 7,	       /* raysim.c */
	AS_SIM_APPWRAPPERS = 1u << 8,  /* wrapsim.c */
	AS_SIM_SPARK = 1u << 9,	       /* wrapsim.c */
};

/* Parse a --simulate list into srv's flags; false with a one-line
 * message in err naming the unknown entry. list [borrowed]. */
bool as_sim_parse(struct as_server *srv, const char *list, cu_error *err);

/* One simulated controller: what it reconciles, who it writes as, and
 * its step for one object (which may be gone: garbage-collect then). */
struct as_fw_ctl {
	const char *group, *version, *plural, *kind; /* [static] */
	unsigned sim;	  /* the AS_SIM_* bit that enables it */
	const char *user; /* [static] the controller's service account */
	void (*reconcile)(struct as_server *srv, const struct as_fw_ctl *c,
	    const char *ns, const char *name);
};

void as_fw_start(struct as_server *srv);
void as_fw_stop(struct as_server *srv);
/* A stored change (from as_sim_notify): marks the object, its
 * controller owner and the pod stand-in dirty. */
void as_fw_notify(
    struct as_server *srv, struct as_kind *k, json_t *obj, json_t *old);
/* Run the dirty and due objects; true when anything ran. */
bool as_fw_tick(struct as_server *srv);
/* Reconcile (ns, name) of c on the next tick / at at_ms. */
void as_fw_mark(const struct as_fw_ctl *c, const char *ns, const char *name);
void as_fw_wake(
    const struct as_fw_ctl *c, const char *ns, const char *name, int64_t at_ms);
int64_t as_fw_now_ms(void);
struct as_kind *as_fw_kind(struct as_server *srv, const struct as_fw_ctl *c);
/* Install CRDs [borrowed array] unless they exist. */
void as_fw_install_crds(struct as_server *srv, json_t *crds);
/* Objects of kind k in owner's namespace whose controller reference is
 * owner [borrowed], each increfed, in name order [owned array]; for
 * Pods, followed by the Pods those Pods control (a Spark driver's
 * executors). */
json_t *as_fw_owned(struct as_kind *k, json_t *owner);
/* Create obj [consumed] through this server's own HTTP front door as c's
 * user, so that admission webhooks see it as they see a controller's
 * writes; owner [borrowed] is reconciled again when the answer comes. */
void as_fw_create(struct as_server *srv, const struct as_fw_ctl *c,
    struct as_kind *k, json_t *obj, json_t *owner);
/* A create for owner [borrowed] is still waiting for its answer. */
bool as_fw_pending(json_t *owner);
/* Delete obj [borrowed] of kind k as kube's API would for a controller's
 * DELETE: with finalizers it only gets its deletionTimestamp. */
void as_fw_delete(
    struct as_server *srv, struct as_kind *k, json_t *obj, const char *user);
/* Stop pod [borrowed]: phase Succeeded (ok) or Failed, its containers
 * terminated (Completed / Error), Ready False. */
void as_fw_stop_pod(
    struct as_server *srv, json_t *pod, bool ok, const char *user);
/* A Pod for owner [borrowed] of (api_version, kind) from template tmpl
 * [borrowed] named name, with a controller reference [owned]. */
json_t *as_fw_pod(json_t *owner, const char *api_version, const char *kind,
    json_t *tmpl, const char *name);
/* [{apiVersion, kind, name, uid, controller, blockOwnerDeletion}] naming
 * owner [borrowed] [owned]. */
json_t *as_fw_controller_ref(
    json_t *owner, const char *api_version, const char *kind);
/* dst_parent[key] (an object, made if missing) updated from src, new
 * values winning; unioned as a set of JSON values for lists. src
 * [borrowed]; nothing happens when src has another type. */
void as_fw_merge_map(json_t *dst_parent, const char *key, json_t *src);
void as_fw_union_list(json_t *dst_parent, const char *key, json_t *src);
/* Pod template src's labels, annotations and nodeSelector merged into
 * pod template pt [modified], its tolerations and schedulingGates unioned
 * (JobSet's resume merge; Trainer's runtime patches). */
void as_fw_merge_template(json_t *pt, json_t *src);
/* Lower-case hex SHA-1 of s. */
void as_fw_sha1_hex(const char *s, char out[41]);
/* Set condition type on obj [borrowed, modified]; lastTransitionTime
 * kept while the status is unchanged; with_update also sets
 * lastUpdateTime (the Kubeflow and apps styles). */
void as_fw_cond(json_t *obj, const char *type, const char *status,
    const char *reason, const char *message, bool with_update);
bool as_fw_cond_true(json_t *obj, const char *type);
/* obj's status condition of type [borrowed], or NULL; _slot adds an empty
 * one ({type}) when there is none. */
json_t *as_fw_cond_get(json_t *obj, const char *type);
json_t *as_fw_cond_slot(json_t *obj, const char *type);
/* An annotation of obj [borrowed] (keys have dots), or NULL. */
const char *as_fw_ann(json_t *obj, const char *key);
/* cueue.dev/sim-runtime-ms of obj, else of tmpl (a pod template), else
 * dflt; cueue.dev/sim-fail: "true" likewise. */
long long as_fw_runtime(json_t *obj, json_t *tmpl, long long dflt);
bool as_fw_fails(json_t *obj, json_t *tmpl);
json_int_t as_fw_int(json_t *obj, const char *path, json_int_t dflt);
/* spec.managedBy-style field at path is unset or names `mine`. */
bool as_fw_managed_here(json_t *obj, const char *path, const char *mine);
/* Not terminal and not being deleted. */
bool as_fw_pod_live(json_t *pod);
bool as_fw_pod_ready(json_t *pod);
/* Split "ns/name" key into buffers; false when malformed. */
bool as_fw_split(const char *key, char *ns, size_t nsz, char *name, size_t nmz);

/* The role engine (rolesim.c): one Pod per replica of each role. */
#define AS_FW_MAX_ROLES 8
#define AS_FW_MAX_PODS 256 /* per role */
struct as_fw_role {
	char name[64];	     /* as the kind names it ("Worker", "head") */
	json_int_t replicas; /* Pods wanted */
	json_t *tmpl;	     /* [borrowed] the pod template */
};
struct as_fw_tally {
	json_int_t want, live, ready, succeeded, failed;
	json_int_t active[AS_FW_MAX_ROLES], ready_r[AS_FW_MAX_ROLES];
};
struct as_fw_podjob {
	const char *api_version, *kind; /* [static] of the owner */
	bool finishes; /* false: runs until suspended or deleted */
	/* The name of replica idx of role r. */
	void (*pod_name)(json_t *obj, const struct as_fw_role *r, int idx,
	    char *buf, size_t n);
	/* Labels and annotations the controller adds to pod [modified]. */
	void (*decorate)(
	    json_t *obj, const struct as_fw_role *r, int idx, json_t *pod);
	/* May role r's Pods be created yet (t: what exists)? NULL: yes. */
	bool (*before)(json_t *obj, int r, const struct as_fw_tally *t);
};
enum as_fw_run {
	AS_FW_IDLE,	 /* suspended: Pods deleted */
	AS_FW_STARTING,	 /* Pods missing or not all Ready */
	AS_FW_RUNNING,	 /* every Pod Ready */
	AS_FW_SUCCEEDED, /* the runtime elapsed: Pods stopped */
	AS_FW_FAILED
};
/* One step for obj [borrowed] of c; t [out] counts its Pods. */
enum as_fw_run as_fw_run_pods(struct as_server *srv, const struct as_fw_ctl *c,
    const struct as_fw_podjob *d, json_t *obj, const struct as_fw_role *roles,
    int nroles, bool suspended, struct as_fw_tally *t);
/* Forget the runtime of a deleted object. */
void as_fw_forget(
    const struct as_fw_podjob *d, const char *ns, const char *name);
/* Stop every live Pod obj [borrowed] controls. */
void as_fw_stop_all(
    struct as_server *srv, json_t *obj, bool ok, const char *user);
/* Delete every object of kind k that obj [borrowed] controls. */
void as_fw_delete_all(
    struct as_server *srv, struct as_kind *k, json_t *obj, const char *user);
void as_fw_roles_free(void);
void as_raysim_free(void);

/* The pod stand-in (podsim.c). */
void as_podsim_notify(struct as_server *srv, json_t *obj, json_t *old);
bool as_podsim_tick(struct as_server *srv);
void as_podsim_start(struct as_server *srv);
void as_podsim_stop(void);

/* The families' controllers (appsim.c, lwssim.c, trainsim.c, raysim.c,
 * wrapsim.c) and their CRDs (fwcrds.c). */
extern const struct as_fw_ctl as_fw_deployments, as_fw_replicasets,
    as_fw_statefulsets, as_fw_lws, as_fw_pytorchjobs, as_fw_tfjobs,
    as_fw_xgboostjobs, as_fw_paddlejobs, as_fw_jaxjobs, as_fw_mpijobs,
    as_fw_trainjobs, as_fw_rayclusters, as_fw_rayjobs, as_fw_rayservices,
    as_fw_appwrappers, as_fw_sparkapps;
/* The CRDs the AS_SIM_* families in sim install [owned array], or NULL
 * with err set. */
json_t *as_fw_crds(unsigned sim, cu_error *err);

/* ---- utilities (util.c) ------------------------------------------- */
const char *as_jstr(json_t *obj, const char *path);	   /* dotted path */
json_t *as_jget(json_t *obj, const char *path);		   /* borrowed */
int as_jset(json_t *obj, const char *path, json_t *value); /* steals */
char *as_uuid(struct as_server *srv);			   /* owned */
uint64_t as_rand(struct as_server *srv);
void as_now_rfc3339(char out[CU_TIME_RFC3339_LEN]);
/* Make as_now_rfc3339 answer `ns` (0: the real clock again). */
void as_clock_pin(int64_t ns);
bool as_valid_dns_subdomain(const char *s);
bool as_valid_dns_label(const char *s);
/* The name rule of kind k for obj's name (names.c): 1 valid by the kind's
 * own rule, 0 invalid (a 422 in resp), -1 the generic DNS-1123 rule
 * applies. */
int as_kind_name_rule(const struct as_kind *k, json_t *obj, const char *name,
    struct as_resp *resp);
/* kube's validation of the requests and limits in a built-in kind's pod
 * spec (podres.c): false with a 422 in resp when one is negative. */
bool as_pod_resources_ok(const struct as_kind *k, json_t *obj, const char *name,
    struct as_resp *resp);
char *as_json_dump(json_t *j, size_t *len); /* compact [owned: cu_free] */

#endif /* CU_TESTS_APISERVER_H */
