/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/bench/bench_util.c - helpers shared by cueue-bench's subcommands
 * (see bench.h): removing a run's scratch directory, reading a file.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/cu.h"
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

char *bench_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	cu_buf b;
	char chunk[8192];
	size_t n;

	if (f == NULL)
		return NULL;
	cu_buf_init(&b, 64u << 20);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		if (cu_buf_add(&b, chunk, n) != CU_OK)
			break;
	fclose(f);
	return cu_buf_detach(&b, len);
}
