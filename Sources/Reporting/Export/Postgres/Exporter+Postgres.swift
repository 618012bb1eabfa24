import Logging

extension Exporter {
    /// Exports into the PostgreSQL database `target` names: a first export, or with
    /// `sinceLast` what is new since the export already there, in one transaction.
    public func export(to target: PostgresTarget, sinceLast: Bool, logger: Logger) async throws -> ExportSummary {
        let session = try await PostgresExportSession.open(target, logger: logger)
        do {
            let summary = try await session.run(source, identity: try ledger.identity(), sinceLast: sinceLast)
            await session.close()
            return summary
        } catch {
            await session.close()
            throw error
        }
    }

    /// Keeps the PostgreSQL database `target` names current until `stop` is requested: every
    /// `interval`, exports what the ledger has recorded since (nothing when nothing is new).
    /// A failed run (the server restarting, a full disk) rolls back whole; it is reported
    /// through `problem` and tried again after `interval` on a new connection. Another
    /// exporter holding the database, another ledger's export or a malformed target ends it.
    /// Returns the last sequence exported (nil if no run succeeded).
    @discardableResult
    public func follow(into target: PostgresTarget, interval: Duration, until stop: ExportStop, logger: Logger,
                       exported: (ExportSummary) -> Void, problem: (ExportError) -> Void) async throws -> UInt64? {
        let identity = try ledger.identity()
        var session: PostgresExportSession?
        var last: UInt64?
        while !stop.isRequested {
            do {
                let open: PostgresExportSession
                if let session { open = session } else { open = try await PostgresExportSession.open(target, logger: logger) }
                session = open
                let head = try projection.read(ledger) { snapshot, _ in try snapshot.checkpoint() }
                if open.lastSequence.map({ head > $0 }) ?? true {
                    let summary = try await open.run(source, identity: identity, sinceLast: true)
                    if summary.eventsAdded > 0 || summary.usersWritten > 0 { exported(summary) }
                    last = summary.toSequence
                }
            } catch let error as ExportError where error.code == .io {
                problem(error)
                await session?.close()
                session = nil
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
