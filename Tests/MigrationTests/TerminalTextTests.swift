import Migration
import Testing

/// Long summary lines are wrapped for a terminal without losing or reordering a word.
@Suite("terminal text")
struct TerminalTextTests {
    @Test("a long line wraps between words at the width, keeps its indentation, and loses nothing")
    func wraps() {
        let line = "  STOPPED: " + (1...60).map { "word\($0)" }.joined(separator: " ")
        let wrapped = TerminalText.wrap(line, width: 40, continuation: "    ").split(separator: "\n").map(String.init)
        #expect(wrapped.count > 1)
        #expect(wrapped.allSatisfy { $0.count <= 40 })
        #expect(wrapped.first?.hasPrefix("  STOPPED: word1") == true)
        #expect(wrapped.dropFirst().allSatisfy { $0.hasPrefix("    ") && !$0.hasPrefix("     ") })
        #expect(wrapped.flatMap { $0.split(separator: " ") } == line.split(separator: " "))
        let longWord = "  path " + String(repeating: "x", count: 60) + " end"
        #expect(TerminalText.wrap(longWord, width: 40) == "  path\n    " + String(repeating: "x", count: 60) + "\n    end")
        #expect(TerminalText.wrap("  short line") == "  short line")
    }
}
