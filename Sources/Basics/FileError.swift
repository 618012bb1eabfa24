import ExitStatuses

/// A file that could not be read or written whole: the message names the file and what the
/// system said; `errno` is the system's code when it gave one.
public struct FileError: Error, Sendable, CustomStringConvertible, ExitStatusDeciding {
    /// What went wrong.
    public enum Kind: Sendable {
        /// Missing, not a regular file, or a read that failed.
        case unreadable
        /// Larger than the limit the reader set.
        case tooLarge
        /// A write, a sync or a rename that failed.
        case unwritable
    }

    public let kind: Kind
    public let message: String
    public let errno: Int32?

    public init(_ kind: Kind, _ message: String, errno: Int32? = nil) {
        self.kind = kind
        self.message = message
        self.errno = errno
    }

    public var description: String { message }

    /// A file larger than its limit is an integrity failure (it is not what was written there);
    /// the rest failed.
    public var exitStatus: ExitStatus { kind == .tooLarge ? .integrity : .failed }
}
