/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/convert_fuzz.c - fuzz the CRD conversion webhook
 * (wh_convert_serve, webhook/webhook.h) with arbitrary request bodies.
 *
 * Checked contracts (abort() on a breach): the answer is a
 * ConversionReview with a string response.uid and result.status Success
 * or Failure; HTTP 200/400/413 only; a Failure carries a message and no
 * objects; a Success converts every object, in order, to the desired
 * apiVersion with kind, name and namespace kept, and each converted
 * object converts back to its original version.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/json.h"
#include "webhook/webhook.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool same_str(const json_t *a, const json_t *b, const char *key)
{
	const char *x = api_json_str(a, key), *y = api_json_str(b, key);

	return (x == NULL && y == NULL) ||
	       (x != NULL && y != NULL && strcmp(x, y) == 0);
}

static void check_success(json_t *req, json_t *objs)
{
	json_t *in = json_object_get(req, "objects"), *o;
	const char *desired = api_json_str(req, "desiredAPIVersion");
	size_t i;

	if (json_array_size(objs) != json_array_size(in))
		abort();
	json_array_foreach(objs, i, o)
	{
		json_t *orig = json_array_get(in, i), *back = NULL;

		if (!same_str(o, orig, "kind") ||
		    strcmp(api_json_str(o, "apiVersion"), desired) != 0 ||
		    !same_str(json_object_get(o, "metadata"),
			json_object_get(orig, "metadata"), "name") ||
		    !same_str(json_object_get(o, "metadata"),
			json_object_get(orig, "metadata"), "namespace"))
			abort();
		if (wh_convert_object(o, api_json_str(orig, "apiVersion"),
			&back, NULL) != CU_OK)
			abort();
		json_decref(back);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int status = 0;
	char *out = NULL;
	size_t len = 0;
	json_t *doc, *in = NULL, *resp, *res;
	const char *st;

	if (wh_convert_serve(data, size, &status, &out, &len, NULL) != CU_OK)
		return 0; /* out of memory only */
	if (status != 200 && status != 400 && status != 413)
		abort();
	doc = json_loadb(out, len, 0, NULL);
	resp = json_object_get(doc, "response");
	res = json_object_get(resp, "result");
	st = api_json_str(res, "status");
	if (doc == NULL || api_json_str(resp, "uid") == NULL || st == NULL ||
	    !json_is_array(json_object_get(resp, "convertedObjects")))
		abort();
	if (strcmp(st, "Failure") == 0) {
		if (api_json_str(res, "message") == NULL ||
		    json_array_size(json_object_get(resp, "convertedObjects")))
			abort();
	} else if (strcmp(st, "Success") == 0 && status == 200) {
		in = json_loadb((const char *)data, size, 0, NULL);
		if (in == NULL)
			abort();
		check_success(json_object_get(in, "request"),
		    json_object_get(resp, "convertedObjects"));
	} else
		abort();
	json_decref(in);
	json_decref(doc);
	cu_free(out);
	return 0;
}
