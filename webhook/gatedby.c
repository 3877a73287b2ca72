/* SPDX-License-Identifier: Apache-2.0 */
/*
 * webhook/gatedby.c - Kueue's validation of the
 * kueue.x-k8s.io/admission-gated-by annotation of a job (AdmissionGatedBy):
 * a comma-separated list of gate names, each a domain-prefixed path
 * ("example.com/gate") of at most 63 bytes, none empty, none twice; the
 * annotation cannot be added (or go from empty to a value) after
 * creation, and an update may only remove gates. Every failure is
 * collected and reported as apimachinery's ErrorList.ToAggregate would
 * print it (duplicates dropped; two or more in brackets). Pure.
 */
#include <stdio.h>
#include <string.h>

#include "webhook/webhook_int.h"

#define GATE_PATH "metadata.annotations[" WH_ADMISSION_GATED_BY "]"
#define GATE_MAX 63
#define GATES_MAX 64 /* more gates than this: the rest are not checked */

struct gerrs {
	cu_buf b; /* "msg\0msg\0..." */
	size_t n;
	bool nomem;
};

/* Add message m unless an identical one is there already. */
static void gerr(struct gerrs *e, const char *m)
{
	size_t off = 0, i;

	for (i = 0; i < e->n; i++) {
		if (strcmp((const char *)e->b.ptr + off, m) == 0)
			return;
		off += strlen((const char *)e->b.ptr + off) + 1;
	}
	if (cu_buf_add(&e->b, m, strlen(m) + 1) != CU_OK)
		e->nomem = true;
	else
		e->n++;
}

/* Kueue's csv.Parse: "" (or blanks) is no gate; else split at commas and
 * trim spaces around each. gates[] point into buf. */
static size_t parse(const char *s, char *buf, size_t cap, char **gates)
{
	size_t n = 0, len;
	char *p, *q, *end;

	(void)snprintf(buf, cap, "%s", s != NULL ? s : "");
	for (p = buf; *p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' ||
		      *p == '\v' || *p == '\f';
	     p++)
		;
	if (*p == '\0')
		return 0;
	p = buf;
	while (n < GATES_MAX) {
		q = strchr(p, ',');
		if (q != NULL)
			*q = '\0';
		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			p++;
		len = strlen(p);
		end = p + len;
		while (end > p && (end[-1] == ' ' || end[-1] == '\t' ||
				      end[-1] == '\n' || end[-1] == '\r'))
			*--end = '\0';
		gates[n++] = p;
		if (q == NULL)
			break;
		p = q + 1;
	}
	return n;
}

/* apimachinery's http path: [A-Za-z0-9/\-._~%!$&'()*+,;=:]+ */
static bool http_path(const char *s)
{
	if (*s == '\0')
		return false;
	for (; *s != '\0'; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
			(*s >= '0' && *s <= '9') ||
			strchr("/-._~%!$&'()*+,;=:", *s) != NULL))
			return false;
	return true;
}

/* validation.IsDomainPrefixedPath and the length check of one gate. */
static void gate_format(struct gerrs *e, const char *gate)
{
	char host[256], q[WH_QUOTE_MAX], m[CU_ERROR_MSG_MAX];
	const char *slash = strchr(gate, '/');
	size_t hl = slash != NULL ? (size_t)(slash - gate) : 0;
	cu_error de;

	if (slash == NULL || hl == 0 || slash[1] == '\0') {
		(void)snprintf(m, sizeof(m),
		    GATE_PATH ": Invalid value: %s: must be a domain-prefixed "
			      "path (such as \"acme.io/foo\")",
		    wh__quote(q, gate));
		gerr(e, m);
	} else {
		(void)snprintf(host, sizeof(host), "%.*s",
		    (int)(hl < sizeof(host) ? hl : sizeof(host) - 1), gate);
		if (wh__check_dns1123_subdomain(host, GATE_PATH, &de) != CU_OK)
			gerr(e, de.msg);
		if (!http_path(slash + 1)) {
			(void)snprintf(m, sizeof(m),
			    GATE_PATH ": Invalid value: %s: must be a valid "
				      "path (regex used for validation is "
				      "'[A-Za-z0-9/\\-._~%%!$&'()*+,;=:]+')",
			    wh__quote(q, slash + 1));
			gerr(e, m);
		}
	}
	if (strlen(gate) > GATE_MAX)
		gerr(e, GATE_PATH ": Too long: may not be more than 63 bytes");
}

static void format(struct gerrs *e, const char *value)
{
	char buf[4096], q[WH_QUOTE_MAX], m[CU_ERROR_MSG_MAX];
	char *gates[GATES_MAX];
	size_t n, i, j;

	if (value == NULL || *value == '\0')
		return;
	n = parse(value, buf, sizeof(buf), gates);
	for (i = 0; i < n; i++) {
		bool dup = false;

		if (*gates[i] == '\0') {
			(void)snprintf(m, sizeof(m),
			    GATE_PATH ": Invalid value: %s: cannot contain "
				      "empty gate names",
			    wh__quote(q, value));
			gerr(e, m);
			continue;
		}
		for (j = 0; j < i && !dup; j++)
			dup = strcmp(gates[i], gates[j]) == 0;
		if (dup) {
			(void)snprintf(m, sizeof(m),
			    GATE_PATH ": Invalid value: %s: duplicate gate "
				      "name: %s",
			    wh__quote(q, value), gates[i]);
			gerr(e, m);
			continue;
		}
		gate_format(e, gates[i]);
	}
}

/* Only removals: every gate of new_v is one of old_v's. */
static void only_removals(struct gerrs *e, const char *old_v, const char *new_v)
{
	char ob[4096], nb[4096];
	char *og[GATES_MAX], *ng[GATES_MAX];
	size_t on = parse(old_v, ob, sizeof(ob), og);
	size_t nn = parse(new_v, nb, sizeof(nb), ng), i, j;

	for (i = 0; i < nn; i++) {
		bool found = false;

		for (j = 0; j < on && !found; j++)
			found = strcmp(ng[i], og[j]) == 0;
		if (!found) {
			gerr(e, GATE_PATH ": Forbidden: can only remove "
					  "gates, not add new ones");
			return;
		}
	}
}

int wh_admission_gated_by(
    const json_t *old_obj, const json_t *obj, cu_error *err)
{
	const char *new_v = wh_gated_by_value(obj);
	struct gerrs e;
	size_t off = 0, i;
	int rc = CU_OK;

	memset(&e, 0, sizeof(e));
	cu_buf_init(&e.b, 64 * 1024);
	if (old_obj != NULL) {
		const char *old_v = wh_gated_by_value(old_obj);

		if ((old_v == NULL || *old_v == '\0') && new_v != NULL &&
		    *new_v != '\0')
			gerr(&e, GATE_PATH ": Forbidden: cannot add "
					   "admission gate after creation");
		if (old_v != NULL && *old_v != '\0' && new_v != NULL &&
		    *new_v != '\0')
			only_removals(&e, old_v, new_v);
	}
	format(&e, new_v);
	if (e.nomem)
		rc = cu_error_set(err, CU_ENOMEM,
		    "admission-gated-by: out "
		    "of memory");
	else if (e.n == 1)
		rc = cu_error_set(err, CU_EDENIED, "%s", (const char *)e.b.ptr);
	else if (e.n > 1) {
		char m[CU_ERROR_MSG_MAX];
		size_t o = 0;

		o += (size_t)snprintf(m, sizeof(m), "[");
		for (i = 0; i < e.n; i++) {
			const char *s = (const char *)e.b.ptr + off;

			if (o < sizeof(m))
				o += (size_t)snprintf(m + o, sizeof(m) - o,
				    "%s%s", i > 0 ? ", " : "", s);
			off += strlen(s) + 1;
		}
		if (o < sizeof(m))
			(void)snprintf(m + o, sizeof(m) - o, "]");
		rc = cu_error_set(err, CU_EDENIED, "%s", m);
	}
	cu_buf_dispose(&e.b);
	return rc;
}

const char *wh_gated_by_value(const json_t *obj)
{
	const json_t *v = json_object_get(
	    json_object_get(json_object_get(obj, "metadata"), "annotations"),
	    WH_ADMISSION_GATED_BY);

	return json_string_value(v);
}
