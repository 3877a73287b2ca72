/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/apiserver_tls_test.c - tests/apiserver/tls.c: the per-run CA
 * verifies the serving certificate, SANs are present (and absent with
 * no_san), keys match, custom issuance, and kubeconfig files that the
 * machine's kubectl and python3-kubernetes accept. tests/apiserver is not
 * in libcueue.a, so the source is compiled in directly.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "tests/apiserver/tls.c"

static X509 *load_cert(const char *pem)
{
	BIO *b = BIO_new_mem_buf(pem, -1);
	X509 *x = PEM_read_bio_X509(b, NULL, NULL, NULL);

	BIO_free(b);
	cr_assert_not_null(x, "certificate PEM does not parse");
	return x;
}

static EVP_PKEY *load_key(const char *pem)
{
	BIO *b = BIO_new_mem_buf(pem, -1);
	EVP_PKEY *k = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL);

	BIO_free(b);
	cr_assert_not_null(k, "key PEM does not parse");
	return k;
}

/* X509_verify_cert of leaf against ca for TLS server use; returns the
 * X509_V_* result. */
static int verify_with(const char *ca_pem, const char *leaf_pem)
{
	X509 *ca = load_cert(ca_pem), *leaf = load_cert(leaf_pem);
	X509_STORE *store = X509_STORE_new();
	X509_STORE_CTX *ctx = X509_STORE_CTX_new();
	int ok, rc;

	cr_assert(X509_STORE_add_cert(store, ca));
	cr_assert(X509_STORE_CTX_init(ctx, store, leaf, NULL));
	cr_assert(X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_SERVER));
	ok = X509_verify_cert(ctx);
	rc = X509_STORE_CTX_get_error(ctx);
	cr_assert((ok == 1) == (rc == X509_V_OK));
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(store);
	X509_free(ca);
	X509_free(leaf);
	return rc;
}

static bool has_host(X509 *x, const char *host)
{
	return X509_check_host(
		   x, host, 0, X509_CHECK_FLAG_NEVER_CHECK_SUBJECT, NULL) == 1;
}

static bool has_ip(X509 *x, const char *ip)
{
	return X509_check_ip_asc(x, ip, 0) == 1;
}

/* Exit status of a shell command, its output discarded. */
static int run_quiet(const char *cmd)
{
	FILE *p = popen(cmd, "r");
	char buf[256];

	if (p == NULL)
		return -1;
	while (fgets(buf, sizeof(buf), p) != NULL)
		;
	return pclose(p);
}

Test(apiserver_tls, ca_verifies_serving_cert_with_all_sans)
{
	static const char *const extra[] = {"cueue.test", "*.svc.test", NULL};
	struct as_tls_material m;
	X509 *ca, *leaf;
	EVP_PKEY *key, *ca_key;
	cu_error err;
	int day, sec;

	cr_assert_eq(
	    as_tls_generate(&m, extra, false, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(verify_with(m.ca_cert_pem, m.cert_pem), X509_V_OK);

	ca = load_cert(m.ca_cert_pem);
	leaf = load_cert(m.cert_pem);
	key = load_key(m.key_pem);
	ca_key = load_key(m.ca_key_pem);
	cr_assert_eq(X509_check_private_key(leaf, key), 1);
	cr_assert_eq(X509_check_private_key(ca, ca_key), 1);
	cr_assert_neq(X509_check_private_key(leaf, ca_key), 1);
	ERR_clear_error();
	cr_assert_eq(EVP_PKEY_get_base_id(key), EVP_PKEY_EC);
	cr_assert_eq(EVP_PKEY_get_bits(ca_key), 256);

	/* CA shape: CA:TRUE critical, keyCertSign|cRLSign. */
	cr_assert_eq(X509_check_ca(ca), 1);
	cr_assert_eq(X509_EXTENSION_get_critical(X509_get_ext(ca,
			 X509_get_ext_by_NID(ca, NID_basic_constraints, -1))),
	    1);
	cr_assert_eq(X509_get_key_usage(ca), KU_KEY_CERT_SIGN | KU_CRL_SIGN);
	cr_assert_eq(X509_check_ca(leaf), 0);
	cr_assert(X509_get_extended_key_usage(leaf) & XKU_SSL_SERVER);

	cr_assert(has_host(leaf, "localhost"));
	cr_assert(has_host(leaf, "kubernetes"));
	cr_assert(has_host(leaf, "kubernetes.default"));
	cr_assert(has_host(leaf, "kubernetes.default.svc"));
	cr_assert(has_host(leaf, "kubernetes.default.svc.cluster.local"));
	cr_assert(has_host(leaf, "cueue.test"));
	cr_assert(has_host(leaf, "x.svc.test"));
	cr_assert(has_ip(leaf, "127.0.0.1"));
	cr_assert(has_ip(leaf, "::1"));
	cr_assert(!has_host(leaf, "example.com"));
	cr_assert(!has_ip(leaf, "10.0.0.1"));

	/* Valid from about an hour ago, for about ten years. */
	cr_assert(ASN1_TIME_diff(&day, &sec, NULL, X509_get0_notBefore(leaf)));
	cr_assert(day == 0 && sec <= -3590 && sec >= -3610, "%d %d", day, sec);
	cr_assert(ASN1_TIME_diff(&day, &sec, NULL, X509_get0_notAfter(leaf)));
	cr_assert(day >= 3650 && day <= 3653, "%d", day);

	EVP_PKEY_free(key);
	EVP_PKEY_free(ca_key);
	X509_free(ca);
	X509_free(leaf);
	as_tls_material_dispose(&m);
	cr_assert_null(m.cert_pem);
}

Test(apiserver_tls, no_san_cert_has_cn_only)
{
	struct as_tls_material m;
	X509 *leaf;
	char cn[64];
	cu_error err;

	cr_assert_eq(
	    as_tls_generate(&m, NULL, true, &err), CU_OK, "%s", err.msg);
	leaf = load_cert(m.cert_pem);
	cr_assert_null(
	    X509_get_ext_d2i(leaf, NID_subject_alt_name, NULL, NULL));
	cr_assert(!has_host(leaf, "localhost"));
	cr_assert(!has_ip(leaf, "127.0.0.1"));
	cr_assert_gt(X509_NAME_get_text_by_NID(X509_get_subject_name(leaf),
			 NID_commonName, cn, sizeof(cn)),
	    0);
	cr_assert_str_eq(cn, "localhost");
	/* The chain itself is fine: only name checking must fail. */
	cr_assert_eq(verify_with(m.ca_cert_pem, m.cert_pem), X509_V_OK);
	X509_free(leaf);
	as_tls_material_dispose(&m);
}

Test(apiserver_tls, two_runs_have_distinct_cas)
{
	struct as_tls_material a, b;
	cu_error err;

	cr_assert_eq(as_tls_generate(&a, NULL, false, &err), CU_OK);
	cr_assert_eq(as_tls_generate(&b, NULL, false, &err), CU_OK);
	cr_assert_str_neq(a.ca_cert_pem, b.ca_cert_pem);
	cr_assert_neq(verify_with(a.ca_cert_pem, b.cert_pem), X509_V_OK);
	as_tls_material_dispose(&a);
	as_tls_material_dispose(&b);
}

Test(apiserver_tls, issue_uses_exactly_the_given_names)
{
	static const char *const dns[] = {"webhook.kueue-system.svc", NULL};
	static const char *const ips[] = {"10.1.2.3", "fd00::1", NULL};
	struct as_tls_material m;
	char *cert = NULL, *key = NULL;
	X509 *leaf;
	EVP_PKEY *k;
	cu_error err;

	cr_assert_eq(as_tls_generate(&m, NULL, false, &err), CU_OK);
	cr_assert_eq(as_tls_issue(&cert, &key, m.ca_cert_pem, m.ca_key_pem, dns,
			 ips, &err),
	    CU_OK, "%s", err.msg);
	cr_assert_eq(verify_with(m.ca_cert_pem, cert), X509_V_OK);
	leaf = load_cert(cert);
	k = load_key(key);
	cr_assert_eq(X509_check_private_key(leaf, k), 1);
	cr_assert(has_host(leaf, "webhook.kueue-system.svc"));
	cr_assert(has_ip(leaf, "10.1.2.3"));
	cr_assert(has_ip(leaf, "fd00::1"));
	cr_assert(!has_host(leaf, "localhost"));
	cr_assert(!has_ip(leaf, "127.0.0.1"));
	EVP_PKEY_free(k);
	X509_free(leaf);
	cu_free(cert);
	cu_free(key);

	/* IP only. */
	cr_assert_eq(as_tls_issue(&cert, &key, m.ca_cert_pem, m.ca_key_pem,
			 NULL, ips, &err),
	    CU_OK);
	leaf = load_cert(cert);
	cr_assert(has_ip(leaf, "10.1.2.3"));
	X509_free(leaf);
	cu_free(cert);
	cu_free(key);
	as_tls_material_dispose(&m);
}

Test(apiserver_tls, issue_rejects_bad_input)
{
	static const char *const bad_ip[] = {"10.1.2", NULL};
	static const char *const bad_dns[] = {"a b", NULL};
	static const char *const inject[] = {"x,IP:1.2.3.4", NULL};
	struct as_tls_material m, other;
	char *cert = (char *)"sentinel", *key = (char *)"sentinel";
	cu_error err;

	cr_assert_eq(as_tls_generate(&m, NULL, false, &err), CU_OK);
	cr_assert_eq(as_tls_generate(&other, NULL, false, &err), CU_OK);
	cr_assert_eq(as_tls_issue(&cert, &key, m.ca_cert_pem, m.ca_key_pem,
			 NULL, bad_ip, &err),
	    CU_EINVAL);
	cr_assert_null(cert);
	cr_assert_null(key);
	cr_assert_str_eq(err.msg, "tls: invalid IP address \"10.1.2\"");
	cr_assert_eq(as_tls_issue(&cert, &key, m.ca_cert_pem, m.ca_key_pem,
			 bad_dns, NULL, &err),
	    CU_EINVAL);
	cr_assert_eq(as_tls_issue(&cert, &key, m.ca_cert_pem, m.ca_key_pem,
			 inject, NULL, &err),
	    CU_EINVAL);
	cr_assert_eq(as_tls_issue(&cert, &key, "not a pem", m.ca_key_pem, NULL,
			 NULL, &err),
	    CU_EINVAL);
	cr_assert(strstr(err.msg, "CA certificate PEM") != NULL);
	cr_assert_eq(as_tls_issue(&cert, &key, m.ca_cert_pem, other.ca_key_pem,
			 NULL, NULL, &err),
	    CU_EINVAL);
	cr_assert(strstr(err.msg, "does not match") != NULL);
	as_tls_material_dispose(&other);
	cr_assert_eq(as_tls_generate(&other, bad_dns, false, &err), CU_EINVAL);
	cr_assert_null(other.ca_cert_pem);
	as_tls_material_dispose(&m);
}

/* ---- kubeconfig ---------------------------------------------------- */

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	cu_buf b;
	char chunk[4096];
	size_t n;

	cr_assert_not_null(f, "cannot open %s", path);
	cu_buf_init(&b, 1 << 20);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		cr_assert_eq(cu_buf_add(&b, chunk, n), CU_OK);
	fclose(f);
	return cu_buf_detach(&b, NULL);
}

static void make_dir(char *tmpl)
{
	cr_assert_not_null(mkdtemp(tmpl));
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	cr_assert_not_null(d);
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* Run a shell command, capture its first output line; returns exit code. */
static int run(const char *cmd, char *out, size_t outsz)
{
	FILE *p = popen(cmd, "r");
	size_t n;

	cr_assert_not_null(p);
	n = fread(out, 1, outsz - 1, p);
	out[n] = '\0';
	return pclose(p);
}

Test(apiserver_tls, kubeconfig_is_0600_with_expected_content)
{
	char dir[] = "/tmp/as_tls_testXXXXXX";
	char *path, *text, *b64;
	struct as_tls_material m;
	struct stat st;
	unsigned char *dec;
	int n;
	cu_error err;

	make_dir(dir);
	path = cu_asprintf("%s/kubeconfig", dir);
	cr_assert_eq(as_tls_generate(&m, NULL, false, &err), CU_OK);
	/* A pre-existing world-readable file is replaced, not reused. */
	fclose(fopen(path, "w"));
	chmod(path, 0644);
	cr_assert_eq(as_kubeconfig_write(path, "https://127.0.0.1:6443",
			 m.ca_cert_pem, "t0ken", &err),
	    CU_OK, "%s", err.msg);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0600, "mode %o", st.st_mode & 0777);
	cr_assert_eq(count_entries(dir), 1, "temporary file left behind");
	text = slurp(path);
	cr_assert(strstr(text, "server: \"https://127.0.0.1:6443\"\n") != NULL);
	cr_assert(strstr(text, "token: \"t0ken\"\n") != NULL);
	cr_assert(strstr(text, "current-context: cueue\n") != NULL);
	cr_assert(strstr(text, "    namespace: default\n") != NULL);
	cr_assert(strstr(text, "- name: cueue-admin\n") != NULL);
	b64 = strstr(text, "certificate-authority-data: ");
	cr_assert_not_null(b64);
	b64 += strlen("certificate-authority-data: ");
	*strchr(b64, '\n') = '\0';
	dec = cu_malloc(strlen(b64));
	n = EVP_DecodeBlock(dec, (const unsigned char *)b64, (int)strlen(b64));
	cr_assert_geq(n, (int)strlen(m.ca_cert_pem));
	cr_assert(memcmp(dec, m.ca_cert_pem, strlen(m.ca_cert_pem)) == 0);
	cu_free(dec);
	cu_free(text);

	/* Plain http: no CA data at all. */
	cr_assert_eq(
	    as_kubeconfig_write(path, "http://127.0.0.1:8080", NULL, "t", &err),
	    CU_OK);
	text = slurp(path);
	cr_assert_null(strstr(text, "certificate-authority"));
	cu_free(text);

	unlink(path);
	rmdir(dir);
	cu_free(path);
	as_tls_material_dispose(&m);
}

Test(apiserver_tls, kubeconfig_rejects_bad_values_and_paths)
{
	char dir[] = "/tmp/as_tls_testXXXXXX";
	char *path;
	cu_error err;

	make_dir(dir);
	path = cu_asprintf("%s/kc", dir);
	cr_assert_eq(as_kubeconfig_write(path, "http://x", NULL, "a\nb", &err),
	    CU_EINVAL);
	cr_assert_str_eq(
	    err.msg, "kubeconfig: token contains a control character");
	cr_assert_eq(as_kubeconfig_write(path, "", NULL, "t", &err), CU_EINVAL);
	cr_assert_eq(count_entries(dir), 0);
	cu_free(path);
	cr_assert_eq(as_kubeconfig_write(
			 "/nonexistent-dir/kc", "http://x", NULL, "t", &err),
	    CU_EIO);
	cr_assert(
	    strstr(err.msg, "/nonexistent-dir/kc.tmp.") != NULL, "%s", err.msg);
	rmdir(dir);
}

Test(apiserver_tls, kubeconfig_is_accepted_by_kubectl_and_python)
{
	char dir[] = "/tmp/as_tls_testXXXXXX";
	char *path, *ca_path, *cmd, out[512];
	struct as_tls_material m;
	cu_error err;
	int rc;

	make_dir(dir);
	path = cu_asprintf("%s/kubeconfig", dir);
	cr_assert_eq(as_tls_generate(&m, NULL, false, &err), CU_OK);
	cr_assert_eq(as_kubeconfig_write(path, "https://127.0.0.1:6443",
			 m.ca_cert_pem, "tok\"en\\x", &err),
	    CU_OK);
	if (access("/usr/bin/kubectl", X_OK) == 0) {
		cmd = cu_asprintf("kubectl --kubeconfig %s config view --raw "
				  "-o jsonpath='{.clusters[0].cluster.server}"
				  " {.users[0].user.token}' 2>&1",
		    path);
		rc = run(cmd, out, sizeof(out));
		cr_assert_eq(rc, 0, "kubectl: %s", out);
		cr_assert_str_eq(out, "https://127.0.0.1:6443 tok\"en\\x");
		cu_free(cmd);
	} else {
		cr_log_warn("kubectl not installed: skipped");
	}
	if (access("/usr/bin/python3", X_OK) == 0 &&
	    run_quiet("/usr/bin/python3 -c 'import kubernetes' 2>/dev/null") ==
		0) {
		FILE *f;

		/* python writes certificate-authority-data to a temp file;
		 * it must hold exactly our CA. */
		ca_path = cu_asprintf("%s/ca.crt", dir);
		f = fopen(ca_path, "w");
		fputs(m.ca_cert_pem, f);
		fclose(f);
		cmd = cu_asprintf(
		    "/usr/bin/python3 -c \"import kubernetes.config as c; "
		    "from kubernetes import client; "
		    "c.load_kube_config('%s'); "
		    "g = client.Configuration.get_default_copy(); "
		    "print(g.host, open(g.ssl_ca_cert).read() == "
		    "open('%s').read(), g.api_key['authorization'])\" 2>&1",
		    path, ca_path);
		rc = run(cmd, out, sizeof(out));
		cr_assert_eq(rc, 0, "python: %s", out);
		cr_assert_str_eq(
		    out, "https://127.0.0.1:6443 True Bearer tok\"en\\x\n");
		unlink(ca_path);
		cu_free(ca_path);
		cu_free(cmd);
	} else {
		cr_log_warn("python3-kubernetes not installed: skipped");
	}
	unlink(path);
	rmdir(dir);
	cu_free(path);
	as_tls_material_dispose(&m);
}
