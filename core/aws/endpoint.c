/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/endpoint.c: the region and the endpoints from relay.ini and the
 * environment (see aws/endpoint.h).
 */
#include "aws/endpoint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *aws_env_get(const char *name)
{
	const char *v = getenv(name);
	return v != NULL && v[0] != '\0' ? v : NULL;
}

static const char *first_set(const char *explicit_value, const char *const *names)
{
	if (explicit_value != NULL && explicit_value[0] != '\0')
		return explicit_value;
	for (size_t i = 0; names[i] != NULL; i++) {
		const char *v = aws_env_get(names[i]);
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
	static const char *const sts_names[] = {"AWS_ENDPOINT_URL_STS", "AWS_ENDPOINT_URL", NULL};
	const char *const *names = svc == AWS_SERVICE_SQS ? sqs_names
	                           : svc == AWS_SERVICE_S3 ? s3_names : sts_names;
	const char *host = svc == AWS_SERVICE_SQS ? "sqs" : svc == AWS_SERVICE_S3 ? "s3" : "sts";
	const char *v = first_set(explicit_url, names);
	char *url = NULL;
	size_t len;

	if (v != NULL) {
		url = strdup(v);
	} else if (asprintf(&url, "https://%s.%s.amazonaws.com", host, region) < 0) {
		url = NULL;
	}
	if (url == NULL)
		return NULL;
	len = strlen(url);
	while (len > 0 && url[len - 1] == '/')
		url[--len] = '\0';
	return url;
}
