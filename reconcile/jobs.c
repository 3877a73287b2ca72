/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconcile/jobs.c - the job side of the transformation layer: state
 * readers for Jobs and JobSets, and the merge patches that start an
 * admitted job (Kueue's RunWithPodSetsInfo + podset.Merge) and stop an
 * evicted one (Suspend + RestorePodSetsInfo, the batch Job's three-step
 * custom Stop). Contracts in reconcile/reconcile.h.
 */
#include <stdio.h>
#include <string.h>

#include "api/patch.h"
#include "reconcile/rec_int.h"

/* ---- small JSON helpers ---------------------------------------------- */

/* Absent, null, {} and [] are the same nil map or slice to Go. */
static bool empty(const json_t *v)
{
	return v == NULL || json_is_null(v) ||
	       (json_is_object(v) && json_object_size(v) == 0) ||
	       (json_is_array(v) && json_array_size(v) == 0);
}

/* The job as JSON twice: *from as read, *to a copy to edit [both owned:
 * json_decref, also after a failure; NULL when not made]. */
static int job_docs(
    const struct rec_job *j, json_t **from, json_t **to, cu_error *err)
{
	int rc;

	*from = *to = NULL;
	if (j->kind == REC_JOB_DOC) {
		*from = json_deep_copy(j->doc);
		rc = *from == NULL ? rec__nomem(err, "job") : CU_OK;
	} else if (j->kind == REC_JOB_JOBSET)
		rc = api_jobset_encode(from, j->jobset, err);
	else
		rc = api_job_encode(from, j->job, err);
	if (rc != CU_OK)
		return rc;
	*to = json_deep_copy(*from);
	return *to == NULL ? rec__nomem(err, "job") : CU_OK;
}

/* ---- 5. job state ------------------------------------------------------ */

bool rec_job_is_suspended(const struct rec_job *j)
{
	const char *stopping;

	if (j->kind == REC_JOB_DOC)
		return rec__doc_suspended(j->fw, j->doc);
	if (j->kind == REC_JOB_JOBSET)
		return j->jobset->spec.has_suspend && j->jobset->spec.suspend;
	if (!j->job->spec.has_suspend || !j->job->spec.suspend)
		return false;
	stopping =
	    api_strmap_get(&j->job->meta.annotations, REC_ANNOTATION_STOPPING);
	return stopping == NULL || strcmp(stopping, "true") != 0;
}

bool rec_job_is_active(const struct rec_job *j)
{
	size_t i;

	if (j->kind == REC_JOB_DOC)
		return rec__doc_active(j->fw, j->doc);
	if (j->kind == REC_JOB_BATCH)
		return j->job->status.has_active && j->job->status.active != 0;
	for (i = 0; i < j->jobset->status.n_replicated_jobs_status; i++)
		if (j->jobset->status.replicated_jobs_status[i].active > 0)
			return true;
	return false;
}

bool rec_job_finished(
    const struct rec_job *j, bool *success, const char **message)
{
	const struct api_condition *hit = NULL;
	bool ok = false;
	size_t i;

	if (j->kind == REC_JOB_DOC)
		return rec__doc_finished(j->fw, j->doc, success, message);
	if (j->kind == REC_JOB_BATCH) {
		const struct api_conditions *cs = &j->job->status.conditions;

		for (i = 0; i < cs->n && hit == NULL; i++) {
			const struct api_condition *c = &cs->items[i];

			if (c->status != API_COND_TRUE || c->type == NULL)
				continue;
			if (strcmp(c->type, "Complete") == 0) {
				hit = c;
				ok = true;
			} else if (strcmp(c->type, "Failed") == 0) {
				hit = c;
			}
		}
	} else {
		const struct api_conditions *cs = &j->jobset->status.conditions;
		const struct api_condition *c;

		c = api_conditions_find(cs, "Completed");
		if (c != NULL && c->status == API_COND_TRUE) {
			hit = c;
			ok = true;
		} else {
			c = api_conditions_find(cs, "Failed");
			if (c != NULL && c->status == API_COND_TRUE)
				hit = c;
		}
	}
	if (hit == NULL)
		return false;
	if (success != NULL)
		*success = ok;
	if (message != NULL)
		*message = hit->message ? hit->message : "";
	return true;
}

/* ---- pod templates in the job document: through the descriptor ------ */

static json_t *doc_template(
    json_t *doc, const struct rec_job *j, const char *name)
{
	return rec__fw_template(rec_job_fw(j), doc, name);
}

static size_t doc_n_podsets(json_t *doc, const struct rec_job *j)
{
	return rec__fw_n_podsets(rec_job_fw(j), doc);
}

/* ---- 4. start ---------------------------------------------------------- */

/* What Kueue injects into one pod template (podset.PodSetInfo). */
struct info {
	json_t *labels;	       /* object */
	json_t *node_selector; /* object */
	json_t *tolerations;   /* array */
	json_t *annotations;   /* object or NULL */
};

static void info_dispose(struct info *in)
{
	json_decref(in->labels);
	json_decref(in->node_selector);
	json_decref(in->tolerations);
	json_decref(in->annotations);
}

/* validation.IsDNS1123Label */
static bool is_dns1123_label(const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > 63)
		return false;
	for (i = 0; i < n; i++) {
		char c = s[i];
		bool an = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');

		if (an)
			continue;
		if (c != '-' || i == 0 || i == n - 1)
			return false;
	}
	return true;
}

static const struct api_resource_flavor *find_flavor(
    const struct api_resource_flavor *fl, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (fl[i].meta.name != NULL &&
		    strcmp(fl[i].meta.name, name) == 0)
			return &fl[i];
	return NULL;
}

/* A podSet placed by topology-aware scheduling: its pods name their
 * Workload (kueue.x-k8s.io/workload, for the ungater) and, when the
 * placement was implied (no topologyRequest), say unconstrained, as
 * Kueue's podset.FromAssignment; the gate is added by add_tas_gate. */
static int tas_info(const struct api_workload *wl,
    const struct api_podset_assignment *a, struct info *in, cu_error *err)
{
	const struct api_podset *ps = NULL;
	size_t i;

	if (a->topology_assignment == NULL)
		return CU_OK;
	for (i = 0; i < wl->spec.n_pod_sets; i++)
		if (strcmp(wl->spec.pod_sets[i].name ? wl->spec.pod_sets[i].name
						     : "main",
			a->name) == 0)
			ps = &wl->spec.pod_sets[i];
	if (in->annotations == NULL &&
	    (in->annotations = json_object()) == NULL)
		return rec__nomem(err, "pod set info");
	if (json_object_set_new(in->annotations, REC_ANNOTATION_TAS_WORKLOAD,
		json_string(wl->meta.name ? wl->meta.name : "")) != 0)
		return rec__nomem(err, "pod set info");
	if ((ps == NULL || !ps->has_topology_request ||
		(ps->topology_request.required == NULL &&
		    ps->topology_request.preferred == NULL &&
		    !ps->topology_request.has_unconstrained)) &&
	    json_object_set_new(in->annotations,
		"kueue.x-k8s.io/podset-unconstrained-topology",
		json_string("true")) != 0)
		return rec__nomem(err, "pod set info");
	return CU_OK;
}

/* The kueue.x-k8s.io/topology scheduling gate on tpl's pods [edited]
 * (once): they wait for the ungater to pin them to their domain. */
static int add_tas_gate(json_t *tpl, cu_error *err)
{
	json_t *spec = api_json_obj_child(tpl, "spec"), *gates, *g;
	size_t i;

	if (spec == NULL)
		return rec__nomem(err, "pod template");
	gates = json_object_get(spec, "schedulingGates");
	json_array_foreach(gates, i, g)
	{
		const char *n = api_json_str(g, "name");

		if (n != NULL && strcmp(n, REC_TAS_GATE) == 0)
			return CU_OK;
	}
	if (!json_is_array(gates)) {
		gates = json_array();
		if (gates == NULL ||
		    json_object_set_new(spec, "schedulingGates", gates) != 0)
			return rec__nomem(err, "pod template");
	}
	if (json_array_append_new(
		gates, json_pack("{s:s}", "name", REC_TAS_GATE)) != 0)
		return rec__nomem(err, "pod template");
	return CU_OK;
}

/* podset.FromAssignment + the labels getPodSetsInfoFromStatus adds. */
static int build_info(const struct api_workload *wl,
    const struct api_podset_assignment *a,
    const struct api_resource_flavor *flavors, size_t n_flavors,
    struct info *in, cu_error *err)
{
	const char *cq = wl->status.admission.cluster_queue;
	size_t i, k;
	int rc = CU_OK;

	in->labels = json_object();
	in->node_selector = json_object();
	in->tolerations = json_array();
	if (!in->labels || !in->node_selector || !in->tolerations)
		return rec__nomem(err, "pod set info");
	for (i = 0; i < a->flavors.n && rc == CU_OK; i++) {
		const char *fname = a->flavors.items[i].value;
		const struct api_resource_flavor *rf;
		json_t *doc = NULL, *spec, *v;
		const char *key;
		bool seen = false;

		for (k = 0; k < i && !seen; k++)
			seen = strcmp(a->flavors.items[k].value, fname) == 0;
		if (seen)
			continue;
		rf = find_flavor(flavors, n_flavors, fname);
		if (rf == NULL)
			return cu_error_set(err, CU_ENOTFOUND,
			    "status.admission.podSetAssignments[%s].flavors: "
			    "ResourceFlavor %s not found",
			    a->name, fname);
		rc = api_resource_flavor_encode(&doc, rf, err);
		if (rc != CU_OK)
			return rc;
		spec = json_object_get(doc, "spec");
		json_object_foreach(json_object_get(spec, "nodeLabels"), key, v)
		{
			if (json_object_set(in->node_selector, key, v) != 0)
				rc = rec__nomem(err, "pod set info");
		}
		v = json_object_get(spec, "tolerations");
		if (rc == CU_OK && json_is_array(v) &&
		    json_array_extend(in->tolerations, v) != 0)
			rc = rec__nomem(err, "pod set info");
		json_decref(doc);
	}
	if (rc != CU_OK)
		return rc;
	if (json_object_set_new(
		in->labels, REC_LABEL_PODSET, json_string(a->name)) != 0 ||
	    json_object_set_new(in->labels, REC_LABEL_LOCAL_QUEUE,
		json_string(wl->spec.queue_name ? wl->spec.queue_name : "")) !=
		0)
		return rec__nomem(err, "pod set info");
	if (cq != NULL && is_dns1123_label(cq) &&
	    json_object_set_new(
		in->labels, REC_LABEL_CLUSTER_QUEUE, json_string(cq)) != 0)
		return rec__nomem(err, "pod set info");
	return tas_info(wl, a, in, err);
}

/* utilmaps.HaveConflict(cur, add) then Copy: keys of add [borrowed] into
 * *parent[key], created when needed. */
static int merge_map(json_t *parent, const char *key, const json_t *add,
    const char *what, cu_error *err)
{
	json_t *cur = json_object_get(parent, key), *v, *have;
	const char *k;

	if (json_object_size(add) == 0)
		return CU_OK;
	json_object_foreach((json_t *)add, k, v)
	{
		have = json_is_object(cur) ? json_object_get(cur, k) : NULL;
		if (json_is_string(have) && !json_equal(have, v))
			return cu_error_set(err, CU_EINVAL,
			    "invalid admission check PodSetUpdate: conflict "
			    "for %s: conflict for key=%s, value1=%s, value2=%s",
			    what, k, json_string_value(have),
			    json_string_value(v));
	}
	cur = api_json_obj_child(parent, key);
	if (cur == NULL || json_object_update(cur, (json_t *)add) != 0)
		return rec__nomem(err, "pod template");
	return CU_OK;
}

static const char *tol_op(const json_t *t)
{
	const char *op = api_json_str(t, "operator");

	return op != NULL && *op != '\0' ? op : "Equal";
}

static bool str_eq(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

/* utiltolerations.Equal: MatchToleration with "" operator meaning Equal. */
static bool tol_equal(const json_t *a, const json_t *b)
{
	return str_eq(api_json_str(a, "key"), api_json_str(b, "key")) &&
	       str_eq(api_json_str(a, "effect"), api_json_str(b, "effect")) &&
	       strcmp(tol_op(a), tol_op(b)) == 0 &&
	       str_eq(api_json_str(a, "value"), api_json_str(b, "value"));
}

/* podset.Merge into a pod template [borrowed, edited]. */
static int merge_template(json_t *tpl, const struct info *in, cu_error *err)
{
	json_t *md = api_json_obj_child(tpl, "metadata"),
	       *spec = api_json_obj_child(tpl, "spec");
	json_t *tols, *t, *e;
	size_t i, k;
	int rc;

	if (md == NULL || spec == NULL)
		return rec__nomem(err, "pod template");
	rc = merge_map(md, "labels", in->labels, "labels", err);
	if (rc == CU_OK)
		rc = merge_map(
		    md, "annotations", in->annotations, "annotations", err);
	if (rc == CU_OK)
		rc = merge_map(spec, "nodeSelector", in->node_selector,
		    "nodeSelector", err);
	if (rc != CU_OK || json_array_size(in->tolerations) == 0)
		return rc;
	tols = json_object_get(spec, "tolerations");
	if (!json_is_array(tols)) {
		tols = json_array();
		if (tols == NULL ||
		    json_object_set_new(spec, "tolerations", tols) != 0)
			return rec__nomem(err, "pod template");
	}
	json_array_foreach(in->tolerations, i, t)
	{
		bool dup = false;

		json_array_foreach(tols, k, e) dup = dup || tol_equal(e, t);
		if (!dup && json_array_append(tols, t) != 0)
			return rec__nomem(err, "pod template");
	}
	return CU_OK;
}

/* strconv.ParseBool */
static bool parse_bool_true(const char *s)
{
	static const char *const yes[] = {
	    "1", "t", "T", "TRUE", "true", "True"};
	size_t i;

	for (i = 0; s != NULL && i < sizeof(yes) / sizeof(*yes); i++)
		if (strcmp(s, yes[i]) == 0)
			return true;
	return false;
}

static const struct api_podset *wl_podset(
    const struct api_workload *wl, const char *name, size_t idx)
{
	size_t i;

	for (i = 0; i < wl->spec.n_pod_sets; i++) {
		const char *n = wl->spec.pod_sets[i].name;

		if (strcmp(n ? n : "main", name) == 0)
			return &wl->spec.pod_sets[i];
	}
	return idx < wl->spec.n_pod_sets ? &wl->spec.pod_sets[idx] : NULL;
}

/* Partial admission of a batch Job: parallelism (and completions when
 * they are kept equal) become the admitted count. */
static int set_parallelism(
    const struct rec_job *j, json_t *doc, int32_t count, cu_error *err)
{
	json_t *spec = api_json_obj_child(doc, "spec");

	if (spec == NULL ||
	    json_object_set_new(spec, "parallelism", json_integer(count)) != 0)
		return rec__nomem(err, "job spec.parallelism");
	if (parse_bool_true(api_strmap_get(&j->job->meta.annotations,
		REC_ANNOTATION_COMPLETIONS_EQ_PARALLELISM)) &&
	    json_object_set_new(spec, "completions", json_integer(count)) != 0)
		return rec__nomem(err, "job spec.completions");
	return CU_OK;
}

/* podset.FromUpdate: the podSetUpdates for pod set `name` of the
 * Workload's admission checks (status.admissionChecks[].podSetUpdates,
 * read from wl->raw) merged into tpl [edited] after the flavors' info,
 * as getPodSetsInfoFromStatus merges them. */
static int merge_check_updates(
    const struct api_workload *wl, const char *name, json_t *tpl, cu_error *err)
{
	json_t *checks = json_object_get(
	    json_object_get(wl->raw, "status"), "admissionChecks");
	json_t *c, *u;
	size_t i, k;
	int rc = CU_OK;

	json_array_foreach(checks, i, c)
	{
		json_array_foreach(json_object_get(c, "podSetUpdates"), k, u)
		{
			struct info in;
			json_t *t = json_object_get(u, "tolerations");
			const char *n = api_json_str(u, "name");

			if (n == NULL || strcmp(n, name) != 0)
				continue;
			in.labels = json_incref(json_object_get(u, "labels"));
			in.annotations =
			    json_incref(json_object_get(u, "annotations"));
			in.node_selector =
			    json_incref(json_object_get(u, "nodeSelector"));
			in.tolerations =
			    json_is_array(t) ? json_incref(t) : json_array();
			rc = in.tolerations == NULL
				 ? rec__nomem(err, "pod set info")
				 : merge_template(tpl, &in, err);
			info_dispose(&in);
			if (rc != CU_OK)
				return rc;
		}
	}
	return rc;
}

static int start_edit(const struct rec_job *j, const struct api_workload *wl,
    const struct api_resource_flavor *flavors, size_t n_flavors, json_t *to,
    cu_error *err)
{
	size_t n = wl->status.admission.n_pod_set_assignments, i;
	size_t want = doc_n_podsets(to, j);
	int rc;

	if (n != want)
		return cu_error_set(err, CU_EINVAL,
		    "invalid podset infos: expecting %zu podset, got %zu", want,
		    n);
	for (i = 0; i < n; i++) {
		const struct api_podset_assignment *a =
		    &wl->status.admission.pod_set_assignments[i];
		const struct api_podset *ps = wl_podset(wl, a->name, i);
		const struct rec_fw_ops *ops = rec_job_fw(j)->ops;
		struct info in = {NULL, NULL, NULL, NULL};
		json_t *tpl, *aside = NULL;

		/* a kind that keeps the admission beside its templates gets
		 * it merged into an empty template first */
		if (ops != NULL && ops->set_info != NULL &&
		    (aside = json_object()) == NULL)
			return rec__nomem(err, "pod set info");
		tpl = aside ? aside : doc_template(to, j, a->name);
		if (!json_is_object(tpl) &&
		    rec__fw_template_optional(rec_job_fw(j), to, a->name))
			continue; /* merged into a throwaway copy, as Kueue */
		if (!json_is_object(tpl))
			return cu_error_set(err, CU_EINVAL,
			    "invalid podset infos: the job has no pod "
			    "template for pod set %s",
			    a->name);
		rc = build_info(wl, a, flavors, n_flavors, &in, err);
		if (rc == CU_OK)
			rc = merge_template(tpl, &in, err);
		if (rc == CU_OK)
			rc = merge_check_updates(wl, a->name, tpl, err);
		if (rc == CU_OK && a->topology_assignment != NULL)
			rc = add_tas_gate(tpl, err);
		if (rc == CU_OK && aside != NULL)
			rc = ops->set_info(
			    rec_job_fw(j), to, a->name, aside, err);
		json_decref(aside);
		info_dispose(&in);
		if (rc != CU_OK)
			return rc;
		if (j->kind == REC_JOB_BATCH && ps != NULL &&
		    ps->has_min_count) {
			int32_t count = a->has_count	? a->count
					: ps->has_count ? ps->count
							: 1;

			rc = set_parallelism(j, to, count, err);
			if (rc != CU_OK)
				return rc;
		}
	}
	return rec__fw_set_suspend(rec_job_fw(j), to, false, err);
}

int rec_job_start_patch(const struct rec_job *j, const struct api_workload *wl,
    const struct api_resource_flavor *flavors, size_t n_flavors, json_t **patch,
    cu_error *err)
{
	json_t *from = NULL, *to = NULL;
	int rc;

	*patch = NULL;
	if (!rec_job_is_suspended(j))
		return CU_OK;
	if (wl == NULL || !wl->status.has_admission ||
	    wl->status.admission.n_pod_set_assignments == 0)
		return cu_error_set(err, CU_EINVAL,
		    "workload status.admission: Required value");
	rc = job_docs(j, &from, &to, err);
	if (rc == CU_OK)
		rc = start_edit(j, wl, flavors, n_flavors, to, err);
	if (rc == CU_OK)
		rc = rec__strict_patch(from, to, patch, err);
	json_decref(from);
	json_decref(to);
	return rc;
}

/* ---- 4. stop ----------------------------------------------------------- */

/* parent[key] = copy of want when they differ (nil == empty); removed
 * when want is empty. */
static int restore_field(json_t *parent, const char *key, const json_t *want)
{
	json_t *cur = json_object_get(parent, key), *c;

	if (empty(cur) && empty(want))
		return 0;
	if (cur != NULL && want != NULL && json_equal(cur, want))
		return 0;
	if (empty(want))
		return json_object_del(parent, key);
	c = json_deep_copy(want);
	if (c == NULL)
		return -1;
	return json_object_set_new(parent, key, c);
}

/* podset.RestorePodSpec of template tpl [edited] from the saved template
 * `saved` [borrowed]; keep_job_labels: Job's RestorePodSetsInfo. */
static int restore_template(
    json_t *tpl, const json_t *saved, bool keep_job_labels, cu_error *err)
{
	/* An absent template metadata stays absent when nothing is restored
	 * into it: `{}` would be a write that changes nothing for Go. */
	bool had_md = json_is_object(json_object_get(tpl, "metadata"));
	json_t *md = api_json_obj_child(tpl, "metadata"),
	       *spec = api_json_obj_child(tpl, "spec");
	const json_t *smd = json_object_get(saved, "metadata");
	const json_t *sspec = json_object_get(saved, "spec");
	json_t *labels = NULL, *cur_labels, *v;
	static const char *const spec_fields[] = {
	    "nodeSelector", "tolerations", "schedulingGates", NULL};
	size_t i;
	int e = 0;

	if (md == NULL || spec == NULL)
		return rec__nomem(err, "pod template");
	cur_labels = json_object_get(md, "labels");
	labels = json_is_object(json_object_get(smd, "labels"))
		     ? json_deep_copy(json_object_get(smd, "labels"))
		     : json_object();
	if (labels == NULL)
		return rec__nomem(err, "pod template");
	for (i = 0; keep_job_labels && api_job_managed_labels[i]; i++) {
		v = json_is_object(cur_labels)
			? json_object_get(cur_labels, api_job_managed_labels[i])
			: NULL;
		if (v != NULL &&
		    json_object_set(labels, api_job_managed_labels[i], v) != 0)
			e = -1;
	}
	if (e == 0)
		e = restore_field(md, "labels", labels);
	json_decref(labels);
	if (e == 0)
		e = restore_field(
		    md, "annotations", json_object_get(smd, "annotations"));
	for (i = 0; e == 0 && spec_fields[i]; i++)
		e = restore_field(spec, spec_fields[i],
		    json_object_get(sspec, spec_fields[i]));
	if (e == 0 && !had_md && json_object_size(md) == 0)
		e = json_object_del(tpl, "metadata");
	if (e != 0)
		return rec__nomem(err, "pod template");
	return CU_OK;
}

static int restore_all(const struct rec_job *j, const struct api_workload *wl,
    json_t *to, cu_error *err)
{
	size_t i;
	int rc;

	if (wl == NULL || wl->spec.n_pod_sets == 0)
		return CU_OK;
	/* Kueue skips the restore when the pod set count does not match. */
	if (wl->spec.n_pod_sets != doc_n_podsets(to, j))
		return CU_OK;
	for (i = 0; i < wl->spec.n_pod_sets; i++) {
		const struct api_podset *ps = &wl->spec.pod_sets[i];
		const struct rec_fw_ops *ops = rec_job_fw(j)->ops;
		json_t *tpl = doc_template(to, j, ps->name ? ps->name : "main");

		if (ops != NULL && ops->restore_info != NULL) {
			if (ps->template == NULL || ps->name == NULL)
				continue;
			rc = ops->restore_info(
			    rec_job_fw(j), to, ps->name, ps->template, err);
			if (rc != CU_OK)
				return rc;
			continue;
		}
		if (!json_is_object(tpl) || ps->template == NULL)
			continue;
		rc = restore_template(
		    tpl, ps->template, j->kind == REC_JOB_BATCH, err);
		if (rc != CU_OK)
			return rc;
		if (j->kind == REC_JOB_BATCH && ps->has_min_count) {
			int32_t count = ps->has_count ? ps->count : 1;

			if (!j->job->spec.has_parallelism ||
			    j->job->spec.parallelism != count) {
				rc = set_parallelism(j, to, count, err);
				if (rc != CU_OK)
					return rc;
			}
		}
	}
	return CU_OK;
}

static int set_suspend(json_t *to, cu_error *err)
{
	json_t *spec = api_json_obj_child(to, "spec");

	if (spec == NULL ||
	    json_object_set_new(spec, "suspend", json_true()) != 0)
		return rec__nomem(err, "job spec.suspend");
	return CU_OK;
}

/* One step of Kueue's batch Job Stop on the encoded job: edits `to` and
 * says which step it is. */
static int job_stop_edit(const struct rec_job *j, const struct api_workload *wl,
    json_t *to, enum rec_stop_step *step, cu_error *err)
{
	json_t *md, *ann, *st;

	if (!j->job->spec.has_suspend || !j->job->spec.suspend) {
		*step = REC_STOP_SUSPEND;
		md = api_json_obj_child(to, "metadata");
		ann = md ? api_json_obj_child(md, "annotations") : NULL;
		if (ann == NULL ||
		    json_object_set_new(
			ann, REC_ANNOTATION_STOPPING, json_string("true")) != 0)
			return rec__nomem(err, "job metadata.annotations");
		return set_suspend(to, err);
	}
	st = json_object_get(to, "status");
	if (j->job->status.has_start_time ||
	    json_object_get(st, "startTime") != NULL) {
		*step = REC_STOP_RESET_START;
		json_object_del(st, "startTime");
		return CU_OK;
	}
	*step = REC_STOP_RESTORE;
	md = json_object_get(to, "metadata");
	ann = json_object_get(md, "annotations");
	if (json_is_object(ann)) {
		json_object_del(ann, REC_ANNOTATION_STOPPING);
		if (json_object_size(ann) == 0)
			json_object_del(md, "annotations");
	}
	return restore_all(j, wl, to, err);
}

int rec_job_stop_patch(const struct rec_job *j, const struct api_workload *wl,
    enum rec_stop_step *step, json_t **patch, cu_error *err)
{
	json_t *from = NULL, *to = NULL;
	int rc;

	*patch = NULL;
	*step = REC_STOP_DONE;
	if (j->kind != REC_JOB_BATCH && rec_job_is_suspended(j))
		return CU_OK;
	if (rec_job_fw(j)->shape == REC_FW_SHAPE_POD)
		return CU_OK; /* deleted, not patched (jobrec.c) */
	rc = job_docs(j, &from, &to, err);
	if (rc == CU_OK && j->kind != REC_JOB_BATCH) {
		/* Kueue's generic stop: Suspend + RestorePodSetsInfo. */
		*step = REC_STOP_SUSPEND;
		const struct rec_fw *fw = rec_job_fw(j);

		rc = rec__fw_set_suspend(fw, to, true, err);
		if (rc == CU_OK && fw->ops != NULL && fw->ops->clear_info)
			rc = fw->ops->clear_info(fw, to, err);
		else if (rc == CU_OK)
			rc = restore_all(j, wl, to, err);
	} else if (rc == CU_OK) {
		rc = job_stop_edit(j, wl, to, step, err);
	}
	if (rc == CU_OK)
		rc = rec__strict_patch(from, to, patch, err);
	if (rc != CU_OK || *patch == NULL)
		*step = REC_STOP_DONE;
	json_decref(from);
	json_decref(to);
	return rc;
}
