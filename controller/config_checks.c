/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/config_checks.c - Configuration checks that are not about
 * types: the name and bind-address validators, what Kueue's validation
 * refuses in sections cueue does not act on (unknown feature gates),
 * fairSharing (loaded and validated as Kueue does), and the warnings for fields
 * cueue loads but does not act on, from the compatibility table
 * (controller/compat.c).
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "controller/config_int.h"

/* ---- validation helpers --------------------------------------------- */

bool ctl_config_is_dns1123_label(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > 63)
		return false;
	for (i = 0; i < n; i++) {
		char ch = s[i];
		bool alnum =
		    (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');

		if (!alnum && !(ch == '-' && i > 0 && i + 1 < n))
			return false;
	}
	return true;
}

bool ctl_config_is_dns1035_label(const char *s)
{
	return ctl_config_is_dns1123_label(s) && s[0] >= 'a' && s[0] <= 'z';
}

bool ctl_config_is_dns1123_subdomain(const char *s)
{
	size_t n = strlen(s);
	const char *p = s;

	if (n == 0 || n > 253)
		return false;
	for (;;) {
		const char *dot = strchr(p, '.');
		char part[64];
		size_t len = dot != NULL ? (size_t)(dot - p) : strlen(p);

		if (len == 0 || len > 63)
			return false;
		memcpy(part, p, len);
		part[len] = '\0';
		if (!ctl_config_is_dns1123_label(part))
			return false;
		if (dot == NULL)
			return true;
		p = dot + 1;
	}
}

/* "host:port", "[v6]:port" or ":port" with port 0..65535; "0" is how
 * controller-runtime spells "disabled" for metrics and probes. */
bool ctl_config_valid_bind_address(const char *s)
{
	const char *colon = strrchr(s, ':');
	char *end;
	long port;

	if (strcmp(s, "0") == 0)
		return true;
	if (colon == NULL || colon[1] == '\0')
		return false;
	if (s[0] == '[' && (colon == s || colon[-1] != ']'))
		return false;
	if (s[0] != '[' && memchr(s, ':', (size_t)(colon - s)) != NULL)
		return false; /* bare IPv6 without brackets is ambiguous */
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	return *end == '\0' && errno == 0 && isdigit((unsigned char)colon[1]) &&
	       port >= 0 && port <= 65535;
}

/* The value at a dotted path under root, or NULL. */
static const json_t *jpath(const json_t *root, const char *path)
{
	char key[128];
	const char *dot;

	while (root != NULL && (dot = strchr(path, '.')) != NULL) {
		size_t n = (size_t)(dot - path);

		if (n >= sizeof(key))
			return NULL;
		memcpy(key, path, n);
		key[n] = '\0';
		root = ctl_config_jget(root, key);
		path = dot + 1;
	}
	return root != NULL ? ctl_config_jget(root, path) : NULL;
}

static bool nonempty(const json_t *v)
{
	if (v == NULL || json_is_null(v))
		return false;
	if (json_is_string(v))
		return json_string_value(v)[0] != '\0';
	if (json_is_array(v))
		return json_array_size(v) > 0;
	if (json_is_object(v))
		return json_object_size(v) > 0;
	return true;
}

/* Kueue refuses a gate it does not know; cueue too. A known gate that
 * cueue does not act on loads with a warning. */
static int check_gates(const struct ctl_config_dec *d, const json_t *root)
{
	const json_t *gates = ctl_config_jget(root, "featureGates");
	const char *name;
	json_t *v;
	int rc, first = CU_OK;

	json_object_foreach((json_t *)gates, name, v)
	{
		struct ctl_config_path p, base = {0};
		char *what;

		ctl_config_path_set(&base, "featureGates");
		ctl_config_path_child(&p, &base, name, true);
		if (!ctl_compat_gate_known(name)) {
			rc = ctl_config_fail(d, CU_EINVAL, p.look,
			    "%s: unrecognized feature gate: %s", p.disp, name);
			if (first == CU_OK)
				first = rc;
			continue;
		}
		if (ctl_compat_gate_honoured(name))
			continue;
		what = cu_asprintf("not acted on by cueue: it behaves as "
				   "without %s=%s",
		    name, json_is_true(v) ? "true" : "false");
		if (what == NULL)
			return cu_error_set(d->err, CU_ENOMEM, "out of memory");
		rc = ctl_config_add_warning(d, p.look, p.disp, what);
		cu_free(what);
		if (rc != CU_OK)
			return rc;
	}
	return first;
}

static const char *const fair_names[] = {
    "LessThanOrEqualToFinalShare", "LessThanInitialShare"};

/* fairSharing: on in v1beta2 when present, in v1beta1 with enable: true
 * (where an empty strategy list defaults to both). Kueue accepts exactly
 * three lists: [LessThanOrEqualToFinalShare], [LessThanInitialShare] and
 * both in that order; anything else is refused naming the field. */
static int load_fair_sharing(const struct ctl_config_dec *d, const json_t *root)
{
	const json_t *fs = ctl_config_jget(root, "fairSharing");
	const json_t *ps = ctl_config_jget(fs, "preemptionStrategies");
	const char *path = "fairSharing.preemptionStrategies";
	struct ctl_config *c = d->c;
	size_t i, n = json_array_size(ps);
	cu_buf shown;
	bool ok;
	int rc;

	memset(&c->fair_sharing, 0, sizeof(c->fair_sharing));
	if (fs == NULL || (d->version == CTL_CONFIG_VER_1 &&
			      !ctl_config_get_bool(fs, "enable", false)))
		return CU_OK;
	c->fair_sharing.enable = true;
	if (n == 0 && d->version == CTL_CONFIG_VER_1) {
		c->fair_sharing.nstrategies = 2;
		c->fair_sharing.strategies[0] = CTL_FAIR_LE_FINAL_SHARE;
		c->fair_sharing.strategies[1] = CTL_FAIR_LT_INITIAL_SHARE;
		return CU_OK;
	}
	if (n == 0)
		return ctl_config_fail(d, CU_EINVAL, path,
		    "%s: Required value: must be specified", path);
	ok = n <= 2;
	for (i = 0; ok && i < n; i++) {
		const char *s = json_string_value(json_array_get(ps, i));
		size_t k = n == 2 ? i : (strcmp(s, fair_names[1]) == 0 ? 1 : 0);

		ok = strcmp(s, fair_names[k]) == 0;
		c->fair_sharing.strategies[i] = (enum ctl_fair_strategy)k;
	}
	if (ok) {
		c->fair_sharing.nstrategies = n;
		return CU_OK;
	}
	/* Go's field.NotSupported prints the list as %#v does. */
	cu_buf_init(&shown, 4096);
	rc = cu_buf_adds(&shown, "[]v1beta2.PreemptionStrategy{");
	for (i = 0; rc == CU_OK && i < n; i++)
		rc = cu_buf_addf(&shown, "%s\"%s\"", i ? ", " : "",
		    json_string_value(json_array_get(ps, i)));
	if (rc == CU_OK)
		rc = cu_buf_adds(&shown, "}");
	if (rc != CU_OK) {
		cu_buf_dispose(&shown);
		return cu_error_set(d->err, CU_ENOMEM, "out of memory");
	}
	rc = ctl_config_fail(d, CU_EINVAL, path,
	    "%s: Unsupported value: %s: supported values: \"%s\", \"%s\", "
	    "\"%s,%s\"",
	    path, shown.ptr, fair_names[0], fair_names[1], fair_names[0],
	    fair_names[1]);
	cu_buf_dispose(&shown);
	return rc;
}

/* admissionFairSharing, refused as Kueue's validation refuses it: a
 * negative half-life or sampling interval (0 takes the default: no history,
 * 5m), a negative resource weight. Loaded into c->admission_fair_sharing;
 * on only when the section is present and featureGates does not turn
 * AdmissionFairSharing off (a beta gate, on by default). */
static int load_afs(const struct ctl_config_dec *d, const json_t *root)
{
	const json_t *afs = ctl_config_jget(root, "admissionFairSharing");
	const json_t *rw = ctl_config_jget(afs, "resourceWeights");
	const json_t *gate = jpath(root, "featureGates.AdmissionFairSharing");
	struct ctl_config *c = d->c;
	struct ctl_config_path p, base = {0};
	const char *name;
	size_t n = 0;
	json_t *v;

	memset(
	    &c->admission_fair_sharing, 0, sizeof(c->admission_fair_sharing));
	if (afs == NULL || json_is_null(afs))
		return CU_OK;
	if (ctl_config_get_dur(afs, "usageHalfLifeTime", 0) < 0)
		return ctl_config_fail(d, CU_EINVAL,
		    "admissionFairSharing.usageHalfLifeTime",
		    "admissionFairSharing.usageHalfLifeTime: Invalid value: "
		    "must be greater than or equal to 0");
	if (ctl_config_get_dur(afs, "usageSamplingInterval", 1) < 0)
		return ctl_config_fail(d, CU_EINVAL,
		    "admissionFairSharing.usageSamplingInterval",
		    "admissionFairSharing.usageSamplingInterval: Invalid "
		    "value: must be greater than 0");
	ctl_config_path_set(&base, "admissionFairSharing.resourceWeights");
	json_object_foreach((json_t *)rw, name, v)
	{
		if (json_number_value(v) >= 0)
			continue;
		ctl_config_path_child(&p, &base, name, true);
		return ctl_config_fail(d, CU_EINVAL, p.look,
		    "%s: Invalid value: must be greater than or equal to 0",
		    p.disp);
	}
	c->admission_fair_sharing.enable = !json_is_false(gate);
	c->admission_fair_sharing.half_life_ns =
	    ctl_config_get_dur(afs, "usageHalfLifeTime", 0);
	c->admission_fair_sharing.sampling_ns = ctl_config_get_dur(
	    afs, "usageSamplingInterval", INT64_C(300000000000));
	if (json_object_size(rw) == 0)
		return CU_OK;
	c->admission_fair_sharing.resources =
	    cu_calloc(json_object_size(rw), sizeof(char *));
	c->admission_fair_sharing.weights =
	    cu_calloc(json_object_size(rw), sizeof(double));
	if (c->admission_fair_sharing.resources == NULL ||
	    c->admission_fair_sharing.weights == NULL)
		return cu_error_set(d->err, CU_ENOMEM, "out of memory");
	json_object_foreach((json_t *)rw, name, v)
	{
		c->admission_fair_sharing.resources[n] = cu_strdup(name);
		if (c->admission_fair_sharing.resources[n] == NULL)
			return cu_error_set(d->err, CU_ENOMEM, "out of memory");
		c->admission_fair_sharing.weights[n] = json_number_value(v);
		c->admission_fair_sharing.nweights = ++n;
	}
	return CU_OK;
}

/* One warning per field of the compatibility table (controller/compat.c)
 * that is set, or defaulted on, and that cueue does not act on. */
int ctl_config_warn_ignored(const struct ctl_config_dec *d, const json_t *root)
{
	size_t i;
	int rc;

	for (i = 0; i < ctl_compat_count; i++) {
		const struct ctl_compat *e = &ctl_compat_table[i];
		const json_t *v;
		bool warn = false;
		char *what;

		if (strcmp(e->kind, "Configuration") != 0)
			continue;
		v = jpath(root, e->field);
		switch (e->warn) {
		case CTL_COMPAT_WARN_NEVER:
		case CTL_COMPAT_WARN_EVENT:
		case CTL_COMPAT_WARN_TABLE_ONLY:
			break;
		case CTL_COMPAT_WARN_IF_SET:
			warn = v != NULL && !json_is_null(v);
			break;
		case CTL_COMPAT_WARN_IF_NONEMPTY:
			warn = nonempty(v);
			break;
		case CTL_COMPAT_WARN_IF_TRUE:
			warn = json_is_true(v);
			break;
		case CTL_COMPAT_WARN_PODS_READY:
			warn = d->c->wait_for_pods_ready.enable;
			break;
		case CTL_COMPAT_WARN_FAIR_SHARING:
			warn = v != NULL && !json_is_null(v) &&
			       (d->version == CTL_CONFIG_VER_2 ||
				   ctl_config_get_bool(v, "enable", false));
			break;
		}
		if (!warn)
			continue;
		what = cu_asprintf("%s%s%s%s",
		    e->level == CTL_COMPAT_PARTIAL ? "partly supported by cueue"
						   : "not acted on by cueue",
		    v == NULL ? " (on by default)" : "",
		    e->note[0] != '\0' ? ": " : "", e->note);
		if (what == NULL)
			return cu_error_set(d->err, CU_ENOMEM, "out of memory");
		rc = ctl_config_add_warning(d, e->field, e->field, what);
		cu_free(what);
		if (rc != CU_OK)
			return rc;
	}
	{
		int r1 = load_fair_sharing(d, root);
		int r2 = r1 == CU_ENOMEM ? r1 : load_afs(d, root);
		int r3 = r2 == CU_ENOMEM ? r2 : check_gates(d, root);

		if (r2 == CU_ENOMEM || r3 == CU_ENOMEM)
			return CU_ENOMEM;
		return r1 != CU_OK ? r1 : r2 != CU_OK ? r2 : r3;
	}
}
