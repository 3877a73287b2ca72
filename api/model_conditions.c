/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/model_conditions.c - status conditions (metav1.Condition and
 * batch/v1's JobCondition) in the model: their codec, the one condition
 * finder (api_conditions_find) and the decoder of any object's conditions
 * alone. See api/model.h.
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
