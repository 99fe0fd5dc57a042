/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/credential_chain.h: where credentials come from, in the AWS SDKs'
 * order (docs/aws.md, "Credentials"):
 *
 *   1. environment        AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN
 *   2. shared files       AWS_PROFILE in AWS_SHARED_CREDENTIALS_FILE / AWS_CONFIG_FILE
 *   3. web identity       AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN via STS
 *   4. container          AWS_CONTAINER_CREDENTIALS_RELATIVE_URI / _FULL_URI
 *   5. instance metadata  IMDSv2
 *
 * The first source whose settings are present and that hands out
 * credentials wins; a source whose settings are present but that fails is
 * logged and the chain goes on, as the SDKs do.
 */
#ifndef OUTBOX_CORE_AWS_CREDENTIAL_CHAIN_H
#define OUTBOX_CORE_AWS_CREDENTIAL_CHAIN_H

#include <stddef.h>

#include "aws/credentials.h"
#include "common/compiler.h"

/* Room for the list of every source tried and why each gave nothing. */
#define AWS_CHAIN_TRIED_LEN 2048

/*
 * Walks the chain for region (borrowed; the STS signing region).  On
 * success *out is a new provider (one reference).  Otherwise returns -1 and
 * tried lists every source with the reason it gave nothing
 * ("environment: AWS_ACCESS_KEY_ID is not set; shared files: ...").
 */
int aws_credential_chain_resolve(const char *region, struct aws_credentials **out, char *tried,
                                 size_t tried_size) OUTBOX_MUSTCHECK;

/*
 * The provider every client of the process shares: the first call walks
 * the chain, later calls take another reference to the same provider while
 * any is held (thread-safe).  Same results as aws_credential_chain_resolve().
 */
int aws_credentials_shared(const char *region, struct aws_credentials **out, char *tried,
                           size_t tried_size) OUTBOX_MUSTCHECK;

/* Drops a reference from aws_credentials_shared(); NULL is fine. */
void aws_credentials_shared_release(struct aws_credentials *p);

#endif
