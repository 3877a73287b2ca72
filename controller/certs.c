/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/certs.c - the webhook's CA and serving certificate (OpenSSL 3
 * libcrypto): generation, and the validity test of stored material.
 *
 * Everything is built programmatically; the only configuration strings
 * handed to OpenSSL are the constant extension values below. Private keys
 * pass through secure-memory BIOs and are wiped when disposed of. The
 * thread's OpenSSL error queue is left empty on return, so that a later TLS
 * call on the same thread never reads a stale error of ours.
 */
#include "controller/certs.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#define CERTS_CURVE "P-256"
#define CERTS_SERIAL_BITS 128
/* notBefore is this far in the past (cert-controller does the same). */
#define CERTS_BACKDATE_S 3600L
#define CERTS_NS_PER_S 1000000000LL
#define CERTS_DAY_S 86400LL
#define CERTS_TIME_TEXT_MAX 32

/* ---- errors --------------------------------------------------------- */

/* Set err from the OpenSSL error queue (and empty it), naming the step. */
static int certs_ssl_fail(cu_error *err, const char *what)
{
	unsigned long e = ERR_get_error();
	char buf[256] = "unknown error";

	if (e != 0)
		ERR_error_string_n(e, buf, sizeof(buf));
	ERR_clear_error();
	return cu_error_set(err, CU_EIO, "certs: %s: %s", what, buf);
}

static int certs_nomem(cu_error *err)
{
	ERR_clear_error();
	return cu_error_set(err, CU_ENOMEM, "certs: out of memory");
}

/* ---- request validation --------------------------------------------- */

/* A DNS name as a SAN entry: RFC 1123 labels (letters, digits, inner
 * '-'; 1..63 bytes each) joined by '.', optionally led by a "*." wildcard
 * label; nothing that would need quoting anywhere. */
static bool certs_dns_ok(const char *s)
{
	size_t n = strlen(s), label = 0, i;

	if (n == 0 || n > CTL_CERTS_DNS_NAME_MAX)
		return false;
	if (n > 2 && s[0] == '*' && s[1] == '.') {
		s += 2;
		n -= 2;
	}
	for (i = 0; i <= n; i++) {
		char c = s[i];

		if (c == '.' || c == '\0') {
			if (label == 0 || label > 63 || s[i - 1] == '-')
				return false;
			label = 0;
			continue;
		}
		if (c == '-' && label == 0)
			return false;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			(c >= '0' && c <= '9') || c == '-'))
			return false;
		label++;
	}
	return true;
}

static int certs_validate(const struct ctl_certs_request *req, cu_error *err)
{
	size_t i;

	if (req == NULL || req->dns_names == NULL || req->n_dns_names == 0)
		return cu_error_set(
		    err, CU_EINVAL, "certs: at least one DNS name is required");
	if (req->n_dns_names > CTL_CERTS_MAX_DNS_NAMES)
		return cu_error_set(err, CU_EINVAL,
		    "certs: %zu DNS names, at most %u", req->n_dns_names,
		    CTL_CERTS_MAX_DNS_NAMES);
	for (i = 0; i < req->n_dns_names; i++) {
		const char *name = req->dns_names[i];

		if (name == NULL || !certs_dns_ok(name))
			return cu_error_set(err, CU_EINVAL,
			    "certs: DNS name %zu \"%.64s\" is not a DNS name",
			    i, name == NULL ? "(null)" : name);
	}
	if (strlen(req->dns_names[0]) > CTL_CERTS_CN_MAX)
		return cu_error_set(err, CU_EINVAL,
		    "certs: first DNS name is the CN: at most %u bytes",
		    CTL_CERTS_CN_MAX);
	if (req->ca_name != NULL &&
	    (req->ca_name[0] == '\0' ||
		strlen(req->ca_name) > CTL_CERTS_CN_MAX))
		return cu_error_set(err, CU_EINVAL,
		    "certs: CA name must have 1..%u bytes", CTL_CERTS_CN_MAX);
	if (req->ca_days > CTL_CERTS_MAX_DAYS ||
	    req->cert_days > CTL_CERTS_MAX_DAYS)
		return cu_error_set(err, CU_EINVAL,
		    "certs: validity above %u days", CTL_CERTS_MAX_DAYS);
	return CU_OK;
}

/* ---- PEM output ----------------------------------------------------- */

/* Copy a memory BIO's contents into *out [owned: cu_free]. */
static int certs_bio_string(BIO *b, char **out, cu_error *err)
{
	char *data = NULL;
	long n = BIO_get_mem_data(b, &data);

	if (n <= 0 || data == NULL)
		return cu_error_set(err, CU_EIO, "certs: empty PEM output");
	*out = cu_strndup(data, (size_t)n);
	return *out != NULL ? CU_OK : certs_nomem(err);
}

static int certs_pem_cert(X509 *x, char **out, cu_error *err)
{
	BIO *b = BIO_new(BIO_s_mem());
	int rc;

	if (b == NULL)
		return certs_nomem(err);
	if (!PEM_write_bio_X509(b, x))
		rc = certs_ssl_fail(err, "writing certificate PEM");
	else
		rc = certs_bio_string(b, out, err);
	BIO_free(b);
	return rc;
}

/* Unencrypted PKCS#8 ("PRIVATE KEY"), through a BIO whose buffer is wiped
 * when freed. */
static int certs_pem_key(EVP_PKEY *k, char **out, cu_error *err)
{
	BIO *b = BIO_new(BIO_s_secmem());
	int rc;

	if (b == NULL)
		return certs_nomem(err);
	if (!PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL))
		rc = certs_ssl_fail(err, "writing key PEM");
	else
		rc = certs_bio_string(b, out, err);
	BIO_free(b);
	return rc;
}

static void certs_free_secret(char *s)
{
	if (s == NULL)
		return;
	OPENSSL_cleanse(s, strlen(s));
	cu_free(s);
}

/* ---- building certificates ------------------------------------------ */

/* A fixed extension of x, issued by issuer (x itself for the CA). */
static int certs_add_ext(
    X509 *x, X509 *issuer, int nid, const char *value, cu_error *err)
{
	X509V3_CTX ctx;
	X509_EXTENSION *ext;
	int ok;

	X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
	ext = X509V3_EXT_nconf_nid(NULL, &ctx, nid, value);
	if (ext == NULL)
		return certs_ssl_fail(err, OBJ_nid2sn(nid));
	ok = X509_add_ext(x, ext, -1);
	X509_EXTENSION_free(ext);
	return ok ? CU_OK : certs_ssl_fail(err, OBJ_nid2sn(nid));
}

/* The subjectAltName extension: one DNS entry per name. */
static int certs_add_san(
    X509 *x, const struct ctl_certs_request *req, cu_error *err)
{
	GENERAL_NAMES *gens = sk_GENERAL_NAME_new_null();
	int rc = CU_OK;
	size_t i;

	if (gens == NULL)
		return certs_nomem(err);
	for (i = 0; i < req->n_dns_names && rc == CU_OK; i++) {
		const char *name = req->dns_names[i];
		GENERAL_NAME *g = GENERAL_NAME_new();
		ASN1_IA5STRING *ia5 = ASN1_IA5STRING_new();

		if (g == NULL || ia5 == NULL ||
		    !ASN1_STRING_set(ia5, name, (int)strlen(name))) {
			GENERAL_NAME_free(g);
			ASN1_IA5STRING_free(ia5);
			rc = certs_nomem(err);
			break;
		}
		GENERAL_NAME_set0_value(g, GEN_DNS, ia5);
		if (!sk_GENERAL_NAME_push(gens, g)) {
			GENERAL_NAME_free(g);
			rc = certs_nomem(err);
		}
	}
	if (rc == CU_OK && !X509_add1_ext_i2d(x, NID_subject_alt_name, gens, 0,
			       X509V3_ADD_DEFAULT))
		rc = certs_ssl_fail(err, "subjectAltName");
	GENERAL_NAMES_free(gens);
	return rc;
}

/*
 * A certificate skeleton for key into *out [owned: X509_free]: v3, random
 * positive non-zero serial of CERTS_SERIAL_BITS bits, subject CN=cn, valid
 * from CERTS_BACKDATE_S before now_s to `days` days after it.
 */
static int certs_new_cert(X509 **out, EVP_PKEY *key, const char *cn,
    time_t now_s, unsigned days, cu_error *err)
{
	X509 *x = X509_new();
	BIGNUM *bn = BN_new();
	int rc;

	*out = NULL;
	if (x == NULL || bn == NULL) {
		rc = certs_nomem(err);
		goto fail;
	}
	do {
		if (!BN_rand(bn, CERTS_SERIAL_BITS, BN_RAND_TOP_ANY,
			BN_RAND_BOTTOM_ANY)) {
			rc = certs_ssl_fail(err, "serial number");
			goto fail;
		}
	} while (BN_is_zero(bn));
	if (!X509_set_version(x, X509_VERSION_3) ||
	    BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) == NULL ||
	    X509_time_adj_ex(
		X509_getm_notBefore(x), 0, -CERTS_BACKDATE_S, &now_s) == NULL ||
	    X509_time_adj_ex(X509_getm_notAfter(x), (int)days, 0, &now_s) ==
		NULL ||
	    !X509_set_pubkey(x, key) ||
	    !X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN",
		MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0)) {
		rc = certs_ssl_fail(err, "building certificate");
		goto fail;
	}
	BN_free(bn);
	*out = x;
	return CU_OK;
fail:
	BN_free(bn);
	X509_free(x);
	return rc;
}

static int certs_make_ca(X509 **out, EVP_PKEY *key, const char *cn,
    time_t now_s, unsigned days, cu_error *err)
{
	X509 *ca = NULL;
	int rc = certs_new_cert(&ca, key, cn, now_s, days, err);

	*out = NULL;
	if (rc != CU_OK)
		return rc;
	if (!X509_set_issuer_name(ca, X509_get_subject_name(ca))) {
		rc = certs_ssl_fail(err, "CA issuer");
		goto fail;
	}
	rc = certs_add_ext(
	    ca, ca, NID_basic_constraints, "critical,CA:TRUE", err);
	if (rc == CU_OK)
		rc = certs_add_ext(
		    ca, ca, NID_key_usage, "critical,keyCertSign,cRLSign", err);
	if (rc == CU_OK)
		rc = certs_add_ext(
		    ca, ca, NID_subject_key_identifier, "hash", err);
	if (rc != CU_OK)
		goto fail;
	if (!X509_sign(ca, key, EVP_sha256())) {
		rc = certs_ssl_fail(err, "signing the CA");
		goto fail;
	}
	*out = ca;
	return CU_OK;
fail:
	X509_free(ca);
	return rc;
}

static int certs_make_leaf(X509 **out, EVP_PKEY *key, X509 *ca,
    EVP_PKEY *ca_key, const struct ctl_certs_request *req, time_t now_s,
    unsigned days, cu_error *err)
{
	X509 *x = NULL;
	int rc = certs_new_cert(&x, key, req->dns_names[0], now_s, days, err);

	*out = NULL;
	if (rc != CU_OK)
		return rc;
	if (!X509_set_issuer_name(x, X509_get_subject_name(ca))) {
		rc = certs_ssl_fail(err, "issuer name");
		goto fail;
	}
	rc = certs_add_ext(
	    x, ca, NID_basic_constraints, "critical,CA:FALSE", err);
	if (rc == CU_OK)
		rc = certs_add_ext(x, ca, NID_key_usage,
		    "critical,digitalSignature,keyEncipherment", err);
	if (rc == CU_OK)
		rc = certs_add_ext(x, ca, NID_ext_key_usage, "serverAuth", err);
	if (rc == CU_OK)
		rc = certs_add_ext(
		    x, ca, NID_subject_key_identifier, "hash", err);
	if (rc == CU_OK)
		rc = certs_add_ext(
		    x, ca, NID_authority_key_identifier, "keyid:always", err);
	if (rc == CU_OK)
		rc = certs_add_san(x, req, err);
	if (rc != CU_OK)
		goto fail;
	if (!X509_sign(x, ca_key, EVP_sha256())) {
		rc = certs_ssl_fail(err, "signing the serving certificate");
		goto fail;
	}
	*out = x;
	return CU_OK;
fail:
	X509_free(x);
	return rc;
}

void ctl_certs_dispose(struct ctl_certs *c)
{
	if (c == NULL)
		return;
	cu_free(c->ca_cert_pem);
	certs_free_secret(c->ca_key_pem);
	cu_free(c->cert_pem);
	certs_free_secret(c->key_pem);
	memset(c, 0, sizeof(*c));
}

int ctl_certs_generate(
    const struct ctl_certs_request *req, struct ctl_certs *out, cu_error *err)
{
	EVP_PKEY *ca_key = NULL, *key = NULL;
	X509 *ca = NULL, *x = NULL;
	unsigned ca_days, cert_days;
	time_t now_s;
	int rc;

	if (out == NULL)
		return cu_error_set(err, CU_EINVAL, "certs: no output");
	memset(out, 0, sizeof(*out));
	rc = certs_validate(req, err);
	if (rc != CU_OK)
		return rc;
	ca_days = req->ca_days != 0 ? req->ca_days : CTL_CERTS_DEFAULT_CA_DAYS;
	cert_days =
	    req->cert_days != 0 ? req->cert_days : CTL_CERTS_DEFAULT_CERT_DAYS;
	if (cert_days > ca_days)
		cert_days = ca_days;
	now_s = (time_t)(cu_time_now_ns() / CERTS_NS_PER_S);

	ca_key = EVP_EC_gen(CERTS_CURVE);
	key = EVP_EC_gen(CERTS_CURVE);
	if (ca_key == NULL || key == NULL) {
		rc = certs_ssl_fail(err, "generating a P-256 key");
		goto out;
	}
	rc = certs_make_ca(&ca, ca_key,
	    req->ca_name != NULL ? req->ca_name : CTL_CERTS_DEFAULT_CA_NAME,
	    now_s, ca_days, err);
	if (rc == CU_OK)
		rc = certs_make_leaf(
		    &x, key, ca, ca_key, req, now_s, cert_days, err);
	if (rc == CU_OK)
		rc = certs_pem_cert(ca, &out->ca_cert_pem, err);
	if (rc == CU_OK)
		rc = certs_pem_key(ca_key, &out->ca_key_pem, err);
	if (rc == CU_OK)
		rc = certs_pem_cert(x, &out->cert_pem, err);
	if (rc == CU_OK)
		rc = certs_pem_key(key, &out->key_pem, err);
	if (rc == CU_OK)
		out->not_after_ns =
		    ((int64_t)now_s + (int64_t)cert_days * CERTS_DAY_S) *
		    CERTS_NS_PER_S;
out:
	X509_free(x);
	X509_free(ca);
	EVP_PKEY_free(key);
	EVP_PKEY_free(ca_key);
	ERR_clear_error();
	if (rc != CU_OK)
		ctl_certs_dispose(out);
	return rc;
}

/* ---- checking stored material ---------------------------------------- */

/* A passphrase callback that refuses: an encrypted key is invalid here,
 * and OpenSSL's default would prompt on the terminal. */
static int certs_no_passphrase(char *buf, int size, int rwflag, void *u)
{
	(void)buf;
	(void)size;
	(void)rwflag;
	(void)u;
	return -1;
}

/* The first certificate (key when `key`) of pem into *x or *k; both stay
 * NULL when it does not parse. CU_ENOMEM only when no BIO could be made. */
static int certs_read(const char *pem, bool key, X509 **x, EVP_PKEY **k)
{
	BIO *b = BIO_new_mem_buf(pem, -1);

	if (b == NULL)
		return CU_ENOMEM;
	if (key)
		*k =
		    PEM_read_bio_PrivateKey(b, NULL, certs_no_passphrase, NULL);
	else
		*x = PEM_read_bio_X509(b, NULL, certs_no_passphrase, NULL);
	BIO_free(b);
	return CU_OK;
}

/* Seconds since the epoch of an ASN1_TIME; false when unreadable. */
static bool certs_time_s(const ASN1_TIME *t, int64_t *out)
{
	struct tm tm;
	time_t s;

	memset(&tm, 0, sizeof(tm));
	if (t == NULL || ASN1_TIME_to_tm(t, &tm) != 1)
		return false;
	s = timegm(&tm);
	if (s == (time_t)-1)
		return false;
	*out = (int64_t)s;
	return true;
}

static void certs_time_text(int64_t s, char out[CERTS_TIME_TEXT_MAX])
{
	time_t t = (time_t)s;
	struct tm tm;

	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(out, CERTS_TIME_TEXT_MAX, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(out, CERTS_TIME_TEXT_MAX, "%lld s", (long long)s);
}

/*
 * Validity window of x (named `what`) against now and now + renew. With
 * integer seconds T and ns L >= 0, T*1e9 > L iff T > L/1e9 (floor), and
 * T*1e9 <= L iff T <= L/1e9, so comparing whole seconds is exact. True
 * when fine; else false with the reason in err.
 */
static bool certs_times_ok(const X509 *x, const char *what, int64_t now_ns,
    int64_t renew_ns, cu_error *err)
{
	int64_t nb, na, now_s = now_ns / CERTS_NS_PER_S, limit_s;
	char text[CERTS_TIME_TEXT_MAX];

	/* A window reaching past the year 2262 means: always renew. */
	limit_s = renew_ns > INT64_MAX - now_ns
		      ? INT64_MAX
		      : (now_ns + renew_ns) / CERTS_NS_PER_S;
	if (!certs_time_s(X509_get0_notBefore(x), &nb) ||
	    !certs_time_s(X509_get0_notAfter(x), &na)) {
		cu_error_set(err, CU_OK, "%s: validity does not parse", what);
		return false;
	}
	if (nb > now_s) {
		certs_time_text(nb, text);
		cu_error_set(err, CU_OK, "%s: not valid before %s", what, text);
		return false;
	}
	if (na <= now_s) {
		certs_time_text(na, text);
		cu_error_set(err, CU_OK, "%s: expired at %s", what, text);
		return false;
	}
	if (na <= limit_s) {
		certs_time_text(na, text);
		cu_error_set(err, CU_OK,
		    "%s: expires at %s, within the renewal window of %lld s",
		    what, text, (long long)(renew_ns / CERTS_NS_PER_S));
		return false;
	}
	return true;
}

/* X509_verify_cert of cert with ca as the only trust anchor, at now_s, for
 * TLS server use: *ok, and *why [static] when not. False when the
 * verification could not be set up. */
static bool certs_verify_chain(
    X509 *ca, X509 *cert, time_t now_s, bool *ok, const char **why)
{
	X509_STORE *store = X509_STORE_new();
	X509_STORE_CTX *ctx = X509_STORE_CTX_new();
	X509_VERIFY_PARAM *param;
	bool set_up = false;

	*ok = false;
	if (store == NULL || ctx == NULL || !X509_STORE_add_cert(store, ca) ||
	    !X509_STORE_CTX_init(ctx, store, cert, NULL))
		goto out;
	param = X509_STORE_CTX_get0_param(ctx);
	X509_VERIFY_PARAM_set_time(param, now_s);
	/* The CA is trusted as given, as Go's Roots pool would (an
	 * intermediate is an anchor too). */
	X509_VERIFY_PARAM_set_flags(param, X509_V_FLAG_PARTIAL_CHAIN);
	if (!X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_SERVER))
		goto out;
	set_up = true;
	*ok = X509_verify_cert(ctx) == 1;
	if (!*ok)
		*why = X509_verify_cert_error_string(
		    X509_STORE_CTX_get_error(ctx));
out:
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(store);
	return set_up;
}

/* The checks after argument validation; *valid set only when all pass. */
static int certs_check(const char *ca_pem, const char *cert_pem,
    const char *key_pem, const char *const *dns_names, size_t n, int64_t now_ns,
    int64_t renew_ns, bool *valid, cu_error *err)
{
	X509 *ca = NULL, *cert = NULL;
	EVP_PKEY *key = NULL;
	const char *why = "unknown";
	bool ok = false;
	size_t i;
	int rc = CU_OK;

	if (ca_pem == NULL || ca_pem[0] == '\0') {
		cu_error_set(err, CU_OK, "CA certificate: missing");
		goto out;
	}
	if (cert_pem == NULL || cert_pem[0] == '\0') {
		cu_error_set(err, CU_OK, "serving certificate: missing");
		goto out;
	}
	if (key_pem == NULL || key_pem[0] == '\0') {
		cu_error_set(err, CU_OK, "serving key: missing");
		goto out;
	}
	rc = certs_read(ca_pem, false, &ca, NULL);
	if (rc == CU_OK)
		rc = certs_read(cert_pem, false, &cert, NULL);
	if (rc == CU_OK)
		rc = certs_read(key_pem, true, NULL, &key);
	if (rc != CU_OK) {
		rc = certs_nomem(err);
		goto out;
	}
	if (ca == NULL || cert == NULL || key == NULL) {
		cu_error_set(err, CU_OK, "%s: not PEM or does not parse",
		    ca == NULL	   ? "CA certificate"
		    : cert == NULL ? "serving certificate"
				   : "serving key");
		goto out;
	}
	if (X509_check_ca(ca) == 0) {
		cu_error_set(err, CU_OK, "CA certificate: not a CA");
		goto out;
	}
	if (X509_check_private_key(cert, key) != 1) {
		cu_error_set(err, CU_OK,
		    "serving key: does not match the serving certificate");
		goto out;
	}
	if (!certs_times_ok(
		cert, "serving certificate", now_ns, renew_ns, err) ||
	    !certs_times_ok(ca, "CA certificate", now_ns, renew_ns, err))
		goto out;
	if (!certs_verify_chain(
		ca, cert, (time_t)(now_ns / CERTS_NS_PER_S), &ok, &why)) {
		rc = certs_ssl_fail(err, "setting up verification");
		goto out;
	}
	if (!ok) {
		cu_error_set(err, CU_OK,
		    "serving certificate: does not verify against the CA: %s",
		    why);
		goto out;
	}
	for (i = 0; i < n; i++) {
		const char *name = dns_names[i];

		/* SANs only (Go ignores the CN); "*.x" may not match "a.b.x"
		 * nor "ab*.x" anything. */
		if (X509_check_host(cert, name, strlen(name),
			X509_CHECK_FLAG_NEVER_CHECK_SUBJECT |
			    X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS,
			NULL) != 1) {
			cu_error_set(err, CU_OK,
			    "serving certificate: no subjectAltName for "
			    "\"%.253s\"",
			    name);
			goto out;
		}
	}
	*valid = true;
	cu_error_clear(err);
out:
	X509_free(ca);
	X509_free(cert);
	EVP_PKEY_free(key);
	ERR_clear_error();
	return rc;
}

int ctl_certs_check(const char *ca_pem, const char *cert_pem,
    const char *key_pem, const char *const *dns_names, size_t n, int64_t now_ns,
    int64_t renew_before_ns, bool *valid, cu_error *err)
{
	size_t i;

	if (valid == NULL)
		return cu_error_set(err, CU_EINVAL, "certs: no result");
	*valid = false;
	if (n > 0 && dns_names == NULL)
		return cu_error_set(err, CU_EINVAL, "certs: no DNS names");
	for (i = 0; i < n; i++)
		if (dns_names[i] == NULL)
			return cu_error_set(
			    err, CU_EINVAL, "certs: DNS name %zu is NULL", i);
	if (now_ns < 0 || renew_before_ns < 0)
		return cu_error_set(
		    err, CU_EINVAL, "certs: negative time or renewal window");
	if (now_ns == 0)
		now_ns = cu_time_now_ns();
	return certs_check(ca_pem, cert_pem, key_pem, dns_names, n, now_ns,
	    renew_before_ns, valid, err);
}
