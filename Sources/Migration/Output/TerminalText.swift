/// Text laid out for a terminal, so a long message reads as a paragraph, not one line
/// running off the screen.
public enum TerminalText {
    /// The width summaries and the demo wrap to.
    public static let width = 100

    /// `line` filled into lines of at most `width` characters, breaking between words (a
    /// longer word keeps a line of its own). The first line keeps `line`'s indentation; the
    /// others start with `continuation`.
    public static func wrap(_ line: String, width: Int = TerminalText.width, continuation: String = "    ") -> String {
        let indent = String(line.prefix { $0 == " " })
        var lines: [String] = []
        var current = indent
        for word in line.split(separator: " ") {
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
