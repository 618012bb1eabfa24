-- Handover SQLite export, version 4: one ledger's users projection, events and the rows
-- events keep beside them.
-- Written by `handover export --format sqlite --out FILE`; `--since-last` adds, in one
-- transaction, the events after export_meta.last_sequence, their kept rows and the users
-- changed since.
-- Times are RFC 3339 UTC text with microseconds (they sort as text).
-- A first export runs the CREATE TABLE statements, loads the rows, then runs the CREATE
-- INDEX statements (one sorted build each instead of an index update per row).
-- Personal data (email addresses) is present only when the export was made with
-- --include-personal-data (export_meta.personal_data = 1), never for erased users.

-- Facts about the export: ledger_id, team_id, role, schema_version, personal_data
-- (0 or 1), last_sequence (the last event exported).
CREATE TABLE export_meta (
    key   TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
) WITHOUT ROWID;

-- One row per export run into this file.
CREATE TABLE exports (
    export_id     INTEGER PRIMARY KEY,
    exported_at   TEXT NOT NULL,
    from_sequence INTEGER NOT NULL,   -- first event this run added (last + 1 before it)
    to_sequence   INTEGER NOT NULL,   -- last event in the file after it
    events_added  INTEGER NOT NULL,
    users_written INTEGER NOT NULL    -- users inserted or replaced
);

-- Every event of the log, in sequence order: the same as `handover query events`.
CREATE TABLE events (
    seq            INTEGER PRIMARY KEY,   -- the ledger's sequence number
    recorded_at    TEXT NOT NULL,         -- when the ledger recorded it
    occurred_at    TEXT,                  -- when it happened, if the source says (event_time, iat)
    type           TEXT NOT NULL,         -- schemas/events/<type>.schema.json
    schema_version INTEGER NOT NULL,
    account_id     TEXT,
    sender_sub     TEXT,
    transfer_sub   TEXT,
    recipient_sub  TEXT,
    jti            TEXT,                  -- notifications only
    run_id         TEXT,                  -- the batch run that recorded it
    event_json     TEXT NOT NULL,         -- the whole event; sealed values opened or null
    chain_hash     TEXT NOT NULL          -- hex SHA-256 chain hash stored with the event
);
CREATE INDEX events_type ON events (type, seq);
CREATE INDEX events_recorded_at ON events (recorded_at);
CREATE INDEX events_account_id ON events (account_id) WHERE account_id IS NOT NULL;
CREATE INDEX events_transfer_sub ON events (transfer_sub) WHERE transfer_sub IS NOT NULL;
CREATE INDEX events_recipient_sub ON events (recipient_sub) WHERE recipient_sub IS NOT NULL;
CREATE INDEX events_sender_sub ON events (sender_sub) WHERE sender_sub IS NOT NULL;

-- The rows events keep beside them in the ledger: each row of a handoff package (in "handoff
-- rows received") and each account of an apply batch (in "apply intended" and "apply
-- settled"), which the event's event_json holds only the count and Merkle root (rows_root) of.
-- An export of version 2 or earlier is given every row of the events it holds by the next run.
CREATE TABLE event_rows (
    seq       INTEGER NOT NULL REFERENCES events (seq),   -- the event that keeps the row
    row_index INTEGER NOT NULL,   -- its place among the event's rows, from 0
    line      TEXT NOT NULL,      -- as kept: a line of the package's rows.csv, or an apply batch's JSON line (addresses opened only with --include-personal-data)
    PRIMARY KEY (seq, row_index)
) WITHOUT ROWID;

-- Each user's current state: the columns of `handover query state`.
CREATE TABLE users (
    user_key             INTEGER PRIMARY KEY,   -- the projection's key for the user
    account_id           TEXT,
    sender_sub           TEXT,
    transfer_sub         TEXT,
    recipient_sub        TEXT,
    target_team          TEXT,
    status               TEXT NOT NULL,   -- unmatched, pending, received, failed, transfer-id-generated, migrated
    migrated_at          TEXT,            -- when it happened (a sign-in's iat, else recorded)
    migrated_recorded_at TEXT,            -- when the ledger recorded it
    migrated_via         TEXT,            -- exchange, sign-in, transfer-id-generation
    before_deadline      INTEGER,         -- 1 migrated before the 60-day deadline, 0 after
    email                TEXT,            -- only with --include-personal-data
    is_private_email     INTEGER,
    email_forwarding     TEXT,            -- enabled or disabled
    consent_revoked_at   TEXT,            -- Apple's event_time
    account_deleted_at   TEXT,            -- Apple's event_time
    erased_at            TEXT,
    attempts             INTEGER NOT NULL,
    last_attempt_at      TEXT,
    last_error_class     TEXT,
    last_error           TEXT,
    notifications        INTEGER NOT NULL,
    first_sequence       INTEGER NOT NULL REFERENCES events (seq),
    last_sequence        INTEGER NOT NULL REFERENCES events (seq),
    apply_outcome        TEXT,            -- the sub's: applied, already, no-account, collision, changed-meanwhile, undone
    applied_at           TEXT,            -- when the ledger recorded that outcome
    email_apply_outcome  TEXT,            -- the relay address's: the same, or kept (an address of the user's own)
    email_applied_at     TEXT,
    email_forwarding_apply_outcome TEXT,  -- the forwarding flag's
    email_forwarding_applied_at    TEXT
);
CREATE INDEX users_status ON users (status);
CREATE INDEX users_migrated_at ON users (migrated_at);
CREATE INDEX users_account_id ON users (account_id) WHERE account_id IS NOT NULL;
CREATE INDEX users_transfer_sub ON users (transfer_sub) WHERE transfer_sub IS NOT NULL;
CREATE INDEX users_recipient_sub ON users (recipient_sub) WHERE recipient_sub IS NOT NULL;
CREATE INDEX users_sender_sub ON users (sender_sub) WHERE sender_sub IS NOT NULL;
