extension LogView {
    /// Every "handoff issued" event, oldest first, with its sequence number.
    public func handoffsIssued() throws -> [(sequence: UInt64, body: HandoffIssued)] {
        try bodies(of: .handoffIssued) { if case .handoffIssued(let body) = $0 { body } else { nil } }
    }

    /// Every "handoff received" event, oldest first, with its sequence number.
    public func handoffsReceived() throws -> [(sequence: UInt64, body: HandoffReceived)] {
        try bodies(of: .handoffReceived) { if case .handoffReceived(let body) = $0 { body } else { nil } }
    }

    /// Every "handoff acknowledged" event, oldest first, with its sequence number.
    public func handoffsAcknowledged() throws -> [(sequence: UInt64, body: HandoffAcknowledged)] {
        try bodies(of: .handoffAcknowledged) { if case .handoffAcknowledged(let body) = $0 { body } else { nil } }
    }

    /// The events of `type` (few: found through the type index), their bodies taken by `pick`.
    private func bodies<Body>(of type: EventType, _ pick: (EventBody) -> Body?) throws -> [(sequence: UInt64, body: Body)] {
        try sequences(of: type).compactMap { sequence in try event(sequence).flatMap { pick($0.body) }.map { (sequence, $0) } }
    }
}
