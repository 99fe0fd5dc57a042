/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * common/process_metrics.h: the process_* series every Prometheus client
 * library exports (docs/metrics.md), so that the usual dashboards and
 * alerts work on outboxd unchanged.
 */
#ifndef OUTBOX_CORE_COMMON_PROCESS_METRICS_H
#define OUTBOX_CORE_COMMON_PROCESS_METRICS_H

#include <stdio.h>

/*
 * Writes process_cpu_seconds_total, process_resident_memory_bytes,
 * process_virtual_memory_bytes, process_start_time_seconds,
 * process_open_fds and process_max_fds of the calling process, read from
 * getrusage(), getrlimit() and /proc/self; a value that cannot be read
 * is left out.  Returns 0, or -1 if a write to out failed.
 */
int process_metrics_write(FILE *out);

#endif
