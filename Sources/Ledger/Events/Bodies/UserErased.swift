import Basics

/// Body of "user erased": one user's data keys were destroyed, so their sealed personal
/// data can no longer be read. The log itself is unchanged and still verifies.
public struct UserErased: Hashable, Sendable {
    public var reason: String
    /// How many data keys were destroyed.
    public var keysDestroyed: Int

    public init(reason: String, keysDestroyed: Int) {
        self.reason = reason
        self.keysDestroyed = keysDestroyed
    }

    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("keys_destroyed", keysDestroyed)
        w.field("reason", reason)
        w.endObject()
    }

    init(reading r: FieldReader) throws {
        self.init(reason: try r.string("reason"), keysDestroyed: try r.int("keys_destroyed"))
    }
}
