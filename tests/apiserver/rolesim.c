/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/rolesim.c - the engine the batch-like framework
 * stand-ins share (Kubeflow jobs, MPIJob, RayCluster, SparkApplication):
 * one Pod per replica of each role, created from the role's template
 * through the front door (fwkit.c), deleted while the object is
 * suspended, and, for kinds that finish, a runtime that starts once every
 * Pod is Ready and restarts when one stops being Ready; when it has
 * elapsed every Pod is stopped (Succeeded, or Failed with
 * cueue.dev/sim-fail: "true"), long-lived roles such as parameter servers
 * included. Pods are named by the kind's own rule.
 */
#include <stdio.h>
#include <string.h>

#include "tests/apiserver/apiserver.h"

static json_t *deadlines; /* "ctl-kind/ns/name" -> ms */

static char *dl_key(const struct as_fw_podjob *d, json_t *obj)
{
	return cu_asprintf("%s/%s/%s", d->kind,
	    as_jstr(obj, "metadata.namespace"), as_jstr(obj, "metadata.name"));
}

void as_fw_forget(
    const struct as_fw_podjob *d, const char *ns, const char *name)
{
	char *k = cu_asprintf("%s/%s/%s", d->kind, ns, name);

	if (k != NULL && deadlines != NULL)
		json_object_del(deadlines, k);
	cu_free(k);
}

/* Which role and index does pod name n belong to? -1 if none. */
static int role_of(const struct as_fw_podjob *d, json_t *obj,
    const struct as_fw_role *roles, int nroles, const char *n, int *idx)
{
	char buf[512];
	int r, i;

	for (r = 0; r < nroles; r++)
		for (i = 0; i < roles[r].replicas && i < AS_FW_MAX_PODS; i++) {
			d->pod_name(obj, &roles[r], i, buf, sizeof(buf));
			if (strcmp(buf, n) == 0) {
				*idx = i;
				return r;
			}
		}
	return -1;
}

void as_fw_stop_all(
    struct as_server *srv, json_t *obj, bool ok, const char *user)
{
	struct as_kind *pk = as_kind_find(srv, "", "v1", "pods");
	json_t *pods = as_fw_owned(pk, obj), *p;
	size_t i;

	json_array_foreach(pods, i, p)
	{
		if (as_fw_pod_live(p))
			as_fw_stop_pod(srv, p, ok, user);
	}
	json_decref(pods);
}

void as_fw_delete_all(
    struct as_server *srv, struct as_kind *k, json_t *obj, const char *user)
{
	json_t *items = as_fw_owned(k, obj), *p;
	size_t i;

	json_array_foreach(items, i, p)
	{
		as_fw_delete(srv, k, p, user);
	}
	json_decref(items);
}

enum as_fw_run as_fw_run_pods(struct as_server *srv, const struct as_fw_ctl *c,
    const struct as_fw_podjob *d, json_t *obj, const struct as_fw_role *roles,
    int nroles, bool suspended, struct as_fw_tally *t)
{
	struct as_kind *pk = as_kind_find(srv, "", "v1", "pods");
	json_t *pods, *p, *have = json_object();
	char *key = dl_key(d, obj);
	size_t i;
	int r, idx;
	json_int_t want = 0;
	bool created = false, can;
	enum as_fw_run out = AS_FW_STARTING;

	memset(t, 0, sizeof(*t));
	if (deadlines == NULL)
		deadlines = json_object();
	if (pk == NULL || key == NULL || have == NULL) {
		cu_free(key);
		json_decref(have);
		return AS_FW_STARTING;
	}
	pods = as_fw_owned(pk, obj);
	json_array_foreach(pods, i, p)
	{
		const char *n = as_jstr(p, "metadata.name");

		r = role_of(d, obj, roles, nroles, n, &idx);
		if (suspended || r < 0) {
			if (as_jget(p, "metadata.deletionTimestamp") == NULL)
				as_fw_delete(srv, pk, p, c->user);
			continue;
		}
		json_object_set_new(have, n, json_true());
		if (!as_fw_pod_live(p)) {
			const char *ph = as_jstr(p, "status.phase");

			if (ph != NULL && strcmp(ph, "Succeeded") == 0)
				t->succeeded++;
			else if (ph != NULL && strcmp(ph, "Failed") == 0)
				t->failed++;
			continue;
		}
		t->live++;
		if (r < AS_FW_MAX_ROLES)
			t->active[r]++;
		if (as_fw_pod_ready(p)) {
			t->ready++;
			if (r < AS_FW_MAX_ROLES)
				t->ready_r[r]++;
		}
	}
	json_decref(pods);
	for (r = 0; r < nroles; r++)
		want += roles[r].replicas < AS_FW_MAX_PODS ? roles[r].replicas
							   : AS_FW_MAX_PODS;
	t->want = want;
	if (suspended) {
		json_object_del(deadlines, key);
		out = AS_FW_IDLE;
		goto done;
	}
	can = !as_fw_pending(obj);
	for (r = 0; r < nroles && can; r++) {
		for (idx = 0; idx < roles[r].replicas && idx < AS_FW_MAX_PODS;
		     idx++) {
			char name[512];
			json_t *pod;

			if (d->before != NULL && !d->before(obj, r, t))
				break;
			d->pod_name(obj, &roles[r], idx, name, sizeof(name));
			if (json_object_get(have, name) != NULL)
				continue;
			pod = as_fw_pod(
			    obj, d->api_version, d->kind, roles[r].tmpl, name);
			if (d->decorate != NULL)
				d->decorate(obj, &roles[r], idx, pod);
			as_fw_create(srv, c, pk, pod, obj);
			created = true;
		}
	}
	if (created || !can || want == 0 || t->ready < want) {
		json_object_del(deadlines, key);
		goto done;
	}
	out = AS_FW_RUNNING;
	if (!d->finishes)
		goto done;
	if (json_object_get(deadlines, key) == NULL) {
		int64_t due =
		    as_fw_now_ms() +
		    as_fw_runtime(obj, nroles ? roles[0].tmpl : NULL, 1000);

		json_object_set_new(deadlines, key, json_integer(due));
		as_fw_wake(c, as_jstr(obj, "metadata.namespace"),
		    as_jstr(obj, "metadata.name"), due);
	} else if (json_integer_value(json_object_get(deadlines, key)) <=
		   as_fw_now_ms()) {
		bool ok = !as_fw_fails(obj, nroles ? roles[0].tmpl : NULL);

		json_object_del(deadlines, key);
		as_fw_stop_all(srv, obj, ok, c->user);
		out = ok ? AS_FW_SUCCEEDED : AS_FW_FAILED;
	} else {
		/* An earlier wake-up (one object of the same name, deleted
		 * and created again) may have been the one kept: ask again. */
		as_fw_wake(c, as_jstr(obj, "metadata.namespace"),
		    as_jstr(obj, "metadata.name"),
		    json_integer_value(json_object_get(deadlines, key)));
	}
done:
	json_decref(have);
	cu_free(key);
	return out;
}

void as_fw_roles_free(void)
{
	json_decref(deadlines);
	deadlines = NULL;
}
