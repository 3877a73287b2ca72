/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/certs.h - the webhook's internal certificates, as Kueue's
 * cert-controller rotator makes them: a self-signed CA and a serving
 * certificate it signs for the webhook Service's DNS names, and the test
 * that decides whether what is stored (the Secret's ca.crt, tls.crt and
 * tls.key) can still be served or must be replaced.
 *
 * Profile (built field by field with OpenSSL 3 libcrypto, never from
 * configuration strings, so no caller-supplied name can add an extension):
 *  - keys: ECDSA P-256, written as unencrypted PKCS#8 PEM ("BEGIN PRIVATE
 *    KEY"), which GnuTLS (controller/httpd.h), OpenSSL and Go all load;
 *  - certificates: X.509 v3, SHA-256 signatures, random positive 128-bit
 *    serials, notBefore one hour in the past (clock skew between the
 *    controller and the API server), subject/authority key identifiers;
 *  - CA: CN ctl_certs_request.ca_name, basicConstraints CA:TRUE and
 *    keyUsage keyCertSign|cRLSign, both critical;
 *  - serving certificate: CN = the first DNS name, subjectAltName = every
 *    DNS name (Go clients ignore the CN), basicConstraints CA:FALSE and
 *    keyUsage digitalSignature|keyEncipherment (critical), extendedKeyUsage
 *    serverAuth.
 *
 * Pure functions: no I/O, no logging, no global state beyond OpenSSL's.
 * Any thread. Prefix: ctl_certs_, CTL_CERTS_.
 */
#ifndef CU_CONTROLLER_CERTS_H
#define CU_CONTROLLER_CERTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/cu.h"

#define CTL_CERTS_DEFAULT_CA_NAME "cueue-ca"
#define CTL_CERTS_DEFAULT_CA_DAYS 3650u
#define CTL_CERTS_DEFAULT_CERT_DAYS 365u
/* Longest validity accepted for either certificate (about 100 years). */
#define CTL_CERTS_MAX_DAYS 36500u
/* Most DNS names one serving certificate carries. */
#define CTL_CERTS_MAX_DNS_NAMES 64u
/* Longest DNS name (RFC 1035), and longest CN (RFC 5280 ub-common-name):
 * the first DNS name, which becomes the CN, must fit the latter. */
#define CTL_CERTS_DNS_NAME_MAX 253u
#define CTL_CERTS_CN_MAX 64u

/* What to issue. Every pointer [borrowed; read during the call only].
 * Zero fields take the defaults named. */
struct ctl_certs_request {
	/* The Service's names, e.g. "cueue-webhook-service.cueue-system.svc"
	 * and "...svc.cluster.local": 1..CTL_CERTS_MAX_DNS_NAMES entries of
	 * letters, digits, '-' and '.', optionally starting with "*.". */
	const char *const *dns_names;
	size_t n_dns_names;
	const char *ca_name; /* CA's CN; NULL: CTL_CERTS_DEFAULT_CA_NAME */
	unsigned ca_days;    /* CA validity; 0: CTL_CERTS_DEFAULT_CA_DAYS */
	unsigned cert_days;  /* serving cert validity, cut to the CA's;
				0: CTL_CERTS_DEFAULT_CERT_DAYS */
};

/*
 * One generated set, as PEM text. The four strings [owned: cu_free, or
 * ctl_certs_dispose, which also wipes the two keys].
 */
struct ctl_certs {
	char *ca_cert_pem;    /* the Secret's ca.crt; the webhooks' caBundle */
	char *ca_key_pem;     /* ca.key (PKCS#8, unencrypted) */
	char *cert_pem;	      /* tls.crt (the serving certificate alone) */
	char *key_pem;	      /* tls.key (PKCS#8, unencrypted) */
	int64_t not_after_ns; /* serving cert's notAfter, ns since epoch */
};

/*
 * Generate a new CA and a serving certificate signed by it (see the profile
 * above). On success *out is filled [owned: ctl_certs_dispose]; on failure
 * it is zeroed. CU_EINVAL for a bad request (no or too many names, a name
 * that is not a DNS name, a first name longer than CTL_CERTS_CN_MAX, days
 * above CTL_CERTS_MAX_DAYS); CU_ENOMEM; CU_EIO when OpenSSL fails (message
 * names the step and OpenSSL's reason).
 */
CU_MUST_CHECK int ctl_certs_generate(
    const struct ctl_certs_request *req, struct ctl_certs *out, cu_error *err);

/* Free the four strings (keys wiped first) and zero *c. NULL is a
 * no-op. */
void ctl_certs_dispose(struct ctl_certs *c);

/*
 * Whether stored material can keep being served at now_ns (ns since the
 * epoch; 0: the wall clock), the rotator's test. *valid is true iff
 *  - ca_pem, cert_pem and key_pem each parse (the first PEM block of each);
 *  - ca_pem is a CA certificate and key_pem is cert_pem's private key;
 *  - cert_pem verifies against ca_pem as the only trust anchor at now_ns
 *    for TLS server use (signature, validity of both, CA constraints,
 *    extendedKeyUsage);
 *  - each of dns_names[0..n) is among cert_pem's DNS subjectAltNames (the
 *    CN does not count; n == 0 checks no name);
 *  - notBefore <= now_ns for both certificates, and both notAfter are more
 *    than renew_before_ns after now_ns (cert-controller's "lookahead":
 *    rotate that long before expiry).
 * Inputs [borrowed]; NULL or "" PEM counts as missing (invalid). When
 * invalid, err (if non-NULL) gets code CU_OK and a one-line reason, meant
 * for the caller's debug log; when valid, err is cleared. Garbage input is
 * invalid, never an error. Returns CU_OK, or CU_EINVAL (NULL valid, NULL
 * dns_names with n > 0, negative now_ns or renew_before_ns), CU_ENOMEM or
 * CU_EIO (OpenSSL could not set up the verification), with *valid false.
 */
CU_MUST_CHECK int ctl_certs_check(const char *ca_pem, const char *cert_pem,
    const char *key_pem, const char *const *dns_names, size_t n, int64_t now_ns,
    int64_t renew_before_ns, bool *valid, cu_error *err);

#endif /* CU_CONTROLLER_CERTS_H */
