/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/bench/bench_util.c - helpers shared by cueue-bench's subcommands
 * (see bench.h): removing a run's scratch directory.
 */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tests/bench/bench.h"

void bench_rm_tree(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[1024];

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		unlink(p);
	}
	closedir(d);
	rmdir(dir);
}
