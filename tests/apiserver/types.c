/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/types.c - type checking of request bodies. A real
 * kube-apiserver decodes built-in kinds into Go structs, so a value of the
 * wrong JSON type is a decode error (400 "... cannot be handled as a ...");
 * custom resources are validated against their structural schema after
 * pruning and defaulting (422 Invalid listing every cause: type, enum,
 * required, bounds, lengths, pattern, format, item and property counts,
 * list-type uniqueness). A lenient server would store objects no real
 * cluster accepts.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/apiserver/apiserver.h"

enum ty { T_OBJ, T_STR, T_INT, T_BOOL, T_ARR, T_MAPSTR, T_ARRSTR };

struct field_type {
	const char *plural; /* NULL = every built-in kind */
	const char *path;
	enum ty type;
	const char *go; /* Go type named in the error */
};

static const struct field_type fields[] = {
    {NULL, "apiVersion", T_STR, "string"},
    {NULL, "kind", T_STR, "string"},
    {NULL, "metadata", T_OBJ, "v1.ObjectMeta"},
    {NULL, "metadata.name", T_STR, "string"},
    {NULL, "metadata.generateName", T_STR, "string"},
    {NULL, "metadata.namespace", T_STR, "string"},
    {NULL, "metadata.uid", T_STR, "types.UID"},
    {NULL, "metadata.resourceVersion", T_STR, "string"},
    {NULL, "metadata.generation", T_INT, "int64"},
    {NULL, "metadata.labels", T_MAPSTR, "map[string]string"},
    {NULL, "metadata.annotations", T_MAPSTR, "map[string]string"},
    {NULL, "metadata.finalizers", T_ARRSTR, "[]string"},
    {NULL, "metadata.ownerReferences", T_ARR, "[]v1.OwnerReference"},
    {"configmaps", "data", T_MAPSTR, "map[string]string"},
    {"configmaps", "binaryData", T_MAPSTR, "map[string][]uint8"},
    {"configmaps", "immutable", T_BOOL, "bool"},
    {"secrets", "data", T_MAPSTR, "map[string][]uint8"},
    {"secrets", "stringData", T_MAPSTR, "map[string]string"},
    {"secrets", "type", T_STR, "v1.SecretType"},
    {"secrets", "immutable", T_BOOL, "bool"},
    {"leases", "spec", T_OBJ, "v1.LeaseSpec"},
    {"leases", "spec.holderIdentity", T_STR, "string"},
    {"leases", "spec.leaseDurationSeconds", T_INT, "int32"},
    {"leases", "spec.leaseTransitions", T_INT, "int32"},
    {"leases", "spec.acquireTime", T_STR, "v1.MicroTime"},
    {"leases", "spec.renewTime", T_STR, "v1.MicroTime"},
    {"jobs", "spec", T_OBJ, "v1.JobSpec"},
    {"jobs", "spec.suspend", T_BOOL, "bool"},
    {"jobs", "spec.parallelism", T_INT, "int32"},
    {"jobs", "spec.completions", T_INT, "int32"},
    {"jobs", "spec.backoffLimit", T_INT, "int32"},
    {"jobs", "spec.template", T_OBJ, "v1.PodTemplateSpec"},
    {"jobs", "status", T_OBJ, "v1.JobStatus"},
    {"namespaces", "spec", T_OBJ, "v1.NamespaceSpec"},
    {"namespaces", "status", T_OBJ, "v1.NamespaceStatus"},
    {"pods", "spec", T_OBJ, "v1.PodSpec"},
    {"pods", "status", T_OBJ, "v1.PodStatus"},
    {"events", "involvedObject", T_OBJ, "v1.ObjectReference"},
    {"events", "reason", T_STR, "string"},
    {"events", "message", T_STR, "string"},
    {"events", "count", T_INT, "int32"},
    {"events", "type", T_STR, "string"},
};

static const char *json_type_name(json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "object";
	case JSON_ARRAY:
		return "array";
	case JSON_STRING:
		return "string";
	case JSON_INTEGER:
	case JSON_REAL:
		return "number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "bool";
	case JSON_NULL:
		return "null";
	}
	return "value";
}

static bool is_integral(json_t *v)
{
	double d;

	if (json_is_integer(v))
		return true;
	if (!json_is_real(v))
		return false;
	d = json_real_value(v);
	return d == floor(d) && fabs(d) < 9.2e18;
}

/* NULL if v (not null) has type t, else the offending JSON type. */
static const char *mismatch(json_t *v, enum ty t)
{
	size_t i;
	const char *key;
	json_t *e;

	switch (t) {
	case T_OBJ:
		return json_is_object(v) ? NULL : json_type_name(v);
	case T_STR:
		return json_is_string(v) ? NULL : json_type_name(v);
	case T_INT:
		return is_integral(v) ? NULL : json_type_name(v);
	case T_BOOL:
		return json_is_boolean(v) ? NULL : json_type_name(v);
	case T_ARR:
		return json_is_array(v) ? NULL : json_type_name(v);
	case T_MAPSTR:
		if (!json_is_object(v))
			return json_type_name(v);
		json_object_foreach(v, key, e)
		{
			if (!json_is_string(e) && !json_is_null(e))
				return json_type_name(e);
		}
		return NULL;
	case T_ARRSTR:
		if (!json_is_array(v))
			return json_type_name(v);
		json_array_foreach(v, i, e)
		{
			if (!json_is_string(e))
				return json_type_name(e);
		}
		return NULL;
	}
	return NULL;
}

static char *check_builtin(const struct as_kind *k, json_t *obj, char **field)
{
	size_t i;

	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const struct field_type *f = &fields[i];
		json_t *v;
		const char *bad;

		if (f->plural != NULL && strcmp(f->plural, k->plural) != 0)
			continue;
		v = as_jget(obj, f->path);
		if (v == NULL || json_is_null(v))
			continue;
		bad = mismatch(v, f->type);
		if (bad == NULL)
			continue;
		*field = cu_strdup(f->path);
		return cu_asprintf(
		    "%s in version \"%s\" cannot be handled as a "
		    "%s: json: cannot unmarshal %s into Go "
		    "struct field %s.%s of type %s",
		    k->kind, k->version, k->kind, bad, k->kind, f->path, f->go);
	}
	return NULL;
}

/* ---- structural-schema validation -------------------------------------
 * Every failure of a custom resource is one cause of the 422, as
 * kube-apiserver reports them: schema keywords first (type, enum,
 * bounds, lengths, pattern, format, item and property counts, required),
 * then x-kubernetes-list-type uniqueness, then x-kubernetes-validations.
 * A cause is {"field": path, "detail": "Invalid value: ...: ..."}. */

static void add_cause(json_t *errs, const char *path, const char *fmt, ...)
    CU_PRINTF(3, 4);

static void add_cause(json_t *errs, const char *path, const char *fmt, ...)
{
	char detail[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	json_array_append_new(
	    errs, json_pack("{s:s, s:s}", "field", path, "detail", detail));
}

/* Go's %q of a string: quoted, with backslash escapes. */
static char *go_quote(const char *s)
{
	cu_buf b;
	char *out;
	const unsigned char *p;

	cu_buf_init(&b, 65536);
	if (cu_buf_add(&b, "\"", 1) != CU_OK)
		goto fail;
	for (p = (const unsigned char *)s; *p; p++) {
		int rc;

		switch (*p) {
		case '"':
			rc = cu_buf_add(&b, "\\\"", 2);
			break;
		case '\\':
			rc = cu_buf_add(&b, "\\\\", 2);
			break;
		case '\n':
			rc = cu_buf_add(&b, "\\n", 2);
			break;
		case '\t':
			rc = cu_buf_add(&b, "\\t", 2);
			break;
		case '\r':
			rc = cu_buf_add(&b, "\\r", 2);
			break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				rc = cu_buf_addf(&b, "\\x%02x", *p);
			else
				rc = cu_buf_add(&b, p, 1);
		}
		if (rc != CU_OK)
			goto fail;
	}
	if (cu_buf_add(&b, "\"", 1) != CU_OK)
		goto fail;
	out = cu_strdup(b.ptr);
	cu_buf_dispose(&b);
	return out;
fail:
	cu_buf_dispose(&b);
	return cu_strdup("\"\"");
}

/* Go's %v of a float64: the shortest digits that read back, in %e form
 * when the decimal exponent is below -4 or at least 6 (strconv 'g' with
 * the shortest precision). */
static char *go_float(double d)
{
	char buf[64];
	int prec, exp;

	if (d == 0)
		return cu_strdup("0");
	for (prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*e", prec - 1, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	if (prec > 17)
		prec = 17;
	snprintf(buf, sizeof(buf), "%.*e", prec - 1, d);
	exp = (int)strtol(strchr(buf, 'e') + 1, NULL, 10);
	if (exp < -4 || exp >= 6)
		return cu_strdup(buf);
	snprintf(buf, sizeof(buf), "%.*f",
	    prec - 1 - exp > 0 ? prec - 1 - exp : 0, d);
	return cu_strdup(buf);
}

/* A value as field.Error prints it: %v for numbers and booleans, %q for
 * strings, JSON otherwise [owned: cu_free]. */
static char *go_value(json_t *v)
{
	if (json_is_string(v))
		return go_quote(json_string_value(v));
	if (json_is_integer(v))
		return cu_asprintf(
		    "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	if (json_is_real(v))
		return go_float(json_real_value(v));
	if (json_is_true(v))
		return cu_strdup("true");
	if (json_is_false(v))
		return cu_strdup("false");
	if (json_is_null(v))
		return cu_strdup("\"null\"");
	return as_json_dump(v, NULL);
}

static size_t utf8_chars(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xC0) != 0x80)
			n++;
	return n;
}

/* ---- pattern: Go RE2 syntax onto POSIX ERE ----------------------------
 * The common escapes (\d \w \s and their negations outside brackets,
 * escaped punctuation, \n \t \r), (?:...) groups, lazy quantifiers (a
 * match exists or not either way) and bracket expressions are
 * translated; anything else (look-around, back-references, \b, \p{..},
 * flags) leaves the pattern unchecked, as does one regcomp refuses. */

static int re_class_item(cu_buf *set, const char **pp)
{
	const char *p = *pp;

	if (*p == '\\') {
		p++;
		switch (*p) {
		case 'd':
			*pp = p + 1;
			return cu_buf_add(set, "0-9", 3);
		case 'w':
			*pp = p + 1;
			return cu_buf_add(set, "A-Za-z0-9_", 10);
		case 's':
			*pp = p + 1;
			return cu_buf_add(set, "[:space:]", 9);
		case 'n':
			*pp = p + 1;
			return cu_buf_add(set, "\n", 1);
		case 't':
			*pp = p + 1;
			return cu_buf_add(set, "\t", 1);
		case 'r':
			*pp = p + 1;
			return cu_buf_add(set, "\r", 1);
		default:
			if (*p == '\0' || isalnum((unsigned char)*p))
				return CU_EINVAL;
			*pp = p + 1;
			/* ']' '-' '^' are placed by the caller. */
			if (*p == ']' || *p == '-' || *p == '^')
				return cu_buf_addf(set, "%c%c", '\x01', *p);
			return cu_buf_add(set, p, 1);
		}
	}
	if (*p == '[' && p[1] == ':') {
		const char *e = strstr(p, ":]");

		if (e == NULL)
			return CU_EINVAL;
		*pp = e + 2;
		return cu_buf_add(set, p, (size_t)(e + 2 - p));
	}
	*pp = p + 1;
	return cu_buf_add(set, p, 1);
}

/* Translate one bracket expression starting after '['. */
static int re_class(cu_buf *out, const char **pp)
{
	const char *p = *pp;
	bool neg = false, close = false, dash = false, caret = false;
	cu_buf set;
	size_t i;
	int rc = CU_OK;

	if (*p == '^') {
		neg = true;
		p++;
	}
	cu_buf_init(&set, 4096);
	if (*p == ']') { /* a literal ']' first */
		close = true;
		p++;
	}
	while (*p && *p != ']' && rc == CU_OK) {
		if (*p == '-' && (p[1] == ']' || set.len == 0)) {
			dash = true;
			p++;
			continue;
		}
		rc = re_class_item(&set, &p);
	}
	if (*p != ']' || rc != CU_OK) {
		cu_buf_dispose(&set);
		return CU_EINVAL;
	}
	*pp = p + 1;
	rc = cu_buf_addf(out, "[%s%s", neg ? "^" : "", close ? "]" : "");
	for (i = 0; rc == CU_OK && i < set.len; i++) {
		char c = set.ptr[i];

		if (c == '\x01') {
			c = set.ptr[++i];
			if (c == ']')
				close = true,
				rc = CU_EINVAL; /* rare: give up */
			else if (c == '-')
				dash = true;
			else
				caret = true;
			continue;
		}
		rc = cu_buf_add(out, &c, 1);
	}
	if (rc == CU_OK && caret)
		rc = cu_buf_add(out, "^", 1);
	if (rc == CU_OK && dash)
		rc = cu_buf_add(out, "-", 1);
	if (rc == CU_OK)
		rc = cu_buf_add(out, "]", 1);
	cu_buf_dispose(&set);
	return rc;
}

int as_re_translate(const char *pat, cu_buf *out)
{
	const char *p = pat;
	int rc = CU_OK;

	while (*p && rc == CU_OK) {
		if (*p == '\\') {
			p++;
			switch (*p) {
			case 'd':
				rc = cu_buf_add(out, "[0-9]", 5);
				break;
			case 'D':
				rc = cu_buf_add(out, "[^0-9]", 6);
				break;
			case 'w':
				rc = cu_buf_add(out, "[A-Za-z0-9_]", 12);
				break;
			case 'W':
				rc = cu_buf_add(out, "[^A-Za-z0-9_]", 13);
				break;
			case 's':
				rc = cu_buf_add(out, "[[:space:]]", 11);
				break;
			case 'S':
				rc = cu_buf_add(out, "[^[:space:]]", 12);
				break;
			case 'n':
				rc = cu_buf_add(out, "\n", 1);
				break;
			case 't':
				rc = cu_buf_add(out, "\t", 1);
				break;
			case 'r':
				rc = cu_buf_add(out, "\r", 1);
				break;
			default:
				if (*p == '\0' || isalnum((unsigned char)*p))
					return CU_EINVAL;
				if (strchr(".[]\\()*+?{}|^$", *p) != NULL)
					rc = cu_buf_addf(out, "\\%c", *p);
				else
					rc = cu_buf_add(out, p, 1);
			}
			p++;
			continue;
		}
		if (*p == '[') {
			p++;
			rc = re_class(out, &p);
			continue;
		}
		if (*p == '(' && p[1] == '?') {
			if (p[2] != ':')
				return CU_EINVAL;
			rc = cu_buf_add(out, "(", 1);
			p += 3;
			continue;
		}
		if (*p == '?' && p > pat &&
		    (p[-1] == '*' || p[-1] == '+' || p[-1] == '?' ||
			p[-1] == '}') &&
		    (p - 1 == pat || p[-2] != '\\')) {
			p++; /* lazy quantifier */
			continue;
		}
		rc = cu_buf_add(out, p, 1);
		p++;
	}
	return rc;
}

/* Does s match pattern? -1 when the pattern is outside the subset. */
int as_re_match(const char *pattern, const char *s)
{
	static struct {
		char *pat;
		regex_t re;
		bool ok;
	} cache[64];
	static unsigned next;
	unsigned i;

	for (i = 0; i < 64; i++)
		if (cache[i].pat != NULL && strcmp(cache[i].pat, pattern) == 0)
			break;
	if (i == 64) {
		cu_buf b;

		i = next++ % 64;
		if (cache[i].pat != NULL) {
			if (cache[i].ok)
				regfree(&cache[i].re);
			cu_free(cache[i].pat);
		}
		cache[i].pat = cu_strdup(pattern);
		cu_buf_init(&b, 1 << 16);
		cache[i].ok =
		    cache[i].pat != NULL &&
		    as_re_translate(pattern, &b) == CU_OK && b.ptr != NULL &&
		    regcomp(&cache[i].re, b.ptr, REG_EXTENDED | REG_NOSUB) == 0;
		cu_buf_dispose(&b);
	}
	if (!cache[i].ok)
		return -1;
	return regexec(&cache[i].re, s, 0, NULL, 0) == 0;
}

/* ---- format: the strfmt checks kube-apiserver runs for CRDs ---------- */

static bool all_in(const char *s, size_t n, const char *set)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] == '\0' || strchr(set, s[i]) == NULL)
			return false;
	return true;
}

#define DIGITS "0123456789"
#define HEX "0123456789abcdefABCDEF"

static bool is_date(const char *s)
{
	int y, m, d, dim[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

	if (strlen(s) != 10 || !all_in(s, 4, DIGITS) || s[4] != '-' ||
	    !all_in(s + 5, 2, DIGITS) || s[7] != '-' ||
	    !all_in(s + 8, 2, DIGITS))
		return false;
	y = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 +
	    (s[3] - '0');
	m = (s[5] - '0') * 10 + (s[6] - '0');
	d = (s[8] - '0') * 10 + (s[9] - '0');
	if (m < 1 || m > 12 || d < 1 || d > dim[m - 1])
		return false;
	return !(m == 2 && d == 29 &&
		 !((y % 4 == 0 && y % 100 != 0) || y % 400 == 0));
}

/* strfmt's date-time: a date, 't' or 'T', hh:mm:ss, optional fraction,
 * 'z' or an offset +hh:mm. */
static bool is_date_time(const char *s)
{
	char date[11];
	const char *t;

	if (strlen(s) < 11 || (s[10] != 'T' && s[10] != 't'))
		return false;
	memcpy(date, s, 10);
	date[10] = '\0';
	if (!is_date(date))
		return false;
	t = s + 11;
	if (!all_in(t, 2, DIGITS) || t[2] != ':' || !all_in(t + 3, 2, DIGITS) ||
	    t[5] != ':' || !all_in(t + 6, 2, DIGITS))
		return false;
	if (strncmp(t, "23", 2) > 0 || strncmp(t + 3, "59", 2) > 0 ||
	    strncmp(t + 6, "59", 2) > 0)
		return false;
	t += 8;
	if (*t != '\0' && *t != 'z' && *t != 'Z' && *t != '+' && *t != '-') {
		t++; /* any one character, then digits */
		if (!isdigit((unsigned char)*t))
			return false;
		while (isdigit((unsigned char)*t))
			t++;
	}
	if ((*t == 'z' || *t == 'Z') && t[1] == '\0')
		return true;
	return (*t == '+' || *t == '-') && all_in(t + 1, 2, DIGITS) &&
	       t[3] == ':' && all_in(t + 4, 2, DIGITS) && t[6] == '\0';
}

static bool is_uuid(const char *s, char version)
{
	static const int groups[] = {8, 4, 4, 4, 12};
	int g;

	for (g = 0; g < 5; g++) {
		if (!all_in(s, (size_t)groups[g], HEX))
			return false;
		if (g == 2 && version && s[0] != version)
			return false;
		if (g == 3 && (version == '4' || version == '5') &&
		    strchr("89abAB", s[0]) == NULL)
			return false;
		s += groups[g];
		if (g < 4 && *s == '-')
			s++;
	}
	return *s == '\0';
}

static bool is_base64(const char *s)
{
	size_t n = strlen(s), i, pad = 0;

	if (n % 4 != 0)
		return false;
	for (i = 0; i < n; i++) {
		if (s[i] == '=') {
			pad++;
			continue;
		}
		if (pad > 0 || !(isalnum((unsigned char)s[i]) || s[i] == '+' ||
				   s[i] == '/'))
			return false;
	}
	return pad <= 2;
}

static bool is_ip(const char *s, int af)
{
	unsigned char buf[16];

	return inet_pton(af, s, buf) == 1;
}

static bool is_cidr(const char *s)
{
	const char *slash = strchr(s, '/');
	char ip[64];
	char *end;
	long bits;
	bool v6;

	if (slash == NULL || (size_t)(slash - s) >= sizeof(ip))
		return false;
	memcpy(ip, s, (size_t)(slash - s));
	ip[slash - s] = '\0';
	v6 = strchr(ip, ':') != NULL;
	if (!is_ip(ip, v6 ? AF_INET6 : AF_INET) ||
	    !isdigit((unsigned char)slash[1]))
		return false;
	bits = strtol(slash + 1, &end, 10);
	return *end == '\0' && bits >= 0 && bits <= (v6 ? 128 : 32);
}

static bool is_mac(const char *s)
{
	size_t n = strlen(s), i, groups;
	char sep;

	if (n < 14)
		return false;
	sep = s[2] == ':' || s[2] == '-' ? s[2] : '.';
	if (sep == '.' ? (n != 14 && n != 19 && n != 24)
		       : (n != 17 && n != 23 && n != 29))
		return false;
	if (sep == '.') { /* 0123.4567.89ab */
		for (i = 0; i < n; i += 5)
			if (!all_in(s + i, 4, HEX) ||
			    (i + 4 < n && s[i + 4] != '.'))
				return false;
		return true;
	}
	groups = (n + 1) / 3;
	for (i = 0; i < groups; i++)
		if (!all_in(s + i * 3, 2, HEX) ||
		    (i + 1 < groups && s[i * 3 + 2] != sep))
			return false;
	return true;
}

static bool is_hostname(const char *s)
{
	size_t n = strlen(s), label = 0;
	const char *p;

	if (n == 0 || n > 255)
		return false;
	for (p = s; *p; p++) {
		if (*p == '.') {
			if (label == 0)
				return false;
			label = 0;
			continue;
		}
		if (!(isalnum((unsigned char)*p) || *p == '-' ||
			(unsigned char)*p >= 0x80) ||
		    ++label > 63 || (label == 1 && *p == '-'))
			return false;
	}
	return label > 0;
}

/* 1 valid, 0 invalid, -1 a format kube does not check (or we don't). */
int as_format_ok(const char *format, const char *s)
{
	if (strcmp(format, "date-time") == 0 || strcmp(format, "datetime") == 0)
		return is_date_time(s);
	if (strcmp(format, "date") == 0)
		return is_date(s);
	if (strcmp(format, "byte") == 0)
		return is_base64(s);
	if (strcmp(format, "uuid") == 0)
		return is_uuid(s, 0);
	if (strcmp(format, "uuid3") == 0)
		return is_uuid(s, '3');
	if (strcmp(format, "uuid4") == 0)
		return is_uuid(s, '4');
	if (strcmp(format, "uuid5") == 0)
		return is_uuid(s, '5');
	if (strcmp(format, "ipv4") == 0)
		return is_ip(s, AF_INET);
	if (strcmp(format, "ipv6") == 0)
		return is_ip(s, AF_INET6);
	if (strcmp(format, "cidr") == 0)
		return is_cidr(s);
	if (strcmp(format, "mac") == 0)
		return is_mac(s);
	if (strcmp(format, "hostname") == 0)
		return is_hostname(s);
	if (strcmp(format, "bsonobjectid") == 0)
		return strlen(s) == 24 && all_in(s, 24, HEX);
	if (strcmp(format, "hexcolor") == 0)
		return s[0] == '#' &&
		       ((strlen(s) == 4 && all_in(s + 1, 3, HEX)) ||
			   (strlen(s) == 7 && all_in(s + 1, 6, HEX)));
	if (strcmp(format, "email") == 0) {
		const char *at = strchr(s, '@');

		return at != NULL && at > s && at[1] != '\0' &&
		       strchr(at + 1, '@') == NULL;
	}
	return -1;
}

static double num(json_t *v)
{
	return json_number_value(v);
}

static char *child_path(const char *path, const char *key)
{
	return cu_asprintf("%s%s%s", path, path[0] ? "." : "", key);
}

static void check_value(
    json_t *errs, json_t *schema, json_t *v, const char *path, int depth);

static void check_number(
    json_t *errs, json_t *schema, json_t *v, const char *path)
{
	json_t *b;
	double d = num(v);
	char *vs = go_value(v), *bs;
	const char *fmt = json_string_value(json_object_get(schema, "format"));

	/* kube-openapi checks the value against its format's range: an int32
	 * field never takes 2147483648. */
	if (fmt != NULL && strcmp(fmt, "int32") == 0 &&
	    (!json_is_integer(v) || json_integer_value(v) > INT32_MAX ||
		json_integer_value(v) < INT32_MIN))
		add_cause(errs, path,
		    "Invalid value: %s: Checked value must be of type integer "
		    "with format int32 in %s",
		    vs, path);
	if ((b = json_object_get(schema, "multipleOf")) != NULL &&
	    json_is_number(b) && num(b) > 0) {
		double q = d / num(b);

		if (q != floor(q)) {
			bs = go_float(num(b));
			add_cause(errs, path,
			    "Invalid value: %s: %s in body should be a "
			    "multiple of %s",
			    vs, path, bs);
			cu_free(bs);
		}
	}
	if ((b = json_object_get(schema, "maximum")) != NULL &&
	    json_is_number(b)) {
		bool exc =
		    json_is_true(json_object_get(schema, "exclusiveMaximum"));

		if (exc ? d >= num(b) : d > num(b)) {
			bs = go_float(num(b));
			add_cause(errs, path,
			    "Invalid value: %s: %s in body should be less "
			    "than %s%s",
			    vs, path, exc ? "" : "or equal to ", bs);
			cu_free(bs);
		}
	}
	if ((b = json_object_get(schema, "minimum")) != NULL &&
	    json_is_number(b)) {
		bool exc =
		    json_is_true(json_object_get(schema, "exclusiveMinimum"));

		if (exc ? d <= num(b) : d < num(b)) {
			bs = go_float(num(b));
			add_cause(errs, path,
			    "Invalid value: %s: %s in body should be greater "
			    "than %s%s",
			    vs, path, exc ? "" : "or equal to ", bs);
			cu_free(bs);
		}
	}
	cu_free(vs);
}

static void check_string(
    json_t *errs, json_t *schema, json_t *v, const char *path)
{
	const char *s = json_string_value(v);
	size_t n = utf8_chars(s);
	json_t *b;
	char *vs = go_value(v);

	if ((b = json_object_get(schema, "maxLength")) != NULL &&
	    json_is_integer(b) && (json_int_t)n > json_integer_value(b))
		add_cause(errs, path,
		    "Too long: may not be more than %" JSON_INTEGER_FORMAT
		    " bytes",
		    json_integer_value(b));
	if ((b = json_object_get(schema, "minLength")) != NULL &&
	    json_is_integer(b) && (json_int_t)n < json_integer_value(b))
		add_cause(errs, path,
		    "Invalid value: %s: %s in body should be at least "
		    "%" JSON_INTEGER_FORMAT " chars long",
		    vs, path, json_integer_value(b));
	if ((b = json_object_get(schema, "pattern")) != NULL &&
	    json_is_string(b) && as_re_match(json_string_value(b), s) == 0)
		add_cause(errs, path,
		    "Invalid value: %s: %s in body should match '%s'", vs, path,
		    json_string_value(b));
	if ((b = json_object_get(schema, "format")) != NULL &&
	    json_is_string(b) && as_format_ok(json_string_value(b), s) == 0)
		add_cause(errs, path,
		    "Invalid value: %s: %s in body must be of type %s: %s", vs,
		    path, json_string_value(b), vs);
	cu_free(vs);
}

static void check_enum(
    json_t *errs, json_t *schema, json_t *v, const char *path)
{
	json_t *sub = json_object_get(schema, "enum"), *e;
	size_t i;
	cu_buf b;
	char *vs;

	if (!json_is_array(sub) || json_array_size(sub) == 0)
		return;
	json_array_foreach(sub, i, e)
	{
		if (json_equal(e, v))
			return;
	}
	cu_buf_init(&b, 4096);
	json_array_foreach(sub, i, e)
	{
		char *raw = json_is_string(e) ? cu_strdup(json_string_value(e))
					      : as_json_dump(e, NULL);
		char *q = go_quote(raw ? raw : "");
		int rc = cu_buf_addf(&b, "%s%s", i ? ", " : "", q);

		cu_free(raw);
		cu_free(q);
		if (rc != CU_OK)
			break;
	}
	vs = go_value(v);
	add_cause(errs, path, "Unsupported value: %s: supported values: %s",
	    vs ? vs : "", b.ptr ? b.ptr : "");
	cu_free(vs);
	cu_buf_dispose(&b);
}

/* Is v of the schema's type? Adds the cause when not. */
static bool check_type(
    json_t *errs, json_t *schema, json_t *v, const char *path)
{
	const char *type;

	if (json_is_null(v)) {
		if (json_is_true(json_object_get(schema, "nullable")))
			return false;
		/* Pruning keeps nulls only where a schema allows them. */
		type = json_string_value(json_object_get(schema, "type"));
		if (type != NULL)
			add_cause(errs, path,
			    "Invalid value: \"null\": %s in body must be of "
			    "type %s: \"null\"",
			    path, type);
		return false;
	}
	if (json_is_true(
		json_object_get(schema, "x-kubernetes-int-or-string"))) {
		if (!json_is_string(v) && !is_integral(v)) {
			add_cause(errs, path,
			    "Invalid value: \"%s\": %s in body must be of type "
			    "int-or-string: \"%s\"",
			    json_type_name(v), path, json_type_name(v));
			return false;
		}
		return true;
	}
	type = json_string_value(json_object_get(schema, "type"));
	if (type != NULL) {
		bool ok = (strcmp(type, "object") == 0 && json_is_object(v)) ||
			  (strcmp(type, "array") == 0 && json_is_array(v)) ||
			  (strcmp(type, "string") == 0 && json_is_string(v)) ||
			  (strcmp(type, "integer") == 0 && is_integral(v)) ||
			  (strcmp(type, "number") == 0 && json_is_number(v)) ||
			  (strcmp(type, "boolean") == 0 && json_is_boolean(v));
		const char *jt = json_is_integer(v) || json_is_real(v)
				     ? (is_integral(v) ? "integer" : "number")
				 : json_is_boolean(v) ? "boolean"
						      : json_type_name(v);

		if (!ok) {
			add_cause(errs, path,
			    "Invalid value: \"%s\": %s in body must be of type "
			    "%s: \"%s\"",
			    jt, path, type, jt);
			return false;
		}
	}
	return true;
}

static void check_object(
    json_t *errs, json_t *schema, json_t *v, const char *path, int depth)
{
	json_t *props = json_object_get(schema, "properties");
	json_t *req = json_object_get(schema, "required");
	json_t *b, *e;
	json_int_t n = (json_int_t)json_object_size(v);
	const char *key;
	size_t i;

	if ((b = json_object_get(schema, "maxProperties")) != NULL &&
	    json_is_integer(b) && n > json_integer_value(b))
		add_cause(errs, path,
		    "Too many: %" JSON_INTEGER_FORMAT
		    ": must have at most %" JSON_INTEGER_FORMAT " item%s",
		    n, json_integer_value(b),
		    json_integer_value(b) == 1 ? "" : "s");
	if ((b = json_object_get(schema, "minProperties")) != NULL &&
	    json_is_integer(b) && n < json_integer_value(b))
		add_cause(errs, path,
		    "Invalid value: %" JSON_INTEGER_FORMAT
		    ": %s in body should have at least %" JSON_INTEGER_FORMAT
		    " properties",
		    n, path, json_integer_value(b));
	json_array_foreach(req, i, e)
	{
		const char *rk = json_string_value(e);

		if (rk != NULL && json_object_get(v, rk) == NULL) {
			char *cp = child_path(path, rk);

			add_cause(errs, cp ? cp : "", "Required value");
			cu_free(cp);
		}
	}
	json_object_foreach(v, key, e)
	{
		json_t *ps = json_object_get(props, key);
		char *cp;

		if (ps == NULL)
			ps = json_object_get(schema, "additionalProperties");
		if (!json_is_object(ps))
			continue;
		cp = child_path(path, key);
		check_value(errs, ps, e, cp ? cp : "", depth + 1);
		cu_free(cp);
	}
}

static void check_array(
    json_t *errs, json_t *schema, json_t *v, const char *path, int depth)
{
	json_t *items = json_object_get(schema, "items"), *b, *e;
	json_int_t n = (json_int_t)json_array_size(v);
	size_t i;

	if ((b = json_object_get(schema, "maxItems")) != NULL &&
	    json_is_integer(b) && n > json_integer_value(b))
		add_cause(errs, path,
		    "Too many: %" JSON_INTEGER_FORMAT
		    ": must have at most %" JSON_INTEGER_FORMAT " item%s",
		    n, json_integer_value(b),
		    json_integer_value(b) == 1 ? "" : "s");
	if ((b = json_object_get(schema, "minItems")) != NULL &&
	    json_is_integer(b) && n < json_integer_value(b))
		add_cause(errs, path,
		    "Invalid value: %" JSON_INTEGER_FORMAT
		    ": %s in body should have at least %" JSON_INTEGER_FORMAT
		    " items",
		    n, path, json_integer_value(b));
	if (!json_is_object(items))
		return;
	json_array_foreach(v, i, e)
	{
		char *cp = cu_asprintf("%s[%zu]", path, i);

		check_value(errs, items, e, cp ? cp : "", depth + 1);
		cu_free(cp);
	}
}

static void check_value(
    json_t *errs, json_t *schema, json_t *v, const char *path, int depth)
{
	if (schema == NULL || v == NULL || depth > 64)
		return;
	if (!check_type(errs, schema, v, path))
		return;
	if (json_is_string(v))
		check_string(errs, schema, v, path);
	else if (json_is_number(v))
		check_number(errs, schema, v, path);
	check_enum(errs, schema, v, path);
	if (json_is_object(v))
		check_object(errs, schema, v, path, depth);
	else if (json_is_array(v))
		check_array(errs, schema, v, path, depth);
}

/* ---- x-kubernetes-list-type: set and map uniqueness ------------------ */

/* Go's %#v of a map[string]interface{} of the key fields (sorted keys). */
static char *map_keys_value(json_t *item, json_t *keys)
{
	cu_buf b;
	char *out;
	size_t i, j, n = json_array_size(keys);
	const char **names = cu_calloc(n ? n : 1, sizeof(*names));

	if (names == NULL)
		return NULL;
	for (i = 0; i < n; i++)
		names[i] = json_string_value(json_array_get(keys, i));
	for (i = 1; i < n; i++) /* insertion sort, a few keys */
		for (j = i; j > 0 && names[j] && names[j - 1] &&
			    strcmp(names[j - 1], names[j]) > 0;
		     j--) {
			const char *t = names[j];

			names[j] = names[j - 1];
			names[j - 1] = t;
		}
	cu_buf_init(&b, 65536);
	if (cu_buf_addf(&b, "map[string]interface {}{") != CU_OK)
		goto done;
	for (i = 0; i < n; i++) {
		json_t *kv = names[i] ? json_object_get(item, names[i]) : NULL;
		char *vs;

		if (kv == NULL)
			continue;
		vs = go_value(kv);
		if (cu_buf_addf(&b, "%s\"%s\":%s",
			b.ptr[b.len - 1] == '{' ? "" : ", ", names[i],
			vs ? vs : "") != CU_OK) {
			cu_free(vs);
			goto done;
		}
		cu_free(vs);
	}
	if (cu_buf_add(&b, "}", 1) != CU_OK)
		goto done;
done:
	out = b.ptr ? cu_strdup(b.ptr) : NULL;
	cu_buf_dispose(&b);
	cu_free(names);
	return out;
}

static bool same_keys(json_t *a, json_t *b, json_t *keys)
{
	size_t i;
	json_t *k;

	json_array_foreach(keys, i, k)
	{
		const char *name = json_string_value(k);
		json_t *x, *y;

		if (name == NULL)
			continue;
		x = json_object_get(a, name);
		y = json_object_get(b, name);
		if ((x == NULL) != (y == NULL) || (x && !json_equal(x, y)))
			return false;
	}
	return true;
}

static void check_lists(
    json_t *errs, json_t *schema, json_t *v, const char *path, int depth)
{
	const char *key;
	json_t *e;
	size_t i, j;

	if (schema == NULL || v == NULL || depth > 64)
		return;
	if (json_is_object(v)) {
		json_t *props = json_object_get(schema, "properties");

		json_object_foreach(v, key, e)
		{
			json_t *ps = json_object_get(props, key);
			char *cp;

			if (ps == NULL)
				ps = json_object_get(
				    schema, "additionalProperties");
			if (!json_is_object(ps))
				continue;
			cp = child_path(path, key);
			check_lists(errs, ps, e, cp ? cp : "", depth + 1);
			cu_free(cp);
		}
	} else if (json_is_array(v)) {
		const char *lt = json_string_value(
		    json_object_get(schema, "x-kubernetes-list-type"));
		json_t *keys =
		    json_object_get(schema, "x-kubernetes-list-map-keys");
		json_t *items = json_object_get(schema, "items");
		bool set = lt && strcmp(lt, "set") == 0;
		bool map = lt && strcmp(lt, "map") == 0 && json_is_array(keys);

		json_array_foreach(v, i, e)
		{
			char *cp = cu_asprintf("%s[%zu]", path, i);

			for (j = 0; (set || map) && j < i; j++) {
				json_t *f = json_array_get(v, j);
				char *vs;

				if (set ? !json_equal(e, f)
					: !(json_is_object(e) &&
					      json_is_object(f) &&
					      same_keys(e, f, keys)))
					continue;
				vs =
				    set ? go_value(e) : map_keys_value(e, keys);
				add_cause(errs, cp ? cp : "",
				    "Duplicate value: %s", vs ? vs : "");
				cu_free(vs);
				break;
			}
			check_lists(errs, items, e, cp ? cp : "", depth + 1);
			cu_free(cp);
		}
	}
}

/* ---- x-kubernetes-validations ---------------------------------------- */

/* The stored item a list item corresponds to: by the map keys of a
 * list-type map, none otherwise (as kube-apiserver correlates them for
 * transition rules). */
static json_t *old_item(json_t *schema, json_t *old, json_t *item)
{
	const char *lt = json_string_value(
	    json_object_get(schema, "x-kubernetes-list-type"));
	json_t *keys = json_object_get(schema, "x-kubernetes-list-map-keys");
	json_t *o;
	size_t i;

	if (!json_is_array(old) || lt == NULL || strcmp(lt, "map") != 0 ||
	    !json_is_array(keys) || !json_is_object(item))
		return NULL;
	json_array_foreach(old, i, o)
	{
		if (json_is_object(o) && same_keys(o, item, keys))
			return o;
	}
	return NULL;
}

static void rule_cause(json_t *errs, json_t *schema, json_t *rule,
    const char *path, const char *detail)
{
	const char *reason = json_string_value(json_object_get(rule, "reason"));
	const char *fp = json_string_value(json_object_get(rule, "fieldPath"));
	const char *type = json_string_value(json_object_get(schema, "type"));
	char *full = NULL, *q;
	const char *at = path[0] ? path : "<nil>";

	if (fp != NULL && fp[0] != '\0') {
		full = cu_asprintf(
		    "%s%s", path, fp[0] == '.' && !path[0] ? fp + 1 : fp);
		if (full != NULL)
			at = full;
	}
	if (reason != NULL && strcmp(reason, "FieldValueForbidden") == 0)
		add_cause(errs, at, "Forbidden: %s", detail);
	else if (reason != NULL && strcmp(reason, "FieldValueRequired") == 0)
		add_cause(errs, at, "Required value: %s", detail);
	else if (reason != NULL && strcmp(reason, "FieldValueDuplicate") == 0) {
		/* kube's Duplicate error carries the value, not the message */
		q = go_quote(type ? type : "");
		add_cause(errs, at, "Duplicate value: %s", q ? q : "");
		cu_free(q);
	} else
		add_cause(errs, at, "Invalid value: \"%s\": %s",
		    type ? type : "", detail);
	cu_free(full);
}

json_t *as_cel_eval(
    const struct cel_expr *cel, json_t *self, json_t *old, char **err)
{
	struct cel_var vars[] = {{"self", self}, {"oldSelf", old}};
	struct cel_env env = {vars, 2, as_re_match};

	return cel_eval(cel, &env, err);
}

static void eval_rules(
    json_t *errs, json_t *schema, json_t *v, json_t *old, const char *path)
{
	json_t *rules = json_object_get(schema, "x-kubernetes-validations");
	json_t *rule;
	size_t i;

	json_array_foreach(rules, i, rule)
	{
		const char *src =
		    json_string_value(json_object_get(rule, "rule"));
		struct cel_expr *cel;
		char *err = NULL;
		json_t *r;

		if (src == NULL)
			continue;
		cel = cel_parse(src, &err);
		if (cel == NULL) {
			/* Outside the subset: not evaluated. */
			cu_free(err);
			continue;
		}
		if (cel_uses_old(cel) && old == NULL) {
			cel_free(cel);
			continue; /* a transition rule runs on updates only */
		}
		r = as_cel_eval(cel, v, old, &err);
		if (r == NULL) {
			/* As kube words a rule that could not be evaluated
			 * (no such key, index out of bounds, overflow...). */
			const char *msg =
			    json_string_value(json_object_get(rule, "message"));
			const char *what = msg && msg[0] ? msg : src;
			const char *type =
			    json_string_value(json_object_get(schema, "type"));
			char *d =
			    err && strncmp(err, "no such overload", 16) == 0
				? cu_asprintf("Invalid value: \"%s\": "
					      "'%s': call arguments did "
					      "not match a supported "
					      "operator, function or "
					      "macro signature for "
					      "rule: %s",
				      type ? type : "", err, what)
				: cu_asprintf("Invalid value: \"%s\": %s "
					      "evaluating rule: %s",
				      type ? type : "", err ? err : "", what);

			add_cause(
			    errs, path[0] ? path : "<nil>", "%s", d ? d : "");
			cu_free(d);
		} else if (!json_is_true(r)) {
			const char *msg =
			    json_string_value(json_object_get(rule, "message"));
			const char *mx = json_string_value(
			    json_object_get(rule, "messageExpression"));
			struct cel_expr *mc = NULL;
			json_t *mv = NULL;
			char *d = NULL, *merr = NULL;

			if (mx != NULL && (mc = cel_parse(mx, &merr)) != NULL)
				mv = as_cel_eval(mc, v, old, &merr);
			cu_free(merr);
			if (json_is_string(mv) && json_string_length(mv) > 0)
				d = cu_strdup(json_string_value(mv));
			else if (msg != NULL && msg[0] != '\0')
				d = cu_strdup(msg);
			else
				d = cu_asprintf("failed rule: %s", src);
			rule_cause(errs, schema, rule, path, d ? d : "");
			cu_free(d);
			json_decref(mv);
			cel_free(mc);
		}
		json_decref(r);
		cu_free(err);
		cel_free(cel);
	}
}

static void check_rules(json_t *errs, json_t *schema, json_t *v, json_t *old,
    const char *path, int depth)
{
	const char *key;
	json_t *e;
	size_t i;

	if (!json_is_object(schema) || v == NULL || json_is_null(v) ||
	    depth > 64)
		return;
	if (json_is_object(v)) {
		json_t *props = json_object_get(schema, "properties");

		json_object_foreach(v, key, e)
		{
			json_t *ps = json_object_get(props, key);
			char *cp;

			if (ps == NULL)
				ps = json_object_get(
				    schema, "additionalProperties");
			if (!json_is_object(ps))
				continue;
			cp = child_path(path, key);
			check_rules(errs, ps, e,
			    json_is_object(old) ? json_object_get(old, key)
						: NULL,
			    cp ? cp : "", depth + 1);
			cu_free(cp);
		}
	} else if (json_is_array(v)) {
		json_t *items = json_object_get(schema, "items");

		json_array_foreach(v, i, e)
		{
			char *cp = cu_asprintf("%s[%zu]", path, i);

			check_rules(errs, items, e, old_item(schema, old, e),
			    cp ? cp : "", depth + 1);
			cu_free(cp);
		}
	}
	eval_rules(errs, schema, v, old, path);
}

/* Does the schema carry any x-kubernetes-validations rule? */
static bool has_rules(json_t *schema, int depth)
{
	const char *key;
	json_t *e;

	if (!json_is_object(schema) || depth > 64)
		return false;
	if (json_array_size(
		json_object_get(schema, "x-kubernetes-validations")) > 0)
		return true;
	json_object_foreach(json_object_get(schema, "properties"), key, e)
	{
		if (has_rules(e, depth + 1))
			return true;
	}
	return has_rules(json_object_get(schema, "items"), depth + 1) ||
	       has_rules(
		   json_object_get(schema, "additionalProperties"), depth + 1);
}

json_t *as_schema_errors(json_t *schema, json_t *obj, json_t *old)
{
	json_t *errs = json_array();
	json_t *props = json_object_get(schema, "properties");
	const char *key;
	json_t *v, *e;
	size_t i;
	bool blocked = false;

	if (errs == NULL)
		return NULL;
	json_object_foreach(obj, key, v)
	{
		if (strcmp(key, "metadata") == 0 ||
		    strcmp(key, "apiVersion") == 0 || strcmp(key, "kind") == 0)
			continue;
		check_value(errs, json_object_get(props, key), v, key, 0);
	}
	json_object_foreach(obj, key, v)
	{
		if (strcmp(key, "metadata") == 0 ||
		    strcmp(key, "apiVersion") == 0 || strcmp(key, "kind") == 0)
			continue;
		check_lists(errs, json_object_get(props, key), v, key, 0);
	}
	/* CEL rules are skipped, with one more cause saying so, when a value
	 * has the wrong type or is not in its enum (as kube-apiserver does:
	 * a rule never sees a value of the wrong type). */
	json_array_foreach(errs, i, e)
	{
		const char *d = as_jstr(e, "detail");

		if (strncmp(d, "Unsupported value", 17) == 0 ||
		    strstr(d, " in body must be of type ") != NULL)
			blocked = true;
	}
	if (blocked && has_rules(schema, 0))
		add_cause(errs, "<nil>",
		    "Invalid value: \"null\": some validation rules were not "
		    "checked because the object was invalid; correct the "
		    "existing errors to complete validation");
	else if (!blocked)
		check_rules(errs, schema, obj, old, "", 0);
	return errs;
}

char *as_type_check(
    const struct as_kind *k, json_t *obj, bool *invalid, char **field)
{
	*invalid = false;
	*field = NULL;
	if (!(k->flags & AS_CUSTOM)) {
		char *m = check_builtin(k, obj, field);

		return m;
	}
	{
		/* The metadata of a custom resource decodes as ObjectMeta
		 * too: a wrong type there is a 400 as for built-ins. */
		size_t i;

		for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
			json_t *v;
			const char *bad;

			if (fields[i].plural != NULL ||
			    strncmp(fields[i].path, "metadata", 8) != 0)
				continue;
			v = as_jget(obj, fields[i].path);
			if (v == NULL || json_is_null(v))
				continue;
			bad = mismatch(v, fields[i].type);
			if (bad != NULL) {
				*field = cu_strdup(fields[i].path);
				return cu_asprintf(
				    "%s in version \"%s\" cannot "
				    "be handled as a %s: json: "
				    "cannot unmarshal %s into "
				    "Go struct field "
				    "%s of type %s",
				    k->kind, k->version, k->kind, bad,
				    fields[i].path, fields[i].go);
			}
		}
	}
	*invalid = true;
	{
		json_t *errs = as_schema_errors(k->schema, obj, NULL);
		json_t *first = json_array_get(errs, 0);
		char *msg = NULL;

		if (first != NULL) {
			*field = cu_strdup(as_jstr(first, "field"));
			msg = cu_strdup(as_jstr(first, "detail"));
		}
		json_decref(errs);
		return msg;
	}
}

bool as_schema_validate(
    const struct as_kind *k, json_t *obj, json_t *old, struct as_resp *resp)
{
	bool invalid;
	char *field = NULL;
	char *msg = as_type_check(k, obj, &invalid, &field);
	json_t *errs, *e;
	size_t i;
	bool clean;

	if (msg != NULL && !invalid) {
		as_resp_error(resp, 400, "BadRequest", "%s", msg);
		cu_free(msg);
		cu_free(field);
		return false;
	}
	clean = msg == NULL;
	cu_free(msg);
	cu_free(field);
	if (clean && old == NULL)
		return true;
	/* Again with the stored object: transition rules. */
	errs = as_schema_errors(k->schema, obj, old);
	if (json_array_size(errs) == 0) {
		json_decref(errs);
		return true;
	}
	json_array_foreach(errs, i, e)
	{
		if (i == 0)
			as_resp_invalid(resp, k, as_jstr(obj, "metadata.name"),
			    as_jstr(e, "field"), "%s", as_jstr(e, "detail"));
		else
			as_resp_invalid_add(resp, as_jstr(e, "field"), "%s",
			    as_jstr(e, "detail"));
	}
	json_decref(errs);
	return false;
}
