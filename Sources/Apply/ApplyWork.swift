import Basics
import Ledger
import Projections

/// The accounts an apply run sets, read a page at a time so that a run's memory follows its
/// batch, not the ledger: for an apply, the migrated users in key order with a column earlier
/// runs to the same table left undone (or whose value changed since); for an undo, the accounts
/// the undone run changed.
struct ApplyWork: Sendable {
    /// Which users an apply takes, and which of their columns.
    struct Filter: Sendable {
        /// The mapped columns, in column order.
        var columns: [ApplyColumn]
        /// Accounts the continued run settled already.
        var done: Set<String>
        /// Each account's last outcome in each column in earlier runs to the same table.
        var prior: [String: PerColumn<AppliedCell>]
        /// For each column, when `--since-last` is given and an earlier finished run to the same
        /// table set it: only users whose migration, or that column's value, was recorded from
        /// the time that run began.
        var since: PerColumn<Timestamp>
        /// Only these accounts (`--users`).
        var accounts: Set<String>?
        /// The forwarding flag as the table shows it in text: on, off.
        var flags: (on: String, off: String)

        /// The cells `user`'s account takes, each with the value it is to take (an email cell's
        /// still sealed: ``Page`` opens them), and the outcome each has on record when it is
        /// planned again for that outcome's sake (one repeated is not recorded again); nil when
        /// the run takes none of the user's columns.
        func cells(_ user: UserState) -> [(cell: Candidate, recorded: ApplyOutcome?)]? {
            guard let accountID = user.accountID, !done.contains(accountID), accounts?.contains(accountID) ?? true else { return nil }
            var cells: [(Candidate, ApplyOutcome?)] = []
            for column in columns {
                guard let value = Self.value(column, of: user, flags: flags) else { continue }
                let changedAt = Self.changedAt(column, of: user)
                var recorded: ApplyOutcome?
                if let prior = prior[accountID]?[column] {
                    let changedSince = changedAt.map { $0 > prior.at } ?? false
                    if prior.outcome.isSettled && !changedSince { continue }
                    recorded = changedSince ? nil : prior.outcome
                }
                if let since = since[column] {
                    let recent = [user.migratedRecordedAt, changedAt].contains { time in time.map { $0 >= since } ?? false }
                    guard recent || user.migratedRecordedAt == nil else { continue }
                }
                cells.append((Candidate(column: column, value: value), recorded))
            }
            return cells.isEmpty ? nil : cells
        }

        /// The value `user` holds for `column`, when the user migrated and has one: their new
        /// `sub`; the private relay address Apple gave (sealed), not of an erased user; the
        /// forwarding flag Apple last reported.
        static func value(_ column: ApplyColumn, of user: UserState, flags: (on: String, off: String)) -> ApplyValue? {
            guard user.status == .migrated else { return nil }
            switch column {
            case .recipientSub: return user.recipientSub.map(ApplyValue.text)
            case .email:
                guard user.isPrivateEmail == true, user.erasedAt == nil, let email = user.email else { return nil }
                return .sealed(email)
            case .emailForwarding: return user.emailForwarding.map { .text($0 ? flags.on : flags.off) }
            }
        }

        /// When the ledger last recorded `column`'s value for `user`.
        static func changedAt(_ column: ApplyColumn, of user: UserState) -> Timestamp? {
            switch column {
            case .recipientSub: user.migratedRecordedAt
            case .email: user.emailChangedAt
            case .emailForwarding: user.emailForwardingChangedAt
            }
        }

        /// Whether `user`'s account, taking no email cell, is one whose email column may hold a
        /// relay address no run replaces: and why.
        func staleReason(_ user: UserState) -> StaleAddress.Reason? {
            guard columns.contains(.email), let accountID = user.accountID, accounts?.contains(accountID) ?? true,
                user.status != .unmatched
            else { return nil }
            guard user.status == .migrated else { return .notMigrated }
            if user.erasedAt != nil { return .erased }
            return Self.value(.email, of: user, flags: flags) == nil ? .noRelayAddress : nil
        }
    }

    /// One column's value for a user, before a page opens the sealed ones.
    struct Candidate: Sendable {
        var column: ApplyColumn
        var value: ApplyValue
    }

    enum Source: Sendable {
        /// An undo's accounts, known from the ledger's events.
        case items([ApplyPlan.Item])
        /// An apply's users, read from the projections.
        case users(Filter)
    }

    /// One page: at most a batch of items, the outcomes their cells have on record (by account,
    /// then column), the accounts whose email column may hold a relay address no cell replaces,
    /// and where the next page starts (nil after the last).
    struct Page: Sendable {
        var items: [ApplyPlan.Item] = []
        var recorded: [String: PerColumn<ApplyOutcome>] = [:]
        var staleCandidates: [StaleAddress] = []
        var next: UInt64?
        /// The data keys that opened the items' addresses, which seal them into the batch's rows.
        var keys: Sealer.KeyBatch?
    }

    let source: Source
    let ledger: Ledger
    let projection: UserProjection
    let batchSize: Int

    /// The page starting at `first` (a user key, or an undo's index).
    func page(from first: UInt64) throws -> Page {
        switch source {
        case .items(let items):
            let start = Int(first)
            let end = min(start + batchSize, items.count)
            return Page(items: Array(items[start..<end]), next: end < items.count ? UInt64(end) : nil)
        case .users(let filter):
            var page = Page()
            var found: [(user: UserState, cells: [(cell: Candidate, recorded: ApplyOutcome?)])] = []
            try projection.read(ledger) { snapshot, _ in
                try snapshot.forEachUser(from: first) { user in
                    guard found.count + page.staleCandidates.count < batchSize else {
                        page.next = user.key
                        return false
                    }
                    let cells = filter.cells(user)
                    if let cells { found.append((user, cells)) }
                    if !(cells?.contains { $0.cell.column == .email } ?? false), let reason = filter.staleReason(user) {
                        page.staleCandidates.append(StaleAddress(accountID: user.accountID!, transferSub: user.transferSub, reason: reason))
                    }
                    return true
                }
            }
            // The addresses, opened in one read of the key store; one that does not open (the
            // user erased meanwhile) takes no cell.
            let sealer = ledger.sealer
            let keys = try sealer.keys(for: found.flatMap { $0.cells.compactMap { if case .sealed(let s) = $0.cell.value { s } else { nil } } })
            page.keys = keys
            for (user, candidates) in found {
                var item = ApplyPlan.Item(accountID: user.accountID!, transferSub: user.transferSub, cells: [])
                var recorded = PerColumn<ApplyOutcome>()
                for (candidate, outcome) in candidates {
                    switch candidate.value {
                    case .text(let text): item.cells.append(ApplyPlan.Item.Cell(column: candidate.column, new: text))
                    case .sealed(let sealed):
                        guard let address = try sealer.open(sealed, with: keys) else {
                            page.staleCandidates.append(StaleAddress(accountID: item.accountID, transferSub: user.transferSub, reason: .erased))
                            continue
                        }
                        item.cells.append(ApplyPlan.Item.Cell(column: candidate.column, new: address, sealed: sealed))
                        item.keyID = sealed.keyID
                    }
                    recorded[candidate.column] = outcome
                }
                guard !item.cells.isEmpty else { continue }
                page.items.append(item)
                if !recorded.isEmpty { page.recorded[item.accountID] = recorded }
            }
            return page
        }
    }

    /// How many accounts the run takes: one pass, nothing kept.
    func count() throws -> Int {
        switch source {
        case .items(let items): return items.count
        case .users(let filter):
            return try projection.read(ledger) { snapshot, _ in
                var count = 0
                try snapshot.forEachUser { user in if filter.cells(user) != nil { count += 1 } }
                return count
            }
        }
    }

    /// Every page's items and stale candidates, in order: what a plan, which lists every
    /// account, reads.
    func allPages() throws -> (items: [ApplyPlan.Item], staleCandidates: [StaleAddress]) {
        var items: [ApplyPlan.Item] = []
        var stale: [StaleAddress] = []
        var next: UInt64? = 0
        while let first = next {
            let page = try page(from: first)
            items += page.items
            stale += page.staleCandidates
            next = page.next
        }
        return (items, stale)
    }
}
