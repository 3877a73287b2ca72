/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/main.c - entry point of cueue-apiserver: command line,
 * TLS material, the default namespaces, the kubeconfig for clients, and
 * the libev loop until SIGTERM/SIGINT (then a clean shutdown, so that
 * LeakSanitizer can vouch for every run).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/apiserver/apiserver.h"
#include "tests/apiserver/tls.h"

void as_testapi_free(struct as_server *srv);
void as_sim_stop(struct as_server *srv);

static void usage(FILE *f)
{
	fprintf(f,
	    "usage: cueue-apiserver --listen 127.0.0.1:PORT --kubeconfig-out "
	    "FILE [options]\n"
	    "\n"
	    "A local Kubernetes-compatible API server for tests (HTTP/1.1).\n"
	    "PORT 0 picks a free port; the kubeconfig names the real one.\n"
	    "\n"
	    "  --tls                  serve HTTPS with a generated CA (SANs "
	    "for 127.0.0.1/localhost)\n"
	    "  --no-san               (tests) issue the serving certificate "
	    "without SANs\n"
	    "  --ca-out FILE          also write the CA certificate (PEM)\n"
	    "  --token TOKEN          admin bearer token (default: random)\n"
	    "  --simulate LIST        built-in controllers: jobs,jobsets,"
	    "scheduler,provisioning,\n"
	    "                         pods,deployments,statefulsets,"
	    "leaderworkersets,kubeflow,\n"
	    "                         mpijobs,trainjobs,ray,appwrappers,"
	    "sparkapplications\n"
	    "  --sim-tick-ms N        simulator step (default 100)\n"
	    "  --watch-history N      events kept per resource type "
	    "(default 10000)\n"
	    "  --write-latency-ms N   delay every write by N ms\n"
	    "  --bookmark-interval-ms N  watch bookmark period (default "
	    "60000)\n"
	    "  --test-endpoints       enable /__test/ (access log, faults, "
	    "compaction)\n"
	    "  --seed N               seed for generated names and UIDs\n"
	    "  --log-level LEVEL      debug|info|warn|error\n"
	    "  --help                 this text\n"
	    "\n"
	    "Simulated Jobs complete after the milliseconds in annotation\n"
	    "cueue.dev/sim-runtime-ms (default 1000) once unsuspended.\n"
	    "The scheduler stand-in acts once a v1 Node exists: it binds\n"
	    "pending Pods to nodes that fit (resources, nodeSelector, node\n"
	    "affinity, taints, spec.unschedulable, scheduling gates) or marks\n"
	    "them Unschedulable with kube-scheduler's message; bound Pods\n"
	    "become Ready after the milliseconds in their annotation\n"
	    "cueue.dev/sim-ready-ms (default 0), and a Job's runtime starts\n"
	    "when all its Pods are Ready. Without Nodes, simulated Jobs get\n"
	    "Ready Pods at once.\n"
	    "Simulated cluster-autoscaler (provisioning): a "
	    "ProvisioningRequest\n"
	    "is Accepted, then Provisioned after cueue.dev/sim-provision-ms\n"
	    "(annotation or parameter; default 500), or Failed when\n"
	    "cueue.dev/sim-provision-result is Failed; see "
	    "docs/apiserver.md.\n"
	    "pods: plain Pods honour scheduling gates, run for\n"
	    "cueue.dev/sim-runtime-ms and end Succeeded (Failed with\n"
	    "cueue.dev/sim-fail: \"true\"); the framework controllers install\n"
	    "their CRDs, create Pods (or children) from templates, honour\n"
	    "suspend and spec.managedBy, and finish after the runtime\n"
	    "(docs/apiserver.md §15).\n");
}

/* Decimal int >= 0, or -1 when malformed. */
static int atoi_checked(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v < 0 || v > 1000000000L)
		return -1;
	return (int)v;
}

static void on_signal(struct ev_loop *loop, ev_signal *w, int revents)
{
	(void)w;
	(void)revents;
	ev_break(loop, EVBREAK_ALL);
}

static int add_token(struct as_server *srv, const char *tok, const char *user)
{
	struct as_token *t =
	    cu_realloc(srv->tokens, (srv->ntokens + 1) * sizeof(*t));

	if (t == NULL)
		return CU_ENOMEM;
	srv->tokens = t;
	t[srv->ntokens].token = cu_strdup(tok);
	t[srv->ntokens].user = cu_strdup(user);
	/* The admin token is kube's cluster admin (system:masters). */
	t[srv->ntokens].groups =
	    strcmp(user, "admin") == 0 ? cu_strdup("system:masters") : NULL;
	srv->ntokens++;
	return CU_OK;
}

static int create_namespace(struct as_server *srv, const char *name)
{
	struct as_kind *k = as_kind_find(srv, "", "v1", "namespaces");
	json_t *ns = json_pack("{s:s, s:s, s:{s:s, s:{s:s}}, s:{s:[s]}, "
			       "s:{s:s}}",
	    "apiVersion", "v1", "kind", "Namespace", "metadata", "name", name,
	    "labels", "kubernetes.io/metadata.name", name, "spec", "finalizers",
	    "kubernetes", "status", "phase", "Active");

	return as_internal_create(srv, k, ns, "system:apiserver");
}

/* kube-apiserver's ConfigMap for aggregated API servers' delegated
 * authentication (the front-proxy settings; this server authenticates no
 * client certificates itself, so there is no client-ca-file). */
static int publish_authentication(struct as_server *srv)
{
	struct as_kind *k = as_kind_find(srv, "", "v1", "configmaps");
	json_t *cm = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s, s:s, "
			       "s:s, s:s}}",
	    "apiVersion", "v1", "kind", "ConfigMap", "metadata", "name",
	    "extension-apiserver-authentication", "namespace", "kube-system",
	    "data", "requestheader-client-ca-file", srv->proxy.ca_pem,
	    "requestheader-allowed-names", "[\"" AS_PROXY_CN "\"]",
	    "requestheader-username-headers", "[\"X-Remote-User\"]",
	    "requestheader-group-headers", "[\"X-Remote-Group\"]",
	    "requestheader-extra-headers-prefix", "[\"X-Remote-Extra-\"]");

	return k != NULL && cm != NULL
		   ? as_internal_create(srv, k, cm, "system:apiserver")
		   : CU_ENOMEM;
}

/* Three of kube-apiserver's bootstrap RBAC objects: system:discovery
 * (the discovery paths for every authenticated user), and the Role that
 * lets aggregated API servers read the ConfigMap above. */
static int bootstrap_rbac(struct as_server *srv)
{
	static const char rbac[] = "rbac.authorization.k8s.io";
	struct as_kind *cr = as_kind_find(srv, rbac, "v1", "clusterroles");
	struct as_kind *crb =
	    as_kind_find(srv, rbac, "v1", "clusterrolebindings");
	struct as_kind *r = as_kind_find(srv, rbac, "v1", "roles");
	json_t *labels =
	    json_pack("{s:s}", "kubernetes.io/bootstrapping", "rbac-defaults");
	int rc = CU_ENOMEM;

	if (cr == NULL || crb == NULL || r == NULL || labels == NULL) {
		json_decref(labels);
		return CU_ENOMEM;
	}
	rc = as_internal_create(srv, cr,
	    json_pack(
		"{s:s+, s:s, s:{s:s, s:O}, s:[{s:[s,s,s,s,s,s,s,s,s,s,s], "
		"s:[s]}]}",
		"apiVersion", rbac, "/v1", "kind", "ClusterRole", "metadata",
		"name", "system:discovery", "labels", labels, "rules",
		"nonResourceURLs", "/api", "/api/*", "/apis", "/apis/*",
		"/healthz", "/livez", "/openapi", "/openapi/*", "/readyz",
		"/version", "/version/", "verbs", "get"),
	    "system:apiserver");
	if (rc == CU_OK)
		rc = as_internal_create(srv, crb,
		    json_pack("{s:s+, s:s, s:{s:s, s:O}, s:{s:s, s:s, s:s}, "
			      "s:[{s:s, s:s, s:s}]}",
			"apiVersion", rbac, "/v1", "kind", "ClusterRoleBinding",
			"metadata", "name", "system:discovery", "labels",
			labels, "roleRef", "apiGroup", rbac, "kind",
			"ClusterRole", "name", "system:discovery", "subjects",
			"apiGroup", rbac, "kind", "Group", "name",
			"system:authenticated"),
		    "system:apiserver");
	if (rc == CU_OK)
		rc = as_internal_create(srv, r,
		    json_pack("{s:s+, s:s, s:{s:s, s:s, s:O}, s:[{s:[s], "
			      "s:[s], s:[s], s:[s,s,s]}]}",
			"apiVersion", rbac, "/v1", "kind", "Role", "metadata",
			"name", "extension-apiserver-authentication-reader",
			"namespace", "kube-system", "labels", labels, "rules",
			"apiGroups", "", "resources", "configmaps",
			"resourceNames", "extension-apiserver-authentication",
			"verbs", "get", "list", "watch"),
		    "system:apiserver");
	json_decref(labels);
	return rc;
}

static char *random_token(struct as_server *srv)
{
	return cu_asprintf("%016llx%016llx", (unsigned long long)as_rand(srv),
	    (unsigned long long)as_rand(srv));
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f == NULL)
		return CU_EIO;
	fputs(text, f);
	return fclose(f) == 0 ? CU_OK : CU_EIO;
}

int main(int argc, char **argv)
{
	struct as_server srv;
	struct as_tls_material tls;
	const char *listen = NULL, *simulate = NULL, *ca_out = NULL;
	char *token = NULL, *url = NULL;
	bool no_san = false;
	cu_error err;
	int i, rc = 1;
	unsigned long long seed = 0;

	memset(&srv, 0, sizeof(srv));
	memset(&tls, 0, sizeof(tls));
	srv.history = 10000;
	srv.bookmark_ms = 60000;
	srv.sim_tick_ms = 100;
	cu_log_set_component("cueue-apiserver");
	json_set_alloc_funcs(cu_malloc, cu_free);
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage(stdout);
			return 0;
		} else if (strcmp(a, "--tls") == 0) {
			srv.tls = true;
		} else if (strcmp(a, "--no-san") == 0) {
			no_san = true;
		} else if (strcmp(a, "--test-endpoints") == 0) {
			srv.test_endpoints = true;
		} else if (v == NULL) {
			fprintf(
			    stderr, "cueue-apiserver: %s needs a value\n", a);
			return 2;
		} else if (strcmp(a, "--listen") == 0) {
			listen = argv[++i];
		} else if (strcmp(a, "--kubeconfig-out") == 0) {
			srv.kubeconfig_out = argv[++i];
		} else if (strcmp(a, "--ca-out") == 0) {
			ca_out = argv[++i];
		} else if (strcmp(a, "--token") == 0) {
			cu_free(token);
			token = cu_strdup(argv[++i]);
		} else if (strcmp(a, "--simulate") == 0) {
			simulate = argv[++i];
		} else if (strcmp(a, "--sim-tick-ms") == 0) {
			srv.sim_tick_ms = atoi_checked(argv[++i]);
		} else if (strcmp(a, "--watch-history") == 0) {
			srv.history = (size_t)atoi_checked(argv[++i]);
		} else if (strcmp(a, "--write-latency-ms") == 0) {
			srv.write_latency_ms = atoi_checked(argv[++i]);
		} else if (strcmp(a, "--bookmark-interval-ms") == 0) {
			srv.bookmark_ms = atoi_checked(argv[++i]);
		} else if (strcmp(a, "--seed") == 0) {
			seed = strtoull(argv[++i], NULL, 10);
		} else if (strcmp(a, "--log-level") == 0) {
			enum cu_log_level l;

			if (cu_log_parse_level(argv[++i], &l) != CU_OK) {
				fprintf(stderr,
				    "cueue-apiserver: bad --log-level\n");
				return 2;
			}
			cu_log_set_level(l);
		} else {
			fprintf(
			    stderr, "cueue-apiserver: unknown option %s\n", a);
			usage(stderr);
			return 2;
		}
	}
	if (listen == NULL || srv.kubeconfig_out == NULL) {
		usage(stderr);
		return 2;
	}
	if (srv.history < 1 || srv.sim_tick_ms < 1 || srv.bookmark_ms < 1 ||
	    srv.write_latency_ms < 0) {
		fprintf(stderr, "cueue-apiserver: numeric options must be "
				"positive\n");
		return 2;
	}
	{
		const char *colon = strrchr(listen, ':');
		int port;

		if (colon == NULL || (port = atoi_checked(colon + 1)) < 0 ||
		    port > 65535) {
			fprintf(stderr,
			    "cueue-apiserver: --listen wants HOST:PORT\n");
			return 2;
		}
		srv.listen_host = cu_strndup(listen, (size_t)(colon - listen));
		srv.port = (uint16_t)port;
	}
	srv.rand_state =
	    seed ? seed : (uint64_t)cu_time_now_ns() ^ (uint64_t)getpid() << 32;
	if (srv.rand_state == 0)
		srv.rand_state = 88172645463325252ULL;
	if (token == NULL)
		token = random_token(&srv);
	if (simulate != NULL && !as_sim_parse(&srv, simulate, &err)) {
		fprintf(stderr, "cueue-apiserver: %s\n", err.msg);
		cu_free(token);
		cu_free(srv.listen_host);
		return 2;
	}
	srv.access_log = json_array();
	srv.writes_by_user = json_object();
	srv.loop = ev_default_loop(0);
	if (token == NULL || srv.listen_host == NULL ||
	    add_token(&srv, token, "admin") != CU_OK ||
	    as_kinds_init(&srv, &err) != CU_OK) {
		fprintf(stderr, "cueue-apiserver: start-up failed\n");
		goto out;
	}
	if (srv.tls) {
		if (as_tls_generate(&tls, NULL, no_san, &err) != CU_OK) {
			fprintf(stderr, "cueue-apiserver: TLS: %s\n", err.msg);
			goto out;
		}
		srv.cert_pem = tls.cert_pem;
		srv.key_pem = tls.key_pem;
		srv.ca_pem = tls.ca_cert_pem;
	}
	{
		struct as_tls_material px;

		if (as_tls_client(&px, "front-proxy-ca", AS_PROXY_CN, &err) !=
		    CU_OK) {
			fprintf(stderr, "cueue-apiserver: TLS: %s\n", err.msg);
			goto out;
		}
		srv.proxy.cert_pem = px.cert_pem;
		srv.proxy.key_pem = px.key_pem;
		srv.proxy.ca_pem = px.ca_cert_pem;
		cu_free(px.ca_key_pem);
	}
	if (create_namespace(&srv, "default") != CU_OK ||
	    create_namespace(&srv, "kube-system") != CU_OK ||
	    create_namespace(&srv, "kube-public") != CU_OK ||
	    create_namespace(&srv, "kube-node-lease") != CU_OK ||
	    publish_authentication(&srv) != CU_OK ||
	    bootstrap_rbac(&srv) != CU_OK) {
		fprintf(stderr, "cueue-apiserver: cannot create namespaces\n");
		goto out;
	}
	if (as_http_start(&srv, &err) != CU_OK) {
		fprintf(stderr, "cueue-apiserver: %s\n", err.msg);
		goto out;
	}
	url = cu_asprintf("%s://%s:%u", srv.tls ? "https" : "http",
	    srv.listen_host, (unsigned)srv.port);
	if (ca_out != NULL && srv.ca_pem != NULL &&
	    write_file(ca_out, srv.ca_pem) != CU_OK) {
		fprintf(stderr, "cueue-apiserver: cannot write %s\n", ca_out);
		goto stop;
	}
	if (url == NULL || as_kubeconfig_write(srv.kubeconfig_out, url,
			       srv.ca_pem, token, &err) != CU_OK) {
		fprintf(stderr, "cueue-apiserver: kubeconfig: %s\n",
		    url ? err.msg : "no memory");
		goto stop;
	}
	as_sim_start(&srv);
	ev_signal_init(&srv.sigterm, on_signal, SIGTERM);
	ev_signal_start(srv.loop, &srv.sigterm);
	ev_signal_init(&srv.sigint, on_signal, SIGINT);
	ev_signal_start(srv.loop, &srv.sigint);
	cu_info("serving on %s (kubeconfig %s)", url, srv.kubeconfig_out);
	ev_run(srv.loop, 0);
	cu_info("shutting down");
	ev_signal_stop(srv.loop, &srv.sigterm);
	ev_signal_stop(srv.loop, &srv.sigint);
	rc = 0;
stop:
	as_http_stop(&srv);
out:
	if (srv.loop != NULL &&
	    (srv.sim_jobs || srv.sim_jobsets || srv.sim_sched || srv.sim_prov ||
		srv.sim_fw != 0))
		as_sim_stop(&srv);
	as_kinds_free(&srv);
	as_testapi_free(&srv);
	for (i = 0; i < (int)srv.ntokens; i++) {
		cu_free(srv.tokens[i].token);
		cu_free(srv.tokens[i].user);
		cu_free(srv.tokens[i].groups);
	}
	cu_free(srv.tokens);
	json_decref(srv.access_log);
	json_decref(srv.writes_by_user);
	as_tls_material_dispose(&tls);
	cu_free(srv.proxy.cert_pem);
	cu_free(srv.proxy.key_pem);
	cu_free(srv.proxy.ca_pem);
	cu_free(srv.listen_host);
	cu_free(token);
	cu_free(url);
	if (srv.loop != NULL)
		ev_loop_destroy(srv.loop);
	return rc;
}
