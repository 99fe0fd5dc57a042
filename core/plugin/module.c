/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * plugin/module.c: find, dlopen and check plugins (the registry of loaded
 * modules).  Instances of a module are instance.c's.
 *
 * Nothing in a plugin runs before its descriptor header has been checked:
 * outbox_plugin_describe() only returns a pointer to static data, and the
 * header fields are compared before any callback is called (docs/plugin-api.md, "Loading rules").
 */
#include "plugin/module.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"

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

const char *plugin_module_name(const struct plugin_module *mod)
{
	return mod->name;
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
 * Every directory above the plugin's own, up to /: whoever can write one of
 * them can rename the directory below it and put another in its place.  A
 * sticky directory (such as /tmp) is the exception when the entry below it
 * belongs to root or to this process's user: only they can rename it.
 */
static int check_parents(const struct plugin_module *mod, const char *dir,
                         const struct plugin_diag *diag)
{
	char real[PATH_MAX];
	struct stat st, below;
	char *cut;

	if (realpath(dir, real) == NULL || stat(real, &below) < 0) {
		plugin_diag_report(diag, NULL, "plugin \"%s\" refused: cannot resolve its directory "
		                   "\"%s\": %s", mod->file, dir, strerror(errno));
		return -1;
	}
	while (real[1] != '\0' && (cut = strrchr(real, '/')) != NULL) {
		cut[cut == real ? 1 : 0] = '\0';
		if (stat(real, &st) < 0) {
			plugin_diag_report(diag, NULL, "plugin \"%s\" refused: cannot stat \"%s\": %s",
			                   mod->file, real, strerror(errno));
			return -1;
		}
		if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 &&
		    !((st.st_mode & S_ISVTX) != 0 && (below.st_uid == 0 || below.st_uid == geteuid()))) {
			plugin_diag_report(diag, NULL, "plugin \"%s\" refused: \"%s\", a parent of its "
			                   "directory, is writable by %s (mode %04o; run \"chmod go-w %s\")",
			                   mod->file, real, st.st_mode & S_IWOTH ? "others" : "its group",
			                   (unsigned)(st.st_mode & 07777), real);
			return -1;
		}
		below = st;
	}
	return 0;
}

/*
 * As sshd refuses key files others can write: whoever can write the .so, or
 * replace it in its directory, runs code in the daemon with its database
 * credentials.  The file and the directory that holds it must not be group-
 * or world-writable, nor any directory above (check_parents()); for those
 * two a sticky directory does not help (its owner's files are still
 * replaceable by that owner, and the file's own mode is checked).
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
	return check_parents(mod, dir, diag);
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
