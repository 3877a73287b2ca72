/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/bench/bench_util.c - helpers shared by cueue-bench's subcommands
 * (see bench.h): removing a run's scratch directory.
 */
#include <dirent.h>
#include <stdint.h>
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

int bench_cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}
