/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/sts.h: the two AWS STS calls the credential chain makes, over the
 * Query protocol (POST / with a form body, XML answers read with libxml2):
 *   AssumeRoleWithWebIdentity  unsigned; EKS service accounts and
 *                              web_identity_token_file profiles
 *   AssumeRole                 signed with the source profile's keys;
 *                              role_arn + source_profile profiles
 * The endpoint is https://sts.REGION.amazonaws.com unless
 * AWS_ENDPOINT_URL_STS / AWS_ENDPOINT_URL say otherwise (aws_env_endpoint()).
 */
#ifndef OUTBOX_CORE_AWS_STS_H
#define OUTBOX_CORE_AWS_STS_H

#include <stddef.h>

#include "aws/credentials.h"
#include "common/compiler.h"

/* Requests to STS give up after this long. */
#define STS_TIMEOUT_MS 10000L

/* What one role assumption needs; all borrowed. */
struct sts_role {
	const char *endpoint;     /* "scheme://host[:port]" */
	const char *region;       /* signing region for AssumeRole */
	const char *role_arn;
	const char *session_name; /* RoleSessionName */
	const char *external_id;  /* AssumeRole only; NULL if none */
};

/*
 * The credentials of an AssumeRole* answer (<Credentials> with AccessKeyId,
 * SecretAccessKey, SessionToken, Expiration) into *out; 0, or -1 with the
 * reason in err (STS's error code and message for an <ErrorResponse>).
 */
int sts_parse_credentials(const char *xml, size_t len, struct aws_creds **out, char *err,
                          size_t err_size) OUTBOX_MUSTCHECK;

/* AssumeRoleWithWebIdentity with token (the token file's content). */
int sts_assume_role_with_web_identity(const struct sts_role *role, const char *token,
                                      struct aws_creds **out, char *err,
                                      size_t err_size) OUTBOX_MUSTCHECK;

/* AssumeRole signed with source. */
int sts_assume_role(const struct sts_role *role, const struct aws_creds *source,
                    struct aws_creds **out, char *err, size_t err_size) OUTBOX_MUSTCHECK;

/* "outboxd-<epoch seconds>", the RoleSessionName used when none is set. */
void sts_default_session_name(char *out, size_t out_size);

#endif
