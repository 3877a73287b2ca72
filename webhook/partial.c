/* SPDX-License-Identifier: Apache-2.0 */
/*
 * webhook/partial.c - Kueue's validation of a batch/v1 Job's partial
 * admission (kueue.x-k8s.io/job-min-parallelism, job_webhook.go): on
 * create, and on an update that changes it, the value is an integer
 * between 1 and the job's pod count - 1 (parallelism, or completions
 * when fewer) and the job is not elastic; an unsuspended job with the
 * annotation cannot change its parallelism. Failures are aggregated as
 * apimachinery prints them; whether a Job is elastic (wh__elastic_job).
 * Pure.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webhook/webhook_int.h"

#define MIN_PAR "kueue.x-k8s.io/job-min-parallelism"
#define MIN_PAR_PATH "metadata.annotations[" MIN_PAR "]"

static const char *annotation(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(
	    json_object_get(json_object_get(obj, "metadata"), "annotations"),
	    key));
}

static json_int_t spec_int(const json_t *obj, const char *key, json_int_t def)
{
	const json_t *v = json_object_get(json_object_get(obj, "spec"), key);

	return json_is_integer(v) ? json_integer_value(v) : def;
}

static bool suspended(const json_t *obj)
{
	return json_is_true(
	    json_object_get(json_object_get(obj, "spec"), "suspend"));
}

/* Go's strconv.Atoi: [+-]digits in int64. CU_OK, or *why set. */
static bool atoi_go(const char *s, long long *v, const char **why)
{
	const char *p = s;
	char *end;

	if (*p == '+' || *p == '-')
		p++;
	if (*p == '\0' || strspn(p, "0123456789") != strlen(p)) {
		*why = "invalid syntax";
		return false;
	}
	errno = 0;
	*v = strtoll(s, &end, 10);
	if (errno == ERANGE) {
		*why = "value out of range";
		return false;
	}
	return true;
}

struct perrs {
	char m[4][CU_ERROR_MSG_MAX];
	size_t n;
};

static void perr(struct perrs *e, const char *m)
{
	size_t i;

	for (i = 0; i < e->n; i++)
		if (strcmp(e->m[i], m) == 0)
			return;
	if (e->n < 4)
		(void)snprintf(e->m[e->n++], CU_ERROR_MSG_MAX, "%s", m);
}

static void create_rules(struct perrs *e, const json_t *obj, bool elastic)
{
	const char *s = annotation(obj, MIN_PAR), *why = NULL;
	char m[CU_ERROR_MSG_MAX], q[WH_QUOTE_MAX];
	json_int_t par = spec_int(obj, "parallelism", 1);
	json_int_t comp = spec_int(obj, "completions", -1);
	long long v;

	if (s == NULL)
		return;
	if (comp >= 0 && comp < par)
		par = comp;
	if (!atoi_go(s, &v, &why)) {
		(void)snprintf(m, sizeof(m),
		    MIN_PAR_PATH
		    ": Invalid value: %s: strconv.Atoi: parsing %s: %s",
		    wh__quote(q, s), q, why);
		perr(e, m);
	} else if ((long long)(int32_t)v >= par || v <= 0) {
		(void)snprintf(m, sizeof(m),
		    MIN_PAR_PATH ": Invalid value: %lld: should be between 0 "
				 "and %lld",
		    v, (long long)par - 1);
		perr(e, m);
	}
	if (elastic) {
		(void)snprintf(m, sizeof(m),
		    MIN_PAR_PATH ": Invalid value: %s: partial admission and "
				 "elastic job cannot be used together",
		    wh__quote(q, s));
		perr(e, m);
	}
}

bool wh__elastic_job(const json_t *obj)
{
	const char *ev = annotation(obj, WH_ELASTIC_JOB);

	return ev != NULL && strcmp(ev, "true") == 0;
}

int wh_job_partial_admission(
    const json_t *old_obj, const json_t *obj, bool elastic_gate, cu_error *err)
{
	struct perrs e;
	bool elastic = elastic_gate && wh__elastic_job(obj);
	const char *nv = annotation(obj, MIN_PAR);
	size_t i, o;
	char m[CU_ERROR_MSG_MAX];

	memset(&e, 0, sizeof(e));
	if (old_obj == NULL) {
		create_rules(&e, obj, elastic);
	} else {
		const char *ov = annotation(old_obj, MIN_PAR);

		if ((ov == NULL) != (nv == NULL) ||
		    (ov != NULL && strcmp(ov, nv) != 0))
			create_rules(&e, obj, elastic);
		if (ov != NULL && !suspended(old_obj) &&
		    spec_int(old_obj, "parallelism", 1) !=
			spec_int(obj, "parallelism", 1))
			perr(&e, "spec.parallelism: Forbidden: cannot change "
				 "when partial admission is enabled and the "
				 "job is not suspended");
	}
	if (e.n == 0)
		return CU_OK;
	if (e.n == 1)
		return cu_error_set(err, CU_EDENIED, "%s", e.m[0]);
	o = (size_t)snprintf(m, sizeof(m), "[");
	for (i = 0; i < e.n && o < sizeof(m); i++)
		o += (size_t)snprintf(
		    m + o, sizeof(m) - o, "%s%s", i ? ", " : "", e.m[i]);
	if (o < sizeof(m))
		(void)snprintf(m + o, sizeof(m) - o, "]");
	return cu_error_set(err, CU_EDENIED, "%s", m);
}
