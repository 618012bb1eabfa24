/// Text laid out for a terminal, so a long message reads as a paragraph, not one line
/// running off the screen.
public enum TerminalText {
    /// The width summaries and the demo wrap to.
    public static let width = 100

    /// `line` filled into lines of at most `width` characters, breaking between words (a
    /// longer word, or a command in backticks, keeps a line of its own, so that it is copied
    /// whole). The first line keeps `line`'s indentation; the
    /// others start with `continuation`.
    public static func wrap(_ line: String, width: Int = TerminalText.width, continuation: String = "    ") -> String {
        let indent = String(line.prefix { $0 == " " })
        var lines: [String] = []
        var current = indent
        // A command in backticks is one word, so that it can be copied from one line as it runs.
        var words: [String] = []
        var quoted = false
        for word in line.split(separator: " ") {
            if quoted, let last = words.popLast() { words.append(last + " " + word) } else { words.append(String(word)) }
            if word.filter({ $0 == "`" }).count % 2 == 1 { quoted.toggle() }
        }
        for word in words {
            let start = lines.isEmpty ? indent : continuation
            if current.count > start.count, current.count + 1 + word.count > width {
                lines.append(current)
                current = continuation + word
            } else {
                current += (current.count > start.count ? " " : "") + word
            }
        }
        lines.append(current)
        return lines.joined(separator: "\n")
    }
}
