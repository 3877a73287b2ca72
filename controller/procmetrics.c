/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/procmetrics.c - the process_* families Prometheus client
 * libraries export on Linux (CPU seconds, resident and virtual memory,
 * open and maximum file descriptors, start time), read from /proc/self at
 * scrape time: a handful of small reads, whatever the cluster's size.
 * The parsers are pure and unit-tested; ctl_proc_render does the I/O.
 */
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controller/metrics.h"

/* The stat fields after "pid (comm) ", counted from the state (field 3
 * of proc(5)): utime 14, stime 15, starttime 22, vsize 23, rss 24. */
#define STAT_UTIME (14 - 3)
#define STAT_STIME (15 - 3)
#define STAT_START (22 - 3)
#define STAT_VSIZE (23 - 3)
#define STAT_RSS (24 - 3)

int ctl_proc_parse_stat(const char *text, struct ctl_proc_stat *out)
{
	const char *p = text != NULL ? strrchr(text, ')') : NULL;
	unsigned long long v[STAT_RSS + 1];
	int i;

	memset(out, 0, sizeof(*out));
	if (p == NULL)
		return CU_EINVAL;
	p++;
	for (i = 0; i <= STAT_RSS; i++) {
		char *end;

		while (*p == ' ')
			p++;
		if (*p == '\0' || *p == '\n')
			return CU_EINVAL;
		if (i == 0) { /* the state: one letter */
			v[i] = 0;
			p += strcspn(p, " ");
			continue;
		}
		/* rss may be negative in theory; nothing else is */
		if (*p == '-') {
			v[i] = 0;
			p += strcspn(p, " ");
			continue;
		}
		v[i] = strtoull(p, &end, 10);
		if (end == p || (*end != ' ' && *end != '\n' && *end != '\0'))
			return CU_EINVAL;
		p = end;
	}
	out->cpu_ticks = v[STAT_UTIME] + v[STAT_STIME];
	out->start_ticks = v[STAT_START];
	out->vsize = v[STAT_VSIZE];
	out->rss_pages = v[STAT_RSS];
	return CU_OK;
}

int ctl_proc_parse_btime(const char *text, uint64_t *btime)
{
	const char *p = text;

	while (p != NULL && *p != '\0') {
		if (strncmp(p, "btime ", 6) == 0) {
			char *end;
			unsigned long long b = strtoull(p + 6, &end, 10);

			if (end == p + 6)
				return CU_EINVAL;
			*btime = b;
			return CU_OK;
		}
		p = strchr(p, '\n');
		if (p != NULL)
			p++;
	}
	return CU_ENOTFOUND;
}

int ctl_proc_parse_max_fds(const char *text, double *max)
{
	static const char key[] = "Max open files";
	const char *p = text != NULL ? strstr(text, key) : NULL;
	char *end;
	unsigned long long v;

	if (p == NULL)
		return CU_ENOTFOUND;
	p += sizeof(key) - 1;
	while (*p == ' ')
		p++;
	if (strncmp(p, "unlimited", 9) == 0) {
		*max = INFINITY;
		return CU_OK;
	}
	v = strtoull(p, &end, 10);
	if (end == p)
		return CU_EINVAL;
	*max = (double)v;
	return CU_OK;
}

/* The whole (small) file at path into buf (NUL-terminated); false when
 * it cannot be read. */
static bool read_small(const char *path, char *buf, size_t size)
{
	size_t n = 0;
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	while (n + 1 < size && (r = read(fd, buf + n, size - 1 - n)) > 0)
		n += (size_t)r;
	close(fd);
	buf[n] = '\0';
	return n > 0;
}

static int count_fds(double *out)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	size_t n = 0;

	if (d == NULL)
		return CU_ENOTFOUND;
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	*out = (double)n;
	return CU_OK;
}

static int family(
    cu_buf *out, const char *name, const char *type, const char *help, double v)
{
	char num[CTL_PROM_FLOAT_LEN];

	ctl_prom_format_float(v, num);
	return cu_buf_addf(out, "# HELP %s %s\n# TYPE %s %s\n%s %s\n", name,
	    help, name, type, name, num);
}

int ctl_proc_render(cu_buf *out)
{
	char buf[4096];
	struct ctl_proc_stat st;
	long hz = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	uint64_t btime = 0;
	double fds, max_fds;
	bool have_stat, have_btime, have_max;
	int rc = CU_OK;

	if (hz <= 0)
		hz = 100;
	if (page <= 0)
		page = 4096;
	have_stat = read_small("/proc/self/stat", buf, sizeof(buf)) &&
		    ctl_proc_parse_stat(buf, &st) == CU_OK;
	have_btime = read_small("/proc/stat", buf, sizeof(buf)) &&
		     ctl_proc_parse_btime(buf, &btime) == CU_OK;
	have_max = read_small("/proc/self/limits", buf, sizeof(buf)) &&
		   ctl_proc_parse_max_fds(buf, &max_fds) == CU_OK;
	/* Sorted by name, as the registry renders. */
	if (have_stat)
		rc = family(out, "process_cpu_seconds_total", "counter",
		    "User and system CPU time used by the process, in "
		    "seconds.",
		    (double)st.cpu_ticks / (double)hz);
	if (rc == CU_OK && have_max)
		rc = family(out, "process_max_fds", "gauge",
		    "The process's (soft) limit on open file descriptors.",
		    max_fds);
	if (rc == CU_OK && count_fds(&fds) == CU_OK)
		rc = family(out, "process_open_fds", "gauge",
		    "File descriptors the process has open.", fds);
	if (rc == CU_OK && have_stat)
		rc = family(out, "process_resident_memory_bytes", "gauge",
		    "Resident set size of the process, in bytes.",
		    (double)st.rss_pages * (double)page);
	if (rc == CU_OK && have_stat && have_btime)
		rc = family(out, "process_start_time_seconds", "gauge",
		    "When the process started, in seconds since the Unix "
		    "epoch.",
		    (double)btime + (double)st.start_ticks / (double)hz);
	if (rc == CU_OK && have_stat)
		rc = family(out, "process_virtual_memory_bytes", "gauge",
		    "Virtual memory size of the process, in bytes.",
		    (double)st.vsize);
	return rc;
}
