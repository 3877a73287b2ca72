/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/metrics.h - the Prometheus metrics registry: counters
 * (uint64), gauges (double) and histograms (fixed bucket arrays) with label
 * sets, for the families of controller/metrics.def (Kueue's names, plus
 * cueue's own), rendered in the Prometheus text format 0.0.4 in a sorted,
 * deterministic order and served at /metrics.
 *
 * Label values are passed as an array plus its length; CTL_LV() builds
 * both from a list of strings, so a call reads
 *
 *   ctl_metric_inc(m, CTL_M_ADMITTED_WORKLOADS_TOTAL, CTL_LV(cq, pc));
 *   ctl_metric_observe(m, CTL_M_CUEUE_LOOP_LAG_SECONDS, CTL_LV0, lag);
 *
 * and a count that does not match the family's label names is rejected
 * (CU_EINVAL, logged once per family). Families flagged ROLE in metrics.def
 * carry replica_role as a last label, set for the whole registry with
 * ctl_metrics_set_role(); callers never pass it.
 *
 * Cardinality is bounded: each family holds at most max_series series; an
 * update that would create one more is dropped and counted in
 * cueue_metrics_dropped_series_total{family}. Series of a deleted object go
 * away with ctl_metrics_remove_label() (e.g. cluster_queue=<name>).
 *
 * Update functions return a cu_err code for tests and callers that care;
 * production callers may ignore it (failures are counted and logged), so
 * they are not CU_MUST_CHECK. Event-loop thread only. Prefix: ctl_metric(s)_.
 */
#ifndef CU_CONTROLLER_METRICS_H
#define CU_CONTROLLER_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "controller/httpd.h"
#include "lib/cu.h"

typedef struct ctl_metrics ctl_metrics;

/* Family ids: CTL_M_<ID> for every CTL_METRIC line of metrics.def. */
enum ctl_metric_id {
#define CTL_METRIC(id, name, type, role, buckets, labels, help) CTL_M_##id,
#include "controller/metrics.def"
#undef CTL_METRIC
	CTL_M__COUNT
};

enum ctl_metric_type {
	CTL_METRIC_COUNTER,
	CTL_METRIC_GAUGE,
	CTL_METRIC_HISTOGRAM,
};

/* The replica_role label value of every ROLE family. */
enum ctl_replica_role {
	CTL_ROLE_STANDALONE = 0, /* "standalone": leader election disabled */
	CTL_ROLE_LEADER,	 /* "leader" */
	CTL_ROLE_FOLLOWER,	 /* "follower" */
};

/* Label values: an array literal and its length, as two arguments. */
#define CTL_LV(...)                                                            \
	((const char *const[]){__VA_ARGS__}),                                  \
	    (sizeof((const char *const[]){__VA_ARGS__}) /                      \
		sizeof(const char *))
/* No labels. */
#define CTL_LV0 ((const char *const *)NULL), ((size_t)0)

#define CTL_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define CTL_METRICS_DEFAULT_MAX_SERIES 10000u
#define CTL_METRICS_MAX_LABEL_VALUE 1024u /* bytes per label value */

struct ctl_metrics_opts {
	size_t max_series; /* per family; 0 = CTL_METRICS_DEFAULT_MAX_SERIES */
	/* the largest /metrics answer in bytes; 0 = CTL_HTTPD_MAX_RESPONSE
	 * (which also bounds it) */
	size_t max_response;
};

/*
 * A registry with every family of metrics.def, empty but for
 * cueue_build_info and kueue_build_info (set to 1). opts may be NULL
 * (defaults) [borrowed]. *out [owned: ctl_metrics_free]. CU_ENOMEM.
 */
CU_MUST_CHECK int ctl_metrics_new(
    ctl_metrics **out, const struct ctl_metrics_opts *opts, cu_error *err);

/* ---- metrics.customLabels (Kueue's CustomMetricLabels) --------------- */

/* The object a custom label's value comes from. */
enum ctl_metric_object {
	CTL_MOBJ_CLUSTER_QUEUE = 0,
	CTL_MOBJ_COHORT,
	CTL_MOBJ_LOCAL_QUEUE,
	/* The Workloads counted in a series: only on the families Kueue
	 * gives them (kueue_admitted_active_workloads,
	 * kueue_pending_workloads, kueue_local_queue_admitted_active_workloads,
	 * kueue_local_queue_admitted_workloads_total and
	 * kueue_local_queue_admission_wait_time_seconds), values given by
	 * the caller (ctl_metric_*_wl), never resolved. */
	CTL_MOBJ_WORKLOAD,
};

/* One custom label: rendered as custom_<name>; all [borrowed]. */
struct ctl_metric_custom {
	const char *name;
	enum ctl_metric_object kind;
	const char *key; /* label (or annotation) key of the object */
	bool annotation;
	const char *const *tracked; /* ntracked; none: any value */
	size_t ntracked;
};

/* The value [borrowed, valid until the caller's next turn] of label or
 * annotation key of object (kind, ns: LocalQueues only, name), or NULL
 * when the object or the key is absent. */
typedef const char *(*ctl_metric_resolve_fn)(void *payload,
    enum ctl_metric_object kind, const char *ns, const char *name,
    const char *key, bool annotation);

/*
 * Give the families Kueue names the custom labels c[0..n) [borrowed;
 * copied]: ClusterQueue ones on the families with a cluster_queue (or
 * preempting_cluster_queue) label, Cohort ones on kueue_cohort_*,
 * LocalQueue ones on kueue_local_queue_*, after the family's own labels.
 * Callers keep passing only the family's own label values; the registry
 * resolves the custom ones with resolve(payload, ...) on every update ("" when
 * absent, kueue.x-k8s.io/_UNTRACKED_VALUE_ when trackedValues does not list
 * the value). Call once, right after ctl_metrics_new. CU_ENOMEM.
 */
CU_MUST_CHECK int ctl_metrics_set_custom(ctl_metrics *m,
    const struct ctl_metric_custom *c, size_t n, ctl_metric_resolve_fn resolve,
    void *payload, cu_error *err);

/* How many Workload-sourced custom labels family id carries. */
size_t ctl_metrics_workload_labels(const ctl_metrics *m, enum ctl_metric_id id);

/*
 * ctl_metric_set for a family with Workload-sourced custom labels: wlv
 * [borrowed] holds their values (configuration order, as read from the
 * Workloads; trackedValues applied here), NULL: all "".
 */
int ctl_metric_set_wl(ctl_metrics *m, enum ctl_metric_id id,
    const char *const *lv, size_t nlv, const char *const *wlv, double v);
/* The same for ctl_metric_inc and ctl_metric_observe. */
int ctl_metric_inc_wl(ctl_metrics *m, enum ctl_metric_id id,
    const char *const *lv, size_t nlv, const char *const *wlv);
int ctl_metric_observe_wl(ctl_metrics *m, enum ctl_metric_id id,
    const char *const *lv, size_t nlv, const char *const *wlv, double v);

/* Free the registry and every series. NULL is a no-op. */
void ctl_metrics_free(ctl_metrics *m);

/* Set the replica_role rendered on every ROLE family (default
 * standalone). */
void ctl_metrics_set_role(ctl_metrics *m, enum ctl_replica_role role);

/*
 * Updates. lv [borrowed] holds nlv label values, in metrics.def order, each
 * valid UTF-8 of at most CTL_METRICS_MAX_LABEL_VALUE bytes (copied when a
 * series is created). Returns CU_OK; CU_EINVAL for a wrong label count, an
 * id out of range, a family of another type or a bad label value;
 * CU_EQUOTA when the family is full (counted as dropped); CU_ENOMEM
 * (counted as dropped).
 *
 * inc:     counters +1, gauges +1.0
 * add:     counters +n
 * set:     gauges = v (NaN and +-Inf allowed)
 * gauge_add: gauges += d (d may be negative)
 * observe: histograms, one observation of v
 */
int ctl_metric_inc(
    ctl_metrics *m, enum ctl_metric_id id, const char *const *lv, size_t nlv);
int ctl_metric_add(ctl_metrics *m, enum ctl_metric_id id, const char *const *lv,
    size_t nlv, uint64_t n);
int ctl_metric_set(ctl_metrics *m, enum ctl_metric_id id, const char *const *lv,
    size_t nlv, double v);
int ctl_metric_gauge_add(ctl_metrics *m, enum ctl_metric_id id,
    const char *const *lv, size_t nlv, double d);
int ctl_metric_observe(ctl_metrics *m, enum ctl_metric_id id,
    const char *const *lv, size_t nlv, double v);

/*
 * Read one series back (tests, status): counters and gauges give their
 * value, histograms their observation count. CU_ENOTFOUND when the series
 * does not exist; CU_EINVAL as above.
 */
CU_MUST_CHECK int ctl_metric_value(double *out, ctl_metrics *m,
    enum ctl_metric_id id, const char *const *lv, size_t nlv);

/* Remove one series. CU_ENOTFOUND when absent; CU_EINVAL as above. */
int ctl_metric_remove(
    ctl_metrics *m, enum ctl_metric_id id, const char *const *lv, size_t nlv);

/*
 * Remove every series, in every family that has a label called `label`,
 * whose value of that label is `value` (a deleted ClusterQueue:
 * ("cluster_queue", name), plus ("preempting_cluster_queue", name)).
 * Both [borrowed]. Returns the number of series removed.
 */
size_t ctl_metrics_remove_label(
    ctl_metrics *m, const char *label, const char *value);

#define CTL_METRICS_MAX_MATCH 4u
/*
 * Remove every series of family id (every family when id is
 * CTL_M__COUNT) whose labels names[i] are values[i] for i < n (n of
 * them, 1..CTL_METRICS_MAX_MATCH; a family lacking one of the names is
 * left alone): a deleted LocalQueue's series are those with its name and
 * namespace. names and values [borrowed] (CTL_LV pairs). Returns the
 * number removed.
 */
size_t ctl_metrics_remove_match(ctl_metrics *m, enum ctl_metric_id id,
    const char *const *names, size_t nnames, const char *const *values,
    size_t nvalues);

/* Number of series a family holds (0 for a bad id). */
size_t ctl_metric_series_count(const ctl_metrics *m, enum ctl_metric_id id);

/* Static facts of a family (NULL / 0 for a bad id). */
const char *ctl_metric_name(enum ctl_metric_id id);
enum ctl_metric_type ctl_metric_type_of(enum ctl_metric_id id);

/*
 * Append the whole exposition (text format 0.0.4) to out [borrowed;
 * caller-initialised]: families sorted by name, families without series
 * omitted, series sorted by label values, each family's # HELP and # TYPE
 * once, histograms as cumulative _bucket{le=...} up to "+Inf", then _sum
 * and _count; ends with a newline (empty output when nothing is set).
 * CU_ENOMEM or CU_ETOOBIG (out's cap; out is then freed, curl's contract).
 */
CU_MUST_CHECK int ctl_metrics_render(
    ctl_metrics *m, cu_buf *out, cu_error *err);

/* The largest /metrics answer of m (ctl_metrics_opts.max_response). */
size_t ctl_metrics_max_response(const ctl_metrics *m);

/*
 * Serve GET /metrics from srv (metrics_serve.c) with Content-Type
 * CTL_METRICS_CONTENT_TYPE. An exposition over the answer's cap
 * (ctl_metrics_opts.max_response) is never sent cut short: the answer is a 500
 * whose text says so (and the log, once a minute). m [borrowed; must outlive
 * srv's serving]. Errors of ctl_httpd_route.
 */
CU_MUST_CHECK int ctl_metrics_mount(
    ctl_metrics *m, ctl_httpd *srv, cu_error *err);

/* ---- text-format helpers (also used by tests) ------------------------ */

/* Append s [borrowed] escaped for the text format: \\ and newline always,
 * and " too when label_value (HELP text keeps its quotes). */
CU_MUST_CHECK int ctl_prom_escape(cu_buf *out, const char *s, bool label_value);

#define CTL_PROM_FLOAT_LEN 32
/* Format v the way Prometheus' Go client does (strconv 'g', shortest
 * round-trip): "1", "0.25", "2.5e-05", "1e+06", "+Inf", "-Inf", "NaN". */
void ctl_prom_format_float(double v, char out[CTL_PROM_FLOAT_LEN]);

/* ---- process_* (controller/procmetrics.c) --------------------------- */

/* What /proc/self/stat says, in its units. */
struct ctl_proc_stat {
	uint64_t cpu_ticks;   /* utime + stime, clock ticks */
	uint64_t start_ticks; /* starttime: ticks after boot */
	uint64_t vsize;	      /* bytes */
	uint64_t rss_pages;   /* pages */
};

/* Parse the text [borrowed] of /proc/<pid>/stat (the command may hold
 * spaces and parentheses). CU_EINVAL when malformed. */
CU_MUST_CHECK int ctl_proc_parse_stat(
    const char *text, struct ctl_proc_stat *out);
/* The boot time (seconds since the epoch) of /proc/stat's text
 * [borrowed]. CU_ENOTFOUND without a btime line, CU_EINVAL. */
CU_MUST_CHECK int ctl_proc_parse_btime(const char *text, uint64_t *btime);
/* The soft "Max open files" of /proc/<pid>/limits' text [borrowed]
 * (+Inf when unlimited). CU_ENOTFOUND, CU_EINVAL. */
CU_MUST_CHECK int ctl_proc_parse_max_fds(const char *text, double *max);
/*
 * Append the process_* families (process_cpu_seconds_total,
 * process_max_fds, process_open_fds, process_resident_memory_bytes,
 * process_start_time_seconds, process_virtual_memory_bytes), sorted, as
 * client libraries export them on Linux, read from /proc/self now; a
 * family whose file cannot be read is left out. out [borrowed].
 * CU_ENOMEM / CU_ETOOBIG.
 */
CU_MUST_CHECK int ctl_proc_render(cu_buf *out);

#endif /* CU_CONTROLLER_METRICS_H */
