/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/tls.c - per-run CA and serving certificates (OpenSSL 3
 * libcrypto) and the kubeconfig that points kubectl / python-kubernetes at
 * cueue-apiserver. Certificates are built programmatically (no openssl.cnf
 * strings), so that no caller-supplied name can smuggle extra extensions.
 */
#include "tests/apiserver/tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#define AS_TLS_DAYS (3652L) /* ten years, leap days included */

static const char *const as_default_dns[] = {"localhost", "kubernetes",
    "kubernetes.default", "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local", NULL};
static const char *const as_default_ips[] = {"127.0.0.1", "::1", NULL};

/* Set err from the OpenSSL error queue (and empty it), naming the step. */
static int as_ssl_fail(cu_error *err, const char *what)
{
	unsigned long e = ERR_get_error();
	char buf[256] = "unknown error";

	if (e != 0)
		ERR_error_string_n(e, buf, sizeof(buf));
	ERR_clear_error();
	return cu_error_set(err, CU_EIO, "tls: %s: %s", what, buf);
}

static EVP_PKEY *as_new_key(void)
{
	return EVP_EC_gen("P-256");
}

/* Copy a memory BIO's contents into a new string [owned: cu_free]. */
static char *as_bio_string(BIO *b)
{
	char *data = NULL;
	long n = BIO_get_mem_data(b, &data);

	if (n < 0 || data == NULL)
		return NULL;
	return cu_strndup(data, (size_t)n);
}

static int as_pem_cert(X509 *x, char **out, cu_error *err)
{
	BIO *b = BIO_new(BIO_s_mem());

	*out = NULL;
	if (b == NULL || !PEM_write_bio_X509(b, x)) {
		BIO_free(b);
		return as_ssl_fail(err, "writing certificate PEM");
	}
	*out = as_bio_string(b);
	BIO_free(b);
	return *out != NULL
		   ? CU_OK
		   : cu_error_set(err, CU_ENOMEM, "tls: out of memory");
}

/* PKCS#8 "PRIVATE KEY", unencrypted: what Go and OpenSSL servers load. */
static int as_pem_key(EVP_PKEY *k, char **out, cu_error *err)
{
	BIO *b = BIO_new(BIO_s_mem());

	*out = NULL;
	if (b == NULL ||
	    !PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL)) {
		BIO_free(b);
		return as_ssl_fail(err, "writing key PEM");
	}
	*out = as_bio_string(b);
	BIO_free(b);
	return *out != NULL
		   ? CU_OK
		   : cu_error_set(err, CU_ENOMEM, "tls: out of memory");
}

static int as_add_ext(
    X509 *x, X509 *issuer, int nid, const char *value, cu_error *err)
{
	X509V3_CTX ctx;
	X509_EXTENSION *ext;
	int ok;

	X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	if (ext == NULL)
		return as_ssl_fail(err, OBJ_nid2sn(nid));
	ok = X509_add_ext(x, ext, -1);
	X509_EXTENSION_free(ext);
	return ok ? CU_OK : as_ssl_fail(err, OBJ_nid2sn(nid));
}

/* DNS names as Go's x509 would accept them in a SAN: letters, digits,
 * '-', '.', and a leading "*." wildcard; nothing that needs quoting. */
static bool as_dns_ok(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > 253)
		return false;
	for (i = 0; i < n; i++) {
		char c = s[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '.')
			continue;
		if (c == '*' && i == 0 && n > 1 && s[1] == '.')
			continue;
		return false;
	}
	return true;
}

static int as_push_dns(GENERAL_NAMES *gens, const char *name, cu_error *err)
{
	GENERAL_NAME *g;
	ASN1_IA5STRING *ia5;

	if (!as_dns_ok(name))
		return cu_error_set(
		    err, CU_EINVAL, "tls: invalid DNS name \"%.64s\"", name);
	g = GENERAL_NAME_new();
	ia5 = ASN1_IA5STRING_new();
	if (g == NULL || ia5 == NULL ||
	    !ASN1_STRING_set(ia5, name, (int)strlen(name))) {
		GENERAL_NAME_free(g);
		ASN1_IA5STRING_free(ia5);
		return cu_error_set(err, CU_ENOMEM, "tls: out of memory");
	}
	GENERAL_NAME_set0_value(g, GEN_DNS, ia5);
	if (!sk_GENERAL_NAME_push(gens, g)) {
		GENERAL_NAME_free(g);
		return cu_error_set(err, CU_ENOMEM, "tls: out of memory");
	}
	return CU_OK;
}

static int as_push_ip(GENERAL_NAMES *gens, const char *ip, cu_error *err)
{
	unsigned char addr[16];
	int len;
	GENERAL_NAME *g;
	ASN1_OCTET_STRING *os;

	if (inet_pton(AF_INET, ip, addr) == 1)
		len = 4;
	else if (inet_pton(AF_INET6, ip, addr) == 1)
		len = 16;
	else
		return cu_error_set(
		    err, CU_EINVAL, "tls: invalid IP address \"%.64s\"", ip);
	g = GENERAL_NAME_new();
	os = ASN1_OCTET_STRING_new();
	if (g == NULL || os == NULL || !ASN1_OCTET_STRING_set(os, addr, len)) {
		GENERAL_NAME_free(g);
		ASN1_OCTET_STRING_free(os);
		return cu_error_set(err, CU_ENOMEM, "tls: out of memory");
	}
	GENERAL_NAME_set0_value(g, GEN_IPADD, os);
	if (!sk_GENERAL_NAME_push(gens, g)) {
		GENERAL_NAME_free(g);
		return cu_error_set(err, CU_ENOMEM, "tls: out of memory");
	}
	return CU_OK;
}

static int as_add_names(
    GENERAL_NAMES *gens, const char *const *names, bool ip, cu_error *err)
{
	int rc;

	for (; names != NULL && *names != NULL; names++) {
		rc = ip ? as_push_ip(gens, *names, err)
			: as_push_dns(gens, *names, err);
		if (rc != CU_OK)
			return rc;
	}
	return CU_OK;
}

/*
 * A certificate skeleton: v3, random positive 127-bit serial (RFC 5280
 * wants it unique per CA; a per-run CA makes random enough), validity from
 * an hour ago (clock skew between test processes) to ten years.
 */
static X509 *as_new_cert(EVP_PKEY *key, const char *cn, cu_error *err)
{
	X509 *x = X509_new();
	BIGNUM *bn = BN_new();
	X509_NAME *name;

	if (x == NULL || bn == NULL || !X509_set_version(x, X509_VERSION_3) ||
	    !BN_rand(bn, 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) ||
	    BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) == NULL ||
	    X509_gmtime_adj(X509_getm_notBefore(x), -3600) == NULL ||
	    X509_time_adj_ex(X509_getm_notAfter(x), AS_TLS_DAYS, 0, NULL) ==
		NULL ||
	    !X509_set_pubkey(x, key))
		goto fail;
	name = X509_get_subject_name(x);
	if (!X509_NAME_add_entry_by_txt(
		name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0))
		goto fail;
	BN_free(bn);
	return x;
fail:
	BN_free(bn);
	X509_free(x);
	as_ssl_fail(err, "building certificate");
	return NULL;
}

static int as_make_ca(
    X509 **ca_out, EVP_PKEY **key_out, const char *cn, cu_error *err)
{
	EVP_PKEY *key = as_new_key();
	X509 *ca = NULL;
	int rc;

	*ca_out = NULL;
	*key_out = NULL;
	if (key == NULL)
		return as_ssl_fail(err, "generating CA key");
	ca = as_new_cert(key, cn, err);
	if (ca == NULL) {
		EVP_PKEY_free(key);
		return CU_EIO;
	}
	if (!X509_set_issuer_name(ca, X509_get_subject_name(ca))) {
		rc = as_ssl_fail(err, "CA issuer");
		goto fail;
	}
	rc = as_add_ext(ca, ca, NID_basic_constraints, "critical,CA:TRUE", err);
	if (rc == CU_OK)
		rc = as_add_ext(
		    ca, ca, NID_key_usage, "critical,keyCertSign,cRLSign", err);
	if (rc == CU_OK)
		rc =
		    as_add_ext(ca, ca, NID_subject_key_identifier, "hash", err);
	if (rc != CU_OK)
		goto fail;
	if (!X509_sign(ca, key, EVP_sha256())) {
		rc = as_ssl_fail(err, "signing CA");
		goto fail;
	}
	*ca_out = ca;
	*key_out = key;
	return CU_OK;
fail:
	X509_free(ca);
	EVP_PKEY_free(key);
	return rc;
}

/* Issue a certificate for cn with extended key usage eku ("serverAuth",
 * "clientAuth"); dns/ips lists may each be NULL; with no_san (or no name
 * at all) the SAN extension is left out. */
static int as_issue_with(char **cert_pem, char **key_pem, X509 *ca,
    EVP_PKEY *ca_key, const char *const *dns1, const char *const *dns2,
    const char *const *ips, bool no_san, const char *cn, const char *eku,
    cu_error *err)
{
	EVP_PKEY *key = NULL;
	X509 *x = NULL;
	GENERAL_NAMES *gens = NULL;
	int rc;

	*cert_pem = NULL;
	*key_pem = NULL;
	gens = sk_GENERAL_NAME_new_null();
	if (gens == NULL)
		return cu_error_set(err, CU_ENOMEM, "tls: out of memory");
	/* Validate names before the (slow) key generation. */
	rc = as_add_names(gens, dns1, false, err);
	if (rc == CU_OK)
		rc = as_add_names(gens, dns2, false, err);
	if (rc == CU_OK)
		rc = as_add_names(gens, ips, true, err);
	if (rc != CU_OK)
		goto out;
	key = as_new_key();
	if (key == NULL) {
		rc = as_ssl_fail(err, "generating key");
		goto out;
	}
	x = as_new_cert(key, cn, err);
	if (x == NULL) {
		rc = CU_EIO;
		goto out;
	}
	if (!X509_set_issuer_name(x, X509_get_subject_name(ca))) {
		rc = as_ssl_fail(err, "issuer name");
		goto out;
	}
	rc = as_add_ext(x, ca, NID_basic_constraints, "critical,CA:FALSE", err);
	if (rc == CU_OK)
		rc = as_add_ext(
		    x, ca, NID_key_usage, "critical,digitalSignature", err);
	if (rc == CU_OK)
		rc = as_add_ext(x, ca, NID_ext_key_usage, eku, err);
	if (rc == CU_OK)
		rc = as_add_ext(
		    x, ca, NID_authority_key_identifier, "keyid:always", err);
	if (rc != CU_OK)
		goto out;
	if (!no_san && sk_GENERAL_NAME_num(gens) > 0 &&
	    !X509_add1_ext_i2d(
		x, NID_subject_alt_name, gens, 0, X509V3_ADD_DEFAULT)) {
		rc = as_ssl_fail(err, "subjectAltName");
		goto out;
	}
	if (!X509_sign(x, ca_key, EVP_sha256())) {
		rc = as_ssl_fail(err, "signing certificate");
		goto out;
	}
	rc = as_pem_cert(x, cert_pem, err);
	if (rc == CU_OK)
		rc = as_pem_key(key, key_pem, err);
	if (rc != CU_OK) {
		cu_free(*cert_pem);
		*cert_pem = NULL;
	}
out:
	GENERAL_NAMES_free(gens);
	X509_free(x);
	EVP_PKEY_free(key);
	return rc;
}

void as_tls_material_dispose(struct as_tls_material *m)
{
	if (m == NULL)
		return;
	cu_free(m->ca_cert_pem);
	cu_free(m->ca_key_pem);
	cu_free(m->cert_pem);
	cu_free(m->key_pem);
	memset(m, 0, sizeof(*m));
}

int as_tls_generate(struct as_tls_material *out, const char *const *extra_dns,
    bool no_san, cu_error *err)
{
	X509 *ca = NULL;
	EVP_PKEY *ca_key = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = as_make_ca(&ca, &ca_key, "cueue-apiserver-ca", err);
	if (rc != CU_OK)
		return rc;
	rc = as_issue_with(&out->cert_pem, &out->key_pem, ca, ca_key,
	    as_default_dns, extra_dns, as_default_ips, no_san, "localhost",
	    "serverAuth", err);
	if (rc == CU_OK)
		rc = as_pem_cert(ca, &out->ca_cert_pem, err);
	if (rc == CU_OK)
		rc = as_pem_key(ca_key, &out->ca_key_pem, err);
	X509_free(ca);
	EVP_PKEY_free(ca_key);
	if (rc != CU_OK)
		as_tls_material_dispose(out);
	return rc;
}

int as_tls_client(struct as_tls_material *out, const char *ca_cn,
    const char *cn, cu_error *err)
{
	X509 *ca = NULL;
	EVP_PKEY *ca_key = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = as_make_ca(&ca, &ca_key, ca_cn, err);
	if (rc != CU_OK)
		return rc;
	rc = as_issue_with(&out->cert_pem, &out->key_pem, ca, ca_key, NULL,
	    NULL, NULL, true, cn, "clientAuth", err);
	if (rc == CU_OK)
		rc = as_pem_cert(ca, &out->ca_cert_pem, err);
	if (rc == CU_OK)
		rc = as_pem_key(ca_key, &out->ca_key_pem, err);
	X509_free(ca);
	EVP_PKEY_free(ca_key);
	if (rc != CU_OK)
		as_tls_material_dispose(out);
	return rc;
}

int as_tls_issue(char **cert_pem, char **key_pem, const char *ca_cert_pem,
    const char *ca_key_pem, const char *const *dns_names,
    const char *const *ip_addrs, cu_error *err)
{
	BIO *b;
	X509 *ca = NULL;
	EVP_PKEY *ca_key = NULL;
	int rc;

	*cert_pem = NULL;
	*key_pem = NULL;
	if (ca_cert_pem == NULL || ca_key_pem == NULL)
		return cu_error_set(err, CU_EINVAL, "tls: CA PEM missing");
	b = BIO_new_mem_buf(ca_cert_pem, -1);
	if (b != NULL)
		ca = PEM_read_bio_X509(b, NULL, NULL, NULL);
	BIO_free(b);
	b = BIO_new_mem_buf(ca_key_pem, -1);
	if (b != NULL)
		ca_key = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL);
	BIO_free(b);
	ERR_clear_error();
	if (ca == NULL || ca_key == NULL) {
		rc = cu_error_set(err, CU_EINVAL, "tls: %s does not parse",
		    ca == NULL ? "CA certificate PEM" : "CA key PEM");
	} else if (X509_check_private_key(ca, ca_key) != 1) {
		ERR_clear_error();
		rc = cu_error_set(err, CU_EINVAL,
		    "tls: CA key does not match the CA certificate");
	} else {
		rc = as_issue_with(cert_pem, key_pem, ca, ca_key, dns_names,
		    NULL, ip_addrs, false, "localhost", "serverAuth", err);
	}
	X509_free(ca);
	EVP_PKEY_free(ca_key);
	return rc;
}

/* ---- kubeconfig ---------------------------------------------------- */

/* A YAML double-quoted scalar; control characters are refused rather than
 * escaped because no server URL or bearer token legitimately has them. */
static int as_yaml_quoted(
    cu_buf *b, const char *field, const char *s, cu_error *err)
{
	const char *p;

	for (p = s; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return cu_error_set(err, CU_EINVAL,
			    "kubeconfig: %s contains a control character",
			    field);
	if (cu_buf_adds(b, "\"") != CU_OK)
		return CU_ENOMEM;
	for (p = s; *p != '\0'; p++) {
		if ((*p == '"' || *p == '\\') && cu_buf_adds(b, "\\") != CU_OK)
			return CU_ENOMEM;
		if (cu_buf_add(b, p, 1) != CU_OK)
			return CU_ENOMEM;
	}
	return cu_buf_adds(b, "\"\n") != CU_OK ? CU_ENOMEM : CU_OK;
}

static int as_kubeconfig_text(cu_buf *b, const char *server_url,
    const char *ca_pem, const char *token, cu_error *err)
{
	int rc;

	rc = cu_buf_adds(b, "apiVersion: v1\n"
			    "kind: Config\n"
			    "preferences: {}\n"
			    "clusters:\n"
			    "- name: cueue\n"
			    "  cluster:\n"
			    "    server: ");
	if (rc != CU_OK)
		goto nomem;
	rc = as_yaml_quoted(b, "server URL", server_url, err);
	if (rc != CU_OK)
		return rc == CU_ENOMEM
			   ? cu_error_set(err, rc, "kubeconfig: out of memory")
			   : rc;
	if (ca_pem != NULL) {
		size_t n = strlen(ca_pem);
		size_t enc = 4 * ((n + 2) / 3) + 1;
		unsigned char *out = cu_malloc(enc);

		if (out == NULL)
			goto nomem;
		/* EVP_EncodeBlock writes one line, no newlines: the form
		 * clients expect in *-data fields. */
		EVP_EncodeBlock(out, (const unsigned char *)ca_pem, (int)n);
		rc = cu_buf_addf(b, "    certificate-authority-data: %s\n",
		    (const char *)out);
		cu_free(out);
		if (rc != CU_OK)
			goto nomem;
	}
	rc = cu_buf_adds(b, "contexts:\n"
			    "- name: cueue\n"
			    "  context:\n"
			    "    cluster: cueue\n"
			    "    user: cueue-admin\n"
			    "    namespace: default\n"
			    "current-context: cueue\n"
			    "users:\n"
			    "- name: cueue-admin\n"
			    "  user:");
	if (rc != CU_OK)
		goto nomem;
	if (token == NULL)
		return cu_buf_adds(b, " {}\n") != CU_OK ? CU_ENOMEM : CU_OK;
	if (cu_buf_adds(b, "\n    token: ") != CU_OK)
		goto nomem;
	rc = as_yaml_quoted(b, "token", token, err);
	if (rc != CU_ENOMEM)
		return rc;
nomem:
	return cu_error_set(err, CU_ENOMEM, "kubeconfig: out of memory");
}

int as_kubeconfig_write(const char *path, const char *server_url,
    const char *ca_pem, const char *token, cu_error *err)
{
	cu_buf b;
	char *tmp;
	int fd, rc, e;
	size_t off = 0;

	if (path == NULL || server_url == NULL || server_url[0] == '\0')
		return cu_error_set(err, CU_EINVAL,
		    "kubeconfig: path and server URL are required");
	cu_buf_init(&b, (size_t)1 << 20);
	rc = as_kubeconfig_text(&b, server_url, ca_pem, token, err);
	if (rc != CU_OK) {
		cu_buf_dispose(&b);
		return rc;
	}
	tmp = cu_asprintf("%s.tmp.XXXXXX", path);
	if (tmp == NULL) {
		cu_buf_dispose(&b);
		return cu_error_set(
		    err, CU_ENOMEM, "kubeconfig: out of memory");
	}
	/* mkstemp creates 0600 already; fchmod makes it independent of
	 * libc and of a file left over with that name. */
	fd = mkstemp(tmp);
	if (fd < 0) {
		e = errno;
		rc = cu_error_set(err, CU_EIO, "%s: %s", tmp, strerror(e));
		goto out;
	}
	if (fchmod(fd, 0600) != 0)
		goto io_fail;
	while (off < b.len) {
		ssize_t w = write(fd, b.ptr + off, b.len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			goto io_fail;
		off += (size_t)w;
	}
	if (fsync(fd) != 0)
		goto io_fail;
	if (close(fd) != 0) {
		fd = -1;
		goto io_fail;
	}
	fd = -1;
	if (rename(tmp, path) != 0) {
		e = errno;
		unlink(tmp);
		rc = cu_error_set(err, CU_EIO, "%s: %s", path, strerror(e));
		goto out;
	}
	rc = CU_OK;
	goto out;
io_fail:
	e = errno;
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	rc = cu_error_set(err, CU_EIO, "%s: %s", tmp, strerror(e));
out:
	cu_free(tmp);
	cu_buf_dispose(&b);
	return rc;
}
