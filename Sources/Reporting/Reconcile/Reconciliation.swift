import Foundation
import Ledger
import Projections

/// `handover reconcile`: team A's and team B's ledgers joined by `transfer_sub`, read-only on
/// both. The `t`-tagged entries of both ledgers' `user_links` are read side by side in
/// `transfer_sub` order (a merge join), so memory does not grow with the ledgers.
public struct Reconciliation {
    public let sender: Ledger
    public let senderProjection: UserProjection
    public let recipient: Ledger
    public let recipientProjection: UserProjection
    /// Answer as both ledgers stood at this time (each from its own events recorded by then).
    public let asOf: Timestamp?

    public init(sender: Ledger, senderProjection: UserProjection, recipient: Ledger, recipientProjection: UserProjection, asOf: Timestamp? = nil) {
        self.sender = sender
        self.senderProjection = senderProjection
        self.recipient = recipient
        self.recipientProjection = recipientProjection
        self.asOf = asOf
    }

    /// A checkpoint of team A's that team B recorded with a package, checked against team A's log now.
    public struct CheckpointFinding: Sendable {
        public var package: Int
        public var checkpoint: CheckpointFields
        /// Why it does not hold, or nil when team A's log still extends it unchanged.
        public var problem: String?
    }

    /// Every checkpoint of team A's ledger that team B recorded (its "handoff received"
    /// events), checked: the signature with team A's verifier key, and an RFC 9162
    /// consistency proof from it to team A's tree now. A log rewritten after the handoff, even
    /// with its tree rebuilt and checkpoints signed again, fails the proof.
    public func auditCheckpoints() throws -> [CheckpointFinding] {
        let origin = try sender.origin()
        let key = try sender.verifierKey().publicKey
        let received = try recipient.read { view in
            try view.sequences(of: .handoffReceived).compactMap { sequence -> HandoffReceived? in
                guard case .handoffReceived(let body)? = try view.event(sequence)?.body, body.checkpoint.origin.utf8.elementsEqual(origin.utf8) else { return nil }
                return body
            }
        }
        return try sender.read { view in
            let tree = try view.merkleFrontier()
            return try received.map { body in
                var finding = CheckpointFinding(package: body.package, checkpoint: body.checkpoint)
                let checkpoint: Checkpoint
                do { checkpoint = try body.checkpoint.checkpoint() } catch {
                    finding.problem = "the recorded checkpoint cannot be read: \(ErrorText.describing(error))"
                    return finding
                }
                if !checkpoint.isSigned(by: key) {
                    finding.problem = "its signature does not verify with team A's verifier key (\(VerifierKeyFile.fileName)): the key was changed"
                } else if checkpoint.treeSize > tree.size {
                    finding.problem = "it covers \(checkpoint.treeSize) events, team A's log now holds \(tree.size): events were removed"
                } else if !MerkleProof.verifyConsistency(oldSize: checkpoint.treeSize, oldRoot: checkpoint.rootHash, newSize: tree.size, newRoot: tree.root,
                                                         proof: try view.consistencyProof(from: checkpoint.treeSize, to: tree.size)) {
                    finding.problem = "team A's log now is not an extension of it: the log was rewritten after the handoff"
                }
                return finding
            }
        }
    }

    /// The packages team A issued to team B, and which of them team B received (same manifest).
    struct Packages {
        /// Issued packages by checkpoint size, ascending: (size, number, received).
        var issued: [(size: UInt64, number: Int, received: Bool)] = []

        /// The package whose events (after the previous package's size, up to its own) hold
        /// event `sequence`.
        func package(of sequence: UInt64) -> (number: Int, received: Bool)? {
            var low = 0, high = issued.count
            while low < high {
                let mid = (low + high) / 2
                if issued[mid].size < sequence { low = mid + 1 } else { high = mid }
            }
            return low < issued.count ? (issued[low].number, issued[low].received) : nil
        }
    }

    private func packages(senderView: LogView, recipientView: LogView, senderLimit: UInt64, recipientLimit: UInt64, target: String) throws -> Packages {
        let origin = try sender.origin()
        var received: [Int: String] = [:]
        for sequence in try recipientView.sequences(of: .handoffReceived) where sequence <= recipientLimit {
            if case .handoffReceived(let body)? = try recipientView.event(sequence)?.body, body.checkpoint.origin.utf8.elementsEqual(origin.utf8) {
                received[body.package] = body.manifestSHA256
            }
        }
        var packages = Packages()
        for sequence in try senderView.sequences(of: .handoffIssued) where sequence <= senderLimit {
            if case .handoffIssued(let body)? = try senderView.event(sequence)?.body, body.targetTeam.utf8.elementsEqual(target.utf8) {
                packages.issued.append((UInt64(body.checkpoint.treeSize), body.package, received[body.package].map { $0.utf8.elementsEqual(body.manifestSHA256.utf8) } ?? false))
            }
        }
        packages.issued.sort { $0.size < $1.size }
        return packages
    }

    /// Every `transfer_sub` either ledger names, in byte order, joined.
    public func forEachRow(_ body: (ReconcileRow) throws -> Void) throws {
        let target = try recipient.identity().teamID
        let time = asOf ?? .now()
        try senderProjection.read(sender, asOf: asOf) { a, aView in
            try recipientProjection.read(recipient, asOf: asOf) { b, bView in
                let senderLimit = try a.checkpoint(), recipientLimit = try b.checkpoint()
                let packages = try packages(senderView: aView, recipientView: bView, senderLimit: senderLimit, recipientLimit: recipientLimit, target: target)
                let window = try b.window()
                let closed = window.map { time >= $0.deadline } ?? false
                try a.withLinkedUsers(.transferSub) { senderLinks in
                    try b.withLinkedUsers(.transferSub) { recipientLinks in
                        var left = try senderLinks.next(), right = try recipientLinks.next()
                        while left != nil || right != nil {
                            let order: Int = switch (left, right) {
                            case (let l?, let r?): l.value.utf8.elementsEqual(r.value.utf8) ? 0 : (l.value.utf8.lexicographicallyPrecedes(r.value.utf8) ? -1 : 1)
                            case (nil, _): 1
                            case (_, nil): -1
                            }
                            let fromA = order <= 0 ? left : nil, fromB = order >= 0 ? right : nil
                            let transferSub = (fromA ?? fromB)!.value
                            let listed = fromA.flatMap { packages.package(of: $0.firstSequence) }
                            try body(row(transferSub, sender: fromA?.user, recipient: fromB?.user, package: listed, window: window, closed: closed))
                            if order <= 0 { left = try senderLinks.next() }
                            if order >= 0 { right = try recipientLinks.next() }
                        }
                    }
                }
            }
        }
    }

    private func row(_ transferSub: String, sender: UserState?, recipient: UserState?, package: (number: Int, received: Bool)?,
                     window: TransferWindow?, closed: Bool) -> ReconcileRow {
        let received = package?.received ?? false
        let outcome: ReconcileRow.Outcome
        if let recipient, recipient.status == .migrated {
            outcome = recipient.migratedVia == .signIn ? .signedIn : (received ? .exchanged : .exchangedUnlisted)
        } else if closed {
            outcome = .deadlinePassed
        } else if recipient?.status == .failed {
            outcome = .failed
        } else if received || recipient != nil {
            outcome = .notAttempted
        } else {
            outcome = .notReceived
        }
        let beforeDeadline = outcome.isMigrated ? window.flatMap { window in recipient?.migratedAt.map { $0 < window.deadline } } : nil
        return ReconcileRow(transferSub: transferSub, sender: sender, recipient: recipient, package: package?.number, received: received,
                            outcome: outcome, beforeDeadline: beforeDeadline)
    }

    /// The rows counted by outcome, every outcome listed, in the order ``ReconcileRow/Outcome`` declares them.
    public func totals() throws -> [ReconcileTotal] {
        var counts: [ReconcileRow.Outcome: Int] = [:]
        try forEachRow { counts[$0.outcome, default: 0] += 1 }
        return ReconcileRow.Outcome.allCases.map { ReconcileTotal(outcome: $0, users: counts[$0] ?? 0) }
    }
}
