/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/kubeconfig_fuzz.c - fuzz target for the kubeconfig loader
 * (api_client_opts_from_kubeconfig in api/client_config.c). The input is
 * the kubeconfig file; it is written to one private temporary file per
 * process, because the loader takes a path (it only records the paths of
 * certificate, key and token files, never reads them).
 *
 * Checked contract (abort() on a breach): CU_OK fills server and
 * namespace_name; any failure leaves the options empty; the error codes
 * are the documented ones.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/client.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char fuzz_path[512]; /* the temporary kubeconfig; "" until made */

static void remove_file(void)
{
	if (fuzz_path[0] != '\0')
		unlink(fuzz_path);
}

/* Write data to the temporary file; false if that is impossible. */
static bool put_file(const uint8_t *data, size_t size)
{
	FILE *f;

	if (fuzz_path[0] == '\0') {
		const char *tmp = getenv("TMPDIR");
		int fd;

		snprintf(fuzz_path, sizeof(fuzz_path),
		    "%s/cueue-kubeconfig-fuzz-XXXXXX",
		    tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
		fd = mkstemp(fuzz_path);
		if (fd < 0) {
			fuzz_path[0] = '\0';
			return false;
		}
		close(fd);
		atexit(remove_file);
	}
	f = fopen(fuzz_path, "wb");
	if (f == NULL)
		return false;
	if (size > 0 && fwrite(data, 1, size, f) != size) {
		fclose(f);
		return false;
	}
	return fclose(f) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct api_client_opts o;
	cu_error err;
	int rc;

	if (!put_file(data, size))
		abort(); /* the harness itself is broken */
	rc = api_client_opts_from_kubeconfig(&o, fuzz_path, &err);
	if (rc == CU_OK) {
		if (o.server == NULL || o.namespace_name == NULL)
			abort();
		api_client_opts_dispose(&o);
		return 0;
	}
	if (rc != CU_EPARSE && rc != CU_EINVAL && rc != CU_ETOOBIG &&
	    rc != CU_EUNSUPPORTED && rc != CU_ENOMEM && rc != CU_EIO &&
	    rc != CU_ENOTFOUND)
		abort();
	if (o.server != NULL || o.token != NULL || o.ca_pem != NULL ||
	    o.namespace_name != NULL)
		abort();
	if (err.msg[0] == '\0')
		abort();
	return 0;
}
