import Basics
import Foundation
import Ledger
import Testing

@Suite("Inert text: what strangers send is shown, never obeyed")
struct InertTextTests {
    /// Every character that must never reach a screen raw.
    static let escaped: [Unicode.Scalar] =
        (0x00...0x1F).map { Unicode.Scalar($0)! } + (0x7F...0x9F).map { Unicode.Scalar($0)! }
        + [0x061C, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069].map { Unicode.Scalar($0)! }

    @Test("C0, DEL, C1, bidi controls and the line separators are escaped for a screen; everything else is kept")
    func screen() {
        #expect(InertText.forScreen("K\u{0}ID") == "K\\u0000ID")
        #expect(InertText.forScreen("\u{1B}]0;pwned\u{7}\u{1B}[2J") == "\\u001b]0;pwned\\u0007\\u001b[2J")
        #expect(InertText.forScreen("a\tb\nc\rd") == "a\\tb\\nc\\rd")
        #expect(InertText.forScreen("x\u{7F}\u{85}\u{9B}y") == "x\\u007f\\u0085\\u009by")
        #expect(InertText.forScreen("\u{202E}gnp.exe\u{2066}") == "\\u202egnp.exe\\u2066")
        for scalar in InertTextTests.escaped {
            let shown = InertText.forScreen("a" + String(scalar) + "b")
            #expect(!shown.unicodeScalars.contains(scalar), "U+\(String(scalar.value, radix: 16)) shown raw")
            #expect(InertText.isEscaped(scalar))
        }
        let kept = "plain ASCII, é, 中文, emoji 👩‍👩‍👧, zero-width joiner \u{200D}, <script> & \"quotes\" \\u001b"
        #expect(InertText.forScreen(kept) == kept)
        #expect(InertText.forScreen("") == "")
    }

    @Test("for CSV, tab, CR and LF stay (CSV quotes them); the rest as for a screen")
    func csv() {
        #expect(InertText.forCSV("a\tb\r\nc\u{0}d\u{1B}e\u{202E}") == "a\tb\r\nc\\u0000d\\u001be\\u202e")
    }

    @Test("lines of a message stay lines, each inert")
    func lines() {
        #expect(InertText.forScreenKeepingLines("one\u{1B}[2J\ntwo\t2") == "one\\u001b[2J\ntwo\\t2")
    }

    @Test("JSON keeps its value: DEL, C1, bidi and separators become \\u escapes, C0 was already escaped")
    func json() throws {
        let value: JSONValue = .object(["detail": .string("K\u{0}ID \u{1B}[31m \u{7F} \u{85} \u{202E} \u{2028} 中文")])
        var writer = JSONWriter()
        value.write(to: &writer)
        let inert = InertText.json(writer.bytes)
        #expect(try JSONValue.parse(inert) == value, "the same JSON value")
        #expect(!inert.contains(0x7F) && !inert.contains(0x1B) && !inert.contains(0))
        let text = String(decoding: inert, as: UTF8.self)
        #expect(text.contains("\\u007f") && text.contains("\\u0085") && text.contains("\\u202e") && text.contains("\\u2028") && text.contains("中文"))
        for scalar in InertTextTests.escaped { #expect(!text.unicodeScalars.contains(scalar)) }
        let plain = Array(#"{"a":"b"}"#.utf8)
        #expect(InertText.json(plain) == plain)
    }

    @Test("CSV fields: quoted for comma, quote, CR, LF and CRLF; formulas neutralised on request")
    func csvFields() {
        #expect(CSVField.quoted("plain") == "plain")
        #expect(CSVField.quoted("a,b") == "\"a,b\"")
        #expect(CSVField.quoted("say \"hi\"") == "\"say \"\"hi\"\"\"")
        #expect(CSVField.quoted("a\r\nb") == "\"a\r\nb\"", "a CRLF is one Character, and still quoted")
        #expect(CSVField.quoted("a\rb") == "\"a\rb\"")
        #expect(CSVField.line(["a", "b,c"]) == "a,\"b,c\"\r\n")
        for start in ["=", "+", "-", "@", "\t", "\r"] {
            #expect(CSVField.neutralizingFormula(start + "1+1") == "'" + start + "1+1")
        }
        #expect(CSVField.neutralizingFormula("1-1") == "1-1")
        #expect(CSVField.neutralizingFormula("") == "")
    }
}
