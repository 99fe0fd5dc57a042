/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/env.h: where the AWS client gets its credentials, region and
 * endpoints from (resolution order in docs/aws.md).
 *
 * Everything is copied out of the environment once, at load time: getenv()
 * pointers may be invalidated by a later setenv(), and the client must not
 * see credentials change under it in the middle of a run.
 */
#ifndef OUTBOX_CORE_AWS_ENV_H
#define OUTBOX_CORE_AWS_ENV_H

#include "common/compiler.h"

enum aws_service {
	AWS_SERVICE_SQS,
	AWS_SERVICE_S3,
};

/* Every pointer is owned by the struct and freed by aws_env_free(). */
struct aws_env {
	char *access_key_id;
	char *secret_access_key; /* never logged */
	char *session_token;     /* NULL when AWS_SESSION_TOKEN is unset or empty */
	char *region;
	char *sqs_endpoint;      /* "scheme://host[:port]", no trailing slash */
	char *s3_endpoint;
};

/*
 * Resolves credentials, the region and both endpoints.  region,
 * sqs_endpoint and s3_endpoint are the explicit values from relay.ini
 * (borrowed; NULL or "" when not configured).  Fails with a logged error
 * when AWS_ACCESS_KEY_ID or AWS_SECRET_ACCESS_KEY is missing; *env is then
 * left empty.  Free with aws_env_free() in either case.
 */
int aws_env_load(struct aws_env *env, const char *region, const char *sqs_endpoint,
                 const char *s3_endpoint) OUTBOX_MUSTCHECK;

/* Frees every member and zeroes *env; safe on a zeroed or freed struct. */
void aws_env_free(struct aws_env *env);

/*
 * The region: explicit, else AWS_REGION, else AWS_DEFAULT_REGION, else
 * us-east-1.  Returns a string the caller frees with free(), NULL when out
 * of memory.
 */
char *aws_env_region(const char *explicit_region) OUTBOX_MUSTCHECK;

/*
 * The endpoint of svc: explicit, else AWS_ENDPOINT_URL_SQS or
 * AWS_ENDPOINT_URL_S3, else AWS_ENDPOINT_URL, else
 * https://sqs.REGION.amazonaws.com or https://s3.REGION.amazonaws.com.
 * A trailing '/' is removed.  Returns a string the caller frees with
 * free(), NULL when out of memory.
 */
char *aws_env_endpoint(enum aws_service svc, const char *explicit_url,
                       const char *region) OUTBOX_MUSTCHECK;

#endif
