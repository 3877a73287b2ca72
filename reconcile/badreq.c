/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconcile/badreq.c - a job whose requests cannot become a Workload is
 * said on the job, never only in the log. rec_wl_requests_valid is
 * Kueue's Workload validation of requests and limits (the webhook's
 * WorkloadValidateResourcesAreNonNegative, on by default) applied before
 * the create, so that a Workload the webhook would refuse, or one that
 * would sit invalid where no webhook runs, is never written;
 * rec__plan_compose_error plans the Warning event (Kueue's
 * ErrWorkloadCompose) that carries the reason to the job.
 */
#include <stdio.h>
#include <string.h>

#include "api/quantity.h"
#include "reconcile/rec_int.h"

/* The first negative quantity of list (requests or limits), as
 * Quantity.String() prints it; CU_EINVAL naming path[key]. */
static int list_ok(const json_t *list, const char *path, cu_error *err)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)list, key, v)
	{
		struct api_quantity q;
		char shown[API_QUANTITY_STR_MAX];
		const char *s = json_string_value(v);
		cu_error e;
		int rc;

		if (s == NULL)
			continue;
		rc = api_quantity_parse(&q, s, &e);
		if (rc == CU_OK && q.milli < 0) {
			api_quantity_format(&q, shown, sizeof(shown));
			s = shown;
		} else if (!(rc == CU_ERANGE && s[0] == '-')) {
			continue;
		}
		return cu_error_set(err, CU_EINVAL,
		    "%s[%s]: Invalid value: \"%.64s\": must be greater than "
		    "or equal to 0",
		    path, key, s);
	}
	return CU_OK;
}

static int resources_ok(const json_t *res, const char *path, cu_error *err)
{
	char p[320];

	snprintf(p, sizeof(p), "%s.requests", path);
	if (list_ok(json_object_get(res, "requests"), p, err) != CU_OK)
		return CU_EINVAL;
	snprintf(p, sizeof(p), "%s.limits", path);
	return list_ok(json_object_get(res, "limits"), p, err);
}

static int containers_ok(
    const json_t *spec, const char *base, const char *member, cu_error *err)
{
	const json_t *c;
	size_t i;
	char p[256];

	json_array_foreach(json_object_get(spec, member), i, c)
	{
		snprintf(p, sizeof(p), "%s.%s[%zu].resources", base, member, i);
		if (resources_ok(json_object_get(c, "resources"), p, err) !=
		    CU_OK)
			return CU_EINVAL;
	}
	return CU_OK;
}

int rec_wl_requests_valid(const json_t *wl, cu_error *err)
{
	const json_t *ps;
	size_t i;

	json_array_foreach(
	    json_object_get(json_object_get(wl, "spec"), "podSets"), i, ps)
	{
		const json_t *spec =
		    json_object_get(json_object_get(ps, "template"), "spec");
		char base[96];

		snprintf(
		    base, sizeof(base), "spec.podSets[%zu].template.spec", i);
		if (containers_ok(spec, base, "initContainers", err) != CU_OK ||
		    containers_ok(spec, base, "containers", err) != CU_OK)
			return CU_EINVAL;
		snprintf(base, sizeof(base),
		    "spec.podSets[%zu].template.spec.resources", i);
		if (resources_ok(
			json_object_get(spec, "resources"), base, err) != CU_OK)
			return CU_EINVAL;
	}
	return CU_OK;
}

int rec__plan_compose_error(
    struct rec_plan *p, const cu_error *why, cu_error *err)
{
	struct rec_item *it;

	/* What the job asks for, not what the controller lacks (memory, a
	 * priority class not there yet): said on the job. */
	if (why->code != CU_EINVAL && why->code != CU_EPARSE &&
	    why->code != CU_ERANGE)
		return CU_OK;
	if (rec_plan_push(p, &it, err) != CU_OK)
		return err->code;
	it->kind = REC_ITEM_EVENT;
	it->type = REC_EVENT_WARNING;
	it->reason = REC_ERR_WORKLOAD_COMPOSE;
	it->text = cu_strdup(why->msg);
	return it->text == NULL ? rec__nomem(err, "job reconciler") : CU_OK;
}
