/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/scale_fuzz.c - fuzz target for cueue-apiserver's /scale
 * subresource bodies (tests/apiserver/scale.c) and its --simulate list
 * (tests/apiserver/fwkit.c). Byte 0 picks PUT (a Scale), a JSON merge
 * patch or a JSON patch of the Scale; the rest is the body. Every body
 * either gives replicas >= 0, written back into a copy of the object (the
 * stored one untouched), or a 4xx answer with a one-line message. The
 * same bytes as a --simulate list are accepted or refused with a
 * message, never anything else.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/apiserver/apiserver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char deployment[] =
    "{\"metadata\":{\"name\":\"web\",\"namespace\":\"default\","
    "\"resourceVersion\":\"7\"},\"spec\":{\"replicas\":3,\"selector\":"
    "{\"matchLabels\":{\"app\":\"web\"}}},\"status\":{\"replicas\":3}}";

static void fuzz_scale(const uint8_t *data, size_t size)
{
	static const char *const types[] = {"application/json",
	    "application/merge-patch+json", "application/json-patch+json",
	    "application/strategic-merge-patch+json"};
	struct as_kind k;
	struct as_request rq;
	struct as_resp resp;
	json_t *obj = json_loads(deployment, 0, NULL), *scale, *headers, *upd;
	json_int_t want = -1;
	int rc;

	memset(&k, 0, sizeof(k));
	memset(&rq, 0, sizeof(rq));
	memset(&resp, 0, sizeof(resp));
	headers = json_pack("{s:s}", "Content-Type", types[data[0] % 4]);
	rq.method = data[0] % 4 == 0 ? "PUT" : "PATCH";
	rq.body = (const char *)data + 1;
	rq.body_len = size - 1;
	rq.headers = headers;
	scale = as_scale_get(&k, obj);
	if (obj == NULL || scale == NULL)
		abort();
	rc = as_scale_wanted(&rq, scale, &want, &resp);
	if (rc == CU_OK) {
		if (want < 0 || resp.body != NULL)
			abort();
		upd = as_scale_set(&k, obj, want);
		if (json_integer_value(json_object_get(
			json_object_get(upd, "spec"), "replicas")) != want ||
		    json_integer_value(json_object_get(
			json_object_get(obj, "spec"), "replicas")) != 3)
			abort();
		json_decref(upd);
	} else {
		const char *msg =
		    json_string_value(json_object_get(resp.body, "message"));

		if (resp.code < 400 || resp.code > 499 || msg == NULL ||
		    strchr(msg, '\n') != NULL)
			abort();
	}
	json_decref(resp.body);
	json_decref(scale);
	json_decref(headers);
	json_decref(obj);
}

static void fuzz_simulate(const uint8_t *data, size_t size)
{
	struct as_server srv;
	cu_error err = {0};
	char *list = cu_strndup((const char *)data, size);

	memset(&srv, 0, sizeof(srv));
	if (list == NULL)
		return;
	if (!as_sim_parse(&srv, list, &err) &&
	    (err.msg[0] == '\0' || strchr(err.msg, '\n') != NULL))
		abort();
	/* every framework implies the pod stand-in */
	if ((srv.sim_fw & ~(unsigned)AS_SIM_PODS) != 0 &&
	    !(srv.sim_fw & AS_SIM_PODS))
		abort();
	cu_free(list);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	fuzz_scale(data, size);
	fuzz_simulate(data + 1, size - 1);
	return 0;
}
