-- V14__hot_claims.sql: a job's claim updates its row in place (docs/schema.md,
-- docs/performance.md, "Round 4, claims in place").
--
-- PostgreSQL updates a row in place (a HOT update: the new version on the
-- same page, no new index entry) only when no column an index uses changes,
-- as a key, in an expression or in a partial index's predicate.  status was
-- in four of the seven indexes of outbox.jobs, so both of a job's updates
-- (the claim, the completion) wrote a new entry into every index.  Here no
-- index uses status, or any other column a claim writes (claimed_by,
-- lease_until, attempt_count, started_by, crash_count, updated_at): the
-- indexes tell a finished job from an unfinished one by finished_at and a
-- dead one from a succeeded one by dead_reason, which the claim leaves
-- alone.  The completion sets finished_at and still writes new entries.
--
-- A job is terminal exactly when it has finished_at (every path that ends a
-- job sets it, a redrive clears it); the constraint makes the substitution
-- exact.  Rows that disagree, if any, are put right first.
UPDATE outbox.jobs SET finished_at = updated_at
 WHERE status IN ('SUCCEEDED', 'DEAD') AND finished_at IS NULL;
UPDATE outbox.jobs SET finished_at = NULL
 WHERE status IN ('PENDING', 'CLAIMED') AND finished_at IS NOT NULL;
ALTER TABLE outbox.jobs ADD CONSTRAINT jobs_finished_when_terminal
    CHECK ((status IN ('SUCCEEDED', 'DEAD')) = (finished_at IS NOT NULL));

-- The maintenance's scan of due jobs, the sweeper and the ages of the
-- oldest due job: every unfinished job (PENDING and CLAIMED), so a claim
-- leaves its entry where it is.  A CLAIMED job's next_attempt_at is never
-- later than its claim (a claim takes due jobs only), which is what lets
-- the sweeper find expired leases by this index's order.
DROP INDEX outbox.jobs_pending_due;
CREATE INDEX jobs_unfinished_due ON outbox.jobs (destination, next_attempt_at)
    WHERE finished_at IS NULL;

-- The pruner's two classes, oldest first, the jobs finished per minute and
-- outboxctl dead (was jobs_terminal_finished, V5).  Two indexes, not one
-- over both classes: each batch of one class finds its rows without
-- stepping over the other's, whose retention may be longer.  destination
-- rides along so that outboxctl status counts the succeeded jobs of each
-- destination from the index alone.
DROP INDEX outbox.jobs_terminal_finished;
CREATE INDEX jobs_succeeded_finished ON outbox.jobs (finished_at) INCLUDE (destination)
    WHERE finished_at IS NOT NULL AND dead_reason IS NULL;
CREATE INDEX jobs_dead_finished ON outbox.jobs (finished_at, job_id)
    WHERE dead_reason IS NOT NULL;

-- The dead jobs by destination and reason (the console, outboxctl status),
-- as V10 had it, with the predicate that does not name status.
DROP INDEX outbox.jobs_dead_reason;
CREATE INDEX jobs_dead_reason ON outbox.jobs (destination, dead_reason, finished_at, job_id)
    WHERE dead_reason IS NOT NULL;

-- Status counts per state came from (destination, status); the unfinished
-- jobs are now counted through jobs_unfinished_due and their rows, the
-- finished ones from jobs_succeeded_finished and jobs_dead_reason alone.
DROP INDEX outbox.jobs_destination_status;

-- A HOT update needs room on the row's own page.  Rows are inserted in
-- order and updated soon after, so on a full page every claim, and every
-- relay lease of an event (whose columns no index holds either), would go
-- to another page, with new index entries after all.  New pages are filled
-- to 60 % (jobs: a claim and a completion per row) and 75 % (events: one
-- lease per row before its mark); existing pages keep their rows.  In a
-- drain of 60,000 jobs on a durable cluster this took PostgreSQL from
-- 0.108-0.112 to 0.086-0.091 ms of CPU per job (docs/performance.md).
-- The price is disk: the heaps hold their rows in about 1.7 and 1.3 times
-- the pages.
ALTER TABLE outbox.jobs SET (fillfactor = 60);
ALTER TABLE outbox.outbox_events SET (fillfactor = 75);
