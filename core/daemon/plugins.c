/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * daemon/plugins.c: plugin instances and the consumer, in ABI order:
 * services, then instances (init), then the consumer; and back.
 */
#include "daemon/plugins.h"

#include <stdlib.h>

#include "consumer/consumer.h"
#include "plugin/loader.h"

struct daemon_plugins {
	struct plugin_registry *registry;
	struct consumer_services *services;
	struct plugin_instance **instances; /* one per destination, in cfg order */
	size_t n;
	struct consumer *consumer;
};

static void destroy_instances(struct plugin_instance **instances, size_t n)
{
	for (size_t i = 0; instances != NULL && i < n; i++)
		plugin_instance_destroy(instances[i]);
	free(instances);
}

/* Creates every instance; on failure, destroys those made and returns -1. */
static int create_instances(struct plugin_registry *reg, const struct cfg *cfg,
                            const struct plugin_host_services *services,
                            struct cfg_errors *errs, struct plugin_instance ***out)
{
	struct plugin_instance **instances = calloc(cfg->n_destinations + 1, sizeof(*instances));
	int rc = 0;

	if (instances == NULL) {
		cfg_errors_add(errs, "%s: out of memory", cfg->file);
		return -1;
	}
	for (size_t i = 0; i < cfg->n_destinations; i++) {
		/* Only in a file with errors (--check-config): its plugin line was
		 * missing or refused, and that is already reported. */
		if (cfg->destinations[i].plugin == NULL) {
			rc = -1;
			continue;
		}
		if (plugin_instance_create_from_config(reg, cfg, &cfg->destinations[i], services,
		                                       errs, &instances[i]) < 0)
			rc = -1; /* keep going: report every destination's problems */
	}
	if (rc < 0) {
		destroy_instances(instances, cfg->n_destinations);
		return -1;
	}
	*out = instances;
	return 0;
}

int daemon_plugins_check(const struct cfg *cfg, struct cfg_errors *errs)
{
	struct plugin_registry *reg = NULL;
	struct plugin_instance **instances = NULL;
	int rc;

	if (plugin_registry_create(plugin_search_path(cfg->outboxd.plugin_path), &reg) < 0) {
		cfg_errors_add(errs, "%s: could not set up the plugin registry", cfg->file);
		return -1;
	}
	rc = create_instances(reg, cfg, NULL, errs, &instances);
	if (rc == 0)
		destroy_instances(instances, cfg->n_destinations);
	plugin_registry_free(reg);
	return rc;
}

int daemon_plugins_start(const struct cfg *cfg, const char *instance_id,
                         struct cfg_errors *errs, struct daemon_plugins **out)
{
	struct daemon_plugins *dp = calloc(1, sizeof(*dp));
	int rc = -1;

	if (dp == NULL)
		return -1;
	dp->n = cfg->n_destinations;
	if (plugin_registry_create(plugin_search_path(cfg->outboxd.plugin_path), &dp->registry) < 0)
		goto fail;
	if (consumer_services_create(cfg, &dp->services) < 0)
		goto fail;
	if (create_instances(dp->registry, cfg, consumer_services_table(dp->services), errs,
	                     &dp->instances) < 0) {
		rc = DAEMON_PLUGINS_BAD_CONFIG;
		goto fail;
	}
	if (consumer_start(cfg, dp->services, dp->instances, dp->n, instance_id, &dp->consumer) < 0)
		goto fail;
	*out = dp;
	return 0;
fail:
	daemon_plugins_stop(dp);
	return rc;
}

void daemon_plugins_stop(struct daemon_plugins *dp)
{
	if (dp == NULL)
		return;
	consumer_stop(dp->consumer);
	destroy_instances(dp->instances, dp->n);
	consumer_services_free(dp->services);
	plugin_registry_free(dp->registry);
	free(dp);
}
