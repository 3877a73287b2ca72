/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/bench/main.c - cueue-bench, the benchmark runner. Subcommands:
 *
 *   cueue-bench apiserver --url URL [...]   API server write/watch load
 *   cueue-bench codec [FILE]                Workload decode+encode rate
 *   cueue-bench engine                      admission engine at scale
 *   cueue-bench store [DIR [SECONDS]]       ledger commits per second
 *
 * `make bench` (tests/bench/run.sh) starts the programs and runs these.
 */
#include <stdio.h>
#include <string.h>

#include "lib/cu.h"

int bench_apiserver_main(int argc, char **argv);
int bench_engine_main(int argc, char **argv);
int bench_store_main(int argc, char **argv);
int bench_codec_main(int argc, char **argv);

static void usage(FILE *f)
{
	fprintf(f, "usage: cueue-bench apiserver --url URL [options]\n"
		   "       cueue-bench codec [WORKLOAD.json]\n"
		   "       cueue-bench engine\n"
		   "       cueue-bench store [DIR [SECONDS]]\n");
}

int main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (strcmp(argv[1], "apiserver") == 0)
		return bench_apiserver_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "codec") == 0)
		return bench_codec_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "engine") == 0)
		return bench_engine_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "store") == 0)
		return bench_store_main(argc - 1, argv + 1);
	usage(stderr);
	return 2;
}
