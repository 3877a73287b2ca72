/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/config.c - loads Kueue's `Configuration` file into struct
 * ctl_config: YAML -> JSON (api/yaml), a strict schema walk that reports
 * unknown fields and wrong types with their path and line, extraction with
 * Kueue's defaults (apis/config/v1beta2/defaults.go, and the v1beta1
 * defaulting + conversion for v1beta1 files), validation, and the YAML
 * printer behind `cueue-controller --check-config`.
 *
 * This file holds the entry points (loading, version detection, dispose,
 * the operator namespace) and Go's durations; config_int.h says which of
 * the loader's other files does what.
 */
#include "controller/config.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "api/yaml.h"
#include "controller/config_int.h"

/* ---- durations (Go's time.ParseDuration / Duration.String) ----------- */

static uint64_t duration_unit(const char *u, size_t n)
{
	static const struct {
		const char *name;
		uint64_t ns;
	} units[] = {
	    {"ns", 1},
	    {"us", NS_PER_US},
	    {"\xc2\xb5s", NS_PER_US}, /* U+00B5 micro sign */
	    {"\xce\xbcs", NS_PER_US}, /* U+03BC Greek mu */
	    {"ms", NS_PER_MS},
	    {"s", NS_PER_S},
	    {"m", NS_PER_M},
	    {"h", NS_PER_H},
	};
	size_t i;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strlen(units[i].name) == n &&
		    memcmp(units[i].name, u, n) == 0)
			return units[i].ns;
	return 0;
}

int ctl_config_parse_duration(const char *s, int64_t *out, cu_error *err)
{
	const char *p = s;
	bool neg = false;
	uint64_t total = 0;

	if (*p == '-' || *p == '+')
		neg = *p++ == '-';
	if (strcmp(p, "0") == 0) {
		*out = 0;
		return CU_OK;
	}
	if (*p == '\0')
		return cu_error_set(
		    err, CU_EPARSE, "invalid duration \"%s\"", s);
	while (*p != '\0') {
		uint64_t v = 0, f = 0, unit;
		double scale = 1;
		bool pre = false, post = false;
		const char *u;

		while (isdigit((unsigned char)*p)) {
			if (v > (UINT64_MAX - 9) / 10)
				return cu_error_set(err, CU_ERANGE,
				    "invalid duration \"%s\": out of range", s);
			v = v * 10 + (uint64_t)(*p++ - '0');
			pre = true;
		}
		if (*p == '.') {
			p++;
			while (isdigit((unsigned char)*p)) {
				/* Digits beyond double precision cannot change
				 * the result; Go drops them as well. */
				if (scale < 1e18) {
					f = f * 10 + (uint64_t)(*p - '0');
					scale *= 10;
				}
				p++;
				post = true;
			}
		}
		if (!pre && !post)
			return cu_error_set(
			    err, CU_EPARSE, "invalid duration \"%s\"", s);
		u = p;
		while (*p != '\0' && *p != '.' && !isdigit((unsigned char)*p))
			p++;
		if (p == u)
			return cu_error_set(err, CU_EPARSE,
			    "missing unit in duration \"%s\"", s);
		unit = duration_unit(u, (size_t)(p - u));
		if (unit == 0)
			return cu_error_set(err, CU_EPARSE,
			    "unknown unit \"%.*s\" in duration \"%s\"",
			    (int)(p - u), u, s);
		if (v > (uint64_t)INT64_MAX / unit)
			return cu_error_set(err, CU_ERANGE,
			    "invalid duration \"%s\": out of range", s);
		v *= unit;
		if (f > 0)
			v += (uint64_t)((double)f * ((double)unit / scale));
		if (v > (uint64_t)INT64_MAX || total > (uint64_t)INT64_MAX - v)
			return cu_error_set(err, CU_ERANGE,
			    "invalid duration \"%s\": out of range", s);
		total += v;
	}
	*out = neg ? -(int64_t)total : (int64_t)total;
	return CU_OK;
}

/* Seconds-and-fraction part of Go's formatting: "1.5", "30", "0.25". */
static int format_frac(
    char *out, size_t size, uint64_t whole, uint64_t frac, int digits)
{
	char f[24];
	int n;

	if (frac == 0)
		return snprintf(out, size, "%" PRIu64, whole);
	n = snprintf(f, sizeof(f), "%0*" PRIu64, digits, frac);
	while (n > 0 && f[n - 1] == '0')
		f[--n] = '\0';
	return snprintf(out, size, "%" PRIu64 ".%s", whole, f);
}

void ctl_config_format_duration(int64_t ns, char *out, size_t size)
{
	uint64_t u;
	const char *sign = ns < 0 ? "-" : "";
	char num[48];

	if (size == 0)
		return;
	if (ns == 0) {
		snprintf(out, size, "0s");
		return;
	}
	u = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	if (u < (uint64_t)NS_PER_US) {
		snprintf(out, size, "%s%" PRIu64 "ns", sign, u);
	} else if (u < (uint64_t)NS_PER_MS) {
		format_frac(num, sizeof(num), u / 1000, u % 1000, 3);
		snprintf(out, size, "%s%s\xc2\xb5s", sign, num);
	} else if (u < (uint64_t)NS_PER_S) {
		format_frac(num, sizeof(num), u / 1000000, u % 1000000, 6);
		snprintf(out, size, "%s%sms", sign, num);
	} else {
		uint64_t h = u / (uint64_t)NS_PER_H;
		uint64_t m = (u / (uint64_t)NS_PER_M) % 60;
		uint64_t rem = u % (uint64_t)NS_PER_M;

		format_frac(num, sizeof(num), rem / (uint64_t)NS_PER_S,
		    rem % (uint64_t)NS_PER_S, 9);
		if (h > 0)
			snprintf(out, size, "%s%" PRIu64 "h%" PRIu64 "m%ss",
			    sign, h, m, num);
		else if (m > 0)
			snprintf(out, size, "%s%" PRIu64 "m%ss", sign, m, num);
		else
			snprintf(out, size, "%s%ss", sign, num);
	}
}

static int load_json(struct ctl_config *out, const json_t *root,
    const api_yaml_lines *lines, const char *name, struct ctl_config_errs *errs,
    cu_error *err)
{
	struct ctl_config_dec d = {name, lines, 0, out, err, errs};
	json_t *av, *kind;
	const char *api;
	int rc;

	if (!json_is_object(root))
		return ctl_config_fail(&d, CU_EPARSE, NULL,
		    "expected a Configuration mapping, got %s",
		    root != NULL ? ctl_config_type_name(root) : "nothing");
	av = json_object_get(root, "apiVersion");
	kind = json_object_get(root, "kind");
	if (!json_is_string(av) || !json_is_string(kind))
		return ctl_config_fail(&d, CU_EPARSE,
		    av == NULL ? NULL : "apiVersion",
		    "apiVersion and kind must be set (kind: Configuration, "
		    "apiVersion: " CTL_CONFIG_V1BETA2 ")");
	api = json_string_value(av);
	if (strcmp(api, CTL_CONFIG_V1BETA2) == 0)
		d.version = CTL_CONFIG_VER_2;
	else if (strcmp(api, CTL_CONFIG_V1BETA1) == 0)
		d.version = CTL_CONFIG_VER_1;
	else
		return ctl_config_fail(&d, CU_EPARSE, "apiVersion",
		    "apiVersion \"%s\" is not supported: expected "
		    "\"" CTL_CONFIG_V1BETA2 "\" or \"" CTL_CONFIG_V1BETA1 "\"",
		    api);
	if (strcmp(json_string_value(kind), "Configuration") != 0)
		return ctl_config_fail(&d, CU_EPARSE, "kind",
		    "kind \"%s\" is not supported: expected \"Configuration\"",
		    json_string_value(kind));
	/* Values of the wrong type cannot be read: the schema's errors
	 * (all of them) end the run. */
	rc = ctl_config_check_schema(&d, root);
	if (rc != CU_OK)
		return rc;
	out->api_version = cu_strdup(api);
	if (out->api_version == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	return ctl_config_load_root(&d, root);
}

/* ---- public API ------------------------------------------------------ */

/* Configuration files are small; tight limits keep a hostile ConfigMap
 * from costing memory before the strict checks even run. */
static const struct api_yaml_limits config_limits = {
    .max_bytes = (size_t)1 << 20,
    .max_depth = 32,
    .max_nodes = 100000,
};

void ctl_config_errors_free(char **errors, size_t n)
{
	size_t i;

	for (i = 0; errors != NULL && i < n; i++)
		cu_free(errors[i]);
	cu_free(errors);
}

/* Decode root (NULL: the YAML failed, err says why) into out; every error
 * into *errors when asked, and "; and N more errors" on err's first. */
static int finish_load(struct ctl_config *out, json_t *root,
    api_yaml_lines *lines, const char *name, char ***errors, size_t *nerrors,
    int rc, cu_error *err)
{
	struct ctl_config_errs errs = {NULL, 0};

	if (rc == CU_OK)
		rc = load_json(out, root, lines, name, &errs, err);
	json_decref(root);
	api_yaml_lines_free(lines);
	if (rc != CU_OK && errs.n == 0 &&
	    (errs.lines = cu_calloc(1, sizeof(char *))) != NULL &&
	    (errs.lines[0] = cu_strdup(err->msg)) != NULL)
		errs.n = 1; /* a YAML or memory error, not a field's */
	if (rc != CU_OK && errs.n > 1) {
		char first[CU_ERROR_MSG_MAX];

		snprintf(first, sizeof(first), "%s", err->msg);
		cu_error_set(err, rc, "%s; and %zu more error%s", first,
		    errs.n - 1, errs.n > 2 ? "s" : "");
	}
	if (rc != CU_OK)
		ctl_config_dispose(out);
	if (errors != NULL) {
		*errors = errs.lines;
		*nerrors = errs.n;
	} else {
		ctl_config_errors_free(errs.lines, errs.n);
	}
	return rc;
}

static void init_out(struct ctl_config *out)
{
	memset(out, 0, sizeof(*out));
	api_selector_init(&out->managed_jobs_ns_selector);
	api_selector_init(&out->metrics.local_queue_selector);
}

int ctl_config_load_buffer_all(struct ctl_config *out, const char *buf,
    size_t len, const char *name, char ***errors, size_t *nerrors,
    cu_error *err)
{
	json_t *root = NULL;
	api_yaml_lines *lines = NULL;
	cu_error e;
	int rc;

	init_out(out);
	cu_error_clear(&e);
	rc = api_yaml_load(&root, &lines, buf, len, &config_limits, &e);
	if (rc != CU_OK)
		cu_error_set(err, rc, "%s%s%s", name ? name : "",
		    name ? ": " : "", e.msg);
	return finish_load(out, root, lines, name, errors, nerrors, rc, err);
}

int ctl_config_load_buffer(struct ctl_config *out, const char *buf, size_t len,
    const char *name, cu_error *err)
{
	return ctl_config_load_buffer_all(out, buf, len, name, NULL, NULL, err);
}

int ctl_config_load_all(struct ctl_config *out, const char *path,
    char ***errors, size_t *nerrors, cu_error *err)
{
	json_t *root = NULL;
	api_yaml_lines *lines = NULL;
	int rc;

	init_out(out);
	rc = api_yaml_load_file(&root, &lines, path, &config_limits, err);
	return finish_load(out, root, lines, path, errors, nerrors, rc, err);
}

int ctl_config_load(struct ctl_config *out, const char *path, cu_error *err)
{
	return ctl_config_load_all(out, path, NULL, NULL, err);
}

int ctl_config_load_flags(struct ctl_config *out, const char *path,
    const json_t *gates, char ***errors, size_t *nerrors, cu_error *err)
{
	json_t *root = NULL;
	api_yaml_lines *lines = NULL;
	int rc = CU_OK;

	init_out(out);
	if (path != NULL)
		rc = api_yaml_load_file(
		    &root, &lines, path, &config_limits, err);
	else if ((root = json_pack("{s:s, s:s}", "apiVersion",
		      CTL_CONFIG_V1BETA2, "kind", "Configuration")) == NULL)
		rc = cu_error_set(err, CU_ENOMEM, "out of memory");
	if (rc == CU_OK && gates != NULL && json_is_object(root)) {
		if (json_object_get(root, "featureGates") != NULL)
			rc = cu_error_set(err, CU_EINVAL,
			    "%s: featureGates: feature gates for the "
			    "--feature-gates flag and the configuration "
			    "cannot both be set",
			    path);
		else if (json_object_set(
			     root, "featureGates", (json_t *)gates) != 0)
			rc = cu_error_set(err, CU_ENOMEM, "out of memory");
	}
	return finish_load(out, root, lines, path != NULL ? path : "(defaults)",
	    errors, nerrors, rc, err);
}

static void free_strv(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		cu_free(v[i]);
	cu_free(v);
}

void ctl_config_dispose(struct ctl_config *c)
{
	if (c == NULL)
		return;
	cu_free(c->api_version);
	cu_free(c->namespace);
	api_selector_dispose(&c->managed_jobs_ns_selector);
	cu_free(c->webhook.host);
	cu_free(c->webhook.cert_dir);
	cu_free(c->leader_election.resource_lock);
	cu_free(c->leader_election.resource_name);
	cu_free(c->leader_election.resource_namespace);
	cu_free(c->metrics.bind_address);
	cu_free(c->visibility.bind_address);
	api_selector_dispose(&c->metrics.local_queue_selector);
	cu_free(c->health.probe_bind_address);
	cu_free(c->health.readiness_endpoint);
	cu_free(c->health.liveness_endpoint);
	cu_free(c->internal_cert.webhook_service_name);
	cu_free(c->internal_cert.webhook_secret_name);
	cu_free(c->tls.priorities);
	free_strv(c->integrations.frameworks, c->integrations.nframeworks);
	free_strv(c->integrations.label_keys_to_copy,
	    c->integrations.nlabel_keys_to_copy);
	free_strv(c->integrations.external, c->integrations.nexternal);
	free_strv(c->admission_fair_sharing.resources,
	    c->admission_fair_sharing.nweights);
	cu_free(c->admission_fair_sharing.weights);
	ctl_config_dispose_resources(c);
	ctl_config_dispose_mk(c);
	ctl_config_dispose_dra(c);
	ctl_config_dispose_labels(c);
	free_strv(c->warnings, c->nwarnings);
	memset(c, 0, sizeof(*c));
}

char *ctl_config_operator_namespace(const char *sa_namespace_file)
{
	FILE *f =
	    fopen(sa_namespace_file != NULL ? sa_namespace_file
					    : CTL_CONFIG_SA_NAMESPACE_FILE,
		"r");
	char buf[256];
	size_t n = 0, start = 0;

	if (f != NULL) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	while (start < n && isspace((unsigned char)buf[start]))
		start++;
	while (n > start && isspace((unsigned char)buf[n - 1]))
		buf[--n] = '\0';
	return cu_strdup(
	    n > start ? buf + start : CTL_CONFIG_DEFAULT_NAMESPACE);
}
