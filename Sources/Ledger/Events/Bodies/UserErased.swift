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
}

extension UserErased: FieldObject {
    static func fields<C: FieldCoder>(_ c: inout C, _ v: Self?) throws -> Self {
        Self(reason: try c.field("reason", v?.reason), keysDestroyed: try c.field("keys_destroyed", v?.keysDestroyed))
    }
}
