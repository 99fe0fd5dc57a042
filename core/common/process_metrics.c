/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * common/process_metrics.c: the process_* series (see process_metrics.h),
 * computed at scrape time: nothing is recorded between scrapes.
 */
#include "common/process_metrics.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static void write_series(FILE *out, const char *name, const char *type, const char *help,
                        double value)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n%s %.17g\n", name, help, name, type, name, value);
}

/* Reads the whole of a small /proc file into buf; its length or -1. */
static long read_proc(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (f == NULL)
		return -1;
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = '\0';
	return (long)n;
}

/* Seconds since the epoch at which the process started: its start in
 * clock ticks after boot (field 22 of /proc/self/stat) plus the boot time. */
static int start_time(double *out)
{
	char stat[1024], boot[8192];
	const char *p, *btime;
	unsigned long long ticks;
	long hz = sysconf(_SC_CLK_TCK);

	if (hz <= 0 || read_proc("/proc/self/stat", stat, sizeof(stat)) < 0 ||
	    read_proc("/proc/stat", boot, sizeof(boot)) < 0)
		return -1;
	/* The command name (field 2) may hold spaces and parentheses. */
	p = strrchr(stat, ')');
	for (int field = 2; p != NULL && field < 22; field++)
		p = strchr(p + 1, ' ');
	btime = strstr(boot, "\nbtime ");
	if (p == NULL || btime == NULL || sscanf(p + 1, "%llu", &ticks) != 1)
		return -1;
	*out = strtod(btime + 7, NULL) + (double)ticks / (double)hz;
	return 0;
}

/* Entries of /proc/self/fd, less the one the listing itself opens. */
static int open_fds(double *out)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	long n = 0;

	if (d == NULL)
		return -1;
	for (de = readdir(d); de != NULL; de = readdir(d))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	*out = (double)(n > 0 ? n - 1 : 0);
	return 0;
}

int process_metrics_write(FILE *out)
{
	struct rusage ru;
	struct rlimit rl;
	char statm[256];
	unsigned long long vm_pages, rss_pages;
	double v;

	if (getrusage(RUSAGE_SELF, &ru) == 0)
		write_series(out, "process_cpu_seconds_total", "counter",
		            "Total user and system CPU time spent in seconds.",
		            (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
		            (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
	if (read_proc("/proc/self/statm", statm, sizeof(statm)) > 0 &&
	    sscanf(statm, "%llu %llu", &vm_pages, &rss_pages) == 2) {
		double page = (double)sysconf(_SC_PAGESIZE);

		write_series(out, "process_resident_memory_bytes", "gauge",
		            "Resident memory size in bytes.", (double)rss_pages * page);
		write_series(out, "process_virtual_memory_bytes", "gauge",
		            "Virtual memory size in bytes.", (double)vm_pages * page);
	}
	if (start_time(&v) == 0)
		write_series(out, "process_start_time_seconds", "gauge",
		            "Start time of the process since unix epoch in seconds.", v);
	if (open_fds(&v) == 0)
		write_series(out, "process_open_fds", "gauge", "Number of open file descriptors.", v);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		write_series(out, "process_max_fds", "gauge",
		            "Maximum number of open file descriptors.", (double)rl.rlim_cur);
	return ferror(out) ? -1 : 0;
}
