/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/metrics.c - the Prometheus registry of controller/metrics.h:
 * one lib/cu.h map of series per family of metrics.def, keyed by the
 * tuple of label values; rendering sorts families by name and series by
 * label values so that the output is deterministic (golden tests, diffs).
 *
 * A series is one allocation: the struct, then its histogram buckets (one
 * non-cumulative count per upper bound, plus +Inf), then the NULL-ended
 * array of label value pointers, then the value strings.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/metrics.h"
#include "lib/cu.h"

#ifndef CUEUE_VERSION
#define CUEUE_VERSION "0.0.0"
#endif

#define METRICS_MAGIC 0x4d455452u /* "METR" */
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ---- the static table ---------------------------------------------- */

/* Kueue's generateExponentialBuckets(n): 1, then 2.5 doubling. */
static const double b_kueue16[] = {1, 2.5, 5, 10, 20, 40, 80, 160, 320, 640,
    1280, 2560, 5120, 10240, 20480, 40960};
/* Prometheus' DefBuckets. */
static const double b_default[] = {
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
/* 100 us doubling, written out so that the le labels read exactly. */
static const double b_fast[] = {0.0001, 0.0002, 0.0004, 0.0008, 0.0016, 0.0032,
    0.0064, 0.0128, 0.0256, 0.0512, 0.1024, 0.2048, 0.4096, 0.8192, 1.6384,
    3.2768};

/* Kueue's workload creation latency: 0.01 doubling, 11 bounds. */
static const double b_exp001[] = {
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24};

#define BUCKETS_NONE NULL, 0
#define BUCKETS_EXP001 b_exp001, ARRAY_LEN(b_exp001)
#define BUCKETS_KUEUE14 b_kueue16, 14
#define BUCKETS_KUEUE16 b_kueue16, 16
#define BUCKETS_DEFAULT b_default, ARRAY_LEN(b_default)
#define BUCKETS_FAST b_fast, ARRAY_LEN(b_fast)
#define TYPE_COUNTER CTL_METRIC_COUNTER
#define TYPE_GAUGE CTL_METRIC_GAUGE
#define TYPE_HISTOGRAM CTL_METRIC_HISTOGRAM
#define ROLE_ROLE true
#define ROLE_NOROLE false

struct metric_def {
	const char *name;
	enum ctl_metric_type type;
	bool role; /* carries replica_role */
	const double *bounds;
	size_t nbounds;
	const char *labels; /* space-separated */
	const char *help;
};

static const struct metric_def defs[CTL_M__COUNT] = {
#define CTL_METRIC(id, name, type, role, buckets, labels, help)                \
	[CTL_M_##id] = {                                                       \
	    name, TYPE_##type, ROLE_##role, BUCKETS_##buckets, labels, help},
#include "controller/metrics.def"
#undef CTL_METRIC
};

static const char *const role_names[] = {
    [CTL_ROLE_STANDALONE] = "standalone",
    [CTL_ROLE_LEADER] = "leader",
    [CTL_ROLE_FOLLOWER] = "follower",
};

/* ---- runtime structures ---------------------------------------------- */

struct series {
	uint64_t counter;  /* counters; histograms: observation count */
	double gauge;	   /* gauges; histograms: sum */
	uint64_t *buckets; /* histograms: nbounds + 1 counts (same block) */
	char **labels;	   /* nlabels values + NULL (same block); the key */
};

CU_MAP_TYPED(series_map, const char *const *, struct series);

struct family {
	const struct metric_def *def;
	char **names; /* nlabels label names + NULL; owned, one block */
	size_t nlabels;
	size_t nbase;	   /* label values callers pass; the rest are custom */
	size_t *extra;	   /* owned: the custom label of names[nbase + i] */
	series_map series; /* series [owned] by label values */
	bool warned;	   /* a misuse was logged already */
};

/* One metrics.customLabels entry (copied). */
struct custom {
	char *name; /* "custom_" + the configured name */
	enum ctl_metric_object kind;
	char *key;
	bool annotation;
	char **tracked;
	size_t ntracked;
};

struct ctl_metrics {
	uint32_t magic;
	size_t max_series;
	size_t max_response; /* ctl_metrics_opts.max_response, resolved */
	enum ctl_replica_role role;
	struct family fam[CTL_M__COUNT];
	size_t order[CTL_M__COUNT]; /* family indexes sorted by name */
	struct custom *custom;	    /* owned, ncustom */
	size_t ncustom;
	ctl_metric_resolve_fn resolve;
	void *rpayload;
	const char *const *wlv; /* [borrowed] during ctl_metric_set_wl */
};

/* ---- text-format helpers --------------------------------------------- */

int ctl_prom_escape(cu_buf *out, const char *s, bool label_value)
{
	const char *run = s;
	int rc;

	for (; *s != '\0'; s++) {
		const char *rep = *s == '\\'		     ? "\\\\"
				  : *s == '"' && label_value ? "\\\""
				  : *s == '\n'		     ? "\\n"
							     : NULL;

		if (rep == NULL)
			continue;
		if ((rc = cu_buf_add(out, run, (size_t)(s - run))) != CU_OK ||
		    (rc = cu_buf_adds(out, rep)) != CU_OK)
			return rc;
		run = s + 1;
	}
	return cu_buf_add(out, run, (size_t)(s - run));
}

void ctl_prom_format_float(double v, char out[CTL_PROM_FLOAT_LEN])
{
	char e[CTL_PROM_FLOAT_LEN];
	const char *ep;
	int digits, exp10;

	if (isnan(v)) {
		snprintf(out, CTL_PROM_FLOAT_LEN, "NaN");
		return;
	}
	if (isinf(v)) {
		snprintf(out, CTL_PROM_FLOAT_LEN, v > 0 ? "+Inf" : "-Inf");
		return;
	}
	if (v == 0) {
		snprintf(out, CTL_PROM_FLOAT_LEN, signbit(v) ? "-0" : "0");
		return;
	}
	/* The fewest significant digits that read back as v. */
	for (digits = 1; digits < 17; digits++) {
		snprintf(e, sizeof(e), "%.*e", digits - 1, v);
		if (strtod(e, NULL) == v)
			break;
	}
	snprintf(e, sizeof(e), "%.*e", digits - 1, v);
	ep = strchr(e, 'e');
	exp10 = ep != NULL ? (int)strtol(ep + 1, NULL, 10) : 0;
	/* Go's 'g' with shortest precision switches to the exponent form
	 * below 1e-4 and from 1e+06 (it uses precision 6 for the choice). */
	if (exp10 < -4 || exp10 >= 6)
		snprintf(out, CTL_PROM_FLOAT_LEN, "%s", e);
	else
		snprintf(out, CTL_PROM_FLOAT_LEN, "%.*f",
		    digits - 1 - exp10 > 0 ? digits - 1 - exp10 : 0, v);
}

/* ---- validation -------------------------------------------------------- */

static bool valid_utf8(const unsigned char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		unsigned c = s[i];
		size_t len, k;
		uint32_t cp;

		if (c < 0x80) {
			i++;
			continue;
		}
		if ((c & 0xe0) == 0xc0) {
			len = 2;
			cp = c & 0x1f;
		} else if ((c & 0xf0) == 0xe0) {
			len = 3;
			cp = c & 0x0f;
		} else if ((c & 0xf8) == 0xf0) {
			len = 4;
			cp = c & 0x07;
		} else {
			return false;
		}
		if (i + len > n)
			return false;
		for (k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		/* Overlong forms, surrogates, beyond U+10FFFF. */
		if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
		    (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += len;
	}
	return true;
}

static bool valid_label_name(const char *s)
{
	size_t i;

	if (s[0] == '\0' || (s[0] == '_' && s[1] == '_'))
		return false;
	for (i = 0; s[i] != '\0'; i++) {
		char c = s[i];
		bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			     c == '_';

		if (!alpha && !(i > 0 && c >= '0' && c <= '9'))
			return false;
	}
	return true;
}

/* ---- registry ---------------------------------------------------------- */

static void series_free_all(struct family *f)
{
	cu_map_iter it = CU_MAP_ITER_INIT;
	struct series *s;

	while (series_map_next(&f->series, &it, &s))
		cu_free(s);
	series_map_dispose(&f->series);
}

/* Split def->labels into f->names and check them. */
static int family_init(
    struct family *f, const struct metric_def *def, cu_error *err)
{
	size_t n = 0, len = strlen(def->labels), i, j;
	const char *p;
	char *str;

	f->def = def;
	if (len > 0) {
		n = 1;
		for (p = def->labels; *p != '\0'; p++)
			n += *p == ' ';
	}
	f->names = cu_malloc((n + 1) * sizeof(char *) + len + 1);
	if (f->names == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	str = (char *)(f->names + n + 1);
	memcpy(str, def->labels, len + 1);
	for (i = 0; i < n; i++) {
		f->names[i] = str;
		str += strcspn(str, " ");
		if (*str == ' ')
			*str++ = '\0';
	}
	f->names[n] = NULL;
	f->nlabels = n;
	f->nbase = n;
	series_map_init_parts(&f->series, (unsigned)n);
	for (i = 0; i < n; i++) {
		const char *name = f->names[i];

		if (!valid_label_name(name) ||
		    (def->role && strcmp(name, "replica_role") == 0) ||
		    (def->type == CTL_METRIC_HISTOGRAM &&
			strcmp(name, "le") == 0))
			return cu_error_set(err, CU_EINVAL,
			    "metric %s: bad label name \"%s\"", def->name,
			    name);
		for (j = 0; j < i; j++)
			if (strcmp(f->names[j], name) == 0)
				return cu_error_set(err, CU_EINVAL,
				    "metric %s: label \"%s\" twice", def->name,
				    name);
	}
	return CU_OK;
}

static int cmp_family_name(const void *a, const void *b)
{
	return strcmp(
	    defs[*(const size_t *)a].name, defs[*(const size_t *)b].name);
}

void ctl_metrics_free(ctl_metrics *m)
{
	size_t i;

	if (m == NULL)
		return;
	CU_ASSERT(m->magic == METRICS_MAGIC);
	for (i = 0; i < CTL_M__COUNT; i++) {
		series_free_all(&m->fam[i]);
		cu_free(m->fam[i].names);
		cu_free(m->fam[i].extra);
	}
	for (i = 0; i < m->ncustom; i++) {
		size_t k;

		cu_free(m->custom[i].name);
		cu_free(m->custom[i].key);
		for (k = 0; k < m->custom[i].ntracked; k++)
			cu_free(m->custom[i].tracked[k]);
		cu_free(m->custom[i].tracked);
	}
	cu_free(m->custom);
	m->magic = 0;
	cu_free(m);
}

static const char *platform(void)
{
#if defined(__x86_64__)
	return "linux/amd64";
#elif defined(__aarch64__)
	return "linux/arm64";
#else
	return "linux/unknown";
#endif
}

int ctl_metrics_new(
    ctl_metrics **out, const struct ctl_metrics_opts *opts, cu_error *err)
{
	ctl_metrics *m;
	size_t i;
	int rc;

	*out = NULL;
	m = cu_calloc(1, sizeof(*m));
	if (m == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	m->magic = METRICS_MAGIC;
	m->max_response = opts != NULL && opts->max_response > 0 &&
				  opts->max_response < CTL_HTTPD_MAX_RESPONSE
			      ? opts->max_response
			      : CTL_HTTPD_MAX_RESPONSE;
	m->max_series = opts != NULL && opts->max_series > 0
			    ? opts->max_series
			    : CTL_METRICS_DEFAULT_MAX_SERIES;
	m->role = CTL_ROLE_STANDALONE;
	for (i = 0; i < CTL_M__COUNT; i++) {
		m->order[i] = i;
		if ((rc = family_init(&m->fam[i], &defs[i], err)) != CU_OK)
			goto out_free;
	}
	qsort(m->order, CTL_M__COUNT, sizeof(m->order[0]), cmp_family_name);
	rc = ctl_metric_set(
	    m, CTL_M_CUEUE_BUILD_INFO, CTL_LV(CUEUE_VERSION), 1.0);
	if (rc == CU_OK)
		rc = ctl_metric_set(m, CTL_M_KUEUE_BUILD_INFO,
		    CTL_LV(CUEUE_VERSION, "unknown", "unknown", "none",
			"gcc " __VERSION__, platform()),
		    1.0);
	if (rc != CU_OK) {
		cu_error_set(
		    err, rc, "cannot set build_info: %s", cu_err_desc(rc));
		goto out_free;
	}
	*out = m;
	return CU_OK;
out_free:
	ctl_metrics_free(m);
	return rc;
}

void ctl_metrics_set_role(ctl_metrics *m, enum ctl_replica_role role)
{
	CU_ASSERT(m->magic == METRICS_MAGIC);
	if ((unsigned)role < ARRAY_LEN(role_names))
		m->role = role;
}

const char *ctl_metric_name(enum ctl_metric_id id)
{
	return (unsigned)id < CTL_M__COUNT ? defs[id].name : NULL;
}

enum ctl_metric_type ctl_metric_type_of(enum ctl_metric_id id)
{
	return (unsigned)id < CTL_M__COUNT ? defs[id].type : CTL_METRIC_COUNTER;
}

size_t ctl_metric_series_count(const ctl_metrics *m, enum ctl_metric_id id)
{
	return (unsigned)id < CTL_M__COUNT
		   ? series_map_count(&m->fam[id].series)
		   : 0;
}

#define T_BIT(t) (1u << (t))
#define T_COUNTER_BIT T_BIT(CTL_METRIC_COUNTER)
#define T_GAUGE_BIT T_BIT(CTL_METRIC_GAUGE)
#define T_HISTOGRAM_BIT T_BIT(CTL_METRIC_HISTOGRAM)
#define T_ANY (T_COUNTER_BIT | T_GAUGE_BIT | T_HISTOGRAM_BIT)

/* Check an operation's arguments: `types` is the set of metric types the
 * operation applies to. Logs the first misuse of each family. */
static int check_args(ctl_metrics *m, enum ctl_metric_id id,
    const char *const *lv, size_t nlv, unsigned types)
{
	struct family *f;
	const char *why = NULL;
	size_t i;

	CU_ASSERT(m != NULL && m->magic == METRICS_MAGIC);
	if ((unsigned)id >= CTL_M__COUNT)
		return CU_EINVAL;
	f = &m->fam[id];
	if (nlv != f->nbase)
		why = "wrong number of label values";
	else if ((types & T_BIT(f->def->type)) == 0)
		why = "operation does not fit the metric type";
	for (i = 0; why == NULL && i < nlv; i++) {
		size_t len;

		if (lv[i] == NULL) {
			why = "NULL label value";
			break;
		}
		len = strlen(lv[i]);
		if (len > CTL_METRICS_MAX_LABEL_VALUE)
			why = "label value too long";
		else if (!valid_utf8((const unsigned char *)lv[i], len))
			why = "label value is not UTF-8";
	}
	if (why == NULL)
		return CU_OK;
	if (!f->warned) {
		f->warned = true;
		cu_warn("metrics: %s: %s", f->def->name, why);
	}
	return CU_EINVAL;
}

static struct series *find(struct family *f, const char *const *lv)
{
	return series_map_get(&f->series, lv);
}

static struct series *create(
    struct family *f, const char *const *lv, size_t nlv)
{
	size_t nb =
	    f->def->type == CTL_METRIC_HISTOGRAM ? f->def->nbounds + 1 : 0;
	size_t size = sizeof(struct series) + nb * sizeof(uint64_t) +
		      (nlv + 1) * sizeof(char *);
	struct series *s;
	char *str;
	size_t i;

	for (i = 0; i < nlv; i++)
		size += strlen(lv[i]) + 1;
	s = cu_calloc(1, size);
	if (s == NULL)
		return NULL;
	s->buckets = (uint64_t *)(s + 1);
	s->labels = (char **)(s->buckets + nb);
	str = (char *)(s->labels + nlv + 1);
	for (i = 0; i < nlv; i++) {
		size_t len = strlen(lv[i]) + 1;

		memcpy(str, lv[i], len);
		s->labels[i] = str;
		str += len;
	}
	s->labels[nlv] = NULL;
	if (nb == 0)
		s->buckets = NULL;
	if (series_map_put(&f->series, (const char *const *)s->labels, s) !=
	    CU_OK) {
		cu_free(s);
		return NULL;
	}
	return s;
}

static void count_drop(ctl_metrics *m, struct family *f)
{
	struct family *d = &m->fam[CTL_M_CUEUE_METRICS_DROPPED_SERIES_TOTAL];
	const char *lv[1] = {f->def->name};
	struct series *s = find(d, lv);

	if (!f->warned) {
		f->warned = true;
		cu_warn("metrics: %s: series dropped (cap %zu reached or out "
			"of memory)",
		    f->def->name, m->max_series);
	}
	/* The dropped-series family is bounded by the number of families,
	 * so the cap does not apply to it. */
	if (s == NULL)
		s = create(d, lv, 1);
	if (s != NULL)
		s->counter++;
}

/* The series for lv, created if needed. *rc on failure. */
static struct series *lookup(ctl_metrics *m, enum ctl_metric_id id,
    const char *const *lv, size_t nlv, int *rc)
{
	struct family *f = &m->fam[id];
	struct series *s = find(f, lv);

	if (s != NULL)
		return s;
	if (series_map_count(&f->series) >= m->max_series &&
	    id != CTL_M_CUEUE_METRICS_DROPPED_SERIES_TOTAL) {
		*rc = CU_EQUOTA;
		count_drop(m, f);
		return NULL;
	}
	s = create(f, lv, nlv);
	if (s == NULL) {
		*rc = CU_ENOMEM;
		count_drop(m, f);
	}
	return s;
}

/* ---- metrics.customLabels --------------------------------------------- */

#define MAX_LABELS 48 /* base labels + custom ones of one family */
#define UNTRACKED "kueue.x-k8s.io/_UNTRACKED_VALUE_"

static long label_index(const struct family *f, const char *name)
{
	size_t i;

	for (i = 0; i < f->nbase; i++)
		if (strcmp(f->names[i], name) == 0)
			return (long)i;
	return -1;
}

/* Does Kueue put custom labels of kind k on family f? ClusterQueue ones
 * on the ClusterQueue families, LocalQueue ones on kueue_local_queue_*,
 * Cohort ones on kueue_cohort_*. */
static bool family_takes(const struct family *f, enum ctl_metric_object k)
{
	const char *n = f->def->name;
	bool lq = strncmp(n, "kueue_local_queue_", 18) == 0;
	bool co = strncmp(n, "kueue_cohort_", 13) == 0;

	switch (k) {
	case CTL_MOBJ_CLUSTER_QUEUE:
		return !lq && !co &&
		       (label_index(f, "cluster_queue") >= 0 ||
			   label_index(f, "preempting_cluster_queue") >= 0);
	case CTL_MOBJ_COHORT:
		return co && label_index(f, "cohort") >= 0;
	case CTL_MOBJ_LOCAL_QUEUE:
		return lq && label_index(f, "name") >= 0 &&
		       label_index(f, "namespace") >= 0;
	case CTL_MOBJ_WORKLOAD:
		return strcmp(n, "kueue_admitted_active_workloads") == 0 ||
		       strcmp(n, "kueue_pending_workloads") == 0 ||
		       strcmp(
			   n, "kueue_local_queue_admitted_active_workloads") ==
			   0 ||
		       strcmp(n,
			   "kueue_local_queue_admitted_workloads_total") == 0 ||
		       strcmp(n,
			   "kueue_local_queue_admission_wait_time_seconds") ==
			   0;
	}
	return false;
}

static int copy_custom(struct custom *d, const struct ctl_metric_custom *c)
{
	size_t k;

	d->kind = c->kind;
	d->annotation = c->annotation;
	d->name = cu_asprintf("custom_%s", c->name);
	d->key = cu_strdup(c->key);
	d->tracked = cu_calloc(c->ntracked + 1, sizeof(char *));
	if (d->name == NULL || d->key == NULL || d->tracked == NULL)
		return CU_ENOMEM;
	for (k = 0; k < c->ntracked; k++) {
		if ((d->tracked[k] = cu_strdup(c->tracked[k])) == NULL)
			return CU_ENOMEM;
		d->ntracked = k + 1;
	}
	return CU_OK;
}

/* Append the custom labels that apply to f to its names (Kueue's order:
 * ClusterQueue, Cohort, LocalQueue, Workload, each in configuration
 * order). */
static int family_extend(ctl_metrics *m, struct family *f)
{
	static const enum ctl_metric_object order[] = {CTL_MOBJ_CLUSTER_QUEUE,
	    CTL_MOBJ_COHORT, CTL_MOBJ_LOCAL_QUEUE, CTL_MOBJ_WORKLOAD};
	size_t idx[MAX_LABELS], n = 0, len = 0, i, k;
	char **names, *str;

	for (k = 0; k < ARRAY_LEN(order); k++)
		for (i = 0; family_takes(f, order[k]) && i < m->ncustom; i++)
			if (m->custom[i].kind == order[k] &&
			    f->nbase + n < MAX_LABELS)
				idx[n++] = i;
	if (n == 0)
		return CU_OK;
	for (i = 0; i < f->nbase; i++)
		len += strlen(f->names[i]) + 1;
	for (i = 0; i < n; i++)
		len += strlen(m->custom[idx[i]].name) + 1;
	names = cu_malloc((f->nbase + n + 1) * sizeof(char *) + len);
	f->extra = cu_calloc(n, sizeof(*f->extra));
	if (names == NULL || f->extra == NULL) {
		cu_free(names);
		return CU_ENOMEM;
	}
	str = (char *)(names + f->nbase + n + 1);
	for (i = 0; i < f->nbase + n; i++) {
		const char *src = i < f->nbase
				      ? f->names[i]
				      : m->custom[idx[i - f->nbase]].name;

		names[i] = str;
		memcpy(str, src, strlen(src) + 1);
		str += strlen(src) + 1;
	}
	names[f->nbase + n] = NULL;
	memcpy(f->extra, idx, n * sizeof(*idx));
	cu_free(f->names);
	f->names = names;
	f->nlabels = f->nbase + n;
	series_map_dispose(&f->series);
	series_map_init_parts(&f->series, (unsigned)f->nlabels);
	return CU_OK;
}

int ctl_metrics_set_custom(ctl_metrics *m, const struct ctl_metric_custom *c,
    size_t n, ctl_metric_resolve_fn resolve, void *payload, cu_error *err)
{
	size_t i;

	CU_ASSERT(m != NULL && m->magic == METRICS_MAGIC && m->ncustom == 0);
	if (n == 0)
		return CU_OK;
	m->custom = cu_calloc(n, sizeof(*m->custom));
	if (m->custom == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		m->ncustom = i + 1;
		if (copy_custom(&m->custom[i], &c[i]) != CU_OK)
			return cu_error_set(err, CU_ENOMEM, "out of memory");
	}
	m->resolve = resolve;
	m->rpayload = payload;
	for (i = 0; i < CTL_M__COUNT; i++) {
		if (series_map_count(&m->fam[i].series) > 0)
			continue; /* build_info: never a queue family */
		if (family_extend(m, &m->fam[i]) != CU_OK)
			return cu_error_set(err, CU_ENOMEM, "out of memory");
	}
	return CU_OK;
}

/* The value of custom label c for the object the base values lv of f
 * name: its label or annotation, "" when absent, the untracked marker
 * when trackedValues does not list it (Kueue's rules). */
static const char *custom_value(const ctl_metrics *m, const struct family *f,
    const struct custom *c, const char *const *lv)
{
	const char *v = NULL, *ns = NULL, *name = NULL;
	long a = -1, b = -1;
	size_t k, j = 0;

	if (c->kind == CTL_MOBJ_WORKLOAD) {
		/* The caller's values, in configuration order. */
		for (k = 0; &m->custom[k] != c; k++)
			j += m->custom[k].kind == CTL_MOBJ_WORKLOAD;
		v = m->wlv != NULL ? m->wlv[j] : NULL;
	} else {
		if (c->kind == CTL_MOBJ_CLUSTER_QUEUE) {
			a = label_index(f, "cluster_queue");
			if (a < 0)
				a = label_index(f, "preempting_cluster_queue");
		} else if (c->kind == CTL_MOBJ_COHORT) {
			a = label_index(f, "cohort");
		} else {
			a = label_index(f, "name");
			b = label_index(f, "namespace");
			ns = b >= 0 ? lv[b] : NULL;
		}
		name = a >= 0 ? lv[a] : NULL;
		if (name != NULL && m->resolve != NULL)
			v = m->resolve(m->rpayload, c->kind, ns, name, c->key,
			    c->annotation);
	}
	if (v == NULL)
		v = "";
	if (c->ntracked == 0)
		return v;
	for (k = 0; k < c->ntracked; k++)
		if (strcmp(c->tracked[k], v) == 0)
			return v;
	return UNTRACKED;
}

/* lv with the custom label values of family id appended (into buf, which
 * holds MAX_LABELS), or lv itself when it has none. */
static const char *const *compose(const ctl_metrics *m, enum ctl_metric_id id,
    const char *const *lv, const char **buf)
{
	const struct family *f = &m->fam[id];
	size_t i;

	if (f->nlabels == f->nbase)
		return lv;
	for (i = 0; i < f->nbase; i++)
		buf[i] = lv[i];
	for (i = f->nbase; i < f->nlabels; i++)
		buf[i] =
		    custom_value(m, f, &m->custom[f->extra[i - f->nbase]], lv);
	return buf;
}

/* Turn the caller's base label values into the family's full set. */
#define COMPOSE(m, id, lv, nlv)                                                \
	const char *full_[MAX_LABELS];                                         \
	lv = compose(m, id, lv, full_);                                        \
	nlv = (m)->fam[id].nlabels

int ctl_metric_add(ctl_metrics *m, enum ctl_metric_id id, const char *const *lv,
    size_t nlv, uint64_t n)
{
	struct series *s;
	int rc = check_args(m, id, lv, nlv, T_COUNTER_BIT);

	if (rc != CU_OK)
		return rc;
	{
		COMPOSE(m, id, lv, nlv);
		if ((s = lookup(m, id, lv, nlv, &rc)) == NULL)
			return rc;
		s->counter += n;
		return CU_OK;
	}
}

int ctl_metric_inc(
    ctl_metrics *m, enum ctl_metric_id id, const char *const *lv, size_t nlv)
{
	struct series *s;
	int rc = check_args(m, id, lv, nlv, T_COUNTER_BIT | T_GAUGE_BIT);

	if (rc != CU_OK)
		return rc;
	{
		COMPOSE(m, id, lv, nlv);
		if ((s = lookup(m, id, lv, nlv, &rc)) == NULL)
			return rc;
		if (defs[id].type == CTL_METRIC_GAUGE)
			s->gauge += 1.0;
		else
			s->counter++;
		return CU_OK;
	}
}

int ctl_metric_set(ctl_metrics *m, enum ctl_metric_id id, const char *const *lv,
    size_t nlv, double v)
{
	struct series *s;
	int rc = check_args(m, id, lv, nlv, T_GAUGE_BIT);

	if (rc != CU_OK)
		return rc;
	{
		COMPOSE(m, id, lv, nlv);
		if ((s = lookup(m, id, lv, nlv, &rc)) == NULL)
			return rc;
		s->gauge = v;
		return CU_OK;
	}
}

size_t ctl_metrics_workload_labels(const ctl_metrics *m, enum ctl_metric_id id)
{
	const struct family *f;
	size_t i, n = 0;

	if (m == NULL || (unsigned)id >= CTL_M__COUNT)
		return 0;
	f = &m->fam[id];
	for (i = f->nbase; i < f->nlabels; i++)
		n +=
		    m->custom[f->extra[i - f->nbase]].kind == CTL_MOBJ_WORKLOAD;
	return n;
}

/* One update of family id with the Workload-sourced values wlv. */
enum wl_op { WL_SET, WL_INC, WL_OBSERVE };

static int update_wl(ctl_metrics *m, enum ctl_metric_id id,
    const char *const *lv, size_t nlv, const char *const *wlv, enum wl_op op,
    double v)
{
	int rc;

	if (m == NULL)
		return CU_EINVAL;
	m->wlv = wlv;
	rc = op == WL_SET   ? ctl_metric_set(m, id, lv, nlv, v)
	     : op == WL_INC ? ctl_metric_inc(m, id, lv, nlv)
			    : ctl_metric_observe(m, id, lv, nlv, v);
	m->wlv = NULL;
	return rc;
}

int ctl_metric_set_wl(ctl_metrics *m, enum ctl_metric_id id,
    const char *const *lv, size_t nlv, const char *const *wlv, double v)
{
	return update_wl(m, id, lv, nlv, wlv, WL_SET, v);
}

int ctl_metric_inc_wl(ctl_metrics *m, enum ctl_metric_id id,
    const char *const *lv, size_t nlv, const char *const *wlv)
{
	return update_wl(m, id, lv, nlv, wlv, WL_INC, 0);
}

int ctl_metric_observe_wl(ctl_metrics *m, enum ctl_metric_id id,
    const char *const *lv, size_t nlv, const char *const *wlv, double v)
{
	return update_wl(m, id, lv, nlv, wlv, WL_OBSERVE, v);
}

int ctl_metric_gauge_add(ctl_metrics *m, enum ctl_metric_id id,
    const char *const *lv, size_t nlv, double d)
{
	struct series *s;
	int rc = check_args(m, id, lv, nlv, T_GAUGE_BIT);

	if (rc != CU_OK)
		return rc;
	{
		COMPOSE(m, id, lv, nlv);
		if ((s = lookup(m, id, lv, nlv, &rc)) == NULL)
			return rc;
		s->gauge += d;
		return CU_OK;
	}
}

int ctl_metric_observe(ctl_metrics *m, enum ctl_metric_id id,
    const char *const *lv, size_t nlv, double v)
{
	const struct metric_def *def;
	struct series *s;
	size_t i;
	int rc = check_args(m, id, lv, nlv, T_HISTOGRAM_BIT);

	if (rc != CU_OK)
		return rc;
	{
		COMPOSE(m, id, lv, nlv);
		if ((s = lookup(m, id, lv, nlv, &rc)) == NULL)
			return rc;
		def = &defs[id];
		/* First bound >= v (le semantics); NaN lands in +Inf. */
		for (i = 0; i < def->nbounds; i++)
			if (v <= def->bounds[i])
				break;
		s->buckets[i]++;
		s->gauge += v;
		s->counter++;
		return CU_OK;
	}
}

int ctl_metric_value(double *out, ctl_metrics *m, enum ctl_metric_id id,
    const char *const *lv, size_t nlv)
{
	struct series *s;
	int rc = check_args(m, id, lv, nlv, T_ANY);

	*out = 0;
	if (rc != CU_OK)
		return rc;
	{
		COMPOSE(m, id, lv, nlv);
		s = find(&m->fam[id], lv);
		if (s == NULL)
			return CU_ENOTFOUND;
		*out = defs[id].type == CTL_METRIC_GAUGE ? s->gauge
							 : (double)s->counter;
		return CU_OK;
	}
}

int ctl_metric_remove(
    ctl_metrics *m, enum ctl_metric_id id, const char *const *lv, size_t nlv)
{
	struct series *s;
	int rc = check_args(m, id, lv, nlv, T_ANY);

	if (rc != CU_OK)
		return rc;
	{
		COMPOSE(m, id, lv, nlv);
		s = series_map_del(&m->fam[id].series, lv);
		if (s == NULL)
			return CU_ENOTFOUND;
		cu_free(s);
		return CU_OK;
	}
}

/* Remove the series of family f whose label idx[i] is values[i], for
 * i < n. */
static size_t remove_in_family(
    struct family *f, const size_t *idx, const char *const *values, size_t n)
{
	cu_map_iter it = CU_MAP_ITER_INIT;
	struct series *s;
	size_t removed = 0, i;

	while (series_map_next(&f->series, &it, &s)) {
		for (i = 0; i < n; i++)
			if (strcmp(s->labels[idx[i]], values[i]) != 0)
				break;
		if (i < n)
			continue;
		/* deleting while iterating: allowed (lib/cu.h) */
		series_map_del(&f->series, (const char *const *)s->labels);
		removed++;
		cu_free(s);
	}
	return removed;
}

size_t ctl_metrics_remove_match(ctl_metrics *m, enum ctl_metric_id id,
    const char *const *names, size_t nnames, const char *const *values,
    size_t nvalues)
{
	size_t removed = 0, fi, i, li, n = nnames;
	size_t idx[CTL_METRICS_MAX_MATCH];

	CU_ASSERT(m != NULL && m->magic == METRICS_MAGIC);
	if (n == 0 || n > CTL_METRICS_MAX_MATCH || nvalues != n)
		return 0;
	for (fi = 0; fi < CTL_M__COUNT; fi++) {
		struct family *f = &m->fam[fi];

		if (id != CTL_M__COUNT && fi != (size_t)id)
			continue;
		for (i = 0; i < n; i++) {
			for (li = 0; li < f->nlabels; li++)
				if (strcmp(f->names[li], names[i]) == 0)
					break;
			if (li == f->nlabels)
				break;
			idx[i] = li;
		}
		if (i == n && series_map_count(&f->series) > 0)
			removed += remove_in_family(f, idx, values, n);
	}
	return removed;
}

size_t ctl_metrics_remove_label(
    ctl_metrics *m, const char *label, const char *value)
{
	return ctl_metrics_remove_match(
	    m, CTL_M__COUNT, CTL_LV(label), CTL_LV(value));
}

/* ---- rendering --------------------------------------------------------- */

static int cmp_series(const void *a, const void *b)
{
	char *const *la = (*(const struct series *const *)a)->labels;
	char *const *lb = (*(const struct series *const *)b)->labels;
	int c;

	for (; *la != NULL && *lb != NULL; la++, lb++)
		if ((c = strcmp(*la, *lb)) != 0)
			return c;
	return 0;
}

/* A series' labels as rendered, without the closing brace, into lab:
 * {labels,replica_role=".." ("" when it has none). Written once per
 * series, copied into each of its lines (a histogram has a dozen). */
static int open_labels(cu_buf *lab, const ctl_metrics *m,
    const struct family *f, const struct series *s)
{
	const char *sep = "{";
	size_t i;
	int rc = CU_OK;

	cu_buf_reset(lab);
	for (i = 0; i < f->nlabels && rc == CU_OK; i++) {
		if ((rc = cu_buf_adds(lab, sep)) != CU_OK ||
		    (rc = cu_buf_adds(lab, f->names[i])) != CU_OK ||
		    (rc = cu_buf_add(lab, "=\"", 2)) != CU_OK ||
		    (rc = ctl_prom_escape(lab, s->labels[i], true)) != CU_OK)
			return rc;
		rc = cu_buf_add(lab, "\"", 1);
		sep = ",";
	}
	if (rc == CU_OK && f->def->role)
		rc = cu_buf_addf(
		    lab, "%sreplica_role=\"%s\"", sep, role_names[m->role]);
	return rc;
}

/* name suffix{labels,le=".."} value (braces only if any label). */
static int put_line(cu_buf *out, const char *name, const char *suffix,
    const cu_buf *lab, const char *le, const char *value)
{
	int rc;

	if ((rc = cu_buf_adds(out, name)) != CU_OK ||
	    (rc = cu_buf_adds(out, suffix)) != CU_OK ||
	    (lab->len > 0 &&
		(rc = cu_buf_add(out, lab->ptr, lab->len)) != CU_OK))
		return rc;
	if (le != NULL && ((rc = cu_buf_adds(out,
				lab->len > 0 ? ",le=\"" : "{le=\"")) != CU_OK ||
			      (rc = cu_buf_adds(out, le)) != CU_OK ||
			      (rc = cu_buf_add(out, "\"", 1)) != CU_OK))
		return rc;
	if ((lab->len > 0 || le != NULL) &&
	    (rc = cu_buf_add(out, "}", 1)) != CU_OK)
		return rc;
	if ((rc = cu_buf_add(out, " ", 1)) != CU_OK ||
	    (rc = cu_buf_adds(out, value)) != CU_OK)
		return rc;
	return cu_buf_add(out, "\n", 1);
}

static int render_series(cu_buf *out, cu_buf *lab, const ctl_metrics *m,
    const struct family *f, const struct series *s)
{
	const struct metric_def *def = f->def;
	char num[CTL_PROM_FLOAT_LEN], val[CTL_PROM_FLOAT_LEN];
	uint64_t cum = 0;
	size_t i;
	int rc;

	if ((rc = open_labels(lab, m, f, s)) != CU_OK)
		return rc;
	if (def->type == CTL_METRIC_COUNTER || def->type == CTL_METRIC_GAUGE) {
		if (def->type == CTL_METRIC_COUNTER)
			snprintf(val, sizeof(val), "%" PRIu64, s->counter);
		else
			ctl_prom_format_float(s->gauge, val);
		return put_line(out, def->name, "", lab, NULL, val);
	}
	for (i = 0; i <= def->nbounds; i++) {
		cum += s->buckets[i];
		if (i < def->nbounds)
			ctl_prom_format_float(def->bounds[i], num);
		else
			snprintf(num, sizeof(num), "+Inf");
		snprintf(val, sizeof(val), "%" PRIu64, cum);
		if ((rc = put_line(out, def->name, "_bucket", lab, num, val)) !=
		    CU_OK)
			return rc;
	}
	ctl_prom_format_float(s->gauge, num);
	snprintf(val, sizeof(val), "%" PRIu64, s->counter);
	if ((rc = put_line(out, def->name, "_sum", lab, NULL, num)) != CU_OK)
		return rc;
	return put_line(out, def->name, "_count", lab, NULL, val);
}

static const char *type_name(enum ctl_metric_type t)
{
	return t == CTL_METRIC_COUNTER ? "counter"
	       : t == CTL_METRIC_GAUGE ? "gauge"
				       : "histogram";
}

static int render_family(cu_buf *out, cu_buf *lab, const ctl_metrics *m,
    const struct family *f, struct series **scratch)
{
	cu_map_iter it = CU_MAP_ITER_INIT;
	struct series *s;
	size_t n = 0, i;
	int rc;

	while (series_map_next(&f->series, &it, &s))
		scratch[n++] = s;
	qsort(scratch, n, sizeof(*scratch), cmp_series);
	if ((rc = cu_buf_addf(out, "# HELP %s ", f->def->name)) != CU_OK ||
	    (rc = ctl_prom_escape(out, f->def->help, false)) != CU_OK ||
	    (rc = cu_buf_addf(out, "\n# TYPE %s %s\n", f->def->name,
		 type_name(f->def->type))) != CU_OK)
		return rc;
	for (i = 0; i < n; i++)
		if ((rc = render_series(out, lab, m, f, scratch[i])) != CU_OK)
			return rc;
	return CU_OK;
}

int ctl_metrics_render(ctl_metrics *m, cu_buf *out, cu_error *err)
{
	struct series **scratch;
	size_t most = 0, i;
	int rc = CU_OK;
	cu_buf lab;

	CU_ASSERT(m != NULL && m->magic == METRICS_MAGIC);
	for (i = 0; i < CTL_M__COUNT; i++)
		if (series_map_count(&m->fam[i].series) > most)
			most = series_map_count(&m->fam[i].series);
	scratch = cu_malloc((most > 0 ? most : 1) * sizeof(*scratch));
	if (scratch == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	cu_buf_init(&lab, SIZE_MAX / 2);
	for (i = 0; i < CTL_M__COUNT && rc == CU_OK; i++) {
		const struct family *f = &m->fam[m->order[i]];

		if (series_map_count(&f->series) > 0)
			rc = render_family(out, &lab, m, f, scratch);
	}
	cu_buf_dispose(&lab);
	cu_free(scratch);
	if (rc != CU_OK)
		return cu_error_set(
		    err, rc, "rendering metrics: %s", cu_err_desc(rc));
	return CU_OK;
}

size_t ctl_metrics_max_response(const ctl_metrics *m)
{
	return m->max_response;
}
