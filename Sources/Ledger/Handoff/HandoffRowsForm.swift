import Basics

/// The form a handoff package's rows take, named by its manifest's first line
/// (schemas/audit-evidence.md, "Handoff package").
///
/// - v1: `rows.csv` is `account_id,transfer_sub,seq`; the manifest signs the file's SHA-256.
/// - v2: each row also carries a random `salt` (32 lowercase hex digits), and the manifest signs
///   the rows' Merkle root besides (``RowTree``, kind ``RowTree/Kind/handoffRow``, each row's leaf
///   being its CSV line without the CRLF), so that one row can be proven without the others.
///   Team B records such rows in chunks of 1,024, each chunk's root a node of that tree.
public enum HandoffRowsForm: String, CaseIterable, Sendable {
    case v1
    case v2

    /// The manifest's first line.
    public var manifestFormatLine: String { "handover-handoff/" + rawValue }

    /// The columns of `rows.csv`, in order.
    public var columns: [String] {
        switch self {
        case .v1: return ["account_id", "transfer_sub", "seq"]
        case .v2: return ["account_id", "transfer_sub", "seq", "salt"]
        }
    }

    /// How many rows one "handoff rows received" event holds: 1,024 in v2, a power of two, so
    /// that each whole chunk is a subtree of the package's row tree.
    public var rowsPerChunk: Int {
        switch self {
        case .v1: return 1_000
        case .v2: return 1_024
        }
    }

    /// The header line, CRLF included.
    public var header: [UInt8] { Array(CSVField.line(columns).utf8) }

    /// Appends one row's CSV line, without its CRLF, to `line`: `account_id` ("" for none),
    /// `transfer_sub`, the sender's event and, in v2, the salt in lowercase hex. These bytes
    /// are the row's leaf in v2 (``RowTree/leafHash(kind:row:)``).
    public func appendRow(accountID: String, transferSub: String, sequence: UInt64, salt: [UInt8]?, to line: inout [UInt8]) {
        CSVField.append(accountID, to: &line)
        line.append(UInt8(ascii: ","))
        CSVField.append(transferSub, to: &line)
        line.append(UInt8(ascii: ","))
        line.append(contentsOf: String(sequence).utf8)
        if self == .v2, let salt {
            line.append(UInt8(ascii: ","))
            line.append(contentsOf: Hex.encode(salt).utf8)
        }
    }
}
