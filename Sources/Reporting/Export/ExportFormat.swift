/// What `handover export` writes.
public enum ExportFormat: String, Sendable, CaseIterable {
    /// A directory with `users.csv`, `events.csv` and `manifest.json`.
    case csv
    /// A directory with `users.jsonl`, `events.jsonl` and `manifest.json`.
    case jsonl
    /// One SQLite file laid out as `schemas/export-sqlite.sql` says.
    case sqlite
    /// Tables in a PostgreSQL database laid out as `schemas/export-postgres.sql` says.
    case postgres
}
