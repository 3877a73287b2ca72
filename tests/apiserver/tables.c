/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/tables.c - the server-side Table columns of the
 * built-in kinds whose kubectl output tests read (`kubectl get pods`,
 * `get nodes`, `get jobs`, `get namespaces`, `get events`, `get
 * deployments`, `get replicasets`, `get statefulsets`), with the
 * columns, -o wide
 * extras (priority 1) and cell texts kube-apiserver's printers produce.
 * Other built-in kinds get the default NAME / CREATED AT table
 * (handlers.c); custom resources their additionalPrinterColumns.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/apiserver/apiserver.h"

struct col {
	const char *name;
	int priority;
};

static const struct col pod_cols[] = {{"Name", 0}, {"Ready", 0}, {"Status", 0},
    {"Restarts", 0}, {"Age", 0}, {"IP", 1}, {"Node", 1}, {"Nominated Node", 1},
    {"Readiness Gates", 1}, {NULL, 0}};
static const struct col node_cols[] = {{"Name", 0}, {"Status", 0}, {"Roles", 0},
    {"Age", 0}, {"Version", 0}, {"Internal-IP", 1}, {"External-IP", 1},
    {"OS-Image", 1}, {"Kernel-Version", 1}, {"Container-Runtime", 1},
    {NULL, 0}};
static const struct col job_cols[] = {{"Name", 0}, {"Status", 0},
    {"Completions", 0}, {"Duration", 0}, {"Age", 0}, {"Containers", 1},
    {"Images", 1}, {"Selector", 1}, {NULL, 0}};
static const struct col ns_cols[] = {
    {"Name", 0}, {"Status", 0}, {"Age", 0}, {NULL, 0}};
static const struct col event_cols[] = {{"Last Seen", 0}, {"Type", 0},
    {"Reason", 0}, {"Object", 0}, {"Subobject", 1}, {"Source", 1},
    {"Message", 0}, {"First Seen", 1}, {"Count", 1}, {"Name", 1}, {NULL, 0}};

static const struct col deploy_cols[] = {{"Name", 0}, {"Ready", 0},
    {"Up-to-date", 0}, {"Available", 0}, {"Age", 0}, {"Containers", 1},
    {"Images", 1}, {"Selector", 1}, {NULL, 0}};
static const struct col rs_cols[] = {{"Name", 0}, {"Desired", 0},
    {"Current", 0}, {"Ready", 0}, {"Age", 0}, {"Containers", 1}, {"Images", 1},
    {"Selector", 1}, {NULL, 0}};
static const struct col sts_cols[] = {{"Name", 0}, {"Ready", 0}, {"Age", 0},
    {"Containers", 1}, {"Images", 1}, {NULL, 0}};

static const struct col apisvc_cols[] = {
    {"Name", 0}, {"Service", 0}, {"Available", 0}, {"Age", 0}, {NULL, 0}};

static const struct col *cols_of(const struct as_kind *k)
{
	if (k->flags & AS_CUSTOM)
		return NULL;
	if (k->group[0] == '\0' && strcmp(k->plural, "pods") == 0)
		return pod_cols;
	if (k->group[0] == '\0' && strcmp(k->plural, "nodes") == 0)
		return node_cols;
	if (k->group[0] == '\0' && strcmp(k->plural, "namespaces") == 0)
		return ns_cols;
	if (k->group[0] == '\0' && strcmp(k->plural, "events") == 0)
		return event_cols;
	if (strcmp(k->group, "batch") == 0 && strcmp(k->plural, "jobs") == 0)
		return job_cols;
	if (strcmp(k->group, "apiregistration.k8s.io") == 0)
		return apisvc_cols;
	if (strcmp(k->group, "apps") == 0 &&
	    strcmp(k->plural, "deployments") == 0)
		return deploy_cols;
	if (strcmp(k->group, "apps") == 0 &&
	    strcmp(k->plural, "statefulsets") == 0)
		return sts_cols;
	if (strcmp(k->group, "apps") == 0 &&
	    strcmp(k->plural, "replicasets") == 0)
		return rs_cols;
	return NULL;
}

json_t *as_table_columns(const struct as_kind *k)
{
	const struct col *c = cols_of(k);
	json_t *out;

	if (c == NULL)
		return NULL;
	out = json_array();
	for (; c->name != NULL; c++)
		json_array_append_new(
		    out, json_pack("{s:s, s:s, s:s, s:s, s:i}", "name", c->name,
			     "type", "string", "format",
			     strcmp(c->name, "Name") == 0 ? "name" : "",
			     "description", "", "priority", c->priority));
	return out;
}

/* ---- helpers ---------------------------------------------------------- */

static bool streq(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

static const char *or_none(const char *s)
{
	return s != NULL && s[0] != '\0' ? s : "<none>";
}

static bool parse_time(const char *s, int64_t *ns)
{
	cu_error err;

	return s != NULL && cu_time_parse(s, ns, &err) == CU_OK;
}

/* Time since the timestamp at path, or "<unknown>". */
static json_t *since(json_t *obj, const char *path)
{
	int64_t t;
	char buf[32];

	if (!parse_time(as_jstr(obj, path), &t))
		return json_string("<unknown>");
	as_human_duration(cu_time_now_ns() - t, buf);
	return json_string(buf);
}

static json_t *condition(json_t *obj, const char *type)
{
	json_t *c;
	size_t i;

	json_array_foreach(as_jget(obj, "status.conditions"), i, c)
	{
		if (streq(as_jstr(c, "type"), type))
			return c;
	}
	return NULL;
}

static bool cond_true(json_t *obj, const char *type)
{
	json_t *c = condition(obj, type);

	return c != NULL && streq(as_jstr(c, "status"), "True");
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ---- rows ----------------------------------------------------------- */

static void pod_cells(json_t *pod, json_t *cells)
{
	json_t *cs = as_jget(pod, "status.containerStatuses"), *c, *gates;
	const char *reason = as_jstr(pod, "status.phase");
	size_t total = json_array_size(as_jget(pod, "spec.containers"));
	size_t ready = 0, i;
	long long restarts = 0;
	bool running = false;
	char buf[64];

	if (as_jstr(pod, "status.reason") != NULL)
		reason = as_jstr(pod, "status.reason");
	if (reason == NULL)
		reason = "";
	for (i = json_array_size(cs); i > 0; i--) {
		c = json_array_get(cs, i - 1);
		restarts +=
		    json_integer_value(json_object_get(c, "restartCount"));
		if (as_jstr(c, "state.waiting.reason") != NULL &&
		    as_jstr(c, "state.waiting.reason")[0] != '\0') {
			reason = as_jstr(c, "state.waiting.reason");
		} else if (as_jget(c, "state.terminated") != NULL) {
			const char *r = as_jstr(c, "state.terminated.reason");

			if (r != NULL && r[0] != '\0') {
				reason = r;
			} else {
				snprintf(buf, sizeof(buf), "ExitCode:%lld",
				    (long long)json_integer_value(as_jget(
					c, "state.terminated.exitCode")));
				reason = buf;
			}
		} else if (json_is_true(json_object_get(c, "ready")) &&
			   as_jget(c, "state.running") != NULL) {
			running = true;
			ready++;
		}
	}
	if (streq(reason, "Completed") && running)
		reason = cond_true(pod, "Ready") ? "Running" : "NotReady";
	if (streq(reason, "Pending")) {
		json_t *ps = condition(pod, "PodScheduled");

		if (ps != NULL &&
		    streq(as_jstr(ps, "reason"), "SchedulingGated"))
			reason = "SchedulingGated";
	}
	if (as_jget(pod, "metadata.deletionTimestamp") != NULL)
		reason = "Terminating";
	snprintf(buf + 32, 32, "%zu/%zu", ready, total);
	json_array_append_new(cells, json_string(buf + 32));
	json_array_append_new(cells, json_string(reason));
	snprintf(buf + 32, 32, "%lld", restarts);
	json_array_append_new(cells, json_string(buf + 32));
	json_array_append_new(cells, since(pod, "metadata.creationTimestamp"));
	json_array_append_new(
	    cells, json_string(or_none(as_jstr(pod, "status.podIP"))));
	json_array_append_new(
	    cells, json_string(or_none(as_jstr(pod, "spec.nodeName"))));
	json_array_append_new(cells,
	    json_string(or_none(as_jstr(pod, "status.nominatedNodeName"))));
	gates = as_jget(pod, "spec.readinessGates");
	if (json_array_size(gates) == 0) {
		json_array_append_new(cells, json_string("<none>"));
	} else {
		size_t n = 0;

		json_array_foreach(gates, i, c)
		{
			if (cond_true(pod, as_jstr(c, "conditionType")))
				n++;
		}
		snprintf(
		    buf, sizeof(buf), "%zu/%zu", n, json_array_size(gates));
		json_array_append_new(cells, json_string(buf));
	}
}

static void join_sorted(char **v, size_t n, char *out, size_t cap)
{
	size_t i, len = 0;

	out[0] = '\0';
	qsort(v, n, sizeof(*v), cmp_str);
	for (i = 0; i < n; i++) {
		int w = snprintf(out + len, cap - len, "%s%s", i ? "," : "",
		    v[i] ? v[i] : "");

		if (w < 0 || (size_t)w >= cap - len)
			break;
		len += (size_t)w;
	}
}

static const char *address(json_t *node, const char *type)
{
	json_t *a;
	size_t i;

	json_array_foreach(as_jget(node, "status.addresses"), i, a)
	{
		if (streq(as_jstr(a, "type"), type))
			return as_jstr(a, "address");
	}
	return NULL;
}

static json_t *unknown_or(const char *s)
{
	return json_string(s != NULL && s[0] != '\0' ? s : "<unknown>");
}

static void node_cells(json_t *node, json_t *cells)
{
	json_t *ready = condition(node, "Ready"), *labels, *v;
	const char *st = as_jstr(ready, "status"), *k;
	char status[64], roles[1024];
	char *role[64];
	size_t n = 0;

	snprintf(status, sizeof(status), "%s",
	    streq(st, "True")	 ? "Ready"
	    : streq(st, "False") ? "NotReady"
				 : "Unknown");
	if (json_is_true(as_jget(node, "spec.unschedulable")))
		snprintf(status + strlen(status),
		    sizeof(status) - strlen(status), ",SchedulingDisabled");
	labels = as_jget(node, "metadata.labels");
	json_object_foreach(labels, k, v)
	{
		const char *pfx = "node-role.kubernetes.io/";

		if (n < 64 && strncmp(k, pfx, strlen(pfx)) == 0 &&
		    k[strlen(pfx)] != '\0')
			role[n++] = (char *)(k + strlen(pfx));
		else if (n < 64 && strcmp(k, "kubernetes.io/role") == 0 &&
			 json_string_value(v) != NULL &&
			 json_string_value(v)[0] != '\0')
			role[n++] = (char *)json_string_value(v);
	}
	join_sorted(role, n, roles, sizeof(roles));
	json_array_append_new(cells, json_string(status));
	json_array_append_new(cells, json_string(n ? roles : "<none>"));
	json_array_append_new(cells, since(node, "metadata.creationTimestamp"));
	json_array_append_new(cells,
	    json_string(as_jstr(node, "status.nodeInfo.kubeletVersion")
			    ? as_jstr(node, "status.nodeInfo.kubeletVersion")
			    : ""));
	json_array_append_new(
	    cells, json_string(or_none(address(node, "InternalIP"))));
	json_array_append_new(
	    cells, json_string(or_none(address(node, "ExternalIP"))));
	json_array_append_new(
	    cells, unknown_or(as_jstr(node, "status.nodeInfo.osImage")));
	json_array_append_new(
	    cells, unknown_or(as_jstr(node, "status.nodeInfo.kernelVersion")));
	json_array_append_new(cells,
	    unknown_or(
		as_jstr(node, "status.nodeInfo.containerRuntimeVersion")));
}

static void job_cells(json_t *job, json_t *cells)
{
	json_t *c, *v;
	const char *status = "Running", *k;
	char buf[1024], *parts[64];
	int64_t start, end;
	long long succ = json_integer_value(as_jget(job, "status.succeeded"));
	size_t i, n = 0, len = 0;

	if (cond_true(job, "Complete"))
		status = "Complete";
	else if (cond_true(job, "Failed"))
		status = "Failed";
	else if (as_jget(job, "metadata.deletionTimestamp") != NULL)
		status = "Terminating";
	else if (cond_true(job, "Suspended"))
		status = "Suspended";
	else if (cond_true(job, "FailureTarget"))
		status = "FailureTarget";
	else if (cond_true(job, "SuccessCriteriaMet"))
		status = "SuccessCriteriaMet";
	json_array_append_new(cells, json_string(status));
	if (json_is_integer(as_jget(job, "spec.completions")))
		snprintf(buf, sizeof(buf), "%lld/%lld", succ,
		    (long long)json_integer_value(
			as_jget(job, "spec.completions")));
	else if (json_integer_value(as_jget(job, "spec.parallelism")) > 1)
		snprintf(buf, sizeof(buf), "%lld/1 of %lld", succ,
		    (long long)json_integer_value(
			as_jget(job, "spec.parallelism")));
	else
		snprintf(buf, sizeof(buf), "%lld/1", succ);
	json_array_append_new(cells, json_string(buf));
	buf[0] = '\0';
	if (parse_time(as_jstr(job, "status.startTime"), &start)) {
		if (!parse_time(as_jstr(job, "status.completionTime"), &end))
			end = cu_time_now_ns();
		as_human_duration(end - start, buf);
	}
	json_array_append_new(cells, json_string(buf));
	json_array_append_new(cells, since(job, "metadata.creationTimestamp"));
	for (int pass = 0; pass < 2; pass++) {
		len = 0;
		buf[0] = '\0';
		json_array_foreach(
		    as_jget(job, "spec.template.spec.containers"), i, c)
		{
			const char *s =
			    as_jstr(c, pass == 0 ? "name" : "image");
			int w = snprintf(buf + len, sizeof(buf) - len, "%s%s",
			    i ? "," : "", s ? s : "");

			if (w < 0 || (size_t)w >= sizeof(buf) - len)
				break;
			len += (size_t)w;
		}
		json_array_append_new(cells, json_string(buf));
	}
	json_object_foreach(as_jget(job, "spec.selector.matchLabels"), k, v)
	{
		if (n < 64)
			parts[n++] = cu_asprintf("%s=%s", k,
			    json_string_value(v) ? json_string_value(v) : "");
	}
	join_sorted(parts, n, buf, sizeof(buf));
	json_array_append_new(cells, json_string(n ? buf : "<none>"));
	for (i = 0; i < n; i++)
		cu_free(parts[i]);
}

static void event_row(json_t *ev, json_t *cells)
{
	const char *kind = as_jstr(ev, "involvedObject.kind");
	const char *name = as_jstr(ev, "involvedObject.name");
	const char *last = as_jstr(ev, "lastTimestamp") ? "lastTimestamp"
			   : as_jstr(ev, "eventTime")
			       ? "eventTime"
			       : "metadata.creationTimestamp";
	const char *first =
	    as_jstr(ev, "firstTimestamp") ? "firstTimestamp" : last;
	const char *comp = as_jstr(ev, "source.component");
	char obj[600], lower[64];
	size_t i;

	for (i = 0; kind != NULL && kind[i] != '\0' && i + 1 < sizeof(lower);
	     i++)
		lower[i] = (char)(kind[i] >= 'A' && kind[i] <= 'Z'
				      ? kind[i] - 'A' + 'a'
				      : kind[i]);
	lower[i] = '\0';
	snprintf(obj, sizeof(obj), "%s/%s", lower, name ? name : "");
	if (comp == NULL)
		comp = as_jstr(ev, "reportingComponent");
	json_array_append_new(cells, since(ev, last));
	json_array_append_new(
	    cells, json_string(as_jstr(ev, "type") ? as_jstr(ev, "type") : ""));
	json_array_append_new(cells,
	    json_string(as_jstr(ev, "reason") ? as_jstr(ev, "reason") : ""));
	json_array_append_new(cells, json_string(obj));
	json_array_append_new(
	    cells, json_string(as_jstr(ev, "involvedObject.fieldPath")
				   ? as_jstr(ev, "involvedObject.fieldPath")
				   : ""));
	json_array_append_new(cells, json_string(comp ? comp : ""));
	json_array_append_new(cells,
	    json_string(as_jstr(ev, "message") ? as_jstr(ev, "message") : ""));
	json_array_append_new(cells, since(ev, first));
	json_array_append_new(cells,
	    json_integer(json_is_integer(json_object_get(ev, "count"))
			     ? json_integer_value(json_object_get(ev, "count"))
			     : 1));
	json_array_append_new(
	    cells, json_string(as_jstr(ev, "metadata.name")
				   ? as_jstr(ev, "metadata.name")
				   : ""));
}

/* kube-aggregator's columns: the service as namespace/name or "Local";
 * the Available condition's status, "False (Reason)", or "Unknown". */
static void apisvc_cells(json_t *obj, json_t *cells)
{
	json_t *svc = as_jget(obj, "spec.service");
	json_t *conds = as_jget(obj, "status.conditions"), *c;
	const char *avail = "Unknown";
	char sbuf[600], abuf[300];
	size_t i;

	if (json_is_object(svc))
		snprintf(sbuf, sizeof(sbuf), "%s/%s",
		    as_jstr(svc, "namespace") ? as_jstr(svc, "namespace") : "",
		    as_jstr(svc, "name") ? as_jstr(svc, "name") : "");
	else
		snprintf(sbuf, sizeof(sbuf), "Local");
	json_array_foreach(conds, i, c)
	{
		const char *st = as_jstr(c, "status");

		if (!streq(as_jstr(c, "type"), "Available") || st == NULL)
			continue;
		if (streq(st, "False")) {
			snprintf(abuf, sizeof(abuf), "False (%s)",
			    as_jstr(c, "reason") ? as_jstr(c, "reason") : "");
			avail = abuf;
		} else
			avail = st;
	}
	json_array_append_new(cells, json_string(sbuf));
	json_array_append_new(cells, json_string(avail));
	json_array_append_new(cells, since(obj, "metadata.creationTimestamp"));
}

/* Deployments and StatefulSets: READY (ready/desired), then for
 * Deployments UP-TO-DATE and AVAILABLE; ReplicaSets: DESIRED, CURRENT,
 * READY; then AGE and the template's containers and images (-o wide;
 * Deployments and ReplicaSets add the selector). */
static void apps_cells(
    const struct as_kind *k, json_t *obj, json_t *cells, bool deploy, bool rs)
{
	json_t *c, *sc;
	char buf[64], names[1024] = "", images[1024] = "";
	size_t i, nl = 0, il = 0;

	long long want =
	    json_is_integer(as_jget(obj, "spec.replicas"))
		? (long long)json_integer_value(as_jget(obj, "spec.replicas"))
		: 1LL;
	long long ready =
	    (long long)json_integer_value(as_jget(obj, "status.readyReplicas"));

	if (rs) {
		json_array_append_new(cells, json_integer(want));
		json_array_append_new(cells,
		    json_integer(
			json_integer_value(as_jget(obj, "status.replicas"))));
		json_array_append_new(cells, json_integer(ready));
	} else {
		snprintf(buf, sizeof(buf), "%lld/%lld", ready, want);
		json_array_append_new(cells, json_string(buf));
	}
	if (deploy) {
		json_array_append_new(
		    cells, json_integer(json_integer_value(
			       as_jget(obj, "status.updatedReplicas"))));
		json_array_append_new(
		    cells, json_integer(json_integer_value(
			       as_jget(obj, "status.availableReplicas"))));
	}
	json_array_append_new(cells, since(obj, "metadata.creationTimestamp"));
	json_array_foreach(as_jget(obj, "spec.template.spec.containers"), i, c)
	{
		int a = snprintf(names + nl, sizeof(names) - nl, "%s%s",
		    i ? "," : "", or_none(as_jstr(c, "name")));
		int b = snprintf(images + il, sizeof(images) - il, "%s%s",
		    i ? "," : "", or_none(as_jstr(c, "image")));

		if (a > 0 && nl + (size_t)a < sizeof(names))
			nl += (size_t)a;
		if (b > 0 && il + (size_t)b < sizeof(images))
			il += (size_t)b;
	}
	json_array_append_new(cells, json_string(names));
	json_array_append_new(cells, json_string(images));
	if (!deploy && !rs)
		return;
	sc = as_scale_get(k, obj);
	json_array_append_new(
	    cells, json_string(as_jstr(sc, "status.selector")
				   ? as_jstr(sc, "status.selector")
				   : "<none>"));
	json_decref(sc);
}

json_t *as_table_cells(const struct as_kind *k, json_t *obj)
{
	const struct col *c = cols_of(k);
	json_t *cells;
	const char *name = as_jstr(obj, "metadata.name");

	if (c == NULL)
		return NULL;
	cells = json_array();
	if (c == event_cols) {
		event_row(obj, cells);
		return cells;
	}
	json_array_append_new(cells, json_string(name ? name : ""));
	if (c == pod_cols) {
		pod_cells(obj, cells);
	} else if (c == node_cols) {
		node_cells(obj, cells);
	} else if (c == job_cols) {
		job_cells(obj, cells);
	} else if (c == apisvc_cols) {
		apisvc_cells(obj, cells);
	} else if (c == deploy_cols || c == sts_cols || c == rs_cols) {
		apps_cells(k, obj, cells, c == deploy_cols, c == rs_cols);
	} else {
		json_array_append_new(
		    cells, json_string(as_jstr(obj, "status.phase")
					   ? as_jstr(obj, "status.phase")
					   : ""));
		json_array_append_new(
		    cells, since(obj, "metadata.creationTimestamp"));
	}
	return cells;
}
