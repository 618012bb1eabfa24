import Foundation
import LogEngine

/// A path given as a ledger directory that holds no ledger: what is there instead, and the
/// ledgers near it, for a refusal that leads to the right directory rather than to a second,
/// empty ledger.
///
/// Near means: the ledger whose data file the path is, a ledger the path is inside, ledgers
/// inside the path, ledgers beside it (the closest names first), and the candidates the
/// caller names (``Ledger/Options/alsoNear``, the command line's `$HANDOVER_LEDGER`). Nothing
/// is opened: a directory is a ledger when it holds a `data.mdb` file, and its team is read
/// from its `checkpoint.pub`.
struct LedgerLocation {
    /// The path as given.
    let path: String
    /// Other paths to suggest when they hold a ledger.
    let alsoNear: [String]

    /// Most ledgers beside the path that a refusal names.
    static let mostSiblings = 3
    /// Most directory entries looked at for ledgers inside or beside the path.
    static let mostEntries = 2_000

    /// The refusal of ``path``: `missingLedger` when nothing is there, `notALedger` otherwise.
    /// `note` says where the path came from (the command line's default), if anywhere.
    func refusal(note: String?) -> LedgerError {
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        let exists = fm.fileExists(atPath: path, isDirectory: &isDirectory)
        let parent = LedgerLocation.parent(of: path)
        var what: String
        var suggestions: [String] = []
        if !exists {
            what = "it does not exist"
        } else if !isDirectory.boolValue {
            what = "it is a file, and a ledger is a directory"
        } else {
            what = "the directory holds no ledger"
        }
        if let ancestor = LedgerLocation.enclosingLedger(of: path) {
            what =
                ancestor == parent && LedgerLocation.lastComponent(of: path) == "data.mdb"
                ? "it is the data file of the ledger \(ancestor), and a ledger is named by its directory"
                : what + "; it is inside the ledger \(ancestor)"
            suggestions.append(ancestor)
        }
        if exists, isDirectory.boolValue { suggestions += LedgerLocation.ledgers(in: path, closestTo: nil) }
        suggestions += alsoNear.filter { LedgerLocation.isLedger($0) }
        suggestions += LedgerLocation.ledgers(in: parent, closestTo: LedgerLocation.lastComponent(of: path))
        var seen = Set<String>()
        suggestions = suggestions.filter {
            LedgerLocation.standardized($0) != LedgerLocation.standardized(path) && seen.insert(LedgerLocation.standardized($0)).inserted
        }
        var message = "no Handover ledger at \(path) (\(what))"
        if let note { message += "; \(note)" }
        switch suggestions.count {
        case 0: message += ". Give the ledger's directory with --ledger; only `handover init` makes a new one"
        case 1: message += ". Did you mean --ledger \(LedgerLocation.describe(suggestions[0]))?"
        default: message += ". Ledgers near it: " + suggestions.map(LedgerLocation.describe).joined(separator: ", ")
        }
        return LedgerError(exists ? .notALedger : .missingLedger, message)
    }

    /// Whether `directory` holds a ledger: its data file, and it is not the key store inside
    /// one (`keys/` holds an LMDB data file too).
    static func isLedger(_ directory: String) -> Bool {
        holdsDataFile(directory) && !(lastComponent(of: directory) == "keys" && holdsDataFile(parent(of: directory)))
    }

    private static func holdsDataFile(_ directory: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: Ledger.dataFile(in: directory), isDirectory: &isDirectory) && !isDirectory.boolValue
    }

    /// The nearest directory above `path` that is a ledger, if any (the current directory last,
    /// for a relative path).
    private static func enclosingLedger(of path: String) -> String? {
        var ancestor = parent(of: path)
        while true {
            if isLedger(ancestor) { return ancestor }
            let next = parent(of: ancestor)
            if next == ancestor || ancestor == "." { return nil }
            ancestor = next
        }
    }

    /// "ledger-b (team BBBB222222)": the path and, when its verifier key names it, the team.
    static func describe(_ directory: String) -> String {
        guard let key = try? VerifierKeyFile.read(in: directory) else { return directory }
        // The key's name is the ledger's origin: handover/<team ID>/<ledger ID>.
        let parts = key.name.split(separator: "/")
        return parts.count == 3 && parts[0] == "handover" ? "\(directory) (team \(parts[1]))" : directory
    }

    /// The ledgers directly inside `directory`, the names closest to `name` first (all of them
    /// when `name` is nil), at most ``mostSiblings``.
    private static func ledgers(in directory: String, closestTo name: String?) -> [String] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: directory.isEmpty ? "." : directory) else { return [] }
        let found = entries.prefix(mostEntries).filter { isLedger(join(directory, $0)) }
        let ordered = found.sorted { a, b in
            let (da, db) = name.map { (distance($0, a), distance($0, b)) } ?? (0, 0)
            return da != db ? da < db : a < b
        }
        return ordered.prefix(mostSiblings).map { join(directory, $0) }
    }

    /// The directory holding `path`: "." for a bare name, "/" for a name at the root.
    static func parent(of path: String) -> String {
        let trimmed = trimmingSlashes(path)
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
    }

    /// The last name of `path` ("" for the root).
    static func lastComponent(of path: String) -> String {
        let trimmed = trimmingSlashes(path)
        guard let slash = trimmed.lastIndex(of: "/") else { return String(trimmed) }
        return String(trimmed[trimmed.index(after: slash)...])
    }

    /// `path` without the slashes it ends with (the root stays "/").
    private static func trimmingSlashes(_ path: String) -> Substring {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        return trimmed
    }

    /// `name` inside `directory`, written as the user would: no "./" before a bare name.
    private static func join(_ directory: String, _ name: String) -> String {
        if directory == "." { return name }
        return directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    private static func standardized(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.path
    }

    /// The edit distance between two names (Levenshtein, over their bytes).
    private static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a.utf8)
        let b = Array(b.utf8)
        var previous = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...max(b.count, 1) where !b.isEmpty {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return a.isEmpty ? b.count : previous[b.count]
    }
}
