/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/bench/codec_bench.c - `cueue-bench codec [FILE]`: how many Workload
 * objects per second cueue turns from API bytes into its typed model and
 * back: parse (jansson) + api_workload_decode, and api_workload_encode +
 * serialise. FILE defaults to tests/data/golden/workload.json.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "api/model.h"
#include "lib/cu.h"
#include "tests/bench/bench.h"

int bench_codec_main(int argc, char **argv);

int bench_codec_main(int argc, char **argv)
{
	const char *path =
	    argc > 1 ? argv[1] : "tests/data/golden/workload.json";
	size_t len, i, n = 0;
	char *text = bench_slurp(path, &len);
	int64_t t0, t_dec = 0, t_enc = 0, deadline;
	cu_error err;
	int rc = 1;

	if (text == NULL) {
		fprintf(stderr, "cueue-bench codec: cannot read %s\n", path);
		return 2;
	}
	t0 = cu_time_mono_ns();
	deadline = t0 + 2000000000LL; /* two seconds of work */
	while (cu_time_mono_ns() < deadline) {
		for (i = 0; i < 1000; i++) {
			struct api_workload wl;
			json_t *j, *out = NULL;
			char *s;
			int64_t a = cu_time_mono_ns(), b, c;

			j = json_loadb(text, len, 0, NULL);
			if (j == NULL ||
			    api_workload_decode(&wl, j, &err) != CU_OK) {
				fprintf(stderr, "cueue-bench codec: %s\n",
				    j ? err.msg : "not JSON");
				json_decref(j);
				goto out;
			}
			b = cu_time_mono_ns();
			if (api_workload_encode(&out, &wl, &err) != CU_OK) {
				fprintf(
				    stderr, "cueue-bench codec: %s\n", err.msg);
				api_workload_dispose(&wl);
				json_decref(j);
				goto out;
			}
			s = json_dumps(out, JSON_COMPACT);
			c = cu_time_mono_ns();
			t_dec += b - a;
			t_enc += c - b;
			cu_free(s); /* jansson allocates with malloc() */
			json_decref(out);
			api_workload_dispose(&wl);
			json_decref(j);
			n++;
		}
	}
	printf("codec: %zu Workloads (%zu bytes each): decode %.0f objects/s, "
	       "encode %.0f objects/s, round trip %.0f objects/s\n",
	    n, len, (double)n / ((double)t_dec / 1e9),
	    (double)n / ((double)t_enc / 1e9),
	    (double)n / ((double)(t_dec + t_enc) / 1e9));
	rc = 0;
out:
	cu_free(text);
	return rc;
}
