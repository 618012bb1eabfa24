import ArgumentParser
import Ledger
import LogEngine
import Projections

/// `--fold-memory MB`, for the commands that fold the whole log outside the ledger (rebuild,
/// upgrade, `verify --deep`): the memory the fold may take. Its working state needs about 250
/// bytes a user; past the budget it spills to the scratch directory's disk.
struct FoldMemoryOption: ParsableArguments {
    @Option(
        name: .customLong("fold-memory"),
        help: ArgumentHelp(
            "The memory, in MB, a fold of the whole log may take: its sorted runs (128 MB, or an eighth of less) and a working state of about 300 bytes a user; past it the working state spills to the scratch directory's disk, read back through the page cache.",
            valueName: "mb"))
    var megabytes: Int = UserProjection.defaultFoldMemory >> 20

    func validate() throws {
        guard (1...1_048_576).contains(megabytes) else { throw ValidationError("--fold-memory: give 1 to 1048576 (MB), not \(megabytes)") }
    }

    /// The budget, in bytes.
    var bytes: Int { megabytes << 20 }

    /// Says, before a fold of `ledger`'s whole log starts, when its working state will not fit
    /// the budget: how much goes to the scratch directory's disk instead.
    func noteIfSpilling(_ projection: UserProjection, _ ledger: Ledger) throws {
        let plan = try projection.foldPlan(ledger, memory: bytes)
        guard plan.spilled > 0 else { return }
        Console.error(
            "note: about \(plan.users) users: the fold's working state needs about \(DiskSpace.format(plan.working)), more than --fold-memory \(megabytes) allows; "
                + "about \(DiskSpace.format(plan.spilled)) of it goes to the scratch directory's disk, slower where the page cache cannot hold it. "
                + "About \((plan.working + Int64(64 << 20)) >> 20) MB keeps it in memory.")
    }
}
