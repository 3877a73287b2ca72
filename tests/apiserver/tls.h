/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/tls.h - TLS material and kubeconfig for the local API
 * server cueue-apiserver. Every run mints its own CA so that nothing secret
 * is checked in and clients are forced to verify against the CA we hand them
 * (never --insecure-skip-tls-verify). Serving certificates always carry
 * subjectAltNames because Go clients (kubectl, client-go) ignore the CN;
 * no_san exists only to prove that. Uses OpenSSL 3 libcrypto.
 * Prefix: as_ (shared by every tests/apiserver file).
 */
#ifndef CU_TESTS_APISERVER_TLS_H
#define CU_TESTS_APISERVER_TLS_H

#include <stdbool.h>

#include "lib/cu.h"

/*
 * PEM material of one run. All four strings [owned: cu_free, or
 * as_tls_material_dispose]. Keys are unencrypted PKCS#8 ("PRIVATE KEY").
 */
struct as_tls_material {
	char *ca_cert_pem;
	char *ca_key_pem;
	char *cert_pem;
	char *key_pem;
};

/*
 * A per-run CA (EC P-256, self-signed, basicConstraints CA:TRUE critical,
 * keyUsage keyCertSign|cRLSign critical) and a serving certificate signed by
 * it (EC P-256, CN=localhost, keyUsage digitalSignature, EKU serverAuth) with
 * subjectAltNames IP:127.0.0.1, IP:::1, DNS:localhost, DNS:kubernetes,
 * DNS:kubernetes.default, DNS:kubernetes.default.svc,
 * DNS:kubernetes.default.svc.cluster.local plus extra_dns (NULL-terminated,
 * may be NULL) [borrowed]. Validity: 1 hour ago to +10 years.
 * no_san=true issues the serving cert WITHOUT any SAN (CN=localhost only).
 * On success *out is filled [owned: as_tls_material_dispose]; on failure it
 * is zeroed. CU_EINVAL for a bad extra name, CU_EIO for OpenSSL failures.
 */
CU_MUST_CHECK int as_tls_generate(struct as_tls_material *out,
    const char *const *extra_dns, bool no_san, cu_error *err);

/* Free the four strings and zero *m; NULL is a no-op. */
void as_tls_material_dispose(struct as_tls_material *m);

/*
 * A new CA (CN ca_cn) and a client certificate it signs (EC P-256, CN cn,
 * keyUsage digitalSignature, EKU clientAuth, no SAN): kube-apiserver's
 * front-proxy CA and client certificate (--requestheader-client-ca-file,
 * --proxy-client-cert-file). Both strings [borrowed]. *out as for
 * as_tls_generate.
 */
CU_MUST_CHECK int as_tls_client(struct as_tls_material *out, const char *ca_cn,
    const char *cn, cu_error *err);

/*
 * Issue a serving cert (as above) for dns_names / ip_addrs (NULL-terminated,
 * either may be NULL; IPv4 or IPv6 text) signed by an existing CA.
 * All inputs [borrowed]. *cert_pem, *key_pem [owned: cu_free]; both NULL on
 * failure. With no name at all the cert has no SAN. CU_EINVAL for a bad
 * address or CA PEM that does not parse or whose key does not match.
 */
CU_MUST_CHECK int as_tls_issue(char **cert_pem, char **key_pem,
    const char *ca_cert_pem, const char *ca_key_pem,
    const char *const *dns_names, const char *const *ip_addrs, cu_error *err);

/*
 * Write a kubeconfig (YAML) that kubectl 1.27-1.33 and python3-kubernetes
 * 22.6 accept: cluster "cueue" (server_url; certificate-authority-data =
 * base64(ca_pem) when ca_pem != NULL, nothing for plain http), user
 * "cueue-admin" with `token`, context "cueue" (cluster cueue, user
 * cueue-admin, namespace default), current-context cueue. Created with mode
 * 0600 atomically (tmp file in the same directory + fsync + rename), so a
 * reader never sees a half-written file. All inputs [borrowed]; token may
 * be NULL (no token line). CU_EINVAL when server_url or token contain
 * characters that would need YAML quoting beyond what we emit.
 */
CU_MUST_CHECK int as_kubeconfig_write(const char *path, const char *server_url,
    const char *ca_pem, const char *token, cu_error *err);

#endif /* CU_TESTS_APISERVER_TLS_H */
