/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/vauth.h - the visibility API's own HTTPS server
 * (visibility.kueue.x-k8s.io on visibilityServer.bindPort, as Kueue's
 * pkg/visibility runs an aggregated API server), with k8s.io/apiserver's
 * delegated authentication and authorization:
 *
 *  - the authentication settings come from the ConfigMap
 *    kube-system/extension-apiserver-authentication that kube-apiserver
 *    publishes: client-ca-file, requestheader-client-ca-file,
 *    requestheader-allowed-names, requestheader-username-headers,
 *    requestheader-group-headers, requestheader-extra-headers-prefix and
 *    requestheader-uid-headers (JSON string lists). It is read before
 *    the server starts (again, with back-off up to 30 s, while the API
 *    server does not answer; a ConfigMap that is missing or may not be
 *    read leaves only bearer tokens, logged), then every refresh_s
 *    (CTL_VAUTH_REFRESH_S) while serving: new settings replace the old
 *    (a rotated CA), a failed read keeps them. The CAs a client is asked
 *    to present a certificate of (the TLS handshake's certificate
 *    request) stay those of the first read;
 *  - a client certificate that verifies against the request-header CA
 *    (extended key usage clientAuth) and whose CN is an allowed name (any,
 *    when the list is empty) is the front proxy: the user is the first
 *    non-empty value of the username headers (X-Remote-User), the groups
 *    every value of the group headers (X-Remote-Group, one per header
 *    line), extra[<key>] the values of <prefix><key> headers (the key
 *    %-unescaped and lower-cased), the uid the first uid header's value.
 *    Without a username header the certificate names nobody;
 *  - else a client certificate that verifies against the client CA is the
 *    user CN, in the groups O;
 *  - else the bearer token (TokenReview), else system:anonymous; then a
 *    SubjectAccessReview for the request's attributes (controller/mauth.h:
 *    the gate, its caches - 10 s, as k8s.io/apiserver's - and its Status
 *    replies). X-Remote-* headers without a verified front-proxy
 *    certificate are ignored. /healthz, /readyz and /livez answer "ok"
 *    to anyone authenticated or anonymous (k8s.io/apiserver's
 *    AlwaysAllowPaths).
 *
 * The serving certificate is <certDir>/tls.crt and tls.key (certDir: the
 * CUEUE_VISIBILITY_CERT_DIR environment variable, default /visibility, as
 * Kueue's), or, when those cannot be read, a self-signed one made at
 * start-up (as k8s.io/apiserver's MaybeDefaultWithSelfSignedCerts); the
 * APIServices skip its verification (manifests/visibility.yaml).
 *
 * Event-loop thread only. Prefix: ctl_vauth_.
 */
#ifndef CU_CONTROLLER_VAUTH_H
#define CU_CONTROLLER_VAUTH_H

#include <jansson.h>

#include "api/client.h"
#include "controller/httpd.h"
#include "controller/mauth.h"
#include "controller/visibility.h"
#include "lib/cu.h"

struct ev_loop;

#define CTL_VAUTH_CONFIGMAP_NS "kube-system"
#define CTL_VAUTH_CONFIGMAP "extension-apiserver-authentication"
#define CTL_VAUTH_CERT_DIR "/visibility"
/* k8s.io/apiserver's delegated authentication and authorization cache
 * lifetimes (CacheTTL, AllowCacheTTL, DenyCacheTTL). */
#define CTL_VAUTH_TTL_NS (10LL * CU_NS_PER_S)
/* How often the ConfigMap is read again while serving. */
#define CTL_VAUTH_REFRESH_S 60.0
/* Most certificates of a client chain looked at. */
#define CTL_VAUTH_MAX_CHAIN 8u

/* The delegated authentication settings (from the ConfigMap). Every
 * pointer [owned: ctl_vauth_settings_dispose]. */
struct ctl_vauth_settings {
	char *client_ca_pem; /* NULL: no client-certificate users */
	char *rh_ca_pem;     /* NULL: no front proxy */
	char **allowed_names;
	size_t nallowed;
	char **user_headers, **group_headers, **extra_prefixes, **uid_headers;
	size_t nuser, ngroup, nextra, nuid;
};

/*
 * The settings of ConfigMap cm [borrowed] (NULL: none at all): the
 * request-header lists default to X-Remote-User, X-Remote-Group and
 * X-Remote-Extra- when the CA is there and the key is not. *out [owned:
 * ctl_vauth_settings_dispose]. CU_EINVAL when a list is not a JSON list
 * of strings (the message names the key), CU_ENOMEM.
 */
CU_MUST_CHECK int ctl_vauth_settings_from(
    struct ctl_vauth_settings *out, const json_t *cm, cu_error *err);
void ctl_vauth_settings_dispose(struct ctl_vauth_settings *s);

/*
 * Verify chain[0..n) (leaf first, DER [borrowed]) against the CA
 * certificates of ca_pem [borrowed] for client authentication. On CU_OK
 * *cn [owned: cu_free] is the leaf's subject CN ("" when none) and
 * *orgs [owned] a JSON list of its O values. CU_EDENIED when it does not
 * verify (the message says why, as Go's x509 does), CU_EINVAL for n 0 or
 * a CA bundle without a certificate, CU_ENOMEM.
 */
CU_MUST_CHECK int ctl_vauth_verify(const struct ctl_http_der *chain, size_t n,
    const char *ca_pem, char **cn, json_t **orgs, cu_error *err);

/*
 * The front proxy's user from request headers hv (name, value pairs
 * ending with a NULL name [borrowed]) under s: CTL_MAUTH_WHO_USER with
 * *user [owned] ({"username", "groups", "extra", "uid"}), or
 * CTL_MAUTH_WHO_NONE when no username header has a value.
 */
enum ctl_mauth_who ctl_vauth_headers_user(
    const struct ctl_vauth_settings *s, const char *const *hv, json_t **user);

/*
 * The SubjectAccessReview attributes of a request as k8s.io/apiserver's
 * RequestInfoFactory reads its path: /apis/<group>/<version>/[namespaces/
 * <ns>/]<resource>[/<name>[/<subresource>]] is a resource request (verb
 * from the method: get, or list without a name, create, update, patch,
 * delete); everything else (/apis, /apis/<group>, /apis/<group>/<version>)
 * the path as a non-resource URL. Both [borrowed]. [owned] as
 * ctl_mauth_opts.attributes wants it; NULL when out of memory.
 */
json_t *ctl_vauth_attributes(const char *method, const char *path);

typedef struct ctl_vauth ctl_vauth;

struct ctl_vauth_opts {
	const char *listen;	    /* "host:port" [borrowed; copied] */
	const char *namespace_;	    /* for the self-signed names [borrowed] */
	const char *cert_dir;	    /* NULL: CTL_VAUTH_CERT_DIR [borrowed] */
	const char *tls_priorities; /* NULL: the default [borrowed] */
	const struct ctl_vis *vis;  /* the API [borrowed; must outlive] */
	/* Called when the server could not start (the port is taken): the
	 * controller stops, as Kueue exits. [borrowed] */
	void (*failed)(const cu_error *err, void *payload);
	void *payload;
	double refresh_s; /* the ConfigMap's re-reads; 0: CTL_VAUTH_REFRESH_S */
	/* The client of the authentication reviews (controller/mauth.h)
	 * [borrowed; must outlive v]; NULL: the client of ctl_vauth_start. */
	api_client *review_client;
};

/*
 * Read the ConfigMap through client [borrowed; must outlive v], then
 * serve: *out [owned: ctl_vauth_free]. The server runs once the read is
 * answered; CU_ENOMEM, CU_EINVAL for a bad listen address.
 */
CU_MUST_CHECK int ctl_vauth_start(ctl_vauth **out, struct ev_loop *loop,
    api_client *client, const struct ctl_vauth_opts *o, cu_error *err);

/* The bound port; 0 until serving. */
uint16_t ctl_vauth_port(const ctl_vauth *v);

/* The settings in use [borrowed; valid until the next loop turn]. */
const struct ctl_vauth_settings *ctl_vauth_settings(const ctl_vauth *v);

/* Stop serving and free (reviews in flight answered 503). NULL: no-op. */
void ctl_vauth_free(ctl_vauth *v);

#endif /* CU_CONTROLLER_VAUTH_H */
