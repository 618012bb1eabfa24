import Basics
import Ledger
import NIOCore
import Projections

/// Rows in PostgreSQL's `COPY ... FROM STDIN` text format, written straight into a buffer:
/// tab between columns, newline after a row, `\N` for null, and a backslash before each
/// backslash, tab, newline and carriage return inside a value.
///
/// PostgreSQL's `text` and `jsonb` cannot hold U+0000, which a string of outside origin may
/// carry (a forged token's `kid`, Apple's error text). A row is written so that PostgreSQL
/// takes it all the same, and nothing is lost: each U+0000 in a text column is written as
/// U+FFFD, each `\u0000` in the JSON column as `\ufffd`, and the row's last column,
/// `exact_text`, holds the exact values of the columns so changed as one JSON object (as text,
/// where `\u0000` may stand): a string for a text column, the JSON itself for the JSON column.
/// `exact_text` is null in every row that needed no change.
struct CopyTextRows {
    private(set) var buffer: ByteBuffer
    private(set) var rows = 0

    init(capacity: Int) {
        buffer = ByteBufferAllocator().buffer(capacity: capacity)
    }

    /// Appends one row of `cells` under `columns`, then its `exact_text`. The cell at
    /// `jsonColumn`, if any, is JSON text.
    mutating func append(_ cells: [QueryTable.Cell], columns: [String], jsonColumn: Int? = nil) {
        var exact: [(column: String, value: [UInt8])] = []
        for (index, cell) in cells.enumerated() {
            if index > 0 { buffer.writeInteger(UInt8(ascii: "\t")) }
            switch cell {
            case .text, .events:
                var text = cell.text
                let isJSON = index == jsonColumn
                let held = text.withUTF8 { isJSON ? PostgresText.replacingEscapedNUL(inJSON: $0) : PostgresText.replacingNUL($0) }
                guard let held else {
                    text.withUTF8 { write(UnsafeRawBufferPointer($0)) }
                    break
                }
                if isJSON {
                    exact.append((columns[index], Array(text.utf8)))
                } else {
                    var w = JSONWriter(capacity: text.utf8.count + 8)
                    w.string(text)
                    exact.append((columns[index], w.bytes))
                }
                held.withUnsafeBytes { write($0) }
            case .time(let time): buffer.writeString(time.rfc3339)
            case .int(let value): buffer.writeString(String(value))
            case .bool(let value): buffer.writeInteger(UInt8(ascii: value ? "t" : "f"))
            case .null: buffer.writeStaticString("\\N")
            }
        }
        buffer.writeInteger(UInt8(ascii: "\t"))
        if exact.isEmpty {
            buffer.writeStaticString("\\N")
        } else {
            var w = JSONWriter()
            w.beginObject()
            for (column, value) in exact.sorted(by: { $0.column.utf8.lexicographicallyPrecedes($1.column.utf8) }) {
                w.dynamicKey(column)
                w.raw(value)
            }
            w.endObject()
            InertText.json(w.bytes).withUnsafeBytes { write($0) }
        }
        buffer.writeInteger(UInt8(ascii: "\n"))
        rows += 1
    }

    /// Appends one row of a sequence number, the JSON of an event rewritten and its
    /// `exact_text` (as ``append(_:columns:json:)`` would write them for `event_json`).
    mutating func append(_ sequence: Int64, eventJSON: [UInt8]) {
        append([.int(Int(sequence)), .text(String(decoding: eventJSON, as: UTF8.self))], columns: ["seq", "event_json"], jsonColumn: 1)
    }

    /// Hands over what was written and starts again empty.
    mutating func take() -> (buffer: ByteBuffer, rows: Int) {
        defer {
            buffer = ByteBufferAllocator().buffer(capacity: buffer.capacity)
            rows = 0
        }
        return (buffer, rows)
    }

    /// Writes `bytes` escaped, copying runs without special bytes whole.
    private mutating func write(_ bytes: UnsafeRawBufferPointer) {
        var start = 0
        for (index, byte) in bytes.enumerated() where byte == 0x5C || byte == 0x09 || byte == 0x0A || byte == 0x0D {
            buffer.writeBytes(UnsafeRawBufferPointer(rebasing: bytes[start..<index]))
            buffer.writeInteger(UInt8(0x5C))
            buffer.writeInteger(byte == 0x09 ? UInt8(ascii: "t") : byte == 0x0A ? UInt8(ascii: "n") : byte == 0x0D ? UInt8(ascii: "r") : byte)
            start = index + 1
        }
        buffer.writeBytes(UnsafeRawBufferPointer(rebasing: bytes[start...]))
    }
}

/// The two ways U+0000 reaches PostgreSQL, made into values it holds.
enum PostgresText {
    /// UTF-8 with each NUL byte as U+FFFD, or nil when it holds none.
    static func replacingNUL(_ utf8: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard utf8.contains(0) else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count + 8)
        for byte in utf8 {
            if byte == 0 { out.append(contentsOf: [0xEF, 0xBF, 0xBD]) } else { out.append(byte) }
        }
        return out
    }

    /// JSON text with each `\u0000` escape as `\ufffd`, or nil when it holds none. Escapes
    /// are read in order, so an escaped backslash followed by `u0000` is left alone.
    static func replacingEscapedNUL(inJSON utf8: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        let backslash = UInt8(ascii: "\\")
        var out: [UInt8]?
        var i = 0
        while i < utf8.count {
            guard utf8[i] == backslash, i + 1 < utf8.count else {
                out?.append(utf8[i])
                i += 1
                continue
            }
            if utf8[i + 1] == UInt8(ascii: "u"), i + 6 <= utf8.count, utf8[(i + 2)..<(i + 6)].elementsEqual("0000".utf8) {
                if out == nil {
                    out = Array(utf8[..<i])
                    out!.reserveCapacity(utf8.count + 8)
                }
                out!.append(contentsOf: Array("\\ufffd".utf8))
                i += 6
            } else {
                out?.append(contentsOf: utf8[i...(i + 1)])
                i += 2
            }
        }
        return out
    }
}
