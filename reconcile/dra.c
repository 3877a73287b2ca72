/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconcile/dra.c - what a Workload's dynamic resource allocation asks of
 * quota, as Kueue's DRA integration counts it (KueueDRAIntegration and
 * KueueDRAIntegrationExtendedResource): per podSet, the devices its
 * ResourceClaimTemplates request, counted per DeviceClass (Exactly with
 * its count, default 1; admin access counts 0) and charged to the quota
 * resource resources.deviceClassMappings maps the class to; and extended
 * resources a DeviceClass backs (spec.extendedResourceName), charged to the
 * class's mapping name when it has one. A Workload this cannot count (a
 * direct ResourceClaim, firstAvailable, allocationMode All, a class with no
 * mapping, a missing template, DRA off with rejection on) is refused with
 * Kueue's message; the controller shows it as QuotaReserved=False,
 * Misconfigured. Pure: the caches are read through the lookup callbacks.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "reconcile/reconcile.h"

#define CLAIM_PATH "spec.podSets[%zu].template.spec.resourceClaims[%zu]"

static int nomem(cu_error *err)
{
	return cu_error_set(err, CU_ENOMEM, "DRA: out of memory");
}

void rec_dra_result_dispose(struct rec_dra_result *r)
{
	size_t i;

	for (i = 0; r->podsets != NULL && i < r->n; i++) {
		cu_free(r->podsets[i].add);
		cu_free(r->podsets[i].drop);
	}
	cu_free(r->podsets);
	cu_free(r->refused);
	memset(r, 0, sizeof(*r));
}

static const struct rec_dra_mapping *mapping_of(
    const struct rec_dra_config *cfg, const char *cls)
{
	size_t i, k;

	for (i = 0; i < cfg->n_mappings; i++)
		for (k = 0; k < cfg->mappings[i].n_classes; k++)
			if (strcmp(cfg->mappings[i].classes[k], cls) == 0)
				return &cfg->mappings[i];
	return NULL;
}

static int add_to(
    struct rec_dra_podset *p, size_t cap, const char *name, int64_t milli)
{
	size_t i;

	for (i = 0; i < p->n_add; i++)
		if (strcmp(p->add[i].resource, name) == 0) {
			if (__builtin_add_overflow(
				p->add[i].per_pod, milli, &p->add[i].per_pod))
				p->add[i].per_pod = INT64_MAX;
			return CU_OK;
		}
	if (p->n_add >= cap)
		return CU_ERANGE;
	p->add[p->n_add].resource = name;
	p->add[p->n_add++].per_pod = milli;
	return CU_OK;
}

static int refuse(struct rec_dra_result *out, bool retry, cu_error *err,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int refuse(
    struct rec_dra_result *out, bool retry, cu_error *err, const char *fmt, ...)
{
	char buf[CU_ERROR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	out->refused = cu_strdup(buf);
	out->retry = retry;
	return out->refused != NULL ? CU_OK : nomem(err);
}

/* Devices of one claim template spec (json spec.spec) into p. */
static int count_template(const struct rec_dra_config *cfg, const json_t *spec,
    size_t i, size_t j, const char *tname, const char *podset,
    struct rec_dra_podset *p, size_t cap, struct rec_dra_result *out,
    cu_error *err)
{
	json_t *reqs =
	    json_object_get(json_object_get(spec, "devices"), "requests");
	json_t *r;
	size_t k;

	json_array_foreach(reqs, k, r)
	{
		json_t *ex = json_object_get(r, "exactly");
		const char *mode =
		    json_string_value(json_object_get(ex, "allocationMode"));
		const char *cls =
		    json_string_value(json_object_get(ex, "deviceClassName"));
		json_t *cnt = json_object_get(ex, "count");
		const struct rec_dra_mapping *m;
		int64_t n = json_is_integer(cnt) ? json_integer_value(cnt) : 1;

		if (json_object_get(r, "firstAvailable") != NULL)
			return refuse(out, false, err,
			    CLAIM_PATH ".devices.requests[%zu]: Invalid value: "
				       "null: ResourceClaimTemplate %s: "
				       "FirstAvailable device selection is not "
				       "supported",
			    i, j, k, tname);
		if (!json_is_object(ex))
			return refuse(out, false, err,
			    CLAIM_PATH
			    ".devices.requests[%zu]: Invalid value: "
			    "null: ResourceClaimTemplate %s: Exactly "
			    "must be set if FirstAvailable is nil",
			    i, j, k, tname);
		if (json_is_true(json_object_get(ex, "adminAccess")))
			continue;
		if (mode != NULL && strcmp(mode, "All") == 0)
			return refuse(out, false, err,
			    CLAIM_PATH
			    ".devices.requests[%zu].exactly."
			    "allocationMode: Invalid value: \"All\": "
			    "ResourceClaimTemplate %s: AllocationMode "
			    "'All' is not supported",
			    i, j, k, tname);
		if (mode != NULL && strcmp(mode, "ExactCount") != 0)
			return refuse(out, false, err,
			    CLAIM_PATH ".devices.requests[%zu].exactly."
				       "allocationMode: Invalid value: \"%s\": "
				       "ResourceClaimTemplate %s: unsupported "
				       "allocation mode: %s",
			    i, j, k, mode, tname, mode);
		if (cls == NULL || cls[0] == '\0')
			continue;
		m = mapping_of(cfg, cls);
		if (m == NULL)
			return refuse(out, false, err,
			    CLAIM_PATH ".resourceClaimTemplateName: Not found: "
				       "\"DeviceClass %s is not mapped in DRA "
				       "configuration for podset %s\"",
			    i, j, cls, podset);
		if (!m->by_device_count)
			return refuse(out, false, err,
			    CLAIM_PATH
			    ".resourceClaimTemplateName: Invalid "
			    "value: \"%s\": DeviceClass %s is mapped "
			    "with counter or capacity sources, which "
			    "cueue does not count yet",
			    i, j, tname, cls);
		if (n < 0)
			n = 0;
		if (add_to(p, cap, m->name,
			n > INT64_MAX / 1000 ? INT64_MAX : n * 1000) != CU_OK)
			return refuse(out, false, err,
			    CLAIM_PATH ": Too many: device classes", i, j);
	}
	return CU_OK;
}

/* The extended resources of podSet i's requests that a DeviceClass backs
 * and whose mapping renames them: dropped and charged to the mapping. */
static int extended(const struct rec_dra_config *cfg,
    const struct rec_dra_lookup *lk, const struct que_request *reqs, size_t n,
    struct rec_dra_podset *p, size_t cap, struct rec_dra_result *out,
    cu_error *err)
{
	size_t k;

	for (k = 0; k < n; k++) {
		const char *cls;
		const struct rec_dra_mapping *m;

		if (reqs[k].per_pod <= 0 ||
		    strchr(reqs[k].resource, '/') == NULL ||
		    lk->extended_class == NULL ||
		    (cls = lk->extended_class(lk->payload, reqs[k].resource)) ==
			NULL)
			continue;
		out->uses_dra = true;
		if (reqs[k].per_pod % 1000 != 0)
			return refuse(out, false, err,
			    "%s: Invalid value: extended resource quantity "
			    "must be an integer",
			    reqs[k].resource);
		m = mapping_of(cfg, cls);
		if (m != NULL && !m->by_device_count)
			return refuse(out, false, err,
			    "extended resource %s resolves to DeviceClass %s "
			    "with counters configured; use "
			    "ResourceClaimTemplates with CEL selectors for "
			    "counter-based quota",
			    reqs[k].resource, cls);
		if (m == NULL || strcmp(m->name, reqs[k].resource) == 0)
			continue; /* charged under its own name as it is */
		p->drop[p->n_drop++] = reqs[k].resource;
		if (add_to(p, cap, m->name, reqs[k].per_pod) != CU_OK)
			return refuse(
			    out, false, err, "%s: Too many", reqs[k].resource);
	}
	return CU_OK;
}

int rec_dra_evaluate(const struct rec_dra_config *cfg,
    const struct rec_dra_lookup *lk, const struct api_workload *wl,
    const struct que_request *const *reqs, const size_t *n_reqs,
    struct rec_dra_result *out, cu_error *err)
{
	size_t i, j, n = wl->spec.n_pod_sets;
	bool claims = false, direct = false;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < n; i++) {
		json_t *rc,
		    *prc = json_object_get(
			json_object_get(wl->spec.pod_sets[i].template, "spec"),
			"resourceClaims");

		json_array_foreach(prc, j, rc)
		{
			claims |= json_object_get(
				      rc, "resourceClaimTemplateName") != NULL;
			direct |=
			    json_object_get(rc, "resourceClaimName") != NULL;
		}
	}
	out->uses_dra = claims || direct;
	if (!cfg->enabled) {
		if (out->uses_dra && cfg->reject_disabled)
			return refuse(out, false, err,
			    "Workload uses DRA resources but the "
			    "KueueDRAIntegration feature gate is not enabled");
		out->uses_dra = false;
		return CU_OK;
	}
	if (direct)
		return refuse(out, false, err,
		    "KueueDRAIntegration feature does not support use of "
		    "resource claims");
	out->podsets = cu_calloc(n + 1, sizeof(*out->podsets));
	if (out->podsets == NULL)
		return nomem(err);
	out->n = n;
	for (i = 0; i < n; i++) {
		const struct api_podset *ps = &wl->spec.pod_sets[i];
		const char *psname = ps->name ? ps->name : "main";
		json_t *rc, *prc = json_object_get(
				json_object_get(ps->template, "spec"),
				"resourceClaims");
		struct rec_dra_podset *p = &out->podsets[i];
		size_t cap = cfg->n_mappings + (n_reqs ? n_reqs[i] : 0) + 1;
		int rc2;

		p->add = cu_calloc(cap, sizeof(*p->add));
		p->drop = cu_calloc(cap, sizeof(*p->drop));
		if (p->add == NULL || p->drop == NULL)
			return nomem(err);
		json_array_foreach(prc, j, rc)
		{
			const char *tname = json_string_value(
			    json_object_get(rc, "resourceClaimTemplateName"));
			json_t *t;

			if (tname == NULL)
				continue;
			t = lk->claim_template != NULL
				? lk->claim_template(
				      lk->payload, wl->meta.namespace_, tname)
				: NULL;
			if (t == NULL)
				return refuse(out, true, err,
				    CLAIM_PATH
				    ": Internal error: failed to "
				    "get claim spec for "
				    "ResourceClaimTemplate %s in "
				    "podset %s: "
				    "resourceclaimtemplates.resource."
				    "k8s.io \"%s\" not found",
				    i, j, tname, psname, tname);
			rc2 = count_template(cfg,
			    json_object_get(json_object_get(t, "spec"), "spec"),
			    i, j, tname, psname, p, cap, out, err);
			if (rc2 != CU_OK || out->refused != NULL)
				return rc2;
		}
		if (cfg->extended && reqs != NULL) {
			rc2 = extended(
			    cfg, lk, reqs[i], n_reqs[i], p, cap, out, err);
			if (rc2 != CU_OK || out->refused != NULL)
				return rc2;
		}
	}
	return CU_OK;
}
