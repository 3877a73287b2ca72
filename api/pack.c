/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/pack.c - the text a compact informer keeps for each cached object
 * (api/pack_int.h): the object's compact JSON, deflated against a
 * dictionary taken from one of the informer's own objects once the cache
 * is large. Raw deflate streams (no header, no checksum: the text is
 * parsed right after and a broken one fails there), one deflate and one
 * inflate stream per informer, reset for every object. zlib allocates
 * through lib/mem.c.
 */
#include "api/pack_int.h"

#include <stdint.h>
#include <string.h>
#include <zlib.h>

#include "api/json.h"
#include "lib/cu.h"

/* An 8 KiB window (about 80 KiB of deflate state, 15 KiB of inflate):
 * the dictionary and a typical object fit in it; larger objects still
 * pack, against their own earlier bytes. */
#define WBITS 13
#define MEM_LEVEL 6
#define DICT_MAX 4096
/* Below this a text gains too little to pay for the stream calls. */
#define MIN_LEN 128

struct api__pack {
	z_stream def, inf;
	bool def_ok, inf_ok;
	unsigned char dict[DICT_MAX];
	size_t dict_len;
	unsigned char *buf; /* [owned] scratch: deflate output, plain text */
	size_t cap;
};

static voidpf z_alloc(voidpf opaque, uInt items, uInt size)
{
	(void)opaque;
	return cu_calloc(items, size);
}

static void z_free(voidpf opaque, voidpf ptr)
{
	(void)opaque;
	cu_free(ptr);
}

static bool grow(api__pack *p, size_t n)
{
	unsigned char *b;

	if (n <= p->cap)
		return true;
	b = cu_realloc(p->buf, n);
	if (b == NULL)
		return false;
	p->buf = b;
	p->cap = n;
	return true;
}

static bool def_start(api__pack *p)
{
	if (!p->def_ok) {
		p->def.zalloc = z_alloc;
		p->def.zfree = z_free;
		if (deflateInit2(&p->def, 1, Z_DEFLATED, -WBITS, MEM_LEVEL,
			Z_DEFAULT_STRATEGY) != Z_OK)
			return false;
		p->def_ok = true;
	} else if (deflateReset(&p->def) != Z_OK) {
		return false;
	}
	return deflateSetDictionary(&p->def, p->dict, (uInt)p->dict_len) ==
	       Z_OK;
}

/* Deflate text[len] into *out [owned: cu_free], *out_len; false when it
 * is too small or too large to gain, would not shrink, or memory ran
 * out. The first text seen becomes *pp's dictionary. */
static bool pack_put(
    api__pack **pp, const char *text, size_t len, char **out, size_t *out_len)
{
	api__pack *p = *pp;
	size_t n;

	if (len < MIN_LEN || len > UINT32_MAX)
		return false;
	if (p == NULL && (p = *pp = cu_calloc(1, sizeof(*p))) == NULL)
		return false;
	if (p->dict_len == 0) {
		/* deflate finds the dictionary's last bytes cheapest */
		p->dict_len = len < DICT_MAX ? len : DICT_MAX;
		memcpy(p->dict, text + len - p->dict_len, p->dict_len);
	}
	if (!grow(p, len) || !def_start(p))
		return false;
	p->def.next_in = (Bytef *)(uintptr_t)text;
	p->def.avail_in = (uInt)len;
	p->def.next_out = p->buf;
	p->def.avail_out = (uInt)len;
	if (deflate(&p->def, Z_FINISH) != Z_STREAM_END)
		return false; /* it would not shrink */
	n = len - p->def.avail_out;
	if ((*out = cu_malloc(n)) == NULL)
		return false;
	memcpy(*out, p->buf, n);
	*out_len = n;
	return true;
}

/* The plain_len bytes of plain text packed[len] inflates to [valid until
 * the next call on p; not NUL-terminated], or NULL. */
static const char *pack_get(
    api__pack *p, const char *packed, size_t len, size_t plain_len)
{
	if (p == NULL || len > UINT32_MAX || plain_len >= UINT32_MAX ||
	    !grow(p, plain_len + 1))
		return NULL;
	if (!p->inf_ok) {
		p->inf.zalloc = z_alloc;
		p->inf.zfree = z_free;
		if (inflateInit2(&p->inf, -WBITS) != Z_OK)
			return NULL;
		p->inf_ok = true;
	} else if (inflateReset(&p->inf) != Z_OK) {
		return NULL;
	}
	if (inflateSetDictionary(&p->inf, p->dict, (uInt)p->dict_len) != Z_OK)
		return NULL;
	p->inf.next_in = (Bytef *)(uintptr_t)packed;
	p->inf.avail_in = (uInt)len;
	p->inf.next_out = p->buf;
	p->inf.avail_out = (uInt)plain_len + 1; /* a byte over: exact length */
	if (inflate(&p->inf, Z_FINISH) != Z_STREAM_END || p->inf.avail_out != 1)
		return NULL;
	return (const char *)p->buf;
}

bool api__text_make(api__pack **p, bool pack, json_t *obj, const char *raw,
    size_t raw_len, char **take, struct api__text *out)
{
	char *text = NULL, *z;
	size_t len = raw_len, zlen;

	if (raw == NULL) {
		if (api_json_dumps(obj, JSON_COMPACT, 0, &text, &len) != CU_OK)
			return false;
		raw = text;
	}
	out->plain = 0;
	if (pack && pack_put(p, raw, len, &z, &zlen)) {
		cu_free(text);
		text = z;
		out->plain = (uint32_t)len;
		len = zlen;
	} else if (text == NULL && take != NULL && *take == raw) {
		text = *take;
		*take = NULL;
	} else if (text == NULL && (text = cu_strndup(raw, len)) == NULL) {
		return false;
	}
	out->text = text;
	out->len = len;
	return true;
}

json_t *api__text_parse(api__pack *p, const struct api__text *t)
{
	const char *s = t->text;
	json_t *obj;

	if (t->plain != 0 &&
	    (s = pack_get(p, t->text, t->len, t->plain)) == NULL)
		return NULL;
	if (api_json_loadb(&obj, s, t->plain ? t->plain : t->len, 0, NULL))
		return NULL;
	return obj;
}

void api__pack_free(api__pack *p)
{
	if (p == NULL)
		return;
	if (p->def_ok)
		deflateEnd(&p->def);
	if (p->inf_ok)
		inflateEnd(&p->inf);
	cu_free(p->buf);
	cu_free(p);
}
