/// Personal data encrypted with one user's data key (AES-256-GCM); the key lives in the
/// key store, never in the log, so destroying it erases the data and keeps the chain intact.
public struct SealedValue: Hashable, Sendable {
    /// The algorithm name written to the ledger.
    public static let algorithm = "AES-256-GCM"

    /// The data key's ID (32 hex digits) in the key store.
    public var keyID: String
    /// Base64 of nonce (12 bytes) ‖ ciphertext ‖ tag (16 bytes).
    public var combined: String

    public init(keyID: String, combined: String) {
        self.keyID = keyID
        self.combined = combined
    }

    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("alg"); w.string(SealedValue.algorithm)
        w.key("ct"); w.string(combined)
        w.key("kid"); w.string(keyID)
        w.endObject()
    }

    init(reading r: FieldReader) throws {
        guard try r.string("alg") == SealedValue.algorithm else {
            throw LedgerError(.malformedRecord, "\(r.context).alg: expected \(SealedValue.algorithm)")
        }
        self.init(keyID: try r.string("kid"), combined: try r.string("ct"))
    }
}
