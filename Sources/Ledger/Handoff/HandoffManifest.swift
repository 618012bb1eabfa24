import Basics
import Foundation
import LogEngine

/// The signed statement at the head of a handoff package (schemas/audit-evidence.md,
/// "Handoff package"): which rows, for whom, from which log, signed as a C2SP note with the
/// sender ledger's checkpoint key under its origin.
///
///     handover-handoff/v2
///     package 2
///     sender AAAA111111
///     client com.example.notes
///     target BBBB222222
///     rows 10
///     rows-sha256 <hex>
///     rows-root <hex>                       (v2: the rows' Merkle root, ``RowTree``)
///     previous-tree-size 4100
///     previous-manifest-sha256 <hex>        (from package 2 on)
///     issued 2026-11-24T10:00:00.000000Z
///
///     <the sender's checkpoint note, verbatim>
///
///     — handover/AAAA111111/<ledger ID> <base64 key ID and signature>
///
/// The first line keeps a manifest from ever reading as a checkpoint of the same key, and says
/// which form the package's rows take (``HandoffRowsForm``): Handover issues v2, whose rows carry
/// a salt each and whose manifest signs their Merkle root, and reads v1 as well.
public struct HandoffManifest: Equatable, Sendable {
    /// A package's number: 1 and up, at most 2^31 − 1 (a sender's next is always one more).
    public static let packagesAllowed = 1...Int(Int32.max)

    /// The package's number for this sender and target, from 1.
    public var package: Int
    public var senderTeam: String
    public var clientIDs: [String]
    public var targetTeam: String
    public var rowCount: Int
    /// SHA-256 of `rows.csv`, hex.
    public var rowsSHA256: String
    /// The rows' Merkle root (``RowTree``, kind ``RowTree/Kind/handoffRow``), hex; nil in a v1
    /// manifest, whose rows have no salt.
    public var rowsRoot: String?
    /// The previous package's checkpoint size; 0 for the first package.
    public var previousTreeSize: UInt64
    /// SHA-256 of the previous package's manifest, hex; nil for the first package.
    public var previousManifestSHA256: String?
    public var issuedAt: Timestamp
    /// The sender ledger's checkpoint that covers every listed event.
    public var checkpoint: Checkpoint

    public init(
        package: Int, senderTeam: String, clientIDs: [String], targetTeam: String, rowCount: Int, rowsSHA256: String, rowsRoot: String?,
        previousTreeSize: UInt64, previousManifestSHA256: String?, issuedAt: Timestamp, checkpoint: Checkpoint
    ) {
        self.package = package
        self.senderTeam = senderTeam
        self.clientIDs = clientIDs
        self.targetTeam = targetTeam
        self.rowCount = rowCount
        self.rowsSHA256 = rowsSHA256
        self.rowsRoot = rowsRoot
        self.previousTreeSize = previousTreeSize
        self.previousManifestSHA256 = previousManifestSHA256
        self.issuedAt = issuedAt
        self.checkpoint = checkpoint
    }

    /// The form of the package's rows: v2 when the manifest signs their root.
    public var rowsForm: HandoffRowsForm { rowsRoot == nil ? .v1 : .v2 }

    /// The note's text: the header lines, a blank line, the checkpoint.
    public var text: String {
        var lines = [rowsForm.manifestFormatLine, "package \(package)", "sender \(senderTeam)"]
        lines += clientIDs.map { "client \($0)" }
        lines += ["target \(targetTeam)", "rows \(rowCount)", "rows-sha256 \(rowsSHA256)"]
        if let rowsRoot { lines.append("rows-root \(rowsRoot)") }
        lines.append("previous-tree-size \(previousTreeSize)")
        if let previousManifestSHA256 { lines.append("previous-manifest-sha256 \(previousManifestSHA256)") }
        lines.append("issued \(issuedAt.rfc3339)")
        return lines.joined(separator: "\n") + "\n\n" + checkpoint.text
    }

    /// Reads a manifest's text (a note's text, its signature checked or not); every value from
    /// the package is kept as read.
    public init(text: String) throws {
        func bad(_ why: String) -> LedgerError { LedgerError(.malformedRecord, "not a handoff manifest: \(why)") }
        guard let split = text.range(of: "\n\n") else { throw bad("no blank line between the header and the checkpoint") }
        let lines = text[..<split.lowerBound].split(separator: "\n", omittingEmptySubsequences: false)
        guard let first = lines.first, let form = HandoffRowsForm.allCases.first(where: { Substring($0.manifestFormatLine) == first }) else {
            throw bad(
                "the first line is not \(HandoffRowsForm.allCases.map(\.manifestFormatLine).joined(separator: " or ")) "
                    + "(a later format is read by a later Handover)")
        }
        var values: [String: String] = [:]
        var clients: [String] = []
        let known: Set<String> = [
            "package", "sender", "client", "target", "rows", "rows-sha256", "rows-root", "previous-tree-size", "previous-manifest-sha256", "issued",
        ]
        for line in lines.dropFirst() {
            guard let space = line.firstIndex(of: " ") else {
                throw bad("the line \"\(InertText.forScreen(String(line.prefix(80))))\" is not \"<name> <value>\"")
            }
            let name = String(line[..<space])
            let value = String(line[line.index(after: space)...])
            guard known.contains(name) else { throw bad("unknown line \"\(InertText.forScreen(name))\"") }
            if name == "client" {
                clients.append(value)
                continue
            }
            guard values.updateValue(value, forKey: name) == nil else { throw bad("the line \"\(name)\" appears twice") }
        }
        func value(_ name: String) throws -> String {
            guard let v = values[name], !v.isEmpty else { throw bad("no \"\(name)\" line") }
            return v
        }
        func number(_ name: String) throws -> UInt64 {
            let v = try value(name)
            guard let n = UInt64(v), String(n) == v, n <= UInt64(Int64.max) else { throw bad("\"\(name)\" is not a decimal number below 2^63") }
            return n
        }
        func digest(_ name: String) throws -> String {
            let v = try value(name)
            guard v.utf8.count == 64, v.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
                throw bad("\"\(name)\" is not a SHA-256 in lowercase hex")
            }
            return v
        }
        guard let issued = Timestamp(rfc3339: try value("issued")) else { throw bad("\"issued\" is not an RFC 3339 time") }
        let package = try number("package")
        guard HandoffManifest.packagesAllowed.contains(Int(package)) else { throw bad("\"package\" is not 1 to \(Int32.max)") }
        let rows = try number("rows")
        guard rows <= Int32.max else { throw bad("\"rows\" is too large") }
        guard !clients.isEmpty else { throw bad("no \"client\" line") }
        let previousManifest = values["previous-manifest-sha256"] == nil ? nil : try digest("previous-manifest-sha256")
        let rowsRoot = values["rows-root"] == nil ? nil : try digest("rows-root")
        guard (rowsRoot != nil) == (form == .v2) else {
            throw bad(form == .v2 ? "no \"rows-root\" line" : "a \"rows-root\" line in a \(form.manifestFormatLine) manifest")
        }
        guard (package == 1) == (previousManifest == nil) else {
            throw bad(package == 1 ? "package 1 names a previous manifest" : "package \(package) does not name the previous package's manifest")
        }
        self.init(
            package: Int(package), senderTeam: try value("sender"), clientIDs: clients, targetTeam: try value("target"), rowCount: Int(rows),
            rowsSHA256: try digest("rows-sha256"), rowsRoot: rowsRoot, previousTreeSize: try number("previous-tree-size"),
            previousManifestSHA256: previousManifest,
            issuedAt: issued, checkpoint: try Checkpoint(parsing: String(text[split.upperBound...])))
    }
}
