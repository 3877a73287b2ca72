/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/controller_certs_test.c - controller/certs: the generated CA
 * and serving certificate carry the profile the header promises; the check
 * accepts a fresh set and rejects a wrong name, an expiring or expired or
 * not-yet-valid certificate (and CA), a key or certificate from another
 * set, swapped or garbage PEM and an encrypted key (without prompting);
 * bad requests and allocation failures fail cleanly; and a GnuTLS server
 * (controller/httpd) serves the pair to a libcurl client that verifies it
 * with the CA by the Service's DNS names.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <ev.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "controller/certs.h"
#include "controller/httpd.h"

#define NS_PER_S 1000000000LL
#define DAY_NS (86400LL * NS_PER_S)
#define SVC "cueue-webhook-service.cueue-system.svc"
#define SVC_LOCAL "cueue-webhook-service.cueue-system.svc.cluster.local"

static const char *const names[] = {SVC, SVC_LOCAL};
#define N_NAMES (sizeof(names) / sizeof(names[0]))

static void gen(struct ctl_certs *c, unsigned ca_days, unsigned cert_days)
{
	struct ctl_certs_request req = {
	    .dns_names = names,
	    .n_dns_names = N_NAMES,
	    .ca_days = ca_days,
	    .cert_days = cert_days,
	};
	cu_error err;

	cr_assert_eq(ctl_certs_generate(&req, c, &err), CU_OK, "%s", err.msg);
	cr_assert_not_null(c->ca_cert_pem);
	cr_assert_not_null(c->ca_key_pem);
	cr_assert_not_null(c->cert_pem);
	cr_assert_not_null(c->key_pem);
}

/* Check with the default names; returns validity, reason into *err. */
static bool check_at(const struct ctl_certs *c, const char *ca,
    const char *cert, const char *key, int64_t now_ns, int64_t renew_ns,
    cu_error *err)
{
	bool valid = true;

	(void)c;
	cr_assert_eq(ctl_certs_check(ca, cert, key, names, N_NAMES, now_ns,
			 renew_ns, &valid, err),
	    CU_OK, "%s", err->msg);
	cr_assert_eq(err->code, CU_OK);
	if (!valid)
		cr_assert_neq(err->msg[0], '\0', "invalid without a reason");
	return valid;
}

static bool check(
    const struct ctl_certs *c, int64_t now_ns, int64_t renew_ns, cu_error *err)
{
	return check_at(
	    c, c->ca_cert_pem, c->cert_pem, c->key_pem, now_ns, renew_ns, err);
}

static X509 *parse_cert(const char *pem)
{
	BIO *b = BIO_new_mem_buf(pem, -1);
	X509 *x = PEM_read_bio_X509(b, NULL, NULL, NULL);

	BIO_free(b);
	cr_assert_not_null(x);
	return x;
}

static int64_t asn1_s(const ASN1_TIME *t)
{
	struct tm tm;

	memset(&tm, 0, sizeof(tm));
	cr_assert_eq(ASN1_TIME_to_tm(t, &tm), 1);
	return (int64_t)timegm(&tm);
}

/* ---- generation ------------------------------------------------------ */

Test(ctl_certs, generated_set_has_the_kueue_style_profile)
{
	struct ctl_certs c;
	X509 *ca, *x;
	EVP_PKEY *pub;
	GENERAL_NAMES *sans;
	BIGNUM *serial;
	char cn[128], group[64];
	int64_t now_s = cu_time_now_ns() / NS_PER_S, nb, na;
	int i;

	gen(&c, 0, 0);
	cr_expect_eq(strncmp(c.key_pem, "-----BEGIN PRIVATE KEY-----\n", 28), 0,
	    "key is not unencrypted PKCS#8");
	cr_expect_eq(
	    strncmp(c.ca_key_pem, "-----BEGIN PRIVATE KEY-----\n", 28), 0);
	cr_expect_eq(
	    strncmp(c.cert_pem, "-----BEGIN CERTIFICATE-----\n", 28), 0);
	ca = parse_cert(c.ca_cert_pem);
	x = parse_cert(c.cert_pem);

	/* CA. */
	cr_expect_eq(X509_check_ca(ca), 1);
	cr_expect(X509_get_extension_flags(ca) & EXFLAG_CA);
	cr_expect_eq(X509_get_key_usage(ca), KU_KEY_CERT_SIGN | KU_CRL_SIGN);
	cr_expect_eq(
	    X509_get_ext_by_NID(ca, NID_basic_constraints, -1) >= 0, true);
	cr_expect(X509_EXTENSION_get_critical(X509_get_ext(
	    ca, X509_get_ext_by_NID(ca, NID_basic_constraints, -1))));
	cr_expect(X509_EXTENSION_get_critical(
	    X509_get_ext(ca, X509_get_ext_by_NID(ca, NID_key_usage, -1))));
	cr_expect_gt(X509_NAME_get_text_by_NID(X509_get_subject_name(ca),
			 NID_commonName, cn, sizeof(cn)),
	    0);
	cr_expect_str_eq(cn, CTL_CERTS_DEFAULT_CA_NAME);
	cr_expect_eq(X509_check_issued(ca, ca), X509_V_OK);
	nb = asn1_s(X509_get0_notBefore(ca));
	na = asn1_s(X509_get0_notAfter(ca));
	cr_expect(nb <= now_s - 3600 + 5 && nb >= now_s - 3600 - 5);
	cr_expect_eq(na - nb, 3650LL * 86400 + 3600);

	/* Serving certificate. */
	cr_expect_eq(X509_check_ca(x), 0);
	cr_expect_eq(
	    X509_get_key_usage(x), KU_DIGITAL_SIGNATURE | KU_KEY_ENCIPHERMENT);
	cr_expect_eq(X509_get_extended_key_usage(x), XKU_SSL_SERVER);
	cr_expect_eq(X509_check_issued(ca, x), X509_V_OK);
	cr_expect_gt(X509_NAME_get_text_by_NID(X509_get_subject_name(x),
			 NID_commonName, cn, sizeof(cn)),
	    0);
	cr_expect_str_eq(cn, SVC);
	sans = X509_get_ext_d2i(x, NID_subject_alt_name, NULL, NULL);
	cr_assert_not_null(sans);
	cr_assert_eq(sk_GENERAL_NAME_num(sans), (int)N_NAMES);
	for (i = 0; i < (int)N_NAMES; i++) {
		GENERAL_NAME *g = sk_GENERAL_NAME_value(sans, i);

		cr_expect_eq(g->type, GEN_DNS);
		cr_expect_str_eq(
		    (const char *)ASN1_STRING_get0_data(g->d.dNSName),
		    names[i]);
	}
	GENERAL_NAMES_free(sans);
	nb = asn1_s(X509_get0_notBefore(x));
	na = asn1_s(X509_get0_notAfter(x));
	cr_expect_eq(na - nb, 365LL * 86400 + 3600);
	cr_expect_eq(c.not_after_ns, na * NS_PER_S);

	/* Keys: P-256; serials: positive, at most 128 bits, distinct. */
	pub = X509_get0_pubkey(x);
	cr_assert_not_null(pub);
	cr_expect_eq(EVP_PKEY_get_base_id(pub), EVP_PKEY_EC);
	cr_assert_eq(
	    EVP_PKEY_get_group_name(pub, group, sizeof(group), NULL), 1);
	cr_expect_str_eq(group, "prime256v1");
	serial = ASN1_INTEGER_to_BN(X509_get0_serialNumber(x), NULL);
	cr_assert_not_null(serial);
	cr_expect(!BN_is_negative(serial) && !BN_is_zero(serial));
	cr_expect_leq(BN_num_bits(serial), 128);
	cr_expect_gt(BN_num_bits(serial), 64); /* 2^-64 odds of a flake */
	cr_expect_neq(ASN1_INTEGER_cmp(X509_get0_serialNumber(x),
			  X509_get0_serialNumber(ca)),
	    0);
	BN_free(serial);
	X509_free(x);
	X509_free(ca);
	ctl_certs_dispose(&c);
	cr_expect_null(c.key_pem);
	ctl_certs_dispose(NULL);
}

Test(ctl_certs, serving_validity_is_cut_to_the_ca_and_days_are_honoured)
{
	struct ctl_certs c;
	X509 *ca, *x;

	gen(&c, 30, 400);
	ca = parse_cert(c.ca_cert_pem);
	x = parse_cert(c.cert_pem);
	cr_expect_eq(
	    asn1_s(X509_get0_notAfter(ca)), asn1_s(X509_get0_notAfter(x)));
	cr_expect_eq(
	    asn1_s(X509_get0_notAfter(x)) - asn1_s(X509_get0_notBefore(x)),
	    30LL * 86400 + 3600);
	X509_free(x);
	X509_free(ca);
	ctl_certs_dispose(&c);
}

Test(ctl_certs, bad_requests_are_einval)
{
	static const char *const bad[] = {"", "a b", "-a.svc", "a-.svc",
	    "a..svc", ".a.svc", "a.svc.", "*", "*.", "a.*.svc", "a/b", "a\"b",
	    "x.svc\n"};
	const char *one[1], *too_many[CTL_CERTS_MAX_DNS_NAMES + 1];
	char long_cn[CTL_CERTS_CN_MAX + 6]; /* 69 bytes */
	struct ctl_certs_request req = {.dns_names = one, .n_dns_names = 1};
	struct ctl_certs c;
	cu_error err;
	size_t i;

	cr_expect_eq(ctl_certs_generate(NULL, &c, &err), CU_EINVAL);
	cr_expect_null(c.cert_pem);
	cr_expect_eq(ctl_certs_generate(&req, NULL, &err), CU_EINVAL);
	req.n_dns_names = 0;
	cr_expect_eq(ctl_certs_generate(&req, &c, &err), CU_EINVAL);
	req.n_dns_names = 1;
	one[0] = NULL;
	cr_expect_eq(ctl_certs_generate(&req, &c, &err), CU_EINVAL);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		one[0] = bad[i];
		cr_expect_eq(ctl_certs_generate(&req, &c, &err), CU_EINVAL,
		    "accepted \"%s\"", bad[i]);
		cr_expect_null(c.cert_pem);
	}
	/* A valid DNS name (labels of 32) too long to be a CN. */
	memset(long_cn, 'a', sizeof(long_cn) - 1);
	long_cn[32] = '.';
	long_cn[sizeof(long_cn) - 1] = '\0';
	one[0] = long_cn;
	cr_expect_eq(ctl_certs_generate(&req, &c, &err), CU_EINVAL);
	cr_expect_not_null(strstr(err.msg, "CN"), "%s", err.msg);
	one[0] = SVC;
	req.ca_days = CTL_CERTS_MAX_DAYS + 1;
	cr_expect_eq(ctl_certs_generate(&req, &c, &err), CU_EINVAL);
	req.ca_days = 0;
	req.ca_name = "";
	cr_expect_eq(ctl_certs_generate(&req, &c, &err), CU_EINVAL);
	req.ca_name = NULL;
	for (i = 0; i <= CTL_CERTS_MAX_DNS_NAMES; i++)
		too_many[i] = SVC;
	req.dns_names = too_many;
	req.n_dns_names = CTL_CERTS_MAX_DNS_NAMES + 1;
	cr_expect_eq(ctl_certs_generate(&req, &c, &err), CU_EINVAL);
	/* A wildcard and a custom CA name are fine. */
	one[0] = "*.cueue-system.svc";
	req.dns_names = one;
	req.n_dns_names = 1;
	req.ca_name = "kueue-ca";
	cr_assert_eq(ctl_certs_generate(&req, &c, &err), CU_OK, "%s", err.msg);
	ctl_certs_dispose(&c);
}

Test(ctl_certs, allocation_failures_fail_cleanly)
{
	struct ctl_certs_request req = {
	    .dns_names = names, .n_dns_names = N_NAMES};
	struct ctl_certs c;
	cu_error err;
	uint64_t n;
	int rc = CU_ENOMEM;

	for (n = 1; n < 64 && rc != CU_OK; n++) {
		cu_mem_fail_after(n, false);
		rc = ctl_certs_generate(&req, &c, &err);
		cu_mem_fail_after(0, false);
		if (rc != CU_OK) {
			cr_expect_eq(rc, CU_ENOMEM, "n=%llu: %s",
			    (unsigned long long)n, err.msg);
			cr_expect_null(c.ca_cert_pem);
			cr_expect_null(c.key_pem);
		}
	}
	cr_assert_eq(rc, CU_OK);
	ctl_certs_dispose(&c);
}

/* ---- checking -------------------------------------------------------- */

Test(ctl_certs, fresh_set_is_valid)
{
	struct ctl_certs c;
	cu_error err;
	bool valid = false;

	gen(&c, 0, 0);
	cr_expect(check(&c, 0, 90 * DAY_NS, &err), "%s", err.msg);
	cr_expect_str_eq(err.msg, "");
	cr_expect(check(&c, cu_time_now_ns(), 0, &err), "%s", err.msg);
	/* Names are optional and case-insensitive. */
	cr_expect_eq(ctl_certs_check(c.ca_cert_pem, c.cert_pem, c.key_pem, NULL,
			 0, 0, 0, &valid, &err),
	    CU_OK);
	cr_expect(valid, "%s", err.msg);
	{
		const char *upper[] = {
		    "CUEUE-WEBHOOK-SERVICE.cueue-system.SVC"};

		cr_expect_eq(ctl_certs_check(c.ca_cert_pem, c.cert_pem,
				 c.key_pem, upper, 1, 0, 0, &valid, &err),
		    CU_OK);
		cr_expect(valid, "%s", err.msg);
	}
	/* A NULL err is fine. */
	cr_expect_eq(ctl_certs_check(c.ca_cert_pem, c.cert_pem, c.key_pem,
			 names, N_NAMES, 0, 0, &valid, NULL),
	    CU_OK);
	cr_expect(valid);
	ctl_certs_dispose(&c);
}

Test(ctl_certs, a_name_missing_from_the_sans_is_invalid)
{
	static const char *const cases[][1] = {{"cueue-webhook-service"},
	    {"other.cueue-system.svc"}, {"x." SVC}, {"127.0.0.1"}};
	struct ctl_certs c;
	cu_error err;
	bool valid = true;
	size_t i;

	gen(&c, 0, 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cr_expect_eq(ctl_certs_check(c.ca_cert_pem, c.cert_pem,
				 c.key_pem, cases[i], 1, 0, 0, &valid, &err),
		    CU_OK);
		cr_expect_not(valid, "%s accepted", cases[i][0]);
		cr_expect_not_null(strstr(err.msg, cases[i][0]), "%s", err.msg);
	}
	/* One good name and one bad one: still invalid. */
	{
		const char *both[] = {SVC, "webhook.other.svc"};

		cr_expect_eq(ctl_certs_check(c.ca_cert_pem, c.cert_pem,
				 c.key_pem, both, 2, 0, 0, &valid, &err),
		    CU_OK);
		cr_expect_not(valid);
	}
	ctl_certs_dispose(&c);
}

Test(ctl_certs, expiring_expired_and_not_yet_valid_are_invalid)
{
	struct ctl_certs c;
	cu_error err;
	int64_t t0 = cu_time_now_ns();

	gen(&c, 0, 365);
	/* 300 days in: 65 days left. */
	cr_expect_not(check(&c, t0 + 300 * DAY_NS, 90 * DAY_NS, &err));
	cr_expect_not_null(strstr(err.msg, "renewal window"), "%s", err.msg);
	cr_expect_not_null(strstr(err.msg, "serving certificate"));
	cr_expect(
	    check(&c, t0 + 300 * DAY_NS, 30 * DAY_NS, &err), "%s", err.msg);
	/* Exactly at the boundary: notAfter must be strictly later. */
	cr_expect_not(
	    check(&c, c.not_after_ns - 90 * DAY_NS, 90 * DAY_NS, &err));
	cr_expect(check(&c, c.not_after_ns - 90 * DAY_NS - NS_PER_S,
		      90 * DAY_NS, &err),
	    "%s", err.msg);
	/* Expired. */
	cr_expect_not(check(&c, t0 + 400 * DAY_NS, 0, &err));
	cr_expect_not_null(strstr(err.msg, "expired"), "%s", err.msg);
	cr_expect_not(check(&c, c.not_after_ns, 0, &err));
	/* Before notBefore (an hour before generation). */
	cr_expect_not(check(&c, t0 - 2 * 3600 * NS_PER_S, 0, &err));
	cr_expect_not_null(strstr(err.msg, "not valid before"), "%s", err.msg);
	cr_expect(check(&c, t0 - 1800 * NS_PER_S, 0, &err), "%s", err.msg);
	/* A window beyond the year 2262 always asks for renewal. */
	cr_expect_not(check(&c, 0, INT64_MAX, &err));
	ctl_certs_dispose(&c);

	/* A 100-day CA: the serving certificate is cut to it and renewed
	 * with it. */
	gen(&c, 100, 0);
	cr_expect_not(check(&c, t0 + 50 * DAY_NS, 60 * DAY_NS, &err));
	cr_expect(
	    check(&c, t0 + 50 * DAY_NS, 40 * DAY_NS, &err), "%s", err.msg);
	ctl_certs_dispose(&c);
}

Test(ctl_certs, parts_of_another_set_are_invalid)
{
	struct ctl_certs a, b;
	cu_error err;

	gen(&a, 0, 0);
	gen(&b, 0, 0);
	/* Key of another pair. */
	cr_expect_not(
	    check_at(&a, a.ca_cert_pem, a.cert_pem, b.key_pem, 0, 0, &err));
	cr_expect_not_null(strstr(err.msg, "does not match"), "%s", err.msg);
	/* Certificate (with its key) from another CA of the same name. */
	cr_expect_not(
	    check_at(&a, a.ca_cert_pem, b.cert_pem, b.key_pem, 0, 0, &err));
	cr_expect_not_null(strstr(err.msg, "does not verify"), "%s", err.msg);
	/* Swapped roles. */
	cr_expect_not(
	    check_at(&a, a.cert_pem, a.cert_pem, a.key_pem, 0, 0, &err));
	cr_expect_not_null(strstr(err.msg, "not a CA"), "%s", err.msg);
	cr_expect_not(check_at(
	    &a, a.ca_cert_pem, a.ca_cert_pem, a.ca_key_pem, 0, 0, &err));
	cr_expect_not(
	    check_at(&a, a.ca_cert_pem, a.cert_pem, a.ca_key_pem, 0, 0, &err));
	ctl_certs_dispose(&a);
	ctl_certs_dispose(&b);
}

/* Copy of s with the `at`-th byte changed. */
static char *flip(const char *s, size_t at)
{
	char *d = cu_strdup(s);

	cr_assert_not_null(d);
	d[at] = d[at] == 'A' ? 'B' : 'A';
	return d;
}

Test(ctl_certs, garbage_and_encrypted_input_is_invalid_without_crashing)
{
	struct ctl_certs c;
	cu_error err;
	bool valid = true;
	char *half, *bad_body, *bad_sig, *enc_key;
	static char binary[4096];
	const char *garbage[] = {NULL, "", "garbage",
	    "-----BEGIN CERTIFICATE-----",
	    "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n",
	    "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
	    binary};
	size_t i, j, n;
	BIO *b;
	EVP_PKEY *k;

	gen(&c, 0, 0);
	for (i = 0; i < sizeof(binary) - 1; i++)
		binary[i] = (char)(1 + (i * 131) % 255);
	n = strlen(c.cert_pem);
	half = cu_strndup(c.cert_pem, n / 2);
	cr_assert_not_null(half);
	/* A byte inside the base64 body (the TBS part), and one near the end
	 * (the signature). */
	bad_body = flip(c.cert_pem, 28 + 100);
	bad_sig = flip(c.cert_pem, n - 40);
	b = BIO_new_mem_buf(c.key_pem, -1);
	k = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL);
	BIO_free(b);
	cr_assert_not_null(k);
	b = BIO_new(BIO_s_mem());
	cr_assert(PEM_write_bio_PrivateKey(b, k, EVP_aes_256_cbc(),
	    (const unsigned char *)"secret", 6, NULL, NULL));
	{
		char *data = NULL;
		long len = BIO_get_mem_data(b, &data);

		enc_key = cu_strndup(data, (size_t)len);
		cr_assert_not_null(enc_key);
	}
	BIO_free(b);
	EVP_PKEY_free(k);
	cr_assert_not_null(strstr(enc_key, "ENCRYPTED"));

	for (i = 0; i < sizeof(garbage) / sizeof(garbage[0]); i++) {
		for (j = 0; j < 3; j++) {
			const char *ca = j == 0 ? garbage[i] : c.ca_cert_pem;
			const char *cert = j == 1 ? garbage[i] : c.cert_pem;
			const char *key = j == 2 ? garbage[i] : c.key_pem;

			cr_expect_eq(ctl_certs_check(ca, cert, key, names,
					 N_NAMES, 0, 0, &valid, &err),
			    CU_OK, "%s", err.msg);
			cr_expect_not(valid, "garbage %zu in slot %zu", i, j);
		}
	}
	cr_expect_not(check_at(&c, c.ca_cert_pem, half, c.key_pem, 0, 0, &err));
	cr_expect_not(check_at(&c, half, c.cert_pem, c.key_pem, 0, 0, &err));
	/* A changed byte either breaks the parse, the key match or the
	 * signature: invalid in every case. */
	cr_expect_not(
	    check_at(&c, c.ca_cert_pem, bad_body, c.key_pem, 0, 0, &err));
	cr_expect_not(
	    check_at(&c, c.ca_cert_pem, bad_sig, c.key_pem, 0, 0, &err));
	cr_expect_not(
	    check_at(&c, c.ca_cert_pem, c.cert_pem, enc_key, 0, 0, &err));
	cr_expect_not_null(strstr(err.msg, "serving key"), "%s", err.msg);
	/* Still valid with the real pieces after all that. */
	cr_expect(check(&c, 0, 0, &err), "%s", err.msg);

	cu_free(half);
	cu_free(bad_body);
	cu_free(bad_sig);
	cu_free(enc_key);
	ctl_certs_dispose(&c);
}

Test(ctl_certs, check_argument_errors)
{
	struct ctl_certs c;
	cu_error err;
	bool valid = true;
	const char *null_name[] = {NULL};

	gen(&c, 0, 0);
	cr_expect_eq(ctl_certs_check(c.ca_cert_pem, c.cert_pem, c.key_pem,
			 names, N_NAMES, 0, 0, NULL, &err),
	    CU_EINVAL);
	cr_expect_eq(ctl_certs_check(c.ca_cert_pem, c.cert_pem, c.key_pem, NULL,
			 1, 0, 0, &valid, &err),
	    CU_EINVAL);
	cr_expect_not(valid);
	valid = true;
	cr_expect_eq(ctl_certs_check(c.ca_cert_pem, c.cert_pem, c.key_pem,
			 null_name, 1, 0, 0, &valid, &err),
	    CU_EINVAL);
	cr_expect_not(valid);
	cr_expect_eq(ctl_certs_check(c.ca_cert_pem, c.cert_pem, c.key_pem,
			 names, N_NAMES, -1, 0, &valid, &err),
	    CU_EINVAL);
	cr_expect_eq(ctl_certs_check(c.ca_cert_pem, c.cert_pem, c.key_pem,
			 names, N_NAMES, 0, -1, &valid, &err),
	    CU_EINVAL);
	ctl_certs_dispose(&c);
}

/* ---- TLS round trip through controller/httpd (GnuTLS) ---------------- */

enum { R_SVC, R_SVC_LOCAL, R_OTHER_CA, R_WRONG_NAME, R__COUNT };

struct tls_client {
	uint16_t port;
	const char *ca_pem, *other_ca_pem; /* borrowed */
	long status[R__COUNT];
	int curl_rc[R__COUNT];
	char body[R__COUNT][64];
	struct ev_loop *loop;
	ev_async done;
};

struct sink {
	char *buf;
	size_t len, cap;
};

static size_t on_data(char *p, size_t size, size_t n, void *userdata)
{
	struct sink *s = userdata;
	size_t len = size * n, room = s->cap - 1 - s->len;

	memcpy(s->buf + s->len, p, len < room ? len : room);
	s->len += len < room ? len : room;
	s->buf[s->len] = '\0';
	return len;
}

/* GET https://host:port/hello with `host` resolved to 127.0.0.1 and the
 * server verified (name and chain) against ca_pem. */
static void tls_get(
    struct tls_client *c, int i, const char *host, const char *ca_pem)
{
	CURL *e = curl_easy_init();
	struct curl_slist *resolve = NULL;
	struct curl_blob blob = {
	    .data = (void *)ca_pem,
	    .len = strlen(ca_pem),
	    .flags = CURL_BLOB_COPY,
	};
	struct sink s = {.buf = c->body[i], .cap = sizeof(c->body[i])};
	char url[256], entry[256];

	c->body[i][0] = '\0';
	if (e == NULL) {
		c->curl_rc[i] = -1;
		return;
	}
	snprintf(entry, sizeof(entry), "%s:%u:127.0.0.1", host, c->port);
	snprintf(url, sizeof(url), "https://%s:%u/hello", host, c->port);
	resolve = curl_slist_append(NULL, entry);
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_RESOLVE, resolve);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, 20000L);
	curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &blob);
	curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, &s);
	c->curl_rc[i] = (int)curl_easy_perform(e);
	curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &c->status[i]);
	curl_slist_free_all(resolve);
	curl_easy_cleanup(e);
}

static void *tls_client_main(void *arg)
{
	struct tls_client *c = arg;

	tls_get(c, R_SVC, SVC, c->ca_pem);
	tls_get(c, R_SVC_LOCAL, SVC_LOCAL, c->ca_pem);
	tls_get(c, R_OTHER_CA, SVC, c->other_ca_pem);
	tls_get(c, R_WRONG_NAME, "other.cueue-system.svc", c->ca_pem);
	ev_async_send(c->loop, &c->done);
	return NULL;
}

static void serve_hello(const struct ctl_http_request *req,
    struct ctl_http_response *resp, void *payload)
{
	(void)req;
	(void)payload;
	(void)ctl_http_reply(resp, 200, "hello");
}

static void on_stop(struct ev_loop *loop, ev_async *w, int revents)
{
	(void)w;
	(void)revents;
	ev_break(loop, EVBREAK_ALL);
}

static void on_watchdog(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)w;
	(void)revents;
	ev_break(loop, EVBREAK_ALL);
}

Test(ctl_certs, gnutls_serves_the_pair_and_curl_verifies_it_with_the_ca,
    .timeout = 60)
{
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	struct ctl_certs c, other;
	struct tls_client cl;
	struct ctl_httpd_opts o = {.name = "webhook", .listen = "127.0.0.1:0"};
	ctl_httpd *h = NULL;
	ev_timer watchdog;
	pthread_t th;
	cu_error err;
	bool valid = false;

	cr_assert_not_null(loop);
	cr_assert_eq(curl_global_init(CURL_GLOBAL_DEFAULT), CURLE_OK);
	gen(&c, 0, 0);
	gen(&other, 0, 0);
	/* What the rotator does before serving: check, then load. */
	cr_assert_eq(ctl_certs_check(c.ca_cert_pem, c.cert_pem, c.key_pem,
			 names, N_NAMES, 0, 90 * DAY_NS, &valid, &err),
	    CU_OK);
	cr_assert(valid, "%s", err.msg);
	o.cert_pem = c.cert_pem;
	o.key_pem = c.key_pem;
	cr_assert_eq(ctl_httpd_new(&h, loop, &o, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(
	    ctl_httpd_route(h, "GET", "/hello", serve_hello, NULL, &err), CU_OK,
	    "%s", err.msg);
	cr_assert_eq(ctl_httpd_start(h, &err), CU_OK, "%s", err.msg);

	memset(&cl, 0, sizeof(cl));
	cl.port = ctl_httpd_port(h);
	cl.ca_pem = c.ca_cert_pem;
	cl.other_ca_pem = other.ca_cert_pem;
	cl.loop = loop;
	ev_async_init(&cl.done, on_stop);
	ev_async_start(loop, &cl.done);
	ev_timer_init(&watchdog, on_watchdog, 50., 0.);
	ev_timer_start(loop, &watchdog);
	cr_assert_eq(pthread_create(&th, NULL, tls_client_main, &cl), 0);
	ev_run(loop, 0);
	pthread_join(th, NULL);
	ev_timer_stop(loop, &watchdog);
	ev_async_stop(loop, &cl.done);

	cr_expect_eq(cl.curl_rc[R_SVC], CURLE_OK, "curl %d", cl.curl_rc[R_SVC]);
	cr_expect_eq(cl.status[R_SVC], 200);
	cr_expect_str_eq(cl.body[R_SVC], "hello");
	cr_expect_eq(cl.curl_rc[R_SVC_LOCAL], CURLE_OK, "curl %d",
	    cl.curl_rc[R_SVC_LOCAL]);
	cr_expect_str_eq(cl.body[R_SVC_LOCAL], "hello");
	/* The same server is refused by a client trusting another CA, and
	 * for a name it has no SAN for. */
	cr_expect_eq(cl.curl_rc[R_OTHER_CA], CURLE_PEER_FAILED_VERIFICATION,
	    "curl %d", cl.curl_rc[R_OTHER_CA]);
	cr_expect_eq(cl.curl_rc[R_WRONG_NAME], CURLE_PEER_FAILED_VERIFICATION,
	    "curl %d", cl.curl_rc[R_WRONG_NAME]);

	ctl_httpd_free(h);
	ctl_certs_dispose(&c);
	ctl_certs_dispose(&other);
	ev_loop_destroy(loop);
	curl_global_cleanup();
}
