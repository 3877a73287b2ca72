/* SPDX-License-Identifier: Apache-2.0 */
/*
 * admission/reasons.c - the words the admission engine writes: Kueue's
 * condition reasons, the canonical printing of quantities used in pending
 * messages, and the status hash that keeps unchanged statuses from being
 * reported twice.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "admission/admission_int.h"

const char *adm_reason_string(enum adm_reason r)
{
	switch (r) {
	case ADM_REASON_NONE:
		return "";
	case ADM_REASON_WAITING_FOR_QUOTA:
		return "WaitingForQuota";
	case ADM_REASON_NO_MATCHING_FLAVOR:
		return "NoMatchingFlavor";
	case ADM_REASON_EXCEEDS_MAX_QUOTA:
		return "ExceedsMaxQuota";
	case ADM_REASON_MISCONFIGURED:
		return "Misconfigured";
	case ADM_REASON_SUSPENDED:
		return "Suspended";
	case ADM_REASON_WAITING_FOR_PREEMPTED_WORKLOADS:
		return "WaitingForPreemptedWorkloads";
	case ADM_REASON_TOPOLOGY_PLACEMENT_FAILED:
		return "TopologyPlacementFailed";
	}
	return "Unknown";
}

const char *adm_preempt_reason_string(enum adm_preempt_reason r)
{
	switch (r) {
	case ADM_IN_CLUSTER_QUEUE:
		return "InClusterQueue";
	case ADM_IN_COHORT_RECLAMATION:
		return "InCohortReclamation";
	case ADM_IN_COHORT_RECLAIM_WHILE_BORROWING:
		return "InCohortReclaimWhileBorrowing";
	case ADM_IN_COHORT_FAIR_SHARING:
		return "InCohortFairSharing";
	}
	return "Unknown";
}

/* [borrowed] adm_binary_resources_set's names */
static const char *const *binary_names;
static size_t n_binary_names;

void adm_binary_resources_set(const char *const *names, size_t n)
{
	binary_names = names;
	n_binary_names = names != NULL ? n : 0;
}

static bool binary_formatted(const char *res)
{
	size_t i;

	if (strcmp(res, "memory") == 0 ||
	    strcmp(res, "ephemeral-storage") == 0 ||
	    strncmp(res, "hugepages-", 10) == 0)
		return true;
	for (i = 0; i < n_binary_names; i++)
		if (strcmp(binary_names[i], res) == 0)
			return true;
	return false;
}

size_t adm_format_quantity(
    const char *resource, int64_t milli, char *buf, size_t n)
{
	static const char *const dec[] = {"", "k", "M", "G", "T", "P", "E"};
	static const char *const bin[] = {
	    "", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
	int64_t v;
	int e = 0, len;

	if (milli % 1000 != 0 || milli == 0) {
		len = milli == 0 ? snprintf(buf, n, "0")
				 : snprintf(buf, n, "%" PRId64 "m", milli);
		return len < 0 ? 0 : (size_t)len;
	}
	v = milli / 1000;
	/* Kueue prints a binary quantity, then parses the text back: one
	 * without a binary suffix (not a multiple of 1024) is decimal */
	if (binary_formatted(resource) && v % 1024 == 0) {
		while (e < 6 && v % 1024 == 0) {
			v /= 1024;
			e++;
		}
		len = snprintf(buf, n, "%" PRId64 "%s", v, bin[e]);
	} else {
		while (e < 6 && v % 1000 == 0) {
			v /= 1000;
			e++;
		}
		len = snprintf(buf, n, "%" PRId64 "%s", v, dec[e]);
	}
	return len < 0 ? 0 : (size_t)len;
}

size_t adm_cq_path(const struct que_cq *cq, char *buf, size_t n)
{
	const struct que_cohort *chain[64];
	const struct que_cohort *c;
	size_t depth = 0, len = 0, i;
	int k;

	for (c = cq->node.parent; c && depth < 64; c = c->node.parent)
		chain[depth++] = c;
	if (n > 0)
		buf[0] = '\0';
	for (i = depth + 1; i-- > 0;) {
		const char *name = i == 0 ? cq->name : chain[i - 1]->name;

		k = snprintf(len < n ? buf + len : NULL, len < n ? n - len : 0,
		    "/%s", name);
		if (k > 0)
			len += (size_t)k;
	}
	return len;
}

uint32_t adm_status_hash(enum adm_reason reason, const char *msg)
{
	uint32_t h = 2166136261u ^ (uint32_t)reason;
	const char *s;

	h *= 16777619u;
	for (s = msg ? msg : ""; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 16777619u;
	}
	return h ? h : 1;
}
