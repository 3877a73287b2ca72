/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/jsonpath_fuzz.c - fuzz kubectl-cueue's JSONPath templates
 * (cli/jsonpath.c): the input up to the first NUL byte is the template,
 * the rest a JSON document (a fixed List when it does not parse).
 *
 * Checked contract (abort() on a breach): cli_jsonpath_parse returns
 * CU_OK with a template or CU_EINVAL with a one-line message starting
 * "jsonpath: " and no template; cli_jsonpath_exec on any document
 * returns CU_OK, CU_ENOMEM or CU_ETOOBIG, and twice the same text.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char FIXED[] =
    "{\"kind\":\"List\",\"items\":[{\"metadata\":{\"name\":\"a\"},"
    "\"spec\":{\"n\":[1,2,3]}},{\"metadata\":{\"name\":\"b\"}}]}";

static char *exec_once(const cli_jsonpath *jp, const json_t *doc)
{
	cu_error e;
	cu_buf out;
	char *s;
	int rc;

	cu_buf_init(&out, (size_t)1 << 20);
	rc = cli_jsonpath_exec(jp, doc, &out, &e);
	if (rc != CU_OK && rc != CU_ENOMEM && rc != CU_ETOOBIG)
		abort();
	s = rc == CU_OK ? cu_buf_detach(&out, NULL) : NULL;
	cu_buf_dispose(&out);
	return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t tl = nul ? (size_t)(nul - data) : size;
	char *tmpl = cu_strndup((const char *)data, tl);
	cli_jsonpath *jp = NULL;
	json_t *doc = NULL;
	cu_error e;
	int rc;

	if (tmpl == NULL)
		return 0;
	if (nul != NULL)
		doc = json_loadb((const char *)nul + 1, size - tl - 1,
		    JSON_DECODE_ANY, NULL);
	if (doc == NULL)
		doc = json_loads(FIXED, 0, NULL);
	rc = cli_jsonpath_parse(tmpl, &jp, &e);
	if (rc == CU_OK) {
		char *a, *b;

		if (jp == NULL)
			abort();
		a = exec_once(jp, doc);
		b = exec_once(jp, doc);
		if (a != NULL && b != NULL && strcmp(a, b) != 0)
			abort();
		cu_free(a);
		cu_free(b);
	} else if (rc == CU_EINVAL) {
		if (jp != NULL || strncmp(e.msg, "jsonpath: ", 10) != 0 ||
		    strchr(e.msg, '\n') != NULL)
			abort();
	} else if (rc != CU_ENOMEM) {
		abort();
	}
	cli_jsonpath_free(jp);
	json_decref(doc);
	cu_free(tmpl);
	return 0;
}
