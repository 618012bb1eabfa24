import Ledger
import Projections

/// Answers a compliance query from the stored projections, or from the events recorded up
/// to `--as-of` when given.
func answer(_ ledger: Ledger, _ projection: UserProjection, _ output: OutputOptions, _ question: (ComplianceQueries) throws -> QueryTable) throws -> QueryTable {
    if let asOf = output.asOf {
        let snapshot = try UserProjection.asOf(asOf, in: ledger)
        return try question(ComplianceQueries(snapshot: snapshot, time: asOf, sealer: ledger.sealer))
    }
    return try projection.read(ledger) { snapshot, _ in
        try question(ComplianceQueries(snapshot: snapshot, time: .now(), sealer: ledger.sealer))
    }
}

/// Opens the ledger, answers one question and prints it in the requested format.
func printAnswer(_ ledgerOptions: LedgerOptions, _ output: OutputOptions, _ question: (ComplianceQueries) throws -> QueryTable) throws {
    let (ledger, projection) = try ledgerOptions.open()
    defer { ledger.close() }
    print(try answer(ledger, projection, output, question).render(output.format), terminator: "")
}
