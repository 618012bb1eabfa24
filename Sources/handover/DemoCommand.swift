import ArgumentParser
import Foundation
import Rehearsal

/// `handover demo`: a whole rehearsal, built in.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "demo", abstract: "Write a rehearsal of a whole transfer into fresh ledgers and answer the main questions.")

    @Option(help: "Users to migrate.") var users = 2_000
    @Option(help: ArgumentHelp("Directory for the demo ledgers (default: a new temporary directory).", valueName: "dir")) var directory: String?

    func run() async throws {
        let dir = directory ?? (NSTemporaryDirectory() + "handover-demo-" + UUID().uuidString.prefix(8).lowercased())
        // Written as each part ends, so a reader sees it happen even through a pipe.
        try await Rehearsal(directory: dir, users: users).run { FileHandle.standardOutput.write(Data(($0 + "\n").utf8)) }
    }
}
