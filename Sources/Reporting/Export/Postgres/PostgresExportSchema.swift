/// The PostgreSQL export's tables and indexes, and the reporting views over them:
/// `schemas/export-postgres.sql` and `schemas/reporting-views.sql`, byte for byte (a test
/// holds them equal).
public enum PostgresExportSchema {
    /// Bumped when a table or column changes meaning; stored in `export_meta`. Version 2 added
    /// `exact_text` to `events` and `users` (``upgradeFromVersion1``); version 3
    /// `users.apply_outcome` and `users.applied_at` (``upgradeFromVersion2``).
    public static let version = 3
    /// Bumped when a view changes; an export finding another version replaces the views.
    /// Version 2: `report_migrated_users` (`users.*`) takes in `exact_text`. Version 3: the
    /// columns named as the answers name them (`report_failures_by_class.last_error_class`, was
    /// `error_class`; `report_migrated_by_path.migrated_via`, was `path`), dropped and made again.
    /// Version 4: `report_migrated_users` takes in `apply_outcome` and `applied_at`.
    public static let viewsVersion = 4

    /// The statements of ``sql`` that create the tables, one string each.
    static var tableStatements: [String] { statements(of: sql).filter { !$0.hasPrefix("CREATE INDEX") } }

    /// The statements of ``sql`` that create the indexes, run after a first load.
    static var indexStatements: [String] { statements(of: sql).filter { $0.hasPrefix("CREATE INDEX") } }

    /// The statements of ``viewsSQL``.
    static var viewStatements: [String] { statements(of: viewsSQL) }

    /// What brings an export of schema version 1 to this one, in the transaction of the first
    /// run that adds to it. Version 1 could hold no U+0000 (a run meeting one failed), so
    /// `exact_text` is null in every row it holds.
    static let upgradeFromVersion1 = [
        "ALTER TABLE events ADD COLUMN exact_text text",
        "ALTER TABLE users ADD COLUMN exact_text text",
    ] + upgradeFromVersion2

    /// What brings an export of schema version 2 to this one. Version 2 was written before
    /// `apply` existed, so the new columns are null in every row it holds.
    static let upgradeFromVersion2 = [
        "ALTER TABLE users ADD COLUMN apply_outcome text",
        "ALTER TABLE users ADD COLUMN applied_at timestamptz",
    ]

    /// The statements of a script: comment lines dropped, split after each `;` that ends a line.
    static func statements(of script: String) -> [String] {
        var statements: [String] = [], current: [Substring] = []
        for line in script.split(separator: "\n") where !line.hasPrefix("--") {
            current.append(line)
            if line.hasSuffix(";") {
                statements.append(current.joined(separator: "\n"))
                current = []
            }
        }
        return statements
    }

    /// `schemas/export-postgres.sql`: the statements that create an empty export.
    public static let sql = """
        -- Handover PostgreSQL export, version 3: one ledger's users projection and events, the same
        -- tables and columns as the SQLite export (schemas/export-sqlite.sql) in PostgreSQL's types,
        -- and exact_text (below). Written by `handover export --format postgres --out URL`.
        -- A run adds the events after export_meta.last_sequence in transactions of --slice events
        -- (100,000 by default), each moving last_sequence with its events, so a run stopped at any
        -- moment redoes at most one slice and never duplicates or skips. Its last transaction also
        -- writes the users the run's events changed (users_sequence), the indexes after a first
        -- load, the views, and one row in exports. `--since-last` and `--follow` add to an export;
        -- a first export that stopped before its last transaction (state = loading) is continued
        -- by running the same command again.
        -- Exporters take the advisory lock pg_try_advisory_lock(7285430110250) for as long as they
        -- run: two never write into one database together.
        -- Personal data (email addresses) is present only when the export was made with
        -- --include-personal-data (export_meta.personal_data = 1), never for erased users: the export
        -- after an erasure clears the user's email and rewrites the user's earlier events' event_json.
        -- U+0000 (NUL): PostgreSQL's text and jsonb cannot hold it, and a string from outside may
        -- carry it (a forged token's kid, Apple's error text). In a text column it is written as
        -- U+FFFD, in event_json as \\ufffd, and the row's exact_text holds the exact values of the
        -- columns so changed: a JSON object, as text (where \\u0000 stands for NUL), with the string
        -- of each text column and the event itself under "event_json". exact_text is null in every
        -- other row. A client parses exact_text to get the exact value (PostgreSQL itself cannot
        -- return a text that holds U+0000); WHERE exact_text IS NOT NULL finds the rows changed.

        -- Facts about the export: ledger_id, team_id, role, schema_version, personal_data (0 or 1),
        -- last_sequence (the last event exported), users_sequence (the last event the users table
        -- reflects), state ('loading' while a first export has not finished), window_accepted_at
        -- and window_deadline (the transfer window, once recorded), views_version.
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
            apply_outcome        text,              -- applied, already, no-account, collision, changed-meanwhile, undone
            applied_at           timestamptz,       -- when the ledger recorded that outcome
            exact_text           text               -- exact values where a NUL was replaced (above), else null
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

        """

    /// `schemas/reporting-views.sql`: the views `handover report`'s figures come from.
    public static let viewsSQL = """
        -- Handover reporting views, version 3, over the PostgreSQL export (schemas/export-postgres.sql):
        -- the figures `handover report` prints, for dashboards (Metabase, Grafana, Superset) to read.
        -- Created with the tables and replaced when their version changes; they read only the
        -- tables, so they are as current as the last export (export_meta.last_sequence).
        -- Dates are UTC days; a migration's time is when it happened (users.migrated_at).
        -- Columns are named as the answers of `handover query` and `handover report` name the same
        -- facts (schemas/answers.md). Version 3 renamed two, so the views it renamed are dropped first.
        DROP VIEW IF EXISTS report_failures_by_class, report_migrated_by_path;

        -- The transfer window as the last export saw it; no row values until one is recorded.
        CREATE OR REPLACE VIEW report_window AS
        SELECT (SELECT value FROM export_meta WHERE key = 'window_accepted_at')::timestamptz AS accepted_at,
               (SELECT value FROM export_meta WHERE key = 'window_deadline')::timestamptz AS deadline,
               (SELECT value FROM export_meta WHERE key = 'last_sequence')::bigint AS through_sequence;

        -- Users whose half of the migration is done (migrated, or transfer ID generated on the
        -- sending side), with when it happened.
        CREATE OR REPLACE VIEW report_migrated_users AS
        SELECT * FROM users
        WHERE status IN ('migrated', 'transfer-id-generated') AND migrated_at IS NOT NULL;

        -- Migrations per day, the running total, and the deadline.
        CREATE OR REPLACE VIEW report_migrations_per_day AS
        SELECT d.day, d.migrated, (sum(d.migrated) OVER (ORDER BY d.day))::bigint AS cumulative, w.deadline
        FROM (SELECT (migrated_at AT TIME ZONE 'UTC')::date AS day, count(*) AS migrated
              FROM report_migrated_users GROUP BY 1) AS d
        CROSS JOIN report_window AS w;

        -- Migrated users by path, and before and after the deadline (null without a window).
        CREATE OR REPLACE VIEW report_migrated_by_path AS
        SELECT coalesce(migrated_via, 'unknown') AS migrated_via, count(*) AS users
        FROM report_migrated_users GROUP BY 1;

        CREATE OR REPLACE VIEW report_deadline AS
        SELECT w.accepted_at, w.deadline,
               CASE WHEN w.deadline IS NULL THEN NULL ELSE (SELECT count(*) FROM report_migrated_users WHERE migrated_at < w.deadline) END AS migrated_before_deadline,
               CASE WHEN w.deadline IS NULL THEN NULL ELSE (SELECT count(*) FROM report_migrated_users WHERE migrated_at >= w.deadline) END AS migrated_after_deadline
        FROM report_window AS w;

        -- Users not yet migrated (never tried, handed over and not tried, or last tried in vain) by the last error's
        -- class (null: never failed), and the failed ones alone ('unknown' for a failure without one).
        CREATE OR REPLACE VIEW report_pending_by_error_class AS
        SELECT last_error_class, count(*) AS users
        FROM users WHERE status IN ('pending', 'received', 'failed') GROUP BY 1;

        CREATE OR REPLACE VIEW report_failures_by_class AS
        SELECT coalesce(last_error_class, 'unknown') AS last_error_class, count(*) AS users
        FROM users WHERE status = 'failed' GROUP BY 1;

        -- Apple notifications per day (Apple's event_time, UTC) and type.
        CREATE OR REPLACE VIEW report_notifications_per_day AS
        SELECT (occurred_at AT TIME ZONE 'UTC')::date AS day, event_json -> 'body' ->> 'notification_type' AS notification_type, count(*) AS received
        FROM events WHERE type = 'notification-received' GROUP BY 1, 2;

        -- Apple notifications by type: how many, how many about a user after that user migrated,
        -- first and last as Apple dated them and as the ledger recorded them.
        CREATE OR REPLACE VIEW report_notifications_by_type AS
        SELECT n.notification_type, count(*) AS received,
               count(*) FILTER (WHERE n.migrated_at IS NOT NULL AND n.occurred_at >= n.migrated_at) AS since_migration,
               min(n.occurred_at) AS first_occurred, max(n.occurred_at) AS last_occurred,
               min(n.recorded_at) AS first_recorded, max(n.recorded_at) AS last_recorded
        FROM (SELECT e.event_json -> 'body' ->> 'notification_type' AS notification_type, e.occurred_at, e.recorded_at,
                     (SELECT m.migrated_at FROM report_migrated_users AS m
                      WHERE m.user_key = coalesce((SELECT u.user_key FROM users AS u WHERE u.account_id = e.account_id),
                                                  (SELECT u.user_key FROM users AS u WHERE u.sender_sub = e.sender_sub),
                                                  (SELECT u.user_key FROM users AS u WHERE u.transfer_sub = e.transfer_sub),
                                                  (SELECT u.user_key FROM users AS u WHERE u.recipient_sub = e.recipient_sub))) AS migrated_at
              FROM events AS e WHERE e.type = 'notification-received') AS n
        GROUP BY 1;

        -- The headline figures of `handover report`, one row.
        CREATE OR REPLACE VIEW report_summary AS
        SELECT (SELECT through_sequence FROM report_window) AS through_sequence,
               (SELECT count(*) FROM users WHERE status <> 'unmatched') AS users_known,
               (SELECT count(*) FROM report_migrated_users) AS migrated,
               (SELECT count(*) FROM users WHERE status IN ('pending', 'received', 'failed')) AS pending,
               (SELECT count(*) FROM users WHERE consent_revoked_at IS NOT NULL) AS consent_revoked,
               (SELECT count(*) FROM users WHERE account_deleted_at IS NOT NULL) AS accounts_deleted,
               (SELECT count(*) FROM users WHERE erased_at IS NOT NULL) AS users_erased,
               (SELECT count(*) FROM users WHERE status = 'unmatched') AS unmatched_users,
               (SELECT coalesce(sum(notifications), 0) FROM users WHERE status = 'unmatched')::bigint AS unmatched_notifications,
               (SELECT count(*) FROM events WHERE type = 'notification-received') AS notifications_received,
               (SELECT count(*) FROM events WHERE type = 'sign-in-rejected') AS sign_ins_rejected,
               (SELECT count(*) FROM events WHERE type = 'notification-rejected') AS notifications_rejected;

        """
}
