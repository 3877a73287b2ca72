/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/flags.c - cueue-controller's command line (flags.h): its own
 * options and Kueue's manager flags with Kueue's meaning.
 *
 * Kueue's --zap-* flags are controller-runtime's: --zap-devel picks the
 * development defaults (console lines, debug level) or, =false, the
 * production ones (JSON lines, info level), and an explicit --zap-encoder
 * or --zap-log-level wins over either, whatever the order. cueue has four
 * levels: zap's debug, info and error map to them, panic to error, and
 * the verbosity integers to info (1 and 2: Kueue's Deployment runs at 2,
 * which logs what cueue's info level does) or debug (3 and more).
 * --zap-stacktrace-level and --zap-time-encoding are checked and have no
 * effect: cueue writes no stack traces and stamps every line in RFC 3339.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/flags.h"

/* What the flags said, before the zap defaults are resolved. */
struct parse {
	struct ctl_flags *f;
	bool devel_set, devel;
	bool zap_level_set;
	enum cu_log_level zap_level;
	bool encoder_set, encoder_json;
};

struct flag {
	const char *name;
	bool is_bool;
	int (*set)(struct parse *p, const struct flag *fl, const char *v,
	    cu_error *err);
	size_t field; /* set_string: offsetof(struct ctl_flags, ...) */
};

const char ctl_flags_help[] =
    "  --config FILE      Kueue Configuration YAML (config.kueue.x-k8s.io\n"
    "                     v1beta2 or v1beta1), e.g. the mounted ConfigMap;\n"
    "                     without it, Kueue's defaults\n"
    "  --kubeconfig FILE  API server credentials; default: $KUBECONFIG, "
    "else the\n"
    "                     in-cluster service account, else ~/.kube/config\n"
    "  --feature-gates A=true,B=false  Kueue's feature gates (not with\n"
    "                     featureGates in the Configuration)\n"
    "  --zap-log-level L  debug, info, error, panic (as error) or a "
    "verbosity:\n"
    "                     1-2 info (Kueue's Deployment runs at 2), 3+ "
    "debug\n"
    "  --zap-encoder E    json or console (text lines)\n"
    "  --zap-devel[=BOOL] true: console lines at debug level; false: JSON "
    "lines\n"
    "                     at info level (an explicit encoder or level "
    "wins)\n"
    "  --zap-stacktrace-level L, --zap-time-encoding E  accepted (Kueue's "
    "values),\n"
    "                     no effect: no stack traces, RFC 3339 times\n"
    "  --store FILE       SQLite admission ledger (default: in memory, no "
    "restart\n"
    "                     safety); created 0600; a corrupt one is moved to\n"
    "                     FILE.corrupt-TIME and rebuilt from the API "
    "server\n"
    "  --metrics-secure=false  serve /metrics over plain HTTP with no\n"
    "                     authentication (local use); default true: HTTPS, "
    "a\n"
    "                     bearer token checked with a TokenReview and a\n"
    "                     SubjectAccessReview (get on the non-resource URL\n"
    "                     /metrics)\n"
    "  --log-json         log one JSON object per line (= --zap-encoder "
    "json)\n"
    "  --log-level LEVEL  debug, info (default), warn or error\n"
    "  --check-config     load and validate the configuration, print the\n"
    "                     effective one (defaults filled, v1beta2 YAML) on\n"
    "                     stdout and exit 0; on an error print it on "
    "stderr and\n"
    "                     exit 1\n"
    "  --convert-config FILE  print the Configuration FILE (v1beta1 or "
    "v1beta2)\n"
    "                     as the shortest v1beta2 file that means the same\n"
    "                     (fields at their defaults left out) and exit\n"
    "  --compat-table     print which Kueue fields cueue supports "
    "(Markdown) and exit\n"
    "  --version          print the version and exit\n"
    "  -h, --help         this text\n"
    "Flags may be written -name or --name, values as --name=VALUE or "
    "--name VALUE.\n";

/* Go's strconv.ParseBool. */
static bool parse_bool(const char *s, bool *out)
{
	static const char *const t[] = {"1", "t", "T", "TRUE", "true", "True"};
	static const char *const f[] = {
	    "0", "f", "F", "FALSE", "false", "False"};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (strcmp(s, t[i]) == 0) {
			*out = true;
			return true;
		}
		if (strcmp(s, f[i]) == 0) {
			*out = false;
			return true;
		}
	}
	return false;
}

static int bad_bool(const char *name, const char *v, cu_error *err)
{
	return cu_error_set(err, CU_EINVAL,
	    "invalid boolean value \"%s\" for --%s: write --%s, --%s=true or "
	    "--%s=false",
	    v, name, name, name, name);
}

static int set_bool(const char *name, const char *v, bool *out, cu_error *err)
{
	if (v == NULL) {
		*out = true;
		return CU_OK;
	}
	return parse_bool(v, out) ? CU_OK : bad_bool(name, v, err);
}

/* A string flag: the value into the ctl_flags field at fl->field. */
static int set_string(
    struct parse *p, const struct flag *fl, const char *v, cu_error *err)
{
	(void)err;
	memcpy((char *)p->f + fl->field, &v, sizeof(v));
	return CU_OK;
}

/* A flag that ends the parse with an action (--help, --version ...). */
static int set_action(
    struct parse *p, const struct flag *fl, const char *v, cu_error *err)
{
	bool on;
	int rc = set_bool(fl->name, v, &on, err);

	if (rc != CU_OK || !on)
		return rc;
	if (strcmp(fl->name, "help") == 0 || strcmp(fl->name, "h") == 0)
		p->f->action = CTL_FLAGS_HELP;
	else if (strcmp(fl->name, "version") == 0)
		p->f->action = CTL_FLAGS_VERSION;
	else if (strcmp(fl->name, "compat-table") == 0)
		p->f->action = CTL_FLAGS_COMPAT_TABLE;
	else
		p->f->action = CTL_FLAGS_CHECK_CONFIG;
	return CU_OK;
}

static int set_log_json(
    struct parse *p, const struct flag *fl, const char *v, cu_error *err)
{
	bool on;
	int rc = set_bool(fl->name, v, &on, err);

	if (rc == CU_OK) {
		p->encoder_set = true;
		p->encoder_json = on;
	}
	return rc;
}

static int set_metrics_secure(
    struct parse *p, const struct flag *fl, const char *v, cu_error *err)
{
	return set_bool(fl->name, v, &p->f->metrics_secure, err);
}

static int set_log_level(
    struct parse *p, const struct flag *fl, const char *v, cu_error *err)
{
	(void)fl;
	if (cu_log_parse_level(v, &p->zap_level) != CU_OK)
		return cu_error_set(err, CU_EINVAL,
		    "invalid value \"%s\" for --log-level: debug, info, warn "
		    "or error",
		    v);
	p->zap_level_set = true;
	return CU_OK;
}

static int set_zap_devel(
    struct parse *p, const struct flag *fl, const char *v, cu_error *err)
{
	int rc = set_bool(fl->name, v, &p->devel, err);

	p->devel_set = rc == CU_OK;
	return rc;
}

static int set_zap_encoder(
    struct parse *p, const struct flag *fl, const char *v, cu_error *err)
{
	(void)fl;
	if (strcmp(v, "json") != 0 && strcmp(v, "console") != 0)
		return cu_error_set(err, CU_EINVAL,
		    "invalid value \"%s\" for --zap-encoder: json or console",
		    v);
	p->encoder_set = true;
	p->encoder_json = strcmp(v, "json") == 0;
	return CU_OK;
}

static int set_zap_level(
    struct parse *p, const struct flag *fl, const char *v, cu_error *err)
{
	char *end = NULL;
	long l;

	(void)fl;
	p->zap_level_set = true;
	if (strcmp(v, "debug") == 0) {
		p->zap_level = CU_LOG_DEBUG;
		return CU_OK;
	}
	if (strcmp(v, "info") == 0) {
		p->zap_level = CU_LOG_INFO;
		return CU_OK;
	}
	if (strcmp(v, "error") == 0 || strcmp(v, "panic") == 0) {
		p->zap_level = CU_LOG_ERROR;
		return CU_OK;
	}
	l = strtol(v, &end, 10);
	if (v[0] == '\0' || *end != '\0' || l <= 0)
		return cu_error_set(err, CU_EINVAL,
		    "invalid value \"%s\" for --zap-log-level: debug, info, "
		    "error, panic or an integer above 0",
		    v);
	p->zap_level = l <= 2 ? CU_LOG_INFO : CU_LOG_DEBUG;
	return CU_OK;
}

/* Checked against the values zap accepts, then ignored (see above). */
static int set_zap_accepted(
    struct parse *p, const struct flag *fl, const char *v, cu_error *err)
{
	static const char *const stack[] = {"info", "error", "panic", NULL};
	static const char *const tenc[] = {"epoch", "millis", "nano", "iso8601",
	    "rfc3339", "rfc3339nano", NULL};
	bool st = strcmp(fl->name, "zap-stacktrace-level") == 0;
	const char *const *ok = st ? stack : tenc;
	size_t i;

	(void)p;
	for (i = 0; ok[i] != NULL; i++)
		if (strcmp(v, ok[i]) == 0)
			return CU_OK;
	return cu_error_set(err, CU_EINVAL, "invalid value \"%s\" for --%s: %s",
	    v, fl->name,
	    st ? "info, error or panic"
	       : "epoch, millis, nano, iso8601, rfc3339 or rfc3339nano");
}

/* Sorted by name: the list an unknown flag is answered with. */
static const struct flag flags[] = {
    {"check-config", true, set_action, 0},
    {"compat-table", true, set_action, 0},
    {"config", false, set_string, offsetof(struct ctl_flags, config)},
    {"convert-config", false, set_string, offsetof(struct ctl_flags, convert)},
    {"feature-gates", false, set_string,
	offsetof(struct ctl_flags, feature_gates)},
    {"h", true, set_action, 0},
    {"help", true, set_action, 0},
    {"kubeconfig", false, set_string, offsetof(struct ctl_flags, kubeconfig)},
    {"log-json", true, set_log_json, 0},
    {"log-level", false, set_log_level, 0},
    {"metrics-secure", true, set_metrics_secure, 0},
    {"store", false, set_string, offsetof(struct ctl_flags, store)},
    {"version", true, set_action, 0},
    {"zap-devel", true, set_zap_devel, 0},
    {"zap-encoder", false, set_zap_encoder, 0},
    {"zap-log-level", false, set_zap_level, 0},
    {"zap-stacktrace-level", false, set_zap_accepted, 0},
    {"zap-time-encoding", false, set_zap_accepted, 0},
};

#define NFLAGS (sizeof(flags) / sizeof(flags[0]))

static const struct flag *find(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < NFLAGS; i++)
		if (strlen(flags[i].name) == len &&
		    strncmp(flags[i].name, name, len) == 0)
			return &flags[i];
	return NULL;
}

static int unknown(const char *arg, size_t len, cu_error *err)
{
	char list[512];
	size_t i, n = 0;

	list[0] = '\0';
	for (i = 0; i < NFLAGS && n < sizeof(list); i++)
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s--%s",
		    i ? ", " : "", flags[i].name);
	return cu_error_set(err, CU_EINVAL,
	    "unknown flag %.*s; the flags are: %s", (int)len, arg, list);
}

/* The zap defaults under the explicit choices (flags.c header). */
static void resolve_logging(struct parse *p)
{
	struct ctl_flags *f = p->f;

	if (p->zap_level_set) {
		f->level_set = true;
		f->level = p->zap_level;
	} else if (p->devel_set) {
		f->level_set = true;
		f->level = p->devel ? CU_LOG_DEBUG : CU_LOG_INFO;
	}
	if (p->encoder_set) {
		f->json_set = true;
		f->json = p->encoder_json;
	} else if (p->devel_set) {
		f->json_set = true;
		f->json = !p->devel;
	}
}

int ctl_flags_parse(
    int argc, const char *const *argv, struct ctl_flags *out, cu_error *err)
{
	struct parse p;
	int i;

	memset(out, 0, sizeof(*out));
	memset(&p, 0, sizeof(p));
	out->action = CTL_FLAGS_RUN;
	out->metrics_secure = true;
	p.f = out;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *name, *eq, *v = NULL;
		const struct flag *fl;
		size_t len;
		int rc;

		if (strcmp(a, "--") == 0) {
			if (i + 1 < argc)
				return cu_error_set(err, CU_EINVAL,
				    "unexpected argument \"%s\": "
				    "cueue-controller takes flags only",
				    argv[i + 1]);
			break;
		}
		if (a[0] != '-' || a[1] == '\0' ||
		    (a[1] == '-' && a[2] == '\0'))
			return cu_error_set(err, CU_EINVAL,
			    "unexpected argument \"%s\": cueue-controller "
			    "takes flags only (see --help)",
			    a);
		name = a + (a[1] == '-' ? 2 : 1);
		eq = strchr(name, '=');
		len = eq ? (size_t)(eq - name) : strlen(name);
		fl = find(name, len);
		if (fl == NULL)
			return unknown(a, (size_t)(name - a) + len, err);
		if (eq != NULL) {
			v = eq + 1;
		} else if (!fl->is_bool) {
			if (i + 1 >= argc)
				return cu_error_set(err, CU_EINVAL,
				    "flag needs an argument: %s (write "
				    "--%s=VALUE)",
				    a, fl->name);
			v = argv[++i];
		}
		rc = fl->set(&p, fl, v, err);
		if (rc != CU_OK)
			return rc;
		if (out->action == CTL_FLAGS_HELP ||
		    out->action == CTL_FLAGS_VERSION ||
		    out->action == CTL_FLAGS_COMPAT_TABLE)
			return CU_OK;
	}
	resolve_logging(&p);
	if (out->convert != NULL)
		out->action = CTL_FLAGS_CONVERT_CONFIG;
	return CU_OK;
}

/* One "Name=bool" item of --feature-gates, s[0..n). */
static int gate_item(const char *s, size_t n, json_t *obj, cu_error *err)
{
	const char *eq;
	char name[128], val[16];
	size_t nl, vl;
	bool on;

	while (n > 0 && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	if (n == 0)
		return CU_OK;
	eq = memchr(s, '=', n);
	if (eq == NULL)
		return cu_error_set(err, CU_EINVAL,
		    "--feature-gates: missing bool value for %.*s (write "
		    "%.*s=true or %.*s=false)",
		    (int)n, s, (int)n, s, (int)n, s);
	nl = (size_t)(eq - s);
	vl = n - nl - 1;
	while (nl > 0 && (s[nl - 1] == ' ' || s[nl - 1] == '\t'))
		nl--;
	while (vl > 0 && (eq[1] == ' ' || eq[1] == '\t')) {
		eq++;
		vl--;
	}
	if (nl == 0 || nl >= sizeof(name))
		return cu_error_set(err, CU_EINVAL,
		    "--feature-gates: invalid gate name in \"%.*s\"", (int)n,
		    s);
	memcpy(name, s, nl);
	name[nl] = '\0';
	if (vl >= sizeof(val) ||
	    (memcpy(val, eq + 1, vl), val[vl] = '\0', !parse_bool(val, &on)))
		return cu_error_set(err, CU_EINVAL,
		    "--feature-gates: invalid value of %.*s: want true or "
		    "false",
		    (int)n, s);
	if (json_object_set_new(obj, name, json_boolean(on)) != 0)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	return CU_OK;
}

int ctl_flags_gates(const char *spec, json_t **out, cu_error *err)
{
	json_t *obj = json_object();
	const char *s = spec;
	int rc = CU_OK;

	*out = NULL;
	if (obj == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	while (rc == CU_OK) {
		const char *c = strchr(s, ',');
		size_t n = c ? (size_t)(c - s) : strlen(s);

		rc = gate_item(s, n, obj, err);
		if (c == NULL)
			break;
		s = c + 1;
	}
	if (rc != CU_OK) {
		json_decref(obj);
		return rc;
	}
	*out = obj;
	return CU_OK;
}
