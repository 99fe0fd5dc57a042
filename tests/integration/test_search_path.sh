#!/bin/bash
# test_search_path.sh: the SQL producer API cannot be hijacked through the
# caller's search_path, and a role with only outbox_producer's rights
# enqueues (docs/producers.md, "Rights").
#
# (1) Every function of the outbox schema and of every plugin's schema pins
# search_path = pg_catalog, pg_temp, so a later migration that forgets is
# caught here.  (2) A role that may create in public creates
# public.to_json(text) raising a NOTICE (an exact match for a text
# argument, so unqualified to_json('x'::text) picks it); enqueues, the
# price path and the idle-lane notification, as postgres and as a producer
# role, never run it.  (3) A login role granted only outbox_producer
# enqueues (the notification path included) and can change nothing else.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
require_pg

DB=$(newdb "outbox_test_search_path_$$")
DB2=$(newdb "outbox_test_search_path2_$$")
HOSTILE=outbox_test_hostile_$$
PRODUCER=outbox_test_producer_$$
INI=$TEST_TMP/relay.ini
plugin_ini() { # FILE CONNINFO: every plugin that owns a schema, so all are migrated
	cat >"$1" <<INI
[database]
conninfo = $2

[aws]
region = us-east-1
endpoint_url = http://127.0.0.1:9

[destination:news]
queue_url = http://127.0.0.1:9/000000000000/news
plugin = news_llm
plugin.endpoint = http://127.0.0.1:9/v1
plugin.model = m
plugin.api_key_env = OPENAI_API_KEY

[destination:price]
queue_url = http://127.0.0.1:9/000000000000/price
plugin = price_trigger

[destination:explanation]
queue_url = http://127.0.0.1:9/000000000000/explanation
plugin = explanation
plugin.endpoint = http://127.0.0.1:9/v1
plugin.model = m
plugin.api_key_env = OPENAI_API_KEY
INI
}
cleanup() {
	for db in "$DB" "$DB2"; do
		psql -X -q -d "$db" -c "DROP OWNED BY $HOSTILE, $PRODUCER" >/dev/null 2>&1 || true
	done
	psql -X -q -d "$OUTBOX_TEST_PG_CONNINFO" -c "DROP ROLE IF EXISTS $HOSTILE" \
		-c "DROP ROLE IF EXISTS $PRODUCER" >/dev/null 2>&1 || true
	rm -rf "$TEST_TMP"
}
trap cleanup EXIT
plugin_ini "$INI" "$DB"
check "migrate applies the core's and the plugins' migrations" \
	"$OUTBOXCTL" -c "$INI" migrate
# outbox_producer belongs to the cluster: a second database's migration
# finds it and grants it the same rights there
plugin_ini "$TEST_TMP/relay2.ini" "$DB2"
check "a second database migrates with outbox_producer already there" \
	"$OUTBOXCTL" -c "$TEST_TMP/relay2.ini" migrate
check "outbox_producer is NOLOGIN" \
	test "$(psql_q "$DB" "SELECT rolcanlogin FROM pg_roles WHERE rolname = 'outbox_producer'")" = f

# --- (1) every function pins its search_path ------------------------------
schemas="SELECT n.oid FROM pg_namespace n WHERE n.nspname NOT IN ('public', 'information_schema')
	AND n.nspname NOT LIKE 'pg\\_%'"
check "the outbox schema has its seven functions" \
	test "$(psql_q "$DB" "SELECT count(*) >= 7 FROM pg_proc WHERE pronamespace = 'outbox'::regnamespace")" = t
unpinned=$(psql_q "$DB" "SELECT coalesce(string_agg(p.oid::regprocedure::text, ', '), '') FROM pg_proc p
	WHERE p.pronamespace IN ($schemas)
	  AND NOT coalesce(p.proconfig @> ARRAY['search_path=pg_catalog, pg_temp'], false)")
check "every function of outbox and the plugins' schemas pins search_path (unpinned: ${unpinned:-none})" \
	test -z "$unpinned"

# --- (2) public.to_json(text) never runs ----------------------------------
psql_q "$DB" "CREATE ROLE $HOSTILE LOGIN; CREATE ROLE $PRODUCER LOGIN;
	GRANT outbox_producer TO $PRODUCER; GRANT CREATE ON SCHEMA public TO $HOSTILE" >/dev/null
as_role() { # ROLE SQL: runs SQL as ROLE; prints stdout and stderr (NOTICEs)
	psql -X -q -v ON_ERROR_STOP=1 -At -d "${DB/postgres@/$1@}" -c "$2" 2>&1
}
as_role "$HOSTILE" "CREATE FUNCTION public.to_json(v text) RETURNS json LANGUAGE plpgsql AS \$f\$
	BEGIN
		RAISE NOTICE 'hijacked by %', current_user;
		RETURN pg_catalog.to_json(v);
	END \$f\$" >/dev/null
check "the trap is armed: an unqualified to_json(text) as postgres runs it" \
	sh -c "psql -X -q -At -d '$DB' -c \"SELECT to_json('x'::text)\" 2>&1 | grep -q 'hijacked by postgres'"
# a sleeping lane, so the trigger notifies
psql_q "$DB" "INSERT INTO outbox.relay_idle (destination, instance_id) VALUES ('news', 'test')" >/dev/null
enqueue_sql() { # N: an enqueue, a price window and a LISTEN that sees the notification
	echo "LISTEN outbox_new;
	SELECT job_id FROM outbox.enqueue(job_type => 'hijack', destination => 'news',
		identity => '{\"n\":$1,\"s\":\"a\\u001fb\"}', payload => '{\"k\":1}');
	SELECT generation FROM outbox.confirm_price_window(destination => 'price', symbol => 'S$1',
		window_start => '2026-11-27T14:35:00Z', artifact_key => 'k',
		artifact_sha256 => repeat('a', 64));"
}
has() { printf '%s\n' "$1" | grep -q "$2"; }
for role in postgres "$PRODUCER"; do
	out=$(as_role "$role" "$(enqueue_sql "$RANDOM")") || true
	echo "$out" | sed "s/^/  $role: /"
	check "$role enqueues and confirms a price window" \
		test "$(echo "$out" | grep -cE '^([0-9a-f]{64}|1)$')" = 2
	check "$role's enqueue wakes the idle lane" \
		has "$out" 'notification "outbox_new" with payload "news"'
	check "$role's calls never ran public.to_json" eval '! has "$out" hijacked'
done
check "both roles' jobs are in the table" \
	test "$(psql_q "$DB" "SELECT count(*) FROM outbox.jobs WHERE job_type = 'hijack'")" = 2

# --- (3) outbox_producer's rights are only these ---------------------------
for sql in "UPDATE outbox.jobs SET attempt_count = 0" "DELETE FROM outbox.outbox_events" \
	"SELECT body FROM outbox.outbox_events" "TRUNCATE outbox.jobs CASCADE" \
	"SELECT count(*) FROM outbox.dlq_messages"; do
	check "a producer may not: $sql" \
		sh -c "psql -X -q -At -d '${DB/postgres@/$PRODUCER@}' -c '$sql' 2>&1 | grep -q 'permission denied'"
done
check "the second database's outbox_producer enqueues there too" \
	sh -c "psql -X -q -At -d '${DB2/postgres@/$PRODUCER@}' -c \"SELECT created FROM outbox.enqueue('t', 'news', '{\\\"k\\\":1}', '{}')\" | grep -qx t"
finish
