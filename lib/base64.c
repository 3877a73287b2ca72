/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/base64.c - standard padded base64 (RFC 4648), with the strict
 * validation (and error offset) of Go's encoding/base64, which is what
 * Kubernetes clients and servers apply to []byte fields. Plain C: lib/
 * depends on libc only.
 */
#include <stdint.h>
#include <string.h>

#include "lib/cu.h"

static const char alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *cu_base64_encode(const void *data, size_t n)
{
	const unsigned char *in = data;
	char *o, *w;
	size_t i;

	if (n > (SIZE_MAX - 1) / 4 * 3 - 3)
		return NULL;
	o = cu_malloc((n + 2) / 3 * 4 + 1);
	if (o == NULL)
		return NULL;
	w = o;
	for (i = 0; i + 3 <= n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 |
			     in[i + 2];
		*w++ = alphabet[v >> 18];
		*w++ = alphabet[(v >> 12) & 63];
		*w++ = alphabet[(v >> 6) & 63];
		*w++ = alphabet[v & 63];
	}
	if (i < n) {
		uint32_t v = (uint32_t)in[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)in[i + 1] << 8;
		*w++ = alphabet[v >> 18];
		*w++ = alphabet[(v >> 12) & 63];
		*w++ = i + 1 < n ? alphabet[(v >> 6) & 63] : '=';
		*w++ = '=';
	}
	*w = '\0';
	return o;
}

/* The 6-bit value of an alphabet byte; -1 for anything else. */
static int sextet(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
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
		if (sextet((unsigned char)s[i]) < 0 || pad > 0)
			return i;
	}
	return len;
}

int cu_base64_decode(const char *s, char **out, size_t *n, size_t *bad)
{
	size_t len = strlen(s), at = first_bad(s, len), i;
	unsigned char *o, *w;

	*out = NULL;
	*n = 0;
	if (at != len) {
		if (bad != NULL)
			*bad = at;
		return CU_EPARSE;
	}
	o = cu_malloc(len / 4 * 3 + 1);
	if (o == NULL)
		return CU_ENOMEM;
	w = o;
	/* first_bad accepted s: whole quanta of four, '=' only at the end.
	 * As Go's StdEncoding, unused low bits of the last quantum are
	 * ignored. */
	for (i = 0; i < len; i += 4) {
		uint32_t v = 0;
		int k, have = 0;
		for (k = 0; k < 4; k++) {
			v <<= 6;
			if (s[i + k] != '=') {
				v |= (uint32_t)sextet((unsigned char)s[i + k]);
				have++;
			}
		}
		*w++ = (unsigned char)(v >> 16);
		if (have > 2)
			*w++ = (unsigned char)(v >> 8);
		if (have > 3)
			*w++ = (unsigned char)v;
	}
	*n = (size_t)(w - o);
	*w = '\0';
	*out = (char *)o;
	return CU_OK;
}
