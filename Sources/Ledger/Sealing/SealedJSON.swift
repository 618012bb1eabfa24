import Basics

/// Stored event JSON with its sealed values opened: for the copies of events people read
/// (exports with personal data, an evidence bundle's `revealed/`), never for what is hashed.
public enum SealedJSON {
    /// `stored` with each sealed value replaced by its address, or by null without a sealer or
    /// once the key is destroyed: in place on the canonical bytes, or through a parse for the
    /// odd value the fast path declines.
    public static func opened(_ stored: UnsafeRawBufferPointer, with sealer: Sealer?) throws -> [UInt8] {
        let replaced = try SealedValue.replacingSealedValues(in: stored) { sealed in
            guard let sealer, let address = try sealer.open(sealed) else { return Array("null".utf8) }
            var w = JSONWriter(capacity: address.utf8.count + 2)
            w.string(address)
            return w.bytes
        }
        if let replaced { return replaced }
        return try opening(try JSONValue.parse(stored), with: sealer).canonicalBytes
    }

    /// ``opened(_:with:)-(UnsafeRawBufferPointer,_)`` of bytes held in an array.
    public static func opened(_ stored: [UInt8], with sealer: Sealer?) throws -> [UInt8] {
        try stored.withUnsafeBytes { try opened($0, with: sealer) }
    }

    /// `value` with each sealed value (`{"alg","ct","kid"}`) replaced by its address, or by
    /// null without a sealer or once the key is destroyed.
    private static func opening(_ value: JSONValue, with sealer: Sealer?) throws -> JSONValue {
        switch value {
        case .object(let fields):
            if fields.count == 3, fields["alg"]?.stringValue == SealedValue.algorithm,
                let kid = fields["kid"]?.stringValue, let ct = fields["ct"]?.stringValue
            {
                guard let sealer, let address = try sealer.open(SealedValue(keyID: kid, combined: ct)) else { return .null }
                return .string(address)
            }
            return .object(try fields.mapValues { try opening($0, with: sealer) })
        case .array(let items):
            return .array(try items.map { try opening($0, with: sealer) })
        default:
            return value
        }
    }
}
