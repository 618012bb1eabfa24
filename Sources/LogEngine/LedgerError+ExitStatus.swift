import ExitStatuses

extension LedgerError: ExitStatusDeciding {
    /// A record that cannot be read back is an integrity failure; a ledger that is missing,
    /// foreign, the other team's, older, read-only or keyless, and an event that breaks a rule,
    /// are usage; an event not in the ledger, and the rest (a file, the disk, a closed ledger, a
    /// seal), failed.
    public var exitStatus: ExitStatus {
        switch code {
        case .malformedRecord: .integrity
        case .notInLedger: .failed
        case .missingLedger, .notALedger, .ledgerExists, .invalidEvent, .needsUpgrade, .readOnly, .noCheckpointKey, .wrongRole: .usage
        default: .failed
        }
    }
}
