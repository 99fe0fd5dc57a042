/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * plugin/loader.c: find, dlopen and check plugins; run their instances.
 *
 * Nothing in a plugin runs before its descriptor header has been checked:
 * outbox_plugin_describe() only returns a pointer to static data, and the
 * header fields are compared before any callback is called (docs/plugin-api.md, "Loading rules").
 */
#include "plugin/loader.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/log.h"
#include "common/metrics.h"

#if defined(__SANITIZE_ADDRESS__)
#define PLUGIN_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PLUGIN_SANITIZED 1
#endif
#endif
#ifndef PLUGIN_SANITIZED
#define PLUGIN_SANITIZED 0
#endif

#define PLUGIN_ENTRY "outbox_plugin_describe"

/*
 * Smallest descriptor each host-known minor may hand us, indexed by the
 * plugin's abi_minor.  When minor N+1 appends a member, entry N becomes
 * offsetof(struct outbox_plugin, <first member of N+1>).
 */
static const size_t min_size_by_minor[OUTBOX_PLUGIN_ABI_MINOR + 1] = {
	[0] = sizeof(struct outbox_plugin),
	[1] = sizeof(struct outbox_plugin), /* 1.1 grew struct outbox_result only */
};

struct plugin_module {
	struct plugin_module *next;
	char *name;
	char file[256]; /* "NAME.so", the name used in every message */
	void *handle;
	const struct outbox_plugin *desc;
};

struct plugin_registry {
	char *dir;     /* the search path as given */
	char **dirs;   /* its directories, in order */
	size_t n_dirs;
	struct plugin_module *modules;
};

struct plugin_instance {
	struct plugin_module *mod; /* borrowed from the registry */
	struct outbox_ctx *ctx;
	void *instance;            /* the plugin's handle from init() */
	bool serialise;
	bool destroyed;
	pthread_mutex_t lock;
};

/*
 * The search path: a colon-separated list of directories, tried in order
 * ([outboxd] plugin_path, docs/configuration.md).  Empty elements are
 * skipped; config validation has already refused relative ones.
 */
static int split_path(struct plugin_registry *reg, const char *path)
{
	size_t n = 1;

	for (const char *p = path; *p != '\0'; p++)
		n += *p == ':';
	reg->dirs = calloc(n, sizeof(*reg->dirs));
	if (reg->dirs == NULL)
		return -1;
	for (const char *p = path;;) {
		size_t len = strcspn(p, ":");
		if (len > 0) {
			reg->dirs[reg->n_dirs] = strndup(p, len);
			if (reg->dirs[reg->n_dirs] == NULL)
				return -1;
			reg->n_dirs++;
		}
		if (p[len] == '\0')
			break;
		p += len + 1;
	}
	return 0;
}

const char *plugin_search_path(const char *configured)
{
	const char *env = getenv("OUTBOX_PLUGIN_DIR");

	if (env != NULL && *env != '\0') {
		log_warning("plugin directory overridden by OUTBOX_PLUGIN_DIR: \"%s\" instead of \"%s\"",
		            env, configured != NULL ? configured : PLUGINDIR);
		return env;
	}
	return configured != NULL ? configured : PLUGINDIR;
}

int plugin_registry_create(const char *dir, struct plugin_registry **out)
{
	struct plugin_registry *reg = calloc(1, sizeof(*reg));

	*out = NULL;
	if (reg == NULL)
		return -1;
	if (dir == NULL)
		dir = plugin_search_path(NULL);
	reg->dir = strdup(dir);
	if (reg->dir == NULL || split_path(reg, dir) < 0 || reg->n_dirs == 0) {
		plugin_registry_free(reg);
		return -1;
	}
	*out = reg;
	return 0;
}

static bool keep_loaded(void)
{
	const char *vg = getenv("OUTBOX_VALGRIND");
	const char *no = getenv("OUTBOX_NO_DLCLOSE");

	return PLUGIN_SANITIZED || (vg != NULL && strcmp(vg, "1") == 0) ||
	       (no != NULL && strcmp(no, "1") == 0);
}

void plugin_registry_free(struct plugin_registry *reg)
{
	if (reg == NULL)
		return;
	/* Leak reports need the plugin's symbols, so keep it mapped for them. */
	bool keep = keep_loaded();
	struct plugin_module *mod = reg->modules;
	while (mod != NULL) {
		struct plugin_module *next = mod->next;
		if (!keep)
			dlclose(mod->handle);
		free(mod->name);
		free(mod);
		mod = next;
	}
	for (size_t i = 0; i < reg->n_dirs; i++)
		free(reg->dirs[i]);
	free(reg->dirs);
	free(reg->dir);
	free(reg);
}

const char *plugin_registry_dir(const struct plugin_registry *reg)
{
	return reg->dir;
}

const struct outbox_plugin *plugin_module_descriptor(const struct plugin_module *mod)
{
	return mod->desc;
}

static bool valid_name(const char *name)
{
	if (name == NULL || *name == '\0')
		return false;
	for (const char *p = name; *p != '\0'; p++) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
			return false;
	}
	return true;
}

/*
 * As sshd refuses key files others can write: whoever can write the .so, or
 * replace it in its directory, runs code in the daemon with its database
 * credentials.  The file and the directory that holds it must not be group-
 * or world-writable; a sticky directory does not help (its owner's files
 * are still replaceable by that owner, and the file's own mode is checked).
 */
static int check_not_writable(const struct plugin_module *mod, const char *path,
                              const struct stat *st, const struct plugin_diag *diag)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	struct stat dst;

	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		plugin_diag_report(diag, NULL, "plugin \"%s\" refused: \"%s\" is writable by "
		                   "%s (mode %04o; run \"chmod go-w %s\")", mod->file, path,
		                   st->st_mode & S_IWOTH ? "others" : "its group",
		                   (unsigned)(st->st_mode & 07777), path);
		return -1;
	}
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
	if (dir[0] == '\0')
		snprintf(dir, sizeof(dir), "/");
	if (stat(dir, &dst) < 0) {
		plugin_diag_report(diag, NULL, "plugin \"%s\" refused: cannot stat its directory "
		                   "\"%s\": %s", mod->file, dir, strerror(errno));
		return -1;
	}
	if (dst.st_mode & (S_IWGRP | S_IWOTH)) {
		plugin_diag_report(diag, NULL, "plugin \"%s\" refused: its directory \"%s\" is "
		                   "writable by %s (mode %04o; run \"chmod go-w %s\")", mod->file,
		                   dir, dst.st_mode & S_IWOTH ? "others" : "its group",
		                   (unsigned)(dst.st_mode & 07777), dir);
		return -1;
	}
	return 0;
}

/* The file itself, never a symlink, device or directory, is what gets loaded. */
static int check_regular(const struct plugin_module *mod, const char *path,
                         const struct stat *st, const struct plugin_diag *diag)
{
	if (S_ISLNK(st->st_mode)) {
		plugin_diag_report(diag, NULL, "plugin \"%s\" refused: \"%s\" is a symbolic link "
		                   "(install the file itself in the plugin directory)", mod->file, path);
		return -1;
	}
	if (!S_ISREG(st->st_mode)) {
		plugin_diag_report(diag, NULL, "plugin \"%s\" refused: \"%s\" is %s, not a regular file",
		                   mod->file, path, S_ISDIR(st->st_mode) ? "a directory" : "special");
		return -1;
	}
	return check_not_writable(mod, path, st, diag);
}

/* Appends "cannot stat "PATH": WHY" to tried (a "; "-separated list). */
static void note_missing(char *tried, size_t size, const char *path, int err)
{
	size_t used = strlen(tried);

	if (used + 4 >= size)
		return;
	int n = snprintf(tried + used, size - used, "%scannot stat \"%s\": %s",
	                 used > 0 ? "; " : "", path, strerror(err));
	if (n < 0 || (size_t)n >= size - used)
		memcpy(tried + size - 4, "...", 4); /* a long path list, cut in the message only */
}

/*
 * Finds NAME.so in the first directory of the search path that has it and
 * accepts only a regular file there.  A directory without the file is
 * skipped; any other problem (a symlink, no permission) refuses the plugin
 * rather than silently loading one from a later directory.
 */
static int resolve_path(const struct plugin_registry *reg, struct plugin_module *mod,
                        char *path, size_t size, const struct plugin_diag *diag)
{
	char tried[2048] = "";
	struct stat st;

	for (size_t i = 0; i < reg->n_dirs; i++) {
		int n = snprintf(path, size, "%s/%s", reg->dirs[i], mod->file);
		if (n < 0 || (size_t)n >= size) {
			plugin_diag_report(diag, NULL, "plugin \"%s\": path too long in directory \"%s\"",
			                   mod->file, reg->dirs[i]);
			return -1;
		}
		if (lstat(path, &st) == 0)
			return check_regular(mod, path, &st, diag);
		if (errno != ENOENT && errno != ENOTDIR) {
			plugin_diag_report(diag, NULL, "plugin \"%s\" refused: cannot stat \"%s\": %s",
			                   mod->file, path, strerror(errno));
			return -1;
		}
		note_missing(tried, sizeof(tried), path, errno);
	}
	plugin_diag_report(diag, NULL, "plugin \"%s\" not found: %s", mod->file, tried);
	return -1;
}

static int open_module(struct plugin_module *mod, const char *path,
                       const struct plugin_diag *diag)
{
	const struct outbox_plugin *(*describe)(void);

	mod->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (mod->handle == NULL) {
		const char *why = dlerror();
		plugin_diag_report(diag, NULL, "could not load plugin \"%s\": %s "
		                   "(hint: run \"ldd %s\" to check its dependencies)",
		                   mod->file, why != NULL ? why : "unknown error", path);
		return -1;
	}
	/* POSIX's sanctioned way to turn dlsym's void * into a function pointer. */
	*(void **)&describe = dlsym(mod->handle, PLUGIN_ENTRY);
	if (describe == NULL) {
		plugin_diag_report(diag, NULL, "plugin \"%s\" refused: it does not export "
		                   "\"" PLUGIN_ENTRY "\" (is it an outboxd plugin?)", mod->file);
		return -1;
	}
	mod->desc = describe();
	if (mod->desc == NULL) {
		plugin_diag_report(diag, NULL, "plugin \"%s\" refused: " PLUGIN_ENTRY "() returned NULL",
		                   mod->file);
		return -1;
	}
	return 0;
}

static int check_version(const struct plugin_module *mod, const struct plugin_diag *diag)
{
	const struct outbox_plugin *d = mod->desc;

	if (d->abi_major != OUTBOX_PLUGIN_ABI_MAJOR || d->abi_minor > OUTBOX_PLUGIN_ABI_MINOR) {
		plugin_diag_report(diag, NULL, "plugin \"%s\": ABI %u.%u required, host provides %d.%d "
		                   "(%s)", mod->file, (unsigned)d->abi_major, (unsigned)d->abi_minor,
		                   OUTBOX_PLUGIN_ABI_MAJOR, OUTBOX_PLUGIN_ABI_MINOR,
		                   d->abi_major != OUTBOX_PLUGIN_ABI_MAJOR
		                   ? "rebuild the plugin against this host's outbox/plugin.h"
		                   : "upgrade outboxd or rebuild the plugin against its headers");
		return -1;
	}
	if (d->struct_size < min_size_by_minor[d->abi_minor]) {
		plugin_diag_report(diag, NULL, "plugin \"%s\": descriptor is %u bytes, ABI %u.%u needs "
		                   "at least %zu", mod->file, (unsigned)d->struct_size,
		                   (unsigned)d->abi_major, (unsigned)d->abi_minor,
		                   min_size_by_minor[d->abi_minor]);
		return -1;
	}
	return 0;
}

static int check_header(const struct plugin_module *mod, const struct plugin_diag *diag)
{
	const struct outbox_plugin *d = mod->desc;
	const size_t header = offsetof(struct outbox_plugin, name);

	if (d->abi_magic != OUTBOX_PLUGIN_ABI_MAGIC) {
		plugin_diag_report(diag, NULL, "plugin \"%s\" refused: bad ABI magic 0x%08x "
		                   "(expected 0x%08x)", mod->file, (unsigned)d->abi_magic,
		                   (unsigned)OUTBOX_PLUGIN_ABI_MAGIC);
		return -1;
	}
	if (d->struct_size < header) {
		plugin_diag_report(diag, NULL, "plugin \"%s\": descriptor is %u bytes, shorter than "
		                   "its %zu-byte header", mod->file, (unsigned)d->struct_size, header);
		return -1;
	}
	if (check_version(mod, diag) < 0)
		return -1;
	if (d->build_fingerprint == NULL ||
	    strcmp(d->build_fingerprint, OUTBOX_PLUGIN_FINGERPRINT) != 0) {
		plugin_diag_report(diag, NULL, "plugin \"%s\": built for \"%s\", host is \"%s\"",
		                   mod->file, d->build_fingerprint != NULL ? d->build_fingerprint : "",
		                   OUTBOX_PLUGIN_FINGERPRINT);
		return -1;
	}
	return 0;
}

static int check_members(const struct plugin_module *mod, const struct plugin_diag *diag)
{
	const struct outbox_plugin *d = mod->desc;
	const char *missing = d->init == NULL      ? "init"
	                      : d->destroy == NULL ? "destroy"
	                      : d->execute == NULL ? "execute"
	                                           : NULL;

	if (missing != NULL) {
		plugin_diag_report(diag, NULL, "plugin \"%s\" refused: required callback \"%s\" is NULL",
		                   mod->file, missing);
		return -1;
	}
	/* A renamed file would otherwise run under a name it does not know. */
	if (d->name == NULL || strcmp(d->name, mod->name) != 0) {
		plugin_diag_report(diag, NULL, "plugin \"%s\" refused: its descriptor is named \"%s\"",
		                   mod->file, d->name != NULL ? d->name : "(null)");
		return -1;
	}
	return 0;
}

static struct plugin_module *find_module(const struct plugin_registry *reg, const char *name)
{
	for (struct plugin_module *mod = reg->modules; mod != NULL; mod = mod->next) {
		if (strcmp(mod->name, name) == 0)
			return mod;
	}
	return NULL;
}

int plugin_registry_load(struct plugin_registry *reg, const char *name,
                         const struct plugin_diag *diag, struct plugin_module **out)
{
	char path[4096];
	struct plugin_module *mod = NULL;

	*out = find_module(reg, name != NULL ? name : "");
	if (*out != NULL)
		return 0;
	if (!valid_name(name) || strlen(name) > sizeof(mod->file) - 4) {
		plugin_diag_report(diag, NULL, "invalid plugin name \"%s\" (use a-z, 0-9 and _, at most "
		                   "%zu characters)", name != NULL ? name : "", sizeof(mod->file) - 4);
		return -1;
	}
	mod = calloc(1, sizeof(*mod));
	if (mod != NULL)
		mod->name = strdup(name);
	if (mod == NULL || mod->name == NULL) {
		plugin_diag_report(diag, NULL, "plugin \"%s\": out of memory", name);
		goto fail;
	}
	snprintf(mod->file, sizeof(mod->file), "%s.so", name); /* length checked above */
	if (resolve_path(reg, mod, path, sizeof(path), diag) < 0 ||
	    open_module(mod, path, diag) < 0 || check_header(mod, diag) < 0 ||
	    check_members(mod, diag) < 0)
		goto fail;
	log_debug("loaded plugin \"%s\" version %s from \"%s\"", mod->file,
	          mod->desc->version != NULL ? mod->desc->version : "(unknown)", path);
	mod->next = reg->modules;
	reg->modules = mod;
	*out = mod;
	return 0;
fail:
	if (mod != NULL && mod->handle != NULL)
		dlclose(mod->handle);
	if (mod != NULL)
		free(mod->name);
	free(mod);
	return -1;
}

struct cfg_sink {
	struct cfg_errors *errs;
	const struct cfg *cfg;
	const struct cfg_destination *dest;
};

static void cfg_sink_report(void *arg, const struct cfg_plugin_option *opt, const char *msg)
{
	const struct cfg_sink *sink = arg;

	cfg_plugin_option_error(sink->errs, sink->cfg, sink->dest, opt, "%s", msg);
}

int plugin_instance_create_from_config(struct plugin_registry *reg,
                                       const struct cfg *cfg,
                                       const struct cfg_destination *dest,
                                       const struct plugin_host_services *services,
                                       struct cfg_errors *errs,
                                       struct plugin_instance **out)
{
	struct cfg_sink sink = {.errs = errs, .cfg = cfg, .dest = dest};
	const struct plugin_diag diag = {.report = cfg_sink_report, .arg = &sink};
	const struct plugin_instance_spec spec = {
		.destination = dest->name,
		.plugin = dest->plugin,
		.options = dest->plugin_options,
		.n_options = dest->n_plugin_options,
		.services = services,
	};

	return plugin_instance_create(reg, &spec, &diag, out);
}

/* init() failing still gets its destroy() (docs/plugin-api.md, "Lifecycle"), right here. */
static int run_init(struct plugin_instance *inst, const struct plugin_diag *diag)
{
	const struct outbox_plugin *d = inst->mod->desc;
	struct plugin_call_state saved;
	char err[512] = "";

	plugin_call_enter(inst->ctx, NULL, NULL, &saved);
	int rc = d->init(plugin_host_table(), inst->ctx, &inst->instance, err, sizeof(err));
	plugin_call_leave(&saved);
	if (rc == 0)
		return 0;
	err[sizeof(err) - 1] = '\0';
	plugin_diag_report(diag, NULL, "plugin \"%s\" failed to start: %s", inst->mod->name,
	                   err[0] != '\0' ? err : "init() gave no reason");
	plugin_call_enter(inst->ctx, NULL, NULL, &saved);
	d->destroy(inst->instance);
	plugin_call_leave(&saved);
	inst->instance = NULL;
	inst->destroyed = true;
	return -1;
}

static void free_instance(struct plugin_instance *inst)
{
	if (inst == NULL)
		return;
	plugin_ctx_free(inst->ctx);
	if (inst->serialise)
		pthread_mutex_destroy(&inst->lock);
	free(inst);
}

int plugin_instance_create(struct plugin_registry *reg,
                           const struct plugin_instance_spec *spec,
                           const struct plugin_diag *diag,
                           struct plugin_instance **out)
{
	struct plugin_module *mod = NULL;
	struct plugin_options opts = {0};
	struct plugin_instance *inst = NULL;

	*out = NULL;
	if (plugin_registry_load(reg, spec->plugin, diag, &mod) < 0)
		return -1;
	if (plugin_options_validate(spec->plugin, mod->desc->options, spec->options,
	                            spec->n_options, diag, &opts) < 0)
		return -1;
	inst = calloc(1, sizeof(*inst));
	if (inst == NULL)
		goto oom;
	inst->mod = mod;
	if (plugin_ctx_create(spec->destination, spec->plugin, &opts, spec->services,
	                      &inst->ctx) < 0)
		goto oom;
	if ((mod->desc->flags & OUTBOX_PLUGIN_CONCURRENT) == 0) {
		if (pthread_mutex_init(&inst->lock, NULL) != 0)
			goto oom;
		inst->serialise = true;
	}
	if (run_init(inst, diag) < 0)
		goto fail;
	*out = inst;
	return 0;
oom:
	plugin_diag_report(diag, NULL, "plugin \"%s\": out of memory", spec->plugin);
fail:
	plugin_options_free(&opts);
	free_instance(inst);
	return -1;
}

void plugin_instance_destroy(struct plugin_instance *inst)
{
	struct plugin_call_state saved;

	if (inst == NULL)
		return;
	if (!inst->destroyed) {
		plugin_call_enter(inst->ctx, NULL, NULL, &saved);
		inst->mod->desc->destroy(inst->instance);
		plugin_call_leave(&saved);
		inst->destroyed = true;
	}
	free_instance(inst);
}

static bool verdict_valid(enum outbox_verdict v)
{
	int raw = (int)v;

	return raw == OUTBOX_OK || raw == OUTBOX_RETRY || raw == OUTBOX_FAIL;
}

static void lock_instance(struct plugin_instance *inst)
{
	if (inst->serialise)
		pthread_mutex_lock(&inst->lock);
}

static void unlock_instance(struct plugin_instance *inst)
{
	if (inst->serialise)
		pthread_mutex_unlock(&inst->lock);
}

enum outbox_verdict plugin_instance_execute(struct plugin_instance *inst,
                                            const struct outbox_job *job,
                                            struct outbox_result *result)
{
	struct plugin_call_state saved;

	if (result->msg == NULL || result->msg_size == 0) {
		log_error("plugin \"%s\" called without a message buffer dest=%s",
		          inst->mod->name, inst->ctx->destination);
		return OUTBOX_FAIL;
	}
	result->msg[0] = '\0';
	result->output = NULL;
	lock_instance(inst);
	plugin_call_enter(inst->ctx, job->job_id, NULL, &saved);
	double started = metrics_now_seconds();
	enum outbox_verdict v = inst->mod->desc->execute(inst->instance, job, result);
	metrics_observe(METRIC_EXECUTE_SECONDS, inst->ctx->destination,
	                metrics_now_seconds() - started);
	plugin_call_leave(&saved);
	unlock_instance(inst);
	result->msg[result->msg_size - 1] = '\0';
	if (!verdict_valid(v)) {
		snprintf(result->msg, result->msg_size, "plugin \"%s\" returned invalid verdict %d",
		         inst->mod->name, (int)v);
		v = OUTBOX_FAIL;
	}
	if (v != OUTBOX_OK && result->output != NULL) {
		json_decref(result->output);
		result->output = NULL;
	}
	return v;
}

enum outbox_verdict plugin_instance_execute_traced(struct plugin_instance *inst,
                                                   const struct outbox_job *job,
                                                   const char *traceparent,
                                                   struct outbox_result *result)
{
	plugin_call_set_trace(traceparent);
	enum outbox_verdict v = plugin_instance_execute(inst, job, result);
	plugin_call_set_trace(NULL);
	return v;
}

enum outbox_verdict plugin_instance_commit(struct plugin_instance *inst,
                                           const struct outbox_job *job,
                                           const json_t *output,
                                           struct outbox_tx *tx,
                                           char *err, size_t errlen)
{
	struct plugin_call_state saved;

	if (err == NULL || errlen == 0)
		return OUTBOX_FAIL;
	err[0] = '\0';
	if (inst->mod->desc->commit == NULL)
		return OUTBOX_OK;
	lock_instance(inst);
	plugin_call_enter(inst->ctx, job->job_id, tx, &saved);
	double started = metrics_now_seconds();
	enum outbox_verdict v = inst->mod->desc->commit(inst->instance, job, output, tx,
	                                                err, errlen);
	metrics_observe(METRIC_COMMIT_SECONDS, inst->ctx->destination,
	                metrics_now_seconds() - started);
	plugin_call_leave(&saved);
	unlock_instance(inst);
	err[errlen - 1] = '\0';
	if (!verdict_valid(v)) {
		snprintf(err, errlen, "plugin \"%s\" returned invalid verdict %d from commit()",
		         inst->mod->name, (int)v);
		v = OUTBOX_FAIL;
	}
	return v;
}

const char *plugin_instance_destination(const struct plugin_instance *inst)
{
	return inst->ctx->destination;
}

const struct outbox_plugin *plugin_instance_descriptor(const struct plugin_instance *inst)
{
	return inst->mod->desc;
}

const char *plugin_verdict_name(enum outbox_verdict verdict)
{
	switch (verdict) {
	case OUTBOX_OK:
		return "OK";
	case OUTBOX_RETRY:
		return "RETRY";
	case OUTBOX_FAIL:
		return "FAIL";
	}
	return "INVALID";
}
