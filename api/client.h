/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/client.h - the Kubernetes API client of cueue-controller: asynchronous
 * HTTP requests on the process's libev loop through a libcurl multi handle,
 * with bearer-token or client-certificate auth (token file re-read every
 * minute and on 401), a qps/burst token bucket, at most max_connections
 * requests with the server at once, bounded retries of 429/5xx
 * (Retry-After honoured) and of GET transport failures, a timeout on every
 * attempt, a write gate (leader election), cancellation, per-verb/per-code
 * counters, and newline-delimited streaming for watches (used by
 * api/informer.h).
 *
 * Configuration comes from a kubeconfig file or the in-cluster service
 * account (api_client_opts_from_kubeconfig, api_client_opts_in_cluster).
 *
 * Everything here is event-loop thread only. Prefix: api_client_, api_req_,
 * api_request.
 */
#ifndef CU_API_CLIENT_H
#define CU_API_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ev.h>
#include <jansson.h>

#include "lib/cu.h"

/* Default service-account directory of a pod. */
#define API_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

/*
 * Client options. Strings are [borrowed] by api_client_new (it copies what
 * it keeps). When filled by a loader below, every non-NULL string is
 * [owned] by the struct: release them with api_client_opts_dispose. When
 * filled by hand, never call api_client_opts_dispose on it.
 * Zero values take the defaults given per field.
 */
#define API_DEFAULT_MAX_CONNECTIONS 64

struct api_client_opts {
	const char *server;	      /* "https://host:port" (required) */
	const char *ca_file;	      /* PEM bundle path, or NULL */
	const char *ca_pem;	      /* PEM bundle bytes, or NULL */
	bool insecure;		      /* skip TLS verification (tests only) */
	const char *token;	      /* bearer token, or NULL */
	const char *token_file;	      /* re-read every token_reload_ms and
				       * on 401; trailing whitespace trimmed */
	const char *client_cert_file; /* PEM client certificate, or NULL */
	const char *client_key_file;  /* PEM client key, or NULL */
	const char *client_cert_pem;  /* same, as bytes */
	const char *client_key_pem;
	const char *user_agent;	    /* default "cueue-controller/VERSION" */
	const char *namespace_name; /* loaders: the context's / pod's
				     * namespace; informational only */
	double qps;		    /* <= 0: unlimited */
	int burst;		    /* default max(1, (int)qps) */
	int request_timeout_ms;	    /* default 30000; per attempt */
	int connect_timeout_ms;	    /* default 10000 */
	int max_attempts;	    /* tries per request, default 5 */
	int retry_base_ms;	    /* first backoff, default 200 */
	int retry_max_ms;	    /* backoff cap, default 10000 */
	int retry_after_max_ms;	    /* Retry-After cap, default 30000 */
	int token_reload_ms;	    /* default 60000 */
	int max_connections;	    /* requests with the server at once
				     * (watches apart), default
				     * API_DEFAULT_MAX_CONNECTIONS; more wait
				     * in the client's queue, where no timeout
				     * runs: a burst must not become a
				     * connection storm */
	bool lean_bodies;	    /* parse 2xx bodies without their
				     * metadata.managedFields
				     * (api_json_loadb_lean): for callers
				     * that never read them */
};

/*
 * Fill *out from a kubeconfig file (current-context -> cluster server,
 * certificate-authority(-data), insecure-skip-tls-verify; user token,
 * tokenFile, client-certificate(-data), client-key(-data); the context's
 * namespace). Relative file paths are resolved against the kubeconfig's
 * directory. *out is zeroed first; on success its strings are [owned]
 * (api_client_opts_dispose); on failure nothing is left to free.
 * Errors: CU_ENOTFOUND/CU_EIO (file), CU_EPARSE (YAML, base64),
 * CU_EINVAL (missing current-context, cluster, user or server; a
 * certificate authority together with insecure-skip-tls-verify, as
 * kubectl; a user with exec or auth-provider, which cueue cannot run).
 * path [borrowed].
 */
CU_MUST_CHECK int api_client_opts_from_kubeconfig(
    struct api_client_opts *out, const char *path, cu_error *err);
/* The same with context [borrowed; NULL or "" = current-context] in
 * place of current-context, as kubectl's --context. */
CU_MUST_CHECK int api_client_opts_from_kubeconfig_context(
    struct api_client_opts *out, const char *path, const char *context,
    cu_error *err);

/*
 * Fill *out for the in-cluster service account: server from
 * KUBERNETES_SERVICE_HOST/PORT (https, IPv6 bracketed), token_file and
 * ca_file under dir (NULL = API_SA_DIR), namespace_name from POD_NAMESPACE,
 * else the namespace file (trimmed), else "default". The token file must
 * exist and be non-empty. Ownership as for the kubeconfig loader.
 * Errors: CU_EINVAL (environment), CU_ENOTFOUND/CU_EIO (files).
 */
CU_MUST_CHECK int api_client_opts_in_cluster(
    struct api_client_opts *out, const char *dir, cu_error *err);

/* One line about a failed configuration attempt [borrowed]. */
typedef void (*api_client_note_fn)(const char *line, void *payload);

/*
 * Find the API server as controller-runtime's config.GetConfig does:
 *   1. kubeconfig [borrowed; NULL or "" = not given] (the --kubeconfig
 *      flag): that file, no fallback;
 *   2. else $KUBECONFIG (':'-separated): its first existing file, no
 *      fallback (client-go merges the list; cueue reads one file);
 *   3. else the in-cluster service account (sa_dir as
 *      api_client_opts_in_cluster);
 *   4. else $HOME/.kube/config.
 * Each failed attempt that falls through or is skipped is reported as one
 * line "client config: <what>: <why>" through note (payload passed back;
 * NULL note = cu_warn), in order. *source, when source is non-NULL, gets
 * where the configuration came from ("KUBECONFIG /path", ...) [owned:
 * cu_free; NULL on failure]. Ownership and errors as the loaders; the
 * final error names every attempt.
 */
CU_MUST_CHECK int api_client_opts_resolve(struct api_client_opts *out,
    const char *kubeconfig, const char *sa_dir, api_client_note_fn note,
    void *payload, char **source, cu_error *err);

/* Free the strings of loader-filled opts and zero it; NULL is a no-op. */
void api_client_opts_dispose(struct api_client_opts *opts);

/* ---- the client ----------------------------------------------------- */

typedef struct api_client api_client;
typedef struct api_req api_req;

/*
 * Create a client on loop [borrowed; must outlive the client]. Reads the
 * token file and the CA/cert files at once (errors: CU_ENOTFOUND, CU_EIO,
 * CU_EINVAL for bad options, CU_ENOMEM). *out [owned: api_client_free].
 * Refused (CU_EINVAL, the message naming the field): a token or token
 * file with an http:// server other than a loopback address literal
 * (127.0.0.0/8, [::1]), and insecure together with a CA.
 */
CU_MUST_CHECK int api_client_new(api_client **out, struct ev_loop *loop,
    const struct api_client_opts *opts, cu_error *err);

/*
 * Cancel every request (each callback runs once, with resp->canceled and
 * err CU_EAGAIN), stop every watcher and free the client. Not from inside
 * one of its own callbacks. Informers must be freed first. NULL is a
 * no-op. c [consumed].
 */
void api_client_free(api_client *c);

/*
 * Why the API server is not answering: the last transport failure in words
 * ("Failed to connect to 10.0.0.1 port 443: Connection refused"), or NULL
 * once any HTTP answer came back (or c is NULL) [borrowed; valid until the
 * next request completes]. While it fails, the client logs one line per
 * back-off step (1 s doubling to 60 s) naming the server and this cause,
 * and one line when the server answers again.
 */
const char *api_client_unreachable(const api_client *c);

/* The loop the client runs on [borrowed]. */
struct ev_loop *api_client_loop(const api_client *c);

/* Re-read the token file now (also done by the timer and on 401).
 * Returns CU_OK when the token is unchanged or was replaced. */
int api_client_reload_token(api_client *c, cu_error *err);

/* A completed request. Valid only during the callback: every pointer is
 * [borrowed]; json_incref(body) to keep the body. */
struct api_response {
	int code;	     /* HTTP status of the last attempt; 0 if none */
	int err;	     /* CU_OK for 2xx, else the classification */
	bool canceled;	     /* api_request_cancel / api_client_free */
	json_t *body;	     /* parsed JSON body or NULL */
	const char *raw;     /* raw body bytes (NUL-terminated), never NULL */
	size_t raw_len;	     /* stream requests: the unconsumed tail */
	const char *reason;  /* Status reason ("NotFound"), or "" */
	const char *message; /* Status message / transport error, or "" */
	const char *method;  /* as requested */
	const char *path;    /* path and query, as requested */
	int attempts;	     /* attempts made (0 when canceled early) */
};

/*
 * Error classification (resp->err):
 *   2xx -> CU_OK; 400, 422 and other 4xx -> CU_EINVAL; 401, 403 ->
 *   CU_EDENIED; 404 -> CU_ENOTFOUND; 409 reason AlreadyExists ->
 *   CU_EEXIST, other 409 -> CU_ECONFLICT; 410 -> CU_EGONE; 413 ->
 *   CU_ETOOBIG; 405/406/415 -> CU_EUNSUPPORTED; 429 and 5xx (after the
 *   retries) -> CU_EIO; transport timeout -> CU_ETIMEOUT; other transport
 *   failures -> CU_EIO; a 2xx JSON response that does not parse ->
 *   CU_EPARSE; canceled -> CU_EAGAIN (with resp->canceled; kept for the
 *   callers that test it); a write withheld by the write gate ->
 *   CU_ECANCELED (see api_client_set_write_gate).
 */
typedef void (*api_response_cb)(const struct api_response *resp, void *payload);

/*
 * One complete line of a streamed 2xx body (without the '\n'). line
 * [borrowed; valid during the call]. Runs from the event loop, never from
 * inside libcurl, so it may call api_request and friends.
 */
typedef void (*api_line_cb)(const char *line, size_t len, void *payload);

/*
 * Send a request. method "GET"/"POST"/...; path_and_query starts with '/'
 * (already escaped, see api_escape); content_type may be NULL (then
 * "application/json" when body != NULL); body [borrowed; serialised at
 * once] may be NULL. If out != NULL, *out is a handle [borrowed; valid
 * until the callback starts] for api_request_cancel.
 * On CU_OK, cb runs exactly once, later, from the event loop (never
 * inside this call). On failure (CU_EINVAL, CU_ENOMEM) cb never runs.
 *
 * Every attempt waits for the rate limiter. Retries (bounded by
 * max_attempts): 429 and 5xx for every verb, after Retry-After (capped at
 * retry_after_max_ms) or else exponential backoff with jitter; transport
 * failures for GET, and for other verbs only when no connection could be
 * made; 401 once more when the token file now holds another token. Other
 * 4xx and timeouts (request_timeout_ms is per attempt) are never retried.
 */
CU_MUST_CHECK int api_request(api_req **out, api_client *c, const char *method,
    const char *path_and_query, const char *content_type, json_t *body,
    api_response_cb cb, void *payload, cu_error *err);

/*
 * A streaming GET (watch): each line of a 2xx body goes to line_cb as it
 * arrives (partial lines buffered, at most 16 MiB), then done_cb runs once
 * when the stream ends (resp->body NULL on 2xx). An error status
 * (410, 5xx ...) is not streamed: done_cb gets it parsed as usual.
 * timeout_ms bounds the whole stream (<= 0: the client's request
 * timeout). Retries as for GET only until the first byte arrives.
 */
CU_MUST_CHECK int api_stream(api_req **out, api_client *c,
    const char *path_and_query, int timeout_ms, api_line_cb line_cb,
    api_response_cb done_cb, void *payload, cu_error *err);

/*
 * Cancel a pending request: its callback runs before this returns, with
 * resp->canceled (err CU_EAGAIN). Called from the same request's line
 * callback, the completion callback runs right after the line callback
 * returns. r [borrowed; invalid afterwards]; NULL is a no-op.
 */
void api_request_cancel(api_req *r);

/* ---- the write gate ------------------------------------------------- */

/*
 * May this write go out now? method and path [borrowed; valid during the
 * call] are the request's, as given to api_request ("PUT",
 * "/apis/coordination.k8s.io/v1/namespaces/cueue-system/leases/cueue"),
 * so that a gate can let some writes through - the leader election's own
 * Lease, which goes through the same client. payload [borrowed] is the
 * pointer given to api_client_set_write_gate. Runs on the loop thread,
 * possibly inside api_request; must not block and must not call into the
 * client.
 */
typedef bool (*api_write_gate_fn)(
    const char *method, const char *path, void *payload);

/*
 * Install (fn non-NULL) or remove (fn NULL) the client's write gate,
 * replacing any earlier one. A write is any request whose method is not
 * GET or HEAD (a LIST and a WATCH are GETs; reads are never gated). fn is
 * asked right before each attempt of a write is handed to libcurl: the
 * first attempt once the rate limiter lets it go (so a write queued behind
 * the limiter while the gate closed is caught), and every retry (after its
 * backoff for 429/5xx or a connect failure, and the re-sent 401 after a
 * token change). While an attempt that fn let through waits for a limiter
 * token, fn is asked again each time the limiter looks at it.
 *
 * When fn returns false nothing is sent: the request completes - from the
 * event loop, never inside api_request - with resp->err CU_ECANCELED (not
 * retryable), resp->code 0, resp->canceled false, resp->attempts the
 * attempts made before, and resp->message API_WRITE_WITHHELD_MSG; it
 * takes no rate-limiter token, is not retried, and is counted in
 * api_client_stats' withheld. A write that libcurl already has when the
 * gate closes is not recalled (it may be on the wire); its retries are
 * gated. payload [borrowed; must outlive the gate]. Loop thread only.
 */
void api_client_set_write_gate(
    api_client *c, api_write_gate_fn fn, void *payload);

#define API_WRITE_WITHHELD_MSG "write withheld: not the leader"

/* ---- resources and convenience wrappers ----------------------------- */

/* A REST resource. Strings [borrowed; usually literals]. */
struct api_resource {
	const char *group;   /* "" for core */
	const char *version; /* "v1", "v1beta2" */
	const char *plural;  /* "jobs" */
	bool namespaced;
};

/*
 * "/api/v1/namespaces/NS/PLURAL/NAME/SUB" and friends [owned: cu_free];
 * ns, name, subresource may be NULL (ns ignored for cluster-scoped
 * resources, NULL = all namespaces). Names are escaped. NULL on ENOMEM.
 */
char *api_resource_path(const struct api_resource *res, const char *ns,
    const char *name, const char *subresource);

/* Percent-encode s for a query value [owned: cu_free]; NULL on ENOMEM. */
char *api_escape(const char *s);

/* GET one object. */
CU_MUST_CHECK int api_get(api_req **out, api_client *c,
    const struct api_resource *res, const char *ns, const char *name,
    api_response_cb cb, void *payload, cu_error *err);
/* POST obj [borrowed] to the collection of ns. */
CU_MUST_CHECK int api_create(api_req **out, api_client *c,
    const struct api_resource *res, const char *ns, json_t *obj,
    api_response_cb cb, void *payload, cu_error *err);
/* PUT obj [borrowed] (namespace and name from its metadata); with
 * status, to the /status subresource. */
CU_MUST_CHECK int api_update(api_req **out, api_client *c,
    const struct api_resource *res, json_t *obj, bool status,
    api_response_cb cb, void *payload, cu_error *err);
/* PATCH with a merge patch (object) or a JSON patch (array) [borrowed];
 * with status, to the /status subresource. */
CU_MUST_CHECK int api_merge_patch(api_req **out, api_client *c,
    const struct api_resource *res, const char *ns, const char *name,
    json_t *patch, bool status, api_response_cb cb, void *payload,
    cu_error *err);
CU_MUST_CHECK int api_json_patch(api_req **out, api_client *c,
    const struct api_resource *res, const char *ns, const char *name,
    json_t *patch, bool status, api_response_cb cb, void *payload,
    cu_error *err);
/* DELETE, with optional DeleteOptions [borrowed; may be NULL]. */
CU_MUST_CHECK int api_delete(api_req **out, api_client *c,
    const struct api_resource *res, const char *ns, const char *name,
    json_t *options, api_response_cb cb, void *payload, cu_error *err);

/* ---- metrics -------------------------------------------------------- */

struct api_client_stats {
	uint64_t requests;	/* attempts sent (retries included) */
	uint64_t retries;	/* attempts that were retries */
	uint64_t throttled;	/* requests that waited for the rate limiter */
	uint64_t in_flight;	/* requests not yet completed */
	uint64_t token_reloads; /* token file changes picked up */
	uint64_t withheld;	/* writes the write gate withheld */
};

void api_client_stats(const api_client *c, struct api_client_stats *out);

/* Attempts answered with `code` (0 = transport failure) for verb
 * ("GET", ...; other verbs are counted under "OTHER"). */
uint64_t api_client_stats_count(
    const api_client *c, const char *verb, int code);

/* Call fn for every (verb, code, count) seen. Strings [borrowed]. */
void api_client_stats_foreach(const api_client *c,
    void (*fn)(const char *verb, int code, uint64_t count, void *payload),
    void *payload);

#endif /* CU_API_CLIENT_H */
