/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/fwcrds.c - the CustomResourceDefinitions the framework
 * stand-ins install (docs/apiserver.md §15): our own minimal schemas,
 * written from the upstream APIs' documented fields. Every CRD has one
 * shape: spec and status keep every field
 * (x-kubernetes-preserve-unknown-fields); declared are only the spec
 * fields whose OpenAPI defaults change what Kueue reads (suspend, replica
 * counts, RayJob's submission mode, a TrainJob's runtime kind), the status
 * and scale subresources and kubectl's columns.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "api/yaml.h"
#include "tests/apiserver/apiserver.h"

struct crd {
	unsigned sim;				     /* the family */
	const char *group, *version, *kind, *plural; /* [static] */
	const char *shorts;  /* YAML flow list, or NULL */
	bool cluster;	     /* cluster-scoped */
	bool no_status;	     /* no status subresource */
	const char *scale;   /* YAML flow map of subresources.scale, or NULL */
	const char *props;   /* YAML flow map: spec properties, or NULL */
	const char *columns; /* YAML flow list of printer columns, or NULL */
};

#define OBJ "type: object, x-kubernetes-preserve-unknown-fields: true"
#define RUN_POLICY                                                             \
	"{runPolicy: {" OBJ ", properties: {suspend: {type: boolean, "         \
	"default: false}, managedBy: {type: string}}}}"
#define WORKER_GROUPS                                                          \
	"workerGroupSpecs: {type: array, items: {" OBJ ", properties: "        \
	"{replicas: {type: integer, format: int32, default: 0}, "              \
	"numOfHosts: {type: integer, format: int32, default: 1}}}}"
#define AGE "{name: Age, type: date, jsonPath: .metadata.creationTimestamp}"

static const struct crd crds[] = {
    {AS_SIM_LWS, "leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet",
	"leaderworkersets", "[lws]", false, false,
	"{specReplicasPath: .spec.replicas, statusReplicasPath: "
	".status.replicas, labelSelectorPath: .status.hpaPodSelector}",
	"{replicas: {type: integer, format: int32, default: 1}, "
	"leaderWorkerTemplate: {" OBJ ", properties: {size: {type: integer, "
	"format: int32, default: 1}}}}",
	"[{name: Replicas, type: integer, jsonPath: .spec.replicas}, "
	"{name: Ready, type: integer, jsonPath: .status.readyReplicas}, " AGE
	"]"},
    {AS_SIM_KUBEFLOW, "kubeflow.org", "v1", "PyTorchJob", "pytorchjobs", NULL,
	false, false, NULL, RUN_POLICY, NULL},
    {AS_SIM_KUBEFLOW, "kubeflow.org", "v1", "TFJob", "tfjobs", NULL, false,
	false, NULL, RUN_POLICY, NULL},
    {AS_SIM_KUBEFLOW, "kubeflow.org", "v1", "XGBoostJob", "xgboostjobs", NULL,
	false, false, NULL, RUN_POLICY, NULL},
    {AS_SIM_KUBEFLOW, "kubeflow.org", "v1", "PaddleJob", "paddlejobs", NULL,
	false, false, NULL, RUN_POLICY, NULL},
    {AS_SIM_KUBEFLOW, "kubeflow.org", "v1", "JAXJob", "jaxjobs", NULL, false,
	false, NULL, RUN_POLICY, NULL},
    {AS_SIM_MPIJOBS, "kubeflow.org", "v2beta1", "MPIJob", "mpijobs", NULL,
	false, false, NULL,
	"{slotsPerWorker: {type: integer, format: int32, default: 1}, "
	"runPolicy: {" OBJ ", properties: {suspend: {type: boolean, default: "
	"false}, managedBy: {type: string}}}}",
	NULL},
    {AS_SIM_TRAINJOBS, "trainer.kubeflow.org", "v1alpha1", "TrainJob",
	"trainjobs", NULL, false, false, NULL,
	"{suspend: {type: boolean, default: false}, managedBy: {type: string}, "
	"runtimeRef: {" OBJ ", properties: {name: {type: string}, apiGroup: "
	"{type: string, default: trainer.kubeflow.org}, kind: {type: string, "
	"default: ClusterTrainingRuntime}}}}",
	NULL},
    {AS_SIM_TRAINJOBS, "trainer.kubeflow.org", "v1alpha1", "TrainingRuntime",
	"trainingruntimes", NULL, false, true, NULL, NULL, NULL},
    {AS_SIM_TRAINJOBS, "trainer.kubeflow.org", "v1alpha1",
	"ClusterTrainingRuntime", "clustertrainingruntimes", NULL, true, true,
	NULL, NULL, NULL},
    {AS_SIM_RAY, "ray.io", "v1", "RayCluster", "rayclusters", NULL, false,
	false, NULL,
	"{suspend: {type: boolean}, managedBy: {type: string}, " WORKER_GROUPS
	"}",
	"[{name: Desired workers, type: integer, jsonPath: "
	".status.desiredWorkerReplicas}, {name: Available workers, type: "
	"integer, jsonPath: .status.availableWorkerReplicas}, {name: Status, "
	"type: string, jsonPath: .status.state}, " AGE "]"},
    {AS_SIM_RAY, "ray.io", "v1", "RayJob", "rayjobs", NULL, false, false, NULL,
	"{suspend: {type: boolean, default: false}, managedBy: {type: string}, "
	"submissionMode: {type: string, default: K8sJobMode}, "
	"shutdownAfterJobFinishes: {type: boolean}, rayClusterSpec: {" OBJ
	", properties: {" WORKER_GROUPS "}}}",
	"[{name: Job status, type: string, jsonPath: .status.jobStatus}, "
	"{name: Deployment status, type: string, jsonPath: "
	".status.jobDeploymentStatus}, {name: Ray cluster name, type: string, "
	"jsonPath: .status.rayClusterName}, " AGE "]"},
    {AS_SIM_RAY, "ray.io", "v1", "RayService", "rayservices", NULL, false,
	false, NULL,
	"{managedBy: {type: string}, rayClusterConfig: {" OBJ
	", properties: {suspend: {type: boolean}, " WORKER_GROUPS "}}}",
	"[{name: Service status, type: string, jsonPath: "
	".status.serviceStatus}, " AGE "]"},
    {AS_SIM_APPWRAPPERS, "workload.codeflare.dev", "v1beta2", "AppWrapper",
	"appwrappers", "[aw]", false, false, NULL,
	"{suspend: {type: boolean}, managedBy: {type: string}, components: "
	"{type: array, items: {" OBJ ", properties: {template: {" OBJ
	", x-kubernetes-embedded-resource: true}}}}}",
	"[{name: Status, type: string, jsonPath: .status.phase}, {name: Quota "
	"reserved, type: string, jsonPath: "
	"\".status.conditions[?(@.type=='QuotaReserved')].status\"}, {name: "
	"Resources deployed, type: string, jsonPath: "
	"\".status.conditions[?(@.type=='ResourcesDeployed')].status\"}, " AGE
	"]"},
    {AS_SIM_SPARK, "sparkoperator.k8s.io", "v1beta2", "SparkApplication",
	"sparkapplications", "[sparkapp]", false, false, NULL,
	"{suspend: {type: boolean}}",
	"[{name: Status, type: string, jsonPath: "
	".status.applicationState.state}, {name: Attempts, type: string, "
	"jsonPath: .status.submissionAttempts}, " AGE "]"},
};

/* The YAML document of c [owned: cu_free]. */
static char *crd_yaml(const struct crd *c)
{
	char singular[64], sub[512];
	size_t i;

	for (i = 0; c->kind[i] != '\0' && i + 1 < sizeof(singular); i++)
		singular[i] = (char)tolower((unsigned char)c->kind[i]);
	singular[i] = '\0';
	snprintf(sub, sizeof(sub), "{%s%s%s%s}",
	    c->no_status ? "" : "status: {}",
	    c->scale && !c->no_status ? ", " : "", c->scale ? "scale: " : "",
	    c->scale ? c->scale : "");
	return cu_asprintf(
	    "apiVersion: apiextensions.k8s.io/v1\n"
	    "kind: CustomResourceDefinition\n"
	    "metadata: {name: %s.%s}\n"
	    "spec:\n"
	    "  group: %s\n"
	    "  scope: %s\n"
	    "  names: {kind: %s, listKind: %sList, plural: %s, singular: %s, "
	    "shortNames: %s}\n"
	    "  versions:\n"
	    "  - name: %s\n"
	    "    served: true\n"
	    "    storage: true\n"
	    "    subresources: %s\n"
	    "    additionalPrinterColumns: %s\n"
	    "    schema:\n"
	    "      openAPIV3Schema:\n"
	    "        type: object\n"
	    "        properties:\n"
	    "          spec: {" OBJ ", properties: %s}\n"
	    "          status: {" OBJ "}\n",
	    c->plural, c->group, c->group,
	    c->cluster ? "Cluster" : "Namespaced", c->kind, c->kind, c->plural,
	    singular, c->shorts ? c->shorts : "[]", c->version, sub,
	    c->columns ? c->columns : "[" AGE "]", c->props ? c->props : "{}");
}

json_t *as_fw_crds(unsigned sim, cu_error *err)
{
	json_t *out = json_array();
	size_t i;

	for (i = 0; out != NULL && i < sizeof(crds) / sizeof(crds[0]); i++) {
		char *y;
		json_t *doc = NULL;
		int rc;

		if (!(crds[i].sim & sim))
			continue;
		y = crd_yaml(&crds[i]);
		rc = y ? api_yaml_load(&doc, NULL, y, strlen(y), NULL, err)
		       : cu_error_set(err, CU_ENOMEM, "no memory");
		cu_free(y);
		if (rc != CU_OK) {
			json_decref(out);
			return NULL;
		}
		json_array_append_new(out, doc);
	}
	return out;
}
