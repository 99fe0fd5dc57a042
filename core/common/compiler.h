/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * common/compiler.h: the compiler attributes the core's headers use.  Empty on a
 * compiler without GNU extensions: they help the checks, never the meaning.
 */
#ifndef OUTBOX_CORE_COMMON_COMPILER_H
#define OUTBOX_CORE_COMMON_COMPILER_H

#if defined(__GNUC__)
#define OUTBOX_PRINTF(fmt_idx, arg_idx) __attribute__((format(printf, fmt_idx, arg_idx)))
#define OUTBOX_MUSTCHECK __attribute__((warn_unused_result))
#define OUTBOX_NORETURN __attribute__((noreturn))
#define outbox_unlikely(x) __builtin_expect(!!(x), 0)
#else
#define OUTBOX_PRINTF(fmt_idx, arg_idx)
#define OUTBOX_MUSTCHECK
#define OUTBOX_NORETURN
#define outbox_unlikely(x) (x)
#endif

#endif
