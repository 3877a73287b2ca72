/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/time.c - clocks and the two Kubernetes timestamp formats:
 * metav1.Time ("2006-01-02T15:04:05Z") and metav1.MicroTime (exactly six
 * fractional digits, which Go's parser requires).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "lib/cu.h"

cu_ns_t cu_time_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (cu_ns_t)ts.tv_sec * CU_NS_PER_S + ts.tv_nsec;
}

cu_ns_t cu_time_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (cu_ns_t)ts.tv_sec * CU_NS_PER_S + ts.tv_nsec;
}

int64_t cu_time_now_ms(void)
{
	return cu_ns_to_ms(cu_time_now_ns());
}

int64_t cu_time_mono_ms(void)
{
	return cu_ns_to_ms(cu_time_mono_ns());
}

static void split(int64_t ns, struct tm *tm, long *usec)
{
	time_t sec = (time_t)(ns / 1000000000);
	int64_t rem = ns % 1000000000;

	if (rem < 0) {
		rem += 1000000000;
		sec -= 1;
	}
	gmtime_r(&sec, tm);
	*usec = (long)(rem / 1000);
}

void cu_time_format_rfc3339(int64_t ns, char out[CU_TIME_RFC3339_LEN])
{
	struct tm tm;
	long usec;

	split(ns, &tm, &usec);
	strftime(out, CU_TIME_RFC3339_LEN, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void cu_time_format_micro(int64_t ns, char out[CU_TIME_MICRO_LEN])
{
	struct tm tm;
	long usec;
	char base[CU_TIME_RFC3339_LEN];

	split(ns, &tm, &usec);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, CU_TIME_MICRO_LEN, "%.19s.%06ldZ", base, usec);
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian), no timegm(). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static int digits(const char *s, int n, int *out)
{
	int i, v = 0;

	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

int cu_time_parse(const char *s, int64_t *out, cu_error *err)
{
	int Y, M, D, h, m, sec, oh = 0, om = 0;
	int64_t frac = 0, scale = 100000000, ns, secs;
	const char *p;

	if (strlen(s) < 20 || digits(s, 4, &Y) || s[4] != '-' ||
	    digits(s + 5, 2, &M) || s[7] != '-' || digits(s + 8, 2, &D) ||
	    (s[10] != 'T' && s[10] != 't') || digits(s + 11, 2, &h) ||
	    s[13] != ':' || digits(s + 14, 2, &m) || s[16] != ':' ||
	    digits(s + 17, 2, &sec))
		goto bad;
	if (M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || m > 59 || sec > 60)
		goto bad;
	p = s + 19;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			goto bad;
		for (; *p >= '0' && *p <= '9'; p++) {
			frac += (*p - '0') * scale;
			scale /= 10;
		}
	}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int sign = *p == '-' ? -1 : 1;

		if (digits(p + 1, 2, &oh) || p[3] != ':' ||
		    digits(p + 4, 2, &om))
			goto bad;
		oh *= sign;
		om *= sign;
		p += 6;
	} else {
		goto bad;
	}
	if (*p != '\0')
		goto bad;
	secs = days_from_civil(Y, M, D) * 86400 + h * 3600 + m * 60 + sec -
	       oh * 3600 - om * 60;
	/* int64 nanoseconds reach 1677-09-21 .. 2262-04-11 (Go's UnixNano
	 * range); RFC 3339 allows years 0000-9999. */
	if (secs >= INT64_MAX / 1000000000 || secs <= INT64_MIN / 1000000000)
		return cu_error_set(err, CU_EPARSE,
		    "time \"%.64s\" out of range (1678..2262)", s);
	ns = secs * 1000000000 + frac;
	*out = ns;
	return CU_OK;
bad:
	return cu_error_set(
	    err, CU_EPARSE, "invalid RFC 3339 time \"%.64s\"", s);
}
