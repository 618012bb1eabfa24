import ArgumentParser
import ExitStatuses
import Ledger

/// The `handover` command: migration runs and the audit ledger of a Sign in with Apple transfer.
struct Handover: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "handover",
        abstract: "Run and audit a Sign in with Apple app-transfer migration.",
        discussion: "Every step is recorded as an event in an append-only, hash-chained LMDB ledger. Exit codes: "
            + ExitStatus.allCases.map { "\($0.rawValue) \($0.meaning)" }.joined(separator: "; ") + ".",
        version: "handover \(HandoverVersion.current)",
        subcommands: [
            InitCommand.self, WindowCommand.self, PreflightCommand.self, StatusCommand.self, LookupCommand.self, GenerateCommand.self,
            ExchangeCommand.self, HandoffCommand.self, ClientSecretCommand.self, IngestCommand.self, ServeCommand.self,
            QueryCommand.self, ReconcileCommand.self, ReportCommand.self, ExportCommand.self, ApplyCommand.self, VerifyCommand.self,
            UpgradeCommand.self, BackupCommand.self, CompactCommand.self, CheckpointCommand.self, ProveCommand.self, EvidenceCommand.self,
            TilesCommand.self, WitnessCommand.self,
            EraseCommand.self,
            ProjectionsCommand.self, SimulatorCommand.self, DemoCommand.self,
        ]
    )

    /// One prefix for every error message, ArgumentParser's own included.
    static var _errorPrefix: String { "error: " }
}
