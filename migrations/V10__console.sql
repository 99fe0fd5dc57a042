-- V10__console.sql: what the web console's dead-jobs page needs
-- (docs/console.md, "Performance").
--
-- /dead counts the dead jobs by destination and reason.  Through
-- jobs_terminal_finished that reads every dead row from the heap (a
-- quarter of a second for 20,000 of them); this partial index answers it
-- from the index alone.  Only DEAD rows are in it, so a job costs it
-- nothing until it dies, and a job dies once.  finished_at and job_id
-- make it the order of the page filtered by destination and reason too.
CREATE INDEX jobs_dead_reason ON outbox.jobs (destination, dead_reason, finished_at, job_id)
    WHERE status = 'DEAD';
