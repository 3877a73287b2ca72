/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/controller_vauth_test.c - controller/vauth.c's pure parts:
 * the ConfigMap's settings, client-certificate verification (front-proxy
 * certificates made by tests/apiserver/tls.c's as_tls_client, compiled
 * in), the front proxy's X-Remote-* headers, a request's
 * SubjectAccessReview attributes, and controller/mauth.c's Forbidden
 * Status built from them.
 */
#include <criterion/criterion.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "api/json.h"
#include "controller/vauth.h"
#include "tests/apiserver/tls.c"
#include "tests/unit/fixtures.h"

#define G "visibility.kueue.x-k8s.io"

static void setup(void)
{
	json_set_alloc_funcs(cu_malloc, cu_free);
}

TestSuite(ctl_vauth, .init = setup);

/* ---- settings ------------------------------------------------------- */

static json_t *configmap(const char *ca)
{
	return json_pack("{s:{s:s, s:s, s:s}}", "data",
	    "requestheader-client-ca-file", ca, "requestheader-allowed-names",
	    "[\"front-proxy-client\"]", "requestheader-group-headers",
	    "[\"X-Remote-Group\", \"X-Other-Group\"]");
}

Test(ctl_vauth, settings_default_the_front_proxy_headers)
{
	struct ctl_vauth_settings s;
	json_t *cm = configmap("PEM");
	cu_error err;

	cr_assert_eq(
	    ctl_vauth_settings_from(&s, cm, &err), CU_OK, "%s", err.msg);
	cr_assert_str_eq(s.rh_ca_pem, "PEM");
	cr_assert_null(s.client_ca_pem);
	cr_assert_eq(s.nallowed, 1);
	cr_assert_str_eq(s.allowed_names[0], "front-proxy-client");
	cr_assert_eq(s.nuser, 1);
	cr_assert_str_eq(s.user_headers[0], "X-Remote-User");
	cr_assert_eq(s.ngroup, 2);
	cr_assert_str_eq(s.group_headers[1], "X-Other-Group");
	cr_assert_eq(s.nextra, 1);
	cr_assert_str_eq(s.extra_prefixes[0], "X-Remote-Extra-");
	cr_assert_eq(s.nuid, 0);
	ctl_vauth_settings_dispose(&s);
	json_decref(cm);
	/* No front proxy: no header is trusted. */
	cr_assert_eq(ctl_vauth_settings_from(&s, NULL, &err), CU_OK);
	cr_assert_eq(s.nuser + s.ngroup + s.nextra, 0);
	ctl_vauth_settings_dispose(&s);
}

Test(ctl_vauth, settings_refuse_a_list_that_is_not_one)
{
	struct ctl_vauth_settings s;
	json_t *cm =
	    json_pack("{s:{s:s, s:s}}", "data", "requestheader-client-ca-file",
		"PEM", "requestheader-username-headers", "X-Remote-User");
	cu_error err;

	cr_assert_eq(ctl_vauth_settings_from(&s, cm, &err), CU_EINVAL);
	cr_assert(strstr(err.msg, "requestheader-username-headers: not a "
				  "JSON list of strings") != NULL,
	    "%s", err.msg);
	json_decref(cm);
}

/* ---- certificates ----------------------------------------------------- */

/* The DER of PEM certificate pem [owned: cu_free]. */
static struct ctl_http_der der_of(const char *pem)
{
	BIO *b = BIO_new_mem_buf(pem, -1);
	X509 *x = PEM_read_bio_X509(b, NULL, NULL, NULL);
	unsigned char *buf = NULL, *p;
	int n;
	struct ctl_http_der d;

	cr_assert_not_null(x);
	n = i2d_X509(x, NULL);
	cr_assert_gt(n, 0);
	buf = cu_malloc((size_t)n);
	p = buf;
	cr_assert_eq(i2d_X509(x, &p), n);
	X509_free(x);
	BIO_free(b);
	d.data = buf;
	d.len = (size_t)n;
	return d;
}

Test(ctl_vauth, verify_a_front_proxy_certificate)
{
	struct as_tls_material px, other;
	struct ctl_http_der d;
	char *cn = NULL;
	json_t *orgs = NULL;
	cu_error err;

	cr_assert_eq(
	    as_tls_client(&px, "front-proxy-ca", "front-proxy-client", &err),
	    CU_OK, "%s", err.msg);
	cr_assert_eq(
	    as_tls_client(&other, "other-ca", "front-proxy-client", &err),
	    CU_OK, "%s", err.msg);
	d = der_of(px.cert_pem);
	cr_assert_eq(ctl_vauth_verify(&d, 1, px.ca_cert_pem, &cn, &orgs, &err),
	    CU_OK, "%s", err.msg);
	cr_assert_str_eq(cn, "front-proxy-client");
	cr_assert_eq(json_array_size(orgs), 0);
	cu_free(cn);
	json_decref(orgs);
	/* Another CA (with both in the bundle, it verifies). */
	cr_assert_eq(
	    ctl_vauth_verify(&d, 1, other.ca_cert_pem, &cn, &orgs, &err),
	    CU_EDENIED);
	cr_assert_str_eq(
	    err.msg, "x509: certificate signed by unknown authority");
	cr_assert_null(cn);
	{
		char *both =
		    cu_asprintf("%s%s", other.ca_cert_pem, px.ca_cert_pem);

		cr_assert_eq(
		    ctl_vauth_verify(&d, 1, both, &cn, &orgs, &err), CU_OK);
		cu_free(cn);
		json_decref(orgs);
		cu_free(both);
	}
	cu_free((void *)d.data);
	/* A serving certificate (extended key usage serverAuth only). */
	d = der_of(px.ca_cert_pem);
	cu_free((void *)d.data);
	{
		char *cert = NULL, *key = NULL;

		cr_assert_eq(as_tls_issue(&cert, &key, px.ca_cert_pem,
				 px.ca_key_pem, NULL, NULL, &err),
		    CU_OK, "%s", err.msg);
		d = der_of(cert);
		cr_assert_eq(
		    ctl_vauth_verify(&d, 1, px.ca_cert_pem, &cn, &orgs, &err),
		    CU_EDENIED);
		cr_assert_str_eq(err.msg, "x509: certificate specifies an "
					  "incompatible key usage");
		cu_free((void *)d.data);
		cu_free(cert);
		cu_free(key);
	}
	/* Garbage and nothing. */
	d.data = (const unsigned char *)"not DER";
	d.len = 7;
	cr_assert_eq(ctl_vauth_verify(&d, 1, px.ca_cert_pem, &cn, &orgs, &err),
	    CU_EDENIED);
	cr_assert_eq(ctl_vauth_verify(&d, 0, px.ca_cert_pem, &cn, &orgs, &err),
	    CU_EINVAL);
	cr_assert_eq(
	    ctl_vauth_verify(&d, 1, "no PEM", &cn, &orgs, &err), CU_EINVAL);
	as_tls_material_dispose(&px);
	as_tls_material_dispose(&other);
}

/* ---- request headers -------------------------------------------------- */

Test(ctl_vauth, front_proxy_headers_name_the_user)
{
	struct ctl_vauth_settings s;
	json_t *cm = configmap("PEM"), *u = NULL;
	static const char *const hv[] = {"Accept", "application/json",
	    "x-remote-user", "alice", "X-Remote-User", "mallory",
	    "X-Remote-Group", "team-a", "X-Remote-Group", " ", "X-Other-Group",
	    "system:authenticated", "X-Remote-Group", "team-b",
	    "X-Remote-Extra-Scopes", "read", "x-remote-extra-scopes", "write",
	    "X-Remote-Extra-Acme.com%2FProject", "p1", NULL};
	static const char *const none[] = {
	    "X-Remote-User", "  ", "X-Remote-Group", "system:masters", NULL};
	cu_error err;
	char *got;

	cr_assert_eq(ctl_vauth_settings_from(&s, cm, &err), CU_OK);
	cr_assert_eq(ctl_vauth_headers_user(&s, hv, &u), CTL_MAUTH_WHO_USER);
	got = json_dumps(u, JSON_COMPACT | JSON_SORT_KEYS);
	cr_assert_str_eq(got,
	    "{\"extra\":{\"acme.com/project\":[\"p1\"],\"scopes\":[\"read\","
	    "\"write\"]},\"groups\":[\"team-a\",\"team-b\",\"system:"
	    "authenticated\"],\"username\":\"alice\"}");
	cu_free(got);
	json_decref(u);
	cr_assert_eq(ctl_vauth_headers_user(&s, none, &u), CTL_MAUTH_WHO_NONE);
	cr_assert_null(u);
	ctl_vauth_settings_dispose(&s);
	json_decref(cm);
}

/* ---- attributes and the Forbidden message ------------------------------ */

static char *attrs_of(const char *method, const char *path)
{
	json_t *a = ctl_vauth_attributes(method, path);
	char *s = json_dumps(a, JSON_COMPACT | JSON_SORT_KEYS);

	json_decref(a);
	return s;
}

Test(ctl_vauth, attributes_as_kube_reads_the_path)
{
	static const struct {
		const char *method, *path, *want;
	} cases[] = {
	    {"GET", "/apis/" G "/v1beta2/clusterqueues/cq/pendingworkloads",
		"{\"resourceAttributes\":{\"group\":\"" G "\",\"name\":\"cq\","
		"\"namespace\":\"\",\"resource\":\"clusterqueues\","
		"\"subresource\":\"pendingworkloads\",\"verb\":\"get\","
		"\"version\":\"v1beta2\"}}"},
	    {"GET",
		"/apis/" G "/v1beta1/namespaces/team/localqueues/lq/"
		"pendingworkloads",
		"{\"resourceAttributes\":{\"group\":\"" G "\",\"name\":\"lq\","
		"\"namespace\":\"team\",\"resource\":\"localqueues\","
		"\"subresource\":\"pendingworkloads\",\"verb\":\"get\","
		"\"version\":\"v1beta1\"}}"},
	    {"GET", "/apis/" G "/v1beta2/namespaces/team/localqueues",
		"{\"resourceAttributes\":{\"group\":\"" G "\",\"name\":\"\","
		"\"namespace\":\"team\",\"resource\":\"localqueues\","
		"\"subresource\":\"\",\"verb\":\"list\",\"version\":"
		"\"v1beta2\"}}"},
	    {"DELETE", "/apis/" G "/v1beta2/clusterqueues/cq/",
		"{\"resourceAttributes\":{\"group\":\"" G "\",\"name\":\"cq\","
		"\"namespace\":\"\",\"resource\":\"clusterqueues\","
		"\"subresource\":\"\",\"verb\":\"delete\",\"version\":"
		"\"v1beta2\"}}"},
	    {"GET", "/apis/" G "/v1beta2",
		"{\"nonResourceAttributes\":{\"path\":\"/apis/" G
		"/v1beta2\",\"verb\":\"get\"}}"},
	    {"GET", "/apis",
		"{\"nonResourceAttributes\":{\"path\":\"/apis\",\"verb\":"
		"\"get\"}}"},
	    {"POST", "/healthz",
		"{\"nonResourceAttributes\":{\"path\":\"/healthz\",\"verb\":"
		"\"post\"}}"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = attrs_of(cases[i].method, cases[i].path);

		cr_assert_str_eq(got, cases[i].want, "%s", cases[i].path);
		cu_free(got);
	}
}

static const char *forbidden_msg(
    const char *path, const char *user, const char *reason, json_t **st)
{
	json_t *a = ctl_vauth_attributes("GET", path);

	*st = ctl_mauth_forbidden(a, user, reason);
	json_decref(a);
	cr_assert_not_null(*st);
	cr_assert_eq(json_integer_value(json_object_get(*st, "code")), 403);
	cr_assert_str_eq(api_json_str(*st, "reason"), "Forbidden");
	return api_json_str(*st, "message");
}

Test(ctl_vauth, forbidden_as_kube_words_it)
{
	json_t *st;

	cr_assert_str_eq(forbidden_msg("/apis/" G "/v1beta2/clusterqueues/cq/"
				       "pendingworkloads",
			     "alice", NULL, &st),
	    "clusterqueues." G " \"cq\" is forbidden: User \"alice\" cannot "
	    "get resource \"clusterqueues/pendingworkloads\" in API group \"" G
	    "\" at the cluster scope");
	cr_assert_str_eq(
	    api_json_str(json_object_get(st, "details"), "name"), "cq");
	cr_assert_str_eq(api_json_str(json_object_get(st, "details"), "kind"),
	    "clusterqueues");
	json_decref(st);
	cr_assert_str_eq(
	    forbidden_msg("/apis/" G "/v1beta2/namespaces/team/localqueues/lq/"
			  "pendingworkloads",
		"system:anonymous", "RBAC: no rule", &st),
	    "localqueues." G " \"lq\" is forbidden: User \"system:anonymous\" "
	    "cannot get resource \"localqueues/pendingworkloads\" in API "
	    "group \"" G "\" in the namespace \"team\": RBAC: no rule");
	json_decref(st);
	cr_assert_str_eq(
	    forbidden_msg("/apis/" G "/v1beta2/namespaces/team/localqueues",
		"bob", "", &st),
	    "localqueues." G " is forbidden: User \"bob\" cannot list "
	    "resource \"localqueues\" in API group \"" G
	    "\" in the namespace \"team\"");
	json_decref(st);
	cr_assert_str_eq(forbidden_msg("/apis", "bob", NULL, &st),
	    "forbidden: User \"bob\" cannot get path \"/apis\"");
	json_decref(st);
}

/* ---- the server's settings follow the ConfigMap ------------------------- */

static json_t *cm_object(const char *allowed)
{
	return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s}}", "apiVersion",
	    "v1", "kind", "ConfigMap", "metadata", "name", CTL_VAUTH_CONFIGMAP,
	    "namespace", CTL_VAUTH_CONFIGMAP_NS, "data",
	    "requestheader-client-ca-file", fx_tls.ca_cert_pem,
	    "requestheader-allowed-names", allowed);
}

static bool allowed_is(const ctl_vauth *v, const char *name)
{
	const struct ctl_vauth_settings *s = ctl_vauth_settings(v);

	return s->nallowed == 1 && strcmp(s->allowed_names[0], name) == 0;
}

Test(ctl_vauth, settings_follow_the_configmap, .init = fx_setup,
    .fini = fx_teardown, .timeout = 60)
{
	static const struct ctl_vis vis; /* no request is served */
	struct ctl_vauth_opts o;
	struct fx_result r;
	ctl_vauth *v = NULL;
	cu_error err;
	int i;

	/* The fixture's CA stands for the front proxy's. */
	cr_assert_eq(as_tls_generate(&fx_tls, NULL, false, &err), CU_OK);
	fx_call(&r, "POST", "/api/v1/namespaces", NULL,
	    json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind",
		"Namespace", "metadata", "name", CTL_VAUTH_CONFIGMAP_NS));
	fx_result_dispose(&r);
	fx_call(&r, "POST",
	    "/api/v1/namespaces/" CTL_VAUTH_CONFIGMAP_NS "/configmaps", NULL,
	    cm_object("[\"front-proxy-client\"]"));
	cr_assert_eq(r.code, 201, "%d %s", r.code, r.msg);
	fx_result_dispose(&r);
	memset(&o, 0, sizeof(o));
	o.listen = "127.0.0.1:0";
	o.cert_dir = fx_tmpdir; /* no tls.crt: self-signed */
	o.vis = &vis;
	o.refresh_s = 0.05;
	cr_assert_eq(ctl_vauth_start(&v, fx_loop, fx_cl, &o, &err), CU_OK, "%s",
	    err.msg);
	for (i = 0; i < 400 && ctl_vauth_port(v) == 0; i++)
		fx_run_for(0.05);
	cr_assert_neq(ctl_vauth_port(v), 0, "serving");
	cr_assert(allowed_is(v, "front-proxy-client"));
	cr_assert_str_eq(ctl_vauth_settings(v)->rh_ca_pem, fx_tls.ca_cert_pem);
	fx_call(&r, "PUT",
	    "/api/v1/namespaces/" CTL_VAUTH_CONFIGMAP_NS
	    "/configmaps/" CTL_VAUTH_CONFIGMAP,
	    NULL, cm_object("[\"another-proxy\"]"));
	cr_assert_eq(r.code, 200, "%d %s", r.code, r.msg);
	fx_result_dispose(&r);
	for (i = 0; i < 400 && !allowed_is(v, "another-proxy"); i++)
		fx_run_for(0.05);
	cr_assert(allowed_is(v, "another-proxy"), "the new settings");
	/* Gone: the settings read before stay. */
	fx_call(&r, "DELETE",
	    "/api/v1/namespaces/" CTL_VAUTH_CONFIGMAP_NS
	    "/configmaps/" CTL_VAUTH_CONFIGMAP,
	    NULL, NULL);
	fx_result_dispose(&r);
	fx_run_for(0.3);
	cr_assert(allowed_is(v, "another-proxy"));
	ctl_vauth_free(v);
}
