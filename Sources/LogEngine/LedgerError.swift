import Basics

/// An error from the ledger, with a code callers can match and a message for people.
public struct LedgerError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, as a value callers can match.
    public struct Code: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The ledger directory does not exist.
        public static let missingLedger = Code(rawValue: "missing-ledger")
        /// The directory exists but is not a Handover ledger.
        public static let notALedger = Code(rawValue: "not-a-ledger")
        /// `init` found a ledger (or other files) already there.
        public static let ledgerExists = Code(rawValue: "ledger-exists")
        /// An event draft breaks a rule (identifier too long, NUL byte, ...).
        public static let invalidEvent = Code(rawValue: "invalid-event")
        /// A stored record cannot be read back.
        public static let malformedRecord = Code(rawValue: "malformed-record")
        /// The ledger has been closed; no more appends.
        public static let closed = Code(rawValue: "closed")
        /// A sealed value could not be opened for a reason other than erasure.
        public static let sealing = Code(rawValue: "sealing")
        /// A file of the ledger (or of a copy being made) could not be read or written.
        public static let file = Code(rawValue: "file")
        /// The disk (or the map) holding the ledger has no room for the write.
        public static let diskFull = Code(rawValue: "disk-full")
        /// The ledger was written by an older Handover and read as it is: the answer needs
        /// `handover upgrade` first.
        public static let needsUpgrade = Code(rawValue: "needs-upgrade")
        /// A write was asked of a ledger opened read-only, or of a copy made to be read only
        /// (no key store, no signing key).
        public static let readOnly = Code(rawValue: "read-only")
        /// The ledger has no checkpoint key yet, so no verifier key either.
        public static let noCheckpointKey = Code(rawValue: "no-checkpoint-key")
        /// The one event a command names is not in the ledger (exit 1).
        public static let notInLedger = Code(rawValue: "not-in-ledger")
        /// Another process took over the same work on this ledger (a projection rebuild's load),
        /// and finishes it.
        public static let takenOver = Code(rawValue: "taken-over")
        /// Another process has the ledger open, and the operation needs it alone (`compact`).
        public static let inUse = Code(rawValue: "in-use")
        /// The ledger is the other team's: the work belongs on a sender's ledger and this is a
        /// recipient's, or the other way round (``RoleRequirement``).
        public static let wrongRole = Code(rawValue: "wrong-role")
    }

    /// The error's code.
    public let code: Code
    /// A message naming the file, field or sequence number involved.
    public let message: String
    /// The system error behind a ``Code/file`` error, if there was one.
    public let errno: Int32?
    /// The error this one reports (LMDB's, a JSON parser's with its offset, a seal's), for
    /// callers to match; ``description`` prints it after the message.
    public let underlying: (any Error)?

    public init(_ code: Code, _ message: String, errno: Int32? = nil, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.errno = errno
        self.underlying = underlying
    }

    /// The message, then the underlying error's own description when there is one.
    public var description: String { underlying.map { "\(message): \(ErrorText.describing($0))" } ?? message }
}

extension LedgerError {
    /// The one-line answer of a read-only open that needs the newer layout: what is older, and
    /// the command that brings it up to date.
    package static func needsUpgrade(_ directory: String, _ reason: String) -> LedgerError {
        LedgerError(
            .needsUpgrade,
            "\(directory) was written by an older Handover (\(reason)): run `\(ShellWord.handover("upgrade", ledger: directory))` once, with write access, then ask again"
        )
    }
}
