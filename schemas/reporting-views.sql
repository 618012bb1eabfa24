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
