-- V1__explanations.sql: what the explanation plugin stores, one row per
-- explanation job (one per symbol, window and window generation).
--
-- Applied by `outboxctl migrate` (component "explanation") after the core's
-- migrations when relay.ini names the explanation plugin.  Rows are written
-- in commit(), in the transaction that marks the job SUCCEEDED.
-- cited_job_ids are job ids of news_llm.extractions rows the model was
-- given and relied on (no foreign key: each plugin owns only its schema).

CREATE SCHEMA IF NOT EXISTS explanation;

CREATE TABLE explanation.explanations (
    job_id         text             PRIMARY KEY CHECK (job_id ~ '^[0-9a-f]{64}$'),
    symbol         text             NOT NULL,
    window_start   timestamptz      NOT NULL,
    generation     integer          NOT NULL CHECK (generation >= 1),
    move_pct       double precision NOT NULL,
    rules          jsonb            NOT NULL CHECK (jsonb_typeof(rules) = 'array'),
    explanation    text             NOT NULL CHECK (explanation <> ''),
    cited_job_ids  text[]           NOT NULL DEFAULT '{}',
    model          text             NOT NULL,
    created_at     timestamptz      NOT NULL DEFAULT now()
);

CREATE INDEX explanations_symbol_window ON explanation.explanations (symbol, window_start);
