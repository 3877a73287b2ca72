/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/config_labels.c - metrics.customLabels (Kueue's
 * CustomMetricLabels, alpha and off by default): each entry's name, the
 * label or annotation it is read from, the kind of object (ClusterQueue,
 * LocalQueue, Cohort, Workload) and its tracked values, validated as
 * Kueue's configuration validation does, then printed back for
 * --check-config. The metrics registry (controller/metrics.c) adds them to
 * Kueue's metric families when the gate is on.
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "api/labelselector.h"
#include "controller/config_int.h"

#define MAX_TOTAL 20
#define MAX_PER_KIND 6
#define MAX_WORKLOAD 2
#define MAX_TRACKED 16
#define MAX_TRACKED_WORKLOAD 12

static const char *const kind_names[] = {
    [CTL_CUSTOM_CLUSTER_QUEUE] = "ClusterQueue",
    [CTL_CUSTOM_COHORT] = "Cohort",
    [CTL_CUSTOM_LOCAL_QUEUE] = "LocalQueue",
    [CTL_CUSTOM_WORKLOAD] = "Workload",
};

static bool valid_name(const char *s)
{
	size_t i;

	if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
		return false;
	for (i = 1; s[i] != '\0'; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
			(s[i] >= 'A' && s[i] <= 'Z') ||
			(s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

static int load_tracked(const struct ctl_config_dec *d,
    const struct ctl_config_path *p, const json_t *tv,
    struct ctl_config_custom_label *l)
{
	struct ctl_config_path base, ip;
	size_t i, k,
	    max = l->kind == CTL_CUSTOM_WORKLOAD ? MAX_TRACKED_WORKLOAD
						 : MAX_TRACKED;
	json_t *v;
	int rc = CU_OK;

	ctl_config_path_child(&base, p, "trackedValues", false);
	if (l->kind == CTL_CUSTOM_WORKLOAD && json_array_size(tv) == 0)
		rc = ctl_config_fail(d, CU_EINVAL, p->look,
		    "%s: Required value: must be set for sourceKind Workload",
		    base.disp);
	if (json_array_size(tv) > max)
		rc = ctl_config_fail(d, CU_EINVAL, base.look,
		    "%s: Too many: %zu: must have at most %zu items", base.disp,
		    json_array_size(tv), max);
	l->tracked = cu_calloc(json_array_size(tv) + 1, sizeof(char *));
	if (l->tracked == NULL)
		return cu_error_set(d->err, CU_ENOMEM, "out of memory");
	json_array_foreach(tv, i, v)
	{
		ctl_config_path_index(&ip, &base, i);
		for (k = 0; k < l->ntracked; k++)
			if (strcmp(l->tracked[k], json_string_value(v)) == 0)
				break;
		if (k < l->ntracked) {
			rc = ctl_config_fail(d, CU_EINVAL, ip.look,
			    "%s: Duplicate value: \"%s\"", ip.disp,
			    json_string_value(v));
			continue;
		}
		if ((l->tracked[l->ntracked] =
			    cu_strdup(json_string_value(v))) == NULL)
			return cu_error_set(d->err, CU_ENOMEM, "out of memory");
		l->ntracked++;
	}
	return rc;
}

static int load_label(const struct ctl_config_dec *d, const json_t *e,
    const struct ctl_config_path *p, struct ctl_config_custom_label *l)
{
	const char *name = json_string_value(ctl_config_jget(e, "name"));
	const char *lk =
	    json_string_value(ctl_config_jget(e, "sourceLabelKey"));
	const char *ak =
	    json_string_value(ctl_config_jget(e, "sourceAnnotationKey"));
	const char *kind = json_string_value(ctl_config_jget(e, "sourceKind"));
	char what[CTL_CONFIG_PATH_MAX + 32];
	cu_error ve;
	size_t k;
	int rc = CU_OK, rc2;

	l->kind = CTL_CUSTOM_CLUSTER_QUEUE;
	for (k = 0; kind != NULL && kind[0] != '\0' && k < 4; k++)
		if (strcmp(kind, kind_names[k]) == 0) {
			l->kind = (enum ctl_custom_kind)k;
			break;
		}
	if (kind != NULL && kind[0] != '\0' && k == 4)
		rc = ctl_config_fail(d, CU_EINVAL, p->look,
		    "%s.sourceKind: Unsupported value: \"%s\": supported "
		    "values: \"ClusterQueue\", \"Cohort\", \"LocalQueue\", "
		    "\"Workload\"",
		    p->disp, kind);
	if (name == NULL || name[0] == '\0')
		rc = ctl_config_fail(
		    d, CU_EINVAL, p->look, "%s.name: Required value", p->disp);
	else if (!valid_name(name))
		rc = ctl_config_fail(d, CU_EINVAL, p->look,
		    "%s.name: Invalid value: \"%s\": must match "
		    "^[a-zA-Z][a-zA-Z0-9_]*$",
		    p->disp, name);
	if (lk != NULL && ak != NULL)
		rc = ctl_config_fail(d, CU_EINVAL, p->look,
		    "%s: Invalid value: sourceLabelKey and sourceAnnotationKey "
		    "are mutually exclusive",
		    p->disp);
	l->annotation = ak != NULL;
	snprintf(what, sizeof(what), "%s.%s", p->disp,
	    ak != NULL ? "sourceAnnotationKey" : "sourceLabelKey");
	if ((lk != NULL || ak != NULL) &&
	    api_validate_label_key(ak != NULL ? ak : lk, what, &ve) != CU_OK)
		rc = ctl_config_fail(d, CU_EINVAL, p->look, "%s", ve.msg);
	l->name = cu_strdup(name != NULL ? name : "");
	l->key = cu_strdup(ak != NULL	? ak
			   : lk != NULL ? lk
			   : l->name	? l->name
					: "");
	if (l->name == NULL || l->key == NULL)
		return cu_error_set(d->err, CU_ENOMEM, "out of memory");
	rc2 = load_tracked(d, p, ctl_config_jget(e, "trackedValues"), l);
	return rc2 != CU_OK ? rc2 : rc;
}

int ctl_config_load_labels(const struct ctl_config_dec *d, const json_t *root)
{
	struct ctl_config *c = d->c;
	const json_t *cl =
	    ctl_config_jget(ctl_config_jget(root, "metrics"), "customLabels");
	struct ctl_config_path p, base = {0};
	size_t i, k, n = json_array_size(cl), per[4] = {0};
	int rc = CU_OK, rc2;

	c->metrics.custom_enable = ctl_config_get_bool(
	    ctl_config_jget(root, "featureGates"), "CustomMetricLabels", false);
	ctl_config_path_set(&base, "metrics.customLabels");
	if (n > MAX_TOTAL)
		rc = ctl_config_fail(d, CU_EINVAL, base.look,
		    "%s: Too many: %zu: must have at most %d items", base.disp,
		    n, MAX_TOTAL);
	c->metrics.custom = cu_calloc(n + 1, sizeof(*c->metrics.custom));
	if (c->metrics.custom == NULL)
		return cu_error_set(d->err, CU_ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		struct ctl_config_custom_label *l = &c->metrics.custom[i];

		ctl_config_path_index(&p, &base, i);
		c->metrics.ncustom = i + 1;
		rc2 = load_label(d, json_array_get(cl, i), &p, l);
		if (rc2 == CU_ENOMEM)
			return rc2;
		rc = ctl_config_keep(rc, rc2);
		for (k = 0; k < i; k++)
			if (strcmp(c->metrics.custom[k].name, l->name) == 0 &&
			    l->name[0] != '\0')
				rc = ctl_config_keep(
				    rc, ctl_config_fail(d, CU_EINVAL, p.look,
					    "%s.name: Duplicate value: \"%s\"",
					    p.disp, l->name));
		if (++per[l->kind] == (l->kind == CTL_CUSTOM_WORKLOAD
					      ? MAX_WORKLOAD
					      : MAX_PER_KIND) +
					  1)
			rc = ctl_config_keep(rc,
			    ctl_config_fail(d, CU_EINVAL, p.look,
				"%s: Too many: must have at most %d items of "
				"sourceKind %s",
				base.disp,
				l->kind == CTL_CUSTOM_WORKLOAD ? MAX_WORKLOAD
							       : MAX_PER_KIND,
				kind_names[l->kind]));
	}
	return rc;
}

void ctl_config_dispose_labels(struct ctl_config *c)
{
	size_t i, k;

	for (i = 0; i < c->metrics.ncustom; i++) {
		struct ctl_config_custom_label *l = &c->metrics.custom[i];

		cu_free(l->name);
		cu_free(l->key);
		for (k = 0; k < l->ntracked; k++)
			cu_free(l->tracked[k]);
		cu_free(l->tracked);
	}
	cu_free(c->metrics.custom);
}

json_t *ctl_config_labels_json(const struct ctl_config *c)
{
	json_t *a = json_array();
	size_t i, k;

	for (i = 0; a != NULL && i < c->metrics.ncustom; i++) {
		const struct ctl_config_custom_label *l = &c->metrics.custom[i];
		json_t *o = json_pack("{s:s, s:s, s:s, s:[]}", "name", l->name,
		    l->annotation ? "sourceAnnotationKey" : "sourceLabelKey",
		    l->key, "sourceKind", kind_names[l->kind], "trackedValues");

		if (o == NULL || json_array_append_new(a, o) != 0) {
			json_decref(a);
			return NULL;
		}
		for (k = 0; k < l->ntracked; k++)
			if (json_array_append_new(
				json_object_get(o, "trackedValues"),
				json_string(l->tracked[k])) != 0) {
				json_decref(a);
				return NULL;
			}
	}
	return a;
}
