import Foundation

/// The C2SP tools from PyPI that check Handover's tiles and checkpoints as any transparency
/// client would: `aics-tlog` (tlog-tiles, checkpoints, proofs) and `aics-witness`, installed by
/// `tools/setup --transparency` in /opt/handover-transparency ($HANDOVER_TRANSPARENCY_TOOLS
/// elsewhere).
public enum TransparencyTools {
    /// The directory holding the tools' commands.
    public static var directory: String {
        ProcessInfo.processInfo.environment["HANDOVER_TRANSPARENCY_TOOLS"] ?? "/opt/handover-transparency/bin"
    }

    /// Runs `aics-tlog` with `arguments`: its status and its JSON answer (nil when it printed
    /// none), with what it printed for a failing test's message.
    public static func tlog(_ arguments: [String]) throws -> (status: Int32, answer: [String: Any]?, printed: String) {
        let path = directory + "/aics-tlog"
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw ToolMissing(description: "\(path) is missing: run tools/setup --transparency")
        }
        let r = try runCommand(path, arguments)
        let answer = r.out.split(separator: "\n").last.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        return (r.status, answer, r.out + r.err)
    }

    /// A tool that is not installed.
    public struct ToolMissing: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }
}
