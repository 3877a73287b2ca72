/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/webhook_partial_test.c - wh_job_partial_admission
 * (webhook/partial.c), Kueue's job-min-parallelism rules, one row each:
 * in range, out of range (the 50 on parallelism 5), zero, not a
 * number, completions below parallelism, with an elastic job, an update
 * that leaves it alone, an update that changes it, and parallelism
 * changed on a running job that has it.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "webhook/webhook.h"

#define P "metadata.annotations[kueue.x-k8s.io/job-min-parallelism]"

static json_t *job(const char *min, int par, int comp, bool susp, bool elastic)
{
	json_t *j =
	    json_pack("{s:{s:s, s:{}}, s:{s:i, s:b}}", "metadata", "name", "j",
		"annotations", "spec", "parallelism", par, "suspend", susp);
	json_t *a =
	    json_object_get(json_object_get(j, "metadata"), "annotations");

	if (min != NULL)
		json_object_set_new(
		    a, "kueue.x-k8s.io/job-min-parallelism", json_string(min));
	if (elastic)
		json_object_set_new(
		    a, "kueue.x-k8s.io/elastic-job", json_string("true"));
	if (comp >= 0)
		json_object_set_new(json_object_get(j, "spec"), "completions",
		    json_integer(comp));
	return j;
}

Test(webhook_partial, table)
{
	static const struct {
		bool update;
		const char *old_min;
		int old_par;
		bool old_susp;
		const char *min;
		int par, comp;
		bool elastic;
		const char *want;
	} rows[] = {
	    {false, NULL, 0, false, NULL, 5, -1, false, NULL},
	    {false, NULL, 0, false, "2", 5, -1, false, NULL},
	    {false, NULL, 0, false, "4", 5, -1, false, NULL},
	    {false, NULL, 0, false, "50", 5, -1, false,
		P ": Invalid value: 50: should be between 0 and 4"},
	    {false, NULL, 0, false, "5", 5, -1, false,
		P ": Invalid value: 5: should be between 0 and 4"},
	    {false, NULL, 0, false, "0", 5, -1, false,
		P ": Invalid value: 0: should be between 0 and 4"},
	    {false, NULL, 0, false, "x2", 5, -1, false,
		P ": Invalid value: \"x2\": strconv.Atoi: parsing \"x2\": "
		  "invalid syntax"},
	    {false, NULL, 0, false, "3", 5, 3, false,
		P ": Invalid value: 3: should be between 0 and 2"},
	    {false, NULL, 0, false, "2", 5, -1, true,
		P ": Invalid value: \"2\": partial admission and elastic job "
		  "cannot be used together"},
	    {true, "50", 5, true, "50", 5, -1, false, NULL},
	    {true, "2", 5, true, "50", 5, -1, false,
		P ": Invalid value: 50: should be between 0 and 4"},
	    {true, "2", 5, false, "2", 6, -1, false,
		"spec.parallelism: Forbidden: cannot change when partial "
		"admission is enabled and the job is not suspended"},
	    {true, "2", 5, true, "2", 6, -1, false, NULL},
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		json_t *o = rows[i].update
				? job(rows[i].old_min, rows[i].old_par, -1,
				      rows[i].old_susp, false)
				: NULL;
		json_t *n = job(rows[i].min, rows[i].par, rows[i].comp, true,
		    rows[i].elastic);
		cu_error err = {0};
		int rc = wh_job_partial_admission(o, n, true, &err);

		if (rows[i].want == NULL)
			cr_expect_eq(rc, CU_OK, "row %zu: %s", i, err.msg);
		else {
			cr_expect_eq(rc, CU_EDENIED, "row %zu", i);
			cr_expect_str_eq(err.msg, rows[i].want, "row %zu", i);
		}
		json_decref(o);
		json_decref(n);
	}
}
