/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/acheck.c - admission checks, the process side: the cached
 * ClusterQueue whose admissionChecksStrategy the admission write and the
 * Workload reconciler sync a Workload's checks with (a ClusterQueue
 * without checks is not decoded: the admission path of a queue without
 * checks costs nothing more), and a ClusterQueue made inactive while a
 * check it names is missing or not Active.
 */
#include <stdlib.h>
#include <string.h>

#include "controller/ctl_int.h"

bool ctl_acheck_cq(
    ctl *c, const char *name, bool force, struct api_cluster_queue *cq)
{
	json_t *obj, *st;
	cu_error err;

	if (name == NULL)
		return false;
	obj = api_informer_get(c->inf[INF_CQ], NULL, name);
	if (obj == NULL)
		return false;
	st = json_object_get(json_object_get(json_object_get(obj, "spec"),
				 "admissionChecksStrategy"),
	    "admissionChecks");
	if (!force && json_array_size(st) == 0)
		return false;
	if (api_cluster_queue_decode(cq, obj, &err) != CU_OK) {
		cu_warn("clusterqueue %s: %s", name, err.msg);
		return false;
	}
	return true;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* names [borrowed] sorted and joined by "," into a new string. */
static char *join(const char **names, size_t n)
{
	char *out = cu_strdup(""), *next;
	size_t i;

	qsort(names, n, sizeof(*names), cmp_str);
	for (i = 0; out != NULL && i < n; i++) {
		next = cu_asprintf("%s%s%s", out, i ? "," : "", names[i]);
		cu_free(out);
		out = next;
	}
	return out;
}

void ctl_acheck_sync_cq(ctl *c, const struct api_cluster_queue *cq)
{
	const struct api_cluster_queue_spec *s = &cq->spec;
	const char **missing, **inactive, *reason = NULL;
	char *m = NULL, *ina = NULL, *msg = NULL;
	size_t i, k, nm = 0, ni = 0;
	cu_error err;

	missing = cu_calloc(s->n_admission_checks + 1, sizeof(*missing));
	inactive = cu_calloc(s->n_admission_checks + 1, sizeof(*inactive));
	if (missing == NULL || inactive == NULL)
		goto out;
	for (i = 0; i < s->n_admission_checks; i++) {
		const char *name = s->admission_checks[i].name;
		json_t *obj;
		struct api_admission_check ac;
		bool dup = false;

		for (k = 0; k < i && !dup; k++)
			dup = strcmp(s->admission_checks[k].name, name) == 0;
		if (dup)
			continue;
		obj = c->inf[INF_ACHECK] != NULL
			  ? api_informer_get(c->inf[INF_ACHECK], NULL, name)
			  : NULL;
		if (obj == NULL) {
			missing[nm++] = name;
			continue;
		}
		if (api_admission_check_decode(&ac, obj, &err) != CU_OK) {
			inactive[ni++] = name;
			continue;
		}
		if (!api_conditions_true(&ac.status.conditions, "Active"))
			inactive[ni++] = name;
		api_admission_check_dispose(&ac);
	}
	if (nm > 0) {
		reason = "AdmissionCheckNotFound";
		m = join(missing, nm);
	}
	if (ni > 0) {
		if (reason == NULL)
			reason = "AdmissionCheckInactive";
		ina = join(inactive, ni);
	}
	if (reason != NULL) {
		char *a = m ? cu_asprintf("references missing "
					  "AdmissionCheck(s): %s",
				  m)
			    : NULL;
		char *b = ina ? cu_asprintf("references inactive "
					    "AdmissionCheck(s): %s",
				    ina)
			      : NULL;

		msg = cu_asprintf(
		    "%s%s%s", a ? a : "", a && b ? ", " : "", b ? b : "");
		cu_free(a);
		cu_free(b);
		if (msg == NULL)
			goto out;
	}
	if (que_cq_set_checks(c->st, cq->meta.name, reason, msg, &err) !=
		CU_OK &&
	    err.code != CU_ENOTFOUND)
		cu_warn("clusterqueue %s: %s", cq->meta.name, err.msg);
out:
	cu_free(m);
	cu_free(ina);
	cu_free(msg);
	cu_free(missing);
	cu_free(inactive);
}
