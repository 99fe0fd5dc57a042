/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/credential_sources.h: the links of the credential chain
 * (aws/credential_chain.h puts them in order).  Each looks at its own
 * settings and answers one of three ways:
 *   AWS_SOURCE_FOUND         *src and *first are set (the caller owns both)
 *   AWS_SOURCE_NOT_SET       its settings are absent; why says which
 *   AWS_SOURCE_FAILED        its settings are present but the credentials
 *                            could not be had; why says why
 * why never holds a secret.
 */
#ifndef OUTBOX_CORE_AWS_CREDENTIAL_SOURCES_H
#define OUTBOX_CORE_AWS_CREDENTIAL_SOURCES_H

#include <stdbool.h>
#include <stddef.h>

#include "aws/credentials.h"
#include "aws/profile.h"
#include "common/compiler.h"

enum aws_source_result {
	AWS_SOURCE_FOUND = 1,
	AWS_SOURCE_NOT_SET = 0,
	AWS_SOURCE_FAILED = -1,
};

/* What every link may need; all borrowed. */
struct aws_source_ctx {
	const char *region;       /* signing region (STS) */
	const char *sts_endpoint; /* scheme://host[:port] */
};

/* AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN. */
enum aws_source_result aws_source_env(const struct aws_source_ctx *ctx,
                                      struct aws_credential_source **src,
                                      struct aws_creds **first, char *why, size_t why_size);

/* The AWS_PROFILE (or default) profile of the shared files: role_arn with
 * source_profile or web_identity_token_file, static keys, credential_process. */
enum aws_source_result aws_source_profile(const struct aws_source_ctx *ctx,
                                          struct aws_credential_source **src,
                                          struct aws_creds **first, char *why,
                                          size_t why_size);

/* AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN [+ AWS_ROLE_SESSION_NAME]. */
enum aws_source_result aws_source_web_identity(const struct aws_source_ctx *ctx,
                                               struct aws_credential_source **src,
                                               struct aws_creds **first, char *why,
                                               size_t why_size);

/* The same call for given settings (profiles use it too); all borrowed. */
enum aws_source_result aws_source_web_identity_with(const struct aws_source_ctx *ctx,
                                                    const char *name, const char *role_arn,
                                                    const char *token_file,
                                                    const char *session_name,
                                                    struct aws_credential_source **src,
                                                    struct aws_creds **first, char *why,
                                                    size_t why_size);

/* A credential_process command line, run with /bin/sh -c. */
enum aws_source_result aws_source_process(const char *name, const char *command,
                                          struct aws_credential_source **src,
                                          struct aws_creds **first, char *why,
                                          size_t why_size);
/* Runs command once and parses its output. */
int aws_run_credential_process(const char *command, struct aws_creds **out, char *err,
                               size_t err_size) OUTBOX_MUSTCHECK;

/* AWS_CONTAINER_CREDENTIALS_RELATIVE_URI / _FULL_URI with
 * AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE / _TOKEN (ECS, EKS Pod Identity). */
enum aws_source_result aws_source_container(const struct aws_source_ctx *ctx,
                                            struct aws_credential_source **src,
                                            struct aws_creds **first, char *why,
                                            size_t why_size);

/* IMDSv2 (EC2 instance profile); AWS_EC2_METADATA_SERVICE_ENDPOINT,
 * AWS_EC2_METADATA_DISABLED. */
enum aws_source_result aws_source_imds(const struct aws_source_ctx *ctx,
                                       struct aws_credential_source **src,
                                       struct aws_creds **first, char *why, size_t why_size);

#endif
