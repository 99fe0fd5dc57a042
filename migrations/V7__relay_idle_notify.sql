-- V7__relay_idle_notify.sql: wake the relay only when a lane is asleep.
--
-- V2 sent a notification from every producer transaction.  That costs the
-- producers twice while the relay is busy anyway: PostgreSQL serialises the
-- commits of notifying transactions (the notification queue is locked from
-- before the commit record to after it), and every notification wakes a
-- lane for a pass of one or two events.  Measured on the development
-- machine's durable cluster (docs/performance.md, "Waking up"): producers
-- kept 22 % of their solo commit rate with outboxd draining concurrently;
-- with no notification at all, 69 %.
--
-- Now a lane that goes to sleep waiting for work writes a row here (and
-- removes it when it is busy again, polling on its own: relay/lane.c), and
-- the trigger notifies only when a row names the event's destination.  The
-- trigger is a deferred constraint trigger so that it looks at the table
-- at COMMIT, not when the row was inserted: a lane that went to sleep while
-- a long producer transaction was still open is still woken.  The
-- remaining window (a lane that writes its row between a producer's check
-- and its commit becoming visible) costs at most poll_interval_ms of
-- latency: the lane re-checks for work right after writing its row, and
-- polls anyway.
--
-- UNLOGGED: rows are advisory, written often and never worth a WAL flush;
-- after a crash the table is empty, which only means no notification until
-- the lanes, woken by their listener's reconnect, sleep again.

CREATE UNLOGGED TABLE outbox.relay_idle (
    destination text NOT NULL,
    instance_id text NOT NULL,   -- outbox.relay_instances.instance_id
    since       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (destination, instance_id)
);

DROP TRIGGER outbox_events_notify_new ON outbox.outbox_events;
DROP FUNCTION outbox.notify_outbox_new();

CREATE FUNCTION outbox.notify_outbox_idle() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    -- pg_notify folds identical notifications within a transaction, so a
    -- bulk enqueue still sends one per destination.
    IF EXISTS (SELECT 1 FROM outbox.relay_idle WHERE destination = NEW.destination) THEN
        PERFORM pg_notify('outbox_new', NEW.destination);
    END IF;
    RETURN NULL;
END
$$;

CREATE CONSTRAINT TRIGGER outbox_events_notify_idle
    AFTER INSERT ON outbox.outbox_events
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION outbox.notify_outbox_idle();
