/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/main.c - entry point of cueue-controller.
 *
 * Parses the documented command line, validates the configuration
 * (--check-config prints the effective one, --convert-config a v1beta1
 * file as the shortest v1beta2 one) and runs the controller
 * (controller/ctl.h) on one libev loop until SIGTERM or SIGINT.
 */
#include <ev.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "controller/config.h"
#include "controller/ctl.h"
#include "lib/cu.h"

static void usage(FILE *f)
{
	fprintf(f,
	    "usage: cueue-controller --config FILE [--kubeconfig FILE] "
	    "[--store FILE]\n"
	    "       cueue-controller --config FILE --check-config\n"
	    "       cueue-controller --convert-config FILE\n"
	    "\n"
	    "Kueue-compatible job-queueing controller.\n"
	    "\n"
	    "  --config FILE      Kueue Configuration YAML "
	    "(config.kueue.x-k8s.io\n"
	    "                     v1beta2 or v1beta1), e.g. the mounted "
	    "ConfigMap\n"
	    "  --kubeconfig FILE  API server credentials; default: "
	    "$KUBECONFIG, "
	    "else the\n"
	    "                     in-cluster service account, else "
	    "~/.kube/config\n"
	    "  --store FILE       SQLite admission ledger (default: in memory, "
	    "no restart safety);\n"
	    "                     created 0600; a corrupt one is moved to "
	    "FILE.corrupt-TIME\n"
	    "                     and rebuilt from the API server\n"
	    "  --metrics-secure=false  serve /metrics over plain HTTP with no\n"
	    "                     authentication (local use); default true:\n"
	    "                     HTTPS, a bearer token checked with a\n"
	    "                     TokenReview and a SubjectAccessReview\n"
	    "                     (get on the non-resource URL /metrics)\n"
	    "  --log-json         log one JSON object per line\n"
	    "  --log-level LEVEL  debug, info (default), warn or error\n"
	    "  --check-config     load and validate --config, print the "
	    "effective\n"
	    "                     configuration (defaults filled, v1beta2 "
	    "YAML) on stdout\n"
	    "                     and exit 0; on an error print it on stderr "
	    "and exit 1\n"
	    "  --convert-config FILE  print the Configuration FILE (v1beta1 "
	    "or v1beta2)\n"
	    "                     as the shortest v1beta2 file that means the "
	    "same\n"
	    "                     (fields at their defaults left out) and "
	    "exit\n"
	    "  --compat-table     print which Kueue fields cueue supports "
	    "(Markdown) and exit\n"
	    "  --version          print the version and exit\n"
	    "  --help             this text\n"
	    "\n"
	    "Exit status: 0 success, 1 invalid configuration, 2 usage "
	    "error.\n");
}

/* Accept both "--opt VALUE" and "--opt=VALUE" (Kueue's own manifests use
 * the latter). Returns the value or NULL if argv[*i] is not opt. */
static const char *opt_value(
    int argc, char **argv, int *i, const char *opt, bool *missing)
{
	size_t n = strlen(opt);

	if (strncmp(argv[*i], opt, n) != 0)
		return NULL;
	if (argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (argv[*i][n] != '\0')
		return NULL;
	if (*i + 1 >= argc) {
		*missing = true;
		return NULL;
	}
	return argv[++*i];
}

/* --check-config prints the effective configuration (minimal false);
 * --convert-config prints a v1beta1 (or v1beta2) file as the shortest
 * v1beta2 file, for Kueue users migrating their ConfigMap (true). */
static int print_config(const char *path, bool minimal)
{
	struct ctl_config cfg;
	cu_error err;
	cu_buf out;
	size_t i;
	int rc;

	char **errs = NULL;
	size_t nerrs = 0;

	cu_error_clear(&err);
	/* Every error of the file, one line each (path, line, field). */
	if (ctl_config_load_all(&cfg, path, &errs, &nerrs, &err) != CU_OK) {
		for (i = 0; i < nerrs; i++)
			fprintf(stderr,
			    "cueue-controller: invalid configuration: %s\n",
			    errs[i]);
		if (nerrs == 0)
			fprintf(stderr,
			    "cueue-controller: invalid configuration: %s\n",
			    err.msg);
		ctl_config_errors_free(errs, nerrs);
		return 1;
	}
	for (i = 0; i < cfg.nwarnings; i++)
		fprintf(
		    stderr, "cueue-controller: warning: %s\n", cfg.warnings[i]);
	cu_buf_init(&out, (size_t)1 << 20);
	rc = minimal ? ctl_config_to_yaml_minimal(&cfg, &out, &err)
		     : ctl_config_to_yaml(&cfg, &out, &err);
	if (rc == CU_OK)
		fwrite(out.ptr, 1, out.len, stdout);
	else
		fprintf(stderr, "cueue-controller: %s\n", err.msg);
	cu_buf_dispose(&out);
	ctl_config_dispose(&cfg);
	return rc == CU_OK && fflush(stdout) == 0 ? 0 : 1;
}

/* --compat-table: the table README's "Kueue compatibility" mirrors. */
static int compat_table(void)
{
	cu_error err;
	cu_buf out;
	int rc;

	cu_buf_init(&out, (size_t)1 << 20);
	rc = ctl_compat_markdown(&out, &err);
	if (rc == CU_OK)
		fwrite(out.ptr, 1, out.len, stdout);
	else
		fprintf(stderr, "cueue-controller: %s\n", err.msg);
	cu_buf_dispose(&out);
	return rc == CU_OK && fflush(stdout) == 0 ? 0 : 1;
}

static struct ev_loop *main_loop;
static ev_timer stop_deadline;

static void stopped(void *payload)
{
	(void)payload;
	ev_break(main_loop, EVBREAK_ALL);
}

static void on_stop_deadline(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)w;
	(void)revents;
	cu_warn("shutdown took too long; exiting anyway");
	ev_break(loop, EVBREAK_ALL);
}

static void on_signal(struct ev_loop *loop, ev_signal *w, int revents)
{
	ctl *c = w->data;

	(void)revents;
	cu_info("signal %d: shutting down", w->signum);
	ev_signal_stop(loop, w);
	/* Writes in flight finish and the lease is released; bounded. */
	ev_timer_init(&stop_deadline, on_stop_deadline, 10.0, 0.);
	ev_timer_start(loop, &stop_deadline);
	ctl_shutdown(c, stopped, NULL);
}

/* Run the controller until SIGTERM/SIGINT. Exit 0 after a clean shutdown,
 * 1 when the configuration or the start-up fails. */
static int run(const char *config, const char *kubeconfig, const char *store,
    bool json_logs, bool metrics_insecure)
{
	struct ctl_config cfg;
	struct ctl_run_opts opts;
	struct ev_loop *loop;
	ev_signal sterm, sint;
	cu_error err;
	ctl *c = NULL;
	char *own_user = NULL;
	size_t i;
	int rc = 1;

	cu_log_set_component("cueue-controller");
	cu_log_set_json(json_logs);
	/* A file size limit (RLIMIT_FSIZE) must end in EFBIG, which the
	 * ledger reports as "ledger disk full" and survives, not in a
	 * SIGXFSZ that kills the process mid-commit. */
	(void)signal(SIGXFSZ, SIG_IGN);
	/* Everything the controller creates is its own: the ledger names
	 * every workload and certDir receives the webhook's private key
	 * (controller/certrot.c writes it with fopen, i.e. 0666 & ~umask). */
	(void)umask(077);
	json_set_alloc_funcs(cu_malloc, cu_free);
	/* Refuse a bad configuration before anything else, as Kueue does
	 * (exit 1). */
	{
		char **errs = NULL;
		size_t nerrs = 0;

		if (ctl_config_load_all(&cfg, config, &errs, &nerrs, &err) !=
		    CU_OK) {
			for (i = 0; i < nerrs; i++)
				cu_errorf("invalid configuration: %s", errs[i]);
			if (nerrs == 0)
				cu_errorf("invalid configuration: %s", err.msg);
			ctl_config_errors_free(errs, nerrs);
			return 1;
		}
	}
	for (i = 0; i < cfg.nwarnings; i++)
		cu_warn("%s", cfg.warnings[i]);
	loop = ev_default_loop(EVFLAG_AUTO);
	main_loop = loop;
	memset(&opts, 0, sizeof(opts));
	opts.kubeconfig = kubeconfig;
	opts.store_path = store;
	opts.metrics_insecure = metrics_insecure;
	opts.sa_dir = getenv("CUEUE_SERVICE_ACCOUNT_DIR");
	opts.visibility_cert_dir = getenv("CUEUE_VISIBILITY_CERT_DIR");
	opts.identity = getenv("POD_NAME");
	/* CUEUE_USERNAME overrides the service account of the manifests. */
	own_user =
	    getenv("CUEUE_USERNAME") != NULL
		? cu_strdup(getenv("CUEUE_USERNAME"))
		: cu_asprintf("system:serviceaccount:%s:cueue-controller",
		      cfg.namespace ? cfg.namespace : "cueue-system");
	opts.own_username = own_user;
	if (ctl_new(&c, loop, &cfg, &opts, &err) != CU_OK ||
	    ctl_start(c, &err) != CU_OK) {
		cu_errorf("start-up failed: %s", err.msg);
		goto out;
	}
	ev_signal_init(&sterm, on_signal, SIGTERM);
	sterm.data = c;
	ev_signal_start(loop, &sterm);
	ev_signal_init(&sint, on_signal, SIGINT);
	sint.data = c;
	ev_signal_start(loop, &sint);
	cu_info("cueue-controller %s running", CUEUE_VERSION);
	ev_run(loop, 0);
	ev_timer_stop(loop, &stop_deadline);
	ev_signal_stop(loop, &sterm);
	ev_signal_stop(loop, &sint);
	rc = ctl_failed(c) ? 1 : 0;
out:
	ctl_free(c);
	cu_free(own_user);
	ctl_config_dispose(&cfg);
	ev_loop_destroy(loop);
	return rc;
}

int main(int argc, char **argv)
{
	const char *config = NULL, *kubeconfig = NULL, *store = NULL,
		   *convert = NULL;
	bool check = false, json_logs = false, metrics_secure = true;
	int i;

	for (i = 1; i < argc; i++) {
		bool missing = false;
		const char *v;

		if (strcmp(argv[i], "--help") == 0 ||
		    strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return 0;
		}
		if (strcmp(argv[i], "--version") == 0) {
			printf("cueue-controller %s\n", CUEUE_VERSION);
			return 0;
		}
		if (strcmp(argv[i], "--compat-table") == 0)
			return compat_table();
		if (strcmp(argv[i], "--check-config") == 0) {
			check = true;
			continue;
		}
		if (strcmp(argv[i], "--log-json") == 0) {
			json_logs = true;
			continue;
		}
		if (strcmp(argv[i], "--metrics-secure") == 0 ||
		    strcmp(argv[i], "--metrics-secure=true") == 0) {
			metrics_secure = true;
			continue;
		}
		if (strcmp(argv[i], "--metrics-secure=false") == 0) {
			metrics_secure = false;
			continue;
		}
		if ((v = opt_value(argc, argv, &i, "--log-level", &missing))) {
			enum cu_log_level l;

			if (cu_log_parse_level(v, &l) != CU_OK) {
				fprintf(stderr,
				    "cueue-controller: --log-level: debug, "
				    "info, warn or error\n");
				return 2;
			}
			cu_log_set_level(l);
			continue;
		}
		if ((v = opt_value(argc, argv, &i, "--config", &missing)))
			config = v;
		else if ((v = opt_value(
			      argc, argv, &i, "--kubeconfig", &missing)))
			kubeconfig = v;
		else if ((v = opt_value(argc, argv, &i, "--store", &missing)))
			store = v;
		else if ((v = opt_value(
			      argc, argv, &i, "--convert-config", &missing)))
			convert = v;
		if (v != NULL)
			continue;
		if (missing)
			fprintf(stderr, "cueue-controller: %s needs a value\n",
			    argv[i]);
		else
			fprintf(stderr, "cueue-controller: unknown option %s\n",
			    argv[i]);
		usage(stderr);
		return 2;
	}
	if (convert != NULL)
		return print_config(convert, true);
	if (config == NULL) {
		fprintf(
		    stderr, "cueue-controller: --config FILE is required\n");
		usage(stderr);
		return 2;
	}
	if (check)
		return print_config(config, false);
	return run(config, kubeconfig, store, json_logs, !metrics_secure);
}
