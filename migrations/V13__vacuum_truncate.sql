-- V13__vacuum_truncate.sql: no VACUUM gives the outbox tables' empty tail
-- back to the file system (docs/maintenance.md, "Keeping the indexes
-- compact").
--
-- The pruner deletes the oldest rows and its VACUUM (every [retention]
-- vacuum_after_rows deleted rows) puts their pages in the free space map,
-- so new rows fill the front of the file and its end empties.  A VACUUM
-- that may truncate then gives that end back, which takes an ACCESS
-- EXCLUSIVE lock on the table (the producers' inserts wait for it) and
-- lets the next rows extend the file again: the soak saw both heaps drop
-- by up to a third at constant live rows, each drop at one of autovacuum's
-- runs.
-- The pruner's own VACUUM already says TRUNCATE false; this reloption is
-- what autovacuum honours.  The file then stays at its high-water mark,
-- the live rows of the retention horizon plus the rows deleted between two
-- vacuums, and its free pages are reused.
ALTER TABLE outbox.jobs SET (vacuum_truncate = false);
ALTER TABLE outbox.outbox_events SET (vacuum_truncate = false);
