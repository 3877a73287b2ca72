/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/controller_procmetrics_test.c - controller/procmetrics.c: the
 * /proc parsers behind the process_* families (a command with spaces and
 * parentheses, malformed lines, unlimited file limits), the rendered
 * families of this very process, and controller/metrics.c's
 * ctl_metrics_remove_match (one family or all, several labels).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/metrics.h"

/* proc(5): 52 fields; utime 14 = 1500, stime 15 = 500, starttime 22 =
 * 123456, vsize 23 = 987654321, rss 24 = 2048. */
#define STAT_TAIL                                                              \
	" S 1 2 3 4 5 6 7 8 9 10 1500 500 0 0 20 0 4 0 123456 987654321 2048 " \
	"18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n"

Test(procmetrics, stat_fields)
{
	struct ctl_proc_stat st;

	cr_assert_eq(
	    ctl_proc_parse_stat("4242 (cueue-controller)" STAT_TAIL, &st),
	    CU_OK);
	cr_expect_eq(st.cpu_ticks, 2000);
	cr_expect_eq(st.start_ticks, 123456);
	cr_expect_eq(st.vsize, 987654321ull);
	cr_expect_eq(st.rss_pages, 2048);
}

Test(procmetrics, stat_command_with_spaces_and_parens)
{
	struct ctl_proc_stat st;

	cr_assert_eq(
	    ctl_proc_parse_stat("7 (a) b (c) d)" STAT_TAIL, &st), CU_OK);
	cr_expect_eq(st.cpu_ticks, 2000);
	cr_expect_eq(st.rss_pages, 2048);
}

Test(procmetrics, stat_malformed)
{
	struct ctl_proc_stat st;

	cr_expect_eq(ctl_proc_parse_stat("no parenthesis", &st), CU_EINVAL);
	cr_expect_eq(ctl_proc_parse_stat("1 (x) S 1 2 3\n", &st), CU_EINVAL);
	cr_expect_eq(
	    ctl_proc_parse_stat("1 (x) S 1 2 3 4 5 6 7 8 9 10 x5 500 0 0 20 "
				"0 4 0 1 2 3\n",
		&st),
	    CU_EINVAL);
	cr_expect_eq(ctl_proc_parse_stat(NULL, &st), CU_EINVAL);
}

Test(procmetrics, btime)
{
	uint64_t b = 0;

	cr_assert_eq(ctl_proc_parse_btime("cpu  1 2 3\nintr 5\nbtime "
					  "1700000000\nprocesses 9\n",
			 &b),
	    CU_OK);
	cr_expect_eq(b, 1700000000ull);
	cr_expect_eq(ctl_proc_parse_btime("cpu 1\n", &b), CU_ENOTFOUND);
	cr_expect_eq(ctl_proc_parse_btime("btime x\n", &b), CU_EINVAL);
}

Test(procmetrics, max_fds)
{
	double m = 0;

	cr_assert_eq(
	    ctl_proc_parse_max_fds(
		"Limit                     Soft Limit           Hard "
		"Limit           Units\nMax open files            1024  "
		"               524288               files\n",
		&m),
	    CU_OK);
	cr_expect_eq(m, 1024.0);
	cr_assert_eq(ctl_proc_parse_max_fds(
			 "Max open files            unlimited            "
			 "unlimited            files\n",
			 &m),
	    CU_OK);
	cr_expect(isinf(m));
	cr_expect_eq(
	    ctl_proc_parse_max_fds("Max processes 5\n", &m), CU_ENOTFOUND);
}

/* This process's own families: all six, in name order, each with a
 * HELP and TYPE line, and plausible values. */
Test(procmetrics, render_self)
{
	static const char *const names[] = {"process_cpu_seconds_total",
	    "process_max_fds", "process_open_fds",
	    "process_resident_memory_bytes", "process_start_time_seconds",
	    "process_virtual_memory_bytes"};
	cu_buf b;
	const char *at = NULL;
	char *s, want[128];
	size_t i;

	cu_buf_init(&b, 1 << 20);
	cr_assert_eq(ctl_proc_render(&b), CU_OK);
	s = cu_buf_detach(&b, NULL);
	cr_assert_not_null(s);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *p;

		snprintf(want, sizeof(want), "# TYPE %s %s\n%s ", names[i],
		    i == 0 ? "counter" : "gauge", names[i]);
		p = strstr(s, want);
		cr_assert_not_null(p, "%s missing in:\n%s", names[i], s);
		cr_expect(at == NULL || p > at, "%s out of order", names[i]);
		at = p;
		if (i >= 2) /* fds, memory, start time: above zero */
			cr_expect_gt(strtod(p + strlen(want), NULL), 0.0, "%s",
			    names[i]);
	}
	cu_free(s);
}

Test(procmetrics, remove_match)
{
	ctl_metrics *m = NULL;
	cu_error err;
	double v;

	cr_assert_eq(ctl_metrics_new(&m, NULL, &err), CU_OK);
	cr_assert_eq(ctl_metric_set(m, CTL_M_LOCAL_QUEUE_STATUS,
			 CTL_LV("lq", "ns1", "True"), 1),
	    CU_OK);
	cr_assert_eq(ctl_metric_set(m, CTL_M_LOCAL_QUEUE_STATUS,
			 CTL_LV("lq", "ns2", "True"), 1),
	    CU_OK);
	cr_assert_eq(
	    ctl_metric_inc(m, CTL_M_LOCAL_QUEUE_ADMITTED_WORKLOADS_TOTAL,
		CTL_LV("lq", "ns1", "")),
	    CU_OK);
	cr_assert_eq(
	    ctl_metric_set(m, CTL_M_COHORT_INFO, CTL_LV("lq", "ns1", "ns1"), 1),
	    CU_OK);
	/* Both labels must match; a family lacking one is left alone. */
	cr_expect_eq(ctl_metrics_remove_match(m, CTL_M__COUNT,
			 CTL_LV("name", "namespace"), CTL_LV("lq", "ns1")),
	    2);
	cr_expect_eq(ctl_metric_value(&v, m, CTL_M_LOCAL_QUEUE_STATUS,
			 CTL_LV("lq", "ns2", "True")),
	    CU_OK);
	cr_expect_eq(ctl_metric_value(
			 &v, m, CTL_M_COHORT_INFO, CTL_LV("lq", "ns1", "ns1")),
	    CU_OK);
	/* One family only. */
	cr_expect_eq(ctl_metrics_remove_match(m, CTL_M_LOCAL_QUEUE_STATUS,
			 CTL_LV("namespace"), CTL_LV("ns2")),
	    1);
	cr_expect_eq(ctl_metric_series_count(m, CTL_M_LOCAL_QUEUE_STATUS), 0);
	/* Mismatched or empty lists remove nothing. */
	cr_expect_eq(ctl_metrics_remove_match(m, CTL_M__COUNT,
			 CTL_LV("cohort", "parent_cohort"), CTL_LV("lq")),
	    0);
	cr_expect_eq(ctl_metric_series_count(m, CTL_M_COHORT_INFO), 1);
	ctl_metrics_free(m);
}
