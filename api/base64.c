/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/base64.c - standard base64 on OpenSSL's EVP block coder, with the
 * strict validation (and error offset) of Go's encoding/base64, which is
 * what Kubernetes clients and servers apply to []byte fields.
 */
#include <limits.h>
#include <string.h>

#include <openssl/evp.h>

#include "api/json.h"
#include "lib/cu.h"

char *api_base64_encode(const void *data, size_t n)
{
	unsigned char *o;

	if (n > (size_t)INT_MAX / 4 * 3 - 3)
		return NULL;
	o = cu_malloc((n + 2) / 3 * 4 + 1);
	if (o != NULL)
		EVP_EncodeBlock(o, data, (int)n);
	return (char *)o;
}

static bool in_alphabet(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c >= '0' && c <= '9') || c == '+' || c == '/';
}

/* Offset of the first byte Go's StdEncoding rejects; len when none. */
static size_t first_bad(const char *s, size_t len)
{
	size_t i, pad = 0;

	if (len % 4 != 0)
		return len - len % 4;
	for (i = 0; i < len; i++) {
		if (s[i] == '=') {
			/* Padding: only the last one or two bytes of a
			 * quantum of four. */
			if (i % 4 < 2 || i + 2 < len ||
			    (i + 1 < len && s[i + 1] != '='))
				return i;
			pad++;
			continue;
		}
		if (!in_alphabet((unsigned char)s[i]) || pad > 0)
			return i;
	}
	return len;
}

int api_base64_decode(const char *s, char **out, size_t *n, size_t *bad)
{
	size_t len = strlen(s), at = first_bad(s, len), pad = 0;
	unsigned char *o;
	int got;

	*out = NULL;
	*n = 0;
	if (at != len || len > (size_t)INT_MAX) {
		if (bad != NULL)
			*bad = at;
		return CU_EPARSE;
	}
	o = cu_malloc(len / 4 * 3 + 1);
	if (o == NULL)
		return CU_ENOMEM;
	got = EVP_DecodeBlock(o, (const unsigned char *)s, (int)len);
	if (got < 0) { /* cannot happen after first_bad; stay safe */
		cu_free(o);
		if (bad != NULL)
			*bad = 0;
		return CU_EPARSE;
	}
	/* EVP_DecodeBlock counts padding as decoded zero bytes. */
	while (pad < 2 && len > pad && s[len - 1 - pad] == '=')
		pad++;
	*n = (size_t)got - pad;
	o[*n] = '\0';
	*out = (char *)o;
	return CU_OK;
}
