/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/gate_fuzz.c - fuzz the management gate (namespaces/gate.c)
 * with arbitrary configurations, namespaces and owner chains, and check
 * its invariants: nothing outside the namespace gate is ever managed,
 * kube-system and cueue's namespace never are, a child of a Job/JobSet is
 * never managed on its own, and the explanation is one non-empty line.
 *
 * Input layout (lines separated by '\n'):
 *   line 1: flags, one character each: 'm' manageJobsWithoutQueueName,
 *           'j' batch/job enabled, 's' jobset enabled, 'f' namespace
 *           found, 'n' no selector (nil), 'l' pass a NULL lookup
 *   line 2: managedJobsNamespaceSelector in string form
 *   line 3: namespace name
 *   line 4: namespace labels "k=v,k=v"
 *   rest:   a JSON object (the job), or an array whose first element is
 *           the job and the others the objects the owner lookup can find
 *           (by metadata.name)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "namespaces/gate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_LABELS 16

struct labels {
	char *k[MAX_LABELS], *v[MAX_LABELS];
	size_t n;
	const char *nsname;
};

static const char *labels_get(const char *key, void *payload)
{
	const struct labels *l = payload;
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->k[i], key) == 0)
			return l->v[i];
	return NULL;
}

/* Same lookup the gate does, for the invariant check. */
static const char *labels_get_ns(const char *key, void *payload)
{
	const struct labels *l = payload;
	const char *v = labels_get(key, payload);
	if (v == NULL && strcmp(key, NS_GATE_LABEL_NS_NAME) == 0)
		v = l->nsname;
	return v;
}

static int world_lookup(const struct ns_gate_owner *ref, const char *nsname,
    struct ns_gate_object *out, void *payload, cu_error *err)
{
	const json_t *arr = payload;
	size_t i;
	const json_t *o;

	(void)nsname;
	if (!json_is_array(arr))
		return CU_ENOTFOUND;
	json_array_foreach(arr, i, o)
	{
		struct ns_gate_object cand;
		if (i == 0)
			continue;
		if (ns_gate_object_from_json(&cand, o, err) != CU_OK)
			continue;
		if (cand.name != NULL && ref->name != NULL &&
		    strcmp(cand.name, ref->name) == 0) {
			*out = cand;
			return CU_OK;
		}
	}
	return CU_ENOTFOUND;
}

/* Next line of [*p, end) as a new string [owned: cu_free]. */
static char *next_line(const char **p, const char *end)
{
	const char *s = *p, *nl = memchr(s, '\n', (size_t)(end - s));
	const char *e = nl != NULL ? nl : end;
	char *line = cu_strndup(s, (size_t)(e - s));
	*p = nl != NULL ? nl + 1 : end;
	return line;
}

static void split_labels(char *s, struct labels *l)
{
	char *save = s;
	while (save != NULL && *save != '\0' && l->n < MAX_LABELS) {
		char *comma = strchr(save, ',');
		char *eq;
		if (comma != NULL)
			*comma = '\0';
		eq = strchr(save, '=');
		if (eq != NULL) {
			*eq = '\0';
			l->k[l->n] = save;
			l->v[l->n] = eq + 1;
			l->n++;
		}
		save = comma != NULL ? comma + 1 : NULL;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;
	char *flags = NULL, *selstr = NULL, *nsname = NULL, *lab = NULL;
	struct labels labels = {.n = 0};
	api_selector sel;
	bool have_sel = false;
	json_t *doc = NULL;
	const json_t *job;
	struct ns_gate_config cfg;
	struct ns_gate_object obj;
	struct ns_gate_namespace ns;
	struct ns_gate_decision d;
	cu_error err;
	int rc;

	api_selector_init(&sel);
	flags = next_line(&p, end);
	selstr = next_line(&p, end);
	nsname = next_line(&p, end);
	lab = next_line(&p, end);
	if (flags == NULL || selstr == NULL || nsname == NULL || lab == NULL)
		goto out;
	split_labels(lab, &labels);
	labels.nsname = nsname;

	memset(&cfg, 0, sizeof(cfg));
	cfg.manage_jobs_without_queue_name = strchr(flags, 'm') != NULL;
	cfg.job_enabled = strchr(flags, 'j') != NULL;
	cfg.jobset_enabled = strchr(flags, 's') != NULL;
	cfg.own_namespace = "kueue-system";
	if (strchr(flags, 'n') == NULL &&
	    ns_selector_parse(&sel, selstr, &err) == CU_OK) {
		have_sel = true;
		cfg.ns_selector = &sel;
	}

	doc = json_loadb(p, (size_t)(end - p), JSON_DECODE_ANY, NULL);
	job = json_is_array(doc) ? json_array_get(doc, 0) : doc;
	if (ns_gate_object_from_json(&obj, job, &err) != CU_OK)
		goto out;

	ns.name = nsname;
	ns.found = strchr(flags, 'f') != NULL;
	ns.get = labels_get;
	ns.payload = &labels;

	rc = ns_gate_decide(&cfg, &obj, &ns,
	    strchr(flags, 'l') != NULL ? NULL : world_lookup, doc, &d, &err);
	if (rc != CU_OK && d.managed != NS_GATE_NO)
		abort();
	if (d.why[0] == '\0' || strchr(d.why, '\n') != NULL ||
	    memchr(d.why, '\0', sizeof(d.why)) == NULL)
		abort();
	if ((int)d.reason < 0 || d.reason >= NS_GATE_R_COUNT)
		abort();
	if (d.managed != NS_GATE_NO) {
		/* The namespace gate held, the framework is on. */
		if (!ns.found || strcmp(nsname, NS_GATE_KUBE_SYSTEM) == 0 ||
		    strcmp(nsname, "kueue-system") == 0)
			abort();
		if (have_sel &&
		    !ns_selector_matches(&sel, labels_get_ns, &labels))
			abort();
		if (obj.kind == NS_GATE_KIND_OTHER ||
		    (obj.kind == NS_GATE_KIND_JOB && !cfg.job_enabled) ||
		    (obj.kind == NS_GATE_KIND_JOBSET && !cfg.jobset_enabled))
			abort();
	}
	if (d.managed == NS_GATE_YES && obj.has_owner &&
	    ns_gate_kind_of(obj.owner.api_version, obj.owner.kind) !=
		NS_GATE_KIND_OTHER)
		abort();
	if (d.managed == NS_GATE_VIA_PARENT &&
	    (d.depth < 1 || d.depth > NS_GATE_CHAIN_LIMIT))
		abort();
	if (d.managed == NS_GATE_YES && d.reason == NS_GATE_R_QUEUE_NAME &&
	    (d.queue_name == NULL || d.queue_name[0] == '\0'))
		abort();
out:
	json_decref(doc);
	api_selector_dispose(&sel);
	cu_free(flags);
	cu_free(selstr);
	cu_free(nsname);
	cu_free(lab);
	return 0;
}
