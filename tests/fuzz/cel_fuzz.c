/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/cel_fuzz.c - fuzz the CEL subset of x-kubernetes-validations
 * rules (cel_parse / as_cel_eval, tests/apiserver/cel.c). The input's
 * first line is the rule; the rest, when it is JSON, is self (and
 * oldSelf). Checked contracts (abort() on a breach): a parse gives a rule
 * or a message, never both nor neither; an evaluation gives a value or a
 * message, the same one twice; nothing crashes or leaks whatever the
 * nesting.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/apiserver/apiserver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Both uses: an expression that reads device runs as a selector. */
static json_t *run(const struct cel_expr *cel, json_t *self, char **err)
{
	struct cel_var vars[] = {{"device", self}};
	struct cel_env env = {vars, 1, NULL};
	json_t *r = as_cel_eval(cel, self, self, err);

	if (r == NULL && strstr(*err, "'device'") != NULL) {
		cu_free(*err);
		r = cel_eval(cel, &env, err);
	}
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = cu_strndup((const char *)data, size);
	char *nl, *err = NULL, *err2 = NULL;
	struct cel_expr *cel;
	json_t *self = NULL, *r, *r2;

	if (s == NULL)
		return 0;
	nl = strchr(s, '\n');
	if (nl != NULL) {
		*nl = '\0';
		self = json_loads(nl + 1, JSON_DECODE_ANY, NULL);
	}
	if (self == NULL)
		self = json_pack(
		    "{s:[{s:i}], s:s}", "items", "count", 1, "name", "a");
	cel = cel_parse(s, &err);
	if ((cel == NULL) == (err == NULL))
		abort();
	if (cel != NULL) {
		r = run(cel, self, &err);
		r2 = run(cel, self, &err2);
		if ((r == NULL) == (err == NULL) ||
		    (r2 == NULL) == (err2 == NULL))
			abort();
		if ((r == NULL) != (r2 == NULL) ||
		    (r != NULL && !json_equal(r, r2)) ||
		    (err != NULL && strcmp(err, err2) != 0))
			abort();
		json_decref(r);
		json_decref(r2);
	}
	cu_free(err);
	cu_free(err2);
	cel_free(cel);
	json_decref(self);
	cu_free(s);
	return 0;
}
