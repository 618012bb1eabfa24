import ArgumentParser
import Projections

/// `--fold-memory MB`, for the commands that fold the whole log outside the ledger (rebuild,
/// upgrade, `verify --deep`): the memory the fold gathers its output in before writing it out
/// as sorted runs beside the scratch.
struct FoldMemoryOption: ParsableArguments {
    @Option(
        name: .customLong("fold-memory"),
        help: ArgumentHelp(
            "About how much memory, in MB, the fold gathers its output in before writing it out as a sorted run in the scratch directory; less means more, smaller runs.",
            valueName: "mb"))
    var megabytes: Int = UserProjection.defaultRunBudget >> 20

    func validate() throws {
        guard (1...4_096).contains(megabytes) else { throw ValidationError("--fold-memory: give 1 to 4096 (MB), not \(megabytes)") }
    }

    /// The run budget, in bytes.
    var runBudget: Int { megabytes << 20 }
}
