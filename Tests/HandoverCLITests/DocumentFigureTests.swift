import Foundation
import Testing

/// Figures the documents state in more than one place are the same everywhere.
@Suite("figures stated twice")
struct DocumentFigureTests {
    /// The rows of the first table in `document` whose header's first cell is `header`.
    private func table(_ document: String, header: String) throws -> [String] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        let text = try String(contentsOfFile: root + "/" + document, encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let start = try #require(lines.firstIndex { $0.hasPrefix("| \(header) |") }, "\(document) has no table headed \(header)")
        return Array(lines[start...].prefix { $0.hasPrefix("|") })
    }

    @Test("how long the demo, the tests and the release build take: the README's table is docs/testing.md's")
    func timesAreTheSame() throws {
        let readme = try table("README.md", header: "on a fresh clone")
        let testing = try table("docs/testing.md", header: "on a fresh clone")
        #expect(
            readme.count == 6 && readme == testing,
            "README.md:\n\(readme.joined(separator: "\n"))\ndocs/testing.md:\n\(testing.joined(separator: "\n"))")
    }
}
