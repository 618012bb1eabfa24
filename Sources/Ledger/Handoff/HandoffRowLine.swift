import Basics
import LogEngine

/// One line of `rows.csv` split into its fields (three in v1, four in v2), when it is written as
/// Handover writes it: each field quoted only where it must be, the line ended by CRLF.
public struct HandoffRowLine: Sendable {
    /// The fields' bytes (unquoted), one after another.
    private let bytes: [UInt8]
    /// Where each field ends in `bytes`.
    private let ends: [Int]

    /// Each field's bytes, unquoted.
    public var accountID: ArraySlice<UInt8> { bytes[0..<ends[0]] }
    public var transferSub: ArraySlice<UInt8> { bytes[ends[0]..<ends[1]] }
    public var sequence: ArraySlice<UInt8> { bytes[ends[1]..<ends[2]] }
    /// The salt's hex digits (v2); empty in v1.
    public var salt: ArraySlice<UInt8> { ends.count > 3 ? bytes[ends[2]..<ends[3]] : [] }

    /// The fields as text: nil where they are not UTF-8, the event not a decimal number, the salt
    /// not 32 lowercase hex digits (v2).
    public var accountIDText: String? { String(validating: accountID, as: UTF8.self) }
    public var transferSubText: String? { String(validating: transferSub, as: UTF8.self) }
    public var sequenceNumber: UInt64? {
        let text = String(decoding: sequence, as: UTF8.self)
        guard let number = UInt64(text), String(number) == text else { return nil }
        return number
    }
    public var saltBytes: [UInt8]? { HandoffRowLine.salt(salt) }

    /// A line as stored in the `rows` database: without its CRLF.
    public init?(_ row: [UInt8], form: HandoffRowsForm) {
        guard let line = row.withUnsafeBufferPointer({ HandoffRowLine(content: $0, form: form) }) else { return nil }
        self = line
    }

    /// A line of `rows.csv`, its CRLF included.
    public init?(_ line: UnsafeBufferPointer<UInt8>, form: HandoffRowsForm) {
        guard line.count >= 2, line[line.count - 2] == 0x0D, line[line.count - 1] == 0x0A else { return nil }
        self.init(content: UnsafeBufferPointer(rebasing: line[..<(line.count - 2)]), form: form)
    }

    /// A line's fields without its line end.
    private init?(content: UnsafeBufferPointer<UInt8>, form: HandoffRowsForm) {
        let fieldCount = form.columns.count
        var bytes: [UInt8] = []
        bytes.reserveCapacity(content.count)
        var ends: [Int] = []
        var quoted = false
        var i = 0
        while true {
            if i < content.count, content[i] == UInt8(ascii: "\"") {
                quoted = true
                i += 1
                while true {
                    guard i < content.count else { return nil }
                    if content[i] == UInt8(ascii: "\"") {
                        guard i + 1 < content.count, content[i + 1] == UInt8(ascii: "\"") else {
                            i += 1
                            break
                        }
                        i += 1
                    }
                    bytes.append(content[i])
                    i += 1
                }
            } else {
                while i < content.count, content[i] != UInt8(ascii: ",") {
                    // A quote or a carriage return in an unquoted field is not Handover's writing.
                    guard content[i] != UInt8(ascii: "\""), content[i] != 0x0D else { return nil }
                    bytes.append(content[i])
                    i += 1
                }
            }
            ends.append(bytes.count)
            guard i < content.count else { break }
            guard content[i] == UInt8(ascii: ","), ends.count < fieldCount else { return nil }
            i += 1
        }
        guard ends.count == fieldCount else { return nil }
        self.bytes = bytes
        self.ends = ends
        // Unquoted fields without a quote or a carriage return are written as they are; a quoted
        // one must be one that needs its quotes.
        if quoted {
            var written: [UInt8] = []
            written.reserveCapacity(content.count)
            var start = 0
            for (n, end) in ends.enumerated() {
                if n > 0 { written.append(UInt8(ascii: ",")) }
                bytes[start..<end].withUnsafeBufferPointer { CSVField.append($0, to: &written) }
                start = end
            }
            guard written.elementsEqual(content) else { return nil }
        }
    }

    /// The row, when its fields read as text, its event as a number and its salt (v2) as 16
    /// bytes in lowercase hex.
    public var row: PackageListing.Row? {
        guard let account = accountIDText, let sub = transferSubText, let number = UInt64(String(decoding: sequence, as: UTF8.self)) else {
            return nil
        }
        var saltBytes: [UInt8]?
        if ends.count > 3 {
            guard let bytes = self.saltBytes else { return nil }
            saltBytes = bytes
        }
        return PackageListing.Row(transferSub: sub, accountID: account.isEmpty ? nil : account, sequence: number, salt: saltBytes)
    }

    /// The 16 bytes a salt field's hex digits spell, when they are 32 lowercase hex digits.
    static func salt(_ digits: ArraySlice<UInt8>) -> [UInt8]? {
        guard digits.count == 2 * RowTree.saltLength, digits.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            return nil
        }
        return Hex.decode(String(decoding: digits, as: UTF8.self))
    }
}
