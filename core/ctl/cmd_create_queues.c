/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * ctl/cmd_create_queues.c: outboxctl create-queues [--json]
 *
 * For every destination: its dead-letter queue first (when dlq_url is set;
 * MessageRetentionPeriod = dlq_message_retention_seconds, 14 days by
 * default, so evidence outlives the source queue's messages), then its
 * queue with VisibilityTimeout = consumer.visibility_timeout_seconds,
 * MessageRetentionPeriod = message_retention_seconds and RedrivePolicy
 * {deadLetterTargetArn, maxReceiveCount}.  The two retention periods are
 * the deduplication horizon [retention] is checked against.  Queue names
 * are the last path segment of queue_url / dlq_url.  CreateQueue with the
 * same attributes returns the existing queue, so running it again is a
 * no-op.  When [s3] bucket is set, the artifact bucket is created too
 * (an existing bucket of ours counts as success).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "aws/env.h"
#include "aws/http.h"
#include "ctl/commands.h"
#include "aws/s3.h"
#include "aws/sqs.h"

/* The queue name of a queue URL: its last path segment; borrowed. */
static const char *queue_name(const char *url)
{
	const char *slash = strrchr(url, '/');

	return slash != NULL && slash[1] != '\0' ? slash + 1 : NULL;
}

/* SQS compares queue URLs as strings, apart from a trailing slash. */
static bool same_queue_url(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	while (la > 0 && a[la - 1] == '/')
		la--;
	while (lb > 0 && b[lb - 1] == '/')
		lb--;
	return la == lb && strncmp(a, b, la) == 0;
}

static int report_failure(const char *what, const char *name, const struct aws_result *res)
{
	ctl_error("could not %s \"%s\": %s%s%s (HTTP %ld%s%s)", what, name,
	          res->code[0] ? res->code : aws_error_class_name(res->klass),
	          res->message[0] ? ": " : "", res->message, res->status,
	          res->request_id[0] ? ", request id " : "", res->request_id);
	return res->klass == AWS_ERR_TRANSIENT ? CTL_EXIT_UNAVAILABLE : CTL_EXIT_FAILURE;
}

static int create_dlq(struct aws_http *c, const struct cfg_destination *d, char **arn)
{
	const char *name = queue_name(d->dlq_url);
	char retention[16];
	const struct sqs_attribute attrs[] = {{"MessageRetentionPeriod", retention}};
	const char *names[] = {"QueueArn"};
	struct aws_result res;
	char *url = NULL;
	json_t *got = NULL;
	int rc;

	snprintf(retention, sizeof(retention), "%d", d->dlq_message_retention_seconds);
	if (sqs_create_queue(c, name, attrs, 1, &url, &res) < 0)
		return report_failure("create queue", name, &res);
	rc = sqs_get_queue_attributes(c, url, names, 1, &got, &res) < 0
		? report_failure("read the attributes of queue", name, &res) : CTL_EXIT_OK;
	if (rc == CTL_EXIT_OK) {
		const char *value = json_string_value(json_object_get(got, "QueueArn"));

		*arn = value ? strdup(value) : NULL;
		if (*arn == NULL) {
			ctl_error("queue \"%s\" has no QueueArn attribute", name);
			rc = CTL_EXIT_FAILURE;
		}
	}
	json_decref(got);
	free(url);
	return rc;
}

static int create_destination(struct aws_http *c, const struct cfg *cfg,
                              const struct cfg_destination *d, json_t *out)
{
	const char *name = queue_name(d->queue_url);
	char visibility[16], retention[16], *arn = NULL, *policy = NULL, *url = NULL;
	struct sqs_attribute attrs[3];
	size_t n = 0;
	struct aws_result res;
	int rc = CTL_EXIT_OK;

	if (name == NULL || (d->dlq_url != NULL && queue_name(d->dlq_url) == NULL)) {
		ctl_error("destination \"%s\": cannot tell the queue name from its URL", d->name);
		return CTL_EXIT_CONFIG;
	}
	if (d->dlq_url != NULL) {
		rc = create_dlq(c, d, &arn);
		if (rc != CTL_EXIT_OK)
			return rc;
		policy = sqs_redrive_policy(arn, d->max_receive_count);
		attrs[n++] = (struct sqs_attribute){"RedrivePolicy", policy};
	}
	snprintf(visibility, sizeof(visibility), "%d", cfg->consumer.visibility_timeout_seconds);
	attrs[n++] = (struct sqs_attribute){"VisibilityTimeout", visibility};
	snprintf(retention, sizeof(retention), "%d", d->message_retention_seconds);
	attrs[n++] = (struct sqs_attribute){"MessageRetentionPeriod", retention};
	if (d->dlq_url != NULL && policy == NULL)
		rc = CTL_EXIT_FAILURE;
	else if (sqs_create_queue(c, name, attrs, n, &url, &res) < 0)
		rc = report_failure("create queue", name, &res);
	else if (!same_queue_url(url, d->queue_url))
		ctl_error("warning: destination \"%s\": queue_url is \"%s\" but the service calls the "
		          "queue \"%s\"; requests name the queue by URL, so set queue_url to that",
		          d->name, d->queue_url, url);
	if (rc == CTL_EXIT_OK && url != NULL)
		json_array_append_new(out, json_pack("{s:s, s:s, s:s?, s:s?, s:i}", "destination", d->name,
		                      "queue_url", url, "dlq_url", d->dlq_url, "dlq_arn", arn,
		                      "max_receive_count", d->max_receive_count));
	free(url);
	free(policy);
	free(arn);
	return rc;
}

/* Creates the [s3] bucket, if one is configured; returns an exit code. */
static int create_bucket(const struct cfg *cfg, const struct aws_env *env, json_t **bucket)
{
	struct aws_http *client = NULL;
	struct aws_result res;
	int rc = CTL_EXIT_OK;

	*bucket = json_null();
	if (cfg->s3.bucket == NULL)
		return CTL_EXIT_OK;
	if (aws_http_new(env, AWS_SERVICE_S3, &client) < 0)
		return CTL_EXIT_FAILURE;
	struct s3_bucket b = {client, cfg->s3.bucket, false};
	if (s3_create_bucket(&b, &res) < 0)
		rc = report_failure("create bucket", cfg->s3.bucket, &res);
	else
		*bucket = json_string(cfg->s3.bucket);
	aws_http_free(client);
	return rc;
}

static void print_text(const json_t *queues)
{
	size_t i;
	json_t *q;

	json_array_foreach(queues, i, q) {
		printf("%s: queue %s", json_string_value(json_object_get(q, "destination")),
		       json_string_value(json_object_get(q, "queue_url")));
		if (json_is_string(json_object_get(q, "dlq_arn")))
			printf(", dead-letter queue %s after %lld receives",
			       json_string_value(json_object_get(q, "dlq_arn")),
			       (long long)json_integer_value(json_object_get(q, "max_receive_count")));
		putchar('\n');
	}
}

int cmd_create_queues(struct ctl *ctl, int argc, char **argv)
{
	const struct cfg *cfg;
	struct aws_env env = {0};
	struct aws_http *client = NULL;
	json_t *queues;
	int rc = CTL_EXIT_OK;

	if (argc != 1) {
		ctl_error("usage: create-queues [--json]");
		return CTL_EXIT_USAGE;
	}
	cfg = ctl_config(ctl);
	if (cfg == NULL)
		return CTL_EXIT_CONFIG;
	if (aws_env_load(&env, cfg->aws.region, cfg->aws.endpoint_url, cfg->s3.endpoint_url) < 0) {
		aws_env_free(&env);
		return CTL_EXIT_CONFIG;
	}
	if (aws_http_new(&env, AWS_SERVICE_SQS, &client) < 0) {
		aws_env_free(&env);
		return CTL_EXIT_FAILURE;
	}
	queues = json_array();
	for (size_t i = 0; i < cfg->n_destinations && rc == CTL_EXIT_OK; i++)
		rc = create_destination(client, cfg, &cfg->destinations[i], queues);
	json_t *bucket = NULL;
	if (rc == CTL_EXIT_OK)
		rc = create_bucket(cfg, &env, &bucket);
	if (rc == CTL_EXIT_OK && ctl->json) {
		json_t *doc = json_pack("{s:O, s:O}", "queues", queues, "bucket", bucket);

		json_dumpf(doc, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
		putchar('\n');
		json_decref(doc);
	} else if (rc == CTL_EXIT_OK) {
		print_text(queues);
		if (json_is_string(bucket))
			printf("bucket %s\n", json_string_value(bucket));
	}
	json_decref(bucket);
	json_decref(queues);
	aws_http_free(client);
	aws_env_free(&env);
	return rc;
}
