import Foundation
import Testing
@testable import Reporting

@Suite("export schema")
struct ExportSchemaTests {
    @Test("schemas/export-sqlite.sql is exactly the SQL the SQLite export runs")
    func documentedSchemaIsTheOneUsed() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let documented = try String(contentsOf: root.appendingPathComponent("schemas/export-sqlite.sql"), encoding: .utf8)
        #expect(documented == ExportSchema.sql)
    }
}
