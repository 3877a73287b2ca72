/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/status.c - the metav1.Status bodies every error (and an
 * immediate DELETE) answers with, with the exact reasons and messages of
 * kube-apiserver (docs/apiserver.md §5).
 */
#include <stdio.h>
#include <string.h>

#include "tests/apiserver/apiserver.h"

json_t *as_status(int code, const char *reason, const char *message)
{
	return json_pack("{s:s, s:s, s:{}, s:s, s:s, s:s, s:i}", "kind",
	    "Status", "apiVersion", "v1", "metadata", "status", "Failure",
	    "message", message, "reason", reason, "code", code);
}

void as_resp_status(struct as_resp *resp, int code, json_t *status)
{
	json_t *d;

	resp->code = code;
	json_decref(resp->body);
	resp->body = status;
	d = json_object_get(
	    json_object_get(status, "details"), "retryAfterSeconds");
	if (json_is_integer(d))
		resp->retry_after = (int)json_integer_value(d);
}

void as_resp_error(
    struct as_resp *resp, int code, const char *reason, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	as_resp_status(resp, code, as_status(code, reason, msg));
}

void as_resp_warn(struct as_resp *resp, const char *text)
{
	json_t *q = json_string(text);
	char *quoted = q ? json_dumps(q, JSON_ENCODE_ANY) : NULL;
	char *joined;

	json_decref(q);
	if (quoted == NULL)
		return;
	if (resp->warning == NULL)
		joined = cu_asprintf("299 - %s", quoted);
	else
		joined = cu_asprintf("%s, 299 - %s", resp->warning, quoted);
	cu_free(quoted);
	if (joined != NULL) {
		cu_free(resp->warning);
		resp->warning = joined;
	}
}

char *as_qualified_resource(const struct as_kind *k)
{
	if (k->group[0] == '\0')
		return cu_strdup(k->plural);
	return cu_asprintf("%s.%s", k->plural, k->group);
}

void as_resp_not_found(
    struct as_resp *resp, const struct as_kind *k, const char *name)
{
	char *qr = as_qualified_resource(k);
	json_t *st;

	as_resp_error(
	    resp, 404, "NotFound", "%s \"%s\" not found", qr ? qr : "", name);
	st = resp->body;
	json_object_set_new(st, "details",
	    json_pack("{s:s, s:s, s:s}", "name", name, "group", k->group,
		"kind", k->plural));
	if (k->group[0] == '\0')
		json_object_del(json_object_get(st, "details"), "group");
	cu_free(qr);
}

/* field.ErrorType of a detail message, from its standard prefix. */
static const char *cause_reason(const char *detail)
{
	static const struct {
		const char *prefix, *reason;
	} map[] = {{"Required value", "FieldValueRequired"},
	    {"Forbidden", "FieldValueForbidden"},
	    {"Unsupported value", "FieldValueNotSupported"},
	    {"Duplicate value", "FieldValueDuplicate"},
	    {"Too long", "FieldValueTooLong"},
	    {"Too many", "FieldValueTooMany"},
	    {"Not found", "FieldValueNotFound"}};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strncmp(detail, map[i].prefix, strlen(map[i].prefix)) == 0)
			return map[i].reason;
	return "FieldValueInvalid";
}

void as_resp_invalid(struct as_resp *resp, const struct as_kind *k,
    const char *name, const char *field, const char *fmt, ...)
{
	char detail[1024], msg[1400];
	va_list ap;
	json_t *st, *details;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	snprintf(msg, sizeof(msg), "%s \"%s\" is invalid: %s: %s",
	    k ? k->kind : "object", name ? name : "", field, detail);
	st = as_status(422, "Invalid", msg);
	details = json_pack("{s:s, s:s, s:s, s:[{s:s, s:s, s:s}]}", "name",
	    name ? name : "", "group", k ? k->group : "", "kind",
	    k ? k->kind : "", "causes", "reason", cause_reason(detail),
	    "message", detail, "field", field);
	if (k == NULL || k->group[0] == '\0')
		json_object_del(details, "group");
	json_object_set_new(st, "details", details);
	as_resp_status(resp, 422, st);
}

void as_resp_invalid_add(
    struct as_resp *resp, const char *field, const char *fmt, ...)
{
	char detail[1024], one[1400];
	va_list ap;
	json_t *st = resp->body, *causes;
	const char *msg = json_string_value(json_object_get(st, "message"));
	const char *colon;
	char *joined;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	causes = json_object_get(json_object_get(st, "details"), "causes");
	if (!json_is_array(causes) || msg == NULL)
		return;
	/* "K \"n\" is invalid: a" becomes "K \"n\" is invalid: [a, b]". */
	colon = strstr(msg, "is invalid: ");
	if (colon == NULL)
		return;
	colon += strlen("is invalid: ");
	snprintf(one, sizeof(one), "%s: %s", field, detail);
	n = strlen(msg);
	if (*colon == '[')
		joined = cu_asprintf("%.*s, %s]", (int)(n - 1), msg, one);
	else
		joined = cu_asprintf(
		    "%.*s[%s, %s]", (int)(colon - msg), msg, colon, one);
	if (joined != NULL)
		json_object_set_new(st, "message", json_string(joined));
	cu_free(joined);
	json_array_append_new(
	    causes, json_pack("{s:s, s:s, s:s}", "reason", cause_reason(detail),
			"message", detail, "field", field));
}
