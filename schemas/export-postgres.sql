-- Handover PostgreSQL export, version 5: one ledger's users projection and events, the same
-- tables and columns as the SQLite export (schemas/export-sqlite.sql) in PostgreSQL's types,
-- and exact_text (below). Written by `handover export --format postgres --out URL`.
-- A run adds the events after export_meta.last_sequence in transactions of --slice events
-- (100,000 by default), each moving last_sequence with its events, so a run stopped at any
-- moment redoes at most one slice and never duplicates or skips. Its last transaction also
-- writes the rows those events keep beside them (event_rows, rows_sequence), the users they
-- changed (users_sequence), the indexes after a first load, the views, and one row in exports.
-- `--since-last` and `--follow` add to an export; a first export that stopped before its last
-- transaction (state = loading) is continued by running the same command again.
-- Exporters take the advisory lock pg_try_advisory_lock(7285430110250) for as long as they
-- run: two never write into one database together.
-- Personal data (email addresses) is present only when the export was made with
-- --include-personal-data (export_meta.personal_data = 1), never for erased users: the export
-- after an erasure clears the user's email and rewrites the user's earlier events' event_json.
-- U+0000 (NUL): PostgreSQL's text and jsonb cannot hold it, and a string from outside may
-- carry it (a forged token's kid, Apple's error text). In a text column it is written as
-- U+FFFD, in event_json as \ufffd, and the row's exact_text holds the exact values of the
-- columns so changed: a JSON object, as text (where \u0000 stands for NUL), with the string
-- of each text column and the event itself under "event_json". exact_text is null in every
-- other row. A client parses exact_text to get the exact value (PostgreSQL itself cannot
-- return a text that holds U+0000); WHERE exact_text IS NOT NULL finds the rows changed.

-- Facts about the export: ledger_id, team_id, role, schema_version, personal_data (0 or 1),
-- last_sequence (the last event exported), users_sequence (the last event the users table
-- reflects), rows_sequence (the last event whose kept rows event_rows holds), state
-- ('loading' while a first export has not finished), window_accepted_at and window_deadline
-- (the transfer window, once recorded), views_version.
CREATE TABLE export_meta (
    key   text PRIMARY KEY,
    value text NOT NULL
);

-- One row per export run into this database.
CREATE TABLE exports (
    export_id     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    exported_at   timestamptz NOT NULL,
    from_sequence bigint NOT NULL,   -- first event this run could add (last + 1 before it)
    to_sequence   bigint NOT NULL,   -- last event in the database after it
    events_added  bigint NOT NULL,
    users_written bigint NOT NULL    -- users inserted or updated
);

-- Every event of the log, in sequence order: the same as `handover query events`.
CREATE TABLE events (
    seq            bigint PRIMARY KEY,     -- the ledger's sequence number
    recorded_at    timestamptz NOT NULL,   -- when the ledger recorded it
    occurred_at    timestamptz,            -- when it happened, if the source says (event_time, iat)
    type           text NOT NULL,          -- schemas/events/<type>.schema.json
    schema_version integer NOT NULL,
    account_id     text,
    sender_sub     text,
    transfer_sub   text,
    recipient_sub  text,
    jti            text,                   -- notifications only
    run_id         text,                   -- the batch run that recorded it
    event_json     jsonb NOT NULL,         -- the whole event; sealed values opened or null
    chain_hash     text NOT NULL,          -- hex SHA-256 chain hash stored with the event
    exact_text     text                    -- exact values where a NUL was replaced (above), else null
);

-- Each user's current state: the columns of `handover query state`.
CREATE TABLE users (
    user_key             bigint PRIMARY KEY,   -- the projection's key for the user
    account_id           text,
    sender_sub           text,
    transfer_sub         text,
    recipient_sub        text,
    target_team          text,
    status               text NOT NULL,   -- unmatched, pending, received, failed, transfer-id-generated, migrated
    migrated_at          timestamptz,     -- when it happened (a sign-in's iat, else recorded)
    migrated_recorded_at timestamptz,     -- when the ledger recorded it
    migrated_via         text,            -- exchange, sign-in, transfer-id-generation
    before_deadline      boolean,         -- migrated before the 60-day deadline
    email                text,            -- only with --include-personal-data
    is_private_email     boolean,
    email_forwarding     text,            -- enabled or disabled
    consent_revoked_at   timestamptz,     -- Apple's event_time
    account_deleted_at   timestamptz,     -- Apple's event_time
    erased_at            timestamptz,
    attempts             integer NOT NULL,
    last_attempt_at      timestamptz,
    last_error_class     text,
    last_error           text,
    notifications        integer NOT NULL,
    first_sequence       bigint NOT NULL,   -- events.seq
    last_sequence        bigint NOT NULL,   -- events.seq
    apply_outcome        text,              -- the sub's: applied, already, no-account, collision, changed-meanwhile, undone
    applied_at           timestamptz,       -- when the ledger recorded that outcome
    email_apply_outcome  text,              -- the relay address's: the same, or kept (an address of the user's own)
    email_applied_at     timestamptz,
    email_forwarding_apply_outcome text,    -- the forwarding flag's
    email_forwarding_applied_at    timestamptz,
    exact_text           text               -- exact values where a NUL was replaced (above), else null
);

-- The rows events keep beside them in the ledger: each row of a handoff package (in "handoff
-- rows received") and each account of an apply batch (in "apply intended" and "apply
-- settled"), which the event's event_json holds only the count and Merkle root (rows_root) of.
-- An export of version 3 or earlier is given every row of the events it holds by the next run.
CREATE TABLE event_rows (
    seq        bigint NOT NULL,    -- the event that keeps the row (events.seq)
    row_index  integer NOT NULL,   -- its place among the event's rows, from 0
    line       text NOT NULL,      -- as kept: a line of the package's rows.csv, or an apply batch's JSON line (addresses opened only with --include-personal-data)
    exact_text text,               -- exact values where a NUL was replaced (above), else null
    PRIMARY KEY (seq, row_index)
);

CREATE INDEX events_type_occurred_at ON events (type, occurred_at);
CREATE INDEX events_recorded_at ON events (recorded_at);
CREATE INDEX events_account_id ON events (account_id) WHERE account_id IS NOT NULL;
CREATE INDEX events_transfer_sub ON events (transfer_sub) WHERE transfer_sub IS NOT NULL;
CREATE INDEX events_recipient_sub ON events (recipient_sub) WHERE recipient_sub IS NOT NULL;
CREATE INDEX events_sender_sub ON events (sender_sub) WHERE sender_sub IS NOT NULL;
CREATE INDEX users_status ON users (status);
CREATE INDEX users_migrated_at ON users (migrated_at);
CREATE INDEX users_last_error_class ON users (last_error_class) WHERE last_error_class IS NOT NULL;
CREATE INDEX users_account_id ON users (account_id) WHERE account_id IS NOT NULL;
CREATE INDEX users_transfer_sub ON users (transfer_sub) WHERE transfer_sub IS NOT NULL;
CREATE INDEX users_recipient_sub ON users (recipient_sub) WHERE recipient_sub IS NOT NULL;
CREATE INDEX users_sender_sub ON users (sender_sub) WHERE sender_sub IS NOT NULL;
