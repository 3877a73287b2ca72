/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/replay.c - standalone driver that feeds every file of the
 * given corpus directories (or files) to LLVMFuzzerTestOneInput, so that
 * each fuzz target doubles as a regression test under gcc in `make test`
 * (libgit2's standalone_driver, SQLite's fuzzcheck).
 */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/cu.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	cu_buf b;
	char chunk[8192];
	size_t n;

	if (f == NULL) {
		fprintf(stderr, "replay: cannot open %s\n", path);
		return -1;
	}
	cu_buf_init(&b, (size_t)64 << 20);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		if (cu_buf_add(&b, chunk, n) != CU_OK) {
			fclose(f);
			fprintf(stderr, "replay: %s too big\n", path);
			return -1;
		}
	}
	fclose(f);
	/* Hand the target an exact-size heap copy so that ASan sees reads
	 * past the end of the input. */
	{
		unsigned char *copy = cu_malloc(b.len ? b.len : 1);

		if (copy == NULL) {
			cu_buf_dispose(&b);
			return -1;
		}
		if (b.len)
			memcpy(copy, b.ptr, b.len);
		LLVMFuzzerTestOneInput(copy, b.len);
		cu_free(copy);
	}
	cu_buf_dispose(&b);
	return 0;
}

int main(int argc, char **argv)
{
	int i, files = 0, failed = 0;

	for (i = 1; i < argc; i++) {
		struct stat st;
		DIR *d;
		struct dirent *e;

		if (stat(argv[i], &st) != 0)
			continue; /* an empty corpus directory may be absent */
		if (!S_ISDIR(st.st_mode)) {
			failed += replay_file(argv[i]) != 0;
			files++;
			continue;
		}
		d = opendir(argv[i]);
		if (d == NULL)
			continue;
		while ((e = readdir(d)) != NULL) {
			char *path;

			if (e->d_name[0] == '.')
				continue;
			path = cu_asprintf("%s/%s", argv[i], e->d_name);
			if (path == NULL)
				break;
			failed += replay_file(path) != 0;
			files++;
			cu_free(path);
		}
		closedir(d);
	}
	printf("%d passed, %d failed\n", files - failed, failed);
	return failed ? 1 : 0;
}
