-- V1__extractions.sql: what the news_llm plugin stores, one row per news job.
--
-- Applied by `outboxctl migrate` (component "news_llm") after the core's
-- migrations when relay.ini names the news_llm plugin.  The plugin owns the
-- schema news_llm; rows are written in commit(), in the same transaction
-- that marks the job SUCCEEDED, so a job has at most one row.  job_id is
-- the core's outbox.jobs.job_id (no foreign key: the plugin's schema does
-- not depend on the core's table layout).

CREATE SCHEMA IF NOT EXISTS news_llm;

CREATE TABLE news_llm.extractions (
    job_id        text             PRIMARY KEY CHECK (job_id ~ '^[0-9a-f]{64}$'),
    source        text             NOT NULL,
    url           text             NOT NULL,
    title         text             NOT NULL,
    published_at  timestamptz      NOT NULL,
    symbols       text[]           NOT NULL DEFAULT '{}',
    event_type    text             NOT NULL CHECK (event_type <> ''),
    sentiment     double precision NOT NULL CHECK (sentiment BETWEEN -1 AND 1),
    summary       text             NOT NULL CHECK (summary <> ''),
    confidence    double precision NOT NULL CHECK (confidence BETWEEN 0 AND 1),
    model         text             NOT NULL,
    created_at    timestamptz      NOT NULL DEFAULT now()
);

-- The explanation plugin's lookup: "$1 = ANY(symbols)" within a time range.
CREATE INDEX extractions_symbols ON news_llm.extractions USING gin (symbols);
CREATE INDEX extractions_published_at ON news_llm.extractions (published_at);
