import AppleSimulator
import AsyncHTTPClient
import Foundation
import Ledger
import LogEngine
import NIOCore
import TestSupport
import Testing

/// A ledger on a small filesystem that fills up while it is written to.
@Suite("a full disk", .serialized)
struct DiskFullTests {
    @Test(
        "serve and an exchange while the disk fills: both say so in plain words, nothing acknowledged is lost, the chain verifies, and the same serve records again once space is freed",
        .enabled(if: SmallDisk.canMount, "needs to mount a tmpfs (root, and a container that allows mount); skipped here"))
    func fillTheDisk() async throws {
        let teams = try TwoTeamsOnTheCommandLine(users: 4_000, latencyMilliseconds: 2)
        defer { teams.standIn.stop() }
        let mountPoint = teams.dir.sub("small")
        try #require(try SmallDisk.mount(size: "24m", at: mountPoint))
        defer { SmallDisk.unmount(mountPoint) }
        let ledger = mountPoint + "/b"
        let created = try runProduct(
            "handover", ["init", "--ledger", ledger, "--team-id", "BBBB222222", "--client-id", "com.example.app", "--role", "recipient"])
        #expect(created.status == 0, "\(created.err)")
        // Leave about 1.5 MB.
        let filler = mountPoint + "/filler"
        let free = try #require(DiskSpace(at: mountPoint)).available
        #expect(FileManager.default.createFile(atPath: filler, contents: Data(count: Int(free) - 1_536 * 1024)))

        let serve = try ServerProcess(["serve", "--ledger", ledger, "--port", "0", "--jwks-url", teams.standIn.baseURL + "/auth/keys"])
        let minter = try TokenMinter(key: try SimulatorDirectory(path: teams.apple).signingKey())
        let now = Int64(Date().timeIntervalSince1970)
        let acknowledged: [String] = try await withHTTPClient { http in
            func post(_ i: Int) async throws -> (status: Int, body: String) {
                var request = HTTPClientRequest(url: serve.baseURL + "/apple/notifications")
                request.method = .POST
                request.body = .bytes(
                    ByteBuffer(
                        string: try await minter.notification(
                            audience: "com.example.app", type: "email-enabled", sub: "B.full.\(i)",
                            email: "full-\(i)@privaterelay.appleid.com", eventTime: now, jti: "full-\(i)")))
                let response = try await http.execute(request, timeout: .seconds(60))
                return (Int(response.status.code), String(buffer: try await response.body.collect(upTo: 1 << 16)))
            }

            let exchange = Process()
            exchange.executableURL = URL(fileURLWithPath: productPath("handover"))
            exchange.arguments =
                ["exchange", "--ledger", ledger, "--transfers", teams.handoff, "--out", teams.dir.sub("out.csv"), "--concurrency", "8"]
                + teams.credentials("BBBB222222", "KEYB222222")
            let exchangeErrors = Pipe()
            exchange.standardOutput = FileHandle.nullDevice
            exchange.standardError = exchangeErrors
            try exchange.run()

            var acknowledged: [String] = []
            var refusedFull: [String] = []
            var i = 0
            while refusedFull.count < 20 || exchange.isRunning, i < 20_000 {
                let answer = try await post(i)
                if answer.status == 200 { acknowledged.append("full-\(i)") } else if answer.status == 503 { refusedFull.append(answer.body) }
                i += 1
            }
            let exchangeMessage = String(decoding: exchangeErrors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            exchange.waitUntilExit()
            #expect(exchange.terminationStatus == 1, "\(exchangeMessage)")
            #expect(
                exchangeMessage.contains("is full (") && exchangeMessage.contains("Everything already acknowledged is safe"), "\(exchangeMessage)")
            #expect(
                !refusedFull.isEmpty && refusedFull.allSatisfy { $0.contains("\"error\":\"disk-full\"") && $0.contains("is full (") },
                "\(refusedFull.prefix(2))")
            let unhealthy = try await http.execute(HTTPClientRequest(url: serve.baseURL + "/healthz"), timeout: .seconds(10))
            let unhealthyBody = String(buffer: try await unhealthy.body.collect(upTo: 1 << 16))
            #expect(unhealthy.status.code == 503 && unhealthyBody.contains("disk-full"), "\(unhealthyBody)")

            // Space freed: the same serve process records again, without a restart.
            try FileManager.default.removeItem(atPath: filler)
            for j in 0..<20 {
                let answer = try await post(100_000 + j)
                #expect(answer.status == 200, "\(answer.body)")
                if answer.status == 200 { acknowledged.append("full-\(100_000 + j)") }
            }
            let healthy = try await http.execute(HTTPClientRequest(url: serve.baseURL + "/healthz"), timeout: .seconds(10))
            let healthyBody = String(buffer: try await healthy.body.collect(upTo: 1 << 16))
            #expect(healthy.status.code == 200, "\(healthyBody)")
            return acknowledged
        }
        let stopped = serve.finish()
        #expect(stopped.status == 0, "\(stopped.err)")

        // The exchange resumes and completes.
        let resumed = try runProduct(
            "handover",
            ["exchange", "--ledger", ledger, "--transfers", teams.handoff, "--out", teams.dir.sub("out.csv"), "--concurrency", "8"]
                + teams.credentials("BBBB222222", "KEYB222222"))
        #expect(resumed.status == 0, "\(resumed.err)")

        let opened = try Ledger.open(at: ledger)
        defer { opened.close() }
        let (jtis, exchanged) = try opened.read { view in
            (
                Set(try view.sequences(of: .notificationReceived).compactMap { try view.event($0)?.identifiers.jti }),
                try view.sequences(of: .transferIDExchanged).compactMap { try view.event($0)?.identifiers.transferSub }
            )
        }
        #expect(Set(acknowledged).isSubset(of: jtis), "acknowledged but not in the ledger: \(Set(acknowledged).subtracting(jtis).prefix(5))")
        #expect(exchanged.count == 4_000 && Set(exchanged).count == 4_000)
        let report = try opened.verify()
        #expect(report.isIntact, "\(report.problem ?? "")")
    }
}
