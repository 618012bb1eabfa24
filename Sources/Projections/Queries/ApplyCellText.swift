import Basics
import Ledger

/// An apply row's cells in words, as a user's history and an evidence bundle's story show them:
/// "applied, OLD → NEW" for a row of the `sub` alone (as before other columns were set), else
/// each column named: "recipient_sub applied, OLD → NEW; email kept".
public enum ApplyCellText {
    /// One cell: its column, what was planned or became of it, and the values read and to take
    /// when they are shown (never for a kept cell, which records none).
    public struct Part {
        public var column: ApplyColumn
        public var word: String
        public var values: (old: ApplyValue?, new: ApplyValue?)?

        public init(_ column: ApplyColumn, _ word: String, values: (old: ApplyValue?, new: ApplyValue?)? = nil) {
            self.column = column
            self.word = word
            self.values = values
        }
    }

    /// `parts` in words, each value shown by `show` (a sealed address opened, or "sealed").
    public static func line(_ parts: [Part], show: (ApplyValue) -> String) -> String {
        let alone = parts.count == 1 && parts[0].column == .recipientSub
        return parts.map { part in
            (alone ? "" : part.column.rawValue + " ") + part.word
                + (part.values.map { ", \($0.old.map(show) ?? "NULL") → \($0.new.map(show) ?? "NULL")" } ?? "")
        }.joined(separator: "; ")
    }

    /// A value shown on a screen: text escaped; a sealed address opened by `open` (nil: "sealed").
    public static func shown(_ value: ApplyValue, open: (SealedValue) -> String?) -> String {
        switch value {
        case .text(let text): InertText.forScreen(text)
        case .sealed(let sealed): open(sealed).map(InertText.forScreen) ?? "sealed"
        }
    }
}
