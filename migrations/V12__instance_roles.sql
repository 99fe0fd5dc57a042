-- V12__instance_roles.sql: every outboxd process registers, with its role.
--
-- Until now only relays wrote outbox.relay_instances, so an instance
-- started with --role consumer was invisible to outboxctl status and the
-- console.  Each process now keeps one row (the primary key stays
-- instance_id, so a previous release's relay, whose upsert names
-- ON CONFLICT (instance_id) and no role, keeps working and registers as
-- 'relay'): 'relay' for --role relay, 'consumer' for --role consumer,
-- 'all' for a process that runs both halves.  One row per process rather
-- than one per half: a process lives and dies as a whole, and status then
-- lists each process once.
--
-- Only a row whose role includes relaying ('relay', 'all') keeps the NEW
-- events of its destinations from the unknown-destination sweep: a
-- consumer cannot send an event, so its row must not hold one back.
-- Adding a NOT NULL column with a constant default rewrites nothing
-- (PostgreSQL 11 and later); the CHECK scans the table once, and the
-- table holds one row per running process.
ALTER TABLE outbox.relay_instances
    ADD COLUMN role text NOT NULL DEFAULT 'relay'
        CONSTRAINT relay_instances_role CHECK (role IN ('relay', 'consumer', 'all'));
