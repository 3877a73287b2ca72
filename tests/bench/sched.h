/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/bench/sched.h - `cueue-bench sched`, the runner of Kueue's
 * scheduler performance test shape: its generator.yaml and rangespec.yaml
 * read as Kueue's runner reads them, the run (sched_bench.c) and the
 * report. Prefix: sched_.
 */
#ifndef CU_BENCH_SCHED_H
#define CU_BENCH_SCHED_H
#include <stddef.h>
#include <stdint.h>

#include "lib/cu.h"

/* One workload template of a workloadsSet. */
struct sched_wl_tmpl {
	char *class_name; /* owned */
	int64_t runtime_ms;
	int32_t priority;
	int64_t request_milli; /* cpu */
};

struct sched_wl_set {
	int count;
	int64_t interval_ms;
	struct sched_wl_tmpl *tmpl; /* owned array */
	size_t ntmpl;
};

struct sched_queue_set {
	char *class_name; /* owned */
	int count;
	int64_t nominal_milli, borrowing_milli; /* borrowing < 0: none */
	char *reclaim, *within;			/* owned; may be NULL */
	struct sched_wl_set *sets;		/* owned array */
	size_t nsets;
};

struct sched_cohort_set {
	char *class_name; /* owned */
	int count;
	struct sched_queue_set *qsets; /* owned array */
	size_t nqsets;
};

/* A generator.yaml. */
struct sched_gen {
	char *flavor; /* owned; resourceFlavor.name, default "rf" */
	struct sched_cohort_set *cohorts; /* owned array */
	size_t ncohorts;
};

/* Load path [borrowed] into *g (zeroed first; release with
 * sched_gen_dispose even on failure). Errors name the field and line:
 * CU_EPARSE, CU_EINVAL, CU_ENOTFOUND/CU_EIO, CU_ENOMEM. */
CU_MUST_CHECK int sched_gen_load(
    struct sched_gen *g, const char *path, cu_error *err);
void sched_gen_dispose(struct sched_gen *g);

/* Workloads the generator creates in all. */
int64_t sched_gen_total(const struct sched_gen *g);
/* The capacity bound in ms: the most loaded cohort's cpu*ms of work
 * divided by its nominal cpu (no schedule can finish sooner). */
int64_t sched_gen_capacity_bound_ms(const struct sched_gen *g);

/* A name -> value limit (class ranges of a range file). */
struct sched_limit {
	char *name; /* owned */
	double value;
};

/* A rangespec.yaml (Kueue's keys), optionally with cueue's own keys for
 * the targets of a run. Absent values are < 0. */
struct sched_ranges {
	double max_wall_ms;
	struct sched_limit *min_usage; /* clusterQueueClassesMinUsage, % */
	size_t nmin_usage;
	struct sched_limit *max_admit; /* wlClassesMaxAvgTimeToAdmissionMs */
	size_t nmax_admit;
	double max_rss_mib;	     /* maxPeakRssMiB */
	double max_cpu_millis;	     /* maxAverageCpuMillis */
	double max_writes_per_admit; /* maxWritesPerAdmittedWorkload */
};

/* Load path [borrowed] into *r (release with sched_ranges_dispose even on
 * failure). Unknown keys are errors naming the key and line. */
CU_MUST_CHECK int sched_ranges_load(
    struct sched_ranges *r, const char *path, cu_error *err);
void sched_ranges_dispose(struct sched_ranges *r);

int bench_sched_main(int argc, char **argv);

#endif /* CU_BENCH_SCHED_H */
