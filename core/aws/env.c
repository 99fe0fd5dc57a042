/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/env.c: struct aws_env, the credentials, region and endpoints one
 * client uses (see aws/env.h); the lookups are aws/endpoint.c's.
 */
#include "aws/env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws/credential_chain.h"
#include "aws/endpoint.h"
#include "common/log.h"

static void log_no_credentials(const char *tried)
{
	log_error("no AWS credentials found; tried %s", tried);
	log_error("hint: export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, set AWS_PROFILE, "
	          "or run with an IAM role (docs/deploy-aws.md)");
}

int aws_env_take_credentials(const char *explicit_region, struct aws_credentials **out)
{
	char tried[AWS_CHAIN_TRIED_LEN];
	char *region = aws_env_region(explicit_region);
	int rc;

	*out = NULL;
	if (region == NULL) {
		log_error("out of memory while loading AWS settings");
		return -1;
	}
	rc = aws_credentials_shared(region, out, tried, sizeof(tried));
	if (rc < 0)
		log_no_credentials(tried);
	free(region);
	return rc < 0 ? -1 : 0;
}

void aws_env_free(struct aws_env *env)
{
	aws_credentials_shared_release(env->credentials);
	free(env->region);
	free(env->sqs_endpoint);
	free(env->s3_endpoint);
	memset(env, 0, sizeof(*env));
}

int aws_env_load(struct aws_env *env, const char *region, const char *sqs_endpoint,
                 const char *s3_endpoint)
{
	char tried[AWS_CHAIN_TRIED_LEN];

	memset(env, 0, sizeof(*env));
	env->region = aws_env_region(region);
	if (env->region == NULL)
		goto oom;
	if (aws_credentials_shared(env->region, &env->credentials, tried, sizeof(tried)) < 0) {
		log_no_credentials(tried);
		aws_env_free(env);
		return -1;
	}
	env->sqs_endpoint = aws_env_endpoint(AWS_SERVICE_SQS, sqs_endpoint, env->region);
	env->s3_endpoint = aws_env_endpoint(AWS_SERVICE_S3, s3_endpoint, env->region);
	if (env->sqs_endpoint == NULL || env->s3_endpoint == NULL)
		goto oom;
	return 0;
oom:
	log_error("out of memory while loading AWS settings");
	aws_env_free(env);
	return -1;
}

int aws_env_check_credentials(const char *explicit_region, char *msg, size_t msg_size)
{
	struct aws_credentials *p = NULL;
	char *region = aws_env_region(explicit_region);
	int rc;

	if (region == NULL) {
		snprintf(msg, msg_size, "out of memory");
		return -1;
	}
	rc = aws_credential_chain_resolve(region, &p, msg, msg_size);
	if (rc == 0)
		snprintf(msg, msg_size, "%s", aws_credentials_source(p));
	aws_credentials_unref(p);
	free(region);
	return rc;
}
