import Basics
import Foundation
import Ledger

/// Strings an attacker (or a careless upstream) sends, for tests that hold every output inert
/// and every export whole whatever arrives.
public enum HostileStrings {
    /// One of each kind: NUL, a terminal's escape sequences (retitle, clear, colour), C1
    /// controls, DEL, bidi overrides and isolates, markup, spreadsheet formulas, line breaks and
    /// the Unicode line and paragraph separators.
    public static let corpus: [String] = [
        "K\u{0}ID",
        "\u{1B}]0;pwned\u{7}\u{1B}[2J\u{1B}[31mRED",
        "\u{9B}31mC1\u{85}NEL",
        "DEL\u{7F}X",
        "\u{202E}gnp.exe\u{2066}isolate\u{2069}\u{200F}",
        "<script>document.title='pwned'</script>",
        "=HYPERLINK(\"http://evil.example\",\"x\")",
        "+1+1", "-1-1", "@SUM(1)", "\tTAB", "\rCR",
        "line\nbreak\r\nCRLF, \"quoted\"",
        "\u{2028}LS\u{2029}PS",
    ]

    /// The corpus without NUL: what may be an identifier (the ledger holds no NUL in one).
    public static var withoutNUL: [String] { corpus.filter { !$0.utf8.contains(0) } }

    /// About 60 kB of escape sequences: a long `error_description`.
    public static let long = String(repeating: "A\u{1B}[31m\u{202E}", count: 7_000)

    /// The characters that may never appear raw on a screen (``InertText/isEscaped(_:)``)
    /// found in `text`, but for `allowed` (the line breaks of the output's own format).
    public static func rawControls(in text: String, allowing allowed: Set<Unicode.Scalar> = ["\n"]) -> [String] {
        text.unicodeScalars.filter { InertText.isEscaped($0) && !allowed.contains($0) }.map { "U+" + String(format: "%04X", $0.value) }
    }
}
