/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/api_model_conditions_test.c - the one writer of a status
 * condition on the wire (api_conditions_set_json, apimeta's
 * SetStatusCondition): a table of starting lists and conditions set, with
 * the list each must leave; the message cut; the refused inputs.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "api/model.h"

#define NOW "2026-02-02T00:00:00Z"

/* JSON written with ' for " (the tables stay readable). */
static json_t *parse(const char *q)
{
	char buf[1024];
	size_t i;
	json_t *j;

	cr_assert_lt(strlen(q), sizeof(buf));
	for (i = 0; q[i] != '\0'; i++)
		buf[i] = q[i] == '\'' ? '"' : q[i];
	buf[i] = '\0';
	j = json_loads(buf, 0, NULL);
	cr_assert_not_null(j, "%s", buf);
	return j;
}

Test(api_conditions_set_json, table)
{
	static const struct {
		const char *what, *status; /* the status object before */
		struct api_condition_set c;
		const char *want; /* status.conditions after */
	} cases[] = {
	    {"no list: created", "{}",
		{"Active", API_COND_TRUE, "Ready", "ok", true, 3},
		"[{'type':'Active','status':'True','observedGeneration':3,"
		"'lastTransitionTime':'" NOW "','reason':'Ready','message':"
		"'ok'}]"},
	    {"appended after the others",
		"{'conditions':[{'type':'A','status':'True'}]}",
		{"B", API_COND_FALSE, "R", NULL, false, 0},
		"[{'type':'A','status':'True'},{'type':'B','status':'False',"
		"'lastTransitionTime':'" NOW "','reason':'R','message':''}]"},
	    {"same status: the transition time stays",
		"{'conditions':[{'type':'A','status':'True','reason':'x',"
		"'message':'m','lastTransitionTime':'2020-01-01T00:00:00Z',"
		"'observedGeneration':1}]}",
		{"A", API_COND_TRUE, "y", "n", false, 0},
		"[{'type':'A','status':'True','reason':'y','message':'n',"
		"'lastTransitionTime':'2020-01-01T00:00:00Z'}]"},
	    {"status flips: the transition time moves",
		"{'conditions':[{'type':'A','status':'True','reason':'x',"
		"'message':'m','lastTransitionTime':'2020-01-01T00:00:00Z'}]}",
		{"A", API_COND_FALSE, "y", "n", true, 2},
		"[{'type':'A','status':'False','reason':'y','message':'n',"
		"'lastTransitionTime':'" NOW "','observedGeneration':2}]"},
	    {"a list that is not one is replaced", "{'conditions':3}",
		{"A", API_COND_UNKNOWN, "r", "m", false, 0},
		"[{'type':'A','status':'Unknown','lastTransitionTime':'" NOW
		"','reason':'r','message':'m'}]"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *st = parse(cases[i].status),
		       *want = parse(cases[i].want);
		cu_error err;

		cr_assert_eq(
		    api_conditions_set_json(st, &cases[i].c, NOW, &err), CU_OK,
		    "%s: %s", cases[i].what, err.msg);
		cr_assert(json_equal(json_object_get(st, "conditions"), want),
		    "%s: %s", cases[i].what,
		    json_dumps(json_object_get(st, "conditions"), 0));
		json_decref(st);
		json_decref(want);
	}
}

Test(api_conditions_set_json, new_condition_key_order)
{
	json_t *st = json_object();
	struct api_condition_set c = {"A", API_COND_TRUE, "r", "m", true, 1};
	const char *want[] = {"type", "status", "observedGeneration",
	    "lastTransitionTime", "reason", "message"};
	void *it;
	size_t k = 0;

	cr_assert_eq(api_conditions_set_json(st, &c, NOW, NULL), CU_OK);
	for (it = json_object_iter(
		 json_array_get(json_object_get(st, "conditions"), 0));
	     it != NULL;
	     it = json_object_iter_next(
		 json_array_get(json_object_get(st, "conditions"), 0), it))
		cr_assert_str_eq(json_object_iter_key(it), want[k++]);
	cr_assert_eq(k, 6);
	json_decref(st);
}

Test(api_conditions_set_json, long_message_cut_on_a_character)
{
	size_t n = API_CONDITION_MESSAGE_MAX + 10;
	char *msg = cu_malloc(n + 1);
	json_t *st = json_object();
	struct api_condition_set c = {"A", API_COND_TRUE, "r", NULL, false, 0};
	const char *got;

	memset(msg, 'a', n);
	/* a two-byte character across the cut */
	memcpy(msg + API_CONDITION_MESSAGE_MAX - 5, "\xc3\xa9", 2);
	msg[n] = '\0';
	c.message = msg;
	cr_assert_eq(api_conditions_set_json(st, &c, NOW, NULL), CU_OK);
	got = json_string_value(json_object_get(
	    json_array_get(json_object_get(st, "conditions"), 0), "message"));
	cr_assert_not_null(got);
	cr_assert_eq(strlen(got), API_CONDITION_MESSAGE_MAX - 5 + 4);
	cr_assert_str_eq(got + strlen(got) - 4, " ...");
	cu_free(msg);
	json_decref(st);
}

Test(api_conditions_set_json, refused)
{
	json_t *st = json_object(), *arr = json_array();
	struct api_condition_set c = {NULL, API_COND_TRUE, "r", "m", false, 0};
	cu_error err;

	cr_assert_eq(api_conditions_set_json(st, &c, NOW, &err), CU_EINVAL);
	c.type = "A";
	c.status = API_COND_UNSET;
	cr_assert_eq(api_conditions_set_json(st, &c, NOW, &err), CU_EINVAL);
	c.status = API_COND_TRUE;
	cr_assert_eq(api_conditions_set_json(arr, &c, NOW, &err), CU_EINVAL);
	cr_assert_eq(json_object_size(st), 0);
	json_decref(st);
	json_decref(arr);
}
