import Basics
import LogEngine
import Testing

@testable import Ledger

/// A body is declared once, by its field list, and written with its keys in canonical order
/// whatever the order the list names them in: the order of the hashed bytes is not left to the
/// author of a body.
@Suite("field lists")
struct FieldListTests {
    /// A body as a newcomer might declare it: fields in the initialiser's order, which is not
    /// the keys' order, with an optional field, a nested object, a bounded number and an array.
    struct Scratch: FieldObject, Equatable {
        var zone: String
        var after: Int
        var middle: [String]
        var failure: CallFailure?
        var note: String?
        var size: Int

        static func fields<C: FieldCoder>(_ c: inout C, _ v: Self?) throws -> Self {
            Self(
                zone: try c.field("zone", v?.zone), after: try c.count("after", v?.after), middle: try c.field("middle", v?.middle),
                failure: try c.optional("failure", v?.failure), note: try c.optional("note", v?.note),
                size: try c.field("size", v?.size, in: 1...10))
        }
    }

    static func written(_ value: some FieldObject) -> String {
        var w = JSONWriter()
        value.write(to: &w)
        return String(decoding: w.bytes, as: UTF8.self)
    }

    static func read(_ json: String) throws -> Scratch {
        let bytes = Array(json.utf8)
        return try bytes.withUnsafeBytes { try Scratch(reading: FieldReader(document: $0, context: "scratch")) }
    }

    @Test("keys come out sorted whatever the list's order, nested objects too, and read back to the same value")
    func sortedByConstruction() throws {
        let full = Scratch(
            zone: "z", after: 3, middle: ["b", "a"], failure: CallFailure(kind: .timeout, message: "m\n"), note: "n\u{2028}", size: 4)
        let json = Self.written(full)
        #expect(
            json
                == #"{"after":3,"failure":{"attempts":1,"class":"timeout","message":"m\n"},"middle":["b","a"],"note":"n\#u{2028}","size":4,"zone":"z"}"#
        )
        #expect(try Self.read(json) == full)
        let sparse = Scratch(zone: "z", after: 0, middle: [], failure: nil, note: nil, size: 1)
        #expect(Self.written(sparse) == #"{"after":0,"middle":[],"size":1,"zone":"z"}"#)
        #expect(try Self.read(Self.written(sparse)) == sparse)
    }

    @Test("reading names the field and what it must hold; member order in the stored bytes does not matter")
    func readingRefusals() throws {
        #expect(try Self.read(#"{"zone":"z","size":2,"middle":[],"after":1}"#).size == 2)
        let cases: [(String, String)] = [
            (#"{"after":1,"middle":[],"size":2}"#, "scratch.zone: expected a string"),
            (#"{"after":-1,"middle":[],"size":2,"zone":"z"}"#, "scratch.after: expected an integer of 0 or more"),
            (#"{"after":"1","middle":[],"size":2,"zone":"z"}"#, "scratch.after: expected an integer of 0 or more"),
            (#"{"after":1,"middle":[],"size":11,"zone":"z"}"#, "scratch.size: expected an integer from 1 to 10"),
            (#"{"after":1,"middle":[1],"size":2,"zone":"z"}"#, "scratch.middle: expected an array of strings"),
            (
                #"{"after":1,"failure":{"class":"nope","message":"m","attempts":1},"middle":[],"size":2,"zone":"z"}"#,
                "scratch.failure.class: expected one of the known values"
            ),
        ]
        for (json, message) in cases {
            #expect {
                _ = try Self.read(json)
            } throws: { error in
                (error as? LedgerError)?.message == message
            }
        }
    }
}
