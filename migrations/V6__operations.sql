-- V6__operations.sql: poison-job quarantine and per-destination pause
-- (docs/outboxd.md, "Quarantine" and "Pausing a destination").
--
-- started_by: the liveness key of the process whose handler run of the
-- job started last (NULL: claimed but not started).  While that process
-- lives, its heartbeat connection holds the shared advisory lock
-- (1868724324, started_by); a claim that finds the job CLAIMED, started
-- and the lock gone knows the run ended with its process and counts it in
-- crash_count.  After [consumer] quarantine_after_crashes of them the job
-- goes DEAD 'CRASHED' instead of running again; redrive resets both.
ALTER TABLE outbox.jobs
    ADD COLUMN started_by  integer,
    ADD COLUMN crash_count integer NOT NULL DEFAULT 0 CHECK (crash_count >= 0);

-- outboxctl pause DEST / resume DEST: a row means the relay publishes
-- nothing and the consumer claims nothing for that destination.
CREATE TABLE outbox.paused_destinations (
    destination text        PRIMARY KEY,
    paused_at   timestamptz NOT NULL DEFAULT now(),
    paused_by   text        NOT NULL DEFAULT current_user
);
