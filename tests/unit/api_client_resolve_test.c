/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/api_client_resolve_test.c - api_client_opts_resolve finds the
 * API server in controller-runtime's order (--kubeconfig, KUBECONFIG,
 * in-cluster, ~/.kube/config) and reports each failed attempt in order.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/client.h"

static char dir[64];

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	fclose(f);
}

/* A kubeconfig at dir/name whose server is https://<host>:6443. */
static char *kubeconfig(const char *name, const char *host)
{
	char *path = cu_asprintf("%s/%s", dir, name);
	char *text = cu_asprintf("apiVersion: v1\n"
				 "kind: Config\n"
				 "current-context: c\n"
				 "contexts:\n"
				 "- name: c\n"
				 "  context: {cluster: k, user: u}\n"
				 "clusters:\n"
				 "- name: k\n"
				 "  cluster: {server: \"https://%s:6443\"}\n"
				 "users:\n"
				 "- name: u\n"
				 "  user: {token: t}\n",
	    host);

	write_file(path, text);
	cu_free(text);
	return path;
}

struct notes {
	char lines[4][512];
	int n;
};

static void note(const char *line, void *payload)
{
	struct notes *ns = payload;

	if (ns->n < 4)
		snprintf(ns->lines[ns->n], sizeof(ns->lines[0]), "%s", line);
	ns->n++;
}

static void init(void)
{
	snprintf(dir, sizeof(dir), "/tmp/cueue-resolve-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	unsetenv("KUBECONFIG");
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
	unsetenv("POD_NAMESPACE");
	setenv("HOME", dir, 1); /* no .kube/config there yet */
}

static void fini(void)
{
	char *cmd = cu_asprintf("rm -rf %s", dir);
	FILE *p = popen(cmd, "r");

	if (p != NULL)
		pclose(p);
	cu_free(cmd);
}

TestSuite(api_client_resolve, .init = init, .fini = fini);

Test(api_client_resolve, flag_wins_over_kubeconfig_env)
{
	struct api_client_opts o;
	struct notes ns = {0};
	char *flag = kubeconfig("flag", "flag.example"),
	     *env = kubeconfig("env", "env.example"), *src;
	cu_error err;

	setenv("KUBECONFIG", env, 1);
	cr_assert_eq(
	    api_client_opts_resolve(&o, flag, NULL, note, &ns, &src, &err),
	    CU_OK, "%s", err.msg);
	cr_assert_str_eq(o.server, "https://flag.example:6443");
	cr_assert(strstr(src, "--kubeconfig") == src, "%s", src);
	cr_assert_eq(ns.n, 0);
	api_client_opts_dispose(&o);
	cu_free(src);
	cu_free(flag);
	cu_free(env);
}

Test(api_client_resolve, kubeconfig_env_before_in_cluster)
{
	struct api_client_opts o;
	struct notes ns = {0};
	char *env = kubeconfig("env", "env.example"), *list, *src, *sa;
	cu_error err;

	/* In a cluster too: KUBECONFIG still wins, as in controller-runtime.
	 * The first entry of the list does not exist: skipped, said. */
	sa = cu_asprintf("%s/sa", dir);
	mkdir(sa, 0700);
	{
		char *tok = cu_asprintf("%s/token", sa);

		write_file(tok, "secret\n");
		cu_free(tok);
	}
	setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	list = cu_asprintf("%s/missing:%s", dir, env);
	setenv("KUBECONFIG", list, 1);
	cr_assert_eq(
	    api_client_opts_resolve(&o, NULL, sa, note, &ns, &src, &err), CU_OK,
	    "%s", err.msg);
	cr_assert_str_eq(o.server, "https://env.example:6443");
	cr_assert(strstr(src, "KUBECONFIG ") == src, "%s", src);
	cr_assert_eq(ns.n, 1);
	cr_assert(strstr(ns.lines[0], "client config: KUBECONFIG: no such "
				      "file") != NULL,
	    "%s", ns.lines[0]);
	api_client_opts_dispose(&o);
	cu_free(src);

	/* Unset: now the service account. */
	unsetenv("KUBECONFIG");
	cr_assert_eq(
	    api_client_opts_resolve(&o, NULL, sa, NULL, NULL, &src, &err),
	    CU_OK, "%s", err.msg);
	cr_assert_str_eq(o.server, "https://10.0.0.1:443");
	cr_assert_str_eq(src, "in-cluster service account");
	api_client_opts_dispose(&o);
	cu_free(src);
	cu_free(sa);
	cu_free(list);
	cu_free(env);
}

Test(api_client_resolve, home_kube_config_last_with_one_line_per_attempt)
{
	struct api_client_opts o;
	struct notes ns = {0};
	char *kdir = cu_asprintf("%s/.kube", dir), *src, *p;
	cu_error err;

	/* Nothing anywhere: an error naming each attempt, two lines. */
	cr_assert_neq(api_client_opts_resolve(
			  &o, NULL, "/nonexistent", note, &ns, &src, &err),
	    CU_OK);
	cr_assert_null(src);
	cr_assert_eq(ns.n, 2);
	cr_assert(strstr(ns.lines[0], "client config: in-cluster: not in a "
				      "cluster") == ns.lines[0],
	    "%s", ns.lines[0]);
	cr_assert(
	    strstr(ns.lines[1], "/.kube/config: ") != NULL, "%s", ns.lines[1]);
	cr_assert(strstr(err.msg, "no API server configuration") != NULL &&
		      strstr(err.msg, "not in a cluster") != NULL &&
		      strstr(err.msg, ".kube/config") != NULL,
	    "%s", err.msg);

	/* ~/.kube/config present: used, after the in-cluster attempt. */
	mkdir(kdir, 0700);
	p = kubeconfig(".kube/config", "home.example");
	ns.n = 0;
	cr_assert_eq(api_client_opts_resolve(
			 &o, NULL, "/nonexistent", note, &ns, &src, &err),
	    CU_OK, "%s", err.msg);
	cr_assert_str_eq(o.server, "https://home.example:6443");
	cr_assert_str_eq(src, p);
	cr_assert_eq(ns.n, 1);
	api_client_opts_dispose(&o);
	cu_free(src);
	cu_free(p);
	cu_free(kdir);
}

Test(api_client_resolve, kubeconfig_env_without_any_file_fails)
{
	struct api_client_opts o;
	cu_error err;
	char *src;

	setenv("KUBECONFIG", "/nonexistent/a:/nonexistent/b", 1);
	cr_assert_eq(
	    api_client_opts_resolve(&o, NULL, NULL, NULL, NULL, &src, &err),
	    CU_ENOTFOUND);
	cr_assert(strstr(err.msg, "KUBECONFIG=/nonexistent/a:/nonexistent/b: "
				  "none of its files exists") != NULL,
	    "%s", err.msg);
}
