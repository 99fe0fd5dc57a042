/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * outbox/plugin.h: the handler plugin ABI of outboxd.
 *
 * A plugin is a shared object in the plugin directory that exports exactly
 * one function, outbox_plugin_describe(), returning a const descriptor.  The
 * host checks the descriptor's header (magic, size, ABI major/minor) before it
 * calls any other plugin code, validates the destination's "plugin.*" keys
 * against the descriptor's option table, and then drives the lifecycle:
 *
 *   describe  once per .so
 *   init      once per [destination:NAME] that names the plugin
 *   execute   once per claimed job, outside any database transaction
 *   commit    after each successful execute, inside the host's transaction
 *             that also marks the job SUCCEEDED: both commit or neither
 *             does (it may be called again when that transaction is rolled
 *             back; docs/plugin-api.md, section 11)
 *   destroy   exactly once per init, even when init failed, at shutdown
 *             or when a reload removes the destination
 *
 * Threading: the host calls execute() and commit() of one instance from its
 * worker threads.  Unless the descriptor sets OUTBOX_PLUGIN_CONCURRENT the
 * host serialises all calls into one instance (one mutex per instance).
 * Different instances of one plugin may run in parallel, so a plugin keeps
 * no mutable global state.  init and destroy are never concurrent with
 * anything else on that instance.
 *
 * Versioning: abi_major must equal the host's, the plugin's abi_minor must
 * be <= the host's, and struct_size must be at least the descriptor size of
 * that minor.  Members are only ever appended, in a new minor version.
 * 1.1 appended struct outbox_result's retry_after_ms; a plugin built
 * against 1.0 loads unchanged (docs/plugin-api.md, "Versions").
 *
 * Plugins never exit, abort or assert; they report through the verdict.
 * Plugins never call process-wide init/cleanup functions
 * (curl_global_init, OpenSSL init): the host has done that.
 *
 * Ownership words used below: "borrowed" (valid for the duration of the call
 * only, do not free), "takes ownership" (the callee frees), "new reference" /
 * "borrowed reference" (jansson reference counts).
 */
#ifndef OUTBOX_INCLUDE_PLUGIN_H
#define OUTBOX_INCLUDE_PLUGIN_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

#define OUTBOX_PLUGIN_ABI_MAGIC 0x4f425850u /* "OBXP" */
#define OUTBOX_PLUGIN_ABI_MAJOR 1
#define OUTBOX_PLUGIN_ABI_MINOR 1

/*
 * Layout-relevant facts a plugin was compiled with; the host refuses a
 * plugin whose fingerprint differs from its own.
 */
#define OUTBOX_PLUGIN_STR_(x) #x
#define OUTBOX_PLUGIN_STR(x) OUTBOX_PLUGIN_STR_(x)
#define OUTBOX_PLUGIN_FINGERPRINT                                   \
	"jansson=" OUTBOX_PLUGIN_STR(JANSSON_MAJOR_VERSION)             \
	";ptr=" OUTBOX_PLUGIN_STR(__SIZEOF_POINTER__)                   \
	";long=" OUTBOX_PLUGIN_STR(__SIZEOF_LONG__)

/* The verdict of execute() and commit(). */
enum outbox_verdict {
	OUTBOX_OK = 0,    /* done: commit() follows, then SUCCEEDED */
	OUTBOX_RETRY = 1, /* transient (network, 5xx, timeout): PENDING with backoff */
	OUTBOX_FAIL = 2,  /* permanent (4xx, invalid input): DEAD, reason PERMANENT */
};

enum outbox_log_level {
	OUTBOX_LOG_ERROR = 0,
	OUTBOX_LOG_WARNING = 1,
	OUTBOX_LOG_INFO = 2,
	OUTBOX_LOG_DEBUG = 3,
};

/* Types of "plugin.*" options; the host checks values before init(). */
enum outbox_option_type {
	OUTBOX_OPT_STRING = 0, /* any non-empty text */
	OUTBOX_OPT_INT = 1,    /* decimal integer within [min, max] (see below) */
	OUTBOX_OPT_DOUBLE = 2, /* finite decimal number within [min, max] */
	OUTBOX_OPT_BOOL = 3,   /* true/false, yes/no, on/off, 1/0 */
	OUTBOX_OPT_URL = 4,    /* http:// or https:// URL */
};

/*
 * One "plugin.NAME" key.  The table is terminated by an entry whose name is
 * NULL.  default_value NULL means the key is required.  min and max bound
 * INT and DOUBLE values (ignored for other types; min == max == 0 means
 * unbounded).  OUTBOX_OPT_SECRET_ENV in flags marks a STRING key whose value
 * names an environment variable holding a secret: the host checks at startup
 * that the variable is set and not empty, and never logs its content; the
 * plugin reads it with getenv(host->option(ctx, name)) in init().
 * OUTBOX_OPT_PREFIX (ABI 1.1) marks a STRING entry whose name ends in "."
 * (e.g. "header."): it accepts every key "plugin.header.SUFFIX" of the
 * destination, any number of them, and is never required.  option(ctx,
 * "header.") returns them as "SUFFIX=VALUE" lines joined by '\n', in file
 * order ("" when there are none); a host older than 1.1 rejects such keys
 * as unknown.
 * The table is borrowed by the host for as long as the .so stays loaded.
 */
#define OUTBOX_OPT_SECRET_ENV 0x1u
#define OUTBOX_OPT_PREFIX 0x2u
struct outbox_option {
	const char *name;          /* without the "plugin." prefix */
	enum outbox_option_type type;
	const char *default_value; /* NULL: required */
	double min;
	double max;
	unsigned flags;
	const char *help;          /* one line, shown by --check-config errors */
};

/* Opaque host objects.  The host owns all of them. */
struct outbox_ctx;      /* one per plugin instance (destination) */
struct outbox_tx;       /* the transaction commit() runs in */

/* One claimed job, as execute() and commit() see it. All fields borrowed. */
struct outbox_job {
	const char *job_id;          /* 64 lower-case hex digits */
	const char *job_type;        /* e.g. "news", "price", "explanation" */
	const char *destination;     /* the [destination:NAME] it came through */
	const json_t *payload;       /* borrowed reference: the job's input */
	int attempt;                 /* 1 for the first run, 2 after one retry, ... */
	int redrive_generation;
};

/*
 * Where execute() leaves its outcome.
 *   msg     host-owned buffer of msg_size bytes (always >= 256), empty on
 *           entry; write a short reason for RETRY/FAIL (it is stored as the
 *           job's last_error).  The host NUL-terminates it after the call.
 *   output  set it to a NEW reference (or leave NULL); the host takes
 *           ownership and passes it, borrowed, to commit().  The host drops
 *           it when the verdict is not OUTBOX_OK.
 *   retry_after_ms  (ABI 1.1) with OUTBOX_RETRY only: the earliest time the
 *           next attempt may start, in milliseconds from now, e.g. from an
 *           HTTP Retry-After header.  0 on entry; left 0, the destination's
 *           backoff decides.  The host caps it at the destination's
 *           backoff maximum (backoff_max_seconds) and ignores it for any
 *           other verdict.
 */
struct outbox_result {
	char *msg;
	size_t msg_size;
	json_t *output;
	int64_t retry_after_ms; /* ABI 1.1 */
};

/*
 * Services the host offers.  Passed to init(); valid until destroy() returns.
 * The table only ever grows at the end: check `size` (or abi_minor) before
 * using a member added after 1.0.
 */
struct outbox_host {
	uint32_t size;      /* sizeof(struct outbox_host) of the host */
	uint32_t abi_minor; /* OUTBOX_PLUGIN_ABI_MINOR of the host */

	/* Log a line prefixed with dest=, plugin= and (inside a call) job=. */
	void (*const log)(struct outbox_ctx *ctx, enum outbox_log_level level,
	                  const char *fmt, ...)
#if defined(__GNUC__)
		__attribute__((format(printf, 3, 4)))
#endif
		;

	/*
	 * Validated option values of this instance, by name without "plugin.".
	 * The returned string is borrowed and lives as long as the instance.
	 * Defaults have been applied.  option() returns NULL for a name not in
	 * the plugin's table (or a key without default the file left out: that
	 * cannot happen, required keys are enforced).  The typed getters return
	 * the parsed value; for an unknown name or a key of another type they
	 * log an error and return 0 (0.0, false).
	 */
	const char *(*const option)(struct outbox_ctx *ctx, const char *name);
	long long (*const option_int)(struct outbox_ctx *ctx, const char *name);
	double (*const option_double)(struct outbox_ctx *ctx, const char *name);
	int (*const option_bool)(struct outbox_ctx *ctx, const char *name);

	/* Wall-clock milliseconds since the epoch (the host's clock). */
	int64_t (*const now_ms)(struct outbox_ctx *ctx);

	/*
	 * Read an S3 artifact (the [s3] bucket) into a new buffer.  On success
	 * returns 0 and *data (caller frees with free()) / *len; returns -1 on a
	 * transient failure and -2 if the object does not exist or access is
	 * denied, with a reason in err.  Until the consumer provides database
	 * and S3 access (e.g. under --check-config) this and the three services
	 * below return -1 with "not available" in err.
	 */
	int (*const artifact_get)(struct outbox_ctx *ctx, const char *key,
	                          char **data, size_t *len, char *err, size_t errlen);

	/*
	 * A read-only query outside any job transaction (e.g. to gather context
	 * in execute).  Parameters are text ($1..$n, nparams may be 0).  On success
	 * returns 0 and *rows is a new reference to a JSON array of objects, one
	 * per row, column name -> text value (SQL NULL -> JSON null).  Returns -1
	 * with a reason in err on failure.
	 */
	int (*const query)(struct outbox_ctx *ctx, const char *sql, int nparams,
	                   const char *const *params, json_t **rows,
	                   char *err, size_t errlen);

	/*
	 * Inside commit() only: run a parameterised statement in the job's
	 * transaction.  rows may be NULL; otherwise as for query().  Returns 0,
	 * or -1 with a reason in err (the host then rolls the transaction back
	 * and retries the job later).
	 */
	int (*const tx_exec)(struct outbox_tx *tx, const char *sql, int nparams,
	                     const char *const *params, json_t **rows,
	                     char *err, size_t errlen);

	/*
	 * Inside commit() only: enqueue a follow-up job (job row + outbox event)
	 * in the job's transaction.  identity (borrowed) is the JSON object of
	 * the new job's identity fields, in the order given; payload (borrowed)
	 * is its input.  job_id_out, if not NULL, receives the 64-hex id plus NUL
	 * (65 bytes).  Re-enqueueing the same identity is a no-op.  Returns 0 or
	 * -1 with a reason in err.
	 */
	int (*const tx_enqueue)(struct outbox_tx *tx, const char *job_type,
	                        const char *destination, const json_t *identity,
	                        const json_t *payload, char *job_id_out,
	                        char *err, size_t errlen);

	/*
	 * (ABI 1.1: check size or abi_minor first.)  Inside execute(): the W3C
	 * traceparent the job's message carried, validated (55 characters),
	 * borrowed until execute() returns; NULL when it carried none, or
	 * outside execute().
	 */
	const char *(*const traceparent)(struct outbox_ctx *ctx);
};

/* Descriptor flags. */
#define OUTBOX_PLUGIN_CONCURRENT 0x1u /* execute() may run concurrently */

struct outbox_plugin {
	/* Header: checked by the host before anything else is touched. */
	uint32_t abi_magic;            /* OUTBOX_PLUGIN_ABI_MAGIC */
	uint32_t struct_size;          /* sizeof(struct outbox_plugin) at build */
	uint16_t abi_major;            /* must equal the host's */
	uint16_t abi_minor;            /* must be <= the host's */
	const char *build_fingerprint; /* OUTBOX_PLUGIN_FINGERPRINT */

	const char *name;              /* e.g. "news_llm"; matches the file name */
	const char *version;           /* the plugin's own version, free form */
	const char *description;       /* one line */
	unsigned flags;                /* OUTBOX_PLUGIN_* */
	const struct outbox_option *options; /* NULL-name terminated; may be NULL */

	/*
	 * Create an instance.  host and ctx are borrowed and live until
	 * destroy().  Store the instance in *instance.  Return 0, or -1 with a
	 * reason in err (NUL-terminated by the host): the host refuses to
	 * start.  destroy() is called exactly once even when init() fails, with
	 * whatever *instance was set to (maybe NULL), so it must accept NULL.
	 * Required, as are destroy and execute.
	 */
	int (*const init)(const struct outbox_host *host, struct outbox_ctx *ctx,
	                  void **instance, char *err, size_t errlen);
	void (*const destroy)(void *instance);

	/* Do the work; no transaction is open.  See struct outbox_result. */
	enum outbox_verdict (*const execute)(void *instance,
	                                     const struct outbox_job *job,
	                                     struct outbox_result *result);

	/*
	 * Store the outcome through host->tx_exec / host->tx_enqueue; output is
	 * the borrowed reference execute() left (may be NULL).  Return OUTBOX_OK;
	 * OUTBOX_RETRY rolls back and retries later; OUTBOX_FAIL rolls back and
	 * marks the job DEAD.  err (msg size >= 256) is NUL-terminated by the
	 * host.  May be NULL when a plugin stores nothing.
	 */
	enum outbox_verdict (*const commit)(void *instance,
	                                    const struct outbox_job *job,
	                                    const json_t *output,
	                                    struct outbox_tx *tx,
	                                    char *err, size_t errlen);
};

/*
 * Fill the header and leave every other member zero, so a member added in
 * a later minor version starts out NULL in old sources:
 *
 *   static const struct outbox_plugin desc = {
 *       OUTBOX_PLUGIN_INIT,
 *       .name = "example", .init = ex_init, ...
 *   };
 */
#define OUTBOX_PLUGIN_INIT                             \
	.abi_magic = OUTBOX_PLUGIN_ABI_MAGIC,              \
	.struct_size = sizeof(struct outbox_plugin),       \
	.abi_major = OUTBOX_PLUGIN_ABI_MAJOR,              \
	.abi_minor = OUTBOX_PLUGIN_ABI_MINOR,              \
	.build_fingerprint = OUTBOX_PLUGIN_FINGERPRINT

/* The one symbol a plugin exports. */
const struct outbox_plugin *outbox_plugin_describe(void);

#ifdef __cplusplus
}
#endif

#endif
