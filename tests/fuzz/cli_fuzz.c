/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/cli_fuzz.c - fuzz what kubectl-cueue reads: the command line
 * (cli_parse, the input split at NUL bytes into argv) and the API
 * server's answers (the input as JSON, given as the items of every
 * listing, the Workloads and LocalQueues of the local pending order, the
 * visibility API's items, and to the YAML writer).
 *
 * Checked contract (abort() on a breach): cli_parse returns CU_OK or
 * CU_EINVAL with a one-line message; a successful parse of a command
 * that is not help has a verb; the renderers succeed on any JSON array
 * (allocation apart) and end every line with '\n'; the pending order
 * numbers positions 0..n-1 in the ClusterQueue; what the YAML writer
 * writes loads back as the same JSON.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/yaml.h"
#include "cli/cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* rc and the text of one renderer call (its output in *s). */
static void check_text(int rc, char **sp)
{
	char *s = *sp;

	*sp = NULL;
	if (rc == CU_ENOMEM)
		return;
	if (rc != CU_OK || s == NULL ||
	    (s[0] != '\0' && s[strlen(s) - 1] != '\n'))
		abort();
	cu_free(s);
}

static void fuzz_argv(const uint8_t *data, size_t size)
{
	char *buf = cu_malloc(size + 1);
	const char *argv[34];
	int argc = 1;
	struct cli_args a;
	cu_error e;
	int rc;

	if (buf == NULL)
		return;
	memcpy(buf, data, size);
	buf[size] = '\0';
	argv[0] = "kubectl-cueue";
	for (size_t i = 0; i <= size && argc < 33;) {
		argv[argc++] = buf + i;
		i += strlen(buf + i) + 1;
	}
	argv[argc] = NULL;
	rc = cli_parse(argc, argv, &a, &e);
	if (rc != CU_OK && (rc != CU_EINVAL || e.msg[0] == '\0' ||
			       strchr(e.msg, '\n') != NULL))
		abort();
	if (rc == CU_OK && a.verb == CLI_HELP && a.usage == NULL)
		abort();
	cu_free(buf);
}

static void fuzz_json(const uint8_t *data, size_t size)
{
	json_t *v = json_loadb((const char *)data, size, 0, NULL), *back;
	struct cli_wl_extra *ex;
	struct cli_pending *p;
	char *s = NULL;
	size_t n;
	cu_buf b;
	int rc;

	if (v == NULL)
		return;
	cu_buf_init(&b, (size_t)1 << 24);
	if (cli_yaml_dump(v, &b) == CU_OK && b.ptr != NULL) {
		if (api_yaml_load(&back, NULL, b.ptr, b.len, NULL, NULL) ==
		    CU_OK) {
			/* reals may print shorter; compare only without */
			if (!json_equal(back, v) &&
			    strchr((const char *)b.ptr, '.') == NULL &&
			    strchr((const char *)b.ptr, 'e') == NULL)
				abort();
			json_decref(back);
		}
	}
	cu_buf_dispose(&b);
	if (json_is_array(v)) {
		size_t k = json_array_size(v);

		ex = cu_calloc(k ? k : 1, sizeof(*ex));
		if (ex != NULL) {
			for (size_t i = 0; i < k; i++)
				ex[i].position = (long)i - 1;
			rc = cli_render_workloads(
			    v, ex, k % 2 == 0, 0, &s, NULL);
			check_text(rc, &s);
			cu_free(ex);
		}
		rc = cli_render_clusterqueues(v, 0, &s, NULL);
		check_text(rc, &s);
		rc = cli_render_resourceflavors(v, 0, &s, NULL);
		check_text(rc, &s);
		rc = cli_render_localqueues(v, true, 0, &s, NULL);
		check_text(rc, &s);
		rc = cli_render_pods(v, false, true, 0, &s, NULL);
		check_text(rc, &s);
		if (cli_pending_order(v, v, "cq", &p, &n, NULL) == CU_OK) {
			for (size_t i = 0; i < n; i++)
				if (p[i].pos_cq != (long)i || p[i].pos_lq < 0 ||
				    p[i].pos_lq > (long)i)
					abort();
			rc = cli_render_pending(p, n, 0, &s, NULL);
			check_text(rc, &s);
			cu_free(p);
		}
		if (cli_pending_from_visibility(v, &p, &n, NULL) == CU_OK) {
			json_t *sum;

			rc = cli_render_pending(p, n, 0, &s, NULL);
			check_text(rc, &s);
			if (cli_pending_json(p, n, &sum, NULL) == CU_OK)
				json_decref(sum);
			cu_free(p);
		}
	}
	json_decref(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 0 && data[0] == '!')
		fuzz_argv(data + 1, size - 1);
	else
		fuzz_json(data, size);
	return 0;
}
