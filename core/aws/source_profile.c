/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/source_profile.c: credentials from a profile of the shared files
 * (see aws/credential_sources.h and aws/profile.h).  Within the profile the
 * SDKs' order: role_arn (with web_identity_token_file, or source_profile
 * whose own static keys or credential_process sign AssumeRole), then static
 * keys, then credential_process.
 */
#include "aws/credential_sources.h"
#include "aws/source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws/sts.h"

struct assume_role {
	char *endpoint, *region, *role_arn, *session_name, *external_id;
	struct aws_creds *source_static; /* the source profile's keys, or */
	char *source_process;            /* its credential_process */
};

static void assume_role_free(void *p)
{
	struct assume_role *a = p;

	if (a == NULL)
		return;
	free(a->endpoint);
	free(a->region);
	free(a->role_arn);
	free(a->session_name);
	free(a->external_id);
	aws_creds_unref(a->source_static);
	free(a->source_process);
	free(a);
}

static int assume_role_fetch(void *p, struct aws_creds **out, char *err, size_t err_size)
{
	struct assume_role *a = p;
	struct sts_role role = {a->endpoint, a->region, a->role_arn, a->session_name, a->external_id};
	struct aws_creds *source = NULL;
	int rc;

	*out = NULL;
	if (a->source_static != NULL)
		source = aws_creds_ref(a->source_static);
	else if (aws_run_credential_process(a->source_process, &source, err, err_size) < 0)
		return -1;
	rc = sts_assume_role(&role, source, out, err, err_size);
	aws_creds_unref(source);
	return rc;
}

static char *dup_opt(const char *s, bool *oom)
{
	char *d = s != NULL ? strdup(s) : NULL;
	if (s != NULL && d == NULL)
		*oom = true;
	return d;
}

static enum aws_source_result from_role(const struct aws_source_ctx *ctx,
                                        const struct aws_profiles *ps, const char *profile,
                                        const char *role_arn, struct aws_credential_source **src,
                                        struct aws_creds **first, char *why, size_t why_size)
{
	const char *token_file = aws_profile_get(ps, profile, "web_identity_token_file");
	const char *session = aws_profile_get(ps, profile, "role_session_name");
	const char *sp = aws_profile_get(ps, profile, "source_profile");
	char name[600];
	char default_name[64];
	bool oom = false;

	snprintf(name, sizeof(name), "profile \"%.100s\" (role \"%.200s\")", profile, role_arn);
	if (token_file != NULL)
		return aws_source_web_identity_with(ctx, name, role_arn, token_file, session, src,
		                                    first, why, why_size);
	if (sp == NULL) {
		snprintf(why, why_size, "profile \"%s\" sets role_arn without source_profile or "
		                        "web_identity_token_file (credential_source is not supported)", profile);
		return AWS_SOURCE_FAILED;
	}
	if (aws_profile_get(ps, sp, "role_arn") != NULL && strcmp(sp, profile) != 0) {
		snprintf(why, why_size, "source profile \"%s\" assumes a role itself: chained role "
		                        "assumption is not supported", sp);
		return AWS_SOURCE_FAILED;
	}
	struct assume_role *a = calloc(1, sizeof(*a));
	if (a == NULL) {
		snprintf(why, why_size, "out of memory");
		return AWS_SOURCE_FAILED;
	}
	if (session == NULL) {
		sts_default_session_name(default_name, sizeof(default_name));
		session = default_name;
	}
	a->endpoint = dup_opt(ctx->sts_endpoint, &oom);
	a->region = dup_opt(ctx->region, &oom);
	a->role_arn = dup_opt(role_arn, &oom);
	a->session_name = dup_opt(session, &oom);
	a->external_id = dup_opt(aws_profile_get(ps, profile, "external_id"), &oom);
	a->source_process = dup_opt(aws_profile_get(ps, sp, "credential_process"), &oom);
	a->source_static = aws_creds_new(aws_profile_get(ps, sp, "aws_access_key_id"),
	                                 aws_profile_get(ps, sp, "aws_secret_access_key"),
	                                 aws_profile_get(ps, sp, "aws_session_token"), 0);
	if (oom || (a->source_static == NULL && a->source_process == NULL)) {
		snprintf(why, why_size, oom ? "out of memory"
		                            : "source profile \"%s\" has neither static keys nor credential_process",
		         sp);
		assume_role_free(a);
		return AWS_SOURCE_FAILED;
	}
	return aws_source_make(name, assume_role_fetch, assume_role_free, a, true, src, first, why,
	                       why_size);
}

static enum aws_source_result from_static(const struct aws_profiles *ps, const char *profile,
                                          struct aws_credential_source **src,
                                          struct aws_creds **first, char *why, size_t why_size)
{
	char name[300];

	snprintf(name, sizeof(name), "profile \"%.100s\" (static keys)", profile);
	*first = aws_creds_new(aws_profile_get(ps, profile, "aws_access_key_id"),
	                       aws_profile_get(ps, profile, "aws_secret_access_key"),
	                       aws_profile_get(ps, profile, "aws_session_token"), 0);
	*src = calloc(1, sizeof(**src));
	if (*first == NULL || *src == NULL || ((*src)->name = strdup(name)) == NULL) {
		aws_creds_unref(*first);
		free(*src);
		*first = NULL;
		*src = NULL;
		snprintf(why, why_size, "out of memory");
		return AWS_SOURCE_FAILED;
	}
	return AWS_SOURCE_FOUND;
}

static enum aws_source_result resolve(const struct aws_source_ctx *ctx,
                                      const struct aws_profiles *ps, const char *profile,
                                      struct aws_credential_source **src,
                                      struct aws_creds **first, char *why, size_t why_size)
{
	const char *role_arn = aws_profile_get(ps, profile, "role_arn");
	const char *key = aws_profile_get(ps, profile, "aws_access_key_id");
	const char *secret = aws_profile_get(ps, profile, "aws_secret_access_key");
	const char *process = aws_profile_get(ps, profile, "credential_process");
	char name[300];

	if (role_arn != NULL)
		return from_role(ctx, ps, profile, role_arn, src, first, why, why_size);
	if (key != NULL && secret != NULL)
		return from_static(ps, profile, src, first, why, why_size);
	if (key != NULL || secret != NULL) {
		snprintf(why, why_size, "profile \"%s\" sets %s without %s", profile,
		         key != NULL ? "aws_access_key_id" : "aws_secret_access_key",
		         key != NULL ? "aws_secret_access_key" : "aws_access_key_id");
		return AWS_SOURCE_FAILED;
	}
	if (process != NULL) {
		snprintf(name, sizeof(name), "profile \"%.100s\" (credential_process)", profile);
		return aws_source_process(name, process, src, first, why, why_size);
	}
	if (aws_profile_get(ps, profile, "sso_session") != NULL ||
	    aws_profile_get(ps, profile, "sso_start_url") != NULL) {
		snprintf(why, why_size, "profile \"%s\" uses IAM Identity Center (SSO), which is not "
		                        "supported: use credential_process", profile);
		return AWS_SOURCE_FAILED;
	}
	snprintf(why, why_size, "profile \"%s\" has no credentials", profile);
	return AWS_SOURCE_NOT_SET;
}

enum aws_source_result aws_source_profile(const struct aws_source_ctx *ctx,
                                          struct aws_credential_source **src,
                                          struct aws_creds **first, char *why,
                                          size_t why_size)
{
	struct aws_profiles ps;
	const char *profile = aws_profile_name();
	enum aws_source_result r;
	char err[AWS_CREDS_ERR_LEN];

	if (aws_profiles_load(&ps, err, sizeof(err)) < 0) {
		snprintf(why, why_size, "%s", err);
		r = AWS_SOURCE_FAILED;
	} else if (!aws_profile_exists(&ps, profile)) {
		snprintf(why, why_size, "profile \"%s\" not found in \"%s\" or \"%s\"", profile,
		         ps.credentials_path, ps.config_path);
		/* Naming a profile that does not exist is a mistake, not absence. */
		r = getenv("AWS_PROFILE") != NULL && getenv("AWS_PROFILE")[0] != '\0'
		    ? AWS_SOURCE_FAILED : AWS_SOURCE_NOT_SET;
	} else {
		r = resolve(ctx, &ps, profile, src, first, why, why_size);
	}
	aws_profiles_free(&ps);
	return r;
}
