/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/config.c - loads Kueue's `Configuration` file into struct
 * ctl_config: YAML -> JSON (api/yaml), a strict schema walk that reports
 * unknown fields and wrong types with their path and line, extraction with
 * Kueue's defaults (apis/config/v1beta2/defaults.go, and the v1beta1
 * defaulting + conversion for v1beta1 files), validation, and the YAML
 * printer behind `cueue-controller --check-config`.
 *
 * The schema is a table rather than hand-written decoding because Kueue's
 * Configuration has many sections cueue only needs to *recognise* (to stay
 * strict without rejecting valid Kueue files); a table keeps those cheap.
 */
#include "controller/config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <yaml.h>

#include "api/labelselector.h"
#include "api/yaml.h"
#include "controller/httpd.h"

/* ---- durations (Go's time.ParseDuration / Duration.String) ----------- */

#define NS_PER_US INT64_C(1000)
#define NS_PER_MS CU_NS_PER_MS
#define NS_PER_S CU_NS_PER_S
#define NS_PER_M (60 * NS_PER_S)
#define NS_PER_H (60 * NS_PER_M)

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

/* ---- the schema ------------------------------------------------------ */

enum skind {
	SK_OBJECT,
	SK_STRING,
	SK_BOOL,
	SK_INT32,
	SK_INT64,
	SK_NUMBER,
	SK_DURATION, /* metav1.Duration: a Go duration string */
	SK_QUANTITY, /* resource.Quantity: string or number */
	SK_LIST,
	SK_MAP,
	SK_ANY, /* an upstream type cueue never reads (e.g. exec configs) */
};

#define V1 1u /* field exists in v1beta1 */
#define V2 2u /* field exists in v1beta2 */
#define VB (V1 | V2)

struct sfield;

struct schema {
	enum skind kind;
	const struct sfield *fields; /* SK_OBJECT, {NULL}-terminated */
	const struct schema *elem;   /* SK_LIST / SK_MAP values */
};

struct sfield {
	const char *name;
	const struct schema *schema;
	unsigned versions;
};

static const struct schema S_STR = {SK_STRING, NULL, NULL};
static const struct schema S_BOOL = {SK_BOOL, NULL, NULL};
static const struct schema S_I32 = {SK_INT32, NULL, NULL};
static const struct schema S_I64 = {SK_INT64, NULL, NULL};
static const struct schema S_NUM = {SK_NUMBER, NULL, NULL};
static const struct schema S_DUR = {SK_DURATION, NULL, NULL};
static const struct schema S_QTY = {SK_QUANTITY, NULL, NULL};
static const struct schema S_ANY = {SK_ANY, NULL, NULL};
static const struct schema S_STRLIST = {SK_LIST, NULL, &S_STR};

#define OBJ(f) (&(const struct schema){SK_OBJECT, (f), NULL})
#define LIST(e) (&(const struct schema){SK_LIST, NULL, (e)})
#define MAP(e) (&(const struct schema){SK_MAP, NULL, (e)})

/* metav1.LabelSelector; semantic checks are api_label_selector_decode's. */
static const struct sfield F_SELREQ[] = {
    {"key", &S_STR, VB},
    {"operator", &S_STR, VB},
    {"values", &S_STRLIST, VB},
    {NULL, NULL, 0},
};
static const struct sfield F_SELECTOR[] = {
    {"matchLabels", MAP(&S_STR), VB},
    {"matchExpressions", LIST(OBJ(F_SELREQ)), VB},
    {NULL, NULL, 0},
};
#define S_SELECTOR OBJ(F_SELECTOR)

static const struct sfield F_WEBHOOK[] = {
    {"port", &S_I64, VB},
    {"host", &S_STR, VB},
    {"certDir", &S_STR, VB},
    {NULL, NULL, 0},
};
/* component-base LeaderElectionConfiguration */
static const struct sfield F_LEADER[] = {
    {"leaderElect", &S_BOOL, VB},
    {"leaseDuration", &S_DUR, VB},
    {"renewDeadline", &S_DUR, VB},
    {"retryPeriod", &S_DUR, VB},
    {"resourceLock", &S_STR, VB},
    {"resourceName", &S_STR, VB},
    {"resourceNamespace", &S_STR, VB},
    {NULL, NULL, 0},
};
static const struct sfield F_CUSTOM_LABEL[] = {
    {"name", &S_STR, VB},
    {"sourceLabelKey", &S_STR, VB},
    {"sourceAnnotationKey", &S_STR, VB},
    {"sourceKind", &S_STR, V2},
    {"trackedValues", &S_STRLIST, V2},
    {NULL, NULL, 0},
};
static const struct sfield F_LQ_METRICS[] = {
    {"enable", &S_BOOL, VB},
    {"localQueueSelector", S_SELECTOR, VB},
    {NULL, NULL, 0},
};
static const struct sfield F_METRICS[] = {
    {"bindAddress", &S_STR, VB},
    {"enableClusterQueueResources", &S_BOOL, VB},
    {"customLabels", LIST(OBJ(F_CUSTOM_LABEL)), VB},
    {"localQueueMetrics", OBJ(F_LQ_METRICS), VB},
    {NULL, NULL, 0},
};
static const struct sfield F_HEALTH[] = {
    {"healthProbeBindAddress", &S_STR, VB},
    {"readinessEndpointName", &S_STR, VB},
    {"livenessEndpointName", &S_STR, VB},
    {NULL, NULL, 0},
};
static const struct sfield F_CONTROLLER[] = {
    {"groupKindConcurrency", MAP(&S_I64), VB},
    {"cacheSyncTimeout", &S_I64, VB}, /* *time.Duration: integer ns */
    {NULL, NULL, 0},
};
static const struct sfield F_TLS[] = {
    {"minVersion", &S_STR, VB},
    {"cipherSuites", &S_STRLIST, VB},
    {"curvePreferences", LIST(&S_I32), VB},
    {NULL, NULL, 0},
};
static const struct sfield F_CERT[] = {
    {"enable", &S_BOOL, VB},
    {"webhookServiceName", &S_STR, VB},
    {"webhookSecretName", &S_STR, VB},
    {NULL, NULL, 0},
};
static const struct sfield F_REQUEUING[] = {
    {"timestamp", &S_STR, VB},
    {"backoffLimitCount", &S_I32, VB},
    {"backoffBaseSeconds", &S_I32, VB},
    {"backoffMaxSeconds", &S_I32, VB},
    {NULL, NULL, 0},
};
static const struct sfield F_PODSREADY[] = {
    {"enable", &S_BOOL, V1},
    {"timeout", &S_DUR, VB},
    {"blockAdmission", &S_BOOL, VB},
    {"requeuingStrategy", OBJ(F_REQUEUING), VB},
    {"recoveryTimeout", &S_DUR, VB},
    {NULL, NULL, 0},
};
static const struct sfield F_CLIENT[] = {
    {"qps", &S_NUM, VB},
    {"burst", &S_I32, VB},
    {NULL, NULL, 0},
};
static const struct sfield F_POD_OPTIONS[] = {
    {"namespaceSelector", S_SELECTOR, V1},
    {"podSelector", S_SELECTOR, V1},
    {NULL, NULL, 0},
};
static const struct sfield F_INTEGRATIONS[] = {
    {"frameworks", &S_STRLIST, VB},
    {"externalFrameworks", &S_STRLIST, VB},
    {"podOptions", OBJ(F_POD_OPTIONS), V1},
    {"labelKeysToCopy", &S_STRLIST, VB},
    {NULL, NULL, 0},
};
static const struct sfield F_CQ_VISIBILITY[] = {
    {"maxCount", &S_I32, V1},
    {NULL, NULL, 0},
};
static const struct sfield F_QUEUE_VISIBILITY[] = {
    {"clusterQueues", OBJ(F_CQ_VISIBILITY), V1},
    {"updateIntervalSeconds", &S_I32, V1},
    {NULL, NULL, 0},
};
static const struct sfield F_MK_EXTERNAL[] = {
    {"name", &S_STR, VB},
    {NULL, NULL, 0},
};
static const struct sfield F_MK_INCREMENTAL[] = {
    {"stepSize", &S_I32, V2},
    {NULL, NULL, 0},
};
static const struct sfield F_MULTIKUEUE[] = {
    {"gcInterval", &S_DUR, VB},
    {"origin", &S_STR, VB},
    {"workerLostTimeout", &S_DUR, VB},
    {"dispatcherName", &S_STR, VB},
    {"externalFrameworks", LIST(OBJ(F_MK_EXTERNAL)), VB},
    {"clusterProfile", &S_ANY, V2},
    {"incrementalDispatcherConfig", OBJ(F_MK_INCREMENTAL), V2},
    {NULL, NULL, 0},
};
static const struct sfield F_FAIR[] = {
    {"enable", &S_BOOL, V1},
    {"preemptionStrategies", &S_STRLIST, VB},
    {NULL, NULL, 0},
};
static const struct sfield F_AFS[] = {
    {"usageHalfLifeTime", &S_DUR, VB},
    {"usageSamplingInterval", &S_DUR, VB},
    {"resourceWeights", MAP(&S_NUM), VB},
    {NULL, NULL, 0},
};
static const struct sfield F_TRANSFORM[] = {
    {"input", &S_STR, VB},
    {"strategy", &S_STR, VB},
    {"multiplyBy", &S_STR, VB},
    {"outputs", MAP(&S_QTY), VB},
    {NULL, NULL, 0},
};
static const struct sfield F_DEVICE_CLASS[] = {
    {"name", &S_STR, VB},
    {"deviceClassNames", &S_STRLIST, VB},
    {"sources", LIST(&S_ANY), V2},
    {NULL, NULL, 0},
};
static const struct sfield F_RESOURCES[] = {
    {"quotaCheckStrategy", &S_STR, V2},
    {"excludeResourcePrefixes", &S_STRLIST, VB},
    {"transformations", LIST(OBJ(F_TRANSFORM)), VB},
    {"deviceClassMappings", LIST(OBJ(F_DEVICE_CLASS)), VB},
    {NULL, NULL, 0},
};
static const struct sfield F_WL_RETENTION[] = {
    {"afterFinished", &S_DUR, VB},
    {"afterDeactivatedByKueue", &S_DUR, VB},
    {NULL, NULL, 0},
};
static const struct sfield F_RETENTION[] = {
    {"workloads", OBJ(F_WL_RETENTION), VB},
    {NULL, NULL, 0},
};
static const struct sfield F_VISIBILITY_SERVER[] = {
    {"bindAddress", &S_STR, V2},
    {"bindPort", &S_I32, V2},
    {NULL, NULL, 0},
};
static const struct sfield F_ROOT[] = {
    {"apiVersion", &S_STR, VB},
    {"kind", &S_STR, VB},
    {"namespace", &S_STR, VB},
    {"webhook", OBJ(F_WEBHOOK), VB},
    {"leaderElection", OBJ(F_LEADER), VB},
    {"metrics", OBJ(F_METRICS), VB},
    {"health", OBJ(F_HEALTH), VB},
    {"pprofBindAddress", &S_STR, VB},
    {"controller", OBJ(F_CONTROLLER), VB},
    {"tls", OBJ(F_TLS), VB},
    {"manageJobsWithoutQueueName", &S_BOOL, VB},
    {"managedJobsNamespaceSelector", S_SELECTOR, VB},
    {"internalCertManagement", OBJ(F_CERT), VB},
    {"waitForPodsReady", OBJ(F_PODSREADY), VB},
    {"clientConnection", OBJ(F_CLIENT), VB},
    {"integrations", OBJ(F_INTEGRATIONS), VB},
    {"queueVisibility", OBJ(F_QUEUE_VISIBILITY), V1},
    {"multiKueue", OBJ(F_MULTIKUEUE), VB},
    {"fairSharing", OBJ(F_FAIR), VB},
    {"admissionFairSharing", OBJ(F_AFS), VB},
    {"resources", OBJ(F_RESOURCES), VB},
    {"featureGates", MAP(&S_BOOL), VB},
    {"objectRetentionPolicies", OBJ(F_RETENTION), VB},
    {"visibilityServer", OBJ(F_VISIBILITY_SERVER), V2},
    {NULL, NULL, 0},
};

/* ---- decoding context and error reporting ---------------------------- */

#define PATH_MAX_LEN 512

/* A field path in two spellings: `disp` for messages (Kubernetes field
 * path style, map keys in brackets) and `look` for api_yaml_line (keys
 * with '.', '[' or '\\' backslash-escaped). Truncation only costs the
 * line number, never memory safety. */
struct fpath {
	char disp[PATH_MAX_LEN];
	char look[PATH_MAX_LEN];
};

struct dec {
	const char *name; /* message prefix, may be NULL */
	const api_yaml_lines *lines;
	unsigned version; /* V1 or V2 */
	struct ctl_config *c;
	cu_error *err;
};

static int path_line(const struct dec *d, const char *look)
{
	return api_yaml_line(d->lines, look, NULL);
}

__attribute__((format(printf, 4, 5))) static int fail(
    const struct dec *d, int code, const char *look, const char *fmt, ...)
{
	char msg[CU_ERROR_MSG_MAX];
	char where[32] = "";
	int line = look != NULL ? path_line(d, look) : 0;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (line > 0)
		snprintf(where, sizeof(where), "line %d: ", line);
	return cu_error_set(d->err, code, "%s%s%s%s",
	    d->name != NULL ? d->name : "", d->name != NULL ? ": " : "", where,
	    msg);
}

/* Append s to dst[size], truncating (paths are for messages only). */
static void cat(char *dst, size_t size, const char *s, bool escape)
{
	size_t n = strlen(dst);

	for (; *s != '\0' && n + 2 < size; s++) {
		if (escape && (*s == '.' || *s == '[' || *s == '\\'))
			dst[n++] = '\\';
		dst[n++] = *s;
	}
	dst[n] = '\0';
}

static void path_child(struct fpath *dst, const struct fpath *parent,
    const char *key, bool map_key)
{
	memcpy(dst, parent, sizeof(*dst));
	if (map_key) {
		cat(dst->disp, sizeof(dst->disp), "[", false);
		cat(dst->disp, sizeof(dst->disp), key, false);
		cat(dst->disp, sizeof(dst->disp), "]", false);
	} else {
		if (dst->disp[0] != '\0')
			cat(dst->disp, sizeof(dst->disp), ".", false);
		cat(dst->disp, sizeof(dst->disp), key, false);
	}
	if (dst->look[0] != '\0')
		cat(dst->look, sizeof(dst->look), ".", false);
	cat(dst->look, sizeof(dst->look), key, true);
}

static void path_index(struct fpath *dst, const struct fpath *parent, size_t i)
{
	char idx[32];

	snprintf(idx, sizeof(idx), "[%zu]", i);
	memcpy(dst, parent, sizeof(*dst));
	cat(dst->disp, sizeof(dst->disp), idx, false);
	cat(dst->look, sizeof(dst->look), idx, false);
}

static const char *json_type_name(const json_t *j)
{
	switch (json_typeof(j)) {
	case JSON_OBJECT:
		return "a mapping";
	case JSON_ARRAY:
		return "a sequence";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
	default:
		return "null";
	}
}

static int wrong_type(const struct dec *d, const struct fpath *p,
    const json_t *j, const char *want)
{
	return fail(d, CU_EPARSE, p->look,
	    "%s: invalid type: expected %s, got %s", p->disp, want,
	    json_type_name(j));
}

/* Strictly check j against s: unknown fields (including fields of the
 * other API version) and wrong types fail with path and line. A null field
 * is accepted, as Go's decoder treats it as "unset"; a null list item or
 * map value is refused (Go would turn it into "" or 0, never what was
 * meant). */
static int check(const struct dec *d, const json_t *j, const struct schema *s,
    const struct fpath *p, bool in_collection)
{
	struct fpath cp;
	int rc;

	if (s->kind == SK_ANY)
		return CU_OK;
	if (json_is_null(j))
		return in_collection ? wrong_type(d, p, j, "a value") : CU_OK;
	switch (s->kind) {
	case SK_OBJECT: {
		const char *key;
		json_t *v;

		if (!json_is_object(j))
			return wrong_type(d, p, j, "a mapping");
		json_object_foreach((json_t *)j, key, v)
		{
			const struct sfield *f;

			path_child(&cp, p, key, false);
			for (f = s->fields; f->name != NULL; f++)
				if (strcmp(f->name, key) == 0 &&
				    (f->versions & d->version) != 0)
					break;
			if (f->name == NULL)
				return fail(d, CU_EPARSE, cp.look,
				    "unknown field \"%s\"", cp.disp);
			rc = check(d, v, f->schema, &cp, false);
			if (rc != CU_OK)
				return rc;
		}
		return CU_OK;
	}
	case SK_LIST: {
		size_t i;
		json_t *v;

		if (!json_is_array(j))
			return wrong_type(d, p, j, "a sequence");
		json_array_foreach(j, i, v)
		{
			path_index(&cp, p, i);
			rc = check(d, v, s->elem, &cp, true);
			if (rc != CU_OK)
				return rc;
		}
		return CU_OK;
	}
	case SK_MAP: {
		const char *key;
		json_t *v;

		if (!json_is_object(j))
			return wrong_type(d, p, j, "a mapping");
		json_object_foreach((json_t *)j, key, v)
		{
			path_child(&cp, p, key, true);
			rc = check(d, v, s->elem, &cp, true);
			if (rc != CU_OK)
				return rc;
		}
		return CU_OK;
	}
	case SK_STRING:
		return json_is_string(j) ? CU_OK
					 : wrong_type(d, p, j, "a string");
	case SK_BOOL:
		return json_is_boolean(j) ? CU_OK
					  : wrong_type(d, p, j, "a boolean");
	case SK_INT32:
		if (!json_is_integer(j))
			return wrong_type(d, p, j, "an integer");
		if (json_integer_value(j) < INT32_MIN ||
		    json_integer_value(j) > INT32_MAX)
			return fail(d, CU_EPARSE, p->look,
			    "%s: value %" JSON_INTEGER_FORMAT
			    " out of range for int32",
			    p->disp, json_integer_value(j));
		return CU_OK;
	case SK_INT64:
		return json_is_integer(j) ? CU_OK
					  : wrong_type(d, p, j, "an integer");
	case SK_NUMBER:
		return json_is_number(j) ? CU_OK
					 : wrong_type(d, p, j, "a number");
	case SK_QUANTITY:
		return json_is_string(j) || json_is_number(j)
			   ? CU_OK
			   : wrong_type(d, p, j, "a quantity");
	case SK_DURATION: {
		cu_error e;
		int64_t ns;

		if (!json_is_string(j))
			return wrong_type(d, p, j, "a duration string");
		rc = ctl_config_parse_duration(json_string_value(j), &ns, &e);
		if (rc != CU_OK)
			return fail(d, rc, p->look, "%s: %s", p->disp, e.msg);
		return CU_OK;
	}
	case SK_ANY:
	default:
		return CU_OK;
	}
}

/* ---- extraction helpers (types were checked by check()) -------------- */

/* Member k of o, NULL when o is NULL, k is absent or k is null. */
static json_t *jget(const json_t *o, const char *k)
{
	json_t *v = o != NULL ? json_object_get(o, k) : NULL;

	return json_is_null(v) ? NULL : v;
}

/* Build the lookup path "a.b.c" for messages from a fixed key chain. */
static void fpath_set(struct fpath *p, const char *s)
{
	snprintf(p->disp, sizeof(p->disp), "%s", s);
	snprintf(p->look, sizeof(p->look), "%s", s);
}

static int dup_str(const struct dec *d, char **dst, const json_t *o,
    const char *k, const char *def)
{
	json_t *v = jget(o, k);
	const char *s = v != NULL ? json_string_value(v) : NULL;

	/* Go's cmp.Or: an empty string takes the default too. */
	if (s == NULL || (s[0] == '\0' && def != NULL))
		s = def;
	if (s == NULL)
		return CU_OK;
	*dst = cu_strdup(s);
	if (*dst == NULL)
		return cu_error_set(d->err, CU_ENOMEM, "out of memory");
	return CU_OK;
}

static bool get_bool(const json_t *o, const char *k, bool def)
{
	json_t *v = jget(o, k);

	return v != NULL ? json_is_true(v) : def;
}

static int64_t get_dur(const json_t *o, const char *k, int64_t def)
{
	json_t *v = jget(o, k);
	int64_t ns = def;

	/* Already validated by check(); a zero duration takes the default,
	 * as metav1.Duration{} does in Kueue's defaulting. */
	if (v != NULL &&
	    ctl_config_parse_duration(json_string_value(v), &ns, NULL) ==
		CU_OK &&
	    ns != 0)
		return ns;
	return def;
}

static int add_warning_msg(
    const struct dec *d, const char *look, const char *disp, const char *what)
{
	struct ctl_config *c = d->c;
	int line = path_line(d, look);
	char **w;
	char *msg;

	if (line > 0)
		msg = cu_asprintf("%s%sline %d: %s: %s", d->name ? d->name : "",
		    d->name ? ": " : "", line, disp, what);
	else
		msg = cu_asprintf("%s%s%s: %s", d->name ? d->name : "",
		    d->name ? ": " : "", disp, what);
	if (msg == NULL)
		return cu_error_set(d->err, CU_ENOMEM, "out of memory");
	w = cu_realloc(c->warnings, (c->nwarnings + 1) * sizeof(*w));
	if (w == NULL) {
		cu_free(msg);
		return cu_error_set(d->err, CU_ENOMEM, "out of memory");
	}
	c->warnings = w;
	c->warnings[c->nwarnings++] = msg;
	return CU_OK;
}

static int push_str(const struct dec *d, char ***arr, size_t *n, const char *s)
{
	char **a = cu_realloc(*arr, (*n + 1) * sizeof(*a));

	if (a == NULL)
		return cu_error_set(d->err, CU_ENOMEM, "out of memory");
	*arr = a;
	a[*n] = cu_strdup(s);
	if (a[*n] == NULL)
		return cu_error_set(d->err, CU_ENOMEM, "out of memory");
	(*n)++;
	return CU_OK;
}

/* Decode a LabelSelector, re-wrapping the codec's message with the file
 * name and line so that every config error reads the same way. */
static int decode_selector(
    const struct dec *d, api_selector *out, const json_t *j, const char *path)
{
	cu_error e;
	int rc;

	cu_error_clear(&e);
	rc = api_label_selector_decode(out, j, path, &e);
	if (rc == CU_ENOMEM)
		return cu_error_set(d->err, rc, "out of memory");
	if (rc != CU_OK)
		return fail(d, rc, path, "%s", e.msg);
	return CU_OK;
}

/* ---- validation helpers --------------------------------------------- */

static bool is_dns1123_label(const char *s)
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

static bool is_dns1035_label(const char *s)
{
	return is_dns1123_label(s) && s[0] >= 'a' && s[0] <= 'z';
}

static bool is_dns1123_subdomain(const char *s)
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
		if (!is_dns1123_label(part))
			return false;
		if (dot == NULL)
			return true;
		p = dot + 1;
	}
}

/* "host:port", "[v6]:port" or ":port" with port 0..65535; "0" is how
 * controller-runtime spells "disabled" for metrics and probes. */
static bool valid_bind_address(const char *s)
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

/* ---- sections -------------------------------------------------------- */

static const char *const kueue_only_frameworks[] = {
    "kubeflow.org/mpijob",
    "ray.io/rayjob",
    "ray.io/rayservice",
    "ray.io/raycluster",
    "kubeflow.org/paddlejob",
    "kubeflow.org/pytorchjob",
    "kubeflow.org/tfjob",
    "kubeflow.org/xgboostjob",
    "kubeflow.org/jaxjob",
    "trainer.kubeflow.org/trainjob",
    "workload.codeflare.dev/appwrapper",
    "sparkoperator.k8s.io/sparkapplication",
    "pod",
    "deployment",
    "statefulset",
    "leaderworkerset.x-k8s.io/leaderworkerset",
};

static int load_integrations(const struct dec *d, const json_t *root)
{
	struct ctl_config *c = d->c;
	const json_t *in = jget(root, "integrations");
	json_t *fw = jget(in, "frameworks");
	json_t *ext = jget(in, "externalFrameworks");
	json_t *keys = jget(in, "labelKeysToCopy");
	struct fpath p, base = {0};
	size_t i, k;
	json_t *v;
	int rc;

	fpath_set(&base, "integrations.frameworks");
	if (fw == NULL || json_array_size(fw) == 0) {
		/* Kueue: an empty list takes the default too. */
		c->integrations.job = true;
		rc = push_str(d, &c->integrations.frameworks,
		    &c->integrations.nframeworks, CTL_FRAMEWORK_JOB);
		if (rc != CU_OK)
			return rc;
	}
	json_array_foreach(fw, i, v)
	{
		const char *name = json_string_value(v);

		path_index(&p, &base, i);
		for (k = 0; k < c->integrations.nframeworks; k++)
			if (strcmp(c->integrations.frameworks[k], name) == 0)
				return fail(d, CU_EINVAL, p.look,
				    "%s: Duplicate value: \"%s\"", p.disp,
				    name);
		if (strcmp(name, CTL_FRAMEWORK_JOB) == 0) {
			c->integrations.job = true;
		} else if (strcmp(name, CTL_FRAMEWORK_JOBSET) == 0) {
			c->integrations.jobset = true;
		} else {
			bool kueue = false;

			for (k = 0; k < sizeof(kueue_only_frameworks) /
					    sizeof(kueue_only_frameworks[0]);
			     k++)
				kueue |=
				    strcmp(name, kueue_only_frameworks[k]) == 0;
			if (kueue)
				return fail(d, CU_EUNSUPPORTED, p.look,
				    "%s: framework \"%s\" is not supported by "
				    "cueue (supported: " CTL_FRAMEWORK_JOB
				    ", " CTL_FRAMEWORK_JOBSET ")",
				    p.disp, name);
			return fail(d, CU_EINVAL, p.look,
			    "%s: Unsupported value: \"%s\": supported values: "
			    "\"" CTL_FRAMEWORK_JOB "\", \"" CTL_FRAMEWORK_JOBSET
			    "\"",
			    p.disp, name);
		}
		rc = push_str(d, &c->integrations.frameworks,
		    &c->integrations.nframeworks, name);
		if (rc != CU_OK)
			return rc;
	}
	if (ext != NULL && json_array_size(ext) > 0)
		return fail(d, CU_EUNSUPPORTED,
		    "integrations.externalFrameworks",
		    "integrations.externalFrameworks: external frameworks are "
		    "not supported by cueue");
	fpath_set(&base, "integrations.labelKeysToCopy");
	json_array_foreach(keys, i, v)
	{
		cu_error e;

		path_index(&p, &base, i);
		if (api_validate_label_key(json_string_value(v), p.disp, &e) !=
		    CU_OK)
			return fail(d, CU_EINVAL, p.look, "%s", e.msg);
		rc = push_str(d, &c->integrations.label_keys_to_copy,
		    &c->integrations.nlabel_keys_to_copy, json_string_value(v));
		if (rc != CU_OK)
			return rc;
	}
	return CU_OK;
}

static int load_pods_ready(const struct dec *d, const json_t *root)
{
	struct ctl_config *c = d->c;
	const json_t *w = jget(root, "waitForPodsReady");
	const json_t *rq = jget(w, "requeuingStrategy");
	json_t *v;
	int64_t def_timeout;

	if (d->version == V1) {
		/* v1beta1: only `enable: true` keeps the section through
		 * conversion; its timeout default is 5m and an unset
		 * blockAdmission converts to true. */
		c->wait_for_pods_ready.enable = get_bool(w, "enable", false);
		def_timeout = 5 * NS_PER_M;
		c->wait_for_pods_ready.block_admission =
		    get_bool(w, "blockAdmission", true);
	} else {
		/* v1beta2 defaults the section to non-nil, so it is always
		 * on unless Kueue's DisableWaitForPodsReady gate is set. */
		c->wait_for_pods_ready.enable =
		    !get_bool(jget(root, "featureGates"),
			"DisableWaitForPodsReady", false);
		def_timeout = 30 * NS_PER_M;
		c->wait_for_pods_ready.block_admission =
		    get_bool(w, "blockAdmission", false);
	}
	if (!c->wait_for_pods_ready.enable)
		c->wait_for_pods_ready.block_admission = false;
	c->wait_for_pods_ready.timeout_ns = get_dur(w, "timeout", def_timeout);
	c->wait_for_pods_ready.recovery_timeout_ns =
	    get_dur(w, "recoveryTimeout", c->wait_for_pods_ready.timeout_ns);
	v = jget(rq, "timestamp");
	c->wait_for_pods_ready.timestamp = CTL_REQUEUE_EVICTION;
	if (v != NULL) {
		const char *ts = json_string_value(v);

		if (strcmp(ts, "Creation") == 0)
			c->wait_for_pods_ready.timestamp = CTL_REQUEUE_CREATION;
		else if (strcmp(ts, "Eviction") != 0 && ts[0] != '\0')
			return fail(d, CU_EINVAL,
			    "waitForPodsReady.requeuingStrategy.timestamp",
			    "waitForPodsReady.requeuingStrategy.timestamp: "
			    "Unsupported value: \"%s\": supported values: "
			    "\"Creation\", \"Eviction\"",
			    ts);
	}
	v = jget(rq, "backoffLimitCount");
	c->wait_for_pods_ready.has_backoff_limit_count = v != NULL;
	c->wait_for_pods_ready.backoff_limit_count =
	    v != NULL ? (int32_t)json_integer_value(v) : 0;
	v = jget(rq, "backoffBaseSeconds");
	c->wait_for_pods_ready.backoff_base_seconds =
	    v != NULL && json_integer_value(v) != 0
		? (int32_t)json_integer_value(v)
		: 60;
	v = jget(rq, "backoffMaxSeconds");
	c->wait_for_pods_ready.backoff_max_seconds =
	    v != NULL && json_integer_value(v) != 0
		? (int32_t)json_integer_value(v)
		: 3600;
	if (!c->wait_for_pods_ready.enable)
		return CU_OK;
	if (c->wait_for_pods_ready.timeout_ns < 0)
		return fail(d, CU_EINVAL, "waitForPodsReady.timeout",
		    "waitForPodsReady.timeout: Invalid value: must be greater "
		    "than or equal to 0");
	if (c->wait_for_pods_ready.recovery_timeout_ns < 0)
		return fail(d, CU_EINVAL, "waitForPodsReady.recoveryTimeout",
		    "waitForPodsReady.recoveryTimeout: Invalid value: must be "
		    "greater than or equal to 0");
	if (c->wait_for_pods_ready.backoff_limit_count < 0)
		return fail(d, CU_EINVAL,
		    "waitForPodsReady.requeuingStrategy.backoffLimitCount",
		    "waitForPodsReady.requeuingStrategy.backoffLimitCount: "
		    "Invalid value: must be greater than or equal to 0");
	if (c->wait_for_pods_ready.backoff_base_seconds < 0)
		return fail(d, CU_EINVAL,
		    "waitForPodsReady.requeuingStrategy.backoffBaseSeconds",
		    "waitForPodsReady.requeuingStrategy.backoffBaseSeconds: "
		    "Invalid value: must be greater than or equal to 0");
	if (c->wait_for_pods_ready.backoff_max_seconds < 0)
		return fail(d, CU_EINVAL,
		    "waitForPodsReady.requeuingStrategy.backoffMaxSeconds",
		    "waitForPodsReady.requeuingStrategy.backoffMaxSeconds: "
		    "Invalid value: must be greater than or equal to 0");
	return CU_OK;
}

static int load_leader_election(const struct dec *d, const json_t *root)
{
	struct ctl_config *c = d->c;
	const json_t *le = jget(root, "leaderElection");
	int rc;

	c->leader_election.leader_elect = get_bool(le, "leaderElect", true);
	c->leader_election.lease_duration_ns =
	    get_dur(le, "leaseDuration", 15 * NS_PER_S);
	c->leader_election.renew_deadline_ns =
	    get_dur(le, "renewDeadline", 10 * NS_PER_S);
	c->leader_election.retry_period_ns =
	    get_dur(le, "retryPeriod", 2 * NS_PER_S);
	rc = dup_str(
	    d, &c->leader_election.resource_lock, le, "resourceLock", "leases");
	if (rc == CU_OK)
		rc = dup_str(d, &c->leader_election.resource_name, le,
		    "resourceName", "c1f6bfd2.kueue.x-k8s.io");
	/* Kueue leaves this empty and controller-runtime then uses the
	 * pod's namespace, which is Kueue's `namespace` default as well;
	 * spelling it out makes --check-config show where the Lease is. */
	if (rc == CU_OK)
		rc = dup_str(d, &c->leader_election.resource_namespace, le,
		    "resourceNamespace", c->namespace);
	if (rc != CU_OK)
		return rc;
	if (strcmp(c->leader_election.resource_lock, "leases") != 0)
		return fail(d, CU_EUNSUPPORTED, "leaderElection.resourceLock",
		    "leaderElection.resourceLock: \"%s\" is not supported by "
		    "cueue (supported: leases)",
		    c->leader_election.resource_lock);
	if (!is_dns1123_subdomain(c->leader_election.resource_name))
		return fail(d, CU_EINVAL, "leaderElection.resourceName",
		    "leaderElection.resourceName: Invalid value: \"%s\": must "
		    "be a lowercase RFC 1123 subdomain",
		    c->leader_election.resource_name);
	if (!is_dns1123_label(c->leader_election.resource_namespace))
		return fail(d, CU_EINVAL, "leaderElection.resourceNamespace",
		    "leaderElection.resourceNamespace: Invalid value: \"%s\": "
		    "must be a lowercase RFC 1123 label",
		    c->leader_election.resource_namespace);
	if (!c->leader_election.leader_elect)
		return CU_OK;
	/* client-go refuses these at start-up; say so now, with a line. */
	if (c->leader_election.lease_duration_ns <=
	    c->leader_election.renew_deadline_ns)
		return fail(d, CU_EINVAL, "leaderElection.leaseDuration",
		    "leaderElection.leaseDuration: Invalid value: must be "
		    "greater than renewDeadline");
	if (c->leader_election.renew_deadline_ns <= 0 ||
	    c->leader_election.retry_period_ns <= 0 ||
	    (double)c->leader_election.renew_deadline_ns <=
		1.2 * (double)c->leader_election.retry_period_ns)
		return fail(d, CU_EINVAL, "leaderElection.renewDeadline",
		    "leaderElection.renewDeadline: Invalid value: must be "
		    "greater than 1.2 x retryPeriod (and both positive)");
	return CU_OK;
}

static int load_endpoints(const struct dec *d, const json_t *root)
{
	struct ctl_config *c = d->c;
	const json_t *wh = jget(root, "webhook");
	const json_t *m = jget(root, "metrics");
	const json_t *h = jget(root, "health");
	const json_t *lqm = jget(m, "localQueueMetrics");
	json_t *v;
	int rc;

	v = jget(wh, "port");
	c->webhook.port = v != NULL ? (int)json_integer_value(v) : 9443;
	if (v != NULL &&
	    (json_integer_value(v) < 1 || json_integer_value(v) > 65535))
		return fail(d, CU_EINVAL, "webhook.port",
		    "webhook.port: Invalid value: %" JSON_INTEGER_FORMAT
		    ": must be between 1 and 65535, inclusive",
		    json_integer_value(v));
	rc = dup_str(d, &c->webhook.host, wh, "host", "");
	if (rc == CU_OK)
		rc = dup_str(d, &c->webhook.cert_dir, wh, "certDir",
		    "/tmp/k8s-webhook-server/serving-certs");
	if (rc == CU_OK)
		rc = dup_str(
		    d, &c->metrics.bind_address, m, "bindAddress", ":8443");
	if (rc == CU_OK)
		rc = dup_str(d, &c->health.probe_bind_address, h,
		    "healthProbeBindAddress", ":8081");
	/* controller-runtime's defaults for the probe paths. */
	if (rc == CU_OK)
		rc = dup_str(d, &c->health.readiness_endpoint, h,
		    "readinessEndpointName", "readyz");
	if (rc == CU_OK)
		rc = dup_str(d, &c->health.liveness_endpoint, h,
		    "livenessEndpointName", "healthz");
	if (rc != CU_OK)
		return rc;
	if (!valid_bind_address(c->metrics.bind_address))
		return fail(d, CU_EINVAL, "metrics.bindAddress",
		    "metrics.bindAddress: Invalid value: \"%s\": must be "
		    "[host]:port with a port in 0-65535, or \"0\" to disable",
		    c->metrics.bind_address);
	if (!valid_bind_address(c->health.probe_bind_address))
		return fail(d, CU_EINVAL, "health.healthProbeBindAddress",
		    "health.healthProbeBindAddress: Invalid value: \"%s\": "
		    "must be [host]:port with a port in 0-65535, or \"0\" to "
		    "disable",
		    c->health.probe_bind_address);
	c->metrics.enable_cluster_queue_resources =
	    get_bool(m, "enableClusterQueueResources", false);
	c->metrics.local_queue_metrics =
	    lqm != NULL ? get_bool(lqm, "enable", false) : true;
	v = jget(lqm, "localQueueSelector");
	if (v != NULL) {
		rc = decode_selector(d, &c->metrics.local_queue_selector, v,
		    "metrics.localQueueMetrics.localQueueSelector");
		if (rc != CU_OK)
			return rc;
		c->metrics.has_local_queue_selector = true;
	}
	return CU_OK;
}

static int load_cert_and_client(const struct dec *d, const json_t *root)
{
	struct ctl_config *c = d->c;
	const json_t *ic = jget(root, "internalCertManagement");
	const json_t *cc = jget(root, "clientConnection");
	json_t *v;
	int rc;

	c->internal_cert.enable = get_bool(ic, "enable", true);
	rc = dup_str(d, &c->internal_cert.webhook_service_name, ic,
	    "webhookServiceName",
	    c->internal_cert.enable ? "kueue-webhook-service" : NULL);
	if (rc == CU_OK)
		rc = dup_str(d, &c->internal_cert.webhook_secret_name, ic,
		    "webhookSecretName",
		    c->internal_cert.enable ? "kueue-webhook-server-cert"
					    : NULL);
	if (rc != CU_OK)
		return rc;
	if (c->internal_cert.enable &&
	    !is_dns1035_label(c->internal_cert.webhook_service_name))
		return fail(d, CU_EINVAL,
		    "internalCertManagement.webhookServiceName",
		    "internalCertManagement.webhookServiceName: Invalid value: "
		    "\"%s\": must be a lowercase RFC 1035 label",
		    c->internal_cert.webhook_service_name);
	if (c->internal_cert.enable &&
	    !is_dns1123_subdomain(c->internal_cert.webhook_secret_name))
		return fail(d, CU_EINVAL,
		    "internalCertManagement.webhookSecretName",
		    "internalCertManagement.webhookSecretName: Invalid value: "
		    "\"%s\": must be a lowercase RFC 1123 subdomain",
		    c->internal_cert.webhook_secret_name);

	v = jget(cc, "qps");
	c->client_connection.qps = v != NULL ? json_number_value(v) : 300.0;
	v = jget(cc, "burst");
	c->client_connection.burst =
	    v != NULL ? (int32_t)json_integer_value(v) : 500;
	if (!(c->client_connection.qps > 0) ||
	    !isfinite(c->client_connection.qps))
		return fail(d, CU_EINVAL, "clientConnection.qps",
		    "clientConnection.qps: Invalid value: %g: must be greater "
		    "than 0",
		    c->client_connection.qps);
	if ((double)c->client_connection.burst < c->client_connection.qps)
		return fail(d, CU_EINVAL, "clientConnection.burst",
		    "clientConnection.burst: Invalid value: %" PRId32
		    ": must be greater than or equal to qps (%g)",
		    c->client_connection.burst, c->client_connection.qps);
	return CU_OK;
}

/* tls: minVersion and cipherSuites become the webhook server's GnuTLS
 * priorities; an unknown or insecure value is refused, naming the field.
 * curvePreferences is not honoured (GnuTLS keeps its groups). */
static int load_tls(const struct dec *d, const json_t *root)
{
	const json_t *tls = jget(root, "tls");
	const json_t *suites = jget(tls, "cipherSuites");
	const char **names = NULL;
	size_t i, n = json_array_size(suites);
	cu_error e;
	int rc;

	if (tls == NULL)
		return CU_OK;
	if (n > 0 && (names = cu_calloc(n, sizeof(*names))) == NULL)
		return cu_error_set(d->err, CU_ENOMEM, "out of memory");
	for (i = 0; i < n; i++)
		names[i] = json_string_value(json_array_get(suites, i));
	rc =
	    ctl_httpd_tls_priorities(json_string_value(jget(tls, "minVersion")),
		names, n, &d->c->tls.priorities, &e);
	cu_free(names);
	if (rc == CU_EINVAL)
		return fail(d, rc,
		    strncmp(e.msg, "tls.minVersion", 14) == 0
			? "tls.minVersion"
			: "tls.cipherSuites",
		    "%s", e.msg);
	if (rc != CU_OK)
		return cu_error_set(d->err, rc, "%s", e.msg);
	return CU_OK;
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
		root = jget(root, key);
		path = dot + 1;
	}
	return root != NULL ? jget(root, path) : NULL;
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
static int check_gates(const struct dec *d, const json_t *root)
{
	const json_t *gates = jget(root, "featureGates");
	const char *name;
	json_t *v;
	int rc;

	json_object_foreach((json_t *)gates, name, v)
	{
		struct fpath p, base = {0};
		char *what;

		fpath_set(&base, "featureGates");
		path_child(&p, &base, name, true);
		if (!ctl_compat_gate_known(name))
			return fail(d, CU_EINVAL, p.look,
			    "%s: unrecognized feature gate: %s", p.disp, name);
		if (ctl_compat_gate_honoured(name))
			continue;
		what = cu_asprintf("not acted on by cueue: it behaves as "
				   "without %s=%s",
		    name, json_is_true(v) ? "true" : "false");
		if (what == NULL)
			return cu_error_set(d->err, CU_ENOMEM, "out of memory");
		rc = add_warning_msg(d, p.look, p.disp, what);
		cu_free(what);
		if (rc != CU_OK)
			return rc;
	}
	return CU_OK;
}

/* What Kueue's validation refuses in fairSharing and resources, though
 * cueue does not act on them: the file must be one Kueue would load. */
static int check_fair_and_resources(const struct dec *d, const json_t *root)
{
	/* v1beta1: Kueue validates fairSharing only with enable: true. */
	const json_t *ps =
	    d->version == V1 &&
		    !get_bool(jget(root, "fairSharing"), "enable", false)
		? NULL
		: jpath(root, "fairSharing.preemptionStrategies");
	const json_t *tr = jpath(root, "resources.transformations");
	const json_t *ex = jpath(root, "resources.excludeResourcePrefixes");
	struct fpath p, base = {0};
	size_t i, k;
	json_t *v;

	fpath_set(&base, "fairSharing.preemptionStrategies");
	json_array_foreach((json_t *)ps, i, v)
	{
		const char *st = json_string_value(v);

		path_index(&p, &base, i);
		if (strcmp(st, "LessThanOrEqualToFinalShare") != 0 &&
		    strcmp(st, "LessThanInitialShare") != 0)
			return fail(d, CU_EINVAL, p.look,
			    "%s: Unsupported value: \"%s\": supported values: "
			    "\"LessThanOrEqualToFinalShare\", "
			    "\"LessThanInitialShare\"",
			    p.disp, st);
		for (k = 0; k < i; k++)
			if (strcmp(json_string_value(json_array_get(ps, k)),
				st) == 0)
				return fail(d, CU_EINVAL, p.look,
				    "%s: Duplicate value: \"%s\"", p.disp, st);
	}
	fpath_set(&base, "resources.transformations");
	json_array_foreach((json_t *)tr, i, v)
	{
		const char *in = json_string_value(jget(v, "input"));
		const char *st = json_string_value(jget(v, "strategy"));

		path_index(&p, &base, i);
		if (in == NULL || in[0] == '\0')
			return fail(d, CU_EINVAL, p.look,
			    "%s.input: Required value", p.disp);
		for (k = 0; k < i; k++) {
			const char *prev = json_string_value(
			    jget(json_array_get(tr, k), "input"));

			if (prev != NULL && strcmp(prev, in) == 0)
				return fail(d, CU_EINVAL, p.look,
				    "%s.input: Duplicate value: \"%s\"", p.disp,
				    in);
		}
		if (st != NULL && strcmp(st, "Retain") != 0 &&
		    strcmp(st, "Replace") != 0)
			return fail(d, CU_EINVAL, p.look,
			    "%s.strategy: Unsupported value: \"%s\": supported "
			    "values: \"Retain\", \"Replace\"",
			    p.disp, st);
	}
	fpath_set(&base, "resources.excludeResourcePrefixes");
	json_array_foreach((json_t *)ex, i, v)
	{
		path_index(&p, &base, i);
		if (json_string_value(v)[0] == '\0')
			return fail(d, CU_EINVAL, p.look,
			    "%s: Invalid value: \"\": must not be empty",
			    p.disp);
	}
	return CU_OK;
}

/* One warning per field of the compatibility table (controller/compat.c)
 * that is set, or defaulted on, and that cueue does not act on. */
static int warn_ignored(const struct dec *d, const json_t *root)
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
			warn =
			    v != NULL && !json_is_null(v) &&
			    (d->version == V2 || get_bool(v, "enable", false));
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
		rc = add_warning_msg(d, e->field, e->field, what);
		cu_free(what);
		if (rc != CU_OK)
			return rc;
	}
	rc = check_fair_and_resources(d, root);
	return rc != CU_OK ? rc : check_gates(d, root);
}

static int load_root(const struct dec *d, const json_t *root)
{
	struct ctl_config *c = d->c;
	json_t *v;
	int rc;

	rc = dup_str(d, &c->namespace, root, "namespace", NULL);
	if (rc != CU_OK)
		return rc;
	if (c->namespace == NULL || c->namespace[0] == '\0') {
		cu_free(c->namespace);
		c->namespace = ctl_config_operator_namespace(NULL);
		if (c->namespace == NULL)
			return cu_error_set(d->err, CU_ENOMEM, "out of memory");
	}
	if (!is_dns1123_label(c->namespace))
		return fail(d, CU_EINVAL, "namespace",
		    "namespace: Invalid value: \"%s\": must be a lowercase RFC "
		    "1123 label",
		    c->namespace);
	rc = load_endpoints(d, root);
	if (rc == CU_OK)
		rc = load_leader_election(d, root);
	if (rc != CU_OK)
		return rc;

	c->manage_jobs_without_queue_name =
	    get_bool(root, "manageJobsWithoutQueueName", false);
	v = jget(root, "managedJobsNamespaceSelector");
	if (v != NULL) {
		rc = decode_selector(d, &c->managed_jobs_ns_selector, v,
		    "managedJobsNamespaceSelector");
	} else {
		/* Kueue's default: every namespace but kube-system and
		 * its own. */
		const char *vals[2] = {"kube-system", c->namespace};

		api_selector_init(&c->managed_jobs_ns_selector);
		rc = api_selector_add(&c->managed_jobs_ns_selector,
		    "kubernetes.io/metadata.name", API_SEL_OP_NOT_IN, vals, 2,
		    "managedJobsNamespaceSelector", d->err);
	}
	if (rc == CU_OK)
		rc = load_cert_and_client(d, root);
	if (rc == CU_OK)
		rc = load_pods_ready(d, root);
	if (rc == CU_OK)
		rc = load_integrations(d, root);
	if (rc == CU_OK)
		rc = load_tls(d, root);
	if (rc == CU_OK)
		rc = warn_ignored(d, root);
	return rc;
}

static int load_json(struct ctl_config *out, const json_t *root,
    const api_yaml_lines *lines, const char *name, cu_error *err)
{
	struct dec d = {name, lines, 0, out, err};
	struct fpath top = {"", ""};
	json_t *av, *kind;
	const char *api;
	int rc;

	if (!json_is_object(root))
		return fail(&d, CU_EPARSE, NULL,
		    "expected a Configuration mapping, got %s",
		    root != NULL ? json_type_name(root) : "nothing");
	av = json_object_get(root, "apiVersion");
	kind = json_object_get(root, "kind");
	if (!json_is_string(av) || !json_is_string(kind))
		return fail(&d, CU_EPARSE, av == NULL ? NULL : "apiVersion",
		    "apiVersion and kind must be set (kind: Configuration, "
		    "apiVersion: " CTL_CONFIG_V1BETA2 ")");
	api = json_string_value(av);
	if (strcmp(api, CTL_CONFIG_V1BETA2) == 0)
		d.version = V2;
	else if (strcmp(api, CTL_CONFIG_V1BETA1) == 0)
		d.version = V1;
	else
		return fail(&d, CU_EPARSE, "apiVersion",
		    "apiVersion \"%s\" is not supported: expected "
		    "\"" CTL_CONFIG_V1BETA2 "\" or \"" CTL_CONFIG_V1BETA1 "\"",
		    api);
	if (strcmp(json_string_value(kind), "Configuration") != 0)
		return fail(&d, CU_EPARSE, "kind",
		    "kind \"%s\" is not supported: expected \"Configuration\"",
		    json_string_value(kind));
	rc = check(&d, root, OBJ(F_ROOT), &top, false);
	if (rc != CU_OK)
		return rc;
	out->api_version = cu_strdup(api);
	if (out->api_version == NULL)
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	return load_root(&d, root);
}

/* ---- public API ------------------------------------------------------ */

/* Configuration files are small; tight limits keep a hostile ConfigMap
 * from costing memory before the strict checks even run. */
static const struct api_yaml_limits config_limits = {
    .max_bytes = (size_t)1 << 20,
    .max_depth = 32,
    .max_nodes = 100000,
};

int ctl_config_load_buffer(struct ctl_config *out, const char *buf, size_t len,
    const char *name, cu_error *err)
{
	json_t *root = NULL;
	api_yaml_lines *lines = NULL;
	cu_error e;
	int rc;

	memset(out, 0, sizeof(*out));
	api_selector_init(&out->managed_jobs_ns_selector);
	api_selector_init(&out->metrics.local_queue_selector);
	cu_error_clear(&e);
	rc = api_yaml_load(&root, &lines, buf, len, &config_limits, &e);
	if (rc != CU_OK)
		return cu_error_set(err, rc, "%s%s%s", name ? name : "",
		    name ? ": " : "", e.msg);
	rc = load_json(out, root, lines, name, err);
	json_decref(root);
	api_yaml_lines_free(lines);
	if (rc != CU_OK)
		ctl_config_dispose(out);
	return rc;
}

int ctl_config_load(struct ctl_config *out, const char *path, cu_error *err)
{
	json_t *root = NULL;
	api_yaml_lines *lines = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	api_selector_init(&out->managed_jobs_ns_selector);
	api_selector_init(&out->metrics.local_queue_selector);
	rc = api_yaml_load_file(&root, &lines, path, &config_limits, err);
	if (rc != CU_OK)
		return rc;
	rc = load_json(out, root, lines, path, err);
	json_decref(root);
	api_yaml_lines_free(lines);
	if (rc != CU_OK)
		ctl_config_dispose(out);
	return rc;
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

/* ---- printing -------------------------------------------------------- */

struct emit {
	yaml_emitter_t em;
	cu_buf *out;
	int rc; /* first output failure */
};

static int emit_write(void *data, unsigned char *buffer, size_t size)
{
	struct emit *e = data;
	int rc = cu_buf_add(e->out, buffer, size);

	if (rc != CU_OK) {
		e->rc = rc;
		return 0;
	}
	return 1;
}

/* True when a plain scalar s would load back as something other than
 * the string s (YAML 1.1 booleans, nulls, numbers), so it must be
 * quoted. */
static bool needs_quotes(const char *s)
{
	static const char *const words[] = {
	    "y", "yes", "n", "no", "true", "false", "on", "off", "null", "~"};
	char low[8];
	size_t i, n = strlen(s);
	char *end;

	if (n == 0)
		return true;
	if (n < sizeof(low)) {
		for (i = 0; i <= n; i++)
			low[i] = (char)tolower((unsigned char)s[i]);
		for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
			if (strcmp(low, words[i]) == 0)
				return true;
	}
	if (isdigit((unsigned char)s[0]) || s[0] == '-' || s[0] == '+' ||
	    s[0] == '.') {
		errno = 0;
		(void)strtod(s, &end);
		if (*end == '\0')
			return true;
		/* 0x.., 0o.., 1_000, sexagesimal: err on the quoted side. */
		return strpbrk(s, "xXoO_:") != NULL &&
		       isdigit((unsigned char)s[s[0] == '-' || s[0] == '+']);
	}
	return false;
}

static int ev_scalar(struct emit *e, const char *s, bool is_string)
{
	yaml_event_t ev;
	yaml_scalar_style_t style = YAML_ANY_SCALAR_STYLE;

	if (is_string && needs_quotes(s))
		style = YAML_SINGLE_QUOTED_SCALAR_STYLE;
	if (!yaml_scalar_event_initialize(&ev, NULL, NULL,
		(yaml_char_t *)(uintptr_t)s, (int)strlen(s), 1, 1, style) ||
	    !yaml_emitter_emit(&e->em, &ev))
		return e->rc != CU_OK ? e->rc : CU_ENOMEM;
	return CU_OK;
}

static int ev_simple(struct emit *e, yaml_event_type_t type, bool flow)
{
	yaml_event_t ev;
	int ok = 0;

	switch (type) {
	case YAML_MAPPING_START_EVENT:
		ok = yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
		    flow ? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE);
		break;
	case YAML_MAPPING_END_EVENT:
		ok = yaml_mapping_end_event_initialize(&ev);
		break;
	case YAML_SEQUENCE_START_EVENT:
		ok = yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
		    flow ? YAML_FLOW_SEQUENCE_STYLE
			 : YAML_BLOCK_SEQUENCE_STYLE);
		break;
	case YAML_SEQUENCE_END_EVENT:
		ok = yaml_sequence_end_event_initialize(&ev);
		break;
	case YAML_STREAM_START_EVENT:
		ok =
		    yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
		break;
	case YAML_STREAM_END_EVENT:
		ok = yaml_stream_end_event_initialize(&ev);
		break;
	case YAML_DOCUMENT_START_EVENT:
		ok = yaml_document_start_event_initialize(
		    &ev, NULL, NULL, NULL, 1);
		break;
	case YAML_DOCUMENT_END_EVENT:
		ok = yaml_document_end_event_initialize(&ev, 1);
		break;
	default:
		break;
	}
	if (!ok || !yaml_emitter_emit(&e->em, &ev))
		return e->rc != CU_OK ? e->rc : CU_ENOMEM;
	return CU_OK;
}

/* Emit any JSON value as YAML; objects keep jansson's insertion order. */
static int emit_json(struct emit *e, const json_t *j)
{
	char num[64];
	int rc;

	switch (json_typeof(j)) {
	case JSON_OBJECT: {
		const char *key;
		json_t *v;

		rc = ev_simple(
		    e, YAML_MAPPING_START_EVENT, json_object_size(j) == 0);
		json_object_foreach((json_t *)j, key, v)
		{
			if (rc == CU_OK)
				rc = ev_scalar(e, key, true);
			if (rc == CU_OK)
				rc = emit_json(e, v);
		}
		return rc == CU_OK ? ev_simple(e, YAML_MAPPING_END_EVENT, false)
				   : rc;
	}
	case JSON_ARRAY: {
		size_t i;
		json_t *v;

		rc = ev_simple(
		    e, YAML_SEQUENCE_START_EVENT, json_array_size(j) == 0);
		json_array_foreach(j, i, v)
		{
			if (rc == CU_OK)
				rc = emit_json(e, v);
		}
		return rc == CU_OK
			   ? ev_simple(e, YAML_SEQUENCE_END_EVENT, false)
			   : rc;
	}
	case JSON_STRING:
		return ev_scalar(e, json_string_value(j), true);
	case JSON_INTEGER:
		snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
		    json_integer_value(j));
		return ev_scalar(e, num, false);
	case JSON_REAL:
		snprintf(num, sizeof(num), "%.9g", json_real_value(j));
		return ev_scalar(e, num, false);
	case JSON_TRUE:
		return ev_scalar(e, "true", false);
	case JSON_FALSE:
		return ev_scalar(e, "false", false);
	case JSON_NULL:
	default:
		return ev_scalar(e, "null", false);
	}
}

static json_t *jdur(int64_t ns)
{
	char s[64];

	ctl_config_format_duration(ns, s, sizeof(s));
	return json_string(s);
}

static json_t *jstrv(char *const *v, size_t n)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a != NULL && i < n; i++)
		if (json_array_append_new(a, json_string(v[i])) != 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/* The effective configuration as the JSON form of Kueue's v1beta2
 * Configuration, in the field order of Kueue's Go type. */
static int build_json(const struct ctl_config *c, json_t **out, cu_error *err)
{
	json_t *root, *sel = NULL, *lqsel = NULL, *lqm, *rq, *ic;
	int rc;

	*out = NULL;
	rc = api_label_selector_encode(&sel, &c->managed_jobs_ns_selector, err);
	if (rc != CU_OK)
		return rc;
	if (c->metrics.has_local_queue_selector) {
		rc = api_label_selector_encode(
		    &lqsel, &c->metrics.local_queue_selector, err);
		if (rc != CU_OK) {
			json_decref(sel);
			return rc;
		}
	}
	lqm = json_pack("{s:b}", "enable", c->metrics.local_queue_metrics);
	if (lqm != NULL && lqsel != NULL &&
	    json_object_set(lqm, "localQueueSelector", lqsel) != 0) {
		json_decref(lqm);
		lqm = NULL;
	}
	json_decref(lqsel);
	rq = json_pack("{s:s, s:i, s:i}", "timestamp",
	    c->wait_for_pods_ready.timestamp == CTL_REQUEUE_CREATION
		? "Creation"
		: "Eviction",
	    "backoffBaseSeconds",
	    (int)c->wait_for_pods_ready.backoff_base_seconds,
	    "backoffMaxSeconds",
	    (int)c->wait_for_pods_ready.backoff_max_seconds);
	if (rq != NULL && c->wait_for_pods_ready.has_backoff_limit_count &&
	    json_object_set_new(rq, "backoffLimitCount",
		json_integer(c->wait_for_pods_ready.backoff_limit_count)) !=
		0) {
		json_decref(rq);
		rq = NULL;
	}
	ic = json_pack("{s:b}", "enable", c->internal_cert.enable);
	if (ic != NULL && c->internal_cert.webhook_service_name != NULL &&
	    json_object_set_new(ic, "webhookServiceName",
		json_string(c->internal_cert.webhook_service_name)) != 0) {
		json_decref(ic);
		ic = NULL;
	}
	if (ic != NULL && c->internal_cert.webhook_secret_name != NULL &&
	    json_object_set_new(ic, "webhookSecretName",
		json_string(c->internal_cert.webhook_secret_name)) != 0) {
		json_decref(ic);
		ic = NULL;
	}
	if (lqm == NULL || rq == NULL || ic == NULL) {
		json_decref(sel);
		json_decref(lqm);
		json_decref(rq);
		json_decref(ic);
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	}
	root = json_pack("{s:s, s:s, s:s,"
			 " s:{s:i, s:s, s:s},"
			 " s:{s:b, s:o, s:o, s:o, s:s, s:s, s:s},"
			 " s:{s:s, s:b, s:O},"
			 " s:{s:s, s:s, s:s},"
			 " s:b, s:O, s:O}",
	    "apiVersion", CTL_CONFIG_V1BETA2, "kind", "Configuration",
	    "namespace", c->namespace, "webhook", "port", c->webhook.port,
	    "host", c->webhook.host, "certDir", c->webhook.cert_dir,
	    "leaderElection", "leaderElect", c->leader_election.leader_elect,
	    "leaseDuration", jdur(c->leader_election.lease_duration_ns),
	    "renewDeadline", jdur(c->leader_election.renew_deadline_ns),
	    "retryPeriod", jdur(c->leader_election.retry_period_ns),
	    "resourceLock", c->leader_election.resource_lock, "resourceName",
	    c->leader_election.resource_name, "resourceNamespace",
	    c->leader_election.resource_namespace, "metrics", "bindAddress",
	    c->metrics.bind_address, "enableClusterQueueResources",
	    c->metrics.enable_cluster_queue_resources, "localQueueMetrics", lqm,
	    "health", "healthProbeBindAddress", c->health.probe_bind_address,
	    "readinessEndpointName", c->health.readiness_endpoint,
	    "livenessEndpointName", c->health.liveness_endpoint,
	    "manageJobsWithoutQueueName", c->manage_jobs_without_queue_name,
	    "managedJobsNamespaceSelector", sel, "internalCertManagement", ic);
	json_decref(sel);
	json_decref(lqm);
	json_decref(ic);
	if (root == NULL) {
		json_decref(rq);
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	}
	if (c->wait_for_pods_ready.enable) {
		json_t *w = json_pack("{s:o, s:b, s:O, s:o}", "timeout",
		    jdur(c->wait_for_pods_ready.timeout_ns), "blockAdmission",
		    c->wait_for_pods_ready.block_admission, "requeuingStrategy",
		    rq, "recoveryTimeout",
		    jdur(c->wait_for_pods_ready.recovery_timeout_ns));

		if (w == NULL ||
		    json_object_set_new(root, "waitForPodsReady", w))
			goto nomem;
	} else if (json_object_set_new(root, "featureGates",
		       json_pack("{s:b}", "DisableWaitForPodsReady", 1)) != 0) {
		/* The only v1beta2 spelling of "off" (a v1beta1 file without
		 * waitForPodsReady.enable). */
		goto nomem;
	}
	json_decref(rq);
	rq = NULL;
	if (json_object_set_new(root, "clientConnection",
		json_pack("{s:f, s:i}", "qps", c->client_connection.qps,
		    "burst", (int)c->client_connection.burst)) != 0)
		goto nomem;
	{
		json_t *in = json_pack("{s:o}", "frameworks",
		    jstrv(c->integrations.frameworks,
			c->integrations.nframeworks));

		if (in != NULL && c->integrations.nlabel_keys_to_copy > 0 &&
		    json_object_set_new(in, "labelKeysToCopy",
			jstrv(c->integrations.label_keys_to_copy,
			    c->integrations.nlabel_keys_to_copy)) != 0) {
			json_decref(in);
			in = NULL;
		}
		if (json_object_set_new(root, "integrations", in) != 0)
			goto nomem;
	}
	*out = root;
	return CU_OK;
nomem:
	json_decref(rq);
	json_decref(root);
	return cu_error_set(err, CU_ENOMEM, "out of memory");
}

int ctl_config_to_yaml(const struct ctl_config *c, cu_buf *out, cu_error *err)
{
	struct emit e;
	json_t *root;
	int rc;

	rc = build_json(c, &root, err);
	if (rc != CU_OK)
		return rc;
	memset(&e, 0, sizeof(e));
	e.out = out;
	if (!yaml_emitter_initialize(&e.em)) {
		json_decref(root);
		return cu_error_set(err, CU_ENOMEM, "out of memory");
	}
	yaml_emitter_set_output(&e.em, emit_write, &e);
	yaml_emitter_set_unicode(&e.em, 1);
	yaml_emitter_set_width(&e.em, -1);
	rc = ev_simple(&e, YAML_STREAM_START_EVENT, false);
	if (rc == CU_OK)
		rc = ev_simple(&e, YAML_DOCUMENT_START_EVENT, false);
	if (rc == CU_OK)
		rc = emit_json(&e, root);
	if (rc == CU_OK)
		rc = ev_simple(&e, YAML_DOCUMENT_END_EVENT, false);
	if (rc == CU_OK)
		rc = ev_simple(&e, YAML_STREAM_END_EVENT, false);
	if (rc == CU_OK && !yaml_emitter_flush(&e.em))
		rc = e.rc != CU_OK ? e.rc : CU_ENOMEM;
	yaml_emitter_delete(&e.em);
	json_decref(root);
	if (rc != CU_OK)
		return cu_error_set(err, rc,
		    "cannot print the configuration: %s", cu_err_desc(rc));
	return CU_OK;
}
