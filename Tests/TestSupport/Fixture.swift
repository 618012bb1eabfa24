import Foundation

/// A directory under `Tests/Fixtures`: a ledger written by older code, and that code's answers.
public struct Fixture: Sendable {
    /// The directory's path.
    public let path: String

    public init(_ name: String) {
        path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/" + name).path
    }

    /// The text of the fixture's file `name` (a path inside the directory).
    public func text(_ name: String) throws -> String {
        try String(contentsOfFile: path + "/" + name, encoding: .utf8)
    }
}
