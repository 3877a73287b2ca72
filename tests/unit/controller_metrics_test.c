/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/controller_metrics_test.c - controller/metrics: golden
 * renderings in the Prometheus text format 0.0.4 (escaping, histogram
 * buckets, sort order, replica_role), series removal, the cardinality cap
 * and its dropped-series counter, misuse rejected, Go-compatible float
 * formatting, allocation-failure torture, and the full exposition parsed by
 * Debian's python3-prometheus-client.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "controller/metrics.h"

static ctl_metrics *new_registry(size_t max_series)
{
	struct ctl_metrics_opts opts = {.max_series = max_series};
	ctl_metrics *m = NULL;
	cu_error err;

	cr_assert_eq(ctl_metrics_new(&m, &opts, &err), CU_OK, "%s", err.msg);
	return m;
}

/* A registry without the build_info series (their labels vary with the
 * compiler), so that golden texts are stable. */
static ctl_metrics *bare_registry(size_t max_series)
{
	ctl_metrics *m = new_registry(max_series);

	cr_assert_eq(ctl_metrics_remove_label(m, "version", CUEUE_VERSION), 1);
	cr_assert_eq(ctl_metrics_remove_label(m, "go_version", "none"), 1);
	return m;
}

/* Render m [borrowed] into a string [owned: cu_free]. */
static char *render(ctl_metrics *m)
{
	cu_buf b;
	cu_error err;
	char *s;

	cu_buf_init(&b, 16 * 1024 * 1024);
	cr_assert_eq(ctl_metrics_render(m, &b, &err), CU_OK, "%s", err.msg);
	s = cu_buf_detach(&b, NULL);
	cr_assert_not_null(s);
	return s;
}

static void expect_render(ctl_metrics *m, const char *want)
{
	char *got = render(m);

	cr_expect_str_eq(
	    got, want, "--- got ---\n%s--- want ---\n%s", got, want);
	cu_free(got);
}

/* ---- golden texts ------------------------------------------------------ */

Test(ctl_metrics, counters_and_gauges_sorted_escaped_with_role)
{
	ctl_metrics *m = bare_registry(0);

	/* Inserted out of order: output is sorted by family, then labels. */
	cr_assert_eq(ctl_metric_set(m, CTL_M_PENDING_WORKLOADS,
			 CTL_LV("we\"ird\\q\nx", "inadmissible"), 0.5),
	    CU_OK);
	cr_assert_eq(ctl_metric_inc(m, CTL_M_ADMITTED_WORKLOADS_TOTAL,
			 CTL_LV("cq-b", "high")),
	    CU_OK);
	cr_assert_eq(ctl_metric_add(m, CTL_M_ADMITTED_WORKLOADS_TOTAL,
			 CTL_LV("cq-a", "high"), 3),
	    CU_OK);
	cr_assert_eq(ctl_metric_set(m, CTL_M_PENDING_WORKLOADS,
			 CTL_LV("cq-a", "active"), 2),
	    CU_OK);
	cr_assert_eq(ctl_metric_gauge_add(m, CTL_M_PENDING_WORKLOADS,
			 CTL_LV("cq-a", "active"), -1),
	    CU_OK);
	cr_assert_eq(ctl_metric_inc(
			 m, CTL_M_PENDING_WORKLOADS, CTL_LV("cq-a", "active")),
	    CU_OK);
	cr_assert_eq(ctl_metric_add(m, CTL_M_CUEUE_API_REQUESTS_TOTAL,
			 CTL_LV("patch", "409"), 7),
	    CU_OK);
	ctl_metrics_set_role(m, CTL_ROLE_LEADER);
	expect_render(m,
	    "# HELP cueue_api_requests_total API server requests by 'verb' and "
	    "HTTP status 'code' (\"0\" when no response arrived).\n"
	    "# TYPE cueue_api_requests_total counter\n"
	    "cueue_api_requests_total{verb=\"patch\",code=\"409\"} 7\n"
	    "# HELP kueue_admitted_workloads_total The total number of "
	    "admitted workloads per 'cluster_queue'.\n"
	    "# TYPE kueue_admitted_workloads_total counter\n"
	    "kueue_admitted_workloads_total{cluster_queue=\"cq-a\","
	    "priority_class=\"high\",replica_role=\"leader\"} 3\n"
	    "kueue_admitted_workloads_total{cluster_queue=\"cq-b\","
	    "priority_class=\"high\",replica_role=\"leader\"} 1\n"
	    "# HELP kueue_pending_workloads The number of pending workloads, "
	    "per 'cluster_queue' and 'status'.\\n'status' is \"active\" (in "
	    "the admission queue) or \"inadmissible\" (an admission attempt "
	    "failed; retried when the cluster changes).\n"
	    "# TYPE kueue_pending_workloads gauge\n"
	    "kueue_pending_workloads{cluster_queue=\"cq-a\",status=\"active\","
	    "replica_role=\"leader\"} 2\n"
	    "kueue_pending_workloads{cluster_queue=\"we\\\"ird\\\\q\\nx\","
	    "status=\"inadmissible\",replica_role=\"leader\"} 0.5\n");
	ctl_metrics_set_role(m, CTL_ROLE_FOLLOWER);
	{
		char *s = render(m);

		cr_expect_not_null(strstr(s, "replica_role=\"follower\"} 3\n"));
		cr_expect_null(strstr(s, "leader"));
		cu_free(s);
	}
	ctl_metrics_free(m);
}

Test(ctl_metrics, histogram_buckets_are_cumulative_to_inf_then_sum_count)
{
	ctl_metrics *m = bare_registry(0);
	static const double obs[] = {0.5, 0.0001, 4, 0.25};
	size_t i;

	for (i = 0; i < 4; i++)
		cr_assert_eq(
		    ctl_metric_observe(
			m, CTL_M_CUEUE_STORE_COMMIT_SECONDS, CTL_LV0, obs[i]),
		    CU_OK);
	/* Kueue's buckets: 1, 2.5, 5, ... 40960 for admission wait. */
	cr_assert_eq(ctl_metric_observe(m, CTL_M_ADMISSION_WAIT_TIME_SECONDS,
			 CTL_LV("cq", ""), 1e9),
	    CU_OK);
	cr_assert_eq(ctl_metric_observe(m, CTL_M_ADMISSION_WAIT_TIME_SECONDS,
			 CTL_LV("cq", ""), 2.5),
	    CU_OK);
	expect_render(m,
	    "# HELP cueue_store_commit_seconds Duration of the ledger's "
	    "per-loop-turn SQLite commit.\n"
	    "# TYPE cueue_store_commit_seconds histogram\n"
	    "cueue_store_commit_seconds_bucket{le=\"0.0001\"} 1\n"
	    "cueue_store_commit_seconds_bucket{le=\"0.0002\"} 1\n"
	    "cueue_store_commit_seconds_bucket{le=\"0.0004\"} 1\n"
	    "cueue_store_commit_seconds_bucket{le=\"0.0008\"} 1\n"
	    "cueue_store_commit_seconds_bucket{le=\"0.0016\"} 1\n"
	    "cueue_store_commit_seconds_bucket{le=\"0.0032\"} 1\n"
	    "cueue_store_commit_seconds_bucket{le=\"0.0064\"} 1\n"
	    "cueue_store_commit_seconds_bucket{le=\"0.0128\"} 1\n"
	    "cueue_store_commit_seconds_bucket{le=\"0.0256\"} 1\n"
	    "cueue_store_commit_seconds_bucket{le=\"0.0512\"} 1\n"
	    "cueue_store_commit_seconds_bucket{le=\"0.1024\"} 1\n"
	    "cueue_store_commit_seconds_bucket{le=\"0.2048\"} 1\n"
	    "cueue_store_commit_seconds_bucket{le=\"0.4096\"} 2\n"
	    "cueue_store_commit_seconds_bucket{le=\"0.8192\"} 3\n"
	    "cueue_store_commit_seconds_bucket{le=\"1.6384\"} 3\n"
	    "cueue_store_commit_seconds_bucket{le=\"3.2768\"} 3\n"
	    "cueue_store_commit_seconds_bucket{le=\"+Inf\"} 4\n"
	    "cueue_store_commit_seconds_sum 4.7501\n"
	    "cueue_store_commit_seconds_count 4\n"
	    "# HELP kueue_admission_wait_time_seconds The time from a "
	    "workload's creation or requeue until admission, per "
	    "'cluster_queue'.\n"
	    "# TYPE kueue_admission_wait_time_seconds histogram\n"
	    "kueue_admission_wait_time_seconds_bucket{cluster_queue=\"cq\","
	    "priority_class=\"\",replica_role=\"standalone\",le=\"1\"} 0\n"
	    "kueue_admission_wait_time_seconds_bucket{cluster_queue=\"cq\","
	    "priority_class=\"\",replica_role=\"standalone\",le=\"2.5\"} 1\n"
	    "kueue_admission_wait_time_seconds_bucket{cluster_queue=\"cq\","
	    "priority_class=\"\",replica_role=\"standalone\",le=\"5\"} 1\n"
	    "kueue_admission_wait_time_seconds_bucket{cluster_queue=\"cq\","
	    "priority_class=\"\",replica_role=\"standalone\",le=\"10\"} 1\n"
	    "kueue_admission_wait_time_seconds_bucket{cluster_queue=\"cq\","
	    "priority_class=\"\",replica_role=\"standalone\",le=\"20\"} 1\n"
	    "kueue_admission_wait_time_seconds_bucket{cluster_queue=\"cq\","
	    "priority_class=\"\",replica_role=\"standalone\",le=\"40\"} 1\n"
	    "kueue_admission_wait_time_seconds_bucket{cluster_queue=\"cq\","
	    "priority_class=\"\",replica_role=\"standalone\",le=\"80\"} 1\n"
	    "kueue_admission_wait_time_seconds_bucket{cluster_queue=\"cq\","
	    "priority_class=\"\",replica_role=\"standalone\",le=\"160\"} 1\n"
	    "kueue_admission_wait_time_seconds_bucket{cluster_queue=\"cq\","
	    "priority_class=\"\",replica_role=\"standalone\",le=\"320\"} 1\n"
	    "kueue_admission_wait_time_seconds_bucket{cluster_queue=\"cq\","
	    "priority_class=\"\",replica_role=\"standalone\",le=\"640\"} 1\n"
	    "kueue_admission_wait_time_seconds_bucket{cluster_queue=\"cq\","
	    "priority_class=\"\",replica_role=\"standalone\",le=\"1280\"} 1\n"
	    "kueue_admission_wait_time_seconds_bucket{cluster_queue=\"cq\","
	    "priority_class=\"\",replica_role=\"standalone\",le=\"2560\"} 1\n"
	    "kueue_admission_wait_time_seconds_bucket{cluster_queue=\"cq\","
	    "priority_class=\"\",replica_role=\"standalone\",le=\"5120\"} 1\n"
	    "kueue_admission_wait_time_seconds_bucket{cluster_queue=\"cq\","
	    "priority_class=\"\",replica_role=\"standalone\",le=\"10240\"} 1\n"
	    "kueue_admission_wait_time_seconds_bucket{cluster_queue=\"cq\","
	    "priority_class=\"\",replica_role=\"standalone\",le=\"20480\"} 1\n"
	    "kueue_admission_wait_time_seconds_bucket{cluster_queue=\"cq\","
	    "priority_class=\"\",replica_role=\"standalone\",le=\"40960\"} 1\n"
	    "kueue_admission_wait_time_seconds_bucket{cluster_queue=\"cq\","
	    "priority_class=\"\",replica_role=\"standalone\",le=\"+Inf\"} 2\n"
	    "kueue_admission_wait_time_seconds_sum{cluster_queue=\"cq\","
	    "priority_class=\"\",replica_role=\"standalone\"} "
	    "1.0000000025e+09\n"
	    "kueue_admission_wait_time_seconds_count{cluster_queue=\"cq\","
	    "priority_class=\"\",replica_role=\"standalone\"} 2\n");
	ctl_metrics_free(m);
}

Test(ctl_metrics, quota_reserved_wait_uses_kueue_14_buckets)
{
	ctl_metrics *m = bare_registry(0);
	char *s;

	cr_assert_eq(
	    ctl_metric_observe(m, CTL_M_QUOTA_RESERVED_WAIT_TIME_SECONDS,
		CTL_LV("cq", "p"), 3),
	    CU_OK);
	s = render(m);
	cr_expect_not_null(strstr(s, "le=\"10240\"} 1\n"));
	cr_expect_null(strstr(s, "le=\"20480\""));
	cr_expect_not_null(strstr(s, "le=\"+Inf\"} 1\n"));
	cu_free(s);
	ctl_metrics_free(m);
}

Test(ctl_metrics, empty_registry_renders_nothing_and_build_info_by_default)
{
	ctl_metrics *m = new_registry(0);
	char *s = render(m);

	cr_expect_not_null(
	    strstr(s, "# TYPE cueue_build_info gauge\n"
		      "cueue_build_info{version=\"" CUEUE_VERSION "\"} 1\n"));
	cr_expect_not_null(
	    strstr(s, "kueue_build_info{git_version=\"" CUEUE_VERSION
		      "\",git_commit=\"unknown\""));
	cr_expect_null(strstr(s, "replica_role"),
	    "build_info carries no replica_role, as in Kueue");
	cr_expect_eq(s[strlen(s) - 1], '\n');
	cu_free(s);
	ctl_metrics_free(m);

	m = bare_registry(0);
	expect_render(m, "");
	ctl_metrics_free(m);
}

/* ---- removal and cardinality ------------------------------------------ */

Test(ctl_metrics, deleted_cluster_queue_series_go_away_everywhere)
{
	ctl_metrics *m = bare_registry(0);
	double v;
	char *s;

	cr_assert_eq(ctl_metric_set(m, CTL_M_PENDING_WORKLOADS,
			 CTL_LV("cq-a", "active"), 1),
	    CU_OK);
	cr_assert_eq(ctl_metric_set(m, CTL_M_PENDING_WORKLOADS,
			 CTL_LV("cq-a", "inadmissible"), 1),
	    CU_OK);
	cr_assert_eq(ctl_metric_set(m, CTL_M_PENDING_WORKLOADS,
			 CTL_LV("cq-b", "active"), 4),
	    CU_OK);
	cr_assert_eq(ctl_metric_observe(m, CTL_M_ADMISSION_WAIT_TIME_SECONDS,
			 CTL_LV("cq-a", ""), 1),
	    CU_OK);
	cr_assert_eq(ctl_metric_set(m, CTL_M_CLUSTER_QUEUE_RESOURCE_USAGE,
			 CTL_LV("team", "cq-a", "default", "cpu"), 3),
	    CU_OK);
	cr_assert_eq(ctl_metric_inc(m, CTL_M_PREEMPTED_WORKLOADS_TOTAL,
			 CTL_LV("cq-a", "InClusterQueue")),
	    CU_OK);

	cr_expect_eq(ctl_metrics_remove_label(m, "cluster_queue", "cq-a"), 4);
	cr_expect_eq(ctl_metrics_remove_label(m, "cluster_queue", "cq-a"), 0);
	cr_expect_eq(ctl_metric_series_count(m, CTL_M_PENDING_WORKLOADS), 1);
	cr_expect_eq(ctl_metric_value(&v, m, CTL_M_PENDING_WORKLOADS,
			 CTL_LV("cq-b", "active")),
	    CU_OK);
	cr_expect_eq(v, 4);
	s = render(m);
	cr_expect_null(strstr(s, "{cluster_queue=\"cq-a\""));
	cr_expect_null(strstr(s, "kueue_admission_wait_time_seconds"),
	    "a family without series is not rendered");
	cr_expect_not_null(strstr(s, "preempting_cluster_queue=\"cq-a\""),
	    "a different label name is not matched");
	cu_free(s);
	cr_expect_eq(
	    ctl_metrics_remove_label(m, "preempting_cluster_queue", "cq-a"), 1);

	/* One series. */
	cr_expect_eq(ctl_metric_remove(
			 m, CTL_M_PENDING_WORKLOADS, CTL_LV("cq-b", "active")),
	    CU_OK);
	cr_expect_eq(ctl_metric_remove(
			 m, CTL_M_PENDING_WORKLOADS, CTL_LV("cq-b", "active")),
	    CU_ENOTFOUND);
	cr_expect_eq(ctl_metric_value(&v, m, CTL_M_PENDING_WORKLOADS,
			 CTL_LV("cq-b", "active")),
	    CU_ENOTFOUND);
	expect_render(m, "");
	ctl_metrics_free(m);
}

Test(ctl_metrics, series_cap_drops_and_counts_new_series_only)
{
	ctl_metrics *m = bare_registry(2);
	double v;
	char *s;

	cr_assert_eq(
	    ctl_metric_inc(m, CTL_M_ADMITTED_WORKLOADS_TOTAL, CTL_LV("a", "")),
	    CU_OK);
	cr_assert_eq(
	    ctl_metric_inc(m, CTL_M_ADMITTED_WORKLOADS_TOTAL, CTL_LV("b", "")),
	    CU_OK);
	cr_expect_eq(
	    ctl_metric_inc(m, CTL_M_ADMITTED_WORKLOADS_TOTAL, CTL_LV("c", "")),
	    CU_EQUOTA);
	cr_expect_eq(
	    ctl_metric_inc(m, CTL_M_ADMITTED_WORKLOADS_TOTAL, CTL_LV("d", "")),
	    CU_EQUOTA);
	/* Existing series still update; other families have their own cap. */
	cr_expect_eq(
	    ctl_metric_inc(m, CTL_M_ADMITTED_WORKLOADS_TOTAL, CTL_LV("a", "")),
	    CU_OK);
	cr_expect_eq(ctl_metric_set(
			 m, CTL_M_PENDING_WORKLOADS, CTL_LV("c", "active"), 1),
	    CU_OK);
	cr_expect_eq(
	    ctl_metric_series_count(m, CTL_M_ADMITTED_WORKLOADS_TOTAL), 2);
	cr_expect_eq(
	    ctl_metric_value(&v, m, CTL_M_CUEUE_METRICS_DROPPED_SERIES_TOTAL,
		CTL_LV("kueue_admitted_workloads_total")),
	    CU_OK);
	cr_expect_eq(v, 2);
	s = render(m);
	cr_expect_not_null(strstr(s,
	    "cueue_metrics_dropped_series_total{family=\"kueue_admitted_"
	    "workloads_total\"} 2\n"));
	cu_free(s);
	/* Removal frees room. */
	cr_expect_eq(ctl_metrics_remove_label(m, "cluster_queue", "b"), 1);
	cr_expect_eq(
	    ctl_metric_inc(m, CTL_M_ADMITTED_WORKLOADS_TOTAL, CTL_LV("c", "")),
	    CU_OK);
	ctl_metrics_free(m);
}

Test(ctl_metrics, many_series_grow_the_table_and_stay_sorted)
{
	ctl_metrics *m = bare_registry(0);
	char name[32], *s, *p, prev[64] = "";
	size_t i, n = 0;

	for (i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "cq-%04zu", (i * 7919) % 1000);
		cr_assert_eq(ctl_metric_set(m, CTL_M_RESERVING_ACTIVE_WORKLOADS,
				 CTL_LV(name), (double)i),
		    CU_OK);
	}
	cr_expect_eq(
	    ctl_metric_series_count(m, CTL_M_RESERVING_ACTIVE_WORKLOADS), 1000);
	s = render(m);
	for (p = strstr(s, "cluster_queue=\""); p != NULL;
	     p = strstr(p + 1, "cluster_queue=\"")) {
		char cur[64];

		snprintf(cur, sizeof(cur), "%.7s", p + 15);
		cr_assert(strcmp(prev, cur) < 0, "%s after %s", cur, prev);
		memcpy(prev, cur, sizeof(cur));
		n++;
	}
	cr_expect_eq(n, 1000);
	cu_free(s);
	ctl_metrics_free(m);
}

/* ---- misuse ---------------------------------------------------------- */

Test(ctl_metrics, misuse_is_rejected_without_creating_series)
{
	ctl_metrics *m = bare_registry(0);
	char long_value[CTL_METRICS_MAX_LABEL_VALUE + 2];
	double v;

	memset(long_value, 'x', sizeof(long_value) - 1);
	long_value[sizeof(long_value) - 1] = '\0';
	cr_expect_eq(ctl_metric_inc(
			 m, CTL_M_ADMITTED_WORKLOADS_TOTAL, CTL_LV("only-one")),
	    CU_EINVAL);
	cr_expect_eq(ctl_metric_inc(m, CTL_M_ADMITTED_WORKLOADS_TOTAL,
			 CTL_LV("a", "b", "c")),
	    CU_EINVAL);
	cr_expect_eq(ctl_metric_set(m, CTL_M_ADMITTED_WORKLOADS_TOTAL,
			 CTL_LV("a", "b"), 1),
	    CU_EINVAL, "set on a counter");
	cr_expect_eq(
	    ctl_metric_add(m, CTL_M_PENDING_WORKLOADS, CTL_LV("a", "b"), 1),
	    CU_EINVAL, "add (uint64) on a gauge");
	cr_expect_eq(
	    ctl_metric_observe(m, CTL_M_PENDING_WORKLOADS, CTL_LV("a", "b"), 1),
	    CU_EINVAL, "observe on a gauge");
	cr_expect_eq(ctl_metric_inc(m, CTL_M_CUEUE_LOOP_LAG_SECONDS, CTL_LV0),
	    CU_EINVAL, "inc on a histogram");
	cr_expect_eq(ctl_metric_inc(m, CTL_M__COUNT, CTL_LV0), CU_EINVAL);
	cr_expect_eq(ctl_metric_inc(m, CTL_M_ADMITTED_WORKLOADS_TOTAL,
			 CTL_LV("bad\xff utf8", "b")),
	    CU_EINVAL);
	cr_expect_eq(ctl_metric_inc(m, CTL_M_ADMITTED_WORKLOADS_TOTAL,
			 CTL_LV("\xc0\xaf", "b")),
	    CU_EINVAL, "overlong UTF-8");
	cr_expect_eq(ctl_metric_inc(
			 m, CTL_M_ADMITTED_WORKLOADS_TOTAL, CTL_LV(NULL, "b")),
	    CU_EINVAL);
	cr_expect_eq(ctl_metric_inc(m, CTL_M_ADMITTED_WORKLOADS_TOTAL,
			 CTL_LV(long_value, "b")),
	    CU_EINVAL);
	cr_expect_eq(ctl_metric_inc(m, CTL_M_ADMITTED_WORKLOADS_TOTAL,
			 CTL_LV("ünïcode ✓", "b")),
	    CU_OK, "valid UTF-8 is fine");
	cr_expect_eq(
	    ctl_metric_value(&v, m, CTL_M_PENDING_WORKLOADS, CTL_LV("a")),
	    CU_EINVAL);
	cr_expect_eq(ctl_metric_series_count(m, CTL_M_PENDING_WORKLOADS), 0);
	cr_expect_eq(ctl_metric_series_count(m, CTL_M__COUNT), 0);
	cr_expect_null(ctl_metric_name(CTL_M__COUNT));
	cr_expect_str_eq(ctl_metric_name(CTL_M_CLUSTER_QUEUE_STATUS),
	    "kueue_cluster_queue_status");
	cr_expect_eq(
	    ctl_metric_type_of(CTL_M_ADMISSION_ATTEMPT_DURATION_SECONDS),
	    CTL_METRIC_HISTOGRAM);
	ctl_metrics_free(m);
}

Test(ctl_metrics, special_gauge_values_render_as_prometheus_spells_them)
{
	ctl_metrics *m = bare_registry(0);
	char *s;

	cr_assert_eq(ctl_metric_set(m, CTL_M_CLUSTER_QUEUE_BORROWING_LIMIT,
			 CTL_LV("", "cq", "f", "cpu"), INFINITY),
	    CU_OK);
	cr_assert_eq(ctl_metric_set(m, CTL_M_CLUSTER_QUEUE_LENDING_LIMIT,
			 CTL_LV("", "cq", "f", "cpu"), NAN),
	    CU_OK);
	s = render(m);
	cr_expect_not_null(strstr(s, "resource=\"cpu\",replica_role="
				     "\"standalone\"} +Inf\n"));
	cr_expect_not_null(strstr(s, "\"} NaN\n"));
	cu_free(s);
	ctl_metrics_free(m);
}

/* ---- text helpers ---------------------------------------------------- */

Test(ctl_metrics, floats_format_like_go_strconv_g_shortest)
{
	static const struct {
		double v;
		const char *want;
	} cases[] = {
	    {1, "1"},
	    {0.25, "0.25"},
	    {2.5, "2.5"},
	    {-2.5, "-2.5"},
	    {0.1, "0.1"},
	    {0.0001, "0.0001"},
	    {2.5e-05, "2.5e-05"},
	    {10240, "10240"},
	    {100000, "100000"},
	    {1e6, "1e+06"},
	    {1234567, "1.234567e+06"},
	    {1.0 / 3.0, "0.3333333333333333"},
	    {0.1 + 0.2, "0.30000000000000004"},
	    {1.7976931348623157e308, "1.7976931348623157e+308"},
	    {5e-324, "5e-324"},
	    {0.0, "0"},
	};
	char out[CTL_PROM_FLOAT_LEN];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ctl_prom_format_float(cases[i].v, out);
		cr_expect_str_eq(out, cases[i].want);
	}
	ctl_prom_format_float(INFINITY, out);
	cr_expect_str_eq(out, "+Inf");
	ctl_prom_format_float(-INFINITY, out);
	cr_expect_str_eq(out, "-Inf");
	ctl_prom_format_float(NAN, out);
	cr_expect_str_eq(out, "NaN");
}

Test(ctl_metrics, escaping_rules_differ_for_help_and_label_values)
{
	cu_buf b;

	cu_buf_init(&b, 1024);
	cr_assert_eq(ctl_prom_escape(&b, "a\\b\"c\nd", true), CU_OK);
	cr_expect_str_eq(b.ptr, "a\\\\b\\\"c\\nd");
	cu_buf_reset(&b);
	cr_assert_eq(ctl_prom_escape(&b, "a\\b\"c\nd", false), CU_OK);
	cr_expect_str_eq(b.ptr, "a\\\\b\"c\\nd", "HELP keeps quotes");
	cu_buf_reset(&b);
	cr_assert_eq(ctl_prom_escape(&b, "plain", true), CU_OK);
	cr_expect_str_eq(b.ptr, "plain");
	cu_buf_dispose(&b);
}

/* ---- robustness ------------------------------------------------------ */

static int scenario(void)
{
	ctl_metrics *m = NULL;
	cu_buf b;
	int rc;

	if ((rc = ctl_metrics_new(&m, NULL, NULL)) != CU_OK)
		return rc;
	(void)ctl_metric_inc(
	    m, CTL_M_ADMITTED_WORKLOADS_TOTAL, CTL_LV("cq", "p"));
	(void)ctl_metric_observe(
	    m, CTL_M_ADMISSION_WAIT_TIME_SECONDS, CTL_LV("cq", "p"), 3);
	(void)ctl_metric_set(
	    m, CTL_M_PENDING_WORKLOADS, CTL_LV("cq", "active"), 2);
	cu_buf_init(&b, 1 << 20);
	rc = ctl_metrics_render(m, &b, NULL);
	cu_buf_dispose(&b);
	(void)ctl_metrics_remove_label(m, "cluster_queue", "cq");
	ctl_metrics_free(m);
	return rc;
}

Test(ctl_metrics, every_allocation_failure_is_clean)
{
	uint64_t before = cu_mem_calls(), total, n;

	cr_assert_eq(scenario(), CU_OK);
	total = cu_mem_calls() - before;
	for (n = 1; n <= total; n++) {
		int rc;

		cu_mem_fail_after(n, false);
		rc = scenario();
		cu_mem_fail_after(0, false);
		cr_expect(
		    rc == CU_OK || rc == CU_ENOMEM, "n=%" PRIu64 ": %d", n, rc);
	}
}

Test(ctl_metrics, render_over_buffer_cap_reports_too_big)
{
	ctl_metrics *m = new_registry(0);
	cu_buf b;
	cu_error err;

	cu_buf_init(&b, 64);
	cr_expect_eq(ctl_metrics_render(m, &b, &err), CU_ETOOBIG);
	cr_expect_null(b.ptr, "the buffer is freed on failure");
	cu_buf_dispose(&b);
	ctl_metrics_free(m);
}

/* GET /metrics over its cap (injected small here; 64 MiB by default):
 * a 500 whose text names the cap, never the part of the exposition that
 * fitted; under the cap, the whole exposition (the same registry). */
static void scrape(ctl_metrics *m, struct ctl_http_response *r)
{
	ctl_httpd *h;
	struct ctl_httpd_opts o;

	memset(&o, 0, sizeof(o));
	o.name = "metrics";
	o.listen = "127.0.0.1:0";
	cr_assert_eq(ctl_httpd_new(&h, NULL, &o, NULL), CU_OK);
	cr_assert_eq(ctl_metrics_mount(m, h, NULL), CU_OK);
	cr_assert_eq(
	    ctl_httpd_dispatch(h, "GET", "/metrics", NULL, NULL, 0, r, NULL),
	    CU_OK);
	ctl_httpd_free(h);
}

static ctl_metrics *capped_registry(size_t max_response)
{
	struct ctl_metrics_opts opts = {.max_response = max_response};
	ctl_metrics *m = NULL;
	char cq[32];
	int i;

	cr_assert_eq(ctl_metrics_new(&m, &opts, NULL), CU_OK);
	for (i = 0; i < 200; i++) {
		snprintf(cq, sizeof(cq), "cq-%03d", i);
		cr_assert_eq(ctl_metric_set(m, CTL_M_PENDING_WORKLOADS,
				 CTL_LV(cq, "active"), (double)i),
		    CU_OK);
	}
	return m;
}

Test(ctl_metrics, over_cap_scrape_is_a_clear_500_never_a_cut_exposition)
{
	ctl_metrics *m = capped_registry(0);
	struct ctl_http_response r;
	size_t whole;

	cr_assert_eq(ctl_metrics_max_response(m), CTL_HTTPD_MAX_RESPONSE);
	scrape(m, &r);
	cr_assert_eq(r.status, 200);
	whole = r.body.len;
	cr_assert_gt(whole, 4096);
	cr_assert_not_null(strstr(r.body.ptr, "cluster_queue=\"cq-199\""));
	cu_buf_dispose(&r.body);
	ctl_metrics_free(m);

	/* The same registry under a cap it does not fit in. */
	m = capped_registry(4096);
	cr_assert_eq(ctl_metrics_max_response(m), 4096);
	cu_log_set_level(CU_LOG_ERROR + 1); /* the refusal is logged */
	scrape(m, &r);
	cr_assert_eq(r.status, 500);
	cr_assert_not_null(r.body.ptr);
	cr_assert_not_null(
	    strstr(r.body.ptr, "over its cap of 4096 bytes"), "%s", r.body.ptr);
	cr_assert_null(strstr(r.body.ptr, "# TYPE"), "no exposition at all");
	cr_assert_null(strstr(r.body.ptr, "kueue_"));
	cu_buf_dispose(&r.body);
	ctl_metrics_free(m);

	/* A cap above the server's is the server's. */
	m = capped_registry(CTL_HTTPD_MAX_RESPONSE * 2);
	cr_assert_eq(ctl_metrics_max_response(m), CTL_HTTPD_MAX_RESPONSE);
	ctl_metrics_free(m);
}

/* ---- a real parser ------------------------------------------------------ */

/* Every family with a series, label values that need escaping. */
static void fill_all(ctl_metrics *m)
{
	static const char *const vals[] = {
	    "q\"uo\\te\nnl", "v1", "v2", "v3", "v4", "v5", "v6", "v7"};
	int id;

	cu_log_set_level(CU_LOG_ERROR); /* the probing below warns */
	for (id = 0; id < CTL_M__COUNT; id++) {
		size_t nl = 0;
		double v;

		/* Find the label count by probing with 0..8 values. */
		while (
		    nl <= 8 && ctl_metric_value(&v, m, (enum ctl_metric_id)id,
				   vals, nl) == CU_EINVAL)
			nl++;
		cr_assert(
		    nl <= 8, "%s", ctl_metric_name((enum ctl_metric_id)id));
		switch (ctl_metric_type_of((enum ctl_metric_id)id)) {
		case CTL_METRIC_COUNTER:
			cr_assert_eq(ctl_metric_add(m, (enum ctl_metric_id)id,
					 vals, nl, 42),
			    CU_OK);
			break;
		case CTL_METRIC_GAUGE:
			cr_assert_eq(ctl_metric_set(m, (enum ctl_metric_id)id,
					 vals, nl, 0.125),
			    CU_OK);
			break;
		case CTL_METRIC_HISTOGRAM:
			cr_assert_eq(ctl_metric_observe(m,
					 (enum ctl_metric_id)id, vals, nl, 0.3),
			    CU_OK);
			cr_assert_eq(ctl_metric_observe(m,
					 (enum ctl_metric_id)id, vals, nl, 7e4),
			    CU_OK);
			break;
		}
	}
}

static const char parser_py[] =
    "import sys\n"
    "from prometheus_client.parser import text_string_to_metric_families\n"
    "text = open(sys.argv[1], encoding='utf-8').read()\n"
    "assert text.endswith('\\n')\n"
    "fams = list(text_string_to_metric_families(text))\n"
    "# the parser drops a counter's _total: Kueue's gauge\n"
    "# kueue_finished_workloads and counter kueue_finished_workloads_total\n"
    "# share a name there, not a type\n"
    "names = [(f.name, f.type) for f in fams]\n"
    "assert len(names) == len(set(names)), 'family twice'\n"
    "n = 0\n"
    "for f in fams:\n"
    "    for s in f.samples:\n"
    "        n += 1\n"
    "        for k, v in s.labels.items():\n"
    "            if k in ('cluster_queue', 'verb', 'name', 'result',\n"
    "                     'family', 'preempting_cluster_queue',\n"
    "                     'git_version', 'version', 'cohort', 'resource'):\n"
    "                pass\n"
    "        if f.type == 'histogram' and s.name.endswith('_count'):\n"
    "            assert s.value == 2, s\n"
    "    if f.name == 'kueue_pending_workloads':\n"
    "        s = f.samples[0]\n"
    "        assert s.labels['cluster_queue'] == 'q\"uo\\\\te\\nnl', s\n"
    "        assert s.labels['replica_role'] == 'standalone', s\n"
    "        assert s.value == 0.125, s\n"
    "print(len(fams), n)\n";

Test(ctl_metrics, python_prometheus_client_parses_the_full_exposition)
{
	char dir[] = "/tmp/cueue-metrics-XXXXXX";
	char text_path[64], py_path[64], cmd[256], line[128] = "";
	ctl_metrics *m = new_registry(0);
	char *s;
	FILE *f;
	int fams = 0, samples = 0, st;

	if (access("/usr/bin/python3", X_OK) != 0)
		cr_skip_test("no /usr/bin/python3");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(text_path, sizeof(text_path), "%s/metrics.txt", dir);
	snprintf(py_path, sizeof(py_path), "%s/parse.py", dir);
	fill_all(m);
	s = render(m);
	f = fopen(text_path, "w");
	cr_assert_not_null(f);
	fputs(s, f);
	fclose(f);
	f = fopen(py_path, "w");
	cr_assert_not_null(f);
	fputs(parser_py, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 %s %s 2>&1", py_path,
	    text_path);
	f = popen(cmd, "r");
	cr_assert_not_null(f);
	if (fgets(line, sizeof(line), f) == NULL)
		line[0] = '\0';
	{
		char rest[4096];
		size_t n = fread(rest, 1, sizeof(rest) - 1, f);

		rest[n] = '\0';
		st = pclose(f);
		cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		    "parser failed: %s%s", line, rest);
	}
	cr_assert_eq(sscanf(line, "%d %d", &fams, &samples), 2, "%s", line);
	cr_expect_eq(fams, CTL_M__COUNT, "every family parsed (%s)", line);
	cr_expect_gt(samples, CTL_M__COUNT);
	cu_free(s);
	ctl_metrics_free(m);
	unlink(text_path);
	unlink(py_path);
	rmdir(dir);
}
