/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * bench/bench_server.c: the PostgreSQL server outbox-bench runs on: whether
 * its commits wait for the WAL flush, and the CPU of its processes (see
 * bench.h).
 */
#include "bench/bench.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/db.h"
#include "common/log.h"

/* One SHOW into out (size len). */
static int show(struct bench *b, const char *name, char *out, size_t len)
{
	char sql[64], err[512];
	PGresult *res;

	snprintf(sql, sizeof(sql), "SHOW %s", name);
	res = db_query(b->conn, sql, 0, NULL, err, sizeof(err));
	if (res == NULL) {
		log_error("could not read \"%s\": %s", name, err);
		return -1;
	}
	snprintf(out, len, "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
	return 0;
}

int bench_check_durable(struct bench *b)
{
	/* Every value of synchronous_commit that waits for the local flush. */
	static const char *const flushing[] = {"on", "local", "remote_write", "remote_apply"};
	char fsync[32], sync[32];

	if (show(b, "fsync", fsync, sizeof(fsync)) < 0 ||
	    show(b, "synchronous_commit", sync, sizeof(sync)) < 0)
		return -1;
	b->durable = false;
	for (size_t i = 0; i < sizeof(flushing) / sizeof(flushing[0]); i++)
		b->durable = b->durable || strcmp(sync, flushing[i]) == 0;
	b->durable = b->durable && strcmp(fsync, "on") == 0;
	snprintf(b->durability, sizeof(b->durability), "fsync=%s synchronous_commit=%s", fsync,
	         sync);
	return 0;
}

/* Fields of /proc/PID/stat after "(comm)": state ppid ... utime stime
 * cutime cstime (fields 3..17 of proc(5)); comm into comm (16 bytes). */
static int read_stat(pid_t pid, char *comm, pid_t *ppid, unsigned long long ticks[4])
{
	char path[64], line[1024];
	const char *open_paren, *close_paren;
	long long cut, cst;
	int pp;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	close_paren = fgets(line, sizeof(line), f) != NULL ? strrchr(line, ')') : NULL;
	fclose(f);
	open_paren = close_paren != NULL ? strchr(line, '(') : NULL;
	if (open_paren == NULL ||
	    sscanf(close_paren + 1, " %*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %lld %lld",
	           &pp, &ticks[0], &ticks[1], &cut, &cst) != 5)
		return -1;
	/* cutime and cstime are signed in proc(5); never negative in practice. */
	ticks[2] = cut > 0 ? (unsigned long long)cut : 0;
	ticks[3] = cst > 0 ? (unsigned long long)cst : 0;
	snprintf(comm, 16, "%.*s", (int)(close_paren - open_paren - 1), open_paren + 1);
	*ppid = (pid_t)pp;
	return 0;
}

double bench_proc_cpu_seconds(pid_t pid, bool children)
{
	unsigned long long t[4];
	char comm[16];
	pid_t ppid;

	if (read_stat(pid, comm, &ppid, t) < 0)
		return -1;
	return (double)(t[0] + t[1] + (children ? t[2] + t[3] : 0)) / (double)sysconf(_SC_CLK_TCK);
}

pid_t bench_local_postmaster(pid_t pid, char *why, size_t len)
{
	unsigned long long t[4];
	char comm[16];
	pid_t ppid, grandparent;

	if (read_stat(pid, comm, &ppid, t) < 0 || strcmp(comm, "postgres") != 0) {
		snprintf(why, len, "backend pid %ld is not a postgres process of this machine",
		         (long)pid);
		return 0;
	}
	if (read_stat(ppid, comm, &grandparent, t) < 0 || strcmp(comm, "postgres") != 0) {
		snprintf(why, len, "the parent of backend pid %ld is not a postgres process", (long)pid);
		return 0;
	}
	return ppid;
}

/* b->conn's backend pid and the postmaster above it, when both are local
 * postgres processes; else postmaster 0 and the reason in why. */
static int find_postmaster(struct bench *b, struct bench_pg_cpu *s, char *why, size_t len)
{
	char err[512];
	PGresult *res = db_query(b->conn, "SELECT pg_backend_pid()", 0, NULL, err, sizeof(err));

	s->postmaster = 0;
	if (res == NULL) {
		log_error("could not read the backend pid: %s", err);
		return -1;
	}
	s->own_backend = (pid_t)strtol(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	s->postmaster = bench_local_postmaster(s->own_backend, why, len);
	return 0;
}

int bench_pg_cpu_sample(struct bench *b, struct bench_pg_cpu *s)
{
	static bool warned;
	char why[160] = "";
	struct dirent *e;
	DIR *proc;

	if (find_postmaster(b, s, why, sizeof(why)) < 0)
		return -1;
	if (s->postmaster == 0) {
		if (!warned)
			log_warning("PostgreSQL's CPU is not measured (%s): its figures are null", why);
		warned = true;
		return 0;
	}
	/* The postmaster's own CPU and that of the backends it has reaped... */
	s->seconds = bench_proc_cpu_seconds(s->postmaster, true);
	proc = opendir("/proc");
	if (proc == NULL || s->seconds < 0) {
		if (proc != NULL)
			closedir(proc);
		s->postmaster = 0;
		return 0;
	}
	/* ...plus every living child but the bench's own backend. */
	while ((e = readdir(proc)) != NULL) {
		unsigned long long t[4];
		char comm[16], *end;
		long pid = strtol(e->d_name, &end, 10);
		pid_t ppid;

		if (*end != '\0' || pid <= 0 || (pid_t)pid == s->own_backend ||
		    read_stat((pid_t)pid, comm, &ppid, t) < 0 || ppid != s->postmaster)
			continue;
		s->seconds += (double)(t[0] + t[1]) / (double)sysconf(_SC_CLK_TCK);
	}
	closedir(proc);
	return 0;
}
