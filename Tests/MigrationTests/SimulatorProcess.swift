import Foundation
import TestSupport

/// `handover simulator serve` as a separate process on a free port, for tests that run
/// `handover` as users do.
enum SimulatorProcess {
    /// Starts the stand-in on `directory` and waits for its "listening" line.
    static func start(directory: String, extra: [String] = []) throws -> ServerProcess {
        try ServerProcess(["simulator", "serve", "--dir", directory, "--port", "0"] + extra)
    }

    /// `handover simulator register-team` for the app `com.example.app`; returns the .p8 path.
    @discardableResult
    static func registerTeam(_ team: String, keyID: String, in directory: String) throws -> String {
        let r = try runProduct(
            "handover", ["simulator", "register-team", "--dir", directory, "--team-id", team, "--client-id", "com.example.app", "--key-id", keyID])
        guard r.status == 0 else { throw ServerProcess.Failed(description: "register-team failed: \(r.err)") }
        return directory + "/keys/AuthKey_\(keyID).p8"
    }
}
