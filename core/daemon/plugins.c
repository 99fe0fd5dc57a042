/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * daemon/plugins.c: every destination's plugin loaded, checked, started
 * and stopped once, for --check-config and a reload's validation.  What
 * runs is in daemon/units.c.
 */
#include "daemon/plugins.h"

#include <stdlib.h>

#include "plugin/loader.h"

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
