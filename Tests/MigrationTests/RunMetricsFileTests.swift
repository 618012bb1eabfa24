import AppleSimulator
import Foundation
import Ledger
import Migration
import TestSupport
import Testing

/// `--metrics-file`: a run's progress for node_exporter's textfile collector.
@Suite("a run's metrics file")
struct RunMetricsFileTests {
    let dir = TemporaryDirectory()

    @Test(
        "after a run the file holds its outcome: users by outcome equal the summary's, finished 1, the exit status; promtool check metrics finds no problem"
    )
    func finalFile() async throws {
        let fixture = try await AppleFixture.start(rules: AppleFixture.revoking(0.2), in: dir)
        let a = try await fixture.ledger(.sender)
        var job = fixture.job(
            .generate(target: AppleFixture.recipientTeam), ledger: a, input: try fixture.usersFile(300), output: fixture.path + "/out.csv")
        let file = dir.sub("handover.prom")
        job.options.metricsFile = file
        let summary = try await job.execute(logger: fixture.logger)
        let text = try String(contentsOfFile: file, encoding: .utf8)
        #expect(text.contains("handover_run_users{command=\"generate\",outcome=\"succeeded\"} \(summary.succeeded)\n"), "\(text)")
        #expect(text.contains("handover_run_users{command=\"generate\",outcome=\"failed\"} \(summary.failed)\n") && summary.failed > 0, "\(text)")
        #expect(text.contains("handover_run_users{command=\"generate\",outcome=\"left\"} 0\n"), "\(text)")
        #expect(
            text.contains("handover_run_finished{command=\"generate\"} 1\n")
                && text.contains("handover_run_exit_status{command=\"generate\"} \(summary.exitStatus.rawValue)\n"), "\(text)")
        #expect(!FileManager.default.fileExists(atPath: file + ".tmp-\(getpid())"), "the file beside was renamed over the last")
        let promtool = ["/usr/bin/promtool", "/usr/local/bin/promtool"].first { FileManager.default.isExecutableFile(atPath: $0) }
        if let promtool {
            let checked = try runCommand("/bin/sh", ["-c", "\(promtool) check metrics < \(file)"])
            #expect(checked.status == 0 && checked.out.isEmpty && checked.err.isEmpty, "\(checked.out)\(checked.err)")
        } else {
            Issue.record("promtool is not installed: run tools/setup --prometheus (Debian's prometheus package)")
        }
        await fixture.simulator.stop()
    }
}
