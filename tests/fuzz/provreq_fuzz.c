/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/provreq_fuzz.c - fuzz the ProvisioningRequest check's
 * decoders and decisions (reconcile/provreq.c) with one JSON document
 * read as a ProvisioningRequestConfig, as a Workload and as a
 * ProvisioningRequest at once: rec_prc_decode either succeeds with a class
 * and non-negative retry settings or fails with a message; the pod sets,
 * the new request, the check-state mapping and the attempt parser never
 * crash, leak or read out of bounds whatever the shape.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/wire.h"
#include "reconcile/reconcile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_error_t je;
	json_t *j = json_loadb((const char *)data, size, 0, &je);
	struct rec_prc prc, dflt;
	struct rec_provreq_podset *sets = NULL;
	json_t *pr = NULL, *pts = NULL;
	struct api_admission_check_state chk = {0};
	struct api_workload wl;
	struct api_provreq dpr;
	bool has_pr;
	size_t n = 0;
	int32_t attempt;
	bool needed = false;
	cu_error err;
	const char *name;

	if (j == NULL)
		return 0;
	memset(&dflt, 0, sizeof(dflt));
	dflt.class_name = "c";
	dflt.backoff_limit_count = 1;
	if (rec_prc_decode(j, &prc, &err) == CU_OK) {
		if (prc.class_name == NULL || prc.backoff_limit_count < 0 ||
		    prc.backoff_base_s < 0 || prc.backoff_max_s < 0)
			abort();
	} else {
		if (err.msg[0] == '\0')
			abort();
		prc = dflt;
	}
	if (api_workload_decode(&wl, j, NULL) == CU_OK) {
		if (rec_provreq_needed(&wl, &prc, &needed, &err) != CU_OK &&
		    err.msg[0] == '\0')
			abort();
		if (rec_provreq_podsets(&wl, &prc, &sets, &n, &err) == CU_OK)
			cu_free(sets);
		if (rec_provreq_new(&wl, "chk", &prc, 2, NULL, 0, &pr, &pts,
			&err) == CU_OK) {
			if (pr == NULL || !json_is_array(pts))
				abort();
			json_decref(pr);
			json_decref(pts);
		}
		has_pr = api_provreq_decode(&dpr, j, NULL) == CU_OK;
		chk.name = cu_strdup("chk");
		chk.state = API_CHECK_PENDING;
		if (chk.name != NULL) {
			(void)rec_provreq_sync_state(&chk, &wl, &prc, needed,
			    has_pr ? &dpr : NULL, 1767225600000000000LL);
			(void)rec_provreq_wants_new(
			    &chk, &wl, has_pr ? &dpr : NULL, &attempt);
		}
		api_admission_check_state_dispose(&chk);
		if (has_pr)
			api_provreq_dispose(&dpr);
		api_workload_dispose(&wl);
	}
	(void)rec_provreq_synced_with(j, &prc);
	name = json_string_value(
	    json_object_get(json_object_get(j, "metadata"), "name"));
	if (name != NULL && rec_provreq_attempt(name, "w", "chk") < -1)
		abort();
	json_decref(j);
	return 0;
}
