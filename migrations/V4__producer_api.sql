-- V4__producer_api.sql: the producer API in SQL, so that a producer in any
-- language enqueues with one statement in its own transaction
-- (docs/producers.md).  liboutbox calls these functions too: they are the
-- one definition of a job's identity, event id and message body
-- (docs/identifiers.md).
--
-- Nothing here changes an existing row: a job enqueued before this
-- migration has the job_id these functions compute for it, so enqueueing it
-- again stays a no-op.

-- W3C trace context of the producer, sent with the message as the SQS
-- message attribute "traceparent" (docs/producers.md, "Tracing").
ALTER TABLE outbox.outbox_events ADD COLUMN traceparent text
    CHECK (traceparent ~ '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$');

-- A JSON string as jansson prints it (JSON_COMPACT, no JSON_ENSURE_ASCII,
-- no JSON_ESCAPE_SLASH): \" \\ \b \f \n \r \t, \u00XX in upper-case hex for
-- the other control characters, everything else (/, DEL, non-ASCII) as it
-- is.  to_json() agrees except that it prints that hex in lower case, so
-- only a string holding such a character takes the slow path.
CREATE FUNCTION outbox.json_quote(value text) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    out text := '"';
    c text;
BEGIN
    IF value !~ '[\x01-\x07\x0b\x0e-\x1f]' THEN
        RETURN to_json(value)::text;
    END IF;
    FOREACH c IN ARRAY regexp_split_to_array(value, '') LOOP
        out := out || CASE
            WHEN c = '"' THEN '\"'
            WHEN c = '\' THEN '\\'
            WHEN c = E'\b' THEN '\b'
            WHEN c = E'\f' THEN '\f'
            WHEN c = E'\n' THEN '\n'
            WHEN c = E'\r' THEN '\r'
            WHEN c = E'\t' THEN '\t'
            WHEN ascii(c) < 32 THEN '\u' || upper(lpad(to_hex(ascii(c)), 4, '0'))
            ELSE c
        END;
    END LOOP;
    RETURN out || '"';
END
$$;

-- A JSON number as jansson prints it.  jansson reads a number without
-- ".", "e" or "E" as a 64-bit integer (printed in plain decimal, so "-0" is
-- "0") and refuses a larger one; any other number is a double printed with
-- "%.17g", then ".0" appended if that has neither "." nor "e", and the
-- exponent's "+" and leading zeros dropped: 0.1 is 0.10000000000000001,
-- 1e16 is 10000000000000000.0, 1e17 is 1e17.  to_char(..., EEEE) gives the
-- same seventeen significant digits as printf's "%.16e".
CREATE FUNCTION outbox.json_number(value text) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    n numeric;
    sci text;
    neg boolean;
    digits text;
    exp integer;
    whole text;
    frac text;
BEGIN
    IF value ~ '^-?[0-9]{1,18}$' THEN
        RETURN value::bigint::text; -- every such integer fits in 64 bits
    END IF;
    IF value ~ '^-?[0-9]+$' THEN
        n := value::numeric;
        IF n < -9223372036854775808 OR n > 9223372036854775807 THEN
            RAISE EXCEPTION 'number % in a job identity is out of range for a 64-bit integer', value
                USING ERRCODE = 'numeric_value_out_of_range';
        END IF;
        RETURN n::text;
    END IF;
    sci := btrim(to_char(value::float8, '9.9999999999999999EEEE'));
    neg := left(sci, 1) = '-';
    sci := ltrim(sci, '-');
    digits := rtrim(left(sci, 1) || substr(sci, 3, 16), '0');
    exp := split_part(sci, 'e', 2)::integer;
    IF digits = '' THEN
        digits := '0';
        exp := 0;
    END IF;
    IF exp < -4 OR exp >= 17 THEN
        sci := left(digits, 1)
            || CASE WHEN length(digits) > 1 THEN '.' || substr(digits, 2) ELSE '' END
            || 'e' || exp::text;
    ELSIF exp >= 0 THEN
        whole := rpad(left(digits, exp + 1), exp + 1, '0');
        frac := substr(digits, exp + 2);
        sci := whole || '.' || CASE WHEN frac = '' THEN '0' ELSE frac END;
    ELSE
        sci := '0.' || repeat('0', -exp - 1) || digits;
    END IF;
    RETURN CASE WHEN neg THEN '-' ELSE '' END || sci;
END
$$;

-- The canonical form of a JSON value: compact, members in the caller's
-- order, strings and numbers as jansson prints them with JSON_COMPACT |
-- JSON_PRESERVE_ORDER, which is what liboutbox has always hashed.  A
-- duplicate member name is refused: jansson would keep the first one's
-- place and the last one's value, which no reader of the text expects.
CREATE FUNCTION outbox.canonical_json(value json) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    out text;
    dup text;
    has_dup boolean;
BEGIN
    CASE json_typeof(value)
    WHEN 'object' THEN
        -- scalars inline: a call of canonical_json() per member would double the cost
        SELECT '{' || coalesce(string_agg(outbox.json_quote(e.key) || ':' || CASE json_typeof(e.value)
                   WHEN 'string' THEN outbox.json_quote(e.value #>> '{}')
                   WHEN 'number' THEN outbox.json_number(e.value::text)
                   WHEN 'boolean' THEN e.value::text
                   WHEN 'null' THEN 'null'
                   ELSE outbox.canonical_json(e.value) END, ',' ORDER BY e.ord), '')
               || '}',
               count(*) <> count(DISTINCT e.key)
          INTO out, has_dup FROM json_each(value) WITH ORDINALITY AS e(key, value, ord);
        IF has_dup THEN
            SELECT key INTO dup FROM json_each(value) GROUP BY key HAVING count(*) > 1 LIMIT 1;
            RAISE EXCEPTION 'duplicate member "%" in a JSON object', dup
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
    WHEN 'array' THEN
        SELECT '[' || coalesce(string_agg(outbox.canonical_json(e.value), ',' ORDER BY e.ord), '')
               || ']'
          INTO out FROM json_array_elements(value) WITH ORDINALITY AS e(value, ord);
    WHEN 'string' THEN
        out := outbox.json_quote(value #>> '{}');
    WHEN 'number' THEN
        out := outbox.json_number(btrim(value::text, E' \t\r\n'));
    ELSE
        out := btrim(value::text, E' \t\r\n'); -- true, false, null
    END CASE;
    RETURN out;
END
$$;

-- job_id: the lower-case hex SHA-256 of the identity's canonical form.
CREATE FUNCTION outbox.job_id(identity json) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
    IF json_typeof(identity) <> 'object' THEN
        RAISE EXCEPTION 'job identity must be a JSON object, not %', json_typeof(identity)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN encode(sha256(convert_to(outbox.canonical_json(identity), 'UTF8')), 'hex');
END
$$;

-- Enqueue a job: the job row and, if the job is new, its outbox event, in
-- the caller's transaction.  A second call for the same identity writes
-- nothing and returns the job's ids (created = false).  Both inserts are
-- ON CONFLICT DO NOTHING, so a concurrent enqueue of the same job waits on
-- the primary key and then does nothing.  window_* tie a job to a price
-- window (outbox.confirm_price_window() passes them).
CREATE FUNCTION outbox.enqueue(job_type text, destination text, identity json, payload jsonb,
                               traceparent text DEFAULT NULL,
                               window_symbol text DEFAULT NULL,
                               window_start timestamptz DEFAULT NULL,
                               window_generation integer DEFAULT NULL)
RETURNS TABLE (job_id text, event_id text, created boolean)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
    v_job_id text;
    v_event_id text;
    v_body text;
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
                                  window_symbol, window_start, window_generation)
    VALUES (v_job_id, enqueue.job_type, enqueue.destination, enqueue.identity::jsonb,
            enqueue.payload, enqueue.window_symbol, enqueue.window_start,
            enqueue.window_generation)
    ON CONFLICT (job_id) DO NOTHING;
    IF FOUND THEN
        INSERT INTO outbox.outbox_events (event_id, event_type, job_id, destination,
                                          redrive_generation, body, traceparent)
        VALUES (v_event_id, enqueue.job_type, v_job_id, enqueue.destination, 0, v_body,
                enqueue.traceparent)
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

-- The price path for a worker that writes the window's artifact to S3
-- itself (docs/price-path.md): confirm the window and, unless it is a
-- backfill, enqueue its job, in the caller's transaction.  The first
-- confirmation creates generation 1; a different artifact (a correction)
-- raises the generation; the same artifact again changes nothing.  The
-- upsert row-locks the window, which the consumer's staleness check also
-- locks.  job_id, event_id and created are NULL for a backfill.
CREATE FUNCTION outbox.confirm_price_window(destination text, symbol text,
                                            window_start timestamptz,
                                            artifact_key text, artifact_sha256 text,
                                            backfill boolean DEFAULT false,
                                            traceparent text DEFAULT NULL)
RETURNS TABLE (generation integer, corrected boolean, job_id text, event_id text,
               created boolean)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
    v_start timestamptz;
    v_start_text text;
    v_generation integer;
    v_corrected boolean := false;
    v_job record;
BEGIN
    IF confirm_price_window.symbol IS NULL OR confirm_price_window.symbol = '' THEN
        RAISE EXCEPTION 'price window needs a symbol' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF confirm_price_window.window_start IS NULL THEN
        RAISE EXCEPTION 'price window needs a window start' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF coalesce(confirm_price_window.artifact_key, '') = ''
       OR confirm_price_window.artifact_sha256 IS NULL THEN
        RAISE EXCEPTION 'price window needs an artifact key and its SHA-256'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF confirm_price_window.artifact_sha256 !~ '^[0-9a-f]{64}$' THEN
        RAISE EXCEPTION 'artifact SHA-256 "%" is not 64 lower-case hex digits',
            confirm_price_window.artifact_sha256 USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- windows start on whole seconds
    v_start := date_trunc('second', confirm_price_window.window_start);
    v_start_text := to_char(v_start AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"');

    INSERT INTO outbox.price_windows AS w
           (symbol, window_start, artifact_key, artifact_sha256, backfill)
    VALUES (confirm_price_window.symbol, v_start, confirm_price_window.artifact_key,
            confirm_price_window.artifact_sha256, confirm_price_window.backfill)
    ON CONFLICT (symbol, window_start) DO UPDATE
       SET generation = w.generation + 1, artifact_key = EXCLUDED.artifact_key,
           artifact_sha256 = EXCLUDED.artifact_sha256, corrected_at = now(),
           backfill = w.backfill AND EXCLUDED.backfill
     WHERE w.artifact_sha256 IS DISTINCT FROM EXCLUDED.artifact_sha256
    RETURNING w.generation, (w.xmax <> 0) INTO v_generation, v_corrected;
    IF NOT FOUND THEN
        SELECT w.generation INTO v_generation FROM outbox.price_windows w
         WHERE w.symbol = confirm_price_window.symbol AND w.window_start = v_start;
        v_corrected := false;
    END IF;
    IF confirm_price_window.backfill THEN
        RETURN QUERY SELECT v_generation, v_corrected, NULL::text, NULL::text, NULL::boolean;
        RETURN;
    END IF;

    SELECT * INTO v_job FROM outbox.enqueue(
        job_type => 'price', destination => confirm_price_window.destination,
        identity => json_build_object('type', 'price', 'symbol', confirm_price_window.symbol,
                                      'window_start', v_start_text, 'generation', v_generation),
        payload => jsonb_build_object('symbol', confirm_price_window.symbol,
                                      'window_start', v_start_text, 'generation', v_generation,
                                      'artifact_key', confirm_price_window.artifact_key,
                                      'artifact_sha256', confirm_price_window.artifact_sha256),
        traceparent => confirm_price_window.traceparent,
        window_symbol => confirm_price_window.symbol, window_start => v_start,
        window_generation => v_generation);
    RETURN QUERY SELECT v_generation, v_corrected, v_job.job_id, v_job.event_id, v_job.created;
END
$$;
