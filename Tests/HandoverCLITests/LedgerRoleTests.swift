import Basics
import Foundation
import TestSupport
import Testing

@testable import Ledger

/// Every command of `handover`, on a sender's ledger and on a recipient's: a command of one
/// team run on the other team's ledger is refused with one message naming the ledger's team
/// and role and the command, exit 2, before anything is written (every file of the ledger but
/// `lock.mdb` as it was). The commands are read from the command tree (`--experimental-dump-help`),
/// so a new command without a case here fails the test.
@Suite("whose ledger: every command against both roles")
struct LedgerRoleTests {
    /// What a command needs of its ledger.
    enum Role: Equatable {
        /// Team A's ledger only.
        case sender
        /// Team B's ledger only.
        case recipient
        /// Either team's.
        case either
        /// It opens no existing ledger (`init` makes one; the stand-in, the demo, help).
        case noLedger
    }

    /// One way of running a command: the arguments after the command's words, `LEDGER` for the
    /// ledger's path and the files of ``Workspace`` by name.
    struct Case {
        let role: Role
        let arguments: [String]
    }

    /// Files a command reads before it opens the ledger, made once for the whole test.
    final class Workspace {
        let dir = TemporaryDirectory()
        let sender: String
        let recipient: String
        let files: [String: String]

        init() throws {
            let sim = dir.sub("sim")
            var files: [String: String] = [:]
            for (team, key) in [("AAAA111111", "KEYA111111"), ("BBBB222222", "KEYB222222")] {
                let r = try handover("simulator", "register-team", "--dir", sim, "--team-id", team, "--client-id", "com.example.app", "--key-id", key)
                try #require(r.status == 0, "\(r.err)")
                files["P8_" + team] = sim + "/keys/AuthKey_\(key).p8"
            }
            sender = dir.sub("ledger-a")
            recipient = dir.sub("ledger-b")
            for (path, team, role) in [(sender, "AAAA111111", "sender"), (recipient, "BBBB222222", "recipient")] {
                let r = try handover("init", "--ledger", path, "--team-id", team, "--client-id", "com.example.app", "--role", role)
                try #require(r.status == 0, "\(r.err)")
            }
            files["A_PUB"] = sender + "/checkpoint.pub"
            files["B_PUB"] = recipient + "/checkpoint.pub"
            for (name, text) in [
                ("users.csv", "sub,account_id\n001000.aaaa.0001,acct-1\n"),
                ("transfers.csv", "transfer_sub,account_id\nab12cd.0123456789abcdef0123456789abcdef,acct-1\n"), ("token.txt", "not.a.token\n"),
            ] {
                try Data(text.utf8).write(to: URL(fileURLWithPath: dir.sub(name)))
                files[name.uppercased().replacingOccurrences(of: ".", with: "_")] = dir.sub(name)
            }
            let package = dir.sub("package")
            try FileManager.default.createDirectory(atPath: package, withIntermediateDirectories: true)
            for name in ["manifest.txt", "rows.csv", "consistency.txt"] { try Data().write(to: URL(fileURLWithPath: package + "/" + name)) }
            files["PACKAGE"] = package
            let receipt = dir.sub("receipt")
            try FileManager.default.createDirectory(atPath: receipt, withIntermediateDirectories: true)
            files["RECEIPT"] = receipt
            files["OUT"] = dir.sub("out-does-not-exist")
            self.files = files
        }

        /// `arguments` with `LEDGER` and the files' names replaced.
        func resolve(_ arguments: [String], ledger: String) -> [String] {
            arguments.map { $0 == "LEDGER" ? ledger : files[$0] ?? $0 }
        }
    }

    /// Apple's options for team `team`, pointing at a port nothing listens on: a command that got
    /// past its checks would fail to call, never reach Apple.
    static func apple(_ team: String) -> [String] {
        [
            "--team-id", team, "--client-id", "com.example.app", "--key-id", team == "AAAA111111" ? "KEYA111111" : "KEYB222222",
            "--private-key", "P8_" + team, "--apple-base-url", "http://127.0.0.1:9",
        ]
    }

    /// Each command of the tree, with the ways it is run. A command of one team is run on the
    /// other team's ledger; commands of either team on both.
    static let cases: [String: [Case]] = [
        "init": [Case(role: .noLedger, arguments: [])],
        "window": [
            Case(role: .either, arguments: ["--ledger", "LEDGER"]),
            Case(role: .either, arguments: ["--ledger", "LEDGER", "--accepted-at", "2026-11-01"]),
        ],
        "preflight": [Case(role: .either, arguments: ["--ledger", "LEDGER"] + apple("AAAA111111"))],
        "status": [Case(role: .either, arguments: ["--ledger", "LEDGER"])],
        "lookup": [Case(role: .either, arguments: ["acct-1", "--ledger", "LEDGER"])],
        "generate": [
            Case(
                role: .sender,
                arguments: ["--ledger", "LEDGER", "--users", "USERS_CSV", "--target", "BBBB222222", "--out", "OUT"] + apple("BBBB222222"))
        ],
        "exchange": [
            Case(role: .recipient, arguments: ["--ledger", "LEDGER", "--transfers", "TRANSFERS_CSV", "--out", "OUT"] + apple("AAAA111111")),
            Case(
                role: .recipient,
                arguments: ["--ledger", "LEDGER", "--transfers", "PACKAGE", "--sender-key", "A_PUB", "--out", "OUT"] + apple("AAAA111111")),
        ],
        "handoff issue": [Case(role: .sender, arguments: ["--ledger", "LEDGER", "--target", "BBBB222222", "--out", "OUT"])],
        "handoff confirm": [Case(role: .sender, arguments: ["RECEIPT", "--ledger", "LEDGER", "--recipient-key", "B_PUB"])],
        "handoff receive": [Case(role: .recipient, arguments: ["PACKAGE", "--ledger", "LEDGER", "--sender-key", "A_PUB"])],
        "client-secret": [Case(role: .noLedger, arguments: [])],
        "ingest": [
            Case(role: .recipient, arguments: ["sign-in", "TOKEN_TXT", "--ledger", "LEDGER", "--jwks-file", "A_PUB"]),
            Case(role: .either, arguments: ["notification", "TOKEN_TXT", "--ledger", "LEDGER", "--jwks-file", "A_PUB"]),
        ],
        // Its routes are checked one by one against both roles (ServeRoleTests); the command
        // itself serves either team.
        "serve": [Case(role: .noLedger, arguments: [])],
        "query migrated": [Case(role: .either, arguments: ["--ledger", "LEDGER"])],
        "query pending": [Case(role: .either, arguments: ["--ledger", "LEDGER"])],
        "query user": [Case(role: .either, arguments: ["acct-1", "--ledger", "LEDGER"])],
        "query state": [Case(role: .either, arguments: ["--ledger", "LEDGER"])],
        "query failures": [Case(role: .either, arguments: ["--ledger", "LEDGER"])],
        "query unmatched": [Case(role: .either, arguments: ["--ledger", "LEDGER"])],
        "query events": [Case(role: .either, arguments: ["--ledger", "LEDGER"])],
        // Two ledgers, each checked for its role (MessageWordingTests, ReconcileTests).
        "reconcile": [Case(role: .noLedger, arguments: [])],
        "report": [Case(role: .either, arguments: ["--ledger", "LEDGER"])],
        "export": [Case(role: .either, arguments: ["--ledger", "LEDGER", "--format", "jsonl", "--out", "-"])],
        "apply": [
            Case(
                role: .recipient,
                arguments: ["--ledger", "LEDGER", "--to", "OUT", "--table", "accounts", "--key", "account_id=id", "--set", "recipient_sub=apple_sub"]),
            Case(
                role: .recipient,
                arguments: [
                    "--ledger", "LEDGER", "--to", "OUT", "--table", "accounts", "--key", "account_id=id", "--set", "recipient_sub=apple_sub",
                    "--commit",
                ]),
        ],
        "verify": [Case(role: .either, arguments: ["--ledger", "LEDGER"])],
        "upgrade": [Case(role: .either, arguments: ["--ledger", "LEDGER"])],
        "backup": [Case(role: .either, arguments: ["--ledger", "LEDGER", "--out", "OUT"])],
        "compact": [Case(role: .either, arguments: ["--ledger", "LEDGER"])],
        "checkpoint": [Case(role: .either, arguments: ["--ledger", "LEDGER"])],
        "prove": [Case(role: .either, arguments: ["1", "--ledger", "LEDGER"])],
        "tiles": [Case(role: .either, arguments: ["--ledger", "LEDGER", "--out", "OUT"])],
        "witness submit": [Case(role: .either, arguments: ["--ledger", "LEDGER"])],
        "witness add": [
            Case(
                role: .either,
                arguments: ["http://127.0.0.1:9/", "--key", "w+00000000+BAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "--ledger", "LEDGER"])
        ],
        "witness remove": [Case(role: .either, arguments: ["w", "--ledger", "LEDGER"])],
        "witness list": [Case(role: .either, arguments: ["--ledger", "LEDGER"])],
        "witness key": [Case(role: .either, arguments: ["--ledger", "LEDGER"])],
        "evidence write": [Case(role: .either, arguments: ["acct-1", "--ledger", "LEDGER", "--out", "OUT"])],
        "evidence verify": [Case(role: .noLedger, arguments: [])],
        "erase": [Case(role: .either, arguments: ["acct-1", "--ledger", "LEDGER"])],
        "projections rebuild": [Case(role: .either, arguments: ["--ledger", "LEDGER"])],
        "simulator serve": [Case(role: .noLedger, arguments: [])],
        "simulator register-team": [Case(role: .noLedger, arguments: [])],
        "simulator transfer": [Case(role: .noLedger, arguments: [])],
        "simulator revoke": [Case(role: .noLedger, arguments: [])],
        "simulator email": [Case(role: .noLedger, arguments: [])],
        "simulator mint-identity-token": [Case(role: .noLedger, arguments: [])],
        "simulator mint-notification": [Case(role: .noLedger, arguments: [])],
        "demo": [Case(role: .noLedger, arguments: [])],
        "help": [Case(role: .noLedger, arguments: [])],
    ]

    /// Every leaf command of the tree, as words after `handover`.
    static func commandTree() throws -> Set<String> {
        let dump = try handover("--experimental-dump-help")
        let tree = try JSONValue.parse(Array(dump.out.utf8))
        var leaves: Set<String> = []
        func walk(_ command: JSONValue, _ path: [String]) {
            let subs = command["subcommands"]?.arrayValue ?? []
            if subs.isEmpty { leaves.insert(path.joined(separator: " ")) }
            for sub in subs { walk(sub, path + [sub["commandName"]?.stringValue ?? "?"]) }
        }
        walk(try #require(tree["command"]), [])
        return leaves
    }

    /// Every file and directory of `ledger` but `lock.mdb`, which a reader's slot may change.
    static func bytes(_ ledger: String) throws -> [String: FileState] {
        try fileStates(ledger).filter { $0.key != "lock.mdb" }
    }

    @Test("each command of the tree has its cases here, and no case names a command the tree lacks")
    func everyCommandHasItsCases() throws {
        let tree = try Self.commandTree()
        #expect(tree.subtracting(Self.cases.keys).sorted() == [], "commands without a role case: add them to LedgerRoleTests.cases")
        #expect(Set(Self.cases.keys).subtracting(tree).sorted() == [], "cases of commands the tree no longer has")
    }

    @Test("a command of one team on the other team's ledger: refused by name, exit 2, the ledger's bytes unchanged")
    func otherTeamsLedgerRefused() throws {
        let w = try Workspace()
        let identities = [w.sender: ("AAAA111111", "sender"), w.recipient: ("BBBB222222", "recipient")]
        var refusedSomewhere = 0
        for (command, cases) in Self.cases.sorted(by: { $0.key < $1.key }) {
            for c in cases where c.role == .sender || c.role == .recipient {
                let ledger = c.role == .sender ? w.recipient : w.sender
                let (team, role) = try #require(identities[ledger])
                let before = try Self.bytes(ledger)
                let r = try handover(command.split(separator: " ").map(String.init) + w.resolve(c.arguments, ledger: ledger))
                let expected =
                    "error: \(ledger) is team \(team)'s \(role) ledger; `handover \(command)` is run by the \(c.role == .sender ? "sender" : "recipient") team, on its own ledger\n"
                #expect(r.status == 2 && r.err == expected, "\(command) \(c.arguments): exit \(r.status)\n\(r.out)\(r.err)")
                #expect(try Self.bytes(ledger) == before, "\(command) \(c.arguments) changed \(ledger)")
                #expect(!FileManager.default.fileExists(atPath: w.files["OUT"]!), "\(command) wrote its output")
                refusedSomewhere += 1
            }
        }
        #expect(refusedSomewhere == 9)
    }

    @Test("a command of either team, or of the ledger's own team, is not refused for the ledger's role")
    func ownOrEitherNotRefused() throws {
        let w = try Workspace()
        for (command, cases) in Self.cases.sorted(by: { $0.key < $1.key }) {
            for c in cases where c.role == .either {
                for ledger in [w.sender, w.recipient] {
                    let r = try handover(command.split(separator: " ").map(String.init) + w.resolve(c.arguments, ledger: ledger))
                    #expect(!r.err.contains(" ledger; `handover"), "\(command) on \(ledger): \(r.err)")
                    #expect(r.status != 2 || !r.err.contains("is team"), "\(command) on \(ledger): exit \(r.status) \(r.err)")
                    try? FileManager.default.removeItem(atPath: w.files["OUT"]!)
                }
            }
        }
    }
}
