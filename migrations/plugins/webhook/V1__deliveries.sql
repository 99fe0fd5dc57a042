-- V1__deliveries.sql: what the webhook plugin stores, one row per delivered job.
--
-- Applied by `outboxctl migrate` (component "webhook") after the core's
-- migrations when relay.ini names the webhook plugin.  The plugin owns the
-- schema webhook; a row is written in commit(), in the transaction that
-- marks the job SUCCEEDED, so a job (in one redrive generation) has at most
-- one row although the receiver may have seen the request more than once.
-- job_id is the core's outbox.jobs.job_id (no foreign key: the plugin's
-- schema does not depend on the core's table layout).

CREATE SCHEMA IF NOT EXISTS webhook;

CREATE TABLE webhook.deliveries (
    job_id              text        NOT NULL CHECK (job_id ~ '^[0-9a-f]{64}$'),
    redrive_generation  integer     NOT NULL CHECK (redrive_generation >= 0),
    attempt             integer     NOT NULL CHECK (attempt >= 1),
    status_code         integer     NOT NULL CHECK (status_code BETWEEN 200 AND 299),
    duration_ms         bigint      NOT NULL CHECK (duration_ms >= 0),
    delivered_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (job_id, redrive_generation)
);

-- "what was delivered lately": the retention and the operator's look-ups.
CREATE INDEX deliveries_delivered_at ON webhook.deliveries (delivered_at);
