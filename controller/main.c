/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/main.c - entry point of cueue-controller.
 *
 * The reconcilers, scheduler wiring, webhook and metrics are built in
 * later milestones (see the issues); this entry point already honours the
 * documented command-line contract and refuses to run rather than
 * pretending to.
 */
#include <stdio.h>
#include <string.h>

#include "lib/cu.h"

static void usage(FILE *f)
{
	fprintf(f,
	    "usage: cueue-controller --config FILE [--kubeconfig FILE] "
	    "[--store FILE]\n"
	    "\n"
	    "Kueue-compatible job-queueing controller.\n"
	    "\n"
	    "  --config FILE      Kueue Configuration YAML "
	    "(config.kueue.x-k8s.io)\n"
	    "  --kubeconfig FILE  API server credentials; default: in-cluster "
	    "service account\n"
	    "  --store FILE       SQLite admission ledger\n"
	    "  --version          print the version and exit\n"
	    "  --help             this text\n");
}

int main(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 ||
		    strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return 0;
		}
		if (strcmp(argv[i], "--version") == 0) {
			printf("cueue-controller %s\n", CUEUE_VERSION);
			return 0;
		}
	}
	usage(stderr);
	cu_errorf("the controller loop is not implemented yet");
	return 2;
}
