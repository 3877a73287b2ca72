/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/bench/watch_bench.c - `cueue-bench watch [FILE...]`: what one
 * watch event costs the informer's decode path (api/informer.c), in time
 * and in allocations, two ways over the same lines:
 *
 *   whole: the line parsed whole (managedFields included), the object's
 *          managedFields deleted from the tree, the object written out
 *          again as the cached compact text (what the informer did before
 *          it decoded only what is read);
 *   lean:  api_json_lean (managedFields dropped from the bytes, the
 *          object's place kept), the lean line parsed, the object's lean
 *          text copied as the cached text (what it does now).
 *
 * Both must give the same tree and the same cached object; a difference
 * is reported and fails the run. FILE: newline-delimited watch events
 * (default tests/data/watch/workloads.ndjson and jobs.ndjson, recorded
 * from cueue-apiserver during a controller run).
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "api/json.h"
#include "lib/cu.h"
#include "tests/bench/bench.h"

int bench_watch_main(int argc, char **argv);

struct way {
	int64_t ns;
	uint64_t allocs;
	size_t events, text_bytes;
};

/* One event the old way: *text [owned] the cached object's text. */
static int decode_whole(
    const char *line, size_t len, json_t **ev, char **text, size_t *tlen)
{
	json_t *obj;

	if (api_json_loadb(ev, line, len, 0, NULL) != CU_OK)
		return CU_EPARSE;
	obj = json_object_get(*ev, "object");
	json_object_del(json_object_get(obj, "metadata"), "managedFields");
	return api_json_dumps(obj, JSON_COMPACT, 0, text, tlen);
}

/* One event the new way. */
static int decode_lean(
    const char *line, size_t len, json_t **ev, char **text, size_t *tlen)
{
	struct api_json_lean l;
	int rc = api_json_lean(&l, line, len, "object");

	if (rc == CU_OK)
		rc = api_json_loadb(ev, l.text, l.len, 0, NULL);
	if (rc == CU_OK) {
		*text = cu_strndup(l.text + l.span_off, l.span_len);
		*tlen = l.span_len;
		rc = *text != NULL ? CU_OK : CU_ENOMEM;
	}
	api_json_lean_dispose(&l);
	return rc;
}

typedef int (*decode_fn)(const char *, size_t, json_t **, char **, size_t *);

/* Time and count fn over every line of buf, rounds times. */
static int run(
    decode_fn fn, const char *buf, size_t len, int rounds, struct way *w)
{
	int r;

	for (r = 0; r < rounds; r++) {
		const char *p = buf, *end = buf + len;

		while (p < end) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t n =
			    nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
			json_t *ev = NULL;
			char *text = NULL;
			size_t tlen = 0;
			uint64_t a0 = cu_mem_calls();
			int64_t t0 = cu_time_mono_ns();
			int rc = n > 0 ? fn(p, n, &ev, &text, &tlen) : CU_OK;

			if (n > 0) {
				json_decref(ev);
				cu_free(text);
				w->ns += cu_time_mono_ns() - t0;
				w->allocs += cu_mem_calls() - a0;
				w->events++;
				w->text_bytes += tlen;
			}
			if (rc != CU_OK)
				return rc;
			p = nl != NULL ? nl + 1 : end;
		}
	}
	return CU_OK;
}

/* Both ways agree on every line: the same event tree, the same cached
 * object. */
static int check_same(const char *buf, size_t len, const char *path)
{
	const char *p = buf, *end = buf + len;
	size_t lineno = 0;

	for (; p < end; lineno++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
		json_t *a = NULL, *b = NULL, *ta = NULL, *tb = NULL;
		char *sa = NULL, *sb = NULL;
		size_t la = 0, lb = 0;
		bool same;

		if (n == 0) {
			p = nl != NULL ? nl + 1 : end;
			continue;
		}
		same = decode_whole(p, n, &a, &sa, &la) == CU_OK &&
		       decode_lean(p, n, &b, &sb, &lb) == CU_OK &&
		       json_equal(a, b) &&
		       api_json_loadb(&ta, sa, la, 0, NULL) == CU_OK &&
		       api_json_loadb(&tb, sb, lb, 0, NULL) == CU_OK &&
		       json_equal(ta, tb);
		json_decref(a);
		json_decref(b);
		json_decref(ta);
		json_decref(tb);
		cu_free(sa);
		cu_free(sb);
		if (!same) {
			fprintf(stderr,
			    "cueue-bench watch: %s:%zu: the two ways differ\n",
			    path, lineno + 1);
			return CU_EINVAL;
		}
		p = nl != NULL ? nl + 1 : end;
	}
	return CU_OK;
}

static int bench_file(const char *path)
{
	size_t len;
	char *buf = bench_slurp(path, &len);
	struct way whole = {0}, lean = {0};
	int rounds = 200, rc;

	if (buf == NULL) {
		fprintf(stderr, "cueue-bench watch: cannot read %s\n", path);
		return 2;
	}
	rc = check_same(buf, len, path);
	/* interleaved, so that both ways see the same machine load */
	while (rc == CU_OK && rounds-- > 0) {
		rc = run(decode_whole, buf, len, 1, &whole);
		if (rc == CU_OK)
			rc = run(decode_lean, buf, len, 1, &lean);
	}
	if (rc == CU_OK && whole.events > 0) {
		double n = (double)whole.events;

		printf("watch %s: %zu events of %.0f bytes on average\n", path,
		    whole.events / 200, (double)len / (n / 200));
		printf("  whole: %7.1f us/event, %7.1f allocations/event, "
		       "cached %.0f bytes\n",
		    (double)whole.ns / n / 1e3, (double)whole.allocs / n,
		    (double)whole.text_bytes / n);
		printf("  lean:  %7.1f us/event, %7.1f allocations/event, "
		       "cached %.0f bytes\n",
		    (double)lean.ns / n / 1e3, (double)lean.allocs / n,
		    (double)lean.text_bytes / n);
		printf("  lean/whole: time %.2f, allocations %.2f\n",
		    (double)lean.ns / (double)whole.ns,
		    (double)lean.allocs / (double)whole.allocs);
	} else if (rc != CU_OK && rc != CU_EINVAL) {
		fprintf(stderr, "cueue-bench watch: %s: %s\n", path,
		    cu_err_desc(rc));
	}
	cu_free(buf);
	return rc == CU_OK ? 0 : 1;
}

int bench_watch_main(int argc, char **argv)
{
	static const char *const dflt[] = {"tests/data/watch/workloads.ndjson",
	    "tests/data/watch/jobs.ndjson"};
	int i, rc = 0;

	/* count jansson's allocations as the controller does */
	json_set_alloc_funcs(cu_malloc, cu_free);
	if (argc > 1) {
		for (i = 1; i < argc; i++)
			rc |= bench_file(argv[i]);
	} else {
		for (i = 0; i < 2; i++)
			rc |= bench_file(dflt[i]);
	}
	return rc;
}
