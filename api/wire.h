/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api/wire.h - the kinds the controller reads beside the ones it queues,
 * decoded once as api/model.h decodes its own (same conventions: `raw`
 * kept, NULL strings and has_ flags for absent fields, errors naming the
 * field): the API server's TokenReview and SubjectAccessReview answers
 * with the user and request attributes of a review (api/model_auth.c),
 * the autoscaling.x-k8s.io/v1 ProvisioningRequest (api/model_provreq.c),
 * and what the webhook certificate manager reads: a v1 Secret, webhook
 * configurations and CRDs (api/model_certs.c). Decode only, apart from
 * the few wire-form writers named below.
 *
 * Prefix: api_.
 */
#ifndef CU_API_WIRE_H
#define CU_API_WIRE_H

#include "api/model.h"

/* ---- authentication and authorization reviews (decode only) ----------- */

/* user.Info as a TokenReview's status.user carries it, and as the
 * controller forwards it in a SubjectAccessReview's spec. */
struct api_user_info {
	char *username; /* [owned] */
	char *uid;	/* [owned] or NULL */
	bool has_groups;
	struct api_strlist groups;
	/* map[string][]string, checked, forwarded as it came [owned:
	 * json_decref] or NULL */
	json_t *extra;
};

/* authentication.k8s.io/v1 TokenReview: the answer's status. */
struct api_token_review {
	json_t *raw; /* [owned: json_decref] source document */
	bool has_status;
	struct {
		bool authenticated;
		bool has_user;
		struct api_user_info user;
		char *error; /* [owned] or NULL */
	} status;
};

/* The request a SubjectAccessReview asks about (its spec's
 * resourceAttributes or nonResourceAttributes): absent strings NULL. */
struct api_access_attributes {
	bool resource; /* resourceAttributes present */
	char *verb, *group, *version, *resource_name, *subresource;
	char *namespace_, *name; /* [owned] each */
	bool non_resource;	 /* nonResourceAttributes present */
	char *path, *nr_verb;	 /* [owned] each */
};

/* authorization.k8s.io/v1 SubjectAccessReview: the answer's status. */
struct api_subject_access_review {
	json_t *raw; /* [owned: json_decref] source document */
	bool has_status;
	struct {
		bool allowed, denied;
		char *reason;		/* [owned] or NULL */
		char *evaluation_error; /* [owned] or NULL */
	} status;
};

/*
 * Decode a review answer j [borrowed; referenced in out->raw] into *out,
 * initialised here and left empty on failure. A present kind/apiVersion
 * must match (status.user may be empty: `{}` when not authenticated).
 * CU_EPARSE (wrong JSON type),
 * CU_EINVAL (missing field), CU_ENOMEM; the message names the field
 * ("status.user.groups[1]: Invalid type: expected string, got number").
 */
CU_MUST_CHECK int api_token_review_decode(
    struct api_token_review *out, const json_t *j, cu_error *err);
void api_token_review_dispose(struct api_token_review *x);
CU_MUST_CHECK int api_subject_access_review_decode(
    struct api_subject_access_review *out, const json_t *j, cu_error *err);
void api_subject_access_review_dispose(struct api_subject_access_review *x);
/* A user object j [borrowed] ({"username", "uid", "groups", "extra"}, as
 * a TokenReview's status.user) into *out, initialised here, empty on
 * failure; username required. Errors as above. */
CU_MUST_CHECK int api_user_info_decode(
    struct api_user_info *out, const json_t *j, cu_error *err);
/* The spec fields of u [borrowed] written into spec [borrowed, changed]:
 * "user", and "groups", "uid", "extra" when u has them. CU_ENOMEM. */
CU_MUST_CHECK int api_user_info_encode_spec(
    json_t *spec, const struct api_user_info *u, cu_error *err);
void api_user_info_dispose(struct api_user_info *u);
/* *dst [initialised here; api_user_info_dispose] a deep copy of src
 * [borrowed]. CU_ENOMEM (dst left empty). */
CU_MUST_CHECK int api_user_info_copy(
    struct api_user_info *dst, const struct api_user_info *src, cu_error *err);
/* The request attributes j [borrowed] ({"resourceAttributes": {...}} or
 * {"nonResourceAttributes": {...}}) into *out, initialised here, empty
 * on failure. Errors as above. */
CU_MUST_CHECK int api_access_attributes_decode(
    struct api_access_attributes *out, const json_t *j, cu_error *err);
void api_access_attributes_dispose(struct api_access_attributes *a);

/* ---- autoscaling.x-k8s.io/v1 ProvisioningRequest (decode only) -------- */

struct api_provreq_podset {
	char *template_name; /* [owned] podTemplateRef.name, required */
	int32_t count;	     /* required */
};

/* A ProvisioningRequest as cueue creates and watches it. */
struct api_provreq {
	json_t *raw; /* [owned: json_decref] source document */
	struct api_meta meta;
	struct {
		char *class_name; /* [owned] provisioningClassName, required */
		struct api_strmap parameters;
		struct api_provreq_podset *podsets; /* [owned] */
		size_t n_podsets;
	} spec;
	struct {
		struct api_conditions conditions; /* Provisioned, Failed, ... */
		struct api_strmap class_details;  /* provisioningClassDetails */
	} status;
};

/* Decode j [borrowed; referenced in out->raw] into *out, initialised
 * here, empty on failure; a present kind/apiVersion must match. Errors
 * as the codecs below, naming the field. */
CU_MUST_CHECK int api_provreq_decode(
    struct api_provreq *out, const json_t *j, cu_error *err);
void api_provreq_dispose(struct api_provreq *x);
/* The wire form of owner reference r [borrowed] (the six fields of
 * metav1.OwnerReference; absent flags left out) [owned: json_decref],
 * or NULL when out of memory. */
json_t *api_owner_ref_encode(const struct api_owner_ref *r);

/* ---- webhook certificates: v1 Secret, webhook configurations, CRDs ---- */

/* A v1 Secret: its type and data (base64 values, as on the wire). */
struct api_secret {
	json_t *raw; /* [owned: json_decref] source document */
	struct api_meta meta;
	char *type; /* [owned] or NULL */
	struct api_strmap data;
};

/* One webhook of a Mutating/ValidatingWebhookConfiguration. */
struct api_webhook {
	char *name;	 /* [owned] required */
	char *ca_bundle; /* [owned] clientConfig.caBundle or NULL */
};

/* An admissionregistration.k8s.io/v1 Mutating- or
 * ValidatingWebhookConfiguration: its webhooks' caBundles. */
struct api_webhook_configuration {
	json_t *raw; /* [owned: json_decref] source document */
	struct api_meta meta;
	struct api_webhook *webhooks; /* [owned] */
	size_t n_webhooks;
};

/* An apiextensions.k8s.io/v1 CustomResourceDefinition: its conversion
 * strategy and the conversion webhook's caBundle. */
struct api_crd {
	json_t *raw; /* [owned: json_decref] source document */
	struct api_meta meta;
	char *conversion_strategy; /* [owned] spec.conversion.strategy */
	char *ca_bundle; /* [owned] ...webhook.clientConfig.caBundle */
};

/* Decode j [borrowed; referenced in out->raw] into *out, initialised
 * here, empty on failure; a present apiVersion (and kind, except for a
 * webhook configuration, which may be either kind) must match. Errors
 * name the field ("webhooks[0].clientConfig.caBundle: Invalid type:
 * expected string, got integer"). */
CU_MUST_CHECK int api_secret_decode(
    struct api_secret *out, const json_t *j, cu_error *err);
void api_secret_dispose(struct api_secret *x);
CU_MUST_CHECK int api_webhook_configuration_decode(
    struct api_webhook_configuration *out, const json_t *j, cu_error *err);
void api_webhook_configuration_dispose(struct api_webhook_configuration *x);
CU_MUST_CHECK int api_crd_decode(
    struct api_crd *out, const json_t *j, cu_error *err);
void api_crd_dispose(struct api_crd *x);
/* m [borrowed] as a JSON object of strings [owned: json_decref], or NULL
 * when out of memory. */
json_t *api_strmap_encode(const struct api_strmap *m);
/*
 * Set caBundle bundle [borrowed] in the wire form obj [borrowed, changed;
 * a whole object read for a PUT, every field it has kept]: on every
 * webhook's clientConfig of a webhook configuration, or on a CRD's
 * conversion webhook clientConfig when its strategy is Webhook. A
 * missing clientConfig is left alone. True when obj changed.
 */
bool api_webhook_configuration_set_ca_bundle(json_t *obj, const char *bundle);
bool api_crd_set_ca_bundle(json_t *obj, const char *bundle);

#endif /* CU_API_WIRE_H */
