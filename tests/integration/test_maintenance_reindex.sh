#!/bin/bash
# Keeping the indexes compact (docs/maintenance.md): a random-key index
# that held many more rows than it holds now is rebuilt by the daemon's
# pruner with REINDEX INDEX CONCURRENTLY (smaller, valid, used by a lookup,
# counted in outboxd_index_rebuilds_total), after the invalid copy an
# interrupted rebuild left was dropped; below the threshold nothing is
# rebuilt; a role that does not own the tables gets one warning that says
# what to do, and nothing is tried again until a reload.
. "$OUTBOX_SRCDIR/tests/harness/testlib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_consumer_lib.sh"
. "$OUTBOX_SRCDIR/tests/integration/test_maintenance_lib.sh"
. "$OUTBOX_SRCDIR/tests/harness/services.sh"
require_pg
require_aws

setup_db "maint_reindex_$$"
make_queues "mrx-$$" 10 2
sql() { psql_q "$DB" "$1" >/dev/null; }
PORT=$(free_port)
# Retention 0: the pruner deletes nothing itself, the test deletes (as a
# retention would) so that it knows what is left.
extra=$(printf '[retention]\ninterval_seconds = 1\nsucceeded_jobs_seconds = 0\ndead_jobs_seconds = 0\nevents_seconds = 0\ndlq_messages_seconds = 0\nreindex_min_bytes = 1048576\n\n[metrics]\nlisten = 127.0.0.1:%s\n' "$PORT")
m_ini "$TEST_TMP/relay.ini" "$DB" "$extra" "news $QURL $DLQURL"

N=40000
# N SUCCEEDED jobs, each with its PUBLISHED event, in job-id (random) order.
sql "INSERT INTO outbox.jobs (job_id, job_type, destination, identity, payload, status, finished_at)
	SELECT encode(sha256(('job ' || g)::bytea), 'hex'), 'news', 'news', '{}', '{}', 'SUCCEEDED', now()
	  FROM generate_series(1, $N) g"
sql "INSERT INTO outbox.outbox_events (event_id, event_type, job_id, destination, redrive_generation,
	                                  body, status, published_at)
	SELECT 'news:' || job_id || ':0', 'news', job_id, 'news', 0, '{}', 'PUBLISHED', now()
	  FROM outbox.jobs"
sql "VACUUM ANALYZE outbox.jobs"
sql "VACUUM ANALYZE outbox.outbox_events"

filenodes() {
	psql_q "$DB" "SELECT string_agg(relname || '=' || relfilenode, ',' ORDER BY relname)
		FROM pg_class WHERE relnamespace = 'outbox'::regnamespace AND relkind = 'i'"
}
bytes() { psql_q "$DB" "SELECT pg_relation_size('outbox.$1')"; }
pruner_runs() { psql_q "$DB" "SELECT coalesce((SELECT runs FROM outbox.maintenance_runs WHERE task = 'pruner'), 0)"; }
# Keeps in INDEXES the record of a run that checked the indexes (the runs
# in between have none).
checked() {
	INDEXES=$(m_run pruner "counts->'indexes'")
	[ -n "$INDEXES" ] && [ "$(jq .checked <<<"$INDEXES")" -gt 0 ]
}
runs_at_least() { [ "$(pruner_runs)" -ge "$1" ]; }

# ---- dense indexes: nothing is rebuilt ----
before=$(filenodes)
m_start "$TEST_TMP/relay.ini" "$TEST_TMP/dense.log"
INDEXES=
check "the pruner estimated the indexes" wait_for 30 checked
echo "# $INDEXES"
check "none is over the threshold" [ "$(jq -c '[.bloated, .rebuilding]' <<<"$INDEXES")" = '[0,null]' ]
check "jobs_pkey is over reindex_min_bytes (the ratio decided)" [ "$(bytes jobs_pkey)" -gt 1048576 ]
check "a few more runs" wait_for 60 runs_at_least 5
m_stop "$MPID"
check "no index was rebuilt" [ "$(filenodes)" = "$before" ]
check "nothing said it rebuilds" sh -c "! grep -q 'rebuilding index' '$TEST_TMP/dense.log'"

# ---- most rows deleted: the random-key indexes keep their size ----
sql "DELETE FROM outbox.outbox_events WHERE get_byte(decode(job_id, 'hex'), 0) >= 16"
sql "DELETE FROM outbox.jobs WHERE get_byte(decode(job_id, 'hex'), 0) >= 16"
sql "VACUUM ANALYZE outbox.jobs"
sql "VACUUM ANALYZE outbox.outbox_events"
live=$(psql_q "$DB" "SELECT count(*) FROM outbox.jobs")
check "about a sixteenth of the jobs is left ($live)" [ "$live" -gt 1500 ] && [ "$live" -lt 3500 ]
for ix in jobs_pkey outbox_events_pkey outbox_events_job; do
	eval "before_$ix=$(bytes $ix)"
done
check "jobs_pkey kept its size after the deletes and VACUUM ($before_jobs_pkey bytes)" \
	[ "$before_jobs_pkey" -gt 2000000 ]

# ---- a role that does not own the tables: one warning until a reload ----
ROLE="mrx_$$"
m_role_create "$ROLE" "$TEST_TMP/relay.ini" "$TEST_TMP/role.ini"
before=$(filenodes)
runs0=$(pruner_runs)
m_start "$TEST_TMP/role.ini" "$TEST_TMP/role.log"
warned() { [ "$(grep -c 'cannot rebuild index' "$TEST_TMP/role.log")" -ge "$1" ]; }
check "a non-owner is warned" wait_for 30 warned 1
check "the warning says what to do" grep -q 'REINDEX needs the owner of table "outbox.jobs".*reindex_bloat_ratio = 0' "$TEST_TMP/role.log"
check "more pruner runs" wait_for 60 runs_at_least $((runs0 + 12))
check "the warning was said once" [ "$(grep -c 'cannot rebuild index' "$TEST_TMP/role.log")" = 1 ]
kill -HUP "$MPID"
check "after a reload it tries again, and says so again" wait_for 30 warned 2
m_stop "$MPID"
check "a non-owner rebuilt nothing" [ "$(filenodes)" = "$before" ]
m_role_drop "$ROLE"

# ---- what an interrupted rebuild leaves: an invalid NAME_ccnew ----
psql_q "$DB" "CREATE UNIQUE INDEX CONCURRENTLY jobs_pkey_ccnew ON outbox.jobs (job_type)" >/dev/null 2>&1 || true
check "an invalid leftover exists" [ "$(psql_q "$DB" "SELECT NOT indisvalid FROM pg_index
	WHERE indexrelid = 'outbox.jobs_pkey_ccnew'::regclass")" = t ]

# ---- the owner's daemon rebuilds them ----
m_start "$TEST_TMP/relay.ini" "$TEST_TMP/rebuild.log"
rebuilt() { grep -q "rebuilt index \"outbox.$1\"" "$TEST_TMP/rebuild.log"; }
for ix in jobs_pkey outbox_events_pkey outbox_events_job; do
	check "$ix rebuilt" wait_for 120 rebuilt $ix
done
check "the leftover was dropped first" grep -q 'dropped the invalid index "outbox.jobs_pkey_ccnew"' "$TEST_TMP/rebuild.log"
check "no invalid index is left" [ "$(psql_q "$DB" "SELECT count(*) FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid
	WHERE c.relnamespace = 'outbox'::regnamespace AND NOT x.indisvalid")" = 0 ]
for ix in jobs_pkey outbox_events_pkey outbox_events_job; do
	eval "b=\$before_$ix"
	a=$(bytes $ix)
	check "$ix shrank below a quarter ($b to $a bytes)" [ "$a" -lt $((b / 4)) ]
	check "$ix is valid" [ "$(psql_q "$DB" "SELECT indisvalid AND indisready FROM pg_index
		WHERE indexrelid = 'outbox.$ix'::regclass")" = t ]
done
job=$(psql_q "$DB" "SELECT job_id FROM outbox.jobs LIMIT 1")
check "a lookup by job id uses jobs_pkey" sh -c "psql -X -At '$DB' -c 'SET enable_seqscan = off' \
	-c \"EXPLAIN SELECT status FROM outbox.jobs WHERE job_id = '$job'\" | grep -q 'using jobs_pkey'"
check "and finds the job" [ "$(psql_q "$DB" "SELECT count(*) FROM outbox.jobs WHERE job_id = '$job'")" = 1 ]
check "the log gives the sizes" grep -q 'rebuilt index "outbox.jobs_pkey": .* MiB to .* MiB.*before_bytes=[0-9]* after_bytes=[0-9]*' "$TEST_TMP/rebuild.log"
curl -fsS "http://127.0.0.1:$PORT/metrics" >"$TEST_TMP/metrics.txt" || true
check "outboxd_index_rebuilds_total counts it" \
	grep -qx 'outboxd_index_rebuilds_total{index="jobs_pkey"} 1' "$TEST_TMP/metrics.txt"
m_stop "$MPID"
finish
