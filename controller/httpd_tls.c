/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/httpd_tls.c - GnuTLS priority strings from a Go-style TLS
 * configuration (Kueue's Configuration `tls`): ctl_httpd_tls_priorities
 * (see httpd.h).
 */
#include <stdio.h>
#include <string.h>

#include "controller/httpd_int.h"

/* Go's TLS 1.2 suites with ECDHE and an AEAD cipher, and the TLS 1.3 ones
 * (kx NULL), with their GnuTLS key exchange and cipher. */
static const struct tls_suite {
	const char *go, *kx, *cipher;
} TLS_SUITES[] = {
    {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA", "AES-128-GCM"},
    {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA", "AES-128-GCM"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA", "AES-256-GCM"},
    {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA", "AES-256-GCM"},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA",
	"CHACHA20-POLY1305"},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA",
	"CHACHA20-POLY1305"},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305", "ECDHE-ECDSA",
	"CHACHA20-POLY1305"},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305", "ECDHE-RSA", "CHACHA20-POLY1305"},
    {"TLS_AES_128_GCM_SHA256", NULL, "AES-128-GCM"},
    {"TLS_AES_256_GCM_SHA384", NULL, "AES-256-GCM"},
    {"TLS_CHACHA20_POLY1305_SHA256", NULL, "CHACHA20-POLY1305"},
};

/* Go's suites that are refused: RSA key exchange (no forward secrecy),
 * CBC mode, RC4, 3DES. */
static const char *const TLS_INSECURE[] = {
    "TLS_RSA_WITH_RC4_128_SHA",
    "TLS_RSA_WITH_3DES_EDE_CBC_SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA",
    "TLS_RSA_WITH_AES_256_CBC_SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA256",
    "TLS_RSA_WITH_AES_128_GCM_SHA256",
    "TLS_RSA_WITH_AES_256_GCM_SHA384",
    "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
    "TLS_ECDHE_RSA_WITH_RC4_128_SHA",
    "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
};

#define TLS_NSUITES (sizeof(TLS_SUITES) / sizeof(TLS_SUITES[0]))

static bool tls_insecure(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(TLS_INSECURE) / sizeof(TLS_INSECURE[0]); i++)
		if (strcmp(name, TLS_INSECURE[i]) == 0)
			return true;
	return false;
}

/* Append ":+item" to b unless an earlier suite added it already. */
static int tls_add(cu_buf *b, const char *item)
{
	char probe[64];

	snprintf(probe, sizeof(probe), ":+%s:", item);
	if (b->ptr != NULL && strstr(b->ptr, probe) != NULL)
		return CU_OK;
	return cu_buf_addf(b, "+%s:", item);
}

int ctl_httpd_tls_priorities(const char *min_version, const char *const *suites,
    size_t n, char **out, cu_error *err)
{
	const char *vers;
	bool tls12 = true;
	cu_buf kx, ciphers;
	size_t i, j;
	int rc = CU_OK;

	*out = NULL;
	if (min_version == NULL || min_version[0] == '\0' ||
	    strcmp(min_version, "VersionTLS12") == 0)
		vers = "-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2";
	else if (strcmp(min_version, "VersionTLS13") == 0) {
		vers = "-VERS-ALL:+VERS-TLS1.3";
		tls12 = false;
	} else
		return cu_error_set(err, CU_EINVAL,
		    "tls.minVersion: Unsupported value: \"%.64s\": %s; "
		    "supported values: \"VersionTLS12\", \"VersionTLS13\"",
		    min_version,
		    strcmp(min_version, "VersionTLS10") == 0 ||
			    strcmp(min_version, "VersionTLS11") == 0
			? "insecure"
			: "unknown");
	if (n == 0) {
		*out = cu_asprintf(
		    "NORMAL:%%SERVER_PRECEDENCE:%s:" CTL_HTTPD_TLS_KX
		    ":" CTL_HTTPD_TLS_CIPHERS ":-MAC-ALL:+AEAD",
		    vers);
		return *out != NULL
			   ? CU_OK
			   : cu_error_set(err, CU_ENOMEM, "out of memory");
	}
	/* ":" first so that tls_add finds ":+item:" for the first item. */
	cu_buf_init(&kx, 1024);
	cu_buf_init(&ciphers, 1024);
	if (cu_buf_add(&kx, ":", 1) != CU_OK ||
	    cu_buf_add(&ciphers, ":", 1) != CU_OK)
		rc = cu_error_set(err, CU_ENOMEM, "out of memory");
	for (i = 0; rc == CU_OK && i < n; i++) {
		const char *s = suites[i] != NULL ? suites[i] : "";

		for (j = 0; j < TLS_NSUITES; j++)
			if (strcmp(s, TLS_SUITES[j].go) == 0)
				break;
		if (j == TLS_NSUITES) {
			rc = cu_error_set(err, CU_EINVAL,
			    "tls.cipherSuites[%zu]: Unsupported value: "
			    "\"%.64s\": %s; TLS 1.2 suites must use ECDHE key "
			    "exchange and an AEAD cipher (e.g. "
			    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)",
			    i, s, tls_insecure(s) ? "insecure" : "unknown");
			break;
		}
		if (TLS_SUITES[j].kx != NULL)
			rc = tls_add(&kx, TLS_SUITES[j].kx);
		if (rc == CU_OK)
			rc = tls_add(&ciphers, TLS_SUITES[j].cipher);
		if (rc != CU_OK)
			rc = cu_error_set(err, CU_ENOMEM, "out of memory");
	}
	/* Only TLS 1.3 names: TLS 1.3 needs an ECDHE key exchange enabled
	 * in GnuTLS, and TLS 1.2 would have no suite. */
	if (rc == CU_OK && kx.len == 1) {
		if (tls12)
			rc = cu_error_set(err, CU_EINVAL,
			    "tls.cipherSuites: Invalid value: no TLS 1.2 suite "
			    "while minVersion allows TLS 1.2; add one (e.g. "
			    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256) or set "
			    "tls.minVersion: VersionTLS13");
		else if (cu_buf_addf(&kx, "+ECDHE-ECDSA:+ECDHE-RSA:") != CU_OK)
			rc = cu_error_set(err, CU_ENOMEM, "out of memory");
	}
	if (rc == CU_OK) {
		kx.ptr[kx.len - 1] = '\0';
		ciphers.ptr[ciphers.len - 1] = '\0';
		*out = cu_asprintf("NORMAL:%%SERVER_PRECEDENCE:%s:-KX-ALL%s:"
				   "-CIPHER-ALL%s:-MAC-ALL:+AEAD",
		    vers, kx.ptr, ciphers.ptr);
		if (*out == NULL)
			rc = cu_error_set(err, CU_ENOMEM, "out of memory");
	}
	cu_buf_dispose(&kx);
	cu_buf_dispose(&ciphers);
	return rc;
}
