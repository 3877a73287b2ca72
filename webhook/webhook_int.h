/* SPDX-License-Identifier: Apache-2.0 */
/*
 * webhook/webhook_int.h - internals shared by the admission-webhook
 * files (webhook.c: the AdmissionReview codec and dispatch;
 * jobs.c: Job/JobSet and the other job kinds; pods.c: the Pod gate;
 * kueue.c: the Kueue kinds; podset.c: a Workload
 * podSet's pod template). Never
 * included from another folder.
 *
 * Verdict convention of the check functions: CU_OK = passed; CU_EPARSE =
 * malformed (denied with 400); CU_EDENIED or CU_EINVAL = a rule failed
 * (denied with 403); anything else (CU_ENOMEM, a callback's error) is an
 * internal error (500). The message is in err, one line.
 */
#ifndef CU_WEBHOOK_WEBHOOK_INT_H
#define CU_WEBHOOK_WEBHOOK_INT_H

#include "api/json.h"
#include "webhook/webhook.h"

/* What one check sees. All pointers [borrowed]. */
struct wh_ctx {
	const struct wh_options *opt;
	const struct wh_request *req;
	enum wh_mode mode;
	struct wh_response *out; /* patch goes here (mutating) */
};

/* Quoted, escaped and (past 64 bytes) shortened form of s for messages,
 * as Go's %q would print it: `"a\"b"`. Returns buf. */
#define WH_QUOTE_MAX 80
char *wh__quote(char buf[WH_QUOTE_MAX], const char *s);

/* True when s is a DNS-1123 subdomain (<= 253, [a-z0-9.-], alnum ends,
 * each dot-separated part alnum-ended). */
bool wh__is_dns1123_subdomain(const char *s);

/* Set err to `<field>: Invalid value: "<s>": <why>` for a value that is
 * not a DNS-1123 subdomain and return CU_EDENIED; CU_OK when it is. */
int wh__check_dns1123_subdomain(
    const char *s, const char *field, cu_error *err);

/* A callback's error as an internal error: the verdict codes CU_EPARSE,
 * CU_EINVAL and CU_EDENIED become CU_EIO, the message is kept (and set
 * to `what: failed` when the callback left none). */
int wh__cb_error(int rc, const char *what, cu_error *err);

/* Append {"op":op,"path":path,"value":value} to out->patch (created on
 * first use). path [borrowed]; value [stolen, even on failure]. */
int wh__patch_add(struct wh_response *out, const char *op, const char *path,
    json_t *value, cu_error *err);

/* A Workload podSet i's pod template [borrowed] as Kueue validates it
 * (podset.c): labels and annotations (when check_metadata: Kueue's
 * WorkloadValidationForPodSetMetadata), requests and limits (no `pods`
 * key, none negative). CU_EDENIED with the field path. */
int wh__podset_template(
    const json_t *tpl, size_t i, bool check_metadata, cu_error *err);

/* Job and JobSet (jobs.c). */
int wh__jobs(struct wh_ctx *c, cu_error *err);
/* The SparkApplication's own checks (spark.c) on a managed obj
 * [borrowed]: cluster mode, not elastic (elastic_gate:
 * ElasticJobsViaWorkloadSlices on), no dynamic allocation. CU_OK or
 * CU_EDENIED naming the field. */
int wh__spark_validate(const json_t *obj, bool elastic_gate, cu_error *err);

/* Pods (pods.c): is the request about a core v1 Pod; add the
 * kueue.x-k8s.io/admission scheduling gate to obj [borrowed] (unless it
 * has it) as a patch of c->out. CU_EPARSE for a malformed spec. */
bool wh__is_pod(const struct wh_request *req);
/* The gate's decision on obj [borrowed] as an object of kind `kind`
 * (jobs.c; the namespace from the request): *gobj borrows from obj. */
int wh__gate_as(struct wh_ctx *c, const json_t *obj, enum ns_gate_kind kind,
    struct ns_gate_object *gobj, struct ns_gate_decision *d, cu_error *err);
/* The Deployment webhook (pods.c): mutating CREATE of a Deployment whose
 * Pods cueue manages (framework deployment, the gate on them as Pods)
 * copies its queue-name and priority-class labels to the pod template,
 * as Kueue's does; anything else passes untouched. */
int wh__deployment(struct wh_ctx *c, cu_error *err);
int wh__pod_gate(struct wh_ctx *c, const json_t *obj, cu_error *err);
/* A managed Pod obj [borrowed] gets the label kueue.x-k8s.io/managed:
 * "true" and, without a kueue.x-k8s.io/pod-suspending-parent
 * annotation, the finalizer of that name (patches of c->out, read
 * against the patch so far). CU_EINVAL from a patch that does not apply,
 * CU_ENOMEM. */
int wh__pod_managed(struct wh_ctx *c, const json_t *obj, cu_error *err);
/* Kueue's elastic-job annotation, and the scheduling gate of the same
 * name on an elastic Job's pods. */
#define WH_ELASTIC_JOB "kueue.x-k8s.io/elastic-job"
/* obj [borrowed] carries kueue.x-k8s.io/elastic-job: "true" (partial.c). */
bool wh__elastic_job(const json_t *obj);
/* Scheduling gate `gate` [borrowed] added (once) to the pod spec `spec`
 * [borrowed] found at the dotted path `field` of the object ("spec" of a
 * Pod, "spec.template.spec" of a Job): a patch of c->out. CU_EPARSE when
 * spec or its schedulingGates has the wrong type. */
int wh__add_gate(struct wh_ctx *c, const json_t *spec, const char *field,
    const char *gate, cu_error *err);

/* The serving frameworks (serving.c): is the request about a StatefulSet
 * or a LeaderWorkerSet; their mutating and validating webhooks (options
 * statefulset, leaderworkerset); and the pod webhook's step for a Pod of
 * a managed LeaderWorkerSet (the pod-group-name label of its group, as
 * a patch of c->out; obj [borrowed]). */
bool wh__is_serving(const struct wh_request *req);
int wh__serving(struct wh_ctx *c, cu_error *err);
int wh__pod_serving(struct wh_ctx *c, const json_t *obj, cu_error *err);

/* The Kueue kinds (kueue.c): kind is request.kind.kind. CU_OK
 * with nothing done for a kind it does not know. */
int wh__kueue(struct wh_ctx *c, const char *kind, cu_error *err);

#endif /* CU_WEBHOOK_WEBHOOK_INT_H */
