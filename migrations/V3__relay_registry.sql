-- V3__relay_registry.sql: which relay serves which destinations.
--
-- Every relay upserts its row when it starts and every
-- RELAY_SWEEP_INTERVAL_SECONDS after that, and deletes it when it stops.
-- The unknown-destination sweep kills only events that no live relay (a
-- fresh heartbeat) serves, so instances with different configurations
-- (a rolling deploy that adds a destination) never kill each other's work.
CREATE TABLE outbox.relay_instances (
    instance_id  text        PRIMARY KEY,
    destinations jsonb       NOT NULL CHECK (jsonb_typeof(destinations) = 'array'),
    started_at   timestamptz NOT NULL DEFAULT now(),
    heartbeat_at timestamptz NOT NULL DEFAULT now()
);
