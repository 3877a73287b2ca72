/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/bench/sched_config.c - Kueue's scheduler-perf input files, read
 * unchanged: generator.yaml (cohorts -> queuesSets -> workloadsSets ->
 * workloads) and rangespec.yaml (cmd.maxWallMs,
 * clusterQueueClassesMinUsage, wlClassesMaxAvgTimeToAdmissionMs), plus the
 * three cueue target keys of the files in tests/bench/targets/. Errors name the
 * field and its line. Numbers may be YAML integers, floats or strings with
 * '_' digit separators ("425_000"); quantities ("20", "500m") go through
 * api/quantity.h.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/quantity.h"
#include "api/yaml.h"
#include "tests/bench/sched.h"

struct ctx {
	const char *path;
	api_yaml_lines *lines;
	cu_error *err;
};

/* snprintf for field paths: a path too long is cut, never overflows. */
static void fld(char *buf, size_t n, const char *fmt, ...) CU_PRINTF(3, 4);
static void fld(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	int w;

	va_start(ap, fmt);
	w = vsnprintf(buf, n, fmt, ap);
	va_end(ap);
	if (w < 0 && n > 0)
		buf[0] = '\0';
}

static int fail(struct ctx *x, const char *field, const char *what)
{
	int line = x->lines ? api_yaml_line(x->lines, field, NULL) : 0;

	if (line > 0)
		return cu_error_set(x->err, CU_EINVAL, "%s:%d: %s: %s", x->path,
		    line, field, what);
	return cu_error_set(
	    x->err, CU_EINVAL, "%s: %s: %s", x->path, field, what);
}

/* A number as double: integer, real, or a string of digits with '_'. */
static int num(struct ctx *x, json_t *v, const char *field, double *out)
{
	char buf[64], *end;
	const char *s;
	size_t i, n = 0;

	if (json_is_integer(v)) {
		*out = (double)json_integer_value(v);
		return CU_OK;
	}
	if (json_is_real(v)) {
		*out = json_real_value(v);
		return CU_OK;
	}
	if (!json_is_string(v))
		return fail(x, field, "must be a number");
	s = json_string_value(v);
	for (i = 0; s[i] != '\0' && n + 1 < sizeof(buf); i++)
		if (s[i] != '_')
			buf[n++] = s[i];
	buf[n] = '\0';
	*out = strtod(buf, &end);
	if (n == 0 || *end != '\0')
		return fail(x, field, "must be a number");
	return CU_OK;
}

static int whole(
    struct ctx *x, json_t *v, const char *field, int64_t lo, int64_t *out)
{
	double d;
	int rc = num(x, v, field, &d);

	if (rc != CU_OK)
		return rc;
	if (d < (double)lo || d > 1e12 || d != (double)(int64_t)d)
		return fail(x, field, "must be a whole number in range");
	*out = (int64_t)d;
	return CU_OK;
}

/* A Kubernetes quantity (YAML number or string) in milli-units. */
static int qty(struct ctx *x, json_t *v, const char *field, int64_t *milli)
{
	char buf[64];
	cu_error qe;

	if (json_is_integer(v))
		snprintf(
		    buf, sizeof(buf), "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		snprintf(buf, sizeof(buf), "%.3f", json_real_value(v));
	else if (json_is_string(v))
		snprintf(buf, sizeof(buf), "%s", json_string_value(v));
	else
		return fail(x, field, "must be a quantity");
	if (api_quantity_parse_milli(buf, milli, &qe) != CU_OK || *milli < 0)
		return fail(x, field, "must be a non-negative quantity");
	return CU_OK;
}

static int str(struct ctx *x, json_t *v, const char *field, char **out)
{
	if (v == NULL || json_is_null(v)) {
		*out = NULL;
		return CU_OK;
	}
	if (!json_is_string(v) || json_string_length(v) == 0)
		return fail(x, field, "must be a non-empty string");
	*out = cu_strdup(json_string_value(v));
	return *out ? CU_OK : cu_error_set(x->err, CU_ENOMEM, "out of memory");
}

/* Check that obj has only the keys in known (NULL-terminated). */
static int only(
    struct ctx *x, json_t *obj, const char *at, const char *const *known)
{
	const char *k;
	json_t *v;
	char field[256];

	if (!json_is_object(obj))
		return fail(x, at, "must be a mapping");
	json_object_foreach(obj, k, v)
	{
		size_t i;
		bool ok = false;

		for (i = 0; known[i] != NULL && !ok; i++)
			ok = strcmp(known[i], k) == 0;
		if (!ok) {
			fld(field, sizeof(field), "%s%s%s", at,
			    at[0] ? "." : "", k);
			return fail(x, field, "unknown field");
		}
	}
	return CU_OK;
}

static int arr(struct ctx *x, json_t *v, const char *field, size_t *n,
    size_t elem, void **out)
{
	*n = 0;
	*out = NULL;
	if (v == NULL)
		return CU_OK;
	if (!json_is_array(v))
		return fail(x, field, "must be a list");
	if (json_array_size(v) == 0)
		return CU_OK;
	*out = cu_calloc(json_array_size(v), elem);
	if (*out == NULL)
		return cu_error_set(x->err, CU_ENOMEM, "out of memory");
	*n = json_array_size(v);
	return CU_OK;
}

static const char *const TMPL_KEYS[] = {
    "className", "runtimeMs", "priority", "request", "podCount", NULL};
static const char *const WSET_KEYS[] = {
    "count", "creationIntervalMs", "workloads", NULL};
static const char *const QSET_KEYS[] = {"className", "count", "nominalQuota",
    "borrowingLimit", "reclaimWithinCohort", "withinClusterQueue",
    "workloadsSets", NULL};
static const char *const CSET_KEYS[] = {
    "className", "count", "queuesSets", NULL};
static const char *const TOP_KEYS[] = {"cohorts", "resourceFlavor", NULL};

static int load_tmpl(
    struct ctx *x, json_t *v, const char *at, struct sched_wl_tmpl *t)
{
	char f[256];
	int64_t prio = 0, pods = 1;
	int rc;

	if ((rc = only(x, v, at, TMPL_KEYS)) != CU_OK)
		return rc;
	fld(f, sizeof(f), "%s.className", at);
	if ((rc = str(x, json_object_get(v, "className"), f, &t->class_name)) !=
	    CU_OK)
		return rc;
	if (t->class_name == NULL)
		return fail(x, f, "required");
	fld(f, sizeof(f), "%s.runtimeMs", at);
	if ((rc = whole(x, json_object_get(v, "runtimeMs"), f, 0,
		 &t->runtime_ms)) != CU_OK)
		return rc;
	fld(f, sizeof(f), "%s.priority", at);
	if (json_object_get(v, "priority") != NULL &&
	    (rc = whole(x, json_object_get(v, "priority"), f, -2147483647,
		 &prio)) != CU_OK)
		return rc;
	t->priority = (int32_t)prio;
	fld(f, sizeof(f), "%s.podCount", at);
	if (json_object_get(v, "podCount") != NULL &&
	    (rc = whole(x, json_object_get(v, "podCount"), f, 1, &pods)) !=
		CU_OK)
		return rc;
	if (pods != 1)
		return fail(x, f, "only 1 is supported (no TAS here)");
	fld(f, sizeof(f), "%s.request", at);
	return qty(x, json_object_get(v, "request"), f, &t->request_milli);
}

static int load_wset(
    struct ctx *x, json_t *v, const char *at, struct sched_wl_set *s)
{
	char f[256];
	int64_t n;
	size_t i;
	int rc;

	if ((rc = only(x, v, at, WSET_KEYS)) != CU_OK)
		return rc;
	fld(f, sizeof(f), "%s.count", at);
	if ((rc = whole(x, json_object_get(v, "count"), f, 0, &n)) != CU_OK)
		return rc;
	s->count = (int)n;
	fld(f, sizeof(f), "%s.creationIntervalMs", at);
	if ((rc = whole(x, json_object_get(v, "creationIntervalMs"), f, 0,
		 &s->interval_ms)) != CU_OK)
		return rc;
	fld(f, sizeof(f), "%s.workloads", at);
	if ((rc = arr(x, json_object_get(v, "workloads"), f, &s->ntmpl,
		 sizeof(*s->tmpl), (void **)&s->tmpl)) != CU_OK)
		return rc;
	for (i = 0; i < s->ntmpl; i++) {
		fld(f, sizeof(f), "%s.workloads[%zu]", at, i);
		if ((rc = load_tmpl(x,
			 json_array_get(json_object_get(v, "workloads"), i), f,
			 &s->tmpl[i])) != CU_OK)
			return rc;
	}
	return CU_OK;
}

static int load_qset(
    struct ctx *x, json_t *v, const char *at, struct sched_queue_set *q)
{
	char f[256];
	int64_t n;
	size_t i;
	int rc;

	if ((rc = only(x, v, at, QSET_KEYS)) != CU_OK)
		return rc;
	fld(f, sizeof(f), "%s.className", at);
	if ((rc = str(x, json_object_get(v, "className"), f, &q->class_name)) !=
	    CU_OK)
		return rc;
	if (q->class_name == NULL)
		return fail(x, f, "required");
	fld(f, sizeof(f), "%s.count", at);
	if ((rc = whole(x, json_object_get(v, "count"), f, 0, &n)) != CU_OK)
		return rc;
	q->count = (int)n;
	fld(f, sizeof(f), "%s.nominalQuota", at);
	if ((rc = qty(x, json_object_get(v, "nominalQuota"), f,
		 &q->nominal_milli)) != CU_OK)
		return rc;
	q->borrowing_milli = -1;
	fld(f, sizeof(f), "%s.borrowingLimit", at);
	if (json_object_get(v, "borrowingLimit") != NULL &&
	    (rc = qty(x, json_object_get(v, "borrowingLimit"), f,
		 &q->borrowing_milli)) != CU_OK)
		return rc;
	fld(f, sizeof(f), "%s.reclaimWithinCohort", at);
	if ((rc = str(x, json_object_get(v, "reclaimWithinCohort"), f,
		 &q->reclaim)) != CU_OK)
		return rc;
	fld(f, sizeof(f), "%s.withinClusterQueue", at);
	if ((rc = str(x, json_object_get(v, "withinClusterQueue"), f,
		 &q->within)) != CU_OK)
		return rc;
	fld(f, sizeof(f), "%s.workloadsSets", at);
	if ((rc = arr(x, json_object_get(v, "workloadsSets"), f, &q->nsets,
		 sizeof(*q->sets), (void **)&q->sets)) != CU_OK)
		return rc;
	for (i = 0; i < q->nsets; i++) {
		fld(f, sizeof(f), "%s.workloadsSets[%zu]", at, i);
		if ((rc = load_wset(x,
			 json_array_get(json_object_get(v, "workloadsSets"), i),
			 f, &q->sets[i])) != CU_OK)
			return rc;
	}
	return CU_OK;
}

int sched_gen_load(struct sched_gen *g, const char *path, cu_error *err)
{
	struct ctx x = {path, NULL, err};
	json_t *doc = NULL, *rf;
	size_t i, j;
	int rc;

	memset(g, 0, sizeof(*g));
	if ((rc = api_yaml_load_file(&doc, &x.lines, path, NULL, err)) != CU_OK)
		return rc;
	if ((rc = only(&x, doc, "", TOP_KEYS)) != CU_OK)
		goto out;
	rf = json_object_get(doc, "resourceFlavor");
	if (rf != NULL && !json_is_object(rf)) {
		rc = fail(&x, "resourceFlavor", "must be a mapping");
		goto out;
	}
	if ((rc = str(&x, json_object_get(rf, "name"), "resourceFlavor.name",
		 &g->flavor)) != CU_OK)
		goto out;
	if (g->flavor == NULL && (g->flavor = cu_strdup("rf")) == NULL) {
		rc = cu_error_set(err, CU_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = arr(&x, json_object_get(doc, "cohorts"), "cohorts",
		 &g->ncohorts, sizeof(*g->cohorts), (void **)&g->cohorts)) !=
	    CU_OK)
		goto out;
	if (g->ncohorts == 0) {
		rc = fail(&x, "cohorts", "at least one cohort set is required");
		goto out;
	}
	for (i = 0; i < g->ncohorts; i++) {
		struct sched_cohort_set *c = &g->cohorts[i];
		json_t *cv = json_array_get(json_object_get(doc, "cohorts"), i);
		char f[256];
		int64_t n;

		fld(f, sizeof(f), "cohorts[%zu]", i);
		if ((rc = only(&x, cv, f, CSET_KEYS)) != CU_OK)
			goto out;
		fld(f, sizeof(f), "cohorts[%zu].className", i);
		if ((rc = str(&x, json_object_get(cv, "className"), f,
			 &c->class_name)) != CU_OK)
			goto out;
		if (c->class_name == NULL) {
			rc = fail(&x, f, "required");
			goto out;
		}
		fld(f, sizeof(f), "cohorts[%zu].count", i);
		if ((rc = whole(&x, json_object_get(cv, "count"), f, 0, &n)) !=
		    CU_OK)
			goto out;
		c->count = (int)n;
		fld(f, sizeof(f), "cohorts[%zu].queuesSets", i);
		if ((rc = arr(&x, json_object_get(cv, "queuesSets"), f,
			 &c->nqsets, sizeof(*c->qsets), (void **)&c->qsets)) !=
		    CU_OK)
			goto out;
		for (j = 0; j < c->nqsets; j++) {
			fld(f, sizeof(f), "cohorts[%zu].queuesSets[%zu]", i, j);
			if ((rc = load_qset(&x,
				 json_array_get(
				     json_object_get(cv, "queuesSets"), j),
				 f, &c->qsets[j])) != CU_OK)
				goto out;
		}
	}
out:
	json_decref(doc);
	api_yaml_lines_free(x.lines);
	return rc;
}

void sched_gen_dispose(struct sched_gen *g)
{
	size_t i, j, k, l;

	for (i = 0; i < g->ncohorts; i++) {
		struct sched_cohort_set *c = &g->cohorts[i];

		for (j = 0; j < c->nqsets; j++) {
			struct sched_queue_set *q = &c->qsets[j];

			for (k = 0; k < q->nsets; k++) {
				for (l = 0; l < q->sets[k].ntmpl; l++)
					cu_free(q->sets[k].tmpl[l].class_name);
				cu_free(q->sets[k].tmpl);
			}
			cu_free(q->sets);
			cu_free(q->class_name);
			cu_free(q->reclaim);
			cu_free(q->within);
		}
		cu_free(c->qsets);
		cu_free(c->class_name);
	}
	cu_free(g->cohorts);
	cu_free(g->flavor);
	memset(g, 0, sizeof(*g));
}

int64_t sched_gen_total(const struct sched_gen *g)
{
	int64_t n = 0;
	size_t i, j, k;

	for (i = 0; i < g->ncohorts; i++)
		for (j = 0; j < g->cohorts[i].nqsets; j++) {
			const struct sched_queue_set *q =
			    &g->cohorts[i].qsets[j];
			int64_t per = 0;

			for (k = 0; k < q->nsets; k++)
				per += (int64_t)q->sets[k].count *
				       (int64_t)q->sets[k].ntmpl;
			n += per * q->count * g->cohorts[i].count;
		}
	return n;
}

int64_t sched_gen_capacity_bound_ms(const struct sched_gen *g)
{
	double best = 0;
	size_t i, j, k, l;

	/* Every cohort of a cohort set has the same shape. */
	for (i = 0; i < g->ncohorts; i++) {
		double work = 0, cpu = 0; /* milli*ms, milli */

		for (j = 0; j < g->cohorts[i].nqsets; j++) {
			const struct sched_queue_set *q =
			    &g->cohorts[i].qsets[j];

			cpu += (double)q->nominal_milli * q->count;
			for (k = 0; k < q->nsets; k++)
				for (l = 0; l < q->sets[k].ntmpl; l++)
					work += (double)q->sets[k].count *
						(double)q->sets[k]
						    .tmpl[l]
						    .request_milli *
						(double)q->sets[k]
						    .tmpl[l]
						    .runtime_ms *
						q->count;
		}
		if (cpu > 0 && work / cpu > best)
			best = work / cpu;
	}
	return (int64_t)(best + 0.5);
}

static const char *const RANGE_KEYS[] = {"cmd", "clusterQueueClassesMinUsage",
    "wlClassesMaxAvgTimeToAdmissionMs", "maxPeakRssMiB", "maxAverageCpuMillis",
    "maxWritesPerAdmittedWorkload", NULL};
static const char *const CMD_KEYS[] = {"maxWallMs", NULL};

static int limits(struct ctx *x, json_t *v, const char *at,
    struct sched_limit **out, size_t *n)
{
	const char *k;
	json_t *e;
	char f[256];
	int rc;

	*out = NULL;
	*n = 0;
	if (v == NULL)
		return CU_OK;
	if (!json_is_object(v))
		return fail(x, at, "must be a mapping");
	*out = cu_calloc(json_object_size(v) + 1, sizeof(**out));
	if (*out == NULL)
		return cu_error_set(x->err, CU_ENOMEM, "out of memory");
	json_object_foreach(v, k, e)
	{
		fld(f, sizeof(f), "%s.%s", at, k);
		(*out)[*n].name = cu_strdup(k);
		if ((*out)[*n].name == NULL)
			return cu_error_set(x->err, CU_ENOMEM, "out of memory");
		(*n)++;
		if ((rc = num(x, e, f, &(*out)[*n - 1].value)) != CU_OK)
			return rc;
	}
	return CU_OK;
}

int sched_ranges_load(struct sched_ranges *r, const char *path, cu_error *err)
{
	struct ctx x = {path, NULL, err};
	json_t *doc = NULL, *cmd;
	int rc;

	memset(r, 0, sizeof(*r));
	r->max_wall_ms = r->max_rss_mib = r->max_cpu_millis =
	    r->max_writes_per_admit = -1;
	if ((rc = api_yaml_load_file(&doc, &x.lines, path, NULL, err)) != CU_OK)
		return rc;
	if ((rc = only(&x, doc, "", RANGE_KEYS)) != CU_OK)
		goto out;
	cmd = json_object_get(doc, "cmd");
	if (cmd != NULL) {
		if ((rc = only(&x, cmd, "cmd", CMD_KEYS)) != CU_OK)
			goto out;
		if (json_object_get(cmd, "maxWallMs") != NULL &&
		    (rc = num(&x, json_object_get(cmd, "maxWallMs"),
			 "cmd.maxWallMs", &r->max_wall_ms)) != CU_OK)
			goto out;
	}
	if ((rc = limits(&x,
		 json_object_get(doc, "clusterQueueClassesMinUsage"),
		 "clusterQueueClassesMinUsage", &r->min_usage,
		 &r->nmin_usage)) != CU_OK)
		goto out;
	if ((rc = limits(&x,
		 json_object_get(doc, "wlClassesMaxAvgTimeToAdmissionMs"),
		 "wlClassesMaxAvgTimeToAdmissionMs", &r->max_admit,
		 &r->nmax_admit)) != CU_OK)
		goto out;
	if (json_object_get(doc, "maxPeakRssMiB") != NULL &&
	    (rc = num(&x, json_object_get(doc, "maxPeakRssMiB"),
		 "maxPeakRssMiB", &r->max_rss_mib)) != CU_OK)
		goto out;
	if (json_object_get(doc, "maxAverageCpuMillis") != NULL &&
	    (rc = num(&x, json_object_get(doc, "maxAverageCpuMillis"),
		 "maxAverageCpuMillis", &r->max_cpu_millis)) != CU_OK)
		goto out;
	if (json_object_get(doc, "maxWritesPerAdmittedWorkload") != NULL &&
	    (rc = num(&x, json_object_get(doc, "maxWritesPerAdmittedWorkload"),
		 "maxWritesPerAdmittedWorkload", &r->max_writes_per_admit)) !=
		CU_OK)
		goto out;
out:
	json_decref(doc);
	api_yaml_lines_free(x.lines);
	return rc;
}

void sched_ranges_dispose(struct sched_ranges *r)
{
	size_t i;

	for (i = 0; i < r->nmin_usage; i++)
		cu_free(r->min_usage[i].name);
	for (i = 0; i < r->nmax_admit; i++)
		cu_free(r->max_admit[i].name);
	cu_free(r->min_usage);
	cu_free(r->max_admit);
	memset(r, 0, sizeof(*r));
}
