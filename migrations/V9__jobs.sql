-- V9__jobs.sql: jobs scheduled for later, cancelled or made due by an
-- operator, and listed one by one (docs/schema.md, docs/producers.md,
-- docs/outboxctl.md).
--
-- Nothing here rewrites a row: run_at is a new column without a default
-- (NULL: "as soon as possible", what every job enqueued before meant).

-- When the producer asked the job to run first.  The job's
-- next_attempt_at and its outbox event's next_attempt_at start there, so
-- the relay holds the event until it is due (an SQS delay stops at 15
-- minutes; a job may be days ahead) and no claim can start an attempt
-- before it.  Kept as given afterwards, as a record.
ALTER TABLE outbox.jobs ADD COLUMN run_at timestamptz;

-- outboxctl jobs: newest first, one page at a time by the keyset
-- (created_at, job_id).  Without it the first page of a large table sorts
-- every row; created_at grows with time, so each insert lands at the
-- index's right edge (the cost on enqueue is in docs/performance.md).
CREATE INDEX jobs_created ON outbox.jobs (created_at, job_id);

-- outbox.enqueue() gains run_at.  A second function beside the old one
-- would make every existing call ambiguous, so it is replaced: calls that
-- name their arguments, or pass the first eight by position, keep working.
DROP FUNCTION outbox.enqueue(text, text, json, jsonb, text, text, timestamptz, integer);

-- Enqueue a job: the job row and, if the job is new, its outbox event, in
-- the caller's transaction.  A second call for the same identity writes
-- nothing and returns the job's ids (created = false): not even a
-- different run_at moves the job.  Both inserts are ON CONFLICT DO
-- NOTHING, so a concurrent enqueue of the same job waits on the primary
-- key and then does nothing.  window_* tie a job to a price window
-- (outbox.confirm_price_window() passes them).  A run_at in the past means
-- now: it must not put the event ahead of events already waiting.
CREATE FUNCTION outbox.enqueue(job_type text, destination text, identity json, payload jsonb,
                               traceparent text DEFAULT NULL,
                               window_symbol text DEFAULT NULL,
                               window_start timestamptz DEFAULT NULL,
                               window_generation integer DEFAULT NULL,
                               run_at timestamptz DEFAULT NULL)
RETURNS TABLE (job_id text, event_id text, created boolean)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_job_id text;
    v_event_id text;
    v_body text;
    v_due timestamptz := greatest(coalesce(enqueue.run_at, now()), now());
    v_existing record;
BEGIN
    IF enqueue.job_type IS NULL OR enqueue.job_type = '' THEN
        RAISE EXCEPTION 'job type must not be empty' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- event ids ("type:job_id:generation") must fit in liboutbox's 128 bytes
    -- (OUTBOX_EVENT_ID_MAX) for every generation up to 2147483647
    IF octet_length(enqueue.job_type) > 50 THEN
        RAISE EXCEPTION 'job type "%" is longer than 50 bytes', left(enqueue.job_type, 60) || '...'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF enqueue.destination IS NULL OR enqueue.destination = '' THEN
        RAISE EXCEPTION 'destination must not be empty' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- An unknown destination is fine (the relay owns routing, and one may
    -- be added later), but one no relay.ini can name could never be sent.
    IF enqueue.destination !~ '^[a-z0-9_-]{1,40}$' THEN
        RAISE EXCEPTION 'invalid destination "%": must match [a-z0-9_-]{1,40}',
            left(enqueue.destination, 80)
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'No relay.ini can name such a destination, so the job could never be sent.';
    END IF;
    IF enqueue.identity IS NULL THEN
        RAISE EXCEPTION 'job identity must be a JSON object, not null'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF enqueue.payload IS NULL OR jsonb_typeof(enqueue.payload) NOT IN ('object', 'array') THEN
        RAISE EXCEPTION 'job payload must be a JSON object or array, not %',
            coalesce(jsonb_typeof(enqueue.payload), 'null')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF enqueue.traceparent IS NOT NULL
       AND (enqueue.traceparent !~ '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$'
            OR left(enqueue.traceparent, 2) = 'ff'
            OR substr(enqueue.traceparent, 4, 32) = repeat('0', 32)
            OR substr(enqueue.traceparent, 37, 16) = repeat('0', 16)) THEN
        RAISE EXCEPTION 'invalid traceparent "%"', enqueue.traceparent
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'A W3C trace context looks like 00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>.';
    END IF;
    IF enqueue.run_at IS NOT NULL AND NOT isfinite(enqueue.run_at) THEN
        RAISE EXCEPTION 'run_at must be a finite time, not %', enqueue.run_at
            USING ERRCODE = 'invalid_parameter_value';
    END IF;

    v_job_id := outbox.job_id(enqueue.identity);
    v_event_id := enqueue.job_type || ':' || v_job_id || ':0';
    -- What the relay sends: enough to find the job; the database, not the
    -- message, decides what happens (docs/consumer.md).
    v_body := '{"event_id":' || outbox.json_quote(v_event_id)
        || ',"job_id":' || outbox.json_quote(v_job_id)
        || ',"job_type":' || outbox.json_quote(enqueue.job_type)
        || ',"destination":' || outbox.json_quote(enqueue.destination)
        || ',"redrive_generation":0'
        || CASE WHEN enqueue.window_generation IS NULL THEN ''
                ELSE ',"window_generation":' || enqueue.window_generation END
        || '}';
    -- With the type at most 50 bytes and the destination at most 40, the
    -- body stays under 400 bytes: far below SQS's 1 MiB (docs/relay.md,
    -- OVERSIZE), so no job enqueued here can die as OVERSIZE.  The payload
    -- is not in the message: the handler reads it from the job row.

    INSERT INTO outbox.jobs AS j (job_id, job_type, destination, identity, payload,
                                  window_symbol, window_start, window_generation,
                                  run_at, next_attempt_at)
    VALUES (v_job_id, enqueue.job_type, enqueue.destination, enqueue.identity::jsonb,
            enqueue.payload, enqueue.window_symbol, enqueue.window_start,
            enqueue.window_generation, enqueue.run_at, v_due)
    ON CONFLICT (job_id) DO NOTHING;
    IF FOUND THEN
        INSERT INTO outbox.outbox_events (event_id, event_type, job_id, destination,
                                          redrive_generation, body, traceparent,
                                          next_attempt_at)
        VALUES (v_event_id, enqueue.job_type, v_job_id, enqueue.destination, 0, v_body,
                enqueue.traceparent, v_due)
        ON CONFLICT (event_id) DO NOTHING;
        RETURN QUERY SELECT v_job_id, v_event_id, true;
        RETURN;
    END IF;

    SELECT j.job_type, j.redrive_generation INTO v_existing
      FROM outbox.jobs j WHERE j.job_id = v_job_id;
    IF v_existing.job_type IS DISTINCT FROM enqueue.job_type THEN
        RAISE EXCEPTION 'job "%" already exists with job type "%", not "%"',
            v_job_id, v_existing.job_type, enqueue.job_type
            USING ERRCODE = 'unique_violation',
                  HINT = 'Put the job type in the identity (as "type") to keep job types apart.';
    END IF;
    RETURN QUERY SELECT v_job_id,
                        enqueue.job_type || ':' || v_job_id || ':' || v_existing.redrive_generation,
                        false;
END
$$;

-- Cancel a job that has not run to its end: a PENDING job (or one whose
-- claim's lease ran out, so nobody is running it) becomes DEAD 'CANCELLED'
-- and its unsent outbox event is retired (DEAD 'CANCELLED', never sent); a
-- message already in the queue finds the job terminal and is deleted
-- without running anything (docs/consumer.md).  Never touches a job under
-- a live lease: its handler may be running, and only its own completion
-- may end that attempt.  One row:
--   cancelled          the job was cancelled now
--   already_cancelled  it was cancelled before (nothing changed)
--   claimed            it is CLAIMED under a live lease (nothing changed)
--   finished           it is SUCCEEDED or DEAD for another reason
--   not_found          no such job
-- actor names who asked, in last_error (default: the session's user).
CREATE FUNCTION outbox.cancel(job_id text, actor text DEFAULT NULL)
RETURNS TABLE (outcome text, status text, dead_reason text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v record;
BEGIN
    SELECT j.status, j.dead_reason, j.redrive_generation,
           (j.status = 'CLAIMED' AND j.lease_until > now()) AS leased
      INTO v FROM outbox.jobs j WHERE j.job_id = cancel.job_id FOR UPDATE;
    IF NOT FOUND THEN
        RETURN QUERY SELECT 'not_found'::text, NULL::text, NULL::text;
        RETURN;
    END IF;
    IF v.status = 'DEAD' AND v.dead_reason = 'CANCELLED' THEN
        RETURN QUERY SELECT 'already_cancelled'::text, v.status, v.dead_reason;
        RETURN;
    END IF;
    IF v.status IN ('SUCCEEDED', 'DEAD') THEN
        RETURN QUERY SELECT 'finished'::text, v.status, v.dead_reason;
        RETURN;
    END IF;
    IF v.leased THEN
        RETURN QUERY SELECT 'claimed'::text, v.status, v.dead_reason;
        RETURN;
    END IF;
    UPDATE outbox.jobs j
       SET status = 'DEAD', dead_reason = 'CANCELLED',
           last_error = 'cancelled by ' || coalesce(cancel.actor, session_user::text),
           claimed_by = NULL, lease_until = NULL, finished_at = now(), updated_at = now()
     WHERE j.job_id = cancel.job_id;
    -- A NEW event under a live relay claim is being sent right now: the
    -- relay's mark then finds it DEAD and leaves it so (relay/outbox_store.c),
    -- and its message finds the job terminal.
    UPDATE outbox.outbox_events e
       SET status = 'DEAD', dead_reason = 'CANCELLED',
           last_error = 'the job was cancelled before this event was sent',
           claimed_by = NULL, claim_until = NULL
     WHERE e.job_id = cancel.job_id AND e.redrive_generation = v.redrive_generation
       AND e.status = 'NEW';
    RETURN QUERY SELECT 'cancelled'::text, 'DEAD'::text, 'CANCELLED'::text;
END
$$;

-- Make a PENDING job due now: one waiting out a retry's backoff, or
-- scheduled for later (run_at).  Its outbox event is re-armed as the
-- consumer's retry does (NEW again, same event_id, due now), so the relay
-- sends a fresh wake-up: the old message may be invisible until the old due
-- time.  An event under a live relay claim is being sent right now and is
-- left alone (that message is the wake-up).  One row:
--   due_now      the job was not due and is now
--   already_due  it was due already (nothing changed)
--   claimed      it is CLAIMED (a run is in progress or about to be retried)
--   finished     it is SUCCEEDED or DEAD (outboxctl redrive sends it again)
--   not_found    no such job
CREATE FUNCTION outbox.retry_now(job_id text)
RETURNS TABLE (outcome text, status text, next_attempt_at timestamptz)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v record;
BEGIN
    SELECT j.status, j.redrive_generation, j.next_attempt_at
      INTO v FROM outbox.jobs j WHERE j.job_id = retry_now.job_id FOR UPDATE;
    IF NOT FOUND THEN
        RETURN QUERY SELECT 'not_found'::text, NULL::text, NULL::timestamptz;
        RETURN;
    END IF;
    IF v.status IN ('SUCCEEDED', 'DEAD') THEN
        RETURN QUERY SELECT 'finished'::text, v.status, v.next_attempt_at;
        RETURN;
    END IF;
    IF v.status = 'CLAIMED' THEN
        RETURN QUERY SELECT 'claimed'::text, v.status, v.next_attempt_at;
        RETURN;
    END IF;
    IF v.next_attempt_at <= now() THEN
        RETURN QUERY SELECT 'already_due'::text, v.status, v.next_attempt_at;
        RETURN;
    END IF;
    UPDATE outbox.jobs j SET next_attempt_at = now(), updated_at = now()
     WHERE j.job_id = retry_now.job_id;
    UPDATE outbox.outbox_events e
       SET status = 'NEW', published_at = NULL, next_attempt_at = now(),
           claimed_by = NULL, claim_until = NULL,
           last_error = 'the job was made due now by outbox.retry_now()'
     WHERE e.job_id = retry_now.job_id AND e.redrive_generation = v.redrive_generation
       AND (e.status = 'PUBLISHED'
            OR e.status = 'NEW' AND (e.claim_until IS NULL OR e.claim_until < now()));
    RETURN QUERY SELECT 'due_now'::text, v.status, now();
END
$$;

-- The periodic jobs of [schedule:NAME] sections (docs/configuration.md):
-- the last slot enqueued for each schedule, written in the same statement
-- as the slot's job, so that an instance taking over knows where the
-- schedule stands.  The job itself is what makes a slot run once (its
-- identity is {"schedule": NAME, "slot": TIME}); this row only says how
-- far the schedule got.
CREATE TABLE outbox.schedules (
    name        text        PRIMARY KEY,
    last_slot   timestamptz NOT NULL,
    last_job_id text        NOT NULL,
    instance_id text        NOT NULL,   -- the outboxd instance that enqueued it
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- The producers' role of V8 keeps its right to enqueue: the function it was
-- granted on was replaced above.  A migrating role that may not create
-- roles left it uncreated (V8 warned); then there is nothing to grant.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'outbox_producer') THEN
        GRANT EXECUTE ON FUNCTION
            outbox.enqueue(text, text, json, jsonb, text, text, timestamptz, integer, timestamptz)
            TO outbox_producer;
    END IF;
END
$$;
