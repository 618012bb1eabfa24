import Basics

/// A part of an event that writes itself as one canonical JSON value: a body, a nested object
/// of a body (a failure, a sealed value, a checkpoint), the identifiers, the actor.
protocol JSONFieldWriting {
    func write(to w: inout JSONWriter)
}

extension JSONWriter {
    /// Writes `key: value` when `value` is not nil.
    mutating func field(_ key: StaticString, _ value: (some JSONFieldWriting)?) {
        if let value {
            self.key(key)
            value.write(to: &self)
        }
    }
}

extension SealedValue: JSONFieldWriting {}
extension CallFailure: JSONFieldWriting {}
extension CheckpointFields: JSONFieldWriting {}
extension Identifiers: JSONFieldWriting {}
extension Actor: JSONFieldWriting {}
extension EventBody: JSONFieldWriting {}
