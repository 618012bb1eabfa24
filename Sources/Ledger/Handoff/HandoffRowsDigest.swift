import Crypto

/// The SHA-256 of a package's `rows.csv` as Handover writes it (the header, then one CRLF line
/// per row, each field quoted only where it must be), computed from the rows themselves: what
/// ties the rows team B records in its log to the manifest's `rows-sha256`.
public struct HandoffRowsDigest {
    private var hasher = SHA256()
    private var line: [UInt8] = []

    /// A digest that has taken the header line.
    public init() {
        line.append(contentsOf: CSVField.line(HandoffPackage.rowColumns).utf8)
        flush()
    }

    /// Takes one row: its `account_id` ("" for none), `transfer_sub` and generating event.
    public mutating func add(accountID: String, transferSub: String, sequence: UInt64) {
        CSVField.append(accountID, to: &line)
        line.append(UInt8(ascii: ","))
        CSVField.append(transferSub, to: &line)
        line.append(UInt8(ascii: ","))
        line.append(contentsOf: String(sequence).utf8)
        line.append(contentsOf: [0x0D, 0x0A])
        if line.count >= 1 << 16 { flush() }
    }

    /// The SHA-256 of everything taken, hex.
    public mutating func finalize() -> String {
        flush()
        return Hex.encode(hasher.finalize())
    }

    private mutating func flush() {
        hasher.update(data: line)
        line.removeAll(keepingCapacity: true)
    }
}
