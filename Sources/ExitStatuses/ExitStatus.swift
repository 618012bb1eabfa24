/// How a Handover command ends: the one list of exit statuses every command is matched to,
/// recorded in "run finished" events and shown in the README's table (a test holds the two
/// equal).
public enum ExitStatus: Int32, CaseIterable, Sendable {
    case success = 0
    /// Not all done: a run (or an apply, an ingest) finished with some users or items not done,
    /// or the one thing a command names on its command line (a user by any identifier, an
    /// identifier of `query events --id`, an event's sequence number) is not in the ledger. A
    /// list that comes out empty (`query pending`, `query failures`, `query events`) is an
    /// answer: success. `status` not on track, and a failure that is not one of the statuses
    /// below (a full disk, a closed pipe), end with it too.
    case failed = 1
    /// Bad usage or input: nothing was done.
    case usage = 2
    /// Apple refused the run as a whole: the credentials, or nearly every call the same way
    /// (the breaker). The run stopped.
    case credentialsRefused = 3
    /// The ledger, a projection, a checkpoint or a bundle does not hold what was recorded.
    case integrity = 4
    /// A run ended early by SIGINT (128 + 2).
    case interrupted = 130
    /// A run ended early by SIGTERM (128 + 15).
    case terminated = 143

    /// What the status means, as the README's exit-code table says it.
    public var meaning: String {
        switch self {
        case .success: "success"
        case .failed:
            "not all done: some users not done at the end of a run (Apple unavailable for longer than the run waits, too), `status` not on track, or the one user, identifier or event named on the command line is not in the ledger (a list that comes out empty is an answer: 0); also a failure no other status names (a full disk, a closed pipe)"
        case .usage: "bad usage or input; nothing was done"
        case .credentialsRefused: "Apple refused the run as a whole: the credentials, or nearly every call the same way"
        case .integrity: "integrity failure: a record, an index, a checkpoint or a bundle does not hold"
        case .interrupted: "a run interrupted by SIGINT"
        case .terminated: "a run interrupted by SIGTERM"
        }
    }
}

/// An error that decides the exit status of the command it ends.
///
/// Every error that can end a command conforms: the command line matches errors to statuses in
/// one place, by this protocol, and prints ``exitMessage`` after `error: `.
public protocol ExitStatusDeciding: Error {
    /// The exit status of a command this error ends.
    var exitStatus: ExitStatus { get }
    /// What the command prints on standard error after `error: `; nil prints nothing. By
    /// default, the error's description.
    var exitMessage: String? { get }
}

extension ExitStatusDeciding {
    public var exitMessage: String? { String(describing: self) }
}
