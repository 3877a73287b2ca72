/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/pack_int.h - the text of an informer's cached objects, packed or
 * not; shared by api/informer.c and api/pack.c only (never included from
 * elsewhere).
 *
 * A compact informer keeps each object as its JSON text; objects of one
 * kind share most of their bytes (keys, pod templates, condition
 * messages), so the text is deflated against a preset dictionary taken
 * from one object of the same informer: a pending Workload's ~800 bytes
 * become ~90. The dictionary is chosen once (the first object offered)
 * and never changes, so every packed text stays readable.
 *
 * Event-loop thread only (one api__pack belongs to one informer).
 */
#ifndef CU_API_PACK_INT_H
#define CU_API_PACK_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct api__pack api__pack;

/* One cached object's text: plain compact JSON (plain 0) or plain bytes
 * deflated into len. text [owned: cu_free]. */
struct api__text {
	char *text;
	size_t len;
	uint32_t plain;
};

/*
 * Make the cached text of obj [borrowed] into *out: raw[raw_len]
 * [borrowed; may be NULL], the compact text of exactly obj, is used as
 * it is instead of writing obj out again; take: NULL, or where raw's
 * owner keeps it [owned: cu_free] when it may be taken instead of copied
 * (*take is then set to NULL). With pack the text is deflated when that
 * gains: *p is NULL or the informer's packer [owned: api__pack_free],
 * created on first use with the dictionary taken from this text. False
 * when memory ran out (*out untouched): keep obj itself.
 */
bool api__text_make(api__pack **p, bool pack, json_t *obj, const char *raw,
    size_t raw_len, char **take, struct api__text *out);

/* Parse t [borrowed], made with packer p [borrowed]: a new reference, or
 * NULL when memory ran out. */
json_t *api__text_parse(api__pack *p, const struct api__text *t);

/* Free p and its streams; NULL does nothing. */
void api__pack_free(api__pack *p);

#endif /* CU_API_PACK_INT_H */
