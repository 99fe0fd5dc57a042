-- V1__evaluations.sql: the price_trigger plugin's own table (component
-- "price_trigger" in outbox.schema_migrations; docs/price-path.md).
--
-- One row per rule per price job.  commit() writes the rows in the job's
-- transaction (ON CONFLICT DO NOTHING), so they exist exactly when the job
-- SUCCEEDED.  execute() reads the window volumes of earlier windows from
-- here for the volume_spike rule.

CREATE SCHEMA IF NOT EXISTS price_trigger;

CREATE TABLE price_trigger.evaluations (
    job_id        text             NOT NULL CHECK (job_id ~ '^[0-9a-f]{64}$'),
    symbol        text             NOT NULL,
    window_start  timestamptz      NOT NULL,
    generation    integer          NOT NULL CHECK (generation >= 1),
    rule          text             NOT NULL
                  CHECK (rule IN ('window_move', 'prev_close_move', 'volume_spike')),
    evaluated     boolean          NOT NULL,  -- false: the data it needs was missing
    value         double precision,           -- NULL when not evaluated
    threshold     double precision NOT NULL,
    fired         boolean          NOT NULL,
    window_volume bigint           NOT NULL CHECK (window_volume >= 0),
    close         double precision NOT NULL,
    note          text,                       -- why it was not evaluated
    evaluated_at  timestamptz      NOT NULL DEFAULT now(),
    PRIMARY KEY (job_id, rule),
    CHECK (evaluated = (value IS NOT NULL)),
    CHECK (NOT fired OR evaluated)
);

-- The trailing-volume lookup: earlier windows of one symbol, newest first.
CREATE INDEX evaluations_symbol_window
    ON price_trigger.evaluations (symbol, window_start DESC, generation DESC);
