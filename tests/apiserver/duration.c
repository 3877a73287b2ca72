/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/duration.c - durations as kube-apiserver words them in
 * Table cells (AGE and other `type: date` printer columns: "45s",
 * "3m20s", "5h12m", "6d3h", "2y40d"), for the rounding kubectl users
 * know from a real cluster.
 */
#include <stdio.h>

#include "tests/apiserver/apiserver.h"

void as_human_duration(cu_ns_t d, char out[AS_DURATION_LEN])
{
	int64_t secs = d / CU_NS_PER_S, mins = secs / 60, hours = mins / 60;
	int64_t days = hours / 24;

	/* Up to a second or two in the future is clock skew: "now". */
	if (secs < -1)
		snprintf(out, AS_DURATION_LEN, "<invalid>");
	else if (secs < 0)
		snprintf(out, AS_DURATION_LEN, "0s");
	else if (secs < 120)
		snprintf(out, AS_DURATION_LEN, "%llds", (long long)secs);
	else if (mins < 10 && secs % 60 != 0)
		snprintf(out, AS_DURATION_LEN, "%lldm%llds", (long long)mins,
		    (long long)(secs % 60));
	else if (mins < 180)
		snprintf(out, AS_DURATION_LEN, "%lldm", (long long)mins);
	else if (hours < 8 && mins % 60 != 0)
		snprintf(out, AS_DURATION_LEN, "%lldh%lldm", (long long)hours,
		    (long long)(mins % 60));
	else if (hours < 48)
		snprintf(out, AS_DURATION_LEN, "%lldh", (long long)hours);
	else if (hours < 24 * 8 && hours % 24 != 0)
		snprintf(out, AS_DURATION_LEN, "%lldd%lldh", (long long)days,
		    (long long)(hours % 24));
	else if (hours < 24 * 365 * 2)
		snprintf(out, AS_DURATION_LEN, "%lldd", (long long)days);
	else if (hours < 24 * 365 * 8 && days % 365 != 0)
		snprintf(out, AS_DURATION_LEN, "%lldy%lldd",
		    (long long)(days / 365), (long long)(days % 365));
	else
		snprintf(
		    out, AS_DURATION_LEN, "%lldy", (long long)(days / 365));
}

json_t *as_age_cell(cu_ns_t now, json_t *v)
{
	char out[AS_DURATION_LEN];
	int64_t t;
	cu_error err;

	if (v == NULL || json_is_null(v))
		return json_null();
	if (!json_is_string(v))
		return json_null();
	if (cu_time_parse(json_string_value(v), &t, &err) != CU_OK)
		return json_string("<invalid>");
	as_human_duration(now - t, out);
	return json_string(out);
}
