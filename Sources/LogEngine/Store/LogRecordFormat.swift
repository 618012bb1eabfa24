/// How the records of one event vocabulary are read, for the engine's checks of the log
/// (``LogVerification``): the engine reads no event's fields itself.
package struct LogRecordFormat: Sendable {
    /// Each event type's `type_index` key (``LedgerSchema/typeKey(_:)``) and name, in the
    /// order ``IndexedFields/type`` counts them.
    package var types: [(key: [UInt8], name: String)]
    /// The indexed fields of an event's JSON written in the vocabulary's own form; nil for any
    /// other form, which ``decodedFields`` then reads.
    package var indexedFields: @Sendable (UnsafeRawBufferPointer) -> IndexedFields?
    /// The indexed fields of stored record `sequence` (chain hash ‖ JSON), decoded in full:
    /// an error names what is wrong with it.
    package var decodedFields: @Sendable (UnsafeRawBufferPointer, UInt64) throws -> IndexedFields
    /// The idempotency key event `sequence` holds, if any.
    package var idempotencyKey: @Sendable (LogView, UInt64) throws -> String?

    package init(
        types: [(key: [UInt8], name: String)],
        indexedFields: @escaping @Sendable (UnsafeRawBufferPointer) -> IndexedFields?,
        decodedFields: @escaping @Sendable (UnsafeRawBufferPointer, UInt64) throws -> IndexedFields,
        idempotencyKey: @escaping @Sendable (LogView, UInt64) throws -> String?
    ) {
        self.types = types
        self.indexedFields = indexedFields
        self.decodedFields = decodedFields
        self.idempotencyKey = idempotencyKey
    }
}
