/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconcile/acheck.c - admission checks on a Workload, pure: which of a
 * ClusterQueue's admissionChecksStrategy rules apply to the flavors a
 * Workload was assigned, status.admissionChecks kept in line with them
 * (new ones Pending), whether all are Ready (Admitted), and the verdict of
 * Retry (evict) and Rejected (deactivate) states with Kueue's messages.
 * Check states themselves are set by the checks' controllers through the
 * Workload status; nothing here changes a state other than adding a
 * Pending entry.
 */
#include <stdlib.h>
#include <string.h>

#include "reconcile/rec_int.h"

bool rec__checks_all_ready(const json_t *status)
{
	json_t *checks = json_object_get(status, "admissionChecks"), *c;
	size_t i;

	json_array_foreach(checks, i, c)
	{
		const char *st = api_json_str(c, "state");

		if (st == NULL || strcmp(st, "Ready") != 0)
			return false;
	}
	return true;
}

/* Does a flavor named in status.admission.podSetAssignments[].flavors
 * appear in l? */
static bool assigned_in(const json_t *status, const struct api_strlist *l)
{
	json_t *psas = json_object_get(
		   json_object_get(status, "admission"), "podSetAssignments"),
	       *psa, *fl;
	const char *res;
	size_t i, k;

	json_array_foreach(psas, i, psa)
	{
		json_object_foreach(json_object_get(psa, "flavors"), res, fl)
		{
			for (k = 0; json_is_string(fl) && k < l->n; k++)
				if (strcmp(l->items[k],
					json_string_value(fl)) == 0)
					return true;
		}
	}
	return false;
}

bool rec_acheck_applies(
    const struct api_admission_check_rule *r, const json_t *status)
{
	return r->on_flavors.n == 0 || assigned_in(status, &r->on_flavors);
}

static bool required(const struct api_cluster_queue_spec *cq,
    const json_t *status, const char *name)
{
	size_t i;

	for (i = 0; i < cq->n_admission_checks; i++)
		if (cq->admission_checks[i].name != NULL &&
		    strcmp(cq->admission_checks[i].name, name) == 0 &&
		    rec_acheck_applies(&cq->admission_checks[i], status))
			return true;
	return false;
}

static json_t *find_check(json_t *checks, const char *name)
{
	json_t *c;
	size_t i;

	json_array_foreach(checks, i, c)
	{
		const char *n = api_json_str(c, "name");

		if (n != NULL && strcmp(n, name) == 0)
			return c;
	}
	return NULL;
}

static int by_name(const void *a, const void *b)
{
	const char *x = api_json_str(*(json_t *const *)a, "name");
	const char *y = api_json_str(*(json_t *const *)b, "name");

	return strcmp(x ? x : "", y ? y : "");
}

int rec__checks_sync(
    json_t *status, const struct api_cluster_queue_spec *cq, const char *now)
{
	json_t *old = json_object_get(status, "admissionChecks"), *out, *c;
	json_t **v;
	size_t i, n = 0, cap;
	int rc = 0;

	cap = json_array_size(old) + cq->n_admission_checks;
	if (cap == 0)
		return 0;
	v = cu_calloc(cap, sizeof(*v));
	if (v == NULL)
		return -1;
	/* existing entries still required, states kept */
	json_array_foreach(old, i, c)
	{
		const char *name = api_json_str(c, "name");

		if (name != NULL && required(cq, status, name))
			v[n++] = json_incref(c);
	}
	/* required ones not listed yet: Pending */
	for (i = 0; i < cq->n_admission_checks; i++) {
		const struct api_admission_check_rule *r =
		    &cq->admission_checks[i];
		size_t k;
		bool dup = false;

		if (r->name == NULL || !rec_acheck_applies(r, status) ||
		    find_check(old, r->name) != NULL)
			continue;
		for (k = 0; k < n && !dup; k++)
			dup = strcmp(api_json_str(v[k], "name"), r->name) == 0;
		if (dup)
			continue;
		c = json_pack("{s:s, s:s, s:s, s:s}", "name", r->name, "state",
		    "Pending", "lastTransitionTime", now, "message", "");
		if (c == NULL) {
			rc = -1;
			break;
		}
		v[n++] = c;
	}
	if (rc == 0)
		qsort(v, n, sizeof(*v), by_name);
	out = rc == 0 ? json_array() : NULL;
	for (i = 0; i < n; i++)
		if (out != NULL && json_array_append(out, v[i]) != 0) {
			json_decref(out);
			out = NULL;
		}
	for (i = 0; i < n; i++)
		json_decref(v[i]);
	cu_free(v);
	if (out == NULL)
		return -1;
	if (json_array_size(out) == 0) {
		json_decref(out);
		json_object_del(status, "admissionChecks");
		return 0;
	}
	return json_object_set_new(status, "admissionChecks", out) == 0 ? 0
									: -1;
}

static int cmp_state(const void *a, const void *b)
{
	const struct api_admission_check_state *x =
	    *(const struct api_admission_check_state *const *)a;
	const struct api_admission_check_state *y =
	    *(const struct api_admission_check_state *const *)b;

	return strcmp(x->name ? x->name : "", y->name ? y->name : "");
}

/* Kueue's buildAdmissionChecksMessage: the checks in state, by name,
 * `"name" (message)` joined by "; ". */
static char *checks_message(
    const struct api_workload *wl, enum api_check_state state, const char *word)
{
	const struct api_admission_check_state **v;
	size_t i, n = 0;
	char *out, *next;

	v = cu_calloc(wl->status.n_admission_checks + 1, sizeof(*v));
	if (v == NULL)
		return NULL;
	for (i = 0; i < wl->status.n_admission_checks; i++)
		if (wl->status.admission_checks[i].state == state)
			v[n++] = &wl->status.admission_checks[i];
	qsort(v, n, sizeof(*v), cmp_state);
	out = cu_asprintf(
	    "AdmissionCheck%s in %s state: ", n > 1 ? "s" : "", word);
	for (i = 0; out != NULL && i < n; i++) {
		const char *m = v[i]->message;

		next = m != NULL && *m != '\0'
			   ? cu_asprintf("%s%s\"%s\" (%s)", out,
				 i > 0 ? "; " : "", v[i]->name, m)
			   : cu_asprintf("%s%s\"%s\"", out, i > 0 ? "; " : "",
				 v[i]->name);
		cu_free(out);
		out = next;
	}
	cu_free(v);
	return out;
}

enum rec_acheck_verdict rec_acheck_verdict(
    const struct api_workload *wl, char **message)
{
	bool retry = false, rejected = false;
	size_t i;

	*message = NULL;
	if (wl == NULL ||
	    api_conditions_true(&wl->status.conditions, REC_COND_EVICTED))
		return REC_ACHECK_NONE;
	for (i = 0; i < wl->status.n_admission_checks; i++) {
		retry |=
		    wl->status.admission_checks[i].state == API_CHECK_RETRY;
		rejected |=
		    wl->status.admission_checks[i].state == API_CHECK_REJECTED;
	}
	if (rejected) {
		*message = checks_message(wl, API_CHECK_REJECTED, "Rejected");
		return *message ? REC_ACHECK_REJECTED : REC_ACHECK_NOMEM;
	}
	if (retry) {
		char *m = checks_message(wl, API_CHECK_RETRY, "Retry");

		*message = m ? cu_asprintf("Evicted due to %s", m) : NULL;
		cu_free(m);
		return *message ? REC_ACHECK_RETRY : REC_ACHECK_NOMEM;
	}
	return REC_ACHECK_NONE;
}

int rec_acheck_patch_admitted(const json_t *patch)
{
	struct api_conditions cs;
	const struct api_condition *c;
	int rc = -1;

	/* a patch whose conditions do not decode has no Admitted to tell */
	if (patch == NULL || api_conditions_decode(patch, &cs, NULL) != CU_OK)
		return -1;
	c = api_conditions_find(&cs, REC_COND_ADMITTED);
	if (c != NULL)
		rc = c->status == API_COND_TRUE;
	api_conditions_dispose(&cs);
	return rc;
}
