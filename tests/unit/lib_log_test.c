/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/lib_log_test.c - lib/log.c's structured lines
 * (cu_log_format): the JSON members a decision line carries, named and
 * shaped as controller-runtime's logger writes them (klog.KObj/KRef as
 * {"name", "namespace"}, a list of them as an array), escaping, and the
 * text form (key="value", refs as "ns/name").
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <string.h>

#include "lib/cu.h"

static json_t *parse(const char *line)
{
	json_error_t je;
	json_t *o;

	cr_assert(strlen(line) > 0 && line[strlen(line) - 1] == '\n',
	    "one line: %s", line);
	o = json_loads(line, 0, &je);
	cr_assert_not_null(o, "not JSON (%s): %s", je.text, line);
	return o;
}

Test(log, json_decision_line)
{
	const char *vns[] = {"team", "other"}, *vnames[] = {"low-1", "low-2"};
	const struct cu_log_field f[] = {
	    CU_LOGF_REF("workload", "team", "job-high-3f2a1"),
	    CU_LOGF_REF("clusterQueue", NULL, "cq"),
	    CU_LOGF_REF("localQueue", "team", "default"),
	    CU_LOGF_S("reason", "InClusterQueue"),
	    CU_LOGF_REFS("victims", vns, vnames, 2),
	    CU_LOGF_I("count", 42),
	};
	char line[2048];
	json_t *o, *v;

	cu_log_format(line, sizeof(line), true, "2026-01-01T00:00:00.000000Z",
	    CU_LOG_INFO, "cueue-controller", "Workload preempting", f,
	    sizeof(f) / sizeof(f[0]));
	o = parse(line);
	cr_assert_str_eq(json_string_value(json_object_get(o, "msg")),
	    "Workload preempting");
	cr_assert_str_eq(
	    json_string_value(json_object_get(o, "level")), "info");
	cr_assert_str_eq(json_string_value(json_object_get(o, "component")),
	    "cueue-controller");
	cr_assert_str_eq(json_string_value(json_object_get(o, "ts")),
	    "2026-01-01T00:00:00.000000Z");
	v = json_pack(
	    "{s:s, s:s}", "name", "job-high-3f2a1", "namespace", "team");
	cr_assert(json_equal(json_object_get(o, "workload"), v));
	json_decref(v);
	/* cluster-scoped: no namespace member (klog.KRef("", name)) */
	v = json_pack("{s:s}", "name", "cq");
	cr_assert(json_equal(json_object_get(o, "clusterQueue"), v));
	json_decref(v);
	v = json_pack("{s:s, s:s}", "name", "default", "namespace", "team");
	cr_assert(json_equal(json_object_get(o, "localQueue"), v));
	json_decref(v);
	cr_assert_str_eq(
	    json_string_value(json_object_get(o, "reason")), "InClusterQueue");
	v = json_pack("[{s:s, s:s}, {s:s, s:s}]", "name", "low-1", "namespace",
	    "team", "name", "low-2", "namespace", "other");
	cr_assert(json_equal(json_object_get(o, "victims"), v));
	json_decref(v);
	cr_assert_eq(json_integer_value(json_object_get(o, "count")), 42);
	json_decref(o);
}

Test(log, json_escapes_and_nulls)
{
	const struct cu_log_field f[] = {
	    CU_LOGF_S("message", "a \"quoted\"\nline\\"),
	    CU_LOGF_S("empty", NULL),
	    CU_LOGF_REFS("victims", NULL, NULL, 0),
	};
	char line[512];
	json_t *o;

	cu_log_format(line, sizeof(line), true, "t", CU_LOG_WARN, "c", "m\n", f,
	    sizeof(f) / sizeof(f[0]));
	cr_assert_eq(strchr(line, '\n'), line + strlen(line) - 1,
	    "a single line: %s", line);
	o = parse(line);
	cr_assert_str_eq(json_string_value(json_object_get(o, "message")),
	    "a \"quoted\"\nline\\");
	cr_assert_str_eq(json_string_value(json_object_get(o, "empty")), "");
	cr_assert_eq(json_array_size(json_object_get(o, "victims")), 0);
	cr_assert_str_eq(
	    json_string_value(json_object_get(o, "level")), "warn");
	json_decref(o);
}

Test(log, text_line)
{
	const char *vns[] = {"team"}, *vnames[] = {"low"};
	const struct cu_log_field f[] = {
	    CU_LOGF_REF("workload", "team", "w"),
	    CU_LOGF_REF("clusterQueue", "", "cq"),
	    CU_LOGF_S("reason", "Preempted"),
	    CU_LOGF_REFS("victims", vns, vnames, 1),
	    CU_LOGF_I("n", -3),
	};
	char line[512];

	cu_log_format(line, sizeof(line), false, "T", CU_LOG_INFO, "cueue",
	    "Workload preempting", f, sizeof(f) / sizeof(f[0]));
	cr_assert_str_eq(line,
	    "T info  cueue: Workload preempting workload=\"team/w\" "
	    "clusterQueue=\"cq\" reason=\"Preempted\" victims=[\"team/low\"] "
	    "n=-3\n");
}

/* A line longer than the buffer is cut, still one line. */
Test(log, bounded)
{
	char big[600], line[128];
	const struct cu_log_field f[] = {CU_LOGF_S("message", big)};
	size_t n;

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	n = cu_log_format(
	    line, sizeof(line), true, "t", CU_LOG_INFO, "c", "m", f, 1);
	cr_assert_eq(n, strlen(line));
	cr_assert(n < sizeof(line));
	cr_assert_eq(line[n - 1], '\n');
	cr_assert_eq(
	    cu_log_format(line, 1, true, "t", CU_LOG_INFO, "c", "m", f, 1), 0);
	cr_assert_eq(line[0], '\0');
}

/* A rate-limited site: burst lines per period, the rest counted and
 * reported once when the period ends. */
Test(log, limited_lines_burst_then_one_count_per_period)
{
	static const struct {
		cu_ns_t at_s;
		bool written;
		unsigned long ended; /* reported suppressed count */
	} steps[] = {
	    {1, true, 0},   /* the period starts */
	    {2, true, 0},   /* burst 2 */
	    {3, false, 0},  /* suppressed */
	    {4, false, 0},  /* suppressed */
	    {59, false, 0}, /* still the same period */
	    {61, true, 3},  /* a new period: 3 reported */
	    {62, true, 0},
	    {200, true, 0}, /* nothing suppressed: nothing to report */
	};
	struct cu_log_limit l = CU_LOG_LIMIT("test", 60, 2);
	unsigned long ended;
	size_t i;

	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		bool w =
		    cu_log_limit_take(&l, CU_S_TO_NS(steps[i].at_s), &ended);

		cr_expect_eq(w, steps[i].written, "step %zu", i);
		cr_expect_eq(ended, steps[i].ended, "step %zu", i);
	}
}

/* The flush writes a due summary once and starts a new period. */
Test(log, limits_flush_reports_due_summaries)
{
	static struct cu_log_limit l = CU_LOG_LIMIT("flush test", 1, 1);
	cu_ns_t t0 = cu_time_mono_ns();

	cu_log_set_level(CU_LOG_WARN);
	cu_log_limited(&l, CU_LOG_WARN, "one");
	cu_log_limited(&l, CU_LOG_WARN, "two");
	cu_log_limited(&l, CU_LOG_WARN, "three");
	cr_expect_eq(l.suppressed, 2);
	cr_expect_eq(cu_log_limits_flush(t0), 0, "not due yet");
	cr_expect_eq(cu_log_limits_flush(t0 + CU_S_TO_NS(2)), 1);
	cr_expect_eq(l.suppressed, 0);
	cr_expect_eq(cu_log_limits_flush(t0 + CU_S_TO_NS(4)), 0, "once");
	cu_log_limit_unlink(&l);
	cr_expect_eq(cu_log_limits_flush(t0 + CU_S_TO_NS(10)), 0);
}
