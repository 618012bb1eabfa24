import ExitStatuses
import Ledger

/// Why a handoff package or a receipt was refused: one reason per check (docs/migrating.md,
/// "Both halves"), and what was found. Nothing is sent to Apple after one; the command exits 2.
public struct HandoffRefusal: Error, Sendable, CustomStringConvertible, ExitStatusDeciding {
    /// The check that failed, as recorded in "handoff refused" events.
    public struct Reason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// A file of the package or receipt is missing, unreadable or not in its format.
        public static let malformed = Reason(rawValue: "malformed")
        /// No signature line of the manifest is from the pinned key (another key signed it).
        public static let notSignedByPinnedKey = Reason(rawValue: "not-signed-by-pinned-key")
        /// The pinned key's signature line does not verify: the manifest was edited.
        public static let manifestSignature = Reason(rawValue: "manifest-signature")
        /// `rows.csv` does not hash to the manifest's digest: a row was changed, removed or added.
        public static let rowsDigest = Reason(rawValue: "rows-digest")
        /// The rows' Merkle root is not the one the (v2) manifest signs: the sender's package
        /// cannot prove one row without the others.
        public static let rowsRoot = Reason(rawValue: "rows-root")
        /// `rows.csv` is not the rows the manifest describes (its columns, count or sequence numbers).
        public static let rowsMismatch = Reason(rawValue: "rows-mismatch")
        /// The package is for another team than this ledger's.
        public static let wrongTarget = Reason(rawValue: "wrong-target")
        /// The package is for another app than this ledger's client IDs.
        public static let wrongClient = Reason(rawValue: "wrong-client")
        /// The manifest's checkpoint is of another ledger than the pinned key's, or names another sender.
        public static let checkpointFromAnotherLedger = Reason(rawValue: "checkpoint-from-another-ledger")
        /// The manifest's checkpoint is not signed by the pinned key.
        public static let checkpointSignature = Reason(rawValue: "checkpoint-signature")
        /// A listed event lies beyond the checkpoint.
        public static let notCovered = Reason(rawValue: "rows-not-covered")
        /// The previous package from this sender has not been received.
        public static let outOfOrder = Reason(rawValue: "package-out-of-order")
        /// A different package with the same number was received before from this sender.
        public static let conflictingPackage = Reason(rawValue: "conflicting-package")
        /// The package names another previous package than the one received.
        public static let previousMismatch = Reason(rawValue: "previous-package-mismatch")
        /// The consistency proof from the previous package's checkpoint fails: the sender's log
        /// was rewritten between the two packages.
        public static let logRewritten = Reason(rawValue: "log-rewritten")
        /// A receipt's cosignature is not the pinned recipient key's over this ledger's checkpoint.
        public static let cosignature = Reason(rawValue: "cosignature")
        /// A receipt's checkpoint is not the recipient's, or not signed by its pinned key.
        public static let recipientCheckpoint = Reason(rawValue: "recipient-checkpoint")
        /// A receipt's event is not in the recipient's checkpoint.
        public static let inclusionProof = Reason(rawValue: "inclusion-proof")
        /// A receipt acknowledges a package this ledger did not issue, or another checkpoint.
        public static let unknownPackage = Reason(rawValue: "unknown-package")
    }

    public let reason: Reason
    public let detail: String
    /// Whether it was recorded as "handoff refused": a package that failed a check before it
    /// was received. A refusal met later (its rows file changed while being recorded, a dry
    /// run's) is not.
    public internal(set) var isRecorded = false

    /// How a message says where the refusal went.
    public var recordedAs: String { isRecorded ? ", recorded as \"handoff refused\"" : "" }

    /// What was refused, which says how a command that ends with the refusal says it.
    public enum Subject: Sendable, Equatable {
        /// A package received (`handoff receive`).
        case package
        /// A package an exchange was given: nothing was sent to Apple.
        case packageBeforeExchange
        /// A receipt from team B (`handoff confirm`).
        case receipt
        /// A package read as evidence (`reconcile --packages`): it does not hold.
        case evidence(path: String)
    }

    public internal(set) var subject: Subject

    public init(_ reason: Reason, _ detail: String, subject: Subject = .package) {
        self.reason = reason
        self.detail = detail
        self.subject = subject
    }

    public var description: String { "\(reason): \(detail)" }

    /// Evidence that does not hold is an integrity failure; a package or a receipt refused is
    /// input that cannot be used.
    public var exitStatus: ExitStatus {
        if case .evidence = subject { return .integrity }
        return .usage
    }

    public var exitMessage: String? {
        switch subject {
        case .package: "handoff package refused (\(reason))\(recordedAs): \(detail)"
        case .packageBeforeExchange: "handoff package refused (\(reason))\(recordedAs); nothing was sent to Apple: \(detail)"
        case .receipt: "receipt refused (\(reason)): \(detail)"
        case .evidence(let path): "\(path) does not hold (\(reason)): \(detail)"
        }
    }
}
