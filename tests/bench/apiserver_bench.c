/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/bench/apiserver_bench.c - `cueue-bench apiserver`: throughput of
 * cueue-apiserver for creates and updates with 10 concurrent watchers, and
 * the delivery latency of each change to each watcher.
 *
 * Every write carries its send time (ns, CLOCK_MONOTONIC) in the
 * ConfigMap's data; watchers parse each event line and record now - sent.
 * One process, one thread, libcurl multi: `inflight` writes are kept
 * outstanding on keep-alive connections. Run it against a server pinned
 * to one core (tests/bench/run.sh does) to measure the server, not us.
 */
#define _GNU_SOURCE /* memmem */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cu.h"

int bench_apiserver_main(int argc, char **argv);

struct watcher {
	CURL *h;
	cu_buf line;
	int64_t *lat; /* delivery latencies, ns */
	size_t nlat, caplat;
	size_t events;
};

struct writer {
	CURL *h;
	struct curl_slist *hdrs;
	char *body;
	cu_buf resp;
	long idx;
	bool idle;
};

struct bench {
	const char *url;
	char auth[256];
	long total;   /* writes to make */
	long creates; /* first `creates` writes are POSTs, then PUT/PATCH */
	long issued, done, failed;
	double rate;	    /* writes/s to pace at; 0 = as fast as possible */
	const char *prefix; /* object names and the bench label value */
	int64_t t0;
	struct watcher w[64];
	int nwatchers;
};

/* May another write start now (pacing)? */
static bool may_issue(const struct bench *b)
{
	double due;

	if (b->issued >= b->total)
		return false;
	if (b->rate <= 0)
		return true;
	due = (double)(cu_time_mono_ns() - b->t0) / 1e9 * b->rate;
	return (double)b->issued < due;
}

static size_t sink(char *p, size_t sz, size_t n, void *ud)
{
	cu_buf *b = ud;

	if (cu_buf_add(b, p, sz * n) != CU_OK)
		return 0;
	return sz * n;
}

static void record(struct watcher *w, const char *line, size_t len)
{
	/* Not a JSON parse: the client must stay cheaper than the server
	 * it measures. The object is the server's compact encoding. */
	static const char key[] = "\"sent\":\"";
	const char *sent = memmem(line, len, key, sizeof(key) - 1);

	w->events++;
	if (sent != NULL) {
		int64_t t = strtoll(sent + sizeof(key) - 1, NULL, 10);

		if (w->nlat == w->caplat) {
			size_t cap = w->caplat ? w->caplat * 2 : 4096;
			int64_t *p = cu_realloc(w->lat, cap * sizeof(*p));

			if (p == NULL)
				return;
			w->lat = p;
			w->caplat = cap;
		}
		w->lat[w->nlat++] = cu_time_mono_ns() - t;
	}
}

static size_t watch_data(char *p, size_t sz, size_t n, void *ud)
{
	struct watcher *w = ud;
	size_t len = sz * n, i, start = 0;

	for (i = 0; i < len; i++) {
		if (p[i] != '\n')
			continue;
		if (w->line.len > 0) {
			if (cu_buf_add(&w->line, p + start, i - start) != CU_OK)
				return 0;
			record(w, w->line.ptr, w->line.len);
			cu_buf_reset(&w->line);
		} else {
			record(w, p + start, i - start);
		}
		start = i + 1;
	}
	if (start < len &&
	    cu_buf_add(&w->line, p + start, len - start) != CU_OK)
		return 0;
	return len;
}

static void issue(struct bench *b, CURLM *m, struct writer *wr)
{
	long i = b->issued++;
	char url[512];
	bool create = i < b->creates;
	long obj = create ? i : i % b->creates;

	cu_buf_reset(&wr->resp);
	cu_free(wr->body);
	wr->idx = i;
	if (create) {
		snprintf(url, sizeof(url),
		    "%s/api/v1/namespaces/default/configmaps", b->url);
		wr->body = cu_asprintf("{\"apiVersion\":\"v1\",\"kind\":"
				       "\"ConfigMap\",\"metadata\":{\"name\":"
				       "\"%s-%ld\",\"labels\":{\"bench\":"
				       "\"%s\"}},\"data\":{\"sent\":\"%lld\","
				       "\"n\":\"0\"}}",
		    b->prefix, obj, b->prefix, (long long)cu_time_mono_ns());
		curl_easy_setopt(wr->h, CURLOPT_CUSTOMREQUEST, "POST");
	} else {
		snprintf(url, sizeof(url),
		    "%s/api/v1/namespaces/default/configmaps/%s-%ld", b->url,
		    b->prefix, obj);
		wr->body = cu_asprintf("{\"data\":{\"sent\":\"%lld\",\"n\":"
				       "\"%ld\"}}",
		    (long long)cu_time_mono_ns(), i);
		curl_easy_setopt(wr->h, CURLOPT_CUSTOMREQUEST, "PATCH");
	}
	curl_slist_free_all(wr->hdrs);
	wr->hdrs = curl_slist_append(NULL, b->auth);
	wr->hdrs = curl_slist_append(
	    wr->hdrs, create ? "Content-Type: application/json"
			     : "Content-Type: application/merge-patch+json");
	curl_easy_setopt(wr->h, CURLOPT_URL, url);
	curl_easy_setopt(wr->h, CURLOPT_HTTPHEADER, wr->hdrs);
	curl_easy_setopt(wr->h, CURLOPT_POSTFIELDS, wr->body);
	curl_easy_setopt(wr->h, CURLOPT_WRITEFUNCTION, sink);
	curl_easy_setopt(wr->h, CURLOPT_WRITEDATA, &wr->resp);
	curl_multi_add_handle(m, wr->h);
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

int bench_apiserver_main(int argc, char **argv)
{
	struct bench b;
	struct writer wr[64];
	int inflight = 16, i, running = 0;
	CURLM *m;
	int64_t t0, t1 = 0, *all;
	size_t nall = 0, expected;
	double secs;
	const char *token = getenv("CUEUE_BENCH_TOKEN");

	memset(&b, 0, sizeof(b));
	b.total = 20000;
	b.creates = 5000;
	b.nwatchers = 10;
	b.prefix = "bench";
	for (i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(argv[i], "--url") == 0 && v)
			b.url = argv[++i];
		else if (strcmp(argv[i], "--writes") == 0 && v)
			b.total = strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--creates") == 0 && v)
			b.creates = strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--watchers") == 0 && v)
			b.nwatchers = (int)strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--inflight") == 0 && v)
			inflight = (int)strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--prefix") == 0 && v)
			b.prefix = argv[++i];
		else if (strcmp(argv[i], "--rate") == 0 && v)
			b.rate = strtod(argv[++i], NULL);
		else {
			fprintf(stderr,
			    "usage: cueue-bench apiserver --url "
			    "http://HOST:PORT "
			    "[--writes N] [--creates N] [--watchers N] "
			    "[--inflight N] [--rate WRITES_PER_S] [--prefix "
			    "NAME]  (token in "
			    "$CUEUE_BENCH_TOKEN)\n");
			return 2;
		}
	}
	if (b.url == NULL || token == NULL || b.nwatchers < 0 ||
	    b.nwatchers > 64 || inflight < 1 || inflight > 64 ||
	    b.creates < 1 || b.total < b.creates) {
		fprintf(stderr, "cueue-bench apiserver: bad arguments\n");
		return 2;
	}
	snprintf(b.auth, sizeof(b.auth), "Authorization: Bearer %s", token);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	m = curl_multi_init();
	for (i = 0; i < b.nwatchers; i++) {
		struct watcher *w = &b.w[i];
		char url[512];
		struct curl_slist *h = curl_slist_append(NULL, b.auth);

		snprintf(url, sizeof(url),
		    "%s/api/v1/namespaces/default/configmaps?watch=1&"
		    "labelSelector=bench%%3D%s&timeoutSeconds=3600",
		    b.url, b.prefix);
		cu_buf_init(&w->line, 16u << 20);
		w->h = curl_easy_init();
		curl_easy_setopt(w->h, CURLOPT_URL, url);
		curl_easy_setopt(w->h, CURLOPT_HTTPHEADER, h);
		curl_easy_setopt(w->h, CURLOPT_WRITEFUNCTION, watch_data);
		curl_easy_setopt(w->h, CURLOPT_WRITEDATA, w);
		curl_easy_setopt(w->h, CURLOPT_PRIVATE, h);
		curl_multi_add_handle(m, w->h);
	}
	/* Let the watches connect before the first write. */
	for (i = 0; i < 50; i++) {
		curl_multi_perform(m, &running);
		curl_multi_poll(m, NULL, 0, 10, NULL);
	}
	memset(wr, 0, sizeof(wr));
	t0 = b.t0 = cu_time_mono_ns();
	for (i = 0; i < inflight; i++) {
		wr[i].h = curl_easy_init();
		cu_buf_init(&wr[i].resp, 1u << 20);
		curl_easy_setopt(wr[i].h, CURLOPT_PRIVATE, &wr[i]);
		wr[i].idle = true;
	}
	expected = (size_t)b.total * (size_t)b.nwatchers;
	for (;;) {
		CURLMsg *msg;
		int left;
		size_t got = 0;

		curl_multi_perform(m, &running);
		while ((msg = curl_multi_info_read(m, &left)) != NULL) {
			struct writer *w = NULL;
			long code = 0;
			int j;

			if (msg->msg != CURLMSG_DONE)
				continue;
			for (j = 0; j < inflight; j++)
				if (wr[j].h == msg->easy_handle)
					w = &wr[j];
			if (w == NULL)
				continue; /* a watch ended */
			curl_easy_getinfo(w->h, CURLINFO_RESPONSE_CODE, &code);
			if (msg->data.result != CURLE_OK || code >= 300)
				b.failed++;
			b.done++;
			curl_multi_remove_handle(m, w->h);
			w->idle = true;
		}
		for (i = 0; i < inflight; i++) {
			if (wr[i].idle && may_issue(&b)) {
				wr[i].idle = false;
				issue(&b, m, &wr[i]);
			}
		}
		if (b.done == b.total && b.issued == b.total) {
			t1 = t1 == 0 ? cu_time_mono_ns() : t1;
			for (i = 0; i < b.nwatchers; i++)
				got += b.w[i].nlat;
			if (got >= expected ||
			    cu_time_mono_ns() - t1 > 5000000000LL)
				break;
		} else {
			t1 = 0;
		}
		curl_multi_poll(m, NULL, 0, b.rate > 0 ? 1 : 5, NULL);
	}
	secs = (double)(t1 - t0) / 1e9;
	all = cu_malloc((expected ? expected : 1) * sizeof(*all));
	for (i = 0; all != NULL && i < b.nwatchers; i++) {
		size_t j;

		for (j = 0; j < b.w[i].nlat && nall < expected; j++)
			all[nall++] = b.w[i].lat[j];
	}
	if (all != NULL)
		qsort(all, nall, sizeof(*all), cmp64);
	printf("apiserver: %ld writes (%ld creates, %ld patches) in %.2f s "
	       "= %.0f writes/s, %ld failed\n",
	    b.done, b.creates, b.done - b.creates, secs,
	    secs > 0 ? (double)b.done / secs : 0.0, b.failed);
	if (nall > 0)
		printf("apiserver: %d watchers, %zu/%zu events delivered, "
		       "latency p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
		    b.nwatchers, nall, expected, all[nall / 2] / 1e6,
		    all[(nall * 99) / 100] / 1e6, all[nall - 1] / 1e6);
	printf("{\"writes_per_s\": %.0f, \"watch_p50_ms\": %.3f, "
	       "\"watch_p99_ms\": %.3f, \"delivered\": %zu, \"expected\": "
	       "%zu, \"failed\": %ld}\n",
	    secs > 0 ? (double)b.done / secs : 0.0,
	    nall ? all[nall / 2] / 1e6 : -1.0,
	    nall ? all[(nall * 99) / 100] / 1e6 : -1.0, nall, expected,
	    b.failed);
	cu_free(all);
	for (i = 0; i < inflight; i++) {
		if (wr[i].h == NULL)
			continue;
		curl_easy_cleanup(wr[i].h);
		curl_slist_free_all(wr[i].hdrs);
		cu_free(wr[i].body);
		cu_buf_dispose(&wr[i].resp);
	}
	for (i = 0; i < b.nwatchers; i++) {
		struct curl_slist *h = NULL;

		curl_easy_getinfo(b.w[i].h, CURLINFO_PRIVATE, (char **)&h);
		curl_multi_remove_handle(m, b.w[i].h);
		curl_easy_cleanup(b.w[i].h);
		curl_slist_free_all(h);
		cu_buf_dispose(&b.w[i].line);
		cu_free(b.w[i].lat);
	}
	curl_multi_cleanup(m);
	curl_global_cleanup();
	return b.failed == 0 && nall == expected ? 0 : 1;
}
