import Logging
import PostgresAccess

extension Exporter {
    /// Events per PostgreSQL transaction unless told otherwise: about two to four seconds of
    /// COPY on the machine measured, so a run stopped at any moment redoes seconds, not the export.
    public static let defaultSlice = 100_000

    /// How long an export waits for another exporter's lock unless told otherwise: long enough
    /// for the server to drop the session of an exporter killed during an index build.
    public static let defaultLockWait: Duration = .seconds(60)

    /// Exports into the PostgreSQL database `target` names: a first export (or the rest of one
    /// that stopped), or with `sinceLast` what is new since the export already there. The
    /// events go in transactions of `slice`; `committed` hears of each but the last.
    public func export(
        to target: PostgresTarget, sinceLast: Bool, slice: Int = Exporter.defaultSlice, lockWait: Duration = Exporter.defaultLockWait,
        logger: Logger, committed: @escaping @Sendable (UInt64) -> Void = { _ in }
    ) async throws -> ExportSummary {
        let session = try await PostgresExportSession.open(target, lockWait: lockWait, logger: logger)
        do {
            let summary = try await session.run(source, identity: try ledger.identity(), sinceLast: sinceLast, slice: slice, committed: committed)
            await session.close()
            return summary
        } catch {
            await session.close()
            throw error
        }
    }

    /// Keeps the PostgreSQL database `target` names current until `stop` is requested: every
    /// `interval`, exports what the ledger has recorded since (nothing when nothing is new).
    /// A run that fails for a reason that may pass (the server restarting, a lost connection, a
    /// full disk) rolls back its unfinished slice; it is reported through `problem` and tried
    /// again after `interval` on a new connection. A refusal that would recur on the same row
    /// (``ExportError/Code/refused``: a constraint, a type, a refused login), another exporter
    /// holding the database past `lockWait`, another ledger's export or a malformed target ends
    /// it with that error.
    /// Returns the last sequence exported (nil if no run succeeded).
    @discardableResult
    public func follow(
        into target: PostgresTarget, interval: Duration, slice: Int = Exporter.defaultSlice, lockWait: Duration = Exporter.defaultLockWait,
        until stop: ExportStop, logger: Logger, exported: (ExportSummary) -> Void, problem: (ExportError) -> Void
    ) async throws -> UInt64? {
        let identity = try ledger.identity()
        var session: PostgresExportSession?
        var last: UInt64?
        /// Whether this follower has held the lock: then another session holding it may be its
        /// own lost one, which the server drops in time, and waiting for it is right.
        var held = false
        while !stop.isRequested {
            do {
                let open: PostgresExportSession
                if let session { open = session } else { open = try await PostgresExportSession.open(target, lockWait: lockWait, logger: logger) }
                session = open
                held = true
                let head = try projection.read(ledger) { snapshot, _ in try snapshot.checkpoint() }
                if open.lastSequence.map({ head > $0 }) ?? true {
                    let summary = try await open.run(source, identity: identity, sinceLast: true, slice: slice)
                    if summary.eventsAdded > 0 || summary.rowsAdded > 0 || summary.usersWritten > 0 { exported(summary) }
                    last = summary.toSequence
                }
            } catch let error as ExportError where error.code == .io || (error.code == .busy && held) {
                problem(error)
                await session?.close()
                session = nil
            } catch let error as ExportError where error.code == .refused {
                await session?.close()
                throw error.adding("; the same would be refused at every try, so following stops here (what is before it is in the database)")
            } catch {
                await session?.close()
                throw error
            }
            await stop.sleep(for: interval)
        }
        await session?.close()
        return last
    }

    var source: ExportSource { ExportSource(ledger: ledger, projection: projection, includePersonalData: includePersonalData) }
}
