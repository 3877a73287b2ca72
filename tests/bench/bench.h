/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/bench/bench.h - helpers shared by cueue-bench's subcommands
 * (tests/bench/bench_util.c). Prefix: bench_.
 */
#ifndef CU_BENCH_BENCH_H
#define CU_BENCH_BENCH_H

#include <stddef.h>

/* Remove directory dir [borrowed] and the plain files in it; best effort
 * (a scratch directory of a run: nothing to report if it fails). */
void bench_rm_tree(const char *dir);

/* qsort comparator of int64_t values (latency samples), ascending. */
int bench_cmp_i64(const void *a, const void *b);

/* The bytes of file path [borrowed] (at most 64 MiB), NUL-terminated
 * [owned: cu_free], *len their count; NULL when unreadable. */
char *bench_slurp(const char *path, size_t *len);

#endif /* CU_BENCH_BENCH_H */
