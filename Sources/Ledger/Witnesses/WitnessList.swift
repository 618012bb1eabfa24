import Basics
import Foundation
import LogEngine

/// The witnesses configured for a ledger, kept beside it in `witnesses`: one line per witness,
/// its URL, a space, its verifier key. `handover witness add` and `remove` change it; the
/// cosignatures themselves are events in the log.
public struct WitnessList: Equatable, Sendable {
    public var witnesses: [Witness]

    public init(_ witnesses: [Witness] = []) { self.witnesses = witnesses }

    /// The file's name in the ledger directory.
    public static let fileName = "witnesses"
    /// The largest list read: a line is a few hundred bytes.
    static let maximumFileBytes = 1 << 20

    public static func path(in directory: String) -> String { (directory as NSString).appendingPathComponent(fileName) }

    /// The list in `directory`, empty when there is no file.
    public static func read(in directory: String) throws -> WitnessList {
        let path = path(in: directory)
        guard let bytes = try FileBytes.readIfPresent(path, limit: maximumFileBytes) else { return WitnessList() }
        let text = String(decoding: bytes, as: UTF8.self)
        var witnesses: [Witness] = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: true).enumerated() {
            let fields = line.split(separator: " ")
            guard fields.count == 2, let key = WitnessKey(verifierKey: String(fields[1])), let witness = Witness(url: String(fields[0]), key: key)
            else {
                throw LedgerError(
                    .malformedRecord,
                    "\(path), line \(number + 1): \"\(InertText.forScreen(String(line.prefix(120))))\" is not a witness's URL and cosigner verifier key"
                )
            }
            witnesses.append(witness)
        }
        return WitnessList(witnesses)
    }

    /// Writes the list to `directory` whole (a new file renamed over the old).
    public func write(in directory: String) throws {
        let text = witnesses.map { "\($0.url) \($0.key.line)\n" }.joined()
        try AtomicFile.write(Array(text.utf8), to: WitnessList.path(in: directory), mode: 0o644)
    }

    /// Adds `witness`, or replaces the witness of the same name (a new URL or key); returns the
    /// one it replaced.
    @discardableResult
    public mutating func add(_ witness: Witness) -> Witness? {
        guard let index = witnesses.firstIndex(where: { $0.key.name == witness.key.name }) else {
            witnesses.append(witness)
            return nil
        }
        defer { witnesses[index] = witness }
        return witnesses[index]
    }

    /// Removes the witness named `name`; returns it.
    public mutating func remove(named name: String) -> Witness? {
        guard let index = witnesses.firstIndex(where: { $0.key.name == name }) else { return nil }
        return witnesses.remove(at: index)
    }
}
