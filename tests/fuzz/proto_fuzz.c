/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/proto_fuzz.c - fuzz target for cueue-apiserver's protobuf
 * bodies (tests/apiserver/proto.c). The input is a request body as a
 * client sends it (magic "k8s\0", runtime.Unknown envelope, message).
 * Decoding either fails with a one-line message or gives a JSON object
 * with the envelope's apiVersion and kind; that object encodes again, and
 * the encoding decodes to the same object (the JSON form is a fixed
 * point). The typeMeta peek agrees with the decoder. Sanitizers catch
 * memory errors, abort() catches broken contracts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/apiserver/apiserver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cu_error err = {0}, perr = {0};
	char *av = NULL, *kind = NULL, *enc;
	json_t *obj, *again;
	size_t len = 0;
	int prc;

	prc = as_proto_peek(data, size, &av, &kind, &perr);
	obj = as_proto_decode(data, size, &err);
	if (obj == NULL) {
		if (err.code == 0 || err.msg[0] == '\0' ||
		    strchr(err.msg, '\n') != NULL)
			abort();
		cu_free(av);
		cu_free(kind);
		return 0;
	}
	/* a body that decodes has an envelope the peek reads alike */
	if (prc != 0 ||
	    strcmp(json_string_value(json_object_get(obj, "apiVersion")), av) !=
		0 ||
	    strcmp(json_string_value(json_object_get(obj, "kind")), kind) != 0)
		abort();
	enc = as_proto_encode(obj, &len);
	if (enc == NULL || len < 4 || memcmp(enc, "k8s\0", 4) != 0)
		abort();
	again = as_proto_decode(enc, len, &err);
	if (again == NULL || !json_equal(obj, again))
		abort();
	json_decref(again);
	cu_free(enc);
	json_decref(obj);
	cu_free(av);
	cu_free(kind);
	return 0;
}
