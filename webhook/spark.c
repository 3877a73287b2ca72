/* SPDX-License-Identifier: Apache-2.0 */
/*
 * webhook/spark.c - what the SparkApplication webhook checks beyond the
 * generic job steps of webhook/jobs.c, as Kueue's sparkapplication
 * integration does (docs/frameworks.md section 2): an application cueue
 * queues runs in cluster mode (spec.mode "cluster": the driver runs as a
 * pod of the application, so that its pods are the ones quota was
 * reserved for) and without dynamic allocation (a queued application has
 * a fixed executor count: Kueue allows spec.dynamicAllocation only for
 * elastic jobs, which it does not offer for SparkApplication: the
 * elastic-job annotation is refused too, with ElasticJobsViaWorkloadSlices
 * on). The
 * driver and executor pods are never gated nor labelled by a webhook
 * (Kueue's neither): they are the children of a managed parent, which
 * the management gate leaves to their parent (namespaces/gate.h
 * step 3).
 */
#include <string.h>

#include "webhook/webhook_int.h"
#include "api/json.h"

int wh__spark_validate(const json_t *obj, bool elastic_gate, cu_error *err)
{
	const json_t *spec = json_object_get(obj, "spec");
	const json_t *mode = json_object_get(spec, "mode");
	const json_t *dyn = json_object_get(
	    json_object_get(spec, "dynamicAllocation"), "enabled");
	char q[WH_QUOTE_MAX];

	if (!json_is_string(mode) ||
	    strcmp(json_string_value(mode), "cluster") != 0)
		return cu_error_set(err, CU_EDENIED,
		    "spec.mode: Invalid value: %s: cueue queues a "
		    "SparkApplication in cluster mode only",
		    wh__quote(q,
			json_is_string(mode) ? json_string_value(mode) : ""));
	if (elastic_gate && wh__elastic_job(obj))
		return cu_error_set(err, CU_EDENIED,
		    "metadata.annotations[" WH_ELASTIC_JOB "]: Forbidden: "
		    "a SparkApplication cannot be an elastic job");
	if (json_is_true(dyn))
		return cu_error_set(err, CU_EDENIED,
		    "spec.dynamicAllocation.enabled: Invalid value: true: a "
		    "queued SparkApplication has a fixed executor count; "
		    "dynamic allocation is not supported");
	return CU_OK;
}
