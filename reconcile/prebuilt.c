/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconcile/prebuilt.c - a job's ownership of its Workload, for any job
 * kind: the controller owner reference a Workload gets from its job (one
 * writer for the built Workload and for an adopted one), Kueue's
 * prebuilt Workload name (kueue.x-k8s.io/prebuilt-workload-name) and the
 * patch that adopts such a Workload (EnsurePrebuiltWorkloadOwnership).
 * Pure: no I/O. Contract in reconcile/reconcile.h.
 */
#include <stdio.h>
#include <string.h>

#include "api/wire.h"
#include "reconcile/rec_int.h"

bool rec__is_label_value(const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0)
		return true;
	if (n > 63)
		return false;
	for (i = 0; i < n; i++) {
		char c = s[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			     (c >= '0' && c <= '9');

		if (alnum)
			continue;
		if (i == 0 || i == n - 1)
			return false;
		if (c != '-' && c != '_' && c != '.')
			return false;
	}
	return true;
}

json_t *rec__owner_ref(const struct rec_job *j)
{
	const struct api_meta *m = rec_job_meta(j);
	const struct rec_fw *fw = rec_job_fw(j);
	char av[128];

	snprintf(av, sizeof(av), "%s%s%s", fw->group, *fw->group ? "/" : "",
	    fw->version);
	return json_pack("{s:s, s:s, s:s, s:s, s:b, s:b}", "apiVersion", av,
	    "kind", fw->kind, "name", m->name ? m->name : "", "uid",
	    m->uid ? m->uid : "", "controller", 1, "blockOwnerDeletion", 1);
}

const char *rec_prebuilt_workload_name(const struct api_meta *m)
{
	const char *a = api_strmap_get(&m->annotations, REC_PREBUILT_WORKLOAD);
	const char *l = api_strmap_get(&m->labels, REC_PREBUILT_WORKLOAD);

	if (a != NULL && *a != '\0')
		return a;
	return l != NULL && *l != '\0' ? l : NULL;
}

bool rec_wl_controlled_by(
    const struct api_workload *wl, const struct api_meta *m, bool *other)
{
	const struct api_owner_ref *o = api_meta_controller(&wl->meta);

	*other = false;
	if (o == NULL)
		return false;
	if (o->uid != NULL && m->uid != NULL && strcmp(o->uid, m->uid) == 0)
		return true;
	*other = true;
	return false;
}

int rec_wl_adopt_patch(const struct rec_job *j, const struct api_workload *wl,
    json_t **patch, cu_error *err)
{
	const struct api_meta *m = rec_job_meta(j);
	json_t *refs, *labels;
	size_t i;

	*patch = NULL;
	if (wl->meta.resource_version == NULL || m->uid == NULL)
		return CU_OK;
	refs = json_array();
	if (refs == NULL)
		return rec__nomem(err, "workload ownerReferences");
	/* SetControllerReference: the job's reference replaces one to the
	 * same object; the others stay. */
	for (i = 0; i < wl->meta.n_owner_refs; i++) {
		const struct api_owner_ref *r = &wl->meta.owner_refs[i];

		if ((r->uid == NULL || strcmp(r->uid, m->uid) != 0) &&
		    json_array_append_new(refs, api_owner_ref_encode(r)) != 0)
			goto nomem;
	}
	if (json_array_append_new(refs, rec__owner_ref(j)) != 0)
		goto nomem;
	labels = json_object();
	if (labels == NULL)
		goto nomem;
	if (rec__is_label_value(m->uid) &&
	    json_object_set_new(
		labels, REC_LABEL_JOB_UID, json_string(m->uid))) {
		json_decref(labels);
		goto nomem;
	}
	*patch = json_pack("{s:{s:s, s:o, s:o}}", "metadata", "resourceVersion",
	    wl->meta.resource_version, "ownerReferences", refs, "labels",
	    labels);
	return *patch == NULL ? rec__nomem(err, "workload adoption") : CU_OK;
nomem:
	json_decref(refs);
	return rec__nomem(err, "workload ownerReferences");
}
