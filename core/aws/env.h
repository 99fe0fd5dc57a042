/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/env.h: where the AWS client gets its credentials, region and
 * endpoints from (resolution order in docs/aws.md).
 *
 * Region and endpoints are copied out of the environment once, at load
 * time: getenv() pointers may be invalidated by a later setenv().
 * Credentials come from the provider chain (aws/credential_chain.h): one
 * provider shared by every struct aws_env of the process, which refreshes
 * temporary credentials as they near expiry.
 */
#ifndef OUTBOX_CORE_AWS_ENV_H
#define OUTBOX_CORE_AWS_ENV_H

#include <stddef.h>

#include "aws/credentials.h"
#include "aws/endpoint.h"
#include "common/compiler.h"

/* Every pointer is owned by the struct and freed by aws_env_free(). */
struct aws_env {
	/* A reference to the process's shared provider. */
	struct aws_credentials *credentials;
	char *region;
	char *sqs_endpoint;      /* "scheme://host[:port]", no trailing slash */
	char *s3_endpoint;
};

/*
 * Resolves credentials, the region and both endpoints.  region,
 * sqs_endpoint and s3_endpoint are the explicit values from relay.ini
 * (borrowed; NULL or "" when not configured).  Fails with a logged error
 * naming every credential source tried when none has credentials; *env is
 * then left empty.  Free with aws_env_free() in either case.
 */
int aws_env_load(struct aws_env *env, const char *region, const char *sqs_endpoint,
                 const char *s3_endpoint) OUTBOX_MUSTCHECK;

/*
 * A reference to the process's shared credential provider for the region
 * resolved from explicit_region (borrowed), so that every aws_env_load()
 * while it is held finds the same one without walking the chain again.
 * Returns 0 and *out (release with aws_credentials_shared_release()), or -1
 * after logging every source tried (no credentials) or out of memory.
 */
int aws_env_take_credentials(const char *explicit_region,
                             struct aws_credentials **out) OUTBOX_MUSTCHECK;

/* Frees every member and zeroes *env; safe on a zeroed or freed struct. */
void aws_env_free(struct aws_env *env);

/*
 * For --check-config: walks the credential chain for the region resolved
 * from explicit_region (borrowed) without keeping the credentials.  Returns
 * 0 with the source's name in msg, or -1 with every source tried and why
 * in msg.  Never puts a secret in msg.
 */
int aws_env_check_credentials(const char *explicit_region, char *msg,
                              size_t msg_size) OUTBOX_MUSTCHECK;

#endif
