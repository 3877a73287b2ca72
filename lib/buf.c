/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/buf.c - bounded growable byte buffer (see cu_buf in lib/cu.h).
 */
#include <stdio.h>
#include <string.h>

#include "lib/cu.h"

void cu_buf_init(cu_buf *b, size_t max)
{
	b->ptr = NULL;
	b->len = 0;
	b->cap = 0;
	b->max = max;
}

void cu_buf_dispose(cu_buf *b)
{
	cu_free(b->ptr);
	b->ptr = NULL;
	b->len = 0;
	b->cap = 0;
}

void cu_buf_reset(cu_buf *b)
{
	b->len = 0;
	if (b->ptr != NULL)
		b->ptr[0] = '\0';
}

/* Make room for n more bytes plus the NUL. On failure the buffer is
 * freed (dynbuf contract). */
static int buf_grow(cu_buf *b, size_t n)
{
	size_t need, cap;
	char *p;

	if (n > b->max || b->len > b->max - n) {
		cu_buf_dispose(b);
		return CU_ETOOBIG;
	}
	need = b->len + n + 1;
	if (need <= b->cap)
		return CU_OK;
	cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	p = cu_realloc(b->ptr, cap);
	if (p == NULL) {
		cu_buf_dispose(b);
		return CU_ENOMEM;
	}
	b->ptr = p;
	b->cap = cap;
	return CU_OK;
}

int cu_buf_add(cu_buf *b, const void *data, size_t n)
{
	int rc = buf_grow(b, n);

	if (rc != CU_OK)
		return rc;
	if (n > 0)
		memcpy(b->ptr + b->len, data, n);
	b->len += n;
	b->ptr[b->len] = '\0';
	return CU_OK;
}

int cu_buf_adds(cu_buf *b, const char *s)
{
	return cu_buf_add(b, s, strlen(s));
}

int cu_buf_addf(cu_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n, rc;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		cu_buf_dispose(b);
		return CU_EINVAL;
	}
	rc = buf_grow(b, (size_t)n);
	if (rc != CU_OK)
		return rc;
	va_start(ap, fmt);
	vsnprintf(b->ptr + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return CU_OK;
}

char *cu_buf_detach(cu_buf *b, size_t *len_out)
{
	char *p = b->ptr;

	if (len_out != NULL)
		*len_out = b->len;
	if (p == NULL)
		p = cu_strdup("");
	b->ptr = NULL;
	b->len = 0;
	b->cap = 0;
	return p;
}
