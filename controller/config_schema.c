/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/config_schema.c - the strict half of loading a Kueue
 * Configuration: the field table of both API versions, the schema walk
 * that refuses unknown fields and wrong types with their path and YAML
 * line, the error and warning messages in one format, and the typed
 * readers the section loaders use on values the walk accepted.
 *
 * The schema is a table rather than hand-written decoding because Kueue's
 * Configuration has many sections cueue only needs to *recognise* (to stay
 * strict without rejecting valid Kueue files); a table keeps those cheap.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "api/labelselector.h"
#include "api/yaml.h"
#include "controller/config_int.h"

#define V1 CTL_CONFIG_VER_1 /* field exists in v1beta1 */
#define V2 CTL_CONFIG_VER_2 /* field exists in v1beta2 */
#define VB (V1 | V2)

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

static int path_line(const struct ctl_config_dec *d, const char *look)
{
	return api_yaml_line(d->lines, look, NULL);
}

__attribute__((format(printf, 4, 5))) int ctl_config_fail(
    const struct ctl_config_dec *d, int code, const char *look, const char *fmt,
    ...)
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
	if (d->errs != NULL) {
		char *full =
		    cu_asprintf("%s%s%s%s", d->name != NULL ? d->name : "",
			d->name != NULL ? ": " : "", where, msg);
		char **v = full != NULL ? cu_realloc(d->errs->lines,
					      (d->errs->n + 1) * sizeof(*v))
					: NULL;

		if (v == NULL) {
			cu_free(full);
			return cu_error_set(d->err, CU_ENOMEM, "out of memory");
		}
		d->errs->lines = v;
		v[d->errs->n++] = full;
		if (d->errs->n > 1)
			return code; /* d->err keeps the first */
	}
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

void ctl_config_path_child(struct ctl_config_path *dst,
    const struct ctl_config_path *parent, const char *key, bool map_key)
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

void ctl_config_path_index(
    struct ctl_config_path *dst, const struct ctl_config_path *parent, size_t i)
{
	char idx[32];

	snprintf(idx, sizeof(idx), "[%zu]", i);
	memcpy(dst, parent, sizeof(*dst));
	cat(dst->disp, sizeof(dst->disp), idx, false);
	cat(dst->look, sizeof(dst->look), idx, false);
}

const char *ctl_config_type_name(const json_t *j)
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

static int wrong_type(const struct ctl_config_dec *d,
    const struct ctl_config_path *p, const json_t *j, const char *want)
{
	return ctl_config_fail(d, CU_EPARSE, p->look,
	    "%s: invalid type: expected %s, got %s", p->disp, want,
	    ctl_config_type_name(j));
}

/* Strictly check j against s: unknown fields (including fields of the
 * other API version) and wrong types fail with path and line. A null field
 * is accepted, as Go's decoder treats it as "unset"; a null list item or
 * map value is refused (Go would turn it into "" or 0, never what was
 * meant). */
static int check(const struct ctl_config_dec *d, const json_t *j,
    const struct schema *s, const struct ctl_config_path *p, bool in_collection)
{
	struct ctl_config_path cp;
	int rc, first = CU_OK;

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

			ctl_config_path_child(&cp, p, key, false);
			for (f = s->fields; f->name != NULL; f++)
				if (strcmp(f->name, key) == 0 &&
				    (f->versions & d->version) != 0)
					break;
			if (f->name == NULL) {
				rc = ctl_config_fail(d, CU_EPARSE, cp.look,
				    "unknown field \"%s\"", cp.disp);
			} else {
				rc = check(d, v, f->schema, &cp, false);
			}
			if (rc == CU_ENOMEM)
				return rc;
			if (rc != CU_OK && first == CU_OK)
				first = rc;
		}
		return first;
	}
	case SK_LIST: {
		size_t i;
		json_t *v;

		if (!json_is_array(j))
			return wrong_type(d, p, j, "a sequence");
		json_array_foreach(j, i, v)
		{
			ctl_config_path_index(&cp, p, i);
			rc = check(d, v, s->elem, &cp, true);
			if (rc == CU_ENOMEM)
				return rc;
			if (rc != CU_OK && first == CU_OK)
				first = rc;
		}
		return first;
	}
	case SK_MAP: {
		const char *key;
		json_t *v;

		if (!json_is_object(j))
			return wrong_type(d, p, j, "a mapping");
		json_object_foreach((json_t *)j, key, v)
		{
			ctl_config_path_child(&cp, p, key, true);
			rc = check(d, v, s->elem, &cp, true);
			if (rc == CU_ENOMEM)
				return rc;
			if (rc != CU_OK && first == CU_OK)
				first = rc;
		}
		return first;
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
			return ctl_config_fail(d, CU_EPARSE, p->look,
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
			return ctl_config_fail(
			    d, rc, p->look, "%s: %s", p->disp, e.msg);
		return CU_OK;
	}
	case SK_ANY:
	default:
		return CU_OK;
	}
}

int ctl_config_check_schema(const struct ctl_config_dec *d, const json_t *root)
{
	struct ctl_config_path top = {"", ""};

	return check(d, root, OBJ(F_ROOT), &top, false);
}

/* ---- extraction helpers (types were checked by check()) -------------- */

/* Member k of o, NULL when o is NULL, k is absent or k is null. */
json_t *ctl_config_jget(const json_t *o, const char *k)
{
	json_t *v = o != NULL ? json_object_get(o, k) : NULL;

	return json_is_null(v) ? NULL : v;
}

/* Build the lookup path "a.b.c" for messages from a fixed key chain. */
void ctl_config_path_set(struct ctl_config_path *p, const char *s)
{
	snprintf(p->disp, sizeof(p->disp), "%s", s);
	snprintf(p->look, sizeof(p->look), "%s", s);
}

int ctl_config_dup_str(const struct ctl_config_dec *d, char **dst,
    const json_t *o, const char *k, const char *def)
{
	json_t *v = ctl_config_jget(o, k);
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

bool ctl_config_get_bool(const json_t *o, const char *k, bool def)
{
	json_t *v = ctl_config_jget(o, k);

	return v != NULL ? json_is_true(v) : def;
}

int64_t ctl_config_get_dur(const json_t *o, const char *k, int64_t def)
{
	json_t *v = ctl_config_jget(o, k);
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

int ctl_config_add_warning(const struct ctl_config_dec *d, const char *look,
    const char *disp, const char *what)
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

int ctl_config_push_str(
    const struct ctl_config_dec *d, char ***arr, size_t *n, const char *s)
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
int ctl_config_decode_selector(const struct ctl_config_dec *d,
    api_selector *out, const json_t *j, const char *path)
{
	cu_error e;
	int rc;

	cu_error_clear(&e);
	rc = api_label_selector_decode(out, j, path, &e);
	if (rc == CU_ENOMEM)
		return cu_error_set(d->err, rc, "out of memory");
	if (rc != CU_OK)
		return ctl_config_fail(d, rc, path, "%s", e.msg);
	return CU_OK;
}
