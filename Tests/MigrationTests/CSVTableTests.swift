import Foundation
import Migration
import TestSupport
import Testing

/// ``CSVTable``, the reader of input files, on bytes made in the test: RFC 4180's quoting,
/// both line ends, a BOM, blank lines and empty fields, rows by the header's names, and the
/// problems it reports with their lines.
@Suite("CSV table")
struct CSVTableTests {
    static func table(_ text: String) throws -> CSVTable {
        try CSVTable(bytes: Array(text.utf8), file: "in.csv")
    }

    /// The problem reading `bytes` reports.
    static func problem(_ bytes: [UInt8]) -> InputProblem? {
        do {
            _ = try CSVTable(bytes: bytes, file: "in.csv")
            return nil
        } catch {
            return error as? InputProblem
        }
    }

    static func problem(_ text: String) -> InputProblem? { problem(Array(text.utf8)) }

    @Test("quoted fields keep commas, doubled quotes, and CR, LF and CRLF inside them")
    func quotedFields() throws {
        let t = try Self.table("a,b\n\"x, y\",\"say \"\"hi\"\"\"\n\"cr\rhere\",\"lf\nhere\"\n\"crlf\r\nhere\",\"\"\"\"\n")
        #expect(t.header == ["a", "b"])
        #expect(t.rows.map(\.fields) == [["x, y", "say \"hi\""], ["cr\rhere", "lf\nhere"], ["crlf\r\nhere", "\""]])
    }

    @Test("CRLF and LF line ends read alike, mixed too, with or without a last line end")
    func lineEnds() throws {
        let expected = [["1", "one"], ["2", "two"]]
        for text in [
            "id,name\r\n1,one\r\n2,two\r\n", "id,name\n1,one\n2,two\n", "id,name\r\n1,one\n2,two", "id,name\n1,one\n2,two\r\n",
            "id,name\r\n1,one\r\n2,two",
        ] {
            let t = try Self.table(text)
            #expect(t.header == ["id", "name"] && t.rows.map(\.fields) == expected, "\(text.debugDescription)")
            #expect(t.rows.map(\.line) == [2, 3], "\(text.debugDescription)")
        }
    }

    @Test("a UTF-8 byte-order mark is skipped; one later in the file is text")
    func byteOrderMark() throws {
        let t = try CSVTable(bytes: [0xEF, 0xBB, 0xBF] + Array("account_id\nacct-1\n\u{FEFF}acct-2\n".utf8), file: "in.csv")
        #expect(t.header == ["account_id"])
        #expect(t.rows.map { $0["account_id"] } == ["acct-1", "\u{FEFF}acct-2"])
    }

    @Test("empty fields are kept, quoted or not; blank lines are skipped and do not shift the line numbers")
    func emptyFieldsAndBlankLines() throws {
        let t = try Self.table("a,b,c\n\n,,\r\n\"\",x,\n\r\n1,,3\n\n")
        #expect(t.rows.map(\.fields) == [["", "", ""], ["", "x", ""], ["1", "", "3"]])
        #expect(t.rows.map(\.line) == [3, 4, 6])
    }

    @Test("rows are read by the header's names (trimmed); a missing column or a short row gives nil, extra fields are kept")
    func byColumnName() throws {
        let t = try Self.table(" account_id , email\nacct-1,a@example.com\nacct-2\nacct-3,c@example.com,extra\n")
        #expect(t.header == ["account_id", "email"])
        #expect(t.rows.map { $0["account_id"] } == ["acct-1", "acct-2", "acct-3"])
        #expect(t.rows.map { $0["email"] } == ["a@example.com", nil, "c@example.com"])
        #expect(t.rows[2].fields == ["acct-3", "c@example.com", "extra"])
        #expect(t.rows[0]["transfer_sub"] == nil)
        #expect(t.rows[0]["account_id "] == nil, "the header's names are trimmed; fields are not")
        #expect(try Self.table("a\n x \n").rows.first?["a"] == " x ")
    }

    @Test("a row's line is the one it starts on, after quoted fields that span lines")
    func linesAfterMultilineFields() throws {
        let t = try Self.table("a,b\n\"one\ntwo\nthree\",x\r\ny,\"p\r\nq\"\nz,w\n")
        #expect(t.rows.map(\.line) == [2, 5, 7])
        #expect(t.rows.map { $0["a"] } == ["one\ntwo\nthree", "y", "z"])
    }

    @Test("a header alone gives no rows; an empty file, blank lines or a BOM alone have no header (line 1)")
    func headerOnlyAndEmpty() throws {
        #expect(try Self.table("account_id\r\n").rows.isEmpty)
        for bytes in [[], Array("\n\r\n\n".utf8), [0xEF, 0xBB, 0xBF]] as [[UInt8]] {
            let problem = Self.problem(bytes)
            #expect(problem?.line == 1 && problem?.message.contains("is empty") == true, "\(bytes): \(String(describing: problem))")
        }
    }

    @Test(
        "problems name their file and line: an unclosed quote (where its row starts), a quote inside an unquoted field, text after a closing quote, invalid UTF-8"
    )
    func problems() throws {
        let unclosed = Self.problem("a,b\n1,2\n3,\"open\nstill open\n")
        #expect(unclosed?.line == 3 && unclosed?.message.contains("never closes") == true, "\(String(describing: unclosed))")
        let inner = Self.problem("a,b\n1,2\n3,ab\"c\"\n")
        #expect(inner?.line == 3 && inner?.message.contains("quote inside an unquoted field") == true, "\(String(describing: inner))")
        let after = Self.problem("a,b\n\"x\ny\",2\n\"z\"w,3\n")
        #expect(after?.line == 4 && after?.message.contains("text after a closing quote") == true, "\(String(describing: after))")
        let notUTF8 = Self.problem(Array("a,b\n1,2\n".utf8) + [0x33, 0xFF, 0x2C, 0x34, 0x0A])
        #expect(notUTF8?.line == 3 && notUTF8?.message.contains("not valid UTF-8") == true, "\(String(describing: notUTF8))")
        #expect(notUTF8?.file == "in.csv" && notUTF8?.description == "in.csv, line 3: is not valid UTF-8")
    }

    @Test("a file that cannot be read, is no regular file or is over the size limit is a problem with the file as a whole (no line)")
    func unreadable() throws {
        let path = NSTemporaryDirectory() + "handover-test-absent-" + UUID().uuidString + ".csv"
        #expect(throws: InputProblem(file: path, line: nil, "is missing or cannot be read (No such file or directory)")) { try CSVTable(path: path) }
        let directory = TemporaryDirectory()
        #expect(throws: InputProblem(file: directory.path, line: nil, "is not a regular file")) { try CSVTable(path: directory.path) }
        // A sparse file one byte over the limit: nothing of it is read.
        let large = directory.sub("large.csv")
        #expect(FileManager.default.createFile(atPath: large, contents: nil))
        #expect(truncate(large, off_t(CSVTable.maximumFileBytes) + 1) == 0)
        #expect(throws: InputProblem(file: large, line: nil, "is larger than \(CSVTable.maximumFileBytes) bytes")) { try CSVTable(path: large) }
    }
}
