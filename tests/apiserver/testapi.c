/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/apiserver/testapi.c - the /__test/ endpoints (only with
 * --test-endpoints): access log, compaction, fault injection, dropping
 * watches, per-user write counters and token rotation. They live outside
 * /api and /apis so no client can mistake them for Kubernetes API.
 *
 *   GET    /__test/log?since=N     access log entries with seq > N
 *   DELETE /__test/log             clear it
 *   POST   /__test/compact         compact history up to the current rv
 *   POST   /__test/faults          {"rules":[{method,pathPrefix,code,
 *                                   retryAfter,plain,count,probability,
 *                                   latencyMs,answerDelayMs}]}
 *                                   replaces the rules (answerDelayMs:
 *                                   the request is carried out, its
 *                                   answer sent that much later)
 *   DELETE /__test/faults          clear the rules
 *   POST   /__test/drop-watches    close every open watch now
 *   GET    /__test/writes          {"<user>": successful writes}
 *   POST   /__test/tokens          {"add":[{"token","user","groups"}],
 *                                   "revoke":["token"]}
 *   GET    /__test/state           {"resourceVersion","compacted",
 *                                   "watches","connections",
 *                                   "peakConnections"}
 *   POST   /__test/objects         store the body object as is (no
 *                                   validation, no admission)
 *   POST   /__test/restore         {"resourceVersion": N}: an etcd
 *                                   restore - the revision goes back to
 *                                   N (below the current one), see
 *                                   restore()
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/apiserver/apiserver.h"

#define LOG_CAP 200000

static void ok(struct as_resp *resp, json_t *body)
{
	resp->code = 200;
	resp->body = body ? body : json_object();
}

static void free_faults(struct as_server *srv)
{
	size_t i;

	for (i = 0; i < srv->nfaults; i++) {
		cu_free(srv->faults[i].method);
		cu_free(srv->faults[i].path_prefix);
	}
	cu_free(srv->faults);
	srv->faults = NULL;
	srv->nfaults = 0;
}

const struct as_fault *as_fault_match(
    struct as_server *srv, const char *method, const char *path)
{
	size_t i;

	for (i = 0; i < srv->nfaults; i++) {
		struct as_fault *f = &srv->faults[i];

		if (f->remaining == 0)
			continue;
		if (f->method != NULL && strcmp(f->method, method) != 0)
			continue;
		if (f->path_prefix != NULL &&
		    strncmp(path, f->path_prefix, strlen(f->path_prefix)) != 0)
			continue;
		if (f->probability < 1.0 &&
		    (double)(as_rand(srv) % 1000000) / 1e6 >= f->probability)
			continue;
		if (f->remaining > 0)
			f->remaining--;
		return f;
	}
	return NULL;
}

void as_access_log(struct as_server *srv, const struct as_request *rq,
    const char *query, int code)
{
	char ts[CU_TIME_MICRO_LEN];
	const char *ua, *ct;
	json_t *e;

	if (!srv->test_endpoints || strncmp(rq->path, "/__test/", 8) == 0)
		return;
	ua = as_header(rq, "User-Agent");
	ct = as_header(rq, "Content-Type");
	cu_time_format_micro(cu_time_now_ns(), ts);
	e = json_pack("{s:I, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:s}",
	    "seq", (json_int_t)++srv->log_seq, "time", ts, "user", rq->user,
	    "userAgent", ua ? ua : "", "verb", rq->method, "path", rq->path,
	    "query", query, "contentType", ct ? ct : "", "code", code, "accept",
	    as_header(rq, "Accept") ? as_header(rq, "Accept") : "");
	if (e == NULL)
		return;
	if (json_array_size(srv->access_log) >= LOG_CAP)
		json_array_remove(srv->access_log, 0);
	json_array_append_new(srv->access_log, e);
}

void as_count_write(struct as_server *srv, const char *user)
{
	json_t *v = json_object_get(srv->writes_by_user, user);

	json_object_set_new(
	    srv->writes_by_user, user, json_integer(json_integer_value(v) + 1));
}

static void set_faults(
    struct as_server *srv, json_t *body, struct as_resp *resp)
{
	json_t *rules = json_object_get(body, "rules"), *r;
	size_t i, n = json_array_size(rules);

	free_faults(srv);
	if (n == 0) {
		ok(resp, NULL);
		return;
	}
	srv->faults = cu_calloc(n, sizeof(*srv->faults));
	if (srv->faults == NULL) {
		as_resp_error(resp, 500, "InternalError", "out of memory");
		return;
	}
	json_array_foreach(rules, i, r)
	{
		struct as_fault *f = &srv->faults[i];
		json_t *v;

		f->method = as_jstr(r, "method")
				? cu_strdup(as_jstr(r, "method"))
				: NULL;
		f->path_prefix = as_jstr(r, "pathPrefix")
				     ? cu_strdup(as_jstr(r, "pathPrefix"))
				     : NULL;
		f->code = (int)json_integer_value(json_object_get(r, "code"));
		v = json_object_get(r, "retryAfter");
		f->retry_after =
		    json_is_integer(v) ? (int)json_integer_value(v) : -1;
		f->plain = json_is_true(json_object_get(r, "plain"));
		v = json_object_get(r, "count");
		f->remaining =
		    json_is_integer(v) ? (int)json_integer_value(v) : -1;
		v = json_object_get(r, "probability");
		f->probability = json_is_number(v) ? json_number_value(v) : 1.0;
		f->latency_ms =
		    (int)json_integer_value(json_object_get(r, "latencyMs"));
		f->answer_delay_ms = (int)json_integer_value(
		    json_object_get(r, "answerDelayMs"));
		srv->nfaults++;
	}
	ok(resp, NULL);
}

/* "a,b" of a JSON array of group names [owned], NULL when none. */
static char *join_groups(json_t *groups)
{
	cu_buf b;
	json_t *g;
	size_t i;

	if (json_array_size(groups) == 0)
		return NULL;
	cu_buf_init(&b, 64 * 1024);
	json_array_foreach(groups, i, g)
	{
		if (!json_is_string(g))
			continue;
		if ((b.len > 0 && cu_buf_adds(&b, ",") != CU_OK) ||
		    cu_buf_adds(&b, json_string_value(g)) != CU_OK)
			break;
	}
	return cu_buf_detach(&b, NULL);
}

static void tokens(struct as_server *srv, json_t *body, struct as_resp *resp)
{
	json_t *add = json_object_get(body, "add"), *t;
	json_t *revoke = json_object_get(body, "revoke");
	size_t i, j;

	json_array_foreach(revoke, i, t)
	{
		for (j = 0; j < srv->ntokens; j++) {
			if (srv->tokens[j].token != NULL &&
			    strcmp(srv->tokens[j].token,
				json_string_value(t) ? json_string_value(t)
						     : "") == 0) {
				cu_free(srv->tokens[j].token);
				srv->tokens[j].token = NULL;
			}
		}
	}
	json_array_foreach(add, i, t)
	{
		struct as_token *nt =
		    cu_realloc(srv->tokens, (srv->ntokens + 1) * sizeof(*nt));

		if (nt == NULL || as_jstr(t, "token") == NULL)
			break;
		srv->tokens = nt;
		nt[srv->ntokens].token = cu_strdup(as_jstr(t, "token"));
		nt[srv->ntokens].user = cu_strdup(
		    as_jstr(t, "user") ? as_jstr(t, "user") : "test-user");
		nt[srv->ntokens].groups =
		    join_groups(json_object_get(t, "groups"));
		srv->ntokens++;
	}
	ok(resp, NULL);
}

/* An etcd restore from a backup taken at revision N, as the API server
 * sees it after restarting on the restored etcd: every watch ends, the
 * watch history is gone (a watch from before N is 410, one from after N
 * is refused as too large), and the revision counter is back at N, so
 * new writes get revisions the clients have seen before. The objects
 * keep their content (only a resourceVersion above N is lowered to N):
 * what matters to clients is the revision going backwards. */
static void restore(struct as_server *srv, json_t *body, struct as_resp *resp)
{
	json_t *v = json_object_get(body, "resourceVersion");
	uint64_t n = json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;
	struct as_kind *k;
	size_t i;

	if (n == 0 || n >= srv->rv) {
		as_resp_error(resp, 422, "Invalid",
		    "resourceVersion: must be an integer between 1 and %llu",
		    (unsigned long long)(srv->rv > 0 ? srv->rv - 1 : 0));
		return;
	}
	as_watch_drop_all(srv);
	as_store_compact(srv);
	srv->rv = n;
	srv->compacted = n;
	for (k = srv->kinds; k != NULL; k = k->next) {
		k->ring_floor = n;
		for (i = 0; i < k->nitems; i++) {
			const char *rv = as_jstr(
			    k->items[i].obj, "metadata.resourceVersion");
			json_t *c;
			char buf[32];

			if (rv == NULL || strtoull(rv, NULL, 10) <= n)
				continue;
			/* Stored objects are immutable (shared): a copy. */
			c = json_deep_copy(k->items[i].obj);
			if (c == NULL)
				continue;
			snprintf(
			    buf, sizeof(buf), "%llu", (unsigned long long)n);
			as_jset(
			    c, "metadata.resourceVersion", json_string(buf));
			json_decref(k->items[i].obj);
			k->items[i].obj = c;
		}
	}
	ok(resp, json_pack("{s:I}", "resourceVersion", (json_int_t)srv->rv));
}

void as_testapi_handle(struct as_request *rq, struct as_resp *resp)
{
	struct as_server *srv = rq->srv;
	const char *p = rq->path + strlen("/__test/");
	json_t *body = NULL;

	if (rq->body_len > 0)
		body = json_loadb(rq->body, rq->body_len, 0, NULL);
	if (strcmp(p, "log") == 0 && strcmp(rq->method, "GET") == 0) {
		const char *since = as_query(rq, "since");
		unsigned long long s = since ? strtoull(since, NULL, 10) : 0;
		json_t *items = json_array(), *e;
		size_t i;

		json_array_foreach(srv->access_log, i, e)
		{
			if ((unsigned long long)json_integer_value(
				json_object_get(e, "seq")) > s)
				json_array_append(items, e);
		}
		ok(resp, json_pack("{s:o, s:I}", "items", items, "last",
			     (json_int_t)srv->log_seq));
	} else if (strcmp(p, "log") == 0 && strcmp(rq->method, "DELETE") == 0) {
		json_array_clear(srv->access_log);
		ok(resp, NULL);
	} else if (strcmp(p, "compact") == 0) {
		as_store_compact(srv);
		ok(resp, json_pack(
			     "{s:I}", "compacted", (json_int_t)srv->compacted));
	} else if (strcmp(p, "faults") == 0 &&
		   strcmp(rq->method, "DELETE") == 0) {
		free_faults(srv);
		ok(resp, NULL);
	} else if (strcmp(p, "faults") == 0) {
		set_faults(srv, body, resp);
	} else if (strcmp(p, "restore") == 0 &&
		   strcmp(rq->method, "POST") == 0) {
		restore(srv, body, resp);
	} else if (strcmp(p, "drop-watches") == 0) {
		as_watch_drop_all(srv);
		ok(resp, NULL);
	} else if (strcmp(p, "writes") == 0) {
		ok(resp, json_deep_copy(srv->writes_by_user));
	} else if (strcmp(p, "tokens") == 0) {
		tokens(srv, body, resp);
	} else if (strcmp(p, "objects") == 0 &&
		   strcmp(rq->method, "POST") == 0) {
		/* Store an object as is, without validation or admission:
		 * stands in for objects written through an older API version
		 * (e.g. admissionregistration.k8s.io/v1beta1 webhooks with
		 * sideEffects Unknown, which v1 no longer accepts). */
		struct as_kind *k = as_kind_by_gvk(srv,
		    as_jstr(body, "apiVersion") ? as_jstr(body, "apiVersion")
						: "",
		    as_jstr(body, "kind") ? as_jstr(body, "kind") : "");
		int rc = k == NULL ? CU_ENOTFOUND
				   : as_internal_create(srv, k,
					 json_incref(body), "system:test");

		if (rc == CU_OK)
			ok(resp, json_incref(body));
		else
			as_resp_error(resp, rc == CU_EEXIST ? 409 : 400,
			    "BadRequest", "cannot store the object: %s",
			    cu_err_desc(rc));
	} else if (strcmp(p, "state") == 0) {
		struct as_kind *k;
		struct as_watch *w;
		size_t nw = 0;

		for (k = srv->kinds; k != NULL; k = k->next)
			for (w = k->watchers; w != NULL; w = w->next)
				nw++;
		ok(resp,
		    json_pack("{s:I, s:I, s:I, s:I, s:I}", "resourceVersion",
			(json_int_t)srv->rv, "compacted",
			(json_int_t)srv->compacted, "watches", (json_int_t)nw,
			"connections", (json_int_t)srv->conns,
			"peakConnections", (json_int_t)srv->peak_conns));
	} else {
		as_resp_error(resp, 404, "NotFound", "no such test endpoint");
	}
	json_decref(body);
}

void as_testapi_free(struct as_server *srv);
void as_testapi_free(struct as_server *srv)
{
	free_faults(srv);
}
