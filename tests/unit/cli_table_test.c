/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/cli_table_test.c - kubectl-cueue's output: the tabwriter
 * layout (kueuectl's own expected listings reproduced byte for byte),
 * HumanDuration at every boundary, the listings' cells (status, position,
 * execution time, owners, NAMESPACE with -A, ClusterQueue and LocalQueue
 * counts, Pods), the local pending order (priority, eviction time, UID,
 * what is not pending) and the YAML writer.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "api/json.h"
#include "api/yaml.h"
#include "cli/cli.h"

static json_t *J(const char *text)
{
	json_error_t je;
	json_t *v = json_loads(text, 0, &je);

	cr_assert_not_null(v, "%s: %s", text, je.text);
	return v;
}

/* 2024-01-01T03:00:00Z, the "now" of these tests */
static int64_t now_ns(void)
{
	int64_t t;

	cr_assert_eq(cu_time_parse("2024-01-01T03:00:00Z", &t, NULL), CU_OK);
	return t;
}

Test(cli_table, tabwriter_layout)
{
	static const char *const hdr[] = {"NAME", "A", "LONGER HEADER"};
	static const char *const r1[] = {"x", "", "1"};
	static const char *const r2[] = {"ünïcode", "bb", NULL};
	cli_table t;
	char *s;

	cr_assert_eq(cli_table_init(&t, hdr, 3, NULL), CU_OK);
	cr_assert_eq(cli_table_add(&t, r1, NULL), CU_OK);
	cr_assert_eq(cli_table_add(&t, r2, NULL), CU_OK);
	s = cli_table_render(&t, false);
	/* widths: max(cell + 3, 6); the last column is not padded;
	 * characters, not bytes */
	cr_assert_str_eq(s, "NAME      A     LONGER HEADER\n"
			    "x               1\n"
			    "ünïcode   bb    \n");
	cu_free(s);
	s = cli_table_render(&t, true);
	cr_assert_str_eq(s, "x               1\nünïcode   bb    \n");
	cu_free(s);
	cli_table_dispose(&t);
}

Test(cli_table, human_duration_boundaries)
{
	static const struct {
		int64_t secs;
		const char *want;
	} t[] = {{-2, "<invalid>"}, {-1, "0s"}, {0, "0s"}, {59, "59s"},
	    {119, "119s"}, {120, "2m"}, {150, "2m30s"}, {599, "9m59s"},
	    {600, "10m"}, {3600, "60m"}, {7200, "120m"}, {10799, "179m"},
	    {10800, "3h"}, {12600, "3h30m"}, {28799, "7h59m"}, {28800, "8h"},
	    {172799, "47h"}, {172800, "2d"}, {190800, "2d5h"},
	    {691199, "7d23h"}, {691200, "8d"}, {63071999, "729d"},
	    {63072000, "2y"}, {63158400, "2y1d"}, {252288000, "8y"}};
	char out[CLI_DURATION_MAX];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		cli_human_duration(t[i].secs * CU_NS_PER_S, out);
		cr_assert_str_eq(
		    out, t[i].want, "%lld s", (long long)t[i].secs);
	}
}

/* A Workload: created at c, conditions given as JSON text. */
static const char WLS[] =
    "["
    "{\"metadata\":{\"name\":\"wl1\",\"namespace\":\"ns1\","
    "\"creationTimestamp\":\"2024-01-01T02:00:00Z\",\"ownerReferences\":["
    "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"name\":\"j1\","
    "\"uid\":\"u\"}]},\"spec\":{\"queueName\":\"lq1\"}},"
    "{\"metadata\":{\"name\":\"wl2\",\"namespace\":\"ns2\","
    "\"creationTimestamp\":\"2024-01-01T01:00:00Z\",\"ownerReferences\":["
    "{\"name\":\"j2\"},{\"name\":\"j2\"},{\"name\":\"k2\"}]},"
    "\"spec\":{\"queueName\":\"lq2\"},\"status\":{\"admission\":"
    "{\"clusterQueue\":\"cq2\"},\"conditions\":["
    "{\"type\":\"QuotaReserved\",\"status\":\"True\","
    "\"lastTransitionTime\":\"2024-01-01T02:00:00Z\"},"
    "{\"type\":\"Admitted\",\"status\":\"True\","
    "\"lastTransitionTime\":\"2024-01-01T02:00:00Z\"}]}},"
    "{\"metadata\":{\"name\":\"wl3\",\"namespace\":\"ns1\","
    "\"creationTimestamp\":\"2024-01-01T00:00:00Z\"},"
    "\"spec\":{\"queueName\":\"lq3\"},\"status\":{\"conditions\":["
    "{\"type\":\"Admitted\",\"status\":\"True\","
    "\"lastTransitionTime\":\"2024-01-01T01:00:00Z\"},"
    "{\"type\":\"Finished\",\"status\":\"True\","
    "\"lastTransitionTime\":\"2024-01-01T02:00:00Z\"}]}},"
    "{\"metadata\":{\"name\":\"wl4\",\"namespace\":\"ns1\"},"
    "\"spec\":{\"queueName\":\"lq4\"},\"status\":{\"conditions\":["
    "{\"type\":\"QuotaReserved\",\"status\":\"True\"},"
    "{\"type\":\"Admitted\",\"status\":\"False\"}]}}"
    "]";

Test(cli_table, workload_status_as_kueue)
{
	json_t *w = J(WLS);

	cr_assert_str_eq(cli_workload_status(json_array_get(w, 0)), "pending");
	cr_assert_str_eq(cli_workload_status(json_array_get(w, 1)), "admitted");
	cr_assert_str_eq(cli_workload_status(json_array_get(w, 2)), "finished");
	cr_assert_str_eq(
	    cli_workload_status(json_array_get(w, 3)), "quotaReserved");
	cr_assert_eq(cli_workload_status_bit(json_array_get(w, 3)),
	    CLI_ST_QUOTA_RESERVED);
	json_decref(w);
}

Test(cli_table, workloads_as_kueuectl)
{
	json_t *w = J(WLS);
	struct cli_wl_extra ex[4] = {{"cq1", "job.batch", 0}, {"cq2", NULL, -1},
	    {NULL, NULL, -1}, {NULL, NULL, -1}};
	char *s;

	cr_assert_eq(
	    cli_render_workloads(w, ex, false, now_ns(), &s, NULL), CU_OK);
	cr_assert_str_eq(s,
	    "NAME   JOB TYPE    JOB NAME   LOCALQUEUE   CLUSTERQUEUE   "
	    "STATUS          POSITION IN QUEUE   EXEC TIME   AGE\n"
	    "wl1    job.batch   j1         lq1          cq1            "
	    "PENDING         0                               60m\n"
	    "wl2                j2, k2     lq2          cq2            "
	    "ADMITTED                            60m         120m\n"
	    "wl3                           lq3                         "
	    "FINISHED                            60m         3h\n"
	    "wl4                           lq4                         "
	    "QUOTARESERVED                                   <unknown>\n");
	cu_free(s);
	json_decref(w);
}

Test(cli_table, kueuectl_own_expected_listing)
{
	/* list_workload_test.go's "should print workload list with
	 * localqueue filter", reproduced */
	json_t *w = J("[{\"metadata\":{\"name\":\"wl1\",\"namespace\":\"ns\","
		      "\"creationTimestamp\":\"2024-01-01T02:00:00Z\","
		      "\"ownerReferences\":[{\"name\":\"j1\"}]},"
		      "\"spec\":{\"queueName\":\"lq1\"}}]");
	struct cli_wl_extra ex[1] = {{"cq1", NULL, -1}};
	char *s;

	cr_assert_eq(
	    cli_render_workloads(w, ex, false, now_ns(), &s, NULL), CU_OK);
	cr_assert_str_eq(s,
	    "NAME   JOB TYPE   JOB NAME   LOCALQUEUE   CLUSTERQUEUE   STATUS "
	    "   POSITION IN QUEUE   EXEC TIME   AGE\n"
	    "wl1               j1         lq1          cq1            PENDING "
	    "                                  60m\n");
	cu_free(s);
	json_decref(w);
}

Test(cli_table, all_namespaces_adds_namespace_first)
{
	json_t *w = J(WLS);
	struct cli_wl_extra ex[4] = {{"cq1", NULL, 3}, {NULL, NULL, -1},
	    {NULL, NULL, -1}, {NULL, NULL, -1}};
	char *s;

	cr_assert_eq(
	    cli_render_workloads(w, ex, true, now_ns(), &s, NULL), CU_OK);
	cr_assert(strncmp(s, "NAMESPACE   NAME   JOB TYPE", 27) == 0, "%s", s);
	cr_assert_not_null(strstr(s, "\nns1         wl1 "), "%s", s);
	cr_assert_not_null(strstr(s, "\nns2         wl2 "), "%s", s);
	cu_free(s);
	json_decref(w);
}

Test(cli_table, queues)
{
	json_t *cqs = J("[{\"metadata\":{\"name\":\"cq1\","
			"\"creationTimestamp\":\"2024-01-01T02:59:00Z\"},"
			"\"spec\":{\"cohortName\":\"co\"},\"status\":{"
			"\"pendingWorkloads\":3,\"admittedWorkloads\":12,"
			"\"conditions\":[{\"type\":\"Active\",\"status\":"
			"\"True\"}]}},"
			"{\"metadata\":{\"name\":\"cq2\","
			"\"creationTimestamp\":\"2024-01-01T02:59:00Z\"},"
			"\"spec\":{\"cohort\":\"old\"}}]");
	json_t *lqs = J("[{\"metadata\":{\"name\":\"lq1\",\"namespace\":"
			"\"team-a\",\"creationTimestamp\":"
			"\"2024-01-01T02:59:59Z\"},\"spec\":{\"clusterQueue\":"
			"\"cq1\"},\"status\":{\"pendingWorkloads\":1,"
			"\"admittedWorkloads\":2}}]");
	char *s;

	cr_assert_eq(cli_render_clusterqueues(cqs, now_ns(), &s, NULL), CU_OK);
	cr_assert_str_eq(s,
	    "NAME   COHORT   PENDING WORKLOADS   ADMITTED WORKLOADS   ACTIVE   "
	    "AGE\n"
	    "cq1    co       3                   12                   true     "
	    "60s\n"
	    "cq2    old      0                   0                    false    "
	    "60s\n");
	cu_free(s);
	cr_assert_eq(
	    cli_render_localqueues(lqs, true, now_ns(), &s, NULL), CU_OK);
	cr_assert_str_eq(s,
	    "NAMESPACE   NAME   CLUSTERQUEUE   PENDING WORKLOADS   ADMITTED "
	    "WORKLOADS   AGE\n"
	    "team-a      lq1    cq1            1                   2         "
	    "           1s\n");
	cu_free(s);
	json_decref(cqs);
	json_decref(lqs);
}

Test(cli_table, resourceflavors)
{
	json_t *rfs = J("[{\"metadata\":{\"name\":\"f1\",\"creationTimestamp\":"
			"\"2024-01-01T02:00:00Z\"},\"spec\":{\"nodeLabels\":"
			"{\"zone\":\"b\",\"arch\":\"arm\"}}},"
			"{\"metadata\":{\"name\":\"default-flavor\","
			"\"creationTimestamp\":\"2024-01-01T02:00:00Z\"}}]");
	char *s;

	cr_assert_eq(
	    cli_render_resourceflavors(rfs, now_ns(), &s, NULL), CU_OK);
	cr_assert_str_eq(s, "NAME             NODE LABELS        AGE\n"
			    "f1               arch=arm, zone=b   60m\n"
			    "default-flavor                      60m\n");
	cu_free(s);
	json_decref(rfs);
}

Test(cli_table, pods_as_kubectl_get)
{
	json_t *pods =
	    J("[{\"metadata\":{\"name\":\"p1\",\"creationTimestamp\":"
	      "\"2024-01-01T02:58:00Z\"},\"spec\":{\"containers\":[{},{}]},"
	      "\"status\":{\"phase\":\"Running\",\"containerStatuses\":["
	      "{\"ready\":true,\"restartCount\":2},{\"ready\":false,"
	      "\"restartCount\":1,\"state\":{\"waiting\":{\"reason\":"
	      "\"CrashLoopBackOff\"}}}]}},"
	      "{\"metadata\":{\"name\":\"p2\",\"creationTimestamp\":"
	      "\"2024-01-01T02:58:00Z\",\"deletionTimestamp\":"
	      "\"2024-01-01T02:59:00Z\"},\"spec\":{\"containers\":[{}]},"
	      "\"status\":{\"phase\":\"Running\"}},"
	      "{\"metadata\":{\"name\":\"p3\",\"creationTimestamp\":"
	      "\"2024-01-01T02:58:00Z\"},\"spec\":{\"containers\":[{}]},"
	      "\"status\":{\"phase\":\"Pending\"}}]");
	char *s;

	cr_assert_eq(
	    cli_render_pods(pods, false, false, now_ns(), &s, NULL), CU_OK);
	cr_assert_str_eq(s,
	    "NAME   READY   STATUS             RESTARTS   AGE\n"
	    "p1     1/2     CrashLoopBackOff   3          2m\n"
	    "p2     0/1     Terminating        0          2m\n"
	    "p3     0/1     Pending            0          2m\n");
	cu_free(s);
	cr_assert_eq(
	    cli_render_pods(pods, true, true, now_ns(), &s, NULL), CU_OK);
	cr_assert(
	    strncmp(s,
		"NAMESPACE   NAME   READY   STATUS             RESTARTS   "
		"AGE   IP       NODE     NOMINATED NODE   READINESS "
		"GATES\n",
		107) == 0,
	    "%s", s);
	cr_assert_not_null(strstr(s, "   <none>   <none>   <none>           "
				     "<none>\n"),
	    "%s", s);
	cu_free(s);
	json_decref(pods);
}

/* ---- the pending order ---------------------------------------------- */

static const char LQS[] =
    "[{\"metadata\":{\"name\":\"lq\",\"namespace\":\"a\"},\"spec\":"
    "{\"clusterQueue\":\"cq\"}},"
    "{\"metadata\":{\"name\":\"lq\",\"namespace\":\"b\"},\"spec\":"
    "{\"clusterQueue\":\"cq\"}},"
    "{\"metadata\":{\"name\":\"other\",\"namespace\":\"a\"},\"spec\":"
    "{\"clusterQueue\":\"cq-other\"}}]";

#define PWL(ns, name, uid, lq, prio, created, extra)                           \
	"{\"metadata\":{\"namespace\":\"" ns "\",\"name\":\"" name             \
	"\",\"uid\":\"" uid "\",\"creationTimestamp\":\"" created "\"},"       \
	"\"spec\":{\"queueName\":\"" lq "\",\"priority\":" #prio extra "}"

#define EVICTED(reason, at)                                                    \
	"},\"status\":{\"conditions\":[{\"type\":\"Evicted\",\"status\":"      \
	"\"True\",\"reason\":\"" reason "\",\"lastTransitionTime\":\"" at      \
	"\"}]}"
#define COND_TRUE(type)                                                        \
	"},\"status\":{\"conditions\":[{\"type\":\"" type                      \
	"\",\"status\":\"True\"}]}"

Test(cli_table, pending_order_as_kueue)
{
	json_t *lqs = J(LQS);
	/* order: priority, then queue timestamp, then UID; evicted by
	 * PodsReadyTimeout: its eviction time, not creation, orders it;
	 * preempted: its creation time; the last five are not pending in
	 * cq */
	static const char *const items[] = {
	    PWL("a", "late-low", "u1", "lq", 0, "2024-01-01T00:00:09Z", "}"),
	    PWL("b", "early-low", "u2", "lq", 0, "2024-01-01T00:00:01Z", "}"),
	    PWL("a", "high", "u3", "lq", 10, "2024-01-01T00:00:05Z", "}"),
	    PWL("a", "tie-b", "u5", "lq", 0, "2024-01-01T00:00:03Z", "}"),
	    PWL("a", "tie-a", "u4", "lq", 0, "2024-01-01T00:00:03Z", "}"),
	    PWL("b", "evicted", "u6", "lq", 0, "2024-01-01T00:00:00Z",
		EVICTED("PodsReadyTimeout", "2024-01-01T00:00:08Z")),
	    PWL("b", "preempted", "u12", "lq", 0, "2024-01-01T00:00:02Z",
		EVICTED("Preempted", "2024-01-01T00:00:10Z")),
	    PWL("a", "reserved", "u7", "lq", 99, "2024-01-01T00:00:00Z",
		COND_TRUE("QuotaReserved")),
	    PWL("a", "finished", "u8", "lq", 99, "2024-01-01T00:00:00Z",
		COND_TRUE("Finished")),
	    PWL("a", "inactive", "u9", "lq", 99, "2024-01-01T00:00:00Z",
		",\"active\":false}"),
	    PWL("a", "elsewhere", "u10", "other", 99, "2024-01-01T00:00:00Z",
		"}"),
	    PWL("c", "no-lq", "u11", "lq", 99, "2024-01-01T00:00:00Z", "}"),
	};
	json_t *wls = json_array();

	for (size_t k = 0; k < sizeof(items) / sizeof(items[0]); k++)
		cr_assert_eq(json_array_append_new(wls, J(items[k])), 0);
	static const struct {
		const char *name;
		long cq, lq;
	} want[] = {{"high", 0, 0}, {"early-low", 1, 0}, {"preempted", 2, 1},
	    {"tie-a", 3, 1}, {"tie-b", 4, 2}, {"evicted", 5, 2},
	    {"late-low", 6, 3}};
	struct cli_pending *p;
	size_t n;
	char *s;
	json_t *sum;

	cr_assert_eq(cli_pending_order(wls, lqs, "cq", &p, &n, NULL), CU_OK);
	cr_assert_eq(n, 7);
	for (size_t i = 0; i < n; i++) {
		cr_assert_str_eq(p[i].name, want[i].name, "position %zu", i);
		cr_assert_eq(p[i].pos_cq, want[i].cq, "%s", p[i].name);
		cr_assert_eq(p[i].pos_lq, want[i].lq, "%s", p[i].name);
	}
	cr_assert_eq(cli_render_pending(p, 2, now_ns(), &s, NULL), CU_OK);
	cr_assert_str_eq(s,
	    "POSITION IN CLUSTERQUEUE   POSITION IN LOCALQUEUE   NAMESPACE   "
	    "NAME        LOCALQUEUE   PRIORITY   AGE\n"
	    "0                          0                        a           "
	    "high        lq           10         179m\n"
	    "1                          0                        b           "
	    "early-low   lq           0          179m\n");
	cu_free(s);
	cr_assert_eq(cli_pending_json(p, n, &sum, NULL), CU_OK);
	cr_assert_str_eq(json_string_value(json_object_get(sum, "kind")),
	    "PendingWorkloadsSummary");
	cr_assert_eq(json_array_size(json_object_get(sum, "items")), 7);
	{
		json_t *it = json_array_get(json_object_get(sum, "items"), 5);

		cr_assert_str_eq(json_string_value(json_object_get(
				     json_object_get(it, "metadata"), "name")),
		    "evicted");
		cr_assert_eq(json_integer_value(
				 json_object_get(it, "positionInClusterQueue")),
		    5);
		cr_assert_eq(json_integer_value(
				 json_object_get(it, "positionInLocalQueue")),
		    2);
	}
	/* read back as the visibility API's answer: the same entries */
	{
		struct cli_pending *q;
		size_t m;

		cr_assert_eq(cli_pending_from_visibility(
				 json_object_get(sum, "items"), &q, &m, NULL),
		    CU_OK);
		cr_assert_eq(m, n);
		for (size_t i = 0; i < m; i++) {
			cr_assert_str_eq(q[i].name, p[i].name);
			cr_assert_str_eq(q[i].namespace_, p[i].namespace_);
			cr_assert_str_eq(q[i].local_queue, p[i].local_queue);
			cr_assert_eq(q[i].priority, p[i].priority);
			cr_assert_eq(q[i].pos_cq, p[i].pos_cq);
			cr_assert_eq(q[i].pos_lq, p[i].pos_lq);
		}
		cu_free(q);
	}
	json_decref(sum);
	cu_free(p);
	cr_assert_eq(cli_pending_order(wls, lqs, "none", &p, &n, NULL), CU_OK);
	cr_assert_eq(n, 0);
	cr_assert_null(p);
	json_decref(wls);
	json_decref(lqs);
}

/* ---- YAML ----------------------------------------------------------- */

Test(cli_table, yaml_layout_and_round_trip)
{
	json_t *v = J("{\"apiVersion\":\"v1\",\"items\":[{\"metadata\":"
		      "{\"name\":\"a\",\"labels\":{\"x/y\":\"true\"}},"
		      "\"spec\":{\"n\":3,\"r\":1.5,\"b\":false,\"z\":null,"
		      "\"e\":{},\"l\":[],\"s\":[\"1\",\"- a\",\"a: b\","
		      "\"\",\"x\\ny\",\"no\",\"0x10\",\"  lead\","
		      "\"plain text\",\"ünï\"],\"nested\":[[1,2],"
		      "{\"k\":[3]}]}}],\"kind\":\"List\"}");
	cu_buf b;
	json_t *back;

	cu_buf_init(&b, 1 << 20);
	cr_assert_eq(cli_yaml_dump(v, &b), CU_OK);
	cr_assert_not_null(strstr(b.ptr, "apiVersion: v1\nitems:\n- metadata:\n"
					 "    labels:\n      x/y: \"true\"\n"
					 "    name: a\n"),
	    "%s", b.ptr);
	cr_assert_not_null(
	    strstr(b.ptr, "    s:\n    - \"1\"\n    - \"- a\"\n"), "%s", b.ptr);
	cr_assert_not_null(strstr(b.ptr, "    - plain text\n"), "%s", b.ptr);
	cr_assert(strstr(b.ptr, "kind: List\n") != NULL);
	/* what the YAML says is what the JSON said */
	cr_assert_eq(api_yaml_load(&back, NULL, b.ptr, b.len, NULL, NULL),
	    CU_OK, "%s", b.ptr);
	cr_assert(json_equal(back, v), "%s", b.ptr);
	json_decref(back);
	json_decref(v);
	cu_buf_dispose(&b);
}
