/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/model_certs.c - what the webhook certificate manager
 * (controller/certrot.c) reads, in the model: a v1 Secret's type and
 * data, the caBundle of every webhook of a Mutating- or
 * ValidatingWebhookConfiguration, and a CustomResourceDefinition's
 * conversion strategy and conversion webhook caBundle (see api/model.h).
 * Decode only: the controller writes these objects back as it read them,
 * with the bundle set.
 */
#include <string.h>

#include "api/model_internal.h"
#include "api/wire.h"

/* ---- Secret ------------------------------------------------------------- */

static void secret_decode_body(
    struct api_dec *d, const json_t *j, struct api_secret *x)
{
	apid_meta(d, j, &x->meta);
	apid_str(d, j, "type", false, &x->type);
	apid_strmap(d, j, "data", &x->data);
}

void api_secret_dispose(struct api_secret *x)
{
	if (x == NULL)
		return;
	cu_free(x->type);
	api_strmap_dispose(&x->data);
	api_meta_dispose(&x->meta);
	json_decref(x->raw);
	memset(x, 0, sizeof(*x));
}

/* ---- webhook configurations --------------------------------------------- */

static void webhook(struct api_dec *d, const json_t *e, void *item, void *ctx)
{
	struct api_webhook *w = item;
	const json_t *cc;
	size_t mark;

	(void)ctx;
	apid_str(d, e, "name", true, &w->name);
	cc = apid_section(d, e, "clientConfig", false, &mark);
	apid_str(d, cc, "caBundle", false, &w->ca_bundle);
	apid_pop(d, mark);
}

static void webhook_configuration_decode_body(
    struct api_dec *d, const json_t *j, struct api_webhook_configuration *x)
{
	const json_t *k = apid_field(d, j, "kind", JSON_STRING, false);
	size_t mark;

	if (k != NULL &&
	    strcmp(json_string_value(k), "MutatingWebhookConfiguration") != 0 &&
	    strcmp(json_string_value(k), "ValidatingWebhookConfiguration") !=
		0) {
		mark = apid_push(d, "kind");
		apid_fail(d, CU_EINVAL,
		    "Invalid value: \"%.64s\": expected a webhook "
		    "configuration",
		    json_string_value(k));
		apid_pop(d, mark);
		return;
	}
	apid_meta(d, j, &x->meta);
	x->webhooks = apid_each(d, j, "webhooks", false, sizeof(*x->webhooks),
	    &x->n_webhooks, webhook, NULL);
}

void api_webhook_configuration_dispose(struct api_webhook_configuration *x)
{
	size_t i;

	if (x == NULL)
		return;
	for (i = 0; i < x->n_webhooks; i++) {
		cu_free(x->webhooks[i].name);
		cu_free(x->webhooks[i].ca_bundle);
	}
	cu_free(x->webhooks);
	api_meta_dispose(&x->meta);
	json_decref(x->raw);
	memset(x, 0, sizeof(*x));
}

/* ---- CustomResourceDefinition ------------------------------------------- */

static void crd_decode_body(
    struct api_dec *d, const json_t *j, struct api_crd *x)
{
	const json_t *spec, *conv, *wh, *cc;
	size_t m1, m2, m3, m4;

	apid_meta(d, j, &x->meta);
	spec = apid_section(d, j, "spec", false, &m1);
	conv = apid_section(d, spec, "conversion", false, &m2);
	apid_str(d, conv, "strategy", false, &x->conversion_strategy);
	wh = apid_section(d, conv, "webhook", false, &m3);
	cc = apid_section(d, wh, "clientConfig", false, &m4);
	apid_str(d, cc, "caBundle", false, &x->ca_bundle);
	apid_pop(d, m4);
	apid_pop(d, m3);
	apid_pop(d, m2);
	apid_pop(d, m1);
}

void api_crd_dispose(struct api_crd *x)
{
	if (x == NULL)
		return;
	cu_free(x->conversion_strategy);
	cu_free(x->ca_bundle);
	api_meta_dispose(&x->meta);
	json_decref(x->raw);
	memset(x, 0, sizeof(*x));
}

/* ---- the decoders ------------------------------------------------------- */

API_MODEL_DEFINE_DECODE(secret, "v1", "Secret", "Secret")
/* Either kind: webhook_configuration_decode_body checks it. */
API_MODEL_DEFINE_DECODE(webhook_configuration,
    "admissionregistration.k8s.io/v1", NULL, "webhook configuration")
API_MODEL_DEFINE_DECODE(crd, "apiextensions.k8s.io/v1",
    "CustomResourceDefinition", "CustomResourceDefinition")

json_t *api_strmap_encode(const struct api_strmap *m)
{
	json_t *o = json_object();
	size_t i;

	for (i = 0; o != NULL && i < m->n; i++)
		if (json_object_set_new(o, m->items[i].key,
			json_string(m->items[i].value)) != 0) {
			json_decref(o);
			return NULL;
		}
	return o;
}

/* ---- setting a caBundle on the wire ------------------------------------ */

/* clientConfig.caBundle = bundle unless it is already; true when set. */
static bool set_bundle(json_t *cc, const char *bundle)
{
	const char *have = api_json_str(cc, "caBundle");

	if (!json_is_object(cc) || bundle == NULL ||
	    (have != NULL && strcmp(have, bundle) == 0))
		return false;
	return json_object_set_new(cc, "caBundle", json_string(bundle)) == 0;
}

bool api_webhook_configuration_set_ca_bundle(json_t *obj, const char *bundle)
{
	json_t *w;
	size_t i;
	bool changed = false;

	json_array_foreach(json_object_get(obj, "webhooks"), i, w)
	{
		if (set_bundle(json_object_get(w, "clientConfig"), bundle))
			changed = true;
	}
	return changed;
}

bool api_crd_set_ca_bundle(json_t *obj, const char *bundle)
{
	json_t *conv =
	    json_object_get(json_object_get(obj, "spec"), "conversion");
	const char *strategy = api_json_str(conv, "strategy");

	if (strategy == NULL || strcmp(strategy, "Webhook") != 0)
		return false;
	return set_bundle(
	    json_object_get(json_object_get(conv, "webhook"), "clientConfig"),
	    bundle);
}
