/// What brings an export of an earlier schema version to this one, in the first run that adds
/// to it: the statements that change its tables, and what that run then writes in full.
struct ExportUpgrade: Sendable {
    /// Run first, in the run's (first) transaction.
    var statements: [String]
    /// Every user is written again: the version lacked a column of `users`.
    var rewritesUsers: Bool
    /// The rows of every event the export holds are added: the version lacked `event_rows`.
    var addsAllRows: Bool
}
