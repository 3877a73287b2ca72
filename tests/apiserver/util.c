/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/util.c - small helpers of cueue-apiserver: dotted-path
 * JSON access, UUIDs, name validation, compact serialisation.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "tests/apiserver/apiserver.h"

json_t *as_jget(json_t *obj, const char *path)
{
	char seg[256];
	const char *p = path, *dot;

	while (obj != NULL && *p != '\0') {
		size_t n;

		dot = strchr(p, '.');
		n = dot ? (size_t)(dot - p) : strlen(p);
		if (n >= sizeof(seg) || !json_is_object(obj))
			return NULL;
		memcpy(seg, p, n);
		seg[n] = '\0';
		obj = json_object_get(obj, seg);
		p += n + (dot ? 1 : 0);
	}
	return obj;
}

const char *as_jstr(json_t *obj, const char *path)
{
	return json_string_value(as_jget(obj, path));
}

int as_jset(json_t *obj, const char *path, json_t *value)
{
	char seg[256];
	const char *p = path, *dot;

	while ((dot = strchr(p, '.')) != NULL) {
		size_t n = (size_t)(dot - p);
		json_t *child;

		if (n >= sizeof(seg))
			goto fail;
		memcpy(seg, p, n);
		seg[n] = '\0';
		child = json_object_get(obj, seg);
		if (!json_is_object(child)) {
			child = json_object();
			if (child == NULL ||
			    json_object_set_new(obj, seg, child) != 0)
				goto fail;
		}
		obj = child;
		p = dot + 1;
	}
	return json_object_set_new(obj, p, value) == 0 ? CU_OK : CU_ENOMEM;
fail:
	json_decref(value);
	return CU_ENOMEM;
}

uint64_t as_rand(struct as_server *srv)
{
	/* xorshift64*: test data only (names, UUIDs), never security. */
	uint64_t x = srv->rand_state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	srv->rand_state = x;
	return x * 0x2545F4914F6CDD1DULL;
}

char *as_uuid(struct as_server *srv)
{
	uint64_t a = as_rand(srv), b = as_rand(srv);

	/* RFC 4122 version 4 layout. */
	a = (a & ~0xF000ULL) | 0x4000ULL;
	b = (b & ~(0xC000ULL << 48)) | (0x8000ULL << 48);
	return cu_asprintf("%08x-%04x-%04x-%04x-%012llx", (unsigned)(a >> 32),
	    (unsigned)((a >> 16) & 0xFFFF), (unsigned)(a & 0xFFFF),
	    (unsigned)(b >> 48), (unsigned long long)(b & 0xFFFFFFFFFFFFULL));
}

static int64_t pinned_ns;

void as_clock_pin(int64_t ns)
{
	pinned_ns = ns;
}

void as_now_rfc3339(char out[CU_TIME_RFC3339_LEN])
{
	cu_time_format_rfc3339(pinned_ns ? pinned_ns : cu_time_now_ns(), out);
}

bool as_valid_dns_label(const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > 63)
		return false;
	for (i = 0; i < n; i++) {
		char c = s[i];

		if (!(islower((unsigned char)c) || isdigit((unsigned char)c) ||
			c == '-'))
			return false;
	}
	return s[0] != '-' && s[n - 1] != '-';
}

/* apimachinery's IsDNS1123Subdomain: at most 253 characters of
 * [a-z0-9-.], each dot-separated part starting and ending with a letter
 * or digit. Unlike a label, a part has no length limit of its own
 * (kube's regular expression has none): "a.<100 letters>.b" is valid. */
bool as_valid_dns_subdomain(const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > 253)
		return false;
	for (i = 0; i < n; i++) {
		char c = s[i];
		bool edge =
		    i == 0 || i == n - 1 || s[i - 1] == '.' || s[i + 1] == '.';

		if (c == '.') {
			if (i == 0 || i == n - 1 || s[i + 1] == '.')
				return false;
			continue;
		}
		if (!(islower((unsigned char)c) || isdigit((unsigned char)c) ||
			c == '-'))
			return false;
		if (edge && c == '-')
			return false;
	}
	return true;
}

char *as_json_dump(json_t *j, size_t *len)
{
	char *s = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);

	if (s != NULL && len != NULL)
		*len = strlen(s);
	return s;
}
