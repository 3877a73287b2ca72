/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/mauth.h - authentication and authorization of the secure
 * metrics endpoint, as controller-runtime's metrics filter
 * (WithAuthenticationAndAuthorization) does it: the request's bearer
 * token goes to the API server in a TokenReview (authentication.k8s.io/v1);
 * the user it names is checked with a SubjectAccessReview
 * (authorization.k8s.io/v1) for the non-resource URL of the request (its
 * path, "/metrics") and the verb of its method in lower case ("get").
 *
 *   no "Authorization: Bearer <token>", or a token the API server does
 *   not authenticate           401 "Unauthorized"
 *   the TokenReview failed     500 "Authentication failed"
 *   the review did not allow   403 "Authorization denied for user <name>"
 *   the SubjectAccessReview failed
 *                              500 "Authorization for user <name> failed"
 *
 * Results are cached as controller-runtime's delegating authenticator and
 * authorizer cache them: an authenticated token's review for 1 minute, an
 * allowed decision for 5 minutes and a denied one for 30 seconds; a
 * refused token for 10 seconds, in a cache of its own, so that a flood of
 * made-up tokens never pushes a good token out. Tokens are kept only as
 * SHA-256 digests; at most CTL_MAUTH_CACHE_MAX entries of each cache (the
 * oldest go first). Failed reviews are not cached.
 *
 * Nobody outside may spend the controller's API budget: reviews go
 * through the client given here, which the controller keeps for reviews
 * alone (its own rate limiter and connections, controller/ctl.c); at most
 * max_inflight reviews are in flight (an address with none in flight may
 * still have one, up to twice that), at most per_ip_inflight for one
 * client address, and an address whose tokens kept failing (more than
 * fail_burst refused, refilled at fail_per_s a second) gets no new
 * TokenReview for a while. A request beyond these limits is answered
 * 429 "Too many requests, please try again later." (Retry-After: 1), as
 * kube-apiserver's max-in-flight filter answers; cached answers are
 * never limited. One rate-limited log line says so.
 *
 * The same gate serves the visibility API as k8s.io/apiserver's delegated
 * filters do (struct ctl_mauth_opts, `apiserver`): the connection's
 * client certificate first (front-proxy headers or a client CA: the
 * `identify` hook, controller/vauth.h), then the bearer token, then, with
 * neither, the user system:anonymous (group system:unauthenticated) -
 * but a certificate or token that failed is a 401; members of
 * system:masters, and /healthz, /readyz and /livez, are allowed without
 * a review; the review carries the
 * request's resource attributes (`attributes` hook); refusals are Status
 * objects: 401 Unauthorized, 403 Forbidden with kube's message
 * (ctl_mauth_forbidden), 500 InternalError.
 *
 * Event-loop thread only. Prefix: ctl_mauth_.
 */
#ifndef CU_CONTROLLER_MAUTH_H
#define CU_CONTROLLER_MAUTH_H

#include <jansson.h>

#include "api/client.h"
#include "api/wire.h"
#include "controller/httpd.h"
#include "lib/cu.h"

#define CTL_MAUTH_CACHE_MAX 1024u
#define CTL_MAUTH_AUTHN_TTL_NS (60LL * CU_NS_PER_S)
#define CTL_MAUTH_ALLOW_TTL_NS (300LL * CU_NS_PER_S)
#define CTL_MAUTH_DENY_TTL_NS (30LL * CU_NS_PER_S)
#define CTL_MAUTH_REFUSED_TTL_NS (10LL * CU_NS_PER_S)
#define CTL_MAUTH_MAX_INFLIGHT 32u
#define CTL_MAUTH_PER_IP_INFLIGHT 8u
#define CTL_MAUTH_FAIL_BURST 10u
#define CTL_MAUTH_FAIL_PER_S 1.0
#define CTL_MAUTH_PEERS_MAX 1024u
#define CTL_MAUTH_TOO_MANY "Too many requests, please try again later.\n"

#define CTL_MAUTH_ANONYMOUS "system:anonymous"

typedef struct ctl_mauth ctl_mauth;

/* What an identify hook found on the connection. */
enum ctl_mauth_who {
	CTL_MAUTH_WHO_NONE,  /* no certificate: try the token */
	CTL_MAUTH_WHO_USER,  /* *user set */
	CTL_MAUTH_WHO_ERROR, /* a certificate that does not verify */
};

/* Options of ctl_mauth_new_opts. Zero fields take the defaults named. */
struct ctl_mauth_opts {
	const char *name; /* log prefix [borrowed; static]; "metrics" */
	/* Cache lifetimes; 0: CTL_MAUTH_AUTHN/ALLOW/DENY_TTL_NS. */
	cu_ns_t authn_ttl_ns, allow_ttl_ns, deny_ttl_ns;
	/* k8s.io/apiserver's behaviour (see above) instead of
	 * controller-runtime's. */
	bool apiserver;
	/* The connection's user, before the token: *user [owned by the
	 * caller] a TokenReview-style user object ({"username", "groups",
	 * "uid", "extra"}). NULL: none. */
	enum ctl_mauth_who (*identify)(
	    const struct ctl_http_request *req, json_t **user, void *payload);
	/* The review's request attributes [owned by the caller]:
	 * {"resourceAttributes": {...}} or {"nonResourceAttributes":
	 * {...}}; NULL on failure (500). NULL hook: the request's path as a
	 * non-resource URL and its method in lower case as the verb. */
	json_t *(*attributes)(
	    const struct ctl_http_request *req, void *payload);
	void *payload; /* [borrowed; must outlive m] */
	/* Limits (see above); 0: CTL_MAUTH_MAX_INFLIGHT, _PER_IP_INFLIGHT,
	 * _FAIL_BURST, _FAIL_PER_S, _REFUSED_TTL_NS. */
	unsigned max_inflight, per_ip_inflight, fail_burst;
	double fail_per_s;
	cu_ns_t refused_ttl_ns;
};

/* *out [owned: ctl_mauth_free]; client [borrowed; must outlive it].
 * CU_ENOMEM. */
CU_MUST_CHECK int ctl_mauth_new(
    ctl_mauth **out, api_client *client, cu_error *err);

/* As ctl_mauth_new, with o [borrowed; copied; NULL: the defaults]. */
CU_MUST_CHECK int ctl_mauth_new_opts(ctl_mauth **out, api_client *client,
    const struct ctl_mauth_opts *o, cu_error *err);

/* k8s.io/apiserver's 403 Status [owned] for user [borrowed] refused the
 * request attrs [borrowed] (as in ctl_mauth_opts.attributes), reason
 * [borrowed; NULL or "": none] appended: e.g. `clusterqueues.visibility.
 * kueue.x-k8s.io "cq" is forbidden: User "u" cannot get resource
 * "clusterqueues/pendingworkloads" in API group "visibility.kueue.x-k8s.io"
 * at the cluster scope`. NULL when out of memory. */
json_t *ctl_mauth_forbidden(
    const json_t *attrs, const char *user, const char *reason);

/*
 * The answer of a TokenReview, body [borrowed], decoded
 * (api_token_review_decode): CU_OK with *authenticated and *user
 * [api_user_info_dispose it; empty when not authenticated], the reviewed
 * user with a non-empty username; CU_EINVAL when the body has no status
 * object or does not decode (a failed review, as a Go client's decoding
 * error).
 */
CU_MUST_CHECK int ctl_mauth_token_answer(
    const json_t *body, bool *authenticated, struct api_user_info *user);

/*
 * The answer of a SubjectAccessReview, body [borrowed], decoded
 * (api_subject_access_review_decode): CU_OK with *allowed (status.allowed
 * true; false otherwise, denied or not) and *reason [owned: cu_free; NULL
 * when none or empty]; CU_EINVAL when the body has no status object or
 * does not decode.
 */
CU_MUST_CHECK int ctl_mauth_access_answer(
    const json_t *body, bool *allowed, char **reason);

/* Gate every request of srv [borrowed; freed after m] through m
 * (ctl_httpd_set_gate; before ctl_httpd_start). */
CU_MUST_CHECK int ctl_mauth_mount(ctl_mauth *m, ctl_httpd *srv, cu_error *err);

/* Reviews sent and cache hits so far (tests, debug logs). */
struct ctl_mauth_stats {
	unsigned long token_reviews, access_reviews, cache_hits;
	unsigned long throttled;     /* answered 429 */
	unsigned long inflight_peak; /* most reviews in flight at once */
};
void ctl_mauth_stats(const ctl_mauth *m, struct ctl_mauth_stats *out);

/* Cancel the reviews in flight (their requests are answered 503) and free
 * m. NULL is a no-op. Before ctl_httpd_free of the server it gates. */
void ctl_mauth_free(ctl_mauth *m);

#endif
