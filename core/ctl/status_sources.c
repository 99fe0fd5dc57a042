/*
 * ctl/status_sources.c: queue depths and instances for "outboxctl status"
 * (see ctl/status.h).
 */
#include "ctl/status.h"

#include <stdlib.h>
#include <string.h>

#include "aws/env.h"
#include "aws/http.h"
#include "aws/sqs.h"
#include "db/db.h"
#include "relay/listener.h"

static const char *const depth_attrs[] = {
	"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible",
	"ApproximateNumberOfMessagesDelayed",
};

static json_int_t attr_int(const json_t *attrs, const char *name)
{
	const char *v = json_string_value(json_object_get(attrs, name));

	return v != NULL ? strtoll(v, NULL, 10) : 0;
}

/* One GetQueueAttributes: {"visible", "in_flight", "delayed"}, or null. */
static json_t *depth(struct aws_http *c, const char *dest, const char *what, const char *url,
                     json_t *errors)
{
	struct aws_result res;
	json_t *attrs = NULL, *out;

	if (sqs_get_queue_attributes(c, url, depth_attrs, 3, &attrs, &res) < 0) {
		json_array_append_new(errors, json_sprintf("could not read the depth of the %s of"
		                      " destination \"%s\": %s %s", what, dest, res.code, res.message));
		return json_null();
	}
	out = json_pack("{s:I, s:I, s:I}",
	                "visible", attr_int(attrs, "ApproximateNumberOfMessages"),
	                "in_flight", attr_int(attrs, "ApproximateNumberOfMessagesNotVisible"),
	                "delayed", attr_int(attrs, "ApproximateNumberOfMessagesDelayed"));
	json_decref(attrs);
	return out;
}

int status_queue_depths(const struct cfg *cfg, json_t *dests, json_t *errors)
{
	struct aws_env env = {0};
	struct aws_http *c = NULL;
	size_t before = json_array_size(errors);

	if (aws_env_load(&env, cfg->aws.region, cfg->aws.endpoint_url, cfg->s3.endpoint_url) < 0 ||
	    aws_http_new(&env, AWS_SERVICE_SQS, &c) < 0) {
		json_array_append_new(errors, json_string("could not set up the SQS client"));
		aws_env_free(&env);
		return 1;
	}
	for (size_t i = 0; i < cfg->n_destinations; i++) {
		const struct cfg_destination *d = &cfg->destinations[i];
		json_t *o = json_object_get(dests, d->name);

		if (o == NULL)
			continue;
		json_object_set_new(o, "queue_depth", depth(c, d->name, "queue", d->queue_url, errors));
		json_object_set_new(o, "dlq_depth", d->dlq_url != NULL
		                    ? depth(c, d->name, "DLQ", d->dlq_url, errors) : json_null());
	}
	aws_http_free(c);
	aws_env_free(&env);
	return (int)(json_array_size(errors) - before);
}

/* Only relays register (consumers hold no row); a relay refreshes its
 * heartbeat every RELAY_SWEEP_INTERVAL_SECONDS, so two missed beats mean
 * it is gone without having deleted its row. */
static const char instances_sql[] =
	"SELECT instance_id, destinations::text,"
	"       to_char(started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
	"       round(extract(epoch FROM now() - heartbeat_at)::numeric, 1)::text,"
	"       heartbeat_at > now() - $1::integer * interval '1 second'"
	"  FROM outbox.relay_instances ORDER BY started_at, instance_id";

json_t *status_instances(PGconn *conn, json_t *errors)
{
	char err[512], live_after[16];
	const char *params[1] = {live_after};
	json_t *list;
	PGresult *res;

	snprintf(live_after, sizeof(live_after), "%d", 2 * RELAY_SWEEP_INTERVAL_SECONDS);
	res = db_query(conn, instances_sql, 1, params, err, sizeof(err));
	if (res == NULL) {
		json_array_append_new(errors, json_sprintf("could not read the instances: %s", err));
		return NULL;
	}
	list = json_array();
	for (int r = 0; r < PQntuples(res); r++) {
		json_t *dests = json_loads(PQgetvalue(res, r, 1), 0, NULL);

		json_array_append_new(list, json_pack("{s:s, s:s, s:o, s:s, s:f, s:b}",
			"instance_id", PQgetvalue(res, r, 0), "role", "relay",
			"destinations", dests != NULL ? dests : json_array(),
			"started_at", PQgetvalue(res, r, 2),
			"heartbeat_age_seconds", strtod(PQgetvalue(res, r, 3), NULL),
			"live", strcmp(PQgetvalue(res, r, 4), "t") == 0));
	}
	PQclear(res);
	return list;
}
