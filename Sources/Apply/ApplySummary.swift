import Basics
import Ledger

/// What `apply` says in words (its text format): a plan's counts with their meanings, or a
/// commit's outcomes, and the collisions, the kept addresses and the relay addresses left team
/// A's. Values from outside are shown escaped.
public enum ApplySummary {
    /// "accounts (id = account_id, apple_sub ← recipient_sub, email ← email) in PATH".
    public static func place(_ table: any AccountsTable) -> String {
        let m = table.mapping
        let columns = m.mapped.map { "\($0.column) ← \($0.value.rawValue)" }.joined(separator: ", ")
        return "\(m.table) (\(m.keyColumn) = account_id, \(columns)) in \(InertText.forScreen(table.targetName))"
    }

    /// The plan: each planned outcome's count in each column and its meaning, then the
    /// collisions, the kept addresses and the stale relay addresses.
    public static func plan(_ plan: ApplyPlan, _ listing: ApplyListing, table: any AccountsTable, undo: String?) -> String {
        let columns = table.mapping.mapped
        var text =
            (undo.map { "Plan to undo apply run \(InertText.forScreen($0))" } ?? "Plan")
            + " for \(place(table)), \(counted(plan.entries.count, "account")):\n"
        var meanings: [(ApplyPlanned, String)] = [
            (.change, "take the new value"), (.already, "hold it already: nothing to do"),
            (.noAccount, "have no account with that key (or none --where lets change)"),
            (.collision, "another account holds the new \(columns.count == 1 && columns[0].value == .recipientSub ? "sub" : "value"): not written"),
        ]
        if columns.contains(where: { $0.value == .email }), undo == nil {
            meanings.insert((.kept, "hold an address of the user's own, not a relay address: never overwritten"), at: 2)
        }
        // One count a column; the columns named above them when there are several.
        let widths = columns.map { max($0.column.name.count, 5) }
        if columns.count > 1 {
            text += String(repeating: " ", count: 14) + zip(columns, widths).map { pad($0.column.name, $1) }.joined(separator: "  ") + "\n"
        }
        for (outcome, meaning) in meanings {
            let counts = zip(columns, widths).map { column, width in
                let applies = (outcome != .kept || column.value == .email) && (outcome != .collision || column.value.isUnique)
                return columns.count == 1
                    ? "\(plan.count(outcome, in: column.value))" : pad(applies ? "\(plan.count(outcome, in: column.value))" : "-", width)
            }
            text +=
                "  " + outcome.rawValue.padding(toLength: 11, withPad: " ", startingAt: 0) + " " + counts.joined(separator: "  ") + "  \(meaning)\n"
        }
        return text + sections(listing, erasedSince: plan.erasedSince)
    }

    /// A commit: the batches settled for a stopped run, the outcomes, the collisions, the cells
    /// changed meanwhile, the kept and stale addresses, and how to undo it.
    public static func commit(
        _ result: ApplyRun.Result, _ listing: ApplyListing, table: any AccountsTable, ledger: String, undo: String?
    ) -> String {
        var text = ""
        if result.recoveredBatches > 0 {
            text +=
                "Settled \(result.recoveredBatches) batch(es) a stopped run left, from the markers in \(ApplyMarker.table): \(result.recoveredCommitted) had committed.\n"
        }
        guard let runID = result.runID else {
            return text + "Nothing new to write or record for \(place(table)).\n" + sections(listing, erasedSince: result.erasedSince)
        }
        let columns = table.mapping.mapped
        let counts = columns.compactMap { column -> String? in
            let some = ApplyOutcome.allCases.compactMap { o in result.counts[column.value]?[o].map { "\(o.rawValue) \($0)" } }
            guard !some.isEmpty else { return nil }
            return (columns.count == 1 ? "" : "\(column.column) ") + some.joined(separator: ", ")
        }
        text +=
            (undo == nil ? "Apply" : "Undo") + " run \(runID)" + (undo.map { " (of apply run \(InertText.forScreen($0)))" } ?? "")
            + (result.resumed ? ", continued," : "")
            + " to \(place(table)): " + (counts.isEmpty ? "nothing new" : counts.joined(separator: "; ")) + ".\n"
        text += sections(listing, erasedSince: result.erasedSince, meanwhile: true)
        if undo == nil { text += "To undo it: \(ApplyCommandLine.undo(runID, of: table, ledger: ledger))\n" }
        return text
    }

    /// The lists after the counts: collisions, cells changed meanwhile (a commit's), kept
    /// addresses, relay addresses left team A's, addresses an undo cannot open.
    private static func sections(_ listing: ApplyListing, erasedSince: [String], meanwhile: Bool = false) -> String {
        var text = ""
        if listing.rows.contains(where: { $0.outcome == ApplyOutcome.collision.rawValue }) {
            text += (meanwhile ? "Collisions (not written):\n" : "Collisions:\n") + listing.collisionsText
        }
        if meanwhile, case let changed = listing.accounts(ApplyOutcome.changedMeanwhile.rawValue), !changed.isEmpty {
            text += "Changed meanwhile (not overwritten): \(changed)\n"
        }
        if case let kept = listing.accounts(ApplyOutcome.kept.rawValue), !kept.isEmpty {
            text += "Kept (an address of the user's own, never overwritten): \(kept)\n"
        }
        let stale = listing.accounts(ApplyListing.stale) { row in
            "\(InertText.forScreen(row.accountID)) (\(row.staleReason?.summary ?? ""))"
        }
        if !stale.isEmpty {
            text += "Relay addresses that stay team A's (mail to them stops reaching the user): \(stale)\n"
        }
        if !erasedSince.isEmpty {
            text +=
                "Email not restored (the user was erased since; their addresses cannot be opened): "
                + Array(Set(erasedSince)).sorted().map(InertText.forScreen).joined(separator: ", ") + "\n"
        }
        return text
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text
    }
}
