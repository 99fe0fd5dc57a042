/* SPDX-License-Identifier: MIT */
/* Copyright 2026 The outboxd authors */
/*
 * daemon/units.c: per-destination units and the relay (see units.h).
 */
#include "daemon/units.h"

#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/metrics.h"
#include "consumer/consumer.h"
#include "daemon/plugins.h"
#include "db/registry.h"
#include "plugin/loader.h"
#include "relay/relay.h"

struct unit {
	struct cfg sub;                  /* the running sections + one destination */
	struct plugin_registry *reg;     /* owned */
	struct plugin_instance *inst;    /* owned */
	struct consumer *consumer;       /* owned */
};

struct daemon_units {
	const struct cfg *base;          /* borrowed: the startup configuration */
	const struct cfg *current;       /* base or one of loaded */
	struct cfg **loaded;             /* owned: configurations reloads made current */
	size_t n_loaded;
	struct daemon_roles roles;
	char *instance_id;               /* owned */
	struct consumer_services *svc;   /* owned; shared by the units */
	struct unit **units;             /* owned; one per destination of current, in order */
	size_t n_units;
	struct cfg relay_cfg;            /* the running sections + current's destinations */
	struct relay *relay;             /* owned */
};

const struct cfg *daemon_units_base(const struct daemon_units *du)
{
	return du->base;
}

const struct cfg *daemon_units_current(const struct daemon_units *du)
{
	return du->current;
}

bool daemon_units_runs_consumer(const struct daemon_units *du)
{
	return du->roles.consumer;
}

/* The running sections with the destinations [d, d + n) of another cfg. */
static void sub_config(const struct daemon_units *du, const struct cfg_destination *d, size_t n,
                       struct cfg *out)
{
	*out = *du->base;
	out->destinations = (struct cfg_destination *)d;
	out->n_destinations = n;
}

static void unit_free(struct unit *u)
{
	plugin_instance_destroy(u->inst);
	plugin_registry_free(u->reg);
	free(u);
}

/* Returns 0 and *out, DAEMON_PLUGINS_BAD_CONFIG (errs), or -1. */
static int unit_start(struct daemon_units *du, const struct cfg_destination *d,
                      struct cfg_errors *errs, struct unit **out)
{
	struct unit *u = calloc(1, sizeof(*u));
	int rc = -1;

	*out = NULL;
	if (u == NULL) {
		log_error("out of memory starting dest=%s", d->name);
		return -1;
	}
	sub_config(du, d, 1, &u->sub);
	if (du->roles.consumer) {
		if (plugin_registry_create(plugin_search_path(u->sub.outboxd.plugin_path),
		                           &u->reg) < 0)
			goto fail;
		if (plugin_instance_create_from_config(u->reg, &u->sub, d,
		                                       consumer_services_table(du->svc), errs,
		                                       &u->inst) < 0) {
			rc = DAEMON_PLUGINS_BAD_CONFIG;
			goto fail;
		}
		if (consumer_start(&u->sub, du->svc, &u->inst, 1, du->instance_id, &u->consumer) < 0)
			goto fail;
	}
	metrics_set_retired(d->name, false);
	*out = u;
	return 0;
fail:
	unit_free(u);
	return rc;
}

/* Drains one unit (a reload removed or changed its destination). */
static void unit_stop(struct unit *u)
{
	if (u == NULL)
		return;
	log_info("stopping dest=%s", u->sub.destinations[0].name);
	/* No worker of it makes progress from now on: not a stuck daemon. */
	metrics_set_retired(u->sub.destinations[0].name, true);
	if (!consumer_drain(u->consumer)) {
		/* A handler still runs with the instance: leave both be. */
		log_error("a handler of dest=%s did not return; its plugin stays loaded",
		          u->sub.destinations[0].name);
		return;
	}
	unit_free(u);
}

static int relay_up(struct daemon_units *du)
{
	if (!du->roles.relay)
		return 0;
	sub_config(du, du->current->destinations, du->current->n_destinations, &du->relay_cfg);
	return relay_start(&du->relay_cfg, du->instance_id,
	                   du->roles.consumer ? DB_ROLE_ALL : DB_ROLE_RELAY, &du->relay);
}

int daemon_units_start(const struct cfg *cfg, struct daemon_roles roles, const char *instance_id,
                       struct cfg_errors *errs, struct daemon_units **out)
{
	struct daemon_units *du = calloc(1, sizeof(*du));
	bool bad_config = false, failed = false;
	int urc;

	*out = NULL;
	if (du == NULL)
		return -1;
	du->base = du->current = cfg;
	du->roles = roles;
	du->instance_id = strdup(instance_id);
	du->units = calloc(cfg->n_destinations + 1, sizeof(*du->units));
	if (du->instance_id == NULL || du->units == NULL)
		goto fail;
	if (roles.consumer && consumer_services_create(cfg, &du->svc) < 0)
		goto fail;
	for (size_t i = 0; i < cfg->n_destinations; i++) {
		/* Keep going after a refusal: report every destination's problems. */
		urc = unit_start(du, &cfg->destinations[i], errs, &du->units[i]);
		bad_config |= urc == DAEMON_PLUGINS_BAD_CONFIG;
		failed |= urc < 0;
		du->n_units = i + 1;
	}
	if (failed || relay_up(du) < 0)
		goto fail;
	*out = du;
	return 0;
fail:
	daemon_units_stop(du);
	return bad_config ? DAEMON_PLUGINS_BAD_CONFIG : -1;
}

void daemon_units_stop(struct daemon_units *du)
{
	struct consumer **cs;

	if (du == NULL)
		return;
	cs = calloc(du->n_units + 1, sizeof(*cs));
	for (size_t i = 0; cs != NULL && i < du->n_units; i++)
		cs[i] = du->units[i] != NULL ? du->units[i]->consumer : NULL;
	if (cs != NULL)
		consumer_stop_all(cs, du->n_units);
	for (size_t i = 0; i < du->n_units; i++) {
		if (du->units[i] == NULL)
			continue;
		if (cs == NULL)
			consumer_stop(du->units[i]->consumer);
		unit_free(du->units[i]);
	}
	free(cs);
	relay_stop(du->relay);
	consumer_services_free(du->svc);
	for (size_t i = 0; i < du->n_loaded; i++)
		cfg_free(du->loaded[i]);
	free(du->loaded);
	free(du->units);
	free(du->instance_id);
	free(du);
}

/* The unit of destination name in du (index), or -1. */
static long find_unit(const struct daemon_units *du, const char *name)
{
	for (size_t i = 0; i < du->n_units; i++) {
		if (du->units[i] != NULL && strcmp(du->units[i]->sub.destinations[0].name, name) == 0)
			return (long)i;
	}
	return -1;
}

static bool listed(const char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(names[i], name) == 0)
			return true;
	}
	return false;
}

/* Keeps next (owned from now on) for as long as du lives. */
static int adopt(struct daemon_units *du, struct cfg *next)
{
	struct cfg **l = realloc(du->loaded, (du->n_loaded + 1) * sizeof(*l));

	if (l == NULL) {
		cfg_free(next);
		return -1;
	}
	du->loaded = l;
	du->loaded[du->n_loaded++] = next;
	return 0;
}

int daemon_units_apply(struct daemon_units *du, struct cfg *next, const char *const *restart,
                       size_t n_restart, bool rebuild_relay)
{
	struct unit **units = calloc(next->n_destinations + 1, sizeof(*units));
	struct cfg_errors errs = {0};
	int failures = 0;

	if (units == NULL || adopt(du, next) < 0) {
		free(units);
		log_error("out of memory: the configuration was not reloaded");
		return 1;
	}
	if (rebuild_relay) {
		relay_stop(du->relay);
		du->relay = NULL;
	}
	/* Removed and changed destinations drain first. */
	for (size_t i = 0; i < du->n_units; i++) {
		const char *name;

		if (du->units[i] == NULL)
			continue;
		name = du->units[i]->sub.destinations[0].name;
		if (cfg_find_destination(next, name) == NULL || listed(restart, n_restart, name)) {
			unit_stop(du->units[i]);
			du->units[i] = NULL;
		}
	}
	/* Then every destination of next: kept, or (re)started. */
	for (size_t i = 0; i < next->n_destinations; i++) {
		const struct cfg_destination *d = &next->destinations[i];
		long k = find_unit(du, d->name);

		if (k >= 0) {
			units[i] = du->units[k];
			du->units[k] = NULL;
			/* Its destination stays the one it runs with: equal to d. */
			continue;
		}
		if (unit_start(du, d, &errs, &units[i]) < 0) {
			failures++;
			for (size_t e = 0; e < errs.n; e++)
				log_error("%s", errs.msgs[e]);
			cfg_errors_free(&errs);
			errs = (struct cfg_errors){0};
			log_error("could not start dest=%s; it is not served until the next reload",
			          d->name);
		} else {
			log_info("started dest=%s", d->name);
		}
	}
	cfg_errors_free(&errs);
	free(du->units);
	du->units = units;
	du->n_units = next->n_destinations;
	du->current = next;
	if (rebuild_relay && relay_up(du) < 0) {
		failures++;
		log_error("could not restart the relay: no destination is published until the"
		          " next reload");
	}
	return failures;
}
