import Foundation
import TestSupport
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

/// The README's install lines, as a fresh Debian has it: run under a directory standing for `/`
/// (with `/usr/local/bin`, as Debian has, and nothing else), the binary and its manual pages
/// and completion land where they should.
@Suite("the README's install lines")
struct InstallLinesTests {
    @Test("each install line of the README runs on a fresh Debian's directories: the manual's directory is made, not assumed")
    func installLinesRun() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        let readme = try String(contentsOfFile: root + "/README.md", encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "## Install\n").dropFirst().first)
        let block = try #require(section.components(separatedBy: "```sh\n").dropFirst().first?.components(separatedBy: "```").first)
        let installs = block.split(separator: "\n").map(String.init).filter { $0.hasPrefix("sudo install ") }
        #expect(installs.count >= 3, "\(block)")
        let dir = TemporaryDirectory()
        let fake = dir.sub("root")
        try FileManager.default.createDirectory(atPath: fake + "/usr/local/bin", withIntermediateDirectories: true)
        let binary = URL(fileURLWithPath: productPath("handover")).path
        let script = installs.map { line in
            line.replacingOccurrences(of: "sudo ", with: "").replacingOccurrences(of: ".build/release/handover", with: binary)
                .replacingOccurrences(of: " /usr/local/", with: " \(fake)/usr/local/").replacingOccurrences(of: " /etc/", with: " \(fake)/etc/")
        }.joined(separator: "\n")
        let ran = try runCommand("/bin/bash", ["-e", "-c", "cd \(root)\n" + script])
        #expect(ran.status == 0, "\(script)\n\(ran.err)")
        for path in [
            "/usr/local/bin/handover", "/usr/local/share/man/man1/handover.1", "/usr/local/share/man/man1/handover-status.1",
            "/etc/bash_completion.d/handover",
        ] {
            #expect(FileManager.default.fileExists(atPath: fake + path), "\(path) was not installed")
        }
    }
}
