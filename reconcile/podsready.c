/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconcile/podsready.c - waitForPodsReady's look at the pods themselves:
 * how many pods a Workload expects, and, from a LIST of a job's pods, why
 * they are not ready (the scheduler's PodScheduled=False message), so
 * that the PodsReady condition and a PodsReadyTimeout eviction name the
 * root cause. Pure. Contracts in reconcile/reconcile.h.
 */
#include <string.h>

#include "reconcile/rec_int.h"

int32_t rec_wl_pod_count(const struct api_workload *wl)
{
	int64_t n = 0;
	size_t i;

	if (wl->status.has_admission &&
	    wl->status.admission.n_pod_set_assignments > 0) {
		for (i = 0; i < wl->status.admission.n_pod_set_assignments;
		     i++) {
			const struct api_podset_assignment *a =
			    &wl->status.admission.pod_set_assignments[i];

			n += a->has_count ? a->count : 1;
		}
	} else {
		for (i = 0; i < wl->spec.n_pod_sets; i++)
			n += wl->spec.pod_sets[i].has_count
				 ? wl->spec.pod_sets[i].count
				 : 1;
	}
	return n > INT32_MAX ? INT32_MAX : n < 0 ? 0 : (int32_t)n;
}

static bool pod_ready(const json_t *p, const struct api_conditions *cs)
{
	const char *phase = json_string_value(
	    json_object_get(json_object_get(p, "status"), "phase"));
	const struct api_condition *c = api_conditions_find(cs, "Ready");

	if (phase != NULL && strcmp(phase, "Succeeded") == 0)
		return true;
	return c != NULL && c->status == API_COND_TRUE;
}

char *rec_pods_not_ready_message(const json_t *pods, int32_t expected)
{
	const json_t *items =
	    json_is_array(pods) ? pods : json_object_get(pods, "items");
	const char **msgs;
	struct api_conditions *cs;
	size_t i, j, n = json_array_size(items), nmsg = 0, best = 0;
	size_t best_votes = 0;
	int64_t ready = 0, want, not_ready;
	char *out;

	msgs = cu_calloc(n + 1, sizeof(*msgs));
	/* each Pod's conditions, held until its message is used */
	cs = cu_calloc(n + 1, sizeof(*cs));
	if (msgs == NULL || cs == NULL) {
		cu_free(msgs);
		cu_free(cs);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		const json_t *p = json_array_get(items, i);
		const struct api_condition *sc;

		if (json_object_get(json_object_get(p, "metadata"),
			"deletionTimestamp") != NULL)
			continue;
		/* a Pod whose conditions do not decode has none */
		if (api_conditions_decode(p, &cs[i], NULL) != CU_OK)
			memset(&cs[i], 0, sizeof(cs[i]));
		if (pod_ready(p, &cs[i])) {
			ready++;
			continue;
		}
		sc = api_conditions_find(&cs[i], "PodScheduled");
		if (sc != NULL && sc->status == API_COND_FALSE &&
		    sc->message != NULL && *sc->message)
			msgs[nmsg++] = sc->message;
	}
	/* The cause most pods share; the first seen on a tie. */
	for (i = 0; i < nmsg; i++) {
		size_t votes = 0;

		for (j = 0; j < nmsg; j++)
			votes += strcmp(msgs[i], msgs[j]) == 0;
		if (votes > best_votes) {
			best_votes = votes;
			best = i;
		}
	}
	want = expected > 0 ? expected : (int64_t)n;
	not_ready = want - ready;
	out = NULL;
	if (nmsg > 0 && not_ready > 0)
		out = cu_asprintf("%lld of %lld pods not ready: %s",
		    (long long)not_ready, (long long)want, msgs[best]);
	for (i = 0; i < n; i++)
		api_conditions_dispose(&cs[i]);
	cu_free(cs);
	cu_free(msgs);
	return out;
}
