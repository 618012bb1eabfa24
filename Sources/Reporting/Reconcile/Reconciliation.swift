import Basics
import Foundation
import Ledger
import LogEngine
import Projections

/// `handover reconcile`: team A's and team B's ledgers joined by `transfer_sub`, read-only on
/// both. The `t`-tagged entries of both ledgers' `user_links` are read side by side in
/// `transfer_sub` order (a merge join), so memory does not grow with the ledgers.
public struct Reconciliation {
    /// What stands for team A.
    public enum Sender {
        /// Team A's ledger (a copy will do).
        case ledger(Ledger, UserProjection)
        /// Team A's packages, each already checked against the pinned key
        /// (`HandoffPackageReader`), all of the same origin: what they allow.
        case packages([PackageListing], origin: String)

        /// Team A's ledger's origin.
        public func origin() throws -> String {
            switch self {
            case .ledger(let ledger, _): try ledger.origin()
            case .packages(_, let origin): origin
            }
        }
    }

    public let sender: Sender
    public let recipient: Ledger
    public let recipientProjection: UserProjection
    /// Answer as both ledgers stood at this time (each from its own events recorded by then;
    /// packages issued after it are left out).
    public let asOf: Timestamp?

    public init(sender: Sender, recipient: Ledger, recipientProjection: UserProjection, asOf: Timestamp? = nil) {
        self.sender = sender
        self.recipient = recipient
        self.recipientProjection = recipientProjection
        self.asOf = asOf
    }

    /// Team A's ledger as the sender.
    public init(sender: Ledger, senderProjection: UserProjection, recipient: Ledger, recipientProjection: UserProjection, asOf: Timestamp? = nil) {
        self.init(sender: .ledger(sender, senderProjection), recipient: recipient, recipientProjection: recipientProjection, asOf: asOf)
    }

    /// A checkpoint of team A's that team B recorded with a package, checked against team A's log now.
    public struct CheckpointFinding: Sendable {
        public var package: Int
        public var checkpoint: CheckpointFields
        /// Why it does not hold, or nil when team A's log still extends it unchanged.
        public var problem: String?
        /// False when nothing given could check it (a package team B received, not among those given).
        public var checked = true
    }

    /// Every checkpoint of team A's ledger that team B recorded (its "handoff received"
    /// events), checked. Against team A's ledger: the signature with its verifier key, and an
    /// RFC 9162 consistency proof from it to team A's tree now, so a log rewritten after the
    /// handoff, even with its tree rebuilt and checkpoints signed again, fails. Against team A's
    /// packages: each is the checkpoint of the package given under its number, and each package
    /// proves its log grew only since the one before.
    public func auditCheckpoints() throws -> [CheckpointFinding] {
        let origin = try sender.origin()
        let received = try recipient.read { try $0.handoffsReceived() }.map(\.body).filter { $0.checkpoint.origin.utf8.elementsEqual(origin.utf8) }
        let target = try recipient.identity().teamID
        switch sender {
        case .ledger(let ledger, _): return try audit(received, against: ledger, target: target)
        case .packages(let listings, _): return audit(received, against: listings.filter { $0.targetTeam.utf8.elementsEqual(target.utf8) })
        }
    }

    /// Each recorded checkpoint against team A's log now: its signature with team A's verifier
    /// key, and a consistency proof from it to team A's tree.
    private func audit(_ received: [HandoffReceived], against ledger: Ledger, target: String) throws -> [CheckpointFinding] {
        let key = try ledger.verifierKey().publicKey
        return try ledger.read { view in
            let tree = try view.merkleFrontier()
            var issued: [Int: String] = [:]
            for (_, body) in try view.handoffsIssued() where body.targetTeam.utf8.elementsEqual(target.utf8) {
                issued[body.package] = body.manifestSHA256
            }
            return try received.map { body in
                var finding = CheckpointFinding(package: body.package, checkpoint: body.checkpoint)
                if let digest = issued[body.package], !digest.utf8.elementsEqual(body.manifestSHA256.utf8) {
                    finding.problem =
                        "team B received manifest \(body.manifestSHA256) as package \(body.package), team A's ledger issued \(digest): team A signed two"
                    return finding
                }
                let checkpoint: Checkpoint
                do { checkpoint = try body.checkpoint.checkpoint() } catch {
                    finding.problem = "the recorded checkpoint cannot be read: \(ErrorText.describing(error))"
                    return finding
                }
                if !checkpoint.isSigned(by: key) {
                    finding.problem = "its signature does not verify with team A's verifier key (\(VerifierKeyFile.fileName)): the key was changed"
                } else if checkpoint.treeSize > tree.size {
                    finding.problem = "it covers \(checkpoint.treeSize) events, team A's log now holds \(tree.size): events were removed"
                } else if !MerkleProof.verifyConsistency(
                    oldSize: checkpoint.treeSize, oldRoot: checkpoint.rootHash, newSize: tree.size, newRoot: tree.root,
                    proof: try view.consistencyProof(from: checkpoint.treeSize, to: tree.size))
                {
                    finding.problem = "team A's log now is not an extension of it: the log was rewritten after the handoff"
                }
                return finding
            }
        }
    }

    /// With packages in place of team A's ledger: each recorded checkpoint is the one of the
    /// package given under that number (the same manifest), and each package given after
    /// another proves its log only grew since.
    private func audit(_ received: [HandoffReceived], against listings: [PackageListing]) -> [CheckpointFinding] {
        var findings = received.map { body in
            var finding = CheckpointFinding(package: body.package, checkpoint: body.checkpoint)
            if let listing = listings.first(where: { $0.package == body.package }) {
                if !listing.manifestSHA256.utf8.elementsEqual(body.manifestSHA256.utf8) {
                    finding.problem =
                        "team B received manifest \(body.manifestSHA256) as package \(body.package), the package given has manifest \(listing.manifestSHA256): team A signed two"
                }
            } else {
                finding.checked = false
            }
            return finding
        }
        for listing in listings {
            guard let previous = listings.first(where: { $0.package == listing.package - 1 }) else { continue }
            if previous.checkpoint.treeSize != listing.previousTreeSize
                || !MerkleProof.verifyConsistency(
                    oldSize: previous.checkpoint.treeSize, oldRoot: previous.checkpoint.rootHash, newSize: listing.checkpoint.treeSize,
                    newRoot: listing.checkpoint.rootHash, proof: listing.consistencyProof)
            {
                findings.append(
                    CheckpointFinding(
                        package: listing.package, checkpoint: CheckpointFields(listing.checkpoint),
                        problem:
                            "its consistency proof from package \(previous.package)'s checkpoint does not verify: team A's log was rewritten between the two"
                    ))
            }
        }
        return findings
    }

    /// The packages team A issued to team B, and which of them team B received (same manifest).
    struct Packages {
        /// Issued packages by checkpoint size, ascending: (size, number, received).
        var issued: [(size: UInt64, number: Int, received: Bool)] = []

        /// The package whose events (after the previous package's size, up to its own) hold
        /// event `sequence`.
        func package(of sequence: UInt64) -> (number: Int, received: Bool)? {
            var low = 0
            var high = issued.count
            while low < high {
                let mid = (low + high) / 2
                if issued[mid].size < sequence { low = mid + 1 } else { high = mid }
            }
            return low < issued.count ? (issued[low].number, issued[low].received) : nil
        }
    }

    /// The packages team A issued to `target` (events of its ledger up to `senderLimit`, or the
    /// listings given, issued by `asOf`), each marked received when team B recorded the same
    /// manifest by `recipientLimit`.
    private func packages(
        senderView: LogView?, recipientView: LogView, senderLimit: UInt64, recipientLimit: UInt64, target: String
    ) throws -> Packages {
        let origin = try sender.origin()
        var received: [Int: String] = [:]
        for (sequence, body) in try recipientView.handoffsReceived()
        where sequence <= recipientLimit && body.checkpoint.origin.utf8.elementsEqual(origin.utf8) {
            received[body.package] = body.manifestSHA256
        }
        var issued: [(size: UInt64, number: Int, digest: String)] = []
        switch sender {
        case .ledger:
            guard let senderView else { return Packages() }
            for (sequence, body) in try senderView.handoffsIssued() where sequence <= senderLimit && body.targetTeam.utf8.elementsEqual(target.utf8) {
                issued.append((UInt64(body.checkpoint.treeSize), body.package, body.manifestSHA256))
            }
        case .packages(let listings, _):
            for listing in listings where listing.targetTeam.utf8.elementsEqual(target.utf8) && asOf.map({ listing.issuedAt <= $0 }) ?? true {
                issued.append((listing.checkpoint.treeSize, listing.package, listing.manifestSHA256))
            }
        }
        var packages = Packages()
        packages.issued = issued.map { one in (one.size, one.number, received[one.number].map { $0.utf8.elementsEqual(one.digest.utf8) } ?? false) }
        packages.issued.sort { $0.size < $1.size }
        return packages
    }

    /// Every `transfer_sub` either ledger names, in byte order, joined.
    public func forEachRow(_ body: (ReconcileRow) throws -> Void) throws {
        switch sender {
        case .ledger(let ledger, let projection):
            try projection.read(ledger, asOf: asOf) { a, aView in
                try a.withLinkedUsers(.transferSub) { senderLinks in
                    try join(
                        ForTarget(senderLinks, target: try recipient.identity().teamID), senderView: aView, senderLimit: try a.checkpoint(), body)
                }
            }
        case .packages(let listings, _):
            let target = try recipient.identity().teamID
            let sorted = listings.filter { listing in
                listing.targetTeam.utf8.elementsEqual(target.utf8) && asOf.map { listing.issuedAt <= $0 } ?? true
            }.flatMap { listing in
                listing.rows.map { row in
                    var user = UserState(key: 0, status: .transferIDGenerated, sequence: row.sequence)
                    user.accountID = row.accountID
                    user.transferSub = row.transferSub
                    user.targetTeam = listing.targetTeam
                    return LinkedUser(value: row.transferSub, firstSequence: row.sequence, user: user)
                }
            }.sorted {
                $0.value.utf8.elementsEqual($1.value.utf8)
                    ? $0.firstSequence < $1.firstSequence : $0.value.utf8.lexicographicallyPrecedes($1.value.utf8)
            }
            // One row per transfer_sub, as team A's ledger links it: the first listing.
            var listed: [LinkedUser] = []
            for link in sorted where !(listed.last.map { $0.value.utf8.elementsEqual(link.value.utf8) } ?? false) { listed.append(link) }
            try join(LinkedUserList(listed), senderView: nil, senderLimit: .max, body)
        }
    }

    /// The merge join of team A's side, `senderLinks`, with team B's ledger.
    private func join(_ senderLinks: any LinkedUsers, senderView: LogView?, senderLimit: UInt64, _ body: (ReconcileRow) throws -> Void) throws {
        let target = try recipient.identity().teamID
        let time = asOf ?? .now()
        try recipientProjection.read(recipient, asOf: asOf) { b, bView in
            let packages = try packages(
                senderView: senderView, recipientView: bView, senderLimit: senderLimit, recipientLimit: try b.checkpoint(), target: target)
            let window = try b.window()
            let closed = window?.hasClosed(at: time) ?? false
            try b.withLinkedUsers(.transferSub) { recipientLinks in
                var left = try senderLinks.next()
                var right = try recipientLinks.next()
                while left != nil || right != nil {
                    let order: Int =
                        switch (left, right) {
                        case (let l?, let r?):
                            l.value.utf8.elementsEqual(r.value.utf8) ? 0 : (l.value.utf8.lexicographicallyPrecedes(r.value.utf8) ? -1 : 1)
                        case (nil, _): 1
                        case (_, nil): -1
                        }
                    let fromA = order <= 0 ? left : nil
                    let fromB = order >= 0 ? right : nil
                    let transferSub = (fromA ?? fromB)!.value
                    let listed = fromA.flatMap { packages.package(of: $0.firstSequence) }
                    try body(row(transferSub, sender: fromA?.user, recipient: fromB?.user, package: listed, window: window, closed: closed))
                    if order <= 0 { left = try senderLinks.next() }
                    if order >= 0 { right = try recipientLinks.next() }
                }
            }
        }
    }

    private func row(
        _ transferSub: String, sender: UserState?, recipient: UserState?, package: (number: Int, received: Bool)?,
        window: TransferWindow?, closed: Bool
    ) -> ReconcileRow {
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
        return ReconcileRow(
            transferSub: transferSub, sender: sender, recipient: recipient, package: package?.number, received: received,
            outcome: outcome, beforeDeadline: beforeDeadline)
    }

    /// The rows counted by outcome, every outcome listed, in the order ``ReconcileRow/Outcome`` declares them.
    public func totals() throws -> [ReconcileTotal] {
        var counts: [ReconcileRow.Outcome: Int] = [:]
        try forEachRow { counts[$0.outcome, default: 0] += 1 }
        return ReconcileRow.Outcome.allCases.map { ReconcileTotal(outcome: $0, users: counts[$0] ?? 0) }
    }
}

/// Team A's links, leaving out users it generated transfer identifiers for another team: no
/// package to team B could list them.
private final class ForTarget: LinkedUsers {
    private let links: any LinkedUsers
    private let target: String

    init(_ links: any LinkedUsers, target: String) {
        self.links = links
        self.target = target
    }

    func next() throws -> LinkedUser? {
        while let link = try links.next() {
            if link.user.targetTeam.map({ $0.utf8.elementsEqual(target.utf8) }) ?? true { return link }
        }
        return nil
    }
}
