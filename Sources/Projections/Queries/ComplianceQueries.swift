import Basics
import Ledger

/// The questions the query CLI answers, over a ``ProjectionSnapshot`` (now or as of a time):
/// each produces typed rows (``UserRow``, ``FailureClassRow``, ``WindowRow``), and writes them
/// into a sink under its declared columns (``Answers``).
public struct ComplianceQueries {
    /// The projections to answer from.
    public let snapshot: any ProjectionSnapshot
    /// The moment the answer is for (now, or `--as-of`), for days left.
    public let time: Timestamp
    /// Opens sealed email addresses; nil leaves them sealed.
    public let sealer: Sealer?

    public init(snapshot: any ProjectionSnapshot, time: Timestamp, sealer: Sealer?) {
        self.snapshot = snapshot
        self.time = time
        self.sealer = sealer
    }

    // The rows of the answers without an `email` column carry `email` `.none`: the address is
    // opened only for the answers that show it (``state(into:)``, ``user(_:)``).

    /// Users whose migration step is done, in the order they migrated.
    public func forEachMigrated(_ body: (UserRow) throws -> Void) throws {
        let window = try snapshot.window()
        try snapshot.forEachMigratedUser { try body(UserRow($0, window: window, time: time)) }
    }

    /// Users not yet migrated (never tried, handed over and not tried yet, or whose last
    /// attempt failed), with days left.
    public func forEachPending(_ body: (UserRow) throws -> Void) throws {
        try forEachUser(where: Self.isPending, body)
    }

    /// Users whose last attempt failed.
    public func forEachFailed(_ body: (UserRow) throws -> Void) throws {
        try forEachUser(where: { $0.status == .failed }, body)
    }

    /// Users Apple told us about (a notification, a sign-in without `transfer_sub`) whom no
    /// migration step ever named: kept, and listed for someone to look into.
    public func forEachUnmatched(_ body: (UserRow) throws -> Void) throws {
        try forEachUser(where: { $0.status == .unmatched }, body)
    }

    /// Whether `user` is pending: not yet migrated, never tried or last tried in vain.
    public static func isPending(_ user: UserState) -> Bool { user.status == .pending || user.status == .received || user.status == .failed }

    /// Failed users counted by failure class, most first.
    public func failureClasses() throws -> [FailureClassRow] {
        var counts: [FailureClass?: Int] = [:]
        try snapshot.forEachUser { u in
            guard u.status == .failed else { return }
            counts[u.lastErrorClass, default: 0] += 1
        }
        return Self.failureClassRows(counts)
    }

    /// Failed users' `counts` by failure class as rows, most first.
    public static func failureClassRows(_ counts: [FailureClass?: Int]) -> [FailureClassRow] {
        counts.map { FailureClassRow(errorClass: $0.key, users: $0.value) }
            .sorted { ($1.users, $0.errorClass?.rawValue ?? "unknown") < ($0.users, $1.errorClass?.rawValue ?? "unknown") }
    }

    /// The user an identifier of any kind names, with every projected field; nil if unknown.
    public func user(_ identifier: String) throws -> UserRow? {
        guard let u = try snapshot.user(matching: identifier) else { return nil }
        return UserRow(u, window: try snapshot.window(), time: time, email: try EmailValue(of: u, sealer: sealer))
    }

    /// The transfer window at the time asked; nil before one is recorded.
    public func windowRow() throws -> WindowRow? {
        try snapshot.window().map { WindowRow($0, at: time) }
    }

    /// The users `keep` takes, in key order, their addresses not opened.
    private func forEachUser(where keep: (UserState) -> Bool, _ body: (UserRow) throws -> Void) throws {
        let window = try snapshot.window()
        try snapshot.forEachUser { u in
            guard keep(u) else { return }
            try body(UserRow(u, window: window, time: time))
        }
    }
}

extension ComplianceQueries {
    /// `query migrated`, written into `sink`.
    public func migrated(into sink: any RowSink) throws { try write(Answers.migrated, forEachMigrated, into: sink) }
    /// `query pending`, written into `sink`.
    public func pending(into sink: any RowSink) throws { try write(Answers.pending, forEachPending, into: sink) }
    /// `query failures`, written into `sink`.
    public func failures(into sink: any RowSink) throws { try write(Answers.failures, forEachFailed, into: sink) }
    /// `query unmatched`, written into `sink`.
    public func unmatched(into sink: any RowSink) throws { try write(Answers.unmatched, forEachUnmatched, into: sink) }
    /// `query state`, written into `sink`: a batch's keys are read on this thread as the batch
    /// is handed over, the addresses opened on the thread that writes the rows.
    public func state(into sink: any RowSink) throws {
        let sealer = self.sealer
        try write(Answers.state, { body in try forEachUser(where: { _ in true }, body) }, into: sink) { rows in
            let keys = try EmailValue.keys(for: rows, sealer: sealer)
            return { rows in try EmailValue.open(&rows, sealer: sealer, keys: keys) }
        }
    }
    /// `query failures --by-class`, written into `sink`.
    public func failuresByClass(into sink: any RowSink) throws {
        let classes = try failureClasses()
        try write(Answers.failuresByClass, { body in try classes.forEach(body) }, into: sink)
    }
    /// `handover window`, written into `sink`.
    public func window(into sink: any RowSink) throws {
        let window = try windowRow()
        try write(Answers.window, { body in try window.map(body) }, into: sink)
    }

    private func write<Row>(
        _ answer: Answer<Row>, _ produce: ((Row) throws -> Void) throws -> Void, into sink: any RowSink,
        preparing: (([Row]) throws -> (inout [Row]) throws -> Void)? = nil
    ) throws {
        let rows = try answer.stream(into: sink, preparing: preparing)
        try produce(rows.append)
        try rows.finish()
    }
}

extension ComplianceQueries {
    /// The answers collected in memory, for those known to be small and for tests.
    public func migrated() throws -> QueryTable { try QueryTable.collect(migrated(into:)) }
    public func pending() throws -> QueryTable { try QueryTable.collect(pending(into:)) }
    public func unmatched() throws -> QueryTable { try QueryTable.collect(unmatched(into:)) }
    public func failuresByClass() throws -> QueryTable { try QueryTable.collect(failuresByClass(into:)) }
    public func window() throws -> QueryTable { try QueryTable.collect(window(into:)) }
}
