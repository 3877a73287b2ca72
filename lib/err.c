/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/err.c - error codes, one-line error messages and assertions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cu.h"

int cu_error_set(cu_error *err, int code, const char *fmt, ...)
{
	va_list ap;
	char *p;

	if (err == NULL)
		return code;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	/* Messages are one line by contract. */
	for (p = err->msg; *p != '\0'; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	return code;
}

void cu_error_clear(cu_error *err)
{
	if (err == NULL)
		return;
	err->code = CU_OK;
	err->msg[0] = '\0';
}

const char *cu_err_name(int code)
{
	switch (code) {
#define CU_X_NAME(name, value, retry, desc)                                    \
	case value:                                                            \
		return #name;
		CU_ERR_TABLE(CU_X_NAME)
#undef CU_X_NAME
	}
	return "unknown";
}

const char *cu_err_desc(int code)
{
	switch (code) {
#define CU_X_DESC(name, value, retry, desc)                                    \
	case value:                                                            \
		return desc;
		CU_ERR_TABLE(CU_X_DESC)
#undef CU_X_DESC
	}
	return "unknown";
}

bool cu_err_retryable(int code)
{
	switch (code) {
#define CU_X_RETRY(name, value, retry, desc)                                   \
	case value:                                                            \
		return retry;
		CU_ERR_TABLE(CU_X_RETRY)
#undef CU_X_RETRY
	}
	return false;
}

void cu_assert_fail(const char *expr, const char *file, int line)
{
	fprintf(
	    stderr, "cueue: assertion failed: %s (%s:%d)\n", expr, file, line);
	fflush(stderr);
	abort();
}
