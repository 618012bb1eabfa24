import Basics
import LogEngine

/// A batch body that commits to its rows by a Merkle root (v2): each row's salted line is kept
/// beside the event in the `rows` database, the event's JSON holds their root and count, and a
/// body read from its JSON alone lacks its rows until ``attach(rowLines:)`` gives them back (a
/// ``LogView`` does that for every event it reads). ``HandoffRowsReceived``, ``ApplyIntended``
/// and ``ApplySettled`` conform; a v1 body of each keeps its rows in its JSON and none beside it.
public protocol RowCommittingBody: Sendable {
    /// The root of the rows' tree; nil in v1.
    var rowsRoot: SHA256Hash? { get }
    /// Whether this is a v2 body read from its JSON alone, its rows not attached yet.
    var lacksRows: Bool { get }
    /// The lines the `rows` database holds for the event, in order; empty in v1, and while the
    /// rows are not attached.
    var rowLines: [[UInt8]] { get }
    /// How many lines the `rows` database holds for the event, whether attached or not; 0 in v1.
    var keptRowCount: Int { get }
    /// Checks lines read from the `rows` database against the body without decoding every row:
    /// they are as many as it keeps, and they hash to its root (so they are the lines written).
    func checkStored(_ lines: [[UInt8]]) throws
    /// Gives a v2 body read from its JSON its rows, checked as ``checkStored(_:)`` does.
    mutating func attach(rowLines lines: [[UInt8]]) throws
}
