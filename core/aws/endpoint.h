/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/endpoint.h: the region and the service endpoints, from an explicit
 * value (relay.ini) or the environment (resolution order in docs/aws.md).
 * Plain lookups: nothing here holds state or reaches the network, so both
 * the credential chain and struct aws_env (aws/env.h) build on them.
 */
#ifndef OUTBOX_CORE_AWS_ENDPOINT_H
#define OUTBOX_CORE_AWS_ENDPOINT_H

#include <stddef.h>

#include "common/compiler.h"

enum aws_service {
	AWS_SERVICE_SQS,
	AWS_SERVICE_S3,
	AWS_SERVICE_STS, /* only for endpoint resolution (the credential chain) */
};

/* getenv() that treats an empty value as unset, as the AWS SDKs do;
 * borrowed from the environment. */
const char *aws_env_get(const char *name);

/*
 * The region: explicit, else AWS_REGION, else AWS_DEFAULT_REGION, else
 * us-east-1.  Returns a string the caller frees with free(), NULL when out
 * of memory.
 */
char *aws_env_region(const char *explicit_region) OUTBOX_MUSTCHECK;

/*
 * The endpoint of svc: explicit, else AWS_ENDPOINT_URL_SQS,
 * AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL_STS, else AWS_ENDPOINT_URL, else
 * https://sqs.REGION.amazonaws.com, https://s3.REGION.amazonaws.com or
 * https://sts.REGION.amazonaws.com.
 * A trailing '/' is removed.  Returns a string the caller frees with
 * free(), NULL when out of memory.
 */
char *aws_env_endpoint(enum aws_service svc, const char *explicit_url,
                       const char *region) OUTBOX_MUSTCHECK;

#endif
