/// The SQLite export's tables, keys and indexes, as `schemas/export-sqlite.sql` writes them:
/// that file is compiled into the code, the only copy (its columns are held equal to
/// ``ExportAnswers`` by a test).
public enum ExportSchema {
    /// Bumped when a table or column changes meaning; stored in `export_meta`. Version 2 adds
    /// `users.apply_outcome` and `users.applied_at` (``upgradeFromVersion1``); version 3 the
    /// table `event_rows` (``upgradeFromVersion2``); version 4 the email's and the forwarding
    /// flag's apply outcomes (``upgradeFromVersion3``).
    public static let version = 4

    /// What brings an export of schema version 1 to this one, in the transaction of the first
    /// run that adds to it. Version 1 was written before `apply` existed, so the new columns are
    /// null in every row it holds.
    static let upgradeFromVersion1 =
        [
            "ALTER TABLE users ADD COLUMN apply_outcome TEXT",
            "ALTER TABLE users ADD COLUMN applied_at TEXT",
        ] + upgradeFromVersion2

    /// What brings an export of schema version 2 to this one: the table `event_rows` as ``sql``
    /// creates it, which the run then fills with the rows of every event the export holds.
    static let upgradeFromVersion2 = statements(of: sql).filter { $0.hasPrefix("CREATE TABLE event_rows (") } + upgradeFromVersion3

    /// What brings an export of schema version 3 to this one: the columns of the email's and the
    /// forwarding flag's apply outcomes, which the run fills by writing every user again.
    static let upgradeFromVersion3 = addingEmailOutcomes(timeType: "TEXT")

    /// The statements adding `users`' email and forwarding outcome columns, their times of type `timeType`.
    static func addingEmailOutcomes(timeType: String) -> [String] {
        [
            ("email_apply_outcome", "TEXT"), ("email_applied_at", timeType), ("email_forwarding_apply_outcome", "TEXT"),
            ("email_forwarding_applied_at", timeType),
        ].map { "ALTER TABLE users ADD COLUMN \($0.0) \($0.1)" }
    }

    /// The upgrade from each earlier schema version, by the version `export_meta` records.
    static let upgrades: [String: ExportUpgrade] = [
        "1": ExportUpgrade(statements: upgradeFromVersion1, rewritesUsers: true, addsAllRows: true),
        "2": ExportUpgrade(statements: upgradeFromVersion2, rewritesUsers: true, addsAllRows: true),
        "3": ExportUpgrade(statements: upgradeFromVersion3, rewritesUsers: true, addsAllRows: false),
    ]

    /// The statements of a script: comment lines dropped, split after each `;` that ends a line.
    static func statements(of script: String) -> [String] {
        var statements: [String] = []
        var current: [Substring] = []
        for line in script.split(separator: "\n") where !line.hasPrefix("--") {
            current.append(line)
            if line.hasSuffix(";") {
                statements.append(current.joined(separator: "\n"))
                current = []
            }
        }
        return statements
    }

    /// The statements that create the indexes (one line each in ``sql``).
    static var indexStatements: String {
        sql.split(separator: "\n").filter { $0.hasPrefix("CREATE INDEX") }.joined(separator: "\n")
    }

    /// ``sql`` without the index statements: the tables, to load before the indexes are built.
    static var tableStatements: String {
        sql.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("CREATE INDEX") }.joined(separator: "\n")
    }

    /// The statements that create an empty export: `schemas/export-sqlite.sql`, compiled in.
    public static let sql = String(decoding: PackageResources.export_sqlite_sql, as: UTF8.self)
}
