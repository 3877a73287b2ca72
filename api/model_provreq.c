/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/model_provreq.c - the autoscaling.x-k8s.io/v1 ProvisioningRequest
 * in the model, decoded once for the ProvisioningRequest admission check
 * of the controller: metadata, provisioningClassName, parameters, the pod
 * sets (template name, count), the conditions and provisioningClassDetails
 * (see api/model.h); and an owner reference's wire form. Decode only:
 * cueue builds new requests in reconcile/provreq.c.
 */
#include <string.h>

#include "api/model_internal.h"
#include "api/wire.h"

static void podset(struct api_dec *d, const json_t *e, void *item, void *ctx)
{
	struct api_provreq_podset *p = item;
	const json_t *ref;
	size_t mark;

	(void)ctx;
	ref = apid_section(d, e, "podTemplateRef", true, &mark);
	apid_str(d, ref, "name", true, &p->template_name);
	apid_pop(d, mark);
	apid_i32(d, e, "count", true, NULL, &p->count);
}

static void provreq_decode_body(
    struct api_dec *d, const json_t *j, struct api_provreq *x)
{
	const json_t *sec;
	size_t mark;

	apid_meta(d, j, &x->meta);
	sec = apid_section(d, j, "spec", true, &mark);
	apid_str(d, sec, "provisioningClassName", true, &x->spec.class_name);
	apid_strmap(d, sec, "parameters", &x->spec.parameters);
	x->spec.podsets = apid_each(d, sec, "podSets", true,
	    sizeof(*x->spec.podsets), &x->spec.n_podsets, podset, NULL);
	apid_pop(d, mark);
	sec = apid_section(d, j, "status", false, &mark);
	apid_conditions(d, sec, "conditions", false, &x->status.conditions);
	apid_strmap(
	    d, sec, "provisioningClassDetails", &x->status.class_details);
	apid_pop(d, mark);
}

void api_provreq_dispose(struct api_provreq *x)
{
	size_t i;

	if (x == NULL)
		return;
	cu_free(x->spec.class_name);
	api_strmap_dispose(&x->spec.parameters);
	for (i = 0; i < x->spec.n_podsets; i++)
		cu_free(x->spec.podsets[i].template_name);
	cu_free(x->spec.podsets);
	api_conditions_dispose(&x->status.conditions);
	api_strmap_dispose(&x->status.class_details);
	api_meta_dispose(&x->meta);
	json_decref(x->raw);
	memset(x, 0, sizeof(*x));
}

API_MODEL_DEFINE_DECODE(provreq, "autoscaling.x-k8s.io/v1",
    "ProvisioningRequest", "ProvisioningRequest")

json_t *api_owner_ref_encode(const struct api_owner_ref *r)
{
	json_t *o = json_pack("{s:s?, s:s?, s:s?, s:s?}", "apiVersion",
	    r->api_version, "kind", r->kind, "name", r->name, "uid", r->uid);

	if (o != NULL && r->has_controller &&
	    json_object_set_new(o, "controller", json_boolean(r->controller)))
		goto nomem;
	if (o != NULL && r->has_block_owner_deletion &&
	    json_object_set_new(
		o, "blockOwnerDeletion", json_boolean(r->block_owner_deletion)))
		goto nomem;
	return o;
nomem:
	json_decref(o);
	return NULL;
}
