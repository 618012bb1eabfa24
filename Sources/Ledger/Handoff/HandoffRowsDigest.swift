import Basics
import Crypto

/// The SHA-256 of a package's `rows.csv` as Handover writes it (the header, then one CRLF line
/// per row, each field quoted only where it must be), computed from the rows themselves: what
/// ties the rows team B records in its log to the manifest's `rows-sha256`.
public struct HandoffRowsDigest {
    private let form: HandoffRowsForm
    private var hasher = SHA256()
    private var line: [UInt8] = []

    /// A digest of rows of form `form` that has taken the header line.
    public init(form: HandoffRowsForm) {
        self.form = form
        line = form.header
        flush()
    }

    /// Takes one row: its `account_id` ("" for none), `transfer_sub`, generating event and, in
    /// v2, its salt.
    public mutating func add(accountID: String, transferSub: String, sequence: UInt64, salt: [UInt8]?) {
        form.appendRow(accountID: accountID, transferSub: transferSub, sequence: sequence, salt: salt, to: &line)
        line.append(contentsOf: [0x0D, 0x0A])
        if line.count >= 1 << 16 { flush() }
    }

    /// Takes one row as its line of `rows.csv` without the CRLF (a v2 row as the `rows`
    /// database holds it).
    public mutating func add(line row: UnsafeRawBufferPointer) {
        line.append(contentsOf: row)
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
