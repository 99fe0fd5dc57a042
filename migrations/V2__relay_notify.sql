-- V2__relay_notify.sql: wake the relay when events are inserted.
--
-- One notification per statement and destination, not per row: a
-- statement-level trigger with a transition table sees every inserted row
-- at once.  PostgreSQL delivers notifications only at commit (a rolled-back
-- enqueue wakes nobody) and folds identical ones within a transaction, so a
-- transaction that enqueues a thousand news jobs sends one 'outbox_new'
-- with payload 'news'.  The relay never depends on it: it polls anyway
-- (docs/relay.md, "Waking up").

CREATE FUNCTION outbox.notify_outbox_new() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    dest text;
BEGIN
    FOR dest IN SELECT DISTINCT destination FROM inserted_events LOOP
        PERFORM pg_notify('outbox_new', dest);
    END LOOP;
    RETURN NULL;
END
$$;

CREATE TRIGGER outbox_events_notify_new
    AFTER INSERT ON outbox.outbox_events
    REFERENCING NEW TABLE AS inserted_events
    FOR EACH STATEMENT EXECUTE FUNCTION outbox.notify_outbox_new();
