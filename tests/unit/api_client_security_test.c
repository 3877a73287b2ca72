/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/api_client_security_test.c - what the API client refuses
 * rather than do quietly, as kubectl does: a bearer token to a plain
 * http:// server that is not a loopback address, a certificate authority
 * together with insecure-skip-tls-verify, and kubeconfig users with exec
 * or auth-provider credentials (cueue runs no plugin, so requests would
 * go out unauthenticated).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ev.h>

#include "api/client.h"

static struct ev_loop *loop;
static char tmpdir[64];

static void setup(void)
{
	loop = ev_loop_new(EVFLAG_AUTO);
	cr_assert_not_null(loop);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/api_client_sec.XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir));
}

static void teardown(void)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/kubeconfig", tmpdir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/token", tmpdir);
	unlink(path);
	rmdir(tmpdir);
	ev_loop_destroy(loop);
}

/* api_client_new's result for server and a token (or token file). */
static int create(
    const char *server, const char *token, bool token_file, cu_error *err)
{
	struct api_client_opts o;
	api_client *c = NULL;
	char path[128];
	FILE *f;
	int rc;

	memset(&o, 0, sizeof(o));
	o.server = server;
	if (token_file) {
		snprintf(path, sizeof(path), "%s/token", tmpdir);
		f = fopen(path, "w");
		cr_assert_not_null(f);
		fputs("file-token\n", f);
		fclose(f);
		o.token_file = path;
	} else
		o.token = token;
	rc = api_client_new(&c, loop, &o, err);
	if (rc != CU_OK)
		cr_assert_null(c);
	api_client_free(c);
	return rc;
}

Test(api_client_security, no_bearer_token_over_plain_http, .init = setup,
    .fini = teardown)
{
	static const char *const refused[] = {
	    "http://10.0.0.1:8080",
	    "http://api.example.com",
	    "http://localhost:8080", /* a name: resolved through files */
	    "http://127.0.0.1.example.com:80",
	    "http://[fe80::1]:6443",
	};
	static const char *const allowed[] = {
	    "https://10.0.0.1:6443",
	    "http://127.0.0.1:8080", /* never leaves the machine */
	    "http://127.3.4.5",
	    "http://[::1]:8080/",
	};
	cu_error err;
	size_t i;

	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		cr_assert_eq(create(refused[i], "secret", false, &err),
		    CU_EINVAL, "%s accepted with a token", refused[i]);
		cr_assert(strstr(err.msg, "bearer token") != NULL &&
			      strstr(err.msg, refused[i]) != NULL &&
			      strstr(err.msg, "https://") != NULL,
		    "%s", err.msg);
		cr_assert_null(strstr(err.msg, "secret"), "%s", err.msg);
		cr_assert_eq(create(refused[i], NULL, true, &err), CU_EINVAL,
		    "%s accepted with a token file", refused[i]);
		/* Without a credential there is nothing to leak. */
		cr_assert_eq(create(refused[i], NULL, false, &err), CU_OK,
		    "%s: %s", refused[i], err.msg);
	}
	for (i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
		cr_assert_eq(create(allowed[i], "secret", false, &err), CU_OK,
		    "%s: %s", allowed[i], err.msg);
}

Test(api_client_security, ca_with_insecure_is_refused, .init = setup,
    .fini = teardown)
{
	struct api_client_opts o;
	api_client *c = NULL;
	cu_error err;

	memset(&o, 0, sizeof(o));
	o.server = "https://10.0.0.1:6443";
	o.insecure = true;
	o.ca_pem = "-----BEGIN CERTIFICATE-----\n";
	cr_assert_eq(api_client_new(&c, loop, &o, &err), CU_EINVAL);
	cr_assert_null(c);
	cr_assert(strstr(err.msg,
		      "specifying a root certificates file with the insecure "
		      "flag is not allowed") != NULL,
	    "%s", err.msg);
	o.ca_pem = NULL;
	o.ca_file = "/etc/ssl/certs/ca-certificates.crt";
	cr_assert_eq(api_client_new(&c, loop, &o, &err), CU_EINVAL);
	/* insecure alone is what it says. */
	o.ca_file = NULL;
	cr_assert_eq(api_client_new(&c, loop, &o, &err), CU_OK, "%s", err.msg);
	api_client_free(c);
}

static int load(const char *user, const char *cluster_extra, cu_error *err,
    struct api_client_opts *o)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/kubeconfig", tmpdir);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fprintf(f,
	    "apiVersion: v1\n"
	    "kind: Config\n"
	    "clusters:\n"
	    "- name: c1\n"
	    "  cluster:\n"
	    "    server: https://10.0.0.1:6443\n"
	    "%s"
	    "users:\n"
	    "- name: u1\n"
	    "  user:\n"
	    "%s"
	    "contexts:\n"
	    "- name: ctx\n"
	    "  context: {cluster: c1, user: u1}\n"
	    "current-context: ctx\n",
	    cluster_extra, user);
	fclose(f);
	return api_client_opts_from_kubeconfig(o, path, err);
}

Test(api_client_security, kubeconfig_exec_and_auth_provider_are_refused,
    .init = setup, .fini = teardown)
{
	struct api_client_opts o;
	cu_error err;

	cr_assert_eq(load("    exec:\n"
			  "      apiVersion: client.authentication.k8s.io/v1\n"
			  "      command: aws\n"
			  "      args: [eks, get-token]\n",
			 "", &err, &o),
	    CU_EINVAL);
	cr_assert(strstr(err.msg, "user \"u1\"") != NULL &&
		      strstr(err.msg, "users[].user.exec") != NULL &&
		      strstr(err.msg, "not supported") != NULL,
	    "%s", err.msg);
	cr_assert_null(o.server, "nothing left to free");
	cr_assert_eq(load("    auth-provider:\n"
			  "      name: oidc\n"
			  "      config: {idp-issuer-url: https://x}\n",
			 "", &err, &o),
	    CU_EINVAL);
	cr_assert(strstr(err.msg, "users[].user.auth-provider") != NULL, "%s",
	    err.msg);
	/* A token user loads. */
	cr_assert_eq(
	    load("    token: abc\n", "", &err, &o), CU_OK, "%s", err.msg);
	cr_assert_str_eq(o.token, "abc");
	api_client_opts_dispose(&o);
}

Test(api_client_security, kubeconfig_ca_with_insecure_is_refused, .init = setup,
    .fini = teardown)
{
	struct api_client_opts o;
	cu_error err;

	cr_assert_eq(load("    token: abc\n",
			 "    certificate-authority-data: "
			 "LS0tLS1CRUdJTiBYLS0tLS0K\n"
			 "    insecure-skip-tls-verify: true\n",
			 &err, &o),
	    CU_EINVAL);
	cr_assert(strstr(err.msg, "cluster \"c1\"") != NULL &&
		      strstr(err.msg, "certificate-authority-data with "
				      "insecure-skip-tls-verify") != NULL &&
		      strstr(err.msg, "is not allowed") != NULL,
	    "%s", err.msg);
	cr_assert_eq(load("    token: abc\n",
			 "    insecure-skip-tls-verify: true\n", &err, &o),
	    CU_OK, "%s", err.msg);
	cr_assert(o.insecure);
	api_client_opts_dispose(&o);
}
