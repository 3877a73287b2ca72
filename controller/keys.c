/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/keys.c - ctl_keys: the controller's maps keyed by string
 * tuples, on cu_map, with insertion order (see keys.h).
 */
#include <stdlib.h>
#include <string.h>

#include "controller/keys.h"

/* The cu_map key of an entry or of a lookup tuple. */
static const void *map_key(const ctl_keys *s, const char *const *key)
{
	return s->nparts == 1 ? (const void *)key[0] : (const void *)key;
}

static void kent_free(struct ctl_kent *e)
{
	if (e == NULL)
		return;
	cu_free(e->s[0]);
	cu_free(e->s[1]);
	cu_free(e);
}

void ctl_keys_init(ctl_keys *s, unsigned nparts)
{
	memset(s, 0, sizeof(*s));
	s->nparts = nparts;
	if (nparts == 1)
		cu_map_init_str(&s->map);
	else
		cu_map_init_parts(&s->map, nparts);
}

void ctl_keys_dispose(ctl_keys *s)
{
	cu_map_iter it = CU_MAP_ITER_INIT;
	void *v;

	if (s->nparts == 0)
		return; /* zeroed, never initialised */
	while (cu_map_next(&s->map, &it, NULL, &v))
		kent_free(v);
	cu_map_dispose(&s->map);
	s->seq = 0;
}

struct ctl_kent *ctl_keys_get(const ctl_keys *s, const char *const *key)
{
	return cu_map_get(&s->map, map_key(s, key));
}

/* One allocation per entry: the struct, then the key's parts, which
 * k[] points at (the controller keeps several entries per Workload, and
 * an allocation per part cost more than the strings). */
struct ctl_kent *ctl_keys_put(ctl_keys *s, const char *const *key)
{
	struct ctl_kent *e = ctl_keys_get(s, key);
	size_t len[3] = {0, 0, 0}, total = 0;
	unsigned i;
	char *p;

	if (e != NULL)
		return e;
	for (i = 0; i < s->nparts; i++)
		total += (len[i] = strlen(key[i] ? key[i] : "") + 1);
	if ((e = cu_calloc(1, sizeof(*e) + total)) == NULL)
		goto nomem;
	p = (char *)(e + 1);
	for (i = 0; i < s->nparts; i++) {
		memcpy(p, key[i] ? key[i] : "", len[i]);
		e->k[i] = p;
		p += len[i];
	}
	if (cu_map_put(&s->map, map_key(s, (const char *const *)e->k), e,
		NULL) != CU_OK)
		goto nomem;
	e->seq = s->seq++;
	return e;
nomem:
	kent_free(e);
	cu_errorf("controller bookkeeping: out of memory");
	return NULL;
}

bool ctl_keys_del(ctl_keys *s, const char *const *key)
{
	struct ctl_kent *e = cu_map_del(&s->map, map_key(s, key));

	kent_free(e);
	return e != NULL;
}

int ctl_keys_set_str(struct ctl_kent *e, unsigned i, const char *str)
{
	cu_free(e->s[i]);
	e->s[i] = NULL;
	if (str != NULL && (e->s[i] = cu_strdup(str)) == NULL)
		return CU_ENOMEM;
	return CU_OK;
}

static int seq_cmp(const void *a, const void *b)
{
	const struct ctl_kent *x = *(const struct ctl_kent *const *)a;
	const struct ctl_kent *y = *(const struct ctl_kent *const *)b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int ctl_keys_ordered(const ctl_keys *s, struct ctl_kent ***out, size_t *n)
{
	cu_map_iter it = CU_MAP_ITER_INIT;
	size_t cnt = ctl_keys_count(s), i = 0;
	void *v;

	*out = NULL;
	*n = 0;
	if (cnt == 0)
		return CU_OK;
	if ((*out = cu_calloc(cnt, sizeof(**out))) == NULL) {
		cu_errorf("controller bookkeeping: out of memory");
		return CU_ENOMEM;
	}
	while (cu_map_next(&s->map, &it, NULL, &v) && i < cnt)
		(*out)[i++] = v;
	qsort(*out, i, sizeof(**out), seq_cmp);
	*n = i;
	return CU_OK;
}

void ctl_keys_move(ctl_keys *dst, ctl_keys *src)
{
	unsigned nparts = src->nparts;

	ctl_keys_dispose(dst);
	*dst = *src;
	ctl_keys_init(src, nparts);
}
