/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/config_dra.c - Kueue's dynamic resource allocation settings:
 * the DRA feature gates (KueueDRAIntegration, ...ExtendedResource,
 * ...PartitionableDevices, KueueDRARejectWorkloadsWhenDRADisabled on by
 * default; ...ConsumableCapacity off) with Kueue's dependency check, and
 * resources.deviceClassMappings loaded and validated as Kueue's
 * configuration validation does (at most 16 mappings, qualified unique
 * names, 1-8 device classes each, sources of one kind with their gate, a
 * class in two mappings only through distinct counters, a counter
 * source's name, driver and deviceSelector required, its CEL parsed by
 * cel/), then printed back for --check-config. controller/dra.c acts
 * on them.
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "api/labelselector.h"
#include "cel/cel.h"
#include "controller/config_int.h"

#define MAX_MAPPINGS 16
#define MAX_CLASSES 8

/* Kueue refuses a gate switched on while a gate it depends on is off. */
static int check_gate_deps(const struct ctl_config_dec *d, const json_t *root)
{
	static const char *const deps[] = {
	    "KueueDRAIntegrationExtendedResource",
	    "KueueDRAIntegrationPartitionableDevices",
	    "KueueDRAIntegrationConsumableCapacity",
	};
	const struct ctl_config *c = d->c;
	const bool on[] = {
	    c->dra.extended, c->dra.partitionable, c->dra.consumable};
	size_t i;
	int rc = CU_OK;

	for (i = 0; i < sizeof(deps) / sizeof(deps[0]); i++)
		if (on[i] && !c->dra.enabled)
			rc = ctl_config_fail(d, CU_EINVAL,
			    ctl_config_jget(
				ctl_config_jget(root, "featureGates"),
				deps[i]) != NULL
				? "featureGates"
				: "featureGates.KueueDRAIntegration",
			    "featureGates: Invalid value: %s is enabled, but "
			    "depends on features that are disabled: "
			    "[KueueDRAIntegration]",
			    deps[i]);
	return rc;
}

/* The counter name of each counter source of mapping m (JSON), or none. */
static bool counter_names_disjoint(const json_t *a, const json_t *b)
{
	size_t i, k;
	json_t *x, *y;

	json_array_foreach(a, i, x)
	{
		const char *na = json_string_value(
		    json_object_get(json_object_get(x, "counter"), "name"));

		if (na == NULL)
			return false;
		json_array_foreach(b, k, y)
		{
			const char *nb = json_string_value(json_object_get(
			    json_object_get(y, "counter"), "name"));

			if (nb == NULL || strcmp(na, nb) == 0)
				return false;
		}
	}
	return json_array_size(a) > 0 && json_array_size(b) > 0;
}

/* A counter source's name, driver and deviceSelector, checked as Kueue
 * does at load (the selector compiled: here, parsed by cueue's subset). */
static int check_counter(const struct ctl_config_dec *d,
    const struct ctl_config_path *sp, const json_t *cn)
{
	struct ctl_config_path p, sel, ds, dc;
	const char *name = json_string_value(json_object_get(cn, "name"));
	const char *drv = json_string_value(json_object_get(cn, "driver"));
	const char *x = json_string_value(json_object_get(
	    json_object_get(json_object_get(cn, "deviceSelector"), "cel"),
	    "expression"));
	struct cel_expr *cel;
	char *err = NULL;
	int rc = CU_OK;

	ctl_config_path_child(&p, sp, "counter", false);
	if (name == NULL || name[0] == '\0') {
		ctl_config_path_child(&sel, &p, "name", false);
		rc = ctl_config_fail(
		    d, CU_EINVAL, sel.look, "%s: Required value", sel.disp);
	}
	if (drv == NULL || drv[0] == '\0') {
		ctl_config_path_child(&sel, &p, "driver", false);
		rc = ctl_config_fail(
		    d, CU_EINVAL, sel.look, "%s: Required value", sel.disp);
	}
	ctl_config_path_child(&ds, &p, "deviceSelector", false);
	ctl_config_path_child(&dc, &ds, "cel", false);
	ctl_config_path_child(&sel, &dc, "expression", false);
	if (x == NULL || x[0] == '\0')
		return ctl_config_fail(
		    d, CU_EINVAL, sel.look, "%s: Required value", sel.disp);
	if ((cel = cel_parse(x, &err)) == NULL)
		rc = ctl_config_fail(d, CU_EINVAL, sel.look,
		    "%s: Invalid value: \"%s\": CEL compilation failed: %s",
		    sel.disp, x, err ? err : "");
	cu_free(err);
	cel_free(cel);
	return rc;
}

static int load_sources(const struct ctl_config_dec *d,
    const struct ctl_config_path *mp, const json_t *src,
    struct ctl_config_dcm *m)
{
	struct ctl_config_path p, base;
	size_t i;
	json_t *s;
	int rc = CU_OK;

	ctl_config_path_child(&base, mp, "sources", false);
	json_array_foreach(src, i, s)
	{
		bool counter = ctl_config_jget(s, "counter") != NULL;
		bool capacity = ctl_config_jget(s, "capacity") != NULL;

		ctl_config_path_index(&p, &base, i);
		if (!json_is_object(s) || counter == capacity) {
			rc = ctl_config_fail(d, CU_EINVAL, p.look,
			    "%s: Invalid value: exactly one of counter or "
			    "capacity must be set",
			    p.disp);
			continue;
		}
		if (counter && !d->c->dra.partitionable)
			rc = ctl_config_fail(d, CU_EINVAL, p.look,
			    "%s: Invalid value: counter sources require "
			    "KueueDRAIntegrationPartitionableDevices to be "
			    "enabled",
			    p.disp);
		if (capacity && !d->c->dra.consumable)
			rc = ctl_config_fail(d, CU_EINVAL, p.look,
			    "%s: Invalid value: capacity sources require "
			    "KueueDRAIntegrationConsumableCapacity to be "
			    "enabled",
			    p.disp);
		if (counter && check_counter(d, &p,
				   ctl_config_jget(s, "counter")) != CU_OK)
			rc = CU_EINVAL;
		m->counter_sources |= counter;
		m->capacity_sources |= capacity;
	}
	if (m->counter_sources && m->capacity_sources)
		rc = ctl_config_fail(d, CU_EINVAL, base.look,
		    "%s: Invalid value: counter and capacity sources cannot be "
		    "mixed in one mapping",
		    base.disp);
	if (json_array_size(src) > 0 &&
	    (m->sources = json_deep_copy(src)) == NULL)
		return cu_error_set(d->err, CU_ENOMEM, "out of memory");
	return rc;
}

/* Mapping i (its name and classes) against the ones before it. */
static int check_against_earlier(
    const struct ctl_config_dec *d, const struct ctl_config_path *p, size_t i)
{
	const struct ctl_config_dcm *all = d->c->dra.mappings, *m = &all[i];
	size_t j, a, b;
	int rc = CU_OK;

	for (j = 0; j < i; j++) {
		if (all[j].name != NULL && strcmp(all[j].name, m->name) == 0)
			rc = ctl_config_fail(d, CU_EINVAL, p->look,
			    "%s.name: Duplicate value: \"%s\"", p->disp,
			    m->name);
		for (a = 0; a < m->nclasses; a++)
			for (b = 0; b < all[j].nclasses; b++)
				if (strcmp(m->classes[a], all[j].classes[b]) ==
					0 &&
				    !counter_names_disjoint(
					m->sources, all[j].sources))
					rc = ctl_config_fail(d, CU_EINVAL,
					    p->look,
					    "%s.deviceClassNames[%zu]: Invalid "
					    "value: \"%s\": device class "
					    "already mapped to resource %s",
					    p->disp, a, m->classes[a],
					    all[j].name);
	}
	return rc;
}

static int load_mapping(const struct ctl_config_dec *d, const json_t *mj,
    const struct ctl_config_path *p, struct ctl_config_dcm *m)
{
	const char *name = json_string_value(ctl_config_jget(mj, "name"));
	const json_t *dcs = ctl_config_jget(mj, "deviceClassNames");
	struct ctl_config_path cp, base;
	char what[CTL_CONFIG_PATH_MAX + 8];
	size_t k, j;
	json_t *v;
	cu_error e;
	int rc = CU_OK, rc2;

	snprintf(what, sizeof(what), "%s.name", p->disp);
	if (name == NULL || api_validate_label_key(name, what, &e) != CU_OK)
		rc = ctl_config_fail(d, CU_EINVAL, p->look, "%s",
		    name == NULL ? "name: Required value" : e.msg);
	if ((m->name = cu_strdup(name != NULL ? name : "")) == NULL)
		return cu_error_set(d->err, CU_ENOMEM, "out of memory");
	ctl_config_path_child(&base, p, "deviceClassNames", false);
	if (json_array_size(dcs) < 1 || json_array_size(dcs) > MAX_CLASSES)
		rc = ctl_config_fail(d, CU_EINVAL, base.look,
		    "%s: Invalid value: %zu: must have between 1 and %d items",
		    base.disp, json_array_size(dcs), MAX_CLASSES);
	m->classes = cu_calloc(json_array_size(dcs) + 1, sizeof(char *));
	if (m->classes == NULL)
		return cu_error_set(d->err, CU_ENOMEM, "out of memory");
	json_array_foreach(dcs, k, v)
	{
		const char *dc = json_string_value(v);

		ctl_config_path_index(&cp, &base, k);
		if (api_validate_label_key(dc, cp.disp, &e) != CU_OK) {
			rc =
			    ctl_config_fail(d, CU_EINVAL, cp.look, "%s", e.msg);
			continue;
		}
		for (j = 0; j < m->nclasses; j++)
			if (strcmp(m->classes[j], dc) == 0)
				break;
		if (j < m->nclasses) {
			rc = ctl_config_fail(d, CU_EINVAL, cp.look,
			    "%s: Duplicate value: \"%s\"", cp.disp, dc);
			continue;
		}
		if ((m->classes[m->nclasses] = cu_strdup(dc)) == NULL)
			return cu_error_set(d->err, CU_ENOMEM, "out of memory");
		m->nclasses++;
	}
	rc2 = load_sources(d, p, ctl_config_jget(mj, "sources"), m);
	return rc2 != CU_OK ? rc2 : rc;
}

int ctl_config_load_dra(const struct ctl_config_dec *d, const json_t *root)
{
	struct ctl_config *c = d->c;
	const json_t *fg = ctl_config_jget(root, "featureGates");
	const json_t *maps = ctl_config_jget(
	    ctl_config_jget(root, "resources"), "deviceClassMappings");
	struct ctl_config_path p, base = {0};
	size_t i, n = json_array_size(maps);
	int rc, rc2;

	c->dra.enabled = ctl_config_get_bool(fg, "KueueDRAIntegration", true);
	c->dra.extended = ctl_config_get_bool(
	    fg, "KueueDRAIntegrationExtendedResource", true);
	c->dra.partitionable = ctl_config_get_bool(
	    fg, "KueueDRAIntegrationPartitionableDevices", true);
	c->dra.consumable = ctl_config_get_bool(
	    fg, "KueueDRAIntegrationConsumableCapacity", false);
	c->dra.reject_disabled = ctl_config_get_bool(
	    fg, "KueueDRARejectWorkloadsWhenDRADisabled", true);
	rc = check_gate_deps(d, root);
	ctl_config_path_set(&base, "resources.deviceClassMappings");
	if (n > MAX_MAPPINGS)
		rc = ctl_config_fail(d, CU_EINVAL, base.look,
		    "%s: Too many: %zu: must have at most %d items", base.disp,
		    n, MAX_MAPPINGS);
	c->dra.mappings = cu_calloc(n + 1, sizeof(*c->dra.mappings));
	if (c->dra.mappings == NULL)
		return cu_error_set(d->err, CU_ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		ctl_config_path_index(&p, &base, i);
		c->dra.nmappings = i + 1;
		rc2 = load_mapping(
		    d, json_array_get(maps, i), &p, &c->dra.mappings[i]);
		if (rc2 == CU_ENOMEM)
			return rc2;
		if (rc2 == CU_OK)
			rc2 = check_against_earlier(d, &p, i);
		if (rc2 != CU_OK && rc == CU_OK)
			rc = rc2;
	}
	return rc;
}

void ctl_config_dispose_dra(struct ctl_config *c)
{
	size_t i, k;

	for (i = 0; i < c->dra.nmappings; i++) {
		struct ctl_config_dcm *m = &c->dra.mappings[i];

		cu_free(m->name);
		for (k = 0; k < m->nclasses; k++)
			cu_free(m->classes[k]);
		cu_free(m->classes);
		json_decref(m->sources);
	}
	cu_free(c->dra.mappings);
}

json_t *ctl_config_dra_json(const struct ctl_config *c)
{
	json_t *a = json_array();
	size_t i, k;

	for (i = 0; a != NULL && i < c->dra.nmappings; i++) {
		const struct ctl_config_dcm *m = &c->dra.mappings[i];
		json_t *o = json_pack(
		    "{s:s, s:[]}", "name", m->name, "deviceClassNames");
		json_t *dcs = json_object_get(o, "deviceClassNames");

		if (o == NULL || json_array_append_new(a, o) != 0) {
			json_decref(a);
			return NULL;
		}
		for (k = 0; k < m->nclasses; k++)
			if (json_array_append_new(
				dcs, json_string(m->classes[k])) != 0) {
				json_decref(a);
				return NULL;
			}
		if (m->sources != NULL &&
		    json_object_set(o, "sources", m->sources) != 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}
