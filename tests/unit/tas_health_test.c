/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/tas_health_test.c - tas_node_health under Kueue's node
 * failure gates: a NotReady node fails once the podSet's pods there have
 * ended (TASReplaceNodeOnPodTermination), or after NodeFailureDelay
 * whatever they do (TASReplaceNodeDueToNotReadyOverFixedTime, or without
 * the pod rule); a Ready node's NoSchedule/NoExecute taints fail it for
 * a podSet that does not tolerate them, or tolerates them only for
 * tolerationSeconds, once its pods there have ended
 * (TASReplaceNodeOnNodeTaints). Table-driven.
 */
#include <criterion/criterion.h>
#include <stdio.h>

#include "lib/cu.h"
#include "tas/tas.h"

TestSuite(tas_health);

/* 2026-01-01T00:00:00Z */
#define T0 (1767225600LL * 1000000000LL)
#define SEC 1000000000LL
#define NOT_READY                                                              \
	"{\"type\":\"Ready\",\"status\":\"False\","                            \
	"\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}"
#define READY "{\"type\":\"Ready\",\"status\":\"True\"}"

static json_t *parse(const char *s)
{
	json_error_t je;
	json_t *j = json_loads(s, 0, &je);

	cr_assert_not_null(j, "%s: %s", s, je.text);
	return j;
}

static json_t *node(const char *taints, const char *conds)
{
	char buf[2048];

	snprintf(buf, sizeof(buf),
	    "{\"metadata\":{\"name\":\"h1\"},\"spec\":{\"taints\":[%s]},"
	    "\"status\":{\"conditions\":[%s]}}",
	    taints, conds);
	return parse(buf);
}

/* Kueue's defaults (the fixed delay deprecated and off). */
static const struct tas_health_rules kueue_defaults = {
    30 * SEC, false, true, true};

struct row {
	const char *what;
	const char *taints, *conds; /* conds NULL: the node is deleted */
	const char *tolerations;    /* JSON array or NULL */
	bool progressing;
	int64_t at; /* seconds after T0 */
	enum tas_node_health want;
	int64_t due; /* seconds after T0, WAIT only */
};

static void run(const struct row *rows, size_t n, struct tas_health_rules r)
{
	size_t i;

	for (i = 0; i < n; i++) {
		json_t *nd = rows[i].conds
				 ? node(rows[i].taints ? rows[i].taints : "",
				       rows[i].conds)
				 : NULL;
		json_t *tol =
		    rows[i].tolerations ? parse(rows[i].tolerations) : NULL;
		struct tas_node_usage u = {rows[i].progressing, tol};
		int64_t due = -1;
		struct api_node an;
		enum tas_node_health h;

		if (nd != NULL)
			cr_assert_eq(api_node_decode(&an, nd, NULL), CU_OK,
			    "%s", rows[i].what);
		h = tas_node_health(
		    nd ? &an : NULL, &u, &r, T0 + rows[i].at * SEC, &due);
		if (nd != NULL)
			api_node_dispose(&an);

		cr_expect_eq(h, rows[i].want, "%s: got %d, want %d",
		    rows[i].what, (int)h, (int)rows[i].want);
		if (rows[i].want == TAS_NODE_WAIT)
			cr_expect_eq(due, T0 + rows[i].due * SEC, "%s: due",
			    rows[i].what);
		json_decref(nd);
		json_decref(tol);
	}
}

Test(tas_health, not_ready_by_pod_termination)
{
	static const struct row rows[] = {
	    {"deleted", NULL, NULL, NULL, true, 0, TAS_NODE_FAILED, 0},
	    {"ready", "", READY, NULL, false, 0, TAS_NODE_HEALTHY, 0},
	    {"no Ready condition", "", "", NULL, false, 0, TAS_NODE_HEALTHY, 0},
	    {"NotReady, pods running", "", NOT_READY, NULL, true, 5,
		TAS_NODE_HEALTHY, 0},
	    {"NotReady long ago, pods running: no fixed delay", "", NOT_READY,
		NULL, true, 3600, TAS_NODE_HEALTHY, 0},
	    {"NotReady, pods ended", "", NOT_READY, NULL, false, 1,
		TAS_NODE_FAILED, 0},
	    {"Unknown, no pods", "",
		"{\"type\":\"Ready\",\"status\":\"Unknown\"}", NULL, false, 0,
		TAS_NODE_FAILED, 0},
	};

	run(rows, sizeof(rows) / sizeof(rows[0]), kueue_defaults);
}

Test(tas_health, not_ready_with_the_fixed_delay)
{
	static const struct row both[] = {
	    {"pods running, within the delay", "", NOT_READY, NULL, true, 10,
		TAS_NODE_WAIT, 30},
	    {"pods running, delay over", "", NOT_READY, NULL, true, 30,
		TAS_NODE_FAILED, 0},
	    {"pods ended, within the delay", "", NOT_READY, NULL, false, 10,
		TAS_NODE_FAILED, 0},
	};
	static const struct row delay_only[] = {
	    {"no pod rule: pods ended, within the delay", "", NOT_READY, NULL,
		false, 10, TAS_NODE_WAIT, 30},
	    {"no pod rule: delay over", "", NOT_READY, NULL, true, 31,
		TAS_NODE_FAILED, 0},
	};
	struct tas_health_rules r = kueue_defaults;

	r.fixed_delay = true;
	run(both, sizeof(both) / sizeof(both[0]), r);
	/* without TASReplaceNodeOnPodTermination the delay applies alone,
	 * whatever the other gate says */
	r.on_pod_termination = false;
	run(delay_only, sizeof(delay_only) / sizeof(delay_only[0]), r);
	r.fixed_delay = false;
	run(delay_only, sizeof(delay_only) / sizeof(delay_only[0]), r);
}

#define NOEXEC "{\"key\":\"maint\",\"value\":\"yes\",\"effect\":\"NoExecute\"}"
#define NOSCHED "{\"key\":\"gpu\",\"effect\":\"NoSchedule\"}"
#define PREFER "{\"key\":\"soft\",\"effect\":\"PreferNoSchedule\"}"

Test(tas_health, taints_and_tolerations)
{
	static const struct row rows[] = {
	    {"untolerated NoExecute, pods gone", NOEXEC, READY, NULL, false, 0,
		TAS_NODE_FAILED, 0},
	    {"untolerated NoExecute, pods still running", NOEXEC, READY, NULL,
		true, 0, TAS_NODE_HEALTHY, 0},
	    {"untolerated NoSchedule, pods not bound", NOSCHED, READY, NULL,
		false, 0, TAS_NODE_FAILED, 0},
	    {"PreferNoSchedule is no failure", PREFER, READY, NULL, false, 0,
		TAS_NODE_HEALTHY, 0},
	    {"no Ready condition, tainted", NOEXEC, "", NULL, false, 0,
		TAS_NODE_FAILED, 0},
	    {"tolerated by key, value and effect", NOEXEC, READY,
		"[{\"key\":\"maint\",\"operator\":\"Equal\",\"value\":\"yes\","
		"\"effect\":\"NoExecute\"}]",
		false, 0, TAS_NODE_HEALTHY, 0},
	    {"Equal is the default operator", NOEXEC, READY,
		"[{\"key\":\"maint\",\"value\":\"yes\"}]", false, 0,
		TAS_NODE_HEALTHY, 0},
	    {"another value", NOEXEC, READY,
		"[{\"key\":\"maint\",\"value\":\"no\"}]", false, 0,
		TAS_NODE_FAILED, 0},
	    {"another effect", NOEXEC, READY,
		"[{\"key\":\"maint\",\"operator\":\"Exists\","
		"\"effect\":\"NoSchedule\"}]",
		false, 0, TAS_NODE_FAILED, 0},
	    {"Exists with no key tolerates all", NOEXEC "," NOSCHED, READY,
		"[{\"operator\":\"Exists\"}]", false, 0, TAS_NODE_HEALTHY, 0},
	    {"one of two taints untolerated", NOEXEC "," NOSCHED, READY,
		"[{\"key\":\"gpu\",\"operator\":\"Exists\"}]", false, 0,
		TAS_NODE_FAILED, 0},
	    {"tolerated for a while, pods running", NOEXEC, READY,
		"[{\"key\":\"maint\",\"operator\":\"Exists\","
		"\"tolerationSeconds\":300}]",
		true, 0, TAS_NODE_HEALTHY, 0},
	    {"tolerated for a while, pods gone", NOEXEC, READY,
		"[{\"key\":\"maint\",\"operator\":\"Exists\","
		"\"tolerationSeconds\":300}]",
		false, 0, TAS_NODE_FAILED, 0},
	    {"one permanent toleration is enough", NOEXEC, READY,
		"[{\"key\":\"maint\",\"operator\":\"Exists\","
		"\"tolerationSeconds\":300},"
		"{\"operator\":\"Exists\",\"effect\":\"NoExecute\"}]",
		false, 0, TAS_NODE_HEALTHY, 0},
	    {"NotReady: the pod rule, not the taints", NOEXEC, NOT_READY,
		"[{\"operator\":\"Exists\"}]", false, 0, TAS_NODE_FAILED, 0},
	};

	run(rows, sizeof(rows) / sizeof(rows[0]), kueue_defaults);
}

Test(tas_health, taint_gates)
{
	static const struct row off[] = {
	    {"taints not looked at", NOEXEC, READY, NULL, false, 0,
		TAS_NODE_HEALTHY, 0},
	};
	static const struct row no_pod_rule[] = {
	    {"untolerated fails at once", NOEXEC, READY, NULL, true, 0,
		TAS_NODE_FAILED, 0},
	    {"tolerated for a while: pods running", NOEXEC, READY,
		"[{\"key\":\"maint\",\"operator\":\"Exists\","
		"\"tolerationSeconds\":5}]",
		true, 0, TAS_NODE_HEALTHY, 0},
	};
	struct tas_health_rules r = kueue_defaults;

	r.on_taints = false;
	run(off, 1, r);
	r.on_taints = true;
	r.on_pod_termination = false;
	run(no_pod_rule, sizeof(no_pod_rule) / sizeof(no_pod_rule[0]), r);
}
