/* SPDX-License-Identifier: Apache-2.0 */
/*
 * webhook/webhook.h - the admission-webhook handlers: an AdmissionReview
 * v1 body in, a decision and an AdmissionReview response body out.
 *
 *   mutating  Job (batch/v1) and JobSet (jobset.x-k8s.io/v1alpha2) CREATE:
 *             a managed job is created suspended, and a job without a
 *             queue-name label in a managed namespace that has a
 *             LocalQueue "default" gets kueue.x-k8s.io/queue-name=default
 *             (Kueue's ApplyDefaultLocalQueue + ApplyDefaultForSuspend;
 *             docs/jobset.md §2.2);
 *             ClusterQueue and ResourceFlavor CREATE: the
 *             kueue.x-k8s.io/resource-in-use finalizer, only when
 *             opt->add_resource_in_use_finalizer (Kueue's defaulting);
 *   validating Job/JobSet CREATE/UPDATE and the Kueue kinds ClusterQueue,
 *             LocalQueue, ResourceFlavor, Workload, WorkloadPriorityClass
 *             and Cohort on CREATE/UPDATE.
 *
 * Whether a job is cueue's is decided by the management gate
 * (namespaces/gate.h) with the caller's configuration, namespace view and
 * owner lookup, exactly as the reconciler decides it (docs/architecture.md
 * lesson 1): a job the gate does not call NS_GATE_YES is never patched and
 * never denied (a child of a managed parent is VIA_PARENT: hands off).
 *
 * Pure logic: no I/O, no clock, no global state. Everything the handlers
 * need to know about the cluster comes from caller-supplied callbacks over
 * the caller's caches (struct wh_options). Any thread, as long as the
 * callbacks allow it. Prefix: wh_ / WH_.
 *
 * Why a module of its own: these handlers decode whole Kueue and batch
 * objects (api/model.h), read JSON (api/json.h) and answer with JSON
 * patches (api/patch.h), so they need api/. admission/ is the scheduler's
 * admission cycle over queues/ and namespaces/ and must stay free of the
 * wire format; the handlers share nothing with it but the word
 * "admission". Allowed: webhook -> namespaces, api, lib (enforced by
 * tests/lint/deps.sh); only controller/ includes this header.
 *
 * Status codes of a denial (response.status.code): 400 for a review or an
 * object that cannot be decoded (wrong JSON types, "malformed"), 403 for a
 * validation or policy failure (controller-runtime's Denied, which is what
 * Kueue's webhooks answer), 500 for an internal error (a callback failed,
 * out of memory). Messages are one line in the Kubernetes field-error
 * form: `spec.resourceGroups[0].flavors[1].name: Duplicate value: "spot"`.
 *
 * Root cause first (docs/architecture.md lesson 2). Checks run in causal order
 * and the first failure is the one reported; later checks may derive from the
 * failed one and would only add noise. The order, per kind:
 *
 *   every review  1. operation DELETE/CONNECT, a subresource (status, ...)
 *                    other than workloads/status, or an unknown kind:
 *                    allowed, nothing checked (workloads/status is
 *                    validated as the whole Workload, as Kueue does);
 *                 2. request.object (and oldObject on UPDATE) must be
 *                    objects whose apiVersion/kind, when present, match
 *                    request.kind (400);
 *   Job/JobSet    3. the gate on the new object (and on UPDATE on the old
 *                    one): not NS_GATE_YES on either -> allowed untouched,
 *                    even when malformed; else spec.suspend must be a
 *                    boolean (400);
 *                 4. metadata.labels[kueue.x-k8s.io/queue-name] must be a
 *                    DNS-1123 subdomain (Kueue's ValidateQueueName);
 *                 5. UPDATE: the queue-name label is immutable while the
 *                    job's Workload holds a quota reservation;
 *                 6. UPDATE: spec.suspend true -> false by anyone but
 *                    opt->own_username while the Workload is not admitted
 *                    is forbidden (cueue resumes the job on admission);
 *   Kueue kinds   3. metadata.name and reference fields that other checks
 *                    depend on (cohortName, parentName, clusterQueue) are
 *                    DNS-1123 subdomains; Cohort: parentName != own name;
 *                 4. sizes and group-level structure: at most 16
 *                    resourceGroups; per group coveredResources 1..64
 *                    valid, unique across groups; flavors 1..64; at most
 *                    256 flavors and 256 covered resources in total, and
 *                    512 flavor-resource pairs per group; ResourceFlavor
 *                    nodeLabels/nodeTaints/tolerations at most 8 each;
 *                    Workload podSets 1..18;
 *                 5. the typed decode of the whole object (api/model.h):
 *                    JSON types (400), required fields and enum values,
 *                    and the CRD rule "flavors must have the same number
 *                    of resources as the coveredResources" (403);
 *                 6. item-level rules, in document order: flavor names
 *                    unique across groups before that flavor's resources;
 *                    per resource: name matches coveredResources[k],
 *                    nominalQuota >= 0, borrowingLimit/lendingLimit only
 *                    with a cohort (a parent for Cohorts), >= 0,
 *                    lendingLimit <= nominalQuota (ClusterQueue only);
 *                    ResourceFlavor labels, taints (key, value, effect,
 *                    unique key+effect), tolerations (Kueue's CRD rules),
 *                    topologyName needs a nodeLabel; Workload podSet
 *                    names unique, at most one minCount, count >= 0;
 *                    Workload status: reclaimablePods name a podSet and
 *                    count at most its count; with QuotaReserved=True the
 *                    admission assigns every podSet once;
 *                 7. rules that read the decoded spec as a whole:
 *                    ClusterQueue preemption and flavorFungibility rules,
 *                    fairSharing.weight, admission-check onFlavors naming
 *                    a flavor of the queue;
 *                 8. UPDATE only: immutability (LocalQueue
 *                    spec.clusterQueue when set before and after, as
 *                    Kueue's CEL rule; ResourceFlavor topologyName once
 *                    set; Workload spec.queueName and spec.podSets while
 *                    QuotaReserved=True; while it stays True, also
 *                    status.admission (set or cleared, never changed) and
 *                    status.reclaimablePods (never removed or lowered)).
 *
 * WorkloadPriorityClass.value is mutable, as in Kueue (a change does not
 * affect existing Workloads): only the decode and description <= 2048.
 */
#ifndef CU_WEBHOOK_WEBHOOK_H
#define CU_WEBHOOK_WEBHOOK_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "lib/cu.h"
#include "namespaces/gate.h"

/* Largest request body accepted (the API server's own request limit);
 * larger is CU_ETOOBIG (HTTP 413). The HTTP layer's body cap should be
 * at least this. */
#define WH_MAX_BODY ((size_t)3 * 1024 * 1024)
#define WH_API_VERSION "admission.k8s.io/v1"
#define WH_KIND "AdmissionReview"
#define WH_DEFAULT_LOCAL_QUEUE "default"
#define WH_FINALIZER_RESOURCE_IN_USE "kueue.x-k8s.io/resource-in-use"

enum wh_op {
	WH_OP_UNSET = 0,
	WH_OP_CREATE,
	WH_OP_UPDATE,
	WH_OP_DELETE,
	WH_OP_CONNECT,
};

/* Which webhook configuration called: the mutating one may answer a
 * patch, the validating one never does. */
enum wh_mode {
	WH_MUTATE = 0,
	WH_VALIDATE,
};

/*
 * A decoded AdmissionReview v1 request. `doc` is the parsed body
 * [owned: json_decref, by wh_request_dispose]; every other pointer
 * borrows from it and is valid until dispose. Optional strings read ""
 * when absent, never NULL.
 */
struct wh_request {
	json_t *doc;
	const char *uid; /* required, non-empty */
	struct {
		const char *group; /* "" = core */
		const char *version;
		const char *kind;
	} kind; /* request.kind (the object's kind in the webhook's version) */
	struct {
		const char *group;
		const char *version;
		const char *resource;
	} resource;
	const char *sub_resource; /* "" for the main resource */
	const char *name;	  /* "" on CREATE with generateName */
	const char *namespace_;	  /* "" for cluster-scoped objects */
	enum wh_op operation;
	const json_t *object;	  /* NULL when absent or JSON null */
	const json_t *old_object; /* NULL when absent or JSON null */
	bool dry_run;
	const char *username; /* request.userInfo.username */
};

/*
 * The decision. allowed with code 0 and message NULL, or !allowed with
 * code >= 400 and a one-line message. patch is an RFC 6902 array, only
 * ever set on an allowed mutating answer; NULL or [] means no patch.
 * warnings is NULL or an array of strings (response.warnings).
 * message [owned: cu_free]; patch, warnings [owned: json_decref]; all
 * freed by wh_response_dispose.
 */
struct wh_response {
	bool allowed;
	int code;
	char *message;
	json_t *patch;
	json_t *warnings;
};

/* The job an UPDATE is about, for the Workload callback. Strings
 * [borrowed; valid during the callback]; uid may be "". */
struct wh_job_ref {
	enum ns_gate_kind kind;
	const char *namespace_;
	const char *name;
	const char *uid;
};

/* What the caller's caches know about the job's Workload (both false when
 * it has none yet). */
struct wh_workload_state {
	bool quota_reserved; /* QuotaReserved=True */
	bool admitted;	     /* Admitted=True */
	bool on_hold;	     /* QuotaReserved=False, reason OnHold */
};

/*
 * What the handlers need from the caller. Every pointer [borrowed; must
 * stay valid while a handler runs]; payload is passed to every callback.
 * Callbacks return CU_OK, CU_ENOTFOUND (read as: no such namespace /
 * LocalQueue / Workload), or another error with err set; such an error
 * makes the review fail with code 500 (the API server applies
 * failurePolicy), never a silent allow of a job that might be ours.
 */
struct wh_options {
	/* The management gate configuration (required for Job/JobSet). */
	const struct ns_gate_config *gate;
	/*
	 * Fill *out with the namespace `name` [borrowed] as the caller's
	 * cache has it (out->found = false when it does not exist; strings
	 * and out->payload must stay valid until the handler returns).
	 * NULL: every namespace reads as not found (nothing is managed).
	 */
	int (*namespace_get)(const char *name, struct ns_gate_namespace *out,
	    void *payload, cu_error *err);
	/* Owner lookup for the gate (ns_gate_lookup contract); may be NULL. */
	ns_gate_lookup owner_lookup;
	/* *exists = a LocalQueue `name` exists in namespace_ (strings
	 * [borrowed]). NULL: never (no default LocalQueue injection). */
	int (*local_queue_exists)(const char *namespace_, const char *name,
	    bool *exists, void *payload, cu_error *err);
	/* The WorkloadPriorityClass "default" exists (Kueue's
	 * WorkloadPriorityClassDefaulting: a managed standalone job without a
	 * kueue.x-k8s.io/priority-class label gets it on CREATE). NULL:
	 * never. */
	bool (*default_wpc_exists)(void *payload);
	/* The state of the Workload of job [borrowed]. NULL: no Workload
	 * (not reserved, not admitted). */
	int (*workload_state)(const struct wh_job_ref *job,
	    struct wh_workload_state *out, void *payload, cu_error *err);
	/* The state of the Workload namespace_/name [borrowed] (a
	 * StatefulSet's, webhook/serving.c); CU_ENOTFOUND when the caches
	 * have none. NULL: never any. */
	int (*workload_named)(const char *namespace_, const char *name,
	    struct wh_workload_state *out, void *payload, cu_error *err);
	/* The uid of the cached LeaderWorkerSet namespace_/name [borrowed
	 * from the cache, read at once], NULL when not cached: a LWS Pod's
	 * group is named with it (webhook/serving.c). NULL: never any. */
	const char *(*lws_uid)(
	    const char *namespace_, const char *name, void *payload);
	/* userInfo.username of cueue itself (its service account,
	 * "system:serviceaccount:<ns>:<name>"); its own unsuspend writes are
	 * exempt from the unsuspend rule, since its cache of the Workload may
	 * lag the admission it just wrote. NULL or "": nobody is exempt. */
	const char *own_username;
	/* Add kueue.x-k8s.io/resource-in-use to ClusterQueues and
	 * ResourceFlavors on CREATE, as Kueue does. Only set this when the
	 * controller removes that finalizer again, or deletions hang. */
	bool add_resource_in_use_finalizer;
	/* Kueue's AdmissionGatedBy gate switched off: the
	 * admission-gated-by annotation is not validated. */
	bool no_admission_gated_by;
	/* Kueue's ElasticJobsViaWorkloadSlices switched off. */
	bool no_elastic_jobs;
	/* The deployment framework is enabled: a Deployment cueue manages
	 * gets its queue-name label copied to its pod template. */
	bool deployment;
	/* The statefulset and leaderworkerset.x-k8s.io/leaderworkerset
	 * frameworks are enabled (webhook/serving.c). */
	bool statefulset, leaderworkerset;
	void *payload;
};

/* A webhook path cueue serves, with Kueue's spelling of it
 * (/mutate-batch-v1-job, /validate-kueue-x-k8s-io-v1beta2-clusterqueue,
 * ...). [static] */
struct wh_route {
	const char *path;
	enum wh_mode mode;
};

/* Every path, terminated by an entry whose path is NULL [static]. */
extern const struct wh_route wh_routes[];

/* Mode of a served path [borrowed]: CU_OK, or CU_ENOTFOUND. */
CU_MUST_CHECK int wh_mode_for_path(const char *path, enum wh_mode *out);

/*
 * Decode an AdmissionReview v1 body (body [borrowed], len bytes, need not
 * be NUL-terminated). *out is initialised here and left empty on failure.
 * Errors name the field: CU_ETOOBIG when len > WH_MAX_BODY ("request
 * body: Too long: ..."), CU_EPARSE for bytes that are not JSON or a wrong
 * JSON type ("request: Invalid type: expected object, got string"),
 * CU_EINVAL for a missing or wrong value ("request.uid: Required value",
 * "apiVersion: Unsupported value: ..."; CREATE/UPDATE need request.object,
 * UPDATE also request.oldObject), CU_ENOMEM.
 */
CU_MUST_CHECK int wh_request_decode(
    struct wh_request *out, const void *body, size_t len, cu_error *err);

/* Free what r owns and zero it; NULL and zeroed are no-ops. */
void wh_request_dispose(struct wh_request *r);

/*
 * Decide on req [borrowed] under opt [borrowed]; *out is initialised here
 * [owned by the caller: wh_response_dispose]. Returns CU_OK for every
 * decision (allowed, or denied with 400/403). A callback failure or
 * CU_ENOMEM is returned as such and *out is then a denial with code 500
 * naming it. CU_EINVAL for NULL opt/req/out (out untouched if NULL).
 */
CU_MUST_CHECK int wh_handle(const struct wh_options *opt, enum wh_mode mode,
    const struct wh_request *req, struct wh_response *out, cu_error *err);

void wh_response_dispose(struct wh_response *r);

/*
 * Encode the AdmissionReview v1 response body: apiVersion/kind echoed,
 * response.uid = uid [borrowed; NULL reads as ""], allowed, status{code,
 * reason, message} when denied, warnings when any, and patchType
 * "JSONPatch" + base64 patch only when allowed with a non-empty patch.
 * *out [owned: cu_free] NUL-terminated, *out_len its length (out_len may
 * be NULL). CU_EINVAL for a denial with code < 400 or a patch that is not
 * an array; CU_ENOMEM.
 */
CU_MUST_CHECK int wh_response_encode(const char *uid,
    const struct wh_response *resp, char **out, size_t *out_len, cu_error *err);

/* HTTP status for a decode result: 200 (CU_OK), 413 (CU_ETOOBIG), 500
 * (CU_ENOMEM), 400 (any other error). */
int wh_http_status(int rc);

/*
 * The whole call for the HTTP layer: decode body, handle, encode. Always
 * produces an AdmissionReview body (*out [owned: cu_free], *out_len may
 * be NULL) and the HTTP status to send it with: 200 for a decision
 * (including code-500 errored reviews), 400/413 for a body that cannot be
 * decoded (the review then carries the same code, the message and the
 * request uid when it could be read, else ""). err receives the reason of
 * every 400/413/500 answer, for the log. Returns CU_OK, or CU_ENOMEM when
 * not even that body could be built (then *out is NULL: answer 500).
 */
CU_MUST_CHECK int wh_serve(const struct wh_options *opt, enum wh_mode mode,
    const void *body, size_t len, int *http_status, char **out, size_t *out_len,
    cu_error *err);

/* ---- kueue.x-k8s.io/admission-gated-by (webhook/gatedby.c) ---------- */

#define WH_ADMISSION_GATED_BY "kueue.x-k8s.io/admission-gated-by"

/* The annotation's value on obj [borrowed] or NULL when absent. */
const char *wh_gated_by_value(const json_t *obj);

/*
 * Kueue's validation of the annotation (AdmissionGatedBy) on a job's
 * CREATE (old_obj NULL) or UPDATE (old_obj [borrowed] the stored job):
 * the value's format (comma-separated domain-prefixed paths of at most
 * 63 bytes, none empty, none repeated), no gate added after creation,
 * only removals on update. CU_OK, CU_EDENIED with every failure in
 * err as apimachinery aggregates them, CU_ENOMEM.
 */
CU_MUST_CHECK int wh_admission_gated_by(
    const json_t *old_obj, const json_t *obj, cu_error *err);

/*
 * Kueue's partial-admission rules of a batch/v1 Job (webhook/partial.c)
 * on CREATE (old_obj NULL) or UPDATE: kueue.x-k8s.io/job-min-parallelism,
 * when set (on update: when changed), is an integer between 1 and the
 * job's pod count - 1 and is not combined with an elastic job
 * (elastic_gate: ElasticJobsViaWorkloadSlices on); an unsuspended job
 * with it cannot change spec.parallelism. CU_OK or CU_EDENIED with
 * Kueue's messages aggregated.
 */
CU_MUST_CHECK int wh_job_partial_admission(
    const json_t *old_obj, const json_t *obj, bool elastic_gate, cu_error *err);

/* ---- Conversion (webhook/convert.c) ---------------------------------
 *
 * The CRD conversion webhook of the Kueue kinds cueue serves
 * (ClusterQueue, LocalQueue, Workload, Cohort, ResourceFlavor,
 * WorkloadPriorityClass, Topology, AdmissionCheck,
 * ProvisioningRequestConfig, MultiKueueCluster, MultiKueueConfig) between
 * kueue.x-k8s.io/v1beta1 and v1beta2,
 * with the semantics of Kueue's apis/kueue/v1beta1 conversion functions:
 *
 *   ClusterQueue  spec.cohort <-> spec.cohortName; v1beta1
 *                 spec.admissionChecks [names] -> v1beta2
 *                 spec.admissionChecksStrategy.admissionChecks [{name}]
 *                 (replacing any strategy; one way, as Kueue's: it reads
 *                 back as admissionChecksStrategy); flavorFungibility
 *                 whenCanPreempt Preempt and whenCanBorrow Borrow ->
 *                 MayStopSearch (one way); v1beta1-only
 *                 status.pendingWorkloadsStatus dropped;
 *   LocalQueue    status.flavorUsage <-> status.flavorsUsage; v1beta1-only
 *                 status.flavors dropped;
 *   Workload      spec.priorityClassSource + priorityClassName <->
 *                 spec.priorityClassRef {group, kind, name} for the two
 *                 sources Kueue knows (others dropped, as Kueue's);
 *                 status.accumulatedPastExexcutionTimeSeconds (sic) <->
 *                 status.accumulatedPastExecutionTimeSeconds;
 *                 status.admission.podSetAssignments[].topologyAssignment
 *                 {levels, domains[{values, count}]} <-> {levels,
 *                 slices}: up, one maximally compacted slice (common
 *                 prefix/suffix, universal values and counts), Kueue's
 *                 default encoding; down, every domain of every slice in
 *                 order; v1beta2-only status.preemptionGates dropped;
 *   AdmissionCheck  v1beta1's deprecated spec.retryDelayMinutes dropped
 *                 going up (no v1beta2 field, no annotation, as Kueue's);
 *   MultiKueueCluster  spec.kubeConfig (when it has a location) and
 *                 spec.clusterProfileRef <-> spec.clusterSource.{kubeConfig,
 *                 clusterProfileRef};
 *   all kinds     the fairSharing status' admissionFairSharingStatus of
 *                 ClusterQueues and Cohorts dropped going up (v1beta2 has
 *                 none there); everything else, metadata included, as is.
 *
 * v1beta2-only spec fields that v1beta1 has no home for
 * (ClusterQueue spec.concurrentAdmissionPolicy, Workload
 * spec.preemptionGates and podSets[].topologyRequest.
 * podsetSliceRequiredTopologyConstraints) are kept, going down, as JSON in
 * the annotation WH_CONVERT_ANNOTATION and restored from it going up
 * (unless the object has them), so that a v1beta1 client's
 * read-modify-write does not lose them; Kueue's own conversion drops
 * them.
 */
#define WH_KUEUE_GROUP "kueue.x-k8s.io"
#define WH_CONVERT_PATH "/convert"
#define WH_CONVERT_API_VERSION "apiextensions.k8s.io/v1"
#define WH_CONVERT_KIND "ConversionReview"
#define WH_CONVERT_ANNOTATION "cueue.x-k8s.io/v1beta2-fields"

/*
 * Convert one object in [borrowed] to `desired` ("kueue.x-k8s.io/v1beta1"
 * or ".../v1beta2") [borrowed]; the same version is a copy. *out [owned:
 * json_decref], NULL on failure. Errors name the field: CU_EPARSE for a
 * wrong JSON type ("spec.cohort: Invalid type: expected string, got
 * integer"), CU_EINVAL for a missing or unsupported apiVersion/kind or
 * a bad value ("apiVersion: Unsupported value: ..."), CU_ENOMEM.
 */
CU_MUST_CHECK int wh_convert_object(
    const json_t *in, const char *desired, json_t **out, cu_error *err);

/*
 * The whole /convert call: a ConversionReview v1 body [borrowed; len
 * bytes] in, a ConversionReview body out (*out [owned: cu_free],
 * *out_len may be NULL) with response.uid echoed and result.status
 * "Success" and every object converted in order, or "Failure" with the
 * field-naming message (no object converted). *http_status: 200 for a
 * review that was read (converted or not), 400 for one that could not be
 * (not JSON, wrong apiVersion/kind, no request, uid or
 * desiredAPIVersion), 413 past WH_MAX_BODY. err receives the reason of
 * every failure, for the log. Returns CU_OK, or CU_ENOMEM when no body
 * could be built (*out NULL: answer 500).
 */
CU_MUST_CHECK int wh_convert_serve(const void *body, size_t len,
    int *http_status, char **out, size_t *out_len, cu_error *err);

/* "CREATE", "UPDATE", "DELETE", "CONNECT", "" [static]. */
const char *wh_op_name(enum wh_op op);

#endif /* CU_WEBHOOK_WEBHOOK_H */
