import Basics
import LogEngine

/// One name's proof in the person index: its history and the path from its leaf to the root
/// a "person index committed" event holds (schemas/evidence-bundle.md, "index.json").
public struct PersonIndexProof: Equatable, Sendable {
    public var name: PersonName
    public var history: PersonHistory
    /// The branches on the name's path, from the root down: each depth and the other side's hash.
    public var steps: [(depth: UInt8, sibling: SHA256Hash)]

    public init(name: PersonName, history: PersonHistory, steps: [(depth: UInt8, sibling: SHA256Hash)]) {
        self.name = name
        self.history = history
        self.steps = steps
    }

    /// The root the proof leads to; nil when its depths do not rise strictly from the root down.
    public var root: SHA256Hash? {
        let label = name.label
        return PrefixTree.root(
            label: label, leaf: history.leafHash(label: label), steps: steps.map { PrefixTree.Step(depth: $0.depth, sibling: $0.sibling) })
    }

    /// The proof's entry of `index.json`.
    public var json: JSONValue {
        .object([
            "kind": .string(name.kind), "value": .string(name.value), "count": .int(Int64(history.count)),
            "chain": .string(Hex.encode(history.chain.bytes)),
            "path": .array(steps.map { .object(["depth": .int(Int64($0.depth)), "sibling": .string(Hex.encode($0.sibling.bytes))]) }),
        ])
    }

    /// Reads an entry of `index.json`; the reason it is not one when it is not.
    public init(json value: JSONValue) throws(Malformed) {
        func hash(_ text: String?) throws(Malformed) -> SHA256Hash {
            guard let text, let hash = Hex.decode(text).flatMap({ SHA256Hash($0) }), Hex.encode(hash.bytes) == text else {
                throw Malformed("a hash is not 64 lowercase hex digits")
            }
            return hash
        }
        guard case .object(let object) = value, object.count == 5, let kind = object["kind"]?.stringValue, PersonName.kinds.contains(kind),
            let nameValue = object["value"]?.stringValue, let count = object["count"]?.intValue, count >= 0,
            let path = object["path"]?.arrayValue, path.count <= 256
        else { throw Malformed("an entry is not {kind, value, count, chain, path} of a kind the index keeps") }
        var steps: [(depth: UInt8, sibling: SHA256Hash)] = []
        for step in path {
            guard case .object(let fields) = step, fields.count == 2, let depth = fields["depth"]?.intValue, (0...255).contains(depth) else {
                throw Malformed("a path step is not {depth, sibling} with a depth of 0 to 255")
            }
            steps.append((UInt8(depth), try hash(fields["sibling"]?.stringValue)))
        }
        self.init(
            name: PersonName(kind: kind, value: nameValue),
            history: PersonHistory(count: UInt64(count), chain: try hash(object["chain"]?.stringValue)),
            steps: steps)
    }

    /// Why an entry of `index.json` could not be read.
    public struct Malformed: Error, CustomStringConvertible, Sendable {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    public static func == (a: PersonIndexProof, b: PersonIndexProof) -> Bool {
        a.name == b.name && a.history == b.history && a.steps.elementsEqual(b.steps) { $0.depth == $1.depth && $0.sibling == $1.sibling }
    }
}
