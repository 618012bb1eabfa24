import NIOCore

/// Rows in PostgreSQL's `COPY ... FROM STDIN` text format, written straight into a buffer:
/// tab between columns, newline after a row, `\N` for null, and a backslash before each
/// backslash, tab, newline and carriage return inside a value.
struct CopyTextRows {
    private(set) var buffer: ByteBuffer
    private(set) var rows = 0

    init(capacity: Int) {
        buffer = ByteBufferAllocator().buffer(capacity: capacity)
    }

    /// Appends one row.
    mutating func append(_ cells: [ExportCell]) {
        for (index, cell) in cells.enumerated() {
            if index > 0 { buffer.writeInteger(UInt8(ascii: "\t")) }
            switch cell {
            case .text(var text?): text.withUTF8 { writeEscaped(UnsafeRawBufferPointer($0)) }
            case .int(let value?): buffer.writeString(String(value))
            case .bool(let value?): buffer.writeInteger(UInt8(ascii: value ? "t" : "f"))
            default: buffer.writeStaticString("\\N")
            }
        }
        buffer.writeInteger(UInt8(ascii: "\n"))
        rows += 1
    }

    /// Appends one row of an integer and a text given as UTF-8 bytes.
    mutating func append(_ number: Int64, _ utf8: [UInt8]) {
        buffer.writeString(String(number))
        buffer.writeInteger(UInt8(ascii: "\t"))
        utf8.withUnsafeBytes { writeEscaped($0) }
        buffer.writeInteger(UInt8(ascii: "\n"))
        rows += 1
    }

    /// Hands over what was written and starts again empty.
    mutating func take() -> (buffer: ByteBuffer, rows: Int) {
        defer {
            buffer = ByteBufferAllocator().buffer(capacity: buffer.capacity)
            rows = 0
        }
        return (buffer, rows)
    }

    /// Writes `bytes`, copying runs without special bytes whole.
    private mutating func writeEscaped(_ bytes: UnsafeRawBufferPointer) {
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
