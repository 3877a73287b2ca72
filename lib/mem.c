/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/mem.c - checked allocation. Every allocation of the project goes
 * through here so that tests can fail the n-th one (fault injection) and
 * check that each failure path ends in a clean CU_ENOMEM without a leak.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cu.h"

static uint64_t mem_calls;   /* allocation calls so far */
static uint64_t mem_fail_at; /* call number that fails; 0 = never */
static bool mem_fail_sticky; /* keep failing after mem_fail_at */

static uint64_t mem_failures; /* calls that returned NULL */

static bool should_fail(void)
{
	bool fail;

	mem_calls++;
	if (mem_fail_at == 0 || mem_calls < mem_fail_at)
		fail = false;
	else if (mem_calls == mem_fail_at)
		fail = true;
	else
		fail = mem_fail_sticky;
	mem_failures += fail;
	return fail;
}

/* Count a real failure of the C library's allocator; returns p. */
static void *counted(void *p)
{
	mem_failures += p == NULL;
	return p;
}

void cu_mem_fail_after(uint64_t n, bool sticky)
{
	mem_fail_at = n == 0 ? 0 : mem_calls + n;
	mem_fail_sticky = sticky;
}

uint64_t cu_mem_calls(void)
{
	return mem_calls;
}

uint64_t cu_mem_failures(void)
{
	return mem_failures;
}

void *cu_malloc(size_t n)
{
	if (should_fail())
		return NULL;
	return counted(malloc(n == 0 ? 1 : n));
}

void *cu_calloc(size_t nmemb, size_t size)
{
	if (should_fail())
		return NULL;
	if (nmemb == 0 || size == 0)
		nmemb = size = 1;
	return counted(calloc(nmemb, size));
}

void *cu_realloc(void *p, size_t n)
{
	if (should_fail())
		return NULL;
	return counted(realloc(p, n == 0 ? 1 : n));
}

char *cu_strndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *d = cu_malloc(len + 1);

	if (d == NULL)
		return NULL;
	memcpy(d, s, len);
	d[len] = '\0';
	return d;
}

char *cu_strdup(const char *s)
{
	return cu_strndup(s, strlen(s));
}

char *cu_asprintf(const char *fmt, ...)
{
	va_list ap, ap2;
	int n;
	char *s;

	va_start(ap, fmt);
	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		va_end(ap2);
		return NULL;
	}
	s = cu_malloc((size_t)n + 1);
	if (s != NULL)
		vsnprintf(s, (size_t)n + 1, fmt, ap2);
	va_end(ap2);
	return s;
}

int cu_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;
	void *p;

	if (need <= *cap)
		return CU_OK;
	ncap = *cap ? *cap : 8;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2 / elem)
			return CU_ENOMEM;
		ncap *= 2;
	}
	p = cu_realloc(*arr, ncap * elem);
	if (p == NULL)
		return CU_ENOMEM;
	*arr = p;
	*cap = ncap;
	return CU_OK;
}

void cu_free(void *p)
{
	free(p);
}
