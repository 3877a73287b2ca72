/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/model_conditions.c - status conditions (metav1.Condition and
 * batch/v1's JobCondition) in the model: their codec, the one condition
 * finder (api_conditions_find), the decoder of any object's conditions
 * alone and the one writer of a condition into an object's wire form
 * (api_conditions_set_json). See api/model.h.
 */
#include <string.h>

#include "api/model_internal.h"

const struct api_condition *api_conditions_find(
    const struct api_conditions *cs, const char *type)
{
	size_t i;

	for (i = 0; i < cs->n; i++)
		if (cs->items[i].type && strcmp(cs->items[i].type, type) == 0)
			return &cs->items[i];
	return NULL;
}

bool api_conditions_true(const struct api_conditions *cs, const char *type)
{
	const struct api_condition *c = api_conditions_find(cs, type);

	return c != NULL && c->status == API_COND_TRUE;
}

void api_conditions_dispose(struct api_conditions *cs)
{
	size_t i;

	for (i = 0; i < cs->n; i++) {
		cu_free(cs->items[i].type);
		cu_free(cs->items[i].reason);
		cu_free(cs->items[i].message);
	}
	cu_free(cs->items);
	cs->items = NULL;
	cs->n = 0;
}

static const struct api_enum_name cond_status_names[] = {
    {"True", API_COND_TRUE},
    {"False", API_COND_FALSE},
    {"Unknown", API_COND_UNKNOWN},
    {NULL, 0},
};

static void dec_condition(
    struct api_dec *d, const json_t *e, void *item, void *ctx)
{
	struct api_condition *c = item;
	bool job_style = *(const bool *)ctx;
	int st = 0;

	apid_str(d, e, "type", true, &c->type);
	apid_enum(d, e, "status", true, cond_status_names, &st);
	c->status = (enum api_cond_status)st;
	apid_time(d, e, "lastTransitionTime", !job_style,
	    &c->has_last_transition, &c->last_transition_ns);
	apid_str(d, e, "reason", !job_style, &c->reason);
	apid_str(d, e, "message", false, &c->message);
	if (!job_style && c->message == NULL && d->rc == CU_OK &&
	    json_object_get(e, "message") == NULL)
		apid_field(d, e, "message", JSON_STRING, true);
	apid_i64(d, e, "observedGeneration", false, &c->has_observed_generation,
	    &c->observed_generation);
	if (job_style)
		apid_time(d, e, "lastProbeTime", false, &c->has_last_probe,
		    &c->last_probe_ns);
}

/* metav1.Condition requires type, status, lastTransitionTime, reason and
 * message (CRD schema); batch/v1 JobCondition only type and status. */
void apid_conditions(struct api_dec *d, const json_t *o, const char *key,
    bool job_style, struct api_conditions *out)
{
	out->items = apid_each(d, o, key, false, sizeof(*out->items), &out->n,
	    dec_condition, &job_style);
}

int api_conditions_decode(
    const json_t *obj, struct api_conditions *out, cu_error *err)
{
	struct api_dec d;
	const json_t *st;
	size_t mark;

	memset(out, 0, sizeof(*out));
	apid_init(&d, err);
	st = apid_section(&d, obj, "status", false, &mark);
	if (st != NULL)
		apid_conditions(&d, st, "conditions", true, out);
	apid_pop(&d, mark);
	if (d.rc != CU_OK)
		api_conditions_dispose(out);
	return d.rc;
}

int api_conditions_decode_status(
    const json_t *status, struct api_conditions *out, cu_error *err)
{
	struct api_dec d;

	memset(out, 0, sizeof(*out));
	apid_init(&d, err);
	if (status != NULL)
		apid_conditions(&d, status, "conditions", true, out);
	if (d.rc != CU_OK)
		api_conditions_dispose(out);
	return d.rc;
}

void apie_conditions(struct api_enc *e, json_t *dst, const char *key,
    const struct api_conditions *cs, bool job_style)
{
	json_t *a = apie_arr(e, dst, key, cs->n);
	size_t i;

	for (i = 0; a && i < cs->n; i++) {
		const struct api_condition *c = &cs->items[i];
		json_t *o = json_array_get(a, i);

		apie_str(e, o, "type", c->type);
		apie_enum(e, o, "status", cond_status_names, (int)c->status);
		apie_time(e, o, "lastTransitionTime", c->has_last_transition,
		    c->last_transition_ns, false);
		apie_str(e, o, "reason", c->reason);
		apie_str(e, o, "message", c->message);
		apie_i64(e, o, "observedGeneration", c->has_observed_generation,
		    c->observed_generation);
		if (job_style)
			apie_time(e, o, "lastProbeTime", c->has_last_probe,
			    c->last_probe_ns, false);
	}
}

int api_conditions_encode_status(json_t *status,
    const struct api_conditions *cs, bool job_style, cu_error *err)
{
	struct api_enc e = {CU_OK, err};

	apie_conditions(&e, status, "conditions", cs, job_style);
	return e.rc;
}

/* ---- the writer of a condition on the wire ----------------------------- */

/* Kueue's TruncateConditionMessage; a new jansson string, NULL when out
 * of memory. */
static json_t *message_string(const char *msg)
{
	size_t n = msg ? strlen(msg) : 0;
	size_t keep;
	char *buf;
	json_t *s;

	if (n <= API_CONDITION_MESSAGE_MAX)
		return json_string(msg ? msg : "");
	keep = API_CONDITION_MESSAGE_MAX - 4;
	while (keep > 0 && ((unsigned char)msg[keep] & 0xC0) == 0x80)
		keep--;
	buf = cu_malloc(keep + 5);
	if (buf == NULL)
		return NULL;
	memcpy(buf, msg, keep);
	memcpy(buf + keep, " ...", 5);
	s = json_string(buf);
	cu_free(buf);
	return s;
}

static int set_str(json_t *o, const char *key, const char *s)
{
	return json_object_set_new(o, key, json_string(s ? s : ""));
}

static json_t *find_wire(json_t *conds, const char *type)
{
	json_t *c;
	size_t i;

	json_array_foreach(conds, i, c)
	{
		const char *t = api_json_str(c, "type");

		if (t != NULL && strcmp(t, type) == 0)
			return c;
	}
	return NULL;
}

/* A new condition c with its message m [consumed], in Kueue's key
 * order; NULL when out of memory. */
static json_t *new_wire(const struct api_condition_set *c, const char *st,
    const char *now, json_t *m)
{
	json_t *o = json_pack("{s:s, s:s}", "type", c->type, "status", st);

	if (o == NULL ||
	    (c->has_observed_generation &&
		json_object_set_new(o, "observedGeneration",
		    json_integer(c->observed_generation)) != 0) ||
	    set_str(o, "lastTransitionTime", now) != 0 ||
	    set_str(o, "reason", c->reason) != 0) {
		json_decref(o);
		json_decref(m);
		return NULL;
	}
	if (json_object_set_new(o, "message", m) != 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int api_conditions_set_json(json_t *status, const struct api_condition_set *c,
    const char *now, cu_error *err)
{
	const char *st = NULL, *cur;
	json_t *conds, *o, *m;
	size_t i;

	for (i = 0; cond_status_names[i].name != NULL; i++)
		if (cond_status_names[i].value == (int)c->status)
			st = cond_status_names[i].name;
	if (c->type == NULL || st == NULL || !json_is_object(status))
		return cu_error_set(err, CU_EINVAL,
		    "condition %s: a type, a status and a status object are "
		    "required",
		    c->type ? c->type : "");
	conds = json_object_get(status, "conditions");
	if (!json_is_array(conds) &&
	    json_object_set_new(status, "conditions", json_array()) != 0)
		goto nomem;
	conds = json_object_get(status, "conditions");
	if ((m = message_string(c->message)) == NULL)
		goto nomem;
	if ((o = find_wire(conds, c->type)) == NULL) {
		o = new_wire(c, st, now, m);
		if (o == NULL || json_array_append_new(conds, o) != 0)
			goto nomem;
		return CU_OK;
	}
	cur = api_json_str(o, "status");
	if ((cur == NULL || strcmp(cur, st) != 0) &&
	    (set_str(o, "status", st) != 0 ||
		set_str(o, "lastTransitionTime", now) != 0)) {
		json_decref(m);
		goto nomem;
	}
	if (json_object_set_new(o, "message", m) != 0 ||
	    set_str(o, "reason", c->reason) != 0)
		goto nomem;
	if (!c->has_observed_generation) {
		json_object_del(o, "observedGeneration");
		return CU_OK;
	}
	if (json_object_set_new(o, "observedGeneration",
		json_integer(c->observed_generation)) != 0)
		goto nomem;
	return CU_OK;
nomem:
	return cu_error_set(
	    err, CU_ENOMEM, "condition %s: out of memory", c->type);
}
