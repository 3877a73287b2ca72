/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/model_acheck.c - the AdmissionCheck codec (kueue.x-k8s.io/v1beta2):
 * spec.controllerName, spec.parameters {apiGroup, kind, name} and the
 * status conditions (Active), decoded strictly as api/model.h describes.
 */
#include <string.h>

#include "api/model_internal.h"

static void admission_check_decode_body(
    struct api_dec *d, const json_t *j, struct api_admission_check *ac)
{
	const json_t *spec, *st, *p;
	size_t mark, m2;

	apid_meta(d, j, &ac->meta);
	spec = apid_section(d, j, "spec", true, &mark);
	apid_str(d, spec, "controllerName", true, &ac->spec.controller_name);
	p = apid_section(d, spec, "parameters", false, &m2);
	if (p != NULL) {
		ac->spec.has_parameters = true;
		apid_str(
		    d, p, "apiGroup", true, &ac->spec.parameters.api_group);
		apid_str(d, p, "kind", true, &ac->spec.parameters.kind);
		apid_str(d, p, "name", true, &ac->spec.parameters.name);
	}
	apid_pop(d, m2);
	apid_pop(d, mark);
	st = apid_section(d, j, "status", false, &mark);
	apid_conditions(d, st, "conditions", false, &ac->status.conditions);
	apid_pop(d, mark);
}

static void admission_check_encode_body(
    struct api_enc *e, json_t *dst, const struct api_admission_check *ac)
{
	json_t *spec, *p, *st;

	apie_meta(e, dst, &ac->meta);
	spec = apie_obj(e, dst, "spec", true);
	apie_str(e, spec, "controllerName", ac->spec.controller_name);
	p = apie_obj(e, spec, "parameters", ac->spec.has_parameters);
	apie_str(e, p, "apiGroup", ac->spec.parameters.api_group);
	apie_str(e, p, "kind", ac->spec.parameters.kind);
	apie_str(e, p, "name", ac->spec.parameters.name);
	st = apie_obj(e, dst, "status",
	    ac->status.conditions.n > 0 || json_object_get(dst, "status"));
	apie_conditions(e, st, "conditions", &ac->status.conditions, false);
}

static void admission_check_dispose_body(struct api_admission_check *ac)
{
	cu_free(ac->spec.controller_name);
	cu_free(ac->spec.parameters.api_group);
	cu_free(ac->spec.parameters.kind);
	cu_free(ac->spec.parameters.name);
	api_conditions_dispose(&ac->status.conditions);
}

API_MODEL_DEFINE_CODEC(
    admission_check, "kueue.x-k8s.io/v1beta2", "AdmissionCheck")
