/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/bench/main.c - cueue-bench, the benchmark runner. Subcommands:
 *
 *   cueue-bench apiserver --url URL [...]   API server write/watch load
 *   cueue-bench codec [FILE]                Workload decode+encode rate
 *   cueue-bench engine [fair]               admission engine at scale
 *   cueue-bench store [DIR [SECONDS]]       ledger commits per second
 *   cueue-bench tas [slices]                topology placement decisions/s
 *   cueue-bench typed [N]                   typed reads beside raw walks
 *   cueue-bench watch [FILE...]             watch-event decode cost
 *   cueue-bench sched --generator FILE ...   Kueue's scheduler-perf test
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
int bench_sched_main(int argc, char **argv);
int bench_tas_main(int argc, char **argv);
int bench_watch_main(int argc, char **argv);
int bench_typed_main(int argc, char **argv);

static void usage(FILE *f)
{
	fprintf(f, "usage: cueue-bench apiserver --url URL [options]\n"
		   "       cueue-bench codec [WORKLOAD.json]\n"
		   "       cueue-bench engine [fair]\n"
		   "       cueue-bench store [DIR [SECONDS]]\n"
		   "       cueue-bench tas [slices]\n"
		   "       cueue-bench typed [N]\n"
		   "       cueue-bench watch [EVENTS.ndjson...]\n"
		   "       cueue-bench sched --generator FILE [...] (see "
		   "sched --help)\n");
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
	if (strcmp(argv[1], "sched") == 0)
		return bench_sched_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "engine") == 0)
		return bench_engine_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "tas") == 0)
		return bench_tas_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "watch") == 0)
		return bench_watch_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "typed") == 0)
		return bench_typed_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "store") == 0)
		return bench_store_main(argc - 1, argv + 1);
	usage(stderr);
	return 2;
}
