/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/profile.h: the AWS shared files, read as the SDKs read them.
 *
 *   credentials file  AWS_SHARED_CREDENTIALS_FILE, else ~/.aws/credentials;
 *                     sections are profile names: [default], [ci]
 *   config file       AWS_CONFIG_FILE, else ~/.aws/config; sections are
 *                     [default] and [profile NAME]
 *
 * The profile is AWS_PROFILE, else "default".  A key set in both files for
 * the same profile is taken from the credentials file.  A file that does
 * not exist is simply empty; one that cannot be parsed is an error.
 */
#ifndef OUTBOX_CORE_AWS_PROFILE_H
#define OUTBOX_CORE_AWS_PROFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/compiler.h"

/* Longest line of a shared file, end of line excluded (docs/aws.md):
 * room for any session token; and the largest file. */
#define AWS_PROFILE_LINE_MAX 16384
#define AWS_PROFILE_MAX_FILE_BYTES (1024L * 1024L)

struct aws_profile_entry {
	char *section; /* profile name, "profile " prefix removed; owned */
	char *key;     /* owned */
	char *value;   /* owned; wiped when freed (it may be a secret) */
	bool from_credentials_file;
};

struct aws_profiles {
	struct aws_profile_entry *items; /* owned */
	size_t n;
	size_t cap;
	char *credentials_path; /* owned; the file that was read (or looked for) */
	char *config_path;      /* owned */
};

/*
 * Reads both files into *p (zeroed first).  Returns 0 (also when neither
 * file exists), or -1 with "FILE:LINE: ..." or the system error in err.
 * Free with aws_profiles_free() in either case.
 */
int aws_profiles_load(struct aws_profiles *p, char *err, size_t err_size) OUTBOX_MUSTCHECK;
void aws_profiles_free(struct aws_profiles *p);

/* The value of key in profile (credentials file first); NULL if unset or
 * empty.  Borrowed from p. */
const char *aws_profile_get(const struct aws_profiles *p, const char *profile, const char *key);

/* true when profile appears as a section in either file. */
bool aws_profile_exists(const struct aws_profiles *p, const char *profile);

/* AWS_PROFILE, else "default"; borrowed (environment or static). */
const char *aws_profile_name(void);

#endif
