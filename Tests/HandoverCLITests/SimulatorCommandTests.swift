import Foundation
import Testing
import TestSupport

/// `handover simulator`'s setup commands as a document's reader runs them: each says what it did.
@Suite("the Apple stand-in's commands")
struct SimulatorCommandTests {
    let dir = TemporaryDirectory()

    @Test("register-team takes a key ID of Apple's form and prints it; another form exits 2 and registers nothing")
    func registerTeamKeyID() throws {
        let sim = dir.sub("sim")
        let r = try handover("simulator", "register-team", "--dir", sim, "--team-id", "AAAA111111", "--client-id", "com.example.app", "--key-id", "KEYA111111")
        #expect(r.status == 0 && r.out == "team AAAA111111 key-id KEYA111111 private-key \(sim)/keys/AuthKey_KEYA111111.p8\n", "\(r.out)\(r.err)")
        #expect(FileManager.default.fileExists(atPath: sim + "/keys/AuthKey_KEYA111111.p8"))

        // Without --key-id, a new one of the same form.
        let fresh = try handover("simulator", "register-team", "--dir", sim, "--team-id", "BBBB222222", "--client-id", "com.example.app")
        let words = fresh.out.split(separator: " ")
        #expect(fresh.status == 0 && words.count == 6 && words[2] == "key-id" && words[3].count == 10, "\(fresh.out)\(fresh.err)")

        for bad in ["KEYA11111", "keya111111", "KEYA-11111", "KEYA1111111"] {
            let refused = try handover("simulator", "register-team", "--dir", sim, "--team-id", "CCCC333333", "--client-id", "com.example.app", "--key-id", bad)
            #expect(refused.status == 2 && refused.out.isEmpty && refused.err.hasPrefix("error: --key-id: \"\(bad)\" is not 10 characters of A-Z and 0-9"), "\(bad): \(refused.err)")
        }
        #expect(!FileManager.default.fileExists(atPath: sim + "/teams/CCCC333333.json"))
        let badTeam = try handover("simulator", "register-team", "--dir", sim, "--team-id", "short", "--client-id", "com.example.app")
        #expect(badTeam.status == 2 && badTeam.err.hasPrefix("error: --team-id: \"short\""), "\(badTeam.err)")
    }

    @Test("revoke prints one line per user: revoked consent, or already revoked")
    func revokeSaysWhatItRecorded() throws {
        let sim = dir.sub("sim")
        var r = try handover("simulator", "revoke", "--dir", sim, "000123.abc.0456", "000124.def.0457")
        #expect(r.status == 0 && r.out == "revoked consent: 000123.abc.0456\nrevoked consent: 000124.def.0457\n", "\(r.out)\(r.err)")
        r = try handover("simulator", "revoke", "--dir", sim, "000124.def.0457", "000125.ghi.0458")
        #expect(r.status == 0 && r.out == "already revoked: 000124.def.0457\nrevoked consent: 000125.ghi.0458\n", "\(r.out)\(r.err)")
        let listed = try String(contentsOfFile: sim + "/revoked.txt", encoding: .utf8)
        #expect(listed == "000123.abc.0456\n000124.def.0457\n000125.ghi.0458\n")
        r = try handover("simulator", "revoke", "--dir", sim)
        #expect(r.status == 2, "\(r.out)\(r.err)")
    }

    @Test("transfer says what it recorded and when the endpoints close")
    func transferSaysWhatItRecorded() throws {
        let r = try handover("simulator", "transfer", "--dir", dir.sub("sim"), "--client-id", "com.example.app", "--from", "AAAA111111", "--to", "BBBB222222",
                             "--accepted-at", "2026-11-02")
        #expect(r.status == 0 && r.out == "transfer of com.example.app from AAAA111111 to BBBB222222 accepted at 2026-11-02T00:00:00.000000Z; endpoints close 2027-01-01T00:00:00.000000Z\n",
                "\(r.out)\(r.err)")
    }
}
