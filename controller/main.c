/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/main.c - entry point of cueue-controller.
 *
 * Parses the command line (controller/flags.h: cueue's options and Kueue's
 * manager flags), validates the configuration
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
#include "controller/flags.h"
#include "lib/cu.h"

static void usage(FILE *f)
{
	fprintf(f,
	    "usage: cueue-controller [--config FILE] [--kubeconfig FILE] "
	    "[--store FILE] [flags]\n"
	    "       cueue-controller [--config FILE] --check-config\n"
	    "       cueue-controller --convert-config FILE\n"
	    "\n"
	    "Kueue-compatible job-queueing controller. Kueue's manager flags "
	    "(--config,\n"
	    "--feature-gates, --kubeconfig, --zap-*) work with Kueue's "
	    "meaning.\n"
	    "\n"
	    "%s"
	    "\n"
	    "Exit status: 0 success, 1 invalid configuration, 2 usage "
	    "error.\n",
	    ctl_flags_help);
}

/* --check-config prints the effective configuration (minimal false);
 * --convert-config prints a v1beta1 (or v1beta2) file as the shortest
 * v1beta2 file, for Kueue users migrating their ConfigMap (true). */
static int print_config(const char *path, const json_t *gates, bool minimal)
{
	struct ctl_config cfg;
	cu_error err;
	cu_buf out;
	size_t i;
	int rc;

	cu_error_clear(&err);
	if (ctl_config_load_flags(&cfg, path, gates, &err) != CU_OK) {
		fprintf(stderr, "cueue-controller: invalid configuration: %s\n",
		    err.msg);
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
static int run(const struct ctl_flags *f, const json_t *gates)
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
	/* A file size limit (RLIMIT_FSIZE) must end in EFBIG, which the
	 * ledger reports as "ledger disk full" and survives, not in a
	 * SIGXFSZ that kills the process mid-commit. */
	(void)signal(SIGXFSZ, SIG_IGN);
	/* Everything the controller creates is its own: the ledger names
	 * every workload and certDir receives the webhook's private key
	 * (controller/certrot.c writes it with fopen, i.e. 0666 & ~umask). */
	(void)umask(077);
	/* Refuse a bad configuration before anything else, as Kueue does
	 * (exit 1). */
	if (ctl_config_load_flags(&cfg, f->config, gates, &err) != CU_OK) {
		cu_errorf("invalid configuration: %s", err.msg);
		return 1;
	}
	for (i = 0; i < cfg.nwarnings; i++)
		cu_warn("%s", cfg.warnings[i]);
	loop = ev_default_loop(EVFLAG_AUTO);
	main_loop = loop;
	memset(&opts, 0, sizeof(opts));
	opts.kubeconfig = f->kubeconfig;
	opts.store_path = f->store;
	opts.metrics_insecure = !f->metrics_secure;
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
	struct ctl_flags f;
	json_t *gates = NULL;
	cu_error err;
	int rc;

	json_set_alloc_funcs(cu_malloc, cu_free);
	cu_error_clear(&err);
	if (ctl_flags_parse(argc, (const char *const *)argv, &f, &err) !=
	    CU_OK) {
		fprintf(stderr, "cueue-controller: %s\n", err.msg);
		return 2;
	}
	if (f.level_set)
		cu_log_set_level(f.level);
	if (f.json_set)
		cu_log_set_json(f.json);
	switch (f.action) {
	case CTL_FLAGS_HELP:
		usage(stdout);
		return 0;
	case CTL_FLAGS_VERSION:
		printf("cueue-controller %s\n", CUEUE_VERSION);
		return 0;
	case CTL_FLAGS_COMPAT_TABLE:
		return compat_table();
	case CTL_FLAGS_CONVERT_CONFIG:
		return print_config(f.convert, NULL, true);
	default:
		break;
	}
	/* A bad --feature-gates value is a configuration error (exit 1),
	 * as in Kueue, where the flag is checked with the file. */
	if (f.feature_gates != NULL &&
	    ctl_flags_gates(f.feature_gates, &gates, &err) != CU_OK) {
		fprintf(stderr, "cueue-controller: invalid configuration: %s\n",
		    err.msg);
		return 1;
	}
	rc = f.action == CTL_FLAGS_CHECK_CONFIG
		 ? print_config(f.config, gates, false)
		 : run(&f, gates);
	json_decref(gates);
	return rc;
}
