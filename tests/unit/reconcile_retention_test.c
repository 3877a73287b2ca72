/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/reconcile_retention_test.c - rec_retention_decide, Kueue's
 * objectRetentionPolicies.workloads, table-driven: the policy, the
 * Workload (Finished, deactivated by Kueue or by a user, owned or
 * standalone, being deleted) and the time in; keep, wait (with the
 * deadline) or delete the Workload or its job out.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "reconcile/reconcile.h"

#define S INT64_C(1000000000)
#define T0 "2026-01-01T00:00:00Z"
#define OWNER                                                                  \
	"\"ownerReferences\":[{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\","  \
	"\"name\":\"j\",\"uid\":\"u-j\",\"controller\":true}],"

struct row {
	const char *name;
	bool has_fin;
	int64_t fin;
	bool has_deact;
	int64_t deact;
	const char *wl;	   /* JSON of the Workload, T0 as the transition */
	int64_t now_after; /* seconds after T0 */
	enum rec_retention_action want;
	int64_t want_due_after; /* seconds after T0; -1: none */
};

#define FINISHED                                                               \
	"{\"metadata\":{\"name\":\"w\",\"namespace\":\"ns\",\"uid\":"          \
	"\"u\"," OWNER "\"creationTimestamp\":\"" T0                           \
	"\"},\"spec\":{\"podSets\":[{\"name\":\"main\",\"count\":1,"           \
	"\"template\":{\"spec\":{\"containers\":[]}}}]},"                      \
	"\"status\":{\"conditions\":[{\"type\":\"Finished\",\"status\":"       \
	"\"True\",\"reason\":\"Succeeded\",\"message\":\"\","                  \
	"\"lastTransitionTime\":\"" T0 "\"}]}}"
#define DEACT(reason, owner)                                                   \
	"{\"metadata\":{\"name\":\"w\",\"namespace\":\"ns\",\"uid\":"          \
	"\"u\"," owner "\"creationTimestamp\":\"" T0                           \
	"\"},\"spec\":{\"podSets\":[{\"name\":\"main\",\"count\":1,"           \
	"\"template\":{\"spec\":{\"containers\":[]}}}],"                       \
	"\"active\":false},\"status\":{\"conditions\":[{\"type\":"             \
	"\"Evicted\",\"status\":\"True\",\"reason\":\"" reason "\","           \
	"\"message\":\"\",\"lastTransitionTime\":\"" T0 "\"}]}}"
#define PENDING                                                                \
	"{\"metadata\":{\"name\":\"w\",\"namespace\":\"ns\",\"uid\":"          \
	"\"u\"," OWNER "\"creationTimestamp\":\"" T0                           \
	"\"},\"spec\":{\"podSets\":[{\"name\":\"main\",\"count\":1,"           \
	"\"template\":{\"spec\":{\"containers\":[]}}}]}}"

static const struct row rows[] = {
    {"no policy keeps a finished Workload", false, 0, false, 0, FINISHED, 1000,
	REC_RETAIN_KEEP, -1},
    {"finished, not yet due: wait for the deadline", true, 60 * S, false, 0,
	FINISHED, 10, REC_RETAIN_WAIT, 60},
    {"finished and due: delete the Workload", true, 60 * S, false, 0, FINISHED,
	60, REC_RETAIN_DELETE_WORKLOAD, 60},
    {"afterFinished 0 deletes at once", true, 0, false, 0, FINISHED, 0,
	REC_RETAIN_DELETE_WORKLOAD, 0},
    {"afterDeactivatedByKueue does not apply to a finished one", false, 0, true,
	0, FINISHED, 10, REC_RETAIN_KEEP, -1},
    {"deactivated by Kueue, due: delete its job", false, 0, true, 5 * S,
	DEACT("DeactivatedDueToRequeuingLimitExceeded", OWNER), 5,
	REC_RETAIN_DELETE_JOB, 5},
    {"deactivated by Kueue, not due: wait", false, 0, true, 5 * S,
	DEACT("DeactivatedDueToMaximumExecutionTimeExceeded", OWNER), 1,
	REC_RETAIN_WAIT, 5},
    {"deactivated by a user: kept", false, 0, true, 0,
	DEACT("Deactivated", OWNER), 100, REC_RETAIN_KEEP, -1},
    {"deactivated by Kueue without a job: kept", false, 0, true, 0,
	DEACT("DeactivatedDueToRequeuingLimitExceeded", ""), 100,
	REC_RETAIN_KEEP, -1},
    {"afterFinished does not apply to a deactivated one", true, 0, false, 0,
	DEACT("DeactivatedDueToRequeuingLimitExceeded", OWNER), 100,
	REC_RETAIN_KEEP, -1},
    {"a pending Workload is kept", true, 0, true, 0, PENDING, 100,
	REC_RETAIN_KEEP, -1},
};

Test(retention, table)
{
	int64_t t0 = INT64_C(1767225600) * S, due; /* T0 */
	cu_error err;
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct rec_retention cfg = {
		    r->has_fin, r->fin, r->has_deact, r->deact};
		json_t *j = json_loads(r->wl, 0, NULL);
		struct api_workload wl;
		enum rec_retention_action got;

		cr_assert_not_null(j, "%s: bad JSON", r->name);
		cr_assert_eq(api_workload_decode(&wl, j, &err), CU_OK, "%s: %s",
		    r->name, err.msg);
		got = rec_retention_decide(
		    &cfg, &wl, t0 + r->now_after * S, &due);
		cr_assert_eq(got, r->want, "%s: action %d, want %d", r->name,
		    (int)got, (int)r->want);
		if (r->want_due_after >= 0)
			cr_assert_eq(due, t0 + r->want_due_after * S, "%s: due",
			    r->name);
		else
			cr_assert_eq(
			    due, INT64_MAX, "%s: no deadline", r->name);
		api_workload_dispose(&wl);
		json_decref(j);
	}
}

Test(retention, being_deleted_is_kept)
{
	json_t *j = json_loads(FINISHED, 0, NULL);
	struct rec_retention cfg = {true, 0, false, 0};
	struct api_workload wl;
	cu_error err;
	int64_t due;

	json_object_set_new(json_object_get(j, "metadata"), "deletionTimestamp",
	    json_string(T0));
	cr_assert_eq(api_workload_decode(&wl, j, &err), CU_OK, "%s", err.msg);
	cr_assert_eq(
	    rec_retention_decide(&cfg, &wl, INT64_MAX, &due), REC_RETAIN_KEEP);
	api_workload_dispose(&wl);
	json_decref(j);
}
