/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * bench/bench_schedstat.c: a task's time on a CPU and waiting for one,
 * from Linux's /proc/PID/schedstat and /proc/self/task/TID/schedstat, and
 * the whole machine's busy time from /proc/stat (see bench.h).  The
 * kernel's scheduler statistics: the first field is the nanoseconds the
 * task ran, the second the nanoseconds it was runnable but waited in a run
 * queue -- the one figure that tells a machine short of CPU from a server
 * that waits for locks or for its disk.
 */
#include "bench/bench.h"

#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static bool read_schedstat(const char *path, struct bench_sched *out)
{
	FILE *f = fopen(path, "re");
	long long run = -1, wait = -1;
	int n;

	if (f == NULL)
		return false;
	n = fscanf(f, "%lld %lld", &run, &wait);
	fclose(f);
	/* A kernel without scheduler statistics prints zeros. */
	if (n != 2 || run <= 0 || wait < 0)
		return false;
	out->run_ns = run;
	out->wait_ns = wait;
	out->have = true;
	return true;
}

void bench_sched_backend(int pid, struct bench_sched *out)
{
	char path[64], why[160];

	out->have = false;
	if (pid <= 0 || bench_local_postmaster((pid_t)pid, why, sizeof(why)) == 0)
		return;
	snprintf(path, sizeof(path), "/proc/%d/schedstat", pid);
	(void)read_schedstat(path, out);
}

void bench_sched_thread(struct bench_sched *out)
{
	char path[64];

	out->have = false;
	snprintf(path, sizeof(path), "/proc/self/task/%ld/schedstat", (long)syscall(SYS_gettid));
	(void)read_schedstat(path, out);
}

double bench_machine_cpu_seconds(void)
{
	FILE *f = fopen("/proc/stat", "re");
	unsigned long long user = 0, nice = 0, sys = 0, idle = 0, iowait = 0, irq = 0, softirq = 0;
	int n;

	if (f == NULL)
		return -1;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu", &user, &nice, &sys, &idle, &iowait,
	           &irq, &softirq);
	fclose(f);
	if (n != 7)
		return -1;
	return (double)(user + nice + sys + irq + softirq) / (double)sysconf(_SC_CLK_TCK);
}
