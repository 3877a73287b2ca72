/* SPDX-License-Identifier: Apache-2.0 */
/*
 * namespaces/gate.h - the management gate: is this Job or JobSet cueue's?
 *
 * One decision function used by every path that could touch a job (the
 * reconcilers and the admission webhooks alike), so that the answer cannot
 * differ between them (docs/architecture.md lesson 1, seed 001 / Kueue #7649,
 * Kueue #13374). The checks run in causal order and the first that settles the
 * question is reported:
 *
 *   1. kind: batch/v1 Job, jobset.x-k8s.io JobSet and the other kinds of
 *      the framework descriptors (enum ns_gate_kind), and only when its
 *      framework is listed in integrations.frameworks;
 *   2. namespace: kube-system and cueue's own namespace never; a namespace
 *      missing from the cache never; else it must match
 *      managedJobsNamespaceSelector. This applies with and without a
 *      queue-name label (Kueue's ManagedJobsNamespaceSelectorAlwaysRespected,
 *      GA, and the #7703 fix);
 *   3. owner: a job whose controller ownerReference names a Job or JobSet
 *      is never managed on its own. It is VIA_PARENT when its outermost
 *      Job/JobSet ancestor is managed on its own (framework enabled, and a
 *      queue-name label or manageJobsWithoutQueueName), else not managed.
 *      cueue never suspends or resumes such a child; the parent's
 *      controller does. An owner of any other kind (Deployment, an
 *      operator's CRD, ...) ends the walk and the job counts as
 *      standalone, as in Kueue's FindAncestorJobManagedByKueue;
 *   4. a kueue.x-k8s.io/queue-name label: managed;
 *   5. manageJobsWithoutQueueName: managed, the caller resolves the default
 *      LocalQueue; otherwise not managed.
 *
 * Deliberate differences from Kueue (both make the gate narrower, never
 * wider): (a) Kueue treats a child whose Job/JobSet owner is not managed
 * as standalone (a queue-named Job under an unqueued JobSet gets its own
 * Workload); cueue leaves it alone, since suspending a JobSet's child
 * against the JobSet controller is exactly the flapping of seed 001.
 * (b) An owner that is missing from the cache or whose uid does not match
 * the ownerReference makes the job unmanaged (Kueue errors or treats the
 * job as standalone); the caller may retry when its cache catches up.
 *
 * Pure logic: no I/O, no allocation, no clock. Owners are found through a
 * caller-supplied lookup over its caches. Prefix: ns_gate_, NS_GATE_.
 */
#ifndef CU_NAMESPACES_GATE_H
#define CU_NAMESPACES_GATE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "api/model.h"
#include "lib/cu.h"
#include "namespaces/selector.h"

#define NS_GATE_LABEL_QUEUE_NAME "kueue.x-k8s.io/queue-name"
#define NS_GATE_LABEL_NS_NAME "kubernetes.io/metadata.name"
#define NS_GATE_KUBE_SYSTEM "kube-system"
/* Kueue's managedOwnersChainLimit: owner hops walked before giving up. */
#define NS_GATE_CHAIN_LIMIT 10
/* Size of ns_gate_decision.why, NUL included. */
#define NS_GATE_WHY_MAX 256

enum ns_gate_kind {
	NS_GATE_KIND_OTHER = 0, /* anything cueue does not manage */
	NS_GATE_KIND_JOB,	/* batch/<any version> Job */
	NS_GATE_KIND_JOBSET,	/* jobset.x-k8s.io/<any version> JobSet */
	/* The other frameworks cueue knows (docs/frameworks.md), one value
	 * each, in this order: kubeflow.org PyTorchJob, TFJob, XGBoostJob,
	 * PaddleJob, JAXJob, MPIJob; then the core v1 Pod. */
	NS_GATE_KIND_PYTORCHJOB,
	NS_GATE_KIND_TFJOB,
	NS_GATE_KIND_XGBOOSTJOB,
	NS_GATE_KIND_PADDLEJOB,
	NS_GATE_KIND_JAXJOB,
	NS_GATE_KIND_MPIJOB,
	/* ray.io RayJob, RayCluster (spec.suspend). */
	NS_GATE_KIND_RAYJOB,
	NS_GATE_KIND_RAYCLUSTER,
	/* workload.codeflare.dev AppWrapper (spec.suspend). */
	NS_GATE_KIND_APPWRAPPER,
	NS_GATE_KIND_POD, /* core v1 Pod (framework "pod") */
	/* ray.io RayService (spec.rayClusterConfig.suspend). */
	NS_GATE_KIND_RAYSERVICE,
	/* sparkoperator.k8s.io SparkApplication (spec.suspend). */
	NS_GATE_KIND_SPARKAPP,
	/* trainer.kubeflow.org TrainJob (spec.suspend). */
	NS_GATE_KIND_TRAINJOB,
	NS_GATE_KIND__COUNT
};

enum ns_gate_managed {
	NS_GATE_NO = 0,	    /* not cueue's: never write to it */
	NS_GATE_YES,	    /* cueue's: Workload, suspend until admitted */
	NS_GATE_VIA_PARENT, /* a child of a managed job: hands off */
};

/* Why, in check order. NS_GATE_R_LOOKUP_FAILED is set with an error
 * return only. */
#define NS_GATE_REASON_TABLE(X)                                                \
	X(NS_GATE_R_KIND_UNSUPPORTED, "KindUnsupported")                       \
	X(NS_GATE_R_FRAMEWORK_DISABLED, "FrameworkDisabled")                   \
	X(NS_GATE_R_SYSTEM_NAMESPACE, "SystemNamespace")                       \
	X(NS_GATE_R_NAMESPACE_NOT_FOUND, "NamespaceNotFound")                  \
	X(NS_GATE_R_NAMESPACE_NOT_SELECTED, "NamespaceNotSelected")            \
	X(NS_GATE_R_OWNER_NOT_FOUND, "OwnerNotFound")                          \
	X(NS_GATE_R_OWNER_UID_MISMATCH, "OwnerUIDMismatch")                    \
	X(NS_GATE_R_OWNER_CYCLE, "OwnerCycle")                                 \
	X(NS_GATE_R_OWNER_CHAIN_TOO_DEEP, "JobNestingTooDeep")                 \
	X(NS_GATE_R_LOOKUP_FAILED, "OwnerLookupFailed")                        \
	X(NS_GATE_R_OWNER_FRAMEWORK_DISABLED, "OwnerFrameworkDisabled")        \
	X(NS_GATE_R_OWNER_NOT_MANAGED, "OwnerNotManaged")                      \
	X(NS_GATE_R_VIA_PARENT, "ManagedViaParent")                            \
	X(NS_GATE_R_QUEUE_NAME, "QueueName")                                   \
	X(NS_GATE_R_WITHOUT_QUEUE_NAME, "ManageJobsWithoutQueueName")          \
	X(NS_GATE_R_NO_QUEUE_NAME, "NoQueueName")

enum ns_gate_reason {
#define NS_GATE_X_ENUM(name, str) name,
	NS_GATE_REASON_TABLE(NS_GATE_X_ENUM)
#undef NS_GATE_X_ENUM
	    NS_GATE_R_COUNT
};

/* A reference to an owner as in metadata.ownerReferences[]. All strings
 * [borrowed]; uid may be NULL or "". */
struct ns_gate_owner {
	const char *api_version;
	const char *kind;
	const char *name;
	const char *uid;
};

/*
 * What the gate needs to know about one object. Every string is
 * [borrowed] and must stay valid while ns_gate_decide runs; nothing is
 * copied. Fill it by hand, or with ns_gate_object_from_meta (decoded
 * api_job / api_jobset) or ns_gate_object_from_json (an AdmissionReview's
 * request.object).
 */
struct ns_gate_object {
	enum ns_gate_kind kind;
	const char *name;	/* for messages; NULL reads as "" */
	const char *uid;	/* NULL or "" on CREATE admission */
	const char *queue_name; /* the queue-name label; NULL or "" = none */
	bool has_owner;		/* a controller ownerReference exists */
	struct ns_gate_owner owner; /* that reference, when has_owner */
};

/*
 * The object's namespace as the caller's cache has it. name [borrowed]
 * (required). When !found the other fields are ignored. get/payload read
 * the namespace's labels (NULL get = no labels). The real API server
 * always labels a namespace kubernetes.io/metadata.name=<name>; the gate
 * assumes that label when get does not return it, so a selector on it
 * works on a cache or test double that lacks it.
 */
struct ns_gate_namespace {
	const char *name;
	bool found;
	ns_label_get get;
	void *payload;
};

/*
 * Configuration inputs (from struct ctl_config; the controller fills this
 * once). Pointers [borrowed].
 */
struct ns_gate_config {
	bool job_enabled;    /* "batch/job" in integrations.frameworks */
	bool jobset_enabled; /* "jobset.x-k8s.io/jobset" */
	/* The other kinds' frameworks, indexed by enum ns_gate_kind. */
	bool enabled[NS_GATE_KIND__COUNT];
	bool manage_jobs_without_queue_name;
	/* managedJobsNamespaceSelector, compiled; NULL = every namespace
	 * (Kueue's nil selector). A match_nothing selector matches none. */
	const api_selector *ns_selector;
	/* cueue's own namespace (config `namespace`), never managed; NULL or
	 * "" = none besides kube-system. */
	const char *own_namespace;
	/* integrations.externalFrameworks, "Kind.version.group" each: an
	 * object whose controller owner is of one of these kinds is managed
	 * via that owner (its own controller queues it). */
	const char *const *external;
	size_t n_external;
};

/*
 * Owner lookup over the caller's caches: find the object that ref
 * [borrowed] names in namespace_ [borrowed] and describe it in *out
 * (strings [borrowed], valid until ns_gate_decide returns). Return CU_OK,
 * CU_ENOTFOUND when it does not exist, or another error (then set err).
 * Only called for owners of kind Job or JobSet.
 */
typedef int (*ns_gate_lookup)(const struct ns_gate_owner *ref,
    const char *namespace_, struct ns_gate_object *out, void *payload,
    cu_error *err);

struct ns_gate_decision {
	enum ns_gate_managed managed;
	enum ns_gate_reason reason;
	/* For NS_GATE_YES by label: obj->queue_name [borrowed]; else NULL
	 * (manageJobsWithoutQueueName: the caller resolves the default). */
	const char *queue_name;
	/* For NS_GATE_VIA_PARENT: the managing (outermost) ancestor's kind
	 * and its distance in owner hops (1 = the direct owner). */
	enum ns_gate_kind top_kind;
	int depth;
	/* One line, e.g. "namespace test does not match
	 * managedJobsNamespaceSelector". Formatted into this buffer. */
	char why[NS_GATE_WHY_MAX];
};

/*
 * Decide. cfg, obj, ns [borrowed]; lookup may be NULL (then every owner
 * of kind Job/JobSet reads as not found); payload is passed to it.
 * *out is always filled. Returns CU_OK, or the lookup's error (then
 * *out says NS_GATE_NO with NS_GATE_R_LOOKUP_FAILED: not ours for now,
 * retry later), or CU_EINVAL for NULL cfg/obj/ns/out.
 */
CU_MUST_CHECK int ns_gate_decide(const struct ns_gate_config *cfg,
    const struct ns_gate_object *obj, const struct ns_gate_namespace *ns,
    ns_gate_lookup lookup, void *payload, struct ns_gate_decision *out,
    cu_error *err);

/* Kind of apiVersion + kind [borrowed; NULL reads as ""]: the group must
 * be "batch" / "jobset.x-k8s.io" (any version). */
enum ns_gate_kind ns_gate_kind_of(const char *api_version, const char *kind);

/* The API group and kind of k [static]; false (both "") for
 * NS_GATE_KIND_OTHER. *run_policy: the kind suspends through
 * spec.runPolicy.suspend (Kubeflow), not spec.suspend. Any out may be
 * NULL. */
bool ns_gate_kind_names(enum ns_gate_kind k, const char **group,
    const char **kind, bool *run_policy);

/* The object under spec holding k's suspend boolean [static]:
 * "runPolicy" (Kubeflow), "rayClusterConfig" (RayService), or NULL when
 * it is spec.suspend itself. */
const char *ns_gate_kind_suspend_under(enum ns_gate_kind k);

/*
 * Fill *out from decoded metadata m [borrowed; out borrows its strings,
 * so m must outlive out]. kind is what m belongs to (the caller knows:
 * api_job -> NS_GATE_KIND_JOB).
 */
void ns_gate_object_from_meta(struct ns_gate_object *out,
    enum ns_gate_kind kind, const struct api_meta *m);

/*
 * Fill *out from a Kubernetes object in JSON, e.g. an AdmissionReview's
 * request.object: apiVersion, kind, metadata.name, .uid,
 * .labels["kueue.x-k8s.io/queue-name"] and the ownerReferences entry with
 * controller: true. obj [borrowed; out borrows its strings]. Absent fields
 * are fine; a present field of the wrong JSON type is CU_EPARSE naming it
 * (then *out is zeroed).
 */
CU_MUST_CHECK int ns_gate_object_from_json(
    struct ns_gate_object *out, const json_t *obj, cu_error *err);

/* ns_label_get over a struct api_strmap: payload is a
 * `const struct api_strmap *` passed as void *. */
const char *ns_gate_strmap_get(const char *key, void *payload);

/* Fill *out from a cached namespace, or NULL (then !found with the given
 * name [borrowed]). ns [borrowed; out borrows its labels]. */
void ns_gate_namespace_from_api(struct ns_gate_namespace *out, const char *name,
    const struct api_namespace *ns);

/* Static names: "NamespaceNotSelected", "YES"/"NO"/"VIA_PARENT". */
const char *ns_gate_reason_name(enum ns_gate_reason r);
const char *ns_gate_managed_name(enum ns_gate_managed m);

#endif /* CU_NAMESPACES_GATE_H */
