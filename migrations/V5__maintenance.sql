-- V5__maintenance.sql: what the sweeper and the pruner need
-- (docs/maintenance.md).
--
-- The pruner deletes in bounded batches, oldest first; each batch must find
-- its rows through an index, never by scanning the table, so the cost of a
-- batch does not grow with the table.  The partial indexes hold only the
-- rows a batch may pick (terminal jobs, published or dead events).
CREATE INDEX jobs_terminal_finished ON outbox.jobs (status, finished_at)
    WHERE status IN ('SUCCEEDED', 'DEAD');
CREATE INDEX outbox_events_published_at ON outbox.outbox_events (published_at)
    WHERE status = 'PUBLISHED';
CREATE INDEX outbox_events_dead_created ON outbox.outbox_events (created_at)
    WHERE status = 'DEAD';
CREATE INDEX dlq_messages_received_at ON outbox.dlq_messages (received_at);

-- Deleted rows are dead tuples until VACUUM: the default thresholds (20 %
-- of the table) let a large jobs table carry hundreds of thousands of them
-- between vacuums.  A fixed, small threshold keeps autovacuum just behind
-- the pruner, so the space the pruner frees is reused by new rows instead of
-- growing the files (the soak in docs/maintenance.md measures this).
ALTER TABLE outbox.jobs SET (autovacuum_vacuum_scale_factor = 0.0,
                             autovacuum_vacuum_threshold = 20000,
                             autovacuum_vacuum_insert_scale_factor = 0.05);
ALTER TABLE outbox.outbox_events SET (autovacuum_vacuum_scale_factor = 0.0,
                                      autovacuum_vacuum_threshold = 20000,
                                      autovacuum_vacuum_insert_scale_factor = 0.05);

-- The last run of each maintenance task, for outboxctl status: which
-- instance ran it, when, and what it did (counts as JSON).
CREATE TABLE outbox.maintenance_runs (
    task         text        PRIMARY KEY CHECK (task IN ('sweeper', 'pruner')),
    instance_id  text        NOT NULL,
    started_at   timestamptz NOT NULL,
    finished_at  timestamptz NOT NULL,
    ok           boolean     NOT NULL,
    counts       jsonb       NOT NULL DEFAULT '{}',
    error        text,
    runs         bigint      NOT NULL DEFAULT 1
);
