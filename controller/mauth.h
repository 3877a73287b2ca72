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
 * authorizer cache them: a token's review for 1 minute (authenticated or
 * not), an allowed decision for 5 minutes and a denied one for 30
 * seconds. Tokens are kept only as SHA-256 digests; at most
 * CTL_MAUTH_CACHE_MAX entries of each cache (the oldest go first).
 * Failed reviews are not cached. Reviews are POSTs that the leader-only
 * write gate must let through (controller/ctl.c does).
 *
 * Event-loop thread only. Prefix: ctl_mauth_.
 */
#ifndef CU_CONTROLLER_MAUTH_H
#define CU_CONTROLLER_MAUTH_H

#include "api/client.h"
#include "controller/httpd.h"
#include "lib/cu.h"

#define CTL_MAUTH_CACHE_MAX 1024u
#define CTL_MAUTH_AUTHN_TTL_NS (60LL * CU_NS_PER_S)
#define CTL_MAUTH_ALLOW_TTL_NS (300LL * CU_NS_PER_S)
#define CTL_MAUTH_DENY_TTL_NS (30LL * CU_NS_PER_S)

typedef struct ctl_mauth ctl_mauth;

/* *out [owned: ctl_mauth_free]; client [borrowed; must outlive it].
 * CU_ENOMEM. */
CU_MUST_CHECK int ctl_mauth_new(
    ctl_mauth **out, api_client *client, cu_error *err);

/* Gate every request of srv [borrowed; freed after m] through m
 * (ctl_httpd_set_gate; before ctl_httpd_start). */
CU_MUST_CHECK int ctl_mauth_mount(ctl_mauth *m, ctl_httpd *srv, cu_error *err);

/* Reviews sent and cache hits so far (tests, debug logs). */
struct ctl_mauth_stats {
	unsigned long token_reviews, access_reviews, cache_hits;
};
void ctl_mauth_stats(const ctl_mauth *m, struct ctl_mauth_stats *out);

/* Cancel the reviews in flight (their requests are answered 503) and free
 * m. NULL is a no-op. Before ctl_httpd_free of the server it gates. */
void ctl_mauth_free(ctl_mauth *m);

#endif
