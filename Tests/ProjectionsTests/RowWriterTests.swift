import Testing

@testable import Projections

@Suite("answers rendered as CSV and JSON")
struct RowWriterTests {
    private let columns = ["id", "note", "count"]

    private func table(_ notes: [String]) -> QueryTable {
        var table = QueryTable(columns: columns)
        for (i, note) in notes.enumerated() {
            table.append(QueryTable.Row(columns: columns, cells: [.text("u-\(i)"), .text(note), .int(i)]))
        }
        return table
    }

    @Test("CSV quotes a field with a comma, quote, CR, LF or CRLF, doubles its quotes, and keeps other text byte for byte")
    func csvQuoting() {
        let notes = ["plain", "a,b", "say \"hi\"", "two\nlines", "cr\rhere", "crlf\r\nhere", "Zoë 🇫🇷 ½"]
        let csv = table(notes).render(.csv)
        let lines = [
            "id,note,count", "u-0,plain,0", "u-1,\"a,b\",1", "u-2,\"say \"\"hi\"\"\",2", "u-3,\"two\nlines\",3",
            "u-4,\"cr\rhere\",4", "u-5,\"crlf\r\nhere\",5", "u-6,Zoë 🇫🇷 ½,6",
        ]
        #expect(csv == lines.map { $0 + "\r\n" }.joined())
    }

    @Test("JSON rows are canonical objects keyed by column")
    func json() {
        let json = table(["a,\"b\""]).render(.json)
        #expect(json == "[{\"count\":0,\"id\":\"u-0\",\"note\":\"a,\\\"b\\\"\"}]\n")
    }
}
