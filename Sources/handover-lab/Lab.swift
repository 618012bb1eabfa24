import ArgumentParser

/// `handover-lab`: load, crash and benchmark tools for the ledger (not for production use).
@main
struct Lab: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "handover-lab",
        abstract: "Load, crash and benchmark tools for the Handover ledger.",
        subcommands: [
            AppendCommand.self, BenchCommand.self, ExchangeBenchCommand.self, NotificationBenchCommand.self, SamplesCommand.self,
            ScaleWriteCommand.self, ScaleAppendersCommand.self, ScaleSinglesCommand.self, ScaleLookupsCommand.self, ScaleRebuildCommand.self,
            ForgetProjectionsCommand.self, HandoffPairCommand.self, HandoffPackageCommand.self, LookupBenchCommand.self, FuzzCommand.self,
            ParserBenchCommand.self, SignInBenchCommand.self,
        ]
    )
}
