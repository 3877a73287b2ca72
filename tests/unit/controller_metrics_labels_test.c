/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/controller_metrics_labels_test.c - Kueue's custom metric
 * labels in the registry (ctl_metrics_set_custom): which families get
 * which kinds (ClusterQueue labels on ClusterQueue families, LocalQueue
 * ones on kueue_local_queue_*, Cohort ones on kueue_cohort_*, none on the
 * others), their order after the family's own labels, values resolved
 * per update from the object (label or annotation), "" when absent, the
 * untracked marker, and callers still passing only the family's labels.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "controller/metrics.h"

static const char *resolve(void *payload, enum ctl_metric_object kind,
    const char *ns, const char *name, const char *key, bool annotation)
{
	(void)payload;
	if (kind == CTL_MOBJ_CLUSTER_QUEUE && strcmp(name, "cq-a") == 0 &&
	    strcmp(key, "team") == 0 && !annotation)
		return "red";
	if (kind == CTL_MOBJ_LOCAL_QUEUE && ns != NULL &&
	    strcmp(ns, "ns1") == 0 && strcmp(name, "lq") == 0 &&
	    strcmp(key, "example.com/cost") == 0 && annotation)
		return "gold";
	if (kind == CTL_MOBJ_COHORT && strcmp(name, "co") == 0 &&
	    strcmp(key, "org") == 0)
		return "r&d";
	return NULL;
}

static char *render(ctl_metrics *m)
{
	cu_buf out;
	cu_error err;

	cu_buf_init(&out, 1 << 22);
	cr_assert_eq(ctl_metrics_render(m, &out, &err), CU_OK, "%s", err.msg);
	return out.ptr;
}

Test(ctl_metrics_labels, families_get_their_kinds)
{
	static const char *const tracked[] = {"gold", "silver"};
	static const char *const tracked_cq[] = {"blue"};
	const struct ctl_metric_custom cl[] = {
	    {"team", CTL_MOBJ_CLUSTER_QUEUE, "team", false, NULL, 0},
	    {"cost", CTL_MOBJ_LOCAL_QUEUE, "example.com/cost", true, tracked,
		2},
	    {"org", CTL_MOBJ_COHORT, "org", false, NULL, 0},
	    {"tier", CTL_MOBJ_CLUSTER_QUEUE, "team", false, tracked_cq, 1},
	};
	ctl_metrics *m;
	cu_error err;
	double v;
	char *text;

	cr_assert_eq(ctl_metrics_new(&m, NULL, &err), CU_OK);
	cr_assert_eq(
	    ctl_metrics_set_custom(m, cl, 4, resolve, NULL, &err), CU_OK);
	cr_assert_eq(ctl_metric_inc(m, CTL_M_ADMITTED_WORKLOADS_TOTAL,
			 CTL_LV("cq-a", "high")),
	    CU_OK);
	cr_assert_eq(ctl_metric_inc(
			 m, CTL_M_ADMITTED_WORKLOADS_TOTAL, CTL_LV("cq-b", "")),
	    CU_OK);
	cr_assert_eq(ctl_metric_set(m, CTL_M_LOCAL_QUEUE_PENDING_WORKLOADS,
			 CTL_LV("lq", "ns1", "active"), 3),
	    CU_OK);
	cr_assert_eq(
	    ctl_metric_set(m, CTL_M_COHORT_WEIGHTED_SHARE, CTL_LV("co"), 2),
	    CU_OK);
	cr_assert_eq(ctl_metric_inc(
			 m, CTL_M_ADMISSION_ATTEMPTS_TOTAL, CTL_LV("success")),
	    CU_OK);
	cr_assert_eq(ctl_metric_value(&v, m, CTL_M_ADMITTED_WORKLOADS_TOTAL,
			 CTL_LV("cq-a", "high")),
	    CU_OK);
	cr_assert_float_eq(v, 1, 1e-9);
	text = render(m);
	cr_assert(strstr(text,
		      "kueue_admitted_workloads_total{cluster_queue=\"cq-a\","
		      "priority_class=\"high\",custom_team=\"red\","
		      "custom_tier=\"kueue.x-k8s.io/_UNTRACKED_VALUE_\","
		      "replica_role=\"standalone\"} 1") != NULL,
	    "%s", text);
	cr_assert(strstr(text,
		      "kueue_admitted_workloads_total{cluster_queue=\"cq-b\","
		      "priority_class=\"\",custom_team=\"\",custom_tier="
		      "\"kueue.x-k8s.io/_UNTRACKED_VALUE_\"") != NULL,
	    "%s", text);
	cr_assert(
	    strstr(text, "kueue_local_queue_pending_workloads{name=\"lq\","
			 "namespace=\"ns1\",status=\"active\",custom_cost="
			 "\"gold\",replica_role") != NULL,
	    "%s", text);
	cr_assert(strstr(text, "kueue_cohort_weighted_share{cohort=\"co\","
			       "custom_org=\"r&d\"") != NULL,
	    "%s", text);
	cr_assert(strstr(text, "kueue_admission_attempts_total{result="
			       "\"success\",replica_role") != NULL,
	    "no custom labels there: %s", text);
	cu_free(text);
	cr_assert_eq(ctl_metrics_remove_label(m, "cluster_queue", "cq-a"), 1);
	ctl_metrics_free(m);
}

/* Workload-sourced labels go on Kueue's five families (the ClusterQueue's
 * admitted active and pending Workloads, the LocalQueue's admitted active
 * ones, admissions and admission wait time), after the queue's own custom
 * labels, with the caller's values (tracked values applied, "" and
 * unlisted ones untracked); on no other family. */
Test(ctl_metrics_labels, workload_labels_split_admitted_active)
{
	static const char *const kinds[] = {"inference", "training"};
	const struct ctl_metric_custom cl[] = {
	    {"team", CTL_MOBJ_CLUSTER_QUEUE, "team", false, NULL, 0},
	    {"cost", CTL_MOBJ_LOCAL_QUEUE, "example.com/cost", true, NULL, 0},
	    {"wtype", CTL_MOBJ_WORKLOAD, "company.com/type", false, kinds, 2},
	};
	const char *const inf[] = {"inference"};
	const char *const other[] = {"batch"};
	const char *const tr[] = {"training"};
	ctl_metrics *m;
	cu_error err;
	char *text;

	cr_assert_eq(ctl_metrics_new(&m, NULL, &err), CU_OK);
	cr_assert_eq(
	    ctl_metrics_set_custom(m, cl, 3, resolve, NULL, &err), CU_OK);
	cr_expect_eq(
	    ctl_metrics_workload_labels(m, CTL_M_ADMITTED_ACTIVE_WORKLOADS), 1);
	cr_expect_eq(
	    ctl_metrics_workload_labels(m, CTL_M_PENDING_WORKLOADS), 1);
	cr_expect_eq(ctl_metrics_workload_labels(
			 m, CTL_M_LOCAL_QUEUE_ADMITTED_ACTIVE_WORKLOADS),
	    1);
	cr_expect_eq(ctl_metrics_workload_labels(
			 m, CTL_M_LOCAL_QUEUE_ADMITTED_WORKLOADS_TOTAL),
	    1);
	cr_expect_eq(ctl_metrics_workload_labels(
			 m, CTL_M_LOCAL_QUEUE_ADMISSION_WAIT_TIME_SECONDS),
	    1);
	cr_expect_eq(
	    ctl_metrics_workload_labels(m, CTL_M_ADMITTED_WORKLOADS_TOTAL), 0);
	cr_expect_eq(
	    ctl_metrics_workload_labels(m, CTL_M_LOCAL_QUEUE_PENDING_WORKLOADS),
	    0);
	cr_assert_eq(ctl_metric_set_wl(m, CTL_M_ADMITTED_ACTIVE_WORKLOADS,
			 CTL_LV("cq-a"), inf, 2),
	    CU_OK);
	cr_assert_eq(ctl_metric_set_wl(m, CTL_M_ADMITTED_ACTIVE_WORKLOADS,
			 CTL_LV("cq-a"), other, 1),
	    CU_OK);
	cr_assert_eq(ctl_metric_set_wl(m, CTL_M_PENDING_WORKLOADS,
			 CTL_LV("cq-a", "active"), tr, 3),
	    CU_OK);
	cr_assert_eq(
	    ctl_metric_inc_wl(m, CTL_M_LOCAL_QUEUE_ADMITTED_WORKLOADS_TOTAL,
		CTL_LV("lq", "ns1", ""), inf),
	    CU_OK);
	cr_assert_eq(ctl_metric_observe_wl(m,
			 CTL_M_LOCAL_QUEUE_ADMISSION_WAIT_TIME_SECONDS,
			 CTL_LV("lq", "ns1", ""), tr, 0.5),
	    CU_OK);
	cr_assert_eq(ctl_metric_set(m, CTL_M_RESERVING_ACTIVE_WORKLOADS,
			 CTL_LV("cq-a"), 4),
	    CU_OK);
	text = render(m);
	cr_expect_not_null(strstr(text,
	    "kueue_admitted_active_workloads{cluster_queue=\"cq-a\","
	    "custom_team=\"red\",custom_wtype=\"inference\","
	    "replica_role=\"standalone\"} 2\n"));
	cr_expect_not_null(strstr(text,
	    "kueue_admitted_active_workloads{cluster_queue=\"cq-a\","
	    "custom_team=\"red\",custom_wtype=\"kueue.x-k8s.io/"
	    "_UNTRACKED_VALUE_\",replica_role=\"standalone\"} 1\n"));
	cr_expect_not_null(strstr(text,
	    "kueue_pending_workloads{cluster_queue=\"cq-a\",status=\"active\","
	    "custom_team=\"red\",custom_wtype=\"training\","
	    "replica_role=\"standalone\"} 3\n"));
	cr_expect_not_null(strstr(text,
	    "kueue_local_queue_admitted_workloads_total{name=\"lq\","
	    "namespace=\"ns1\",priority_class=\"\",custom_cost=\"gold\","
	    "custom_wtype=\"inference\",replica_role=\"standalone\"} 1\n"));
	cr_expect_not_null(strstr(text,
	    "kueue_local_queue_admission_wait_time_seconds_count{name=\"lq\","
	    "namespace=\"ns1\",priority_class=\"\",custom_cost=\"gold\","
	    "custom_wtype=\"training\",replica_role=\"standalone\"} 1\n"));
	cr_expect_not_null(strstr(text,
	    "kueue_reserving_active_workloads{cluster_queue=\"cq-a\","
	    "custom_team=\"red\",replica_role=\"standalone\"} 4\n"));
	cu_free(text);
	ctl_metrics_free(m);
}
