/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/env.c: credential, region and endpoint resolution (see aws/env.h).
 */
#include "aws/env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"

/* getenv() that treats an empty value as unset, as the AWS SDKs do. */
static const char *env_nonempty(const char *name)
{
	const char *v = getenv(name);
	return v != NULL && v[0] != '\0' ? v : NULL;
}

static const char *first_set(const char *explicit_value, const char *const *names)
{
	if (explicit_value != NULL && explicit_value[0] != '\0')
		return explicit_value;
	for (size_t i = 0; names[i] != NULL; i++) {
		const char *v = env_nonempty(names[i]);
		if (v != NULL)
			return v;
	}
	return NULL;
}

char *aws_env_region(const char *explicit_region)
{
	static const char *const names[] = {"AWS_REGION", "AWS_DEFAULT_REGION", NULL};
	const char *v = first_set(explicit_region, names);
	return strdup(v != NULL ? v : "us-east-1");
}

char *aws_env_endpoint(enum aws_service svc, const char *explicit_url, const char *region)
{
	static const char *const sqs_names[] = {"AWS_ENDPOINT_URL_SQS", "AWS_ENDPOINT_URL", NULL};
	static const char *const s3_names[] = {"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", NULL};
	const char *v = first_set(explicit_url, svc == AWS_SERVICE_SQS ? sqs_names : s3_names);
	char *url = NULL;
	size_t len;

	if (v != NULL) {
		url = strdup(v);
	} else if (asprintf(&url, "https://%s.%s.amazonaws.com",
	                    svc == AWS_SERVICE_SQS ? "sqs" : "s3", region) < 0) {
		url = NULL;
	}
	if (url == NULL)
		return NULL;
	len = strlen(url);
	while (len > 0 && url[len - 1] == '/')
		url[--len] = '\0';
	return url;
}

void aws_env_free(struct aws_env *env)
{
	free(env->access_key_id);
	free(env->secret_access_key);
	free(env->session_token);
	free(env->region);
	free(env->sqs_endpoint);
	free(env->s3_endpoint);
	memset(env, 0, sizeof(*env));
}

int aws_env_load(struct aws_env *env, const char *region, const char *sqs_endpoint,
                 const char *s3_endpoint)
{
	const char *key = env_nonempty("AWS_ACCESS_KEY_ID");
	const char *secret = env_nonempty("AWS_SECRET_ACCESS_KEY");
	const char *token = env_nonempty("AWS_SESSION_TOKEN");

	memset(env, 0, sizeof(*env));
	if (key == NULL || secret == NULL) {
		log_error("AWS credentials are not set: %s is missing",
		          key == NULL ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY");
		log_error("hint: export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "
		          "(and AWS_SESSION_TOKEN for temporary credentials)");
		return -1;
	}
	env->access_key_id = strdup(key);
	env->secret_access_key = strdup(secret);
	env->session_token = token != NULL ? strdup(token) : NULL;
	env->region = aws_env_region(region);
	if (env->region == NULL)
		goto fail;
	env->sqs_endpoint = aws_env_endpoint(AWS_SERVICE_SQS, sqs_endpoint, env->region);
	env->s3_endpoint = aws_env_endpoint(AWS_SERVICE_S3, s3_endpoint, env->region);
	if (env->access_key_id == NULL || env->secret_access_key == NULL ||
	    (token != NULL && env->session_token == NULL) || env->sqs_endpoint == NULL ||
	    env->s3_endpoint == NULL)
		goto fail;
	return 0;
fail:
	log_error("out of memory while loading AWS settings");
	aws_env_free(env);
	return -1;
}
