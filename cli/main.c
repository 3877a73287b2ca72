/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli/main.c - entry point of kubectl-cueue, the kubectl plugin of cueue
 * (`kubectl cueue ...` once it is on the PATH): parse the command line,
 * run the command, exit 0 or 1 (cli/cli.h).
 */
#include <jansson.h>
#include <signal.h>
#include <stdio.h>

#include "cli/cli.h"
#include "lib/cu.h"

int main(int argc, char **argv)
{
	struct cli_args a;
	cu_error err;

	(void)signal(SIGPIPE, SIG_IGN);
	json_set_alloc_funcs(cu_malloc, cu_free);
	cu_log_set_component("kubectl-cueue");
	cu_log_set_level(CU_LOG_ERROR);
	if (cli_parse(argc, (const char *const *)argv, &a, &err) != CU_OK) {
		fprintf(stderr, "error: %s\n", err.msg);
		return 1;
	}
	return cli_run(&a, stdout, stderr);
}
