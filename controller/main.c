/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/main.c - entry point of cueue-controller.
 *
 * The reconcilers, scheduler wiring, webhook and metrics are built in
 * later milestones (see the issues); this entry point already honours the
 * documented command-line contract, validates the configuration
 * (--check-config prints the effective one), and refuses to run rather
 * than pretending to.
 */
#include <stdio.h>
#include <string.h>

#include "controller/config.h"
#include "lib/cu.h"

static void usage(FILE *f)
{
	fprintf(f,
	    "usage: cueue-controller --config FILE [--kubeconfig FILE] "
	    "[--store FILE]\n"
	    "       cueue-controller --config FILE --check-config\n"
	    "\n"
	    "Kueue-compatible job-queueing controller.\n"
	    "\n"
	    "  --config FILE      Kueue Configuration YAML "
	    "(config.kueue.x-k8s.io\n"
	    "                     v1beta2 or v1beta1), e.g. the mounted "
	    "ConfigMap\n"
	    "  --kubeconfig FILE  API server credentials; default: in-cluster "
	    "service account\n"
	    "  --store FILE       SQLite admission ledger\n"
	    "  --check-config     load and validate --config, print the "
	    "effective\n"
	    "                     configuration (defaults filled, v1beta2 "
	    "YAML) on stdout\n"
	    "                     and exit 0; on an error print it on stderr "
	    "and exit 1\n"
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

static int check_config(const char *path)
{
	struct ctl_config cfg;
	cu_error err;
	cu_buf out;
	size_t i;
	int rc;

	cu_error_clear(&err);
	if (ctl_config_load(&cfg, path, &err) != CU_OK) {
		fprintf(stderr, "cueue-controller: invalid configuration: %s\n",
		    err.msg);
		return 1;
	}
	for (i = 0; i < cfg.nwarnings; i++)
		fprintf(
		    stderr, "cueue-controller: warning: %s\n", cfg.warnings[i]);
	cu_buf_init(&out, (size_t)1 << 20);
	rc = ctl_config_to_yaml(&cfg, &out, &err);
	if (rc == CU_OK && out.len > 0)
		fwrite(out.ptr, 1, out.len, stdout);
	else if (rc != CU_OK)
		fprintf(stderr, "cueue-controller: %s\n", err.msg);
	cu_buf_dispose(&out);
	ctl_config_dispose(&cfg);
	return rc == CU_OK && fflush(stdout) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	const char *config = NULL, *kubeconfig = NULL, *store = NULL;
	bool check = false;
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
		if (strcmp(argv[i], "--check-config") == 0) {
			check = true;
			continue;
		}
		if ((v = opt_value(argc, argv, &i, "--config", &missing)))
			config = v;
		else if ((v = opt_value(
			      argc, argv, &i, "--kubeconfig", &missing)))
			kubeconfig = v;
		else if ((v = opt_value(argc, argv, &i, "--store", &missing)))
			store = v;
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
	if (config == NULL) {
		fprintf(
		    stderr, "cueue-controller: --config FILE is required\n");
		usage(stderr);
		return 2;
	}
	if (check)
		return check_config(config);
	{
		struct ctl_config cfg;
		cu_error err;

		/* Refuse a bad configuration before anything else, as
		 * Kueue does (exit 1). */
		if (ctl_config_load(&cfg, config, &err) != CU_OK) {
			cu_errorf("invalid configuration: %s", err.msg);
			return 1;
		}
		for (i = 0; (size_t)i < cfg.nwarnings; i++)
			cu_warn("%s", cfg.warnings[i]);
		ctl_config_dispose(&cfg);
	}
	(void)kubeconfig;
	(void)store;
	cu_errorf("the controller loop is not implemented yet");
	return 2;
}
