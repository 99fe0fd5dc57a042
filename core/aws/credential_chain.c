/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * aws/credential_chain.c: the provider chain and the process-wide provider
 * (see aws/credential_chain.h).
 */
#include "aws/credential_chain.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws/credential_sources.h"
#include "aws/endpoint.h"
#include "common/log.h"

typedef enum aws_source_result (*source_fn)(const struct aws_source_ctx *ctx,
                                            struct aws_credential_source **src,
                                            struct aws_creds **first, char *why,
                                            size_t why_size);

static const struct {
	const char *label;
	source_fn fn;
} chain[] = {
	{"environment", aws_source_env},
	{"shared files", aws_source_profile},
	{"web identity", aws_source_web_identity},
	{"container", aws_source_container},
	{"instance metadata", aws_source_imds},
};

static void append(char *buf, size_t size, const char *label, const char *why)
{
	size_t used = strlen(buf);

	if (used < size)
		snprintf(buf + used, size - used, "%s%s: %s", used > 0 ? "; " : "", label, why);
}

int aws_credential_chain_resolve(const char *region, struct aws_credentials **out, char *tried,
                                 size_t tried_size)
{
	char *sts = aws_env_endpoint(AWS_SERVICE_STS, NULL, region);
	struct aws_source_ctx ctx = {region, sts};
	int rc = -1;

	*out = NULL;
	tried[0] = '\0';
	if (sts == NULL) {
		snprintf(tried, tried_size, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < sizeof(chain) / sizeof(chain[0]); i++) {
		struct aws_credential_source *src = NULL;
		struct aws_creds *first = NULL;
		char why[AWS_CREDS_ERR_LEN] = "";
		enum aws_source_result r = chain[i].fn(&ctx, &src, &first, why, sizeof(why));

		if (r == AWS_SOURCE_FOUND) {
			*out = aws_credentials_new(src, first);
			if (*out != NULL)
				rc = 0;
			break;
		}
		if (r == AWS_SOURCE_FAILED)
			log_warning("could not get AWS credentials from %s: %s", chain[i].label, why);
		append(tried, tried_size, chain[i].label, why);
	}
	free(sts);
	return rc;
}

static pthread_mutex_t shared_mu = PTHREAD_MUTEX_INITIALIZER;
/* One reference of its own while shared_holders > 0; the last
 * aws_credentials_shared_release() drops it, so a later call resolves
 * again (with the environment of that moment). */
static struct aws_credentials *shared;
static unsigned long shared_holders;

int aws_credentials_shared(const char *region, struct aws_credentials **out, char *tried,
                           size_t tried_size)
{
	int rc = 0;

	pthread_mutex_lock(&shared_mu);
	if (shared == NULL) {
		/* Resolving under the lock: concurrent first callers wait for one
		 * walk of the chain instead of each calling STS or IMDS. */
		rc = aws_credential_chain_resolve(region, &shared, tried, tried_size);
		shared_holders = 0;
		/* Once per resolution, not per client: --check-config prints the
		 * source itself, and outboxctl shows it only with -v. */
		if (rc == 0)
			log_info("AWS credentials from %s", aws_credentials_source(shared));
	}
	if (rc == 0) {
		*out = aws_credentials_ref(shared);
		shared_holders++;
	}
	pthread_mutex_unlock(&shared_mu);
	return rc;
}

void aws_credentials_shared_release(struct aws_credentials *p)
{
	if (p == NULL)
		return;
	pthread_mutex_lock(&shared_mu);
	if (p == shared && --shared_holders == 0) {
		aws_credentials_unref(shared);
		shared = NULL;
	}
	pthread_mutex_unlock(&shared_mu);
	aws_credentials_unref(p);
}
