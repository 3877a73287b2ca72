/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/model_fuzz.c - fuzz target over every typed decoder of
 * api/model.h. The first input byte picks the kind, the rest is the JSON
 * document. Whatever decodes must re-encode, decode again and re-encode to
 * the same JSON (the codec is a fixed point after one pass), and Jobs and
 * JobSets must survive pod-set extraction. A violated property aborts.
 */
#include <stdint.h>
#include <stdlib.h>

#include "api/model.h"

#define FUZZ_KIND(K)                                                           \
	static void fuzz_##K(const json_t *j)                                  \
	{                                                                      \
		struct api_##K x, y;                                           \
		json_t *e1 = NULL, *e2 = NULL;                                 \
                                                                               \
		if (api_##K##_decode(&x, j, NULL) != CU_OK)                    \
			return;                                                \
		if (api_##K##_encode(&e1, &x, NULL) != CU_OK)                  \
			abort();                                               \
		if (api_##K##_decode(&y, e1, NULL) != CU_OK)                   \
			abort();                                               \
		if (api_##K##_encode(&e2, &y, NULL) != CU_OK)                  \
			abort();                                               \
		if (!json_equal(e1, e2))                                       \
			abort();                                               \
		fuzz_extra_##K(&x);                                            \
		api_##K##_dispose(&x);                                         \
		api_##K##_dispose(&y);                                         \
		json_decref(e1);                                               \
		json_decref(e2);                                               \
	}

#define NO_EXTRA(K)                                                            \
	static void fuzz_extra_##K(const struct api_##K *x)                    \
	{                                                                      \
		(void)x;                                                       \
	}

NO_EXTRA(cluster_queue)
NO_EXTRA(local_queue)
NO_EXTRA(resource_flavor)
NO_EXTRA(workload)
NO_EXTRA(workload_priority_class)
NO_EXTRA(cohort)
NO_EXTRA(namespace)
NO_EXTRA(priority_class)
NO_EXTRA(lease)
NO_EXTRA(event)
NO_EXTRA(admission_check)

static void fuzz_extra_job(const struct api_job *x)
{
	struct api_podsets ps;

	if (api_job_podsets(x, &ps, NULL) == CU_OK) {
		if (ps.n != 1)
			abort();
		api_podsets_dispose(&ps);
	}
}

static void fuzz_extra_jobset(const struct api_jobset *x)
{
	struct api_podsets ps;

	if (api_jobset_podsets(x, &ps, NULL) == CU_OK) {
		if (ps.n != x->spec.n_replicated_jobs)
			abort();
		api_podsets_dispose(&ps);
	}
}

FUZZ_KIND(cluster_queue)
FUZZ_KIND(local_queue)
FUZZ_KIND(resource_flavor)
FUZZ_KIND(workload)
FUZZ_KIND(workload_priority_class)
FUZZ_KIND(cohort)
FUZZ_KIND(job)
FUZZ_KIND(jobset)
FUZZ_KIND(namespace)
FUZZ_KIND(priority_class)
FUZZ_KIND(lease)
FUZZ_KIND(event)
FUZZ_KIND(admission_check)

static void (*const kinds[])(const json_t *) = {
    fuzz_cluster_queue,
    fuzz_local_queue,
    fuzz_resource_flavor,
    fuzz_workload,
    fuzz_workload_priority_class,
    fuzz_cohort,
    fuzz_job,
    fuzz_jobset,
    fuzz_namespace,
    fuzz_priority_class,
    fuzz_lease,
    fuzz_event,
    fuzz_admission_check,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *j;

	if (size < 1)
		return 0;
	j = json_loadb((const char *)data + 1, size - 1, 0, NULL);
	if (j == NULL)
		return 0;
	kinds[data[0] % (sizeof(kinds) / sizeof(kinds[0]))](j);
	json_decref(j);
	return 0;
}
