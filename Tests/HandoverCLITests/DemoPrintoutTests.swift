import Basics
import Foundation
import Ledger
import TestSupport
import Testing

@testable import Ledger

/// What `handover demo` prints, section by section, checked against the ledgers it wrote:
/// the first thing a new user reads must be true.
@Suite("the demo's printout")
struct DemoPrintoutTests {
    let dir = TemporaryDirectory()
    static let users = DemoLedger.users

    /// The rows of a `--format json` answer of `handover`.
    private func rows(_ args: String...) throws -> [JSONValue] {
        let r = try runProduct("handover", args)
        #expect(r.status == 0, "\(args): \(r.err)")
        return try #require(try JSONValue.parse(Array(r.out.utf8)).arrayValue, "\(args) answers a JSON array")
    }

    @Test(
        "the demo's last lines: the 'Explore further' lines, pasted as printed into a fresh shell elsewhere, each exit 0; the binary is named when not on PATH"
    )
    func exploreFurtherRunsAsPrinted() throws {
        let directory = dir.sub("explore")
        // As tools/demo runs it: by its path, with no `handover` on PATH.
        let r = try runCommand(productPath("handover"), ["demo", "--users", "40", "--directory", directory], environment: ["PATH": "/usr/bin:/bin"])
        try #require(r.status == 0, "\(r.err)")
        let lines = r.out.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let start = try #require(lines.firstIndex { $0.hasPrefix("Explore further") }, "\(r.out)")
        var commands: [String] = []
        for line in lines[(start + 1)...] {
            guard line.hasPrefix("  ") else { break }
            let text = line.trimmingCharacters(in: .whitespaces)
            if let last = commands.last, last.hasSuffix("\\") {
                commands[commands.count - 1] = String(last.dropLast()) + " " + text
            } else {
                commands.append(text)
            }
        }
        let binary = URL(fileURLWithPath: productPath("handover")).standardizedFileURL.path
        let binaryDirectory = String(binary[..<binary.lastIndex(of: "/")!])
        #expect(commands.first == "export PATH=\(binaryDirectory):\"$PATH\"   # handover is not on your PATH", "\(commands)")
        #expect(commands.dropFirst().first == "cd \(directory)", "\(commands)")
        #expect(commands.count >= 18 && commands.dropFirst(2).allSatisfy { $0.hasPrefix("handover ") }, "\(commands)")
        // A fresh shell with nothing of this one's (another directory, no variables but PATH and HOME), the lines in order.
        // Each line as pasted, its output set aside, then its status on the shell's own output.
        let script = "exec 3>&1 >/dev/null 2>&1\ncd /\n" + commands.map { $0 + "\necho \"exit $?\" >&3" }.joined(separator: "\n")
        let ran = try runCommand("/usr/bin/env", ["-i", "PATH=/usr/bin:/bin", "HOME=/tmp", "/bin/bash", "-c", script])
        let statuses = ran.out.split(separator: "\n").map(String.init)
        #expect(statuses.count == commands.count, "\(ran.out)\(ran.err)")
        for (command, status) in zip(commands, statuses) { #expect(status == "exit 0", "\(command): \(status)") }
        #expect(r.out.contains("handover is \(binary), not on your PATH; to type `handover` in any shell, as the guides do,\n"), "\(r.out)")
        #expect(r.out.contains("install it: sudo install -m 755 \(binary) /usr/local/bin/"), "\(r.out)")
    }

    @Test("each section agrees with the ledgers: runs, verify, window, who migrated and by which path, pending, failures, unmatched")
    func sectionsAgreeWithTheLedgers() throws {
        let printout = PrintedText(try DemoLedger.printout())
        let sender = try DemoLedger.copy(.sender, into: dir)
        let recipient = try DemoLedger.copy(.recipient, into: dir)

        // The runs: each summary's figures are those of its "run finished" event, in order (a
        // refused package starts no run, and prints no summary).
        let summaries = (printout.blocks(startingWith: "$ handover generate") + printout.blocks(startingWith: "$ handover exchange"))
            .filter { $0.contains { $0.contains(" in the input;") } }
        let allFinished =
            try rows("query", "events", "--type", "run-finished", "--ledger", sender, "--format", "json")
            + rows("query", "events", "--type", "run-finished", "--ledger", recipient, "--format", "json")
        let finished = allFinished.filter { $0["body"]?["command"]?.stringValue != "apply" }
        try #require(
            summaries.count == 6 && finished.count == 6, "6 run summaries (\(summaries.count)) and 6 run-finished events (\(finished.count))")
        for (summary, event) in zip(summaries, finished) {
            let body = try #require(event["body"])
            let text = summary.joined(separator: "\n")
            let head = try #require(
                summary.dropFirst().first.flatMap {
                    try #/: (\d+) users? in the input; (\d+) (?:migrated|transfer identifiers? generated) in this run/#.firstMatch(in: $0)
                })
            #expect(Int64(head.output.2) == body["counts"]?["succeeded"]?.intValue, "\(text)")
            let failed = summary.lazy.compactMap { try? #/^\s+failed: (\d+) /#.firstMatch(in: $0) }.first.map { Int64($0.output.1) } ?? 0
            #expect(failed == body["counts"]?["failed"]?.intValue ?? 0, "\(text)")
            let exit = try #require(summary.lazy.compactMap { try? #/exit status (\d+)/#.firstMatch(in: $0) }.first)
            #expect(Int64(exit.output.1) == body["exit_status"]?.intValue, "\(text)")
        }

        // apply: the commit's figures are those of its "run finished" (command apply), and the
        // collision the plan shows is the one the commit reports.
        let applied = try #require(allFinished.first { $0["body"]?["command"]?.stringValue == "apply" }?["body"], "the demo applies to app.sqlite")
        let commit = try #require(printout.blocks(startingWith: "$ handover apply").first { $0[0].contains("--commit") })
            .joined(separator: " ").split(whereSeparator: \.isWhitespace).joined(separator: " ")
        // The sub's outcomes are counted by name, the email's as email.OUTCOME.
        func outcomes(_ prefix: String) -> String {
            ApplyOutcome.allCases.compactMap { o in applied["counts"]?[prefix + o.rawValue]?.intValue.map { "\(o.rawValue) \($0)" } }.joined(
                separator: ", ")
        }
        let counted = "apple_sub \(outcomes("")); email \(outcomes("email."))"
        #expect(commit.contains(": " + counted + "."), "\(commit)\nthe ledger: \(counted)")
        #expect(commit.contains("\(applied["counts"]?["email.applied"]?.intValue ?? -1) relay addresses of team B's set"), "\(commit)")
        #expect(applied["counts"]?["collision"]?.intValue == 1 && commit.contains("(the sign-in race): account acct-new-1"), "\(commit)")

        // serve: what was answered is what the recipient's ledger recorded.
        let serve = try #require(printout.blocks(startingWith: "$ handover serve").first).joined(separator: " ")
        func count(_ type: String) throws -> Int { try rows("query", "events", "--type", type, "--ledger", recipient, "--format", "json").count }
        let signIns = try #require(try #/POST /apple/sign-ins: (\d+) identity tokens/#.firstMatch(in: serve), "\(serve)")
        #expect(Int(signIns.output.1) == (try count("sign-in-verified")) + (try count("sign-in-rejected")))
        let answers = try #require(try #/(\d+)× 200 recorded, (\d+)× 400 rejected; (\d+) users erased/#.firstMatch(in: serve), "\(serve)")
        #expect(Int(answers.output.1) == (try count("sign-in-verified")) + (try count("notification-received")))
        #expect(Int(answers.output.2) == (try count("sign-in-rejected")) + (try count("notification-rejected")))
        #expect(Int(answers.output.3)! + 2 == (try count("user-erased")), "account deletions, then two erasures on request")

        // verify: the event counts are the ledgers' heads.
        for (name, path) in [("sender", sender), ("recipient", recipient)] {
            let line = try #require(printout.lines.first { $0.hasPrefix("verify \(name):") })
            let count = try #require(try #/OK, (\d+) events/#.firstMatch(in: line)).output.1
            let events = try rows("query", "events", "--ledger", path, "--format", "json")
            #expect(Int64(count) == events.last?["seq"]?.intValue && Int(count) == events.count, "\(line)")
        }

        // The transfer window, as `handover window` shows it (days left may have ticked since).
        let window = try #require(printout.table(under: "== Transfer window (team B) =="))
        let recorded = try rows("window", "--ledger", recipient, "--format", "json").map(PrintedTable.cells)
        try #require(window.rows.count == 1 && recorded.count == 1, "\(window.rows)")
        let (printedWindow, recordedWindow) = (try #require(window.rows.first), try #require(recorded.first))
        let daysLeft = try #require(printedWindow["days_left"].flatMap { Int($0) })
        #expect(printedWindow.filter { $0.key != "days_left" } == recordedWindow.filter { $0.key != "days_left" })
        #expect([daysLeft, daysLeft - 1].contains(recordedWindow["days_left"].flatMap { Int($0) }))

        // Who migrated: the count by path adds up, and both agree with `query migrated`.
        let migrated = try rows("query", "migrated", "--ledger", recipient, "--format", "json")
        let migratedLine = try #require(printout.block(under: "== Who migrated (team B) ==").first)
        let figures = try #require(
            try #/^(\d+) of (\d+) users migrated \((\d+) by exchange, (\d+) by sign-in\)$/#.wholeMatch(in: migratedLine), "\(migratedLine)")
        let (total, known, byExchange, bySignIn) = (Int(figures.output.1)!, Int(figures.output.2)!, Int(figures.output.3)!, Int(figures.output.4)!)
        #expect(known == Self.users)
        #expect(byExchange + bySignIn == total)
        #expect(total == migrated.count)
        #expect(byExchange == migrated.filter { $0["migrated_via"] == .string("exchange") }.count)
        #expect(bySignIn == migrated.filter { $0["migrated_via"] == .string("sign-in") }.count)
        #expect(bySignIn > 0, "the late rows' users migrate by signing in")
        let times = migrated.compactMap { $0["migrated_at"]?.stringValue }
        let firstLast = try #require(printout.block(under: "== Who migrated (team B) ==").dropFirst().first)
        #expect(firstLast == "first \(times.min() ?? "-"), last \(times.max() ?? "-")")

        // Who is pending: the count is `query pending`'s, the rows shown are some of its rows.
        let pending = try rows("query", "pending", "--ledger", recipient, "--format", "json")
        let pendingTitle = try #require(printout.lines.first { $0.hasPrefix("== Who is pending and why") })
        let shownOf = try #require(try #/\(first (\d+) of (\d+)\)/#.firstMatch(in: pendingTitle), "\(pendingTitle)")
        #expect(Int(shownOf.output.2) == pending.count)
        // --limit: the first rows of the same list, and a line on standard error when there are more.
        for limit in [1, pending.count - 1, pending.count] {
            let r = try runProduct("handover", ["query", "pending", "--ledger", recipient, "--format", "json", "--limit", String(limit)])
            #expect(try JSONValue.parse(Array(r.out.utf8)).arrayValue == Array(pending.prefix(limit)), "--limit \(limit)")
            #expect(
                r.err == (limit < pending.count ? "the first \(limit) row\(limit == 1 ? "" : "s") (--limit \(limit)); there are more\n" : ""),
                "\(r.err)")
        }
        let pendingTable = try #require(printout.table(under: pendingTitle))
        #expect(pendingTable.rows.count == min(Int(shownOf.output.1)!, pending.count))
        // The table leaves out columns empty in every row it shows.
        let pendingRows = pending.map(PrintedTable.cells)
        for row in pendingTable.rows {
            let match = pendingRows.first { answer in
                answer.allSatisfy { column, text in column == "days_left" || (row[column] ?? "") == text }
            }
            #expect(match != nil, "\(row) is a row of query pending")
            #expect(row["days_left"] == String(daysLeft), "days left as in the window")
        }

        // Failures by class and unmatched users: exactly the queries' rows.
        let failures = try #require(printout.table(under: "== Failures by class (users whose last attempt failed, team B) =="))
        #expect(failures.rows == (try rows("query", "failures", "--by-class", "--ledger", recipient, "--format", "json")).map(PrintedTable.cells))
        let unmatched = try #require(printout.table(under: "== Unmatched: Apple told us about users no migration step named =="))
        #expect(unmatched.rows == (try rows("query", "unmatched", "--ledger", recipient, "--format", "json")).map(PrintedTable.cells))
        #expect(unmatched.rows.count == 1)

        // No line is wider than the table it belongs to; no line outside a table over 200 characters.
        for table in printout.tables {
            for line in table.lines { #expect(line.count <= table.width, "a line wider than its table: \(line)") }
        }
        for line in printout.linesOutsideTables { #expect(line.count <= 200, "\(line.count) characters: \(line.prefix(120))…") }
    }
}

extension DemoPrintoutTests {
    @Test("the handoff is signed: B checks both packages and refuses a tampered copy, A confirms both receipts, and an independent checker agrees")
    func signedHandoff() throws {
        let printout = PrintedText(try DemoLedger.printout())
        let sender = try DemoLedger.copy(.sender, into: dir)
        let recipient = try DemoLedger.copy(.recipient, into: dir)
        let refused = try #require(printout.blocks(startingWith: "$ handover exchange --transfers handoff-0001-tampered").first).joined(
            separator: " ")
        #expect(refused.contains("refused (rows-digest), exit 2"), "\(refused)")
        let refusals = try rows("query", "events", "--type", "handoff-refused", "--ledger", recipient, "--format", "json")
        #expect(refusals.count == 1 && refusals.first?["body"]?["reason"] == .string("rows-digest"))
        let received = try rows("query", "events", "--type", "handoff-received", "--ledger", recipient, "--format", "json")
        let issued = try rows("query", "events", "--type", "handoff-issued", "--ledger", sender, "--format", "json")
        let acknowledged = try rows("query", "events", "--type", "handoff-acknowledged", "--ledger", sender, "--format", "json")
        #expect(issued.count == 2 && received.count == 2 && acknowledged.count == 2, "two packages issued, received and acknowledged")
        for (i, r, a) in zip3(issued, received, acknowledged) {
            #expect(i["body"]?["manifest_sha256"] == r["body"]?["manifest_sha256"] && r["body"]?["manifest_sha256"] == a["body"]?["manifest_sha256"])
            #expect(a["body"]?["recipient_seq"] == r["seq"], "A's acknowledgement names B's event")
        }
        let late = try #require(printout.blocks(startingWith: "$ handover exchange --transfers handoff-0002").first).joined(separator: " ")
        let signedIn = try #/done by signing in with their transfer_sub \(no call needed\): (\d+)/#.firstMatch(in: late)
        #expect((signedIn.flatMap { Int($0.output.1) } ?? 0) > 0, "the late package's users signed in first: \(late)")

        // The reconcile summary is `handover reconcile`'s totals (the outcomes that occur).
        let printed = try #require(printout.table(under: "2 of 2 checkpoints of team A's recorded by team B still extended by team A's log"))
        let totals = try rows("reconcile", "--sender", sender, "--recipient", recipient, "--format", "json").map(PrintedTable.cells).filter {
            $0["users"] != "0"
        }
        #expect(printed.rows == totals, "\(printed.rows)")

        // tools/check-handoff.py, written from the documents alone, checks what the demo wrote.
        let checker =
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
            + "/tools/check-handoff.py"
        let files = ["handoff-0001", "handoff-0002", "receipt-0001", "receipt-0002", "sender.pub", "recipient.pub"]
        let copies = Dictionary(uniqueKeysWithValues: try files.map { ($0, try DemoLedger.copy(file: $0, into: dir)) })
        let checks = [
            ["package", copies["handoff-0001"]!, "--sender-key", copies["sender.pub"]!],
            ["package", copies["handoff-0002"]!, "--sender-key", copies["sender.pub"]!, "--previous", copies["handoff-0001"]!],
            [
                "receipt", copies["receipt-0001"]!, "--recipient-key", copies["recipient.pub"]!, "--package", copies["handoff-0001"]!, "--sender-key",
                copies["sender.pub"]!,
            ],
            [
                "receipt", copies["receipt-0002"]!, "--recipient-key", copies["recipient.pub"]!, "--package", copies["handoff-0002"]!, "--sender-key",
                copies["sender.pub"]!,
            ],
        ]
        for args in checks {
            let r = try runCommand("/usr/bin/env", ["python3", checker] + args)
            #expect(r.status == 0, "check-handoff.py \(args.prefix(2)): \(r.out)\(r.err)")
        }
    }
}

extension DemoPrintoutTests {
    @Test("the demo's seed: the same seed (the default) gives the same answers in another run; the printout's answers agree")
    func sameSeedSameAnswers() throws {
        let again = dir.sub("again")
        let r = try handover("demo", "--users", String(Self.users), "--directory", again)
        #expect(r.status == 0, "\(r.err)")
        let first = PrintedText(try DemoLedger.printout())
        let second = PrintedText(r.out)
        #expect(
            first.lines.contains { $0.contains(", seed 1: ") } && second.lines.contains { $0.contains(", seed 1: ") },
            "the stand-in's line names the seed")
        for title in [
            "== Failures by class (users whose last attempt failed, team B) ==", "== Unmatched: Apple told us about users no migration step named ==",
        ] {
            #expect(
                first.table(under: title)?.rows.map { $0.filter { !$0.key.hasSuffix("_at") && !$0.key.hasSuffix("_sequence") } }
                    == second.table(under: title)?.rows.map { $0.filter { !$0.key.hasSuffix("_at") && !$0.key.hasSuffix("_sequence") } }, "\(title)")
        }
        /// Each user's outcome in one of the two runs' ledgers (times, attempts and sequence
        /// numbers aside: those follow the clock).
        func outcomes(_ ledger: String) throws -> [String: [String: String]] {
            let kept = ["status", "migrated_via", "sender_sub", "transfer_sub", "recipient_sub", "last_error_class", "email", "email_forwarding"]
            let happened = ["consent_revoked_at", "account_deleted_at", "erased_at"]
            return Dictionary(
                uniqueKeysWithValues: try rows("query", "state", "--ledger", ledger, "--format", "json").map { user in
                    var outcome = PrintedTable.cells(user).filter { kept.contains($0.key) }
                    for column in happened { outcome[column] = user[column] == nil || user[column] == .null ? "no" : "yes" }
                    return (user["account_id"]?.stringValue ?? user["recipient_sub"]?.stringValue ?? "?", outcome)
                })
        }
        for side in [DemoLedger.Side.sender, .recipient] {
            let theirs = try DemoLedger.copy(side, into: dir)
            let ours = again + "/" + side.rawValue
            let (a, b) = (try outcomes(theirs), try outcomes(ours))
            #expect(a.count == Self.users || side == .recipient, "\(side): \(a.count) users")
            #expect(a == b, "\(side): \(a.filter { b[$0.key] != $0.value }.prefix(3).map { ($0.key, $0.value, b[$0.key] ?? [:]) })")
            #expect(
                try rows("query", "failures", "--by-class", "--ledger", theirs, "--format", "json")
                    == rows("query", "failures", "--by-class", "--ledger", ours, "--format", "json"))
        }
    }
}

/// The elements of three sequences side by side.
private func zip3<A: Sequence, B: Sequence, C: Sequence>(_ a: A, _ b: B, _ c: C) -> [(A.Element, B.Element, C.Element)] {
    zip(zip(a, b), c).map { ($0.0, $0.1, $1) }
}

/// A command's printout: lines, blocks separated by blank lines, and the tables in it.
struct PrintedText {
    let lines: [String]
    let tables: [PrintedTable]

    init(_ text: String) {
        lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var tables: [PrintedTable] = []
        var i = 0
        while i + 1 < lines.count {
            if let table = PrintedTable(lines: lines, headerAt: i) {
                tables.append(table)
                i = table.range.upperBound
            } else {
                i += 1
            }
        }
        self.tables = tables
    }

    /// The lines after `title` up to the next blank line.
    func block(under title: String) -> [String] {
        guard let start = lines.firstIndex(of: title) else { return [] }
        return Array(lines[(start + 1)...].prefix { !$0.isEmpty })
    }

    /// Every block (up to a blank line) whose first line starts with `prefix`.
    func blocks(startingWith prefix: String) -> [[String]] {
        lines.indices.filter { lines[$0].hasPrefix(prefix) }.map { Array(lines[$0...].prefix { !$0.isEmpty }) }
    }

    /// The table printed right under `title`; an empty one where it says "(no rows)".
    func table(under title: String) -> PrintedTable? {
        guard let start = lines.firstIndex(of: title) else { return nil }
        if start + 1 < lines.count, lines[start + 1] == "(no rows)" { return PrintedTable(emptyAt: start + 1) }
        return tables.first { $0.range.lowerBound == start + 1 }
    }

    /// Lines that belong to no table.
    var linesOutsideTables: [String] {
        lines.indices.filter { i in !tables.contains { $0.range.contains(i) } }.map { lines[$0] }
    }
}

/// A table as `handover` prints it on a terminal, read back by column name: the dashes under
/// the header give each column's start; "-" is an empty cell; "(N rows)" ends it.
struct PrintedTable {
    let range: Range<Int>
    let columns: [String]
    /// Each row as column → text ("" for an empty cell).
    let rows: [[String: String]]
    /// The width of the dash line, which is the table's width.
    let width: Int
    let lines: [String]

    init?(lines all: [String], headerAt index: Int) {
        let dashes = Array(all[index + 1])
        guard !dashes.isEmpty, dashes.allSatisfy({ $0 == "-" || $0 == " " }), dashes.first == "-" else { return nil }
        var starts: [Int] = []
        for (i, c) in dashes.enumerated() where c == "-" && (i == 0 || dashes[i - 1] == " ") { starts.append(i) }
        func cells(_ line: String) -> [String] {
            let chars = Array(line)
            return starts.indices.map { k in
                let from = min(starts[k], chars.count)
                let to = k + 1 < starts.count ? min(starts[k + 1], chars.count) : chars.count
                return String(chars[from..<to]).trimmingCharacters(in: .whitespaces)
            }
        }
        columns = cells(all[index])
        var end = index + 2
        var rows: [[String: String]] = []
        while end < all.count, !all[end].hasPrefix("("), !all[end].isEmpty {
            rows.append(Dictionary(uniqueKeysWithValues: zip(columns, cells(all[end]).map { $0 == "-" ? "" : $0 })))
            end += 1
        }
        guard end < all.count, all[end].hasPrefix("("), all[end].hasSuffix(")") else { return nil }
        range = index..<(end + 1)
        self.rows = rows
        width = dashes.count
        lines = Array(all[index...end])
    }

    /// A table that printed "(no rows)" on line `index`.
    init(emptyAt index: Int) {
        range = index..<(index + 1)
        columns = []
        rows = []
        width = "(no rows)".count
        lines = ["(no rows)"]
    }

    /// A JSON answer's row as the terminal shows it: column → text, "" for null.
    static func cells(_ row: JSONValue) -> [String: String] {
        (row.objectValue ?? [:]).mapValues { value in
            switch value {
            case .null: return ""
            case .string(let s): return s
            case .int(let i): return String(i)
            case .bool(let b): return b ? "true" : "false"
            default: return "\(value)"
            }
        }
    }
}
