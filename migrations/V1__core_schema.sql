-- V1__core_schema.sql: the job ledger, the transactional outbox and the
-- price windows.  Every column is described in docs/schema.md.
--
-- outboxctl migrate creates the schema "outbox" and its bookkeeping table
-- (outbox.schema_migrations) before it runs this file.

CREATE TABLE outbox.price_windows (
    symbol          text        NOT NULL,
    window_start    timestamptz NOT NULL,
    generation      integer     NOT NULL DEFAULT 1 CHECK (generation >= 1),
    artifact_key    text        NOT NULL,
    artifact_sha256 text        NOT NULL CHECK (artifact_sha256 ~ '^[0-9a-f]{64}$'),
    backfill        boolean     NOT NULL DEFAULT false,
    confirmed_at    timestamptz NOT NULL DEFAULT now(),
    corrected_at    timestamptz,
    PRIMARY KEY (symbol, window_start)
);
-- reconcile-artifacts asks "does any window reference this key?"
CREATE INDEX price_windows_artifact_key ON outbox.price_windows (artifact_key);

CREATE TABLE outbox.jobs (
    job_id             text        PRIMARY KEY CHECK (job_id ~ '^[0-9a-f]{64}$'),
    job_type           text        NOT NULL,
    destination        text        NOT NULL,
    identity           jsonb       NOT NULL,
    payload            jsonb       NOT NULL,
    status             text        NOT NULL DEFAULT 'PENDING'
                       CHECK (status IN ('PENDING', 'CLAIMED', 'SUCCEEDED', 'DEAD')),
    redrive_generation integer     NOT NULL DEFAULT 0 CHECK (redrive_generation >= 0),
    window_symbol      text,
    window_start       timestamptz,
    window_generation  integer,
    attempt_count      integer     NOT NULL DEFAULT 0 CHECK (attempt_count >= 0),
    claimed_by         text,
    lease_until        timestamptz,
    next_attempt_at    timestamptz NOT NULL DEFAULT now(),
    last_error         text,
    dead_reason        text,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    finished_at        timestamptz,
    FOREIGN KEY (window_symbol, window_start) REFERENCES outbox.price_windows (symbol, window_start),
    CHECK ((window_symbol IS NULL) = (window_generation IS NULL)),
    CHECK ((status = 'DEAD') = (dead_reason IS NOT NULL)),
    CHECK (status <> 'CLAIMED' OR (claimed_by IS NOT NULL AND lease_until IS NOT NULL))
);
CREATE INDEX jobs_destination_status ON outbox.jobs (destination, status);
-- "oldest due PENDING job" per destination
CREATE INDEX jobs_pending_due ON outbox.jobs (destination, next_attempt_at)
    WHERE status = 'PENDING';
CREATE INDEX jobs_window ON outbox.jobs (window_symbol, window_start)
    WHERE window_symbol IS NOT NULL;

CREATE TABLE outbox.outbox_events (
    event_id           text        PRIMARY KEY,
    event_type         text        NOT NULL,
    job_id             text        NOT NULL REFERENCES outbox.jobs (job_id),
    destination        text        NOT NULL,
    redrive_generation integer     NOT NULL CHECK (redrive_generation >= 0),
    body               text        NOT NULL,
    status             text        NOT NULL DEFAULT 'NEW'
                       CHECK (status IN ('NEW', 'PUBLISHED', 'DEAD')),
    attempts           integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_attempt_at    timestamptz NOT NULL DEFAULT now(),
    claimed_by         text,
    claim_until        timestamptz,
    sqs_message_id     text,
    last_error         text,
    dead_reason        text,
    created_at         timestamptz NOT NULL DEFAULT now(),
    published_at       timestamptz,
    CHECK (event_id = event_type || ':' || job_id || ':' || redrive_generation),
    CHECK ((status = 'DEAD') = (dead_reason IS NOT NULL)),
    CHECK ((status = 'PUBLISHED') = (published_at IS NOT NULL))
);
-- The relay's claim: due NEW events of one destination, oldest due first.
CREATE INDEX outbox_events_new_due ON outbox.outbox_events (destination, next_attempt_at)
    WHERE status = 'NEW';
CREATE INDEX outbox_events_job ON outbox.outbox_events (job_id);
CREATE INDEX outbox_events_destination_status ON outbox.outbox_events (destination, status);

-- Evidence of every message received from a dead-letter queue.
CREATE TABLE outbox.dlq_messages (
    id              bigserial   PRIMARY KEY,
    destination     text        NOT NULL,
    sqs_message_id  text        NOT NULL,
    job_id          text,
    event_id        text,
    body            text        NOT NULL,
    attributes      jsonb       NOT NULL DEFAULT '{}',
    receive_count   integer,
    outcome         text        NOT NULL,
    received_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX dlq_messages_job ON outbox.dlq_messages (job_id);
