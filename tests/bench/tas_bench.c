/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/bench/tas_bench.c - `cueue-bench tas`: topology-aware placement
 * decisions per second on 1,000 Nodes in 3 levels (10 blocks x 10 racks
 * x 10 hosts, 8 cpu each) for 10,000 pending podSets (required rack,
 * preferred rack and unconstrained, 1..16 pods of 1 cpu); a podSet that
 * fits is charged to the tree and the oldest admitted one released once
 * 500 are held, so the tree stays partly full. Reports decisions/s and
 * the p50/p99 time of one decision. `cueue-bench tas slices`: the same
 * with 2..16 pods in host slices of 2 (tas/slice.c's general form).
 *
 * `cueue-bench tas filter`: the same with every 10th host tainted
 * (NoSchedule), 20 labels per host and 9 hosts out of 10 labelled
 * pool=a; the podSets alternate a toleration of the taint and a
 * nodeSelector pool=a (the filtered placement path).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cu.h"
#include "tests/bench/bench.h"
#include "tas/tas.h"

int bench_tas_main(int argc, char **argv);
int bench_tas_cycle(void); /* tas_cycle_bench.c */

#define N_DECISIONS 10000
#define HELD 500

int bench_tas_main(int argc, char **argv)
{
	const char *levels[] = {"block", "rack", TAS_HOSTNAME_LABEL};
	static struct api_topology_assignment held[HELD];
	static int64_t lat[N_DECISIONS];
	struct tas_amount cpu[] = {{"cpu", 1000}};
	struct tas_amount alloc[] = {{"cpu", 8000}, {"pods", 110}};
	static const struct tas_toleration tol[] = {
	    {"dedicated", NULL, NULL, true}};
	static const struct tas_label pool[] = {{"pool", "a"}};
	const struct tas_filter ftol = {tol, 1, NULL, 0, NULL, 0, NULL, 0};
	const struct tas_filter fsel = {NULL, 0, NULL, 0, pool, 1, NULL, 0};
	const struct tas_taint taint = {"dedicated", NULL, "NoSchedule"};
	bool filtered = argc > 1 && strcmp(argv[1], "filter") == 0;

	if (argc > 1 && strcmp(argv[1], "cycle") == 0)
		return bench_tas_cycle();
	struct tas_tree *t;
	size_t n_held = 0, oldest = 0, admitted = 0, i;
	int64_t t0, total;
	cu_error err;
	int b, r, h, k, rc = 1;
	bool slices = argc > 1 && strcmp(argv[1], "slices") == 0;

	if (tas_tree_new("bench", levels, 3, &t, &err) != CU_OK)
		goto fail;
	for (b = 0; b < 10; b++)
		for (r = 0; r < 10; r++)
			for (h = 0; h < 10; h++) {
				struct api_strmap l = {NULL, 0};
				char bv[48], rv[48], hv[64];

				snprintf(bv, sizeof(bv), "b%d", b);
				snprintf(rv, sizeof(rv), "b%d-r%d", b, r);
				snprintf(
				    hv, sizeof(hv), "b%d-r%d-h%d", b, r, h);
				/* filtered: labels as real Nodes carry them */
				for (k = 0; filtered && k < 16; k++) {
					char lk[48];

					snprintf(lk, sizeof(lk),
					    "node.example.com/label-%02d", k);
					if (api_strmap_set(&l, lk, "x", &err))
						goto fail;
				}
				if (api_strmap_set(&l, "block", bv, &err) ||
				    api_strmap_set(&l, "rack", rv, &err) ||
				    api_strmap_set(
					&l, TAS_HOSTNAME_LABEL, hv, &err) ||
				    (filtered && h != 0 &&
					api_strmap_set(
					    &l, "pool", "a", &err)) ||
				    tas_tree_node_put(t, hv, &l, alloc, 2,
					&taint, filtered && h == 0 ? 1 : 0,
					true, &err)) {
					api_strmap_dispose(&l);
					goto fail;
				}
				api_strmap_dispose(&l);
			}
	srand(42);
	total = cu_time_mono_ns();
	for (i = 0; i < N_DECISIONS; i++) {
		struct tas_request q = {(enum tas_mode)(1 + i % 3), "rack",
		    1 + rand() % 16, cpu, 1, NULL, 0,
		    !filtered ? NULL
		    : i % 2   ? &fsel
			      : &ftol,
		    NULL, 0};

		if (slices) {
			q.count = 2 * (1 + q.count / 2 % 8);
			q.slice_level = TAS_HOSTNAME_LABEL;
			q.slice_size = 2;
		}
		struct api_topology_assignment a;
		char msg[160];
		int prc;

		t0 = cu_time_mono_ns();
		prc = tas_place(t, &q, &a, msg, sizeof(msg), &err);
		if (prc == CU_OK) {
			if (n_held == HELD) {
				if (tas_tree_assignment_usage(t, &held[oldest],
					cpu, 1, -1, &err) != CU_OK)
					goto fail;
				api_topology_assignment_dispose(&held[oldest]);
				held[oldest] = a;
				oldest = (oldest + 1) % HELD;
			} else {
				held[n_held++] = a;
			}
			if (tas_tree_assignment_usage(t, &a, cpu, 1, 1, &err) !=
			    CU_OK)
				goto fail;
			admitted++;
		} else if (prc != TAS_NOFIT) {
			goto fail;
		}
		lat[i] = cu_time_mono_ns() - t0;
	}
	total = cu_time_mono_ns() - total;
	qsort(lat, N_DECISIONS, sizeof(lat[0]), bench_cmp_i64);
	printf("tas%s: %d placement decisions on 1000 nodes (3 levels), %zu "
	       "placed: %.0f decisions/s, p50 %.1f us, p99 %.1f us\n",
	    slices     ? " (host slices of 2)"
	    : filtered ? " (filtered)"
		       : "",
	    N_DECISIONS, admitted, (double)N_DECISIONS / ((double)total / 1e9),
	    (double)lat[N_DECISIONS / 2] / 1e3,
	    (double)lat[N_DECISIONS * 99 / 100] / 1e3);
	rc = 0;
fail:
	if (rc != 0)
		fprintf(stderr, "cueue-bench tas: %s\n", err.msg);
	for (i = 0; i < n_held; i++)
		api_topology_assignment_dispose(&held[i]);
	tas_tree_free(t);
	return rc;
}
