import Ledger
import Projections

/// The accounts an apply run sets, read a page at a time so that a run's memory follows its
/// batch, not the ledger: for an apply, the migrated users in key order that earlier runs to the
/// same table left undone; for an undo, the accounts the undone run changed.
struct ApplyWork: Sendable {
    /// Which users an apply takes.
    struct Filter: Sendable {
        /// Accounts the continued run settled already.
        var done: [String: ApplyOutcome]
        /// Each account's last outcome in earlier runs to the same table.
        var prior: [String: ApplyOutcome]
        /// Only users whose migration was recorded from this time on (`--since-last`).
        var since: Timestamp?
        /// Only these accounts (`--users`).
        var accounts: Set<String>?

        /// The item of `user`, and the outcome it has on record; nil when the run does not take it.
        func item(_ user: UserState) -> (ApplyPlan.Item, ApplyOutcome?)? {
            guard let item = ApplyPlan.Item(user: user), done[item.accountID] == nil else { return nil }
            if let accounts, !accounts.contains(item.accountID) { return nil }
            if let since, let recorded = user.migratedRecordedAt, recorded < since { return nil }
            let outcome = prior[item.accountID]
            if outcome == .applied || outcome == .already { return nil }
            return (item, outcome)
        }
    }

    enum Source: Sendable {
        /// An undo's accounts, known from the ledger's events.
        case items([ApplyPlan.Item])
        /// An apply's users, read from the projections.
        case users(Filter)
    }

    /// One page: at most a batch of items, the outcomes they have on record (one repeated is
    /// not recorded again), and where the next page starts (nil after the last).
    struct Page: Sendable {
        var items: [ApplyPlan.Item] = []
        var recorded: [String: ApplyOutcome] = [:]
        var next: UInt64?
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
            return try projection.read(ledger) { snapshot, _ in
                var page = Page()
                try snapshot.forEachUser(from: first) { user in
                    guard page.items.count < batchSize else {
                        page.next = user.key
                        return false
                    }
                    if let (item, outcome) = filter.item(user) {
                        page.items.append(item)
                        page.recorded[item.accountID] = outcome
                    }
                    return true
                }
                return page
            }
        }
    }

    /// How many accounts the run takes: one pass, nothing kept.
    func count() throws -> Int {
        switch source {
        case .items(let items): return items.count
        case .users(let filter):
            return try projection.read(ledger) { snapshot, _ in
                var count = 0
                try snapshot.forEachUser { user in if filter.item(user) != nil { count += 1 } }
                return count
            }
        }
    }

    /// Every page's items, in order: what a plan, which lists every account, reads.
    func allItems() throws -> [ApplyPlan.Item] {
        var items: [ApplyPlan.Item] = []
        var next: UInt64? = 0
        while let first = next {
            let page = try page(from: first)
            items += page.items
            next = page.next
        }
        return items
    }
}
