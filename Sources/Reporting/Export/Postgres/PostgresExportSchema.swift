/// The PostgreSQL export's tables and indexes, and the reporting views over them, as
/// `schemas/export-postgres.sql` and `schemas/reporting-views.sql` write them: those files are
/// compiled into the code, the only copies (the tables' columns are held equal to
/// ``ExportAnswers`` by a test).
public enum PostgresExportSchema {
    /// Bumped when a table or column changes meaning; stored in `export_meta`. Version 2 added
    /// `exact_text` to `events` and `users` (``upgradeFromVersion1``); version 3
    /// `users.apply_outcome` and `users.applied_at` (``upgradeFromVersion2``); version 4 the
    /// table `event_rows` (``upgradeFromVersion3``); version 5 the email's and the forwarding
    /// flag's apply outcomes (``upgradeFromVersion4``).
    public static let version = 5
    /// Bumped when a view changes; an export finding another version replaces the views.
    /// Version 2: `report_migrated_users` (`users.*`) takes in `exact_text`. Version 3: the
    /// columns named as the answers name them (`report_failures_by_class.last_error_class`, was
    /// `error_class`; `report_migrated_by_path.migrated_via`, was `path`), dropped and made again.
    /// Version 4: `report_migrated_users` takes in `apply_outcome` and `applied_at`. Version 5:
    /// and the email's and the forwarding flag's.
    public static let viewsVersion = 5

    /// The statements of ``sql`` that create the tables, one string each.
    static var tableStatements: [String] { ExportSchema.statements(of: sql).filter { !$0.hasPrefix("CREATE INDEX") } }

    /// The statements of ``sql`` that create the indexes, run after a first load.
    static var indexStatements: [String] { ExportSchema.statements(of: sql).filter { $0.hasPrefix("CREATE INDEX") } }

    /// The statements of ``viewsSQL``.
    static var viewStatements: [String] { ExportSchema.statements(of: viewsSQL) }

    /// What brings an export of schema version 1 to this one, in the transaction of the first
    /// run that adds to it. Version 1 could hold no U+0000 (a run meeting one failed), so
    /// `exact_text` is null in every row it holds.
    static let upgradeFromVersion1 =
        [
            "ALTER TABLE events ADD COLUMN exact_text text",
            "ALTER TABLE users ADD COLUMN exact_text text",
        ] + upgradeFromVersion2

    /// What brings an export of schema version 2 to this one. Version 2 was written before
    /// `apply` existed, so the new columns are null in every row it holds.
    static let upgradeFromVersion2 =
        [
            "ALTER TABLE users ADD COLUMN apply_outcome text",
            "ALTER TABLE users ADD COLUMN applied_at timestamptz",
        ] + upgradeFromVersion3

    /// What brings an export of schema version 3 to this one: the table `event_rows` as ``sql``
    /// creates it, which the run then fills with the rows of every event the export holds.
    static let upgradeFromVersion3 = tableStatements.filter { $0.hasPrefix("CREATE TABLE event_rows (") } + upgradeFromVersion4

    /// What brings an export of schema version 4 to this one: the columns of the email's and the
    /// forwarding flag's apply outcomes, which the run fills by writing every user again.
    static let upgradeFromVersion4 = ExportSchema.addingEmailOutcomes(timeType: "timestamptz")

    /// The upgrade from each earlier schema version, by the version `export_meta` records.
    static let upgrades: [String: ExportUpgrade] = [
        "1": ExportUpgrade(statements: upgradeFromVersion1, rewritesUsers: true, addsAllRows: true),
        "2": ExportUpgrade(statements: upgradeFromVersion2, rewritesUsers: true, addsAllRows: true),
        "3": ExportUpgrade(statements: upgradeFromVersion3, rewritesUsers: true, addsAllRows: true),
        "4": ExportUpgrade(statements: upgradeFromVersion4, rewritesUsers: true, addsAllRows: false),
    ]

    /// The statements that create an empty export: `schemas/export-postgres.sql`, compiled in.
    public static let sql = String(decoding: PackageResources.export_postgres_sql, as: UTF8.self)

    /// The views `handover report`'s figures come from: `schemas/reporting-views.sql`,
    /// compiled in.
    public static let viewsSQL = String(decoding: PackageResources.reporting_views_sql, as: UTF8.self)
}
