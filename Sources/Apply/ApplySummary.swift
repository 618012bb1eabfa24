import Ledger

/// What `apply` says in words (its text format): a plan's counts with their meanings, or a
/// commit's outcomes, and the collisions explained. Values from outside are shown escaped.
public enum ApplySummary {
    /// "accounts (id = account_id, apple_sub ← recipient_sub) in PATH".
    public static func place(_ table: any AccountsTable) -> String {
        let m = table.mapping
        return "\(m.table) (\(m.keyColumn) = account_id, \(m.subColumn) ← recipient_sub) in \(InertText.forScreen(table.targetName))"
    }

    /// The plan: each planned outcome's count and meaning, then the collisions.
    public static func plan(_ plan: ApplyPlan, _ listing: ApplyListing, table: any AccountsTable, undo: String?) -> String {
        var text =
            (undo.map { "Plan to undo apply run \(InertText.forScreen($0))" } ?? "Plan")
            + " for \(place(table)), \(counted(plan.entries.count, "account")):\n"
        let meanings: [(ApplyPlanned, String)] = [
            (.change, "take the new value"), (.already, "hold it already: nothing to do"),
            (.noAccount, "have no account with that key (or none --where lets change)"),
            (.collision, "another account holds the new sub: not written"),
        ]
        for (outcome, meaning) in meanings {
            text += "  " + outcome.rawValue.padding(toLength: 11, withPad: " ", startingAt: 0) + " \(plan.count(outcome))  \(meaning)\n"
        }
        if plan.count(.collision) > 0 { text += "Collisions:\n" + listing.collisionsText }
        return text
    }

    /// A commit: the batches settled for a stopped run, the outcomes, the collisions and the
    /// accounts changed meanwhile, and how to undo it.
    public static func commit(_ result: ApplyRun.Result, _ listing: ApplyListing, table: any AccountsTable, undo: String?) -> String {
        var text = ""
        if result.recoveredBatches > 0 {
            text +=
                "Settled \(result.recoveredBatches) batch(es) a stopped run left, from the markers in \(ApplyMarker.table): \(result.recoveredCommitted) had committed.\n"
        }
        guard let runID = result.runID else { return text + "Nothing new to write or record for \(place(table)).\n" }
        let counts = ApplyOutcome.allCases.compactMap { o in result.counts[o].map { "\(o.rawValue) \($0)" } }
        text +=
            (undo == nil ? "Apply" : "Undo") + " run \(runID)" + (undo.map { " (of apply run \(InertText.forScreen($0)))" } ?? "")
            + (result.resumed ? ", continued," : "")
            + " to \(place(table)): " + (counts.isEmpty ? "nothing new" : counts.joined(separator: ", ")) + ".\n"
        if result.counts[.collision] ?? 0 > 0 { text += "Collisions (not written):\n" + listing.collisionsText }
        let meanwhile = listing.rows.filter { $0.outcome == ApplyOutcome.changedMeanwhile.rawValue }.map { InertText.forScreen($0.accountID) }
        if !meanwhile.isEmpty { text += "Changed meanwhile (not overwritten): " + meanwhile.joined(separator: ", ") + "\n" }
        if undo == nil { text += "To undo it: handover apply --undo \(runID) --commit with the same --to, --table, --key and --set.\n" }
        return text
    }
}
